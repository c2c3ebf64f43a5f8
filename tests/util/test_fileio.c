/*
 * test_fileio.c: atomic writes against every kind of path, stale
 * temporary files, write errors, and signals in the middle of a write.
 *
 * Each path kind is one row: fileio_check_writable() and
 * fileio_write_atomic() must agree on it, a refusal must name the path and
 * the reason (the errno as it is), and nothing may be left or replaced.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/fileio.h"

static char dir[256];

static const char *in_dir(const char *name)
{
    static char buf[4][PATH_MAX];
    static int k;
    char *b = buf[k++ % 4];

    snprintf(b, PATH_MAX, "%s/%s", dir, name);
    return b;
}

/* Temporary files in the work directory (names holding ".tmp."). */
static int temps_left(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp."))
            n++, fprintf(stderr, "left behind: %s\n", e->d_name);
    if (d)
        closedir(d);
    return n;
}

static void remove_all(const char *path)
{
    char cmd[PATH_MAX + 32];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", path);
}

static void make_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void make_socket(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int s = socket(AF_UNIX, SOCK_STREAM, 0);

    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0)
        fprintf(stderr, "cannot make socket %s\n", path);
    if (s >= 0)
        close(s);
}

/* A path of n bytes under dir (made of existing-looking components). */
static const char *long_path(size_t n)
{
    static char p[PATH_MAX + 64];
    size_t k = (size_t)snprintf(p, sizeof p, "%s/", dir);

    for (; k < n && k < sizeof p - 1; k++)
        p[k] = (k % 100 == 99 && k + 1 < n) ? '/' : 'a';
    p[k] = '\0';
    return p;
}

static const char *long_name(size_t n)
{
    static char name[NAME_MAX + 8];

    memset(name, 'n', n);
    name[n] = '\0';
    return in_dir(name);
}

typedef struct PathCase {
    const char *name;
    const char *(*setup)(void); /* makes the case, returns the path to write */
    const char *problem;        /* the refusal's reason, NULL: must be written */
} PathCase;

static const char *p_absent(void) { return in_dir("new.out"); }
static const char *p_regular(void) { make_file(in_dir("old.out"), "old\n"); return in_dir("old.out"); }
static const char *p_link(void)
{
    make_file(in_dir("real.out"), "old\n");
    if (symlink("real.out", in_dir("link.out")) != 0)
        perror("symlink");
    return in_dir("link.out");
}
static const char *p_dangling(void)
{
    if (symlink("nothing-here", in_dir("dangling.out")) != 0)
        perror("symlink");
    return in_dir("dangling.out");
}
static const char *p_loop(void)
{
    if (symlink("loop-b", in_dir("loop-a")) != 0 || symlink("loop-a", in_dir("loop-b")) != 0)
        perror("symlink");
    return in_dir("loop-a");
}
static const char *p_dir(void) { mkdir(in_dir("a-dir"), 0755); return in_dir("a-dir"); }
static const char *p_fifo(void) { mkfifo(in_dir("fifo"), 0644); return in_dir("fifo"); }
static const char *p_socket(void) { make_socket(in_dir("sock")); return in_dir("sock"); }
/* A character device of our own, never the system's /dev/null: a build
 * with the bug under test, run as root, would replace it for everyone.
 * Only root can make one; anyone else cannot replace /dev/null either. */
static const char *null_device(void)
{
    static char dev[PATH_MAX];

    if (!dev[0])
        snprintf(dev, sizeof dev, "%s",
                 mknod(in_dir("null"), S_IFCHR | 0666, makedev(1, 3)) == 0 ? in_dir("null")
                                                                          : "/dev/null");
    return dev;
}
static const char *p_devnull(void) { return null_device(); }
static const char *p_devnull_link(void)
{
    if (symlink(null_device(), in_dir("null-link")) != 0)
        perror("symlink");
    return in_dir("null-link");
}
static const char *p_empty(void) { return ""; }
static const char *p_slash(void) { return in_dir("out/"); }
static const char *p_too_long(void) { return long_path(PATH_MAX + 10); }
static const char *p_name_too_long(void) { return long_name(NAME_MAX + 1); }
static const char *p_no_dir(void) { return in_dir("no-such-dir/x.out"); }
static const char *p_file_as_dir(void)
{
    make_file(in_dir("plain"), "x\n");
    return in_dir("plain/x.out");
}
static const char *p_loop_dir(void)
{
    if (symlink("dloop-b", in_dir("dloop-a")) != 0 || symlink("dloop-a", in_dir("dloop-b")) != 0)
        perror("symlink");
    return in_dir("dloop-a/x.out");
}
/* The longest name a directory takes: the temporary name must not be longer. */
static const char *p_longest_name(void) { return long_name(NAME_MAX); }

static const PathCase path_cases[] = {
    {"absent", p_absent, NULL},
    {"regular file", p_regular, NULL},
    {"symbolic link to a file", p_link, NULL},
    {"longest file name", p_longest_name, NULL},
    {"dangling symbolic link", p_dangling, "points to nothing"},
    {"symbolic link loop", p_loop, "Too many levels of symbolic links"},
    {"directory", p_dir, "a directory, not a regular file"},
    {"FIFO", p_fifo, "a FIFO, not a regular file"},
    {"socket", p_socket, "a socket, not a regular file"},
    {"character device", p_devnull, "a character device, not a regular file"},
    {"link to a character device", p_devnull_link, "a character device, not a regular file"},
    {"empty", p_empty, "empty file name"},
    {"trailing slash", p_slash, "ends in /"},
    {"longer than PATH_MAX", p_too_long, "File name too long"},
    {"name longer than NAME_MAX", p_name_too_long, "File name too long"},
    {"missing directory", p_no_dir, "No such file or directory"},
    {"file as directory", p_file_as_dir, "Not a directory"},
    {"directory symbolic link loop", p_loop_dir, "Too many levels of symbolic links"},
};

static void test_path_kinds(void)
{
    struct stat before, after;

    for (size_t i = 0; i < sizeof path_cases / sizeof path_cases[0]; i++) {
        const PathCase *c = &path_cases[i];
        char e1[512] = "", e2[512] = "", path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s", c->setup());
        int had = lstat(path, &before) == 0;
        int rc1 = fileio_check_writable(path, e1, sizeof e1);
        int rc2 = fileio_write_atomic(path, "new\n", 4, e2, sizeof e2);
        fprintf(stderr, "  %-30s %s\n", c->name, rc2 ? e2 : "written");
        CHECK_INT(rc1 != 0, ==, rc2 != 0);
        if (c->problem) {
            CHECK(rc1 != 0 && rc2 != 0);
            CHECK_STR_HAS(e1, c->problem);
            CHECK_STR_HAS(e2, c->problem);
            if (strlen(path) < 200) {
                CHECK_STR_HAS(e2, path[0] ? path : "\"\"");
            }
            /* nothing replaced: the same inode, or still nothing */
            int has = lstat(path, &after) == 0;
            CHECK_INT(has, ==, had);
            if (had && has)
                CHECK(before.st_ino == after.st_ino && before.st_mode == after.st_mode);
        } else {
            char buf[8] = "";
            FILE *f = fopen(path, "r");
            CHECK_INT(rc1, ==, 0);
            CHECK_INT(rc2, ==, 0);
            CHECK(f && fgets(buf, sizeof buf, f) && !strcmp(buf, "new\n"));
            if (f)
                fclose(f);
            if (had && S_ISLNK(before.st_mode))
                CHECK(lstat(path, &after) == 0 && S_ISLNK(after.st_mode)); /* the link stays */
        }
        CHECK_INT(temps_left(), ==, 0);
    }
}

/* Leftovers of killed runs under the old deterministic names and under
 * the new pattern never block a write. */
static void test_stale_temps(void)
{
    char name[PATH_MAX], err[512];

    for (int pid = 0; pid < 4; pid++)
        for (int seq = 0; seq < 4; seq++) {
            snprintf(name, sizeof name, "%s.tmp.%d.%d", in_dir("stale.out"),
                     pid ? pid : (int)getpid(), seq);
            make_file(name, "leftover\n");
        }
    for (int i = 0; i < 50; i++)
        CHECK_INT(fileio_write_atomic(in_dir("stale.out"), "x", 1, err, sizeof err), ==, 0);
    CHECK_INT(access(in_dir("stale.out"), F_OK), ==, 0);
    for (int pid = 0; pid < 4; pid++)
        for (int seq = 0; seq < 4; seq++) {
            snprintf(name, sizeof name, "%s.tmp.%d.%d", in_dir("stale.out"),
                     pid ? pid : (int)getpid(), seq);
            unlink(name);
        }
}

/* A failed write names the temporary file that failed. */
static void test_write_error_names_temp(void)
{
    struct rlimit old, small = {.rlim_cur = 1024};
    static char big[8192];
    char err[512] = "";

    getrlimit(RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &small);
    int rc = fileio_write_atomic(in_dir("big.out"), big, sizeof big, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    CHECK(rc != 0);
    CHECK_STR_HAS(err, "cannot write the temporary file ");
    CHECK_STR_HAS(err, in_dir("big.out.tmp."));
    CHECK_STR_HAS(err, "File too large");
    CHECK_INT(access(in_dir("big.out"), F_OK), ==, -1);
    CHECK_INT(temps_left(), ==, 0);
}

/* ---- signals in the middle of a write ---- */

static void end_now(int sig)
{
    if (fileio_defer_signal(sig))
        return;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void *idle_thread(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

/* The child: writes forever; the signal may land on either thread. */
static void writer_child(const char *path)
{
    static char buf[2 << 20];
    pthread_t t;
    char err[512];

    signal(SIGTERM, end_now);
    signal(SIGHUP, end_now);
    pthread_create(&t, NULL, idle_thread, NULL);
    memset(buf, 'x', sizeof buf);
    for (;;)
        if (fileio_write_atomic(path, buf, sizeof buf, err, sizeof err) != 0)
            _exit(3);
}

static void test_signal_during_write(void)
{
    const char *path = in_dir("sig.out");
    int killed = 0;

    for (int i = 0; i < 40; i++) {
        pid_t pid = fork();
        if (pid == 0)
            writer_child(path);
        struct timespec d = {0, (long)(i % 10) * 2000000L + 300000L};
        nanosleep(&d, NULL);
        kill(pid, i % 2 ? SIGHUP : SIGTERM);
        int st = 0;
        waitpid(pid, &st, 0);
        killed += WIFSIGNALED(st) && (WTERMSIG(st) == SIGTERM || WTERMSIG(st) == SIGHUP);
        struct stat sb;
        if (stat(path, &sb) == 0)
            CHECK_INT(sb.st_size, ==, 2 << 20); /* the old file or the new one, whole */
    }
    CHECK_INT(killed, ==, 40); /* each died of its signal, after its write */
    CHECK_INT(temps_left(), ==, 0);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/cnntop-fileio-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        check_skip("cannot make a temporary directory");
    test_path_kinds();
    test_stale_temps();
    test_write_error_names_temp();
    test_signal_during_write();
    remove_all(dir);
    return check_report();
}

/*
 * fileio.c: atomic writes (temp + fsync + rename) and bounded reads.
 *
 * DESIGN
 * A path is checked before anything is written, and again at write time:
 * it must be non-empty and shorter than PATH_MAX, and name a regular file
 * or nothing (a symbolic link counts as the file it points to, which is
 * what gets replaced).  Devices, FIFOs, sockets and directories are
 * refused: the write renames over its target, which would replace
 * /dev/null rather than write to it.  So is the file behind standard
 * input, output or error (/dev/stdout redirected to a file).
 *
 * The temporary file is TARGET.tmp.XXXXXX in the target's directory, with
 * six random characters and O_EXCL, tried again under a new name when the
 * name is taken (a leftover of a killed run), so a finished run's results
 * never meet a stale file.  When that name would be too long for the file
 * system, it is .cnntop.tmp.XXXXXX in the same directory.
 *
 * Signals: `busy` counts writes that have (or are about to have) a
 * temporary file; a signal handler that is about to end the process calls
 * fileio_defer_signal() (async-signal-safe), which says whether to wait.
 * The handler stores `pending` and `closing` before it reads `busy`; a
 * write adds to `busy` before it reads `closing` and reads `pending` after
 * it takes from `busy` (all sequentially consistent), so either the writer
 * sees the signal or the handler sees the writer.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/err.h"
#include "cnntop/fileio.h"

#define TMP_TRIES 100 /* names tried before giving up on a temporary file */

static atomic_int busy;    /* writes with a temporary file, or about to have one */
static atomic_int closing; /* a handler is ending the process: start no write */
static atomic_int pending; /* the signal to raise again once no write is busy */

int fileio_defer_signal(int sig)
{
    atomic_store(&pending, sig);
    atomic_store(&closing, 1);
    if (atomic_load(&busy) > 0)
        return 1;
    atomic_store(&pending, 0);
    return 0;
}

/* A write ends: its temporary file is gone; a deferred signal goes again. */
static void write_leave(void)
{
    atomic_fetch_sub(&busy, 1);
    int sig = atomic_exchange(&pending, 0);
    if (sig)
        raise(sig);
}

const char *fileio_kind(unsigned mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "not a file";
    }
}

int fileio_check_path(const char *path, char *err, size_t errlen)
{
    size_t n = path ? strlen(path) : 0;

    if (n == 0)
        return cn_fail(err, errlen, -CN_EINVAL, "\"\": empty file name");
    if (path[n - 1] == '/')
        return cn_fail(err, errlen, -CN_EINVAL, "%s: a directory name (ends in /), not a file name",
                       path);
    if (n >= PATH_MAX)
        return cn_fail(err, errlen, -CN_EINVAL, "%.40s...: %s (%zu bytes, at most %d)", path,
                       strerror(ENAMETOOLONG), n, PATH_MAX - 1);
    return 0;
}

/* The directory part of path (shorter than PATH_MAX), in buf[PATH_MAX]. */
static void dir_of(const char *path, char *buf)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        snprintf(buf, PATH_MAX, ".");
    else if (slash == path)
        snprintf(buf, PATH_MAX, "/");
    else
        snprintf(buf, PATH_MAX, "%.*s", (int)(slash - path), path);
}

/* Refuses the file behind the process's standard input, output or error
 * (/dev/stdout when it is redirected to a file): renaming over it would
 * cut the stream from its file, not write to it. */
static int std_stream_check(const char *path, const struct stat *st, char *err, size_t errlen)
{
    static const char *const names[] = {"input", "output", "error"};
    struct stat s;

    for (int fd = 0; fd < 3; fd++)
        if (fstat(fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino)
            return cn_fail(err, errlen, -CN_EIO, "%s: the file of this process's standard %s "
                           "(it would be replaced, not written to)", path, names[fd]);
    return 0;
}

/*
 * What a write to path would replace, in target[PATH_MAX]: path itself
 * when absent or a regular file, the file a symbolic link points to.
 * Refuses anything else, and reports any error but absence as it is.
 */
static int target_of(const char *path, char *target, char *err, size_t errlen)
{
    struct stat st;
    int rc = fileio_check_path(path, err, errlen);

    if (rc != 0)
        return rc;
    snprintf(target, PATH_MAX, "%s", path);
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : cn_fail(err, errlen, -CN_EIO, "%s: %s", path, strerror(errno));
    if (S_ISLNK(st.st_mode)) {
        if (stat(path, &st) != 0)
            return cn_fail(err, errlen, -CN_EIO, "%s: symbolic link: %s", path,
                           errno == ENOENT ? "it points to nothing" : strerror(errno));
        if (S_ISREG(st.st_mode) && !realpath(path, target))
            return cn_fail(err, errlen, -CN_EIO, "%s: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return cn_fail(err, errlen, -CN_EIO, "%s: %s, not a regular file", path,
                       fileio_kind(st.st_mode));
    return std_stream_check(path, &st, err, errlen);
}

static int write_full(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static void fsync_dir(const char *path)
{
    char dir[PATH_MAX];

    dir_of(path, dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        /* Best effort: some file systems refuse fsync on directories. */
        (void)fsync(fd);
        close(fd);
    }
}

/* Six characters for a temporary name, from the kernel's random bytes (or
 * the clock, the process and a counter when it has none to give). */
static void random_suffix(char out[7])
{
    static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static atomic_uint seq;
    unsigned char r[6];

    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long x = (unsigned long long)ts.tv_nsec ^ (unsigned long long)getpid() << 32 ^
                               (unsigned long long)atomic_fetch_add(&seq, 1) * 0x9E3779B97F4A7C15ull;
        for (int i = 0; i < 6; i++, x >>= 8)
            r[i] = (unsigned char)x;
    }
    for (int i = 0; i < 6; i++)
        out[i] = set[r[i] % (sizeof set - 1)];
    out[6] = '\0';
}

/* Creates a new temporary file beside target; its name in tmp[PATH_MAX]. */
static int temp_create(const char *target, char *tmp)
{
    const char *base = strrchr(target, '/');
    char dir[PATH_MAX], suffix[7];
    /* TARGET.tmp.XXXXXX when the name fits, else DIR/.cnntop.tmp.XXXXXX */
    int own = strlen(base ? base + 1 : target) + 11 <= NAME_MAX &&
              strlen(target) + 11 < PATH_MAX;

    dir_of(target, dir);
    for (int i = 0; i < TMP_TRIES; i++) {
        random_suffix(suffix);
        int k = own ? snprintf(tmp, PATH_MAX, "%s.tmp.%s", target, suffix)
                    : snprintf(tmp, PATH_MAX, "%s/.cnntop.tmp.%s", dir, suffix);
        if (k < 0 || k >= PATH_MAX) {
            tmp[0] = '\0';
            errno = ENAMETOOLONG;
            return -1;
        }
        /* mode 0666 so that the umask, not mkstemp's 0600, decides who may
         * read the file */
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

/* Writes buf to a new temporary file and renames it over target; the
 * operation that failed in *op, errno kept. */
static int temp_write(const char *target, char *tmp, const void *buf, size_t len,
                      const char **op)
{
    int fd;

    *op = "create";
    if ((fd = temp_create(target, tmp)) < 0)
        return -1;
    *op = "write";
    if (write_full(fd, buf, len) != 0)
        goto fail;
    *op = "sync";
    if (fsync(fd) != 0)
        goto fail;
    *op = "close";
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    *op = "rename";
    if (rename(tmp, target) != 0)
        goto fail;
    fsync_dir(target);
    return 0;
fail:;
    int saved = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    errno = saved;
    return -1;
}

int fileio_write_atomic(const char *path, const void *buf, size_t len,
                        char *err, size_t errlen)
{
    char target[PATH_MAX], tmp[PATH_MAX] = "";
    const char *op = "create";
    int rc = target_of(path, target, err, errlen);

    if (rc != 0)
        return rc;
    atomic_fetch_add(&busy, 1);
    if (atomic_load(&closing)) {
        write_leave();
        return cn_fail(err, errlen, -CN_EIO, "%s: not written: the process is ending on a signal",
                       path);
    }
    rc = temp_write(target, tmp, buf, len, &op);
    int saved = errno;
    write_leave();
    if (rc == 0)
        return 0;
    if (!strcmp(op, "create") && saved == EEXIST)
        return cn_fail(err, errlen, -CN_EIO, "%s: cannot create a temporary file beside it: "
                       "%d names taken, the last %s", path, TMP_TRIES, tmp);
    if (!tmp[0])
        return cn_fail(err, errlen, -CN_EIO, "%s: cannot create a temporary file beside it: %s",
                       path, strerror(saved));
    return cn_fail(err, errlen, -CN_EIO, "%s: cannot %s the temporary file %s%s: %s", path, op,
                   tmp, strcmp(op, "rename") ? "" : " over it", strerror(saved));
}

int fileio_read_all(const char *path, size_t max, unsigned char **out,
                    size_t *len, char *err, size_t errlen)
{
    struct stat st;
    int rc = fileio_check_path(path, err, errlen), fd;

    *out = NULL;
    *len = 0;
    if (rc != 0)
        return rc;
    /* O_NONBLOCK: a FIFO must be refused below, not waited on forever; it
     * does not change reads from a regular file. */
    if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", path,
                       S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
    }
    if ((size_t)st.st_size > max) {
        close(fd);
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: too large (%lld bytes, at most %zu)",
                       path, (long long)st.st_size, max);
    }
    unsigned char *buf = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (buf && got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    int e = errno;
    close(fd);
    if (!buf || got != (size_t)st.st_size) {
        free(buf);
        return cn_fail(err, errlen, -CN_EIO, "%s: read failed: %s", path,
                       buf ? strerror(e) : "out of memory");
    }
    buf[got] = '\0';
    *out = buf;
    *len = got;
    return 0;
}

int fileio_check_writable(const char *path, char *err, size_t errlen)
{
    char target[PATH_MAX], dir[PATH_MAX];
    struct stat st;
    int rc = target_of(path, target, err, errlen);

    if (rc != 0)
        return rc;
    dir_of(target, dir);
    if (stat(dir, &st) != 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: directory %s: %s", path, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return cn_fail(err, errlen, -CN_EIO, "%s: %s is not a directory", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: directory %s is not writable: %s", path,
                       dir, strerror(errno));
    return 0;
}

int fileio_make_parent_dirs(const char *path, unsigned mode, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    int rc = fileio_check_path(path, err, errlen);

    if (rc != 0)
        return rc;
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, (mode_t)mode) != 0 && errno != EEXIST)
            return cn_fail(err, errlen, -CN_EIO, "%s: mkdir %s: %s", path, dir,
                           strerror(errno));
        *p = '/';
    }
    return 0;
}

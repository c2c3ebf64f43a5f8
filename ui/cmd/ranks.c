/*
 * ranks.c: `cnntop run --ranks N` (ranks.h).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cnntop/dist.h"
#include "cmd/ranks.h"
#include "common/exit.h"
#include "common/signals.h"

static volatile pid_t launcher_pid;
static volatile sig_atomic_t forwarded; /* the first stop signal caught, 0: none */
static volatile sig_atomic_t pending;   /* a stop signal not yet passed on */

/* The handler only notes the signal: relay() passes it on (reading /proc
 * is no work for a handler), woken by the interrupted read. */
static void on_stop(int sig)
{
    if (!forwarded)
        forwarded = sig;
    pending = sig;
}

/* Whether argv[i] is one of the launcher's own options, which the ranks
 * do not get; *skip: the words it takes. */
static int launcher_only(const char *a, int *skip)
{
    static const char *const own[] = {"--ranks", "--mpirun-args"};

    for (size_t k = 0; k < sizeof own / sizeof *own; k++) {
        size_t n = strlen(own[k]);
        if (!strncmp(a, own[k], n) && (a[n] == '\0' || a[n] == '=')) {
            *skip = a[n] == '=' ? 1 : 2;
            return 1;
        }
    }
    return 0;
}

/* The launcher's command line (NULL-ended, into args of room max), extra
 * (--mpirun-args, split on spaces in place) before this program. */
static int build_args(char **args, int max, const char *launcher, const char *self, char *np,
                      int oversub, char *extra, int argc, char **argv)
{
    int n = 0, skip;
    char *save = NULL;

    args[n++] = (char *)launcher;
    args[n++] = "-np";
    args[n++] = np;
    if (oversub)
        args[n++] = "--oversubscribe";
    args[n++] = "--bind-to";
    args[n++] = "none";
    if (getenv(DIST_LIVE_ENV)) { /* the dashboard's live lines: to every rank, on any host */
        args[n++] = "-x";
        args[n++] = DIST_LIVE_ENV;
    }
    for (char *w = strtok_r(extra, " ", &save); w && n < max / 2; w = strtok_r(NULL, " ", &save))
        args[n++] = w;
    args[n++] = (char *)self;
    for (int i = 1; i < argc && n < max - 3; i++) {
        if (launcher_only(argv[i], &skip))
            i += skip - 1;
        else
            args[n++] = argv[i];
    }
    args[n++] = "--dist";
    args[n++] = "mpi";
    args[n] = NULL;
    return n;
}

/* One line for a banner of the launcher that says how a rank ended, or 0
 * when the banner is of another kind (printed as it is). */
static int banner_line(const char *b, const char *launcher)
{
    const char *at;
    int rank, sig, code;
    char name[64];

    if (strstr(b, "Primary job  terminated normally"))
        return 1; /* the next banner says which rank */
    if ((at = strstr(b, "process rank ")) &&
        sscanf(at, "process rank %d with PID %*d on node %*s exited on signal %d (%63[^)])",
               &rank, &sig, name) == 3) {
        fprintf(stderr, "cnntop: rank %d died: signal %d (%s); %s ended the job\n", rank, sig,
                name, launcher);
        return 1;
    }
    if ((at = strstr(b, "MPI_ABORT was invoked on rank ")) &&
        sscanf(at, "MPI_ABORT was invoked on rank %d in communicator %*s with errorcode %d",
               &rank, &code) == 2) {
        fprintf(stderr, "cnntop: rank %d failed and ended the job (exit %d)\n", rank, code);
        return 1;
    }
    if ((at = strstr(b, "Process name: [[")) && sscanf(at, "Process name: [[%*d,%*d],%d]", &rank) == 1 &&
        (at = strstr(b, "Exit code:")) && sscanf(at, "Exit code: %d", &code) == 1) {
        if (!forwarded || code != 128 + forwarded) /* a rank stopped as asked says nothing */
            fprintf(stderr, "cnntop: rank %d exited with status %d; %s ended the job\n", rank,
                    code, launcher);
        return 1;
    }
    return 0;
}

static int is_rule(const char *l)
{
    size_t n = strspn(l, "-");
    return n >= 20 && (l[n] == '\n' || l[n] == '\0');
}

/* The launcher's stderr, a line at a time: its banners about ranks said
 * in one line each (banner_line), its help-aggregation notes dropped. */
typedef struct ErrLines {
    const char *launcher;
    char banner[8192];
    size_t blen;
    int inside;
} ErrLines;

static void err_line(ErrLines *e, const char *line)
{
    if (is_rule(line)) {
        if (e->inside && !banner_line(e->banner, e->launcher))
            fprintf(stderr, "%s%s%s", line, e->banner, line);
        e->inside = !e->inside;
        e->blen = 0;
        e->banner[0] = '\0';
    } else if (e->inside) {
        size_t n = strlen(line);
        if (e->blen + n < sizeof e->banner) {
            memcpy(e->banner + e->blen, line, n + 1);
            e->blen += n;
        }
    } else if (!(line[0] == '[' && (strstr(line, "help message") ||
                                    strstr(line, "orte_base_help_aggregate"))))
        fputs(line, stderr);
}

/* Takes the whole lines of buf[0..*len), and the rest too when eof (buf
 * has room for one byte more). */
static void err_lines(ErrLines *e, char *buf, size_t *len, int eof)
{
    char *start = buf, *end = buf + *len, *nl;

    *end = '\0';
    while ((nl = memchr(start, '\n', (size_t)(end - start))) != NULL) {
        char c = nl[1];
        nl[1] = '\0';
        err_line(e, start);
        nl[1] = c;
        start = nl + 1;
    }
    if (eof && start < end) {
        err_line(e, start);
        start = end;
    }
    *len = (size_t)(end - start);
    memmove(buf, start, *len);
}

/* Passes the launcher's output on until both of its pipes end: stdout as
 * it comes (a reader of ours that went away only stops the copying: the
 * job goes on, as `run` goes on, and mpirun never meets a broken pipe),
 * stderr through err_line(); a stop signal caught meanwhile passed on. */
static void relay(int err_fd, int out_fd, const char *launcher)
{
    static ErrLines e;
    char ebuf[16384 + 1], obuf[65536];
    size_t elen = 0;
    int out_gone = 0;
    struct pollfd p[2] = {{.fd = err_fd, .events = POLLIN}, {.fd = out_fd, .events = POLLIN}};

    sigset_t stops, waiting, before;

    memset(&e, 0, sizeof e);
    e.launcher = launcher;
    /* The stop signals held but inside ppoll: one that comes between the
     * check of pending and the wait still ends the wait. */
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    sigprocmask(SIG_BLOCK, &stops, &before);
    waiting = before;
    sigdelset(&waiting, SIGINT);
    sigdelset(&waiting, SIGTERM);
    sigdelset(&waiting, SIGHUP);
    while (p[0].fd >= 0 || p[1].fd >= 0) {
        if (pending) {
            dist_launch_signal(launcher_pid, pending);
            pending = 0;
        }
        if (ppoll(p, 2, NULL, &waiting) < 0)
            continue; /* EINTR: a signal to pass on */
        if (p[0].revents) {
            ssize_t n = read(p[0].fd, ebuf + elen, sizeof ebuf - 1 - elen);
            if (n > 0)
                elen += (size_t)n;
            if (n > 0 && elen == sizeof ebuf - 1) /* a line longer than the buffer */
                err_lines(&e, ebuf, &elen, 1);
            else if (n > 0)
                err_lines(&e, ebuf, &elen, 0);
            else if (n == 0 || errno != EINTR) {
                err_lines(&e, ebuf, &elen, 1);
                close(p[0].fd);
                p[0].fd = -1;
            }
        }
        if (p[1].revents) {
            ssize_t n = read(p[1].fd, obuf, sizeof obuf);
            for (ssize_t w = 0, k; n > 0 && !out_gone && w < n; w += k > 0 ? k : 0)
                if ((k = write(STDOUT_FILENO, obuf + w, (size_t)(n - w))) < 0 && errno != EINTR)
                    out_gone = 1;
            if (n == 0 || (n < 0 && errno != EINTR)) {
                close(p[1].fd);
                p[1].fd = -1;
            }
        }
    }
    sigprocmask(SIG_SETMASK, &before, NULL);
    if (e.inside)
        fputs(e.banner, stderr);
}

const char *ranks_unavailable(char *launcher, size_t len)
{
    if (!dist_available())
        return "this cnntop was built without MPI";
    if (!dist_launcher_find(launcher, len))
        return "neither mpirun nor mpiexec is on PATH (install openmpi-bin)";
    return NULL;
}

/* Refuses what cannot start: 0, or the exit code after one line. */
static int refuse(const Options *o, int batch, int ranks, char *launcher, size_t len)
{
    const char *why = ranks_unavailable(launcher, len);

    if (why && !dist_available()) {
        fprintf(stderr, "cnntop: --ranks: %s\n", why);
        return EXIT_USAGE;
    }
    if (o->mpirun_args && strlen(o->mpirun_args) >= RANKS_MAX_EXTRA) {
        fprintf(stderr, "cnntop: --mpirun-args: longer than %d characters\n",
                RANKS_MAX_EXTRA - 1);
        return EXIT_USAGE;
    }
    if (o->cfg.dist != CN_DIST_NONE) {
        fprintf(stderr, "cnntop: --ranks starts the job itself: leave out --dist\n");
        return EXIT_USAGE;
    }
    if (batch % ranks != 0) {
        fprintf(stderr, "cnntop: --batch: %d does not split over %d ranks (a multiple of %d is "
                "needed)\n", batch, ranks, ranks);
        return EXIT_USAGE;
    }
    if (why) {
        fprintf(stderr, "cnntop: --ranks: %s\n", why);
        return EXIT_USAGE;
    }
    return 0;
}

int ranks_check(const Options *o, int batch, int ranks)
{
    char launcher[PATH_MAX];

    return refuse(o, batch, ranks, launcher, sizeof launcher);
}

static void say_command(char **args)
{
    fprintf(stderr, "cnntop: starting the job:");
    for (int i = 0; args[i]; i++)
        fprintf(stderr, " %s", args[i]);
    fputc('\n', stderr);
    if (geteuid() == 0)
        fprintf(stderr, "cnntop: as root: OMPI_ALLOW_RUN_AS_ROOT=1 and "
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 set for %s alone (OpenMPI refuses root "
                "without them)\n", args[0]);
}

int ranks_main(const Options *o, int argc, char **argv)
{
    char launcher[PATH_MAX], self[PATH_MAX], np[16], *args[OPT_MAX_POSITIONAL + 512];
    char extra[RANKS_MAX_EXTRA];
    int fd = -1, rc;
    ssize_t n;

    if ((rc = refuse(o, o->cfg.batch, o->ranks, launcher, sizeof launcher)) != 0)
        return rc;
    if ((n = readlink("/proc/self/exe", self, sizeof self - 1)) < 0) {
        fprintf(stderr, "cnntop: --ranks: cannot find this program: %s\n", strerror(errno));
        return EXIT_FAIL;
    }
    self[n] = '\0';
    snprintf(np, sizeof np, "%d", o->ranks);
    if (argc > (int)(sizeof args / sizeof *args) / 2 - 12) {
        fprintf(stderr, "cnntop: --ranks: too many arguments\n");
        return EXIT_USAGE;
    }
    snprintf(extra, sizeof extra, "%s", o->mpirun_args ? o->mpirun_args : "");
    build_args(args, (int)(sizeof args / sizeof *args), launcher, self, np,
               o->ranks > dist_cores_here(), extra, argc, argv);
    say_command(args);
    fflush(NULL);
    struct sigaction sa = {.sa_handler = on_stop}; /* no SA_RESTART: relay() wakes */
    sigemptyset(&sa.sa_mask);
    int out = -1;
    int pid = dist_launch_piped(args, &fd, &out, signals_child_reset);
    if (pid < 0) {
        fprintf(stderr, "cnntop: --ranks: cannot start %s: %s\n", args[0], strerror(-pid));
        return EXIT_FAIL;
    }
    launcher_pid = pid;
    signals_catch(SIGINT, &sa, NULL);
    signals_catch(SIGTERM, &sa, NULL);
    signals_catch(SIGHUP, &sa, NULL);
    relay(fd, out, strrchr(launcher, '/') + 1);
    rc = dist_launch_wait(pid, NULL);
    launcher_pid = 0;
    if (rc == 127)
        fprintf(stderr, "cnntop: --ranks: %s did not run (exit 127)\n", args[0]);
    if (rc < 0 || rc > 128)
        return rc < 0 ? EXIT_FAIL : rc;
    /* Stopped by a signal passed on: the ranks said 128 + it, mpirun 1. */
    return rc != 0 && forwarded ? 128 + forwarded : rc;
}

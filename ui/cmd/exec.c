/*
 * exec.c: `cnntop exec [options] -- CMD [ARGS...]`: runs any command and
 * profiles its whole process tree by role (cnntop/proctree.h), then prints
 * a perf-stat-style summary on stdout (exec_summary.c).
 *
 * The command is forked and held at a gate (a pipe it reads) until its
 * first thread's counters are open with enable_on_exec, so the counts
 * start at its execve().  A second pipe, close-on-exec, carries execvp's
 * errno back: a command that does not exist is a one-line error and exit
 * 127 (126 when it cannot be executed), as shells say it.  While it runs,
 * the tree is polled every EXEC_POLL_MS; when the command has exited it is
 * polled once more before it is reaped (waitid WNOWAIT), so the last
 * figures of its threads are read.
 *
 * The exit status is the command's; a command killed by a signal gives
 * 128+N and the summary says which signal.  SIGTERM and SIGHUP sent to
 * cnntop are passed on to the command; SIGINT is not, because Ctrl-C on a
 * terminal reaches the command through its process group already (passing
 * it on would interrupt the command's own handler twice).  cnntop waits for
 * the command to end either way and still prints the summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/exec.h"
#include "cmd/run.h"
#include "common/exit.h"
#include "common/signals.h"

#define EXEC_POLL_MS 50         /* between samples of the tree */
#define EXEC_PROGRESS_S 5.0     /* between progress lines on stderr */

static volatile sig_atomic_t child_pid;

/* SIGTERM and SIGHUP go on to the command (see the file comment). */
static void on_stop(int sig)
{
    if (sig != SIGINT && child_pid > 0)
        kill((pid_t)child_pid, sig);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* In the forked child: back to the signals a command expects (cnntop
 * ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across
 * execve), wait at the gate, exec; on failure send errno up the pipe. */
static void child_run(char **argv, const int gate[2], const int errpipe[2],
                      const ExecProgress *p, int quiet)
{
    sigset_t none;
    char c;

    /* The parent's ends: the gate opens only when no write end is left. */
    close(gate[1]);
    close(errpipe[0]);
    if (p->on && (dup2(p->wr[0], STDOUT_FILENO) < 0 || dup2(p->wr[1], STDERR_FILENO) < 0))
        _exit(126);
    if (quiet && !p->on) {
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
            _exit(126);
        close(null);
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    while (read(gate[0], &c, 1) < 0 && errno == EINTR)
        ;
    execvp(argv[0], argv);
    int e = errno;
    ssize_t w = write(errpipe[1], &e, sizeof e);
    (void)w;
    _exit(e == ENOENT ? 127 : 126);
}

/* Forks the command, held at its gate: *gate_w releases it (close it),
 * *err_r gives execvp's errno or EOF once the exec succeeded.  0 or -1
 * with err. */
static int child_fork(char **argv, const ExecProgress *p, int quiet, pid_t *pid, int *gate_w, int *err_r,
                      char *err, size_t len)
{
    int gate[2], ep[2];

    if (pipe2(gate, O_CLOEXEC) != 0) {
        snprintf(err, len, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(ep, O_CLOEXEC) != 0) {
        snprintf(err, len, "pipe: %s", strerror(errno));
        close(gate[0]);
        close(gate[1]);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    *pid = fork();
    if (*pid == 0)
        child_run(argv, gate, ep, p, quiet);
    int e = errno;
    close(gate[0]);
    close(ep[1]);
    if (*pid < 0) {
        close(gate[1]);
        close(ep[0]);
        snprintf(err, len, "fork: %s", strerror(e));
        return -1;
    }
    *gate_w = gate[1];
    *err_r = ep[0];
    return 0;
}

/* Releases the command and learns whether its exec worked: 0, or the
 * errno execvp failed with. */
static int child_release(int gate_w, int err_r)
{
    int e = 0;
    ssize_t n;

    close(gate_w);
    do
        n = read(err_r, &e, sizeof e);
    while (n < 0 && errno == EINTR);
    close(err_r);
    return n == (ssize_t)sizeof e ? e : 0;
}

/* The progress line: a plain line every EXEC_PROGRESS_S seconds. */
static void progress(ProcTree *t, double elapsed, double *last)
{
    ProcInfo p[PROC_MAX_PROCS];
    int n = proctree_procs(t, p, PROC_MAX_PROCS), live = 0;
    double cpu = 0.0;

    if (elapsed - *last < EXEC_PROGRESS_S)
        return;
    *last = elapsed;
    for (int k = 0; k < n && k < PROC_MAX_PROCS; k++) {
        live += p[k].live;
        cpu += p[k].cpu;
    }
    fprintf(stderr, "cnntop: exec: %.0f s  %d process%s running  %.1f CPU s\n", elapsed, live,
            live == 1 ? "" : "es", cpu);
}

/* Waits up to ms for the hook's lines or the command's output (with
 * --progress), and takes what came. */
static void wait_input(ExecHook *h, ExecProgress *p, ProcTree *t, int ms)
{
    struct pollfd fds[3];
    nfds_t n = 0;
    int want[3] = {h->fd, p->rd[0], p->rd[1]};

    for (int i = 0; i < 3; i++)
        if (want[i] >= 0)
            fds[n++] = (struct pollfd){.fd = want[i], .events = POLLIN};
    if (n == 0) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL); /* a signal cuts it short: fine */
        return;
    }
    if (poll(fds, n, ms) <= 0)
        return;
    exec_hook_drain(h, t);
    exec_progress_drain(p);
}

/* Polls the tree until the command has exited (not yet reaped), then
 * once more; returns the wall time in seconds. */
static double follow(ProcTree *t, ExecHook *h, ExecProgress *p, pid_t pid, double t0)
{
    double last = 0.0;

    for (;;) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        int r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
        double now = mono_s();
        exec_hook_drain(h, t); /* workers named before the poll judges roles */
        proctree_poll(t);
        if ((r == 0 && si.si_pid == pid) || (r < 0 && errno != EINTR))
            return now - t0;
        progress(t, now - t0, &last);
        wait_input(h, p, t, EXEC_POLL_MS);
    }
}

/* Reaps the command into *res; its exit code as a shell gives it. */
static int child_reap(pid_t pid, ExecResult *res)
{
    int status = 0;
    pid_t r;

    do
        r = wait4(pid, &status, 0, &res->rusage);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return EXIT_FAIL;
    if (WIFSIGNALED(status)) {
        res->signal = WTERMSIG(status);
        return 128 + res->signal;
    }
    res->status = WEXITSTATUS(status);
    return res->status;
}

/* Forks the command with its hook and --progress pipes, follows its tree
 * to its end and reaps it: the ExecResult in res, the command's exit code
 * (or cnntop's with a message) returned; *ran 1 when it was exec'ed and
 * followed (the tree then holds its figures). */
static int exec_follow(const ExecRun *x, ProcTree *t, ExecHook *hook, ExecProgress *prog,
                       ExecResult *res, int *ran)
{
    char err[512];
    pid_t pid;
    int gate_w, err_r;

    *ran = 0;
    if (child_fork(x->argv, prog, x->quiet, &pid, &gate_w, &err_r, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: exec: %s\n", err);
        return EXIT_FAIL;
    }
    exec_hook_forked(hook);
    exec_progress_forked(prog);
    child_pid = pid;
    signals_install(on_stop);
    if (proctree_watch(t, pid, 1, err, sizeof err) != 0)
        fprintf(stderr, "cnntop: exec: %s (no counters)\n", err);
    double t0 = mono_s();
    int e = child_release(gate_w, err_r);
    if (e) {
        int rc = child_reap(pid, res);
        child_pid = 0;
        fprintf(stderr, "cnntop: exec: %s: %s\n", x->argv[0], strerror(e));
        return rc;
    }
    res->wall = follow(t, hook, prog, pid, t0);
    int rc = child_reap(pid, res);
    child_pid = 0;
    exec_hook_drain(hook, t);
    exec_progress_drain(prog);
    *ran = 1;
    return rc;
}

int exec_run(const ExecRun *x, RunRecord *rec, int argc, char **argv, FILE *summary)
{
    ExecResult res;
    ExecHook hook;
    ExecProgress prog;
    ProcTree *t = NULL;
    char err[512];
    int ran;

    memset(&res, 0, sizeof res);
    res.argv = x->argv;
    if (exec_progress_open(&prog, x->progress, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        return EXIT_USAGE;
    }
    res.progress = prog.on ? &prog : NULL;
    if (proctree_new(&t, x->events, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: -e: %s\n", err);
        exec_progress_close(&prog);
        return EXIT_USAGE;
    }
    exec_hook_open(&hook, x->hook, err, sizeof err);
    if (err[0])
        fprintf(stderr, "cnntop: exec: %s\n", err);
    res.hook = hook.on ? &hook : NULL;
    int rc = exec_follow(x, t, &hook, &prog, &res, &ran);
    if (ran && summary)
        exec_summary_print(summary, t, &res);
    if (ran && rec && exec_record_fill(rec, t, &res, argc, argv) != 0) {
        fprintf(stderr, "cnntop: exec: out of memory for the record\n");
        rec->have_exec = 0;
    }
    exec_hook_close(&hook);
    exec_progress_close(&prog);
    proctree_free(t);
    return rc;
}

int exec_main(const Options *o, int argc, char **argv)
{
    ExecRun x = {.argv = o->exec_argv, .events = o->events, .hook = !o->no_hook,
                 .progress = o->progress};
    RunRecord rec;
    char err[512];

    if (o->export_path && export_check(o->export_path, o->force, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: --export: %s\n", err);
        return EXIT_FAIL;
    }
    record_init(&rec);
    int rc = exec_run(&x, o->export_path ? &rec : NULL, argc, argv, stdout);
    if (rec.have_exec) {
        if (record_export(&rec, o->export_path, o->force, err, sizeof err) != 0) {
            fprintf(stderr, "cnntop: --export: %s\n", err);
            rc = rc ? rc : EXIT_FAIL;
        } else
            fprintf(stderr, "cnntop: the record written to %s\n", o->export_path);
    }
    record_done(&rec);
    return run_stdout_done(rc);
}

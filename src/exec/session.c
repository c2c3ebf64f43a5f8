/*
 * session.c: the exec session (cnntop/exec.h): runs any command and
 * profiles its whole process tree by role (cnntop/proctree.h); the front
 * ends (ui/cmd/exec.c, ui/tui/exec_dash.c, ui/cmd/sweep_cmd.c) drive it and
 * say what it found.
 *
 * The command is forked and held at a gate (a pipe it reads) until its
 * first thread's counters are open with enable_on_exec, so the counts
 * start at its execve().  A second pipe, close-on-exec, carries execvpe's
 * errno back: a command that does not exist is a one-line error and exit
 * code 127 (126 when it cannot be executed), as shells say it
 * (exec_why()), values the front end says and returns.  While it runs,
 * the tree is polled every EXEC_POLL_MS; when the command has exited it is
 * polled once more before it is reaped (waitid WNOWAIT), so the last
 * figures of its threads are read.
 *
 * The exit status is the command's; a command killed by a signal gives
 * 128+N.  SIGTERM and SIGHUP sent to cnntop are passed on to the command
 * by exec_session_signal(), which the front end's handlers call; SIGINT is
 * not, because Ctrl-C on a terminal reaches the command through its
 * process group already (passing it on would interrupt the command's own
 * handler twice).  The session follows the command to its end either way.
 * The forked child calls ExecRun.child_reset, the front end's way back to
 * the signals cnntop was started with.
 *
 * With its output piped (--progress, the dashboard), a process the command
 * left behind may still hold the pipes when it exits: they are read on for
 * at most EXEC_DRAIN_S more (as `CMD | cat` would pass the late lines on),
 * with a note (exec_session_note()), so that a daemon that never closes
 * them cannot hang cnntop.
 *
 * The session (exec_session_*: start, step, record, close) is the poll
 * loop; the dashboard passes its keyboard's descriptor so that a key ends
 * the step's wait, and captures the command's output (ExecRun.output)
 * instead of letting it write over the screen.
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

#include "cnntop/exec.h"
#include "exec/pipes.h"
#include "util/envp.h"
#include "util/err.h"

#define EXEC_DRAIN_S 5.0        /* the output read after the command exited */

void exec_session_signal(ExecSession *s, int sig)
{
    if (!s)
        return;
    if (!s->stop_sig)
        s->stop_sig = sig;
    s->stop_count++;
    if (sig != SIGINT && s->kill_pid > 0)
        kill((pid_t)s->kill_pid, sig);
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* In the child: the descriptor fd opened on /dev/null (O_RDONLY for
 * stdin, O_WRONLY for stdout); 0 or -1. */
static int child_null(int fd, int flags)
{
    int null = open("/dev/null", flags);

    if (null < 0 || dup2(null, fd) < 0)
        return -1;
    close(null);
    return 0;
}

/* In the forked child: back to the signals cnntop was given (it ignores
 * SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across execve;
 * one ignored at cnntop's start must stay so), wait at the gate, exec; on
 * failure send errno up the pipe.
 * Captured (the dashboard), its stdin is /dev/null: the keys are the
 * dashboard's. */
static void child_run(const ExecRun *x, const int gate[2], const int errpipe[2],
                      const ExecProgress *p, char *const envp[])
{
    char **argv = x->argv;
    int quiet = x->quiet, captured = x->output != NULL;
    char c;

    /* The parent's ends: the gate opens only when no write end is left. */
    close(gate[1]);
    close(errpipe[0]);
    if (p->rd[0] >= 0 && (dup2(p->wr[0], STDOUT_FILENO) < 0 || dup2(p->wr[1], STDERR_FILENO) < 0))
        _exit(126);
    if (quiet && p->rd[0] < 0 && child_null(STDOUT_FILENO, O_WRONLY) != 0)
        _exit(126);
    if (captured && child_null(STDIN_FILENO, O_RDONLY) != 0)
        _exit(126);
    if (x->child_reset)
        x->child_reset();
    while (read(gate[0], &c, 1) < 0 && errno == EINTR)
        ;
    execvpe(argv[0], argv, envp);
    int e = errno;
    ssize_t w = write(errpipe[1], &e, sizeof e);
    (void)w;
    _exit(e == ENOENT ? 127 : 126);
}

/* Forks the command, held at its gate: *gate_w releases it (close it),
 * *err_r gives execvpe's errno or EOF once the exec succeeded.  0 or -1
 * with err.  A stop signal that comes meanwhile waits, blocked, until
 * s->kill_pid is set: then exec_session_signal() passes it on. */
static int child_fork(ExecSession *s, const ExecRun *x, pid_t *pid, int *gate_w, int *err_r,
                      char *err, size_t len)
{
    int gate[2], ep[2];
    sigset_t stops, old;
    /* The hook's variables, and none of a cnntop this one runs under
     * (the hook names the process that claims it in CNNTOP_HOOK_PID). */
    static const char *const unset[] = {"CNNTOP_HOOK_PID"};
    char **envp = envp_with((const char *const *)s->hook.env, (size_t)s->hook.nenv, unset,
                            s->hook.on ? 1 : 0);

    if (!envp)
        return cn_fail(err, len, -CN_ENOMEM, "out of memory");
    if (pipe2(gate, O_CLOEXEC) != 0) {
        free(envp);
        return cn_fail(err, len, -CN_EIO, "pipe: %s", strerror(errno));
    }
    if (pipe2(ep, O_CLOEXEC) != 0) {
        close(gate[0]);
        close(gate[1]);
        free(envp);
        return cn_fail(err, len, -CN_EIO, "pipe: %s", strerror(errno));
    }
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    sigprocmask(SIG_BLOCK, &stops, &old);
    *pid = fork();
    if (*pid == 0)
        child_run(x, gate, ep, &s->prog, envp); /* its mask: cnntop's at start */
    int e = errno;
    free(envp);
    if (*pid > 0)
        s->kill_pid = *pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(gate[0]);
    close(ep[1]);
    if (*pid < 0) {
        close(gate[1]);
        close(ep[0]);
        return cn_fail(err, len, -CN_EIO, "fork: %s", strerror(e));
    }
    *gate_w = gate[1];
    *err_r = ep[0];
    return 0;
}

/* Releases the command and learns whether its exec worked: 0, or the
 * errno execvpe failed with. */
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

/* Waits up to ms for the hook's lines, the command's output or wake_fd
 * (>= 0: the dashboard's keys), and takes what came. */
static void wait_input(ExecSession *s, int ms, int wake_fd)
{
    struct pollfd fds[4];
    nfds_t n = 0;
    int want[4] = {s->hook.fd, s->prog.rd[0], s->prog.rd[1], wake_fd};

    for (int i = 0; i < 4; i++)
        if (want[i] >= 0)
            fds[n++] = (struct pollfd){.fd = want[i], .events = POLLIN};
    if (n == 0) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL); /* a signal cuts it short: fine */
        return;
    }
    if (poll(fds, n, ms) <= 0)
        return;
    exec_hook_drain(&s->hook, s->tree);
    exec_progress_drain(&s->prog);
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
        return EXEC_RC_NOT_RUN;
    if (WIFSIGNALED(status)) {
        res->signal = WTERMSIG(status);
        return 128 + res->signal;
    }
    res->status = WEXITSTATUS(status);
    return res->status;
}

void exec_session_init(ExecSession *s)
{
    memset(s, 0, sizeof *s);
    s->pid = -1;
    s->hook.fd = s->hook.wfd = -1;
    for (int i = 0; i < 2; i++)
        s->prog.rd[i] = s->prog.wr[i] = -1;
}

/* Opens what a session needs before the fork: the output pipes (with
 * --progress or a capture), the tree, the hook.  0, or a negative CN_E*
 * with err. */
static int session_open(ExecSession *s, const ExecRun *x, char *err, size_t len)
{
    char msg[512];

    s->res.argv = x->argv;
    int rc = exec_progress_open(&s->prog, x->progress, x->output != NULL, err, len);
    if (rc)
        return rc;
    s->prog.sink = x->output;
    s->prog.sink_u = x->output_u;
    s->res.progress = s->prog.on ? &s->prog : NULL;
    if (proctree_new(&s->tree, x->events, msg, sizeof msg) != 0) {
        exec_progress_close(&s->prog);
        return cn_fail(err, len, -CN_EINVAL, "-e: %s", msg);
    }
    exec_hook_open(&s->hook, x->hook, s->note, sizeof s->note);
    (void)exec_hook_layers(&s->hook, x->layers); /* no window without it: figures only */
    s->res.hook = s->hook.on ? &s->hook : NULL;
    return 0;
}

int exec_session_start(ExecSession *s, const ExecRun *x, char *err, size_t len)
{
    pid_t pid = -1;
    int gate_w = -1, err_r = -1;

    int rc = session_open(s, x, err, len);
    if (rc)
        return rc;
    rc = child_fork(s, x, &pid, &gate_w, &err_r, err, len);
    if (rc) {
        exec_session_close(s);
        return rc;
    }
    exec_hook_forked(&s->hook);
    exec_progress_forked(&s->prog);
    s->pid = pid;
    if (proctree_watch(s->tree, pid, 1, s->watch_note, sizeof s->watch_note) == 0)
        s->watch_note[0] = '\0';
    s->t0 = mono_s();
    int e = child_release(gate_w, err_r);
    if (e) {
        s->rc = child_reap(pid, &s->res);
        s->kill_pid = 0;
        exec_why(x->argv[0], e, err, len);
        exec_session_close(s);
        return -CN_EIO;
    }
    s->running = 1;
    return 0;
}

/* A note about the output's drain, kept for exec_session_note(). */
static void drain_note(ExecSession *s, const char *msg)
{
    snprintf(s->drain_note, sizeof s->drain_note, "%s", msg);
    s->drain_said = 0;
}

/* The command has been reaped: 1 when its output is still open (a
 * process it left holds the pipes) and is read on for EXEC_DRAIN_S. */
static int drain_begin(ExecSession *s)
{
    char msg[160];

    if (s->prog.rd[0] < 0 && s->prog.rd[1] < 0)
        return 0;
    s->draining = 1;
    s->drain_end = mono_s() + EXEC_DRAIN_S;
    s->drain_stops = s->stop_count;
    snprintf(msg, sizeof msg,
             "output still open after the command exited; read for at most %.0f more s",
             EXEC_DRAIN_S);
    drain_note(s, msg);
    return 1;
}

/* One step of the drain: 0 once the output has closed, the time is up or
 * a stop signal came. */
static int drain_step(ExecSession *s, int ms, int wake_fd)
{
    double left = s->drain_end - mono_s();

    if (left > 0 && s->stop_count == s->drain_stops)
        wait_input(s, left * 1000.0 < ms ? (int)(left * 1000.0) + 1 : ms, wake_fd);
    if (s->prog.rd[0] < 0 && s->prog.rd[1] < 0) {
        s->draining = 0;
        drain_note(s, ""); /* nothing lost: nothing more to say */
        return 0;
    }
    if (s->drain_end - mono_s() > 0 && s->stop_count == s->drain_stops)
        return 1;
    exec_progress_stop(&s->prog);
    s->draining = 0;
    s->drain_cut = 1;
    drain_note(s, "stopped reading the output: a process the command left still holds it open");
    return 0;
}

const char *exec_session_note(ExecSession *s)
{
    if (s->drain_said || !s->drain_note[0])
        return NULL;
    s->drain_said = 1;
    return s->drain_note;
}

int exec_session_stop_signal(const ExecSession *s)
{
    return s->stop_sig;
}

int exec_session_step(ExecSession *s, int ms, int wake_fd)
{
    siginfo_t si;

    if (s->draining)
        return drain_step(s, ms, wake_fd);
    if (!s->running)
        return 0;
    memset(&si, 0, sizeof si);
    int r = waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG | WNOWAIT);
    double now = mono_s();
    exec_hook_drain(&s->hook, s->tree); /* workers named before the poll judges roles */
    proctree_poll(s->tree);
    s->elapsed = now - s->t0;
    if ((r == 0 && si.si_pid == s->pid) || (r < 0 && errno != EINTR)) {
        /* Exited (not yet reaped) and polled once more: its last figures. */
        s->res.wall = s->elapsed;
        s->rc = child_reap(s->pid, &s->res);
        s->kill_pid = 0;
        exec_hook_drain(&s->hook, s->tree);
        exec_progress_drain(&s->prog);
        s->running = 0;
        s->ran = 1;
        return drain_begin(s);
    }
    wait_input(s, ms, wake_fd);
    return 1;
}

void exec_session_kill(ExecSession *s, int sig)
{
    if (s->running && s->pid > 0)
        kill(s->pid, sig);
}

double exec_session_elapsed(const ExecSession *s)
{
    return s->running ? mono_s() - s->t0 : s->elapsed;
}

int exec_session_record(ExecSession *s, RunRecord *rec, int argc, char **argv)
{
    if (!s->ran)
        return -CN_ESTATE;
    return exec_record_fill(rec, s->tree, &s->res, argc, argv);
}

void exec_session_close(ExecSession *s)
{
    exec_hook_close(&s->hook);
    exec_progress_close(&s->prog);
    proctree_free(s->tree);
    s->tree = NULL;
}

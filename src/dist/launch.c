/*
 * launch.c: starting, signalling and reaping the MPI launcher of a job
 * (dist.h): the process side of `run --ranks` and `sweep --ranks`, whose
 * front ends keep only their messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cnntop/dist.h"
#include "prof/procfs.h"
#include "util/envp.h"

const char *dist_launcher_find(char *out, size_t len)
{
    static const char *const names[] = {"mpirun", "mpiexec"};
    const char *path = getenv("PATH");

    if (!out || len == 0)
        return NULL;
    for (size_t k = 0; path && k < sizeof names / sizeof *names; k++)
        for (const char *p = path; *p;) {
            size_t n = strcspn(p, ":");
            snprintf(out, len, "%.*s%s%s", (int)n, n ? p : ".", "/", names[k]);
            if (access(out, X_OK) == 0)
                return out;
            p += n + (p[n] == ':');
        }
    return NULL;
}

int dist_cores_here(void)
{
    cpu_set_t set;

    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The child's environment: this process's, with env (NULL: none) and,
 * for root, OpenMPI's two run-as-root variables (envp.h). */
static char **child_env(const char *env)
{
    static const char *const root_vars[] = {"OMPI_ALLOW_RUN_AS_ROOT=1",
                                            "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
    const char *set[3];
    size_t n = 0;

    if (env)
        set[n++] = env;
    if (geteuid() == 0) {
        set[n++] = root_vars[0];
        set[n++] = root_vars[1];
    }
    return envp_with(set, n, NULL, 0);
}

/* The child: its output where asked (quiet: stdin and stdout on
 * /dev/null), the front end's signals back, then the program with envp
 * (child_env); exits 127 when args[0] cannot run. */
static void child(char *const args[], int err_fd, int out_fd, int quiet,
                  void (*child_reset)(void), char *const envp[])
{
    if (err_fd >= 0) {
        dup2(err_fd, STDERR_FILENO);
        close(err_fd);
    }
    if (out_fd >= 0) {
        dup2(out_fd, STDOUT_FILENO);
        close(out_fd);
    }
    if (quiet) { /* stdin too: mpirun passes its stdin on to rank 0 */
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDIN_FILENO);
            close(null);
        }
    }
    if (child_reset)
        child_reset();
    execve(args[0], args, envp);
    _exit(127);
}

int dist_launch(char *const args[], int *err_fd, int quiet, void (*child_reset)(void))
{
    return dist_launch_env(args, err_fd, quiet, child_reset, NULL);
}

/* The one fork-and-exec of the launcher: stderr into a pipe when err_fd,
 * stdout into another when out_fd. */
static int launch(char *const args[], int *err_fd, int *out_fd, int quiet,
                  void (*child_reset)(void), const char *env)
{
    int efd[2] = {-1, -1}, ofd[2] = {-1, -1}, e;
    char **envp = child_env(env);

    if (!envp)
        return -ENOMEM;
    if ((err_fd && pipe2(efd, O_CLOEXEC) != 0) || (out_fd && pipe2(ofd, O_CLOEXEC) != 0)) {
        e = errno;
        if (efd[0] >= 0) {
            close(efd[0]);
            close(efd[1]);
        }
        free(envp);
        return -e;
    }
    pid_t pid = fork();
    if (pid == 0)
        child(args, efd[1], ofd[1], quiet, child_reset, envp);
    e = errno;
    free(envp);
    for (int k = 0; k < 2; k++) {
        int *p = k ? ofd : efd;
        if (p[1] >= 0)
            close(p[1]);
        if (pid < 0 && p[0] >= 0)
            close(p[0]);
    }
    if (pid < 0)
        return -e;
    if (err_fd)
        *err_fd = efd[0];
    if (out_fd)
        *out_fd = ofd[0];
    return (int)pid;
}

int dist_launch_env(char *const args[], int *err_fd, int quiet, void (*child_reset)(void),
                    const char *env)
{
    return launch(args, err_fd, NULL, quiet, child_reset, env);
}

int dist_launch_piped(char *const args[], int *err_fd, int *out_fd, void (*child_reset)(void))
{
    return launch(args, err_fd, out_fd, 0, child_reset, NULL);
}

/* pid's parent, -1 when unknown (gone). */
static long parent_of(int pid)
{
    ProcStat st;

    return procfs_stat(pid, &st) == 0 ? st.ppid : -1;
}

typedef struct Signalled {
    int launcher, sig, n;
} Signalled;

static void signal_child(void *ud, int pid)
{
    Signalled *s = ud;

    if (parent_of(pid) == s->launcher && kill((pid_t)pid, s->sig) == 0)
        s->n++;
}

void dist_launch_signal(int launcher, int sig)
{
    Signalled s = {launcher, sig, 0};

    procfs_each_id("/proc", signal_child, &s);
    if (s.n == 0)
        kill(launcher, sig);
}

/* The processes of a tree found so far (dist_launch_kill_tree). */
typedef struct Tree {
    long *pid;
    long n, cap;
    int added;  /* found one this round */
} Tree;

static int in_tree(const Tree *t, long pid)
{
    for (long k = 0; k < t->n; k++)
        if (t->pid[k] == pid)
            return 1;
    return 0;
}

static void tree_add(void *ud, int pid)
{
    Tree *t = ud;

    if (in_tree(t, pid) || !in_tree(t, parent_of(pid)))
        return;
    if (t->n == t->cap) {
        long *more = realloc(t->pid, (size_t)(2 * t->cap) * sizeof *more);
        if (!more)
            return;
        t->pid = more;
        t->cap *= 2;
    }
    kill((pid_t)pid, SIGSTOP); /* frozen: it forks no more */
    t->pid[t->n++] = pid;
    t->added = 1;
}

void dist_launch_kill_tree(int root)
{
    /* The root frozen first, so that it starts no more; then every process
     * whose parent is in the list (mpirun, its daemons, the ranks), frozen
     * as found, in rounds until a round finds none; killed only at the end,
     * since a process killed earlier would orphan its children (reparented,
     * out of the walk's reach). */
    Tree t = {malloc(16 * sizeof(long)), 0, 16, 1};

    kill(root, SIGSTOP);
    if (!t.pid) {
        kill(root, SIGKILL);
        return;
    }
    t.pid[t.n++] = root;
    while (t.added) {
        t.added = 0;
        procfs_each_id("/proc", tree_add, &t);
    }
    for (long k = t.n - 1; k >= 0; k--)
        kill((pid_t)t.pid[k], SIGKILL);
    free(t.pid);
}

/* 128 + the signal that ended it, or its exit status; -1 when unknown. */
static int status_code(int status)
{
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int dist_launch_reap(int pid, int *code)
{
    int status;
    pid_t w = waitpid(pid, &status, WNOHANG);

    if (w == pid) {
        *code = status_code(status);
        return 1;
    }
    if (w < 0 && errno != EINTR) {
        *code = -1;
        return 1;
    }
    return 0;
}

int dist_launch_wait(int pid, int (*stop)(void))
{
    int status, passed = 0;
    struct timespec nap = {0, 20 * 1000 * 1000};

    for (;;) {
        pid_t w = waitpid(pid, &status, stop ? WNOHANG : 0);
        if (w == pid)
            return status_code(status);
        if (w < 0 && errno != EINTR)
            return -1;
        int sig = stop ? stop() : 0;
        if (sig && !passed) {
            kill(pid, sig);
            passed = 1;
        }
        if (stop)
            nanosleep(&nap, NULL);
    }
}

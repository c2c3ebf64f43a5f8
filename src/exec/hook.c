/*
 * hook.c: `cnntop exec`'s side of the Python hook
 * (assets/python/sitecustomize.py; the protocol is cnntop/hookfeed.h).
 *
 * The hook's directory is found relative to the executable,
 * <bindir>/../share/cnntop/python (the installed layout, and the build
 * tree's copy), then at the install prefix (CNNTOP_HOOK_DIR).  It goes
 * first on the command's PYTHONPATH, before the user's own entries; the
 * hook imports the sitecustomize it shadows.  CNNTOP_HOOK_FD names the
 * write end of a pipe the command inherits (the only descriptor cnntop
 * leaves open across its exec), and CNNTOP_HOOK_INO the pipe itself
 * ("DEV:INO" of its fstat): a launcher may close the descriptor (sudo
 * does) and the program open a file that gets its number, so the hook
 * writes only while the descriptor is still that pipe.  cnntop reads the
 * other end without blocking between samples of the tree; what it reads
 * is another program's input, checked line by line (cnntop/hookfeed.h):
 * pids must be of the tree, times within this clock.  A command that is
 * not Python, or does not use torch's DataLoader, never writes: nothing
 * changes for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exec/pipes.h"

#ifndef CNNTOP_HOOK_DIR
#define CNNTOP_HOOK_DIR "/usr/local/share/cnntop/python"
#endif

/* The hook's directory into buf (len >= PATH_MAX); 0, or -1 when it is
 * nowhere. */
static int hook_dir(char *buf, size_t len)
{
    char exe[PATH_MAX], probe[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        snprintf(probe, sizeof probe, "%s/../share/cnntop/python/sitecustomize.py", exe);
        if (access(probe, R_OK) == 0 && realpath(probe, buf)) {
            *strrchr(buf, '/') = '\0'; /* realpath's result is absolute */
            return 0;
        }
    }
    snprintf(probe, sizeof probe, "%s/sitecustomize.py", CNNTOP_HOOK_DIR);
    if (access(probe, R_OK) != 0)
        return -1;
    snprintf(buf, len, "%s", CNNTOP_HOOK_DIR);
    return 0;
}

/* NAME=a[sep b] into the command's environment (h->env; this process's
 * own is left as it is: envp.h).  -1 when full or out of memory. */
static int env_add(ExecHook *h, const char *name, const char *a, const char *sep,
                   const char *b)
{
    size_t len = strlen(name) + strlen(a) + strlen(sep) + strlen(b) + 2;
    char *v = h->nenv < EXEC_HOOK_ENV_MAX ? malloc(len) : NULL;

    if (!v) {
        errno = ENOMEM;
        return -1;
    }
    snprintf(v, len, "%s=%s%s%s", name, a, sep, b);
    h->env[h->nenv++] = v;
    return 0;
}

/* PYTHONPATH = dir[:the user's]. */
static int env_prepend(ExecHook *h, const char *dir)
{
    const char *old = getenv("PYTHONPATH");

    return env_add(h, "PYTHONPATH", dir, old && *old ? ":" : "", old && *old ? old : "");
}

/* CLOCK_MONOTONIC in s: Python's time.monotonic(), the hook's "t". */
static double clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CNNTOP_HOOK_FD and CNNTOP_HOOK_INO for the pipe's write end wfd. */
static int env_pipe(ExecHook *h, int wfd)
{
    char num[16], id[64];
    struct stat st;

    if (fstat(wfd, &st) != 0)
        return -1;
    snprintf(num, sizeof num, "%d", wfd);
    snprintf(id, sizeof id, "%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    return env_add(h, "CNNTOP_HOOK_FD", num, "", "") != 0 ||
                   env_add(h, "CNNTOP_HOOK_INO", id, "", "") != 0
               ? -1
               : 0;
}

int exec_hook_open(ExecHook *h, int enabled, char *note, size_t len)
{
    char dir[PATH_MAX];
    int p[2];

    memset(h, 0, sizeof *h);
    h->fd = h->wfd = -1;
    hookfeed_init(&h->feed);
    note[0] = '\0';
    if (!enabled)
        return 0;
    if (hook_dir(dir, sizeof dir) != 0) {
        snprintf(note, len, "the Python hook is not installed (looked in <bindir>/../share/"
                 "cnntop/python and %s): no DataLoader figures", CNNTOP_HOOK_DIR);
        return 0;
    }
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(note, len, "pipe for the Python hook: %s", strerror(errno));
        return 0;
    }
    /* The write end crosses the command's exec; blocking, so the hook
     * never loses a line to a full pipe (it waits for cnntop instead). */
    if (fcntl(p[1], F_SETFD, 0) != 0 || fcntl(p[1], F_SETFL, 0) != 0 ||
        env_prepend(h, dir) != 0 || env_pipe(h, p[1]) != 0) {
        snprintf(note, len, "the Python hook: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        exec_hook_close(h);
        return 0;
    }
    h->fd = p[0];
    h->wfd = p[1];
    h->on = 1;
    h->feed.t_lo = clock_s(); /* the command starts after this */
    return 0;
}

int exec_hook_layers(ExecHook *h, const char *spec)
{
    if (!h->on)
        return 0;
    return env_add(h, "CNNTOP_LAYERS", spec && *spec ? spec : EXEC_LAYERS_DEFAULT, "", "");
}

void exec_hook_forked(ExecHook *h)
{
    if (h->wfd >= 0)
        close(h->wfd);
    h->wfd = -1;
}

/* The tree's answer for a pid the hook names (HOOK_PID_*). */
static int pid_of(void *u, int pid)
{
    int has = proctree_has(u, pid);
    return has > 0 ? HOOK_PID_OURS : has == 0 ? HOOK_PID_FOREIGN : HOOK_PID_GONE;
}

/* A rank the hook named (it joined torch.distributed): its role.  (Past
 * PROC_MAX_RANKS it keeps the role it has.) */
static void rank(void *u, int pid)
{
    (void)proctree_set_rank(u, pid);
}

/* A worker the hook named: its role.  (proctree_set_worker() refuses a pid
 * only when PROC_MAX_PROCS named ones wait to be found, which happens only
 * when the tree is full and would not follow them anyway.) */
static void worker(void *u, int pid)
{
    (void)proctree_set_worker(u, pid);
}

void exec_hook_drain(ExecHook *h, ProcTree *t)
{
    char buf[8192];
    ssize_t n;

    h->feed.host = (HookHost){.pid_of = pid_of, .worker = worker, .rank = rank, .u = t};
    while (h->fd >= 0) {
        n = read(h->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return; /* EAGAIN: nothing more for now */
        if (n == 0) { /* every writer has gone: no more lines */
            close(h->fd);
            h->fd = -1;
            return;
        }
        h->feed.t_hi = clock_s(); /* every line read was written before now */
        hookfeed_bytes(&h->feed, buf, (size_t)n);
        proctree_set_main(t, h->feed.pid); /* the hook's process, a shell's child or not */
    }
}

void exec_hook_close(ExecHook *h)
{
    if (h->fd >= 0)
        close(h->fd);
    if (h->wfd >= 0)
        close(h->wfd);
    h->fd = h->wfd = -1;
    for (int i = 0; i < h->nenv; i++)
        free(h->env[i]);
    h->nenv = 0;
}

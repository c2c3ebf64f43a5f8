/*
 * proctree_role.c: which role each process of a tree has (see
 * cnntop/proctree.h), decided on what the process is, never on one
 * sample of it.
 *
 * A shell's child is a copy of the shell (the same command line) from its
 * fork until its exec, and a poll can fall in between: a loop of 200
 * `/bin/true &` had a copy or two seen so, and called data-loader
 * workers, about 2 runs in 3.  A DataLoader worker is such a copy too, for
 * its whole life.  So a process is a worker when the hook names it, or
 * when it is a copy of the root that never exec'd, and the exec is watched
 * rather than sampled: when a process is found, before its command line is
 * first read, a disabled dummy perf event is opened on it with
 * enable_on_exec; its exec (however soon it comes, and however soon the
 * process ends after it) enables it, and the event's time enabled, which
 * the kernel keeps readable after the process has gone, then says so.  A
 * process that exec'd is of the other role for its whole life, in the
 * peak counts too (proctree_role_peak_live() counts by the final roles).
 * Where the event cannot be opened (perf_event_paranoid, no perf at all),
 * a copy must be seen as one at two polls to be a worker: a fork's moment
 * before its exec rarely spans two.
 *
 * A copy is judged against the root's program as it is now: when the root
 * execs again (a pyenv shim is a bash script that execs python), the
 * copies of its launcher (bash's subshells) are no copies of its program.
 *
 * The event is attached to the process's first thread, which is the one
 * that execs in a process that was forked (it has one thread until it
 * starts others); an exec from another of its threads goes unseen by the
 * event and is caught only by a later poll's command line.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "prof/proctree_impl.h"
#include "util/err.h"

/* The detector: counts nothing, enabled only by the process's exec. */
static int exec_detector(int pid)
{
    struct perf_event_attr a;

    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.disabled = 1;
    a.enable_on_exec = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    int fd = counters_perf_open(&a, pid);
    return fd >= 0 ? fd : -1;
}

void role_watch(ProcTree *t, PtProc *p)
{
    p->exec_fd = exec_detector(p->info.pid);
    p->watched = p->exec_fd >= 0;
    for (int k = 0; k < t->npend; k++)
        if (t->pend_pid[k] == p->info.pid) {
            p->named_worker = 1;
            t->pend_pid[k] = t->pend_pid[--t->npend];
            break;
        }
}

/* 1 once the detector says the process exec'd. */
static int exec_seen(const PtProc *p)
{
    CounterRaw r;

    return p->exec_fd >= 0 && counters_read_fd(p->exec_fd, &r) == 0 && r.enabled > 0;
}

/* What its command line and its detector say now: a copy of the root
 * (copy_polls), or a process that exec'd (execd, for good). */
static void copy_judge(ProcTree *t, PtProc *p)
{
    char cmd[sizeof t->root_cmd];

    if (!p->execd && p->info.live && t->root_cmd_len > 0) {
        long n = procfs_cmdline(p->info.pid, cmd, sizeof cmd);
        if (n > 0 && n == t->root_cmd_len && !memcmp(cmd, t->root_cmd, (size_t)n)) {
            if (p->copy_gen != t->root_gen)
                p->copy_polls = 0;
            p->copy_gen = t->root_gen;
            p->copy_polls++;
        } else if (n > 0)
            p->execd = 1;
    }
    /* Read after the command line: an exec after that read is still seen. */
    if (!p->execd && exec_seen(p))
        p->execd = 1;
    if (p->exec_fd >= 0 && (p->execd || !p->info.live)) { /* nothing more to learn */
        close(p->exec_fd);
        p->exec_fd = -1;
    }
}

ProcRole role_judge(ProcTree *t, PtProc *p)
{
    for (int k = 0; k < t->nrank; k++)
        if (t->rank_pid[k] == p->info.pid)
            return PROC_ROLE_RANK;
    if (t->main_pid > 0 && p->info.pid == t->main_pid)
        return PROC_ROLE_MAIN;
    if (p == &t->proc[0])
        return t->main_pid > 0 && t->main_pid != p->info.pid ? PROC_ROLE_OTHER : PROC_ROLE_MAIN;
    copy_judge(t, p);
    if (p->named_worker)
        return PROC_ROLE_WORKER;
    /* A copy of a program the root ran before its last exec (a launcher's
     * subshell, the root being a shell script that then execs python) is
     * not a copy of the program. */
    if (p->execd || p->copy_polls == 0 || p->copy_gen != t->root_gen)
        return PROC_ROLE_OTHER;
    return p->watched || p->copy_polls >= 2 ? PROC_ROLE_WORKER : PROC_ROLE_OTHER;
}

void role_prune(ProcTree *t)
{
    char path[32];

    for (int k = 0; k < t->npend; k++) {
        snprintf(path, sizeof path, "/proc/%d", t->pend_pid[k]);
        if (access(path, F_OK) != 0)
            t->pend_pid[k--] = t->pend_pid[--t->npend];
    }
}

int proctree_set_worker(ProcTree *t, int pid)
{
    int k = proctree_proc_find(t, pid);

    if (k >= 0) {
        t->proc[k].named_worker = 1;
        return 0;
    }
    for (k = 0; k < t->npend; k++)
        if (t->pend_pid[k] == pid)
            return 0;
    if (t->npend == PROC_MAX_PROCS)
        return -CN_ENOMEM;
    t->pend_pid[t->npend++] = pid;
    return 0;
}

int proctree_set_rank(ProcTree *t, int pid)
{
    for (int k = 0; k < t->nrank; k++)
        if (t->rank_pid[k] == pid)
            return 0;
    if (t->nrank == PROC_MAX_RANKS)
        return -CN_ENOMEM;
    t->rank_pid[t->nrank++] = pid;
    return 0;
}

void proctree_set_main(ProcTree *t, int pid)
{
    if (pid > 0)
        t->main_pid = pid;
}

int proctree_has(const ProcTree *t, int pid)
{
    ProcStat st;
    int p = pid;

    if (pid <= 0)
        return 0;
    if (proctree_proc_find(t, pid) >= 0)
        return 1;
    /* Not found yet: a live descendant of a live process of the tree.  A
     * chain longer than this is not one a poll would find either. */
    for (int depth = 0; depth < 64; depth++) {
        if (procfs_stat(p, &st) != 0)
            return p == pid ? -1 : 0;
        int k = proctree_proc_find(t, st.ppid);
        if (k >= 0)
            return t->proc[k].info.live;
        if (st.ppid <= 1)
            return 0;
        p = st.ppid;
    }
    return 0;
}

int proctree_role_peak_live(const ProcTree *t, ProcRole role)
{
    int best = 0;

    /* The most of the role alive at one poll: the peak is at some
     * process's first poll, so count those alive then. */
    for (int k = 0; t && k < t->nproc; k++) {
        const PtProc *a = &t->proc[k];
        if (a->info.role != role || !a->poll_first)
            continue;
        int n = 0;
        for (int j = 0; j < t->nproc; j++) {
            const PtProc *b = &t->proc[j];
            n += b->info.role == role && b->poll_first && b->poll_first <= a->poll_first &&
                 a->poll_first <= b->poll_last;
        }
        best = n > best ? n : best;
    }
    return best;
}

/*
 * proctree.h: the counters and the scheduler's view of another program's
 * whole process tree, by role (what `cnntop exec -- CMD` reports).
 *
 * A ProcTree follows one root process (the command, started by the
 * caller) and every process that descends from it, including those that
 * appear later (a PyTorch DataLoader forks its workers when iteration
 * begins).  Each poll finds new processes from /proc (a process whose
 * parent is in the tree joins it) and new threads of known processes,
 * opens the set's events for each thread (perf_event_open on the tid,
 * counting from then), and samples each thread's schedstat and each
 * process's CPU time, page faults and resident set.  A thread or process
 * that lived less than one poll interval may be missed; what it did is
 * then absent, never guessed.
 *
 * Roles:
 *   PROC_ROLE_MAIN    the root process and its threads (PyTorch's
 *                     intra-op compute threads live here), or the process
 *                     named by proctree_set_main() (the Python process the
 *                     hook runs in, when a shell started it: the shell is
 *                     then one of the others);
 *   PROC_ROLE_WORKER  processes the Python hook names (proctree_set_worker():
 *                     its DataLoader's workers, whatever their command
 *                     line), and forked copies of the root that never
 *                     exec another program (the root's command line:
 *                     DataLoader workers with the fork start method, run
 *                     without the hook);
 *   PROC_ROLE_OTHER   every other descendant (a shell's children, a
 *                     compiler, a spawn-method worker not reported);
 *   PROC_ROLE_RANK    processes the Python hook names as ranks of
 *                     torch.distributed (proctree_set_rank(): they called
 *                     init_process_group, whoever launched them); their
 *                     DataLoader workers are workers.
 * A role is decided on what the process is, not on one sample of it: a
 * shell's child is a copy of the shell between its fork and its exec, and
 * a process that execs is of the other role for its whole life, however
 * soon it ends after the exec (proctree_role.c watches the exec with a
 * perf event; without perf a copy must be seen at two polls to count as
 * a worker).  Readings sum each process under its latest role, and
 * proctree_role_peak_live() counts by it.
 *
 * Events are those of a CounterSet spec (counters.h): an event that cannot
 * be counted here keeps its status and reason ("n/a" on every role), and
 * counts are scaled for multiplexing as counters_read() does.
 *
 * Threads: one thread owns a ProcTree; nothing here is thread-safe.
 * Conventions: 0 or a negative CN_E* code with a one-line message in err.
 */
#ifndef CNNTOP_PROCTREE_H
#define CNNTOP_PROCTREE_H

#include <stddef.h>
#include <stdint.h>

#include "cnntop/counters.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ProcRole {
    PROC_ROLE_MAIN, PROC_ROLE_WORKER, PROC_ROLE_OTHER, PROC_ROLE_RANK, PROC_ROLES
} ProcRole;

#define PROC_MAX_PROCS 512     /* processes followed in one tree */
#define PROC_MAX_THREADS 2048  /* threads followed, live and gone */
#define PROC_MAX_RANKS 64      /* processes named ranks (the hook's HOOK_MAX_RANKS) */

/* One process of the tree, as last sampled. */
typedef struct ProcInfo {
    int pid, ppid;
    ProcRole role;
    char comm[32];          /* /proc/<pid>/comm, e.g. "python3" */
    int live;               /* 1: still running at the last poll */
    int threads;            /* threads seen */
    double wall;            /* s from when it was found to its end (or now) */
    double cpu;             /* s user + system of all its threads */
    double cpu_util;        /* cpu / wall: CPUs it kept busy, e.g. 1.93 */
    uint64_t minflt, majflt;/* page faults, minor and major */
    long hwm_kib;           /* peak resident set (VmHWM), KiB; 0 unknown */
} ProcInfo;

typedef struct ProcTree ProcTree;

/*
 * Makes a tree for the events of `spec` (see counters_new(): NULL is the
 * defaults).  Errors as counters_new(), and -CN_ENOMEM.  Free with
 * proctree_free().
 */
int proctree_new(ProcTree **out, const char *spec, char *err, size_t errlen);

/* Closes every counter and frees the tree.  NULL is fine. */
void proctree_free(ProcTree *t);

/*
 * Starts following `pid` (a child of the caller, typically stopped before
 * its exec) as the root.  With enable_on_exec, its counters start at its
 * next execve() (perf's enable_on_exec), so the command is counted from
 * its first instruction and the fork's own work is not.  -CN_ESTATE if a
 * root is set already, -CN_EINVAL if /proc has no such process.
 */
int proctree_watch(ProcTree *t, int pid, int enable_on_exec, char *err, size_t errlen);

/*
 * One sample: finds new processes and threads, opens their counters,
 * reads the scheduler and /proc figures of every live one, and closes the
 * counters of threads that ended (their final counts are kept).  Call it
 * every few tens of milliseconds, and once more when the root has exited
 * but is not yet reaped (waitid WNOWAIT), so its last figures are read.
 * Returns the number of live processes.
 */
int proctree_poll(ProcTree *t);

/* Gives process `pid` the worker role whatever its command line (the
 * Python hook's report); it applies when the pid is or becomes part of the
 * tree (a pid not found by the poll after it, and gone, is forgotten).
 * -CN_ENOMEM when PROC_MAX_PROCS pids are waiting to be found. */
int proctree_set_worker(ProcTree *t, int pid);

/* Gives process `pid` the rank role whatever it is (the Python hook's
 * "rank" line: it joined torch.distributed), now or when a poll finds it;
 * -CN_ENOMEM past PROC_MAX_RANKS of them. */
int proctree_set_rank(ProcTree *t, int pid);

/* Gives process `pid` the main role (the Python hook's own process, which
 * a shell or a launcher may have started), and the root the other role
 * when it is another process; pid <= 0 or the root's pid changes nothing. */
void proctree_set_main(ProcTree *t, int pid);

/* Whether pid is a process of the tree: 1 when the tree follows it, or it
 * is alive and descends from a live process of the tree (a poll has not
 * found it yet); 0 when it is alive and does not; -1 when there is no
 * such process (it may have come and gone between two polls). */
int proctree_has(const ProcTree *t, int pid);

/* Events in the tree's set. */
int proctree_count(const ProcTree *t);

/*
 * A role's readings as counters_read() gives them: out[0..n), n =
 * proctree_count() (at most max), summed over the role's threads, the
 * live ones read now.  Returns n.
 */
int proctree_read(ProcTree *t, ProcRole role, CounterReading *out, int max);

/* A role's scheduler figures (see CounterSched; from the last poll). */
void proctree_sched(const ProcTree *t, ProcRole role, CounterSched *out);

/* The wall time in ns a role's readings cover: from when its first
 * process was found to the last poll that saw one alive. */
double proctree_role_wall_ns(const ProcTree *t, ProcRole role);

/* Processes of a role seen so far. */
int proctree_role_procs(const ProcTree *t, ProcRole role);

/* The most processes of a role alive at one poll: a DataLoader that
 * starts fresh workers each epoch has num_workers of them at once, not
 * num_workers times the epochs (what the oversubscription verdict needs). */
int proctree_role_peak_live(const ProcTree *t, ProcRole role);

/* Threads of a role that wanted a CPU (on one, or runnable and waiting
 * for one) more than `share` (0..1) of the time they were followed: the
 * busy ones (PyTorch's compute threads, not its idle helpers), for the
 * oversubscription verdict. The wait counts: 300 compute threads on 2
 * cores each run 1% of the time but are all busy. 0 without schedstat. */
int proctree_busy_threads(const ProcTree *t, ProcRole role, double share);

/* Fills up to max ProcInfo, in the order found (the root first); returns
 * how many processes the tree has had. */
int proctree_procs(const ProcTree *t, ProcInfo *out, int max);

/* The largest sum of the live processes' resident sets seen at one poll,
 * KiB (the tree's peak RSS, sampled). */
long proctree_peak_rss_kib(const ProcTree *t);

/* Threads that could not be followed (PROC_MAX_THREADS, PROC_MAX_PROCS or
 * out of file descriptors), so a reader knows the sums are partial; 0
 * normally.  `why` (may be NULL) receives the first reason. */
int proctree_dropped(const ProcTree *t, char *why, size_t len);

/* "main process", "data-loader workers", "other children", "ranks" */
const char *proctree_role_name(ProcRole role);

#ifdef __cplusplus
}
#endif
#endif

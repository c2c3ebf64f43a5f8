/*
 * proctree_impl.h: the insides of a ProcTree (cnntop/proctree.h), shared
 * by proctree.c (following the processes and threads, reading them) and
 * proctree_role.c (which role each process has).
 */
#ifndef CNNTOP_PROF_PROCTREE_IMPL_H
#define CNNTOP_PROF_PROCTREE_IMPL_H

#include <stdint.h>

#include "cnntop/proctree.h"
#include "prof/counters_kernel.h"
#include "prof/counters_reading.h"
#include "prof/procfs.h"

typedef struct PtThread {
    int tid, proc;                /* proc: index into ProcTree.proc */
    int live;
    int fd[CTR_MAX_EVENTS];       /* -1: not open */
    SchedThread base, last;       /* at discovery, at the last poll */
    int64_t found_ns, last_ns;    /* CLOCK_MONOTONIC */
} PtThread;

typedef struct PtProc {
    ProcInfo info;
    int64_t found_ns, last_ns;
    CounterSum acc[CTR_MAX_EVENTS];    /* its threads that ended */
    int fails[CTR_MAX_EVENTS];    /* threads on which an event failed to open */
    long rss_kib;                 /* VmRSS at the last poll */
    /* What its role is decided on (proctree_role.c): */
    int exec_fd;                  /* the exec detector (see role_watch); -1: closed or none */
    int watched;                  /* 1: the detector was opened when it was found */
    int execd;                    /* 1: it exec'd a program since it was found */
    int copy_polls;               /* polls that read its command line as the root's */
    int copy_gen;                 /* the root's program it was a copy of (root_gen) */
    int named_worker;             /* 1: the hook named it a worker */
    long poll_first, poll_last;   /* the first and last poll that saw it alive; 0: none */
} PtProc;

struct ProcTree {
    CounterSet *set;              /* the events' names, kinds and status */
    int n;
    CounterEventInfo ev[CTR_MAX_EVENTS];
    struct perf_event_attr attr[CTR_MAX_EVENTS];
    CtrStatus fail_status[CTR_MAX_EVENTS];
    char fail_reason[CTR_MAX_EVENTS][CTR_REASON_LEN];
    PtProc proc[PROC_MAX_PROCS];
    int nproc;
    PtThread *thr;                /* PROC_MAX_THREADS */
    int nthr;
    int pend_pid[PROC_MAX_PROCS]; /* workers the hook named, not yet found */
    int npend;
    int main_pid;                 /* proctree_set_main(); 0: the root */
    int rank_pid[PROC_MAX_RANKS]; /* proctree_set_rank() */
    int nrank;
    char root_cmd[4096];          /* the root's cmdline after its exec */
    long root_cmd_len;            /* -1: not read yet */
    int root_gen;                 /* the root's programs so far: 1 after its first exec,
                                     one more at each exec that changes its command line */
    int await_exec;               /* 1: the root is still to exec its program */
    long polls;                   /* proctree_poll() calls so far */
    long peak_rss_kib;
    int dropped;
    char drop_why[128];
    long clk_tck;
    int pmu;                      /* for reasons: -2 not asked */
    int scan_pid;                 /* scratch for the task scan */
};

/* The index of pid in t->proc, or -1 (inline: the tree and the role
 * rules both look processes up, and neither file calls the other). */
static inline int proctree_proc_find(const ProcTree *t, int pid)
{
    for (int k = t->nproc - 1; k >= 0; k--)
        if (t->proc[k].info.pid == pid)
            return k;
    return -1;
}

/* A process just found (not the root): opens its exec detector, takes a
 * worker name the hook gave before it was found. */
void role_watch(ProcTree *t, PtProc *p);

/* Its role now, from what is known of it (reads its command line and its
 * detector: call once a poll, after its sample). */
ProcRole role_judge(ProcTree *t, PtProc *p);

/* After a poll: worker names of processes that have gone unfound are
 * dropped. */
void role_prune(ProcTree *t);

#endif

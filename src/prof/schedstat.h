/*
 * schedstat.h: the scheduler's view of one thread, from /proc.
 *
 * /proc/self/task/<tid>/schedstat holds three numbers since the thread
 * began: ns on a CPU, ns runnable but waiting in a run queue, and the
 * number of timeslices it was given (needs CONFIG_SCHED_INFO, which every
 * distribution kernel has).  /proc/self/task/<tid>/status holds the
 * voluntary (blocked, slept, yielded to I/O) and nonvoluntary (preempted)
 * context switches.  Neither needs any permission, unlike perf, so these
 * are the context-switch numbers cnntop trusts (perf's context-switches
 * counter reads 0 when kernel counting is excluded).
 *
 * The counters module keeps one baseline per attached thread and per-role
 * sums of the deltas; this file only reads, subtracts, adds and judges.
 */
#ifndef CNNTOP_SCHEDSTAT_H
#define CNNTOP_SCHEDSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "cnntop/counters.h"

typedef struct SchedThread {
    uint64_t on_cpu_ns;   /* ns on a CPU */
    uint64_t wait_ns;     /* ns runnable, waiting for a CPU */
    uint64_t timeslices;  /* times scheduled in */
    uint64_t vol_cs;      /* voluntary_ctxt_switches */
    uint64_t invol_cs;    /* nonvoluntary_ctxt_switches */
    int have_sched;       /* 1: the schedstat file was read (first three fields valid) */
    int have_status;      /* 1: the status file was read (switch counts valid) */
} SchedThread;

/*
 * Reads thread `tid` of this process.  Returns 0 when at least one of the
 * two files was read (see have_*), -CN_EIO with a message naming the file
 * when neither could be (the thread has gone, or no /proc).
 */
int schedstat_read(int tid, SchedThread *out, char *err, size_t errlen);

/* Parses the text of a schedstat file ("on wait slices\n"); 0 or -1. */
int schedstat_parse_sched(const char *text, SchedThread *out);

/* Parses the text of a status file for the two *_ctxt_switches lines;
 * 0 or -1 when they are missing. */
int schedstat_parse_status(const char *text, SchedThread *out);

/* *acc += later - earlier, field by field, for the fields both have;
 * a counter that went backwards adds nothing. */
void schedstat_add_delta(SchedThread *acc, const SchedThread *later, const SchedThread *earlier);

/*
 * Fills the figures of a role: `sum` holds the summed deltas, thread_wall
 * and span are in seconds.  oversubscribed is set when the role's threads
 * waited in a run queue more than CTR_OVERSUB_WAIT of their wall time
 * (summed wait / summed wall, i.e. the per-thread average weighted by how
 * long each lived) over at least CTR_OVERSUB_MIN_WALL seconds of threads.
 */
void schedstat_summarise(CounterSched *out, const SchedThread *sum, int threads, int live,
                         double thread_wall, double span);

/* The verdict alone: 1 if wait_ns is more than CTR_OVERSUB_WAIT of wall_ns
 * and wall_ns is at least CTR_OVERSUB_MIN_WALL seconds. */
int schedstat_oversubscribed(double wait_ns, double wall_ns);

#endif

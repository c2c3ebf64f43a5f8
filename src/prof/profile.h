/*
 * profile.h: the per-op step profiler.
 *
 * A Profile accumulates wall time and calls for each op of the training
 * step, a layer in one direction (conv1 forward, ..., the optimizer), as
 * the trainer laps from one op to the next; it may also put each op in a
 * Trace and add the trainer thread's own counters to the op.  The trainer
 * thread alone writes it; readers get copies.
 *
 * Dependencies go one way: the profile uses the trace (trace.h) and the
 * counters (cnntop/counters.h), and neither knows the profile.
 */
#ifndef CNNTOP_PROFILE_H
#define CNNTOP_PROFILE_H

#include <stdint.h>

#include "prof/timer.h"
#include "prof/trace.h"

/* Layers and directions, in step order. */
typedef enum ProfOp {
    PROF_DATA,
    PROF_CONV1_F, PROF_BN1_F, PROF_CONV2_F, PROF_BN2_F, PROF_CONV3_F, PROF_BN3_F,
    PROF_FC1_F, PROF_FC2_F, PROF_FC3_F, PROF_LOSS,
    PROF_FC3_B, PROF_FC2_B, PROF_FC1_B,
    PROF_BN3_B, PROF_CONV3_B, PROF_BN2_B, PROF_CONV2_B, PROF_BN1_B, PROF_CONV1_B,
    PROF_OPTIM,
    PROF_NOPS
} ProfOp;

typedef struct CounterSet CounterSet;

#define PROF_EVENTS 8   /* counters kept per op: the set's first events */

typedef struct Profile {
    double seconds[PROF_NOPS]; /* wall time summed over calls */
    long calls[PROF_NOPS];     /* times each op ran */
    Trace *trace;              /* also record each op here, or NULL */
    /* Per-op counters of the trainer thread, when `cs` is set: each lap
     * reads the thread's own counters (counters_self_read) and adds the
     * scaled difference since the last lap to the op.  A lap reads only
     * the events of the per-op figures, IPC and miss rate, that opened
     * (`want`): each read is a system call of about a microsecond, and
     * a step has some 20 laps while the compute threads wait (four
     * software events read and never used cost about 1% of a step at
     * batch 64: bench/RESULTS.md, session 26). */
    CounterSet *cs;
    uint32_t want;             /* bit i: a lap reads event i */
    int nev;                   /* events kept, <= PROF_EVENTS */
    int ctr_ok[PROF_EVENTS];   /* 1: the event counted on this thread */
    double ctr[PROF_NOPS][PROF_EVENTS];
    uint64_t last[PROF_EVENTS][3]; /* value, enabled, running at the last lap */
} Profile;

/* Clears p and makes it count op by op into cs (NULL: no counters),
 * its trace left as it was. */
void profile_reset(Profile *p, CounterSet *cs);

/* Takes the counters' baseline for the next lap (start of a step). */
void profile_counters_mark(Profile *p);

/* Adds the counters since the last lap or mark to op. */
void profile_counters_lap(Profile *p, ProfOp op);

/* Puts op, from t0 to t1 (timer_now() seconds), in p->trace as a "layer"
 * event. */
void profile_trace(Profile *p, ProfOp op, double t0, double t1);

/* Adds the time since *t0 to op and moves *t0 to now. */
static inline void profile_lap(Profile *p, ProfOp op, double *t0)
{
    double t = timer_now();
    p->seconds[op] += t - *t0;
    p->calls[op]++;
    if (p->trace)
        profile_trace(p, op, *t0, t);
    if (p->want)
        profile_counters_lap(p, op);
    *t0 = t;
}

/* The op's short name, e.g. "conv2 fwd". */
const char *profile_name(ProfOp op);

#endif

/*
 * profile.h: monotonic time and the per-layer profile.
 *
 * A Profile accumulates wall time and calls for each layer and direction of
 * the training step (conv1 forward, ..., optimizer).  The trainer thread
 * alone writes it; readers get copies.
 */
#ifndef CNNTOP_TIMERS_H
#define CNNTOP_TIMERS_H

#include <stdint.h>
#include <time.h>

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

typedef struct Trace Trace;
typedef struct CounterSet CounterSet;

#define PROF_EVENTS 8   /* counters kept per op: the set's first events */

typedef struct Profile {
    double seconds[PROF_NOPS]; /* wall time summed over calls */
    long calls[PROF_NOPS];     /* times each op ran */
    Trace *trace;              /* also record each op here, or NULL */
    /* Per-op counters of the trainer thread, when `cs` is set: each lap
     * reads the thread's own counters (counters_self_read) and adds the
     * scaled difference since the last lap to the op. */
    CounterSet *cs;
    int nev;                   /* events kept, <= PROF_EVENTS */
    int ctr_ok[PROF_EVENTS];   /* 1: the event counted on this thread */
    double ctr[PROF_NOPS][PROF_EVENTS];
    uint64_t last[PROF_EVENTS][3]; /* value, enabled, running at the last lap */
} Profile;

/* Takes the counters' baseline for the next lap (start of a step). */
void profile_counters_mark(Profile *p);

/* Adds the counters since the last lap or mark to op (timers.c). */
void profile_counters_lap(Profile *p, ProfOp op);

/* Records op from t0 to t1 in the trace (trace.c). */
void profile_trace(Profile *p, ProfOp op, double t0, double t1);

/* Seconds on the monotonic clock. */
static inline double timer_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Adds the time since *t0 to op and moves *t0 to now. */
static inline void profile_lap(Profile *p, ProfOp op, double *t0)
{
    double t = timer_now();
    p->seconds[op] += t - *t0;
    p->calls[op]++;
    if (p->trace)
        profile_trace(p, op, *t0, t);
    if (p->cs)
        profile_counters_lap(p, op);
    *t0 = t;
}

/* The op's short name, e.g. "conv2 fwd". */
const char *profile_name(ProfOp op);

#endif

/*
 * timers.h: monotonic time and the per-layer profile.
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

typedef struct Profile {
    double seconds[PROF_NOPS]; /* wall time summed over calls */
    long calls[PROF_NOPS];     /* times each op ran */
    Trace *trace;              /* also record each op here, or NULL */
} Profile;

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
    *t0 = t;
}

/* The op's short name, e.g. "conv2 fwd". */
const char *profile_name(ProfOp op);

#endif

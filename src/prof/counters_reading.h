/*
 * counters_reading.h: one event's counts, summed over threads, as the
 * CounterReading a front end shows: the value, the share of time it was
 * on the PMU, and the status and reason that say why a figure is missing.
 * One rule for the counter set (engine threads by role) and the process
 * tree (`cnntop exec`'s processes by role).
 */
#ifndef CNNTOP_COUNTERS_READING_H
#define CNNTOP_COUNTERS_READING_H

#include <stdint.h>

#include "cnntop/counters.h"

/* An event's counts summed over the threads of a role. */
typedef struct CounterSum {
    double scaled;       /* sum of each thread's scaled value */
    uint64_t raw;        /* sum of raw values */
    uint64_t enabled;    /* ns */
    uint64_t running;    /* ns */
    int threads;         /* threads whose counter was read */
} CounterSum;

/* The threads of the role on which the event could not be opened. */
typedef struct CounterMiss {
    int threads;         /* how many; 0: none */
    CtrStatus status;    /* of the first */
    const char *reason;  /* its reason */
} CounterMiss;

/*
 * Fills *out for event `ev` from `sum`.  A figure that is missing says
 * why: the event's own status at counters_new(), the open failure of
 * every thread (`miss`), `no_thread` when no thread of the role ran
 * (e.g. "no load thread has run"), or never scheduled on the PMU.
 */
void counters_reading_fill(const CounterEventInfo *ev, const CounterSum *sum,
                           const CounterMiss *miss, const char *no_thread, CounterReading *out);

#endif

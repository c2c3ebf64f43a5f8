/*
 * timer.h: seconds on the monotonic clock, the one clock of the profile,
 * the trace and the engine's timings.
 */
#ifndef CNNTOP_TIMER_H
#define CNNTOP_TIMER_H

#include <time.h>

/* Seconds on CLOCK_MONOTONIC (any origin: subtract two readings). */
static inline double timer_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif

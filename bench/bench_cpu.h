/*
 * bench_cpu.h: what the one-thread benchmarks (wino_rate, fc_rate) share:
 * the thread's CPU time, so that other programs on a shared machine add
 * little, and inputs of noise in [-0.5, 0.5).
 */
#ifndef CNNTOP_BENCH_CPU_H
#define CNNTOP_BENCH_CPU_H

#include <stdlib.h>
#include <time.h>

#include "util/arena.h"

static inline double cpu_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* n floats from mem_alloc (NULL when out of memory). */
static inline float *noise(long n)
{
    float *p = mem_alloc((size_t)n * sizeof *p);

    for (long i = 0; p && i < n; i++)
        p[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    return p;
}

#endif

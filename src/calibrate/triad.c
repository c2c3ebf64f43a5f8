/*
 * triad.c: the memory bandwidth, by a STREAM-style triad a[i] = b[i] + s*c[i]
 * on the compute threads over arrays well beyond the last-level cache,
 * counted as STREAM counts it (3 arrays moved).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "calibrate/crew.h"
#include "calibrate/measure.h"
#include "prof/sysinfo.h"
#include "prof/timer.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct TriadBench {
    size_t per;               /* floats per array per member */
    double budget;            /* seconds of timed passes, normally at least 3 */
    CrewWindow win;               /* the current pass */
    double start;             /* when the first pass began (member 0) */
    double best;              /* seconds of the fastest pass (member 0) */
    int passes;               /* passes done (member 0) */
    int stop;                 /* written by member 0 between barriers */
    int T;
    pthread_barrier_t bar;
    atomic_int failed;
    atomic_int wrong;         /* a result was not b + s*c */
} TriadBench;

/* a[i] = b[i] + s * c[i]: kept out of line so the compiler cannot fold
 * passes together. */
__attribute__((noinline)) static void triad(float *restrict a, const float *restrict b,
                                            const float *restrict c, float s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + s * c[i];
}

static void triad_member(void *bp, int tid)
{
    TriadBench *b = bp;
    float *a = mem_alloc(b->per * sizeof(float));
    float *x = mem_alloc(b->per * sizeof(float));
    float *y = mem_alloc(b->per * sizeof(float));

    if (!a || !x || !y)
        atomic_store(&b->failed, 1);
    for (size_t i = 0; a && x && y && i < b->per; i++) {
        x[i] = 1.0f;
        y[i] = 2.0f;
    }
    for (;;) {
        pthread_barrier_wait(&b->bar);
        if (b->stop || atomic_load(&b->failed))
            break;
        b->win.t0[tid] = timer_now();
        if (tid == 0 && b->passes == 0)
            b->start = b->win.t0[0];
        triad(a, x, y, 3.0f, b->per);
        b->win.t1[tid] = timer_now();
        pthread_barrier_wait(&b->bar);
        if (tid == 0) {
            double span = crew_window_span(&b->win, b->T);
            if (b->passes == 0 || span < b->best)
                b->best = span;
            b->passes++;
            /* Best of at least 3 passes, unless passes are so slow (a
             * sanitizer build, a busy machine) that the budget is gone. */
            double spent = timer_now() - b->start;
            b->stop = (b->passes >= 3 && spent >= b->budget) || spent >= 3.0 * b->budget ||
                      b->passes >= 100;
        }
    }
    if (a && b->per && (a[0] != 7.0f || a[b->per - 1] != 7.0f))
        atomic_store(&b->wrong, 1);
    mem_free(a);
    mem_free(x);
    mem_free(y);
}

/*
 * The triad's arrays should be well beyond the last-level cache: 4 x L3 for
 * the three together, at least 64 MiB and at most 1 GiB or a quarter of
 * the memory.  Touching fresh pages can be slow (about 14 us a page on
 * some VMs), so a probe times the touch of 8 MiB (best of two) and the
 * size shrinks to what `touch_budget` seconds can touch; triad_mib and
 * llc_mib in the figures then tell that the arrays did not clear the cache.
 */
static size_t triad_bytes(size_t llc, double touch_budget)
{
    size_t want = llc ? 4 * llc : (size_t)(256 * MIB), ram = sysinfo_ram_bytes();
    const size_t lo = (size_t)(64 * MIB), hi = (size_t)(1024 * MIB), probe = 8u << 20;

    want = want < lo ? lo : want > hi ? hi : want;
    if (ram && want > ram / 4)
        want = ram / 4;
    /* The faster of two probes: one may be slowed by a neighbour. */
    double per_byte = 0.0;
    for (int i = 0; i < 2; i++) {
        double t0 = timer_now();
        void *p = mem_alloc(probe);
        double t = (timer_now() - t0) / (double)probe;
        mem_free(p);
        per_byte = i == 0 || t < per_byte ? t : per_byte;
    }
    if (per_byte > 0.0 && per_byte * (double)want > touch_budget)
        want = (size_t)(touch_budget / per_byte);
    return want < (size_t)(48 * MIB) ? (size_t)(48 * MIB) : want;
}

int triad_measure(Calibration *out, int T, double budget, double touch_budget,
                  size_t llc, char *err, size_t errlen)
{
    TriadBench b = {.T = T, .budget = budget};
    size_t bytes = triad_bytes(llc, touch_budget);
    int rc;

    b.per = bytes / 3 / sizeof(float) / (size_t)T;
    b.per -= b.per % 16;
    if (crew_window_alloc(&b.win, T, err, errlen) != 0)
        return -CN_ENOMEM;
    atomic_init(&b.failed, 0);
    atomic_init(&b.wrong, 0);
    pthread_barrier_init(&b.bar, NULL, (unsigned)T);
    rc = crew_run(T, triad_member, &b, err, errlen);
    pthread_barrier_destroy(&b.bar);
    if (rc == 0 && atomic_load(&b.failed))
        rc = cn_fail(err, errlen, -CN_ENOMEM, "calibration: triad arrays (%.0f MiB): "
                     "out of memory", (double)bytes / MIB);
    else if (rc == 0 && atomic_load(&b.wrong))
        rc = cn_fail(err, errlen, -CN_EINVAL, "calibration: the triad computed wrong "
                     "values (a compiler or memory fault)");
    if (rc == 0) {
        double moved = 3.0 * (double)b.per * (double)T * sizeof(float);
        out->triad_gbps = moved / b.best * 1e-9;
        out->triad_mib = moved / MIB;
    }
    crew_window_free(&b.win);
    return rc;
}

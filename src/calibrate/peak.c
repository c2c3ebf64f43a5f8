/*
 * peak.c: the yardstick: the FMA peak of each vector width, measured with
 * fmapeak.c's register-only loops on one thread and on the compute
 * threads, one thread's clock, and the verdict on an SGEMM rate held far
 * below the peak.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>

#include "calibrate/crew.h"
#include "calibrate/fmapeak.h"
#include "calibrate/measure.h"
#include "prof/sysinfo.h"
#include "prof/timer.h"
#include "util/err.h"

#define PEAK_WINDOW_S 0.002        /* one timing window of a peak loop, seconds */
_Static_assert(CALIB_NWIDTHS == PEAK_NWIDTHS, "one figure per width of fmapeak.h");

/* Each window starts all members together at a barrier and lasts from the
 * first start to the last end; the best window is kept.  Windows are
 * short, so that on a shared machine some of them run with no neighbour
 * scheduled in between: the figure is what the units can do, not what a
 * busy machine left. */
typedef struct PeakBench {
    const PeakLoop *loop;
    long iters;               /* iterations of loop->run per member per window */
    int windows;
    int T;
    CrewWindow win;
    double best;              /* GFLOP/s of the best window (member 0) */
    double sink;              /* checksums (member 0 only) */
    pthread_barrier_t bar;
} PeakBench;

static void peak_member(void *bp, int tid)
{
    PeakBench *b = bp;

    for (int w = 0; w < b->windows; w++) {
        pthread_barrier_wait(&b->bar);
        b->win.t0[tid] = timer_now();
        double cs = b->loop->run(b->iters);
        b->win.t1[tid] = timer_now();
        pthread_barrier_wait(&b->bar);
        if (tid != 0)
            continue;
        double span = crew_window_span(&b->win, b->T);
        double g = (double)b->T * (double)b->iters * b->loop->flops_per_iter / span * 1e-9;
        b->best = span > 0.0 && g > b->best ? g : b->best;
        b->sink += cs;
    }
}

/* Iterations of run() that take about one window, from a short probe. */
static long peak_iters(const PeakLoop *l)
{
    double best = 0.0;

    for (int i = 0; i < 3; i++) {
        double t0 = timer_now();
        l->run(1000);
        double t = timer_now() - t0;
        best = i == 0 || t < best ? t : best;
    }
    long n = best > 0.0 ? (long)(PEAK_WINDOW_S / best * 1000.0) : 100000;
    return n < 1000 ? 1000 : n;
}

/* The best window's GFLOP/s of loop l on T threads, within `budget` s. */
static int measure_peak_loop(const PeakLoop *l, int T, double budget, double *out, char *err,
                             size_t errlen)
{
    PeakBench b = {.loop = l, .T = T, .iters = peak_iters(l)};
    int rc;

    b.windows = (int)(budget / PEAK_WINDOW_S);
    b.windows = b.windows < 5 ? 5 : b.windows > 200 ? 200 : b.windows;
    if (crew_window_alloc(&b.win, T, err, errlen) != 0)
        return -CN_ENOMEM;
    pthread_barrier_init(&b.bar, NULL, (unsigned)T);
    rc = crew_run(T, peak_member, &b, err, errlen);
    pthread_barrier_destroy(&b.bar);
    if (rc == 0 && !isfinite(b.sink))
        rc = cn_fail(err, errlen, -CN_EINVAL, "calibration: the %s peak loop computed "
                     "non-finite values", l->name);
    *out = rc == 0 ? b.best : 0.0;
    crew_window_free(&b.win);
    return rc;
}

/* The share of T x one thread's figure below which T threads' figure is
 * measured again. */
#define PEAK_SCALE_MIN 0.75

/* One thread's clock: dependent adds, best of short windows; 0 unknown. */
static double measure_clock(double budget)
{
    const long iters = 20000; /* 1.28 M cycles: a third of a millisecond at 4 GHz */
    double best = 0.0, t_end = timer_now() + budget;

    if (!fmapeak_clock(1))
        return 0.0;
    do {
        double t0 = timer_now();
        fmapeak_clock(iters);
        double t = timer_now() - t0;
        best = best == 0.0 || t < best ? t : best;
    } while (timer_now() < t_end);
    return best > 0.0 ? (double)iters * FMAPEAK_CLOCK_ADDS / best * 1e-9 : 0.0;
}

/* Every width the CPU runs, on one thread and on T; then the clock. */
int peak_measure(Calibration *out, int T, double budget, char *err, size_t errlen)
{
    unsigned f = sysinfo_cpu_features();
    int n = 1, rc = 0;

    for (int w = 0; w < PEAK_NWIDTHS; w++)
        n += fmapeak_available((PeakWidth)w, f) ? 2 : 0;
    for (int w = 0; w < PEAK_NWIDTHS && rc == 0; w++) {
        if (!fmapeak_available((PeakWidth)w, f))
            continue;
        const PeakLoop *l = fmapeak_loop((PeakWidth)w);
        rc = measure_peak_loop(l, 1, budget / n, &out->fma1_gflops[w], err, errlen);
        /* T threads of register-only loops scale with the cores: far less
         * than that means a neighbour held a core through every window
         * (seen once on this VM: 117 against 2 x 118 GFLOP/s).  Measure
         * again, twice at most, and keep the best. */
        for (int k = 0; rc == 0 && k < 3; k++) {
            double g = 0.0;
            rc = measure_peak_loop(l, T, budget / n, &g, err, errlen);
            out->fma_gflops[w] = g > out->fma_gflops[w] ? g : out->fma_gflops[w];
            if (out->fma_gflops[w] >= PEAK_SCALE_MIN * T * out->fma1_gflops[w])
                break;
        }
    }
    out->clock_ghz = rc == 0 ? measure_clock(budget / n) : 0.0;
    return rc;
}

const char *calibrate_width_name(int w)
{
    return w >= 0 && w < PEAK_NWIDTHS ? fmapeak_loop((PeakWidth)w)->name : "none";
}

double calibrate_peak(const Calibration *c, int *w)
{
    double best = 0.0;
    int at = -1;

    for (int i = 0; c && i < CALIB_NWIDTHS; i++)
        if (c->fma_gflops[i] > best) {
            best = c->fma_gflops[i];
            at = i;
        }
    if (w)
        *w = at;
    return best;
}

int calibrate_gap_text(double sgemm, double peak, const char *isa, int threads, int narrow,
                       char *msg, size_t len)
{
    if (msg && len)
        msg[0] = '\0';
    if (!(peak > 0.0) || !(sgemm > 0.0))
        return 0;
    double share = sgemm / peak;
    if (share >= CALIB_SGEMM_LOW && !narrow)
        return 0;
    if (msg && len)
        snprintf(msg, len, "%sSGEMM at the model's shapes %.0f GFLOP/s on %d thread%s is %.0f%% "
                 "of the %.0f GFLOP/s FMA peak (%s), %.1fx below it%s", narrow ? "measured: " : "",
                 sgemm, threads, threads == 1 ? "" : "s", 100.0 * share, peak, isa, 1.0 / share,
                 narrow ? "" : ": a calibration run beside other work reads so (cnntop calibrate "
                 "--recalibrate on a quiet machine measures again), or OpenBLAS is slow at "
                 "these shapes");
    return 1;
}

int calibrate_sgemm_gap(const Calibration *c, int narrow, char *msg, size_t len)
{
    int w;
    double peak = calibrate_peak(c, &w);
    double sgemm = c->model_gflops[0] > c->model_gflops[1] ? c->model_gflops[0]
                                                           : c->model_gflops[1];

    return calibrate_gap_text(sgemm, peak, calibrate_width_name(w), c->threads, narrow, msg, len);
}

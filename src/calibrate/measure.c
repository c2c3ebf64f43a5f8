/*
 * measure.c: one calibration, its parts in turn within one budget: SGEMM at
 * the model's shapes and the square product (sgemm.c), the triad
 * (triad.c), the FMA peaks and the clock (peak.c); then SGEMM at the
 * model's shapes again where it came out far below the peak
 * (sgemm_recheck()).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "calibrate/key.h"
#include "calibrate/measure.h"
#include "cnntop/limits.h"
#include "nn/gemm.h"
#include "prof/timer.h"
#include "util/err.h"

static void progress(const CalibOpts *o, const char *what, double done)
{
    if (o && o->progress)
        o->progress(o->userdata, what, done);
}

/* The faster of the model's two batches, GFLOP/s (what the gap warning
 * judges, calibrate_sgemm_gap()). */
static double model_best(const Calibration *c)
{
    double best = 0.0;

    for (int k = 0; k < CALIB_NBATCH; k++)
        best = c->model_gflops[k] > best ? c->model_gflops[k] : best;
    return best;
}

/*
 * SGEMM at the model's shapes far below the FMA peak (under
 * CALIB_SGEMM_LOW of it) is either the truth, a narrow OpenBLAS kernel,
 * which the gap warning then reports, or a neighbour on the cores through
 * every window: a calibration taken while other work ran (seen: 43 GFLOP/s
 * against a 212 GFLOP/s peak, cached, and every later run warned, as the
 * warning then read, "OpenBLAS may not be using the CPU's vectors" of a
 * kernel that gave 185 GFLOP/s on a quiet machine).  So it is measured
 * again, twice at most, keeping
 * each batch's best, as peak.c does for the peak; a narrow kernel costs
 * the two extra passes and keeps its low figure.
 */
static int sgemm_recheck(Calibration *out, double budget, char *err, size_t errlen)
{
    double peak = calibrate_peak(out, NULL);

    for (int k = 0; k < 2 && peak > 0.0 && model_best(out) < CALIB_SGEMM_LOW * peak; k++) {
        Calibration again = *out;
        int rc = sgemm_measure_model(&again, out->threads, budget, err, errlen);
        if (rc != 0)
            return rc;
        for (int b = 0; b < CALIB_NBATCH; b++)
            if (again.model_gflops[b] > out->model_gflops[b])
                out->model_gflops[b] = again.model_gflops[b];
    }
    return 0;
}

int calibrate_measure(const CalibOpts *opts, Calibration *out, char *err, size_t errlen)
{
    double S = opts && opts->seconds > 0.0 ? opts->seconds : CALIB_DEFAULT_SECONDS;
    double start = timer_now();
    char what[96];
    int rc;

    memset(out, 0, sizeof *out);
    key_fill(out, opts ? opts->threads : 0, NULL);
    if (out->threads > CN_MAX_THREADS)
        return cn_fail(err, errlen, -CN_EINVAL, "calibration: %d threads, at most %d",
                       out->threads, CN_MAX_THREADS);
    out->batch[0] = CALIB_BATCH_A;
    out->batch[1] = CALIB_BATCH_B;
    out->square_n = CALIB_SQUARE_N;
    out->square_threads = out->cores;
    gemm_init();
    /* Budget: 30% GEMM at model shapes, 17% the square, for the triad up
     * to 20% touching its arrays plus 13% timing them, 12% the peaks;
     * beyond it, 15% a pass only where SGEMM came out far below the peak
     * (sgemm_recheck(), twice at most). */
    snprintf(what, sizeof what, "SGEMM at the model's shapes, %d threads", out->threads);
    progress(opts, what, 0.0);
    rc = sgemm_measure_model(out, out->threads, 0.30 * S, err, errlen);
    if (rc != 0)
        return rc;
    snprintf(what, sizeof what, "SGEMM %d x %d, %d OpenBLAS threads", out->square_n,
             out->square_n, out->square_threads);
    progress(opts, what, 0.30);
    rc = sgemm_measure_square(out, 0.17 * S, err, errlen);
    if (rc != 0)
        return rc;
    snprintf(what, sizeof what, "memory bandwidth (triad), %d threads", out->threads);
    progress(opts, what, 0.55);
    rc = triad_measure(out, out->threads, 0.13 * S, 0.20 * S, (size_t)(out->llc_mib * MIB),
                       err, errlen);
    if (rc != 0)
        return rc;
    snprintf(what, sizeof what, "FMA peak per vector width, 1 and %d threads", out->threads);
    progress(opts, what, 0.88);
    rc = peak_measure(out, out->threads, 0.12 * S, err, errlen);
    if (rc != 0)
        return rc;
    progress(opts, "SGEMM at the model's shapes again, if far below the peak", 0.99);
    rc = sgemm_recheck(out, 0.15 * S, err, errlen);
    if (rc != 0)
        return rc;
    out->seconds = timer_now() - start;
    out->measured_at = (long long)time(NULL);
    progress(opts, "done", 1.0);
    return 0;
}

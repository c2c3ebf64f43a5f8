/*
 * measure.h: the parts of a calibration, each filling its own figures of a
 * Calibration whose key (calibrate/key.h) and batches are set, within a
 * budget in seconds.  calibrate_measure() (measure.c) runs them in turn;
 * cnntop/calibrate.h says what each figure is.  All return 0, or a
 * negative CN_E* code with a one-line message in err.
 */
#ifndef CNNTOP_CALIB_MEASURE_H
#define CNNTOP_CALIB_MEASURE_H

#include <stddef.h>

#include "cnntop/calibrate.h"

#define MIB (1024.0 * 1024.0)

/* SGEMM at the model's shapes of out->batch[], on T threads at once, each
 * calling OpenBLAS with one thread: out->model_gflops (sgemm.c). */
int sgemm_measure_model(Calibration *out, int T, double budget, char *err, size_t errlen);

/* One out->square_n square SGEMM on out->square_threads OpenBLAS threads,
 * which are set back to one after: out->square_gflops (sgemm.c). */
int sgemm_measure_square(Calibration *out, double budget, char *err, size_t errlen);

/* The triad's bandwidth on T threads over arrays beyond `llc` bytes of
 * cache, touching them within `touch_budget` s: out->triad_gbps and
 * out->triad_mib (triad.c). */
int triad_measure(Calibration *out, int T, double budget, double touch_budget, size_t llc,
                  char *err, size_t errlen);

/* The FMA peak of every vector width the CPU runs, on one thread and on T,
 * and one thread's clock: out->fma1_gflops, fma_gflops, clock_ghz
 * (peak.c). */
int peak_measure(Calibration *out, int T, double budget, char *err, size_t errlen);

#endif

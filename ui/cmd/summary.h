/*
 * summary.h: the summary of a run, printed from its RunRecord.
 *
 * `cnntop run` prints it when a run ends and `cnntop report FILE.json`
 * prints it again from the stored record, so the two cannot drift apart:
 * the same figures, the same layout, the same words.
 */
#ifndef CNNTOP_SUMMARY_H
#define CNNTOP_SUMMARY_H

#include <stdio.h>

#include "cnntop/record.h"

/*
 * Prints the summary of r to f, from the record alone: the heading, the
 * figures, the time on paper and its warning, and with -e the counters
 * block.  `run` prints it from the record it exports and `report` of that
 * export prints the same text.  Figures the record does not hold (an older
 * or partial record) are left out or said to be n/a, never printed as 0.
 */
void summary_print(FILE *f, const RunRecord *r);

/* Its parts that `cnntop eval` prints too: the heading with the data and
 * the machine, and the test accuracy (when r->have_eval). */
void summary_print_header(FILE *f, const RunRecord *r, const char *what);
void summary_print_eval(FILE *f, const RunRecord *r);

/* The OpenBLAS kernel's note and, when it is narrower than the CPU or SGEMM
 * is held far below the FMA peak, the warning with the cause, the fix and
 * the measured factor (calibrate_gap_text()). */
void summary_print_blas(FILE *f, const RunRecord *r);

/* What the MFU is against, into buf: "the 193.3 GFLOP/s FMA peak
 * (AVX2+FMA) on 2 threads", or for a job of ranks "the job's 205.3
 * GFLOP/s FMA peak (AVX2+FMA): 2 ranks x 102.6 on 1 thread each"
 * (record_job_peak()). */
void summary_peak_text(const RunRecord *r, char *buf, size_t len);

/* "Against the peak:" MFU and the executed share at images_per_s, or that
 * the peak is unknown. */
void summary_print_peak(FILE *f, const RunRecord *r, double images_per_s);

/* The per-layer table of r (record_layer_steps() steps), sorted by time,
 * in the one form of the engine's layers and exec's model: a Module column
 * when the rows have kinds, the counters' columns when counted.  Returns 1
 * when it printed, 0 when r has no layers. */
int summary_print_layers(FILE *f, const RunRecord *r);

/* A data-parallel run (r->have_dist; nothing otherwise): the ranks, each
 * rank's images/s, step time and its parts, and the slowest rank
 * (summary_dist.c). */
void summary_print_dist(FILE *f, const RunRecord *r);

/* The layer table's rows of the all-reduce: the seconds waiting for it a
 * step, their share of `total`, bytes a step, algbw and busbw as nccl-tests
 * define them, and the share hidden under the backward pass; then the
 * ranks' small sums' wait (inside the BatchNorm rows, so not in total). */
void summary_print_allreduce_row(FILE *f, const RunRecord *r, double total);

/* Prints the repeats' mean ± σ, range, outliers and noise warning (when the
 * record has two or more repeats); nothing otherwise. */
void summary_print_repeats(FILE *f, const RunRecord *r);

/* The counters of role (a ThreadRole, or a ProcRole for an exec record's)
 * among the record's nc counters cs, as the counter set read them: n of
 * them into out (at most max), for a counters block (common/counters_fmt.h). */
int summary_readings(const RecordCounter *cs, size_t nc, int role, CounterReading *out, int max);

#endif

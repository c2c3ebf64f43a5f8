/*
 * figures.h: the figures derived from a record, in one place for every
 * front end and export (src/record/figures.c).
 *
 * A record holds what was measured; the figures here are what is worked
 * out of it: the mean ± σ of the runs' wall times and throughputs, the
 * mean accuracy and CPU time over the repeats, the share of the step spent
 * waiting for data and the step split's shares, the share of the FMA peak,
 * the model's GFLOP/s and a layer's, the cores kept busy, a segment's
 * change, a counter by role and name, and the verdict's input.  The summary, `report`, `sweep`, the exports and
 * the dashboard read them here rather than work them out again.
 *
 * Unknown is unknown: a figure that cannot be had is NAN (a summary: mean
 * NAN and n 0), never 0.  Pure: no I/O; only record_times_summary() and
 * record_figures() allocate, and free what they take.
 */
#ifndef CNNTOP_FIGURES_H
#define CNNTOP_FIGURES_H

#include <stddef.h>

#include "cnntop/calibrate.h"
#include "cnntop/engine.h"
#include "cnntop/record.h"
#include "cnntop/stats.h"
#include "cnntop/verdict.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Mean of the user (which = 0) or system (1) CPU seconds over the runs;
 * NAN for an exec record without repeats (its CPU time is not split). */
double record_mean_cpu(const RunRecord *r, int which);

/* Summary of the runs' wall times (record_times()), and a malloc'ed copy of
 * them in *times (*n of them; free it whatever the result).  Returns 0 or
 * -CN_ENOMEM. */
int record_times_summary(const RunRecord *r, double **times, size_t *n, StatsSummary *s);

/* Summary of the runs' throughputs (record_throughputs()); mean NAN and n 0
 * unless every run has one (an exec run without the hook's figures has
 * none), and when out of memory. */
void record_throughput_summary(const RunRecord *r, StatsSummary *s);

/* A record's figures over its runs, as the tables show them. */
typedef struct RecordFigures {
    StatsSummary time;  /* wall seconds; time.n: the runs */
    StatsSummary ips;   /* images/s (record_throughput_summary()) */
    double accuracy;    /* record_mean_accuracy() */
    double wait_share;  /* record_wait_share() */
    double gflops;      /* figures_gflops() of ips.mean: the model's GFLOP/s */
    double mfu;         /* record_mfu() at ips.mean */
    double executed;    /* record_executed_share() at ips.mean */
} RecordFigures;

/* Fills f for r.  0, or -CN_ENOMEM (the time summary then NAN). */
int record_figures(const RunRecord *r, RecordFigures *f);

/* Mean test accuracy over the repeats that were evaluated, else the final
 * evaluation's; NAN when none. */
double record_mean_accuracy(const RunRecord *r);

/* The share of a step's time spent waiting for data: split->data over the
 * four parts; NAN when the split holds no time (nothing ran). */
double figures_wait_share(const StepSplit *split);

/* The record's data-wait share: its training's (figures_wait_share()) or,
 * for an exec record, the Python hook's; NAN when unknown. */
double record_wait_share(const RunRecord *r);

/* images_per_s x flops / peak_gflops: MFU with the model's FLOPs per image,
 * the executed share with the executed ones, 0..1; NAN when a figure is
 * unknown or the peak is not positive.  record_mfu() with a record's. */
double figures_peak_share(double images_per_s, double flops, double peak_gflops);

/* The model's GFLOP/s at images_per_s: images/s x FLOPs per image / 1e9;
 * NAN when either is unknown (not finite) or negative. */
double figures_gflops(double images_per_s, double flops_per_image);

/* The rate of flops done in seconds, in GFLOP/s (a layer's); NAN when
 * flops is unknown or not positive (an elementwise layer) or seconds is
 * not positive (nothing timed). */
double figures_rate_gflops(double flops, double seconds);

/* The step split's shares of its time: share[0..4] for data, forward,
 * backward, optimizer and comm (a data-parallel run's wait for the other
 * ranks; 0 in one process), each 0..1; every one NAN when the split holds
 * no time.  figures_wait_share() is share[0]. */
enum { SPLIT_PARTS = 5 };
void figures_split_shares(const StepSplit *split, double share[SPLIT_PARTS]);

/* CPUs kept busy: cpu_s CPU seconds over wall_s; NAN when either is
 * unknown or wall_s is not positive. */
double figures_cores_busy(double cpu_s, double wall_s);

/* The change from segment `before` to `now` of a run: *ratio their
 * images/s now / before, *err its uncertainty from each mean's standard
 * error (independent errors), *real 1 when the difference is over twice
 * its standard error.  0, or -1 (the figures left NAN and 0) when either
 * segment has fewer than 2 measured steps or before's rate is not
 * positive. */
int figures_segment_change(const Segment *now, const Segment *before, double *ratio,
                           double *err, int *real);

/* The counter `name` of role (a ThreadRole, or a ProcRole among an exec
 * record's exec_counters) among the n of v; NULL when there is none. */
const RecordCounter *record_counter_find(const RecordCounter *v, size_t n, int role,
                                         const char *name);

/* The verdict's input from a record: cnntop's own run (the data wait of
 * its split, the loader threads of its last segment, its compute threads,
 * knobs: cnntop's options) or an exec run (the hook's data wait, the
 * worker processes, the busy main threads, PyTorch's knobs when the hook
 * spoke).  data_wait_share is NAN when unknown (verdict_judge() says so). */
void record_verdict_input(const RunRecord *r, VerdictInput *in);

/* The time on paper of r's training (calibrate_sketch_at()) from the rates
 * the record keeps, and for a data-parallel run its all-reduces at the
 * measured link (calibrate_sketch_comm(): busbw from dist.ar_probe, one a
 * step): 0, or -CN_EINVAL when it trained no image or was not
 * calibrated (an older record, a run stopped before the calibration). */
int record_sketch(const RunRecord *r, Sketch *out);

/* A part's time on paper: *compute_s its executed FLOPs (NAN or 0: none)
 * at gflops, *memory_s its bytes at gbps.  0, or -CN_EINVAL (both NAN)
 * without a rate or bytes. */
int figures_paper(double flops_executed, double bytes, double gflops, double gbps,
                  double *compute_s, double *memory_s);

/* One layer's time on paper over the run, as the sketch counts the whole:
 * *compute_s its executed FLOPs at the sketch's rate (one process's: a
 * rank's layers ran on its own images), *memory_s its bytes at the triad
 * bandwidth.  0, or -CN_EINVAL when the record was not calibrated or the
 * layer has no bytes (an exec record's, an older record's). */
int record_layer_paper(const RunRecord *r, const RecordLayer *l, double *compute_s,
                       double *memory_s);

/* One part of the step against paper: a layer of the record (NULL for the
 * parts together), its seconds and bytes over the run, and its time on
 * paper (record_layer_paper). */
typedef struct PaperPart {
    const RecordLayer *l;
    double seconds, bytes, compute_s, memory_s;
} PaperPart;

/* The record's layers that have a time on paper, in the record's order,
 * *n of them, and their sum into *total (l NULL): the summary's and the
 * Markdown export's "On paper, per part".  Returns them allocated (the
 * caller frees), or NULL when none has one (not calibrated, no layer
 * bytes) or memory ran out. */
PaperPart *record_paper_parts(const RunRecord *r, size_t *n, PaperPart *total);

/* The augmentation bits as "shift,elastic", or "none". */
void record_augment_text(unsigned aug, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
/* A data-parallel run's all-reduce bandwidth as nccl-tests define algbw:
 * the gradient bytes over the time of one all-reduce of them alone
 * (ar_probe), GB/s; NAN when unknown.  busbw = algbw x 2(N-1)/N. */
double record_dist_algbw(const DistFigures *d);
/* nccl-tests' busbw: algbw x 2(N-1)/N, what each link carries in a ring,
 * GB/s; NAN when algbw is unknown or there are no ranks. */
double record_dist_busbw(const DistFigures *d);

#endif

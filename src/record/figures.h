/*
 * figures.h: figures derived from a record that several exports show
 * (figures.c): the summary of the runs' wall times and throughputs, the
 * mean CPU time and accuracy over the repeats, the augmentation as text.
 */
#ifndef CNNTOP_RECORD_FIGURES_H
#define CNNTOP_RECORD_FIGURES_H

#include <stddef.h>

#include "cnntop/record.h"
#include "cnntop/stats.h"

/* Mean of the user (which = 0) or system (1) CPU seconds over the runs. */
double record_mean_cpu(const RunRecord *r, int which);

/* Summary of the runs' wall times (record_times()), and a malloc'ed copy of
 * them in *times (*n of them; free it whatever the result).  Returns 0 or
 * -CN_ENOMEM. */
int record_times_summary(const RunRecord *r, double **times, size_t *n, StatsSummary *s);

/* Summary of the runs' throughputs; every figure NAN when out of memory. */
void record_throughput_summary(const RunRecord *r, StatsSummary *s);

/* A record's figures over its runs: the wall times' and the throughputs'
 * summaries. */
typedef struct RecordFigures {
    StatsSummary time;  /* seconds; time.n: the runs */
    StatsSummary ips;   /* images/s; NAN mean when unknown */
} RecordFigures;

/* Fills f for r.  0 or -CN_ENOMEM. */
int record_figures(const RunRecord *r, RecordFigures *f);

/* Mean test accuracy over the repeats that were evaluated, else the final
 * evaluation's; NAN when none. */
double record_mean_accuracy(const RunRecord *r);

/* The augmentation bits as "shift,elastic", or "none". */
void record_augment_text(unsigned aug, char *buf, size_t len);

#endif

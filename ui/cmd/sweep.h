/*
 * sweep.h: `cnntop sweep`: the grid of batch sizes x loader workers x
 * compute threads, each configuration trained (with --runs R --warmup K),
 * a table with speedups and their uncertainty against the first
 * configuration, and a recommendation that says when the top two cannot be
 * told apart and when the fastest learns clearly less.
 */
#ifndef CNNTOP_SWEEP_H
#define CNNTOP_SWEEP_H

#include "common/options.h"

/* Percentage points of test accuracy below the best configuration's that
 * count as "clearly lower" in the recommendation. */
#define SWEEP_ACCURACY_SLACK 1.0

int sweep_main(const Options *o, int argc, char **argv);

#endif

/*
 * sweep_template.h: `sweep --cmd TEMPLATE`'s template and grid
 * (sweep_template.c), the part of sweep_cmd.c that runs nothing.
 */
#ifndef CNNTOP_CMD_SWEEP_TEMPLATE_H
#define CNNTOP_CMD_SWEEP_TEMPLATE_H

#include <stddef.h>

#include "common/options.h"

#define SWEEP_CMD_MAX 8192 /* a configuration's command line, substituted */

/* The placeholders, in the grid's order (the first varies slowest; the
 * number of processes fastest, as the ranks of cnntop's own sweep). */
enum { SWEEP_BATCH, SWEEP_WORKERS, SWEEP_THREADS, SWEEP_RANKS, SWEEP_HOLDERS };

/* 1 when the template has placeholder k (SWEEP_BATCH...). */
int sweep_template_uses(const char *tmpl, int k);

/* The value of placeholder k (SWEEP_BATCH...) in configuration idx; 0:
 * the grid has no list for it. */
int sweep_holder_value(const Options *o, const int idx[SWEEP_HOLDERS], int k);

/* The number of configurations: the product of the lists' lengths (a
 * list not given counts 1). */
int sweep_grid_size(const Options *o);

/* Configuration i of the grid: idx[k] into placeholder k's list (the
 * first list varies slowest). */
void sweep_grid_at(const Options *o, int i, int idx[SWEEP_HOLDERS]);

/* The template with configuration idx filled in, into out; its label
 * ("batch 64, workers 2"; "the command" with no list) into label.  0, or
 * -1 when the command line does not fit in len (the label is made first). */
int sweep_substitute(const Options *o, const int idx[SWEEP_HOLDERS], char *out, size_t len,
                     char *label, size_t llen);

#endif

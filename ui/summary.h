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
 * Prints the summary of r to f: "what" names the command in the heading
 * ("run", "report").  Figures the record does not hold (an older or partial
 * record) are left out rather than printed as 0.
 */
void summary_print(FILE *f, const RunRecord *r, const char *what);

/* Its parts that `cnntop eval` prints too: the heading with the data and
 * the machine, and the test accuracy (when r->have_eval). */
void summary_print_header(FILE *f, const RunRecord *r, const char *what);
void summary_print_eval(FILE *f, const RunRecord *r);

/* Prints the repeats' mean ± σ, range, outliers and noise warning (when the
 * record has two or more repeats); nothing otherwise. */
void summary_print_repeats(FILE *f, const RunRecord *r);

#endif

/*
 * report.h: `cnntop report FILE.json [FILE.json ...]`.
 *
 * One file: the summary `cnntop run` printed, from the stored record.
 * Several (or a sweep file): the runs side by side, with the speedup of
 * each over the first (images/s, ± its propagated uncertainty) and whether
 * the difference stands out of the run-to-run noise (Welch's t-test).
 */
#ifndef CNNTOP_REPORT_H
#define CNNTOP_REPORT_H

#include "common/options.h"

/* Returns EXIT_OK, or EXIT_FAIL after a one-line error for a bad file. */
int report_main(const Options *o);

#endif

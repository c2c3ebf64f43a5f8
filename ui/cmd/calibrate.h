/*
 * calibrate.h: `cnntop calibrate [--recalibrate]`.
 *
 * Prints what this machine can do (SGEMM rates at the model's shapes and
 * at a large square, memory bandwidth), where the figures are cached, and
 * the time one epoch of the default data takes on paper at batch 64 and
 * 512.  Progress goes to stderr while measuring, the figures to stdout.
 */
#ifndef CNNTOP_CALIBRATE_CMD_H
#define CNNTOP_CALIBRATE_CMD_H

#include "common/options.h"

/* Returns EXIT_OK, or EXIT_FAIL after a one-line error on stderr. */
int calibrate_main(const Options *o);

#endif

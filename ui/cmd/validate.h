/*
 * validate.h: every command's input checked in one pass before any work:
 * the options that need more than their own range (sweep --cmd's template
 * and grid), the output paths (--export, --save, --trace), the data
 * directory's files by their headers and the memory the run would take
 * (engine_check_start()).  main.c calls it for every command before it
 * starts one; the dashboard at its start, once its settings file is read.
 */
#ifndef CNNTOP_CMD_VALIDATE_H
#define CNNTOP_CMD_VALIDATE_H

#include <stddef.h>

#include "common/options.h"

/*
 * Checks o for its command; cfg is the run's configuration (o->cfg, or the
 * dashboard's after its settings file), NULL to leave the data and the
 * memory unchecked (a dashboard that starts no run yet).  A sweep's data
 * and memory are checked at the largest batch, workers and threads of its
 * lists, the grid's largest configuration.  Returns 0, or the exit code
 * (EXIT_USAGE for a bad command line, EXIT_FAIL for data, files or
 * memory) after writing one line, naming the option or the file and the
 * problem, to err.  Reads headers and stats paths; writes nothing.
 */
int validate_command(const Options *o, const RunConfig *cfg, char *err, size_t errlen);

#endif

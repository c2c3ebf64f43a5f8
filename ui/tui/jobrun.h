/*
 * jobrun.h: the dashboard's run of several ranks (jobrun.c), on the run
 * thread (runthread.h) in place of record_train().
 *
 * A run whose view says ranks > 1 is the job `cnntop run --ranks N` runs:
 * the run thread starts that command with the run's settings as options
 * and `--export TMP --force` through the engine's launcher
 * (dist_launch_env(): the dashboard starts no process itself), with
 * CNNTOP_DIST_LIVE naming a second temporary file, where the job's rank 0
 * appends its live lines (cnntop/dist.h).  Each tenth of a second the
 * thread reads the new lines, refuses the bad ones (dist_live_parse), and
 * publishes the good ones under TuiRun.mu: the view's progress and live
 * figures, and a sample for the charts.  When the command ends its record
 * is read back from the export, as `sweep --ranks` reads one, and becomes
 * the run's; a job that failed is a failed run whose reason is the
 * command's last line about it ("rank 1 died: signal 9 (Killed); mpirun
 * ended the job").  A stop (x, q) is SIGTERM to the command, which passes
 * it to the ranks (they stop after the same step); still running 30 s
 * later, the command and its launcher are killed.  Both temporary files
 * are removed before the thread ends.
 */
#ifndef CNNTOP_TUI_JOBRUN_H
#define CNNTOP_TUI_JOBRUN_H

#include "tui/runthread.h"

/* Runs r's run as a job of r->view.ranks ranks; sets the final state. */
void jobrun_main(TuiRun *r);

/* A job's samples from `from` on (at most max) into out: how many.  The
 * charts' history of a run of several ranks, which has no engine; UI
 * thread. */
int jobrun_samples(TuiRun *r, Sample *out, int from, int max);

#endif

/*
 * runner.h: one configuration, trained R times, into a RunRecord.
 *
 * `cnntop run` and `cnntop sweep` share this headless face of
 * record_train() (cnntop/record_train.h, which the dashboard's run thread
 * calls too): the -e counter set, progress lines on stderr, the stop
 * signals, and its errors as "cnntop: ..." lines.
 *
 * SIGINT, SIGTERM and SIGHUP stop the current run after its step; it is
 * still evaluated (record_train.h's rule: a second signal before the
 * evaluation starts skips it); the record is kept, marked interrupted, and
 * runner_signal() says which signal came.
 */
#ifndef CNNTOP_RUNNER_H
#define CNNTOP_RUNNER_H

#include "cnntop/calibrate.h"
#include "cnntop/counters.h"
#include "cnntop/record.h"
#include "common/options.h"

typedef struct RunnerOpts {
    RunConfig cfg;          /* the configuration (data_dir kept alive by the caller) */
    int runs, warmup;       /* R >= 1, K >= 0 */
    int vary_seed;
    const char *events;     /* -e spec, NULL: the defaults */
    const char *load;       /* checkpoint to start each repeat from, or NULL */
    const char *save;       /* checkpoint to write after the last repeat, or NULL */
    const char *trace;      /* trace of the last repeat, or NULL */
    const char *prefix;     /* progress line prefix, e.g. "[3/16] ", or "" */
    double target;          /* --target-accuracy (0..1), 0: none */
    int silent;             /* no progress lines (a rank other than 0 of a job) */
} RunnerOpts;

/* Makes the stop signals (SIGINT, SIGTERM, SIGHUP) stop the run after its
 * step (signals.h: the others end the process, SIGPIPE is ignored). */
void runner_signals(void);

/* The signal that arrived, or 0. */
int runner_signal(void);

/*
 * Runs the configuration into `rec` (already record_init()ed; command set
 * by the caller) with record_train(), the -e counter set attached to the
 * measured repeats.  Prints progress on stderr, and its error as a
 * "cnntop: ..." line.  Returns the exit code `cnntop
 * run` should give: 0, 1 (failure; message printed), 3 (diverged), 128+sig.
 * When `last` is not NULL, the last measured engine is left open there for
 * the caller's summary (free it with engine_free), with `counters` its set.
 */
int runner_run(const RunnerOpts *ro, RunRecord *rec, Engine **last, CounterSet **counters);

/* The machine's calibration for `threads` compute threads (0: the cores):
 * from the cache, or measured now (a few seconds, once; progress on
 * stderr); `force` measures again.  Returns c, or NULL after a one-line
 * message on stderr when it cannot be had. */
const Calibration *runner_calibration(int threads, int force, Calibration *c);

#endif

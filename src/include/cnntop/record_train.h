/*
 * record_train.h: one configuration trained into a RunRecord, the one way
 * every front end does it (`cnntop run`, `cnntop sweep`, the dashboard).
 *
 * record_train() makes a fresh engine for each of K warm-up and R measured
 * repeats (the same seed unless vary_seed; from the `load` checkpoint when
 * given; tracing the last repeat), attaches the caller's counter set to the
 * measured ones, trains with the caller's progress callback, evaluates on
 * the test set, and fills the record from the kept repeat (record_fill()):
 * the repeats, the checkpoint (`save`), the trace and the peak figures of
 * the caller's calibration.  It prints nothing; errors come back as values.
 *
 * It sits in the record layer because it ends in record_fill() and builds
 * on the engine alone: a front end adds only what it knows (the command
 * line, why a run was interrupted) and what it shows.
 *
 * A STOPPED RUN (the rule for every front end): a run stopped early (the
 * dashboard's x, a stop signal to run or sweep) is still evaluated on the
 * test set, so that its record has an accuracy, unless it stopped before
 * its first step or the caller asks to skip the evaluation (stopping()
 * returns 2: quitting the dashboard, a second stop signal) before the
 * evaluation starts; an evaluation under way runs to its end.  The stopped
 * repeat is the kept one: the repeats after it do not run.
 */
#ifndef CNNTOP_RECORD_TRAIN_H
#define CNNTOP_RECORD_TRAIN_H

#include "cnntop/calibrate.h"
#include "cnntop/counters.h"
#include "cnntop/engine.h"
#include "cnntop/record.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a repeat's engine is, for RecordTrainJob.phase. */
typedef enum RecordTrainPhase {
    RECORD_TRAIN_OPENED,     /* made (loaded, tracing), about to train: publish it */
    RECORD_TRAIN_TRAINED,    /* engine_train() returned; no evaluation follows yet */
    RECORD_TRAIN_EVALUATING, /* the final evaluation starts */
    RECORD_TRAIN_CLOSING     /* about to be freed: unpublish it */
} RecordTrainPhase;

typedef struct RecordTrainJob {
    RunConfig cfg;            /* the configuration; its strings kept alive by the caller */
    int runs, warmup;         /* R >= 1 measured repeats after K >= 0 warm-ups */
    int vary_seed;            /* repeat r trains with seed + r */
    const char *load;         /* checkpoint each repeat starts from, or NULL */
    const char *save;         /* checkpoint of the kept repeat, or NULL */
    const char *trace;        /* trace of the last repeat, or NULL */
    double target;            /* target accuracy (0..1) for time_to_target; 0: none */
    CounterSet *cs;           /* the caller's, attached to the measured repeats; or NULL */
    const Calibration *calib; /* the peak figures (record_set_calibration()), or NULL */
    ProgressFn progress;      /* after each step, on the calling thread; or NULL */
    /* Called on the calling thread at each phase of repeat r's engine (the
     * caller takes its own lock to publish e to other threads); or NULL. */
    void (*phase)(void *ud, RecordTrainPhase ph, Engine *e, int r);
    /* Whether to stop: 0 no, 1 stop (evaluate), 2 stop and skip the
     * evaluation; asked before each repeat, before training and before
     * evaluating (engine_train() clears a stop asked of the engine before
     * it starts).  A stop during training is engine_stop() or the progress
     * callback's non-zero.  NULL: never. */
    int (*stopping)(void *ud);
    void *ud;                 /* for progress, phase and stopping */
} RecordTrainJob;

/* What record_train() did besides the record. */
typedef struct RecordTrainResult {
    int kept;         /* a measured repeat filled the record */
    int stopped;      /* a stop ended it early (stopping(), engine_stop(), the callback) */
    int trained;      /* the kept repeat trained without error */
    TrainStats train; /* the kept (else the last) repeat's training */
    int have_eval;
    EvalResult eval;  /* the kept repeat's final evaluation (have_eval) */
    int trace_written;/* the trace file was written */
} RecordTrainResult;

/*
 * Runs the job into rec (record_init()ed; the caller sets the command).
 * res (may be NULL) says what happened.  When last is not NULL the kept
 * repeat's engine is handed back there (NULL when none was kept; the caller
 * frees it with engine_free(), before freeing its counter set); otherwise
 * it is freed.  Returns 0, or the first error, negative CN_E* with its
 * one-line message in err: the engine could not be made or loaded, the
 * trace file set up ("--trace: ..."), training failed (-CN_EDIVERGED: the
 * loss stopped being finite; the record holds the error), the record ran
 * out of memory, the checkpoint or trace could not be written.  A run
 * stopped before its first step writes neither checkpoint nor trace.
 */
int record_train(const RecordTrainJob *job, RunRecord *rec, RecordTrainResult *res, Engine **last,
                 char *err, size_t errlen);

/*
 * Opens a test-only engine for cfg from the checkpoint at `load`,
 * evaluates it on the test set and fills rec (record_init()ed) with the
 * configuration, data, machine and the evaluation.  The engine is handed
 * back in *out (engine_free() it) for what only it says (the checkpoint's
 * epochs).  Returns 0 or a negative CN_E* with err.
 */
int record_evaluate(const RunConfig *cfg, const char *load, RunRecord *rec, Engine **out,
                    char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif

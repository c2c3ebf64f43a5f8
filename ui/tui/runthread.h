/*
 * runthread.h: the dashboard's run thread.
 *
 * The dashboard trains on a thread of its own, so that the UI thread never
 * waits on the engine.  A TuiRun trains one configuration with
 * record_train() (cnntop/record_train.h, as `cnntop run` does): it makes an
 * Engine (reading the data set), trains it with a cheap progress callback,
 * evaluates it on the test set (a run stopped with x too; quitting skips
 * it), fills the record and stops; the UI thread copies a RunView at 10 Hz and calls the
 * engine's live functions (engine_snapshot, engine_set_*, engine_samples...),
 * which engine.h allows from any thread.
 *
 * DESIGN
 * - `mu` guards `view`, `engine`, `cs` and `have_rec`.  The run thread
 *   writes them; the UI thread reads them through runthread_view() /
 *   runthread_engine() / runthread_counters() / runthread_record().
 * - The run thread makes the counter set; record_train() makes the engine,
 *   attaches the set and hands the engine to on_phase(), which publishes
 *   it under `mu` before the training starts;
 *   only the UI thread frees them, engine first, after joining the run
 *   thread (in runthread_start() for the next run and in runthread_done()), so a
 *   pointer the UI thread got stays valid until then.
 * - record_train() builds `rec` with record_fill() when the run ends,
 *   before the run thread sets the final state; from then on it is the UI
 *   thread's.
 * - The view holds copies only (no pointer into the engine), so what the
 *   screen shows of a run outlives its engine.
 * - The profile in the view is copied by the progress callback, i.e. on
 *   the thread that drives the engine, at most twice a second: engine.h
 *   lets only that thread read engine_profile() during training.
 * - The run thread and every engine thread it starts block all signals;
 *   the UI thread alone handles them.
 */
#ifndef CNNTOP_TUI_RUNTHREAD_H
#define CNNTOP_TUI_RUNTHREAD_H

#include <pthread.h>
#include <stdatomic.h>

#include "cnntop/counters.h"
#include "cnntop/dist.h"
#include "cnntop/engine.h"
#include "cnntop/record.h"

typedef enum RunState {
    RUN_IDLE,       /* no run yet */
    RUN_LOADING,    /* making the engine: reading data, building the model */
    RUN_TRAINING,
    RUN_EVALUATING, /* on the test set */
    RUN_FINISHED,   /* trained the planned steps and evaluated */
    RUN_STOPPED,    /* stopped early (x, q or a signal) */
    RUN_FAILED      /* see reason */
} RunState;

#define RUNTHREAD_MAX_LAYERS 64
#define RUNTHREAD_MAX_JOB_SAMPLES (1 << 20) /* a job's live lines kept: days of them */

/* What the UI sees of the run; a plain copy. */
typedef struct RunView {
    RunState state;
    int seq;                   /* run number in this session, 1-based; 0: none */
    char reason[512];          /* why it failed */
    RunConfig cfg;             /* as started; cfg.data_dir is NULL (see data_dir) */
    int ranks;                 /* its ranks: 1 in this process, N > 1 a job */
    char data_dir[4096];       /* the directory the run reads, as the engine
                                * resolved it; "" until loaded */
    int threads;               /* compute threads in use (0 until loaded) */
    long train_images, test_images; /* after the limits (0 until loaded) */
    int have_p;
    Progress p;                /* the last progress callback's */
    int nprof;
    LayerTime prof[RUNTHREAD_MAX_LAYERS]; /* per-layer time, at most 0.5 s old */
    long prof_steps;           /* steps the profile covers */
    long prof_images;          /* images it covers */
    int have_st;
    TrainStats st;             /* after training */
    int have_ev;
    EvalResult ev;             /* after evaluation */
    double t_end;              /* CLOCK_MONOTONIC seconds when it ended */
    int have_dlive;
    DistLive live;             /* a job's last live line (ranks > 1: jobrun.h) */
} RunView;

typedef struct TuiRun {
    pthread_mutex_t mu;
    pthread_t thread;
    int joinable;          /* UI thread only */
    Engine *engine;        /* under mu */
    CounterSet *cs;        /* under mu: the run's counters, or NULL (see cs_why) */
    char cs_why[CTR_REASON_LEN]; /* under mu: why there is no set */
    RunRecord rec;         /* the finished run's record (have_rec) */
    int have_rec;          /* under mu */
    RunView view;          /* under mu */
    char data[4096];       /* the data directory, "" for the default */
    atomic_int stop;       /* the UI asked to stop */
    atomic_int quitting;   /* ... and to skip the evaluation */
    double prof_last;      /* run thread only: when the profile was copied */
    Sample *job;           /* under mu: a job's samples, from its live lines
                            * (jobrun.c); freed by runthread_done() */
    int njob, cap_job;     /* under mu */
} TuiRun;

void runthread_init(TuiRun *r);

/*
 * Starts run number `seq` with cfg (copied) on a new thread, after joining
 * the previous run's thread and freeing its engine; with ranks > 1 the run
 * is the job of that many ranks (jobrun.h).  Returns 0, or -1 with
 * err when a run is still going or the thread cannot start.
 */
int runthread_start(TuiRun *r, const RunConfig *cfg, int ranks, int seq, char *err,
                    size_t errlen);

/* Asks the run to stop after the current step (quitting: skip evaluation
 * too).  Returns at once. */
void runthread_stop(TuiRun *r, int quitting);

/* 1 while loading, training or evaluating. */
int runthread_busy(TuiRun *r);

/* Copies the view. */
void runthread_view(TuiRun *r, RunView *out);

/* The current run's engine, or NULL (not loaded yet, or failed to load).
 * UI thread only; valid until the next runthread_start() or runthread_done(). */
Engine *runthread_engine(TuiRun *r);

/* The current run's counter set, or NULL with why (at least CTR_REASON_LEN
 * bytes) saying why not.  UI thread only; valid as runthread_engine()'s. */
CounterSet *runthread_counters(TuiRun *r, char *why);

/* The record of the run once it has ended (finished, stopped or failed
 * after loading), built by record_fill() as `cnntop run` builds its; NULL
 * before.  UI thread only; valid until the next runthread_start() or
 * runthread_done(). */
RunRecord *runthread_record(TuiRun *r);

/* Stops a run that is going (skipping its evaluation), joins the thread
 * and frees the engine. */
void runthread_done(TuiRun *r);

#endif

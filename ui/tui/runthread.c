/*
 * runthread.c: the dashboard's run thread (see runthread.h for the DESIGN).
 */
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cnntop/record_train.h"
#include "tui/counter_figs.h"
#include "tui/jobrun.h"
#include "tui/runthread.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void runthread_init(TuiRun *r)
{
    memset(r, 0, sizeof *r);
    record_init(&r->rec);
    snprintf(r->cs_why, sizeof r->cs_why, "no run is going");
    pthread_mutex_init(&r->mu, NULL);
    atomic_init(&r->stop, 0);
    atomic_init(&r->quitting, 0);
}

static void set_state(TuiRun *r, RunState s, const char *reason)
{
    pthread_mutex_lock(&r->mu);
    r->view.state = s;
    if (reason)
        snprintf(r->view.reason, sizeof r->view.reason, "%s", reason);
    if (s >= RUN_FINISHED)
        r->view.t_end = now_s();
    pthread_mutex_unlock(&r->mu);
}

/* Runs on the training thread after every step: a copy under the lock, and
 * the profile at most twice a second. */
static int on_progress(const Progress *p, void *ud)
{
    TuiRun *r = ud;
    double t = now_s();
    int copy_prof = t - r->prof_last >= 0.5 || p->step == p->steps;

    if (copy_prof)
        r->prof_last = t;
    pthread_mutex_lock(&r->mu);
    r->view.p = *p;
    r->view.have_p = 1;
    if (copy_prof) {
        r->view.nprof = engine_profile(r->engine, r->view.prof, RUNTHREAD_MAX_LAYERS);
        r->view.prof_steps = p->step;
        r->view.prof_images = p->images;
    }
    pthread_mutex_unlock(&r->mu);
    return atomic_load(&r->stop);
}

/* record_train()'s phases: the engine published under the lock as soon
 * as it exists, the figures of the training copied before the evaluation. */
static void on_phase(void *ud, RecordTrainPhase ph, Engine *e, int rep)
{
    TuiRun *r = ud;
    EngineSnapshot snap;

    (void)rep;
    if (ph == RECORD_TRAIN_EVALUATING) {
        set_state(r, RUN_EVALUATING, NULL);
        return;
    }
    if (ph != RECORD_TRAIN_CLOSING)
        engine_snapshot(e, &snap);
    pthread_mutex_lock(&r->mu);
    if (ph == RECORD_TRAIN_OPENED) {
        r->engine = e;
        r->view.threads = snap.threads;
        r->view.train_images = snap.train_images;
        r->view.test_images = snap.test_images;
        snprintf(r->view.data_dir, sizeof r->view.data_dir, "%s", snap.data_dir);
        r->view.state = RUN_TRAINING;
        r->prof_last = 0;
    } else if (ph == RECORD_TRAIN_TRAINED) {
        r->view.st = snap.train;
        r->view.have_st = 1;
        r->view.nprof = engine_profile(e, r->view.prof, RUNTHREAD_MAX_LAYERS);
        r->view.prof_steps = snap.train.steps;
        r->view.prof_images = snap.train.images;
    } else /* never for one repeat, whose engine is handed back */
        r->engine = NULL;
    pthread_mutex_unlock(&r->mu);
}

/* x stops the run (it is still evaluated), quitting skips the evaluation. */
static int on_stopping(void *ud)
{
    TuiRun *r = ud;

    return atomic_load(&r->quitting) ? 2 : atomic_load(&r->stop) ? 1 : 0;
}

/* A counter set for the run (record_train() attaches it), or why not. */
static CounterSet *make_counters(TuiRun *r)
{
    char why[CTR_REASON_LEN];
    CounterSet *cs = counter_figs_new(why, sizeof why);

    pthread_mutex_lock(&r->mu);
    r->cs = cs;
    if (!cs)
        snprintf(r->cs_why, sizeof r->cs_why, "%s", why);
    pthread_mutex_unlock(&r->mu);
    return cs;
}

static void *run_main(void *arg)
{
    TuiRun *r = arg;
    RecordTrainJob job = {.runs = 1, .progress = on_progress, .phase = on_phase,
                          .stopping = on_stopping, .ud = r};
    RecordTrainResult res;
    Calibration calib;
    Engine *e = NULL;
    char err[512];

    pthread_mutex_lock(&r->mu);
    job.cfg = r->view.cfg;
    int ranks = r->view.ranks;
    pthread_mutex_unlock(&r->mu);
    if (ranks > 1) { /* the view's fields are the run thread's to write */
        jobrun_main(r);
        return NULL;
    }
    job.cfg.data_dir = r->data[0] ? r->data : NULL;
    job.cs = make_counters(r);
    /* the peak figures of a calibration in the cache, as the export's */
    if (calibrate_load(job.cfg.threads, &calib) == 0)
        job.calib = &calib;
    int rc = record_train(&job, &r->rec, &res, &e, err, sizeof err);
    pthread_mutex_lock(&r->mu);
    r->engine = e;
    r->view.ev = res.eval;
    r->view.have_ev = res.have_eval;
    r->have_rec = res.kept;
    pthread_mutex_unlock(&r->mu);
    if (rc != 0)
        set_state(r, RUN_FAILED, err);
    else
        set_state(r, res.stopped ? RUN_STOPPED : RUN_FINISHED, NULL);
    return NULL;
}

int runthread_busy(TuiRun *r)
{
    pthread_mutex_lock(&r->mu);
    RunState s = r->view.state;
    pthread_mutex_unlock(&r->mu);
    return s == RUN_LOADING || s == RUN_TRAINING || s == RUN_EVALUATING;
}

static void reap(TuiRun *r)
{
    if (r->joinable) {
        pthread_join(r->thread, NULL);
        r->joinable = 0;
    }
    pthread_mutex_lock(&r->mu);
    Engine *e = r->engine;
    CounterSet *cs = r->cs;
    r->engine = NULL;
    r->cs = NULL;
    r->have_rec = 0;
    snprintf(r->cs_why, sizeof r->cs_why, "no run is going");
    pthread_mutex_unlock(&r->mu);
    engine_free(e); /* detaches its threads from the set: first */
    counters_free(cs);
    record_done(&r->rec);
    record_init(&r->rec);
}

int runthread_start(TuiRun *r, const RunConfig *cfg, int ranks, int seq, char *err,
                    size_t errlen)
{
    sigset_t all, old;

    if (runthread_busy(r)) {
        snprintf(err, errlen, "a run is going: stop it first (x)");
        return -1;
    }
    reap(r);
    snprintf(r->data, sizeof r->data, "%s", cfg->data_dir ? cfg->data_dir : "");
    pthread_mutex_lock(&r->mu);
    memset(&r->view, 0, sizeof r->view);
    r->view.cfg = *cfg;
    r->view.cfg.data_dir = NULL;
    r->view.ranks = ranks > 1 ? ranks : 1;
    r->view.seq = seq;
    r->njob = 0;
    r->view.state = RUN_LOADING;
    pthread_mutex_unlock(&r->mu);
    atomic_store(&r->stop, 0);
    atomic_store(&r->quitting, 0);
    /* The thread, and every engine thread it starts, inherits this mask. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&r->thread, NULL, run_main, r);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the run thread: %s", strerror(rc));
        set_state(r, RUN_FAILED, err);
        return -1;
    }
    r->joinable = 1;
    return 0;
}

void runthread_stop(TuiRun *r, int quitting)
{
    if (quitting)
        atomic_store(&r->quitting, 1);
    atomic_store(&r->stop, 1);
    pthread_mutex_lock(&r->mu);
    if (r->engine)
        engine_stop(r->engine);
    pthread_mutex_unlock(&r->mu);
}

void runthread_view(TuiRun *r, RunView *out)
{
    pthread_mutex_lock(&r->mu);
    *out = r->view;
    pthread_mutex_unlock(&r->mu);
}

Engine *runthread_engine(TuiRun *r)
{
    pthread_mutex_lock(&r->mu);
    Engine *e = r->engine;
    pthread_mutex_unlock(&r->mu);
    return e;
}

CounterSet *runthread_counters(TuiRun *r, char *why)
{
    pthread_mutex_lock(&r->mu);
    CounterSet *cs = r->cs;
    snprintf(why, CTR_REASON_LEN, "%s", r->cs_why);
    pthread_mutex_unlock(&r->mu);
    return cs;
}

RunRecord *runthread_record(TuiRun *r)
{
    pthread_mutex_lock(&r->mu);
    int ok = r->have_rec && r->view.state >= RUN_FINISHED;
    pthread_mutex_unlock(&r->mu);
    return ok ? &r->rec : NULL;
}

void runthread_done(TuiRun *r)
{
    runthread_stop(r, 1);
    reap(r);
    free(r->job);
    record_done(&r->rec);
    pthread_mutex_destroy(&r->mu);
}

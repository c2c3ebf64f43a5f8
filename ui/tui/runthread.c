/*
 * runthread.c: the dashboard's run thread (see runthread.h for the DESIGN).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tui/counter_figs.h"
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

/* The run's record, as record_fill() builds it for every front end. */
static void build_record(TuiRun *r, Engine *e, const EvalResult *ev, const char *failed)
{
    int rc = record_fill(&r->rec, e, r->cs, ev);

    if (rc == 0 && failed)
        rc = record_set_error(&r->rec, failed);
    pthread_mutex_lock(&r->mu);
    r->have_rec = rc == 0;
    pthread_mutex_unlock(&r->mu);
}

static void finish(TuiRun *r, Engine *e, int trc, const char *err)
{
    EngineSnapshot snap;
    TrainStats st;
    EvalResult ev;
    char eerr[512];

    memset(&ev, 0, sizeof ev);
    int have_ev = 0;

    engine_snapshot(e, &snap);
    st = snap.train;
    pthread_mutex_lock(&r->mu);
    r->view.st = st;
    r->view.have_st = 1;
    r->view.nprof = engine_profile(e, r->view.prof, RUNTHREAD_MAX_LAYERS);
    r->view.prof_steps = st.steps;
    r->view.prof_images = st.images;
    pthread_mutex_unlock(&r->mu);
    if (trc != 0) {
        build_record(r, e, NULL, err);
        set_state(r, RUN_FAILED, err);
        return;
    }
    /* A run stopped with x is still evaluated, so that its row in the
     * history has an accuracy; quitting skips it. */
    if (!atomic_load(&r->quitting) && st.steps > 0) {
        set_state(r, RUN_EVALUATING, NULL);
        if (engine_evaluate_final(e, &ev, eerr, sizeof eerr) == 0)
            have_ev = 1;
    }
    pthread_mutex_lock(&r->mu);
    r->view.ev = ev;
    r->view.have_ev = have_ev;
    pthread_mutex_unlock(&r->mu);
    build_record(r, e, have_ev ? &ev : NULL, NULL);
    set_state(r, st.stopped || atomic_load(&r->stop) ? RUN_STOPPED : RUN_FINISHED, NULL);
}

/* A counter set for the run, attached the engine's way; or why not. */
static void attach_counters(TuiRun *r, Engine *e)
{
    char why[CTR_REASON_LEN];
    CounterSet *cs = counter_figs_new(why, sizeof why);

    if (cs)
        engine_set_counters(e, cs);
    pthread_mutex_lock(&r->mu);
    r->cs = cs;
    if (!cs)
        snprintf(r->cs_why, sizeof r->cs_why, "%s", why);
    pthread_mutex_unlock(&r->mu);
}

static void *run_main(void *arg)
{
    TuiRun *r = arg;
    Engine *e = NULL;
    RunConfig cfg;
    char err[512];

    pthread_mutex_lock(&r->mu);
    cfg = r->view.cfg;
    pthread_mutex_unlock(&r->mu);
    cfg.data_dir = r->data[0] ? r->data : NULL;
    cfg.eval_epochs = 1; /* as `cnntop run`: the test accuracy at each epoch's end */
    if (engine_new(&e, &cfg, err, sizeof err) != 0) {
        set_state(r, RUN_FAILED, err);
        return NULL;
    }
    EngineSnapshot snap;
    engine_snapshot(e, &snap);
    pthread_mutex_lock(&r->mu);
    r->engine = e;
    r->view.threads = snap.threads;
    r->view.train_images = snap.train_images;
    r->view.test_images = snap.test_images;
    snprintf(r->view.data_dir, sizeof r->view.data_dir, "%s", snap.data_dir);
    r->view.state = RUN_TRAINING;
    pthread_mutex_unlock(&r->mu);
    attach_counters(r, e);
    r->prof_last = 0;
    /* engine_train() clears the engine's stop flag as it starts, so a stop
     * asked for before this point is honoured here and by on_progress(). */
    int trc = atomic_load(&r->stop) ? 0 : engine_train(e, on_progress, r, err, sizeof err);
    finish(r, e, trc, err);
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

int runthread_start(TuiRun *r, const RunConfig *cfg, int seq, char *err, size_t errlen)
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
    r->view.seq = seq;
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
    record_done(&r->rec);
    pthread_mutex_destroy(&r->mu);
}

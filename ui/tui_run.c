/*
 * tui_run.c: the dashboard's run thread (see tui_run.h for the DESIGN).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tui_counters.h"
#include "tui_run.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tuirun_init(TuiRun *r)
{
    memset(r, 0, sizeof *r);
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
        r->view.nprof = engine_profile(r->engine, r->view.prof, TUIRUN_MAX_LAYERS);
        r->view.prof_steps = p->step;
        r->view.prof_images = p->images;
    }
    pthread_mutex_unlock(&r->mu);
    return atomic_load(&r->stop);
}

static void finish(TuiRun *r, Engine *e, int trc, const char *err)
{
    TrainStats st;
    EvalResult ev;
    char eerr[512];

    memset(&ev, 0, sizeof ev);
    int have_ev = 0;

    engine_stats(e, &st);
    pthread_mutex_lock(&r->mu);
    r->view.st = st;
    r->view.have_st = 1;
    r->view.nprof = engine_profile(e, r->view.prof, TUIRUN_MAX_LAYERS);
    r->view.prof_steps = st.steps;
    r->view.prof_images = st.images;
    pthread_mutex_unlock(&r->mu);
    if (trc != 0) {
        set_state(r, RUN_FAILED, err);
        return;
    }
    /* A run stopped with x is still evaluated, so that its row in the
     * history has an accuracy; quitting skips it. */
    if (!atomic_load(&r->quitting) && st.steps > 0) {
        set_state(r, RUN_EVALUATING, NULL);
        if (engine_evaluate(e, &ev, eerr, sizeof eerr) == 0)
            have_ev = 1;
    }
    pthread_mutex_lock(&r->mu);
    r->view.ev = ev;
    r->view.have_ev = have_ev;
    pthread_mutex_unlock(&r->mu);
    set_state(r, st.stopped || atomic_load(&r->stop) ? RUN_STOPPED : RUN_FINISHED, NULL);
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
    if (engine_new(&e, &cfg, err, sizeof err) != 0) {
        set_state(r, RUN_FAILED, err);
        return NULL;
    }
    pthread_mutex_lock(&r->mu);
    r->engine = e;
    r->view.threads = engine_threads(e);
    r->view.train_images = engine_train_images(e);
    r->view.test_images = engine_test_images(e);
    snprintf(r->view.data_dir, sizeof r->view.data_dir, "%s", engine_data_dir(e));
    r->view.state = RUN_TRAINING;
    pthread_mutex_unlock(&r->mu);
    tui_counters_attach(e);
    r->prof_last = 0;
    /* engine_train() clears the engine's stop flag as it starts, so a stop
     * asked for before this point is honoured here and by on_progress(). */
    int trc = atomic_load(&r->stop) ? 0 : engine_train(e, on_progress, r, err, sizeof err);
    tui_counters_detach(e);
    finish(r, e, trc, err);
    return NULL;
}

int tuirun_busy(TuiRun *r)
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
    r->engine = NULL;
    pthread_mutex_unlock(&r->mu);
    engine_free(e);
}

int tuirun_start(TuiRun *r, const RunConfig *cfg, int seq, char *err, size_t errlen)
{
    sigset_t all, old;

    if (tuirun_busy(r)) {
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

void tuirun_stop(TuiRun *r, int quitting)
{
    if (quitting)
        atomic_store(&r->quitting, 1);
    atomic_store(&r->stop, 1);
    pthread_mutex_lock(&r->mu);
    if (r->engine)
        engine_stop(r->engine);
    pthread_mutex_unlock(&r->mu);
}

void tuirun_view(TuiRun *r, RunView *out)
{
    pthread_mutex_lock(&r->mu);
    *out = r->view;
    pthread_mutex_unlock(&r->mu);
}

Engine *tuirun_engine(TuiRun *r)
{
    pthread_mutex_lock(&r->mu);
    Engine *e = r->engine;
    pthread_mutex_unlock(&r->mu);
    return e;
}

void tuirun_done(TuiRun *r)
{
    tuirun_stop(r, 1);
    reap(r);
    pthread_mutex_destroy(&r->mu);
}

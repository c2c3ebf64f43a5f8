/*
 * session.c: the session's runs: starting one with the next-run settings
 * (s, Enter, --autostart), and its row in the history when it ends.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tui/clock.h"
#include "tui/session.h"

void session_start(Tui *t)
{
    char err[512];

    if (runthread_busy(&t->run)) {
        tui_message(t, 1, "run %d is going: stop it first (x)", t->rv.seq);
        return;
    }
    settings_fix(&t->set);
    /* runthread_start() frees the last run's engine: forget it first, so that
     * nothing drawn or handled before the next poll can reach it. */
    t->engine = NULL;
    if (runthread_start(&t->run, &t->set.cfg, t->set.ranks, t->seq + 1, err, sizeof err) != 0) {
        tui_message(t, 1, "%s", err);
        return;
    }
    t->seq++;
    /* The FMA peak of this run's threads, from the cache (never measured
     * here: that would stall the dashboard for seconds). */
    t->have_calib = calibrate_load(t->set.cfg.threads, &t->calib) == 0;
    t->live_changed = 0;
    t->paused = 0;
    t->run_queue_wait = NAN;
    chart_series_clear(&t->ipc);
    chart_series_clear(&t->miss);
    memset(&t->ctr_run, 0, sizeof t->ctr_run);
    t->run_cpu0 = clock_process_cpu();
    t->run_w0 = clock_mono();
    tui_message(t, 0, "run %d: loading the data and building the model", t->seq);
}

/* The history row of the run that just ended, whatever its end. */
void session_record(Tui *t)
{
    const RunView *v = &t->rv;
    HistRow r;
    char err[512];

    memset(&r, 0, sizeof r);
    r.when = (long)time(NULL);
    r.session = 1;
    r.run = v->seq;
    r.batch = v->cfg.batch;
    r.workers = v->cfg.workers;
    r.prefetch = v->cfg.prefetch;
    r.threads = v->threads ? v->threads : v->cfg.threads;
    r.augment = v->cfg.augment;
    r.epochs = v->cfg.epochs;
    r.steps = v->cfg.steps;
    r.limit = v->cfg.limit;
    r.lr = v->cfg.lr;
    r.seed = v->cfg.seed;
    if (v->have_st) {
        r.wall = v->st.wall;
        r.images = v->st.images;
        r.steps_done = v->st.steps;
        r.ips = v->st.steps > 0 ? v->st.images_per_s : 0;
        r.loss = v->st.final_loss;
    } else {
        r.loss = NAN;
    }
    r.accuracy = v->have_ev ? v->ev.accuracy : NAN;
    snprintf(r.state, sizeof r.state, "%s",
             v->state == RUN_FINISHED ? "finished" : v->state == RUN_STOPPED ? "stopped" : "failed");
    if (v->state == RUN_FAILED)
        snprintf(r.why, sizeof r.why, "%.159s", v->reason);
    r.live = t->live_changed;
    hist_add(&t->hist, &r);
    t->hist_sel = t->hist.n - 1;
    if (t->o->history && hist_save(&t->hist, t->o->history, err, sizeof err) != 0)
        tui_message(t, 1, "history: %s", err);
}

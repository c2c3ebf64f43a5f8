/*
 * poll.c: each tick (10 Hz), what the screen shows is copied here from
 * the run thread and the engine: the run's view, the live figures, new
 * samples and segments, the counters, the CPU use; and a run that ended
 * gets its history row.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/clock.h"
#include "tui/jobrun.h"
#include "tui/poll.h"
#include "tui/session.h"

/* Room for total samples in the copies. */
static void samples_room(Tui *t, long total)
{
    if (total > t->cap_samples) {
        int cap = (int)total + 1024;
        Sample *s = realloc(t->samples, sizeof *s * (size_t)cap);
        double *tb = realloc(t->tbuf, sizeof(double) * (size_t)cap);
        double *vb = tb ? realloc(t->vbuf, sizeof(double) * (size_t)cap) : NULL;
        if (s)
            t->samples = s;
        if (tb)
            t->tbuf = tb;
        if (vb)
            t->vbuf = vb;
        if (!s || !tb || !vb) {
            endwin();
            fprintf(stderr, "cnntop: out of memory for %ld samples\n", total);
            abort();
        }
        t->cap_samples = cap;
    }
}

static void poll_samples(Tui *t, Engine *e, const EngineSnapshot *snap)
{
    unsigned gen = snap->samples_generation;
    long total = snap->samples_total;

    /* By run number, not by engine address: a new engine may be allocated
     * where the freed one was. */
    if (t->rv.seq != t->samples_seq || gen != t->samples_gen || total < t->nsamples) {
        t->nsamples = 0;
        t->samples_seq = t->rv.seq;
        t->samples_gen = gen;
    }
    samples_room(t, total);
    if (total > t->nsamples)
        t->nsamples += engine_samples(e, t->samples + t->nsamples, (int)(total - t->nsamples),
                                      t->nsamples);
}

/* A job of several ranks has no engine here: its samples are the run
 * thread's, from the job's live lines; its segments its record's. */
static void poll_job(Tui *t)
{
    if (t->samples_seq != t->rv.seq) {
        t->nsamples = 0;
        t->nsegs = 0;
        t->samples_seq = t->rv.seq;
    }
    for (int n = 1; n > 0;) {
        samples_room(t, t->nsamples + 256);
        n = jobrun_samples(&t->run, t->samples + t->nsamples, t->nsamples,
                                  t->cap_samples - t->nsamples);
        t->nsamples += n;
    }
    const RunRecord *rec = runthread_record(&t->run); /* its segments once it ended */
    if (rec && t->nsegs == 0) {
        t->nsegs = rec->n_segments < CN_MAX_SEGMENTS ? (int)rec->n_segments : CN_MAX_SEGMENTS;
        memcpy(t->segs, rec->segments, (size_t)t->nsegs * sizeof *t->segs);
    }
}

/* Each second: the process's CPU use, the UI thread's, and the run's
 * run-queue wait (from its counter set cs, NULL: none). */
static void poll_cpu(Tui *t, CounterSet *cs)
{
    double w = t->now, dt = w - t->cpu_w_last;

    if (dt < 1.0)
        return;
    double p = clock_process_cpu(), u = clock_thread_cpu();
    if (t->cpu_w_last > 0) {
        t->cpu_util = (p - t->cpu_t_last) / dt;
        t->ui_share = (u - t->ui_t_last) / dt;
    }
    t->cpu_t_last = p;
    t->ui_t_last = u;
    t->cpu_w_last = w;
    if (t->rv.state == RUN_TRAINING)
        t->run_queue_wait = cs ? counters_wait_share(cs) : NAN;
}

void poll_tick(Tui *t)
{
    t->now = clock_mono();
    runthread_view(&t->run, &t->rv);
    Engine *e = runthread_engine(&t->run);
    t->engine = e;
    t->have_live = 0;
    if (e) {
        EngineSnapshot snap;
        engine_snapshot(e, &snap);
        t->live = snap.live;
        t->have_live = 1;
        poll_samples(t, e, &snap);
        t->nsegs = snap.nsegments;
        memcpy(t->segs, snap.seg, (size_t)snap.nsegments * sizeof *snap.seg);
    } else if (t->rv.ranks > 1) {
        poll_job(t);
    } else if (t->samples_seq != t->rv.seq) {
        /* A run loading or failed to load: none of the last run's figures. */
        t->nsamples = 0;
        t->nsegs = 0;
        t->samples_seq = t->rv.seq;
    }
    char why[CTR_REASON_LEN];
    CounterSet *cs = runthread_counters(&t->run, why);
    int fresh = e && t->samples_seq == t->rv.seq && t->nsamples > 0;
    counter_figs_read(&t->ctr, cs, fresh ? &t->samples[t->nsamples - 1] : NULL, why);
    if (t->rv.state == RUN_TRAINING && t->rv.have_p) {
        double ts = t->rv.p.elapsed;
        chart_series_add(&t->ipc, ts, t->ctr.ipc_ok ? t->ctr.ipc : NAN);
        chart_series_add(&t->miss, ts, t->ctr.miss_ok ? t->ctr.miss_rate : NAN);
        t->ctr_run = t->ctr; /* kept for the screen once the run ends */
    }
    poll_cpu(t, cs);
    const RunRecord *rec = runthread_record(&t->run); /* the run's figure once it ended */
    if (rec)
        t->run_queue_wait = rec->run_queue_wait;
    if (t->rv.seq > t->recorded_seq && t->rv.state >= RUN_FINISHED) {
        t->recorded_seq = t->rv.seq;
        /* CPU and wall over one interval, both read now: the run's end
         * time against CPU read up to a tick later gave a run that failed
         * at once "15.50 cores" on 2. */
        double cpu = clock_process_cpu(), w = clock_mono() - t->run_w0;
        t->run_cores = w > 0 ? (cpu - t->run_cpu0) / w : NAN;
        session_record(t);
        if (t->rv.state == RUN_FAILED)
            tui_message(t, 1, "run %d failed: %s", t->rv.seq, t->rv.reason);
        else
            tui_message(t, 0, "run %d %s", t->rv.seq,
                        t->rv.state == RUN_FINISHED ? "finished" : "stopped");
    }
}

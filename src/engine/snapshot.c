/*
 * snapshot.c: what crosses back from the engine to the front ends
 * (engine.h's engine_snapshot(), engine_samples(), engine_evals(),
 * engine_profile()).
 *
 * A snapshot is one copy made under live_mu of what the trainer, the
 * sampler and the live setters published there (state.h says who writes
 * what), plus the figures fixed by engine_new().  The trainer's own fields
 * (e->stats, epochs_done, epoch_pos) are not read here: the trainer copies
 * them into e->pub under the lock after each step (snapshot_publish()).
 * The profile is the one figure read without the lock, on the trainer's
 * thread or between runs (engine.h says so).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/state.h"

_Static_assert(PROF_NOPS <= CN_MAX_LAYERS, "CN_MAX_LAYERS holds every profiled op");

void snapshot_publish(Engine *e)
{
    e->pub.stats = e->stats;
    e->pub.epochs_done = e->epochs_done;
    e->pub.epoch_pos = e->epoch_pos;
    e->pub.nevals = e->nevals;
}

void engine_snapshot(Engine *e, EngineSnapshot *out)
{
    LoaderStats ls;

    loader_stats(e->loader, &ls); /* before live_mu: it takes the loader's lock */
    snprintf(out->data_dir, sizeof out->data_dir, "%s", e->data_dir);
    out->train_images = e->n_train;
    out->test_images = e->n_test;
    out->threads = e->threads;
    pthread_mutex_lock(&e->live_mu);
    if (!e->live.running) { /* between runs: the loader and batch as they are now */
        live_put_loader(&e->live, &ls);
        int pending = atomic_load(&e->pending_batch);
        e->live.batch = pending ? pending : e->cfg.batch;
    }
    out->cfg = e->cfg;
    out->epochs_done = e->pub.epochs_done;
    out->epoch_images = e->pub.epoch_pos;
    out->train = e->pub.stats;
    out->live = e->live;
    out->nsegments = e->nseg;
    memcpy(out->seg, e->seg, (size_t)e->nseg * sizeof *e->seg);
    out->samples_total = e->hist.n;
    out->samples_generation = e->hist.gen;
    out->nevals = e->pub.nevals;
    pthread_mutex_unlock(&e->live_mu);
    out->cfg.data_dir = NULL;
}

int engine_samples(Engine *e, Sample *out, int max, long from)
{
    int n = 0;

    pthread_mutex_lock(&e->live_mu);
    for (long i = from < 0 ? 0 : from; i < e->hist.n && n < max; i++)
        out[n++] = e->hist.s[i];
    pthread_mutex_unlock(&e->live_mu);
    return n;
}

int engine_evals(Engine *e, EvalPoint *out, int max)
{
    int n = 0;

    pthread_mutex_lock(&e->live_mu);
    for (; n < e->pub.nevals && n < max; n++)
        out[n] = e->evals[n];
    pthread_mutex_unlock(&e->live_mu);
    return n;
}

/* A layer's IPC and miss rate from its counts (NAN: not counted). */
static void layer_ratios(const Engine *e, LayerTime *lt)
{
    CounterDerived der;

    lt->ipc = lt->miss_rate = NAN;
    if (!e->prof.cs || lt->ncounts == 0)
        return;
    counters_derive_counts(e->prof.cs, lt->counts, lt->ncounts, 0.0, &der);
    lt->ipc = counters_figure_value(&der.ipc);
    lt->miss_rate = counters_figure_value(&der.miss_rate);
}

int engine_profile(const Engine *e, LayerTime *out, int max)
{
    int n = 0;
    /* A rank's ops ran on its own share of the images. */
    const double images = (double)(e->dist.on ? e->dist.images : e->stats.images);

    for (int op = 0; op < PROF_NOPS && n < max; op++, n++) {
        snprintf(out[n].name, sizeof out[n].name, "%s", profile_name((ProfOp)op));
        out[n].seconds = e->prof.seconds[op];
        out[n].calls = e->prof.calls[op];
        out[n].flops = model_op_flops((ProfOp)op) * images;
        out[n].flops_executed = model_op_flops_executed((ProfOp)op) * images;
        out[n].bytes = model_op_bytes_image((ProfOp)op) * images +
                       model_op_bytes_step((ProfOp)op) * (double)e->prof.calls[op];
        out[n].ncounts = e->prof.cs ? e->prof.nev : 0;
        for (int i = 0; i < CN_LAYER_EVENTS; i++)
            out[n].counts[i] = i < out[n].ncounts && e->prof.ctr_ok[i] ? e->prof.ctr[op][i] : NAN;
        layer_ratios(e, &out[n]);
    }
    return n;
}

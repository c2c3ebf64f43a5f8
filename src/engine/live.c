/*
 * live.c: live settings and the run's segments (engine.h's engine_set_*).
 *
 * A setter may be called from any thread while engine_train() runs.
 * Workers and prefetch go straight to the loader, which locks itself; the
 * batch size is stored in the atomic pending_batch and applied by the
 * trainer between steps (live_apply_batch).  Each change starts a segment,
 * under live_mu.  Loader figures are read (loader_stats(), the loader's
 * lock) before live_mu is taken, so live_mu never nests another lock.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/settings.h"
#include "engine/state.h"
#include "util/err.h"

/* --- segments -------------------------------------------------------- */

void live_segment_begin(Engine *e, long first_step, double t)
{
    if (e->nseg > 0) {
        Segment *g = &e->seg[e->nseg - 1];
        if (g->steps == 0) { /* nothing ran in it: reuse it */
            g->batch = e->live.batch;
            g->workers = e->live.workers;
            g->prefetch = e->live.prefetch;
            return;
        }
        g->wall = t - g->t0;
    }
    if (e->nseg == CN_MAX_SEGMENTS) /* keep the last one open */
        return;
    Segment *g = &e->seg[e->nseg++];
    memset(g, 0, sizeof *g);
    g->first_step = first_step;
    g->t0 = t;
    g->batch = e->live.batch;
    g->workers = e->live.workers;
    g->prefetch = e->live.prefetch;
    g->warmup_steps = SEGMENT_WARMUP;
    e->seg_sum = e->seg_sumsq = 0.0;
    e->seg_n = 0;
    e->live.segment = e->nseg - 1;
}

void live_segment_step(Engine *e, int nb, double dt, double t)
{
    Segment *g = &e->seg[e->nseg - 1];

    g->steps++;
    g->images += nb;
    g->wall = t - g->t0;
    if (g->steps > g->warmup_steps && dt > 0) {
        double r = nb / dt;
        e->seg_sum += r;
        e->seg_sumsq += r * r;
        e->seg_n++;
        g->images_per_s = e->seg_sum / (double)e->seg_n;
        double var = e->seg_n > 1 ? (e->seg_sumsq - e->seg_sum * g->images_per_s) /
                                        (double)(e->seg_n - 1)
                                  : 0.0;
        g->images_per_s_sd = var > 0 ? sqrt(var) : 0.0;
    }
}

/* --- the loader's part of the live figures --------------------------- */

void live_put_loader(LiveStats *L, const LoaderStats *ls)
{
    L->workers = ls->workers;
    L->prefetch = ls->prefetch;
    L->queue_filled = ls->ready;
    L->queue_cap = ls->workers ? ls->prefetch : 0;
    L->load_prepare = ls->prepare + ls->inline_prepare;
    L->load_blocked = ls->blocked;
    L->load_idle = ls->idle;
    L->load_batches = ls->batches;
    /* What the loader alone could deliver: samples per second of preparing
     * time, times the threads preparing (the trainer itself when W = 0). */
    double per = L->load_prepare > 0 ? (double)ls->samples_prepared / L->load_prepare : 0.0;
    L->load_samples_per_s = per * (ls->workers ? ls->workers : 1);
}

/* --- live settings --------------------------------------------------- */

/* Applies a pending batch size between steps: grows the arena if needed
 * and moves the loader to it.  A size that cannot be had is refused and
 * the run goes on at the old one. */
void live_apply_batch(Engine *e)
{
    int b = atomic_exchange(&e->pending_batch, 0);

    if (b == 0 || b == e->cfg.batch)
        return;
    int cap = engine_arena_batch(e, b);
    if (cap > e->cap) {
        Acts grown;
        uint32_t *idx = malloc((size_t)cap * sizeof *idx);
        if (!idx || engine_check_memory(cap, e->threads, NULL, 0) != 0 ||
            acts_init(&grown, cap, e->threads) != 0) {
            free(idx);
            return;
        }
        acts_done(&e->acts);
        e->acts = grown;
        e->cap = cap;
        free(e->eval_idx);
        e->eval_idx = idx;
    }
    loader_set_batch(e->loader, b);
    LoaderStats ls;
    loader_stats(e->loader, &ls);
    pthread_mutex_lock(&e->live_mu);
    e->cfg.batch = b; /* the trainer's own field, written under the lock for snapshots */
    e->live.batch = b;
    live_put_loader(&e->live, &ls);
    live_segment_begin(e, e->stats.steps, timer_now() - e->t0);
    pthread_mutex_unlock(&e->live_mu);
}

/* After a loader setting changed: *setting <- value (a field of e->cfg,
 * or NULL: none), the live figures, and a new segment. */
static void live_changed(Engine *e, int *setting, int value)
{
    LoaderStats ls;

    loader_stats(e->loader, &ls);
    pthread_mutex_lock(&e->live_mu);
    if (setting)
        *setting = value;
    live_put_loader(&e->live, &ls);
    if (e->live.running) /* e->live.p.step: the steps done, as published */
        live_segment_begin(e, e->live.p.step, timer_now() - e->t0);
    pthread_mutex_unlock(&e->live_mu);
}

/* A live value checked against its row of the settings table, as
 * engine_new() checks the config: one range and one message for both. */
static int check_live(const char *key, int value, char *err, size_t errlen)
{
    const Setting *s = settings_find(settings_run, key);
    RunConfig c; /* a holder for the one field checked (e->cfg is the trainer's) */

    engine_config_default(&c);

    if (!s || s->type != SETTING_INT)
        return cn_fail(err, errlen, -CN_ESTATE, "internal error: no int setting '%s'", key);
    memcpy((char *)&c + s->offset, &value, sizeof value);
    return settings_check(s, &c, err, errlen);
}

int engine_set_workers(Engine *e, int workers, char *err, size_t errlen)
{
    int rc = check_live("workers", workers, err, errlen);
    if (rc != 0)
        return rc;
    if (loader_set_workers(e->loader, workers) != 0) {
        live_changed(e, NULL, 0);
        return cn_fail(err, errlen, -CN_ENOMEM, "cannot start %d loader threads", workers);
    }
    live_changed(e, &e->cfg.workers, workers);
    return 0;
}

int engine_set_prefetch(Engine *e, int prefetch, char *err, size_t errlen)
{
    int rc = check_live("prefetch", prefetch, err, errlen);
    if (rc != 0)
        return rc;
    loader_set_prefetch(e->loader, prefetch);
    live_changed(e, &e->cfg.prefetch, prefetch);
    return 0;
}

int engine_set_batch(Engine *e, int batch, char *err, size_t errlen)
{
    int rc = check_live("batch", batch, err, errlen);
    if (rc != 0)
        return rc;
    if (engine_check_memory(batch, e->threads, err, errlen) != 0)
        return -CN_ENOMEM;
    atomic_store(&e->pending_batch, batch);
    return 0;
}

/*
 * sampler.c: the sampler thread, which takes a Sample of the run about 10
 * times a second while engine_train() runs (engine.h's Sample).
 *
 * DESIGN
 * Each round has three parts, in the manner of redis's bio.c, which unlocks
 * before it works:
 *   1. under live_mu: wait SAMPLE_INTERVAL (or until sampler_stop()), then
 *      copy what the trainer published (e->live) and the run's clock;
 *   2. without it: read the loader's figures (the loader's own lock) and
 *      the trainer role's counters (perf read()s, the counter set's lock),
 *      and build the sample;
 *   3. under live_mu again, briefly: publish the loader figures into
 *      e->live, append the sample to the history, update images/s now.
 * So the trainer, which takes live_mu after every step, never waits behind
 * a system call of the sampler's.  During an evaluation mid-run
 * (e->evaluating) no sample is taken: the training clock is stopped.
 * The figures of the previous sample (SamplerPrev) are the thread's own.
 *
 * When the run ends (sampler_stop()) the thread takes a closing sample of
 * the steps since the last one, so that every run that trained has one
 * and the last sample's counts are the run's, however short the run is
 * against the interval: a 10-step run of 0.1 s got one sample or none,
 * by chance.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "engine/state.h"

enum { SAMPLER_TAKE, SAMPLER_SKIP, SAMPLER_QUIT };

/* The previous sample's figures, for the rates over an interval. */
typedef struct SamplerPrev {
    long images;
    double t, wait, busy;
    double ctr[CTR_MAX_EVENTS]; /* the trainer role's counts; NAN: not counted */
} SamplerPrev;

/* IPC and the cache-miss rate of the trainer role since the previous
 * reading `last` (values; NAN where not counted, which they are at first),
 * which this updates, with the cycles and references they divide by in w.
 * Reads the counters: call without live_mu. */
static void interval_ratios(CounterSet *cs, double *last, Sample *s, HistWeight *w)
{
    CounterReading r[CTR_MAX_EVENTS];
    double d[CTR_MAX_EVENTS];
    CounterDerived der;
    int n = counters_read(cs, CN_ROLE_TRAIN, r, CTR_MAX_EVENTS);

    for (int i = 0; i < n; i++) {
        double now = r[i].status == CTR_OK ? r[i].value : NAN;
        d[i] = now - last[i]; /* NAN unless both counted */
        last[i] = now;
        if (r[i].kind == CTR_KIND_CYCLES && isfinite(d[i]))
            w->cycles = d[i];
        if (r[i].kind == CTR_KIND_CACHE_REFS && isfinite(d[i]))
            w->refs = d[i];
    }
    counters_derive_counts(cs, d, n, 0.0, &der);
    s->ipc = (float)counters_figure_value(&der.ipc);
    s->miss_rate = (float)counters_figure_value(&der.miss_rate);
}

/* Waits for the next round; on SAMPLER_TAKE and SAMPLER_QUIT, *L is a copy
 * of e->live and *t the seconds of training so far. */
static int sampler_wait(Engine *e, LiveStats *L, double *t)
{
    struct timespec ts;
    int rc = SAMPLER_TAKE;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)(SAMPLE_INTERVAL * 1e9);
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&e->live_mu);
    while (!e->sampler_quit && pthread_cond_timedwait(&e->sampler_cv, &e->live_mu, &ts) == 0)
        ; /* woken early without quit: wait on to the interval's end */
    if (e->sampler_quit)
        rc = SAMPLER_QUIT;
    else if (e->evaluating)
        rc = SAMPLER_SKIP;
    if (rc != SAMPLER_SKIP) {
        *L = e->live;
        *t = timer_now() - e->t0;
    }
    pthread_mutex_unlock(&e->live_mu);
    return rc;
}

/* The sample at t from the trainer's published figures L (with the
 * loader's put in) and the previous sample's, which this updates; w gets
 * the step time its data-wait share divides by. */
static void sample_make(const LiveStats *L, double t, SamplerPrev *prev, Sample *s, HistWeight *w)
{
    double wait = L->split.data,
           busy = L->split.data + L->split.forward + L->split.backward + L->split.optimizer;

    *s = (Sample){.t = t, .dt = t - prev->t, .step = L->p.step, .images = L->p.images,
                  .loss = L->p.loss, .workers = L->workers, .batch = L->batch,
                  .segment = L->segment};
    *w = (HistWeight){.busy = busy > prev->busy ? busy - prev->busy : 0.0};
    s->images_per_s = t > prev->t ? (float)((double)(L->p.images - prev->images) / (t - prev->t))
                                  : 0.0f;
    s->queue_fill = L->queue_cap ? (float)L->queue_filled / (float)L->queue_cap : -1.0f;
    s->data_wait_share = busy > prev->busy ? (float)((wait - prev->wait) / (busy - prev->busy))
                                           : 0.0f;
    s->ipc = s->miss_rate = NAN;
    prev->t = t;
    prev->images = L->p.images;
    prev->wait = wait;
    prev->busy = busy;
}

/* Publishes the round: the loader figures, the sample, images/s now. */
static void sampler_publish(Engine *e, const LoaderStats *ls, const Sample *s,
                            const HistWeight *w)
{
    History *h = &e->hist;

    pthread_mutex_lock(&e->live_mu);
    live_put_loader(&e->live, ls);
    history_add(h, s, w);
    /* images/s now: over the last second of samples */
    int n = h->n, k = n - 1;
    while (k > 0 && s->t - h->s[k - 1].t <= 1.0)
        k--;
    if (k > 0 && k < n - 1 && s->t > h->s[k - 1].t)
        e->live.images_per_s_now = (double)(s->images - h->s[k - 1].images) /
                                   (s->t - h->s[k - 1].t);
    else
        e->live.images_per_s_now = s->images_per_s;
    pthread_mutex_unlock(&e->live_mu);
}

/* Takes and publishes the sample at t of the trainer's figures L. */
static void sampler_take(Engine *e, LiveStats *L, double t, SamplerPrev *prev)
{
    LoaderStats ls;
    Sample s;
    HistWeight w;

    loader_stats(e->loader, &ls);
    live_put_loader(L, &ls);
    sample_make(L, t, prev, &s, &w);
    if (e->cs) /* set between runs only: read without live_mu */
        interval_ratios(e->cs, prev->ctr, &s, &w);
    sampler_publish(e, &ls, &s, &w);
}

static void *sampler_main(void *arg)
{
    Engine *e = arg;
    SamplerPrev prev = {0};
    int rc;

    for (int i = 0; i < CTR_MAX_EVENTS; i++)
        prev.ctr[i] = NAN;
    if (e->cs) { /* the counts at the start, so that the first sample has its IPC too */
        Sample s0 = {0};
        HistWeight w0;
        interval_ratios(e->cs, prev.ctr, &s0, &w0);
    }
    pthread_setname_np(pthread_self(), "cnntop-sample");
    for (;;) {
        LiveStats L;
        double t = 0.0;
        if ((rc = sampler_wait(e, &L, &t)) == SAMPLER_SKIP)
            continue;
        /* The closing sample: only when steps ran since the last one. */
        if (rc == SAMPLER_TAKE || (L.p.images > prev.images && t > prev.t))
            sampler_take(e, &L, t, &prev);
        if (rc == SAMPLER_QUIT)
            break;
    }
    return NULL;
}

void sampler_start(Engine *e)
{
    sigset_t all, old;

    e->sampler_quit = 0;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    e->sampler_on = pthread_create(&e->sampler, NULL, sampler_main, e) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void sampler_stop(Engine *e)
{
    if (!e->sampler_on)
        return;
    pthread_mutex_lock(&e->live_mu);
    e->sampler_quit = 1;
    pthread_cond_signal(&e->sampler_cv);
    pthread_mutex_unlock(&e->live_mu);
    pthread_join(e->sampler, NULL);
    e->sampler_on = 0;
}

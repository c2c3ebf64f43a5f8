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
 * which this updates.  Reads the counters: call without live_mu. */
static void interval_ratios(CounterSet *cs, double *last, Sample *s)
{
    CounterReading r[CTR_MAX_EVENTS];
    double d[CTR_MAX_EVENTS];
    CounterDerived der;
    int n = counters_read(cs, CN_ROLE_TRAIN, r, CTR_MAX_EVENTS);

    for (int i = 0; i < n; i++) {
        double now = r[i].status == CTR_OK ? r[i].value : NAN;
        d[i] = now - last[i]; /* NAN unless both counted */
        last[i] = now;
    }
    counters_derive_counts(cs, d, n, 0.0, &der);
    s->ipc = (float)counters_figure_value(&der.ipc);
    s->miss_rate = (float)counters_figure_value(&der.miss_rate);
}

/* Waits for the next round; on SAMPLER_TAKE, *L is a copy of e->live and
 * *t the seconds of training so far. */
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
    else {
        *L = e->live;
        *t = timer_now() - e->t0;
    }
    pthread_mutex_unlock(&e->live_mu);
    return rc;
}

/* The sample at t from the trainer's published figures L (with the
 * loader's put in) and the previous sample's, which this updates. */
static void sample_make(const LiveStats *L, double t, SamplerPrev *prev, Sample *s)
{
    double wait = L->split.data,
           busy = L->split.data + L->split.forward + L->split.backward + L->split.optimizer;

    *s = (Sample){.t = t, .step = L->p.step, .images = L->p.images, .loss = L->p.loss,
                  .workers = L->workers, .batch = L->batch, .segment = L->segment};
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
static void sampler_publish(Engine *e, const LoaderStats *ls, const Sample *s)
{
    History *h = &e->hist;

    pthread_mutex_lock(&e->live_mu);
    live_put_loader(&e->live, ls);
    history_add(h, s);
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

static void *sampler_main(void *arg)
{
    Engine *e = arg;
    SamplerPrev prev = {0};
    int rc;

    for (int i = 0; i < CTR_MAX_EVENTS; i++)
        prev.ctr[i] = NAN;
    pthread_setname_np(pthread_self(), "cnntop-sample");
    for (;;) {
        LiveStats L;
        LoaderStats ls;
        Sample s;
        double t = 0.0;
        if ((rc = sampler_wait(e, &L, &t)) == SAMPLER_QUIT)
            break;
        if (rc == SAMPLER_SKIP)
            continue;
        loader_stats(e->loader, &ls);
        live_put_loader(&L, &ls);
        sample_make(&L, t, &prev, &s);
        if (e->cs) /* set between runs only: read without live_mu */
            interval_ratios(e->cs, prev.ctr, &s);
        sampler_publish(e, &ls, &s);
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

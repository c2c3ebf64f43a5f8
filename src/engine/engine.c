/*
 * engine.c: the public engine API (include/cnntop/engine.h).
 *
 * DESIGN
 * An Engine is driven by one thread at a time (the front end's, or a run
 * thread's): engine_new/train/evaluate/save/load.  Other threads may call
 * the live functions at any moment: engine_stop() only stores to the atomic
 * `stop` flag (safe in a signal handler); engine_set_workers/prefetch go
 * straight to the loader, which has its own lock; engine_set_batch stores
 * to the atomic `pending_batch`, which the trainer applies between steps;
 * engine_live/samples/segments copy state under `live_mu`.  The compute
 * pool's workers touch the model and the arena only inside model_*() calls
 * made by the trainer.
 *
 * While engine_train() runs, a sampler thread wakes every 0.1 s, reads the
 * trainer's counters (published under live_mu after every step) and the
 * loader's, and appends a Sample to the run's history.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "nn/blaskernel.h"
#include "engine/checkpoint.h"
#include "cnntop/counters.h"
#include "util/err.h"
#include "cnntop/fileio.h"
#include "cnntop/settings.h"
#include "nn/gemm.h"
#include "engine/history.h"
#include "data/idx.h"
#include "data/loader.h"
#include "nn/loss_xent.h"
#include "nn/model.h"
#include "util/rng.h"
#include "prof/sysinfo.h"
#include "prof/threadreg.h"
#include "prof/trace.h"

#define SAMPLE_INTERVAL 0.1   /* seconds between samples */
#define SEGMENT_WARMUP 3      /* steps of a segment left out of its mean */

struct Engine {
    RunConfig cfg;
    char data_dir[4096];
    Dataset ds;
    long n_train;        /* training images after --limit */
    long n_test;         /* test images after --test-limit */
    int threads;
    int cap;             /* arena capacity: batch, capped by the data set's size */
    Params ps;
    Acts acts;
    Workpool *pool;
    Profile prof;
    float lut[256];
    uint32_t *eval_idx;  /* (batch) test indices of one evaluation batch */
    long epochs_done;    /* epochs completed (continues across checkpoints) */
    long epoch_pos;      /* images consumed of the current epoch */
    atomic_int stop;
    atomic_int pending_batch;  /* a batch size to apply at the next step, 0: none */
    TrainStats stats;
    ThreadReg reg;
    Loader *loader;
    /* Published by the trainer after each step, read by anyone: under live_mu. */
    pthread_mutex_t live_mu;
    LiveStats live;
    double t0;                 /* timer_now() when training started */
    History hist;
    Segment seg[CN_MAX_SEGMENTS];
    int nseg;
    double seg_sum, seg_sumsq; /* per-step images/s after warm-up, this segment */
    long seg_n;
    /* the sampler */
    pthread_t sampler;
    int sampler_on;
    int sampler_quit;          /* under live_mu */
    int evaluating;            /* under live_mu: an evaluation mid-run, clock stopped */
    pthread_cond_t sampler_cv;
    Trace *trace;              /* --trace, or NULL */
    CounterSet *cs;            /* engine_set_counters(), or NULL */
    EvalPoint *evals;          /* (CN_MAX_EVALS) of the last run */
    int nevals;
    char trace_path[4096];
};

void engine_config_default(RunConfig *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    settings_set_defaults(settings_run, cfg);
}

double engine_flops_per_image(void)
{
    return model_flops_forward() + model_flops_backward();
}

double engine_flops_executed_per_image(void)
{
    return model_flops_executed();
}

size_t engine_memory_estimate(int batch, int threads)
{
    size_t params = 4 * params_count() * sizeof(float);
    return acts_bytes(batch, threads) + params;
}

/* Every setting within the range of its row in settings_run. */
static int check_config(const RunConfig *c, char *err, size_t errlen)
{
    return settings_check_config(c, err, errlen);
}

/* Address space OpenBLAS maps per thread that calls it, at its first
 * call (measured with 0.3.21: 128 MiB).  It cannot report failing to get
 * it (it retries forever), so the engine counts it before it starts. */
#define BLAS_BUFFER_BYTES ((size_t)128 << 20)

/* Bytes of address space in use now, from /proc/self/statm. */
static size_t vm_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;

    if (f) {
        if (fscanf(f, "%lu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Refuses a batch whose memory the machine, or the process's address-space
 * limit (ulimit -v), cannot give: said before anything is allocated. */
static int check_memory(int batch, int threads, char *err, size_t errlen)
{
    size_t need = engine_memory_estimate(batch, threads), ram = sysinfo_ram_bytes();
    struct rlimit rl;

    if (ram && need > ram / 10 * 9)
        return cn_fail(err, errlen, -CN_ENOMEM,
                       "batch %d needs %.1f GiB of memory, the machine has %.1f GiB",
                       batch, need / 1073741824.0, ram / 1073741824.0);
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        size_t used = vm_bytes(), blas = (size_t)threads * BLAS_BUFFER_BYTES;
        if (used + need + blas > rl.rlim_cur)
            return cn_fail(err, errlen, -CN_ENOMEM,
                           "batch %d needs %.0f MiB of address space with %d threads "
                           "(%.0f MiB arena, %.0f MiB OpenBLAS buffers) and the limit "
                           "(ulimit -v) leaves %.0f MiB: use a smaller batch or fewer threads",
                           batch, (need + blas) / 1048576.0, threads, need / 1048576.0,
                           blas / 1048576.0,
                           rl.rlim_cur > used ? (rl.rlim_cur - used) / 1048576.0 : 0.0);
    }
    return 0;
}

/* The arena's batch capacity for batch size b: no step ever holds more
 * images than the larger split has. */
static int arena_batch(const Engine *e, int b)
{
    long most = e->n_train > e->n_test ? e->n_train : e->n_test;
    return b < most ? b : (int)most;
}

static int engine_alloc(Engine *e, char *err, size_t errlen)
{
    size_t need = engine_memory_estimate(e->cap, e->threads);
    /* A test-only engine never trains: its loader, idle, has the test split. */
    int t = e->cfg.test_only;
    LoaderSrc src = {.images = t ? e->ds.test_images : e->ds.train_images,
                     .labels = t ? e->ds.test_labels : e->ds.train_labels,
                     .n = t ? e->n_test : e->n_train, .rows = e->ds.rows, .cols = e->ds.cols,
                     .seed = e->cfg.seed, .augment = e->cfg.augment};

    e->eval_idx = malloc((size_t)e->cap * sizeof *e->eval_idx);
    e->evals = calloc(CN_MAX_EVALS, sizeof *e->evals);
    if (!e->eval_idx || !e->evals || params_init(&e->ps, e->cfg.seed) != 0 ||
        acts_init(&e->acts, e->cap, e->threads) != 0)
        return cn_fail(err, errlen, -CN_ENOMEM, "batch %d needs %.1f MiB: out of memory",
                       e->cfg.batch, need / 1048576.0);
    if (workpool_new(&e->pool, e->threads, &e->reg) != 0)
        return cn_fail(err, errlen, -CN_ENOMEM, "cannot start %d compute threads", e->threads);
    if (loader_new(&e->loader, &src, e->cfg.batch, e->cfg.workers, e->cfg.prefetch, 0, 0,
                   &e->reg) != 0)
        return cn_fail(err, errlen, -CN_ENOMEM, "cannot start %d loader threads",
                       e->cfg.workers);
    return 0;
}

int engine_new(Engine **out, const RunConfig *cfg, char *err, size_t errlen)
{
    Engine *e;
    int rc;

    *out = NULL;
    if ((rc = check_config(cfg, err, errlen)) != 0)
        return rc;
    e = calloc(1, sizeof *e);
    if (!e)
        return cn_fail(err, errlen, -CN_ENOMEM, "out of memory");
    e->cfg = *cfg;
    snprintf(e->data_dir, sizeof e->data_dir, "%s", cfg->data_dir ? cfg->data_dir : CN_DEFAULT_DATA_DIR);
    e->cfg.data_dir = e->data_dir;
    e->threads = cfg->threads ? cfg->threads : sysinfo_cores();
    atomic_init(&e->stop, 0);
    atomic_init(&e->pending_batch, 0);
    threadreg_init(&e->reg);
    pthread_mutex_init(&e->live_mu, NULL);
    pthread_cond_init(&e->sampler_cv, NULL);
    history_init(&e->hist);
    gemm_init();
    loader_lut(e->lut);
    rc = cfg->test_only ? dataset_load_test(&e->ds, e->data_dir, err, errlen)
                        : dataset_load(&e->ds, e->data_dir, err, errlen);
    if (rc != 0)
        goto fail;
    if (e->ds.rows != MODEL_H || e->ds.cols != MODEL_W) {
        rc = cn_fail(err, errlen, -CN_EFORMAT, "%s: images are %dx%d, the model takes %dx%d",
                     e->ds.dir, e->ds.rows, e->ds.cols, MODEL_H, MODEL_W);
        goto fail;
    }
    snprintf(e->data_dir, sizeof e->data_dir, "%s", e->ds.dir);
    e->n_train = cfg->limit && cfg->limit < e->ds.n_train ? cfg->limit : e->ds.n_train;
    e->n_test = cfg->test_limit && cfg->test_limit < e->ds.n_test ? cfg->test_limit : e->ds.n_test;
    e->cap = arena_batch(e, cfg->batch);
    if ((rc = check_memory(e->cap, e->threads, err, errlen)) != 0)
        goto fail;
    if ((rc = engine_alloc(e, err, errlen)) != 0)
        goto fail;
    *out = e;
    return 0;
fail:
    engine_free(e);
    return rc;
}

void engine_free(Engine *e)
{
    if (!e)
        return;
    loader_free(e->loader);
    trace_free(e->trace);
    workpool_free(e->pool);
    acts_done(&e->acts);
    params_done(&e->ps);
    dataset_free(&e->ds);
    free(e->eval_idx);
    free(e->evals);
    pthread_mutex_destroy(&e->live_mu);
    pthread_cond_destroy(&e->sampler_cv);
    threadreg_done(&e->reg);
    free(e);
}

void engine_stop(Engine *e)
{
    atomic_store(&e->stop, 1);
}

static long steps_per_epoch(const Engine *e)
{
    return (e->n_train + e->cfg.batch - 1) / e->cfg.batch;
}

/* Steps left to the end of the run: --steps, or to the end of the current
 * epoch and then whole epochs up to `end_epoch`. */
static long steps_left(const Engine *e, long end_epoch)
{
    long left = (e->n_train - e->epoch_pos + e->cfg.batch - 1) / e->cfg.batch;
    return left + (end_epoch - e->epochs_done - 1) * steps_per_epoch(e);
}

static double tv_seconds(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

typedef struct RunClock {
    double t0;
    struct rusage ru0;
} RunClock;

static void run_clock_finish(Engine *e, const RunClock *rc)
{
    struct rusage ru;
    TrainStats *st = &e->stats;

    getrusage(RUSAGE_SELF, &ru);
    st->wall = timer_now() - rc->t0;
    st->images_per_s = st->wall > 0 ? (double)st->images / st->wall : 0.0;
    st->cpu_user = tv_seconds(ru.ru_utime) - tv_seconds(rc->ru0.ru_utime);
    st->cpu_sys = tv_seconds(ru.ru_stime) - tv_seconds(rc->ru0.ru_stime);
    st->minor_faults = ru.ru_minflt - rc->ru0.ru_minflt;
}

/* --- segments and the live record ------------------------------------ */

/* Starts a new segment at the next step; under live_mu. */
static void segment_begin(Engine *e, long first_step, double t)
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

/* Adds one step of nb images taking `dt` seconds to the current segment;
 * under live_mu. */
static void segment_step(Engine *e, int nb, double dt, double t)
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

/* Refreshes the loader's part of e->live; under live_mu. */
static void live_loader(Engine *e)
{
    LoaderStats ls;
    LiveStats *L = &e->live;

    loader_stats(e->loader, &ls);
    L->workers = ls.workers;
    L->prefetch = ls.prefetch;
    L->queue_filled = ls.ready;
    L->queue_cap = ls.workers ? ls.prefetch : 0;
    L->load_prepare = ls.prepare + ls.inline_prepare;
    L->load_blocked = ls.blocked;
    L->load_idle = ls.idle;
    L->load_batches = ls.batches;
    /* What the loader alone could deliver: samples per second of preparing
     * time, times the threads preparing (the trainer itself when W = 0). */
    double per = L->load_prepare > 0 ? (double)ls.samples_prepared / L->load_prepare : 0.0;
    L->load_samples_per_s = per * (ls.workers ? ls.workers : 1);
}

/* IPC and the cache-miss rate of the trainer role since the previous
 * reading `last` (values; NAN where not counted, which they are at first),
 * which this updates. */
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

static void *sampler_main(void *arg)
{
    Engine *e = arg;
    long last_images = 0;
    double last_t = 0.0, last_wait = 0.0, last_busy = 0.0, last_c[CTR_MAX_EVENTS];

    for (int i = 0; i < CTR_MAX_EVENTS; i++)
        last_c[i] = NAN;

    pthread_setname_np(pthread_self(), "cnntop-sample");
    pthread_mutex_lock(&e->live_mu);
    while (!e->sampler_quit) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)(SAMPLE_INTERVAL * 1e9);
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        if (pthread_cond_timedwait(&e->sampler_cv, &e->live_mu, &ts) == 0 && e->sampler_quit)
            break;
        if (e->evaluating)
            continue;
        LiveStats *L = &e->live;
        double t = timer_now() - e->t0;
        double wait = L->split.data, busy = L->split.data + L->split.forward +
                                            L->split.backward + L->split.optimizer;
        live_loader(e);
        Sample s = {.t = t, .step = L->p.step, .images = L->p.images, .loss = L->p.loss,
                    .workers = L->workers, .batch = L->batch, .segment = L->segment};
        s.images_per_s = t > last_t ? (float)((double)(L->p.images - last_images) / (t - last_t))
                                    : 0.0f;
        s.queue_fill = L->queue_cap ? (float)L->queue_filled / (float)L->queue_cap : -1.0f;
        s.data_wait_share = busy > last_busy ? (float)((wait - last_wait) / (busy - last_busy))
                                             : 0.0f;
        s.ipc = s.miss_rate = NAN;
        if (e->cs) /* a few reads; the lock is the sampler's own */
            interval_ratios(e->cs, last_c, &s);
        history_add(&e->hist, &s);
        /* images/s now: over the last second of samples */
        int n = e->hist.n, k = n - 1;
        while (k > 0 && t - e->hist.s[k - 1].t <= 1.0)
            k--;
        if (k > 0 && k < n - 1 && t > e->hist.s[k - 1].t)
            L->images_per_s_now = (double)(L->p.images - e->hist.s[k - 1].images) /
                                  (t - e->hist.s[k - 1].t);
        else
            L->images_per_s_now = s.images_per_s;
        last_t = t;
        last_images = L->p.images;
        last_wait = wait;
        last_busy = busy;
    }
    pthread_mutex_unlock(&e->live_mu);
    return NULL;
}

static void sampler_start(Engine *e)
{
    sigset_t all, old;

    e->sampler_quit = 0;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    e->sampler_on = pthread_create(&e->sampler, NULL, sampler_main, e) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void sampler_stop(Engine *e)
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

/* --- the step --------------------------------------------------------- */

/* Applies a pending batch size between steps: grows the arena if needed
 * and moves the loader to it.  A size that cannot be had is refused and
 * the run goes on at the old one. */
static void apply_pending_batch(Engine *e)
{
    int b = atomic_exchange(&e->pending_batch, 0);

    if (b == 0 || b == e->cfg.batch)
        return;
    int cap = arena_batch(e, b);
    if (cap > e->cap) {
        Acts grown;
        uint32_t *idx = malloc((size_t)cap * sizeof *idx);
        if (!idx || check_memory(cap, e->threads, NULL, 0) != 0 ||
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
    pthread_mutex_lock(&e->live_mu);
    e->cfg.batch = b; /* the trainer's own field, written under the lock for engine_config() */
    e->live.batch = b;
    live_loader(e);
    segment_begin(e, e->stats.steps, timer_now() - e->t0);
    pthread_mutex_unlock(&e->live_mu);
}

/* Evaluates in the middle of a run with the training clock stopped: the
 * run's start times move forward by the evaluation's length. */
static double eval_during(Engine *e, RunClock *rc, const Progress *p, int epoch_end, int epoch)
{
    EvalPoint *ep = &e->evals[e->nevals < CN_MAX_EVALS ? e->nevals++ : CN_MAX_EVALS - 1];
    double t0 = timer_now();

    pthread_mutex_lock(&e->live_mu);
    e->evaluating = 1; /* the sampler skips the evaluation */
    pthread_mutex_unlock(&e->live_mu);
    ep->step = p->step;
    ep->epoch_end = epoch_end;
    ep->epoch = epoch;
    ep->wall = t0 - rc->t0;
    ep->train_loss = p->epoch_loss;
    engine_evaluate(e, &ep->r, NULL, 0);
    double dt = timer_now() - t0;
    rc->t0 += dt;
    pthread_mutex_lock(&e->live_mu);
    e->t0 += dt;
    e->evaluating = 0;
    pthread_mutex_unlock(&e->live_mu);
    return dt;
}

/* One training step; returns 0, or 1 when stopped while waiting for data. */
static int train_step(Engine *e, int *nb, double *loss_out, double *wait, char *err,
                      size_t errlen)
{
    StepCtx s = {.ps = &e->ps, .a = &e->acts, .pool = e->pool, .prof = &e->prof,
                 .seed = e->cfg.seed};
    StepSplit *sp = &e->stats.split;
    double t0 = timer_now(), t1, t2, t3, t4;
    Batch b;

    if (e->prof.cs)
        profile_counters_mark(&e->prof);
    if (loader_next(e->loader, &b, &e->stop) != 0)
        return 1;
    if (e->prof.cs)
        profile_counters_lap(&e->prof, PROF_DATA);
    if (e->trace)
        trace_add(e->trace, "wait", "data wait", t0, timer_now(), -1);
    if (b.epoch != e->epochs_done || b.pos != e->epoch_pos)
        return cn_fail(err, errlen, -CN_ESTATE,
                       "internal error: the loader gave the batch at epoch %ld image %ld, "
                       "expected epoch %ld image %ld", b.epoch, b.pos, e->epochs_done,
                       e->epoch_pos);
    *nb = b.n;
    t1 = timer_now();
    e->prof.seconds[PROF_DATA] += t1 - t0;
    e->prof.calls[PROF_DATA]++;
    float *x = e->acts.x;
    uint8_t *labels = e->acts.labels;
    e->acts.x = b.x;
    e->acts.labels = b.labels;
    model_forward(&s, b.n, 1, e->ps.adam_t);
    double loss = model_loss(&s, b.n);
    t2 = timer_now();
    model_backward(&s, b.n);
    t3 = timer_now();
    model_update(&s, e->cfg.lr);
    t4 = timer_now();
    e->acts.x = x;
    e->acts.labels = labels;
    loader_release(e->loader, &b);
    sp->data += t1 - t0;
    sp->forward += t2 - t1;
    sp->backward += t3 - t2;
    sp->optimizer += t4 - t3;
    *wait = t1 - t0;
    *loss_out = loss;
    if (e->trace)
        trace_add(e->trace, "step", "step", t0, t4, (long)e->ps.adam_t);
    return 0;
}

static void publish_step(Engine *e, const Progress *p, int nb, double dt, double wait)
{
    LiveStats *L = &e->live;

    pthread_mutex_lock(&e->live_mu);
    L->p = *p;
    L->step_time = dt;
    L->data_wait = wait;
    L->split = e->stats.split;
    double busy = L->split.data + L->split.forward + L->split.backward + L->split.optimizer;
    L->data_wait_share = busy > 0 ? L->split.data / busy : 0.0;
    L->loader_bound = L->data_wait_share > CN_LOADER_BOUND;
    segment_step(e, nb, dt, p->elapsed);
    pthread_mutex_unlock(&e->live_mu);
}

/* Refuses a run that would take the epochs or Adam steps counted so far
 * (from a checkpoint, or earlier runs) past what the engine holds.  A step
 * ends at most one epoch; at most n_train steps make one (batch 1). */
static int check_totals(const Engine *e, char *err, size_t errlen)
{
    long epochs = e->cfg.steps ? e->cfg.steps : e->cfg.epochs;
    long steps = e->cfg.steps ? e->cfg.steps : e->cfg.epochs * e->n_train;

    if (e->epochs_done > CN_MAX_EPOCHS_DONE - epochs)
        return cn_fail(err, errlen, -CN_EINVAL,
                       "%ld epochs trained already: %ld more could pass the limit of %ld",
                       e->epochs_done, epochs, CN_MAX_EPOCHS_DONE);
    if (e->ps.adam_t > CN_MAX_ADAM_STEPS - steps)
        return cn_fail(err, errlen, -CN_EINVAL,
                       "%ld Adam steps taken already: %ld more could pass the limit of %ld",
                       e->ps.adam_t, steps, CN_MAX_ADAM_STEPS);
    return 0;
}

int engine_train(Engine *e, ProgressFn fn, void *userdata, char *err, size_t errlen)
{
    RunClock rc;
    Progress p;
    double epoch_loss = 0.0;
    long epoch_steps = 0;
    int first_epoch = (int)e->epochs_done, ret = 0;
    long end_epoch;

    if (e->cfg.test_only)
        return cn_fail(err, errlen, -CN_ESTATE, "this engine holds only the test split "
                       "(test_only): it evaluates, it cannot train");
    memset(&e->stats, 0, sizeof e->stats);
    if ((ret = check_totals(e, err, errlen)) != 0)
        return ret;
    memset(&e->prof, 0, sizeof e->prof);
    e->prof.trace = e->trace;
    e->prof.cs = e->cs;
    if (e->cs) {
        int n = counters_count(e->cs);
        e->prof.nev = n < PROF_EVENTS ? n : PROF_EVENTS;
    }
    e->nevals = 0;
    memset(&p, 0, sizeof p);
    atomic_store(&e->stop, 0);
    threadreg_enter(&e->reg, CN_ROLE_TRAIN, "cnntop-train");
    if (e->trace)
        trace_thread(e->trace, "cnntop-train");
    rc.t0 = timer_now();
    getrusage(RUSAGE_SELF, &rc.ru0);

    /* A run starts its own live record: history, segments. */
    pthread_mutex_lock(&e->live_mu);
    unsigned gen = e->hist.gen;
    history_init(&e->hist);
    e->hist.gen = gen + 1;
    memset(&e->live, 0, sizeof e->live);
    e->nseg = 0;
    e->t0 = rc.t0;
    e->live.running = 1;
    e->live.batch = e->cfg.batch;
    live_loader(e);
    segment_begin(e, 0, 0.0);
    pthread_mutex_unlock(&e->live_mu);
    loader_seek(e->loader, e->epochs_done, e->epoch_pos);
    loader_set_active(e->loader, 1);
    sampler_start(e);

    apply_pending_batch(e);
    /* With --epochs the run ends at the end of epoch end_epoch - 1; a
     * mid-epoch start (a checkpoint) counts its partial epoch as one. */
    end_epoch = e->epochs_done + e->cfg.epochs;
    p.steps = e->cfg.steps ? e->cfg.steps : steps_left(e, end_epoch);
    p.steps_per_epoch = steps_per_epoch(e);
    p.epochs = e->cfg.steps ? (int)((e->epoch_pos / e->cfg.batch + p.steps + p.steps_per_epoch - 1) /
                                    p.steps_per_epoch)
                            : e->cfg.epochs;

    for (long step = 0; step < p.steps && !atomic_load(&e->stop); step++) {
        int nb = 0;
        double loss = 0.0, wait = 0.0, ts = timer_now();
        if (step > 0 && atomic_load(&e->pending_batch)) {
            apply_pending_batch(e);
            p.steps_per_epoch = steps_per_epoch(e);
            if (!e->cfg.steps)
                p.steps = step + steps_left(e, end_epoch);
        }
        int st = train_step(e, &nb, &loss, &wait, err, errlen);
        if (st < 0) /* a bug; the run ends with its message, nothing trained on it */
            ret = st;
        if (st != 0)
            break;
        e->stats.steps++;
        e->stats.images += nb;
        e->stats.last_loss = (float)loss;
        epoch_loss += loss;
        epoch_steps++;
        e->stats.final_loss = epoch_loss / (double)epoch_steps;
        if (!isfinite(loss)) {
            ret = cn_fail(err, errlen, -CN_EDIVERGED,
                          "training diverged: loss is %f at step %ld (epoch %ld)", loss,
                          step + 1, e->epochs_done + 1);
            break;
        }
        e->epoch_pos += nb;
        p.epoch = (int)(e->epochs_done - first_epoch);
        p.step = step + 1;
        p.step_in_epoch = (e->epoch_pos + e->cfg.batch - 1) / e->cfg.batch;
        p.images = e->stats.images;
        p.elapsed = timer_now() - rc.t0;
        p.images_per_s = p.elapsed > 0 ? (double)p.images / p.elapsed : 0.0;
        p.loss = (float)loss;
        p.epoch_loss = epoch_loss / (double)epoch_steps;
        if (e->epoch_pos >= e->n_train) {
            e->epochs_done++;
            e->epoch_pos = 0;
            e->stats.epochs_done++;
            if (step + 1 < p.steps) {
                epoch_loss = 0.0;
                epoch_steps = 0;
            }
        }
        int ended = e->epoch_pos == 0;
        if ((ended && e->cfg.eval_epochs) ||
            (e->cfg.eval_every && (step + 1) % e->cfg.eval_every == 0))
            ts += eval_during(e, &rc, &p, ended,
                              ended ? p.epoch : (int)(e->epochs_done - first_epoch));
        publish_step(e, &p, nb, timer_now() - ts, wait);
        if (fn && fn(&p, userdata))
            break;
    }
    e->stats.stopped = ret == 0 && e->stats.steps < p.steps;
    run_clock_finish(e, &rc);
    sampler_stop(e);
    loader_set_active(e->loader, 0);
    pthread_mutex_lock(&e->live_mu);
    live_loader(e);
    e->live.running = 0;
    if (e->nseg > 0)
        e->seg[e->nseg - 1].wall = timer_now() - e->t0 - e->seg[e->nseg - 1].t0;
    pthread_mutex_unlock(&e->live_mu);
    threadreg_leave(&e->reg);
    return ret;
}

int engine_evaluate(Engine *e, EvalResult *out, char *err, size_t errlen)
{
    StepCtx s = {.ps = &e->ps, .a = &e->acts, .pool = e->pool, .prof = NULL,
                 .seed = e->cfg.seed};
    double t0 = timer_now(), loss_sum = 0.0;
    uint32_t *idx = e->eval_idx;
    const int B = e->cap, npix = MODEL_H * MODEL_W;

    (void)err;
    (void)errlen;
    memset(out, 0, sizeof *out);
    for (long i = 0; i < e->n_test; i += B) {
        int nb = e->n_test - i < B ? (int)(e->n_test - i) : B;
        for (int k = 0; k < nb; k++)
            idx[k] = (uint32_t)(i + k);
        loader_fill(e->acts.x, e->acts.labels, e->ds.test_images, e->ds.test_labels, idx,
                    nb, npix, e->lut);
        model_forward(&s, nb, 0, 0);
        loss_sum += model_loss(&s, nb) * nb;
        out->correct += xent_correct(e->acts.logits, e->acts.labels, nb, MODEL_CLASSES);
        out->images += nb;
    }
    out->accuracy = out->images ? (double)out->correct / (double)out->images : 0.0;
    out->loss = out->images ? loss_sum / (double)out->images : 0.0;
    out->wall = timer_now() - t0;
    return 0;
}

int engine_evaluate_final(Engine *e, EvalResult *out, char *err, size_t errlen)
{
    if (e->nevals > 0 && e->evals[e->nevals - 1].step == e->stats.steps) {
        *out = e->evals[e->nevals - 1].r;
        return 0;
    }
    return engine_evaluate(e, out, err, errlen);
}

void engine_stats(const Engine *e, TrainStats *out)
{
    *out = e->stats;
}

int engine_save(Engine *e, const char *path, char *err, size_t errlen)
{
    CkptMeta meta = {.epochs_done = e->epochs_done, .epoch_pos = e->epoch_pos,
                     .seed = e->cfg.seed};

    return checkpoint_save(path, &e->ps, &meta, err, errlen);
}

int engine_load(Engine *e, const char *path, char *err, size_t errlen)
{
    CkptMeta meta;
    int rc = checkpoint_load(path, &e->ps, &meta, err, errlen);

    if (rc != 0)
        return rc;
    e->epochs_done = meta.epochs_done;
    /* A checkpoint taken mid-epoch resumes there, when the data set (after
     * --limit) is at least as large; otherwise at the next epoch. */
    if (e->cfg.test_only) { /* no training set to measure the position against */
        e->epoch_pos = meta.epoch_pos;
        return 0;
    }
    e->epoch_pos = meta.epoch_pos < e->n_train ? meta.epoch_pos : 0;
    if (meta.epoch_pos >= e->n_train && meta.epoch_pos > 0)
        e->epochs_done++;
    return 0;
}

long engine_epochs_done(const Engine *e)
{
    return e->epochs_done;
}

long engine_epoch_images(const Engine *e)
{
    return e->epoch_pos;
}

long engine_train_images(const Engine *e)
{
    return e->n_train;
}

long engine_test_images(const Engine *e)
{
    return e->n_test;
}

const char *engine_data_dir(const Engine *e)
{
    return e->data_dir;
}

void engine_config(Engine *e, RunConfig *out)
{
    pthread_mutex_lock(&e->live_mu);
    *out = e->cfg;
    pthread_mutex_unlock(&e->live_mu);
}

int engine_threads(const Engine *e)
{
    return e->threads;
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

    for (int op = 0; op < PROF_NOPS && n < max; op++, n++) {
        snprintf(out[n].name, sizeof out[n].name, "%s", profile_name((ProfOp)op));
        out[n].seconds = e->prof.seconds[op];
        out[n].calls = e->prof.calls[op];
        out[n].flops = model_op_flops((ProfOp)op) * (double)e->stats.images;
        out[n].ncounts = e->prof.cs ? e->prof.nev : 0;
        for (int i = 0; i < CN_LAYER_EVENTS; i++)
            out[n].counts[i] = i < out[n].ncounts && e->prof.ctr_ok[i] ? e->prof.ctr[op][i] : NAN;
        layer_ratios(e, &out[n]);
    }
    return n;
}

/* --- live control and figures ---------------------------------------- */

static void live_changed(Engine *e)
{
    pthread_mutex_lock(&e->live_mu);
    live_loader(e);
    if (e->live.running) /* e->live.p.step: the steps done, as published */
        segment_begin(e, e->live.p.step, timer_now() - e->t0);
    pthread_mutex_unlock(&e->live_mu);
}

int engine_set_workers(Engine *e, int workers, char *err, size_t errlen)
{
    if (workers < 0 || workers > CN_MAX_WORKERS)
        return cn_fail(err, errlen, -CN_EINVAL, "workers %d out of range (0..%d)", workers,
                       CN_MAX_WORKERS);
    if (loader_set_workers(e->loader, workers) != 0) {
        live_changed(e);
        return cn_fail(err, errlen, -CN_ENOMEM, "cannot start %d loader threads", workers);
    }
    pthread_mutex_lock(&e->live_mu);
    e->cfg.workers = workers;
    pthread_mutex_unlock(&e->live_mu);
    live_changed(e);
    return 0;
}

int engine_set_prefetch(Engine *e, int prefetch, char *err, size_t errlen)
{
    if (prefetch < 0 || prefetch > CN_MAX_PREFETCH)
        return cn_fail(err, errlen, -CN_EINVAL, "prefetch %d out of range (1..%d, 0: 2 per worker)",
                       prefetch, CN_MAX_PREFETCH);
    loader_set_prefetch(e->loader, prefetch);
    pthread_mutex_lock(&e->live_mu);
    e->cfg.prefetch = prefetch;
    pthread_mutex_unlock(&e->live_mu);
    live_changed(e);
    return 0;
}

int engine_set_batch(Engine *e, int batch, char *err, size_t errlen)
{
    if (batch < 1 || batch > CN_MAX_BATCH)
        return cn_fail(err, errlen, -CN_EINVAL, "batch size %d out of range (1..%d)", batch,
                       CN_MAX_BATCH);
    if (check_memory(batch, e->threads, err, errlen) != 0)
        return -CN_ENOMEM;
    atomic_store(&e->pending_batch, batch);
    return 0;
}

void engine_live(Engine *e, LiveStats *out)
{
    pthread_mutex_lock(&e->live_mu);
    if (!e->live.running) {
        live_loader(e);
        e->live.batch = atomic_load(&e->pending_batch) ? atomic_load(&e->pending_batch)
                                                       : e->cfg.batch;
    }
    *out = e->live;
    pthread_mutex_unlock(&e->live_mu);
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

long engine_samples_total(Engine *e)
{
    pthread_mutex_lock(&e->live_mu);
    long n = e->hist.n;
    pthread_mutex_unlock(&e->live_mu);
    return n;
}

unsigned engine_samples_generation(Engine *e)
{
    pthread_mutex_lock(&e->live_mu);
    unsigned g = e->hist.gen;
    pthread_mutex_unlock(&e->live_mu);
    return g;
}

int engine_segments(Engine *e, Segment *out, int max)
{
    int n = 0;

    pthread_mutex_lock(&e->live_mu);
    for (; n < e->nseg && n < max; n++)
        out[n] = e->seg[n];
    pthread_mutex_unlock(&e->live_mu);
    return n;
}

int engine_set_trace(Engine *e, const char *path, char *err, size_t errlen)
{
    int rc = fileio_check_writable(path, err, errlen);

    if (rc != 0)
        return rc;
    if (!e->trace) {
        if (!(e->trace = trace_new()))
            return cn_fail(err, errlen, -CN_ENOMEM, "%s: out of memory for the trace", path);
        loader_set_trace(e->loader, e->trace);
    }
    snprintf(e->trace_path, sizeof e->trace_path, "%s", path);
    return 0;
}

int engine_write_trace(Engine *e, char *err, size_t errlen)
{
    if (!e->trace)
        return cn_fail(err, errlen, -CN_ESTATE, "no trace was asked for");
    /* Loader threads go on prefetching between runs: detach them (they add
     * under the loader's lock, so none is adding once this returns). */
    loader_set_trace(e->loader, NULL);
    int rc = trace_write(e->trace, e->trace_path, err, errlen);
    loader_set_trace(e->loader, e->trace);
    return rc;
}

int engine_evals(const Engine *e, EvalPoint *out, int max)
{
    int n = 0;

    for (; n < e->nevals && n < max; n++)
        out[n] = e->evals[n];
    return n;
}

void engine_set_counters(Engine *e, CounterSet *cs)
{
    threadreg_set_hook(&e->reg, NULL, NULL);
    e->cs = cs;
    if (cs)
        threadreg_set_hook(&e->reg, counters_thread_hook, cs);
}

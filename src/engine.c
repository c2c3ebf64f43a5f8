/*
 * engine.c: the public engine API (include/cnntop/engine.h).
 *
 * DESIGN
 * An Engine is used by one thread at a time (the front end's, or a run
 * controller's), except engine_stop(), which only stores to the atomic
 * `stop` flag and may be called from any thread or a signal handler.  The
 * compute pool's workers touch the model and the arena only inside
 * model_*() calls made by that thread.
 */
#include <math.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "checkpoint.h"
#include "err.h"
#include "gemm.h"
#include "idx.h"
#include "loader.h"
#include "loss_xent.h"
#include "model.h"
#include "rng.h"
#include "sysinfo.h"

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
    Pool *pool;
    Profile prof;
    float lut[256];
    uint32_t *perm;      /* (n_train) permutation of the current epoch */
    uint32_t *eval_idx;  /* (batch) test indices of one evaluation batch */
    long perm_epoch;     /* epoch perm holds, -1 if none */
    long epochs_done;    /* epochs completed (continues across checkpoints) */
    long epoch_pos;      /* images consumed of the current epoch */
    atomic_int stop;
    TrainStats stats;
};

const char *engine_version(void)
{
    return "0.1.0";
}

void engine_config_default(RunConfig *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->data_dir = NULL;
    cfg->batch = 64;
    cfg->epochs = 1;
    cfg->lr = 1e-3;
    cfg->seed = 1;
}

double engine_flops_per_image(void)
{
    return model_flops_forward() + model_flops_backward();
}

size_t engine_memory_estimate(int batch, int threads)
{
    size_t params = 4 * params_count() * sizeof(float);
    return acts_bytes(batch, threads) + params;
}

static int check_config(const RunConfig *c, char *err, size_t errlen)
{
    if (c->batch < 1 || c->batch > CN_MAX_BATCH)
        return cn_fail(err, errlen, -CN_EINVAL, "batch size %d out of range (1..%d)",
                       c->batch, CN_MAX_BATCH);
    if (c->steps < 0)
        return cn_fail(err, errlen, -CN_EINVAL, "steps %ld must not be negative", c->steps);
    if (c->steps == 0 && (c->epochs < 1 || c->epochs > 100000))
        return cn_fail(err, errlen, -CN_EINVAL, "epochs %d out of range (1..100000)", c->epochs);
    if (c->limit < 0 || c->test_limit < 0)
        return cn_fail(err, errlen, -CN_EINVAL, "limit must not be negative");
    if (c->threads < 0 || c->threads > CN_MAX_THREADS)
        return cn_fail(err, errlen, -CN_EINVAL, "threads %d out of range (0..%d)",
                       c->threads, CN_MAX_THREADS);
    if (!isfinite(c->lr) || c->lr <= 0.0 || c->lr > 10.0)
        return cn_fail(err, errlen, -CN_EINVAL, "learning rate %g out of range (0..10]", c->lr);
    return 0;
}

static int check_memory(int batch, int threads, char *err, size_t errlen)
{
    size_t need = engine_memory_estimate(batch, threads), ram = sysinfo_ram_bytes();

    if (ram && need > ram / 10 * 9)
        return cn_fail(err, errlen, -CN_ENOMEM,
                       "batch %d needs %.1f GiB of memory, the machine has %.1f GiB",
                       batch, need / 1073741824.0, ram / 1073741824.0);
    return 0;
}

static int engine_alloc(Engine *e, char *err, size_t errlen)
{
    size_t need = engine_memory_estimate(e->cap, e->threads);

    e->perm = malloc((size_t)e->n_train * sizeof *e->perm);
    e->eval_idx = malloc((size_t)e->cap * sizeof *e->eval_idx);
    if (!e->perm || !e->eval_idx || params_init(&e->ps, e->cfg.seed) != 0 ||
        acts_init(&e->acts, e->cap, e->threads) != 0)
        return cn_fail(err, errlen, -CN_ENOMEM, "batch %d needs %.1f MiB: out of memory",
                       e->cfg.batch, need / 1048576.0);
    if (pool_new(&e->pool, e->threads) != 0)
        return cn_fail(err, errlen, -CN_ENOMEM, "cannot start %d compute threads", e->threads);
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
    e->perm_epoch = -1;
    atomic_init(&e->stop, 0);
    gemm_init();
    loader_lut(e->lut);
    if ((rc = dataset_load(&e->ds, e->data_dir, err, errlen)) != 0)
        goto fail;
    if (e->ds.rows != MODEL_H || e->ds.cols != MODEL_W) {
        rc = cn_fail(err, errlen, -CN_EFORMAT, "%s: images are %dx%d, the model takes %dx%d",
                     e->ds.dir, e->ds.rows, e->ds.cols, MODEL_H, MODEL_W);
        goto fail;
    }
    snprintf(e->data_dir, sizeof e->data_dir, "%s", e->ds.dir);
    e->n_train = cfg->limit && cfg->limit < e->ds.n_train ? cfg->limit : e->ds.n_train;
    e->n_test = cfg->test_limit && cfg->test_limit < e->ds.n_test ? cfg->test_limit : e->ds.n_test;
    /* No step ever holds more images than the larger split has. */
    long most = e->n_train > e->n_test ? e->n_train : e->n_test;
    e->cap = cfg->batch < most ? cfg->batch : (int)most;
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
    pool_free(e->pool);
    acts_done(&e->acts);
    params_done(&e->ps);
    dataset_free(&e->ds);
    free(e->perm);
    free(e->eval_idx);
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

/* Steps this run will take: --steps, or to the end of the current epoch
 * and then whole epochs. */
static long planned_steps(const Engine *e)
{
    if (e->cfg.steps)
        return e->cfg.steps;
    long left = (e->n_train - e->epoch_pos + e->cfg.batch - 1) / e->cfg.batch;
    return left + (long)(e->cfg.epochs - 1) * steps_per_epoch(e);
}

/* Assembles the next batch of the epoch; returns its size. */
static int next_batch(Engine *e)
{
    if (e->perm_epoch != e->epochs_done) {
        rng_permutation(e->perm, e->n_train, e->cfg.seed, e->epochs_done);
        e->perm_epoch = e->epochs_done;
    }
    long left = e->n_train - e->epoch_pos;
    int nb = left < e->cfg.batch ? (int)left : e->cfg.batch;
    loader_fill(e->acts.x, e->acts.labels, e->ds.train_images, e->ds.train_labels,
                e->perm + e->epoch_pos, nb, MODEL_H * MODEL_W, e->lut);
    return nb;
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

/* One training step; returns the loss. */
static double train_step(Engine *e, int *nb)
{
    StepCtx s = {.ps = &e->ps, .a = &e->acts, .pool = e->pool, .prof = &e->prof,
                 .seed = e->cfg.seed};
    StepSplit *sp = &e->stats.split;
    double t0 = timer_now(), t1, t2, t3, t4;

    *nb = next_batch(e);
    t1 = timer_now();
    e->prof.seconds[PROF_DATA] += t1 - t0;
    e->prof.calls[PROF_DATA]++;
    model_forward(&s, *nb, 1, e->ps.adam_t);
    double loss = model_loss(&s, *nb);
    t2 = timer_now();
    model_backward(&s, *nb);
    t3 = timer_now();
    model_update(&s, e->cfg.lr);
    t4 = timer_now();
    sp->data += t1 - t0;
    sp->forward += t2 - t1;
    sp->backward += t3 - t2;
    sp->optimizer += t4 - t3;
    return loss;
}

int engine_train(Engine *e, ProgressFn fn, void *userdata, char *err, size_t errlen)
{
    RunClock rc;
    Progress p;
    double epoch_loss = 0.0;
    long epoch_steps = 0;
    int first_epoch = (int)e->epochs_done;

    memset(&e->stats, 0, sizeof e->stats);
    memset(&e->prof, 0, sizeof e->prof);
    memset(&p, 0, sizeof p);
    atomic_store(&e->stop, 0);
    p.steps = planned_steps(e);
    p.steps_per_epoch = steps_per_epoch(e);
    p.epochs = e->cfg.steps ? (int)((e->epoch_pos / e->cfg.batch + p.steps + p.steps_per_epoch - 1) /
                                    p.steps_per_epoch)
                            : e->cfg.epochs;
    rc.t0 = timer_now();
    getrusage(RUSAGE_SELF, &rc.ru0);

    for (long step = 0; step < p.steps && !atomic_load(&e->stop); step++) {
        int nb;
        double loss = train_step(e, &nb);
        e->stats.steps++;
        e->stats.images += nb;
        e->stats.last_loss = (float)loss;
        epoch_loss += loss;
        epoch_steps++;
        e->stats.final_loss = epoch_loss / (double)epoch_steps;
        if (!isfinite(loss)) {
            run_clock_finish(e, &rc);
            return cn_fail(err, errlen, -CN_EDIVERGED,
                           "training diverged: loss is %f at step %ld (epoch %ld)", loss,
                           step + 1, e->epochs_done + 1);
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
        if (fn && fn(&p, userdata))
            break;
    }
    e->stats.stopped = e->stats.steps < p.steps;
    run_clock_finish(e, &rc);
    return 0;
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
    e->epoch_pos = meta.epoch_pos < e->n_train ? meta.epoch_pos : 0;
    if (meta.epoch_pos >= e->n_train && meta.epoch_pos > 0)
        e->epochs_done++;
    e->perm_epoch = -1;
    return 0;
}

long engine_epochs_done(const Engine *e)
{
    return e->epochs_done;
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

int engine_threads(const Engine *e)
{
    return e->threads;
}

void engine_machine_info(MachineInfo *out)
{
    const char *forced = getenv("OPENBLAS_CORETYPE");

    memset(out, 0, sizeof *out);
    sysinfo_cpu_model(out->cpu_model, sizeof out->cpu_model);
    out->cores = sysinfo_cores();
    gemm_describe(out->blas_core, sizeof out->blas_core, out->blas_config,
                  sizeof out->blas_config);
    if (forced && *forced) {
        int slower = sysinfo_has_avx512() && !strstr(out->blas_core, "Skylake") &&
                     !strstr(out->blas_core, "Cooperlake") && !strstr(out->blas_core, "Sapphire") &&
                     !strstr(out->blas_core, "Zen4") && !strstr(out->blas_core, "Zen5");
        snprintf(out->blas_warning, sizeof out->blas_warning,
                 slower ? "OPENBLAS_CORETYPE=%s forces %s kernels on a CPU with AVX-512: "
                          "SGEMM runs at about half the speed the CPU allows"
                        : "OPENBLAS_CORETYPE=%s selects the %s kernels",
                 forced, out->blas_core);
    }
}

long engine_peak_rss_kib(void)
{
    return sysinfo_peak_rss_kib();
}

int engine_profile(const Engine *e, LayerTime *out, int max)
{
    int n = 0;

    for (int op = 0; op < PROF_NOPS && n < max; op++, n++) {
        snprintf(out[n].name, sizeof out[n].name, "%s", profile_name((ProfOp)op));
        out[n].seconds = e->prof.seconds[op];
        out[n].calls = e->prof.calls[op];
    }
    return n;
}

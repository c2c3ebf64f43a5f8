/*
 * engine.c: the public engine API (include/cnntop/engine.h): making and
 * freeing an Engine, evaluating, checkpoints, the trace and the counters.
 * The train loop is train.c, live settings live.c, the sampler thread
 * sampler.c, snapshots snapshot.c; state.h holds struct Engine.
 *
 * DESIGN
 * An Engine is driven by one thread at a time (the front end's, or a run
 * thread's): engine_new/train/evaluate/save/load/set_trace/set_counters.
 * While engine_train() runs, that thread is the trainer: it alone touches
 * the model, the arena, the profile and its own figures, without a lock.
 * The compute pool's workers touch the model and the arena only inside
 * model_*() calls made by the trainer.
 *
 * Other threads may call the live functions at any moment: engine_stop()
 * only stores to the atomic `stop` flag (safe in a signal handler);
 * engine_set_workers/prefetch go straight to the loader, which has its own
 * lock; engine_set_batch stores to the atomic `pending_batch`, which the
 * trainer applies between steps; engine_snapshot/samples/evals copy state
 * under `live_mu`.
 *
 * live_mu guards what crosses threads: the trainer takes it once after
 * every step to publish (progress, times, segment, a copy of its figures);
 * the sampler thread (sampler.c), which wakes every 0.1 s while
 * engine_train() runs, takes it to copy what the trainer published and
 * again to append a Sample to the run's history; snapshots take it to copy.
 * No one holds it across a system call, a counter read, another lock or
 * any work longer than a copy: loader figures are read with the loader's
 * own lock before live_mu is taken, the sampler's perf and /proc reads are
 * made between its two holds.  So the trainer never waits on live_mu for
 * more than a copy's time.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cnntop/fileio.h"
#include "cnntop/settings.h"
#include "data/loader.h"
#include "engine/checkpoint.h"
#include "engine/state.h"
#include "nn/gemm.h"
#include "nn/loss_xent.h"
#include "prof/sysinfo.h"
#include "util/err.h"

double engine_flops_per_image(void)
{
    return model_flops_forward() + model_flops_backward();
}

double engine_flops_executed_per_image(void)
{
    return model_flops_executed();
}

/* Every setting within the range of its row in settings_run. */
static int check_config(const RunConfig *c, char *err, size_t errlen)
{
    return settings_check_config(c, err, errlen);
}

static int engine_alloc(Engine *e, char *err, size_t errlen)
{
    size_t need = engine_memory_estimate(e->cap, e->threads);
    /* A test-only engine never trains: its loader, idle, has the test split. */
    int t = e->cfg.test_only;
    LoaderSrc src = {.images = t ? e->ds.test_images : e->ds.train_images,
                     .labels = t ? e->ds.test_labels : e->ds.train_labels,
                     .n = t ? e->n_test : e->n_train, .rows = e->ds.rows, .cols = e->ds.cols,
                     .seed = e->cfg.seed, .augment = e->cfg.augment,
                     .rank = t ? 0 : e->dist.rank, .ranks = t ? 1 : e->dist.size};

    e->eval_idx = malloc((size_t)e->cap * sizeof *e->eval_idx);
    e->evals = calloc(CN_MAX_EVALS, sizeof *e->evals);
    /* The pool and its warm-up first: model_warm's matrices are freed
     * before the arena takes its memory, so they add nothing to the peak. */
    if (workpool_new(&e->pool, e->threads, &e->reg) != 0)
        return cn_fail(err, errlen, -CN_ENOMEM, "cannot start %d compute threads", e->threads);
    if (!e->eval_idx || !e->evals || model_warm(e->pool) != 0 ||
        params_init(&e->ps, e->cfg.seed) != 0 || acts_init(&e->acts, e->cap, e->threads) != 0)
        return cn_fail(err, errlen, -CN_ENOMEM, "batch %d needs %.1f MiB: out of memory",
                       e->cfg.batch, need / 1048576.0);
    if (loader_new(&e->loader, &src, e->cfg.batch, e->cfg.workers, e->cfg.prefetch, 0, 0,
                   &e->reg) != 0)
        return cn_fail(err, errlen, -CN_ENOMEM, "cannot start %d loader threads",
                       e->cfg.workers);
    /* With no loader threads the trainer fills each batch over its own
     * compute threads (loader.h); the loader is freed before the pool. */
    if (loader_set_pool(e->loader, e->pool) != 0)
        return cn_fail(err, errlen, -CN_ENOMEM, "out of memory");
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
    if ((rc = distrun_open(e, err, errlen)) != 0) { /* threads: shared among a node's ranks */
        free(e);
        return rc;
    }
    atomic_init(&e->stop, 0);
    atomic_init(&e->never, 0);
    atomic_init(&e->pending_batch, 0);
    threadreg_init(&e->reg);
    pthread_mutex_init(&e->live_mu, NULL);
    pthread_cond_init(&e->sampler_cv, NULL);
    history_init(&e->hist);
    gemm_init();
    e->gemm = gemm_path_of(cfg->gemm);
    loader_lut(e->lut);
    rc = cfg->test_only ? dataset_load_test(&e->ds, e->data_dir, err, errlen)
                        : dataset_load(&e->ds, e->data_dir, err, errlen);
    if (rc != 0)
        goto fail;
    if ((rc = engine_check_shape(&e->ds, err, errlen)) != 0)
        goto fail;
    snprintf(e->data_dir, sizeof e->data_dir, "%s", e->ds.dir);
    e->n_train = cfg->limit && cfg->limit < e->ds.n_train ? cfg->limit : e->ds.n_train;
    e->n_test = cfg->test_limit && cfg->test_limit < e->ds.n_test ? cfg->test_limit : e->ds.n_test;
    e->cap = engine_arena_batch(e, cfg->batch);
    if ((rc = engine_check_memory(e->cap, e->threads, err, errlen)) != 0)
        goto fail;
    if ((rc = engine_alloc(e, err, errlen)) != 0 || (rc = distrun_share_params(e, err, errlen)))
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
    distrun_close(e);
    pthread_mutex_destroy(&e->live_mu);
    pthread_cond_destroy(&e->sampler_cv);
    threadreg_done(&e->reg);
    free(e);
}

void engine_stop(Engine *e)
{
    atomic_store(&e->stop, 1);
}

int engine_evaluate(Engine *e, EvalResult *out, char *err, size_t errlen)
{
    StepCtx s = {.ps = &e->ps, .a = &e->acts, .pool = e->pool, .prof = NULL,
                 .seed = e->cfg.seed, .gemm = e->gemm};
    double t0 = timer_now(), v[3] = {0.0, 0.0, 0.0}; /* correct, images, loss x images */
    uint32_t *idx = e->eval_idx;
    const int B = e->cap, npix = MODEL_H * MODEL_W;
    long lo, hi;
    char msg[256];
    int rc;

    memset(out, 0, sizeof *out);
    /* a rank of a distributed run evaluates its share of the test set */
    if ((rc = distrun_eval_begin(e, e->n_test, &lo, &hi, msg, sizeof msg)) != 0)
        return cn_fail(err, errlen, rc, "%s", msg);
    for (long i = lo; i < hi; i += B) {
        int nb = hi - i < B ? (int)(hi - i) : B;
        for (int k = 0; k < nb; k++)
            idx[k] = (uint32_t)(i + k);
        loader_fill(e->acts.x, e->acts.labels, e->ds.test_images, e->ds.test_labels, idx,
                    nb, npix, e->lut);
        model_forward(&s, nb, 0, 0);
        v[2] += model_loss(&s, nb) * nb;
        v[0] += xent_correct(e->acts.logits, e->acts.labels, nb, MODEL_CLASSES);
        v[1] += nb;
    }
    if ((rc = distrun_eval_end(e, v, 3, msg, sizeof msg)) != 0)
        return cn_fail(err, errlen, rc, "%s", msg);
    out->correct = (long)v[0];
    out->images = (long)v[1];
    out->accuracy = out->images ? (double)out->correct / (double)out->images : 0.0;
    out->loss = out->images ? v[2] / (double)out->images : 0.0;
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
     * --limit) is at least as large; otherwise at the next epoch.  A
     * test-only engine has no training set to measure the position
     * against: it keeps it as it is. */
    if (e->cfg.test_only)
        e->epoch_pos = meta.epoch_pos;
    else {
        e->epoch_pos = meta.epoch_pos < e->n_train ? meta.epoch_pos : 0;
        if (meta.epoch_pos >= e->n_train && meta.epoch_pos > 0)
            e->epochs_done++;
    }
    pthread_mutex_lock(&e->live_mu);
    snapshot_publish(e);
    pthread_mutex_unlock(&e->live_mu);
    return 0;
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

void engine_set_counters(Engine *e, CounterSet *cs)
{
    threadreg_set_hook(&e->reg, NULL, NULL);
    e->cs = cs;
    if (cs)
        threadreg_set_hook(&e->reg, counters_thread_hook, cs);
}

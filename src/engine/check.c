/*
 * check.c: a run's configuration checked before any work (cnntop/engine.h,
 * engine_check_start()): its settings, the data set's files by their
 * headers, the images' shape against the model, and the memory the run
 * would take against what the machine has available.  Nothing is loaded
 * or allocated, so a front end can refuse bad input at once, before it
 * trains, loads or forks.
 */
#include <stdio.h>

#include "cnntop/engine.h"
#include "cnntop/settings.h"
#include "data/dataset.h"
#include "engine/state.h"
#include "prof/sysinfo.h"
#include "util/err.h"

int engine_check_shape(const Dataset *ds, char *err, size_t errlen)
{
    if (ds->rows == MODEL_H && ds->cols == MODEL_W)
        return 0;
    return cn_fail(err, errlen, -CN_EFORMAT, "%s: images are %dx%d, the model takes %dx%d",
                   ds->dir, ds->rows, ds->cols, MODEL_H, MODEL_W);
}

/* Batches the loader may hold at once: its queue (prefetch, or two per
 * worker), one being filled per worker, the trainer's and a spare. */
static size_t loader_slots(int workers, int prefetch)
{
    int queue = prefetch ? prefetch : 2 * workers;

    return (size_t)(queue < 1 ? 1 : queue) + (size_t)workers + 2;
}

size_t engine_run_memory(const RunConfig *cfg, long n_train, long n_test, int threads,
                         size_t *arena, size_t *queue)
{
    long most = n_train > n_test ? n_train : n_test;
    int cap = cfg->batch < most ? cfg->batch : (int)most;
    size_t pix = (size_t)MODEL_H * MODEL_W;
    size_t loader = cfg->test_only ? 0 : loader_slots(cfg->workers, cfg->prefetch) *
                                             (size_t)cap * (pix * sizeof(float) + 5);
    size_t data = (size_t)(n_train + n_test) * (pix + 1);

    *arena = engine_memory_estimate(cap, threads);
    *queue = loader;
    return *arena + loader + data;
}

/* Refuses a run whose memory is more than the machine has available now. */
static int fit_check(const RunConfig *cfg, const Dataset *ds, int threads, char *err,
                     size_t errlen)
{
    long n_train = cfg->limit && cfg->limit < ds->n_train ? cfg->limit : ds->n_train;
    long n_test = cfg->test_limit && cfg->test_limit < ds->n_test ? cfg->test_limit : ds->n_test;
    size_t arena, queue, need = engine_run_memory(cfg, n_train, n_test, threads, &arena, &queue);
    size_t avail = sysinfo_mem_available_bytes();
    const double gib = 1073741824.0;

    if (!avail || need <= avail)
        return 0;
    return cn_fail(err, errlen, -CN_ENOMEM,
                   "batch %d with %d thread%s, %d worker%s and prefetch %d needs %.1f GiB "
                   "(%.1f GiB arena, %.1f GiB loader queue, %.1f GiB data), the machine has "
                   "%.1f GiB available (MemAvailable): use a smaller batch, fewer workers or "
                   "a smaller prefetch", cfg->batch, threads, threads == 1 ? "" : "s",
                   cfg->workers, cfg->workers == 1 ? "" : "s", cfg->prefetch, need / gib,
                   arena / gib, queue / gib, (need - arena - queue) / gib, avail / gib);
}

int engine_check_start(const RunConfig *cfg, char *err, size_t errlen)
{
    const char *dir = cfg->data_dir ? cfg->data_dir : CN_DEFAULT_DATA_DIR;
    int threads = cfg->threads ? cfg->threads : sysinfo_cores();
    Dataset ds;
    int rc;

    if ((rc = settings_check_config(cfg, err, errlen)) != 0)
        return rc;
    if ((rc = dataset_check(&ds, dir, cfg->test_only, err, errlen)) != 0)
        return rc;
    if ((rc = engine_check_shape(&ds, err, errlen)) != 0)
        return rc;
    return fit_check(cfg, &ds, threads, err, errlen);
}

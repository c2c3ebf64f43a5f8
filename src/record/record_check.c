/*
 * record_check.c: what a run record's values mean, checked after reading.
 *
 * The reader (record.c) checks types and integer ranges; this checks the
 * values against their meaning, from one table per kind of field: a count
 * within what the engine can hold, a time or a rate not negative, a share
 * within 0..1, and the relations between them (no more correct answers than
 * images, at least one image per step).  NaN stands for "unknown" (null in
 * the JSON) and is always accepted for a real number.
 */
#include <math.h>
#include <stddef.h>

#include "cnntop/record.h"
#include "util/err.h"

typedef struct IntField {
    const char *name;
    size_t off;       /* offsetof(RunRecord, ...) of a long or an int */
    int is_int;
    long long lo, hi;
} IntField;

typedef struct RealField {
    const char *name;
    size_t off;       /* offsetof(RunRecord, ...) of a double */
    double lo, hi;
} RealField;

#define INT_F(name, m, lo, hi) {name, offsetof(RunRecord, m), 1, lo, hi}
#define LONG_F(name, m, lo, hi) {name, offsetof(RunRecord, m), 0, lo, hi}

static const IntField int_fields[] = {
    INT_F("config.batch", config.batch, 1, CN_MAX_BATCH),
    INT_F("config.epochs", config.epochs, 0, CN_MAX_EPOCHS),
    LONG_F("config.steps", config.steps, 0, CN_MAX_STEPS),
    LONG_F("config.limit", config.limit, 0, CN_MAX_IMAGES),
    LONG_F("config.test_limit", config.test_limit, 0, CN_MAX_IMAGES),
    INT_F("config.threads", config.threads, 0, CN_MAX_THREADS),
    INT_F("config.workers", config.workers, 0, CN_MAX_WORKERS),
    INT_F("config.prefetch", config.prefetch, 0, CN_MAX_PREFETCH),
    LONG_F("data.train_images", train_images, -1, CN_MAX_IMAGES),
    LONG_F("data.test_images", test_images, -1, CN_MAX_IMAGES),
    INT_F("threads_used", threads_used, -1, CN_MAX_THREADS),
    INT_F("exec.loader_workers", exec.loader_workers, -1, CN_MAX_WORKERS),
    INT_F("exec.worker_procs", exec.worker_procs, -1, CN_MAX_WORKERS),
    INT_F("exec.busy_threads", exec.busy_threads, -1, CN_MAX_THREADS),
    INT_F("exec.runs", exec.runs, -1, 1 << 20),
    LONG_F("train.steps", train.steps, 0, CN_MAX_STEPS),
    LONG_F("train.images", train.images, 0, CN_MAX_STEPS * (long long)CN_MAX_BATCH),
    INT_F("train.epochs_done", train.epochs_done, 0, CN_MAX_STEPS),
    LONG_F("eval.images", eval.images, 0, CN_MAX_IMAGES),
    LONG_F("eval.correct", eval.correct, 0, CN_MAX_IMAGES),
};

static const RealField real_fields[] = {
    {"config.lr", offsetof(RunRecord, config.lr), 0, 10},
    {"flops_per_image", offsetof(RunRecord, flops_per_image), 0, INFINITY},
    {"machine.peak_gflops", offsetof(RunRecord, peak_gflops), 0, INFINITY},
    {"train.wall", offsetof(RunRecord, train.wall), 0, INFINITY},
    {"train.images_per_s", offsetof(RunRecord, train.images_per_s), 0, INFINITY},
    {"train.cpu_user", offsetof(RunRecord, train.cpu_user), 0, INFINITY},
    {"train.cpu_sys", offsetof(RunRecord, train.cpu_sys), 0, INFINITY},
    {"train.split.data", offsetof(RunRecord, train.split.data), 0, INFINITY},
    {"train.split.forward", offsetof(RunRecord, train.split.forward), 0, INFINITY},
    {"train.split.backward", offsetof(RunRecord, train.split.backward), 0, INFINITY},
    {"train.split.optimizer", offsetof(RunRecord, train.split.optimizer), 0, INFINITY},
    {"eval.accuracy", offsetof(RunRecord, eval.accuracy), 0, 1},
    {"eval.wall", offsetof(RunRecord, eval.wall), 0, INFINITY},
    {"loader_samples_per_s", offsetof(RunRecord, loader_samples_per_s), 0, INFINITY},
    {"target_accuracy", offsetof(RunRecord, target_accuracy), 0, 1},
    {"time_to_target", offsetof(RunRecord, time_to_target), 0, INFINITY},
    {"exec.wall", offsetof(RunRecord, exec.wall), 0, INFINITY},
    {"exec.images_per_s", offsetof(RunRecord, exec.images_per_s), 0, INFINITY},
    {"exec.data_wait_share", offsetof(RunRecord, exec.data_wait_share), 0, 1},
};

static long long int_at(const RunRecord *r, const IntField *f)
{
    const char *p = (const char *)r + f->off;
    return f->is_int ? *(const int *)(const void *)p : *(const long *)(const void *)p;
}

static double real_at(const RunRecord *r, size_t off)
{
    return *(const double *)(const void *)((const char *)r + off);
}

/* A repeat's figures: times and rates not negative, accuracy a share. */
static int check_repeats(const RunRecord *r, const char *what, char *err, size_t errlen)
{
    for (size_t i = 0; i < r->n_repeats; i++) {
        const RecordRepeat *p = &r->repeats[i];
        double v[] = {p->wall, p->images_per_s, p->user, p->system};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            if (v[k] < 0 || isinf(v[k]))
                return cn_fail(err, errlen, -CN_EFORMAT,
                               "%s: repeats[%zu]: a time or rate of %g", what, i, v[k]);
        if (p->accuracy < 0 || p->accuracy > 1)
            return cn_fail(err, errlen, -CN_EFORMAT, "%s: repeats[%zu].accuracy %g outside 0..1",
                           what, i, p->accuracy);
    }
    return 0;
}

int record_check(const RunRecord *r, const char *what, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof int_fields / sizeof int_fields[0]; i++) {
        long long v = int_at(r, &int_fields[i]);
        if (v < int_fields[i].lo || v > int_fields[i].hi)
            return cn_fail(err, errlen, -CN_EFORMAT, "%s: %s is %lld, out of range (%lld..%lld)",
                           what, int_fields[i].name, v, int_fields[i].lo, int_fields[i].hi);
    }
    for (size_t i = 0; i < sizeof real_fields / sizeof real_fields[0]; i++) {
        double v = real_at(r, real_fields[i].off);
        if (!isnan(v) && (v < real_fields[i].lo || v > real_fields[i].hi || isinf(v)))
            return cn_fail(err, errlen, -CN_EFORMAT, "%s: %s is %g, out of range (%g..%g)",
                           what, real_fields[i].name, v, real_fields[i].lo, real_fields[i].hi);
    }
    if (r->have_eval && r->eval.correct > r->eval.images)
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: eval.correct %ld is more than eval.images %ld",
                       what, r->eval.correct, r->eval.images);
    if (r->train.images < r->train.steps ||
        r->train.images > r->train.steps * (long long)CN_MAX_BATCH)
        return cn_fail(err, errlen, -CN_EFORMAT,
                       "%s: train.images %ld for %ld steps (each step trains 1..%d images)", what,
                       r->train.images, r->train.steps, CN_MAX_BATCH);
    if (r->have_exec && !r->exec.command)
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: exec.command is null", what);
    if (r->train.steps == 0 && !r->have_eval && !r->error && !r->have_exec)
        return cn_fail(err, errlen, -CN_EFORMAT,
                       "%s: nothing to report (no training step, no evaluation, no error)", what);
    return check_repeats(r, what, err, errlen);
}

/*
 * record_check.c: what a run record's values mean, checked after reading.
 *
 * The reader (json_read.c) checks types; this checks the values against
 * their meaning: every whole number within the range the field table
 * gives it (fields.c: what the writers can produce), a time or a rate not
 * negative, a share within 0..1, and the relations between them (no more
 * correct answers than images, at least one image per step).  NaN stands for "unknown" (null in
 * the JSON) and is always accepted for a real number.
 */
#include <math.h>
#include <stddef.h>

#include <stdio.h>

#include "cnntop/record.h"
#include "record/fields.h"
#include "util/err.h"

typedef struct RealField {
    const char *name;
    size_t off;       /* offsetof(RunRecord, ...) of a double */
    double lo, hi;
} RealField;

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

/* A whole number of base, an int or a long by its size. */
static long long int_at(const Field *f, const void *base)
{
    const void *p = field_cat(f, base);
    return f->size == sizeof(int) ? *(const int *)p : *(const long *)p;
}

static int check_ints(const Field *fields, const void *base, const char *where,
                      const char *what, char *err, size_t errlen);

/* Each element of an array member, by its table. */
static int check_elements(const Field *f, const void *base, const char *path, const char *what,
                          char *err, size_t errlen)
{
    size_t n = *(const size_t *)(const void *)((const char *)base + f->n_off);
    const char *elems = *(const char *const *)field_cat(f, base);
    char at[160];

    for (size_t i = 0; i < n; i++) {
        if (snprintf(at, sizeof at, "%.120s[%zu]", path, i) >= (int)sizeof at)
            at[sizeof at - 1] = '\0';
        if (check_ints(f->sub, elems + i * f->size, at, what, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* Every whole number of the table within its range (Field.lo..hi: what
 * the writers can produce); a count may be unknown (negative).  Objects
 * that are null (an exec record's config) hold nothing to check. */
static int check_ints(const Field *fields, const void *base, const char *where,
                      const char *what, char *err, size_t errlen)
{
    char path[128];

    for (const Field *f = fields; f->key; f++) {
        snprintf(path, sizeof path, "%s%s%s", where, *where ? "." : "", f->key);
        int present = f->type != FT_MAYBE || *(const int *)(const void *)((const char *)base +
                                                                        f->n_off);
        if ((f->type == FT_OBJECT || f->type == FT_MAYBE) && present &&
            check_ints(f->sub, base, path, what, err, errlen) != 0)
            return -1;
        if (f->type == FT_ARRAY && check_elements(f, base, path, what, err, errlen) != 0)
            return -1;
        if ((f->type != FT_INT && f->type != FT_COUNT) || !f->hi)
            continue;
        long long v = int_at(f, base);
        if ((f->type == FT_INT || v >= 0) && (v < f->lo || v > f->hi))
            return cn_fail(err, errlen, -CN_EFORMAT, "%s: %s is %lld, out of range (%lld..%lld)",
                           what, path, v, f->lo, f->hi);
    }
    return 0;
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
    if (check_ints(record_run_fields, r, "", what, err, errlen) != 0)
        return -CN_EFORMAT;
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

/*
 * settings.c: the table of run settings and the functions that read it
 * (see cnntop/settings.h).  Parsing, formatting, the range texts and the
 * engine's check all go by the row's type, so a row is the only place a
 * setting's range, default or names are written.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/dist.h"
#include "cnntop/settings.h"
#include "util/err.h"

static const SettingName augment_names[] = {
    {"shift", CN_AUG_SHIFT}, {"rotate", CN_AUG_ROTATE}, {"elastic", CN_AUG_ELASTIC}, {NULL, 0},
};

static const SettingName gemm_names[] = {
    {"auto", CN_GEMM_AUTO}, {"openblas", CN_GEMM_OPENBLAS}, {"native", CN_GEMM_NATIVE},
    {NULL, 0},
};

static const SettingName dist_names[] = {
    {"none", CN_DIST_NONE}, {"mpi", CN_DIST_MPI}, {NULL, 0},
};

static const SettingName bn_names[] = {
    {"sync", CN_BN_SYNC}, {"local", CN_BN_LOCAL}, {NULL, 0},
};

#define F(field) offsetof(RunConfig, field)
/* The order is the settings file's (keys a file lacks are added in it). */
const Setting settings_run[] = {
    {.key = "batch", .what = "batch size", .arg = "N", .type = SETTING_INT, .offset = F(batch),
     .min = 1, .max = CN_MAX_BATCH, .dflt = 64, .flags = SETTING_LIVE,
     .help = "images per training step"},
    {.key = "workers", .what = "workers", .arg = "N", .type = SETTING_INT, .offset = F(workers),
     .min = 0, .max = CN_MAX_WORKERS, .zero = "load inline on the trainer",
     .flags = SETTING_LIVE, .help = "loader threads"},
    {.key = "prefetch", .what = "prefetch", .arg = "N", .type = SETTING_INT,
     .offset = F(prefetch), .min = 0, .max = CN_MAX_PREFETCH, .zero = "two per worker",
     .label0 = "auto", .flags = SETTING_LIVE, .help = "loader queue capacity in batches"},
    {.key = "threads", .what = "threads", .arg = "N", .type = SETTING_INT, .offset = F(threads),
     .min = 0, .max = CN_MAX_THREADS, .zero = "every core this process may use",
     .label0 = "all", .flags = SETTING_OPT_NONZERO, .help = "compute threads"},
    {.key = "epochs", .what = "epochs", .arg = "N", .type = SETTING_INT, .offset = F(epochs),
     .min = 1, .max = CN_MAX_EPOCHS, .dflt = 1, .help = "epochs to train (when steps is 0)"},
    {.key = "steps", .what = "steps", .arg = "N", .type = SETTING_LONG, .offset = F(steps),
     .min = 0, .max = CN_MAX_STEPS, .zero = "whole epochs", .label0 = "epochs",
     .flags = SETTING_OPT_NONZERO, .help = "optimiser steps to train instead of whole epochs"},
    {.key = "limit", .what = "limit", .arg = "N", .type = SETTING_LONG, .offset = F(limit),
     .min = 0, .max = CN_MAX_IMAGES, .zero = "all", .label0 = "all",
     .flags = SETTING_OPT_NONZERO, .help = "train on the first N training images only"},
    {.key = "test_limit", .what = "test limit", .arg = "N", .type = SETTING_LONG,
     .offset = F(test_limit), .min = 0, .max = CN_MAX_IMAGES, .zero = "all", .label0 = "all",
     .flags = SETTING_OPT_NONZERO, .help = "evaluate on the first N test images only"},
    {.key = "lr", .what = "learning rate", .arg = "X", .type = SETTING_REAL, .offset = F(lr),
     .min = 0, .max = 10, .tiny = FLT_MIN,
     .why_tiny = "the smallest normal float (every update would vanish)", .dflt = 1e-3,
     .help = "Adam learning rate"},
    {.key = "augment", .what = "augmentation", .arg = "LIST", .type = SETTING_FLAGS,
     .offset = F(augment), .names = augment_names,
     .help = "augmentations of the training images: none, or a comma list of"},
    {.key = "seed", .what = "seed", .arg = "N", .type = SETTING_U64, .offset = F(seed),
     .dflt = 1, .help = "seed for initial weights, shuffling and dropout"},
    {.key = "gemm", .what = "GEMM path", .arg = "PATH", .type = SETTING_CHOICE,
     .offset = F(gemm), .dflt = CN_GEMM_AUTO, .names = gemm_names,
     .help = "where the Winograd convolutions' GEMMs run (on AVX-512 the fc layers' too); auto: the fastest measured, native on a CPU with AVX2 or AVX-512"},
    {.key = "bn", .what = "BatchNorm statistics", .arg = "MODE", .type = SETTING_CHOICE,
     .offset = F(bn_local), .dflt = CN_BN_SYNC, .names = bn_names,
     .help = "with several ranks: sync (over every rank's images, as one process) or local "
             "(each rank's own, PyTorch DDP's default)"},
    {.key = "data", .what = "data directory", .arg = "DIR", .type = SETTING_PATH,
     .offset = F(data_dir), .label0 = "default",
     .help = "directory with the four MNIST-format IDX files (plain or .gz)"},
    {.key = "eval_every", .what = "eval_every", .arg = "N", .type = SETTING_LONG,
     .offset = F(eval_every), .min = 0, .max = CN_MAX_STEPS, .zero = "at each epoch's end only",
     .flags = SETTING_OPT_NONZERO | SETTING_NO_FILE,
     .help = "evaluate every N steps as well as at each epoch's end"},
    {.key = "dist", .what = "distribution", .arg = "KIND", .type = SETTING_CHOICE,
     .offset = F(dist), .dflt = CN_DIST_NONE, .names = dist_names, .flags = SETTING_NO_FILE,
     .help = "mpi: be one rank of an MPI job (mpirun -np N cnntop run --dist mpi); "
             "--batch is the job's"},
    {.key = NULL},
};
#undef F

const Setting *settings_find(const Setting *table, const char *key)
{
    for (const Setting *s = table; s->key; s++)
        if (!strcmp(s->key, key))
            return s;
    return NULL;
}

double settings_min(const Setting *s, int opt)
{
    return opt && (s->flags & SETTING_OPT_NONZERO) && s->min == 0 ? 1 : s->min;
}

/* "a, b or c" of the names (FLAGS: "a, b, c", any of them). */
static void names_text(const Setting *s, char *buf, size_t len)
{
    size_t n = 0, k = 0;

    buf[0] = '\0';
    while (s->names[k].name)
        k++;
    for (size_t i = 0; i < k && n < len; i++) {
        const char *sep = i == 0 ? "" : i + 1 < k || s->type == SETTING_FLAGS ? ", " : " or ";
        n += (size_t)snprintf(buf + n, len - n, "%s%s", sep, s->names[i].name);
    }
}

void settings_range_text(const Setting *s, int opt, char *buf, size_t len)
{
    switch (s->type) {
    case SETTING_INT: case SETTING_LONG:
        snprintf(buf, len, "%.0f..%.0f", settings_min(s, opt), s->max);
        break;
    case SETTING_U64: snprintf(buf, len, "0..%llu", (unsigned long long)UINT64_MAX); break;
    case SETTING_REAL:
        if (isinf(s->max))
            snprintf(buf, len, "above %g and finite", s->min);
        else
            snprintf(buf, len, "(%g..%g]", s->min, s->max);
        break;
    case SETTING_FLAGS: case SETTING_CHOICE: names_text(s, buf, len); break;
    default: snprintf(buf, len, "a directory"); break;
    }
}

/* The row's default in a field of its type, for settings_format_field(). */
typedef union SettingValue {
    int i;
    long l;
    uint64_t u;
    double d;
    unsigned bits;
    const char *path;
} SettingValue;

static SettingValue default_value(const Setting *s)
{
    SettingValue v;

    memset(&v, 0, sizeof v);
    switch (s->type) {
    case SETTING_INT: case SETTING_CHOICE: v.i = (int)s->dflt; break;
    case SETTING_LONG: v.l = (long)s->dflt; break;
    case SETTING_U64: v.u = (uint64_t)s->dflt; break;
    case SETTING_REAL: v.d = s->dflt; break;
    case SETTING_FLAGS: v.bits = (unsigned)s->dflt; break;
    default: v.path = NULL; break;
    }
    return v;
}

void settings_default_text(const Setting *s, int opt, char *buf, size_t len)
{
    SettingValue v = default_value(s);

    char text[128];
    /* 0 is a value the user may give (rather than what leaving it out means). */
    int zero_given = (s->type == SETTING_INT || s->type == SETTING_LONG) && settings_min(s, opt) == 0;

    if (s->type == SETTING_PATH)
        snprintf(buf, len, "default %s", CN_DEFAULT_DATA_DIR);
    else if (s->dflt == 0 && s->zero)
        snprintf(buf, len, "default%s: %s", zero_given ? " 0" : "", s->zero);
    else {
        settings_format_field(s, &v, text, sizeof text);
        snprintf(buf, len, "default %s", text);
    }
}

/* --- parsing ----------------------------------------------------------- */

static int parse_whole(const Setting *s, const char *name, const char *t, int opt, void *field,
                       char *err, size_t errlen)
{
    char *end, range[64];

    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (*t == '\0' || *end != '\0')
        return cn_fail(err, errlen, -CN_EINVAL, "%s: '%.80s' is not a whole number", name, t);
    if (errno == ERANGE || v < settings_min(s, opt) || v > s->max) {
        settings_range_text(s, opt, range, sizeof range);
        return cn_fail(err, errlen, -CN_EINVAL, "%s: %.80s is out of range (%s)", name, t, range);
    }
    if (s->type == SETTING_INT)
        *(int *)field = (int)v;
    else
        *(long *)field = (long)v;
    return 0;
}

static int parse_u64(const char *name, const char *t, void *field, char *err, size_t errlen)
{
    char *end;

    errno = 0;
    unsigned long long v = strtoull(t, &end, 10);
    if (*t == '\0' || *end != '\0' || strchr(t, '-'))
        return cn_fail(err, errlen, -CN_EINVAL, "%s: '%.80s' is not a non-negative whole number",
                       name, t);
    if (errno == ERANGE)
        return cn_fail(err, errlen, -CN_EINVAL, "%s: %.80s is out of range (0..%llu)", name, t,
                       (unsigned long long)UINT64_MAX);
    *(uint64_t *)field = (uint64_t)v;
    return 0;
}

static int parse_real(const Setting *s, const char *name, const char *t, void *field, char *err,
                      size_t errlen)
{
    char *end, range[64];

    errno = 0;
    double v = strtod(t, &end);
    if (*t == '\0' || *end != '\0' || isnan(v) || (isinf(v) && errno != ERANGE))
        return cn_fail(err, errlen, -CN_EINVAL, "%s: '%.80s' is not a finite number", name, t);
    if (!(v > s->min && v <= s->max) || isinf(v)) { /* 1e999 overflows: out of range too */
        settings_range_text(s, 0, range, sizeof range);
        return cn_fail(err, errlen, -CN_EINVAL, range[0] == '(' ? "%s: %.80s is out of range %s"
                                                                : "%s: %.80s is out of range (%s)",
                       name, t, range);
    }
    if (v < s->tiny)
        return cn_fail(err, errlen, -CN_EINVAL, "%s: %.80s is too small: below %g, %s", name, t,
                       s->tiny, s->why_tiny);
    *(double *)field = v;
    return 0;
}

/* The value of the name t[0..len), or -1. */
static int name_value(const Setting *s, const char *t, size_t len)
{
    for (const SettingName *n = s->names; n->name; n++)
        if (strlen(n->name) == len && !strncmp(t, n->name, len))
            return n->value;
    return -1;
}

static int parse_flags(const Setting *s, const char *name, const char *t, void *field, char *err,
                       size_t errlen)
{
    unsigned bits = 0;
    char list[128];

    names_text(s, list, sizeof list);
    if (!*t)
        return cn_fail(err, errlen, -CN_EINVAL, "%s: empty list (none, or a comma list of %s)",
                       name, list);
    if (*t == ',' || t[strlen(t) - 1] == ',' || strstr(t, ",,"))
        return cn_fail(err, errlen, -CN_EINVAL, "%s: '%.80s': an empty %s name in the list",
                       name, t, s->what);
    if (strcmp(t, "none") != 0)
        while (*t) {
            size_t len = strcspn(t, ",");
            int v = name_value(s, t, len);
            if (v < 0)
                return cn_fail(err, errlen, -CN_EINVAL, "%s: unknown %s '%.*s' (%s)", name,
                               s->what, (int)(len < 80 ? len : 80), t, list);
            bits |= (unsigned)v;
            t += len + (t[len] == ',');
        }
    *(unsigned *)field = bits;
    return 0;
}

static int parse_choice(const Setting *s, const char *name, const char *t, void *field,
                        char *err, size_t errlen)
{
    char list[128];

    for (const SettingName *n = s->names; n->name; n++)
        if (!strcmp(t, n->name)) {
            *(int *)field = n->value;
            return 0;
        }
    names_text(s, list, sizeof list);
    return cn_fail(err, errlen, -CN_EINVAL, "%s: '%.80s' is not %s", name, t, list);
}

int settings_parse_field(const Setting *s, const char *name, const char *text, int opt,
                         void *field, char *err, size_t errlen)
{
    switch (s->type) {
    case SETTING_INT: case SETTING_LONG:
        return parse_whole(s, name, text, opt, field, err, errlen);
    case SETTING_U64: return parse_u64(name, text, field, err, errlen);
    case SETTING_REAL: return parse_real(s, name, text, field, err, errlen);
    case SETTING_FLAGS: return parse_flags(s, name, text, field, err, errlen);
    case SETTING_CHOICE: return parse_choice(s, name, text, field, err, errlen);
    default:
        *(const char **)field = *text ? text : NULL;
        return 0;
    }
}

int settings_parse(const Setting *s, const char *name, const char *text, int opt, void *base,
                   char *err, size_t errlen)
{
    return settings_parse_field(s, name, text, opt, (char *)base + s->offset, err, errlen);
}

/* --- formatting -------------------------------------------------------- */

static void format_flags(const Setting *s, unsigned bits, char *buf, size_t len)
{
    size_t n = 0;

    buf[0] = '\0';
    for (const SettingName *k = s->names; k->name; k++)
        if (bits & (unsigned)k->value)
            n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "", k->name);
    if (!n)
        snprintf(buf, len, "none");
}

void settings_format_field(const Setting *s, const void *field, char *buf, size_t len)
{
    const char *path;

    switch (s->type) {
    case SETTING_INT: snprintf(buf, len, "%d", *(const int *)field); break;
    case SETTING_LONG: snprintf(buf, len, "%ld", *(const long *)field); break;
    case SETTING_U64:
        snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)field);
        break;
    case SETTING_REAL: snprintf(buf, len, "%.9g", *(const double *)field); break;
    case SETTING_FLAGS: format_flags(s, *(const unsigned *)field, buf, len); break;
    case SETTING_CHOICE:
        snprintf(buf, len, "%d", *(const int *)field);
        for (const SettingName *k = s->names; k->name; k++)
            if (k->value == *(const int *)field)
                snprintf(buf, len, "%s", k->name);
        break;
    default:
        path = *(const char *const *)field;
        snprintf(buf, len, "%s", path ? path : "");
        break;
    }
}

void settings_format(const Setting *s, const void *base, char *buf, size_t len)
{
    settings_format_field(s, (const char *)base + s->offset, buf, len);
}

/* --- the engine's check ------------------------------------------------- */

static int check_whole(const Setting *s, long long v, char *err, size_t errlen)
{
    char range[64];

    if (v >= s->min && v <= s->max)
        return 0;
    settings_range_text(s, 0, range, sizeof range);
    return cn_fail(err, errlen, -CN_EINVAL, "%s %lld out of range (%s%s%s)", s->what, v, range,
                   s->zero ? "; 0: " : "", s->zero ? s->zero : "");
}

static int check_real(const Setting *s, double v, char *err, size_t errlen)
{
    char range[64];

    settings_range_text(s, 0, range, sizeof range);
    if (!isfinite(v) || !(v > s->min && v <= s->max))
        return cn_fail(err, errlen, -CN_EINVAL, range[0] == '(' ? "%s %g out of range %s"
                                                                : "%s %g out of range (%s)",
                       s->what, v, range);
    if (v < s->tiny)
        return cn_fail(err, errlen, -CN_EINVAL, "%s %g too small: below %g, %s", s->what, v,
                       s->tiny, s->why_tiny);
    return 0;
}

static int check_named(const Setting *s, int v, char *err, size_t errlen)
{
    char list[128];
    unsigned all = 0;

    for (const SettingName *k = s->names; k->name; k++) {
        if (s->type == SETTING_CHOICE && k->value == v)
            return 0;
        all |= (unsigned)k->value;
    }
    if (s->type == SETTING_FLAGS && !((unsigned)v & ~all))
        return 0;
    names_text(s, list, sizeof list);
    if (s->type == SETTING_FLAGS)
        return cn_fail(err, errlen, -CN_EINVAL, "%s bits 0x%x unknown (%s)", s->what,
                       (unsigned)v & ~all, list);
    return cn_fail(err, errlen, -CN_EINVAL, "%s %d is not %s", s->what, v, list);
}

int settings_check(const Setting *s, const void *base, char *err, size_t errlen)
{
    const void *field = (const char *)base + s->offset;

    switch (s->type) {
    case SETTING_INT: return check_whole(s, *(const int *)field, err, errlen);
    case SETTING_LONG: return check_whole(s, *(const long *)field, err, errlen);
    case SETTING_REAL: return check_real(s, *(const double *)field, err, errlen);
    case SETTING_FLAGS: return check_named(s, (int)*(const unsigned *)field, err, errlen);
    case SETTING_CHOICE: return check_named(s, *(const int *)field, err, errlen);
    default: return 0; /* any seed; a path is checked when it is opened */
    }
}

void settings_set_defaults(const Setting *table, void *base)
{
    static const size_t size[] = {
        [SETTING_INT] = sizeof(int), [SETTING_LONG] = sizeof(long),
        [SETTING_U64] = sizeof(uint64_t), [SETTING_REAL] = sizeof(double),
        [SETTING_FLAGS] = sizeof(unsigned), [SETTING_CHOICE] = sizeof(int),
        [SETTING_PATH] = sizeof(const char *)};

    for (const Setting *s = table; s->key; s++) {
        SettingValue v = default_value(s);
        memcpy((char *)base + s->offset, &v, size[s->type]);
    }
}

int settings_check_config(const RunConfig *c, char *err, size_t errlen)
{
    for (const Setting *s = settings_run; s->key; s++) {
        int rc = settings_check(s, c, err, errlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A run's defaults are the run table's (engine.h). */
void engine_config_default(RunConfig *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    settings_set_defaults(settings_run, cfg);
}

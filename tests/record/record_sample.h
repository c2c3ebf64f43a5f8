/*
 * record_sample.h: what the record's tests share (test_record.c,
 * test_record_fields.c): a temporary directory and files in it, a record
 * built by hand, and a comparison of two records member by member, walking
 * the field table (src/record/fields.h) so that a new member is compared
 * without being listed again here.
 */
#ifndef CNNTOP_TEST_RECORD_SAMPLE_H
#define CNNTOP_TEST_RECORD_SAMPLE_H

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/fileio.h"
#include "cnntop/json.h"
#include "cnntop/record.h"
#include "record/fields.h"

static char dir[256];

static inline const char *in_dir(const char *name)
{
    static char path[4][512];
    static int k;

    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static inline char *slurp(const char *path)
{
    unsigned char *buf;
    size_t len;
    char err[256];

    if (fileio_read_all(path, 1 << 24, &buf, &len, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    return (char *)buf;
}

static inline void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* The series of build()'s record: epochs, samples, segments, layers,
 * counters, repeats. */
static inline void build_series(RunRecord *r)
{
    for (int e = 0; e < 3; e++) {
        RecordEpoch ep = {.epoch = e, .loss = 0.9 - 0.2 * e, .accuracy = e == 1 ? NAN : 0.8 + 0.02 * e,
                          .wall = 4.0 * (e + 1)};
        CHECK_INT(record_add_epoch(r, &ep), ==, 0);
    }
    /* The engine's figures, then the counters' additions: sample 1 has no
     * queue (inline loading) and no counters. */
    Sample s0 = {.t = 0.5, .dt = 0.125, .step = 10, .images = 640, .loss = 2.25f, .images_per_s = 1234.5f,
                 .queue_fill = 0.75f, .data_wait_share = 0.125f, .workers = 2, .batch = 64,
                 .segment = 0};
    Sample s1 = {.t = 1.0, .dt = 0.5, .step = 20, .images = 1280, .loss = 1.5f, .images_per_s = 1300.25f,
                 .queue_fill = -1, .data_wait_share = 0.5f, .workers = 0, .batch = 64,
                 .segment = 1};
    CHECK_INT(record_add_sample(r, &s0, 0, 1.75, 0.0625), ==, 0);
    CHECK_INT(record_add_sample(r, &s1, -1, NAN, NAN), ==, 0);
    for (int i = 0; i < 300; i++) { /* enough to make the arrays grow */
        Sample s = s0;
        s.t = 1.5 + i;
        s.step = 30 + i;
        CHECK_INT(record_add_sample(r, &s, 1 + i / 100, 1.0 + i / 1024.0, 0.01), ==, 0);
    }
    Segment sg0 = {.first_step = 0, .steps = 15, .t0 = 0, .wall = 0.75, .batch = 64, .workers = 2,
                   .prefetch = 4, .images = 960, .images_per_s = 1280.5, .images_per_s_sd = 20.25,
                   .warmup_steps = 3};
    Segment sg1 = sg0;
    sg1.first_step = 15;
    sg1.workers = 0;
    sg1.images_per_s_sd = 0;
    CHECK_INT(record_add_segment(r, &sg0), ==, 0);
    CHECK_INT(record_add_segment(r, &sg1), ==, 0);
    LayerTime lt0 = {.name = "conv2 bwd", .seconds = 3.25, .calls = 282, .flops = 6.5e12,
                     .flops_executed = 1.625e12};
    LayerTime lt1 = {.name = "relu1 fwd", .seconds = 0.125, .calls = 282};
    CHECK_INT(record_add_layer(r, &lt0), ==, 0);
    CHECK_INT(record_add_layer(r, &lt1), ==, 0);
    CHECK_NEAR(r->layers[0].gflops, 2000.0, 1e-9);
    CHECK_NEAR(r->layers[0].gflops_executed, 500.0, 1e-9);
    CHECK(isnan(r->layers[1].gflops) && isnan(r->layers[1].flops_executed));
    RecordCounter c0 = {.role = CN_ROLE_TRAIN, .name = "instructions", .value = 1.5e12,
                        .unit = "", .scaled = 0.5, .status = RECORD_CTR_OK, .reason = ""};
    RecordCounter c1 = {.role = CN_ROLE_LOAD, .name = "cache-misses", .value = NAN, .unit = "",
                        .scaled = NAN, .status = RECORD_CTR_UNAVAILABLE,
                        .reason = "perf_event_paranoid is 3"};
    RecordCounter c2 = {.role = CN_ROLE_TRAIN, .name = "task-clock", .value = NAN, .unit = "msec",
                        .scaled = 0, .status = RECORD_CTR_NOT_COUNTED, .reason = "never ran"};
    CHECK_INT(record_add_counter(r, &c0), ==, 0);
    CHECK_INT(record_add_counter(r, &c1), ==, 0);
    CHECK_INT(record_add_counter(r, &c2), ==, 0);
    const double walls[] = {12.5, 12.75, 12.25};
    for (int i = 0; i < 3; i++) {
        RecordRepeat p = {.wall = walls[i], .images_per_s = 18000 / walls[i], .user = 80 + i,
                          .system = 1.5, .accuracy = i == 2 ? NAN : 0.85, .exit_code = 0};
        CHECK_INT(record_add_repeat(r, &p), ==, 0);
    }
}

/* A record with every member set, some figures unknown (peak, miss rate,
 * error, target; no evaluations during training). */
static inline void build(RunRecord *r)
{
    char *argv[] = {"cnntop", "run", "--batch", "64", "--data", "/tmp/my data's dir"};
    RunConfig cfg;

    record_init(r);
    snprintf(r->date, sizeof r->date, "2025-01-31T12:34:56Z");
    CHECK_INT(record_set_command(r, 6, argv), ==, 0);
    CHECK(!strcmp(r->command, "cnntop run --batch 64 --data '/tmp/my data'\\''s dir'"));
    engine_config_default(&cfg);
    cfg.batch = 64;
    cfg.epochs = 3;
    cfg.steps = 0;
    cfg.limit = 6000;
    cfg.test_limit = 1000;
    cfg.threads = 0;
    cfg.lr = 0.001;
    cfg.seed = UINT64_MAX - 5; /* does not fit a double: must survive exactly */
    cfg.workers = 2;
    cfg.prefetch = 4;
    cfg.augment = CN_AUG_SHIFT | CN_AUG_ELASTIC;
    cfg.data_dir = "/usr/share/datasets/fashion-mnist";
    CHECK_INT(record_set_config(r, &cfg), ==, 0);
    CHECK(r->config.data_dir == r->data_dir && !strcmp(r->data_dir, cfg.data_dir));
    r->train_images = 6000;
    r->test_images = 1000;
    r->threads_used = 8;
    snprintf(r->machine.cpu_model, sizeof r->machine.cpu_model, "AMD EPYC \"9B45\" | x");
    r->machine.cores = 8;
    snprintf(r->machine.blas_core, sizeof r->machine.blas_core, "Zen");
    snprintf(r->machine.blas_config, sizeof r->machine.blas_config, "OpenBLAS 0.3.21 DYNAMIC_ARCH");
    r->peak_gflops = NAN; /* not calibrated */
    r->fma_peak_gflops = 400.0;
    snprintf(r->fma_peak_isa, sizeof r->fma_peak_isa, "AVX-512");
    snprintf(r->machine.cpu_isa, sizeof r->machine.cpu_isa, "AVX-512");
    snprintf(r->machine.blas_isa, sizeof r->machine.blas_isa, "AVX2+FMA");
    snprintf(r->machine.blas_note, sizeof r->machine.blas_note, "OPENBLAS_CORETYPE=Zen selects");
    r->flops_per_image = 46.8e6;
    r->flops_executed_per_image = 17032704.0;
    r->train = (TrainStats){.steps = 282, .images = 18000, .epochs_done = 3, .wall = 12.5,
                            .images_per_s = 1440.0, .cpu_user = 80.25, .cpu_sys = 1.5,
                            .minor_faults = 12345, .last_loss = 0.4375f, .final_loss = 0.51,
                            .stopped = 0,
                            .split = {.data = 0.5, .forward = 4, .backward = 7, .optimizer = 1}};
    r->have_eval = 1;
    r->eval = (EvalResult){.images = 1000, .correct = 853, .accuracy = 0.853, .loss = 0.41,
                           .wall = 0.25};
    r->peak_rss_kib = 204800;
    r->loader_samples_per_s = 5120.5;
    r->run_queue_wait = 0.3125;
    r->ipc = 1.5;
    snprintf(r->miss_rate_na, sizeof r->miss_rate_na, "cache-misses not supported: no PMU");
    r->interrupted = 0;
    r->exit_code = 0;
    CHECK_INT(record_set_label(r, "batch 64, 2 workers"), ==, 0);
    build_series(r);
}

/* Makes the temporary directory, or skips the test. */
static inline void make_dir(const char *name)
{
    snprintf(dir, sizeof dir, "%s/%s-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    if (!mkdtemp(dir))
        check_skip("cannot make a temporary directory");
}

/* An int or a long member, by its size. */
static inline long long field_int(const Field *f, const void *base)
{
    const void *p = field_cat(f, base);
    return f->size == sizeof(int) ? *(const int *)p : *(const long *)p;
}

/* A double or a float member, by its size. */
static inline double field_num(const Field *f, const void *base)
{
    const void *p = field_cat(f, base);
    return f->size == sizeof(float) ? *(const float *)p : *(const double *)p;
}

/* What field_set_unknown() puts there (an absent array: empty). */
static inline int field_unknown(const Field *f, const void *base)
{
    const void *p = field_cat(f, base);

    switch (f->type) {
    case FT_STR: case FT_STR_NA: return *(const char *)p == '\0';
    case FT_DUP: return *(char *const *)p == NULL;
    case FT_NUM: return isnan(field_num(f, base));
    case FT_COUNT: return field_int(f, base) < 0;
    case FT_FILL: return *(const float *)p < 0;
    case FT_ARRAY: return *(const size_t *)((const char *)base + f->n_off) == 0;
    case FT_MAYBE: return *(const int *)((const char *)base + f->n_off) == 0; /* null */
    case FT_NAME: return *(const unsigned *)p == f->names->v[0].value;
    default: return 0;
    }
}

static inline void compare_fields(const Field *fields, const void *a, const void *b,
                                  const char *where, int rev);

/* Member f of a and b: equal, NaN equal to NaN, bit-exact otherwise. */
static inline int field_same(const Field *f, const void *a, const void *b, const char *where,
                             int rev)
{
    const void *p = field_cat(f, a), *q = field_cat(f, b);
    const char *s, *t;
    double x, y;

    switch (f->type) {
    case FT_STR: case FT_STR_NA: return !strcmp(p, q);
    case FT_DUP:
        s = *(char *const *)p;
        t = *(char *const *)q;
        return (!s && !t) || (s && t && !strcmp(s, t));
    case FT_INT: case FT_COUNT: return field_int(f, a) == field_int(f, b);
    case FT_UINT64: return *(const uint64_t *)p == *(const uint64_t *)q;
    case FT_BOOL: case FT_NAME: case FT_FLAGS: return *(const int *)p == *(const int *)q;
    case FT_NUM: case FT_FILL:
        x = f->type == FT_FILL ? *(const float *)p : field_num(f, a);
        y = f->type == FT_FILL ? *(const float *)q : field_num(f, b);
        return (isnan(x) && isnan(y)) || x == y;
    case FT_MAYBE:
        if (*(const int *)((const char *)a + f->n_off) != *(const int *)((const char *)b + f->n_off))
            return 0;
        /* fall through */
    case FT_OBJECT:
        compare_fields(f->sub, a, b, where, rev);
        return 1;
    case FT_ARRAY: {
        size_t n = *(const size_t *)((const char *)a + f->n_off);
        s = *(char *const *)p;
        t = *(char *const *)q;
        if (n != *(const size_t *)((const char *)b + f->n_off))
            return 0;
        for (size_t i = 0; i < n; i++) {
            char at[128];
            if (snprintf(at, sizeof at, "%s[%zu]", where, i) >= (int)sizeof at)
                check_failed++; /* a path too long to name */
            compare_fields(f->sub, (const char *)s + i * f->size, (const char *)t + i * f->size,
                           at, rev);
        }
        return 1;
    }
    default: return 1; /* computed when written */
    }
}

/*
 * a and b hold the same in every member of the table (b read back from
 * what a wrote), except that members of a revision after rev must be
 * unknown in b (b read from a file of revision rev).  Each difference is a
 * failed check naming the member.
 */
static inline void compare_fields(const Field *fields, const void *a, const void *b,
                                  const char *where, int rev)
{
    for (const Field *f = fields; f->key; f++) {
        char at[128];
        int ok;
        if (f->type == FT_DERIVED)
            continue; /* computed when written, not read */
        if (snprintf(at, sizeof at, "%s%s%s", where, *where ? "." : "", f->key) >= (int)sizeof at)
            check_failed++; /* a path too long to name */
        ok = f->since > rev ? field_unknown(f, b) : field_same(f, a, b, at, rev);
        check_count++;
        if (!ok) {
            check_failed++;
            fprintf(stderr, "%s: differs after reading back (%s)\n", at,
                    f->since > rev ? "should be unknown" : f->doc);
        }
    }
}

static inline void compare(const RunRecord *a, const RunRecord *b)
{
    compare_fields(record_run_fields, a, b, "", RECORD_REVS);
    CHECK(b->config.data_dir == b->data_dir);
}

/* Removes the directory and what the test left in it. */
static inline void cleanup(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.')
            unlink(in_dir(e->d_name));
    if (d)
        closedir(d);
    rmdir(dir);
}

#endif

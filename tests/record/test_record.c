/*
 * test_record.c: the run record and its exports, read back.
 *
 * A record built by hand (every field set, some figures unknown) is
 * exported as JSON, CSV and Markdown into a fresh temporary directory; the
 * JSON is read back and compared field by field, bit for bit; the CSV has
 * its header and one row per sample with empty cells for what is unknown;
 * the Markdown has its tables.  Then the refusals: an existing file without
 * --force, an unknown extension, a missing directory, another schema
 * version, a broken file (with line:column), a file that is not a cnntop
 * record; and no temporary file is left behind.  A sweep of two records
 * goes through the same.  When hyperfine is installed, its own JSON export
 * is made and every field name of its "results" must be in cnntop's.
 */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/json.h"
#include "cnntop/record.h"
#include "cnntop/fileio.h"

static char dir[256];

static const char *in_dir(const char *name)
{
    static char path[4][512];
    static int k;

    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static char *slurp(const char *path)
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

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void build(RunRecord *r)
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

    for (int e = 0; e < 3; e++) {
        RecordEpoch ep = {.epoch = e, .loss = 0.9 - 0.2 * e, .accuracy = e == 1 ? NAN : 0.8 + 0.02 * e,
                          .wall = 4.0 * (e + 1)};
        CHECK_INT(record_add_epoch(r, &ep), ==, 0);
    }
    /* The engine's figures, then the counters' additions: sample 1 has no
     * queue (inline loading) and no counters. */
    Sample s0 = {.t = 0.5, .step = 10, .images = 640, .loss = 2.25f, .images_per_s = 1234.5f,
                 .queue_fill = 0.75f, .data_wait_share = 0.125f, .workers = 2, .batch = 64,
                 .segment = 0};
    Sample s1 = {.t = 1.0, .step = 20, .images = 1280, .loss = 1.5f, .images_per_s = 1300.25f,
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
    LayerTime lt0 = {.name = "conv2 bwd", .seconds = 3.25, .calls = 282};
    LayerTime lt1 = {.name = "relu1 fwd", .seconds = 0.125, .calls = 282};
    CHECK_INT(record_add_layer(r, &lt0, 6.5e12), ==, 0);
    CHECK_INT(record_add_layer(r, &lt1, NAN), ==, 0);
    CHECK_NEAR(r->layers[0].gflops, 2000.0, 1e-9);
    CHECK(isnan(r->layers[1].gflops));
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

static int starts(const char *s, const char *prefix)
{
    int ok = !strncmp(s, prefix, strlen(prefix));
    if (!ok)
        fprintf(stderr, "\"%s\" does not start with \"%s\"\n", s, prefix);
    return ok;
}

/* Equal, or both NaN; bit-exact otherwise. */
static int same(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

#define SAME(a, b)                                                             \
    do {                                                                       \
        check_count++;                                                         \
        if (!same((double)(a), (double)(b))) {                                 \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: %s: %.17g != %.17g\n", __FILE__, __LINE__, #a, \
                    (double)(a), (double)(b));                                 \
        }                                                                      \
    } while (0)
#define SAME_STR(a, b) CHECK(((a) == NULL && (b) == NULL) || ((a) && (b) && !strcmp((a), (b))))

static void compare(const RunRecord *a, const RunRecord *b)
{
    SAME_STR(a->version, b->version);
    SAME_STR(a->date, b->date);
    SAME_STR(a->command, b->command);
    SAME_STR(a->label, b->label);
    SAME_STR(a->data_dir, b->data_dir);
    CHECK(b->config.data_dir == b->data_dir);
    SAME(a->config.batch, b->config.batch);
    SAME(a->config.epochs, b->config.epochs);
    SAME(a->config.steps, b->config.steps);
    SAME(a->config.limit, b->config.limit);
    SAME(a->config.test_limit, b->config.test_limit);
    SAME(a->config.threads, b->config.threads);
    SAME(a->config.lr, b->config.lr);
    CHECK(a->config.seed == b->config.seed);
    SAME(a->config.workers, b->config.workers);
    SAME(a->config.prefetch, b->config.prefetch);
    SAME(a->config.augment, b->config.augment);
    SAME(a->train_images, b->train_images);
    SAME(a->test_images, b->test_images);
    SAME(a->threads_used, b->threads_used);
    SAME_STR(a->machine.cpu_model, b->machine.cpu_model);
    SAME(a->machine.cores, b->machine.cores);
    SAME_STR(a->machine.blas_core, b->machine.blas_core);
    SAME_STR(a->machine.blas_config, b->machine.blas_config);
    SAME_STR(a->machine.blas_warning, b->machine.blas_warning);
    SAME(a->peak_gflops, b->peak_gflops);
    SAME(a->fma_peak_gflops, b->fma_peak_gflops);
    SAME_STR(a->fma_peak_isa, b->fma_peak_isa);
    SAME_STR(a->machine.cpu_isa, b->machine.cpu_isa);
    SAME_STR(a->machine.blas_isa, b->machine.blas_isa);
    SAME_STR(a->machine.blas_note, b->machine.blas_note);
    SAME(a->flops_per_image, b->flops_per_image);
    SAME(a->flops_executed_per_image, b->flops_executed_per_image);
    const TrainStats *x = &a->train, *y = &b->train;
    SAME(x->steps, y->steps);
    SAME(x->images, y->images);
    SAME(x->epochs_done, y->epochs_done);
    SAME(x->wall, y->wall);
    SAME(x->images_per_s, y->images_per_s);
    SAME(x->cpu_user, y->cpu_user);
    SAME(x->cpu_sys, y->cpu_sys);
    SAME(x->minor_faults, y->minor_faults);
    SAME(x->last_loss, y->last_loss);
    SAME(x->final_loss, y->final_loss);
    SAME(x->stopped, y->stopped);
    SAME(x->split.data, y->split.data);
    SAME(x->split.forward, y->split.forward);
    SAME(x->split.backward, y->split.backward);
    SAME(x->split.optimizer, y->split.optimizer);
    SAME(a->have_eval, b->have_eval);
    SAME(a->eval.images, b->eval.images);
    SAME(a->eval.correct, b->eval.correct);
    SAME(a->eval.accuracy, b->eval.accuracy);
    SAME(a->eval.loss, b->eval.loss);
    SAME(a->eval.wall, b->eval.wall);
    SAME(a->peak_rss_kib, b->peak_rss_kib);
    SAME(a->loader_samples_per_s, b->loader_samples_per_s);
    SAME(a->run_queue_wait, b->run_queue_wait);
    SAME(a->ipc, b->ipc);
    SAME(a->miss_rate, b->miss_rate);
    CHECK(strcmp(a->ipc_na, b->ipc_na) == 0);
    CHECK(strcmp(a->miss_rate_na, b->miss_rate_na) == 0);
    SAME(a->interrupted, b->interrupted);
    SAME(a->exit_code, b->exit_code);
    SAME_STR(a->error, b->error);

    CHECK_INT(b->n_epochs, ==, a->n_epochs);
    for (size_t i = 0; i < a->n_epochs && i < b->n_epochs; i++) {
        SAME(a->epochs[i].epoch, b->epochs[i].epoch);
        SAME(a->epochs[i].loss, b->epochs[i].loss);
        SAME(a->epochs[i].accuracy, b->epochs[i].accuracy);
        SAME(a->epochs[i].wall, b->epochs[i].wall);
    }
    CHECK_INT(b->n_samples, ==, a->n_samples);
    for (size_t i = 0; i < a->n_samples && i < b->n_samples; i++) {
        const RecordSample *p = &a->samples[i], *q = &b->samples[i];
        SAME(p->s.t, q->s.t);
        SAME(p->s.step, q->s.step);
        SAME(p->s.images, q->s.images);
        SAME(p->s.loss, q->s.loss);
        SAME(p->s.images_per_s, q->s.images_per_s);
        SAME(p->s.queue_fill, q->s.queue_fill);
        SAME(p->s.data_wait_share, q->s.data_wait_share);
        SAME(p->s.workers, q->s.workers);
        SAME(p->s.batch, q->s.batch);
        SAME(p->s.segment, q->s.segment);
        SAME(p->epoch, q->epoch);
        SAME(p->ipc, q->ipc);
        SAME(p->miss_rate, q->miss_rate);
    }
    CHECK_INT(b->n_segments, ==, a->n_segments);
    for (size_t i = 0; i < a->n_segments && i < b->n_segments; i++) {
        const Segment *p = &a->segments[i], *q = &b->segments[i];
        SAME(p->first_step, q->first_step);
        SAME(p->steps, q->steps);
        SAME(p->t0, q->t0);
        SAME(p->wall, q->wall);
        SAME(p->batch, q->batch);
        SAME(p->workers, q->workers);
        SAME(p->prefetch, q->prefetch);
        SAME(p->images, q->images);
        SAME(p->images_per_s, q->images_per_s);
        SAME(p->images_per_s_sd, q->images_per_s_sd);
        SAME(p->warmup_steps, q->warmup_steps);
    }
    CHECK_INT(b->n_layers, ==, a->n_layers);
    for (size_t i = 0; i < a->n_layers && i < b->n_layers; i++) {
        SAME_STR(a->layers[i].name, b->layers[i].name);
        SAME(a->layers[i].seconds, b->layers[i].seconds);
        SAME(a->layers[i].calls, b->layers[i].calls);
        SAME(a->layers[i].flops, b->layers[i].flops);
        SAME(a->layers[i].gflops, b->layers[i].gflops);
    }
    CHECK_INT(b->n_counters, ==, a->n_counters);
    for (size_t i = 0; i < a->n_counters && i < b->n_counters; i++) {
        const RecordCounter *p = &a->counters[i], *q = &b->counters[i];
        SAME(p->role, q->role);
        SAME_STR(p->name, q->name);
        SAME(p->value, q->value);
        SAME_STR(p->unit, q->unit);
        SAME(p->scaled, q->scaled);
        SAME(p->status, q->status);
        SAME_STR(p->reason, q->reason);
    }
    CHECK_INT(b->n_repeats, ==, a->n_repeats);
    for (size_t i = 0; i < a->n_repeats && i < b->n_repeats; i++) {
        const RecordRepeat *p = &a->repeats[i], *q = &b->repeats[i];
        SAME(p->wall, q->wall);
        SAME(p->images_per_s, q->images_per_s);
        SAME(p->user, q->user);
        SAME(p->system, q->system);
        SAME(p->accuracy, q->accuracy);
        SAME(p->exit_code, q->exit_code);
    }
}

static void test_json_round_trip(const RunRecord *r)
{
    const char *path = in_dir("run.json");
    char err[512];
    RunRecord back;

    CHECK_INT(export_check(path, 0, err, sizeof err), ==, 0);
    CHECK_INT(record_export(r, path, 0, err, sizeof err), ==, 0);
    int rc = record_load_json(path, &back, err, sizeof err);
    CHECK_INT(rc, ==, 0);
    if (rc != 0)
        fprintf(stderr, "%s\n", err);
    else
        compare(r, &back);
    record_done(&back);

    /* The text itself: schema first, hyperfine's results, null for unknowns. */
    char *text = slurp(path);
    JsonValue *v = NULL;
    CHECK(text && starts(text, "{\n  \"schema\": \"cnntop.run/1\",\n"));
    CHECK(text && json_parse(text, strlen(text), &v, err, sizeof err) == 0);
    const JsonValue *res = json_at(json_get(v, "results"), 0);
    CHECK_INT(json_count(json_get(v, "results")), ==, 1);
    CHECK(!strcmp(json_as_string(json_get(res, "command"), ""), r->command));
    CHECK_NEAR(json_as_number(json_get(res, "mean"), 0), 12.5, 1e-12);
    CHECK_NEAR(json_as_number(json_get(res, "stddev"), 0), 0.25, 1e-12);
    CHECK_NEAR(json_as_number(json_get(res, "median"), 0), 12.5, 0);
    CHECK_NEAR(json_as_number(json_get(res, "min"), 0), 12.25, 0);
    CHECK_NEAR(json_as_number(json_get(res, "max"), 0), 12.75, 0);
    CHECK_NEAR(json_as_number(json_get(res, "user"), 0), 81, 1e-12);
    CHECK_NEAR(json_as_number(json_get(res, "system"), 0), 1.5, 1e-12);
    CHECK_INT(json_count(json_get(res, "times")), ==, 3);
    CHECK_NEAR(json_as_number(json_at(json_get(res, "times"), 1), 0), 12.75, 0);
    CHECK_INT(json_count(json_get(res, "exit_codes")), ==, 3);
    CHECK(json_is(json_get(json_get(v, "machine"), "peak_gflops"), JSON_NULL));
    /* MFU and the executed share: images/s x FLOPs per image / the peak. */
    CHECK_NEAR(json_as_number(json_get(json_get(v, "train"), "mfu"), 0), 1440 * 46.8e6 / 400e9, 1e-12);
    CHECK_NEAR(json_as_number(json_get(json_get(v, "train"), "executed_share"), 0),
               1440 * 17032704.0 / 400e9, 1e-12);
    CHECK_NEAR(record_mfu(r, 1440), 1440 * 46.8e6 / 400e9, 1e-15);
    CHECK(json_is(json_get(json_at(json_get(v, "samples"), 1), "queue_fill"), JSON_NULL));
    CHECK(json_is(json_get(json_at(json_get(v, "samples"), 1), "epoch"), JSON_NULL));
    CHECK(json_is(json_get(v, "error"), JSON_NULL));
    CHECK(text && strstr(text, "\"seed\": 18446744073709551610"));
    CHECK(text && strstr(text, "\"augment\": [\n      \"shift\",\n      \"elastic\"\n    ]"));
    json_free(v);
    free(text);
}

/* Splits text into lines in place; returns how many. */
static size_t lines(char *text, char **line, size_t max)
{
    size_t n = 0;
    for (char *s = strtok(text, "\n"); s && n < max; s = strtok(NULL, "\n"))
        line[n++] = s;
    return n;
}

/* A record written before the FMA peak existed lacks its members: it
 * still loads, with them unknown.  Renaming them (first letter to x) stands for
 * their absence: the reader ignores members it does not know. */
static void test_older_record(const RunRecord *r)
{
    static const char *added[] = {"\"blas_note\"", "\"cpu_isa\"", "\"blas_isa\"",
                                  "\"fma_peak_gflops\"", "\"fma_peak_isa\"",
                                  "\"flops_executed_per_image\""};
    const char *path = in_dir("older.json");
    char err[512];
    RunRecord back;

    CHECK_INT(record_export(r, path, 1, err, sizeof err), ==, 0);
    char *text = slurp(path);
    CHECK(text != NULL);
    for (size_t i = 0; text && i < sizeof added / sizeof added[0]; i++) {
        char *p = strstr(text, added[i]);
        CHECK(p != NULL);
        if (p)
            p[1] = 'x'; /* "blas_note" -> "xlas_note" */
    }
    if (text)
        spit(path, text);
    int rc = record_load_json(path, &back, err, sizeof err);
    CHECK_INT(rc, ==, 0);
    if (rc != 0)
        fprintf(stderr, "%s\n", err);
    CHECK(rc != 0 || (isnan(back.fma_peak_gflops) && isnan(back.flops_executed_per_image) &&
                      back.fma_peak_isa[0] == '\0' && back.machine.blas_note[0] == '\0' &&
                      back.machine.cpu_isa[0] == '\0' && isnan(record_mfu(&back, 1000.0))));
    CHECK(rc != 0 || back.flops_per_image == r->flops_per_image);
    record_done(&back);
    free(text);
}

static void test_csv(const RunRecord *r)
{
    const char *path = in_dir("run.csv");
    char err[512], *line[400];

    CHECK_INT(record_export(r, path, 0, err, sizeof err), ==, 0);
    char *text = slurp(path);
    if (!text)
        return;
    size_t n = lines(text, line, 400);
    CHECK_INT(n, ==, 1 + r->n_samples);
    CHECK(!strcmp(line[0], "t,epoch,step,images_per_s,loss,queue_fill,data_wait_share,workers,"
                           "batch,segment,ipc,miss_rate"));
    CHECK(n > 2 && !strcmp(line[1], "0.5,0,10,1234.5,2.25,0.75,0.125,2,64,0,1.75,0.0625"));
    /* No queue, no epoch, no counters: empty, not 0. */
    CHECK(n > 2 && !strcmp(line[2], "1,,20,1300.25,1.5,,0.5,0,64,1,,"));
    for (size_t i = 1; i < n; i++) {
        int commas = 0;
        for (char *c = line[i]; *c; c++)
            commas += *c == ',';
        CHECK_INT(commas, ==, 11);
    }
    free(text);
}

static void test_md(const RunRecord *r)
{
    const char *path = in_dir("run.md");
    char err[512];

    CHECK_INT(record_export(r, path, 0, err, sizeof err), ==, 0);
    char *text = slurp(path);
    CHECK_STR_HAS(text, "# cnntop run: batch 64, 2 workers\n");
    CHECK_STR_HAS(text, "| Command | Mean [s] | Min [s] | Max [s] |");
    CHECK_STR_HAS(text, "|:---|---:|---:|---:|");
    CHECK_STR_HAS(text, "| `batch 64, 2 workers` | 12.500 ± 0.250 | 12.250 | 12.750 |");
    CHECK_STR_HAS(text, "| conv2 bwd | 11.525 |");
    CHECK_STR_HAS(text, "AMD EPYC \"9B45\" \\| x"); /* the pipe cannot break the table */
    CHECK_STR_HAS(text, "| load | cache-misses | n/a: perf_event_paranoid is 3 |");
    CHECK_STR_HAS(text, "| Test accuracy | 85.30% (853 of 1000 images) |");
    free(text);
}

static void test_refusals(const RunRecord *r)
{
    char err[512];
    int rc;

    /* An existing file is kept without --force, replaced with it. */
    char path[512];
    snprintf(path, sizeof path, "%s", in_dir("run.json"));
    rc = export_check(path, 0, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EIO);
    CHECK_STR_HAS(err, "run.json: file exists");
    CHECK(strchr(err, '\n') == NULL);
    CHECK_INT(record_export(r, path, 0, err, sizeof err), ==, -CN_EIO);
    CHECK_INT(export_check(path, 1, err, sizeof err), ==, 0);
    CHECK_INT(record_export(r, path, 1, err, sizeof err), ==, 0);

    rc = export_check(in_dir("run.txt"), 0, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EINVAL);
    CHECK_STR_HAS(err, "run.txt: unknown export format");
    CHECK_STR_HAS(err, ".json, .csv or .md");
    CHECK_INT(export_check(in_dir("noext"), 0, err, sizeof err), ==, -CN_EINVAL);
    CHECK_INT(export_check(in_dir("RUN.JSON"), 0, err, sizeof err), ==, 0);
    rc = export_check(in_dir("no/such/dir/run.json"), 0, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EIO);
    CHECK_STR_HAS(err, "no/such/dir/run.json");

    /* Another schema version. */
    char *text = slurp(path), *at = text ? strstr(text, "cnntop.run/1") : NULL;
    RunRecord back;
    if (at) {
        at[11] = '2';
        spit(in_dir("v2.json"), text);
        rc = record_load_json(in_dir("v2.json"), &back, err, sizeof err);
        CHECK_INT(rc, ==, -CN_EFORMAT);
        CHECK_STR_HAS(err, "v2.json: unsupported schema \"cnntop.run/2\"");
        CHECK(strchr(err, '\n') == NULL);
        record_done(&back);
        at[11] = '1';
    }
    /* A broken file: cut on line 3 where the value of "cnntop_version" is due. */
    if (text) {
        char *l3 = strchr(strchr(text, '\n') + 1, '\n') + 1;
        CHECK(starts(l3, "  \"cnntop_version\": "));
        l3[20] = '\0';
        spit(in_dir("cut.json"), text);
        rc = record_load_json(in_dir("cut.json"), &back, err, sizeof err);
        CHECK_INT(rc, ==, -CN_EFORMAT);
        CHECK_STR_HAS(err, "cut.json:3:21: expected a value, found end of input");
        record_done(&back);
    }
    free(text);
    /* A field of the wrong type, and a missing one. */
    spit(in_dir("bad.json"), "{\"schema\": \"cnntop.run/1\", \"cnntop_version\": 1}");
    rc = record_load_json(in_dir("bad.json"), &back, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EFORMAT);
    CHECK_STR_HAS(err, "bad.json: cnntop_version: expected a string or null, found a number");
    record_done(&back);
    /* Not a cnntop record at all. */
    spit(in_dir("other.json"), "{\"results\": []}");
    rc = record_load_json(in_dir("other.json"), &back, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EFORMAT);
    CHECK_STR_HAS(err, "other.json: not a cnntop record");
    record_done(&back);
    rc = record_load_json(in_dir("missing.json"), &back, err, sizeof err);
    CHECK_INT(rc, ==, -CN_EIO);
    CHECK_STR_HAS(err, "missing.json");
    record_done(&back);
}

static void test_sweep(const RunRecord *r)
{
    RunRecord r2;
    const RunRecord *runs[2] = {r, &r2};
    char err[512], *line[8];
    RunRecord *back = NULL;
    size_t n = 0;

    build(&r2);
    CHECK_INT(record_set_label(&r2, NULL), ==, 0);
    r2.config.batch = 128;
    r2.n_repeats = 0; /* one run: stddev unknown */
    r2.train.wall = 6.25;
    CHECK_INT(record_export_sweep(runs, 2, in_dir("sweep.json"), 0, err, sizeof err), ==, 0);
    CHECK_INT(record_export_sweep(runs, 2, in_dir("sweep.csv"), 0, err, sizeof err), ==, 0);
    CHECK_INT(record_export_sweep(runs, 2, in_dir("sweep.md"), 0, err, sizeof err), ==, 0);
    CHECK_INT(record_export_sweep(runs, 2, in_dir("sweep.md"), 0, err, sizeof err), ==, -CN_EIO);

    int rc = record_load_any(in_dir("sweep.json"), &back, &n, err, sizeof err);
    CHECK_INT(rc, ==, 0);
    CHECK_INT(n, ==, 2);
    if (rc == 0 && n == 2) {
        compare(r, &back[0]);
        compare(&r2, &back[1]);
    }
    for (size_t i = 0; i < n; i++)
        record_done(&back[i]);
    free(back);
    /* A run file through record_load_any is one record. */
    CHECK_INT(record_load_any(in_dir("run.json"), &back, &n, err, sizeof err), ==, 0);
    CHECK_INT(n, ==, 1);
    for (size_t i = 0; i < n; i++)
        record_done(&back[i]);
    free(back);
    /* ...but a sweep is not a run. */
    RunRecord one;
    CHECK_INT(record_load_json(in_dir("sweep.json"), &one, err, sizeof err), ==, -CN_EFORMAT);
    record_done(&one);

    char *text = slurp(in_dir("sweep.json"));
    JsonValue *v = NULL;
    CHECK(text && json_parse(text, strlen(text), &v, err, sizeof err) == 0);
    CHECK(!strcmp(json_as_string(json_get(v, "schema"), ""), "cnntop.sweep/1"));
    CHECK_INT(json_count(json_get(v, "runs")), ==, 2);
    const JsonValue *res = json_get(v, "results");
    CHECK_INT(json_count(res), ==, 2);
    CHECK(!strcmp(json_as_string(json_get(json_at(res, 1), "command"), ""),
                  "batch 128, 2 workers, 8 threads"));
    CHECK(json_is(json_get(json_at(res, 1), "stddev"), JSON_NULL));
    json_free(v);
    free(text);

    text = slurp(in_dir("sweep.csv"));
    if (text) {
        CHECK_INT(lines(text, line, 8), ==, 3);
        CHECK(starts(line[0], "command,mean,stddev,median,user,system,min,max,"));
        CHECK(starts(line[1], "\"batch 64, 2 workers\",12.5,0.25,12.5,81,1.5,12.25,12.75,64,2,4,8,"
                              "\"shift,elastic\",3,"));
        CHECK(starts(line[2], "\"batch 128, 2 workers, 8 threads\",6.25,,6.25,"));
    }
    free(text);
    text = slurp(in_dir("sweep.md"));
    CHECK_STR_HAS(text, "| Command | Mean [s] |");
    CHECK_STR_HAS(text, "| `batch 128, 2 workers, 8 threads` | 6.250 | 6.250 | 6.250 |");
    /* Relative to the fastest: 12.5 +- 0.25 over one run of 6.25, whose
     * spread is unknown, so the ratio has no uncertainty. */
    CHECK_STR_HAS(text, "| 2.00 |\n");
    free(text);
    record_done(&r2);
}

/* hyperfine's own --export-json: each of its result fields must be in ours. */
static void test_hyperfine(void)
{
    char cmd[1024], err[512];
    JsonValue *hf = NULL, *ours = NULL;

    if (system("command -v hyperfine >/dev/null 2>&1") != 0) {
        fprintf(stderr, "test_record: hyperfine not installed; field-name comparison not run\n");
        return;
    }
    snprintf(cmd, sizeof cmd, "hyperfine -N --runs 2 --export-json '%s' true >/dev/null 2>&1",
             in_dir("hyperfine.json"));
    if (system(cmd) != 0) {
        /* Older hyperfine has no -N. */
        snprintf(cmd, sizeof cmd, "hyperfine --runs 2 --export-json '%s' true >/dev/null 2>&1",
                 in_dir("hyperfine.json"));
        CHECK_INT(system(cmd), ==, 0);
    }
    char *a = slurp(in_dir("hyperfine.json")), *b = slurp(in_dir("run.json"));
    CHECK(a && json_parse(a, strlen(a), &hf, err, sizeof err) == 0);
    CHECK(b && json_parse(b, strlen(b), &ours, err, sizeof err) == 0);
    const JsonValue *h = json_at(json_get(hf, "results"), 0);
    const JsonValue *o = json_at(json_get(ours, "results"), 0);
    CHECK(json_count(h) >= 9);
    for (size_t i = 0; i < json_count(h); i++) {
        const JsonMember *m = &h->members[i];
        const JsonValue *mine = json_get(o, m->key);
        if (!mine || (mine->type != m->value.type && m->value.type != JSON_NULL &&
                      mine->type != JSON_NULL)) {
            check_failed++;
            fprintf(stderr, "hyperfine's results field \"%s\" missing or of another type\n", m->key);
        }
        check_count++;
    }
    json_free(hf);
    json_free(ours);
    free(a);
    free(b);
    unlink(in_dir("hyperfine.json"));
}

/* Nothing but the files we made: no temporary left over. */
static void test_no_temp(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int temps = 0;

    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp"))
            temps++, fprintf(stderr, "left behind: %s\n", e->d_name);
    if (d)
        closedir(d);
    CHECK_INT(temps, ==, 0);
}

static void cleanup(void)
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

int main(void)
{
    RunRecord r;
    char label[160];

    snprintf(dir, sizeof dir, "%s/cnntop-record-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        check_skip("cannot make a temporary directory");
    build(&r);
    CHECK(!strcmp(record_label(&r, label, sizeof label), "batch 64, 2 workers"));
    test_json_round_trip(&r);
    test_older_record(&r);
    test_csv(&r);
    test_md(&r);
    test_refusals(&r);
    test_sweep(&r);
    test_hyperfine();
    test_no_temp();
    record_done(&r);
    record_done(&r); /* idempotent */
    cleanup();
    return check_report();
}

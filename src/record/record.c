/*
 * record.c: the run record, its exports (JSON, CSV, Markdown; one run or a
 * sweep of several) and reading a JSON export back.
 *
 * Layout: a RunRecord is a plain struct with six growable arrays (pointer,
 * count, capacity), each grown by doubling.  The exports are built in
 * memory (JsonWriter, or a growable text buffer) and then written in one
 * fileio_write_atomic() call, so a file is either the complete new export
 * or untouched.  The field names of the JSON export are documented in
 * man/export-formats.md; the "results" entries use hyperfine's names so that
 * tools reading hyperfine's --export-json read cnntop's too.
 *
 * Reading back is strict about the schema name and version and about the
 * type of every field the writer writes: a record that would load with
 * silently wrong figures is worse than an error.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "cnntop/json.h"
#include "cnntop/record.h"
#include "cnntop/stats.h"
#include "util/err.h"
#include "cnntop/fileio.h"
#include "cnntop/version.h"

/* ------------------------------------------------------------ lifecycle */

void record_init(RunRecord *r)
{
    time_t now = time(NULL);
    struct tm tm;

    memset(r, 0, sizeof *r);
    snprintf(r->version, sizeof r->version, "%s", CNNTOP_VERSION);
    if (gmtime_r(&now, &tm))
        strftime(r->date, sizeof r->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    engine_config_default(&r->config);
    r->config.data_dir = NULL;
    r->train_images = r->test_images = -1;
    r->peak_gflops = NAN;
    r->fma_peak_gflops = NAN;
    r->flops_executed_per_image = NAN;
    r->target_accuracy = NAN;
    r->time_to_target = NAN;
    r->flops_per_image = NAN;
    r->peak_rss_kib = -1;
    r->loader_samples_per_s = NAN;
    r->run_queue_wait = NAN;
    r->ipc = r->miss_rate = NAN;
}

static double peak_share(const RunRecord *r, double images_per_s, double flops)
{
    if (!(r->fma_peak_gflops > 0.0) || !isfinite(flops) || !isfinite(images_per_s))
        return NAN;
    return images_per_s * flops / (r->fma_peak_gflops * 1e9);
}

double record_mfu(const RunRecord *r, double images_per_s)
{
    return peak_share(r, images_per_s, r->flops_per_image);
}

double record_executed_share(const RunRecord *r, double images_per_s)
{
    return peak_share(r, images_per_s, r->flops_executed_per_image);
}

void record_done(RunRecord *r)
{
    free(r->command);
    free(r->label);
    free(r->data_dir);
    free(r->error);
    free(r->epochs);
    free(r->samples);
    free(r->segments);
    free(r->layers);
    free(r->counters);
    free(r->repeats);
    free(r->evals);
    memset(r, 0, sizeof *r);
}

/* Replaces *slot by a copy of s (NULL clears). */
static int set_string(char **slot, const char *s)
{
    char *c = NULL;

    if (s && !(c = strdup(s)))
        return -CN_ENOMEM;
    free(*slot);
    *slot = c;
    return 0;
}

int record_set_label(RunRecord *r, const char *label) { return set_string(&r->label, label); }
int record_set_error(RunRecord *r, const char *error) { return set_string(&r->error, error); }

int record_set_data_dir(RunRecord *r, const char *dir)
{
    int rc = set_string(&r->data_dir, dir);

    r->config.data_dir = r->data_dir;
    return rc;
}

int record_set_config(RunRecord *r, const RunConfig *cfg)
{
    r->config = *cfg;
    r->config.data_dir = r->data_dir;
    if (cfg->data_dir && !r->data_dir)
        return record_set_data_dir(r, cfg->data_dir);
    return 0;
}

/* Characters that need no quoting in a POSIX shell word. */
static int shell_safe(const char *w)
{
    if (!*w)
        return 0;
    for (; *w; w++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%",
                    *w))
            return 0;
    return 1;
}

int record_set_command(RunRecord *r, int argc, char **argv)
{
    size_t n = 1;
    char *c, *o;

    for (int i = 0; i < argc; i++)
        n += 4 * strlen(argv[i]) + 3; /* each ' becomes '\'' */
    c = o = calloc(1, n);
    if (!c)
        return -CN_ENOMEM;
    for (int i = 0; i < argc; i++) {
        if (i)
            *o++ = ' ';
        if (shell_safe(argv[i])) {
            o += sprintf(o, "%s", argv[i]);
            continue;
        }
        *o++ = '\'';
        for (const char *s = argv[i]; *s; s++) {
            if (*s == '\'') {
                memcpy(o, "'\\''", 4);
                o += 4;
            } else {
                *o++ = *s;
            }
        }
        *o++ = '\'';
    }
    *o = '\0';
    free(r->command);
    r->command = c;
    return 0;
}

/* Appends elem (size bytes) to a growable array. */
static int push(void **arr, size_t *n, size_t *cap, const void *elem, size_t size)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        void *a = realloc(*arr, nc * size);
        if (!a)
            return -CN_ENOMEM;
        *arr = a;
        *cap = nc;
    }
    memcpy((char *)*arr + *n * size, elem, size);
    (*n)++;
    return 0;
}

#define PUSH(r, field, elem) \
    push((void **)&(r)->field, &(r)->n_##field, &(r)->cap_##field, (elem), sizeof *(r)->field)

int record_add_epoch(RunRecord *r, const RecordEpoch *e) { return PUSH(r, epochs, e); }
int record_add_eval(RunRecord *r, const RecordEval *ev) { return PUSH(r, evals, ev); }
int record_add_segment(RunRecord *r, const Segment *s) { return PUSH(r, segments, s); }
int record_add_counter(RunRecord *r, const RecordCounter *c) { return PUSH(r, counters, c); }
int record_add_repeat(RunRecord *r, const RecordRepeat *rep) { return PUSH(r, repeats, rep); }

int record_add_sample(RunRecord *r, const Sample *s, int epoch, double ipc, double miss_rate)
{
    RecordSample rs = {.s = *s, .epoch = epoch, .ipc = ipc, .miss_rate = miss_rate};
    return PUSH(r, samples, &rs);
}

int record_add_layer(RunRecord *r, const LayerTime *lt, double flops)
{
    RecordLayer l;

    memset(&l, 0, sizeof l);
    snprintf(l.name, sizeof l.name, "%s", lt->name);
    l.seconds = lt->seconds;
    l.calls = lt->calls;
    l.flops = flops;
    l.gflops = isfinite(flops) && lt->seconds > 0 ? flops / lt->seconds * 1e-9 : NAN;
    l.ipc = l.miss_rate = NAN;
    return PUSH(r, layers, &l);
}

const char *record_label(const RunRecord *r, char *buf, size_t len)
{
    int w = r->config.workers, t = r->threads_used > 0 ? r->threads_used : r->config.threads;

    if (r->label && *r->label)
        snprintf(buf, len, "%s", r->label);
    else
        snprintf(buf, len, "batch %d, %d worker%s, %d thread%s", r->config.batch, w,
                 w == 1 ? "" : "s", t, t == 1 ? "" : "s");
    return buf;
}

size_t record_times(const RunRecord *r, double *out, size_t max)
{
    size_t n = 0;

    if (r->n_repeats == 0 && max > 0)
        out[n++] = r->train.wall;
    for (size_t i = 0; i < r->n_repeats && n < max; i++)
        out[n++] = r->repeats[i].wall;
    return n;
}

size_t record_throughputs(const RunRecord *r, double *out, size_t max)
{
    size_t n = 0;

    if (r->n_repeats == 0 && max > 0)
        out[n++] = r->train.images_per_s;
    for (size_t i = 0; i < r->n_repeats && n < max; i++)
        out[n++] = r->repeats[i].images_per_s;
    return n;
}

/* Mean of the user (which = 0) or system (1) CPU seconds over the runs. */
static double mean_cpu(const RunRecord *r, int which)
{
    double s = 0;

    if (r->n_repeats == 0)
        return which ? r->train.cpu_sys : r->train.cpu_user;
    for (size_t i = 0; i < r->n_repeats; i++)
        s += which ? r->repeats[i].system : r->repeats[i].user;
    return s / (double)r->n_repeats;
}

/* Summary of the wall times; a malloc'ed copy of them in *times. */
static int times_summary(const RunRecord *r, double **times, size_t *n, StatsSummary *s)
{
    size_t cap = r->n_repeats ? r->n_repeats : 1;

    *times = malloc(cap * sizeof **times);
    if (!*times)
        return -CN_ENOMEM;
    *n = record_times(r, *times, cap);
    return stats_summarize(*times, *n, s) == 0 ? 0 : -CN_ENOMEM;
}

/* ---------------------------------------------------------------- names */

static const struct { unsigned bit; const char *name; } aug_names[] = {
    {CN_AUG_SHIFT, "shift"}, {CN_AUG_ROTATE, "rotate"}, {CN_AUG_ELASTIC, "elastic"},
};

static const char *role_name(ThreadRole role)
{
    return role == CN_ROLE_LOAD ? "load" : "train";
}

static const char *status_name(RecordCounterStatus s)
{
    return s == RECORD_CTR_OK ? "ok" : s == RECORD_CTR_NOT_COUNTED ? "not-counted" : "unavailable";
}

static void augment_text(unsigned aug, char *buf, size_t len)
{
    size_t o = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < sizeof aug_names / sizeof *aug_names; i++)
        if (aug & aug_names[i].bit)
            o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s", o ? "," : "",
                                  aug_names[i].name);
    if (!o)
        snprintf(buf, len, "none");
}

/* ------------------------------------------------------------ JSON out */

static void kv_num(JsonWriter *w, const char *k, double v) { json_key(w, k); json_number(w, v); }
static void kv_float(JsonWriter *w, const char *k, float v) { json_key(w, k); json_float(w, v); }
static void kv_int(JsonWriter *w, const char *k, long long v) { json_key(w, k); json_int(w, v); }
static void kv_str(JsonWriter *w, const char *k, const char *v) { json_key(w, k); json_string(w, v); }
static void kv_bool(JsonWriter *w, const char *k, int v) { json_key(w, k); json_bool(w, v); }

/* An integer that may be unknown (negative): null then. */
static void kv_count(JsonWriter *w, const char *k, long long v)
{
    json_key(w, k);
    if (v < 0)
        json_null(w);
    else
        json_int(w, v);
}

static void write_config(JsonWriter *w, const RunConfig *c)
{
    json_key(w, "config");
    json_begin_object(w);
    kv_int(w, "batch", c->batch);
    kv_int(w, "epochs", c->epochs);
    kv_int(w, "steps", c->steps);
    kv_int(w, "limit", c->limit);
    kv_int(w, "test_limit", c->test_limit);
    kv_int(w, "threads", c->threads);
    kv_num(w, "lr", c->lr);
    json_key(w, "seed");
    json_uint(w, c->seed);
    kv_int(w, "workers", c->workers);
    kv_int(w, "prefetch", c->prefetch);
    json_key(w, "augment");
    json_begin_array(w);
    for (size_t i = 0; i < sizeof aug_names / sizeof *aug_names; i++)
        if (c->augment & aug_names[i].bit)
            json_string(w, aug_names[i].name);
    json_end_array(w);
    json_end_object(w);
}

static void write_machine(JsonWriter *w, const RunRecord *r)
{
    const MachineInfo *m = &r->machine;

    json_key(w, "machine");
    json_begin_object(w);
    kv_str(w, "cpu_model", m->cpu_model);
    kv_int(w, "cores", m->cores);
    kv_str(w, "blas_core", m->blas_core);
    kv_str(w, "blas_config", m->blas_config);
    kv_str(w, "blas_warning", m->blas_warning);
    kv_str(w, "blas_note", m->blas_note);
    kv_str(w, "cpu_isa", m->cpu_isa);
    kv_str(w, "blas_isa", m->blas_isa);
    kv_num(w, "peak_gflops", r->peak_gflops);
    kv_num(w, "fma_peak_gflops", r->fma_peak_gflops);
    kv_str(w, "fma_peak_isa", r->fma_peak_isa);
    kv_num(w, "sgemm_of_peak", r->peak_gflops / r->fma_peak_gflops);
    json_end_object(w);
}

static void write_train(JsonWriter *w, const RunRecord *r)
{
    const TrainStats *t = &r->train;

    json_key(w, "train");
    json_begin_object(w);
    kv_int(w, "steps", t->steps);
    kv_int(w, "images", t->images);
    kv_int(w, "epochs_done", t->epochs_done);
    kv_num(w, "wall", t->wall);
    kv_num(w, "images_per_s", t->images_per_s);
    kv_num(w, "gflops", t->images_per_s * r->flops_per_image * 1e-9);
    kv_num(w, "mfu", record_mfu(r, t->images_per_s));
    kv_num(w, "executed_share", record_executed_share(r, t->images_per_s));
    kv_num(w, "cpu_user", t->cpu_user);
    kv_num(w, "cpu_sys", t->cpu_sys);
    kv_int(w, "minor_faults", t->minor_faults);
    kv_float(w, "last_loss", t->last_loss);
    kv_num(w, "final_loss", t->final_loss);
    kv_bool(w, "stopped", t->stopped);
    json_key(w, "split");
    json_begin_object(w);
    kv_num(w, "data", t->split.data);
    kv_num(w, "forward", t->split.forward);
    kv_num(w, "backward", t->split.backward);
    kv_num(w, "optimizer", t->split.optimizer);
    json_end_object(w);
    json_end_object(w);
}

static void write_eval(JsonWriter *w, const RunRecord *r)
{
    json_key(w, "eval");
    if (!r->have_eval) {
        json_null(w);
        return;
    }
    json_begin_object(w);
    kv_int(w, "images", r->eval.images);
    kv_int(w, "correct", r->eval.correct);
    kv_num(w, "accuracy", r->eval.accuracy);
    kv_num(w, "loss", r->eval.loss);
    kv_num(w, "wall", r->eval.wall);
    json_end_object(w);
}

static void write_epochs(JsonWriter *w, const RunRecord *r)
{
    json_key(w, "epochs");
    json_begin_array(w);
    for (size_t i = 0; i < r->n_epochs; i++) {
        const RecordEpoch *e = &r->epochs[i];
        json_begin_object(w);
        kv_int(w, "epoch", e->epoch);
        kv_num(w, "loss", e->loss);
        kv_num(w, "accuracy", e->accuracy);
        kv_num(w, "wall", e->wall);
        json_end_object(w);
    }
    json_end_array(w);
}

static void write_evals(JsonWriter *w, const RunRecord *r)
{
    kv_num(w, "target_accuracy", r->target_accuracy);
    kv_num(w, "time_to_target", r->time_to_target);
    json_key(w, "evals");
    json_begin_array(w);
    for (size_t i = 0; i < r->n_evals; i++) {
        const RecordEval *e = &r->evals[i];
        json_begin_object(w);
        kv_int(w, "step", e->step);
        kv_int(w, "epoch", e->epoch);
        kv_bool(w, "epoch_end", e->epoch_end);
        kv_num(w, "wall", e->wall);
        kv_num(w, "accuracy", e->accuracy);
        kv_num(w, "loss", e->loss);
        json_end_object(w);
    }
    json_end_array(w);
}

static void write_samples(JsonWriter *w, const RunRecord *r)
{
    json_key(w, "samples");
    json_begin_array(w);
    for (size_t i = 0; i < r->n_samples; i++) {
        const RecordSample *rs = &r->samples[i];
        const Sample *s = &rs->s;
        json_begin_object(w);
        kv_num(w, "t", s->t);
        kv_count(w, "epoch", rs->epoch);
        kv_int(w, "step", s->step);
        kv_int(w, "images", s->images);
        kv_float(w, "loss", s->loss);
        kv_float(w, "images_per_s", s->images_per_s);
        json_key(w, "queue_fill");
        if (s->queue_fill < 0)
            json_null(w);
        else
            json_float(w, s->queue_fill);
        kv_float(w, "data_wait_share", s->data_wait_share);
        kv_int(w, "workers", s->workers);
        kv_int(w, "batch", s->batch);
        kv_int(w, "segment", s->segment);
        kv_num(w, "ipc", rs->ipc);
        kv_num(w, "miss_rate", rs->miss_rate);
        json_end_object(w);
    }
    json_end_array(w);
}

static void write_segments(JsonWriter *w, const RunRecord *r)
{
    json_key(w, "segments");
    json_begin_array(w);
    for (size_t i = 0; i < r->n_segments; i++) {
        const Segment *s = &r->segments[i];
        json_begin_object(w);
        kv_int(w, "first_step", s->first_step);
        kv_int(w, "steps", s->steps);
        kv_num(w, "t0", s->t0);
        kv_num(w, "wall", s->wall);
        kv_int(w, "batch", s->batch);
        kv_int(w, "workers", s->workers);
        kv_int(w, "prefetch", s->prefetch);
        kv_int(w, "images", s->images);
        kv_num(w, "images_per_s", s->images_per_s);
        kv_num(w, "images_per_s_sd", s->images_per_s_sd);
        kv_int(w, "warmup_steps", s->warmup_steps);
        json_end_object(w);
    }
    json_end_array(w);
}

static void write_layers(JsonWriter *w, const RunRecord *r)
{
    json_key(w, "layers");
    json_begin_array(w);
    for (size_t i = 0; i < r->n_layers; i++) {
        const RecordLayer *l = &r->layers[i];
        json_begin_object(w);
        kv_str(w, "name", l->name);
        kv_num(w, "seconds", l->seconds);
        kv_int(w, "calls", l->calls);
        kv_num(w, "flops", l->flops);
        kv_num(w, "gflops", l->gflops);
        kv_num(w, "ipc", l->ipc);
        kv_num(w, "miss_rate", l->miss_rate);
        json_end_object(w);
    }
    json_end_array(w);
}

static void write_counters(JsonWriter *w, const RunRecord *r)
{
    json_key(w, "counters");
    json_begin_array(w);
    for (size_t i = 0; i < r->n_counters; i++) {
        const RecordCounter *c = &r->counters[i];
        json_begin_object(w);
        kv_str(w, "role", role_name(c->role));
        kv_str(w, "name", c->name);
        kv_num(w, "value", c->status == RECORD_CTR_OK ? c->value : NAN);
        kv_str(w, "unit", c->unit);
        kv_num(w, "scaled", c->scaled);
        kv_str(w, "status", status_name(c->status));
        kv_str(w, "reason", c->reason);
        json_end_object(w);
    }
    json_end_array(w);
}

static void write_repeats(JsonWriter *w, const RunRecord *r)
{
    json_key(w, "repeats");
    json_begin_array(w);
    for (size_t i = 0; i < r->n_repeats; i++) {
        const RecordRepeat *p = &r->repeats[i];
        json_begin_object(w);
        kv_num(w, "wall", p->wall);
        kv_num(w, "images_per_s", p->images_per_s);
        kv_num(w, "user", p->user);
        kv_num(w, "system", p->system);
        kv_num(w, "accuracy", p->accuracy);
        kv_int(w, "exit_code", p->exit_code);
        json_end_object(w);
    }
    json_end_array(w);
}

/* One entry of "results", in hyperfine's --export-json shape: seconds of
 * training wall time per run. */
static int write_result(JsonWriter *w, const RunRecord *r, const char *command)
{
    StatsSummary s;
    double *t;
    size_t n;

    if (times_summary(r, &t, &n, &s) != 0) {
        free(t);
        return -CN_ENOMEM;
    }
    json_begin_object(w);
    kv_str(w, "command", command);
    kv_num(w, "mean", s.mean);
    kv_num(w, "stddev", s.sd);
    kv_num(w, "median", s.median);
    kv_num(w, "user", mean_cpu(r, 0));
    kv_num(w, "system", mean_cpu(r, 1));
    kv_num(w, "min", s.min);
    kv_num(w, "max", s.max);
    json_key(w, "times");
    json_begin_array(w);
    for (size_t i = 0; i < n; i++)
        json_number(w, t[i]);
    json_end_array(w);
    json_key(w, "exit_codes");
    json_begin_array(w);
    if (r->n_repeats == 0)
        json_int(w, r->exit_code);
    for (size_t i = 0; i < r->n_repeats; i++)
        json_int(w, r->repeats[i].exit_code);
    json_end_array(w);
    json_end_object(w);
    free(t);
    return 0;
}

/* The run object, without "results". */
static void write_run_body(JsonWriter *w, const RunRecord *r)
{
    kv_str(w, "schema", RECORD_SCHEMA);
    kv_str(w, "cnntop_version", r->version);
    kv_str(w, "date", r->date);
    kv_str(w, "command", r->command);
    kv_str(w, "label", r->label);
    write_config(w, &r->config);
    json_key(w, "data");
    json_begin_object(w);
    kv_str(w, "dir", r->data_dir);
    kv_count(w, "train_images", r->train_images);
    kv_count(w, "test_images", r->test_images);
    json_end_object(w);
    kv_int(w, "threads_used", r->threads_used);
    write_machine(w, r);
    kv_num(w, "flops_per_image", r->flops_per_image);
    kv_num(w, "flops_executed_per_image", r->flops_executed_per_image);
    write_train(w, r);
    write_eval(w, r);
    kv_count(w, "peak_rss_kib", r->peak_rss_kib);
    kv_num(w, "loader_samples_per_s", r->loader_samples_per_s);
    kv_num(w, "run_queue_wait", r->run_queue_wait);
    kv_num(w, "ipc", r->ipc);
    kv_str(w, "ipc_na", r->ipc_na[0] ? r->ipc_na : NULL);
    kv_num(w, "miss_rate", r->miss_rate);
    kv_str(w, "miss_rate_na", r->miss_rate_na[0] ? r->miss_rate_na : NULL);
    kv_bool(w, "interrupted", r->interrupted);
    kv_int(w, "exit_code", r->exit_code);
    kv_str(w, "error", r->error);
    write_epochs(w, r);
    write_evals(w, r);
    write_samples(w, r);
    write_segments(w, r);
    write_layers(w, r);
    write_counters(w, r);
    write_repeats(w, r);
}

static int json_run(const RunRecord *r, char **out, size_t *len)
{
    JsonWriter w;
    char label[160];
    int rc;

    json_writer_init(&w, 1);
    json_begin_object(&w);
    write_run_body(&w, r);
    json_key(&w, "results");
    json_begin_array(&w);
    rc = write_result(&w, r, r->command ? r->command : record_label(r, label, sizeof label));
    json_end_array(&w);
    json_end_object(&w);
    if (rc != 0) {
        json_writer_done(&w);
        return rc;
    }
    return json_writer_finish(&w, out, len) == 0 ? 0 : -CN_ENOMEM;
}

static int json_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len)
{
    JsonWriter w;
    char label[160];
    int rc = 0;

    json_writer_init(&w, 1);
    json_begin_object(&w);
    kv_str(&w, "schema", RECORD_SWEEP_SCHEMA);
    kv_str(&w, "cnntop_version", CNNTOP_VERSION);
    json_key(&w, "runs");
    json_begin_array(&w);
    for (size_t i = 0; i < n; i++) {
        json_begin_object(&w);
        write_run_body(&w, runs[i]);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_key(&w, "results");
    json_begin_array(&w);
    /* In a sweep every run shares the command line; the label says which
     * configuration each entry is. */
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = write_result(&w, runs[i], record_label(runs[i], label, sizeof label));
    json_end_array(&w);
    json_end_object(&w);
    if (rc != 0) {
        json_writer_done(&w);
        return rc;
    }
    return json_writer_finish(&w, out, len) == 0 ? 0 : -CN_ENOMEM;
}

/* ------------------------------------------------------------ text out */

/* A growable text buffer; `failed` remembers allocation failure. */
typedef struct Text {
    char *buf;
    size_t len, cap;
    int failed;
} Text;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void tprintf(Text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->failed)
        return;
    va_start(ap, fmt);
    n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->failed = 1;
        return;
    }
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *b = realloc(t->buf, cap);
        if (!b) {
            t->failed = 1;
            return;
        }
        t->buf = b;
        t->cap = cap;
        va_start(ap, fmt);
        vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
    }
    t->len += (size_t)n;
}

static int text_finish(Text *t, char **out, size_t *len)
{
    if (!t->failed && !t->buf)
        tprintf(t, "%s", "");
    if (t->failed) {
        free(t->buf);
        *out = NULL;
        *len = 0;
        return -CN_ENOMEM;
    }
    *out = t->buf;
    *len = t->len;
    return 0;
}

/* A CSV cell: a number, or nothing when unknown. */
static void csv_num(Text *t, double x, const char *sep)
{
    char b[64];

    tprintf(t, "%s%s", json_format_number(x, b, sizeof b) == 0 ? b : "", sep);
}

static void csv_float(Text *t, float x, const char *sep)
{
    char b[64];

    tprintf(t, "%s%s", json_format_float(x, b, sizeof b) == 0 ? b : "", sep);
}

/* A CSV string cell, quoted when it holds a separator, quote or newline. */
static void csv_str(Text *t, const char *s, const char *sep)
{
    if (!s)
        s = "";
    if (!strpbrk(s, ",\"\r\n")) {
        tprintf(t, "%s%s", s, sep);
        return;
    }
    tprintf(t, "\"");
    for (; *s; s++)
        tprintf(t, *s == '"' ? "\"\"" : "%c", *s);
    tprintf(t, "\"%s", sep);
}

static int csv_run(const RunRecord *r, char **out, size_t *len)
{
    Text t = {0};

    tprintf(&t, "t,epoch,step,images_per_s,loss,queue_fill,data_wait_share,workers,batch,"
                "segment,ipc,miss_rate\n");
    for (size_t i = 0; i < r->n_samples; i++) {
        const RecordSample *rs = &r->samples[i];
        const Sample *s = &rs->s;
        csv_num(&t, s->t, ",");
        if (rs->epoch >= 0)
            tprintf(&t, "%d,", rs->epoch);
        else
            tprintf(&t, ",");
        tprintf(&t, "%ld,", s->step);
        csv_float(&t, s->images_per_s, ",");
        csv_float(&t, s->loss, ",");
        csv_float(&t, s->queue_fill < 0 ? NAN : s->queue_fill, ",");
        csv_float(&t, s->data_wait_share, ",");
        tprintf(&t, "%d,%d,%d,", s->workers, s->batch, s->segment);
        csv_num(&t, rs->ipc, ",");
        csv_num(&t, rs->miss_rate, "\n");
    }
    return text_finish(&t, out, len);
}

/* Mean and sd of a record's throughputs and the mean of its accuracies. */
static void throughput_summary(const RunRecord *r, StatsSummary *s)
{
    size_t cap = r->n_repeats ? r->n_repeats : 1;
    double *v = malloc(cap * sizeof *v);

    if (!v) {
        memset(s, 0, sizeof *s);
        s->mean = s->sd = s->median = s->min = s->max = NAN;
        return;
    }
    stats_summarize(v, record_throughputs(r, v, cap), s);
    free(v);
}

static double mean_accuracy(const RunRecord *r)
{
    double s = 0;
    size_t n = 0;

    for (size_t i = 0; i < r->n_repeats; i++)
        if (!isnan(r->repeats[i].accuracy))
            s += r->repeats[i].accuracy, n++;
    if (n)
        return s / (double)n;
    return r->have_eval ? r->eval.accuracy : NAN;
}

static int csv_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len)
{
    Text t = {0};
    char label[160], aug[64];
    int rc = 0;

    tprintf(&t, "command,mean,stddev,median,user,system,min,max,batch,workers,prefetch,"
                "threads,augment,runs,images_per_s,images_per_s_stddev,accuracy,mfu,"
                "executed_share\n");
    for (size_t i = 0; i < n && rc == 0; i++) {
        const RunRecord *r = runs[i];
        StatsSummary s, ips;
        double *tm;
        size_t nt;
        if ((rc = times_summary(r, &tm, &nt, &s)) != 0) {
            free(tm);
            break;
        }
        free(tm);
        throughput_summary(r, &ips);
        csv_str(&t, record_label(r, label, sizeof label), ",");
        csv_num(&t, s.mean, ",");
        csv_num(&t, s.sd, ",");
        csv_num(&t, s.median, ",");
        csv_num(&t, mean_cpu(r, 0), ",");
        csv_num(&t, mean_cpu(r, 1), ",");
        csv_num(&t, s.min, ",");
        csv_num(&t, s.max, ",");
        augment_text(r->config.augment, aug, sizeof aug);
        tprintf(&t, "%d,%d,%d,%d,", r->config.batch, r->config.workers, r->config.prefetch,
                r->threads_used);
        csv_str(&t, aug, ",");
        tprintf(&t, "%zu,", nt);
        csv_num(&t, ips.mean, ",");
        csv_num(&t, ips.sd, ",");
        csv_num(&t, mean_accuracy(r), ",");
        csv_num(&t, record_mfu(r, ips.mean), ",");
        csv_num(&t, record_executed_share(r, ips.mean), "\n");
    }
    if (rc != 0) {
        free(t.buf);
        return rc;
    }
    return text_finish(&t, out, len);
}

/* A Markdown table cell: '|' escaped, newlines flattened. */
static void md_cell(Text *t, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            tprintf(t, "\\|");
        else if (*s == '\n' || *s == '\r')
            tprintf(t, " ");
        else
            tprintf(t, "%c", *s);
    }
}

/* "12.345" or "" for an unknown figure, with a fixed number of decimals. */
static const char *fmt_fixed(char *buf, size_t len, double x, int decimals)
{
    if (isfinite(x))
        snprintf(buf, len, "%.*f", decimals, x);
    else
        snprintf(buf, len, "%s", "");
    return buf;
}

/* "mean ± sd" or "mean" alone for one run. */
static const char *fmt_pm(char *buf, size_t len, double m, double sd, int decimals)
{
    if (isfinite(sd))
        snprintf(buf, len, "%.*f ± %.*f", decimals, m, decimals, sd);
    else
        fmt_fixed(buf, len, m, decimals);
    return buf;
}

/* The hyperfine-style table: one row per record, relative to the fastest. */
static int md_results_table(Text *t, const RunRecord *const *runs, size_t n)
{
    StatsSummary *s = calloc(n ? n : 1, sizeof *s);
    char a[64], b[64], c[64], label[160];
    size_t best = 0;

    if (!s)
        return -CN_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        double *tm;
        size_t nt;
        if (times_summary(runs[i], &tm, &nt, &s[i]) != 0) {
            free(tm);
            free(s);
            return -CN_ENOMEM;
        }
        free(tm);
        if (s[i].mean < s[best].mean)
            best = i;
    }
    tprintf(t, "| Command | Mean [s] | Min [s] | Max [s] | Images/s | Accuracy | Relative |\n");
    tprintf(t, "|:---|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < n; i++) {
        StatsSummary ips;
        double rel, u, acc = mean_accuracy(runs[i]);
        throughput_summary(runs[i], &ips);
        stats_ratio(s[i].mean, s[i].sd, s[best].mean, s[best].sd, &rel, &u);
        tprintf(t, "| `");
        md_cell(t, record_label(runs[i], label, sizeof label));
        tprintf(t, "` | %s | %s | %s | ", fmt_pm(a, sizeof a, s[i].mean, s[i].sd, 3),
                fmt_fixed(b, sizeof b, s[i].min, 3), fmt_fixed(c, sizeof c, s[i].max, 3));
        tprintf(t, "%s | ", fmt_pm(a, sizeof a, ips.mean, ips.sd, 1));
        if (isfinite(acc))
            tprintf(t, "%.2f%% ", 100 * acc);
        tprintf(t, "| %s |\n", i == best ? "1.00" : fmt_pm(b, sizeof b, rel, u, 2));
    }
    free(s);
    return 0;
}

static void md_summary(Text *t, const RunRecord *r)
{
    const TrainStats *st = &r->train;
    char aug[64], a[64];

    augment_text(r->config.augment, aug, sizeof aug);
    tprintf(t, "\n## Summary\n\n| Figure | Value |\n|:---|---:|\n");
    tprintf(t, "| Training wall time | %.2f s%s |\n", st->wall, st->stopped ? " (stopped early)" : "");
    tprintf(t, "| Steps, images | %ld step%s, %ld image%s, %d epoch%s complete |\n", st->steps,
            st->steps == 1 ? "" : "s", st->images, st->images == 1 ? "" : "s", st->epochs_done,
            st->epochs_done == 1 ? "" : "s");
    tprintf(t, "| Throughput | %.1f images/s |\n", st->images_per_s);
    if (isfinite(r->flops_per_image))
        tprintf(t, "| Compute rate | %.1f GFLOP/s |\n", st->images_per_s * r->flops_per_image * 1e-9);
    if (isfinite(record_mfu(r, st->images_per_s)))
        tprintf(t, "| MFU | %.1f%% of the %.1f GFLOP/s FMA peak (%s) |\n| Executed share | "
                "%.1f%% |\n", 100 * record_mfu(r, st->images_per_s), r->fma_peak_gflops,
                r->fma_peak_isa, 100 * record_executed_share(r, st->images_per_s));
    tprintf(t, "| CPU | %.2f s user, %.2f s sys |\n", st->cpu_user, st->cpu_sys);
    tprintf(t, "| Final training loss | %s |\n", fmt_fixed(a, sizeof a, st->final_loss, 4));
    if (r->have_eval)
        tprintf(t, "| Test accuracy | %.2f%% (%ld of %ld image%s) |\n", 100 * r->eval.accuracy,
                r->eval.correct, r->eval.images, r->eval.images == 1 ? "" : "s");
    if (r->peak_rss_kib >= 0)
        tprintf(t, "| Peak memory (RSS) | %.1f MiB |\n", r->peak_rss_kib / 1024.0);
    tprintf(t, "\n## Configuration\n\n| Setting | Value |\n|:---|---:|\n");
    tprintf(t, "| Batch | %d |\n| Loader workers | %d |\n| Prefetch | %d |\n", r->config.batch,
            r->config.workers, r->config.prefetch);
    tprintf(t, "| Compute threads | %d |\n| Learning rate | %g |\n| Seed | %llu |\n",
            r->threads_used, r->config.lr, (unsigned long long)r->config.seed);
    tprintf(t, "| Augmentation | %s |\n| Data | ", aug);
    md_cell(t, r->data_dir);
    tprintf(t, " |\n| Machine | ");
    md_cell(t, r->machine.cpu_model);
    tprintf(t, ", %d core%s, OpenBLAS ", r->machine.cores, r->machine.cores == 1 ? "" : "s");
    md_cell(t, r->machine.blas_core);
    if (r->machine.blas_isa[0])
        tprintf(t, " (%s; the CPU has %s)", r->machine.blas_isa, r->machine.cpu_isa);
    tprintf(t, " |\n");
    if (r->machine.blas_warning[0]) {
        tprintf(t, "| Warning | ");
        md_cell(t, r->machine.blas_warning);
        tprintf(t, " |\n");
    }
}

static void md_layers(Text *t, const RunRecord *r)
{
    double total = 0;
    char a[64];

    if (r->n_layers == 0 || r->train.steps <= 0)
        return;
    for (size_t i = 0; i < r->n_layers; i++)
        total += r->layers[i].seconds;
    tprintf(t, "\n## Layers\n\n| Layer | ms/step | Share | GFLOP/s |\n|:---|---:|---:|---:|\n");
    for (size_t i = 0; i < r->n_layers; i++) {
        const RecordLayer *l = &r->layers[i];
        tprintf(t, "| ");
        md_cell(t, l->name);
        tprintf(t, " | %.3f | %.1f%% | %s |\n", 1e3 * l->seconds / (double)r->train.steps,
                total > 0 ? 100 * l->seconds / total : 0.0, fmt_fixed(a, sizeof a, l->gflops, 1));
    }
}

static void md_series(Text *t, const RunRecord *r)
{
    char a[64], b[64];

    if (r->n_epochs) {
        tprintf(t, "\n## Epochs\n\n| Epoch | Loss | Test accuracy | Wall [s] |\n|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < r->n_epochs; i++) {
            const RecordEpoch *e = &r->epochs[i];
            tprintf(t, "| %d | %s | %s | %.2f |\n", e->epoch + 1, fmt_fixed(a, sizeof a, e->loss, 4),
                    isfinite(e->accuracy) ? fmt_fixed(b, sizeof b, 100 * e->accuracy, 2) : "",
                    e->wall);
        }
    }
    if (r->n_segments) {
        tprintf(t, "\n## Segments\n\n| Segment | Steps | Batch | Workers | Prefetch | Images/s |\n"
                   "|---:|---:|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < r->n_segments; i++) {
            const Segment *s = &r->segments[i];
            tprintf(t, "| %zu | %ld | %d | %d | %d | %s |\n", i, s->steps, s->batch, s->workers,
                    s->prefetch, fmt_pm(a, sizeof a, s->images_per_s,
                                        s->images_per_s_sd > 0 ? s->images_per_s_sd : NAN, 1));
        }
    }
}

static void md_counters(Text *t, const RunRecord *r)
{
    char a[64];

    if (!r->n_counters)
        return;
    tprintf(t, "\n## Counters\n\n| Role | Event | Value | Unit | Running |\n|:---|:---|---:|:---|---:|\n");
    for (size_t i = 0; i < r->n_counters; i++) {
        const RecordCounter *c = &r->counters[i];
        tprintf(t, "| %s | ", role_name(c->role));
        md_cell(t, c->name);
        if (c->status == RECORD_CTR_OK) {
            tprintf(t, " | %.0f | ", c->value);
            md_cell(t, c->unit);
            tprintf(t, " | %s |\n", isfinite(c->scaled) ? fmt_fixed(a, sizeof a, 100 * c->scaled, 1) : "");
        } else {
            tprintf(t, " | n/a: ");
            md_cell(t, c->reason[0] ? c->reason : status_name(c->status));
            tprintf(t, " | | |\n");
        }
    }
}

static void md_repeats(Text *t, const RunRecord *r)
{
    char a[64];

    if (!r->n_repeats)
        return;
    tprintf(t, "\n## Repeats\n\n| Run | Wall [s] | Images/s | User [s] | System [s] | Accuracy | Exit |\n"
               "|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < r->n_repeats; i++) {
        const RecordRepeat *p = &r->repeats[i];
        tprintf(t, "| %zu | %.3f | %.1f | %.2f | %.2f | %s | %d |\n", i + 1, p->wall, p->images_per_s,
                p->user, p->system,
                isfinite(p->accuracy) ? fmt_fixed(a, sizeof a, 100 * p->accuracy, 2) : "", p->exit_code);
    }
}

static int md_run(const RunRecord *r, char **out, size_t *len)
{
    Text t = {0};
    char label[160];

    tprintf(&t, "# cnntop run: ");
    md_cell(&t, record_label(r, label, sizeof label));
    tprintf(&t, "\n\n");
    if (r->command) {
        tprintf(&t, "Command: `");
        md_cell(&t, r->command);
        tprintf(&t, "`  \n");
    }
    tprintf(&t, "Date: %s, cnntop %s\n", r->date, r->version);
    if (r->interrupted)
        tprintf(&t, "\n**Interrupted by a signal: the figures cover the part that ran.**\n");
    if (r->error) {
        tprintf(&t, "\n**Failed: ");
        md_cell(&t, r->error);
        tprintf(&t, "**\n");
    }
    tprintf(&t, "\n");
    if (md_results_table(&t, &r, 1) != 0)
        t.failed = 1;
    md_summary(&t, r);
    md_layers(&t, r);
    md_series(&t, r);
    md_counters(&t, r);
    md_repeats(&t, r);
    return text_finish(&t, out, len);
}

static int md_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len)
{
    Text t = {0};

    tprintf(&t, "# cnntop sweep\n\n");
    if (n && runs[0]->command) {
        tprintf(&t, "Command: `");
        md_cell(&t, runs[0]->command);
        tprintf(&t, "`  \n");
    }
    if (n)
        tprintf(&t, "Date: %s, cnntop %s\n\n", runs[0]->date, runs[0]->version);
    if (md_results_table(&t, runs, n) != 0)
        t.failed = 1;
    return text_finish(&t, out, len);
}

int record_format(const RunRecord *r, ExportFormat fmt, char **out, size_t *len)
{
    switch (fmt) {
    case EXPORT_JSON:
        return json_run(r, out, len);
    case EXPORT_CSV:
        return csv_run(r, out, len);
    case EXPORT_MD:
    default:
        return md_run(r, out, len);
    }
}

int record_format_sweep(const RunRecord *const *runs, size_t n, ExportFormat fmt,
                        char **out, size_t *len)
{
    switch (fmt) {
    case EXPORT_JSON:
        return json_sweep(runs, n, out, len);
    case EXPORT_CSV:
        return csv_sweep(runs, n, out, len);
    case EXPORT_MD:
    default:
        return md_sweep(runs, n, out, len);
    }
}

/* -------------------------------------------------------------- files */

int export_format(const char *path, ExportFormat *fmt, char *err, size_t errlen)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');

    if (dot && (!slash || dot > slash)) {
        if (!strcasecmp(dot, ".json"))
            return *fmt = EXPORT_JSON, 0;
        if (!strcasecmp(dot, ".csv"))
            return *fmt = EXPORT_CSV, 0;
        if (!strcasecmp(dot, ".md"))
            return *fmt = EXPORT_MD, 0;
    }
    return cn_fail(err, errlen, -CN_EINVAL,
                   "%s: unknown export format (the name must end in .json, .csv or .md)", path);
}

int export_check(const char *path, int force, char *err, size_t errlen)
{
    ExportFormat fmt = EXPORT_JSON;
    struct stat st;
    int rc;

    if ((rc = export_format(path, &fmt, err, errlen)) != 0)
        return rc;
    if ((rc = fileio_check_writable(path, err, errlen)) != 0)
        return rc;
    if (!force && lstat(path, &st) == 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: file exists (--force overwrites it)", path);
    return 0;
}

/* Checks, then writes what format() made. */
static int write_export(const char *path, int force, int rc, char *text, size_t len,
                        char *err, size_t errlen)
{
    if (rc != 0) {
        free(text);
        return cn_fail(err, errlen, rc, "%s: out of memory while formatting the export", path);
    }
    /* Checked again now: the run may have taken hours, and the file may
     * have appeared meanwhile. */
    if ((rc = export_check(path, force, err, errlen)) == 0)
        rc = fileio_write_atomic(path, text, len, err, errlen);
    free(text);
    return rc;
}

int record_export(const RunRecord *r, const char *path, int force, char *err, size_t errlen)
{
    ExportFormat fmt = EXPORT_JSON;
    char *text = NULL;
    size_t len = 0;
    int rc = export_format(path, &fmt, err, errlen);

    if (rc != 0)
        return rc;
    rc = record_format(r, fmt, &text, &len);
    return write_export(path, force, rc, text, len, err, errlen);
}

int record_export_sweep(const RunRecord *const *runs, size_t n, const char *path, int force,
                        char *err, size_t errlen)
{
    ExportFormat fmt = EXPORT_JSON;
    char *text = NULL;
    size_t len = 0;
    int rc = export_format(path, &fmt, err, errlen);

    if (rc != 0)
        return rc;
    rc = record_format_sweep(runs, n, fmt, &text, &len);
    return write_export(path, force, rc, text, len, err, errlen);
}

/* ------------------------------------------------------------ JSON in */

/* Reading context: the file for messages and the first error. */
typedef struct Reader {
    const char *path;
    char *err;
    size_t errlen;
    int failed;
} Reader;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void bad(Reader *rd, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    if (rd->failed)
        return;
    rd->failed = 1;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (rd->err && rd->errlen)
        snprintf(rd->err, rd->errlen, "%s: %s", rd->path, msg);
}

/* A member that must be present and of type t (or null when nullable). */
static const JsonValue *member(Reader *rd, const JsonValue *obj, const char *where,
                               const char *key, JsonType t, int nullable)
{
    static const char *names[] = {"null", "a boolean", "a number", "a string", "an array",
                                  "an object"};
    const JsonValue *v = json_get(obj, key);

    if (rd->failed)
        return NULL;
    if (!v) {
        bad(rd, "%s%s%s: missing", where, *where ? "." : "", key);
        return NULL;
    }
    if (v->type == t || (nullable && v->type == JSON_NULL))
        return v;
    bad(rd, "%s%s%s: expected %s%s, found %s", where, *where ? "." : "", key, names[t],
        nullable ? " or null" : "", names[v->type]);
    return NULL;
}

/* A double; null reads as NAN. */
static double get_num(Reader *rd, const JsonValue *obj, const char *where, const char *key)
{
    return json_as_number(member(rd, obj, where, key, JSON_NUMBER, 1), NAN);
}

/* An integer in [lo, hi]; null reads as `null_is` when allowed (nullable). */
static long long get_int_null(Reader *rd, const JsonValue *obj, const char *where,
                              const char *key, long long lo, long long hi, int nullable,
                              long long null_is)
{
    const JsonValue *v = member(rd, obj, where, key, JSON_NUMBER, nullable);
    int64_t x;

    if (!v)
        return 0;
    if (v->type == JSON_NULL)
        return null_is;
    x = json_as_int(v, INT64_MIN);
    if (x == INT64_MIN || x < lo || x > hi) {
        bad(rd, "%s%s%s: expected a whole number in %lld..%lld", where, *where ? "." : "", key,
            lo, hi);
        return 0;
    }
    return x;
}

static long long get_int(Reader *rd, const JsonValue *obj, const char *where, const char *key,
                         long long lo, long long hi)
{
    return get_int_null(rd, obj, where, key, lo, hi, 0, 0);
}

static int get_bool(Reader *rd, const JsonValue *obj, const char *where, const char *key)
{
    return json_as_bool(member(rd, obj, where, key, JSON_BOOL, 0), 0);
}

/* A string into a fixed buffer (truncated to fit); null reads as "". */
static void get_str(Reader *rd, const JsonValue *obj, const char *where, const char *key,
                    char *buf, size_t len)
{
    snprintf(buf, len, "%s", json_as_string(member(rd, obj, where, key, JSON_STRING, 1), ""));
}

/* Members added after cnntop.run/1 first shipped (the FMA peak, MFU): an
 * older record lacks them, and reads them as unknown. */
static double get_num_opt(Reader *rd, const JsonValue *obj, const char *where, const char *key)
{
    return json_get(obj, key) ? get_num(rd, obj, where, key) : NAN;
}

static void get_str_opt(Reader *rd, const JsonValue *obj, const char *where, const char *key,
                        char *buf, size_t len)
{
    buf[0] = '\0';
    if (json_get(obj, key))
        get_str(rd, obj, where, key, buf, len);
}

/* A string into an owned copy; null reads as NULL. */
static void get_dup(Reader *rd, const JsonValue *obj, const char *where, const char *key,
                    char **slot)
{
    const char *s = json_as_string(member(rd, obj, where, key, JSON_STRING, 1), NULL);

    if (s && set_string(slot, s) != 0)
        bad(rd, "out of memory");
}

#define L_MAX 0x7fffffffffffffffLL
#define I_MAX 0x7fffffffLL

static void read_config(Reader *rd, const JsonValue *root, RunRecord *r)
{
    const JsonValue *c = member(rd, root, "", "config", JSON_OBJECT, 0), *aug;
    RunConfig *k = &r->config;

    if (!c)
        return;
    k->batch = (int)get_int(rd, c, "config", "batch", 0, I_MAX);
    k->epochs = (int)get_int(rd, c, "config", "epochs", 0, I_MAX);
    k->steps = (long)get_int(rd, c, "config", "steps", 0, L_MAX);
    k->limit = (long)get_int(rd, c, "config", "limit", 0, L_MAX);
    k->test_limit = (long)get_int(rd, c, "config", "test_limit", 0, L_MAX);
    k->threads = (int)get_int(rd, c, "config", "threads", 0, I_MAX);
    k->lr = get_num(rd, c, "config", "lr");
    k->seed = json_as_uint(member(rd, c, "config", "seed", JSON_NUMBER, 0), 0);
    k->workers = (int)get_int(rd, c, "config", "workers", 0, I_MAX);
    k->prefetch = (int)get_int(rd, c, "config", "prefetch", 0, I_MAX);
    aug = member(rd, c, "config", "augment", JSON_ARRAY, 0);
    k->augment = 0;
    for (size_t i = 0; i < json_count(aug); i++) {
        const char *name = json_as_string(json_at(aug, i), "");
        size_t j = 0;
        while (j < sizeof aug_names / sizeof *aug_names && strcmp(aug_names[j].name, name))
            j++;
        if (j == sizeof aug_names / sizeof *aug_names) {
            bad(rd, "config.augment: unknown augmentation \"%s\"", name);
            return;
        }
        k->augment |= aug_names[j].bit;
    }
}

static void read_machine(Reader *rd, const JsonValue *root, RunRecord *r)
{
    const JsonValue *m = member(rd, root, "", "machine", JSON_OBJECT, 0);
    MachineInfo *mi = &r->machine;

    if (!m)
        return;
    get_str(rd, m, "machine", "cpu_model", mi->cpu_model, sizeof mi->cpu_model);
    mi->cores = (int)get_int(rd, m, "machine", "cores", 0, I_MAX);
    get_str(rd, m, "machine", "blas_core", mi->blas_core, sizeof mi->blas_core);
    get_str(rd, m, "machine", "blas_config", mi->blas_config, sizeof mi->blas_config);
    get_str(rd, m, "machine", "blas_warning", mi->blas_warning, sizeof mi->blas_warning);
    r->peak_gflops = get_num(rd, m, "machine", "peak_gflops");
    get_str_opt(rd, m, "machine", "blas_note", mi->blas_note, sizeof mi->blas_note);
    get_str_opt(rd, m, "machine", "cpu_isa", mi->cpu_isa, sizeof mi->cpu_isa);
    get_str_opt(rd, m, "machine", "blas_isa", mi->blas_isa, sizeof mi->blas_isa);
    r->fma_peak_gflops = get_num_opt(rd, m, "machine", "fma_peak_gflops");
    get_str_opt(rd, m, "machine", "fma_peak_isa", r->fma_peak_isa, sizeof r->fma_peak_isa);
}

static void read_train(Reader *rd, const JsonValue *root, RunRecord *r)
{
    const JsonValue *t = member(rd, root, "", "train", JSON_OBJECT, 0), *sp;
    TrainStats *st = &r->train;

    if (!t)
        return;
    st->steps = (long)get_int(rd, t, "train", "steps", 0, L_MAX);
    st->images = (long)get_int(rd, t, "train", "images", 0, L_MAX);
    st->epochs_done = (int)get_int(rd, t, "train", "epochs_done", 0, I_MAX);
    st->wall = get_num(rd, t, "train", "wall");
    st->images_per_s = get_num(rd, t, "train", "images_per_s");
    st->cpu_user = get_num(rd, t, "train", "cpu_user");
    st->cpu_sys = get_num(rd, t, "train", "cpu_sys");
    st->minor_faults = (long)get_int(rd, t, "train", "minor_faults", 0, L_MAX);
    st->last_loss = (float)get_num(rd, t, "train", "last_loss");
    st->final_loss = get_num(rd, t, "train", "final_loss");
    st->stopped = get_bool(rd, t, "train", "stopped");
    sp = member(rd, t, "train", "split", JSON_OBJECT, 0);
    if (!sp)
        return;
    st->split.data = get_num(rd, sp, "train.split", "data");
    st->split.forward = get_num(rd, sp, "train.split", "forward");
    st->split.backward = get_num(rd, sp, "train.split", "backward");
    st->split.optimizer = get_num(rd, sp, "train.split", "optimizer");
}

static void read_eval(Reader *rd, const JsonValue *root, RunRecord *r)
{
    const JsonValue *e = member(rd, root, "", "eval", JSON_OBJECT, 1);

    r->have_eval = json_is(e, JSON_OBJECT);
    if (!r->have_eval)
        return;
    r->eval.images = (long)get_int(rd, e, "eval", "images", 0, L_MAX);
    r->eval.correct = (long)get_int(rd, e, "eval", "correct", 0, L_MAX);
    r->eval.accuracy = get_num(rd, e, "eval", "accuracy");
    r->eval.loss = get_num(rd, e, "eval", "loss");
    r->eval.wall = get_num(rd, e, "eval", "wall");
}

/* Each element of the array `key` must be an object; returns the array. */
static const JsonValue *object_array(Reader *rd, const JsonValue *root, const char *key)
{
    const JsonValue *a = member(rd, root, "", key, JSON_ARRAY, 0);

    for (size_t i = 0; i < json_count(a); i++)
        if (!json_is(json_at(a, i), JSON_OBJECT)) {
            bad(rd, "%s[%zu]: expected an object", key, i);
            return NULL;
        }
    return a;
}

static void read_epochs(Reader *rd, const JsonValue *root, RunRecord *r)
{
    const JsonValue *a = object_array(rd, root, "epochs");

    for (size_t i = 0; i < json_count(a) && !rd->failed; i++) {
        const JsonValue *o = json_at(a, i);
        RecordEpoch e = {
            .epoch = (int)get_int(rd, o, "epochs[]", "epoch", 0, I_MAX),
            .loss = get_num(rd, o, "epochs[]", "loss"),
            .accuracy = get_num(rd, o, "epochs[]", "accuracy"),
            .wall = get_num(rd, o, "epochs[]", "wall"),
        };
        if (record_add_epoch(r, &e) != 0)
            bad(rd, "out of memory");
    }
}

/* Added within version 1: absent in older files. */
static void read_evals(Reader *rd, const JsonValue *root, RunRecord *r)
{
    if (json_get(root, "target_accuracy"))
        r->target_accuracy = get_num(rd, root, "", "target_accuracy");
    if (json_get(root, "time_to_target"))
        r->time_to_target = get_num(rd, root, "", "time_to_target");
    if (!json_get(root, "evals"))
        return;
    const JsonValue *a = object_array(rd, root, "evals");
    for (size_t i = 0; i < json_count(a) && !rd->failed; i++) {
        const JsonValue *o = json_at(a, i);
        RecordEval e = {
            .step = (long)get_int(rd, o, "evals[]", "step", 0, L_MAX),
            .epoch = (int)get_int(rd, o, "evals[]", "epoch", 0, I_MAX),
            .epoch_end = get_bool(rd, o, "evals[]", "epoch_end"),
            .wall = get_num(rd, o, "evals[]", "wall"),
            .accuracy = get_num(rd, o, "evals[]", "accuracy"),
            .loss = get_num(rd, o, "evals[]", "loss"),
        };
        if (record_add_eval(r, &e) != 0)
            bad(rd, "out of memory");
    }
}

static void read_samples(Reader *rd, const JsonValue *root, RunRecord *r)
{
    const JsonValue *a = object_array(rd, root, "samples");
    const char *w = "samples[]";

    for (size_t i = 0; i < json_count(a) && !rd->failed; i++) {
        const JsonValue *o = json_at(a, i);
        Sample s;
        memset(&s, 0, sizeof s);
        s.t = get_num(rd, o, w, "t");
        int epoch = (int)get_int_null(rd, o, w, "epoch", 0, I_MAX, 1, -1);
        s.step = (long)get_int(rd, o, w, "step", 0, L_MAX);
        s.images = (long)get_int(rd, o, w, "images", 0, L_MAX);
        s.loss = (float)get_num(rd, o, w, "loss");
        s.images_per_s = (float)get_num(rd, o, w, "images_per_s");
        double q = get_num(rd, o, w, "queue_fill");
        s.queue_fill = isnan(q) ? -1.0f : (float)q;
        s.data_wait_share = (float)get_num(rd, o, w, "data_wait_share");
        s.workers = (int)get_int(rd, o, w, "workers", 0, I_MAX);
        s.batch = (int)get_int(rd, o, w, "batch", 0, I_MAX);
        s.segment = (int)get_int(rd, o, w, "segment", 0, I_MAX);
        double ipc = get_num(rd, o, w, "ipc"), mr = get_num(rd, o, w, "miss_rate");
        if (!rd->failed && record_add_sample(r, &s, epoch, ipc, mr) != 0)
            bad(rd, "out of memory");
    }
}

static void read_segments(Reader *rd, const JsonValue *root, RunRecord *r)
{
    const JsonValue *a = object_array(rd, root, "segments");
    const char *w = "segments[]";

    for (size_t i = 0; i < json_count(a) && !rd->failed; i++) {
        const JsonValue *o = json_at(a, i);
        Segment s = {
            .first_step = (long)get_int(rd, o, w, "first_step", 0, L_MAX),
            .steps = (long)get_int(rd, o, w, "steps", 0, L_MAX),
            .t0 = get_num(rd, o, w, "t0"),
            .wall = get_num(rd, o, w, "wall"),
            .batch = (int)get_int(rd, o, w, "batch", 0, I_MAX),
            .workers = (int)get_int(rd, o, w, "workers", 0, I_MAX),
            .prefetch = (int)get_int(rd, o, w, "prefetch", 0, I_MAX),
            .images = (long)get_int(rd, o, w, "images", 0, L_MAX),
            .images_per_s = get_num(rd, o, w, "images_per_s"),
            .images_per_s_sd = get_num(rd, o, w, "images_per_s_sd"),
            .warmup_steps = (long)get_int(rd, o, w, "warmup_steps", 0, L_MAX),
        };
        if (!rd->failed && record_add_segment(r, &s) != 0)
            bad(rd, "out of memory");
    }
}

static void read_layers(Reader *rd, const JsonValue *root, RunRecord *r)
{
    const JsonValue *a = object_array(rd, root, "layers");
    const char *w = "layers[]";

    for (size_t i = 0; i < json_count(a) && !rd->failed; i++) {
        const JsonValue *o = json_at(a, i);
        RecordLayer l;
        memset(&l, 0, sizeof l);
        get_str(rd, o, w, "name", l.name, sizeof l.name);
        l.seconds = get_num(rd, o, w, "seconds");
        l.calls = (long)get_int(rd, o, w, "calls", 0, L_MAX);
        l.flops = get_num(rd, o, w, "flops");
        l.gflops = get_num(rd, o, w, "gflops");
        /* added within version 1: absent in older files */
        l.ipc = json_get(o, "ipc") ? get_num(rd, o, w, "ipc") : NAN;
        l.miss_rate = json_get(o, "miss_rate") ? get_num(rd, o, w, "miss_rate") : NAN;
        if (!rd->failed && PUSH(r, layers, &l) != 0)
            bad(rd, "out of memory");
    }
}

static void read_counters(Reader *rd, const JsonValue *root, RunRecord *r)
{
    const JsonValue *a = object_array(rd, root, "counters");
    const char *w = "counters[]";
    char role[16], status[16];

    for (size_t i = 0; i < json_count(a) && !rd->failed; i++) {
        const JsonValue *o = json_at(a, i);
        RecordCounter c;
        memset(&c, 0, sizeof c);
        get_str(rd, o, w, "role", role, sizeof role);
        get_str(rd, o, w, "name", c.name, sizeof c.name);
        c.value = get_num(rd, o, w, "value");
        get_str(rd, o, w, "unit", c.unit, sizeof c.unit);
        c.scaled = get_num(rd, o, w, "scaled");
        get_str(rd, o, w, "status", status, sizeof status);
        get_str(rd, o, w, "reason", c.reason, sizeof c.reason);
        if (rd->failed)
            return;
        if (strcmp(role, "train") && strcmp(role, "load"))
        {
            bad(rd, "counters[%zu].role: unknown role \"%s\"", i, role);
            return;
        }
        c.role = strcmp(role, "load") ? CN_ROLE_TRAIN : CN_ROLE_LOAD;
        if (!strcmp(status, "ok"))
            c.status = RECORD_CTR_OK;
        else if (!strcmp(status, "not-counted"))
            c.status = RECORD_CTR_NOT_COUNTED;
        else if (!strcmp(status, "unavailable"))
            c.status = RECORD_CTR_UNAVAILABLE;
        else {
            bad(rd, "counters[%zu].status: unknown status \"%s\"", i, status);
            return;
        }
        if (record_add_counter(r, &c) != 0)
            bad(rd, "out of memory");
    }
}

static void read_repeats(Reader *rd, const JsonValue *root, RunRecord *r)
{
    const JsonValue *a = object_array(rd, root, "repeats");
    const char *w = "repeats[]";

    for (size_t i = 0; i < json_count(a) && !rd->failed; i++) {
        const JsonValue *o = json_at(a, i);
        RecordRepeat p = {
            .wall = get_num(rd, o, w, "wall"),
            .images_per_s = get_num(rd, o, w, "images_per_s"),
            .user = get_num(rd, o, w, "user"),
            .system = get_num(rd, o, w, "system"),
            .accuracy = get_num(rd, o, w, "accuracy"),
            .exit_code = (int)get_int(rd, o, w, "exit_code", 0, 255),
        };
        if (!rd->failed && record_add_repeat(r, &p) != 0)
            bad(rd, "out of memory");
    }
}

/* Checks the "schema" member of a document: want is RECORD_SCHEMA or
 * RECORD_SWEEP_SCHEMA, either is accepted when want is NULL. */
static const char *check_schema(Reader *rd, const JsonValue *root, const char *want)
{
    const char *s = json_as_string(json_get(root, "schema"), NULL);

    if (!json_is(root, JSON_OBJECT) || !s) {
        bad(rd, "not a cnntop record (no \"schema\" member)");
        return NULL;
    }
    if ((!want || !strcmp(want, RECORD_SCHEMA)) && !strcmp(s, RECORD_SCHEMA))
        return s;
    if ((!want || !strcmp(want, RECORD_SWEEP_SCHEMA)) && !strcmp(s, RECORD_SWEEP_SCHEMA))
        return s;
    if (!strncmp(s, "cnntop.", 7))
        bad(rd, "unsupported schema \"%.60s\" (this cnntop %s reads %s%s%s)", s,
            CNNTOP_VERSION, want ? want : RECORD_SCHEMA, want ? "" : " and ",
            want ? "" : RECORD_SWEEP_SCHEMA);
    else
        bad(rd, "not a cnntop record (schema \"%.60s\")", s);
    return NULL;
}

/* Fills r (initialised) from one run object. */
static void read_run(Reader *rd, const JsonValue *o, RunRecord *r)
{
    const JsonValue *d;

    if (!check_schema(rd, o, RECORD_SCHEMA))
        return;
    get_str(rd, o, "", "cnntop_version", r->version, sizeof r->version);
    get_str(rd, o, "", "date", r->date, sizeof r->date);
    get_dup(rd, o, "", "command", &r->command);
    get_dup(rd, o, "", "label", &r->label);
    read_config(rd, o, r);
    if ((d = member(rd, o, "", "data", JSON_OBJECT, 0))) {
        get_dup(rd, d, "data", "dir", &r->data_dir);
        r->config.data_dir = r->data_dir;
        r->train_images = (long)get_int_null(rd, d, "data", "train_images", 0, L_MAX, 1, -1);
        r->test_images = (long)get_int_null(rd, d, "data", "test_images", 0, L_MAX, 1, -1);
    }
    r->threads_used = (int)get_int(rd, o, "", "threads_used", 0, I_MAX);
    read_machine(rd, o, r);
    r->flops_per_image = get_num(rd, o, "", "flops_per_image");
    r->flops_executed_per_image = get_num_opt(rd, o, "", "flops_executed_per_image");
    read_train(rd, o, r);
    read_eval(rd, o, r);
    r->peak_rss_kib = (long)get_int_null(rd, o, "", "peak_rss_kib", 0, L_MAX, 1, -1);
    r->loader_samples_per_s = get_num(rd, o, "", "loader_samples_per_s");
    /* Since the shared verdict and counter figures; older files lack them. */
    r->run_queue_wait = json_get(o, "run_queue_wait") ? get_num(rd, o, "", "run_queue_wait") : NAN;
    r->ipc = json_get(o, "ipc") ? get_num(rd, o, "", "ipc") : NAN;
    r->miss_rate = json_get(o, "miss_rate") ? get_num(rd, o, "", "miss_rate") : NAN;
    if (json_get(o, "ipc_na"))
        get_str(rd, o, "", "ipc_na", r->ipc_na, sizeof r->ipc_na);
    if (json_get(o, "miss_rate_na"))
        get_str(rd, o, "", "miss_rate_na", r->miss_rate_na, sizeof r->miss_rate_na);
    r->interrupted = get_bool(rd, o, "", "interrupted");
    r->exit_code = (int)get_int(rd, o, "", "exit_code", 0, 255);
    get_dup(rd, o, "", "error", &r->error);
    read_epochs(rd, o, r);
    read_evals(rd, o, r);
    read_samples(rd, o, r);
    read_segments(rd, o, r);
    read_layers(rd, o, r);
    read_counters(rd, o, r);
    read_repeats(rd, o, r);
}

/* Reads and parses path; *root on success. */
static int load_tree(Reader *rd, JsonValue **root)
{
    unsigned char *buf;
    size_t len;
    char perr[200];
    int rc = fileio_read_all(rd->path, JSON_MAX_INPUT, &buf, &len, rd->err, rd->errlen);

    *root = NULL;
    if (rc != 0)
        return rc;
    rc = json_parse((const char *)buf, len, root, perr, sizeof perr);
    free(buf);
    if (rc != 0)
        return cn_fail(rd->err, rd->errlen, -CN_EFORMAT, "%s:%s", rd->path, perr);
    return 0;
}

int record_load_json(const char *path, RunRecord *r, char *err, size_t errlen)
{
    Reader rd = {.path = path, .err = err, .errlen = errlen};
    JsonValue *root;
    int rc;

    record_init(r);
    if ((rc = load_tree(&rd, &root)) != 0)
        return rc;
    read_run(&rd, root, r);
    json_free(root);
    return rd.failed ? -CN_EFORMAT : 0;
}

int record_load_any(const char *path, RunRecord **out, size_t *n, char *err, size_t errlen)
{
    Reader rd = {.path = path, .err = err, .errlen = errlen};
    const JsonValue *runs;
    JsonValue *root;
    const char *schema;
    size_t count;
    int rc;

    *out = NULL;
    *n = 0;
    if ((rc = load_tree(&rd, &root)) != 0)
        return rc;
    if (!(schema = check_schema(&rd, root, NULL))) {
        json_free(root);
        return -CN_EFORMAT;
    }
    runs = strcmp(schema, RECORD_SWEEP_SCHEMA) ? NULL : member(&rd, root, "", "runs", JSON_ARRAY, 0);
    count = runs ? json_count(runs) : 1;
    RunRecord *recs = rd.failed ? NULL : calloc(count ? count : 1, sizeof *recs);
    size_t made = 0;
    if (!rd.failed && !recs)
        bad(&rd, "out of memory");
    for (size_t i = 0; recs && i < count && !rd.failed; i++) {
        record_init(&recs[i]);
        made = i + 1;
        read_run(&rd, runs ? json_at(runs, i) : root, &recs[i]);
    }
    json_free(root);
    if (rd.failed || !recs) {
        for (size_t i = 0; recs && i < made; i++)
            record_done(&recs[i]);
        free(recs);
        return -CN_EFORMAT;
    }
    *out = recs;
    *n = made;
    return 0;
}

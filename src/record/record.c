/*
 * record.c: the run record (record.h): making and freeing one, its setters
 * and growable arrays, its label and its runs' times.
 *
 * Layout: a RunRecord is a plain struct with seven growable arrays
 * (pointer, count, capacity), each grown by doubling.  What the record
 * holds is listed once, in the field tables of fields.c; the exports are
 * json_write.c, csv.c and markdown.c, written to files by export.c, and
 * json_read.c reads a JSON export back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cnntop/figures.h"
#include "cnntop/record.h"
#include "cnntop/version.h"
#include "record/fields.h"
#include "util/err.h"

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
    r->sketch_gflops = r->triad_gbps = NAN;
    r->flops_executed_per_image = NAN;
    r->target_accuracy = NAN;
    r->time_to_target = NAN;
    r->flops_per_image = NAN;
    r->model.step_in = r->model.step_out = NAN;
    r->model.steps_out = -1;
    r->peak_rss_kib = -1;
    r->loader_samples_per_s = NAN;
    r->run_queue_wait = NAN;
    r->ipc = r->miss_rate = NAN;
    r->have_train = 1;
    r->exec.images_per_s = r->exec.data_wait_share = r->exec.wall = NAN;
    r->exec.batches = r->exec.hook_rejected = -1;
    r->exec.loader_workers = r->exec.busy_threads = r->exec.worker_procs = -1;
    r->exec.runs = 1;
    r->exec.images = r->exec.window = r->exec.wait = r->exec.step_s = NAN;
    r->exec.first_wait = r->exec.cpu = NAN;
    r->exec.dropped = -1;
    r->exec.minflt = r->exec.majflt = -1;
    r->exec.progress_matches = -1;
    r->exec.progress_last = r->exec.progress_mean = NAN;
    r->exec.progress_min = r->exec.progress_max = NAN;
}

void record_set_calibration(RunRecord *r, const Calibration *c)
{
    int k = 0, w, peak;

    /* the SGEMM rate measured at the nearest batch size's shapes */
    for (int i = 1; i < CALIB_NBATCH; i++)
        if (abs(c->batch[i] - r->config.batch) < abs(c->batch[k] - r->config.batch))
            k = i;
    r->peak_gflops = c->model_gflops[k];
    double fma = calibrate_peak(c, &w);
    r->fma_peak_gflops = fma > 0.0 ? fma : NAN;
    snprintf(r->fma_peak_isa, sizeof r->fma_peak_isa, "%s", fma > 0.0 ? calibrate_width_name(w) : "");
    double g = calibrate_sketch_gflops(c, r->config.batch, &peak);
    r->sketch_gflops = g > 0.0 ? g : NAN;
    r->triad_gbps = c->triad_gbps > 0.0 ? c->triad_gbps : NAN;
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
    free(r->dist_ranks);
    free(r->layers);
    free(r->counters);
    free(r->roles);
    free(r->repeats);
    free(r->evals);
    free(r->exec.command);
    free(r->exec.progress);
    free(r->exec_counters);
    free(r->exec_roles);
    free(r->exec_procs);
    free(r->exec_ranks);
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

/* argv[0..argc) shell-quoted into a new string; NULL: out of memory. */
static char *quote_argv(int argc, char **argv)
{
    size_t n = 1;
    char *c, *o;

    for (int i = 0; i < argc; i++)
        n += 4 * strlen(argv[i]) + 3; /* each ' becomes '\'' */
    c = o = calloc(1, n);
    if (!c)
        return NULL;
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
    return c;
}

int record_set_command(RunRecord *r, int argc, char **argv)
{
    char *c = quote_argv(argc, argv);

    if (!c)
        return -CN_ENOMEM;
    free(r->command);
    r->command = c;
    return 0;
}

int record_push(void **arr, size_t *n, size_t *cap, const void *elem, size_t size)
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
    record_push((void **)&(r)->field, &(r)->n_##field, &(r)->cap_##field, (elem), sizeof *(r)->field)

int record_add_epoch(RunRecord *r, const RecordEpoch *e) { return PUSH(r, epochs, e); }
int record_add_eval(RunRecord *r, const RecordEval *ev) { return PUSH(r, evals, ev); }
int record_add_segment(RunRecord *r, const Segment *s) { return PUSH(r, segments, s); }
int record_add_dist_rank(RunRecord *r, const DistRank *d) { return PUSH(r, dist_ranks, d); }
int record_add_counter(RunRecord *r, const RecordCounter *c) { return PUSH(r, counters, c); }
int record_add_role(RunRecord *r, const RecordRole *role) { return PUSH(r, roles, role); }
int record_add_repeat(RunRecord *r, const RecordRepeat *rep) { return PUSH(r, repeats, rep); }
int record_add_exec_counter(RunRecord *r, const RecordCounter *c)
{
    return PUSH(r, exec_counters, c);
}

int record_add_exec_role(RunRecord *r, const RecordExecRole *role)
{
    return PUSH(r, exec_roles, role);
}

int record_add_exec_proc(RunRecord *r, const RecordProc *p) { return PUSH(r, exec_procs, p); }
int record_add_exec_rank(RunRecord *r, const RecordExecRank *k) { return PUSH(r, exec_ranks, k); }

int record_set_exec_progress(RunRecord *r, const char *regex)
{
    return set_string(&r->exec.progress, regex);
}

int record_set_exec_command(RunRecord *r, char **argv)
{
    int argc = 0;

    while (argv[argc])
        argc++;
    char *c = quote_argv(argc, argv);
    if (!c)
        return -CN_ENOMEM;
    free(r->exec.command);
    r->exec.command = c;
    r->have_exec = 1;
    return 0;
}

int record_add_sample(RunRecord *r, const Sample *s, int epoch, double ipc, double miss_rate)
{
    RecordSample rs = {.s = *s, .epoch = epoch, .ipc = ipc, .miss_rate = miss_rate};
    return PUSH(r, samples, &rs);
}

int record_add_layer(RunRecord *r, const LayerTime *lt)
{
    RecordLayer l;

    memset(&l, 0, sizeof l);
    snprintf(l.name, sizeof l.name, "%s", lt->name);
    l.seconds = lt->seconds;
    l.calls = lt->calls;
    l.flops = lt->flops > 0 ? lt->flops : NAN;
    l.gflops = figures_rate_gflops(l.flops, lt->seconds);
    l.flops_executed = lt->flops_executed > 0 ? lt->flops_executed : NAN;
    l.gflops_executed = figures_rate_gflops(l.flops_executed, lt->seconds);
    l.bytes = lt->bytes > 0 ? lt->bytes : NAN;
    l.ipc = l.miss_rate = NAN;
    return PUSH(r, layers, &l);
}

int record_flops_differ(double flops, double flops_executed)
{
    if (!(flops_executed > 0.0) || isinf(flops_executed))
        return 0;
    return !(flops > 0.0) || isinf(flops) || fabs(flops_executed - flops) > 1e-9 * flops;
}

int record_layer_executed_differs(const RecordLayer *l)
{
    return record_flops_differ(l->flops, l->flops_executed);
}

long record_layer_steps(const RunRecord *r)
{
    if (r->have_train)
        return r->train.steps;
    return r->have_model ? r->model.steps : 0;
}

double record_model_overhead(const RunRecord *r)
{
    const RecordModel *m = &r->model;

    if (!r->have_model || !(m->step_in > 0) || !(m->step_out > 0))
        return NAN;
    return m->step_in / m->step_out - 1.0;
}

const char *record_label(const RunRecord *r, char *buf, size_t len)
{
    int w = r->config.workers, t = r->threads_used > 0 ? r->threads_used : r->config.threads;

    if (r->label && *r->label)
        snprintf(buf, len, "%s", r->label);
    else
        snprintf(buf, len, "batch %d, %d worker%s, %d thread%s", r->config.batch, w,
                 w == 1 ? "" : "s", t, t == 1 ? "" : "s");
    if (!(r->label && *r->label) && r->have_dist && r->train.dist.ranks > 0) {
        size_t n = strlen(buf);
        snprintf(buf + n, len > n ? len - n : 0, ", %d rank%s", r->train.dist.ranks,
                 r->train.dist.ranks == 1 ? "" : "s");
    }
    return buf;
}

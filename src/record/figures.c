/*
 * figures.c: figures derived from a record, for the exports and every
 * front end (cnntop/figures.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/figures.h"
#include "record/fields.h"
#include "util/err.h"

double record_mean_cpu(const RunRecord *r, int which)
{
    double s = 0;

    if (r->n_repeats == 0 && !r->have_train)
        return NAN; /* a command's CPU time is not split into user and system */
    if (r->n_repeats == 0)
        return which ? r->train.cpu_sys : r->train.cpu_user;
    for (size_t i = 0; i < r->n_repeats; i++)
        s += which ? r->repeats[i].system : r->repeats[i].user;
    return s / (double)r->n_repeats;
}

size_t record_times(const RunRecord *r, double *out, size_t max)
{
    size_t n = 0;

    if (r->n_repeats == 0 && max > 0)
        out[n++] = r->have_exec ? r->exec.wall : r->train.wall;
    for (size_t i = 0; i < r->n_repeats && n < max; i++)
        out[n++] = r->repeats[i].wall;
    return n;
}

size_t record_throughputs(const RunRecord *r, double *out, size_t max)
{
    size_t n = 0;

    if (r->n_repeats == 0 && max > 0)
        out[n++] = r->have_exec ? r->exec.images_per_s : r->train.images_per_s;
    for (size_t i = 0; i < r->n_repeats && n < max; i++)
        out[n++] = r->repeats[i].images_per_s;
    return n;
}

int record_times_summary(const RunRecord *r, double **times, size_t *n, StatsSummary *s)
{
    size_t cap = r->n_repeats ? r->n_repeats : 1;

    *n = 0;
    *times = malloc(cap * sizeof **times);
    if (!*times)
        return -CN_ENOMEM;
    *n = record_times(r, *times, cap);
    return stats_summarize(*times, *n, s) == 0 ? 0 : -CN_ENOMEM;
}

/* An empty summary: no runs, every figure unknown. */
static void summary_unknown(StatsSummary *s)
{
    memset(s, 0, sizeof *s);
    s->mean = s->sd = s->median = s->min = s->max = NAN;
}

void record_throughput_summary(const RunRecord *r, StatsSummary *s)
{
    size_t cap = r->n_repeats ? r->n_repeats : 1, n, k;
    double *v = malloc(cap * sizeof *v);

    summary_unknown(s);
    if (!v)
        return;
    n = record_throughputs(r, v, cap);
    for (k = 0; k < n && !isnan(v[k]); k++)
        ;
    if (n && k == n)
        stats_summarize(v, n, s);
    free(v);
}

int record_figures(const RunRecord *r, RecordFigures *f)
{
    double *tm;
    size_t nt;
    int rc = record_times_summary(r, &tm, &nt, &f->time);

    free(tm);
    if (rc != 0)
        summary_unknown(&f->time);
    record_throughput_summary(r, &f->ips);
    f->accuracy = record_mean_accuracy(r);
    f->wait_share = record_wait_share(r);
    f->gflops = figures_gflops(f->ips.mean, r->flops_per_image);
    f->mfu = record_mfu(r, f->ips.mean);
    f->executed = record_executed_share(r, f->ips.mean);
    return rc;
}

double record_mean_accuracy(const RunRecord *r)
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

void figures_split_shares(const StepSplit *sp, double share[SPLIT_PARTS])
{
    const double part[SPLIT_PARTS] = {sp->data, sp->forward, sp->backward, sp->optimizer,
                                      sp->comm};
    double t = 0;

    for (int k = 0; k < SPLIT_PARTS; k++)
        t += part[k];
    for (int k = 0; k < SPLIT_PARTS; k++)
        share[k] = t > 0 ? part[k] / t : NAN;
}

double figures_wait_share(const StepSplit *sp)
{
    double share[SPLIT_PARTS];

    figures_split_shares(sp, share);
    return share[0];
}

double record_wait_share(const RunRecord *r)
{
    if (r->have_exec)
        return r->exec.data_wait_share;
    return r->have_train ? figures_wait_share(&r->train.split) : NAN;
}

double figures_peak_share(double images_per_s, double flops, double peak_gflops)
{
    if (!(peak_gflops > 0.0) || !isfinite(flops) || !isfinite(images_per_s))
        return NAN;
    return images_per_s * flops / (peak_gflops * 1e9);
}

double figures_gflops(double images_per_s, double flops_per_image)
{
    if (!isfinite(images_per_s) || !isfinite(flops_per_image) || images_per_s < 0 ||
        flops_per_image < 0)
        return NAN;
    return images_per_s * flops_per_image * 1e-9;
}

double figures_rate_gflops(double flops, double seconds)
{
    return isfinite(flops) && flops > 0 && seconds > 0 ? flops / seconds * 1e-9 : NAN;
}

double figures_cores_busy(double cpu_s, double wall_s)
{
    return isfinite(cpu_s) && wall_s > 0 ? cpu_s / wall_s : NAN;
}

int figures_segment_change(const Segment *now, const Segment *before, double *ratio,
                           double *err, int *real)
{
    long nc = now->steps - now->warmup_steps, np = before->steps - before->warmup_steps;

    *ratio = *err = NAN;
    *real = 0;
    if (nc < 2 || np < 2 || !(before->images_per_s > 0))
        return -1;
    double se_c = now->images_per_s_sd / sqrt((double)nc);
    double se_p = before->images_per_s_sd / sqrt((double)np);
    stats_ratio(now->images_per_s, se_c, before->images_per_s, se_p, ratio, err);
    *real = fabs(now->images_per_s - before->images_per_s) > 2 * sqrt(se_c * se_c + se_p * se_p);
    return 0;
}

int record_job_ranks(const RunRecord *r)
{
    if (r->have_dist && r->train.dist.ranks > 1)
        return r->train.dist.ranks;
    if (r->have_exec && r->n_exec_ranks > 1)
        return (int)r->n_exec_ranks;
    return 1;
}

/* The job's peak over one rank's: each rank has the calibrated peak of its
 * threads (of the cores they ran on, where they outnumber the cores); on
 * rank 0's machine, ranks x threads beyond its cores add none (they take
 * turns on the same FMA units). */
static double job_peak_factor(const RunRecord *r, int *capped)
{
    int ranks = record_job_ranks(r), local = ranks, cores = r->machine.cores;
    double threads = r->threads_used;

    *capped = 0;
    if (ranks == 1)
        return 1.0;
    if (r->have_dist) {
        local = r->train.dist.local_ranks > 0 ? r->train.dist.local_ranks : ranks;
        cores = r->train.dist.node_cores;
    }
    if (threads < 1 || cores < 1 || local * threads <= cores)
        return (double)ranks;
    *capped = 1;
    return (double)(ranks - local) + (double)cores / fmin(threads, (double)cores);
}

double record_job_peak(const RunRecord *r, int *capped)
{
    int c;
    double peak = r->fma_peak_gflops * job_peak_factor(r, &c);

    if (capped)
        *capped = c;
    return peak;
}

double record_mfu(const RunRecord *r, double images_per_s)
{
    return figures_peak_share(images_per_s, r->flops_per_image, record_job_peak(r, NULL));
}

double record_executed_share(const RunRecord *r, double images_per_s)
{
    return figures_peak_share(images_per_s, r->flops_executed_per_image, record_job_peak(r, NULL));
}

const RecordCounter *record_counter_find(const RecordCounter *v, size_t n, int role,
                                         const char *name)
{
    for (size_t i = 0; i < n; i++)
        if ((int)v[i].role == role && !strcmp(v[i].name, name))
            return &v[i];
    return NULL;
}

/* The loader threads of cnntop's own run: its last segment's, else the
 * configuration's. */
static int train_workers(const RunRecord *r)
{
    return r->n_segments ? r->segments[r->n_segments - 1].workers : r->config.workers;
}

void record_verdict_input(const RunRecord *r, VerdictInput *in)
{
    if (r->have_exec) {
        *in = (VerdictInput){
            .data_wait_share = r->exec.data_wait_share,
            .workers = r->exec.worker_procs > 0 ? r->exec.worker_procs : 0,
            .threads = r->exec.busy_threads > 0 ? r->exec.busy_threads : 0,
            .cores = r->machine.cores,
            .run_queue_wait = r->run_queue_wait,
            .knobs = r->exec.torch[0] ? &verdict_knobs_pytorch : &verdict_knobs_none,
            .intra_op = r->threads_used > 0 ? r->threads_used
                        : r->n_exec_ranks ? r->exec_ranks[0].threads : -1,
            .ranks = (int)r->n_exec_ranks,
        };
        return;
    }
    double share[SPLIT_PARTS], other = NAN;

    figures_split_shares(&r->train.split, share);
    for (int k = 0; k < SPLIT_PARTS - 1; k++) /* all but comm, the last */
        other = isnan(other) || share[k] > other ? share[k] : other;
    /* A data-parallel run: its ranks on this machine, each with threads_used
     * compute threads and the loader workers, are what its cores hold. */
    int here = r->have_dist && r->train.dist.local_ranks > 1 ? r->train.dist.local_ranks : 1;
    *in = (VerdictInput){
        .data_wait_share = record_wait_share(r),
        .workers = here * train_workers(r),
        .threads = here * r->threads_used,
        .intra_op = here > 1 ? r->threads_used : 0,
        .cores = r->machine.cores,
        .run_queue_wait = r->run_queue_wait,
        .knobs = NULL,
        .ranks = r->have_dist ? r->train.dist.ranks : 0,
        .node_ranks = r->have_dist ? r->train.dist.local_ranks : 0,
        .batch = r->config.batch,
        .comm_share = share[SPLIT_PARTS - 1],
        .other_share = other,
    };
}

int record_sketch(const RunRecord *r, Sketch *out)
{
    if (!r->have_train || r->train.images <= 0)
        return -CN_EINVAL;
    int capped;
    /* the job computes on every rank at once: its rate is the job's */
    double gflops = r->sketch_gflops * job_peak_factor(r, &capped);
    int rc = calibrate_sketch_at(gflops, isfinite(r->fma_peak_gflops), r->triad_gbps,
                                 r->train.images, r->config.batch, out);
    const DistFigures *d = &r->train.dist;
    double busbw = record_dist_busbw(d);

    if (rc == 0 && r->have_dist && d->ranks > 1 && !isnan(busbw))
        calibrate_sketch_comm(out, d->ranks, r->train.steps, d->ar_bytes, busbw);
    return rc;
}

int figures_paper(double flops_executed, double bytes, double gflops, double gbps,
                  double *compute_s, double *memory_s)
{
    *compute_s = *memory_s = NAN;
    if (!(gflops > 0.0) || !(gbps > 0.0) || !(bytes > 0.0))
        return -CN_EINVAL;
    *compute_s = isfinite(flops_executed) && flops_executed > 0.0
                     ? flops_executed / (gflops * 1e9)
                     : 0.0;
    *memory_s = bytes / (gbps * 1e9);
    return 0;
}

int record_layer_paper(const RunRecord *r, const RecordLayer *l, double *compute_s,
                       double *memory_s)
{
    return figures_paper(l->flops_executed, l->bytes, r->sketch_gflops, r->triad_gbps, compute_s,
                         memory_s);
}

PaperPart *record_paper_parts(const RunRecord *r, size_t *n, PaperPart *total)
{
    PaperPart *out;

    *n = 0;
    memset(total, 0, sizeof *total);
    if (r->n_layers == 0)
        return NULL;
    if (!(out = malloc(r->n_layers * sizeof *out)))
        return NULL;
    for (size_t i = 0; i < r->n_layers; i++) {
        PaperPart *p = &out[*n];
        p->l = &r->layers[i];
        if (record_layer_paper(r, p->l, &p->compute_s, &p->memory_s) != 0)
            continue;
        p->seconds = p->l->seconds;
        p->bytes = p->l->bytes;
        total->seconds += p->seconds;
        total->bytes += p->bytes;
        total->compute_s += p->compute_s;
        total->memory_s += p->memory_s;
        (*n)++;
    }
    if (*n == 0) {
        free(out);
        return NULL;
    }
    return out;
}

void record_augment_text(unsigned aug, char *buf, size_t len)
{
    const FieldNames *names = &record_aug_names;
    size_t o = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < names->n; i++)
        if (aug & names->v[i].value)
            o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s", o ? "," : "",
                                  names->v[i].name);
    if (!o)
        snprintf(buf, len, "none");
}

/* The record's rank figure over its runs: images/s, or with by_time the
 * wall time; NAN mean when unknown. */
static void rank_figure(const RunRecord *r, int by_time, StatsSummary *s)
{
    double *tm = NULL;
    size_t nt;

    if (!by_time) {
        record_throughput_summary(r, s);
        return;
    }
    if (record_times_summary(r, &tm, &nt, s) != 0) {
        memset(s, 0, sizeof *s);
        s->mean = s->sd = NAN;
    }
    free(tm);
}

/* 1 when a is faster than b by the rank figure. */
static int rank_faster(const StatsSummary *a, const StatsSummary *b, int by_time)
{
    return by_time ? a->mean < b->mean : a->mean > b->mean;
}

void record_rank(const RunRecord *const *runs, size_t n, int by_time, RecordRank *out)
{
    memset(out, 0, sizeof *out);
    out->best = out->second = -1;
    for (size_t i = 0; i < n; i++) {
        StatsSummary s;
        rank_figure(runs[i], by_time, &s);
        if (runs[i]->interrupted || runs[i]->error || !isfinite(s.mean))
            continue;
        if (out->best < 0 || rank_faster(&s, &out->best_s, by_time)) {
            out->second = out->best;
            out->second_s = out->best_s;
            out->best = (int)i;
            out->best_s = s;
        } else if (out->second < 0 || rank_faster(&s, &out->second_s, by_time)) {
            out->second = (int)i;
            out->second_s = s;
        }
    }
    out->welch_ok = out->second >= 0 && out->best_s.n >= 2 && out->second_s.n >= 2 &&
                    stats_welch(&out->best_s, &out->second_s, &out->welch) == 0;
}

int record_rank_by_time(const RunRecord *const *runs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        StatsSummary s;
        record_throughput_summary(runs[i], &s);
        if (!isfinite(s.mean))
            return 1;
    }
    return 0;
}

void record_speedup(const RunRecord *r, const RunRecord *base, int by_time, double *x,
                    double *u)
{
    StatsSummary a, b;

    if (r == base) {
        *x = 1.0;
        *u = NAN;
        return;
    }
    rank_figure(by_time ? base : r, by_time, &a);
    rank_figure(by_time ? r : base, by_time, &b);
    stats_ratio(a.mean, isnan(a.sd) ? 0 : a.sd, b.mean, isnan(b.sd) ? 0 : b.sd, x, u);
    if (!(a.n > 1 && b.n > 1))
        *u = NAN;
}

double record_dist_algbw(const DistFigures *d)
{
    return d->ar_probe > 0 ? d->ar_bytes / d->ar_probe * 1e-9 : NAN;
}

double record_dist_busbw(const DistFigures *d)
{
    return d->ranks > 0 ? record_dist_algbw(d) * 2.0 * (d->ranks - 1) / d->ranks : NAN;
}

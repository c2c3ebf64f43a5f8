/*
 * summary.c: the end-of-run summary, from a RunRecord (see summary.h).
 *
 * The layout is that of `cnntop run`: a heading, then one figure per line
 * with its label in a 22-column field, the per-layer table sorted by time,
 * the test accuracy and the peak memory.  With --runs R the spread of the
 * repeats follows, as hyperfine shows it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/calibrate.h"
#include "cnntop/figures.h"
#include "cnntop/settings.h"
#include "cnntop/stats.h"
#include "cnntop/verdict.h"
#include "cmd/summary.h"
#include "common/counters_fmt.h"
#include "common/fmt.h"

void summary_print_header(FILE *f, const RunRecord *r, const char *what)
{
    const MachineInfo *m = &r->machine;

    fprintf(f, "\n Performance of cnntop %s (batch %d, %d thread%s, seed %llu):\n", what,
            r->config.batch, r->threads_used, fmt_plural(r->threads_used), (unsigned long long)r->config.seed);
    fprintf(f, "  Data:                 %s", r->data_dir ? r->data_dir : "unknown");
    if (r->train_images >= 0 && r->test_images >= 0)
        fprintf(f, " (%ld training, %ld test images)", r->train_images, r->test_images);
    else if (r->test_images >= 0)
        fprintf(f, " (%ld test image%s)", r->test_images, fmt_plural(r->test_images));
    fprintf(f, "\n  Machine:              %s, %d core%s, OpenBLAS %s", m->cpu_model, m->cores,
            fmt_plural(m->cores), m->blas_core);
    if (m->blas_isa[0])
        fprintf(f, " (%s kernels; the CPU has %s)", m->blas_isa, m->cpu_isa);
    fprintf(f, "\n");
    if (r->gemm_path[0]) {
        char asked[16];
        settings_format_field(settings_find(settings_run, "gemm"), &r->config.gemm, asked,
                              sizeof asked);
        fprintf(f, "  Winograd GEMMs:       %s (--gemm %s)\n", r->gemm_path, asked);
    }
    summary_print_blas(f, r);
    if (r->interrupted)
        fprintf(f, "  Interrupted:          by a signal; the figures cover the part that ran\n");
    if (r->error)
        fprintf(f, "  Failed:               %s\n", r->error);
}

void summary_print_blas(FILE *f, const RunRecord *r)
{
    const MachineInfo *m = &r->machine;
    char gap[320];

    if (m->blas_note[0])
        fprintf(f, "  Note:                 %s\n", m->blas_note);
    if (m->blas_warning[0])
        fprintf(f, "  Warning:              %s\n", m->blas_warning);
    if (calibrate_gap_text(r->peak_gflops, r->fma_peak_gflops, r->fma_peak_isa, r->threads_used,
                           m->blas_warning[0] != '\0', gap, sizeof gap))
        fprintf(f, "  %-22s%s\n", m->blas_warning[0] ? "" : "Warning:", gap);
}

void summary_peak_text(const RunRecord *r, char *buf, size_t len)
{
    int ranks = record_job_ranks(r), capped, t = r->threads_used;
    double job = record_job_peak(r, &capped);

    if (ranks == 1) {
        snprintf(buf, len, "the %.1f GFLOP/s FMA peak (%s) on %d thread%s", job, r->fma_peak_isa,
                 t, fmt_plural(t));
        return;
    }
    snprintf(buf, len, "the job's %.1f GFLOP/s FMA peak (%s): %d ranks x %.1f on %d thread%s "
             "each%s", job, r->fma_peak_isa, ranks, r->fma_peak_gflops, t, fmt_plural(t),
             capped ? ", less the threads beyond the cores of rank 0's machine" : "");
}

void summary_print_peak(FILE *f, const RunRecord *r, double images_per_s)
{
    double mfu = record_mfu(r, images_per_s), ex = record_executed_share(r, images_per_s);
    char of[192];

    if (isnan(mfu)) {
        fprintf(f, "  Against the peak:     unknown (no FMA peak measured: cnntop calibrate)\n");
        return;
    }
    summary_peak_text(r, of, sizeof of);
    fprintf(f, "  Against the peak:     MFU %.1f%% (%.1f MFLOP/image as PyTorch counts), "
            "executed %.1f%% (%.1f MFLOP/image with Winograd) of %s\n", 100 * mfu,
            r->flops_per_image * 1e-6, 100 * ex, r->flops_executed_per_image * 1e-6, of);
}

static void print_split(FILE *f, const StepSplit *s)
{
    double sh[SPLIT_PARTS];

    figures_split_shares(s, sh);
    if (isnan(sh[0]))
        return;
    fprintf(f, "  Step time split:      data %.1f%%  forward %.1f%%  backward %.1f%%  optimizer %.1f%%",
            100 * sh[0], 100 * sh[1], 100 * sh[2], 100 * sh[3]);
    if (s->comm > 0)
        fprintf(f, "  comm %.1f%%", 100 * sh[4]);
    fputc('\n', f);
}

static void print_train(FILE *f, const RunRecord *r)
{
    const TrainStats *st = &r->train;
    double gf = figures_gflops(st->images_per_s, r->flops_per_image);
    double busy = figures_cores_busy(st->cpu_user + st->cpu_sys, st->wall);
    char cores[32] = "n/a";

    if (!isnan(busy))
        snprintf(cores, sizeof cores, "%.2f", busy);
    fprintf(f, "  Training wall time:   %.2f s%s\n", st->wall, st->stopped ? "  (stopped early)" : "");
    fprintf(f, "  Steps, images:        %ld step%s, %ld image%s, %d epoch%s complete\n", st->steps,
            fmt_plural(st->steps), st->images, fmt_plural(st->images), st->epochs_done, fmt_plural(st->epochs_done));
    fprintf(f, "  Throughput:           %.1f images/s", st->images_per_s);
    if (!isnan(gf))
        fprintf(f, "  (%.1f GFLOP/s by the model's count)", gf);
    fprintf(f, "\n");
    summary_print_peak(f, r, st->images_per_s);
    fprintf(f, "  CPU:                  %.2f s user, %.2f s sys  (%s cores busy of %d thread%s)\n",
            st->cpu_user, st->cpu_sys, cores, r->threads_used, fmt_plural(r->threads_used));
    fprintf(f, "  Minor page faults:    %ld\n", st->minor_faults);
    fprintf(f, "  Final training loss:  %.4f  (mean over the last epoch's steps; last step %.4f)\n",
            st->final_loss, st->last_loss);
    print_split(f, &st->split);
    summary_print_dist(f, r);
}

/* The queue's capacity in batches: the last segment's, else the config's
 * (0 there means two per worker, as engine.h says). */
static int queue_cap(const RunRecord *r)
{
    if (r->n_segments)
        return r->segments[r->n_segments - 1].prefetch;
    return r->config.prefetch ? r->config.prefetch : 2 * r->config.workers;
}

static void print_augment(FILE *f, unsigned aug)
{
    char names[128];

    /* The names of the settings table's augment row, "none" for 0. */
    settings_format_field(settings_find(settings_run, "augment"), &aug, names, sizeof names);
    fprintf(f, ", augment %s\n", names);
}

/* The queue's mean fill in batches over time: each sample weighted by its
 * span (merged ones are longer; a record without spans, older, weights
 * them alike); NAN when no sample says. */
static double queue_fill(const RunRecord *r)
{
    double fill = 0, nfill = 0;

    for (size_t i = 0; i < r->n_samples; i++) {
        const Sample *s = &r->samples[i].s;
        double w = s->dt > 0 ? s->dt : 1.0;
        if (s->queue_fill >= 0) {
            fill += w * s->queue_fill;
            nfill += w;
        }
    }
    return nfill > 0 ? queue_cap(r) * fill / nfill : NAN;
}

static void print_loader(FILE *f, const RunRecord *r)
{
    const TrainStats *st = &r->train;
    VerdictInput vi;
    Verdict v;

    record_verdict_input(r, &vi);
    if (vi.workers)
        fprintf(f, "  Loader:               %d thread%s, prefetch %d", vi.workers,
                fmt_plural(vi.workers), queue_cap(r));
    else
        fprintf(f, "  Loader:               inline on the trainer (workers 0)");
    print_augment(f, r->config.augment);
    if (isnan(vi.data_wait_share))
        fprintf(f, "  Data wait:            n/a: no step time measured");
    else
        fprintf(f, "  Data wait:            %.1f%% of step time (%.3f ms/step)",
                100 * vi.data_wait_share, 1e3 * st->split.data / (double)st->steps);
    double fill = queue_fill(r);
    if (!isnan(fill))
        fprintf(f, ", queue %.1f of %d full on average", fill, queue_cap(r));
    fprintf(f, "\n");
    if (r->loader_samples_per_s > 0 && st->images_per_s > 0)
        fprintf(f, "  Loader alone:         %.0f samples/s (%.1fx the trainer's images/s)\n",
                r->loader_samples_per_s, r->loader_samples_per_s / st->images_per_s);
    verdict_judge(&vi, &v);
    fprintf(f, "  Verdict:              %s\n", v.bound);
    if (v.comm_bound)
        fprintf(f, "  %-22s%s\n", "", v.comm);
    if (v.oversubscribed || v.harmless)
        fprintf(f, "  %-22s%s\n", "", v.oversub);
}

/* IPC and the miss rate of the compute threads, or why not ("IPC n/a:
 * cycles not supported: ..."), as the dashboard says it. */
static void print_ratios(FILE *f, const RunRecord *r)
{
    if (!isnan(r->ipc))
        fprintf(f, "  IPC:                  %.2f instructions per cycle (compute threads)\n", r->ipc);
    else
        fprintf(f, "  IPC:                  n/a: %s\n", r->ipc_na[0] ? r->ipc_na : "not counted");
    if (!isnan(r->miss_rate))
        fprintf(f, "  Cache-miss rate:      %.2f%% of cache references (compute threads)\n",
                100 * r->miss_rate);
    else
        fprintf(f, "  Cache-miss rate:      n/a: %s\n",
                r->miss_rate_na[0] ? r->miss_rate_na : "not counted");
}

static int by_time(const void *a, const void *b)
{
    double x = ((const RecordLayer *)a)->seconds, y = ((const RecordLayer *)b)->seconds;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The layer table's columns: the name's width, and whether the kind and
 * the counters' columns are shown. */
typedef struct LayerCols {
    int name_w, kind, ctr;
} LayerCols;

/* One row of the layer table: l's ms per step over `steps`, its share of
 * `total` seconds, the model's and (where they differ) the executed
 * GFLOP/s, and with the counters its IPC and miss rate. */
static void print_layer(FILE *f, const RecordLayer *l, long steps, double total,
                        const LayerCols *c)
{
    char g[16] = "-", x[16] = "", ipc[16] = "n/a", miss[16] = "n/a";

    if (!isnan(l->gflops))
        snprintf(g, sizeof g, "%.1f", l->gflops);
    if (record_layer_executed_differs(l))
        snprintf(x, sizeof x, "%.1f", l->gflops_executed);
    if (!isnan(l->ipc))
        snprintf(ipc, sizeof ipc, "%.2f", l->ipc);
    if (!isnan(l->miss_rate))
        snprintf(miss, sizeof miss, "%.1f%%", 100 * l->miss_rate);
    fprintf(f, "  %-*s ", c->name_w, l->name);
    if (c->kind)
        fprintf(f, "%-18s ", l->kind);
    fprintf(f, "%10.3f %6.1f%% %13s", 1e3 * l->seconds / (double)steps,
            total > 0 ? 100 * l->seconds / total : 0.0, g);
    if (x[0] || c->ctr)
        fprintf(f, " %9s", x);
    if (c->ctr)
        fprintf(f, " %8s %6s", ipc, miss);
    fputc('\n', f);
}

int summary_print_layers(FILE *f, const RunRecord *r)
{
    RecordLayer *lt;
    double total = 0;
    long steps = record_layer_steps(r);
    LayerCols c = {22, 0, 0};

    if (steps <= 0 || r->n_layers == 0)
        return 0;
    lt = malloc(r->n_layers * sizeof *lt);
    if (!lt)
        return 0;
    memcpy(lt, r->layers, r->n_layers * sizeof *lt);
    qsort(lt, r->n_layers, sizeof *lt, by_time);
    for (size_t i = 0; i < r->n_layers; i++) {
        total += lt[i].seconds;
        c.ctr |= !isnan(lt[i].ipc) || !isnan(lt[i].miss_rate);
        c.kind |= lt[i].kind[0] != '\0';
        int w = (int)strlen(lt[i].name);
        c.name_w = w > c.name_w ? w : c.name_w;
    }
    fprintf(f, "\n  %-*s ", c.name_w, "Layer");
    if (c.kind)
        fprintf(f, "%-18s ", "Module");
    fprintf(f, "%10s %7s %13s %9s%s\n", "ms/step", "share", "model GFLOP/s", "executed",
            c.ctr ? "      IPC   miss" : "");
    total += r->have_dist ? r->train.dist.ar_wait : 0.0; /* the sums are in the BN rows */
    for (size_t i = 0; i < r->n_layers; i++)
        print_layer(f, &lt[i], steps, total, &c);
    summary_print_allreduce_row(f, r, total);
    free(lt);
    return 1;
}

static void print_profile(FILE *f, const RunRecord *r)
{
    if (!summary_print_layers(f, r))
        return;
    fprintf(f, "  (model GFLOP/s: the model's FLOPs, as the direct convolution and PyTorch count "
               "them, per second;\n   executed: the FLOPs the engine ran, where they differ: "
               "the Winograd convolutions, and block 1's forward,\n   whose convolution runs "
               "with its BN and pool)\n\n");
}

void summary_print_repeats(FILE *f, const RunRecord *r)
{
    size_t n;
    double *t = NULL;
    StatsSummary s;

    if (r->n_repeats < 2 || record_times_summary(r, &t, &n, &s) != 0) {
        free(t);
        return;
    }
    fprintf(f, "  Time (mean ± σ):      %.3f s ± %.3f s    [median %.3f s, range %.3f … %.3f s, %zu runs]\n",
            s.mean, s.sd, s.median, s.min, s.max, n);
    long out = stats_outliers(t, n, STATS_OUTLIER_Z, NULL);
    if (out > 0)
        fprintf(f, "  Warning:              %ld statistical outlier%s (modified Z-score above %.1f)\n",
                out, fmt_plural(out), STATS_OUTLIER_Z);
    if (stats_noisy(&s))
        fprintf(f, "  Warning:              noisy machine: runs vary by %.1f%% (more than %.0f%%); "
                   "close other programs or pin the CPU frequency\n",
                100 * s.sd / s.mean, 100 * STATS_NOISY_CV);
    free(t);
}

void summary_print_eval(FILE *f, const RunRecord *r)
{
    if (r->have_eval)
        fprintf(f, "  Test accuracy:        %.2f%%  (%ld of %ld image%s, loss %.4f, %.2f s)\n",
                100.0 * r->eval.accuracy, r->eval.correct, r->eval.images, fmt_plural(r->eval.images),
                r->eval.loss, r->eval.wall);
}

/* The time on paper next to the measured one, and the measured rate
 * against the FMA peak (record_sketch(): when the record has the rates). */
static void print_sketch(FILE *f, const RunRecord *r)
{
    Sketch sk;
    char msg[256];
    const TrainStats *st = &r->train;

    if (record_sketch(r, &sk) != 0)
        return;
    char rate[64] = "the SGEMM rate";
    if (sk.peak)
        snprintf(rate, sizeof rate, "the FMA peak (%s)", r->fma_peak_isa);
    fprintf(f, "  On paper:             %.2f s  (%.2f GFLOP executed at %.1f GFLOP/s, %s + %.2f GB "
            "at %.1f GB/s", sk.seconds, sk.flops * 1e-9, sk.gflops, rate, sk.bytes * 1e-9, sk.gbps);
    if (sk.comm_s > 0)
        fprintf(f, " + all-reduce %.2f s: %ld steps x 2(%d-1)/%d x %.2f MB at the measured %.2f "
                "GB/s", sk.comm_s, sk.steps, sk.ranks, sk.ranks, sk.ar_bytes * 1e-6, sk.busbw);
    fprintf(f, "); measured %.2f s", st->wall);
    if (sk.peak)
        fprintf(f, ": MFU %.1f%%, executed %.1f%% of the peak",
                100 * record_mfu(r, st->images_per_s), 100 * record_executed_share(r, st->images_per_s));
    fprintf(f, "\n");
    if (calibrate_check(&sk, st->wall, msg, sizeof msg))
        fprintf(f, "  Warning:              %s\n", msg);
}

/* A layer against its time on paper (record_layer_paper()). */
static double paper_excess(const PaperPart *p)
{
    return p->seconds - p->compute_s - p->memory_s;
}

static int by_excess(const void *a, const void *b)
{
    double x = paper_excess(a), y = paper_excess(b);
    return x < y ? 1 : x > y ? -1 : 0;
}

static void print_paper_row(FILE *f, const char *name, const PaperPart *p, long steps)
{
    const double c = p->compute_s, m = p->memory_s;
    char x[16] = "-";

    if (c + m > 0)
        snprintf(x, sizeof x, "%.1fx", p->seconds / (c + m));
    fprintf(f, "  %-22s %9.3f %9.3f %8s %10.3f %10.3f %9.2f  %s\n", name, 1e3 * p->seconds / steps,
            1e3 * (c + m) / steps, x, 1e3 * c / steps, 1e3 * m / steps, 1e-6 * p->bytes / steps,
            c > m ? "compute" : "memory");
}

/* The step's parts against their times on paper, most time beyond it
 * first: where the measured step leaves the sketch, and which half bounds
 * each part on paper.  Nothing when the record has no layer bytes or was
 * not calibrated. */
static void print_paper_parts(FILE *f, const RunRecord *r)
{
    long steps = record_layer_steps(r);
    PaperPart total;
    size_t n;
    PaperPart *p = steps > 0 ? record_paper_parts(r, &n, &total) : NULL;

    if (!p)
        return;
    qsort(p, n, sizeof *p, by_excess);
    fprintf(f, "\n  %-22s %9s %9s %8s %10s %10s %9s  %s\n", "On paper, per part", "ms/step",
            "paper ms", "x paper", "compute ms", "memory ms", "MB/step", "bound on paper");
    for (size_t i = 0; i < n; i++)
        print_paper_row(f, p[i].l->name, &p[i], steps);
    print_paper_row(f, "the parts together", &total, steps);
    fprintf(f, "  (paper: a part's executed FLOPs at %.1f GFLOP/s + the bytes of the tensors it "
               "reads or writes, once a step, at %.1f GB/s; most time beyond paper first)\n",
            r->sketch_gflops, r->triad_gbps);
    free(p);
}

int summary_readings(const RecordCounter *cs, size_t nc, int role, CounterReading *out, int max)
{
    int n = 0;

    for (size_t i = 0; i < nc && n < max; i++) {
        const RecordCounter *c = &cs[i];
        if ((int)c->role != role)
            continue;
        CounterReading *cr = &out[n++];
        memset(cr, 0, sizeof *cr);
        snprintf(cr->name, sizeof cr->name, "%s", c->name);
        cr->unit = c->unit;
        cr->kind = c->kind;
        /* A record without the set's own status (older) says it in three. */
        cr->status = c->status == RECORD_CTR_OK            ? CTR_OK
                     : c->ctr_status != CTR_OK             ? c->ctr_status
                     : c->status == RECORD_CTR_NOT_COUNTED ? CTR_NOT_COUNTED
                                                           : CTR_UNSUPPORTED;
        snprintf(cr->reason, sizeof cr->reason, "%s", c->reason);
        cr->value = c->status == RECORD_CTR_OK ? c->value : 0.0;
        cr->fraction = c->status == RECORD_CTR_OK ? c->scaled : 0.0;
    }
    return n;
}

/* The counters block (with -e): one block per thread role, as perf stat
 * shows them, from the record's counters and roles. */
static void print_counters(FILE *f, const RunRecord *r)
{
    CounterReading cr[CTR_MAX_EVENTS];

    if (r->n_roles == 0)
        return;
    fprintf(f, "\n Counters (the threads of every measured run, by role):\n");
    for (size_t i = 0; i < r->n_roles; i++) {
        const RecordRole *ro = &r->roles[i];
        if (ro->sched.threads == 0) {
            fprintf(f, " Counters, %s: none ran\n", counters_fmt_role_title(ro->role));
            continue;
        }
        int n = summary_readings(r->counters, r->n_counters, (int)ro->role, cr, CTR_MAX_EVENTS);
        counters_fmt_role(f, ro->role, cr, n, ro->wall * 1e9, &ro->sched);
    }
}

void summary_print(FILE *f, const RunRecord *r)
{
    summary_print_header(f, r, "run");
    print_train(f, r);
    summary_print_repeats(f, r);
    print_loader(f, r);
    print_ratios(f, r);
    print_profile(f, r);
    summary_print_eval(f, r);
    if (r->target_accuracy > 0) {
        char label[32];
        snprintf(label, sizeof label, "Time to %.2f%%:", 100 * r->target_accuracy);
        if (isnan(r->time_to_target))
            fprintf(f, "  %-22snot reached in %zu evaluation%s\n", label, r->n_evals,
                    fmt_plural(r->n_evals));
        else
            fprintf(f, "  %-22s%.2f s of training\n", label, r->time_to_target);
    }
    if (r->peak_rss_kib >= 0)
        fprintf(f, "  Peak memory (RSS):    %.1f MiB\n", r->peak_rss_kib / 1024.0);
    print_sketch(f, r);
    print_paper_parts(f, r);
    print_counters(f, r);
}

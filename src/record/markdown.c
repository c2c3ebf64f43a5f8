/*
 * markdown.c: a record as Markdown (record.h): hyperfine's results table
 * (one row per run, relative to the fastest), then for one run its
 * summary, configuration, layers, epochs, segments, counters and repeats.
 * Unknown figures are empty cells; '|' in a name is escaped so that it
 * cannot break a table.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/json.h"
#include "record/fields.h"
#include "cnntop/figures.h"
#include "record/formats.h"
#include "util/err.h"

/* The hyperfine-style table: one row per record, relative to the fastest. */
static int md_results_table(TextBuf *t, const RunRecord *const *runs, size_t n)
{
    StatsSummary *s = calloc(n ? n : 1, sizeof *s);
    char a[64], b[64], c[64], label[160];
    size_t best = 0;

    if (!s)
        return -CN_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        double *tm;
        size_t nt;
        if (record_times_summary(runs[i], &tm, &nt, &s[i]) != 0) {
            free(tm);
            free(s);
            return -CN_ENOMEM;
        }
        free(tm);
        if (s[i].mean < s[best].mean)
            best = i;
    }
    textbuf_printf(t, "| Command | Mean [s] | Min [s] | Max [s] | Images/s | Accuracy | Relative |\n");
    textbuf_printf(t, "|:---|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < n; i++) {
        StatsSummary ips;
        double rel, u, acc = record_mean_accuracy(runs[i]);
        record_throughput_summary(runs[i], &ips);
        stats_ratio(s[i].mean, s[i].sd, s[best].mean, s[best].sd, &rel, &u);
        textbuf_printf(t, "| `");
        record_md_cell(t, record_label(runs[i], label, sizeof label));
        textbuf_printf(t, "` | %s | %s | %s | ", record_md_pm(a, sizeof a, s[i].mean, s[i].sd, 3),
                record_md_fixed(b, sizeof b, s[i].min, 3), record_md_fixed(c, sizeof c, s[i].max, 3));
        textbuf_printf(t, "%s | ", record_md_pm(a, sizeof a, ips.mean, ips.sd, 1));
        if (isfinite(acc))
            textbuf_printf(t, "%.2f%% ", 100 * acc);
        textbuf_printf(t, "| %s |\n", i == best ? "1.00" : record_md_pm(b, sizeof b, rel, u, 2));
    }
    free(s);
    return 0;
}

static void md_summary(TextBuf *t, const RunRecord *r)
{
    const TrainStats *st = &r->train;
    char aug[64], a[64];

    record_augment_text(r->config.augment, aug, sizeof aug);
    textbuf_printf(t, "\n## Summary\n\n| Figure | Value |\n|:---|---:|\n");
    textbuf_printf(t, "| Training wall time | %.2f s%s |\n", st->wall, st->stopped ? " (stopped early)" : "");
    textbuf_printf(t, "| Steps, images | %ld step%s, %ld image%s, %d epoch%s complete |\n", st->steps,
            st->steps == 1 ? "" : "s", st->images, st->images == 1 ? "" : "s", st->epochs_done,
            st->epochs_done == 1 ? "" : "s");
    textbuf_printf(t, "| Throughput | %.1f images/s |\n", st->images_per_s);
    if (isfinite(r->flops_per_image))
        textbuf_printf(t, "| Compute rate | %.1f GFLOP/s (the model's count) |\n",
                       st->images_per_s * r->flops_per_image * 1e-9);
    if (isfinite(record_mfu(r, st->images_per_s)))
        textbuf_printf(t, "| MFU | %.1f%% of the %s%.1f GFLOP/s FMA peak (%s) |\n| Executed share | "
                "%.1f%% |\n", 100 * record_mfu(r, st->images_per_s),
                record_job_ranks(r) > 1 ? "job's " : "", record_job_peak(r, NULL),
                r->fma_peak_isa, 100 * record_executed_share(r, st->images_per_s));
    textbuf_printf(t, "| CPU | %.2f s user, %.2f s sys |\n", st->cpu_user, st->cpu_sys);
    textbuf_printf(t, "| Final training loss | %s |\n", record_md_fixed(a, sizeof a, st->final_loss, 4));
    if (r->have_eval)
        textbuf_printf(t, "| Test accuracy | %.2f%% (%ld of %ld image%s) |\n", 100 * r->eval.accuracy,
                r->eval.correct, r->eval.images, r->eval.images == 1 ? "" : "s");
    if (r->peak_rss_kib >= 0)
        textbuf_printf(t, "| Peak memory (RSS) | %.1f MiB |\n", r->peak_rss_kib / 1024.0);
    textbuf_printf(t, "\n## Configuration\n\n| Setting | Value |\n|:---|---:|\n");
    textbuf_printf(t, "| Batch | %d |\n| Loader workers | %d |\n| Prefetch | %d |\n", r->config.batch,
            r->config.workers, r->config.prefetch);
    textbuf_printf(t, "| Compute threads | %d |\n| Learning rate | %g |\n| Seed | %llu |\n",
            r->threads_used, r->config.lr, (unsigned long long)r->config.seed);
    textbuf_printf(t, "| Augmentation | %s |\n| Data | ", aug);
    record_md_cell(t, r->data_dir);
    textbuf_printf(t, " |\n| Machine | ");
    record_md_cell(t, r->machine.cpu_model);
    textbuf_printf(t, ", %d core%s, OpenBLAS ", r->machine.cores, r->machine.cores == 1 ? "" : "s");
    record_md_cell(t, r->machine.blas_core);
    if (r->machine.blas_isa[0])
        textbuf_printf(t, " (%s; the CPU has %s)", r->machine.blas_isa, r->machine.cpu_isa);
    textbuf_printf(t, " |\n");
    if (r->machine.blas_warning[0]) {
        textbuf_printf(t, "| Warning | ");
        record_md_cell(t, r->machine.blas_warning);
        textbuf_printf(t, " |\n");
    }
}

void record_md_layers(TextBuf *t, const RunRecord *r)
{
    double total = 0;
    char a[64];
    long steps = record_layer_steps(r);
    int kind = 0;

    if (r->n_layers == 0 || steps <= 0)
        return;
    for (size_t i = 0; i < r->n_layers; i++) {
        total += r->layers[i].seconds;
        kind |= r->layers[i].kind[0] != '\0';
    }
    textbuf_printf(t, "\n## Layers\n\n| Layer |%s ms/step | Share | Model GFLOP/s | Executed "
                      "GFLOP/s |\n|:---|%s---:|---:|---:|---:|\n", kind ? " Module |" : "",
                   kind ? ":---|" : "");
    for (size_t i = 0; i < r->n_layers; i++) {
        const RecordLayer *l = &r->layers[i];
        textbuf_printf(t, "| ");
        record_md_cell(t, l->name);
        if (kind) {
            textbuf_printf(t, " | ");
            record_md_cell(t, l->kind);
        }
        textbuf_printf(t, " | %.3f | %.1f%% | %s | ", 1e3 * l->seconds / (double)steps,
                total > 0 ? 100 * l->seconds / total : 0.0, record_md_fixed(a, sizeof a, l->gflops, 1));
        textbuf_printf(t, "%s |\n", record_layer_executed_differs(l)
                                        ? record_md_fixed(a, sizeof a, l->gflops_executed, 1) : "");
    }
    textbuf_printf(t, "\nModel GFLOP/s: the model's FLOPs (as the direct convolution and PyTorch "
                      "count them) per second; executed: the FLOPs the engine ran, where they "
                      "differ (the Winograd convolutions; block 1's forward, whose convolution "
                      "runs with its BN and pool).\n");
}

/* The step's parts against their times on paper (record_layer_paper()),
 * in step order, and the parts together; nothing when not calibrated. */
static void md_paper_row(TextBuf *t, const char *name, const PaperPart *p, long steps)
{
    const double c = p->compute_s, m = p->memory_s;

    textbuf_printf(t, "| ");
    record_md_cell(t, name);
    textbuf_printf(t, " | %.3f | %.3f | ", 1e3 * p->seconds / steps, 1e3 * (c + m) / steps);
    if (c + m > 0)
        textbuf_printf(t, "%.1fx", p->seconds / (c + m));
    textbuf_printf(t, " | %.3f | %.3f | %.2f | %s |\n", 1e3 * c / steps, 1e3 * m / steps,
                   1e-6 * p->bytes / steps, c > m ? "compute" : "memory");
}

static void md_paper_parts(TextBuf *t, const RunRecord *r)
{
    long steps = record_layer_steps(r);
    PaperPart total;
    size_t n;
    PaperPart *p = steps > 0 ? record_paper_parts(r, &n, &total) : NULL;

    if (!p)
        return;
    textbuf_printf(t, "\n## On paper, per part\n\n| Part | ms/step | Paper ms | x paper | "
                      "Compute ms | Memory ms | MB/step | Bound on paper |\n"
                      "|:---|---:|---:|---:|---:|---:|---:|:---|\n");
    for (size_t i = 0; i < n; i++)
        md_paper_row(t, p[i].l->name, &p[i], steps);
    md_paper_row(t, "the parts together", &total, steps);
    textbuf_printf(t, "\nPaper: a part's executed FLOPs at %.1f GFLOP/s (the FMA peak, or the "
                      "SGEMM rate where none was measured) + the bytes of the tensors it reads "
                      "or writes, once a step, at %.1f GB/s (the triad).\n",
                   r->sketch_gflops, r->triad_gbps);
    free(p);
}

static void md_series(TextBuf *t, const RunRecord *r)
{
    char a[64], b[64];

    if (r->n_epochs) {
        textbuf_printf(t, "\n## Epochs\n\n| Epoch | Loss | Test accuracy | Wall [s] |\n|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < r->n_epochs; i++) {
            const RecordEpoch *e = &r->epochs[i];
            textbuf_printf(t, "| %d | %s | %s | %.2f |\n", e->epoch + 1, record_md_fixed(a, sizeof a, e->loss, 4),
                    isfinite(e->accuracy) ? record_md_fixed(b, sizeof b, 100 * e->accuracy, 2) : "",
                    e->wall);
        }
    }
    if (r->n_segments) {
        textbuf_printf(t, "\n## Segments\n\n| Segment | Steps | Batch | Workers | Prefetch | Images/s |\n"
                   "|---:|---:|---:|---:|---:|---:|\n");
        for (size_t i = 0; i < r->n_segments; i++) {
            const Segment *s = &r->segments[i];
            textbuf_printf(t, "| %zu | %ld | %d | %d | %d | %s |\n", i, s->steps, s->batch, s->workers,
                    s->prefetch, record_md_pm(a, sizeof a, s->images_per_s,
                                        s->images_per_s_sd > 0 ? s->images_per_s_sd : NAN, 1));
        }
    }
}

int record_md_run(const RunRecord *r, char **out, size_t *len)
{
    TextBuf text = {0}, *t = &text;
    char label[160];
    int rc;

    textbuf_printf(t, "# cnntop run: ");
    record_md_cell(t, record_label(r, label, sizeof label));
    textbuf_printf(t, "\n\n");
    if (r->command) {
        textbuf_printf(t, "Command: `");
        record_md_cell(t, r->command);
        textbuf_printf(t, "`  \n");
    }
    textbuf_printf(t, "Date: %s, cnntop %s\n", r->date, r->version);
    if (r->interrupted)
        textbuf_printf(t, "\n**Interrupted by a signal: the figures cover the part that ran.**\n");
    if (r->error) {
        textbuf_printf(t, "\n**Failed: ");
        record_md_cell(t, r->error);
        textbuf_printf(t, "**\n");
    }
    textbuf_printf(t, "\n");
    rc = md_results_table(t, &r, 1);
    md_summary(t, r);
    record_md_layers(t, r);
    md_paper_parts(t, r);
    md_series(t, r);
    record_md_counters(t, r->counters, r->n_counters, &record_role_names);
    record_md_repeats(t, r);
    return record_text_finish(t, rc, out, len);
}

int record_md_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len)
{
    TextBuf text = {0}, *t = &text;
    int rc;

    textbuf_printf(t, "# cnntop sweep\n\n");
    if (n && runs[0]->command) {
        textbuf_printf(t, "Command: `");
        record_md_cell(t, runs[0]->command);
        textbuf_printf(t, "`  \n");
    }
    if (n)
        textbuf_printf(t, "Date: %s, cnntop %s\n\n", runs[0]->date, runs[0]->version);
    rc = md_results_table(t, runs, n);
    return record_text_finish(t, rc, out, len);
}

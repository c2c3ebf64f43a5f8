/*
 * sweep_grid.c: what the two sweeps share (sweep.h): the budget, the
 * ranking and recommendation under the table, the rows' figures and
 * speedups (from cnntop/figures.h), and the export.  sweep.c
 * (cnntop's own grid) and sweep_cmd.c (a command's) build on it and never
 * on each other's internals.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cnntop/figures.h"
#include "cnntop/stats.h"
#include "cmd/sweep.h"
#include "common/exit.h"
#include "common/fmt.h"

double sweep_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int sweep_may_start(const Options *o, double elapsed, int ran)
{
    return o->budget <= 0 || ran == 0 || elapsed * (ran + 1) / ran <= o->budget;
}

void sweep_print_skipped(const Options *o, int skipped)
{
    if (skipped)
        printf("\n Budget of %.0f s spent: %d configuration%s not run.\n", o->budget, skipped,
               fmt_plural(skipped));
}

static int rankable(const SweepRow *w, int by_time)
{
    const StatsSummary *s = by_time ? &w->wall : &w->ips;
    return w->done && !w->rec.interrupted && !w->rec.error && !isnan(s->mean);
}

/* "1234 images/s" or "1.23 s": a rank figure. */
static const char *rank_text(const StatsSummary *s, int by_time, char *buf, size_t len)
{
    if (by_time)
        snprintf(buf, len, "%.3f s", s->mean);
    else
        snprintf(buf, len, "%.0f images/s", s->mean);
    return buf;
}

/* Whether the fastest can be told from the runner-up. */
static void print_runner_up(const SweepRow *rows, const RecordRank *rk, const int *at, int by_time)
{
    char b[96], v[48];

    record_label(&rows[at[rk->second]].rec, b, sizeof b);
    rank_text(&rk->second_s, by_time, v, sizeof v);
    if (rk->welch_ok)
        printf(" Against the runner-up (%s, %s): %s (Welch's t-test, p = %.3f).\n", b, v,
               rk->welch.distinguishable ? "a significant difference"
                                         : "no significant difference",
               rk->welch.p);
    else
        printf(" Against the runner-up (%s, %s): cannot tell with one run each; "
               "use --runs 3 or more.\n", b, v);
}

/* The rows that ran, ranked (record_rank()); at[k] is the row of the k-th
 * record.  Returns the fastest row, or -1. */
static int rank_rows(const SweepRow *rows, int n, int by_time, RecordRank *rk, int *at)
{
    const RunRecord **recs = malloc((size_t)(n > 0 ? n : 1) * sizeof(const RunRecord *));
    int k = 0;

    rk->best = rk->second = -1;
    if (!recs)
        return -1;
    for (int i = 0; i < n; i++)
        if (rows[i].done) {
            at[k] = i;
            recs[k++] = &rows[i].rec;
        }
    record_rank(recs, (size_t)k, by_time, rk);
    free(recs);
    return rk->best >= 0 ? at[rk->best] : -1;
}

int sweep_recommend(SweepRow *rows, int n, int by_time)
{
    int acc_best = -1, *at = malloc((size_t)(n > 0 ? n : 1) * sizeof *at);
    char a[96], b[96], v[48];
    RecordRank rk;

    for (int i = 0; i < n; i++) {
        if (!rankable(&rows[i], by_time))
            continue;
        if (acc_best < 0 || rows[i].accuracy > rows[acc_best].accuracy)
            acc_best = i;
    }
    int best = at ? rank_rows(rows, n, by_time, &rk, at) : -1;
    if (best < 0) {
        printf("\n No configuration finished: no recommendation.\n");
        free(at);
        return -1;
    }
    record_label(&rows[best].rec, a, sizeof a);
    printf("\n Fastest: %s, %s.\n", a, rank_text(&rk.best_s, by_time, v, sizeof v));
    if (rk.second >= 0)
        print_runner_up(rows, &rk, at, by_time);
    free(at);
    if (acc_best >= 0 && !isnan(rows[best].accuracy) && !isnan(rows[acc_best].accuracy) &&
        100 * (rows[acc_best].accuracy - rows[best].accuracy) > SWEEP_ACCURACY_SLACK) {
        record_label(&rows[acc_best].rec, b, sizeof b);
        printf(" But it learns clearly less: %.2f%% test accuracy against %.2f%% for %s in the "
               "same training length%s.\n",
               100 * rows[best].accuracy, 100 * rows[acc_best].accuracy, b,
               rows[best].rec.config.batch > rows[acc_best].rec.config.batch
                   ? " (larger batches at the same learning rate take fewer steps per epoch)"
                   : "");
        int alt = -1;
        for (int i = 0; i < n; i++)
            if (rankable(&rows[i], by_time) && !isnan(rows[i].accuracy) &&
                100 * (rows[acc_best].accuracy - rows[i].accuracy) <= SWEEP_ACCURACY_SLACK &&
                (alt < 0 || rows[i].ips.mean > rows[alt].ips.mean))
                alt = i;
        if (alt >= 0) {
            record_label(&rows[alt].rec, b, sizeof b);
            printf(" Recommended: %s, the fastest within %.0f point of the best accuracy.\n", b,
                   SWEEP_ACCURACY_SLACK);
            return alt;
        }
        return best;
    }
    printf(" Recommended: %s.\n", a);
    return best;
}

void sweep_row_figures(SweepRow *w)
{
    RecordFigures f;

    record_figures(&w->rec, &f);
    w->wall = f.time;
    w->ips = f.ips;
    w->accuracy = f.accuracy;
    w->wait_share = f.wait_share;
    w->tta = w->rec.time_to_target;
}

void sweep_speedup_text(const SweepRow *w, const SweepRow *base, int by_time, char *buf,
                        size_t len)
{
    double x, u;

    if (w == base) {
        snprintf(buf, len, "1 (baseline)");
        return;
    }
    record_speedup(&w->rec, &base->rec, by_time, &x, &u);
    fmt_pm(buf, len, x, u, 2);
}

int sweep_export(const Options *o, const SweepRow *rows, int n, int partial)
{
    const RunRecord **recs = malloc((size_t)n * sizeof(const RunRecord *));
    char err[512];
    int k = 0, rc = 0;

    for (int i = 0; recs && i < n; i++)
        if (rows[i].done)
            recs[k++] = &rows[i].rec;
    if (!recs || record_export_sweep(recs, (size_t)k, o->export_path, o->force, err,
                                     sizeof err) != 0) {
        fprintf(stderr, "cnntop: --export: %s\n", recs ? err : "out of memory");
        rc = -1;
    } else
        fprintf(stderr, "cnntop: the sweep%s written to %s\n",
                partial ? " (interrupted, partial)" : "", o->export_path);
    free(recs);
    return rc;
}

double sweep_scaling(const SweepRow *rows, int n, int i)
{
    if (!rows[i].ranks || !rows[i].done || isnan(rows[i].ips.mean))
        return NAN;
    for (int j = 0; j < n; j++)
        if (rows[j].ranks == 1 && rows[j].done && rows[j].ips.mean > 0 &&
            rows[j].group == rows[i].group)
            return rows[i].ips.mean / (rows[i].ranks * rows[j].ips.mean);
    return NAN;
}

void sweep_ranks_cells(const SweepRow *rows, int n, int i, char *rk, char *eff, size_t len)
{
    double e = sweep_scaling(rows, n, i);

    snprintf(rk, len, " %5d", rows[i].ranks);
    if (isnan(e))
        snprintf(eff, len, " %7s", "n/m");
    else
        snprintf(eff, len, " %6.0f%%", 100 * e);
}

void sweep_print_scaling_note(const Options *o, const SweepRow *rows, int n)
{
    int one = 0;

    for (int i = 0; i < n; i++) {
        if (rows[i].done && !isnan(sweep_scaling(rows, n, i)))
            return;
        one |= rows[i].done && rows[i].ranks == 1;
    }
    if (o->n_ranks)
        printf("\n Scaling efficiency (job images/s at N / (N x images/s at 1 rank)): not "
               "measured; %s.\n", one ? "no images/s to compare" : "add 1 to --ranks");
}

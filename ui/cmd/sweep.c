/*
 * sweep.c: `cnntop sweep`, the grid of cnntop's own training (sweep.h);
 * with --cmd it hands over to sweep_cmd.c.  What the two share (the
 * budget, the ranking and recommendation, the export) is sweep_grid.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cnntop/record_train.h"
#include "cnntop/stats.h"
#include "cmd/runner.h"
#include "cmd/sweep.h"
#include "common/exit.h"
#include "common/fmt.h"

/* The FMA peak of each configuration's thread count, for MFU: after every
 * run (a calibration, measured on first use, would disturb the timing). */
static void set_peaks(SweepRow *rows, int n)
{
    Calibration c;
    int have = -1;

    for (int i = 0; i < n && !runner_signal(); i++) {
        if (!rows[i].done || rows[i].ranks) /* a job's: its run's own */
            continue;
        int T = rows[i].rec.threads_used;
        if (T != have && !runner_calibration(T, 0, &c))
            return;
        have = T;
        record_set_calibration(&rows[i].rec, &c);
    }
}

static void print_table(SweepRow *rows, int n, const Options *o)
{
    const SweepRow *base = NULL;
    char label[96], t[48], ips[48], sp[48], acc[16], ipc_s[16], miss_s[16], wait[16], tta[16],
        mfu[16], ex[16], rk[16] = "", eff[16] = "";
    int dist = o->n_ranks > 0, lw = dist ? 40 : 34; /* the label's ", 2 ranks" */

    for (int i = 0; i < n && !base; i++)
        if (rows[i].done)
            base = &rows[i];
    printf("\n %-*s%s %-20s %-18s %6s %6s %6s %6s %6s %8s %-14s%s%s\n", lw, "Configuration",
           dist ? " Ranks" : "", "Time [s]", "Images/s", "MFU", "Exec", "IPC", "Miss", "Wait",
           "Acc", "Speedup", dist ? " Scaling" : "",
           o->target_accuracy > 0 ? "  Time to target" : "");
    for (int i = 0; i < n; i++) {
        SweepRow *w = &rows[i];
        if (!w->done)
            continue;
        double ipc = w->rec.ipc, miss = w->rec.miss_rate;
        record_label(&w->rec, label, sizeof label);
        fmt_pm(t, sizeof t, w->wall.mean, w->wall.sd, 2);
        fmt_pm(ips, sizeof ips, w->ips.mean, w->ips.sd, 0);
        snprintf(ipc_s, sizeof ipc_s, isnan(ipc) ? "n/a" : "%.2f", ipc);
        snprintf(miss_s, sizeof miss_s, isnan(miss) ? "n/a" : "%.1f%%", 100 * miss);
        snprintf(wait, sizeof wait, isnan(w->wait_share) ? "n/a" : "%.1f%%", 100 * w->wait_share);
        snprintf(acc, sizeof acc, isnan(w->accuracy) ? "n/a" : "%.2f%%", 100 * w->accuracy);
        double m = record_mfu(&w->rec, w->ips.mean), x = record_executed_share(&w->rec, w->ips.mean);
        snprintf(mfu, sizeof mfu, isnan(m) ? "n/a" : "%.1f%%", 100 * m);
        snprintf(ex, sizeof ex, isnan(x) ? "n/a" : "%.1f%%", 100 * x);
        sweep_speedup_text(w, base, 0, sp, sizeof sp);
        snprintf(tta, sizeof tta, isnan(w->tta) ? "not reached" : "%.1f s", w->tta);
        if (dist)
            sweep_ranks_cells(rows, n, i, rk, eff, sizeof rk);
        printf(" %-*s%s %-20s %-18s %6s %6s %6s %6s %6s %8s %-14s%s%s%s%s\n", lw, label, rk, t, ips,
               mfu, ex, ipc_s, miss_s, wait, acc, sp, eff, o->target_accuracy > 0 ? "  " : "",
               o->target_accuracy > 0 ? tta : "", w->rec.interrupted ? "  (interrupted)" : "");
    }
}

/* A configuration that can be recommended (record_rank()'s rule). */
static int ran_any(const SweepRow *rows, int n)
{
    for (int i = 0; i < n; i++)
        if (rows[i].done)
            return 1;
    return 0;
}

/* One row: in this process, or with ranks as `run --ranks` (sweep_ranks.c). */
static int run_row(const Options *o, const RunnerOpts *ro, SweepRow *w, int argc, char **argv)
{
    if (w->ranks)
        return sweep_ranks_run(o, &ro->cfg, w->ranks, ro->prefix, argc, argv, &w->rec);
    record_set_command(&w->rec, argc, argv);
    return runner_run(ro, &w->rec, NULL, NULL);
}

int sweep_main(const Options *o, int argc, char **argv)
{
    if (o->sweep_cmd && o->mpirun_args) {
        fprintf(stderr, "cnntop: --mpirun-args: for cnntop's own training, not --cmd (the "
                "command starts its own processes)\n");
        return EXIT_USAGE;
    }
    if (o->mpirun_args && !o->n_ranks) {
        fprintf(stderr, "cnntop: --mpirun-args: only with --ranks (cnntop starts mpirun)\n");
        return EXIT_USAGE;
    }
    if (o->sweep_cmd)
        return sweep_cmd_main(o, argc, argv);
    int nb = o->n_batch ? o->n_batch : 1, nw = o->n_workers ? o->n_workers : 1;
    int nt = o->n_threads ? o->n_threads : 1, nr = o->n_ranks ? o->n_ranks : 1;
    int n = nb * nw * nt * nr, rc = o->n_ranks ? sweep_ranks_check(o) : 0, ran = 0, skipped = 0;
    if (rc)
        return rc;
    SweepRow *rows = calloc((size_t)n, sizeof *rows);
    double t0 = sweep_clock();

    if (!rows) {
        fprintf(stderr, "cnntop: out of memory\n");
        return EXIT_FAIL;
    }
    runner_signals();
    for (int i = 0; i < n; i++)
        record_init(&rows[i].rec);
    for (int i = 0; i < n && !runner_signal(); i++) {
        SweepRow *w = &rows[i];
        RunnerOpts ro = {.cfg = o->cfg, .runs = o->runs, .warmup = o->warmup,
                         .vary_seed = o->vary_seed, .events = o->events,
                         .target = o->target_accuracy};
        char prefix[48];
        ro.cfg.batch = o->n_batch ? o->batch_list[i / (nw * nt * nr)] : o->cfg.batch;
        ro.cfg.workers = o->n_workers ? o->workers_list[i / (nt * nr) % nw] : o->cfg.workers;
        ro.cfg.threads = o->n_threads ? o->threads_list[i / nr % nt] : o->cfg.threads;
        w->ranks = o->n_ranks ? o->ranks_list[i % nr] : 0;
        w->group = i / nr;
        double elapsed = sweep_clock() - t0;
        if (!sweep_may_start(o, elapsed, ran)) {
            skipped = n - i;
            break;
        }
        if (ran > 0)
            snprintf(prefix, sizeof prefix, "[%d/%d, sweep ETA %.0f s] ", i + 1, n,
                     elapsed / ran * (n - i));
        else
            snprintf(prefix, sizeof prefix, "[%d/%d] ", i + 1, n);
        ro.prefix = prefix;
        int r = run_row(o, &ro, w, argc, argv);
        if (r == EXIT_FAIL || r == EXIT_USAGE || (w->ranks && r > 128)) {
            rc = r;
            break;
        }
        w->done = w->rec.train.steps > 0;
        if (r == EXIT_DIVERGED)
            rc = EXIT_DIVERGED; /* shown in the table, never recommended */
        sweep_row_figures(w);
        ran++;
    }
    set_peaks(rows, n);
    print_table(rows, n, o);
    sweep_print_scaling_note(o, rows, n);
    sweep_print_skipped(o, skipped);
    if (runner_signal())
        printf("\n Interrupted: the table holds the configurations that ran.\n");
    sweep_recommend(rows, n, 0);
    fflush(stdout);
    if (o->export_path && ran_any(rows, n) && /* none trained: nothing to record */
        sweep_export(o, rows, n, runner_signal()) != 0)
        rc = rc ? rc : EXIT_FAIL;
    for (int i = 0; i < n; i++)
        record_done(&rows[i].rec);
    free(rows);
    if (runner_signal())
        return 128 + runner_signal();
    return rc;
}

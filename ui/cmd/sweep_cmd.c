/*
 * sweep_cmd.c: `cnntop sweep --cmd TEMPLATE`: the grid of any command.
 *
 * The template's placeholders {batch}, {workers}, {threads} and {ranks}
 * take each value of --batch, --workers, --threads and --ranks in turn
 * ({ranks}: the number of processes of a data-parallel job, compared by
 * the job's images/s, the sum over its ranks that the exec record holds,
 * with the scaling efficiency of cnntop's own sweep --ranks).  Everything that can
 * be known before a run is checked for every configuration before the
 * first one starts: each placeholder has its list and each list its
 * placeholder, no brace pair is a misspelt placeholder, every
 * configuration's command line fits, the export can be written.  Each
 * configuration's command line is run by /bin/sh -c as `cnntop exec` runs
 * a command (exec_run(), its standard output to /dev/null), --warmup K
 * times discarded, then --runs R times measured; with --budget, a
 * configuration starts only when the time left covers the mean of those
 * done (sweep_may_start(), as the engine's sweep).  A stop signal
 * (SIGINT, SIGTERM, SIGHUP) at any time, during a run or between two,
 * ends the sweep once the run in progress has ended: the table holds what
 * was measured, the configuration cut short is marked interrupted, and the
 * exit status is 128 plus the signal.  The table and the
 * recommendation are sweep.c's: mean ± σ of the wall time and, when the
 * Python hook reported, of images/s; speedups ± σ against the first
 * configuration (by images/s, else by wall time); Welch's test.  --export
 * writes every configuration as an exec record with its repeats, in the
 * sweep schema `cnntop report` reads.
 */
#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/figures.h"
#include "cmd/exec.h"
#include "cmd/sweep.h"
#include "cmd/sweep_template.h"
#include "common/exit.h"
#include "common/fmt.h"
#include "common/signals.h"

#define RUNS_MAX 1024  /* measured runs a configuration's figures take in (as sweep.c) */

/* Keeps rec, the record of a measured run, in w's: the first becomes w's
 * record, the later ones are summed into it (exec_record_merge()); each
 * adds its repeat, and an error when the command failed. */
static void keep_run(SweepRow *w, RunRecord *rec, const char *label, int rc)
{
    RecordRepeat rep = {.wall = rec->exec.wall, .images_per_s = rec->exec.images_per_s,
                        .user = NAN, .system = NAN, .accuracy = NAN, .exit_code = rec->exit_code};

    if (!w->done) {
        w->rec = *rec;
        w->done = 1;
        record_set_label(&w->rec, label);
    } else {
        if (exec_record_merge(&w->rec, rec) != 0)
            fprintf(stderr, "cnntop: sweep: out of memory: %s: a run's counters left out\n",
                    label);
        record_done(rec);
    }
    record_add_repeat(&w->rec, &rep);
    if (rc != 0 && !w->rec.error) {
        char why[64];
        snprintf(why, sizeof why, "the command exited with %d", rc);
        record_set_error(&w->rec, why);
    }
}

/* A run's exit code that ends the sweep: the command could not be run,
 * or Ctrl-C, SIGTERM or SIGHUP ended it. */
static int stops_sweep(int ran, int rc)
{
    return !ran || rc == 128 + SIGINT || rc == 128 + SIGTERM || rc == 128 + SIGHUP;
}

/* The stop signals' handler while no command runs: signals.c notes the
 * signal (signals_stop_caught()), and the sweep ends at its next check. */
static void note_stop(int sig)
{
    (void)sig;
}

/* One configuration: --warmup runs, then --runs measured into w->rec.
 * Returns the last exit code; *stop 1 when the sweep must end: a run's
 * exit code, or a stop signal cnntop caught at any time up to the end of
 * a run (sweep_cmd_main() checks before each configuration).  A
 * configuration cut short by it is marked interrupted. */
static int run_config(const Options *o, SweepRow *w, char *cmd, const char *label, int argc,
                      char **argv, int *stop)
{
    char *cargv[] = {"/bin/sh", "-c", cmd, NULL};
    ExecRun x = {.argv = cargv, .events = o->events, .hook = !o->no_hook, .quiet = 1};
    int rc = 0, runs = o->runs > 0 ? o->runs : 1, kept = 0, cut = 0;

    for (int r = 0; r < o->warmup + runs && !*stop; r++) {
        int measured = r >= o->warmup;
        fprintf(stderr, "cnntop: sweep: %s, %s %d/%d: %s\n", label,
                measured ? "run" : "warm-up", measured ? r - o->warmup + 1 : r + 1,
                measured ? runs : o->warmup, cmd);
        RunRecord rec;
        record_init(&rec);
        rc = exec_run(&x, &rec, argc, argv, NULL);
        cut = stops_sweep(rec.have_exec, rc);
        *stop = cut || signals_stop_caught();
        if (measured && rec.have_exec) {
            keep_run(w, &rec, label, rc);
            kept++;
        } else
            record_done(&rec);
    }
    if (*stop && w->done && (cut || kept < runs))
        w->rec.interrupted = 1;
    return rc;
}

/* CPU seconds a run: task-clock over every role, summed over the
 * measured runs (exec_record_merge()) and divided by them; NAN: not
 * counted. */
static double cpu_seconds(const RunRecord *r)
{
    double s = NAN;

    for (int role = 0; role < PROC_ROLES; role++) {
        const RecordCounter *c =
            record_counter_find(r->exec_counters, r->n_exec_counters, role, "task-clock");
        if (c && c->status == RECORD_CTR_OK)
            s = (isnan(s) ? 0 : s) + c->value * 1e-9;
    }
    return s / (r->exec.runs > 0 ? r->exec.runs : 1);
}

/* The table; with {ranks}, the Ranks and Scaling columns of cnntop's own
 * sweep --ranks, a job's images/s being its ranks' sum (the record's). */
static void print_table(const Options *o, const SweepRow *rows, int n, int by_time)
{
    const SweepRow *base = NULL;
    char label[96], t[48], ips[48], sp[48], wait[16], cpu[16], ex[24], rk[16] = "", eff[16] = "";
    int dist = o->n_ranks > 0;

    for (int i = 0; i < n && !base; i++)
        if (rows[i].done)
            base = &rows[i];
    printf("\n %-34s%s %-20s %-18s %6s %8s %-8s %-14s%s\n", "Configuration", dist ? " Ranks" : "",
           "Time [s]", "Images/s", "Wait", "CPU [s]", "Exit",
           by_time ? "Speedup (time)" : "Speedup", dist ? " Scaling" : "");
    for (int i = 0; i < n; i++) {
        const SweepRow *w = &rows[i];
        if (!w->done)
            continue;
        double c = cpu_seconds(&w->rec);
        record_label(&w->rec, label, sizeof label);
        fmt_pm(t, sizeof t, w->wall.mean, w->wall.sd, 2);
        fmt_pm(ips, sizeof ips, w->ips.mean, w->ips.sd, 0);
        snprintf(wait, sizeof wait, isnan(w->wait_share) ? "n/a" : "%.1f%%", 100 * w->wait_share);
        snprintf(cpu, sizeof cpu, isnan(c) ? "n/a" : "%.2f", c);
        if (w->rec.exec.signal)
            snprintf(ex, sizeof ex, "signal %d", w->rec.exec.signal);
        else
            snprintf(ex, sizeof ex, "%d", w->rec.exec.status);
        sweep_speedup_text(w, base, by_time, sp, sizeof sp);
        if (dist)
            sweep_ranks_cells(rows, n, i, rk, eff, sizeof rk);
        printf(" %-34s%s %-20s %-18s %6s %8s %-8s %-14s%s%s\n", label, rk, t, ips, wait, cpu, ex,
               sp, eff, w->rec.interrupted ? "  (interrupted)" : "");
    }
    printf("\n Mean ± σ over the measured runs; Wait, CPU (task-clock) and the exported "
           "counters cover every measured run (CPU: per run).\n");
    if (by_time)
        printf(" No images/s from the Python hook: speedups are by wall time "
               "(the baseline's over each one's).\n");
}

/* The rows run; by_time 1 when some row has no images/s. */
static int by_time_of(const SweepRow *rows, int n)
{
    for (int i = 0; i < n; i++)
        if (rows[i].done && isnan(rows[i].ips.mean))
            return 1;
    return 0;
}

/* The verdict of the recommended configuration w when it was
 * oversubscribed, its advice naming the template's placeholders where it
 * has them ("try {workers} 0"), else the PyTorch script's knobs or none. */
static void print_advice(const Options *o, const SweepRow *w)
{
    VerdictInput vi;
    VerdictKnobs k;
    Verdict v;

    record_verdict_input(&w->rec, &vi);
    k = *vi.knobs;
    if (sweep_template_uses(o->sweep_cmd, SWEEP_WORKERS))
        k.workers = "{workers} #";
    if (sweep_template_uses(o->sweep_cmd, SWEEP_THREADS))
        k.threads = "{threads} #";
    vi.knobs = &k;
    verdict_judge(&vi, &v);
    if (v.oversubscribed)
        printf(" Its verdict: %s.\n", v.oversub);
}

/* The table, the recommendation and the export of the rows that ran
 * (stop: the sweep was cut short; skipped: configurations --budget left
 * out).  Returns rc, or 1 when the export failed. */
static int report(const Options *o, SweepRow *rows, int n, int stop, int skipped, int rc)
{
    int by_time = by_time_of(rows, n), ran = 0;

    for (int i = 0; i < n; i++)
        ran += rows[i].done;
    if (!ran) {
        if (signals_stop_caught())
            printf("\n Stopped before a run was measured: no configuration to show.\n");
        return rc;
    }
    print_table(o, rows, n, by_time);
    sweep_print_scaling_note(o, rows, n);
    sweep_print_skipped(o, skipped);
    if (stop)
        printf("\n Stopped: the table holds the configurations that ran.\n");
    int best = sweep_recommend(rows, n, by_time);
    if (best >= 0)
        print_advice(o, &rows[best]);
    fflush(stdout);
    if (o->export_path && sweep_export(o, rows, n, stop) != 0)
        rc = rc ? rc : EXIT_FAIL;
    return rc;
}

int sweep_cmd_main(const Options *o, int argc, char **argv)
{
    char cmd[SWEEP_CMD_MAX], label[96];
    /* The template and every command line were checked before it started
     * (validate_command(): sweep_cmd_check()). */
    int n = sweep_grid_size(o), stop = 0, skipped = 0, rc = 0, idx[SWEEP_HOLDERS];
    double t0 = sweep_clock();
    SweepRow *rows = calloc((size_t)n, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "cnntop: out of memory\n");
        return EXIT_FAIL;
    }
    signals_install(note_stop);
    for (int i = 0; i < n; i++)
        record_init(&rows[i].rec);
    for (int i = 0; i < n && !(stop = stop || signals_stop_caught()); i++) {
        if (!sweep_may_start(o, sweep_clock() - t0, i)) {
            skipped = n - i;
            break;
        }
        sweep_grid_at(o, i, idx);
        sweep_substitute(o, idx, cmd, sizeof cmd, label, sizeof label); /* fits: sweep_cmd_check() */
        rows[i].ranks = sweep_holder_value(o, idx, SWEEP_RANKS);
        rows[i].group = i / (o->n_ranks > 0 ? o->n_ranks : 1); /* {ranks} varies fastest */
        int r = run_config(o, &rows[i], cmd, label, argc, argv, &stop);
        rc = stop ? r : rc;
        if (rows[i].done) {
            sweep_row_figures(&rows[i]);
            if (rows[i].rec.error && !rc)
                rc = EXIT_FAIL; /* shown in the table, never recommended */
        }
    }
    rc = report(o, rows, n, stop, skipped, signals_stop_caught() ? 128 + signals_stop_caught() : rc);
    for (int i = 0; i < n; i++)
        record_done(&rows[i].rec);
    free(rows);
    return rc;
}

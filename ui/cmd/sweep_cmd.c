/*
 * sweep_cmd.c: `cnntop sweep --cmd TEMPLATE`: the grid of any command.
 *
 * The template's placeholders {batch}, {workers} and {threads} take each
 * value of --batch, --workers and --threads in turn (each placeholder needs
 * its list, each list its placeholder: checked before anything runs); each
 * configuration's command line is run by /bin/sh -c as `cnntop exec` runs
 * a command (exec_run(), its standard output to /dev/null), --warmup K
 * times discarded, then --runs R times measured.  The table and the
 * recommendation are sweep.c's: mean ± σ of the wall time and, when the
 * Python hook reported, of images/s; speedups ± σ against the first
 * configuration (by images/s, else by wall time); Welch's test.  --export
 * writes every configuration as an exec record with its repeats, in the
 * sweep schema `cnntop report` reads.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/exec.h"
#include "cmd/sweep.h"
#include "common/exit.h"
#include "common/fmt.h"

#define CMD_MAX 8192   /* a configuration's command line, substituted */
#define RUNS_MAX 1024  /* measured runs a configuration's figures take in (as sweep.c) */

/* The placeholders, each with the list that fills it. */
static const struct {
    const char *name;   /* in the template, between braces */
    const char *option;
} holders[] = {{"batch", "--batch"}, {"workers", "--workers"}, {"threads", "--threads"}};
#define N_HOLDERS (int)(sizeof holders / sizeof *holders)

/* The list for holders[k]: its values, count returned (0: not given). */
static int holder_list(const Options *o, int k, const int **v)
{
    const int *lists[] = {o->batch_list, o->workers_list, o->threads_list};
    const int counts[] = {o->n_batch, o->n_workers, o->n_threads};

    *v = lists[k];
    return counts[k];
}

/* The placeholder at s ("{name}"): its index, or -1 (not one of ours,
 * *len 0) with *len the length of "{...}" when it is a brace pair. */
static int holder_at(const char *s, size_t *len)
{
    const char *end = strchr(s + 1, '}');

    *len = 0;
    if (!end)
        return -1;
    for (int k = 0; k < N_HOLDERS; k++)
        if ((size_t)(end - s - 1) == strlen(holders[k].name) &&
            !strncmp(s + 1, holders[k].name, (size_t)(end - s - 1))) {
            *len = (size_t)(end - s + 1);
            return k;
        }
    return -1;
}

/* 1 when the template has holders[k]. */
static int holder_used(const char *tmpl, int k)
{
    size_t n;

    for (const char *s = strchr(tmpl, '{'); s; s = strchr(s + 1, '{'))
        if (holder_at(s, &n) == k)
            return 1;
    return 0;
}

/* Each placeholder of the template has its list and each list its
 * placeholder.  0, or -1 with a one-line err. */
static int template_check(const Options *o, char *err, size_t len)
{
    int used[N_HOLDERS] = {0};
    const int *v;

    for (int k = 0; k < N_HOLDERS; k++)
        used[k] = holder_used(o->sweep_cmd, k);
    for (int k = 0; k < N_HOLDERS; k++) {
        int given = (o->set_mask & (k == 0 ? OPTSET_BATCH : k == 1 ? OPTSET_WORKERS
                                                                   : OPTSET_THREADS)) != 0;
        if (used[k] && !given) {
            snprintf(err, len, "--cmd: the template has {%s} but no %s LIST is given",
                     holders[k].name, holders[k].option);
            return -1;
        }
        if (!used[k] && given && holder_list(o, k, &v) > 0) {
            snprintf(err, len, "%s is given but the --cmd template has no {%s}",
                     holders[k].option, holders[k].name);
            return -1;
        }
    }
    return 0;
}

/* The configuration's values: idx[k] into holders[k]'s list, from the
 * grid index i (the first list varies slowest). */
static void grid_at(const Options *o, int i, int idx[N_HOLDERS])
{
    const int *v;

    for (int k = N_HOLDERS - 1; k >= 0; k--) {
        int n = holder_list(o, k, &v);
        n = n ? n : 1;
        idx[k] = i % n;
        i /= n;
    }
}

/* The template with configuration idx filled in, into out; its label
 * ("batch 64, workers 2") into label.  0, or -1 when it does not fit. */
static int substitute(const Options *o, const int idx[N_HOLDERS], char *out, size_t len,
                      char *label, size_t llen)
{
    size_t w = 0, lw = 0, n = 0;
    const int *v;

    label[0] = '\0';
    for (const char *s = o->sweep_cmd; *s;) {
        int k = *s == '{' ? holder_at(s, &n) : -1;
        int m = k >= 0 ? snprintf(out + w, len - w, "%d", (holder_list(o, k, &v), v[idx[k]]))
                       : snprintf(out + w, len - w, "%c", *s);
        if (m < 0 || (size_t)m >= len - w)
            return -1;
        w += (size_t)m;
        s += k >= 0 ? n : 1;
    }
    for (int k = 0; k < N_HOLDERS; k++)
        if (holder_list(o, k, &v) > 0 && lw < llen)
            lw += (size_t)snprintf(label + lw, llen - lw, "%s%s %d", lw ? ", " : "",
                                   holders[k].name, v[idx[k]]);
    return 0;
}

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

/* An exit code that ends the sweep: the command could not be run, or
 * Ctrl-C, SIGTERM or SIGHUP ended it. */
static int stops_sweep(int ran, int rc)
{
    return !ran || rc == 128 + SIGINT || rc == 128 + SIGTERM || rc == 128 + SIGHUP;
}

/* One configuration: --warmup runs, then --runs measured into w->rec.
 * Returns the last exit code; *stop 1 when the sweep must end. */
static int run_config(const Options *o, SweepRow *w, char *cmd, const char *label, int argc,
                      char **argv, int *stop)
{
    char *cargv[] = {"/bin/sh", "-c", cmd, NULL};
    ExecRun x = {.argv = cargv, .events = o->events, .hook = !o->no_hook, .quiet = 1};
    int rc = 0, runs = o->runs > 0 ? o->runs : 1;

    for (int r = 0; r < o->warmup + runs && !*stop; r++) {
        int measured = r >= o->warmup;
        fprintf(stderr, "cnntop: sweep: %s, %s %d/%d: %s\n", label,
                measured ? "run" : "warm-up", measured ? r - o->warmup + 1 : r + 1,
                measured ? runs : o->warmup, cmd);
        RunRecord rec;
        record_init(&rec);
        rc = exec_run(&x, &rec, argc, argv, NULL);
        *stop = stops_sweep(rec.have_exec, rc);
        if (measured && rec.have_exec)
            keep_run(w, &rec, label, rc);
        else
            record_done(&rec);
    }
    return rc;
}

/* The row's figures over its repeats: wall time, and images/s only when
 * every measured run had the hook's figure. */
static void summarize(SweepRow *w)
{
    double v[RUNS_MAX];
    size_t n = record_times(&w->rec, v, RUNS_MAX), k;

    stats_summarize(v, n, &w->wall);
    n = record_throughputs(&w->rec, v, RUNS_MAX);
    for (k = 0; k < n && !isnan(v[k]); k++)
        ;
    stats_summarize(v, k == n ? n : 0, &w->ips);
    w->accuracy = NAN;
    w->wait_share = w->rec.exec.data_wait_share;
    w->tta = NAN;
}

/* CPU seconds a run: task-clock over every role, summed over the
 * measured runs (exec_record_merge()) and divided by them; NAN: not
 * counted. */
static double cpu_seconds(const RunRecord *r)
{
    double s = NAN;

    for (size_t i = 0; i < r->n_exec_counters; i++) {
        const RecordCounter *c = &r->exec_counters[i];
        if (!strcmp(c->name, "task-clock") && c->status == RECORD_CTR_OK)
            s = (isnan(s) ? 0 : s) + c->value * 1e-9;
    }
    return s / (r->exec.runs > 0 ? r->exec.runs : 1);
}

/* The speedup of w over base (±σ) by the rank figure, into buf. */
static void speedup(const SweepRow *w, const SweepRow *base, int by_time, char *buf, size_t len)
{
    double r, u;
    const StatsSummary *a = by_time ? &base->wall : &w->ips, *b = by_time ? &w->wall : &base->ips;

    if (w == base) {
        snprintf(buf, len, "1 (baseline)");
        return;
    }
    stats_ratio(a->mean, isnan(a->sd) ? 0 : a->sd, b->mean, isnan(b->sd) ? 0 : b->sd, &r, &u);
    fmt_pm(buf, len, r, a->n > 1 && b->n > 1 ? u : NAN, 2);
}

static void print_table(const SweepRow *rows, int n, int by_time)
{
    const SweepRow *base = NULL;
    char label[96], t[48], ips[48], sp[48], wait[16], cpu[16], ex[24];

    for (int i = 0; i < n && !base; i++)
        if (rows[i].done)
            base = &rows[i];
    printf("\n %-34s %-20s %-18s %6s %8s %-8s %-14s\n", "Configuration", "Time [s]", "Images/s",
           "Wait", "CPU [s]", "Exit", by_time ? "Speedup (time)" : "Speedup");
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
        speedup(w, base, by_time, sp, sizeof sp);
        printf(" %-34s %-20s %-18s %6s %8s %-8s %-14s\n", label, t, ips, wait, cpu, ex, sp);
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

    exec_verdict_of_record(&w->rec, &vi);
    k = *vi.knobs;
    if (holder_used(o->sweep_cmd, 1))
        k.workers = "{workers} #";
    if (holder_used(o->sweep_cmd, 2))
        k.threads = "{threads} #";
    vi.knobs = &k;
    vi.data_wait_share = isnan(vi.data_wait_share) ? 0.0 : vi.data_wait_share;
    verdict_judge(&vi, &v);
    if (v.oversubscribed)
        printf(" Its verdict: %s.\n", v.oversub);
}

int sweep_cmd_main(const Options *o, int argc, char **argv)
{
    char err[512], cmd[CMD_MAX], label[96];
    int n = 1, stop = 0, rc = 0, ran = 0, idx[N_HOLDERS];
    const int *v;

    if (template_check(o, err, sizeof err) != 0 ||
        (o->export_path && export_check(o->export_path, o->force, err, sizeof err) != 0)) {
        fprintf(stderr, "cnntop: %s%s\n", strncmp(err, "--", 2) ? "--export: " : "", err);
        return strncmp(err, "--", 2) ? EXIT_FAIL : EXIT_USAGE;
    }
    for (int k = 0; k < N_HOLDERS; k++)
        n *= holder_list(o, k, &v) ? holder_list(o, k, &v) : 1;
    SweepRow *rows = calloc((size_t)n, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "cnntop: out of memory\n");
        return EXIT_FAIL;
    }
    for (int i = 0; i < n; i++)
        record_init(&rows[i].rec);
    for (int i = 0; i < n && !stop; i++) {
        grid_at(o, i, idx);
        if (substitute(o, idx, cmd, sizeof cmd, label, sizeof label) != 0) {
            fprintf(stderr, "cnntop: --cmd: the command line is longer than %d bytes\n",
                    CMD_MAX - 1);
            rc = EXIT_USAGE;
            break;
        }
        int r = run_config(o, &rows[i], cmd, label, argc, argv, &stop);
        rc = stop ? r : rc;
        if (rows[i].done) {
            summarize(&rows[i]);
            ran++;
            if (rows[i].rec.error && !rc)
                rc = EXIT_FAIL; /* shown in the table, never recommended */
        }
    }
    int by_time = by_time_of(rows, n);
    if (ran) {
        print_table(rows, n, by_time);
        if (stop)
            printf("\n Stopped: the table holds the configurations that ran.\n");
        int best = sweep_recommend(rows, n, by_time);
        if (best >= 0)
            print_advice(o, &rows[best]);
        fflush(stdout);
        if (o->export_path && sweep_export(o, rows, n, stop) != 0)
            rc = rc ? rc : EXIT_FAIL;
    }
    for (int i = 0; i < n; i++)
        record_done(&rows[i].rec);
    free(rows);
    return rc;
}

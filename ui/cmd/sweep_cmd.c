/*
 * sweep_cmd.c: `cnntop sweep --cmd TEMPLATE`: the grid of any command.
 *
 * The template's placeholders {batch}, {workers} and {threads} take each
 * value of --batch, --workers and --threads in turn.  Everything that can
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
#include "common/exit.h"
#include "common/fmt.h"
#include "common/signals.h"

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

/* The edit distance between a[0..la) and b, case aside; 99 for words
 * too long to be a placeholder. */
static int edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b);
    int d[16][16];

    if (la > 15 || lb > 15)
        return 99;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int sub = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

/* The brace pair at s, which is no placeholder: the placeholder it
 * nearly spells ({Batch}, {thread}, {bacth}), or -1.  Only a word of
 * letters counts, and not after '$' (the shell's ${name}), so that awk's
 * {print} or find's {} stay as they are. */
static int holder_misspelt(const char *tmpl, const char *s)
{
    const char *end = strchr(s + 1, '}');
    size_t len = end ? (size_t)(end - s - 1) : 0;

    if (len == 0 || (s > tmpl && s[-1] == '$'))
        return -1;
    for (size_t i = 1; i <= len; i++)
        if (!isalpha((unsigned char)s[i]) && s[i] != '_')
            return -1;
    for (int k = 0; k < N_HOLDERS; k++)
        if (edit_distance(s + 1, len, holders[k].name) <= 2)
            return k;
    return -1;
}

/* The template names a command and no misspelt placeholder.  0, or -1
 * with a one-line err. */
static int template_words_check(const char *tmpl, char *err, size_t len)
{
    size_t n;

    if (!tmpl[strspn(tmpl, " \t\n")]) {
        snprintf(err, len, "--cmd: the template is blank: no command to run");
        return -1;
    }
    for (const char *s = strchr(tmpl, '{'); s; s = strchr(s + 1, '{')) {
        int k = holder_at(s, &n) < 0 ? holder_misspelt(tmpl, s) : -1;
        if (k >= 0) {
            snprintf(err, len, "--cmd: %.*s is no placeholder: did you mean {%s}? "
                     "(the placeholders: {batch}, {workers}, {threads})",
                     (int)(strchr(s, '}') - s + 1), s, holders[k].name);
            return -1;
        }
    }
    return 0;
}

/* Each placeholder of the template has its list and each list its
 * placeholder.  0, or -1 with a one-line err. */
static int template_check(const Options *o, char *err, size_t len)
{
    int used[N_HOLDERS] = {0};
    const int *v;

    if (template_words_check(o->sweep_cmd, err, len) != 0)
        return -1;
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
 * ("batch 64, workers 2"; "the command" with no list) into label.  0, or
 * -1 when the command line does not fit (the label is made first). */
static int substitute(const Options *o, const int idx[N_HOLDERS], char *out, size_t len,
                      char *label, size_t llen)
{
    size_t w = 0, lw = 0, n = 0;
    const int *v;

    snprintf(label, llen, "the command");
    for (int k = 0; k < N_HOLDERS; k++)
        if (holder_list(o, k, &v) > 0 && lw < llen)
            lw += (size_t)snprintf(label + lw, llen - lw, "%s%s %d", lw ? ", " : "",
                                   holders[k].name, v[idx[k]]);
    for (const char *s = o->sweep_cmd; *s;) {
        int k = *s == '{' ? holder_at(s, &n) : -1;
        int m = k >= 0 ? snprintf(out + w, len - w, "%d", (holder_list(o, k, &v), v[idx[k]]))
                       : snprintf(out + w, len - w, "%c", *s);
        if (m < 0 || (size_t)m >= len - w)
            return -1;
        w += (size_t)m;
        s += k >= 0 ? n : 1;
    }
    return 0;
}

/* The number of configurations: the product of the lists' lengths. */
static int grid_size(const Options *o)
{
    const int *v;
    int n = 1;

    for (int k = 0; k < N_HOLDERS; k++)
        n *= holder_list(o, k, &v) ? holder_list(o, k, &v) : 1;
    return n;
}

/* Every configuration's command line fits.  0, or -1 with a one-line err
 * naming the first that does not. */
static int configs_check(const Options *o, int n, char *err, size_t len)
{
    char cmd[CMD_MAX], label[96];
    int idx[N_HOLDERS];

    for (int i = 0; i < n; i++) {
        grid_at(o, i, idx);
        if (substitute(o, idx, cmd, sizeof cmd, label, sizeof label) != 0) {
            snprintf(err, len, "--cmd: configuration %d of %d (%s): the command line is longer "
                     "than %d bytes", i + 1, n, label, CMD_MAX - 1);
            return -1;
        }
    }
    return 0;
}

int sweep_cmd_check(const Options *o, char *err, size_t len)
{
    return template_check(o, err, len) != 0 || configs_check(o, grid_size(o), err, len) != 0
               ? -1
               : 0;
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
        sweep_speedup_text(w, base, by_time, sp, sizeof sp);
        printf(" %-34s %-20s %-18s %6s %8s %-8s %-14s%s\n", label, t, ips, wait, cpu, ex, sp,
               w->rec.interrupted ? "  (interrupted)" : "");
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
    if (holder_used(o->sweep_cmd, 1))
        k.workers = "{workers} #";
    if (holder_used(o->sweep_cmd, 2))
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
    print_table(rows, n, by_time);
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
    char cmd[CMD_MAX], label[96];
    /* The template and every command line were checked before it started
     * (validate_command(): sweep_cmd_check()). */
    int n = grid_size(o), stop = 0, skipped = 0, rc = 0, idx[N_HOLDERS];
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
        grid_at(o, i, idx);
        substitute(o, idx, cmd, sizeof cmd, label, sizeof label); /* fits: sweep_cmd_check() */
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

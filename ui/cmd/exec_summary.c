/*
 * exec_summary.c: what `cnntop exec` prints when the command has ended
 * (see exec.h).
 *
 * The layout follows `cnntop run`: a heading naming the command, one
 * figure per line with its label in a 22-column field, then the counters
 * block of each role that ran (common/counters_fmt.c, as perf stat shows
 * them; an event that could not be counted says n/a and why), then one
 * line per process.  Every figure comes from the tree's readings; one that
 * could not be had says so instead of showing 0.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cnntop/figures.h"
#include "cnntop/machine.h"
#include "cnntop/verdict.h"
#include "cmd/exec.h"
#include "common/fmt.h"
#include "common/counters_fmt.h"

void exec_command_print(FILE *f, char **argv)
{
    for (int i = 0; argv[i]; i++) {
        const char *a = argv[i];
        fputs(i ? " " : "", f);
        if (*a && !strpbrk(a, " \t\n'\"\\$`*?[]{}()<>|&;#~")) {
            fputs(a, f);
            continue;
        }
        fputc('\'', f);
        for (; *a; a++)
            fputs(*a == '\'' ? "'\\''" : (char[2]){*a, 0}, f);
        fputc('\'', f);
    }
}

static void print_exit(FILE *f, const ExecResult *res)
{
    if (res->signal)
        fprintf(f, "  Exit:                 killed by signal %d (%s): exit code %d\n",
                res->signal, strsignal(res->signal), 128 + res->signal);
    else
        fprintf(f, "  Exit:                 status %d\n", res->status);
}

static void print_tree(FILE *f, ProcTree *t, const ExecResult *res)
{
    ProcInfo p[PROC_MAX_PROCS];
    int n = proctree_procs(t, p, PROC_MAX_PROCS), big = -1;
    double cpu = 0.0;
    unsigned long long minflt = 0, majflt = 0;
    char why[128];

    if (n > PROC_MAX_PROCS)
        n = PROC_MAX_PROCS;
    for (int k = 0; k < n; k++) {
        cpu += p[k].cpu;
        minflt += p[k].minflt;
        majflt += p[k].majflt;
        if (big < 0 || p[k].hwm_kib > p[big].hwm_kib)
            big = k;
    }
    fprintf(f, "  Processes:            %d main, %d data-loader worker%s, %d other child%s\n",
            proctree_role_procs(t, PROC_ROLE_MAIN), proctree_role_procs(t, PROC_ROLE_WORKER),
            fmt_plural(proctree_role_procs(t, PROC_ROLE_WORKER)),
            proctree_role_procs(t, PROC_ROLE_OTHER),
            proctree_role_procs(t, PROC_ROLE_OTHER) == 1 ? "" : "ren");
    if (res->wall > 0)
        fprintf(f, "  CPU:                  %.2f CPUs utilized (%.2f s user+system over %.2f s)\n",
                cpu / res->wall, cpu, res->wall);
    fprintf(f, "  Page faults:          %llu minor, %llu major (every process)\n", minflt, majflt);
    fprintf(f, "  Peak RSS:             %.1f MiB (the tree: its live processes' resident sets, "
            "sampled)", (double)proctree_peak_rss_kib(t) / 1024.0);
    if (big >= 0 && p[big].hwm_kib > 0)
        fprintf(f, "; largest %.1f MiB (pid %d)", (double)p[big].hwm_kib / 1024.0, p[big].pid);
    fputc('\n', f);
    if (proctree_dropped(t, why, sizeof why))
        fprintf(f, "  Warning:              %d thread(s) not followed: %s; the sums are partial\n",
                proctree_dropped(t, NULL, 0), why);
}

/* torch's intra-op threads and the DataLoader's workers, as the hook saw
 * them at the first batch; n/a (never 0) when it did not say. */
static void print_knobs(FILE *f, const HookFeed *h)
{
    char t[64], w[64];

    snprintf(t, sizeof t, h->threads >= 0 ? "%d" : "n/a", h->threads);
    snprintf(w, sizeof w, h->loader_workers >= 0 ? "%d" : "n/a", h->loader_workers);
    fprintf(f, "  Threads:              %s intra-op (torch.get_num_threads()), DataLoader "
            "num_workers %s\n", t, w);
}

/* What the Python hook saw of the DataLoader: *fig->ok when it saw
 * enough batches for a rate. */
static void print_training(FILE *f, const ExecResult *res, HookFigures *fig)
{
    const HookFeed *h = res->hook ? &res->hook->feed : NULL;

    memset(fig, 0, sizeof *fig);
    if (!h)
        return;
    hookfeed_figures(h, fig);
    if (!h->hello) /* not Python, or no torch DataLoader: nothing to say */
        return;
    if (!fig->ok) {
        fprintf(f, "  Training:             n/a: the DataLoader gave %ld batch%s (a rate needs 2)\n",
                h->batches, h->batches == 1 ? "" : "es");
        return;
    }
    fprintf(f, "  Images/s:             %.1f (%.0f images in %.3f s after the first of %ld "
            "batches; torch %s)\n", fig->images_per_s, fig->images, fig->window, fig->batches,
            h->torch);
    fprintf(f, "  Data wait:            %.1f%% of the time (next() on the DataLoader: %.3f s); "
            "first batch %.3f s\n", 100 * fig->data_wait_share, h->wait, fig->first_wait);
    fprintf(f, "  Step:                 %.1f ms between batches (mean)\n", 1e3 * fig->step_s);
    print_knobs(f, h);
}

/* Lines on the hook's pipe that were rejected (forged, garbled, or out of
 * order): how many, and the first one's reason; none of them is in a
 * figure. */
static void print_rejected(FILE *f, const ExecResult *res)
{
    const HookFeed *h = res->hook ? &res->hook->feed : NULL;

    if (h && h->bad)
        fprintf(f, "  Hook:                 %ld line%s rejected, not in any figure (the first, "
                "%s)\n", h->bad, fmt_plural(h->bad), h->why);
}

/* What --progress read from the command's output. */
static void print_progress(FILE *f, const ExecProgress *p)
{
    if (!p)
        return;
    if (!p->matches) {
        fprintf(f, "  Progress:             n/a: no output line matched --progress '%s' with a "
                "number\n", p->regex);
        return;
    }
    fprintf(f, "  Progress:             last %g, mean %g (min %g, max %g) over %ld line%s "
            "matching --progress\n", p->last, p->sum / (double)p->matches, p->min, p->max,
            p->matches, fmt_plural(p->matches));
}

void exec_verdict_print(FILE *f, const VerdictInput *given)
{
    VerdictInput in = *given;
    int bound = !isnan(in.data_wait_share);
    Verdict v;

    in.data_wait_share = bound ? in.data_wait_share : 0.0;
    verdict_judge(&in, &v);
    if (bound)
        fprintf(f, "  Bound:                %s\n", v.bound);
    if (v.oversubscribed)
        fprintf(f, "  Verdict:              %s\n", v.oversub);
    else if (isfinite(in.run_queue_wait))
        fprintf(f, "  Verdict:              not oversubscribed: %d worker%s + %d busy main "
                "thread%s on %d core%s, run-queue wait %.1f%% of thread time (at most %.0f%%)\n",
                in.workers, fmt_plural(in.workers), in.threads, fmt_plural(in.threads), in.cores,
                fmt_plural(in.cores), 100 * in.run_queue_wait, 100 * CTR_OVERSUB_WAIT);
    else
        fprintf(f, "  Verdict:              n/a: no run-queue figures (schedstat missing or "
                "under %.1f s of thread time)\n", CTR_OVERSUB_MIN_WALL);
}

static void print_roles(FILE *f, ProcTree *t)
{
    CounterReading r[CTR_MAX_EVENTS];
    CounterSched s;
    char title[96];

    for (int role = 0; role < PROC_ROLES; role++) {
        int procs = proctree_role_procs(t, (ProcRole)role);
        proctree_sched(t, (ProcRole)role, &s);
        fputc('\n', f);
        if (!procs) {
            fprintf(f, " Counters, %s: none ran\n", proctree_role_name((ProcRole)role));
            continue;
        }
        snprintf(title, sizeof title, "%s (%d process%s)", proctree_role_name((ProcRole)role),
                 procs, procs == 1 ? "" : "es");
        int n = proctree_read(t, (ProcRole)role, r, CTR_MAX_EVENTS);
        counters_fmt_block(f, title, r, n, proctree_role_wall_ns(t, (ProcRole)role), &s);
    }
}

static const char *const role_tags[PROC_ROLES] = {
    [PROC_ROLE_MAIN] = "main", [PROC_ROLE_WORKER] = "worker", [PROC_ROLE_OTHER] = "other",
};

static void print_procs(FILE *f, ProcTree *t)
{
    ProcInfo p[PROC_MAX_PROCS];
    int n = proctree_procs(t, p, PROC_MAX_PROCS);

    fprintf(f, "\n Processes:\n  %8s %8s  %-7s %-16s %7s %9s %6s %9s %10s %7s\n", "PID", "PPID",
            "ROLE", "COMMAND", "THREADS", "CPU s", "CPUs", "WALL s", "MINFLT", "RSS MiB");
    for (int k = 0; k < n && k < PROC_MAX_PROCS; k++)
        fprintf(f, "  %8d %8d  %-7s %-16s %7d %9.2f %6.2f %9.2f %10llu %7.1f\n", p[k].pid,
                p[k].ppid, role_tags[p[k].role], p[k].comm, p[k].threads, p[k].cpu,
                p[k].cpu_util, p[k].wall, (unsigned long long)p[k].minflt,
                (double)p[k].hwm_kib / 1024.0);
    if (n > PROC_MAX_PROCS)
        fprintf(f, "  ... and %d more\n", n - PROC_MAX_PROCS);
}

void exec_summary_print(FILE *f, ProcTree *t, const ExecResult *res)
{
    fprintf(f, "\n Performance of cnntop exec: ");
    exec_command_print(f, res->argv);
    fputs(":\n", f);
    print_exit(f, res);
    fprintf(f, "  Wall time:            %.3f s\n", res->wall);
    HookFigures fig;
    print_training(f, res, &fig);
    print_rejected(f, res);
    print_progress(f, res->progress);
    print_tree(f, t, res);
    VerdictInput vi;
    exec_verdict_of(t, &fig, &vi);
    exec_verdict_print(f, &vi);
    print_roles(f, t);
    print_procs(f, t);
}

/* A figure, or n/a when it is unknown. */
static void print_num(FILE *f, const char *what, double v, int decimals, const char *unit,
                      const char *na)
{
    if (isnan(v))
        fprintf(f, "  %-22sn/a: %s\n", what, na);
    else
        fprintf(f, "  %-22s%.*f%s\n", what, decimals, v, unit);
}

static const char *const proc_role_noun[] = {"main process", "data-loader workers",
                                             "other children"};

void exec_record_print(FILE *f, const RunRecord *r, const char *what)
{
    const RecordExec *x = &r->exec;

    fprintf(f, "\n %s of cnntop exec: %s (%s, cnntop %s):\n", what, x->command ? x->command : "?",
            r->date, r->version);
    if (x->signal)
        fprintf(f, "  %-22skilled by signal %d\n", "Exit:", x->signal);
    else
        fprintf(f, "  %-22sstatus %d\n", "Exit:", x->status);
    print_num(f, "Wall time:", x->wall, 3, " s", "not recorded");
    print_num(f, "Images/s:", x->images_per_s, 1, " (the Python hook's DataLoader count)",
              "no DataLoader figures from the hook");
    print_num(f, "Data wait:", 100 * x->data_wait_share, 1, "% of the time",
              "no DataLoader figures from the hook");
    print_num(f, "Torch threads:", r->threads_used >= 0 ? r->threads_used : NAN, 0,
              " intra-op (torch.get_num_threads())", "not reported by the hook");
    print_num(f, "DataLoader workers:", r->exec.loader_workers >= 0 ? r->exec.loader_workers : NAN,
              0, " (num_workers)", "not reported by the hook");
    print_num(f, "Peak RSS:", r->peak_rss_kib >= 0 ? r->peak_rss_kib / 1024.0 : NAN, 1, " MiB",
              "unknown");
    if (x->hook_rejected > 0)
        fprintf(f, "  %-22s%ld line%s rejected (never in a figure)\n", "Hook:", x->hook_rejected,
                fmt_plural(x->hook_rejected));
    VerdictInput vi;
    record_verdict_input(r, &vi);
    exec_verdict_print(f, &vi);
    if (x->runs > 1)
        fprintf(f, "\n Counters summed over the %d measured runs:\n", x->runs);
    for (int role = 0; role < PROC_ROLES; role++) {
        int head = 0;
        for (size_t i = 0; i < r->n_exec_counters; i++) {
            const RecordCounter *c = &r->exec_counters[i];
            if ((int)c->role != role)
                continue;
            if (!head++)
                fprintf(f, "\n Counters, %s:\n", proc_role_noun[role]);
            if (c->status == RECORD_CTR_OK)
                fprintf(f, "  %20.2f %-5s %-24s (counted %.0f%%)\n", c->value, c->unit, c->name,
                        100 * c->scaled);
            else
                fprintf(f, "  %20s %-5s %-24s %s\n",
                        c->status == RECORD_CTR_UNAVAILABLE ? "<not supported>" : "<not counted>",
                        "", c->name, c->reason);
        }
    }
    exec_layers_print(f, r);
}

/*
 * exec_summary.c: what `cnntop exec` prints when the command has ended,
 * and what `cnntop report` prints of its export (see exec.h): one printer
 * that reads the run's record alone, so the two cannot drift apart.
 *
 * The layout follows `cnntop run`: a heading naming the command, one
 * figure per line with its label in a 22-column field, then the counters
 * block of each role that ran (common/counters_fmt.c, as perf stat shows
 * them; an event that could not be counted says n/a and why), then one
 * line per process.  A figure the record does not hold (an older record)
 * is left out or said to be n/a, never shown as 0.
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
#include "cmd/summary.h"
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

/* How it ended; the uncaught Python exception the hook saw, and why it
 * died when that is a known failure (exec_why_died()). */
static void print_exit(FILE *f, const RecordExec *x)
{
    const char *why = exec_why_died(x->py_error, x->signal ? -1 : x->status);

    if (x->signal)
        fprintf(f, "  Exit:                 killed by signal %d (%s): exit code %d\n", x->signal,
                strsignal(x->signal), 128 + x->signal);
    else
        fprintf(f, "  Exit:                 status %d\n", x->status);
    if (x->py_error[0])
        fprintf(f, "  Python error:         %s (uncaught)\n", x->py_error);
    if (why)
        fprintf(f, "  Why:                  %s\n", why);
}

/* The role's row of the record, or NULL (an older record has none). */
static const RecordExecRole *role_of(const RunRecord *r, int role)
{
    for (size_t i = 0; i < r->n_exec_roles; i++)
        if (r->exec_roles[i].role == role)
            return &r->exec_roles[i];
    return NULL;
}

static int role_procs(const RunRecord *r, int role)
{
    const RecordExecRole *ro = role_of(r, role);
    return ro ? ro->procs : 0;
}

static void print_tree(FILE *f, const RunRecord *r)
{
    const RecordExec *x = &r->exec;
    const RecordProc *big = NULL;
    int other = role_procs(r, PROC_ROLE_OTHER), workers = role_procs(r, PROC_ROLE_WORKER);

    for (size_t k = 0; k < r->n_exec_procs; k++)
        if (!big || r->exec_procs[k].hwm_kib > big->hwm_kib)
            big = &r->exec_procs[k];
    if (r->n_exec_roles) {
        fprintf(f, "  Processes:            %d main, %d data-loader worker%s, %d other child%s",
                role_procs(r, PROC_ROLE_MAIN), workers, fmt_plural(workers), other,
                other == 1 ? "" : "ren");
        if (role_procs(r, PROC_ROLE_RANK))
            fprintf(f, ", %d rank%s", role_procs(r, PROC_ROLE_RANK),
                    fmt_plural(role_procs(r, PROC_ROLE_RANK)));
        fputc('\n', f);
    }
    if (x->wall > 0 && !isnan(x->cpu))
        fprintf(f, "  CPU:                  %.2f CPUs utilized (%.2f s user+system over %.2f s)\n",
                x->cpu / x->wall, x->cpu, x->wall);
    if (x->minflt >= 0 && x->majflt >= 0)
        fprintf(f, "  Page faults:          %ld minor, %ld major (every process)\n", x->minflt,
                x->majflt);
    if (r->peak_rss_kib >= 0) {
        fprintf(f, "  Peak RSS:             %.1f MiB (the tree: its live processes' resident "
                "sets, sampled)", (double)r->peak_rss_kib / 1024.0);
        if (big && big->hwm_kib > 0)
            fprintf(f, "; largest %.1f MiB (pid %d)", (double)big->hwm_kib / 1024.0, big->pid);
        fputc('\n', f);
    }
    if (x->dropped > 0)
        fprintf(f, "  Warning:              %d thread(s) not followed: %s; the sums are partial\n",
                x->dropped, x->dropped_why);
}

/* torch's intra-op threads and the DataLoader's workers, as the hook saw
 * them at the first batch; n/a (never 0) when it did not say. */
static void print_knobs(FILE *f, const RunRecord *r)
{
    char t[64], w[64];

    snprintf(t, sizeof t, r->threads_used >= 0 ? "%d" : "n/a", r->threads_used);
    snprintf(w, sizeof w, r->exec.loader_workers >= 0 ? "%d" : "n/a", r->exec.loader_workers);
    fprintf(f, "  Threads:              %s intra-op (torch.get_num_threads()), DataLoader "
            "num_workers %s\n", t, w);
}

/* "n/a" or a count, for a rank's knobs. */
static const char *count_text(int n, char *buf, size_t len)
{
    snprintf(buf, len, n >= 0 ? "%d" : "n/a", n);
    return buf;
}

/* A data-parallel job: its images/s (the sum over the ranks), the slowest
 * rank, then one line per rank with its own figures and knobs. */
static void print_ranks(FILE *f, const RunRecord *r)
{
    const RecordExecRank *slow = NULL;
    char t[32], w[32];

    if (!r->n_exec_ranks || !r->exec_ranks)
        return;
    /* The slowest: one without a rate, else the lowest rate. */
    for (size_t i = 0; i < r->n_exec_ranks; i++) {
        const RecordExecRank *k = &r->exec_ranks[i];
        if (!slow || (!isnan(slow->images_per_s) &&
                      (isnan(k->images_per_s) || k->images_per_s < slow->images_per_s)))
            slow = k;
    }
    fprintf(f, "  Ranks:                %zu of world %d (torch.distributed; torch %s)\n",
            r->n_exec_ranks, r->exec_ranks[0].world, r->exec.torch);
    if (isnan(r->exec.images_per_s))
        fprintf(f, "  Images/s:             n/a: rank %d's DataLoader gave %ld batch%s (a rate "
                "needs 2)\n", slow->rank, slow->batches, slow->batches == 1 ? "" : "es");
    else
        fprintf(f, "  Images/s:             %.1f, the sum over the ranks; the slowest rank %d "
                "(%.1f)\n", r->exec.images_per_s, slow->rank, slow->images_per_s);
    for (size_t i = 0; i < r->n_exec_ranks; i++) {
        const RecordExecRank *k = &r->exec_ranks[i];
        char head[32];
        snprintf(head, sizeof head, "Rank %d:", k->rank);
        fprintf(f, "  %-22s", head);
        if (isnan(k->images_per_s))
            fprintf(f, "n/a images/s (%ld batch%s)", k->batches, k->batches == 1 ? "" : "es");
        else
            fprintf(f, "%.1f images/s (%.0f in %.3f s), data wait %.1f%%", k->images_per_s,
                    k->images, k->window, 100 * k->data_wait_share);
        fprintf(f, ", collectives %.3f s", k->coll);
        if (!isnan(k->window) && k->window > 0)
            fprintf(f, " (%.0f%% of its window)", 100 * k->coll / k->window);
        fprintf(f, "; %s intra-op, num_workers %s (pid %d)\n",
                count_text(k->threads, t, sizeof t), count_text(k->loader_workers, w, sizeof w),
                k->pid);
    }
}

/* What the Python hook saw of the DataLoader (nothing when it did not see
 * torch: exec.torch ""); a data-parallel job by its ranks. */
static void print_training(FILE *f, const RunRecord *r)
{
    const RecordExec *x = &r->exec;

    if (r->n_exec_ranks) {
        print_ranks(f, r);
        return;
    }
    if (!x->torch[0])
        return;
    if (isnan(x->images_per_s)) {
        fprintf(f, "  Training:             n/a: the DataLoader gave %ld batch%s (a rate needs 2)\n",
                x->batches, x->batches == 1 ? "" : "es");
        return;
    }
    fprintf(f, "  Images/s:             %.1f (%.0f images in %.3f s after the first of %ld "
            "batches; torch %s)\n", x->images_per_s, x->images, x->window, x->batches, x->torch);
    fprintf(f, "  Data wait:            %.1f%% of the time (next() on the DataLoader: %.3f s); "
            "first batch %.3f s\n", 100 * x->data_wait_share, x->wait, x->first_wait);
    fprintf(f, "  Step:                 %.1f ms between batches (mean)\n", 1e3 * x->step_s);
    print_knobs(f, r);
}

/* Lines on the hook's pipe that were rejected (forged, garbled, or out of
 * order): how many, and the first one's reason; none of them is in a
 * figure. */
static void print_rejected(FILE *f, const RecordExec *x)
{
    if (x->hook_rejected > 0)
        fprintf(f, "  Hook:                 %ld line%s rejected, not in any figure (the first, "
                "%s)\n", x->hook_rejected, fmt_plural(x->hook_rejected),
                x->hook_why[0] ? x->hook_why : "reason not recorded");
}

/* What --progress read from the command's output. */
static void print_progress(FILE *f, const RecordExec *x)
{
    if (!x->progress)
        return;
    if (x->progress_matches <= 0) {
        fprintf(f, "  Progress:             n/a: no output line matched --progress '%s' with a "
                "number\n", x->progress);
        return;
    }
    fprintf(f, "  Progress:             last %g, mean %g (min %g, max %g) over %ld line%s "
            "matching --progress\n", x->progress_last, x->progress_mean, x->progress_min,
            x->progress_max, x->progress_matches, fmt_plural(x->progress_matches));
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
    if (v.oversubscribed || v.harmless)
        fprintf(f, "  Verdict:              %s\n", v.oversub);
    else if (isfinite(in.run_queue_wait) && in.ranks > 1)
        fprintf(f, "  Verdict:              not oversubscribed: %s, run-queue wait %.1f%% of "
                "thread time (at most %.0f%%)\n", v.count, 100 * in.run_queue_wait,
                100 * CTR_OVERSUB_WAIT);
    else if (isfinite(in.run_queue_wait))
        fprintf(f, "  Verdict:              not oversubscribed: %d worker%s + %d busy main "
                "thread%s on %d core%s, run-queue wait %.1f%% of thread time (at most %.0f%%)\n",
                in.workers, fmt_plural(in.workers), in.threads, fmt_plural(in.threads), in.cores,
                fmt_plural(in.cores), 100 * in.run_queue_wait, 100 * CTR_OVERSUB_WAIT);
    else
        fprintf(f, "  Verdict:              n/a: no run-queue figures (schedstat missing or "
                "under %.1f s of thread time)\n", CTR_OVERSUB_MIN_WALL);
}

static const char *const role_tags[PROC_ROLES] = {
    [PROC_ROLE_MAIN] = "main", [PROC_ROLE_WORKER] = "worker", [PROC_ROLE_OTHER] = "other",
    [PROC_ROLE_RANK] = "rank",
};

/* One counters block per process role, from the record's counters and
 * role rows (an older record without them: its counters, no rates). */
static void print_roles(FILE *f, const RunRecord *r)
{
    CounterReading cr[CTR_MAX_EVENTS];
    char title[96];

    if (r->exec.runs > 1)
        fprintf(f, "\n Counters summed over the %d measured runs (the scheduler's shares and "
                "the processes: the first run's):\n", r->exec.runs);
    for (int role = 0; role < PROC_ROLES; role++) {
        const RecordExecRole *ro = role_of(r, role);
        int n = summary_readings(r->exec_counters, r->n_exec_counters, role, cr, CTR_MAX_EVENTS);
        if (role == PROC_ROLE_RANK && (ro ? !ro->procs : !n))
            continue; /* not a data-parallel job: as before there were ranks */
        fputc('\n', f);
        if (ro ? !ro->procs : !n) {
            fprintf(f, " Counters, %s: none ran\n", proctree_role_name((ProcRole)role));
            continue;
        }
        if (ro)
            snprintf(title, sizeof title, "%s (%d process%s)", proctree_role_name((ProcRole)role),
                     ro->procs, ro->procs == 1 ? "" : "es");
        else
            snprintf(title, sizeof title, "%s", proctree_role_name((ProcRole)role));
        counters_fmt_block(f, title, cr, n, ro ? ro->wall * 1e9 : 0.0, ro ? &ro->sched : NULL);
    }
}

static void print_procs(FILE *f, const RunRecord *r)
{
    int seen = 0;

    if (!r->n_exec_procs)
        return;
    for (size_t i = 0; i < r->n_exec_roles; i++)
        seen += r->exec_roles[i].procs;
    fprintf(f, "\n Processes:\n  %8s %8s  %-7s %-16s %7s %9s %6s %9s %10s %7s\n", "PID", "PPID",
            "ROLE", "COMMAND", "THREADS", "CPU s", "CPUs", "WALL s", "MINFLT", "RSS MiB");
    for (size_t k = 0; k < r->n_exec_procs; k++) {
        const RecordProc *p = &r->exec_procs[k];
        fprintf(f, "  %8d %8d  %-7s %-16s %7d %9.2f %6.2f %9.2f %10llu %7.1f\n", p->pid, p->ppid,
                p->role >= 0 && p->role < PROC_ROLES ? role_tags[p->role] : "?", p->comm,
                p->threads, p->cpu, p->cpu_util, p->wall, (unsigned long long)p->minflt,
                (double)p->hwm_kib / 1024.0);
    }
    if (seen > (int)r->n_exec_procs)
        fprintf(f, "  ... and %d more\n", seen - (int)r->n_exec_procs);
}

void exec_summary_print(FILE *f, const RunRecord *r)
{
    const RecordExec *x = &r->exec;
    VerdictInput vi;

    fprintf(f, "\n Performance of cnntop exec: %s:\n", x->command ? x->command : "?");
    print_exit(f, x);
    if (isnan(x->wall))
        fprintf(f, "  Wall time:            n/a: not recorded\n");
    else
        fprintf(f, "  Wall time:            %.3f s\n", x->wall);
    print_training(f, r);
    print_rejected(f, x);
    print_progress(f, x);
    print_tree(f, r);
    record_verdict_input(r, &vi);
    exec_verdict_print(f, &vi);
    print_roles(f, r);
    print_procs(f, r);
    exec_layers_print(f, r);
}

/*
 * fill.c: the record of a `cnntop exec` run (cnntop/exec.h), in the
 * schema `cnntop report` reads (cnntop/record.h): the command profiled,
 * how it ended, its wall time, peak RSS, the counters and scheduler
 * figures per process role, each process's row, what --progress read,
 * and the Python hook's window when it reported: everything exec's
 * summary prints, which reads the record alone.  What
 * belongs to cnntop's own training (config, data, train) does not apply
 * and is written as null (have_train 0), never as defaults or zeros.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/exec.h"
#include "cnntop/figures.h"
#include "cnntop/machine.h"
#include "exec/model.h"
#include "util/err.h"

/* The tree's counters, role by role, into r->exec_counters. */
static int fill_counters(RunRecord *r, ProcTree *t)
{
    CounterReading cr[CTR_MAX_EVENTS];

    for (int role = 0; role < PROC_ROLES; role++) {
        if (!proctree_role_procs(t, (ProcRole)role))
            continue;
        int n = proctree_read(t, (ProcRole)role, cr, CTR_MAX_EVENTS);
        for (int i = 0; i < n; i++) {
            RecordCounter c;
            record_counter_from(&c, &cr[i], role);
            if (record_add_exec_counter(r, &c) != 0)
                return -CN_ENOMEM;
        }
    }
    return 0;
}

/* Each role's processes and scheduler figures, and each process's row
 * with the sums over them. */
static int fill_tree(RunRecord *r, ProcTree *t)
{
    ProcInfo *p = malloc(PROC_MAX_PROCS * sizeof *p); /* 512 rows: not on the stack */
    int n = p ? proctree_procs(t, p, PROC_MAX_PROCS) : 0, rc = p ? 0 : -CN_ENOMEM;

    for (int role = 0; role < PROC_ROLES; role++) {
        RecordExecRole ro = {.role = role, .procs = proctree_role_procs(t, (ProcRole)role),
                             .wall = proctree_role_wall_ns(t, (ProcRole)role) / 1e9};
        proctree_sched(t, (ProcRole)role, &ro.sched);
        if (rc == 0 && record_add_exec_role(r, &ro) != 0)
            rc = -CN_ENOMEM;
    }
    r->exec.cpu = 0.0;
    r->exec.minflt = r->exec.majflt = 0;
    for (int k = 0; k < n && k < PROC_MAX_PROCS && rc == 0; k++) {
        RecordProc q = {.pid = p[k].pid, .ppid = p[k].ppid, .role = p[k].role,
                        .threads = p[k].threads, .cpu = p[k].cpu, .cpu_util = p[k].cpu_util,
                        .wall = p[k].wall, .minflt = p[k].minflt, .majflt = p[k].majflt,
                        .hwm_kib = p[k].hwm_kib};
        snprintf(q.comm, sizeof q.comm, "%s", p[k].comm);
        r->exec.cpu += q.cpu;
        r->exec.minflt += (long)q.minflt;
        r->exec.majflt += (long)q.majflt;
        if (record_add_exec_proc(r, &q) != 0)
            rc = -CN_ENOMEM;
    }
    free(p);
    r->exec.dropped = proctree_dropped(t, r->exec.dropped_why, sizeof r->exec.dropped_why);
    return rc;
}

/* What --progress read from the output; unknown without --progress. */
static int fill_progress(RunRecord *r, const ExecProgress *p)
{
    if (!p)
        return 0;
    r->exec.progress_matches = p->matches;
    if (p->matches) {
        r->exec.progress_last = p->last;
        r->exec.progress_mean = p->sum / (double)p->matches;
        r->exec.progress_min = p->min;
        r->exec.progress_max = p->max;
    }
    return record_set_exec_progress(r, p->regex ? p->regex : "");
}

/* What the hook said: its DataLoader figures over its window, torch's
 * threads and the loader's workers, and the first line it rejected; all
 * stay unknown (NAN, -1, "") when it said nothing. */
static void fill_hook(RunRecord *r, const HookFeed *h)
{
    HookFigures fig;
    RecordExec *x = &r->exec;

    if (h) {
        x->hook_rejected = h->bad;
        snprintf(x->hook_why, sizeof x->hook_why, "%s", h->bad ? h->why : "");
    }
    if (h && h->torch[0]) /* a hello's, or a rank's */
        snprintf(x->torch, sizeof x->torch, "%s", h->torch);
    if (h && h->error_type[0]) /* a launcher's too, before any hello */
        snprintf(x->py_error, sizeof x->py_error, "%s at %s", h->error_type, h->error_at);
    if (!h || !h->hello)
        return;
    r->threads_used = h->main.threads;
    x->loader_workers = h->main.loader_workers;
    x->batches = h->main.batches;
    hookfeed_figures(h, &fig);
    if (fig.ok) {
        x->images_per_s = fig.images_per_s;
        x->data_wait_share = fig.data_wait_share;
        x->images = fig.images;
        x->window = fig.window;
        x->wait = h->main.wait;
        x->step_s = fig.step_s;
        x->first_wait = fig.first_wait;
    }
}

/* The hook's i-th rank in rank order (they join in any order). */
static const HookRank *rank_at(const HookFeed *h, int i)
{
    const HookRank *k = NULL;

    for (int j = 0; j < h->n_ranks; j++) {
        int below = 0; /* ranks lower than j's */
        for (int m = 0; m < h->n_ranks; m++)
            below += h->ranks[m].rank < h->ranks[j].rank;
        if (below == i)
            k = &h->ranks[j];
    }
    return k;
}

/* The ranks of a data-parallel job, each as the hook saw it; the job's
 * images/s their sum (when every rank has a rate), its data wait their
 * mean, unless the main process had a DataLoader of its own
 * (hookfeed_job_figures(), as the dashboard shows them live). */
static int fill_ranks(RunRecord *r, const HookFeed *h)
{
    RecordExec *x = &r->exec;
    HookFigures job;

    for (int i = 0; h && i < h->n_ranks; i++) {
        const HookRank *k = rank_at(h, i);
        HookFigures fig;
        hookfeed_stream_figures(&k->s, &fig);
        RecordExecRank q = {.rank = k->rank, .world = k->world, .pid = k->pid,
                            .threads = k->s.threads, .loader_workers = k->s.loader_workers,
                            .batches = k->s.batches, .images = fig.ok ? fig.images : NAN,
                            .window = fig.ok ? fig.window : NAN,
                            .images_per_s = fig.ok ? fig.images_per_s : NAN,
                            .data_wait_share = fig.ok ? fig.data_wait_share : NAN,
                            .coll = k->s.coll};
        if (record_add_exec_rank(r, &q) != 0)
            return -CN_ENOMEM;
    }
    if (!h || !r->n_exec_ranks || h->main.batches > 0)
        return 0;
    hookfeed_job_figures(h, &job);
    x->images_per_s = job.ok ? job.images_per_s : NAN;
    x->data_wait_share = job.ok ? job.data_wait_share : NAN;
    x->batches = job.batches;
    return 0;
}

int exec_record_fill(RunRecord *r, ProcTree *t, const ExecResult *res, int argc, char **argv)
{
    const HookFeed *h = res->hook ? &res->hook->feed : NULL;
    HookFigures fig = {0};
    VerdictInput vi;

    r->have_train = 0;
    r->threads_used = -1;
    machine_info(&r->machine);
    if (record_set_command(r, argc, argv) != 0 || record_set_exec_command(r, res->argv) != 0)
        return -CN_ENOMEM;
    r->exec.status = res->signal ? -1 : res->status;
    r->exec.signal = res->signal;
    r->exec.wall = res->wall;
    r->exit_code = res->signal ? 128 + res->signal : res->status;
    r->peak_rss_kib = proctree_peak_rss_kib(t) > 0 ? proctree_peak_rss_kib(t) : -1;
    fill_hook(r, h);
    if (h && exec_model_fill(r, &h->model) != 0)
        return -CN_ENOMEM;
    if (h)
        hookfeed_figures(h, &fig);
    exec_verdict_of(t, &fig, &vi);
    r->exec.worker_procs = vi.workers;
    r->exec.busy_threads = vi.threads;
    r->run_queue_wait = vi.run_queue_wait;
    if (fill_tree(r, t) != 0 || fill_progress(r, res->progress) != 0 || fill_ranks(r, h) != 0)
        return -CN_ENOMEM;
    return fill_counters(r, t);
}

/* The running mean of a figure over k + 1 runs, NAN once a run lacked it. */
static double mean_in(double mean, int k, double x)
{
    return (mean * k + x) / (k + 1);
}

/* c (one run's) summed into the same counter of into. */
static void counter_sum(RecordCounter *into, const RecordCounter *c, int k)
{
    if (into->status == RECORD_CTR_OK && c->status != RECORD_CTR_OK) {
        into->status = c->status;
        into->value = NAN;
        snprintf(into->reason, sizeof into->reason, "%.100s (in one of the runs)", c->reason);
    }
    if (into->status == RECORD_CTR_OK)
        into->value += c->value;
    into->scaled = mean_in(into->scaled, k, c->scaled);
}

/* The summary's figures of run added to into's (k runs so far): the
 * sums summed, the hook's window summed, the step and the first wait
 * averaged, each role's processes, time and context switches summed (its
 * other scheduler figures and the process table stay the first run's),
 * --progress's figures over all the matches. */
static void merge_summary(RunRecord *into, const RunRecord *run, int k)
{
    RecordExec *x = &into->exec;
    const RecordExec *y = &run->exec;

    x->cpu += y->cpu;
    x->minflt = x->minflt >= 0 && y->minflt >= 0 ? x->minflt + y->minflt : -1;
    x->majflt = x->majflt >= 0 && y->majflt >= 0 ? x->majflt + y->majflt : -1;
    x->images += y->images;
    x->window += y->window;
    x->wait += y->wait;
    x->step_s = mean_in(x->step_s, k, y->step_s);
    x->first_wait = mean_in(x->first_wait, k, y->first_wait);
    x->dropped = x->dropped >= 0 && y->dropped >= 0 ? x->dropped + y->dropped : -1;
    if (!x->hook_why[0])
        snprintf(x->hook_why, sizeof x->hook_why, "%s", y->hook_why);
    if (!x->py_error[0])
        snprintf(x->py_error, sizeof x->py_error, "%s", y->py_error);
    for (size_t i = 0; i < into->n_exec_roles && i < run->n_exec_roles; i++) {
        RecordExecRole *a = &into->exec_roles[i];
        const RecordExecRole *b = &run->exec_roles[i];
        a->procs += b->procs;
        a->wall += b->wall;
        a->sched.threads += b->sched.threads;
        a->sched.vol_cs += b->sched.vol_cs;
        a->sched.invol_cs += b->sched.invol_cs;
    }
    if (x->progress_matches >= 0 && y->progress_matches > 0) {
        long m = x->progress_matches + y->progress_matches;
        x->progress_mean = x->progress_matches
            ? (x->progress_mean * x->progress_matches + y->progress_mean * y->progress_matches) / m
            : y->progress_mean;
        x->progress_min = x->progress_matches ? fmin(x->progress_min, y->progress_min)
                                              : y->progress_min;
        x->progress_max = x->progress_matches ? fmax(x->progress_max, y->progress_max)
                                              : y->progress_max;
        x->progress_last = y->progress_last;
        x->progress_matches = m;
    }
}

/* run's ranks added to into's (k runs so far), rank by rank: images/s and
 * data wait averaged, batches, images, window and collectives summed, as
 * for the job; a rank into lacked is added as it is. */
static int merge_ranks(RunRecord *into, const RunRecord *run, int k)
{
    for (size_t j = 0; j < run->n_exec_ranks; j++) {
        const RecordExecRank *q = &run->exec_ranks[j];
        size_t i = 0;
        while (i < into->n_exec_ranks && into->exec_ranks[i].rank != q->rank)
            i++;
        if (i == into->n_exec_ranks) {
            if (record_add_exec_rank(into, q) != 0)
                return -CN_ENOMEM;
            continue;
        }
        RecordExecRank *p = &into->exec_ranks[i];
        p->images_per_s = mean_in(p->images_per_s, k, q->images_per_s);
        p->data_wait_share = mean_in(p->data_wait_share, k, q->data_wait_share);
        p->batches += q->batches;
        p->images += q->images;
        p->window += q->window;
        p->coll += q->coll;
    }
    return 0;
}

/* The mean of a and b weighted by na and nb; the one that has a weight
 * when the other has none. */
static double weighted(double a, double na, double b, double nb)
{
    return na > 0 && nb > 0 ? (a * na + b * nb) / (na + nb) : na > 0 ? a : b;
}

/* run's layer window added to into's: the steps and each row's seconds,
 * calls and FLOPs summed (its rate of the sums), the step times weighted
 * by the steps they cover; a row into lacked is added as it is.  A run
 * without a window adds nothing; into without one takes run's. */
static int merge_model(RunRecord *into, const RunRecord *run)
{
    RecordModel *a = &into->model;
    const RecordModel *b = &run->model;

    if (!run->have_model)
        return 0;
    if (!into->have_model) {
        into->n_layers = 0;
        into->have_model = 1;
        *a = (RecordModel){.steps = 0, .step_in = NAN, .step_out = NAN, .steps_out = -1,
                           .first = b->first};
        into->flops_per_image = run->flops_per_image;
    }
    a->step_in = weighted(a->step_in, (double)a->steps, b->step_in, (double)b->steps);
    a->step_out = weighted(a->step_out, (double)a->steps_out, b->step_out, (double)b->steps_out);
    a->steps += b->steps;
    a->steps_out = a->steps_out >= 0 || b->steps_out >= 0
                       ? (a->steps_out > 0 ? a->steps_out : 0) + (b->steps_out > 0 ? b->steps_out : 0)
                       : -1;
    for (size_t j = 0; j < run->n_layers; j++) {
        const RecordLayer *l = &run->layers[j];
        size_t i = 0;
        while (i < into->n_layers && strcmp(into->layers[i].name, l->name))
            i++;
        if (i == into->n_layers) {
            LayerTime lt = {.seconds = l->seconds, .calls = l->calls, .flops = l->flops};
            snprintf(lt.name, sizeof lt.name, "%s", l->name);
            if (record_add_layer(into, &lt) != 0)
                return -CN_ENOMEM;
            snprintf(into->layers[i].kind, sizeof into->layers[i].kind, "%s", l->kind);
            continue;
        }
        RecordLayer *m = &into->layers[i];
        m->seconds += l->seconds;
        m->calls += l->calls;
        m->flops += l->flops;
        m->gflops = figures_rate_gflops(m->flops, m->seconds);
    }
    return 0;
}

int exec_record_merge(RunRecord *into, const RunRecord *run)
{
    RecordExec *x = &into->exec;
    const RecordExec *y = &run->exec;
    int k = x->runs > 0 ? x->runs : 1;

    for (size_t j = 0; j < run->n_exec_counters; j++) {
        const RecordCounter *c = &run->exec_counters[j];
        size_t i = 0;
        while (i < into->n_exec_counters && (into->exec_counters[i].role != c->role ||
                                             strcmp(into->exec_counters[i].name, c->name)))
            i++;
        if (i < into->n_exec_counters)
            counter_sum(&into->exec_counters[i], c, k);
        else if (record_add_exec_counter(into, c) != 0)
            return -CN_ENOMEM;
    }
    x->wall = mean_in(x->wall, k, y->wall);
    x->images_per_s = mean_in(x->images_per_s, k, y->images_per_s);
    x->data_wait_share = mean_in(x->data_wait_share, k, y->data_wait_share);
    into->run_queue_wait = mean_in(into->run_queue_wait, k, run->run_queue_wait);
    x->batches = x->batches >= 0 && y->batches >= 0 ? x->batches + y->batches : -1;
    x->hook_rejected = x->hook_rejected >= 0 && y->hook_rejected >= 0
                           ? x->hook_rejected + y->hook_rejected : -1;
    x->status = y->status;
    x->signal = y->signal;
    into->exit_code = run->exit_code;
    x->worker_procs = x->worker_procs > y->worker_procs ? x->worker_procs : y->worker_procs;
    x->busy_threads = x->busy_threads > y->busy_threads ? x->busy_threads : y->busy_threads;
    if (run->peak_rss_kib > into->peak_rss_kib)
        into->peak_rss_kib = run->peak_rss_kib;
    merge_summary(into, run, k);
    if (merge_ranks(into, run, k) != 0 || merge_model(into, run) != 0)
        return -CN_ENOMEM;
    x->runs = k + 1;
    return 0;
}

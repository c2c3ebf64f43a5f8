/*
 * fill.c: the record of a `cnntop exec` run (cnntop/exec.h), in the
 * schema `cnntop report` reads (cnntop/record.h): the command profiled,
 * how it ended, its wall time, peak RSS, the counters per process role,
 * and the Python hook's images/s and data wait when it reported.  What
 * belongs to cnntop's own training (config, data, train) does not apply
 * and is written as null (have_train 0), never as defaults or zeros.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/exec.h"
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

/* What the hook said: its DataLoader figures, torch's threads and the
 * loader's workers; all stay unknown (NAN, -1, "") when it said nothing. */
static void fill_hook(RunRecord *r, const HookFeed *h)
{
    HookFigures fig;

    if (h)
        r->exec.hook_rejected = h->bad;
    if (!h || !h->hello)
        return;
    snprintf(r->exec.torch, sizeof r->exec.torch, "%s", h->torch);
    r->threads_used = h->threads;
    r->exec.loader_workers = h->loader_workers;
    hookfeed_figures(h, &fig);
    if (fig.ok) {
        r->exec.images_per_s = fig.images_per_s;
        r->exec.data_wait_share = fig.data_wait_share;
        r->exec.batches = fig.batches;
    }
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
    x->runs = k + 1;
    return 0;
}

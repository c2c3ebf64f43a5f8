/*
 * record_fill.c: a RunRecord from an engine's finished run (record.h).
 *
 * The one way a record is built from a run: record_train()
 * (record_train.c), which `cnntop run`, `cnntop sweep` and the dashboard's
 * run thread all use, calls record_fill(), so that a file exported from the
 * dashboard holds what `cnntop run --export` holds for the same
 * configuration.  Only engine.h and counters.h figures go in; the repeats
 * and the peak record_train() adds, the command line the front end.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "cnntop/counters.h"
#include "cnntop/record.h"

#define FILL_SAMPLES 512 /* samples copied per engine_samples() call */

static int fill_layers(RunRecord *r, const Engine *e)
{
    LayerTime lt[CN_MAX_LAYERS];
    int rc = 0, n = engine_profile(e, lt, CN_MAX_LAYERS);

    for (int i = 0; i < n && rc == 0; i++) {
        rc = record_add_layer(r, &lt[i]);
        if (rc == 0) {
            r->layers[r->n_layers - 1].ipc = lt[i].ipc;
            r->layers[r->n_layers - 1].miss_rate = lt[i].miss_rate;
        }
    }
    return rc;
}

/* The interval samples, each with the epoch it fell in. */
static int fill_samples(RunRecord *r, Engine *e, const EngineSnapshot *snap)
{
    Sample *s = malloc(FILL_SAMPLES * sizeof *s);
    long n_train = snap->train_images;
    int rc = s ? 0 : -CN_ENOMEM;

    for (long from = 0, total = snap->samples_total; rc == 0 && from < total;) {
        int k = engine_samples(e, s, FILL_SAMPLES, from);
        if (k <= 0)
            break;
        for (int i = 0; i < k && rc == 0; i++)
            rc = record_add_sample(r, &s[i], n_train ? (int)(s[i].images / n_train) : -1, s[i].ipc,
                                   s[i].miss_rate);
        from += k;
    }
    free(s);
    return rc;
}

/* The evaluations made during training, the epochs they ended, and the
 * time to r->target_accuracy when one is set. */
static int fill_evals(RunRecord *r, Engine *e)
{
    EvalPoint *ev = malloc(CN_MAX_EVALS * sizeof *ev);
    int rc = ev ? 0 : -CN_ENOMEM, n = ev ? engine_evals(e, ev, CN_MAX_EVALS) : 0;

    for (int i = 0; i < n && rc == 0; i++) {
        RecordEval re = {.step = ev[i].step, .epoch = ev[i].epoch, .epoch_end = ev[i].epoch_end,
                         .wall = ev[i].wall, .accuracy = ev[i].r.accuracy, .loss = ev[i].r.loss};
        rc = record_add_eval(r, &re);
        if (r->target_accuracy > 0 && isnan(r->time_to_target) &&
            ev[i].r.accuracy >= r->target_accuracy)
            r->time_to_target = ev[i].wall;
    }
    for (int i = 0; i < n && rc == 0; i++)
        if (ev[i].epoch_end) {
            RecordEpoch re = {.epoch = ev[i].epoch, .loss = ev[i].train_loss,
                              .accuracy = ev[i].r.accuracy, .wall = ev[i].wall};
            rc = record_add_epoch(r, &re);
        }
    free(ev);
    return rc;
}

/* IPC and the miss rate of the compute threads over the run, or why not. */
static void fill_ratios(RunRecord *r, const CounterReading *cr, int n)
{
    CounterDerived d;

    counters_derive(cr, n, 0.0, &d);
    r->ipc = counters_figure_value(&d.ipc);
    r->miss_rate = counters_figure_value(&d.miss_rate);
    snprintf(r->ipc_na, sizeof r->ipc_na, "%s", d.ipc.ok ? "" : d.ipc.why);
    snprintf(r->miss_rate_na, sizeof r->miss_rate_na, "%s", d.miss_rate.ok ? "" : d.miss_rate.why);
}

void record_counter_from(RecordCounter *c, const CounterReading *cr, int role)
{
    memset(c, 0, sizeof *c);
    c->role = (ThreadRole)role;
    snprintf(c->name, sizeof c->name, "%.63s", cr->name);
    snprintf(c->unit, sizeof c->unit, "%.15s", cr->unit ? cr->unit : "");
    c->status = cr->status == CTR_OK            ? RECORD_CTR_OK
                : cr->status == CTR_NOT_COUNTED ? RECORD_CTR_NOT_COUNTED
                                                : RECORD_CTR_UNAVAILABLE;
    c->value = cr->status == CTR_OK ? cr->value : NAN;
    c->scaled = cr->status == CTR_OK ? cr->fraction : NAN;
    snprintf(c->reason, sizeof c->reason, "%s", cr->reason);
    c->ctr_status = cr->status;
    c->kind = cr->kind;
}

/* The set's counters by role, as counters_read() gives them now, and the
 * compute threads' ratios. */
static int fill_counters(RunRecord *r, CounterSet *cs)
{
    CounterReading cr[CTR_MAX_EVENTS];
    int rc = 0;

    for (int role = 0; role < CN_ROLES && rc == 0; role++) {
        int n = counters_read(cs, (ThreadRole)role, cr, CTR_MAX_EVENTS);
        for (int i = 0; i < n && rc == 0; i++) {
            RecordCounter c;
            record_counter_from(&c, &cr[i], role);
            rc = record_add_counter(r, &c);
        }
        if (role == CN_ROLE_TRAIN)
            fill_ratios(r, cr, n);
        RecordRole ro = {.role = (ThreadRole)role};
        counters_sched(cs, (ThreadRole)role, &ro.sched);
        ro.wall = counters_role_wall_ns(cs, (ThreadRole)role) / 1e9;
        if (rc == 0)
            rc = record_add_role(r, &ro);
    }
    return rc;
}

int record_fill(RunRecord *r, Engine *e, CounterSet *cs, const EvalResult *eval)
{
    EngineSnapshot *snap = malloc(sizeof *snap);
    int rc;

    if (!snap)
        return -CN_ENOMEM;
    engine_snapshot(e, snap);
    rc = record_set_config(r, &snap->cfg);
    if (rc == 0)
        rc = record_set_data_dir(r, snap->data_dir);
    r->train_images = snap->train_images;
    r->test_images = snap->test_images;
    r->threads_used = snap->threads;
    snprintf(r->gemm_path, sizeof r->gemm_path, "%s", machine_gemm_path(snap->cfg.gemm));
    machine_info(&r->machine);
    r->flops_per_image = engine_flops_per_image();
    r->flops_executed_per_image = engine_flops_executed_per_image();
    r->train = snap->train;
    r->loader_samples_per_s = snap->live.load_samples_per_s > 0 ? snap->live.load_samples_per_s
                                                                : NAN;
    r->have_eval = eval != NULL;
    if (eval)
        r->eval = *eval;
    r->peak_rss_kib = machine_peak_rss_kib();
    if (rc == 0)
        rc = fill_layers(r, e);
    for (int i = 0; i < snap->nsegments && rc == 0; i++)
        rc = record_add_segment(r, &snap->seg[i]);
    r->have_dist = snap->train.dist.ranks > 0;
    for (int i = 0; i < snap->train.dist.nrank && rc == 0; i++)
        rc = record_add_dist_rank(r, &snap->train.dist.rank[i]);
    if (rc == 0)
        rc = fill_samples(r, e, snap);
    free(snap);
    if (rc == 0)
        rc = fill_evals(r, e);
    if (rc == 0 && cs) {
        rc = fill_counters(r, cs);
        r->run_queue_wait = counters_wait_share(cs);
    }
    return rc;
}

/*
 * runner.c: train one configuration R times into a RunRecord (runner.h).
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner.h"
#include "signals.h"

static Engine *volatile sig_engine;
static volatile sig_atomic_t sig_caught;

static void on_signal(int sig)
{
    if (!sig_caught) /* the first signal says why the run stopped */
        sig_caught = sig;
    if (sig_engine)
        engine_stop(sig_engine);
}

void runner_signals(void)
{
    signals_install(on_signal);
}

int runner_signal(void)
{
    return sig_caught;
}

typedef struct ProgressState {
    int tty;
    double last;        /* elapsed seconds at the last line */
    int shown;          /* a live line is on screen */
    const char *prefix;
    char what[48];      /* "run 2/5", "warm-up 1/3" or "" */
    Engine *e;
} ProgressState;

static void format_eta(char *buf, size_t len, double s)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

static int on_progress(const Progress *p, void *ud)
{
    ProgressState *ps = ud;
    double every = ps->tty ? 0.1 : 5.0;
    char eta[32];

    if (sig_caught) /* a signal before engine_train() cleared its stop flag */
        return 1;
    if (p->elapsed - ps->last < every && p->step != p->steps && p->step != 1)
        return 0;
    ps->last = p->elapsed;
    double left = p->step ? p->elapsed / (double)p->step * (double)(p->steps - p->step) : 0.0;
    format_eta(eta, sizeof eta, left);
    fprintf(stderr, "%s%s%s%sepoch %d/%d  step %ld/%ld  %.0f img/s  loss %.4f  ETA %s%s",
            ps->tty ? "\r\033[K" : "", ps->prefix, ps->what, ps->what[0] ? "  " : "",
            p->epoch + 1, p->epochs, p->step, p->steps, p->images_per_s, p->epoch_loss, eta,
            ps->tty ? "" : "\n");
    ps->shown = ps->tty;
    return 0;
}

/* Copies the engine's figures of its last run into the record. */
/* Per-layer IPC and miss rate from the trainer's counts in each op. */
static void layer_ratios(RunRecord *rec, const LayerTime *lt, CounterSet *cs)
{
    RecordLayer *l = &rec->layers[rec->n_layers - 1];
    double v[CTR_KIND_PAGE_FAULTS + 1];

    for (int k = 0; k <= CTR_KIND_PAGE_FAULTS; k++)
        v[k] = NAN;
    for (int i = 0; cs && i < lt->ncounts; i++) {
        CounterEventInfo ei;
        if (counters_event_info(cs, i, &ei) == 0 && ei.kind > 0 && ei.kind <= CTR_KIND_PAGE_FAULTS)
            v[ei.kind] = lt->counts[i];
    }
    if (v[CTR_KIND_CYCLES] > 0 && !isnan(v[CTR_KIND_INSTRUCTIONS]))
        l->ipc = v[CTR_KIND_INSTRUCTIONS] / v[CTR_KIND_CYCLES];
    if (v[CTR_KIND_CACHE_REFS] > 0 && !isnan(v[CTR_KIND_CACHE_MISSES]))
        l->miss_rate = v[CTR_KIND_CACHE_MISSES] / v[CTR_KIND_CACHE_REFS];
}

static void fill_record(RunRecord *rec, Engine *e, const TrainStats *st, CounterSet *cs)
{
    RunConfig cfg;
    LayerTime lt[64];
    Segment seg[CN_MAX_SEGMENTS];
    EvalPoint *ev = malloc(CN_MAX_EVALS * sizeof *ev);
    Sample s[512];
    LiveStats ls;

    engine_config(e, &cfg);
    record_set_config(rec, &cfg);
    record_set_data_dir(rec, engine_data_dir(e));
    rec->train_images = engine_train_images(e);
    rec->test_images = engine_test_images(e);
    rec->threads_used = engine_threads(e);
    engine_machine_info(&rec->machine);
    rec->flops_per_image = engine_flops_per_image();
    rec->train = *st;
    engine_live(e, &ls);
    rec->loader_samples_per_s = ls.load_samples_per_s > 0 ? ls.load_samples_per_s : NAN;
    int n = engine_profile(e, lt, 64);
    for (int i = 0; i < n; i++)
        if (record_add_layer(rec, &lt[i], lt[i].flops > 0 ? lt[i].flops : NAN) == 0)
            layer_ratios(rec, &lt[i], cs);
    n = engine_segments(e, seg, CN_MAX_SEGMENTS);
    for (int i = 0; i < n; i++)
        record_add_segment(rec, &seg[i]);
    long n_train = engine_train_images(e);
    for (long from = 0, total = engine_samples_total(e); from < total;) {
        int k = engine_samples(e, s, 512, from);
        if (k <= 0)
            break;
        for (int i = 0; i < k; i++)
            record_add_sample(rec, &s[i], n_train ? (int)(s[i].images / n_train) : -1, s[i].ipc,
                              s[i].miss_rate);
        from += k;
    }
    n = ev ? engine_evals(e, ev, CN_MAX_EVALS) : 0;
    for (int i = 0; i < n; i++) {
        RecordEval re = {.step = ev[i].step, .epoch = ev[i].epoch, .epoch_end = ev[i].epoch_end,
                         .wall = ev[i].wall, .accuracy = ev[i].r.accuracy, .loss = ev[i].r.loss};
        record_add_eval(rec, &re);
        if (rec->target_accuracy > 0 && isnan(rec->time_to_target) &&
            ev[i].r.accuracy >= rec->target_accuracy)
            rec->time_to_target = ev[i].wall;
    }
    for (int i = 0; i < n; i++)
        if (ev[i].epoch_end) {
            RecordEpoch re = {.epoch = ev[i].epoch, .loss = ev[i].train_loss,
                              .accuracy = ev[i].r.accuracy, .wall = ev[i].wall};
            record_add_epoch(rec, &re);
        }
    free(ev);
}

/* The counters over the measured repeats, into the record. */
static void fill_counters(RunRecord *rec, CounterSet *cs)
{
    CounterReading r[CTR_MAX_EVENTS];

    for (int role = 0; role < CN_ROLES; role++) {
        int n = counters_read(cs, (ThreadRole)role, r, CTR_MAX_EVENTS);
        for (int i = 0; i < n; i++) {
            RecordCounter c = {.role = (ThreadRole)role};
            snprintf(c.name, sizeof c.name, "%.63s", r[i].name);
            snprintf(c.unit, sizeof c.unit, "%.15s", r[i].unit ? r[i].unit : "");
            c.status = r[i].status == CTR_OK ? RECORD_CTR_OK
                       : r[i].status == CTR_NOT_COUNTED ? RECORD_CTR_NOT_COUNTED
                                                        : RECORD_CTR_UNAVAILABLE;
            c.value = r[i].status == CTR_OK ? r[i].value : NAN;
            c.scaled = r[i].status == CTR_OK ? r[i].fraction : NAN;
            snprintf(c.reason, sizeof c.reason, "%.127s", r[i].reason);
            record_add_counter(rec, &c);
        }
    }
}

void runner_set_peak(RunRecord *rec, const Calibration *c)
{
    /* the SGEMM rate measured at the nearest batch size's shapes */
    int k = 0;
    for (int i = 1; i < CALIB_NBATCH; i++)
        if (abs(c->batch[i] - rec->config.batch) < abs(c->batch[k] - rec->config.batch))
            k = i;
    rec->peak_gflops = c->model_gflops[k];
}

int runner_run(const RunnerOpts *ro, RunRecord *rec, Engine **last, CounterSet **counters)
{
    char err[512];
    CounterSet *cs = NULL;
    int total = ro->warmup + ro->runs, rc = 0;

    if (last)
        *last = NULL;
    if (counters)
        *counters = NULL;
    runner_signals();
    if (ro->target > 0)
        rec->target_accuracy = ro->target;
    if (counters_new(&cs, ro->events, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: -e: %s\n", err);
        return 2;
    }
    for (int r = 0; r < total && !sig_caught && rc == 0; r++) {
        int measured = r >= ro->warmup;
        RunConfig cfg = ro->cfg;
        Engine *e;
        ProgressState ps = {.tty = isatty(2), .prefix = ro->prefix ? ro->prefix : "",
                           };
        if (ro->vary_seed)
            cfg.seed += (uint64_t)r;
        cfg.eval_epochs = 1;
        if (total > 1)
            snprintf(ps.what, sizeof ps.what, "%s %d/%d", measured ? "run" : "warm-up",
                     measured ? r - ro->warmup + 1 : r + 1, measured ? ro->runs : ro->warmup);
        if (engine_new(&e, &cfg, err, sizeof err) != 0 ||
            (ro->load && engine_load(e, ro->load, err, sizeof err) != 0)) {
            fprintf(stderr, "cnntop: %s\n", err);
            engine_free(e);
            rc = 1;
            break;
        }
        int is_last = r == total - 1;
        if (is_last && ro->trace && engine_set_trace(e, ro->trace, err, sizeof err) != 0) {
            fprintf(stderr, "cnntop: --trace: %s\n", err);
            engine_free(e);
            rc = 1;
            break;
        }
        if (measured)
            engine_set_counters(e, cs);
        sig_engine = e;
        int trc = sig_caught ? 0 : engine_train(e, on_progress, &ps, err, sizeof err);
        sig_engine = NULL;
        if (ps.shown)
            fputc('\n', stderr);
        TrainStats st;
        engine_stats(e, &st);
        RecordRepeat rep = {.wall = st.wall, .images_per_s = st.images_per_s,
                            .user = st.cpu_user, .system = st.cpu_sys, .accuracy = NAN};
        if (trc != 0) {
            fprintf(stderr, "cnntop: %s\n", err);
            record_set_error(rec, err);
            rc = rep.exit_code = trc == -CN_EDIVERGED ? 3 : 1;
        } else if (!sig_caught && !st.stopped) {
            /* The final accuracy: the evaluation at the last epoch's end
             * when the run ended there, else one now. */
            EvalPoint *evs = malloc(CN_MAX_EVALS * sizeof *evs);
            int k = evs ? engine_evals(e, evs, CN_MAX_EVALS) : 0;
            EvalResult er;
            if (k > 0 && evs[k - 1].step == st.steps) {
                er = evs[k - 1].r;
                rep.accuracy = er.accuracy;
            } else if (engine_evaluate(e, &er, err, sizeof err) == 0)
                rep.accuracy = er.accuracy;
            free(evs);
            if (measured) {
                rec->have_eval = !isnan(rep.accuracy);
                rec->eval = er;
            }
        }
        if (sig_caught) {
            rec->interrupted = 1;
            rep.exit_code = 128 + sig_caught;
        }
        if (measured) {
            if (ro->runs > 1 || ro->warmup > 0)
                record_add_repeat(rec, &rep);
        }
        int keep = measured && (is_last || sig_caught || rc != 0);
        if (keep) {
            fill_record(rec, e, &st, cs);
            /* a run stopped before its first step saves no checkpoint */
            if (trc == 0 && st.steps > 0 && ro->save &&
                engine_save(e, ro->save, err, sizeof err) != 0) {
                fprintf(stderr, "cnntop: %s\n", err);
                record_set_error(rec, err); /* the record says why the exit code is 1 */
                rc = 1;
            }
            if (ro->trace && is_last && st.steps > 0) {
                if (engine_write_trace(e, err, sizeof err) != 0) {
                    fprintf(stderr, "cnntop: %s\n", err);
                    record_set_error(rec, err);
                    rc = 1;
                } else
                    fprintf(stderr, "cnntop: trace written to %s\n", ro->trace);
            }
        }
        if (keep && last) {
            *last = e;
            /* the hook stays: the engine's threads detach when it is freed */
        } else {
            engine_free(e);
        }
        if (keep)
            break;
    }
    rec->peak_rss_kib = engine_peak_rss_kib();
    if (ro->calib)
        runner_set_peak(rec, ro->calib);
    fill_counters(rec, cs);
    if (sig_caught)
        rc = 128 + sig_caught;
    rec->exit_code = rc;
    if (counters && last && *last)
        *counters = cs; /* the caller frees the engine first, then the set */
    else {
        if (last && *last)
            engine_set_counters(*last, NULL);
        counters_free(cs);
    }
    return rc;
}

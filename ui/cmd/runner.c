/*
 * runner.c: train one configuration R times into a RunRecord (runner.h).
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/runner.h"
#include "common/signals.h"

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

static void calib_progress(void *ud, const char *what, double done)
{
    (void)ud;
    fprintf(stderr, "%scnntop: calibrating (first use): %s, %.0f%%%s", isatty(2) ? "\r\033[K" : "",
            what, 100 * done, isatty(2) ? "" : "\n");
}

const Calibration *runner_calibration(int threads, int force, Calibration *c)
{
    char warn[512] = "", err[512];
    CalibOpts co;

    memset(&co, 0, sizeof co);
    co.threads = threads;
    co.progress = calib_progress;
    if (calibrate_get(&co, c, force, warn, sizeof warn, err, sizeof err) != 0) {
        fprintf(stderr, "%scnntop: calibration failed, no sketch on paper: %s\n",
                isatty(2) ? "\r\033[K" : "", err);
        return NULL;
    }
    if (!c->cached && isatty(2))
        fputs("\r\033[K", stderr);
    if (warn[0])
        fprintf(stderr, "cnntop: %s\n", warn);
    return c;
}

void runner_set_peak(RunRecord *rec, const Calibration *c)
{
    record_set_calibration(rec, c);
}

/* Makes repeat r's engine (loaded from --load, tracing when it is the
 * last); prints why not and returns 1. */
static int repeat_open(const RunnerOpts *ro, int r, int is_last, Engine **out)
{
    char err[512];
    RunConfig cfg = ro->cfg;
    Engine *e = NULL;

    *out = NULL;
    if (ro->vary_seed)
        cfg.seed += (uint64_t)r;
    cfg.eval_epochs = 1;
    if (engine_new(&e, &cfg, err, sizeof err) != 0 ||
        (ro->load && engine_load(e, ro->load, err, sizeof err) != 0)) {
        fprintf(stderr, "cnntop: %s\n", err);
        engine_free(e);
        return 1;
    }
    if (is_last && ro->trace && engine_set_trace(e, ro->trace, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: --trace: %s\n", err);
        engine_free(e);
        return 1;
    }
    *out = e;
    return 0;
}

/* What one repeat's training gave. */
typedef struct Repeat {
    RecordRepeat rep;
    TrainStats st;
    EvalResult er;
    int have_er;    /* er holds the final evaluation */
    int trained;    /* engine_train() returned 0 */
    int rc;         /* the exit code it asks for: 0, 1 or 3 */
} Repeat;

/* Trains repeat r (of `total`) and evaluates it, with progress on stderr. */
static void repeat_train(const RunnerOpts *ro, Engine *e, int r, int total, RunRecord *rec,
                         Repeat *out)
{
    char err[512];
    int measured = r >= ro->warmup;
    ProgressState ps = {.tty = isatty(2), .prefix = ro->prefix ? ro->prefix : ""};
    EngineSnapshot snap;

    memset(out, 0, sizeof *out);
    if (total > 1)
        snprintf(ps.what, sizeof ps.what, "%s %d/%d", measured ? "run" : "warm-up",
                 measured ? r - ro->warmup + 1 : r + 1, measured ? ro->runs : ro->warmup);
    sig_engine = e;
    int trc = sig_caught ? 0 : engine_train(e, on_progress, &ps, err, sizeof err);
    sig_engine = NULL;
    if (ps.shown)
        fputc('\n', stderr);
    engine_snapshot(e, &snap);
    out->st = snap.train;
    out->rep = (RecordRepeat){.wall = out->st.wall, .images_per_s = out->st.images_per_s,
                              .user = out->st.cpu_user, .system = out->st.cpu_sys,
                              .accuracy = NAN};
    out->trained = trc == 0;
    if (trc != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        record_set_error(rec, err);
        out->rc = out->rep.exit_code = trc == -CN_EDIVERGED ? 3 : 1;
    } else if (!sig_caught && !out->st.stopped &&
               engine_evaluate_final(e, &out->er, err, sizeof err) == 0) {
        out->have_er = 1;
        out->rep.accuracy = out->er.accuracy;
    }
    if (sig_caught) {
        rec->interrupted = 1;
        out->rep.exit_code = 128 + sig_caught;
    }
}

/* The kept repeat: its record, checkpoint and trace.  Returns 0 or 1. */
static int repeat_keep(const RunnerOpts *ro, Engine *e, CounterSet *cs, const Repeat *rp,
                       int is_last, RunRecord *rec)
{
    char err[512];
    int rc = 0;

    if (record_fill(rec, e, cs, rp->have_er ? &rp->er : NULL) != 0) {
        fprintf(stderr, "cnntop: out of memory building the run record\n");
        rc = 1;
    }
    /* a run stopped before its first step saves no checkpoint */
    if (rp->trained && rp->st.steps > 0 && ro->save &&
        engine_save(e, ro->save, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        record_set_error(rec, err); /* the record says why the exit code is 1 */
        rc = 1;
    }
    if (ro->trace && is_last && rp->st.steps > 0) {
        if (engine_write_trace(e, err, sizeof err) != 0) {
            fprintf(stderr, "cnntop: %s\n", err);
            record_set_error(rec, err);
            rc = 1;
        } else
            fprintf(stderr, "cnntop: trace written to %s\n", ro->trace);
    }
    return rc;
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
        int measured = r >= ro->warmup, is_last = r == total - 1;
        Engine *e;
        Repeat rp;

        if ((rc = repeat_open(ro, r, is_last, &e)) != 0)
            break;
        if (measured)
            engine_set_counters(e, cs);
        repeat_train(ro, e, r, total, rec, &rp);
        rc = rp.rc;
        if (measured && (ro->runs > 1 || ro->warmup > 0))
            record_add_repeat(rec, &rp.rep);
        int keep = measured && (is_last || sig_caught || rc != 0);
        if (keep && repeat_keep(ro, e, cs, &rp, is_last, rec) != 0)
            rc = 1;
        if (keep && last)
            *last = e; /* the hook stays: the engine's threads detach when it is freed */
        else
            engine_free(e);
        if (keep)
            break;
    }
    if (ro->calib)
        runner_set_peak(rec, ro->calib);
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

/*
 * runner.c: `cnntop run` and `sweep`'s training, record_train() with progress
 * lines, stop signals and messages on stderr (runner.h).
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cnntop/dist.h"
#include "cnntop/err.h"
#include "cnntop/record_train.h"
#include "cmd/runner.h"
#include "common/signals.h"

static Engine *volatile sig_engine;
static volatile sig_atomic_t sig_caught, sig_count;

static void on_signal(int sig)
{
    if (!sig_caught) /* the first signal says why the run stopped */
        sig_caught = sig;
    if (sig_count < 2)
        sig_count++;
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
    int runs, warmup;
    int silent;         /* no lines: a rank other than 0 */
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

    if (sig_caught) /* a signal before the training cleared the engine's stop flag */
        return 1;
    if (ps->silent)
        return 0;
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

/* record_train()'s hooks: the signal handler's engine, the progress
 * line's repeat, the line ended before anything else is printed. */
static void on_phase(void *ud, RecordTrainPhase ph, Engine *e, int r)
{
    ProgressState *ps = ud;
    int measured = r >= ps->warmup, total = ps->warmup + ps->runs;

    if (ph == RECORD_TRAIN_OPENED) {
        ps->what[0] = '\0';
        if (total > 1)
            snprintf(ps->what, sizeof ps->what, "%s %d/%d", measured ? "run" : "warm-up",
                     measured ? r - ps->warmup + 1 : r + 1, measured ? ps->runs : ps->warmup);
        sig_engine = e;
    } else if (ph == RECORD_TRAIN_TRAINED && ps->shown) {
        fputc('\n', stderr);
        ps->shown = 0;
    } else if (ph == RECORD_TRAIN_CLOSING)
        sig_engine = NULL;
}

/* The first stop signal stops the run, a second one skips its evaluation. */
static int on_stopping(void *ud)
{
    (void)ud;
    return sig_count >= 2 ? 2 : sig_caught ? 1 : 0;
}

int runner_run(const RunnerOpts *ro, RunRecord *rec, Engine **last, CounterSet **counters)
{
    char err[512];
    CounterSet *cs = NULL;
    ProgressState ps = {.tty = isatty(2), .prefix = ro->prefix ? ro->prefix : "",
                        .runs = ro->runs, .warmup = ro->warmup, .silent = ro->silent};
    RecordTrainJob job = {.cfg = ro->cfg, .runs = ro->runs, .warmup = ro->warmup,
                          .vary_seed = ro->vary_seed, .load = ro->load, .save = ro->save,
                          .trace = ro->trace, .target = ro->target, .progress = on_progress,
                          .phase = on_phase, .stopping = on_stopping, .ud = &ps};
    RecordTrainResult res;
    Engine *e = NULL;

    if (last)
        *last = NULL;
    if (counters)
        *counters = NULL;
    runner_signals();
    if (counters_new(&cs, ro->events, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: -e: %s\n", err);
        return 2;
    }
    job.cs = cs;
    int trc = record_train(&job, rec, &res, &e, err, sizeof err);
    sig_engine = NULL;
    if (ps.shown)
        fputc('\n', stderr);
    /* A job's ranks meet the errors of its checks (batch, settings,
     * parameters) alike: rank 0 says them; a rank's own error is its own. */
    if (trc != 0 && (dist_rank() == 0 || trc != -CN_EINVAL)) {
        if (dist_size() > 1)
            fprintf(stderr, "cnntop: rank %d: %s\n", dist_rank(), err);
        else
            fprintf(stderr, "cnntop: %s\n", err);
    }
    if (res.trace_written)
        fprintf(stderr, "cnntop: trace written to %s\n", ro->trace);
    int rc = trc == 0 ? 0 : trc == -CN_EDIVERGED ? 3 : 1;
    if (sig_caught) {
        rec->interrupted = 1;
        if (res.kept && rec->n_repeats > 0)
            rec->repeats[rec->n_repeats - 1].exit_code = 128 + sig_caught;
        rc = 128 + sig_caught;
    }
    rec->exit_code = rc;
    if (last && e) {
        *last = e;
        if (counters)
            *counters = cs; /* the caller frees the engine first, then the set */
        else
            engine_set_counters(e, NULL);
    } else
        engine_free(e);
    if (!counters || !*counters)
        counters_free(cs);
    return rc;
}

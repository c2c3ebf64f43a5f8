/*
 * headless.c: `cnntop run` and `cnntop eval`.
 *
 * Progress goes to stderr: on a terminal one line rewritten in place at
 * most 10 times a second, otherwise a plain line every 5 seconds.  The
 * summary goes to stdout, in the spirit of perf stat and hyperfine.
 * SIGINT and SIGTERM ask the engine to stop after the current step; the
 * summary of what was done is still printed and the exit code is 128+sig.
 * SIGPIPE is ignored, so a reader that goes away (`cnntop run | head -1`)
 * shows up as EPIPE, which ends the output quietly: the run still finishes
 * and saves what it was asked to save.  Any other failure to write the
 * summary (a full disk) is an error, exit 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "headless.h"

static Engine *volatile sig_engine;
static volatile sig_atomic_t sig_caught;

static void on_signal(int sig)
{
    sig_caught = sig;
    if (sig_engine)
        engine_stop(sig_engine);
}

static void signals_install(Engine *e)
{
    struct sigaction sa;

    sig_engine = e;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Flushes the summary; returns rc, or EXIT_FAIL when stdout could not be
 * written for any reason but a reader that went away (EPIPE). */
static int stdout_done(int rc)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    if (errno == EPIPE)
        return rc;
    fprintf(stderr, "cnntop: standard output: %s\n", errno ? strerror(errno) : "write error");
    return rc == EXIT_OK ? EXIT_FAIL : rc;
}

typedef struct ProgressState {
    int tty;
    double last;   /* elapsed seconds at the last line */
    int shown;     /* a live line is on screen */
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

    if (p->elapsed - ps->last < every && p->step != p->steps && p->step != 1)
        return 0;
    ps->last = p->elapsed;
    double left = p->step ? p->elapsed / (double)p->step * (double)(p->steps - p->step) : 0.0;
    format_eta(eta, sizeof eta, left);
    fprintf(stderr, "%sepoch %d/%d  step %ld/%ld  %.0f img/s  loss %.4f  ETA %s%s",
            ps->tty ? "\r\033[K" : "", p->epoch + 1, p->epochs, p->step, p->steps,
            p->images_per_s, p->epoch_loss, eta, ps->tty ? "" : "\n");
    ps->shown = ps->tty;
    return 0;
}

static void print_machine(void)
{
    MachineInfo mi;

    engine_machine_info(&mi);
    printf("  Machine:              %s, %d cores, OpenBLAS %s\n", mi.cpu_model, mi.cores,
           mi.blas_core);
    if (mi.blas_warning[0])
        printf("  Note:                 %s\n", mi.blas_warning);
}

static void print_split(const StepSplit *s)
{
    double t = s->data + s->forward + s->backward + s->optimizer;

    if (t <= 0)
        return;
    printf("  Step time split:      data %.1f%%  forward %.1f%%  backward %.1f%%  optimizer %.1f%%\n",
           100 * s->data / t, 100 * s->forward / t, 100 * s->backward / t,
           100 * s->optimizer / t);
}

static void print_train(const Engine *e, const TrainStats *st)
{
    double gflops = st->images_per_s * engine_flops_per_image() * 1e-9;

    printf("  Training wall time:   %.2f s%s\n", st->wall, st->stopped ? "  (stopped early)" : "");
    printf("  Steps, images:        %ld steps, %ld images, %d epoch%s complete\n", st->steps,
           st->images, st->epochs_done, st->epochs_done == 1 ? "" : "s");
    printf("  Throughput:           %.1f images/s  (%.1f GFLOP/s)\n", st->images_per_s, gflops);
    printf("  CPU:                  %.2f s user, %.2f s sys  (%.2f cores busy of %d threads)\n",
           st->cpu_user, st->cpu_sys, st->wall > 0 ? (st->cpu_user + st->cpu_sys) / st->wall : 0.0,
           engine_threads(e));
    printf("  Minor page faults:    %ld\n", st->minor_faults);
    printf("  Final training loss:  %.4f  (mean over the last epoch's steps; last step %.4f)\n",
           st->final_loss, st->last_loss);
    print_split(&st->split);
}

/* The loader's figures: data wait, queue depth, verdict. */
static void print_loader(Engine *e, const TrainStats *st)
{
    LiveStats ls;
    double fill = 0.0, t = st->split.data + st->split.forward + st->split.backward +
                           st->split.optimizer;
    long nfill = 0, total = engine_samples_total(e);
    Sample s[256];
    char aug[64];

    engine_live(e, &ls);
    for (long from = 0; from < total;) {
        int n = engine_samples(e, s, 256, from);
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++)
            if (s[i].queue_fill >= 0) {
                fill += s[i].queue_fill;
                nfill++;
            }
        from += n;
    }
    double share = t > 0 ? st->split.data / t : 0.0;
    if (ls.workers)
        printf("  Loader:               %d thread%s, prefetch %d", ls.workers,
               ls.workers == 1 ? "" : "s", ls.prefetch);
    else
        printf("  Loader:               inline on the trainer (workers 0)");
    RunConfig cfg;
    engine_config(e, &cfg);
    options_format_augment(cfg.augment, aug, sizeof aug);
    printf(", augment %s\n", aug);
    printf("  Data wait:            %.1f%% of step time (%.3f ms/step)", 100 * share,
           st->steps ? 1e3 * st->split.data / (double)st->steps : 0.0);
    if (nfill)
        printf(", queue %.1f of %d full on average", ls.queue_cap * fill / (double)nfill,
               ls.queue_cap);
    printf("\n");
    if (ls.load_samples_per_s > 0 && st->images_per_s > 0)
        printf("  Loader alone:         %.0f samples/s (%.1fx the trainer's images/s)\n",
               ls.load_samples_per_s, ls.load_samples_per_s / st->images_per_s);
    printf("  Verdict:              %s (data wait %s %.0f%% of the step)\n",
           share > CN_LOADER_BOUND ? "loader-bound" : "compute-bound",
           share > CN_LOADER_BOUND ? "above" : "below", 100 * CN_LOADER_BOUND);
}

static int by_time(const void *a, const void *b)
{
    double x = ((const LayerTime *)a)->seconds, y = ((const LayerTime *)b)->seconds;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void print_profile(const Engine *e, const TrainStats *st)
{
    LayerTime lt[64];
    int n = engine_profile(e, lt, 64);
    double total = 0;

    if (st->steps == 0)
        return;
    for (int i = 0; i < n; i++)
        total += lt[i].seconds;
    qsort(lt, (size_t)n, sizeof *lt, by_time);
    printf("\n  %-22s %10s %7s\n", "Layer", "ms/step", "share");
    for (int i = 0; i < n; i++)
        printf("  %-22s %10.3f %6.1f%%\n", lt[i].name, 1e3 * lt[i].seconds / (double)st->steps,
               total > 0 ? 100 * lt[i].seconds / total : 0.0);
    printf("\n");
}

static void print_eval(const EvalResult *r)
{
    printf("  Test accuracy:        %.2f%%  (%ld of %ld images, loss %.4f, %.2f s)\n",
           100.0 * r->accuracy, r->correct, r->images, r->loss, r->wall);
}

static void print_header(const char *what, const Options *o, const Engine *e)
{
    printf("\n Performance of cnntop %s (batch %d, %d threads, seed %llu):\n", what,
           o->cfg.batch, engine_threads(e), (unsigned long long)o->cfg.seed);
    printf("  Data:                 %s (%ld training, %ld test images)\n",
           engine_data_dir(e), engine_train_images(e), engine_test_images(e));
    print_machine();
}

/* Makes the engine and loads --load; prints the error and returns non-zero on failure. */
static int open_engine(const Options *o, Engine **e)
{
    char err[512];

    if (engine_new(e, &o->cfg, err, sizeof err) != 0 ||
        (o->load && engine_load(*e, o->load, err, sizeof err) != 0)) {
        fprintf(stderr, "cnntop: %s\n", err);
        engine_free(*e);
        *e = NULL;
        return EXIT_FAIL;
    }
    return 0;
}

int headless_run(const Options *o)
{
    ProgressState ps = {.tty = isatty(2)};
    Engine *e;
    TrainStats st;
    EvalResult ev;
    char err[512];
    int rc = EXIT_OK;

    if (open_engine(o, &e) != 0)
        return EXIT_FAIL;
    if (o->trace && engine_set_trace(e, o->trace, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: --trace: %s\n", err);
        engine_free(e);
        return EXIT_FAIL;
    }
    signals_install(e);
    /* engine_train() clears the stop flag when it starts: a signal that came
     * before it must not be lost. */
    int trc = sig_caught ? 0 : engine_train(e, on_progress, &ps, err, sizeof err);
    if (ps.shown)
        fputc('\n', stderr);
    engine_stats(e, &st);
    print_header("run", o, e);
    print_train(e, &st);
    print_loader(e, &st);
    print_profile(e, &st);
    if (trc != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        rc = trc == -CN_EDIVERGED ? EXIT_DIVERGED : EXIT_FAIL;
    } else if (!sig_caught && engine_evaluate(e, &ev, err, sizeof err) == 0) {
        print_eval(&ev);
    }
    printf("  Peak memory (RSS):    %.1f MiB\n", engine_peak_rss_kib() / 1024.0);
    fflush(stdout);
    if (o->save && trc == 0 && engine_save(e, o->save, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        rc = EXIT_FAIL;
    }
    if (o->trace) {
        if (engine_write_trace(e, err, sizeof err) != 0) {
            fprintf(stderr, "cnntop: %s\n", err);
            rc = EXIT_FAIL;
        } else
            fprintf(stderr, "cnntop: trace written to %s\n", o->trace);
    }
    engine_free(e);
    sig_engine = NULL;
    return stdout_done(sig_caught ? 128 + sig_caught : rc);
}

int headless_eval(const Options *o)
{
    Engine *e;
    EvalResult ev;
    char err[512];

    signal(SIGPIPE, SIG_IGN); /* see stdout_done() */
    if (open_engine(o, &e) != 0)
        return EXIT_FAIL;
    if (engine_evaluate(e, &ev, err, sizeof err) != 0) {
        fprintf(stderr, "cnntop: %s\n", err);
        engine_free(e);
        return EXIT_FAIL;
    }
    print_header("eval", o, e);
    printf("  Checkpoint:           %s (%ld epochs trained)\n", o->load, engine_epochs_done(e));
    print_eval(&ev);
    engine_free(e);
    return stdout_done(EXIT_OK);
}

/*
 * tui.c: `cnntop` with no command: the dashboard's loop.
 *
 * The UI thread initialises the terminal, then loops: wait for a key at
 * most until the next tick, handle it, and every 0.1 s copy what is to be
 * shown (tui_poll) and draw once (tui_draw).  Training happens on the run
 * thread (tui_run.c).  SIGINT, SIGTERM and SIGHUP only set a flag; the loop
 * then stops the run, saves the settings and the history, and restores the
 * terminal.  The settings file is read at start and written on quit
 * (tui_settings.c); the session history goes to --history FILE after each
 * run (tui_history.c).
 */
#include <langinfo.h>
#include <locale.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cmd/run.h"
#include "tui/tui.h"
#include "tui/export.h"
#include "tui/fmt.h"
#include "tui/tui_main.h"

/* Last: term.h defines macros (lines, columns...) that would rename fields
 * in the headers above. */
#include <term.h>

static volatile sig_atomic_t sig_caught;

static void on_signal(int sig)
{
    sig_caught = sig;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double process_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

void tui_message(Tui *t, int is_error, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(t->status, sizeof t->status, fmt, ap);
    va_end(ap);
    t->status_t = mono_s();
    t->status_err = is_error;
}

int tui_window_seconds(int i)
{
    static const int w[TUI_WINDOWS] = {60, 300, 900, 0};
    return w[((i % TUI_WINDOWS) + TUI_WINDOWS) % TUI_WINDOWS];
}

/* --- settings -------------------------------------------------------- */

static const struct {
    const char *name;
    int live;
} setting_desc[SET_COUNT] = {
    [SET_BATCH] = {"batch", 1},     [SET_WORKERS] = {"workers", 1}, [SET_PREFETCH] = {"prefetch", 1},
    [SET_THREADS] = {"threads", 0}, [SET_EPOCHS] = {"epochs", 0},   [SET_STEPS] = {"steps", 0},
    [SET_LIMIT] = {"limit", 0},     [SET_LR] = {"lr", 0},           [SET_AUGMENT] = {"augment", 0},
    [SET_SEED] = {"seed", 0},       [SET_DATA] = {"data", 0},
};

const char *tui_setting_name(int i)
{
    return setting_desc[i].name;
}

int tui_setting_live(int i)
{
    return setting_desc[i].live;
}

void tui_setting_format(const Tui *t, int i, const RunConfig *c, const char *data, char *buf,
                        size_t len)
{
    (void)t;
    switch (i) {
    case SET_BATCH: snprintf(buf, len, "%d", c->batch); break;
    case SET_WORKERS: snprintf(buf, len, "%d", c->workers); break;
    case SET_PREFETCH:
        if (c->prefetch)
            snprintf(buf, len, "%d", c->prefetch);
        else
            snprintf(buf, len, "auto");
        break;
    case SET_THREADS:
        if (c->threads)
            snprintf(buf, len, "%d", c->threads);
        else
            snprintf(buf, len, "all");
        break;
    case SET_EPOCHS: snprintf(buf, len, "%d", c->epochs); break;
    case SET_STEPS:
        if (c->steps)
            snprintf(buf, len, "%ld", c->steps);
        else
            snprintf(buf, len, "epochs");
        break;
    case SET_LIMIT:
        if (c->limit)
            snprintf(buf, len, "%ld", c->limit);
        else
            snprintf(buf, len, "all");
        break;
    case SET_LR: snprintf(buf, len, "%g", c->lr); break;
    case SET_AUGMENT: options_format_augment(c->augment, buf, len); break;
    case SET_SEED: snprintf(buf, len, "%llu", (unsigned long long)c->seed); break;
    default: /* whole: the drawing cuts it, keeping the tail */
        snprintf(buf, len, "%s", data && *data ? data : "default");
        break;
    }
}

/* Runs an engine_set_* call with signals blocked: the loader threads it may
 * start inherit the caller's mask, and only the UI thread takes signals. */
static int set_live(Tui *t, int i, int v, char *err, size_t errlen)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    if (i == SET_BATCH)
        rc = engine_set_batch(t->engine, v, err, errlen);
    else if (i == SET_WORKERS)
        rc = engine_set_workers(t->engine, v, err, errlen);
    else
        rc = engine_set_prefetch(t->engine, v, err, errlen);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* After setting i of the next run changed: apply it live when it can be. */
static void after_change(Tui *t, int i)
{
    char val[4200], err[512];
    const RunConfig *c = &t->set.cfg;

    tui_setting_format(t, i, c, t->set.data, val, sizeof val);
    if (!setting_desc[i].live || !t->engine || t->rv.state != RUN_TRAINING) {
        tui_message(t, 0, "%s %s: for the next run%s", setting_desc[i].name, val,
                    setting_desc[i].live ? "" : " (applies only to a new run)");
        return;
    }
    int v = i == SET_BATCH ? c->batch : i == SET_WORKERS ? c->workers : c->prefetch;
    if (set_live(t, i, v, err, sizeof err) != 0) {
        tui_message(t, 1, "%s", err);
        return;
    }
    t->live_changed = 1;
    tui_message(t, 0, "%s %s: applied live%s; a new segment starts", setting_desc[i].name, val,
                i == SET_BATCH ? " at the next step" : "");
}

static long step_long(long v, int dir, long lo, long hi)
{
    v += dir;
    return v < lo ? lo : v > hi ? hi : v;
}

static void change_setting(Tui *t, int i, int dir)
{
    RunConfig *c = &t->set.cfg;

    switch (i) {
    case SET_BATCH:
        c->batch = dir > 0 ? (c->batch * 2 > CN_MAX_BATCH ? CN_MAX_BATCH : c->batch * 2)
                           : (c->batch / 2 < 1 ? 1 : c->batch / 2);
        break;
    case SET_WORKERS: c->workers = (int)step_long(c->workers, dir, 0, CN_MAX_WORKERS); break;
    case SET_PREFETCH: c->prefetch = (int)step_long(c->prefetch, dir, 0, CN_MAX_PREFETCH); break;
    case SET_THREADS: c->threads = (int)step_long(c->threads, dir, 0, CN_MAX_THREADS); break;
    case SET_EPOCHS: c->epochs = (int)step_long(c->epochs, dir, 1, 100000); break;
    case SET_STEPS:
        c->steps = dir > 0 ? (c->steps ? c->steps * 2 : 100) : (c->steps <= 100 ? 0 : c->steps / 2);
        break;
    case SET_LIMIT:
        if (dir > 0)
            c->limit = c->limit && c->limit * 2 < 60000 ? c->limit * 2 : 0;
        else
            c->limit = c->limit ? (c->limit / 2 < 1 ? 1 : c->limit / 2) : 30000;
        break;
    case SET_LR:
        c->lr = dir > 0 ? (c->lr * 2 > 10 ? 10 : c->lr * 2) : c->lr / 2;
        break;
    case SET_AUGMENT: c->augment = (c->augment + (dir > 0 ? 1u : 7u)) & 7u; break;
    case SET_SEED: c->seed = dir < 0 && c->seed == 0 ? 0 : c->seed + (uint64_t)(int64_t)dir; break;
    default:
        tui_message(t, 0, "type the data directory: press c, then Enter");
        return;
    }
    after_change(t, i);
}

/* Sets setting i from typed text; returns 0 or -1 with a message. */
static int type_setting(Tui *t, int i, const char *text)
{
    RunConfig *c = &t->set.cfg;
    char *end, err[256];

    if (i == SET_DATA) {
        snprintf(t->set.data, sizeof t->set.data, "%s", text);
        settings_fix(&t->set);
        after_change(t, i);
        return 0;
    }
    if (i == SET_AUGMENT) {
        unsigned a;
        if (options_parse_augment(text, &a, err, sizeof err)) {
            tui_message(t, 1, "%s", err);
            return -1;
        }
        c->augment = a;
        after_change(t, i);
        return 0;
    }
    double v = strtod(text, &end);
    static const double lo[SET_COUNT] = {1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    static const double hi[SET_COUNT] = {CN_MAX_BATCH, CN_MAX_WORKERS, CN_MAX_PREFETCH,
                                         CN_MAX_THREADS, CN_MAX_EPOCHS, CN_MAX_STEPS,
                                         CN_MAX_IMAGES, 10, 0, 1e18, 0};
    if (!*text || *end || !isfinite(v) || v < lo[i] || v > hi[i] || (i == SET_LR && v < FLT_MIN) ||
        (i != SET_LR && v != floor(v))) {
        tui_message(t, 1, "%s: '%s' is not a %s in %g..%g", setting_desc[i].name, text,
                    i == SET_LR ? "number" : "whole number", lo[i], hi[i]);
        return -1;
    }
    switch (i) {
    case SET_BATCH: c->batch = (int)v; break;
    case SET_WORKERS: c->workers = (int)v; break;
    case SET_PREFETCH: c->prefetch = (int)v; break;
    case SET_THREADS: c->threads = (int)v; break;
    case SET_EPOCHS: c->epochs = (int)v; break;
    case SET_STEPS: c->steps = (long)v; break;
    case SET_LIMIT: c->limit = (long)v; break;
    case SET_LR: c->lr = v; break;
    default: c->seed = (uint64_t)v; break;
    }
    after_change(t, i);
    return 0;
}

/* --- runs and history ------------------------------------------------ */

static void start_run(Tui *t)
{
    char err[512];

    if (tuirun_busy(&t->run)) {
        tui_message(t, 1, "run %d is going: stop it first (x)", t->rv.seq);
        return;
    }
    settings_fix(&t->set);
    /* tuirun_start() frees the last run's engine: forget it first, so that
     * nothing drawn or handled before the next poll can reach it. */
    t->engine = NULL;
    if (tuirun_start(&t->run, &t->set.cfg, t->seq + 1, err, sizeof err) != 0) {
        tui_message(t, 1, "%s", err);
        return;
    }
    t->seq++;
    /* The FMA peak of this run's threads, from the cache (never measured
     * here: that would stall the dashboard for seconds). */
    t->have_calib = calibrate_load(t->set.cfg.threads, &t->calib) == 0;
    t->live_changed = 0;
    t->paused = 0;
    t->run_queue_wait = NAN;
    series_clear(&t->ipc);
    series_clear(&t->miss);
    memset(&t->ctr_run, 0, sizeof t->ctr_run);
    t->run_cpu0 = process_cpu_s();
    t->run_w0 = mono_s();
    tui_message(t, 0, "run %d: loading the data and building the model", t->seq);
}

/* The history row of the run that just ended, whatever its end. */
static void record_run(Tui *t)
{
    const RunView *v = &t->rv;
    HistRow r;
    char err[512];

    memset(&r, 0, sizeof r);
    r.when = (long)time(NULL);
    r.session = 1;
    r.run = v->seq;
    r.batch = v->cfg.batch;
    r.workers = v->cfg.workers;
    r.prefetch = v->cfg.prefetch;
    r.threads = v->threads ? v->threads : v->cfg.threads;
    r.augment = v->cfg.augment;
    r.epochs = v->cfg.epochs;
    r.steps = v->cfg.steps;
    r.limit = v->cfg.limit;
    r.lr = v->cfg.lr;
    r.seed = v->cfg.seed;
    if (v->have_st) {
        r.wall = v->st.wall;
        r.images = v->st.images;
        r.steps_done = v->st.steps;
        r.ips = v->st.steps > 0 ? v->st.images_per_s : 0;
        r.loss = v->st.final_loss;
    } else {
        r.loss = NAN;
    }
    r.accuracy = v->have_ev ? v->ev.accuracy : NAN;
    snprintf(r.state, sizeof r.state, "%s",
             v->state == RUN_FINISHED ? "finished" : v->state == RUN_STOPPED ? "stopped" : "failed");
    if (v->state == RUN_FAILED)
        snprintf(r.why, sizeof r.why, "%.159s", v->reason);
    r.live = t->live_changed;
    tuihist_add(&t->hist, &r);
    t->hist_sel = t->hist.n - 1;
    if (t->o->history && tuihist_save(&t->hist, t->o->history, err, sizeof err) != 0)
        tui_message(t, 1, "history: %s", err);
}

/* --- polling --------------------------------------------------------- */

static void poll_samples(Tui *t, Engine *e, const EngineSnapshot *snap)
{
    unsigned gen = snap->samples_generation;
    long total = snap->samples_total;

    /* By run number, not by engine address: a new engine may be allocated
     * where the freed one was. */
    if (t->rv.seq != t->samples_seq || gen != t->samples_gen || total < t->nsamples) {
        t->nsamples = 0;
        t->samples_seq = t->rv.seq;
        t->samples_gen = gen;
    }
    if (total > t->cap_samples) {
        int cap = (int)total + 1024;
        Sample *s = realloc(t->samples, sizeof *s * (size_t)cap);
        double *tb = realloc(t->tbuf, sizeof(double) * (size_t)cap);
        double *vb = tb ? realloc(t->vbuf, sizeof(double) * (size_t)cap) : NULL;
        if (s)
            t->samples = s;
        if (tb)
            t->tbuf = tb;
        if (vb)
            t->vbuf = vb;
        if (!s || !tb || !vb) {
            endwin();
            fprintf(stderr, "cnntop: out of memory for %ld samples\n", total);
            abort();
        }
        t->cap_samples = cap;
    }
    if (total > t->nsamples)
        t->nsamples += engine_samples(e, t->samples + t->nsamples, (int)(total - t->nsamples),
                                      t->nsamples);
}

/* Each second: the process's CPU use, the UI thread's, and the run's
 * run-queue wait (from its counter set cs, NULL: none). */
static void poll_cpu(Tui *t, CounterSet *cs)
{
    double w = t->now, dt = w - t->cpu_w_last;

    if (dt < 1.0)
        return;
    double p = process_cpu_s(), u = thread_cpu_s();
    if (t->cpu_w_last > 0) {
        t->cpu_util = (p - t->cpu_t_last) / dt;
        t->ui_share = (u - t->ui_t_last) / dt;
    }
    t->cpu_t_last = p;
    t->ui_t_last = u;
    t->cpu_w_last = w;
    if (t->rv.state == RUN_TRAINING)
        t->run_queue_wait = cs ? counters_wait_share(cs) : NAN;
}

static void tui_poll(Tui *t)
{
    t->now = mono_s();
    tuirun_view(&t->run, &t->rv);
    Engine *e = tuirun_engine(&t->run);
    t->engine = e;
    t->have_live = 0;
    if (e) {
        EngineSnapshot snap;
        engine_snapshot(e, &snap);
        t->live = snap.live;
        t->have_live = 1;
        poll_samples(t, e, &snap);
        t->nsegs = snap.nsegments;
        memcpy(t->segs, snap.seg, (size_t)snap.nsegments * sizeof *snap.seg);
    } else if (t->samples_seq != t->rv.seq) {
        /* A run loading or failed to load: none of the last run's figures. */
        t->nsamples = 0;
        t->nsegs = 0;
        t->samples_seq = t->rv.seq;
    }
    char why[CTR_REASON_LEN];
    CounterSet *cs = tuirun_counters(&t->run, why);
    int fresh = e && t->samples_seq == t->rv.seq && t->nsamples > 0;
    tui_counters_read(&t->ctr, cs, fresh ? &t->samples[t->nsamples - 1] : NULL, why);
    if (t->rv.state == RUN_TRAINING && t->rv.have_p) {
        double ts = t->rv.p.elapsed;
        series_add(&t->ipc, ts, t->ctr.ipc_ok ? t->ctr.ipc : NAN);
        series_add(&t->miss, ts, t->ctr.miss_ok ? t->ctr.miss_rate : NAN);
        t->ctr_run = t->ctr; /* kept for the screen once the run ends */
    }
    poll_cpu(t, cs);
    const RunRecord *rec = tuirun_record(&t->run); /* the run's figure once it ended */
    if (rec)
        t->run_queue_wait = rec->run_queue_wait;
    if (t->rv.seq > t->recorded_seq && t->rv.state >= RUN_FINISHED) {
        t->recorded_seq = t->rv.seq;
        /* CPU and wall over one interval, both read now: the run's end
         * time against CPU read up to a tick later gave a run that failed
         * at once "15.50 cores" on 2. */
        double cpu = process_cpu_s(), w = mono_s() - t->run_w0;
        t->run_cores = w > 0 ? (cpu - t->run_cpu0) / w : NAN;
        record_run(t);
        if (t->rv.state == RUN_FAILED)
            tui_message(t, 1, "run %d failed: %s", t->rv.seq, t->rv.reason);
        else
            tui_message(t, 0, "run %d %s", t->rv.seq,
                        t->rv.state == RUN_FINISHED ? "finished" : "stopped");
    }
}

/* --- keys ------------------------------------------------------------ */

/* The newest point of the run's charts, seconds into the run. */
static double chart_end(const Tui *t)
{
    if (t->nsamples)
        return t->samples[t->nsamples - 1].t;
    return t->rv.have_p ? t->rv.p.elapsed : 0.0;
}

static void begin_prompt(Tui *t, Prompt p, const char *initial)
{
    t->prompt = p;
    snprintf(t->input, sizeof t->input, "%s", initial);
}

static void do_export(Tui *t, const char *path)
{
    char err[512];

    if (!*path) {
        tui_message(t, 1, "export: no file name");
        return;
    }
    if (tui_export(t, path, err, sizeof err) != 0)
        tui_message(t, 1, "export: %s", err);
    else
        tui_message(t, 0, "exported run %d to %s", t->rv.seq, path);
}

static int prompt_key(Tui *t, int ch)
{
    size_t n = strlen(t->input);

    if (t->prompt == PROMPT_QUIT) {
        t->prompt = PROMPT_NONE;
        return ch == 'y' || ch == 'Y' || ch == 'q' ? TUI_QUIT : TUI_REDRAW;
    }
    if (ch == 27) {
        t->prompt = PROMPT_NONE;
    } else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
        if (n)
            t->input[n - 1] = '\0';
    } else if (ch == 21) { /* Ctrl-U clears the line, as in a shell */
        t->input[0] = '\0';
    } else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        Prompt p = t->prompt;
        t->prompt = PROMPT_NONE;
        if (p == PROMPT_EXPORT)
            do_export(t, t->input);
        else if (p == PROMPT_EDIT)
            type_setting(t, t->sel, t->input);
    } else if (ch >= 32 && ch < 127 && n + 1 < sizeof t->input) {
        t->input[n] = (char)ch;
        t->input[n + 1] = '\0';
    }
    return TUI_REDRAW;
}

static void mark_baseline(Tui *t)
{
    int i = t->view == VIEW_HISTORY ? t->hist_sel : t->hist.n - 1;

    if (i < 0 || i >= t->hist.n) {
        tui_message(t, 1, "no run to mark as the baseline yet");
        return;
    }
    const HistRow *h = &t->hist.rows[i];
    const char *why = tuihist_why_not(h);
    if (why) {
        tui_message(t, 1, "run %d cannot be the baseline (%s): %s", h->run, why,
                    h->live ? "its images/s mixes two settings" : "it has no images/s");
        return;
    }
    t->hist.baseline = i;
    tui_message(t, 0, "baseline: run %d (batch %d, %d worker%s, %d thread%s)", h->run, h->batch,
                h->workers, PLURAL(h->workers), h->threads, PLURAL(h->threads));
}

static int click(Tui *t)
{
    MEVENT ev;

    if (getmouse(&ev) != OK || !(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)))
        return 0;
    if (t->view == VIEW_MAIN && rect_contains(t->lay.settings, ev.y, ev.x)) {
        int row = ev.y - t->lay.settings.y - 1, top = 0, vis = t->lay.settings.h - 1;
        if (t->sel >= vis)
            top = t->sel - vis + 1;
        if (row >= 0 && top + row < SET_COUNT)
            t->sel = top + row;
    } else if (rect_contains(t->lay.status, ev.y, ev.x)) {
        /* The tabs of draw_status(): " main " " layers " " history " at the right. */
        int off = ev.x - (t->lay.cols - 23);
        if (off >= 0)
            t->view = off < 6 ? VIEW_MAIN : off < 14 ? VIEW_LAYERS : VIEW_HISTORY;
    } else if (t->view == VIEW_HISTORY && rect_contains(t->lay.table, ev.y, ev.x)) {
        int i = t->table_top + ev.y - t->lay.table.y - 1;
        if (i >= 0 && i < t->hist.n)
            t->hist_sel = i;
    }
    return TUI_REDRAW;
}

/* On a setting whose value the panel cuts: the whole value, below. */
static void show_whole_setting(Tui *t)
{
    char next[4200], last[4200];
    int w = tui_settings_value_cols(t);

    tui_setting_format(t, t->sel, &t->set.cfg, t->set.data, next, sizeof next);
    tui_setting_format(t, t->sel, &t->rv.cfg, t->rv.data_dir, last, sizeof last);
    int cut_last = t->rv.seq && fmt_cols(last) > w;
    if (fmt_cols(next) > w || cut_last)
        tui_message(t, 0, "%s: next run %s%s%s", setting_desc[t->sel].name, next,
                    cut_last ? ", last run " : "", cut_last ? last : "");
}

static int nav_key(Tui *t, int dir)
{
    if (t->view == VIEW_MAIN) {
        t->sel = (t->sel + dir + SET_COUNT) % SET_COUNT;
        show_whole_setting(t);
    } else if (t->view == VIEW_HISTORY) {
        t->hist_sel += dir;
        if (t->hist_sel >= t->hist.n)
            t->hist_sel = t->hist.n - 1;
        if (t->hist_sel < 0)
            t->hist_sel = 0;
    } else {
        t->table_top += dir;
        if (t->table_top < 0)
            t->table_top = 0;
    }
    return TUI_REDRAW;
}

/* Paused: Left/Right move the frozen picture's end by a quarter window,
 * within the run; a run shorter than the window has nothing to scroll. */
static int scroll_key(Tui *t, int dir)
{
    int w = tui_window_seconds(t->win);
    double end = chart_end(t), span = w ? w : end;
    double lo = w ? (end < w ? end : w) : (end < 1 ? end : 1);

    if (w && end <= w) {
        tui_message(t, 0, "paused at %.0fs: the run so far fits in the %d min window", t->pause_t1,
                    w / 60);
        return TUI_REDRAW;
    }
    t->pause_t1 += dir * (span / 4 > 1 ? span / 4 : 1);
    if (t->pause_t1 > end)
        t->pause_t1 = end;
    if (t->pause_t1 < lo)
        t->pause_t1 = lo;
    return TUI_REDRAW;
}

static int horizontal_key(Tui *t, int dir)
{
    if (t->paused)
        return scroll_key(t, dir);
    if (t->view == VIEW_MAIN)
        change_setting(t, t->sel, dir);
    return TUI_REDRAW;
}

static int handle_key(Tui *t, int ch)
{
    if (t->prompt != PROMPT_NONE)
        return prompt_key(t, ch);
    if (t->help && ch != KEY_RESIZE && ch != KEY_MOUSE) {
        t->help = 0;
        return TUI_REDRAW;
    }
    switch (ch) {
    case 'q': case 'Q': case KEY_F(10):
        if (tuirun_busy(&t->run)) {
            t->prompt = PROMPT_QUIT;
            return TUI_REDRAW;
        }
        return TUI_QUIT;
    case 's': case 'S': case '\n': case '\r': case KEY_ENTER: start_run(t); break;
    case 'x': case 'X':
        if (tuirun_busy(&t->run)) {
            tuirun_stop(&t->run, 0);
            tui_message(t, 0, "stopping run %d after the current step", t->rv.seq);
        } else
            tui_message(t, 1, "no run is going");
        break;
    case '\t': t->view = (TuiView)((t->view + 1) % VIEW_COUNT); t->table_top = 0; break;
    case KEY_BTAB: t->view = (TuiView)((t->view + VIEW_COUNT - 1) % VIEW_COUNT); t->table_top = 0; break;
    case '?': case 'h': case KEY_F(1): t->help = 1; break;
    case 'p': case 'P':
        t->paused = !t->paused;
        t->pause_t1 = chart_end(t);
        tui_message(t, 0, t->paused ? "display paused (training goes on): left/right scroll, p resumes"
                                    : "display live");
        break;
    case 't': case 'T':
        t->win = (t->win + 1) % TUI_WINDOWS;
        t->set.window = tui_window_seconds(t->win);
        break;
    case 'b': change_setting(t, SET_BATCH, -1); break;
    case 'B': change_setting(t, SET_BATCH, +1); break;
    case 'w': change_setting(t, SET_WORKERS, -1); break;
    case 'W': change_setting(t, SET_WORKERS, +1); break;
    case 'm': case 'M': mark_baseline(t); break;
    case 'e': case 'E': {
        char name[64];
        snprintf(name, sizeof name, "cnntop-run-%d.json", t->rv.seq ? t->rv.seq : 1);
        begin_prompt(t, PROMPT_EXPORT, t->o->export_path ? t->o->export_path : name);
        break;
    }
    case 'o': case 'O': t->set.sort = (t->set.sort + 1) % 3; break;
    case 'c': case 'C': case KEY_F(2): begin_prompt(t, PROMPT_EDIT, ""); break;
    case KEY_UP: return nav_key(t, -1);
    case KEY_DOWN: return nav_key(t, +1);
    case KEY_PPAGE: return nav_key(t, -10);
    case KEY_NPAGE: return nav_key(t, +10);
    case KEY_LEFT: case '-': case '_': return horizontal_key(t, -1);
    case KEY_RIGHT: case '+': case '=': return horizontal_key(t, +1);
    case KEY_RESIZE: return TUI_RELAYOUT | TUI_REDRAW;
    case KEY_MOUSE: return click(t);
    default:
        if ((ch >= '0' && ch <= '9') || ch == '.') {
            char s[2] = {(char)ch, '\0'};
            t->view = VIEW_MAIN;
            begin_prompt(t, PROMPT_EDIT, s);
        }
        break;
    }
    return TUI_REDRAW;
}

/* --- start and end ---------------------------------------------------- */

static void load_settings(Tui *t)
{
    char err[600];

    t->set.cfg = t->o->cfg;
    snprintf(t->set.data, sizeof t->set.data, "%s", t->o->cfg.data_dir ? t->o->cfg.data_dir : "");
    t->set.window = 60;
    t->set.blas_keep = t->o->blas_keep;
    settings_fix(&t->set);
    if (settings_path(t->cfg_path, sizeof t->cfg_path) != 0)
        t->cfg_path[0] = '\0';
    int rc = t->cfg_path[0] ? settings_load(&t->set, t->cfg_path, t->o->set_mask, err, sizeof err)
                            : 1;
    /* The file's name without its directory, so that the line and the
     * problem fit the status line; the man page says where it is. */
    const char *base = strrchr(t->cfg_path, '/');
    size_t dl = base ? (size_t)(base + 1 - t->cfg_path) : 0;
    const char *msg = !strncmp(err, t->cfg_path, dl) ? err + dl : err;
    if (rc == 2)
        tui_message(t, 1, "%s: skipped, the rest read", msg);
    else if (rc < 0)
        tui_message(t, 1, "settings not read: %s", err);
    for (int i = 0; i < TUI_WINDOWS; i++)
        if (tui_window_seconds(i) == t->set.window)
            t->win = i;
    t->set.window = tui_window_seconds(t->win);
    /* What is saved on quit is what the user changes from here on: the
     * command line's values are for this launch only. */
    t->launch = t->set;
    settings_fix(&t->launch);
}

static void colors_init(Tui *t)
{
    t->color = !t->o->no_color && has_colors();
    if (!t->color)
        return;
    start_color();
    use_default_colors();
    init_pair(PAIR_TITLE, COLOR_CYAN, -1);
    init_pair(PAIR_GOOD, COLOR_GREEN, -1);
    init_pair(PAIR_WARN, COLOR_YELLOW, -1);
    init_pair(PAIR_BAD, COLOR_RED, -1);
    init_pair(PAIR_DIM, COLOR_BLUE, -1);
    init_pair(PAIR_DATA, COLOR_BLACK, COLOR_YELLOW);
    init_pair(PAIR_FWD, COLOR_BLACK, COLOR_CYAN);
    init_pair(PAIR_BWD, COLOR_BLACK, COLOR_BLUE);
    init_pair(PAIR_OPT, COLOR_BLACK, COLOR_MAGENTA);
    init_pair(PAIR_CHART, COLOR_GREEN, -1);
    init_pair(PAIR_MARK, COLOR_MAGENTA, -1);
    init_pair(PAIR_SEL, COLOR_BLACK, COLOR_CYAN);
    init_pair(PAIR_BAR, COLOR_GREEN, -1);
}

/* --- the terminal, and leaving it sane ------------------------------- */

/* What a fatal signal's handler needs to put the terminal back: the
 * settings before curses changed them and the bytes that leave the
 * alternate screen and reset the modes, both taken at start. */
static struct termios term_saved;
static int term_saved_ok;
static char term_reset[256];
static size_t term_reset_len;
static const int fatal_sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
static struct sigaction fatal_old[sizeof fatal_sigs / sizeof fatal_sigs[0]];

static void reset_add(const char *cap)
{
    char *str = tigetstr(cap);
    size_t n = str && str != (char *)-1 ? strlen(str) : 0;

    if (n && term_reset_len + n < sizeof term_reset) {
        memcpy(term_reset + term_reset_len, str, n);
        term_reset_len += n;
    }
}

/* SIGSEGV and the like: only async-signal-safe calls (write, tcsetattr,
 * sigaction, raise).  The handler in place before ours (the default, or a
 * sanitizer's) is put back and the signal raised again, so the process
 * dies of it as it would have, with the terminal usable. */
static void on_fatal(int sig)
{
    size_t i = 0;

    if (term_reset_len && write(STDOUT_FILENO, term_reset, term_reset_len) < 0) {
        /* Nothing to do about it: the process is dying. */
    }
    if (term_saved_ok)
        tcsetattr(STDIN_FILENO, TCSANOW, &term_saved);
    while (i + 1 < sizeof fatal_sigs / sizeof fatal_sigs[0] && fatal_sigs[i] != sig)
        i++;
    sigaction(sig, &fatal_old[i], NULL);
    raise(sig);
}

static void signals_init(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* After the terminal is set up, since curses installs its own SIGINT
     * and SIGTERM handlers: ours replace them, so that the loop can stop
     * the run and save. */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    reset_add("sgr0");
    reset_add("cnorm");
    reset_add("rmkx");
    reset_add("rmcup");
    static const char mouse_off[] = "\033[?1000l\033[?1002l\033[?1006l";
    if (term_reset_len + sizeof mouse_off < sizeof term_reset) {
        memcpy(term_reset + term_reset_len, mouse_off, sizeof mouse_off - 1);
        term_reset_len += sizeof mouse_off - 1;
    }
    sa.sa_handler = on_fatal;
    for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++)
        sigaction(fatal_sigs[i], &sa, &fatal_old[i]);
}

/* Returns 0, or -1 after a one-line error when curses cannot drive the
 * terminal (TERM unset, or not in the terminfo database). */
static int terminal_init(Tui *t)
{
    const char *cs, *term = getenv("TERM");

    setlocale(LC_ALL, "");
    cs = nl_langinfo(CODESET);
    t->utf8 = cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
    term_saved_ok = tcgetattr(STDIN_FILENO, &term_saved) == 0;
    if (!term || !*term) {
        fprintf(stderr, "cnntop: the dashboard needs TERM set to the terminal's type "
                        "(e.g. TERM=xterm-256color); `cnntop run` needs none\n");
        return -1;
    }
    set_escdelay(25);
    /* newterm(), not initscr(): on a terminal it cannot drive, initscr()
     * prints its own message and exits; newterm() returns NULL. */
    t->screen = newterm(NULL, stdout, stdin);
    if (!t->screen) {
        fprintf(stderr, "cnntop: the dashboard cannot drive terminal type '%s' (TERM): "
                        "not in the terminfo database or lacks cursor motion; "
                        "try TERM=xterm-256color, or `cnntop run`\n", term);
        return -1;
    }
    set_term(t->screen);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED, NULL);
    mouseinterval(0);
    colors_init(t);
    signals_init();
    return 0;
}

static void tui_free(Tui *t)
{
    free(t->samples);
    free(t->tbuf);
    free(t->vbuf);
}

/* The one loop: keys, ticks, one draw per pass. */
static void loop(Tui *t)
{
    double next_tick = 0;
    int r = TUI_REDRAW;

    while (!sig_caught) {
        double now = mono_s();
        if (now >= next_tick) {
            tui_poll(t);
            next_tick = now + 0.1;
            r |= TUI_REDRAW;
        }
        if (r & TUI_REDRAW)
            tui_draw(t);
        r = 0;
        int ms = (int)((next_tick - mono_s()) * 1000.0) + 1;
        timeout(ms < 1 ? 1 : ms);
        int ch = getch();
        if (ch == ERR)
            continue;
        r = handle_key(t, ch);
        if (r & TUI_QUIT)
            break;
    }
}

int tui_main(const Options *o)
{
    static Tui tui; /* large (series, history): not on the stack */
    Tui *t = &tui;
    char err[600];

    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "cnntop: the dashboard needs a terminal; use `cnntop run` for headless work\n");
        return EXIT_USAGE;
    }
    memset(t, 0, sizeof *t);
    t->o = o;
    t->cpu_util = NAN;
    t->ui_share = NAN;
    t->run_queue_wait = NAN;
    tuihist_init(&t->hist);
    tuirun_init(&t->run);
    load_settings(t);
    if (o->history && tuihist_load(&t->hist, o->history, err, sizeof err) < 0)
        tui_message(t, 1, "history: %s", err);
    t->hist_sel = t->hist.n - 1;
    machine_info(&t->mi);
    /* Who chose the kernel (a narrow one is the header's warning), unless
     * the settings or the history had something to say first. */
    if (t->mi.blas_note[0] && !t->status[0])
        tui_message(t, 0, "%s", t->mi.blas_note);
    t->flops_per_image = engine_flops_per_image();
    t->flops_executed_per_image = engine_flops_executed_per_image();
    t->have_calib = calibrate_load(t->set.cfg.threads, &t->calib) == 0;
    tui_counters_set_events(o->events);
    tui_counters_describe(t->ctr_desc, sizeof t->ctr_desc);
    if (terminal_init(t) != 0) {
        tuirun_done(&t->run);
        tui_free(t);
        return EXIT_USAGE;
    }
    if (o->autostart)
        start_run(t);
    loop(t);
    /* Stop a run that is going, then save: the order keeps the history
     * file free of a half-recorded run. */
    tuirun_done(&t->run);
    endwin();
    delscreen(t->screen);
    if (t->cfg_path[0] && settings_save_changes(&t->launch, &t->set, t->cfg_path, err,
                                                sizeof err) < 0)
        fprintf(stderr, "cnntop: settings not saved: %s\n", err);
    tui_free(t);
    return sig_caught ? 128 + sig_caught : EXIT_OK;
}

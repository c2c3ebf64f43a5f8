/*
 * draw.c: drawing the dashboard from the state tui_poll() copied.
 *
 * One call, tui_draw(), erases the virtual screen, draws every panel of
 * the current view and refreshes; curses sends only the cells that
 * changed, so a 10 Hz redraw does not flicker.  Nothing here asks the
 * engine or the run thread for anything: all figures come from Tui.
 * Every figure that cannot be had is drawn as "n/a: <reason>".
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/verdict.h"
#include "cmd/run.h"
#include "tui/tui.h"
#include "tui/fmt.h"
#include "cnntop/version.h"

#define MAX_ROWS 256
#define MAX_COLS 512

static attr_t pair(const Tui *t, int p)
{
    return t->color ? COLOR_PAIR(p) : A_NORMAL;
}

/* Prints at (y, x) at most w columns, in attribute a. */
__attribute__((format(printf, 5, 6)))
static void put(int y, int x, int w, attr_t a, const char *fmt, ...)
{
    char text[1024], fit[1200];
    va_list ap;

    if (w <= 0)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fmt_fit(fit, sizeof fit, text, w);
    attrset(a);
    mvaddstr(y, x, fit);
    attrset(A_NORMAL);
}

/* A panel's title row: the name in bold, then the rest. */
static void title(const Tui *t, Rect r, const char *name, const char *rest)
{
    put(r.y, r.x, r.w, A_BOLD | pair(t, PAIR_TITLE), "%s", name);
    int n = fmt_cols(name);
    if (rest && *rest)
        put(r.y, r.x + n + 1, r.w - n - 1, A_NORMAL, "%s", rest);
}

/* Prints text wrapped at word boundaries over at most `rows` rows from
 * (y, x), each of w columns; returns the rows used.  Only a text longer
 * than every row together is cut (with '~'). */
static int put_wrapped(int y, int x, int w, int rows, attr_t a, const char *text)
{
    char part[1024];
    int k = 0;

    while (*text && k < rows && w > 0) {
        size_t n = k == rows - 1 ? strlen(text) : fmt_wrap(text, w);
        snprintf(part, sizeof part, "%.*s", (int)(n < sizeof part ? n : sizeof part - 1), text);
        put(y + k, x, w, a, "%s", part);
        text += n;
        text += strspn(text, " ");
        k++;
    }
    return k;
}

/* Rows `text` takes wrapped at w columns, counting at most `most`. */
static int wrapped_rows(const char *text, int w, int most)
{
    int k = 0;

    for (const char *p = text; *p && k < most && w > 0; k++) {
        p += fmt_wrap(p, w);
        p += strspn(p, " ");
    }
    return k;
}

/* --- header -------------------------------------------------------- */

static const char *state_name(RunState s)
{
    static const char *const names[] = {"idle", "loading", "running", "evaluating",
                                        "finished", "stopped", "failed"};
    return names[s];
}

static void header_state(Tui *t, int y)
{
    const RunView *v = &t->rv;
    const Rect r = t->lay.header;
    char a[64], b[64], c[64], bar[128];

    switch (v->state) {
    case RUN_IDLE:
        put(y, 0, r.w, A_NORMAL, "idle: press s to start a run, ? for help");
        return;
    case RUN_LOADING:
        put(y, 0, r.w, pair(t, PAIR_WARN), "run %d loading: reading the data set, building the model",
            v->seq);
        return;
    case RUN_FAILED:
        if (fmt_cols(v->reason) + 20 <= r.w)
            put(y, 0, r.w, A_BOLD | pair(t, PAIR_BAD), "run %d failed: %s", v->seq, v->reason);
        else
            put(y, 0, r.w, A_BOLD | pair(t, PAIR_BAD),
                "run %d failed (the reason, whole, is in the history view: Tab)", v->seq);
        return;
    default:
        break;
    }
    if (v->state >= RUN_FINISHED && !(v->have_st && v->st.steps > 0)) {
        put(y, 0, r.w, pair(t, PAIR_WARN), "run %d stopped before its first step: nothing trained",
            v->seq);
        return;
    }
    const Progress *p = &v->p;
    double frac = p->steps ? (double)p->step / (double)p->steps : 0;
    double eta = p->step ? p->elapsed / (double)p->step * (double)(p->steps - p->step) : NAN;
    char head[160];
    if (v->state == RUN_TRAINING)
        snprintf(head, sizeof head, "run %d running  epoch %d/%d  step %ld/%ld ", v->seq,
                 p->epoch + 1, p->epochs, p->step, p->steps);
    else if (v->state == RUN_EVALUATING)
        snprintf(head, sizeof head, "run %d evaluating on %ld test images ", v->seq,
                 v->test_images);
    else
        snprintf(head, sizeof head, "run %d %s  step %ld/%ld ", v->seq, state_name(v->state),
                 p->step, p->steps);
    attr_t at = v->state == RUN_TRAINING ? A_BOLD | pair(t, PAIR_GOOD)
                : v->state == RUN_STOPPED ? pair(t, PAIR_WARN) : A_BOLD;
    put(y, 0, r.w, at, "%s", head);
    int x = fmt_cols(head);
    char tail[200];
    if (v->state == RUN_TRAINING)
        snprintf(tail, sizeof tail, " %3.0f%%  ETA %s  loss %.4f", 100 * frac,
                 fmt_duration(a, sizeof a, eta), (double)p->loss);
    else if (v->have_ev)
        snprintf(tail, sizeof tail, " %s in %s, %s img/s, accuracy %.2f%%",
                 fmt_si(b, sizeof b, (double)v->st.images), fmt_duration(a, sizeof a, v->st.wall),
                 fmt_si(c, sizeof c, v->st.images_per_s), 100 * v->ev.accuracy);
    else
        snprintf(tail, sizeof tail, " %s in %s, %s img/s, accuracy n/a: %s",
                 fmt_si(b, sizeof b, (double)v->st.images), fmt_duration(a, sizeof a, v->st.wall),
                 fmt_si(c, sizeof c, v->st.images_per_s),
                 v->state == RUN_EVALUATING ? "evaluating" : "not evaluated");
    int bw = r.w - x - fmt_cols(tail);
    if (bw > 40)
        bw = 40;
    if (bw >= 6) {
        fmt_bar(bar, sizeof bar, frac, bw);
        put(y, x, bw, pair(t, PAIR_BAR), "%s", bar);
        x += bw;
    }
    put(y, x, r.w - x, A_NORMAL, "%s", tail);
}

/* The kernel's warning as the header says it, in two rows of `cols` at
 * most: which kernels run on which CPU, the measured factor (the cached
 * calibration's SGEMM at the model's shapes against its FMA peak) and the
 * fix, without the fix's aside where the whole would take more rows.
 * "" when the kernel is not narrow. */
static void header_warning(const Tui *t, int cols, char *buf, size_t len)
{
    const char *fix = strstr(t->mi.blas_warning, "fix: ");
    char factor[96] = "";

    buf[0] = '\0';
    if (!t->mi.blas_warning[0])
        return;
    if (t->have_calib) {
        double peak = calibrate_peak(&t->calib, NULL);
        double sg = fmax(t->calib.model_gflops[0], t->calib.model_gflops[1]);
        if (peak > 0 && sg > 0)
            snprintf(factor, sizeof factor, ", SGEMM %.1fx below the FMA peak", peak / sg);
    }
    for (int aside = 1; aside >= 0; aside--) {
        int n = !fix ? 0 : aside || !strstr(fix, " (") ? (int)strlen(fix)
                                                         : (int)(strstr(fix, " (") - fix);
        snprintf(buf, len, "OpenBLAS runs %s (%s) kernels on this %s CPU%s%s%.*s",
                 t->mi.blas_core, t->mi.blas_isa, t->mi.cpu_isa, factor, fix ? "; " : "", n,
                 fix ? fix : "");
        if (wrapped_rows(buf, cols - 2, 3) <= 2)
            return;
    }
}

/* Rows the header's warning takes at `cols` columns: 0, 1 or 2. */
static int header_warning_rows(const Tui *t, int cols)
{
    char w[512];

    header_warning(t, cols, w, sizeof w);
    return wrapped_rows(w, cols - 2, 2);
}

static void draw_header(Tui *t)
{
    const Rect r = t->lay.header;
    char cores[32], machine[400], path[4096];

    snprintf(cores, sizeof cores, "%d core%s", t->mi.cores, PLURAL(t->mi.cores));
    put(0, 0, r.w, A_BOLD | pair(t, PAIR_TITLE), "cnntop %s", CNNTOP_VERSION);
    snprintf(machine, sizeof machine, "%s, %s, OpenBLAS %s | ", t->mi.cpu_model, cores,
             t->mi.blas_core);
    /* The counters' line is whole or replaced by a pointer to where it is
     * whole: a reason cut in the middle reads as another reason. */
    int room = r.w - 13 - fmt_cols(machine);
    put(0, 13, r.w - 13, A_NORMAL, "%s%s", machine,
        fmt_cols(t->ctr_desc) <= room ? t->ctr_desc : "counters: see IPC chart");
    /* The run's own copy of its directory: its engine may be gone. */
    const char *dir = t->rv.data_dir[0] ? t->rv.data_dir
                      : t->set.data[0] ? t->set.data : CN_DEFAULT_DATA_DIR;
    char tail[160];
    if (t->rv.train_images)
        snprintf(tail, sizeof tail, ": %ld training, %ld test images", t->rv.train_images,
                 t->rv.test_images);
    else
        snprintf(tail, sizeof tail, " (read when a run starts)");
    fmt_fit_tail(path, sizeof path, dir, r.w - 5 - fmt_cols(tail));
    put(1, 0, r.w, A_NORMAL, "data %s%s", path, tail);
    header_state(t, 2);
    if (r.h > 3) {
        char w[512];
        header_warning(t, r.w, w, sizeof w);
        put(3, 0, 2, A_BOLD | pair(t, PAIR_WARN), "! ");
        put_wrapped(3, 2, r.w - 2, r.h - 3, A_BOLD | pair(t, PAIR_WARN), w);
    }
}

/* --- status line --------------------------------------------------- */

static const char *const tab_names[VIEW_COUNT] = {" main ", " layers ", " history "};

/* A prompt in w columns: the label, what is typed and a cursor, then the
 * hint.  Where that does not fit, the short label and no hint; where the
 * input still does not fit, its tail, so that the end being typed shows. */
static void draw_prompt(int y, int w, const char *label, const char *brief, const char *input,
                        const char *hint)
{
    char tail[600];

    if (fmt_cols(label) + fmt_cols(input) + 1 + fmt_cols(hint) <= w) {
        put(y, 0, w, A_BOLD, "%s%s_%s", label, input, hint);
        return;
    }
    fmt_fit_tail(tail, sizeof tail, input, w - fmt_cols(brief) - 1);
    put(y, 0, w, A_BOLD, "%s%s_", brief, tail);
}

static void draw_status(Tui *t)
{
    const Rect r = t->lay.status;
    int tabs_w = 0;

    for (int i = 0; i < VIEW_COUNT; i++)
        tabs_w += fmt_cols(tab_names[i]);
    int x = r.w - tabs_w;
    for (int i = 0; i < VIEW_COUNT; i++) {
        put(r.y, x, r.w - x, i == (int)t->view ? A_REVERSE | A_BOLD : A_DIM, "%s", tab_names[i]);
        x += fmt_cols(tab_names[i]);
    }
    int w = r.w - tabs_w - 1;
    if (t->prompt == PROMPT_QUIT) {
        put(r.y, 0, w, A_BOLD | pair(t, PAIR_WARN), "run %d is going: stop it and quit? (y/n)",
            t->rv.seq);
    } else if (t->prompt == PROMPT_EXPORT) {
        draw_prompt(r.y, w, "export to (.json .csv .md, Enter writes, Esc cancels): ",
                    "export to: ", t->input, "");
    } else if (t->prompt == PROMPT_EDIT) {
        char name[64];
        snprintf(name, sizeof name, "%s = ", tui_setting_name(t->sel));
        draw_prompt(r.y, w, name, name, t->input, "   (Enter sets, Esc cancels)");
    } else if (t->status[0] && t->now - t->status_t < 8.0) {
        /* A message longer than the room beside the tabs hides them while
         * it shows, rather than lose its end. */
        int mw = fmt_cols(t->status) > w ? r.w : w;
        if (mw > w)
            put(r.y, 0, r.w, A_NORMAL, "%*s", r.w, "");
        put(r.y, 0, mw, t->status_err ? A_BOLD | pair(t, PAIR_BAD) : A_NORMAL, "%s", t->status);
    } else {
        /* At 80 columns without "Tab view" (the tabs show beside it), so
         * that help and quit are not the keys cut off. */
        const char *keys = "s start  x stop  w/W workers  b/B batch  Tab view  ? help  q quit";
        put(r.y, 0, w, A_DIM, "%s",
            fmt_cols(keys) <= w ? keys : "s start  x stop  w/W workers  b/B batch  ? help  q quit");
    }
}

/* --- charts -------------------------------------------------------- */

typedef struct ChartSpec {
    const char *name;
    char now[96];      /* the current value, e.g. "now 1.52k" */
    char brief[48];    /* "" or a shorter `now` for a title too narrow for it */
    const double *t, *v;
    int n;
    int pct;           /* values are 0..1 shown as % with a fixed top of 100% */
    const char *na;    /* non-NULL: the chart is n/a for this reason */
} ChartSpec;

/* The time window [*t0, *t1) of the charts, seconds into the run. */
static void chart_window(const Tui *t, double *t0, double *t1)
{
    int w = tui_window_seconds(t->win);
    double end = t->nsamples ? t->samples[t->nsamples - 1].t : 0;

    if (t->paused)
        end = t->pause_t1;
    if (w) {
        *t1 = end > w ? end : w;
        *t0 = *t1 - w;
    } else {
        *t0 = 0;
        *t1 = end > 1 ? end : 1;
    }
}

/* 1 when "n/a: text" wraps into the rows of chart r. */
static int chart_text_fits(Rect r, const char *text)
{
    char na[600];

    snprintf(na, sizeof na, "n/a: %s", text);
    return wrapped_rows(na, r.w - 3, r.h) <= r.h - 1;
}

static void draw_chart(Tui *t, Rect r, ChartSpec *cs)
{
    static unsigned char cells[MAX_ROWS * MAX_COLS];
    static double vals[CHART_MAX_BUCKETS];
    char win[48], lab[32], cell[4];
    int w = tui_window_seconds(t->win);

    if (r.h < 2 || r.w < 12)
        return;
    if (t->paused)
        snprintf(win, sizeof win, "[paused at %.0fs]", t->pause_t1);
    else if (w)
        snprintf(win, sizeof win, "[%dm]", w / 60);
    else
        snprintf(win, sizeof win, "[run]");
    Rect tr = r;
    tr.w = r.w - fmt_cols(win) - 2;
    int narrow = fmt_cols(cs->name) + 1 + fmt_cols(cs->now) > tr.w;
    /* Paused, the title's current value would move under a frozen chart. */
    title(t, tr, cs->name, t->paused ? "" : narrow && cs->brief[0] ? cs->brief : cs->now);
    put(r.y, r.x + r.w - fmt_cols(win) - 1, fmt_cols(win), A_DIM, "%s", win);
    int rows = r.h - 1, axis = 6, pw = r.w - axis - 2;
    if (rows > MAX_ROWS)
        rows = MAX_ROWS;
    if (pw > MAX_COLS)
        pw = MAX_COLS;
    if (cs->na) {
        char na[600];
        snprintf(na, sizeof na, "n/a: %s", cs->na);
        int need = (fmt_cols(na) + r.w - 4) / (r.w - 3);
        int y0 = r.y + 1 + (rows > need ? (rows - need) / 2 : 0);
        put_wrapped(y0, r.x + 2, r.w - 3, rows, A_DIM, na);
        return;
    }
    double t0, t1;
    chart_window(t, &t0, &t1);
    /* Paused: what had arrived by then, even while the window is not yet
     * full (the samples go on arriving behind the frozen picture). */
    int n = cs->n;
    while (t->paused && n > 0 && cs->t[n - 1] > t->pause_t1)
        n--;
    int nd = t->utf8 ? 2 * pw : pw;
    if (nd > CHART_MAX_BUCKETS)
        nd = CHART_MAX_BUCKETS;
    chart_bucket(cs->t, cs->v, n, t0, t1, vals, nd);
    chart_fill_gaps(vals, nd);
    double mx = 0;
    for (int i = 0; i < nd; i++)
        if (!isnan(vals[i]) && vals[i] > mx)
            mx = vals[i];
    double hi = cs->pct ? 1.0 : chart_nice_max(mx);
    chart_plot(vals, 0.0, hi, rows, nd / (t->utf8 ? 2 : 1), t->utf8, cells);
    int cols = nd / (t->utf8 ? 2 : 1);
    if (cs->pct)
        snprintf(lab, sizeof lab, "100%%");
    else
        fmt_si(lab, sizeof lab, hi);
    put(r.y + 1, r.x, axis, A_DIM, "%*s", axis, lab);
    put(r.y + rows, r.x, axis, A_DIM, "%*s", axis, "0");
    for (int y = 0; y < rows; y++)
        put(r.y + 1 + y, r.x + axis, 1, A_DIM, "%s", t->utf8 ? "\xe2\x94\x82" : "|");
    /* Segment boundaries: a mark in the empty cells of their column. */
    static unsigned char marked[MAX_COLS];
    memset(marked, 0, (size_t)cols);
    for (int s = 1; s < t->nsegs; s++) {
        double ts = t->segs[s].t0;
        if (ts >= t0 && ts < t1 && !(t->paused && ts > t->pause_t1))
            marked[(int)((ts - t0) / (t1 - t0) * cols)] = 1;
    }
    for (int y = 0; y < rows; y++) {
        move(r.y + 1 + y, r.x + axis + 1);
        for (int x = 0; x < cols; x++) {
            unsigned char c = cells[y * cols + x];
            if (marked[x] && chart_cell_blank(c, t->utf8)) {
                attrset(pair(t, PAIR_MARK) | A_DIM);
                addstr(t->utf8 ? "\xe2\x94\x8a" : ":");
            } else {
                attrset(pair(t, PAIR_CHART));
                addstr(chart_cell_text(c, t->utf8, cell));
            }
        }
    }
    attrset(A_NORMAL);
}

/* Fills t->tbuf/t->vbuf with one field of the samples. */
static int sample_series(Tui *t, int field)
{
    int n = t->nsamples;

    for (int i = 0; i < n; i++) {
        const Sample *s = &t->samples[i];
        t->tbuf[i] = s->t;
        switch (field) {
        case 0: t->vbuf[i] = s->images_per_s; break;
        case 1: t->vbuf[i] = s->queue_fill < 0 ? NAN : s->queue_fill; break;
        default: t->vbuf[i] = isfinite(s->loss) ? s->loss : NAN; break;
        }
    }
    return n;
}

/* Why there is nothing to show of the current run: the same words on
 * every chart and figure, so that a failed run never reads "waiting". */
static const char *no_run_why(const Tui *t, char *buf, size_t len)
{
    if (!t->rv.seq)
        snprintf(buf, len, "no run yet");
    else if (t->rv.state == RUN_FAILED)
        snprintf(buf, len, "run %d failed", t->rv.seq);
    else if (t->rv.state == RUN_LOADING)
        snprintf(buf, len, "run %d is loading", t->rv.seq);
    else if (t->rv.state == RUN_STOPPED || t->rv.state == RUN_FINISHED)
        snprintf(buf, len, "run %d trained no step", t->rv.seq);
    else
        snprintf(buf, len, "waiting for the first samples");
    return buf;
}

static void draw_charts(Tui *t)
{
    ChartSpec cs;
    char a[32], b[32], none[64], none_s[80];
    int running = t->have_live && t->live.running;

    no_run_why(t, none, sizeof none);
    snprintf(none_s, sizeof none_s, "%s%s", none, t->rv.seq ? "" : " (s starts one)");
    memset(&cs, 0, sizeof cs);
    cs.name = "images/s";
    cs.n = sample_series(t, 0);
    cs.t = t->tbuf;
    cs.v = t->vbuf;
    if (running)
        snprintf(cs.now, sizeof cs.now, "now %s", fmt_si(a, sizeof a, t->live.images_per_s_now));
    if (!t->nsamples)
        cs.na = none_s;
    draw_chart(t, t->lay.chart[CHART_IPS], &cs);

    memset(&cs, 0, sizeof cs);
    cs.name = "IPC";
    cs.t = t->ipc.t;
    cs.v = t->ipc.v;
    cs.n = t->ipc.n;
    /* While a run trains, the figures now; after it, the run's own: its
     * chart stays until the next run starts, as the images/s chart does. */
    const TuiCounterFigs *cf = running ? &t->ctr : t->rv.seq ? &t->ctr_run : &t->ctr;
    if (cf->ipc_ok)
        snprintf(cs.now, sizeof cs.now, "%s %.2f  miss %s", running ? "now" : "last", cf->ipc,
                 cf->miss_ok ? (snprintf(b, sizeof b, "%.1f%%", 100 * cf->miss_rate), b)
                             : "n/a");
    else
        snprintf(cs.now, sizeof cs.now, "and cache-miss rate");
    char na[300];
    if (!series_has_value(&t->ipc)) {
        const char *why = cf->why[0] ? cf->why : t->ctr.why;
        int pending = !strncmp(why, "counting", 8) || !strncmp(why, "no run", 6);
        snprintf(na, sizeof na, "%s%s", why,
                 pending ? "" : "; `cnntop events` lists what this machine counts");
        /* The pointer to `cnntop events` only where the reason keeps room. */
        if (!chart_text_fits(t->lay.chart[CHART_COUNTERS], na))
            snprintf(na, sizeof na, "%s", why);
        cs.na = na;
    }
    draw_chart(t, t->lay.chart[CHART_COUNTERS], &cs);

    memset(&cs, 0, sizeof cs);
    cs.name = "loader queue";
    cs.n = sample_series(t, 1);
    cs.t = t->tbuf;
    cs.v = t->vbuf;
    cs.pct = 1;
    if (t->have_live) {
        if (t->live.queue_cap > 0)
            snprintf(cs.now, sizeof cs.now, "%d/%d batches", t->live.queue_filled,
                     t->live.queue_cap);
        else
            snprintf(cs.now, sizeof cs.now, "none: workers 0 load inline");
        snprintf(cs.brief, sizeof cs.brief, "%s", t->live.queue_cap > 0 ? "" : "none: inline");
    }
    if (!t->nsamples)
        cs.na = none;
    draw_chart(t, t->lay.chart[CHART_QUEUE], &cs);

    memset(&cs, 0, sizeof cs);
    cs.name = "loss";
    cs.n = sample_series(t, 2);
    cs.t = t->tbuf;
    cs.v = t->vbuf;
    if (t->rv.have_p)
        snprintf(cs.now, sizeof cs.now, "now %.4f  epoch mean %.4f", (double)t->rv.p.loss,
                 t->rv.p.epoch_loss);
    if (!t->nsamples)
        cs.na = none;
    draw_chart(t, t->lay.chart[CHART_LOSS], &cs);
}

/* --- figures ------------------------------------------------------- */

typedef struct Lines {
    Rect r;
    int y;
} Lines;

__attribute__((format(printf, 4, 5)))
static void line(Lines *l, attr_t a, const char *label, const char *fmt, ...)
{
    char text[600];
    va_list ap;

    if (l->y >= l->r.y + l->r.h)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    put(l->y, l->r.x, 9, A_BOLD, "%s", label);
    put(l->y, l->r.x + 9, l->r.w - 10, a, "%s", text);
    l->y++;
}

/* A figure in its full form where it fits the panel, else in its brief
 * one: a narrow panel cuts nothing that a shorter wording keeps. */
static void line_fit(Lines *l, attr_t a, const char *label, const char *full, const char *brief)
{
    line(l, a, label, "%s", fmt_cols(full) <= l->r.w - 10 ? full : brief);
}

/* The step split as a bar of letters d f b o, coloured when colours work. */
static void split_bar(Tui *t, Lines *l, const StepSplit *s)
{
    double tot = s->data + s->forward + s->backward + s->optimizer;
    const double part[4] = {s->data, s->forward, s->backward, s->optimizer};
    static const char letter[4] = {'d', 'f', 'b', 'o'};
    static const int pairs[4] = {PAIR_DATA, PAIR_FWD, PAIR_BWD, PAIR_OPT};
    int w = l->r.w - 11, x = l->r.x + 9, used = 0;

    if (l->y >= l->r.y + l->r.h)
        return;
    if (!(tot > 0)) {
        line(l, A_DIM, "step", "n/a: no step timed yet");
        return;
    }
    put(l->y, l->r.x, 9, A_BOLD, "step");
    double acc = 0;
    for (int k = 0; k < 4 && w > 0; k++) {
        acc += part[k];
        int end = (int)(acc / tot * w + 0.5);
        move(l->y, x + used);
        attrset(pair(t, pairs[k]));
        for (; used < end; used++)
            addch((chtype)(unsigned char)letter[k]);
    }
    attrset(A_NORMAL);
    l->y++;
    char full[128], brief[96];
    snprintf(full, sizeof full, "data %.1f%%  fwd %.1f%%  bwd %.1f%%  opt %.1f%%",
             100 * s->data / tot, 100 * s->forward / tot, 100 * s->backward / tot,
             100 * s->optimizer / tot);
    snprintf(brief, sizeof brief, "d %.1f%%  f %.1f%%  b %.1f%%  o %.1f%%", 100 * s->data / tot,
             100 * s->forward / tot, 100 * s->backward / tot, 100 * s->optimizer / tot);
    line_fit(l, A_NORMAL, "", full, brief);
}

static void segment_lines(Tui *t, Lines *l)
{
    char a[64], b[64];

    if (t->nsegs == 0) {
        line(l, A_DIM, "segment", "n/a: %s", no_run_why(t, a, sizeof a));
        return;
    }
    const Segment *c = &t->segs[t->nsegs - 1];
    long nc = c->steps - c->warmup_steps;
    if (nc > 0) {
        char full[160], brief[128];
        snprintf(brief, sizeof brief, "%d b%d w%d p%d %s img/s", t->nsegs, c->batch, c->workers,
                 c->prefetch, fmt_pm(a, sizeof a, c->images_per_s, c->images_per_s_sd));
        snprintf(full, sizeof full, "%s (%ld warm-up step%s out)", brief, c->warmup_steps,
                 PLURAL(c->warmup_steps));
        line_fit(l, A_NORMAL, "segment", full, brief);
    } else {
        char full[160], brief[128];
        snprintf(full, sizeof full, "%d b%d w%d p%d img/s n/a: warming up (%ld step%s)",
                 t->nsegs, c->batch, c->workers, c->prefetch, c->steps, PLURAL(c->steps));
        snprintf(brief, sizeof brief, "%d b%d w%d p%d warming up (%ld step%s)", t->nsegs,
                 c->batch, c->workers, c->prefetch, c->steps, PLURAL(c->steps));
        line_fit(l, A_NORMAL, "segment", full, brief);
    }
    if (t->nsegs < 2) {
        line(l, A_DIM, "before", "n/a: no live change yet (w/W b/B)");
        return;
    }
    const Segment *p = &t->segs[t->nsegs - 2];
    long np = p->steps - p->warmup_steps;
    if (np > 0)
        line(l, A_NORMAL, "before", "%d b%d w%d p%d %s img/s", t->nsegs - 1, p->batch,
             p->workers, p->prefetch, fmt_pm(b, sizeof b, p->images_per_s, p->images_per_s_sd));
    else
        line(l, A_NORMAL, "before", "%d b%d w%d p%d img/s n/a: too short", t->nsegs - 1,
             p->batch, p->workers, p->prefetch);
    if (nc < 2 || np < 2 || !(p->images_per_s > 0)) {
        line_fit(l, A_DIM, "change", "n/a: needs 2 measured steps in each segment",
                 "n/a: too few steps in a segment");
        return;
    }
    double se_c = c->images_per_s_sd / sqrt((double)nc), se_p = p->images_per_s_sd / sqrt((double)np);
    double se = sqrt(se_c * se_c + se_p * se_p), d = c->images_per_s - p->images_per_s;
    double ratio = c->images_per_s / p->images_per_s;
    double rerr = ratio * sqrt(pow(se_c / c->images_per_s, 2) + pow(se_p / p->images_per_s, 2));
    int real = fabs(d) > 2 * se;
    char full[96], brief[64];
    snprintf(full, sizeof full, "x%.3f \xc2\xb1%.3f: %s", ratio, rerr,
             real ? "real (> 2 SE)" : "within noise (< 2 SE)");
    snprintf(brief, sizeof brief, "x%.3f \xc2\xb1%.3f: %s", ratio, rerr,
             real ? "real" : "within noise");
    line_fit(l, real ? A_BOLD | pair(t, ratio >= 1 ? PAIR_GOOD : PAIR_BAD) : A_DIM, "change",
             full, brief);
}

/* IPC and the miss rate, or why not: the reason whole, wrapped. */
static void counter_lines(Tui *t, Lines *l, const TuiCounterFigs *cf)
{
    char a[32], b[32], why[300];

    if (cf->ipc_ok || cf->miss_ok) {
        line(l, A_NORMAL, "counters", "IPC %s  cache misses %s",
             cf->ipc_ok ? (snprintf(a, sizeof a, "%.2f", cf->ipc), a) : "n/a",
             cf->miss_ok ? (snprintf(b, sizeof b, "%.2f%%", 100 * cf->miss_rate), b) : "n/a");
        return;
    }
    if (l->y >= l->r.y + l->r.h)
        return;
    const char *reason = cf->why[0] ? cf->why : t->ctr.why;
    snprintf(why, sizeof why, "n/a: %s", reason);
    int rows = l->r.y + l->r.h - l->y, need = wrapped_rows(why, l->r.w - 10, rows + 1);
    /* A reason cut in the middle reads as another reason: where the rows
     * left cannot hold it, point to the chart that shows it whole. */
    if (need > rows && chart_text_fits(t->lay.chart[CHART_COUNTERS], reason))
        snprintf(why, sizeof why, "n/a: why in the IPC chart above");
    put(l->y, l->r.x, 9, A_BOLD, "%s", "IPC,miss");
    l->y += put_wrapped(l->y, l->r.x + 9, l->r.w - 10, rows, A_DIM, why);
}

/* The verdict (verdict.h, as the summary says it) and, when the run is
 * oversubscribed, the figure and what to try. */
static void verdict_lines(Tui *t, Lines *l, attr_t a, double share, int workers)
{
    VerdictInput vi = {.data_wait_share = share, .workers = workers, .threads = t->rv.threads,
                       .cores = t->mi.cores, .run_queue_wait = t->run_queue_wait};
    Verdict v;

    verdict_judge(&vi, &v);
    line_fit(l, a | pair(t, v.loader_bound ? PAIR_WARN : PAIR_GOOD), "verdict", v.bound,
             v.bound_brief);
    if (!v.oversubscribed || l->y >= l->r.y + l->r.h)
        return;
    /* The figure and what to try, whole: the brief form over two rows
     * where one cannot hold it. */
    attr_t w = A_BOLD | pair(t, PAIR_WARN);
    put(l->y, l->r.x, 9, A_BOLD, "%s", "oversub");
    l->y += l->r.w - 10 >= fmt_cols(v.oversub)
                ? put_wrapped(l->y, l->r.x + 9, l->r.w - 10, 1, w, v.oversub)
                : put_wrapped(l->y, l->r.x + 9, l->r.w - 10, 2, w, v.brief);
}

/* MFU and the executed share against the FMA peak (see cnntop(1)). */
static void peak_line(Tui *t, Lines *l, double ips, int have)
{
    double peak = t->have_calib ? calibrate_peak(&t->calib, NULL) : 0.0;
    char why[64];

    char full[128], brief[96];

    if (!(peak > 0.0)) {
        line_fit(l, A_DIM, "vs peak", "n/a: no FMA peak cached (cnntop calibrate)",
                 "n/a: no peak (cnntop calibrate)");
    } else if (!have) {
        snprintf(full, sizeof full, "FMA peak %.0f GFLOP/s; %s", peak,
                 no_run_why(t, why, sizeof why));
        snprintf(brief, sizeof brief, "FMA peak %.0f GFLOP/s", peak);
        line_fit(l, A_DIM, "vs peak", full, brief);
    } else {
        double mfu = 100 * ips * t->flops_per_image / (peak * 1e9),
               ex = 100 * ips * t->flops_executed_per_image / (peak * 1e9);
        snprintf(full, sizeof full, "MFU %.1f%%  executed %.1f%% of %.0f GFLOP/s", mfu, ex, peak);
        snprintf(brief, sizeof brief, "MFU %.0f%% exec %.0f%% of %.0f GFLOP/s", mfu, ex, peak);
        line_fit(l, A_NORMAL, "vs peak", full, brief);
    }
}

static void draw_figures(Tui *t)
{
    Rect r = t->lay.figures;
    Lines l = {r, r.y + 1};
    char a[64], b[64], c[64], d[64];
    int running = t->have_live && t->live.running;
    const TrainStats *st = &t->rv.st;

    if (r.h < 2)
        return;
    title(t, r, "figures", running ? "(live)" : t->rv.have_st ? "(last run)" : "");
    if (running) {
        line(&l, A_BOLD, "images/s", "now %s  run %s  GFLOP/s %s",
             fmt_si(a, sizeof a, t->live.images_per_s_now),
             fmt_si(b, sizeof b, t->live.p.images_per_s),
             fmt_si(c, sizeof c, t->live.images_per_s_now * t->flops_per_image * 1e-9));
        split_bar(t, &l, &t->live.split);
    } else if (t->rv.have_st && st->steps > 0) {
        line(&l, A_BOLD, "images/s", "run %s  GFLOP/s %s", fmt_si(a, sizeof a, st->images_per_s),
             fmt_si(c, sizeof c, st->images_per_s * t->flops_per_image * 1e-9));
        split_bar(t, &l, &st->split);
    } else {
        line(&l, A_DIM, "images/s", "n/a: %s", no_run_why(t, c, sizeof c));
        line(&l, A_DIM, "step", "n/a: %s", c);
    }
    peak_line(t, &l, running ? t->live.images_per_s_now : st->images_per_s,
              running || (t->rv.have_st && st->steps > 0));
    /* Between runs the process idles: its last second says nothing, the
     * last run's mean does. */
    if (running || t->rv.state == RUN_LOADING || t->rv.state == RUN_EVALUATING)
        snprintf(d, sizeof d, "%s", isnan(t->cpu_util) ? "n/a: measuring"
                                    : (snprintf(b, sizeof b, "%.2f cores busy", t->cpu_util), b));
    else if (t->rv.seq && isfinite(t->run_cores))
        snprintf(d, sizeof d, "%.2f cores (run %d)", t->run_cores, t->rv.seq);
    else
        snprintf(d, sizeof d, "idle");
    char full[200], brief[200];
    fmt_bytes(a, sizeof a, (double)machine_peak_rss_kib() * 1024.0);
    snprintf(full, sizeof full, "%s  RSS peak %s", d, a);
    snprintf(brief, sizeof brief, "%s  RSS %s", d, a);
    line_fit(&l, A_NORMAL, "CPU", full, brief);
    if (running) {
        verdict_lines(t, &l, A_BOLD, t->live.data_wait_share, t->live.workers);
        if (t->live.workers > 0) {
            fmt_si(a, sizeof a, t->live.load_samples_per_s);
            snprintf(full, sizeof full, "%d worker%s, queue %d/%d, alone %s/s", t->live.workers,
                     PLURAL(t->live.workers), t->live.queue_filled, t->live.queue_cap, a);
            snprintf(brief, sizeof brief, "%d wkr, queue %d/%d, alone %s/s", t->live.workers,
                     t->live.queue_filled, t->live.queue_cap, a);
            line_fit(&l, A_NORMAL, "loader", full, brief);
        } else {
            line(&l, A_NORMAL, "loader", "inline on the trainer (workers 0)");
        }
    } else if (t->rv.have_st && st->steps > 0) {
        double tot = st->split.data + st->split.forward + st->split.backward + st->split.optimizer;
        verdict_lines(t, &l, A_NORMAL, tot > 0 ? st->split.data / tot : 0,
                      t->nsegs ? t->segs[t->nsegs - 1].workers : t->rv.cfg.workers);
    } else {
        line(&l, A_DIM, "verdict", "n/a: %s", no_run_why(t, c, sizeof c));
    }
    segment_lines(t, &l);
    counter_lines(t, &l, running ? &t->ctr : t->rv.seq ? &t->ctr_run : &t->ctr);
    /* Where there is room: every segment of the run. */
    if (l.y + 2 < r.y + r.h && t->nsegs > 1) {
        l.y++;
        line(&l, A_BOLD, "segments", "  batch wkrs pref  steps   img/s");
        for (int i = 0; i < t->nsegs && l.y < r.y + r.h; i++) {
            const Segment *s = &t->segs[i];
            line(&l, i == t->nsegs - 1 ? A_BOLD : A_NORMAL, "", "%2d %5d %4d %4d %6ld  %s", i + 1,
                 s->batch, s->workers, s->prefetch, s->steps,
                 s->steps > s->warmup_steps ? fmt_pm(a, sizeof a, s->images_per_s, s->images_per_s_sd)
                                            : "warming up");
        }
    }
}

/* --- settings ------------------------------------------------------ */

/* Setting i's value cut to w columns so that two different values never
 * look alike: augment by its initials, a path by its tail, anything else
 * marked with '~' (the whole value is in the status line when chosen). */
static void setting_cell(int i, const char *val, int w, char *buf, size_t len)
{
    char ini[64];

    if (fmt_cols(val) <= w)
        snprintf(buf, len, "%s", val);
    else if (i == SET_AUGMENT && fmt_cols(fmt_initials(ini, sizeof ini, val)) <= w)
        snprintf(buf, len, "%s", ini);
    else if (i == SET_DATA)
        fmt_fit_tail(buf, len, val, w);
    else
        fmt_fit(buf, len, val, w);
}

int tui_settings_value_cols(const Tui *t)
{
    /* The value columns take the room there is: 2 + 9 name + 2 x (w + 1) + 4. */
    int vw = (t->lay.settings.w - 2 - 9 - 2 - 4) / 2;
    return vw < 9 ? 9 : vw > 40 ? 40 : vw;
}

static void draw_settings(Tui *t)
{
    Rect r = t->lay.settings;
    char next[600], cur[600], cn[600], cc[600];
    int running = t->rv.seq && t->rv.state != RUN_FAILED;
    RunConfig rc = t->rv.cfg;

    if (r.h < 2)
        return;
    if (t->have_live) {
        rc.batch = t->live.batch;
        rc.workers = t->live.workers;
        rc.prefetch = t->live.prefetch;
    }
    rc.threads = t->rv.threads ? t->rv.threads : rc.threads;
    int vw = tui_settings_value_cols(t);
    put(r.y, r.x, r.w, A_BOLD | pair(t, PAIR_TITLE), "%-11s%*s %*s", "settings", vw, "next run",
        vw, t->rv.state == RUN_TRAINING ? "running" : "last run");
    int vis = r.h - 1, top = t->sel >= vis ? t->sel - vis + 1 : 0;
    for (int k = 0; k < vis && top + k < SET_COUNT; k++) {
        int i = top + k, y = r.y + 1 + k;
        tui_setting_format(t, i, &t->set.cfg, t->set.data, next, sizeof next);
        if (t->prompt == PROMPT_EDIT && i == t->sel)
            snprintf(next, sizeof next, "%.100s_", t->input);
        if (running)
            tui_setting_format(t, i, &rc, t->rv.data_dir, cur, sizeof cur);
        else
            snprintf(cur, sizeof cur, "-");
        setting_cell(i, next, vw, cn, sizeof cn);
        setting_cell(i, cur, vw, cc, sizeof cc);
        attr_t a = i == t->sel ? A_REVERSE : A_NORMAL;
        put(y, r.x, r.w, a, "%c %-9s%*s %*s %s", i == t->sel ? '>' : ' ', tui_setting_name(i),
            vw + (int)strlen(cn) - fmt_cols(cn), cn, vw + (int)strlen(cc) - fmt_cols(cc), cc,
            tui_setting_live(i) ? "live" : "new");
    }
}

/* --- history ------------------------------------------------------- */

/* The history view's full row needs this many columns up to its state; a
 * narrower view drops the prefetch and repeats columns and tightens the
 * others, so that the speedup and the state stay whole at 80 columns. */
#define HIST_FULL_COLS 93

static void history_row(Tui *t, int i, int y, Rect r, int full)
{
    const HistRow *h = &t->hist.rows[i];
    char aug[64], acc[32], sp[64], ips[32], wall[32], len[32];
    double ratio, err;

    char aug_all[64];
    options_format_augment(h->augment, aug_all, sizeof aug_all);
    int narrow = full && r.w < HIST_FULL_COLS;
    setting_cell(SET_AUGMENT, aug_all, narrow ? 7 : 8, aug, sizeof aug);
    if (isnan(h->accuracy))
        snprintf(acc, sizeof acc, "n/a");
    else
        snprintf(acc, sizeof acc, "%.2f%%", 100 * h->accuracy);
    const char *why = tuihist_why_not(h);
    if (i == t->hist.baseline)
        snprintf(sp, sizeof sp, "baseline");
    else if (why)
        snprintf(sp, sizeof sp, "n/a: %s", why);
    else if (t->hist.baseline < 0)
        snprintf(sp, sizeof sp, "n/a: m marks one");
    else if (tuihist_speedup(&t->hist, i, &ratio, &err) != 0)
        snprintf(sp, sizeof sp, "n/a");
    else if (isnan(err))
        snprintf(sp, sizeof sp, "x%.2f (1 run)", ratio);
    else
        snprintf(sp, sizeof sp, "x%.2f \xc2\xb1%.2f", ratio, err);
    if (h->steps)
        snprintf(len, sizeof len, "%lds", h->steps);
    else
        snprintf(len, sizeof len, "%de", h->epochs);
    attr_t a = full && i == t->hist_sel ? A_REVERSE : h->session ? A_NORMAL : A_DIM;
    char num[16], thr[16];
    /* 0: the run failed before it resolved "all cores" to a count. */
    snprintf(thr, sizeof thr, h->threads > 0 ? "%d" : "all", h->threads);
    if (h->run > 0)
        snprintf(num, sizeof num, "%d", h->run);
    else
        snprintf(num, sizeof num, "-");
    if (h->steps_done > 0) {
        fmt_si(ips, sizeof ips, h->ips);
        fmt_duration(wall, sizeof wall, h->wall);
    } else {
        snprintf(ips, sizeof ips, "-");
        snprintf(wall, sizeof wall, "-");
    }
    if (narrow) {
        put(y, r.x, r.w, a, "%3s%c %5d %3d %3s %-7.7s %5s %6s %6s %7s %-16s %s", num,
            i == t->hist.baseline ? '*' : ' ', h->batch, h->workers, thr, aug, len, wall,
            ips, acc, sp, h->state);
    } else if (full) {
        double mean, sd;
        char grp[64];
        int n = tuihist_group(&t->hist, i, &mean, &sd);
        if (n > 1)
            snprintf(grp, sizeof grp, "%s (%d runs)", fmt_pm(grp + 32, 32, mean, sd), n);
        else
            snprintf(grp, sizeof grp, "-");
        put(y, r.x, r.w, a, "%3s%c %5d %4d %4d %3s %-8.8s %6s %7s %7s %8s %-16s %-9s %-22s", num,
            i == t->hist.baseline ? '*' : ' ', h->batch, h->workers, h->prefetch, thr, aug,
            len, wall, ips, acc, sp, h->state, grp);
    } else {
        put(y, r.x, r.w, a, "%3s%c %5d %4d %3s %-8.8s %6s %7s %7s %8s %-16s %s", num,
            i == t->hist.baseline ? '*' : ' ', h->batch, h->workers, thr, aug, len, wall,
            ips, acc, sp, h->state);
    }
}

/* The history view's last rows: the chosen run's reason, whole, and what
 * its speedup column means. */
static void history_detail(Tui *t, Rect r, int vis)
{
    char text[400];

    if (t->hist_sel < 0 || t->hist_sel >= t->hist.n || vis < 6 || t->hist.n > vis - 3)
        return;
    const HistRow *h = &t->hist.rows[t->hist_sel];
    const char *why = tuihist_why_not(h);
    if (h->why[0])
        snprintf(text, sizeof text, "run %d failed: %s", h->run, h->why);
    else if (why && h->live)
        snprintf(text, sizeof text, "run %d changed settings live: its images/s mixes them, so it "
                 "is compared with no run (nor can it be the baseline)", h->run);
    else if (why)
        snprintf(text, sizeof text, "run %d: %s, so no images/s to compare", h->run, why);
    else
        snprintf(text, sizeof text, "speedup: a configuration's mean images/s over the baseline's "
                 "(m marks the chosen run); any two runs without live changes compare");
    put_wrapped(r.y + r.h - 2, r.x, r.w, 2, A_DIM, text);
}

static void draw_history(Tui *t, Rect r, int full)
{
    if (r.h < 2)
        return;
    if (full && r.w < HIST_FULL_COLS)
        put(r.y, r.x, r.w, A_BOLD | pair(t, PAIR_TITLE),
            "%4s %5s %3s %3s %-7s %5s %6s %6s %7s %-16s %s", "run", "batch", "wkr", "thr",
            "augment", "len", "wall", "img/s", "acc", "speedup", "state");
    else if (full)
        put(r.y, r.x, r.w, A_BOLD | pair(t, PAIR_TITLE),
            "%4s %5s %4s %4s %3s %-8s %6s %7s %7s %8s %-16s %-9s %s", "run", "batch", "wkrs", "pref",
            "thr", "augment", "length", "wall", "img/s", "accuracy", "speedup", "state",
            "repeats img/s");
    else
        put(r.y, r.x, r.w, A_BOLD | pair(t, PAIR_TITLE),
            "%4s %5s %4s %3s %-8s %6s %7s %7s %8s %-16s %s", "run", "batch", "wkrs", "thr",
            "augment", "length", "wall", "img/s", "accuracy", "speedup", "state");
    int vis = r.h - 1;
    if (t->hist.n == 0) {
        put(r.y + 1, r.x, r.w, A_DIM, "no run yet: a row appears here after each run");
        return;
    }
    int top = full ? t->table_top : (t->hist.n > vis ? t->hist.n - vis : 0);
    if (full) {
        if (t->hist_sel < top)
            top = t->hist_sel;
        if (t->hist_sel >= top + vis)
            top = t->hist_sel - vis + 1;
        t->table_top = top;
    }
    for (int k = 0; k < vis && top + k < t->hist.n; k++)
        history_row(t, top + k, r.y + 1 + k, r, full);
    if (full)
        history_detail(t, r, vis);
}

/* --- per-layer table ----------------------------------------------- */

static const LayerTime *sort_base;
static int sort_mode;

static int layer_cmp(const void *a, const void *b)
{
    const LayerTime *x = &sort_base[*(const int *)a], *y = &sort_base[*(const int *)b];
    if (sort_mode == 1)
        return x->seconds < y->seconds ? 1 : x->seconds > y->seconds ? -1 : 0;
    if (sort_mode == 2)
        return strcmp(x->name, y->name);
    return *(const int *)a - *(const int *)b;
}

static void draw_layers(Tui *t)
{
    Rect r = t->lay.table;
    const RunView *v = &t->rv;
    int idx[TUIRUN_MAX_LAYERS];
    double total = 0;
    static const char *const order[] = {"step order", "time", "name"};
    char gf[48];

    put(r.y, r.x, r.w, A_BOLD | pair(t, PAIR_TITLE),
        "%-22s %9s %7s %9s %8s %5s %6s   sorted by %s (o changes)%s", "layer", "ms/step",
        "share", "GFLOP/s", "calls", "IPC", "miss", order[t->set.sort],
        v->state == RUN_TRAINING ? ", live" : "");
    if (v->nprof == 0 || v->prof_steps == 0) {
        put(r.y + 1, r.x, r.w, A_DIM, "n/a: no step timed yet (s starts a run)");
        return;
    }
    for (int i = 0; i < v->nprof; i++) {
        idx[i] = i;
        total += v->prof[i].seconds;
    }
    sort_base = v->prof;
    sort_mode = t->set.sort;
    qsort(idx, (size_t)v->nprof, sizeof idx[0], layer_cmp);
    int vis = r.h - 2;
    if (t->table_top > v->nprof - 1)
        t->table_top = v->nprof - 1;
    for (int k = 0; k < vis && t->table_top + k < v->nprof; k++) {
        const LayerTime *lt = &v->prof[idx[t->table_top + k]];
        double per = lt->calls ? lt->seconds / (double)lt->calls : 0;
        if (lt->flops <= 0)
            snprintf(gf, sizeof gf, "-");
        else
            snprintf(gf, sizeof gf, "%.1f", lt->seconds > 0 ? lt->flops / lt->seconds * 1e-9 : 0.0);
        double share = total > 0 ? lt->seconds / total : 0;
        char bar[64], ipc[16] = "n/a", miss[16] = "n/a";
        if (isfinite(lt->ipc))
            snprintf(ipc, sizeof ipc, "%.2f", lt->ipc);
        if (isfinite(lt->miss_rate))
            snprintf(miss, sizeof miss, "%.1f%%", 100 * lt->miss_rate);
        int bw = r.w - 75;
        if (bw > 40)
            bw = 40;
        bar[0] = '\0';
        if (bw >= 4)
            fmt_bar(bar, sizeof bar, share, bw);
        put(r.y + 1 + k, r.x, r.w, A_NORMAL, "%-22s %9.3f %6.1f%% %9s %8ld %5s %6s   %s",
            lt->name, 1e3 * per, 100 * share, gf, lt->calls, ipc, miss, bar);
    }
    put(r.y + r.h - 1, r.x, r.w, A_DIM, "%s%s%s",
        "GFLOP/s: the engine's FLOP count of each GEMM layer; - for the elementwise ones",
        t->ctr.ipc_ok ? "" : "; IPC, miss n/a: ", t->ctr.ipc_ok ? "" : t->ctr.why);
}

/* --- help and too small -------------------------------------------- */

static void draw_help(Tui *t)
{
    static const char *const keys[] = {
        "s, Enter       start a run with the next-run settings",
        "x              stop the run after the current step (it is still evaluated)",
        "q, F10         quit (asks when a run is going); Ctrl-C does the same",
        "Up/Down        choose a setting (main view), a row (history), scroll (layers)",
        "Left/Right +/- change the chosen setting; typing digits sets it, c types any value",
        "b / B          halve / double the batch size (live: at the next step)",
        "w / W          one loader worker fewer / more (live)",
        "               batch, workers, prefetch apply live; the rest to the next run",
        "m              mark the baseline run (the chosen row in the history view);",
        "               not a run with a live change, a failed one or one without a step",
        "e              export the last run (asks the file name: .json .csv .md)",
        "Tab, Shift-Tab cycle the views: main, per-layer, history",
        "o              change the per-layer table's order",
        "p              freeze the charts (training goes on); Left/Right scroll in the run",
        "t              cycle the chart window: 1 min, 5 min, 15 min, the whole run",
        "?, h, F1       this help; any key closes it",
        "mouse          click a setting, a history row or a view's name",
    };
    int n = (int)(sizeof keys / sizeof keys[0]);
    int w = 86 < t->lay.cols - 2 ? 86 : t->lay.cols - 2, h = n + 6;
    if (h > t->lay.lines - 2)
        h = t->lay.lines - 2;
    int y0 = (t->lay.lines - h) / 2, x0 = (t->lay.cols - w) / 2;
    for (int y = 0; y < h; y++) {
        move(y0 + y, x0);
        attrset(A_REVERSE);
        for (int x = 0; x < w; x++)
            addch(' ');
    }
    put(y0, x0 + 2, w - 4, A_REVERSE | A_BOLD, "cnntop %s: keys", CNNTOP_VERSION);
    for (int i = 0; i < n && i + 2 < h - 3; i++)
        put(y0 + 2 + i, x0 + 2, w - 4, A_REVERSE, "%s", keys[i]);
    char cost[128];
    if (isnan(t->ui_share))
        snprintf(cost, sizeof cost, "n/a: measuring (1 s)");
    else
        snprintf(cost, sizeof cost, "%.2f%% of one core", 100 * t->ui_share);
    put(y0 + h - 2, x0 + 2, w - 4, A_REVERSE, "dashboard (UI thread) CPU: %s, redrawn at 10 Hz;  %s",
        cost, t->utf8 ? "charts in braille" : "charts in ASCII (locale not UTF-8)");
    attrset(A_NORMAL);
}

static void draw_too_small(Tui *t)
{
    put(0, 0, t->lay.cols, A_BOLD, "terminal too small: %dx%d", t->lay.cols, t->lay.lines);
    put(1, 0, t->lay.cols, A_NORMAL, "cnntop needs at least %dx%d", t->lay.need_cols,
        t->lay.need_lines);
    put(2, 0, t->lay.cols, A_DIM, "q quits");
}

/* --- the frame ----------------------------------------------------- */

void tui_draw(Tui *t)
{
    layout_compute(&t->lay, COLS, LINES, t->view, 3 + header_warning_rows(t, COLS));
    erase();
    if (t->lay.too_small) {
        draw_too_small(t);
        refresh();
        return;
    }
    draw_header(t);
    if (t->view == VIEW_MAIN) {
        draw_charts(t);
        draw_figures(t);
        draw_settings(t);
        draw_history(t, t->lay.history, 0);
    } else if (t->view == VIEW_LAYERS) {
        draw_layers(t);
    } else {
        draw_history(t, t->lay.table, 1);
    }
    draw_status(t);
    if (t->help)
        draw_help(t);
    refresh();
}


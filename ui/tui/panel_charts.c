/*
 * panel_charts.c: the main view's four charts (images/s, IPC, the loader
 * queue, the loss), each a class of its own over one chart drawer.
 *
 * A chart is the run's series over the chosen window (1, 5 or 15 minutes,
 * or the whole run), bucketed into the panel's columns (two per cell in
 * braille), with its current value in the title, the live changes marked
 * as dotted columns, and "n/a: <reason>" in its place when there is
 * nothing to plot.  Paused, the picture freezes at pause_t1.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "tui/draw.h"
#include "tui/panel.h"

#define MAX_ROWS 256
#define MAX_COLS 512

/* The time window [*t0, *t1) of the charts, seconds into the run. */
static void chart_window(const Tui *t, const ChartSpec *cs, double *t0, double *t1)
{
    int w = tui_window_seconds(t->win);
    double end = cs->own_end ? cs->end : t->nsamples ? t->samples[t->nsamples - 1].t : 0;

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

/* The title row: the name, the current value (or its brief form where
 * the title is narrow) and the window at the right. */
static void chart_title(Tui *t, Rect r, const ChartSpec *cs)
{
    char win[48];
    int w = tui_window_seconds(t->win);

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
    draw_title(t, tr, cs->name, t->paused ? "" : narrow && cs->brief[0] ? cs->brief : cs->now);
    draw_put(r.y, r.x + r.w - fmt_cols(win) - 1, fmt_cols(win), A_DIM, "%s", win);
}

/* The axis: the top value, 0 and the rule, left of the plot. */
static void chart_axis(Tui *t, Rect r, int rows, int axis, int pct, double hi)
{
    char lab[32];

    if (pct)
        snprintf(lab, sizeof lab, "100%%");
    else
        fmt_si(lab, sizeof lab, hi);
    draw_put(r.y + 1, r.x, axis, A_DIM, "%*s", axis, lab);
    draw_put(r.y + rows, r.x, axis, A_DIM, "%*s", axis, "0");
    for (int y = 0; y < rows; y++)
        draw_put(r.y + 1 + y, r.x + axis, 1, A_DIM, "%s", t->utf8 ? "\xe2\x94\x82" : "|");
}

/* The plotted cells (rows x cols from (y, x)), with the segment
 * boundaries of [t0, t1) marked in the empty cells of their column. */
static void chart_cells(Tui *t, int y0, int x0, int rows, int cols, const unsigned char *cells,
                        double t0, double t1)
{
    static unsigned char marked[MAX_COLS];
    char cell[4];

    memset(marked, 0, (size_t)cols);
    for (int s = 1; s < t->nsegs; s++) {
        double ts = t->segs[s].t0;
        if (ts >= t0 && ts < t1 && !(t->paused && ts > t->pause_t1))
            marked[(int)((ts - t0) / (t1 - t0) * cols)] = 1;
    }
    for (int y = 0; y < rows; y++) {
        move(y0 + y, x0);
        for (int x = 0; x < cols; x++) {
            unsigned char c = cells[y * cols + x];
            if (marked[x] && chart_cell_blank(c, t->utf8)) {
                attrset(draw_pair(t, PAIR_MARK) | A_DIM);
                addstr(t->utf8 ? "\xe2\x94\x8a" : ":");
            } else {
                attrset(draw_pair(t, PAIR_CHART));
                addstr(chart_cell_text(c, t->utf8, cell));
            }
        }
    }
    attrset(A_NORMAL);
}

/* The series bucketed into the plot's pw columns, with its axis. */
static void chart_plot_series(Tui *t, Rect r, const ChartSpec *cs, int rows, int axis, int pw)
{
    static unsigned char cells[MAX_ROWS * MAX_COLS];
    static double vals[CHART_MAX_BUCKETS];
    double t0, t1;

    chart_window(t, cs, &t0, &t1);
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
    chart_axis(t, r, rows, axis, cs->pct, hi);
    chart_cells(t, r.y + 1, r.x + axis + 1, rows, cols, cells, t0, t1);
}

void panel_chart_draw(Tui *t, Rect r, const ChartSpec *cs)
{
    if (r.h < 2 || r.w < 12)
        return;
    chart_title(t, r, cs);
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
        draw_wrapped(y0, r.x + 2, r.w - 3, rows, A_DIM, na);
        return;
    }
    chart_plot_series(t, r, cs, rows, axis, pw);
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

/* A chart of sample field `field` (sample_series), n/a for `none` while
 * there is no sample. */
static void spec_samples(Tui *t, ChartSpec *cs, const char *name, int field, const char *none)
{
    memset(cs, 0, sizeof *cs);
    cs->name = name;
    cs->n = sample_series(t, field);
    cs->t = t->tbuf;
    cs->v = t->vbuf;
    if (!t->nsamples)
        cs->na = none;
}

static void ips_draw(Tui *t, Rect r)
{
    ChartSpec cs;
    char a[32], none[64], none_s[80];

    draw_no_run_why(t, none, sizeof none);
    snprintf(none_s, sizeof none_s, "%s%s", none, t->rv.seq ? "" : " (s starts one)");
    spec_samples(t, &cs, "images/s", 0, none_s);
    if (t->have_live && t->live.running)
        snprintf(cs.now, sizeof cs.now, "now %s", fmt_si(a, sizeof a, t->live.images_per_s_now));
    panel_chart_draw(t, r, &cs);
}

static void counters_draw(Tui *t, Rect r)
{
    ChartSpec cs;
    char b[32], na[300];
    int running = t->have_live && t->live.running;

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
    if (!chart_series_has_value(&t->ipc)) {
        const char *why = cf->why[0] ? cf->why : t->ctr.why;
        int pending = !strncmp(why, "counting", 8) || !strncmp(why, "no run", 6);
        snprintf(na, sizeof na, "%s%s", why,
                 pending ? "" : "; `cnntop events` lists what this machine counts");
        /* The pointer to `cnntop events` only where the reason keeps room. */
        if (!draw_na_fits(r, na))
            snprintf(na, sizeof na, "%s", why);
        cs.na = na;
    }
    panel_chart_draw(t, r, &cs);
}

static void queue_draw(Tui *t, Rect r)
{
    ChartSpec cs;
    char none[64];

    spec_samples(t, &cs, "loader queue", 1, draw_no_run_why(t, none, sizeof none));
    cs.pct = 1;
    if (t->have_live) {
        if (t->live.queue_cap > 0)
            snprintf(cs.now, sizeof cs.now, "%d/%d batches", t->live.queue_filled,
                     t->live.queue_cap);
        else
            snprintf(cs.now, sizeof cs.now, "none: workers 0 load inline");
        snprintf(cs.brief, sizeof cs.brief, "%s", t->live.queue_cap > 0 ? "" : "none: inline");
    }
    panel_chart_draw(t, r, &cs);
}

static void loss_draw(Tui *t, Rect r)
{
    ChartSpec cs;
    char none[64];

    spec_samples(t, &cs, "loss", 2, draw_no_run_why(t, none, sizeof none));
    if (t->rv.have_p)
        snprintf(cs.now, sizeof cs.now, "now %.4f  epoch mean %.4f", (double)t->rv.p.loss,
                 t->rv.p.epoch_loss);
    panel_chart_draw(t, r, &cs);
}

const PanelClass panel_charts_ips = {.name = "images/s", .draw = ips_draw};
const PanelClass panel_charts_counters = {.name = "IPC", .draw = counters_draw};
const PanelClass panel_charts_queue = {.name = "loader queue", .draw = queue_draw};
const PanelClass panel_charts_loss = {.name = "loss", .draw = loss_draw};

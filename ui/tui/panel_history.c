/*
 * panel_history.c: the session's runs (hist.c), as the last rows of the
 * main view and as the history view with its cursor: each run's settings,
 * images/s, accuracy, state and its speedup over the baseline (m marks
 * it) with the uncertainty; repeats of a configuration are grouped.
 */
#include <math.h>
#include <stdio.h>

#include "common/fmt.h"
#include "tui/draw.h"
#include "tui/panel.h"
#include "tui/panel_settings.h"

/* The history view's full row needs this many columns up to its state; a
 * narrower view drops the prefetch and repeats columns and tightens the
 * others, so that the speedup and the state stay whole at 80 columns. */
#define HIST_FULL_COLS 93

/* Run i's speedup over the baseline, ± its uncertainty, or why none. */
static void history_speedup(const Tui *t, int i, char *sp, size_t len)
{
    const HistRow *h = &t->hist.rows[i];
    const char *why = hist_why_not(h);
    double ratio, err;
    char pm[48];

    if (i == t->hist.baseline)
        snprintf(sp, len, "baseline");
    else if (why)
        snprintf(sp, len, "n/a: %s", why);
    else if (t->hist.baseline < 0)
        snprintf(sp, len, "n/a: m marks one");
    else if (hist_speedup(&t->hist, i, &ratio, &err) != 0)
        snprintf(sp, len, "n/a");
    else
        snprintf(sp, len, "x%s%s", fmt_pm(pm, sizeof pm, ratio, err, 2),
                 isnan(err) ? " (1 run)" : "");
}

/* Run i's configuration's repeats: "mean ± sd (n runs)", or "-". */
static void history_group(const Tui *t, int i, char *grp, size_t len)
{
    double mean, sd;
    char pm[48];
    int n = hist_group(&t->hist, i, &mean, &sd);

    if (n > 1)
        snprintf(grp, len, "%s (%d runs)", fmt_pm(pm, sizeof pm, mean, sd, FMT_PM_AUTO), n);
    else
        snprintf(grp, len, "-");
}

static void history_row(Tui *t, int i, int y, Rect r, int full)
{
    const HistRow *h = &t->hist.rows[i];
    char aug[64], aug_all[64], acc[32], sp[64], ips[32], wall[32], len[32], num[16], thr[16];

    options_format_augment(h->augment, aug_all, sizeof aug_all);
    int narrow = full && r.w < HIST_FULL_COLS;
    panel_settings_cell(SET_AUGMENT, aug_all, narrow ? 7 : 8, aug, sizeof aug);
    if (isnan(h->accuracy))
        snprintf(acc, sizeof acc, "n/a");
    else
        snprintf(acc, sizeof acc, "%.2f%%", 100 * h->accuracy);
    history_speedup(t, i, sp, sizeof sp);
    if (h->steps)
        snprintf(len, sizeof len, "%lds", h->steps);
    else
        snprintf(len, sizeof len, "%de", h->epochs);
    attr_t a = full && i == t->hist_sel ? A_REVERSE : h->session ? A_NORMAL : A_DIM;
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
    char mark = i == t->hist.baseline ? '*' : ' ';
    if (narrow) {
        draw_put(y, r.x, r.w, a, "%3s%c %5d %3d %3s %-7.7s %5s %6s %6s %7s %-16s %s", num, mark,
                 h->batch, h->workers, thr, aug, len, wall, ips, acc, sp, h->state);
    } else if (full) {
        char grp[64];
        history_group(t, i, grp, sizeof grp);
        draw_put(y, r.x, r.w, a, "%3s%c %5d %4d %4d %3s %-8.8s %6s %7s %7s %8s %-16s %-9s %-22s",
                 num, mark, h->batch, h->workers, h->prefetch, thr, aug, len, wall, ips, acc, sp,
                 h->state, grp);
    } else {
        draw_put(y, r.x, r.w, a, "%3s%c %5d %4d %3s %-8.8s %6s %7s %7s %8s %-16s %s", num, mark,
                 h->batch, h->workers, thr, aug, len, wall, ips, acc, sp, h->state);
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
    const char *why = hist_why_not(h);
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
    draw_wrapped(r.y + r.h - 2, r.x, r.w, 2, A_DIM, text);
}

static void history_draw_rows(Tui *t, Rect r, int full)
{
    if (r.h < 2)
        return;
    if (full && r.w < HIST_FULL_COLS)
        draw_put(r.y, r.x, r.w, A_BOLD | draw_pair(t, PAIR_TITLE),
            "%4s %5s %3s %3s %-7s %5s %6s %6s %7s %-16s %s", "run", "batch", "wkr", "thr",
            "augment", "len", "wall", "img/s", "acc", "speedup", "state");
    else if (full)
        draw_put(r.y, r.x, r.w, A_BOLD | draw_pair(t, PAIR_TITLE),
            "%4s %5s %4s %4s %3s %-8s %6s %7s %7s %8s %-16s %-9s %s", "run", "batch", "wkrs", "pref",
            "thr", "augment", "length", "wall", "img/s", "accuracy", "speedup", "state",
            "repeats img/s");
    else
        draw_put(r.y, r.x, r.w, A_BOLD | draw_pair(t, PAIR_TITLE),
            "%4s %5s %4s %3s %-8s %6s %7s %7s %8s %-16s %s", "run", "batch", "wkrs", "thr",
            "augment", "length", "wall", "img/s", "accuracy", "speedup", "state");
    int vis = r.h - 1;
    if (t->hist.n == 0) {
        draw_put(r.y + 1, r.x, r.w, A_DIM, "no run yet: a row appears here after each run");
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

static void history_draw(Tui *t, Rect r)
{
    history_draw_rows(t, r, 0);
}

static void history_table_draw(Tui *t, Rect r)
{
    history_draw_rows(t, r, 1);
}

const PanelClass panel_history = {.name = "history", .draw = history_draw};
const PanelClass panel_history_table = {.name = "history view", .draw = history_table_draw};

/*
 * keys.c: the dashboard's keys: one table (keys_table) of bindings, each
 * its keys, the action they run and the help's line, which drives both
 * the loop (keys_handle) and the help screen (panel_help.c), so that the
 * help cannot disagree with the keys.  Actions change state and return
 * what needs redoing (TUI_REDRAW, TUI_RELAYOUT, TUI_QUIT); they never draw.
 */
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "tui/editor.h"
#include "tui/keys.h"
#include "tui/prompt.h"
#include "tui/session.h"

/* The newest point of the run's charts, seconds into the run. */
static double keys_chart_end(const Tui *t)
{
    if (t->nsamples)
        return t->samples[t->nsamples - 1].t;
    return t->rv.have_p ? t->rv.p.elapsed : 0.0;
}

static void mark_baseline(Tui *t)
{
    int i = t->view == VIEW_HISTORY ? t->hist_sel : t->hist.n - 1;

    if (i < 0 || i >= t->hist.n) {
        tui_message(t, 1, "no run to mark as the baseline yet");
        return;
    }
    const HistRow *h = &t->hist.rows[i];
    const char *why = hist_why_not(h);
    if (why) {
        tui_message(t, 1, "run %d cannot be the baseline (%s): %s", h->run, why,
                    h->live ? "its images/s mixes two settings" : "it has no images/s");
        return;
    }
    t->hist.baseline = i;
    tui_message(t, 0, "baseline: run %d (batch %d, %d worker%s, %d thread%s)", h->run, h->batch,
                h->workers, fmt_plural(h->workers), h->threads, fmt_plural(h->threads));
}

static int act_click(Tui *t, int ch)
{
    MEVENT ev;

    (void)ch;
    if (getmouse(&ev) != OK || !(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED)))
        return 0;
    if (t->view == VIEW_MAIN && layout_rect_contains(t->lay.settings, ev.y, ev.x)) {
        int row = ev.y - t->lay.settings.y - 1, top = 0, vis = t->lay.settings.h - 1;
        if (t->sel >= vis)
            top = t->sel - vis + 1;
        if (row >= 0 && top + row < SET_COUNT)
            t->sel = top + row;
    } else if (layout_rect_contains(t->lay.status, ev.y, ev.x)) {
        int v = layout_tab_at(t->lay.cols, ev.x);
        if (v >= 0)
            t->view = (TuiView)v;
    } else if (t->view == VIEW_HISTORY && layout_rect_contains(t->lay.table, ev.y, ev.x)) {
        int i = t->table_top + ev.y - t->lay.table.y - 1;
        if (i >= 0 && i < t->hist.n)
            t->hist_sel = i;
    }
    return TUI_REDRAW;
}

static int nav_key(Tui *t, int dir)
{
    if (t->view == VIEW_MAIN) {
        t->sel = (t->sel + dir + SET_COUNT) % SET_COUNT;
        editor_show_whole(t);
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
    double end = keys_chart_end(t), span = w ? w : end;
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
        editor_change(t, t->sel, dir);
    return TUI_REDRAW;
}

/* --- the actions, in the table's order -------------------------------- */

static int act_start(Tui *t, int ch)
{
    (void)ch;
    session_start(t);
    return TUI_REDRAW;
}

static int act_stop(Tui *t, int ch)
{
    (void)ch;
    if (runthread_busy(&t->run)) {
        runthread_stop(&t->run, 0);
        tui_message(t, 0, "stopping run %d after the current step", t->rv.seq);
    } else {
        tui_message(t, 1, "no run is going");
    }
    return TUI_REDRAW;
}

static int act_quit(Tui *t, int ch)
{
    (void)ch;
    if (runthread_busy(&t->run)) {
        t->prompt = PROMPT_QUIT;
        return TUI_REDRAW;
    }
    return TUI_QUIT;
}

/* Up/Down one row, PgUp/PgDn ten. */
static int act_nav(Tui *t, int ch)
{
    int dir = ch == KEY_UP ? -1 : ch == KEY_DOWN ? +1 : ch == KEY_PPAGE ? -10 : +10;

    return nav_key(t, dir);
}

/* Left/Right and -/+ step the chosen setting (or scroll, paused); c and
 * F2 open the prompt for any value, a digit or '.' opens it with itself. */
static int act_setting(Tui *t, int ch)
{
    if (ch == 'c' || ch == 'C' || ch == KEY_F(2)) {
        prompt_begin(t, PROMPT_EDIT, "");
        return TUI_REDRAW;
    }
    if ((ch >= '0' && ch <= '9') || ch == '.') {
        char s[2] = {(char)ch, '\0'};
        t->view = VIEW_MAIN;
        prompt_begin(t, PROMPT_EDIT, s);
        return TUI_REDRAW;
    }
    return horizontal_key(t, ch == KEY_LEFT || ch == '-' || ch == '_' ? -1 : +1);
}

static int act_batch(Tui *t, int ch)
{
    editor_change(t, SET_BATCH, ch == 'B' ? +1 : -1);
    return TUI_REDRAW;
}

static int act_workers(Tui *t, int ch)
{
    editor_change(t, SET_WORKERS, ch == 'W' ? +1 : -1);
    return TUI_REDRAW;
}

static int act_mark(Tui *t, int ch)
{
    (void)ch;
    mark_baseline(t);
    return TUI_REDRAW;
}

static int act_export(Tui *t, int ch)
{
    char name[64];

    (void)ch;
    snprintf(name, sizeof name, "cnntop-run-%d.json", t->rv.seq ? t->rv.seq : 1);
    prompt_begin(t, PROMPT_EXPORT, t->o->export_path ? t->o->export_path : name);
    return TUI_REDRAW;
}

static int act_view(Tui *t, int ch)
{
    int step = ch == KEY_BTAB ? VIEW_COUNT - 1 : 1;

    t->view = (TuiView)((t->view + step) % VIEW_COUNT);
    t->table_top = 0;
    return TUI_REDRAW;
}

static int act_sort(Tui *t, int ch)
{
    (void)ch;
    /* The orders settings_ui's sort row takes, in turn. */
    t->set.sort = (t->set.sort + 1) % ((int)settings_find(settings_ui, "sort")->max + 1);
    return TUI_REDRAW;
}

static int act_pause(Tui *t, int ch)
{
    (void)ch;
    t->paused = !t->paused;
    t->pause_t1 = keys_chart_end(t);
    tui_message(t, 0, t->paused ? "display paused (training goes on): left/right scroll, p resumes"
                                : "display live");
    return TUI_REDRAW;
}

static int act_window(Tui *t, int ch)
{
    (void)ch;
    t->win = (t->win + 1) % TUI_WINDOWS;
    t->set.window = tui_window_seconds(t->win);
    return TUI_REDRAW;
}

static int act_help(Tui *t, int ch)
{
    (void)ch;
    t->help = 1;
    return TUI_REDRAW;
}

/* --- the table --------------------------------------------------------- */

const KeyBinding keys_table[] = {
    {{'s', 'S', '\n', '\r', KEY_ENTER}, act_start, "s, Enter",
     "start a run with the next-run settings"},
    {{'x', 'X'}, act_stop, "x", "stop the run after the current step (it is still evaluated)"},
    {{'q', 'Q', KEY_F(10)}, act_quit, "q, F10",
     "quit (asks when a run is going); Ctrl-C does the same"},
    {{KEY_UP, KEY_DOWN, KEY_PPAGE, KEY_NPAGE}, act_nav, "Up/Down",
     "choose a setting (main view), a row (history), scroll (layers)"},
    {{KEY_LEFT, KEY_RIGHT, '-', '_', '+', '=', 'c', 'C', KEY_F(2), '0', '1', '2', '3', '4', '5',
      '6', '7', '8', '9', '.'},
     act_setting, "Left/Right +/-",
     "change the chosen setting; typing digits sets it, c types any value"},
    {{'b', 'B'}, act_batch, "b / B", "halve / double the batch size (live: at the next step)"},
    {{'w', 'W'}, act_workers, "w / W",
     "one loader worker fewer / more (live)\n"
     "batch, workers, prefetch apply live; the rest to the next run"},
    {{'m', 'M'}, act_mark, "m",
     "mark the baseline run (the chosen row in the history view);\n"
     "not a run with a live change, a failed one or one without a step"},
    {{'e', 'E'}, act_export, "e", "export the last run (asks the file name: .json .csv .md)"},
    {{'\t', KEY_BTAB}, act_view, "Tab, Shift-Tab", "cycle the views: main, per-layer, history"},
    {{'o', 'O'}, act_sort, "o", "change the per-layer table's order"},
    {{'p', 'P'}, act_pause, "p",
     "freeze the charts (training goes on); Left/Right scroll in the run"},
    {{'t', 'T'}, act_window, "t", "cycle the chart window: 1 min, 5 min, 15 min, the whole run"},
    {{'?', 'h', KEY_F(1)}, act_help, "?, h, F1", "this help; any key closes it"},
    {{KEY_MOUSE}, act_click, "mouse", "click a setting, a history row or a view's name"},
};
const int keys_count = (int)(sizeof keys_table / sizeof keys_table[0]);

const KeyBinding *keys_find_in(const KeyBinding *table, int count, int ch)
{
    for (int i = 0; i < count; i++)
        for (int k = 0; k < KEYS_PER_BINDING && table[i].keys[k]; k++)
            if (table[i].keys[k] == ch)
                return &table[i];
    return NULL;
}

int keys_handle(Tui *t, int ch)
{
    if (t->prompt != PROMPT_NONE)
        return prompt_key(t, ch);
    if (t->help && ch != KEY_RESIZE && ch != KEY_MOUSE) {
        t->help = 0;
        return TUI_REDRAW;
    }
    /* Not a key: the terminal's new size, laid out again. */
    if (ch == KEY_RESIZE)
        return TUI_RELAYOUT | TUI_REDRAW;
    const KeyBinding *b = keys_find_in(keys_table, keys_count, ch);
    return b ? b->act(t, ch) : TUI_REDRAW;
}

/*
 * layout.c: panel arithmetic (see layout.h for the picture).
 */
#include <string.h>

#include "tui/layout.h"

static Rect rect(int y, int x, int h, int w)
{
    Rect r = {y, x, h > 0 ? h : 0, w > 0 ? w : 0};
    if (r.h == 0 || r.w == 0)
        r.h = r.w = 0;
    return r;
}

static int clamp(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Four charts in a 2 x 2 grid filling (y, x, h, w). */
static void place_charts(Layout *l, int y, int x, int h, int w)
{
    int h1 = h / 2, w1 = w / 2;

    l->chart[CHART_IPS] = rect(y, x, h1, w1);
    l->chart[CHART_COUNTERS] = rect(y, x + w1, h1, w - w1);
    l->chart[CHART_QUEUE] = rect(y + h1, x, h - h1, w1);
    l->chart[CHART_LOSS] = rect(y + h1, x + w1, h - h1, w - w1);
}

static void main_narrow(Layout *l, int y0, int body_h)
{
    int cols = l->cols;
    int panel_h = clamp(body_h - 8, 1, LAYOUT_SETTINGS_ROWS);
    int rest = body_h - panel_h, charts_h = rest, hist_h = 0;

    if (rest >= 18) {
        charts_h = rest * 3 / 5;
        hist_h = rest - charts_h;
    }
    place_charts(l, y0, 0, charts_h, cols);
    int sw = clamp(cols * 45 / 100, 30, 44);
    l->figures = rect(y0 + charts_h, 0, panel_h, cols - sw);
    l->settings = rect(y0 + charts_h, cols - sw, panel_h, sw);
    l->history = rect(y0 + charts_h + panel_h, 0, hist_h, cols);
}

static void main_wide(Layout *l, int y0, int body_h)
{
    int side_w = clamp(l->cols / 3, 48, 64), left_w = l->cols - side_w;
    int settings_h = clamp(body_h - 10, 1, LAYOUT_SETTINGS_ROWS);
    int charts_h = body_h, hist_h = 0;

    if (body_h >= 24) {
        charts_h = body_h * 3 / 5;
        hist_h = body_h - charts_h;
    }
    place_charts(l, y0, 0, charts_h, left_w);
    l->history = rect(y0 + charts_h, 0, hist_h, left_w);
    l->figures = rect(y0, left_w, body_h - settings_h, side_w);
    l->settings = rect(y0 + body_h - settings_h, left_w, settings_h, side_w);
}

/* The size every layout starts from: the need, and whether it fits. */
static int size_fits(int cols, int lines, int *too_small, int *need_cols, int *need_lines)
{
    *need_cols = LAYOUT_MIN_COLS;
    *need_lines = LAYOUT_MIN_LINES;
    *too_small = cols < LAYOUT_MIN_COLS || lines < LAYOUT_MIN_LINES;
    return !*too_small;
}

void layout_compute(Layout *l, int cols, int lines, TuiView view, int header_rows)
{
    memset(l, 0, sizeof *l);
    l->cols = cols;
    l->lines = lines;
    if (!size_fits(cols, lines, &l->too_small, &l->need_cols, &l->need_lines))
        return;
    header_rows = clamp(header_rows, 1, 5);
    int body_h = lines - header_rows - 1;
    l->header = rect(0, 0, header_rows, cols);
    l->status = rect(lines - 1, 0, 1, cols);
    if (view != VIEW_MAIN) {
        l->table = rect(header_rows, 0, body_h, cols);
        return;
    }
    if (cols >= LAYOUT_WIDE_COLS)
        main_wide(l, header_rows, body_h);
    else
        main_narrow(l, header_rows, body_h);
}

/* The charts side by side in (y, x, h, w): nchart of them. */
static void exec_charts(ExecLayout *l, int y, int x, int h, int w, int nchart)
{
    l->chart[0] = rect(y, x, nchart ? h : 0, nchart == 2 ? w / 2 : w);
    l->chart[1] = rect(y, x + w / 2, nchart == 2 ? h : 0, w - w / 2);
}

static void exec_narrow(ExecLayout *l, int y, int body_h, int counter_rows, int nchart)
{
    int cols = l->cols;
    int roles_h = clamp(body_h - 3, 0, LAYOUT_EXEC_ROLES_ROWS);
    int left = body_h - roles_h - 3; /* the output keeps 3 */
    int charts_h = nchart ? clamp(left / 3, 0, 8) : 0;
    charts_h = charts_h < 4 ? 0 : charts_h;
    left -= charts_h;
    int ctr_h = clamp(counter_rows, 0, left > 12 ? left / 2 : left);
    left -= ctr_h;
    int procs_h = clamp(left - 2, 0, 8);

    l->roles = rect(y, 0, roles_h, cols);
    l->counters = rect(y + roles_h, 0, ctr_h, cols);
    exec_charts(l, y + roles_h + ctr_h, 0, charts_h, cols, charts_h ? nchart : 0);
    l->procs = rect(y + roles_h + ctr_h + charts_h, 0, procs_h, cols);
    int used = roles_h + ctr_h + charts_h + procs_h;
    l->output = rect(y + used, 0, body_h - used, cols);
}

static void exec_wide(ExecLayout *l, int y, int body_h, int counter_rows, int nchart)
{
    int left_w = l->cols * 55 / 100, right_w = l->cols - left_w;
    int roles_h = clamp(body_h, 0, LAYOUT_EXEC_ROLES_ROWS);
    int ctr_h = clamp(counter_rows, 0, body_h - roles_h - 3);
    int charts_h = nchart ? clamp(body_h / 2, 0, 16) : 0;

    l->roles = rect(y, 0, roles_h, left_w - 1);
    l->counters = rect(y + roles_h, 0, ctr_h, left_w - 1);
    l->procs = rect(y + roles_h + ctr_h, 0, body_h - roles_h - ctr_h, left_w - 1);
    exec_charts(l, y, left_w, charts_h, right_w, nchart);
    l->output = rect(y + charts_h, left_w, body_h - charts_h, right_w);
}

void layout_exec_compute(ExecLayout *l, int cols, int lines, int counter_rows, int nchart)
{
    memset(l, 0, sizeof *l);
    l->cols = cols;
    l->lines = lines;
    if (!size_fits(cols, lines, &l->too_small, &l->need_cols, &l->need_lines))
        return;
    nchart = clamp(nchart, 0, 2);
    int body_h = lines - LAYOUT_EXEC_HEADER_ROWS - 1;
    l->header = rect(0, 0, LAYOUT_EXEC_HEADER_ROWS, cols);
    l->status = rect(lines - 1, 0, 1, cols);
    if (cols >= LAYOUT_WIDE_COLS)
        exec_wide(l, LAYOUT_EXEC_HEADER_ROWS, body_h, counter_rows, nchart);
    else
        exec_narrow(l, LAYOUT_EXEC_HEADER_ROWS, body_h, counter_rows, nchart);
}

int layout_rect_contains(Rect r, int y, int x)
{
    return r.h > 0 && y >= r.y && y < r.y + r.h && x >= r.x && x < r.x + r.w;
}

int layout_rect_overlap(Rect a, Rect b)
{
    if (a.h == 0 || b.h == 0)
        return 0;
    return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

int layout_settings_value_cols(const Layout *l)
{
    /* The value columns take the room there is: 2 + 9 name + 2 x (w + 1) + 4. */
    int vw = (l->settings.w - 2 - 9 - 2 - 4) / 2;
    return vw < 9 ? 9 : vw > 40 ? 40 : vw;
}

static const char *const tab_names[VIEW_COUNT] = {" main ", " layers ", " history "};

const char *layout_tab_name(TuiView v)
{
    return tab_names[v];
}

int layout_tab_at(int cols, int x)
{
    int tabs_w = 0;

    for (int i = 0; i < VIEW_COUNT; i++)
        tabs_w += (int)strlen(tab_names[i]);
    x -= cols - tabs_w;
    for (int i = 0; i < VIEW_COUNT && x >= 0; i++) {
        if (x < (int)strlen(tab_names[i]))
            return i;
        x -= (int)strlen(tab_names[i]);
    }
    return -1;
}

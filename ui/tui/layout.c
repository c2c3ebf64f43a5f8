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

void layout_compute(Layout *l, int cols, int lines, TuiView view, int header_rows)
{
    memset(l, 0, sizeof *l);
    l->cols = cols;
    l->lines = lines;
    l->need_cols = LAYOUT_MIN_COLS;
    l->need_lines = LAYOUT_MIN_LINES;
    if (cols < LAYOUT_MIN_COLS || lines < LAYOUT_MIN_LINES) {
        l->too_small = 1;
        return;
    }
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

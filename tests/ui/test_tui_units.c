/*
 * test_tui_units.c: the dashboard's pure parts: chart scaling, bucketing
 * and plotting, the bounded series, the layout at several sizes, and the
 * number formatting.  No terminal needed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tui/chart.h"
#include "common/fmt.h"
#include "tui/layout.h"

static void test_nice_max(void)
{
    CHECK_NEAR(chart_nice_max(0), 1.0, 0);
    CHECK_NEAR(chart_nice_max(NAN), 1.0, 0);
    CHECK_NEAR(chart_nice_max(0.7), 1.0, 1e-12);
    CHECK_NEAR(chart_nice_max(1.0), 1.0, 1e-12);
    CHECK_NEAR(chart_nice_max(1.2), 2.0, 1e-12);
    CHECK_NEAR(chart_nice_max(2.2), 2.5, 1e-12);
    CHECK_NEAR(chart_nice_max(3.0), 5.0, 1e-12);
    CHECK_NEAR(chart_nice_max(731), 1000.0, 1e-9);
    CHECK_NEAR(chart_nice_max(1499), 2000.0, 1e-9);
    CHECK_NEAR(chart_nice_max(0.031), 0.05, 1e-12);
}

static void test_bucket(void)
{
    double t[10], v[10], out[5];

    for (int i = 0; i < 10; i++) {
        t[i] = i;        /* 0..9 s */
        v[i] = 10.0 * i; /* 0..90 */
    }
    /* Two samples per bucket over [0, 10): means 5, 25, 45, 65, 85. */
    CHECK_INT(chart_bucket(t, v, 10, 0, 10, out, 5), ==, 5);
    for (int c = 0; c < 5; c++)
        CHECK_NEAR(out[c], 5.0 + 20.0 * c, 1e-9);
    /* A window past the data: only the first bucket has samples. */
    CHECK_INT(chart_bucket(t, v, 10, 8, 18, out, 5), ==, 1);
    CHECK_NEAR(out[0], 85.0, 1e-9);
    CHECK(isnan(out[1]) && isnan(out[4]));
    /* Downsampling 10 samples into 2 columns. */
    CHECK_INT(chart_bucket(t, v, 10, 0, 10, out, 2), ==, 2);
    CHECK_NEAR(out[0], 20.0, 1e-9);
    CHECK_NEAR(out[1], 70.0, 1e-9);
    /* NaN values are skipped, an empty window gives nothing. */
    v[0] = v[1] = NAN;
    CHECK_INT(chart_bucket(t, v, 10, 0, 2, out, 1), ==, 0);
    CHECK(isnan(out[0]));
    CHECK_INT(chart_bucket(t, v, 10, 5, 5, out, 3), ==, 0);
    /* Gaps between values hold the last value; the ends stay NaN. */
    double g[6] = {NAN, 1, NAN, NAN, 4, NAN};
    chart_fill_gaps(g, 6);
    CHECK(isnan(g[0]));
    CHECK_NEAR(g[2], 1, 0);
    CHECK_NEAR(g[3], 1, 0);
    CHECK_NEAR(g[4], 4, 0);
    CHECK(isnan(g[5]));
}

static void test_plot(void)
{
    unsigned char cells[2 * 3];
    double vals[6] = {0, 10, 5, NAN, 0.01, 2.5};
    char s[4];

    /* Braille, 2 rows x 3 cells = 8 dot levels, range 0..10. */
    chart_plot(vals, 0, 10, 2, 3, 1, cells);
    /* Column 0: value 0 -> no dots; column 1: 10 -> 8 dots (full right half). */
    CHECK_INT(cells[0], ==, 0x08 | 0x10 | 0x20 | 0x80); /* top row, right column */
    CHECK_INT(cells[3], ==, 0x08 | 0x10 | 0x20 | 0x80); /* bottom row */
    /* Column 2: 5 -> 4 dots: the bottom cell's left column. */
    CHECK_INT(cells[1], ==, 0);
    CHECK_INT(cells[4], ==, 0x01 | 0x02 | 0x04 | 0x40);
    /* Column 4: a tiny positive value still shows one dot (bottom left). */
    CHECK_INT(cells[5] & 0x40, ==, 0x40);
    /* Column 5: 2.5 -> 2 dots at the bottom right. */
    CHECK_INT(cells[5] & (0x20 | 0x80), ==, 0x20 | 0x80);
    CHECK_INT(cells[2], ==, 0);
    CHECK(chart_cell_blank(cells[0 + 1], 1));
    CHECK(strcmp(chart_cell_text(0xFF, 1, s), "\xe2\xa3\xbf") == 0); /* U+28FF */
    CHECK(strcmp(chart_cell_text(0, 1, s), " ") == 0);
    /* ASCII, 2 rows x 3 columns, one value per column. */
    double av[3] = {10, 5, 2};
    chart_plot(av, 0, 10, 2, 3, 0, cells);
    CHECK(cells[0] == '#' && cells[3] == '#');
    CHECK(cells[1] == ' ' && cells[4] == '#');
    CHECK(cells[2] == ' ' && cells[5] == ':');
    CHECK(strcmp(chart_cell_text('#', 0, s), "#") == 0);
}

static void test_series(void)
{
    static Series s;

    chart_series_clear(&s);
    for (int i = 0; i < CHART_SERIES_CAP; i++)
        chart_series_add(&s, i, 1.0);
    CHECK_INT(s.n, ==, CHART_SERIES_CAP);
    chart_series_add(&s, CHART_SERIES_CAP, 3.0);
    /* Merged to half, then the new point: memory stays bounded. */
    CHECK_INT(s.n, ==, CHART_SERIES_CAP / 2 + 1);
    CHECK_NEAR(s.t[0], 1.0, 0);
    CHECK_NEAR(s.v[0], 1.0, 0);
    CHECK_NEAR(s.t[s.n - 1], CHART_SERIES_CAP, 0);
    for (int i = 0; i < 10 * CHART_SERIES_CAP; i++)
        chart_series_add(&s, CHART_SERIES_CAP + 1 + i, 2.0);
    CHECK(s.n <= CHART_SERIES_CAP);
    for (int i = 1; i < s.n; i++)
        CHECK(s.t[i] > s.t[i - 1]);
}

/* Every placed rect lies on the screen and none overlap. */
static void check_layout(int cols, int lines, TuiView view)
{
    Layout l;
    layout_compute(&l, cols, lines, view, 3);
    CHECK(!l.too_small);
    Rect all[10] = {l.header, l.status, l.chart[0], l.chart[1], l.chart[2], l.chart[3],
                    l.figures, l.settings, l.history, l.table};
    for (int i = 0; i < 10; i++) {
        if (all[i].h == 0)
            continue;
        CHECK(all[i].y >= 0 && all[i].x >= 0);
        CHECK_INT(all[i].y + all[i].h, <=, lines);
        CHECK_INT(all[i].x + all[i].w, <=, cols);
        for (int j = i + 1; j < 10; j++)
            if (layout_rect_overlap(all[i], all[j])) {
                fprintf(stderr, "%dx%d view %d: rects %d and %d overlap\n", cols, lines, view, i, j);
                CHECK(0);
            }
    }
    CHECK_INT(l.header.h, ==, 3);
    CHECK_INT(l.status.y, ==, lines - 1);
    if (view == VIEW_MAIN) {
        for (int c = 0; c < CHART_COUNT; c++)
            CHECK(l.chart[c].h >= 3 && l.chart[c].w >= 28);
        CHECK(l.figures.h >= 7 && l.figures.w >= 30);
        CHECK(l.settings.h >= 7 && l.settings.w >= 30);
    } else {
        CHECK_INT(l.table.h, ==, lines - 4);
    }
}

static void test_layout(void)
{
    Layout l;

    for (int v = 0; v < VIEW_COUNT; v++) {
        check_layout(80, 24, (TuiView)v);
        check_layout(200, 50, (TuiView)v);
        check_layout(60, 20, (TuiView)v);
        check_layout(120, 40, (TuiView)v);
    }
    /* 80x24: all eleven settings and a title fit. */
    layout_compute(&l, 80, 24, VIEW_MAIN, 3);
    CHECK_INT(l.settings.h, ==, LAYOUT_SETTINGS_ROWS);
    CHECK_INT(l.history.h, ==, 0);
    /* 200x50: wide layout with a side column and room for the history. */
    layout_compute(&l, 200, 50, VIEW_MAIN, 3);
    CHECK(l.figures.x > 100 && l.history.h >= 5);
    CHECK(l.chart[CHART_IPS].h >= 10);
    /* 40x10: too small, and says what is needed. */
    layout_compute(&l, 40, 10, VIEW_MAIN, 3);
    CHECK(l.too_small);
    CHECK_INT(l.need_cols, ==, 60);
    CHECK_INT(l.need_lines, ==, 20);
    CHECK_INT(l.chart[0].h, ==, 0);
    layout_compute(&l, 59, 24, VIEW_MAIN, 3);
    CHECK(l.too_small);
    /* The tabs " main " " layers " " history " end the status line: at 80
     * columns they take 57-62, 63-70 and 71-79 (mouse clicks). */
    CHECK_INT(layout_tab_at(80, 56), ==, -1);
    CHECK_INT(layout_tab_at(80, 57), ==, VIEW_MAIN);
    CHECK_INT(layout_tab_at(80, 62), ==, VIEW_MAIN);
    CHECK_INT(layout_tab_at(80, 63), ==, VIEW_LAYERS);
    CHECK_INT(layout_tab_at(80, 70), ==, VIEW_LAYERS);
    CHECK_INT(layout_tab_at(80, 71), ==, VIEW_HISTORY);
    CHECK_INT(layout_tab_at(80, 79), ==, VIEW_HISTORY);
    CHECK_INT(layout_tab_at(80, 80), ==, -1);
    CHECK(strcmp(layout_tab_name(VIEW_LAYERS), " layers ") == 0);
    CHECK(layout_rect_contains((Rect){2, 3, 4, 5}, 2, 3));
    CHECK(!layout_rect_contains((Rect){2, 3, 4, 5}, 6, 3));
    CHECK(!layout_rect_overlap((Rect){0, 0, 2, 2}, (Rect){0, 2, 2, 2}));
}

/* `cnntop exec`'s dashboard: on the screen, no overlap, the output's tail
 * and the roles always placed, the charts only when asked. */
static void check_exec_layout(int cols, int lines, int counter_rows, int nchart)
{
    ExecLayout l;
    layout_exec_compute(&l, cols, lines, counter_rows, nchart);
    CHECK(!l.too_small);
    Rect all[8] = {l.header, l.status, l.roles, l.counters, l.procs, l.output, l.chart[0],
                   l.chart[1]};
    for (int i = 0; i < 8; i++) {
        if (all[i].h == 0)
            continue;
        CHECK(all[i].y >= 0 && all[i].x >= 0);
        CHECK_INT(all[i].y + all[i].h, <=, lines);
        CHECK_INT(all[i].x + all[i].w, <=, cols);
        for (int j = i + 1; j < 8; j++)
            if (layout_rect_overlap(all[i], all[j])) {
                fprintf(stderr, "exec %dx%d: rects %d and %d overlap\n", cols, lines, i, j);
                CHECK(0);
            }
    }
    CHECK_INT(l.roles.h, ==, LAYOUT_EXEC_ROLES_ROWS);
    CHECK_INT(l.output.h, >=, 3);
    CHECK_INT(l.status.y, ==, lines - 1);
    CHECK_INT(l.chart[1].h > 0, <=, nchart == 2);
    if (nchart == 0)
        CHECK_INT(l.chart[0].h, ==, 0);
}

static void test_exec_layout(void)
{
    ExecLayout l;
    int sizes[][2] = {{60, 20}, {80, 24}, {100, 30}, {149, 40}, {150, 40}, {220, 60}};

    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int nc = 0; nc <= 2; nc++) {
            check_exec_layout(sizes[i][0], sizes[i][1], 9, nc);
            check_exec_layout(sizes[i][0], sizes[i][1], 40, nc);
        }
    /* Where there is room, every counter row and a chart show. */
    layout_exec_compute(&l, 100, 40, 9, 1);
    CHECK_INT(l.counters.h, ==, 9);
    CHECK(l.chart[0].h >= 4);
    layout_exec_compute(&l, 59, 30, 9, 1);
    CHECK(l.too_small);
    layout_exec_compute(&l, 80, 19, 9, 1);
    CHECK(l.too_small);
}

static void test_fmt(void)
{
    char b[64];

    CHECK(strcmp(fmt_si(b, sizeof b, 0), "0") == 0);
    CHECK(strcmp(fmt_si(b, sizeof b, 42), "42") == 0);
    CHECK(strcmp(fmt_si(b, sizeof b, 1234), "1.23k") == 0);
    CHECK(strcmp(fmt_si(b, sizeof b, 999.7), "1.00k") == 0);
    CHECK(strcmp(fmt_si(b, sizeof b, 12345678), "12.3M") == 0);
    CHECK(strcmp(fmt_si(b, sizeof b, 3.2e9), "3.20G") == 0);
    CHECK(strcmp(fmt_si(b, sizeof b, 0.5), "0.50") == 0);
    CHECK(strcmp(fmt_si(b, sizeof b, -1500), "-1.50k") == 0);
    CHECK(strcmp(fmt_si(b, sizeof b, NAN), "n/a") == 0);
    CHECK(strcmp(fmt_duration(b, sizeof b, 42), "0:42") == 0);
    CHECK(strcmp(fmt_duration(b, sizeof b, 723), "12:03") == 0);
    CHECK(strcmp(fmt_duration(b, sizeof b, 3723), "1:02:03") == 0);
    CHECK(strcmp(fmt_duration(b, sizeof b, -1), "--:--") == 0);
    CHECK(strcmp(fmt_duration(b, sizeof b, NAN), "--:--") == 0);
    CHECK(strcmp(fmt_bytes(b, sizeof b, 512), "512 B") == 0);
    CHECK(strcmp(fmt_bytes(b, sizeof b, 98.8 * 1024 * 1024), "98.8 MiB") == 0);
    CHECK(strcmp(fmt_bytes(b, sizeof b, 1.5 * 1024 * 1024 * 1024), "1.50 GiB") == 0);
    CHECK(strcmp(fmt_na(b, sizeof b, "no PMU"), "n/a: no PMU") == 0);
    CHECK(strcmp(fmt_na(b, sizeof b, NULL), "n/a") == 0);
    /* fmt_pm: the precision the spread deserves, or the one asked for. */
    CHECK(strcmp(fmt_pm(b, sizeof b, 1203.4, 31.2, FMT_PM_AUTO), "1203 \xc2\xb1 31") == 0);
    CHECK(strcmp(fmt_pm(b, sizeof b, 1.234, 0.05, FMT_PM_AUTO), "1.23 \xc2\xb1 0.05") == 0);
    CHECK(strcmp(fmt_pm(b, sizeof b, 1.23456, 1e-9, FMT_PM_AUTO), "1.2346 \xc2\xb1 0.0000") == 0);
    CHECK(strcmp(fmt_pm(b, sizeof b, 12.5, 0.25, 3), "12.500 \xc2\xb1 0.250") == 0);
    CHECK(strcmp(fmt_pm(b, sizeof b, 12.5, 0, 2), "12.50 \xc2\xb1 0.00") == 0);
    /* ... and the one rule for what is missing: no mean is n/a, no
     * spread (NaN or infinite) is the mean alone, whatever the caller. */
    CHECK(strcmp(fmt_pm(b, sizeof b, 1203.4, NAN, FMT_PM_AUTO), "1203") == 0);
    CHECK(strcmp(fmt_pm(b, sizeof b, 1.5, NAN, 2), "1.50") == 0);
    CHECK(strcmp(fmt_pm(b, sizeof b, 1.5, INFINITY, 2), "1.50") == 0);
    CHECK(strcmp(fmt_pm(b, sizeof b, NAN, 0.5, 2), "n/a") == 0);
    CHECK(strcmp(fmt_pm(b, sizeof b, INFINITY, 0.5, FMT_PM_AUTO), "n/a") == 0);
    CHECK(strcmp(fmt_pm(b, sizeof b, NAN, NAN, 1), "n/a") == 0);
    CHECK(strcmp(fmt_plural(1), "") == 0);
    CHECK(strcmp(fmt_plural(0), "s") == 0);
    CHECK(strcmp(fmt_plural(2), "s") == 0);
    CHECK(strcmp(fmt_bar(b, sizeof b, 0.5, 12), "[#####     ]") == 0);
    CHECK(strcmp(fmt_bar(b, sizeof b, 2.0, 4), "[##]") == 0);
    CHECK(strcmp(fmt_bar(b, sizeof b, -1, 4), "[  ]") == 0);
    CHECK_INT(fmt_cols("ab\xc2\xb1" "c"), ==, 4);
    CHECK(strcmp(fmt_fit(b, sizeof b, "abcdef", 4), "abc~") == 0);
    CHECK(strcmp(fmt_fit(b, sizeof b, "abc", 4), "abc") == 0);
    CHECK(strcmp(fmt_fit(b, sizeof b, "\xc2\xb1\xc2\xb1\xc2\xb1", 2), "\xc2\xb1~") == 0);
    CHECK(strcmp(fmt_fit(b, sizeof b, "abc", 0), "") == 0);
}

/* Cutting that never makes two values look alike, and wrapping whole. */
static void test_fit_wrap(void)
{
    char b[128], c[128];
    const char *path = "/usr/share/datasets/fashion-mnist";

    /* A path keeps its tail, from a '/' where that leaves half the room. */
    CHECK(strcmp(fmt_fit_tail(b, sizeof b, path, 20), "~/fashion-mnist") == 0);
    CHECK(strcmp(fmt_fit_tail(b, sizeof b, path, 10), "~ion-mnist") == 0);
    CHECK_INT(fmt_cols(fmt_fit_tail(b, sizeof b, path, 10)), ==, 10);
    CHECK(strcmp(fmt_fit_tail(b, sizeof b, "/a/b", 10), "/a/b") == 0);
    /* Two paths that differ only at the end stay different. */
    fmt_fit_tail(b, sizeof b, "/data/mnist-a", 8);
    fmt_fit_tail(c, sizeof c, "/data/mnist-b", 8);
    CHECK(strcmp(b, c) != 0);
    /* Augment by initials: "shift,rotate" and "shift,rotate,elastic" differ. */
    CHECK(strcmp(fmt_initials(b, sizeof b, "shift,rotate"), "s,r") == 0);
    CHECK(strcmp(fmt_initials(c, sizeof c, "shift,rotate,elastic"), "s,r,e") == 0);
    /* Wrapping at a space; a word longer than the line is split. */
    const char *why = "no PMU exposed to this machine (a virtual machine?)";
    size_t n = fmt_wrap(why, 20);
    CHECK_INT(n, ==, 17); /* "no PMU exposed to" */
    CHECK_INT(fmt_wrap("abcdefghij", 4), ==, 4);
    CHECK_INT(fmt_wrap("short", 20), ==, 5);
    CHECK_INT(fmt_wrap("ab cd", 2), ==, 2);
    Series *s = calloc(1, sizeof *s);
    chart_series_add(s, 1, NAN);
    CHECK(!chart_series_has_value(s));
    chart_series_add(s, 2, 1.5);
    CHECK(chart_series_has_value(s));
    free(s);
}

int main(void)
{
    test_fit_wrap();
    test_nice_max();
    test_bucket();
    test_plot();
    test_series();
    test_layout();
    test_exec_layout();
    test_fmt();
    return check_report();
}

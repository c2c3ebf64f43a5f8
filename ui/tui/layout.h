/*
 * layout.h: where each panel of the dashboard goes, for a given size.
 *
 * Pure arithmetic, no curses, unit-tested.  The screen is a header on top
 * (header_rows), a status line at the bottom, and a body between them:
 *
 *   main view, narrow (< LAYOUT_WIDE_COLS columns):
 *       charts 2 x 2  |  figures | settings  |  history (when rows are left)
 *   main view, wide:
 *       charts 2 x 2 over history  |  figures over settings (a side column)
 *   per-layer and history views: one table filling the body.
 *
 * Below LAYOUT_MIN_COLS x LAYOUT_MIN_LINES the layout says too_small and
 * the size needed; nothing else is placed.
 */
#ifndef CNNTOP_TUI_LAYOUT_H
#define CNNTOP_TUI_LAYOUT_H

typedef struct Rect {
    int y, x; /* top-left cell, 0-based */
    int h, w; /* rows and columns; h == 0: not shown */
} Rect;

typedef enum TuiView { VIEW_MAIN, VIEW_LAYERS, VIEW_HISTORY, VIEW_COUNT } TuiView;

/* The charts of the main view, in reading order. */
enum { CHART_IPS, CHART_COUNTERS, CHART_QUEUE, CHART_LOSS, CHART_COUNT };

#define LAYOUT_MIN_COLS 60
#define LAYOUT_MIN_LINES 20
#define LAYOUT_WIDE_COLS 150
#define LAYOUT_SETTINGS_ROWS 12 /* a title and 11 settings */

typedef struct Layout {
    int cols, lines;          /* the terminal's size */
    int too_small;            /* 1: only the "too small" message fits */
    int need_cols, need_lines;/* the minimum size */
    Rect header, status;
    Rect chart[CHART_COUNT];  /* main view */
    Rect figures, settings;   /* main view */
    Rect history;             /* main view, h == 0 when there is no room */
    Rect table;               /* per-layer and history views */
} Layout;

/* `cnntop exec`'s dashboard (tui/exec_dash.c): a header (the command,
 * its state, the verdict), then
 *   narrow (< LAYOUT_WIDE_COLS): roles | counters | charts side by side |
 *                                processes | the output's tail, stacked;
 *   wide: roles, counters, processes on the left; charts over the
 *         output's tail on the right;
 * and the status line.  The same minimum as the main dashboard. */
#define LAYOUT_EXEC_HEADER_ROWS 3
#define LAYOUT_EXEC_ROLES_ROWS 6 /* a title, the columns, the four roles (a job's ranks too) */

typedef struct ExecLayout {
    int cols, lines;
    int too_small, need_cols, need_lines;
    Rect header, status;
    Rect roles, counters, procs, output;
    Rect chart[2];            /* images/s (the hook), --progress's figure */
} ExecLayout;

/* Lays out a cols x lines screen with counter_rows rows of counters (a
 * title and one per event) and nchart charts (0..2); the counters and the
 * processes yield rows to the output's tail, which keeps at least 3. */
void layout_exec_compute(ExecLayout *l, int cols, int lines, int counter_rows, int nchart);

/* Lays out a cols x lines screen for `view`; header_rows is 3 to 5 (the
 * kernel warning takes up to two rows). */
void layout_compute(Layout *l, int cols, int lines, TuiView view, int header_rows);

/* The views' tabs at the right of the status line: tab v's text
 * (" main ", " layers ", " history "), and the view whose tab is at
 * column x of a line of `cols` columns, or -1 where there is none. */
const char *layout_tab_name(TuiView v);
int layout_tab_at(int cols, int x);

/* Columns of each of the settings panel's two value columns: the room
 * there is, 9 to 40. */
int layout_settings_value_cols(const Layout *l);

/* 1 when (y, x) lies inside r. */
int layout_rect_contains(Rect r, int y, int x);

/* 1 when a and b share a cell (empty rects share none). */
int layout_rect_overlap(Rect a, Rect b);

#endif

/*
 * panel.h: the dashboard's panels, each one file with one const class.
 *
 * A panel draws one part of the screen from Tui's copies, in the Rect the
 * layout gave it (screen.c walks each view's list of panels, once per
 * frame).  Adding a panel is one new panel_<name>.c defining its class,
 * one line here and one line in a view's list in screen.c: no switch to
 * edit.  Panels draw only: they change no state but their own scroll
 * position (a table's first row), and keys never draw.
 */
#ifndef CNNTOP_TUI_PANEL_H
#define CNNTOP_TUI_PANEL_H

#include "tui/keys.h"
#include "tui/tui.h"

typedef struct PanelClass {
    const char *name;
    /* Draws into r (r.h or r.w 0: the panel has no room and draws nothing). */
    void (*draw)(Tui *t, Rect r);
    /* NULL, or the rows the panel asks of the layout at `cols` columns
     * (the header: 3, plus the kernel warning's rows). */
    int (*rows)(const Tui *t, int cols);
} PanelClass;

/* One chart (panel_charts.c): a series over the chart window, with its
 * current value in the title, or "n/a: <reason>". */
typedef struct ChartSpec {
    const char *name;
    char now[96];      /* the current value, e.g. "now 1.52k" */
    char brief[48];    /* "" or a shorter `now` for a title too narrow for it */
    const double *t, *v;
    int n;
    int pct;           /* values are 0..1 shown as % with a fixed top of 100% */
    const char *na;    /* non-NULL: the chart is n/a for this reason */
    int own_end;       /* 1: the window ends at `end`, not at the run's last sample */
    double end;        /* s, the newest point's time (own_end) */
} ChartSpec;

/* Draws cs into r (at least 2 x 12, else nothing): the main view's charts
 * and `cnntop exec`'s. */
void panel_chart_draw(Tui *t, Rect r, const ChartSpec *cs);

/* The help box over r (panel_help.c): a row per binding of table[0..count)
 * and the line foot at the bottom. */
void panel_help_box(Rect r, const KeyBinding *table, int count, const char *foot);

extern const PanelClass panel_header;         /* panel_header.c: machine, data, run state */
extern const PanelClass panel_status;         /* panel_status.c: messages, prompts, tabs */
extern const PanelClass panel_charts_ips;     /* panel_charts.c: images/s over time */
extern const PanelClass panel_charts_counters;/* ... IPC */
extern const PanelClass panel_charts_queue;   /* ... the loader queue's fill */
extern const PanelClass panel_charts_loss;    /* ... the training loss */
extern const PanelClass panel_figures;        /* panel_figures.c: the run's figures, verdict */
extern const PanelClass panel_settings;       /* panel_settings.c: next and current settings */
extern const PanelClass panel_history;        /* panel_history.c: the last runs (main view) */
extern const PanelClass panel_history_table;  /* ... the history view, with the cursor */
extern const PanelClass panel_layers;         /* panel_layers.c: the per-layer table */
extern const PanelClass panel_help;           /* panel_help.c: the keys, over the rest */

#endif

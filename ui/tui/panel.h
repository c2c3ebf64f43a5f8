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

#include "tui/tui.h"

typedef struct PanelClass {
    const char *name;
    /* Draws into r (r.h or r.w 0: the panel has no room and draws nothing). */
    void (*draw)(Tui *t, Rect r);
    /* NULL, or the rows the panel asks of the layout at `cols` columns
     * (the header: 3, plus the kernel warning's rows). */
    int (*rows)(const Tui *t, int cols);
} PanelClass;

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

/*
 * screen.c: the frame: the layout for the terminal's size, then each
 * panel of the current view in its place, once per tick or key.
 *
 * A view is a list of panels, each with the field of Layout that places
 * it; the help box is drawn last, over the view.  Below the minimum size
 * only "terminal too small" is drawn.
 */
#include <stddef.h>

#include "tui/draw.h"
#include "tui/panel.h"
#include "tui/screen.h"

typedef struct Slot {
    const PanelClass *panel;
    size_t at; /* offsetof(Layout, the panel's Rect) */
} Slot;

#define AT(field) offsetof(Layout, field)

static const Slot view_main[] = {
    {&panel_header, AT(header)},
    {&panel_charts_ips, AT(chart[CHART_IPS])},
    {&panel_charts_counters, AT(chart[CHART_COUNTERS])},
    {&panel_charts_queue, AT(chart[CHART_QUEUE])},
    {&panel_charts_loss, AT(chart[CHART_LOSS])},
    {&panel_figures, AT(figures)},
    {&panel_settings, AT(settings)},
    {&panel_history, AT(history)},
    {&panel_status, AT(status)},
    {NULL, 0},
};

static const Slot view_layers[] = {
    {&panel_header, AT(header)},
    {&panel_layers, AT(table)},
    {&panel_status, AT(status)},
    {NULL, 0},
};

static const Slot view_history[] = {
    {&panel_header, AT(header)},
    {&panel_history_table, AT(table)},
    {&panel_status, AT(status)},
    {NULL, 0},
};

static const Slot *const views[VIEW_COUNT] = {
    [VIEW_MAIN] = view_main, [VIEW_LAYERS] = view_layers, [VIEW_HISTORY] = view_history,
};

static void too_small(const Tui *t)
{
    draw_put(0, 0, t->lay.cols, A_BOLD, "terminal too small: %dx%d", t->lay.cols, t->lay.lines);
    draw_put(1, 0, t->lay.cols, A_NORMAL, "cnntop needs at least %dx%d", t->lay.need_cols,
             t->lay.need_lines);
    draw_put(2, 0, t->lay.cols, A_DIM, "q quits");
}

void screen_draw(Tui *t)
{
    layout_compute(&t->lay, COLS, LINES, t->view, panel_header.rows(t, COLS));
    erase();
    if (t->lay.too_small) {
        too_small(t);
        refresh();
        return;
    }
    for (const Slot *s = views[t->view]; s->panel; s++)
        s->panel->draw(t, *(const Rect *)((const char *)&t->lay + s->at));
    panel_help.draw(t, (Rect){0, 0, t->lay.lines, t->lay.cols});
    refresh();
}

/*
 * panel_status.c: the bottom row: a prompt being typed, the last message
 * (for 8 s or until a key), or the main keys; the views' tabs at the right.
 */
#include <stdio.h>

#include "common/fmt.h"
#include "tui/draw.h"
#include "tui/editor.h"
#include "tui/panel.h"

/* A prompt in w columns: the label, what is typed and a cursor, then the
 * hint.  Where that does not fit, the short label and no hint; where the
 * input still does not fit, its tail, so that the end being typed shows. */
static void status_prompt(int y, int w, const char *label, const char *brief, const char *input,
                          const char *hint)
{
    char tail[600];

    if (fmt_cols(label) + fmt_cols(input) + 1 + fmt_cols(hint) <= w) {
        draw_put(y, 0, w, A_BOLD, "%s%s_%s", label, input, hint);
        return;
    }
    fmt_fit_tail(tail, sizeof tail, input, w - fmt_cols(brief) - 1);
    draw_put(y, 0, w, A_BOLD, "%s%s_", brief, tail);
}

static void status_draw(Tui *t, Rect r)
{
    int tabs_w = 0;

    for (int i = 0; i < VIEW_COUNT; i++)
        tabs_w += fmt_cols(layout_tab_name((TuiView)i));
    int x = r.w - tabs_w;
    for (int i = 0; i < VIEW_COUNT; i++) {
        draw_put(r.y, x, r.w - x, i == (int)t->view ? A_REVERSE | A_BOLD : A_DIM, "%s",
                 layout_tab_name((TuiView)i));
        x += fmt_cols(layout_tab_name((TuiView)i));
    }
    int w = r.w - tabs_w - 1;
    if (t->prompt == PROMPT_QUIT) {
        draw_put(r.y, 0, w, A_BOLD | draw_pair(t, PAIR_WARN),
                 "run %d is going: stop it and quit? (y/n)", t->rv.seq);
    } else if (t->prompt == PROMPT_EXPORT) {
        status_prompt(r.y, w, "export to (.json .csv .md, Enter writes, Esc cancels): ",
                      "export to: ", t->input, "");
    } else if (t->prompt == PROMPT_EDIT) {
        char name[64];
        snprintf(name, sizeof name, "%s = ", editor_name(t->sel));
        status_prompt(r.y, w, name, name, t->input, "   (Enter sets, Esc cancels)");
    } else if (t->status[0] && t->now - t->status_t < 8.0) {
        /* A message longer than the room beside the tabs hides them while
         * it shows, rather than lose its end. */
        int mw = fmt_cols(t->status) > w ? r.w : w;
        if (mw > w)
            draw_put(r.y, 0, r.w, A_NORMAL, "%*s", r.w, "");
        draw_put(r.y, 0, mw, t->status_err ? A_BOLD | draw_pair(t, PAIR_BAD) : A_NORMAL, "%s",
                 t->status);
    } else {
        /* At 80 columns without "Tab view" (the tabs show beside it), so
         * that help and quit are not the keys cut off. */
        const char *keys = "s start  x stop  w/W workers  b/B batch  Tab view  ? help  q quit";
        draw_put(r.y, 0, w, A_DIM, "%s",
            fmt_cols(keys) <= w ? keys : "s start  x stop  w/W workers  b/B batch  ? help  q quit");
    }
}

const PanelClass panel_status = {.name = "status", .draw = status_draw};

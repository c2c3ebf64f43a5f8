/*
 * panel_settings.c: the settings, the next run's beside the running (or
 * last) run's, with the cursor, the value being typed, and whether each
 * applies live or to a new run.  The editor (editor.c) changes them.
 */
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "tui/draw.h"
#include "tui/editor.h"
#include "tui/panel.h"
#include "tui/panel_settings.h"

/* Setting i's value cut to w columns so that two different values never
 * look alike: augment by its initials, a path by its tail, anything else
 * marked with '~' (the whole value is in the status line when chosen). */
void panel_settings_cell(int i, const char *val, int w, char *buf, size_t len)
{
    char ini[64];

    if (fmt_cols(val) <= w)
        snprintf(buf, len, "%s", val);
    else if (i == SET_AUGMENT && fmt_cols(fmt_initials(ini, sizeof ini, val)) <= w)
        snprintf(buf, len, "%s", ini);
    else if (i == SET_DATA)
        fmt_fit_tail(buf, len, val, w);
    else
        fmt_fit(buf, len, val, w);
}

static void settings_draw(Tui *t, Rect r)
{
    char next[600], cur[600], cn[600], cc[600];
    int running = t->rv.seq && t->rv.state != RUN_FAILED;
    RunConfig rc = t->rv.cfg;

    if (r.h < 2)
        return;
    if (t->have_live) {
        rc.batch = t->live.batch;
        rc.workers = t->live.workers;
        rc.prefetch = t->live.prefetch;
    }
    rc.threads = t->rv.threads ? t->rv.threads : rc.threads;
    int vw = layout_settings_value_cols(&t->lay);
    draw_put(r.y, r.x, r.w, A_BOLD | draw_pair(t, PAIR_TITLE), "%-11s%*s %*s", "settings", vw, "next run",
        vw, t->rv.state == RUN_TRAINING ? "running" : "last run");
    int vis = r.h - 1, top = t->sel >= vis ? t->sel - vis + 1 : 0;
    for (int k = 0; k < vis && top + k < SET_COUNT; k++) {
        int i = top + k, y = r.y + 1 + k;
        editor_format(t, i, &t->set.cfg, t->set.data, t->set.ranks, next, sizeof next);
        if (t->prompt == PROMPT_EDIT && i == t->sel)
            snprintf(next, sizeof next, "%.100s_", t->input);
        if (running)
            editor_format(t, i, &rc, t->rv.data_dir, t->rv.ranks, cur, sizeof cur);
        else
            snprintf(cur, sizeof cur, "-");
        panel_settings_cell(i, next, vw, cn, sizeof cn);
        panel_settings_cell(i, cur, vw, cc, sizeof cc);
        attr_t a = i == t->sel ? A_REVERSE : A_NORMAL;
        draw_put(y, r.x, r.w, a, "%c %-9s%*s %*s %s", i == t->sel ? '>' : ' ', editor_name(i),
            vw + (int)strlen(cn) - fmt_cols(cn), cn, vw + (int)strlen(cc) - fmt_cols(cc), cc,
            editor_live(i) ? "live" : "new");
    }
}

const PanelClass panel_settings = {.name = "settings", .draw = settings_draw};

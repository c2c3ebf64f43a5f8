/*
 * panel_help.c: the help box over the screen (?, h, F1): one row per key
 * binding, written from keys.c's table, so that the help says what the
 * keys do; then what the dashboard itself costs.  panel_help_box() draws
 * any key table's help (`cnntop exec`'s dashboard has its own).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/version.h"
#include "tui/draw.h"
#include "tui/keys.h"
#include "tui/panel.h"

#define HELP_ROWS 40

/* The help's rows from the key table: the label in a 15-column field,
 * then the text, each '\n' of which starts an indented row.  Returns the
 * number of rows. */
static int help_rows(const KeyBinding *table, int count, char rows[][128], int most)
{
    int n = 0;

    for (int i = 0; i < count; i++) {
        const char *s = table[i].help, *label = table[i].label;
        while (s && n < most) {
            const char *nl = strchr(s, '\n');
            int len = nl ? (int)(nl - s) : (int)strlen(s);
            snprintf(rows[n++], 128, "%-14s %.*s", label, len, s);
            label = "";
            s = nl ? nl + 1 : NULL;
        }
    }
    return n;
}

/* The box: reverse video, centred, at most 86 columns wide. */
static void help_box(int y0, int x0, int h, int w)
{
    for (int y = 0; y < h; y++) {
        move(y0 + y, x0);
        attrset(A_REVERSE);
        for (int x = 0; x < w; x++)
            addch(' ');
    }
}

void panel_help_box(Rect r, const KeyBinding *table, int count, const char *foot)
{
    char rows[HELP_ROWS][128];
    int n = help_rows(table, count, rows, HELP_ROWS);
    int w = 86 < r.w - 2 ? 86 : r.w - 2, h = n + 6;

    if (h > r.h - 2)
        h = r.h - 2;
    int y0 = (r.h - h) / 2, x0 = (r.w - w) / 2;
    help_box(y0, x0, h, w);
    draw_put(y0, x0 + 2, w - 4, A_REVERSE | A_BOLD, "cnntop %s: keys", CNNTOP_VERSION);
    for (int i = 0; i < n && i + 2 < h - 3; i++)
        draw_put(y0 + 2 + i, x0 + 2, w - 4, A_REVERSE, "%s", rows[i]);
    draw_put(y0 + h - 2, x0 + 2, w - 4, A_REVERSE, "%s", foot);
    attrset(A_NORMAL);
}

static void help_draw(Tui *t, Rect r)
{
    char cost[128], foot[256];

    if (!t->help)
        return;
    if (isnan(t->ui_share))
        snprintf(cost, sizeof cost, "n/a: measuring (1 s)");
    else
        snprintf(cost, sizeof cost, "%.2f%% of one core", 100 * t->ui_share);
    snprintf(foot, sizeof foot, "dashboard (UI thread) CPU: %s, redrawn at 10 Hz;  %s", cost,
             t->utf8 ? "charts in braille" : "charts in ASCII (locale not UTF-8)");
    panel_help_box(r, keys_table, keys_count, foot);
}

const PanelClass panel_help = {.name = "help", .draw = help_draw};

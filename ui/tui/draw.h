/*
 * draw.h: the drawing primitives of the dashboard's panels.
 *
 * UI thread only; every call draws into curses' virtual screen (the frame
 * is sent once, by screen_draw()).  Nothing here reads the engine: the
 * figures come from Tui, copied by poll_tick().
 */
#ifndef CNNTOP_TUI_DRAW_H
#define CNNTOP_TUI_DRAW_H

#include <stddef.h>

#include "tui/tui.h"

/* Colour pair p, or A_NORMAL where the terminal is monochrome. */
attr_t draw_pair(const Tui *t, int p);

/* Prints at (y, x) at most w columns (w <= 0: nothing), in attribute a. */
void draw_put(int y, int x, int w, attr_t a, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* A panel's title row: the name in bold, then rest (may be NULL). */
void draw_title(const Tui *t, Rect r, const char *name, const char *rest);

/* Prints text wrapped at word boundaries over at most `rows` rows from
 * (y, x), each of w columns; returns the rows used.  Only a text longer
 * than every row together is cut (with '~'). */
int draw_wrapped(int y, int x, int w, int rows, attr_t a, const char *text);

/* Rows `text` takes wrapped at w columns, counting at most `most`. */
int draw_wrapped_rows(const char *text, int w, int most);

/* Why there is nothing to show of the current run ("no run yet", "run 2
 * failed"...), into buf; returns buf.  The same words on every chart and
 * figure, so that a failed run never reads "waiting". */
const char *draw_no_run_why(const Tui *t, char *buf, size_t len);

/* 1 when "n/a: text" wraps into the rows of chart r. */
int draw_na_fits(Rect r, const char *text);

#endif

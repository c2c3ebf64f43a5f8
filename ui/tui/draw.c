/*
 * draw.c: what every panel draws with (see draw.h): text cut to its
 * columns, titles, wrapped text, colours that fall back to monochrome,
 * and the words for "nothing to show yet".
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "tui/draw.h"

attr_t draw_pair(const Tui *t, int p)
{
    return t->color ? COLOR_PAIR(p) : A_NORMAL;
}

/* Prints at (y, x) at most w columns, in attribute a. */
void draw_put(int y, int x, int w, attr_t a, const char *fmt, ...)
{
    char text[1024], fit[1200];
    va_list ap;

    if (w <= 0)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fmt_fit(fit, sizeof fit, text, w);
    attrset(a);
    mvaddstr(y, x, fit);
    attrset(A_NORMAL);
}

/* A panel's title row: the name in bold, then the rest. */
void draw_title(const Tui *t, Rect r, const char *name, const char *rest)
{
    draw_put(r.y, r.x, r.w, A_BOLD | draw_pair(t, PAIR_TITLE), "%s", name);
    int n = fmt_cols(name);
    if (rest && *rest)
        draw_put(r.y, r.x + n + 1, r.w - n - 1, A_NORMAL, "%s", rest);
}

/* Prints text wrapped at word boundaries over at most `rows` rows from
 * (y, x), each of w columns; returns the rows used.  Only a text longer
 * than every row together is cut (with '~'). */
int draw_wrapped(int y, int x, int w, int rows, attr_t a, const char *text)
{
    char part[1024];
    int k = 0;

    while (*text && k < rows && w > 0) {
        size_t n = k == rows - 1 ? strlen(text) : fmt_wrap(text, w);
        snprintf(part, sizeof part, "%.*s", (int)(n < sizeof part ? n : sizeof part - 1), text);
        draw_put(y + k, x, w, a, "%s", part);
        text += n;
        text += strspn(text, " ");
        k++;
    }
    return k;
}

/* Rows `text` takes wrapped at w columns, counting at most `most`. */
int draw_wrapped_rows(const char *text, int w, int most)
{
    int k = 0;

    for (const char *p = text; *p && k < most && w > 0; k++) {
        p += fmt_wrap(p, w);
        p += strspn(p, " ");
    }
    return k;
}

/* Why there is nothing to show of the current run: the same words on
 * every chart and figure, so that a failed run never reads "waiting". */
const char *draw_no_run_why(const Tui *t, char *buf, size_t len)
{
    if (!t->rv.seq)
        snprintf(buf, len, "no run yet");
    else if (t->rv.state == RUN_FAILED)
        snprintf(buf, len, "run %d failed", t->rv.seq);
    else if (t->rv.state == RUN_LOADING)
        snprintf(buf, len, "run %d is loading", t->rv.seq);
    else if (t->rv.state == RUN_STOPPED || t->rv.state == RUN_FINISHED)
        snprintf(buf, len, "run %d trained no step", t->rv.seq);
    else
        snprintf(buf, len, "waiting for the first samples");
    return buf;
}

/* 1 when "n/a: text" wraps into the rows of chart r. */
int draw_na_fits(Rect r, const char *text)
{
    char na[600];

    snprintf(na, sizeof na, "n/a: %s", text);
    return draw_wrapped_rows(na, r.w - 3, r.h) <= r.h - 1;
}

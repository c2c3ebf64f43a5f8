/*
 * textbuf.c: the growable text of textbuf.h, grown by doubling.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/textbuf.h"

/* Room for n more bytes and the NUL; 0, or -1 (and failed) when out of memory. */
static int reserve(TextBuf *t, size_t n)
{
    size_t cap = t->cap ? t->cap : 4096;
    char *b;

    if (t->failed)
        return -1;
    if (t->len + n + 1 <= t->cap)
        return 0;
    while (cap < t->len + n + 1)
        cap *= 2;
    if (!(b = realloc(t->buf, cap))) {
        t->failed = 1;
        return -1;
    }
    t->buf = b;
    t->cap = cap;
    return 0;
}

void textbuf_write(TextBuf *t, const char *s, size_t n)
{
    if (reserve(t, n) != 0)
        return;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

void textbuf_putc(TextBuf *t, char c)
{
    textbuf_write(t, &c, 1);
}

void textbuf_printf(TextBuf *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (t->failed)
        return;
    /* Straight into the room left; when it does not fit, grow and again. */
    va_start(ap, fmt);
    n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->failed = 1;
        return;
    }
    if (t->len + (size_t)n + 1 > t->cap) {
        if (reserve(t, (size_t)n) != 0)
            return;
        va_start(ap, fmt);
        vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
    }
    t->len += (size_t)n;
}

int textbuf_finish(TextBuf *t, char **out, size_t *len)
{
    if (reserve(t, 0) == 0)
        t->buf[t->len] = '\0'; /* an empty text is "", not NULL */
    *out = t->failed ? NULL : t->buf;
    *len = t->failed ? 0 : t->len;
    if (t->failed)
        free(t->buf);
    int rc = t->failed ? -1 : 0;
    memset(t, 0, sizeof *t);
    return rc;
}

void textbuf_free(TextBuf *t)
{
    free(t->buf);
    memset(t, 0, sizeof *t);
}

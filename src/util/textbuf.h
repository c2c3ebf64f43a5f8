/*
 * textbuf.h: a growable text in memory, for exports made whole before
 * they are written (the record's CSV and Markdown; the trace may use it
 * too).
 *
 * TextBuf t = {0} is an empty text.  Writes append; one that cannot grow
 * the buffer (out of memory) is remembered in `failed`, and every later
 * write does nothing, so a caller checks once, at textbuf_finish().  The
 * engine never prints (scripts/layers.py refuses printf and its family in
 * src/), so this formats with vsnprintf() into its own buffer rather than
 * into a stdio stream.
 */
#ifndef CNNTOP_UTIL_TEXTBUF_H
#define CNNTOP_UTIL_TEXTBUF_H

#include <stddef.h>

typedef struct TextBuf {
    char *buf;        /* the text, NUL-terminated when non-NULL */
    size_t len, cap;  /* bytes used (without the NUL), bytes allocated */
    int failed;       /* 1 after a write could not grow the buffer */
} TextBuf;

/* Appends n bytes of s. */
void textbuf_write(TextBuf *t, const char *s, size_t n);

/* Appends what printf(fmt, ...) would print. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void textbuf_printf(TextBuf *t, const char *fmt, ...);

/* Appends one character. */
void textbuf_putc(TextBuf *t, char c);

/*
 * Hands the text over: *out (NUL-terminated; free() it) and *len, and
 * returns 0; or, after a failed write, frees it and returns -1 with *out
 * NULL.  t is empty afterwards either way.
 */
int textbuf_finish(TextBuf *t, char **out, size_t *len);

/* Frees the text (unless textbuf_finish() took it).  Idempotent. */
void textbuf_free(TextBuf *t);

#endif

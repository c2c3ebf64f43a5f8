/*
 * json_write.c: the JSON writer of json.h.
 *
 * A stack (one entry per open container) remembers whether the container
 * is an object and whether it has items yet, which is all it takes to
 * place commas and indentation.  Any misuse sets `failed`, which
 * json_writer_finish() reports, so callers need not check every call.
 * The text goes to an open_memstream() (POSIX 2008), which does the
 * growing; a failed write (out of memory) counts as misuse does.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/json.h"
#include "util/utf8.h"

void json_writer_init(JsonWriter *w, int pretty)
{
    memset(w, 0, sizeof *w);
    w->pretty = pretty;
    w->out = open_memstream(&w->buf, &w->len);
    if (!w->out)
        w->failed = 1;
}

void json_writer_done(JsonWriter *w)
{
    if (w->out)
        fclose(w->out);
    free(w->buf);
    w->out = NULL;
    w->buf = NULL;
    w->len = 0;
}

static void put(JsonWriter *w, const char *s, size_t n)
{
    if (w->failed)
        return;
    if (fwrite(s, 1, n, w->out) != n)
        w->failed = 1;
}

static void puts_(JsonWriter *w, const char *s)
{
    put(w, s, strlen(s));
}

static void newline_indent(JsonWriter *w)
{
    if (!w->pretty)
        return;
    put(w, "\n", 1);
    for (int i = 0; i < w->depth; i++)
        put(w, "  ", 2);
}

/* Places the comma and indentation before a value; flags misuse. */
static void before_value(JsonWriter *w)
{
    if (w->depth == 0) {
        if (w->started)
            w->failed = 1; /* a second top-level value */
        w->started = 1;
        return;
    }
    if (w->is_object[w->depth - 1]) {
        if (!w->want_value)
            w->failed = 1; /* a value where a key is due */
        w->want_value = 0;
        return;
    }
    if (w->count[w->depth - 1])
        put(w, ",", 1);
    w->count[w->depth - 1] = 1;
    newline_indent(w);
}

static void begin(JsonWriter *w, int is_object)
{
    before_value(w);
    if (w->depth == JSON_MAX_DEPTH) {
        w->failed = 1;
        return;
    }
    put(w, is_object ? "{" : "[", 1);
    w->is_object[w->depth] = (unsigned char)is_object;
    w->count[w->depth] = 0;
    w->depth++;
}

static void end(JsonWriter *w, int is_object)
{
    if (w->depth == 0 || w->is_object[w->depth - 1] != is_object || w->want_value) {
        w->failed = 1;
        return;
    }
    int had = w->count[w->depth - 1];
    w->depth--;
    if (had)
        newline_indent(w);
    put(w, is_object ? "}" : "]", 1);
}

void json_begin_object(JsonWriter *w) { begin(w, 1); }
void json_end_object(JsonWriter *w) { end(w, 1); }
void json_begin_array(JsonWriter *w) { begin(w, 0); }
void json_end_array(JsonWriter *w) { end(w, 0); }

static void put_escaped(JsonWriter *w, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    char esc[8];

    put(w, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t run = utf8_valid(s + i, n - i);
        if (run == 0) {
            put(w, "\xEF\xBF\xBD", 3); /* U+FFFD for a byte that is not UTF-8 */
            i++;
            continue;
        }
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put(w, esc, 2);
        } else if (c < 0x20) {
            const char *named = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r"
                              : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
            if (named) {
                puts_(w, named);
            } else {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                put(w, esc, 6);
            }
        } else {
            put(w, (const char *)s + i, run);
        }
        i += run;
    }
    put(w, "\"", 1);
}

void json_key(JsonWriter *w, const char *key)
{
    if (w->depth == 0 || !w->is_object[w->depth - 1] || w->want_value || !key) {
        w->failed = 1;
        return;
    }
    if (w->count[w->depth - 1])
        put(w, ",", 1);
    w->count[w->depth - 1] = 1;
    newline_indent(w);
    put_escaped(w, key, strlen(key));
    puts_(w, w->pretty ? ": " : ":");
    w->want_value = 1;
}

void json_string_n(JsonWriter *w, const char *s, size_t len)
{
    before_value(w);
    if (s)
        put_escaped(w, s, len);
    else
        puts_(w, "null");
}

void json_string(JsonWriter *w, const char *s)
{
    json_string_n(w, s, s ? strlen(s) : 0);
}

/* Replaces the locale's decimal point in buf by '.', so that the text is
 * JSON whatever LC_NUMERIC the front end chose. */
static void dot_from_locale(char *buf, size_t size)
{
    const char *dp = localeconv()->decimal_point;
    size_t dl = dp ? strlen(dp) : 0;
    char *at;

    if (dl == 0 || (dl == 1 && dp[0] == '.') || !(at = strstr(buf, dp)))
        return;
    *at = '.';
    memmove(at + 1, at + dl, strlen(at + dl) + 1);
    (void)size;
}

/* The shortest of %.15g..%.17g (%.6g..%.9g for a float) that reads back
 * exactly: 0.1 stays "0.1" instead of "0.10000000000000001". */
static int format_real(double x, int single, char *buf, size_t len)
{
    int lo = single ? 6 : 15, hi = single ? 9 : 17;

    if (!buf || len < 32)
        return -1;
    buf[0] = '\0';
    if (!isfinite(x))
        return -1;
    for (int prec = lo; prec <= hi; prec++) {
        if (snprintf(buf, len, "%.*g", prec, x) >= (int)len)
            return -1;
        if (single ? strtof(buf, NULL) == (float)x : strtod(buf, NULL) == x)
            break;
    }
    dot_from_locale(buf, len);
    return 0;
}

int json_format_number(double x, char *buf, size_t len)
{
    return format_real(x, 0, buf, len);
}

int json_format_float(float x, char *buf, size_t len)
{
    return format_real(x, 1, buf, len);
}

void json_number(JsonWriter *w, double x)
{
    char buf[64];

    before_value(w);
    puts_(w, format_real(x, 0, buf, sizeof buf) == 0 ? buf : "null");
}

void json_float(JsonWriter *w, float x)
{
    char buf[64];

    before_value(w);
    puts_(w, format_real(x, 1, buf, sizeof buf) == 0 ? buf : "null");
}

void json_int(JsonWriter *w, int64_t x)
{
    char buf[32];

    before_value(w);
    snprintf(buf, sizeof buf, "%lld", (long long)x);
    puts_(w, buf);
}

void json_uint(JsonWriter *w, uint64_t x)
{
    char buf[32];

    before_value(w);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)x);
    puts_(w, buf);
}

void json_bool(JsonWriter *w, int b)
{
    before_value(w);
    puts_(w, b ? "true" : "false");
}

void json_null(JsonWriter *w)
{
    before_value(w);
    puts_(w, "null");
}

int json_writer_finish(JsonWriter *w, char **out, size_t *len)
{
    int bad;

    *out = NULL;
    *len = 0;
    if (w->pretty)
        put(w, "\n", 1);
    bad = w->failed || w->depth != 0 || w->want_value || !w->started || !w->out ||
          ferror(w->out);
    if (w->out && fclose(w->out) != 0)
        bad = 1;
    w->out = NULL;
    if (bad) {
        json_writer_done(w);
        return -1;
    }
    *out = w->buf;
    *len = w->len;
    w->buf = NULL;
    w->len = 0;
    return 0;
}

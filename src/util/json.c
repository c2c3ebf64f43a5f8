/*
 * json.c: the JSON writer and the strict DOM parser of json.h.
 *
 * Writer: a stack (one entry per open container) remembers whether the
 * container is an object and whether it has items yet, which is all it
 * takes to place commas and indentation.  Any misuse sets `failed`, which
 * json_writer_finish() reports, so callers need not check every call.
 * The text goes to an open_memstream() (POSIX 2008), which does the
 * growing; a failed write (out of memory) counts as misuse does.
 *
 * Parser: recursive descent over text[0..len) with an explicit position;
 * every read checks the position against len first, and the recursion depth
 * is capped at JSON_MAX_DEPTH, so hostile input can make it fail but not
 * overrun.  Partly built trees are always in a freeable state (slots are
 * zeroed before they are filled), so the one error path is "free the
 * root".  Line and column are computed only when an error is reported.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/json.h"

/* ---------------------------------------------------------------- writer */

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

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are not). */
static size_t utf8_valid(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t need;
    unsigned cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        need = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        need = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        need = 4, cp = c & 0x07;
    else
        return 0;
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((need == 3 && cp < 0x800) || (need == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return need;
}

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

/* ---------------------------------------------------------------- parser */

typedef struct Parser {
    const unsigned char *s;
    size_t len, pos;
    char *err;
    size_t errlen;
    int failed;
} Parser;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail_at(Parser *p, size_t at, const char *fmt, ...)
{
    size_t line = 1, col = 1;
    char msg[200];
    va_list ap;

    if (p->failed)
        return -1;
    p->failed = 1;
    if (at > p->len)
        at = p->len;
    for (size_t i = 0; i < at; i++) {
        if (p->s[i] == '\n')
            line++, col = 1;
        else if ((p->s[i] & 0xC0) != 0x80)
            col++;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (p->err && p->errlen)
        snprintf(p->err, p->errlen, "%zu:%zu: %s", line, col, msg);
    return -1;
}

/* "'x'" for a printable character, "byte 0xNN" otherwise, "end of input". */
static const char *describe(const Parser *p, size_t at, char *buf, size_t len)
{
    if (at >= p->len)
        return "end of input";
    unsigned c = p->s[at];
    if (c >= 0x20 && c < 0x7F)
        snprintf(buf, len, "'%c'", (char)c);
    else
        snprintf(buf, len, "byte 0x%02x", c);
    return buf;
}

static int unexpected(Parser *p, const char *wanted)
{
    char d[32];
    return fail_at(p, p->pos, "expected %s, found %s", wanted,
                   describe(p, p->pos, d, sizeof d));
}

static void skip_ws(Parser *p)
{
    while (p->pos < p->len) {
        unsigned char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static int parse_value(Parser *p, JsonValue *v, int depth);

static void value_clear(JsonValue *v)
{
    if (v->type == JSON_STRING) {
        free(v->str);
    } else if (v->type == JSON_ARRAY) {
        for (size_t i = 0; i < v->len; i++)
            value_clear(&v->items[i]);
        free(v->items);
    } else if (v->type == JSON_OBJECT) {
        for (size_t i = 0; i < v->len; i++) {
            free(v->members[i].key);
            value_clear(&v->members[i].value);
        }
        free(v->members);
    }
    memset(v, 0, sizeof *v);
}

void json_free(JsonValue *v)
{
    if (!v)
        return;
    value_clear(v);
    free(v);
}

static int literal(Parser *p, JsonValue *v, const char *word, JsonType t, int b)
{
    size_t n = strlen(word);

    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
        return unexpected(p, "a value");
    p->pos += n;
    v->type = t;
    v->boolean = b;
    return 0;
}

static int is_digit(const Parser *p, size_t at)
{
    return at < p->len && p->s[at] >= '0' && p->s[at] <= '9';
}

/* Scans the number grammar of RFC 8259 from p->pos; returns its end or 0. */
static size_t number_end(Parser *p, int *integral)
{
    size_t i = p->pos;

    *integral = 1;
    if (i < p->len && p->s[i] == '-')
        i++;
    if (!is_digit(p, i))
        return fail_at(p, i, "a number needs a digit here"), 0;
    if (p->s[i] == '0') {
        i++;
        if (is_digit(p, i))
            return fail_at(p, i, "leading zeros are not allowed"), 0;
    } else {
        while (is_digit(p, i))
            i++;
    }
    if (i < p->len && p->s[i] == '.') {
        *integral = 0;
        if (!is_digit(p, ++i))
            return fail_at(p, i, "a digit must follow the decimal point"), 0;
        while (is_digit(p, i))
            i++;
    }
    if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        *integral = 0;
        i++;
        if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
            i++;
        if (!is_digit(p, i))
            return fail_at(p, i, "the exponent needs a digit"), 0;
        while (is_digit(p, i))
            i++;
    }
    return i;
}

static void exact_integer(const Parser *p, size_t end, JsonValue *v)
{
    size_t i = p->pos;
    uint64_t m = 0;

    v->negative = p->s[i] == '-';
    i += (size_t)v->negative;
    for (; i < end; i++) {
        unsigned d = p->s[i] - '0';
        if (m > (UINT64_MAX - d) / 10)
            return; /* too large: only the double is kept */
        m = m * 10 + d;
    }
    v->magnitude = m;
    v->int_exact = 1;
}

static int parse_number(Parser *p, JsonValue *v)
{
    char buf[1100];
    const char *dp = localeconv()->decimal_point;
    size_t dl = dp && *dp ? strlen(dp) : 1, o = 0;
    int integral;
    size_t end = number_end(p, &integral);

    if (end == 0)
        return -1;
    if (end - p->pos > 1000)
        return fail_at(p, p->pos, "number too long (%zu characters, at most 1000)", end - p->pos);
    /* strtod reads the locale's decimal point; give it that. */
    for (size_t i = p->pos; i < end; i++) {
        if (p->s[i] == '.' && dl <= 8 && dp && *dp) {
            memcpy(buf + o, dp, dl);
            o += dl;
        } else {
            buf[o++] = (char)p->s[i];
        }
    }
    buf[o] = '\0';
    errno = 0;
    v->number = strtod(buf, NULL);
    if (errno == ERANGE && isinf(v->number))
        return fail_at(p, p->pos, "number out of range");
    v->type = JSON_NUMBER;
    if (integral)
        exact_integer(p, end, v);
    p->pos = end;
    return 0;
}

static int hex4(Parser *p, size_t at, unsigned *out)
{
    unsigned x = 0;

    if (at > p->len || p->len - at < 4)
        return fail_at(p, at, "\\u needs four hex digits");
    for (size_t i = at; i < at + 4; i++) {
        unsigned c = p->s[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return fail_at(p, i, "\\u needs four hex digits");
        x = x << 4 | d;
    }
    *out = x;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes the escape at p->pos (just after the backslash) into o. */
static int unescape(Parser *p, char *o, size_t *olen)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    unsigned cp = 0, lo = 0;
    size_t at = p->pos - 1;

    if (p->pos >= p->len)
        return fail_at(p, p->pos, "unterminated string");
    const char *k = memchr(from, p->s[p->pos], sizeof from - 1);
    if (k) {
        o[(*olen)++] = to[k - from];
        p->pos++;
        return 0;
    }
    if (p->s[p->pos] != 'u') {
        char d[32];
        return fail_at(p, at, "invalid escape \\%s", describe(p, p->pos, d, sizeof d));
    }
    if (hex4(p, p->pos + 1, &cp) != 0)
        return -1;
    p->pos += 5;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return fail_at(p, at, "lone low surrogate \\u%04x", cp);
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
            return fail_at(p, at, "high surrogate \\u%04x without its low half", cp);
        if (hex4(p, p->pos + 2, &lo) != 0)
            return -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail_at(p, p->pos, "\\u%04x is not a low surrogate", lo);
        p->pos += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    *olen += put_utf8(o + *olen, cp);
    return 0;
}

/* Parses the string at p->pos (the opening quote) into *out, *outlen. */
static int parse_string_raw(Parser *p, char **out, size_t *outlen)
{
    size_t start = p->pos + 1, i = start, n = 0;
    char *o;

    /* First find the end, so the output can be sized: no escape decodes to
     * more bytes than it takes in the input. */
    while (i < p->len && p->s[i] != '"')
        i += p->s[i] == '\\' ? 2 : 1;
    if (i >= p->len)
        return fail_at(p, p->pos, "unterminated string");
    o = malloc(i - start + 1);
    if (!o)
        return fail_at(p, p->pos, "out of memory");
    p->pos = start;
    while (p->s[p->pos] != '"') {
        unsigned c = p->s[p->pos];
        size_t run;
        if (c == '\\') {
            p->pos++;
            if (unescape(p, o, &n) != 0)
                goto fail;
        } else if (c < 0x20) {
            fail_at(p, p->pos, "control character 0x%02x in a string must be escaped", c);
            goto fail;
        } else if ((run = utf8_valid(p->s + p->pos, p->len - p->pos)) == 0) {
            fail_at(p, p->pos, "invalid UTF-8 (byte 0x%02x)", c);
            goto fail;
        } else {
            memcpy(o + n, p->s + p->pos, run);
            n += run;
            p->pos += run;
        }
    }
    p->pos++;
    o[n] = '\0';
    *out = o;
    *outlen = n;
    return 0;
fail:
    free(o);
    return -1;
}

static int grow(Parser *p, void **arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 4;
    void *a = realloc(*arr, nc * size);
    if (!a)
        return fail_at(p, p->pos, "out of memory");
    *arr = a;
    *cap = nc;
    return 0;
}

static int parse_array(Parser *p, JsonValue *v, int depth)
{
    size_t cap = 0;

    v->type = JSON_ARRAY;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
        return 0;
    }
    for (;;) {
        if (grow(p, (void **)&v->items, &cap, v->len, sizeof *v->items) != 0 || !v->items)
            return -1;
        memset(&v->items[v->len], 0, sizeof *v->items);
        v->len++;
        if (parse_value(p, &v->items[v->len - 1], depth + 1) != 0)
            return -1;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == ']') {
            p->pos++;
            return 0;
        }
        return unexpected(p, "',' or ']'");
    }
}

static int parse_object(Parser *p, JsonValue *v, int depth)
{
    size_t cap = 0;

    v->type = JSON_OBJECT;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
        return 0;
    }
    for (;;) {
        JsonMember *m;
        skip_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != '"')
            return unexpected(p, "a string key");
        if (grow(p, (void **)&v->members, &cap, v->len, sizeof *v->members) != 0 || !v->members)
            return -1;
        m = &v->members[v->len];
        memset(m, 0, sizeof *m);
        v->len++;
        if (parse_string_raw(p, &m->key, &m->key_len) != 0)
            return -1;
        skip_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != ':')
            return unexpected(p, "':' after the key");
        p->pos++;
        if (parse_value(p, &m->value, depth + 1) != 0)
            return -1;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == '}') {
            p->pos++;
            return 0;
        }
        return unexpected(p, "',' or '}'");
    }
}

static int parse_value(Parser *p, JsonValue *v, int depth)
{
    skip_ws(p);
    if (p->pos >= p->len)
        return unexpected(p, "a value");
    switch (p->s[p->pos]) {
    case '{':
    case '[':
        if (depth >= JSON_MAX_DEPTH)
            return fail_at(p, p->pos, "nested deeper than %d levels", JSON_MAX_DEPTH);
        return p->s[p->pos] == '{' ? parse_object(p, v, depth) : parse_array(p, v, depth);
    case '"':
        v->type = JSON_STRING;
        return parse_string_raw(p, &v->str, &v->len);
    case 't':
        return literal(p, v, "true", JSON_BOOL, 1);
    case 'f':
        return literal(p, v, "false", JSON_BOOL, 0);
    case 'n':
        return literal(p, v, "null", JSON_NULL, 0);
    default:
        if (p->s[p->pos] == '-' || (p->s[p->pos] >= '0' && p->s[p->pos] <= '9'))
            return parse_number(p, v);
        return unexpected(p, "a value");
    }
}

int json_parse(const char *text, size_t len, JsonValue **out, char *err, size_t errlen)
{
    Parser p = {.s = (const unsigned char *)text, .len = len, .err = err, .errlen = errlen};
    JsonValue *v;

    *out = NULL;
    if (len > JSON_MAX_INPUT)
        return fail_at(&p, 0, "document too large (%zu bytes, at most %zu)", len,
                       JSON_MAX_INPUT);
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        return fail_at(&p, 0, "byte order mark is not allowed");
    v = calloc(1, sizeof *v);
    if (!v)
        return fail_at(&p, 0, "out of memory");
    if (parse_value(&p, v, 0) != 0) {
        json_free(v);
        return -1;
    }
    skip_ws(&p);
    if (p.pos < p.len) {
        char d[32];
        fail_at(&p, p.pos, "unexpected %s after the document", describe(&p, p.pos, d, sizeof d));
        json_free(v);
        return -1;
    }
    *out = v;
    return 0;
}

/* --------------------------------------------------------------- lookups */

const JsonValue *json_get(const JsonValue *obj, const char *key)
{
    if (!obj || obj->type != JSON_OBJECT || !key)
        return NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < obj->len; i++)
        if (obj->members[i].key_len == kl && memcmp(obj->members[i].key, key, kl) == 0)
            return &obj->members[i].value;
    return NULL;
}

const JsonValue *json_at(const JsonValue *arr, size_t i)
{
    if (!arr || arr->type != JSON_ARRAY || i >= arr->len)
        return NULL;
    return &arr->items[i];
}

size_t json_count(const JsonValue *v)
{
    return v && (v->type == JSON_ARRAY || v->type == JSON_OBJECT) ? v->len : 0;
}

int json_is(const JsonValue *v, JsonType t)
{
    return v && v->type == t;
}

double json_as_number(const JsonValue *v, double def)
{
    return json_is(v, JSON_NUMBER) ? v->number : def;
}

int64_t json_as_int(const JsonValue *v, int64_t def)
{
    if (!json_is(v, JSON_NUMBER) || !v->int_exact)
        return def;
    if (v->negative)
        return v->magnitude <= (uint64_t)INT64_MAX ? -(int64_t)v->magnitude
               : v->magnitude == (uint64_t)INT64_MAX + 1 ? INT64_MIN : def;
    return v->magnitude <= (uint64_t)INT64_MAX ? (int64_t)v->magnitude : def;
}

uint64_t json_as_uint(const JsonValue *v, uint64_t def)
{
    if (!json_is(v, JSON_NUMBER) || !v->int_exact || (v->negative && v->magnitude))
        return def;
    return v->magnitude;
}

const char *json_as_string(const JsonValue *v, const char *def)
{
    return json_is(v, JSON_STRING) ? v->str : def;
}

int json_as_bool(const JsonValue *v, int def)
{
    return json_is(v, JSON_BOOL) ? v->boolean : def;
}

/*
 * test_json.c: the JSON writer and parser.
 *
 * Round trips (escapes, control characters, invalid UTF-8, NUL bytes,
 * numbers that must read back bit for bit, 64-bit integers, non-finite
 * numbers as null), the exact compact text of a small document, writer
 * misuse, a table of malformed documents each refused with the right
 * LINE:COLUMN, the depth limit, and a few thousand random mutations of a
 * valid document (run under ASan in CI: none may crash or overrun).
 */
#include <locale.h>
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "cnntop/json.h"

static char *finish(JsonWriter *w, size_t *len)
{
    char *out;

    if (json_writer_finish(w, &out, len) != 0)
        return NULL;
    return out;
}

static void test_compact(void)
{
    JsonWriter w;
    size_t len;
    char *s;

    json_writer_init(&w, 0);
    json_begin_object(&w);
    json_key(&w, "a");
    json_begin_array(&w);
    json_int(&w, 1);
    json_number(&w, 0.1);
    json_string(&w, "x\"y\\z\n\x01");
    json_null(&w);
    json_bool(&w, 1);
    json_number(&w, NAN);
    json_number(&w, INFINITY);
    json_begin_object(&w);
    json_end_object(&w);
    json_begin_array(&w);
    json_end_array(&w);
    json_end_array(&w);
    json_key(&w, "b");
    json_float(&w, 0.1f);
    json_end_object(&w);
    s = finish(&w, &len);
    CHECK(s != NULL);
    if (s)
        CHECK_INT(strcmp(s, "{\"a\":[1,0.1,\"x\\\"y\\\\z\\n\\u0001\",null,true,null,null,{},[]],"
                            "\"b\":0.1}"), ==, 0);
    if (s && strlen(s) != len)
        CHECK(0);
    free(s);

    /* Pretty output indents like hyperfine's. */
    json_writer_init(&w, 1);
    json_begin_object(&w);
    json_key(&w, "results");
    json_begin_array(&w);
    json_begin_object(&w);
    json_key(&w, "mean");
    json_number(&w, 1.5);
    json_end_object(&w);
    json_end_array(&w);
    json_end_object(&w);
    s = finish(&w, &len);
    CHECK(s && !strcmp(s, "{\n  \"results\": [\n    {\n      \"mean\": 1.5\n    }\n  ]\n}\n"));
    free(s);
}

static void test_misuse(void)
{
    JsonWriter w;
    size_t len;
    char *s;

    json_writer_init(&w, 0); /* a value where a key is due */
    json_begin_object(&w);
    json_int(&w, 1);
    json_end_object(&w);
    CHECK(finish(&w, &len) == NULL);

    json_writer_init(&w, 0); /* unbalanced */
    json_begin_array(&w);
    CHECK(finish(&w, &len) == NULL);

    json_writer_init(&w, 0); /* wrong end */
    json_begin_array(&w);
    json_end_object(&w);
    CHECK(finish(&w, &len) == NULL);

    json_writer_init(&w, 0); /* key without value */
    json_begin_object(&w);
    json_key(&w, "k");
    json_end_object(&w);
    CHECK(finish(&w, &len) == NULL);

    json_writer_init(&w, 0); /* two top-level values */
    json_int(&w, 1);
    json_int(&w, 2);
    CHECK(finish(&w, &len) == NULL);

    json_writer_init(&w, 0); /* too deep */
    for (int i = 0; i <= JSON_MAX_DEPTH; i++)
        json_begin_array(&w);
    CHECK(finish(&w, &len) == NULL);

    json_writer_init(&w, 0); /* nothing at all */
    CHECK(finish(&w, &len) == NULL);

    json_writer_init(&w, 0);
    json_string(&w, NULL);
    s = finish(&w, &len);
    CHECK(s && !strcmp(s, "null"));
    free(s);
}

static const double numbers[] = {
    0.0, -0.0, 1.0, -1.5, 0.1, 1.0 / 3.0, 2.0 / 3.0, 1e300, -1e-300, 5e-324,
    1.7976931348623157e308, 123456789.123456789, 0.30000000000000004, 6.02214076e23,
};

static void test_round_trip(void)
{
    static const char weird[] = "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f é € 😀 \xff\xfe bad \xc0\xaf end";
    static const char nul[] = {'a', '\0', 'b'};
    JsonWriter w;
    JsonValue *v = NULL;
    char err[200], *s;
    size_t len, nn = sizeof numbers / sizeof *numbers;

    json_writer_init(&w, 1);
    json_begin_object(&w);
    json_key(&w, "weird");
    json_string(&w, weird);
    json_key(&w, "nul");
    json_string_n(&w, nul, 3);
    json_key(&w, "key \"quoted\"\n");
    json_bool(&w, 0);
    json_key(&w, "numbers");
    json_begin_array(&w);
    for (size_t i = 0; i < nn; i++)
        json_number(&w, numbers[i]);
    json_end_array(&w);
    json_key(&w, "nonfinite");
    json_begin_array(&w);
    json_number(&w, NAN);
    json_number(&w, -INFINITY);
    json_float(&w, INFINITY);
    json_end_array(&w);
    json_key(&w, "i64min");
    json_int(&w, INT64_MIN);
    json_key(&w, "i64max");
    json_int(&w, INT64_MAX);
    json_key(&w, "u64max");
    json_uint(&w, UINT64_MAX);
    json_key(&w, "f");
    json_float(&w, 3.14159274f);
    json_end_object(&w);
    s = finish(&w, &len);
    CHECK(s != NULL);
    if (!s)
        return;
    CHECK(strstr(s, "\\u0001\\u001f") != NULL);
    CHECK(strstr(s, "\\b\\f\\n\\r\\t") != NULL);
    CHECK(strstr(s, "\xef\xbf\xbd\xef\xbf\xbd bad \xef\xbf\xbd\xef\xbf\xbd end") != NULL);
    CHECK(strstr(s, "\"i64min\": -9223372036854775808") != NULL);
    CHECK(strstr(s, "\"u64max\": 18446744073709551615") != NULL);
    CHECK(strstr(s, "\"f\": 3.1415927") != NULL);
    CHECK(strstr(s, "0.1,") != NULL); /* shortest form */

    CHECK_INT(json_parse(s, len, &v, err, sizeof err), ==, 0);
    if (!v) {
        fprintf(stderr, "parse: %s\n%s\n", err, s);
        free(s);
        return;
    }
    const char *back = json_as_string(json_get(v, "weird"), "");
    CHECK_STR_HAS(back, "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f é € 😀 ");
    CHECK_STR_HAS(back, "\xef\xbf\xbd\xef\xbf\xbd bad");
    const JsonValue *n = json_get(v, "nul");
    CHECK(n && n->len == 3 && !memcmp(n->str, nul, 3));
    CHECK(json_is(json_get(v, "key \"quoted\"\n"), JSON_BOOL));
    CHECK_INT(json_as_bool(json_get(v, "key \"quoted\"\n"), 1), ==, 0);
    const JsonValue *arr = json_get(v, "numbers");
    CHECK_INT(json_count(arr), ==, nn);
    for (size_t i = 0; i < nn; i++) {
        double x = json_as_number(json_at(arr, i), NAN);
        CHECK(memcmp(&x, &numbers[i], sizeof x) == 0); /* bit for bit, -0 too */
    }
    const JsonValue *nf = json_get(v, "nonfinite");
    CHECK_INT(json_count(nf), ==, 3);
    for (size_t i = 0; i < 3; i++)
        CHECK(json_is(json_at(nf, i), JSON_NULL));
    CHECK(isnan(json_as_number(json_at(nf, 0), NAN)));
    CHECK(json_as_int(json_get(v, "i64min"), 0) == INT64_MIN);
    CHECK(json_as_int(json_get(v, "i64max"), 0) == INT64_MAX);
    CHECK(json_as_uint(json_get(v, "u64max"), 0) == UINT64_MAX);
    CHECK(json_as_int(json_get(v, "u64max"), 7) == 7);   /* out of int64 range */
    CHECK(json_as_uint(json_get(v, "i64min"), 7) == 7);  /* negative */
    CHECK((float)json_as_number(json_get(v, "f"), 0) == 3.14159274f);
    /* Lookups tolerate NULL and the wrong type. */
    CHECK(json_get(NULL, "x") == NULL && json_get(arr, "x") == NULL);
    CHECK(json_at(v, 0) == NULL && json_at(arr, nn) == NULL);
    CHECK(json_as_number(json_get(v, "weird"), 42) == 42);
    CHECK(!strcmp(json_as_string(NULL, "def"), "def"));
    CHECK(json_as_int(json_at(arr, 4), -1) == -1); /* 0.1 is not an integer */
    json_free(v);
    free(s);
}

static void test_parse_values(void)
{
    static const char doc[] = " {\"s\":\"\\ud83d\\ude00\\u00e9\\u0041\\/\",\"n\":-12.5e1,"
                              "\"big\":123456789012345678901234567890,\"z\":-0,\"e\":[],"
                              "\"o\":{},\"t\":true,\"dup\":1,\"dup\":2} \n";
    JsonValue *v;
    char err[200];

    CHECK_INT(json_parse(doc, sizeof doc - 1, &v, err, sizeof err), ==, 0);
    if (!v)
        return;
    CHECK(!strcmp(json_as_string(json_get(v, "s"), ""), "\xf0\x9f\x98\x80\xc3\xa9" "A/"));
    CHECK(json_as_number(json_get(v, "n"), 0) == -125.0);
    CHECK(json_as_number(json_get(v, "big"), 0) == 123456789012345678901234567890.0);
    CHECK(json_as_int(json_get(v, "big"), -1) == -1);
    CHECK(json_as_int(json_get(v, "z"), 5) == 0);
    CHECK(json_is(json_get(v, "e"), JSON_ARRAY) && json_count(json_get(v, "e")) == 0);
    CHECK(json_is(json_get(v, "o"), JSON_OBJECT) && json_count(json_get(v, "o")) == 0);
    CHECK(json_as_int(json_get(v, "dup"), 0) == 1); /* the first */
    json_free(v);

    /* Not NUL-terminated: only len bytes are read. */
    char buf[4] = {'[', '1', ']', 'x'};
    CHECK_INT(json_parse(buf, 3, &v, err, sizeof err), ==, 0);
    json_free(v);
    CHECK_INT(json_parse("{}", 2, &v, NULL, 0), ==, 0); /* err may be NULL */
    json_free(v);
}

static const struct {
    const char *text;
    const char *where; /* expected "LINE:COLUMN:" prefix */
    const char *what;  /* and a word of the message */
} malformed[] = {
    {"", "1:1:", "end of input"},
    {"   \n ", "2:2:", "end of input"},
    {"{", "1:2:", "string key"},
    {"[1,]", "1:4:", "a value"},
    {"{\"a\":1,}", "1:8:", "string key"},
    {"[1 2]", "1:4:", "',' or ']'"},
    {"{\"a\":1 \"b\":2}", "1:8:", "',' or '}'"},
    {"{\"a\" 1}", "1:6:", "':'"},
    {"{1:2}", "1:2:", "string key"},
    {"01", "1:2:", "leading zeros"},
    {"-01", "1:3:", "leading zeros"},
    {"1.", "1:3:", "decimal point"},
    {"1.e5", "1:3:", "decimal point"},
    {"1e", "1:3:", "exponent"},
    {"1e+", "1:4:", "exponent"},
    {"-", "1:2:", "digit"},
    {".5", "1:1:", "a value"},
    {"+1", "1:1:", "a value"},
    {"1e999", "1:1:", "out of range"},
    {"NaN", "1:1:", "a value"},
    {"Infinity", "1:1:", "a value"},
    {"tru", "1:1:", "a value"},
    {"True", "1:1:", "a value"},
    {"nul", "1:1:", "a value"},
    {"\"abc", "1:1:", "unterminated"},
    {"\"abc\\", "1:1:", "unterminated"},
    {"\"\\u00", "1:1:", "unterminated"},
    {"\"a\x01\"", "1:3:", "control character"},
    {"\"a\tb\"", "1:3:", "control character"},
    {"\"\\x\"", "1:2:", "invalid escape"},
    {"\"\\u12g4\"", "1:6:", "hex"},
    {"\"\\udc00\"", "1:2:", "lone low surrogate"},
    {"\"\\ud800x\"", "1:2:", "high surrogate"},
    {"\"\\ud800\\u0041\"", "1:8:", "not a low surrogate"},
    {"\"\xff\"", "1:2:", "UTF-8"},
    {"\"\xc0\xaf\"", "1:2:", "UTF-8"},
    {"\"\xed\xa0\x80\"", "1:2:", "UTF-8"},
    {"\"\xf4\x90\x80\x80\"", "1:2:", "UTF-8"},
    {"\"\xe2\x82\"", "1:2:", "UTF-8"},
    {"[1]x", "1:4:", "after the document"},
    {"1 2", "1:3:", "after the document"},
    {"{} {}", "1:4:", "after the document"},
    {"[\n  1,\n  @]", "3:3:", "a value"},
    {"[\"\xc3\xa9\xc3\xa9\", x]", "1:8:", "a value"}, /* columns count characters */
    {"\xef\xbb\xbf{}", "1:1:", "byte order mark"},
    {"/* c */ 1", "1:1:", "a value"},
    {"[1,\r\n 2,,]", "2:4:", "a value"},
    {"{\"a\":[}", "1:7:", "a value"},
    {"\x00", "1:1:", "byte 0x00"}, /* must stay last: the one entry of length 1 with a NUL */
};

static void test_malformed(void)
{
    char err[256];
    JsonValue *v;

    for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
        const char *t = malformed[i].text;
        size_t len = t[0] ? strlen(t) : (i == sizeof malformed / sizeof *malformed - 1);
        err[0] = '\0';
        v = (JsonValue *)1;
        int rc = json_parse(t, len, &v, err, sizeof err);
        CHECK_INT(rc, ==, -1);
        CHECK(v == NULL);
        if (strncmp(err, malformed[i].where, strlen(malformed[i].where)) != 0 ||
            !strstr(err, malformed[i].what)) {
            check_failed++;
            fprintf(stderr, "malformed[%zu] \"%s\": got \"%s\", want \"%s ...%s...\"\n", i, t,
                    err, malformed[i].where, malformed[i].what);
        }
        CHECK(strchr(err, '\n') == NULL);
    }
}

static void test_depth(void)
{
    enum { DEEP = 100000 };
    char *s = malloc(2 * DEEP + 1);
    JsonValue *v;
    char err[200];

    for (int i = 0; i < JSON_MAX_DEPTH; i++) {
        s[i] = '[';
        s[2 * JSON_MAX_DEPTH - 1 - i] = ']';
    }
    CHECK_INT(json_parse(s, 2 * JSON_MAX_DEPTH, &v, err, sizeof err), ==, 0);
    json_free(v);
    memset(s, '[', DEEP);
    memset(s + DEEP, ']', DEEP);
    CHECK_INT(json_parse(s, 2 * DEEP, &v, err, sizeof err), ==, -1);
    CHECK_STR_HAS(err, "1:65: nested deeper than 64");
    free(s);
}

/* Random single-byte changes, insertions and cuts of a valid document. */
static void test_mutations(void)
{
    static const char base[] =
        "{\"schema\":\"cnntop.run/1\",\"a\":[1,-2.5e-3,true,false,null,{\"k\":\"v\\u00e9\\n\"}],"
        "\"s\":\"\\ud83d\\ude00 \xc3\xa9\",\"n\":{\"x\":[[[]]],\"y\":12345678901234567890}}";
    static const char alphabet[] = "{}[]\",:\\u0e-+.9 \nabtfn\xc3\xa9\xff\x00";
    uint64_t st = 0x9E3779B97F4A7C15ull;
    char buf[sizeof base + 16], err[200];
    size_t ok = 0, bad = 0;

    for (int iter = 0; iter < 20000; iter++) {
        size_t len = sizeof base - 1;
        memcpy(buf, base, len);
        for (int m = 0; m < 1 + iter % 3; m++) {
            st ^= st << 13, st ^= st >> 7, st ^= st << 17;
            if (len == 0)
                break;
            size_t at = (size_t)(st >> 8) % len;
            char c = alphabet[(st >> 40) % (sizeof alphabet - 1)];
            switch ((st >> 56) % 3) {
            case 0: buf[at] = c; break;
            case 1:
                if (len < sizeof buf) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = c;
                    len++;
                }
                break;
            default: len = at; break;
            }
        }
        /* Copy into an exactly sized heap block so ASan sees any overrun. */
        char *h = malloc(len ? len : 1);
        memcpy(h, buf, len);
        JsonValue *v;
        err[0] = '\0';
        if (json_parse(h, len, &v, err, sizeof err) == 0) {
            ok++;
            json_free(v);
        } else {
            unsigned line, col;
            bad++;
            if (sscanf(err, "%u:%u:", &line, &col) != 2 || line < 1 || col < 1) {
                check_failed++;
                fprintf(stderr, "mutation %d: malformed message \"%s\"\n", iter, err);
            }
        }
        free(h);
    }
    CHECK(ok > 0 && bad > 0);
}

/* A decimal comma locale must change neither the writer nor the parser. */
static void test_locale(void)
{
    static const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "nl_NL.UTF-8"};
    const char *got = NULL;
    JsonWriter w;
    JsonValue *v;
    char *s, err[200];
    size_t len;

    for (size_t i = 0; i < sizeof names / sizeof *names && !got; i++)
        got = setlocale(LC_NUMERIC, names[i]);
    if (!got) {
        fprintf(stderr, "test_json: no decimal-comma locale installed; locale check not run\n");
        return;
    }
    json_writer_init(&w, 0);
    json_number(&w, 1.25);
    s = finish(&w, &len);
    CHECK(s && !strcmp(s, "1.25"));
    CHECK_INT(json_parse("[1.25]", 6, &v, err, sizeof err), ==, 0);
    CHECK(json_as_number(json_at(v, 0), 0) == 1.25);
    json_free(v);
    free(s);
    setlocale(LC_NUMERIC, "C");
}

int main(void)
{
    test_compact();
    test_misuse();
    test_round_trip();
    test_parse_values();
    test_malformed();
    test_depth();
    test_mutations();
    test_locale();
    return check_report();
}

/*
 * test_hookfeed_model.c: the layer window's lines of the Python hook
 * (hookfeed.c: "window", "layer", "pace"): a window and its rows taken in
 * pieces cut anywhere; every bad line rejected whole with its reason (a
 * row without a window, names too long or not printable, counts and
 * FLOPs out of range, NaN, a second window, more rows than announced, a
 * window cut short by another line), leaving the table as it was.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cnntop/hookfeed.h"

static const char *const hello = "{\"ev\": \"hello\", \"pid\": 9, \"torch\": \"1.13.1\"}\n";

static const char *const window =
    "{\"ev\": \"window\", \"first\": 5, \"steps\": 20, \"layers\": 2}\n"
    "{\"ev\": \"layer\", \"name\": \"features.0\", \"kind\": \"Conv2d\", \"calls\": 20, "
    "\"fwd\": 0.125, \"bwd\": 0.25, \"flops\": 4.5e9, \"bwd_flops\": 9e9, \"img_flops\": 3.5e6}\n"
    "{\"ev\": \"layer\", \"name\": \"Adam step\", \"kind\": \"optimizer\", \"calls\": 20, "
    "\"fwd\": 0.0625, \"bwd\": 0, \"flops\": 0, \"bwd_flops\": 0, \"img_flops\": 0}\n"
    "{\"ev\": \"pace\", \"in\": 0.031, \"out\": 0.03, \"n\": 35}\n";

static void feed(HookFeed *f, const char *s, size_t piece)
{
    for (size_t i = 0; i < strlen(s); i += piece)
        hookfeed_bytes(f, s + i, strlen(s) - i < piece ? strlen(s) - i : piece);
}

static void test_good(void)
{
    for (size_t piece = 1; piece < 80; piece += 13) {
        HookFeed f;
        hookfeed_init(&f);
        feed(&f, hello, piece);
        feed(&f, window, piece);
        CHECK_INT(f.bad, ==, 0);
        const HookModel *m = &f.model;
        CHECK_INT(m->complete, ==, 1);
        CHECK_INT(m->first, ==, 5);
        CHECK_INT(m->steps, ==, 20);
        CHECK_INT(m->n, ==, 2);
        CHECK(!strcmp(m->rows[0].name, "features.0"));
        CHECK(!strcmp(m->rows[0].kind, "Conv2d"));
        CHECK(m->rows[0].calls == 20 && m->rows[0].fwd == 0.125 && m->rows[0].bwd == 0.25);
        CHECK(m->rows[0].flops == 4.5e9 && m->rows[0].bwd_flops == 9e9);
        CHECK(m->rows[0].img_flops == 3.5e6);
        CHECK(!strcmp(m->rows[1].name, "Adam step"));
        CHECK(m->pace_in == 0.031 && m->pace_out == 0.03 && m->pace_n == 35);
    }
}

/* Each line after hello and a good window's head; expect: its reason. */
static const struct {
    const char *line, *why;
} bad_rows[] = {
    {"{\"ev\": \"layer\", \"name\": \"\", \"kind\": \"ReLU\", \"calls\": 1, \"fwd\": 0, \"bwd\": 0, "
     "\"flops\": 0, \"bwd_flops\": 0, \"img_flops\": 0}", "name is not a string of 1..47 bytes"},
    {"{\"ev\": \"layer\", \"name\": \"a\\u0001b\", \"kind\": \"ReLU\", \"calls\": 1, \"fwd\": 0, "
     "\"bwd\": 0, \"flops\": 0, \"bwd_flops\": 0, \"img_flops\": 0}", "not printable ASCII"},
    {"{\"ev\": \"layer\", \"name\": \"caf\\u00e9\", \"kind\": \"ReLU\", \"calls\": 1, \"fwd\": 0, "
     "\"bwd\": 0, \"flops\": 0, \"bwd_flops\": 0, \"img_flops\": 0}", "not printable ASCII"},
    {"{\"ev\": \"layer\", \"name\": \"0123456789012345678901234567890123456789012345678\", "
     "\"kind\": \"ReLU\", \"calls\": 1, \"fwd\": 0, \"bwd\": 0, \"flops\": 0, "
     "\"bwd_flops\": 0, \"img_flops\": 0}",
     "name is not a string"},
    {"{\"ev\": \"layer\", \"name\": \"a\", \"kind\": 3, \"calls\": 1, \"fwd\": 0, \"bwd\": 0, "
     "\"flops\": 0, \"bwd_flops\": 0, \"img_flops\": 0}", "kind is not a string"},
    {"{\"ev\": \"layer\", \"name\": \"a\", \"kind\": \"b\", \"calls\": -1, \"fwd\": 0, \"bwd\": 0, "
     "\"flops\": 0, \"bwd_flops\": 0, \"img_flops\": 0}", "calls is -1"},
    {"{\"ev\": \"layer\", \"name\": \"a\", \"kind\": \"b\", \"calls\": 1, \"fwd\": -1, \"bwd\": 0, "
     "\"flops\": 0, \"bwd_flops\": 0, \"img_flops\": 0}", "fwd is -1"},
    {"{\"ev\": \"layer\", \"name\": \"a\", \"kind\": \"b\", \"calls\": 1, \"fwd\": 0, \"bwd\": 1e300, "
     "\"flops\": 0, \"bwd_flops\": 0, \"img_flops\": 0}", "bwd is 1e+300, more than"},
    {"{\"ev\": \"layer\", \"name\": \"a\", \"kind\": \"b\", \"calls\": 1, \"fwd\": 0, \"bwd\": 0, "
     "\"flops\": 1e19, \"bwd_flops\": 0, \"img_flops\": 0}", "flops is 1e+19, more than"},
    {"{\"ev\": \"layer\", \"name\": \"a\", \"kind\": \"b\", \"calls\": 1, \"fwd\": 0, \"bwd\": 0, "
     "\"flops\": 0, \"bwd_flops\": 0}", "no number \"img_flops\""},
    {"{\"ev\": \"window\", \"first\": 5, \"steps\": 20, \"layers\": 1}", "a second window"},
    {"{\"ev\": \"pace\", \"in\": 0.1, \"out\": NaN, \"n\": 3}", "line 3"},
    {"{\"ev\": \"pace\", \"in\": 0.1, \"out\": 0.1, \"n\": 0}", "n is 0"},
};

static void test_bad_rows(void)
{
    const char *head = "{\"ev\": \"window\", \"first\": 5, \"steps\": 20, \"layers\": 1}\n";
    char line[512];

    for (size_t i = 0; i < sizeof bad_rows / sizeof bad_rows[0]; i++) {
        HookFeed f;
        hookfeed_init(&f);
        feed(&f, hello, 7);
        feed(&f, head, 7);
        snprintf(line, sizeof line, "%s\n", bad_rows[i].line);
        CHECK_INT(hookfeed_bytes(&f, line, strlen(line)), ==, 1);
        CHECK_STR_HAS(f.why, bad_rows[i].why);
        if (!strstr(f.why, bad_rows[i].why))
            fprintf(stderr, "  row %zu: %s\n", i, f.why);
        CHECK_INT(f.model.n, ==, 0);
        CHECK_INT(f.model.complete, ==, 0);
        CHECK(isnan(f.model.pace_out));
    }
}

/* Windows that are not to be had: out of range, rows with no window,
 * more rows than announced, a window cut by another line. */
static void test_bad_windows(void)
{
    static const char *const lines[] = {
        "{\"ev\": \"window\", \"first\": 0, \"steps\": 20, \"layers\": 1}\n",
        "{\"ev\": \"window\", \"first\": 5, \"steps\": 0, \"layers\": 1}\n",
        "{\"ev\": \"window\", \"first\": 5, \"steps\": 20, \"layers\": 65}\n",
        "{\"ev\": \"layer\", \"name\": \"a\", \"kind\": \"b\", \"calls\": 1, \"fwd\": 0, "
        "\"bwd\": 0, \"flops\": 0, \"bwd_flops\": 0, \"img_flops\": 0}\n",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        HookFeed f;
        hookfeed_init(&f);
        feed(&f, hello, 5);
        CHECK_INT(hookfeed_bytes(&f, lines[i], strlen(lines[i])), ==, 1);
        CHECK_INT(f.model.complete, ==, 0);
        CHECK_INT(f.model.expect, ==, 0);
    }
    /* Three rows where two were announced: the third is refused. */
    HookFeed f;
    const char *row = "{\"ev\": \"layer\", \"name\": \"x\", \"kind\": \"ReLU\", \"calls\": 1, "
                      "\"fwd\": 0, \"bwd\": 0, \"flops\": 0, \"bwd_flops\": 0, \"img_flops\": 0}\n";
    hookfeed_init(&f);
    feed(&f, hello, 5);
    feed(&f, window, 5);
    CHECK_INT(hookfeed_bytes(&f, row, strlen(row)), ==, 1);
    CHECK_STR_HAS(f.why, "no window announced it");
    CHECK_INT(f.model.n, ==, 2);
    /* A window cut short by another line: dropped, never complete. */
    hookfeed_init(&f);
    feed(&f, hello, 5);
    feed(&f, "{\"ev\": \"window\", \"first\": 5, \"steps\": 20, \"layers\": 2}\n", 5);
    feed(&f, row, 5);
    feed(&f, "{\"ev\": \"config\", \"threads\": 4, \"workers\": 2}\n", 5);
    CHECK_INT(hookfeed_bytes(&f, row, strlen(row)), ==, 1);
    CHECK_INT(f.model.complete, ==, 0);
    CHECK_INT(f.model.n, ==, 0);
}

int main(void)
{
    test_good();
    test_bad_rows();
    test_bad_windows();
    return check_report();
}

/*
 * test_liveline.c: the live lines of a job (src/dist/liveline.c): a line
 * written by dist_live_format() reads back the same; every malformed,
 * non-finite or out-of-range line is refused whole, leaving the output as
 * it was.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cnntop/dist.h"

static const char *const good =
    "cnntop-live1 step=3 steps=6 epoch=0 epochs=1 elapsed=0.36 images=96 loss=2.17 ips=265.7 "
    "comm=0.62 ranks=2 t=0.056,0.033\n";

static void test_round_trip(void)
{
    DistLive l = {.step = 12, .steps = 40, .epoch = 1, .epochs = 2, .elapsed = 3.5,
                  .images = 768, .loss = 1.25, .ips = 219.5, .comm = 0.125, .ranks = 3,
                  .step_time = {0.01, 0.02, 0.03}}, back;
    char line[DIST_LIVE_LINE];

    CHECK(dist_live_format(&l, line, sizeof line) > 0);
    CHECK(line[strlen(line) - 1] == '\n');
    CHECK_INT(dist_live_parse(line, &back), ==, 0);
    CHECK_INT(back.step, ==, 12);
    CHECK_INT(back.steps, ==, 40);
    CHECK_INT(back.epoch, ==, 1);
    CHECK_INT(back.images, ==, 768);
    CHECK_INT(back.ranks, ==, 3);
    CHECK_NEAR(back.comm, 0.125, 1e-9);
    CHECK_NEAR(back.step_time[2], 0.03, 1e-9);
    CHECK_INT(dist_live_parse(good, &back), ==, 0);
    CHECK_INT(back.ranks, ==, 2);
    line[strlen(line) - 1] = '\0'; /* the newline is optional */
    CHECK_INT(dist_live_parse(line, &back), ==, 0);
    CHECK(dist_live_format(&l, line, 20) < 0); /* too small a buffer: no line */
}

/* s with the first `from` replaced by `to`, refused. */
static void refused(const char *from, const char *to)
{
    char line[DIST_LIVE_LINE * 2];
    const char *at = strstr(good, from);
    DistLive l = {.step = -7};

    CHECK(at != NULL);
    if (!at)
        return;
    snprintf(line, sizeof line, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
    if (dist_live_parse(line, &l) == 0)
        fprintf(stderr, "accepted: %s", line);
    CHECK_INT(dist_live_parse(line, &l), ==, -1);
    CHECK_INT(l.step, ==, -7); /* untouched */
}

static void test_bad_lines(void)
{
    char huge[DIST_LIVE_LINE + 10];
    DistLive l;

    refused("cnntop-live1", "cnntop-live2");
    refused("cnntop-live1 ", "cnntop-live1");
    refused("step=3", "step=nan");
    refused("step=3", "step=inf");
    refused("step=3", "step=3.5");
    refused("step=3", "step=0");
    refused("step=3", "step=7");          /* past steps */
    refused("step=3", "step=");
    refused("step=3", "stp=3");
    refused("epoch=0", "epoch=1");        /* not below epochs */
    refused("elapsed=0.36", "elapsed=-1");
    refused("loss=2.17", "loss=NaN");
    refused("loss=2.17", "loss=1e999");
    refused("ips=265.7", "ips=-5");
    refused("comm=0.62", "comm=1.5");
    refused("ranks=2", "ranks=0");
    refused("ranks=2", "ranks=65");
    refused("ranks=2", "ranks=3");        /* two times for three ranks */
    refused("t=0.056,0.033", "t=0.056");  /* one time for two ranks */
    refused("t=0.056,0.033", "t=0.056,0.033,0.1");
    refused("t=0.056,0.033", "t=0.056,-0.033");
    refused("t=0.056,0.033", "t=0.056,,0.033");
    refused("t=0.056,0.033", "t=0.056,0.033,");
    refused("t=0.056,0.033", "t=0.056,inf");
    refused("\n", " extra\n");
    refused("ips=265.7 ", "ips=265.7  ");
    refused("images=96", "images=9x6");
    CHECK_INT(dist_live_parse("", &l), ==, -1);
    CHECK_INT(dist_live_parse(NULL, &l), ==, -1);
    memset(huge, '1', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    memcpy(huge, "cnntop-live1 ", 13);
    CHECK_INT(dist_live_parse(huge, &l), ==, -1);
}

int main(void)
{
    test_round_trip();
    test_bad_lines();
    return check_report();
}

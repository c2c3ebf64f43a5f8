/*
 * test_hookfeed.c: the Python hook's feed (hookfeed.c), pure: lines fed in
 * pieces cut anywhere; the figures' window leaving out the first batch;
 * and every kind of line another program could write on the pipe, each
 * rejected whole, counted, its reason kept, and kept out of every figure
 * and role: a negative or huge batch, a wait of 1e300, NaN and infinity
 * (not JSON), times going back or past the clock, a wait longer than the
 * time since the line before, a negative step, a forged or second hello,
 * worker pids outside the tree or not pids, counts out of range, an
 * overlong line, bytes that are not UTF-8, a version with control
 * characters.  Then random lines, good and bad mixed: the figures stay
 * finite and the data wait's share within 0..1 whatever comes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cnntop/hookfeed.h"

/* The tree the tests pretend: pids 9..13 and 20 are ours, 40 has gone,
 * the rest (1, 99, ...) belong to other trees. */
typedef struct Tree {
    int named[64];
    int n;
} Tree;

static int pid_of(void *u, int pid)
{
    (void)u;
    if ((pid >= 9 && pid <= 13) || pid == 20)
        return HOOK_PID_OURS;
    return pid == 40 ? HOOK_PID_GONE : HOOK_PID_FOREIGN;
}

static void worker(void *u, int pid)
{
    Tree *t = u;
    if (t->n < 64)
        t->named[t->n++] = pid;
}

static void feed_init(HookFeed *f, Tree *t)
{
    hookfeed_init(f);
    memset(t, 0, sizeof *t);
    f->host = (HookHost){.pid_of = pid_of, .worker = worker, .u = t};
}

static void feed(HookFeed *f, const char *s, size_t piece)
{
    for (size_t i = 0; i < strlen(s); i += piece)
        hookfeed_bytes(f, s + i, strlen(s) - i < piece ? strlen(s) - i : piece);
}

static const char *const good =
    "{\"ev\": \"hello\", \"pid\": 9, \"torch\": \"1.13.1\"}\n"
    "{\"ev\": \"workers\", \"pids\": [11, 12]}\n"
    "{\"ev\": \"config\", \"threads\": 4, \"workers\": 2}\n"
    "{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.5, \"step\": 0.0, \"t\": 10.0}\n"
    "not json\n"
    "{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.1, \"step\": 0.3, \"t\": 10.4}\n"
    "{\"ev\": \"workers\", \"pids\": [12, 13]}\n"
    "{\"ev\": \"batch\", \"n\": 32, \"wait\": 0.1, \"step\": 0.5, \"t\": 11.0}\n"
    "{\"ev\": \"end\", \"t\": 11.6}\n";

static void check_good_figures(const HookFeed *f)
{
    HookFigures fig;

    hookfeed_figures(f, &fig);
    CHECK_INT(fig.ok, ==, 1);
    CHECK_NEAR(fig.images, 96.0, 1e-9);      /* the first batch only starts the clock */
    CHECK_NEAR(fig.window, 1.6, 1e-9);       /* first batch to the end */
    CHECK_NEAR(fig.images_per_s, 60.0, 1e-9);
    CHECK_NEAR(fig.data_wait_share, 0.125, 1e-9);
    CHECK_NEAR(fig.step_s, 0.4, 1e-9);
    CHECK_NEAR(fig.first_wait, 0.5, 1e-9);
}

static void test_good(void)
{
    HookFeed f;
    Tree t;

    for (size_t piece = 1; piece <= 7; piece += 3) {
        feed_init(&f, &t);
        feed(&f, good, piece);
        CHECK_INT(f.hello, ==, 1);
        CHECK(strcmp(f.torch, "1.13.1") == 0);
        CHECK_INT(f.pid, ==, 9);
        CHECK_INT(t.n, ==, 4);
        CHECK_INT(t.named[3], ==, 13);
        CHECK_INT(f.bad, ==, 1);
        CHECK_STR_HAS(f.why, "line 5: ");
        CHECK_INT(f.main.batches, ==, 3);
        CHECK_INT(f.main.threads, ==, 4);
        CHECK_INT(f.main.loader_workers, ==, 2);
        check_good_figures(&f);
    }
    /* Without a host every pid is taken (the feed alone, as a reader of
     * saved lines would use it). */
    hookfeed_init(&f);
    feed(&f, good, 64);
    CHECK_INT(f.pid, ==, 9);
    CHECK_INT(f.worker_pids, ==, 4);
    CHECK_INT(f.bad, ==, 1);
}

/* Each line after the good stream's first four (hello, workers, config,
 * the first batch) is rejected, the reason said, and nothing changes. */
static const struct {
    const char *line, *why;
} bad_lines[] = {
    {"{\"ev\": \"batch\", \"n\": -64, \"wait\": 0.1, \"step\": 0.1, \"t\": 10.3}",
     "n is -64, not a whole number in 0..16777216"},
    {"{\"ev\": \"batch\", \"n\": 16777217, \"wait\": 0.1, \"step\": 0.1, \"t\": 10.3}", "n is"},
    {"{\"ev\": \"batch\", \"n\": 1e300, \"wait\": 0.1, \"step\": 0.1, \"t\": 10.3}", "n is 1e+300"},
    {"{\"ev\": \"batch\", \"n\": 6.5, \"wait\": 0.1, \"step\": 0.1, \"t\": 10.3}", "n is 6.5"},
    {"{\"ev\": \"batch\", \"n\": \"64\", \"wait\": 0.1, \"step\": 0.1, \"t\": 10.3}", "no number \"n\""},
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": 1e300, \"step\": 0.1, \"t\": 10.3}",
     "wait 1e+300 s is longer"},
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": -0.1, \"step\": 0.1, \"t\": 10.3}", "wait is -0.1"},
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": NaN, \"step\": 0.1, \"t\": 10.3}", "line 5: 1:"},
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": Infinity, \"step\": 0.1, \"t\": 10.3}", "1:"},
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": 1e999, \"step\": 0.1, \"t\": 10.3}", "1:"},
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": null, \"step\": 0.1, \"t\": 10.3}", "no number"},
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.1, \"step\": -1, \"t\": 10.3}", "step is -1"},
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.1, \"step\": 0.1, \"t\": 9.5}", "t 9.5"},
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.1, \"step\": 0.1, \"t\": 1e300}", "outside the run"},
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.1, \"step\": 0.1, \"t\": -3}", "t is -3"},
    /* A wait longer than the time since the line before it. */
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.5, \"step\": 0.0, \"t\": 10.3}",
     "wait 0.5 s is longer than the 0.3 s"},
    /* Wait and step longer than the window so far (a step of 9 s in 0.3). */
    {"{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.1, \"step\": 9, \"t\": 10.3}",
     "wait + step 9.1 s"},
    {"{\"ev\": \"end\", \"t\": 9}", "end: t 9 goes back"},
    {"{\"ev\": \"hello\", \"pid\": 10, \"torch\": \"1.13.1\"}", "a second hello (pid 10; the first"},
    {"{\"ev\": \"hello\", \"pid\": 9, \"torch\": \"1.13.1\"}", "a second hello"},
    {"{\"ev\": \"workers\", \"pids\": [12, 99]}", "pid 99 is not a process of the command's tree"},
    {"{\"ev\": \"workers\", \"pids\": [1]}", "pid 1 is not"},
    {"{\"ev\": \"workers\", \"pids\": [9]}", "the hook's own process"},
    {"{\"ev\": \"workers\", \"pids\": [0]}", "pids[0] is not a pid"},
    {"{\"ev\": \"workers\", \"pids\": [12, 4194305]}", "pids[1] is not a pid"},
    {"{\"ev\": \"workers\", \"pids\": [-12]}", "pids[0] is not a pid"},
    {"{\"ev\": \"workers\", \"pids\": 12}", "no array"},
    {"{\"ev\": \"config\", \"threads\": 0, \"workers\": 2}", "threads is 0"},
    {"{\"ev\": \"config\", \"threads\": 1048577, \"workers\": 2}", "threads is 1.04858e+06"},
    {"{\"ev\": \"config\", \"threads\": 4, \"workers\": -2}", "workers is -2"},
    {"{\"ev\": \"config\", \"threads\": 4}", "no number \"workers\""},
    {"{\"ev\": \"bogus\"}", "unknown event \"bogus\""},
    {"{\"ev\": 3}", "not an object with a string \"ev\""},
    {"[1, 2]", "not an object"},
    {"{\"ev\": \"end\", \"t\": \"\xff\"}", "invalid UTF-8"},
};

/* Figures and state that no rejected line may touch. */
static void same(const HookFeed *f, const HookFeed *ref, const Tree *t)
{
    CHECK_INT(f->main.batches, ==, ref->main.batches);
    CHECK(f->main.samples == ref->main.samples && f->main.wait == ref->main.wait &&
          f->main.step == ref->main.step);
    CHECK(f->main.t_end == ref->main.t_end &&
          (f->main.t_last == ref->main.t_last ||
           (isnan(f->main.t_last) && isnan(ref->main.t_last))));
    CHECK_INT(f->pid, ==, ref->pid);
    CHECK_INT(f->main.threads, ==, ref->main.threads);
    CHECK_INT(f->main.loader_workers, ==, ref->main.loader_workers);
    CHECK_INT(f->n_ranks, ==, ref->n_ranks);
    CHECK_INT(t->n, ==, 2); /* 11 and 12, from the good workers line */
}

static void test_bad_lines(void)
{
    const char *head = "{\"ev\": \"hello\", \"pid\": 9, \"torch\": \"1.13.1\"}\n"
                       "{\"ev\": \"workers\", \"pids\": [11, 12]}\n"
                       "{\"ev\": \"config\", \"threads\": 4, \"workers\": 2}\n"
                       "{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.5, \"step\": 0.0, \"t\": 10.0}\n";
    char line[512];
    HookFeed f, ref;
    Tree t, tref;

    feed_init(&ref, &tref);
    ref.t_lo = 1.0;
    ref.t_hi = 20.0;
    feed(&ref, head, 64);
    CHECK_INT(ref.bad, ==, 0);
    for (size_t i = 0; i < sizeof bad_lines / sizeof bad_lines[0]; i++) {
        feed_init(&f, &t);
        f.t_lo = 1.0;
        f.t_hi = 20.0;
        feed(&f, head, 64);
        snprintf(line, sizeof line, "%s\n", bad_lines[i].line);
        CHECK_INT(hookfeed_bytes(&f, line, strlen(line)), ==, 1);
        CHECK_INT(f.bad, ==, 1);
        CHECK_STR_HAS(f.why, bad_lines[i].why);
        if (!strstr(f.why, bad_lines[i].why))
            fprintf(stderr, "  line %zu: %s\n", i, f.why);
        same(&f, &ref, &t);
        /* The good lines after it are still taken as before. */
        feed(&f, "{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.1, \"step\": 0.3, \"t\": 10.4}\n"
                 "{\"ev\": \"end\", \"t\": 11.6}\n", 9);
        CHECK_INT(f.main.batches, ==, 2);
        CHECK_INT(f.bad, ==, 1);
    }
}

/* Who may say hello, and what comes before it. */
static void test_hello(void)
{
    static char big[HOOK_LINE_MAX + 100];
    HookFeed f;
    Tree t;

    /* A forged hello from a process outside the tree (pid 1), and lines
     * before any hello, are rejected; the real hello is then taken. */
    feed_init(&f, &t);
    feed(&f, "{\"ev\": \"hello\", \"pid\": 1, \"torch\": \"9\"}\n"
             "{\"ev\": \"batch\", \"n\": 64, \"wait\": 0, \"step\": 0, \"t\": 1}\n"
             "{\"ev\": \"hello\", \"pid\": 10, \"torch\": \"1.13.1\"}\n", 5);
    CHECK_INT(f.bad, ==, 2);
    CHECK_STR_HAS(f.why, "line 1: hello: pid 1 is not a process of the command's tree");
    CHECK_INT(f.hello, ==, 1);
    CHECK_INT(f.pid, ==, 10);
    CHECK_INT(f.main.batches, ==, 0);
    /* A version that is no version: control characters (an escape
     * sequence for the terminal), a space, too long, empty, not a string. */
    const char *versions[] = {"\"\\u001b[2J\"", "\"1.13 rc\"", "\"12345678901234567890123456789012\"",
                              "\"\"", "13"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        char line[160];
        feed_init(&f, &t);
        snprintf(line, sizeof line, "{\"ev\": \"hello\", \"pid\": 9, \"torch\": %s}\n", versions[i]);
        feed(&f, line, 7);
        CHECK_INT(f.bad, ==, 1);
        CHECK_INT(f.hello, ==, 0);
        CHECK_STR_HAS(f.why, "torch is not a version");
    }
    /* A process that has gone by the time the line is read: its hello is
     * taken (the figures are real) but names no main process, and a gone
     * worker is skipped, not rejected. */
    feed_init(&f, &t);
    feed(&f, "{\"ev\": \"hello\", \"pid\": 40, \"torch\": \"2.1.0+cpu\"}\n"
             "{\"ev\": \"workers\", \"pids\": [40, 20]}\n", 11);
    CHECK_INT(f.bad, ==, 0);
    CHECK_INT(f.hello, ==, 1);
    CHECK_INT(f.pid, ==, 0);
    CHECK(strcmp(f.torch, "2.1.0+cpu") == 0);
    CHECK_INT(t.n, ==, 1);
    CHECK_INT(t.named[0], ==, 20);
    /* An overlong line is rejected whole, however it is cut. */
    memset(big, ' ', sizeof big - 2);
    memcpy(big, "{\"ev\": \"end\", \"t\": 2", 20);
    big[sizeof big - 3] = '}';
    big[sizeof big - 2] = '\n';
    feed(&f, big, 1000);
    CHECK_INT(f.bad, ==, 1);
    CHECK_STR_HAS(f.why, "line 3: longer than 4095 bytes");
    /* One batch is no rate; threads and workers not said stay unknown. */
    feed(&f, "{\"ev\": \"batch\", \"n\": 64, \"wait\": 0.5, \"step\": 0, \"t\": 1}\n", 5);
    HookFigures fig;
    hookfeed_figures(&f, &fig);
    CHECK_INT(fig.ok, ==, 0);
    CHECK_INT(f.main.threads, ==, -1);
    CHECK_INT(f.main.loader_workers, ==, -1);
}

/* A small deterministic generator (xorshift), for the random lines. */
static unsigned rnd(unsigned *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* A number of a random kind: ordinary, negative, huge, tiny, whole. */
static void rnd_num(unsigned *s, char *buf, size_t len)
{
    static const char *const odd[] = {"-1", "1e300", "-1e300", "0", "1e-300", "4294967296",
                                      "16777216", "0.5", "\"x\"", "null"};
    unsigned k = rnd(s) % 3;

    if (k == 0)
        snprintf(buf, len, "%s", odd[rnd(s) % (sizeof odd / sizeof odd[0])]);
    else
        snprintf(buf, len, "%.6f", (double)(rnd(s) % 100000) / 1000.0);
}

/* Random batch and end lines, some good and most not: every figure stays
 * finite, the share within 0..1, and the window only what the good lines
 * said. */
static void test_random(void)
{
    unsigned s = 12345;
    char line[256], a[32], b[32], c[32], d[32];
    HookFeed f;
    Tree t;

    for (int round = 0; round < 200; round++) {
        feed_init(&f, &t);
        f.t_hi = 200.0;
        feed(&f, "{\"ev\": \"hello\", \"pid\": 9, \"torch\": \"1.13.1\"}\n", 64);
        double t_now = 1.0;
        for (int i = 0; i < 50; i++) {
            if (rnd(&s) % 2) { /* a good batch */
                double step = (double)(rnd(&s) % 1000) / 1e4, wait = (double)(rnd(&s) % 1000) / 1e4;
                t_now += step + wait;
                snprintf(line, sizeof line,
                         "{\"ev\": \"batch\", \"n\": %u, \"wait\": %.6f, \"step\": %.6f, \"t\": "
                         "%.6f}\n", rnd(&s) % 512, wait, f.main.batches ? step : 0.0, t_now);
            } else {
                rnd_num(&s, a, sizeof a);
                rnd_num(&s, b, sizeof b);
                rnd_num(&s, c, sizeof c);
                rnd_num(&s, d, sizeof d);
                snprintf(line, sizeof line,
                         "{\"ev\": \"%s\", \"n\": %s, \"wait\": %s, \"step\": %s, \"t\": %s}\n",
                         rnd(&s) % 4 ? "batch" : "end", a, b, c, d);
            }
            hookfeed_bytes(&f, line, strlen(line));
        }
        HookFigures fig;
        hookfeed_figures(&f, &fig);
        CHECK(isfinite(fig.images_per_s) && fig.images_per_s >= 0);
        CHECK(fig.data_wait_share >= 0 && fig.data_wait_share <= 1);
        CHECK(isfinite(fig.step_s) && fig.step_s >= 0 && fig.step_s <= fig.window + 1e-4);
        CHECK(isfinite(fig.window) && fig.window >= 0 && f.main.t_end <= 200.0 + HOOK_TIME_SLACK);
    }
}

static void ranked(void *u, int pid)
{
    Tree *t = u;
    if (t->n < 64)
        t->named[t->n++] = -pid;
}

/* Ranks of torch.distributed: a "rank" line opens a stream of its own
 * (no hello needed: a shell loop's ranks have none), lines tagged with it
 * go there, the main stream stays as it was; a rank said twice, a tag
 * before its rank line, a rank past HOOK_MAX_RANKS, a collective time
 * going back are rejected whole. */
static void test_ranks(void)
{
    HookFeed f;
    Tree t;
    HookFigures fig;

    feed_init(&f, &t);
    f.host.rank = ranked;
    feed(&f, "{\"ev\": \"batch\", \"n\": 8, \"wait\": 0, \"step\": 0, \"t\": 1, \"rank\": 0}\n"
             "{\"ev\": \"rank\", \"pid\": 10, \"rank\": 1, \"world\": 2, \"torch\": \"1.13.1\"}\n"
             "{\"ev\": \"rank\", \"pid\": 11, \"rank\": 0, \"world\": 2, \"torch\": \"1.13.1\"}\n"
             "{\"ev\": \"rank\", \"pid\": 12, \"rank\": 0, \"world\": 2, \"torch\": \"1.13.1\"}\n"
             "{\"ev\": \"rank\", \"pid\": 13, \"rank\": 64, \"world\": 65, \"torch\": \"1.13.1\"}\n"
             "{\"ev\": \"workers\", \"pids\": [12], \"rank\": 1}\n"
             "{\"ev\": \"config\", \"threads\": 2, \"workers\": 1, \"rank\": 1}\n"
             "{\"ev\": \"batch\", \"n\": 8, \"wait\": 0.5, \"step\": 0, \"t\": 2, \"rank\": 1, "
             "\"coll\": 0.25}\n"
             "{\"ev\": \"batch\", \"n\": 8, \"wait\": 0.25, \"step\": 0.5, \"t\": 3, \"rank\": 1, "
             "\"coll\": 0.125}\n"
             "{\"ev\": \"batch\", \"n\": 8, \"wait\": 0.25, \"step\": 0.5, \"t\": 3, \"rank\": 1, "
             "\"coll\": 0.5}\n"
             "{\"ev\": \"end\", \"t\": 4, \"rank\": 1, \"coll\": 0.75}\n",
         5);
    CHECK_INT(f.n_ranks, ==, 2);
    CHECK_INT(f.bad, ==, 4); /* the early tag, rank 0 twice, rank 64, coll going back */
    CHECK_STR_HAS(f.why, "line 1: batch: rank 0 before its rank line");
    CHECK_INT(f.hello, ==, 0);
    CHECK(!strcmp(f.torch, "1.13.1"));
    CHECK_INT(f.ranks[0].rank, ==, 1);
    CHECK_INT(f.ranks[0].pid, ==, 10);
    CHECK_INT(f.ranks[1].pid, ==, 11);
    CHECK_INT(t.n, ==, 3); /* ranks 10 and 11, then worker 12 */
    CHECK_INT(t.named[0], ==, -10);
    CHECK_INT(t.named[2], ==, 12);
    CHECK_INT(f.ranks[0].s.threads, ==, 2);
    CHECK_INT(f.ranks[0].s.loader_workers, ==, 1);
    CHECK_NEAR(f.ranks[0].s.coll, 0.75, 1e-12);
    CHECK_INT(f.main.batches, ==, 0);
    hookfeed_stream_figures(&f.ranks[0].s, &fig);
    CHECK_INT(fig.ok, ==, 1);
    CHECK_NEAR(fig.images_per_s, 4.0, 1e-9); /* 8 images after the first batch, t 2 to 4 */
    CHECK_NEAR(fig.data_wait_share, 0.125, 1e-9);
    /* The job: not ok while rank 0 has no rate; then the ranks' sum (and
     * their mean wait), not the main process's empty stream. */
    hookfeed_job_figures(&f, &fig);
    CHECK_INT(fig.ok, ==, 0);
    CHECK_INT(fig.batches, ==, 2);
    feed(&f, "{\"ev\": \"batch\", \"n\": 4, \"wait\": 0, \"step\": 0, \"t\": 1, \"rank\": 0}\n"
             "{\"ev\": \"batch\", \"n\": 4, \"wait\": 0.5, \"step\": 1, \"t\": 3, \"rank\": 0}\n",
         64);
    hookfeed_job_figures(&f, &fig);
    CHECK_INT(fig.ok, ==, 1);
    CHECK_INT(fig.batches, ==, 4);
    CHECK_NEAR(fig.images, 12.0, 1e-9);
    CHECK_NEAR(fig.first_images, 12.0, 1e-9);
    CHECK_NEAR(fig.images_per_s, 4.0 + 2.0, 1e-9); /* rank 0: 4 images, t 1 to 3 */
    CHECK_NEAR(fig.data_wait_share, (0.125 + 0.25) / 2, 1e-9);
    /* A main process with a DataLoader of its own: its figures. */
    f.main.batches = 1;
    hookfeed_job_figures(&f, &fig);
    CHECK_INT(fig.batches, ==, 1);
    CHECK_INT(fig.ok, ==, 0);
}

/* An "error" line: taken before any hello (a launcher dies first), the
 * first one kept; a pid of another tree, a type with a control byte or
 * an "at" past HOOK_AT_LEN rejected whole. */
/* Each rank of a job measures its own layer window: the first to come is
 * the job's, the others' windows, rows and paces are passed over (not
 * rejected); a second window of the same rank is. */
static void test_rank_windows(void)
{
    HookFeed f;
    Tree t;
#define ROW "{\"ev\": \"layer\", \"name\": \"fc\", \"kind\": \"Linear\", \"calls\": 4, " \
            "\"fwd\": 0.5, \"bwd\": 0.25, \"flops\": 1e6, \"bwd_flops\": 2e6, " \
            "\"img_flops\": 3e5, \"rank\": %d}\n"
    char text[4096];
    int n = 0;

    feed_init(&f, &t);
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "{\"ev\": \"rank\", \"pid\": 10, \"rank\": 1, \"world\": 2, \"torch\": \"1.13.1\"}\n"
                  "{\"ev\": \"rank\", \"pid\": 11, \"rank\": 0, \"world\": 2, \"torch\": \"1.13.1\"}\n"
                  "{\"ev\": \"window\", \"first\": 5, \"steps\": 4, \"layers\": 2, \"rank\": 1}\n");
    n += snprintf(text + n, sizeof text - (size_t)n, ROW, 1);
    /* rank 0's lines come between rank 1's rows: each writes a line at a time */
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "{\"ev\": \"window\", \"first\": 5, \"steps\": 6, \"layers\": 2, \"rank\": 0}\n");
    n += snprintf(text + n, sizeof text - (size_t)n, ROW, 0);
    n += snprintf(text + n, sizeof text - (size_t)n, ROW, 1);
    n += snprintf(text + n, sizeof text - (size_t)n, ROW, 0);
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "{\"ev\": \"pace\", \"in\": 0.5, \"out\": 0.25, \"n\": 3, \"rank\": 1}\n"
                  "{\"ev\": \"pace\", \"in\": 9, \"out\": 9, \"n\": 9, \"rank\": 0}\n");
    feed(&f, text, 7);
    CHECK_INT(f.bad, ==, 0);
    CHECK_INT(f.model.complete, ==, 1);
    CHECK_INT((int)f.model.steps, ==, 4); /* rank 1's, the first */
    CHECK_INT(f.model.n, ==, 2);
    CHECK_NEAR(f.model.pace_in, 0.5, 1e-12);
    CHECK_INT((int)f.model.pace_n, ==, 3);
    snprintf(text, sizeof text,
             "{\"ev\": \"window\", \"first\": 5, \"steps\": 4, \"layers\": 1, \"rank\": 1}\n");
    feed(&f, text, 5);
    CHECK_INT(f.bad, ==, 1);
    CHECK_STR_HAS(f.why, "window: a second window");
}

static void test_error(void)
{
    HookFeed f;
    Tree t;
    char line[512], at[HOOK_AT_LEN + 8];

    feed_init(&f, &t);
    feed(&f, "{\"ev\": \"error\", \"pid\": 99, \"type\": \"E\", \"at\": \"x.py:f\"}\n"
             "{\"ev\": \"error\", \"pid\": 9, \"type\": \"A\\u0007\", \"at\": \"x.py:f\"}\n"
             "{\"ev\": \"error\", \"pid\": 9, \"type\": \"AttributeError\", "
             "\"at\": \"torch/api.py:to_map\"}\n"
             "{\"ev\": \"error\", \"pid\": 10, \"type\": \"ValueError\", \"at\": \"y.py:g\"}\n",
         7);
    CHECK_INT(f.bad, ==, 2);
    CHECK_INT(f.hello, ==, 0);
    CHECK(!strcmp(f.error_type, "AttributeError"));
    CHECK(!strcmp(f.error_at, "torch/api.py:to_map"));
    memset(at, 'a', HOOK_AT_LEN);
    at[HOOK_AT_LEN] = '\0';
    snprintf(line, sizeof line, "{\"ev\": \"error\", \"pid\": 9, \"type\": \"E\", \"at\": \"%s\"}\n",
             at);
    feed_init(&f, &t);
    feed(&f, line, 64);
    CHECK_INT(f.bad, ==, 1);
    CHECK_STR_HAS(f.why, "error: at is not a string of 1..127 bytes");
    CHECK(!f.error_type[0]);
}

int main(void)
{
    test_error();
    test_ranks();
    test_rank_windows();
    test_good();
    test_bad_lines();
    test_hello();
    test_random();
    return check_report();
}

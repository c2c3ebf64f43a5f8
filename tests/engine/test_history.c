/*
 * test_history.c: the run's history (src/engine/history.c) stays bounded
 * over a long run and its merges are exact, on a fake clock.
 *
 * - Merges: a merged sample's rates are those over its whole span (images
 *   over time, wait over step time, instructions over cycles, misses over
 *   references, the queue's fill over the time it existed), its counts and
 *   settings the later sample's; a figure missing on one side is the
 *   other's.
 * - A long run: five simulated days at 10 Hz (4.32 million samples, past
 *   the point where the top level folds on itself, a day being 864000),
 *   fed straight into the history with jittered intervals, rates that
 *   change, a live change every 3 s (workers, batch, a segment), stretches
 *   without a queue and without counters.  Throughout: at most HISTORY_CAP
 *   samples; at the end of each simulated day: contiguous samples from 0
 *   to the last, the last 25.6 s or more at full rate (the raw samples
 *   themselves), every whole-run mean (images/s by time, the data-wait
 *   share by step time, IPC by cycles, the miss rate by references, the
 *   queue fill by time) equal to the exact one over every raw sample, the
 *   last sample the run's counts, and the record made of it (JSON) under
 *   its stated bound.  The resident memory read each simulated hour grows
 *   by no more than the history's own size over the run, and not at all
 *   over the last day (a slope would show there as tens of MB: 3 MB an
 *   hour unbounded).  Takes a second or two.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cnntop/record.h"
#include "engine/history.h"
#include "util/rng.h"

#define HZ 10
#define DAY (86400L * HZ)
#define DAYS 5
#define JSON_BOUND (5L << 19) /* bytes of a record's JSON: 2.5 MiB, the man page's bound */

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;

    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

/* The exact sums over every raw sample fed. */
typedef struct Exact {
    double t, images, wait, busy, instr, cycles, misses, refs, fill_sum, fill_t;
    Sample last;
} Exact;

/* Raw sample i of the fake run, after `prev`, with its weights. */
static void synth(long i, const Sample *prev, Sample *s, HistWeight *w)
{
    uint64_t k = rng_key(7, 34, 17);
    double dt = 0.09 + 0.02 * rng_unit(rng_at(k, 4 * (uint64_t)i)); /* jitter */
    long change = i / (3 * HZ);                                       /* every 3 s */
    int workers = (int)(change % 5), batch = 32 << (change % 3);
    double ips = 20000.0 + 8000.0 * rng_unit(rng_at(k, 4 * (uint64_t)i + 1)) - 500.0 * workers;
    long images = prev->images + (long)(ips * dt);

    *s = (Sample){.t = prev->t + dt, .dt = dt, .images = images, .step = images / batch,
                  .loss = 2.0f * rng_unit(rng_at(k, 4 * (uint64_t)i + 2)), .workers = workers,
                  .batch = batch, .segment = (int)change};
    s->images_per_s = (float)((double)(images - prev->images) / dt);
    s->queue_fill = workers ? rng_unit(rng_at(k, 4 * (uint64_t)i + 3)) : -1.0f;
    w->busy = dt * (0.97 + 0.01 * workers);
    s->data_wait_share = (float)(0.05 + 0.1 * (4 - workers) / 4.0);
    int counted = (i / 1000) % 7 != 0; /* stretches without counters */
    w->cycles = counted ? dt * 3e9 * (1.0 + 0.1 * workers) : 0.0;
    w->refs = counted ? dt * 1e7 * (1.0 + 0.05 * (batch / 32)) : 0.0;
    s->ipc = counted ? (float)(1.0 + 0.25 * (change % 4)) : NAN;
    s->miss_rate = counted ? (float)(0.01 * (1 + change % 6)) : NAN;
}

static void exact_add(Exact *x, const Sample *s, const HistWeight *w)
{
    x->t += s->dt;
    x->images += s->images_per_s * s->dt;
    x->wait += s->data_wait_share * w->busy;
    x->busy += w->busy;
    if (isfinite(s->ipc)) {
        x->instr += s->ipc * w->cycles;
        x->cycles += w->cycles;
        x->misses += s->miss_rate * w->refs;
        x->refs += w->refs;
    }
    if (s->queue_fill >= 0) {
        x->fill_sum += s->queue_fill * s->dt;
        x->fill_t += s->dt;
    }
    x->last = *s;
}

/* r relative to x within rel. */
#define CHECK_REL(r, x, rel) CHECK_NEAR((r) / (x), 1.0, rel)

/* The history against the exact sums, and its shape. */
static void check_whole(const History *h, const Exact *x, const Sample *raw_tail, int ntail)
{
    double sum_t = 0, images = 0, wait = 0, busy = 0, instr = 0, cycles = 0, miss = 0, refs = 0;
    double fill = 0, fill_t = 0, end = 0;
    int gaps = 0;

    for (int i = 0; i < h->n; i++) {
        const Sample *s = &h->s[i];
        const HistWeight *w = &h->w[i];
        gaps += fabs(s->t - s->dt - end) > 1e-6;
        end = s->t;
        sum_t += s->dt;
        images += s->images_per_s * s->dt; /* the record's figures alone do this one */
        wait += s->data_wait_share * w->busy;
        busy += w->busy;
        if (isfinite(s->ipc)) {
            instr += s->ipc * w->cycles;
            cycles += w->cycles;
        }
        if (isfinite(s->miss_rate)) {
            miss += s->miss_rate * w->refs;
            refs += w->refs;
        }
        if (s->queue_fill >= 0) {
            fill += s->queue_fill * w->fill_dt;
            fill_t += w->fill_dt;
        }
    }
    CHECK_INT(gaps, ==, 0);
    CHECK_REL(sum_t, x->t, 1e-9);
    CHECK_REL(images, x->images, 1e-6);
    CHECK_REL(wait / busy, x->wait / x->busy, 1e-6);
    CHECK_REL(instr / cycles, x->instr / x->cycles, 1e-6);
    CHECK_REL(miss / refs, x->misses / x->refs, 1e-6);
    CHECK_REL(fill / fill_t, x->fill_sum / x->fill_t, 1e-6);
    CHECK_REL(fill_t, x->fill_t, 1e-9);
    const Sample *last = &h->s[h->n - 1];
    CHECK_INT(last->images, ==, x->last.images);
    CHECK_INT(last->step, ==, x->last.step);
    CHECK_INT(last->segment, ==, x->last.segment);
    CHECK(last->t == x->last.t);
    /* The recent past at full rate: the raw samples themselves. */
    int same = 0;
    for (int i = 0; i < ntail && i < h->n; i++)
        same += !memcmp(&h->s[h->n - 1 - i], &raw_tail[(ntail - 1 - i)], sizeof(Sample));
    CHECK_INT(same, ==, ntail);
}

/* The record of the history's samples, as JSON: its size. */
static size_t json_bytes(const History *h)
{
    RunRecord r;
    char *text = NULL;
    size_t len = 0;

    record_init(&r);
    for (int i = 0; i < h->n; i++)
        CHECK_INT(record_add_sample(&r, &h->s[i], (int)(h->s[i].images / 60000), h->s[i].ipc,
                                    h->s[i].miss_rate), ==, 0);
    CHECK_INT(record_format(&r, EXPORT_JSON, &text, &len), ==, 0);
    free(text);
    record_done(&r);
    return len;
}

/* The span of the sample covering t seconds before the end. */
static double span_at(const History *h, double ago)
{
    double t = h->s[h->n - 1].t - ago;
    for (int i = h->n - 1; i >= 0; i--)
        if (h->s[i].t - h->s[i].dt <= t)
            return h->s[i].dt;
    return NAN;
}

static void test_long_run(void)
{
    History *h = calloc(1, sizeof *h);
    Exact x = {0};
    Sample prev = {0}, s, tail[HISTORY_KEEP];
    HistWeight w;
    long rss[DAYS * 24 + 1];
    int max_n = 0, levels_ok = 1;

    if (!h)
        exit(1);
    history_init(h);
    for (long i = 0; i < DAYS * DAY; i++) {
        synth(i, &prev, &s, &w);
        history_add(h, &s, &w);
        exact_add(&x, &s, &w);
        tail[i % HISTORY_KEEP] = s;
        prev = s;
        if (h->n > max_n)
            max_n = h->n;
        if ((i + 1) % (3600L * HZ) == 0) {
            rss[(i + 1) / (3600L * HZ)] = rss_kib();
            for (int L = 0; L < HISTORY_LEVELS; L++) /* the top level too: it folds */
                levels_ok &= h->count[L] < 2 * HISTORY_KEEP;
        }
        if ((i + 1) % DAY == 0) {
            Sample ordered[HISTORY_KEEP];
            for (int k = 0; k < HISTORY_KEEP; k++)
                ordered[k] = tail[(i + 1 + k) % HISTORY_KEEP];
            check_whole(h, &x, ordered, HISTORY_KEEP);
            size_t bytes = json_bytes(h);
            malloc_trim(0); /* the export's heap back, so that RSS shows the history's */
            printf("day %ld: %d samples (%zu bytes held), JSON %zu bytes; span 1 min ago %.1f s,"
                   " 15 min %.1f s, 1 h %.1f s, 12 h %.0f s\n", (i + 1) / DAY, h->n,
                   (size_t)h->n * (sizeof *h->s + sizeof *h->w), bytes, span_at(h, 60),
                   span_at(h, 900), span_at(h, 3600), span_at(h, 43200));
            CHECK(bytes <= JSON_BOUND);
            CHECK(bytes / (size_t)h->n * HISTORY_CAP <= JSON_BOUND); /* so at the cap too */
            CHECK(span_at(h, 60) <= 0.25);
            CHECK(span_at(h, 900) <= 4.0);
        }
    }
    CHECK_INT(max_n, <=, HISTORY_CAP);
    CHECK(levels_ok);
    for (int k = 1; k <= DAYS * 24; k += 12)
        printf("RSS at %3d h: %ld KiB\n", k, rss[k]);
    printf("at most %d samples held (cap %d, %zu bytes); RSS %ld KiB at 1 h, %ld at 1 day, %ld at "
           "%d days\n", max_n, HISTORY_CAP, sizeof *h, rss[1], rss[24], rss[DAYS * 24], DAYS);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("memory not judged under a sanitizer\n");
#else
    long most = 0;
    for (int k = 1; k <= DAYS * 24; k++)
        most = rss[k] > most ? rss[k] : most;
    CHECK(most - rss[1] <= (long)(sizeof *h / 1024) + 512);
    long last_day = 0;
    for (int k = (DAYS - 1) * 24; k <= DAYS * 24; k++)
        last_day = rss[k] - rss[(DAYS - 1) * 24] > last_day ? rss[k] - rss[(DAYS - 1) * 24]
                                                              : last_day;
    CHECK_INT(last_day, <=, 256);
#endif
    free(h);
}

/* Two samples merged by hand, with the figures each side may lack. */
static void test_merge(void)
{
    History *h = calloc(1, sizeof *h);
    Sample a = {.t = 1.0, .dt = 1.0, .step = 10, .images = 100, .loss = 2.0f, .images_per_s = 100,
                .queue_fill = 0.5f, .data_wait_share = 0.5f, .workers = 2, .batch = 10,
                .segment = 0, .ipc = 1.0f, .miss_rate = NAN};
    HistWeight wa = {.busy = 1.0, .cycles = 1e9, .refs = 0};
    Sample b = {.t = 4.0, .dt = 3.0, .step = 40, .images = 700, .loss = 1.0f, .images_per_s = 200,
                .queue_fill = -1, .data_wait_share = 0.0f, .workers = 0, .batch = 20,
                .segment = 1, .ipc = 3.0f, .miss_rate = 0.25f};
    HistWeight wb = {.busy = 3.0, .cycles = 3e9, .refs = 1e6};

    if (!h)
        exit(1);
    history_init(h);
    /* Fill level 0 until the first two merge: a, b, then filler. */
    history_add(h, &a, &wa);
    history_add(h, &b, &wb);
    Sample f = b;
    for (int i = 2; i < 2 * HISTORY_KEEP; i++) {
        f.t += 0.1;
        f.dt = 0.1;
        history_add(h, &f, &wb);
    }
    CHECK_INT(h->n, ==, 2 * HISTORY_KEEP - HISTORY_KEEP / 2);
    CHECK_INT(h->count[1], ==, HISTORY_KEEP / 2);
    CHECK(h->gen == 1);
    const Sample *m = &h->s[0];
    CHECK_NEAR(m->t, 4.0, 0);
    CHECK_NEAR(m->dt, 4.0, 0);
    CHECK_INT(m->step, ==, 40);
    CHECK_INT(m->images, ==, 700);
    CHECK_NEAR(m->loss, 1.0, 0);
    CHECK_NEAR(m->images_per_s, 700.0 / 4.0, 1e-4);       /* (100 + 600) images / 4 s */
    CHECK_NEAR(m->data_wait_share, 0.5 / 4.0, 1e-6);      /* 0.5 s of 4 s of steps */
    CHECK_NEAR(m->ipc, (1e9 + 9e9) / 4e9, 1e-6);          /* instructions / cycles */
    CHECK_NEAR(m->miss_rate, 0.25, 1e-6);                 /* a counted nothing */
    CHECK_NEAR(m->queue_fill, 0.5, 1e-6);                 /* b had no queue */
    CHECK_INT(m->workers, ==, 0);
    CHECK_INT(m->batch, ==, 20);
    CHECK_INT(m->segment, ==, 1);
    CHECK_NEAR(h->w[0].busy, 4.0, 1e-12);
    CHECK_NEAR(h->w[0].fill_dt, 1.0, 1e-12);
    free(h);
}

int main(void)
{
    test_merge();
    test_long_run();
    return check_report();
}

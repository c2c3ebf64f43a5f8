/*
 * soak.c: a long run with live changes, watched for memory growth and
 * throughput drift.
 *
 *   soak [SECONDS] [DATA_DIR]
 *
 * Trains on the data (the first 20000 images, batch 128 to start) for
 * SECONDS (default 300) while another thread, every second, sets a random
 * worker count (0..4), and every 5 seconds a batch size from {32, 64, 128}
 * and a prefetch (0..4).  Every 5 seconds it prints the resident memory
 * (VmRSS, from /proc/self/status) and images/s over the last 5 seconds.
 * At the end it compares the first half with the last quarter: RSS growth
 * (the arena for the largest batch exists from the start; loader slots
 * grow to their most within the first changes) and the throughput ratio.
 * Exit 1 if RSS grew by more than 16 MiB, or if training failed; throughput drift is printed,
 * not judged (the machine is noisy).  Under a sanitizer the memory is not
 * judged either (its shadow memory grows with the threads it has seen);
 * the run still checks for races and leaks there.  tests/CMakeLists.txt runs a short
 * version (test_soak, 30 s); bench/RESULTS.md has a long one.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cnntop/engine.h"
#include "util/rng.h"
#include "prof/profile.h"

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

typedef struct Soak {
    Engine *e;
    double seconds;
    atomic_int done;
    long changes;
} Soak;

static void *changer(void *arg)
{
    Soak *s = arg;
    uint64_t key = rng_key(11, 12, 13);
    static const int batches[] = {32, 64, 128};
    char err[256];

    for (uint64_t i = 1; !atomic_load(&s->done); i++) {
        usleep(1000000);
        engine_set_workers(s->e, (int)rng_below(rng_at(key, 3 * i), 5), err, sizeof err);
        if (i % 5 == 0) {
            engine_set_batch(s->e, batches[rng_below(rng_at(key, 3 * i + 1), 3)], err, sizeof err);
            engine_set_prefetch(s->e, (int)rng_below(rng_at(key, 3 * i + 2), 5), err, sizeof err);
        }
        s->changes++;
    }
    return NULL;
}

typedef struct Watch {
    double t0, next, seconds;
    long last_images;
    double last_t;
    long rss[4096];
    double ips[4096];
    int n;
} Watch;

static int on_progress(const Progress *p, void *ud)
{
    Watch *w = ud;
    double t = timer_now() - w->t0;

    if (t >= w->next && w->n < 4096) {
        w->rss[w->n] = rss_kib();
        w->ips[w->n] = (double)(p->images - w->last_images) / (t - w->last_t);
        printf("soak: %6.0f s  RSS %7.1f MiB  %7.0f images/s  step %ld\n", t,
               w->rss[w->n] / 1024.0, w->ips[w->n], p->step);
        fflush(stdout);
        w->n++;
        w->last_images = p->images;
        w->last_t = t;
        w->next += 5.0;
    }
    return t >= w->seconds;
}

int main(int argc, char **argv)
{
    RunConfig cfg;
    Soak s = {.seconds = argc > 1 ? atof(argv[1]) : 300.0};
    Watch *w = calloc(1, sizeof *w);
    char err[512];
    pthread_t th;

    engine_config_default(&cfg);
    cfg.data_dir = argc > 2 ? argv[2] : NULL;
    cfg.limit = 20000;
    cfg.batch = 128;
    cfg.test_limit = 100;
    cfg.epochs = 100000;
    cfg.augment = CN_AUG_SHIFT;
    if (!w || engine_new(&s.e, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "soak: %s\n", w ? err : "out of memory");
        if (!w)
            return 1;
        return strstr(err, "No such file") ? 77 : 1;
    }
    atomic_init(&s.done, 0);
    w->t0 = timer_now();
    w->next = 5.0;
    w->seconds = s.seconds;
    pthread_create(&th, NULL, changer, &s);
    int rc = engine_train(s.e, on_progress, w, err, sizeof err);
    atomic_store(&s.done, 1);
    pthread_join(th, NULL);
    if (rc != 0) {
        fprintf(stderr, "soak: %s\n", err);
        return 1;
    }
    int q = w->n / 4;
    if (q < 1) {
        fprintf(stderr, "soak: too short to judge (%d samples)\n", w->n);
        engine_free(s.e);
        return 1;
    }
    long max_first = 0, max_last = 0;
    double ips_first = 0, ips_last = 0;
    for (int i = 0; i < 2 * q; i++)
        if (w->rss[i] > max_first)
            max_first = w->rss[i];
    for (int i = 0; i < q; i++)
        ips_first += w->ips[i] / q;
    for (int i = w->n - q; i < w->n; i++) {
        if (w->rss[i] > max_last)
            max_last = w->rss[i];
        ips_last += w->ips[i] / q;
    }
    long grow = max_last - max_first;
    printf("soak: %.0f s, %ld live changes; RSS peak first half %.1f MiB, last quarter %.1f MiB "
           "(%+.1f MiB); images/s first quarter %.0f, last %.0f (ratio %.2f)\n",
           s.seconds, s.changes, max_first / 1024.0, max_last / 1024.0, grow / 1024.0, ips_first,
           ips_last, ips_last / ips_first);
    engine_free(s.e);
    free(w);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    printf("soak: memory not judged under a sanitizer\n");
    grow = 0;
#endif
    if (grow > 16 * 1024) {
        printf("soak: FAIL: memory grew by %.1f MiB after the first half\n", grow / 1024.0);
        return 1;
    }
    return 0;
}

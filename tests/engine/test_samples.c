/*
 * test_samples.c: every run that trained has samples, and its last sample
 * is the run's end, however short the run is against the sampler's 0.1 s
 * (on real data, through the public API).
 *
 * A run of one step and one of ten (each shorter than or about one sampler
 * interval, where a run used to get one sample or none by chance), a run
 * stopped by engine_stop() and one by its callback after 3 steps, a run
 * with evaluations in it (the sampler pauses), and two runs on one engine
 * (a sweep's or the dashboard's second run): each has at least one sample;
 * the last one's step and images are the run's (TrainStats), its t at or
 * after the last step's end, and the samples are contiguous, each spanning
 * (t - dt, t] from 0.  An engine that only evaluated has none.  Needs
 * Debian's dataset-fashion-mnist (skips without it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/engine.h"

#define LIMIT 320
#define BATCH 32
#define MAX_SAMPLES 4096

static Engine *make(long steps, long eval_every)
{
    RunConfig cfg;
    Engine *e = NULL;
    char err[512];

    engine_config_default(&cfg);
    cfg.threads = 1;
    cfg.batch = BATCH;
    cfg.steps = steps;
    cfg.limit = LIMIT;
    cfg.test_limit = 64;
    cfg.eval_every = eval_every;
    if (engine_new(&e, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "engine_new: %s\n", err);
        exit(1);
    }
    return e;
}

/* The samples of e's last run end at its end and cover it without a gap. */
static void check_samples(Engine *e, const char *what)
{
    static Sample s[MAX_SAMPLES];
    EngineSnapshot *snap = malloc(sizeof *snap);

    if (!snap)
        exit(1);
    engine_snapshot(e, snap);
    int n = engine_samples(e, s, MAX_SAMPLES, 0);
    const TrainStats *st = &snap->train;
    fprintf(stderr, "%s: %ld steps in %.3f s, %d samples\n", what, st->steps, st->wall, n);
    CHECK_INT(n, ==, snap->samples_total);
    CHECK_INT(n, >=, 1);
    if (n >= 1) {
        CHECK_INT(s[n - 1].step, ==, st->steps);
        CHECK_INT(s[n - 1].images, ==, st->images);
        /* Taken after the last step (whose end the progress gives), by
         * the run's end at the latest: the closing sample, or one the
         * sampler took between the last step and the end. */
        CHECK(s[n - 1].t >= snap->live.p.elapsed && s[n - 1].t <= st->wall + 1.0);
    }
    double end = 0.0, most = 0.0;
    for (int i = 0; i < n; i++) {
        most = s[i].images_per_s > most ? s[i].images_per_s : most;
        CHECK(s[i].dt > 0);
        CHECK_NEAR(s[i].t - s[i].dt, end, 1e-9);
        end = s[i].t;
    }
    CHECK(most > 0); /* a sample after the last step may have none */
    free(snap);
}

static int stop_at_3(const Progress *p, void *ud)
{
    if (p->step == 3)
        engine_stop(ud);
    return 0;
}

static int quit_at_3(const Progress *p, void *ud)
{
    (void)ud;
    return p->step == 3;
}

int main(void)
{
    char err[512];

    if (access(CN_DEFAULT_DATA_DIR, R_OK) != 0)
        check_skip(CN_DEFAULT_DATA_DIR " missing (install dataset-fashion-mnist)");
    Engine *e = make(1, 0);
    CHECK_INT(engine_train(e, NULL, NULL, err, sizeof err), ==, 0);
    check_samples(e, "--steps 1");
    engine_free(e);

    e = make(10, 0);
    CHECK_INT(engine_train(e, NULL, NULL, err, sizeof err), ==, 0);
    check_samples(e, "--steps 10");
    /* A second run on the same engine: its own samples only. */
    CHECK_INT(engine_train(e, NULL, NULL, err, sizeof err), ==, 0);
    check_samples(e, "--steps 10, second run");
    CHECK_INT(engine_train(e, stop_at_3, e, err, sizeof err), ==, 0);
    check_samples(e, "engine_stop() after step 3");
    CHECK_INT(engine_train(e, quit_at_3, NULL, err, sizeof err), ==, 0);
    check_samples(e, "the callback stops after step 3");
    engine_free(e);

    e = make(12, 4); /* 3 evaluations: the sampler pauses through each */
    CHECK_INT(engine_train(e, NULL, NULL, err, sizeof err), ==, 0);
    check_samples(e, "--steps 12 --eval-every 4");
    engine_free(e);

    /* Evaluation only: nothing trained, no samples. */
    e = make(10, 0);
    EvalResult r;
    EngineSnapshot *snap = malloc(sizeof *snap);
    CHECK_INT(engine_evaluate(e, &r, err, sizeof err), ==, 0);
    if (snap) {
        engine_snapshot(e, snap);
        CHECK_INT(snap->samples_total, ==, 0);
    }
    free(snap);
    engine_free(e);
    return check_report();
}

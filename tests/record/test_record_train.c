/*
 * test_record_train.c: record_train(), the one way a front end trains a
 * configuration into a record (cnntop/record_train.h), on a tiny slice of
 * real data.
 *
 * One warm-up and two measured repeats: every repeat gets a fresh engine,
 * the measured ones are recorded and the warm-up is not, the record is
 * filled from the last and its engine handed back, with the peak of the
 * caller's calibration.  The stopped-run rule: a run stopped after a step
 * is evaluated and ends the job; asked to skip the evaluation it is not; a
 * run stopped before its first step is neither evaluated nor saved.  A bad
 * configuration is an error value, nothing filled.  Needs Debian's
 * dataset-fashion-mnist (skips without it).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/err.h"
#include "cnntop/record_train.h"

/* What the hooks saw, and the stop they give. */
typedef struct Hooks {
    int opened, closing, evaluating;
    int seeds_differ;      /* two opened engines had different seeds */
    unsigned long seed0;
    long stop_after;       /* steps after which stopping() says `stop_with`; -1: never */
    int stop_with;         /* 1 stop, 2 stop and skip the evaluation */
    int stop_at_open;      /* stop as the engine is made, before training */
    long step;
} Hooks;

static int on_progress(const Progress *p, void *ud)
{
    Hooks *h = ud;

    h->step = p->step;
    return h->stop_after >= 0 && p->step >= h->stop_after;
}

static void on_phase(void *ud, RecordTrainPhase ph, Engine *e, int r)
{
    Hooks *h = ud;
    EngineSnapshot snap;

    if (ph == RECORD_TRAIN_OPENED) {
        engine_snapshot(e, &snap);
        if (h->opened++ == 0)
            h->seed0 = (unsigned long)snap.cfg.seed;
        else if ((unsigned long)snap.cfg.seed != h->seed0)
            h->seeds_differ = 1;
        CHECK_INT(snap.train.steps, ==, 0); /* a fresh engine each repeat */
        CHECK_INT(r, ==, h->opened - 1);
        if (h->stop_at_open) { /* the dashboard's x while it loads */
            h->stop_after = 0;
            h->stop_with = 1;
        }
    } else if (ph == RECORD_TRAIN_EVALUATING)
        h->evaluating++;
    else if (ph == RECORD_TRAIN_CLOSING)
        h->closing++;
}

static int on_stopping(void *ud)
{
    Hooks *h = ud;

    return h->stop_after >= 0 && h->step >= h->stop_after ? h->stop_with : 0;
}

static RecordTrainJob job_for(Hooks *h, int runs, int warmup)
{
    RecordTrainJob job;

    memset(&job, 0, sizeof job);
    engine_config_default(&job.cfg);
    job.cfg.threads = 1;
    job.cfg.batch = 32;
    job.cfg.steps = 3;
    job.cfg.limit = 320;
    job.cfg.test_limit = 64;
    job.runs = runs;
    job.warmup = warmup;
    job.progress = on_progress;
    job.phase = on_phase;
    job.stopping = on_stopping;
    job.ud = h;
    memset(h, 0, sizeof *h);
    h->stop_after = -1;
    return job;
}

/* Warm-ups and repeats, the record, the engine handed back, the peak. */
static void test_repeats(void)
{
    Hooks h;
    RecordTrainJob job = job_for(&h, 2, 1);
    RecordTrainResult res;
    RunRecord rec;
    Engine *e = NULL;
    Calibration c;
    char err[512] = "";

    memset(&c, 0, sizeof c);
    c.batch[0] = 16;
    c.batch[1] = 512;
    c.model_gflops[0] = 12.5;
    c.model_gflops[1] = 40.0;
    job.calib = &c;
    job.vary_seed = 1;
    job.target = 0.05;
    record_init(&rec);
    CHECK_INT(record_train(&job, &rec, &res, &e, err, sizeof err), ==, 0);
    CHECK_INT(h.opened, ==, 3);      /* a fresh engine for each of the three */
    CHECK_INT(h.closing, ==, 2);     /* the last one is handed back */
    CHECK_INT(h.evaluating, ==, 3);  /* each is evaluated (its repeat's accuracy) */
    CHECK(h.seeds_differ);           /* vary_seed */
    CHECK(e != NULL);
    CHECK(res.kept && res.trained && !res.stopped && res.have_eval);
    CHECK_INT(rec.n_repeats, ==, 2); /* the measured ones, not the warm-up */
    for (size_t i = 0; i < rec.n_repeats; i++) {
        CHECK(!isnan(rec.repeats[i].accuracy));
        CHECK(rec.repeats[i].wall > 0);
        CHECK_INT(rec.repeats[i].exit_code, ==, 0);
    }
    CHECK_INT(rec.train.steps, ==, 3);  /* record_fill()'s figures */
    CHECK_INT(rec.config.batch, ==, 32);
    CHECK(rec.n_layers > 0);
    CHECK(rec.have_eval);
    CHECK_NEAR(rec.eval.accuracy, res.eval.accuracy, 0);
    CHECK_NEAR(rec.target_accuracy, 0.05, 1e-12);
    CHECK_NEAR(rec.peak_gflops, 12.5, 0); /* batch 32 is nearest to 16 */
    if (e) {
        EngineSnapshot snap;
        engine_snapshot(e, &snap);
        CHECK_INT(snap.train.steps, ==, 3);
    }
    engine_free(e);
    record_done(&rec);
}

/* A stop after a step: evaluated (or not, when asked to skip), the rest
 * of the repeats not run, the stopped repeat the kept one. */
static void test_stop(int with)
{
    Hooks h;
    RecordTrainJob job = job_for(&h, 3, 0);
    RecordTrainResult res;
    RunRecord rec;
    char err[512] = "";

    job.cfg.steps = 50;
    h.stop_after = 2;
    h.stop_with = with;
    record_init(&rec);
    CHECK_INT(record_train(&job, &rec, &res, NULL, err, sizeof err), ==, 0);
    CHECK_INT(h.opened, ==, 1);
    CHECK_INT(h.closing, ==, 1); /* no `last`: freed */
    CHECK(res.stopped && res.kept);
    CHECK_INT(rec.train.steps, ==, 2);
    CHECK(rec.train.stopped);
    CHECK_INT(rec.n_repeats, ==, 1);
    if (with == 1) {
        CHECK_INT(h.evaluating, ==, 1);
        CHECK(rec.have_eval && res.have_eval);
        CHECK(rec.n_repeats == 1 && !isnan(rec.repeats[0].accuracy));
    } else {
        CHECK_INT(h.evaluating, ==, 0);
        CHECK(!rec.have_eval && !res.have_eval);
        CHECK(rec.n_repeats == 1 && isnan(rec.repeats[0].accuracy));
    }
    record_done(&rec);
}

/* Stopped before its first step: no evaluation, no checkpoint. */
static void test_stop_before(void)
{
    Hooks h;
    RecordTrainJob job = job_for(&h, 1, 0);
    RecordTrainResult res;
    RunRecord rec;
    char err[512] = "", path[] = "/tmp/test_record_train.XXXXXX";
    int fd = mkstemp(path);

    CHECK(fd >= 0);
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    job.save = path;
    h.stop_at_open = 1;
    record_init(&rec);
    CHECK_INT(record_train(&job, &rec, &res, NULL, err, sizeof err), ==, 0);
    CHECK(res.stopped && res.kept);
    CHECK_INT(rec.train.steps, ==, 0);
    CHECK_INT(h.evaluating, ==, 0);
    CHECK(!rec.have_eval);
    CHECK(access(path, F_OK) != 0);
    unlink(path);
    record_done(&rec);
}

/* A configuration the engine refuses: an error value, nothing filled. */
static void test_error(void)
{
    Hooks h;
    RecordTrainJob job = job_for(&h, 1, 0);
    RecordTrainResult res;
    RunRecord rec;
    Engine *e = (Engine *)&h;
    char err[512] = "";

    job.cfg.data_dir = "/nonexistent/cnntop-data";
    record_init(&rec);
    CHECK(record_train(&job, &rec, &res, &e, err, sizeof err) < 0);
    CHECK(err[0] != '\0');
    CHECK(e == NULL);
    CHECK(!res.kept);
    CHECK_INT(h.opened, ==, 0);
    CHECK_INT(rec.train.steps, <=, 0);
    record_done(&rec);
}

int main(void)
{
    if (access(CN_DEFAULT_DATA_DIR, R_OK) != 0)
        check_skip(CN_DEFAULT_DATA_DIR " missing (install dataset-fashion-mnist)");
    test_repeats();
    test_stop(1);
    test_stop(2);
    test_stop_before();
    test_error();
    return check_report();
}

/*
 * test_snapshot.c: engine_snapshot() and the copy-outs (engine_samples,
 * engine_evals) through the public API, on real data.
 *
 * Before a run the snapshot holds the engine's fixed figures and the
 * settings; while a run goes, a second thread snapshots as fast as it can
 * and every snapshot must be one consistent moment: the trainer's figures
 * (train.*, epochs_done, epoch_images) agree with the progress published
 * with them, nothing counted goes backwards, and the copy-outs give what
 * the snapshot counts.  After the run, a checkpoint and a live setting
 * show in the next snapshot.  Run under TSan (label threads), the reader
 * thread also proves the snapshot reads only what is published under the
 * lock.  Needs Debian's dataset-fashion-mnist (skips without it).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/engine.h"

#define LIMIT 160   /* training images: 10 steps of 16 an epoch */
#define BATCH 16
#define STEPS 15    /* 1 epoch and 80 images */
#define EVERY 5     /* an evaluation every 5 steps: 3 */

typedef struct Reader {
    Engine *e;
    atomic_int quit;
    long snaps;      /* snapshots taken */
    long running;    /* of which during the run, after its first step */
    int bad;         /* the first inconsistency seen, 0: none */
    char why[160];
} Reader;

static void reader_bad(Reader *r, int code, const char *why)
{
    if (!r->bad) {
        r->bad = code;
        snprintf(r->why, sizeof r->why, "%s", why);
    }
}

/* One snapshot checked against itself and against the one before. */
static void reader_check(Reader *r, const EngineSnapshot *s, const EngineSnapshot *prev,
                         Sample *buf, EvalPoint *ev)
{
    const Progress *p = &s->live.p;

    if (s->live.running && p->step > 0) {
        r->running++;
        if (s->train.steps != p->step || s->train.images != p->images)
            reader_bad(r, 1, "train.steps/images differ from the progress published with them");
        if (s->epochs_done * LIMIT + s->epoch_images != p->images)
            reader_bad(r, 2, "epochs_done/epoch_images differ from the progress");
    }
    if (s->train.steps < prev->train.steps && s->live.running)
        reader_bad(r, 3, "train.steps went backwards during the run");
    if (s->samples_generation == prev->samples_generation &&
        s->samples_total < prev->samples_total)
        reader_bad(r, 4, "samples_total went backwards within a generation");
    if (s->nevals < prev->nevals && s->live.running)
        reader_bad(r, 5, "nevals went backwards during the run");
    if (s->nsegments < 1 && s->live.running)
        reader_bad(r, 6, "a running run without a segment");
    /* The copy-outs hold at least what the snapshot counted (the run may
     * have added more since). */
    if (s->samples_total > 0 && engine_samples(r->e, buf, 1, s->samples_total - 1) != 1)
        reader_bad(r, 7, "engine_samples lacks the last sample counted");
    if (engine_evals(r->e, ev, CN_MAX_EVALS) < s->nevals)
        reader_bad(r, 8, "engine_evals gave fewer evaluations than counted");
}

static void *reader_main(void *arg)
{
    Reader *r = arg;
    EngineSnapshot *s = malloc(sizeof *s), *prev = calloc(1, sizeof *prev);
    Sample *buf = malloc(sizeof *buf);
    EvalPoint *ev = malloc(CN_MAX_EVALS * sizeof *ev);

    if (!s || !prev || !buf || !ev)
        reader_bad(r, 9, "out of memory");
    while (!r->bad && !atomic_load(&r->quit)) {
        engine_snapshot(r->e, s);
        r->snaps++;
        reader_check(r, s, prev, buf, ev);
        EngineSnapshot *t = prev;
        prev = s;
        s = t;
    }
    free(s);
    free(prev);
    free(buf);
    free(ev);
    return NULL;
}

static Engine *make(int workers)
{
    RunConfig cfg;
    Engine *e = NULL;
    char err[512];

    engine_config_default(&cfg);
    cfg.threads = 2;
    cfg.batch = BATCH;
    cfg.steps = STEPS;
    cfg.limit = LIMIT;
    cfg.test_limit = 64;
    cfg.workers = workers;
    cfg.eval_every = EVERY;
    if (engine_new(&e, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "engine_new: %s\n", err);
        exit(1);
    }
    return e;
}

/* Before any run: the fixed figures and the settings, nothing trained. */
static void test_before(void)
{
    Engine *e = make(1);
    EngineSnapshot s;

    engine_snapshot(e, &s);
    CHECK_INT(s.train_images, ==, LIMIT);
    CHECK_INT(s.test_images, ==, 64);
    CHECK_INT(s.threads, ==, 2);
    CHECK(s.data_dir[0] == '/');
    CHECK(s.cfg.data_dir == NULL);
    CHECK_INT(s.cfg.batch, ==, BATCH);
    CHECK_INT(s.cfg.workers, ==, 1);
    CHECK_INT(s.cfg.steps, ==, STEPS);
    CHECK_INT(s.train.steps, ==, 0);
    CHECK_INT(s.epochs_done, ==, 0);
    CHECK_INT(s.epoch_images, ==, 0);
    CHECK_INT(s.live.running, ==, 0);
    CHECK_INT(s.live.workers, ==, 1);
    CHECK_INT(s.live.batch, ==, BATCH);
    CHECK_INT(s.samples_total, ==, 0);
    CHECK_INT(s.nsegments, ==, 0);
    CHECK_INT(s.nevals, ==, 0);
    engine_free(e);
}

/* A run read by a second thread all along, then its figures, a live
 * setting and a checkpoint in the snapshot. */
static void test_during_and_after(const char *dir)
{
    Engine *e = make(2);
    Reader r = {.e = e};
    EngineSnapshot *s = malloc(sizeof *s);
    EvalPoint ev[8];
    pthread_t th;
    char err[512], path[600];

    if (!s)
        exit(1);
    atomic_init(&r.quit, 0);
    CHECK_INT(pthread_create(&th, NULL, reader_main, &r), ==, 0);
    CHECK_INT(engine_train(e, NULL, NULL, err, sizeof err), ==, 0);
    atomic_store(&r.quit, 1);
    pthread_join(th, NULL);
    fprintf(stderr, "reader: %ld snapshots, %ld during the run%s%s\n", r.snaps, r.running,
            r.bad ? ": " : "", r.bad ? r.why : "");
    CHECK_INT(r.bad, ==, 0);
    CHECK(r.snaps > 0);

    engine_snapshot(e, s);
    CHECK_INT(s->live.running, ==, 0);
    CHECK_INT(s->train.steps, ==, STEPS);
    CHECK_INT(s->train.images, ==, STEPS * BATCH);
    CHECK_INT(s->train.epochs_done, ==, 1);
    CHECK_INT(s->epochs_done, ==, 1);
    CHECK_INT(s->epoch_images, ==, STEPS * BATCH - LIMIT);
    CHECK_INT(s->live.p.step, ==, STEPS);
    CHECK_INT(s->nsegments, ==, 1);
    CHECK_INT(s->seg[0].steps, ==, STEPS);
    CHECK_INT(s->nevals, ==, STEPS / EVERY);
    CHECK_INT(engine_evals(e, ev, 8), ==, STEPS / EVERY);
    CHECK_INT(ev[0].step, ==, EVERY);
    CHECK_INT(ev[STEPS / EVERY - 1].step, ==, STEPS);
    CHECK_INT(s->samples_total, >=, 0);

    /* Live settings between runs show at once. */
    CHECK_INT(engine_set_workers(e, 0, err, sizeof err), ==, 0);
    CHECK_INT(engine_set_batch(e, 32, err, sizeof err), ==, 0);
    engine_snapshot(e, s);
    CHECK_INT(s->cfg.workers, ==, 0);
    CHECK_INT(s->live.workers, ==, 0);
    CHECK_INT(s->live.batch, ==, 32);

    /* A checkpoint's position shows in a fresh engine's snapshot. */
    snprintf(path, sizeof path, "%s/snap.ckpt", dir);
    CHECK_INT(engine_save(e, path, err, sizeof err), ==, 0);
    Engine *b = make(0);
    CHECK_INT(engine_load(b, path, err, sizeof err), ==, 0);
    engine_snapshot(b, s);
    CHECK_INT(s->epochs_done, ==, 1);
    CHECK_INT(s->epoch_images, ==, STEPS * BATCH - LIMIT);
    CHECK_INT(s->train.steps, ==, 0);
    unlink(path);
    engine_free(b);
    engine_free(e);
    free(s);
}

int main(void)
{
    if (access(CN_DEFAULT_DATA_DIR, R_OK) != 0)
        check_skip(CN_DEFAULT_DATA_DIR " missing (install dataset-fashion-mnist)");
    char dir[] = "/tmp/cnntop-test-snapshot-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    test_before();
    test_during_and_after(dir);
    rmdir(dir);
    return check_report();
}

/*
 * test_train.c: the engine through its public API on real data.
 *
 * A short training run whose loss falls and whose accuracy beats chance by
 * far; the same seed twice gives identical losses; 1, 2 and 3 threads give
 * identical losses bit for bit; Winograd groups of one image train the
 * same up to rounding; the native GEMM path (--gemm native) gives
 * identical losses on 1 and 2 threads too, and the first step's loss of
 * OpenBLAS's up to rounding; a checkpoint round trip evaluates the same;
 * broken checkpoints are refused with a clear message and leave the model
 * as it was.  Needs Debian's dataset-fashion-mnist (skips without it).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cnntop/engine.h"

#define STEPS 40

/* Steps of each run: STEPS, or fewer with CNNTOP_TEST_QUICK=1 (the TSan job,
 * where the engine runs ~20x slower: it needs the threads, not the learning). */
static int nsteps = STEPS;

typedef struct LossLog {
    float loss[STEPS];
    int n;
} LossLog;

static int record(const Progress *p, void *ud)
{
    LossLog *log = ud;
    if (log->n < STEPS)
        log->loss[log->n++] = p->loss;
    return 0;
}

static int gemm_choice = CN_GEMM_AUTO; /* RunConfig.gemm of the engines make() makes */

static Engine *make(int threads, int batch, uint64_t seed)
{
    RunConfig cfg;
    Engine *e = NULL;
    char err[512];

    engine_config_default(&cfg);
    cfg.threads = threads;
    cfg.batch = batch;
    cfg.seed = seed;
    cfg.steps = nsteps;
    cfg.limit = 4000;
    cfg.test_limit = 2000;
    cfg.gemm = gemm_choice;
    if (engine_new(&e, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "engine_new: %s\n", err);
        exit(1);
    }
    return e;
}

static void train(Engine *e, LossLog *log)
{
    char err[512];

    memset(log, 0, sizeof *log);
    int rc = engine_train(e, record, log, err, sizeof err);
    CHECK_INT(rc, ==, 0);
    CHECK_INT(log->n, ==, nsteps);
}

/* One run of nsteps at batch 64 on a fresh engine: its losses in log. */
static void run_losses(int threads, uint64_t seed, LossLog *log)
{
    Engine *e = make(threads, 64, seed);

    train(e, log);
    engine_free(e);
}

static void test_learns(void)
{
    Engine *e = make(0, 64, 1);
    LossLog log;
    EvalResult ev;
    EngineSnapshot snap;
    char err[512];

    train(e, &log);
    engine_snapshot(e, &snap);
    const TrainStats st = snap.train;
    double first = 0, last = 0;
    for (int i = 0; i < 5; i++) {
        first += log.loss[i] / 5;
        last += log.loss[STEPS - 5 + i] / 5;
    }
    fprintf(stderr, "loss first 5 steps %.4f, last 5 %.4f, %.0f img/s\n", first, last,
            st.images_per_s);
    CHECK(first > 1.5);     /* about ln(10) = 2.30 at the start */
    CHECK(last < first * 0.6);
    CHECK_INT(st.steps, ==, STEPS);
    CHECK_INT(st.images, ==, STEPS * 64);
    CHECK(st.split.forward > 0 && st.split.backward > 0 && st.split.optimizer > 0);
    CHECK_INT(engine_evaluate(e, &ev, err, sizeof err), ==, 0);
    fprintf(stderr, "accuracy after %d steps: %.2f%%\n", STEPS, 100 * ev.accuracy);
    CHECK_INT(ev.images, ==, 2000);
    CHECK(ev.accuracy > 0.60); /* chance is 0.10 */
    engine_free(e);
}

static void test_deterministic(void)
{
    LossLog a, b, c, d;

    run_losses(1, 7, &a);
    run_losses(1, 7, &b);
    run_losses(2, 7, &c);
    run_losses(3, 7, &d);
    CHECK(memcmp(a.loss, b.loss, sizeof a.loss) == 0); /* same seed twice */
    CHECK(memcmp(a.loss, c.loss, sizeof a.loss) == 0); /* 1 vs 2 threads */
    CHECK(memcmp(a.loss, d.loss, sizeof a.loss) == 0); /* 1 vs 3 threads */
    for (int i = 0; i < STEPS; i++)
        if (a.loss[i] != c.loss[i] || a.loss[i] != d.loss[i]) {
            fprintf(stderr, "step %d: 1 thread %.9g, 2 threads %.9g, 3 threads %.9g\n", i,
                    a.loss[i], c.loss[i], d.loss[i]);
            break;
        }
    run_losses(1, 8, &b);
    CHECK(memcmp(a.loss, b.loss, sizeof a.loss) != 0); /* another seed differs */
}

/* The GEMM paths: each deterministic across threads, the two equal up to
 * rounding on the first step (forward only: 1e-5 relative, as for the
 * group sizes below).  Where the CPU has no native kernel, native runs
 * OpenBLAS and the check holds trivially. */
static void test_gemm_paths(void)
{
    LossLog o, n1, n2;

    gemm_choice = CN_GEMM_OPENBLAS;
    run_losses(1, 7, &o);
    gemm_choice = CN_GEMM_NATIVE;
    fprintf(stderr, "native GEMM path: %s\n", machine_gemm_path(CN_GEMM_NATIVE));
    run_losses(1, 7, &n1);
    run_losses(2, 7, &n2);
    gemm_choice = CN_GEMM_AUTO;
    CHECK(memcmp(n1.loss, n2.loss, sizeof n1.loss) == 0); /* 1 vs 2 threads */
    CHECK(fabsf(n1.loss[0] - o.loss[0]) <= 1e-5f * o.loss[0]);
    fprintf(stderr, "first loss: openblas %.9g, native %.9g\n", o.loss[0], n1.loss[0]);
}

/*
 * Winograd groups of one image (CNNTOP_GROUP_KB=1) through the engine.
 * That they compute the same gradients is test_model's check, on one step.
 * Here: the first step's loss (forward only) within 1e-5 relative
 * (measured 0 to 1e-7), and the run learns (last 10 steps' mean below 0.6
 * of the first 5 steps').  The losses of the steps between are not
 * compared: Adam turns rounding-sized gradients into full-sized steps, so
 * runs differing only in rounding part by 2e-7 on one CPU and 1e-4 on
 * another within five steps, and their last 10 steps' means by up to 1.5%
 * (7 seeds).  An invalid value is ignored: bit for bit the default.
 */
static void test_group_size(void)
{
    LossLog a, b, c;
    Engine *e;
    double first, f5 = 0.0, la = 0.0, lb = 0.0;

    e = make(2, 64, 5);
    train(e, &a);
    engine_free(e);
    setenv("CNNTOP_GROUP_KB", "1", 1);
    e = make(2, 64, 5);
    train(e, &b);
    engine_free(e);
    setenv("CNNTOP_GROUP_KB", "12x", 1);
    e = make(2, 64, 5);
    train(e, &c);
    engine_free(e);
    unsetenv("CNNTOP_GROUP_KB");
    first = fabs((double)b.loss[0] - a.loss[0]) / fabs((double)a.loss[0]);
    for (int i = 0; i < 5; i++)
        f5 += b.loss[i] / 5;
    for (int i = nsteps - 10; i < nsteps; i++) {
        la += a.loss[i] / 10;
        lb += b.loss[i] / 10;
    }
    fprintf(stderr, "groups of one image: step 0 within %.2g relative; first 5 steps %.4f, "
            "last 10 %.4f (default %.4f)\n", first, f5, lb, la);
    CHECK(first <= 1e-5);
    CHECK(lb < 0.6 * f5);
    CHECK(memcmp(a.loss, c.loss, sizeof a.loss) == 0);
}

/* Odd batch sizes: the last batch of the epoch is short, chunks uneven. */
static void test_odd_batch(void)
{
    LossLog a, b;
    Engine *e = make(1, 37, 3);
    train(e, &a);
    engine_free(e);
    e = make(2, 37, 3);
    train(e, &b);
    engine_free(e);
    CHECK(memcmp(a.loss, b.loss, sizeof a.loss) == 0);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fwrite(p, 1, n, f);
        fclose(f);
    }
}

static size_t read_bytes(const char *path, unsigned char **out)
{
    FILE *f = fopen(path, "rb");
    long n;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = malloc((size_t)n);
    CHECK_INT(fread(*out, 1, (size_t)n, f), ==, n);
    fclose(f);
    return (size_t)n;
}

static void expect_refused(Engine *e, const char *path, const char *what, double acc)
{
    char err[512] = "";
    EvalResult ev;

    CHECK_INT(engine_load(e, path, err, sizeof err), <, 0);
    CHECK_STR_HAS(err, path);
    CHECK_STR_HAS(err, what);
    CHECK_INT(engine_evaluate(e, &ev, err, sizeof err), ==, 0);
    CHECK(ev.accuracy == acc); /* the model was left as it was */
}

static void test_checkpoint(const char *dir)
{
    char path[512], bad[600], err[512];
    EvalResult ev1, ev2, ev0;
    LossLog log;
    unsigned char *buf;

    snprintf(path, sizeof path, "%s/model.ckpt", dir);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", dir);
    Engine *a = make(2, 64, 5);
    train(&*a, &log);
    CHECK_INT(engine_save(a, path, err, sizeof err), ==, 0);
    CHECK_INT(engine_evaluate(a, &ev1, err, sizeof err), ==, 0);

    Engine *b = make(1, 100, 9); /* other seed, batch and threads */
    CHECK_INT(engine_evaluate(b, &ev0, err, sizeof err), ==, 0);
    CHECK_INT(engine_load(b, path, err, sizeof err), ==, 0);
    CHECK_INT(engine_evaluate(b, &ev2, err, sizeof err), ==, 0);
    CHECK(ev1.correct == ev2.correct);
    CHECK_NEAR(ev1.loss, ev2.loss, 1e-5);

    /* Broken files, each refused, the model untouched. */
    size_t n = read_bytes(path, &buf);
    write_bytes(bad, buf, n / 2);
    expect_refused(b, bad, "truncated", ev2.accuracy);
    buf[n / 2] ^= 0x55;
    write_bytes(bad, buf, n);
    expect_refused(b, bad, "checksum", ev2.accuracy);
    buf[n / 2] ^= 0x55;
    buf[8] = 9;
    write_bytes(bad, buf, n);
    expect_refused(b, bad, "version 9", ev2.accuracy);
    write_bytes(bad, "hello, world\n", 13);
    expect_refused(b, bad, "not a cnntop checkpoint", ev2.accuracy);
    snprintf(bad, sizeof bad, "%s/missing.ckpt", dir);
    expect_refused(b, bad, "No such file", ev2.accuracy);
    free(buf);

    /* Resuming continues training: the loaded model trains on. */
    train(b, &log);
    CHECK(log.loss[STEPS - 1] < 1.0f);
    engine_free(a);
    engine_free(b);
}

static void test_bad_config(void)
{
    RunConfig cfg;
    Engine *e = NULL;
    char err[512];

    engine_config_default(&cfg);
    cfg.batch = 0;
    CHECK_INT(engine_new(&e, &cfg, err, sizeof err), ==, -CN_EINVAL);
    CHECK_STR_HAS(err, "batch");
    engine_config_default(&cfg);
    cfg.lr = 0.0 / 0.0;
    CHECK_INT(engine_new(&e, &cfg, err, sizeof err), ==, -CN_EINVAL);
    CHECK_STR_HAS(err, "learning rate");
    engine_config_default(&cfg);
    cfg.data_dir = "/nonexistent/cnntop-data";
    CHECK(engine_new(&e, &cfg, err, sizeof err) < 0);
    CHECK_STR_HAS(err, "/nonexistent/cnntop-data");
    CHECK(e == NULL);
}

int main(void)
{
    if (access(CN_DEFAULT_DATA_DIR, R_OK) != 0)
        check_skip(CN_DEFAULT_DATA_DIR " missing (install dataset-fashion-mnist)");
    char dir[] = "/tmp/cnntop-test-train-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    const char *quick = getenv("CNNTOP_TEST_QUICK");
    if (quick && *quick == '1') {
        nsteps = 4;
        test_deterministic();
        test_gemm_paths();
        test_odd_batch();
    } else {
        test_bad_config();
        test_learns();
        test_deterministic();
        test_gemm_paths();
        test_group_size();
        test_odd_batch();
        test_checkpoint(dir);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_report();
}

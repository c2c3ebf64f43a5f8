/*
 * sgemm.c: the SGEMM rates: at the model's real GEMM shapes, run the way
 * the engine runs them (T threads at once, OpenBLAS on one thread each),
 * and one large square product on OpenBLAS's own threads.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "calibrate/crew.h"
#include "calibrate/measure.h"
#include "nn/gemm.h"
#include "nn/model.h"
#include "prof/timer.h"
#include "util/arena.h"
#include "util/err.h"

#define GEMM_WINDOWS 3             /* timing windows per model shape, best kept */

/* ---- SGEMM at the model's shapes ---- */

typedef struct GemmBench {
    const GemmShape *shapes;
    int nshapes;
    const double *slot;       /* [nshapes] seconds each shape is timed */
    double *percall;          /* [T][nshapes] seconds per call, per member */
    size_t na, nb, nc;        /* floats of A, B, C each member needs */
    pthread_barrier_t bar;
    atomic_int failed;        /* a member could not allocate */
} GemmBench;

/* Leading dimensions of a packed row-major op(A) (M, K), op(B) (K, N). */
static void shape_ld(const GemmShape *g, int *lda, int *ldb)
{
    *lda = g->ta ? g->M : g->K;
    *ldb = g->tb ? g->K : g->N;
}

static void gemm_once(const GemmShape *g, const float *A, const float *B, float *C)
{
    int lda, ldb;

    shape_ld(g, &lda, &ldb);
    gemm(g->ta, g->tb, g->M, g->N, g->K, 1.0f, A, lda, B, ldb, 0.0f, C, g->N);
}

static float *bench_buf(size_t n)
{
    float *p = mem_alloc(n * sizeof(float));

    for (size_t i = 0; p && i < n; i++)
        p[i] = (float)(i % 13) * 0.01f;
    return p;
}

static void gemm_member(void *bp, int tid)
{
    GemmBench *b = bp;
    float *A = bench_buf(b->na), *B = bench_buf(b->nb), *C = bench_buf(b->nc);

    if (!A || !B || !C)
        atomic_store(&b->failed, 1);
    for (int i = 0; i < b->nshapes; i++) {
        /* Every member starts each shape together, as a pool phase does. */
        pthread_barrier_wait(&b->bar);
        if (atomic_load(&b->failed))
            break;
        const GemmShape *g = &b->shapes[i];
        gemm_once(g, A, B, C); /* warm: OpenBLAS sets up its buffers */
        /* The fastest of a few windows, so that a neighbour's burst on a
         * shared machine does not stick to one shape. */
        double best = 0.0;
        for (int w = 0; w < GEMM_WINDOWS; w++) {
            double t0 = timer_now(), t;
            long calls = 0;
            do {
                gemm_once(g, A, B, C);
                calls++;
                t = timer_now() - t0;
            } while (t < b->slot[i] / GEMM_WINDOWS);
            best = w == 0 || t / (double)calls < best ? t / (double)calls : best;
        }
        b->percall[(size_t)tid * b->nshapes + i] = best;
    }
    mem_free(A);
    mem_free(B);
    mem_free(C);
}

static double shape_flops(const GemmShape *g)
{
    return 2.0 * g->M * (double)g->N * g->K * (double)g->count;
}

/*
 * The step's GEMM time on T threads: each shape's calls run as the engine's
 * phase runs them, over its `par` items on T threads, in ceil(par/T) rounds,
 * each call taking the per-call time measured with T threads at once.
 * Returns the rate, all threads together, GFLOP/s.
 */
static double step_rate(const GemmBench *b, int first, int n, int T)
{
    double flops = 0.0, secs = 0.0;

    for (int i = first; i < first + n; i++) {
        const GemmShape *g = &b->shapes[i];
        double t = 0.0;
        for (int m = 0; m < T; m++)
            t += b->percall[(size_t)m * b->nshapes + i] / T;
        int par = g->par > 0 ? g->par : 1;
        double rounds = ceil((double)par / (double)T); /* rounds of T parallel calls */
        flops += shape_flops(g);
        secs += (double)g->count * t * rounds / par;
    }
    return secs > 0.0 ? flops / secs * 1e-9 : 0.0;
}

/* Slots: half the budget by FLOP share, half evenly, so small shapes still
 * get enough calls to be timed. */
static void plan_slots(const GemmShape *g, int n, double budget, double *slot)
{
    double total = 0.0;

    for (int i = 0; i < n; i++)
        total += shape_flops(&g[i]);
    for (int i = 0; i < n; i++)
        slot[i] = budget * (0.5 * shape_flops(&g[i]) / total + 0.5 / n);
}

static void buf_need(GemmBench *b, const GemmShape *g)
{
    size_t a = (size_t)g->M * g->K, bb = (size_t)g->K * g->N, c = (size_t)g->M * g->N;

    b->na = a > b->na ? a : b->na;
    b->nb = bb > b->nb ? bb : b->nb;
    b->nc = c > b->nc ? c : b->nc;
}

/* Times both batches' shapes in one crew (buffers made once) and fills
 * out->model_gflops. */
int sgemm_measure_model(Calibration *out, int T, double budget, char *err, size_t errlen)
{
    GemmShape shapes[CALIB_NBATCH * MODEL_MAX_GEMM_SHAPES];
    double slot[CALIB_NBATCH * MODEL_MAX_GEMM_SHAPES];
    int first[CALIB_NBATCH], count[CALIB_NBATCH], n = 0, rc;
    GemmBench b = {.shapes = shapes, .slot = slot};

    for (int k = 0; k < CALIB_NBATCH; k++) {
        first[k] = n;
        count[k] = model_gemm_shapes(out->batch[k], shapes + n, MODEL_MAX_GEMM_SHAPES);
        if (count[k] > MODEL_MAX_GEMM_SHAPES)
            return cn_fail(err, errlen, -CN_EINVAL, "calibration: batch %d has %d GEMM "
                           "shapes, more than %d", out->batch[k], count[k],
                           MODEL_MAX_GEMM_SHAPES);
        plan_slots(shapes + n, count[k], budget / CALIB_NBATCH, slot + n);
        n += count[k];
    }
    b.nshapes = n;
    for (int i = 0; i < n; i++)
        buf_need(&b, &shapes[i]);
    b.percall = calloc((size_t)T * n, sizeof *b.percall);
    if (!b.percall)
        return cn_fail(err, errlen, -CN_ENOMEM, "calibration: out of memory");
    atomic_init(&b.failed, 0);
    pthread_barrier_init(&b.bar, NULL, (unsigned)T);
    rc = crew_run(T, gemm_member, &b, err, errlen);
    pthread_barrier_destroy(&b.bar);
    if (rc == 0 && atomic_load(&b.failed))
        rc = cn_fail(err, errlen, -CN_ENOMEM, "calibration: SGEMM buffers: out of memory");
    for (int k = 0; rc == 0 && k < CALIB_NBATCH; k++)
        out->model_gflops[k] = step_rate(&b, first[k], count[k], T);
    free(b.percall);
    return rc;
}

/* ---- SGEMM, one large square, OpenBLAS threads = cores ---- */

int sgemm_measure_square(Calibration *out, double budget, char *err, size_t errlen)
{
    const int n = out->square_n;
    size_t nn = (size_t)n * n;
    float *A = bench_buf(nn), *B = bench_buf(nn), *C = bench_buf(nn);
    int rc = 0;

    if (!A || !B || !C) {
        rc = cn_fail(err, errlen, -CN_ENOMEM, "calibration: %d x %d SGEMM: out of memory",
                     n, n);
        goto done;
    }
    gemm_set_threads(out->square_threads);
    /* The first call (OpenBLAS waking its threads) counts within the
     * budget, and a slow machine stops after it: best of what fits. */
    double best = 0.0, t_end = timer_now() + budget;
    do {
        double t0 = timer_now();
        gemm(0, 0, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
        double g = 2.0 * n * (double)n * n / (timer_now() - t0) * 1e-9;
        best = g > best ? g : best;
    } while (timer_now() < t_end);
    out->square_gflops = best;
done:
    gemm_set_threads(1);
    mem_free(A);
    mem_free(B);
    mem_free(C);
    return rc;
}

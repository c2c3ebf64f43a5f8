/*
 * ab_wino.c: the Winograd stage of an older revision against this tree's,
 * in one process (bench/ab_wino.sh builds it; not built by CMake).  The
 * old layer_wino.c and layer_wino_filter.c are compiled beside the new
 * with their functions renamed old_*, so that both run on the same
 * buffers, alternated (old first in even rounds, new first in odd ones),
 * by thread CPU time.  End to end, two builds of the same engine differed
 * by up to 1.12x part by part in one sitting (bench/RESULTS.md, session
 * 28); this damps the noise to a few percent.
 *
 * usage: ab_wino [BATCH [ROUNDS]]   (default 64 and 11)
 * For conv2 and conv3 as the model runs them on one thread (groups of 8
 * and 32 images, chunks as model_impl.h cuts a batch), two lines each:
 *   fwd     the forward over the batch, group by group;
 *   bwd+dg  the backward chunk by chunk (groups summed with beta 1) and
 *           each chunk's dg;
 * the least and the median of ROUNDS rounds (each the best of 3 passes,
 * the caches first filled with 8 MiB of other data, as the step's other
 * phases leave them), their ratios new/old, and whether the outputs (y
 * and the BN sums; dx, db and dw) are the same bit for bit.  The old API
 * must be the new one's (the script fails to link otherwise).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "cnntop/machine.h"
#include "nn/gemm.h"
#include "nn/layer_wino.h"

long old_wino_scratch_floats(int H, int W, int C, int OC, int cap);
void old_wino_forward(float *y, const float *x, WinoLayout xl, const float *U, const float *b,
                      double *stats, float *scratch, const WinoShape *s, int C, int OC, int N,
                      int n0, int nt, GemmPath path);
void old_wino_backward(float *dx, float *dE, float *db, const float *dy, const float *x,
                       WinoLayout xl, const float *U, float *scratch, const WinoShape *s, int C,
                       int OC, int N, int n0, int nt, float beta, GemmPath path);
void old_wino_filter_grad(float *dw, const float *dE, int C, long p0, long p1);

#define MAX_ROUNDS 64
#define JUNK (8L << 20) /* floats through the caches before each pass */

typedef struct Layer {
    const char *name;
    int C, OC, H, group, chunk; /* chunk: images a chunk at most below 16 chunks */
    WinoLayout xl;
} Layer;

static double cpu_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* n floats of noise in 2 MiB pages, as the engine's arena asks for. */
static float *noise(long n)
{
    const size_t page = 2UL << 20, bytes = ((size_t)n * sizeof(float) + page - 1) / page * page;
    float *p = aligned_alloc(page, bytes);

    if (!p) {
        fprintf(stderr, "ab_wino: out of memory\n");
        exit(1);
    }
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    for (long i = 0; i < n; i++)
        p[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    return p;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, const Layer *l, double t[2][MAX_ROUNDS], int rounds,
                   int same)
{
    qsort(t[0], (size_t)rounds, sizeof t[0][0], cmp);
    qsort(t[1], (size_t)rounds, sizeof t[1][0], cmp);
    printf("%s %-6s old %7.3f / %7.3f ms  new %7.3f / %7.3f ms  new/old %.3f / %.3f  %s\n",
           l->name, what, 1e3 * t[0][0], 1e3 * t[0][rounds / 2], 1e3 * t[1][0],
           1e3 * t[1][rounds / 2], t[1][0] / t[0][0], t[1][rounds / 2] / t[0][rounds / 2],
           same ? "outputs identical" : "outputs differ");
}

int main(int argc, char **argv)
{
    const int N = argc > 1 ? atoi(argv[1]) : 64, rounds = argc > 2 ? atoi(argv[2]) : 11;
    const Layer layers[2] = {{"conv2", 32, 64, 14, 8, 8, WINO_ROWS},
                             {"conv3", 64, 128, 7, 32, 32, WINO_LAST}};
    const GemmPath path = gemm_path_of(CN_GEMM_AUTO);
    float *junk = noise(JUNK);

    if (N < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: ab_wino [BATCH >= 1 [ROUNDS 1-%d]]\n", MAX_ROUNDS);
        return 2;
    }
    printf("batch %d, one thread, %s; least / median of %d rounds, each the best of 3\n", N,
           gemm_path_name(path), rounds);
    for (int li = 0; li < 2; li++) {
        const Layer *l = &layers[li];
        const int C = l->C, OC = l->OC, HW = l->H * l->H;
        const int chunk = N <= 16 * l->chunk ? l->chunk : (N + 15) / 16;
        const int group = l->group < chunk ? l->group : chunk;
        const long P = (long)C * OC, nc = (N + chunk - 1) / chunk;
        WinoShape s;
        wino_shape_init(&s, l->H, l->H, group);
        const long sn = wino_scratch_floats(l->H, l->H, C, OC, group);
        const long so = old_wino_scratch_floats(l->H, l->H, C, OC, group);
        float *x = noise((long)N * C * HW), *dy = noise((long)N * OC * HW);
        float *U = noise(WINO_P * P), *b = noise(OC), *sc = noise(sn > so ? sn : so);
        float *E = noise(WINO_P * P), *y[2], *dx[2], *dw[2], *db[2];
        double st[2][2 * 128], t[2][MAX_ROUNDS];
        for (int v = 0; v < 2; v++) {
            y[v] = noise((long)N * OC * HW);
            dx[v] = noise((long)N * C * HW);
            dw[v] = noise(nc * 9 * P);
            db[v] = noise(nc * OC);
        }
        for (int r = 0; r < rounds; r++)
            for (int q = 0; q < 2; q++) {
                const int v = r % 2 ? 1 - q : q;
                double best = 1e30;
                for (int rep = 0; rep < 3; rep++) {
                    for (long i = 0; i < JUNK; i += 16)
                        junk[i] += 1.0f;
                    memset(st[v], 0, sizeof st[v]);
                    const double t0 = cpu_now();
                    for (int n0 = 0; n0 < N; n0 += group) {
                        const int nt = N - n0 < group ? N - n0 : group;
                        (v ? wino_forward : old_wino_forward)(y[v], x, l->xl, U, b, st[v], sc,
                                                              &s, C, OC, N, n0, nt, path);
                    }
                    const double dt = cpu_now() - t0;
                    best = dt < best ? dt : best;
                }
                t[v][r] = best;
            }
        report("fwd", l, t, rounds,
               !memcmp(y[0], y[1], (size_t)N * OC * HW * sizeof(float)) &&
                   !memcmp(st[0], st[1], 2 * (size_t)OC * sizeof(double)));
        for (int r = 0; r < rounds; r++)
            for (int q = 0; q < 2; q++) {
                const int v = r % 2 ? 1 - q : q;
                double best = 1e30;
                for (int rep = 0; rep < 3; rep++) {
                    for (long i = 0; i < JUNK; i += 16)
                        junk[i] += 1.0f;
                    const double t0 = cpu_now();
                    for (int k = 0, c0 = 0; c0 < N; k++, c0 += chunk) {
                        const int c1 = N - c0 < chunk ? N : c0 + chunk;
                        for (int n0 = c0; n0 < c1; n0 += group) {
                            const int nt = c1 - n0 < group ? c1 - n0 : group;
                            const float beta = n0 == c0 ? 0.0f : 1.0f;
                            (v ? wino_backward : old_wino_backward)(
                                dx[v], E, db[v] + k * OC, dy, x, l->xl, U, sc, &s, C, OC, N, n0,
                                nt, beta, path);
                        }
                        (v ? wino_filter_grad : old_wino_filter_grad)(dw[v] + k * 9 * P, E, C, 0,
                                                                      P);
                    }
                    const double dt = cpu_now() - t0;
                    best = dt < best ? dt : best;
                }
                t[v][r] = best;
            }
        report("bwd+dg", l, t, rounds,
               !memcmp(dx[0], dx[1], (size_t)N * C * HW * sizeof(float)) &&
                   !memcmp(dw[0], dw[1], (size_t)nc * 9 * P * sizeof(float)) &&
                   !memcmp(db[0], db[1], (size_t)nc * OC * sizeof(float)));
        float *all[] = {x, dy, U, b, sc, E, y[0], y[1], dx[0], dx[1], dw[0], dw[1], db[0], db[1]};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            free(all[i]);
    }
    free(junk);
    return 0;
}

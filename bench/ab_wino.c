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
 * and the BN sums; dx, db and dw) are the same bit for bit.  REV's
 * wino_scratch_floats, wino_forward, wino_backward and wino_filter_grad
 * must take the arguments this tree's take: they are called as these,
 * and nothing checks it (a missing one fails the link, a changed one
 * does not).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "cnntop/machine.h"
#include "nn/gemm.h"
#include "nn/layer_wino.h"

/* The old functions, of the new ones' types (ab_wino.sh renames them). */
extern __typeof__(wino_scratch_floats) old_wino_scratch_floats;
extern __typeof__(wino_forward) old_wino_forward;
extern __typeof__(wino_backward) old_wino_backward;
extern __typeof__(wino_filter_grad) old_wino_filter_grad;

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

/* One layer's buffers, shared by both variants but for the outputs. */
typedef struct Run {
    const Layer *l;
    WinoShape s;
    GemmPath path;
    int N, chunk, group;
    long P;
    float *x, *dy, *U, *b, *sc, *E, *y[2], *dx[2], *dw[2], *db[2];
    double st[2][2 * 128];
} Run;

/* The forward over the batch, group by group: the old code (v 0) or the new. */
static void pass_fwd(Run *u, int v)
{
    const Layer *l = u->l;

    memset(u->st[v], 0, sizeof u->st[v]);
    for (int n0 = 0; n0 < u->N; n0 += u->group) {
        const int nt = u->N - n0 < u->group ? u->N - n0 : u->group;
        (v ? wino_forward : old_wino_forward)(u->y[v], u->x, l->xl, u->U, u->b, u->st[v], u->sc,
                                              &u->s, l->C, l->OC, u->N, n0, nt, u->path);
    }
}

/* The backward chunk by chunk, its groups summed, then the chunk's dg. */
static void pass_bwd(Run *u, int v)
{
    const Layer *l = u->l;

    for (int k = 0, c0 = 0; c0 < u->N; k++, c0 += u->chunk) {
        const int c1 = u->N - c0 < u->chunk ? u->N : c0 + u->chunk;
        for (int n0 = c0; n0 < c1; n0 += u->group) {
            const int nt = c1 - n0 < u->group ? c1 - n0 : u->group;
            (v ? wino_backward : old_wino_backward)(u->dx[v], u->E, u->db[v] + k * l->OC, u->dy,
                                                    u->x, l->xl, u->U, u->sc, &u->s, l->C,
                                                    l->OC, u->N, n0, nt,
                                                    n0 == c0 ? 0.0f : 1.0f, u->path);
        }
        (v ? wino_filter_grad : old_wino_filter_grad)(u->dw[v] + k * 9 * u->P, u->E, l->C, 0,
                                                      u->P);
    }
}

/* t[v][r]: round r's best of 3 passes of variant v, the order swapped
 * every round, the caches filled with junk before each pass. */
static void alternate(Run *u, void (*pass)(Run *, int), float *junk, int rounds,
                      double t[2][MAX_ROUNDS])
{
    for (int r = 0; r < rounds; r++)
        for (int q = 0; q < 2; q++) {
            const int v = r % 2 ? 1 - q : q;
            double best = 1e30;
            for (int rep = 0; rep < 3; rep++) {
                for (long i = 0; i < JUNK; i += 16)
                    junk[i] += 1.0f;
                const double t0 = cpu_now();
                pass(u, v);
                const double dt = cpu_now() - t0;
                best = dt < best ? dt : best;
            }
            t[v][r] = best;
        }
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
        Run u = {.l = l, .path = path, .N = N, .P = (long)C * OC};
        u.chunk = N <= 16 * l->chunk ? l->chunk : (N + 15) / 16;
        u.group = l->group < u.chunk ? l->group : u.chunk;
        const long nc = (N + u.chunk - 1) / u.chunk;
        wino_shape_init(&u.s, l->H, l->H, u.group);
        const long sn = wino_scratch_floats(l->H, l->H, C, OC, u.group);
        const long so = old_wino_scratch_floats(l->H, l->H, C, OC, u.group);
        u.x = noise((long)N * C * HW);
        u.dy = noise((long)N * OC * HW);
        u.U = noise(WINO_P * u.P);
        u.b = noise(OC);
        u.sc = noise(sn > so ? sn : so);
        u.E = noise(WINO_P * u.P);
        for (int v = 0; v < 2; v++) {
            u.y[v] = noise((long)N * OC * HW);
            u.dx[v] = noise((long)N * C * HW);
            u.dw[v] = noise(nc * 9 * u.P);
            u.db[v] = noise(nc * OC);
        }
        double t[2][MAX_ROUNDS];
        alternate(&u, pass_fwd, junk, rounds, t);
        report("fwd", l, t, rounds,
               !memcmp(u.y[0], u.y[1], (size_t)N * OC * HW * sizeof(float)) &&
                   !memcmp(u.st[0], u.st[1], 2 * (size_t)OC * sizeof(double)));
        alternate(&u, pass_bwd, junk, rounds, t);
        report("bwd+dg", l, t, rounds,
               !memcmp(u.dx[0], u.dx[1], (size_t)N * C * HW * sizeof(float)) &&
                   !memcmp(u.dw[0], u.dw[1], (size_t)nc * 9 * u.P * sizeof(float)) &&
                   !memcmp(u.db[0], u.db[1], (size_t)nc * OC * sizeof(float)));
        float *all[] = {u.x,     u.dy,    u.U,     u.b,     u.sc,    u.E,     u.y[0],
                        u.y[1],  u.dx[0], u.dx[1], u.dw[0], u.dw[1], u.db[0], u.db[1]};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            free(all[i]);
    }
    free(junk);
    return 0;
}

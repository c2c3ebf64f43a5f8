/*
 * wino_rate.c: where the Winograd convolutions' time goes, GEMMs against
 * transforms, on each GEMM path (--gemm), measured in place: one thread,
 * the layer's real groups (layer_wino.c, as model.c cuts a batch), the
 * planes where the transforms leave them, thread CPU time (so that other
 * programs on a shared machine add little), the best of REPS passes.
 *
 * usage: wino_rate [BATCH [GROUP2 GROUP3]]   (default 64, and the model's
 * groups: 8 images for conv2, 32 for conv3).  For conv2 and conv3 and
 * each path this CPU has (openblas, native, and auto where it is
 * neither), two lines:
 *   conv2 native AVX-512  fwd 1.81 ms (gemm 0.78)  bwd 2.44 ms (dU 0.68 dV 0.62)
 *       transforms 1.03 / 1.14 ms  gemm at the peak 0.47 ms, in place 109/126/137 GFLOP/s
 *     products in place 67/73/80% of the peak, on one point's planes 73/88/93%
 * and for each layer the filter transforms' times: U = G g G^T (once a
 * step) and dg = E G (once a chunk; E = G^T dU is made in the backward,
 * a column of dU's points at a time: layer_wino.h).
 * fwd and bwd: the whole layer over the batch (transforms and GEMMs; the
 * backward without the BN/pool gradient that job_conv_bwd runs first);
 * gemm, dU, dV: the 81 products of one direction alone, over every group,
 * on the planes as the transforms left them; transforms: fwd less gemm,
 * bwd less dU and dV (the tile transforms, E's columns and the copies into
 * and out of the padded buffers).  On one point's planes: the same number of
 * products, each on point 0's planes, which then stay in the cache: the
 * kernel's own rate, so that the gap to "in place" is what the 81 planes'
 * traffic costs and the gap to 100% what the kernel does.
 * The peak: one thread's FMA rate, measured here first and again last
 * as `cnntop calibrate` measures it (peak_measure(), one thread), as a
 * shared machine's rate moves by 20-30% in minutes; or
 * CNNTOP_PEAK_GFLOPS, given.
 * Other group sizes show what a group's working set does: a group of one
 * image keeps its V and M in L2 (conv2: 41 and 83 KB).
 *
 * Last, the tile transforms of wino_transform.h alone, on one tile of 32
 * channels whose patch and planes (23 KB) stay in L1: the time of a call
 * (VL channels) and its FLOPs' rate against the peak, the bound of their
 * arithmetic with no memory traffic at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_cpu.h"
#include "calibrate/measure.h"
#include "cnntop/calibrate.h"
#include "cnntop/machine.h"
#include "nn/gemm.h"
#include "nn/layer_wino.h"
#include "nn/wino_transform.h"
#include "util/arena.h"

#define REPS 7

typedef struct Layer {
    const char *name;
    int C, OC, H, group; /* group: images per Winograd group at batch 64 */
    WinoLayout xl;       /* how the layer's input lies, as in the model */
} Layer;

typedef struct Bufs {
    WinoShape *t;
    float *x, *y, *dy, *dx, *U, *dU, *b, *db, *s;
    double stats[2 * 128]; /* the forward's BN sums, as in training (OC <= 128) */
    long T, pv, pm; /* tiles of a group, the plane strides of V and M (layer_wino.c) */
} Bufs;

/* Point xi's product of direction d (0 the forward's, 1 dU's, 2 dV's)
 * for one group, as layer_wino.c runs it (dU's into its column of
 * points, (OC, 9, C), over the zeros there on OpenBLAS's path). */
static void product(const Layer *l, Bufs *m, GemmPath p, int d, int xi)
{
    const int C = l->C, OC = l->OC, T = (int)m->T;
    float *V = m->s, *Mp = V + WINO_P * m->pv, *dV = V; /* as in wino_backward */

    if (d == 0)
        gemm_on(p, 0, 1, T, OC, C, 1.0f, V + xi * m->pv, C, m->U + (long)xi * OC * C, C, 0.0f,
                Mp + xi * m->pm, OC);
    else if (d == 1)
        gemm_on(p, 1, 0, OC, C, T, 1.0f, Mp + xi * m->pm, OC, V + xi * m->pv, C,
                p == GEMM_PATH_OPENBLAS ? 1.0f : 0.0f, m->dU + xi / WINO_A * C, WINO_A * C);
    else
        gemm_on(p, 0, 0, T, C, OC, 1.0f, Mp + xi * m->pm, OC, m->U + (long)xi * OC * C, C, 0.0f,
                dV + xi * m->pv, C);
}

/* The best times of REPS passes over the batch: fwd, bwd, then the
 * forward's, dU's and dV's products alone, then the same three on point
 * 0's planes every time (x = 0: the planes stay in the cache). */
static void time_layer(const Layer *l, Bufs *m, int N, GemmPath p, double best[8])
{
    const int C = l->C, OC = l->OC, g = l->group;

    for (int k = 0; k < 8; k++)
        best[k] = 1e30;
    for (int rep = 0; rep < REPS; rep++) {
        double t[3];
        t[0] = cpu_now();
        for (int n0 = 0; n0 + g <= N; n0 += g)
            wino_forward(m->y, m->x, l->xl, m->U, m->b, m->stats, m->s, m->t, C, OC, N, n0, g,
                         p);
        t[1] = cpu_now();
        for (int n0 = 0; n0 + g <= N; n0 += g)
            wino_backward(m->dx, m->dU, m->db, m->dy, m->x, l->xl, m->U, m->s, m->t, C, OC, N,
                          n0, g, n0 ? 1.0f : 0.0f, p);
        t[2] = cpu_now();
        for (int k = 0; k < 2; k++)
            if (t[k + 1] - t[k] < best[k])
                best[k] = t[k + 1] - t[k];
        for (int one = 0; one < 2; one++)
            for (int d = 0; d < 3; d++) {
                double t0 = cpu_now();
                for (int n0 = 0; n0 + g <= N; n0 += g)
                    for (int i = 0; i < WINO_P; i++)
                        product(l, m, p, d, one ? 0 : i);
                double dt = cpu_now() - t0;
                if (dt < best[2 + 3 * one + d])
                    best[2 + 3 * one + d] = dt;
            }
    }
}

static int bufs_make(Bufs *m, const Layer *l, int N)
{
    const long nx = (long)l->C * N * l->H * l->H, ny = (long)l->OC * N * l->H * l->H;
    const long P = (long)l->OC * l->C;

    m->t = malloc(sizeof *m->t);
    if (!m->t)
        return -1;
    wino_shape_init(m->t, l->H, l->H, l->group);
    m->T = (long)l->group * wino_tiles(l->H, l->H);
    /* As layer_wino.c's plane_stride(): a cache line more than the plane. */
    m->pv = l->C * m->T + 16;
    m->pm = l->OC * m->T + 16;
    m->x = noise(nx), m->dx = noise(nx), m->y = noise(ny), m->dy = noise(ny);
    m->U = noise(WINO_P * P), m->dU = noise(WINO_P * P);
    m->b = noise(l->OC), m->db = noise(l->OC);
    m->s = noise(wino_scratch_floats(l->H, l->H, l->C, l->OC, l->group));
    return m->x && m->dx && m->y && m->dy && m->U && m->dU && m->b && m->db && m->s ? 0 : -1;
}

static void bufs_free(Bufs *m)
{
    float *all[] = {m->x, m->dx, m->y, m->dy, m->U, m->dU, m->b, m->db, m->s};

    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        mem_free(all[i]);
    free(m->t);
}

/* The best time of REPS passes of CALLS calls of each tile transform, in
 * seconds a call: on one tile of TC channels, in L1 (see the top). */
enum { TC = 32, CALLS = 4000 };

static void time_tiles(double best[4])
{
    const long pl = TC + VL; /* planes a vector apart, as plane_stride() */
    float *patch = noise((long)A * A * TC), *planes = noise(WINO_P * pl);
    const float *src[M * M];
    vf s1 = {0}, s2 = {0}, sum = {0}, bv = {0};

    for (int k = 0; k < 4; k++)
        best[k] = 1e30;
    if (!patch || !planes) {
        mem_free(patch);
        mem_free(planes);
        return;
    }
    for (int p = 0; p < M * M; p++)
        src[p] = patch + (long)(p / M * A + p % M) * TC;
    for (int rep = 0; rep < REPS; rep++) {
        double t[5];
        t[0] = cpu_now();
        for (int i = 0; i < CALLS; i++) {
            tile_input(planes + i % (TC / VL) * VL, pl, patch + i % (TC / VL) * VL, A * TC, TC);
            __asm__ __volatile__("" ::: "memory");
        }
        t[1] = cpu_now();
        for (int i = 0; i < CALLS; i++) {
            tile_output_sums(patch + i % (TC / VL) * VL, A * TC, TC,
                             planes + i % (TC / VL) * VL, pl, bv, &s1, &s2);
            __asm__ __volatile__("" ::: "memory");
        }
        t[2] = cpu_now();
        for (int i = 0; i < CALLS; i++) {
            sum += tile_output_adj(planes + i % (TC / VL) * VL, pl, src, i % (TC / VL) * VL);
            __asm__ __volatile__("" ::: "memory"); /* each call is done in full */
        }
        t[3] = cpu_now();
        for (int i = 0; i < CALLS; i++) {
            tile_input_adj(patch + i % (TC / VL) * VL, A * TC, TC, 2, 2,
                           planes + i % (TC / VL) * VL, pl);
            __asm__ __volatile__("" ::: "memory");
        }
        t[4] = cpu_now();
        for (int k = 0; k < 4; k++)
            if ((t[k + 1] - t[k]) / CALLS < best[k])
                best[k] = (t[k + 1] - t[k]) / CALLS;
    }
    /* So that the sums are not thrown away. */
    volatile float sink = s1[0] + s2[0] + sum[0];
    (void)sink;
    mem_free(patch);
    mem_free(planes);
}

/* One thread's FMA rate now, GFLOP/s: calibrate's measurement of the
 * peak (peak.c: the best of short windows of the register-only loops),
 * on one thread (0: no loop runs on this CPU, or it failed). */
static double fma_rate(void)
{
    Calibration c = {0};
    char err[160];

    return peak_measure(&c, 1, 0.2, err, sizeof err) == 0 ? calibrate_peak(&c, NULL) : 0.0;
}

int main(int argc, char **argv)
{
    const int N = argc > 1 ? atoi(argv[1]) : 64;
    const char *pk = getenv("CNNTOP_PEAK_GFLOPS");
    const double first = pk ? 0.0 : fma_rate();
    const double peak = pk ? atof(pk) : first;
    /* Groups as model.c cuts the chunks at batch 64 (blocks 2 and 3:
     * chunks of 8 and 32 images) and 512 (32 and 32): conv2 8 images at
     * both (1 MiB groups), conv3 32 at both (one group a chunk). */
    Layer layers[] = {{"conv2", 32, 64, 14, 8, WINO_ROWS}, {"conv3", 64, 128, 7, 32, WINO_LAST}};
    const int choices[] = {CN_GEMM_OPENBLAS, CN_GEMM_NATIVE, CN_GEMM_AUTO};

    if (argc == 4) {
        layers[0].group = atoi(argv[2]);
        layers[1].group = atoi(argv[3]);
    }
    if (N < 1 || N > 4096 || (argc != 1 && argc != 2 && argc != 4)) {
        fprintf(stderr, "usage: wino_rate [BATCH [GROUP2 GROUP3]]: BATCH 1..4096, each GROUP "
                        "dividing it\n");
        return 1;
    }
    if (!(peak > 0)) {
        if (pk)
            fprintf(stderr, "wino_rate: CNNTOP_PEAK_GFLOPS=%s is not a rate in GFLOP/s\n", pk);
        else
            fprintf(stderr, "wino_rate: the FMA rate could not be measured on this CPU: give "
                            "it as CNNTOP_PEAK_GFLOPS\n");
        return 1;
    }
    for (int i = 0; i < 2; i++)
        if (layers[i].group < 1 || N % layers[i].group != 0) {
            fprintf(stderr, "wino_rate: %s's group of %d images does not divide the batch of "
                            "%d\n", layers[i].name, layers[i].group, N);
            return 1;
        }
    gemm_init();
    printf("batch %d, one thread, best of %d passes (CPU time); groups of %d and %d images\n", N,
           REPS, layers[0].group, layers[1].group);
    if (pk)
        printf("the peak: %.1f GFLOP/s a thread (CNNTOP_PEAK_GFLOPS)\n", peak);
    else
        printf("the peak: one thread's FMA rate, %.1f GFLOP/s (measured now)\n", peak);
    for (int i = 0; i < 2; i++) {
        const Layer *l = &layers[i];
        Bufs m = {0};
        if (bufs_make(&m, l, N) != 0) {
            fprintf(stderr, "wino_rate: out of memory\n");
            bufs_free(&m);
            return 1;
        }
        const double flop = 2.0 * WINO_P * l->OC * l->C * (double)m.T * (N / l->group);
        for (int c = 0; c < 3; c++) {
            GemmPath p = gemm_path_of(choices[c]);
            double b[8];
            if (c > 0 && (p == GEMM_PATH_OPENBLAS || (c == 2 && p == gemm_path_of(choices[1]))))
                continue; /* no native kernel on this CPU, or auto is native */
            time_layer(l, &m, N, p, b);
            printf("%s %-19s fwd %6.3f ms (gemm %.3f)  bwd %6.3f ms (dU %.3f dV %.3f)  "
                   "transforms %.3f / %.3f ms  gemm at the peak %.3f ms, in place "
                   "%.0f/%.0f/%.0f GFLOP/s\n",
                   l->name, gemm_path_name(p), 1e3 * b[0], 1e3 * b[2], 1e3 * b[1], 1e3 * b[3],
                   1e3 * b[4], 1e3 * (b[0] - b[2]), 1e3 * (b[1] - b[3] - b[4]),
                   1e3 * flop / (peak * 1e9), flop / b[2] * 1e-9, flop / b[3] * 1e-9,
                   flop / b[4] * 1e-9);
            printf("  products in place %.0f/%.0f/%.0f%% of the peak, on one point's planes "
                   "%.0f/%.0f/%.0f%%\n",
                   100.0 * flop / b[2] * 1e-9 / peak, 100.0 * flop / b[3] * 1e-9 / peak,
                   100.0 * flop / b[4] * 1e-9 / peak, 100.0 * flop / b[5] * 1e-9 / peak,
                   100.0 * flop / b[6] * 1e-9 / peak, 100.0 * flop / b[7] * 1e-9 / peak);
        }
        /* The filter transforms: U once a step, dg once a chunk. */
        const long P = (long)l->OC * l->C;
        float *w = noise(9 * P);
        double bf = 1e30, bg = 1e30;
        for (int rep = 0; w && rep < REPS; rep++) {
            double t0 = cpu_now();
            wino_filter(m.U, w, P, 0, P);
            double t1 = cpu_now();
            wino_filter_grad(w, m.dU, l->C, 0, P);
            double t2 = cpu_now();
            bf = t1 - t0 < bf ? t1 - t0 : bf;
            bg = t2 - t1 < bg ? t2 - t1 : bg;
        }
        if (w)
            printf("%s filters: U = G g G^T %.3f ms, dg = E G %.3f ms\n", l->name,
                   1e3 * bf, 1e3 * bg);
        mem_free(w);
        bufs_free(&m);
    }
    /* A tile transform's FLOPs a channel, as layer_wino.c counts them
     * (one 7 x 7 tile). */
    const double in = wino_transform_flops(M, M, 1, 0, 0, 0);
    const double out = wino_transform_flops(M, M, 0, 1, 0, 0);
    const double adj = wino_transform_flops(M, M, 0, 1, 1, 0);
    const double in_adj =
        wino_transform_flops(M, M, 1, 0, 1, 1) - wino_transform_flops(M, M, 1, 0, 1, 0);
    const double flops[4] = {in, out, adj, in_adj};
    const char *names[4] = {"tile_input (V = B^T d B)", "tile_output_sums (y = A^T m A)",
                            "tile_output_adj (DY = A dy A^T)", "tile_input_adj (dx = B dV B^T)"};
    double tb[4];
    time_tiles(tb);
    printf("tile transforms alone, in L1, %d channels a call:\n", VL);
    for (int k = 0; k < 4; k++)
        printf("  %-32s %6.1f ns a call, %5.0f FLOPs: %5.1f GFLOP/s, %4.1f%% of the peak\n",
               names[k], 1e9 * tb[k], VL * flops[k], VL * flops[k] / tb[k] * 1e-9,
               100.0 * VL * flops[k] / tb[k] * 1e-9 / peak);
    if (!pk)
        printf("one thread's FMA rate again, last: %.1f GFLOP/s\n", fma_rate());
    return 0;
}

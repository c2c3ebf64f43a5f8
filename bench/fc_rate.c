/*
 * fc_rate.c: the fully connected layers' products on each GEMM path this
 * CPU runs (openblas and native), one thread, thread CPU time (so that
 * other programs on a shared machine add little), the best of REPS passes.
 * gemm_path_dense() chooses between them by what this measures.
 *
 * usage: fc_rate [BATCH]   (default 64).  Run it as cnntop runs OpenBLAS:
 * with OPENBLAS_CORETYPE set to the kernel `cnntop calibrate` names where
 * OpenBLAS falls back to a narrower one.  One line per layer and path:
 *   fc1 1152->256  openblas        fwd 0.164 ms  dW 0.122 ms  dx 0.068 ms
 * fwd: out = x W^T + b; dW: the weights' and bias's gradient (beta 0);
 * dx: the input's gradient; each over the whole layer in one block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_cpu.h"
#include "nn/gemm.h"
#include "nn/gemm_native.h"
#include "nn/layer_fc.h"
#include "util/arena.h"

#define REPS 15

int main(int argc, char **argv)
{
    static const int shape[3][2] = {{1152, 256}, {256, 128}, {128, 10}};
    const int N = argc > 1 ? atoi(argv[1]) : 64;
    const GemmIsa isa = gemm_native_isa();
    GemmPath paths[2] = {GEMM_PATH_OPENBLAS,
                         isa == GEMM_ISA_AVX512 ? GEMM_PATH_AVX512 : GEMM_PATH_AVX2};
    const int npaths = isa == GEMM_ISA_NONE ? 1 : 2;

    if (N < 1 || N > 4096) {
        fprintf(stderr, "fc_rate: BATCH must be 1..4096\n");
        return 2;
    }
    char core[64], config[128];

    gemm_init(); /* one OpenBLAS thread, as in training */
    gemm_describe(core, sizeof core, config, sizeof config);
    printf("batch %d, one thread, best of %d passes (CPU time), OpenBLAS's %s kernels\n", N, REPS,
           core);
    for (int l = 0; l < 3; l++) {
        const int IN = shape[l][0], OUT = shape[l][1];
        float *x = noise((long)N * IN), *w = noise((long)OUT * IN), *b = noise(OUT);
        float *y = noise((long)N * OUT), *dy = noise((long)N * OUT);
        float *dw = noise((long)OUT * IN), *db = noise(OUT), *dx = noise((long)N * IN);
        if (!x || !w || !b || !y || !dy || !dw || !db || !dx) {
            fprintf(stderr, "fc_rate: out of memory\n");
            return 1;
        }
        for (int i = 0; i < npaths; i++) {
            double best[3] = {1e9, 1e9, 1e9};
            for (int r = 0; r < REPS; r++) {
                double t0 = cpu_now();
                fc_forward(y, x, w, b, N, IN, OUT, 0, OUT, paths[i]);
                double t1 = cpu_now();
                fc_backward_weights(dw, db, dy, x, N, IN, OUT, 0, OUT, 0.0f, paths[i]);
                double t2 = cpu_now();
                fc_backward_input(dx, dy, w, N, IN, OUT, 0, IN, paths[i]);
                double t3 = cpu_now(), t[3] = {t1 - t0, t2 - t1, t3 - t2};
                for (int k = 0; k < 3; k++)
                    best[k] = t[k] < best[k] ? t[k] : best[k];
            }
            printf("fc%d %4d->%-4d %-15s fwd %.3f ms  dW %.3f ms  dx %.3f ms\n", l + 1, IN, OUT,
                   gemm_path_name(paths[i]), 1e3 * best[0], 1e3 * best[1], 1e3 * best[2]);
        }
        mem_free(x), mem_free(w), mem_free(b), mem_free(y), mem_free(dy), mem_free(dw);
        mem_free(db), mem_free(dx);
    }
    return 0;
}

/*
 * sgemm_rate.c: the SGEMM rate of this machine's OpenBLAS, all threads, in
 * the environment as it is (OPENBLAS_CORETYPE included): the "paper" peak
 * that cnntop's achieved GFLOP/s is measured against.
 *
 * usage: sgemm_rate [N] [seconds]   (default 2048, 2 s).  Prints
 * "sgemm_gflops=X core=NAME threads=T".
 */
#include <stdio.h>
#include <stdlib.h>

#include "util/arena.h"
#include "nn/gemm.h"
#include "prof/sysinfo.h"
#include "prof/profile.h"

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2048;
    double budget = argc > 2 ? atof(argv[2]) : 2.0;
    int threads = sysinfo_cores();
    float *a = mem_alloc((size_t)n * n * sizeof(float));
    float *b = mem_alloc((size_t)n * n * sizeof(float));
    float *c = mem_alloc((size_t)n * n * sizeof(float));
    char core[64], config[128];

    if (n < 64 || !a || !b || !c) {
        fprintf(stderr, "sgemm_rate: bad size or out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < (size_t)n * n; i++) {
        a[i] = (float)(i % 7) * 0.1f;
        b[i] = (float)(i % 5) * 0.1f;
    }
    gemm_set_threads(threads);
    gemm(0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n); /* warm-up */
    double best = 0.0, t_end = timer_now() + budget;
    while (timer_now() < t_end) {
        double t0 = timer_now();
        gemm(0, 0, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double g = 2.0 * n * (double)n * n / (timer_now() - t0) * 1e-9;
        best = g > best ? g : best;
    }
    gemm_describe(core, sizeof core, config, sizeof config);
    printf("sgemm_gflops=%.1f core=%s threads=%d\n", best, core, threads);
    mem_free(a);
    mem_free(b);
    mem_free(c);
    return 0;
}

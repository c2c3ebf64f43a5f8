/*
 * gemm.c: OpenBLAS behind a row-major SGEMM (gemm.h); the choice of path
 * between it and cnntop's own kernels is gemm_path.c.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/err.h"
#include "cnntop/machine.h"
#include "nn/gemm.h"

int gemm_init(void)
{
    int had = openblas_get_num_threads();

    openblas_set_num_threads(1);
    return had;
}

void gemm_set_threads(int n)
{
    openblas_set_num_threads(n < 1 ? 1 : n);
}

int gemm_warm(void)
{
    const size_t n = (size_t)GEMM_WARM_N * GEMM_WARM_N;
    float *m = calloc(3 * n, sizeof *m);

    if (!m)
        return -CN_ENOMEM;
    gemm(0, 0, GEMM_WARM_N, GEMM_WARM_N, GEMM_WARM_N, 1.0f, m, GEMM_WARM_N, m + n, GEMM_WARM_N,
         0.0f, m + 2 * n, GEMM_WARM_N);
    free(m);
    return 0;
}

void gemm(int ta, int tb, int M, int N, int K, float alpha,
          const float *A, int lda, const float *B, int ldb,
          float beta, float *C, int ldc)
{
    /* beta 0: C zeroed here and the product added to it.  OpenBLAS zeroes
     * C itself first (sgemm_beta), by a loop that on its Zen kernels took
     * 10% of a step at batch 64 (perf, session 22) for the 81 products of
     * each Winograd group; memset is the same zeroes at the store rate:
     * the step 1.05-1.07x as fast, the same results. */
    if (beta == 0.0f && M > 0 && N > 0) {
        if (ldc == N)
            memset(C, 0, (size_t)M * N * sizeof *C);
        else
            for (int i = 0; i < M; i++)
                memset(C + (size_t)i * ldc, 0, (size_t)N * sizeof *C);
        beta = 1.0f;
    }
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B,
                ldb, beta, C, ldc);
}

void gemm_describe(char *core, size_t corelen, char *config, size_t configlen)
{
    snprintf(core, corelen, "%s", openblas_get_corename());
    snprintf(config, configlen, "%s", openblas_get_config());
    /* OpenBLAS's config string ends with a space; trim it. */
    size_t n = strlen(config);
    while (n && config[n - 1] == ' ')
        config[--n] = '\0';
}

void gemm_runtime(char *version, size_t vlen, char *threading, size_t tlen)
{
    /* The build string starts "OpenBLAS 0.3.21 DYNAMIC_ARCH ...". */
    const char *cfg = openblas_get_config();
    const char *v = cfg ? strstr(cfg, "OpenBLAS ") : NULL;
    int p = openblas_get_parallel();

    if (v)
        snprintf(version, vlen, "%.*s", (int)strcspn(v + 9, " "), v + 9);
    else
        snprintf(version, vlen, "unknown");
    snprintf(threading, tlen, "%s",
             p == 1 ? "pthreads" : p == 2 ? "OpenMP" : p == 0 ? "sequential" : "unknown");
}

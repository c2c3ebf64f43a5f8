/*
 * gemm_path.c: the choice of GEMM path (gemm.h) between OpenBLAS
 * (gemm.c) and cnntop's own kernels (gemm_native.h), by the CPU's vector
 * sets (cpuid).  It sits above both, so that blaskernel.c may check
 * OpenBLAS through gemm() without a circle of calls.
 */
#include "cnntop/machine.h"
#include "nn/gemm.h"
#include "nn/gemm_native.h"

GemmPath gemm_path_of(int choice)
{
    GemmIsa isa = choice == CN_GEMM_OPENBLAS ? GEMM_ISA_NONE : gemm_native_isa();

    /* auto: the native kernel wherever the CPU has one.  On an AVX2 CPU it
     * is as wide as any OpenBLAS kernel there and has no packing copies or
     * zeroing (1.2-1.4x OpenBLAS's rate at the Winograd shapes on a Zen 3,
     * the step 1.19x: bench/RESULTS.md, session 23); on an AVX-512 CPU it
     * ran the backward's products faster than OpenBLAS's Cooperlake kernel
     * too (conv2 and conv3 bwd 1.04-1.19x, session 27), and the forward's
     * 1.4-1.7x (session 14). */
    return isa == GEMM_ISA_AVX512 ? GEMM_PATH_AVX512
           : isa == GEMM_ISA_AVX2 ? GEMM_PATH_AVX2
                                  : GEMM_PATH_OPENBLAS;
}

GemmPath gemm_path_dense(GemmPath p)
{
    return p == GEMM_PATH_AVX512 ? p : GEMM_PATH_OPENBLAS;
}

const char *gemm_path_name(GemmPath p)
{
    return p == GEMM_PATH_AVX512 ? "native AVX-512"
           : p == GEMM_PATH_AVX2 ? "native AVX2"
                                 : "openblas";
}

void gemm_on(GemmPath p, int ta, int tb, int M, int N, int K, float alpha,
             const float *A, int lda, const float *B, int ldb,
             float beta, float *C, int ldc)
{
    if (p == GEMM_PATH_OPENBLAS || alpha != 1.0f || (ta && tb))
        gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        gemm_native(p == GEMM_PATH_AVX512 ? GEMM_ISA_AVX512 : GEMM_ISA_AVX2, ta, tb, M, N, K,
                    A, lda, B, ldb, beta, C, ldc);
}

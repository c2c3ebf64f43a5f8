/*
 * gemm_path.c: the choice of GEMM path (gemm.h) between OpenBLAS
 * (gemm.c) and cnntop's own kernels (gemm_native.h), by the vector width
 * of OpenBLAS's running kernel (blaskernel.h) against the CPU's.  It sits
 * above both, so that blaskernel.c may check OpenBLAS through gemm()
 * without a circle of calls.
 */
#include <cblas.h>

#include "cnntop/machine.h"
#include "nn/blaskernel.h"
#include "nn/gemm.h"
#include "nn/gemm_native.h"

/* Whether the native kernel for isa runs wider vectors than OpenBLAS's
 * running kernel (a name the kernel table does not know: no). */
static int native_wider(GemmIsa isa)
{
    IsaClass blas = blaskernel_core_class(openblas_get_corename());
    IsaClass own = isa == GEMM_ISA_AVX512 ? ISA_AVX512 : isa == GEMM_ISA_AVX2 ? ISA_AVX2 : ISA_NONE;

    return blas != ISA_UNKNOWN && own > blas;
}

GemmPath gemm_path_of(int choice)
{
    GemmIsa isa = choice == CN_GEMM_OPENBLAS ? GEMM_ISA_NONE : gemm_native_isa();

    /* auto on an AVX2 CPU: the native kernel, as wide as any OpenBLAS
     * kernel there and without its packing copies and zeroing (1.2-1.4x
     * OpenBLAS's rate at the Winograd shapes on a Zen 3, the step 1.19x:
     * bench/RESULTS.md, session 23). */
    if (choice == CN_GEMM_AUTO && isa == GEMM_ISA_AVX512 && !native_wider(isa))
        return GEMM_PATH_SPLIT512;
    return isa == GEMM_ISA_AVX512 ? GEMM_PATH_AVX512
           : isa == GEMM_ISA_AVX2 ? GEMM_PATH_AVX2
                                  : GEMM_PATH_OPENBLAS;
}

const char *gemm_path_name(GemmPath p)
{
    return p == GEMM_PATH_AVX512     ? "native AVX-512"
           : p == GEMM_PATH_AVX2     ? "native AVX2"
           : p == GEMM_PATH_SPLIT512 ? "openblas, forward native"
                                     : "openblas";
}

void gemm_on(GemmPath p, int ta, int tb, int M, int N, int K, float alpha,
             const float *A, int lda, const float *B, int ldb,
             float beta, float *C, int ldc)
{
    if (p == GEMM_PATH_SPLIT512)
        p = !ta && tb ? GEMM_PATH_AVX512 : GEMM_PATH_OPENBLAS;
    if (p == GEMM_PATH_OPENBLAS || alpha != 1.0f || (ta && tb))
        gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        gemm_native(p == GEMM_PATH_AVX512 ? GEMM_ISA_AVX512 : GEMM_ISA_AVX2, ta, tb, M, N, K,
                    A, lda, B, ldb, beta, C, ldc);
}

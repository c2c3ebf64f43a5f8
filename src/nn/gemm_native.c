/*
 * gemm_native.c: which of cnntop's own SGEMM kernels this CPU runs
 * (gemm_native.h), by cpuid feature bits, never by model.  The kernels are
 * built on x86-64 only (src/CMakeLists.txt defines CNNTOP_GEMM_X86 there);
 * elsewhere no set is available and the Winograd stage runs OpenBLAS.
 */
#include <assert.h>

#include "nn/gemm_native.h"

GemmIsa gemm_native_isa(void)
{
#if defined(CNNTOP_GEMM_X86) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("avx512f"))
        return GEMM_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return GEMM_ISA_AVX2;
#endif
    return GEMM_ISA_NONE;
}

const char *gemm_native_isa_name(GemmIsa isa)
{
    return isa == GEMM_ISA_AVX512 ? "AVX-512" : isa == GEMM_ISA_AVX2 ? "AVX2" : "none";
}

void gemm_native(GemmIsa isa, int ta, int tb, int M, int N, int K, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc)
{
    assert(!(ta && tb) && isa != GEMM_ISA_NONE && isa <= gemm_native_isa());
#ifdef CNNTOP_GEMM_X86
    if (isa == GEMM_ISA_AVX512)
        gemm_native_avx512(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
    else
        gemm_native_avx2(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
#else
    (void)isa, (void)ta, (void)tb, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B;
    (void)ldb, (void)beta, (void)C, (void)ldc;
#endif
}

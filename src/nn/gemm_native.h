/*
 * gemm_native.h: cnntop's own SGEMM kernels for the Winograd stage's small
 * products (layer_wino.c: M, N, K of 32 to 128, N the tiles of a group,
 * often not a multiple of the vector width), beside OpenBLAS (gemm.h).
 *
 * Row-major C (M, N) = op(A) (M, K) * op(B) (K, N) + beta * C, alpha 1,
 * any beta (0: C is not read), for the products the Winograd stage runs:
 * A B, A^T B and A B^T (not A^T B^T).  No allocation; op(B) = B^T uses
 * 64 KiB of stack.  One kernel per instruction set, each in its own file
 * compiled for that set (gemm_native_kern.h); gemm_native_isa() says,
 * from cpuid, which ones this CPU can run.  The sums run in k order,
 * whatever the threads: a product's result depends only on its operands
 * and the instruction set.
 */
#ifndef CNNTOP_GEMM_NATIVE_H
#define CNNTOP_GEMM_NATIVE_H

/* The instruction sets of the kernels, narrowest first. */
typedef enum GemmIsa {
    GEMM_ISA_NONE,   /* no kernel: this CPU (or build) has neither set */
    GEMM_ISA_AVX2,   /* AVX2 and FMA, 8 floats a vector */
    GEMM_ISA_AVX512  /* AVX-512F, 16 floats a vector */
} GemmIsa;

/* The widest set this build and this CPU (cpuid) can run. */
GemmIsa gemm_native_isa(void);

/* "AVX-512", "AVX2" or "none". */
const char *gemm_native_isa_name(GemmIsa isa);

/* C = op(A) op(B) + beta C on the kernel for isa (AVX2 or AVX512, at most
 * gemm_native_isa()); ta and tb not both 1.  lda, ldb, ldc: row strides
 * as stored. */
void gemm_native(GemmIsa isa, int ta, int tb, int M, int N, int K, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);

/* The kernels themselves (gemm_native_avx512.c, gemm_native_avx2.c), as
 * gemm_native() takes them; call only on a CPU that has the set. */
void gemm_native_avx512(int ta, int tb, int M, int N, int K, const float *A, int lda,
                        const float *B, int ldb, float beta, float *C, int ldc);
void gemm_native_avx2(int ta, int tb, int M, int N, int K, const float *A, int lda,
                      const float *B, int ldb, float beta, float *C, int ldc);

#endif

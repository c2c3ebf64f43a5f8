/*
 * gemm.h: the one door to OpenBLAS.
 *
 * Row-major single-precision GEMM, C = alpha * op(A) * op(B) + beta * C,
 * with op(X) = X or X^T.  cnntop's own threads split the work, so OpenBLAS
 * is told to use one thread per call (no oversubscription: one owner of the
 * cores).  No other file calls cblas_* or openblas_*.
 *
 * The Winograd stage's products may run instead on cnntop's own kernels
 * (gemm_native.h): gemm_on() takes the path, gemm_path_of() turns the
 * user's choice (cnntop/machine.h's CN_GEMM_*) into one.
 */
#ifndef CNNTOP_GEMM_H
#define CNNTOP_GEMM_H

#include <stddef.h>

/* Pins OpenBLAS to one thread per call; returns the threads it had. */
int gemm_init(void);

/*
 * One OpenBLAS product of GEMM_WARM_N cubed on zeros (3 MiB of matrices,
 * allocated and freed here), which packs into OpenBLAS's buffer as far as
 * any product of a step does: a step packs about 320 KiB there (80 pages
 * faulted at a buffer's first use).  OpenBLAS keeps a buffer for each
 * call in flight, taken from its table at call time, so model_warm runs
 * this on every compute thread at once.  Returns 0 or -CN_ENOMEM.
 */
#define GEMM_WARM_N 512
int gemm_warm(void);

/* C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C.  ta/tb: 0 or 1
 * (transposed).  lda, ldb, ldc are the row strides of A, B, C as stored. */
void gemm(int ta, int tb, int M, int N, int K, float alpha,
          const float *A, int lda, const float *B, int ldb,
          float beta, float *C, int ldc);

/* Where a product runs. */
typedef enum GemmPath {
    GEMM_PATH_OPENBLAS,   /* cblas_sgemm */
    GEMM_PATH_SPLIT512,   /* A B^T (the Winograd forward, M = V U^T) on gemm_native(AVX512),
                             every other product on cblas_sgemm */
    GEMM_PATH_AVX2,       /* gemm_native(GEMM_ISA_AVX2, ..) */
    GEMM_PATH_AVX512      /* gemm_native(GEMM_ISA_AVX512, ..) */
} GemmPath;

/* The path for a CN_GEMM_* choice on this CPU: OPENBLAS for openblas;
 * the widest native kernel (cpuid) for native, OPENBLAS where there is
 * none; for auto, the fastest measured (bench/RESULTS.md, sessions 11,
 * 12, 14 and 23): the native kernel where its vectors are wider than
 * OpenBLAS's running kernel's (OpenBLAS's AVX2 and SSE kernels run the
 * Winograd products 1.2-4x slower than it on an AVX-512 CPU) and on a CPU
 * whose widest set is AVX2 (1.2-1.4x OpenBLAS's Zen kernel at these
 * shapes); where both run AVX-512, SPLIT512 (OpenBLAS runs A B and A^T B
 * as fast as the native kernel or faster, A B^T as fast on a Zen 4 and
 * 1.25-1.7x slower on a Xeon); else OpenBLAS.  It depends on the choice,
 * cpuid and OpenBLAS's kernel only, never on timing. */
GemmPath gemm_path_of(int choice);

/* "openblas", "openblas, forward native" (SPLIT512), "native AVX-512" or
 * "native AVX2". */
const char *gemm_path_name(GemmPath p);

/* gemm() on path p; the native kernels take alpha 1 and not both
 * transposed, OpenBLAS runs anything else (and, on SPLIT512, all but
 * A B^T). */
void gemm_on(GemmPath p, int ta, int tb, int M, int N, int K, float alpha,
             const float *A, int lda, const float *B, int ldb,
             float beta, float *C, int ldc);

/* OpenBLAS's kernel name ("Haswell", "SkylakeX", ...) and build string. */
void gemm_describe(char *core, size_t corelen, char *config, size_t configlen);

/* OpenBLAS's version ("0.3.21", or "unknown") and threading model
 * ("pthreads", "OpenMP" or "sequential"), for the machine description. */
void gemm_runtime(char *version, size_t vlen, char *threading, size_t tlen);

/* Sets how many threads one gemm() call may use (the calibration uses all
 * cores in one call; training keeps 1). */
void gemm_set_threads(int n);

#endif

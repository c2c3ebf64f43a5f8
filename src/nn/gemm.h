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
    GEMM_PATH_OPENBLAS, /* cblas_sgemm */
    GEMM_PATH_AVX2,     /* gemm_native(GEMM_ISA_AVX2, ..) */
    GEMM_PATH_AVX512    /* gemm_native(GEMM_ISA_AVX512, ..) */
} GemmPath;

/* The path for a CN_GEMM_* choice on this CPU: OPENBLAS for openblas;
 * for native and auto, the widest native kernel the CPU has (cpuid), and
 * OPENBLAS where it has none.  auto is the fastest measured (bench/
 * RESULTS.md, sessions 14, 23 and 27): the native kernels ran the
 * Winograd products faster than OpenBLAS's kernel of the same width on a
 * Zen 3 (AVX2, 1.2-1.4x) and on a Xeon (AVX-512: the forward's 1.4-1.7x,
 * the backward's 1.04-1.19x), and faster still than a narrower one.  It
 * depends on the choice and cpuid only, never on timing. */
GemmPath gemm_path_of(int choice);

/* The path of the fully connected layers' products where the Winograd
 * convolutions' run on p: p on AVX-512, else OpenBLAS.  On a Xeon the
 * native AVX-512 kernel ran fc1's three products 1.2-1.35x as fast as
 * OpenBLAS's Cooperlake kernel at batch 64 and within 5% either way at
 * 512, fc2's 1.1-1.4x at both (bench/fc_rate, session 27); on a Zen 3
 * the native AVX2 kernel ran fc1's weight gradient slower than OpenBLAS
 * at batch 512 (session 23), so AVX2 keeps OpenBLAS until fc_rate says
 * otherwise there. */
GemmPath gemm_path_dense(GemmPath p);

/* "openblas", "native AVX-512" or "native AVX2". */
const char *gemm_path_name(GemmPath p);

/* gemm() on path p; the native kernels take alpha 1 and not both
 * transposed, OpenBLAS runs anything else. */
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

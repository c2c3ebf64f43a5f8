/*
 * gemm.h: the one door to OpenBLAS.
 *
 * Row-major single-precision GEMM, C = alpha * op(A) * op(B) + beta * C,
 * with op(X) = X or X^T.  cnntop's own threads split the work, so OpenBLAS
 * is told to use one thread per call (no oversubscription: one owner of the
 * cores).  No other file calls cblas_* or openblas_*.
 */
#ifndef CNNTOP_GEMM_H
#define CNNTOP_GEMM_H

#include <stddef.h>

/* Pins OpenBLAS to one thread per call; returns the threads it had. */
int gemm_init(void);

/* C (M, N) = alpha * op(A) (M, K) * op(B) (K, N) + beta * C.  ta/tb: 0 or 1
 * (transposed).  lda, ldb, ldc are the row strides of A, B, C as stored. */
void gemm(int ta, int tb, int M, int N, int K, float alpha,
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

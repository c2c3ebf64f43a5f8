/*
 * gemm_split.c: an LD_PRELOAD shim for bench/parts.sh, standing in for
 * OpenBLAS's cblas_sgemm in front of cnntop.
 *
 *   GEMM_SPLIT=time  time every call (CLOCK_MONOTONIC) and pass it on;
 *   GEMM_SPLIT=skip  return at once: the rest of the step alone, for
 *                    timing only (the training it does is wrong).
 *
 * At exit it prints one line to stderr:
 *   gemm_split: mode=time calls=N ns=T flop=F
 * with T the calls' time summed over all threads (CPU time in SGEMM, not
 * wall time) and F = 2*M*N*K summed.  Without GEMM_SPLIT it only passes
 * calls on and prints nothing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_NEXT */
#endif
#include <cblas.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*SgemmFn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint,
                        blasint, blasint, float, const float *, blasint, const float *,
                        blasint, float, float *, blasint);

enum { MODE_PASS, MODE_TIME, MODE_SKIP };

static int mode = MODE_PASS;
static SgemmFn next_sgemm;
static atomic_long n_calls, n_ns, n_flop;

__attribute__((constructor)) static void split_init(void)
{
    const char *m = getenv("GEMM_SPLIT");
    void *f = dlsym(RTLD_NEXT, "cblas_sgemm");

    mode = !m ? MODE_PASS : !strcmp(m, "time") ? MODE_TIME : !strcmp(m, "skip") ? MODE_SKIP : -1;
    if (mode < 0) {
        fprintf(stderr, "gemm_split: GEMM_SPLIT must be time or skip, not '%s'\n", m);
        _Exit(2);
    }
    /* NULL in a program without OpenBLAS, which never calls cblas_sgemm. */
    memcpy(&next_sgemm, &f, sizeof next_sgemm); /* object to function pointer */
}

/* Only a program that made calls reports: a preloaded shell stays quiet. */
__attribute__((destructor)) static void split_report(void)
{
    if (mode == MODE_PASS || atomic_load(&n_calls) == 0)
        return;
    fprintf(stderr, "gemm_split: mode=%s calls=%ld ns=%ld flop=%ld\n",
            mode == MODE_TIME ? "time" : "skip", atomic_load(&n_calls), atomic_load(&n_ns),
            atomic_load(&n_flop));
}

static long now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

void cblas_sgemm(OPENBLAS_CONST enum CBLAS_ORDER Order,
                 OPENBLAS_CONST enum CBLAS_TRANSPOSE TransA,
                 OPENBLAS_CONST enum CBLAS_TRANSPOSE TransB, OPENBLAS_CONST blasint M,
                 OPENBLAS_CONST blasint N, OPENBLAS_CONST blasint K, OPENBLAS_CONST float alpha,
                 OPENBLAS_CONST float *A, OPENBLAS_CONST blasint lda, OPENBLAS_CONST float *B,
                 OPENBLAS_CONST blasint ldb, OPENBLAS_CONST float beta, float *C,
                 OPENBLAS_CONST blasint ldc)
{
    long t0 = 0;

    if (!next_sgemm) {
        fprintf(stderr, "gemm_split: no cblas_sgemm after this library\n");
        _Exit(2);
    }
    if (mode == MODE_PASS) {
        next_sgemm(Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    atomic_fetch_add(&n_calls, 1);
    atomic_fetch_add(&n_flop, 2L * M * N * K);
    if (mode == MODE_SKIP)
        return;
    t0 = now_ns();
    next_sgemm(Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    atomic_fetch_add(&n_ns, now_ns() - t0);
}

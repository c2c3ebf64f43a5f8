/*
 * test_gemm_native.c: cnntop's own SGEMM kernels (nn/gemm_native.h), each
 * one this CPU has, against OpenBLAS's gemm() and a double-precision loop:
 * the Winograd stage's three products at the model's shapes (the tiles of
 * a group at batch 64 and 512, and other group sizes), and edge sizes: a
 * row count that is not a multiple of the register block, a column count
 * that is not a multiple of the vector width (1, 15, 17, 33, ...), more
 * columns than the B^T buffer holds, K of 0 and K over the B^T block,
 * leading dimensions above the minimum, beta 0 (over NaN: C must not be
 * read), 1 and 0.5, and C's padding columns left untouched.
 *
 * Error measure: |got - want| against the sum of |terms| (and |beta C|)
 * of the element: float rounding of K multiply-adds stays below K ulps
 * of it; 1e-5 allows K up to ~150 at full cancellation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nn/gemm.h"
#include "nn/gemm_native.h"
#include "nntest.h"

#define TOL 1e-5
#define PAD 3          /* extra floats per row of A, B and C */
#define SENTINEL 1234.5f

typedef struct Prod {
    int ta, tb, M, N, K;
    float beta;
} Prod;

/* op(X)(i, k) for X stored with rows ld apart. */
static float at(const float *X, int t, int ld, int i, int k)
{
    return t ? X[(size_t)k * ld + i] : X[(size_t)i * ld + k];
}

/* The worst error of C against the double product over C0 (C's start). */
static double worst_error(const Prod *p, const float *A, int lda, const float *B, int ldb,
                          const float *C0, const float *C, int ldc)
{
    double worst = 0.0;

    for (int i = 0; i < p->M; i++)
        for (int j = 0; j < p->N; j++) {
            double s = 0.0, mag = 0.0;
            for (int k = 0; k < p->K; k++) {
                double t = (double)at(A, p->ta, lda, i, k) * at(B, p->tb, ldb, k, j);
                s += t;
                mag += fabs(t);
            }
            if (p->beta != 0.0f) {
                s += (double)p->beta * C0[(size_t)i * ldc + j];
                mag += fabs((double)p->beta * C0[(size_t)i * ldc + j]);
            }
            double e = fabs(C[(size_t)i * ldc + j] - s) / (mag > 1e-30 ? mag : 1e-30);
            worst = e > worst || isnan(e) ? e : worst;
        }
    return worst;
}

/* Columns N..ldc of C's rows, which no product may write. */
static int padding_kept(const float *C, int M, int N, int ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = N; j < ldc; j++)
            if (C[(size_t)i * ldc + j] != SENTINEL)
                return 0;
    return 1;
}

/* C0: C's values before the product; beta 0 puts NaN there. */
static void fill_c(float *C, const Prod *p, int ldc)
{
    for (int i = 0; i < p->M; i++)
        for (int j = 0; j < ldc; j++)
            C[(size_t)i * ldc + j] =
                j >= p->N ? SENTINEL : p->beta == 0.0f ? NAN : urand(-1.0f, 1.0f);
}

static void test_prod(GemmIsa isa, Prod p)
{
    const int lda = (p.ta ? p.M : p.K) + PAD, ldb = (p.tb ? p.K : p.N) + PAD, ldc = p.N + PAD;
    const size_t na = (size_t)(p.ta ? p.K : p.M) * lda, nb = (size_t)(p.tb ? p.N : p.K) * ldb;
    const size_t nc = (size_t)p.M * ldc;
    float *A = fvec(na + 1), *B = fvec(nb + 1), *C0 = fvec(nc + 1), *C = fvec(nc + 1);
    float *Cb = fvec(nc + 1);

    fill(A, na, -1.0f, 1.0f);
    fill(B, nb, -1.0f, 1.0f);
    fill_c(C0, &p, ldc);
    memcpy(C, C0, nc * sizeof *C);
    memcpy(Cb, C0, nc * sizeof *C);
    gemm_native(isa, p.ta, p.tb, p.M, p.N, p.K, A, lda, B, ldb, p.beta, C, ldc);
    gemm(p.ta, p.tb, p.M, p.N, p.K, 1.0f, A, lda, B, ldb, p.beta, Cb, ldc);

    double e = worst_error(&p, A, lda, B, ldb, C0, C, ldc);
    double eb = worst_error(&p, A, lda, B, ldb, C0, Cb, ldc);
    double d = 0.0; /* native against OpenBLAS, in the same measure */
    for (int i = 0; i < p.M; i++)
        for (int j = 0; j < p.N; j++) {
            double x = fabs(C[(size_t)i * ldc + j] - Cb[(size_t)i * ldc + j]);
            d = x > d || isnan(x) ? x : d;
        }
    if (!(e <= TOL) || !(eb <= TOL) || !(d <= 1e-3) || !padding_kept(C, p.M, p.N, ldc))
        fprintf(stderr, "%s %s%s M%d N%d K%d beta %g: error %.3g (OpenBLAS %.3g), "
                "|native - OpenBLAS| %.3g\n", gemm_native_isa_name(isa), p.ta ? "A^T" : "A",
                p.tb ? "B^T" : "B", p.M, p.N, p.K, (double)p.beta, e, eb, d);
    CHECK(e <= TOL);
    CHECK(eb <= TOL);
    CHECK(d <= 1e-3);
    CHECK(padding_kept(C, p.M, p.N, ldc));
    free(A); free(B); free(C0); free(C); free(Cb);
}

/* The Winograd stage's products for C -> OC channels over T tiles
 * (layer_wino.c): forward M = U V, dU = beta dU + DY V^T, dV = U^T DY. */
static void test_wino_shapes(GemmIsa isa, int C, int OC, int T)
{
    test_prod(isa, (Prod){0, 0, OC, T, C, 0.0f});
    test_prod(isa, (Prod){0, 1, OC, C, T, 0.0f});
    test_prod(isa, (Prod){0, 1, OC, C, T, 1.0f});
    test_prod(isa, (Prod){1, 0, C, T, OC, 0.0f});
}

static void test_isa(GemmIsa isa)
{
    /* conv2 (32 -> 64, 16 tiles an image) and conv3 (64 -> 128, 4 tiles)
     * in groups of 1 to 16 images (batch 64: 8 and 8; batch 512: 8 and
     * 16), and the largest groups the tables allow. */
    static const int conv2_t[] = {16, 48, 64, 96, 112, 128};
    static const int conv3_t[] = {4, 28, 32, 40, 44, 56, 64, 72};

    for (size_t i = 0; i < sizeof conv2_t / sizeof *conv2_t; i++)
        test_wino_shapes(isa, 32, 64, conv2_t[i]);
    for (size_t i = 0; i < sizeof conv3_t / sizeof *conv3_t; i++)
        test_wino_shapes(isa, 64, 128, conv3_t[i]);

    /* Edges: every row remainder of the register blocks (1..9), columns
     * around the vector widths and strips, over the B^T buffer (300 > 128
     * columns), K 0, 1 and across the B^T blocks (150 > 128), beta 0.5. */
    static const int ns[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 47, 49, 63, 65, 80, 300};
    for (int m = 1; m <= 9; m++)
        for (int t = 0; t < 3; t++)
            test_prod(isa, (Prod){t == 1, t == 2, m, 17, 5, 0.0f});
    /* Rows cut into blocks of near-equal size (1 to 40 rows: blocks of
     * every size up to the largest), over strips of whole vectors (the
     * unmasked loads and stores) and with a masked last vector. */
    static const int whole[] = {8, 16, 24, 32, 64, 12};
    for (int m = 1; m <= 40; m++)
        for (size_t i = 0; i < sizeof whole / sizeof *whole; i++)
            for (int t = 0; t < 3; t++)
                test_prod(isa, (Prod){t == 1, t == 2, m, whole[i], 9, m % 2 ? 0.0f : 0.5f});
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
        for (int t = 0; t < 3; t++) {
            test_prod(isa, (Prod){t == 1, t == 2, 10, ns[i], 7, 1.0f});
            test_prod(isa, (Prod){t == 1, t == 2, 5, ns[i], 150, 0.0f});
        }
    for (int t = 0; t < 3; t++) {
        test_prod(isa, (Prod){t == 1, t == 2, 9, 20, 0, 0.5f});
        test_prod(isa, (Prod){t == 1, t == 2, 9, 20, 0, 0.0f});
        test_prod(isa, (Prod){t == 1, t == 2, 9, 20, 1, 0.5f});
        test_prod(isa, (Prod){t == 1, t == 2, 13, 33, 33, 0.5f});
    }
}

int main(void)
{
    GemmIsa widest = gemm_native_isa();

    gemm_init();
    if (widest == GEMM_ISA_NONE)
        check_skip("this CPU (or build) has neither AVX2+FMA nor AVX-512F");
    /* Every set up to the widest (a CPU with AVX-512F has AVX2 too). */
    for (int isa = GEMM_ISA_AVX2; isa <= (int)widest; isa++) {
        printf("test_gemm_native: %s\n", gemm_native_isa_name((GemmIsa)isa));
        test_isa((GemmIsa)isa);
    }
    return check_report();
}

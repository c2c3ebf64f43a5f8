/*
 * nntest.h: the kit the layer tests of src/nn share (nntest.c): inputs
 * drawn from the engine's own counter-based generator under a fixed key,
 * so that a run is the same on every machine (up to OpenBLAS's kernel,
 * which only moves the last bits); the relative error of a group of
 * comparisons; and the double-precision convolution that the Winograd and
 * the phase-split convolutions are held against.
 *
 * Error measure: rel(a, b) = |a - b| / max(floor, |a| + |b|), floor 1e-3
 * unless a test states a larger one where float rounding demands it.
 *
 * check.h's counters are static to each test's own file, so a helper here
 * never counts a check itself: it returns whether one passed, and the
 * test's CHECK_WORST() counts it where it is made (so a test includes
 * check.h before this header).
 */
#ifndef CNNTOP_TEST_NNTEST_H
#define CNNTOP_TEST_NNTEST_H

#include <stddef.h>

#include "nn/gemm.h"

/* ---- inputs ---- */

/* Uniform in [lo, hi): the next draw of the tests' one stream. */
float urand(float lo, float hi);

/* a[0..n) = urand(lo, hi) each, in order. */
void fill(float *a, size_t n, float lo, float hi);

/* calloc that never returns NULL (exits 2 on out of memory); n = 0 gives
 * a valid block.  The caller frees. */
void *xcalloc(size_t n, size_t size);
float *fvec(size_t n);  /* n zeroed floats */
double *dvec(size_t n); /* n zeroed doubles */

/* d[i] = f[i] for i < n. */
void to_double(double *d, const float *f, size_t n);

/* d <- s, elements of `size` bytes, from channel rows (C, N, P) to
 * channels-last (N, P, C) (last != 0) or back; P positions an image.  The
 * references keep channel rows; the engine's blocks 2 and 3 are
 * channels-last. */
void relayout(void *d, const void *s, size_t size, int C, int N, int P, int last);

/* sum a[i] * b[i] over i < n, in double. */
double dsumprod(const float *a, const float *b, size_t n);
double ddot(const double *a, const double *b, size_t n);

/* ---- errors ---- */

/* The worst rel() of a group of comparisons and where it was; floor 0
 * means the default 1e-3.  Zero-initialise, then worst_add() each pair. */
typedef struct Worst {
    double worst;
    long at;      /* index of the worst pair, as passed */
    double a, b;  /* its values */
    long n;       /* pairs compared */
    double floor; /* of rel(), e.g. 2e-2 (0: 1e-3) */
} Worst;

/* Adds the pair (a, b) at index i; a NaN counts as infinitely wrong. */
void worst_add(Worst *w, long i, double a, double b);

/* Whether w->worst <= tol; on failure prints `what`, the worst pair and
 * file:line to stderr; with CNNTOP_TEST_VERBOSE set, prints the worst
 * error either way. */
int worst_ok(const Worst *w, double tol, const char *what, const char *file, int line);

/* Whether every e <= tol in a group where e = err / magnitude was kept as
 * a running maximum (NaN wins); prints like worst_ok(). */
int maxerr_ok(double worst, double tol, const char *what, const char *file, int line);

/* The running maximum of such errors: NaN (an unwritten output) wins. */
static inline double maxerr(double worst, double e)
{
    return !(e <= worst) ? e : worst;
}

/* One check of the test's own count (check.h) per group. */
#define CHECK_WORST(w, tol, what)                                              \
    do {                                                                       \
        check_count++;                                                         \
        if (!worst_ok((w), (tol), (what), __FILE__, __LINE__))                 \
            check_failed++;                                                    \
    } while (0)

#define CHECK_MAXERR(worst, tol, what)                                         \
    do {                                                                       \
        check_count++;                                                         \
        if (!maxerr_ok((worst), (tol), (what), __FILE__, __LINE__))            \
            check_failed++;                                                    \
    } while (0)

/* ---- the convolution in double ---- */

/* y (OC, N, H, W) = conv(x (C, N, H, W), w (OC, C, K, K)) + b (OC), pad
 * K/2, the layout of layer_wino.h; mag (optional, like y) gets
 * |b| + sum |w||x|, the size rounding errors scale with. */
void conv_ref(double *y, double *mag, const double *x, const double *w, const double *b, int C,
              int OC, int N, int H, int W, int K);

/* The direct backward of L = sum(conv(x, w, b) * R): dx, dw, db and the
 * sizes dxm, dwm (sum of |terms|) of dx and dw. */
void conv_bwd_ref(double *dx, double *dxm, double *dw, double *dwm, double *db, const double *R,
                  const double *x, const double *w, int C, int OC, int N, int H, int W, int K);

/* ---- GEMM paths ---- */

/* The GEMM paths this CPU runs, in the order openblas, native AVX2,
 * native AVX-512: the first *n of `out` (3). */
void nntest_gemm_paths(GemmPath out[3], int *n);

#endif

/*
 * nntest.c: the shared kit of the nn layer tests (nntest.h): inputs from
 * one counter-based stream, the relative error of a group of comparisons,
 * and the double-precision convolution and its backward.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/machine.h"
#include "nntest.h"
#include "util/rng.h"

/* ---- inputs ---- */

static const uint64_t test_key = 0x7e57c0de5eedULL;
static uint64_t test_ctr;

float urand(float lo, float hi)
{
    return lo + (hi - lo) * rng_unit(rng_at(test_key, test_ctr++));
}

void fill(float *a, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        a[i] = urand(lo, hi);
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "nn test: out of memory\n");
        exit(2);
    }
    return p;
}

float *fvec(size_t n)
{
    return xcalloc(n, sizeof(float));
}

double *dvec(size_t n)
{
    return xcalloc(n, sizeof(double));
}

void to_double(double *d, const float *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        d[i] = f[i];
}

void relayout(void *d, const void *s, size_t size, int C, int N, int P, int last)
{
    for (int c = 0; c < C; c++)
        for (int n = 0; n < N; n++)
            for (int p = 0; p < P; p++) {
                size_t r = ((size_t)c * N + n) * P + p, l = ((size_t)n * P + p) * C + c;
                memcpy((char *)d + (last ? l : r) * size, (const char *)s + (last ? r : l) * size,
                       size);
            }
}

double dsumprod(const float *a, const float *b, size_t n)
{
    double L = 0.0;
    for (size_t i = 0; i < n; i++)
        L += (double)a[i] * b[i];
    return L;
}

double ddot(const double *a, const double *b, size_t n)
{
    double L = 0.0;
    for (size_t i = 0; i < n; i++)
        L += a[i] * b[i];
    return L;
}

/* ---- errors ---- */

static double rel(double a, double b, double floor)
{
    double den = fabs(a) + fabs(b);
    return fabs(a - b) / (den > floor ? den : floor);
}

void worst_add(Worst *w, long i, double a, double b)
{
    double r = rel(a, b, w->floor > 0.0 ? w->floor : 1e-3);
    w->n++;
    if (r > w->worst || isnan(r)) {
        w->worst = isnan(r) ? INFINITY : r;
        w->at = i;
        w->a = a;
        w->b = b;
    }
}

int worst_ok(const Worst *w, double tol, const char *what, const char *file, int line)
{
    int ok = w->worst <= tol;
    if (!ok)
        fprintf(stderr, "%s:%d: %s: worst rel error %.3g > %.3g at %ld (%.9g vs %.9g), %ld compared\n",
                file, line, what, w->worst, tol, w->at, w->a, w->b, w->n);
    if (getenv("CNNTOP_TEST_VERBOSE"))
        fprintf(stderr, "  %-44s worst rel %.3g over %ld\n", what, w->worst, w->n);
    return ok;
}

int maxerr_ok(double worst, double tol, const char *what, const char *file, int line)
{
    int ok = worst <= tol;
    if (!ok)
        fprintf(stderr, "%s:%d: %s: worst error / magnitude %.3g > %.3g\n", file, line, what,
                worst, tol);
    if (getenv("CNNTOP_TEST_VERBOSE"))
        fprintf(stderr, "  %s: worst error / magnitude %.3g\n", what, worst);
    return ok;
}

/* ---- the convolution in double ---- */

void conv_ref(double *y, double *mag, const double *x, const double *w, const double *b, int C,
              int OC, int N, int H, int W, int K)
{
    const int P = K / 2, HW = H * W;

    for (int oc = 0; oc < OC; oc++)
        for (int n = 0; n < N; n++)
            for (int oh = 0; oh < H; oh++)
                for (int ow = 0; ow < W; ow++) {
                    double s = b[oc], m = fabs(b[oc]);
                    for (int c = 0; c < C; c++)
                        for (int kh = 0; kh < K; kh++)
                            for (int kw = 0; kw < K; kw++) {
                                int ih = oh + kh - P, iw = ow + kw - P;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                double t = w[((oc * C + c) * K + kh) * K + kw] *
                                           x[((size_t)c * N + n) * HW + ih * W + iw];
                                s += t;
                                m += fabs(t);
                            }
                    size_t o = ((size_t)oc * N + n) * HW + oh * W + ow;
                    y[o] = s;
                    if (mag)
                        mag[o] = m;
                }
}


/* Direct double backward of L = sum(y * R): dw, db, dx and their |.| sizes. */
void conv_bwd_ref(double *dx, double *dxm, double *dw, double *dwm, double *db, const double *R,
                  const double *x, const double *w, int C, int OC, int N, int H, int W, int K)
{
    const int P = K / 2, HW = H * W, CKK = C * K * K;

    memset(dx, 0, (size_t)C * N * HW * sizeof *dx);
    memset(dxm, 0, (size_t)C * N * HW * sizeof *dxm);
    memset(dw, 0, (size_t)OC * CKK * sizeof *dw);
    memset(dwm, 0, (size_t)OC * CKK * sizeof *dwm);
    for (int oc = 0; oc < OC; oc++) {
        double s = 0.0;
        for (int n = 0; n < N; n++)
            for (int q = 0; q < HW; q++)
                s += R[((size_t)oc * N + n) * HW + q];
        db[oc] = s;
    }
    for (int oc = 0; oc < OC; oc++)
        for (int c = 0; c < C; c++)
            for (int kh = 0; kh < K; kh++)
                for (int kw = 0; kw < K; kw++) {
                    int wi = ((oc * C + c) * K + kh) * K + kw;
                    for (int n = 0; n < N; n++)
                        for (int oh = 0; oh < H; oh++) {
                            int ih = oh + kh - P;
                            if (ih < 0 || ih >= H)
                                continue;
                            for (int ow = 0; ow < W; ow++) {
                                int iw = ow + kw - P;
                                if (iw < 0 || iw >= W)
                                    continue;
                                double r = R[((size_t)oc * N + n) * HW + oh * W + ow];
                                size_t xi = ((size_t)c * N + n) * HW + ih * W + iw;
                                dw[wi] += r * x[xi];
                                dwm[wi] += fabs(r * x[xi]);
                                dx[xi] += r * w[wi];
                                dxm[xi] += fabs(r * w[wi]);
                            }
                        }
                }
}

void nntest_gemm_paths(GemmPath out[3], int *n)
{
    static const GemmPath all[] = {GEMM_PATH_OPENBLAS, GEMM_PATH_AVX2, GEMM_PATH_AVX512};
    const GemmPath native = gemm_path_of(CN_GEMM_NATIVE);

    *n = 0;
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        /* A native path runs only where the CPU has its vectors. */
        if (all[i] != GEMM_PATH_OPENBLAS && (native == GEMM_PATH_OPENBLAS || all[i] > native))
            continue;
        out[(*n)++] = all[i];
    }
}

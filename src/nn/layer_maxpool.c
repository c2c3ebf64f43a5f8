/*
 * layer_maxpool.c: the fused BN-apply + ReLU + max-pool kernels.
 *
 * Shape letters as in layer_wino.h; PH = H/2, PW = W/2.  Every loop here is
 * flat over windows or positions (through offset tables where the layout
 * has rows) and selects rather than branches, so that gcc vectorises it:
 * the data decides every comparison, and branches on it mispredict.
 */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "nn/sums.h"

#include "nn/layer_maxpool.h"

/*
 * relu(max(z)) = max(relu(z)), and while that maximum is positive the first
 * z equal to it is also the first maximum after ReLU, so a window is
 * reduced on z before the ReLU.
 */
static inline float max4(float a, float b, float c, float d)
{
    float m1 = a >= b ? a : b, m2 = c >= d ? c : d;
    return m1 >= m2 ? m1 : m2;
}

/* One window (a b / c d) of conv outputs: the pooled value, the index of
 * the first maximum, or MAXPOOL_NOGRAD, and y there.  The first maximum is
 * found by a chain of strict "<" that only ever moves to a later element
 * when it is larger; unlike a test of each element for equality with the
 * maximum, that needs no NaN check, so even gcc's scalar code selects
 * instead of branching (measured 1.6-1.8x faster in row loops). */
typedef struct Win {
    float o, y;
    int k;
} Win;

static inline Win pool_window(float ya, float yb, float yc, float yd, float sc, float sh)
{
    float a = ya * sc + sh, b = yb * sc + sh, c = yc * sc + sh, d = yd * sc + sh;
    float m = a, y = ya, k = 0.0f; /* k as a float: every lane the same width */

    y = m < b ? yb : y;
    k = m < b ? 1.0f : k;
    m = m < b ? b : m;
    y = m < c ? yc : y;
    k = m < c ? 2.0f : k;
    m = m < c ? c : m;
    y = m < d ? yd : y;
    k = m < d ? 3.0f : k;
    m = m < d ? d : m;
    return (Win){.o = m > 0.0f ? m : 0.0f, .y = y, .k = m > 0.0f ? (int)k : MAXPOOL_NOGRAD};
}

void maxpool_tables_init(MaxpoolTables *t, int H, int W)
{
    const int PH = H / 2, PW = W / 2, PHW = PH * PW, HW = H * W;

    assert(HW >= 1 && HW <= MAXPOOL_MAX_PLANE);
    memset(t, 0, sizeof *t);
    t->H = H;
    t->W = W;
    t->G = MAXPOOL_MAX_PLANE / HW;
    for (int g = 0; g < t->G; g++) {
        for (int q = 0; q < PHW; q++)
            t->off[g * PHW + q] = g * HW + 2 * (q / PW) * W + 2 * (q % PW);
        for (int h = 0; h < H; h++)
            for (int w = 0; w < W; w++) {
                int in = h < 2 * PH && w < 2 * PW, p = g * HW + h * W + w;
                t->win[p] = g * PHW + (in ? (h / 2) * PW + w / 2 : 0);
                t->kp[p] = in ? (float)(2 * (h & 1) + (w & 1)) : 9.0f;
            }
    }
}

static void pool_plane_train(float *restrict o, uint8_t *restrict ix, float *restrict ym,
                             const float *restrict y, const int *restrict off, int n, int W,
                             float sc, float sh)
{
    for (int q = 0; q < n; q++) {
        const int p = off[q];
        Win w = pool_window(y[p], y[p + 1], y[p + W], y[p + W + 1], sc, sh);
        o[q] = w.o;
        ix[q] = (uint8_t)w.k;
        ym[q] = w.y;
    }
}

static void pool_plane_eval(float *restrict o, const float *restrict y,
                            const int *restrict off, int n, int W, float sc, float sh)
{
    for (int q = 0; q < n; q++) {
        const int p = off[q];
        float m = max4(y[p] * sc + sh, y[p + 1] * sc + sh, y[p + W] * sc + sh,
                       y[p + W + 1] * sc + sh);
        o[q] = m > 0.0f ? m : 0.0f;
    }
}

void maxpool_forward(float *out, uint8_t *idx, float *ymax, const float *y, const float *scale,
                  const float *shift, int C, int N, const MaxpoolTables *t, int n0, int nt)
{
    const int W = t->W, HW = t->H * W, PHW = (t->H / 2) * (W / 2), G = t->G;

    for (int c = 0; c < C; c++)
        for (int n = n0; n < n0 + nt; n += G) {
            const int nq = (n0 + nt - n < G ? n0 + nt - n : G) * PHW;
            size_t po = ((size_t)c * N + n) * PHW;
            const float *yp = y + ((size_t)c * N + n) * HW;
            if (idx)
                pool_plane_train(out + po, idx + po, ymax + po, yp, t->off, nq, W, scale[c],
                                 shift[c]);
            else
                pool_plane_eval(out + po, yp, t->off, nq, W, scale[c], shift[c]);
        }
}

static void pool_phases_train(float *restrict o, uint8_t *restrict ix, float *restrict ym,
                              const float *restrict z0, const float *restrict z1,
                              const float *restrict z2, const float *restrict z3, int n,
                              float sc, float sh)
{
    for (int q = 0; q < n; q++) {
        Win w = pool_window(z0[q], z1[q], z2[q], z3[q], sc, sh);
        o[q] = w.o;
        ix[q] = (uint8_t)w.k;
        ym[q] = w.y;
    }
}

static void pool_phases_eval(float *restrict o, const float *restrict z0,
                             const float *restrict z1, const float *restrict z2,
                             const float *restrict z3, int n, float sc, float sh)
{
    for (int q = 0; q < n; q++) {
        float m = max4(z0[q] * sc + sh, z1[q] * sc + sh, z2[q] * sc + sh, z3[q] * sc + sh);
        o[q] = m > 0.0f ? m : 0.0f;
    }
}

void maxpool_forward_phases(float *out, uint8_t *idx, float *ymax, const float *z, int n,
                         float scale, float shift)
{
    const float *z1 = z + n, *z2 = z + 2 * (size_t)n, *z3 = z + 3 * (size_t)n;

    if (idx)
        pool_phases_train(out, idx, ymax, z, z1, z2, z3, n, scale, shift);
    else
        pool_phases_eval(out, z, z1, z2, z3, n, scale, shift);
}

void maxpool_backward_sums(double *acc, const float *dout, const uint8_t *idx,
                        const float *ymax, const float *mean, const float *invstd,
                        int C, int N, int PHW, int n0, int nt)
{
    const long len = (long)nt * PHW;

    for (int c = 0; c < C; c++) {
        const size_t o = ((size_t)c * N + n0) * PHW;
        const float *restrict g = dout + o, *restrict ym = ymax + o;
        const uint8_t *restrict ix = idx + o;
        const float mu = mean[c];
        double s = 0.0, sx = 0.0;
        long i = 0;
        /* Lanes as in sums.h; a window without gradient adds zero. */
        while (len - i >= SUM_LANES) {
            float a[SUM_LANES] = {0}, b[SUM_LANES] = {0};
            long end = len - i > SUM_BLOCK ? i + SUM_BLOCK : len - (len - i) % SUM_LANES;
            for (; i < end; i += SUM_LANES)
                for (int k = 0; k < SUM_LANES; k++) {
                    float gk = ix[i + k] == MAXPOOL_NOGRAD ? 0.0f : g[i + k];
                    a[k] += gk;
                    b[k] += gk * (ym[i + k] - mu);
                }
            for (int k = 0; k < SUM_LANES; k++) {
                s += a[k];
                sx += b[k];
            }
        }
        for (; i < len; i++) { /* multiplied, not branched: the data is random */
            float gk = (float)(ix[i] != MAXPOOL_NOGRAD) * g[i];
            s += gk;
            sx += gk * (ym[i] - mu);
        }
        acc[2 * c] += s;
        acc[2 * c + 1] += sx * invstd[c];
    }
}

/* One pair of rows (2ph, 2ph+1) of dy: the mean terms everywhere, plus
 * k1*g at each window's maximum. */
/* One plane in place, y in and dy out, flat over its positions with the
 * window's gradient and index loaded through win (MaxpoolTables).  The
 * indices go to floats first (kf, one per window): a byte cannot be
 * gathered, and a float keeps every lane the same width. */
static void unpool_plane(float *restrict d, const float *restrict g,
                         const uint8_t *restrict ix, float *restrict kf,
                         const int *restrict win, const float *restrict kp, int n, int nw,
                         float a, float bx, float mu, float is, float k1)
{
    for (int q = 0; q < nw; q++)
        kf[q] = (float)ix[q];
    for (int p = 0; p < n; p++) {
        const int q = win[p];
        const float gq = g[q], kq = kf[q]; /* loaded always: no masked gather */
        d[p] = a + bx * ((d[p] - mu) * is) + (kq == kp[p] ? k1 * gq : 0.0f);
    }
}

void maxpool_backward(float *yd, const float *dout, const uint8_t *idx, const float *gamma,
                   const float *mean, const float *invstd, const float *mdz, const float *mdzx,
                   int C, int N, const MaxpoolTables *t, int n0, int nt)
{
    const int HW = t->H * t->W, PHW = (t->H / 2) * (t->W / 2), G = t->G;
    /* zeroed for the analyser: only the filled prefix is read */
    float kf[MAXPOOL_MAX_PLANE / 4] = {0};
    const float none = 0.0f;

    for (int c = 0; c < C; c++) {
        const float k1 = gamma[c] * invstd[c];
        const float a = -k1 * mdz[c], bx = -k1 * mdzx[c];
        for (int n = n0; n < n0 + nt; n += G) {
            const int g = n0 + nt - n < G ? n0 + nt - n : G;
            size_t o = (size_t)c * N + n;
            /* A plane of under 2 x 2 has no window: every kp is 9, and the
             * loads through win read a zero in place of a gradient. */
            unpool_plane(yd + o * HW, PHW ? dout + o * PHW : &none, idx + o * PHW, kf, t->win,
                         t->kp, g * HW, g * PHW, a, bx, mean[c], invstd[c], k1);
        }
    }
}

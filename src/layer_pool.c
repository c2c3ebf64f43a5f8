/*
 * layer_pool.c: the fused BN-apply + ReLU + max-pool kernels.
 *
 * Shape letters as in layer_conv.c; PH = H/2, PW = W/2.
 */
#include <math.h>
#include <stddef.h>

#include "sums.h"

#include "layer_pool.h"

/*
 * One output row.  relu(max(z)) = max(relu(z)), and while that maximum is
 * positive the first z equal to it is also the first maximum after ReLU, so
 * the window is reduced on z; selects only, so the loop vectorises.
 */
static inline float max4(float a, float b, float c, float d)
{
    float m1 = a >= b ? a : b, m2 = c >= d ? c : d;
    return m1 >= m2 ? m1 : m2;
}

/* One window (a b / c d) of conv outputs: the pooled value, the index of
 * the first maximum, or POOL_NOGRAD, and y there.  The first maximum is
 * found by a chain of strict "<" that only ever moves to a later element
 * when it is larger; compared with testing each element for equality with
 * the maximum, that needs no NaN check, so scalar code selects instead of
 * branching (measured 1.6-1.8x faster on rows of 3 to 14 windows). */
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
    return (Win){.o = m > 0.0f ? m : 0.0f, .y = y, .k = m > 0.0f ? (int)k : POOL_NOGRAD};
}

static void pool_row(float *restrict o, uint8_t *restrict ix, float *restrict ym,
                     const float *restrict r0, const float *restrict r1, float sc, float sh,
                     int PW)
{
    for (int pw = 0; pw < PW; pw++) {
        Win w = pool_window(r0[2 * pw], r0[2 * pw + 1], r1[2 * pw], r1[2 * pw + 1], sc, sh);
        o[pw] = w.o;
        ix[pw] = (uint8_t)w.k;
        ym[pw] = w.y;
    }
}

/* Evaluation: the maximum only. */
static void pool_row_eval(float *restrict o, const float *restrict r0,
                          const float *restrict r1, float sc, float sh, int PW)
{
    for (int pw = 0; pw < PW; pw++) {
        float a = r0[2 * pw] * sc + sh, b = r0[2 * pw + 1] * sc + sh;
        float c = r1[2 * pw] * sc + sh, d = r1[2 * pw + 1] * sc + sh;
        float m = max4(a, b, c, d);
        o[pw] = m > 0.0f ? m : 0.0f;
    }
}

void pool_forward_plane(float *out, uint8_t *idx, float *ymax, const float *y, int ys,
                        int H, int W, float scale, float shift)
{
    const int PH = H / 2, PW = W / 2;

    for (int ph = 0; ph < PH; ph++) {
        const float *r0 = y + (size_t)(2 * ph) * ys, *r1 = r0 + ys;
        if (idx)
            pool_row(out + ph * PW, idx + ph * PW, ymax + ph * PW, r0, r1, scale, shift, PW);
        else
            pool_row_eval(out + ph * PW, r0, r1, scale, shift, PW);
    }
}

void pool_forward(float *out, uint8_t *idx, float *ymax, const float *y, const float *scale,
                  const float *shift, int C, int N, int H, int W, int n0, int nt)
{
    const int HW = H * W, PHW = (H / 2) * (W / 2);

    for (int c = 0; c < C; c++)
        for (int n = n0; n < n0 + nt; n++) {
            size_t po = ((size_t)c * N + n) * PHW;
            pool_forward_plane(out + po, idx ? idx + po : NULL, ymax ? ymax + po : NULL,
                               y + ((size_t)c * N + n) * HW, W, H, W, scale[c], shift[c]);
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

void pool_forward_phases(float *out, uint8_t *idx, float *ymax, const float *z, int n,
                         float scale, float shift)
{
    const float *z1 = z + n, *z2 = z + 2 * (size_t)n, *z3 = z + 3 * (size_t)n;

    if (idx)
        pool_phases_train(out, idx, ymax, z, z1, z2, z3, n, scale, shift);
    else
        pool_phases_eval(out, z, z1, z2, z3, n, scale, shift);
}

void pool_backward_sums(double *acc, const float *dout, const uint8_t *idx,
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
                    float gk = ix[i + k] == POOL_NOGRAD ? 0.0f : g[i + k];
                    a[k] += gk;
                    b[k] += gk * (ym[i + k] - mu);
                }
            for (int k = 0; k < SUM_LANES; k++) {
                s += a[k];
                sx += b[k];
            }
        }
        for (; i < len; i++)
            if (ix[i] != POOL_NOGRAD) {
                s += g[i];
                sx += g[i] * (ym[i] - mu);
            }
        acc[2 * c] += s;
        acc[2 * c + 1] += sx * invstd[c];
    }
}

/* One pair of rows (2ph, 2ph+1) of dy: the mean terms everywhere, plus
 * k1*g at each window's maximum. */
/* One pair of rows (2ph, 2ph+1), in place: y in, dy out. */
static void unpool_rows(float *restrict r0, float *restrict r1, const float *restrict g,
                        const uint8_t *restrict ix, int PW, float a, float bx, float mu,
                        float is, float k1)
{
    for (int pw = 0; pw < PW; pw++) {
        /* The window's index as a float keeps every lane the same width, which
         * is what lets gcc vectorise this loop. */
        float gk = k1 * g[pw], k = (float)ix[pw];
        float g0 = k == 0.0f ? gk : 0.0f, g1 = k == 1.0f ? gk : 0.0f;
        float g2 = k == 2.0f ? gk : 0.0f, g3 = k == 3.0f ? gk : 0.0f;
        r0[2 * pw] = a + bx * ((r0[2 * pw] - mu) * is) + g0;
        r0[2 * pw + 1] = a + bx * ((r0[2 * pw + 1] - mu) * is) + g1;
        r1[2 * pw] = a + bx * ((r1[2 * pw] - mu) * is) + g2;
        r1[2 * pw + 1] = a + bx * ((r1[2 * pw + 1] - mu) * is) + g3;
    }
}

void pool_backward_plane(float *yd, int ys, const float *g, const uint8_t *ix, int H, int W,
                         float a, float bx, float mu, float is, float k1)
{
    const int PH = H / 2, PW = W / 2;

    for (int ph = 0; ph < PH; ph++)
        unpool_rows(yd + (size_t)(2 * ph) * ys, yd + (size_t)(2 * ph + 1) * ys, g + ph * PW,
                    ix + ph * PW, PW, a, bx, mu, is, k1);
    /* An odd last column or row was dropped by the pool: mean terms only. */
    for (int h = 0; h < H; h++)
        for (int w = h < 2 * PH ? 2 * PW : 0; w < W; w++) {
            float *v = &yd[(size_t)h * ys + w];
            *v = a + bx * ((*v - mu) * is);
        }
}

void pool_backward(float *yd, const float *dout, const uint8_t *idx, const float *gamma,
                   const float *mean, const float *invstd, const float *mdz, const float *mdzx,
                   int C, int N, int H, int W, int n0, int nt)
{
    const int HW = H * W, PHW = (H / 2) * (W / 2);

    for (int c = 0; c < C; c++) {
        const float k1 = gamma[c] * invstd[c];
        const float a = -k1 * mdz[c], bx = -k1 * mdzx[c];
        for (int n = n0; n < n0 + nt; n++) {
            size_t o = (size_t)c * N + n;
            pool_backward_plane(yd + o * HW, W, dout + o * PHW, idx + o * PHW, H, W, a, bx,
                                mean[c], invstd[c], k1);
        }
    }
}

void pool_backward_phases(float *dz, const float *z, const float *g, const uint8_t *ix, int n,
                          float a, float bx, float mu, float is, float k1)
{
    for (int k = 0; k < 4; k++) {
        const float *restrict zk = z + (size_t)k * n;
        float *restrict d = dz + (size_t)k * n;
        const float kf = (float)k;
        for (int q = 0; q < n; q++) {
            float gk = (float)ix[q] == kf ? k1 * g[q] : 0.0f;
            d[q] = a + bx * ((zk[q] - mu) * is) + gk;
        }
    }
}

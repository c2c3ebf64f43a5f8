/*
 * layer_pool.c: the fused BN-apply + ReLU + max-pool kernels.
 *
 * Shape letters as in layer_conv.c; PH = H/2, PW = W/2.
 */
#include <math.h>
#include <stddef.h>

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

static void pool_row(float *restrict o, uint8_t *restrict ix, const float *restrict r0,
                     const float *restrict r1, float sc, float sh, int PW)
{
    for (int pw = 0; pw < PW; pw++) {
        float a = r0[2 * pw] * sc + sh, b = r0[2 * pw + 1] * sc + sh;
        float c = r1[2 * pw] * sc + sh, d = r1[2 * pw + 1] * sc + sh;
        float m = max4(a, b, c, d);
        int k = c == m ? 2 : 3;
        k = b == m ? 1 : k;
        k = a == m ? 0 : k;
        o[pw] = m > 0.0f ? m : 0.0f;
        ix[pw] = (uint8_t)(m > 0.0f ? k : POOL_NOGRAD);
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

void pool_forward(float *out, uint8_t *idx, const float *y, const float *scale,
                  const float *shift, int C, int N, int H, int W, int n0, int nt)
{
    const int PH = H / 2, PW = W / 2, HW = H * W, PHW = PH * PW;

    for (int c = 0; c < C; c++)
        for (int n = n0; n < n0 + nt; n++) {
            const float *yp = y + ((size_t)c * N + n) * HW;
            size_t po = ((size_t)c * N + n) * PHW;
            for (int ph = 0; ph < PH; ph++) {
                const float *r0 = yp + (size_t)(2 * ph) * W, *r1 = r0 + W;
                if (idx)
                    pool_row(out + po + (size_t)ph * PW, idx + po + (size_t)ph * PW, r0, r1,
                             scale[c], shift[c], PW);
                else
                    pool_row_eval(out + po + (size_t)ph * PW, r0, r1, scale[c], shift[c], PW);
            }
        }
}

/* Offset in the H x W plane of window (ph, pw)'s element k. */
static inline int pool_src(int ph, int pw, int k, int W)
{
    return (2 * ph + (k >> 1)) * W + 2 * pw + (k & 1);
}

void pool_backward_sums(double *acc, const float *dout, const uint8_t *idx,
                        const float *y, const float *mean, const float *invstd,
                        int C, int N, int H, int W, int n0, int nt)
{
    const int PH = H / 2, PW = W / 2, HW = H * W, PHW = PH * PW;

    for (int c = 0; c < C; c++) {
        float s = 0.0f, sx = 0.0f;
        for (int n = n0; n < n0 + nt; n++) {
            const float *yp = y + ((size_t)c * N + n) * HW;
            const float *g = dout + ((size_t)c * N + n) * PHW;
            const uint8_t *ix = idx + ((size_t)c * N + n) * PHW;
            for (int ph = 0; ph < PH; ph++)
                for (int pw = 0; pw < PW; pw++) {
                    int p = ph * PW + pw;
                    if (ix[p] == POOL_NOGRAD)
                        continue;
                    float xhat = (yp[pool_src(ph, pw, ix[p], W)] - mean[c]) * invstd[c];
                    s += g[p];
                    sx += g[p] * xhat;
                }
        }
        acc[2 * c] += s;
        acc[2 * c + 1] += sx;
    }
}

/* One pair of rows (2ph, 2ph+1) of dy: the mean terms everywhere, plus
 * k1*g at each window's maximum. */
static void unpool_rows(float *restrict d0, float *restrict d1, const float *restrict y0,
                        const float *restrict y1, const float *restrict g,
                        const uint8_t *restrict ix, int PW, float a, float bx, float mu,
                        float is, float k1)
{
    for (int pw = 0; pw < PW; pw++) {
        /* The window's index as a float keeps every lane the same width, which
         * is what lets gcc vectorise this loop. */
        float gk = k1 * g[pw], k = (float)ix[pw];
        float g0 = k == 0.0f ? gk : 0.0f, g1 = k == 1.0f ? gk : 0.0f;
        float g2 = k == 2.0f ? gk : 0.0f, g3 = k == 3.0f ? gk : 0.0f;
        d0[2 * pw] = a + bx * ((y0[2 * pw] - mu) * is) + g0;
        d0[2 * pw + 1] = a + bx * ((y0[2 * pw + 1] - mu) * is) + g1;
        d1[2 * pw] = a + bx * ((y1[2 * pw] - mu) * is) + g2;
        d1[2 * pw + 1] = a + bx * ((y1[2 * pw + 1] - mu) * is) + g3;
    }
}

void pool_backward(float *dy, const float *dout, const uint8_t *idx,
                   const float *y, const float *gamma, const float *mean,
                   const float *invstd, const float *mdz, const float *mdzx,
                   int C, int N, int H, int W, int n0, int nt)
{
    const int PH = H / 2, PW = W / 2, HW = H * W, PHW = PH * PW;

    for (int c = 0; c < C; c++) {
        const float k1 = gamma[c] * invstd[c], mu = mean[c], is = invstd[c];
        const float a = -k1 * mdz[c], bx = -k1 * mdzx[c];
        for (int n = n0; n < n0 + nt; n++) {
            const float *yp = y + ((size_t)c * N + n) * HW;
            const float *g = dout + ((size_t)c * N + n) * PHW;
            const uint8_t *ix = idx + ((size_t)c * N + n) * PHW;
            float *d = dy + ((size_t)c * nt + (n - n0)) * HW;
            for (int ph = 0; ph < PH; ph++)
                unpool_rows(d + 2 * ph * W, d + (2 * ph + 1) * W, yp + 2 * ph * W,
                            yp + (2 * ph + 1) * W, g + ph * PW, ix + ph * PW, PW, a, bx,
                            mu, is, k1);
            /* An odd last column or row was dropped by the pool: mean terms only. */
            for (int h = 0; h < 2 * PH; h++)
                for (int w = 2 * PW; w < W; w++)
                    d[h * W + w] = a + bx * ((yp[h * W + w] - mu) * is);
            for (int q = 2 * PH * W; q < HW; q++)
                d[q] = a + bx * ((yp[q] - mu) * is);
        }
    }
}

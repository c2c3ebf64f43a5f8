/*
 * layer_pool.c: the fused BN-apply + ReLU + max-pool kernels.
 *
 * Shape letters as in layer_conv.c; PH = H/2, PW = W/2.
 */
#include <stddef.h>

#include "layer_pool.h"

static inline float relu_affine(float y, float scale, float shift)
{
    float z = y * scale + shift;
    return z > 0.0f ? z : 0.0f;
}

/* One output row: four candidates per window, first maximum wins. */
static void pool_row(float *o, uint8_t *ix, const float *r0, const float *r1,
                     float sc, float sh, int PW)
{
    for (int pw = 0; pw < PW; pw++) {
        float a = relu_affine(r0[2 * pw], sc, sh);
        float b = relu_affine(r0[2 * pw + 1], sc, sh);
        float c = relu_affine(r1[2 * pw], sc, sh);
        float d = relu_affine(r1[2 * pw + 1], sc, sh);
        float m = a;
        int k = 0;
        k = b > m ? 1 : k; m = b > m ? b : m;
        k = c > m ? 2 : k; m = c > m ? c : m;
        k = d > m ? 3 : k; m = d > m ? d : m;
        o[pw] = m;
        if (ix)
            ix[pw] = (uint8_t)(m > 0.0f ? k : POOL_NOGRAD);
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
            for (int ph = 0; ph < PH; ph++)
                pool_row(out + po + (size_t)ph * PW,
                         idx ? idx + po + (size_t)ph * PW : NULL,
                         yp + (size_t)(2 * ph) * W, yp + (size_t)(2 * ph + 1) * W,
                         scale[c], shift[c], PW);
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
            /* Every position gets the mean terms; the pooled maxima add dz. */
            for (int q = 0; q < HW; q++)
                d[q] = a + bx * ((yp[q] - mu) * is);
            for (int ph = 0; ph < PH; ph++)
                for (int pw = 0; pw < PW; pw++) {
                    int p = ph * PW + pw;
                    if (ix[p] != POOL_NOGRAD)
                        d[pool_src(ph, pw, ix[p], W)] += k1 * g[p];
                }
        }
    }
}

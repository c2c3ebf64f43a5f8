/*
 * layer_conv.c: convolution by im2col + SGEMM, tile by tile.
 *
 * Shape letters: N batch, C in-channels, OC out-channels, H x W spatial,
 * K kernel side (odd), P = K/2 padding, HW = H*W.  Tiles are sized by the
 * caller so that a tile's col matrix stays in the core's L2 cache while the
 * GEMM reads it.
 */
#include <string.h>

#include "gemm.h"
#include "layer_conv.h"
#include "sums.h"

void conv_masks(float *mask, int H, int W, int K, int nt)
{
    const int P = K / 2, HW = H * W;

    for (int kh = 0; kh < K; kh++)
        for (int kw = 0; kw < K; kw++) {
            float *m = mask + (size_t)(kh * K + kw) * nt * HW;
            for (int n = 0; n < nt; n++)
                for (int oh = 0; oh < H; oh++)
                    for (int ow = 0; ow < W; ow++) {
                        int ih = oh + kh - P, iw = ow + kw - P;
                        m[(size_t)n * HW + oh * W + ow] =
                            ih >= 0 && ih < H && iw >= 0 && iw < W ? 1.0f : 0.0f;
                    }
        }
}

/*
 * Both directions work on the whole tile at once: for channel c and tap t,
 * column q of the tile (image q / HW, position q % HW) reads input q + off,
 * off = (kh-P)*W + (kw-P), where the mask says the tap is inside the image.
 * Across an image's edge q + off lands in the next or previous image (the
 * mask rejects it); q is kept where q + off stays inside the tile.  The
 * loops are flat and select rather than branch, so they vectorise.
 */
static void im2col_row(float *restrict d, const float *restrict x, const float *restrict m,
                       long n, long off)
{
    long lo = off < 0 ? -off : 0, hi = off > 0 ? n - off : n;

    for (long q = 0; q < lo; q++)
        d[q] = 0.0f;
    for (long q = lo; q < hi; q++) {
        const float v = x[q + off]; /* in the tile for every q here: loaded always,
                                       so the select needs no masked load */
        d[q] = m[q] != 0.0f ? v : 0.0f;
    }
    for (long q = hi < lo ? lo : hi; q < n; q++)
        d[q] = 0.0f;
}

/* d[q + off] += s[q] where the mask allows, for q with q + off in [0, n). */
static void col2im_row(float *restrict d, const float *restrict s, const float *restrict m,
                       long n, long off)
{
    long lo = off < 0 ? -off : 0, hi = off > 0 ? n - off : n;

    for (long q = lo; q < hi; q++) {
        const float v = s[q];
        d[q + off] += m[q] != 0.0f ? v : 0.0f;
    }
}

void conv_im2col(float *col, const float *x, const float *mask, int mlen, int C, int N,
                 int H, int W, int K, int n0, int nt)
{
    const int P = K / 2, HW = H * W;
    const long ncols = (long)nt * HW;

    for (int c = 0; c < C; c++) {
        const float *xt = x + ((size_t)c * N + n0) * HW;
        for (int kh = 0; kh < K; kh++)
            for (int kw = 0; kw < K; kw++) {
                int t = kh * K + kw;
                im2col_row(col + ((size_t)c * K * K + t) * ncols, xt, mask + (size_t)t * mlen,
                           ncols, (long)(kh - P) * W + (kw - P));
            }
    }
}

void conv_col2im(float *dx, const float *dcol, const float *mask, int mlen, int C, int N,
                 int H, int W, int K, int n0, int nt)
{
    const int P = K / 2, HW = H * W;
    const long ncols = (long)nt * HW;

    for (int c = 0; c < C; c++) {
        float *tile = dx + ((size_t)c * N + n0) * HW;
        memset(tile, 0, (size_t)ncols * sizeof *tile);
        for (int kh = 0; kh < K; kh++)
            for (int kw = 0; kw < K; kw++) {
                int t = kh * K + kw;
                col2im_row(tile, dcol + ((size_t)c * K * K + t) * ncols,
                           mask + (size_t)t * mlen, ncols, (long)(kh - P) * W + (kw - P));
            }
    }
}

void conv_forward(float *y, const float *x, const float *w, const float *b,
                  float *col, const float *mask, int mlen, int C, int OC, int N, int H,
                  int W, int K, int n0, int nt)
{
    const int CKK = C * K * K, HW = H * W, ncols = nt * HW;

    conv_im2col(col, x, mask, mlen, C, N, H, W, K, n0, nt);
    gemm(0, 0, OC, ncols, CKK, 1.0f, w, CKK, col, ncols, 0.0f,
         y + (size_t)n0 * HW, N * HW);
    for (int oc = 0; oc < OC; oc++) {
        float *row = y + ((size_t)oc * N + n0) * HW;
        for (int i = 0; i < ncols; i++)
            row[i] += b[oc];
    }
}

void conv_backward(float *dx, float *dw, float *db, const float *dy, int ldy,
                   const float *x, const float *w, float *col, float *dcol,
                   const float *mask, int mlen, int C, int OC, int N, int H, int W, int K,
                   int n0, int nt, float beta)
{
    const int CKK = C * K * K, HW = H * W, ncols = nt * HW;

    conv_im2col(col, x, mask, mlen, C, N, H, W, K, n0, nt);
    gemm(0, 1, OC, CKK, ncols, 1.0f, dy, ldy, col, ncols, beta, dw, CKK);
    for (int oc = 0; oc < OC; oc++) {
        float s = (float)sums_plain(dy + (size_t)oc * ldy, ncols);
        db[oc] = beta == 0.0f ? s : beta * db[oc] + s;
    }
    if (dx) {
        gemm(1, 0, CKK, ncols, OC, 1.0f, w, CKK, dy, ldy, 0.0f, dcol, ncols);
        conv_col2im(dx, dcol, mask, mlen, C, N, H, W, K, n0, nt);
    }
}

void conv_forward_naive(float *y, const float *x, const float *w, const float *b,
                        int C, int OC, int N, int H, int W, int K)
{
    const int P = K / 2, HW = H * W;

    for (int oc = 0; oc < OC; oc++)
        for (int n = 0; n < N; n++)
            for (int oh = 0; oh < H; oh++)
                for (int ow = 0; ow < W; ow++) {
                    double s = b[oc];
                    for (int c = 0; c < C; c++)
                        for (int kh = 0; kh < K; kh++)
                            for (int kw = 0; kw < K; kw++) {
                                int ih = oh + kh - P, iw = ow + kw - P;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                s += (double)w[((oc * C + c) * K + kh) * K + kw] *
                                     x[((size_t)c * N + n) * HW + ih * W + iw];
                            }
                    y[((size_t)oc * N + n) * HW + oh * W + ow] = (float)s;
                }
}

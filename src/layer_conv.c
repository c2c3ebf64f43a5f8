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

/* One output row of im2col: dst[ow] = src_row[ow + dw] or 0 off the edge. */
static void im2col_row(float *dst, const float *src_row, int W, int dw)
{
    int lo = dw < 0 ? -dw : 0;           /* first ow with a valid input */
    int hi = dw > 0 ? W - dw : W;        /* one past the last */

    for (int ow = 0; ow < lo; ow++)
        dst[ow] = 0.0f;
    memcpy(dst + lo, src_row + lo + dw, (size_t)(hi - lo) * sizeof *dst);
    for (int ow = hi; ow < W; ow++)
        dst[ow] = 0.0f;
}

void conv_im2col(float *col, const float *x, int C, int N, int H, int W, int K,
                 int n0, int nt)
{
    const int P = K / 2, HW = H * W;
    const size_t ncols = (size_t)nt * HW;

    for (int c = 0; c < C; c++)
        for (int kh = 0; kh < K; kh++)
            for (int kw = 0; kw < K; kw++) {
                float *dst = col + ((size_t)(c * K + kh) * K + kw) * ncols;
                for (int n = 0; n < nt; n++) {
                    const float *plane = x + ((size_t)c * N + n0 + n) * HW;
                    for (int oh = 0; oh < H; oh++) {
                        int ih = oh + kh - P;
                        float *d = dst + (size_t)n * HW + (size_t)oh * W;
                        if (ih < 0 || ih >= H)
                            memset(d, 0, (size_t)W * sizeof *d);
                        else
                            im2col_row(d, plane + (size_t)ih * W, W, kw - P);
                    }
                }
            }
}

/* dst_row[ow + dw] += src[ow] for the valid ow. */
static void col2im_row(float *dst_row, const float *src, int W, int dw)
{
    int lo = dw < 0 ? -dw : 0;
    int hi = dw > 0 ? W - dw : W;

    for (int ow = lo; ow < hi; ow++)
        dst_row[ow + dw] += src[ow];
}

void conv_col2im(float *dx, const float *dcol, int C, int N, int H, int W, int K,
                 int n0, int nt)
{
    const int P = K / 2, HW = H * W;
    const size_t ncols = (size_t)nt * HW;

    for (int c = 0; c < C; c++) {
        float *tile = dx + ((size_t)c * N + n0) * HW;
        memset(tile, 0, ncols * sizeof *tile);
        for (int kh = 0; kh < K; kh++)
            for (int kw = 0; kw < K; kw++) {
                const float *src = dcol + ((size_t)(c * K + kh) * K + kw) * ncols;
                for (int n = 0; n < nt; n++)
                    for (int oh = 0; oh < H; oh++) {
                        int ih = oh + kh - P;
                        if (ih < 0 || ih >= H)
                            continue;
                        col2im_row(tile + (size_t)n * HW + (size_t)ih * W,
                                   src + (size_t)n * HW + (size_t)oh * W, W, kw - P);
                    }
            }
    }
}

void conv_forward(float *y, const float *x, const float *w, const float *b,
                  float *col, int C, int OC, int N, int H, int W, int K,
                  int n0, int nt)
{
    const int CKK = C * K * K, HW = H * W, ncols = nt * HW;

    conv_im2col(col, x, C, N, H, W, K, n0, nt);
    gemm(0, 0, OC, ncols, CKK, 1.0f, w, CKK, col, ncols, 0.0f,
         y + (size_t)n0 * HW, N * HW);
    for (int oc = 0; oc < OC; oc++) {
        float *row = y + ((size_t)oc * N + n0) * HW;
        for (int i = 0; i < ncols; i++)
            row[i] += b[oc];
    }
}

void conv_backward(float *dx, float *dw, float *db, const float *dy,
                   const float *x, const float *w, float *col, float *dcol,
                   int C, int OC, int N, int H, int W, int K, int n0, int nt,
                   float beta)
{
    const int CKK = C * K * K, HW = H * W, ncols = nt * HW;

    conv_im2col(col, x, C, N, H, W, K, n0, nt);
    gemm(0, 1, OC, CKK, ncols, 1.0f, dy, ncols, col, ncols, beta, dw, CKK);
    for (int oc = 0; oc < OC; oc++) {
        const float *row = dy + (size_t)oc * ncols;
        float s = 0.0f;
        for (int i = 0; i < ncols; i++)
            s += row[i];
        db[oc] = beta == 0.0f ? s : beta * db[oc] + s;
    }
    if (dx) {
        gemm(1, 0, CKK, ncols, OC, 1.0f, w, CKK, dy, ncols, 0.0f, dcol, ncols);
        conv_col2im(dx, dcol, C, N, H, W, K, n0, nt);
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

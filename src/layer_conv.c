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

/* One shifted plane of im2col: d[oh][ow] = plane[oh + dh][ow + dw], 0 off
 * the edge.  The valid rows are one contiguous stretch in both planes (a
 * row's neighbour is the next row), so they go in one copy, and only the
 * |dw| columns that wrapped around are zeroed afterwards: one copy per
 * plane instead of one per 7-to-28-float row. */
static void im2col_plane(float *d, const float *plane, int H, int W, int dh, int dw)
{
    int lo = dh < 0 ? -dh : 0, hi = dh > 0 ? H - dh : H;

    memset(d, 0, (size_t)lo * W * sizeof *d);
    memset(d + (size_t)hi * W, 0, (size_t)(H - hi) * W * sizeof *d);
    if (hi <= lo)
        return;
    long first = (long)(lo + dh) * W + dw, n = (long)(hi - lo) * W;
    long skip = first < 0 ? -first : 0;                       /* before the plane */
    long over = first + n > (long)H * W ? first + n - (long)H * W : 0; /* after it */
    float *dd = d + (size_t)lo * W;
    memcpy(dd + skip, plane + first + skip, (size_t)(n - skip - over) * sizeof *d);
    for (int r = 0; r < hi - lo; r++) { /* the wrapped columns (and any skipped) */
        float *row = dd + (size_t)r * W;
        for (int ow = 0; ow < -dw; ow++)
            row[ow] = 0.0f;
        for (int ow = W - dw; ow < W; ow++)
            row[ow] = 0.0f;
    }
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
                for (int n = 0; n < nt; n++)
                    im2col_plane(dst + (size_t)n * HW, x + ((size_t)c * N + n0 + n) * HW, H, W,
                                 kh - P, kw - P);
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
        float s = (float)sums_plain(dy + (size_t)oc * ncols, ncols);
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

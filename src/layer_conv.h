/*
 * layer_conv.h: 2-D convolution, stride 1, "same" zero padding (K/2), as
 * im2col + SGEMM over a tile of images.
 *
 * Layout: activations are CNHW across the whole batch: x (C, N, H, W), so
 * one channel of the batch is contiguous.  A tile is images [n0, n0+nt).
 * The im2col matrix of a tile is col (C*K*K, nt*H*W); the conv's output for
 * the tile is the GEMM y[:, n0:n0+nt] (OC, nt*H*W) = w (OC, C*K*K) * col,
 * written straight into y (OC, N, H*W) with row stride N*H*W.
 */
#ifndef CNNTOP_LAYER_CONV_H
#define CNNTOP_LAYER_CONV_H

/*
 * The tap masks of a tile of nt images: mask (K*K, nt*H*W) is 1 where tap
 * (kh, kw) of an output position reads inside the image and 0 where it
 * reads the zero padding.  Made once per layer for its largest tile; mlen
 * (>= nt*H*W) is its row length, a mask for more images serves fewer.
 */
void conv_masks(float *mask, int H, int W, int K, int nt);

/* col (C*K*K, nt*H*W) <- x (C, N, H, W) for images [n0, n0+nt). */
void conv_im2col(float *col, const float *x, const float *mask, int mlen, int C, int N,
                 int H, int W, int K, int n0, int nt);

/* dx[:, n0:n0+nt] (C, N, H, W) <- sum of dcol (C*K*K, nt*H*W) over the
 * positions each input fed: the adjoint of conv_im2col.  Overwrites the
 * tile's part of dx. */
void conv_col2im(float *dx, const float *dcol, const float *mask, int mlen, int C, int N,
                 int H, int W, int K, int n0, int nt);

/* y[:, n0:n0+nt] (OC, N, H, W) = conv(x, w (OC, C*K*K)) + b (OC).
 * col: scratch of C*K*K*nt*H*W floats. */
void conv_forward(float *y, const float *x, const float *w, const float *b,
                  float *col, const float *mask, int mlen, int C, int OC, int N, int H,
                  int W, int K, int n0, int nt);

/*
 * Backward over one tile, given dy (OC, nt*H*W) for it, rows ldy apart:
 *   dw (OC, C*K*K) = beta * dw + dy * col^T,  db (OC) = beta * db + sum(dy),
 *   dx[:, n0:n0+nt] = col2im(w^T * dy) when dx is not NULL.
 * col and dcol: scratch of C*K*K*nt*H*W floats each (dcol unused without dx).
 */
void conv_backward(float *dx, float *dw, float *db, const float *dy, int ldy,
                   const float *x, const float *w, float *col, float *dcol,
                   const float *mask, int mlen, int C, int OC, int N, int H, int W, int K,
                   int n0, int nt, float beta);

/* Direct seven-loop convolution over the whole batch, for tests. */
void conv_forward_naive(float *y, const float *x, const float *w, const float *b,
                        int C, int OC, int N, int H, int W, int K);

#endif

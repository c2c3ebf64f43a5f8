/*
 * layer_maxpool.h: BatchNorm (apply) + ReLU + 2x2 max-pool, fused.
 *
 * PyTorch's order is z = BN(y), r = relu(z), out = maxpool2x2(r) (floor:
 * an odd last row or column is dropped).  Doing the three in one pass reads
 * the conv output once and writes a quarter of it.  For backward, each
 * pooled value keeps the index (0..3, row-major in its window) of the first
 * maximum, as PyTorch picks it, or MAXPOOL_NOGRAD when that maximum is 0
 * (ReLU clipped it, so no gradient flows through the window).
 *
 * Layout: blocks 2 and 3 channels-last, as layer_wino.h's y: y (N, H, W, C),
 * out, idx, ymax and dout (N, H/2, W/2, C).  Block 1 pools the phases of
 * its direct convolution (maxpool_forward_phases) and keeps channel rows
 * (C, N, H/2, W/2) (maxpool_backward_sums_rows).
 */
#ifndef CNNTOP_LAYER_MAXPOOL_H
#define CNNTOP_LAYER_MAXPOOL_H

#include <stdint.h>

#define MAXPOOL_NOGRAD 4

/*
 * Images [n0, n0+nt) of y into out, idx and ymax, with the BN affine
 * scale (C) and shift (C).  ymax keeps the conv output y at each window's
 * maximum, which is all the BN backward sums need of y.  idx and ymax are
 * NULL in evaluation.
 */
void maxpool_forward(float *out, uint8_t *idx, float *ymax, const float *y, const float *scale,
                     const float *shift, int C, int H, int W, int n0, int nt);

/* The same for a window split into its four elements, z (4, n): window q
 * is z[q], z[n+q], z[2n+q], z[3n+q] (layer_conv_phase.h); out, idx, ymax
 * (n).  idx and ymax are NULL in evaluation. */
void maxpool_forward_phases(float *out, uint8_t *idx, float *ymax, const float *z, int n,
                            float scale, float shift);

/* acc (C, 2) += {sum dz, sum dz*xhat} over images [n0, n0+nt) of PHW
 * windows each, where dz is dout routed back through pool and ReLU and
 * xhat = (ymax - mean)*invstd; dout, idx, ymax channels-last. */
void maxpool_backward_sums(double *acc, const float *dout, const uint8_t *idx,
                           const float *ymax, const float *mean, const float *invstd, int C,
                           int PHW, int n0, int nt);

/* The same with dout, idx, ymax in channel rows (C, N, PHW): block 1. */
void maxpool_backward_sums_rows(double *acc, const float *dout, const uint8_t *idx,
                                const float *ymax, const float *mean, const float *invstd,
                                int C, int N, int PHW, int n0, int nt);

/*
 * The gradient of the conv output, in place over images [n0, n0+nt) of
 * yd, which holds y on entry: d = a + bx*xhat, plus k1*g at each window's
 * maximum, from dout and idx and the BN backward means mdz (C), mdzx (C)
 * (layer_bn.h), with k1 = gamma*invstd, a = -k1*mdz, bx = -k1*mdzx,
 * xhat = (y - mean)*invstd.  Each value needs only y at its own place, so
 * the GEMMs that follow read the gradient where the forward pass left y.
 * C is at most 128 (the factors of a call are made once, on the stack).
 */
void maxpool_backward(float *yd, const float *dout, const uint8_t *idx, const float *gamma,
                      const float *mean, const float *invstd, const float *mdz,
                      const float *mdzx, int C, int H, int W, int n0, int nt);

#endif

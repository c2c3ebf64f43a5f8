/*
 * layer_pool.h: BatchNorm (apply) + ReLU + 2x2 max-pool, fused.
 *
 * PyTorch's order is z = BN(y), r = relu(z), out = maxpool2x2(r) (floor:
 * an odd last row or column is dropped).  Doing the three in one pass reads
 * the conv output once and writes a quarter of it.  For backward, each
 * pooled value keeps the index (0..3, row-major in its window) of the first
 * maximum, as PyTorch picks it, or POOL_NOGRAD when that maximum is 0
 * (ReLU clipped it, so no gradient flows through the window).
 *
 * Layout as in layer_conv.h: y (C, N, H, W), out and idx (C, N, H/2, W/2).
 */
#ifndef CNNTOP_LAYER_POOL_H
#define CNNTOP_LAYER_POOL_H

#include <stdint.h>

#define POOL_NOGRAD 4

/* out, idx (may be NULL in evaluation) for images [n0, n0+nt) from
 * y (C, N, H, W) and the BN affine scale (C), shift (C). */
void pool_forward(float *out, uint8_t *idx, const float *y, const float *scale,
                  const float *shift, int C, int N, int H, int W, int n0, int nt);

/* acc (C, 2) += {sum dz, sum dz*xhat} over images [n0, n0+nt), where dz is
 * dout routed back through pool and ReLU, xhat = (y - mean)*invstd. */
void pool_backward_sums(double *acc, const float *dout, const uint8_t *idx,
                        const float *y, const float *mean, const float *invstd,
                        int C, int N, int H, int W, int n0, int nt);

/* dy (C, nt*H*W), the gradient of the conv output for the tile, from dout,
 * idx, y and the BN backward means mdz (C), mdzx (C) (layer_bn.h). */
void pool_backward(float *dy, const float *dout, const uint8_t *idx,
                   const float *y, const float *gamma, const float *mean,
                   const float *invstd, const float *mdz, const float *mdzx,
                   int C, int N, int H, int W, int n0, int nt);

#endif

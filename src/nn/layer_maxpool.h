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
 * Layout as in layer_wino.h: y (C, N, H, W), out and idx (C, N, H/2, W/2).
 */
#ifndef CNNTOP_LAYER_MAXPOOL_H
#define CNNTOP_LAYER_MAXPOOL_H

#include <stdint.h>

#define MAXPOOL_NOGRAD 4
#define MAXPOOL_MAX_PLANE 4096 /* positions in one flat loop: H*W of G planes */

/*
 * The offset tables of a layer's H x W planes, made once per layer.  The
 * kernels run over the windows (forward) or positions (backward) of G
 * consecutive planes of a channel as one flat loop, loading through these
 * tables (gathers): off[q] is where window q starts, win[p] the window of
 * position p and kp[p] its place there (0..3; 9 for a dropped odd row or
 * column).  Row by row, the short rows here (7 or 3 windows) ran mostly in
 * gcc's scalar epilogue, which branches on the data and mispredicts on real
 * activations: 2.5 ns per input against 0.5 through the tables (block 2 at
 * batch 512, one thread).  Planes of even H and W <= 16 (block 2's 14 x 14)
 * need no table: a pair of rows is two vectors whose columns shuffle into
 * place, with no gathers (layer_maxpool.c); the tables serve the others.
 */
typedef struct MaxpoolTables {
    int H, W;                      /* the plane, H*W <= MAXPOOL_MAX_PLANE */
    int G;                         /* planes per loop: MAXPOOL_MAX_PLANE / (H*W) */
    int off[MAXPOOL_MAX_PLANE / 4];   /* (G*H/2*W/2) window starts */
    int win[MAXPOOL_MAX_PLANE];       /* (G*H*W) window of each position */
    float kp[MAXPOOL_MAX_PLANE];      /* (G*H*W) place in that window */
} MaxpoolTables;

void maxpool_tables_init(MaxpoolTables *t, int H, int W);

/*
 * Images [n0, n0+nt) of y (C, N, H, W) into out, idx and ymax (C, N, H/2,
 * W/2), with the BN affine scale (C) and shift (C) and the tables t of
 * H x W.  ymax keeps the conv output y at each window's maximum, which is
 * all the BN backward sums need of y.  idx and ymax are NULL in evaluation.
 */
void maxpool_forward(float *out, uint8_t *idx, float *ymax, const float *y, const float *scale,
                  const float *shift, int C, int N, const MaxpoolTables *t, int n0, int nt);

/* The same for a window split into its four elements, z (4, n): window q
 * is z[q], z[n+q], z[2n+q], z[3n+q] (layer_conv_phase.h); out, idx, ymax
 * (n).  idx and ymax are NULL in evaluation. */
void maxpool_forward_phases(float *out, uint8_t *idx, float *ymax, const float *z, int n,
                         float scale, float shift);

/* acc (C, 2) += {sum dz, sum dz*xhat} over images [n0, n0+nt), where dz is
 * dout routed back through pool and ReLU and xhat = (ymax - mean)*invstd;
 * dout, idx, ymax are (C, N, PHW). */
void maxpool_backward_sums(double *acc, const float *dout, const uint8_t *idx,
                        const float *ymax, const float *mean, const float *invstd,
                        int C, int N, int PHW, int n0, int nt);

/*
 * The gradient of the conv output, in place over images [n0, n0+nt) of yd
 * (C, N, H, W), which holds y on entry: d = a + bx*xhat, plus k1*g at each
 * window's maximum, from dout and idx (C, N, H/2, W/2) and the BN backward
 * means mdz (C), mdzx (C) (layer_bn.h), with k1 = gamma*invstd,
 * a = -k1*mdz, bx = -k1*mdzx, xhat = (y - mean)*invstd.  Each value needs
 * only y at its own place, so the GEMMs that follow read the gradient
 * where the forward pass left y.  t: the tables of H x W.
 */
void maxpool_backward(float *yd, const float *dout, const uint8_t *idx, const float *gamma,
                   const float *mean, const float *invstd, const float *mdz, const float *mdzx,
                   int C, int N, const MaxpoolTables *t, int n0, int nt);

#endif

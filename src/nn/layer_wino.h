/*
 * layer_wino.h: 3x3 convolution, stride 1, padding 1, by Winograd's
 * minimal filtering F(4x4, 3x3), forward and both gradients.
 *
 * The output is cut into 4x4 tiles; each reads a 6x6 patch of the padded
 * input.  With the transforms (Lavin and Gray, "Fast Algorithms for
 * Convolutional Neural Networks", 2015; interpolation points 0, +-1, +-2)
 *
 *   V = B^T d B  (each 6x6 input patch d),   U = G g G^T  (each 3x3 filter g),
 *   y = A^T [sum over in-channels of U . V] A   (each 4x4 output tile),
 *
 * the sum over in-channels is, for each of the 36 points xi of the 6x6
 * domain, one GEMM over the T tiles of a group of images:
 * M_xi (T, OC) = V_xi (T, C) * U_xi^T.  That is 36*C*OC multiply-adds per tile of
 * 16 outputs, where the direct convolution needs 144*C*OC: 4x fewer where
 * tiles cover the image exactly, 3.06x at 14 x 14 (4 x 4 tiles over
 * 16 x 16) and at 7 x 7 (2 x 2 tiles over 8 x 8).  F(2x2, 3x3), which this
 * replaced, did 2.25x and 1.72x there.
 *
 * The gradients are those of this computation, so they are exact for the
 * convolution too (the algorithm computes it exactly in real arithmetic):
 *
 *   DY = A dy A^T (each 4x4 output-gradient tile),
 *   dV_xi = DY_xi U_xi,  dx = sum over tiles of B dV B^T (patches overlap),
 *   dU_xi = DY_xi^T V_xi,  dg = G^T dU G.
 *
 * B and A hold small integers (up to 8), G fractions down to 1/24 (not
 * exact in float).  Rounding grows towards a tile's far corner, where A's
 * 8s weigh: against the largest sum of |terms| of an output plane the
 * error is a few 1e-6; one output against its own sum of |terms| has been
 * seen 4e-5 off (one input channel, 11 x 8), and 1e-6 to 4e-6 at the
 * model's layers.  tests/nn/test_wino.c checks against a double-precision
 * direct convolution.
 *
 * Layout: y and dy (N, H, W, OC), channels-last, and x and dx either
 * channels-last (N, H, W, C) or in channel rows (C, N, H, W), as the
 * WinoLayout argument says (block 2 takes block 1's channel rows, block
 * 3 block 2's channels-last output); w (OC, C, 3, 3).  The transforms
 * work channels-last, so that a vector holds 16 channels of one point and
 * every load and store is contiguous (the channel-major tiles needed
 * gathers, and the transforms cost more than the products so): a group's
 * images are copied into a padded channels-last buffer, a row at a time
 * or, from channel rows, by 16 x 16 register transposes, and transformed
 * tile by tile.  The 36-point arrays are point-major, channels innermost:
 * V and dV (36, T, Cp), M and DY (36, T, OCp), with Cp and OCp the channel
 * counts rounded up to 16; U and dU (36, OC, C).  A group is images
 * [n0, n0+nt) of the batch; its
 * tiles are t = n*TT + i*TJ + j.  The products per point are
 *   M (T, OC) = V (T, C) U^T,  dU (OC, C) = DY^T V,  dV (T, C) = DY U.
 */
#ifndef CNNTOP_LAYER_WINO_H
#define CNNTOP_LAYER_WINO_H

#include "nn/gemm.h"

#define WINO_M 4          /* output tile side */
#define WINO_A 6          /* input patch side, WINO_M + 2 */
#define WINO_P 36         /* points of the transform domain, WINO_A^2 */
#define WINO_SUM_POINT 7  /* the point (1, 1): A dy A^T there is the tile's sum of dy */

/* How x and dx lie: channel rows (C, N, H, W) or channels-last (N, H, W, C). */
typedef enum WinoLayout { WINO_ROWS, WINO_LAST } WinoLayout;

/* The tiling of an H x W image, for groups of up to `cap` images. */
typedef struct WinoShape {
    int H, W;             /* the image */
    int TI, TJ, TT;       /* tile rows, tile columns, tiles per image */
    int PH, PW;           /* the padded image: 4*TI + 2 by 4*TJ + 2 */
    int cap;              /* images per group at most */
} WinoShape;

/* Tiles of one H x W image. */
int wino_tiles(int H, int W);

/* The shape of groups of up to cap (>= 1) images of H x W. */
void wino_shape_init(WinoShape *s, int H, int W, int cap);

/* Scratch floats a group of up to cap images of H x W needs: V (whose
 * place dV takes), M or DY (whose place the padded input and dx take),
 * one image's y or dy on its tile grid, a vector of OC and the positions'
 * offsets (layer_wino.c, regions()). */
long wino_scratch_floats(int H, int W, int C, int OC, int cap);

/* U (36, OC, C) from w (OC, C, 3, 3), for the filter pairs p = oc*C + c
 * in [p0, p1) of the OC*C. */
void wino_filter(float *U, const float *w, long npairs, long p0, long p1);

/* dw (OC, C, 3, 3) for pairs [p0, p1) from dU (36, OC*C), its planes
 * `ld` floats apart (dw = G^T dU G). */
void wino_filter_grad(float *dw, const float *dU, long ld, long p0, long p1);

/* Images [n0, n0+nt) of y (N, H, W, OC) = conv(x, w) + b, with
 * U = wino_filter(w); x laid out as xl says.  scratch:
 * wino_scratch_floats floats; path: where the 36 GEMMs run. */
void wino_forward(float *y, const float *x, WinoLayout xl, const float *U, const float *b,
                  float *scratch, const WinoShape *s, int C, int OC, int N, int n0, int nt,
                  GemmPath path);

/*
 * Backward over one group, images [n0, n0+nt), given dy (N, H, W, OC):
 *   dU (36, OC, C) = beta * dU + DY^T V,  db (OC) = beta * db + sum(dy),
 *   dx's images (laid out as x, as xl says) = the input gradient, when
 *   dx is not NULL (overwritten).
 * path: where the 72 GEMMs run.
 */
void wino_backward(float *dx, float *dU, float *db, const float *dy, const float *x,
                   WinoLayout xl, const float *U, float *scratch, const WinoShape *s, int C,
                   int OC, int N, int n0, int nt, float beta, GemmPath path);

#endif

/*
 * layer_wino.h: 3x3 convolution, stride 1, padding 1, by Winograd's
 * minimal filtering F(7x7, 3x3), forward and both gradients.
 *
 * The output is cut into 7x7 tiles; each reads a 9x9 patch of the padded
 * input.  With the Toom-Cook transforms (Lavin and Gray, "Fast Algorithms
 * for Convolutional Neural Networks", 2015) on the interpolation points
 * +-1, +-2, +-1/4, +-3/4 and infinity (layer_wino.c gives the matrices)
 *
 *   V = B^T d B  (each 9x9 input patch d),   U = G g G^T  (each 3x3 filter g),
 *   y = A^T [sum over in-channels of U . V] A   (each 7x7 output tile),
 *
 * the sum over in-channels is, for each of the 81 points xi of the 9x9
 * domain, one GEMM over the T tiles of a group of images:
 * M_xi (T, OC) = V_xi (T, C) * U_xi^T.  That is 81*C*OC multiply-adds per
 * tile of 49 outputs, where the direct convolution needs 441*C*OC: 5.4x
 * fewer, and the model's 14 x 14 and 7 x 7 are whole tiles (2 x 2 and one).
 * F(4x4, 3x3), which this replaced, did 3.06x there (its 4x4 tiles cover
 * 16 x 16 and 8 x 8), and its products were half the step
 * (bench/RESULTS.md, session 17).
 *
 * The gradients are those of this computation, so they are exact for the
 * convolution too (the algorithm computes it exactly in real arithmetic):
 *
 *   DY = A dy A^T (each 7x7 output-gradient tile),
 *   dV_xi = DY_xi U_xi,  dx = sum over tiles of B dV B^T (patches overlap),
 *   dU_xi = DY_xi^T V_xi,  dg = G^T dU G.
 *
 * A^T holds powers of the points up to 2^6, B^T fractions up to 7.2, G
 * fractions down to about 1/162: float rounds more than F(4x4, 3x3)'s small
 * integers did.  Against the sum of |terms| of an output the error is up
 * to 1.3e-5 at the model's layers and 4.6e-5 on small odd shapes (F(4x4,
 * 3x3): 1e-6 to 4e-6); against PyTorch (tests/ref) the logits are 1e-5
 * off and the gradients 4e-5, and one epoch's accuracy is unchanged
 * (bench/RESULTS.md).  tests/nn/test_wino.c checks against a
 * double-precision direct convolution.
 *
 * Layout: y and dy (N, H, W, OC), channels-last, and x and dx either
 * channels-last (N, H, W, C) or in channel rows (C, N, H, W), as the
 * WinoLayout argument says (block 2 takes block 1's channel rows, block
 * 3 block 2's channels-last output); w (OC, C, 3, 3).  The transforms
 * work channels-last, so that a vector holds VL channels of one point (wino_vec.h) and
 * every load and store is contiguous (the channel-major tiles needed
 * gathers, and the transforms cost more than the products so): a group's
 * images are copied into a padded channels-last buffer, a row at a time
 * or, from channel rows, by VL x VL register transposes, and transformed
 * tile by tile.  The 81-point arrays are point-major, channels innermost:
 * V and dV (81, T, Cp), M and DY (81, T, OCp), with Cp and OCp the channel
 * counts rounded up to whole vectors (wino_vec.h's VL); U (81, OC, C).
 * dU is made a column of the 9 x 9 points at a time, (OC, 9, C), so that
 * a filter pair's 9 points of the column are one run, and reduced at
 * once to E = G^T dU (below, wino_filter_grad_column): the whole dU
 * (2.65 MB at conv3) went out to L3 and back before dg.  A group is images
 * [n0, n0+nt) of the batch; its tiles are t = n*TT + i*TJ + j.  The
 * products per point are
 *   M (T, OC) = V (T, C) U^T,  dU (OC, C) = DY^T V,  dV (T, C) = DY U.
 */
#ifndef CNNTOP_LAYER_WINO_H
#define CNNTOP_LAYER_WINO_H

#include "nn/gemm.h"

#define WINO_M 7          /* output tile side */
#define WINO_A 9          /* input patch side, WINO_M + 2 */
#define WINO_P 81         /* points of the transform domain, WINO_A^2 */
#define WINO_SUM_POINT 0  /* the point (+1, +1): A dy A^T there is the tile's sum of dy */
#define WINO_E 27         /* points of E = G^T dU, 3 x WINO_A (wino_filter_grad) */

/* How x and dx lie: channel rows (C, N, H, W) or channels-last (N, H, W, C). */
typedef enum WinoLayout { WINO_ROWS, WINO_LAST } WinoLayout;

/* The tiling of an H x W image, for groups of up to `cap` images. */
typedef struct WinoShape {
    int H, W;             /* the image */
    int TI, TJ, TT;       /* tile rows, tile columns, tiles per image */
    int PH, PW;           /* the padded image: 7*TI + 2 by 7*TJ + 2 */
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

/* U (81, OC, C) from w (OC, C, 3, 3), for the filter pairs p = oc*C + c
 * in [p0, p1) of the OC*C. */
void wino_filter(float *U, const float *w, long npairs, long p0, long p1);

/* The transforms' FLOPs for one H x W image of C -> OC channels (an add
 * or a multiply 1, a multiply-add 2, as the even and odd forms of
 * wino_transform.h have them; layer_wino.c counts them): the forward,
 * V = B^T d B of each input tile and y = A^T M A + b of each output tile;
 * the backward, V again, DY = A dy A^T and, when dx is 1, dx = B dV B^T.
 * Apart from them: the products, 2 * 81 * C * OC a tile each way, and the
 * filters' transforms (wino_filter_grad_flops). */
double wino_transform_flops(int H, int W, int C, int OC, int backward, int dx);

/*
 * The weight gradient dg = G^T dU G of each filter pair (out-channel oc,
 * in-channel c: pair oc*C + c) in two halves, E = G^T dU (3 x 9) and
 * dg = E G.  wino_backward makes E as dU's products are made, a column
 * of the 9 x 9 points at a time, and sums it over a chunk's groups;
 * wino_filter_grad makes dg from E once a chunk.  E is (OC, 27, C): pair
 * (oc, c)'s point (i, k) of its 3 x 9 at ((oc*27 + 9 i + k) C + c).
 */

/* FLOPs of one column of E (wino_filter_grad_column) for `pairs` pairs. */
double wino_filter_grad_column_flops(long pairs);

/* FLOPs of dg = E G for `pairs` pairs (wino_filter_grad). */
double wino_filter_grad_flops(long pairs);

/* Column k of E = beta * E + G^T (column k of dU) for every pair, from
 * col (OC, 9, C): pair (oc, c)'s point (r, k) of dU at ((oc*9 + r) C + c). */
void wino_filter_grad_column(float *E, const float *col, int C, int OC, int k, float beta);

/* dw (OC, C, 3, 3) for pairs [p0, p1) from E (OC, 27, C): dw = E G. */
void wino_filter_grad(float *dw, const float *E, int C, long p0, long p1);

/* Images [n0, n0+nt) of y (N, H, W, OC) = conv(x, w) + b, with
 * U = wino_filter(w); x laid out as xl says.  stats, when not NULL:
 * (OC, 2) += each channel's sum and sum of squares over the group's
 * outputs (BatchNorm's statistics, summed as the outputs are made).
 * scratch: wino_scratch_floats floats; path: where the 81 GEMMs run. */
void wino_forward(float *y, const float *x, WinoLayout xl, const float *U, const float *b,
                  double *stats, float *scratch, const WinoShape *s, int C, int OC, int N,
                  int n0, int nt, GemmPath path);

/*
 * Backward over one group, images [n0, n0+nt), given dy (N, H, W, OC):
 *   dE (OC, 27, C) = beta * dE + G^T dU with dU = DY^T V (E above),
 *   db (OC) = beta * db + sum(dy),
 *   dx's images (laid out as x, as xl says) = the input gradient, when
 *   dx is not NULL (overwritten).
 * path: where the 162 GEMMs run.
 */
void wino_backward(float *dx, float *dE, float *db, const float *dy, const float *x,
                   WinoLayout xl, const float *U, float *scratch, const WinoShape *s, int C,
                   int OC, int N, int n0, int nt, float beta, GemmPath path);

#endif

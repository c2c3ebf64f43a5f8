/*
 * layer_wino.h: 3x3 convolution, stride 1, padding 1, by Winograd's
 * minimal filtering F(2x2, 3x3), forward and both gradients.
 *
 * The output is cut into 2x2 tiles; each reads a 4x4 patch of the padded
 * input.  With the transforms (Lavin and Gray, "Fast Algorithms for
 * Convolutional Neural Networks", 2015)
 *
 *   V = B^T d B  (each 4x4 input patch d),   U = G g G^T  (each 3x3 filter g),
 *   y = A^T [sum over in-channels of U . V] A   (each 2x2 output tile),
 *
 * the sum over in-channels is, for each of the 16 points xi of the 4x4
 * domain, one GEMM: M_xi (OC, T) = U_xi (OC, C) * V_xi (C, T) over the T
 * tiles of a group of images.  That is 16*C*OC multiply-adds per tile
 * where the direct convolution needs 36*C*OC: 2.25x fewer where the tiles
 * cover the image exactly (14 x 14), 1.72x at 7 x 7 (4 x 4 tiles over 8 x 8).
 *
 * The gradients are those of this computation, so they are exact for the
 * convolution too (the algorithm computes it exactly in real arithmetic):
 *
 *   DY = A dy A^T (each 2x2 output-gradient tile),
 *   dV_xi = U_xi^T DY_xi,  dx = sum over tiles of B dV B^T (patches overlap),
 *   dU_xi = DY_xi V_xi^T,  dg = G^T dU G.
 *
 * All transforms are adds of a few values (and halvings, in G); rounding
 * is comparable to the direct convolution's (tests/test_layers.c checks
 * against a double-precision one).
 *
 * Layout as in the rest of the engine: x (C, N, H, W), y (OC, N, H, W),
 * w (OC, C, 3, 3).  The 16-point arrays are point-major: V (16, C, T),
 * M and DY (16, OC, T), U and dU (16, OC, C).  A group is images
 * [n0, n0+nt) of the batch; its tiles are t = n*TT + i*TJ + j.
 */
#ifndef CNNTOP_LAYER_WINO_H
#define CNNTOP_LAYER_WINO_H

#define WINO_MAX_POS 4096 /* padded input positions of a group, nt*PH*PW, at most */
#define WINO_MAX_TILES (WINO_MAX_POS / 4)

/*
 * The index tables of a layer's groups of up to `cap` images, made once
 * per layer.  Loads go through them (gathers) so that every kernel is one
 * flat loop over a whole group.  A mask says where an index is real (1)
 * or clamped to 0 and its value to be replaced by zero.
 */
typedef struct WinoTables {
    int H, W;             /* the image */
    int TI, TJ, TT;       /* tile rows, tile columns, tiles per image */
    int PH, PW;           /* the padded image: 2*TI + 2 by 2*TJ + 2 */
    int cap;              /* images per group at most */
    int xsrc[WINO_MAX_POS];       /* padded position -> input position (clamped) */
    float xmask[WINO_MAX_POS];
    int xoff[WINO_MAX_TILES];     /* tile -> its patch's corner in the padded group */
    int yq[WINO_MAX_POS];         /* output position -> place in the 4 tile planes */
    int yo[4][WINO_MAX_TILES];    /* tile, place in tile -> output position (clamped) */
    float ym[4][WINO_MAX_TILES];
    int zsrc[4][WINO_MAX_POS];    /* input position -> (patch place, tile) of its 4 patches */
    float zmask[4][WINO_MAX_POS];
} WinoTables;

/* Images per group that fit the tables for H x W: 0 when not even one
 * does (a padded image over WINO_MAX_POS positions, e.g. 63 x 63). */
int wino_max_group(int H, int W);

/* Tables for groups of up to cap (<= wino_max_group) images of H x W. */
void wino_tables_init(WinoTables *t, int H, int W, int cap);

/* Scratch floats a group of up to cap images of H x W needs: V, M (or
 * DY) and dV, and the small per-channel buffers. */
long wino_scratch_floats(int H, int W, int C, int OC, int cap);

/* U (16, OC, C) from w (OC, C, 3, 3), for the filter pairs p = oc*C + c
 * in [p0, p1) of the OC*C. */
void wino_filter(float *U, const float *w, long npairs, long p0, long p1);

/* dw (OC, C, 3, 3) for pairs [p0, p1) from dU (16, OC*C), its planes
 * `ld` floats apart (dw = G^T dU G). */
void wino_filter_grad(float *dw, const float *dU, long ld, long p0, long p1);

/* y[:, n0:n0+nt] (OC, N, H, W) = conv(x, w) + b, with U = wino_filter(w).
 * scratch: wino_scratch_floats floats. */
void wino_forward(float *y, const float *x, const float *U, const float *b,
                  float *scratch, const WinoTables *t, int C, int OC, int N, int n0, int nt);

/*
 * Backward over one group, given dy (OC, nt*H*W) for it, rows ldy apart:
 *   dU (16, OC, C) = beta * dU + DY V^T,  db (OC) = beta * db + sum(dy),
 *   dx[:, n0:n0+nt] (C, N, H, W) = the input gradient, when dx is not NULL
 *   (overwritten).
 */
void wino_backward(float *dx, float *dU, float *db, const float *dy, int ldy,
                   const float *x, const float *U, float *scratch, const WinoTables *t,
                   int C, int OC, int N, int n0, int nt, float beta);

#endif

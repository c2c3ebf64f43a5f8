/*
 * layer_conv_phase.h: the first block's 3x3 convolution of a one-channel
 * image, computed directly in the four phases of the 2x2 pool that follows.
 *
 * Why: conv1 has one input channel, so its im2col matrix has only 9 rows.
 * SGEMM runs such a thin product at 18-30 GFLOP/s here, and its output
 * (32 channels of 28x28: 51 MB at batch 512) is far larger than L2, so
 * storing it and reading it back for the statistics, the pool and the
 * backward pass costs more than computing it.  This layer instead makes
 * up to four output channels of one image at a time (3.5 KB each, in L1),
 * once a step, for the pool.  The BN statistics and the backward pass need no
 * conv output at all: with one input channel they follow from the input's
 * moments (below) and the pool gradient.  A 3x3 convolution of one channel
 * is 9 multiply-adds per output.
 *
 * Phases: output (oh, ow) = (2ph + di, 2pw + dj) belongs to phase
 * k = 2*di + dj, the position in its pool window (row-major, as
 * layer_maxpool.h numbers them).  Each phase is a PH x PW plane stored with
 * row stride CONV_PHASE_Q, so the pool is an elementwise maximum over four
 * arrays, with no strided loads.  The zero-padded input is split the same
 * way into four planes of (PH+1) x (PW+1), so every tap of every phase is
 * one constant offset into one input plane: the loops are flat and
 * vectorise.  Columns PW..CONV_PHASE_Q-1 of an output phase are junk: their
 * values are finite and never used (the sums here drop those lanes).
 *
 * Shapes: H a multiple of 4, W even, W/2 + 1 <= CONV_PHASE_Q; the kernel is 3x3, padding 1,
 * stride 1 (tests/nn/test_conv_phase.c checks it against a double convolution).
 */
#ifndef CNNTOP_LAYER_CONV_PHASE_H
#define CNNTOP_LAYER_CONV_PHASE_H

#include <stddef.h>

#define CONV_PHASE_Q 16 /* row stride of every phase plane, in floats */
#define CONV_PHASE_MOMENTS 90 /* doubles of an input's moments: S (9), then G (9, 9) */

/* Floats of the split input (four planes and their copies one column on). */
size_t conv_phase_input_floats(int H, int W);

/* Floats of one output channel in phases: 4 * (H/2) * CONV_PHASE_Q. */
size_t conv_phase_output_floats(int H, int W);

/* xq <- the four phase planes of x (H x W) zero-padded by one. */
void conv_phase_split(float *xq, const float *x, int H, int W);

/* Output channels conv_phase_conv makes from one pass over the input. */
#define CONV_PHASE_CONV_CH 4

/* z[c] (4, H/2, CONV_PHASE_Q) <- conv(x, w[9c..9c+9) (3x3)) + b[c] for nc
 * output channels, 1 <= nc <= CONV_PHASE_CONV_CH (each as one channel
 * alone would give it, whatever nc). */
void conv_phase_conv(float *const z[], int nc, const float *xq, const float *w, const float *b,
                     int H, int W);

/* dw (9) and *db += the valid lanes of one channel's lanes
 * (CONV_PHASE_DW_LANES, as conv_phase_dw_routed2 sums them).  Folding
 * costs more than one image's sums (28 dependent adds for each of 10
 * numbers), so the lanes run over many images first. */
#define CONV_PHASE_DW_LANES (10 * 2 * CONV_PHASE_Q)
void conv_phase_dw_fold(float *dw, float *db, const float *lanes, int W);

/*
 * The lane sums of the weight and bias gradients of two channels whose
 * output gradient dz_e is their pool gradient routed to the window maxima:
 * la, lb (CONV_PHASE_DW_LANES) += the lanes of sum dz_e X_t and sum dz_e, with
 * dz_e = g_e in phase k_e and 0 in the other three (and wherever k_e is
 * not 0..3, e.g. MAXPOOL_NOGRAD), for g_e and k_e (H/2, CONV_PHASE_Q), the
 * window's phase as a float (a byte is not a lane: gcc converted bytes one
 * by one here).  dz is made in registers, and where the CPU has the
 * registers for both channels' sums (AVX-512) each load of the input serves
 * both: 9 loads for 18 multiply-adds; elsewhere a channel at a time.
 */
void conv_phase_dw_routed2(float *la, float *lb, const float *ga, const float *gb,
                           const float *ka, const float *kb, const float *xq, int H, int W);

/*
 * The moments of the input that a 3x3 convolution of one channel sees.
 * With X_t[p] = xpad[p + t] the input under tap t (t = 3*kh + kw) at
 * output p, z = b + sum_t w_t X_t, and so
 *   sum_p z   = M b + w.S,          S_t  = sum_p X_t[p]
 *   sum_p z^2 = M b^2 + 2b w.S + w'Gw,   G_st = sum_p X_s[p] X_t[p]
 *   sum_p z X_t = b S_t + (Gw)_t
 * over the M outputs: the BN statistics of every output channel and the
 * mean terms of its weight gradient come from these 90 numbers of the
 * input alone, with no convolution (block 1 has one input channel, so
 * they are 9 + 81 numbers per batch whatever OC is).
 */

/* mom (CONV_PHASE_MOMENTS: S, then G row-major) += the moments of the
 * nimg images x (nimg, H, W); xq is scratch of conv_phase_input_floats(). */
void conv_phase_moments(double *mom, float *xq, const float *x, int nimg, int H, int W);

/* The FLOPs conv_phase_moments runs for one H x W image: the sums and
 * products over every lane of its rows' vectors, the masked lanes past W
 * included, and their folds into double. */
double conv_phase_moments_flops(int H, int W);

/* acc (OC, 2) = {sum z, sum z^2} over the M outputs of z = conv(x, w) + b
 * for OC channels (w (OC, 9), b (OC)), from the moments mom of all M. */
void conv_phase_stats_moments(double *acc, const double *mom, const float *w, const float *b,
                              int OC, long M);

/*
 * The weight and bias gradients of OC channels whose output gradient is
 * dz = a + bx*xhat + k1*r (BN backward, layer_bn.h, through ReLU and pool), with
 * k1 = gamma*invstd, a = -k1*mdz, bx = -k1*mdzx, xhat = (z - mean)*invstd
 * and r the pool gradient routed to each window's maximum.  On entry dw
 * (OC, 9) holds sum_p r X_t and db (OC) sum_p r (conv_phase_dw_routed2
 * over all M outputs, folded); on return the gradients, the mean terms
 * made in double from the moments mom of the same M outputs.
 */
void conv_phase_grad_finish(float *dw, float *db, const double *mom, const float *w,
                            const float *b, const float *gamma, const float *mean,
                            const float *invstd, const float *mdz, const float *mdzx, int OC,
                            long M);

#endif

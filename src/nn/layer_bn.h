/*
 * layer_bn.h: BatchNorm2d statistics, as PyTorch computes them.
 *
 * Training normalises with the batch's mean and biased variance and updates
 * the running statistics with the unbiased variance (momentum m):
 *   run_mean = (1-m) run_mean + m mean,  run_var = (1-m) run_var + m var*M/(M-1)
 * Evaluation normalises with the running statistics.  The normalisation
 * itself is fused with ReLU and max-pooling (layer_maxpool.h); this file holds
 * the per-channel reductions: the forward's partial sums, made per chunk of
 * images as the convolution's outputs come (wino_forward, or block 1's
 * moments), combined in chunk order so that the result does not depend on
 * which thread did which chunk, and the backward's.
 */
#ifndef CNNTOP_LAYER_BN_H
#define CNNTOP_LAYER_BN_H

#define BN_EPS 1e-5f
#define BN_MOMENTUM 0.1f

/*
 * Combines nparts partial sums part (nparts, C, 2) over M = N*HW values per
 * channel into mean (C) and invstd (C) = 1/sqrt(var + eps), and updates
 * run_mean/run_var (C) when they are not NULL.
 */
void bn_stats_finish(float *mean, float *invstd, float *run_mean, float *run_var,
                     const double *part, int nparts, int C, long M);

/* mean (C), invstd (C) from the running statistics, for evaluation. */
void bn_stats_running(float *mean, float *invstd, const float *run_mean,
                      const float *run_var, int C);

/* scale = gamma*invstd, shift = beta - mean*scale (C each): the affine map
 * that the fused kernels apply. */
void bn_affine(float *scale, float *shift, const float *gamma, const float *beta,
               const float *mean, const float *invstd, int C);

/*
 * Combines backward partials part (nparts, C, 2) = {sum dz, sum dz*xhat}
 * into dgamma (C), dbeta (C) (overwritten), and the means over M
 * values mdz (C), mdzx (C) that the input gradient needs:
 *   dy = gamma*invstd * (dz - mdz - xhat*mdzx).
 */
void bn_backward_finish(float *dgamma, float *dbeta, float *mdz, float *mdzx,
                        const double *part, int nparts, int C, long M);

/* part (C, 2) <- the sum of the nparts parts (nparts, C, 2), in part order. */
void bn_parts_fold(double *part, int nparts, int C);

/* Data-parallel, statistics synchronised: dgamma, dbeta from this
 * process's sums local (C, 2) (summed across processes later, as the other
 * gradients are), mdz and mdzx the means of the sums over every process,
 * global (C, 2), over their M values. */
void bn_backward_finish_split(float *dgamma, float *dbeta, float *mdz, float *mdzx,
                              const double *local, const double *global, int C, long M);

#endif

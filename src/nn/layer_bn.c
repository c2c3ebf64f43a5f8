/*
 * layer_bn.c: BatchNorm statistics and their backward reductions.
 */
#include <math.h>
#include <string.h>

#include "nn/layer_bn.h"

void bn_stats_finish(float *mean, float *invstd, float *run_mean, float *run_var,
                     const double *part, int nparts, int C, long M)
{
    for (int c = 0; c < C; c++) {
        double s = 0.0, ss = 0.0;
        for (int k = 0; k < nparts; k++) {
            s += part[((size_t)k * C + c) * 2];
            ss += part[((size_t)k * C + c) * 2 + 1];
        }
        double mu = s / (double)M;
        double var = ss / (double)M - mu * mu;
        if (var < 0.0)
            var = 0.0;
        mean[c] = (float)mu;
        invstd[c] = (float)(1.0 / sqrt(var + (double)BN_EPS));
        if (run_mean && run_var) {
            double unbiased = M > 1 ? var * (double)M / (double)(M - 1) : var;
            run_mean[c] = (1.0f - BN_MOMENTUM) * run_mean[c] + BN_MOMENTUM * (float)mu;
            run_var[c] = (1.0f - BN_MOMENTUM) * run_var[c] + BN_MOMENTUM * (float)unbiased;
        }
    }
}

void bn_stats_running(float *mean, float *invstd, const float *run_mean,
                      const float *run_var, int C)
{
    for (int c = 0; c < C; c++) {
        mean[c] = run_mean[c];
        invstd[c] = 1.0f / sqrtf(run_var[c] + BN_EPS);
    }
}

void bn_affine(float *scale, float *shift, const float *gamma, const float *beta,
               const float *mean, const float *invstd, int C)
{
    for (int c = 0; c < C; c++) {
        scale[c] = gamma[c] * invstd[c];
        shift[c] = beta[c] - mean[c] * scale[c];
    }
}

void bn_backward_finish(float *dgamma, float *dbeta, float *mdz, float *mdzx,
                        const double *part, int nparts, int C, long M)
{
    for (int c = 0; c < C; c++) {
        double s = 0.0, sx = 0.0;
        for (int k = 0; k < nparts; k++) {
            s += part[((size_t)k * C + c) * 2];
            sx += part[((size_t)k * C + c) * 2 + 1];
        }
        dbeta[c] = (float)s;
        dgamma[c] = (float)sx;
        mdz[c] = (float)(s / (double)M);
        mdzx[c] = (float)(sx / (double)M);
    }
}

void bn_parts_fold(double *part, int nparts, int C)
{
    for (int k = 1; k < nparts; k++)
        for (int i = 0; i < 2 * C; i++)
            part[i] += part[(size_t)k * C * 2 + (size_t)i];
}

void bn_backward_finish_split(float *dgamma, float *dbeta, float *mdz, float *mdzx,
                              const double *local, const double *global, int C, long M)
{
    for (int c = 0; c < C; c++) {
        dbeta[c] = (float)local[2 * c];
        dgamma[c] = (float)local[2 * c + 1];
        mdz[c] = (float)(global[2 * c] / (double)M);
        mdzx[c] = (float)(global[2 * c + 1] / (double)M);
    }
}

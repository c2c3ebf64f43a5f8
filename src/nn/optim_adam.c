/*
 * optim_adam.c: the Adam update over a flat range of parameters.
 *
 * Subnormal moments: a weight whose gradient is exactly 0 from some step
 * on (fc1 rows behind a dead ReLU unit) has m shrink by b1 every step,
 * through the subnormal range below FLT_MIN, where x86 arithmetic takes a
 * microcode assist per operation: after 900 steps at batch 64 some 5-10k
 * of every 16k parameters of fc1 had a subnormal m, and Adam took 0.50 ms
 * a step over a whole epoch, against 0.22 over its first third.  So a
 * moment below FLT_MIN becomes 0: 0.29 ms over the epoch (products
 * g * g below FLT_MIN still take the assist).  The effect on p is below
 * 1e-30 (m / (sqrt(v) + eps) with eps 1e-8): none, in float.
 */
#include <float.h>
#include <math.h>

#include "nn/optim_adam.h"

void adam_update(float *p, float *m, float *v, const float *g, long i0, long i1,
                 long t, double lr)
{
    const float b1 = (float)ADAM_BETA1, b2 = (float)ADAM_BETA2;
    /* 1 - beta in double, then rounded: 1.0f - 0.999f is 9.99987e-4, not 1e-3. */
    const float omb1 = (float)(1.0 - ADAM_BETA1), omb2 = (float)(1.0 - ADAM_BETA2);
    const double bc1 = 1.0 - pow(ADAM_BETA1, (double)t);
    const double bc2 = 1.0 - pow(ADAM_BETA2, (double)t);
    const float step = (float)(lr / bc1);
    const float bc2s = (float)sqrt(bc2);
    const float eps = (float)ADAM_EPS;

    for (long i = i0; i < i1; i++) {
        const float mi = b1 * m[i] + omb1 * g[i], vi = b2 * v[i] + omb2 * g[i] * g[i];
        m[i] = fabsf(mi) < FLT_MIN ? 0.0f : mi;
        v[i] = vi < FLT_MIN ? 0.0f : vi;
        p[i] -= step * m[i] / (sqrtf(v[i]) / bc2s + eps);
    }
}

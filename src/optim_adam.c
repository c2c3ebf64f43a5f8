/*
 * optim_adam.c: the Adam update over a flat range of parameters.
 */
#include <math.h>

#include "optim_adam.h"

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
        m[i] = b1 * m[i] + omb1 * g[i];
        v[i] = b2 * v[i] + omb2 * g[i] * g[i];
        p[i] -= step * m[i] / (sqrtf(v[i]) / bc2s + eps);
    }
}

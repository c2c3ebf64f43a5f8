/*
 * optim_adam.h: Adam with bias correction, exactly as torch.optim.Adam
 * (no weight decay, no amsgrad):
 *   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
 *   p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
 */
#ifndef CNNTOP_OPTIM_ADAM_H
#define CNNTOP_OPTIM_ADAM_H

#define ADAM_BETA1 0.9
#define ADAM_BETA2 0.999
#define ADAM_EPS 1e-8

/* Updates p, m, v over [i0, i1) for step t (1-based) given gradient g. */
void adam_update(float *p, float *m, float *v, const float *g, long i0, long i1,
                 long t, double lr);

#endif

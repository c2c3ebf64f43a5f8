/*
 * gradcheck.c: central finite differences against a layer's analytic
 * gradient (gradcheck.h).
 */
#include <math.h>

#include "gradcheck.h"

double gradcheck_diff(const GradCheck *gc, const GradInput *in, size_t i, int *kink)
{
    /* The quotient divides by the step the input really took: a float
     * array's eps is rounded to float first. */
    const double step = in->f ? (double)(float)gc->eps : gc->eps;
    double lp, lm;
    int k = 0;

    if (in->f) {
        const float v = in->f[i], eps = (float)gc->eps;
        in->f[i] = v + eps;
        lp = gc->loss(gc->ctx);
        k |= gc->kink && gc->kink(gc->ctx);
        in->f[i] = v - eps;
        lm = gc->loss(gc->ctx);
        k |= gc->kink && gc->kink(gc->ctx);
        in->f[i] = v;
    } else {
        const double v = in->d[i];
        in->d[i] = v + gc->eps;
        lp = gc->loss(gc->ctx);
        k |= gc->kink && gc->kink(gc->ctx);
        in->d[i] = v - gc->eps;
        lm = gc->loss(gc->ctx);
        k |= gc->kink && gc->kink(gc->ctx);
        in->d[i] = v;
    }
    if (kink)
        *kink = k;
    return (lp - lm) / (2.0 * step);
}

Worst gradcheck_run(const GradCheck *gc, const GradInput *in, long *skipped)
{
    Worst w = {.floor = gc->floor};
    long skip = 0;

    for (size_t i = 0; i < in->n; i++) {
        double v = in->f ? (double)in->f[i] : in->d[i];
        int kink = 0;
        if (fabs(v) < gc->skip_below) {
            skip++;
            continue;
        }
        double fd = gradcheck_diff(gc, in, i, &kink);
        if (kink) {
            skip++;
            continue;
        }
        worst_add(&w, (long)i, in->grad[i], fd);
    }
    if (skipped)
        *skipped += skip;
    return w;
}

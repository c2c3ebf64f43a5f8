/*
 * gradcheck.h: the one central finite-difference check of the layer tests.
 *
 * A test states its loss L (a function of some arrays it owns, usually
 * L = sum(layer(...) * R) for a fixed random R), the analytic gradient of
 * L its layer's backward gave for each array, and a step eps.  For every
 * element e of an array, gradcheck_run() sets e = v + eps and v - eps in
 * place (in float for a float array, so that the layer sees exactly the
 * input a float training step would), calls the loss at both, puts v back,
 * and compares (L+ - L-) / 2eps with the analytic gradient by rel()
 * (nntest.h).  An element is skipped, and counted, when it lies within
 * skip_below of zero (a ReLU kink inside the step) or when the test's kink
 * callback says an evaluation crossed a non-differentiable point (a pool's
 * choice changed).
 *
 * The loss is evaluated in double from whatever the layer computes; the
 * arrays and the callbacks belong to the test.
 */
#ifndef CNNTOP_TEST_GRADCHECK_H
#define CNNTOP_TEST_GRADCHECK_H

#include <stddef.h>

#include "nntest.h"

/* L at the arrays' current values. */
typedef double (*GradLossFn)(void *ctx);

/* Called after each loss evaluation: non-zero when that evaluation crossed
 * a point where L is not differentiable, so the element is skipped. */
typedef int (*GradKinkFn)(void *ctx);

typedef struct GradCheck {
    GradLossFn loss;
    GradKinkFn kink;   /* may be NULL */
    void *ctx;         /* passed to both */
    double eps;        /* the step, e.g. 1e-3 (rounded to float for a float array) */
    double floor;      /* of rel(), e.g. 2e-2 (0: 1e-3) */
    double skip_below; /* skip elements with |v| < this, e.g. 2e-3 (0: none) */
} GradCheck;

/* One input of L and its analytic gradient. */
typedef struct GradInput {
    float *f;          /* the input (n), perturbed in place and restored, */
    double *d;         /* or this one in double: exactly one is set */
    size_t n;
    const float *grad; /* (n) dL/d input from the layer's backward */
} GradInput;

/* The central difference (L(v + eps) - L(v - eps)) / 2eps of element i of
 * `in` (its value restored after); *kink (may be NULL) is set to whether
 * either evaluation crossed a kink.  For a test that picks its elements
 * and judges them by its own rule (test_model.c). */
double gradcheck_diff(const GradCheck *gc, const GradInput *in, size_t i, int *kink);

/* Compares every element of `in` as above.  Returns the worst error (its
 * n counts the elements compared); *skipped (may be NULL) is increased by
 * the elements skipped.  The input's values are unchanged on return. */
Worst gradcheck_run(const GradCheck *gc, const GradInput *in, long *skipped);

/* One check per input (check.h's count): the worst rel error <= tol. */
#define CHECK_GRAD(gc, in, skipped, tol, what)                                 \
    do {                                                                       \
        Worst check_g_ = gradcheck_run((gc), (in), (skipped));                 \
        CHECK_WORST(&check_g_, (tol), (what));                                 \
    } while (0)

#endif

/*
 * loss_xent.c: softmax cross-entropy.
 */
#include <math.h>
#include <stddef.h>

#include "nn/loss_xent.h"

double xent_forward(float *probs, const float *logits, const uint8_t *labels,
                    int N, int NC)
{
    double total = 0.0;

    for (int n = 0; n < N; n++) {
        const float *l = logits + (size_t)n * NC;
        float *p = probs + (size_t)n * NC;
        float mx = l[0];
        for (int k = 1; k < NC; k++)
            mx = l[k] > mx ? l[k] : mx;
        double sum = 0.0;
        for (int k = 0; k < NC; k++) {
            p[k] = expf(l[k] - mx);
            sum += p[k];
        }
        for (int k = 0; k < NC; k++)
            p[k] = (float)(p[k] / sum);
        /* sum >= 1, as the largest logit's own term is expf(0): cppcheck
         * cannot see that and takes log(0) as possible. */
        /* cppcheck-suppress invalidFunctionArg */
        total += log(sum) - (double)(l[labels[n]] - mx);
    }
    return total / N;
}

void xent_backward(float *dlogits, const float *probs, const uint8_t *labels,
                   int N, int NC)
{
    xent_backward_over(dlogits, probs, labels, N, NC, N);
}

void xent_backward_over(float *dlogits, const float *probs, const uint8_t *labels,
                        int N, int NC, int count)
{
    const float inv = 1.0f / (float)count;

    for (int n = 0; n < N; n++)
        for (int k = 0; k < NC; k++) {
            size_t i = (size_t)n * NC + k;
            dlogits[i] = (probs[i] - (k == labels[n] ? 1.0f : 0.0f)) * inv;
        }
}

long xent_correct(const float *logits, const uint8_t *labels, int N, int NC)
{
    long correct = 0;

    for (int n = 0; n < N; n++) {
        const float *l = logits + (size_t)n * NC;
        int best = 0;
        for (int k = 1; k < NC; k++)
            if (l[k] > l[best])
                best = k;
        correct += best == labels[n];
    }
    return correct;
}

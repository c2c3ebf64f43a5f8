/*
 * loss_xent.h: softmax cross-entropy, mean over the batch.
 *
 * logits, probs, dlogits: (N, NC) row-major; labels (N) in [0, NC).
 */
#ifndef CNNTOP_LOSS_XENT_H
#define CNNTOP_LOSS_XENT_H

#include <stdint.h>

/* probs = softmax(logits); returns the mean of -log probs[label]
 * (computed from log-sum-exp, so it is finite while the logits are). */
double xent_forward(float *probs, const float *logits, const uint8_t *labels,
                    int N, int NC);

/* dlogits = (probs - onehot(labels)) / N. */
void xent_backward(float *dlogits, const float *probs, const uint8_t *labels,
                   int N, int NC);

/* dlogits = (probs - onehot(labels)) / count: the gradient of the mean
 * over `count` images, of which these N are a share (data-parallel). */
void xent_backward_over(float *dlogits, const float *probs, const uint8_t *labels,
                        int N, int NC, int count);

/* Rows whose largest logit is at the label (first maximum wins). */
long xent_correct(const float *logits, const uint8_t *labels, int N, int NC);

#endif

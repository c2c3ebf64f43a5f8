/*
 * layer_dropout.h: ReLU followed by dropout, fused.
 *
 * Training: h = relu(z) * keep / (1 - p), keep drawn per element from the
 * counter-based generator under `key` (one 64-bit draw gives 64 elements'
 * bits, element e uses bit e%64 of draw e/64, kept when the bit is 1 for
 * p = 0.5).  The mask byte stores whether the gradient flows (z > 0 and
 * kept).  Evaluation: h = relu(z), no mask.
 * Layout: z, h (N, F) row-major; the element index is n*F + f.
 */
#ifndef CNNTOP_LAYER_DROPOUT_H
#define CNNTOP_LAYER_DROPOUT_H

#include <stdint.h>

#define DROPOUT_P 0.5f

/* Rows [n0, n1): h = relu(z) (in place allowed), dropped when mask != NULL. */
void dropout_relu_forward(float *h, uint8_t *mask, const float *z, int F,
                          int n0, int n1, uint64_t key);

/* The same for rows that are rows first + n0 .. first + n1 of the whole
 * step's images (data-parallel: this process holds a share of them): the
 * keep bits are those of element (first + n)*F + f, so that an image's
 * mask does not depend on which process holds it. */
void dropout_relu_forward_at(float *h, uint8_t *mask, const float *z, int F,
                             int n0, int n1, uint64_t key, long first);

/* Rows [n0, n1): dz = dh * mask / (1 - p) (in place allowed). */
void dropout_relu_backward(float *dz, const float *dh, const uint8_t *mask,
                           int F, int n0, int n1);

/* The keep bit of element e under key (exposed for tests and the
 * PyTorch cross-check, which replays the same masks). */
int dropout_keep(uint64_t key, uint64_t e);

#endif

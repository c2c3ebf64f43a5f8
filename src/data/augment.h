/*
 * augment.h: per-sample data augmentation in the loader.
 *
 * Each output pixel p (x, y) samples the input image bilinearly at
 *
 *     s(p) = c + R(-theta) (p - t - c) + alpha * (G_sigma * u)(p)
 *
 * where c is the image centre, t an integer translation (shift: |tx|, |ty|
 * <= 2 px), theta a rotation (rotate: uniform in [-15, 15] degrees), u a
 * field of independent uniform [-1, 1] displacements per pixel and axis,
 * smoothed by a Gaussian of sigma 4 px (truncated at 3 sigma, zero outside
 * the image) and scaled by alpha = 34 px (elastic: Simard, Steinkraus and
 * Platt 2003, their values for MNIST).  Samples outside the image read as
 * 0, the background.  The pixel values are then normalised like
 * loader_lut().  With every parameter zero the output equals the plain
 * normalised image, bit for bit.
 *
 * The random draws are a pure function of (seed, epoch, sample index): no
 * dependence on which loader thread prepares the sample.
 */
#ifndef CNNTOP_AUGMENT_H
#define CNNTOP_AUGMENT_H

#include <stdint.h>

#define AUG_SHIFT_MAX 2
#define AUG_ROTATE_MAX_DEG 15.0f
#define AUG_ELASTIC_ALPHA 34.0f
#define AUG_ELASTIC_SIGMA 4.0f
#define AUG_MAX_PIX 1024   /* images up to 32x32 */

typedef struct AugParams {
    int tx, ty;        /* translation, px */
    float theta;       /* rotation, radians */
    int elastic;       /* 1: apply the displacement field below */
    float ex[AUG_MAX_PIX], ey[AUG_MAX_PIX]; /* smoothed, scaled displacements */
} AugParams;

/* Draws the parameters of `aug` (CN_AUG_* bits) for one sample. */
void augment_draw(AugParams *ap, unsigned aug, int rows, int cols, uint64_t seed, long epoch,
                  uint32_t sample);

/* out (rows*cols) <- the normalised, transformed image src. */
void augment_apply(float *out, const uint8_t *src, int rows, int cols, const AugParams *ap);

#endif

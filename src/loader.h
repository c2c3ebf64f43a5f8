/*
 * loader.h: assembling a batch from the data set.
 *
 * A batch is N images gathered in the order of an index list (a slice of the
 * epoch's permutation), converted from uint8 to normalised floats exactly as
 * torchvision's ToTensor + Normalize((0.1307,), (0.3081,)) do in float32,
 * and written contiguously: x (N, rows*cols), labels (N).
 */
#ifndef CNNTOP_LOADER_H
#define CNNTOP_LOADER_H

#include <stdint.h>

#define LOADER_MEAN 0.1307f
#define LOADER_STD 0.3081f

/* lut[p] = (p/255 - mean)/std in float32 for every pixel value p. */
void loader_lut(float lut[256]);

/* x (n, npix), labels (n) <- images (., npix), all_labels (.) at idx[0..n). */
void loader_fill(float *x, uint8_t *labels, const uint8_t *images,
                 const uint8_t *all_labels, const uint32_t *idx, int n,
                 int npix, const float lut[256]);

#endif

/*
 * wino_vec.h: the vectors of the Winograd layer's transforms (private to
 * layer_wino*.c): VL floats, one channel each, at one point of a tile.
 * GNU C vectors: one AVX-512 register, two AVX2 ones, scalar code
 * elsewhere.
 */
#ifndef CNNTOP_WINO_VEC_H
#define CNNTOP_WINO_VEC_H

#include <string.h>

#include "nn/layer_wino.h"

#define M WINO_M
#define A WINO_A
#define VL 16 /* floats a vector: channels at a point */
#define WINO_PAIRS 4 /* the symmetric pairs +-p of interpolation points */

typedef float vf __attribute__((vector_size(VL * sizeof(float))));

static inline vf vld(const float *p)
{
    vf v;

    memcpy(&v, p, sizeof v);
    return v;
}

static inline void vst(float *p, vf v)
{
    memcpy(p, &v, sizeof v);
}

#endif

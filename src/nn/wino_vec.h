/*
 * wino_vec.h: the vectors of the Winograd layer's transforms (private to
 * layer_wino*.c): VL floats, one channel each, at one point of a tile.
 * GNU C vectors of one register: 16 floats on AVX-512, 8 elsewhere (two
 * SSE registers without AVX).  A 1-D transform holds 9 vectors and its
 * temporaries: 16-float vectors on AVX2 were 18 of its 16 registers
 * before any temporary, and gcc spilled them (tile_input: 1296 stack
 * references for 936 FMAs); at 8 floats the step ran 1.02-1.16x as fast
 * at batch 512, 1.10x at 64, with the same results (each lane is one
 * channel, added in the same order at any width; bench/RESULTS.md,
 * session 22).
 */
#ifndef CNNTOP_WINO_VEC_H
#define CNNTOP_WINO_VEC_H

#include <string.h>

#include "nn/layer_wino.h"

#define M WINO_M
#define A WINO_A
#if defined(__AVX512F__)
#define VL 16 /* floats a vector: channels at a point */
#else
#define VL 8
#endif
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

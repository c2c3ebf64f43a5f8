/*
 * params.h: the reference model's tensors and where they live.
 *
 * The learnable tensors (weights, biases, BatchNorm gamma/beta) are one
 * table, params_tensors[], in PyTorch's state_dict order and names.  Four
 * blocks share its layout: parameters, gradients, Adam's m and v; each
 * tensor starts 64-byte aligned inside its block, and the padding between
 * tensors stays zero.  BatchNorm running statistics are a fifth, smaller
 * block with its own table.
 */
#ifndef CNNTOP_PARAMS_H
#define CNNTOP_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#define MODEL_H 28        /* input rows */
#define MODEL_W 28        /* input cols */
#define MODEL_K 3         /* conv kernel side */
#define MODEL_CLASSES 10
#define MODEL_FLAT 1152   /* 128 * 3 * 3 */

enum {
    T_C1W, T_C1B, T_BN1G, T_BN1B,
    T_C2W, T_C2B, T_BN2G, T_BN2B,
    T_C3W, T_C3B, T_BN3G, T_BN3B,
    T_F1W, T_F1B, T_F2W, T_F2B, T_F3W, T_F3B,
    MODEL_NTENSORS
};

enum {
    R_BN1_MEAN, R_BN1_VAR, R_BN2_MEAN, R_BN2_VAR, R_BN3_MEAN, R_BN3_VAR,
    MODEL_NRUNNING
};

typedef enum InitKind { INIT_UNIFORM, INIT_ONE, INIT_ZERO } InitKind;

typedef struct TensorDesc {
    const char *name; /* PyTorch state_dict key, e.g. "conv1.weight" */
    int ndim;         /* 1, 2 or 4 */
    int dims[4];      /* e.g. {32, 1, 3, 3} */
    int fan_in;       /* for INIT_UNIFORM: bound = 1/sqrt(fan_in) */
    InitKind init;
} TensorDesc;

extern const TensorDesc params_tensors[MODEL_NTENSORS];
extern const TensorDesc params_running[MODEL_NRUNNING];

typedef struct Params {
    float *params;          /* (nfloats) the parameter block, owned */
    float *grads;           /* (nfloats) gradients, owned */
    float *adam_m;          /* (nfloats) Adam first moments, owned */
    float *adam_v;          /* (nfloats) Adam second moments, owned */
    float *running;         /* (nrunning) BN running statistics, owned */
    float *p[MODEL_NTENSORS]; /* pointers into params */
    float *g[MODEL_NTENSORS]; /* pointers into grads */
    float *r[MODEL_NRUNNING]; /* pointers into running */
    size_t off[MODEL_NTENSORS]; /* float offset of each tensor in a block */
    size_t nfloats;         /* block length with padding, e.g. 422720 */
    size_t nrunning;        /* running block length with padding */
    long adam_t;            /* Adam steps taken */
} Params;

/* Elements of a tensor described by d. */
size_t params_numel(const TensorDesc *d);

/* Allocates the blocks and initialises them as PyTorch would (uniform
 * +-1/sqrt(fan_in) weights and biases, BN gamma 1, beta 0, running mean 0,
 * var 1) from `seed`.  Returns 0 or -CN_ENOMEM. */
int params_init(Params *ps, uint64_t seed);

/* Frees the blocks; safe on a zeroed or freed Params. */
void params_done(Params *ps);

/* Learnable parameters, without padding: 422474 for the reference model. */
size_t params_count(void);

#endif

/*
 * params.c: the tensor table, block layout and PyTorch-style initialisation.
 */
#include <math.h>
#include <string.h>

#include "util/arena.h"
#include "cnntop/err.h"
#include "nn/params.h"
#include "util/rng.h"

const TensorDesc params_tensors[MODEL_NTENSORS] = {
    [T_C1W] = {"conv1.weight", 4, {32, 1, 3, 3}, 9, INIT_UNIFORM},
    [T_C1B] = {"conv1.bias", 1, {32}, 9, INIT_UNIFORM},
    [T_BN1G] = {"bn1.weight", 1, {32}, 0, INIT_ONE},
    [T_BN1B] = {"bn1.bias", 1, {32}, 0, INIT_ZERO},
    [T_C2W] = {"conv2.weight", 4, {64, 32, 3, 3}, 288, INIT_UNIFORM},
    [T_C2B] = {"conv2.bias", 1, {64}, 288, INIT_UNIFORM},
    [T_BN2G] = {"bn2.weight", 1, {64}, 0, INIT_ONE},
    [T_BN2B] = {"bn2.bias", 1, {64}, 0, INIT_ZERO},
    [T_C3W] = {"conv3.weight", 4, {128, 64, 3, 3}, 576, INIT_UNIFORM},
    [T_C3B] = {"conv3.bias", 1, {128}, 576, INIT_UNIFORM},
    [T_BN3G] = {"bn3.weight", 1, {128}, 0, INIT_ONE},
    [T_BN3B] = {"bn3.bias", 1, {128}, 0, INIT_ZERO},
    [T_F1W] = {"fc1.weight", 2, {256, 1152}, 1152, INIT_UNIFORM},
    [T_F1B] = {"fc1.bias", 1, {256}, 1152, INIT_UNIFORM},
    [T_F2W] = {"fc2.weight", 2, {128, 256}, 256, INIT_UNIFORM},
    [T_F2B] = {"fc2.bias", 1, {128}, 256, INIT_UNIFORM},
    [T_F3W] = {"fc3.weight", 2, {10, 128}, 128, INIT_UNIFORM},
    [T_F3B] = {"fc3.bias", 1, {10}, 128, INIT_UNIFORM},
};

const TensorDesc params_running[MODEL_NRUNNING] = {
    [R_BN1_MEAN] = {"bn1.running_mean", 1, {32}, 0, INIT_ZERO},
    [R_BN1_VAR] = {"bn1.running_var", 1, {32}, 0, INIT_ONE},
    [R_BN2_MEAN] = {"bn2.running_mean", 1, {64}, 0, INIT_ZERO},
    [R_BN2_VAR] = {"bn2.running_var", 1, {64}, 0, INIT_ONE},
    [R_BN3_MEAN] = {"bn3.running_mean", 1, {128}, 0, INIT_ZERO},
    [R_BN3_VAR] = {"bn3.running_var", 1, {128}, 0, INIT_ONE},
};

size_t params_numel(const TensorDesc *d)
{
    size_t n = 1;
    for (int i = 0; i < d->ndim; i++)
        n *= (size_t)d->dims[i];
    return n;
}

size_t params_count(void)
{
    size_t n = 0;
    for (int t = 0; t < MODEL_NTENSORS; t++)
        n += params_numel(&params_tensors[t]);
    return n;
}

/* 16 floats = 64 bytes. */
static size_t pad16(size_t n)
{
    return (n + 15) / 16 * 16;
}

static void tensor_fill(float *x, const TensorDesc *d, uint64_t seed, int t)
{
    size_t n = params_numel(d);

    if (d->init != INIT_UNIFORM) {
        for (size_t i = 0; i < n; i++)
            x[i] = d->init == INIT_ONE ? 1.0f : 0.0f;
        return;
    }
    /* kaiming_uniform(a=sqrt(5)) gives the same bound as the bias init. */
    float bound = 1.0f / sqrtf((float)d->fan_in);
    uint64_t key = rng_key(seed, RNG_INIT, (uint64_t)t);
    for (size_t i = 0; i < n; i++)
        x[i] = (2.0f * rng_unit(rng_at(key, i)) - 1.0f) * bound;
}

int params_init(Params *ps, uint64_t seed)
{
    size_t off = 0, roff[MODEL_NRUNNING];

    memset(ps, 0, sizeof *ps);
    for (int t = 0; t < MODEL_NTENSORS; t++) {
        ps->off[t] = off;
        off += pad16(params_numel(&params_tensors[t]));
    }
    ps->nfloats = off;
    off = 0;
    for (int r = 0; r < MODEL_NRUNNING; r++) {
        roff[r] = off;
        off += pad16(params_numel(&params_running[r]));
    }
    ps->nrunning = off;

    size_t bytes = ps->nfloats * sizeof(float);
    ps->params = mem_alloc(bytes);
    ps->grads = mem_alloc(bytes);
    ps->adam_m = mem_alloc(bytes);
    ps->adam_v = mem_alloc(bytes);
    ps->running = mem_alloc(ps->nrunning * sizeof(float));
    if (!ps->params || !ps->grads || !ps->adam_m || !ps->adam_v || !ps->running) {
        params_done(ps);
        return -CN_ENOMEM;
    }
    for (int t = 0; t < MODEL_NTENSORS; t++) {
        ps->p[t] = ps->params + ps->off[t];
        ps->g[t] = ps->grads + ps->off[t];
        tensor_fill(ps->p[t], &params_tensors[t], seed, t);
    }
    for (int r = 0; r < MODEL_NRUNNING; r++) {
        ps->r[r] = ps->running + roff[r];
        tensor_fill(ps->r[r], &params_running[r], seed, r);
    }
    return 0;
}

void params_done(Params *ps)
{
    mem_free(ps->params);
    mem_free(ps->grads);
    mem_free(ps->adam_m);
    mem_free(ps->adam_v);
    mem_free(ps->running);
    memset(ps, 0, sizeof *ps);
}

/*
 * model_acts.c: the activation arena of one batch capacity (model.h's
 * Acts): planned by one carving pass without memory, then allocated in one
 * block and carved again, so that the step allocates nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "nn/model_impl.h"

/* Floats of block 1's scratch in one thread's scratch (model_phase_bufs). */
static size_t phase_scratch_floats(void)
{
    const ConvSpec *cs = &model_conv_specs[0];
    return PHASE_IMAGES * conv_phase_input_floats(cs->H, cs->W) +
           CONV_PHASE_CONV_CH * conv_phase_output_floats(cs->H, cs->W) +
           6 * model_phase_n() + model_phase_n() / sizeof(float) + 32 +
           (size_t)cs->OC * CONV_PHASE_DW_LANES;
}

/* ---- the arena ---- */

static void acts_carve(Acts *a, int B, int T)
{
    Arena *ar = &a->arena;
    size_t f = sizeof(float);

    a->B = B;
    a->threads = T;
    a->x = arena_push(ar, (size_t)B * MODEL_H * MODEL_W * f);
    a->labels = arena_push(ar, (size_t)B);
    size_t scratch = phase_scratch_floats();
    for (int l = 0; l < MODEL_NBLOCKS; l++) {
        const ConvSpec *cs = &model_conv_specs[l];
        BlockBufs *bb = &a->blk[l];
        size_t hw = (size_t)cs->H * cs->W, phw = (size_t)(cs->H / 2) * (cs->W / 2);
        size_t oc = (size_t)cs->OC;
        /* A group never spans chunks: no larger than the largest. */
        const int most = model_block_chunk_most(l, B);
        bb->group = l == 0 ? 0 : model_spec_group(cs);
        bb->group = bb->group > most ? most : bb->group;
        /* Block 1's conv output is never stored: layer_conv_phase.h. */
        bb->y = l == 0 ? NULL : arena_push(ar, oc * B * hw * f);
        bb->U = l == 0 ? NULL : arena_push(ar, WINO_P * (size_t)model_spec_pairs(cs) * f);
        bb->ws = l == 0 ? NULL : arena_push(ar, sizeof(WinoShape));
        bb->idx = arena_push(ar, oc * B * phw);
        bb->ymax = arena_push(ar, oc * B * phw * f);
        bb->out = arena_push(ar, oc * B * phw * f);
        bb->dout = arena_push(ar, oc * B * phw * f);
        bb->mean = arena_push(ar, oc * f);
        bb->invstd = arena_push(ar, oc * f);
        bb->scale = arena_push(ar, oc * f);
        bb->shift = arena_push(ar, oc * f);
        bb->mdz = arena_push(ar, oc * f);
        bb->mdzx = arena_push(ar, oc * f);
        bb->part = arena_push(ar, MODEL_MAX_CHUNKS * oc * 2 * sizeof(double));
        bb->mom = l > 0 ? NULL
                        : arena_push(ar, (MODEL_MAX_CHUNKS + 1) * CONV_PHASE_MOMENTS * sizeof(double));
        /* As many chunks as a batch of B has (no more at a smaller one):
         * the arena's 2 MiB pages keep every slot resident, used or not
         * (MODEL_MAX_CHUNKS slots held 5.2 MiB more at batch 64). */
        bb->dwpart = arena_push(ar, (size_t)model_block_chunks(l, B) * model_spec_dwlen(l) * f);
        if (l > 0) {
            size_t need = model_wino_thread_floats(cs, bb->group);
            scratch = need > scratch ? need : scratch;
        }
    }
    a->flat = arena_push(ar, (size_t)B * MODEL_FLAT * f);
    a->dflat = arena_push(ar, (size_t)B * MODEL_FLAT * f);
    a->h1 = arena_push(ar, (size_t)B * 256 * f);
    a->dh1 = arena_push(ar, (size_t)B * 256 * f);
    a->m1 = arena_push(ar, (size_t)B * 256);
    a->h2 = arena_push(ar, (size_t)B * 128 * f);
    a->dh2 = arena_push(ar, (size_t)B * 128 * f);
    a->m2 = arena_push(ar, (size_t)B * 128);
    a->logits = arena_push(ar, (size_t)B * MODEL_CLASSES * f);
    a->probs = arena_push(ar, (size_t)B * MODEL_CLASSES * f);
    a->dlogits = arena_push(ar, (size_t)B * MODEL_CLASSES * f);
    for (int t = 0; t < T; t++) {
        float *p = arena_push(ar, scratch * f);
        if (a->scratch)
            a->scratch[t] = p;
    }
}

size_t acts_bytes(int B, int threads)
{
    Acts a;

    memset(&a, 0, sizeof a);
    arena_plan(&a.arena);
    acts_carve(&a, B, threads);
    return a.arena.used + (size_t)threads * sizeof(float *);
}

int acts_init(Acts *a, int B, int threads)
{
    memset(a, 0, sizeof *a);
    arena_plan(&a->arena);
    acts_carve(a, B, threads);
    size_t need = a->arena.used;
    a->scratch = calloc((size_t)threads, sizeof *a->scratch);
    if (!a->scratch || arena_init(&a->arena, need) != 0) {
        acts_done(a);
        return -CN_ENOMEM;
    }
    acts_carve(a, B, threads);
    if (arena_overflowed(&a->arena)) { /* the two carving passes disagree: a bug */
        acts_done(a);
        return -CN_ESTATE;
    }
    for (int l = 1; l < MODEL_NBLOCKS; l++) {
        const ConvSpec *cs = &model_conv_specs[l];
        wino_shape_init(a->blk[l].ws, cs->H, cs->W, a->blk[l].group);
    }
    return 0;
}

void acts_done(Acts *a)
{
    arena_done(&a->arena);
    free(a->scratch);
    a->scratch = NULL;
}

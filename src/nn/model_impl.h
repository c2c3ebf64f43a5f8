/*
 * model_impl.h: what the parts of the model (model.c, model_acts.c,
 * model_forward.c, model_backward.c, model_cost.c) share and nothing else
 * includes: the layer tables, the work partition, block 1's scratch
 * layout and the job of one phase.
 *
 * The tables are static const here, not extern, so that every part sees
 * the shapes as constants (block 1's row copies and loops are compiled for
 * 28 x 28, as they were when the model was one file).
 *
 * Shape letters: N images in this step (<= B), C/OC channels, H x W.
 */
#ifndef CNNTOP_MODEL_IMPL_H
#define CNNTOP_MODEL_IMPL_H

#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "nn/layer_conv_phase.h"
#include "nn/layer_wino.h"
#include "nn/model.h"

#define FC_OUT_BLOCK 128  /* output columns per fc item: fc1 runs 85 GFLOP/s a thread so, 68 at 32 */
#define FC_IN_BLOCK 288   /* input columns per fc input-gradient item (fc1: 90 against 86 at 64) */
#define REDUCE_BLOCK 4096 /* floats per gradient-reduction item */
#define FILTER_PAIRS 1024 /* filter pairs per Winograd filter-transform item */
#define ADAM_BLOCK 16384  /* parameters per Adam item */

typedef struct ConvSpec {
    int C, OC, H, W;         /* in-channels, out-channels, conv size */
    int chunk;               /* images per chunk at least (model_block_chunks) */
    int group_kb;            /* target size of a Winograd group's V and DY (model.c) */
    WinoLayout xl;           /* how the block's input and its gradient lie */
    int tw, tb, tg, tbeta;   /* tensor indices */
    int rmean, rvar;         /* running statistics */
    ProfOp fconv, fbn, bbn, bconv;
} ConvSpec;

static const ConvSpec model_conv_specs[MODEL_NBLOCKS] = {
    {1, 32, 28, 28, MODEL_CHUNK_IMAGES, 0, WINO_ROWS, T_C1W, T_C1B, T_BN1G, T_BN1B, R_BN1_MEAN, R_BN1_VAR,
     PROF_CONV1_F, PROF_BN1_F, PROF_BN1_B, PROF_CONV1_B},
    {32, 64, 14, 14, MODEL_CHUNK_IMAGES, 1024, WINO_ROWS, T_C2W, T_C2B, T_BN2G, T_BN2B, R_BN2_MEAN,
     R_BN2_VAR, PROF_CONV2_F, PROF_BN2_F, PROF_BN2_B, PROF_CONV2_B},
    {64, 128, 7, 7, 4 * MODEL_CHUNK_IMAGES, 2048, WINO_LAST, T_C3W, T_C3B, T_BN3G, T_BN3B, R_BN3_MEAN,
     R_BN3_VAR, PROF_CONV3_F, PROF_BN3_F, PROF_BN3_B, PROF_CONV3_B},
};

typedef struct FcSpec {
    int IN, OUT, tw, tb;
} FcSpec;

static const FcSpec model_fc_specs[3] = {
    {MODEL_FLAT, 256, T_F1W, T_F1B},
    {256, 128, T_F2W, T_F2B},
    {128, MODEL_CLASSES, T_F3W, T_F3B},
};

/* ---- work partition: depends on N only ---- */

/* Chunks of N images, of `images` at least (but for a smaller N) and
 * MODEL_MAX_CHUNKS at most, and chunk c's images [n0, n1). */
static inline int model_chunks_of(int N, int images)
{
    int k = (N + images - 1) / images;
    return k < MODEL_MAX_CHUNKS ? k : MODEL_MAX_CHUNKS;
}

static inline void model_chunk_range_of(int N, int images, int c, int *n0, int *n1)
{
    int k = model_chunks_of(N, images);
    *n0 = (int)((long)c * N / k);
    *n1 = (int)((long)(c + 1) * N / k);
}

/* The chunks of the phases outside the conv blocks (flatten, fc ReLU and
 * dropout). */
static inline int model_nchunks(int N)
{
    return model_chunks_of(N, MODEL_CHUNK_IMAGES);
}

static inline void model_chunk_range(int N, int c, int *n0, int *n1)
{
    model_chunk_range_of(N, MODEL_CHUNK_IMAGES, c, n0, n1);
}

/* The chunks of conv block l's phases.  Block 3's 7 x 7 images are one
 * Winograd tile each (block 2's 14 x 14 give 4), so its chunks take four
 * times the images: its groups, which a chunk bounds, then have 32 tiles
 * at batch 64 rather than 16, and its GEMMs run wider: at 16 images a
 * chunk, conv3 forward and backward ran 1.10x the time (session 17). */
static inline int model_block_chunks(int l, int N)
{
    return model_chunks_of(N, model_conv_specs[l].chunk);
}

static inline void model_block_chunk_range(int l, int N, int c, int *n0, int *n1)
{
    model_chunk_range_of(N, model_conv_specs[l].chunk, c, n0, n1);
}

static inline int model_ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

/* The most images a chunk of block l holds at any batch up to B: at most
 * the block's chunk while there are fewer than MODEL_MAX_CHUNKS, then
 * ceil(B / MODEL_MAX_CHUNKS). */
static inline int model_block_chunk_most(int l, int B)
{
    const int c = model_conv_specs[l].chunk;

    return B <= MODEL_MAX_CHUNKS * c ? (B < c ? B : c) : model_ceil_div(B, MODEL_MAX_CHUNKS);
}

/* Images [n0, n1) of a chunk cut into as few Winograd groups of at most
 * `most` images as will do, of equal size (+-1): group k starts at
 * model_group_start(.., k) and ends where group k+1 starts.  (Cut greedily, a
 * chunk of 4 in groups of 3 would leave a group of one image, whose
 * GEMMs are too thin to run well.) */
static inline int model_group_count(int n0, int n1, int most)
{
    return model_ceil_div(n1 - n0, most);
}

static inline int model_group_start(int n0, int n1, int most, int k)
{
    return n0 + (int)((long)k * (n1 - n0) / model_group_count(n0, n1, most));
}

/* The runs of images an fc layer's forward takes each column block in:
 * two where it has a single block (fc2, fc3), so that two threads share
 * it (fc2 alone on the trainer thread was 1% of a step at batch 64), else
 * one, since each run packs the block's weights anew. */
static inline int model_fc_row_chunks(const FcSpec *fs, int N)
{
    return fs->OUT <= FC_OUT_BLOCK && N >= 2 ? 2 : 1;
}

static inline int model_spec_ckk(const ConvSpec *cs)
{
    return cs->C * MODEL_K * MODEL_K;
}

static inline long model_spec_pairs(const ConvSpec *cs)
{
    return (long)cs->OC * cs->C;
}

/* Images per Winograd group of block l's conv (model.c). */
int model_spec_group(const ConvSpec *cs);

/* Floats per chunk in dwpart: dW (OC, C, 3, 3), then db (OC). */
static inline size_t model_spec_dwlen(int l)
{
    const ConvSpec *cs = &model_conv_specs[l];

    return (size_t)cs->OC * model_spec_ckk(cs) + (size_t)cs->OC;
}

/* Blocks 2 and 3: the Winograd scratch of a group, then the chunk's
 * E = G^T dU (OC, 27, C: layer_wino.h), in each thread's scratch. */
static inline size_t model_wino_scratch_floats(const ConvSpec *cs, int group)
{
    return (size_t)wino_scratch_floats(cs->H, cs->W, cs->C, cs->OC, group);
}

static inline size_t model_wino_thread_floats(const ConvSpec *cs, int group)
{
    return model_wino_scratch_floats(cs, group) + (size_t)WINO_E * cs->OC * cs->C;
}

/* ---- block 1's scratch (layer_conv_phase.h), carved from a thread's scratch ---- */

/* Images whose split inputs block 1's forward pass holds at once
 * (job_phase_pool), so that it writes each channel's rows of them in one
 * run. */
#define PHASE_IMAGES 8

typedef struct PhaseBufs {
    float *xq;  /* the split inputs of PHASE_IMAGES images, conv_phase_input_floats apart */
    float *z[CONV_PHASE_CONV_CH]; /* output channels in phases (4, PH, Q) each */
    float *o, *ym;     /* (PH, Q): pooled output, y at the maximum */
    float *g[2], *kf[2]; /* (PH, Q): two channels' pool gradients and indices */
    uint8_t *ix;       /* (PH, Q): pool index */
    float *dwl;        /* (OC, CONV_PHASE_DW_LANES): a chunk's dW lanes */
} PhaseBufs;

static inline size_t model_phase_n(void)
{
    return (size_t)(model_conv_specs[0].H / 2) * CONV_PHASE_Q;
}

/*
 * rows rows of len <= CONV_PHASE_Q elements of size elem, from row stride ss to
 * row stride ds.  All rows but the last copy a whole CONV_PHASE_Q elements: the
 * extra ones land in the next row, which is written after, or come from
 * it and fill the junk columns.  A fixed-size memcpy compiles to two
 * vector moves; len (14 here) would be a call per row.
 */
static inline void model_rows_copy(void *dst, size_t ds, const void *src, size_t ss,
                                   int rows, size_t len, size_t elem)
{
    char *d = dst;
    const char *sp = src;

    for (int r = 0; r + 1 < rows; r++)
        memcpy(d + (size_t)r * ds * elem, sp + (size_t)r * ss * elem, CONV_PHASE_Q * elem);
    memcpy(d + (size_t)(rows - 1) * ds * elem, sp + (size_t)(rows - 1) * ss * elem, len * elem);
}

static inline PhaseBufs model_phase_bufs(const Acts *a, int tid)
{
    const ConvSpec *cs = &model_conv_specs[0];
    const size_t n = model_phase_n();
    float *p = a->scratch[tid];
    PhaseBufs b;

    assert(cs->OC % 2 == 0); /* the backward makes channels two at a time */

    b.xq = p;
    p += PHASE_IMAGES * conv_phase_input_floats(cs->H, cs->W);
    for (int c = 0; c < CONV_PHASE_CONV_CH; c++) {
        b.z[c] = p;
        p += conv_phase_output_floats(cs->H, cs->W);
    }
    b.o = p;
    b.ym = p + n;
    for (int e = 0; e < 2; e++) {
        b.g[e] = p + (2 + e) * n;
        b.kf[e] = p + (4 + e) * n;
    }
    b.ix = (uint8_t *)(p + 6 * n);
    b.dwl = p + (6 * n + n / sizeof(float) + 16 + 15) / 16 * 16; /* a line on */
    return b;
}

/* Splits images [nb, nb + nn) of the batch into pb's inputs, nn =
 * PHASE_IMAGES or the n1 - nb left; returns nn. */
static inline int model_phase_split(const PhaseBufs *pb, const Acts *a, int nb, int n1)
{
    const ConvSpec *cs = &model_conv_specs[0];
    const int nn = n1 - nb < PHASE_IMAGES ? n1 - nb : PHASE_IMAGES;

    for (int k = 0; k < nn; k++)
        conv_phase_split(pb->xq + k * conv_phase_input_floats(cs->H, cs->W),
                         a->x + (size_t)(nb + k) * cs->H * cs->W, cs->H, cs->W);
    return nn;
}

/* ---- the job of a phase ---- */

typedef struct StepJob {
    StepCtx *s;
    int N;        /* images in this step */
    int l;        /* conv block or fc layer index */
    int train;
    uint64_t key; /* dropout key of this layer and step */
    int nw;       /* fc backward: weight items before input items */
    int back;     /* flatten: 0 forward, 1 the gradient's way back */
} StepJob;

static inline const float *model_block_input(const Acts *a, int l)
{
    return l == 0 ? a->x : a->blk[l - 1].out;
}

static inline float *model_fc_input(Acts *a, int l)
{
    return l == 0 ? a->flat : l == 1 ? a->h1 : a->h2;
}

static inline float *model_fc_output(Acts *a, int l)
{
    return l == 0 ? a->h1 : l == 1 ? a->h2 : a->logits;
}

static inline float *model_fc_dinput(Acts *a, int l)
{
    return l == 0 ? a->dflat : l == 1 ? a->dh1 : a->dh2;
}

static inline float *model_fc_doutput(Acts *a, int l)
{
    return l == 0 ? a->dh1 : l == 1 ? a->dh2 : a->dlogits;
}

/* Whether the step's BatchNorm statistics are summed across processes. */
static inline int model_sync_bn(const StepCtx *s)
{
    return s->hooks && s->hooks->sync_bn && s->hooks->sum && s->n_global > 0;
}

/* The flatten phase, both ways (j->back): a workpool job (model_forward.c). */
void model_job_flatten(void *jp, int c, int tid);

#endif

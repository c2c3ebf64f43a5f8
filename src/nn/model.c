/*
 * model.c: the training step of the reference CNN over the compute pool.
 *
 * DESIGN
 * The trainer thread calls model_*; each phase is one pool_run() over
 * items, and a phase writes only memory its item owns (its chunk's images,
 * its column block, its chunk's partial sums, its thread's scratch).  The
 * serial glue between phases (finishing BN statistics, the loss) runs on
 * the trainer thread while the pool is idle.  No locks are needed beyond
 * the pool's own fork/join.
 *
 * Shape letters: N images in this step (<= B), C/OC channels, H x W.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer_bn.h"
#include "nn/layer_conv_phase.h"
#include "nn/layer_dropout.h"
#include "nn/layer_fc.h"
#include "nn/layer_maxpool.h"
#include "nn/layer_wino.h"
#include "nn/loss_xent.h"
#include "nn/model.h"
#include "nn/optim_adam.h"
#include "util/rng.h"

#define FC_OUT_BLOCK 32   /* output columns per fc item */
#define FC_IN_BLOCK 64    /* input columns per fc input-gradient item */
#define REDUCE_BLOCK 4096 /* floats per gradient-reduction item */
#define REDUCE_PAIRS 256  /* Winograd filter pairs per reduction item (WINO_P floats each) */
#define FILTER_PAIRS 1024 /* filter pairs per Winograd filter-transform item */
#define ADAM_BLOCK 16384  /* parameters per Adam item */
#define GROUP_BYTES (2048 * 1024) /* target size of one Winograd group's scratch */

typedef struct ConvSpec {
    int C, OC, H, W;         /* in-channels, out-channels, conv size */
    int tw, tb, tg, tbeta;   /* tensor indices */
    int rmean, rvar;         /* running statistics */
    ProfOp fconv, fbn, bbn, bconv;
} ConvSpec;

static const ConvSpec conv_specs[MODEL_NBLOCKS] = {
    {1, 32, 28, 28, T_C1W, T_C1B, T_BN1G, T_BN1B, R_BN1_MEAN, R_BN1_VAR,
     PROF_CONV1_F, PROF_BN1_F, PROF_BN1_B, PROF_CONV1_B},
    {32, 64, 14, 14, T_C2W, T_C2B, T_BN2G, T_BN2B, R_BN2_MEAN, R_BN2_VAR,
     PROF_CONV2_F, PROF_BN2_F, PROF_BN2_B, PROF_CONV2_B},
    {64, 128, 7, 7, T_C3W, T_C3B, T_BN3G, T_BN3B, R_BN3_MEAN, R_BN3_VAR,
     PROF_CONV3_F, PROF_BN3_F, PROF_BN3_B, PROF_CONV3_B},
};

typedef struct FcSpec {
    int IN, OUT, tw, tb;
} FcSpec;

static const FcSpec fc_specs[3] = {
    {MODEL_FLAT, 256, T_F1W, T_F1B},
    {256, 128, T_F2W, T_F2B},
    {128, MODEL_CLASSES, T_F3W, T_F3B},
};

/* ---- work partition: depends on N only ---- */

static int nchunks(int N)
{
    int k = (N + MODEL_CHUNK_IMAGES - 1) / MODEL_CHUNK_IMAGES;
    return k < MODEL_MAX_CHUNKS ? k : MODEL_MAX_CHUNKS;
}

static void chunk_range(int N, int c, int *n0, int *n1)
{
    int k = nchunks(N);
    *n0 = (int)((long)c * N / k);
    *n1 = (int)((long)(c + 1) * N / k);
}

static int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

/* Images [n0, n1) of a chunk cut into as few Winograd groups of at most
 * `most` images as will do, of equal size (+-1): group k starts at
 * group_start(.., k) and ends where group k+1 starts.  (Cut greedily, a
 * chunk of 4 in groups of 3 would leave a group of one image, whose
 * GEMMs are too thin to run well.) */
static int group_count(int n0, int n1, int most)
{
    return ceil_div(n1 - n0, most);
}

static int group_start(int n0, int n1, int most, int k)
{
    return n0 + (int)((long)k * (n1 - n0) / group_count(n0, n1, most));
}

static int spec_ckk(const ConvSpec *cs)
{
    return cs->C * MODEL_K * MODEL_K;
}

static long spec_pairs(const ConvSpec *cs)
{
    return (long)cs->OC * cs->C;
}

/* Images per Winograd group (blocks 2 and 3): as many as fit GROUP_BYTES
 * of the backward pass's V, DY and dV (layer_wino.h), so that they stay
 * near the core (L2) between the transforms and the GEMMs.  The target is
 * the L2 of this machine's cores, not half of it: conv3's GEMMs get only
 * 4 tiles an image, and at 1 MiB a chunk of 8 images ran as two groups of
 * T = 16 columns; at 2 MiB, one of 32, and the step at batch 64 ran 6-7%
 * faster (4480-4536 against 4215-4230 img/s; 4 MiB: 4429-4487).  The
 * environment variable CNNTOP_GROUP_KB overrides the target, for tuning. */
static int spec_group(const ConvSpec *cs)
{
    const char *env = getenv("CNNTOP_GROUP_KB");
    char *end = NULL;
    long kb = env ? strtol(env, &end, 10) : 0;
    /* A whole number of KiB up to 1 GiB; anything else is ignored. */
    long bytes = env && end != env && *end == '\0' && kb > 0 && kb <= (1L << 20)
                     ? kb * 1024
                     : GROUP_BYTES;
    long per_image =
        WINO_P * (long)wino_tiles(cs->H, cs->W) * (2L * cs->C + cs->OC) * (long)sizeof(float);
    long g = bytes / per_image, most = wino_max_group(cs->H, cs->W);
    assert(most >= 1); /* the model's images are far below the tables' limit */
    return g < 1 ? 1 : g > most ? (int)most : (int)g;
}

/* Floats per chunk in dwpart. */
static size_t spec_dwlen(int l)
{
    const ConvSpec *cs = &conv_specs[l];
    size_t w = l == 0 ? (size_t)cs->OC * spec_ckk(cs) : WINO_P * (size_t)spec_pairs(cs);
    return w + (size_t)cs->OC;
}

/* ---- block 1's scratch (layer_conv_phase.h), carved from a thread's scratch ---- */

typedef struct PhaseBufs {
    float *xq;  /* the split input of one image */
    float *z[2]; /* two output channels in phases (4, PH, Q) each */
    float *dz;  /* its gradient */
    float *o, *ym, *g; /* (PH, Q): pooled output, y at the maximum, its gradient */
    uint8_t *ix;       /* (PH, Q): pool index */
} PhaseBufs;

static size_t phase_n(void)
{
    return (size_t)(conv_specs[0].H / 2) * PHASE_Q;
}

/*
 * rows rows of len <= PHASE_Q elements of size elem, from row stride ss to
 * row stride ds.  All rows but the last copy a whole PHASE_Q elements: the
 * extra ones land in the next row, which is written after, or come from
 * it and fill the junk columns.  A fixed-size memcpy compiles to two
 * vector moves; len (14 here) would be a call per row.
 */
static inline void rows_copy(void *dst, size_t ds, const void *src, size_t ss, int rows,
                             size_t len, size_t elem)
{
    char *d = dst;
    const char *sp = src;

    for (int r = 0; r + 1 < rows; r++)
        memcpy(d + (size_t)r * ds * elem, sp + (size_t)r * ss * elem, PHASE_Q * elem);
    memcpy(d + (size_t)(rows - 1) * ds * elem, sp + (size_t)(rows - 1) * ss * elem, len * elem);
}

static size_t phase_scratch_floats(void)
{
    const ConvSpec *cs = &conv_specs[0];
    return phase_input_floats(cs->H, cs->W) + 3 * phase_output_floats(cs->H, cs->W) +
           3 * phase_n() + phase_n() / sizeof(float) + 16;
}

static PhaseBufs phase_bufs(const Acts *a, int tid)
{
    const ConvSpec *cs = &conv_specs[0];
    const size_t n = phase_n();
    float *p = a->scratch[tid];
    PhaseBufs b;

    assert(cs->OC % 2 == 0); /* the passes make channels two at a time */

    b.xq = p;
    p += phase_input_floats(cs->H, cs->W);
    b.z[0] = p;
    p += phase_output_floats(cs->H, cs->W);
    b.z[1] = p;
    p += phase_output_floats(cs->H, cs->W);
    b.dz = p;
    p += phase_output_floats(cs->H, cs->W);
    b.o = p;
    b.ym = p + n;
    b.g = p + 2 * n;
    b.ix = (uint8_t *)(p + 3 * n);
    return b;
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
        const ConvSpec *cs = &conv_specs[l];
        BlockBufs *bb = &a->blk[l];
        size_t hw = (size_t)cs->H * cs->W, phw = (size_t)(cs->H / 2) * (cs->W / 2);
        size_t oc = (size_t)cs->OC;
        /* Block 1's conv output is never stored: layer_conv_phase.h. */
        bb->group = l == 0 ? 0 : spec_group(cs);
        bb->y = l == 0 ? NULL : arena_push(ar, oc * B * hw * f);
        bb->U = l == 0 ? NULL : arena_push(ar, WINO_P * (size_t)spec_pairs(cs) * f);
        bb->wt = l == 0 ? NULL : arena_push(ar, sizeof(WinoTables));
        bb->pt = l == 0 ? NULL : arena_push(ar, sizeof(PoolTables));
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
        bb->dwpart = arena_push(ar, MODEL_MAX_CHUNKS * spec_dwlen(l) * f);
        if (l > 0) {
            size_t need = (size_t)wino_scratch_floats(cs->H, cs->W, cs->C, cs->OC, bb->group);
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
        wino_tables_init(a->blk[l].wt, conv_specs[l].H, conv_specs[l].W, a->blk[l].group);
        pool_tables_init(a->blk[l].pt, conv_specs[l].H, conv_specs[l].W);
    }
    return 0;
}

void acts_done(Acts *a)
{
    arena_done(&a->arena);
    free(a->scratch);
    a->scratch = NULL;
}

/* ---- phase jobs ---- */

typedef struct Job {
    StepCtx *s;
    int N;        /* images in this step */
    int l;        /* conv block or fc layer index */
    int train;
    uint64_t key; /* dropout key of this layer and step */
    int nw;       /* fc backward: weight items before input items */
    int back;     /* flatten: 0 forward, 1 the gradient's way back */
} Job;

static const float *block_input(const Acts *a, int l)
{
    return l == 0 ? a->x : a->blk[l - 1].out;
}

/* Blocks 2 and 3: U = the Winograd transform of this step's filters,
 * FILTER_PAIRS (out-channel, in-channel) pairs per item. */
static void job_filter(void *jp, int item, int tid)
{
    Job *j = jp;
    const ConvSpec *cs = &conv_specs[j->l];
    long P = spec_pairs(cs), p0 = (long)item * FILTER_PAIRS;
    long p1 = p0 + FILTER_PAIRS < P ? p0 + FILTER_PAIRS : P;

    (void)tid;
    wino_filter(j->s->a->blk[j->l].U, j->s->ps->p[cs->tw], P, p0, p1);
}

static void job_conv_fwd(void *jp, int c, int tid)
{
    Job *j = jp;
    const ConvSpec *cs = &conv_specs[j->l];
    Acts *a = j->s->a;
    BlockBufs *bb = &a->blk[j->l];
    Params *ps = j->s->ps;
    double *acc = bb->part + (size_t)c * cs->OC * 2;
    int n0, n1;

    chunk_range(j->N, c, &n0, &n1);
    if (j->train)
        memset(acc, 0, (size_t)cs->OC * 2 * sizeof *acc);
    for (int k = 0; k < group_count(n0, n1, bb->group); k++) {
        int t = group_start(n0, n1, bb->group, k);
        int nt = group_start(n0, n1, bb->group, k + 1) - t;
        wino_forward(bb->y, block_input(a, j->l), bb->U, ps->p[cs->tb], a->scratch[tid], bb->wt,
                     cs->C, cs->OC, j->N, t, nt);
        if (j->train)
            bn_stats_partial(acc, bb->y, cs->OC, j->N, cs->H * cs->W, t, nt);
    }
}

static void job_pool_fwd(void *jp, int c, int tid)
{
    Job *j = jp;
    const ConvSpec *cs = &conv_specs[j->l];
    BlockBufs *bb = &j->s->a->blk[j->l];
    int n0, n1;

    (void)tid;
    chunk_range(j->N, c, &n0, &n1);
    pool_forward(bb->out, j->train ? bb->idx : NULL, j->train ? bb->ymax : NULL, bb->y,
                 bb->scale, bb->shift, cs->OC, j->N, bb->pt, n0, n1 - n0);
}

/* Block 1, forward, first pass: the BN statistics of the conv output,
 * made image by image and channel by channel and not kept. */
static void job_phase_stats(void *jp, int c, int tid)
{
    Job *j = jp;
    const ConvSpec *cs = &conv_specs[0];
    Acts *a = j->s->a;
    const float *w = j->s->ps->p[cs->tw], *b = j->s->ps->p[cs->tb];
    double *acc = a->blk[0].part + (size_t)c * cs->OC * 2;
    PhaseBufs pb = phase_bufs(a, tid);
    int n0, n1;

    chunk_range(j->N, c, &n0, &n1);
    memset(acc, 0, (size_t)cs->OC * 2 * sizeof *acc);
    for (int n = n0; n < n1; n++) {
        phase_split(pb.xq, a->x + (size_t)n * cs->H * cs->W, cs->H, cs->W);
        for (int oc = 0; oc < cs->OC; oc += 2) {
            phase_conv(pb.z[0], pb.z[1], pb.xq, w + oc * 9, b + oc, cs->H, cs->W);
            for (int e = 0; e < 2; e++)
                phase_stats(acc + 2 * (oc + e), pb.z[e], cs->H, cs->W);
        }
    }
}

/* Block 1, forward, second pass: the conv output again, normalised,
 * rectified and pooled into out (and idx, ymax when training). */
static void job_phase_pool(void *jp, int c, int tid)
{
    Job *j = jp;
    const ConvSpec *cs = &conv_specs[0];
    Acts *a = j->s->a;
    BlockBufs *bb = &a->blk[0];
    const float *w = j->s->ps->p[cs->tw], *b = j->s->ps->p[cs->tb];
    const int PW = cs->W / 2, PHW = (cs->H / 2) * PW;
    PhaseBufs pb = phase_bufs(a, tid);
    int n0, n1;

    chunk_range(j->N, c, &n0, &n1);
    for (int n = n0; n < n1; n++) {
        phase_split(pb.xq, a->x + (size_t)n * cs->H * cs->W, cs->H, cs->W);
        for (int oc0 = 0; oc0 < cs->OC; oc0 += 2) {
            phase_conv(pb.z[0], pb.z[1], pb.xq, w + oc0 * 9, b + oc0, cs->H, cs->W);
            for (int e = 0, oc = oc0; e < 2; e++, oc++) {
                size_t po = ((size_t)oc * j->N + n) * PHW;
                pool_forward_phases(pb.o, j->train ? pb.ix : NULL, j->train ? pb.ym : NULL,
                                    pb.z[e], (int)phase_n(), bb->scale[oc], bb->shift[oc]);
                rows_copy(bb->out + po, PW, pb.o, PHASE_Q, cs->H / 2, PW, sizeof(float));
                if (j->train) {
                    rows_copy(bb->idx + po, PW, pb.ix, PHASE_Q, cs->H / 2, PW, 1);
                    rows_copy(bb->ymax + po, PW, pb.ym, PHASE_Q, cs->H / 2, PW, sizeof(float));
                }
            }
        }
    }
}

/* Block 1, backward: the conv output again, its gradient through pool,
 * ReLU and BN, and from that the chunk's dW and db. */
static void job_phase_bwd(void *jp, int c, int tid)
{
    Job *j = jp;
    const ConvSpec *cs = &conv_specs[0];
    Acts *a = j->s->a;
    BlockBufs *bb = &a->blk[0];
    const float *w = j->s->ps->p[cs->tw], *b = j->s->ps->p[cs->tb];
    const float *gamma = j->s->ps->p[cs->tg];
    const size_t L = spec_dwlen(0), nw = L - (size_t)cs->OC;
    float *dwp = bb->dwpart + (size_t)c * L, *dbp = dwp + nw;
    const int PW = cs->W / 2, PHW = (cs->H / 2) * PW;
    PhaseBufs pb = phase_bufs(a, tid);
    int n0, n1;

    chunk_range(j->N, c, &n0, &n1);
    memset(dwp, 0, L * sizeof *dwp);
    /* The last row's junk columns (the others are filled by rows_copy);
     * phase_conv_dw ignores them anyway. */
    memset(pb.g, 0, phase_n() * sizeof *pb.g);
    memset(pb.ix, POOL_NOGRAD, phase_n());
    for (int n = n0; n < n1; n++) {
        phase_split(pb.xq, a->x + (size_t)n * cs->H * cs->W, cs->H, cs->W);
        for (int oc0 = 0; oc0 < cs->OC; oc0 += 2) {
            phase_conv(pb.z[0], pb.z[1], pb.xq, w + oc0 * 9, b + oc0, cs->H, cs->W);
            for (int e = 0, oc = oc0; e < 2; e++, oc++) {
                size_t po = ((size_t)oc * j->N + n) * PHW;
                const float k1 = gamma[oc] * bb->invstd[oc];
                rows_copy(pb.g, PHASE_Q, bb->dout + po, PW, cs->H / 2, PW, sizeof(float));
                rows_copy(pb.ix, PHASE_Q, bb->idx + po, PW, cs->H / 2, PW, 1);
                pool_backward_phases(pb.dz, pb.z[e], pb.g, pb.ix, (int)phase_n(),
                                     -k1 * bb->mdz[oc], -k1 * bb->mdzx[oc], bb->mean[oc],
                                     bb->invstd[oc], k1);
                phase_conv_dw(dwp + oc * 9, dbp + oc, pb.dz, pb.xq, cs->H, cs->W);
            }
        }
    }
}

static void block_forward(StepCtx *s, int l, int N, int train, double *t0)
{
    const ConvSpec *cs = &conv_specs[l];
    BlockBufs *bb = &s->a->blk[l];
    Params *ps = s->ps;
    Job j = {.s = s, .N = N, .l = l, .train = train};

    if (l > 0) {
        pool_run(s->pool, ceil_div((int)spec_pairs(cs), FILTER_PAIRS), job_filter, &j);
        pool_run(s->pool, nchunks(N), job_conv_fwd, &j);
    }
    else if (train)
        pool_run(s->pool, nchunks(N), job_phase_stats, &j);
    if (s->prof)
        profile_lap(s->prof, cs->fconv, t0);
    if (train)
        bn_stats_finish(bb->mean, bb->invstd, ps->r[cs->rmean], ps->r[cs->rvar],
                        bb->part, nchunks(N), cs->OC, (long)N * cs->H * cs->W);
    else
        bn_stats_running(bb->mean, bb->invstd, ps->r[cs->rmean], ps->r[cs->rvar], cs->OC);
    bn_affine(bb->scale, bb->shift, ps->p[cs->tg], ps->p[cs->tbeta], bb->mean,
              bb->invstd, cs->OC);
    pool_run(s->pool, nchunks(N), l > 0 ? job_pool_fwd : job_phase_pool, &j);
    if (s->prof)
        profile_lap(s->prof, cs->fbn, t0);
}

/* flat (N, 1152) <- block3 out (128, N, 3*3), and the reverse for gradients. */
static void job_flatten(void *jp, int c, int tid)
{
    Job *j = jp;
    Acts *a = j->s->a;
    const int C = conv_specs[2].OC, S = MODEL_FLAT / C;
    int n0, n1;

    (void)tid;
    chunk_range(j->N, c, &n0, &n1);
    for (int n = n0; n < n1; n++)
        for (int ch = 0; ch < C; ch++)
            for (int k = 0; k < S; k++) {
                size_t f = (size_t)n * MODEL_FLAT + (size_t)ch * S + k;
                size_t b = ((size_t)ch * j->N + n) * S + k;
                if (!j->back)
                    a->flat[f] = a->blk[2].out[b];
                else
                    a->blk[2].dout[b] = a->dflat[f];
            }
}

static float *fc_input(Acts *a, int l)
{
    return l == 0 ? a->flat : l == 1 ? a->h1 : a->h2;
}

static float *fc_output(Acts *a, int l)
{
    return l == 0 ? a->h1 : l == 1 ? a->h2 : a->logits;
}

static void job_fc_fwd(void *jp, int item, int tid)
{
    Job *j = jp;
    const FcSpec *fs = &fc_specs[j->l];
    Acts *a = j->s->a;
    int o0 = item * FC_OUT_BLOCK;
    int o1 = o0 + FC_OUT_BLOCK < fs->OUT ? o0 + FC_OUT_BLOCK : fs->OUT;

    (void)tid;
    fc_forward(fc_output(a, j->l), fc_input(a, j->l), j->s->ps->p[fs->tw],
               j->s->ps->p[fs->tb], j->N, fs->IN, fs->OUT, o0, o1);
}

static void job_relu_drop_fwd(void *jp, int c, int tid)
{
    Job *j = jp;
    Acts *a = j->s->a;
    float *h = fc_output(a, j->l);
    int n0, n1;

    (void)tid;
    chunk_range(j->N, c, &n0, &n1);
    relu_dropout_forward(h, j->train ? (j->l == 0 ? a->m1 : a->m2) : NULL, h,
                         fc_specs[j->l].OUT, n0, n1, j->key);
}

static void fc_layer_forward(StepCtx *s, int l, int N, int train, long step)
{
    Job j = {.s = s, .N = N, .l = l, .train = train};

    pool_run(s->pool, ceil_div(fc_specs[l].OUT, FC_OUT_BLOCK), job_fc_fwd, &j);
    if (l < 2) {
        j.key = rng_key(s->seed, RNG_DROPOUT, (uint64_t)step * 4 + (uint64_t)l);
        pool_run(s->pool, nchunks(N), job_relu_drop_fwd, &j);
    }
}

void model_forward(StepCtx *s, int N, int train, long step)
{
    double t0 = timer_now();
    Job flat = {.s = s, .N = N, .back = 0};

    assert(N >= 1 && N <= s->a->B);
    for (int l = 0; l < MODEL_NBLOCKS; l++)
        block_forward(s, l, N, train, &t0);
    pool_run(s->pool, nchunks(N), job_flatten, &flat);
    static const ProfOp fops[3] = {PROF_FC1_F, PROF_FC2_F, PROF_FC3_F};
    for (int l = 0; l < 3; l++) {
        fc_layer_forward(s, l, N, train, step);
        if (s->prof)
            profile_lap(s->prof, fops[l], &t0);
    }
}

double model_loss(StepCtx *s, int N)
{
    double t0 = timer_now();
    Acts *a = s->a;
    double loss = xent_forward(a->probs, a->logits, a->labels, N, MODEL_CLASSES);

    xent_backward(a->dlogits, a->probs, a->labels, N, MODEL_CLASSES);
    if (s->prof)
        profile_lap(s->prof, PROF_LOSS, &t0);
    return loss;
}

/* ---- backward ---- */

static float *fc_dinput(Acts *a, int l)
{
    return l == 0 ? a->dflat : l == 1 ? a->dh1 : a->dh2;
}

static float *fc_doutput(Acts *a, int l)
{
    return l == 0 ? a->dh1 : l == 1 ? a->dh2 : a->dlogits;
}

static void job_fc_bwd(void *jp, int item, int tid)
{
    Job *j = jp;
    const FcSpec *fs = &fc_specs[j->l];
    Acts *a = j->s->a;
    Params *ps = j->s->ps;

    (void)tid;
    if (item < j->nw) {
        int o0 = item * FC_OUT_BLOCK;
        int o1 = o0 + FC_OUT_BLOCK < fs->OUT ? o0 + FC_OUT_BLOCK : fs->OUT;
        fc_backward_weights(ps->g[fs->tw], ps->g[fs->tb], fc_doutput(a, j->l),
                            fc_input(a, j->l), j->N, fs->IN, fs->OUT, o0, o1, 0.0f);
    } else {
        int i0 = (item - j->nw) * FC_IN_BLOCK;
        int i1 = i0 + FC_IN_BLOCK < fs->IN ? i0 + FC_IN_BLOCK : fs->IN;
        fc_backward_input(fc_dinput(a, j->l), fc_doutput(a, j->l), ps->p[fs->tw],
                          j->N, fs->IN, fs->OUT, i0, i1);
    }
}

static void job_relu_drop_bwd(void *jp, int c, int tid)
{
    Job *j = jp;
    Acts *a = j->s->a;
    /* The gradient w.r.t. fc layer l's input becomes the gradient w.r.t.
     * fc layer l-1's output before its ReLU and dropout. */
    float *d = fc_dinput(a, j->l);
    int n0, n1;

    (void)tid;
    chunk_range(j->N, c, &n0, &n1);
    relu_dropout_backward(d, d, j->l == 1 ? a->m1 : a->m2, fc_specs[j->l].IN, n0, n1);
}

static void fc_layer_backward(StepCtx *s, int l, int N)
{
    const FcSpec *fs = &fc_specs[l];
    Job j = {.s = s, .N = N, .l = l, .nw = ceil_div(fs->OUT, FC_OUT_BLOCK)};

    pool_run(s->pool, j.nw + ceil_div(fs->IN, FC_IN_BLOCK), job_fc_bwd, &j);
    if (l > 0)
        pool_run(s->pool, nchunks(N), job_relu_drop_bwd, &j);
}

static void job_pool_sums(void *jp, int c, int tid)
{
    Job *j = jp;
    const ConvSpec *cs = &conv_specs[j->l];
    BlockBufs *bb = &j->s->a->blk[j->l];
    double *acc = bb->part + (size_t)c * cs->OC * 2;
    int n0, n1;

    (void)tid;
    chunk_range(j->N, c, &n0, &n1);
    memset(acc, 0, (size_t)cs->OC * 2 * sizeof *acc);
    pool_backward_sums(acc, bb->dout, bb->idx, bb->ymax, bb->mean, bb->invstd, cs->OC,
                       j->N, (cs->H / 2) * (cs->W / 2), n0, n1 - n0);
}

/* Blocks 2 and 3, backward, one chunk: the gradient of the conv output in
 * place of y over the whole chunk (long runs of memory per channel), then
 * Winograd group by group the weight gradient and the input gradient. */
static void job_conv_bwd(void *jp, int c, int tid)
{
    Job *j = jp;
    const ConvSpec *cs = &conv_specs[j->l];
    Acts *a = j->s->a;
    BlockBufs *bb = &a->blk[j->l];
    Params *ps = j->s->ps;
    const size_t nw = WINO_P * (size_t)spec_pairs(cs);
    const int HW = cs->H * cs->W;
    float *dwp = bb->dwpart + (size_t)c * spec_dwlen(j->l);
    float *dx = j->l > 0 ? a->blk[j->l - 1].dout : NULL;
    int n0, n1;

    chunk_range(j->N, c, &n0, &n1);
    pool_backward(bb->y, bb->dout, bb->idx, ps->p[cs->tg], bb->mean, bb->invstd, bb->mdz,
                  bb->mdzx, cs->OC, j->N, bb->pt, n0, n1 - n0);
    for (int k = 0; k < group_count(n0, n1, bb->group); k++) {
        int t = group_start(n0, n1, bb->group, k);
        int nt = group_start(n0, n1, bb->group, k + 1) - t;
        wino_backward(dx, dwp, dwp + nw, bb->y + (size_t)t * HW, j->N * HW,
                      block_input(a, j->l), bb->U, a->scratch[tid], bb->wt, cs->C, cs->OC, j->N,
                      t, nt, t == n0 ? 0.0f : 1.0f);
    }
}

/* sum (n) = the sum over the k chunks' parts (chunk c at part + c*L), in
 * chunk order.  Chunk by chunk, so the adds run along memory and
 * vectorise; each sum still adds its chunks in chunk order. */
static void chunks_sum(float *restrict sum, const float *restrict part, size_t L, int k,
                       size_t n)
{
    memcpy(sum, part, n * sizeof *sum);
    for (int c = 1; c < k; c++)
        for (size_t i = 0; i < n; i++)
            sum[i] += part[(size_t)c * L + i];
}

/* Block 1: grads = sum over chunks of the partial dW and db. */
static void job_reduce(void *jp, int item, int tid)
{
    Job *j = jp;
    const ConvSpec *cs = &conv_specs[j->l];
    BlockBufs *bb = &j->s->a->blk[j->l];
    Params *ps = j->s->ps;
    const size_t L = spec_dwlen(j->l), nw = L - (size_t)cs->OC;
    size_t i0 = (size_t)item * REDUCE_BLOCK;
    size_t i1 = i0 + REDUCE_BLOCK < L ? i0 + REDUCE_BLOCK : L;

    float sum[REDUCE_BLOCK];

    (void)tid;
    chunks_sum(sum, bb->dwpart + i0, L, nchunks(j->N), i1 - i0);
    for (size_t i = i0; i < i1; i++) {
        if (i < nw)
            ps->g[cs->tw][i] = sum[i - i0];
        else
            ps->g[cs->tb][i - nw] = sum[i - i0];
    }
}

/* Blocks 2 and 3: dU = sum over chunks of the partial dU, for REDUCE_PAIRS
 * filter pairs in all WINO_P planes, then dW = G^T dU G for them; the last
 * item also sums db. */
static void job_reduce_wino(void *jp, int item, int tid)
{
    Job *j = jp;
    const ConvSpec *cs = &conv_specs[j->l];
    BlockBufs *bb = &j->s->a->blk[j->l];
    Params *ps = j->s->ps;
    const size_t L = spec_dwlen(j->l), P = (size_t)spec_pairs(cs);
    const int k = nchunks(j->N);
    size_t p0 = (size_t)item * REDUCE_PAIRS;

    float sum[WINO_P * REDUCE_PAIRS];

    (void)tid;
    if (p0 >= P) { /* the bias item */
        chunks_sum(sum, bb->dwpart + WINO_P * P, L, k, (size_t)cs->OC);
        memcpy(ps->g[cs->tb], sum, (size_t)cs->OC * sizeof *sum);
        return;
    }
    size_t n = P - p0 < REDUCE_PAIRS ? P - p0 : REDUCE_PAIRS;
    for (int x = 0; x < WINO_P; x++)
        chunks_sum(sum + x * REDUCE_PAIRS, bb->dwpart + x * P + p0, L, k, n);
    wino_filter_grad(ps->g[cs->tw] + 9 * p0, sum, REDUCE_PAIRS, 0, (long)n);
}

static void block_backward(StepCtx *s, int l, int N, double *t0)
{
    const ConvSpec *cs = &conv_specs[l];
    BlockBufs *bb = &s->a->blk[l];
    Params *ps = s->ps;
    Job j = {.s = s, .N = N, .l = l};

    pool_run(s->pool, nchunks(N), job_pool_sums, &j);
    bn_backward_finish(ps->g[cs->tg], ps->g[cs->tbeta], bb->mdz, bb->mdzx, bb->part,
                       nchunks(N), cs->OC, (long)N * cs->H * cs->W);
    if (s->prof)
        profile_lap(s->prof, cs->bbn, t0);
    pool_run(s->pool, nchunks(N), l > 0 ? job_conv_bwd : job_phase_bwd, &j);
    if (l == 0)
        pool_run(s->pool, ceil_div((int)spec_dwlen(0), REDUCE_BLOCK), job_reduce, &j);
    else
        pool_run(s->pool, ceil_div((int)spec_pairs(cs), REDUCE_PAIRS) + 1, job_reduce_wino, &j);
    if (s->prof)
        profile_lap(s->prof, cs->bconv, t0);
}

void model_backward(StepCtx *s, int N)
{
    static const ProfOp bops[3] = {PROF_FC1_B, PROF_FC2_B, PROF_FC3_B};
    double t0 = timer_now();
    Job flat = {.s = s, .N = N, .back = 1};

    /* Every gradient is written whole by its layer, so nothing is zeroed. */
    for (int l = 2; l >= 0; l--) {
        fc_layer_backward(s, l, N);
        if (s->prof)
            profile_lap(s->prof, bops[l], &t0);
    }
    pool_run(s->pool, nchunks(N), job_flatten, &flat);
    for (int l = MODEL_NBLOCKS - 1; l >= 0; l--)
        block_backward(s, l, N, &t0);
}

/* ---- optimiser ---- */

typedef struct AdamJob {
    Params *ps;
    double lr;
} AdamJob;

static void job_adam(void *jp, int item, int tid)
{
    AdamJob *j = jp;
    Params *ps = j->ps;
    long i0 = (long)item * ADAM_BLOCK;
    long i1 = i0 + ADAM_BLOCK < (long)ps->nfloats ? i0 + ADAM_BLOCK : (long)ps->nfloats;

    (void)tid;
    adam_update(ps->params, ps->adam_m, ps->adam_v, ps->grads, i0, i1, ps->adam_t, j->lr);
}

void model_update(StepCtx *s, double lr)
{
    double t0 = timer_now();
    AdamJob j = {.ps = s->ps, .lr = lr};

    s->ps->adam_t++;
    pool_run(s->pool, ceil_div((int)s->ps->nfloats, ADAM_BLOCK), job_adam, &j);
    if (s->prof)
        profile_lap(s->prof, PROF_OPTIM, &t0);
}

/* ---- FLOPs ---- */

double model_flops_forward(void)
{
    double f = 0.0;

    for (int l = 0; l < MODEL_NBLOCKS; l++) {
        const ConvSpec *cs = &conv_specs[l];
        f += 2.0 * cs->OC * spec_ckk(cs) * cs->H * cs->W;
    }
    for (int l = 0; l < 3; l++)
        f += 2.0 * fc_specs[l].IN * fc_specs[l].OUT;
    return f;
}

double model_op_flops(ProfOp op)
{
    for (int l = 0; l < MODEL_NBLOCKS; l++) {
        const ConvSpec *cs = &conv_specs[l];
        double f = 2.0 * cs->OC * spec_ckk(cs) * cs->H * cs->W;
        if (op == cs->fconv)
            return f;
        if (op == cs->bconv) /* dW, and dx except for the first layer */
            return l == 0 ? f : 2.0 * f;
    }
    static const ProfOp ff[3] = {PROF_FC1_F, PROF_FC2_F, PROF_FC3_F};
    static const ProfOp fb[3] = {PROF_FC1_B, PROF_FC2_B, PROF_FC3_B};
    for (int l = 0; l < 3; l++) {
        double f = 2.0 * fc_specs[l].IN * fc_specs[l].OUT;
        if (op == ff[l])
            return f;
        if (op == fb[l])
            return 2.0 * f;
    }
    return 0.0; /* elementwise layers: not counted as FLOPs */
}

double model_flops_backward(void)
{
    /* Weight and input gradients each cost a forward's GEMM, except that
     * conv1 needs no input gradient. */
    const ConvSpec *c1 = &conv_specs[0];
    return 2.0 * model_flops_forward() - 2.0 * c1->OC * spec_ckk(c1) * c1->H * c1->W;
}

double model_flops_executed(void)
{
    double f = model_flops_forward() + model_flops_backward();

    for (int l = 1; l < MODEL_NBLOCKS; l++) {
        const ConvSpec *cs = &conv_specs[l];
        double direct = 2.0 * cs->OC * spec_ckk(cs) * cs->H * cs->W;
        double wino = 2.0 * WINO_P * spec_pairs(cs) * (double)wino_tiles(cs->H, cs->W);
        f += 3.0 * (wino - direct); /* forward, dW and dX */
    }
    return f;
}

/* ---- the SGEMM shapes of a step, for the calibration ---- */

/* Walks the same partition as the step (chunks, Winograd groups, column blocks)
 * without touching any buffer, so the calibration times the calls that
 * training really makes. */
typedef struct ShapeList {
    GemmShape *out;
    int max, n;
} ShapeList;

static void shape_add(ShapeList *sl, const char *what, int ta, int tb, int M, int N,
                      int K, int par)
{
    for (int i = 0; i < sl->n && i < sl->max; i++) {
        GemmShape *g = &sl->out[i];
        if (!strcmp(g->what, what) && g->ta == ta && g->tb == tb && g->M == M &&
            g->N == N && g->K == K) {
            g->count++;
            return;
        }
    }
    if (sl->n < sl->max)
        sl->out[sl->n] = (GemmShape){.what = what, .ta = ta, .tb = tb, .M = M,
                                     .N = N, .K = K, .count = 1, .par = par};
    sl->n++;
}

/* dir 0: forward, 1: weight gradient, 2: input gradient: the 36 GEMMs of
 * each Winograd group (layer_wino.h). */
static void conv_shapes(ShapeList *sl, int l, int N, int dir)
{
    static const char *const names[MODEL_NBLOCKS][3] = {
        {"conv1 fwd", "conv1 dW", "conv1 dX"},
        {"conv2 fwd", "conv2 dW", "conv2 dX"},
        {"conv3 fwd", "conv3 dW", "conv3 dX"}};
    const ConvSpec *cs = &conv_specs[l];
    const int group = spec_group(cs), C = cs->C, OC = cs->OC;
    const int TT = wino_tiles(cs->H, cs->W);
    const char *what = names[l][dir];

    for (int c = 0; c < nchunks(N); c++) {
        int n0, n1;
        chunk_range(N, c, &n0, &n1);
        for (int k = 0; k < group_count(n0, n1, group); k++) {
            int T = (group_start(n0, n1, group, k + 1) - group_start(n0, n1, group, k)) * TT;
            for (int x = 0; x < WINO_P; x++) {
                if (dir == 0)
                    shape_add(sl, what, 0, 0, OC, T, C, nchunks(N));
                else if (dir == 1)
                    shape_add(sl, what, 0, 1, OC, C, T, nchunks(N));
                else
                    shape_add(sl, what, 1, 0, C, T, OC, nchunks(N));
            }
        }
    }
}

static void fc_shapes(ShapeList *sl, int l, int N, int back)
{
    static const char *const names[3][3] = {
        {"fc1 fwd", "fc1 dW", "fc1 dX"},
        {"fc2 fwd", "fc2 dW", "fc2 dX"},
        {"fc3 fwd", "fc3 dW", "fc3 dX"}};
    const FcSpec *fs = &fc_specs[l];
    const int nw = ceil_div(fs->OUT, FC_OUT_BLOCK), ni = ceil_div(fs->IN, FC_IN_BLOCK);

    for (int o0 = 0; o0 < fs->OUT; o0 += FC_OUT_BLOCK) {
        int no = fs->OUT - o0 < FC_OUT_BLOCK ? fs->OUT - o0 : FC_OUT_BLOCK;
        if (!back)
            shape_add(sl, names[l][0], 0, 1, N, no, fs->IN, nw);
        else
            shape_add(sl, names[l][1], 1, 0, no, fs->IN, N, nw + ni);
    }
    for (int i0 = 0; back && i0 < fs->IN; i0 += FC_IN_BLOCK) {
        int nin = fs->IN - i0 < FC_IN_BLOCK ? fs->IN - i0 : FC_IN_BLOCK;
        shape_add(sl, names[l][2], 0, 0, N, nin, fs->OUT, nw + ni);
    }
}

int model_gemm_shapes(int N, GemmShape *out, int max)
{
    ShapeList sl = {.out = out, .max = max < 0 ? 0 : max, .n = 0};

    if (N < 1)
        return 0;
    /* Block 1's conv is not an SGEMM (layer_conv_phase.h). */
    for (int l = 1; l < MODEL_NBLOCKS; l++)
        conv_shapes(&sl, l, N, 0);
    for (int l = 0; l < 3; l++)
        fc_shapes(&sl, l, N, 0);
    for (int l = 2; l >= 0; l--)
        fc_shapes(&sl, l, N, 1);
    for (int l = MODEL_NBLOCKS - 1; l >= 1; l--) {
        conv_shapes(&sl, l, N, 1);
        conv_shapes(&sl, l, N, 2);
    }
    return sl.n;
}

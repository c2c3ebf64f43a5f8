/*
 * model.c: the training step of the reference CNN over the compute pool:
 * the Winograd group size and the optimiser step.  The step is in parts:
 * model_acts.c (the arena), model_forward.c, model_backward.c,
 * model_cost.c (FLOPs and SGEMM shapes), sharing model_impl.h.
 *
 * DESIGN
 * The trainer thread calls model_*; each phase is one workpool_run() over
 * items, and a phase writes only memory its item owns (its chunk's images,
 * its column block, its chunk's partial sums, its thread's scratch).  The
 * serial glue between phases (finishing BN statistics, the loss) runs on
 * the trainer thread while the pool is idle.  No locks are needed beyond
 * the pool's own fork/join.
 *
 * Shape letters: N images in this step (<= B), C/OC channels, H x W.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "nn/model_impl.h"
#include "nn/optim_adam.h"

/* Images per Winograd group (blocks 2 and 3): as many as fit the block's
 * group_kb (model_impl.h) of the backward pass's V (then dV) and DY
 * (layer_wino.h), so that they stay near the core (L2) between the
 * transforms and the GEMMs.  Block 3 takes 2 MiB, the L2 of this machine's
 * cores: its GEMMs get one tile an image (F(7x7, 3x3)), and a group of 33
 * images, so a chunk of 32 is one group.  (With F(4x4, 3x3), 1 MiB cut a
 * chunk into groups of T = 16 columns, and 2 MiB ran the step 6-7%
 * faster: session 12.)  Block 2 takes 1 MiB, 8 images and T = 32; 2 MiB
 * for both blocks measured the same (session 17).  The environment
 * variable CNNTOP_GROUP_KB overrides both, for tuning. */
int model_spec_group(const ConvSpec *cs)
{
    const char *env = getenv("CNNTOP_GROUP_KB");
    char *end = NULL;
    long kb = env ? strtol(env, &end, 10) : 0;
    /* A whole number of KiB up to 1 GiB; anything else is ignored. */
    long bytes = env && end != env && *end == '\0' && kb > 0 && kb <= (1L << 20)
                     ? kb * 1024
                     : cs->group_kb * 1024L;
    long per_image =
        WINO_P * (long)wino_tiles(cs->H, cs->W) * ((long)cs->C + cs->OC) * (long)sizeof(float);
    long g = bytes / per_image;
    return g < 1 ? 1 : (int)g;
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
    workpool_run(s->pool, model_ceil_div((int)s->ps->nfloats, ADAM_BLOCK), job_adam, &j);
    if (s->prof)
        profile_lap(s->prof, PROF_OPTIM, &t0);
}

static void job_warm(void *ctx, int item, int tid)
{
    atomic_int *failed = ctx;

    (void)item;
    (void)tid;
    if (gemm_warm() != 0)
        atomic_store(failed, 1);
}

int model_warm(Workpool *pool)
{
    atomic_int failed;

    atomic_init(&failed, 0);
    workpool_each(pool, job_warm, &failed);
    return atomic_load(&failed) ? -CN_ENOMEM : 0;
}

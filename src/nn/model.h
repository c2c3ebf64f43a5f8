/*
 * model.h: the reference CNN's training step, spread over the compute pool.
 *
 *   x (1, N, 28, 28)
 *   block1: conv 1->32  + BN + ReLU + pool -> (32, N, 14, 14)
 *   block2: conv 32->64 + BN + ReLU + pool -> (64, N, 7, 7)
 *   block3: conv 64->128+ BN + ReLU + pool -> (128, N, 3, 3)
 *   flatten (N, 1152) -> fc1 256 ReLU drop -> fc2 128 ReLU drop -> fc3 10
 *
 * Acts is the arena of one batch capacity B: every activation, gradient,
 * partial sum and per-thread scratch buffer, planned once and allocated in
 * one block, so the step allocates nothing.  A step may use any N <= B (the
 * last batch of an epoch is smaller).
 *
 * Work is cut into items that depend on N only, never on the thread count:
 * chunks of images (MODEL_MAX_CHUNKS of them at most, of MODEL_CHUNK_IMAGES
 * images at least, so 8 chunks at batch 64; block 3's of twice as many,
 * model_impl.h's model_block_chunks) for the conv blocks,
 * fixed column blocks for the fully connected layers.  Every reduction
 * across items (BN statistics, weight gradients) is done in item order by
 * one owner.  So the same seed gives bit-identical losses for any --threads.
 */
#ifndef CNNTOP_MODEL_H
#define CNNTOP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "nn/layer_wino.h"
#include "cnntop/err.h"
#include "nn/params.h"
#include "nn/workpool.h"
#include "prof/profile.h"

#define MODEL_MAX_CHUNKS 16
/* Images per chunk at least (but for a smaller N).  Each chunk keeps its
 * own partial weight gradients (the Winograd dU of blocks 2-3 is 4 times
 * the size of dW), set to zero and summed once a step, and cuts its images
 * into groups whose GEMMs are thinner the fewer images it has.  At batch 64
 * on 2 cores, 8 images a chunk ran 2-5% faster than 4, and 16 a further
 * 0-8% faster, but 16 would leave only 4 chunks for a many-core machine.
 * Block 3, whose images give a quarter of block 2's tiles, takes 16: its
 * layers ran 0.84 (backward) and 0.86 (forward) of their time at 8, the
 * step 0.95 (batch 64, 7 runs alternated, medians).  The cost: below
 * batch 128, block 3's phases have fewer than 8 chunks, so a machine of
 * more cores than that runs them on fewer (not measured: 2 cores here). */
#define MODEL_CHUNK_IMAGES 8
#define MODEL_NBLOCKS 3

/* Buffers of one conv block; OC out-channels, H x W its conv's size. */
typedef struct BlockBufs {
    /* Blocks 2 and 3 channels-last (N = B here), block 1 in channel rows
     * (layer_wino.h, layer_maxpool.h): */
    float *y;       /* (B, H, W, OC) conv output before BN; its gradient after
                       the backward pool (none for block 1) */
    uint8_t *idx;   /* (B, H/2, W/2, OC) pool argmax or MAXPOOL_NOGRAD;
                       block 1: (OC, B, H/2, W/2), as ymax, out and dout */
    float *ymax;    /* (B, H/2, W/2, OC) y at the argmax, for BN backward */
    float *out;     /* (B, H/2, W/2, OC) block output */
    float *dout;    /* (B, H/2, W/2, OC) its gradient */
    float *mean;    /* (OC) batch (or running) mean in use */
    float *invstd;  /* (OC) */
    float *scale;   /* (OC) gamma*invstd */
    float *shift;   /* (OC) beta - mean*scale */
    float *mdz;     /* (OC) BN backward means */
    float *mdzx;    /* (OC) */
    double *part;   /* (MODEL_MAX_CHUNKS, OC, 2) per-chunk partial sums */
    double *mom;    /* (MODEL_MAX_CHUNKS + 1, CONV_PHASE_MOMENTS) block 1: each
                       chunk's input moments, then their sum (layer_conv_phase.h;
                       none for blocks 2-3) */
    float *dwpart;  /* (chunks of the capacity B, L) per-chunk weight and bias
                       gradients dW (OC, C, 3, 3), db: L = OC*C*9 + OC (blocks
                       2-3: each chunk's E = G^T dU, summed in its thread's
                       scratch, turned into dW there: a third of E's floats) */
    int group;      /* images per Winograd group, e.g. 9 (0 for block 1) */
    float *U;       /* (81, OC, C) the filters, Winograd-transformed each step */
    WinoShape *ws; /* (layer_wino.h; none for block 1) */
} BlockBufs;

typedef struct Acts {
    int B;                   /* batch capacity, e.g. 64 */
    int threads;             /* scratch sets, one per compute thread */
    float *x;                /* (1, B, 28, 28) normalised input */
    uint8_t *labels;         /* (B) */
    BlockBufs blk[MODEL_NBLOCKS];
    float *flat, *dflat;     /* (B, 1152) */
    float *h1, *dh1;         /* (B, 256) fc1 output after ReLU+dropout, grad */
    uint8_t *m1;             /* (B, 256) gradient mask */
    float *h2, *dh2;         /* (B, 128) */
    uint8_t *m2;             /* (B, 128) */
    float *logits, *probs, *dlogits; /* (B, 10) */
    float **scratch;         /* [threads] per-thread scratch: a Winograd group's
                                arrays and a chunk's dU, or block 1's
                                (layer_conv_phase.h) */
    Arena arena;
} Acts;

/* Bytes acts_init() would allocate for capacity B and T threads. */
size_t acts_bytes(int B, int threads);

/* Plans and allocates the arena.  Returns 0 or -CN_ENOMEM. */
int acts_init(Acts *a, int B, int threads);
void acts_done(Acts *a);

/*
 * Data-parallel training (the engine fills these from src/dist; nn knows
 * nothing of how): this process holds a share of the step's images, the
 * loss and gradients are normalised by the whole step's count, and
 *   grads_ready(ud, g, n): floats g[0..n) of the gradient block are final
 *       for this process (a layer's tensors, in the order the backward pass
 *       makes them: fc3 first, block 1 last); they may be summed across
 *       processes in place, at any time until model_update() needs them;
 *   sum(ud, v, n): v[0..n) becomes its sum over every process, now (the
 *       BatchNorm statistics' per-channel sums, forward and backward,
 *       when sync_bn).
 */
typedef struct StepHooks {
    void *ud;
    void (*grads_ready)(void *ud, float *g, size_t n);
    void (*sum)(void *ud, double *v, size_t n);
    int sync_bn;     /* 1: BatchNorm statistics over the whole step's images */
} StepHooks;

/* Everything one step needs to know beside the buffers. */
typedef struct StepCtx {
    Params *ps;
    Acts *a;
    Workpool *pool;
    Profile *prof;   /* may be NULL */
    uint64_t seed;   /* for dropout masks */
    GemmPath gemm;   /* where the Winograd GEMMs run (gemm.h); 0: OpenBLAS */
    const StepHooks *hooks; /* NULL: one process */
    int n_global;    /* images of the step over every process; 0: this one's N */
    int first;       /* the place of this process's first image among them; the
                        dropout masks are keyed by it, so an image gets the
                        same mask whichever process holds it */
} StepCtx;

/* Before the first step, on a new pool: every thread's OpenBLAS buffer
 * touched as deep as a step goes (gemm_warm on all threads at once), so
 * that no step faults on it later, when two threads' products first meet
 * in some way.  Returns 0 or -CN_ENOMEM. */
int model_warm(Workpool *pool);

/* Forward pass on a->x[0..N) (training: batch statistics, dropout keyed by
 * `step`; else running statistics, no dropout).  Leaves a->logits. */
void model_forward(StepCtx *s, int N, int train, long step);

/* Softmax cross-entropy of a->logits against a->labels; returns the mean
 * loss and leaves a->probs. */
double model_loss(StepCtx *s, int N);

/* Backward pass after model_forward(train=1) and model_loss(): fills the
 * gradient block (overwritten, not accumulated). */
void model_backward(StepCtx *s, int N);

/* One Adam step with the gradients in the block. */
void model_update(StepCtx *s, double lr);

/* FLOPs (2 x multiply-adds) of one image: forward, and backward, as the
 * direct convolution counts them.  These are the model's work, the unit of
 * every GFLOP/s cnntop shows (PyTorch's is the same).  */
double model_flops_forward(void);
double model_flops_backward(void);

/* The FLOPs one training image really costs here: blocks 2 and 3 run
 * Winograd's algorithm (layer_wino.h), 5.4x fewer multiply-adds in the
 * products than the direct convolution, and its transforms besides.  The
 * sketch on paper uses this. */
double model_flops_executed(void);

/* FLOPs of one image in one op of the step (the GEMM layers; 0 for the
 * elementwise ones, whose cost is memory traffic), as the direct
 * convolution counts them: the model's. */
double model_op_flops(ProfOp op);

/* The same as the op executes them: in conv2 and conv3, Winograd's
 * products and its tile transforms (wino_transform_flops), and in the
 * backward the filters' gradient transform, once a chunk of the block's
 * chunk images (a smaller batch has fewer images a chunk); in block 1's
 * forward, its input's moments under conv1 fwd and its direct
 * convolution under bn1+relu+pool1 fwd, where the engine runs them
 * (model_forward.c); the model's count elsewhere.  Not counted: the
 * forward's filter transform U = G g G^T, once a step whatever the batch
 * (G down the columns, then along the rows: 288 FLOPs a filter pair,
 * 0.05 MFLOP an image at batch 64),
 * the BatchNorm sums the forward's output transform adds in training (an
 * add and a multiply-add an output: 0.06 MFLOP an image) and the adds of
 * db.  Summed over the ops: model_flops_executed(). */
double model_op_flops_executed(ProfOp op);

/*
 * The bytes an op must move to or from memory, the memory half of its
 * time on paper: each tensor of the step that it reads or writes,
 * counted once, as this engine lays them out (model_acts.c: a conv
 * block's y and, after its pool, out, idx (a byte), ymax and dout; the fc
 * layers' activations, masks (a byte) and gradients), and the parameters
 * it reads or writes: each layer's weights and gradients, blocks 2 and
 * 3's transformed filters U (written in the forward pass, read forward
 * and backward), Adam's p, g, m and v.  Scratch that a phase keeps in
 * the cache (a Winograd group's V, M and DY, block 1's phase planes) is
 * not counted, nor are re-reads a cache would serve.
 * model_op_bytes_image(): those of one image; model_op_bytes_step(): the
 * parameters', once a step whatever the batch.
 * model_bytes_image(batch): a step's bytes over its images, all ops. */
double model_op_bytes_image(ProfOp op);
double model_op_bytes_step(ProfOp op);
double model_bytes_image(int batch);

/* One SGEMM shape of the training step: C (M, N) = op(A) (M, K) op(B) (K, N),
 * as a layer passes it to gemm(). */
typedef struct GemmShape {
    const char *what; /* the layer and product, e.g. "conv2 dW" */
    int ta, tb;       /* A, B transposed (0 or 1) */
    int M, N, K;      /* e.g. 64, 392, 288 */
    long count;       /* calls of this shape in one step */
    int par;          /* items of its phase: how many calls can run at once */
} GemmShape;

#define MODEL_MAX_GEMM_SHAPES 96

/* The SGEMM calls of one training step (forward, backward; Adam has none)
 * at batch N, as the work partition cuts them, equal calls merged, in step
 * order.  Fills up to max entries of out and returns how many there are
 * (more than max means the list was cut).  Their 2*M*N*K*count sum to N
 * times model_flops_executed(), less conv1's forward and weight gradient
 * (layer_conv_phase.h: not an SGEMM). */
int model_gemm_shapes(int N, GemmShape *out, int max);

#endif

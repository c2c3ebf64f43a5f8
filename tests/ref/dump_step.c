/*
 * dump_step.c: one training step of the reference model, written out tensor
 * by tensor for the PyTorch cross-check (tests/ref/crosscheck.py).
 *
 *   dump_step OUTFILE [--data DIR] [--batch N] [--seed S]
 *
 * Builds Params with params_init(S), Acts for batch N (default 16) and a
 * pool of one thread; fills the batch with the first N training images of
 * DIR (default /usr/share/datasets/fashion-mnist), or, when the data set
 * cannot be read, with deterministic synthetic images and labels (said on
 * stderr).  Then writes, in the format of tests/ref/README.md:
 *
 *   x (N,1,28,28) f32, labels (N) i64,
 *   every parameter under its state_dict name, the BN running statistics,
 *   mask.fc1 (N,256) u8 and mask.fc2 (N,128) u8: dropout keep bits of step 0,
 *   logits (N,10) f32, loss (1) f32          after forward(train, step 0),
 *   grad.<name> for every parameter          after backward,
 *   after.<running name>                     BN running statistics after,
 *   step1.<name> for every parameter         after one Adam step, lr 1e-3.
 *
 * Exit status: 0 written, 1 on any error (usage, memory, I/O).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/engine.h"
#include "nn/gemm.h"
#include "data/dataset.h"
#include "nn/layer_dropout.h"
#include "data/loader.h"
#include "nn/model.h"
#include "nn/params.h"
#include "nn/workpool.h"
#include "util/rng.h"

#define DEFAULT_DATA "/usr/share/datasets/fashion-mnist"
#define NPIX (MODEL_H * MODEL_W)
#define LR 1e-3

/* Writes one tensor record: header line, then the raw little-endian data.
 * The data are written as the host stores them; main() refuses big-endian
 * hosts.  Returns 0 or -1 (errno set by stdio). */
static int put(FILE *f, const char *name, const char *type, size_t esize,
               const void *data, int ndim, const int *dims)
{
    size_t n = 1;

    if (fprintf(f, "%s %s %d", name, type, ndim) < 0)
        return -1;
    for (int i = 0; i < ndim; i++) {
        if (fprintf(f, " %d", dims[i]) < 0)
            return -1;
        n *= (size_t)dims[i];
    }
    if (fputc('\n', f) == EOF)
        return -1;
    if (n && fwrite(data, esize, n, f) != n)
        return -1;
    return 0;
}

static int put_f32(FILE *f, const char *name, const float *data, int ndim, const int *dims)
{
    return put(f, name, "f32", sizeof(float), data, ndim, dims);
}

/* Every parameter tensor, named prefix + state_dict key. */
static int put_params(FILE *f, const char *prefix, float *const *t)
{
    char name[128];

    for (int i = 0; i < MODEL_NTENSORS; i++) {
        const TensorDesc *d = &params_tensors[i];
        snprintf(name, sizeof name, "%s%s", prefix, d->name);
        if (put_f32(f, name, t[i], d->ndim, d->dims) != 0)
            return -1;
    }
    return 0;
}

static int put_running(FILE *f, const char *prefix, const Params *ps)
{
    char name[128];

    for (int i = 0; i < MODEL_NRUNNING; i++) {
        const TensorDesc *d = &params_running[i];
        snprintf(name, sizeof name, "%s%s", prefix, d->name);
        if (put_f32(f, name, ps->r[i], d->ndim, d->dims) != 0)
            return -1;
    }
    return 0;
}

/* The keep bits of layer `layer` (0: after fc1, 1: after fc2) at `step`,
 * exactly as model_forward() draws them: element e = n*F + f. */
static int put_mask(FILE *f, const char *name, uint64_t seed, long step, int layer,
                    int N, int F)
{
    uint64_t key = rng_key(seed, RNG_DROPOUT, (uint64_t)step * 4 + (uint64_t)layer);
    uint8_t *m = malloc((size_t)N * F);
    int dims[2] = {N, F}, rc;

    if (!m)
        return -1;
    for (size_t e = 0; e < (size_t)N * F; e++)
        m[e] = (uint8_t)dropout_keep(key, e);
    rc = put(f, name, "u8", 1, m, 2, dims);
    free(m);
    return rc;
}

/* Deterministic stand-in for the data set: blobs of ink on noise, labels
 * cycling 0..9, so that the forward pass sees varied, image-like inputs. */
static void synth_batch(float *x, uint8_t *labels, int N, const float lut[256])
{
    uint64_t key = rng_key(12345, RNG_AUGMENT, 0);

    for (int n = 0; n < N; n++) {
        int cls = n % 10;
        int cy = 8 + (int)(rng_at(key, (uint64_t)n * 2) % 12);
        int cx = 8 + (int)(rng_at(key, (uint64_t)n * 2 + 1) % 12);
        int r = 4 + cls;
        for (int y = 0; y < MODEL_H; y++)
            for (int xx = 0; xx < MODEL_W; xx++) {
                uint64_t b = rng_at(key, 1000000 + (uint64_t)n * NPIX + (uint64_t)(y * MODEL_W + xx));
                int d2 = (y - cy) * (y - cy) + (xx - cx) * (xx - cx);
                int p = d2 <= r * r ? 160 + (int)(b % 96) : (int)(b % 40);
                x[(size_t)n * NPIX + (size_t)(y * MODEL_W + xx)] = lut[p];
            }
        labels[n] = (uint8_t)cls;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: dump_step OUTFILE [--data DIR] [--batch N] [--seed S]\n");
}

/* The command line. */
typedef struct Args {
    const char *out, *dir;
    long batch;
    unsigned long long seed;
} Args;

/* Fills *ar from argv; returns 0, or 1 after saying what is wrong. */
static int parse_args(Args *ar, int argc, char **argv)
{
    char *end;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--data") && i + 1 < argc) {
            ar->dir = argv[++i];
        } else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
            errno = 0;
            ar->batch = strtol(argv[++i], &end, 10);
            if (errno || *end || ar->batch < 1 || ar->batch > 4096) {
                fprintf(stderr, "dump_step: --batch wants 1..4096, not '%s'\n", argv[i]);
                return 1;
            }
        } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            errno = 0;
            ar->seed = strtoull(argv[++i], &end, 0);
            if (errno || *end || argv[i][0] == '-' || argv[i][0] == '\0') {
                fprintf(stderr, "dump_step: --seed wants a non-negative integer, not '%s'\n",
                        argv[i]);
                return 1;
            }
        } else if (argv[i][0] == '-' || ar->out) {
            usage();
            return 1;
        } else {
            ar->out = argv[i];
        }
    }
    if (!ar->out) {
        usage();
        return 1;
    }
    return 0;
}

/* The batch: the first N training images of ar->dir, or synthetic ones
 * when the data set cannot be read (said on stderr).  Returns 0 or -1
 * (out of memory, said). */
static int fill_batch(Acts *a, Dataset *ds, const Args *ar, int N)
{
    char err[512];
    float lut[256];

    loader_lut(lut);
    err[0] = '\0';
    if (dataset_load(ds, ar->dir, err, sizeof err) == 0 && ds->rows == MODEL_H &&
        ds->cols == MODEL_W && ds->n_train >= N) {
        uint32_t *idx = malloc((size_t)N * sizeof *idx);
        if (!idx) {
            fprintf(stderr, "dump_step: out of memory\n");
            return -1;
        }
        for (int i = 0; i < N; i++)
            idx[i] = (uint32_t)i;
        loader_fill(a->x, a->labels, ds->train_images, ds->train_labels, idx, N, NPIX, lut);
        free(idx);
        fprintf(stderr, "dump_step: batch %d = first training images of %s, seed %llu\n",
                N, ds->dir, ar->seed);
        return 0;
    }
    if (err[0])
        fprintf(stderr, "dump_step: no data set (%s)\n", err);
    else
        fprintf(stderr, "dump_step: data set in %s is not 28x28 or has < %d images\n",
                ar->dir, N);
    fprintf(stderr, "dump_step: using %d SYNTHETIC deterministic images instead, seed %llu\n",
            N, ar->seed);
    synth_batch(a->x, a->labels, N, lut);
    return 0;
}

/* The inputs and parameters, one step, its results: the records of
 * tests/ref/README.md into f.  Returns 1 when all were written, else 0
 * (errno set by stdio, or ENOMEM). */
static int write_step(FILE *f, StepCtx *s, int N)
{
    Acts *a = s->a;
    Params *ps = s->ps;
    int64_t *lab = malloc((size_t)N * sizeof *lab);
    int ok = lab != NULL;
    int xdims[4] = {N, 1, MODEL_H, MODEL_W}, ndims[1] = {N};
    int ldims[2] = {N, MODEL_CLASSES}, one[1] = {1};

    if (ok) {
        for (int i = 0; i < N; i++)
            lab[i] = a->labels[i];
        ok = fputs("CNNTOP-TENSORS 1\n", f) >= 0 &&
             put_f32(f, "x", a->x, 4, xdims) == 0 &&
             put(f, "labels", "i64", sizeof(int64_t), lab, 1, ndims) == 0 &&
             put_params(f, "", ps->p) == 0 &&
             put_running(f, "", ps) == 0 &&
             put_mask(f, "mask.fc1", s->seed, 0, 0, N, 256) == 0 &&
             put_mask(f, "mask.fc2", s->seed, 0, 1, N, 128) == 0;
    }
    if (ok) {
        model_forward(s, N, 1, 0);
        float loss = (float)model_loss(s, N);
        model_backward(s, N);
        ok = put_f32(f, "logits", a->logits, 2, ldims) == 0 &&
             put_f32(f, "loss", &loss, 1, one) == 0 &&
             put_params(f, "grad.", ps->g) == 0 &&
             put_running(f, "after.", ps) == 0;
        fprintf(stderr, "dump_step: loss %.7f\n", (double)loss);
    }
    if (ok) {
        model_update(s, LR);
        ok = put_params(f, "step1.", ps->p) == 0 && fputs("END\n", f) >= 0;
    }
    free(lab);
    return ok;
}

int main(int argc, char **argv)
{
    Args ar = {.dir = DEFAULT_DATA, .batch = 16, .seed = 1};
    const uint16_t endian = 1;

    if (parse_args(&ar, argc, argv) != 0)
        return 1;
    if (*(const uint8_t *)&endian != 1) {
        fprintf(stderr, "dump_step: the file format is little-endian; this host is not\n");
        return 1;
    }

    const int N = (int)ar.batch;
    Params ps;
    Acts a;
    Workpool *pool = NULL;
    Dataset ds;
    int rc = 1;

    memset(&ps, 0, sizeof ps);
    memset(&a, 0, sizeof a);
    memset(&ds, 0, sizeof ds);
    gemm_init();
    if (params_init(&ps, (uint64_t)ar.seed) != 0 || acts_init(&a, N, 1) != 0) {
        fprintf(stderr, "dump_step: out of memory\n");
        goto done;
    }
    if (workpool_new(&pool, 1, NULL) != 0) {
        fprintf(stderr, "dump_step: cannot start the compute pool\n");
        goto done;
    }
    if (fill_batch(&a, &ds, &ar, N) != 0)
        goto done;

    FILE *f = fopen(ar.out, "wb");
    if (!f) {
        fprintf(stderr, "dump_step: cannot create %s: %s\n", ar.out, strerror(errno));
        goto done;
    }
    StepCtx s = {.ps = &ps, .a = &a, .pool = pool, .prof = NULL, .seed = (uint64_t)ar.seed};
    int ok = write_step(f, &s, N);
    if (fclose(f) != 0)
        ok = 0;
    if (!ok) {
        fprintf(stderr, "dump_step: writing %s failed: %s\n", ar.out, strerror(errno));
        goto done;
    }
    rc = 0;

done:
    dataset_free(&ds);
    workpool_free(pool);
    acts_done(&a);
    params_done(&ps);
    return rc;
}

/*
 * checkpoint.c: the checkpoint file (see checkpoint.h for the layout).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "engine/checkpoint.h"
#include "cnntop/limits.h"
#include "util/err.h"
#include "cnntop/fileio.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "checkpoint.c writes floats in host order and assumes a little-endian host"
#endif

#define CK_MAGIC "CNNTOPCK"
#define CK_MODEL "EnhancedCNN"
#define CK_HEADER 88
#define CK_NT (MODEL_NTENSORS + MODEL_NRUNNING)

const CkptField checkpoint_fields[CKF_COUNT] = {
    [CKF_RESERVED] = {"reserved", 20, 4, 0, 0},
    [CKF_ADAM_T] = {"adam_t (Adam steps taken)", 56, 8, 0, CN_MAX_ADAM_STEPS},
    [CKF_EPOCHS_DONE] = {"epochs_done", 64, 8, 0, CN_MAX_EPOCHS_DONE},
    [CKF_EPOCH_POS] = {"epoch_pos (images of the current epoch)", 72, 8, 0, CN_MAX_IMAGES},
    [CKF_SEED] = {"seed", 80, 8, 0, UINT64_MAX},
};

static size_t floats_learnable(void)
{
    return params_count();
}

static size_t floats_running(void)
{
    size_t n = 0;
    for (int r = 0; r < MODEL_NRUNNING; r++)
        n += params_numel(&params_running[r]);
    return n;
}

size_t checkpoint_size(void)
{
    return CK_HEADER + 4 * CK_NT +
           4 * (3 * floats_learnable() + floats_running()) + 4;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static void put_field(unsigned char *buf, int f, uint64_t v)
{
    const CkptField *d = &checkpoint_fields[f];

    if (d->bytes == 4)
        put_u32(buf + d->off, (uint32_t)v);
    else
        put_u64(buf + d->off, v);
}

static uint64_t get_field(const unsigned char *buf, int f)
{
    const CkptField *d = &checkpoint_fields[f];

    return d->bytes == 4 ? get_u32(buf + d->off) : get_u64(buf + d->off);
}

static const TensorDesc *ck_desc(int i)
{
    return i < MODEL_NTENSORS ? &params_tensors[i] : &params_running[i - MODEL_NTENSORS];
}

/* Copies every tensor of one block between the padded block and the file:
 * to the file when `out` is set, else from it. */
static unsigned char *ck_block(unsigned char *f, float *block, const size_t *off,
                               int first, int count, int out)
{
    for (int t = 0; t < count; t++) {
        size_t n = params_numel(ck_desc(first + t)) * sizeof(float);
        if (out)
            memcpy(f, block + off[t], n);
        else
            memcpy(block + off[t], f, n);
        f += n;
    }
    return f;
}

static void running_offsets(const Params *ps, size_t *roff)
{
    for (int r = 0; r < MODEL_NRUNNING; r++)
        roff[r] = (size_t)(ps->r[r] - ps->running);
}

int checkpoint_save(const char *path, const Params *ps, const CkptMeta *meta,
                    char *err, size_t errlen)
{
    size_t size = checkpoint_size(), roff[MODEL_NRUNNING];
    unsigned char *buf = calloc(1, size), *f;

    if (!buf)
        return cn_fail(err, errlen, -CN_ENOMEM, "%s: out of memory", path);
    memcpy(buf, CK_MAGIC, 8);
    put_u32(buf + 8, CHECKPOINT_VERSION);
    put_u32(buf + 12, MODEL_NTENSORS);
    put_u32(buf + 16, MODEL_NRUNNING);
    memcpy(buf + 24, CK_MODEL, sizeof CK_MODEL);
    put_field(buf, CKF_RESERVED, 0);
    put_field(buf, CKF_ADAM_T, (uint64_t)ps->adam_t);
    put_field(buf, CKF_EPOCHS_DONE, (uint64_t)meta->epochs_done);
    put_field(buf, CKF_EPOCH_POS, (uint64_t)meta->epoch_pos);
    put_field(buf, CKF_SEED, meta->seed);
    for (int i = 0; i < CK_NT; i++)
        put_u32(buf + CK_HEADER + 4 * i, (uint32_t)params_numel(ck_desc(i)));
    running_offsets(ps, roff);
    f = buf + CK_HEADER + 4 * CK_NT;
    f = ck_block(f, ps->params, ps->off, 0, MODEL_NTENSORS, 1);
    f = ck_block(f, ps->running, roff, MODEL_NTENSORS, MODEL_NRUNNING, 1);
    f = ck_block(f, ps->adam_m, ps->off, 0, MODEL_NTENSORS, 1);
    f = ck_block(f, ps->adam_v, ps->off, 0, MODEL_NTENSORS, 1);
    put_u32(f, (uint32_t)crc32(0L, buf, (uInt)(f - buf)));
    int rc = fileio_write_atomic(path, buf, size, err, errlen);
    free(buf);
    return rc;
}

/* Checks the header; returns 0 or -CN_EFORMAT with the reason. */
static int ck_check(const char *path, const unsigned char *buf, size_t len,
                    char *err, size_t errlen)
{
    if (len < 8 || memcmp(buf, CK_MAGIC, 8) != 0)
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: not a cnntop checkpoint (bad magic)", path);
    if (len < CK_HEADER + 4 * CK_NT)
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: truncated (%zu bytes)", path, len);
    uint32_t ver = get_u32(buf + 8);
    if (ver != CHECKPOINT_VERSION)
        return cn_fail(err, errlen, -CN_EFORMAT,
                       "%s: checkpoint format version %u, this cnntop reads version %d",
                       path, ver, CHECKPOINT_VERSION);
    char model[32] = CK_MODEL; /* NUL-padded */
    if (get_u32(buf + 12) != MODEL_NTENSORS || get_u32(buf + 16) != MODEL_NRUNNING ||
        memcmp(buf + 24, model, sizeof model) != 0)
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: checkpoint of another model", path);
    for (int i = 0; i < CK_NT; i++)
        if (get_u32(buf + CK_HEADER + 4 * i) != params_numel(ck_desc(i)))
            return cn_fail(err, errlen, -CN_EFORMAT, "%s: tensor %s has %u elements, want %zu",
                           path, ck_desc(i)->name, get_u32(buf + CK_HEADER + 4 * i),
                           params_numel(ck_desc(i)));
    if (len != checkpoint_size())
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: %s (%zu bytes, want %zu)", path,
                       len < checkpoint_size() ? "truncated" : "trailing data",
                       len, checkpoint_size());
    if (get_u32(buf + len - 4) != (uint32_t)crc32(0L, buf, (uInt)(len - 4)))
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: checksum mismatch (file damaged)", path);
    return 0;
}

/* Checks what the header's counts mean: each in its range, and at least
 * one Adam step for each epoch begun. */
static int ck_check_counts(const char *path, const unsigned char *buf, char *err, size_t errlen)
{
    for (int f = 0; f < CKF_COUNT; f++) {
        const CkptField *d = &checkpoint_fields[f];
        uint64_t v = get_field(buf, f);
        if (v < d->lo || v > d->hi)
            return cn_fail(err, errlen, -CN_EFORMAT,
                           "%s: %s is %" PRIu64 ", out of range (%" PRIu64 "..%" PRIu64 ")",
                           path, d->name, v, d->lo, d->hi);
    }
    uint64_t t = get_field(buf, CKF_ADAM_T), done = get_field(buf, CKF_EPOCHS_DONE),
             pos = get_field(buf, CKF_EPOCH_POS);
    if (t < done + (pos > 0))
        return cn_fail(err, errlen, -CN_EFORMAT,
                       "%s: adam_t is %" PRIu64 ", fewer than the %" PRIu64 " epochs begun "
                       "(epochs_done %" PRIu64 ", epoch_pos %" PRIu64 "): each takes a step",
                       path, t, done + (pos > 0), done, pos);
    return 0;
}

/* The four float blocks in file order; `nonneg`: values must be >= 0
 * (Adam's second moments; the running variances are picked by name). */
static const struct { const char *name; int first, count, nonneg; } ck_blocks[] = {
    {"parameter", 0, MODEL_NTENSORS, 0},
    {"running statistic", MODEL_NTENSORS, MODEL_NRUNNING, 0},
    {"Adam m", 0, MODEL_NTENSORS, 0},
    {"Adam v", 0, MODEL_NTENSORS, 1},
};

/* Checks every float: finite, and not negative where it cannot be. */
static int ck_check_floats(const char *path, const unsigned char *f, char *err, size_t errlen)
{
    for (size_t b = 0; b < sizeof ck_blocks / sizeof ck_blocks[0]; b++)
        for (int t = 0; t < ck_blocks[b].count; t++) {
            const TensorDesc *d = ck_desc(ck_blocks[b].first + t);
            int nonneg = ck_blocks[b].nonneg || strstr(d->name, "running_var") != NULL;
            size_t n = params_numel(d);
            for (size_t i = 0; i < n; i++, f += 4) {
                float x;
                memcpy(&x, f, sizeof x);
                if (!isfinite(x) || (nonneg && x < 0))
                    return cn_fail(err, errlen, -CN_EFORMAT,
                                   "%s: %s %s[%zu] is %g (must be finite%s)", path,
                                   ck_blocks[b].name, d->name, i, (double)x,
                                   nonneg ? " and not negative" : "");
            }
        }
    return 0;
}

int checkpoint_load(const char *path, Params *ps, CkptMeta *meta,
                    char *err, size_t errlen)
{
    unsigned char *buf;
    size_t len, roff[MODEL_NRUNNING];
    int rc = fileio_read_all(path, checkpoint_size() + 1024 * 1024, &buf, &len, err, errlen);

    if (rc != 0)
        return rc;
    rc = ck_check(path, buf, len, err, errlen);
    if (rc == 0)
        rc = ck_check_counts(path, buf, err, errlen);
    if (rc == 0)
        rc = ck_check_floats(path, buf + CK_HEADER + 4 * CK_NT, err, errlen);
    if (rc == 0) {
        const unsigned char *f = buf + CK_HEADER + 4 * CK_NT;
        running_offsets(ps, roff);
        f = ck_block((unsigned char *)f, ps->params, ps->off, 0, MODEL_NTENSORS, 0);
        f = ck_block((unsigned char *)f, ps->running, roff, MODEL_NTENSORS, MODEL_NRUNNING, 0);
        f = ck_block((unsigned char *)f, ps->adam_m, ps->off, 0, MODEL_NTENSORS, 0);
        ck_block((unsigned char *)f, ps->adam_v, ps->off, 0, MODEL_NTENSORS, 0);
        ps->adam_t = (long)get_field(buf, CKF_ADAM_T);
        meta->epochs_done = (long)get_field(buf, CKF_EPOCHS_DONE);
        meta->epoch_pos = (long)get_field(buf, CKF_EPOCH_POS);
        meta->seed = get_field(buf, CKF_SEED);
    }
    free(buf);
    return rc;
}

/*
 * checkpoint.c: the checkpoint file (see checkpoint.h for the layout).
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "checkpoint.h"
#include "err.h"
#include "cnntop/fileio.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "checkpoint.c writes floats in host order and assumes a little-endian host"
#endif

#define CK_MAGIC "CNNTOPCK"
#define CK_MODEL "EnhancedCNN"
#define CK_HEADER 88
#define CK_NT (MODEL_NTENSORS + MODEL_NRUNNING)

static size_t floats_learnable(void)
{
    return params_count();
}

static size_t floats_running(void)
{
    size_t n = 0;
    for (int r = 0; r < MODEL_NRUNNING; r++)
        n += tensor_numel(&model_running[r]);
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

static const TensorDesc *ck_desc(int i)
{
    return i < MODEL_NTENSORS ? &model_tensors[i] : &model_running[i - MODEL_NTENSORS];
}

/* Copies every tensor of one block between the padded block and the file:
 * to the file when `out` is set, else from it. */
static unsigned char *ck_block(unsigned char *f, float *block, const size_t *off,
                               int first, int count, int out)
{
    for (int t = 0; t < count; t++) {
        size_t n = tensor_numel(ck_desc(first + t)) * sizeof(float);
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
    put_u64(buf + 56, (uint64_t)ps->adam_t);
    put_u64(buf + 64, (uint64_t)meta->epochs_done);
    put_u64(buf + 72, (uint64_t)meta->epoch_pos);
    put_u64(buf + 80, meta->seed);
    for (int i = 0; i < CK_NT; i++)
        put_u32(buf + CK_HEADER + 4 * i, (uint32_t)tensor_numel(ck_desc(i)));
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
    if (get_u32(buf + 12) != MODEL_NTENSORS || get_u32(buf + 16) != MODEL_NRUNNING ||
        memcmp(buf + 24, CK_MODEL, sizeof CK_MODEL) != 0)
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: checkpoint of another model", path);
    for (int i = 0; i < CK_NT; i++)
        if (get_u32(buf + CK_HEADER + 4 * i) != tensor_numel(ck_desc(i)))
            return cn_fail(err, errlen, -CN_EFORMAT, "%s: tensor %s has %u elements, want %zu",
                           path, ck_desc(i)->name, get_u32(buf + CK_HEADER + 4 * i),
                           tensor_numel(ck_desc(i)));
    if (len != checkpoint_size())
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: %s (%zu bytes, want %zu)", path,
                       len < checkpoint_size() ? "truncated" : "trailing data",
                       len, checkpoint_size());
    if (get_u32(buf + len - 4) != (uint32_t)crc32(0L, buf, (uInt)(len - 4)))
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: checksum mismatch (file damaged)", path);
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
    if (rc == 0) {
        const unsigned char *f = buf + CK_HEADER + 4 * CK_NT;
        running_offsets(ps, roff);
        f = ck_block((unsigned char *)f, ps->params, ps->off, 0, MODEL_NTENSORS, 0);
        f = ck_block((unsigned char *)f, ps->running, roff, MODEL_NTENSORS, MODEL_NRUNNING, 0);
        f = ck_block((unsigned char *)f, ps->adam_m, ps->off, 0, MODEL_NTENSORS, 0);
        ck_block((unsigned char *)f, ps->adam_v, ps->off, 0, MODEL_NTENSORS, 0);
        ps->adam_t = (long)get_u64(buf + 56);
        meta->epochs_done = (long)get_u64(buf + 64);
        meta->epoch_pos = (long)get_u64(buf + 72);
        meta->seed = get_u64(buf + 80);
    }
    free(buf);
    return rc;
}

/*
 * checkpoint.h: saving and loading a model's whole training state.
 *
 * File format (version 1), all integers little-endian:
 *   0   char[8]  magic "CNNTOPCK"
 *   8   u32      format version (1)
 *   12  u32      number of learnable tensors (18)
 *   16  u32      number of running-statistics tensors (6)
 *   20  u32      reserved, 0
 *   24  char[32] model name, NUL-padded: "EnhancedCNN"
 *   56  u64      Adam steps taken
 *   64  u64      epochs completed
 *   72  u64      images already consumed of the current epoch
 *   80  u64      seed
 *   88  u32[24]  element count of each tensor, learnable then running
 *   184 f32[]    parameters, running statistics, Adam m, Adam v (each in
 *                table order, unpadded)
 *   end u32      CRC-32 (zlib) of every byte before it
 *
 * A CRC proves the bytes are intact, not that they make sense: every field
 * is checked against its meaning too (checkpoint_fields[] for the counts;
 * every float finite, variances and Adam's v not negative; at least one
 * Adam step for each epoch begun) before anything is used.
 */
#ifndef CNNTOP_CHECKPOINT_H
#define CNNTOP_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "nn/params.h"

#define CHECKPOINT_VERSION 1

typedef struct CkptMeta {
    long epochs_done;  /* complete epochs trained */
    long epoch_pos;    /* images consumed of the current epoch */
    uint64_t seed;     /* the seed the run was started with */
} CkptMeta;

/* The header's counts, with the values that make sense. */
typedef struct CkptField {
    const char *name;  /* as messages name it, e.g. "epoch_pos" */
    size_t off;        /* byte offset in the file */
    int bytes;         /* 4 or 8, little-endian */
    uint64_t lo, hi;   /* accepted values */
} CkptField;

enum { CKF_RESERVED, CKF_ADAM_T, CKF_EPOCHS_DONE, CKF_EPOCH_POS, CKF_SEED, CKF_COUNT };
extern const CkptField checkpoint_fields[CKF_COUNT];

/* Writes ps (and ps->adam_t) with meta to path atomically. */
int checkpoint_save(const char *path, const Params *ps, const CkptMeta *meta,
                    char *err, size_t errlen);

/* Reads path into ps and meta.  Everything is checked (size, magic,
 * version, model, tensor sizes, checksum) before ps is touched: on error ps
 * is unchanged.  Returns 0, -CN_EIO or -CN_EFORMAT. */
int checkpoint_load(const char *path, Params *ps, CkptMeta *meta,
                    char *err, size_t errlen);

/* Size in bytes of a version-1 checkpoint of the reference model. */
size_t checkpoint_size(void);

#endif

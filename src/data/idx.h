/*
 * idx.h: MNIST-format (IDX) data sets, plain or gzip.
 *
 * An IDX file is a big-endian header (magic 0x000008NN where 0x08 is the
 * unsigned-byte type and NN the number of dimensions, then NN u32 sizes)
 * followed by the data.  Images are idx3 (count, rows, cols), labels idx1
 * (count).  data/dataset.h reads the four files of a data set.
 */
#ifndef CNNTOP_IDX_H
#define CNNTOP_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "cnntop/data.h"
#include "cnntop/limits.h"

#define IDX_MAX_CLASSES 10        /* the reference model has 10 outputs */
#define IDX_MAX_SIDE 4096         /* rows or cols above this are refused */
#define IDX_MAX_ITEMS CN_MAX_IMAGES /* more items than this are refused */

/* One IDX array of unsigned bytes. */
typedef struct IdxArray {
    uint8_t *data;  /* (dims[0], dims[1], ...) row-major; owned, free with idx_free() */
    int ndims;      /* 1 (labels) or 3 (images) */
    long dims[3];   /* e.g. {60000, 28, 28} */
} IdxArray;

/*
 * Reads one IDX file of unsigned bytes with `want_ndims` dimensions, plain or
 * gzip (detected by content, not by name).  The header is checked against the
 * file before anything is allocated from it.  Returns 0, or -CN_EIO /
 * -CN_EFORMAT / -CN_ENOMEM with a message naming `path` and the problem.
 * On error *out is left empty.
 */
int idx_read(IdxArray *out, const char *path, int want_ndims, char *err, size_t errlen);

/*
 * idx_read() on a descriptor that is already open (a file, or a memfd in
 * the fuzzer): the same checks, with `name` in messages.  Takes `fd` over
 * and closes it whatever the outcome.  `fd` must be at offset 0.
 */
int idx_read_fd(IdxArray *out, int fd, const char *name, int want_ndims, char *err,
                size_t errlen);

/*
 * The header of one IDX file alone, as idx_read() checks it (the magic,
 * the type, want_ndims sizes within the limits) and, for a plain file, its
 * size against the header: truncated or trailing bytes are refused here.
 * A gzip file's data is checked when idx_read() reads it.  Fills out's
 * ndims and dims, data NULL; errors as idx_read().  Reads 16 bytes at most.
 */
int idx_read_header(IdxArray *out, const char *path, int want_ndims, char *err, size_t errlen);

/* Frees the data of an IdxArray; safe on an empty or freed one. */
void idx_free(IdxArray *a);

#endif

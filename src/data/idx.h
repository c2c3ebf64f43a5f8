/*
 * idx.h: MNIST-format (IDX) data sets, plain or gzip.
 *
 * An IDX file is a big-endian header (magic 0x000008NN where 0x08 is the
 * unsigned-byte type and NN the number of dimensions, then NN u32 sizes)
 * followed by the data.  Images are idx3 (count, rows, cols), labels idx1
 * (count).  A Dataset holds a training and a test split read fully into
 * memory as uint8, read-only after dataset_load() returns.
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

typedef struct Dataset {
    uint8_t *train_images; /* (n_train, rows*cols), owned */
    uint8_t *train_labels; /* (n_train), each < IDX_MAX_CLASSES, owned */
    uint8_t *test_images;  /* (n_test, rows*cols), owned */
    uint8_t *test_labels;  /* (n_test), owned */
    long n_train;          /* e.g. 60000 */
    long n_test;           /* e.g. 10000 */
    int rows, cols;        /* e.g. 28, 28 */
    char dir[4096];        /* directory the files were found in */
} Dataset;

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

/* Frees the data of an IdxArray; safe on an empty or freed one. */
void idx_free(IdxArray *a);

/*
 * Finds and reads the four files of a data set in `dir`:
 * train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
 * t10k-labels-idx1-ubyte, each optionally with ".gz".  torchvision's layouts
 * (dir/raw, dir/MNIST/raw, dir/FashionMNIST/raw, dir/KMNIST/raw,
 * dir/EMNIST/raw) are searched too.  Checks that images and labels agree in
 * count, that training and test images have the same shape, that there is at
 * least one image in each split, and that every label is < IDX_MAX_CLASSES.
 * On error the Dataset is left empty and the message names the file.
 */
int dataset_load(Dataset *ds, const char *dir, char *err, size_t errlen);

/* The same for the test split alone (t10k-*; n_train 0, no training
 * arrays), for an engine that only evaluates. */
int dataset_load_test(Dataset *ds, const char *dir, char *err, size_t errlen);

/* Frees a Dataset's arrays; safe on an empty or freed one. */
void dataset_free(Dataset *ds);

#endif

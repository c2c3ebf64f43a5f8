/*
 * dataset.h: a data set of four IDX files (data/idx.h): a training and a
 * test split, read fully into memory as uint8, read-only after
 * dataset_load() returns.
 */
#ifndef CNNTOP_DATASET_H
#define CNNTOP_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "data/idx.h"

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

/*
 * What dataset_load() (or with test_only dataset_load_test()) would find,
 * checked before anything is loaded: the directory, the four files (two
 * for test_only), each header (idx_read_header(): a plain file cut short
 * or too long is refused here), images and labels agreeing in count, the
 * two splits in shape.  Fills ds's sizes and dir, no arrays.  Errors as
 * dataset_load(); the labels' values and gzip data are checked as they
 * are loaded.
 */
int dataset_check(Dataset *ds, const char *dir, int test_only, char *err, size_t errlen);

/* Frees a Dataset's arrays; safe on an empty or freed one. */
void dataset_free(Dataset *ds);

#endif

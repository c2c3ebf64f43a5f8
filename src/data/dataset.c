/*
 * dataset.c: the four IDX files of a data set, found in a directory (or in
 * torchvision's layouts under it), read with idx_read() and checked
 * against each other.
 */
#include "data/dataset.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"

enum { DS_TRAIN_IMAGES, DS_TRAIN_LABELS, DS_TEST_IMAGES, DS_TEST_LABELS, DS_FILES };

static const char *const ds_names[DS_FILES] = {
    "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
};

/* Where torchvision's MNIST, FashionMNIST, KMNIST and EMNIST put the files. */
static const char *const ds_subdirs[] = {
    "", "raw", "MNIST/raw", "FashionMNIST/raw", "KMNIST/raw", "EMNIST/raw",
};

#define DS_PATH_MAX (sizeof ((Dataset *)0)->dir + 64)

/* The files of one data set while it is being read. */
typedef struct DatasetFiles {
    char dir[sizeof ((Dataset *)0)->dir]; /* the directory the files are in */
    char path[DS_FILES][DS_PATH_MAX];     /* each file, plain or .gz */
    IdxArray arr[DS_FILES];               /* what was read; owned */
    int first;                            /* the first file wanted: DS_TRAIN_IMAGES,
                                             or DS_TEST_IMAGES for the test split only */
} DatasetFiles;

static const char *ds_hint(const char *dir)
{
    return strcmp(dir, CN_DEFAULT_DATA_DIR) == 0
               ? " (install Debian's dataset-fashion-mnist or pass --data DIR)"
               : "";
}

/* Writes "a/b" (no doubled slash; b may be empty); 0, or -1 if it does not fit. */
static int path_join(char *out, size_t size, const char *a, const char *b)
{
    size_t n = strlen(a);
    const char *sep = *b && n && a[n - 1] != '/' ? "/" : "";
    int k = snprintf(out, size, "%s%s%s", a, sep, b);

    return k < 0 || (size_t)k >= size ? -1 : 0;
}

/*
 * Looks for dir/name, then dir/name.gz.  The plain file wins when both
 * exist: torchvision keeps the .gz beside the file it unpacked, and the
 * plain one is faster to read.  Returns 1 when found (path in out), 0 when
 * neither is there (ENOENT, ENOTDIR), or -errno of the first other failure
 * (a symbolic link loop, a directory that cannot be searched), path in out.
 */
static int ds_file_find(char *out, size_t size, const char *dir, const char *name)
{
    struct stat st;
    size_t n;

    if (path_join(out, size, dir, name) < 0)
        return -ENAMETOOLONG;
    if (stat(out, &st) == 0)
        return 1;
    if (errno != ENOENT && errno != ENOTDIR)
        return -errno;
    n = strlen(out);
    if (n + 4 > size)
        return -ENAMETOOLONG;
    memcpy(out + n, ".gz", 4);
    if (stat(out, &st) == 0)
        return 1;
    return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
}

static int ds_dir_check(const char *dir, char *err, size_t errlen)
{
    DIR *d;

    if (!*dir)
        return cn_fail(err, errlen, -CN_EINVAL, "\"\": empty directory name");
    if (strlen(dir) + 32 >= sizeof ((Dataset *)0)->dir)
        return cn_fail(err, errlen, -CN_EINVAL, "%.64s...: path too long", dir);
    if (!(d = opendir(dir)))
        return cn_fail(err, errlen, -CN_EIO, "%s: %s%s", dir, strerror(errno), ds_hint(dir));
    closedir(d);
    return 0;
}

/* Picks the first candidate directory that holds the first file wanted
 * (the training images, or the test images for the test split alone). */
static int ds_dir_find(DatasetFiles *f, const char *dir, char *err, size_t errlen)
{
    char probe[DS_PATH_MAX];

    for (size_t i = 0; i < sizeof ds_subdirs / sizeof ds_subdirs[0]; i++) {
        if (path_join(f->dir, sizeof f->dir, dir, ds_subdirs[i]) < 0)
            continue;
        int found = ds_file_find(probe, sizeof probe, f->dir, ds_names[f->first]);
        if (found > 0)
            return 0;
        if (found < 0)
            return cn_fail(err, errlen, -CN_EIO, "%s: %s", probe, strerror(-found));
    }
    f->dir[0] = '\0';
    return cn_fail(err, errlen, -CN_EIO,
                   "%s: no MNIST-format data (want %s[.gz], %s[.gz], %s[.gz], %s[.gz] "
                   "in it or in raw/, MNIST/raw/, FashionMNIST/raw/, KMNIST/raw/ "
                   "or EMNIST/raw/)%s",
                   dir, ds_names[0], ds_names[1], ds_names[2], ds_names[3], ds_hint(dir));
}

static int ds_files_find(DatasetFiles *f, char *err, size_t errlen)
{
    for (int i = f->first; i < DS_FILES; i++) {
        int found = ds_file_find(f->path[i], sizeof f->path[i], f->dir, ds_names[i]);
        if (found > 0)
            continue;
        if (found < 0)
            return cn_fail(err, errlen, -CN_EIO, "%s: %s", f->path[i], strerror(-found));
        path_join(f->path[i], sizeof f->path[i], f->dir, ds_names[i]);
        return cn_fail(err, errlen, -CN_EIO, "%s: not found (nor with .gz)", f->path[i]);
    }
    return 0;
}

/* Reads each file wanted, whole, or with headers_only its header alone
 * (idx_read_header()). */
static int ds_files_read(DatasetFiles *f, int headers_only, char *err, size_t errlen)
{
    for (int i = f->first; i < DS_FILES; i++) {
        int ndims = i == DS_TRAIN_IMAGES || i == DS_TEST_IMAGES ? 3 : 1;
        int rc = headers_only ? idx_read_header(&f->arr[i], f->path[i], ndims, err, errlen)
                              : idx_read(&f->arr[i], f->path[i], ndims, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* idx_read() refuses a count of 0, so each split holds at least one item.
 * The labels' values are checked where they were read (data not NULL). */
static int ds_pair_check(const DatasetFiles *f, int images, char *err, size_t errlen)
{
    const IdxArray *im = &f->arr[images], *lb = &f->arr[images + 1];

    if (lb->dims[0] != im->dims[0])
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: %ld labels, but %ld images in %s",
                       f->path[images + 1], lb->dims[0], im->dims[0], f->path[images]);
    for (long i = 0; lb->data && i < lb->dims[0]; i++)
        if (lb->data[i] >= IDX_MAX_CLASSES)
            return cn_fail(err, errlen, -CN_EFORMAT,
                           "%s: label %d at index %ld out of range (the model has %d classes)",
                           f->path[images + 1], lb->data[i], i, IDX_MAX_CLASSES);
    return 0;
}

static int ds_files_check(const DatasetFiles *f, char *err, size_t errlen)
{
    const IdxArray *tr = &f->arr[DS_TRAIN_IMAGES], *te = &f->arr[DS_TEST_IMAGES];
    int rc;

    if (f->first == DS_TRAIN_IMAGES && (rc = ds_pair_check(f, DS_TRAIN_IMAGES, err, errlen)) < 0)
        return rc;
    if ((rc = ds_pair_check(f, DS_TEST_IMAGES, err, errlen)) < 0)
        return rc;
    if (f->first == DS_TRAIN_IMAGES && (te->dims[1] != tr->dims[1] || te->dims[2] != tr->dims[2]))
        return cn_fail(err, errlen, -CN_EFORMAT,
                       "%s: %ldx%ld images, but the training images are %ldx%ld",
                       f->path[DS_TEST_IMAGES], te->dims[1], te->dims[2], tr->dims[1],
                       tr->dims[2]);
    return 0;
}

/* Moves the arrays into the Dataset, which owns them from here on. */
static void ds_fill(Dataset *ds, DatasetFiles *f)
{
    ds->train_images = f->arr[DS_TRAIN_IMAGES].data;
    ds->train_labels = f->arr[DS_TRAIN_LABELS].data;
    ds->test_images = f->arr[DS_TEST_IMAGES].data;
    ds->test_labels = f->arr[DS_TEST_LABELS].data;
    ds->n_train = f->first == DS_TRAIN_IMAGES ? f->arr[DS_TRAIN_IMAGES].dims[0] : 0;
    ds->n_test = f->arr[DS_TEST_IMAGES].dims[0];
    ds->rows = (int)f->arr[DS_TEST_IMAGES].dims[1];
    ds->cols = (int)f->arr[DS_TEST_IMAGES].dims[2];
    memcpy(ds->dir, f->dir, sizeof ds->dir);
    memset(f->arr, 0, sizeof f->arr);
}

/* Loads the data set (or with headers_only checks the headers alone, ds
 * then holding the sizes and the directory and no arrays). */
static int ds_load(Dataset *ds, const char *dir, int first, int headers_only, char *err,
                   size_t errlen)
{
    DatasetFiles *f;
    int rc;

    if (!ds || !dir)
        return cn_fail(err, errlen, -CN_EINVAL, "dataset_load: no data directory given");
    memset(ds, 0, sizeof *ds);
    if ((rc = ds_dir_check(dir, err, errlen)) < 0)
        return rc;
    /* About 20 KiB of paths: on the heap, not on a possibly small thread stack. */
    if (!(f = calloc(1, sizeof *f)))
        return cn_fail(err, errlen, -CN_ENOMEM, "%s: cannot allocate %zu bytes", dir,
                       sizeof *f);
    f->first = first;
    if ((rc = ds_dir_find(f, dir, err, errlen)) < 0)
        goto fail;
    if ((rc = ds_files_find(f, err, errlen)) < 0)
        goto fail;
    if ((rc = ds_files_read(f, headers_only, err, errlen)) < 0)
        goto fail;
    if ((rc = ds_files_check(f, err, errlen)) < 0)
        goto fail;
    ds_fill(ds, f);
    free(f);
    return 0;
fail:
    for (int i = 0; i < DS_FILES; i++)
        idx_free(&f->arr[i]);
    free(f);
    return rc;
}

int dataset_load(Dataset *ds, const char *dir, char *err, size_t errlen)
{
    return ds_load(ds, dir, DS_TRAIN_IMAGES, 0, err, errlen);
}

int dataset_load_test(Dataset *ds, const char *dir, char *err, size_t errlen)
{
    return ds_load(ds, dir, DS_TEST_IMAGES, 0, err, errlen);
}

int dataset_check(Dataset *ds, const char *dir, int test_only, char *err, size_t errlen)
{
    return ds_load(ds, dir, test_only ? DS_TEST_IMAGES : DS_TRAIN_IMAGES, 1, err, errlen);
}

void dataset_free(Dataset *ds)
{
    if (!ds)
        return;
    free(ds->train_images);
    free(ds->train_labels);
    free(ds->test_images);
    free(ds->test_labels);
    memset(ds, 0, sizeof *ds);
}

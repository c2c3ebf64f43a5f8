/*
 * fuzz_idx.c: libFuzzer target for the IDX reader, plain and gzip.
 *
 * The first byte of an input chooses what is read:
 *   bit 7 clear: one IDX file.  The rest of the input is the file's bytes,
 *                handed to idx_read_fd() through a memfd, which is the code
 *                path idx_read() takes after open().  (byte % 3) + 1 is the
 *                number of dimensions asked for; bit 6 names the file
 *                "x.gz" so that the "not gzip data" check runs too.
 *   bit 7 set:   a whole data set.  Three u16 little-endian lengths follow;
 *                they cut the rest into the four files (train images,
 *                train labels, test images, test labels), which are
 *                written to a private directory for dataset_load(), with
 *                ".gz" names when bit 6 is set.
 * Whatever the input, the reader must return (no crash, no leak, no
 * undefined behaviour), and its result must keep the contract in idx.h and dataset.h:
 * on error an empty array and a one-line message; on success dimensions
 * within the limits and data of exactly their product.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "data/dataset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fuzz_names[4] = {
    "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
};

static char fuzz_dir[256]; /* the data set directory, made on first use */

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_idx: contract broken: %s\n", what);
    abort();
}

static void dir_remove(void)
{
    char p[512];

    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", fuzz_dir, fuzz_names[i]);
        unlink(p);
        snprintf(p, sizeof p, "%s/%s.gz", fuzz_dir, fuzz_names[i]);
        unlink(p);
    }
    rmdir(fuzz_dir);
}

static void write_file(const char *path, const uint8_t *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    if (fd < 0)
        fuzz_fail("cannot create a data file");
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            fuzz_fail("cannot write a data file");
        p += w;
        n -= (size_t)w;
    }
    close(fd);
}

static void check_message(const char *err)
{
    if (!err[0] || strchr(err, '\n'))
        fuzz_fail("error message empty or not one line");
}

static void fuzz_one_file(const uint8_t *data, size_t size, int ndims, int gz)
{
    static int mfd = -1;
    IdxArray a;
    char err[1024] = "";

    if (mfd < 0 && (mfd = memfd_create("fuzz_idx", MFD_CLOEXEC)) < 0)
        fuzz_fail("memfd_create");
    if (ftruncate(mfd, 0) != 0 || pwrite(mfd, data, size, 0) != (ssize_t)size ||
        lseek(mfd, 0, SEEK_SET) != 0)
        fuzz_fail("cannot fill the memfd");
    /* idx_read_fd() closes what it is given; the memfd stays for the next input. */
    int rc = idx_read_fd(&a, dup(mfd), gz ? "x.gz" : "x", ndims, err, sizeof err);
    if (rc != 0) {
        check_message(err);
        if (a.data || a.ndims || a.dims[0])
            fuzz_fail("array not empty after an error");
        return;
    }
    size_t n = 1;
    for (int i = 0; i < a.ndims; i++) {
        if (a.dims[i] < 1 || a.dims[i] > (i ? IDX_MAX_SIDE : IDX_MAX_ITEMS))
            fuzz_fail("dimension out of the limits");
        n *= (size_t)a.dims[i];
    }
    if (a.ndims != ndims || n > size)
        fuzz_fail("accepted array does not match the input");
    /* Touch every byte so that ASan sees any short allocation. */
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum ^= a.data[i];
    (void)sum;
    idx_free(&a);
}

static void fuzz_dataset(const uint8_t *data, size_t size, int gz)
{
    Dataset ds;
    char err[1024] = "", path[512];
    size_t len[4];

    if (!fuzz_dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/fuzz_idx.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(fuzz_dir))
            fuzz_fail("mkdtemp");
        atexit(dir_remove);
    }
    if (size < 6)
        return;
    for (int i = 0; i < 3; i++)
        len[i] = (size_t)data[2 * i] | (size_t)data[2 * i + 1] << 8;
    data += 6;
    size -= 6;
    for (int i = 0; i < 4; i++) {
        size_t n = i == 3 || len[i] > size ? size : len[i];
        snprintf(path, sizeof path, "%s/%s%s", fuzz_dir, fuzz_names[i], gz ? ".gz" : "");
        write_file(path, data, n);
        data += n;
        size -= n;
    }
    int rc = dataset_load(&ds, fuzz_dir, err, sizeof err);
    if (rc != 0)
        check_message(err);
    else if (ds.n_train < 1 || ds.n_test < 1 || ds.rows < 1 || ds.cols < 1)
        fuzz_fail("accepted data set with an empty split");
    else
        for (long i = 0; i < ds.n_train; i++)
            if (ds.train_labels[i] >= IDX_MAX_CLASSES)
                fuzz_fail("accepted a label out of range");
    dataset_free(&ds);
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s%s", fuzz_dir, fuzz_names[i], gz ? ".gz" : "");
        unlink(path);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 0x80)
        fuzz_dataset(data + 1, size - 1, data[0] & 0x40);
    else
        fuzz_one_file(data + 1, size - 1, data[0] % 3 + 1, data[0] & 0x40);
    return 0;
}

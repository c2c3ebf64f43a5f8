/*
 * test_idx.c: IDX reading and data set loading, good files and bad.
 *
 * Every input is written here, into a fresh directory under $TMPDIR (or
 * /tmp) that is removed at the end: plain and gzip IDX files, broken ones
 * (bad magic, type, dimensions, sizes, truncated, damaged, too long) and
 * small data sets in the layouts dataset_load() searches.  Each failure
 * case checks the code, that the message names the file, and a word naming
 * the problem.  The check before a run (dataset_check(), idx_read_header())
 * reads headers alone: sizes, counts and a plain file cut short, not the
 * labels' values.  When Debian's dataset-fashion-mnist is installed, the real
 * data is loaded too; without it that part is skipped silently.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "cnntop/engine.h"
#include "data/dataset.h"

#define PATH_LEN (4096 + 512)

static char root[4096]; /* the temporary directory of this run */

/* Prints each error message when CNNTOP_TEST_VERBOSE is set, to eyeball them. */
static void show(const char *msg)
{
    if (getenv("CNNTOP_TEST_VERBOSE"))
        fprintf(stderr, "  msg: %s\n", msg);
}

/* idx_read() must fail with `code_`, leave the array empty and write one
 * line naming `p_` and containing `word_`. */
#define EXPECT_READ_FAIL(p_, nd_, code_, word_)                                \
    do {                                                                       \
        IdxArray a_;                                                           \
        char e_[1024] = "";                                                    \
        memset(&a_, 0x5a, sizeof a_);                                          \
        int rc_ = idx_read(&a_, (p_), (nd_), e_, sizeof e_);                   \
        show(e_);                                                              \
        CHECK_INT(rc_, ==, -(code_));                                          \
        CHECK_STR_HAS(e_, (p_));                                               \
        CHECK_STR_HAS(e_, (word_));                                            \
        CHECK(strchr(e_, '\n') == NULL);                                       \
        CHECK(a_.data == NULL && a_.ndims == 0 && a_.dims[0] == 0);            \
        if (rc_ == 0)                                                          \
            idx_free(&a_);                                                     \
    } while (0)

/* dataset_load() must fail likewise and leave the Dataset zeroed. */
#define EXPECT_LOAD_FAIL(dir_, code_, p_, word_)                               \
    do {                                                                       \
        static Dataset ds_, zero_;                                             \
        char e_[2048] = "";                                                    \
        memset(&ds_, 0x5a, sizeof ds_);                                        \
        int rc_ = dataset_load(&ds_, (dir_), e_, sizeof e_);                   \
        show(e_);                                                              \
        CHECK_INT(rc_, ==, -(code_));                                          \
        CHECK_STR_HAS(e_, (p_));                                               \
        CHECK_STR_HAS(e_, (word_));                                            \
        CHECK(strchr(e_, '\n') == NULL);                                       \
        CHECK(memcmp(&ds_, &zero_, sizeof ds_) == 0);                          \
        if (rc_ == 0)                                                          \
            dataset_free(&ds_);                                                \
    } while (0)

/* ---- writing inputs ---- */

static const char *at(char *buf, const char *rel)
{
    snprintf(buf, PATH_LEN, "%s/%s", root, rel);
    return buf;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);

    if (!p) {
        perror("malloc");
        abort();
    }
    return p;
}

/* Deterministic bytes; `mix` 0 gives a compressible ramp, else noise. */
static void fill(uint8_t *p, size_t n, uint32_t seed, int mix)
{
    uint32_t s = seed * 2654435761u + 1;

    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = mix ? (uint8_t)(s >> 24) : (uint8_t)(i % 251 + seed);
    }
}

/* An IDX file in memory: magic 0,0,type,ndims, big-endian dims, data. */
static uint8_t *idx_bytes(uint8_t type, int ndims, const uint32_t *dims, const uint8_t *data,
                          size_t ndata, size_t *len)
{
    uint8_t *p = xmalloc(4 + 4 * (size_t)ndims + ndata);

    p[0] = 0, p[1] = 0, p[2] = type, p[3] = (uint8_t)ndims;
    for (int i = 0; i < ndims; i++) {
        uint8_t *q = p + 4 + 4 * i;
        q[0] = (uint8_t)(dims[i] >> 24), q[1] = (uint8_t)(dims[i] >> 16);
        q[2] = (uint8_t)(dims[i] >> 8), q[3] = (uint8_t)dims[i];
    }
    if (ndata)
        memcpy(p + 4 + 4 * ndims, data, ndata);
    *len = 4 + 4 * (size_t)ndims + ndata;
    return p;
}

static void write_plain(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");

    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(fwrite(p, 1, n, f) == n);
    CHECK(fclose(f) == 0);
}

static void write_gz(const char *path, const void *p, size_t n)
{
    gzFile gz = gzopen(path, "wb");

    CHECK(gz != NULL);
    if (!gz)
        return;
    CHECK(n == 0 || gzwrite(gz, p, (unsigned)n) == (int)n);
    CHECK(gzclose(gz) == Z_OK);
}

static void write_file(const char *path, const void *p, size_t n, int gz)
{
    if (gz)
        write_gz(path, p, n);
    else
        write_plain(path, p, n);
}

/* The whole of a small file (up to 1 MiB); free the result. */
static uint8_t *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *p = xmalloc(1 << 20);

    *n = f ? fread(p, 1, 1 << 20, f) : 0;
    if (f)
        fclose(f);
    return p;
}

/* Writes an IDX file of ubyte with the given dims and data. */
static void write_idx(const char *path, int ndims, const uint32_t *dims, const uint8_t *data,
                      size_t ndata, int gz)
{
    size_t len;
    uint8_t *p = idx_bytes(0x08, ndims, dims, data, ndata, &len);

    write_file(path, p, len, gz);
    free(p);
}

static void mkdirs(const char *rel)
{
    char path[PATH_LEN];

    at(path, rel);
    for (char *s = path + strlen(root) + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(path, 0755);
            *s = '/';
        }
    CHECK(mkdir(path, 0755) == 0);
}

/* ---- idx_read ---- */

static void test_read_plain(void)
{
    char path[PATH_LEN];
    uint32_t d3[3] = {50, 28, 28}, d1[1] = {7};
    uint8_t img[50 * 28 * 28], lab[7] = {0, 9, 3, 255, 1, 0, 7};
    IdxArray a;
    char err[512] = "";

    fill(img, sizeof img, 1, 1);
    write_idx(at(path, "images3"), 3, d3, img, sizeof img, 0);
    CHECK_INT(idx_read(&a, path, 3, err, sizeof err), ==, 0);
    CHECK_INT(a.ndims, ==, 3);
    CHECK_INT(a.dims[0], ==, 50);
    CHECK_INT(a.dims[1], ==, 28);
    CHECK_INT(a.dims[2], ==, 28);
    CHECK(a.data && memcmp(a.data, img, sizeof img) == 0);
    idx_free(&a);
    CHECK(a.data == NULL);
    idx_free(&a); /* twice is fine */

    write_idx(at(path, "labels1"), 1, d1, lab, sizeof lab, 0);
    CHECK_INT(idx_read(&a, path, 1, err, sizeof err), ==, 0);
    CHECK_INT(a.ndims, ==, 1);
    CHECK_INT(a.dims[0], ==, 7);
    CHECK(a.data && memcmp(a.data, lab, sizeof lab) == 0);
    idx_free(&a);
}

/* 2000 images are 1.5 MB, more than the first gzip buffer, so it has to grow. */
static void test_read_gzip(void)
{
    char path[PATH_LEN];
    uint32_t d3[3] = {2000, 28, 28}, d1[1] = {1};
    size_t n = 2000 * 28 * 28;
    uint8_t *img = xmalloc(n), lab[1] = {4};
    IdxArray a;
    char err[512] = "";

    fill(img, n, 2, 0);
    write_idx(at(path, "images3.gz"), 3, d3, img, n, 1);
    CHECK_INT(idx_read(&a, path, 3, err, sizeof err), ==, 0);
    CHECK_INT(a.dims[0], ==, 2000);
    CHECK_INT(a.dims[1], ==, 28);
    CHECK(a.data && memcmp(a.data, img, n) == 0);
    idx_free(&a);

    /* gzip is recognised by content, whatever the name */
    write_idx(at(path, "gzip-without-suffix"), 1, d1, lab, 1, 1);
    CHECK_INT(idx_read(&a, path, 1, err, sizeof err), ==, 0);
    CHECK(a.data && a.dims[0] == 1 && a.data[0] == 4);
    idx_free(&a);
    free(img);
}

static void test_read_bad_header(void)
{
    char path[PATH_LEN];
    uint32_t d3[3] = {2, 3, 4}, d1[1] = {24};
    uint8_t data[24] = {0}, *p;
    size_t len;

    p = idx_bytes(0x08, 3, d3, data, 24, &len);
    p[1] = 0x09;
    write_plain(at(path, "bad-magic"), p, len);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "bad IDX magic 0x00090803 (want 0x00000803)");
    write_plain(at(path, "text"), "hello, world\n", 13);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "magic");
    p[1] = 0, p[2] = 0x0D;
    write_plain(at(path, "float"), p, len);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "type 0x0D (float) not supported");
    write_gz(at(path, "float.gz"), p, len);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "want 0x08 (unsigned byte)");
    free(p);

    write_idx(at(path, "ndims1"), 1, d1, data, 24, 0);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "bad IDX magic 0x00000801 (want 0x00000803)");
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "dimensions");
    write_idx(at(path, "ndims3"), 3, d3, data, 24, 0);
    EXPECT_READ_FAIL(path, 1, CN_EFORMAT, "3 dimensions, want 1");
}

static void test_read_bad_dims(void)
{
    char path[PATH_LEN];
    uint32_t zero0[3] = {0, 28, 28}, zero2[3] = {5, 28, 0}, zero1[1] = {0};
    uint32_t huge[3] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, wide[3] = {1, 28, 5000};
    uint32_t most[3] = {IDX_MAX_ITEMS, IDX_MAX_SIDE, IDX_MAX_SIDE};
    uint8_t data[100];

    fill(data, sizeof data, 3, 1);
    write_idx(at(path, "zero-count"), 3, zero0, NULL, 0, 0);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "dimension 1 of 3 is 0");
    write_idx(at(path, "zero-cols"), 3, zero2, NULL, 0, 0);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "dimension 3 of 3 is 0");
    write_idx(at(path, "zero-labels.gz"), 1, zero1, NULL, 0, 1);
    EXPECT_READ_FAIL(path, 1, CN_EFORMAT, "is 0");

    /* Absurd sizes are refused from the header alone, before any allocation. */
    write_idx(at(path, "huge"), 3, huge, data, sizeof data, 0);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "4294967295 items, over the limit");
    write_idx(at(path, "huge.gz"), 3, huge, data, sizeof data, 1);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "over the limit");
    write_idx(at(path, "wide"), 3, wide, data, sizeof data, 0);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "side 5000, over the limit of 4096");

    /*
     * Within the limits, the header claims 1.6 PB.  Had the reader believed
     * it, malloc would fail (or ASan abort): the plain file is held to its
     * size, and the gzip buffer only grows as data arrives.
     */
    write_idx(at(path, "liar"), 3, most, data, sizeof data, 0);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "file has 100");
    write_idx(at(path, "liar.gz"), 3, most, data, sizeof data, 1);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "truncated: header says 1677721600000000 bytes, got 100");
}

static void test_read_truncated_plain(void)
{
    char path[PATH_LEN], name[64];
    uint32_t d3[3] = {10, 28, 28};
    uint8_t data[10 * 28 * 28];
    size_t len, cuts[] = {0, 3, 4, 9, 15, 16, 17, 16 + 28 * 28 * 5, 16 + 10 * 28 * 28 - 1};
    uint8_t *p;

    fill(data, sizeof data, 4, 1);
    p = idx_bytes(0x08, 3, d3, data, sizeof data, &len);
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        snprintf(name, sizeof name, "cut-%zu", cuts[i]);
        write_plain(at(path, name), p, cuts[i]);
        EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "truncated");
    }
    write_plain(at(path, "cut-header"), p, 10);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "header needs 16 bytes, got 10");
    write_plain(at(path, "cut-data"), p, 16 + 100);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "header says 7840 bytes of data, file has 100");
    free(p);
}

static void test_read_truncated_gzip(void)
{
    char path[PATH_LEN], name[64];
    uint32_t d3[3] = {10, 28, 28};
    uint8_t data[10 * 28 * 28], *gz;
    size_t len, n;

    fill(data, sizeof data, 5, 1);
    write_idx(at(path, "whole.gz"), 3, d3, data, sizeof data, 1);
    gz = read_all(path, &n);
    CHECK(n > 100);
    /* in the gzip header, the IDX header, the data, the gzip trailer */
    size_t cuts[] = {2, 5, 10, 14, 20, 30, n / 2, n - 9, n - 8, n - 4, n - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        snprintf(name, sizeof name, "cut-%zu.gz", cuts[i]);
        write_plain(at(path, name), gz, cuts[i]);
        EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "truncated");
    }
    free(gz);

    /* complete gzip streams holding too little */
    uint8_t *p = idx_bytes(0x08, 3, d3, data, sizeof data, &len);
    write_gz(at(path, "short-header.gz"), p, 9);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "truncated: the IDX header needs 16 bytes, got 9");
    write_gz(at(path, "short-data.gz"), p, len - 40);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "truncated: header says 7840 bytes, got 7800");
    write_gz(at(path, "empty-stream.gz"), p, 0);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "truncated");
    free(p);
}

static void test_read_not_gzip(void)
{
    char path[PATH_LEN];
    uint32_t d1[1] = {4};
    uint8_t lab[4] = {1, 2, 3, 4}, *gz;
    size_t n;

    write_idx(at(path, "plain-named.gz"), 1, d1, lab, 4, 0);
    EXPECT_READ_FAIL(path, 1, CN_EFORMAT, "not gzip data");
    write_plain(at(path, "empty.gz"), "", 0);
    EXPECT_READ_FAIL(path, 1, CN_EFORMAT, "not gzip data");
    write_plain(at(path, "one-byte.gz"), "\x1f", 1);
    EXPECT_READ_FAIL(path, 1, CN_EFORMAT, "not gzip data");
    write_plain(at(path, "gzip-magic-only"), "\x1f\x8b", 2);
    EXPECT_READ_FAIL(path, 1, CN_EFORMAT, "truncated");

    /* the compression method byte (8, deflate) of the gzip header */
    write_idx(at(path, "method.gz"), 1, d1, lab, 4, 1);
    gz = read_all(path, &n);
    gz[2] = 7;
    write_plain(path, gz, n);
    EXPECT_READ_FAIL(path, 1, CN_EFORMAT, "gzip data damaged");
    free(gz);
}

/* Damage in the middle of the compressed stream, in noise (stored blocks,
 * caught by the CRC) and in a ramp (Huffman codes, caught by inflate). */
static void test_read_damaged_gzip(void)
{
    char path[PATH_LEN], name[64];
    uint32_t d3[3] = {20, 28, 28};
    uint8_t data[20 * 28 * 28], *gz;
    size_t n;

    for (int mix = 0; mix <= 1; mix++) {
        snprintf(name, sizeof name, "damaged-%d.gz", mix);
        fill(data, sizeof data, 6, mix);
        write_idx(at(path, name), 3, d3, data, sizeof data, 1);
        gz = read_all(path, &n);
        CHECK(n > 64);
        for (size_t i = n / 2; i < n / 2 + 8; i++)
            gz[i] ^= 0x5a;
        write_plain(path, gz, n);
        EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "gzip data damaged");
        free(gz);
    }

    /* a wrong CRC in the trailer */
    fill(data, sizeof data, 7, 1);
    write_idx(at(path, "crc.gz"), 3, d3, data, sizeof data, 1);
    gz = read_all(path, &n);
    gz[n - 6] ^= 1;
    write_plain(path, gz, n);
    EXPECT_READ_FAIL(path, 3, CN_EFORMAT, "gzip data damaged");
    free(gz);
}

static void test_read_trailing(void)
{
    char path[PATH_LEN];
    uint32_t d1[1] = {5};
    uint8_t lab[8] = {1, 2, 3, 4, 5, 6, 7, 8};

    write_idx(at(path, "trailing"), 1, d1, lab, 8, 0);
    EXPECT_READ_FAIL(path, 1, CN_EFORMAT, "3 trailing bytes");
    write_idx(at(path, "trailing.gz"), 1, d1, lab, 8, 1);
    EXPECT_READ_FAIL(path, 1, CN_EFORMAT, "3 trailing bytes");
}

static void test_read_missing(void)
{
    char path[PATH_LEN];

    EXPECT_READ_FAIL(at(path, "no-such-file"), 1, CN_EIO, "No such file or directory");
    EXPECT_READ_FAIL(at(path, "no-such-dir/file.gz"), 1, CN_EIO, "No such file or directory");
    mkdirs("a-directory");
    EXPECT_READ_FAIL(at(path, "a-directory"), 1, CN_EIO, "Is a directory");

    IdxArray a;
    CHECK_INT(idx_read(&a, path, 2 + 2, NULL, 0), ==, -CN_EINVAL);
    CHECK_INT(idx_read(&a, at(path, "no-such-file"), 1, NULL, 0), ==, -CN_EIO);
}

/* ---- dataset_load ---- */

static const char *const names[4] = {
    "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
};

static void write_images(const char *dir, const char *name, uint32_t n, uint32_t side,
                         uint32_t seed, int gz)
{
    char rel[256], path[PATH_LEN];
    uint32_t d[3] = {n, side, side};
    uint8_t *img = xmalloc((size_t)n * side * side);

    snprintf(rel, sizeof rel, "%s/%s%s", dir, name, gz ? ".gz" : "");
    fill(img, (size_t)n * side * side, seed, 1);
    write_idx(at(path, rel), 3, d, img, (size_t)n * side * side, gz);
    free(img);
}

/* Labels i % 10, except `bad` (if >= 0) at index `at_i`. */
static void write_labels(const char *dir, const char *name, uint32_t n, int gz, int bad,
                         uint32_t at_i)
{
    char rel[256], path[PATH_LEN];
    uint32_t d[1] = {n};
    uint8_t *lab = xmalloc(n);

    for (uint32_t i = 0; i < n; i++)
        lab[i] = (uint8_t)(i % 10);
    if (bad >= 0)
        lab[at_i] = (uint8_t)bad;
    snprintf(rel, sizeof rel, "%s/%s%s", dir, name, gz ? ".gz" : "");
    write_idx(at(path, rel), 1, d, lab, n, gz);
    free(lab);
}

/* 50 training and 20 test images of 28x28 in root/rel. */
static void write_set(const char *rel, int gz)
{
    mkdirs(rel);
    write_images(rel, names[0], 50, 28, 10, gz);
    write_labels(rel, names[1], 50, gz, -1, 0);
    write_images(rel, names[2], 20, 28, 11, gz);
    write_labels(rel, names[3], 20, gz, -1, 0);
}

static void check_set(const Dataset *ds, const char *dir)
{
    uint8_t img[50 * 28 * 28];

    CHECK_INT(ds->n_train, ==, 50);
    CHECK_INT(ds->n_test, ==, 20);
    CHECK_INT(ds->rows, ==, 28);
    CHECK_INT(ds->cols, ==, 28);
    CHECK(strcmp(ds->dir, dir) == 0);
    fill(img, 50 * 28 * 28, 10, 1);
    CHECK(ds->train_images && memcmp(ds->train_images, img, 50 * 28 * 28) == 0);
    fill(img, 20 * 28 * 28, 11, 1);
    CHECK(ds->test_images && memcmp(ds->test_images, img, 20 * 28 * 28) == 0);
    for (int i = 0; i < 50; i++)
        CHECK_INT(ds->train_labels[i], ==, i % 10);
    for (int i = 0; i < 20; i++)
        CHECK_INT(ds->test_labels[i], ==, i % 10);
}

static void load_ok(const char *top, const char *used)
{
    char dir[PATH_LEN], want[PATH_LEN], err[2048] = "";
    Dataset ds;

    CHECK_INT(dataset_load(&ds, at(dir, top), err, sizeof err), ==, 0);
    show(err);
    check_set(&ds, at(want, used));
    dataset_free(&ds);
    CHECK(ds.train_images == NULL && ds.n_train == 0);
    dataset_free(&ds); /* twice is fine */
}

static void test_load_layouts(void)
{
    char path[PATH_LEN];

    write_set("plain", 0);
    load_ok("plain", "plain");
    write_set("tv/raw", 0);
    load_ok("tv", "tv/raw");
    write_set("fm/FashionMNIST/raw", 1);
    load_ok("fm", "fm/FashionMNIST/raw");

    /* the plain file wins over a .gz beside it (here one that would fail) */
    write_plain(at(path, "plain/train-images-idx3-ubyte.gz"), "junk", 4);
    load_ok("plain", "plain");
    /* a trailing slash does not double */
    load_ok("plain/", "plain/");
}

static void test_load_mismatch(void)
{
    char dir[PATH_LEN], file[PATH_LEN];

    write_set("count", 0);
    write_labels("count", names[1], 49, 0, -1, 0);
    EXPECT_LOAD_FAIL(at(dir, "count"), CN_EFORMAT, at(file, "count/train-labels-idx1-ubyte"),
                     "49 labels, but 50 images");
    write_set("count-test", 1);
    write_images("count-test", names[2], 21, 28, 11, 1);
    EXPECT_LOAD_FAIL(at(dir, "count-test"), CN_EFORMAT,
                     at(file, "count-test/t10k-labels-idx1-ubyte.gz"), "20 labels, but 21 images");

    write_set("shape", 0);
    write_images("shape", names[2], 20, 14, 11, 0);
    EXPECT_LOAD_FAIL(at(dir, "shape"), CN_EFORMAT, at(file, "shape/t10k-images-idx3-ubyte"),
                     "14x14 images, but the training images are 28x28");

    write_set("label", 0);
    write_labels("label", names[1], 50, 0, 12, 5);
    EXPECT_LOAD_FAIL(at(dir, "label"), CN_EFORMAT, at(file, "label/train-labels-idx1-ubyte"),
                     "label 12 at index 5 out of range (the model has 10 classes)");
    write_set("label-test", 0);
    write_labels("label-test", names[3], 20, 0, 10, 19);
    EXPECT_LOAD_FAIL(at(dir, "label-test"), CN_EFORMAT,
                     at(file, "label-test/t10k-labels-idx1-ubyte"), "label 10 at index 19");
}

static void test_load_missing(void)
{
    char path[PATH_LEN], file[PATH_LEN];

    write_set("missing", 0);
    CHECK(unlink(at(file, "missing/t10k-labels-idx1-ubyte")) == 0);
    EXPECT_LOAD_FAIL(at(path, "missing"), CN_EIO, file, "not found");

    write_set("broken/raw", 1);
    write_plain(at(file, "broken/raw/train-labels-idx1-ubyte.gz"), "\x1f\x8b\x08", 3);
    EXPECT_LOAD_FAIL(at(path, "broken"), CN_EFORMAT, file, "truncated");

    mkdirs("empty");
    EXPECT_LOAD_FAIL(at(path, "empty"), CN_EIO, path, "no MNIST-format data");
    EXPECT_LOAD_FAIL(at(path, "empty"), CN_EIO, path, "train-images-idx3-ubyte[.gz]");
    char err[2048] = "";
    Dataset ds;
    CHECK_INT(dataset_load(&ds, path, err, sizeof err), ==, -CN_EIO);
    CHECK(strstr(err, "dataset-fashion-mnist") == NULL); /* the hint is for the default only */
    EXPECT_LOAD_FAIL(at(path, "no-such-dir"), CN_EIO, path, "No such file or directory");
    write_plain(at(path, "a-file"), "x", 1);
    EXPECT_LOAD_FAIL(path, CN_EIO, path, "Not a directory");
    CHECK_INT(dataset_load(&ds, NULL, NULL, 0), ==, -CN_EINVAL);
}

/* Debian's dataset-fashion-mnist, when installed. */
static void test_load_real(void)
{
    Dataset ds;
    char err[2048] = "";
    long bad = 0;
    struct stat st;

    if (stat(CN_DEFAULT_DATA_DIR, &st) != 0)
        return;
    CHECK_INT(dataset_load(&ds, CN_DEFAULT_DATA_DIR, err, sizeof err), ==, 0);
    show(err);
    CHECK_INT(ds.n_train, ==, 60000);
    CHECK_INT(ds.n_test, ==, 10000);
    CHECK_INT(ds.rows, ==, 28);
    CHECK_INT(ds.cols, ==, 28);
    CHECK(strcmp(ds.dir, CN_DEFAULT_DATA_DIR) == 0);
    for (long i = 0; i < ds.n_train; i++)
        bad += ds.train_labels[i] >= 10;
    for (long i = 0; i < ds.n_test; i++)
        bad += ds.test_labels[i] >= 10;
    CHECK_INT(bad, ==, 0);
    dataset_free(&ds);
}

/* ---- setup ---- */

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* dataset_check(): what a run would load, from the headers alone. */
static void test_check_headers(void)
{
    char dir[PATH_LEN], path[PATH_LEN], err[2048] = "";
    Dataset ds;
    IdxArray a;

    write_set("hdr", 1);
    write_set("hdr-plain", 0);
    CHECK_INT(dataset_check(&ds, at(dir, "hdr"), 0, err, sizeof err), ==, 0);
    CHECK_INT(ds.n_train, ==, 50);
    CHECK_INT(ds.n_test, ==, 20);
    CHECK_INT(ds.rows, ==, 28);
    CHECK(ds.train_images == NULL && ds.train_labels == NULL && ds.test_labels == NULL);
    CHECK_INT(idx_read_header(&a, at(path, "hdr/t10k-images-idx3-ubyte.gz"), 3, err, sizeof err),
              ==, 0);
    CHECK(a.data == NULL && a.dims[0] == 20 && a.dims[2] == 28);
    write_labels("hdr", names[1], 50, 1, 12, 5); /* a bad label: the load's to find */
    CHECK_INT(dataset_check(&ds, dir, 0, err, sizeof err), ==, 0);
    write_labels("hdr", names[3], 19, 1, -1, 0);
    CHECK_INT(dataset_check(&ds, dir, 1, err, sizeof err), ==, -CN_EFORMAT);
    CHECK_STR_HAS(err, "19 labels, but 20 images");
    /* A plain file that looks valid but is cut short, by its size. */
    CHECK(truncate(at(path, "hdr-plain/train-images-idx3-ubyte"), 16 + 49 * 784) == 0);
    CHECK_INT(dataset_check(&ds, at(dir, "hdr-plain"), 0, err, sizeof err), ==, -CN_EFORMAT);
    CHECK_STR_HAS(err, path);
    CHECK_STR_HAS(err, "truncated");
    CHECK(ds.n_train == 0 && ds.dir[0] == '\0');
    CHECK_INT(dataset_check(&ds, dir, 1, err, sizeof err), ==, 0); /* the test split alone */
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(root, sizeof root, "%s/test_idx.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        perror(root);
        return 1;
    }
    test_read_plain();
    test_read_gzip();
    test_read_bad_header();
    test_read_bad_dims();
    test_read_truncated_plain();
    test_read_truncated_gzip();
    test_read_not_gzip();
    test_read_damaged_gzip();
    test_read_trailing();
    test_read_missing();
    test_load_layouts();
    test_load_mismatch();
    test_load_missing();
    test_check_headers();
    test_load_real();
    CHECK(nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0);
    return check_report();
}

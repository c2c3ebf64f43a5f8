/*
 * idx.c: reading MNIST-format (IDX) files and the four-file data sets.
 *
 * An IDX file is a 4-byte big-endian magic (0, 0, type, ndims), ndims
 * big-endian u32 sizes, then the data, row-major.  Only type 0x08 (unsigned
 * byte) is accepted.  Files are read through zlib's gz* functions, which read
 * plain files transparently, but gzip is recognised by its content (1f 8b)
 * so that messages can say whether the data or its compression is at fault.
 *
 * A header is never trusted with an allocation: the sizes are checked
 * against fixed limits first, and then, for a plain file, against the
 * file's real size.  The uncompressed size of a gzip file is not known up
 * front, so its buffer starts small and doubles as data actually arrives,
 * never past what the header announced.  Either way the file must end
 * exactly where the header says: a short file is "truncated", a long one has
 * "trailing bytes", and a gzip stream is read to its end so that its CRC is
 * checked.  Bytes after the end of the gzip stream itself are ignored by
 * zlib, as gzip -d ignores them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "data/idx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "util/err.h"

#define IDX_TYPE_UBYTE 0x08
#define IDX_GZ_FIRST (1u << 20)   /* bytes: first buffer for gzip data */
#define IDX_CHUNK (1u << 30)      /* bytes: most one gzread() is asked for */
#define IDX_GZ_BUFFER (128u << 10) /* bytes: zlib's input buffer */

/* One file being read. */
typedef struct IdxReader {
    const char *path; /* as given, for messages */
    gzFile gz;        /* NULL until opened; owns the descriptor */
    int gzip;         /* 1 when the content starts with 1f 8b */
    off_t size;       /* bytes: the file's size as stored */
    size_t header;    /* bytes: the IDX header, 4 + 4 * ndims */
} IdxReader;

static const char *type_name(int type)
{
    switch (type) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "short";
    case 0x0C: return "int";
    case 0x0D: return "float";
    case 0x0E: return "double";
    default: return "unknown";
    }
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);

    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * Checks that `fd` is a regular file and looks at its first two bytes to
 * tell gzip from plain.  pread() leaves the offset at 0 for zlib.
 */
static int reader_sniff(IdxReader *r, int fd, char *err, size_t errlen)
{
    struct stat st;
    uint8_t m[2];
    ssize_t n;

    if (fstat(fd, &st) < 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", r->path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", r->path, strerror(EISDIR));
    if (!S_ISREG(st.st_mode))
        return cn_fail(err, errlen, -CN_EIO, "%s: not a regular file", r->path);
    r->size = st.st_size;
    n = pread(fd, m, sizeof m, 0);
    if (n < 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", r->path, strerror(errno));
    r->gzip = n == 2 && m[0] == 0x1f && m[1] == 0x8b;
    if (!r->gzip && ends_with(r->path, ".gz"))
        return cn_fail(err, errlen, -CN_EFORMAT,
                       "%s: not gzip data (the name ends in .gz)", r->path);
    return 0;
}

/* Takes `fd` over: it is closed on error, or later by reader_close(). */
static int reader_open(IdxReader *r, int fd, char *err, size_t errlen)
{
    int rc = reader_sniff(r, fd, err, errlen);

    if (rc == 0 && !(r->gz = gzdopen(fd, "rb")))
        rc = cn_fail(err, errlen, -CN_ENOMEM, "%s: no memory for a zlib reader", r->path);
    if (rc < 0) {
        close(fd); /* gzdopen() does not take the descriptor when it fails */
        return rc;
    }
    gzbuffer(r->gz, IDX_GZ_BUFFER);
    return 0;
}

/* The return value of gzclose() is ignored: reads are checked as they go. */
static void reader_close(IdxReader *r)
{
    if (r->gz)
        gzclose(r->gz);
    r->gz = NULL;
}

/* Reads up to `n` bytes, fewer only at the end of the data or on an error. */
static size_t reader_fill(IdxReader *r, uint8_t *buf, size_t n)
{
    size_t got = 0;

    while (got < n) {
        size_t ask = n - got < IDX_CHUNK ? n - got : IDX_CHUNK;
        int k = gzread(r->gz, buf + got, (unsigned)ask);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    return got;
}

/*
 * After a short read: the error zlib met, or 0 when the data just ended.
 * A gzip stream cut short (Z_BUF_ERROR) also counts as an end here; the
 * callers report it as truncation with the byte counts.
 */
static int reader_error(IdxReader *r, char *err, size_t errlen)
{
    int zerr;
    const char *msg = gzerror(r->gz, &zerr);
    const char *sep = strstr(msg, ">: ");

    /* zlib prefixes its messages with "<fd:N>: ", which means nothing here. */
    if (msg[0] == '<' && sep)
        msg = sep + 3;
    switch (zerr) {
    case Z_OK:
    case Z_BUF_ERROR:
        return 0;
    case Z_DATA_ERROR:
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: gzip data damaged (%s)", r->path, msg);
    case Z_MEM_ERROR:
        return cn_fail(err, errlen, -CN_ENOMEM, "%s: zlib: %s", r->path, msg);
    default:
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", r->path, msg);
    }
}

/* Reads header bytes [have, need) into h. */
static int header_fill(IdxReader *r, uint8_t *h, size_t have, size_t need,
                       char *err, size_t errlen)
{
    size_t got = have + reader_fill(r, h + have, need - have);
    int rc;

    if (got == need)
        return 0;
    if ((rc = reader_error(r, err, errlen)) < 0)
        return rc;
    return cn_fail(err, errlen, -CN_EFORMAT,
                   "%s: truncated: the IDX header needs %zu bytes, got %zu",
                   r->path, need, got);
}

static int magic_check(const char *path, const uint8_t *m, int want_ndims,
                       char *err, size_t errlen)
{
    uint32_t magic = be32(m), want = IDX_TYPE_UBYTE << 8 | (uint32_t)want_ndims;

    if (m[0] != 0 || m[1] != 0)
        return cn_fail(err, errlen, -CN_EFORMAT,
                       "%s: bad IDX magic 0x%08x (want 0x%08x): not an IDX file",
                       path, (unsigned)magic, (unsigned)want);
    if (m[2] != IDX_TYPE_UBYTE)
        return cn_fail(err, errlen, -CN_EFORMAT,
                       "%s: type 0x%02X (%s) not supported, want 0x08 (unsigned byte)",
                       path, m[2], type_name(m[2]));
    if (m[3] != want_ndims)
        return cn_fail(err, errlen, -CN_EFORMAT,
                       "%s: bad IDX magic 0x%08x (want 0x%08x): %d dimensions, want %d",
                       path, (unsigned)magic, (unsigned)want, m[3], want_ndims);
    return 0;
}

/*
 * Checks the sizes against the limits and returns the data size in *n.
 * Dimension 0 counts items; the others are sides (rows, cols).
 */
static int dims_check(const char *path, const uint32_t *dims, int ndims, size_t *n,
                      char *err, size_t errlen)
{
    size_t prod = 1;

    for (int i = 0; i < ndims; i++)
        if (dims[i] == 0)
            return cn_fail(err, errlen, -CN_EFORMAT, "%s: dimension %d of %d is 0 (empty)",
                           path, i + 1, ndims);
    if (dims[0] > IDX_MAX_ITEMS)
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: %lu items, over the limit of %ld",
                       path, (unsigned long)dims[0], IDX_MAX_ITEMS);
    for (int i = 1; i < ndims; i++)
        if (dims[i] > IDX_MAX_SIDE)
            return cn_fail(err, errlen, -CN_EFORMAT, "%s: side %lu, over the limit of %d",
                           path, (unsigned long)dims[i], IDX_MAX_SIDE);
    for (int i = 0; i < ndims; i++) {
        if (prod > SIZE_MAX / dims[i])
            return cn_fail(err, errlen, -CN_EFORMAT, "%s: data size overflows", path);
        prod *= dims[i];
    }
    *n = prod;
    return 0;
}

static int header_read(IdxReader *r, IdxArray *a, int want_ndims, size_t *n,
                       char *err, size_t errlen)
{
    uint8_t h[4 + 4 * 3];
    uint32_t dims[3];
    int rc;

    if ((rc = header_fill(r, h, 0, 4, err, errlen)) < 0)
        return rc;
    if ((rc = magic_check(r->path, h, want_ndims, err, errlen)) < 0)
        return rc;
    r->header = 4 + 4 * (size_t)want_ndims;
    if ((rc = header_fill(r, h, 4, r->header, err, errlen)) < 0)
        return rc;
    for (int i = 0; i < want_ndims; i++)
        dims[i] = be32(h + 4 + 4 * i);
    if ((rc = dims_check(r->path, dims, want_ndims, n, err, errlen)) < 0)
        return rc;
    a->ndims = want_ndims;
    for (int i = 0; i < want_ndims; i++)
        a->dims[i] = (long)dims[i];
    return 0;
}

/* A plain file's size is known: hold the header to it before allocating. */
static int size_check(const IdxReader *r, size_t n, char *err, size_t errlen)
{
    long long have = (long long)r->size - (long long)r->header;

    if (have < 0 || (unsigned long long)have < n)
        return cn_fail(err, errlen, -CN_EFORMAT,
                       "%s: truncated: header says %zu bytes of data, file has %lld",
                       r->path, n, have < 0 ? 0 : have);
    if ((unsigned long long)have > n)
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: %llu trailing bytes after the data",
                       r->path, (unsigned long long)have - n);
    return 0;
}

/*
 * Reads the `n` bytes of data into a new block.  A plain file (already
 * size-checked) gets it in one allocation; gzip data grows its block by
 * doubling as bytes arrive, so a lying header costs at most twice the data
 * the file really holds.
 */
static int data_read(IdxReader *r, size_t n, uint8_t **out, char *err, size_t errlen)
{
    size_t cap = r->gzip && n > IDX_GZ_FIRST ? IDX_GZ_FIRST : n, got = 0;
    uint8_t *buf = NULL, *grown;
    int rc;

    for (;;) {
        if (!(grown = realloc(buf, cap))) {
            free(buf);
            return cn_fail(err, errlen, -CN_ENOMEM, "%s: cannot allocate %zu bytes",
                           r->path, cap);
        }
        buf = grown;
        got += reader_fill(r, buf + got, cap - got);
        if (got < cap || cap == n)
            break;
        cap = cap > n / 2 ? n : cap * 2;
    }
    if (got == n) {
        *out = buf;
        return 0;
    }
    free(buf);
    if ((rc = reader_error(r, err, errlen)) < 0)
        return rc;
    return cn_fail(err, errlen, -CN_EFORMAT, "%s: truncated: header says %zu bytes, got %zu",
                   r->path, n, got);
}

/*
 * Reads on to the end of the file: for gzip this is what checks the CRC
 * and length in the trailer.  Any data left over is an error, as it is for
 * a plain file in size_check().
 */
static int end_check(IdxReader *r, char *err, size_t errlen)
{
    uint8_t buf[16384];
    unsigned long long extra = 0;
    size_t k;
    int zerr, rc;

    while ((k = reader_fill(r, buf, sizeof buf)) > 0)
        extra += k;
    if ((rc = reader_error(r, err, errlen)) < 0)
        return rc;
    gzerror(r->gz, &zerr);
    if (zerr == Z_BUF_ERROR)
        return cn_fail(err, errlen, -CN_EFORMAT,
                       "%s: truncated: the gzip stream ends before its trailer", r->path);
    if (extra)
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: %llu trailing bytes after the data",
                       r->path, extra);
    return 0;
}

int idx_read(IdxArray *out, const char *path, int want_ndims, char *err, size_t errlen)
{
    int fd;

    if (out)
        memset(out, 0, sizeof *out);
    if (!out || !path || want_ndims < 1 || want_ndims > 3)
        return cn_fail(err, errlen, -CN_EINVAL, "idx_read: bad arguments (want_ndims %d)",
                       want_ndims);
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever;
     * it has no effect on the regular files that reader_sniff() lets through. */
    if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: %s", path, strerror(errno));
    return idx_read_fd(out, fd, path, want_ndims, err, errlen);
}

int idx_read_fd(IdxArray *out, int fd, const char *name, int want_ndims, char *err,
                size_t errlen)
{
    IdxReader r = {.path = name};
    IdxArray a = {0};
    size_t n = 0;
    int rc;

    if (out)
        memset(out, 0, sizeof *out);
    if (!out || !name || fd < 0 || want_ndims < 1 || want_ndims > 3) {
        if (fd >= 0)
            close(fd);
        return cn_fail(err, errlen, -CN_EINVAL, "idx_read: bad arguments (want_ndims %d)",
                       want_ndims);
    }
    if ((rc = reader_open(&r, fd, err, errlen)) < 0)
        return rc;
    if ((rc = header_read(&r, &a, want_ndims, &n, err, errlen)) < 0)
        goto fail;
    if (!r.gzip && (rc = size_check(&r, n, err, errlen)) < 0)
        goto fail;
    if ((rc = data_read(&r, n, &a.data, err, errlen)) < 0)
        goto fail;
    if ((rc = end_check(&r, err, errlen)) < 0)
        goto fail;
    reader_close(&r);
    *out = a;
    return 0;
fail:
    reader_close(&r);
    idx_free(&a);
    return rc;
}

void idx_free(IdxArray *a)
{
    if (!a)
        return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- data sets ---- */

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

static int ds_files_read(DatasetFiles *f, char *err, size_t errlen)
{
    for (int i = f->first; i < DS_FILES; i++) {
        int ndims = i == DS_TRAIN_IMAGES || i == DS_TEST_IMAGES ? 3 : 1;
        int rc = idx_read(&f->arr[i], f->path[i], ndims, err, errlen);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* idx_read() refuses a count of 0, so each split holds at least one item. */
static int ds_pair_check(const DatasetFiles *f, int images, char *err, size_t errlen)
{
    const IdxArray *im = &f->arr[images], *lb = &f->arr[images + 1];

    if (lb->dims[0] != im->dims[0])
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: %ld labels, but %ld images in %s",
                       f->path[images + 1], lb->dims[0], im->dims[0], f->path[images]);
    for (long i = 0; i < lb->dims[0]; i++)
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

static int ds_load(Dataset *ds, const char *dir, int first, char *err, size_t errlen)
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
    if ((rc = ds_files_read(f, err, errlen)) < 0)
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
    return ds_load(ds, dir, DS_TRAIN_IMAGES, err, errlen);
}

int dataset_load_test(Dataset *ds, const char *dir, char *err, size_t errlen)
{
    return ds_load(ds, dir, DS_TEST_IMAGES, err, errlen);
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

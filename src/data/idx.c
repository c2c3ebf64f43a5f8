/*
 * idx.c: reading one MNIST-format (IDX) file (the data sets of four files
 * are dataset.c's).
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
    uint32_t dims[3] = {0};
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

    if (n == 0) /* dims_check() refuses an empty dimension already */
        return cn_fail(err, errlen, -CN_EFORMAT, "%s: no data", r->path);
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

/* Opens path for idx_read_fd(); the descriptor, or -CN_EIO with a message. */
static int idx_open(const char *path, char *err, size_t errlen)
{
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever;
     * it has no effect on the regular files that reader_sniff() lets through. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

    return fd >= 0 ? fd : cn_fail(err, errlen, -CN_EIO, "%s: %s", path, strerror(errno));
}

int idx_read(IdxArray *out, const char *path, int want_ndims, char *err, size_t errlen)
{
    int fd;

    if (out)
        memset(out, 0, sizeof *out);
    if (!out || !path || want_ndims < 1 || want_ndims > 3)
        return cn_fail(err, errlen, -CN_EINVAL, "idx_read: bad arguments (want_ndims %d)",
                       want_ndims);
    if ((fd = idx_open(path, err, errlen)) < 0)
        return fd;
    return idx_read_fd(out, fd, path, want_ndims, err, errlen);
}

int idx_read_header(IdxArray *out, const char *path, int want_ndims, char *err, size_t errlen)
{
    IdxReader r = {.path = path};
    size_t n = 0;
    int rc;

    memset(out, 0, sizeof *out);
    if (!path || want_ndims < 1 || want_ndims > 3)
        return cn_fail(err, errlen, -CN_EINVAL, "idx_read_header: bad arguments (want_ndims %d)",
                       want_ndims);
    if ((rc = idx_open(path, err, errlen)) < 0)
        return rc;
    if ((rc = reader_open(&r, rc, err, errlen)) < 0)
        return rc;
    rc = header_read(&r, out, want_ndims, &n, err, errlen);
    if (rc == 0 && !r.gzip)
        rc = size_check(&r, n, err, errlen);
    reader_close(&r);
    if (rc < 0)
        memset(out, 0, sizeof *out);
    return rc;
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

/*
 * cache.c: the calibration cache file, one per machine and setup, and
 * calibrate_get(), which reads it or measures and stores.  One table,
 * fields[], drives both the writer and the reader (cnntop/calibrate.h
 * shows the file).
 *
 * The calibrate layer, one concept a file: crew.c (T threads for one
 * measurement), sgemm.c, triad.c and peak.c (with fmapeak.c's loops) for
 * the figures, measure.c (one calibration), key.c (the machine and setup a
 * calibration belongs to), this file, and sketch.c (the time on paper).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "calibrate/fmapeak.h"
#include "calibrate/key.h"
#include "cnntop/calibrate.h"
#include "cnntop/fileio.h"
#include "cnntop/limits.h"
#include "cnntop/machine.h"
#include "prof/sysinfo.h"
#include "util/err.h"

#define CALIB_FILE_MAX (64 * 1024) /* a cache file larger than this is foreign */
#define CALIB_LINE_MAX 512

typedef enum FieldKind { FK_STR, FK_INT, FK_NUM, FK_TIME } FieldKind;

typedef struct Field {
    const char *key;
    FieldKind kind;
    size_t off;       /* offset in Calibration */
    size_t size;      /* FK_STR: the buffer's size */
    double lo, hi;    /* allowed range (inclusive) */
} Field;

#define CF(m) offsetof(Calibration, m)

static const Field fields[] = {
    {"cpu_model", FK_STR, CF(cpu_model), sizeof(((Calibration *)0)->cpu_model), 0, 0},
    {"cores", FK_INT, CF(cores), 0, 1, 1 << 20},
    {"blas_core", FK_STR, CF(blas_core), sizeof(((Calibration *)0)->blas_core), 0, 0},
    {"threads", FK_INT, CF(threads), 0, 1, CN_MAX_THREADS},
    {"batch_a", FK_INT, CF(batch), 0, 1, CN_MAX_BATCH},
    {"model_gflops_a", FK_NUM, CF(model_gflops), 0, 1e-3, 1e9},
    {"batch_b", FK_INT, CF(batch) + sizeof(int), 0, 1, CN_MAX_BATCH},
    {"model_gflops_b", FK_NUM, CF(model_gflops) + sizeof(double), 0, 1e-3, 1e9},
    {"square_n", FK_INT, CF(square_n), 0, 1, 1 << 16},
    {"square_threads", FK_INT, CF(square_threads), 0, 1, 1 << 20},
    {"square_gflops", FK_NUM, CF(square_gflops), 0, 1e-3, 1e9},
    {"fma_avx512", FK_NUM, CF(fma_gflops) + PEAK_AVX512 * sizeof(double), 0, 0, 1e9},
    {"fma_avx2", FK_NUM, CF(fma_gflops) + PEAK_AVX2 * sizeof(double), 0, 0, 1e9},
    {"fma_sse", FK_NUM, CF(fma_gflops) + PEAK_SSE * sizeof(double), 0, 0, 1e9},
    {"fma1_avx512", FK_NUM, CF(fma1_gflops) + PEAK_AVX512 * sizeof(double), 0, 0, 1e9},
    {"fma1_avx2", FK_NUM, CF(fma1_gflops) + PEAK_AVX2 * sizeof(double), 0, 0, 1e9},
    {"fma1_sse", FK_NUM, CF(fma1_gflops) + PEAK_SSE * sizeof(double), 0, 0, 1e9},
    {"clock_ghz", FK_NUM, CF(clock_ghz), 0, 0, 1e3},
    {"triad_gbps", FK_NUM, CF(triad_gbps), 0, 1e-3, 1e9},
    {"triad_mib", FK_NUM, CF(triad_mib), 0, 1e-3, 1e9},
    {"llc_mib", FK_NUM, CF(llc_mib), 0, 0, 1e9},
    {"seconds", FK_NUM, CF(seconds), 0, 0, 1e6},
    {"measured_at", FK_TIME, CF(measured_at), 0, 0, 1e15},
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

/* Fixed-point text with 3 decimals, independent of the C locale. */
static void num_format(double v, char *buf, size_t len)
{
    long long m = (long long)llround(v * 1000.0);

    snprintf(buf, len, "%s%lld.%03lld", m < 0 ? "-" : "", llabs(m) / 1000, llabs(m) % 1000);
}

/* [0-9]{1,13}(.[0-9]{1,9})? -> *v; 0 or -1. */
static int num_parse(const char *s, double *v)
{
    double whole = 0.0, frac = 0.0, scale = 1.0;
    int nd = 0, nf = 0;

    for (; *s >= '0' && *s <= '9'; s++, nd++)
        whole = whole * 10.0 + (*s - '0');
    if (nd < 1 || nd > 13)
        return -1;
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++, nf++) {
            scale /= 10.0;
            frac += (*s - '0') * scale;
        }
        if (nf < 1 || nf > 9)
            return -1;
    }
    *v = whole + frac;
    return *s ? -1 : 0;
}

size_t calibrate_format(const Calibration *c, char *buf, size_t len)
{
    size_t n = 0;
    int w = snprintf(buf, len,
                     "# cnntop calibration: this machine's measured FMA peak, SGEMM "
                     "rates and memory bandwidth.\n# Written by `cnntop calibrate`; delete it (or use "
                     "--recalibrate) to measure again.\ncnntop-calibration %d\n",
                     CALIB_FORMAT_VERSION);
    n = w > 0 ? (size_t)w : 0;
    for (int i = 0; i < NFIELDS; i++) {
        const Field *f = &fields[i];
        const char *p = (const char *)c + f->off;
        char val[160];
        if (f->kind == FK_STR) {
            snprintf(val, sizeof val, "%s", p);
            key_sanitize(val);
        } else if (f->kind == FK_INT) {
            snprintf(val, sizeof val, "%d", *(const int *)(const void *)p);
        } else if (f->kind == FK_NUM) {
            num_format(*(const double *)(const void *)p, val, sizeof val);
        } else {
            snprintf(val, sizeof val, "%lld", *(const long long *)(const void *)p);
        }
        w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, "%s=%s\n", f->key, val);
        n += w > 0 ? (size_t)w : 0;
    }
    w = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, "end\n");
    return n + (w > 0 ? (size_t)w : 0);
}

/* A copy of bytes for a message: printable, at most 40 characters. */
static void quote(const char *s, size_t n, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s%s", (int)(n < 40 ? n : 40), s, n > 40 ? "..." : "");
    key_sanitize(buf);
}

static int field_set(const Field *f, const char *v, Calibration *c)
{
    char *p = (char *)c + f->off;
    double d;

    if (f->kind == FK_STR) {
        size_t n = strlen(v);
        if (n == 0 || n >= f->size)
            return -1;
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
                return -1;
        memcpy(p, v, n + 1);
        return 0;
    }
    if (f->kind == FK_NUM || strchr(v, '.') == NULL) {
        if (num_parse(v, &d) != 0 || d < f->lo || d > f->hi)
            return -1;
    } else {
        return -1; /* an integer field with a fraction */
    }
    if (f->kind == FK_INT)
        *(int *)(void *)p = (int)d;
    else if (f->kind == FK_NUM)
        *(double *)(void *)p = d;
    else
        *(long long *)(void *)p = (long long)d;
    return 0;
}

/* One "key=value" line into c; `seen` marks fields already set. */
static int parse_pair(const char *line, Calibration *c, unsigned *seen, int lineno,
                      char *err, size_t errlen)
{
    const char *eq = strchr(line, '=');
    char q[64];

    if (!eq) {
        quote(line, strlen(line), q, sizeof q);
        return cn_fail(err, errlen, -CN_EFORMAT, "line %d: '%s' is not key=value", lineno, q);
    }
    for (int i = 0; i < NFIELDS; i++) {
        if (strlen(fields[i].key) != (size_t)(eq - line) ||
            strncmp(fields[i].key, line, (size_t)(eq - line)) != 0)
            continue;
        if (*seen & (1u << i))
            return cn_fail(err, errlen, -CN_EFORMAT, "line %d: '%s' given twice", lineno,
                           fields[i].key);
        *seen |= 1u << i;
        if (field_set(&fields[i], eq + 1, c) != 0) {
            quote(eq + 1, strlen(eq + 1), q, sizeof q);
            return cn_fail(err, errlen, -CN_EFORMAT, "line %d: bad %s '%s'", lineno,
                           fields[i].key, q);
        }
        return 0;
    }
    quote(line, (size_t)(eq - line), q, sizeof q);
    return cn_fail(err, errlen, -CN_EFORMAT, "line %d: unknown key '%s'", lineno, q);
}

/* The version line, the first that is not blank or a comment. */
static int parse_version(const char *line, char *err, size_t errlen)
{
    static const char magic[] = "cnntop-calibration ";
    char want[32], q[64];

    snprintf(want, sizeof want, "%s%d", magic, CALIB_FORMAT_VERSION);
    if (!strcmp(line, want))
        return 0;
    if (!strncmp(line, magic, sizeof magic - 1)) {
        quote(line + sizeof magic - 1, strlen(line + sizeof magic - 1), q, sizeof q);
        return cn_fail(err, errlen, -CN_EFORMAT, "format version '%s', this cnntop reads %d",
                       q, CALIB_FORMAT_VERSION);
    }
    quote(line, strlen(line), q, sizeof q);
    return cn_fail(err, errlen, -CN_EFORMAT, "not a cnntop calibration file (begins '%s')", q);
}

/* Steps through one line at a time: 0 not yet versioned, 1 in the body, 2 after "end". */
static int parse_line(const char *line, int *state, Calibration *c, unsigned *seen,
                      int lineno, char *err, size_t errlen)
{
    if (*state == 2)
        return cn_fail(err, errlen, -CN_EFORMAT, "line %d: text after 'end'", lineno);
    if (line[0] == '\0' || line[0] == '#')
        return 0;
    if (*state == 0) {
        int rc = parse_version(line, err, errlen);
        *state = rc == 0 ? 1 : 0;
        return rc;
    }
    if (!strcmp(line, "end")) {
        *state = 2;
        return 0;
    }
    return parse_pair(line, c, seen, lineno, err, errlen);
}

int calibrate_parse(const char *buf, size_t len, Calibration *out, char *err, size_t errlen)
{
    Calibration c;
    unsigned seen = 0;
    int state = 0, lineno = 0;
    size_t pos = 0;

    memset(&c, 0, sizeof c);
    if (!buf)
        len = 0;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        char line[CALIB_LINE_MAX];
        lineno++;
        if (!nl)
            return cn_fail(err, errlen, -CN_EFORMAT, "line %d: no newline at the end "
                           "(truncated?)", lineno);
        if (n >= sizeof line)
            return cn_fail(err, errlen, -CN_EFORMAT, "line %d: longer than %d bytes",
                           lineno, CALIB_LINE_MAX - 1);
        if (memchr(buf + pos, '\0', n))
            return cn_fail(err, errlen, -CN_EFORMAT, "line %d: a NUL byte (binary data)",
                           lineno);
        memcpy(line, buf + pos, n);
        line[n] = '\0';
        int rc = parse_line(line, &state, &c, &seen, lineno, err, errlen);
        if (rc != 0)
            return rc;
        pos += n + 1;
    }
    if (state == 0)
        return cn_fail(err, errlen, -CN_EFORMAT, "empty: no 'cnntop-calibration %d' line",
                       CALIB_FORMAT_VERSION);
    for (int i = 0; i < NFIELDS; i++)
        if (!(seen & (1u << i)))
            return cn_fail(err, errlen, -CN_EFORMAT, "'%s' missing", fields[i].key);
    if (state != 2)
        return cn_fail(err, errlen, -CN_EFORMAT, "no 'end' line (truncated?)");
    c.cached = 1;
    *out = c;
    return 0;
}

/* calibrate_cache_path() for OpenBLAS kernel `core` (NULL: the running
 * one). */
static int cache_path_for(char *buf, size_t len, int threads, const char *core_name, char *err,
                          size_t errlen)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    Calibration key;
    char core[sizeof key.blas_core];
    int n;

    /* The file is named for the setup: OpenBLAS's kernel (letters, digits,
     * '.', '_' and '-' kept, anything else '_'), the compute threads and,
     * for a process allowed fewer of the machine's cores than it has (an
     * MPI rank bound to its core, taskset), those cores ("-1c"): its key
     * differs (cores), and sharing one file would make each kind measure
     * again over the other's figures, run after run. */
    memset(&key, 0, sizeof key);
    key_fill(&key, threads, core_name);
    snprintf(core, sizeof core, "%s", key.blas_core[0] ? key.blas_core : "unknown");
    for (char *q = core; *q; q++)
        if (!isalnum((unsigned char)*q) && *q != '.' && *q != '_' && *q != '-')
            *q = '_';
    char bound[24] = "";
    if (key.cores > 0 && key.cores < sysinfo_cores_online())
        snprintf(bound, sizeof bound, "-%dc", key.cores);
    /* The XDG spec says a relative XDG_CACHE_HOME is invalid: ignore it. */
    if (xdg && xdg[0] == '/')
        n = snprintf(buf, len, "%s/cnntop/calibration-%s-%dt%s", xdg, core, key.threads, bound);
    else if (home && home[0])
        n = snprintf(buf, len, "%s/.cache/cnntop/calibration-%s-%dt%s", home, core, key.threads,
                     bound);
    else
        return cn_fail(err, errlen, -CN_EINVAL,
                       "no cache directory: neither XDG_CACHE_HOME nor HOME is set");
    if (n < 0 || (size_t)n >= len)
        return cn_fail(err, errlen, -CN_EINVAL, "cache path too long");
    return 0;
}

int calibrate_cache_path(char *buf, size_t len, int threads, char *err, size_t errlen)
{
    return cache_path_for(buf, len, threads, NULL, err, errlen);
}

/* Loads the cache; 0 when it holds this machine's figures for OpenBLAS
 * kernel `core` (NULL: the running one).  Otherwise -1, with a warning
 * unless there simply is no file yet. */
static int cache_load(const char *path, int threads, const char *core, Calibration *out,
                      char *warn, size_t warnlen)
{
    unsigned char *buf = NULL;
    size_t len = 0;
    char msg[384];
    struct stat st;

    if (stat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR))
        return -1; /* nothing there yet: measuring is no news */
    if (fileio_read_all(path, CALIB_FILE_MAX, &buf, &len, msg, sizeof msg) != 0) {
        cn_fail(warn, warnlen, -1, "calibration cache %s ignored (%s); measuring again",
                path, msg);
        return -1;
    }
    int rc = calibrate_parse((const char *)buf, len, out, msg, sizeof msg);
    free(buf);
    if (rc != 0) {
        cn_fail(warn, warnlen, -1, "calibration cache %s ignored (%s); measuring again",
                path, msg);
        return -1;
    }
    if (!key_matches(out, threads, core, msg, sizeof msg)) {
        cn_fail(warn, warnlen, -1, "calibration cache %s is for another machine or setup "
                "(%s); measuring again", path, msg);
        return -1;
    }
    return 0;
}

static void cache_store(const char *path, const Calibration *c, char *warn, size_t warnlen)
{
    char text[4096], msg[384];
    size_t n = calibrate_format(c, text, sizeof text);

    if (n >= sizeof text)
        n = sizeof text - 1;
    if (fileio_make_parent_dirs(path, 0700, msg, sizeof msg) == 0 && /* 0700: XDG */
        fileio_write_atomic(path, text, n, msg, sizeof msg) == 0)
        return;
    /* Keep an earlier warning (why the old file was not used): it says more. */
    if (warn && warnlen && !warn[0])
        snprintf(warn, warnlen, "calibration not cached: %s", msg);
}

int calibrate_load(int threads, Calibration *out)
{
    char path[4096];
    BlasPlan plan;

    if (calibrate_cache_path(path, sizeof path, threads, NULL, 0) == 0 &&
        cache_load(path, threads, NULL, out, NULL, 0) == 0)
        return 0;
    /* A process that runs no OpenBLAS of its own (exec, which profiles
     * the user's job) keeps OpenBLAS's fallback kernel where the compute
     * commands switch to the CPU's (blas_auto.h): their calibration is
     * the one made for that kernel. */
    machine_blas_plan(0, &plan);
    if (plan.action != CN_BLAS_SWITCH ||
        cache_path_for(path, sizeof path, threads, plan.kernel, NULL, 0) != 0)
        return -1;
    return cache_load(path, threads, plan.kernel, out, NULL, 0);
}

/* c's figures as the cache file holds them (3 decimals), so that a run
 * reports the same peak whether it measured it or read it back.  Left as
 * measured if the text does not read back (a figure under the file's
 * minimum: the next run measures again anyway). */
static void as_stored(Calibration *c)
{
    char text[4096];
    Calibration back;
    size_t n = calibrate_format(c, text, sizeof text);

    if (n < sizeof text && calibrate_parse(text, n, &back, NULL, 0) == 0)
        *c = back;
}

int calibrate_get(const CalibOpts *opts, Calibration *out, int force,
                  char *warn, size_t warnlen, char *err, size_t errlen)
{
    char path[4096], msg[384];
    int threads = opts ? opts->threads : 0, rc;
    const char *p = opts && opts->cache_path ? opts->cache_path : NULL;

    if (warn && warnlen)
        warn[0] = '\0';
    if (!p && calibrate_cache_path(path, sizeof path, threads, msg, sizeof msg) == 0)
        p = path;
    else if (!p && warn && warnlen)
        snprintf(warn, warnlen, "calibration not cached: %s", msg);
    if (p && !force && cache_load(p, threads, NULL, out, warn, warnlen) == 0)
        return 0;
    rc = calibrate_measure(opts, out, err, errlen);
    if (rc != 0)
        return rc;
    as_stored(out);
    if (p)
        cache_store(p, out, warn, warnlen);
    out->cached = 0;
    return 0;
}

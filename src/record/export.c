/*
 * export.c: writing a record to a file (record.h): the format chosen by the
 * name's extension, the checks made before a run and again before the
 * write, and the write itself.
 *
 * Every format is made in memory first (formats.h) and then written in one
 * fileio_write_atomic() call (temporary file, fsync, rename), so a file is
 * either the complete new export or untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cnntop/fileio.h"
#include "record/formats.h"
#include "util/err.h"

/* The one place that branches on the record's kind: an exec record (or
 * a sweep --cmd's) has its own CSV and Markdown (exec_text.c); JSON is one
 * writer for both, by the field table. */
int record_format(const RunRecord *r, ExportFormat fmt, char **out, size_t *len)
{
    switch (fmt) {
    case EXPORT_JSON:
        return record_json_run(r, out, len);
    case EXPORT_CSV:
        return r->have_exec ? record_csv_exec(&r, 1, out, len) : record_csv_run(r, out, len);
    case EXPORT_MD:
    default:
        return r->have_exec ? record_md_exec(&r, 1, 0, out, len) : record_md_run(r, out, len);
    }
}

int record_format_sweep(const RunRecord *const *runs, size_t n, ExportFormat fmt,
                        char **out, size_t *len)
{
    switch (fmt) {
    case EXPORT_JSON:
        return record_json_sweep(runs, n, out, len);
    case EXPORT_CSV:
        return n && runs[0]->have_exec ? record_csv_exec(runs, n, out, len)
                                       : record_csv_sweep(runs, n, out, len);
    case EXPORT_MD:
    default:
        return n && runs[0]->have_exec ? record_md_exec(runs, n, 1, out, len)
                                       : record_md_sweep(runs, n, out, len);
    }
}

int export_format(const char *path, ExportFormat *fmt, char *err, size_t errlen)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');

    if (dot && (!slash || dot > slash)) {
        if (!strcasecmp(dot, ".json"))
            return *fmt = EXPORT_JSON, 0;
        if (!strcasecmp(dot, ".csv"))
            return *fmt = EXPORT_CSV, 0;
        if (!strcasecmp(dot, ".md"))
            return *fmt = EXPORT_MD, 0;
    }
    return cn_fail(err, errlen, -CN_EINVAL,
                   "%s: unknown export format (the name must end in .json, .csv or .md)", path);
}

int export_check(const char *path, int force, char *err, size_t errlen)
{
    ExportFormat fmt = EXPORT_JSON;
    struct stat st;
    int rc;

    if ((rc = export_format(path, &fmt, err, errlen)) != 0)
        return rc;
    if ((rc = fileio_check_writable(path, err, errlen)) != 0)
        return rc;
    if (!force && lstat(path, &st) == 0)
        return cn_fail(err, errlen, -CN_EIO, "%s: file exists (--force overwrites it)", path);
    return 0;
}

/* Checks, then writes what format() made. */
static int write_export(const char *path, int force, int rc, char *text, size_t len,
                        char *err, size_t errlen)
{
    if (rc != 0) {
        free(text);
        return cn_fail(err, errlen, rc, "%s: out of memory while formatting the export", path);
    }
    /* Checked again now: the run may have taken hours, and the file may
     * have appeared meanwhile. */
    if ((rc = export_check(path, force, err, errlen)) == 0)
        rc = fileio_write_atomic(path, text, len, err, errlen);
    free(text);
    return rc;
}

/* One run (sweep = 0: runs[0]) or a sweep, formatted and written. */
static int export_runs(const RunRecord *const *runs, size_t n, int sweep, const char *path,
                       int force, char *err, size_t errlen)
{
    ExportFormat fmt = EXPORT_JSON;
    char *text = NULL;
    size_t len = 0;
    int rc = export_format(path, &fmt, err, errlen);

    if (rc != 0)
        return rc;
    rc = sweep ? record_format_sweep(runs, n, fmt, &text, &len)
               : record_format(runs[0], fmt, &text, &len);
    return write_export(path, force, rc, text, len, err, errlen);
}

int record_export(const RunRecord *r, const char *path, int force, char *err, size_t errlen)
{
    return export_runs(&r, 1, 0, path, force, err, errlen);
}

int record_export_sweep(const RunRecord *const *runs, size_t n, const char *path, int force,
                        char *err, size_t errlen)
{
    return export_runs(runs, n, 1, path, force, err, errlen);
}

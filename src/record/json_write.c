/*
 * json_write.c: a record as JSON, "cnntop.run/1" for one run and
 * "cnntop.sweep/1" for several (record.h), written from the field tables
 * (fields.h).
 *
 * A run object is "schema" and then the members of record_run_fields in
 * order, each written by its type; "results" holds hyperfine's
 * --export-json shape (record_result_fields), so that tools reading
 * hyperfine's exports read cnntop's too.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/json.h"
#include "cnntop/version.h"
#include "record/fields.h"
#include "cnntop/figures.h"
#include "record/formats.h"
#include "util/err.h"

static void write_members(JsonWriter *w, const Field *fields, const void *base);

/* An int or a long, by the member's size. */
static long long get_int(const Field *f, const void *p)
{
    return f->size == sizeof(int) ? *(const int *)p : *(const long *)p;
}

static void write_array(JsonWriter *w, const Field *f, const void *base)
{
    const char *elems = *(char *const *)field_cat(f, base);
    size_t n = *(const size_t *)((const char *)base + f->n_off);

    json_begin_array(w);
    for (size_t i = 0; i < n; i++) {
        json_begin_object(w);
        write_members(w, f->sub, elems + i * f->size);
        json_end_object(w);
    }
    json_end_array(w);
}

/* The FT_FLAGS names set in the bits, and the FT_*_LIST arrays. */
static void write_list(JsonWriter *w, const Field *f, const void *base)
{
    const void *p = field_cat(f, base);
    size_t n = f->type == FT_FLAGS ? f->names->n : *(const size_t *)((const char *)base + f->n_off);

    json_begin_array(w);
    for (size_t i = 0; i < n; i++)
        if (f->type == FT_NUM_LIST)
            json_number(w, (*(double *const *)p)[i]);
        else if (f->type == FT_INT_LIST)
            json_int(w, (*(int *const *)p)[i]);
        else if (*(const unsigned *)p & f->names->v[i].value)
            json_string(w, f->names->v[i].name);
    json_end_array(w);
}

/* The member's value (its key is written). */
static void write_value(JsonWriter *w, const Field *f, const void *base)
{
    const void *p = field_cat(f, base);

    switch (f->type) {
    case FT_STR: json_string(w, p); break;
    case FT_STR_NA: json_string(w, *(const char *)p ? p : NULL); break;
    case FT_DUP: json_string(w, *(char *const *)p); break;
    case FT_INT: json_int(w, get_int(f, p)); break;
    case FT_UINT64: json_uint(w, *(const uint64_t *)p); break;
    case FT_BOOL: json_bool(w, *(const int *)p); break;
    case FT_NAME: json_string(w, field_name(f->names, (unsigned)*(const int *)p)); break;
    case FT_DERIVED: json_number(w, f->derive(base)); break;
    case FT_OBJECT: json_begin_object(w); write_members(w, f->sub, base); json_end_object(w); break;
    case FT_ARRAY: write_array(w, f, base); break;
    case FT_FLAGS: case FT_NUM_LIST: case FT_INT_LIST: write_list(w, f, base); break;
    case FT_COUNT:
        if (get_int(f, p) < 0)
            json_null(w);
        else
            json_int(w, get_int(f, p));
        break;
    case FT_FILL:
        if (*(const float *)p < 0)
            json_null(w);
        else
            json_float(w, *(const float *)p);
        break;
    case FT_NUM:
        if (f->derive)
            json_number(w, f->derive(base));
        else if (f->size == sizeof(float))
            json_float(w, *(const float *)p);
        else
            json_number(w, *(const double *)p);
        break;
    case FT_MAYBE:
        if (*(const int *)((const char *)base + f->n_off)) {
            json_begin_object(w);
            write_members(w, f->sub, base);
            json_end_object(w);
        } else {
            json_null(w);
        }
        break;
    }
}

static void write_members(JsonWriter *w, const Field *fields, const void *base)
{
    for (const Field *f = fields; f->key; f++) {
        json_key(w, f->key);
        write_value(w, f, base);
    }
}

/* The run object's members, without "results". */
static void write_run_body(JsonWriter *w, const RunRecord *r)
{
    json_key(w, "schema");
    json_string(w, RECORD_SCHEMA);
    write_members(w, record_run_fields, r);
}

/* One entry of "results": seconds of training wall time per run. */
static int write_result(JsonWriter *w, const RunRecord *r, const char *command)
{
    size_t n = r->n_repeats ? r->n_repeats : 1;
    RecordResult res = {.command = command, .user = record_mean_cpu(r, 0),
                        .system = record_mean_cpu(r, 1), .n_exit_codes = n};
    int rc = -CN_ENOMEM;

    res.exit_codes = malloc(n * sizeof *res.exit_codes);
    if (res.exit_codes && record_times_summary(r, &res.times, &res.n_times, &res.time) == 0) {
        for (size_t i = 0; i < n; i++)
            res.exit_codes[i] = r->n_repeats ? r->repeats[i].exit_code : r->exit_code;
        json_begin_object(w);
        write_members(w, record_result_fields, &res);
        json_end_object(w);
        rc = 0;
    }
    free(res.times);
    free(res.exit_codes);
    return rc;
}

/* Ends the document and hands its text over, or frees it after a failure. */
static int finish(JsonWriter *w, int rc, char **out, size_t *len)
{
    json_end_object(w);
    if (rc != 0) {
        json_writer_done(w);
        return rc;
    }
    return json_writer_finish(w, out, len) == 0 ? 0 : -CN_ENOMEM;
}

int record_json_run(const RunRecord *r, char **out, size_t *len)
{
    JsonWriter w;
    char label[160];
    int rc;

    json_writer_init(&w, 1);
    json_begin_object(&w);
    write_run_body(&w, r);
    json_key(&w, "results");
    json_begin_array(&w);
    rc = write_result(&w, r, r->command ? r->command : record_label(r, label, sizeof label));
    json_end_array(&w);
    return finish(&w, rc, out, len);
}

int record_json_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len)
{
    JsonWriter w;
    char label[160];
    int rc = 0;

    json_writer_init(&w, 1);
    json_begin_object(&w);
    json_key(&w, "schema");
    json_string(&w, RECORD_SWEEP_SCHEMA);
    json_key(&w, "cnntop_version");
    json_string(&w, CNNTOP_VERSION);
    json_key(&w, "runs");
    json_begin_array(&w);
    for (size_t i = 0; i < n; i++) {
        json_begin_object(&w);
        write_run_body(&w, runs[i]);
        json_end_object(&w);
    }
    json_end_array(&w);
    json_key(&w, "results");
    json_begin_array(&w);
    /* In a sweep every run shares the command line; the label says which
     * configuration each entry is. */
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = write_result(&w, runs[i], record_label(runs[i], label, sizeof label));
    json_end_array(&w);
    return finish(&w, rc, out, len);
}

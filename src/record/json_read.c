/*
 * json_read.c: a JSON export read back into records (record.h), driven by
 * the field tables (fields.h).
 *
 * Reading is strict about the schema name and version and about the type
 * of every member the writer writes: a record that would load with
 * silently wrong figures is worse than an error.  Members a file may lack
 * (added within cnntop.run/1 after it first shipped: a later revision in
 * the table) read as unknown; members the table does not know are ignored.
 * The first problem ends the reading, and the message names the file and
 * the member, e.g. "run.json: samples[3].loss: expected a number or null,
 * found a string".
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/fileio.h"
#include "cnntop/json.h"
#include "cnntop/version.h"
#include "record/fields.h"
#include "util/err.h"

/* Reading context: the file for messages and the first error. */
typedef struct Reader {
    const char *path;
    char *err;
    size_t errlen;
    int failed;
} Reader;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void bad(Reader *rd, const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    if (rd->failed)
        return;
    rd->failed = 1;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (rd->err && rd->errlen)
        snprintf(rd->err, rd->errlen, "%s: %s", rd->path, msg);
}

/* A member that must be present and of type t (or null when nullable). */
static const JsonValue *member(Reader *rd, const JsonValue *obj, const char *where,
                               const char *key, JsonType t, int nullable)
{
    static const char *names[] = {"null", "a boolean", "a number", "a string", "an array",
                                  "an object"};
    const JsonValue *v = json_get(obj, key);

    if (rd->failed)
        return NULL;
    if (!v) {
        bad(rd, "%s%s%s: missing", where, *where ? "." : "", key);
        return NULL;
    }
    if (v->type == t || (nullable && v->type == JSON_NULL))
        return v;
    bad(rd, "%s%s%s: expected %s%s, found %s", where, *where ? "." : "", key, names[t],
        nullable ? " or null" : "", names[v->type]);
    return NULL;
}

/* A double; null reads as NAN. */
static double get_num(Reader *rd, const JsonValue *obj, const char *where, const char *key)
{
    return json_as_number(member(rd, obj, where, key, JSON_NUMBER, 1), NAN);
}

/* An integer in [lo, hi]; null reads as `null_is` when allowed (nullable). */
static long long get_int_null(Reader *rd, const JsonValue *obj, const char *where,
                              const char *key, long long lo, long long hi, int nullable,
                              long long null_is)
{
    const JsonValue *v = member(rd, obj, where, key, JSON_NUMBER, nullable);
    int64_t x;

    if (!v)
        return 0;
    if (v->type == JSON_NULL)
        return null_is;
    x = json_as_int(v, INT64_MIN);
    if (x == INT64_MIN || x < lo || x > hi) {
        bad(rd, "%s%s%s: expected a whole number in %lld..%lld", where, *where ? "." : "", key,
            lo, hi);
        return 0;
    }
    return x;
}

static int get_bool(Reader *rd, const JsonValue *obj, const char *where, const char *key)
{
    return json_as_bool(member(rd, obj, where, key, JSON_BOOL, 0), 0);
}

/* A string into a fixed buffer (truncated to fit); null reads as "". */
static void get_str(Reader *rd, const JsonValue *obj, const char *where, const char *key,
                    char *buf, size_t len)
{
    snprintf(buf, len, "%s", json_as_string(member(rd, obj, where, key, JSON_STRING, 1), ""));
}

/* where.key, or key at the top. */
static void join(char *buf, size_t len, const char *where, const char *key)
{
    snprintf(buf, len, "%s%s%s", where, *where ? "." : "", key);
}

/* The largest value an FT_INT or FT_COUNT member's type holds (its range,
 * f->lo..f->hi, is record_check()'s to hold it to, with the message that
 * names the range). */
static long long int_max(const Field *f)
{
    return f->size == sizeof(int) ? 0x7fffffffLL : 0x7fffffffffffffffLL;
}

static void put_int(const Field *f, void *p, long long v)
{
    if (f->size == sizeof(int))
        *(int *)p = (int)v;
    else
        *(long *)p = (long)v;
}

static void read_members(Reader *rd, const JsonValue *obj, const char *where,
                         const Field *fields, void *base);

/* An array of objects, each read by f->sub and appended. */
static void read_array(Reader *rd, const JsonValue *obj, const char *where, const Field *f,
                       void *base)
{
    const JsonValue *a = member(rd, obj, where, f->key, JSON_ARRAY, 0);
    void *elem = a ? malloc(f->size) : NULL;
    char at[96];

    if (!elem) {
        if (a)
            bad(rd, "out of memory");
        return;
    }
    for (size_t i = 0; i < json_count(a) && !rd->failed; i++) {
        join(at, sizeof at, where, f->key);
        snprintf(at + strlen(at), sizeof at - strlen(at), "[%zu]", i);
        if (!json_is(json_at(a, i), JSON_OBJECT)) {
            bad(rd, "%s: expected an object", at);
            break;
        }
        memset(elem, 0, f->size);
        read_members(rd, json_at(a, i), at, f->sub, elem);
        if (!rd->failed && record_push(field_at(f, base), (size_t *)((char *)base + f->n_off),
                                       (size_t *)((char *)base + f->cap_off), elem, f->size) != 0)
            bad(rd, "out of memory");
    }
    free(elem);
}

/* An FT_NAME (one name) or FT_FLAGS (an array of them) member. */
static void read_names(Reader *rd, const JsonValue *obj, const char *where, const Field *f,
                       void *p)
{
    const FieldNames *nm = f->names;
    const JsonValue *v = member(rd, obj, where, f->key,
                                f->type == FT_FLAGS ? JSON_ARRAY : JSON_STRING, f->type == FT_NAME);
    size_t n = f->type == FT_FLAGS ? json_count(v) : 1;
    unsigned bits = 0;

    for (size_t i = 0; i < n && v; i++) {
        const char *name = json_as_string(f->type == FT_FLAGS ? json_at(v, i) : v, "");
        size_t j = 0;
        while (j < nm->n && strcmp(nm->v[j].name, name))
            j++;
        if (j == nm->n) {
            bad(rd, "%s%s%s: unknown %s \"%.60s\"", where, *where ? "." : "", f->key, nm->noun,
                name);
            return;
        }
        bits = f->type == FT_FLAGS ? bits | nm->v[j].value : nm->v[j].value;
    }
    if (f->type == FT_FLAGS)
        *(unsigned *)p = bits;
    else
        *(int *)p = (int)bits;
}

/* An exact unsigned 64-bit integer. */
static uint64_t get_uint64(Reader *rd, const JsonValue *obj, const char *where, const char *key)
{
    const JsonValue *v = member(rd, obj, where, key, JSON_NUMBER, 0);

    if (v && (!v->int_exact || v->negative))
        bad(rd, "%s%s%s: expected a whole number in 0..%llu", where, *where ? "." : "", key,
            (unsigned long long)UINT64_MAX);
    return json_as_uint(v, 0);
}

/* A string into an owned copy; null reads as NULL. */
static void get_dup(Reader *rd, const JsonValue *obj, const char *where, const char *key,
                    char **slot)
{
    const char *s = json_as_string(member(rd, obj, where, key, JSON_STRING, 1), NULL);
    char *c = s ? strdup(s) : NULL;

    if (s && !c) {
        bad(rd, "out of memory");
        return;
    }
    free(*slot);
    *slot = c;
}

/* An object member (FT_OBJECT, or FT_MAYBE that may be null). */
static void read_object(Reader *rd, const JsonValue *obj, const char *where, const Field *f,
                        void *base)
{
    const JsonValue *o = member(rd, obj, where, f->key, JSON_OBJECT, f->type == FT_MAYBE);
    char at[96];

    if (f->type == FT_MAYBE)
        *(int *)((char *)base + f->n_off) = json_is(o, JSON_OBJECT);
    join(at, sizeof at, where, f->key);
    if (json_is(o, JSON_OBJECT))
        read_members(rd, o, at, f->sub, base);
}

/* One member into base, by its type. */
static void read_value(Reader *rd, const JsonValue *obj, const char *where, const Field *f,
                       void *base)
{
    void *p = field_at(f, base);
    double d;

    switch (f->type) {
    case FT_STR:
    case FT_STR_NA:
        get_str(rd, obj, where, f->key, p, f->size);
        break;
    case FT_DUP:
        get_dup(rd, obj, where, f->key, p);
        break;
    case FT_INT:
    case FT_COUNT:
        put_int(f, p, get_int_null(rd, obj, where, f->key, 0, int_max(f), f->type == FT_COUNT, -1));
        break;
    case FT_UINT64:
        *(uint64_t *)p = get_uint64(rd, obj, where, f->key);
        break;
    case FT_NUM:
    case FT_FILL:
        d = get_num(rd, obj, where, f->key);
        if (f->type == FT_FILL)
            *(float *)p = isnan(d) ? -1.0f : (float)d;
        else if (f->size == sizeof(float))
            *(float *)p = (float)d;
        else
            *(double *)p = d;
        break;
    case FT_BOOL:
        *(int *)p = get_bool(rd, obj, where, f->key);
        break;
    case FT_NAME:
    case FT_FLAGS:
        read_names(rd, obj, where, f, p);
        break;
    case FT_OBJECT:
    case FT_MAYBE:
        read_object(rd, obj, where, f, base);
        break;
    case FT_ARRAY:
        read_array(rd, obj, where, f, base);
        break;
    case FT_DERIVED:
    case FT_NUM_LIST:
    case FT_INT_LIST:
        break; /* computed when writing */
    }
}

static void read_members(Reader *rd, const JsonValue *obj, const char *where,
                         const Field *fields, void *base)
{
    for (const Field *f = fields; f->key && !rd->failed; f++) {
        if (f->since > RECORD_REV_FIRST && !json_get(obj, f->key))
            field_set_unknown(f, base); /* a file from before the member */
        else
            read_value(rd, obj, where, f, base);
    }
}

/* Checks the "schema" member of a document: want is RECORD_SCHEMA or
 * RECORD_SWEEP_SCHEMA, either is accepted when want is NULL. */
static const char *check_schema(Reader *rd, const JsonValue *root, const char *want)
{
    const char *s = json_as_string(json_get(root, "schema"), NULL);

    if (!json_is(root, JSON_OBJECT) || !s) {
        bad(rd, "not a cnntop record (no \"schema\" member)");
        return NULL;
    }
    if ((!want || !strcmp(want, RECORD_SCHEMA)) && !strcmp(s, RECORD_SCHEMA))
        return s;
    if ((!want || !strcmp(want, RECORD_SWEEP_SCHEMA)) && !strcmp(s, RECORD_SWEEP_SCHEMA))
        return s;
    if (!strncmp(s, "cnntop.", 7))
        bad(rd, "unsupported schema \"%.60s\" (this cnntop %s reads %s%s%s)", s,
            CNNTOP_VERSION, want ? want : RECORD_SCHEMA, want ? "" : " and ",
            want ? "" : RECORD_SWEEP_SCHEMA);
    else
        bad(rd, "not a cnntop record (schema \"%.60s\")", s);
    return NULL;
}

/* Fills r (initialised) from one run object. */
static void read_run(Reader *rd, const JsonValue *o, RunRecord *r)
{
    if (!check_schema(rd, o, RECORD_SCHEMA))
        return;
    read_members(rd, o, "", record_run_fields, r);
    r->config.data_dir = r->data_dir;
}

/* Reads and parses path; *root on success. */
static int load_tree(Reader *rd, JsonValue **root)
{
    unsigned char *buf;
    size_t len;
    char perr[200];
    int rc = fileio_read_all(rd->path, JSON_MAX_INPUT, &buf, &len, rd->err, rd->errlen);

    *root = NULL;
    if (rc != 0)
        return rc;
    rc = json_parse((const char *)buf, len, root, perr, sizeof perr);
    free(buf);
    if (rc != 0)
        return cn_fail(rd->err, rd->errlen, -CN_EFORMAT, "%s:%s", rd->path, perr);
    return 0;
}

int record_load_json(const char *path, RunRecord *r, char *err, size_t errlen)
{
    Reader rd = {.path = path, .err = err, .errlen = errlen};
    JsonValue *root;
    int rc;

    record_init(r);
    if ((rc = load_tree(&rd, &root)) != 0)
        return rc;
    read_run(&rd, root, r);
    json_free(root);
    return rd.failed ? -CN_EFORMAT : 0;
}

int record_load_any(const char *path, RunRecord **out, size_t *n, char *err, size_t errlen)
{
    Reader rd = {.path = path, .err = err, .errlen = errlen};
    const JsonValue *runs;
    JsonValue *root;
    const char *schema;
    size_t count;
    int rc;

    *out = NULL;
    *n = 0;
    if ((rc = load_tree(&rd, &root)) != 0)
        return rc;
    if (!(schema = check_schema(&rd, root, NULL))) {
        json_free(root);
        return -CN_EFORMAT;
    }
    runs = strcmp(schema, RECORD_SWEEP_SCHEMA) ? NULL : member(&rd, root, "", "runs", JSON_ARRAY, 0);
    count = runs ? json_count(runs) : 1;
    RunRecord *recs = rd.failed ? NULL : calloc(count ? count : 1, sizeof *recs);
    size_t made = 0;
    if (!rd.failed && !recs)
        bad(&rd, "out of memory");
    for (size_t i = 0; recs && i < count && !rd.failed; i++) {
        record_init(&recs[i]);
        made = i + 1;
        read_run(&rd, runs ? json_at(runs, i) : root, &recs[i]);
    }
    json_free(root);
    if (rd.failed || !recs) {
        for (size_t i = 0; recs && i < made; i++)
            record_done(&recs[i]);
        free(recs);
        return -CN_EFORMAT;
    }
    *out = recs;
    *n = made;
    return 0;
}

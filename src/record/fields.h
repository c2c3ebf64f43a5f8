/*
 * fields.h: the record's fields, one table (fields.c) for everything that
 * needs them.
 *
 * A table is an array of Field ended by a NULL key, one entry per JSON
 * member in the order the export writes them: its key, its type, where it
 * lives (offsetof into the object's base struct), the revision of
 * cnntop.run/1 it appeared in, and one line saying what it is.  The JSON
 * writer (json_write.c), the JSON reader (json_read.c) and the tests walk
 * the same tables, and a test checks the man page's list of members against
 * them, so a field is added in one place.  (calibrate.c's cache file works
 * the same way, flat.)
 *
 * Bases: the members of record_run_fields and of its nested objects (config,
 * data, machine, train, train.split, eval) are at offsets into RunRecord;
 * the members of an array's elements are at offsets into the element
 * (RecordEpoch, RecordSample, Segment, ...); record_result_fields' into
 * RecordResult.
 */
#ifndef CNNTOP_RECORD_FIELDS_H
#define CNNTOP_RECORD_FIELDS_H

#include <stddef.h>

#include "cnntop/record.h"
#include "cnntop/stats.h"

/*
 * Revisions of cnntop.run/1.  Members were added within version 1 (readers
 * ignore members they do not know); a member of a revision after
 * RECORD_REV_FIRST may be missing from a file written before it, and then
 * reads as unknown.  A member of RECORD_REV_FIRST must be there.
 */
enum {
    RECORD_REV_FIRST,          /* cnntop.run/1 as first written */
    RECORD_REV_LAYER_COUNTERS, /* layers[].ipc, layers[].miss_rate */
    RECORD_REV_EVALS,          /* evals[], target_accuracy, time_to_target */
    RECORD_REV_VERDICT,        /* run_queue_wait, ipc, miss_rate and why not */
    RECORD_REV_FMA_PEAK,       /* the FMA peak, the ISAs, executed FLOPs */
    RECORD_REV_EXEC,           /* exec, exec_counters; config, data, train null in an exec record */
    RECORD_REV_GEMM,           /* gemm_path */
    RECORD_REV_EXEC_FIGURES,   /* exec.loader_workers, torch, worker_procs, busy_threads, runs;
                                  threads_used null when unknown */
    RECORD_REV_EXEC_HOOK,      /* exec.hook_rejected */
    RECORD_REV_SAMPLE_SPAN,    /* samples[].dt */
    RECORD_REV_LAYER_EXECUTED, /* layers[].flops_executed, gflops_executed */
    RECORD_REV_SUMMARY,        /* sketch_gflops, triad_gbps, counters[].ctr_status and kind,
                                  roles[]: what the run's text summary prints */
    RECORD_REV_MODEL,          /* model (exec's layer window), layers[].kind */
    RECORD_REV_DIST,           /* config.bn, train.split.comm, dist, dist_ranks[]: a
                                  data-parallel run over MPI */
    RECORD_REV_EXEC_SUMMARY,   /* exec's hook window, hook_why, cpu, faults, dropped,
                                  progress; exec_counters[].ctr_status and kind,
                                  exec_roles[], exec_procs[]: what exec's summary prints */
    RECORD_REV_EXEC_RANKS,     /* exec_ranks[]: a data-parallel job's ranks */
    RECORD_REV_DIST_PROBE,     /* dist.ar_algorithm; ar_probe after a barrier, the slowest rank */
    RECORD_REV_DIST_WAIT,      /* dist_ranks[].run_queue_wait */
    RECORD_REV_EXEC_ERROR,     /* exec.py_error: the uncaught exception a Python process died of */
    RECORD_REV_LAYER_BYTES,    /* layers[].bytes: each op's memory traffic on paper */
    RECORD_REVS                /* how many */
};

typedef enum FieldType {
    FT_STR,       /* char[size]; null reads as "" */
    FT_STR_NA,    /* char[size], written as null when "" (a reason, given only when needed) */
    FT_DUP,       /* char *, owned; NULL <-> null */
    FT_INT,       /* int or long (by size), a whole number (lo..hi); never null */
    FT_COUNT,     /* int or long, negative (unknown) <-> null */
    FT_UINT64,    /* uint64_t, exact */
    FT_NUM,       /* double or float (by size); NAN <-> null */
    FT_FILL,      /* float, negative (loading inline) <-> null */
    FT_BOOL,      /* int 0 or 1 <-> false, true */
    FT_NAME,      /* an enum <-> one of names */
    FT_FLAGS,     /* unsigned bits <-> an array of names */
    FT_OBJECT,    /* a nested object: the members sub, at the same base */
    FT_MAYBE,     /* FT_OBJECT or null: present when the int at n_off is 1 */
    FT_ARRAY,     /* array of objects: pointer at off, count at n_off, capacity at
                     cap_off, elements of size bytes described by sub */
    FT_DERIVED,   /* a number derive() computes when writing; not read back */
    FT_NUM_LIST,  /* double * at off, count at n_off: an array of numbers (written only) */
    FT_INT_LIST   /* int * at off, count at n_off: an array of integers (written only) */
} FieldType;

/* Field flags. */
#define FF_VARIES 1u /* differs between two runs of one configuration: a timing,
                        the date, the command line (test_tui_export compares the rest) */

/* The names of an enum (FT_NAME: value == v) or of bits (FT_FLAGS: value & v). */
typedef struct FieldName {
    unsigned value;
    const char *name;
} FieldName;

typedef struct FieldNames {
    const char *noun;       /* for messages: "unknown role \"x\"" */
    size_t n;
    const FieldName *v;
} FieldNames;

typedef struct Field {
    const char *key;        /* the JSON member; NULL ends a table */
    FieldType type;
    size_t off;             /* offset in the base */
    size_t size;            /* the member's size (FT_ARRAY: an element's) */
    int since;              /* RECORD_REV_* it appeared in */
    const char *doc;        /* what it is, in a few words */
    const struct Field *sub;/* FT_OBJECT, FT_MAYBE, FT_ARRAY: the members */
    size_t n_off, cap_off;  /* FT_ARRAY, FT_*_LIST: the count (and capacity); FT_MAYBE: the flag */
    long long lo, hi;       /* FT_INT, FT_COUNT: the range of a known value when hi
                               is not 0 (else 0 up to the type's largest), what the
                               writers can produce, derived from their own limits;
                               record_check() holds a record to it */
    const FieldNames *names;/* FT_NAME, FT_FLAGS */
    double (*derive)(const void *base); /* written instead of the member (FT_NUM) or
                                           alone (FT_DERIVED) */
    unsigned flags;         /* FF_* */
} Field;

/* One entry of "results", hyperfine's --export-json shape, built by
 * json_write.c from a record. */
typedef struct RecordResult {
    const char *command;    /* the command line, or the label */
    StatsSummary time;      /* of the training wall times */
    double user, system;    /* mean CPU seconds */
    double *times;          /* each run's wall time */
    size_t n_times;
    int *exit_codes;
    size_t n_exit_codes;
} RecordResult;

/* The members of a run object, after "schema" (which names the format). */
extern const Field record_run_fields[];
/* The members of its "exec" object (also the exec part of CSV and Markdown). */
extern const Field record_exec_fields[];
/* The members of its "model" object, exec's layer window (also in exec's CSV and
 * Markdown). */
extern const Field record_model_fields[];
/* The members of a data-parallel run's "dist" object and of each entry of
 * "dist_ranks" (fields_dist.c). */
extern const Field record_dist_fields[];
extern const Field record_dist_rank_fields[];
/* The largest steps one run trains: --steps, or its epochs at one image a
 * step (train.c's check_totals() allows as many). */
#define RECORD_MAX_STEPS \
    (CN_MAX_STEPS > CN_MAX_EPOCHS * CN_MAX_IMAGES ? CN_MAX_STEPS : CN_MAX_EPOCHS * CN_MAX_IMAGES)

/* The members of a "results" entry. */
extern const Field record_result_fields[];
/* The augmentations by name (config.augment), also for CSV and Markdown. */
extern const FieldNames record_aug_names;
/* Thread roles, process roles (an exec record's counters) and counter
 * statuses by name. */
extern const FieldNames record_role_names;
/* BatchNorm's statistics across ranks (config.bn): sync, local. */
extern const FieldNames record_bn_names;
extern const FieldNames record_proc_role_names;
extern const FieldNames record_status_names;
/* The counter set's own statuses and the counters' kinds (cnntop/counters.h). */
extern const FieldNames record_ctr_status_names;
extern const FieldNames record_kind_names;

/* The name of value in names (FT_NAME); names->v[0] for one it lacks. */
const char *field_name(const FieldNames *names, unsigned value);

/* The member f of base, as a pointer. */
static inline void *field_at(const Field *f, void *base) { return (char *)base + f->off; }
static inline const void *field_cat(const Field *f, const void *base)
{
    return (const char *)base + f->off;
}

/* Sets the member to what "unknown" means for its type (NAN, "", NULL, -1,
 * 0, an empty array): what a member missing from an older file reads as. */
void field_set_unknown(const Field *f, void *base);

/* The member of fields named key, or NULL. */
const Field *field_find(const Field *fields, const char *key);

/*
 * The member f of base as text, into buf: a number exactly as the JSON
 * export writes it, a string, a name, "true"/"false".  Returns 0, or 1
 * with buf "" when the member is unknown (what the JSON writes as null) or
 * has no one text (an object, an array).  What CSV and Markdown write of a
 * record's members, so that they say the JSON's figures.
 */
int field_text(const Field *f, const void *base, char *buf, size_t len);

/* Appends elem (size bytes) to a growable array (record.c).  Returns 0 or
 * -CN_ENOMEM. */
int record_push(void **arr, size_t *n, size_t *cap, const void *elem, size_t size);

#endif

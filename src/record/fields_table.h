/*
 * fields_table.h: the macros the record's field tables are written in
 * (fields.c, fields_dist.c); private to src/record.
 */
#ifndef CNNTOP_RECORD_FIELDS_TABLE_H
#define CNNTOP_RECORD_FIELDS_TABLE_H

#include <stddef.h>

/* offsetof and sizeof of a member of T. */
#define AT(T, m) .off = offsetof(T, m), .size = sizeof(((T *)0)->m)
#define R(m) AT(RunRecord, m)
#define FIRST RECORD_REV_FIRST
#define END {.key = NULL}
/* One entry: the key, the type, where (R(), AT(), ARRAY() or NOWHERE),
 * the revision, the description, then any of .sub, .names, .lo/.hi, .derive. */
#define F(k, t, where, rev, ...) {.key = k, .type = t, where, .since = rev, .doc = __VA_ARGS__}
#define NOWHERE .off = 0
/* The same, for a member whose value differs between two runs of one
 * configuration (FF_VARIES). */
#define FV(k, t, where, rev, ...) \
    {.key = k, .type = t, where, .since = rev, .flags = FF_VARIES, .doc = __VA_ARGS__}
/* An array of T in RunRecord at field `a` (with n_a and cap_a). */
#define ARRAY(a, T) .off = offsetof(RunRecord, a), .size = sizeof(T)
#define COUNTS(a) .n_off = offsetof(RunRecord, n_##a), .cap_off = offsetof(RunRecord, cap_##a)

#endif

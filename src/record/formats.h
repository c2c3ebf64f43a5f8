/*
 * formats.h: the export formats, one file each (json_write.c, csv.c,
 * markdown.c); export.c picks one by the file name's extension.  Each makes
 * the whole text in memory: *out is malloc'ed and NUL-terminated, *len its
 * length.  Return 0 or -CN_ENOMEM.
 */
#ifndef CNNTOP_RECORD_FORMATS_H
#define CNNTOP_RECORD_FORMATS_H

#include <stddef.h>
#include <stdio.h>

#include "cnntop/record.h"

int record_json_run(const RunRecord *r, char **out, size_t *len);
int record_json_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len);
int record_csv_run(const RunRecord *r, char **out, size_t *len);
int record_csv_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len);
int record_md_run(const RunRecord *r, char **out, size_t *len);
int record_md_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len);

/* A text in memory to print into (open_memstream): *buf and *len are
 * set when it is closed.  NULL when out of memory. */
FILE *record_text_open(char **buf, size_t *len);

/* Closes it: 0 with *buf the NUL-terminated text (free() it) and *len its
 * length; or, after rc != 0 or a failed write (out of memory), rc or
 * -CN_ENOMEM with *buf freed and NULL. */
int record_text_close(FILE *f, char **buf, size_t *len, int rc);

#endif

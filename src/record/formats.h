/*
 * formats.h: the export formats, one file each (json_write.c, csv.c,
 * markdown.c); export.c picks one by the file name's extension.  Each makes
 * the whole text in memory: *out is malloc'ed and NUL-terminated, *len its
 * length.  Return 0 or -CN_ENOMEM.
 */
#ifndef CNNTOP_RECORD_FORMATS_H
#define CNNTOP_RECORD_FORMATS_H

#include <stddef.h>

#include "cnntop/record.h"
#include "util/textbuf.h"

int record_json_run(const RunRecord *r, char **out, size_t *len);
int record_json_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len);
int record_csv_run(const RunRecord *r, char **out, size_t *len);
int record_csv_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len);
int record_md_run(const RunRecord *r, char **out, size_t *len);
int record_md_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len);

/* Hands the text over (0, *out and *len) when rc is 0 and every write
 * succeeded; frees it otherwise and returns rc, or -CN_ENOMEM. */
int record_text_finish(TextBuf *t, int rc, char **out, size_t *len);

#endif

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
#include "record/fields.h"
#include "util/textbuf.h"

int record_json_run(const RunRecord *r, char **out, size_t *len);
int record_json_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len);
int record_csv_run(const RunRecord *r, char **out, size_t *len);
int record_csv_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len);
int record_md_run(const RunRecord *r, char **out, size_t *len);
int record_md_sweep(const RunRecord *const *runs, size_t n, char **out, size_t *len);

/*
 * An exec record (have_exec) or a sweep --cmd's records (exec_text.c):
 * CSV one row per record; Markdown the command, how it ended and the exec
 * members with their meaning (one record), or the grid with mean ± σ,
 * speedups and the recommendation (sweep 1), then the counters per role.
 */
int record_csv_exec(const RunRecord *const *runs, size_t n, char **out, size_t *len);
int record_md_exec(const RunRecord *const *runs, size_t n, int sweep, char **out, size_t *len);

/* Cells shared by the writers (cells.c, with the counters and repeats
 * tables and record_text_finish): a CSV number (empty when unknown) or string
 * (quoted when it must be), then sep; Markdown text with '|' escaped, a
 * number with fixed decimals ("" when unknown) or "mean ± sd" (mean alone
 * when sd is unknown) into buf. */
void record_csv_num(TextBuf *t, double x, const char *sep);
void record_csv_str(TextBuf *t, const char *s, const char *sep);
void record_md_cell(TextBuf *t, const char *s);
const char *record_md_fixed(char *buf, size_t len, double x, int decimals);
const char *record_md_pm(char *buf, size_t len, double m, double sd, int decimals);

/* Markdown's counters table (roles named by roles) and repeats table. */
void record_md_counters(TextBuf *t, const RecordCounter *cs, size_t n, const FieldNames *roles);

/* The layer table ("## Layers") of r over record_layer_steps(): the
 * engine's layers, or an exec record's model (with its Module column). */
void record_md_layers(TextBuf *t, const RunRecord *r);

void record_md_repeats(TextBuf *t, const RunRecord *r);

/* Hands the text over (0, *out and *len) when rc is 0 and every write
 * succeeded; frees it otherwise and returns rc, or -CN_ENOMEM. */
int record_text_finish(TextBuf *t, int rc, char **out, size_t *len);

#endif

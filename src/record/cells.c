/*
 * cells.c: the pieces that every text format writes (formats.h): CSV and
 * Markdown cells, the counters and repeats tables, and handing a finished
 * text over.  csv.c, markdown.c and exec_text.c build on these and never
 * on each other, so that the kind of a record is branched on in one place
 * (export.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/json.h"
#include "record/fields.h"
#include "record/formats.h"
#include "util/err.h"

/* A CSV cell: a number, or nothing when unknown. */
void record_csv_num(TextBuf *t, double x, const char *sep)
{
    char b[64];

    textbuf_printf(t, "%s%s", json_format_number(x, b, sizeof b) == 0 ? b : "", sep);
}

/* A CSV string cell, quoted when it holds a separator, quote or newline. */
void record_csv_str(TextBuf *t, const char *s, const char *sep)
{
    if (!s)
        s = "";
    if (!strpbrk(s, ",\"\r\n")) {
        textbuf_printf(t, "%s%s", s, sep);
        return;
    }
    textbuf_putc(t, '"');
    for (; *s; s++)
        if (*s == '"')
            textbuf_write(t, "\"\"", 2);
        else
            textbuf_putc(t, *s);
    textbuf_printf(t, "\"%s", sep);
}

/* A Markdown table cell: '|' escaped, newlines flattened. */
void record_md_cell(TextBuf *t, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            textbuf_printf(t, "\\|");
        else if (*s == '\n' || *s == '\r')
            textbuf_printf(t, " ");
        else
            textbuf_printf(t, "%c", *s);
    }
}

/* "12.345" or "" for an unknown figure, with a fixed number of decimals. */
const char *record_md_fixed(char *buf, size_t len, double x, int decimals)
{
    if (isfinite(x))
        snprintf(buf, len, "%.*f", decimals, x);
    else
        snprintf(buf, len, "%s", "");
    return buf;
}

/* "mean ± sd" or "mean" alone for one run. */
const char *record_md_pm(char *buf, size_t len, double m, double sd, int decimals)
{
    if (isfinite(sd))
        snprintf(buf, len, "%.*f ± %.*f", decimals, m, decimals, sd);
    else
        record_md_fixed(buf, len, m, decimals);
    return buf;
}

void record_md_counters(TextBuf *t, const RecordCounter *cs, size_t n, const FieldNames *roles)
{
    char a[64];

    if (!n)
        return;
    textbuf_printf(t, "\n## Counters\n\n| Role | Event | Value | Unit | Running |\n|:---|:---|---:|:---|---:|\n");
    for (size_t i = 0; i < n; i++) {
        const RecordCounter *c = &cs[i];
        textbuf_printf(t, "| %s | ", field_name(roles, (unsigned)c->role));
        record_md_cell(t, c->name);
        if (c->status == RECORD_CTR_OK) {
            char v[64];
            textbuf_printf(t, " | %s | ", json_format_number(c->value, v, sizeof v) ? "" : v);
            record_md_cell(t, c->unit);
            textbuf_printf(t, " | %s |\n", isfinite(c->scaled) ? record_md_fixed(a, sizeof a, 100 * c->scaled, 1) : "");
        } else {
            textbuf_printf(t, " | n/a: ");
            record_md_cell(t, c->reason[0] ? c->reason : field_name(&record_status_names, (unsigned)c->status));
            textbuf_printf(t, " | | |\n");
        }
    }
}

void record_md_repeats(TextBuf *t, const RunRecord *r)
{
    char a[64];

    if (!r->n_repeats)
        return;
    textbuf_printf(t, "\n## Repeats\n\n| Run | Wall [s] | Images/s | User [s] | System [s] | Accuracy | Exit |\n"
               "|---:|---:|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < r->n_repeats; i++) {
        const RecordRepeat *p = &r->repeats[i];
        char w[32], ips[32], u[32], sy[32];
        textbuf_printf(t, "| %zu | %s | %s | %s | %s | %s | %d |\n", i + 1,
                       record_md_fixed(w, sizeof w, p->wall, 3),
                       record_md_fixed(ips, sizeof ips, p->images_per_s, 1),
                       record_md_fixed(u, sizeof u, p->user, 2),
                       record_md_fixed(sy, sizeof sy, p->system, 2),
                       isfinite(p->accuracy) ? record_md_fixed(a, sizeof a, 100 * p->accuracy, 2) : "",
                       p->exit_code);
    }
}

int record_text_finish(TextBuf *t, int rc, char **out, size_t *len)
{
    if (rc != 0) {
        textbuf_free(t);
        *out = NULL;
        *len = 0;
        return rc;
    }
    return textbuf_finish(t, out, len) == 0 ? 0 : -CN_ENOMEM;
}

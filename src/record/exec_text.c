/*
 * exec_text.c: the records of `cnntop exec` and `cnntop sweep --cmd` as
 * CSV and Markdown (formats.h).
 *
 * An exec record describes a command, not cnntop's own training, so these
 * writers say what the JSON says of it: the exec members and the few
 * run members that apply (record_exec_fields and exec_run_keys, each
 * written by field_text() as the JSON writes it), the figures over the
 * measured runs (mean ± σ of the wall time and images/s, the speedup
 * against the first record, the recommendation of record_rank()), and
 * the counters per process role, each "n/a" with its reason when it was
 * not counted, never 0.  CSV is one row per record with one column per
 * counter seen in any of them; a figure that is unknown is an empty cell
 * (a counter that could not be counted "n/a").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/json.h"
#include "record/fields.h"
#include "cnntop/figures.h"
#include "record/formats.h"
#include "util/err.h"

/* The run members (record_run_fields) that an exec record fills, in its order. */
static const char *const exec_run_keys[] = {"threads_used", "flops_per_image", "peak_rss_kib",
                                            "run_queue_wait", "exit_code"};
#define N_RUN_KEYS (sizeof exec_run_keys / sizeof *exec_run_keys)

/* What a record is called in a table: its label (a sweep's configuration)
 * or the command. */
static const char *exec_name(const RunRecord *r)
{
    return r->label ? r->label : r->exec.command ? r->exec.command : "?";
}

/* The counters seen in any of the records, each once by role and name, in
 * the order they first appear: pointers into the records. */
typedef struct CounterCols {
    const RecordCounter **c;
    size_t n;
} CounterCols;

static const RecordCounter *counter_in(const RunRecord *r, const RecordCounter *like)
{
    for (size_t i = 0; i < r->n_exec_counters; i++)
        if (r->exec_counters[i].role == like->role && !strcmp(r->exec_counters[i].name, like->name))
            return &r->exec_counters[i];
    return NULL;
}

static int counter_cols(const RunRecord *const *runs, size_t n, CounterCols *cols)
{
    size_t cap = 0;

    for (size_t k = 0; k < n; k++)
        cap += runs[k]->n_exec_counters;
    cols->n = 0;
    cols->c = malloc((cap ? cap : 1) * sizeof(const RecordCounter *));
    if (!cols->c)
        return -CN_ENOMEM;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < runs[k]->n_exec_counters; i++) {
            const RecordCounter *c = &runs[k]->exec_counters[i];
            size_t j = 0;
            while (j < cols->n && (cols->c[j]->role != c->role || strcmp(cols->c[j]->name, c->name)))
                j++;
            if (j == cols->n)
                cols->c[cols->n++] = c;
        }
    return 0;
}

/* A counter's value as the JSON writes it, or "n/a" when not counted. */
static const char *counter_text(const RecordCounter *c, char *buf, size_t len)
{
    if (c->status != RECORD_CTR_OK || json_format_number(c->value, buf, len) != 0)
        snprintf(buf, len, "n/a");
    return buf;
}

/* r's figures over its runs and its speedup over base (*x ± *u).  0 or
 * -CN_ENOMEM. */
static int exec_figures(const RunRecord *r, const RunRecord *base, int by_time,
                        RecordFigures *fg, double *x, double *u)
{
    record_speedup(r, base, by_time, x, u);
    return record_figures(r, fg);
}

/* ---- CSV ---- */

static void csv_header(TextBuf *t, const CounterCols *cols)
{
    textbuf_printf(t, "command,mean,stddev,median,user,system,min,max,runs,images_per_s,"
                      "images_per_s_stddev,speedup,speedup_stddev");
    for (size_t i = 0; i < N_RUN_KEYS; i++)
        textbuf_printf(t, ",%s", exec_run_keys[i]);
    for (const Field *f = record_exec_fields; f->key; f++)
        textbuf_printf(t, ",exec.%s", f->key);
    for (const Field *f = record_model_fields; f->key; f++)
        textbuf_printf(t, ",model.%s", f->key);
    for (size_t i = 0; i < cols->n; i++) {
        char h[128];
        snprintf(h, sizeof h, "%s.%s%s%s%s", field_name(&record_proc_role_names, (unsigned)cols->c[i]->role),
                 cols->c[i]->name, cols->c[i]->unit[0] ? " [" : "", cols->c[i]->unit,
                 cols->c[i]->unit[0] ? "]" : "");
        textbuf_putc(t, ',');
        record_csv_str(t, h, "");
    }
    textbuf_printf(t, ",counters_na\n");
}

/* The members of fields named by keys (all of them: keys NULL) as cells. */
static void csv_members(TextBuf *t, const Field *fields, const char *const *keys, size_t nkeys,
                        const void *base)
{
    char b[512];

    for (const Field *f = fields; f->key; f++) {
        size_t k = 0;
        while (keys && k < nkeys && strcmp(keys[k], f->key))
            k++;
        if (keys && k == nkeys)
            continue;
        field_text(f, base, b, sizeof b);
        textbuf_putc(t, ',');
        record_csv_str(t, b, "");
    }
}

/* The counters' cells, then the reasons of those not counted. */
static void csv_counters(TextBuf *t, const RunRecord *r, const CounterCols *cols)
{
    TextBuf na = {0};
    char b[64], *why = NULL;
    size_t wlen = 0;

    for (size_t i = 0; i < cols->n; i++) {
        const RecordCounter *c = counter_in(r, cols->c[i]);
        textbuf_printf(t, ",%s", c ? counter_text(c, b, sizeof b) : "");
        if (c && c->status != RECORD_CTR_OK)
            textbuf_printf(&na, "%s%s.%s: %s", na.len ? "; " : "",
                           field_name(&record_proc_role_names, (unsigned)c->role), c->name,
                           c->reason[0] ? c->reason
                                        : field_name(&record_status_names, (unsigned)c->status));
    }
    textbuf_putc(t, ',');
    if (textbuf_finish(&na, &why, &wlen) == 0)
        record_csv_str(t, why, "\n");
    else
        textbuf_putc(t, '\n');
    free(why);
}

static int csv_row(TextBuf *t, const RunRecord *r, const RunRecord *base, int by_time,
                   const CounterCols *cols)
{
    RecordFigures fg;
    double x, u;

    if (exec_figures(r, base, by_time, &fg, &x, &u) != 0)
        return -CN_ENOMEM;
    const StatsSummary s = fg.time, ips = fg.ips;
    record_csv_str(t, exec_name(r), ",");
    record_csv_num(t, s.mean, ",");
    record_csv_num(t, s.sd, ",");
    record_csv_num(t, s.median, ",");
    record_csv_num(t, NAN, ","); /* user and system: not split for a command */
    record_csv_num(t, NAN, ",");
    record_csv_num(t, s.min, ",");
    record_csv_num(t, s.max, ",");
    textbuf_printf(t, "%zu,", s.n);
    record_csv_num(t, ips.mean, ",");
    record_csv_num(t, ips.sd, ",");
    record_csv_num(t, x, ",");
    record_csv_num(t, u, "");
    csv_members(t, record_run_fields, exec_run_keys, N_RUN_KEYS, r);
    csv_members(t, record_exec_fields, NULL, 0, r);
    if (r->have_model)
        csv_members(t, record_model_fields, NULL, 0, r);
    else
        for (const Field *f = record_model_fields; f->key; f++)
            textbuf_putc(t, ',');
    csv_counters(t, r, cols);
    return 0;
}

int record_csv_exec(const RunRecord *const *runs, size_t n, char **out, size_t *len)
{
    TextBuf text = {0}, *t = &text;
    CounterCols cols;
    int by_time = record_rank_by_time(runs, n), rc = counter_cols(runs, n, &cols);

    if (rc == 0)
        csv_header(t, &cols);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = csv_row(t, runs[i], runs[0], by_time, &cols);
    free(cols.c);
    return record_text_finish(t, rc, out, len);
}

/* ---- Markdown ---- */

/* "| key | value or n/a | what it is |" for a member. */
static void md_member(TextBuf *t, const Field *f, const void *base)
{
    char b[512];

    textbuf_printf(t, "| %s | ", f->key);
    record_md_cell(t, field_text(f, base, b, sizeof b) ? "n/a" : b);
    textbuf_printf(t, " | %s |\n", f->doc);
}

/* The heading: the title (with what, the command, when not NULL), the
 * command line and the date. */
static void md_head(TextBuf *t, const RunRecord *r, const char *title, const char *what)
{
    textbuf_printf(t, "# %s", title);
    if (what) {
        textbuf_printf(t, ": `");
        record_md_cell(t, what);
        textbuf_printf(t, "`");
    }
    textbuf_printf(t, "\n\n");
    if (r->command) {
        textbuf_printf(t, "Command line: `");
        record_md_cell(t, r->command);
        textbuf_printf(t, "`  \n");
    }
    textbuf_printf(t, "Date: %s, cnntop %s\n", r->date, r->version);
}

static void md_one(TextBuf *t, const RunRecord *r)
{
    md_head(t, r, "cnntop exec", r->exec.command ? r->exec.command : "?");
    if (r->exec.signal)
        textbuf_printf(t, "\n**Killed by signal %d.**\n", r->exec.signal);
    textbuf_printf(t, "\n## Summary\n\n| Member | Value | Meaning |\n|:---|---:|:---|\n");
    for (const Field *f = record_exec_fields; f->key; f++)
        if (strcmp(f->key, "command"))
            md_member(t, f, r);
    for (size_t i = 0; i < N_RUN_KEYS; i++)
        md_member(t, field_find(record_run_fields, exec_run_keys[i]), r);
    if (r->have_model) {
        textbuf_printf(t, "\n## Model's layer window\n\n| Member | Value | Meaning |\n"
                          "|:---|---:|:---|\n");
        for (const Field *f = record_model_fields; f->key; f++)
            md_member(t, f, r);
        record_md_layers(t, r);
    }
    record_md_counters(t, r->exec_counters, r->n_exec_counters, &record_proc_role_names);
    record_md_repeats(t, r);
}

/* A grid row: the configuration, its figures over the runs, the speedup. */
static int md_grid_row(TextBuf *t, const RunRecord *r, const RunRecord *base, int by_time)
{
    const Field *th = field_find(record_run_fields, "threads_used");
    const Field *lw = field_find(record_exec_fields, "loader_workers");
    char a[64], b[64], c[64], d[32], e[32];
    RecordFigures fg;
    double x, u;

    if (exec_figures(r, base, by_time, &fg, &x, &u) != 0)
        return -CN_ENOMEM;
    const StatsSummary s = fg.time, ips = fg.ips;
    textbuf_printf(t, "| ");
    record_md_cell(t, exec_name(r));
    textbuf_printf(t, " | `");
    record_md_cell(t, r->exec.command);
    textbuf_printf(t, "` | %s | %s | ", record_md_pm(a, sizeof a, s.mean, s.sd, 3),
                   isfinite(ips.mean) ? record_md_pm(b, sizeof b, ips.mean, ips.sd, 1) : "n/a");
    textbuf_printf(t, "%s | %s | %s | ",
                   isfinite(r->exec.data_wait_share)
                       ? record_md_fixed(c, sizeof c, 100 * r->exec.data_wait_share, 1) : "n/a",
                   field_text(th, r, d, sizeof d) ? "n/a" : d,
                   field_text(lw, r, e, sizeof e) ? "n/a" : e);
    if (r->exec.signal)
        textbuf_printf(t, "signal %d", r->exec.signal);
    else
        textbuf_printf(t, "%d", r->exec.status);
    textbuf_printf(t, " | %s |\n", r == base ? "1 (baseline)" : record_md_pm(a, sizeof a, x, u, 2));
    return 0;
}

/* The recommendation, in the words `cnntop sweep` prints it. */
static void md_recommend(TextBuf *t, const RunRecord *const *runs, size_t n, int by_time)
{
    RecordRank rk;
    char v[64];

    record_rank(runs, n, by_time, &rk);
    if (rk.best < 0) {
        textbuf_printf(t, "\nNo configuration finished: no recommendation.\n");
        return;
    }
    snprintf(v, sizeof v, by_time ? "%.3f s" : "%.0f images/s", rk.best_s.mean);
    textbuf_printf(t, "\nFastest: ");
    record_md_cell(t, exec_name(runs[rk.best]));
    textbuf_printf(t, ", %s.  \n", v);
    if (rk.second >= 0) {
        snprintf(v, sizeof v, by_time ? "%.3f s" : "%.0f images/s", rk.second_s.mean);
        textbuf_printf(t, "Against the runner-up (");
        record_md_cell(t, exec_name(runs[rk.second]));
        if (rk.welch_ok)
            textbuf_printf(t, ", %s): %s (Welch's t-test, p = %.3f).  \n", v,
                           rk.welch.distinguishable ? "a significant difference"
                                                    : "no significant difference",
                           rk.welch.p);
        else
            textbuf_printf(t, ", %s): cannot tell with one run each.  \n", v);
    }
    textbuf_printf(t, "Recommended: ");
    record_md_cell(t, exec_name(runs[rk.best]));
    textbuf_printf(t, ".\n");
}

/* Counters by role and event, one column per configuration. */
static int md_grid_counters(TextBuf *t, const RunRecord *const *runs, size_t n)
{
    CounterCols cols;
    char b[64];

    if (counter_cols(runs, n, &cols) != 0)
        return -CN_ENOMEM;
    if (cols.n) {
        textbuf_printf(t, "\n## Counters\n\nSummed over each configuration's measured runs "
                          "(exec.runs).\n\n| Role | Event | Unit |");
        for (size_t k = 0; k < n; k++) {
            textbuf_printf(t, " ");
            record_md_cell(t, exec_name(runs[k]));
            textbuf_printf(t, " |");
        }
        textbuf_printf(t, "\n|:---|:---|:---|");
        for (size_t k = 0; k < n; k++)
            textbuf_printf(t, "---:|");
        textbuf_printf(t, "\n");
    }
    for (size_t i = 0; i < cols.n; i++) {
        textbuf_printf(t, "| %s | ", field_name(&record_proc_role_names, (unsigned)cols.c[i]->role));
        record_md_cell(t, cols.c[i]->name);
        textbuf_printf(t, " | ");
        record_md_cell(t, cols.c[i]->unit);
        textbuf_printf(t, " |");
        for (size_t k = 0; k < n; k++) {
            const RecordCounter *c = counter_in(runs[k], cols.c[i]);
            textbuf_printf(t, " %s", c ? counter_text(c, b, sizeof b) : "");
            if (c && c->status != RECORD_CTR_OK) {
                textbuf_printf(t, ": ");
                record_md_cell(t, c->reason);
            }
            textbuf_printf(t, " |");
        }
        textbuf_printf(t, "\n");
    }
    free(cols.c);
    return 0;
}

static int md_grid(TextBuf *t, const RunRecord *const *runs, size_t n)
{
    int by_time = record_rank_by_time(runs, n), rc = 0;

    md_head(t, runs[0], "cnntop sweep --cmd", NULL);
    textbuf_printf(t, "\n| Configuration | Command | Time [s] | Images/s | Data wait [%%] | Threads "
                      "| Workers | Exit | Speedup%s |\n|:---|:---|---:|---:|---:|---:|---:|---:|---:|\n",
                   by_time ? " (time)" : "");
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = md_grid_row(t, runs[i], runs[0], by_time);
    textbuf_printf(t, "\nMean ± σ over each configuration's measured runs; speedups against the "
                      "first, by %s.\n", by_time ? "wall time (no images/s from the Python hook)"
                                                 : "images/s");
    md_recommend(t, runs, n, by_time);
    return rc ? rc : md_grid_counters(t, runs, n);
}

int record_md_exec(const RunRecord *const *runs, size_t n, int sweep, char **out, size_t *len)
{
    TextBuf text = {0}, *t = &text;
    int rc = 0;

    if (n == 0)
        textbuf_printf(t, "# cnntop sweep --cmd\n\nNo configuration ran.\n");
    else if (sweep)
        rc = md_grid(t, runs, n);
    else
        md_one(t, runs[0]);
    return record_text_finish(t, rc, out, len);
}

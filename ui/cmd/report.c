/*
 * report.c: `cnntop report`: stored run records, alone or side by side.
 *
 * Every file is read (a run export is one record, a sweep export several)
 * before anything is printed, so a bad file costs one error line and no
 * half-printed table.  Side by side, each record is one column, four to a
 * block; the speedup compares throughputs (images/s), which stay
 * comparable when runs trained for different numbers of images.  Exec
 * records (`cnntop exec`, `sweep --cmd`) compare as hyperfine compares
 * commands: wall time mean ± σ and the speedup by it, images/s when the
 * Python hook gave them, data wait, and the counters per role, with
 * Welch's test where there are repeated runs.  --export writes the
 * records read again, in any format (a run's JSON as CSV or Markdown).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/figures.h"
#include "cnntop/record.h"
#include "cnntop/stats.h"
#include "cmd/exec.h"
#include "cmd/report.h"
#include "cmd/summary.h"
#include "common/exit.h"
#include "common/fmt.h"

#define COLS 4        /* records per block of the side-by-side table */
#define COLW 22       /* characters per column */

typedef struct Entry {
    RunRecord r;
    char name[80];     /* the file's base name, "#i" added for a sweep's runs */
    RecordFigures f;   /* its figures over the repeats (cnntop/figures.h) */
} Entry;

/* A file's records make sense, and there is at least one to report. */
static int check_all(const char *path, const RunRecord *recs, size_t k, char *err, size_t len)
{
    char what[600];

    if (k == 0) {
        snprintf(err, len, "%s: a sweep record with no runs: nothing to report", path);
        return -1;
    }
    for (size_t j = 0; j < k; j++) {
        if (k > 1)
            snprintf(what, sizeof what, "%s: runs[%zu]", path, j);
        else
            snprintf(what, sizeof what, "%s", path);
        if (record_check(&recs[j], what, err, len) != 0)
            return -1;
    }
    return 0;
}

/* Reads every file; returns the entries (count in *n) or NULL after
 * printing the error. */
static Entry *load_all(const Options *o, size_t *n)
{
    Entry *all = NULL;
    char err[640];

    *n = 0;
    for (int i = 0; i < o->n_positional; i++) {
        const char *path = o->positional[i], *base = strrchr(path, '/');
        RunRecord *recs = NULL;
        size_t k = 0;
        ExportFormat fmt;
        if (export_format(path, &fmt, err, sizeof err) == 0 && fmt != EXPORT_JSON) {
            fprintf(stderr, "cnntop: %s: report reads the JSON run record (--export FILE.json "
                            "of run or sweep), not a %s export\n",
                    path, fmt == EXPORT_CSV ? "CSV" : "Markdown");
            goto fail;
        }
        if (record_load_any(path, &recs, &k, err, sizeof err) != 0 ||
            check_all(path, recs, k, err, sizeof err) != 0) {
            fprintf(stderr, "cnntop: %s\n", err);
            for (size_t j = 0; recs && j < k; j++)
                record_done(&recs[j]);
            free(recs);
            goto fail;
        }
        Entry *grown = realloc(all, (*n + k) * sizeof *all);
        if (!grown) {
            for (size_t j = 0; j < k; j++)
                record_done(&recs[j]);
            free(recs);
            fprintf(stderr, "cnntop: %s: out of memory\n", path);
            goto fail;
        }
        all = grown;
        for (size_t j = 0; j < k; j++) {
            Entry *e = &all[(*n)++];
            e->r = recs[j];
            /* The arrays moved with the struct; the config's pointer too. */
            e->r.config.data_dir = e->r.data_dir;
            if (k > 1)
                snprintf(e->name, sizeof e->name, "%.50s#%zu", base ? base + 1 : path, j + 1);
            else
                snprintf(e->name, sizeof e->name, "%s", base ? base + 1 : path);
            record_figures(&e->r, &e->f);
        }
        free(recs);
    }
    return all;
fail:
    for (size_t j = 0; j < *n; j++)
        record_done(&all[j].r);
    free(all);
    *n = 0;
    return NULL;
}

/* Characters (UTF-8 code points) of s. */
static int chars(const char *s)
{
    int n = 0;

    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* One cell, cut to fit its column.  Widths count characters, not bytes:
 * printf's "%-22s" would pad "±" (two bytes of UTF-8) one short.  A value
 * too long is cut with '~' (two different values never look alike); a
 * file name keeps its tail ("~long-name-b.json"), where names differ. */
static void cell_cut(const char *s, int last, int tail)
{
    int w = 0, n = chars(s), room = COLW - 2;

    if (n > room && tail) {
        for (int skip = n - (room - 1); skip > 0; s++)
            skip -= ((unsigned char)s[1] & 0xC0) != 0x80;
        printf("~");
        w++;
    }
    for (; *s && w < room - (n > room && !tail); w++) {
        int len = 1;
        while ((s[len] & 0xC0) == 0x80)
            len++;
        fwrite(s, 1, (size_t)len, stdout);
        s += len;
    }
    if (*s && !tail) {
        printf("~");
        w++;
    }
    if (!last)
        printf("%*s", COLW - w, "");
}

static void cell(const char *s, int last)
{
    cell_cut(s, last, 0);
}

/* The speedup of e over the reference and what Welch's test says: by
 * images/s, or with by_time by wall time (the reference's over e's). */
static void speedup_by(const Entry *e, const Entry *ref, int by_time, char *sp, char *dist,
                       size_t len)
{
    double x, u;
    StatsWelch w;

    /* The reference against itself is 1 by definition, as in hyperfine. */
    record_speedup(&e->r, &ref->r, by_time, &x, &u);
    fmt_pm(sp, len, x, u, 2);
    if (e == ref)
        snprintf(dist, len, "(reference)");
    else if (stats_welch(by_time ? &e->f.time : &e->f.ips, by_time ? &ref->f.time : &ref->f.ips,
                         &w) != 0)
        snprintf(dist, len, "too few runs");
    else
        snprintf(dist, len, "%s (p %s %.3f)", w.distinguishable ? "yes" : "no",
                 w.p < 0.001 ? "<" : "=", w.p < 0.001 ? 0.001 : w.p);
}

static void speedup(const Entry *e, const Entry *ref, char *sp, char *dist, size_t len)
{
    speedup_by(e, ref, 0, sp, dist, len);
}

/* The configuration label over two rows where one cell cannot hold it:
 * part 0 up to the last ", " that fits ("batch 64, 0 workers,"), part 1
 * the rest ("2 threads"); part 1 is "" when the whole fits. */
static const char *config_part(char *label, int part)
{
    char *cut = NULL;

    if (chars(label) > COLW - 2)
        for (char *p = strstr(label, ", "); p && p - label + 1 <= COLW - 2; p = strstr(p + 1, ", "))
            cut = p;
    if (!cut)
        return part ? "" : label;
    if (part)
        return cut + 2;
    cut[1] = '\0';
    return label;
}

static void row(const char *label, const Entry *e, size_t n, size_t from, const Entry *ref, int what)
{
    char b[96], d[96];

    printf("  %-22s", label);
    for (size_t i = from; i < n && i < from + COLS; i++) {
        const RunRecord *r = &e[i].r;
        int last = i + 1 == n || i + 1 == from + COLS;
        switch (what) {
        case 0: cell_cut(e[i].name, last, 1); continue;
        case 1:
        case 14:
            record_label(r, b, sizeof b);
            cell(config_part(b, what == 14), last);
            continue;
        case 2: fmt_pm(b, sizeof b, e[i].f.time.mean, e[i].f.time.sd, 2); break;
        case 3: fmt_pm(b, sizeof b, e[i].f.ips.mean, e[i].f.ips.sd, 1); break;
        case 4: fmt_pm(b, sizeof b, e[i].f.gflops, NAN, 1); break;
        case 5: fmt_pm(b, sizeof b, 100 * e[i].f.mfu, NAN, 1); break;
        case 6: fmt_pm(b, sizeof b, 100 * e[i].f.executed, NAN, 1); break;
        case 7:
            fmt_pm(b, sizeof b, r->have_train ? r->train.cpu_user + r->train.cpu_sys : NAN, NAN, 2);
            break;
        case 8:
            if (r->have_eval)
                snprintf(b, sizeof b, "%.2f%%", 100 * r->eval.accuracy);
            else
                snprintf(b, sizeof b, "n/a");
            break;
        case 9: fmt_pm(b, sizeof b, r->have_train ? r->train.final_loss : NAN, NAN, 4); break;
        case 10: fmt_pm(b, sizeof b, 100 * e[i].f.wait_share, NAN, 1); break;
        case 11:
            fmt_pm(b, sizeof b, r->peak_rss_kib >= 0 ? r->peak_rss_kib / 1024.0 : NAN, NAN, 1);
            break;
        case 12: speedup(&e[i], ref, b, d, sizeof b); break;
        default: speedup(&e[i], ref, d, b, sizeof b); break;
        }
        cell(b, last);
    }
    printf("\n");
}

/* 1 when a configuration of this block needs its second row. */
static int long_label(const Entry *e, size_t n, size_t from)
{
    char b[96];

    for (size_t i = from; i < n && i < from + COLS; i++)
    {
        record_label(&e[i].r, b, sizeof b);
        if (config_part(b, 1)[0])
            return 1;
    }
    return 0;
}

/* ---- exec records side by side ---- */

/* What an exec record is called in the table: its label or its command. */
static const char *exec_name(const RunRecord *r)
{
    return r->label ? r->label : r->exec.command ? r->exec.command : "?";
}

/* A count the record may not know: the number, or n/a. */
static void count_text(char *b, size_t len, int v)
{
    snprintf(b, len, v >= 0 ? "%d" : "n/a", v);
}

/* One cell of the exec comparison (what: the row, EXEC_ROW_*). */
enum { XR_NAME, XR_CONFIG, XR_EXIT, XR_WALL, XR_IPS, XR_WAIT, XR_THREADS, XR_WORKERS, XR_RSS,
       XR_SPEED_T, XR_DIST_T, XR_SPEED_I, XR_DIST_I, XR_ROWS };

static void exec_cell(const Entry *e, const Entry *ref, int what, char *b, size_t len)
{
    const RunRecord *r = &e->r;
    char d[96];

    switch (what) {
    case XR_CONFIG: snprintf(b, len, "%s", exec_name(r)); break;
    case XR_EXIT:
        snprintf(b, len, r->exec.signal ? "signal %d" : "status %d",
                 r->exec.signal ? r->exec.signal : r->exec.status);
        break;
    case XR_WALL: fmt_pm(b, len, e->f.time.mean, e->f.time.sd, 3); break;
    case XR_IPS: fmt_pm(b, len, e->f.ips.mean, e->f.ips.sd, 1); break;
    case XR_WAIT: fmt_pm(b, len, 100 * e->f.wait_share, NAN, 1); break;
    case XR_THREADS: count_text(b, len, r->threads_used); break;
    case XR_WORKERS: count_text(b, len, r->exec.loader_workers); break;
    case XR_RSS: fmt_pm(b, len, r->peak_rss_kib >= 0 ? r->peak_rss_kib / 1024.0 : NAN, NAN, 1); break;
    case XR_SPEED_T: speedup_by(e, ref, 1, b, d, len); break;
    case XR_DIST_T: speedup_by(e, ref, 1, d, b, len); break;
    case XR_SPEED_I: speedup_by(e, ref, 0, b, d, len); break;
    default: speedup_by(e, ref, 0, d, b, len); break;
    }
}

static void exec_row(const char *label, const Entry *e, size_t n, size_t from, int what)
{
    char b[128];

    printf("  %-22.22s", label);
    for (size_t i = from; i < n && i < from + COLS; i++) {
        int last = i + 1 == n || i + 1 == from + COLS;
        if (what == XR_NAME) {
            cell_cut(e[i].name, last, 1);
            continue;
        }
        exec_cell(&e[i], &e[0], what, b, sizeof b);
        cell(b, last);
    }
    printf("\n");
}

/* A counter of one run: the record's sum over its runs, divided by them. */
static void counter_cell(const RunRecord *r, const RecordCounter *like, char *b, size_t len)
{
    const RecordCounter *c = record_counter_find(r->exec_counters, r->n_exec_counters,
                                                 (int)like->role, like->name);

    if (!c)
        snprintf(b, len, "-");
    else if (c->status != RECORD_CTR_OK)
        snprintf(b, len, "n/a");
    else
        snprintf(b, len, "%.0f", c->value / (r->exec.runs > 0 ? r->exec.runs : 1));
}

/* A counter row's role, by ProcRole (a data-parallel job's ranks too). */
static const char *const proc_role_tag[] = {"main", "worker", "other", "rank"};
_Static_assert(sizeof proc_role_tag / sizeof *proc_role_tag == PROC_ROLES, "a tag per role");

/* One row per counter (role and event) that any record has. */
static void exec_counter_rows(const Entry *e, size_t n, size_t from)
{
    char label[96], b[64];

    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < e[k].r.n_exec_counters; j++) {
            const RecordCounter *c = &e[k].r.exec_counters[j];
            /* Its row was printed at its first appearance. */
            int seen = record_counter_find(e[k].r.exec_counters, j, (int)c->role, c->name) != NULL;
            for (size_t m = 0; m < k && !seen; m++)
                seen = record_counter_find(e[m].r.exec_counters, e[m].r.n_exec_counters,
                                           (int)c->role, c->name) != NULL;
            if (seen)
                continue;
            snprintf(label, sizeof label, "%s %s%s%s%s", (unsigned)c->role < PROC_ROLES ? proc_role_tag[c->role] : "?", c->name,
                     c->unit[0] ? " [" : "", c->unit, c->unit[0] ? "]" : "");
            printf("  %-22.22s", label);
            for (size_t i = from; i < n && i < from + COLS; i++) {
                counter_cell(&e[i].r, c, b, sizeof b);
                cell(b, i + 1 == n || i + 1 == from + COLS);
            }
            printf("\n");
        }
}

/* Exec records side by side: wall time (mean ± σ over the runs, as
 * hyperfine), images/s, data wait, the knobs the hook saw, counters per
 * run by role, speedups by time and by images/s with Welch's test. */
static void print_compare_exec(const Entry *e, size_t n)
{
    static const char *labels[XR_ROWS] = {
        "", "Command", "Exit", "Wall time [s]", "Throughput [img/s]", "Data wait [%]",
        "Torch threads", "DataLoader workers", "Peak memory [MiB]", "Speedup (time)",
        "Distinguishable", "Speedup (img/s)", "Distinguishable"};
    int ips = 1;

    for (size_t i = 0; i < n; i++)
        ips &= isfinite(e[i].f.ips.mean);
    printf("\n Comparison of %zu commands (mean ± σ over the runs; speedups over %s; counters "
           "per run):\n", n, e[0].name);
    for (size_t from = 0; from < n; from += COLS) {
        if (from)
            printf("\n");
        for (int w = 0; w < XR_ROWS; w++)
            if (ips || w < XR_SPEED_I)
                exec_row(labels[w], e, n, from, w);
        exec_counter_rows(e, n, from);
    }
    printf("\n");
    for (size_t i = 1; i < n; i++) {
        char sp[96], d[96];
        speedup_by(&e[i], &e[0], 1, sp, d, sizeof sp);
        printf("  %s is %s times as fast as %s by wall time; distinguishable: %s\n", e[i].name,
               sp, e[0].name, d);
        if (!ips)
            continue;
        speedup_by(&e[i], &e[0], 0, sp, d, sizeof sp);
        printf("  %s is %s times as fast as %s by images/s; distinguishable: %s\n", e[i].name,
               sp, e[0].name, d);
    }
}

/* 1 when every record is an exec record. */
static int all_exec(const Entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!e[i].r.have_exec)
            return 0;
    return 1;
}

static void print_compare(const Entry *e, size_t n)
{
    static const char *labels[] = {
        "", "Configuration", "Wall time [s]", "Throughput [img/s]", "Model [GFLOP/s]",
        "MFU [%]", "Executed [%]", "CPU user+sys [s]", "Test accuracy", "Final training loss", "Data wait [%]",
        "Peak memory [MiB]", "Speedup", "Distinguishable"};

    printf("\n Comparison of %zu runs (speedup: images/s over %s; mean ± σ over repeats):\n", n,
           e[0].name);
    for (size_t from = 0; from < n; from += COLS) {
        if (from)
            printf("\n");
        for (int w = 0; w < (int)(sizeof labels / sizeof *labels); w++) {
            row(labels[w], e, n, from, &e[0], w);
            if (w == 1 && long_label(e, n, from))
                row("", e, n, from, &e[0], 14);
        }
    }
    printf("\n");
    for (size_t i = 1; i < n; i++) {
        char sp[96], d[96];
        speedup(&e[i], &e[0], sp, d, sizeof sp);
        printf("  %s is %s times as fast as %s; distinguishable: %s\n", e[i].name, sp,
               e[0].name, d);
    }
}

/* --export: the records read, written again in the format of the name's
 * extension (one record as a run, several as a sweep). */
static int export_again(const Options *o, const Entry *e, size_t n)
{
    const RunRecord **recs = malloc(n * sizeof(const RunRecord *));
    char err[512];
    int rc;

    if (!recs) {
        fprintf(stderr, "cnntop: --export: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        recs[i] = &e[i].r;
    rc = n == 1 ? record_export(recs[0], o->export_path, o->force, err, sizeof err)
                : record_export_sweep(recs, n, o->export_path, o->force, err, sizeof err);
    free(recs);
    if (rc != 0)
        fprintf(stderr, "cnntop: --export: %s\n", err);
    else
        fprintf(stderr, "cnntop: the record%s written to %s\n", n == 1 ? "" : "s", o->export_path);
    return rc;
}

int report_main(const Options *o)
{
    size_t n;
    int rc = EXIT_OK;
    Entry *e = load_all(o, &n);

    if (!e)
        return EXIT_FAIL;
    if (n == 1 && e[0].r.have_exec)
        exec_summary_print(stdout, &e[0].r); /* as `exec` printed it */
    else if (n == 1)
        summary_print(stdout, &e[0].r); /* as `run` printed it */
    else if (all_exec(e, n))
        print_compare_exec(e, n);
    else
        print_compare(e, n);
    fflush(stdout);
    if (o->export_path && export_again(o, e, n) != 0)
        rc = EXIT_FAIL;
    for (size_t i = 0; i < n; i++)
        record_done(&e[i].r);
    free(e);
    return rc;
}

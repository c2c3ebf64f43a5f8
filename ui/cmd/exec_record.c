/*
 * exec_record.c: the record of a `cnntop exec` run (exec.h), in the
 * schema `cnntop report` reads (cnntop/record.h): the command profiled,
 * how it ended, its wall time, peak RSS, the counters per process role,
 * and the Python hook's images/s and data wait when it reported.  What
 * belongs to cnntop's own training (config, data, train) does not apply
 * and is written as null (have_train 0), never as defaults or zeros.
 */
#include <math.h>
#include <stdio.h>

#include "cmd/exec.h"
#include "cnntop/machine.h"

/* The tree's counters, role by role, into r->exec_counters. */
static int fill_counters(RunRecord *r, ProcTree *t)
{
    CounterReading cr[CTR_MAX_EVENTS];

    for (int role = 0; role < PROC_ROLES; role++) {
        if (!proctree_role_procs(t, (ProcRole)role))
            continue;
        int n = proctree_read(t, (ProcRole)role, cr, CTR_MAX_EVENTS);
        for (int i = 0; i < n; i++) {
            RecordCounter c;
            record_counter_from(&c, &cr[i], role);
            if (record_add_exec_counter(r, &c) != 0)
                return -1;
        }
    }
    return 0;
}

int exec_record_fill(RunRecord *r, ProcTree *t, const ExecResult *res, int argc, char **argv)
{
    HookFigures fig = {0};

    r->have_train = 0;
    r->threads_used = 0;
    machine_info(&r->machine);
    if (record_set_command(r, argc, argv) != 0 || record_set_exec_command(r, res->argv) != 0)
        return -1;
    r->exec.status = res->signal ? -1 : res->status;
    r->exec.signal = res->signal;
    r->exec.wall = res->wall;
    r->exit_code = res->signal ? 128 + res->signal : res->status;
    r->peak_rss_kib = proctree_peak_rss_kib(t) > 0 ? proctree_peak_rss_kib(t) : -1;
    if (res->hook) {
        hookfeed_figures(&res->hook->feed, &fig);
        if (fig.ok) {
            r->exec.images_per_s = fig.images_per_s;
            r->exec.data_wait_share = fig.data_wait_share;
            r->exec.batches = fig.batches;
        }
    }
    return fill_counters(r, t);
}

/* A figure, or n/a when it is unknown. */
static void print_num(FILE *f, const char *what, double v, int decimals, const char *unit,
                      const char *na)
{
    if (isnan(v))
        fprintf(f, "  %-22sn/a: %s\n", what, na);
    else
        fprintf(f, "  %-22s%.*f%s\n", what, decimals, v, unit);
}

static const char *const proc_role_noun[] = {"main process", "data-loader workers",
                                             "other children"};

void exec_record_print(FILE *f, const RunRecord *r, const char *what)
{
    const RecordExec *x = &r->exec;

    fprintf(f, "\n %s of cnntop exec: %s (%s, cnntop %s):\n", what, x->command ? x->command : "?",
            r->date, r->version);
    if (x->signal)
        fprintf(f, "  %-22skilled by signal %d\n", "Exit:", x->signal);
    else
        fprintf(f, "  %-22sstatus %d\n", "Exit:", x->status);
    print_num(f, "Wall time:", x->wall, 3, " s", "not recorded");
    print_num(f, "Images/s:", x->images_per_s, 1, " (the Python hook's DataLoader count)",
              "no DataLoader figures from the hook");
    print_num(f, "Data wait:", 100 * x->data_wait_share, 1, "% of the time",
              "no DataLoader figures from the hook");
    print_num(f, "Peak RSS:", r->peak_rss_kib >= 0 ? r->peak_rss_kib / 1024.0 : NAN, 1, " MiB",
              "unknown");
    for (int role = 0; role < PROC_ROLES; role++) {
        int head = 0;
        for (size_t i = 0; i < r->n_exec_counters; i++) {
            const RecordCounter *c = &r->exec_counters[i];
            if ((int)c->role != role)
                continue;
            if (!head++)
                fprintf(f, "\n Counters, %s:\n", proc_role_noun[role]);
            if (c->status == RECORD_CTR_OK)
                fprintf(f, "  %20.2f %-5s %-24s (counted %.0f%%)\n", c->value, c->unit, c->name,
                        100 * c->scaled);
            else
                fprintf(f, "  %20s %-5s %-24s %s\n",
                        c->status == RECORD_CTR_UNAVAILABLE ? "<not supported>" : "<not counted>",
                        "", c->name, c->reason);
        }
    }
}

int exec_export_check(const char *path, int force, char *err, size_t len)
{
    ExportFormat fmt;

    if (export_check(path, force, err, len) != 0)
        return -1;
    if (export_format(path, &fmt, err, len) == 0 && fmt != EXPORT_JSON) {
        snprintf(err, len, "%s: a command's record is written as JSON only (.json): the CSV and "
                 "Markdown exports describe cnntop's own training", path);
        return -1;
    }
    return 0;
}

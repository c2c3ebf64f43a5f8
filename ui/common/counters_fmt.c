/*
 * counters_fmt.c: the perf-stat-like counters block (see counters_fmt.h).
 *
 * Layout of an event line: the value right-aligned in 18 columns (or
 * "<not supported>" / "<not counted>"), the unit, the event name in 26
 * columns, then either "# derived figure" and "(scaled from N%)" for a
 * counted event, or the reason for one that was not.  Numbers that could
 * not be had are never printed as 0.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "common/counters_fmt.h"

static const char *const role_titles[CN_ROLES] = {
    [CN_ROLE_TRAIN] = "compute (trainer threads)",
    [CN_ROLE_LOAD] = "loader threads",
};

void counters_fmt_number(char *buf, size_t len, double v, int decimals)
{
    char digits[64], out[96];
    size_t o = 0;

    if (!isfinite(v)) {
        snprintf(buf, len, "%s", "n/a");
        return;
    }
    snprintf(digits, sizeof digits, "%.*f", decimals, fabs(v));
    const char *dot = strchr(digits, '.');
    size_t ilen = dot ? (size_t)(dot - digits) : strlen(digits);
    if (v < 0 && strspn(digits, "0.") != strlen(digits))
        out[o++] = '-';
    for (size_t i = 0; i < ilen && o < sizeof out - 2; i++) {
        out[o++] = digits[i];
        if ((ilen - i - 1) % 3 == 0 && i + 1 < ilen)
            out[o++] = ',';
    }
    out[o] = '\0';
    snprintf(buf, len, "%s%s", out, dot ? dot : "");
}

/* The first clause of a figure's why ("cycles not supported"), for a
 * short note beside an event whose partner is missing. */
static void short_why(char *buf, size_t len, const CounterFigure *fig)
{
    size_t n = strcspn(fig->why, ":");
    if (n >= len)
        n = len - 1;
    memcpy(buf, fig->why, n);
    buf[n] = '\0';
}

/* "# ..." after a counted event, from the derived figures; "" if none. */
static void derived_note(char *buf, size_t len, const CounterReading *r, const CounterDerived *d)
{
    char why[96];
    const CounterFigure *fig = NULL;
    const char *what = "";  /* printed after the figure */
    int decimals = 2;
    double mul = 1.0;

    buf[0] = '\0';
    switch (r->kind) {
    case CTR_KIND_TASK_CLOCK: fig = &d->cpu_util; what = " CPUs utilized"; decimals = 3; break;
    case CTR_KIND_INSTRUCTIONS: fig = &d->ipc; what = " insn per cycle"; break;
    case CTR_KIND_CACHE_MISSES: fig = &d->miss_rate; what = "% of all cache refs"; mul = 100; break;
    case CTR_KIND_BRANCH_MISSES: fig = &d->branch_miss_rate; what = "% of all branches"; mul = 100; break;
    case CTR_KIND_CTX_SWITCHES: fig = &d->cs_per_s; what = " /sec"; decimals = 1; break;
    case CTR_KIND_MIGRATIONS: fig = &d->migrations_per_s; what = " /sec"; decimals = 1; break;
    case CTR_KIND_PAGE_FAULTS: fig = &d->faults_per_s; what = " /sec"; decimals = 1; break;
    default:
        return;
    }
    if (fig->ok) {
        snprintf(buf, len, "# %8.*f%s", decimals, fig->value * mul, what);
        if (r->kind == CTR_KIND_CACHE_MISSES && d->mpki.ok) {
            size_t used = strlen(buf);
            snprintf(buf + used, len - used, ", %.2f per 1k insn", d->mpki.value);
        }
        return;
    }
    /* Say why only when the partner is what is missing; a missing wall
     * time (no thread yet) needs no note. */
    if (r->kind == CTR_KIND_BRANCH_MISSES || strstr(fig->why, "wall"))
        return;
    short_why(why, sizeof why, fig);
    snprintf(buf, len, "# n/a: %s", why);
}

static void print_event(FILE *f, const CounterReading *r, const CounterDerived *d)
{
    char num[64], note[160], line[1024]; /* always enough: see the widths */
    int clock = r->kind == CTR_KIND_TASK_CLOCK || r->kind == CTR_KIND_CPU_CLOCK;

    if (r->status != CTR_OK) {
        fprintf(f, "  %18s      %-26s %s\n",
                r->status == CTR_NOT_COUNTED ? "<not counted>" : "<not supported>", r->name,
                r->reason);
        return;
    }
    if (clock)
        counters_fmt_number(num, sizeof num, r->value / 1e6, 2);
    else
        counters_fmt_number(num, sizeof num, r->value, 0);
    derived_note(note, sizeof note, r, d);
    int len = snprintf(line, sizeof line, "  %18s %-4s %-26s %-34s", num, clock ? "msec" : "",
                       r->name, note);
    if (len > 0 && r->fraction < 0.9995)
        len += snprintf(line + len, len < (int)sizeof line ? sizeof line - (size_t)len : 0,
                        " (scaled from %.0f%%)", 100 * r->fraction);
    if (len > 0 && r->reason[0])
        snprintf(line + len, len < (int)sizeof line ? sizeof line - (size_t)len : 0, " [%s]",
                 r->reason);
    /* No trailing blanks when there is no note. */
    size_t end = strlen(line);
    while (end && line[end - 1] == ' ')
        line[--end] = '\0';
    fputs(line, f);
    fputc('\n', f);
}

static void print_sched(FILE *f, const CounterSched *s)
{
    char cs[64];

    if (!s->available) {
        fprintf(f, "  scheduler: n/a: %s\n", s->reason);
        return;
    }
    counters_fmt_number(cs, sizeof cs, s->cs_per_s, 0);
    fprintf(f, "  scheduler: ");
    if (s->have_wait)
        fprintf(f, "run-queue wait %.1f%% of thread time, ", 100 * s->wait_share);
    fprintf(f, "%s ctx switches/s (%llu voluntary, %llu involuntary)", cs,
            (unsigned long long)s->vol_cs, (unsigned long long)s->invol_cs);
    if (s->oversubscribed)
        fprintf(f, ", oversubscribed: threads waited for a CPU more than %.0f%% of the time",
                100 * CTR_OVERSUB_WAIT);
    fputc('\n', f);
    if (!s->have_wait && s->reason[0])
        fprintf(f, "  scheduler: %s\n", s->reason);
}

const char *counters_fmt_role_title(ThreadRole role)
{
    return ((int)role >= 0 && role < CN_ROLES) ? role_titles[role] : "?";
}

void counters_fmt_role(FILE *f, ThreadRole role, const CounterReading *r, int n, double wall_ns,
                       const CounterSched *s)
{
    counters_fmt_block(f, counters_fmt_role_title(role), r, n, wall_ns, s);
}

void counters_fmt_block(FILE *f, const char *title, const CounterReading *r, int n,
                        double wall_ns, const CounterSched *s)
{
    CounterDerived d;

    counters_derive(r, n, wall_ns, &d);
    if (s)
        fprintf(f, " Counters, %s: %d thread%s over %.2f s\n", title, s->threads,
                fmt_plural(s->threads), wall_ns / 1e9);
    else
        fprintf(f, " Counters, %s: over %.2f s\n", title, wall_ns / 1e9);
    for (int i = 0; i < n; i++)
        print_event(f, &r[i], &d);
    if (s)
        print_sched(f, s);
}

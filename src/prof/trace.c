/*
 * trace.c: the trace-event ring and its JSON (see trace.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cnntop/err.h"
#include "util/err.h"
#include "cnntop/fileio.h"
#include "prof/threadreg.h"
#include "prof/profile.h"
#include "prof/trace.h"
#include "cnntop/version.h"

Trace *trace_new(void)
{
    Trace *t = calloc(1, sizeof *t);

    if (!t)
        return NULL;
    t->ev = calloc(TRACE_CAP, sizeof *t->ev);
    if (!t->ev) {
        free(t);
        return NULL;
    }
    atomic_init(&t->next, 0);
    atomic_init(&t->nth, 0);
    t->origin = timer_now();
    return t;
}

void trace_free(Trace *t)
{
    if (t) {
        free(t->ev);
        free(t);
    }
}

void trace_add(Trace *t, const char *cat, const char *name, double t0, double t1, long arg)
{
    static _Thread_local int tid;

    if (!tid)
        tid = threadreg_gettid();
    long i = atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed);
    TraceEvent *e = &t->ev[i % TRACE_CAP];
    e->name = name;
    e->cat = cat;
    e->t0 = t0;
    e->t1 = t1;
    e->tid = tid;
    e->arg = arg;
}

void profile_trace(Profile *p, ProfOp op, double t0, double t1)
{
    trace_add(p->trace, "layer", profile_name(op), t0, t1, -1);
}

void trace_thread(Trace *t, const char *name)
{
    int i = atomic_fetch_add(&t->nth, 1);

    if (i < TRACE_THREADS) {
        t->th[i].tid = threadreg_gettid();
        snprintf(t->th[i].name, sizeof t->th[i].name, "%s", name);
    }
}

/* Appends to a growing buffer; returns -1 when out of memory. */
typedef struct Buf {
    char *p;
    size_t len, cap;
} Buf;

static int buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int buf_printf(Buf *b, const char *fmt, ...)
{
    va_list ap;

    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0)
            return -1;
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return 0;
        }
        size_t cap = b->cap * 2 + (size_t)n + 1024;
        char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
}

int trace_write(Trace *t, const char *path, char *err, size_t errlen)
{
    Buf b = {.p = malloc(1 << 20), .len = 0, .cap = 1 << 20};
    long n = atomic_load(&t->next), first = n > TRACE_CAP ? n - TRACE_CAP : 0;
    int pid = (int)getpid(), nth = atomic_load(&t->nth), rc = 0;

    if (!b.p)
        return cn_fail(err, errlen, -CN_ENOMEM, "%s: out of memory", path);
    rc |= buf_printf(&b, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"cnntop %s\","
                         "\"events\":%ld,\"dropped\":%ld},\n\"traceEvents\":[\n",
                     CNNTOP_VERSION, n - first, first);
    rc |= buf_printf(&b, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                         "\"args\":{\"name\":\"cnntop\"}}", pid, pid);
    for (int i = 0; i < nth && i < TRACE_THREADS; i++)
        rc |= buf_printf(&b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                             "\"args\":{\"name\":\"%s\"}}", pid, t->th[i].tid, t->th[i].name);
    for (long i = first; i < n && rc == 0; i++) {
        const TraceEvent *e = &t->ev[i % TRACE_CAP];
        if (!e->name)
            continue;
        rc |= buf_printf(&b, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,"
                             "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f",
                         e->name, e->cat, pid, e->tid, (e->t0 - t->origin) * 1e6,
                         (e->t1 - e->t0) * 1e6);
        if (e->arg >= 0)
            rc |= buf_printf(&b, ",\"args\":{\"%s\":%ld}",
                             !strcmp(e->cat, "loader") ? "images" : "step", e->arg);
        rc |= buf_printf(&b, "}");
    }
    rc |= buf_printf(&b, "\n]}\n");
    if (rc != 0) {
        free(b.p);
        return cn_fail(err, errlen, -CN_ENOMEM, "%s: out of memory", path);
    }
    rc = fileio_write_atomic(path, b.p, b.len, err, errlen);
    free(b.p);
    return rc;
}

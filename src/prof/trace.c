/*
 * trace.c: the trace-event ring and its JSON (see trace.h).  The JSON is
 * made whole in memory (util/textbuf), then written to the file atomically.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cnntop/counters.h"
#include "cnntop/err.h"
#include "cnntop/fileio.h"
#include "cnntop/version.h"
#include "prof/timer.h"
#include "prof/trace.h"
#include "util/err.h"
#include "util/textbuf.h"

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
    int tid = counters_gettid(); /* cached per thread */
    long i = atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed);
    TraceEvent *e = &t->ev[i % TRACE_CAP];
    e->name = name;
    e->cat = cat;
    e->t0 = t0;
    e->t1 = t1;
    e->tid = tid;
    e->arg = arg;
}

void trace_thread(Trace *t, const char *name)
{
    int i = atomic_fetch_add(&t->nth, 1);

    if (i < TRACE_THREADS) {
        t->th[i].tid = counters_gettid();
        snprintf(t->th[i].name, sizeof t->th[i].name, "%s", name);
    }
}

/* The ring as trace-event JSON, appended to b. */
static void trace_json(const Trace *t, TextBuf *b)
{
    long n = atomic_load(&t->next), first = n > TRACE_CAP ? n - TRACE_CAP : 0;
    int pid = (int)getpid(), nth = atomic_load(&t->nth);

    textbuf_printf(b, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"cnntop %s\","
                      "\"events\":%ld,\"dropped\":%ld},\n\"traceEvents\":[\n",
                   CNNTOP_VERSION, n - first, first);
    textbuf_printf(b, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                      "\"args\":{\"name\":\"cnntop\"}}", pid, pid);
    for (int i = 0; i < nth && i < TRACE_THREADS; i++)
        textbuf_printf(b, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                          "\"args\":{\"name\":\"%s\"}}", pid, t->th[i].tid, t->th[i].name);
    for (long i = first; i < n && !b->failed; i++) {
        const TraceEvent *e = &t->ev[i % TRACE_CAP];
        if (!e->name)
            continue;
        textbuf_printf(b, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,"
                          "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f",
                       e->name, e->cat, pid, e->tid, (e->t0 - t->origin) * 1e6,
                       (e->t1 - e->t0) * 1e6);
        if (e->arg >= 0)
            textbuf_printf(b, ",\"args\":{\"%s\":%ld}",
                           !strcmp(e->cat, "loader") ? "images" : "step", e->arg);
        textbuf_putc(b, '}');
    }
    textbuf_printf(b, "%s", "\n]}\n");
}

int trace_write(Trace *t, const char *path, char *err, size_t errlen)
{
    TextBuf b = {0};
    char *text;
    size_t len;

    trace_json(t, &b);
    if (textbuf_finish(&b, &text, &len) != 0)
        return cn_fail(err, errlen, -CN_ENOMEM, "%s: out of memory", path);
    int rc = fileio_write_atomic(path, text, len, err, errlen);
    free(text);
    return rc;
}

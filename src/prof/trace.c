/*
 * trace.c: the trace-event ring and its JSON (see trace.h).  The JSON is
 * written into memory (open_memstream), then to the file atomically.
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

/* The ring as trace-event JSON into f; stream errors are f's (ferror). */
static void trace_json(const Trace *t, FILE *f)
{
    long n = atomic_load(&t->next), first = n > TRACE_CAP ? n - TRACE_CAP : 0;
    int pid = (int)getpid(), nth = atomic_load(&t->nth);

    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"cnntop %s\","
               "\"events\":%ld,\"dropped\":%ld},\n\"traceEvents\":[\n",
            CNNTOP_VERSION, n - first, first);
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
               "\"args\":{\"name\":\"cnntop\"}}", pid, pid);
    for (int i = 0; i < nth && i < TRACE_THREADS; i++)
        fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                   "\"args\":{\"name\":\"%s\"}}", pid, t->th[i].tid, t->th[i].name);
    for (long i = first; i < n && !ferror(f); i++) {
        const TraceEvent *e = &t->ev[i % TRACE_CAP];
        if (!e->name)
            continue;
        fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,"
                   "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f",
                e->name, e->cat, pid, e->tid, (e->t0 - t->origin) * 1e6, (e->t1 - e->t0) * 1e6);
        if (e->arg >= 0)
            fprintf(f, ",\"args\":{\"%s\":%ld}", !strcmp(e->cat, "loader") ? "images" : "step",
                    e->arg);
        fputc('}', f);
    }
    fputs("\n]}\n", f);
}

int trace_write(Trace *t, const char *path, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    if (!f)
        return cn_fail(err, errlen, -CN_ENOMEM, "%s: out of memory", path);
    trace_json(t, f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(buf);
        return cn_fail(err, errlen, -CN_ENOMEM, "%s: out of memory", path);
    }
    int rc = fileio_write_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

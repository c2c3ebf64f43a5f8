/*
 * hookfeed.c: summing the Python hook's JSON lines (cnntop/hookfeed.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cnntop/hookfeed.h"
#include "cnntop/json.h"

void hookfeed_init(HookFeed *f)
{
    memset(f, 0, sizeof *f);
    f->threads = f->loader_workers = -1;
}

/* A count the hook said, or -1 when it is missing or not a count. */
static int count_of(const JsonValue *v)
{
    long long n = json_as_int(v, -1);
    return n >= 0 && n <= 1 << 20 ? (int)n : -1;
}

static int add_workers(HookFeed *f, const JsonValue *pids)
{
    int added = 0;

    for (size_t i = 0; i < json_count(pids); i++) {
        int pid = (int)json_as_int(json_at(pids, i), 0), known = 0;
        for (int k = 0; k < f->nworkers; k++)
            known |= f->workers[k] == pid;
        if (pid > 0 && !known && f->nworkers < HOOK_MAX_WORKERS) {
            f->workers[f->nworkers++] = pid;
            added++;
        }
    }
    return added;
}

static void add_batch(HookFeed *f, const JsonValue *v)
{
    double n = json_as_number(json_get(v, "n"), 0.0);
    double wait = json_as_number(json_get(v, "wait"), 0.0);
    double t = json_as_number(json_get(v, "t"), 0.0);

    if (f->batches++ == 0) {
        f->first_samples = n;
        f->first_wait = wait;
        f->t_first = f->t_end = t;
        return;
    }
    f->samples += n;
    f->wait += wait;
    f->step += json_as_number(json_get(v, "step"), 0.0);
    if (t > f->t_end)
        f->t_end = t;
}

/* One whole line; returns the new workers in it. */
static int feed_line(HookFeed *f, const char *text, size_t len)
{
    JsonValue *v = NULL;
    int added = 0;

    if (len == 0)
        return 0;
    if (json_parse(text, len, &v, NULL, 0) != 0 || !json_is(v, JSON_OBJECT)) {
        f->bad++;
        json_free(v);
        return 0;
    }
    const char *ev = json_as_string(json_get(v, "ev"), "");
    if (!strcmp(ev, "hello")) {
        f->hello = 1;
        long long pid = json_as_int(json_get(v, "pid"), 0);
        f->pid = pid > 0 && pid <= INT_MAX ? (int)pid : 0;
        snprintf(f->torch, sizeof f->torch, "%s", json_as_string(json_get(v, "torch"), "?"));
    } else if (!strcmp(ev, "workers"))
        added = add_workers(f, json_get(v, "pids"));
    else if (!strcmp(ev, "config")) {
        f->threads = count_of(json_get(v, "threads"));
        f->loader_workers = count_of(json_get(v, "workers"));
    } else if (!strcmp(ev, "batch"))
        add_batch(f, v);
    else if (!strcmp(ev, "end")) {
        double t = json_as_number(json_get(v, "t"), 0.0);
        if (f->batches && t > f->t_end)
            f->t_end = t;
    } else
        f->bad++;
    json_free(v);
    return added;
}

int hookfeed_bytes(HookFeed *f, const char *data, size_t len)
{
    int added = 0;

    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        if (c == '\n') {
            if (!f->overflow)
                added += feed_line(f, f->line, f->len);
            f->len = 0;
            f->overflow = 0;
        } else if (f->len + 1 < sizeof f->line)
            f->line[f->len++] = c;
        else if (!f->overflow) {
            f->overflow = 1;
            f->bad++;
        }
    }
    return added;
}

void hookfeed_figures(const HookFeed *f, HookFigures *out)
{
    memset(out, 0, sizeof *out);
    out->hello = f->hello;
    out->batches = f->batches;
    out->first_wait = f->first_wait;
    out->images = f->samples;
    out->window = f->t_end - f->t_first;
    if (f->batches < 2 || out->window <= 0)
        return;
    out->ok = 1;
    out->images_per_s = f->samples / out->window;
    out->data_wait_share = f->wait / out->window;
    out->step_s = f->step / (double)(f->batches - 1);
}

/*
 * liveline.c: the live lines of a data-parallel job (cnntop/dist.h): what
 * rank 0 appends to the file CNNTOP_DIST_LIVE names while the job trains,
 * and the reader's check of each line (a line is input: anything out of
 * its range or not finite refuses the whole line).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/dist.h"

/* The steps and images a line may say, at most (the engine's limits are
 * lower). */
#define LIVE_MAX_COUNT 1e15

int dist_live_format(const DistLive *l, char *buf, size_t len)
{
    int n = snprintf(buf, len,
                     "%s step=%ld steps=%ld epoch=%d epochs=%d elapsed=%.6g images=%ld "
                     "loss=%.9g ips=%.6g comm=%.4f ranks=%d t=",
                     DIST_LIVE_TAG, l->step, l->steps, l->epoch, l->epochs, l->elapsed,
                     l->images, l->loss, l->ips, l->comm, l->ranks);

    for (int r = 0; r < l->ranks && n > 0 && (size_t)n < len; r++)
        n += snprintf(buf + n, len - (size_t)n, "%s%.6g", r ? "," : "", l->step_time[r]);
    if (n > 0 && (size_t)n + 1 < len) {
        buf[n++] = '\n';
        buf[n] = '\0';
        return n;
    }
    return -1;
}

/* "NAME=" at *p, then a finite number in [lo, hi] into *v; *p past it. */
static int field(const char **p, const char *name, double lo, double hi, double *v)
{
    size_t n = strlen(name);
    char *end;

    if (strncmp(*p, name, n) != 0 || (*p)[n] != '=')
        return -1;
    const char *s = *p + n + 1;
    if (*s == ' ' || *s == '\0' || *s == '\t' || *s == '\n')
        return -1;
    errno = 0;
    *v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(*v) || *v < lo || *v > hi)
        return -1;
    if (*end != ' ' && *end != '\0' && *end != '\n')
        return -1;
    *p = *end == ' ' ? end + 1 : end;
    return 0;
}

/* The whole-number fields, each checked to be whole. */
static int whole(const char **p, const char *name, double lo, double hi, double *v)
{
    return field(p, name, lo, hi, v) == 0 && *v == floor(*v) ? 0 : -1;
}

/* The ranks' step times after "t=": exactly n of them, comma-separated. */
static int times(const char *s, int n, double *t)
{
    char *end;

    if (strncmp(s, "t=", 2) != 0)
        return -1;
    s += 2;
    for (int r = 0; r < n; r++) {
        if (*s == ' ' || *s == '\0' || *s == '\n')
            return -1;
        errno = 0;
        t[r] = strtod(s, &end);
        if (end == s || errno == ERANGE || !isfinite(t[r]) || t[r] < 0 || t[r] > 3600)
            return -1;
        if (*end != (r + 1 < n ? ',' : *end) || (r + 1 == n && *end == ','))
            return -1;
        s = r + 1 < n ? end + 1 : end;
    }
    return *s == '\0' || (*s == '\n' && s[1] == '\0') ? 0 : -1;
}

int dist_live_parse(const char *line, DistLive *out)
{
    size_t tag = strlen(DIST_LIVE_TAG);
    double v[10];
    const char *p = line;
    DistLive l;

    if (!line || strlen(line) >= DIST_LIVE_LINE || strncmp(p, DIST_LIVE_TAG, tag) != 0 ||
        p[tag] != ' ')
        return -1;
    p += tag + 1;
    memset(&l, 0, sizeof l);
    if (whole(&p, "step", 1, LIVE_MAX_COUNT, &v[0]) || whole(&p, "steps", 1, LIVE_MAX_COUNT, &v[1]) ||
        whole(&p, "epoch", 0, 1e9, &v[2]) || whole(&p, "epochs", 1, 1e9, &v[3]) ||
        field(&p, "elapsed", 0, 1e9, &v[4]) || whole(&p, "images", 0, LIVE_MAX_COUNT, &v[5]) ||
        field(&p, "loss", 0, 1e6, &v[6]) || field(&p, "ips", 0, 1e12, &v[7]) ||
        field(&p, "comm", 0, 1, &v[8]) || whole(&p, "ranks", 1, DIST_LIVE_MAX_RANKS, &v[9]))
        return -1;
    if (v[0] > v[1] || v[2] >= v[3])
        return -1;
    l = (DistLive){.step = (long)v[0], .steps = (long)v[1], .epoch = (int)v[2],
                   .epochs = (int)v[3], .elapsed = v[4], .images = (long)v[5], .loss = v[6],
                   .ips = v[7], .comm = v[8], .ranks = (int)v[9]};
    if (times(p, l.ranks, l.step_time) != 0)
        return -1;
    *out = l;
    return 0;
}

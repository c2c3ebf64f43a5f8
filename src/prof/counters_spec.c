/*
 * counters_spec.c: the -e grammar, as perf's: "a,b" exactly those events,
 * "+a,b" the defaults and then those, nothing the defaults.  Pure.
 */
#include <string.h>

#include "prof/counters_spec.h"
#include "util/err.h"

/* Appends the comma-separated names of s to names[*n..max) (skipping names
 * already there); 0 or -CN_EINVAL. */
static int spec_add(const char *s, char (*names)[CTR_NAME_LEN], int *n, int max,
                    char *err, size_t errlen)
{
    const char *p = s;

    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t'))
            p++, len--;
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len == 0)
            return cn_fail(err, errlen, -CN_EINVAL, "events '%s': empty event name", s);
        if (len >= CTR_NAME_LEN)
            return cn_fail(err, errlen, -CN_EINVAL, "event '%.*s...': name longer than %d",
                           20, p, CTR_NAME_LEN - 1);
        int dup = 0;
        for (int i = 0; i < *n && !dup; i++)
            dup = strlen(names[i]) == len && memcmp(names[i], p, len) == 0;
        if (!dup) {
            if (*n >= max)
                return cn_fail(err, errlen, -CN_EINVAL, "events '%s': more than %d events", s,
                               max);
            memcpy(names[*n], p, len);
            names[*n][len] = '\0';
            (*n)++;
        }
        if (!end)
            return 0;
        p = end + 1;
    }
}

int counters_parse_spec(const char *spec, char (*names)[CTR_NAME_LEN], int max, char *err,
                        size_t errlen)
{
    int n = 0, r;
    int defaults = !spec || !*spec || *spec == '+';
    /* The names after the defaults: none, or the spec without its '+'. */
    const char *own = !spec || !*spec ? NULL : *spec == '+' ? spec + 1 : spec;

    if (defaults && (r = spec_add(CTR_DEFAULT_EVENTS, names, &n, max, err, errlen)) != 0)
        return r;
    if (own && (r = spec_add(own, names, &n, max, err, errlen)) != 0)
        return r;
    return n;
}

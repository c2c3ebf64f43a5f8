/*
 * counters_say.h: the counters files' one formatting helper.
 */
#ifndef CNNTOP_COUNTERS_SAY_H
#define CNNTOP_COUNTERS_SAY_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* snprintf into a fixed buffer (NULL or 0 length: nothing) where cutting a
 * long name or reason short is acceptable (vsnprintf keeps gcc's
 * truncation warning for the cases where it is not). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline void counters_say(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (!buf || !len)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

#endif

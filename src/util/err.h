/*
 * err.h: one-line error messages for the engine.
 *
 * Engine functions take (char *err, size_t errlen) and, on failure, write a
 * message that names the thing (a file, a setting, an event) and the
 * problem, then return a negative CN_E* code.  cn_fail() does both in one
 * statement: `return cn_fail(err, errlen, -CN_EIO, "%s: %s", path, strerror(errno));`
 */
#ifndef CNNTOP_ERR_H
#define CNNTOP_ERR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "cnntop/err.h"

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline int cn_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

#endif

/*
 * utf8.h: UTF-8 validation, for the JSON writer (which escapes what is not
 * valid) and parser (which refuses it).
 */
#ifndef CNNTOP_UTF8_H
#define CNNTOP_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if it is not one
 * (overlong forms, surrogates and code points above U+10FFFF are not). */
static inline size_t utf8_valid(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t need;
    unsigned cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        need = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        need = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        need = 4, cp = c & 0x07;
    else
        return 0;
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((need == 3 && cp < 0x800) || (need == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return need;
}

#endif

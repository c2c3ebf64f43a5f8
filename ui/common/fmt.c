/*
 * fmt.c: numbers and words as the front ends print them (see fmt.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"

char *fmt_si(char *buf, size_t len, double v)
{
    static const char prefix[] = {' ', 'k', 'M', 'G', 'T', 'P'};
    double a = fabs(v);
    int k = 0;

    if (!isfinite(v))
        return fmt_na(buf, len, NULL);
    /* Round first, so that 999.7 becomes "1.00k" rather than "1000". */
    while (k < 5 && a >= 999.5) {
        a /= 1000.0;
        k++;
    }
    const char *sign = v < 0 ? "-" : "";
    if (a == 0.0)
        snprintf(buf, len, "0");
    else if (a >= 99.95 || (k == 0 && a == floor(a)))
        snprintf(buf, len, "%s%.0f", sign, a);
    else if (a >= 9.995)
        snprintf(buf, len, "%s%.1f", sign, a);
    else
        snprintf(buf, len, "%s%.2f", sign, a);
    if (k) {
        size_t n = strlen(buf);
        if (n + 1 < len) {
            buf[n] = prefix[k];
            buf[n + 1] = '\0';
        }
    }
    return buf;
}

char *fmt_duration(char *buf, size_t len, double s)
{
    if (!isfinite(s) || s < 0) {
        snprintf(buf, len, "--:--");
        return buf;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
    return buf;
}

char *fmt_bytes(char *buf, size_t len, double bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int k = 0;

    if (!isfinite(bytes) || bytes < 0)
        return fmt_na(buf, len, NULL);
    while (k < 4 && bytes >= 1023.5) {
        bytes /= 1024.0;
        k++;
    }
    if (k == 0)
        snprintf(buf, len, "%.0f B", bytes);
    else
        snprintf(buf, len, bytes >= 99.95 ? "%.0f %s" : bytes >= 9.995 ? "%.1f %s" : "%.2f %s",
                 bytes, unit[k]);
    return buf;
}

char *fmt_na(char *buf, size_t len, const char *reason)
{
    if (reason && *reason)
        snprintf(buf, len, "n/a: %s", reason);
    else
        snprintf(buf, len, "n/a");
    return buf;
}

char *fmt_pm(char *buf, size_t len, double mean, double sd, int dec)
{
    if (!isfinite(mean))
        return fmt_na(buf, len, NULL);
    if (dec == FMT_PM_AUTO) {
        /* The mean to the decimal place of the spread's leading digit. */
        dec = !(sd > 0) || !isfinite(sd) || sd >= 1.0 ? 0 : (int)ceil(-log10(sd));
        if (dec > 4)
            dec = 4;
    }
    if (!isfinite(sd))
        snprintf(buf, len, "%.*f", dec, mean);
    else
        snprintf(buf, len, "%.*f \xc2\xb1 %.*f", dec, mean, dec, sd);
    return buf;
}

const char *fmt_plural(long n)
{
    return n == 1 ? "" : "s";
}

char *fmt_bar(char *buf, size_t len, double frac, int width)
{
    int inner = width - 2, fill;

    if (!isfinite(frac) || frac < 0)
        frac = 0;
    if (frac > 1)
        frac = 1;
    if (inner < 0)
        inner = 0;
    if ((size_t)width + 1 > len) {
        inner = len >= 3 ? (int)len - 3 : 0;
    }
    fill = (int)(frac * inner + 0.5);
    size_t n = 0;
    if (len < 3) {
        buf[0] = '\0';
        return buf;
    }
    buf[n++] = '[';
    for (int i = 0; i < inner; i++)
        buf[n++] = i < fill ? '#' : ' ';
    buf[n++] = ']';
    buf[n] = '\0';
    return buf;
}

int fmt_cols(const char *s)
{
    int n = 0;

    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80)
            n++;
    return n;
}

char *fmt_fit(char *buf, size_t len, const char *s, int cols)
{
    size_t i = 0, out = 0;
    int c = 0, total = fmt_cols(s);

    if (len == 0)
        return buf;
    if (cols <= 0) {
        buf[0] = '\0';
        return buf;
    }
    int keep = total > cols ? cols - 1 : cols;
    while (s[i] && c < keep) {
        size_t clen = 1;
        while (s[i + clen] && ((unsigned char)s[i + clen] & 0xC0) == 0x80)
            clen++;
        if (out + clen + 2 > len)
            break;
        memcpy(buf + out, s + i, clen);
        out += clen;
        i += clen;
        c++;
    }
    if (total > cols && out + 2 <= len)
        buf[out++] = '~';
    buf[out] = '\0';
    return buf;
}

/* Bytes of the code point starting at s. */
static size_t cp_len(const char *s)
{
    size_t n = 1;
    while (s[n] && ((unsigned char)s[n] & 0xC0) == 0x80)
        n++;
    return n;
}

char *fmt_fit_tail(char *buf, size_t len, const char *s, int cols)
{
    int total = fmt_cols(s);

    if (total <= cols || cols <= 1)
        return fmt_fit(buf, len, s, cols);
    /* Skip code points until cols - 1 columns are left, then on to the
     * next '/' when one is close, so that a path keeps whole names. */
    int skip = total - (cols - 1);
    const char *p = s;
    for (int c = 0; c < skip; c++)
        p += cp_len(p);
    const char *slash = strchr(p, '/');
    if (slash && fmt_cols(slash) >= (cols - 1) / 2)
        p = slash;
    snprintf(buf, len, "~%s", p);
    return buf;
}

size_t fmt_wrap(const char *s, int cols)
{
    size_t i = 0, brk = 0;
    int c = 0;

    while (s[i] && c < cols) {
        if (s[i] == ' ')
            brk = i;
        i += cp_len(s + i);
        c++;
    }
    if (!s[i] || s[i] == ' ' || brk == 0)
        return i;
    return brk;
}

char *fmt_initials(char *buf, size_t len, const char *list)
{
    size_t out = 0;
    int start = 1;

    for (const char *p = list; *p && out + 2 < len; p++) {
        if (*p == ',') {
            buf[out++] = ',';
            start = 1;
        } else if (start) {
            buf[out++] = *p;
            start = 0;
        }
    }
    buf[len ? (out < len ? out : len - 1) : 0] = '\0';
    return buf;
}

/*
 * fmt.h: numbers and words as the front ends print them.
 *
 * Pure functions, no curses, shared by the commands (ui/cmd) and the
 * dashboard (ui/tui): SI prefixes, durations, byte sizes, progress bars,
 * "mean ± sd", "n/a: <reason>", plural endings, and column-aware
 * truncation of UTF-8 text.  Every function that takes buf writes a
 * NUL-terminated string into it (of len bytes, len >= 1), truncating if
 * it must, and returns buf.
 */
#ifndef CNNTOP_COMMON_FMT_H
#define CNNTOP_COMMON_FMT_H

#include <stddef.h>

/* 1234 -> "1.23k", 0.5 -> "0.500", 12345678 -> "12.3M"; three significant
 * digits.  NaN or infinity -> "n/a". */
char *fmt_si(char *buf, size_t len, double v);

/* Seconds as "0:42", "12:03" or "1:02:03"; negative or not finite -> "--:--". */
char *fmt_duration(char *buf, size_t len, double s);

/* Bytes as "512 B", "93.8 MiB", "1.50 GiB". */
char *fmt_bytes(char *buf, size_t len, double bytes);

/* "n/a: reason" (reason may be NULL: just "n/a"). */
char *fmt_na(char *buf, size_t len, const char *reason);

/* FMT_PM_AUTO as fmt_pm's dec: the precision the spread deserves. */
#define FMT_PM_AUTO (-1)

/*
 * "1203 ± 31": mean and sd with dec decimals (FMT_PM_AUTO: to the decimal
 * of sd's leading digit, at most 4).  The one rule for what is missing:
 * a mean that is NaN or infinite -> "n/a"; an sd that is NaN or infinite
 * (no spread known: one run, too few steps) -> the mean alone.
 */
char *fmt_pm(char *buf, size_t len, double mean, double sd, int dec);

/* The plural ending of a count: "" for 1, "s" otherwise ("1 thread",
 * "2 threads").  A string constant, not a buffer. */
const char *fmt_plural(long n);

/* A bar of `width` columns (width >= 2): "[#####     ]" for frac 0.5, frac
 * clamped to 0..1. */
char *fmt_bar(char *buf, size_t len, double frac, int width);

/* Columns a UTF-8 string takes (each code point is one column: the
 * dashboard uses no wide glyphs). */
int fmt_cols(const char *s);

/* Copies at most `cols` columns of UTF-8 text s into buf; when s is longer,
 * the last column becomes '~'. */
char *fmt_fit(char *buf, size_t len, const char *s, int cols);

/* Like fmt_fit, but keeps the tail: "~/fashion-mnist" for a long path
 * (cut at a '/' where that keeps at least half the room). */
char *fmt_fit_tail(char *buf, size_t len, const char *s, int cols);

/* Bytes of s that make its first line when wrapped at `cols` columns:
 * up to the last space that fits, or cols code points when a word is
 * longer than the line.  The caller skips the space and calls again. */
size_t fmt_wrap(const char *s, int cols);

/* The first letter of each item of a comma list: "shift,rotate,elastic"
 * -> "s,r,e" (augment's names start with different letters). */
char *fmt_initials(char *buf, size_t len, const char *list);

#endif

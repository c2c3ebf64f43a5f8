/*
 * fuzz_pattern.c: libFuzzer target for --progress's patterns
 * (src/util/pattern_compile.c, pattern_match.c): whatever the pattern and
 * the text, compiling and matching never crash, never hang, never use
 * more than the program's size of memory, and keep their contracts.
 *
 * An input is a pattern, a newline, and a text (no newline: the text is
 * empty).  A pattern that is refused must come with a one-line message.
 * One that compiles is matched whole and in pieces (sizes taken from the
 * text), which must agree, the floor never passing the match's start; the
 * spans must lie in the text, group 1 inside the match.  And where glibc's
 * regcomp accepts the pattern too and the text has no NUL, the two must
 * agree on whether there is a match and where it starts (the leftmost
 * start is the same under Perl's and POSIX's rules; only the end may
 * differ).  glibc is asked only about short inputs, being slower, not
 * about patterns whose repetitions would exhaust its time or memory, and
 * not where it departs from POSIX on a text that a record cannot be
 * (glibc_fit).
 */
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnntop/pattern.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_pattern: contract broken: %s\n", what);
    abort();
}

/* The text fed in pieces of 1 to 8 bytes; the floor checked as it goes. */
static int scan_pieces(PatternScan *s, const char *t, size_t len, PatternSpan m[2],
                       size_t *max_floor)
{
    size_t at = 0;
    *max_floor = pattern_scan_floor(s);
    while (at < len) {
        size_t k = 1 + (unsigned char)t[at] % 8;
        k = k < len - at ? k : len - at;
        pattern_scan_feed(s, t + at, k);
        at += k;
        size_t f = pattern_scan_floor(s);
        if (f > pattern_scan_pos(s) || pattern_scan_pos(s) > at)
            fuzz_fail("floor past the position, or the position past the text");
        *max_floor = f > *max_floor ? f : *max_floor;
    }
    return pattern_scan_end(s, m);
}

static void check_spans(const PatternSpan m[2], size_t len)
{
    if (m[0].so > m[0].eo || m[0].eo > len)
        fuzz_fail("the match is not inside the text");
    if (m[1].so == PATTERN_NONE)
        return;
    if (m[1].so > m[1].eo || m[1].so < m[0].so || m[1].eo > m[0].eo)
        fuzz_fail("group 1 is not inside the match");
}

/* glibc's answer: 1 with *so, 0, or -1 when it refuses the pattern. */
static int glibc_match(const char *pat, const char *text, size_t *so)
{
    regex_t re;
    regmatch_t m[1];
    if (regcomp(&re, pat, REG_EXTENDED) != 0)
        return -1;
    int rc = regexec(&re, text, 1, m, 0) == 0;
    *so = rc ? (size_t)m[0].rm_so : 0;
    regfree(&re);
    return rc;
}

/* Whether glibc can be asked about pat and text in reasonable time, and
 * its answer is the one cnntop's records need.  regcomp writes x+ and
 * x{m,n} out in copies of x, and its closures of nested or stacked
 * repetitions ((x*){165}, x+{0,9}, (a||b){0,9}+, (a^^()*{,30})) take time
 * and memory exponential in their number: those are left out (a fuzzer's
 * 10 s timeout found each of these forms).  And glibc treats a '\n' inside
 * the text as a line end for ^ and $ in the middle of a pattern even without
 * REG_NEWLINE ("$.+" matches "a\nb" at 1, which POSIX and pattern.h do
 * not): --progress's records never hold a '\n', so those are left out. */
static int glibc_fit(const char *pat, const char *text, size_t len)
{
    size_t reps = 0, counts = 0;
    if (strlen(pat) > 64 || len > 256 || strlen(text) != len)
        return 0;
    for (const char *c = pat; *c; c++) {
        if (!strchr("*+?{", *c))
            continue;
        reps++;
        if (c[1] && strchr("*+?{", c[1]))
            return 0; /* stacked */
        if (*c != '{')
            continue;
        counts++;
        const char *d = c + 1;
        for (; *d && *d != '}'; d++)
            if (d[0] >= '0' && d[0] <= '9' && d[1] >= '0' && d[1] <= '9')
                return 0; /* a count of 10 or more */
        if (*d == '}' && d[1] && strchr("*+?{", d[1]))
            return 0; /* stacked after a count: x{0,9}+ */
    }
    if (reps > 3 || counts > 1)
        return 0;
    return !(memchr(text, '\n', len) && strpbrk(pat, "^$"));
}

static void against_glibc(const char *pat, const char *text, size_t len, int ours,
                          const PatternSpan m[2])
{
    size_t so;
    if (!glibc_fit(pat, text, len))
        return;
    int theirs = glibc_match(pat, text, &so);
    if (theirs < 0)
        return;
    if (theirs != ours)
        fuzz_fail("glibc and pattern_match disagree on whether there is a match");
    if (ours && so != m[0].so)
        fuzz_fail("glibc and pattern_match disagree on where the match starts");
}

/* The checks on a pattern that compiled. */
static void check_compiled(const Pattern *p, const char *pat, const char *text, size_t len)
{
    PatternSpan whole[2], piece[2];
    size_t floor1;
    int rc = pattern_match(p, text, len, whole);
    PatternScan *s = pattern_scan_new(p);
    if (rc < 0 || !s) { /* out of memory */
        pattern_scan_free(s);
        return;
    }
    if (scan_pieces(s, text, len, piece, &floor1) != rc)
        fuzz_fail("a text in pieces matches otherwise than whole");
    pattern_scan_free(s);
    if (rc && memcmp(piece, whole, sizeof whole) != 0)
        fuzz_fail("a text in pieces gives other spans than whole");
    if (rc && floor1 > whole[0].so)
        fuzz_fail("the floor passed the match's start");
    if (rc)
        check_spans(whole, len);
    against_glibc(pat, text, len, rc, whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t plen = nl ? (size_t)(nl - data) : size, len = nl ? size - plen - 1 : 0;
    char *pat = malloc(plen + 1), *text = malloc(len + 1), err[256] = "";
    Pattern *p = NULL;
    if (pat && text) {
        memcpy(pat, data, plen);
        pat[plen] = '\0';
        memcpy(text, nl ? nl + 1 : data, len);
        text[len] = '\0';
        if (pattern_compile(pat, &p, err, sizeof err) == 0)
            check_compiled(p, pat, text, len);
        else if (p || !err[0] || strchr(err, '\n'))
            fuzz_fail("a refusal without a one-line message, or with a pattern");
    }
    pattern_free(p);
    free(pat);
    free(text);
    return 0;
}

/*
 * test_pattern.c: --progress's matcher (cnntop/pattern.h).  It agrees with
 * glibc's regexec (REG_EXTENDED, the C locale) on a table of ordinary
 * patterns and texts, whole match and group 1; a text fed in pieces gives
 * what it gives whole, and the floor never passes the match's start;
 * back-references, programs over the size limit, deep nesting and bad
 * syntax are refused with a one-line message; and the patterns that hung
 * or crashed regcomp/regexec (issue 34) are refused or run on 1 MB texts
 * (ctest's TIMEOUT is the hang detector; no timing is asserted).
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cnntop/err.h"
#include "cnntop/pattern.h"

/* Ordinary patterns, where POSIX's longest and Perl's first match agree. */
static const char *const patterns[] = {
    "([0-9.]+)it/s", "loss ([0-9.]+)", "epoch [0-9]+: ([0-9.]+) img/s", "rate ([0-9.]+) img/s",
    "loss [^ ]+", "^step ([0-9]+)$", "[[:digit:]]+(\\.[[:digit:]]+)?", "\\<acc\\>=([0-9]*)",
    "a|b|c", "(ab|cd)+e", "x{2,3}y", "x{2}", "x{,2}y", "x{2,}y", "x{0}y", "[^[:space:]]+",
    "[]a]+", "[a-]+", "[--/]+", "\\.", "a\\|b", "(a)?b", "()", "", "$", "^", "^$",
    "\\bfoo\\b", "\\Bo", "\\w+", "\\W", "\\s+", "\\S+", "a.c", "(foo|foobar)x",
    "[[:upper:]][[:lower:]]*", "[[:xdigit:]]+", "[[:punct:]]", "[[:alnum:]_]+", "a)",
    "it/s$", "\\`a", "b\\'", "([0-9]+)/([0-9]+)", "(x|y)(z)", "[^a-z0-9 ]", "[[:blank:]]+",
    "[[:cntrl:]]", "[[:print:]]+", "[[:graph:]]+", "[[=a=]b]+", "[[.-.]a]+", "(a|b)*c",
    "[0-9]+(it|s)/s", "((a)b)c", "a+?", "a**b", "x{1}{2}", "(^a|b$)", "Loss: (-?[0-9.eE+-]+)",
};

static const char *const texts[] = {
    "", "a", "b", "c", "ab", "abc", "xxcxb", "ababcde", "xy", "xxy", "xxxy", "xxxxy", "y",
    " 50%|#####     | 5/10 [00:01<00:01, 3.52it/s]", "epoch 1 loss 0.25 acc 0.9", "loss 1.5e-1",
    "epoch 12: 345.6 img/s", "step 42", "step 42 ", "1.2.3", "acc=97 acc2=3 xacc=1",
    "foo bar", "foobar", "foobarx", "foox", "boo", "a.b", "a|b", "a-]", "Hello World",
    "0x1F,dead", "tab\there", "\x01\x7f", "]]]a", "--./", "abc)", "a)", "ba", "aaab",
    "Loss: -1.5e+3 ok", "x/y 3/4", "rate 12.5 img/s", "xz yz", "\xc3\xa9t\xc3\xa9 ok",
};

/* glibc's answer: 1 with m[0..1], 0 no match, -1 regcomp refused. */
static int glibc_match(const char *pat, const char *text, PatternSpan m[2])
{
    regex_t re;
    regmatch_t g[2];
    if (regcomp(&re, pat, REG_EXTENDED) != 0)
        return -1;
    int rc = regexec(&re, text, 2, g, 0) == 0;
    for (int i = 0; i < 2 && rc; i++)
        m[i] = g[i].rm_so < 0 || (i == 1 && re.re_nsub < 1)
                   ? (PatternSpan){PATTERN_NONE, PATTERN_NONE}
                   : (PatternSpan){(size_t)g[i].rm_so, (size_t)g[i].rm_eo};
    regfree(&re);
    return rc;
}

/* Feeds text in pieces of k bytes, checking the floor as it goes. */
static int scan_pieces(PatternScan *s, const char *text, size_t len, size_t k, PatternSpan m[2],
                       size_t *max_floor)
{
    pattern_scan_reset(s);
    *max_floor = pattern_scan_floor(s);
    for (size_t at = 0; at < len; at += k) {
        pattern_scan_feed(s, text + at, at + k < len ? k : len - at);
        size_t f = pattern_scan_floor(s);
        *max_floor = f > *max_floor ? f : *max_floor;
        CHECK(f <= pattern_scan_pos(s));
    }
    return pattern_scan_end(s, m);
}

static int same(const PatternSpan a[2], const PatternSpan b[2])
{
    return a[0].so == b[0].so && a[0].eo == b[0].eo && a[1].so == b[1].so && a[1].eo == b[1].eo;
}

static void test_agrees_with_glibc(void)
{
    char err[256];
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        Pattern *p = NULL;
        int rc = pattern_compile(patterns[i], &p, err, sizeof err);
        CHECK_INT(rc, ==, 0);
        if (rc != 0) {
            fprintf(stderr, "  '%s': %s\n", patterns[i], err);
            continue;
        }
        PatternScan *s = pattern_scan_new(p);
        CHECK(s != NULL);
        for (size_t j = 0; s && j < sizeof texts / sizeof texts[0]; j++) {
            PatternSpan ours[2], theirs[2], piece[2];
            size_t len = strlen(texts[j]), floor1;
            int a = pattern_match(p, texts[j], len, ours);
            int b = glibc_match(patterns[i], texts[j], theirs);
            CHECK_INT(a, ==, b);
            if (a == b && a == 1 && !same(ours, theirs)) {
                CHECK(same(ours, theirs));
                fprintf(stderr, "  '%s' on '%s': ours %zd-%zd (%zd-%zd), glibc %zd-%zd (%zd-%zd)\n",
                        patterns[i], texts[j], (ssize_t)ours[0].so, (ssize_t)ours[0].eo,
                        (ssize_t)ours[1].so, (ssize_t)ours[1].eo, (ssize_t)theirs[0].so,
                        (ssize_t)theirs[0].eo, (ssize_t)theirs[1].so, (ssize_t)theirs[1].eo);
            } else if (a != b)
                fprintf(stderr, "  '%s' on '%s': ours %d, glibc %d\n", patterns[i], texts[j], a, b);
            for (size_t k = 1; k <= 3; k++) {
                CHECK_INT(scan_pieces(s, texts[j], len, k, piece, &floor1), ==, a);
                CHECK(a != 1 || (same(piece, ours) && floor1 <= ours[0].so));
            }
        }
        pattern_scan_free(s);
        pattern_free(p);
    }
}

/* pattern refused, its message one line and containing want. */
static void refused(const char *pattern, const char *want)
{
    Pattern *p = (Pattern *)&p; /* must come back NULL */
    char err[256] = "";
    CHECK_INT(pattern_compile(pattern, &p, err, sizeof err), ==, -CN_EINVAL);
    CHECK(p == NULL);
    CHECK_STR_HAS(err, want);
    CHECK(strchr(err, '\n') == NULL && err[0]);
}

static void test_refused(void)
{
    refused("^(a*)*\\1(a|b)*c$", "back-references (\\1) are not supported");
    refused("(a)\\9", "back-references (\\9)");
    refused("((((a{0,30}){0,30}){0,30}){0,30})", "too large");
    refused("(a{0,30}){0,40}", "too large");
    refused("x(", "'(' without its ')'");
    refused("[a", "'[' without its ']'");
    refused("[]", "'[' without its ']'");
    refused("[[:alpha:]", "'[' without its ']'");
    refused("[[:foo:]]", "no such character class");
    refused("[[:alpha:]-z]", "character class");
    refused("[z-a]", "ends before it starts");
    refused("[a-c-e]", "after a range");
    refused("[[.hyphen.]]", "only a single character");
    refused("[[:alpha", "'[:' without its ':]'");
    refused("*a", "nothing to repeat");
    refused("a|*b", "nothing to repeat");
    refused("(+a)", "nothing to repeat");
    refused("^*", "after an anchor");
    refused("a{", "'{' starts no count");
    refused("a{1", "'{' starts no count");
    refused("a{ 1}", "'{' starts no count");
    refused("a{3,1}", "the least count is more than the most");
    refused("a{32768}", "a count over 32767");
    refused("a{99999999999999999999}", "a count over 32767");
    refused("a\\", "a '\\' with nothing after it");
    refused("\\d+", "'\\d' is not POSIX extended syntax (a digit is [0-9]");
    refused("\\t", "'\\t' is not POSIX extended syntax");
    refused("\\0", "'\\0' is not POSIX extended syntax");
}

/* Patterns too big or too deep for a stack or a heap, from long sources. */
static void test_huge_sources(void)
{
    size_t n = 200000;
    char *src = malloc(n + 1);
    CHECK(src != NULL);
    if (!src)
        return;
    memset(src, '(', n);
    src[n] = '\0';
    refused(src, "nested more than");
    memset(src, 'a', n);
    refused(src, "too large");
    for (size_t i = 0; i < n; i++)
        src[i] = i % 2 ? '*' : 'a';
    refused(src, "too large");
    memset(src, '*', n);
    src[0] = 'a';
    refused(src, "nested too deep"); /* a***...: one atom, stacked repetitions */
    memset(src, '[', n);
    refused(src, "without its");
    free(src);
}

/* A sizes at the edge of the limit: the largest accepted, one more refused. */
static void test_limit_edge(void)
{
    char src[64], err[256];
    Pattern *p = NULL;
    /* x{0,N}: 2N instructions, and SAVE, SAVE, MATCH. */
    snprintf(src, sizeof src, "x{0,%d}", (PATTERN_PROG_MAX - 3) / 2);
    CHECK_INT(pattern_compile(src, &p, err, sizeof err), ==, 0);
    pattern_free(p);
    snprintf(src, sizeof src, "x{0,%d}", (PATTERN_PROG_MAX - 3) / 2 + 1);
    refused(src, "too large");
}

/* text of n bytes: c repeated, ending with last (0: none). */
static char *text_of(size_t n, char c, char last)
{
    char *t = malloc(n);
    if (t) {
        memset(t, c, n);
        if (last)
            t[n - 1] = last;
    }
    return t;
}

#define MB ((size_t)1 << 20)

/* The catastrophic patterns, less the back-reference, on 1 MB:
 * they finish (a backtracking matcher would not) and answer right. */
static void test_no_blowup(void)
{
    static const struct {
        const char *pat;
        size_t n;        /* the text: n bytes c, the last one last (0: c) */
        char c, last;
        int want;
        size_t so, eo;
    } cases[] = {
        {"^(a*)*(a|b)*c$", MB, 'a', 0, 0, 0, 0},
        {"^(a*)*(a|b)*c$", MB, 'a', 'c', 1, 0, MB},
        {"(a|aa)*b", MB, 'a', 0, 0, 0, 0},
        {"(.*)*x", MB, 'a', 0, 0, 0, 0},
        {"([0-9.]+)it/s", MB, '9', 0, 0, 0, 0},
        /* near the size limit (1616 instructions): ~1600 threads a byte */
        {"(a{0,200}){0,4}z", MB / 16, 'a', 'z', 1, MB / 16 - 801, MB / 16},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = cases[i].n;
        Pattern *p = NULL;
        char err[256];
        PatternSpan m[2];
        char *t = text_of(n, cases[i].c, cases[i].last);
        CHECK(t != NULL);
        CHECK_INT(pattern_compile(cases[i].pat, &p, err, sizeof err), ==, 0);
        if (!t || !p) {
            free(t);
            pattern_free(p);
            continue;
        }
        CHECK_INT(pattern_match(p, t, n, m), ==, cases[i].want);
        if (cases[i].want) {
            CHECK_INT(m[0].so, ==, cases[i].so);
            CHECK_INT(m[0].eo, ==, cases[i].eo);
        }
        free(t);
        pattern_free(p);
    }
}

/* Bytes glibc never sees in a C string: a NUL is an ordinary byte. */
static void test_nul_bytes(void)
{
    Pattern *p = NULL;
    char err[256];
    PatternSpan m[2];
    CHECK_INT(pattern_compile("b([0-9]+)", &p, err, sizeof err), ==, 0);
    CHECK_INT(pattern_match(p, "a\0b12", 5, m), ==, 1);
    CHECK_INT(m[1].so, ==, 3);
    CHECK_INT(m[1].eo, ==, 5);
    CHECK_INT(pattern_groups(p), ==, 1);
    pattern_free(p);
}

int main(void)
{
    test_agrees_with_glibc();
    test_refused();
    test_huge_sources();
    test_limit_edge();
    test_no_blowup();
    test_nul_bytes();
    return check_report();
}

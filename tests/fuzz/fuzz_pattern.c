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
 * (glibc_fit).  And it is asked in a helper process given ORACLE_MS to
 * answer (the oracle): glibc's time is not cnntop's to bound, and each
 * form the filter missed used to cost CI a timeout.
 */
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cnntop/pattern.h"
#include "util/pattern_prog.h"

/* The most program-instruction steps an input may cost the matcher: the
 * text is cut to WORK_MAX / program size bytes.  The matcher's time is
 * linear in both, and under the sanitizers a step takes ~0.15 us (run
 * twice: whole and in pieces), so a 4 KiB text against a 2000-instruction
 * program took 2.4 s, too near the 10 s timeout on a loaded CI machine.
 * At 2M steps such inputs took 0.6 s each, and libFuzzer's mutations of
 * them brought it down to 142 inputs/s; 250k steps keep an input under
 * 0.1 s, and a long text is still fed to any program of up to 60
 * instructions whole. */
#define WORK_MAX 250000

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

/*
 * The oracle: a child process that answers glibc_match over two pipes.
 * An answer that takes longer than ORACLE_MS (glibc's regcomp and regexec
 * have forms exponential in time that glibc_fit does not know of) kills
 * the child, and the input is not compared; the next question starts a
 * new one.  A question is two lengths and the bytes; an answer, glibc's
 * result and the match's start.
 */
#define ORACLE_MS 1000

static struct {
    pid_t pid;
    int ask, hear; /* the pipes' ends: to the child, from it */
} oracle = {-1, -1, -1};

static int full_io(int fd, void *buf, size_t n, int out)
{
    char *b = buf;
    while (n > 0) {
        ssize_t k = out ? write(fd, b, n) : read(fd, b, n);
        if (k <= 0)
            return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static void oracle_serve(int in, int out)
{
    for (;;) {
        uint32_t n[2];
        if (full_io(in, n, sizeof n, 0) != 0 || n[0] > 4096 || n[1] > 4096)
            _exit(0);
        char pat[4097], text[4097];
        if (full_io(in, pat, n[0], 0) != 0 || full_io(in, text, n[1], 0) != 0)
            _exit(0);
        pat[n[0]] = text[n[1]] = '\0';
        size_t so = 0;
        int64_t ans[2] = {glibc_match(pat, text, &so), 0};
        ans[1] = (int64_t)so;
        if (full_io(out, ans, sizeof ans, 1) != 0)
            _exit(0);
    }
}

static void oracle_stop(void)
{
    if (oracle.pid > 0) {
        kill(oracle.pid, SIGKILL);
        waitpid(oracle.pid, NULL, 0);
    }
    if (oracle.ask >= 0)
        close(oracle.ask);
    if (oracle.hear >= 0)
        close(oracle.hear);
    oracle.pid = oracle.ask = oracle.hear = -1;
}

static int oracle_start(void)
{
    int q[2], a[2];
    signal(SIGPIPE, SIG_IGN); /* a dead oracle is an error from write */
    if (pipe2(q, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(a, O_CLOEXEC) != 0) {
        close(q[0]);
        close(q[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(q[1]);
        close(a[0]);
        oracle_serve(q[0], a[1]);
    }
    close(q[0]);
    close(a[1]);
    oracle.pid = pid;
    oracle.ask = q[1];
    oracle.hear = a[0];
    if (pid < 0) {
        oracle_stop();
        return -1;
    }
    return 0;
}

/* glibc's answer as glibc_match gives it, or -2 when there is none in
 * time (or no oracle). */
static int oracle_match(const char *pat, const char *text, size_t len, size_t *so)
{
    uint32_t n[2] = {(uint32_t)strlen(pat), (uint32_t)len};
    int64_t ans[2];
    struct pollfd pf;

    if (oracle.pid < 0 && oracle_start() != 0)
        return -2;
    pf = (struct pollfd){.fd = oracle.hear, .events = POLLIN};
    if (full_io(oracle.ask, n, sizeof n, 1) != 0 || full_io(oracle.ask, (void *)pat, n[0], 1) != 0 ||
        full_io(oracle.ask, (void *)text, n[1], 1) != 0 || poll(&pf, 1, ORACLE_MS) != 1 ||
        full_io(oracle.hear, ans, sizeof ans, 0) != 0) {
        oracle_stop();
        return -2;
    }
    *so = (size_t)ans[1];
    return (int)ans[0];
}

static void against_glibc(const char *pat, const char *text, size_t len, int ours,
                          const PatternSpan m[2])
{
    size_t so;
    if (!glibc_fit(pat, text, len))
        return;
    int theirs = oracle_match(pat, text, len, &so);
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
        if (pattern_compile(pat, &p, err, sizeof err) == 0) {
            size_t cut = WORK_MAX / ((size_t)p->n + 1);
            len = len < cut ? len : cut;
            text[len] = '\0';
            check_compiled(p, pat, text, len);
        }
        else if (p || !err[0] || strchr(err, '\n'))
            fuzz_fail("a refusal without a one-line message, or with a pattern");
    }
    pattern_free(p);
    free(pat);
    free(text);
    return 0;
}

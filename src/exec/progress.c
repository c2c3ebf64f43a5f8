/*
 * progress.c: `cnntop exec --progress REGEX`: throughput (or loss,
 * or any figure) read from a command's own output, for commands the
 * Python hook cannot see into.
 *
 * The command's standard output and standard error become pipes; cnntop
 * copies what comes through to its own (unchanged, as it comes, with
 * write(2), never through stdio's buffer that holds the summary), or
 * gives it to the sink (the dashboard captures it, --progress or not), and
 * matches each record against REGEX (cnntop/pattern.h: POSIX extended, in
 * time linear in the record).  A record ends at a newline or a carriage
 * return, so each redraw of a progress bar is one, and may be of any
 * length: it is matched as it comes, keeping only the bytes from where the
 * match can still start (at most EXEC_KEEP_MAX).  The figure of a
 * matching record is its first parenthesised group when the pattern has
 * one and the group took part, else the first number inside the match.
 * When cnntop's own stream has no reader any more (`| head`), the
 * command's pipe is closed too, so that the command meets the closed pipe
 * (SIGPIPE) as it would without cnntop.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/pipes.h"
#include "util/err.h"

/* The pipes for the command's stdout and stderr. */
static int pipes_open(ExecProgress *p, char *err, size_t len)
{
    for (int i = 0; i < 2; i++) {
        int fd[2];
        /* The command's end blocks, as a terminal or file would. */
        if (pipe2(fd, O_CLOEXEC | O_NONBLOCK) != 0 || fcntl(fd[1], F_SETFL, 0) != 0) {
            snprintf(err, len, "%s: pipe: %s", p->on ? "--progress" : "exec", strerror(errno));
            exec_progress_close(p);
            return -CN_EIO;
        }
        p->rd[i] = fd[0];
        p->wr[i] = fd[1];
    }
    return 0;
}

int exec_progress_open(ExecProgress *p, const char *regex, int capture, char *err, size_t len)
{
    char why[256];

    memset(p, 0, sizeof *p);
    for (int i = 0; i < 2; i++)
        p->rd[i] = p->wr[i] = -1;
    p->min = INFINITY;
    p->max = -INFINITY;
    if (!regex)
        return capture ? pipes_open(p, err, len) : 0;
    if (pattern_compile(regex, &p->re, why, sizeof why) != 0) {
        return cn_fail(err, len, -CN_EINVAL, "--progress: '%s': %s", regex, why);
    }
    p->regex = regex;
    p->on = 1;
    for (int i = 0; i < 2; i++)
        if (!(p->rec[i].scan = pattern_scan_new(p->re))) {
            exec_progress_close(p);
            return cn_fail(err, len, -CN_ENOMEM, "--progress: out of memory");
        }
    return pipes_open(p, err, len);
}

void exec_progress_forked(ExecProgress *p)
{
    for (int i = 0; i < 2; i++)
        if (p->wr[i] >= 0) {
            close(p->wr[i]);
            p->wr[i] = -1;
        }
}

/* The first number in the n bytes at s (s[n] is writable), counted. */
static void figure(ExecProgress *p, char *s, size_t n)
{
    s[n] = '\0';
    for (size_t k = 0; k < n; k++) {
        char *end;
        if (!s[k] || !strchr("0123456789.-+", s[k]))
            continue;
        double v = strtod(s + k, &end);
        if (end == s + k || !isfinite(v))
            continue;
        p->matches++;
        p->last = v;
        p->sum += v;
        p->min = v < p->min ? v : p->min;
        p->max = v > p->max ? v : p->max;
        return;
    }
}

/* Ends stream i's record: the figure of its match, if any. */
static void record_end(ExecProgress *p, int i)
{
    ExecRecord *r = &p->rec[i];
    PatternSpan m[2];

    if (pattern_scan_end(r->scan, m) == 1) {
        PatternSpan g = m[1].so != PATTERN_NONE ? m[1] : m[0];
        if (g.eo > g.so && g.so >= r->base && g.eo <= r->base + r->n) /* kept, not empty */
            figure(p, r->buf + (g.so - r->base), g.eo - g.so);
    }
    pattern_scan_reset(r->scan);
    r->done = 0;
    r->base = r->n = 0;
    p->len[i] = 0;
}

/* Room for add more bytes and a NUL; -1 when memory is short. */
static int record_room(ExecRecord *r, size_t add)
{
    size_t cap = r->cap ? r->cap : 4096;
    if (r->n + add < r->cap)
        return 0;
    while (cap <= r->n + add)
        cap *= 2;
    char *b = realloc(r->buf, cap);
    if (!b)
        return -1;
    r->buf = b;
    r->cap = cap;
    return 0;
}

/* Drops the bytes before from, once they are half the kept ones (or the
 * keep is over EXEC_KEEP_MAX), so that the moves cost O(1) a byte. */
static void record_trim(ExecRecord *r, size_t from)
{
    size_t end = r->base + r->n;
    if (end - from > EXEC_KEEP_MAX) /* a match that long loses its start */
        from = end - EXEC_KEEP_MAX;
    if (from <= r->base || (from - r->base < r->n / 2 && r->n <= EXEC_KEEP_MAX))
        return;
    memmove(r->buf, r->buf + (from - r->base), end - from);
    r->n = end - from;
    r->base = from;
}

/* n more bytes of stream i's record: matched, and kept while the match
 * may still need them. */
static void record_take(ExecProgress *p, int i, const char *buf, size_t n)
{
    ExecRecord *r = &p->rec[i];

    p->len[i] += n;
    if (r->done)
        return;
    if (record_room(r, n) == 0) {
        memcpy(r->buf + r->n, buf, n);
        r->n += n;
    } else { /* out of memory: this record gives no figure */
        r->base += r->n + n;
        r->n = 0;
    }
    r->done = pattern_scan_feed(r->scan, buf, n);
    record_trim(r, pattern_scan_floor(r->scan));
}

/* Cuts stream i's output into records at each \n and \r. */
static void feed(ExecProgress *p, int i, const char *buf, size_t n)
{
    while (n) {
        size_t k = 0;
        while (k < n && buf[k] != '\n' && buf[k] != '\r')
            k++;
        if (k)
            record_take(p, i, buf, k);
        if (k == n)
            return;
        record_end(p, i);
        buf += k + 1;
        n -= k + 1;
    }
}

/* Copies all of buf to fd; a write error loses the rest.  -1 when fd's
 * reader has gone (EPIPE), else 0. */
static int pass_on(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 && errno == EPIPE ? -1 : 0;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* No more reading stream i: a last line without its newline counts too. */
static void stream_end(ExecProgress *p, int i)
{
    if (p->len[i])
        feed(p, i, "\n", 1);
    close(p->rd[i]);
    p->rd[i] = -1;
}

void exec_progress_drain(ExecProgress *p)
{
    char buf[8192];

    for (int i = 0; i < 2; i++)
        while (p->rd[i] >= 0) {
            ssize_t n = read(p->rd[i], buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                break; /* EAGAIN: nothing more for now */
            if (n == 0) { /* every writer has gone */
                stream_end(p, i);
                break;
            }
            int gone = 0;
            if (p->sink)
                p->sink(p->sink_u, i, buf, (size_t)n);
            else
                gone = pass_on(i == 0 ? STDOUT_FILENO : STDERR_FILENO, buf, (size_t)n);
            if (p->on)
                feed(p, i, buf, (size_t)n);
            if (gone) /* the command's writes meet the closed pipe now */
                stream_end(p, i);
        }
}

void exec_progress_stop(ExecProgress *p)
{
    for (int i = 0; i < 2; i++)
        if (p->rd[i] >= 0)
            stream_end(p, i);
}

void exec_progress_close(ExecProgress *p)
{
    for (int i = 0; i < 2; i++) {
        if (p->rd[i] >= 0)
            close(p->rd[i]);
        if (p->wr[i] >= 0)
            close(p->wr[i]);
        p->rd[i] = p->wr[i] = -1;
        pattern_scan_free(p->rec[i].scan);
        free(p->rec[i].buf);
        p->rec[i] = (ExecRecord){0};
    }
    pattern_free(p->re);
    p->re = NULL;
    p->regex = NULL;
}

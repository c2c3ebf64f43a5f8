/*
 * exec_progress.c: `cnntop exec --progress REGEX`: throughput (or loss,
 * or any figure) read from a command's own output, for commands the
 * Python hook cannot see into.
 *
 * The command's standard output and standard error become pipes; cnntop
 * copies what comes through to its own (unchanged, as it comes, with
 * write(2), never through stdio's buffer that holds the summary), or
 * gives it to the sink (the dashboard captures it, --progress or not), and
 * matches each whole line against REGEX (POSIX extended).  The figure of
 * a matching line is its first parenthesised group when the pattern has
 * one, else the first number inside the match.  A line longer than
 * EXEC_LINE_MAX is copied but not matched.  When cnntop's own stream has
 * no reader any more (`| head`), the command's pipe is closed too, so that
 * the command meets the closed pipe (SIGPIPE) as it would without cnntop.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/exec.h"

/* The pipes for the command's stdout and stderr. */
static int pipes_open(ExecProgress *p, char *err, size_t len)
{
    for (int i = 0; i < 2; i++) {
        int fd[2];
        /* The command's end blocks, as a terminal or file would. */
        if (pipe2(fd, O_CLOEXEC | O_NONBLOCK) != 0 || fcntl(fd[1], F_SETFL, 0) != 0) {
            snprintf(err, len, "%s: pipe: %s", p->on ? "--progress" : "exec", strerror(errno));
            exec_progress_close(p);
            return -1;
        }
        p->rd[i] = fd[0];
        p->wr[i] = fd[1];
    }
    return 0;
}

int exec_progress_open(ExecProgress *p, const char *regex, int capture, char *err, size_t len)
{
    memset(p, 0, sizeof *p);
    for (int i = 0; i < 2; i++)
        p->rd[i] = p->wr[i] = -1;
    p->min = INFINITY;
    p->max = -INFINITY;
    if (!regex)
        return capture ? pipes_open(p, err, len) : 0;
    int rc = regcomp(&p->re, regex, REG_EXTENDED);
    if (rc != 0) {
        char why[160];
        regerror(rc, &p->re, why, sizeof why);
        snprintf(err, len, "--progress: '%s': %s", regex, why);
        return -1;
    }
    p->regex = regex;
    p->on = 1;
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

/* The figure of a matching line: group 1, or the first number in the match. */
static void line_match(ExecProgress *p, char *line)
{
    regmatch_t m[2];

    if (regexec(&p->re, line, 2, m, 0) != 0)
        return;
    int g = p->re.re_nsub >= 1 && m[1].rm_so >= 0 ? 1 : 0;
    line[m[g].rm_eo] = '\0';
    for (char *s = line + m[g].rm_so; *s; s++) {
        char *end;
        if (!strchr("0123456789.-+", *s))
            continue;
        double v = strtod(s, &end);
        if (end == s || !isfinite(v))
            continue;
        p->matches++;
        p->last = v;
        p->sum += v;
        p->min = v < p->min ? v : p->min;
        p->max = v > p->max ? v : p->max;
        return;
    }
}

static void feed(ExecProgress *p, int i, const char *buf, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (buf[k] == '\n') {
            p->line[i][p->len[i]] = '\0';
            if (p->len[i] < sizeof p->line[i] - 1)
                line_match(p, p->line[i]);
            p->len[i] = 0;
        } else if (p->len[i] < sizeof p->line[i] - 1)
            p->line[i][p->len[i]++] = buf[k];
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
    }
    if (p->regex)
        regfree(&p->re);
    p->regex = NULL;
}

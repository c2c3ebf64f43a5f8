/*
 * exec_output.c: what the command writes while `cnntop exec`'s dashboard
 * is up (see exec_output.h).
 *
 * The dashboard owns the terminal, so the command's stdout and stderr come
 * through pipes (the exec session, src/exec/session.c) and nothing of it
 * may reach the screen behind curses' back.  Nothing of it is lost either: every byte goes into
 * one unlinked temporary file per stream, and when the dashboard has
 * closed cnntop writes each back to its own stream (stdout's to stdout,
 * stderr's to stderr, whole; how the two interleaved is not kept), before
 * the summary.  The screen shows the tail: the last EXEC_OUT_LINES lines,
 * each cut at EXEC_OUT_COLS bytes, with a carriage return starting the
 * line again (a progress bar redraws in place) and escape sequences
 * (colours) left out, so that the tail cannot move curses' cursor.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tui/exec_output.h"

void exec_output_init(ExecOutput *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < 2; i++) {
        o->spool[i] = tmpfile();
        if (!o->spool[i] && !o->spool_err[0])
            snprintf(o->spool_err, sizeof o->spool_err,
                     "the output is not kept whole (temporary file: %s): only its last %d lines",
                     strerror(errno), EXEC_OUT_LINES);
    }
}

/* The line being written on stream s is complete. */
static void line_end(ExecOutput *o, int s)
{
    ExecOutLine *l = &o->ring[o->nlines % EXEC_OUT_LINES];

    memcpy(l->text, o->part[s], o->part_len[s]);
    l->text[o->part_len[s]] = '\0';
    l->stream = s;
    o->nlines++;
    o->part_len[s] = 0;
    o->part[s][0] = '\0';
}

/* One byte into stream s's line: escapes dropped (ESC, then a CSI's
 * parameters up to its final byte), tabs as a space, other controls
 * dropped. */
static void line_byte(ExecOutput *o, int s, unsigned char c)
{
    if (o->esc[s]) {
        /* ESC [ ... final (0x40..0x7e); ESC x: x alone. */
        if (o->esc[s] == 1)
            o->esc[s] = c == '[' ? 2 : 0;
        else if (c >= 0x40 && c <= 0x7e)
            o->esc[s] = 0;
        return;
    }
    if (c == '\n')
        line_end(o, s);
    else if (c == '\r')
        o->part[s][o->part_len[s] = 0] = '\0';
    else if (c == 27)
        o->esc[s] = 1;
    else if ((c >= 32 || c == '\t') && c != 127 && o->part_len[s] < EXEC_OUT_COLS - 1)
    {
        o->part[s][o->part_len[s]++] = c == '\t' ? ' ' : (char)c;
        o->part[s][o->part_len[s]] = '\0';
    }
}

void exec_output_add(void *u, int stream, const char *buf, size_t n)
{
    ExecOutput *o = u;
    int s = stream ? 1 : 0;

    o->bytes[s] += n;
    if (o->spool[s] && fwrite(buf, 1, n, o->spool[s]) != n && !o->spool_err[0])
        snprintf(o->spool_err, sizeof o->spool_err,
                 "the output is not kept whole (temporary file: %s): only its last %d lines",
                 strerror(errno), EXEC_OUT_LINES);
    for (size_t k = 0; k < n; k++)
        line_byte(o, s, (unsigned char)buf[k]);
}

const char *exec_output_line(const ExecOutput *o, int i, int *stream)
{
    /* A line being written shows as the newest: stdout's, else stderr's. */
    for (int s = 0; s < 2; s++)
        if (o->part_len[s]) {
            if (i == 0) {
                *stream = s;
                return o->part[s]; /* NUL-terminated as it grows */
            }
            i--;
            break;
        }
    if (i < 0 || i >= EXEC_OUT_LINES || i >= o->nlines)
        return NULL;
    const ExecOutLine *l = &o->ring[(o->nlines - 1 - i) % EXEC_OUT_LINES];
    *stream = l->stream;
    return l->text;
}

/* Copies spool f to out; 0 or -1. */
static int spool_copy(FILE *f, FILE *out)
{
    char buf[65536];
    size_t n;

    if (fflush(f) != 0 || fseek(f, 0, SEEK_SET) != 0)
        return -1;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            return -1;
    return ferror(f) || fflush(out) != 0 ? -1 : 0;
}

int exec_output_replay(ExecOutput *o, FILE *out, FILE *err)
{
    int rc = 0;

    for (int s = 0; s < 2; s++)
        if (o->spool[s] && spool_copy(o->spool[s], s ? err : out) != 0)
            rc = -1;
    exec_output_done(o);
    return rc;
}

void exec_output_done(ExecOutput *o)
{
    for (int s = 0; s < 2; s++) {
        if (o->spool[s])
            fclose(o->spool[s]);
        o->spool[s] = NULL;
    }
}

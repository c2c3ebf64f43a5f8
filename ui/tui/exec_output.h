/*
 * exec_output.h: the command's output while `cnntop exec`'s dashboard is
 * up (exec_output.c): kept whole, and its last lines for the screen.
 */
#ifndef CNNTOP_TUI_EXEC_OUTPUT_H
#define CNNTOP_TUI_EXEC_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#define EXEC_OUT_LINES 256   /* lines of the tail kept for the screen */
#define EXEC_OUT_COLS 512    /* bytes of each (a longer line is cut there) */

typedef struct ExecOutLine {
    char text[EXEC_OUT_COLS];
    int stream;              /* 0 stdout, 1 stderr */
} ExecOutLine;

typedef struct ExecOutput {
    FILE *spool[2];          /* everything each stream wrote (unlinked temporary
                              * files), replayed after the dashboard; NULL: none */
    char spool_err[160];     /* why a spool is missing or short, "" when whole */
    ExecOutLine ring[EXEC_OUT_LINES];
    long nlines;             /* complete lines so far (ring[nlines % EXEC_OUT_LINES]) */
    char part[2][EXEC_OUT_COLS]; /* each stream's line being written */
    size_t part_len[2];
    int esc[2];              /* 1: inside an escape sequence, dropped */
    unsigned long long bytes[2];
} ExecOutput;

/* Opens the spools; a spool that cannot be made leaves only the tail and
 * says so in o->spool_err. */
void exec_output_init(ExecOutput *o);

/* ExecOutputFn: n bytes from stream (0, 1) into the spool and the tail. */
void exec_output_add(void *o, int stream, const char *buf, size_t n);

/* Line i of the tail counted from the newest (0: the line being written
 * when there is one, else the last complete one); NULL past the kept
 * ones.  *stream receives its stream. */
const char *exec_output_line(const ExecOutput *o, int i, int *stream);

/* After the dashboard: copies each spool to its stream (stdout's to out,
 * stderr's to err), then closes them.  0, or -1 when a write failed. */
int exec_output_replay(ExecOutput *o, FILE *out, FILE *err);

/* Closes the spools without replaying them.  Idempotent. */
void exec_output_done(ExecOutput *o);

#endif

/*
 * exec.h: `cnntop exec -- CMD` headless: the exec session
 * (cnntop/exec.h) driven and said (exec.c), and its summary
 * (exec_summary.c).
 */
#ifndef CNNTOP_CMD_EXEC_H
#define CNNTOP_CMD_EXEC_H

#include <stdio.h>

#include "cnntop/exec.h"
#include "common/options.h"

/* The stop signals (common/signals.h) from now on go to s
 * (exec_session_signal()); NULL: to no session. */
void exec_signals_install(ExecSession *s);

/*
 * Starts x as the session s (exec_session_init()ed here; x->child_reset
 * set to cnntop's signals at start; the stop signals go to s): 0, or
 * cnntop's exit code after a one-line error on stderr: 2 for a bad -e list
 * or --progress pattern, 127 or 126 when the command could not be run, 1
 * when no pipe or fork could be had.  Says the session's notes on stderr
 * (the hook's only without x->output: the dashboard shows it).
 */
int exec_start(ExecSession *s, ExecRun *x);

/* Says the session's drain note, if one is new, on stderr. */
void exec_say_note(ExecSession *s);

/*
 * After the last step: fills rec (NULL: a record of its own) as
 * exec_record_fill() does, prints the summary of that record on summary
 * (NULL: none), closes the session.  Returns the command's exit code.
 */
int exec_finish(ExecSession *s, RunRecord *rec, int argc, char **argv, FILE *summary);

/*
 * Runs x->argv under the profiler; prints the summary on summary (NULL:
 * none) and, with rec (NULL: none; record_init()ed), fills it as
 * exec_record_fill() does (cnntop's own command line argc/argv) once the
 * command ran (rec->have_exec 1).  Returns the command's exit status
 * (128+N when a signal killed it), 127 or 126 when it could not be run, 2
 * for a bad -e list or --progress pattern.
 */
int exec_run(const ExecRun *x, RunRecord *rec, int argc, char **argv, FILE *summary);

/* `cnntop exec`: exec_run() with the summary on stdout and, with
 * --export FILE, the record written; returns what exec_run() did (1 when
 * only the export failed). */
int exec_main(const Options *o, int argc, char **argv);

/* With --export FILE and rec filled (rec->have_exec): writes it
 * atomically and says so on stderr; frees rec either way.  Returns rc, or
 * 1 when only the export failed. */
int exec_export_write(const Options *o, RunRecord *rec, int rc);

/* The user's model as the hook's layer window measured it (r->have_model;
 * nothing otherwise): cnntop's layer table, FLOPs per image, MFU, the time
 * on paper and the window's cost (exec_layers.c); the end of
 * exec_summary_print(). */
void exec_layers_print(FILE *f, const RunRecord *r);

/* The "Bound:" (when the data wait is known) and "Verdict:" lines. */
void exec_verdict_print(FILE *f, const VerdictInput *in);

/* The summary of an exec run, from its record alone: the command, how it
 * ended, the hook's figures, --progress's, the tree's processes by role,
 * CPU, page faults, peak RSS, the verdict, a counters block per role and
 * the process table.  What `exec` prints and `report` of its export
 * prints again; writes only to f. */
void exec_summary_print(FILE *f, const RunRecord *r);

/* The command as a shell would read it back: words with blanks or quotes
 * in single quotes (exec_summary.c). */
void exec_command_print(FILE *f, char **argv);

#endif

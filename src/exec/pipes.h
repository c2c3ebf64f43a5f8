/*
 * pipes.h: the session's two pipes besides the gate (src/exec/): the
 * Python hook's (hook.c) and the command's output (progress.c).
 */
#ifndef CNNTOP_EXEC_PIPES_H
#define CNNTOP_EXEC_PIPES_H

#include "cnntop/exec.h"

/*
 * Offers the hook to the command about to be forked (enabled: not
 * --no-hook): finds it, makes its pipe, puts PYTHONPATH, CNNTOP_HOOK_FD and
 * CNNTOP_HOOK_INO in h->env, for the command's environment alone (this
 * process's stays as it is: util/envp.h).  Always returns 0; when the hook
 * cannot be offered, note says why (else "") and h->on is 0.
 */
int exec_hook_open(ExecHook *h, int enabled, char *note, size_t len);

/* After the fork: closes cnntop's copy of the write end. */
void exec_hook_forked(ExecHook *h);

/* When the hook is offered: CNNTOP_LAYERS = spec (NULL or "": the
 * default) into h->env, the layer window the hook's cnntop_layers.py
 * reads. */
int exec_hook_layers(ExecHook *h, const char *spec);

/* Reads whatever the hook has written, without waiting, and gives
 * reported workers their role in t. */
void exec_hook_drain(ExecHook *h, ProcTree *t);

/* Closes the pipe and frees h->env.  Idempotent. */
void exec_hook_close(ExecHook *h);

/* Compiles regex (NULL: no --progress, p->on 0) with cnntop/pattern.h
 * and, with a regex or capture 1, makes the pipes for the command's output
 * (p->rd[0] >= 0).  0, or -CN_EINVAL (-CN_EIO: no pipe, -CN_ENOMEM) with a
 * one-line err ("--progress: 'x(': '(' without its ')'"). */
int exec_progress_open(ExecProgress *p, const char *regex, int capture, char *err, size_t len);

/* After the fork: closes cnntop's copies of the command's ends. */
void exec_progress_forked(ExecProgress *p);

/* Passes on what the command has written to descriptors 1 and 2 (or gives
 * it to p->sink) and matches its records; never waits.  A stream whose
 * copy finds no reader (EPIPE) is closed (p->rd[i] -1), so that the
 * command's next write to it fails as it would have without cnntop. */
void exec_progress_drain(ExecProgress *p);

/* Stops reading the command's output: closes the read ends (a last line
 * without its newline is matched); the figures stay. */
void exec_progress_stop(ExecProgress *p);

/* Closes the pipes and frees the pattern.  Idempotent. */
void exec_progress_close(ExecProgress *p);

#endif

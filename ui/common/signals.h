/*
 * signals.h: how every headless command ends on a signal, and the
 * signals cnntop was started with (signals.c).
 */
#ifndef CNNTOP_SIGNALS_H
#define CNNTOP_SIGNALS_H

#include <signal.h>

/* Reads the signals ignored and the signal mask cnntop was started with;
 * main calls it first, before any handler is installed (later calls do
 * nothing; the functions below call it too, in case). */
void signals_startup(void);

/* 1 when sig was ignored (SIG_IGN) when cnntop started: `nohup`, a
 * background job's SIGINT and SIGQUIT. */
int signals_ignored(int sig);

/* sigaction(sig, sa, old), except for a signal ignored at start: that one
 * stays ignored (its disposition only read into old).  Every handler
 * cnntop installs goes through here. */
int signals_catch(int sig, const struct sigaction *sa, struct sigaction *old);

/* In a forked child about to exec a command: every signal back to what
 * cnntop was started with (ignored at start: SIG_IGN, else SIG_DFL) and
 * the mask cnntop started with.  Async-signal-safe. */
void signals_child_reset(void);

/* Installs the handlers of a headless command; a later call replaces
 * on_stop.  The stop signals (SIGINT, SIGTERM, SIGHUP) call on_stop(sig)
 * when it is given (it must be async-signal-safe: set a flag, stop the
 * engine) and end the process otherwise.  Every other signal whose default
 * is to end the process (SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU) ends
 * it.  A signal that ends the process waits for an atomic write in flight,
 * then ends it by the signal itself (the shell sees 128+sig), never
 * leaving a temporary file.  SIGPIPE and SIGXFSZ are ignored: a reader
 * that went away and a file over `ulimit -f` are write errors.  A signal
 * ignored when cnntop started stays ignored (signals_catch()). */
void signals_install(void (*on_stop)(int sig));

/* The first stop signal a handler of signals_install() caught, whichever
 * on_stop was installed then, or 0: for a command that runs several
 * things in turn (sweep --cmd) and must not start the next one after it. */
int signals_stop_caught(void);

#endif

/*
 * signals.h: how every headless command ends on a signal (signals.c).
 */
#ifndef CNNTOP_SIGNALS_H
#define CNNTOP_SIGNALS_H

/* Installs the handlers of a headless command; a later call replaces
 * on_stop.  The stop signals (SIGINT, SIGTERM, SIGHUP) call on_stop(sig)
 * when it is given (it must be async-signal-safe: set a flag, stop the
 * engine) and end the process otherwise.  Every other signal whose default
 * is to end the process (SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU) ends
 * it.  A signal that ends the process waits for an atomic write in flight,
 * then ends it by the signal itself (the shell sees 128+sig), never
 * leaving a temporary file.  SIGPIPE and SIGXFSZ are ignored: a reader
 * that went away and a file over `ulimit -f` are write errors. */
void signals_install(void (*on_stop)(int sig));

/* The first stop signal a handler of signals_install() caught, whichever
 * on_stop was installed then, or 0: for a command that runs several
 * things in turn (sweep --cmd) and must not start the next one after it. */
int signals_stop_caught(void);

#endif

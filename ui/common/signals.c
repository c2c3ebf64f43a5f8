/*
 * signals.c: how every headless command ends on a signal, and the
 * signals cnntop was started with (signals.h).
 *
 * One table says what each signal does.  Handlers only store, or ask
 * fileio whether a write is in flight: fileio_defer_signal() keeps the
 * signal until the temporary file is renamed or removed, and raises it
 * again then, so the handler runs a second time and ends the process.
 *
 * A signal ignored when cnntop started stays ignored: `nohup`, a shell's
 * background job (SIGINT, SIGQUIT) and `env --ignore-signal` ask that the
 * whole job be deaf to it, cnntop and the command it runs alike.  So the
 * dispositions and the mask are read once, first thing in main, every
 * handler cnntop installs goes through signals_catch(), which leaves an
 * ignored signal alone, and a forked command gets back exactly what cnntop
 * was given (signals_child_reset()).
 */
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "cnntop/fileio.h"
#include "common/signals.h"

enum { SIG_END, SIG_STOP, SIG_IGNORE };

static const struct { int sig, what; } sig_table[] = {
    {SIGINT, SIG_STOP},   {SIGTERM, SIG_STOP},  {SIGHUP, SIG_STOP},
    {SIGQUIT, SIG_END},   {SIGUSR1, SIG_END},   {SIGUSR2, SIG_END},
    {SIGALRM, SIG_END},   {SIGXCPU, SIG_END},
    {SIGPIPE, SIG_IGNORE}, {SIGXFSZ, SIG_IGNORE},
};

static void (*volatile stop_fn)(int sig);
static volatile sig_atomic_t first_stop; /* signals_stop_caught() */

/* What cnntop was started with: the signals ignored, the mask. */
static sigset_t start_ignored, start_mask;
static int start_read;

void signals_startup(void)
{
    struct sigaction old;

    if (start_read)
        return;
    start_read = 1;
    sigemptyset(&start_ignored);
    for (int sig = 1; sig < NSIG; sig++)
        if (sigaction(sig, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_IGN)
            sigaddset(&start_ignored, sig);
    sigprocmask(SIG_BLOCK, NULL, &start_mask);
}

int signals_ignored(int sig)
{
    signals_startup();
    return sigismember(&start_ignored, sig) == 1;
}

int signals_catch(int sig, const struct sigaction *sa, struct sigaction *old)
{
    if (signals_ignored(sig))
        return old ? sigaction(sig, NULL, old) : 0;
    return sigaction(sig, sa, old);
}

void signals_child_reset(void)
{
    struct sigaction sa;

    /* Async-signal-safe only (a forked child): sigaction, sigprocmask. */
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        sa.sa_handler = sigismember(&start_ignored, sig) == 1 ? SIG_IGN : SIG_DFL;
        sigaction(sig, &sa, NULL); /* glibc's own signals refuse: fine */
    }
    sigprocmask(SIG_SETMASK, &start_mask, NULL);
}

/* Ends the process by sig, once no atomic write has a temporary file. */
static void end_now(int sig)
{
    struct sigaction sa;

    if (fileio_defer_signal(sig))
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    raise(sig); /* delivered when this handler returns: sig is blocked in it */
}

static void on_stop_signal(int sig)
{
    void (*fn)(int) = stop_fn;

    if (!first_stop)
        first_stop = sig;
    if (fn)
        fn(sig);
    else
        end_now(sig);
}

void signals_install(void (*on_stop)(int sig))
{
    struct sigaction sa;

    stop_fn = on_stop;
    for (size_t i = 0; i < sizeof sig_table / sizeof sig_table[0]; i++) {
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = sig_table[i].what == SIG_IGNORE ? SIG_IGN
                        : sig_table[i].what == SIG_STOP ? on_stop_signal
                                                        : end_now;
        sigemptyset(&sa.sa_mask);
        signals_catch(sig_table[i].sig, &sa, NULL);
    }
}

int signals_stop_caught(void)
{
    return first_stop;
}

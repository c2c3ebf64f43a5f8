/*
 * signals.c: how every headless command ends on a signal (signals.h).
 *
 * One table says what each signal does.  Handlers only store, or ask
 * fileio whether a write is in flight: fileio_defer_signal() keeps the
 * signal until the temporary file is renamed or removed, and raises it
 * again then, so the handler runs a second time and ends the process.
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
        sigaction(sig_table[i].sig, &sa, NULL);
    }
}

int signals_stop_caught(void)
{
    return first_stop;
}

/*
 * terminal.c: the terminal: curses set up with newterm (UTF-8 or not,
 * colours or monochrome, the mouse), SIGINT, SIGTERM and SIGHUP turned
 * into a flag the loop polls (each left ignored when cnntop was started
 * ignoring it), and a fatal signal's handler that puts the terminal back
 * (leaves the alternate screen, restores the modes) before the process
 * dies of it.  A terminal that cannot move the cursor (TERM=dumb) is
 * refused as an unknown one is.
 */
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "common/signals.h"
#include "tui/terminal.h"

/* Last: term.h defines macros (lines, columns...) that would rename fields
 * in the headers above. */
#include <term.h>

static volatile sig_atomic_t sig_caught;

static void on_signal(int sig)
{
    sig_caught = sig;
}

static void colors_init(Tui *t)
{
    t->color = !t->o->no_color && has_colors();
    if (!t->color)
        return;
    start_color();
    use_default_colors();
    init_pair(PAIR_TITLE, COLOR_CYAN, -1);
    init_pair(PAIR_GOOD, COLOR_GREEN, -1);
    init_pair(PAIR_WARN, COLOR_YELLOW, -1);
    init_pair(PAIR_BAD, COLOR_RED, -1);
    init_pair(PAIR_DIM, COLOR_BLUE, -1);
    init_pair(PAIR_DATA, COLOR_BLACK, COLOR_YELLOW);
    init_pair(PAIR_FWD, COLOR_BLACK, COLOR_CYAN);
    init_pair(PAIR_BWD, COLOR_BLACK, COLOR_BLUE);
    init_pair(PAIR_OPT, COLOR_BLACK, COLOR_MAGENTA);
    init_pair(PAIR_CHART, COLOR_GREEN, -1);
    init_pair(PAIR_MARK, COLOR_MAGENTA, -1);
    init_pair(PAIR_SEL, COLOR_BLACK, COLOR_CYAN);
    init_pair(PAIR_BAR, COLOR_GREEN, -1);
}

/* --- the terminal, and leaving it sane ------------------------------- */

/* What a fatal signal's handler needs to put the terminal back: the
 * settings before curses changed them and the bytes that leave the
 * alternate screen and reset the modes, both taken at start. */
static struct termios term_saved;
static int term_saved_ok;
static char term_reset[256];
static size_t term_reset_len;
static const int fatal_sigs[] = {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL};
static struct sigaction fatal_old[sizeof fatal_sigs / sizeof fatal_sigs[0]];

static void reset_add(const char *cap)
{
    char *str = tigetstr(cap);
    size_t n = str && str != (char *)-1 ? strlen(str) : 0;

    if (n && term_reset_len + n < sizeof term_reset) {
        memcpy(term_reset + term_reset_len, str, n);
        term_reset_len += n;
    }
}

/* SIGSEGV and the like: only async-signal-safe calls (write, tcsetattr,
 * sigaction, raise).  The handler in place before ours (the default, or a
 * sanitizer's) is put back and the signal raised again, so the process
 * dies of it as it would have, with the terminal usable. */
static void on_fatal(int sig)
{
    size_t i = 0;

    if (term_reset_len && write(STDOUT_FILENO, term_reset, term_reset_len) < 0) {
        /* Nothing to do about it: the process is dying. */
    }
    if (term_saved_ok)
        tcsetattr(STDIN_FILENO, TCSANOW, &term_saved);
    while (i + 1 < sizeof fatal_sigs / sizeof fatal_sigs[0] && fatal_sigs[i] != sig)
        i++;
    sigaction(sig, &fatal_old[i], NULL);
    raise(sig);
}

static void signals_init(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* After the terminal is set up, since curses installs its own SIGINT
     * and SIGTERM handlers: ours replace them, so that the loop can stop
     * the run and save.  A signal ignored when cnntop started stays
     * ignored (common/signals.h). */
    signals_catch(SIGINT, &sa, NULL);
    signals_catch(SIGTERM, &sa, NULL);
    signals_catch(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    reset_add("sgr0");
    reset_add("cnorm");
    reset_add("rmkx");
    reset_add("rmcup");
    static const char mouse_off[] = "\033[?1000l\033[?1002l\033[?1006l";
    if (term_reset_len + sizeof mouse_off < sizeof term_reset) {
        memcpy(term_reset + term_reset_len, mouse_off, sizeof mouse_off - 1);
        term_reset_len += sizeof mouse_off - 1;
    }
    sa.sa_handler = on_fatal;
    for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++)
        signals_catch(fatal_sigs[i], &sa, &fatal_old[i]);
}

/* Whether the terminal newterm() set up can move the cursor: ncurses
 * accepts TERM=dumb (an editor's shell buffer) and would draw a screen of
 * garbage there.  If it cannot, the screen is let go. */
static int terminal_addressable(Tui *t)
{
    const char *cup = tigetstr("cup");

    if (cup && cup != (char *)-1)
        return 1;
    endwin();
    delscreen(t->screen);
    return 0;
}

int terminal_open(Tui *t)
{
    const char *cs, *term = getenv("TERM");

    setlocale(LC_ALL, "");
    cs = nl_langinfo(CODESET);
    t->utf8 = cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
    term_saved_ok = tcgetattr(STDIN_FILENO, &term_saved) == 0;
    if (!term || !*term) {
        fprintf(stderr, "cnntop: the dashboard needs TERM set to the terminal's type "
                        "(e.g. TERM=xterm-256color); `cnntop run` needs none\n");
        return -1;
    }
    set_escdelay(25);
    /* newterm(), not initscr(): on a terminal it cannot drive, initscr()
     * prints its own message and exits; newterm() returns NULL. */
    t->screen = newterm(NULL, stdout, stdin);
    if (t->screen && !terminal_addressable(t))
        t->screen = NULL;
    if (!t->screen) {
        fprintf(stderr, "cnntop: the dashboard cannot drive terminal type '%s' (TERM): "
                        "not in the terminfo database or lacks cursor motion; "
                        "try TERM=xterm-256color, or `cnntop run`\n", term);
        return -1;
    }
    set_term(t->screen);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED, NULL);
    mouseinterval(0);
    colors_init(t);
    signals_init();
    return 0;
}

void terminal_close(Tui *t)
{
    endwin();
    delscreen(t->screen);
    t->screen = NULL;
}

int terminal_signal(void)
{
    return sig_caught;
}

/*
 * terminal.h: setting up the terminal and leaving it sane (terminal.c).
 */
#ifndef CNNTOP_TUI_TERMINAL_H
#define CNNTOP_TUI_TERMINAL_H

#include "tui/tui.h"

/* Sets up curses on stdin/stdout for t (t->screen, t->utf8, t->color)
 * and the signal handlers.  Returns 0, or -1 after a one-line error on
 * stderr when curses cannot drive the terminal (TERM unset, or not in the
 * terminfo database). */
int terminal_open(Tui *t);

/* Ends curses: the terminal as it was before terminal_open(). */
void terminal_close(Tui *t);

/* The SIGINT, SIGTERM or SIGHUP caught since terminal_open(), or 0. */
int terminal_signal(void);

#endif

/*
 * session.h: starting the session's runs and recording them (session.c).
 */
#ifndef CNNTOP_TUI_SESSION_H
#define CNNTOP_TUI_SESSION_H

#include "tui/tui.h"

/* Starts run t->seq + 1 with the next-run settings on the run thread; a
 * message says why not when one is going or it cannot start. */
void session_start(Tui *t);

/* The history row of the run that just ended (t->rv), whatever its end;
 * saved to --history FILE when there is one. */
void session_record(Tui *t);

#endif

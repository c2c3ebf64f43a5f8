/*
 * poll.h: the tick's copy of what is to be shown (poll.c).
 */
#ifndef CNNTOP_TUI_POLL_H
#define CNNTOP_TUI_POLL_H

#include "tui/tui.h"

/* Copies the run's state, the engine's live figures and samples, the
 * counters and the CPU use into t; records a run that just ended. */
void poll_tick(Tui *t);

#endif

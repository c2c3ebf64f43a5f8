/*
 * screen.h: one frame of the dashboard (screen.c).
 */
#ifndef CNNTOP_TUI_SCREEN_H
#define CNNTOP_TUI_SCREEN_H

#include "tui/tui.h"

/* Lays the screen out for its size and view, erases curses' virtual
 * screen, draws each panel of the view (and the help over them) and
 * refreshes: curses sends only the cells that changed, so a 10 Hz redraw
 * does not flicker. */
void screen_draw(Tui *t);

#endif

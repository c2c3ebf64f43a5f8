/*
 * panel_status.h: the status line's tabs, for mouse clicks (panel_status.c).
 */
#ifndef CNNTOP_TUI_PANEL_STATUS_H
#define CNNTOP_TUI_PANEL_STATUS_H

/* The view whose tab is at column x of a status line of `cols` columns,
 * or -1 where there is none. */
int panel_status_tab_at(int cols, int x);

#endif

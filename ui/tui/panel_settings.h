/*
 * panel_settings.h: a setting's value cut to its column (panel_settings.c).
 */
#ifndef CNNTOP_TUI_PANEL_SETTINGS_H
#define CNNTOP_TUI_PANEL_SETTINGS_H

#include <stddef.h>

/* Setting i's value val cut to w columns so that two values never look
 * alike: augment by its initials, a path by its tail, anything else
 * marked with '~'.  The history's augment column uses it too. */
void panel_settings_cell(int i, const char *val, int w, char *buf, size_t len);

#endif

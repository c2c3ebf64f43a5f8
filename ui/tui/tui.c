/*
 * tui.c: the dashboard's state (see tui.h) and the small things every
 * part of it asks: the status line's message and the chart windows.
 */
#include <stdarg.h>
#include <stdio.h>

#include "tui/clock.h"
#include "tui/tui.h"

void tui_message(Tui *t, int is_error, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(t->status, sizeof t->status, fmt, ap);
    va_end(ap);
    t->status_t = clock_mono();
    t->status_err = is_error;
}

void tui_key_seen(Tui *t, int ch)
{
    if (ch != KEY_RESIZE && ch != KEY_MOUSE)
        t->status[0] = '\0';
}

int tui_window_seconds(int i)
{
    /* The window key's choices (settings_ui), in the order t cycles them. */
    const SettingName *w = settings_find(settings_ui, "window")->names;
    return w[((i % TUI_WINDOWS) + TUI_WINDOWS) % TUI_WINDOWS].value;
}

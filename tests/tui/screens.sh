#!/bin/sh
# tests/tui/screens.sh CNNTOP [SCREENSHOT]: the dashboard as a person meets it,
# driven through a private tmux server (keys in, capture-pane out).
# 80x24: panels, a run that progresses, a live worker change (its lines
# kept at 80x20), stop, the history row, an export that parses, help,
# resize to 60x20 and back, a clean quit.  200x50: --autostart, the wide
# layout, quit while running.
# Polls with timeouts rather than sleeping; exits 77 without tmux or data.
# With SCREENSHOT, the mid-run 80x24 capture is written there.
NAME=test_tui
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SHOT=${2:-}
. "$(dirname "$0")/lib.sh"
# figures_whole WHEN: at 80 columns every figure of the last capture is
# whole: a brief wording where the full one does not fit (the verdict, the
# oversubscription advice, MFU, the loader), never a line cut with '~'.
figures_whole() {
    checks=$((checks + 1))
    cut=$(sed -n '/^figures/,$p' "$tmp/screen" | sed '$d' | cut -c1-44 | grep '~ *$')
    [ -z "$cut" ] && return 0
    echo "FAIL: figures cut at 80 columns $1:" >&2
    echo "$cut" >&2
    fails=$((fails + 1))
}
step_of() { sed -n 's/.* step \([0-9]*\)\/.*/\1/p' "$1" | head -1; }
start() { # start COLS LINES ARGS...: a fresh session, then cnntop
    c=$1 l=$2
    shift 2
    tui_shell "$c" "$l"
    tui_run "--limit 2000 --test-limit 1000 --history $tmp/hist.tsv $*"
}

# --- 80x24 ----------------------------------------------------------------
start 80 24 --epochs 500 --workers 0
check "dashboard starts" "idle: press s" 20 || { echo "test_tui: the dashboard did not start" >&2; exit 1; }
for p in "images/s" "loader queue" "loss" "IPC" "figures" "settings" "main  layers  history"; do
    check "panel $p" "$p" 2
done
# Where cnntop chose the OpenBLAS kernel, its note holds the status row
# for 8 s first (beside the tabs, checked above).
check "the keys line keeps help and quit at 80 columns" "? help  q quit" 10
T send-keys -t t s
check "s starts a run" "run 1 running" 30
wait_for "images/s now [1-9]" 20
cp "$tmp/screen" "$tmp/a"
sleep 1.5
check "run progresses" "run 1 running" 5
cp "$tmp/screen" "$tmp/b"
a=$(step_of "$tmp/a") b=$(step_of "$tmp/b")
checks=$((checks + 1))
# (The step, not the rate: a steady machine shows the same rounded
# images/s 1.5 s apart.)
if [ -z "$a" ] || [ -z "$b" ] || [ "$b" -le "$a" ]; then
    echo "FAIL: no progress between captures (step '$a' -> '$b')" >&2
    cat "$tmp/a" "$tmp/b" >&2
    fails=$((fails + 1))
fi
T send-keys -t t W
check "W applies workers live" "workers 1: applied live" 5
check "the running column shows 1 worker" "workers  *1  *1 live" 5
check "a second segment starts" "segment  2 " 10
figures_whole "during the run, with a loader worker"
# A shorter screen (or a warning above, or the oversubscription advice):
# the lines that answer the change keep their rows, and those above them
# give way (at 80x20 with a two-row OpenBLAS warning, the rates leave two).
T resize-window -t t -x 80 -y 20
check "80x20: the segment line stays" "^segment  2 " 10
check "80x20: the before line stays" "^before   1 " 5
T resize-window -t t -x 80 -y 24
if [ -n "$SHOT" ]; then # a screenshot once the change has a figure
    wait_for "change   x" 20
    cap >"$SHOT"
fi
T send-keys -t t x
check "x stops the run" "run 1 stopped" 30
figures_whole "after the run"
T send-keys -t t Tab Tab
check "history view has the run" "stopped" 5
check "history row has an accuracy" "[0-9]\.[0-9][0-9]%" 5
T send-keys -t t Tab e
check "e asks a file name, shown whole at 80 columns" "export to.* cnntop-run-1.json_" 5
T send-keys -t t C-u
check "Ctrl-U clears the file name" "export to (.*): _" 5
T send-keys -t t cnntop-run-1.json
T send-keys -t t Enter
check "export written" "exported run 1 to cnntop-run-1.json" 10
checks=$((checks + 1))
python3 -m json.tool "$tmp/cnntop-run-1.json" >/dev/null 2>&1 ||
    { echo "FAIL: the export does not parse" >&2; fails=$((fails + 1)); }
T send-keys -t t '?'
check "? shows help" "cnntop .*: keys" 5
check "help shows the UI cost" "dashboard (UI thread) CPU" 5
T send-keys -t t Escape
T resize-window -t t -x 60 -y 20
check "60x20 still draws" "settings" 10
T resize-window -t t -x 40 -y 10
check "40x10 says too small" "needs at least 60x20" 10
T resize-window -t t -x 80 -y 24
check "back to 80x24" "main  layers  history" 10
tui_quit
checks=$((checks + 1))
grep -q "^workers=1$" "$tmp/cfg/cnntop/config" 2>/dev/null ||
    { echo "FAIL: settings file not written with workers=1" >&2; fails=$((fails + 1)); }
checks=$((checks + 1))
grep -q "state=stopped" "$tmp/hist.tsv" 2>/dev/null ||
    { echo "FAIL: --history file lacks the run" >&2; fails=$((fails + 1)); }
T kill-server
SOCK=cnntop$$w # a fresh server: the first one may still be exiting
trap 'T kill-server >/dev/null 2>&1; tmux -L "cnntop$$" kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT

# --- 200x50 ---------------------------------------------------------------
start 200 50 --epochs 500 --autostart
check "--autostart starts a run" "run 2 running\|run 1 running" 30
check "the settings file was read (workers 1)" "workers  *1  *1 live" 10
check "history from the file" "stopped" 5
check "wide layout: segments and history" "batch wkrs" 10
T send-keys -t t q
check "q asks while a run is going" "stop it and quit" 5
T send-keys -t t y
check "y quits with status 0" "^cnntop exit 0$" 20
tui_end

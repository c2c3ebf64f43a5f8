#!/bin/sh
# tests/tui/help.sh CNNTOP: the help box and the keys it lists, as
# tmux's regress scripts do: capture-pane against an expected file.
#   - ?, h and F1 open the help; its key rows (written from keys.c's
#     table) are exactly tests/tui/help.expected; any key closes it;
#   - with no run, the keys listed do what their row says: x, m, t, o, p,
#     c, a digit, Tab and Shift-Tab.
NAME=test_tui_help
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
EXPECTED=$(cd "$(dirname "$0")" && pwd)/help.expected
. "$(dirname "$0")/lib.sh"

# help_rows: the key rows of the help box on a 100-column screen (the box
# is 86 wide from column 7, its text from column 9), without the title,
# the cost line and blank rows.
help_rows() {
    sed -n '/: keys/,/dashboard (UI thread)/p' "$tmp/screen" | cut -c10-91 |
        sed 's/ *$//' | sed '1d;$d' | sed '/^$/d'
}

tui_shell 100 30
tui_run "--limit 500"
check "dashboard starts" "idle: press s" 20 || { echo "$NAME: the dashboard did not start" >&2; exit 1; }
for k in '?' h F1; do
    T send-keys -t t "$k"
    check "$k opens the help" "cnntop .*: keys" 5 || continue
    check "the help's last row" "dashboard (UI thread) CPU" 5
    checks=$((checks + 1))
    if ! help_rows | cmp -s - "$EXPECTED"; then
        echo "FAIL: $k: the help's rows differ from help.expected:" >&2
        help_rows | diff - "$EXPECTED" >&2
        fails=$((fails + 1))
    fi
    T send-keys -t t Space
    check "any key closes the help ($k)" "s start  x stop" 5
    check_not "the help is closed ($k)" ": keys"
done
T send-keys -t t x
check "x without a run says so" "no run is going" 5
T send-keys -t t m
check "m without a run says so" "no run to mark as the baseline yet" 5
T send-keys -t t t
check "t cycles the chart window to 5 min" "\[5m\]" 5
T send-keys -t t p
check "p pauses the display" "display paused (training goes on)" 5
T send-keys -t t p
check "p again resumes" "display live" 5
T send-keys -t t 7
check "a digit opens the setting's prompt with itself" "batch = 7_" 5
T send-keys -t t Escape
T send-keys -t t Down c
check "c opens the chosen setting's prompt, empty" "workers = _" 5
T send-keys -t t Escape Down Down Down Right
check "the gemm row: Right goes to the next path" "gemm openblas: for the next run" 5
T send-keys -t t Left
check "the gemm row: Left goes back" "gemm auto: for the next run" 5
T send-keys -t t Up Up Up Tab
check "Tab: the per-layer view" "sorted by step order" 5
T send-keys -t t o
check "o changes the per-layer order" "sorted by time" 5
T send-keys -t t BTab
check "Shift-Tab: back to the main view" "figures" 5
check_not "Shift-Tab: not the per-layer view" "sorted by"
tui_quit
tui_end

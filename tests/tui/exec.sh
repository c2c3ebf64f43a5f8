#!/bin/sh
# tests/tui/exec.sh CNNTOP [PYTHON]: `cnntop exec -- CMD` on a terminal:
# the live dashboard, under tmux.
#   a `sh -c` that prints lines on both streams and sleeps: the command,
#   the roles (main, loader workers, other children), the counters, the
#   output's tail (never over the screen), "running", then "exited 3" and
#   the dashboard kept until q; after q the whole output and the summary
#   on the terminal, cnntop's status the command's (3);
#   a resize, small enough for "terminal too small" and back;
#   e: the record through `exec --export`'s writer, read by `cnntop report`;
#   q while it runs: asked, y, SIGTERM, cnntop's status 143; SIGTERM to
#   cnntop passed on, the same; a command killed by a signal said so;
#   with PYTHON (Debian's, with torch), tests/exec/train_seed.py with
#   --workers 2: the loader workers' role row and images/s;
#   --progress: its figure's chart; --no-dashboard on a terminal: the
#   summary only.
# No sleeps as speed assumptions: the screen is polled (lib.sh).
NAME=test_tui_exec
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
PY=${2:-}
SCRIPT=$(cd "$(dirname "$0")/.." && pwd)/exec/train_seed.py
NO_DATA=1
. "$(dirname "$0")/lib.sh"

# A marker file the command waits for: it ends only when the test says so,
# so "running" is seen however slow the machine (a hang bound, no sleep).
GO=$tmp/go
CMD="sh -c 'echo out-one; echo err-one >&2; echo out-two; while [ ! -e $GO ]; do sleep 0.1; done; echo out-last; exit 3'"

tui_shell 100 34
tui_run "exec -- $CMD"
check "the dashboard starts with the command" "^cnntop exec: sh -c 'echo out-one" 20 || { tui_end; exit 1; }
check "it is running" "elapsed [0-9.]* s   running" 10
check "the main role's row" "^main process  *1  *1 " 10
check "the loader workers' row (none)" "^data-loader workers  *none" 5
check "the other children's row" "^other children  *[1-9]" 10
check "the counters, task-clock counted" "^task-clock  *[0-9][0-9,.]* " 10
check "cycles: counted, or n/a with the reason" "^cycles  *\([0-9][0-9,]* \|n/a .*n/a: [a-z]\)" 5
check "the output's tail: stdout" "^out-two" 10
check "the output's tail: stderr" "^err-one" 5
# Every byte through the capture: out-one, out-two (16 B), err-one (8 B).
check "the output captured, by stream" "Output the tail (stdout 16 B; stderr 8 B" 5
T send-keys -t t e
check "e refuses while it runs" "still running: e exports once it has ended" 5
T send-keys -t t '?'
check "the help from the key table" "export the record once the command has ended" 5
T send-keys -t t x
check_gone "any key closes the help" "this help; any key closes it" 5

# Small, then back: laid out again each time.
T resize-window -t t -x 50 -y 15
check "a small terminal says so" "terminal too small: 50x15" 10
T resize-window -t t -x 160 -y 40
check "wide again: the roles" "^main process  *1 " 10
check "wide: the output beside" "Output the tail" 5

touch "$GO"
check "the command ended: its status" "exited 3" 30
check "the last line in the tail" "out-last" 5
check "the dashboard stays after it ended" "^Processes by role" 5
check_not "cnntop has not ended before q" "cnntop exit"
T send-keys -t t e
check "e asks for the file name" "export to (.json" 5
T send-keys -t t C-u "$tmp/rec.json" Enter
check "e writes the record" "the record written to $tmp/rec.json" 10
T send-keys -t t q
check "after q: cnntop's status is the command's" "^cnntop exit 3$" 20
T capture-pane -p -t t -S -400 >"$tmp/after"
check_file "after q: the output whole" "$tmp/after" -x "out-one"
check_file "after q: stderr too" "$tmp/after" -x "err-one"
check_file "after q: the summary" "$tmp/after" "^ Performance of cnntop exec: sh -c"
check_file "the summary says the status" "$tmp/after" "^  Exit:  *status 3$"
"$CNNTOP" report "$tmp/rec.json" >"$tmp/report" 2>&1
check_file "report reads the export" "$tmp/report" "exited with status 3\|status 3"
check_file "report names the command" "$tmp/report" "sh -c"

# q while it runs: asked, confirmed, SIGTERM: 128 + 15.
rm -f "$GO"
T send-keys -t t "clear" Enter
tui_run "exec -- $CMD"
check "running again" "elapsed [0-9.]* s   running" 20
T send-keys -t t q
check "q asks while it runs" "send it SIGTERM and quit? (y/n)" 5
T send-keys -t t n
check_not "n keeps it running" "cnntop exit"
check "still running after n" "elapsed [0-9.]* s   running" 5
T send-keys -t t q y
check "y: SIGTERM, and cnntop's status is 143" "^cnntop exit 143$" 30
T capture-pane -p -t t -S -400 >"$tmp/after"
check_file "the summary says SIGTERM" "$tmp/after" "killed by signal 15"

# SIGTERM to cnntop goes on to the command; the dashboard closes once it
# has ended, with its status.  cnntop is the pane shell's child.
T send-keys -t t "clear" Enter
tui_run "exec -- $CMD"
check "running for SIGTERM" "elapsed [0-9.]* s   running" 20
shell=$(T list-panes -t t -F '#{pane_pid}')
kill -TERM "$(pgrep -P "$shell" -x cnntop)"
check "SIGTERM to cnntop: the command's 143" "^cnntop exit 143$" 30

# --progress: the figure read from the output, on a chart of its own.
T send-keys -t t "clear" Enter
tui_run "exec --progress 'rate ([0-9.]+)' -- sh -c 'echo rate 5; echo rate 7.5; echo other 9'"
check "--progress: the last figure and the lines" "--progress last 7.5 (2 lines)" 20
T send-keys -t t q
check "--progress: exit 0" "^cnntop exit 0$" 20

# A command killed by a signal: said so, and the dashboard stays.
T send-keys -t t "clear" Enter
tui_run "exec -- sh -c 'echo bye; kill -TERM \$\$'"
check "killed by a signal: said so" "killed by SIGTERM (exit code 143)" 20
check_not "the dashboard stays after a signal too" "cnntop exit"
T send-keys -t t q
check "q: cnntop's status is 143" "^cnntop exit 143$" 20

# --no-dashboard on a terminal: the summary, no dashboard.
T send-keys -t t "clear" Enter
tui_run "exec --no-dashboard -- sh -c 'echo plain'"
check "--no-dashboard: the summary" "^ Performance of cnntop exec: sh -c" 20
check "--no-dashboard: exit 0" "^cnntop exit 0$" 10

# PyTorch: the DataLoader's workers and images/s.
if [ -n "$PY" ] && "$PY" -c 'import torch' 2>/dev/null; then
    T send-keys -t t "clear" Enter
    tui_run "exec -- $PY $SCRIPT --workers 2 --images 4096 --epochs 3 --threads 1"
    # Each epoch's iterator forks its own 2 workers: 2 or more seen.
    check "torch: the loader workers' role row" "^data-loader workers  *\([2-9]\|[1-9][0-9]\) " 120
    check "torch: images/s from the hook" "images/s [0-9.]*[kM]*  wait [0-9.]*%" 120
    check "torch: it ends" "exited 0" 300
    check "torch: the mean images/s once it ended" "images/s mean [0-9.]*[kM]*  wait" 5
    check "torch: the script's own line in the tail" "script: [0-9]* images in" 5
    T send-keys -t t q
    check "torch: cnntop exit 0" "^cnntop exit 0$" 20
else
    echo "$NAME: the PyTorch part skipped: no torch for ${PY:-/usr/bin/python3}"
fi
tui_end

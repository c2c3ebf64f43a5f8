#!/bin/sh
# tests/tui/exec_ddp.sh CNNTOP [PYTHON]: the exec dashboard of a two-rank
# data-parallel PyTorch job (tests/cli/ddp_train.py: gloo, spawned ranks,
# num_workers 0, so that the main process has no DataLoader of its own),
# under tmux.  Once the job has ended (the dashboard stays, its figures
# final): the roles table has the ranks' row; the process table has a RANK column with ranks 0 and 1 on the
# rank rows; the counters have a ranks column; the images/s chart shows
# the job's mean and data wait (the ranks' sum and mean), not the main
# process's "0 batches"; after q the summary's job images/s is the chart's.
# Needs PYTHON with torch.distributed and gloo (skips, 77, without).  No
# sleeps as speed assumptions (lib.sh polls).
NAME=test_tui_exec_ddp
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
PY=${2:-/usr/bin/python3}
SCRIPT=$(cd "$(dirname "$0")/.." && pwd)/cli/ddp_train.py
NO_DATA=1
. "$(dirname "$0")/lib.sh"
"$PY" -c 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' \
    2>/dev/null || { echo "$NAME: skipped: $PY has no torch.distributed with gloo"; exit 77; }
port=$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")

tui_shell 180 50
tui_run "exec -- $PY $SCRIPT --workers 0 --images 512 --port $port"
check "the dashboard starts" "^cnntop exec: " 30 || { tui_end; exit 1; }
check "the job ends (the dashboard stays)" "exited 0" 150 || {
    # What the job's processes are doing (the command's pid is on screen).
    cmd=$(sed -n 's/^pid \([0-9][0-9]*\) .*/\1/p' "$tmp/screen" | head -n 1)
    [ -n "$cmd" ] && sh "$(dirname "$0")/../cli/proc_stacks.sh" "$cmd"
}
check "the roles table's ranks row: 2 processes" "^ranks  *2  *0 " 5
check "the process table's RANK column" "^     PID  ROLE   RANK COMMAND " 5
check "rank 0's row" "^ *[0-9]*  rank  *0 " 5
check "rank 1's row" "^ *[0-9]*  rank  *1 " 5
check "the main process has no rank" "^ *[0-9]*  main  *- " 5
check "the counters' ranks column" "^Counters  *main  *workers  *other  *ranks " 5
check "task-clock counted for the ranks" "^task-clock  *[0-9][0-9,.]*  *- *  *[0-9,.-]*  *[0-9][0-9,.]* " 5
check "the job's images/s and data wait" "images/s.*mean [0-9.]*k\? *wait [0-9.]*%" 5
check_not "not the main process's empty DataLoader" "DataLoader gave 0 batches"
T capture-pane -p -t t >"$tmp/dash"
T send-keys -t t q
check "after q: cnntop exit 0" "^cnntop exit 0$" 30
T capture-pane -p -t t -S -400 >"$tmp/after"
check_file "after q: the job's images/s, the sum over the ranks" "$tmp/after" \
    "^  Images/s:  *[0-9.]*, the sum over the ranks"
tui_end

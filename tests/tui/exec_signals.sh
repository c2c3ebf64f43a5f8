#!/bin/sh
# tests/tui/exec_signals.sh CNNTOP: `cnntop exec` on a terminal, under
# signals and with output that outlives the command, in tmux.
#   - without a terminal curses can drive (TERM unset, TERM=dumb, a TERM
#     with no terminfo entry) exec runs headless: SIGTERM to cnntop goes
#     on to the command, cnntop waits, writes back the output it captured,
#     prints the summary and exits with the command's status;
#   - the dashboard started with SIGHUP ignored (nohup): the command has it
#     ignored too, and kill -HUP neither closes the dashboard nor reaches
#     the command;
#   - a line written by a process the command left, after it exited, shows
#     in the tail and is written back after q (without a terminal to
#     drive, written back and said on stderr); one that keeps the output
#     open is given up after a few seconds, said on the status line and on
#     stderr.
# No sleeps as speed assumptions: markers and the screen are polled.
NAME=test_tui_exec_signals
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
NO_DATA=1
. "$(dirname "$0")/lib.sh"
touch "$tmp/keep" # left-behind loops below run while it exists

# wait_file FILE: polls for it, 60 s at most.
wait_file() {
    n=0
    while [ ! -e "$1" ] && [ $n -lt 600 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    [ -e "$1" ]
}

# The command writes cnntop's pid ($PPID) and waits for SIGTERM.
CMD="sh -c 'trap \"echo got-term; exit 7\" TERM; echo line-one; echo \$PPID >$tmp/pid.tmp; mv $tmp/pid.tmp $tmp/pid; while :; do sleep 0.1; done'"

# fresh: a clear screen and no scrollback, so that a capture of the
# history holds this case's lines only.
fresh() {
    T send-keys -t t "clear" Enter
    wait_for '^tui\$ *$' 10
    T clear-history -t t
}

tui_shell 100 34
for term in "-u TERM" TERM=dumb TERM=nosuchterm-cnntop; do
    rm -f "$tmp/pid"
    fresh
    tui_run "--version >/dev/null; env $term $CNNTOP exec --no-hook -- $CMD"
    checks=$((checks + 1))
    if ! wait_file "$tmp/pid"; then
        fail "env $term: the command never started"
        continue
    fi
    kill -TERM "$(cat "$tmp/pid")"
    check "env $term: SIGTERM passed on, the command's status" "^cnntop exit 7$" 60 || continue
    T capture-pane -p -t t -S -400 >"$tmp/after"
    check_file "env $term: no dashboard, said why" "$tmp/after" "^cnntop: the dashboard"
    check_file "env $term: the captured output written back" "$tmp/after" -x "line-one"
    check_file "env $term: the command got SIGTERM" "$tmp/after" -x "got-term"
    check_file "env $term: the summary" "$tmp/after" "^  Exit:  *status 7$"
done

# nohup: SIGHUP ignored by cnntop and the command; kill -HUP changes nothing.
GO=$tmp/go
fresh
rm -f "$tmp/pid"
tui_run "--version >/dev/null; env --ignore-signal=HUP $CNNTOP exec --no-hook -- sh -c 'grep SigIgn /proc/self/status; echo \$PPID >$tmp/pid.tmp; mv $tmp/pid.tmp $tmp/pid; while [ ! -e $GO ]; do sleep 0.1; done; echo out-last'"
check "nohup: the dashboard" "elapsed [0-9.]* s   running" 30
# SigIgn's last hex digit holds SIGHUP (bit 0): odd.
check "nohup: the command has SIGHUP ignored" "^SigIgn: *[0-9a-f]*[13579bdf] *$" 10
wait_file "$tmp/pid" || fail "nohup: no pid"
kill -HUP "$(cat "$tmp/pid")"
touch "$GO"
check "nohup: kill -HUP: the command goes on to its end" "exited 0" 30
check "nohup: its last line" "out-last" 5
check_not "nohup: kill -HUP: the dashboard stays" "cnntop exit"
T send-keys -t t q
check "nohup: q, the command's status" "^cnntop exit 0$" 20

# A line written after the command exited: in the tail, and written back.
fresh
tui_run "exec --no-hook -- sh -c '(while kill -0 \$\$ 2>/dev/null; do sleep 0.05; done; echo late-line) & echo early-line'"
check "a late line: the command ended" "exited 0" 30
check "a late line: in the tail" "^late-line" 30
T send-keys -t t q
check "a late line: q" "^cnntop exit 0$" 20
T capture-pane -p -t t -S -400 >"$tmp/after"
check_file "a late line: written back" "$tmp/after" -x "late-line"

# The same without a terminal to drive: written back, and said on stderr.
fresh
tui_run "--version >/dev/null; env -u TERM $CNNTOP exec --no-hook -- sh -c '(while kill -0 \$\$ 2>/dev/null; do sleep 0.05; done; echo late-line) & echo early-line'"
check "TERM unset, a late line: exit 0" "^cnntop exit 0$" 60
T capture-pane -p -t t -S -400 >"$tmp/after"
check_file "TERM unset, a late line: written back" "$tmp/after" -x "late-line"
check_file "TERM unset, a late line: said" "$tmp/after" \
    "^cnntop: exec: output still open after the command exited; read for at most [0-9]* more s$"

# A process that never closes the output: given up, said, q ends at once.
fresh
tui_run "exec --no-hook -- sh -c 'while [ -e $tmp/keep ]; do sleep 0.1; done & echo hi'"
check "a daemon: the command ended" "exited 0" 30
check "a daemon: given up, said" "stopped reading the output" 60
T send-keys -t t q
check "a daemon: q" "^cnntop exit 0$" 20
T capture-pane -p -t t -S -400 >"$tmp/after"
check_file "a daemon: said on stderr too" "$tmp/after" \
    "^cnntop: exec: stopped reading the output: a process the command left still holds it open$"
tui_end

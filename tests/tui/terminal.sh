#!/bin/sh
# tests/tui/terminal.sh CNNTOP: the dashboard and the terminal it is given.
#   - TERM unset, or naming no known terminal: one line "cnntop: ..." and
#     exit 2 (not ncurses' "Error opening terminal" and exit 1);
#   - SIGSEGV, SIGABRT, SIGBUS: the terminal is put back (the shell's
#     prompt on the normal screen, no escape debris) and cnntop dies of
#     the same signal (exit 128 + N), as it quits on SIGINT/SIGTERM.
NAME=test_tui_terminal
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"
# The signals here are sent on purpose: a sanitizer must let them through
# to cnntop's handler instead of reporting them.
SAN_ENV="$BLAS_ENV ASAN_OPTIONS=${ASAN_OPTIONS:-}:handle_segv=0:handle_sigbus=0:handle_abort=0:log_path=$tmp/asan UBSAN_OPTIONS=print_stacktrace=1:log_path=$tmp/ubsan LSAN_OPTIONS=suppressions=$LSAN_SUPP:print_suppressions=0"

tui_shell 80 24
T send-keys -t t "clear; env -u TERM $CNNTOP; echo \"cnntop exit \$?\"" Enter
check "TERM unset: one line" "^cnntop: the dashboard needs TERM set" 20
check "TERM unset: exit 2" "^cnntop exit 2$" 5
T send-keys -t t "clear; TERM=no-such-terminal $CNNTOP; echo \"cnntop exit \$?\"" Enter
check "unknown TERM: one line" "^cnntop: the dashboard cannot drive terminal type 'no-such-terminal'" 20
check "unknown TERM: exit 2" "^cnntop exit 2$" 5
check_not "not ncurses' own message" "Error opening terminal"

for sig in SEGV:139 ABRT:134 BUS:135; do
    name=${sig%%:*} want=${sig#*:}
    tui_run "--limit 500"
    check "SIG$name: the dashboard is up" "idle: press s" 20 || continue
    sh_pid=$(T display -p -t t '#{pane_pid}')
    pid=$(ps -o pid= --ppid "$sh_pid" | tr -d ' ' | head -1)
    kill -s "$name" "$pid"
    check "SIG$name: dies of it with the terminal back" "^cnntop exit $want$" 20
    checks=$((checks + 1))
    if grep -q '\^\[\|\[?[0-9]\|\[[0-9;]*m\|idle: press s' "$tmp/screen"; then
        fail "SIG$name: the dashboard's screen or escape debris left"
    fi
done
tui_end

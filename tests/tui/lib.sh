# tests/tui/lib.sh: what the dashboard's tmux tests share (sourced).
#
# Each test drives the real cnntop through a private tmux server (-L) with
# a throwaway HOME and XDG_CONFIG_HOME, sends keys, and reads the screen
# with capture-pane, polling with a timeout instead of sleeping, so that a
# loaded 2-core machine only makes it slower, never wrong.
#
# cnntop runs in a shell in the pane and the shell prints "cnntop exit N"
# when it ends, so a crash is seen even when the screen looks right.  The
# sanitizers' reports (an ASan+UBSan build) go to files under $tmp; any
# such file fails the test (tui_end), so a use-after-free fails CI.
#
# Set before sourcing: CNNTOP (the binary) and NAME (for messages);
# NO_DATA=1 for a test that trains nothing (tests/tui/exec.sh).
set -u
DATA=/usr/share/datasets/fashion-mnist
command -v tmux >/dev/null 2>&1 || { echo "$NAME: skipped: tmux is not installed"; exit 77; }
[ "${NO_DATA:-0}" = 1 ] || [ -r "$DATA" ] || { echo "$NAME: skipped: no $DATA"; exit 77; }
tmp=$(mktemp -d)
SOCK=cnntop$$
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'T kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT
fails=0
checks=0
LSAN_SUPP=$(cd "$(dirname "$0")" && pwd)/lsan.supp
# The caller's OPENBLAS_CORETYPE, kept through env -i: it picks the BLAS
# kernels and so the calibration a run caches, and a test compares the
# dashboard against a plain run in the caller's environment.
BLAS_ENV=
[ -n "${OPENBLAS_CORETYPE+set}" ] && BLAS_ENV="OPENBLAS_CORETYPE='$OPENBLAS_CORETYPE'"
# The sanitizers' settings, passed through env -i; harmless in a release build.
SAN_ENV="$BLAS_ENV ASAN_OPTIONS=${ASAN_OPTIONS:-}:log_path=$tmp/asan UBSAN_OPTIONS=print_stacktrace=1:log_path=$tmp/ubsan LSAN_OPTIONS=suppressions=$LSAN_SUPP:print_suppressions=0"

cap() { T capture-pane -p -t t; }
# wait_for PATTERN SECONDS: polls the screen every 0.2 s into $tmp/screen.
wait_for() {
    n=0
    while [ $n -lt $(($2 * 5)) ]; do
        cap >"$tmp/screen" 2>/dev/null
        grep -q -- "$1" "$tmp/screen" && return 0
        sleep 0.2
        n=$((n + 1))
    done
    return 1
}
fail() { # fail MESSAGE: counts a failure, shows the screen
    echo "FAIL: $1" >&2
    [ -f "$tmp/screen" ] && cat "$tmp/screen" >&2
    fails=$((fails + 1))
}
# check DESCRIPTION PATTERN SECONDS: the pattern shows within the time.
# When cnntop has ended unexpectedly (a crash), the test stops at once
# rather than wait out every later check.
check() {
    checks=$((checks + 1))
    wait_for "$2" "$3" && return 0
    fail "$1 (no '$2' on screen)"
    case $2 in *"cnntop exit"*) return 1 ;; esac
    if grep -q "cnntop exit [0-9]" "$tmp/screen"; then
        echo "FAIL: cnntop ended before the test did" >&2
        tui_end
        exit 1
    fi
    return 1
}
# check_gone DESCRIPTION PATTERN SECONDS: the pattern leaves the screen
# within the time (after a key, the next frame).
check_gone() {
    checks=$((checks + 1))
    n=0
    while [ $n -lt $(($3 * 5)) ]; do
        cap >"$tmp/screen" 2>/dev/null
        grep -q -- "$2" "$tmp/screen" || return 0
        sleep 0.2
        n=$((n + 1))
    done
    fail "$1 ('$2' still on screen)"
    return 1
}
check_not() { # check_not DESCRIPTION PATTERN: not on the screen now
    checks=$((checks + 1))
    cap >"$tmp/screen"
    grep -q -- "$2" "$tmp/screen" || return 0
    fail "$1 ('$2' on screen)"
    return 1
}
check_file() { # check_file DESCRIPTION FILE GREP-ARGS...
    d=$1 f=$2
    shift 2
    checks=$((checks + 1))
    grep -q "$@" "$f" 2>/dev/null && return 0
    echo "FAIL: $d ($f):" >&2
    cat "$f" >&2 2>/dev/null
    fails=$((fails + 1))
    return 1
}
# tui_shell COLS LINES [VAR=VALUE...]: a fresh session with a shell whose
# prompt is "tui$ "; the environment is emptied but for these.
tui_shell() {
    c=$1 l=$2
    shift 2
    T new-session -d -s t -x "$c" -y "$l" -c "$tmp" \
        "env -i PATH=/usr/bin:/bin HOME=$tmp XDG_CONFIG_HOME=$tmp/cfg XDG_CACHE_HOME=${XDG_CACHE_HOME:-$tmp/cache} TERM=screen-256color LANG=C.UTF-8 $SAN_ENV $* PS1='tui\$ ' sh"
    wait_for '^tui\$' 10
}
# tui_run ARGS...: cnntop in the shell, then its exit status.
tui_run() {
    T send-keys -t t "clear; $CNNTOP $*; echo \"cnntop exit \$?\"" Enter
}
# tui_quit: q, and the shell is back with status 0 and no debris.
tui_quit() {
    T send-keys -t t q
    check "q quits with status 0" "^cnntop exit 0$" 20 || return 1
    checks=$((checks + 1))
    if grep -q '\^\[\|\[?[0-9]\|\[[0-9;]*m' "$tmp/screen"; then
        fail "escape debris after quit"
    fi
}
# tui_end: the sanitizers' verdict and the summary; the test's exit status.
tui_end() {
    for f in "$tmp"/asan* "$tmp"/ubsan*; do
        [ -e "$f" ] || continue
        checks=$((checks + 1))
        echo "FAIL: a sanitizer reported ($f):" >&2
        cat "$f" >&2
        fails=$((fails + 1))
    done
    echo "$NAME: $((checks - fails)) passed, $fails failed"
    [ "$fails" -eq 0 ]
}

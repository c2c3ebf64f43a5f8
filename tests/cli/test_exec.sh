#!/bin/sh
# test_exec.sh CNNTOP PYTHON: `cnntop exec -- CMD`, the profiler for any
# command.  A plain `sh -c` gets counters and a summary, its exit status
# passed through, a signal that kills it reported as such, bad input a
# one-line error; with PYTHON (Debian's, with torch) the seed-shaped
# script tests/exec/train_seed.py gets its DataLoader workers their role.
# No timing thresholds: the machine may be loaded.
set -u
CNNTOP=$1
PY=${2:-}
HERE=$(cd "$(dirname "$0")/.." && pwd)
SCRIPT=$HERE/exec/train_seed.py
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "FAIL: $*" >&2
    [ -f "$tmp/out" ] && sed 's/^/  out: /' "$tmp/out" >&2
    [ -f "$tmp/err" ] && sed 's/^/  err: /' "$tmp/err" >&2
    fails=$((fails + 1))
}

# run CODE ARGS...: cnntop ARGS, its exit code must be CODE.
run() {
    code=$1
    shift
    "$CNNTOP" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    [ "$got" -eq "$code" ] || fail "cnntop $*: exit $got (want $code)"
}

# has PATTERN: the summary has a line matching PATTERN.
has() {
    grep -q -- "$1" "$tmp/out" || fail "summary lacks /$1/"
}

# A busy shell with one child: counters for the main process (task-clock
# counted, a hardware event counted or n/a with its reason), the child in
# "other children", the table of processes.
run 0 exec -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 0.2; true'
has "^ Performance of cnntop exec: sh -c 'i=0; while"
has "^  Exit:  *status 0$"
has "^  Processes:  *1 main, 0 data-loader workers, 1 other child$"
has "^ Counters, main process (1 process): 1 thread over"
has "^ *[0-9][0-9,.]* msec task-clock  *# *[0-9.]* CPUs utilized"
has "^ Counters, other children (1 process)"
has "^ Counters, data-loader workers: none ran$"
grep -Eq "^ *([0-9][0-9,]*  +cycles|<not (supported|counted)>  +cycles  +[a-z])" "$tmp/out" ||
    fail "cycles is neither counted nor n/a with a reason"
has "^  scheduler: "
has "^  Verdict:  "
has "^  Peak RSS:  *[0-9.]* MiB"
grep -Eq "^ +[0-9]+ +[0-9]+  main +sh " "$tmp/out" || fail "no main row for sh"
grep -Eq "^ +[0-9]+ +[0-9]+  other +sleep " "$tmp/out" || fail "no other row for sleep"
grep -q "Images/s\|Data wait" "$tmp/out" && fail "sh -c: a progress part"
# Only the events asked for.
run 0 exec -e task-clock -- true
has "msec task-clock"
grep -q "page-faults" "$tmp/out" && fail "-e task-clock still shows page-faults"

# The exit status is the command's; a signal's is 128+N, and said.
run 7 exec -- sh -c 'exit 7'
has "^  Exit:  *status 7$"
run 143 exec -- sh -c 'kill -TERM $$'
has "^  Exit:  *killed by signal 15 (Terminated): exit code 143$"
run 137 exec -- sh -c 'kill -KILL $$'
has "killed by signal 9"

# Bad input: one line, non-zero, nothing run.
for args in "exec" "exec --" "exec -e task-clock --"; do
    # shellcheck disable=SC2086
    run 2 $args
    grep -q "exec needs a command" "$tmp/err" || fail "cnntop $args: no 'exec needs a command'"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "cnntop $args: error is not one line"
done
run 127 exec -- /nonexistent/cmd --x
grep -q "^cnntop: exec: /nonexistent/cmd: No such file or directory$" "$tmp/err" ||
    fail "missing command: no one-line error naming it"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "missing command: error is not one line"
[ -s "$tmp/out" ] && fail "missing command: a summary was printed"
run 126 exec -- "$tmp"
grep -q "Permission denied" "$tmp/err" || fail "a directory as the command: not 'Permission denied'"
run 2 exec -e 'task-clock,,x' -- true
grep -q "^cnntop: -e: .*empty event name$" "$tmp/err" || fail "bad -e list: no one-line error"
# An event this machine cannot count is n/a with its reason, never 0.
run 0 exec -e task-clock,bogus:: -- true
has "<not supported>  *bogus::  *unknown event 'bogus::'"

# PyTorch: the DataLoader's forked workers get their role.
if [ -z "$PY" ] || ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "test_exec: python3-torch missing: the PyTorch part skipped"
else
    for w in 0 2; do
        run 0 exec -e task-clock,page-faults -- "$PY" "$SCRIPT" --workers $w --images 384 \
            --batch 64 --threads 1
        has "^script: [0-9]* images in"
        if [ $w -eq 0 ]; then
            has "^  Processes:  *1 main, 0 data-loader workers, 0 other children$"
        else
            has "^  Processes:  *1 main, 2 data-loader workers, 0 other children$"
            has "^ Counters, data-loader workers (2 processes): "
            n=$(grep -Ec "^ +[0-9]+ +[0-9]+  worker +python" "$tmp/out")
            [ "$n" -eq 2 ] || fail "workers 2: $n worker rows in the process table"
        fi
    done
fi

# --progress: the command's output passes through unchanged, and the
# figure of each matching line (group 1, or the first number) is summed.
run 0 exec --progress 'rate ([0-9.]+) img/s' -- sh -c \
    'for r in 10 20.5 30; do echo "step 1: rate $r img/s"; done; echo to-err >&2; printf "rate 0.5 img/s"'
[ "$(grep -c '^step 1: rate .* img/s$' "$tmp/out")" -eq 3 ] || fail "--progress: the output did not pass through"
grep -q "^to-err$" "$tmp/err" || fail "--progress: stderr did not pass through"
has "^  Progress:  *last 0.5, mean 15.25 (min 0.5, max 30) over 4 lines matching --progress$"
run 0 exec --progress 'loss [^ ]+' -- sh -c 'echo loss 1.5e-1 at step 7'
has "^  Progress:  *last 0.15, "
run 0 exec --progress 'nothing' -- true
has "^  Progress:  *n/a: no output line matched --progress 'nothing'"
run 2 exec --progress 'x(' -- true
grep -q "^cnntop: --progress: 'x(': " "$tmp/err" || fail "bad --progress regex: no one-line error"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "bad --progress regex: error is not one line"

# The hook chains to a sitecustomize the user has, with or without
# --no-hook, and says nothing for a Python command without a DataLoader.
mkdir "$tmp/site"
printf 'import os\nopen(os.environ["MARK"], "w").write("ran")\n' >"$tmp/site/sitecustomize.py"
for hook in "" --no-hook; do
    rm -f "$tmp/mark"
    if [ -n "$PY" ]; then
        # shellcheck disable=SC2086
        MARK=$tmp/mark PYTHONPATH=$tmp/site run 0 exec $hook -- "$PY" -c 'import sys'
        [ "$(cat "$tmp/mark" 2>/dev/null)" = ran ] || fail "exec $hook: the user's sitecustomize did not run"
        grep -q "Images/s" "$tmp/out" && fail "exec $hook: Images/s without a DataLoader"
    fi
done

# PyTorch: the hook's figures.  Images/s within 10% of the script's own
# count (one run: the two measure the same batches); data wait clearly
# higher with a deliberately slow dataset than without (two runs, the
# share of each run's own time).
rate() { sed -n "s/^  Images\/s: *\([0-9.]*\) .*/\1/p" "$tmp/out"; }
wait_pct() { sed -n "s/^  Data wait: *\([0-9.]*\)% .*/\1/p" "$tmp/out"; }
if [ -n "$PY" ] && "$PY" -c 'import torch' 2>/dev/null; then
    run 0 exec -e task-clock -- "$PY" "$SCRIPT" --workers 2 --images 384 --batch 64 --threads 1
    mine=$(rate)
    theirs=$(sed -n "s/^script: .*: \([0-9.]*\) images\/s$/\1/p" "$tmp/out")
    awk -v a="$mine" -v b="$theirs" 'BEGIN { exit !(a > 0 && b > 0 && a / b < 1.1 && b / a < 1.1) }' ||
        fail "images/s: cnntop $mine, the script $theirs: more than 10% apart"
    has "^  Bound:  *compute-bound\|^  Bound:  *loader-bound"
    run 0 exec -e task-clock -- "$PY" "$SCRIPT" --workers 0 --images 256 --batch 64 --threads 1
    fast=$(wait_pct)
    run 0 exec -e task-clock -- "$PY" "$SCRIPT" --workers 0 --images 256 --batch 64 --threads 1 \
        --slow 0.01
    slow=$(wait_pct)
    awk -v f="$fast" -v s="$slow" 'BEGIN { exit !(f != "" && s != "" && s > 3 * f && s > 20) }' ||
        fail "data wait: slow dataset $slow%, plain $fast%: not clearly higher"
    has "^  Bound:  *loader-bound"
    run 0 exec --no-hook -e task-clock -- "$PY" "$SCRIPT" --workers 0 --images 128 --threads 1
    grep -q "Images/s" "$tmp/out" && fail "--no-hook: Images/s still reported"
fi

if [ "$fails" -ne 0 ]; then
    echo "test_exec: $fails failure(s)" >&2
    exit 1
fi
echo "test_exec: ok"

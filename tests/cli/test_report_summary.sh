#!/bin/sh
# test_report_summary.sh CNNTOP: the text summary is a format of the run
# record.  `cnntop report r.json` of a `cnntop run --export r.json` prints
# what `run` printed, line by line: the heading, the figures, the "On
# paper" sketch and its warning, the repeats' mean ± σ and warnings
# (--runs 2), and with -e the counters block.  No line may differ: both
# print the same record (the times too are the record's, not measured
# again).  Needs the default data; skips (77) without it.
set -u
CNNTOP=$1
DATA=/usr/share/datasets/fashion-mnist
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -r "$DATA/train-images-idx3-ubyte.gz" ] || [ -r "$DATA/train-images-idx3-ubyte" ] ||
    { echo "SKIP: no data in $DATA"; exit 77; }

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# same NAME RUN-ARGS...: run --export, then report; the two stdouts match.
same() {
    name=$1
    shift
    checks=$((checks + 1))
    if ! "$CNNTOP" run "$@" --export "$tmp/$name.json" >"$tmp/$name.run" 2>"$tmp/$name.err"; then
        fail "$name: run failed"
        cat "$tmp/$name.err" >&2
        return
    fi
    if ! "$CNNTOP" report "$tmp/$name.json" >"$tmp/$name.report" 2>>"$tmp/$name.err"; then
        fail "$name: report failed"
        cat "$tmp/$name.err" >&2
        return
    fi
    if ! diff "$tmp/$name.run" "$tmp/$name.report" >"$tmp/$name.diff"; then
        fail "$name: report prints another summary than run (< run, > report):"
        cat "$tmp/$name.diff" >&2
    fi
}

# has NAME PATTERN: the run's summary holds a line matching PATTERN.
has() {
    checks=$((checks + 1))
    grep -q "$2" "$tmp/$1.run" || fail "$1: no line matching '$2' in run's summary"
}

small="--steps 3 --limit 640 --test-limit 200"

same one $small
has one "^ Performance of cnntop run (batch"
has one "^  Verdict:  "
# The sketch needs the calibration, measured on first use (XDG_CACHE_HOME).
has one "^  On paper:  "

same repeats --runs 2 $small
has repeats "^  Time (mean ± σ):  "

# -e: the counters block, whatever the machine exposes (a counter that
# cannot be had is said so, <not supported>, in both).
same counters -e task-clock,context-switches,cycles $small
has counters "^ Counters (the threads of every measured run, by role):"
has counters "^ Counters, compute (trainer threads): "

echo "test_report_summary: $checks checks, $fails failed"
[ "$fails" -eq 0 ]

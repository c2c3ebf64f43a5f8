#!/bin/sh
# test_exec_progress.sh CNNTOP: `cnntop exec --progress REGEX` over the
# output real commands write.  A carriage return ends a record as a
# newline does (a tqdm-style bar redraws with \r and ends with one \n), so
# the figure is the latest redraw's, whatever the line's length; \r\n
# line ends, a line of megabytes with no newline, stdout and stderr
# interleaved mid-record, and a last record without its terminator are
# each read right.  Patterns that cost too much for any matcher (a
# back-reference) or are too big once their counts are written out are
# refused before the command runs with a one-line error; catastrophic
# backtracking patterns without one finish at once.  No timing thresholds.
set -u
CNNTOP=$1
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
    printf "FAIL: %s\n" "$*" >&2
    [ -f "$tmp/out" ] && head -c 2000 "$tmp/out" | sed 's/^/  out: /' >&2
    [ -f "$tmp/err" ] && head -c 2000 "$tmp/err" | sed 's/^/  err: /' >&2
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

# progress WANT: the summary's Progress line is "Progress: WANT".
progress() {
    grep -q -- "^  Progress:  *$1\$" "$tmp/out" ||
        fail "want Progress: $1; got $(grep '^  Progress:' "$tmp/out")"
}

# A tqdm-style bar: 300 redraws after \r, one \n at the end (over 4 KiB).
run 0 exec --progress '([0-9.]+)it/s' -- awk 'BEGIN {
    for (i = 1; i <= 300; i++) printf "\r 50%%|#####     | %d/300 [00:01<00:01, %d.25it/s]", i, i
    printf "\n" }'
progress "last 300.25, mean 150.75 (min 1.25, max 300.25) over 300 lines matching --progress"
[ "$(head -c 4 "$tmp/out" | od -An -c | tr -d ' ')" = '\r50' ] || fail "the bar did not pass through"

# A short bar: the latest redraw, not the first.
run 0 exec --progress '([0-9.]+)it/s' -- sh -c \
    'for i in 1 2 3 4 5; do printf "\r%d%%|###| %d.5it/s" "$i" "$i"; done; echo'
progress "last 5.5, mean 3.5 (min 1.5, max 5.5) over 5 lines matching --progress"

# The figure: group 1 when it took part in the match, else the match's
# first number.
run 0 exec --progress 'step [0-9]+ loss ([0-9.]+)' -- printf 'step 7 loss 0.5\r'
progress "last 0.5, mean 0.5 (min 0.5, max 0.5) over 1 line matching --progress"
run 0 exec --progress '(loss )?x[0-9.]+' -- printf 'x12.5\n'
progress "last 12.5, mean 12.5 (min 12.5, max 12.5) over 1 line matching --progress"

# \r\n line ends: one record each, and $ matches before the \r.
run 0 exec --progress 'rate ([0-9]+) it/s$' -- printf 'rate 1 it/s\r\nrate 2 it/s\r\nrate 3 it/s\r\n'
progress "last 3, mean 2 (min 1, max 3) over 3 lines matching --progress"

# The last record without its terminator counts, after the ones before it.
run 0 exec --progress 'rate ([0-9]+) it/s' -- printf 'rate 3 it/s\rrate 4 it/s'
progress "last 4, mean 3.5 (min 3, max 4) over 2 lines matching --progress"

# Megabytes without any newline: the figure at its end is read, and the
# (leftmost) match at its start is not lost to what follows.
run 0 exec --progress '([0-9.]+)it/s' -- awk 'BEGIN {
    s = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
    for (i = 0; i < 30000; i++) printf "%s", s
    printf " 7.5it/s" }'
progress "last 7.5, mean 7.5 (min 7.5, max 7.5) over 1 line matching --progress"
[ "$(wc -c <"$tmp/out")" -gt 3000000 ] || fail "the long line did not pass through"
run 0 exec --progress 'rate ([0-9]+) it/s' -- awk 'BEGIN {
    printf "rate 9 it/s "
    for (i = 0; i < 30000; i++) printf "%s", "0123456789 it/s rate  0123456789 it/s rate 0123456789 it/s rate xx"
    printf "\n" }'
progress "last 9, mean 9 (min 9, max 9) over 1 line matching --progress"

# stdout and stderr interleaved in the middle of their records: each
# stream's records are its own.  (Which stream's comes last is up to the
# scheduler, so "last" is not checked.)
run 0 exec --progress 'rate ([0-9]+) it/s' -- sh -c 'printf "rate 1"; printf "rate 5 it/s\n" >&2
    printf "0 it/s\n"; printf "rate 2" >&2; printf "rate 8 it/s\r"; printf " it/s\n" >&2'
grep -q "mean 6.25 (min 2, max 10) over 4 lines matching --progress$" "$tmp/out" ||
    fail "interleaved streams: want mean 6.25 (min 2, max 10) over 4 lines"
[ "$(head -2 "$tmp/err" | tr '\n' ' ')" = "rate 5 it/s rate 2 it/s " ] ||
    fail "interleaved streams: stderr did not pass through"

# refused PATTERN WHY: exit 2 before the command runs, one line naming
# --progress, the pattern and WHY.
refused() {
    rm -f "$tmp/ran"
    run 2 exec --progress "$1" -- touch "$tmp/ran"
    [ -e "$tmp/ran" ] && fail "--progress '$1': the command ran"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "--progress '$1': the error is not one line"
    grep -qF -- "cnntop: --progress: '$1': $2" "$tmp/err" || fail "--progress '$1': want '$2'"
}
refused '^(a*)*\1(a|b)*c$' 'back-references (\1) are not supported'
refused '((((a{0,30}){0,30}){0,30}){0,30})' 'too large once its counts are written out'
refused '(x{1000}){1000}' 'too large once its counts are written out'
refused 'a{0,99999}' 'a count over 32767'
refused '\d+ it/s' "'\\d' is not POSIX extended syntax"
refused "$(printf '%0200d' 0 | tr 0 '(')" 'groups nested more than 64 deep'
refused 'rate [0-9' "'[' without its ']'"

# Patterns that backtrack forever elsewhere, on 1000-byte lines: done at
# once, and right.
run 0 exec --progress '^([0-9]+)(a*)*(a|b)*c$' -- awk 'BEGIN {
    for (i = 1; i <= 200; i++) { printf "%d", i; for (j = 0; j < 1000; j++) printf "a"; printf "c\n" } }'
progress "last 200, mean 100.5 (min 1, max 200) over 200 lines matching --progress"
run 0 exec --progress '(a|aa)*(.*)*x([0-9]+)' -- awk 'BEGIN {
    for (i = 1; i <= 200; i++) { for (j = 0; j < 1000; j++) printf "a"; printf "\n" } }'
grep -qF "n/a: no output line matched --progress '(a|aa)*(.*)*x([0-9]+)'" "$tmp/out" ||
    fail "(a|aa)*(.*)*x: want n/a"

# --progress is exec's alone.
run 2 sweep --cmd 'true {batch}' --batch 1 --progress 'x'
grep -q "progress" "$tmp/err" || fail "sweep --progress: not refused by name"

if [ "$fails" -ne 0 ]; then
    echo "test_exec_progress: $fails failure(s)" >&2
    exit 1
fi
echo "test_exec_progress: ok"

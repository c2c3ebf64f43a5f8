#!/bin/sh
# test_cli.sh CNNTOP MANPAGE: the command line as a user meets it.
# Bad input gets a one-line error naming the thing and a non-zero exit;
# --help and the man page list the same options; run/eval round trip.
set -u
CNNTOP=$1
MAN=$2
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect CODE PATTERN -- ARGS...: exit code and a stderr line matching PATTERN.
expect() {
    code=$1 pat=$2
    shift 3
    checks=$((checks + 1))
    "$CNNTOP" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -ne "$code" ] || ! grep -q -- "$pat" "$tmp/err"; then
        echo "FAIL: cnntop $*: exit $got (want $code), stderr:" >&2
        cat "$tmp/err" >&2
        fails=$((fails + 1))
    elif [ "$code" -ne 0 ] && [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
        echo "FAIL: cnntop $*: error is not one line:" >&2
        cat "$tmp/err" >&2
        fails=$((fails + 1))
    fi
}

expect 2 "unknown option '--bogus'" -- run --bogus
expect 2 "unknown command 'frobnicate'" -- frobnicate
expect 2 "\-\-batch: 'abc' is not a whole number" -- run --batch abc
expect 2 "\-\-batch: 0 is out of range" -- run --batch 0
expect 2 "\-\-batch: -5 is out of range" -- run --batch -5
expect 2 "\-\-batch: 999999999 is out of range" -- run --batch 999999999
expect 2 "\-\-threads: 0 is out of range" -- run --threads 0
expect 2 "\-\-lr: 'nan' is not a finite number" -- run --lr nan
expect 2 "\-\-lr: -1 is out of range" -- run --lr -1
expect 2 "\-\-epochs needs a value" -- run --epochs
expect 2 "eval needs --load FILE" -- eval
expect 2 "\-\-lr does not apply" -- eval --load x --lr 0.1
expect 1 "/nonexistent/dir" -- run --data /nonexistent/dir
expect 1 "$tmp/none.ckpt" -- eval --load "$tmp/none.ckpt" --test-limit 10
printf 'not a checkpoint' >"$tmp/bad.ckpt"
expect 1 "$tmp/bad.ckpt: not a cnntop checkpoint" -- eval --load "$tmp/bad.ckpt" --test-limit 10

# --help names every option, and so does the man page.
checks=$((checks + 1))
"$CNNTOP" --help >"$tmp/help" || { echo "FAIL: --help exit" >&2; fails=$((fails + 1)); }
opts=$(grep -o -- '^  --[a-z-]*' "$tmp/help" | tr -d ' ' | sort -u)
[ -n "$opts" ] || { echo "FAIL: no options in --help" >&2; fails=$((fails + 1)); }
for o in $opts; do
    checks=$((checks + 1))
    grep -q -- "^\.B.*\\\\$o\|^\.BR.*\\\\$o\|^\\\\fB\\\\$o" "$MAN" ||
        grep -q -- "$(printf '%s' "$o" | sed 's/-/\\\\-/g')" "$MAN" ||
        { echo "FAIL: man page lacks $o" >&2; fails=$((fails + 1)); }
done
checks=$((checks + 1))
"$CNNTOP" --version | grep -q "^cnntop [0-9]" || { echo "FAIL: --version" >&2; fails=$((fails + 1)); }

# A short run saves a checkpoint; eval reads it back with the same accuracy.
if [ -r /usr/share/datasets/fashion-mnist ]; then
    checks=$((checks + 1))
    if "$CNNTOP" run --limit 640 --test-limit 500 --batch 64 --save "$tmp/m.ckpt" \
        >"$tmp/run" 2>"$tmp/err" &&
        "$CNNTOP" eval --load "$tmp/m.ckpt" --test-limit 500 >"$tmp/eval" 2>>"$tmp/err"; then
        a=$(grep "Test accuracy" "$tmp/run" | awk '{print $3}')
        b=$(grep "Test accuracy" "$tmp/eval" | awk '{print $3}')
        [ -n "$a" ] && [ "$a" = "$b" ] ||
            { echo "FAIL: run accuracy '$a' != eval accuracy '$b'" >&2; fails=$((fails + 1)); }
        for f in "Training wall time" "Throughput" "Peak memory" "Final training loss" "Step time split" "CPU:"; do
            checks=$((checks + 1))
            grep -q "$f" "$tmp/run" || { echo "FAIL: summary lacks '$f'" >&2; fails=$((fails + 1)); }
        done
    else
        echo "FAIL: run/eval failed:" >&2
        cat "$tmp/err" >&2
        fails=$((fails + 1))
    fi
    # SIGINT stops after the current step, prints the summary, exits 130.
    checks=$((checks + 1))
    "$CNNTOP" run --steps 1000000 --test-limit 100 >"$tmp/int" 2>"$tmp/interr" &
    pid=$!
    # Wait for the first progress line (training has started), at most 60 s.
    n=0
    while ! grep -q "step 1/" "$tmp/interr" 2>/dev/null && [ $n -lt 300 ]; do
        sleep 0.2
        n=$((n + 1))
    done
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    [ "$rc" -eq 130 ] && grep -q "stopped early" "$tmp/int" ||
        { echo "FAIL: SIGINT: exit $rc, summary:" >&2; cat "$tmp/int" >&2; fails=$((fails + 1)); }
    ls "$tmp" | grep -q '\.tmp\.' && { echo "FAIL: temporary file left behind" >&2; fails=$((fails + 1)); }
fi

echo "test_cli: $((checks - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]

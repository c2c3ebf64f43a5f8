#!/bin/sh
# test_sweep_cmd.sh CNNTOP: `cnntop sweep --cmd TEMPLATE` (and the engine's
# sweep) at their edges:
#   - a stop signal (SIGTERM, SIGHUP, SIGINT) sent to cnntop stops the sweep
#     whenever it comes: during a run whose command does not die of it,
#     during a warm-up run, between two configurations, and, from outside,
#     in a sweep of 10000 runs of `true` (mostly between runs); then the
#     table of what was measured, the configuration cut short marked
#     interrupted (in the table and the export), exit 128+sig, and no run
#     after it.  The engine's sweep stops in a warm-up run too.
#   - everything knowable about every configuration is checked before the
#     first run: a command line too long in any configuration, a misspelt
#     placeholder, a placeholder with no list, a list with no placeholder,
#     a blank template, an export that cannot be written: one line naming
#     it (and the configuration), exit 2 (1 for the export), nothing run,
#     nothing exported.  Braces that are no placeholder stay as they are.
#   - --budget bounds the sweep: a configuration starts only when the time
#     left covers the mean of those done, the summary says how many were
#     not run, and the export holds those that ran.
# No timing thresholds: where a test needs time to pass, a command sleeps,
# so that a loaded machine only makes the outcome more certain.  The
# commands signal cnntop themselves ($PPID of the shell running them),
# ignoring the signal themselves, so that it reaches cnntop alone.
set -u
CNNTOP=$1
case $CNNTOP in /*) ;; *) CNNTOP=$(pwd)/$CNNTOP ;; esac # it runs in $W
fails=0
checks=0
skips=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
W=$tmp/w
mkdir -p "$W"

fail() {
    echo "FAIL: $*" >&2
    [ -f "$tmp/out" ] && sed 's/^/  out: /' "$tmp/out" >&2
    [ -f "$tmp/err" ] && sed 's/^/  err: /' "$tmp/err" | cut -c1-300 >&2
    fails=$((fails + 1))
}

skip() {
    echo "SKIP: $*" >&2
    skips=$((skips + 1))
}

# A shell's background job ignores SIGINT (and cnntop keeps a signal that
# was ignored at its start ignored); env gives SIGINT back its default.
DFL=
if env --default-signal=INT true 2>/dev/null; then
    DFL="env --default-signal=INT"
fi

# run CODE ARGS...: cnntop ARGS in $W (stdin closed), its exit code CODE.
run() {
    code=$1
    shift
    checks=$((checks + 1))
    # shellcheck disable=SC2086 # $DFL is split on purpose
    (cd "$W" && exec $DFL "$CNNTOP" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
    got=$?
    [ "$got" -eq "$code" ] || fail "cnntop $(echo "$*" | cut -c1-200): exit $got (want $code)"
}

# has PATTERN [FILE]: the table (or FILE) has a line matching PATTERN.
has() {
    grep -q -- "$1" "${2:-$tmp/out}" || fail "${2:-the table} lacks /$1/"
}

# lacks PATTERN [FILE]: ... has none.
lacks() {
    ! grep -q -- "$1" "${2:-$tmp/out}" || fail "${2:-the table} has /$1/"
}

# json FILE EXPR: the JSON in FILE makes the Python expression EXPR (of d) true.
json() {
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" \
        "$1" || fail "$1: not ($2)"
}

# runs N: stderr announced exactly N runs of the sweep's commands.
runs() {
    n=$(grep -c "^cnntop: sweep: .*, \(run\|warm-up\) [0-9]*/[0-9]*: " "$tmp/err")
    [ "$n" -eq "$1" ] || fail "$n runs started, want $1"
}

# ---- stop signals ----

# A command that ignores the signal and sends it to cnntop: its run ends
# well, then the sweep stops; the one run is in the table, marked
# interrupted (one run of the 50 asked), and in the export.
for case in TERM:143 HUP:129 INT:130; do
    sig=${case%:*} want=${case#*:}
    if [ "$sig" = INT ] && [ -z "$DFL" ]; then
        skip "SIGINT: env --default-signal is missing"
        continue
    fi
    rm -f "$W/s.json"
    run "$want" sweep -e task-clock --cmd "trap '' $sig; kill -$sig \$PPID; echo {batch} >>ran" \
        --batch 1,2 --runs 50 --export s.json
    runs 1
    has "^ batch 1  .*(interrupted)$"
    lacks "^ batch 2 "
    has "^ Stopped: the table holds the configurations that ran\.$"
    grep -q "^cnntop: the sweep (interrupted, partial) written to s.json$" "$tmp/err" ||
        fail "SIG$sig: the export is not said to be partial"
    json "$W/s.json" "len(d['runs']) == 1 and d['runs'][0]['interrupted'] is True and len(d['runs'][0]['repeats']) == 1"
done

# During a warm-up run: nothing measured, no table, no export, 143.
rm -f "$W/s.json"
run 143 sweep -e task-clock --cmd "trap '' TERM; kill -TERM \$PPID; : {batch}" --batch 1,2 \
    --warmup 2 --runs 2 --export s.json
runs 1
has "^ Stopped before a run was measured: no configuration to show\.$"
[ -e "$W/s.json" ] && fail "a sweep stopped in its first warm-up run wrote an export"

# Between two configurations: the first ran all its runs (not
# interrupted), the second never started.
rm -f "$W/s.json"
run 129 sweep -e task-clock --cmd "[ {batch} -eq 1 ] && trap '' HUP && kill -HUP \$PPID; :" \
    --batch 1,2,3 --runs 1 --export s.json
runs 1
has "^ batch 1  "
lacks "(interrupted)"
lacks "^ batch [23] "
json "$W/s.json" "len(d['runs']) == 1 and d['runs'][0]['interrupted'] is False"

# From outside, into 10000 runs of `true`: most of the time goes between
# runs.  Waits (bounded) for the second run, signals, and the sweep must
# end within 30 s (it would run for minutes).
outside() {
    sig=$1 want=$2
    checks=$((checks + 1))
    rm -f "$tmp/err"
    # shellcheck disable=SC2086
    (cd "$W" && exec $DFL "$CNNTOP" sweep -e task-clock --cmd true --runs 10000) \
        >"$tmp/out" 2>"$tmp/err" </dev/null &
    pid=$!
    n=0
    while ! grep -q "run 2/10000" "$tmp/err" 2>/dev/null && [ $n -lt 300 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    kill -"$sig" "$pid"
    n=0
    while kill -0 "$pid" 2>/dev/null && [ $n -lt 300 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"
        wait "$pid"
        fail "SIG$sig from outside: still running 30 s later"
        return
    fi
    wait "$pid"
    got=$?
    [ "$got" -eq "$want" ] || fail "SIG$sig from outside: exit $got (want $want)"
    has "^ the command  .*(interrupted)$"
    has "^ Stopped: the table holds the configurations that ran\.$"
}
outside TERM 143
outside HUP 129
if [ -n "$DFL" ]; then outside INT 130; else skip "SIGINT from outside: no env --default-signal"; fi

# ---- checked before the first run ----

# bad CODE THING PROBLEM ARGS...: `cnntop ARGS` refused with one line
# naming THING and PROBLEM, exit CODE, nothing run, nothing exported.
bad() {
    code=$1 thing=$2 problem=$3
    shift 3
    rm -rf "$W" && mkdir -p "$W"
    run "$code" "$@"
    msg=$(cat "$tmp/err")
    if [ "$(wc -l <"$tmp/err")" -ne 1 ] || [ "${msg#cnntop: }" = "$msg" ]; then
        fail "cnntop $(echo "$*" | cut -c1-120): not one line 'cnntop: ...'"
    elif [ "${msg#*"$thing"}" = "$msg" ] || [ "${msg#*"$problem"}" = "$msg" ]; then
        fail "cnntop $(echo "$*" | cut -c1-120): the message does not name '$thing' and '$problem'"
    fi
    [ -z "$(ls -A "$W")" ] || fail "cnntop $(echo "$*" | cut -c1-120): ran or wrote: $(ls -A "$W")"
}
# 8176 bytes of padding: the template fits, and so does configuration 1's
# command line; configuration 2's batch of 65536 takes it past 8191 bytes.
pad=$(printf '%8176s' '' | tr ' ' A)
bad 2 "configuration 2 of 2 (batch 65536)" "the command line is longer than 8191 bytes" \
    sweep --cmd "touch ran.{batch}; : $pad" --batch 1,65536 --export r.json
bad 2 "configuration 4 of 4 (batch 65536, workers 64)" "longer than 8191 bytes" \
    sweep --cmd "touch ran.{batch}.{workers}; : ${pad%AAAAAA}" --batch 1,65536 --workers 0,64 \
    --export r.json
bad 2 "{bacth}" "did you mean {batch}?" sweep --cmd "touch {bacth}" --batch 1,2 --export r.json
bad 2 "{Batch}" "did you mean {batch}?" sweep --cmd "touch {batch} {Batch}" --batch 1,2
bad 2 "{worker}" "did you mean {workers}?" sweep --cmd "touch {worker}"
bad 2 "{thread}" "did you mean {threads}?" sweep --cmd "touch x; : {thread}" --runs 2
bad 2 "{batches}" "did you mean {batch}?" sweep --cmd "touch {batches}"
bad 2 "--cmd" "the template has {threads} but no --threads LIST" \
    sweep --cmd "touch {batch}.{threads}" --batch 1,2
bad 2 "--workers" "the --cmd template has no {workers}" sweep --cmd "touch {batch}" \
    --batch 1 --workers 0,1
bad 2 "--cmd" "the template is blank" sweep --cmd "   "
bad 2 "--cmd" "empty command template" sweep --cmd ""
bad 1 "--export" "unknown export format" sweep --cmd "touch {batch}" --batch 1 --export r.txt
# Braces that are no placeholder: left as they are, the sweep runs.
run 0 sweep -e task-clock --cmd "echo '{print} {}' \${PPID:+x} '{x} {batch_size}' >out.{batch}" \
    --batch 7
[ "$(cat "$W/out.7" 2>/dev/null)" = "{print} {} x {x} {batch_size}" ] ||
    fail "braces that are no placeholder were changed: $(cat "$W/out.7" 2>/dev/null)"

# ---- --budget ----

# Each configuration sleeps 0.6 s: after the first, the mean (>= 0.6 s)
# no longer fits in what is left of 1 s, so 5 of 6 are not run.
rm -f "$W/b.json"
run 0 sweep -e task-clock --cmd "sleep 0.6; : {batch}" --batch 1,2,3,4,5,6 --budget 1 \
    --export b.json
runs 1
has "^ batch 1  "
lacks "^ batch [2-6] "
has "^ Budget of 1 s spent: 5 configurations not run\.$"
json "$W/b.json" "len(d['runs']) == 1 and d['runs'][0]['interrupted'] is False"
# A budget that covers every configuration changes nothing.
run 0 sweep -e task-clock --cmd ": {batch}" --batch 1,2,3 --budget 100000
runs 3
lacks "Budget of"

# ---- the engine's sweep: a stop signal in a warm-up run ----

python3 - "$tmp/data" <<'EOF' || { echo "test_sweep_cmd: cannot write the data" >&2; exit 1; }
import os, struct, sys
d = sys.argv[1]
os.makedirs(d)
def idx(dims, data):
    return bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", x) for x in dims) + data
for name, n in (("train", 1024), ("t10k", 16)):
    with open(os.path.join(d, name + "-images-idx3-ubyte"), "wb") as f:
        f.write(idx([n, 28, 28], bytes((i * 13) % 251 for i in range(n * 784))))
    with open(os.path.join(d, name + "-labels-idx1-ubyte"), "wb") as f:
        f.write(idx([n], bytes(i % 10 for i in range(n))))
EOF
for case in TERM:143 INT:130; do
    sig=${case%:*} want=${case#*:}
    if [ "$sig" = INT ] && [ -z "$DFL" ]; then
        skip "engine sweep, SIGINT: env --default-signal is missing"
        continue
    fi
    checks=$((checks + 1))
    rm -f "$tmp/err" "$W/e.json"
    # shellcheck disable=SC2086
    (cd "$W" && exec $DFL "$CNNTOP" sweep --data "$tmp/data" --batch 16,32 --steps 1000000 \
        --test-limit 16 --warmup 1 --runs 1 --export e.json) >"$tmp/out" 2>"$tmp/err" </dev/null &
    pid=$!
    n=0
    while ! grep -q "warm-up 1/1 .*step 1/" "$tmp/err" 2>/dev/null && [ $n -lt 300 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    kill -"$sig" "$pid"
    n=0
    while kill -0 "$pid" 2>/dev/null && [ $n -lt 300 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"
        wait "$pid"
        fail "engine sweep, SIG$sig in a warm-up run: still running 30 s later"
        continue
    fi
    wait "$pid"
    got=$?
    [ "$got" -eq "$want" ] || fail "engine sweep, SIG$sig in a warm-up run: exit $got (want $want)"
    has "^ Interrupted: the table holds the configurations that ran\.$"
    grep -q "^\[2/2" "$tmp/err" && fail "engine sweep, SIG$sig in a warm-up run: the next configuration started"
    [ -e "$W/e.json" ] && fail "engine sweep, SIG$sig in a warm-up run: an export of nothing measured"
done

echo "test_sweep_cmd: $checks cases, $fails failures, $skips skipped"
[ "$fails" -eq 0 ]

#!/bin/sh
# test_tui_export.sh CNNTOP FIELDS: the dashboard's export (`e`) holds what
# `cnntop run --export` holds for the same configuration, field by field.
# Both records are built by record_fill(); this drives the real dashboard
# through a private tmux server, runs `cnntop run` beside it, and compares
# the two JSON files: every field present in one is in the other with the
# same type, and every field that does not depend on timing (config, data,
# machine, peak, step and image counts, losses, accuracies, epochs,
# evaluations, layer names and calls, counter names, statuses and reasons)
# is equal.  Timings, rates, the date and the command line are compared for
# presence and type only: the members the record's field table flags as
# varying, listed by FIELDS --varies (test_record_fields).  The dashboard
# honours --export (the name e offers) and --force (a second export
# replaces the file), as the man page says.  Polls with timeouts; exits 77
# without tmux, python3 or the data.
set -u
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
FIELDS=${2:?usage: test_tui_export.sh CNNTOP FIELDS (the test_record_fields program)}
DATA=/usr/share/datasets/fashion-mnist
PY=/usr/bin/python3
command -v tmux >/dev/null 2>&1 || { echo "test_tui_export: skipped: tmux is not installed"; exit 77; }
[ -x "$PY" ] || { echo "test_tui_export: skipped: no $PY"; exit 77; }
[ -r "$DATA/train-images-idx3-ubyte.gz" ] || [ -r "$DATA/train-images-idx3-ubyte" ] ||
    { echo "test_tui_export: skipped: no data in $DATA"; exit 77; }
tmp=$(mktemp -d)
SOCK=cnntopx$$
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'T kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT
fails=0

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# wait_for PATTERN SECONDS: polls the screen every 0.2 s.
wait_for() {
    n=0
    while [ $n -lt $(($2 * 5)) ]; do
        T capture-pane -p -t t >"$tmp/screen" 2>/dev/null
        grep -q -- "$1" "$tmp/screen" && return 0
        sleep 0.2
        n=$((n + 1))
    done
    return 1
}
need() { # need PATTERN SECONDS WHAT: or fail, show the screen and stop
    wait_for "$1" "$2" && return 0
    fail "$3 (no '$1' on screen)"
    cat "$tmp/screen" >&2
    exit 1
}

# One epoch of 10 steps, so that the records have an epoch and an
# evaluation; one loader worker, so that the loader's rate is there.
cfg="--limit 640 --test-limit 200 --epochs 1 --batch 64 --workers 1 --seed 3 --threads 1"
env="env -i PATH=/usr/bin:/bin HOME=$tmp XDG_CONFIG_HOME=$tmp/cfg XDG_CACHE_HOME=$tmp/cache"
# The caller's OPENBLAS_CORETYPE stays: the test does not pick the kernels.
[ -n "${OPENBLAS_CORETYPE+set}" ] && env="$env OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"

# A first run calibrates into the shared cache (for --threads 1), so that
# both records read the same peak from it: a measurement fresh in memory
# has more digits than the cache keeps.
$env "$CNNTOP" run $cfg >"$tmp/calib.out" 2>&1 ||
    { fail "the first cnntop run exited $?"; cat "$tmp/calib.out" >&2; exit 1; }
$env "$CNNTOP" run $cfg --export "$tmp/run.json" >"$tmp/run.out" 2>"$tmp/run.err" ||
    { fail "cnntop run exited $?"; cat "$tmp/run.err" >&2; exit 1; }

T new-session -d -s t -x 120 -y 40 -c "$tmp" \
    "$env TERM=screen-256color LANG=C.UTF-8 PS1='tui\$ ' sh"
T send-keys -t t "$CNNTOP $cfg --autostart --export $tmp/tui.json --force" Enter
need "run 1 finished" 60 "the dashboard's run finishes"
T send-keys -t t e
need "export to (.*): $tmp/tui.json_" 5 "e offers the --export name"
T send-keys -t t Enter
need "exported run 1 to" 30 "the export is written"
# --force: a second export replaces the file (a new inode: written
# atomically by rename), where without it the dashboard would refuse.
ino=$(ls -i "$tmp/tui.json" | cut -d' ' -f1)
T send-keys -t t e
need "export to" 5 "e asks again"
T send-keys -t t Enter
n=0
while [ "$(ls -i "$tmp/tui.json" | cut -d' ' -f1)" = "$ino" ] && [ $n -lt 100 ]; do
    sleep 0.2
    n=$((n + 1))
done
[ $n -lt 100 ] || { fail "--force: the second export did not replace the file"; T capture-pane -p -t t >&2; }
T send-keys -t t q
need "^tui\\$ *$" 15 "q quits"

"$FIELDS" --varies >"$tmp/varies" && [ -s "$tmp/varies" ] ||
    { fail "$FIELDS --varies listed nothing"; exit 1; }
$PY "$(dirname "$0")/record_compare.py" "$tmp/run.json" "$tmp/tui.json" "$tmp/varies" dashboard ||
    fails=$((fails + 1))

[ "$fails" -eq 0 ]

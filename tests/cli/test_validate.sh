#!/bin/sh
# test_validate.sh CNNTOP: one validation pass before any work, for every
# command (validate_command(), engine_check_start()).
#
# test_badinput.sh holds the table of every broken file and option for
# `cnntop run`; this is the same refusals across the commands that take
# them (run, eval, sweep, sweep --cmd, exec, the dashboard at its start)
# and what only the up-front pass finds: a plain IDX file that looks valid
# but is cut short, refused before any file is loaded, and a batch whose
# memory (the arena, the loader's queue, the data) the machine does not
# have.  Each case checks:
#   - the exit code (2: the command line; 1: data, files, memory);
#   - stderr is one line "cnntop: ...", naming the thing and the problem;
#   - nothing was written in the work area, and no progress line was
#     printed: no training started (no fixed time limits: a bounded
#     timeout only catches a hang).
set -u
CNNTOP=$1
case $CNNTOP in /*) ;; *) CNNTOP=$(pwd)/$CNNTOP ;; esac
CASE_TIMEOUT=${CASE_TIMEOUT:-60}
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
D=$tmp/data W=$tmp/work L=$tmp/log
mkdir -p "$D" "$W" "$L"

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# The data sets: a good one and one problem each.  "big" has a million
# training images in a sparse file (nothing really written): its headers
# are valid and its size matches, so only the memory estimate refuses it.
python3 - "$D" <<'EOF' || { echo "test_validate: cannot make the data" >&2; exit 1; }
import os, struct, sys
root = sys.argv[1]
TI, TL = "train-images-idx3-ubyte", "train-labels-idx1-ubyte"
VI, VL = "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"
def idx(dims, data=b""):
    return bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + data
images = lambda n: idx([n, 28, 28], bytes((i * 7) % 256 for i in range(n * 784)))
labels = lambda n: idx([n], bytes(i % 10 for i in range(n)))
good = {TI: images(64), TL: labels(64), VI: images(16), VL: labels(16)}
def dataset(name, **change):
    d = os.path.join(root, name)
    os.makedirs(d)
    files = dict(good)
    for key, data in change.items():
        files[{"ti": TI, "tl": TL, "vi": VI, "vl": VL}[key]] = data
    for f, data in files.items():
        if data is not None:
            open(os.path.join(d, f), "wb").write(data)
dataset("good")
dataset("three", vl=None)
dataset("cut", ti=good[TI][:-784])          # the header says 64 images, 63 are there
dataset("cut-test", vi=good[VI][:16 + 100])
dataset("magic", ti=b"\x12\x34" + good[TI][2:])
dataset("count", tl=labels(63))
dataset("count-test", vl=labels(15))
dataset("shape", ti=idx([64, 14, 14], bytes(64 * 196)), vi=idx([16, 14, 14], bytes(16 * 196)))
dataset("big")
n = 1000000
for f, dims, item in ((TI, [n, 28, 28], 784), (TL, [n], 1)):
    with open(os.path.join(root, "big", f), "wb") as out:
        out.write(idx(dims))
        out.truncate(len(idx(dims)) + n * item)
EOF
G=$D/good
: >"$tmp/file" # a regular file: a path under it cannot be written, even by root

# check CODE THING PROBLEM -- ARGS...: cnntop ARGS is refused before any work.
check() {
    code=$1 thing=$2 problem=$3
    shift 4
    checks=$((checks + 1))
    what="cnntop $*"
    rm -rf "$W" && mkdir -p "$W"
    (cd "$W" && exec timeout -k 5 "$CASE_TIMEOUT" "$CNNTOP" "$@") >"$L/out" 2>"$L/err"
    rc=$?
    if [ "$rc" -ne "$code" ]; then
        fail "$what: exit $rc, want $code; stderr:"
        cat "$L/err" >&2
        return
    fi
    if [ "$(wc -l <"$L/err")" -ne 1 ] || ! grep -q '^cnntop: ' "$L/err"; then
        fail "$what: want one line 'cnntop: ...' on stderr (no progress line), got:"
        cat "$L/err" >&2
    elif ! grep -qF -- "$thing" "$L/err" || ! grep -qF -- "$problem" "$L/err"; then
        fail "$what: message does not name '$thing' and '$problem':"
        cat "$L/err" >&2
    fi
    if [ -s "$L/out" ]; then
        fail "$what: printed on stdout (work began):"
        cat "$L/out" >&2
    fi
    if [ -n "$(ls -A "$W")" ]; then
        fail "$what: wrote $(ls -A "$W")"
    fi
}

ti=train-images-idx3-ubyte tl=train-labels-idx1-ubyte
vi=t10k-images-idx3-ubyte vl=t10k-labels-idx1-ubyte
o="--steps 1 --test-limit 16"
ck=$W/m.ckpt # never written: each case is refused first

# ---- the data directory, for every command that reads it ----
# shellcheck disable=SC2086 # $o is split on purpose
for c in "run $o --save $ck" "sweep $o --batch 8,16" "eval --load $ck"; do
    set -- $c
    check 1 "$tmp/none" "No such file or directory" -- "$@" --data "$tmp/none"
    check 1 "$tmp/file" "Not a directory" -- "$@" --data "$tmp/file"
    check 1 "$D/three/$vl" "not found" -- "$@" --data "$D/three"
    check 1 "$D/cut-test/$vi" "truncated: header says 12544 bytes of data, file has 100" -- \
        "$@" --data "$D/cut-test"
    check 1 "$D/count-test/$vl" "15 labels, but 16 images" -- "$@" --data "$D/count-test"
    check 1 "$D/shape" "images are 14x14, the model takes 28x28" -- "$@" --data "$D/shape"
done
# eval reads the test split alone: the training files are not its business.
# shellcheck disable=SC2086
for c in "run $o --save $ck" "sweep $o --batch 8,16"; do
    set -- $c
    check 1 "$D/cut/$ti" "truncated: header says 50176 bytes of data, file has 49392" -- \
        "$@" --data "$D/cut"
    check 1 "$D/magic/$ti" "bad IDX magic 0x12340803" -- "$@" --data "$D/magic"
    check 1 "$D/count/$tl" "63 labels, but 64 images" -- "$@" --data "$D/count"
done

# ---- the memory of the run: arena, loader queue, data ----
avail=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
if [ -n "$avail" ] && [ "$avail" -lt 60000000 ]; then # under 57 GiB: the 76 GiB do not fit
    # shellcheck disable=SC2086
    {
    check 1 "batch 65536 with 2 threads, 64 workers and prefetch 256 needs" "GiB available (MemAvailable)" -- \
        run --data "$D/big" $o --batch 65536 --threads 2 --workers 64 --prefetch 256 --save "$ck"
    check 1 "batch 65536 with 2 threads, 64 workers and prefetch 256 needs" "loader queue" -- \
        sweep --data "$D/big" $o --batch 16,65536 --threads 1,2 --workers 0,64 --prefetch 256
    }
else
    echo "SKIP: the memory estimate: this machine has ${avail:-unknown} KiB available" >&2
fi

# ---- output paths, for every command that writes one ----
mkdir -p "$tmp/dir.json" "$tmp/dir.ckpt"
# shellcheck disable=SC2086
for c in "run --data $G $o" "sweep --data $G $o --batch 8,16" "sweep --cmd echo:{batch} --batch 1,2" \
         "exec --no-dashboard" "report $tmp/none.json"; do
    set -- $c
    tail="" && [ "$1" = exec ] && tail="-- true"
    check 1 "$tmp/nodir/r.json" "No such file or directory" -- "$@" --export "$tmp/nodir/r.json" $tail
    check 1 "$tmp/dir.json" "a directory, not a regular file" -- "$@" --export "$tmp/dir.json" $tail
    check 1 "$tmp/file/r.json" "Not a directory" -- "$@" --export "$tmp/file/r.json" $tail
done
# shellcheck disable=SC2086
{
check 1 "--save" "$tmp/file/m.ckpt: Not a directory" -- run --data "$G" $o --save "$tmp/file/m.ckpt"
check 1 "--save" "a directory, not a regular file" -- run --data "$G" $o --save "$tmp/dir.ckpt"
check 1 "--trace" "$tmp/nodir/t.json" -- run --data "$G" $o --trace "$tmp/nodir/t.json"
# The paths come before the data: the first problem met is the output's.
check 1 "--export" "$tmp/nodir/r.json" -- run --data "$tmp/none" $o --export "$tmp/nodir/r.json"
}

# ---- options out of range, for each command that takes them ----
# shellcheck disable=SC2086
for c in run sweep; do
    for a in "--batch 0" "--batch 65537" "--epochs 0" "--steps 0" "--limit -1" \
             "--test-limit 0" "--threads 257" "--workers 65" "--prefetch 257" "--lr 0" \
             "--runs 0" "--warmup -1" "--target-accuracy 2" "--eval-every -1"; do
        set -- $a
        check 2 "$1" "out of range" -- $c --data "$G" $a
    done
done
check 2 "--budget" "out of range" -- sweep --data "$G" --budget -1
check 2 "--batch" "out of range" -- eval --load "$ck" --data "$G" --batch 0
check 2 "--threads" "out of range" -- eval --load "$ck" --data "$G" --threads 0
check 2 "--cmd" "{batch}" -- sweep --cmd 'echo {batch}' --export "$tmp/nodir/r.json"

# ---- the dashboard, at its start, on a terminal ----
if command -v script >/dev/null 2>&1; then
    checks=$((checks + 1))
    rm -rf "$W" && mkdir -p "$W"
    (cd "$W" && TERM=xterm timeout -k 5 "$CASE_TIMEOUT" script -qec \
        "$CNNTOP --autostart --data $D/cut $o" /dev/null) >"$L/out" 2>&1
    rc=$?
    if [ "$rc" -ne 1 ] || ! grep -qF "$D/cut/$ti: truncated" "$L/out"; then
        fail "cnntop --autostart --data cut: exit $rc, want 1 and the file named; got:"
        cat "$L/out" >&2
    fi
    [ -z "$(ls -A "$W")" ] || fail "cnntop --autostart: wrote $(ls -A "$W")"
else
    echo "SKIP: the dashboard's start: no script(1)" >&2
fi

echo "test_validate: $((checks - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]

#!/bin/sh
# test_badinput.sh CNNTOP: every way the input can be wrong, one table.
#
# The broken inputs are made here, at run time, under a fresh temporary
# directory: a small synthetic data set (64 + 16 images of 28x28, plain and
# gzip) with one file damaged per case, damaged copies of the real
# Fashion-MNIST files when Debian's dataset-fashion-mnist is installed, and
# damaged checkpoints.  Each row of the table runs cnntop once and checks:
#   - it ended by itself, within CASE_TIMEOUT seconds (no hang), and not by
#     a signal (exit < 128: no crash, no abort, no sanitizer report);
#   - the exit code is the one the man page gives (1: bad data or files,
#     2: bad command line);
#   - stderr, progress lines aside, is exactly one line, "cnntop: ...",
#     holding both the thing (a file, an option) and the problem;
#   - nothing was written: a --save target stays absent, and no file or
#     directory in the work area changed.
# Runs train one step at most (--steps 1 --test-limit 16), so that a case
# that wrongly succeeds is quick too.  Prints every message it saw when
# CNNTOP_TEST_VERBOSE is set.
set -u
CNNTOP=$1
case $CNNTOP in /*) ;; *) CNNTOP=$(pwd)/$CNNTOP ;; esac # cases run elsewhere
CASE_TIMEOUT=${CASE_TIMEOUT:-30}
REAL=/usr/share/datasets/fashion-mnist
fails=0
checks=0
skips=0
tmp=$(mktemp -d)
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
chmod 755 "$tmp" # the unreadable-directory case runs as nobody
D=$tmp/data      # the data sets, one directory per case
W=$tmp/work      # where cnntop runs and may be asked to write
L=$tmp/log       # cnntop's stdout and stderr
mkdir -p "$D" "$W" "$L"

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# ---- the broken inputs ----

python3 - "$D" "$REAL" <<'EOF' || { echo "test_badinput: cannot generate the inputs" >&2; exit 1; }
import gzip, os, struct, sys

root, real = sys.argv[1], sys.argv[2]
TI, TL = "train-images-idx3-ubyte", "train-labels-idx1-ubyte"
VI, VL = "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"

def idx(dims, data=b"", typ=0x08, nd=None):
    nd = len(dims) if nd is None else nd
    return bytes([0, 0, typ, nd]) + b"".join(struct.pack(">I", d) for d in dims) + data

def images(n, r=28, c=28):
    return idx([n, r, c], bytes((i * 7 + i // 784) % 256 for i in range(n * r * c)))

def labels(n):
    return idx([n], bytes(i % 10 for i in range(n)))

good = {TI: images(64), TL: labels(64), VI: images(16), VL: labels(16)}
gz = lambda b: gzip.compress(b, mtime=0)

def dataset(name, gzipped=False, **change):
    d = os.path.join(root, name)
    os.makedirs(d)
    files = dict(good)
    key_of = {TI: "ti", TL: "tl", VI: "vi", VL: "vl"}
    for key, data in change.items():
        files[{"ti": TI, "tl": TL, "vi": VI, "vl": VL}[key]] = data
    for f, data in files.items():
        if data is None:
            continue
        if gzipped:  # a changed file is written as given: gzip it in the call
            data, f = (data if key_of[f] in change else gz(data)), f + ".gz"
        with open(os.path.join(d, f), "wb") as out:
            out.write(data)

ti = good[TI]
dataset("good")
dataset("goodgz", gzipped=True)
# The header.
dataset("magic", ti=b"\x12\x34\x08\x03" + ti[4:])
dataset("type-float", ti=idx([64, 28, 28], ti[16:], typ=0x0D))
dataset("type-int", ti=idx([64, 28, 28], ti[16:], typ=0x0C))
dataset("ndims-2", ti=idx([64, 784], ti[16:]))
dataset("ndims-0", ti=bytes([0, 0, 8, 0]))
dataset("labels-ndims-3", tl=idx([64, 1, 1], bytes(64)))
dataset("count-huge", ti=idx([0xFFFFFFFF, 28, 28], ti[16:]))
dataset("side-huge", ti=idx([64, 100000, 28], ti[16:]))
dataset("size-overflow", ti=idx([100000000, 4096, 4096], ti[16:]))
dataset("size-overflow-gz", gzipped=True, ti=gz(idx([100000000, 4096, 4096], ti[16:])))
dataset("rows-0", ti=idx([64, 0, 28]))
dataset("images-0", ti=idx([0, 28, 28]), tl=idx([0]))
dataset("test-images-0", vi=idx([0, 28, 28]), vl=idx([0]))
# Truncation and extra bytes.
dataset("empty", ti=b"")
dataset("cut-magic", ti=ti[:3])
dataset("cut-dims", ti=ti[:10])
dataset("cut-header-only", ti=ti[:16])
dataset("cut-data", ti=ti[:16 + 1000])
dataset("cut-1", ti=ti[:-1])
dataset("trailing", ti=ti + b"\0\0\0")
dataset("cut-data-gz", gzipped=True, ti=gz(ti)[: len(gz(ti)) // 2])
dataset("cut-trailer-gz", gzipped=True, ti=gz(ti)[:-4])
dataset("cut-header-gz", gzipped=True, ti=gz(ti[:10]))
# Damaged gzip.
z = bytearray(gz(ti)); z[len(z) // 2] ^= 0xFF
dataset("damaged-gz", gzipped=True, ti=bytes(z))
z = bytearray(gz(ti)); z[-8] ^= 0xFF
dataset("crc-gz", gzipped=True, ti=bytes(z))
z = bytearray(gz(ti)); z[2] = 7
dataset("method-gz", gzipped=True, ti=bytes(z))
dataset("plain-named-gz", gzipped=True, ti=ti)
dataset("trailing-gz", gzipped=True, ti=gz(ti + b"\0\0"))
# The files against each other.
dataset("labels-fewer", tl=labels(63))
dataset("labels-more", tl=labels(65))
dataset("test-labels-fewer", vl=labels(15))
dataset("label-10", tl=idx([64], bytes(5) + b"\x0a" + bytes(58)))
dataset("label-255", vl=idx([16], bytes(15) + b"\xff"))
dataset("test-shape", vi=images(16, 28, 27))
dataset("shape-14", ti=images(64, 14, 14), vi=images(16, 14, 14))
dataset("labels-as-images", ti=good[TL])
# Files missing or not files.
dataset("no-test-labels", vl=None)
dataset("no-train-images", ti=None)
os.makedirs(os.path.join(root, "empty-dir"))
dataset("dir-as-file", vl=None)
os.makedirs(os.path.join(root, "dir-as-file", VL))
dataset("fifo", vl=None)
os.mkfifo(os.path.join(root, "fifo", VL))
dataset("unreadable-file")
dataset("unreadable-dir")
dataset("unsearchable-dir")  # listable (r) but not searchable (x)
dataset("loop-train", ti=None)
os.symlink("loop-b", os.path.join(root, "loop-train", "loop-a"))
os.symlink("loop-a", os.path.join(root, "loop-train", "loop-b"))
os.symlink("loop-a", os.path.join(root, "loop-train", TI))
dataset("loop-test-labels", vl=None)
os.symlink(VL, os.path.join(root, "loop-test-labels", VL))

# Damaged copies of the real data, when it is installed.
if os.path.isfile(os.path.join(real, TL + ".gz")):
    def real_set(name, f, data):
        d = os.path.join(root, name)
        os.makedirs(d)
        for g in (TI, TL, VI, VL):
            if g != f:
                os.symlink(os.path.join(real, g + ".gz"), os.path.join(d, g + ".gz"))
        with open(os.path.join(d, f + ".gz"), "wb") as out:
            out.write(data)
    lab = open(os.path.join(real, TL + ".gz"), "rb").read()
    real_set("real-cut", TL, lab[: len(lab) // 2])
    z = bytearray(lab); z[len(z) // 2] ^= 0x55
    real_set("real-damaged", TL, bytes(z))
    real_set("real-labels-as-images", TI, lab)
EOF
chmod 000 "$D/unreadable-file/train-labels-idx1-ubyte"
chmod 000 "$D/unreadable-dir"
chmod 644 "$D/unsearchable-dir"

# A valid checkpoint of this build, and broken ones made from it.
if ! "$CNNTOP" run --data "$D/good" --steps 1 --test-limit 16 --save "$tmp/good.ckpt" \
        >"$L/out" 2>"$L/err"; then
    echo "test_badinput: cannot make a checkpoint:" >&2
    cat "$L/err" >&2
    exit 1
fi
C=$tmp/ckpt
mkdir -p "$C"
python3 - "$tmp/good.ckpt" "$C" <<'EOF' || { echo "test_badinput: cannot damage checkpoints" >&2; exit 1; }
import os, struct, sys, zlib
good = open(sys.argv[1], "rb").read()
out = sys.argv[2]
def put(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
def recrc(b):
    return b[:-4] + struct.pack("<I", zlib.crc32(b[:-4]))
put("empty.ckpt", b"")
put("magic-only.ckpt", good[:8])
put("cut-header.ckpt", good[:100])
put("cut-data.ckpt", good[: len(good) // 2])
put("cut-crc.ckpt", good[:-1])
put("trailing.ckpt", good + b"\0" * 16)
put("version-2.ckpt", recrc(good[:8] + struct.pack("<I", 2) + good[12:]))
put("version-0.ckpt", recrc(good[:8] + struct.pack("<I", 0) + good[12:]))
put("other-model.ckpt", recrc(good[:24] + b"LeNet5".ljust(32, b"\0") + good[56:]))
put("tensor-size.ckpt", recrc(good[:88] + struct.pack("<I", 289) + good[92:]))
b = bytearray(good); b[len(b) // 2] ^= 1
put("flipped.ckpt", bytes(b))
# Every count of the header out of its range, under a valid CRC (the
# generated cases over every field are tests/engine/test_checkpoint.c's).
def field(off, v, n=8, base=good):
    return recrc(base[:off] + (v % 2**(8 * n)).to_bytes(n, "little") + base[off + n:])
put("reserved.ckpt", field(20, 1, 4))
put("adam-negative.ckpt", field(56, -5))
put("epochs-done-huge.ckpt", field(64, 2**31 - 1, base=field(56, 10**15)))
put("epoch-pos-negative.ckpt", field(72, -1))
put("epoch-pos-no-step.ckpt", field(72, 64, base=field(56, 0)))
put("epochs-done-full.ckpt", field(64, 10**9, base=field(56, 10**15)))
put("nan-weight.ckpt", recrc(good[:184] + struct.pack("<f", float("nan")) + good[188:]))
put("foreign-png.ckpt", b"\x89PNG\r\n\x1a\n" + bytes(1000))
put("foreign-text.ckpt", b"not a checkpoint\n")
EOF
cp "$D/good/t10k-labels-idx1-ubyte" "$C/idx.ckpt"
truncate -s 10G "$C/huge.ckpt" # sparse: nothing is really written
mkdir -p "$C/dir.ckpt"
mkfifo "$C/fifo.ckpt"

# A run record of this build, and records that make no sense made from it.
R=$tmp/rec
mkdir -p "$R"
if ! "$CNNTOP" run --data "$D/good" --steps 1 --test-limit 16 --export "$tmp/good.json" \
        >"$L/out" 2>"$L/err"; then
    echo "test_badinput: cannot make a run record:" >&2
    cat "$L/err" >&2
    exit 1
fi
python3 - "$tmp/good.json" "$R" <<'EOF2' || { echo "test_badinput: cannot make records" >&2; exit 1; }
import copy, json, os, sys
good = json.load(open(sys.argv[1]))
def put(name, rec):
    json.dump(rec, open(os.path.join(sys.argv[2], name), "w"))
def changed(name, path, value):
    r = copy.deepcopy(good)
    o = r
    for k in path[:-1]:
        o = o[k]
    o[path[-1]] = value
    put(name, r)
put("sweep-empty.json", {"schema": "cnntop.sweep/1", "cnntop_version": good["cnntop_version"], "runs": []})
put("sweep-hollow.json", {"schema": "cnntop.sweep/1", "cnntop_version": good["cnntop_version"],
                          "runs": [good, dict(good, train=dict(good["train"], steps=0, images=0),
                                              eval=None, error=None)]})
changed("hollow.json", ["train"], dict(good["train"], steps=0, images=0))
r = json.load(open(os.path.join(sys.argv[2], "hollow.json"))); r["eval"] = None; r["error"] = None
put("hollow.json", r)
changed("accuracy.json", ["eval", "accuracy"], 1.5)
changed("correct.json", ["eval", "correct"], good["eval"]["images"] + 1)
changed("wall.json", ["train", "wall"], -2.0)
changed("batch-0.json", ["config", "batch"], 0)
changed("images.json", ["train", "images"], 0)
changed("steps.json", ["train", "steps"], 10**14)
EOF2

# ---- one case ----

# check CODE THING PROBLEM [as-nobody] -- ARGS...: runs cnntop ARGS in $W.
check() {
    code=$1 thing=$2 problem=$3
    shift 3
    runas=""
    if [ "$1" = as-nobody ]; then
        runas="setpriv --reuid=65534 --regid=65534 --clear-groups"
        shift
    fi
    shift # --
    checks=$((checks + 1))
    what="cnntop $*"
    rm -rf "$W" && mkdir -p "$W" && chmod 777 "$W"
    touch "$L/stamp"
    # Timestamps must move on before cnntop can write anything.
    sleep 0.01
    (cd "$W" && exec timeout -k 5 "$CASE_TIMEOUT" $runas "$CNNTOP" "$@") >"$L/out" 2>"$L/err"
    rc=$?
    grep -v '^epoch [0-9]*/[0-9]*  step ' "$L/err" >"$L/msg"
    [ -n "${CNNTOP_TEST_VERBOSE:-}" ] && echo "  [$rc] $(cat "$L/msg")" >&2
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        fail "$what: still running after $CASE_TIMEOUT s (a hang)"
        return
    fi
    if [ "$rc" -ge 128 ]; then
        fail "$what: ended by signal $((rc - 128)); stderr:"
        cat "$L/err" >&2
        return
    fi
    if [ "$rc" -ne "$code" ]; then
        fail "$what: exit $rc, want $code; stderr:"
        cat "$L/err" >&2
        return
    fi
    if [ "$(wc -l <"$L/msg")" -ne 1 ] || ! grep -q '^cnntop: ' "$L/msg"; then
        fail "$what: want one line 'cnntop: ...' on stderr, got:"
        cat "$L/err" >&2
    elif ! grep -qF -- "$thing" "$L/msg" || ! grep -qF -- "$problem" "$L/msg"; then
        fail "$what: message does not name '$thing' and '$problem':"
        cat "$L/msg" >&2
    fi
    changed=$(find "$tmp" -newer "$L/stamp" ! -path "$L" ! -path "$L/*" 2>/dev/null)
    if [ -n "$changed" ]; then
        fail "$what: wrote to the file system:"
        echo "$changed" >&2
    fi
}

skip() {
    echo "SKIP: $*" >&2
    skips=$((skips + 1))
}

# run_data CASE THING PROBLEM: `cnntop run` on data set CASE, exit 1.
run_data() {
    check 1 "$2" "$3" -- run --data "$D/$1" --steps 1 --test-limit 16 --save "$W/m.ckpt"
}

# ---- the table: data sets ----

ti=train-images-idx3-ubyte tl=train-labels-idx1-ubyte
vi=t10k-images-idx3-ubyte vl=t10k-labels-idx1-ubyte
run_data magic             "$D/magic/$ti"             "bad IDX magic 0x12340803"
run_data type-float        "$D/type-float/$ti"        "type 0x0D (float) not supported"
run_data type-int          "$D/type-int/$ti"          "type 0x0C (int) not supported"
run_data ndims-2           "$D/ndims-2/$ti"           "2 dimensions, want 3"
run_data ndims-0           "$D/ndims-0/$ti"           "0 dimensions, want 3"
run_data labels-ndims-3    "$D/labels-ndims-3/$tl"    "3 dimensions, want 1"
run_data count-huge        "$D/count-huge/$ti"        "4294967295 items, over the limit"
run_data side-huge         "$D/side-huge/$ti"         "side 100000, over the limit"
run_data size-overflow     "$D/size-overflow/$ti"     "truncated"
# A gzip file's header is all that is read before the data loads: its
# count against the labels' refuses it first (idx_read()'s own refusal of
# the short data is tests/data/test_idx.c's).
run_data size-overflow-gz  "$D/size-overflow-gz/$ti.gz" "64 labels, but 100000000 images"
run_data rows-0            "$D/rows-0/$ti"            "dimension 2 of 3 is 0"
run_data images-0          "$D/images-0/$ti"          "dimension 1 of 3 is 0"
run_data test-images-0     "$D/test-images-0/$vi"     "dimension 1 of 3 is 0"
run_data empty             "$D/empty/$ti"             "truncated"
run_data cut-magic         "$D/cut-magic/$ti"         "truncated"
run_data cut-dims          "$D/cut-dims/$ti"          "truncated"
run_data cut-header-only   "$D/cut-header-only/$ti"   "truncated"
run_data cut-data          "$D/cut-data/$ti"          "truncated"
run_data cut-1             "$D/cut-1/$ti"             "truncated"
run_data trailing          "$D/trailing/$ti"          "3 trailing bytes"
run_data cut-data-gz       "$D/cut-data-gz/$ti.gz"    "truncated"
run_data cut-trailer-gz    "$D/cut-trailer-gz/$ti.gz" "truncated"
run_data cut-header-gz     "$D/cut-header-gz/$ti.gz"  "truncated"
run_data damaged-gz        "$D/damaged-gz/$ti.gz"     "gzip data damaged"
run_data crc-gz            "$D/crc-gz/$ti.gz"         "gzip data damaged"
run_data method-gz         "$D/method-gz/$ti.gz"      "gzip"
run_data plain-named-gz    "$D/plain-named-gz/$ti.gz" "not gzip data"
run_data trailing-gz       "$D/trailing-gz/$ti.gz"    "2 trailing bytes"
run_data labels-fewer      "$D/labels-fewer/$tl"      "63 labels, but 64 images"
run_data labels-more       "$D/labels-more/$tl"       "65 labels, but 64 images"
run_data test-labels-fewer "$D/test-labels-fewer/$vl" "15 labels, but 16 images"
run_data label-10          "$D/label-10/$tl"          "label 10 at index 5 out of range"
run_data label-255         "$D/label-255/$vl"         "label 255 at index 15 out of range"
run_data test-shape        "$D/test-shape/$vi"        "28x27 images, but the training images are 28x28"
run_data shape-14          "$D/shape-14"              "14x14"
run_data labels-as-images  "$D/labels-as-images/$ti"  "1 dimensions, want 3"
run_data no-test-labels    "$D/no-test-labels/$vl"    "not found"
run_data no-train-images   "$D/no-train-images"       "no MNIST-format data"
run_data empty-dir         "$D/empty-dir"             "no MNIST-format data"
run_data dir-as-file       "$D/dir-as-file/$vl"       "Is a directory"
run_data fifo              "$D/fifo/$vl"              "not a regular file"
run_data loop-train        "$D/loop-train/$ti"        "Too many levels of symbolic links"
run_data loop-test-labels  "$D/loop-test-labels/$vl"  "Too many levels of symbolic links"
check 1 "$tmp/none" "No such file or directory" -- run --data "$tmp/none" --steps 1
check 1 "$D/good/$ti" "Not a directory" -- run --data "$D/good/$ti" --steps 1
if [ "$(id -u)" -ne 0 ]; then
    run_data unreadable-file "$D/unreadable-file/$tl" "Permission denied"
    run_data unreadable-dir "$D/unreadable-dir" "Permission denied"
    run_data unsearchable-dir "$D/unsearchable-dir/$ti" "Permission denied"
elif setpriv --reuid=65534 --regid=65534 --clear-groups "$CNNTOP" --version >/dev/null 2>&1; then
    # root reads anything: drop to nobody to see a permission error.
    check 1 "$D/unreadable-file/$tl" "Permission denied" as-nobody -- \
        run --data "$D/unreadable-file" --steps 1 --test-limit 16 --save "$W/m.ckpt"
    check 1 "$D/unreadable-dir" "Permission denied" as-nobody -- \
        run --data "$D/unreadable-dir" --steps 1 --test-limit 16 --save "$W/m.ckpt"
    check 1 "$D/unsearchable-dir/$ti" "Permission denied" as-nobody -- \
        run --data "$D/unsearchable-dir" --steps 1 --test-limit 16 --save "$W/m.ckpt"
else
    skip "unreadable file and directory: running as root and cannot become nobody"
fi
if [ -d "$D/real-cut" ]; then
    run_data real-cut              "$D/real-cut/$tl.gz"              "truncated"
    run_data real-damaged          "$D/real-damaged/$tl.gz"          "gzip data damaged"
    run_data real-labels-as-images "$D/real-labels-as-images/$ti.gz" "1 dimensions, want 3"
else
    skip "damaged real data: $REAL not installed"
fi
# The same through eval, which reads the test split alone: a bad test
# label stops it; a bad training label is none of its business.
check 1 "$D/label-255/$vl" "out of range" -- eval --load "$tmp/good.ckpt" --data "$D/label-255"
checks=$((checks + 1))
"$CNNTOP" eval --load "$tmp/good.ckpt" --data "$D/label-10" >"$L/out" 2>&1 ||
    { fail "eval --data label-10: read the training labels it does not need:"; cat "$L/out" >&2; }

# ---- the table: checkpoints ----

# load_ckpt FILE PROBLEM: eval and run --load both refuse it, exit 1.
load_ckpt() {
    check 1 "$C/$1" "$2" -- eval --load "$C/$1" --data "$D/good" --test-limit 16
    check 1 "$C/$1" "$2" -- run --load "$C/$1" --data "$D/good" --steps 1 --save "$W/m.ckpt"
}
load_ckpt empty.ckpt        "not a cnntop checkpoint"
load_ckpt magic-only.ckpt   "truncated"
load_ckpt cut-header.ckpt   "truncated"
load_ckpt cut-data.ckpt     "truncated"
load_ckpt cut-crc.ckpt      "truncated"
load_ckpt trailing.ckpt     "trailing data"
load_ckpt version-2.ckpt    "version 2, this cnntop reads version 1"
load_ckpt version-0.ckpt    "version 0, this cnntop reads version 1"
load_ckpt other-model.ckpt  "checkpoint of another model"
load_ckpt tensor-size.ckpt  "conv1.weight has 289 elements"
load_ckpt flipped.ckpt      "checksum mismatch"
load_ckpt reserved.ckpt      "reserved is 1, out of range (0..0)"
load_ckpt adam-negative.ckpt "adam_t (Adam steps taken) is 18446744073709551611, out of range"
load_ckpt epochs-done-huge.ckpt "epochs_done is 2147483647, out of range (0..1000000000)"
load_ckpt epoch-pos-negative.ckpt "epoch_pos (images of the current epoch) is 18446744073709551615, out of range"
load_ckpt epoch-pos-no-step.ckpt "adam_t is 0, fewer than the 2 epochs begun"
load_ckpt nan-weight.ckpt   "parameter conv1.weight[0] is nan"
# At the limit: loads, but no run may count past it.
check 1 "1000000000 epochs trained already" "pass the limit of 1000000000" -- \
    run --load "$C/epochs-done-full.ckpt" --data "$D/good" --steps 1 --save "$W/m.ckpt"
load_ckpt foreign-png.ckpt  "not a cnntop checkpoint"
load_ckpt foreign-text.ckpt "not a cnntop checkpoint"
load_ckpt idx.ckpt          "not a cnntop checkpoint"
load_ckpt huge.ckpt         "too large"
load_ckpt dir.ckpt          "is a directory"
load_ckpt fifo.ckpt         "not a regular file"
load_ckpt none.ckpt         "No such file or directory"

# ---- the table: records for report ----

check 1 "$R/sweep-empty.json" "a sweep record with no runs: nothing to report" -- report "$R/sweep-empty.json"
check 1 "$R/sweep-hollow.json: runs[1]" "nothing to report" -- report "$R/sweep-hollow.json"
check 1 "$R/hollow.json" "nothing to report (no training step, no evaluation, no error)" -- report "$R/hollow.json"
check 1 "$R/accuracy.json" "eval.accuracy is 1.5, out of range (0..1)" -- report "$R/accuracy.json"
check 1 "$R/correct.json" "eval.correct 17 is more than eval.images 16" -- report "$R/correct.json"
check 1 "$R/wall.json" "train.wall is -2, out of range" -- report "$R/wall.json"
check 1 "$R/batch-0.json" "config.batch is 0, out of range (1..65536)" -- report "$R/batch-0.json"
check 1 "$R/images.json" "train.images 0 for 1 steps" -- report "$R/images.json"
check 1 "$R/steps.json" "train.steps is 100000000000000, out of range" -- report "$R/steps.json"
check 1 "$R/sweep-empty.json" "nothing to report" -- report "$tmp/good.json" "$R/sweep-empty.json"

# ---- the table: the command line (exit 2, nothing run) ----

# bad_opt THING PROBLEM ARGS...: `cnntop ARGS` is refused with exit 2.
bad_opt() {
    thing=$1 problem=$2
    shift 2
    check 2 "$thing" "$problem" -- "$@"
}
g="--data $D/good --steps 1 --test-limit 16"
# shellcheck disable=SC2086 # $g is split on purpose
{
bad_opt "--bogus"    "unknown option"             run --bogus $g
bad_opt "-x"         "unknown option"             run -x $g
bad_opt "frobnicate" "unknown command"            frobnicate
bad_opt "extra"      "unexpected argument"        run extra $g
bad_opt "--batch"    "needs a value"              run $g --batch
bad_opt "--data"     "needs a value"              run --data
bad_opt "--batch"    "'abc' is not a whole number" run $g --batch abc
bad_opt "--batch"    "empty list"                 run $g --batch=
bad_opt "--lr"       "'' is not a finite number"  run $g --lr=
bad_opt "--batch"    "'1e3' is not a whole number" run $g --batch 1e3
bad_opt "--batch"    "'64x' is not a whole number" run $g --batch 64x
bad_opt "--batch"    "0 is out of range"          run $g --batch 0
bad_opt "--batch"    "-1 is out of range"         run $g --batch -1
bad_opt "--batch"    "65537 is out of range"      run $g --batch 65537
bad_opt "--batch"    "99999999999999999999999 is out of range" run $g --batch 99999999999999999999999
bad_opt "--steps"    "99999999999999999999999 is out of range (1..1000000000)" run $g --steps 99999999999999999999999
bad_opt "--batch"    "a list of values is for cnntop sweep" run $g --batch 64,128
bad_opt "--workers"  "-1 is out of range"         run $g --workers -1
bad_opt "--workers"  "65 is out of range"         run $g --workers 65
bad_opt "--workers"  "'two' is not a whole number" run $g --workers two
bad_opt "--threads"  "0 is out of range"          run $g --threads 0
bad_opt "--threads"  "-4 is out of range"         run $g --threads -4
bad_opt "--threads"  "100000 is out of range"     run $g --threads 100000
bad_opt "--threads"  "'1.5' is not a whole number" run $g --threads 1.5
bad_opt "--prefetch" "-1 is out of range (0..256)" run $g --prefetch -1
bad_opt "--epochs"   "0 is out of range"          run --data "$D/good" --epochs 0
bad_opt "--steps"    "0 is out of range"          run --data "$D/good" --steps 0
bad_opt "--limit"    "-5 is out of range"         run $g --limit -5
bad_opt "--test-limit" "0 is out of range"        run $g --test-limit 0
bad_opt "--lr"       "'nan' is not a finite number" run $g --lr nan
bad_opt "--lr"       "'inf' is not a finite number" run $g --lr inf
bad_opt "--lr"       "'-inf' is not a finite number" run $g --lr -inf
bad_opt "--lr"       "1e999 is out of range (0..10]" run $g --lr 1e999
bad_opt "--lr"       "'fast' is not a finite number" run $g --lr fast
bad_opt "--lr"       "0 is out of range"          run $g --lr 0
bad_opt "--lr"       "-0.1 is out of range"       run $g --lr -0.1
bad_opt "--lr"       "100 is out of range"        run $g --lr 100
bad_opt "--seed"     "'-1' is not a non-negative whole number" run $g --seed -1
bad_opt "--seed"     "'x' is not a non-negative whole number"  run $g --seed x
bad_opt "--augment"  "unknown augmentation 'blur'" run $g --augment blur
bad_opt "--force"    "takes no value"             run $g --force=yes
bad_opt "--lr"       "does not apply"             eval --load "$tmp/good.ckpt" --lr 0.1
bad_opt "--save"     "does not apply"             eval --load "$tmp/good.ckpt" --save "$W/m.ckpt"
bad_opt "eval"       "needs --load"               eval --data "$D/good"
}

# ---- numbers at the edges: every count within what the engine holds ----
# shellcheck disable=SC2086
{
bad_opt "--steps"    "9223372036854775807 is out of range (1..1000000000)" run $g --steps 9223372036854775807
bad_opt "--steps"    "1000000001 is out of range" run $g --steps 1000000001
bad_opt "--epochs"   "100001 is out of range (1..100000)" run --data "$D/good" --epochs 100001
bad_opt "--epochs"   "9223372036854775807 is out of range" run --data "$D/good" --epochs 9223372036854775807
bad_opt "--limit"    "100000001 is out of range (1..100000000)" run $g --limit 100000001
bad_opt "--test-limit" "9223372036854775807 is out of range" run $g --test-limit 9223372036854775807
bad_opt "--eval-every" "1000000001 is out of range" run $g --eval-every 1000000001
bad_opt "--runs"     "10001 is out of range"      run $g --runs 10001
bad_opt "--warmup"   "9223372036854775808 is out of range" run $g --warmup 9223372036854775808
bad_opt "--prefetch" "257 is out of range"        run $g --prefetch 257
bad_opt "--batch"    "9223372036854775807 is out of range" run $g --batch 9223372036854775807
bad_opt "--workers"  "4294967296 is out of range" run $g --workers 4294967296
bad_opt "--threads"  "4294967297 is out of range" run $g --threads 4294967297
bad_opt "--seed"     "18446744073709551616 is out of range" run $g --seed 18446744073709551616
bad_opt "--lr"       "1e-320 is too small: below 1.17549e-38" run $g --lr 1e-320
bad_opt "--lr"       "1e-39 is too small"         run $g --lr 1e-39
bad_opt "--target-accuracy" "1e-320 is too small" run $g --target-accuracy 1e-320
bad_opt "--target-accuracy" "1.5 is out of range (0..1]" run $g --target-accuracy 1.5
bad_opt "--budget"   "1e999 is out of range"      sweep $g --budget 1e999
bad_opt "--budget"   "1e-320 is too small"        sweep $g --budget 1e-320
}

# ---- paths: each kind named, with the real errno, before training ----

O=$tmp/out       # what the output options are pointed at
mkdir -p "$O/dir" "$O/dir.json"
mkfifo "$O/fifo" "$O/fifo.json"
ln -s loop-b "$O/loop-a"; ln -s loop-a "$O/loop-b"
ln -s loop-b.json "$O/loop-a.json"; ln -s loop-a.json "$O/loop-b.json"
ln -s nothing "$O/dangling"; ln -s nothing.json "$O/dangling.json"
# Never the system's /dev/null, /dev/stdout or /dev/stderr: a build with the
# bug this checks (rename over the target), run as root, would replace them
# for the whole machine.  A private character device (root can make one;
# anyone else cannot replace /dev/null anyway) and private links to
# /proc/self/fd stand in for them.
if mknod "$O/null" c 1 3 2>/dev/null; then NULL=$O/null; else NULL=/dev/null; fi
ln -s "$NULL" "$O/null.json"
ln -s /proc/self/fd/1 "$O/stdout"
ln -s /proc/self/fd/2 "$O/stderr"
long=$(python3 -c 'print("/tmp/" + "a" * 4200)')
name=$(python3 -c 'print("n" * 300)')
# bad_path OPT SUFFIX: OPT refuses each kind of path (SUFFIX: .json for --export).
bad_path() {
    opt=$1 x=$2
    # shellcheck disable=SC2086
    {
    check 2 "$opt" '"": empty file name' -- run $g "$opt" ''
    check 2 "$opt" "File name too long" -- run $g "$opt" "$long$x"
    check 2 "$opt" "ends in /" -- run $g "$opt" "$W/"
    check 1 "$W/$name$x" "File name too long" -- run $g "$opt" "$W/$name$x"
    check 1 "$O/dir$x" "a directory, not a regular file" -- run $g "$opt" "$O/dir$x"
    check 1 "$O/fifo$x" "a FIFO, not a regular file" -- run $g "$opt" "$O/fifo$x"
    check 1 "$O/loop-a$x" "Too many levels of symbolic links" -- run $g "$opt" "$O/loop-a$x"
    check 1 "$O/dangling$x" "points to nothing" -- run $g "$opt" "$O/dangling$x"
    check 1 "$O/nodir/m$x" "No such file or directory" -- run $g "$opt" "$O/nodir/m$x"
    check 1 "$O/fifo/m$x" "Not a directory" -- run $g "$opt" "$O/fifo/m$x"
    }
}
bad_path --save ""
bad_path --trace ""
bad_path --export .json
# shellcheck disable=SC2086
{
check 1 "$NULL" "a character device, not a regular file" -- run $g --save "$NULL"
check 1 "$NULL" "a character device, not a regular file" -- run $g --trace "$NULL"
check 1 "$O/null.json" "a character device, not a regular file" -- run $g --export "$O/null.json"
# stdout is a file here: replacing it would cut cnntop's own output off.
check 1 "$O/stdout" "standard output" -- run $g --save "$O/stdout"
check 1 "$O/stderr" "standard error" -- run $g --trace "$O/stderr"
check 1 "$O/fifo.json" "a FIFO, not a regular file" -- sweep $g --export "$O/fifo.json"
check 2 "--data" '"": empty directory name' -- run --data '' --steps 1
check 2 "--data" "File name too long" -- run --data "$long" --steps 1
check 1 "$O/loop-a" "Too many levels of symbolic links" -- run --data "$O/loop-a" --steps 1
check 2 "--load" '"": empty file name' -- eval --load ''
check 2 "--load" "File name too long" -- run $g --load "$long"
check 1 "$O/loop-a" "Too many levels of symbolic links" -- eval --load "$O/loop-a" --data "$D/good"
check 2 "--history" '"": empty file name' -- --history ''
}
# Into a pipe: refused as a FIFO, not renamed over, the pipe still works.
"$CNNTOP" run $g --trace "$O/stdout" 2>"$L/err" | cat >"$L/out"
grep -q "$O/stdout: a FIFO, not a regular file" "$L/err" || fail "--trace /dev/stdout into a pipe: $(cat "$L/err")"
checks=$((checks + 1))

# ---- a run that fails before training writes nothing ----
# (check: nothing written, one line on stderr, so no "record written")
check 1 "$D/magic/$ti" "bad IDX magic" -- run --data "$D/magic" --steps 1 --export "$W/r.json" \
    --save "$W/m.ckpt" --trace "$W/t.json"
check 1 "$D/magic/$ti" "bad IDX magic" -- sweep --data "$D/magic" --steps 1 --batch 8,16 \
    --export "$W/s.json"
check 1 "epochs trained already" "pass the limit" -- run --load "$C/epochs-done-full.ckpt" \
    --data "$D/good" --steps 1 --export "$W/r.json"

# ---- output files ----

# --save into a directory that does not exist.  Training runs first (the
# path is only tried at the end), so stderr holds progress lines too.
check 1 "$tmp/nodir/m.ckpt" "No such file or directory" -- \
    run --data "$D/good" --steps 1 --test-limit 16 --save "$tmp/nodir/m.ckpt"
# --export into a directory that does not exist, once --export is wired up.
"$CNNTOP" run --data "$D/good" --steps 1 --test-limit 16 --export "$tmp/probe.json" \
    >"$L/out" 2>"$L/err"
if [ -e "$tmp/probe.json" ]; then
    rm -f "$tmp/probe.json"
    check 1 "$tmp/nodir/r.json" "No such file or directory" -- \
        run --data "$D/good" --steps 1 --test-limit 16 --export "$tmp/nodir/r.json"
else
    skip "--export to a missing directory: this build writes no export yet"
fi

# ---- empty values: no option gives emptiness a meaning ----
# An empty value, or a list with an empty item, for every option that
# takes a list or a string, in every command that takes it: exit 2, one
# line, nothing run.  (Paths and numbers have their cases above.)
# shellcheck disable=SC2086
{
for cmd in run sweep; do
    bad_opt "-e"        "empty list"             $cmd $g -e ''
    bad_opt "--events"  "empty list"             $cmd $g --events=
    bad_opt "--augment" "empty list (none, or a comma list of shift, rotate, elastic)" $cmd $g --augment ''
    bad_opt "--augment" "'shift,': an empty augmentation name" $cmd $g --augment shift,
    bad_opt "--augment" "',rotate': an empty augmentation name" $cmd $g --augment ,rotate
    bad_opt "--augment" "'shift,,rotate': an empty augmentation name" $cmd $g --augment shift,,rotate
    bad_opt "--augment" "'none,': an empty augmentation name" $cmd $g --augment none,
    for opt in --batch --workers --threads; do
        bad_opt "$opt" "empty list"             $cmd $g "$opt" ''
        bad_opt "$opt" "'2,': an empty value in the list" $cmd $g "$opt" 2,
    done
done
bad_opt "--batch"    "',16': an empty value in the list" sweep $g --batch ,16
bad_opt "--workers"  "'0,,1': an empty value in the list" sweep $g --workers 0,,1
bad_opt "--batch"    "'16,': an empty value in the list" eval --load "$tmp/good.ckpt" --batch 16,
bad_opt "-e"         "empty list"                events -e ''
bad_opt "-e"         "empty list"                exec -e '' -- true
bad_opt "--events"   "empty list"                exec --events '' -- true
bad_opt "--progress" "empty pattern"             exec --progress '' -- true
bad_opt "--progress" "empty pattern"             exec --progress= -- true
bad_opt "--cmd"      "empty command template"    sweep --cmd ''
bad_opt "--cmd"      "the template is blank"     sweep --cmd ' '
bad_opt "--export"   '"": empty file name'       exec --export '' -- true
bad_opt "--export"   '"": empty file name'       sweep $g --export ''
bad_opt "--export"   '"": empty file name'       report --export '' "$tmp/good.json"
bad_opt "--gemm"     "'' is not auto, openblas or native" run $g --gemm ''
bad_opt "--blas-kernel" "'' is not auto or openblas" run $g --blas-kernel ''
bad_opt "--budget"   "'' is not a finite number" sweep $g --budget ''
bad_opt "--runs"     "'' is not a whole number"  sweep $g --runs ''
bad_opt "--seed"     "'' is not a non-negative whole number" run $g --seed ''
}

echo "test_badinput: $((checks - fails)) passed, $fails failed, $skips skipped"
[ "$fails" -eq 0 ]

#!/bin/sh
# test_exec_layers.sh CNNTOP PYTHON: `cnntop exec`'s layer window on a real
# PyTorch script (tests/cli/layers_cnn.py: Conv2d, BatchNorm2d, ReLU,
# MaxPool2d, Linear, Dropout, CrossEntropyLoss, Adam on random images):
# the layer table's rows in cnntop's form, the window's steps (evaluations
# under no_grad left out), FLOPs per image equal to the hand count in the
# script, each row's GFLOP/s its FLOPs over its time, MFU equal to images/s
# x FLOPs per image over the FMA peak of a calibration cache made for the
# test, the window's cost stated; `report` of the export prints the same
# table, CSV and Markdown carry it; --layers off and bad values.  Needs
# PYTHON with torch (skips, 77, without).  No timing thresholds.
set -u
CNNTOP=$1
PY=${2:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$PY" -c 'import torch' 2>/dev/null; then
    echo "test_exec_layers: SKIP: $PY has no torch (Debian's python3-torch)"
    exit 77
fi

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

has() {
    grep -q -- "$1" "${2:-$tmp/out}" || fail "${2:-summary} lacks /$1/"
}

# py FILE CODE: Python over the parsed JSON d must exit 0 (messages its own).
py() {
    "$PY" -c "import json,sys; d=json.load(open(sys.argv[1]))
$2" "$1" || fail "$1: the check above"
}

# The model section of a summary: from its heading to the window's cost.
section() {
    sed -n '/^ Model, layer by layer/,/^  Window.s cost:/p' "$1"
}

# A calibration cache for this machine (cnntop calibrate: the compute
# threads are the cores), and torch on as many threads, so that MFU has
# its peak.
export XDG_CACHE_HOME="$tmp/cache"
run 0 calibrate
cache=$(ls "$tmp"/cache/cnntop/calibration-* 2>/dev/null | head -n 1)
[ -n "$cache" ] || fail "calibrate wrote no cache under $tmp/cache"
threads=$(sed -n 's/^threads=//p' "$cache")
peak=$(sed -n 's/^fma_[a-z0-9]*=//p' "$cache" | sort -g | tail -n 1)
echo "calibration: $threads threads, FMA peak $peak GFLOP/s"

# ---- the window: 120 steps (3 epochs of 40), the default steps 5..24 ----
run 0 exec --no-dashboard --export "$tmp/l.json" -- "$PY" "$HERE/layers_cnn.py" "$threads" 3
cp "$tmp/out" "$tmp/exec.out"
has "^ Model, layer by layer (optimizer steps 5\.\.24, "
for row in "conv1 fwd  *Conv2d" "conv1 bwd  *Conv2d" "bn1 fwd  *BatchNorm2d" \
    "bn1 bwd  *BatchNorm2d" "relu fwd  *ReLU" "pool fwd  *MaxPool2d" "fc1 fwd  *Linear" \
    "fc1 bwd  *Linear" "drop fwd  *Dropout" "fc2 fwd  *Linear" \
    "CrossEntropyLoss fwd  *CrossEntropyLoss" "CrossEntropyLoss bwd" "Adam step  *optimizer"; do
    has "^  $row  "
done
has "^  Layer  *Module  *ms/step  *share model GFLOP/s"
has "^  FLOPs per image:      0\.036 MFLOP per training image (as PyTorch counts"
has "^  Against the peak:     MFU [0-9.]*% "
has "^  On paper:  "
has "^  Window's cost:        a step took [0-9.]* ms in the window, [0-9.]* ms after it (medians, 9[0-9] steps): [-+][0-9.]*% while measured"
py "$tmp/l.json" "
m = d['model']; L = {l['name']: l for l in d['layers']}
def no(msg): print('test_exec_layers:', msg); sys.exit(1)
if (m['first'], m['steps']) != (5, 20): no('window %r' % m)
# The hand count of layers_cnn.py: 10368 x 2 + (4608 + 320) x 3.
if d['flops_per_image'] != 35520: no('flops_per_image %r, not 35520' % d['flops_per_image'])
# 20 training calls of conv1 (the no_grad evaluation at step 10 and 20 left out),
# each of 8 images: forward 8 x 10368 FLOPs a call, backward as much (the
# weights' gradient only: the images need none); fc1's backward twice its forward.
c = L['conv1 fwd']
if c['calls'] != 20: no('conv1 fwd calls %r' % c['calls'])
if c['flops'] != 20 * 8 * 10368: no('conv1 fwd flops %r' % c['flops'])
if L['conv1 bwd']['flops'] != c['flops']: no('conv1 bwd flops %r' % L['conv1 bwd']['flops'])
if L['fc1 fwd']['flops'] != 20 * 8 * 4608: no('fc1 fwd flops %r' % L['fc1 fwd']['flops'])
if L['fc1 bwd']['flops'] != 2 * 20 * 8 * 4608: no('fc1 bwd flops %r' % L['fc1 bwd']['flops'])
if L['relu fwd']['calls'] != 40: no('relu (twice a step) calls %r' % L['relu fwd']['calls'])
if L['bn1 fwd']['flops'] is not None: no('BatchNorm has FLOPs')
for l in d['layers']:
    if l['flops'] is not None and abs(l['gflops'] - l['flops'] / l['seconds'] / 1e9) > 1e-9 * l['gflops']:
        no('%s: %r GFLOP/s is not %r FLOPs over %r s' % (l['name'], l['gflops'], l['flops'], l['seconds']))
    if l['seconds'] < 0 or not l['kind']: no('row %r' % l)
peak = float(sys.argv[2]) if len(sys.argv) > 2 else None
if d['machine']['fma_peak_gflops'] is None: no('no FMA peak from the cache')
want = d['exec']['images_per_s'] * d['flops_per_image'] / (d['machine']['fma_peak_gflops'] * 1e9)
if abs(m['mfu'] - want) > 1e-9 * want: no('mfu %r, images/s x FLOPs / peak %r' % (m['mfu'], want))
if m['overhead'] is None or m['steps_out'] < 90: no('the window cost not measured: %r' % m)
print('window cost %+.1f%%, MFU %.3f%%' % (100 * m['overhead'], 100 * m['mfu']))
"
py "$tmp/l.json" "
p = abs(d['machine']['fma_peak_gflops'] - $peak)
sys.exit(0 if p < 1e-3 else 1)"
mfu=$("$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print('%.2f' % (100 * d['model']['mfu']))" "$tmp/l.json")
has "^  Against the peak:     MFU $mfu% "

# ---- report of the export prints the same section; CSV and Markdown carry it ----
run 0 report "$tmp/l.json"
section "$tmp/exec.out" >"$tmp/a"
section "$tmp/out" >"$tmp/b"
[ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b" || { diff "$tmp/a" "$tmp/b" >&2; fail "report's model section differs from exec's"; }
run 0 report "$tmp/l.json" --export "$tmp/l.md"
has "^## Layers" "$tmp/l.md"
has "^| conv1 fwd | Conv2d | " "$tmp/l.md"
has "^| mfu | " "$tmp/l.md"
run 0 report "$tmp/l.json" --export "$tmp/l.csv"
"$PY" - "$tmp/l.csv" "$tmp/l.json" <<'PYEOF' || fail "the CSV's model columns"
import csv, json, sys
row = next(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
assert float(row["flops_per_image"]) == d["flops_per_image"], row["flops_per_image"]
assert float(row["model.mfu"]) == d["model"]["mfu"], row["model.mfu"]
assert int(row["model.steps"]) == 20, row["model.steps"]
PYEOF

# ---- cnntop's own model (the article's EnhancedCNN): 46.2 MFLOP an image ----
run 0 exec --no-dashboard --export "$tmp/e.json" --layers 1:2 -- "$PY" "$HERE/layers_cnn.py" 1 1 enhanced
py "$tmp/e.json" "
# conv 1->32, 32->64, 64->128 (3x3, pad 1) on 28, 14, 7; fc 1152->256->128->10:
fwd = [2*32*28*28*9, 2*64*14*14*32*9, 2*128*7*7*64*9, 2*1152*256, 2*256*128, 2*128*10]
want = 2 * fwd[0] + 3 * sum(fwd[1:])
sys.exit(0 if d['flops_per_image'] == want == 46228992 else 1)"
has "^  FLOPs per image:      46\.229 MFLOP per training image .*: cnntop's own model's count"

# ---- --layers FIRST:STEPS, off, and what it refuses ----
run 0 exec --no-dashboard --layers 2:3 -- "$PY" "$HERE/layers_cnn.py" 1 1
has "^ Model, layer by layer (optimizer steps 2\.\.4, "
run 0 exec --no-dashboard --layers off -- "$PY" "$HERE/layers_cnn.py" 1 1
grep -q "Model, layer by layer" "$tmp/out" && fail "--layers off still measured"
# A window past the end of the run: nothing to say.
run 0 exec --no-dashboard --layers 100:5 -- "$PY" "$HERE/layers_cnn.py" 1 1
grep -q "Model, layer by layer" "$tmp/out" && fail "a window after the last step printed a table"
for bad in 0:5 5:0 5 x:3 5:3x -1:2 5:1000001 ""; do
    run 2 exec --no-dashboard --layers "$bad" -- true
    has "^cnntop: --layers: " "$tmp/err"
done

[ "$fails" -eq 0 ] && echo "test_exec_layers: all passed"
[ "$fails" -eq 0 ]

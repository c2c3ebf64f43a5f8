#!/bin/sh
# test_layer_rates.sh CNNTOP: the per-layer GFLOP/s say what they count.
# The model's rate (the direct convolution's FLOPs, PyTorch's count) is
# labelled as the model's, and where the engine runs fewer FLOPs (the
# Winograd convolutions conv2 and conv3, 4.1-4.8x fewer: 5.4x fewer in
# their products, and their transforms besides; block 1's forward, whose
# moments pass is conv1 fwd and whose convolution runs in bn1+relu+pool1
# fwd) the executed rate is shown beside it: in the summary's layer table, the record's layers
# (flops_executed, gflops_executed) and the Markdown export.  The record's
# samples say their span (dt), and a record written before these members
# (without them) still reads in `cnntop report` and converts to CSV with
# those cells empty.  Needs the default data; skips (77) without it.
set -u
CNNTOP=$1
DATA=/usr/share/datasets/fashion-mnist
PY=/usr/bin/python3
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"

[ -r "$DATA/train-images-idx3-ubyte.gz" ] || [ -r "$DATA/train-images-idx3-ubyte" ] ||
    { echo "SKIP: no data in $DATA"; exit 77; }
[ -x "$PY" ] || { echo "SKIP: no $PY"; exit 77; }

check() { # check DESCRIPTION COMMAND...
    d=$1
    shift
    checks=$((checks + 1))
    if ! "$@" >"$tmp/check.out" 2>&1; then
        echo "FAIL: $d" >&2
        cat "$tmp/check.out" >&2
        fails=$((fails + 1))
    fi
}

small="--steps 3 --limit 320 --test-limit 64 --batch 32 --threads 1"
"$CNNTOP" run $small --export "$tmp/run.json" >"$tmp/run.out" 2>"$tmp/run.err"
check "run exits 0" test $? -eq 0
"$CNNTOP" run $small --export "$tmp/run.md" >/dev/null 2>&1
check "run --export .md exits 0" test $? -eq 0

check "summary: the model's rate and the executed one, defined" $PY - "$tmp/run.out" <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read()
assert re.search(r"^  Layer +ms/step +share +model GFLOP/s +executed", text, re.M), text
assert "the model's FLOPs, as the direct convolution and PyTorch count them" in text, text
rows = {m.group(1).strip(): m.group(2).split()
        for m in re.finditer(r"^  (\S+(?: \S+)*?) {2,}[\d.]+ +[\d.]+% +(.*)$", text, re.M)}
# Per image, the model's FLOPs over the executed ones (tests/nn/test_flops.c
# and tests/calibrate/test_sketch.c derive them): F(7x7,3x3)'s products, 81
# for a 7x7 tile's 441 multiply-adds, and its transforms.
ratio = {"conv2 fwd": 7225344 / 1754624, "conv2 bwd": 14450688 / 3320320,
         "conv3 fwd": 7225344 / 1540864, "conv3 bwd": 14450688 / 3036416}
for name, r in ratio.items():
    model, executed = (float(x) for x in rows[name][:2])
    # each figure rounded to 0.1 on its own (97.2 may be 97.15)
    assert abs(executed - model / r) <= 0.05 + 0.05 / r + 1e-9, (name, rows[name])
# conv1 fwd computes its input's moments (90000 FLOPs an image against
# the model's 451584 for the convolution), bn1+relu+pool1 fwd runs the
# convolution the model counts under conv1: an executed rate, no model's.
model, executed = (float(x) for x in rows["conv1 fwd"][:2])
assert abs(executed - model * 90000 / 451584) <= 0.05 + 0.05 * 90000 / 451584 + 1e-9, \
    rows["conv1 fwd"]
assert rows["bn1+relu+pool1 fwd"][0] == "-" and float(rows["bn1+relu+pool1 fwd"][1]) > 0, \
    rows["bn1+relu+pool1 fwd"]
assert len(rows["fc1 bwd"]) == 1 and float(rows["fc1 bwd"][0]) >= 0, rows["fc1 bwd"]
assert rows["adam"] == ["-"], rows["adam"]
PYEOF

check "JSON: flops_executed and its rate per layer, dt per sample" $PY - "$tmp/run.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
images = r["train"]["images"]
total = 0
want = {"conv2 fwd": 7225344 / 1754624, "conv2 bwd": 14450688 / 3320320,
        "conv3 fwd": 7225344 / 1540864, "conv3 bwd": 14450688 / 3036416,
        "conv1 fwd": 451584 / 90000}
for l in r["layers"]:
    assert "flops_executed" in l and "gflops_executed" in l, l
    if l["name"] == "bn1+relu+pool1 fwd":  # conv1's convolution runs here
        assert l["flops"] is None and l["flops_executed"] == 451584 * images, l
        total += l["flops_executed"]
        continue
    if l["flops"] is None:
        assert l["flops_executed"] is None and l["gflops_executed"] is None, l
        continue
    total += l["flops_executed"]
    ratio = l["flops"] / l["flops_executed"]
    if l["name"] in want:
        assert abs(ratio / want[l["name"]] - 1) < 1e-9, l
    else:
        assert ratio == 1, l
    if l["seconds"] > 0:
        assert abs(l["gflops_executed"] - l["flops_executed"] / l["seconds"] * 1e-9) <= \
            1e-9 * l["gflops_executed"], l
assert abs(total / images - r["flops_executed_per_image"]) < 1e-6, (total / images)
s = r["samples"]
assert s and all(x["dt"] > 0 for x in s), s
assert abs(s[0]["t"] - s[0]["dt"]) < 1e-9 and \
    all(abs(b["t"] - b["dt"] - a["t"]) < 1e-9 for a, b in zip(s, s[1:])), s
PYEOF

check "Markdown: both columns, the executed one where they differ" $PY - "$tmp/run.md" <<'PYEOF'
import sys
text = open(sys.argv[1]).read()
assert "| Layer | ms/step | Share | Model GFLOP/s | Executed GFLOP/s |" in text, text
text = text.split("\n## Layers", 1)[1].split("\n## ", 1)[0]  # the Layers section alone
cells = {l.split("|")[1].strip(): [c.strip() for c in l.split("|")[4:6]]
         for l in text.splitlines() if l.startswith(("| conv", "| fc", "| bn1"))}
assert all(cells[n][1] for n in ("conv2 fwd", "conv3 bwd")), cells
assert not cells["bn1+relu+pool1 fwd"][0] or cells["bn1+relu+pool1 fwd"][0] == "-", cells
assert cells["bn1+relu+pool1 fwd"][1] and not cells["bn1 bwd"][1], cells
assert cells["conv1 fwd"][1] and not cells["fc2 bwd"][1] and cells["fc2 bwd"][0], cells
PYEOF

# A record from before samples[].dt and layers[].flops_executed.
$PY - "$tmp/run.json" "$tmp/old.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["samples"]:
    del s["dt"]
for l in r["layers"]:
    del l["flops_executed"], l["gflops_executed"]
json.dump(r, open(sys.argv[2], "w"))
PYEOF
check "report reads a record without dt and flops_executed" "$CNNTOP" report "$tmp/old.json"
check "and converts it to CSV, dt empty" sh -c "'$CNNTOP' report '$tmp/old.json' --export '$tmp/old.csv' &&
    head -1 '$tmp/old.csv' | grep -q '^t,dt,epoch,' && sed -n 2p '$tmp/old.csv' | grep -q '^[0-9.e-]*,,'"

echo "test_layer_rates: $((checks - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]

#!/bin/sh
# test_paper_parts.sh CNNTOP: the time on paper, part by part.  A run's
# summary has the table "On paper, per part": one row per layer of the
# layer table with its measured ms/step, its paper ms (compute + memory),
# the ratio, its MB per step and its bound, and a last row for the parts
# together.  The rows add up to that last row; each part's bytes in the
# record (layers[].bytes) are the engine's count (nn/model.h: 710282 bytes
# an image and 26476176 a step over all parts, tests/calibrate/test_sketch.c
# computes them by hand), and their sum is the "On paper" line's GB.
# `cnntop report` of the export prints the same table, and its Markdown
# export has the same rows (in step order).  Needs the default data; skips
# (77) without it.
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
    if "$@" >"$tmp/check.out" 2>&1; then
        echo "ok: $d"
    else
        echo "FAIL: $d" >&2
        cat "$tmp/check.out" >&2
        fails=$((fails + 1))
    fi
}

"$CNNTOP" run --steps 3 --limit 320 --test-limit 64 --batch 32 --threads 1 \
    --export "$tmp/run.json" >"$tmp/run.out" 2>"$tmp/run.err"
check "run exits 0" test $? -eq 0
"$CNNTOP" report "$tmp/run.json" >"$tmp/report.out" 2>&1
check "report exits 0" test $? -eq 0
"$CNNTOP" report "$tmp/run.json" --export "$tmp/run.md" >/dev/null 2>&1
check "report --export .md exits 0" test $? -eq 0

check "summary: a row per layer, adding up to the parts together" $PY - "$tmp/run.out" "$tmp/run.json" <<'PYEOF'
import json, re, sys
text = open(sys.argv[1]).read()
r = json.load(open(sys.argv[2]))
part = text.split("On paper, per part", 1)
assert len(part) == 2, text
head, body = part[1].split("\n", 1)
assert head.split() == ["ms/step", "paper", "ms", "x", "paper", "compute", "ms", "memory",
                        "ms", "MB/step", "bound", "on", "paper"], head
rows = {}
for line in body.splitlines():
    m = re.match(r"^  (\S+(?: \S+)*?) {2,}([\d.]+) +([\d.]+) +(\S+) +([\d.]+) +([\d.]+) +"
                 r"([\d.]+)  (compute|memory)$", line)
    if not m:
        break
    rows[m.group(1)] = [float(m.group(i)) for i in (2, 3, 5, 6, 7)] + [m.group(4), m.group(8)]
names = {l["name"] for l in r["layers"]}
total = rows.pop("the parts together")
assert set(rows) == names, (set(rows) ^ names)
for name, (ms, paper, c, m, mb, x, bound) in rows.items():
    assert abs(paper - (c + m)) <= 0.0016, (name, rows[name])
    if abs(c - m) > 0.0011:  # else the rounding may hide which is larger
        assert bound == ("compute" if c > m else "memory"), (name, rows[name])
    # x is printed to 0.1, ms and paper to 0.001: their rounding moves ms / paper
    if paper > 0.05:
        assert abs(float(x.rstrip("x")) - ms / paper) <= \
            0.051 + 0.0006 * (1 / paper + ms / paper ** 2), (name, rows[name])
half = [0.0005] * 4 + [0.005]  # half a unit of each column's last printed digit
for k in range(5):
    got = sum(v[k] for v in rows.values())
    assert abs(got - total[k]) <= half[k] * (len(rows) + 1) + 1e-9, (k, got, total)
# most time beyond paper first (each difference rounded by up to 0.001)
ex = [rows[n][0] - rows[n][1] for n in rows]
assert all(a >= b - 0.0021 for a, b in zip(ex, ex[1:])), ex
PYEOF

check "record: each layer's bytes, as the engine counts them, are the sketch's" $PY - "$tmp/run.json" "$tmp/run.out" <<'PYEOF'
import json, re, sys
r = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
t = r["train"]
steps, images = t["steps"], t["images"]
assert images == steps * 32, (steps, images)
total = sum(l["bytes"] for l in r["layers"])
want = images * 710282 + steps * 26476176
assert abs(total - want) <= 1e-9 * want, (total, want)
assert all(l["bytes"] > 0 for l in r["layers"]), r["layers"]
gb = float(re.search(r"On paper: .*\+ ([\d.]+) GB at", text).group(1))
assert abs(gb - total * 1e-9) <= 0.005, (gb, total)
PYEOF

check "report prints the run's own table" sh -c \
    "sed -n '/On paper, per part/,/(paper:/p' '$tmp/run.out' >'$tmp/a' &&
     sed -n '/On paper, per part/,/(paper:/p' '$tmp/report.out' >'$tmp/b' &&
     test -s '$tmp/a' && cmp '$tmp/a' '$tmp/b'"

check "Markdown: the same rows as the summary's table" $PY - "$tmp/run.out" "$tmp/run.md" <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read().split("On paper, per part", 1)[1].split("(paper:", 1)[0]
md = open(sys.argv[2]).read().split("## On paper, per part", 1)[1].split("\nPaper:", 1)[0]
rows = {}
for line in text.splitlines()[1:]:
    m = re.match(r"^  (\S+(?: \S+)*?) {2,}(.*)$", line)
    if m:
        f = m.group(2).split()
        rows[m.group(1)] = [f[0], f[1], f[2], f[3], f[4], f[5], f[6]]
cells = {}
for line in md.splitlines():
    c = [x.strip() for x in line.split("|")[1:-1]]
    if len(c) == 8 and c[0] not in ("Part", ":---"):
        cells[c[0]] = c[1:]
assert set(cells) == set(rows) and len(rows) > 20, (set(cells) ^ set(rows))
for name, v in rows.items():
    assert cells[name] == v, (name, v, cells[name])
PYEOF

echo "$((checks - fails)) of $checks checks passed"
[ "$fails" -eq 0 ]

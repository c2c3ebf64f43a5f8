#!/bin/sh
# test_export.sh CNNTOP: repeats, sweeps, exports and report, as a user
# sees them: a small sweep's table, recommendation and exports (JSON with
# hyperfine's fields, CSV, Markdown); run --export then report prints the
# same figures; a sweep interrupted by SIGINT leaves a complete, valid
# partial export marked as interrupted and no temporary file; the trace
# parses.  Needs the default data; skips (77) without it.
set -u
CNNTOP=$1
DATA=/usr/share/datasets/fashion-mnist
PY=/usr/bin/python3
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"   # calibrate here, not in the user's cache

[ -r "$DATA/train-images-idx3-ubyte.gz" ] || [ -r "$DATA/train-images-idx3-ubyte" ] ||
    { echo "SKIP: no data in $DATA"; exit 77; }

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

small="--steps 3 --limit 640 --test-limit 200"

# 1. A small sweep: 2 batch sizes x 2 worker counts, 2 runs each.
"$CNNTOP" sweep --batch 32,64 --workers 0,1 --runs 2 $small --export "$tmp/sweep.json" \
    >"$tmp/sweep.out" 2>"$tmp/sweep.err"
check "sweep exits 0" test $? -eq 0
check "sweep prints its table" grep -q "Configuration .*Images/s.*Speedup" "$tmp/sweep.out"
check "sweep has 4 rows" test "$(grep -c '^ batch [36][24], [01] worker' "$tmp/sweep.out")" -eq 4
check "sweep recommends" grep -q "^ Recommended: \|^ Fastest: " "$tmp/sweep.out"
check "sweep JSON: 4 runs with every documented field, hyperfine results" $PY - "$tmp/sweep.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "cnntop.sweep/1", d["schema"]
assert len(d["runs"]) == 4, len(d["runs"])
for r in d["runs"]:
    for k in ("schema", "config", "machine", "train", "eval", "samples", "layers",
              "counters", "repeats", "interrupted"):
        assert k in r, k
    assert len(r["repeats"]) == 2
assert len(d["results"]) == 4
for e in d["results"]:
    for k in ("command", "mean", "stddev", "median", "user", "system", "min", "max", "times"):
        assert k in e, k
    assert len(e["times"]) == 2 and e["mean"] > 0
PYEOF
"$CNNTOP" sweep --batch 32,64 --workers 0,1 $small --export "$tmp/sweep.csv" >/dev/null 2>&1
check "sweep CSV: a header and one row per configuration" $PY - "$tmp/sweep.csv" <<'PYEOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 4, len(rows)
PYEOF
"$CNNTOP" sweep --batch 32 --workers 0,1 $small --export "$tmp/sweep.md" >/dev/null 2>&1
check "sweep Markdown has a table" grep -q '^|.*|$' "$tmp/sweep.md"

# 2. run --export, then report prints the same figures.
"$CNNTOP" run --workers 1 $small --export "$tmp/a.json" >"$tmp/run.out" 2>/dev/null
check "run --export exits 0" test $? -eq 0
"$CNNTOP" report "$tmp/a.json" >"$tmp/report.out" 2>&1
check "report exits 0" test $? -eq 0
for what in "Throughput:" "Steps, images:" "Test accuracy:" "Data wait:" "conv2 bwd"; do
    check "report repeats the run's '$what' line" \
        sh -c "grep -F '$what' '$tmp/run.out' | head -1 >'$tmp/l1'; grep -F '$what' '$tmp/report.out' | head -1 >'$tmp/l2'; test -s '$tmp/l1' && cmp -s '$tmp/l1' '$tmp/l2'"
done
# Side by side, nothing is cut so that two values look alike: the whole
# configuration (over two rows: "batch 32, 0 workers," then "2 threads")
# and a long file name by its tail, where names differ.
cp "$tmp/a.json" "$tmp/a-long-file-name-for-the-second.json"
"$CNNTOP" report "$tmp/a.json" "$tmp/a-long-file-name-for-the-second.json" "$tmp/sweep.json" \
    >"$tmp/cmp.out" 2>&1
check "report compares side by side" test $? -eq 0
check "... the configuration whole (its threads)" grep -q "^  *[0-9][0-9]* threads\? " "$tmp/cmp.out"
check "... a long file name by its tail" grep -q "~.*-the-second.json " "$tmp/cmp.out"
"$CNNTOP" run $small --export "$tmp/a.json" >/dev/null 2>"$tmp/err"
check "an existing export is not overwritten without --force" test $? -eq 1
check "... and says so before training" grep -q "exists" "$tmp/err"
echo '{"schema":"cnntop.run/2"}' >"$tmp/v2.json"
"$CNNTOP" report "$tmp/v2.json" >/dev/null 2>"$tmp/err"
check "report refuses another schema version" test $? -eq 1
check "... naming the file" grep -q "v2.json" "$tmp/err"

# Evaluations every N steps and the time to a target accuracy.
"$CNNTOP" run --steps 6 --limit 640 --test-limit 200 --eval-every 2 --target-accuracy 0.05 \
    --export "$tmp/tt.json" >"$tmp/tt.out" 2>/dev/null
check "time to target is printed" grep -q "^  Time to 5.00%: *[0-9.]* s of training" "$tmp/tt.out"
check "evals and time_to_target are exported" $PY - "$tmp/tt.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
steps = [e["step"] for e in d["evals"]]
assert steps == [2, 4, 6], steps
assert d["target_accuracy"] == 0.05 and d["time_to_target"] <= d["evals"][0]["wall"] + 1e-9
assert all("ipc" in l and "miss_rate" in l for l in d["layers"])
PYEOF

# 3. SIGINT in the middle of a sweep: a valid partial export.
# SIGINT as a foreground job has it (a background job starts with it
# ignored, and cnntop keeps it so).
env --default-signal=INT "$CNNTOP" sweep --batch 32,64 --workers 0 --steps 400 --limit 6400 \
    --test-limit 200 --export "$tmp/part.json" >"$tmp/part.out" 2>"$tmp/part.err" &
pid=$!
for i in $(seq 1 300); do
    grep -q "step [1-9]" "$tmp/part.err" 2>/dev/null && break
    sleep 0.1
done
kill -INT $pid
wait $pid
check "interrupted sweep exits 130" test $? -eq 130
check "interrupted sweep export is valid and marked" $PY - "$tmp/part.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "cnntop.sweep/1"
assert len(d["runs"]) >= 1 and d["runs"][-1]["interrupted"] is True
PYEOF
check "no temporary file left" sh -c "test -z \"\$(ls -A '$tmp' | grep -v -e '^cache$' -e '\.json$' -e '\.csv$' -e '\.md$' -e '\.out$' -e '\.err$' -e '^err$' -e '^l[12]$' -e '^check.out$')\""

# 4. --trace writes well-formed trace events.
"$CNNTOP" run --workers 1 $small --trace "$tmp/trace.json" >/dev/null 2>&1
check "trace parses with complete events" $PY - "$tmp/trace.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in d["traceEvents"] if e["ph"] == "X"]
names = {e["name"] for e in ev}
assert {"step", "data wait", "conv2 bwd", "prepare batch"} <= names, names
assert all(e["dur"] >= 0 and e["ts"] >= 0 and "tid" in e for e in ev)
PYEOF

echo "test_export: $checks checks, $fails failed"
[ "$fails" -eq 0 ]

#!/bin/sh
# test_sweep_cmd_ranks.sh CNNTOP [PYTHON]: `cnntop sweep --cmd` with
# {ranks}, the number of processes of a data-parallel job, from --ranks.
# Without torch: the refusals (0, negative, not a number, {ranks} without
# --ranks and --ranks without {ranks}, another launcher's word for it,
# --mpirun-args), each one line, exit 2, nothing run; the Ranks and Scaling
# columns of a grid.  With PYTHON's torch (gloo): ddp_train.py swept over
# --ranks 2,1 (the job of two ranks first, so that the second configuration
# shows its own one rank, not the first's two), --runs 2: each row's
# images/s is its record's job figure (the sum over its ranks), the Scaling
# column is images/s at 2 / (2 x images/s at 1), and each configuration's
# export holds its own ranks and layer window merged over its two runs
# (not the first run's alone): the ranks' batches sum to the job's, their
# images/s to the job's mean, the one-rank job's window's steps are both
# runs (of a two-rank job, the window is whichever rank's came first); report of
# the export gives the ranks' counters rows of their own.  The torch part
# skips (77) without torch.
set -u
CNNTOP=$1
PY=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
SCRIPT=$HERE/ddp_train.py
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
W=$tmp/w

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# bad PROBLEM ARGS...: cnntop ARGS (in $W) says one line 'cnntop: ...'
# with PROBLEM, exits 2, runs nothing.
bad() {
    problem=$1
    shift
    checks=$((checks + 1))
    rm -rf "$W" && mkdir -p "$W"
    (cd "$W" && "$CNNTOP" "$@" >"$tmp/out" 2>"$tmp/err")
    rc=$?
    [ "$rc" -eq 2 ] || fail "cnntop $*: exit $rc, not 2"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^cnntop: .*$problem" "$tmp/err" ||
        fail "cnntop $*: not one line with '$problem': $(cat "$tmp/err")"
    [ -z "$(ls -A "$W")" ] || fail "cnntop $*: ran: $(ls -A "$W")"
}

bad "--ranks: 0 is out of range (1..64)" sweep --cmd "touch ran.{ranks}" --ranks 0
bad "--ranks: -1 is out of range (1..64)" sweep --cmd "touch ran.{ranks}" --ranks 1,-1
bad "--ranks: 'two' is not a whole number" sweep --cmd "touch ran.{ranks}" --ranks two
bad "--ranks: '1,,2': an empty value" sweep --cmd "touch ran.{ranks}" --ranks 1,,2
bad "the template has {ranks} but no --ranks LIST is given" sweep --cmd "touch ran.{ranks}"
bad "--ranks is given but the --cmd template has no {ranks}" sweep --cmd "touch ran" --ranks 1,2
bad "{nprocs} is no placeholder: did you mean {ranks}?" sweep --cmd "touch {nprocs}" --ranks 1
bad "--mpirun-args: for cnntop's own training, not --cmd" \
    sweep --cmd "touch ran.{ranks}" --ranks 1,2 --mpirun-args "--host a"

# A grid of ranks without images/s: the columns, each row its number,
# and why there is no scaling.
checks=$((checks + 1))
rm -rf "$W" && mkdir -p "$W"
(cd "$W" && "$CNNTOP" sweep --cmd "touch ran.{ranks}" --ranks 2,1 >"$tmp/out" 2>"$tmp/err") ||
    fail "the grid of touch: exit $?"
grep -q "^ Configuration  *Ranks Time \[s\] .* Speedup (time) Scaling$" "$tmp/out" &&
    grep -q "^ ranks 2  *2 .*  *n/m$" "$tmp/out" && grep -q "^ ranks 1  *1 .*  *n/m$" "$tmp/out" &&
    grep -q "Scaling efficiency .*: not measured; no images/s to compare\.$" "$tmp/out" &&
    [ -e "$W/ran.1" ] && [ -e "$W/ran.2" ] ||
    { fail "the grid of touch: no Ranks and Scaling columns"; cat "$tmp/out" >&2; }

[ -n "$PY" ] && "$PY" -c 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' \
    2>/dev/null || {
    echo "test_sweep_cmd_ranks: $checks checks, $fails failed; SKIP the DDP job: no torch.distributed with gloo in '$PY'"
    [ "$fails" -eq 0 ] || exit 1
    exit 77
}

# One free port for the sweep's jobs, one after another.
port=$("$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
checks=$((checks + 1))
timeout -s TERM 300 "$CNNTOP" sweep --export "$tmp/sweep.json" \
    --cmd "'$PY' '$SCRIPT' --world {ranks} --workers 0 --images 1024 --port $port" \
    --ranks 2,1 --runs 2 >"$tmp/out" 2>"$tmp/err" ||
    { fail "the DDP sweep: exit $?"; sed 's/^/  /' "$tmp/out" "$tmp/err" >&2; }
checks=$((checks + 1))
"$PY" - "$tmp/out" "$tmp/sweep.json" <<'PYEOF' || { fail "the DDP sweep: see above"; cat "$tmp/out" >&2; }
import json, re, sys
out = open(sys.argv[1]).read()
rows = {}
for m in re.finditer(r"^ ranks (\d) +(\d) +[0-9.]+(?: ± [0-9.]+)? +([0-9.]+) .* (n/m|\d+%)$", out, re.M):
    if m.group(1) != m.group(2):
        sys.exit("the Ranks column says %s for ranks %s" % (m.group(2), m.group(1)))
    rows[int(m.group(1))] = (float(m.group(3)), m.group(4))
if sorted(rows) != [1, 2]:
    sys.exit("not two rows, ranks 2 and 1: %r" % rows)
runs = {r["label"]: r for r in json.load(open(sys.argv[2]))["runs"]}
ips = {}
for n in (1, 2):
    r = runs.get("ranks %d" % n)
    if r is None:
        sys.exit("no record labelled 'ranks %d'" % n)
    ranks = r["exec_ranks"]
    # Its own ranks: N of them, of world N (not the first configuration's).
    if sorted(k["rank"] for k in ranks) != list(range(n)) or any(k["world"] != n for k in ranks):
        sys.exit("ranks %d: exec_ranks %r" % (n, ranks))
    if sum(p["role"] == "rank" for p in r["exec_procs"]) != n:
        sys.exit("ranks %d: not %d rank rows in exec_procs" % (n, n))
    # The job's images/s: the record's, which is the sum over its ranks.
    ips[n] = r["exec"]["images_per_s"]
    if abs(ips[n] - sum(k["images_per_s"] for k in ranks)) > 1e-6 * ips[n]:
        sys.exit("ranks %d: exec.images_per_s %r is not the sum over the ranks" % (n, ips[n]))
    # Both runs in the ranks and the layer window, as in the job's figures.
    if sum(k["batches"] for k in ranks) != r["exec"]["batches"]:
        sys.exit("ranks %d: the ranks' batches %r do not sum to the job's %d (both runs)"
                 % (n, [k["batches"] for k in ranks], r["exec"]["batches"]))
    # The layer window of the one-rank job (a two-rank job's is the window
    # of whichever rank sent one first, run by run).
    steps = r["model"]["steps"] if r.get("model") else None
    if n == 1 and (steps != 2 * 20 or not r["layers"] or any(l["calls"] % steps for l in r["layers"])):
        sys.exit("ranks %d: the layer window: %r steps (not 2 runs x 20), layers %r"
                 % (n, steps, [(l["name"], l["calls"]) for l in r["layers"]]))
    if abs(rows[n][0] - ips[n]) > 0.5:
        sys.exit("ranks %d: the table's %s images/s is not the record's %.1f" % (n, rows[n][0], ips[n]))
if rows[1][1] != "100%":
    sys.exit("ranks 1: Scaling %s, not 100%%" % rows[1][1])
want = 100 * ips[2] / (2 * ips[1])
if rows[2][1] == "n/m" or abs(float(rows[2][1][:-1]) - want) > 0.51:
    sys.exit("ranks 2: Scaling %s, not %.0f%%" % (rows[2][1], want))
PYEOF

# report of the sweep's export: the ranks' counters on rows of their own,
# not under the main process's name a second time.
checks=$((checks + 1))
"$CNNTOP" report "$tmp/sweep.json" >"$tmp/report" 2>&1 || fail "report of the sweep failed"
[ "$(grep -c "^  main task-clock " "$tmp/report")" -eq 1 ] &&
    grep -q "^  rank task-clock \[ns\]  *[0-9]" "$tmp/report" ||
    { fail "report: the ranks' task-clock is not one row of its own"; cat "$tmp/report" >&2; }

echo "test_sweep_cmd_ranks: $checks checks, $fails failed"
[ "$fails" -eq 0 ]

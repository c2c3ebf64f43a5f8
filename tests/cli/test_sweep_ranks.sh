#!/bin/sh
# test_sweep_ranks.sh CNNTOP: `cnntop sweep --ranks 1,2`, the grid of
# data-parallel jobs:
#   - every configuration with N ranks runs as `cnntop run --ranks N`
#     (mpirun -np N, the command said on stderr), its record read back:
#     the table's Ranks column, the label's ", N ranks", the export's
#     records with dist.ranks N and the run's command (not its temporary
#     export, which is removed);
#   - the scaling efficiency against 1 rank: job images/s at N / (N x
#     images/s at 1 rank), from the same records as the export; without
#     --ranks 1 in the grid "n/m" and a line saying it was not measured;
#   - refused up front (one line, exit 2, nothing run, nothing exported):
#     a batch of the grid that does not split over an N of the list, and
#     --ranks with a --cmd template that has no {ranks} (with one it is the
#     command's number of processes: test_sweep_cmd_ranks.sh).
# Skipped (77) with the reason when mpirun is missing or cnntop was built
# without MPI.  Tiny data (dist_data.py's synthetic 28x28 set) and steps:
# no timing thresholds.
set -u
CNNTOP=$1
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
D=$tmp/data

fail() {
    echo "FAIL: $*" >&2
    [ -f "$tmp/out" ] && sed 's/^/  out: /' "$tmp/out" >&2
    [ -f "$tmp/err" ] && sed 's/^/  err: /' "$tmp/err" | cut -c1-300 >&2
    fails=$((fails + 1))
}

if ! command -v mpirun >/dev/null 2>&1 && ! command -v mpiexec >/dev/null 2>&1; then
    echo "SKIP: no mpirun (install openmpi-bin)" >&2
    exit 77
fi
# As root cnntop sets OpenMPI's two variables for mpirun itself (ranks.c).
# A sanitizer build: what OpenMPI keeps at its end is not cnntop's leak.
export OMPI_MCA_mca_base_component_disable_dlclose=1
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan_mpi.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

python3 "$(dirname "$0")/dist_data.py" "$D" ||
    { echo "test_sweep_ranks: cannot write the data" >&2; exit 1; }
common="--data $D --limit 192 --test-limit 64 --threads 1 --seed 2"
mkdir "$tmp/t"
export TMPDIR=$tmp/t

# A build without MPI says so before anything runs; the rest needs MPI.
"$CNNTOP" sweep --ranks 1,2 $common --batch 32 --steps 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
if grep -q "built without MPI" "$tmp/err"; then
    [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] ||
        { fail "sweep --ranks without MPI: exit $rc, want 2 and one line"; exit 1; }
    echo "SKIP: this cnntop was built without MPI (checked: exit 2, one line)" >&2
    exit 77
fi

# ---- refused up front ----
checks=$((checks + 1))
"$CNNTOP" sweep --ranks 1,2,3 $common --batch 36,32 --steps 1 --export "$tmp/no.json" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
    ! grep -q "^cnntop: --batch: 32 does not split over 3 ranks" "$tmp/err" ||
    [ -s "$tmp/out" ] || [ -e "$tmp/no.json" ]; then
    fail "batch 32 over 3 ranks in the grid: exit $rc, want 2, one line naming --batch, nothing run"
fi
checks=$((checks + 1))
"$CNNTOP" sweep --ranks 1,2 --cmd 'true {batch}' --batch 32 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
    ! grep -q "^cnntop: --ranks is given but the --cmd template has no {ranks}$" "$tmp/err"; then
    fail "--ranks with --cmd: exit $rc, want 2 and one line naming --ranks and {ranks}"
fi

# ---- 1 and 2 ranks, two repeats each ----
checks=$((checks + 1))
"$CNNTOP" sweep --ranks 1,2 $common --batch 32 --steps 2 --runs 2 --export "$tmp/sw.json" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ]; then
    fail "sweep --ranks 1,2: exit $rc"
else
    for n in 1 2; do
        grep -q "^cnntop: starting the job: [^ ]*mpi[a-z]* -np $n .* run .*--dist mpi$" "$tmp/err" ||
            fail "sweep --ranks 1,2: no 'mpirun -np $n ... run' said on stderr"
    done
    grep -q "^ Configuration  *Ranks .*Speedup  *Scaling" "$tmp/out" ||
        fail "sweep --ranks 1,2: the table lacks the Ranks and Scaling columns"
    [ -z "$(ls -A "$tmp/t")" ] || fail "sweep --ranks: left behind in TMPDIR: $(ls -A "$tmp/t")"
    python3 - "$tmp/sw.json" "$tmp/out" <<'PY' || fail "sweep --ranks 1,2: the rows against the export"
import json, re, sys
j = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read().splitlines()
runs = j["runs"]
assert [r["dist"]["ranks"] for r in runs] == [1, 2], [r["dist"] for r in runs]
for r, n in zip(runs, (1, 2)):
    assert "--ranks %d" % n in r["command"] and "--export" not in r["command"], r["command"]
    assert len(r["repeats"]) == 2, r["repeats"]
ips = [sum(x["images_per_s"] for x in r["repeats"]) / 2 for r in runs]
rows = {}
for l in out:
    m = re.match(r" batch 32, 0 workers, 1 thread, (1 rank|2 ranks) +(\d) .* (\S+)$", l)
    if m:
        rows[int(m.group(2))] = m.group(3)
assert set(rows) == {1, 2}, out
assert rows[1] == "100%", rows
want = 100 * ips[1] / (2 * ips[0])
got = float(rows[2].rstrip("%"))
assert abs(got - want) <= 0.51, (got, want, ips)
PY
fi

# ---- without 1 rank in the grid: not measured ----
checks=$((checks + 1))
"$CNNTOP" sweep --ranks 2 $common --batch 32 --steps 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q "^ batch 32, 0 workers, 1 thread, 2 ranks  *2 .* n/m$" "$tmp/out" ||
    ! grep -q "^ Scaling efficiency .*: not measured; add 1 to --ranks" "$tmp/out"; then
    fail "sweep --ranks 2: exit $rc; want n/m and the line saying the scaling is not measured"
fi

echo "test_sweep_ranks: $checks checks, $fails failures"
[ "$fails" -eq 0 ]

#!/bin/sh
# test_mpirun_args.sh CNNTOP: `run --ranks N --mpirun-args 'ARGS'` and the
# all-reduce's algorithm in the record:
#   - ARGS' words go to mpirun after --bind-to none, before cnntop (said on
#     stderr), and not to the ranks (the record's command lacks them);
#   - with OpenMPI, --mpirun-args '--mca coll_libnbc_iallreduce_algorithm 1'
#     makes the record's dist.ar_algorithm "ring" and the summary's
#     all-reduce row say it; OpenMPI 4's own choice is "binomial", with the
#     summary's hint for the ring; sweep --ranks passes ARGS on too;
#   - --mpirun-args without --ranks: one line naming it, exit 2.
# Skipped (77) with the reason when mpirun is missing or cnntop was built
# without MPI.  Tiny data (dist_data.py) and steps; no timing thresholds.
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

if ! command -v mpirun >/dev/null 2>&1; then
    echo "SKIP: no mpirun (install openmpi-bin)" >&2
    exit 77
fi
export OMPI_MCA_mca_base_component_disable_dlclose=1
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan_mpi.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
python3 "$(dirname "$0")/dist_data.py" "$D" ||
    { echo "test_mpirun_args: cannot write the data" >&2; exit 1; }
common="--data $D --limit 192 --test-limit 64 --threads 1 --batch 32 --steps 2"
ring="--mca coll_libnbc_iallreduce_algorithm 1"

# ---- refused without --ranks ----
for cmd in run sweep; do
    checks=$((checks + 1))
    "$CNNTOP" $cmd --mpirun-args "$ring" $common >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
        grep -q "^cnntop: --mpirun-args: only with --ranks" "$tmp/err" ||
        fail "$cmd --mpirun-args without --ranks: exit $rc, want 2 and one line"
done

"$CNNTOP" run --ranks 2 $common --export "$tmp/plain.json" >"$tmp/plain.out" 2>"$tmp/err"
rc=$?
if grep -q "built without MPI" "$tmp/err"; then
    echo "SKIP: this cnntop was built without MPI" >&2
    exit 77
fi
checks=$((checks + 1))
[ "$rc" -eq 0 ] || fail "run --ranks 2: exit $rc"

# ---- the words to mpirun, the ring in the record ----
checks=$((checks + 1))
"$CNNTOP" run --ranks 2 --mpirun-args "$ring" $common --export "$tmp/ring.json" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 0 ]; then
    fail "run --ranks 2 --mpirun-args '$ring': exit $rc"
else
    grep -q "^cnntop: starting the job: [^ ]*mpirun -np 2 .*--bind-to none $ring [^ ]*cnntop run " \
        "$tmp/err" || fail "--mpirun-args: the words not given to mpirun before cnntop"
    python3 - "$tmp/ring.json" <<'PY' || fail "--mpirun-args: the ranks got the words"
import json, sys
c = json.load(open(sys.argv[1]))["command"]
assert "--mpirun-args" not in c and "--mca" not in c, c
PY
fi

# ---- the algorithm: OpenMPI's libnbc says it ----
ompi=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9]*\)\..*/\1/p')
if [ -n "$ompi" ] && [ "$rc" -eq 0 ]; then
    checks=$((checks + 1))
    python3 - "$tmp/ring.json" "$tmp/plain.json" "$ompi" <<'PY' || fail "the record's ar_algorithm"
import json, sys
ring = json.load(open(sys.argv[1]))["dist"]["ar_algorithm"]
plain = json.load(open(sys.argv[2]))["dist"]["ar_algorithm"]
assert ring == "ring", ring
assert plain == ("binomial" if sys.argv[3] == "4" else plain), plain
PY
    grep -q "^  all-reduce .*, ring)$" "$tmp/out" || fail "the summary's all-reduce row lacks 'ring'"
    if [ "$ompi" = 4 ]; then
        grep -q "^  all-reduce .*, binomial)$" "$tmp/plain.out" &&
            grep -q "the ring: --mpirun-args '$ring'" "$tmp/plain.out" ||
            fail "OpenMPI 4's choice: the summary lacks binomial and the hint for the ring"
    fi
    checks=$((checks + 1))
    "$CNNTOP" sweep --ranks 2 --mpirun-args "$ring" $common --export "$tmp/sw.json" \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" -eq 0 ] && python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["runs"][0]["dist"]["ar_algorithm"] == "ring"' "$tmp/sw.json" ||
        fail "sweep --ranks 2 --mpirun-args: exit $rc, or not the ring"
else
    echo "test_mpirun_args: not OpenMPI (no ompi_info): the algorithm not checked" >&2
fi

echo "test_mpirun_args: $checks checks, $fails failures"
[ "$fails" -eq 0 ]

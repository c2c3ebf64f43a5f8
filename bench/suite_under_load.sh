#!/bin/sh
# bench/suite_under_load.sh [RUNS] [BUILD]: the whole ctest suite RUNS times
# (default 10) in the build directory BUILD (default build), each time with
# ctest -j2 while one busy loop per core competes for every CPU, to find
# tests that fail only under contention (flaky timing).  The loops and the
# suite run at nice $NICE (default 0: a fair fight, as a loaded CI runner
# gives; NICE=19 leaves people sharing the machine their share, and makes
# the suite far slower than the loops alone would).  Prints
# each run's failed tests and, at the end, "N runs, M failed runs, K
# failures"; exits non-zero when anything failed.
#   make && bench/suite_under_load.sh 10 build
set -u
runs=${1:-10}
build=${2:-build}
cores=$(nproc)
log=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$log"' EXIT INT TERM
for _ in $(seq "$cores"); do
    nice -n "${NICE:-0}" sh -c 'while :; do :; done' &
    pids="$pids $!"
done
failed_runs=0
failures=0
for i in $(seq "$runs"); do
    start=$(date +%s)
    (cd "$build" && nice -n "${NICE:-0}" ctest -j2 --output-on-failure) >"$log/run$i" 2>&1
    rc=$?
    bad=$(grep -E '^\s+[0-9]+ - ' "$log/run$i" | sed 's/^ *//')
    n=$(printf '%s' "$bad" | grep -c .)
    echo "run $i: exit $rc, $(( $(date +%s) - start )) s, $n failed${bad:+: $(echo "$bad" | tr '\n' ';')}"
    if [ "$rc" -ne 0 ]; then
        failed_runs=$((failed_runs + 1))
        failures=$((failures + n))
        cp "$log/run$i" "$build/suite_under_load.run$i.log"
        echo "  (log kept in $build/suite_under_load.run$i.log)"
    fi
done
echo "$runs runs, $failed_runs failed runs, $failures failures (ctest -j2, $cores busy loops)"
[ "$failed_runs" -eq 0 ]

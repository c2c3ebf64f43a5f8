#!/bin/sh
# loader.sh [BUILD_DIR]: what loader threads do on this machine.
#
# 1. The loader alone (bench/loader_rate): samples/s for W = 0 (inline),
#    1, 2, 4, with no augmentation and with elastic.
# 2. Whole runs: images/s, data-wait share and verdict of `cnntop run` for
#    W = 0, 1, 2, 4 at batch 64 and 512, without augmentation and with
#    elastic, on the same slice (BENCH_LIMIT images, default 12800).
# Compare ratios within one run of this script: the machine is noisy.
set -eu
BUILD=${1:-build}
LIMIT=${BENCH_LIMIT:-12800}
DATA=${BENCH_DATA:-/usr/share/datasets/fashion-mnist}
CNNTOP=$BUILD/ui/cnntop
[ -x "$CNNTOP" ] && [ -x "$BUILD/bench/loader_rate" ] || { echo "loader.sh: build first" >&2; exit 1; }

echo "== the loader alone (batches of 64, best of 3 x 0.5 s)"
"$BUILD/bench/loader_rate" "$DATA"

echo
echo "== whole runs, $LIMIT images, $(nproc) cores, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
printf '%-8s %-8s %3s %10s %10s %8s  %s\n' batch augment W images/s vs_W=0 wait verdict
for aug in none elastic; do
    for b in 64 512; do
        base=
        for w in 0 1 2 4; do
            out=$("$CNNTOP" run --data "$DATA" --batch "$b" --limit "$LIMIT" --test-limit 1000 \
                  --workers "$w" --augment "$aug" 2>/dev/null)
            ips=$(echo "$out" | awk '/Throughput/ {print $2}')
            wait=$(echo "$out" | awk '/Data wait/ {print $3}')
            verdict=$(echo "$out" | awk '/Verdict/ {print $2}')
            [ -n "$base" ] || base=$ips
            printf '%-8s %-8s %3s %10s %9.2fx %8s  %s\n' "$b" "$aug" "$w" "$ips" \
                "$(echo "$ips $base" | awk '{print $1 / $2}')" "$wait" "$verdict"
        done
    done
done

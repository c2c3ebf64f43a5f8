#!/bin/sh
# parts.sh [BUILD_DIR]: where cnntop's training step goes, SGEMM against the
# rest, measured in the step itself (bench/gemm_split.c, preloaded):
#
#   step ms      the training step (wall), with every SGEMM call timed
#   sgemm ms     the calls' CPU time per step over the compute threads: the
#                step's wall time in SGEMM if the threads share it evenly
#   calls        SGEMM calls per step
#   GFLOP/s/thr  the calls' FLOPs over their CPU time: the rate each thread
#                gets inside the step (bench/sgemm_rate: the rate it gets
#                on large matrices)
#   rest ms      the step with every SGEMM call skipped (timing only: the
#                training is wrong), i.e. everything else, with the caches
#                to itself
#
# The clock reads cost about 0.1 ms a step at batch 64 (2 x 2700 calls).
# Run it on an idle machine, and compare rows of one run.
set -eu
BUILD=${1:-build}
LIMIT=${PARTS_LIMIT:-12000}
DATA=${PARTS_DATA:-/usr/share/datasets/fashion-mnist}
BATCHES=${PARTS_BATCHES:-64 512}
CNNTOP=$BUILD/ui/cnntop
SHIM=$(cd "$BUILD/bench" 2>/dev/null && pwd)/libgemm_split.so

[ -x "$CNNTOP" ] && [ -f "$SHIM" ] || { echo "parts: build first (make build)" >&2; exit 1; }

run_split() {    # mode batch -> "steps wall threads calls ns flop"
    out=$(GEMM_SPLIT=$1 LD_PRELOAD=$SHIM "$CNNTOP" run --data "$DATA" --batch "$2" \
          --limit "$LIMIT" --test-limit 1 2>&1) || { echo "$out" >&2; exit 1; }
    echo "$out" | awk '
        /Steps, images/      { steps = $3 }
        /Training wall time/ { wall = $4 }
        /Performance of/     { for (i = 1; i <= NF; i++) if ($i ~ /^threads/) thr = $(i - 1) }
        /^gemm_split:/       { for (i = 2; i <= NF; i++) { split($i, kv, "="); g[kv[1]] = kv[2] } }
        END { print steps, wall, thr, g["calls"], g["ns"], g["flop"] }'
}

# The SGEMM calibration behind cnntop's sketch on paper runs in the first
# run of a setup (OpenBLAS kernel and threads) that has none cached, and
# would be counted here as the step's: have it measured and cached first.
"$CNNTOP" calibrate >/dev/null || exit 1

echo "== where the step goes (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}), $LIMIT images =="
echo "batch  threads  step ms  sgemm ms  share  calls  GFLOP/s/thr  rest ms"
for b in $BATCHES; do
    t=$(run_split time "$b")
    s=$(run_split skip "$b")
    echo "$b $t $s" | awk '{
        b = $1; steps = $2; wall = $3; thr = $4; calls = $5; ns = $6; flop = $7
        rest = $9 / $8 * 1000
        step = wall / steps * 1000; sg = ns / 1e6 / steps / thr
        printf "%-6s %7d %8.2f %9.2f %5.0f%% %6d %12.1f %8.2f\n",
               b, thr, step, sg, 100 * sg / step, calls / steps, flop / ns, rest }'
done

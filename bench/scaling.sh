#!/bin/sh
# scaling.sh [BUILD_DIR] [BATCH] [RUNS] [THREADS]: what the step loses
# between one compute thread and THREADS (default: every CPU this process
# may use).  `cnntop run --batch BATCH --limit LIMIT --seed 1 --threads T`,
# one thread and THREADS alternated (1, N, N, 1, ...: each goes first as
# often), RUNS runs of each (default 3).  Per part: the median ms/step on
# one thread and on N, the speed-up (one / N) and the part's loss (its
# time on N less a perfect split, one / N), largest loss first; then the
# step (training wall time / steps) and the MFU each run printed (against
# the FMA peak of as many threads as it ran).  The losses sum to about
# the step's.  A part near 1.0x runs on one thread (the inline data fill);
# one well under N has few items a phase, waits for a slower core, or is
# bound by something the cores share.
#   SCALING_LIMIT (20000), SCALING_DATA (the default data set)
set -eu
BUILD=${1:-build}
BATCH=${2:-64}
RUNS=${3:-3}
N=${4:-$(nproc)}
LIMIT=${SCALING_LIMIT:-20000}
CNNTOP=$BUILD/ui/cnntop
[ -x "$CNNTOP" ] || { echo "scaling: build first ($CNNTOP is missing)" >&2; exit 1; }
[ "$N" -ge 2 ] 2>/dev/null || { echo "scaling: THREADS must be 2 or more (got $N)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

one() {    # threads
    "$CNNTOP" run --batch "$BATCH" --limit "$LIMIT" --seed 1 --threads "$1" \
        ${SCALING_DATA:+--data "$SCALING_DATA"} >"$TMP/out" 2>&1 || { cat "$TMP/out" >&2; exit 1; }
    awk -v tag="$1" -v mfu=1 -f "$(dirname "$0")/layer_rows.awk" "$TMP/out" >>"$TMP/all"
}

r=0
while [ "$r" -lt "$RUNS" ]; do
    if [ $((r % 2)) -eq 0 ]; then one 1; one "$N"; else one "$N"; one 1; fi
    r=$((r + 1))
done

echo "batch $BATCH, $LIMIT images, medians of $RUNS runs alternated: 1 thread against $N"
# Rows "name one n speed-up loss" (spaces in names as _), then the step and
# the MFU.
awk -v n="$N" '
    function med(s,   k, x, i, j, tmp) {    # the middle one, or the mean of the middle two
        k = split(s, x, " ")
        for (i = 1; i <= k; i++)
            for (j = i + 1; j <= k; j++)
                if (x[j] + 0 < x[i] + 0) { tmp = x[i]; x[i] = x[j]; x[j] = tmp }
        return k % 2 ? x[(k + 1) / 2] + 0 : (x[k / 2] + x[k / 2 + 1]) / 2
    }
    { k = $1 == 1 ? 1 : 2; v[$2, k] = v[$2, k] " " $3; names[$2] = 1 }
    END {
        for (p in names) {
            if (p == "STEP" || p == "MFU") continue
            a = med(v[p, 1]); b = med(v[p, 2])
            printf "%s %.3f %.3f %.2f %.3f\n", p, a, b, (b > 0 ? a / b : 0), b - a / n
        }
        a = med(v["STEP", 1]); b = med(v["STEP", 2])
        printf "~step_(wall_/_steps) %.3f %.3f %.2f %.3f\n", a, b, a / b, b - a / n
        printf "~MFU %s %s\n", med(v["MFU", 1]), med(v["MFU", 2])
    }' "$TMP/all" >"$TMP/table"
row='{ name = $1; gsub(/_/, " ", name); sub(/^~/, "", name)
       printf "%-24s %9.3f %9.3f %7.2fx %9.3f\n", name, $2, $3, $4, $5 }'
printf "%-24s %9s %9s %8s %9s\n" part "1 thr ms" "$N thr ms" speed-up "loss ms"
grep -v '^~' "$TMP/table" | sort -k5,5 -rn | awk "$row"
grep '^~step' "$TMP/table" | awk "$row"
awk -v n="$N" '/^~MFU/ { printf "MFU (median): %s%% on 1 thread, %s%% on %d\n", $2, $3, n }' "$TMP/table"

#!/bin/sh
# ab_layers.sh OLD NEW [BATCH] [RUNS]: two cnntop binaries alternated
# (old, new, new, old, old, new, ...: each goes first as often, since on a
# shared machine the second of a pair ran faster or slower by itself, as a
# neighbour came or went) on `cnntop run --batch BATCH --limit LIMIT`, and
# per layer the median and the least ms/step of each and their ratios
# new/old, plus the step (STEP: training wall time / steps).  Alternation in
# one sitting is the only fair comparison on a shared machine; the medians
# and minima damp the noise of other programs (a run of cnntop is never
# faster than the machine allows, so the least is the least disturbed).
#   AB_LIMIT (10000), AB_DATA (the default data set), AB_ARGS (more options)
set -eu
OLD=$1 NEW=$2 BATCH=${3:-64} RUNS=${4:-3}
LIMIT=${AB_LIMIT:-10000}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

one() {    # binary tag run
    # shellcheck disable=SC2086
    "$1" run --batch "$BATCH" --limit "$LIMIT" ${AB_DATA:+--data "$AB_DATA"} ${AB_ARGS:-} \
        >"$TMP/out" 2>&1 || { cat "$TMP/out" >&2; exit 1; }
    awk -v tag="$2" -f "$(dirname "$0")/layer_rows.awk" "$TMP/out" >>"$TMP/all"
}

r=0
while [ "$r" -lt "$RUNS" ]; do
    if [ $((r % 2)) -eq 0 ]; then
        one "$OLD" old
        one "$NEW" new
    else
        one "$NEW" new
        one "$OLD" old
    fi
    r=$((r + 1))
done
echo "batch $BATCH, $RUNS runs each alternated, --limit $LIMIT ${AB_ARGS:-}: ms/step, median and least"
printf "%-24s %9s %9s %7s %9s %9s %7s\n" layer "old med" "new med" ratio "old min" "new min" ratio
awk '
    { v[$1, $2, ++n[$1, $2]] = $3; names[$2] = 1 }
    function sorted(t, k, a,   m, i, j, x) {
        m = n[t, k]
        for (i = 1; i <= m; i++) a[i] = v[t, k, i]
        for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
        return m
    }
    function med(t, k,   a, m) {
        m = sorted(t, k, a)
        return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    function least(t, k,   a) {
        sorted(t, k, a)
        return a[1]
    }
    END {
        for (k in names) {
            o = med("old", k); w = med("new", k); lo = least("old", k); lw = least("new", k)
            printf "%-24s %9.3f %9.3f %7.2f %9.3f %9.3f %7.2f\n", k, o, w, (o > 0 ? w / o : 0),
                lo, lw, (lo > 0 ? lw / lo : 0)
        }
    }' "$TMP/all" | sort -k2 -n -r

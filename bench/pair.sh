#!/bin/sh
# pair.sh [BUILD_DIR] [ROUNDS]: does one core's work slow the other's?
# One thread's Winograd stage (`wino_rate 64`: conv2 and conv3, forward and
# backward, batch 64, each the best of its passes) pinned alone on CPU A,
# alone on CPU B, then on both at once (the two copies started in either
# order, by turns), ROUNDS rounds (default 2).  Per CPU: the least ms of
# each part alone and beside the other copy, and their ratio; the two CPUs'
# "alone" columns compare the cores themselves (a virtual machine's two
# CPUs can run at different speeds, as other guests load their hosts).
#
# The step's two compute threads meet either difference at every phase end:
# a phase of one chunk a thread (conv3 at batch 64) lasts as long as the
# slower thread.  The FMA peak does not show it (each core's FMAs are its
# own); memory-heavy work does, where two cores share a path to memory.
#   PAIR_CPUS="A B" (default: the first two CPUs this process may use)
set -eu
BUILD=${1:-build}
ROUNDS=${2:-2}
RATE=$BUILD/bench/wino_rate
[ -x "$RATE" ] || { echo "pair: build first ($RATE is missing)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "pair: needs taskset (util-linux)" >&2; exit 1; }
if [ -n "${PAIR_CPUS:-}" ]; then
    set -- $PAIR_CPUS
else
    # Cpus_allowed_list, e.g. "0-1" or "0,2-5": its first two CPUs.
    set -- $(awk '/^Cpus_allowed_list/ {
        n = split($2, r, ",")
        for (i = 1; i <= n; i++) {
            m = split(r[i], e, "-"); hi = m == 2 ? e[2] : e[1]
            for (c = e[1]; c <= hi; c++) printf "%d ", c
        }
    }' /proc/self/status)
fi
[ $# -ge 2 ] || { echo "pair: needs two CPUs (this process may use: ${1:-none})" >&2; exit 1; }
A=$1 B=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The native path's lines where the CPU has one, else OpenBLAS's: "LAYER fwd
# MS bwd MS" for conv2 and conv3.
parts() {
    awk '/^conv[23] / && / fwd / {
            path = ($2 == "native") ? "native" : "other"
            for (i = 3; i <= NF; i++) {
                if ($i == "fwd") f = $(i + 1)
                if ($i == "bwd") b = $(i + 1)
            }
            if (path == "native" || !($1 in got)) { fwd[$1] = f; bwd[$1] = b }
            if (path == "native") got[$1] = 1
        }
        END { for (l in fwd) print l, "fwd", fwd[l]; for (l in bwd) print l, "bwd", bwd[l] }' "$1"
}

r=0
while [ "$r" -lt "$ROUNDS" ]; do
    taskset -c "$A" "$RATE" 64 >"$TMP/out" 2>&1; parts "$TMP/out" | sed "s/^/$A alone /" >>"$TMP/all"
    taskset -c "$B" "$RATE" 64 >"$TMP/out" 2>&1; parts "$TMP/out" | sed "s/^/$B alone /" >>"$TMP/all"
    if [ $((r % 2)) -eq 0 ]; then first=$A second=$B; else first=$B second=$A; fi
    taskset -c "$first" "$RATE" 64 >"$TMP/o1" 2>&1 &
    taskset -c "$second" "$RATE" 64 >"$TMP/o2" 2>&1
    wait
    parts "$TMP/o1" | sed "s/^/$first both /" >>"$TMP/all"
    parts "$TMP/o2" | sed "s/^/$second both /" >>"$TMP/all"
    r=$((r + 1))
done

echo "one thread's Winograd stage (wino_rate 64), least ms of $ROUNDS rounds, CPUs $A and $B"
printf "%-5s %-10s %9s %9s %10s\n" cpu part alone both both/alone
awk '{ k = $1 " " $3 " " $4; v = $5 + 0
       if (!((k, $2) in best) || v < best[k, $2]) best[k, $2] = v
       keys[k] = 1 }
     END {
        for (k in keys) {
            split(k, kk, " ")
            printf "%-5s %-10s %9.3f %9.3f %9.2fx\n", kk[1], kk[2] " " kk[3], best[k, "alone"],
                   best[k, "both"], best[k, "both"] / best[k, "alone"]
        }
     }' "$TMP/all" | sort -k1,1n -k2,3

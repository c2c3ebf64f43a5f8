#!/bin/sh
# test_blas_auto.sh CNNTOP SHIM: the OpenBLAS kernel for real.
#
# One command runs with OPENBLAS_CORETYPE removed from its environment, to
# see the automatic choice and its note; one runs with it forced to
# Prescott, to see it respected and remarked on.  Nothing else touches the
# variable.  The re-execution path (OpenBLAS falls back narrower, cnntop
# runs again with the matching kernel, checks it, falls back on a
# mismatch) is driven with SHIM, a test double for OpenBLAS's CPU
# detection loaded with LD_PRELOAD (tests/cli/blas_shim.c), only when the
# environment leaves the variable unset.
set -u
CNNTOP=$1
SHIM=$2
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache" XDG_CONFIG_HOME="$tmp/config"
# An ASan build wants its runtime first; the shim is loaded before it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

fail() {
    echo "FAIL: $*" >&2
    sed 's/^/  | /' "$tmp/out" >&2
    fails=$((fails + 1))
}

# has PATTERN WHAT: the last command's output has a line matching PATTERN.
has() {
    checks=$((checks + 1))
    grep -q -- "$1" "$tmp/out" || fail "$2: no line matching '$1'"
}

hasnt() {
    checks=$((checks + 1))
    ! grep -q -- "$1" "$tmp/out" || fail "$2: a line matches '$1'"
}

# The kernel's and the CPU's vector sets from "OpenBLAS ... kernels (K; the CPU has C)".
classes() {
    sed -n 's/^OpenBLAS .* kernels (\([^;]*\); the CPU has \([^)]*\)).*/\1|\2/p' "$tmp/out"
}

rank() {
    case $1 in SSE) echo 1 ;; AVX) echo 2 ;; AVX2+FMA) echo 3 ;; AVX-512) echo 4 ;; *) echo 0 ;; esac
}

# 1. The automatic choice, OPENBLAS_CORETYPE removed for this command.
env -u OPENBLAS_CORETYPE "$CNNTOP" calibrate >"$tmp/out" 2>&1
kc=$(classes)
k=${kc%|*} c=${kc#*|}
checks=$((checks + 1))
if [ -z "$kc" ]; then
    fail "calibrate: no OpenBLAS line"
elif grep -q "cnntop's choice .* failed its check" "$tmp/out"; then
    echo "note: cnntop's kernel failed its check here; OpenBLAS's own ($k) runs"
elif [ "$(rank "$k")" -lt "$(rank "$c")" ]; then
    fail "unset OPENBLAS_CORETYPE: $k kernels on a CPU with $c, and no check failed"
elif grep -q "^note .*cnntop runs its" "$tmp/out"; then
    echo "automatic choice: cnntop chose the $k kernels (OpenBLAS's own was narrower)"
else
    echo "automatic choice: OpenBLAS's own $k kernels match the CPU ($c): kept, no note"
    hasnt "^warning .*OpenBLAS runs" "the right kernel"
fi
has "^FMA peak " "calibrate prints the FMA peak"

case $(uname -m) in
x86_64 | i?86) ;;
*)
    echo "not x86: Prescott names no kernel here; the forced-kernel and re-execution checks skipped"
    echo "test_blas_auto: $((checks - fails)) passed, $fails failed"
    [ "$fails" -eq 0 ]
    exit
    ;;
esac

# 2. A narrow kernel forced: respected and remarked on.
OPENBLAS_CORETYPE=Prescott "$CNNTOP" calibrate >"$tmp/out" 2>&1
has "^OpenBLAS .*Prescott kernels (SSE;" "OPENBLAS_CORETYPE=Prescott is respected"
has "^note .*OPENBLAS_CORETYPE=Prescott selects the Prescott kernels" "and noted"
if [ "$c" != SSE ] && [ -n "$c" ]; then
    has "^warning .*OpenBLAS runs Prescott kernels (SSE, 128-bit) on a CPU with $c" \
        "a narrower kernel is remarked on"
    has "fix: unset OPENBLAS_CORETYPE" "with the fix"
    has "^warning .*measured: SGEMM at the model's shapes .* of the .* FMA peak" \
        "and the measured factor"
fi

# 3. The re-execution, with OpenBLAS's detection faked narrow.
if [ "${OPENBLAS_CORETYPE+set}" = set ]; then
    echo "OPENBLAS_CORETYPE is set in this environment: the re-execution checks need it unset; skipped"
elif [ "$(rank "$c")" -le 1 ]; then
    echo "the CPU has no vectors wider than SSE: nothing to switch to; re-execution checks skipped"
else
    CNNTOP_SHIM_CORE=Prescott LD_PRELOAD="$SHIM" "$CNNTOP" calibrate >"$tmp/out" 2>&1
    has "^note .*OpenBLAS chose Prescott (SSE) on this $c CPU; cnntop runs its .* kernels, checked" \
        "switched when OpenBLAS falls back"
    kc=$(classes)
    checks=$((checks + 1))
    [ "${kc%|*}" = "$c" ] || fail "after the switch the kernels are ${kc%|*}, the CPU has $c"
    hasnt "^warning .*OpenBLAS runs" "switched: no narrow warning"

    CNNTOP_SHIM_CORE=Prescott CNNTOP_SHIM_ALWAYS=1 LD_PRELOAD="$SHIM" "$CNNTOP" calibrate \
        >"$tmp/out" 2>&1
    has "failed cnntop's check (OpenBLAS runs Prescott when asked for" "a kernel not taken is caught"
    has "^note .*cnntop's choice .* failed its check" "and noted after the fallback"
    has "^warning .*(cnntop's choice failed its check)" "with the narrow warning"

    CNNTOP_SHIM_CORE=Prescott LD_PRELOAD="$SHIM" "$CNNTOP" calibrate --blas-kernel openblas \
        >"$tmp/out" 2>&1
    hasnt "cnntop runs its" "--blas-kernel openblas keeps OpenBLAS's choice"
    has "^warning .*(OpenBLAS chose it); fix: drop --blas-kernel openblas" "and says the fix"
    # The dashboard's header says it too: the kernels, the measured factor
    # (the calibration just cached) and the fix, whole at 80 columns.
    if command -v tmux >/dev/null 2>&1; then
        sock=cnntopblas$$
        tmux -L "$sock" -f /dev/null new-session -d -x 80 -y 24 \
            "env TERM=screen-256color CNNTOP_SHIM_CORE=Prescott LD_PRELOAD=$SHIM $CNNTOP --blas-kernel openblas; sleep 9"
        i=0
        while [ $i -lt 100 ]; do
            tmux -L "$sock" capture-pane -p >"$tmp/out" 2>/dev/null
            grep -q "idle: press s" "$tmp/out" && break
            sleep 0.1
            i=$((i + 1))
        done
        tmux -L "$sock" send-keys q
        sleep 0.3
        tmux -L "$sock" kill-server >/dev/null 2>&1
        sed -n 4,5p "$tmp/out" | tr '\n' ' ' | tr -s ' ' >"$tmp/warn"
        checks=$((checks + 1))
        grep -q "^! OpenBLAS runs Prescott (SSE) kernels on this $c CPU, SGEMM [0-9.]*x below the FMA peak; fix: drop --blas-kernel openblas" "$tmp/warn" &&
            ! grep -q "~" "$tmp/warn" ||
            fail "the dashboard's header does not give the kernels, the factor and the fix whole at 80 columns"
    fi

    mkdir -p "$tmp/config/cnntop"
    echo "blas_kernel=openblas" >"$tmp/config/cnntop/config"
    CNNTOP_SHIM_CORE=Prescott LD_PRELOAD="$SHIM" "$CNNTOP" calibrate >"$tmp/out" 2>&1
    hasnt "cnntop runs its" "blas_kernel=openblas in the config keeps OpenBLAS's choice"
    CNNTOP_SHIM_CORE=Prescott LD_PRELOAD="$SHIM" "$CNNTOP" calibrate --blas-kernel auto \
        >"$tmp/out" 2>&1
    has "cnntop runs its" "--blas-kernel auto wins over the config"
fi

echo "test_blas_auto: $((checks - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]

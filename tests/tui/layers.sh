#!/bin/sh
# tests/tui/layers.sh CNNTOP: the dashboard's per-layer view after a short
# run, on the 80-column screen CI has: the GFLOP/s column is labelled as
# the model's, the executed rate stands beside it where the engine runs
# fewer FLOPs (conv2 and conv3, Winograd: 4.1-4.8x fewer; rounded to 0.1
# on a slow machine, so here at least 3x fewer; conv1 fwd, which takes
# its input's moments, 4.2x fewer), where the model counts none but the
# engine runs some (bn1+relu+pool1 fwd runs conv1's convolution), blank
# where it runs the same (conv1 bwd, the fc layers), each layer's time
# over its time on paper (a calibration cached by a first `cnntop run`),
# and the footer says what each counts; the images/s chart of the run,
# 10 steps long, is not blank.
NAME=test_tui_layers
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"

# The run's 1-thread calibration in the cache the dashboard reads, as a
# user's first `cnntop run` leaves it: the paper column has figures.
export XDG_CACHE_HOME="$tmp/cache"
"$CNNTOP" run --limit 64 --test-limit 32 --steps 1 --batch 32 --threads 1 >"$tmp/calib.out" 2>&1 ||
    { cat "$tmp/calib.out"; fail "the calibrating run"; }
tui_shell 80 30
tui_run "--limit 320 --test-limit 64 --steps 10 --batch 32 --threads 1 --autostart"
check "the run finishes" "run 1 finished" 60 || { tui_end; exit 1; }
check_not "its images/s chart has a sample" "images/s.*n/a\|n/a: no run"
T send-keys -t t Tab
check "Tab shows the layers" "model GF/s *exec *paper" 5
check "the footer says what each counts" "model = direct-conv FLOPs (PyTorch's count); exec = those run" 5
checks=$((checks + 1))
if ! awk '
    # layer, direction, ms/step, share, model, exec (blank: paper next), paper
    /^conv[23] (fwd|bwd) / {
        if ($6 ~ /^[0-9.]+$/ && $6 * 3 <= $5 && $7 ~ /^[0-9.]+x$/ && $7 + 0 > 0) ok++
        else bad = bad " " $1 " " $2
    }
    /^conv1 fwd / { if ($6 !~ /^[0-9.]+$/ || $6 * 3 > $5 || $7 !~ /^[0-9.]+x$/) bad = bad " " $1 " " $2 }
    /^bn1\+relu\+pool1 fwd / { if ($5 != "-" || $6 !~ /^[0-9.]+$/ || $7 !~ /^[0-9.]+x$/) bad = bad " " $1 }
    /^(conv1 bwd|fc2 bwd) / { if ($5 !~ /^[0-9.]+$/ || $6 !~ /^[0-9.]+x$/) bad = bad " " $1 " " $2 }
    /^adam / { if ($4 != "-" || $5 !~ /^[0-9.]+x$/) bad = bad " " $1 }
    END { if (ok != 4 || bad != "") { print "rows:" bad " (" ok + 0 " of 4 Winograd rows right)"; exit 1 } }
' "$tmp/screen" >"$tmp/awk.out"; then
    fail "model and executed rates per row: $(cat "$tmp/awk.out")"
fi
tui_quit
tui_end

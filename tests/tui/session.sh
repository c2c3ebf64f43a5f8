#!/bin/sh
# tests/tui/session.sh CNNTOP: one whole dashboard session, as a person
# comparing settings has it (the flow that crashed with a use-after-free
# when the second run started):
#   the settings file before (batch=32, a comment, an unknown key);
#   run 1 to the end; B between runs (batch 64); run 2; m marks it;
#   W (workers 1, for the next run); run 3; the history with speedups;
#   a failed run (data /nonexist), m refused on it, then the data fixed
#   and a run after it, numbered as the header numbers it;
#   a long run: p during the first minute freezes the charts while the
#   steps go on, Left has nothing to scroll, W live, x, m refused;
#   q; the file after: batch and workers saved in place, the comment and
#   the unknown key kept, the command line's --test-limit not saved;
#   a relaunch reads the saved settings.
NAME=test_tui_session
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"
mkdir -p "$tmp/cfg/cnntop"
CFG=$tmp/cfg/cnntop/config
# window=900: the charts' window is 15 minutes, so that the long run below
# is "in the first window" however slowly a loaded machine trains it.
printf '# my settings\nbatch=32\nbogus=1\nlimit=640\nwindow=900\n' >"$CFG"
ARGS="--test-limit 100 --history $tmp/hist.tsv"

tui_shell 100 30
tui_run "$ARGS"
check "the dashboard starts" "idle: press s" 20 || { tui_end; exit 1; }
check "the bad line is named, the others read" "config:3: unknown key 'bogus': skipped, the rest read" 5
check "batch 32 from the file" "batch  *32  *- live" 5

# Run 1 to its end, then the batch changed between runs.
T send-keys -t t s
check "run 1 ends" "run 1 finished" 90
check "its accuracy" "run 1 finished .*accuracy [0-9]" 5
T send-keys -t t B
check "B between runs: for the next run" "batch 64: for the next run" 5
# Run 2: s with the first run's engine freed under the screen.
T send-keys -t t s
check "run 2 starts" "run 2 \(loading\|running\|finished\)" 30
check "run 2 ends" "run 2 finished" 90
check "run 2 read the data (header intact)" "data /usr/share/datasets/fashion-mnist: 640 training, 100 test" 5
T send-keys -t t m
check "m marks run 2" "baseline: run 2 (batch 64, 0 workers" 5
T send-keys -t t W
check "W between runs: for the next run" "workers 1: for the next run" 5
T send-keys -t t s
check "run 3 ends" "run 3 finished" 90
T send-keys -t t Tab Tab
check "history view" "run batch wkrs pref" 5
check "run 1 against the baseline" "^  1  *32  *0 .* x[0-9.]* (1 run) *finished" 5
check "run 2 is the baseline" "^  2\*  *64  *0 .* baseline *finished" 5
check "run 3 against the baseline" "^  3  *64  *1 .* x[0-9.]* (1 run) *finished" 5

# A failed run, then one after it.
T send-keys -t t Tab Up c
check "c asks for the data directory" "data = _" 5
T send-keys -t t "/nonexist" Enter
check "data set for the next run" "data /nonexist: for the next run" 5
T send-keys -t t s
check "run 4 fails" "run 4 failed" 30
T send-keys -t t c Enter
check "data back to the default" "data default: for the next run" 5
T send-keys -t t s
check "run 5 ends" "run 5 finished" 90
T send-keys -t t Tab Tab
check "the failed run is listed" "^  4  .* n/a: failed *failed" 5
check "the run after it is numbered 5" "^  5  .* finished" 5
T send-keys -t t Up m
check "m refuses the failed run" "run 4 cannot be the baseline (failed)" 5
check "its reason in the detail line" "run 4 failed: .*nonexist" 5

# A long run: p in the first minute, a live change, x.
T send-keys -t t Tab Up Up Up Up Up Up 5 0 0 Enter
check "epochs typed" "epochs 500: for the next run" 5
T send-keys -t t s
check "run 6 trains" "run 6 running .* step [1-9]" 60
wait_for "images/s now [1-9]" 20
sleep 1
T send-keys -t t p
check "p pauses in the first minute" "\[paused at [0-9]*s\]" 5
cap | sed -n '4,10p' | cut -c1-44 >"$tmp/chart1"
s1=$(cap | sed -n 's/.* step \([0-9]*\)\/.*/\1/p')
wait_for "step $((s1 + 3))/" 30
cap | sed -n '4,10p' | cut -c1-44 >"$tmp/chart2"
checks=$((checks + 1))
cmp -s "$tmp/chart1" "$tmp/chart2" || { fail "the images/s chart (or its title's value) moved while paused"; diff "$tmp/chart1" "$tmp/chart2" >&2; }
T send-keys -t t Left
check "Left: nothing to scroll in the first window" "fits in the 15 min window" 5
check_not "the pause stays where it was" "paused at 900s"
T send-keys -t t p W
check "W applies live" "workers 2: applied live" 10
T send-keys -t t x
check "x stops run 6" "run 6 stopped" 60
T send-keys -t t m
check "m refuses a live-changed run" "run 6 cannot be the baseline (live change)" 5
T send-keys -t t Tab Tab
check "the live run is compared with nothing" "^  6  .* n/a: live change *stopped" 5
T send-keys -t t Tab
tui_quit

# The file after: the dashboard's changes only, in place.
check_file "batch saved in place" "$CFG" -x "batch=64"
check_file "workers saved" "$CFG" -x "workers=2"
check_file "epochs saved" "$CFG" -x "epochs=500"
check_file "the comment kept" "$CFG" -x "# my settings"
check_file "the unknown key kept" "$CFG" -x "bogus=1"
check_file "the file with a bad line kept as config.bad" "$CFG.bad" -x "batch=32"
checks=$((checks + 1))
if grep -q "test_limit\|^data=\|^steps=\|^seed=" "$CFG"; then
    fail "command-line or unchanged settings were written"
    cat "$CFG" >&2
fi
check_file "the history file has the failed run" "$tmp/hist.tsv" "run=4.*state=failed"

# A relaunch reads them.
tui_run "--test-limit 100"
check "relaunch: batch 64 from the file" "batch  *64  *- live" 20
check "relaunch: workers 2 from the file" "workers  *2  *- live" 5
# x at once, most often while loading: never "step 0/0 ... 0 img/s".
T send-keys -t t s x
check "x stops the run" "run 1 stopped" 30
check_not "no step 0/0 after x while loading" "step 0/0"
check_not "no 0 img/s after x while loading" " 0 img/s"
tui_quit
tui_end

#!/bin/sh
# tests/tui/exec_layers.sh CNNTOP [PYTHON]: the exec dashboard's layers
# view (l), under tmux: a PyTorch script (tests/cli/layers_cnn.py) whose
# layer window has closed; l shows its modules (conv1 Conv2d, the loss, the
# optimizer's step, the window's steps) in the processes' place and l
# again the processes; e writes the record and `report` of it prints the
# model's table; after q the summary has it too.  Needs PYTHON with torch
# (skips, 77, without).  No sleeps as speed assumptions (lib.sh polls).
NAME=test_tui_exec_layers
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
PY=${2:-/usr/bin/python3}
SCRIPT=$(cd "$(dirname "$0")/.." && pwd)/cli/layers_cnn.py
NO_DATA=1
. "$(dirname "$0")/lib.sh"
"$PY" -c 'import torch' 2>/dev/null || { echo "$NAME: skipped: $PY has no torch"; exit 77; }

tui_shell 160 44
tui_run "exec -- $PY $SCRIPT 1 3"
check "the dashboard starts" "^cnntop exec: " 30 || { tui_end; exit 1; }
check "the script ends (the dashboard stays)" "exited 0" 120
check "the status line names l" "l layers" 5
T send-keys -t t l
check "l: the layers view" "Layers optimizer steps 5\.\.24, the slowest first" 10
check "l: conv1, a Conv2d, with its GF/s" "^conv1  *Conv2d  *[0-9.]*  *[0-9.]*  *[0-9.]*%  *[0-9.]*  *[0-9.]*  *20\( \|$\)" 5
check "l: the loss module" "^CrossEntropyLoss  *CrossEntropyLoss " 5
check "l: the optimizer's step" "^Adam step  *optimizer " 5
check "l: ReLU twice a step" "^relu  *ReLU  .*  40\( \|$\)" 5
T send-keys -t t l
check "l again: the processes" "^Processes the most CPU first" 10
check_not "l again: the layers gone" "^conv1  *Conv2d"
T send-keys -t t '?'
check "the help lists l" "the model's layers (the hook's layer window)" 5
T send-keys -t t x
T send-keys -t t e
check "e asks for the file name" "export to (.json" 5
T send-keys -t t C-u "$tmp/l.json" Enter
check "e writes the record" "the record written to $tmp/l.json" 10
T send-keys -t t q
check "after q: cnntop exit 0" "^cnntop exit 0$" 20
T capture-pane -p -t t -S -400 >"$tmp/after"
check_file "after q: the summary's model section" "$tmp/after" "^ Model, layer by layer (optimizer steps 5\.\.24"
"$CNNTOP" report "$tmp/l.json" >"$tmp/report" 2>&1
check_file "report of the export: the table" "$tmp/report" "^  conv1 fwd  *Conv2d "
check_file "report of the export: FLOPs per image" "$tmp/report" "^  FLOPs per image:      0\.036 MFLOP"
tui_end

#!/bin/sh
# test_report_exec.sh CNNTOP [PYTHON]: the summary of `cnntop exec` is a
# format of its record.  `cnntop report r.json` of a `cnntop exec --export
# r.json -- CMD` prints what `exec` printed, line by line: the heading,
# how it ended, the hook's figures (images/s, data wait, step, threads),
# --progress's, the processes by role, CPU, page faults, peak RSS, the
# verdict, a counters block per role with its scheduler line, and the
# process table.  No line may differ, timings included: both print the
# same record (exec fills it, then prints it).  The command's own output
# (before the heading) is not the summary and is left out.  Cases: a plain
# command, a shell with children (and --progress), and with PYTHON
# (Debian's, with torch) a DataLoader with one worker under the hook.
set -u
CNNTOP=$1
PY=${2:-}
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# same NAME CODE EXEC-ARGS...: exec --export (its exit code CODE, the
# command's), then report; the summaries match.
same() {
    name=$1
    code=$2
    shift 2
    checks=$((checks + 1))
    "$CNNTOP" exec --export "$tmp/$name.json" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    got=$?
    if [ "$got" -ne "$code" ]; then
        fail "$name: exec exited $got (want $code)"
        cat "$tmp/$name.err" >&2
        return
    fi
    # The summary: from its heading (after a blank line) to the end.
    sed -n '/^ Performance of cnntop exec: /,$p' "$tmp/$name.out" >"$tmp/$name.exec"
    if ! "$CNNTOP" report "$tmp/$name.json" >"$tmp/$name.report" 2>>"$tmp/$name.err"; then
        fail "$name: report failed"
        cat "$tmp/$name.err" >&2
        return
    fi
    sed -n '/^ Performance of cnntop exec: /,$p' "$tmp/$name.report" >"$tmp/$name.rep"
    [ -s "$tmp/$name.exec" ] || fail "$name: exec printed no summary"
    if ! diff "$tmp/$name.exec" "$tmp/$name.rep" >"$tmp/$name.diff"; then
        fail "$name: report prints another summary than exec (< exec, > report):"
        cat "$tmp/$name.diff" >&2
    fi
}

# has NAME PATTERN: exec's summary holds a line matching PATTERN.
has() {
    checks=$((checks + 1))
    grep -q -- "$2" "$tmp/$1.exec" || fail "$1: no line matching '$2' in exec's summary"
}

same plain 0 -- /bin/true
has plain "^  Exit:  *status 0"
has plain "^  Processes:  *1 main, 0 data-loader workers, 0 other children"
has plain "^  CPU:  "
has plain "^  Page faults:  "
has plain "^ Counters, main process (1 process): "
has plain "^  scheduler: "
has plain "^ Processes:"

same shell 3 --progress 'step ([0-9]+)' -- sh -c \
    'sleep 0.3 & sleep 0.2 & for i in 1 2 3; do echo step $i; done; wait; exit 3'
has shell "^  Exit:  *status 3"
has shell "^  Processes:  *1 main, 0 data-loader workers, 2 other children"
has shell "^  Progress:  *last 3, mean 2 (min 1, max 3) over 3 lines"
has shell "^ Counters, other children (2 processes): "
has shell "^ *[0-9]* *[0-9]*  other   sleep "

if [ -n "$PY" ] && "$PY" -c 'import torch' 2>/dev/null; then
    cat >"$tmp/loader.py" <<'PYEOF'
import torch
from torch.utils.data import DataLoader, TensorDataset
ds = TensorDataset(torch.randn(256, 1, 8, 8), torch.randint(0, 10, (256,)))
for x, y in DataLoader(ds, batch_size=32, num_workers=1):
    x.sum()
PYEOF
    same torch 0 -- "$PY" "$tmp/loader.py"
    has torch "^  Images/s:  *[0-9.]* (224 images in "
    has torch "^  Data wait:  "
    has torch "^  Threads:  *[0-9]* intra-op (torch.get_num_threads()), DataLoader num_workers 1"
    has torch "^  Processes:  *1 main, 1 data-loader worker, "
    has torch "^ Counters, data-loader workers (1 process): "
else
    echo "note: no PYTHON with torch: the DataLoader case is skipped"
fi

echo "test_report_exec: $checks checks, $fails failed"
[ "$fails" -eq 0 ]

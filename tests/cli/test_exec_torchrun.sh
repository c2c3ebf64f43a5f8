#!/bin/sh
# test_exec_torchrun.sh CNNTOP [PYTHON]: why a Python command died, from
# the uncaught exception the hook reports ("error": its type and innermost
# frame).  Without torch (python3 on PATH): a script that raises says
# "Python error: TYPE at FILE:FUNCTION"; one whose exception is torchrun's
# known failure (AttributeError in to_map of
# torch/distributed/elastic/multiprocessing/api.py, here a stand-in module
# of that path) also says why, with the workaround; a clean sys.exit(1)
# and --no-hook say neither; report of the export prints the same lines.
# With PYTHON's torch: where its torchrun really dies that way at start
# (Debian 12: torch 1.13 under Python 3.11; checked first by running it
# bare and reading its stderr), `cnntop exec -- PYTHON -m
# torch.distributed.run` and `-- torchrun` say why; else that part skips.
set -u
CNNTOP=$1
PY=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
SCRIPT=$HERE/ddp_train.py
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
WHY="^  Why:  *torchrun (torch.distributed.run) of torch 1.13 fails at start under Python 3.11 .*launch the ranks with torch.multiprocessing.spawn, or start one process per rank with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set yourself$"
PYERR="^  Python error:  *AttributeError at torch/distributed/elastic/multiprocessing/api.py:to_map (uncaught)$"

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }

# job NAME RC EXEC-ARGS...: cnntop exec --export NAME.json, exit RC; report
# of the export prints the same summary.
job() {
    name=$1 want=$2
    shift 2
    checks=$((checks + 1))
    timeout -s TERM 120 "$CNNTOP" exec --export "$tmp/$name.json" "$@" >"$tmp/$name.out" \
        2>"$tmp/$name.err"
    rc=$?
    [ "$rc" -eq "$want" ] ||
        { fail "$name: exec exited $rc, not $want"; sed 's/^/  /' "$tmp/$name.out" "$tmp/$name.err" >&2; }
    "$CNNTOP" report "$tmp/$name.json" >"$tmp/$name.report" 2>&1 || fail "$name: report failed"
    sed -n '/^ Performance of cnntop exec: /,$p' "$tmp/$name.out" >"$tmp/$name.a"
    sed -n '/^ Performance of cnntop exec: /,$p' "$tmp/$name.report" >"$tmp/$name.b"
    diff "$tmp/$name.a" "$tmp/$name.b" >&2 || fail "$name: report prints another summary"
}
has() {
    checks=$((checks + 1))
    grep -q -- "$2" "$tmp/$1.out" || { fail "$1: no line matching '$2'"; sed 's/^/  /' "$tmp/$1.out" >&2; }
}
hasnt() {
    checks=$((checks + 1))
    grep -q -- "$2" "$tmp/$1.out" && { fail "$1: a line matching '$2'"; sed 's/^/  /' "$tmp/$1.out" >&2; }
    return 0
}

# A stand-in for torch's module, at the path the hook reports relative to
# its sys.path entry, failing as torch 1.13's does under Python 3.11.
mkdir -p "$tmp/lib/torch/distributed/elastic/multiprocessing"
cat >"$tmp/lib/torch/distributed/elastic/multiprocessing/api.py" <<'PYEOF'
def to_map(val_or_map, n):
    map = {}
    for i in range(n):
        map[i] = val_or_map.get(i, None)
    return map
PYEOF
cat >"$tmp/fake_torchrun.py" <<'PYEOF'
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from torch.distributed.elastic.multiprocessing.api import to_map
to_map(None, 2)
PYEOF
cat >"$tmp/boom.py" <<'PYEOF'
def main():
    raise ValueError("boom")
main()
PYEOF
job fake 1 -- python3 "$tmp/fake_torchrun.py"
has fake "$PYERR"
has fake "$WHY"
job boom 1 -- python3 "$tmp/boom.py"
has boom "^  Python error:  *ValueError at boom.py:main (uncaught)$"
hasnt boom "^  Why: "
job clean 1 -- python3 -c "import sys; sys.exit(1)"
hasnt clean "^  Python error: \|^  Why: "
job nohook 1 --no-hook -- python3 "$tmp/fake_torchrun.py"
hasnt nohook "^  Python error: \|^  Why: "

# The real torchrun, where it dies that way.
[ -n "$PY" ] && "$PY" -c 'import torch.distributed.run' 2>/dev/null || {
    echo "test_exec_torchrun: $checks checks, $fails failed; SKIP torchrun: no torch.distributed.run in '$PY'"
    [ "$fails" -eq 0 ] || exit 1
    exit 77
}
port() {
    "$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"
}
timeout -s TERM 120 "$PY" -m torch.distributed.run --nproc_per_node 2 --master_port "$(port)" \
    "$SCRIPT" --launch env >/dev/null 2>"$tmp/bare.err"
rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "multiprocessing/api.py\", line [0-9]*, in to_map" "$tmp/bare.err"; then
    echo "test_exec_torchrun: $checks checks, $fails failed; SKIP torchrun: it does not die in to_map here (exit $rc)"
    [ "$fails" -eq 0 ] || exit 1
    exit 77
fi
job run 1 -- "$PY" -m torch.distributed.run --nproc_per_node 2 --master_port "$(port)" \
    "$SCRIPT" --launch env
has run "$PYERR"
has run "$WHY"
TORCHRUN=$(dirname "$PY")/torchrun
if [ -x "$TORCHRUN" ]; then
    job torchrun 1 -- "$TORCHRUN" --nproc_per_node 2 --master_port "$(port)" "$SCRIPT" --launch env
    has torchrun "$WHY"
fi

echo "test_exec_torchrun: $checks checks, $fails failed"
[ "$fails" -eq 0 ]

#!/bin/sh
# test_exec_ddp.sh CNNTOP PYTHON: a data-parallel PyTorch job seen as its
# ranks.  ddp_train.py (a tiny CNN under DistributedDataParallel, gloo,
# DistributedSampler, a few hundred random images) runs as two ranks,
# started by torch.multiprocessing.spawn and by a shell loop setting RANK
# and WORLD_SIZE (Debian's torchrun fails under Python 3.11), with
# num_workers 0 and 1.  Checked: each rank has its own role ("rank"), its
# DataLoader workers are workers; the job's images/s is the sum over the
# ranks, within 10% of the sum of the script's own counts (which time
# what the hook times, so only rounding and the hook's own cost differ);
# each rank's time in collectives is there (DDP's all-reduce, timed by a
# communication hook whose waits run on a thread of the hook's own) and
# leaves the weights bit for bit as DDP's own (--no-hook); the verdict
# counts ranks x (compute threads + loader workers) against the cores;
# report of the export prints the same summary; a multi-process script
# that never joins torch.distributed keeps today's roles.  Skips (77)
# without PYTHON, torch or gloo.
set -u
CNNTOP=$1
PY=${2:-}
HERE=$(cd "$(dirname "$0")" && pwd)
SCRIPT=$HERE/ddp_train.py
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -n "$PY" ] && "$PY" -c 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' \
    2>/dev/null || { echo "SKIP: no torch.distributed with gloo in '$PY'"; exit 77; }

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# A free port for MASTER_PORT, of the kernel's choosing.
port() {
    "$PY" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"
}

# job NAME EXEC-ARGS...: cnntop exec --export NAME.json, exit 0.
job() {
    name=$1
    shift
    checks=$((checks + 1))
    # A job that hangs fails named within the test's time.  (A hang of 2
    # runs in about 10 was the hook's all-reduce callback and a freed DDP
    # model deadlocking in torch 1.13; see _Waiter in sitecustomize.py.)
    # Before it is stopped, what its processes are doing (proc_stacks.sh).
    rm -f "$tmp/$name.json" "$tmp/$name.stacks"
    timeout -s TERM 150 "$CNNTOP" exec --export "$tmp/$name.json" "$@" >"$tmp/$name.out" \
        2>"$tmp/$name.err" &
    pid=$!
    (
        trap 'kill "$s" 2>/dev/null; exit 0' TERM
        sleep 140 &
        s=$!
        wait "$s"
        sh "$HERE/proc_stacks.sh" "$pid" 2>"$tmp/$name.stacks"
    ) >/dev/null 2>&1 &
    dog=$!
    wait "$pid"
    rc=$?
    kill "$dog" 2>/dev/null
    wait "$dog" 2>/dev/null
    [ "$rc" -eq 0 ] ||
        { fail "$name: exec exited $rc"; sed 's/^/  /' "$tmp/$name.out" "$tmp/$name.err" >&2; }
    [ -s "$tmp/$name.stacks" ] &&
        { echo "$name: still running after 140 s:" >&2; cat "$tmp/$name.stacks" >&2; }
}

# has NAME PATTERN: the output of job NAME has a line matching PATTERN.
has() {
    checks=$((checks + 1))
    grep -q -- "$2" "$tmp/$1.out" || { fail "$1: no line matching '$2'"; sed 's/^/  /' "$tmp/$1.out" >&2; }
}

# ranks NAME WORKERS: the checks of a two-rank job with WORKERS per rank.
ranks() {
    name=$1
    w=$2
    has "$name" "^  Ranks:  *2 of world 2 (torch.distributed; torch "
    has "$name" "^  Processes:  *.*, 2 ranks$"
    has "$name" "^ Counters, ranks (2 processes): "
    has "$name" "^ *[0-9]* *[0-9]*  rank    python"
    has "$name" "^  Rank 0:  *[0-9.]* images/s (.*, collectives [0-9.]* s (.*; [0-9n/a]* intra-op, num_workers $w (pid [0-9]*)$"
    has "$name" "^  Rank 1:  *[0-9.]* images/s (.*, collectives [0-9.]* s (.*; [0-9n/a]* intra-op, num_workers $w (pid [0-9]*)$"
    has "$name" "^  Verdict:  *.*2 ranks x ([0-9]* compute threads\? + $w loader workers\?) = [0-9]* on [0-9]* cores\?"
    [ "$w" -eq 0 ] || has "$name" "^  Processes:  *[0-9]* main, [1-9][0-9]* data-loader workers\?, "
    # Each rank measures its own layer window: the first is the job's, the
    # other's is passed over, not counted as lines rejected.
    has "$name" "^ Model, layer by layer"
    checks=$((checks + 1))
    ! grep -q "^  Hook: .*rejected" "$tmp/$name.out" ||
        fail "$name: $(grep '^  Hook:' "$tmp/$name.out")"
    checks=$((checks + 1))
    "$PY" - "$tmp/$name.out" "$tmp/$name.json" <<'PYEOF' || fail "$name: see above"
import json, re, sys
out = open(sys.argv[1]).read()
own = [float(x) for x in re.findall(r"^rank \d+: \d+ images in [0-9.]+ s: ([0-9.]+) images/s$", out, re.M)]
job = re.search(r"^  Images/s: +([0-9.]+), the sum over the ranks", out, re.M)
if len(own) != 2 or not job:
    sys.exit("the script's two counts or the job's images/s are missing")
if abs(float(job.group(1)) - sum(own)) > 0.10 * sum(own):
    sys.exit("the job's %s images/s is not within 10%% of the script's %.1f" % (job.group(1), sum(own)))
d = json.load(open(sys.argv[2]))
ranks = d["exec_ranks"]
if sorted(r["rank"] for r in ranks) != [0, 1] or any(r["coll"] <= 0 for r in ranks):
    sys.exit("exec_ranks: %r (two ranks, each with time in collectives)" % ranks)
if sum(p["role"] == "rank" for p in d["exec_procs"]) != 2:
    sys.exit("exec_procs: not two rank rows")
PYEOF
    # report of the export: the same summary.
    checks=$((checks + 1))
    "$CNNTOP" report "$tmp/$name.json" >"$tmp/$name.report" 2>&1 || fail "$name: report failed"
    sed -n '/^ Performance of cnntop exec: /,$p' "$tmp/$name.out" >"$tmp/$name.a"
    sed -n '/^ Performance of cnntop exec: /,$p' "$tmp/$name.report" >"$tmp/$name.b"
    diff "$tmp/$name.a" "$tmp/$name.b" >&2 || fail "$name: report prints another summary than exec"
}

# torch.multiprocessing.spawn, num_workers 0 and 1.
job spawn0 -- "$PY" "$SCRIPT" --workers 0 --port "$(port)"
ranks spawn0 0
has spawn0 "^  Processes:  *1 main, 0 data-loader workers, "
job spawn1 -- "$PY" "$SCRIPT" --workers 1 --port "$(port)"
ranks spawn1 1

# A shell loop: one process per rank, RANK and WORLD_SIZE in each's environment.
p=$(port)
job env0 -- sh -c "for r in 0 1; do RANK=\$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p \
    '$PY' '$SCRIPT' --launch env --workers 0 & done; wait"
ranks env0 0
has env0 "^  Processes:  *1 main, 0 data-loader workers, 0 other children, 2 ranks$"

# The timed all-reduce leaves DDP's result as it was: the same weights
# as without the hook, to the last bit.
grep "^rank [01]: weights " "$tmp/spawn0.out" | sort >"$tmp/hooked"
job plain --no-hook -- "$PY" "$SCRIPT" --workers 0 --port "$(port)"
grep "^rank [01]: weights " "$tmp/plain.out" | sort >"$tmp/unhooked"
checks=$((checks + 1))
[ -s "$tmp/hooked" ] && cmp -s "$tmp/hooked" "$tmp/unhooked" ||
    fail "the weights differ with the hook: $(cat "$tmp/hooked" "$tmp/unhooked")"
# The hook's all-reduce is waited for on a Python thread of its own: no
# Python of the hook runs on gloo's threads, where a callback waiting for
# the GIL deadlocked a freed model's ~ProcessGroupGloo (torch 1.13); none
# without the hook.
for r in 0 1; do
    has spawn0 "^rank $r: python threads .*cnntop-allreduce"
    checks=$((checks + 1))
    ! grep -q "^rank $r: python threads .*cnntop-allreduce" "$tmp/plain.out" ||
        fail "plain: rank $r has the hook's thread without the hook"
done

# Not distributed: spawned children that never call init_process_group
# stay other children, and no line speaks of ranks.
cat >"$tmp/nodist.py" <<'PYEOF'
import torch
import torch.multiprocessing as mp
def child(i):
    torch.ones(4).sum()
if __name__ == "__main__":
    mp.spawn(child, nprocs=2)
PYEOF
job nodist -- "$PY" "$tmp/nodist.py"
has nodist "^  Processes:  *1 main, 0 data-loader workers, [2-9] other children$"
checks=$((checks + 1))
grep -q "^  Ranks:\|^  Rank \|, [0-9]* ranks\?$\|^ Counters, ranks\|  rank    " "$tmp/nodist.out" &&
    fail "nodist: a line speaks of ranks"

echo "test_exec_ddp: $checks checks, $fails failed"
[ "$fails" -eq 0 ]

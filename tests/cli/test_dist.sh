#!/bin/sh
# test_dist.sh CNNTOP: data-parallel training over MPI (run --dist mpi).
#   - a batch that does not split over the ranks is refused before any
#     work: one line naming --batch, exit 2;
#   - with the same seed and global batch, 2 and 3 ranks give the one
#     process's losses: the first step's within 1e-6 (relative: the sums
#     in another order; measured 1.2e-8), each epoch's mean loss within
#     5e-3 and its test accuracy within 0.04 over 2 epochs of 6 steps
#     (measured here: 1.2e-3 and 0.016, 4 images of 256; on Fashion-MNIST
#     1.1e-3 and 0.016 over seeds 1-3).  Adam makes the last-bit
#     differences of another order of sums grow with the steps: one
#     process with --gemm native against openblas, the same sums in
#     another order too, differs as much (1.2e-3, the same 0.016);
#   - the same ranks give the same bits on a second run;
#   - rank 0 alone prints the summary; the record holds the job's figures
#     (ranks, the all-reduce's bytes) and every rank's; MFU is against the
#     job's peak, every rank's, not one rank's;
#   - --bn local trains too;
#   - the ranks split the test set's evaluation: the job's figures equal
#     one process's evaluation of rank 0's checkpoint, --bn local too.
# Skipped (77) with the reason when mpirun is missing or cnntop was built
# without MPI.  As root, OpenMPI needs its two OMPI_ALLOW_RUN_AS_ROOT
# variables: set here for the test's own mpirun.  More ranks than cores
# take --oversubscribe.  Data: a synthetic 28x28 set written here.
set -u
CNNTOP=$1
fails=0
checks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
D=$tmp/data

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

if ! command -v mpirun >/dev/null 2>&1; then
    echo "SKIP: no mpirun (install openmpi-bin)" >&2
    exit 77
fi
if [ "$(id -u)" -eq 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
MPIRUN="mpirun --oversubscribe"
# A sanitizer build: what OpenMPI keeps at its end is not cnntop's leak
# (lsan_mpi.supp, matched on whole stacks: the fast unwinder stops at the
# first frame in a library; harmless in a release build).
export OMPI_MCA_mca_base_component_disable_dlclose=1
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan_mpi.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

python3 - "$D" <<'PY' || { echo "test_dist: cannot write the data" >&2; exit 1; }
import os, struct, sys
d = sys.argv[1]
os.makedirs(d)
def idx(dims, data):
    return bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", x) for x in dims) + data
for name, n in (("train", 576), ("t10k", 256)):
    # Each class a band of rows brighter than the rest, with noise.
    img = bytearray()
    for i in range(n):
        c = (i * 7) % 10
        for p in range(784):
            r = p // 28
            v = (i * 131 + p * 17) % 97
            img.append(min(255, v + (120 if 2 * c <= r < 2 * c + 6 else 0)))
    with open(os.path.join(d, name + "-images-idx3-ubyte"), "wb") as f:
        f.write(idx([n, 28, 28], bytes(img)))
    with open(os.path.join(d, name + "-labels-idx1-ubyte"), "wb") as f:
        f.write(idx([n], bytes((i * 7) % 10 for i in range(n))))
PY
common="--data $D --limit 576 --test-limit 256 --threads 1 --seed 2 --augment shift"

# A build without MPI says so; the rest needs MPI.
"$CNNTOP" run --dist mpi $common --steps 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
if grep -q "built without MPI" "$tmp/err"; then
    checks=$((checks + 1))
    [ "$rc" -eq 2 ] || fail "--dist mpi without MPI: exit $rc, want 2"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "--dist mpi without MPI: not one line"
    echo "SKIP: this cnntop was built without MPI (checked: exit 2, one line)" >&2
    exit 77
fi

# ---- a batch that does not split ----
checks=$((checks + 1))
$MPIRUN -np 2 "$CNNTOP" run --dist mpi $common --batch 97 >"$tmp/out" 2>"$tmp/err"
rc=$?
# mpirun gives the first non-zero exit of a rank
if [ "$rc" -ne 2 ]; then
    fail "--batch 97 over 2 ranks: exit $rc, want 2"
    cat "$tmp/err" >&2
elif ! grep -q "^cnntop: --batch: 97 does not split over 2 ranks" "$tmp/err" ||
    [ "$(grep -c '^cnntop:' "$tmp/err")" -ne 1 ]; then
    fail "--batch 97 over 2 ranks: want one line naming --batch:"
    cat "$tmp/err" >&2
fi

# run N NAME ARGS...: N ranks (1: a plain process) into $tmp/NAME.json
run() {
    n=$1
    name=$2
    shift 2
    if [ "$n" -eq 1 ]; then
        "$CNNTOP" run $common "$@" --export "$tmp/$name.json" >"$tmp/$name.out" 2>"$tmp/$name.err"
    else
        $MPIRUN -np "$n" "$CNNTOP" run --dist mpi $common "$@" --export "$tmp/$name.json" \
            >"$tmp/$name.out" 2>"$tmp/$name.err"
    fi
    rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "$n rank(s) $*: exit $rc"
        cat "$tmp/$name.err" >&2
        return 1
    fi
}

# compare A B LOSSBOUND ACCBOUND: the epochs' losses and accuracies
compare() {
    python3 - "$tmp/$1.json" "$tmp/$2.json" "$3" "$4" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
lb, ab = float(sys.argv[3]), float(sys.argv[4])
ea, eb = a["epochs"], b["epochs"]
if len(ea) != len(eb) or not ea:
    sys.exit("epochs: %d against %d" % (len(ea), len(eb)))
bad = 0
for x, y in zip(ea, eb):
    r = abs(x["loss"] - y["loss"]) / abs(x["loss"])
    d = abs(x["accuracy"] - y["accuracy"])
    print("epoch %d: loss %.7f %.7f (relative %.1e), accuracy %.4f %.4f"
          % (x["epoch"] + 1, x["loss"], y["loss"], r, x["accuracy"], y["accuracy"]))
    if r > lb or d > ab:
        bad = 1
sys.exit(bad)
PY
}

# ---- the first step: the same loss but for the order of the sums ----
for n in 1 2 3; do
    run "$n" "step$n" --batch 96 --steps 1 --save "$tmp/step$n.ckpt"
done
for n in 2 3; do
    checks=$((checks + 1))
    python3 - "$tmp/step1.json" "$tmp/step$n.json" <<'PY' || fail "the first step's loss, 1 process against $n ranks"
import json, sys
a, b = (json.load(open(f))["train"]["final_loss"] for f in sys.argv[1:3])
print("first step: %.9f %.9f (relative %.1e)" % (a, b, abs(a - b) / a))
sys.exit(abs(a - b) > 1e-6 * a)
PY
    # The gradients, through Adam's first moment m = 0.1 g after one step
    # (the checkpoint: 184 bytes of header, the parameters, the running
    # statistics, m, v): the sum over ranks is the one process's gradient
    # (normalised by the job's batch), not N times it.  Adam's update
    # itself would hide a constant factor.  Rank 0 alone writes it.
    checks=$((checks + 1))
    python3 - "$tmp/step1.ckpt" "$tmp/step$n.ckpt" <<'PY' || fail "the first step's gradients, 1 process against $n ranks"
import array, struct, sys
def moments(path):
    b = open(path, "rb").read()
    counts = struct.unpack_from("<24I", b, 88)
    p, r = sum(counts[:18]), sum(counts[18:])
    f = array.array("f", b[184:184 + 4 * (3 * p + r)])
    return f[p + r:2 * p + r]
a, b = moments(sys.argv[1]), moments(sys.argv[2])
top = max(abs(x) for x in a)
worst = max(abs(x - y) for x, y in zip(a, b))
print("first step's Adam m: largest %.3e, largest difference %.3e" % (top, worst))
sys.exit(worst > 1e-4 * top)
PY
done
checks=$((checks + 1))
[ "$(ls "$tmp" | grep -c '\.ckpt')" -eq 3 ] || fail "--save: $(ls "$tmp" | grep -c '\.ckpt') checkpoints, want one a run"

# ---- two epochs: 1 process, 2 and 3 ranks, and 2 again ----
run 1 one --batch 96 --epochs 2
for n in 2 3; do
    run "$n" "r$n" --batch 96 --epochs 2 || continue
    checks=$((checks + 1))
    compare one "r$n" 5e-3 0.04 || fail "1 process against $n ranks: beyond the bounds"
done
run 2 r2again --batch 96 --epochs 2
checks=$((checks + 1))
python3 - "$tmp/r2.json" "$tmp/r2again.json" <<'PY' || fail "2 ranks twice: not the same bits"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
def bits(r):
    return [(e["loss"], e["accuracy"]) for e in r["epochs"]], r["train"]["final_loss"]
sys.exit(bits(a) != bits(b))
PY

# ---- rank 0 alone prints; the record's job figures ----
checks=$((checks + 1))
n=$(grep -c "Performance of cnntop run" "$tmp/r3.out")
[ "$n" -eq 1 ] || fail "3 ranks: $n summaries, want 1"
checks=$((checks + 1))
for want in "comm [0-9.]*%" "^  Ranks: *3 (MPI), BatchNorm synchronised" "rank 2: .*; run-queue wait [0-9.]*%" "^  Slowest rank: *rank [0-2]" \
    "^  all-reduce .*MB/step, algbw" "^  Threads per machine: *3 ranks x (1 compute + 0 loader) = 3 on"; do
    grep -q "$want" "$tmp/r3.out" || fail "3 ranks: the summary lacks '$want'"
done
checks=$((checks + 1))
"$CNNTOP" report "$tmp/r3.json" >"$tmp/report.out" 2>&1
for want in "^  Ranks: *3 (MPI)" "^  all-reduce .*busbw"; do
    grep -q "$want" "$tmp/report.out" || fail "report of 3 ranks' record lacks '$want'"
done
checks=$((checks + 1))
python3 - "$tmp/r3.json" <<'PY' || fail "3 ranks: the record's dist figures"
import json, sys
j = json.load(open(sys.argv[1]))
d, ranks = j["dist"], j["dist_ranks"]
# 422474 parameters, 4 bytes each, and the padding between tensors
ok = d["ranks"] == 3 and d["steps"] == 12 and 422474 * 4 <= d["ar_bytes"] < 1.8e6 and \
    len(ranks) == 3 and all(r["images_per_s"] > 0 and r["step_time"] > 0 for r in ranks) and \
    all(r["run_queue_wait"] is not None and 0 <= r["run_queue_wait"] <= 1 for r in ranks) and \
    j["train"]["split"]["comm"] > 0 and 0 <= d["overlap"] <= 1 and d["ar_probe"] > 0 and \
    abs(d["busbw_gbps"] - d["algbw_gbps"] * 4 / 3) < 1e-9 * d["busbw_gbps"]
if not ok:
    print(d, ranks, j["train"]["split"])
# MFU is against the job's peak: each rank's (the calibration at its
# threads) times the ranks, ranks x threads beyond rank 0's cores adding none.
m, t = j["machine"], j["train"]
if m["fma_peak_gflops"] is not None:
    th, cores, local = j["threads_used"], d["node_cores"], d["local_ranks"]
    per_core = m["fma_peak_gflops"] / min(th, cores)
    job = m["fma_peak_gflops"] * (d["ranks"] - local) + per_core * min(local * th, cores)
    want = t["images_per_s"] * j["flops_per_image"] / (job * 1e9)
    if abs(t["mfu"] - want) > 1e-6 * want:
        print("mfu", t["mfu"], "against the job's peak", want)
        ok = False
sys.exit(not ok)
PY
grep -q "FMA peak (.*): 3 ranks x [0-9.]* on 1 thread each" "$tmp/r3.out" ||
    fail "3 ranks: the peak's label does not say the ranks"

# ---- run --ranks with its output's reader gone (| head) ----
# The job goes on and ends as run does (exit 0, the export written):
# cnntop passes mpirun's output on, so mpirun never meets the broken pipe
# (it then exited 0, 1, 139 or 141, by chance: 2 tries in 3 failed with
# stderr in the pipe too; four tries).
for i in 1 2 3 4; do
    checks=$((checks + 1))
    rm -f "$tmp/piped.json" "$tmp/piped.rc"
    { "$CNNTOP" run --ranks 2 $common --batch 96 --steps 3 --export "$tmp/piped.json" 2>&1
      echo $? >"$tmp/piped.rc"; } | head -n 2 >/dev/null
    [ "$(cat "$tmp/piped.rc")" = 0 ] && [ -s "$tmp/piped.json" ] ||
        fail "run --ranks 2 2>&1 | head -n 2: exit $(cat "$tmp/piped.rc"), want 0 and the export"
done

# ---- rank 0's trace holds its waits for the others ----
checks=$((checks + 1))
if run 2 traced --batch 96 --steps 2 --trace "$tmp/trace.json"; then
    python3 - "$tmp/trace.json" <<'PY' || fail "2 ranks --trace: no comm events"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["name"] for e in ev if e.get("cat") == "comm"}
want = {"all-reduce wait", "BN sums", "loss and stop sum"}
if not want <= names:
    print("comm events:", names)
    sys.exit(1)
PY
fi

# ---- --bn local ----
checks=$((checks + 1))
run 2 local --batch 96 --steps 2 --bn local && ! grep -q '"bn": *"local"' "$tmp/local.json" &&
    fail "--bn local: the record's config does not say bn local"

# ---- the evaluation is split over the ranks, and it is the job's ----
# Each rank evaluates its share of the 256 test images and the sums are
# the job's: the ranks' final evaluation is the one process's evaluation
# of rank 0's checkpoint (correct images exactly, the loss to its printed
# digits), with --bn local too, where every rank evaluates with rank 0's
# running statistics (the checkpoint's).
for bn in sync local; do
    checks=$((checks + 1))
    run 2 "ev$bn" --batch 96 --steps 6 --bn "$bn" --save "$tmp/ev$bn.ckpt" || continue
    "$CNNTOP" eval --load "$tmp/ev$bn.ckpt" --data "$D" --test-limit 256 --threads 1 \
        >"$tmp/ev$bn.eval" 2>&1 ||
        { fail "eval --load of the ranks' checkpoint ($bn)"; continue; }
    want=$(python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["eval"]
print("(%d of %d images, loss %.4f," % (e["correct"], e["images"], e["loss"]))' "$tmp/ev$bn.json")
    grep -qF "$want" "$tmp/ev$bn.eval" ||
        fail "--bn $bn: the 2 ranks' evaluation '$want' is not one process's: $(grep accuracy "$tmp/ev$bn.eval")"
done

# ---- run --ranks N: cnntop starts the job itself ----
checks=$((checks + 1))
if "$CNNTOP" run --ranks 2 $common --batch 96 --steps 2 >"$tmp/ranks.out" 2>"$tmp/ranks.err"; then
    grep -q "^cnntop: starting the job: .*mpi[a-z]* -np 2 .*--bind-to none .* run .*--dist mpi\$" \
        "$tmp/ranks.err" || fail "--ranks 2: stderr does not say the command"
    [ "$(grep -c "Performance of cnntop run" "$tmp/ranks.out")" -eq 1 ] ||
        fail "--ranks 2: not one summary"
    grep -q "^  Ranks: *2 (MPI)" "$tmp/ranks.out" || fail "--ranks 2: the summary lacks the ranks"
    if [ "$(id -u)" -eq 0 ]; then
        grep -q "^cnntop: as root: OMPI_ALLOW_RUN_AS_ROOT=1" "$tmp/ranks.err" ||
            fail "--ranks 2 as root: the variables are not said"
    fi
else
    fail "--ranks 2: exit $?"
    cat "$tmp/ranks.err" >&2
fi
checks=$((checks + 1))
mkdir "$tmp/nobin"
PATH=$tmp/nobin "$CNNTOP" run --ranks 2 $common --batch 96 --steps 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -q "neither mpirun nor mpiexec" "$tmp/err"; then
    fail "--ranks without mpirun on PATH: exit $rc, want 2 and one line:"
    cat "$tmp/err" >&2
fi
checks=$((checks + 1))
"$CNNTOP" run --ranks 3 $common --batch 64 --steps 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "^cnntop: --batch: 64 does not split over 3 ranks" "$tmp/err" ||
    fail "--ranks 3 --batch 64: exit $rc, want 2 naming --batch"

# ---- SIGTERM to cnntop run --ranks: passed on, every rank stops after
# the same step, the summary and the partial record, exit 143 ----
checks=$((checks + 1))
mkdir "$tmp/term"
"$CNNTOP" run --ranks 2 $common --batch 96 --epochs 1000 --export "$tmp/term/t.json" \
    >"$tmp/term.out" 2>"$tmp/term.err" &
job=$!
i=0
while [ $i -lt 300 ] && ! grep -q "step 1/" "$tmp/term.err"; do
    sleep 0.1
    i=$((i + 1))
done
kill -TERM "$job"
i=0
while [ $i -lt 300 ] && kill -0 "$job" 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
if kill -0 "$job" 2>/dev/null; then
    fail "SIGTERM: the job still runs 30 s after"
    kill -KILL "$job"
fi
wait "$job"
rc=$?
[ "$rc" -eq 143 ] || fail "SIGTERM: exit $rc, want 143"
grep -q "(stopped early)" "$tmp/term.out" || fail "SIGTERM: no summary of the stopped run"
[ "$(ls -A "$tmp/term")" = t.json ] || fail "SIGTERM: the export dir holds '$(ls -A "$tmp/term")'"

# ---- a rank killed mid-run: the job ends, one line names the rank ----
# rank_pid R: the pid of rank R of this test's job (OpenMPI puts
# OMPI_COMM_WORLD_RANK in each rank's environment).
rank_pid() {
    for p in $(pgrep -f -- "--data $D" 2>/dev/null); do
        if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
            echo "$p"
            return 0
        fi
    done
    return 1
}
checks=$((checks + 1))
mkdir "$tmp/kill"
"$CNNTOP" run --ranks 2 $common --batch 96 --epochs 1000 --export "$tmp/kill/k.json" \
    >"$tmp/kill.out" 2>"$tmp/kill.err" &
job=$!
i=0
while [ $i -lt 300 ] && ! grep -q "step 1/" "$tmp/kill.err"; do
    sleep 0.1
    i=$((i + 1))
done
victim=$(rank_pid 1)
if [ -z "$victim" ]; then
    fail "killed rank: no rank 1 found"
    kill "$job" 2>/dev/null
else
    kill -KILL "$victim"
    t0=$(date +%s)
    i=0
    while [ $i -lt 300 ] && kill -0 "$job" 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    if kill -0 "$job" 2>/dev/null; then
        fail "killed rank: the job still runs 30 s after"
        kill -KILL "$job"
    fi
    wait "$job"
    rc=$?
    echo "killed rank 1 (pid $victim): the job ended in $(($(date +%s) - t0)) s, exit $rc" >&2
    [ "$rc" -ne 0 ] || fail "killed rank: exit 0"
    n=$(grep -c "^cnntop: rank 1 died: signal 9 (Killed)" "$tmp/kill.err")
    [ "$n" -eq 1 ] || fail "killed rank: $n lines naming rank 1 and SIGKILL, want 1"
    ! grep -q "^-----" "$tmp/kill.err" || fail "killed rank: the launcher's banner is shown"
    [ -z "$(ls -A "$tmp/kill")" ] || fail "killed rank: left $(ls -A "$tmp/kill")"
    sed -n '/^cnntop: rank/,$p' "$tmp/kill.err" >&2
fi
i=0
while [ $i -lt 100 ] && rank_pid 0 >/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
! rank_pid 0 >/dev/null || fail "killed rank: rank 0 still runs"

echo "test_dist: $checks checks, $fails failed" >&2
[ "$fails" -eq 0 ]

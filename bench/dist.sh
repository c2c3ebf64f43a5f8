#!/bin/sh
# dist.sh [BUILD_DIR]: data-parallel training over MPI (issue 35), two
# benchmarks in one sitting, printed as Markdown tables for bench/RESULTS.md.
#
# 1. This machine: one process with 2 threads against 2 ranks with 1 thread
#    each (`cnntop run --ranks 2`, which starts mpirun itself), the same
#    global batch and seed, one run each, alternated A B A B (BENCH_PAIRS
#    pairs, default 3): images/s, step time (train wall / steps) and the
#    comm share of the step split, read from each run's --export record,
#    and each pair's ratio 2 ranks / 1 process.
#
# 2. A simulated two-host job: network namespaces cnb0 and cnb1 joined by a
#    veth pair (cnbv0 10.99.35.1/30 in cnb0, cnbv1 10.99.35.2/30 in cnb1),
#    each end's egress shaped with tc's token bucket (tbf: this kernel has
#    no netem) to each rate of BENCH_RATES (default "1gbit 10gbit"), then
#    unshaped for reference; one rank per namespace, OpenMPI's TCP transport
#    alone (--mca btl tcp,self: no shared memory between the "hosts").  Per
#    link: the all-reduce figures cnntop records against the time on paper,
#    2(N-1)/N x bytes / bandwidth, and the bytes the veth really carried.
#    Each link in BENCH_LINK_RUNS rounds (default 3), a row each, and
#    in two ways (BENCH_ALGS, default "default ring"): as OpenMPI
#    chooses, and with --mca coll_libnbc_iallreduce_algorithm 1 (ring).
#    cnntop's gradients go through MPI_Iallreduce in place, which OpenMPI
#    4.1's libnbc does as a binomial reduce then broadcast (chosen below 4
#    ranks, under 64 KB, and for any MPI_IN_PLACE buffer): one direction
#    of the link at a time, up to twice the time on paper, which assumes a
#    ring (both directions at once).
#
# How OpenMPI 4.1 is launched across the namespaces, without ssh:
#   - mpirun runs inside cnb0 (`ip netns exec cnb0 mpirun ...`), so that it
#     sees only lo and cnbv0: nothing but our namespaces can carry traffic.
#   - `--host 10.99.35.1,10.99.35.2`: OpenMPI finds the first address on
#     one of its own interfaces, so it starts rank 0 itself, and calls the
#     rsh agent for the second only.
#   - `--mca plm_rsh_agent $tmp/agent`: OpenMPI runs it as
#     `agent HOST '' orted -mca ess env ... -mca orte_hnp_uri ...` (host
#     first, then an empty word, then the daemon's command as separate
#     words, the way ssh gets them).  The agent, written by this script,
#     maps the address to its namespace and runs
#     `ip netns exec cnb1 sh -c "$*"`, as sshd would run it through a
#     shell.  The daemon inherits mpirun's environment this way (so also
#     the two OMPI_ALLOW_RUN_AS_ROOT variables).
#   - `--mca oob_tcp_if_include 10.99.35.0/30` for the daemons' own
#     connection back to mpirun, `--mca btl_tcp_if_include 10.99.35.0/30`
#     for the ranks' traffic.  Both namespaces share the host name (the UTS
#     namespace is the root one's): OpenMPI still counts two nodes (each
#     rank sees OMPI_COMM_WORLD_LOCAL_SIZE=1), as it names the second by
#     its address.
#   - --bind-to none, as `cnntop run --ranks` passes; --threads 1 a rank.
#
# Needs root (namespaces, tc), ip, tc, mpirun and python3; refuses
# otherwise, before any work (a cnntop built without MPI stops at the first
# 2-rank run, with its one-line message).  The namespaces (and so the
# veth pair) and anything still running in them are removed on exit, on
# failure and on INT/TERM too.  It refuses to start when cnb0 or cnb1
# exists already.  OPENBLAS_CORETYPE is left as it is (said in the output).
#
# Knobs: BENCH_DATA (default the Fashion-MNIST package), BENCH_BATCH
# (global batch, default 64), BENCH_STEPS (default 40), BENCH_PAIRS
# (default 3), BENCH_RATES (tc rates, default "1gbit 10gbit"), BENCH_ALGS
# (libnbc iallreduce algorithms, default "default ring").  It takes 1-3
# minutes here (2 cores, shared with other work).
set -u
BUILD=${1:-build}
CNNTOP=$(cd "$BUILD" 2>/dev/null && pwd)/ui/cnntop
DATA=${BENCH_DATA:-/usr/share/datasets/fashion-mnist}
BATCH=${BENCH_BATCH:-64}
STEPS=${BENCH_STEPS:-40}
PAIRS=${BENCH_PAIRS:-3}
RATES=${BENCH_RATES:-1gbit 10gbit}
ALGS=${BENCH_ALGS:-default ring}
LINK_RUNS=${BENCH_LINK_RUNS:-3}
NS0=cnb0 NS1=cnb1 IF0=cnbv0 IF1=cnbv1
A0=10.99.35.1 A1=10.99.35.2 NET=10.99.35.0/30

die() {
    echo "bench/dist.sh: $*" >&2
    exit 1
}

[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces and tc); run it as root"
for tool in ip tc mpirun python3; do
    command -v "$tool" >/dev/null 2>&1 || die "no $tool on PATH (ip, tc: iproute2; mpirun: openmpi-bin)"
done
[ -x "$CNNTOP" ] || die "no $BUILD/ui/cnntop: build first (make build)"
for ns in $NS0 $NS1; do
    ! ip netns list | grep -qw "^$ns" ||
        die "network namespace $ns exists already (another run?); remove it: ip netns del $ns"
done

# bits RATE: tc's rate in bits/s (0 for none); fails on another unit.
bits() {
    case $1 in
    none) echo 0 ;;
    *gbit) echo "${1%gbit}e9" ;;
    *mbit) echo "${1%mbit}e6" ;;
    *) return 1 ;;
    esac
}
# libnbc_alg NAME: OpenMPI 4.1's coll_libnbc_iallreduce_algorithm number.
libnbc_alg() {
    case $1 in
    ring) echo 1 ;;
    binomial) echo 2 ;;
    rabenseifner) echo 3 ;;
    recursive_doubling) echo 4 ;;
    *) return 1 ;;
    esac
}
for r in $RATES; do
    [ "$r" != none ] && bits "$r" >/dev/null || die "BENCH_RATES: $r: want a rate in gbit or mbit, as 1gbit"
done
for a in $ALGS; do
    [ "$a" = default ] || libnbc_alg "$a" >/dev/null ||
        die "BENCH_ALGS: $a: want default, ring, binomial, rabenseifner or recursive_doubling"
done

tmp=$(mktemp -d) || die "cannot make a temporary directory"
made_ns=""
cleanup() {
    for ns in $made_ns; do
        # Whatever an interrupted job left in our namespaces: ours alone.
        for p in $(ip netns pids "$ns" 2>/dev/null); do
            kill -KILL "$p" 2>/dev/null
        done
        ip netns del "$ns" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
common="--data $DATA --batch $BATCH --steps $STEPS --limit $((BATCH * STEPS)) --test-limit 500 --seed 1"

# record_run NAME COMMAND...: one run into $tmp/NAME.json; its output
# kept, its last lines shown on failure.
record_run() {
    run=$1
    shift
    if ! "$@" --export "$tmp/$run.json" >"$tmp/$run.out" 2>"$tmp/$run.err"; then
        echo "bench/dist.sh: run $run failed: $*" >&2
        tail -5 "$tmp/$run.err" >&2
        exit 1
    fi
}

# figures pair I ONE.json TWO.json: part 1's three rows for pair I.
# figures ratios PAIRS DIR: the ratio's median and range over the pairs.
# figures link NAME BITS_PER_S RECORD LINK_BYTES: part 2's row for a run.
# figures best NAME BITS_PER_S RECORDS...: part 2's summary row for a link.
figures() {
    python3 - "$@" <<'PY'
import json, sys
mode, args = sys.argv[1], sys.argv[2:]

def load(f):
    return json.load(open(f))

def step(j):
    t = j["train"]
    return t["wall"] / t["steps"]

def comm_share(j):
    s = j["train"]["split"]
    return s.get("comm", 0.0) / sum(s.values())

if mode == "pair":
    # pair I ONE.json TWO.json
    i, a, b = args[0], load(args[1]), load(args[2])
    ra, rb = a["train"]["images_per_s"], b["train"]["images_per_s"]
    for kind, j in (("1 process, 2 threads", a), ("2 ranks, 1 thread each", b)):
        print("| %s | %s | %.1f | %.1f | %.1f%% |" % (i, kind, j["train"]["images_per_s"],
              step(j) * 1e3, comm_share(j) * 100))
    print("| %s | ratio 2 ranks / 1 process | %.2f | %.2f | |" % (i, rb / ra, step(b) / step(a)))
elif mode == "ratios":
    # ratios PAIRS DIR: the images/s ratio over the pairs
    n, d = int(args[0]), args[1]
    r = sorted(load("%s/two%d.json" % (d, i))["train"]["images_per_s"] /
               load("%s/one%d.json" % (d, i))["train"]["images_per_s"] for i in range(1, n + 1))
    print("images/s, 2 ranks / 1 process, over %d pairs: median %.2f, least %.2f, most %.2f"
          % (n, r[n // 2] if n % 2 else (r[n // 2 - 1] + r[n // 2]) / 2, r[0], r[-1]))
elif mode == "best":
    # best NAME RATE_BITS_PER_S RECORDS...
    name, rate, js = args[0], float(args[1]), [load(f) for f in args[2:]]
    med = lambda xs: sorted(xs)[len(xs) // 2] if len(xs) % 2 else \
        (sorted(xs)[len(xs) // 2 - 1] + sorted(xs)[len(xs) // 2]) / 2
    d = min((j["dist"] for j in js), key=lambda d: d["ar_probe"])
    n = d["ranks"]
    paper = 2 * (n - 1) / n * d["ar_bytes"] / (rate / 8) if rate else 0
    print("| %s | %s | %.2f | %s | %.3f | %.1f | %.0f%% | %.1f%% | %.1f |" % (
        name, "%.2f" % (paper * 1e3) if rate else "-", d["ar_probe"] * 1e3,
        "%.2fx" % (d["ar_probe"] / paper) if rate else "-", d["algbw_gbps"],
        med([j["dist"]["ar_wait"] / j["dist"]["steps"] * 1e3 for j in js]),
        med([j["dist"]["overlap"] * 100 for j in js]), med([comm_share(j) * 100 for j in js]),
        med([j["train"]["images_per_s"] for j in js])))
else:
    # link NAME RATE_BITS_PER_S(0: unshaped) RECORD LINK_BYTES
    name, rate, j, link = args[0], float(args[1]), load(args[2]), float(args[3])
    d, n = j["dist"], j["dist"]["ranks"]
    st = d["steps"]
    paper = 2 * (n - 1) / n * d["ar_bytes"] / (rate / 8) if rate else float("nan")
    rank_comm = max(r["comm"] for r in j["dist_ranks"]) / st
    cell = lambda x, f: "-" if x != x else f % x
    print("| %s | %.2f | %s | %.2f | %s | %.3f | %.3f | %.1f | %.1f | %.0f%% | %.1f | %.1f | %.1f%% | %.1f | %.2f |" % (
        name, d["ar_bytes"] / 1e6, cell(paper * 1e3, "%.2f"), d["ar_probe"] * 1e3,
        cell(d["ar_probe"] / paper if rate else float("nan"), "%.2fx"),
        d["algbw_gbps"], d["busbw_gbps"], d["ar_wait"] / st * 1e3, d["ar_span"] / st * 1e3,
        d["overlap"] * 100, d["sum_wait"] / st * 1e3, rank_comm * 1e3, comm_share(j) * 100,
        j["train"]["images_per_s"], link / st / 1e6))
PY
}

echo "# bench/dist.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -1), $(nproc) cores;" \
    "OPENBLAS_CORETYPE ${OPENBLAS_CORETYPE+=$OPENBLAS_CORETYPE}${OPENBLAS_CORETYPE-unset};" \
    "$(mpirun --version 2>/dev/null | head -1)"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs: cnntop run $common"
echo

# ---- 1. this machine: 1 process x 2 threads against 2 ranks x 1 thread ----
echo "## 1 process with 2 threads against 2 ranks with 1 thread each (this machine)"
echo
echo "| pair | run | images/s | step ms | comm share |"
echo "|---|---|---|---|---|"
i=1
while [ "$i" -le "$PAIRS" ]; do
    record_run "one$i" "$CNNTOP" run $common --threads 2
    record_run "two$i" "$CNNTOP" run --ranks 2 $common --threads 1
    figures pair "$i" "$tmp/one$i.json" "$tmp/two$i.json" || exit 1
    i=$((i + 1))
done
echo
figures ratios "$PAIRS" "$tmp" || exit 1
echo "2 ranks started as: $(sed -n 's/^cnntop: starting the job: //p' "$tmp/two1.err")"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# ---- 2. two namespaces over a shaped veth pair ----
ip netns add $NS0 || die "cannot add network namespace $NS0"
made_ns=$NS0
ip netns add $NS1 || die "cannot add network namespace $NS1"
made_ns="$NS0 $NS1"
{
    ip link add $IF0 type veth peer name $IF1 &&
        ip link set $IF0 netns $NS0 && ip link set $IF1 netns $NS1 &&
        ip -n $NS0 addr add $A0/30 dev $IF0 && ip -n $NS1 addr add $A1/30 dev $IF1 &&
        ip -n $NS0 link set lo up && ip -n $NS1 link set lo up &&
        ip -n $NS0 link set $IF0 up && ip -n $NS1 link set $IF1 up
} || die "cannot set up the veth pair $IF0-$IF1"

cat >"$tmp/agent" <<EOF
#!/bin/sh
# OpenMPI's rsh agent for bench/dist.sh: agent [-options] HOST COMMAND...
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1
shift
case \$host in
$A0|$NS0) ns=$NS0 ;;
$A1|$NS1) ns=$NS1 ;;
*) echo "bench/dist.sh agent: unknown host \$host" >&2; exit 255 ;;
esac
exec ip netns exec "\$ns" sh -c "\$*"
EOF
chmod +x "$tmp/agent"

# tx NS IF: bytes the interface has sent.
tx() {
    ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_bytes"
}

# shape RATE: both ends' egress to RATE (none: unshaped).  The bucket holds
# 0.2 ms of the rate, 64 KB at least, so that a burst at the veth's own
# speed hardly shortens a 1.7 MB all-reduce.
shape() {
    for end in "$NS0 $IF0" "$NS1 $IF1"; do
        set -- $end
        if [ "$RATE" = none ]; then
            ip netns exec "$1" tc qdisc del dev "$2" root 2>/dev/null
        else
            burst=$(awk -v b="$(bits "$RATE")" 'BEGIN { x = b / 8 * 2e-4; printf "%d", (x > 65536 ? x : 65536) }')
            ip netns exec "$1" tc qdisc replace dev "$2" root tbf rate "$RATE" burst "$burst" latency 50ms ||
                die "tc cannot shape $2 to $RATE (no sch_tbf?)"
        fi
    done
}

echo "## 2 ranks in two network namespaces over a veth pair, OpenMPI TCP (--threads 1 a rank)"
echo
echo "paper: 2(N-1)/N x bytes / rate; probe: one all-reduce of the gradients alone after a barrier, the slowest rank, best of 5"
echo "(ar_probe); algbw = bytes / probe, busbw = algbw x 2(N-1)/N; wait, span: ar_wait, ar_span"
echo "per step; hidden: 1 - wait / span; sums: BatchNorm and loss sums (sum_wait) per step;"
echo "rank comm: the most any rank waited on the others a step; link: bytes the veth carried"
echo "each way per step (the whole run's, start-up included, over the steps)."
echo
echo "| link | MB/step | paper ms | probe ms | probe/paper | algbw GB/s | busbw GB/s | wait ms/step | span ms/step | hidden | sums ms/step | rank comm ms/step | comm share | images/s | link MB/step |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# link_name RATE ALG: the table's name for the link and the algorithm.
link_name() {
    if [ "$1" = none ]; then printf 'unshaped veth'; else printf '%s' "$1"; fi
    [ "$2" = default ] || printf ', libnbc %s' "$2"
}

# link_run RATE ALG REP: one job over the link as shaped now, its row
# into $tmp/rows_RATE_ALG.
link_run() {
    mca="" name=$(link_name "$1" "$2")
    [ "$2" = default ] || mca="--mca coll_libnbc_iallreduce_algorithm $(libnbc_alg "$2")"
    before=$(($(tx $NS0 $IF0) + $(tx $NS1 $IF1)))
    record_run "link_$1_$2_$3" ip netns exec $NS0 mpirun -np 2 --host $A0,$A1 --bind-to none \
        --mca plm_rsh_agent "$tmp/agent" --mca btl tcp,self \
        --mca btl_tcp_if_include $NET --mca oob_tcp_if_include $NET $mca \
        "$CNNTOP" run --dist mpi $common --threads 1
    after=$(($(tx $NS0 $IF0) + $(tx $NS1 $IF1)))
    figures link "$name" "$(bits "$1")" "$tmp/link_$1_$2_$3.json" $(((after - before) / 2)) \
        >>"$tmp/rows_$1_$2" || exit 1
}

# The links in turn, LINK_RUNS rounds, so that a burst of other work on
# the machine falls on one round rather than on one link's every run;
# the rows grouped by link at the end.
rep=1
while [ "$rep" -le "$LINK_RUNS" ]; do
    for RATE in $RATES none; do
        shape
        for alg in $ALGS; do
            link_run "$RATE" "$alg" "$rep"
        done
    done
    rep=$((rep + 1))
done
for RATE in $RATES none; do
    for alg in $ALGS; do
        cat "$tmp/rows_${RATE}_$alg"
    done
done
echo
echo "Per link over the $LINK_RUNS rounds: the best probe (the one least disturbed by other"
echo "work on the cores), and the medians of the in-training figures."
echo
echo "| link | paper ms | best probe ms | best/paper | algbw GB/s at best | median wait ms/step | median hidden | median comm share | median images/s |"
echo "|---|---|---|---|---|---|---|---|---|"
for RATE in $RATES none; do
    for alg in $ALGS; do
        figures best "$(link_name "$RATE" "$alg")" "$(bits "$RATE")" "$tmp"/link_"${RATE}_${alg}"_*.json ||
            exit 1
    done
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

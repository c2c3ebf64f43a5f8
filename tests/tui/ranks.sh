#!/bin/sh
# tests/tui/ranks.sh CNNTOP FIELDS: the dashboard's ranks setting and a run
# of several ranks (the job of `cnntop run --ranks N`, ui/tui/jobrun.c).
#   - with no mpirun on PATH, ranks 2 is refused on the status line, the
#     dashboard stays up;
#   - ranks 2 (the settings row after gemm): a run shows the job live
#     (its images/s and comm share, each rank's step time, the slowest
#     rank named), finishes, and its export (e) equals `cnntop run --ranks
#     2 --export` of the same settings in every field that does not
#     depend on timing (tests/cli/record_compare.py: same seed, same
#     losses);
#   - a rank killed (SIGKILL) mid-run: the run is recorded as failed with
#     run --ranks' line naming the rank and the signal, within 30 s; the
#     dashboard stays up and the next run finishes;
#   - x stops a job: a stopped run (its ranks stop after the same step);
#   - q while a job trains stops it: no process of the job is left, no
#     temporary file (TMPDIR is the test's), exit 0.
# FIELDS is test_record_fields (--varies: the members that depend on
# timing).  Skipped (77) without tmux, mpirun or MPI in this build.  Small
# synthetic data (tests/cli/dist_data.py); bounded waits, no timing.
NAME=test_tui_ranks
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
FIELDS=${2:?usage: ranks.sh CNNTOP FIELDS}
CLI=$(cd "$(dirname "$0")/../cli" && pwd)
NO_DATA=1
command -v mpirun >/dev/null 2>&1 || { echo "$NAME: skipped: no mpirun (install openmpi-bin)"; exit 77; }
if "$CNNTOP" run --ranks 2 --batch 3 2>&1 | grep -q "built without MPI"; then
    echo "$NAME: skipped: this cnntop was built without MPI"
    exit 77
fi
. "$(dirname "$0")/lib.sh"

D=$tmp/data
# The export comparison includes the calibration: this test's own cache, so
# that another test calibrating at the same moment (ctest -j, a fresh
# build's shared cache) cannot change it between the two runs.
XDG_CACHE_HOME=$tmp/cache
export XDG_CACHE_HOME
python3 "$CLI/dist_data.py" "$D" 1152 64 >/dev/null || { echo "$NAME: cannot write the data" >&2; exit 1; }
mkdir "$tmp/tt"
# The ranks under a sanitizer: OpenMPI's own leaks suppressed (test_dist.sh).
cat "$(dirname "$0")/lsan.supp" "$CLI/lsan_mpi.supp" >"$tmp/lsan.supp"
MPI_ENV="TMPDIR=$tmp/tt OMPI_MCA_mca_base_component_disable_dlclose=1 ASAN_OPTIONS=fast_unwind_on_malloc=0:log_path=$tmp/asan LSAN_OPTIONS=suppressions=$tmp/lsan.supp:print_suppressions=0"
cfg="--data $D --batch 32 --epochs 2 --test-limit 64 --threads 1 --seed 5"
# job_pids: the processes of this test's jobs (their command lines hold $D).
job_pids() { pgrep -f -- "run .*--data $D" | grep -v "^$$\$"; }

tui_shell 120 40 "$MPI_ENV"
# No launcher: the change is refused, with the reason.
T send-keys -t t "clear; PATH=/nonexistent $CNNTOP $cfg; echo \"cnntop exit \$?\"" Enter
check "the dashboard starts" "idle: press s" 20 || { tui_end; exit 1; }
T send-keys -t t Down Down Down Down Down Right
check "ranks 2 refused without mpirun" "ranks: neither mpirun nor mpiexec is on PATH" 5
check "the ranks row stays 1" "ranks  *1  *- new" 5
tui_quit

tui_run "$cfg --export $tmp/tui.json --force"
check "the dashboard starts again" "idle: press s" 20 || { tui_end; exit 1; }
T send-keys -t t Down Down Down Down Down Right
check "ranks 2 for the next run" "ranks 2: for the next run" 5
T send-keys -t t s
check "the job shown live" "job  *2 ranks  images/s [0-9]" 90
check "the slowest rank named" "slowest  *rank [01], [0-9.]* ms a step" 10
check "each rank's step time" "rank ms  *0:[0-9.]* 1:[0-9.]*" 10
check "the run's progress" "run 1 \(running\|evaluating\|finished\)" 10
check "run 1 finishes" "run 1 finished" 120
check "the images/s chart has the run" "images/s.*\[1m\]" 5
check "the step split has the job's comm" "data [0-9.]*%.*comm [0-9.]*%" 5
check "the job's segment, from its record" "^segment  *1 b32" 5
T send-keys -t t e
check "e offers the --export name" "export to (.*): $tmp/tui.json_" 5
T send-keys -t t Enter
check "the export is written" "exported run 1 to" 30

# A rank killed mid-run: a failed run, the dashboard up, the next run.
T send-keys -t t Down c
check "the epochs prompt" "epochs = _" 5
T send-keys -t t 200 Enter
check "epochs 200" "epochs 200: for the next run" 5
T send-keys -t t s
check "run 2 trains" "run 2 running .*step [1-9]" 90
victim=""
for p in $(job_pids); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1"; then
        victim=$p
        break
    fi
done
checks=$((checks + 1))
[ -n "$victim" ] || fail "no rank 1 process found"
[ -n "$victim" ] && kill -9 "$victim"
check "the killed rank fails the run, named" "run 2 failed: rank 1 died: signal 9" 30
T send-keys -t t Tab Tab
check "the failed run in the history" "^  2  .* failed" 5
T send-keys -t t Tab c
check "the epochs prompt again" "epochs = _" 5
T send-keys -t t C-u 1 Enter
check "epochs 1" "epochs 1: for the next run" 5
T send-keys -t t s
check "the next run finishes" "run 3 finished" 120

# q while a job trains: the job stopped, nothing left behind.
T send-keys -t t c
T send-keys -t t C-u 200 Enter
check "epochs 200 again" "epochs 200: for the next run" 5
T send-keys -t t s
check "run 4 trains" "run 4 running .*step [1-9]" 90
T send-keys -t t x
check "x stops the job: a stopped run" "run 4 stopped" 60
T send-keys -t t s
check "run 5 trains" "run 5 running .*step [1-9]" 90
T send-keys -t t q
check "q asks" "stop it and quit" 5
T send-keys -t t y
check "q stops the job and quits, status 0" "^cnntop exit 0$" 60
n=0
while [ -n "$(job_pids)" ] && [ $n -lt 150 ]; do
    sleep 0.2
    n=$((n + 1))
done
checks=$((checks + 1))
[ -z "$(job_pids)" ] || { fail "processes of the job left after q:"; ps -o pid,ppid,args -p "$(job_pids | tr '\n' ,)0" >&2; }
checks=$((checks + 1))
[ -z "$(ls -A "$tmp/tt")" ] || { fail "temporary files left:"; ls -la "$tmp/tt" >&2; }

# The dashboard's export against run --ranks 2's, same settings.
HOME=$tmp XDG_CONFIG_HOME=$tmp/cfg XDG_CACHE_HOME=${XDG_CACHE_HOME:-$tmp/cache} TMPDIR=$tmp/tt \
    OMPI_MCA_mca_base_component_disable_dlclose=1 \
    ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    LSAN_OPTIONS="suppressions=$tmp/lsan.supp:print_suppressions=0" "$CNNTOP" run --ranks 2 $cfg --export "$tmp/run.json" --force >"$tmp/run.out" 2>&1 ||
    { fail "cnntop run --ranks 2 exited $?"; cat "$tmp/run.out" >&2; }
"$FIELDS" --varies >"$tmp/varies"
checks=$((checks + 1))
python3 "$CLI/record_compare.py" "$tmp/run.json" "$tmp/tui.json" "$tmp/varies" ||
    fail "the dashboard's export differs from run --ranks 2 --export's"
tui_end

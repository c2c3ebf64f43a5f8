#!/bin/sh
# test_exec_signals.sh CNNTOP: `cnntop exec` (and the other commands) under
# signals as a shell passes them, a reader that goes away, a process the
# command leaves behind, and a command that cannot be exec'ed.
#   - a signal ignored when cnntop starts (nohup, a background job, env
#     --ignore-signal) stays ignored in the command (its SigIgn is what it
#     would be without cnntop, and so is its blocked mask) and in cnntop
#     itself: kill -HUP, -QUIT, -TERM, -USR1 neither end cnntop nor reach
#     the command; run keeps SIGHUP ignored too;
#   - headless (--no-dashboard, no terminal), SIGTERM goes on to the
#     command, cnntop waits, prints the summary and exits with its status
#     (the terminal paths: tests/tui/exec_signals.sh);
#   - `exec --progress RE -- yes | head -c 10` ends as without cnntop
#     (141), on stdout and on stderr, and with SIGPIPE ignored the
#     command's write error (1) is the status;
#   - with --progress, a line a left-behind process writes after the
#     command exited still comes through; one that never closes the
#     output is given up after a few seconds, and both are said;
#   - a script with a missing or non-executable #! interpreter, a CRLF #!
#     line, a directory, a file without exec permission, a script found on
#     PATH, an ELF program whose loader is missing: each named as a shell
#     does, exit 127 or 126.
# No sleeps as speed assumptions: markers are polled with generous caps.
set -u
CNNTOP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # the cases below cd
fails=0
checks=0
skips=0
tmp=$(mktemp -d)
# The processes the cases below leave behind loop while $tmp/keep exists.
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/keep"

fail() {
    echo "FAIL: $*" >&2
    for f in out err; do
        [ -f "$tmp/$f" ] && sed "s/^/  $f: /" "$tmp/$f" >&2
    done
    fails=$((fails + 1))
}
skip() {
    echo "SKIP: $*" >&2
    skips=$((skips + 1))
}
# wait_file FILE: polls for it, 60 s at most (a loaded machine).
wait_file() {
    n=0
    while [ ! -e "$1" ] && [ $n -lt 600 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    [ -e "$1" ]
}
# has FILE PATTERN WHAT: a line of FILE matches PATTERN (grep -E).
has() {
    checks=$((checks + 1))
    grep -Eq -- "$2" "$1" || fail "$3: no /$2/ in $1"
}
hasnt() {
    checks=$((checks + 1))
    ! grep -Eq -- "$2" "$1" || fail "$3: /$2/ in $1"
}
rc_is() { # rc_is GOT WANT WHAT
    checks=$((checks + 1))
    [ "$1" -eq "$2" ] || fail "$3: exit $1, want $2"
}

if ! env --ignore-signal=HUP --block-signal=USR2 true 2>/dev/null; then
    echo "test_exec_signals: skipped: env has no --ignore-signal (coreutils 8.31)"
    exit 77
fi

# ---- 1. signals ignored at start stay ignored ----

# The command's ignored and blocked signals are those it gets without cnntop.
# Signals 32 and 33 aside: glibc keeps them for itself (thread cancellation,
# set*id across threads), refuses sigaction() on them and installs its own
# handler for 33 when a process starts its first thread -- in cnntop that
# is OpenBLAS's constructor, before main -- so no threaded program can pass
# on a launcher's SIG_IGN for them (a CI launcher that ignores them exists).
# sig_masked LINE: the line's hex mask without bits 31 and 32, in decimal.
sig_masked() {
    echo $(( 0x${1##*[	 ]} & ~0x180000000 ))
}
IGN=HUP,INT,QUIT,TERM,PIPE,XFSZ,USR1,USR2,ALRM,XCPU
for how in "--ignore-signal=HUP,INT" "--ignore-signal=$IGN" "--block-signal=USR1,TERM" \
    "--ignore-signal=QUIT --block-signal=INT" ""; do
    # shellcheck disable=SC2086 # $how is split on purpose
    env $how grep -E '^Sig(Ign|Blk)' /proc/self/status >"$tmp/want"
    # shellcheck disable=SC2086
    env $how "$CNNTOP" exec --no-hook --no-dashboard -- grep -E '^Sig(Ign|Blk)' /proc/self/status \
        >"$tmp/out" 2>"$tmp/err"
    rc_is $? 0 "env $how exec -- grep"
    for f in SigIgn SigBlk; do
        checks=$((checks + 1))
        want=$(grep "^$f:" "$tmp/want")
        got=$(grep "^$f:" "$tmp/out")
        [ -n "$want" ] && [ -n "$got" ] &&
            [ "$(sig_masked "$want")" = "$(sig_masked "$got")" ] ||
            fail "env $how: the command's $f: '$got', want '$want' (signals 32, 33 aside)"
    done
done
# Through sweep --cmd (/bin/sh -c, the grid's runs) as well, and cnntop's
# own dispositions while it runs the command: SIGHUP ignored, not caught.
env --ignore-signal=HUP "$CNNTOP" sweep --cmd \
    "grep -E '^Sig(Ign|Cgt)' /proc/self/status /proc/\$PPID/status >$tmp/sweep{batch}" \
    --batch 16 --no-hook >/dev/null 2>"$tmp/err"
rc_is $? 0 "sweep --cmd with SIGHUP ignored"
checks=$((checks + 1))
if [ -f "$tmp/sweep16" ]; then
    # SigIgn's and SigCgt's last hex digit: SIGHUP is bit 0.
    ign=$(sed -n 's|^/proc/self/status:SigIgn:\t.*\(.\)$|\1|p' "$tmp/sweep16")
    pign=$(sed -n 's|^/proc/[0-9]*/status:SigIgn:\t.*\(.\)$|\1|p' "$tmp/sweep16")
    pcgt=$(sed -n 's|^/proc/[0-9]*/status:SigCgt:\t.*\(.\)$|\1|p' "$tmp/sweep16")
    case "$ign$pign" in
    [13579bdf][13579bdf]) ;;
    *) fail "sweep --cmd: SIGHUP not ignored in the command ($ign) or cnntop ($pign)" ;;
    esac
    case "$pcgt" in
    [13579bdf]) fail "sweep --cmd: cnntop catches SIGHUP ($pcgt)" ;;
    esac
else
    fail "sweep --cmd wrote no $tmp/sweep16"
fi

# kill -SIG cnntop, started ignoring SIG: cnntop goes on, the command (a
# Python script that catches SIG, as a program may) never gets it, and
# the status is the command's.  The signal is sent before the command is
# let go ($tmp/go), so a cnntop that died of it or passed it on is seen.
PY=$(command -v python3 || true)
for sig in HUP QUIT TERM USR1 INT; do
    [ -n "$PY" ] || { skip "kill -$sig: no python3"; break; }
    rm -f "$tmp/started" "$tmp/go"
    env --ignore-signal=$sig "$CNNTOP" exec --no-hook --no-dashboard -- "$PY" -c '
import os, signal, sys, time
signal.signal(signal.SIG'$sig', lambda *a: print("got-'$sig'", flush=True))
open(sys.argv[1], "w").close()
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
sys.exit(5)' "$tmp/started" "$tmp/go" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    wait_file "$tmp/started" || fail "kill -$sig: the command never started"
    kill -$sig $pid
    touch "$tmp/go"
    wait $pid
    rc_is $? 5 "ignoring $sig, kill -$sig cnntop"
    hasnt "$tmp/out" "^got-$sig\$" "ignoring $sig, kill -$sig cnntop: passed on"
    has "$tmp/out" "^  Exit: +status 5$" "ignoring $sig, kill -$sig cnntop: the summary"
done

# run: a SIGHUP it was started ignoring does not stop it (the first stop
# signal would be the exit status: 129), a SIGTERM after it does (143).
D=$tmp/data
python3 - "$D" <<'EOF' || fail "cannot write the data"
import os, struct, sys
d = sys.argv[1]
os.makedirs(d)
def idx(dims, data):
    return bytes([0, 0, 8, len(dims)]) + b"".join(struct.pack(">I", x) for x in dims) + data
for name, n in (("train", 512), ("t10k", 16)):
    with open(os.path.join(d, name + "-images-idx3-ubyte"), "wb") as f:
        f.write(idx([n, 28, 28], bytes((i * 13) % 251 for i in range(n * 784))))
    with open(os.path.join(d, name + "-labels-idx1-ubyte"), "wb") as f:
        f.write(idx([n], bytes(i % 10 for i in range(n))))
EOF
env --ignore-signal=HUP "$CNNTOP" run --data "$D" --batch 16 --steps 1000000 --test-limit 16 \
    >"$tmp/out" 2>"$tmp/err" &
pid=$!
n=0
while ! grep -q "step 1/" "$tmp/err" 2>/dev/null && [ $n -lt 600 ]; do
    sleep 0.1
    n=$((n + 1))
done
checks=$((checks + 1))
grep -q '^SigIgn:.*[13579bdf]$' /proc/$pid/status 2>/dev/null ||
    fail "run: SIGHUP not ignored in cnntop: $(grep SigIgn /proc/$pid/status 2>&1)"
kill -HUP $pid
kill -TERM $pid
wait $pid
rc_is $? 143 "run ignoring SIGHUP: kill -HUP, then -TERM"

# ---- 2. headless: SIGTERM passed on, the summary, the command's status ----

for how in --no-dashboard ""; do
    rm -f "$tmp/started"
    "$CNNTOP" exec --no-hook $how -- sh -c "trap 'echo got-term; exit 7' TERM; echo line-one;
        touch $tmp/started; while :; do sleep 0.1; done" </dev/null >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    wait_file "$tmp/started" || fail "exec $how: the command never started"
    kill -TERM $pid
    wait $pid
    rc_is $? 7 "exec $how, kill -TERM cnntop"
    has "$tmp/out" "^got-term$" "exec $how, kill -TERM: passed on"
    has "$tmp/out" "^  Exit: +status 7$" "exec $how, kill -TERM: the summary"
done

# ---- 4. a reader that goes away ----

# pipe_case WANT WHAT SH-PIPELINE: the pipeline ends (120 s cap), cnntop's
# status WANT (written to $tmp/rc by the pipeline).
pipe_case() {
    rm -f "$tmp/rc"
    timeout 120 sh -c "$3" >/dev/null 2>&1
    checks=$((checks + 1))
    if [ ! -f "$tmp/rc" ]; then
        fail "$2: never ended"
    else
        rc_is "$(cat "$tmp/rc")" "$1" "$2"
    fi
}
X="'$CNNTOP' exec --no-hook --no-dashboard"
pipe_case 141 "exec --progress x -- yes | head -c 10" \
    "{ $X --progress x -- yes 2>/dev/null; echo \$? >$tmp/rc; } | head -c 10"
pipe_case 141 "exec -- yes | head -c 10" \
    "{ $X -- yes 2>/dev/null; echo \$? >$tmp/rc; } | head -c 10"
pipe_case 141 "exec --progress x -- sh -c 'yes >&2' 2>&1 >/dev/null | head -c 10" \
    "{ $X --progress x -- sh -c 'yes >&2' 2>&1 >/dev/null; echo \$? >$tmp/rc; } | head -c 10"
# SIGPIPE ignored from the start: the command's own write error, as
# without cnntop (yes: "Broken pipe", 1).
rm -f "$tmp/rc"
{ env --ignore-signal=PIPE yes 2>/dev/null; echo $? >"$tmp/rc"; } | head -c 10 >/dev/null
want=$(cat "$tmp/rc")
pipe_case "$want" "ignoring SIGPIPE, exec --progress x -- yes | head -c 10" \
    "{ env --ignore-signal=PIPE $X --progress x -- yes 2>/dev/null; echo \$? >$tmp/rc; } |
     head -c 10"

# ---- 5. output written after the command exited ----

# A left-behind process writes once the command has gone (reaped: kill -0
# fails): the line comes through, before the summary, and cnntop says it
# read on.
late="(while kill -0 \$\$ 2>/dev/null; do sleep 0.05; done; echo late-line) & echo early-line"
timeout 120 "$CNNTOP" exec --no-hook --progress never -- sh -c "$late" >"$tmp/out" 2>"$tmp/err"
rc_is $? 0 "a late line"
has "$tmp/out" "^late-line$" "a late line"
checks=$((checks + 1))
[ "$(grep -n -e '^late-line$' -e '^ Performance' "$tmp/out" | cut -d: -f2 | head -1)" = late-line ] ||
    fail "a late line: not before the summary"
has "$tmp/err" "^cnntop: exec: output still open after the command exited; read for at most [0-9]+ more s$" \
    "a late line: said"
hasnt "$tmp/err" "stopped reading" "a late line: read whole"
# Its stderr only, the same.
timeout 120 "$CNNTOP" exec --no-hook --progress never -- sh -c \
    "(while kill -0 \$\$ 2>/dev/null; do sleep 0.05; done; echo late-err >&2) >/dev/null &" \
    >"$tmp/out" 2>"$tmp/err"
has "$tmp/err" "^late-err$" "a late line on stderr"
# One that never closes: given up within the bound (the cap is far above
# it), said, the command's status kept.
timeout 120 "$CNNTOP" exec --no-hook --progress never -- sh -c \
    "while [ -e $tmp/keep ]; do sleep 0.1; done & echo hi; exit 4" >"$tmp/out" 2>"$tmp/err"
rc_is $? 4 "a process that keeps the output open"
has "$tmp/out" "^hi$" "a process that keeps the output open: the output"
has "$tmp/err" "^cnntop: exec: stopped reading the output: a process the command left still holds it open$" \
    "a process that keeps the output open: said"
has "$tmp/out" "^  Exit: +status 4$" "a process that keeps the output open: the summary"
# Without --progress nothing is piped: nothing to wait for, nothing said.
timeout 120 "$CNNTOP" exec --no-hook -- sh -c \
    "while [ -e $tmp/keep ]; do sleep 0.1; done >/dev/null & echo hi" >"$tmp/out" 2>"$tmp/err"
hasnt "$tmp/err" "output still open" "no --progress: no drain"

# ---- 15. a command that cannot be exec'ed ----

S=$tmp/scripts
mkdir -p "$S/adir"
printf '#!/nonexistent/interp\necho hi\n' >"$S/bad.sh"
printf '#!/bin/sh\r\necho hi\n' >"$S/crlf.sh"
printf 'echo hi\n' >"$S/interp"
printf '#!%s\necho hi\n' "$S/interp" >"$S/noexec-interp.sh"
printf '#!/bin/sh\necho hi\n' >"$S/noperm.sh"
chmod +x "$S/bad.sh" "$S/crlf.sh" "$S/noexec-interp.sh"
chmod -x "$S/interp" "$S/noperm.sh"
# exec_case CODE MESSAGE-ERE ARGS...: cnntop exec ARGS: the code, the one line.
exec_case() {
    code=$1 msg=$2
    shift 2
    "$CNNTOP" exec --no-hook --no-dashboard -- "$@" >"$tmp/out" 2>"$tmp/err"
    rc_is $? "$code" "exec -- $*"
    has "$tmp/err" "^cnntop: exec: $msg\$" "exec -- $*"
    checks=$((checks + 1))
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "exec -- $*: not one line"
}
cd "$S" || exit 1
exec_case 127 "\./bad\.sh: bad interpreter /nonexistent/interp: No such file or directory" ./bad.sh
exec_case 127 "\./crlf\.sh: bad interpreter /bin/sh\\\\r \(the #! line ends in a carriage return: DOS line endings\): No such file or directory" ./crlf.sh
exec_case 126 "\./noexec-interp\.sh: bad interpreter $S/interp: Permission denied" ./noexec-interp.sh
exec_case 126 "\./adir: Is a directory" ./adir
exec_case 126 "\./noperm\.sh: Permission denied" ./noperm.sh
exec_case 127 "nosuchcommand-cnntop: No such file or directory" nosuchcommand-cnntop
path=$PATH
PATH=$S:$PATH
exec_case 127 "bad\.sh \($S/bad\.sh\): bad interpreter /nonexistent/interp: No such file or directory" bad.sh
PATH=$path
cd / || exit 1
# An ELF program whose loader (PT_INTERP) is missing: /bin/true's, renamed.
TRUE=/bin/true
[ -f $TRUE ] || TRUE=/usr/bin/true
if python3 - "$TRUE" "$S/noloader" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
if b[:4] != b"\x7fELF" or b[4] != 2:
    sys.exit(1)
phoff, = struct.unpack_from("<Q", b, 32)
phentsize, phnum = struct.unpack_from("<HH", b, 54)
for i in range(phnum):
    p = phoff + i * phentsize
    if struct.unpack_from("<I", b, p)[0] == 3:  # PT_INTERP
        off, = struct.unpack_from("<Q", b, p + 8)
        size, = struct.unpack_from("<Q", b, p + 32)
        new = b"/nonexistent/ld.so"
        if len(new) + 1 > size:
            sys.exit(1)
        b[off:off + size] = new + b"\0" * (size - len(new))
        open(sys.argv[2], "wb").write(b)
        sys.exit(0)
sys.exit(1)
EOF
then
    chmod +x "$S/noloader"
    exec_case 127 "$S/noloader: its program interpreter /nonexistent/ld\.so: No such file or directory" \
        "$S/noloader"
else
    skip "no dynamic little-endian 64-bit $TRUE to take the loader from"
fi

echo "test_exec_signals: $((checks - fails)) passed, $fails failed, $skips skipped"
[ "$fails" -eq 0 ]

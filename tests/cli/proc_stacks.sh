#!/bin/sh
# proc_stacks.sh PID...: what each process of the trees under PID is doing,
# on stderr, for a test that found a job hung: each process's command
# line, then each thread's state, CPU time (clock ticks), kernel wait
# channel and context switches; with gdb installed, each thread's native
# stack and, where gdb knows Python (python3-dbg), its Python stack.  A
# diagnosis only: it never fails the test, and a process that ends while
# it looks is passed over.
tree() { # tree PID: PID and its descendants, one a line
    echo "$1"
    for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
        tree "$c"
    done
}
for root in "$@"; do
    for p in $(tree "$root"); do
        [ -r /proc/"$p"/cmdline ] || continue
        echo "== pid $p: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | cut -c1-200)"
        for t in /proc/"$p"/task/*; do
            # comm may hold spaces, so the fields after its ')' are counted.
            st=$(sed 's/.*) //' "$t/stat" 2>/dev/null) || continue
            set -- $st
            echo "   tid ${t##*/} $(cat "$t/comm" 2>/dev/null): state $1, cpu ${12}+${13}," \
                "wchan $(cat "$t/wchan" 2>/dev/null)," \
                "$(grep ctxt_switches "$t/status" 2>/dev/null | tr -s '\t\n' '  ')"
        done
        if command -v gdb >/dev/null 2>&1; then
            timeout 60 gdb -p "$p" -batch -ex "thread apply all bt 20" \
                -ex "thread apply all py-bt" 2>&1 |
                grep -E '^Thread |^#|^  File |^    |Waiting for the GIL' | cut -c1-200 | head -300
        fi
    done
done >&2
exit 0

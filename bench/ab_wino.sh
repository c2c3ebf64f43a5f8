#!/bin/sh
# ab_wino.sh REV [BATCH] [ROUNDS] [BUILD]: the Winograd stage of revision REV
# (layer_wino.c, layer_wino_filter.c and the headers they include, as REV
# has them) against this tree's, alternated in one process by thread CPU
# time (bench/ab_wino.c says what it prints).  For a change worth a few
# percent of a part, which end to end runs (ab_layers.sh) cannot show on
# a shared machine.  The old files are compiled with the flags the build
# gave layer_wino.c (BUILD's compile_commands.json, default build) and
# linked with BUILD's engine; build it first.
set -eu
REV=${1:?usage: ab_wino.sh REV [BATCH] [ROUNDS] [BUILD]}
BATCH=${2:-64} ROUNDS=${3:-11} BUILD=${4:-build}
ROOT=$(git rev-parse --show-toplevel)
DB=$BUILD/compile_commands.json
LIB=$BUILD/src/libcnntop_engine.a
if [ ! -f "$DB" ] || [ ! -f "$LIB" ]; then
    echo "ab_wino: build first ($DB, $LIB)" >&2
    exit 1
fi
git rev-parse --verify -q "$REV^{commit}" >/dev/null || { echo "ab_wino: no revision $REV" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The old sources, and the headers of src/nn they include, as REV has them.
mkdir -p "$TMP/inc/nn"
for f in layer_wino.c layer_wino_filter.c; do
    git show "$REV:src/nn/$f" >"$TMP/old_$f"
done
sed -n 's|^#include "nn/\(.*\)"|\1|p' "$TMP"/old_*.c | sort -u | while read -r h; do
    git show "$REV:src/nn/$h" >"$TMP/inc/nn/$h" 2>/dev/null || true
done

# The flags of layer_wino.c in this build, less its output and input.
FLAGS=$(sed -n 's|.*"command": "\([^"]*src/nn/layer_wino\.c\)".*|\1|p' "$DB" | head -1 |
    sed 's| -o [^ ]*| |; s| -c [^ ]*$||; s|^[^ ]*||')
[ -n "$FLAGS" ] || { echo "ab_wino: no layer_wino.c in $DB" >&2; exit 1; }
RENAME=""
for fn in wino_tiles wino_shape_init wino_transform_flops wino_scratch_floats wino_forward \
    wino_backward wino_filter wino_filter_grad wino_filter_grad_flops wino_filter_grad_column \
    wino_filter_grad_column_flops; do
    RENAME="$RENAME -D$fn=old_$fn"
done
for f in layer_wino layer_wino_filter; do
    # shellcheck disable=SC2086
    cc -I"$TMP/inc" $FLAGS $RENAME -Wno-missing-prototypes -c "$TMP/old_$f.c" -o "$TMP/old_$f.o"
done
# shellcheck disable=SC2086
cc $FLAGS -c "$ROOT/bench/ab_wino.c" -o "$TMP/ab_wino.o"
cc "$TMP/ab_wino.o" "$TMP/old_layer_wino.o" "$TMP/old_layer_wino_filter.o" "$LIB" \
    -lopenblas -lm -lpthread -o "$TMP/ab_wino"
echo "old: $(git log -1 --format='%h %s' "$REV" | cut -c1-70)"
"$TMP/ab_wino" "$BATCH" "$ROUNDS"

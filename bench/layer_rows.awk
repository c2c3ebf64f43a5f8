# layer_rows.awk: a `cnntop run` summary as rows "TAG NAME MS" for the
# bench scripts that compare runs part by part (ab_layers.sh, scaling.sh):
# each row of its per-layer table (spaces in a name as _), then "TAG STEP
# MS" (training wall time / steps), and with -v mfu=1 "TAG MFU PERCENT".
#   awk -v tag=TAG [-v mfu=1] -f bench/layer_rows.awk SUMMARY
/Training wall time/ { wall = $4 }
/Steps, images/      { steps = $3 }
/Against the peak:/  { for (i = 1; i <= NF; i++) if ($i == "MFU") pct = $(i + 1) }
/^  Layer /          { on = 1; next }
on && NF == 0        { on = 0 }
on && /^  \(/        { on = 0 }
on {    # the name, then ms/step: the first field that is a number
    name = $1
    for (i = 2; i <= NF && $i !~ /^[0-9]+[.][0-9]+$/; i++) name = name "_" $i
    if (i <= NF) print tag, name, $i
}
END {
    print tag, "STEP", wall * 1000 / steps
    if (mfu) { sub(/%/, "", pct); print tag, "MFU", pct }
}

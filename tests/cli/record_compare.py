"""record_compare.py RUN TUI VARIES [dashboard]: two run records (JSON),
`cnntop run --export`'s and the dashboard's, compared field by field:
every field present in one is in the other with the same type, and every
field that does not depend on timing is equal; the members VARIES lists
(test_record_fields --varies) for presence and type only.  With
`dashboard`, the in-process dashboard's export is also checked for what it
once lacked.  Used by test_tui_export.sh and tests/tui/ranks.sh."""
import json, re, sys

# The extra checks of the dashboard's in-process export (its own builder).
DASHBOARD = sys.argv[4:5] == ["dashboard"]

run, tui = (json.load(open(p)) for p in sys.argv[1:3])
# Members whose values depend on timing or on the command line (paths
# such as "train.wall", "samples[].t"): same presence and type, any value.
VARY = set(open(sys.argv[3]).read().split())
# Lists whose length depends on timing: each element's keys and types,
# and the last element (shape()).
BY_SHAPE = {"samples"}
bad = []

def kind(v):
    return "null" if v is None else "number" if isinstance(v, (int, float)) and not \
        isinstance(v, bool) else type(v).__name__

def varies(path):
    return re.sub(r"\[\d+\]", "[]", path).lstrip(".") in VARY

def cmp(a, b, path, vary):
    if kind(a) != kind(b):
        bad.append("%s: %s in run, %s in the dashboard's" % (path, kind(a), kind(b)))
    elif isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                bad.append("%s.%s: only in %s" % (path, k, "run" if k in a else "the dashboard's"))
            elif k in BY_SHAPE:
                shape(a[k], b[k], path + "." + k)
            else:
                cmp(a[k], b[k], path + "." + k, vary or varies(path + "." + k))
    elif isinstance(a, list):
        if len(a) != len(b) and not vary:
            bad.append("%s: %d entries in run, %d in the dashboard's" % (path, len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b)):
            cmp(x, y, "%s[%d]" % (path, i), vary)
    elif not vary and a != b:
        bad.append("%s: %r in run, %r in the dashboard's" % (path, a, b))

def types(lst):
    out = {}
    for e in lst:
        for k, v in e.items():
            out.setdefault(k, set()).add(kind(v))
    return out

# How many 0.1 s sampler periods fit in a run depends on the machine's
# load; what does not: each record has a sample (every run closes with
# one), the same fields, and a last sample at the run's end, whose
# cumulative figures (steps, images, the epoch, the settings) are the
# run's in both.
FINAL = ("step", "images", "epoch", "batch", "workers", "segment")

def shape(a, b, path):
    if not a or not b:
        bad.append("%s: %d entries in run, %d in the dashboard's" % (path, len(a), len(b)))
        return
    ta, tb = types(a), types(b)
    # A figure may be null in some samples (ipc in an interval the counters
    # missed) and the records hold different samples: a type that is there
    # in both must be the same.
    known = lambda k, t: t.get(k, set()) - {"null"}
    if set(ta) != set(tb) or any(known(k, ta) and known(k, tb) and known(k, ta) != known(k, tb)
                                 for k in ta):
        bad.append("%s: fields and types %s in run, %s in the dashboard's" % (path, ta, tb))
    for k in FINAL:
        if a[-1].get(k) != b[-1].get(k):
            bad.append("%s[-1].%s: %r in run, %r in the dashboard's" %
                       (path, k, a[-1].get(k), b[-1].get(k)))
    for rec, who in ((run, "run"), (tui, "the dashboard's")):
        last = rec["samples"][-1]
        if (last["step"], last["images"]) != (rec["train"]["steps"], rec["train"]["images"]):
            bad.append("%s[-1]: step %r images %r in %s, the run trained %r steps of %r images" %
                       (path, last["step"], last["images"], who, rec["train"]["steps"],
                        rec["train"]["images"]))

cmp(run, tui, "", False)
# What the dashboard's export lacked before it shared the builder.
if DASHBOARD:
    for p, v in (("epochs", tui["epochs"]), ("evals", tui["evals"]), ("counters", tui["counters"])):
        if not v:
            bad.append("%s: empty in the dashboard's export" % p)
    for k in ("command", "loader_samples_per_s"):
        if tui[k] is None:
            bad.append("%s: null in the dashboard's export" % k)
    if tui["machine"]["peak_gflops"] is None:
        bad.append("machine.peak_gflops: null in the dashboard's export")
if any(s["epoch"] is None or s["epoch"] < 0 for s in tui["samples"]):
    bad.append("samples[].epoch: unknown in the dashboard's export")
for msg in bad:
    print("FAIL: " + msg, file=sys.stderr)
print("record_compare: compared %d top-level fields, %d differences" % (len(run), len(bad)))
sys.exit(1 if bad else 0)

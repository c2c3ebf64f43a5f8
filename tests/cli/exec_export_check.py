#!/usr/bin/env python3
"""exec_export_check.py JSON CSV MD [--loose]: the CSV and Markdown exports
of an exec record (cnntop exec) or of a sweep --cmd say what its JSON export
says.  Checked, for every record: each exec member, the run members an exec
record fills (threads_used, peak_rss_kib, run_queue_wait, exit_code), each
counter per role (a number when counted, "n/a" with its reason when not,
never 0), hyperfine's figures over the runs; in a sweep's Markdown the grid
row of each configuration (mean ± σ) and the recommendation (the fastest
by images/s, or by wall time when some configuration has none).  With
--loose (three exports of three runs of one command) only what cannot
differ between runs is compared, and every figure must be there (or
unknown) exactly where the JSON has it (or null).  Exits 1 naming the first
difference.
"""
import csv
import json
import re
import statistics
import sys

RUN_KEYS = ["threads_used", "peak_rss_kib", "run_queue_wait", "exit_code"]
VARIES = {"wall", "images_per_s", "data_wait_share", "busy_threads", "peak_rss_kib", "cpu",
          "minflt", "majflt", "images", "window", "wait", "step_s", "first_wait", "dropped",
          "run_queue_wait", "command"}


def fail(msg):
    print(f"exec_export_check: {msg}", file=sys.stderr)
    sys.exit(1)


def same(cell, value, what, loose):
    """A CSV or Markdown cell against the JSON's value; "" and "n/a" are
    null.  loose: a figure of another run, which may be known in one run
    and not in the other (run-queue wait needs 0.1 s of thread time): only
    its form is checked."""
    if loose and cell in ("", "n/a"):
        return
    if value is None and not loose:
        if cell not in ("", "n/a"):
            fail(f"{what}: {cell!r} where the JSON has null")
        return
    if cell in ("", "n/a"):
        fail(f"{what}: unknown where the JSON has {value!r}")
    if isinstance(value, str) or (loose and value is None and not cell[:1].isdigit()):
        if not loose and cell != value:
            fail(f"{what}: {cell!r}, the JSON {value!r}")
        return
    try:
        x = float(cell)
    except ValueError:
        fail(f"{what}: {cell!r} is no number (the JSON has {value!r})")
    if not loose and x != float(value):
        fail(f"{what}: {cell!r}, the JSON {value!r}")


def counter_col(c):
    return f"{c['role']}.{c['name']}" + (f" [{c['unit']}]" if c["unit"] else "")


def check_csv(path, runs, results, loose):
    rows = list(csv.DictReader(open(path, newline="")))
    if len(rows) != len(runs):
        fail(f"{path}: {len(rows)} rows for {len(runs)} records")
    for i, (row, r) in enumerate(zip(rows, runs)):
        at = f"{path} row {i + 1}"
        for k, v in r["exec"].items():
            same(row[f"exec.{k}"], v, f"{at}: exec.{k}", loose and k in VARIES)
        for k in RUN_KEYS:
            same(row[k], r[k], f"{at}: {k}", loose and k in VARIES)
        for k in ("mean", "stddev", "median", "min", "max"):
            same(row[k], results[i][k], f"{at}: {k}", loose)
        for c in r["exec_counters"]:
            cell = row[counter_col(c)]
            if c["status"] == "ok":
                same(cell, c["value"], f"{at}: {counter_col(c)}", loose)
            elif cell != "n/a" or f"{c['name']}: {c['reason']}" not in row["counters_na"]:
                fail(f"{at}: {counter_col(c)} not counted, but {cell!r} "
                     f"(counters_na {row['counters_na']!r})")
        if i == 0 and row["speedup"] != "1":
            fail(f"{at}: the first record's speedup is {row['speedup']!r}, not 1")


def md_value(text, key, path):
    m = re.search(rf"^\| {re.escape(key)} \| (.*?) \| ", text, re.M)
    if not m:
        fail(f"{path}: no row for {key}")
    return m.group(1)


def md_counters_one(text, r, path, loose):
    for c in r["exec_counters"]:
        m = re.search(rf"^\| {c['role']} \| {re.escape(c['name'])} \| (.*?) \|", text, re.M)
        if not m:
            fail(f"{path}: no counter row for {c['role']} {c['name']}")
        if c["status"] == "ok":
            same(m.group(1), c["value"], f"{path}: {c['name']}", loose)
        elif m.group(1) != f"n/a: {c['reason']}":
            fail(f"{path}: {c['name']} not counted, but {m.group(1)!r}")


def fastest(runs, results):
    """The label of the record sweep recommends (record_rank's rule)."""
    ips = [statistics.mean(x["images_per_s"] for x in r["repeats"]) if r["repeats"] and
           all(x["images_per_s"] is not None for x in r["repeats"]) else None for r in runs]
    by_time = any(v is None for v in ips)
    ok = [i for i, r in enumerate(runs) if not r["error"] and not r["interrupted"]]
    key = (lambda i: results[i]["mean"]) if by_time else (lambda i: -ips[i])
    return runs[min(ok, key=key)]["label"] if ok else None


def check_md_sweep(path, text, runs, results, loose):
    for i, r in enumerate(runs):
        m = re.search(rf"^\| {re.escape(r['label'])} \| `.*?` \| (.*?) \|(.*)$", text, re.M)
        if not m:
            fail(f"{path}: no grid row for {r['label']}")
        mean, sd = results[i]["mean"], results[i]["stddev"]
        want = f"{mean:.3f} ± {sd:.3f}" if sd is not None else f"{mean:.3f}"
        if not loose and m.group(1) != want:
            fail(f"{path}: {r['label']}: time {m.group(1)!r}, the JSON {want!r}")
        if i == 0 and not m.group(2).rstrip().endswith("| 1 (baseline) |"):
            fail(f"{path}: the first configuration is not the baseline")
        for c in r["exec_counters"]:
            m = re.search(rf"^\| {c['role']} \| {re.escape(c['name'])} \| .*?\|((?: [^|]* \|)+)$",
                          text, re.M)
            if not m:
                fail(f"{path}: no counter row for {c['role']} {c['name']}")
            cell = m.group(1).split("|")[i].strip()
            if c["status"] == "ok":
                same(cell, c["value"], f"{path}: {r['label']}: {c['name']}", loose)
            elif not cell.startswith("n/a"):
                fail(f"{path}: {r['label']}: {c['name']} not counted, but {cell!r}")
    best = fastest(runs, results)
    if not loose and best and f"\nRecommended: {best}.\n" not in text:
        fail(f"{path}: does not recommend {best}")


def main():
    js, cs, md = sys.argv[1:4]
    loose = "--loose" in sys.argv[4:]
    d = json.load(open(js))
    runs = d["runs"] if d["schema"] == "cnntop.sweep/1" else [d]
    check_csv(cs, runs, d["results"], loose)
    text = open(md).read()
    if d["schema"] == "cnntop.sweep/1":
        check_md_sweep(md, text, runs, d["results"], loose)
        return
    for k, v in runs[0]["exec"].items():
        if k != "command":
            same(md_value(text, k, md), v, f"{md}: {k}", loose and k in VARIES)
    for k in RUN_KEYS:
        same(md_value(text, k, md), runs[0][k], f"{md}: {k}", loose and k in VARIES)
    md_counters_one(text, runs[0], md, loose)


if __name__ == "__main__":
    main()

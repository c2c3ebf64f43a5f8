#!/usr/bin/env python3
"""layers.py: the tree's layer rule, checked (ctest test_layering, .ci/lint).

The folders are the layers.  A file may include headers of its own layer
and of the layers below it, never above; the engine (src/) never includes
the front ends (ui/) or curses, and never prints or exits.  Public headers
(src/include/cnntop/) belong to the layer that implements them.  Run from
anywhere: `python3 scripts/layers.py [ROOT]`; prints one line per breach
and exits 1, or exits 0 silently.

It also finds circles of calls between the files of one folder: a.c
calls a function defined in b.c, and b.c (directly or through other files
of the folder) calls back into a.c.  Files of one folder form a stack of
their own, as the folders do; a circle means two files are one concept
split in two, or a branch that belongs in one place is made in several.
A symbol-to-file map is enough: each external function definition in a
.c file names its file, and each call of such a name in another .c file
of the same folder is an edge.
"""
import os
import re
import sys

# The engine's layers, lowest first (docs/ARCHITECTURE.md says what each holds).
SRC_LAYERS = ["util", "prof", "nn", "data", "dist", "calibrate", "engine", "record", "exec"]
# The front ends', above every engine layer; ui/main.c is the top.
UI_LAYERS = ["common", "cmd", "tui"]

# Each public header and the layer whose code it declares.
PUBLIC = {
    "err.h": "util", "limits.h": "util", "fileio.h": "util", "json.h": "util",
    "stats.h": "util", "version.h": "util", "pattern.h": "util",
    "counters.h": "prof", "proctree.h": "prof", "hookfeed.h": "prof",
    "machine.h": "nn",
    "data.h": "data",
    "dist.h": "dist",
    "calibrate.h": "calibrate",
    "engine.h": "engine", "verdict.h": "engine", "settings.h": "engine",
    "record.h": "record", "figures.h": "record", "record_train.h": "record",
    "exec.h": "exec",
}

# What the engine never calls: it returns errors as values (engine.h).
# assert() stays for invariants of the engine's own code.
NO_PRINT = re.compile(r"\b(printf|fprintf|vfprintf|puts|fputs|putchar|perror|abort|exit|_exit)\s*\(")
# The files whose code runs in another process too: the exec session's and
# the MPI launcher's forked child ends with _exit() when it cannot exec (its own exit code, the
# shell's 126 or 127, never the engine's process ending).
CHILD_EXIT = {"src/exec/session.c", "src/dist/launch.c"}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)


def rank(layer):
    order = SRC_LAYERS + UI_LAYERS + ["main"]
    return order.index(layer)


def layer_of(root, path):
    """The layer of a file under src/ or ui/, or None."""
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == "src" and len(rel) >= 3 and rel[1] == "include":
        return PUBLIC.get(rel[-1].replace(".h.in", ".h"))
    if rel[0] == "src" and len(rel) == 3 and rel[1] in SRC_LAYERS:
        return rel[1]
    if rel[0] == "ui" and len(rel) == 3 and rel[1] in UI_LAYERS:
        return rel[1]
    if rel[0] == "ui" and len(rel) == 2 and rel[1] == "main.c":
        return "main"
    return None


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


# A function definition at the top level: a type, the name, its parameters,
# then the body's brace (on the same line or the next).
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\([^;{]*?\)\s*\{", re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def call_circles(root):
    """One line per circle of calls between .c files of one folder."""
    bad = []
    for top in ("src", "ui"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            sources = sorted(f for f in files if f.endswith(".c"))
            code = {}
            owner = {}
            for fn in sources:
                code[fn] = strip_comments(open(os.path.join(dirpath, fn), encoding="utf-8").read())
                for m in DEFINITION.finditer(code[fn]):
                    owner.setdefault(m.group(1), fn)
            edges = {fn: {} for fn in sources}
            for fn in sources:
                for m in CALL.finditer(code[fn]):
                    them = owner.get(m.group(1))
                    if them and them != fn:
                        edges[fn].setdefault(them, m.group(1))
            bad += circles_in(os.path.relpath(dirpath, root), edges)
    return bad


def circles_in(folder, edges):
    """The strongly connected groups of more than one file (Tarjan's)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    lines = []
    for group in out:
        calls = ", ".join(f"{a} -> {b} ({edges[a][b]})" for a in group for b in sorted(edges[a])
                          if b in group)
        lines.append(f"{folder}: a circle of calls between {' '.join(group)}: {calls}")
    return lines


def check(root):
    bad = []
    for top in ("src", "ui"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for fn in sorted(files):
                if not fn.endswith((".c", ".h", ".h.in")):
                    continue
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, root)
                me = layer_of(root, path)
                if me is None:
                    bad.append(f"{rel}: not in a layer folder (scripts/layers.py lists them)")
                    continue
                text = open(path, encoding="utf-8").read()
                for m in INCLUDE.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    inc = m.group(2)
                    where = f"{rel}:{line}"
                    if m.group(1) == "<":
                        if top == "src" and re.match(r"(n?curses|ncursesw/)", inc):
                            bad.append(f"{where}: the engine includes curses <{inc}>")
                        continue
                    parts = inc.split("/")
                    if len(parts) != 2:
                        bad.append(f"{where}: \"{inc}\" is not LAYER/NAME.h")
                        continue
                    folder, name = parts
                    if folder == "cnntop":
                        them = PUBLIC.get(name)
                        if them is None:
                            bad.append(f"{where}: public header {inc} has no layer in scripts/layers.py")
                            continue
                    elif top == "src" and folder in SRC_LAYERS:
                        them = folder
                    elif top == "ui" and folder in UI_LAYERS:
                        them = folder
                    else:
                        bad.append(f"{where}: \"{inc}\" is not a header this tree may include")
                        continue
                    if them == me:
                        continue
                    if rank(them) > rank(me):
                        bad.append(f"{where}: {me} includes {inc} of the higher layer {them}")
                if top == "src":
                    code = strip_comments(text)
                    for m in NO_PRINT.finditer(code):
                        if m.group(1) == "_exit" and rel.replace(os.sep, "/") in CHILD_EXIT:
                            continue
                        line = code.count("\n", 0, m.start()) + 1
                        bad.append(f"{rel}:{line}: the engine calls {m.group(1)}() (it returns errors, never prints or exits)")
    return bad + call_circles(root)


def self_test():
    """Builds a small tree with a circle of calls and one without, and
    checks that only the first is found: `layers.py --self-test`."""
    import tempfile
    files = {
        "src/util/a.c": "int a_fn(int x)\n{\n    return b_fn(x) + 1;\n}\n",
        "src/util/b.c": "static int helper(void) { return 1; }\nint b_fn(int x)\n{\n    return x ? a_fn(x - 1) : helper();\n}\n",
        "src/prof/c.c": "int c_fn(void)\n{\n    return d_fn();\n}\n",
        "src/prof/d.c": "int d_fn(void)\n{\n    return 0;\n}\n",
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        found = call_circles(root)
    want = ["src/util: a circle of calls between a.c b.c: a.c -> b.c (b_fn), b.c -> a.c (a_fn)"]
    if found != want:
        print(f"layers: self-test: found {found}, want {want}")
        return 1
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    bad = check(os.path.abspath(root))
    for b in bad:
        print(b)
    if bad:
        print(f"layers: {len(bad)} breach{'es' if len(bad) != 1 else ''} of the layer rule or circles of calls (docs/ARCHITECTURE.md)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/bin/sh
# make_corpus.sh [DIR]: writes the seed corpora of the fuzz targets into
# DIR/<target>/ (default: tests/fuzz/corpus next to this script).  The
# files are small (a few hundred bytes) and are kept in the tree; rerun
# this after changing a target's input layout.  A valid checkpoint is too
# big to keep (about 5 MB): .ci/fuzz adds one with fuzz_ckpt_seed.
#
# fuzz_idx inputs start with a mode byte (see fuzz_idx.c): 0x00 idx1,
# 0x02 idx3, 0x40 names the file .gz, 0x80 a whole data set after three
# u16 lengths.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/corpus}
mkdir -p "$out/fuzz_idx" "$out/fuzz_checkpoint" "$out/fuzz_options" "$out/fuzz_json" \
         "$out/fuzz_calibrate" "$out/fuzz_pattern"

python3 - "$out" <<'EOF'
import gzip, os, struct, sys, zlib

out = sys.argv[1]

def put(target, name, data):
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)

def idx(dims, data, magic_type=0x08):
    return bytes([0, 0, magic_type, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + data

def gz(b):
    # mtime 0 keeps the output the same from run to run.
    return gzip.compress(b, mtime=0)

img = idx([2, 4, 4], bytes(range(32)))
lab = idx([2], bytes([3, 9]))
timg = idx([1, 4, 4], bytes(range(100, 116)))
tlab = idx([1], bytes([0]))

# One file.
put("fuzz_idx", "idx3-plain", b"\x02" + img)
put("fuzz_idx", "idx1-plain", b"\x00" + lab)
put("fuzz_idx", "idx3-gzip", b"\x02" + gz(img))
put("fuzz_idx", "idx1-gzip-named", b"\x40" + gz(lab))
put("fuzz_idx", "idx2-plain", b"\x01" + idx([2, 3], bytes(6)))
put("fuzz_idx", "idx3-truncated", b"\x02" + img[:-5])
put("fuzz_idx", "idx3-trailing", b"\x02" + img + b"\x00\x01")
put("fuzz_idx", "idx3-type-float", b"\x02" + idx([1, 1, 1], bytes(4), 0x0D))
put("fuzz_idx", "idx3-huge-dims", b"\x02" + idx([0x7fffffff, 0xffffffff, 0xffffffff], b""))
put("fuzz_idx", "gzip-truncated", b"\x02" + gz(img)[:-6])

# Whole data sets: plain and gzip.
def dataset(mode, files):
    lens = b"".join(struct.pack("<H", len(f)) for f in files[:3])
    return bytes([mode]) + lens + b"".join(files)

put("fuzz_idx", "dataset-plain", dataset(0x80, [img, lab, timg, tlab]))
put("fuzz_idx", "dataset-gzip", dataset(0xC0, [gz(img), gz(lab), gz(timg), gz(tlab)]))
put("fuzz_idx", "dataset-label-10", dataset(0x80, [img, idx([2], bytes([3, 10])), timg, tlab]))
put("fuzz_idx", "dataset-count-mismatch", dataset(0x80, [img, idx([3], bytes(3)), timg, tlab]))
put("fuzz_idx", "dataset-shape-mismatch", dataset(0x80, [img, lab, idx([1, 2, 8], bytes(16)), tlab]))

# Checkpoints: headers of the version-1 layout (see checkpoint.h), cut
# before the data, so they stay small.
numel = [288, 32, 32, 32, 18432, 64, 64, 64, 73728, 128, 128, 128,
         294912, 256, 32768, 128, 1280, 10, 32, 32, 64, 64, 128, 128]
def ck_header(version=1, nt=18, nr=6, model=b"EnhancedCNN"):
    h = b"CNNTOPCK" + struct.pack("<IIII", version, nt, nr, 0)
    h += model.ljust(32, b"\0") + struct.pack("<QQQQ", 10, 1, 64, 1)
    return h + b"".join(struct.pack("<I", n) for n in numel)

h = ck_header()
put("fuzz_checkpoint", "header-only", h)
put("fuzz_checkpoint", "header-crc", h + struct.pack("<I", zlib.crc32(h)))
put("fuzz_checkpoint", "version-2", ck_header(version=2))
put("fuzz_checkpoint", "other-model", ck_header(model=b"LeNet5"))
put("fuzz_checkpoint", "magic-only", b"CNNTOPCK")
put("fuzz_checkpoint", "foreign", b"\x89PNG\r\n\x1a\n" + bytes(64))

# Command lines: NUL between words.
lines = [
    ["run", "--batch", "128", "--threads", "2", "--steps", "10"],
    ["run", "--lr=0.01", "--augment", "shift,rotate", "--seed", "18446744073709551615"],
    ["run", "--limit", "640", "--test-limit", "500", "--save", "m.ckpt", "--workers", "2"],
    ["sweep", "--batch", "32,64,128", "--workers", "0,2,4", "--budget", "60"],
    ["eval", "--load", "m.ckpt", "--test-limit", "100"],
    ["report", "a.json", "b.json"],
    ["events", "--all"],
    ["calibrate", "--recalibrate"],
    ["--no-color", "--history", "h.json", "--autostart"],
    ["run", "--runs", "5", "--warmup", "1", "--vary-seed", "--target-accuracy", "0.9"],
    ["run", "--export", "r.json", "--force", "--trace", "t.json", "-e", "+cycles"],
    ["run", "--batch", "abc"],
    ["run", "--epochs"],
]
for i, words in enumerate(lines):
    put("fuzz_options", "args-%02d" % i, b"\0".join(w.encode() for w in words))

# JSON: a run record's shape, and the corners of the grammar.
docs = [
    '{"schema": "cnntop-run", "version": 1, "config": {"batch": 64, "lr": 0.001, '
    '"seed": 18446744073709551615}, "result": {"accuracy": 0.8837, "images_per_s": 2062.3, '
    '"stopped": false, "note": null}, "epochs": [{"loss": 0.4867, "wall": 29.09}]}',
    '[1, -0, 0.5e-3, 1E+2, -9223372036854775808, 18446744073709551616, 1.7976931348623157e308]',
    '"esc \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\ud83d\\ude00 \\u0000"',
    '{"a": {"b": {"c": [[[[]]]]}}, "": "", "dup": 1, "dup": 2}',
    '  true ',
    '{"a": 1,}',
    '[01]',
    '"\udcff\udcfe"',  # not UTF-8: raw bytes ff fe
    '[' * 70 + ']' * 70,
]
for i, d in enumerate(docs):
    put("fuzz_json", "doc-%02d" % i, d.encode("utf-8", "surrogateescape"))

# Calibration cache files (see calibrate_format()).
cal = ("# cnntop calibration\ncnntop-calibration 5\ncpu_model=Intel(R) Xeon(R) Processor\n"
       "cores=2\nblas_core=SkylakeX\nthreads=2\nbatch_a=64\nmodel_gflops_a=95.300\n"
       "batch_b=512\nmodel_gflops_b=120.125\nsquare_n=2048\nsquare_threads=2\n"
       "square_gflops=180.000\nfma_avx512=403.000\nfma_avx2=205.000\nfma_sse=102.000\n"
       "fma1_avx512=201.500\nfma1_avx2=102.500\nfma1_sse=51.000\nclock_ghz=3.150\n"
       "triad_gbps=12.500\ntriad_mib=96.000\nllc_mib=32.000\n"
       "seconds=3.250\nmeasured_at=1764528000\nend\n")
put("fuzz_calibrate", "valid", cal.encode())
put("fuzz_calibrate", "version-2", cal.replace("calibration 5", "calibration 2").encode())
put("fuzz_calibrate", "no-end", cal.replace("end\n", "").encode())
put("fuzz_calibrate", "unknown-key", cal.replace("cores=2", "colour=blue").encode())
put("fuzz_calibrate", "bad-number", cal.replace("=95.300", "=9.5e1").encode())
put("fuzz_calibrate", "truncated", cal[:200].encode())

# --progress patterns: the pattern, a newline, a text (see fuzz_pattern.c).
pats = [
    (r"([0-9.]+)it/s", " 50%|#####     | 5/10 [00:01<00:01, 3.52it/s]"),
    (r"loss ([0-9.]+)", "epoch 1 loss 0.25 acc 0.9"),
    (r"^step ([0-9]+)$", "step 42"),
    (r"[[:digit:]]+(\.[[:digit:]]+)?", "v1.2.3"),
    (r"\<acc\>=([0-9]*)|x{2,3}y", "xacc=1 acc=97 xxxy"),
    (r"[^]a-c[:space:]-]+(a|b)*c$", "zz] abac"),
    (r"^(a*)*(a|b)*c$", "a" * 60 + "c"),
    (r"(a{0,30}){0,9}\b\B\`\'\w\W\s\S", "aaa b\t"),
    (r"[[=a=][.-.]]+(foo|foobar)?x", "a-foobarx"),
    (r"^(a*)*\1(a|b)*c$", "aac"),
]
for i, (p, t) in enumerate(pats):
    put("fuzz_pattern", "pat-%02d" % i, (p + "\n" + t).encode())
EOF
echo "seed corpora written to $out"

#!/usr/bin/env python3
"""tests/gpu/ncu_lines.py - Nsight Compute's stall samples by Tile source line.

profile.sh writes NAME_sass.csv (ncu's source page, one row a SASS
instruction, with its address and stall samples). The cubins name their
Tile files and lines (tilec's .loc); nvdisasm's line table maps each
instruction's offset in the kernel to them. Run it here, on the cubin that
ran there:

    python3 tests/gpu/ncu_lines.py OUT/bwd_J1_sass.csv \
        build-w/examples/jfa_fwd.d128.window.sm_90a.cubin jfa_bwd [--top 30]

Prints the lines with the most samples: their share of all samples, the two
largest stall reasons, and the line's text (looked up under the repository's
examples/ and dsl/). nvdisasm: $NVDISASM, else on PATH, else the copy that
`make deps` puts under build/cuda-pypi-tools.
"""
import argparse
import collections
import csv
import glob
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def nvdisasm():
    for c in [os.environ.get("NVDISASM"), shutil.which("nvdisasm")] + \
             sorted(glob.glob(os.path.join(ROOT, "build*/cuda-pypi-tools/nvidia/*/bin/nvdisasm"))):
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("ncu_lines: no nvdisasm (set NVDISASM)")


def line_table(cubin, kernel):
    """offset in the kernel's text -> (file, line)"""
    out = subprocess.run([nvdisasm(), "-g", "-c", cubin], capture_output=True, text=True, check=True).stdout
    table, cur, inside = {}, None, False
    for text in out.split("\n"):
        m = re.match(r"\s*//-+ \.text\.(\S+)", text)
        if m:
            inside, cur = m.group(1) == kernel, None
            continue
        if not inside:
            continue
        m = re.search(r'//## File "([^"]+)", line (\d+)', text)
        if m:
            cur = (os.path.normpath(m.group(1)), int(m.group(2)))
            continue
        m = re.search(r"/\*([0-9a-f]{4,})\*/", text)
        if m and cur:
            table[int(m.group(1), 16)] = cur
    if not table:
        sys.exit("ncu_lines: no kernel %s with line information in %s" % (kernel, cubin))
    return table


def source_text(path, line, cache={}):
    name = os.path.basename(path)
    if name not in cache:
        hits = glob.glob(os.path.join(ROOT, "examples", "**", name), recursive=True) + \
               glob.glob(os.path.join(ROOT, "dsl", "**", name), recursive=True)
        cache[name] = open(hits[0]).read().split("\n") if hits else []
    lines = cache[name]
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("cubin")
    ap.add_argument("kernel")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    rows = list(csv.reader(open(a.csv)))
    hdr_at = next(i for i, r in enumerate(rows) if "Address" in r)
    hdr, data = rows[hdr_at], [r for r in rows[hdr_at + 1:] if len(r) > 3]
    samples = hdr.index("Warp Stall Sampling (All Samples)")
    reasons = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
    table = line_table(a.cubin, a.kernel)
    base = int(data[0][0], 16)
    total = sum(float(r[samples] or 0) for r in data) or 1.0
    by_line, why = collections.Counter(), collections.defaultdict(collections.Counter)
    unmapped = 0.0
    for r in data:
        key = table.get(int(r[0], 16) - base)
        s = float(r[samples] or 0)
        if key is None:
            unmapped += s
            continue
        by_line[key] += s
        for i in reasons:
            why[key][hdr[i][6:]] += float(r[i] or 0)
    print("%d samples, %.1f%% not on a line (another cubin than the one profiled?)" % (total, 100 * unmapped / total))
    for key, s in by_line.most_common(a.top):
        top2 = ", ".join("%s %.1f" % (k, 100 * v / total) for k, v in why[key].most_common(2))
        print("%5.1f%%  %s:%d  [%s]  %s" % (100 * s / total, os.path.basename(key[0]), key[1], top2,
                                          source_text(key[0], key[1])[:80]))


if __name__ == "__main__":
    main()

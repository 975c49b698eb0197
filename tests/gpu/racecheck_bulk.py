#!/usr/bin/env python3
"""tests/gpu/racecheck_bulk.py - is every hazard in a compute-sanitizer racecheck report one that involves a
bulk copy into shared memory (`bulk_load`)? racecheck does not order a non-tensor bulk copy's writes by the
mbarrier it completes on: it flags tests/gpu/prims/bulk_ring.tile, a plain two-slot ring (each load issued after
its slot's empty mbarrier, each read after the full one; correct bit for bit, and the emulator, which does model
the order, fails it without the wait). A report whose every racing pair has a `bulk_load` line on one side is
that blindness; anything else is a race to look at.
usage: racecheck_bulk.py REPORT SRC_DIR...   (exit 0: none, or only bulk_load pairs; 1: others; 2: unreadable)"""
import os
import re
import sys

ACCESS = re.compile(r"(?:Race reported between|and) (?:Read|Write) access at \S+ in (\S+):(\d+)")


def source_line(dirs, name, line, cache={}):
    if name not in cache:
        cache[name] = None
        for d in dirs:
            for root, _, files in os.walk(d):
                if name in files:
                    with open(os.path.join(root, name), errors="replace") as f:
                        cache[name] = f.read().split("\n")
                    break
            if cache[name] is not None:
                break
    text = cache[name]
    return text[line - 1] if text and 0 < line <= len(text) else None


def main():
    if len(sys.argv) < 3:
        print(__doc__.split("\n")[-1].strip(), file=sys.stderr)
        return 2
    try:
        report = open(sys.argv[1], errors="replace").read().split("\n")
    except OSError as e:
        print(f"racecheck_bulk: {e}", file=sys.stderr)
        return 2
    dirs = sys.argv[2:]
    groups, bulk, other = [], 0, []
    for ln in report:
        m = ACCESS.search(ln)
        if not m:
            continue
        src = source_line(dirs, m.group(1), int(m.group(2)))
        is_bulk = src is not None and "bulk_load(" in src
        if "Race reported between" in ln:
            groups.append([(m.group(1), int(m.group(2)), is_bulk)])
        elif groups:
            groups[-1].append((m.group(1), int(m.group(2)), is_bulk))
    for g in groups:
        first, rest = g[0], g[1:]
        for a in rest:
            if first[2] or a[2]:
                bulk += 1
            else:
                other.append(f"{first[0]}:{first[1]} and {a[0]}:{a[1]}")
    if other:
        print(f"racecheck: {len(other)} racing pairs without a bulk copy, e.g. " + "; ".join(other[:4]))
        return 1
    print(f"racecheck: {bulk} racing pairs, each with a bulk_load on one side (racecheck does not order bulk "
          "copies by their mbarrier: tests/gpu/prims/bulk_ring.tile)" if bulk else "racecheck: no hazards")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""emu_xval.py - compare the outputs of two runs of a host program (the
GPU's and the emulator's), as written by `--dump FILE` (examples/common/
host.h: records of a line "N:NAME DTYPE COUNT" and COUNT elements' bytes).

    emu_xval.py EXAMPLE GPU.dump EMU.dump MODE

MODE: "bitwise" (every element's bits equal), a tolerance (the largest
|gpu - emu| over an output, divided by the largest |gpu|: a normwise
relative difference, must not exceed it), or tolerances by dtype
("bf16=1e-2,f32=1e-4"). NaN must sit at the same places
in both (the hosts poison what a kernel must not write). Prints one line per
output and, last, one line `RESULT EXAMPLE verdict records bitwise max_abs
max_rel worst` that tests/gpu/emu_xval.sh puts in its table. Exit status 0
when every output matched.
"""
import struct
import sys

try:
    import numpy as np
except ImportError:  # the pure-Python path: slower, the same answers
    np = None

SIZES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "bf16": 2, "f16": 2, "i16": 2, "u8": 1}


def records(path):
    out = []
    with open(path, "rb") as f:
        data = f.read()
    p = 0
    while p < len(data):
        nl = data.index(b"\n", p)
        head = data[p:nl].decode()
        name, dtype, count = head.rsplit(" ", 2)
        count = int(count)
        n = count * SIZES[dtype]
        out.append((name, dtype, count, data[nl + 1:nl + 1 + n]))
        p = nl + 1 + n
    return out


def as_float(dtype, raw, count):
    """The elements as float64 values, and their bit patterns."""
    if np is not None:
        if dtype == "bf16":
            bits = np.frombuffer(raw, dtype=np.uint16)
            vals = (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        else:
            t = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32, "i64": np.int64,
                 "i16": np.int16, "u8": np.uint8}[dtype]
            vals = np.frombuffer(raw, dtype=t).astype(np.float64)
            bits = np.frombuffer(raw, dtype={1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[SIZES[dtype]])
        return vals, bits
    eb = SIZES[dtype]
    code = {1: "B", 2: "H", 4: "I", 8: "Q"}[eb]
    bits = struct.unpack("<%d%s" % (count, code), raw)
    if dtype == "bf16":
        vals = [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in bits]
    elif dtype in ("f32", "f64", "f16"):
        vals = list(struct.unpack("<%d%s" % (count, {"f32": "f", "f64": "d", "f16": "e"}[dtype]), raw))
    else:
        vals = list(struct.unpack("<%d%s" % (count, {"i32": "i", "i64": "q", "i16": "h", "u8": "B"}[dtype]), raw))
    return vals, bits


def compare(dtype, ga, ea, count):
    """(bitwise equal, non-finite values (NaN, Inf) the same at the same
    places, max |g - e| and max |g| over the rest, elements whose bits differ)"""
    gv, gb = as_float(dtype, ga, count)
    ev, eb = as_float(dtype, ea, count)
    if np is not None:
        differ = int(np.count_nonzero(gb != eb))
        fin = np.isfinite(gv) & np.isfinite(ev)
        gx, ex = gv[~fin], ev[~fin]
        nan_ok = bool(np.all((gx == ex) | (np.isnan(gx) & np.isnan(ex))))
        maxabs = float(np.max(np.abs(gv[fin] - ev[fin]))) if fin.any() else 0.0
        scale = float(np.max(np.abs(gv[fin]))) if fin.any() else 0.0
        return differ == 0, nan_ok, maxabs, scale, differ
    differ, nan_ok, maxabs, scale = 0, True, 0.0, 0.0
    inf = float("inf")
    for g, e, x, y in zip(gv, ev, gb, eb):
        differ += x != y
        if g != g or e != e or abs(g) == inf or abs(e) == inf:
            nan_ok = nan_ok and (g == e or (g != g and e != e))
            continue
        maxabs = max(maxabs, abs(g - e))
        scale = max(scale, abs(g))
    return differ == 0, nan_ok, maxabs, scale, differ


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    example, gpath, epath, mode = sys.argv[1:]
    g, e = records(gpath), records(epath)
    tols = {}
    if mode != "bitwise":
        for part in mode.split(","):
            dt, _, t = part.rpartition("=")
            tols[dt or "*"] = float(t)
    ok_all = len(g) == len(e) and len(g) > 0
    if len(g) != len(e):
        print("%s: the GPU's run wrote %d outputs, the emulator's %d" % (example, len(g), len(e)))
    nbit, worst_abs, worst_rel, worst = 0, 0.0, 0.0, "-"
    for (gn, gd, gc, ga), (en, ed, ec, ea) in zip(g, e):
        if (gn, gd, gc) != (en, ed, ec):
            print("%s: output %s (%s x %d) on the GPU, %s (%s x %d) on the emulator" % (example, gn, gd, gc, en, ed, ec))
            ok_all = False
            continue
        bitwise, nan_ok, maxabs, scale, differ = compare(gd, ga, ea, gc)
        rel = maxabs / scale if scale > 0 else (0.0 if maxabs == 0 else float("inf"))
        tol = tols.get(gd, tols.get("*")) if tols else None
        ok = nan_ok and (bitwise if tol is None else rel <= tol)
        nbit += bitwise
        if rel > worst_rel or worst == "-":
            worst_rel, worst = rel, gn
        worst_abs = max(worst_abs, maxabs)
        print("  %-60s %-4s n=%-9d %s max_abs=%.3e max_rel=%.3e differ=%d%s %s" %
              (gn, gd, gc, "bitwise" if bitwise else "       ", maxabs, rel, differ,
               "" if nan_ok else " NaN/Inf-at-other-places", "ok" if ok else "MISMATCH"))
        ok_all = ok_all and ok
    print("RESULT %s %s %d %d %.3e %.3e %s" % (example, "PASS" if ok_all else "FAIL", len(g), nbit, worst_abs,
                                               worst_rel, worst))
    sys.exit(0 if ok_all else 1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""l2_model.py - what the attention backward's work order costs in DRAM
traffic, predicted without a GPU: a model of the L2 over the items'
accesses (docs/jfa.md, "Taking items by a counter").

    python3 bench/l2_model.py [--suites DIR] [--only J1,J2] [--window 256]
                              [--l2-mb 25] [--jitter 0.5] [--lib build/lib/libtilert.so]

For each suite (../shared/bench/suites by default) it builds the
backward's work items as jfa_bwd.c does -- KV blocks of 128 keys, query
blocks of 64 rows -- in two orders:
  static  the scheduler's per-CTA lists (tile_jagged_schedule_build through
          libtilert, 132 CTAs), each CTA running its own list;
  dyn     one list (dyn_order: sequences by their heaviest item, each
          sequence's items head by head, KV blocks ascending), each item
          taken by whichever of the 132 CTAs is free first (DYN).
Each item reads its K and V (64 KB at D = 128) at its start, then per query
block reads Q and dO (32 KB) at the step's start and adds into the f32 dQ
accumulator (32 KB, a read-modify-write) at its end, and writes dK and dV
(64 KB) at the end. A step takes 1 +- jitter (uniform) time units, an
item's start 1 more. The accesses, in time order, go through an LRU cache
of --l2-mb; a miss reads from DRAM, an evicted dirty line is written.
Sizes scale with the head dim. It prints the predicted DRAM read and write
(GB) of each order and the makespan in steps.

What it does not model: the L2's two partitions, the sector granularity,
prefetch, the pre and post kernels. It matched ncu on the H100 for the 256
window on J1 (twenty-first session, docs/perf.md): static 5.40 / 3.22 GB
predicted at jitter 0.5 and 25 MB against 5.22 / 3.18 measured; FA4's
order (the same as dyn) 3.42 / 2.26 against 3.09 / 2.02; with DYN the
kernel measured 3.10 / 2.07.
"""
import argparse
import collections
import ctypes as C
import heapq
import json
import os
import random
import sys

KB, QB, CTAS = 128, 64, 132


class JaggedParams(C.Structure):  # tile/jagged.h's tile_jagged_params
    _fields_ = [("batch", C.c_int64), ("offsets", C.c_void_p), ("offsets_are_64bit", C.c_int), ("heads", C.c_int),
                ("block_m", C.c_int), ("block_n", C.c_int), ("causal", C.c_int), ("num_q", C.c_int64),
                ("num_ctas", C.c_int), ("zigzag", C.c_int), ("backward", C.c_int), ("lengths", C.c_void_p),
                ("window", C.c_int), ("window_left", C.c_int), ("window_right", C.c_int),
                ("block_mask", C.c_void_p), ("block_mask_mode", C.c_int), ("block_mask_row", C.c_int64),
                ("block_mask_bytes", C.c_int64), ("mask_block", C.c_int)]


class JaggedSchedule(C.Structure):  # tile/jagged.h's tile_jagged_schedule
    _fields_ = [("work", C.POINTER(C.c_int32)), ("cta_start", C.POINTER(C.c_int32)), ("ntiles", C.c_int64),
                ("total_cost", C.c_int64), ("max_cta_cost", C.c_int64), ("max_tile_cost", C.c_int64),
                ("num_ctas", C.c_int), ("work_cap", C.c_int64), ("cta_cap", C.c_int64), ("reused", C.c_int),
                ("priv", C.c_void_p)]


def q_range(L, n, causal, window, nq):
    """The query blocks [first, end) KV block n of a sequence of L keys meets
    (jfa_bwd.c's items; window = (left, right) or None)."""
    qlen = nq if nq else L
    i0, i1 = (n * KB // QB if causal else 0), (qlen + QB - 1) // QB
    if window:
        left, right = window
        k_lo = n * KB
        last = min(k_lo + KB - 1 + left, qlen - 1)
        i0 = max(k_lo - right, 0) // QB
        i1 = min(i1, (last + QB) // QB)
    return i0, i1


def static_lists(lib, lens, H, causal, window, nq):
    arr = (C.c_int32 * len(lens))(*lens)
    p = JaggedParams(batch=len(lens), heads=H, block_m=QB, block_n=KB, causal=int(causal), num_q=nq, num_ctas=CTAS,
                     zigzag=1, backward=1, lengths=C.cast(arr, C.c_void_p))
    if window:
        p.window, p.window_left, p.window_right = 1, window[0], window[1]
    s = JaggedSchedule()
    if lib.tile_jagged_schedule_build(C.byref(p), C.byref(s)) != 0:
        sys.exit("tile_jagged_schedule_build: " + lib.tile_last_error().decode())
    lists = [[(s.work[4 * i], s.work[4 * i + 1], s.work[4 * i + 2]) for i in range(s.cta_start[c], s.cta_start[c + 1])]
             for c in range(CTAS)]
    lib.tile_jagged_schedule_free(C.byref(s))
    return lists


def dyn_list(lens, H, causal, window, nq):
    nb = [(L + KB - 1) // KB for L in lens]
    heavy = [max((q_range(L, n, causal, window, nq)[1] - q_range(L, n, causal, window, nq)[0]
                  for n in range(nb[b])), default=-1) for b, L in enumerate(lens)]
    order = sorted(range(len(lens)), key=lambda b: (-heavy[b], b))
    return [(b, h, n) for b in order for h in range(H) for n in range(nb[b])]


def simulate(lens, H, D, causal, window, nq, l2_mb, jitter, lists=None, queue=None, seed=1):
    rnd = random.Random(seed)
    kv, qd, dq, dkv = 2 * KB * D * 2, 2 * QB * D * 2, QB * D * 4, 2 * KB * D * 2
    ev = []

    def item(t, b, h, n):
        i0, i1 = q_range(lens[b], n, causal, window, nq)
        qb = (lambda i: ('q', 0, h, i)) if nq else (lambda i: ('q', b, h, i))   # broadcast-Q: one Q for all
        ev.append((t, 0, ('kv', b, h, n), kv))
        t += 1 + jitter * rnd.uniform(-1, 1)
        for i in range(i0, i1):
            step = 1 + jitter * rnd.uniform(-1, 1)
            ev.append((t, 0, qb(i), qd))
            ev.append((t + step, 1, ('dq',) + qb(i)[1:], dq))
            t += step
        ev.append((t, 2, ('dkv', b, h, n), dkv))
        return t

    if lists is not None:
        for items in lists:
            t = 0.0
            for it in items:
                t = item(t, *it)
    else:
        free = [(0.0, c) for c in range(CTAS)]
        heapq.heapify(free)
        for it in queue:
            t, c = heapq.heappop(free)
            heapq.heappush(free, (item(t, *it), c))
    ev.sort(key=lambda e: e[0])
    cap, used, rd, wr = l2_mb * 1e6, 0, 0, 0
    lru = collections.OrderedDict()
    for _, kind, key, size in ev:   # kind 0: read, 1: read-modify-write, 2: write
        if key in lru:
            lru.move_to_end(key)
            if kind:
                lru[key] = (size, True)
            continue
        if kind < 2:
            rd += size
        lru[key] = (size, kind > 0)
        used += size
        while used > cap:
            _, (sz, dirty) = lru.popitem(last=False)
            used -= sz
            wr += sz if dirty else 0
    wr += sum(sz for sz, dirty in lru.values() if dirty)
    return rd / 1e9, wr / 1e9, max(e[0] for e in ev)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suites", default=os.path.join(here, "..", "..", "shared", "bench", "suites"))
    ap.add_argument("--only")
    ap.add_argument("--window", type=int, default=0,
                    help="a causal sliding window of W keys (keys i - W .. i), as side_by_side.py's window:W")
    ap.add_argument("--l2-mb", type=float, default=25.0)
    ap.add_argument("--jitter", type=float, default=0.5)
    ap.add_argument("--lib", default=os.path.join(here, "..", "build", "lib", "libtilert.so"))
    a = ap.parse_args()
    lib = C.CDLL(a.lib)
    lib.tile_last_error.restype = C.c_char_p
    print(f"L2 {a.l2_mb:g} MB, step jitter +-{a.jitter:g}{f', window {a.window}' if a.window else ''}")
    print("suite  items   static: read  write  span  |  dyn: read  write  span")
    for s in json.load(open(os.path.join(a.suites, "suites.json"))):
        if a.only and s["name"] not in a.only.split(","):
            continue
        lens = [int(x) for x in open(os.path.join(a.suites, s["lengths_file"])).read().split()]
        H, D, causal = s["heads"], s["head_dim"], bool(s["causal"])
        nq = s.get("num_q", 0) if s["mode"] == "broadcast_q" else 0
        window = (a.window, 0) if a.window and not nq else None   # a causal window: no other mask
        causal = causal and not window
        st = simulate(lens, H, D, causal, window, nq, a.l2_mb, a.jitter,
                      lists=static_lists(lib, lens, H, causal, window, nq))
        q = dyn_list(lens, H, causal, window, nq)
        dy = simulate(lens, H, D, causal, window, nq, a.l2_mb, a.jitter, queue=q)
        print(f"{s['name']:6s} {len(q):6d}   {st[0]:11.2f} {st[1]:6.2f} {st[2]:5.0f}  |  {dy[0]:9.2f} {dy[1]:6.2f} "
              f"{dy[2]:5.0f}")


if __name__ == "__main__":
    main()

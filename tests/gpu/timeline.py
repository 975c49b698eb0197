#!/usr/bin/env python3
"""tests/gpu/timeline.py - where a backward work item's time goes, from a
TIMELINE build's stamps (jfa_bwd.tile's TIMELINE, written by
`jfa_bwd_host --bench ... --ab DIR --timeline PREFIX` as PREFIX.SUITE.csv).

  python3 tests/gpu/timeline.py PREFIX.J2.csv [--mhz 1980] [--steps PREFIX.J2.steps.csv]

Each line of the csv is one item of one CTA: clock64() of the consumers'
warpgroup 0 as the item begins (after the previous item's dK and dV are
out), once its K and V are in, after its first step, after its last, once
its dK and dV are out; its steps; the item; and the producer's clock64()
as it issued the K and V loads. The phases, per item, in microseconds at
--mhz (the SM clock the main kernel ran at: Nsight Compute's
sm__cycles_elapsed.avg.per_second. nvidia-smi's samples miss it: on the
H100 the backward's main kernel runs at about 1.75 GHz under the 700 W
cap while the samples, mostly of the host's checks, say 1980 MHz;
thirty-seventh session, docs/perf.md):

  kv_wait   begin -> K and V in (the loads not yet landed)
  first     K and V in -> first step done (the pipeline's refill)
  step      the later steps, each ((last - first) / (steps - 1))
  end       last step done -> dK and dV out (staging, the copies' reads)
  load      the producer's issue -> K and V in (the load's latency as seen)
  issue_lag the previous item's end -> the producer's issue (<0: issued before)
  at head dim 128 the end split: end_mma (last step done -> both warpgroups'
  last MMAs done), end_stage (-> dK and dV in shared memory), end_copy (->
  the TMA copies have read them), end_rest (-> the item's end)

Printed: each phase's mean and median over the items, the items' mean
length, the CTAs' spans (first item's begin to last item's end: the
balance of the scheduler's lists; against the kernel's duration, what
the CTAs spend outside their items), and what share of all CTAs' time each phase took. --steps: the
steps' waits (each CTA's first 8192 steps), mean per step: the consumers'
(warpgroup 0's) wait for the Q block (q_full), for the other warpgroup
(meet), for the dQ stage (dq_empty); the reducer's wait for the step's dQ
(red_wait: OWN's flag and dq_full) and its work until the stage is read
(red_work); a final step's (FP, FIN) wait for the earlier sum the reducer
loads into the stage (acc_wait; 0 on the other steps, so its mean is over
all steps).
"""
import argparse
import csv
import statistics as st
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--mhz", type=float, default=1980.0)
    ap.add_argument("--steps")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.csv)))
    if not rows:
        sys.exit("no items in %s" % a.csv)
    us = 1.0 / a.mhz  # microseconds per cycle
    by = {}
    for r in rows:
        by.setdefault(int(r["cta"]), []).append({k: int(v) for k, v in r.items()})
    ph = {k: [] for k in ("kv_wait", "first", "step", "end", "end_mma", "end_stage", "end_copy", "end_rest", "load",
                          "issue_lag", "item")}
    tot = {k: 0.0 for k in ("kv_wait", "first", "steps_rest", "end", "gap")}
    span = 0.0
    spans = []
    for cta, items in by.items():
        items.sort(key=lambda x: x["t"])
        span += (items[-1]["end"] - items[0]["begin"]) * us
        spans.append(((items[-1]["end"] - items[0]["begin"]) * us, len(items)))
        for j, x in enumerate(items):
            kv = (x["kv_in"] - x["begin"]) * us
            first = (x["first_done"] - x["kv_in"]) * us if x["steps"] > 0 else 0.0
            rest = (x["last_done"] - x["first_done"]) * us if x["steps"] > 1 else 0.0
            end = (x["end"] - x["last_done"]) * us
            ph["kv_wait"].append(kv)
            ph["end"].append(end)
            if x.get("mmas_done") and x.get("staged") and x.get("copied"):
                ph["end_mma"].append((x["mmas_done"] - x["last_done"]) * us)
                ph["end_stage"].append((x["staged"] - x["mmas_done"]) * us)
                ph["end_copy"].append((x["copied"] - x["staged"]) * us)
                ph["end_rest"].append((x["end"] - x["copied"]) * us)
            if x["steps"] > 0:
                ph["first"].append(first)
            if x["steps"] > 1:
                ph["step"].append(rest / (x["steps"] - 1))
            if x["kv_issue"]:
                ph["load"].append((x["kv_in"] - x["kv_issue"]) * us)
                if j > 0:
                    ph["issue_lag"].append((x["kv_issue"] - items[j - 1]["end"]) * us)
            tot["kv_wait"] += kv
            tot["first"] += first
            tot["steps_rest"] += rest
            tot["end"] += end
            if j + 1 < len(items):
                gap = (items[j + 1]["begin"] - x["end"]) * us
                tot["gap"] += gap
                ph["item"].append((items[j + 1]["begin"] - x["begin"]) * us)
    steps = [int(r["steps"]) for r in rows]
    print("%s: %d items on %d CTAs, %.2f steps an item, at %.0f MHz" %
          (a.csv, len(rows), len(by), st.mean(steps), a.mhz))
    print("%-10s %9s %9s %9s" % ("phase", "mean us", "median", "p90"))
    for k, v in ph.items():
        if v:
            v2 = sorted(v)
            print("%-10s %9.3f %9.3f %9.3f" % (k, st.mean(v), st.median(v), v2[int(0.9 * (len(v2) - 1))]))
    # each CTA's span, its first item's begin to its last item's end (one SM's clock64; the SMs' clocks are
    # not one clock, so no CTA is placed against another): how evenly the scheduler's lists came out
    sp = sorted(x[0] for x in spans)
    print("CTA spans: mean %.1f us, min %.1f, p10 %.1f, p90 %.1f, max %.1f (max / mean %.3f); items a CTA %d-%d" %
          (st.mean(sp), sp[0], sp[len(sp) // 10], sp[int(0.9 * (len(sp) - 1))], sp[-1], sp[-1] / st.mean(sp),
           min(x[1] for x in spans), max(x[1] for x in spans)))
    print("share of the CTAs' recorded time (%.1f us over all CTAs):" % span)
    for k, v in tot.items():
        print("  %-10s %5.1f %%" % (k, 100.0 * v / span if span else 0.0))
    if a.steps:
        srows = list(csv.DictReader(open(a.steps)))
        print("steps: %d; mean us a step (median, p90):" % len(srows))
        for k in ("q_full", "meet", "dq_empty", "red_wait", "red_work", "acc_wait"):
            v = sorted(int(r[k]) * us for r in srows if k in r)
            if v:
                print("  %-9s %7.3f (%6.3f, %6.3f)" % (k, st.mean(v), v[len(v) // 2], v[int(0.9 * (len(v) - 1))]))


if __name__ == "__main__":
    main()

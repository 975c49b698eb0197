#!/usr/bin/env python3
"""bench/report.py - the benchmark report: the raw JSON of bench/run_all.sh
turned into markdown tables and PNG plots (bench/png.py: no matplotlib on
the GPU machine or in CI), ours beside every peer with the hardware ceiling
measured in the same run drawn across.

    python3 bench/report.py RAW_DIR OUT_DIR [--perf docs/perf.md]

Writes OUT_DIR/README.md (every table, the plots embedded, where each figure
comes from) and OUT_DIR/*.png; with --perf, replaces the part of that file
between the lines `<!-- bench-report -->` and `<!-- /bench-report -->`
(appended when absent) with the same tables and plots, so docs/perf.md
always embeds the latest run. A missing input leaves its table and plot out
and says so; nothing is invented.

Where the figures come from (every JSON is one run of one step):
- Tile's JFA figures and the peer beside them come from
  tests/gpu/side_by_side.py: ours and the peer alternating in ONE process
  (jfa_*_fa4.json: FlashAttention-4; jfa_*_sbs.json: FA2 varlen, or dense
  cuDNN where every length is equal). Tile's bar is the one measured beside
  FA4 when that ran, else beside FA2/cuDNN.
- The other peers (FA2 varlen, nested-tensor SDPA, FlexAttention, dense
  cuDNN and flash) come from ../shared/bench/peers.py, a process of their
  own, as do the ceilings (bf16 matmul 8192^3, device copy).
- GEMM: tests/gpu/bench_gemm.py (interleaved with cuBLAS); tutorials:
  tests/gpu/bench_triton.py (interleaved with Triton, do_bench).
Backward FLOPs are 2.5x the forward's, a training step's 3.5x
(FlashAttention's convention).
"""
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import png  # noqa: E402  (bench/png.py)

SUITE_ORDER = ["J1", "J2", "J3", "J4", "D8k"]
PEER_NAMES = {"torch-varlen": "FA2 varlen", "torch-njt-sdpa": "NJT SDPA", "torch-flex": "FlexAttention",
              "dense-cudnn": "cuDNN (dense)", "dense-flash": "SDPA flash (dense)", "fa4": "FlashAttention-4",
              "fa2-varlen": "FA2 varlen"}
BEGIN, END = "<!-- bench-report -->", "<!-- /bench-report -->"


def load(raw, name):
    p = os.path.join(raw, name)
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)


def fmt(x, nd=1):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return "%.*f" % (nd, x)


def ratio(a, b):
    if a is None or b is None or not b or not math.isfinite(a) or not math.isfinite(b):
        return None
    return a / b


def suite_flops(suites_dir, name):
    """The forward FLOPs of a suite (4 H D x the (q, k) pairs), None if unknown."""
    if not suites_dir:
        return None
    with open(os.path.join(suites_dir, "suites.json")) as f:
        for s in json.load(f):
            if s["name"] != name:
                continue
            with open(os.path.join(suites_dir, s["lengths_file"])) as g:
                L = [int(x) for x in g.read().split()]
            H, D = s["heads"], s["head_dim"]
            if s["mode"] == "broadcast_q":
                return 4.0 * H * D * sum(s["num_q"] * x for x in L)
            if s["causal"]:
                return 4.0 * H * D * sum(x * (x + 1) / 2 for x in L)
            return 4.0 * H * D * sum(x * x for x in L)
    return None


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


class Report:
    def __init__(self, raw, out, suites_dir):
        self.raw, self.out, self.suites_dir = raw, out, suites_dir
        self.parts = []       # (title, markdown) in order
        self.missing = []
        self.peers = load(raw, "peers.json")
        self.ceil = (self.peers or {}).get("ceil", {})

    def flops(self, suite):
        return suite_flops(self.suites_dir, suite)

    def add(self, title, md, plot=None):
        if plot:
            md = "![%s](%s)\n\n%s" % (title, plot, md)
        self.parts.append((title, md))

    def chart(self, name, title, groups, series, values, ylabel, ceiling=None, ceiling_label=None):
        keep = [i for i, v in enumerate(values) if any(x is not None for x in v)]
        if not keep or not groups:
            return None
        # wide enough for a value label over every bar (about 28 px a bar)
        # and for the longest line of a category label (6 px a character)
        label = max(len(line) for g in groups for line in str(g).split("\n"))
        width = max(960, min(2400, max(28 * len(groups) * len(keep), len(groups) * (6 * label + 12)) + 160))
        png.bar_chart(os.path.join(self.out, name), title, groups, [series[i] for i in keep],
                      [values[i] for i in keep], ylabel, ceiling=ceiling, ceiling_label=ceiling_label, width=width)
        return name

    # -- JFA -----------------------------------------------------------------
    def peer_rows(self, suite, key):
        """{peer name: TFLOP/s} from peers.py for a suite (key fwd_tflops / bwd_tflops)."""
        out = {}
        for r in (self.peers or {}).get("rows", []):
            if r["suite"] == suite and r.get(key):
                out[PEER_NAMES.get(r["peer"], r["peer"])] = r[key]
        return out

    def jfa(self, direction):
        fwd = direction == "forward"
        fa4 = load(self.raw, "jfa_fwd_fa4.json" if fwd else "jfa_bwd_fa4.json") or []
        sbs = load(self.raw, "jfa_fwd_sbs.json" if fwd else "jfa_bwd_sbs.json") or []
        if not fa4 and not sbs:
            self.missing.append("JFA %s (jfa_%s_fa4.json, jfa_%s_sbs.json)" % ((direction,) + (direction[:3],) * 2))
            return
        mult = 1.0 if fwd else 2.5
        ok = "ours_ms" if fwd else "ours_bwd_ms"
        pk = "peer_ms" if fwd else "peer_bwd_ms"
        suites = [s for s in SUITE_ORDER if any(r["suite"] == s for r in fa4 + sbs)]
        suites += sorted({r["suite"] for r in fa4 + sbs} - set(suites))
        series = ["Tile", "FlashAttention-4"]
        cols = {}
        rows = []
        for s in suites:
            ff = self.flops(s)
            tf = lambda ms: mult * ff / ms / 1e9 if ff and ms else None
            r4 = next((r for r in fa4 if r["suite"] == s), None)
            r2 = next((r for r in sbs if r["suite"] == s), None)
            ours = tf(r4[ok]) if r4 else tf(r2[ok]) if r2 else None
            cols.setdefault("Tile", {})[s] = ours
            cols.setdefault("FlashAttention-4", {})[s] = tf(r4[pk]) if r4 else None
            sbs_peer = PEER_NAMES.get(r2["peer"], r2["peer"]) if r2 else None
            sbs_tf = tf(r2[pk]) if r2 else None
            others = self.peer_rows(s, "fwd_tflops" if fwd else "bwd_tflops")
            if sbs_peer:
                others[sbs_peer] = sbs_tf          # the same-process figure wins over peers.py's
            for p, v in others.items():
                if p not in series:
                    series.append(p)
                cols.setdefault(p, {})[s] = v
            best = max(((v, p) for p, v in others.items() if v), default=(None, None))
            if r4 and r4.get(pk):
                best = max(best, (tf(r4[pk]), "FlashAttention-4"), key=lambda t: t[0] or 0)
            rows.append([s, fmt(ours), fmt(cols["FlashAttention-4"][s]), fmt(ratio(ours, cols["FlashAttention-4"][s]), 3),
                         "%s %s" % (best[1] or "—", fmt(best[0])), fmt(ratio(ours, best[0]), 3),
                         fmt(self.ceil.get("mm8192_bf16_TFs"), 0)])
        head = ["suite", "Tile TFLOP/s", "FA4", "Tile/FA4", "best peer", "Tile/best", "ceiling (bf16 mm)"]
        md = table(head, rows)
        if not fwd:
            srows = []
            for s in suites:
                ff = self.flops(s)
                r4 = next((r for r in fa4 if r["suite"] == s), None)
                r2 = next((r for r in sbs if r["suite"] == s), None)
                cell = lambda r, k: fmt(3.5 * ff / r[k] / 1e9) if r and ff and r.get(k) else "—"
                srows.append([s, cell(r4, "ours_step_ms"), cell(r4, "peer_step_ms"),
                              fmt(ratio(r4["peer_step_ms"], r4["ours_step_ms"]) if r4 else None, 3),
                              cell(r2, "ours_step_ms"), "%s %s" % (PEER_NAMES.get(r2["peer"], "") if r2 else "—",
                                                                   cell(r2, "peer_step_ms")),
                              fmt(ratio(r2["peer_step_ms"], r2["ours_step_ms"]) if r2 else None, 3)])
            md += "\n\nTraining step (forward + backward, 3.5x the forward's FLOPs), TFLOP/s:\n\n" + table(
                ["suite", "Tile (beside FA4)", "FA4", "Tile/FA4", "Tile (beside FA2/cuDNN)", "peer", "Tile/peer"], srows)
            md += errors("gradient", [(r["suite"], PEER_NAMES.get(r["peer"], r["peer"]), max(r["grad_err"]))
                                      for r in fa4 + sbs if r.get("grad_err")])
        else:
            md += errors("output", [(r["suite"], PEER_NAMES.get(r["peer"], r["peer"]), r["out_err"])
                                    for r in fa4 + sbs if "out_err" in r])
        values = [[cols.get(p, {}).get(s) for s in suites] for p in series]
        name = "jfa_%s.png" % ("fwd" if fwd else "bwd")
        plot = self.chart(name, "Jagged attention, %s, bf16, H200 (TFLOP/s)" % direction, suites, series, values,
                          "TFLOP/s", self.ceil.get("mm8192_bf16_TFs"), "torch bf16 matmul 8192^3")
        self.add("JFA %s" % direction, md, plot)

    def variants(self):
        rows = load(self.raw, "variants.json")
        if not rows:
            self.missing.append("variants (variants.json)")
            return
        groups, series, vals, trows = [], ["Tile fwd", "FA4 fwd", "Tile bwd", "FA4 bwd"], [[], [], [], []], []
        fa4_rows = [r for r in rows if r.get("peer") == "fa4"]
        for r in fa4_rows:
            g = "%s %s" % (r["suite"], r["variant"])
            pairs_flops = r.get("flops")
            tf = lambda ms, m=1.0: m * pairs_flops / ms / 1e9 if pairs_flops and ms else None
            groups.append(g)
            vals[0].append(tf(r.get("ours_ms"))); vals[1].append(tf(r.get("peer_ms")))
            vals[2].append(tf(r.get("ours_bwd_ms"), 2.5)); vals[3].append(tf(r.get("peer_bwd_ms"), 2.5))
            trows.append([g, fmt(vals[0][-1]), fmt(vals[1][-1]), fmt(ratio(vals[0][-1], vals[1][-1]), 3),
                          fmt(vals[2][-1]), fmt(vals[3][-1]), fmt(ratio(vals[2][-1], vals[3][-1]), 3)])
        for r in rows:
            if r.get("peer") != "fa4":
                tf = lambda ms, m=1.0, f=r.get("flops"): m * f / ms / 1e9 if f and ms else None
                trows.append(["%s %s (beside %s)" % (r["suite"], r["variant"], PEER_NAMES.get(r["peer"], r["peer"])),
                              fmt(tf(r.get("ours_ms"))), "—", fmt(ratio(r.get("peer_ms"), r.get("ours_ms")), 3),
                              fmt(tf(r.get("ours_bwd_ms"), 2.5)), "—",
                              fmt(ratio(r.get("peer_bwd_ms"), r.get("ours_bwd_ms")), 3)])
        md = table(["suite / variant", "Tile fwd", "FA4 fwd", "Tile/peer fwd", "Tile bwd", "FA4 bwd",
                    "Tile/peer bwd"], trows)
        md += "\n\nEffective TFLOP/s over the (q, k) pairs the variant keeps."
        plot = self.chart("variants.png", "Attention variants vs FlashAttention-4 (effective TFLOP/s)", groups,
                          series, vals, "TFLOP/s", self.ceil.get("mm8192_bf16_TFs"), "torch bf16 matmul 8192^3")
        self.add("Attention variants", md, plot)

    def train_step(self):
        t = load(self.raw, "train_step.json")
        if not t:
            self.missing.append("training step (train_step.json)")
            return
        rows = t["rows"]
        trows = [[r["suite"], str(r["batch"]), fmt(r["tile_ms"], 3), fmt(r["tile-same_ms"], 3),
                  fmt(r["tile-dtoh_ms"], 3), fmt(r["fa2_ms"], 3), fmt(ratio(r["fa2_ms"], r["tile_ms"]), 2),
                  fmt(r["tile_tflops"], 0), fmt(r["host_ms"], 3), r["check"]] for r in rows]
        md = table(["suite", "B", "Tile ms/step (new batch)", "same batch", "offsets from the GPU", "FA2 varlen",
                    "FA2 / Tile", "Tile TFLOP/s", "Tile host ms/step", "check"], trows)
        md += ("\n\nA training loop's attention step, forward + backward, a new batch of lengths every step "
               "(tests/gpu/train_step.py%s): wall clock from a synchronized start to a synchronized end, so "
               "scheduling the GPU waits for counts. \"same batch\": one batch every step (the schedule reused); "
               "\"offsets from the GPU\": no host lengths, a device-to-host copy each call." % (
                   ", commit " + t["commit"] if t.get("commit") else ""))
        plot = self.chart("train_step.png", "Attention training step, H200 (ms per step, lower is better)",
                          [r["suite"] for r in rows], ["Tile", "FA2 varlen"],
                          [[r["tile_ms"] for r in rows], [r["fa2_ms"] for r in rows]], "ms")
        self.add("Training step, end to end (a new batch every step)", md, plot)

    # -- GEMM and tutorials ---------------------------------------------------
    def gemm(self):
        g = load(self.raw, "gemm.json")
        if not g:
            self.missing.append("GEMM (gemm.json)")
            return
        rows = g["rows"]
        trows = [[r["shape"], fmt(r["ours_tflops"]), fmt(r["cublas_tflops"]),
                  fmt(ratio(r["ours_tflops"], r["cublas_tflops"]), 3)] for r in rows]
        rs = [ratio(r["ours_tflops"], r["cublas_tflops"]) for r in rows]
        rs = [x for x in rs if x]
        md = table(["M x N x K", "Tile (gemm.tile)", "cuBLAS", "Tile/cuBLAS"], trows)
        if rs:
            md += "\n\nGeometric mean Tile/cuBLAS: %.3f over %d shapes." % (
                math.exp(sum(math.log(x) for x in rs) / len(rs)), len(rs))
        fin = lambda x: x if x is not None and math.isfinite(x) else None
        plot = self.chart("gemm.png", "GEMM bf16, H200 (TFLOP/s)", [r["shape"] for r in rows], ["Tile", "cuBLAS"],
                          [[fin(r["ours_tflops"]) for r in rows], [fin(r["cublas_tflops"]) for r in rows]],
                          "TFLOP/s", self.ceil.get("mm8192_bf16_TFs"), "torch bf16 matmul 8192^3")
        self.add("GEMM (explicit, gemm.tile) vs cuBLAS", md, plot)

    def tutorials(self):
        t = load(self.raw, "bench_triton.json")
        if not t:
            self.missing.append("tutorials (bench_triton.json)")
            return
        rows, ceil = t["rows"], t.get("ceilings", {})
        trows = []
        for r in rows:
            if "error" in r:
                trows.append([r["kernel"], r["shape"], "—", "—", "—", "—", "ERROR", r["error"][:80]])
                continue
            trows.append([r["kernel"], r["shape"], fmt(r["tile"]), fmt(r["triton"]), fmt(r["ratio"], 2), r["unit"],
                          "ok" if r["ok"] else "CHECK FAILED", r.get("note") or ""])
        md = table(["kernel", "shape", "Tile", "Triton", "Tile/Triton", "unit", "check", "note"], trows)
        if ceil:
            md += "\n\nCeilings in the same run: " + ", ".join("%s %.0f" % kv for kv in ceil.items()) + "."
        plots = []
        kernels = []
        for r in rows:
            if "error" not in r and r["kernel"] not in kernels:
                kernels.append(r["kernel"])
        for k in kernels:
            sel = [r for r in rows if r["kernel"] == k and "error" not in r]
            unit = sel[0]["unit"]
            ck, label = (("device copy (1 GiB) GB/s", "copy") if unit == "GB/s" else
                         ("torch.matmul bf16 8192^3 TFLOP/s", "torch bf16 matmul 8192^3"))
            p = self.chart("tutorial_%s.png" % k, "%s: Tile vs Triton, H200 (%s)" % (k, unit),
                           [r["shape"].replace(" ", "\n", 1) for r in sel], ["Tile", "Triton"],
                           [[r["tile"] for r in sel], [r["triton"] for r in sel]], unit, ceil.get(ck), label)
            if p:
                plots.append(p)
        if plots:
            md = md + "\n\n" + "\n\n".join("![%s](%s)" % (p[9:-4], p) for p in plots)
        self.add("Triton-style tutorials vs Triton", md)

    # -- output ---------------------------------------------------------------
    def markdown(self, prefix=""):
        meta = load(self.raw, "meta.json") or {}
        lines = ["Run: %s on %s (%s SMs), commit %s, PyTorch %s%s. Raw data: `%sraw/`; regenerate with "
                 "`make bench-report` on a GPU machine (docs/bench/README.md)." % (
                     meta.get("date", "?"), meta.get("gpu", "?"), meta.get("sms", "?"), meta.get("commit", "?"),
                     meta.get("torch", "?"), (", Triton " + meta["triton"]) if meta.get("triton") else "", prefix)]
        if self.ceil:
            lines.append("Ceilings measured in the same run (peers.py): bf16 matmul 8192³ %s TFLOP/s, "
                         "device copy %s TB/s." % (fmt(self.ceil.get("mm8192_bf16_TFs"), 0),
                                                   fmt(self.ceil.get("copy_TBps"), 2)))
        for title, md in self.parts:
            md = re.sub(r"!\[([^\]]*)\]\(([^)]+\.png)\)", lambda m: "![%s](%s%s)" % (m.group(1), prefix, m.group(2)), md)
            lines += ["", "### " + title, "", md]
        if self.missing:
            lines += ["", "Not in this run: " + "; ".join(self.missing) + "."]
        return "\n".join(lines) + "\n"


def errors(what, errs):
    """'Relative output difference from the peer: beside FA4 J1 2.8e-03, ...; beside ...'."""
    if not errs:
        return ""
    by = {}
    for suite, peer, e in errs:
        by.setdefault(peer, []).append("%s %.1e" % (suite, e))
    return "\n\nRelative %s difference (Frobenius) from the peer it was timed beside: %s." % (
        what, "; ".join("%s: %s" % (p, ", ".join(v)) for p, v in by.items()))


def replace_section(path, body):
    text = open(path).read() if os.path.exists(path) else ""
    block = "%s\n%s%s" % (BEGIN, body, END)
    if BEGIN in text and END in text:
        a = text.index(BEGIN)
        b = text.index(END, a) + len(END)
        text = text[:a] + block + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n## The latest benchmark report (bench/report.py)\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    perf = None
    suites = None
    for i, a in enumerate(argv):
        if a == "--perf" and i + 1 < len(argv):
            perf = argv[i + 1]
            args.remove(perf)
        if a == "--suites" and i + 1 < len(argv):
            suites = argv[i + 1]
            args.remove(suites)
    if len(args) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    raw, out = args
    if not os.path.isdir(raw):
        print("bench/report.py: %s is not a folder" % raw, file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    if suites is None:
        for cand in (os.path.join(raw, "suites"), "../shared/bench/suites", "build-gpu/shared-bench/suites"):
            if os.path.exists(os.path.join(cand, "suites.json")):
                suites = cand
                break
    R = Report(raw, out, suites)
    R.jfa("forward")
    R.jfa("backward")
    R.variants()
    R.train_step()
    R.gemm()
    R.tutorials()
    if not R.parts:
        print("bench/report.py: no benchmark JSON in %s" % raw, file=sys.stderr)
        return 1
    body = R.markdown()
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("# Benchmark report\n\nWritten by bench/report.py from bench/run_all.sh's JSON "
                "(`make bench-report`).\n\n" + body)
    if perf:
        rel = os.path.relpath(out, os.path.dirname(os.path.abspath(perf)) or ".")
        replace_section(perf, R.markdown(prefix=rel.rstrip("/") + "/"))
    print("bench/report.py: %d sections, plots %s -> %s" % (
        len(R.parts), ", ".join(sorted(f for f in os.listdir(out) if f.endswith(".png"))), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

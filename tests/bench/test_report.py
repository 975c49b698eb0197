"""tests/bench/test_report.py - bench/report.py on hand-made raw JSON (the
shapes bench/run_all.sh's steps write): the tables' figures and ratios, the
plots, the perf.md section replaced in place, and missing inputs reported
rather than invented. No GPU: the figures here are made up and only checked
for how they are carried.

    python3 -m unittest discover -s tests/bench
"""
import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import png  # noqa: E402
import report  # noqa: E402

SUITES = [{"name": "J1", "heads": 2, "head_dim": 64, "causal": False, "mode": "self", "lengths_file": "J1.lengths"},
          {"name": "J2", "heads": 2, "head_dim": 64, "causal": True, "mode": "self", "lengths_file": "J2.lengths"}]


def rd(path):
    with open(path) as f:
        return f.read()


def wr(path, text):
    with open(path, "w") as f:
        f.write(text)


def fwd_flops(name):
    return {"J1": 4.0 * 2 * 64 * (100 * 100 + 50 * 50), "J2": 4.0 * 2 * 64 * (100 * 101 / 2 + 50 * 51 / 2)}[name]


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.raw = os.path.join(self.d, "raw")
        self.out = os.path.join(self.d, "bench")
        os.makedirs(os.path.join(self.raw, "suites"))
        wr(os.path.join(self.raw, "suites", "suites.json"), json.dumps(SUITES))
        wr(os.path.join(self.raw, "suites", "J1.lengths"), "100\n50\n")
        wr(os.path.join(self.raw, "suites", "J2.lengths"), "100\n50\n")
        self.w("meta.json", {"date": "2026-12-02 20:00 UTC", "gpu": "NVIDIA H200", "sms": 132, "torch": "2.11",
                             "commit": "abc1234"})
        self.w("peers.json", {"ceil": {"mm8192_bf16_TFs": 780.0, "copy_TBps": 4.2}, "rows": [
            {"suite": "J1", "peer": "torch-flex", "fwd_tflops": 0.1, "bwd_tflops": 0.05},
            {"suite": "J1", "peer": "torch-varlen", "fwd_tflops": 0.11, "bwd_tflops": 0.06},
            {"suite": "J2", "peer": "torch-njt-sdpa", "fwd_tflops": 0.09, "bwd_tflops": None}]})
        # ours 0.010 ms on J1 beside FA4 at 0.020 ms: 2x
        self.w("jfa_fwd_fa4.json", [{"suite": "J1", "peer": "fa4", "ours_ms": 0.010, "peer_ms": 0.020, "out_err": 1e-3}])
        self.w("jfa_fwd_sbs.json", [{"suite": "J1", "peer": "fa2-varlen", "ours_ms": 0.011, "peer_ms": 0.040,
                                     "out_err": 2e-3},
                                    {"suite": "J2", "peer": "fa2-varlen", "ours_ms": 0.008, "peer_ms": 0.016,
                                     "out_err": 2e-3}])
        self.w("jfa_bwd_sbs.json", [{"suite": "J1", "peer": "fa2-varlen", "ours_bwd_ms": 0.05, "peer_bwd_ms": 0.1,
                                     "ours_step_ms": 0.06, "peer_step_ms": 0.12, "grad_err": [1e-3, 2e-3, 3e-3]}])
        self.w("train_step.json", {"commit": "abc1234", "rows": [
            {"suite": "J3", "batch": 2048, "tile_ms": 3.25, "tile-same_ms": 3.0, "tile-dtoh_ms": 4.5, "fa2_ms": 4.875,
             "tile_tflops": 190.0, "host_ms": 2.0, "check": "ok"}]})
        self.w("gemm.json", {"rows": [{"shape": "4096x4096x4096", "ours_tflops": 700.0, "cublas_tflops": 650.0},
                                      {"shape": "8192x8192x8192", "ours_tflops": float("nan"),
                                       "cublas_tflops": 640.0}]})
        self.w("bench_triton.json", {"ceilings": {"device copy (1 GiB) GB/s": 4200.0}, "rows": [
            {"kernel": "vector_add", "shape": "2^28 f32", "tile": 4000.0, "triton": 4100.0, "ratio": 4000 / 4100,
             "unit": "GB/s", "ok": True},
            {"kernel": "matmul", "shape": "4096^3", "tile": 600.0, "triton": 580.0, "ratio": 600 / 580,
             "unit": "TFLOP/s", "ok": False},
            {"kernel": "attn_fwd", "shape": "x", "error": "RuntimeError: boom", "ok": False}]})

    def tearDown(self):
        shutil.rmtree(self.d)

    def w(self, name, obj):
        with open(os.path.join(self.raw, name), "w") as f:
            json.dump(obj, f)

    def run_report(self, *extra):
        return report.main([self.raw, self.out] + list(extra))

    def test_tables_carry_the_figures(self):
        self.assertEqual(self.run_report(), 0)
        md = rd(os.path.join(self.out, "README.md"))
        j1 = fwd_flops("J1") / 0.010 / 1e9
        # J1 forward: Tile beside FA4 (2x), best peer = FA4's 0.020 ms
        row = next(l for l in md.splitlines() if l.startswith("| J1 |"))
        self.assertIn("| %.1f |" % j1, row)
        self.assertIn("| 2.000 |", row)
        # J2 has no FA4 run: Tile's bar comes from the FA2 run, FA4 is "—", the best peer is FA2 (sbs wins over NJT)
        row2 = next(l for l in md.splitlines() if l.startswith("| J2 |"))
        self.assertIn("| %.1f | — |" % (fwd_flops("J2") / 0.008 / 1e9), row2)
        self.assertIn("FA2 varlen %.1f" % (fwd_flops("J2") / 0.016 / 1e9), row2)
        # backward: 2.5x FLOPs; training step 3.5x
        self.assertIn("%.1f" % (2.5 * fwd_flops("J1") / 0.05 / 1e9), md)
        self.assertIn("%.1f" % (3.5 * fwd_flops("J1") / 0.06 / 1e9), md)
        # GEMM: a failed (NaN) figure shows as "—", the geometric mean skips it
        self.assertIn("| 8192x8192x8192 | — | 640.0 | — |", md)
        self.assertIn("Geometric mean Tile/cuBLAS: %.3f over 1 shapes" % (700 / 650), md)
        # tutorials: a failed check and an error are said, not hidden
        self.assertIn("CHECK FAILED", md)
        self.assertIn("ERROR", md)
        # the training step: FA2 / Tile = 4.875 / 3.25
        row3 = next(l for l in md.splitlines() if l.startswith("| J3 | 2048 |"))
        self.assertIn("| 3.250 | 3.000 | 4.500 | 4.875 | 1.50 | 190 | 2.000 | ok |", row3)
        self.assertIn("Not in this run: variants (variants.json).", md)
        self.assertIn("commit abc1234", md)

    def test_plots_are_pngs_with_ours_first(self):
        self.assertEqual(self.run_report(), 0)
        names = sorted(f for f in os.listdir(self.out) if f.endswith(".png"))
        self.assertEqual(names, ["gemm.png", "jfa_bwd.png", "jfa_fwd.png", "train_step.png", "tutorial_matmul.png",
                                 "tutorial_vector_add.png"])
        for n in names:
            w, h, rows = png.read_png(os.path.join(self.out, n))
            self.assertGreater(w, 100)
            self.assertEqual(len(rows), h)
            md = rd(os.path.join(self.out, "README.md"))
            self.assertIn("](%s)" % n, md)

    def test_perf_section_replaced_in_place(self):
        perf = os.path.join(self.d, "perf.md")
        wr(perf, "# Perf\n\nbefore\n")
        self.assertEqual(self.run_report("--perf", perf), 0)
        t1 = rd(perf)
        self.assertTrue(t1.startswith("# Perf\n\nbefore\n"))
        self.assertEqual(t1.count(report.BEGIN), 1)
        self.assertIn("](bench/jfa_fwd.png)", t1)        # paths relative to perf.md
        wr(perf, t1 + "\nafter\n")
        self.assertEqual(self.run_report("--perf", perf), 0)
        t2 = rd(perf)
        self.assertEqual(t2.count(report.BEGIN), 1)
        self.assertEqual(t2.count(report.END), 1)
        self.assertTrue(t2.rstrip().endswith("after"))

    def test_nothing_to_report(self):
        empty = os.path.join(self.d, "empty")
        os.makedirs(empty)
        self.assertEqual(report.main([empty, self.out]), 1)
        self.assertEqual(report.main([os.path.join(self.d, "nope"), self.out]), 2)
        self.assertEqual(report.main([self.raw]), 2)


if __name__ == "__main__":
    unittest.main()

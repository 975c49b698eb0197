"""tests/gpu/train_step.py - the end-to-end attention step of a training
loop (forward + backward, a new batch of lengths every step) through
tile.jfa_varlen_func / jfa_broadcast_q beside FlashAttention-2 varlen
(torch.nn.attention.varlen.varlen_attn), in one process (issue 11).

    python3 tests/gpu/train_step.py SUITES_DIR [--only J1,J3] [--batches 6] [--rounds 3] [--json OUT]

For each suite of SUITES_DIR/suites.json: `--batches` batches of the
suite's size, each sequence's length drawn (seeded) from the suite's own
lengths, so every step has new lengths and a new total (D8k's lengths are
all equal: its batches are one shape). Modes, each timed over `--rounds`
passes through the batches after a warm-up pass, interleaved, best of
three trials, wall clock from a synchronized start to a synchronized end
(so host work the GPU waits for counts, and host work hidden behind the
GPU does not):

  tile        seqlens_host given (the data loader's lengths): the plans
              are scheduled on the host and updated in place
              (jfa_plan_update) with no device-to-host copy
  tile-same   one batch, every step (the schedule reused)
  tile-dtoh   only cu_seqlens on the device: the offsets are copied to
              the host every call (a stall before each step)
  fa2         varlen_attn (FA2 through PyTorch), cu_seqlens on the device,
              max_seqlen from the host

Also: `host ms`, the time the host spends issuing tile's steps (the loop
without the final synchronization): below the step time means the host
runs ahead of the GPU. Each row's outputs are checked against FA2's on
the first batch (max |diff| of out and dq).
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import tile  # noqa: E402


def load_suites(d):
    with open(os.path.join(d, "suites.json")) as f:
        suites = json.load(f)
    if isinstance(suites, dict):
        suites = suites.get("suites", suites)
    for s in suites:
        with open(os.path.join(d, s.get("lengths_file", s["name"] + ".lengths"))) as f:
            s["lengths"] = [int(x) for x in f.read().split()]
    return suites


def fwd_flops(lq, lk, H, D, causal):
    if causal:
        return 4.0 * H * D * sum(L * (L + 1) / 2 for L in lk)
    return 4.0 * H * D * sum(a * b for a, b in zip(lq, lk))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("suites")
    ap.add_argument("--only", default="")
    ap.add_argument("--batches", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    from torch.nn.attention.varlen import varlen_attn
    dev = torch.device("cuda")
    g = torch.Generator().manual_seed(1234)
    rows = []
    print("| suite | B | tile ms/step | tile-same | tile-dtoh | FA2 ms/step | tile / FA2 (speed) | tile TFLOP/s | "
          "host ms/step | check |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in load_suites(a.suites):
        if a.only and s["name"] not in a.only.split(","):
            continue
        H, D, causal = s["heads"], s["head_dim"], bool(s["causal"])
        bq = s["mode"] == "broadcast_q"
        nq = s.get("num_q", 0) if bq else 0
        pool = torch.tensor(s["lengths"], dtype=torch.int64)
        B = len(pool)
        batches = []
        flops = []
        for i in range(a.batches):
            lk = pool[torch.randint(0, B, (B,), generator=g)] if i else pool.clone()
            lq = torch.full((B,), nq, dtype=torch.int64) if bq else lk
            T, TQ = int(lk.sum()), int(lq.sum())
            offk = torch.zeros(B + 1, dtype=torch.int64)
            offk[1:] = torch.cumsum(lk, 0)
            offq = torch.zeros(B + 1, dtype=torch.int64)
            offq[1:] = torch.cumsum(lq, 0)
            k = torch.randn(T, H, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
            v = torch.randn_like(k, requires_grad=True)
            q = torch.randn(nq if bq else T, H, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
            do = torch.randn(B, nq, H, D, device=dev, dtype=torch.bfloat16) if bq else torch.randn_like(q)
            batches.append(dict(q=q, k=k, v=v, do=do, cuk=offk.to(dev, torch.int32), cuq=offq.to(dev, torch.int32),
                                lk=lk.to(torch.int32), mk=int(lk.max()), mq=int(lq.max())))
            flops.append(3.5 * fwd_flops(lq.tolist(), lk.tolist(), H, D, causal))

        def tile_step(b, host=True):
            sh = b["lk"] if host else None
            if bq:
                out = tile.jfa_broadcast_q(b["q"], b["k"], b["v"], b["cuk"], b["mk"], seqlens_host=sh)
            else:
                out = tile.jfa_varlen_func(b["q"], b["k"], b["v"], b["cuk"], b["cuk"], b["mk"], b["mk"],
                                           causal=causal, seqlens_host=sh)
            return out, torch.autograd.grad(out, (b["q"], b["k"], b["v"]), b["do"])

        def fa2_step(b):
            ws = (-1, 0) if causal else (-1, -1)
            if bq:
                qx = b["q"].unsqueeze(0).expand(B, -1, -1, -1).reshape(B * nq, H, D)
                out = varlen_attn(qx, b["k"], b["v"], b["cuq"], b["cuk"], b["mq"], b["mk"], window_size=ws)
                do = b["do"].reshape(B * nq, H, D)
            else:
                out = varlen_attn(b["q"], b["k"], b["v"], b["cuq"], b["cuk"], b["mq"], b["mk"], window_size=ws)
                do = b["do"]
            return out, torch.autograd.grad(out, (b["q"], b["k"], b["v"]), do)

        modes = {
            "tile": lambda i: tile_step(batches[i % len(batches)]),
            "tile-same": lambda i: tile_step(batches[0]),
            "tile-dtoh": lambda i: tile_step(batches[i % len(batches)], host=False),
            "fa2": lambda i: fa2_step(batches[i % len(batches)]),
        }
        nsteps = a.rounds * len(batches)
        step_flops = {m: sum(flops[(0 if m == "tile-same" else i) % len(batches)] for i in range(nsteps)) / nsteps
                      for m in modes}
        best = {m: float("inf") for m in modes}
        host = float("inf")
        for m in modes:  # warm-up: every batch once (plans, FA2's and Tile's first calls)
            for i in range(len(batches)):
                modes[m](i)
        torch.cuda.synchronize()
        for trial in range(3):
            for m, fn in modes.items():
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for i in range(nsteps):
                    fn(i)
                t1 = time.perf_counter()
                torch.cuda.synchronize()
                t2 = time.perf_counter()
                best[m] = min(best[m], (t2 - t0) * 1e3 / nsteps)
                if m == "tile":
                    host = min(host, (t1 - t0) * 1e3 / nsteps)
        # the check: tile's out and dq against FA2's on the first batch
        b = batches[0]
        to, tg = tile_step(b)
        fo, fg = fa2_step(b)
        fo = fo.reshape(to.shape)
        d_out = (to.float() - fo.float()).abs().max().item() if to.numel() else 0.0
        d_dq = (tg[0].float() - fg[0].float()).abs().max().item() if tg[0].numel() else 0.0
        ok = d_out < 0.05 and d_dq < 0.5 and all(torch.isfinite(x).all().item() for x in (to,) + tuple(tg))
        row = dict(suite=s["name"], batch=B, batches=len(batches), rounds=a.rounds, **{m + "_ms": best[m] for m in modes},
                   host_ms=host, tile_tflops=step_flops["tile"] / best["tile"] / 1e9,
                   fa2_tflops=step_flops["fa2"] / best["fa2"] / 1e9, max_diff_out=d_out, max_diff_dq=d_dq,
                   check="ok" if ok else "FAIL")
        rows.append(row)
        print("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.2fx | %.0f | %.3f | %s (out %.2g, dq %.2g) |" % (
            s["name"], B, best["tile"], best["tile-same"], best["tile-dtoh"], best["fa2"], best["fa2"] / best["tile"],
            row["tile_tflops"], host, row["check"], d_out, d_dq), flush=True)
        del batches
        torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           commit=os.environ.get("BENCH_COMMIT"), rows=rows), f, indent=1)
    return 0 if all(r["check"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

"""tests/gpu/side_by_side.py - our JFA forward and the best peer timed in ONE
process with ONE protocol, so that neither gets a cooler GPU or a different
clock: peers.py's own bench() (3 warm-up launches, then the median of REPS
launches each timed with CUDA events), run for ours and for the peer in
alternating order, ROUNDS times per suite; the table gives the median of
each side's round medians and their ratio.

Why: the H200 runs these kernels at its power cap (nvidia-smi: ~690 W,
reason "SW power cap", SM clock 1.5-1.65 GHz instead of 1.98), and how long
a GPU has been busy before a measurement moves every figure by 5-10%
(tests/gpu/clocks.sh). Separate processes (peers.py, then jfa_host) are not
a fair comparison at that level; this is.

Our kernel comes in through ctypes (libjfa.so: examples/jagged_attention/
jfa.c + the runtime, built by `make gpu-bundle`); the runtime shares
PyTorch's primary context, and both run on the legacy default stream.
Correctness: each suite's output is compared with the peer's (bf16 vs bf16,
relative Frobenius error) before timing.

  python3 tests/gpu/side_by_side.py [--lib build-gpu/lib/libjfa.so]
      [--cubins build-gpu/examples] [--suites build-gpu/shared-bench/suites]
      [--only J1,D8k] [--rounds 5] [--reps 10] [--gap 0]
--gap S: sleep S seconds before every measurement (a cooled GPU, as
peers.py's short runs between its set-ups often are).
--bwd: the backward pass instead: ours (jfa_plan_backward) against the
peer's backward (time(forward + backward) - time(forward), peers.py's
convention), both from the same q, k, v, dO; the gradients compared (dq, dk,
dv relative error against the peer's autograd); plus the training step
(ours forward + backward against the peer's forward + backward). --peer fa4:
FlashAttention-4 (flash_attn.cute, carried as ../shared/bench/fa4_wheels.sh
says; /tmp/site) instead of FA2 varlen / dense cuDNN."""
import argparse, ctypes as C, json, os, sys, time
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))


class JfaTensor(C.Structure):
    _fields_ = [("data", C.c_uint64), ("dtype", C.c_char_p), ("rank", C.c_int),
                ("shape", C.c_int64 * 4), ("stride", C.c_int64 * 4)]


# jfa.h's jfa_params: the Python package's mirror, which its tests compare
# with the header field for field (a copy here fell behind when cta_pair
# was added, and jfa_plan_create read the garbage after it)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from tile._lib import JfaParams  # noqa: E402


JFA_MASK_PER_BATCH, JFA_MASK_PER_SEQUENCE = 1, 2


JFA_FWD, JFA_BWD = 1, 2


def jt(t, dtype):
    x = JfaTensor()
    x.data = t.data_ptr(); x.dtype = dtype; x.rank = t.dim()
    for i in range(t.dim()):
        x.shape[i] = t.shape[i]; x.stride[i] = t.stride(i)
    return x


class Jfa:
    def __init__(self, lib, cubins):
        self.L = C.CDLL(lib)
        self.L.tile_last_error.restype = C.c_char_p
        self.L.jfa_plan_forward.argtypes = [C.c_void_p] + [C.POINTER(JfaTensor)] * 5 + [C.c_void_p]
        self.L.jfa_plan_backward.argtypes = [C.c_void_p] + [C.POINTER(JfaTensor)] * 9 + [C.c_void_p]
        self.L.jfa_plan_create.argtypes = [C.c_void_p, C.POINTER(JfaParams), C.POINTER(C.c_void_p)]
        self.L.jfa_lib_open.argtypes = [C.c_char_p, C.POINTER(C.c_void_p)]
        self.ok(self.L.tile_init(0), "tile_init")
        self.lib = C.c_void_p()
        self.ok(self.L.jfa_lib_open(cubins.encode(), C.byref(self.lib)), "jfa_lib_open")

    def ok(self, st, what):
        if st != 0:
            raise RuntimeError(f"{what}: {self.L.tile_last_error().decode()}")

    def plan(self, lengths, H, D, causal, num_q, passes=JFA_FWD, deterministic=0, window=None, softcap=0.0,
             alibi=None, block_mask=None):
        """block_mask: bytes, one per 128 x 128 block of each sequence, one
        sequence's after the other (JFA_MASK_PER_SEQUENCE), 1: visited"""
        off = (C.c_int64 * (len(lengths) + 1))()
        for i, n in enumerate(lengths):
            off[i + 1] = off[i] + n
        p = JfaParams(batch=len(lengths), cu_seqlens=C.cast(off, C.c_void_p), cu_seqlens_64bit=1, heads=H,
                      head_dim=D, causal=int(causal), num_q=num_q, softmax_scale=0.0, passes=passes,
                      deterministic=deterministic, window=int(window is not None),
                      window_left=window[0] if window else 0, window_right=window[1] if window else 0,
                      softcap=softcap, alibi_slopes=(C.c_float * H)(*alibi) if alibi else None)
        if block_mask is not None:
            mbuf = C.create_string_buffer(bytes(block_mask), max(1, len(block_mask)))
            p.block_mask = C.cast(mbuf, C.c_void_p)
            p.block_mask_mode, p.block_mask_bytes = JFA_MASK_PER_SEQUENCE, len(block_mask)
        plan = C.c_void_p()
        self.ok(self.L.jfa_plan_create(self.lib, C.byref(p), C.byref(plan)), "jfa_plan_create")
        return plan

    def bind(self, plan, q, k, v, o, lse):
        """A zero-argument launcher: the argument structs are built once,
        so that the timed call is the C call alone (as a C host's would be)."""
        a = [jt(q, b"bf16"), jt(k, b"bf16"), jt(v, b"bf16"), jt(o, b"bf16"), jt(lse, b"f32")]
        args = [plan] + [C.byref(x) for x in a] + [None]
        f = self.L.jfa_plan_forward

        def run():
            st = f(*args)
            if st != 0:
                self.ok(st, "jfa_plan_forward")
        run.keep = a
        return run


    def bind_bwd(self, plan, do, q, k, v, o, lse, dq, dk, dv):
        """The backward's launcher (a plan made with passes including JFA_BWD)."""
        a = [jt(do, b"bf16"), jt(q, b"bf16"), jt(k, b"bf16"), jt(v, b"bf16"), jt(o, b"bf16"), jt(lse, b"f32"),
             jt(dq, b"bf16"), jt(dk, b"bf16"), jt(dv, b"bf16")]
        args = [plan] + [C.byref(x) for x in a] + [None]
        f = self.L.jfa_plan_backward

        def run():
            st = f(*args)
            if st != 0:
                self.ok(st, "jfa_plan_backward")
        run.keep = a
        return run


def bench(fn, reps, warm=3):          # peers.py's protocol
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


def fwd_flops(s):
    H, D = s["heads"], s["head_dim"]
    if s["mode"] == "broadcast_q":
        return 4.0 * H * D * sum(s["num_q"] * L for L in s["lengths"])
    if s["causal"]:
        return 4.0 * H * D * sum(L * (L + 1) / 2 for L in s["lengths"])
    return 4.0 * H * D * sum(L * L for L in s["lengths"])


def med(x):
    x = sorted(x)
    return x[len(x) // 2]


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


class Peer:
    """The peer's attention on copies of q, k, v that it owns (leaf tensors
    with gradients, in its own layout): fwd() without gradients, fb(do)
    forward + backward, grads() as (dq, dk, dv) in our layout."""

    def __init__(self, s, q, k, v, causal, which):
        from torch.nn.attention.varlen import varlen_attn
        H, D, L = s["heads"], s["head_dim"], s["lengths"]
        B, tot = len(L), sum(L)
        bq = s["mode"] == "broadcast_q"
        nq = s["num_q"] if bq else 0
        dev = q.device
        self.shape = (B, nq, H, D) if bq else (tot, H, D)
        self.dense = which != "fa4" and not bq and min(L) == max(L)
        if self.dense:                         # dense cuDNN on contiguous [B, H, L, D], as peers.py
            from torch.nn.attention import sdpa_kernel, SDPBackend
            t4 = lambda t: t.view(B, L[0], H, D).transpose(1, 2).contiguous().requires_grad_(True)
            self.t = [t4(x) for x in (q, k, v)]
            self.back = lambda g: g.transpose(1, 2).reshape(tot, H, D)
            def f():
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    return F.scaled_dot_product_attention(*self.t, is_causal=causal)
            self.f = f
            self.name = "dense-cudnn"
            self.do = lambda do: do.view(B, L[0], H, D).transpose(1, 2).contiguous()
            return
        self.t = [x.detach().clone().requires_grad_(True) for x in (q, k, v)]
        self.back = lambda g: g
        self.do = lambda do: do.reshape(B * nq, H, D) if bq else do
        offk = torch.zeros(B + 1, dtype=torch.int32, device=dev)
        offk[1:] = torch.cumsum(torch.tensor(L, device=dev), 0)
        offq = torch.arange(0, (B + 1) * nq, nq, dtype=torch.int32, device=dev) if bq else offk
        mq, mk = (nq if bq else max(L)), max(L)
        qv = (lambda x: x.unsqueeze(0).expand(B, -1, -1, -1).reshape(B * nq, H, D)) if bq else (lambda x: x)
        if which == "fa4":
            from flash_attn.cute import flash_attn_varlen_func as fa4
            def f():
                r = fa4(qv(self.t[0]), self.t[1], self.t[2], cu_seqlens_q=offq, cu_seqlens_k=offk,
                        max_seqlen_q=mq, max_seqlen_k=mk, causal=causal)
                return r[0] if isinstance(r, tuple) else r
            self.name = "fa4"
        else:
            ws = (-1, 0) if causal else (-1, -1)
            f = lambda: varlen_attn(qv(self.t[0]), self.t[1], self.t[2], offq, offk, mq, mk, window_size=ws)
            self.name = "fa2-varlen"
        self.f = f

    def fwd(self):
        with torch.no_grad():
            self.f()

    def fb(self, do):
        for t in self.t:
            t.grad = None
        self.f().backward(do)

    def grads(self):
        return [self.back(t.grad) for t in self.t]

    def bwd_direct(self, do):
        """The backward alone: one forward kept with its graph, then
        torch.autograd.grad over it (retain_graph) per call, so no forward
        is timed and nothing is subtracted."""
        with torch.enable_grad():
            out = self.f()
        return lambda: torch.autograd.grad(out, self.t, do, retain_graph=True)


def main_bwd(a, jfa):
    """--bwd: our backward beside the peer's, alternating, one process."""
    dev = "cuda"
    suites = json.load(open(os.path.join(a.suites, "suites.json")))
    rows, ok = [], True
    print(f"backward: protocol peers.py's bench() (3 warm-up + median of {a.reps}), alternating, {a.rounds} rounds; "
          "peer bwd = fwd+bwd - fwd; 'direct': the peer's backward alone (autograd.grad over a kept forward)",
          flush=True)
    print("suite  peer          ours bwd ms  peer bwd ms  ours TF/s  peer TF/s  ours/peer  step ours/peer  "
          "dq_err  dk_err  dv_err  peer direct ms  ours/peer direct")
    for s in suites:
        if a.only and s["name"] not in a.only.split(","):
            continue
        s["lengths"] = [int(x) for x in open(os.path.join(a.suites, s["lengths_file"])).read().split()]
        H, D, causal, L = s["heads"], s["head_dim"], s["causal"], s["lengths"]
        B, tot = len(L), sum(L)
        bq = s["mode"] == "broadcast_q"
        nq = s["num_q"] if bq else 0
        k = torch.randn(tot, H, D, device=dev, dtype=torch.bfloat16)
        v = torch.randn_like(k)
        q = torch.randn(nq if bq else tot, H, D, device=dev, dtype=torch.bfloat16)
        o = torch.empty((B, nq, H, D) if bq else (tot, H, D), device=dev, dtype=torch.bfloat16)
        do = torch.randn_like(o)
        lse = torch.empty((B, H, nq) if bq else (H, tot), device=dev, dtype=torch.float32)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        plan = jfa.plan(L, H, D, causal, nq, passes=JFA_FWD | JFA_BWD)
        fwd = jfa.bind(plan, q, k, v, o, lse)
        bwd = jfa.bind_bwd(plan, do, q, k, v, o, lse, dq, dk, dv)
        peer = Peer(s, q, k, v, causal, a.peer)
        pdo = peer.do(do)
        pname = peer.name
        peer_f = peer.fwd
        peer_fb = lambda: peer.fb(pdo)
        def ours_fb():
            fwd(); bwd()
        with torch.no_grad():
            fwd(); bwd()
        peer_fb(); torch.cuda.synchronize()
        errs = tuple(rel(ours, ref) for ours, ref in zip((dq, dk, dv), peer.grads()))
        peer_b = peer.bwd_direct(pdo)
        ff = fwd_flops(s)
        tb, tpf, tpfb, tofb, tpb = [], [], [], [], []
        for i in range(a.rounds):
            for who in ((0, 1) if i % 2 == 0 else (1, 0)):
                if who == 0:
                    tb.append(bench(bwd, a.reps)); tofb.append(bench(ours_fb, a.reps))
                else:
                    tpf.append(bench(peer_f, a.reps)); tpfb.append(bench(peer_fb, a.reps))
                    tpb.append(bench(peer_b, a.reps))
        if a.timeline:
            timeline(f"{s['name']} ours bwd", bwd)
            timeline(f"{s['name']} {pname} bwd", peer_b)
        del peer_b
        mb, mpb, mpd = med(tb), med(tpfb) - med(tpf), med(tpb)
        step = (med(tpfb)) / med(tofb)
        bad = not all(e < 2e-2 for e in errs)
        ok &= not bad
        print(f"{s['name']:6s} {pname:12s} {mb:11.3f} {mpb:12.3f}  {2.5 * ff / mb / 1e9:9.1f}  "
              f"{2.5 * ff / mpb / 1e9:9.1f}   {mpb / mb:6.3f}x   {step:12.3f}x  "
              f"{errs[0]:.1e} {errs[1]:.1e} {errs[2]:.1e}  {mpd:14.3f}  {mpd / mb:15.3f}x"
              f"{'  FAIL' if bad else ''}", flush=True)
        rows.append({"suite": s["name"], "peer": pname, "ours_bwd_ms": mb, "peer_bwd_ms": mpb,
                     "peer_bwd_direct_ms": mpd,
                     "ours_step_ms": med(tofb), "peer_step_ms": med(tpfb), "grad_err": errs})
        del k, v, q, o, do, lse, dq, dk, dv, peer
        torch.cuda.empty_cache()
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    return 0 if ok else 1


def main_variant(a, jfa):
    """Attention variants (issue 17), forward: ours beside FA4 (and FA2
    varlen for windows) on the suites' lengths, as ../shared/bench/
    variant_peers.py sets them up: window W = keys i - W .. i (causal
    window), softcap C = C tanh(s / C) without a causal mask, blocksparse P
    (blocksparse_causal P): a random per-sequence mask of 128 x 128 blocks,
    each kept with probability P (AND causal), beside FlexAttention with the
    same block mask. Effective TFLOP/s over the (q, k) pairs the variant
    keeps."""
    suites = json.load(open(os.path.join(a.suites, "suites.json")))
    from torch.nn.attention.varlen import varlen_attn
    fa4 = None
    try:
        from flash_attn.cute import flash_attn_varlen_func as fa4
    except Exception as e:
        print(f"(FA4 not importable: {e!r:.200}; FA2 varlen only)", flush=True)
    dev = "cuda"
    rows = []
    print("suite variant        peer        ours ms  peer ms   ours TF/s  peer TF/s  ours/peer  out_err")
    for s in suites:
        if s["name"] not in (a.only or "J1,J2").split(","):
            continue
        L = [int(x) for x in open(os.path.join(a.suites, s["lengths_file"])).read().split()]
        H, D, B, tot = s["heads"], s["head_dim"], len(L), sum(L)
        q = torch.randn(tot, H, D, device=dev, dtype=torch.bfloat16)
        k, v = torch.randn_like(q), torch.randn_like(q)
        o = torch.empty_like(q)
        lse = torch.empty((H, tot), device=dev, dtype=torch.float32)
        off = torch.zeros(B + 1, dtype=torch.int32, device=dev)
        off[1:] = torch.cumsum(torch.tensor(L, device=dev), 0)
        mx = max(L)
        passes = JFA_FWD | (JFA_BWD if a.bwd_variants else 0)
        if a.bwd_variants:
            do = torch.randn_like(q)
            dq, dk, dv = torch.empty_like(q), torch.empty_like(q), torch.empty_like(q)
        for spec in a.variant.split(","):
            kind, val = spec.split(":")
            if kind == "window":
                W = int(val)
                plan = jfa.plan(L, H, D, False, 0, window=(W, 0), passes=passes)
                pairs = sum(sum(min(i + 1, W + 1) for i in range(n)) for n in L)
                kw4, ws = {"window_size": (W, 0)}, (W, 0)
            elif kind == "softcap":
                cap = float(val)
                plan = jfa.plan(L, H, D, False, 0, softcap=cap, passes=passes)
                pairs = sum(n * n for n in L)
                kw4, ws = {"softcap": cap}, None
            elif kind.startswith("blocksparse"):  # as ../shared/bench/variant_peers.py: per sequence, random
                bcausal = kind == "blocksparse_causal"
                nbm = max(64, (mx + 127) // 128)
                g = torch.Generator(device=dev).manual_seed(7)
                rb = torch.rand(B, nbm, nbm, device=dev, generator=g) < float(val)
                rbc = rb.cpu()
                mask, pairs = bytearray(), 0
                for b, n in enumerate(L):
                    nb = (n + 127) // 128
                    m = rbc[b, :nb, :nb]
                    mask += bytes(m.to(torch.uint8).flatten().tolist())
                    for i in range(nb):          # kept pairs (causal: a diagonal block's lower triangle)
                        for j in range(nb if not bcausal else i + 1):
                            if m[i, j]:
                                t = min(128, n - 128 * i)
                                pairs += t * (t + 1) // 2 if bcausal and j == i else t * min(128, n - 128 * j)
                plan = jfa.plan(L, H, D, bcausal, 0, block_mask=mask, passes=passes)
                kw4, ws = None, None
            else:                                  # alibi: ALiBi's slopes 2^(-8 (h + 1) / H), no causal mask
                slopes = [2.0 ** (-8.0 * (h + 1) / H) for h in range(H)]
                plan = jfa.plan(L, H, D, False, 0, alibi=slopes, passes=passes)
                pairs = sum(n * n for n in L)
                kw4, ws = None, None
            ours = jfa.bind(plan, q, k, v, o, lse)
            if a.bwd_variants:
                ours_b = jfa.bind_bwd(plan, do, q, k, v, o, lse, dq, dk, dv)
                def ours_fb(ours=ours, ours_b=ours_b):
                    ours(); ours_b()
            peers = []
            if kind.startswith("blocksparse"):     # FlexAttention with the same block mask
                from torch.nn.attention.flex_attention import flex_attention, create_block_mask
                import torch._dynamo as dynamo
                dynamo.config.recompile_limit = 256
                from torch._functorch import config as fcfg   # the direct backward below keeps its graph
                fcfg.donated_buffer = False                   # (retain_graph), which donated buffers refuse
                Lt = torch.tensor(L, device=dev)
                doc = torch.repeat_interleave(torch.arange(B, device=dev), Lt)
                pos = torch.arange(tot, device=dev) - off[doc].long()
                if bcausal:
                    mm = lambda b, h, qi, ki: ((doc[qi] == doc[ki]) & rb[doc[qi], pos[qi] // 128, pos[ki] // 128]
                                               & (pos[ki] <= pos[qi]))
                else:
                    mm = lambda b, h, qi, ki: (doc[qi] == doc[ki]) & rb[doc[qi], pos[qi] // 128, pos[ki] // 128]
                bm = create_block_mask(mm, None, None, tot, tot, device=dev, _compile=True)
                fx = torch.compile(flex_attention)
                t4 = lambda t: t.transpose(0, 1).unsqueeze(0)
                fxon = lambda q_, k_, v_, bm=bm: fx(t4(q_), t4(k_), t4(v_), block_mask=bm)[0].transpose(0, 1)
                fl = lambda fxon=fxon: fxon(q, k, v)
                fl.fwd_on = fxon
                peers.append(("flex", fl))
            if kind == "alibi":                    # FlexAttention, as ../shared/bench/variant_peers.py
                from torch.nn.attention.flex_attention import flex_attention, create_block_mask
                import torch._dynamo as dynamo       # (a plain `import torch._dynamo` would make torch local here)
                dynamo.config.recompile_limit = 256
                from torch._functorch import config as fcfg   # the direct backward below keeps its graph
                fcfg.donated_buffer = False                   # (retain_graph), which donated buffers refuse
                Lt = torch.tensor(L, device=dev)
                doc = torch.repeat_interleave(torch.arange(B, device=dev), Lt)
                pos = torch.arange(tot, device=dev) - off[doc].long()
                sl = torch.tensor(slopes, device=dev)
                bm = create_block_mask(lambda b, h, qi, ki: doc[qi] == doc[ki], None, None, tot, tot, device=dev,
                                       _compile=True)
                fx = torch.compile(flex_attention)
                t4 = lambda t: t.transpose(0, 1).unsqueeze(0)
                sm = lambda sc, b, h, qi, ki: sc - sl[h] * (pos[qi] - pos[ki]).abs()
                fxon = lambda q_, k_, v_: fx(t4(q_), t4(k_), t4(v_), block_mask=bm, score_mod=sm)[0].transpose(0, 1)
                fl = lambda: fxon(q, k, v)
                fl.fwd_on = fxon
                peers.append(("flex", fl))
            if fa4 is not None and kw4 is not None:
                def f4on(q_, k_, v_, kw4=kw4):
                    r = fa4(q_, k_, v_, cu_seqlens_q=off, cu_seqlens_k=off, max_seqlen_q=mx, max_seqlen_k=mx, **kw4)
                    return r[0] if isinstance(r, tuple) else r
                f4 = lambda f4on=f4on: f4on(q, k, v)
                f4.fwd_on = f4on
                peers.append(("fa4", f4))
            if ws is not None:
                f2on = lambda q_, k_, v_, ws=ws: varlen_attn(q_, k_, v_, off, off, mx, mx, window_size=ws)
                f2 = lambda f2on=f2on: f2on(q, k, v)
                f2.fwd_on = f2on
                peers.append(("fa2-varlen", f2))
            ff = 4.0 * H * D * pairs
            for pname, peer in peers:
                with torch.no_grad():
                    ours(); r = peer(); torch.cuda.synchronize()
                    err = ((o.float() - r.float()).norm() / r.float().norm()).item()
                to, tp = [], []
                with torch.no_grad():
                    for i in range(a.rounds):
                        for who in ((0, 1) if i % 2 == 0 else (1, 0)):
                            if who == 0:
                                to.append(bench(ours, a.reps))
                            else:
                                tp.append(bench(peer, a.reps))
                mo, mp = med(to), med(tp)
                print(f"{s['name']:5s} {spec:14s} {pname:10s} {mo:8.3f} {mp:8.3f}  {ff / mo / 1e9:9.1f}  "
                      f"{ff / mp / 1e9:9.1f}   {mp / mo:6.3f}x  {err:.1e}{'  FAIL' if not err < 2e-2 else ''}",
                      flush=True)
                row = {"suite": s["name"], "variant": spec, "peer": pname, "ours_ms": mo, "peer_ms": mp,
                       "out_err": err, "flops": ff}
                if a.bwd_variants:                 # forward + backward, alternating; bwd = that - fwd
                    qp, kp, vp = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
                    def peer_fb(peer=peer, qp=qp, kp=kp, vp=vp):
                        for t in (qp, kp, vp):
                            t.grad = None
                        with torch.enable_grad():
                            peer.fwd_on(qp, kp, vp).backward(do)
                    ours_fb(); peer_fb(); torch.cuda.synchronize()
                    gerr = max(((g1.float() - g2.grad.float()).norm() / g2.grad.float().norm()).item()
                               for g1, g2 in ((dq, qp), (dk, kp), (dv, vp)))
                    # and each backward alone: ours by itself, the peer's by
                    # autograd.grad over one kept forward (nothing subtracted)
                    with torch.enable_grad():
                        pout = peer.fwd_on(qp, kp, vp)
                    peer_b = lambda pout=pout, qp=qp, kp=kp, vp=vp: torch.autograd.grad(pout, (qp, kp, vp), do,
                                                                                       retain_graph=True)
                    tob, tpb, tod, tpd = [], [], [], []
                    for i in range(a.rounds):
                        for who in ((0, 1) if i % 2 == 0 else (1, 0)):
                            if who == 0:
                                tob.append(bench(ours_fb, a.reps)); tod.append(bench(ours_b, a.reps))
                            else:
                                tpb.append(bench(peer_fb, a.reps)); tpd.append(bench(peer_b, a.reps))
                    if a.timeline:
                        timeline(f"{s['name']} {spec} ours bwd", ours_b)
                        timeline(f"{s['name']} {spec} {pname} bwd", peer_b)
                    del peer_b, pout
                    bo, bp = med(tob) - mo, med(tpb) - mp
                    do_, dp_ = med(tod), med(tpd)
                    print(f"{'':5s} {spec:14s} {pname:10s} bwd direct {do_:8.3f} {dp_:8.3f}  "
                          f"{2.5 * ff / do_ / 1e9:9.1f}  {2.5 * ff / dp_ / 1e9:9.1f}   {dp_ / do_:6.3f}x", flush=True)
                    print(f"{'':5s} {spec:14s} {pname:10s} bwd {bo:8.3f} {bp:8.3f}  {2.5 * ff / bo / 1e9:9.1f}  "
                          f"{2.5 * ff / bp / 1e9:9.1f}   {bp / bo:6.3f}x  grad_err {gerr:.1e}"
                          f"{'  FAIL' if not gerr < 2e-2 else ''}", flush=True)
                    row.update({"ours_bwd_ms": bo, "peer_bwd_ms": bp, "grad_err": gerr,
                                "ours_bwd_direct_ms": do_, "peer_bwd_direct_ms": dp_})
                    if not gerr < 2e-2:
                        row["out_err"] = gerr
                rows.append(row)
            jfa.L.jfa_plan_destroy(plan)
        del q, k, v, o, lse
        torch.cuda.empty_cache()
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    return 0 if all(r["out_err"] < 2e-2 for r in rows) else 1


def timeline(what, fn, n=5):
    """--timeline: n calls of fn under torch.profiler (CUPTI, real clocks,
    nothing serialized): each kernel's mean duration, and per call the GPU's
    span from the first kernel's start to the last one's end, so gaps
    between one call's kernels show as span - sum."""
    from torch.profiler import profile, ProfilerActivity
    fn(); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            fn()
            torch.cuda.synchronize()
    ev = [e for e in prof.events() if str(e.device_type).endswith("CUDA")]
    ev.sort(key=lambda e: e.time_range.start)
    per = {}
    for e in ev:
        per.setdefault(e.name[:70], []).append(e.time_range.elapsed_us())
    tot = sum(sum(v) for v in per.values()) / n
    m = len(ev) // n                      # every call launches the same kernels
    spans = sorted(ev[i * m + m - 1].time_range.end - ev[i * m].time_range.start for i in range(n)) if m else [0]
    print(f"timeline {what}: {m} kernels a call, their durations {tot / 1e3:.3f} ms a call, first start to "
          f"last end {spans[len(spans) // 2] / 1e3:.3f} ms (median of {n})", flush=True)
    for k, v in per.items():
        print(f"  {sum(v) / len(v) / 1e3:8.3f} ms x{len(v) // n}  {k}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default="build-gpu/lib/libjfa.so")
    ap.add_argument("--cubins", default="build-gpu/examples")
    ap.add_argument("--suites", default="build-gpu/shared-bench/suites")
    ap.add_argument("--only")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--gap", type=float, default=0.0)
    ap.add_argument("--json")
    ap.add_argument("--bwd", action="store_true")
    ap.add_argument("--peer", default="", help="fa4: FlashAttention-4 as the backward's peer")
    ap.add_argument("--variant", default="", help="window:256,softcap:30,blocksparse:0.5,blocksparse_causal:0.5: "
                    "the forward variants beside FA4/FA2/FlexAttention")
    ap.add_argument("--bwd-variants", action="store_true", help="with --variant: forward + backward too")
    ap.add_argument("--timeline", action="store_true",
                    help="with --bwd or --bwd-variants: each backward's kernels under torch.profiler (durations, gaps)")
    a = ap.parse_args()
    if (a.peer == "fa4" or a.variant) and os.path.isdir("/tmp/site"):
        import site
        site.addsitedir("/tmp/site")          # the carried wheels (../shared/bench/fa4_wheels.sh)
    torch.manual_seed(0)
    dev = "cuda"
    torch.zeros(1, device=dev)                # PyTorch's context first; the runtime retains the same one
    jfa = Jfa(a.lib, a.cubins)
    if a.bwd:
        return main_bwd(a, jfa)
    if a.variant:
        return main_variant(a, jfa)
    from torch.nn.attention import sdpa_kernel, SDPBackend
    from torch.nn.attention.varlen import varlen_attn
    suites = json.load(open(os.path.join(a.suites, "suites.json")))
    rows = []
    print(f"protocol: peers.py's bench() (3 warm-up + median of {a.reps}), ours and the peer alternating, "
          f"{a.rounds} rounds a suite, gap {a.gap}s", flush=True)
    print("suite  peer                ours ms  peer ms   ours TF/s  peer TF/s  ours/peer  spread(ours,peer)  out_err")
    for s in suites:
        if a.only and s["name"] not in a.only.split(","):
            continue
        s["lengths"] = [int(x) for x in open(os.path.join(a.suites, s["lengths_file"])).read().split()]
        H, D, causal, L = s["heads"], s["head_dim"], s["causal"], s["lengths"]
        B = len(L)
        bq = s["mode"] == "broadcast_q"
        nq = s["num_q"] if bq else 0
        tot = sum(L)
        k = torch.randn(tot, H, D, device=dev, dtype=torch.bfloat16)
        v = torch.randn_like(k)
        q = torch.randn(nq if bq else tot, H, D, device=dev, dtype=torch.bfloat16)
        o = torch.empty((B, nq, H, D) if bq else (tot, H, D), device=dev, dtype=torch.bfloat16)
        lse = torch.empty((B, H, nq) if bq else (H, tot), device=dev, dtype=torch.float32)
        plan = jfa.plan(L, H, D, causal, nq)
        ours = jfa.bind(plan, q, k, v, o, lse)
        peer_o = Peer(s, q, k, v, causal, a.peer)    # FA2 varlen / dense cuDNN, or FA4 (--peer fa4)
        pname = peer_o.name
        peer = peer_o.fwd
        ref = lambda: peer_o.back(peer_o.f()).reshape(o.shape)
        with torch.no_grad():
            ours(); r = ref(); torch.cuda.synchronize()
            err = ((o.float() - r.float()).norm() / r.float().norm()).item()
        ff = fwd_flops(s)
        to, tp = [], []
        with torch.no_grad():
            for i in range(a.rounds):
                for who in ((0, 1) if i % 2 == 0 else (1, 0)):
                    if a.gap > 0:
                        torch.cuda.synchronize(); time.sleep(a.gap)
                    if who == 0:
                        to.append(bench(ours, a.reps))
                    else:
                        tp.append(bench(peer, a.reps))
        mo, mp = med(to), med(tp)
        spread = f"{(max(to) - min(to)) / mo * 100:4.1f}%,{(max(tp) - min(tp)) / mp * 100:4.1f}%"
        print(f"{s['name']:6s} {pname:16s} {mo:8.3f} {mp:8.3f}  {ff / mo / 1e9:9.1f}  {ff / mp / 1e9:9.1f}   "
              f"{mp / mo:6.3f}x   {spread:>16s}  {err:.1e}{'  FAIL' if not err < 2e-2 else ''}", flush=True)
        rows.append({"suite": s["name"], "peer": pname, "ours_ms": mo, "peer_ms": mp, "ours_rounds": to,
                     "peer_rounds": tp, "out_err": err})
        del k, v, q, o, lse, peer_o
        torch.cuda.empty_cache()
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    return 0 if all(r["out_err"] < 2e-2 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

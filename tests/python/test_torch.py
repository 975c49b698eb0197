"""tests/python/test_torch.py - the PyTorch side without a GPU: argument
checks of jfa_varlen_func / jfa_broadcast_q raise before anything is
launched; under TILE_INTERPRET=1 (the emulator; CPU tensors are staged
through emulator memory) the custom op's forward and backward against
float64 PyTorch attention on tiny jagged shapes, broadcast-Q, a sliding
window and soft-capping (forward), the fake-tensor implementation
(torch.library.opcheck) and torch.compile tracing of the op, and
tile.Kernel launched on torch tensors.

Run by tests/python/run.sh; needs torch (run.sh skips it, saying so, when
torch cannot be imported).
"""
import math
import os
import shutil
import unittest

import torch

import tile
from tile import _lib, jfa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTOR_ADD = os.path.join(ROOT, "examples", "vector_add", "vector_add.tile")
GEMM = os.path.join(ROOT, "examples", "gemm", "gemm.tile")
EMU = _lib.interpreting()


def cu_of(lengths, dtype=torch.int32):
    out = [0]
    for n in lengths:
        out.append(out[-1] + n)
    return torch.tensor(out, dtype=dtype)


def ref_varlen(q, k, v, lengths, causal=False, scale=None, window=(-1, -1), softcap=0.0, alibi=None,
               block_mask=None):
    """float64 attention per sequence: out [T, H, D], lse [H, T]. block_mask:
    a 2-D mask of 128 x 128 blocks for every sequence, or a list of one per
    sequence; a row that sees no key gets 0 (and LSE -inf)."""
    D = q.shape[-1]
    scale = 1 / math.sqrt(D) if scale is None else scale
    outs, lses, s = [], [], 0
    for n in lengths:
        Q, K, V = (x[s:s + n].double().transpose(0, 1) for x in (q, k, v))
        S = Q @ K.transpose(1, 2) * scale
        if softcap > 0:
            S = softcap * torch.tanh(S / softcap)
        i = torch.arange(n).view(-1, 1)
        j = torch.arange(n).view(1, -1)
        if alibi is not None:
            S = S - torch.tensor(alibi, dtype=torch.float64).view(-1, 1, 1) * (i - j).abs()
        keep = torch.ones(n, n, dtype=torch.bool)
        if causal:
            keep &= j <= i
        if window[0] >= 0:
            keep &= j >= i - window[0]
        if window[1] >= 0:
            keep &= j <= i + window[1]
        if block_mask is not None:
            bm = block_mask[len(outs)] if isinstance(block_mask, list) else block_mask
            keep &= bm.bool()[i // 128, j // 128]
        # a large finite fill, the empty rows zeroed after: no NaN, in the gradients either
        S = S.masked_fill(~keep, -1e300)
        seen = keep.any(-1)
        lses.append(torch.logsumexp(S, -1).masked_fill(~seen, float("-inf")))
        outs.append(((torch.softmax(S, -1) * keep) @ V).transpose(0, 1))
        s += n
    return torch.cat(outs, 0), torch.cat(lses, 1)


def ref_bcast(q, k, v, lengths, scale=None):
    D = q.shape[-1]
    scale = 1 / math.sqrt(D) if scale is None else scale
    outs, s = [], 0
    Q = q.double().transpose(0, 1)
    for n in lengths:
        K, V = (x[s:s + n].double().transpose(0, 1) for x in (k, v))
        S = Q @ K.transpose(1, 2) * scale
        outs.append((torch.softmax(S, -1) @ V).transpose(0, 1))
        s += n
    return torch.stack(outs, 0)


def qkv(lengths, H, D, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    T = sum(lengths)
    ts = [torch.randn(T, H, D, generator=g).bfloat16() for _ in range(3)]
    return [t.requires_grad_(grad) for t in ts]


class NoLaunch:
    """Fails the test if JFA plans or launches anything inside."""

    def __enter__(self):
        self.saved = (jfa.Jfa.plan, jfa.Jfa.forward, jfa.Jfa.backward)

        def boom(*a, **k):
            raise AssertionError("launched or planned before the argument check")
        jfa.Jfa.plan = jfa.Jfa.forward = jfa.Jfa.backward = boom
        return self

    def __exit__(self, *exc):
        jfa.Jfa.plan, jfa.Jfa.forward, jfa.Jfa.backward = self.saved
        return False


class ArgumentChecks(unittest.TestCase):
    """Every bad argument raises before anything is planned or launched."""

    def setUp(self):
        self.q, self.k, self.v = qkv([5, 3], 2, 64)
        self.cu = cu_of([5, 3])

    def call(self, q=None, k=None, v=None, cu_q=None, cu_k=None, mq=5, mk=5, **kw):
        q = self.q if q is None else q
        k = self.k if k is None else k
        v = self.v if v is None else v
        cu_q = self.cu if cu_q is None else cu_q
        cu_k = cu_q if cu_k is None else cu_k
        with NoLaunch():
            return tile.jfa_varlen_func(q, k, v, cu_q, cu_k, mq, mk, **kw)

    def test_shapes_dtypes(self):
        with self.assertRaisesRegex(TypeError, "bfloat16"):
            self.call(q=self.q.float())
        with self.assertRaisesRegex(TypeError, "bfloat16"):
            self.call(v=self.v.half())
        with self.assertRaisesRegex(ValueError, "3-D"):
            self.call(q=self.q.reshape(8, 128))
        with self.assertRaisesRegex(ValueError, "one shape"):
            self.call(k=self.k[:7])
        with self.assertRaisesRegex(ValueError, "head_dim must be 64 or 128"):
            q, k, v = qkv([5, 3], 2, 32)
            self.call(q=q, k=k, v=v)
        with self.assertRaisesRegex(ValueError, "one shape"):
            q, k, v = qkv([5, 3], 1, 64)
            self.call(q=q)
        with self.assertRaisesRegex(TypeError, "torch.Tensor"):
            self.call(q=[1, 2, 3])

    def test_cu_seqlens(self):
        with self.assertRaisesRegex(TypeError, "int32 or torch.int64"):
            self.call(cu_q=self.cu.float())
        with self.assertRaisesRegex(ValueError, "1-D"):
            self.call(cu_q=self.cu.view(1, 3))
        with self.assertRaisesRegex(ValueError, r"\[0\] is 1"):
            self.call(cu_q=torch.tensor([1, 5, 8], dtype=torch.int32))
        with self.assertRaisesRegex(ValueError, "non-decreasing"):
            self.call(cu_q=torch.tensor([0, 6, 5, 8], dtype=torch.int32))
        with self.assertRaisesRegex(ValueError, "8 rows"):
            self.call(cu_q=torch.tensor([0, 5, 9], dtype=torch.int32))
        with self.assertRaisesRegex(ValueError, "same offsets"):
            self.call(cu_q=self.cu, cu_k=torch.tensor([0, 4, 8], dtype=torch.int32))
        with self.assertRaisesRegex(ValueError, "same offsets"):
            self.call(cu_q=self.cu, cu_k=torch.tensor([0, 8], dtype=torch.int32))
        with self.assertRaisesRegex(ValueError, "max_seqlen_q is 4"):
            self.call(mq=4)
        with self.assertRaisesRegex(ValueError, "max_seqlen_k must be >= 0"):
            self.call(mq=None, mk=-1, seqlens_host=None, cu_q=self.cu)
        with self.assertRaisesRegex(ValueError, "seqlens_host has 3 lengths"):
            self.call(seqlens_host=[5, 3, 0])
        with self.assertRaisesRegex(ValueError, "8 rows"):
            self.call(seqlens_host=[5, 4])

    def test_flags(self):
        with self.assertRaisesRegex(ValueError, "softmax_scale"):
            self.call(softmax_scale=-1.0)
        with self.assertRaisesRegex(ValueError, "softcap"):
            self.call(softcap=float("nan"))
        with self.assertRaisesRegex(ValueError, "window_size"):
            self.call(window_size=(-2, 3))
        with self.assertRaisesRegex(ValueError, "window_size"):
            self.call(window_size=5)
        with self.assertRaisesRegex(NotImplementedError, "dropout"):
            self.call(dropout_p=0.1)

    def test_bcast(self):
        q = torch.randn(4, 2, 64).bfloat16()
        with NoLaunch():
            with self.assertRaisesRegex(ValueError, "heads and head_dim"):
                tile.jfa_broadcast_q(torch.randn(4, 1, 64).bfloat16(), self.k, self.v, self.cu)
            with self.assertRaisesRegex(ValueError, "8 rows"):
                tile.jfa_broadcast_q(q, self.k, self.v, torch.tensor([0, 9], dtype=torch.int32))
            with self.assertRaisesRegex(ValueError, "max_seqlen_k is 2"):
                tile.jfa_broadcast_q(q, self.k, self.v, self.cu, 2)

    def test_cpu_without_emulator(self):
        saved = os.environ.get("TILE_INTERPRET")
        try:
            os.environ["TILE_INTERPRET"] = "0"
            with self.assertRaisesRegex(ValueError, "CUDA tensors"):
                self.call()
        finally:
            if saved is None:
                os.environ.pop("TILE_INTERPRET", None)
            else:
                os.environ["TILE_INTERPRET"] = saved

    def test_c_library_refusal(self):
        # what only the C library knows: window + softcap together are not built
        if not EMU:
            self.skipTest("needs TILE_INTERPRET=1")
        with self.assertRaises(tile.TileInvalidArgument) as cm:
            tile.jfa_varlen_func(self.q, self.k, self.v, self.cu, self.cu, 5, 5, window_size=(2, 2), softcap=3.0)
        self.assertIn("window", str(cm.exception))


@unittest.skipUnless(EMU, "needs TILE_INTERPRET=1 (the emulator)")
class Numerics(unittest.TestCase):
    """On the emulator, against float64 PyTorch."""

    @classmethod
    def tearDownClass(cls):
        tile.clear_plans()

    def check_close(self, got, want, tol, what):
        err = (got.double() - want).abs().max().item() if got.numel() else 0.0
        scale = max(want.abs().max().item(), 1.0) if want.numel() else 1.0
        self.assertLess(err / scale, tol, "%s: max error %.4g (scale %.3g)" % (what, err, scale))

    def test_forward_backward(self):
        for lengths, H, D, causal in (([5, 0, 37, 17], 2, 64, False), ([5, 0, 37, 17], 2, 64, True),
                                      ([70, 3], 1, 128, True)):
            q, k, v = qkv(lengths, H, D, seed=len(lengths) + D, grad=True)
            cu = cu_of(lengths)
            out, lse = tile.jfa_varlen_func(q, k, v, cu, cu, max(lengths), max(lengths), causal=causal,
                                            return_lse=True)
            do = torch.randn_like(out)
            out.backward(do)
            q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
            ro, rl = ref_varlen(q64, k64, v64, lengths, causal)
            ro.backward(do.double())
            what = "lengths %s H %d D %d causal %s" % (lengths, H, D, causal)
            self.check_close(out, ro.detach(), 0.02, what + " out")
            self.check_close(lse, rl.detach(), 1e-4, what + " lse")
            self.check_close(q.grad, q64.grad, 0.03, what + " dq")
            self.check_close(k.grad, k64.grad, 0.03, what + " dk")
            self.check_close(v.grad, v64.grad, 0.03, what + " dv")

    def test_training_loop_updates_plans(self):
        # a new batch every step, one shape: after MAX_PLANS_PER_SHAPE plans
        # the oldest is re-planned in place (jfa_plan_update), and every step
        # stays right, forward and backward, the updated plans bigger and
        # smaller than before
        from tile import jfa as J
        tile.clear_plans()
        steps = [[5, 40], [1], [33, 0, 9, 60], [2, 2, 2], [70], [13, 31], [8], [50, 50, 1], [5, 40]]
        handles = set()
        for i, lengths in enumerate(steps):
            q, k, v = qkv(lengths, 1, 64, seed=100 + i, grad=True)
            cu = cu_of(lengths)
            out = tile.jfa_varlen_func(q, k, v, cu, cu, max(lengths), max(lengths), causal=True,
                                       seqlens_host=torch.tensor(lengths, dtype=torch.int32))
            do = torch.randn_like(out)
            out.backward(do)
            q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
            ro, _ = ref_varlen(q64, k64, v64, lengths, True)
            ro.backward(do.double())
            what = "step %d lengths %s" % (i, lengths)
            self.check_close(out, ro.detach(), 0.02, what + " out")
            self.check_close(q.grad, q64.grad, 0.03, what + " dq")
            self.check_close(k.grad, k64.grad, 0.03, what + " dk")
            self.check_close(v.grad, v64.grad, 0.03, what + " dv")
            plans = list(J.default()._plans.values())
            self.assertLessEqual(len(plans), J.MAX_PLANS_PER_SHAPE, what)
            handles.update(p.handle.value for p in plans)
        # the same handles served all nine batches: updated, not re-created
        self.assertLessEqual(len(handles), J.MAX_PLANS_PER_SHAPE)

    def test_scale_seqlens_host_int64(self):
        lengths = [9, 20]
        q, k, v = qkv(lengths, 1, 64, seed=3)
        cu = cu_of(lengths, torch.int64)
        out = tile.jfa_varlen_func(q, k, v, cu, cu, 20, 20, softmax_scale=0.3, seqlens_host=torch.tensor(lengths))
        ro, _ = ref_varlen(q, k, v, lengths, scale=0.3)
        self.check_close(out, ro, 0.02, "softmax_scale 0.3")

    def test_strided_rows(self):
        # q, k, v as views of a packed [T, 3, H, D] tensor (rows 3HD apart)
        lengths = [11, 6]
        T, H, D = sum(lengths), 2, 64
        qkv_packed = torch.randn(T, 3, H, D).bfloat16()
        q, k, v = qkv_packed.unbind(1)
        out = tile.jfa_varlen_func(q, k, v, cu_of(lengths), cu_of(lengths), 11, 11, causal=True)
        ro, _ = ref_varlen(q, k, v, lengths, causal=True)
        self.check_close(out, ro, 0.02, "strided q, k, v")

    def test_broadcast_q(self):
        lengths = [7, 0, 30]
        H, D, NQ = 2, 64, 5
        q = torch.randn(NQ, H, D).bfloat16().requires_grad_()
        _, k, v = qkv(lengths, H, D, seed=11, grad=True)
        out, lse = tile.jfa_broadcast_q(q, k, v, cu_of(lengths), 30, return_lse=True)
        self.assertEqual(tuple(out.shape), (3, NQ, H, D))
        self.assertEqual(tuple(lse.shape), (3, H, NQ))
        ro = ref_bcast(q, k, v, lengths)
        nonempty = [0, 2]  # an empty sequence has no defined output
        self.check_close(out[nonempty], ro[nonempty], 0.02, "broadcast-Q out")
        do = torch.randn_like(out)
        do[1] = 0
        out.backward(do)
        q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
        r = ref_bcast(q64, k64, v64, lengths)
        r[nonempty].backward(do[nonempty].double())
        self.check_close(q.grad, q64.grad, 0.03, "broadcast-Q dq")
        self.check_close(k.grad, k64.grad, 0.03, "broadcast-Q dk")
        self.check_close(v.grad, v64.grad, 0.03, "broadcast-Q dv")

    def test_window_and_softcap_forward(self):
        lengths = [40, 9]
        q, k, v = qkv(lengths, 1, 64, seed=5)
        cu = cu_of(lengths)
        for window, causal in (((8, 3), False), ((5, -1), True), ((-1, 0), False)):
            out = tile.jfa_varlen_func(q, k, v, cu, cu, 40, 40, window_size=window, causal=causal)
            w = (window[0], 0) if causal else window
            ro, _ = ref_varlen(q, k, v, lengths, causal=causal, window=w)
            self.check_close(out, ro, 0.02, "window %s causal %s" % (window, causal))
        out = tile.jfa_varlen_func(q, k, v, cu, cu, 40, 40, softcap=2.0)
        ro, _ = ref_varlen(q, k, v, lengths, softcap=2.0)
        self.check_close(out, ro, 0.02, "softcap 2")
        for causal in (False, True):
            slopes = [0.5, 0.0625]
            q2, k2, v2 = qkv(lengths, 2, 64, seed=6)
            out = tile.jfa_varlen_func(q2, k2, v2, cu, cu, 40, 40, causal=causal, alibi_slopes=slopes)
            ro, _ = ref_varlen(q2, k2, v2, lengths, causal=causal, alibi=slopes)
            self.check_close(out, ro, 0.02, "alibi causal %s" % causal)
        with self.assertRaisesRegex(ValueError, "one slope per head"):
            tile.jfa_varlen_func(q, k, v, cu, cu, 40, 40, alibi_slopes=[0.5, 0.25])
        # the variants' backward: right where the library has one, else it says so
        for kw in (dict(softcap=2.0), dict(window_size=(8, 3))):
            qg = q.detach().requires_grad_()
            out = tile.jfa_varlen_func(qg, k, v, cu, cu, 40, 40, **kw)
            try:
                out.float().sum().backward()
            except tile.TileInvalidArgument as e:
                self.assertIn("backward", str(e))
                continue
            q64 = q.detach().double().requires_grad_()
            ro, _ = ref_varlen(q64, k, v, lengths, window=kw.get("window_size", (-1, -1)),
                               softcap=kw.get("softcap", 0.0))
            ro.sum().backward()
            self.check_close(qg.grad, q64.grad, 0.03, "%s dq" % kw)

    def test_block_sparse(self):
        # block-sparse: one mask for every sequence, or one per sequence (a
        # list), causal or not, forward and backward; rows that see no key
        lengths = [300, 100, 0, 129]
        g = torch.Generator().manual_seed(4)
        per_batch = torch.rand(4, 4, generator=g) < 0.5
        per_batch[0, 0] = False                   # rows 0..127 of sequence 0: no key at all
        per_seq = [torch.rand((n + 127) // 128, (n + 127) // 128, generator=g) < 0.5 for n in lengths]
        for mask, causal, H, D in ((per_batch, False, 1, 64), (per_seq, True, 2, 128)):
            q, k, v = qkv(lengths, H, D, seed=21, grad=True)
            cu = cu_of(lengths)
            out, lse = tile.jfa_varlen_func(q, k, v, cu, cu, 300, 300, causal=causal, block_mask=mask,
                                            return_lse=True)
            do = torch.randn_like(out)
            out.backward(do)
            q64, k64, v64 = (x.detach().double().requires_grad_() for x in (q, k, v))
            ro, rl = ref_varlen(q64, k64, v64, lengths, causal=causal, block_mask=mask)
            ro.backward(do.double())
            what = "block mask %s causal %s" % ("per sequence" if isinstance(mask, list) else "per batch", causal)
            self.check_close(out, ro.detach(), 0.02, what + " out")
            fin = torch.isfinite(rl)
            self.assertTrue(torch.equal(fin, torch.isfinite(lse)), what + ": the rows with LSE -inf")
            self.check_close(lse[fin], rl.detach()[fin], 1e-4, what + " lse")
            for n, a, b in (("dq", q.grad, q64.grad), ("dk", k.grad, k64.grad), ("dv", v.grad, v64.grad)):
                self.check_close(a, b, 0.03, what + " " + n)
        # every block skipped: zeros, LSE -inf; the mask 1-D (the per-sequence masks one after the other)
        q, k, v = qkv(lengths, 1, 64, seed=22)
        flat = torch.zeros(sum(((n + 127) // 128) ** 2 for n in lengths), dtype=torch.bool)
        out, lse = tile.jfa_varlen_func(q, k, v, cu_of(lengths), cu_of(lengths), 300, 300, block_mask=flat,
                                        return_lse=True)
        self.assertEqual(out.float().abs().max().item(), 0.0)
        self.assertTrue(bool(torch.isneginf(lse).all()))
        with self.assertRaisesRegex(TypeError, "bool or integer"):
            tile.jfa_varlen_func(q, k, v, cu_of(lengths), cu_of(lengths), 300, 300, block_mask=per_batch.float())
        with self.assertRaisesRegex(tile.TileInvalidArgument, "the longest sequence has 3 blocks"):
            tile.jfa_varlen_func(q, k, v, cu_of(lengths), cu_of(lengths), 300, 300, block_mask=per_batch[:2, :2])
        with self.assertRaisesRegex(tile.TileInvalidArgument, "one at a time"):
            tile.jfa_varlen_func(q, k, v, cu_of(lengths), cu_of(lengths), 300, 300, block_mask=per_batch, softcap=2.0)

    def test_deterministic_backward(self):
        lengths = [33, 12]
        grads = []
        for _ in range(2):
            q, k, v = qkv(lengths, 2, 64, seed=9, grad=True)
            out = tile.jfa_varlen_func(q, k, v, cu_of(lengths), cu_of(lengths), 33, 33, deterministic=True)
            out.float().square().sum().backward()
            grads.append(q.grad)
        self.assertTrue(torch.equal(grads[0], grads[1]))


@unittest.skipUnless(EMU, "needs TILE_INTERPRET=1 (the emulator)")
class Tracing(unittest.TestCase):
    def test_fake_tensors(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        with FakeTensorMode():
            q = torch.empty(50, 3, 128, dtype=torch.bfloat16)
            o, lse = torch.ops.tile.jfa_fwd(q, q, q, torch.empty(4, dtype=torch.int32), None, 0, True, 0.1, -1, -1,
                                            0.0, False, False)
            self.assertEqual((tuple(o.shape), o.dtype), ((50, 3, 128), torch.bfloat16))
            self.assertEqual((tuple(lse.shape), lse.dtype), ((3, 50), torch.float32))
            qb = torch.empty(6, 3, 128, dtype=torch.bfloat16)
            o, lse = torch.ops.tile.jfa_fwd(qb, q, q, torch.empty(4, dtype=torch.int32), None, 6, False, 0.1, -1, -1,
                                            0.0, False, False)
            self.assertEqual(tuple(o.shape), (3, 6, 3, 128))
            self.assertEqual(tuple(lse.shape), (3, 3, 6))

    def test_opcheck(self):
        lengths = [6, 10]
        q, k, v = qkv(lengths, 1, 64, seed=1, grad=True)
        args = (q, k, v, cu_of(lengths), None, 0, True, 0.125, -1, -1, 0.0, False, True)
        res = torch.library.opcheck(torch.ops.tile.jfa_fwd.default, args)
        self.assertTrue(all(r == "SUCCESS" for r in res.values()), res)

    def test_compile(self):
        lengths = [5, 21, 9]
        cu = cu_of(lengths)

        def f(q, k, v, cu):
            return tile.jfa_varlen_func(q, k, v, cu, cu, 21, 21, causal=True).float().square().sum()
        torch._dynamo.reset()
        cf = torch.compile(f, backend="aot_eager", fullgraph=True)
        q, k, v = qkv(lengths, 2, 64, seed=2, grad=True)
        loss = cf(q, k, v, cu)
        loss.backward()
        got = [x.grad.clone() for x in (q, k, v)]
        for x in (q, k, v):
            x.grad = None
        want = f(q, k, v, cu)
        want.backward()
        self.assertEqual(loss.item(), want.item())
        for a, x in zip(got, (q, k, v)):
            self.assertTrue(torch.equal(a, x.grad))


@unittest.skipUnless(EMU, "needs TILE_INTERPRET=1 (the emulator)")
class KernelOnTensors(unittest.TestCase):
    def test_vector_add(self):
        k = tile.Kernel(VECTOR_ADD, "vector_add", constants={"BLOCK": 256})
        for n in (1, 255, 257, 1000):
            x, y = torch.randn(n), torch.randn(n)
            out = torch.full((n,), float("nan"))
            k[(n + 255) // 256,](x, y, out, n)
            self.assertTrue(torch.equal(out, x + y))
        with self.assertRaisesRegex(TypeError, "a f64 tensor, the kernel reads f32"):
            k[1](x.double(), y, out, n)
        # a pointer is a pointer: a strided view passes its data_ptr, and the
        # kernel writes 300 consecutive floats from there, as on the GPU
        base = torch.zeros(2 * 300)
        x, y = torch.randn(300), torch.randn(300)
        k[2](x, y, base[::2], 300)
        self.assertTrue(torch.equal(base[:300], x + y))
        self.assertTrue(torch.equal(base[300:], torch.zeros(300)))

    def test_autotune(self):
        # CPU tensors staged for the emulator once per launch, whatever the
        # number of configs timed; the key from a tensor's shape and dtype
        import tempfile
        cache = tempfile.mkdtemp(prefix="tile_py_tune")
        try:
            at = tile.autotune(VECTOR_ADD, "vector_add", configs=[{"BLOCK": 128}, {"BLOCK": 512}], key=["x", "n"],
                               options={"cache_dir": cache}, reps=2)
            for n in (1, 700, 700):
                x, y = torch.randn(n), torch.randn(n)
                out = torch.full((n,), float("nan"))
                at[lambda meta: ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)](x, y, out, n)
                self.assertTrue(torch.equal(out, x + y))
            self.assertEqual(at.key_of((x, y, out, n)), "x=700:f32,n=700")
            self.assertFalse(at.last_stats["tuned"])  # the second n=700: from memory
            with self.assertRaisesRegex(TypeError, "a f64 tensor, the kernel reads f32"):
                at[1](x.double(), y, out, n)
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    def test_gemm_tma(self):
        # tma<...> parameters from tensors: A [M, K], B [N, K] with padded rows
        # (row pitch a multiple of 16 bytes, as TMA needs), C = A B^T
        k = tile.Kernel(GEMM, "gemm")
        self.assertEqual([p.kind for p in k.params], ["tma", "tma", "tma", "scalar", "scalar", "scalar"])
        M, N, K = 200, 300, 100
        A = torch.randn(M, 104).bfloat16()[:, :K]
        B = torch.randn(N, 104).bfloat16()[:, :K]
        C = torch.full((M, 304), float("nan")).bfloat16()[:, :N]
        tiles = ((M + 127) // 128) * ((N + 255) // 256)
        k[min(tiles, 132)](A, B, C, M, N, K)
        ref = A.double() @ B.double().T
        self.assertLess((C.double() - ref).abs().max().item(), 0.05 * ref.abs().max().item())
        with self.assertRaisesRegex(TypeError, "a f32 tensor, the descriptor is bf16"):
            k[1](A.float(), B, C, M, N, K)
        with self.assertRaises(tile.TileInvalidArgument):  # row pitch 200 bytes: not a multiple of 16
            k[1](torch.zeros(M, K).bfloat16(), B, C, M, N, K)


if __name__ == "__main__":
    unittest.main(verbosity=2)

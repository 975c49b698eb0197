"""Jagged Flash Attention from PyTorch: jfa_varlen_func (self-attention,
shaped like flash_attn_varlen_func) and jfa_broadcast_q, registered as the
custom ops tile::jfa_fwd and tile::jfa_bwd (autograd, fake tensors for
torch.compile), over libjfa (examples/jagged_attention/jfa.h) through ctypes.

The kernels are persistent and scheduled on the host: a plan (the schedule,
uploaded, and the backward's workspace) is made from the sequence lengths,
which therefore have to be on the host. Plans are cached by (device,
stream, lengths, heads, head dim, flags); a new set of lengths (a training
loop's next batch) updates the least recently used plan of the same shape
in place (jfa_plan_update: schedule rebuilt, uploaded on the stream, no
wait for the GPU) once MAX_PLANS_PER_SHAPE of them exist.
"""
import collections
import ctypes as C
import math
import threading

from . import _lib
from ._lib import JFA_BWD, JFA_FWD, JfaTensor, check

_BF16 = b"bf16"
_F32 = b"f32"
MAX_PLANS = 32  # plans kept per process (each holds device memory)
MAX_PLANS_PER_SHAPE = 4  # plans of one shape (all but the lengths) before the oldest is updated in place


# ---- the torch-free core: jfa_lib per device, plans, tensors as (ptr, shape, strides) ----

class RawTensor:
    """A strided device tensor: address, shape, element strides, dtype name."""

    def __init__(self, ptr, shape, strides, dtype):
        self.ptr, self.shape, self.strides, self.dtype = int(ptr), tuple(shape), tuple(strides), dtype

    def c(self):
        t = JfaTensor()
        t.data = self.ptr
        t.dtype = _BF16 if self.dtype == "bf16" else _F32 if self.dtype == "f32" else self.dtype.encode()
        t.rank = len(self.shape)
        for i, (n, s) in enumerate(zip(self.shape, self.strides)):
            t.shape[i] = n
            t.stride[i] = s
        return t


class PlanKey(collections.namedtuple("PlanKey", "device stream offsets heads head_dim causal num_q softmax_scale "
                                                "window window_left window_right softcap deterministic passes "
                                                "alibi_slopes block_mask block_mask_mode")):
    """What a plan is made for (and cached by); alibi_slopes: None or a
    tuple of per-head floats; block_mask: None or the mask's bytes (jfa.h's
    block_mask), block_mask_mode its layout (1 per batch, 2 per sequence)."""
    __slots__ = ()


PlanKey.__new__.__defaults__ = (None, None, 0)


def _nbatch(offsets):
    return (len(offsets) // 8 if isinstance(offsets, (bytes, bytearray)) else len(offsets)) - 1


def _params(key, offsets_arr):
    """The jfa_params of a plan key (inside zeros: see JfaParamsPadded)."""
    padded = _lib.JfaParamsPadded()
    p = padded.p
    p._padded = padded
    p.batch = _nbatch(key.offsets)
    p.cu_seqlens = C.cast(offsets_arr, C.c_void_p)
    p.cu_seqlens_64bit = 1
    p.heads = key.heads
    p.head_dim = key.head_dim
    p.causal = int(key.causal)
    p.num_q = key.num_q
    p.softmax_scale = key.softmax_scale
    p.passes = key.passes
    p.deterministic = int(key.deterministic)
    p.window = int(key.window)
    p.window_left = key.window_left
    p.window_right = key.window_right
    p.softcap = key.softcap
    if key.alibi_slopes is not None:
        arr = (C.c_float * len(key.alibi_slopes))(*key.alibi_slopes)
        p.alibi_slopes = arr
        p._alibi = arr
    if key.block_mask is not None:
        buf = C.create_string_buffer(key.block_mask, max(1, len(key.block_mask)))
        p.block_mask = C.cast(buf, C.c_void_p)
        p._mask = buf
        p.block_mask_mode = key.block_mask_mode
        p.block_mask_bytes = len(key.block_mask)
    return p


def _offsets_array(offsets):
    """offsets as C int64s: a sequence of ints, or their bytes (native int64)."""
    if isinstance(offsets, (bytes, bytearray)):
        return (C.c_int64 * (len(offsets) // 8)).from_buffer_copy(offsets)
    return (C.c_int64 * len(offsets))(*offsets)



class _Plan:
    def __init__(self, handle, key, offsets_arr, stream_sync):
        self.handle, self.key, self.offsets_arr, self.stream_sync = handle, key, offsets_arr, stream_sync
        self.lock = threading.Lock()

    def destroy(self):
        if self.handle:
            # jfa_plan_destroy waits for the plan's own uploads and last run
            # (events), not for the whole device
            _lib.jfa().jfa_plan_destroy(self.handle)
            self.handle = None


class Jfa:
    """libjfa for one process: the cubin library per device and the plan cache."""

    def __init__(self, cubin_dir=None, max_plans=MAX_PLANS):
        self.cubin_dir = cubin_dir
        self.max_plans = max_plans
        self._libs = {}
        self._plans = collections.OrderedDict()
        self._lock = threading.Lock()

    def lib(self, device):
        with self._lock:
            h = self._libs.get(device)
            if h is None:
                _lib.init(device)
                d = self.cubin_dir or _lib.cubin_dir()
                h = C.c_void_p()
                check(_lib.jfa().jfa_lib_open(d.encode(), C.byref(h)), "jfa_lib_open(%s)" % d)
                self._libs[device] = h
            return h

    @staticmethod
    def check_params(key):
        """jfa_check_params (no GPU): the total rows, or TileInvalidArgument."""
        arr = _offsets_array(key.offsets)
        p = _params(key, arr)
        total = C.c_int64()
        check(_lib.jfa().jfa_check_params(C.byref(p), C.byref(total)), "jfa_check_params")
        return total.value

    @classmethod
    def supports_backward(cls, key):
        try:
            cls.check_params(key._replace(passes=JFA_FWD | JFA_BWD))
            return True
        except _lib.TileInvalidArgument:
            return False

    @staticmethod
    def _shape(key):
        return key._replace(offsets=None)

    def _reusable(self, key):
        """The least recently used plan of key's shape, taken out of the
        cache, when MAX_PLANS_PER_SHAPE of them exist or the cache is full;
        else None."""
        if key.block_mask is not None:  # a block mask is laid out for its batch: never updated
            return None
        shape = self._shape(key)
        same = [k for k in self._plans if self._shape(k) == shape]
        if same and (len(same) >= MAX_PLANS_PER_SHAPE or len(self._plans) >= self.max_plans):
            return self._plans.pop(same[0])
        return None

    def plan(self, key, stream_sync=None):
        with self._lock:
            pl = self._plans.get(key)
            if pl is not None:
                self._plans.move_to_end(key)
                return pl
            old = self._reusable(key)
        if old is not None:
            return self._update(old, key)
        lib = self.lib(key.device)
        _lib.init(key.device)
        arr = _offsets_array(key.offsets)
        p = _params(key, arr)
        h = C.c_void_p()
        check(_lib.jfa().jfa_plan_create(lib, C.byref(p), C.byref(h)), "jfa_plan_create")
        # the plan's uploads and memsets run on the legacy default stream
        # (cuMemcpyHtoD may return before its DMA lands, cuMemsetD8 is
        # asynchronous): wait for them, or a kernel on a non-blocking stream
        # (PyTorch's side streams) could read the schedule before it is there
        st = _lib.rt().tile_synchronize()
        if st != 0:
            msg = _lib.last_error()
            _lib.jfa().jfa_plan_destroy(h)
            raise _lib._error_class(st)(st, msg, "tile_synchronize (after jfa_plan_create)")
        return self._insert(_Plan(h, key, arr, stream_sync), key)

    def _insert(self, pl, key):
        """Cache pl under key (the least recently used past max_plans
        destroyed); the plan another thread cached meanwhile wins."""
        evicted = []
        with self._lock:
            old = self._plans.get(key)
            if old is not None:
                evicted.append(pl)
                pl = old
            else:
                self._plans[key] = pl
                while len(self._plans) > self.max_plans:
                    evicted.append(self._plans.popitem(last=False)[1])
        for e in evicted:
            e.destroy()
        return pl

    def _update(self, pl, key):
        """pl (out of the cache) re-planned for key's lengths on key's stream;
        cached under key. A refused update leaves pl as it was, cached again."""
        arr = _offsets_array(key.offsets)
        _lib.init(key.device)
        with pl.lock:
            st = _lib.jfa().jfa_plan_update(pl.handle, C.cast(arr, C.c_void_p), 1, _nbatch(key.offsets),
                                             C.c_void_p(key.stream))
        if st != 0:
            msg = _lib.last_error()
            with self._lock:
                if st == _lib.TILE_ERR_INVALID and pl.key not in self._plans:
                    self._plans[pl.key] = pl
                    pl = None
            if pl is not None:
                pl.destroy()
            raise _lib._error_class(st)(st, msg, "jfa_plan_update")
        pl.key, pl.offsets_arr = key, arr
        return self._insert(pl, key)

    def clear(self):
        """Destroy every cached plan (each waits for its own work first)."""
        with self._lock:
            plans = list(self._plans.values())
            self._plans.clear()
        for p in plans:
            p.destroy()

    def forward(self, key, q, k, v, o, lse, stream=None):
        pl = self.plan(key)
        args = [x.c() for x in (q, k, v, o, lse)]
        _lib.init(key.device)
        with pl.lock:
            check(_lib.jfa().jfa_plan_forward(pl.handle, *[C.byref(a) for a in args], stream), "jfa_plan_forward")

    def backward(self, key, dout, q, k, v, o, lse, dq, dk, dv, stream=None):
        pl = self.plan(key)
        args = [x.c() for x in (dout, q, k, v, o, lse, dq, dk, dv)]
        _lib.init(key.device)
        with pl.lock:
            check(_lib.jfa().jfa_plan_backward(pl.handle, *[C.byref(a) for a in args], stream), "jfa_plan_backward")


_default = None
_default_lock = threading.Lock()


def default():
    """The process's Jfa (cubins from tile.cubin_dir())."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Jfa()
        return _default


def clear_plans():
    """Free every cached JFA plan (their device memory)."""
    if _default is not None:
        _default.clear()


def offsets_from_lengths(lengths):
    out = [0]
    for n in lengths:
        out.append(out[-1] + int(n))
    return out


def check_offsets(offsets, total, what="cu_seqlens"):
    """The host-side checks of jagged offsets (before anything is launched)."""
    if len(offsets) < 1:
        raise ValueError("%s must have batch + 1 >= 1 entries" % what)
    if offsets[0] != 0:
        raise ValueError("%s[0] is %d, must be 0" % (what, offsets[0]))
    for i in range(1, len(offsets)):
        if offsets[i] < offsets[i - 1]:
            raise ValueError("%s must be non-decreasing: %s[%d] = %d < %s[%d] = %d" % (
                what, what, i, offsets[i], what, i - 1, offsets[i - 1]))
    if total is not None and offsets[-1] != total:
        raise ValueError("%s[-1] is %d, but the tensors have %d rows" % (what, offsets[-1], total))


# ---- PyTorch ------------------------------------------------------------------------

try:
    import torch
except ImportError:  # the torch-free core above still works
    torch = None


def _raw(t):
    dt = "bf16" if t.dtype == torch.bfloat16 else "f32" if t.dtype == torch.float32 else str(t.dtype)
    return RawTensor(t.data_ptr(), t.shape, t.stride(), dt)


def _layout_ok(t):
    """JFA's layout: heads and head dims contiguous, rows a multiple of 8
    elements apart (TMA), 16-byte aligned."""
    if t.dim() != 3:
        return False
    H, D = t.shape[1], t.shape[2]
    return ((t.stride(2) == 1 or D == 1) and (t.stride(1) == D or H == 1) and t.stride(0) >= H * D
            and t.stride(0) % 8 == 0 and t.data_ptr() % 16 == 0)


def _fix_layout(t):
    return t if _layout_ok(t) else t.contiguous()


def _device_index(t):
    if t.device.type == "cuda":
        return t.device.index if t.device.index is not None else torch.cuda.current_device()
    return 0


def _stream(t):
    if t.device.type == "cuda":
        return torch.cuda.current_stream(t.device).cuda_stream
    return None


def _stream_sync(t):
    if t.device.type == "cuda":
        dev = t.device
        return lambda: torch.cuda.synchronize(dev)
    return None


def _host_offsets(cu_seqlens, offsets_host):
    """The offsets as a contiguous CPU int64 tensor: offsets_host, or
    cu_seqlens (a device-to-host copy, which waits for the GPU, when it is a
    CUDA tensor)."""
    src = offsets_host if offsets_host is not None else cu_seqlens
    return src.to("cpu", torch.int64).contiguous()


def _check_offsets_tensor(off, total, what="cu_seqlens"):
    """check_offsets on a CPU int64 tensor, in a few vector operations (a
    training loop calls it every step)."""
    n = off.shape[0]
    if n < 1:
        raise ValueError("%s must have batch + 1 >= 1 entries" % what)
    if int(off[0]) != 0:
        raise ValueError("%s[0] is %d, must be 0" % (what, int(off[0])))
    if n > 1:
        down = off[1:] < off[:-1]
        if bool(down.any()):
            i = int(down.nonzero()[0, 0]) + 1
            raise ValueError("%s must be non-decreasing: %s[%d] = %d < %s[%d] = %d" % (
                what, what, i, int(off[i]), what, i - 1, int(off[i - 1])))
    if total is not None and int(off[-1]) != total:
        raise ValueError("%s[-1] is %d, but the tensors have %d rows" % (what, int(off[-1]), total))


def _offsets_key(off):
    """A CPU int64 tensor's bytes: the plan key's offsets (hashed in C)."""
    return C.string_at(off.data_ptr(), off.shape[0] * 8)


def _longest(off):
    return int((off[1:] - off[:-1]).max()) if off.shape[0] > 1 else 0


def _emulating(*ts):
    return _lib.interpreting() and all(t.device.type == "cpu" for t in ts)


class _Stage:
    """CPU tensors under TILE_INTERPRET=1: the emulator reads and writes only
    memory it allocated (tile_malloc), so tensors go through copies."""

    def __init__(self):
        self.out = []
        self.keep = []

    def input(self, t):
        c = t.contiguous()
        n = c.numel() * c.element_size()
        b = _lib.DeviceBuffer(max(n, 16))
        if n:
            b.upload(c.data_ptr(), n)
        self.keep.append((c, b))
        r = _raw(c)
        r.ptr = b.ptr
        return r

    def output(self, t):
        n = t.numel() * t.element_size()
        b = _lib.DeviceBuffer(max(n, 16))
        self.out.append((t, b, n))
        r = _raw(t)
        r.ptr = b.ptr
        return r

    def finish(self):
        for t, b, n in self.out:
            if n:
                b.download(t.data_ptr(), n)
            b.free()
        for _, b in self.keep:
            b.free()


def _key(q, offsets, num_q, causal, softmax_scale, window_left, window_right, softcap, deterministic, passes,
         alibi_slopes=None, block_mask=None):
    window = int(window_left != -1 or window_right != -1)
    slopes = None if alibi_slopes is None else tuple(float(x) for x in alibi_slopes.tolist())
    mask, mode = None, 0
    if block_mask is not None:  # a CPU uint8 tensor (_block_mask): 2-D per batch, 1-D per sequence
        mask = bytes(block_mask.reshape(-1).tolist())
        mode = _lib.JFA_MASK_PER_BATCH if block_mask.dim() == 2 else _lib.JFA_MASK_PER_SEQUENCE
    return PlanKey(device=_device_index(q), stream=_stream(q), offsets=_offsets_key(offsets), heads=int(q.shape[1]),
                   head_dim=int(q.shape[2]), causal=bool(causal), num_q=int(num_q),
                   softmax_scale=float(softmax_scale), window=window,
                   window_left=int(window_left) if window else 0, window_right=int(window_right) if window else 0,
                   softcap=float(softcap), deterministic=bool(deterministic), passes=passes, alibi_slopes=slopes,
                   block_mask=mask, block_mask_mode=mode)


def _out_shapes(q, k, batch, num_q):
    H, D = q.shape[1], q.shape[2]
    if num_q > 0:
        return (batch, num_q, H, D), (batch, H, num_q)
    return tuple(q.shape), (H, q.shape[0])


def _fwd_impl(q, k, v, cu_seqlens, offsets_host, num_q, causal, softmax_scale, window_left, window_right, softcap,
              deterministic, for_backward, alibi_slopes, block_mask=None):
    batch = cu_seqlens.shape[0] - 1
    o_shape, lse_shape = _out_shapes(q, k, batch, num_q)
    o = torch.empty(o_shape, dtype=q.dtype, device=q.device)
    lse = torch.empty(lse_shape, dtype=torch.float32, device=q.device)
    offsets = _host_offsets(cu_seqlens, offsets_host)
    _check_offsets_tensor(offsets, k.shape[0])
    j = default()
    key = _key(q, offsets, num_q, causal, softmax_scale, window_left, window_right, softcap, deterministic, JFA_FWD,
               alibi_slopes, block_mask)
    if for_backward and Jfa.supports_backward(key):
        key = key._replace(passes=JFA_FWD | JFA_BWD)
    q, k, v = _fix_layout(q), _fix_layout(k), _fix_layout(v)
    if _emulating(q, k, v):
        st = _Stage()
        try:
            j.forward(key, st.input(q), st.input(k), st.input(v), st.output(o), st.output(lse), None)
        finally:
            st.finish()
    else:
        j.plan(key, _stream_sync(q))
        j.forward(key, _raw(q), _raw(k), _raw(v), _raw(o), _raw(lse), C.c_void_p(key.stream))
    return o, lse


def _bwd_impl(dout, q, k, v, o, lse, cu_seqlens, offsets_host, num_q, causal, softmax_scale, window_left,
              window_right, softcap, deterministic, alibi_slopes, block_mask=None):
    dq = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    dk = torch.empty(k.shape, dtype=k.dtype, device=k.device)
    dv = torch.empty(v.shape, dtype=v.dtype, device=v.device)
    offsets = _host_offsets(cu_seqlens, offsets_host)
    key = _key(q, offsets, num_q, causal, softmax_scale, window_left, window_right, softcap, deterministic,
               JFA_FWD | JFA_BWD, alibi_slopes, block_mask)
    j = default()
    dout = dout.contiguous()  # autograd may hand an expanded (stride 0) or otherwise strided gradient
    q, k, v = _fix_layout(q), _fix_layout(k), _fix_layout(v)
    if _emulating(dout, q, k, v, o, lse):
        st = _Stage()
        try:
            ins = [st.input(t) for t in (dout, q, k, v, o, lse)]
            j.backward(key, *ins, st.output(dq), st.output(dk), st.output(dv), None)
        finally:
            st.finish()
    else:
        j.plan(key, _stream_sync(q))
        j.backward(key, _raw(dout), _raw(q), _raw(k), _raw(v), _raw(o), _raw(lse), _raw(dq), _raw(dk), _raw(dv),
                   C.c_void_p(key.stream))
    return dq, dk, dv


if torch is not None:
    from typing import Optional, Tuple

    Tensor = torch.Tensor

    @torch.library.custom_op("tile::jfa_fwd", mutates_args=())
    def jfa_fwd_op(q: Tensor, k: Tensor, v: Tensor, cu_seqlens: Tensor, offsets_host: Optional[Tensor], num_q: int,
                   causal: bool, softmax_scale: float, window_left: int, window_right: int, softcap: float,
                   deterministic: bool, for_backward: bool, alibi_slopes: Optional[Tensor] = None,
                   block_mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        """JFA's forward: (o, lse). Self-attention (num_q = 0): q, k, v, o
        [total, H, D] bf16, lse [H, total] f32. Broadcast-Q (num_q > 0):
        q [num_q, H, D], o [B, num_q, H, D], lse [B, H, num_q]."""
        return _fwd_impl(q, k, v, cu_seqlens, offsets_host, num_q, causal, softmax_scale, window_left, window_right,
                         softcap, deterministic, for_backward, alibi_slopes, block_mask)

    @jfa_fwd_op.register_fake
    def _jfa_fwd_fake(q, k, v, cu_seqlens, offsets_host, num_q, causal, softmax_scale, window_left, window_right,
                      softcap, deterministic, for_backward, alibi_slopes=None, block_mask=None):
        o_shape, lse_shape = _out_shapes(q, k, cu_seqlens.shape[0] - 1, num_q)
        return q.new_empty(o_shape), q.new_empty(lse_shape, dtype=torch.float32)

    @torch.library.custom_op("tile::jfa_bwd", mutates_args=())
    def jfa_bwd_op(dout: Tensor, q: Tensor, k: Tensor, v: Tensor, o: Tensor, lse: Tensor, cu_seqlens: Tensor,
                   offsets_host: Optional[Tensor], num_q: int, causal: bool, softmax_scale: float, window_left: int,
                   window_right: int, softcap: float, deterministic: bool, alibi_slopes: Optional[Tensor] = None,
                   block_mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor, Tensor]:
        """JFA's backward: (dq, dk, dv) from dO and the forward's tensors."""
        return _bwd_impl(dout, q, k, v, o, lse, cu_seqlens, offsets_host, num_q, causal, softmax_scale, window_left,
                         window_right, softcap, deterministic, alibi_slopes, block_mask)

    @jfa_bwd_op.register_fake
    def _jfa_bwd_fake(dout, q, k, v, o, lse, cu_seqlens, offsets_host, num_q, causal, softmax_scale, window_left,
                      window_right, softcap, deterministic, alibi_slopes=None, block_mask=None):
        return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)

    _FLAGS = ("num_q", "causal", "softmax_scale", "window_left", "window_right", "softcap", "deterministic")

    def _setup_context(ctx, inputs, output):
        q, k, v, cu_seqlens, offsets_host = inputs[:5]
        o, lse = output
        ctx.flags = inputs[5:12]
        ctx.save_for_backward(q, k, v, o, lse, cu_seqlens, offsets_host, inputs[13],
                              inputs[14] if len(inputs) > 14 else None)
        ctx.mark_non_differentiable(lse)

    def _backward(ctx, do, dlse):
        q, k, v, o, lse, cu_seqlens, offsets_host, alibi_slopes, block_mask = ctx.saved_tensors
        dq, dk, dv = jfa_bwd_op(do, q, k, v, o, lse, cu_seqlens, offsets_host, *ctx.flags, alibi_slopes=alibi_slopes,
                                block_mask=block_mask)
        return (dq, dk, dv) + (None,) * 12

    torch.library.register_autograd("tile::jfa_fwd", _backward, setup_context=_setup_context)


# ---- the user-facing functions --------------------------------------------------------

def _require_torch():
    if torch is None:
        raise ImportError("tile.jfa_varlen_func and tile.jfa_broadcast_q need PyTorch (import torch failed)")


def _check_qkv(q, k, v, bcast):
    for n, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError("%s must be a torch.Tensor, not %s" % (n, type(t).__name__))
        if t.dim() != 3:
            raise ValueError("%s must be 3-D [rows, heads, head_dim], not %d-D %s" % (n, t.dim(), tuple(t.shape)))
        if t.dtype != torch.bfloat16:
            raise TypeError("%s must be torch.bfloat16 (JFA's kernels are bf16), not %s" % (n, t.dtype))
        if t.device != q.device:
            raise ValueError("q, k and v must be on one device (%s: %s, q: %s)" % (n, t.device, q.device))
    if q.device.type != "cuda" and not (q.device.type == "cpu" and _lib.interpreting()):
        raise ValueError("JFA runs on CUDA tensors, not %s (CPU tensors only under TILE_INTERPRET=1, the "
                         "emulator)" % q.device.type)
    if k.shape != v.shape:
        raise ValueError("k %s and v %s must have one shape" % (tuple(k.shape), tuple(v.shape)))
    if not bcast and q.shape != k.shape:
        raise ValueError("self-attention: q %s and k %s must have one shape (total rows, heads, head_dim)" %
                         (tuple(q.shape), tuple(k.shape)))
    if bcast and q.shape[1:] != k.shape[1:]:
        raise ValueError("q %s and k %s must have the same heads and head_dim" % (tuple(q.shape), tuple(k.shape)))
    if q.shape[2] not in (64, 128):
        raise ValueError("head_dim must be 64 or 128 (the kernels built), not %d" % q.shape[2])
    if q.shape[1] < 1:
        raise ValueError("heads must be >= 1")


def _cu_tensor(cu, what, rows):
    if isinstance(cu, (list, tuple)):
        cu = torch.tensor([int(x) for x in cu], dtype=torch.int64)
    if not isinstance(cu, torch.Tensor):
        raise TypeError("%s must be a tensor (or a list) of offsets, not %s" % (what, type(cu).__name__))
    if cu.dim() != 1 or cu.shape[0] < 1:
        raise ValueError("%s must be 1-D with batch + 1 >= 1 entries, not shape %s" % (what, tuple(cu.shape)))
    if cu.dtype not in (torch.int32, torch.int64):
        raise TypeError("%s must be torch.int32 or torch.int64, not %s" % (what, cu.dtype))
    return cu


def _offsets_host_tensor(seqlens_host, cu, rows, what):
    """The host offsets from seqlens_host (B lengths, a list or a CPU tensor),
    from cu (when on the CPU), or None (the op copies cu to the host)."""
    if seqlens_host is not None:
        if isinstance(seqlens_host, torch.Tensor):
            if seqlens_host.device.type != "cpu":
                raise ValueError("seqlens_host must be on the CPU (it exists to avoid a device-to-host copy)")
            if seqlens_host.dim() != 1 or seqlens_host.dtype.is_floating_point or seqlens_host.is_complex():
                raise ValueError("seqlens_host must be a 1-D integer tensor (or a list) of lengths")
            lengths = seqlens_host.to(torch.int64)
        else:
            lengths = torch.tensor([int(x) for x in seqlens_host], dtype=torch.int64)
        if lengths.shape[0] != cu.shape[0] - 1:
            raise ValueError("seqlens_host has %d lengths, %s has %d sequences" % (lengths.shape[0], what,
                                                                                    cu.shape[0] - 1))
        if lengths.shape[0] and bool((lengths < 0).any()):
            raise ValueError("seqlens_host: lengths must be >= 0")
        offsets = torch.zeros(lengths.shape[0] + 1, dtype=torch.int64)
        torch.cumsum(lengths, 0, out=offsets[1:])
    elif cu.device.type == "cpu" and not _tracing():
        offsets = cu.to(torch.int64).contiguous()
    else:
        return None
    _check_offsets_tensor(offsets, rows, what)
    return offsets


def _tracing():
    try:
        return torch.compiler.is_compiling()
    except AttributeError:
        return False


def _scale(softmax_scale, D):
    if softmax_scale is None:
        return 1.0 / math.sqrt(D)
    s = float(softmax_scale)
    if not (s > 0 and math.isfinite(s)):
        raise ValueError("softmax_scale must be a finite positive number (None: 1/sqrt(head_dim)), not %r" %
                         (softmax_scale,))
    return s


def _needs_grad(*ts):
    return torch.is_grad_enabled() and any(t.requires_grad for t in ts)


def jfa_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, *, causal=False,
                    softmax_scale=None, window_size=(-1, -1), softcap=0.0, alibi_slopes=None, deterministic=False,
                    dropout_p=0.0, seqlens_host=None, return_lse=False, block_mask=None):
    """Jagged self-attention, shaped like flash_attn_varlen_func.

    q, k, v: [total, heads, head_dim] torch.bfloat16 on a CUDA device (CPU
    tensors under TILE_INTERPRET=1, the emulator), head_dim 64 or 128; the
    sequences packed back to back. cu_seqlens_q, cu_seqlens_k: [B + 1]
    int32/int64 offsets (self-attention: the same offsets; a list works
    too); max_seqlen_q, max_seqlen_k: at least the longest sequence.
    causal, softmax_scale (None: 1/sqrt(head_dim)), window_size=(left,
    right) (-1: no bound; with causal, right is 0), softcap (> 0: scores
    s -> softcap * tanh(s / softcap)), alibi_slopes (one float per head, a
    list or tensor: scores s - slope_h |i - j|; a CUDA tensor is copied to
    the host), deterministic (the backward's dq bitwise reproducible).
    block_mask: block-sparse attention over blocks of 128 queries x 128
    keys (True/1: the pair of blocks is visited, False/0: skipped; ANDed
    with causal): a 2-D [n, n] tensor, one mask for every sequence (n at
    least the longest sequence's cdiv(L, 128)), or a list of one
    [cdiv(L_b, 128)]^2 mask per sequence (or those flattened and
    concatenated into one 1-D tensor); copied to the host (a CUDA tensor
    is read back). Rows that see no key get 0 and no gradient.
    Scores are scaled by softmax_scale before softcap and ALiBi apply, as
    in FlashAttention. A window, softcap, ALiBi or a block mask is one variant at a time;
    where the library has no backward pass for one, backward() raises
    TileInvalidArgument saying so.

    The kernels are scheduled on the host from the sequence lengths: when
    cu_seqlens is a CUDA tensor, reading it forces a device-to-host copy
    (and a synchronisation) on every call. Pass seqlens_host, the B
    lengths as a list or CPU tensor, to avoid it (they must agree with
    cu_seqlens, which is then not read). Plans are cached by (lengths,
    heads, head_dim, flags, device, stream).

    Returns out [total, heads, head_dim] bf16 (and the log-sum-exp
    [heads, total] float32 with return_lse=True). Runs on PyTorch's current
    CUDA stream. Differentiable in q, k, v (the backward pass is JFA's).
    Bad arguments raise ValueError/TypeError before anything is launched;
    the C library's refusals raise tile.TileInvalidArgument with its
    message.
    """
    _require_torch()
    _check_qkv(q, k, v, bcast=False)
    if dropout_p:
        raise NotImplementedError("JFA has no dropout (dropout_p must be 0)")
    total = q.shape[0]
    cu_q = _cu_tensor(cu_seqlens_q, "cu_seqlens_q", total)
    cu_k = _cu_tensor(cu_seqlens_k, "cu_seqlens_k", total)
    if cu_q is not cu_k:
        if cu_q.shape != cu_k.shape:
            raise ValueError("self-attention: cu_seqlens_q and cu_seqlens_k must be the same offsets (shapes %s, %s)"
                             % (tuple(cu_q.shape), tuple(cu_k.shape)))
        if cu_q.device.type == "cpu" and cu_k.device.type == "cpu" and not torch.equal(cu_q.long(), cu_k.long()):
            raise ValueError("self-attention: cu_seqlens_q and cu_seqlens_k must be the same offsets")
    wl, wr = _window(window_size, causal)
    softcap = float(softcap)
    if not (softcap >= 0 and math.isfinite(softcap)):
        raise ValueError("softcap must be finite and >= 0 (0: none), not %r" % (softcap,))
    # FlashAttention's convention: causal with a window is the window (left, 0)
    if causal and wl != -1:
        causal, wr = False, 0
    elif causal:
        wl = wr = -1
    elif (wl, wr) == (-1, 0):
        causal, wl, wr = True, -1, -1
    for n, m in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
        if m is not None and int(m) < 0:
            raise ValueError("%s must be >= 0, not %d" % (n, int(m)))
    offsets_host = _offsets_host_tensor(seqlens_host, cu_k, total, "cu_seqlens_k")
    if offsets_host is not None and (max_seqlen_q is not None or max_seqlen_k is not None):
        longest = _longest(offsets_host)
        for n, m in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
            if m is not None and int(m) < longest:
                raise ValueError("%s is %d, but a sequence has %d rows" % (n, int(m), longest))
    scale = _scale(softmax_scale, q.shape[2])
    slopes = _slopes(alibi_slopes, q.shape[1])
    mask = _block_mask(block_mask)
    o, lse = torch.ops.tile.jfa_fwd(q, k, v, cu_k, offsets_host, 0, bool(causal), scale, wl, wr, softcap,
                                    bool(deterministic), _needs_grad(q, k, v), slopes, mask)
    return (o, lse) if return_lse else o


def _block_mask(block_mask):
    """A block mask as a CPU uint8 tensor: 2-D (one for every sequence) or
    1-D (the sequences' masks one after the other), or None. Its size
    against the batch and its values (0 or 1) are the C library's checks."""
    if block_mask is None:
        return None
    if isinstance(block_mask, (list, tuple)):
        parts = []
        for i, m in enumerate(block_mask):
            if not isinstance(m, torch.Tensor) or m.dim() != 2 or m.shape[0] != m.shape[1]:
                raise ValueError("block_mask[%d]: one square 2-D tensor per sequence, not %r" %
                                 (i, tuple(m.shape) if isinstance(m, torch.Tensor) else type(m).__name__))
            parts.append(m.detach().reshape(-1).to("cpu", torch.uint8))
        return torch.cat(parts) if parts else torch.zeros(0, dtype=torch.uint8)
    if not isinstance(block_mask, torch.Tensor):
        raise TypeError("block_mask must be a tensor or a list of tensors, not %s" % type(block_mask).__name__)
    if block_mask.dtype.is_floating_point or block_mask.is_complex():
        raise TypeError("block_mask must be bool or integer (1: visit the block, 0: skip it), not %s" %
                        block_mask.dtype)
    if block_mask.dim() == 2 and block_mask.shape[0] != block_mask.shape[1]:
        raise ValueError("a 2-D block_mask is one n x n mask for every sequence, not %s" % (tuple(block_mask.shape),))
    if block_mask.dim() not in (1, 2):
        raise ValueError("block_mask must be 2-D (one for every sequence) or 1-D (one per sequence, one after the "
                         "other), not %d-D" % block_mask.dim())
    return block_mask.detach().to("cpu", torch.uint8).contiguous()


def _slopes(alibi_slopes, heads):
    """ALiBi slopes as a CPU float32 tensor of `heads` entries (or None)."""
    if alibi_slopes is None:
        return None
    if not isinstance(alibi_slopes, torch.Tensor):
        alibi_slopes = torch.tensor([float(x) for x in alibi_slopes], dtype=torch.float32)
    if alibi_slopes.dim() != 1 or alibi_slopes.shape[0] != heads:
        raise ValueError("alibi_slopes must hold one slope per head (%d), not shape %s" %
                         (heads, tuple(alibi_slopes.shape)))
    if not alibi_slopes.is_floating_point():
        raise TypeError("alibi_slopes must be floating point, not %s" % alibi_slopes.dtype)
    return alibi_slopes.detach().to("cpu", torch.float32)


def _window(window_size, causal):
    try:
        wl, wr = (int(x) for x in window_size)
    except (TypeError, ValueError):
        raise ValueError("window_size must be a pair (left, right), not %r" % (window_size,))
    if wl < -1 or wr < -1:
        raise ValueError("window_size: each side is >= 0, or -1 for no bound, not %r" % (tuple(window_size),))
    return wl, wr


def jfa_broadcast_q(q, k, v, cu_seqlens_k, max_seqlen_k=None, *, softmax_scale=None, deterministic=False,
                    seqlens_host=None, return_lse=False):
    """Broadcast-Q attention: one dense set of queries against every
    sequence of a jagged batch of keys and values.

    q: [num_q, heads, head_dim] bf16; k, v: [total, heads, head_dim] bf16,
    the sequences packed back to back as cu_seqlens_k ([B + 1] offsets)
    says. Returns out [B, num_q, heads, head_dim] (and the log-sum-exp
    [B, heads, num_q] float32 with return_lse=True); sequence b's output
    attends to its own keys only. Differentiable in q, k, v.

    As in jfa_varlen_func: a CUDA cu_seqlens_k forces a device-to-host copy
    on every call unless seqlens_host (the B lengths on the host) is given;
    PyTorch's current stream; plans cached.
    """
    _require_torch()
    _check_qkv(q, k, v, bcast=True)
    num_q = q.shape[0]
    if num_q < 1:
        raise ValueError("broadcast-Q needs at least one query row")
    cu = _cu_tensor(cu_seqlens_k, "cu_seqlens_k", k.shape[0])
    offsets_host = _offsets_host_tensor(seqlens_host, cu, k.shape[0], "cu_seqlens_k")
    if offsets_host is not None and max_seqlen_k is not None:
        longest = _longest(offsets_host)
        if int(max_seqlen_k) < longest:
            raise ValueError("max_seqlen_k is %d, but a sequence has %d rows" % (int(max_seqlen_k), longest))
    scale = _scale(softmax_scale, q.shape[2])
    o, lse = torch.ops.tile.jfa_fwd(q, k, v, cu, offsets_host, num_q, False, scale, -1, -1, 0.0, bool(deterministic),
                                    _needs_grad(q, k, v))
    return (o, lse) if return_lse else o

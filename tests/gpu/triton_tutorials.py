"""triton_tutorials.py - the Triton side of tests/gpu/bench_triton.py: the
kernels of Triton's tutorials (python/tutorials in the Triton repository:
01 vector add, 02 fused softmax, 03 matrix multiplication with the
leaky_relu epilogue, 05 layer norm forward and backward, 06 fused attention
forward and backward), written after their algorithms, block sizes,
heuristics and autotuning lists, with a host function each that takes
preallocated outputs (what the benchmark times).

Differences from the tutorials, where they do not change what is measured:
plain pointer arithmetic instead of block pointers in the attention forward
without TMA (block pointers come and go between Triton versions); the
attention backward takes CAUSAL (the tutorial's is causal only: without it
the masked diagonal stage is skipped and every block is a full one); the
autotuning lists can be cut down (AUTOTUNE below) to keep the compile time
of one GPU run within its limit. Imported only where Triton is installed.
"""
import functools
import os

import torch
import triton
import triton.language as tl

# "full": the tutorials' own autotuning lists; "small" (default): the
# configurations that win on Hopper among them; "none": one each
AUTOTUNE = os.environ.get("BENCH_TRITON_AUTOTUNE", "small")


@functools.lru_cache(maxsize=None)
def _device_props():
    """(SMs, registers per SM, shared memory per SM, warp size), as the
    softmax tutorial reads them: once (the tutorial reads them at import).
    Read at every call, as this did until the seventh session, the driver
    query cost about a millisecond a launch, and Triton's softmax measured
    500 and 34 GB/s -- the harness fault the fifth and sixth sessions
    reported."""
    try:
        p = triton.runtime.driver.active.utils.get_device_properties(torch.cuda.current_device())
        return p["multiprocessor_count"], p["max_num_regs"], p["max_shared_mem"], p.get("warpSize", 32)
    except Exception:
        pass
    try:
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        return p.multi_processor_count, 65536, 232448, 32
    except Exception:  # no GPU (Triton's interpreter): an H100/H200's
        return 132, 65536, 232448, 32


# ---- 01 vector add ------------------------------------------------------------

@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def vector_add(x, y, out):
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024), )](x, y, out, n, BLOCK_SIZE=1024)
    return out


# ---- 02 fused softmax (the persistent version: programs loop over rows) -------

@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, NUM_STAGES: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=NUM_STAGES):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        tl.store(output_ptr + row_idx * output_row_stride + col_offsets, softmax_output, mask=mask)


_softmax_programs = {}


def softmax(x, y):
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 8
    num_sm, num_regs, size_smem, warp = _device_props()
    num_stages = 4 if size_smem > 200000 else 2
    key = (n_rows, n_cols, x.dtype)
    if key not in _softmax_programs:
        # the tutorial's occupancy: as many programs as fit on the SMs at once
        programs = num_sm * 2
        try:
            k = softmax_kernel.warmup(y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE,
                                      NUM_STAGES=num_stages, num_warps=num_warps, grid=(1, ))
            k._init_handles()
            occupancy = num_regs // max(1, k.n_regs * warp * num_warps)
            smem = k.metadata.shared
            if smem:
                occupancy = min(occupancy, size_smem // smem)
            programs = num_sm * max(1, occupancy)
        except Exception:
            pass
        _softmax_programs[key] = min(programs, n_rows)
    softmax_kernel[(_softmax_programs[key], 1, 1)](y, x, x.stride(0), y.stride(0), n_rows, n_cols,
                                                   BLOCK_SIZE=BLOCK_SIZE, NUM_STAGES=num_stages,
                                                   num_warps=num_warps)
    return y


# ---- 03 matrix multiplication (+ leaky_relu) ----------------------------------

def _matmul_configs():
    C = triton.Config
    full = [
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8}, num_stages=3, num_warps=8),
        C({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=4, num_warps=4),
        C({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=5, num_warps=2),
        C({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, num_stages=5, num_warps=2),
    ]
    if AUTOTUNE == "full":
        return full
    if AUTOTUNE == "none":
        return full[:1]
    return full[:3]


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.autotune(configs=_matmul_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr):
    # grouped ordering of the C tiles (L2 reuse)
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(a, b, c, activation=""):
    M, K = a.shape
    K, N = b.shape
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]), )
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                        c.stride(1), ACTIVATION=activation)
    return c


# ---- 05 layer norm ---------------------------------------------------------

@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    X += row * stride
    Y += row * stride
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xmean = tl.where(mask, x - mean, 0.)
    var = tl.sum(xmean * xmean, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    xhat = xmean * rstd
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    w = tl.load(W + cols, mask=mask)
    b = tl.load(B + cols, mask=mask)
    y = xhat * w + b
    tl.store(Y + cols, y, mask=mask)


def _ln_block(x):
    N = x.shape[-1]
    BLOCK_SIZE = min(65536 // x.element_size(), triton.next_power_of_2(N))
    if N > BLOCK_SIZE:
        raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")
    return BLOCK_SIZE, min(max(BLOCK_SIZE // 256, 1), 8)


def layer_norm_fwd(x, w, b, eps, y, mean, rstd):
    M, N = x.shape
    BLOCK_SIZE, num_warps = _ln_block(x)
    _layer_norm_fwd_fused[(M, )](x, y, w, b, mean, rstd, x.stride(0), N, eps, BLOCK_SIZE=BLOCK_SIZE,
                                 num_warps=num_warps)
    return y


@triton.jit
def _layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                             GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    # each program adds its partial dw/db into one of GROUP_SIZE_M buffers, under a lock
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)


def layer_norm_bwd(x, dy, w, mean, rstd, dx, dw, db):
    """dx, dw, db of the tutorial's LayerNorm.backward (its locks and partial
    buffers allocated here, as there: part of what it costs)."""
    M, N = x.shape
    GROUP_SIZE_M = 64
    if N <= 8192:
        GROUP_SIZE_M = 96
    if N <= 4096:
        GROUP_SIZE_M = 128
    if N <= 1024:
        GROUP_SIZE_M = 256
    locks = torch.zeros(2 * GROUP_SIZE_M, dtype=torch.int32, device=x.device)
    _dw = torch.empty((GROUP_SIZE_M, N), dtype=x.dtype, device=w.device)
    _db = torch.empty((GROUP_SIZE_M, N), dtype=x.dtype, device=w.device)
    BLOCK_SIZE, num_warps = _ln_block(x)
    _layer_norm_bwd_dx_fused[(M, )](dx, dy, _dw, _db, x, w, mean, rstd, locks, x.stride(0), N,
                                    BLOCK_SIZE_N=BLOCK_SIZE, GROUP_SIZE_M=GROUP_SIZE_M, num_warps=num_warps)
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE_N"]), )
    _layer_norm_bwd_dwdb[grid](_dw, _db, dw, db, min(GROUP_SIZE_M, M), N, BLOCK_SIZE_M=32, BLOCK_SIZE_N=128)
    return dx, dw, db


# ---- 06 fused attention ------------------------------------------------------

def _attn_configs():
    C = triton.Config
    out = []
    for BM in [64, 128]:
        for BN in [32, 64, 128]:
            for s in [2, 3, 4, 6]:
                for w in [4, 8]:
                    if BM * BN < 128 * 128 and w == 8:
                        continue  # the tutorial's keep_tma on Hopper
                    out.append(C({"BLOCK_M": BM, "BLOCK_N": BN}, num_stages=s, num_warps=w))
    if AUTOTUNE == "full":
        return out
    small = [(128, 64, 3, 4), (128, 64, 4, 4), (128, 128, 3, 8), (128, 128, 4, 8)]
    if AUTOTUNE == "none":
        small = small[:1]
    return [C({"BLOCK_M": bm, "BLOCK_N": bn}, num_stages=s, num_warps=w) for bm, bn, s, w in small]


def _keep_bn(conf, head_dim):
    return conf.kwargs["BLOCK_N"] <= head_dim  # tl.static_assert(BLOCK_N <= HEAD_DIM)


def _prune(configs, named_args, **kw):
    hd = kw.get("HEAD_DIM", named_args.get("HEAD_DIM", 128))
    kept = [c for c in configs if _keep_bn(c, hd)]
    return kept or configs[:1]


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_tok, start_m, qk_scale,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                    STAGE: tl.constexpr, offs_m, offs_n, N_CTX):
    # STAGE 1: the blocks left of the diagonal; 2: the diagonal's (masked); 3: all (not causal)
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    k_ptrs += lo * stride_tok
    v_ptrs += lo * stride_tok
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = tl.load(k_ptrs)  # [HEAD_DIM, BLOCK_N]: K^T
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(v_ptrs)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        k_ptrs += BLOCK_N * stride_tok
        v_ptrs += BLOCK_N * stride_tok
    return acc, l_i, m_i


@triton.autotune(configs=_attn_configs(), key=["N_CTX", "HEAD_DIM", "STAGE"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out, H, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    base = off_hz.to(tl.int64) * N_CTX * HEAD_DIM  # contiguous [Z, H, N_CTX, HEAD_DIM]
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    k_ptrs = K + base + offs_n[None, :] * HEAD_DIM + offs_d[:, None]
    v_ptrs = V + base + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1/log(2)
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, HEAD_DIM, start_m, qk_scale, BLOCK_M,
                                        HEAD_DIM, BLOCK_N, 4 - STAGE, offs_m, offs_n, N_CTX)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, HEAD_DIM, start_m, qk_scale, BLOCK_M,
                                        HEAD_DIM, BLOCK_N, 2, offs_m, offs_n, N_CTX)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    tl.store(Out + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(Out.type.element_ty))


try:
    from triton.tools.tensor_descriptor import TensorDescriptor
    HAS_TENSOR_DESC = True
except Exception:  # older Triton
    TensorDescriptor = None
    HAS_TENSOR_DESC = False


def _tma_pre_hook(nargs):
    BM, BN, HD = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["HEAD_DIM"]
    nargs["desc_q"].block_shape = [BM, HD]
    nargs["desc_v"].block_shape = [BN, HD]
    nargs["desc_k"].block_shape = [BN, HD]
    nargs["desc_o"].block_shape = [BM, HD]


def _attn_configs_tma():
    out = []
    for c in _attn_configs():
        out.append(triton.Config(dict(c.kwargs), num_stages=c.num_stages, num_warps=c.num_warps,
                                 pre_hook=_tma_pre_hook))
    return out


@triton.jit
def _attn_fwd_inner_tma(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype: tl.constexpr, start_m, qk_scale,
                        BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                        STAGE: tl.constexpr, offs_m, offs_n, N_CTX):
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    offsetkv_y = offset_y + lo
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([offsetkv_y, 0]).T
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = desc_v.load([offsetkv_y, 0])
        acc = tl.dot(p.to(dtype), v, acc)
        m_i = m_ij
        offsetkv_y += BLOCK_N
    return acc, l_i, m_i


@triton.autotune(configs=_attn_configs_tma(), key=["N_CTX", "HEAD_DIM", "STAGE"],
                 prune_configs_by={"early_config_prune": _prune})
@triton.jit
def _attn_fwd_tma(sm_scale, M, Z, H, desc_q, desc_k, desc_v, desc_o, N_CTX, HEAD_DIM: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr, dtype: tl.constexpr):
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    offset_y = off_hz * N_CTX  # rows of (z, h) in the [Z * H * N_CTX, HEAD_DIM] view
    qo_offset_y = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = desc_q.load([qo_offset_y, 0])
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner_tma(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype, start_m, qk_scale,
                                            BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE, offs_m, offs_n, N_CTX)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner_tma(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype, start_m, qk_scale,
                                            BLOCK_M, HEAD_DIM, BLOCK_N, 2, offs_m, offs_n, N_CTX)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i)
    desc_o.store([qo_offset_y, 0], acc.to(dtype))


def attn_fwd(q, k, v, causal, sm_scale, o, m, use_tma=True):
    """O and M (log2-sum-exp2 of the scaled scores) of [Z, H, N_CTX, D]
    contiguous q, k, v; N_CTX a multiple of 128. Returns which kernel ran."""
    Z, H, N_CTX, D = q.shape
    stage = 3 if causal else 1
    if use_tma and HAS_TENSOR_DESC and q.is_cuda and torch.cuda.get_device_capability()[0] >= 9:
        y_dim = Z * H * N_CTX
        dummy = [1, 1]
        desc_q = TensorDescriptor(q, shape=[y_dim, D], strides=[D, 1], block_shape=dummy)
        desc_k = TensorDescriptor(k, shape=[y_dim, D], strides=[D, 1], block_shape=dummy)
        desc_v = TensorDescriptor(v, shape=[y_dim, D], strides=[D, 1], block_shape=dummy)
        desc_o = TensorDescriptor(o, shape=[y_dim, D], strides=[D, 1], block_shape=dummy)
        grid = lambda META: (triton.cdiv(N_CTX, META["BLOCK_M"]), Z * H, 1)
        dtype = tl.float16 if q.dtype == torch.float16 else tl.bfloat16
        _attn_fwd_tma[grid](sm_scale, m, Z, H, desc_q, desc_k, desc_v, desc_o, N_CTX=N_CTX, HEAD_DIM=D, STAGE=stage,
                            dtype=dtype)
        return "tma"
    grid = lambda META: (triton.cdiv(N_CTX, META["BLOCK_M"]), Z * H, 1)
    _attn_fwd[grid](q, k, v, sm_scale, m, o, H, N_CTX=N_CTX, HEAD_DIM=D, STAGE=stage)
    return "pointers"


@triton.jit
def _attn_bwd_preprocess(O, DO, Delta, N_CTX, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_hz = tl.program_id(1)
    off_n = tl.arange(0, HEAD_DIM)
    base = off_hz.to(tl.int64) * HEAD_DIM * N_CTX
    o = tl.load(O + base + off_m[:, None] * HEAD_DIM + off_n[None, :])
    do = tl.load(DO + base + off_m[:, None] * HEAD_DIM + off_n[None, :]).to(tl.float32)
    delta = tl.sum(o * do, axis=1)
    tl.store(Delta + off_hz * N_CTX + off_m, delta)


@triton.jit
def _attn_bwd_dkdv(dk, dv, Q, k, v, sm_scale, DO, M, D, stride_tok, stride_d, H, N_CTX, BLOCK_M1: tl.constexpr,
                   BLOCK_N1: tl.constexpr, HEAD_DIM: tl.constexpr, start_n, start_m, num_steps,
                   MASK: tl.constexpr):
    offs_m = start_m + tl.arange(0, BLOCK_M1)
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    offs_k = tl.arange(0, HEAD_DIM)
    qT_ptrs = Q + offs_m[None, :] * stride_tok + offs_k[:, None] * stride_d
    do_ptrs = DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d
    tl.static_assert(BLOCK_N1 % BLOCK_M1 == 0)
    curr_m = start_m
    step_m = BLOCK_M1
    for blk_idx in range(num_steps):
        qT = tl.load(qT_ptrs)
        offs_m = curr_m + tl.arange(0, BLOCK_M1)
        m = tl.load(M + offs_m)
        qkT = tl.dot(k, qT)
        pT = tl.math.exp2(qkT - m[None, :])
        if MASK:
            mask = (offs_m[None, :] >= offs_n[:, None])
            pT = tl.where(mask, pT, 0.0)
        do = tl.load(do_ptrs)
        ppT = pT.to(Q.dtype.element_ty)
        dv += tl.dot(ppT, do)
        Di = tl.load(D + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = pT * (dpT - Di[None, :])
        dsT = dsT.to(Q.dtype.element_ty)
        dk += tl.dot(dsT, tl.trans(qT))
        curr_m += step_m
        qT_ptrs += step_m * stride_tok
        do_ptrs += step_m * stride_tok
    return dk, dv


@triton.jit
def _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, H, N_CTX, BLOCK_M2: tl.constexpr,
                 BLOCK_N2: tl.constexpr, HEAD_DIM: tl.constexpr, start_m, start_n, num_steps, MASK: tl.constexpr):
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    offs_n = start_n + tl.arange(0, BLOCK_N2)
    offs_k = tl.arange(0, HEAD_DIM)
    kT_ptrs = K + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d
    vT_ptrs = V + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d
    Di = tl.load(D + offs_m)
    tl.static_assert(BLOCK_M2 % BLOCK_N2 == 0)
    curr_n = start_n
    step_n = BLOCK_N2
    for blk_idx in range(num_steps):
        kT = tl.load(kT_ptrs)
        vT = tl.load(vT_ptrs)
        qk = tl.dot(q, kT)
        p = tl.math.exp2(qk - m)
        if MASK:
            offs_n = curr_n + tl.arange(0, BLOCK_N2)
            mask = (offs_m[:, None] >= offs_n[None, :])
            p = tl.where(mask, p, 0.0)
        dp = tl.dot(do, vT).to(tl.float32)
        ds = p * (dp - Di[:, None])
        ds = ds.to(K.dtype.element_ty)
        # K was pre-scaled by sm_scale / ln 2: dq is scaled back by ln 2 at the end
        dq += tl.dot(ds, tl.trans(kT))
        curr_n += step_n
        kT_ptrs += step_n * stride_tok
        vT_ptrs += step_n * stride_tok
    return dq


@triton.jit
def _attn_bwd(Q, K, V, sm_scale, DO, DQ, DK, DV, M, D, stride_z, stride_h, stride_tok, stride_d, H, N_CTX,
              BLOCK_M1: tl.constexpr, BLOCK_N1: tl.constexpr, BLOCK_M2: tl.constexpr, BLOCK_N2: tl.constexpr,
              BLK_SLICE_FACTOR: tl.constexpr, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr):
    LN2: tl.constexpr = 0.6931471824645996  # = ln(2)
    bhid = tl.program_id(2)
    off_chz = (bhid * N_CTX).to(tl.int64)
    adj = (stride_h * (bhid % H) + stride_z * (bhid // H)).to(tl.int64)
    pid = tl.program_id(0)
    Q += adj
    K += adj
    V += adj
    DO += adj
    DQ += adj
    DK += adj
    DV += adj
    M += off_chz
    D += off_chz
    offs_k = tl.arange(0, HEAD_DIM)
    start_n = pid * BLOCK_N1
    MASK_BLOCK_M1: tl.constexpr = BLOCK_M1 // BLK_SLICE_FACTOR
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    dv = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    dk = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    k = tl.load(K + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d)
    v = tl.load(V + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d)
    if CAUSAL:
        # the diagonal's queries first, masked, in slices of MASK_BLOCK_M1
        start_m = start_n
        num_steps = BLOCK_N1 // MASK_BLOCK_M1
        dk, dv = _attn_bwd_dkdv(dk, dv, Q, k, v, sm_scale, DO, M, D, stride_tok, stride_d, H, N_CTX,
                                MASK_BLOCK_M1, BLOCK_N1, HEAD_DIM, start_n, start_m, num_steps, MASK=True)
        start_m += num_steps * MASK_BLOCK_M1
    else:
        start_m = start_n * 0
    num_steps = (N_CTX - start_m) // BLOCK_M1
    dk, dv = _attn_bwd_dkdv(dk, dv, Q, k, v, sm_scale, DO, M, D, stride_tok, stride_d, H, N_CTX,
                            BLOCK_M1, BLOCK_N1, HEAD_DIM, start_n, start_m, num_steps, MASK=False)
    tl.store(DV + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d, dv)
    dk *= sm_scale
    tl.store(DK + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d, dk)
    # dq of query block pid
    start_m = pid * BLOCK_M2
    MASK_BLOCK_N2: tl.constexpr = BLOCK_N2 // BLK_SLICE_FACTOR
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    q = tl.load(Q + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d)
    dq = tl.zeros([BLOCK_M2, HEAD_DIM], dtype=tl.float32)
    do = tl.load(DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d)
    m = tl.load(M + offs_m)
    m = m[:, None]
    if CAUSAL:
        end_n = start_m + BLOCK_M2
        num_steps = BLOCK_M2 // MASK_BLOCK_N2
        dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, H, N_CTX, BLOCK_M2, MASK_BLOCK_N2, HEAD_DIM,
                          start_m, end_n - num_steps * MASK_BLOCK_N2, num_steps, MASK=True)
        end_n -= num_steps * MASK_BLOCK_N2
    else:
        end_n = start_m * 0 + N_CTX
    num_steps = end_n // BLOCK_N2
    dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, H, N_CTX, BLOCK_M2, BLOCK_N2, HEAD_DIM,
                      start_m, end_n - num_steps * BLOCK_N2, num_steps, MASK=False)
    dq *= LN2
    tl.store(DQ + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d, dq)


def attn_bwd(q, k, v, o, do, m, causal, sm_scale, dq, dk, dv, delta):
    """The tutorial's _attention.backward: preprocess, K pre-scaled (a torch
    multiply, as there), one fused dK/dV + dQ kernel."""
    BATCH, N_HEAD, N_CTX, D = q.shape
    PRE_BLOCK = 128
    NUM_WARPS, NUM_STAGES = 4, 5
    BLOCK_M1, BLOCK_N1, BLOCK_M2, BLOCK_N2 = 32, 128, 128, 32
    BLK_SLICE_FACTOR = 2
    RCP_LN2 = 1.4426950408889634
    assert N_CTX % PRE_BLOCK == 0 and N_CTX % BLOCK_N1 == 0
    arg_k = k * (sm_scale * RCP_LN2)
    _attn_bwd_preprocess[(N_CTX // PRE_BLOCK, BATCH * N_HEAD)](o, do, delta, N_CTX, BLOCK_M=PRE_BLOCK, HEAD_DIM=D)
    _attn_bwd[(N_CTX // BLOCK_N1, 1, BATCH * N_HEAD)](
        q, arg_k, v, sm_scale, do, dq, dk, dv, m, delta, q.stride(0), q.stride(1), q.stride(2), q.stride(3), N_HEAD,
        N_CTX, BLOCK_M1=BLOCK_M1, BLOCK_N1=BLOCK_N1, BLOCK_M2=BLOCK_M2, BLOCK_N2=BLOCK_N2,
        BLK_SLICE_FACTOR=BLK_SLICE_FACTOR, HEAD_DIM=D, CAUSAL=causal, num_warps=NUM_WARPS, num_stages=NUM_STAGES)
    return dq, dk, dv

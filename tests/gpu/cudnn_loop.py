"""tests/gpu/cudnn_loop.py SECONDS - dense cuDNN attention on D8k's shape
(4 x 8192, H16, D128, bf16, not causal) back to back for SECONDS, timing
each launch with events: the peer under the same sustained load as our
long benchmark runs (tests/gpu/clocks.sh samples the clock meanwhile).
Prints the median TFLOP/s of the first 20 launches and of all of them."""
import sys, time, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
secs = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
B, H, L, D = 4, 16, 8192, 128
q, k, v = (torch.randn(B, H, L, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
flops = 4.0 * B * H * D * L * L
ts = []
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION), torch.no_grad():
    for _ in range(3):
        F.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
    t0 = time.time()
    while time.time() - t0 < secs:
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); F.scaled_dot_product_attention(q, k, v); b.record(); torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
def med(x): x = sorted(x); return x[len(x) // 2]
print(f"cudnn D8k: first 20 launches {flops / med(ts[:20]) / 1e9:.1f} TFLOP/s, all {len(ts)} launches {flops / med(ts) / 1e9:.1f} TFLOP/s, last 20 {flops / med(ts[-20:]) / 1e9:.1f}")

#!/bin/bash
# session 25, call 1: where the backward's time goes by kernel (pre, main, post) on every suite,
# and ncu --set full of J3's and J2's main kernel; the ceilings (bf16 matmul, device copy)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
for s in J1 J2 J3 J4 D8k; do
  el "kernel durations $s"
  timeout 90 $NCU --clock-control none --kernel-name 'regex:^jfa_bwd' --launch-count 3 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
    build-w/examples/jfa_bwd_host --cubins build-w/examples --bench build-w/shared-bench/suites --only $s --reps 1 \
    > $OUT/dur_$s.txt 2>&1; echo rc=$?
  grep -E "jfa_bwd|duration|bytes" $OUT/dur_$s.txt | grep -v "==PROF==" | head -20
done
el "ncu full J3 J2"
B=build-w OUT=$OUT/prof SUITES="J3 J2" KERNEL=bwd TPROF=150 bash tests/gpu/profile.sh 2>&1 | tail -n 40
el "ceilings"
timeout 60 python3 build-w/shared-bench/peers.py --help > /dev/null 2>&1
python3 - <<'PY' 2>&1 | tail -3
import torch, time
a = torch.randn(8192, 8192, device='cuda', dtype=torch.bfloat16); b = torch.randn_like(a)
for _ in range(3): a @ b
torch.cuda.synchronize(); e0 = torch.cuda.Event(True); e1 = torch.cuda.Event(True)
ts = []
for _ in range(20):
    e0.record(); a @ b; e1.record(); torch.cuda.synchronize(); ts.append(e0.elapsed_time(e1))
ts.sort(); print("matmul bf16 8192^3 TFLOP/s %.0f" % (2 * 8192**3 / ts[10] / 1e9))
x = torch.empty(1 << 28, device='cuda', dtype=torch.float32); y = torch.empty_like(x)
ts = []
for _ in range(20):
    e0.record(); y.copy_(x); e1.record(); torch.cuda.synchronize(); ts.append(e0.elapsed_time(e1))
ts.sort(); print("copy 1 GiB GB/s %.0f" % (2 * x.numel() * 4 / ts[10] / 1e6))
PY
cd $OUT && tar czf prof.tgz prof dur_*.txt 2>/dev/null; rm -rf prof
el done

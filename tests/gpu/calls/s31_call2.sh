#!/bin/bash
# session 31, call 2 (carry build-wx with the noearly and group A/B folders): what a backward item costs
# beside the pairs it computes. Synthetic suites of equal-length sequences, 262,144 tokens each (H 8, D 128):
# causal at 128 .. 4096 tokens (items constant at 16,384, pairs growing with the length) and non-causal at
# 256 and 2048; the default build, then noearly and group on C256; then Nsight Compute on C256's main kernel
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
S=build-w/shared-bench/suites
python3 - "$S" <<'PY'
import json, sys
d = sys.argv[1]
js = json.load(open(d + "/suites.json"))
for L in (128, 256, 512, 1024, 2048, 4096):
    for causal in (True, False):
        if not causal and L not in (256, 2048):
            continue
        name = ("C" if causal else "N") + str(L)
        open("%s/%s.lengths" % (d, name), "w").write(("%d\n" % L) * (262144 // L))
        js.append({"name": name, "batch": 262144 // L, "heads": 8, "head_dim": 128, "causal": causal,
                   "mode": "self", "lengths_file": name + ".lengths"})
json.dump(js, open(d + "/suites.json", "w"), indent=1)
PY
H=build-w/examples/jfa_bwd_host
for s in C128 C256 C512 C1024 C2048 C4096 N256 N2048; do
  el "$s"
  timeout 40 $H --cubins build-w/examples --bench $S --only $s --reps 10 2>&1 | grep "^[CN][0-9]\|TFLOP/s,\|FAIL\|rror" | head -3
done
for ab in noearly group; do
  el "C256 and C1024 against $ab"
  timeout 60 $H --cubins build-w/examples --bench $S --only C256,C1024 --reps 10 --ab build-w/examples/ab_bwd/$ab 2>&1 |
    grep "^[CN][0-9]\|TFLOP/s,\|FAIL\|rror\|ab " | head -8
done
el "ncu C256"
SUITES=C256 KERNEL=bwd B=build-w TPROF=150 bash tests/gpu/profile.sh 2>&1 | tail -40
el done

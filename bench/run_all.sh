#!/bin/bash
# bench/run_all.sh - every benchmark of the project beside its peers, on a
# GPU machine, as raw JSON into OUT (bench/report.py turns that into the
# tables and plots of docs/bench/; `make bench-report` does both).
#
#   B=build-gpu OUT=DIR bash bench/run_all.sh [STEP ...]
#
# B is what `make gpu-bundle` writes (cubins, hosts, libraries, and
# ../shared/bench copied to B/shared-bench). Steps (default: all, in this
# order; each writes its own files, so a run can be split over several
# calls into the same OUT):
#   meta         the machine, the commit, the date             meta.json
#   peers        PyTorch's jagged paths (FA2 varlen, nested SDPA,
#                FlexAttention, dense cuDNN/flash), forward and backward,
#                and the ceilings (bf16 matmul, copy)           peers.json
#   jfa-fwd      our forward beside FA2 varlen / dense cuDNN, one process
#                                                             jfa_fwd_sbs.json
#   jfa-fwd-fa4  our forward beside FlashAttention-4           jfa_fwd_fa4.json
#   jfa-bwd      our backward (and training step) beside FA2 / cuDNN
#                                                             jfa_bwd_sbs.json
#   jfa-bwd-fa4  the same beside FlashAttention-4              jfa_bwd_fa4.json
#   variants     windows and soft-cap, forward and backward, beside FA4
#                and FA2                                      variants.json
#   train-step   a training loop's attention step end to end, a new
#                batch every step, beside FA2 varlen          train_step.json
#   gemm         gemm.tile beside cuBLAS                        gemm.json
#   tutorials    the Triton-style tutorials beside Triton       bench_triton.json
# FlashAttention-4 is not part of PyTorch: its steps run when
# `flash_attn.cute` imports (wheels installed in /tmp/site as
# ../shared/bench/fa4_wheels.sh says, or on the path); otherwise they print
# SKIP and the report leaves FA4's bars out. A step that fails leaves its
# log (STEP.log) and the run goes on; the exit status says whether any
# step failed. Each step has a time limit (T_STEP seconds, default 600).
# BENCH_COMMIT names the commit measured where the tree has no .git.
set -u
B=${B:-build-gpu}
OUT=${OUT:-docs/bench/raw}
T_STEP=${T_STEP:-600}
SB=$B/shared-bench
ALL="meta peers jfa-fwd jfa-fwd-fa4 jfa-bwd jfa-bwd-fa4 variants train-step gemm tutorials"
steps=${*:-$ALL}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}" PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
rc=0

if ! $PY -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "SKIP bench/run_all.sh: no GPU visible to PyTorch (the benchmarks need one)"
  exit 0
fi
fa4_ok() {
  $PY -c 'import os, site
if os.path.isdir("/tmp/site"): site.addsitedir("/tmp/site")
from flash_attn.cute import flash_attn_varlen_func' 2>/dev/null
}
# run NAME CMD...: one step under its time limit, its log beside the JSON
run() {
  local name=$1; shift
  local t0=$(date +%s)
  echo "== $name"
  timeout "$T_STEP" "$@" 2>&1 | tee "$OUT/$name.log" | grep --line-buffered -v "DeprecationWarning\|^\s*$"
  local r=${PIPESTATUS[0]}
  echo "== $name: exit $r, $(( $(date +%s) - t0 )) s$([ $r = 124 ] && echo ' (out of time)')"
  [ $r = 0 ] || rc=1
}
SBS="$PY tests/gpu/side_by_side.py --lib $B/lib/libjfa.so --cubins $B/examples --suites $SB/suites"

for s in $steps; do
  case $s in
  meta)
    rm -rf "$OUT/suites" && cp -r "$SB/suites" "$OUT/suites"   # the lengths the figures are for
    $PY - "$OUT/meta.json" <<'EOF'
import json, os, subprocess, sys, time, torch
def sh(*c):
    try: return subprocess.run(c, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception: return ""
p = torch.cuda.get_device_properties(0)
m = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "gpu": p.name, "sms": p.multi_processor_count,
     "torch": torch.__version__, "cuda": torch.version.cuda,
     "commit": os.environ.get("BENCH_COMMIT") or sh("git", "rev-parse", "--short", "HEAD") or None,
     "driver": sh("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"),
     "power_limit": sh("nvidia-smi", "--query-gpu=power.limit", "--format=csv,noheader")}
try:
    import triton; m["triton"] = triton.__version__
except Exception: pass
json.dump(m, open(sys.argv[1], "w"), indent=1); print(m)
EOF
    ;;
  peers)       run peers $PY "$SB/peers.py" "$SB/suites" --json "$OUT/peers.json" ;;
  jfa-fwd)     run jfa-fwd $SBS --json "$OUT/jfa_fwd_sbs.json" ;;
  jfa-bwd)     run jfa-bwd $SBS --bwd --json "$OUT/jfa_bwd_sbs.json" ;;
  jfa-fwd-fa4|jfa-bwd-fa4|variants)
    if ! fa4_ok; then
      echo "SKIP $s: flash_attn.cute (FlashAttention-4) does not import here; see ../shared/bench/fa4_wheels.sh"
      continue
    fi
    case $s in
    jfa-fwd-fa4) run $s $SBS --peer fa4 --json "$OUT/jfa_fwd_fa4.json" ;;
    jfa-bwd-fa4) run $s $SBS --bwd --peer fa4 --json "$OUT/jfa_bwd_fa4.json" ;;
    variants)    run $s $SBS --variant window:256,softcap:30 --bwd-variants --only J1,J2 --json "$OUT/variants.json" ;;
    esac ;;
  train-step)  TILE_LIB_DIR="$(cd "$B/lib" && pwd)" TILE_JFA_CUBIN_DIR="$(cd "$B/examples" && pwd)" \
               PYTHONPATH="$(pwd)/python${PYTHONPATH:+:$PYTHONPATH}" \
               run train-step $PY tests/gpu/train_step.py "$SB/suites" --json "$OUT/train_step.json" ;;
  gemm)        GEMM_JSON="$OUT/gemm.json" run gemm $PY tests/gpu/bench_gemm.py "$B" ${GEMM_SHAPES:-} ;;
  tutorials)   run tutorials $PY tests/gpu/bench_triton.py --build "$B" --out "$OUT" ;;
  *) echo "bench/run_all.sh: unknown step '$s' (steps: $ALL)"; rc=1 ;;
  esac
done
exit $rc

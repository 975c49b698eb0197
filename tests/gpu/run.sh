#!/bin/bash
# tests/gpu/run.sh - every GPU test, in one go, on the machine with the GPU.
#
# Built beforehand on the development machine (make), carried as build/:
#   build/examples/*_host + *.sm_90a.cubin, build/tests/test_runtime
# Runs each example against its float64 reference on random sizes (fresh
# seed each run, sizes that are not multiples of the block sizes, NaN-poisoned
# outputs), then compute-sanitizer memcheck/racecheck/synccheck on small
# sizes. Logs go to $OUT (or build/gpu-logs); a summary table prints last.
set -u
B=${B:-build}
OUT=${OUT:-$B/gpu-logs}
mkdir -p "$OUT"
SEED=${SEED:-$(date +%s)}
TRIALS=${TRIALS:-12}
summary=$OUT/summary.txt
: > "$summary"
fail=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader > "$OUT/gpu.txt" 2>&1
echo "GPU: $(cat "$OUT/gpu.txt")  seed=$SEED" | tee -a "$summary"

# The JIT build of the hosts is one static program (the GPU machine has no LLVM).
JITBIN=
if [ -f "$B/examples/examples_jit_static.xz" ]; then
  JITBIN=/tmp/examples_jit_static
  xz -d -c "$B/examples/examples_jit_static.xz" > "$JITBIN" && chmod +x "$JITBIN" || JITBIN=
fi

row() { printf '%-34s %-6s %s\n' "$1" "$2" "$3" | tee -a "$summary"; }

for e in vector_add softmax layernorm matmul gemm; do
  log=$OUT/$e.log
  if "$B/examples/${e}_host" --cubin "$B/examples/$e.sm_90a.cubin" --trials "$TRIALS" --seed "$SEED" > "$log" 2>&1; then
    row "$e (cubin, $TRIALS random sizes)" PASS "max $(grep -o 'rel_err=[^ ]*' "$log" | sort -t= -k2 -g | tail -1)"
  else
    row "$e (cubin, $TRIALS random sizes)" FAIL "see $log"; fail=1
  fi
  if [ -n "$JITBIN" ]; then
    jlog=$OUT/$e.jit.log
    if TILE_CACHE_DIR=$OUT/jit-cache "$JITBIN" $e --jit "examples/$e/$e.tile" --trials 4 --seed "$SEED" > "$jlog" 2>&1 &&
       TILE_CACHE_DIR=$OUT/jit-cache "$JITBIN" $e --jit "examples/$e/$e.tile" --trials 2 --seed "$((SEED+1))" >> "$jlog" 2>&1 &&
       grep -q "cache hit" "$jlog"; then
      row "$e (JIT from source, cache hit 2nd)" PASS "$(grep -m1 '^jit:' "$jlog" | sed 's/^jit: //')"
    else
      row "$e (JIT from source)" FAIL "see $jlog"; fail=1
    fi
  fi
done

# speed of the examples (information: issue 1 sets no targets); the copy
# ceiling of the device comes from the same run
{
  "$B/examples/vector_add_host" --cubin "$B/examples/vector_add.sm_90a.cubin" --size 268435456 --bench
  "$B/examples/softmax_host" --cubin "$B/examples/softmax.sm_90a.cubin" --size 65536 --size 1024 --bench
  "$B/examples/layernorm_host" --cubin "$B/examples/layernorm.sm_90a.cubin" --size 32768 --size 4096 --bench
  "$B/examples/matmul_host" --cubin "$B/examples/matmul.sm_90a.cubin" --size 4096 --size 4096 --size 4096 --bench
  python3 -c "
import torch
x = torch.empty(1 << 30, dtype=torch.uint8, device='cuda'); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
ts = []
for _ in range(20):
    s.record(); y.copy_(x); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
ts.sort(); print('ceiling device copy: %.0f GB/s' % (2 * x.numel() / ts[10] / 1e6))
a = torch.randn(4096, 4096, device='cuda', dtype=torch.bfloat16); b = torch.randn_like(a)
for _ in range(3): a @ b
ts = []
for _ in range(20):
    s.record(); a @ b; e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
ts.sort(); print('ceiling torch.matmul bf16 4096^3: %.1f TFLOP/s' % (2 * 4096**3 / ts[10] / 1e9))
" 2>&1
} > "$OUT/bench.log" 2>&1
grep -E "^bench|^ceiling" "$OUT/bench.log" | sed 's/^/  /' | tee -a "$summary"

if [ -x "$B/tests/test_runtime" ]; then
  if "$B/tests/test_runtime" > "$OUT/test_runtime.log" 2>&1; then row "runtime unit tests (GPU parts)" PASS ""
  else row "runtime unit tests (GPU parts)" FAIL "see $OUT/test_runtime.log"; fail=1; fi
fi

# the explicit primitives, one small kernel each
if [ -x "$B/tests/test_prims" ]; then
  if "$B/tests/test_prims" "$B/tests/prims" > "$OUT/prims.log" 2>&1; then row "primitives (tests/gpu/prims)" PASS "$(grep -c ^PASS "$OUT/prims.log") checks"
  else row "primitives (tests/gpu/prims)" FAIL "$(grep ^FAIL "$OUT/prims.log" | head -3 | tr '\n' ' ')"; fail=1; fi
fi

# compute-sanitizer at small sizes. memcheck also at sizes that are not a
# multiple of any vector width (1000003, 4099, odd row lengths): a masked
# load vectorized across the end of an array reads a few bytes past it,
# which only memcheck sees (it knows each allocation's exact size); the
# first size set of each example also runs racecheck and synccheck.
if command -v compute-sanitizer > /dev/null; then
  small_vector_add=("3000" "1000003" "4099" "1")
  small_softmax=("37 300" "3 1001" "5 1023")
  small_layernorm=("17 1500" "3 1501" "2 4099")
  small_matmul=("100 70 50" "33 65 17")
  small_gemm=("200 300 100" "129 257 72")
  for e in vector_add softmax layernorm matmul gemm; do
    declare -n sets=small_$e
    for i in "${!sets[@]}"; do
      args=$(for x in ${sets[$i]}; do printf -- '--size %s ' "$x"; done)
      tools="memcheck"; [ "$i" = 0 ] && tools="memcheck racecheck synccheck"
      for tool in $tools; do
        log=$OUT/$e.$tool.$i.log
        compute-sanitizer --tool $tool --error-exitcode 9 "$B/examples/${e}_host" --cubin "$B/examples/$e.sm_90a.cubin" $args > "$log" 2>&1
        rc=$?
        if [ $rc -eq 0 ] && grep -q "ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards" "$log"; then row "$e $tool (${sets[$i]})" PASS ""
        else row "$e $tool (${sets[$i]})" FAIL "rc=$rc, see $log"; fail=1; fi
      done
    done
    unset -n sets
  done
else
  row "compute-sanitizer" SKIP "not installed"
fi
# GEMM speed beside cuBLAS (same run)
B=$B OUT=$OUT bash tests/gpu/bench_gemm.sh > /dev/null 2>&1
grep -E "^[0-9]+x|^M x N|geometric|CORRECTNESS" "$OUT/bench_gemm.log" | sed 's/^/  /' | tee -a "$summary"
grep -q CORRECTNESS "$OUT/bench_gemm.log" && fail=1
# the tutorial's three steps
B=$B OUT=$OUT bash tests/gpu/bench_tutorial.sh | sed 's/^/  /' | tee -a "$summary"
# SASS of the GEMM: HGMMA present, no local memory
if command -v cuobjdump > /dev/null; then
  cuobjdump --dump-sass "$B/examples/gemm.sm_90a.cubin" > "$OUT/gemm.sass" 2>&1
  row "gemm SASS: HGMMA instructions" "$(grep -c HGMMA "$OUT/gemm.sass")" ""
  row "gemm SASS: local memory (LDL/STL)" "$(grep -cE 'LDL|STL' "$OUT/gemm.sass")" ""
fi

echo "---" | tee -a "$summary"
[ $fail -eq 0 ] && echo "GPU TESTS PASSED" | tee -a "$summary" || echo "GPU TESTS FAILED" | tee -a "$summary"
tar -C "$OUT" -czf "$OUT/logs.tgz" --exclude=logs.tgz --exclude=summary.txt . 2>/dev/null
exit $fail

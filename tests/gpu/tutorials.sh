#!/bin/bash
# tests/gpu/tutorials.sh - the C host checkers of Triton's tutorials in Tile
# (mk/tutorials.mk: layernorm_bwd, matmul_lrelu, fused_attention) on the GPU:
# random sizes against float64 (fresh seed), the tutorials' shapes with
# --bench, compute-sanitizer memcheck at small sizes (racecheck and synccheck
# on one). Needs the hosts and cubins of `make tutorials` in $B/examples
# (gpu-bundle has them). Logs in $OUT; a summary prints last.
set -u
B=${B:-build}
OUT=${OUT:-$B/gpu-logs}
mkdir -p "$OUT"
SEED=${SEED:-$(date +%s)}
TRIALS=${TRIALS:-6}
E=$B/examples
fail=0
row() { printf '%-44s %-6s %s\n' "$1" "$2" "$3"; }
# NAME HOST CUBIN ARGS...
check() {
  name=$1 host=$2 cubin=$3
  shift 3
  log=$OUT/tut_$name.log
  if [ ! -f "$E/$cubin" ]; then row "$name" SKIP "$E/$cubin missing"; return; fi
  if "$E/$host" --cubin "$E/$cubin" "$@" > "$log" 2>&1 && ! grep "rel_err" "$log" | grep -vq " OK$"; then
    row "$name" PASS "max $(grep -o 'rel_err=[^ ]*' "$log" | sort -t= -k2 -g | tail -1)"
  else
    row "$name" FAIL "see $log"; fail=1
  fi
}
for t in f32 f16; do
  check "layernorm_bwd.$t (random)" layernorm_bwd_host "layernorm_bwd.$t.b1024.sm_90a.cubin" --trials "$TRIALS" --seed "$SEED"
done
check "layernorm_bwd.f16.split (random)" layernorm_bwd_host layernorm_bwd.f16.b1024.split.sm_90a.cubin --trials "$TRIALS" \
  --seed "$SEED"
check "layernorm_bwd.f16.b16384 (15872 cols)" layernorm_bwd_host layernorm_bwd.f16.b16384.sm_90a.cubin --size 300 \
  --size 15872
check "matmul_lrelu (random)" matmul_host matmul_lrelu.sm_90a.cubin --trials "$TRIALS" --seed "$SEED"
for d in 64 128; do
  for c in full causal; do
    for t in f16 bf16; do
      check "fused_attention.d$d.$c.$t (random)" fused_attention_host "fused_attention.d$d.$c.$t.sm_90a.cubin" \
        --trials "$TRIALS" --seed "$SEED"
    done
  done
done
# the tutorials' shapes, timed by the hosts (checked on a sample)
{
  for n in 1024 4096 8192; do
    "$E/layernorm_bwd_host" --cubin "$E/layernorm_bwd.f16.b$n.sm_90a.cubin" --size 4096 --size $n --bench
  done
  "$E/layernorm_bwd_host" --cubin "$E/layernorm_bwd.f32.b4096.sm_90a.cubin" --size 32768 --size 4096 --bench
  "$E/matmul_host" --cubin "$E/matmul_lrelu.sm_90a.cubin" --size 4096 --size 4096 --size 4096 --bench
  for c in full causal; do
    "$E/fused_attention_host" --cubin "$E/fused_attention.d64.$c.f16.sm_90a.cubin" --size 4 --size 32 --size 4096 --bench
    "$E/fused_attention_host" --cubin "$E/fused_attention.d128.$c.f16.sm_90a.cubin" --size 4 --size 16 --size 4096 --bench
  done
} > "$OUT/tut_bench.log" 2>&1 || { row "tutorials --bench" FAIL "see $OUT/tut_bench.log"; fail=1; }
grep -q FAIL "$OUT/tut_bench.log" && { row "tutorials --bench checks" FAIL "see $OUT/tut_bench.log"; fail=1; }
grep "^bench" "$OUT/tut_bench.log" | sed 's/^/  /'
if command -v compute-sanitizer > /dev/null; then
  san() { # NAME TOOLS HOST CUBIN ARGS...
    name=$1 tools=$2 host=$3 cubin=$4
    shift 4
    for tool in $tools; do
      log=$OUT/tut_$name.$tool.log
      compute-sanitizer --tool "$tool" --error-exitcode 9 "$E/$host" --cubin "$E/$cubin" "$@" > "$log" 2>&1
      rc=$?
      if [ $rc -eq 0 ] && grep -q "ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards" "$log"; then
        row "$name $tool" PASS ""
      else
        row "$name $tool" FAIL "rc=$rc, see $log"; fail=1
      fi
    done
  }
  san layernorm_bwd.f16 "memcheck racecheck synccheck" layernorm_bwd_host layernorm_bwd.f16.b1024.sm_90a.cubin \
    --size 37 --size 1001 --size 5
  san layernorm_bwd.f32 memcheck layernorm_bwd_host layernorm_bwd.f32.b1024.sm_90a.cubin --size 3 --size 1023
  san matmul_lrelu memcheck matmul_host matmul_lrelu.sm_90a.cubin --size 100 --size 70 --size 50
  san fused_attention.d64.causal "memcheck racecheck synccheck" fused_attention_host \
    fused_attention.d64.causal.f16.sm_90a.cubin --size 1 --size 2 --size 200
  san fused_attention.d128.full memcheck fused_attention_host fused_attention.d128.full.bf16.sm_90a.cubin \
    --size 1 --size 2 --size 77
  san fused_attention.d128.causal "memcheck racecheck synccheck" fused_attention_host \
    fused_attention.d128.causal.f16.sm_90a.cubin --size 1 --size 2 --size 300
  san layernorm_bwd.f16.split "memcheck racecheck" layernorm_bwd_host layernorm_bwd.f16.b1024.split.sm_90a.cubin \
    --size 37 --size 1001 --size 5
  # the row loads through cp.async rings (the specialized 1024-column f16
  # build: RING=3, compiler/pipeline_rows.c); its columns a multiple of 16
  san layernorm_bwd.f16.ring "memcheck racecheck synccheck" layernorm_bwd_host \
    layernorm_bwd.f16.b1024.s16.sm_90a.cubin --size 37 --size 1008 --size 5
  # rows of 16384: dw and db homed in shared memory by the compiler
  san layernorm_bwd.f16.b16384 "memcheck racecheck synccheck" layernorm_bwd_host layernorm_bwd.f16.b16384.sm_90a.cubin \
    --size 40 --size 15872
else
  row "compute-sanitizer" SKIP "not installed"
fi
[ $fail -eq 0 ] && echo "tutorials on the GPU: all passed (seed $SEED)" || echo "tutorials on the GPU: FAILED (seed $SEED)"
exit $fail

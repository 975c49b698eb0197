#!/bin/bash
# tests/gpu/emu_xval.sh - the emulator against the GPU (issue 16): every
# example and the JFA forward and backward small checks, run twice with the
# same seed and sizes, once on the GPU and once on the emulator
# (TILE_INTERPRET=1, on this machine's CPUs), their outputs written with
# --dump (examples/common/host.h) and compared by tests/gpu/emu_xval.py.
#
#   B=build-gpu bash tests/gpu/emu_xval.sh    (make gpu-bundle first; on the GPU machine)
#
# What must agree (docs/emulator.md, "Cross-validation"):
#   vector_add           bitwise (one IEEE f32 add per element, on both)
#   softmax, layernorm   f32: max|gpu - emu| / max|gpu| <= 1e-5 per output (the GPU's
#                        ex2.approx, rcp/rsqrt.approx against the emulator's exact libm)
#   matmul, gemm, JFA    bf16 outputs <= 1e-2 (an f32 sum that differs in its last bits
#                        may round to the next bf16, 2^-8 of the element), JFA's LSE
#                        (f32) <= 1e-4
# Both runs must also pass their own checks against the float64 references.
# Logs and dumps go to $OUT (default $B/gpu-logs/emu_xval); a table prints last.
# SEED (default 7), EMU_JOBS (emulator runs at once, default 8).
set -u
B=${B:-build}
OUT=${OUT:-$B/gpu-logs/emu_xval}
SEED=${SEED:-7}
EMU_JOBS=${EMU_JOBS:-8}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
summary=$OUT/summary.txt
: > "$summary"
fail=0
unset TILE_INTERPRET

# NAME|TOLERANCE|COMMAND (the host and its arguments, without --dump)
E=$B/examples
cases="vector_add|bitwise|$E/vector_add_host --cubin $E/vector_add.sm_90a.cubin --trials 4 --seed $SEED
softmax|1e-5|$E/softmax_host --cubin $E/softmax.sm_90a.cubin --trials 4 --seed $SEED
layernorm|1e-5|$E/layernorm_host --cubin $E/layernorm.sm_90a.cubin --trials 4 --seed $SEED
matmul|1e-2|$E/matmul_host --cubin $E/matmul.sm_90a.cubin --trials 3 --seed $SEED
gemm|1e-2|$E/gemm_host --cubin $E/gemm.sm_90a.cubin --trials 3 --seed $SEED
jfa|bf16=1e-2,f32=1e-4|$E/jfa_host --cubins $E --check --small --seed $SEED
jfa_bwd|bf16=1e-2|$E/jfa_bwd_host --cubins $E --check --small --seed $SEED"

# the emulator's runs in the background (CPU), EMU_JOBS at once, while the GPU's run in turn
emu_pids=
n=0
while IFS='|' read -r name tol cmd; do
  [ -n "$name" ] || continue
  ( TILE_INTERPRET=1 timeout 3000 $cmd --dump "$OUT/$name.emu.dump" > "$OUT/$name.emu.log" 2>&1
    echo $? > "$OUT/$name.emu.rc" ) &
  emu_pids="$emu_pids $!"
  n=$((n + 1))
  if [ $n -ge "$EMU_JOBS" ]; then wait; n=0; fi
done <<EOF
$cases
EOF
while IFS='|' read -r name tol cmd; do
  [ -n "$name" ] || continue
  timeout 600 $cmd --dump "$OUT/$name.gpu.dump" > "$OUT/$name.gpu.log" 2>&1
  echo $? > "$OUT/$name.gpu.rc"
done <<EOF
$cases
EOF
wait

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
echo "GPU: $(cat "$OUT/gpu.txt")  seed=$SEED" | tee -a "$summary"
printf '%-11s %-7s %-8s %-8s %-9s %-10s %-10s %-20s %s\n' example gpu-run emu-run outputs bitwise max_abs max_rel tol verdict |
  tee -a "$summary"
while IFS='|' read -r name tol cmd; do
  [ -n "$name" ] || continue
  grc=$(cat "$OUT/$name.gpu.rc" 2> /dev/null || echo 99)
  erc=$(cat "$OUT/$name.emu.rc" 2> /dev/null || echo 99)
  gs=$([ "$grc" = 0 ] && echo PASS || echo "FAIL($grc)")
  es=$([ "$erc" = 0 ] && echo PASS || echo "FAIL($erc)")
  res=
  if [ -s "$OUT/$name.gpu.dump" ] && [ -s "$OUT/$name.emu.dump" ]; then
    python3 "$HERE/emu_xval.py" "$name" "$OUT/$name.gpu.dump" "$OUT/$name.emu.dump" "$tol" > "$OUT/$name.cmp" 2>&1
    res=$(grep '^RESULT ' "$OUT/$name.cmp" | tail -1)
  fi
  if [ -n "$res" ]; then
    # RESULT name verdict records bitwise max_abs max_rel worst
    set -- $res
    verdict=$3
    [ "$gs" = PASS ] && [ "$es" = PASS ] || verdict=FAIL
    printf '%-11s %-7s %-8s %-8s %-9s %-10s %-10s %-20s %s\n' "$name" "$gs" "$es" "$4" "$5" "$6" "$7" "$tol" \
      "$verdict (worst: $8)" | tee -a "$summary"
  else
    verdict=FAIL
    printf '%-11s %-7s %-8s %-8s %-9s %-10s %-10s %-20s %s\n' "$name" "$gs" "$es" - - - - "$tol" \
      "FAIL (no outputs to compare: see $OUT/$name.*.log)" | tee -a "$summary"
  fi
  [ "$verdict" = PASS ] || fail=1
done <<EOF
$cases
EOF
echo "(per output: $OUT/NAME.cmp; the runs' logs: NAME.gpu.log, NAME.emu.log)" | tee -a "$summary"
[ $fail -eq 0 ] && echo "emulator and GPU agree on every example" | tee -a "$summary" ||
  echo "emulator and GPU DISAGREE (or a run failed)" | tee -a "$summary"
exit $fail

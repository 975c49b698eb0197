#!/bin/sh
# tests/emu/tutorials.sh - Triton's tutorials in Tile (mk/tutorials.mk: the
# layer-norm backward, matmul with the fused leaky_relu, the fused-attention
# forward and backward) on the emulator (TILE_INTERPRET=1), their host
# programs against float64 at small random shapes (partial blocks included),
# a few seconds each, sm_90a and sm_100a cubins; the attention backward
# also under the random and adversarial schedules.
set -u
B=${B:-build}
E=$B/examples
fail=0
export TILE_INTERPRET=1
# NAME HOST CUBIN CHECKS ARGS...: the run must print CHECKS lines ending in OK
run() {
  name=$1 host=$2 cubin=$3 want=$4
  shift 4
  log=${TMPDIR:-/tmp}/emu_tut_$name.log
  case $cubin in /*) ;; *) cubin=$E/$cubin ;; esac
  if timeout 120 "$E/$host" --cubin "$cubin" "$@" > "$log" 2>&1 && [ "$(grep -c ' OK$' "$log")" -eq "$want" ] &&
     ! grep "rel_err" "$log" | grep -vq " OK$"; then
    echo "ok   $name on the emulator ($want checks, max $(grep -o 'rel_err=[^ ]*' "$log" | sort -t= -k2 -g | tail -1))"
  else
    echo "FAIL $name on the emulator:"; tail -n 5 "$log"; fail=1
  fi
}
run layernorm_bwd.f32 layernorm_bwd_host layernorm_bwd.f32.b1024.sm_90a.cubin 27 --trials 3 --seed 7
run layernorm_bwd.f16 layernorm_bwd_host layernorm_bwd.f16.b1024.sm_90a.cubin 27 --trials 3 --seed 8
# dw and db by their own kernel (DWDB=false, as the .split and f32 long-row builds)
run layernorm_bwd.f16.split layernorm_bwd_host layernorm_bwd.f16.b1024.split.sm_90a.cubin 9 --trials 3 --seed 9
# w loaded again each row (W_ONCE=false, as the bench's 4096- and 8192-column builds)
run layernorm_bwd.f16.wrow layernorm_bwd_host layernorm_bwd.f16.b1024.wrow.sm_90a.cubin 27 --trials 3 --seed 10
run matmul_lrelu matmul_host matmul_lrelu.sm_90a.cubin 2 --trials 2 --seed 7
# layernorm with the row read once (ONE_BLOCK): rows shorter than the block,
# one exactly as long, one of a single column
for c in 1000 1024 1; do
  run layernorm.b1024.one.$c layernorm_host layernorm.b1024.one.sm_90a.cubin 3 --size 57 --size $c --seed 7
done
# attention: 9 checks a trial (O, M, Delta; dQ, dK, dV from the three
# backward kernels and from the fused one); the first trial's N_CTX is a
# multiple of the blocks, the others are not
run fused_attention.d64.full.f16 fused_attention_host fused_attention.d64.full.f16.sm_90a.cubin 27 --trials 3 --seed 7
run fused_attention.d64.causal.bf16 fused_attention_host fused_attention.d64.causal.bf16.sm_90a.cubin 27 --trials 3 --seed 8
run fused_attention.d128.causal.f16 fused_attention_host fused_attention.d128.causal.f16.sm_90a.cubin 18 --trials 2 --seed 9
run fused_attention.d128.full.bf16 fused_attention_host fused_attention.d128.full.bf16.sm_90a.cubin 18 --trials 2 --seed 10
# head dim 128 on sm_90a: 128-key (and 128-query) blocks on wgmma; 300
# tokens: two whole blocks and a partial one, the diagonal's in each
run fused_attention.d128.full.f16.n300 fused_attention_host fused_attention.d128.full.f16.sm_90a.cubin 9 \
  --size 1 --size 2 --size 300 --seed 11
run fused_attention.d128.causal.bf16.n300 fused_attention_host fused_attention.d128.causal.bf16.sm_90a.cubin 9 \
  --size 2 --size 1 --size 300 --seed 12
# the forward's rings by TMA (pipeline_multi.c): 600 tokens are more KV
# blocks than slots, so every slot is refilled while the other warpgroup
# may still read it; adversarial schedules find a refill issued too early
for sched in adversarial:7 random:5; do
  export TILE_EMU_SEED=$sched
  run fused_attention.d64.full.f16.n600.$sched fused_attention_host fused_attention.d64.full.f16.sm_90a.cubin 9 \
    --size 1 --size 1 --size 600 --seed 15
  run fused_attention.d128.causal.bf16.n600.$sched fused_attention_host fused_attention.d128.causal.bf16.sm_90a.cubin 9 \
    --size 1 --size 1 --size 600 --seed 16
done
unset TILE_EMU_SEED
# the backward's loops on wgmma (pipeline_multi.c: rings of cp.async copies,
# tiles staged once, early wgmmas waited for later) under the random and
# adversarial schedules too: a copy or a wgmma completes as late as the
# hardware may let it, so a missing wait reads stale or zero tiles
for sched in random:5 adversarial:7; do
  export TILE_EMU_SEED=$sched
  run fused_attention.d64.full.f16.$sched fused_attention_host fused_attention.d64.full.f16.sm_90a.cubin 27 \
    --trials 3 --seed 13
  run fused_attention.d64.causal.bf16.$sched fused_attention_host fused_attention.d64.causal.bf16.sm_90a.cubin 27 \
    --trials 3 --seed 14
  run fused_attention.d128.causal.f16.$sched fused_attention_host fused_attention.d128.causal.f16.sm_90a.cubin 9 \
    --size 1 --size 1 --size 300 --seed 15
done
unset TILE_EMU_SEED
# the backward's rings by TMA too (tilec --tma-rings=all; the default keeps
# cp.async there, 3-14% faster on the H100: docs/perf.md): 600 tokens, every slot refilled
# while the other warpgroup may still read it, under the adversarial and
# random schedules
TD=$(mktemp -d "${TMPDIR:-/tmp}/emu_tut_tma.XXXXXX") || { echo "FAIL tutorials: no temporary folder"; exit 1; }
for v in "64 true bf16 -D REGS=128" "128 false f16"; do
  set -- $v
  d=$1 c=$2 t=$3
  shift 3
  cb=$TD/fa.d$d.$c.$t.tma.cubin
  if ! "$B/bin/tilec" --tma-rings=all -D HEAD_DIM=$d -D CAUSAL=$c -D T=$t "$@" -o "$cb" \
      examples/fused_attention/fused_attention.tile > "$TD/err" 2>&1; then
    echo "FAIL fused_attention.d$d.$c.$t.btma: tilec failed"; cat "$TD/err"; fail=1; continue
  fi
  for sched in adversarial:7 random:5; do
    export TILE_EMU_SEED=$sched
    run fused_attention.d$d.$c.$t.btma.$sched fused_attention_host "$cb" 9 --size 1 --size 2 --size 600 --seed 17
  done
  unset TILE_EMU_SEED
done
# layernorm_bwd's rows of 16384 with the dw/db partial sums in the row
# kernel (DWDB=true): the compiler homes them in shared memory
# (compiler/home.c), each thread loading and storing its own part every
# row; several rows a program, round-robin and adversarial
if "$B/bin/tilec" -D T=f16 -D BLOCK=16384 -D WARPS=16 -D DWDB=true -D W_ONCE=false \
    -o "$TD/lnb.home.cubin" examples/layernorm_bwd/layernorm_bwd.tile > "$TD/err" 2>&1; then
  run layernorm_bwd.f16.b16384.home layernorm_bwd_host "$TD/lnb.home.cubin" 9 --size 7 --size 15872 --size 3 --seed 5
  export TILE_EMU_SEED=adversarial:3
  run layernorm_bwd.f16.b16384.home.adversarial:3 layernorm_bwd_host "$TD/lnb.home.cubin" 9 --size 40 --size 16384 \
    --size 2 --seed 6
  unset TILE_EMU_SEED
else
  echo "FAIL layernorm_bwd.f16.b16384.home: tilec failed"; cat "$TD/err"; fail=1
fi
# a loop's plain loads through cp.async rings (stages(S) on a dot-less
# kernel, compiler/pipeline_rows.c): layernorm_bwd's rows two ahead
# (RING=3), and in one slot refilled at the top of each row beside the
# homed dw/db (16384 columns, RING=2); layernorm's three chunk loops (step
# BLOCK, a partial last chunk, one chunk); round-robin and adversarial
# schedules (the emulator fails a read of a slot that this thread's
# cp.async.wait_group does not cover yet, and a copy into a slot another
# thread may still read)
R16="-D n_cols=multiple_of(16) -D stride=multiple_of(16)"
ringc() { # NAME SOURCE DEFS...: $TD/NAME.cubin
  rn=$1 rs=$2; shift 2
  if "$B/bin/tilec" $R16 "$@" -o "$TD/$rn.cubin" "$rs" > "$TD/err" 2>&1 &&
     "$B/bin/tilec" $R16 "$@" --emit=tir -o - "$rs" 2>/dev/null | grep -q "// ring: loop at .* through cp.async"; then
    return 0
  fi
  echo "FAIL $rn: tilec failed, or no ring in its --emit=tir"; cat "$TD/err"; fail=1; return 1
}
if ringc lnb.ring3 examples/layernorm_bwd/layernorm_bwd.tile -D T=f16 -D BLOCK=1024 -D WARPS=4 -D RING=3; then
  for sched in rr adversarial:3 random:4; do
    export TILE_EMU_SEED=$sched
    run layernorm_bwd.f16.ring3.$sched layernorm_bwd_host "$TD/lnb.ring3.cubin" 9 --size 37 --size 1008 --size 5 --seed 3
  done
  unset TILE_EMU_SEED
fi
# the shipped 8192-column f16 form (mk/tutorials.mk: 16 warps, w from L1,
# RING=4), on short rows: three rows ahead, one barrier a row besides the ring's
if ringc lnb.ring4 examples/layernorm_bwd/layernorm_bwd.tile -D T=f16 -D BLOCK=8192 -D WARPS=16 -D W_ONCE=false \
     -D RING=4; then
  for sched in rr adversarial:3; do
    export TILE_EMU_SEED=$sched
    run layernorm_bwd.f16.ring4.$sched layernorm_bwd_host "$TD/lnb.ring4.cubin" 9 --size 11 --size 8000 --size 2 --seed 4
  done
  unset TILE_EMU_SEED
fi
if ringc lnb.ring1 examples/layernorm_bwd/layernorm_bwd.tile -D T=f16 -D BLOCK=16384 -D WARPS=16 -D W_ONCE=false \
     -D RING=2; then
  for sched in rr adversarial:3; do
    export TILE_EMU_SEED=$sched
    run layernorm_bwd.f16.b16384.ring1.$sched layernorm_bwd_host "$TD/lnb.ring1.cubin" 9 --size 7 --size 15872 \
      --size 3 --seed 5
  done
  unset TILE_EMU_SEED
fi
if ringc ln.ring3 examples/layernorm/layernorm.tile -D STAGES=3; then
  for sched in rr adversarial:5; do
    export TILE_EMU_SEED=$sched
    run layernorm.ring3.$sched layernorm_host "$TD/ln.ring3.cubin" 3 --size 5 --size 3008 --seed 2
    run layernorm.ring3.one.$sched layernorm_host "$TD/ln.ring3.cubin" 3 --size 3 --size 16 --seed 4
  done
  unset TILE_EMU_SEED
fi
rm -rf "$TD"
# the sm_100a cubins (LLVM pairs f32 arithmetic into f32x2 there, widens
# 16-bit operands inside fma.f32.f16, folds max reductions into 3-input max);
# not again under the sanitizer build (TILE_SAN: test_emu covers those paths)
if [ -n "${TILE_SAN:-}" ]; then
  [ $fail -eq 0 ] && echo "tutorials on the emulator: all passed (sm_90a)" || echo "tutorials on the emulator: FAILED"
  exit $fail
fi
run layernorm_bwd.f16.sm_100a layernorm_bwd_host layernorm_bwd.f16.b1024.sm_100a.cubin 18 --trials 2 --seed 11
# the matmul on tcgen05 (pipeline_sm100.c: TMA rings, tcgen05.mma into tensor
# memory committed to the slots' mbarriers, tcgen05.ld by both warpgroups),
# on a device that says cc 10.0, at ragged M, N, K (a single element, one
# partial block each way, 16 K blocks with a partial last one, exact
# blocks), with and without the leaky_relu epilogue, round-robin and
# adversarial schedules (an MMA runs as late as the hardware may)
export TILE_EMU_ARCH=sm_100a
for sched in rr adversarial:5; do
  export TILE_EMU_SEED=$sched
  for s in 1x1x1 129x257x65 300x130x1000 128x256x64; do
    run matmul.sm_100a.$s.$sched matmul_host matmul.sm_100a.cubin 1 \
      --size "${s%%x*}" --size "$(echo $s | cut -dx -f2)" --size "${s##*x}" --seed 11
  done
  run matmul_lrelu.sm_100a.$sched matmul_host matmul_lrelu.sm_100a.cubin 3 --trials 3 --seed 11
done
unset TILE_EMU_SEED TILE_EMU_ARCH
run fused_attention.d64.causal.f16.sm_100a fused_attention_host fused_attention.d64.causal.f16.sm_100a.cubin 18 \
  --trials 2 --seed 11
run fused_attention.d128.full.bf16.sm_100a fused_attention_host fused_attention.d128.full.bf16.sm_100a.cubin 9 \
  --trials 1 --seed 12
[ $fail -eq 0 ] && echo "tutorials on the emulator: all passed" || echo "tutorials on the emulator: FAILED"
exit $fail

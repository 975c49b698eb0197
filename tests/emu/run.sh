#!/bin/sh
# tests/emu/run.sh - the examples' host programs, unchanged, on the
# emulator (TILE_INTERPRET=1: no GPU, the cubins' own PTX run on the CPU;
# docs/emulator.md), at random sizes against their float64 references.
# The Blackwell JFA kernels are tests/emu/blackwell.sh, the Triton
# tutorials tests/emu/tutorials.sh, the sanitizer build's short list
# tests/emu/san.sh.
set -u
B=${B:-build}
fail=0
export TILE_INTERPRET=1
for e in vector_add softmax layernorm matmul; do
  log=${TMPDIR:-/tmp}/emu_$e.log
  if timeout 300 "$B/examples/${e}_host" --cubin "$B/examples/$e.sm_90a.cubin" --trials 3 --seed 7 > "$log" 2>&1 &&
     grep -q " OK$" "$log" && ! grep -v " OK$" "$log" | grep -q "rel_err"; then
    echo "ok   $e on the emulator ($(grep -c ' OK$' "$log") checks)"
  else
    echo "FAIL $e on the emulator:"; tail -n 5 "$log"; fail=1
  fi
done
# gemm: TMA loads and stores through tensor maps, mbarriers, wgmma, stmatrix,
# warp-specialized (a producer warp, two consumer warpgroups); every run
# here has the emulator's checks on (races, proxy fences, slots, mbarrier
# counts: docs/emulator.md), gemm also under an adversarial schedule
for sched in rr adversarial:3; do
  log=${TMPDIR:-/tmp}/emu_gemm.log
  if TILE_EMU_SEED=$sched timeout 300 "$B/examples/gemm_host" --cubin "$B/examples/gemm.sm_90a.cubin" --trials 3 --seed 7 \
       > "$log" 2>&1 && [ "$(grep -c ' OK$' "$log")" -eq 3 ]; then
    echo "ok   gemm on the emulator ($(grep -c ' OK$' "$log") checks, schedule $sched)"
  else
    echo "FAIL gemm on the emulator (schedule $sched):"; tail -n 5 "$log"; fail=1
  fi
done
# gemm_sm100 (issue 18): the Blackwell GEMM through the same host -- tensor
# memory, tcgen05.mma committed to mbarriers, tcgen05.ld in the epilogue --,
# at gemm_host's sizes and at 2100 x 4300 x 64 (289 tiles over 132 CTAs:
# both TMEM accumulators and their phases), on two schedules
log=${TMPDIR:-/tmp}/emu_gemm_sm100.log
c100=$B/examples/gemm_sm100.sm_100a.cubin
if timeout 300 "$B/examples/gemm_host" --cubin "$c100" --trials 3 --seed 7 > "$log" 2>&1 &&
   TILE_EMU_SEED=adv:3 timeout 300 "$B/examples/gemm_host" --cubin "$c100" --trials 1 --size 2100 --size 4300 \
     --size 64 >> "$log" 2>&1 &&
   [ "$(grep -c ' OK$' "$log")" -eq 4 ]; then
  echo "ok   gemm_sm100 on the emulator ($(grep -c ' OK$' "$log") checks)"
else
  echo "FAIL gemm_sm100 on the emulator:"; tail -n 5 "$log"; fail=1
fi
# gemm_sm100_2cta: the 2-CTA Blackwell GEMM (tcgen05.mma.cta_group::2 on
# clusters of 2, 256 x 256 tiles) through the same host, at gemm_host's
# sizes and at 2100 x 4300 x 200 (153 tiles over 66 pairs: both TMEM
# accumulators and their phases) on a random and an adversarial schedule;
# and its -D PAIRS=2 build, gemm_sm100_2cta_mc (clusters of 4: two pairs
# along N, A multicast to both with .cta_group::2 completions on each
# pair's even CTA) at the same sizes and schedules: 2100 x 4300 x 200 is
# 81 blocks of 256 x 512 over 33 clusters (K = 200: four k-steps, so the
# second tile reuses every slot and a_free's arrivals run)
for g in gemm_sm100_2cta gemm_sm100_2cta_mc; do
  log=${TMPDIR:-/tmp}/emu_$g.log
  c2=$B/examples/$g.sm_100a.cubin
  if timeout 300 "$B/examples/gemm_host" --cubin "$c2" --trials 3 --seed 7 > "$log" 2>&1 &&
     TILE_EMU_SEED=random:5 timeout 300 "$B/examples/gemm_host" --cubin "$c2" --trials 1 --size 2100 --size 4300 \
       --size 200 >> "$log" 2>&1 &&
     TILE_EMU_SEED=adv:3 timeout 300 "$B/examples/gemm_host" --cubin "$c2" --trials 1 --size 2100 --size 4300 \
       --size 200 >> "$log" 2>&1 &&
     [ "$(grep -c ' OK$' "$log")" -eq 5 ]; then
    echo "ok   $g on the emulator ($(grep -c ' OK$' "$log") checks)"
  else
    echo "FAIL $g on the emulator:"; tail -n 5 "$log"; fail=1
  fi
done
# Jagged Flash Attention, forward and backward, their own small checks
# (both head dims, causal, broadcast-Q, split tiles, the deterministic
# backward whose CTAs wait on each other through a semaphore), each on a
# plan made for another batch and then updated to the case's (--update:
# jfa_plan_update's rebuild, growth, shrink, same-lengths and refusal paths;
# the plan's creation runs the same fill)
for e in jfa jfa_bwd; do
  log=${TMPDIR:-/tmp}/emu_$e.log
  if timeout 900 "$B/examples/${e}_host" --cubins "$B/examples" --check --small --update > "$log" 2>&1 &&
     tail -n 1 "$log" | grep -q "^ALL OK$"; then
    echo "ok   $e on the emulator ($(grep -c ' OK$' "$log") checks)"
  else
    echo "FAIL $e on the emulator:"; tail -n 3 "$log"; fail=1
  fi
done
# the forward on 7 CTAs, so that each walks several tiles: the tile-info
# and Q slots and the K/V ring across tiles (the small cases on 132 CTAs
# give most CTAs one tile); adversarial schedule
log=${TMPDIR:-/tmp}/emu_jfa_ctas.log
if TILE_EMU_SEED=adversarial:1 timeout 900 "$B/examples/jfa_host" --cubins "$B/examples" --check --small --ctas 7 \
     > "$log" 2>&1 && tail -n 1 "$log" | grep -q "^ALL OK$"; then
  echo "ok   jfa on 7 CTAs, several tiles each, on the emulator ($(grep -c ' OK$' "$log") checks)"
else
  echo "FAIL jfa on 7 CTAs on the emulator:"; tail -n 3 "$log"; fail=1
fi
# the backward on 7 CTAs, so that each walks several items: the hand-offs
# between items (K and V's buffers, the dQ stages, the Q ring across items),
# which the small cases on 132 CTAs barely reach; adversarial schedule
log=${TMPDIR:-/tmp}/emu_jfa_bwd_ctas.log
if TILE_EMU_SEED=adversarial:1 timeout 900 "$B/examples/jfa_bwd_host" --cubins "$B/examples" --check --small \
       --case "mixed (empty" --ctas 7 > "$log" 2>&1 && tail -n 1 "$log" | grep -q "^ALL OK$"; then
  echo "ok   jfa_bwd on 7 CTAs, several items each, on the emulator ($(grep -c ' OK$' "$log") checks)"
else
  echo "FAIL jfa_bwd on 7 CTAs on the emulator:"; tail -n 3 "$log"; fail=1
fi
# the same with the CTAs taking turns (TILE_EMU_CTA_TURN), so that the
# items spread over them and the causal kernel's OWN flags (each dQ block's
# owner, the others waiting on another CTA's flag) are waited on; the 256
# window's kernel (OWN too) the same way
for c in "mixed (empty" "window (100, 20)"; do
  log=${TMPDIR:-/tmp}/emu_jfa_bwd_turn.log
  if TILE_EMU_CTA_TURN=1 TILE_EMU_SEED=random:1 timeout 900 "$B/examples/jfa_bwd_host" --cubins "$B/examples" --check \
         --small --case "$c" --ctas 7 > "$log" 2>&1 && tail -n 1 "$log" | grep -q "^ALL OK$"; then
    echo "ok   jfa_bwd on 7 CTAs taking turns, $c, on the emulator ($(grep -c ' OK$' "$log") checks)"
  else
    echo "FAIL jfa_bwd on 7 CTAs taking turns, $c, on the emulator:"; tail -n 3 "$log"; fail=1
  fi
done
# deterministic mode across schedules: the same gradients, bit for bit, on 7 CTAs taking turns and on 5 under
# an adversarial schedule (--dump: every gradient of every case). The window's cases cover DET's turns (head
# dim 64) and the FIN build DET uses where OWN applies (head dim 128, DET_FIN). How sharp: under the same two
# schedules the default kernels' dQ differs in 7 elements at head dim 64 ("mixed (empty"), but at 128 the
# default (OWN) kernel's came out the same too, so there this shows agreement, not FIN's order
T7=${TMPDIR:-/tmp}/emu_det7.bin; T5=${TMPDIR:-/tmp}/emu_det5.bin; log=${TMPDIR:-/tmp}/emu_det.log
if TILE_EMU_CTA_TURN=1 TILE_EMU_SEED=random:1 timeout 900 "$B/examples/jfa_bwd_host" --cubins "$B/examples" --check \
       --small --det --case "window (100, 20)" --ctas 7 --dump "$T7" > "$log" 2>&1 && tail -n 1 "$log" | grep -q "^ALL OK$" &&
   TILE_EMU_SEED=adversarial:2 timeout 900 "$B/examples/jfa_bwd_host" --cubins "$B/examples" --check \
       --small --det --case "window (100, 20)" --ctas 5 --dump "$T5" > "$log" 2>&1 && tail -n 1 "$log" | grep -q "^ALL OK$" &&
   [ -s "$T7" ] && cmp -s "$T7" "$T5"; then
  echo "ok   jfa_bwd deterministic mode: the same bits on 7 and on 5 CTAs, other schedules, on the emulator"
else
  echo "FAIL jfa_bwd deterministic mode across schedules on the emulator:"; tail -n 3 "$log"; fail=1
fi
rm -f "$T7" "$T5"
# a variant of the user's own (docs/tutorial-variant.md): prefix-LM, its
# prompt shorter than a block, spanning blocks, longer than the sequences
for P in 0 100 1000; do
  log=${TMPDIR:-/tmp}/emu_prefix_lm.log
  if timeout 900 "$B/examples/jfa_host" --cubins "$B/examples" --check --small --variant prefix_lm \
       --variant-args $P > "$log" 2>&1 && tail -n 1 "$log" | grep -q "^ALL OK$"; then
    echo "ok   the prefix_lm variant (P = $P) on the emulator ($(grep -c ' OK$' "$log") checks)"
  else
    echo "FAIL the prefix_lm variant (P = $P) on the emulator:"; tail -n 3 "$log"; fail=1
  fi
done
# a variant whose holes are computed (tests/emu/holes.tile: only
# has_block_skip and block_visited, as the tutorial says), which the loops
# read through the default visit_row_word / visit_col_word (a 4500-row
# sequence: two words), forward and backward; both targets.
# Its cubins go beside the others, where the library looks for a variant.
for arch in sm_90a sm_100a; do
  log=${TMPDIR:-/tmp}/emu_holes_$arch.log
  if "$B/bin/tilec" --arch=$arch -D D=64 -o "$B/examples/jfa_fwd.d64.holes.$arch.cubin" tests/emu/holes.tile > "$log" 2>&1 &&
     "$B/bin/tilec" --arch=$arch -D D=128 -o "$B/examples/jfa_fwd.d128.holes.$arch.cubin" tests/emu/holes.tile >> "$log" 2>&1 &&
     TILE_EMU_ARCH=$arch timeout 900 "$B/examples/jfa_host" --cubins "$B/examples" --check --small --variant holes \
       >> "$log" 2>&1 && grep -q "^target: $arch$" "$log" && tail -n 1 "$log" | grep -q "^ALL OK$" &&
     TILE_EMU_ARCH=$arch timeout 900 "$B/examples/jfa_bwd_host" --cubins "$B/examples" --check --small --variant holes \
       >> "$log" 2>&1 && tail -n 1 "$log" | grep -q "^ALL OK$"; then
    echo "ok   a variant of computed holes (tests/emu/holes.tile) on $arch on the emulator ($(grep -c ' OK$' "$log") checks)"
  else
    echo "FAIL a variant of computed holes (tests/emu/holes.tile) on $arch on the emulator:"; tail -n 3 "$log"; fail=1
  fi
done
# FIN_LAZY and FIN_AHEAD (A/B options of FIN, DQ_FINAL): each contributor
# passes the dQ block's turn on a step later, once its adds are long in
# memory; a final step's earlier sum is loaded a step early. FIN_LAZY on a
# causal suite whose last sequence has five KV blocks, over 3 CTAs taking
# turns and under an adversarial schedule (a turn held past the CTA's last
# item deadlocks here: checked with the item-end release removed);
# FIN_AHEAD on the small mixed case on 7 CTAs taking turns (an early load
# that does not wait for the others' adds fails it: checked; with FIN_LAZY
# too it passed, so each is checked alone)
T=${TMPDIR:-/tmp}/emu_finlazy; log=$T.log
rm -rf "$T" && mkdir -p "$T/cubins" "$T/ahead" "$T/suite" && cp "$B"/examples/*.sm_90a.cubin "$T/cubins/" &&
  cp "$B"/examples/*.sm_90a.cubin "$T/ahead/"
printf '40\n600\n' > "$T/suite/L1.lengths"
printf '[{"name": "L1", "batch": 2, "heads": 1, "head_dim": 128, "causal": true, "mode": "self", "lengths_file": "L1.lengths", "total_kv_tokens": 640, "max_len": 600}]\n' > "$T/suite/suites.json"
if "$B/bin/tilec" -D D=128 -D CAUSAL=true -D DQ_FINAL=true -D FIN_LAZY=true \
       -o "$T/cubins/jfa_bwd.d128.causal.sm_90a.cubin" examples/jagged_attention/jfa_bwd.tile > "$log" 2>&1 &&
   "$B/bin/tilec" -D D=128 -D CAUSAL=true -D DQ_FINAL=true -D FIN_AHEAD=true \
       -o "$T/ahead/jfa_bwd.d128.causal.sm_90a.cubin" examples/jagged_attention/jfa_bwd.tile >> "$log" 2>&1 &&
   TILE_EMU_CTA_TURN=1 TILE_EMU_SEED=random:1 timeout 300 "$B/examples/jfa_bwd_host" --cubins "$B/examples" \
       --bench "$T/suite" --reps 1 --ab "$T/cubins" --ctas 3 >> "$log" 2>&1 && tail -n 1 "$log" | grep -q "^ALL OK$" &&
   TILE_EMU_SEED=adversarial:2 timeout 300 "$B/examples/jfa_bwd_host" --cubins "$B/examples" \
       --bench "$T/suite" --reps 1 --ab "$T/cubins" --ctas 3 >> "$log" 2>&1 && tail -n 1 "$log" | grep -q "^ALL OK$" &&
   [ "$(grep -c '^L1 ab:cubins .* OK$' "$log")" -eq 2 ] &&
   TILE_EMU_CTA_TURN=1 TILE_EMU_SEED=random:1 timeout 900 "$B/examples/jfa_bwd_host" --cubins "$T/ahead" --check \
       --small --case "mixed (empty" --ctas 7 >> "$log" 2>&1 && tail -n 1 "$log" | grep -q "^ALL OK$"; then
  echo "ok   jfa_bwd's FIN_LAZY and FIN_AHEAD builds on the emulator (3 and 7 CTAs taking turns; adversarial)"
else
  echo "FAIL jfa_bwd's FIN_LAZY and FIN_AHEAD builds on the emulator:"; tail -n 3 "$log"; fail=1
fi
rm -rf "$T"
# TIMELINE (jfa_bwd.tile's measuring build; tests/gpu/timeline.py): a
# 3-sequence suite benchmarked against the build with its stamps, which
# jfa_bwd_host --timeline writes as csvs (the items' and the steps') and
# timeline.py sums; on the emulator a stamp is the CTA's count of steps.
# T1 causal (64-row steps), T2 not causal (the shipped Q80 build's 80-row
# steps, whose consumers stamp their waits too: a step's meeting is never 0)
T=${TMPDIR:-/tmp}/emu_tl; log=$T.log
rm -rf "$T" && mkdir -p "$T/cubins" "$T/suite" && cp "$B"/examples/*.sm_90a.cubin "$T/cubins/"
printf '300\n700\n129\n' > "$T/suite/T1.lengths"
printf '200\n90\n' > "$T/suite/T2.lengths"
printf '[{"name": "T1", "batch": 3, "heads": 1, "head_dim": 128, "causal": true, "mode": "self", "lengths_file": "T1.lengths", "total_kv_tokens": 1129, "max_len": 700},
 {"name": "T2", "batch": 2, "heads": 1, "head_dim": 128, "causal": false, "mode": "self", "lengths_file": "T2.lengths", "total_kv_tokens": 290, "max_len": 200}]\n' > "$T/suite/suites.json"
if "$B/bin/tilec" -D D=128 -D CAUSAL=true -D TIMELINE=true -o "$T/cubins/jfa_bwd.d128.causal.sm_90a.cubin" \
       examples/jagged_attention/jfa_bwd.tile > "$log" 2>&1 &&
   "$B/bin/tilec" -D D=128 -D Q80=true -D TIMELINE=true -o "$T/cubins/jfa_bwd.d128.self.sm_90a.cubin" \
       examples/jagged_attention/jfa_bwd.tile >> "$log" 2>&1 &&
   timeout 900 "$B/examples/jfa_bwd_host" --cubins "$B/examples" --bench "$T/suite" --reps 1 --ab "$T/cubins" \
       --timeline "$T/tl" --ctas 3 >> "$log" 2>&1 && tail -n 1 "$log" | grep -q "^ALL OK$" &&
   python3 tests/gpu/timeline.py "$T/tl.T1.csv" --steps "$T/tl.T1.steps.csv" >> "$log" 2>&1 &&
   grep -q "tl.T1.csv: 11 items on" "$log" && grep -q "^steps: [1-9]" "$log" &&
   python3 tests/gpu/timeline.py "$T/tl.T2.csv" --steps "$T/tl.T2.steps.csv" > "$T/t2.txt" 2>&1 &&
   grep -q "tl.T2.csv: 3 items on" "$T/t2.txt" && grep -q "^  meet  *[0-9.]* ( *[0-9.]*, " "$T/t2.txt" &&
   ! grep -q "^  meet  *0.000 " "$T/t2.txt"; then
  echo "ok   jfa_bwd's TIMELINE builds on the emulator: $(grep -o '11 items on [0-9]* CTAs, [0-9.]* steps an item' "$log"); 80-row steps: $(grep -o '3 items on [0-9]* CTAs, [0-9.]* steps an item' "$T/t2.txt")"
else
  echo "FAIL jfa_bwd's TIMELINE builds on the emulator:"; tail -n 3 "$log"; cat "$T/t2.txt" 2>/dev/null | tail -8; fail=1
fi
rm -rf "$T"
# block-sparse attention (variants/blocksparse.tile, jfa_params.block_mask):
# random 50% masks, none, all (= plain attention), per batch and per
# sequence, causal and not, sequences under a block, both head dims
# (forward 15 s, backward 30 s in the release build on 2 cores); --update:
# jfa_plan_update must refuse a block-sparse plan, which then still runs
for e in jfa jfa_bwd; do
  log=${TMPDIR:-/tmp}/emu_blocksparse_$e.log
  if timeout 900 "$B/examples/${e}_host" --cubins "$B/examples" --check --small --blocksparse --update > "$log" 2>&1 &&
     tail -n 1 "$log" | grep -q "^ALL OK$"; then
    echo "ok   the blocksparse variant, $e, on the emulator ($(grep -c ' OK$' "$log") checks)"
  else
    echo "FAIL the blocksparse variant, $e, on the emulator:"; tail -n 3 "$log"; fail=1
  fi
done
# a cubin with the whole PTX (tilec --embed-ptx, reports name Tile lines)
# runs too; one with neither it nor line information is refused, saying why
T=${TMPDIR:-/tmp}/emu_cubins.$$
mkdir -p "$T"
if "$B/bin/tilec" --embed-ptx -o "$T/va.cubin" examples/vector_add/vector_add.tile &&
   timeout 120 "$B/examples/vector_add_host" --cubin "$T/va.cubin" --trials 2 --seed 3 > "$T/log" 2>&1 &&
   grep -q " OK$" "$T/log"; then
  echo "ok   vector_add from a cubin built with --embed-ptx"
else
  echo "FAIL vector_add --embed-ptx:"; tail -n 3 "$T/log"; fail=1
fi
if "$B/bin/tilec" --no-line-info -o "$T/bare.cubin" examples/vector_add/vector_add.tile &&
   ! "$B/examples/vector_add_host" --cubin "$T/bare.cubin" --trials 1 > "$T/log" 2>&1 &&
   grep -q "carries no PTX for the emulator" "$T/log"; then
  echo "ok   a cubin without PTX refused with its reason"
else
  echo "FAIL a cubin without PTX:"; tail -n 3 "$T/log"; fail=1
fi
# a stale small-kernel cubin beside the backward: jfa_bwd_pre built without
# the broadcast-Q by-block layout the D = 128 backward adds into is refused
# when the plan is made, naming it, not run into a wrong dQ
mkdir -p "$T/stale" && cp "$B"/examples/*.sm_90a.cubin "$T/stale/" &&
  "$B/bin/tilec" -D D=128 -D BCAST=true -D LAYOUTS=2 -o "$T/stale/jfa_bwd_pre.d128.bcast.sm_90a.cubin" \
    examples/jagged_attention/jfa_bwd_pre.tile
if ! timeout 300 "$B/examples/jfa_bwd_host" --cubins "$T/stale" --check --small --case "bcast nq=70" > "$T/log" 2>&1 &&
   grep -q "does not know the dQ accumulator layout 2" "$T/log"; then
  echo "ok   a stale jfa_bwd_pre cubin refused with its reason"
else
  echo "FAIL a stale jfa_bwd_pre cubin:"; tail -n 3 "$T/log"; fail=1
fi
# the pipelined dot inside another loop: its rings refilled by the next run
# (K = 300: 5 iterations, the last wgmma on the slot the refill starts with)
if "$B/bin/tilec" -o "$T/mmn.cubin" tests/emu/matmul_nested.tile; then
  ok=1
  for sched in adversarial:3 adversarial:7 random:4; do
    TILE_EMU_SEED=$sched timeout 300 "$B/examples/matmul_host" --cubin "$T/mmn.cubin" --size 200 --size 300 --size 300 \
      > "$T/log" 2>&1 && grep -q " OK$" "$T/log" || { ok=0; break; }
  done
  if [ $ok = 1 ]; then echo "ok   the pipelined dot inside another loop (3 schedules)"
  else echo "FAIL the pipelined dot inside another loop ($sched):"; tail -n 3 "$T/log"; fail=1; fi
else
  echo "FAIL tests/emu/matmul_nested.tile does not compile"; fail=1
fi
# mm_sizes TILE LABEL "M N K"...: TILE (matmul_host's kernel) compiled, then
# matmul_host on each size under an adversarial schedule
mm_sizes() {
  src=$1 label=$2; shift 2
  n=$#
  if ! "$B/bin/tilec" -o "$T/mm.cubin" "$src"; then echo "FAIL $src does not compile"; fail=1; return; fi
  for sz in "$@"; do
    set -- $sz
    if ! TILE_EMU_SEED=adversarial:3 timeout 300 "$B/examples/matmul_host" --cubin "$T/mm.cubin" --size $1 --size $2 \
         --size $3 > "$T/log" 2>&1 || ! grep -q " OK$" "$T/log"; then
      echo "FAIL $label ($sz):"; tail -n 3 "$T/log"; fail=1; return
    fi
  done
  echo "ok   $label ($n sizes, adversarial)"
}
# the same with Triton's pointer increments (pa += BK): carried pointers
# advanced for the copies issued ahead
mm_sizes tests/emu/matmul_ptrinc.tile "the pipelined dot with pointers the loop advances" "1 1 1" "200 300 300" "129 257 72"
# a dot's result stored 16 bytes a thread (the wide-store layout: 8 columns
# a thread after warp shuffles) from mma.sync's 4 x 2 warps, masked at
# ragged M and N (K <= 64: the kernel's one dot)
mm_sizes tests/emu/dot_wide.tile "a dot's result in the wide-store layout" "64 128 64" "100 77 40" "1 9 1" "130 250 64"
# the Triton-style matmul on sm_100a (pipeline_sm100.c): the tiles by TMA
# (the example's cubin) or cp.async (pointer increments), tcgen05.mma into
# tensor memory committed to the slots' mbarriers, the accumulator read back
# with tcgen05.ld after the last commit; ragged M, N, K, two schedules
ok=1
log=${TMPDIR:-/tmp}/emu_tcdot.sm_100a.log
if "$B/bin/tilec" --arch=sm_100a -o "$T/mmp100.cubin" tests/emu/matmul_ptrinc.tile; then
  for c in "$B/examples/matmul.sm_100a.cubin" "$T/mmp100.cubin"; do
    for sched in rr adversarial:3; do
      for sz in "1 1 1" "300 130 1000"; do
        set -- $sz
        TILE_EMU_ARCH=sm_100a TILE_EMU_SEED=$sched timeout 300 "$B/examples/matmul_host" --cubin "$c" --size $1 --size $2 \
          --size $3 > "$log" 2>&1 && grep -q " OK$" "$log" || { ok=0; break 3; }
      done
    done
  done
  if [ $ok = 1 ]; then echo "ok   tcdot.sm_100a: the pipelined dot on tcgen05 (TMA and cp.async, 2 sizes, 2 schedules)"
  else echo "FAIL tcdot.sm_100a on the emulator ($(basename "$c"), $sched, $sz):"; tail -n 3 "$log"; fail=1; fi
else
  echo "FAIL tests/emu/matmul_ptrinc.tile does not compile for sm_100a"; fail=1
fi
# the JIT on the emulator: the source compiled to PTX in process and run as
# it is (no assembler: a ptxas that does not exist), the second time from
# the cache
J=$B/examples/vector_add_host_jit
if [ -x "$J" ] &&
   TILE_PTXAS=/nonexistent/ptxas TILE_CACHE_DIR="$T/cache" timeout 120 "$J" --jit examples/vector_add/vector_add.tile \
     --trials 2 --seed 3 > "$T/log" 2>&1 &&
   TILE_PTXAS=/nonexistent/ptxas TILE_CACHE_DIR="$T/cache" timeout 120 "$J" --jit examples/vector_add/vector_add.tile \
     --trials 2 --seed 4 >> "$T/log" 2>&1 &&
   [ "$(grep -c ' OK$' "$T/log")" -eq 4 ] && grep -q "(compiled" "$T/log" && grep -q "(cache hit" "$T/log"; then
  echo "ok   vector_add through the JIT (its PTX, in process; no ptxas), then from the JIT's cache"
else
  echo "FAIL vector_add --jit:"; tail -n 3 "$T/log"; fail=1
fi
# the GPU primitives whose check runs alone (tests/gpu/prims: bulk_load into a ring, cluster_sync around a
# dsmem_copy each way), on adversarial schedules
for prim in bulk_ring cluster_sync; do
  if [ -x "$B/gpu/test_prims" ] && [ -f "$B/tests/prims/$prim.cubin" ] &&
     TILE_INTERPRET=1 TILE_EMU_SEED=adversarial:1 timeout 120 "$B/gpu/test_prims" "$B/tests/prims" $prim > "$T/log" 2>&1; then
    echo "ok   the $prim primitive on the emulator ($(grep -c '^PASS' "$T/log") checks)"
  else
    echo "FAIL the $prim primitive on the emulator:"; tail -n 3 "$T/log"; fail=1
  fi
done
rm -rf "$T"
[ $fail -eq 0 ] && echo "emulator: all passed" || echo "emulator: FAILED"
exit $fail

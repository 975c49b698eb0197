#!/bin/sh
# tests/emu/blackwell.sh - the Jagged Flash Attention kernels for Blackwell
# (jfa_fwd_sm100.tile, jfa_bwd_sm100.tile and the variants built for
# sm_100a) through their hosts, unchanged, on the emulator (TILE_INTERPRET=1,
# TILE_EMU_ARCH=sm_100a: the emulated device says it is sm_100a, so the
# library loads the sm_100a cubins, and each check says which target it ran),
# against float64; the rest of the emulator's runs are tests/emu/run.sh
# (tests/run.sh runs the two side by side).
set -u
B=${B:-build}
fail=0
export TILE_INTERPRET=1
# the forward (jfa_fwd_sm100.tile): the same small cases (empty and length-1
# sequences, one of 1000 rows, causal and not, both head dims, broadcast-Q,
# a split tile with jfa_combine) on the round-robin and an adversarial
# schedule, with the variants whose cubins jfa_host finds (the same
# variants/*.tile built --arch=sm_100a, mk/examples.mk): a window, softcap
# (causal too) and ALiBi, both head dims (about 35 s each in the release
# build; the check fails if the variants' cubins are missing)
for sched in rr adv:3; do
  log=${TMPDIR:-/tmp}/emu_jfa_sm100.log
  if TILE_EMU_ARCH=sm_100a TILE_EMU_SEED=$sched timeout 900 "$B/examples/jfa_host" --cubins "$B/examples" --check \
       --small --update > "$log" 2>&1 && grep -q "^target: sm_100a$" "$log" && ! grep -q "^(no variant cubins" "$log" &&
     tail -n 1 "$log" | grep -q "^ALL OK$"; then
    echo "ok   jfa and its window, softcap, alibi variants on sm_100a on the emulator ($(grep -c ' OK$' "$log") checks, schedule $sched)"
  else
    echo "FAIL jfa on sm_100a on the emulator (schedule $sched):"; tail -n 3 "$log"; fail=1
  fi
done
# the Blackwell forward on 7 CTAs: each walks several pairs of items (two
# softmax replicas, the shared K/V ring, the correction's epilogues across
# pairs, a lone last item on replica 0), adversarial schedule
log=${TMPDIR:-/tmp}/emu_jfa_sm100_ctas.log
if TILE_EMU_ARCH=sm_100a TILE_EMU_SEED=adversarial:1 timeout 900 "$B/examples/jfa_host" --cubins "$B/examples" --check \
     --small --ctas 7 > "$log" 2>&1 && grep -q "^target: sm_100a$" "$log" && tail -n 1 "$log" | grep -q "^ALL OK$"; then
  echo "ok   jfa on sm_100a on 7 CTAs, several pairs of tiles each, on the emulator ($(grep -c ' OK$' "$log") checks)"
else
  echo "FAIL jfa_sm100_ctas on the emulator:"; tail -n 3 "$log"; fail=1
fi
# the CTA pair's forward (jfa_params.cta_pair: jfa_fwd_sm100.tile with
# CTAS = 2, clusters of two CTAs sharing each tcgen05.mma.cta_group::2):
# the small cases at head dim 128 with the variants (their NAME.pair
# cubins) and split items (jfa_combine of 256-row slots), and the pair's own
# (a second half past the sequence's end, causal halves, broadcast-Q, a
# window shorter than a block), round-robin, adversarial, and 7 CTAs (three
# pairs, each walking several items; about 25 s each); then prefix-LM, a
# variant file, on the pair
for args in "rr|" "adv:3|" "adversarial:1|--ctas 7"; do
  sched=${args%%|*}
  extra=${args#*|}
  log=${TMPDIR:-/tmp}/emu_jfa_pair.log
  # shellcheck disable=SC2086 # extra: options, split on purpose
  if TILE_EMU_ARCH=sm_100a TILE_EMU_SEED=$sched timeout 900 "$B/examples/jfa_host" --cubins "$B/examples" --check \
       --small --pair $extra > "$log" 2>&1 && grep -q "^target: sm_100a$" "$log" && grep -q "^pair: window" "$log" &&
     tail -n 1 "$log" | grep -q "^ALL OK$"; then
    echo "ok   jfa's CTA pair (2-CTA MMA) on sm_100a on the emulator ($(grep -c ' OK$' "$log") checks, schedule $sched $extra)"
  else
    echo "FAIL jfa's CTA pair on sm_100a on the emulator (schedule $sched $extra):"; tail -n 3 "$log"; fail=1
  fi
done
log=${TMPDIR:-/tmp}/emu_jfa_pair_prefix.log
if TILE_EMU_ARCH=sm_100a TILE_EMU_SEED=adv:2 timeout 900 "$B/examples/jfa_host" --cubins "$B/examples" --check --small \
     --pair --variant prefix_lm --variant-args 300 > "$log" 2>&1 && grep -q "^target: sm_100a$" "$log" &&
   tail -n 1 "$log" | grep -q "^ALL OK$"; then
  echo "ok   the prefix_lm variant on jfa's CTA pair on sm_100a on the emulator ($(grep -c ' OK$' "$log") checks)"
else
  echo "FAIL the prefix_lm variant on jfa's CTA pair on sm_100a on the emulator:"; tail -n 3 "$log"; fail=1
fi
# the other variants on Blackwell, forward (their backward: the variant
# runs of jfa_bwd_host below): prefix-LM (a prompt spanning blocks) and
# block-sparse (its masks, causal and not; --update: refused, then run),
# both head dims, round-robin and adversarial (about 5 s and 20 s each)
for sched in rr adv:5; do
  for v in prefix_lm blocksparse; do
    log=${TMPDIR:-/tmp}/emu_${v}_sm100.log
    if [ $v = prefix_lm ]; then set -- --variant prefix_lm --variant-args 100; else set -- --blocksparse --update; fi
    if TILE_EMU_ARCH=sm_100a TILE_EMU_SEED=$sched timeout 900 "$B/examples/jfa_host" --cubins "$B/examples" --check \
         --small "$@" > "$log" 2>&1 && grep -q "^target: sm_100a$" "$log" && tail -n 1 "$log" | grep -q "^ALL OK$"; then
      echo "ok   the $v variant on sm_100a on the emulator ($(grep -c ' OK$' "$log") checks, schedule $sched)"
    else
      echo "FAIL the $v variant on sm_100a on the emulator (schedule $sched):"; tail -n 3 "$log"; fail=1
    fi
  done
done
# the JFA backward for Blackwell (jfa_bwd_sm100.tile): the library loads the
# sm_100a jfa_bwd and jfa_bwd_pre cubins (the check says which target); the
# small cases (empty and length-1 sequences, one of 1000 rows, causal,
# broadcast-Q, both head dims, deterministic or not) on the round-robin and
# an adversarial schedule, then on 7 CTAs, several items each (the hand-offs
# between items: K and V, dK and dV in tensor memory, the Q ring, dQ), on
# another adversarial one; the variants' deterministic backward on the
# round-robin run only (about 50-150 s each in the release build)
for run in rr adv ctas7; do
  log=${TMPDIR:-/tmp}/emu_jfa_bwd_sm100_$run.log
  case $run in
    rr) sched=rr; args= ;;
    adv) sched=adv:3; args=--no-det-variants ;;
    *) sched=adversarial:1; args="--ctas 7 --no-det-variants" ;;
  esac
  if TILE_EMU_ARCH=sm_100a TILE_EMU_SEED=$sched timeout 900 "$B/examples/jfa_bwd_host" --cubins "$B/examples" \
       --check --small $args > "$log" 2>&1 && grep -q "^target: sm_100a$" "$log" && tail -n 1 "$log" | grep -q "^ALL OK$"; then
    echo "ok   jfa_bwd on sm_100a on the emulator ($(grep -c ' OK$' "$log") checks, schedule $sched${args:+ $args})"
  else
    echo "FAIL jfa_bwd_sm100_$run on the emulator (schedule $sched${args:+ $args}):"; tail -n 3 "$log"; fail=1
  fi
done
# the CTA pair's backward (jfa_bwd_sm100_pair.tile: every MMA the pair's,
# dQ's M = 128 over both CTAs' keys with dS sent across by dsmem_copy) at
# head dim 128, deterministic or not: the small cases with --pair on the
# round-robin schedule (the pair's forward too; a variant's plan runs one
# CTA's backward beside it; about 90 s), then the pair's own cases (no mask,
# an odd half past a sequence's end, broadcast-Q with 128-row query blocks)
# on an adversarial schedule and on 7 CTAs (three pairs, several items each)
for run in rr adv ctas7; do
  log=${TMPDIR:-/tmp}/emu_jfa_bwd_pair_$run.log
  case $run in
    rr) sched=rr; args=--no-det-variants ;;
    adv) sched=adv:3; args="--case pair" ;;
    *) sched=adversarial:5; args="--ctas 7 --case pair" ;;
  esac
  if TILE_EMU_ARCH=sm_100a TILE_EMU_SEED=$sched timeout 900 "$B/examples/jfa_bwd_host" --cubins "$B/examples" \
       --check --small --pair $args > "$log" 2>&1 && grep -q "^target: sm_100a$" "$log" &&
     grep -q "^pair bcast nq=300 .* OK$" "$log" && tail -n 1 "$log" | grep -q "^ALL OK$"; then
    echo "ok   jfa_bwd on the CTA pair (2-CTA MMA) on sm_100a on the emulator ($(grep -c ' OK$' "$log") checks, schedule $sched${args:+ $args})"
  else
    echo "FAIL jfa_bwd_pair_$run on the emulator (schedule $sched${args:+ $args}):"; tail -n 3 "$log"; fail=1
  fi
done
[ $fail -eq 0 ] && echo "emulator: all passed (the Blackwell JFA)" || echo "emulator: FAILED (the Blackwell JFA)"
exit $fail

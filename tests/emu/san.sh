#!/bin/sh
# tests/emu/san.sh - the emulator under the sanitizer build (make san-run):
# one short run of each family of kernels, so that ASan and UBSan watch the
# emulator, the runtime and the hosts on every kind of instruction (plain
# loads and stores, reductions, cp.async rings, TMA and mbarriers, wgmma,
# tcgen05 and tensor memory, the CTA pair and multicast, the JFA forward,
# combine and backward on both targets, the JIT). The full list, every
# schedule and size, is tests/emu/run.sh in the release build: the same
# code, about ten times faster there.
#
# B is the sanitizer build (its hosts); the cubins come from CUBINS
# (default $B/examples): make san-run passes the release build's, since the
# compiler's output does not depend on how the compiler was built (the
# sanitizer build's tilec compiles a sample of them itself and must write
# the same PTX: tests/emu/san.sh's last check).
set -u
B=${B:-build}
C=${CUBINS:-$B/examples}
E=$B/examples
fail=0
export TILE_INTERPRET=1
# NAME CHECKS COMMAND...: the run must succeed and print exactly CHECKS
# results ending in OK (the JFA hosts' refused-argument lines and their
# closing ALL OK not counted: a case filter that matches nothing fails)
run() {
  name=$1 want=$2
  shift 2
  log=${TMPDIR:-/tmp}/emu_san_$(echo "$name" | tr -c 'A-Za-z0-9_.\n' _).log
  t=$(date +%s)
  if timeout 600 "$@" > "$log" 2>&1 &&
     [ "$(grep ' OK$' "$log" | grep -v '^error' | grep -vc '^ALL OK$')" -eq "$want" ]; then
    echo "ok   $name ($want checks, $(( $(date +%s) - t )) s)"
  else
    echo "FAIL $name:"; tail -n 5 "$log"; fail=1
  fi
}
for e in vector_add softmax matmul; do
  run "$e" 2 "$E/${e}_host" --cubin "$C/$e.sm_90a.cubin" --trials 2 --seed 7
done
run layernorm 3 "$E/layernorm_host" --cubin "$C/layernorm.sm_90a.cubin" --size 300 --size 1000 --seed 7
run "gemm (TMA, mbarriers, wgmma; adversarial)" 1 \
  env TILE_EMU_SEED=adversarial:3 "$E/gemm_host" --cubin "$C/gemm.sm_90a.cubin" --size 300 --size 500 --size 200
run "gemm_sm100 (tcgen05, tensor memory)" 1 "$E/gemm_host" --cubin "$C/gemm_sm100.sm_100a.cubin" --size 300 --size 500 \
  --size 200
run "gemm_sm100_2cta_mc (the CTA pair, multicast)" 1 \
  env TILE_EMU_SEED=random:5 "$E/gemm_host" --cubin "$C/gemm_sm100_2cta_mc.sm_100a.cubin" --trials 1 --size 600 --size 1100 --size 200
# JFA: the mixed batch (empty and length-1 sequences, one of 1000 rows,
# causal and not, both head dims) and the split tile (jfa_combine)
for c in "mixed (empty" "split"; do
  run "jfa, $c" 2 "$E/jfa_host" --cubins "$C" --check --small --case "$c" --update
  run "jfa on sm_100a, $c" 2 env TILE_EMU_ARCH=sm_100a "$E/jfa_host" --cubins "$C" --check --small --case "$c"
done
# the backward: broadcast-Q at both head dims, deterministic or not
run "jfa_bwd, bcast" 4 "$E/jfa_bwd_host" --cubins "$C" --check --small --case "bcast"
run "jfa_bwd on sm_100a, bcast" 4 \
  env TILE_EMU_ARCH=sm_100a "$E/jfa_bwd_host" --cubins "$C" --check --small --case "bcast"
# the JIT: compiled in process (the sanitized compiler), run as PTX
J=$E/vector_add_host_jit
T=${TMPDIR:-/tmp}/emu_san.$$
mkdir -p "$T"
run "vector_add through the JIT" 2 \
  env TILE_PTXAS=/nonexistent/ptxas TILE_CACHE_DIR="$T/cache" "$J" --jit examples/vector_add/vector_add.tile --trials 2 --seed 3
# the sanitized compiler writes the same PTX as the release one
ok=1
for k in "jagged_attention/jfa_fwd.tile -D D=128 -D CAUSAL=true" "jagged_attention/jfa_bwd.tile -D D=64" \
         "jagged_attention/jfa_fwd_sm100.tile --arch=sm_100a -D D=128" \
         "jagged_attention/jfa_bwd_sm100.tile --arch=sm_100a -D D=128" "gemm/gemm_sm100_2cta.tile --arch=sm_100a" \
         "fused_attention/fused_attention.tile -D HEAD_DIM=64 -D CAUSAL=true -D T=bf16"; do
  set -- $k
  f=examples/$1
  shift
  if [ -f "$f" ] && [ -x "${TILEC_RELEASE:-build/bin/tilec}" ]; then
    "$B/bin/tilec" --emit=ptx "$@" -o "$T/san.ptx" "$f" 2> "$T/err" &&
      "${TILEC_RELEASE:-build/bin/tilec}" --emit=ptx "$@" -o "$T/rel.ptx" "$f" 2>> "$T/err" &&
      cmp -s "$T/san.ptx" "$T/rel.ptx" || { echo "FAIL the sanitized tilec on $f $*:"; tail -n 3 "$T/err"; ok=0; fail=1; }
  else
    echo "FAIL $f or ${TILEC_RELEASE:-build/bin/tilec} missing"; ok=0; fail=1
  fi
done
[ $ok = 1 ] && echo "ok   the sanitized tilec writes the release tilec's PTX (6 kernels)"
rm -rf "$T"
[ $fail -eq 0 ] && echo "emulator: all passed (the sanitizer build's list)" || echo "emulator: FAILED (the sanitizer build's list)"
exit $fail

#!/bin/sh
# scripts/demo.sh - what `make demo` shows after `make all`:
#   1. every example compiled by tilec for sm_90a and sm_100a, with the time
#      each compile took (tilec -v) and the cubin's size;
#   2. the head of every stage of vector_add (tokens, ast, tir, mlir, llvm,
#      ptx) and its kernel metadata;
#   3. on a machine with an NVIDIA GPU, each example host run against its
#      float64 reference, from the cubin and through the JIT, and on Hopper
#      the GEMM and Jagged Flash Attention (checks, then the benchmark
#      suites when ../shared/bench/suites or $JFA_SUITES exists); without one,
#      a "no GPU: skipping the runs" message (exit status 0 all the same).
# Exit status: 0, or 1 when a compile or a GPU run failed.
# Environment: B (build folder, default build), DEMO_LINES (lines of each
# stage shown, default 12), TILE_CACHE_DIR (JIT cache, default $B/jit-cache).
set -u
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
LINES_=${DEMO_LINES:-12}
TILEC=$B/bin/tilec
EXAMPLES="vector_add softmax layernorm matmul"
OUTD=$B/demo
fail=0

# The PyPI ptxas, when install-deps.sh had to use one (no CUDA toolkit here).
if [ -z "${TILE_PTXAS:-}" ] && [ -f build/toolchain.env ]; then
  TILE_PTXAS=$(sed -n 's/^TILE_PTXAS=//p' build/toolchain.env | tail -1)
  [ -n "$TILE_PTXAS" ] && export TILE_PTXAS
fi

if [ ! -x "$TILEC" ]; then
  echo "demo: $TILEC is missing: run 'make all' (or 'make demo') first" >&2
  exit 1
fi

hr() { printf '\n=== %s ===\n' "$*"; }
# Long lines (the metadata bytes in LLVM IR and PTX) cut to 150 characters.
clip() { awk '{ if (length($0) > 150) print substr($0, 1, 150) " ..."; else print }'; }

# --- 1. compile every example ----------------------------------------------
hr "$("$TILEC" --version): compiling the examples"
mkdir -p "$OUTD"
printf '%-12s %-8s %-10s %s\n' example arch time cubin
for e in $EXAMPLES; do
  for a in sm_90a sm_100a; do
    out=$OUTD/$e.$a.cubin
    if log=$("$TILEC" -v --arch="$a" -o "$out" "examples/$e/$e.tile" 2>&1); then
      t=$(printf '%s\n' "$log" | sed -n 's/^tilec: cubin in \(.*\)$/\1/p' | tail -1)
      printf '%-12s %-8s %-10s %s (%s bytes)\n' "$e" "$a" "${t:-?}" "$out" "$(wc -c < "$out" | tr -d ' ')"
    else
      printf '%-12s %-8s FAILED\n%s\n' "$e" "$a" "$log"
      fail=1
    fi
  done
done

# --- 2. the stages of vector_add -----------------------------------------------
src=examples/vector_add/vector_add.tile
hr "the source: $src"
cat "$src"
for s in tokens ast tir mlir llvm ptx meta; do
  total=$("$TILEC" --emit=$s -o - "$src" 2> /dev/null | wc -l | tr -d ' ')
  if [ "$total" -gt "$LINES_" ]; then hr "tilec --emit=$s $src | head -$LINES_   ($total lines in all)"
  else hr "tilec --emit=$s $src"
  fi
  "$TILEC" --emit=$s -o - "$src" 2>&1 | head -n "$LINES_" | clip
done

# --- 3. run on the GPU, if there is one ------------------------------------------
# The arch of GPU 0 (compute capability 10.x: sm_100a, otherwise sm_90a).
arch=sm_90a
gpu=0 why=
if command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L 2> /dev/null | grep -q '^GPU'; then
  gpu=1
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -1)
  case $cc in 10.*) arch=sm_100a ;; esac
else
  # No nvidia-smi (a container, say): ask the runtime itself.
  probe=$("$B/examples/vector_add_host" --cubin "$B/examples/vector_add.$arch.cubin" --trials 1 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then gpu=1
  elif printf '%s\n' "$probe" | grep -q 'TILE_ERR_NO_DRIVER\|TILE_ERR_NO_DEVICE\|no NVIDIA driver'; then
    why=$(printf '%s\n' "$probe" | sed -n 's/.*failed: //p' | head -1)
  else gpu=1   # a GPU, but something failed: the runs below show it
  fi
fi

if [ $gpu -eq 0 ]; then
  hr "no GPU: skipping the runs"
  [ -n "$why" ] && echo "($why)"
  echo "The cubins are in $B/examples/; on a machine with an NVIDIA GPU (Hopper sm_90a"
  echo "or Blackwell sm_100a) run 'make demo' there, or tests/gpu/run.sh."
  exit $fail
fi

hr "GPU: $(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2> /dev/null | head -1) - running the examples ($arch)"
case $B in /*) absb=$B ;; *) absb=$PWD/$B ;; esac
export TILE_CACHE_DIR="${TILE_CACHE_DIR:-$absb/jit-cache}"
for e in $EXAMPLES; do
  echo "--- $e (cubin)"
  if ! "$B/examples/${e}_host" --cubin "$B/examples/$e.$arch.cubin" --trials 3; then
    echo "FAILED: $e (cubin)"; fail=1
  fi
  echo "--- $e (JIT from source, cache $TILE_CACHE_DIR)"
  if ! "$B/examples/${e}_host_jit" --jit "examples/$e/$e.tile" --trials 1; then
    echo "FAILED: $e (JIT)"; fail=1
  fi
done
# Hopper only: the warp-specialized GEMM and Jagged Flash Attention
if [ "$arch" = sm_90a ]; then
  echo "--- gemm (persistent, warp-specialized; --bench times 8192^3)"
  "$B/examples/gemm_host" --cubin "$B/examples/gemm.sm_90a.cubin" --trials 3 || { echo "FAILED: gemm"; fail=1; }
  "$B/examples/gemm_host" --cubin "$B/examples/gemm.sm_90a.cubin" --size 8192 --size 8192 --size 8192 --bench \
    || { echo "FAILED: gemm 8192"; fail=1; }
  echo "--- Jagged Flash Attention: correctness cases (docs/jfa.md)"
  "$B/examples/jfa_host" --cubins "$B/examples" --check || { echo "FAILED: jfa"; fail=1; }
  suites=${JFA_SUITES:-../shared/bench/suites}
  if [ -f "$suites/suites.json" ]; then
    echo "--- Jagged Flash Attention: benchmark suites ($suites)"
    "$B/examples/jfa_host" --cubins "$B/examples" --bench "$suites" || { echo "FAILED: jfa bench"; fail=1; }
  fi
else
  echo "(gemm and jagged attention are Hopper kernels: not run on $arch)"
fi
echo
[ $fail -eq 0 ] && echo "demo: every example matched its reference" || echo "demo: SOME RUNS FAILED"
exit $fail

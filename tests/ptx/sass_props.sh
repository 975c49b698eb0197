#!/bin/sh
# tests/ptx/sass_props.sh - properties of the machine code (SASS) of the
# Hopper kernels whose speed depends on what ptxas decides (no GPU needed):
#   - the KV loop of every JFA variant and the GEMM's main loop keep their
#     ring, barrier and descriptor arithmetic on the uniform datapath (U*
#     instructions) with no divergence bookkeeping (BSSY/BSYNC/WARPSYNC);
#     losing it cost 6% on J1/D8k (docs/perf.md), and ptxas loses it
#     silently: when it cannot prove a value warp-uniform;
#   - the loop issues the expected wgmmas, and nothing spills (LDL/STL).
# Needs nvdisasm (CUDA toolkit, or NVIDIA's PyPI wheel that
# scripts/install-deps.sh puts in build/cuda-pypi-tools) and python3;
# without them the checks fail (TILE_ALLOW_MISSING_TOOLS=1: print SKIP).
set -u
B=${B:-build}
TILEC=$B/bin/tilec
NVDIS=${TILE_NVDISASM:-}
[ -n "$NVDIS" ] || { [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvdisasm" ] && NVDIS=$CUDA_HOME/bin/nvdisasm; }
[ -n "$NVDIS" ] || { [ -x /usr/local/cuda/bin/nvdisasm ] && NVDIS=/usr/local/cuda/bin/nvdisasm; }
[ -n "$NVDIS" ] || NVDIS=$(command -v nvdisasm 2> /dev/null || true)
[ -n "$NVDIS" ] || NVDIS=$(find "$B/cuda-pypi-tools" build/cuda-pypi-tools -path '*/bin/nvdisasm' -type f 2> /dev/null | head -1)
# A missing tool fails the checks (CI has both: scripts/install-deps.sh),
# unless TILE_ALLOW_MISSING_TOOLS=1 says skipping them is fine here.
missing() {
  if [ "${TILE_ALLOW_MISSING_TOOLS:-0}" = 1 ]; then echo "SKIP sass checks: $1 (TILE_ALLOW_MISSING_TOOLS=1)"; exit 0; fi
  echo "FAIL sass checks: $1 (TILE_ALLOW_MISSING_TOOLS=1 skips them instead)"
  exit 1
}
if [ -z "$NVDIS" ] || ! "$NVDIS" --version > /dev/null 2>&1; then
  missing "no nvdisasm (CUDA toolkit, TILE_NVDISASM, or sh scripts/install-deps.sh: pip install nvidia-cuda-nvdisasm into build/cuda-pypi-tools)"
fi
if ! command -v python3 > /dev/null; then
  missing "no python3"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0; n=0

# loop.py SASS HGMMA_MIN: the innermost main loop -- the smallest loop (a
# backward branch) whose body holds at least HGMMA_MIN wgmmas -- as
# "len hgmma uniform bssy spills_in_kernel"
cat > "$tmp/loop.py" <<'PY'
import re, sys
text = open(sys.argv[1]).read().split('\n')
pos, ins = {}, []
for l in text:
    m = re.match(r'\s*(\.L_x_\d+):', l)
    if m:
        pos[m.group(1)] = len(ins)
        continue
    m = re.search(r'/\*[0-9a-f]{4}\*/\s+(.*?);', l)
    if m:
        ins.append(m.group(1).strip())
best = None
for i, s in enumerate(ins):
    m = re.search(r'BRA\s+`\((\.L_x_\d+)\)', s)
    if m and m.group(1) in pos and pos[m.group(1)] < i:
        body = ins[pos[m.group(1)]:i + 1]
        if sum('HGMMA' in x for x in body) >= int(sys.argv[2]):
            if best is None or len(body) < len(best):
                best = body
spills = sum(1 for x in ins if re.search(r'\b(LDL|STL)\b', x))
if best is None:
    print(0, 0, 0, 0, spills, 0)
else:
    op = lambda x: x.split()[1] if x.startswith('@') else x.split()[0]
    # whether every exp2 of the loop comes before its last wgmma wait (the
    # softmax overlaps the P V in flight)
    ex = [i for i, x in enumerate(best) if 'MUFU.EX2' in x]
    wt = [i for i, x in enumerate(best) if 'WARPGROUP.DEPBAR.LE gsb0, 0x0' in x]
    ordered = int(bool(ex) and bool(wt) and max(ex) < max(wt))
    print(len(best), sum('HGMMA' in x for x in best),
          sum(1 for x in best if re.match(r'U[A-Z]', op(x))),
          sum(1 for x in best if op(x).split('.')[0] in ('BSSY', 'BSYNC', 'WARPSYNC')), spills, ordered)
PY

# check NAME CUBIN HGMMA_MIN UNIFORM_MIN
check() {
  n=$((n+1))
  if ! "$NVDIS" -c "$2" > "$tmp/k.sass" 2> "$tmp/err"; then
    echo "FAIL $1: nvdisasm failed"; cat "$tmp/err"; fail=$((fail+1)); return
  fi
  set -- "$1" "$2" "$3" "$4" $(python3 "$tmp/loop.py" "$tmp/k.sass" "$3")
  # $5 len, $6 hgmma, $7 uniform, $8 bssy, $9 spills, ${10} softmax before the P V wait
  if [ "$5" -eq 0 ]; then echo "FAIL $1: no loop with $3 wgmmas found"; fail=$((fail+1)); return; fi
  msg=""
  [ "$7" -ge "$4" ] || msg="$msg $7 uniform-datapath instructions (want >= $4: ptxas lost warp-uniformity);"
  [ "$8" -eq 0 ] || msg="$msg $8 BSSY/BSYNC/WARPSYNC (divergence bookkeeping);"
  [ "$9" -eq 0 ] || msg="$msg $9 LDL/STL in the kernel (spills);"
  case $1 in *ORDER_WAIT*) [ "${10}" = 1 ] || msg="$msg the P V wait (DEPBAR gsb0 0x0) is not after the softmax exp2s;" ;; esac
  [ -n "${VERBOSE:-}" ] && echo "$1: main loop $5 instructions, $6 HGMMA, $7 uniform-datapath, $9 spill instructions, softmax before the P V wait: ${10}"
  if [ -n "$msg" ]; then echo "FAIL $1: main loop of $5 instructions:$msg"; fail=$((fail+1)); fi
}

J=examples/jagged_attention/jfa_fwd.tile
# the shipped build flags of head dim $1 (mk/examples.mk jfa_pipe)
pipe_flags() { ${MAKE:-make} -s --no-print-directory jfa-flags D=$1; }
# the TMA-store epilogue: smem_store of the 64 x D accumulator into the
# 128-byte-swizzled staging buffer, by stmatrix (one STSM.16.M88.4 per 8
# elements of a thread: D / 16 of them), addressed with at most 8 registers
# (one per swizzled 16-byte chunk; the rest are immediate offsets): an
# address per register group kept 32 registers live through the kernel
# and cost D8k 4.5% (docs/perf.md, sixth session)
for d in 64 128; do
  n=$((n+1))
  if "$TILEC" -D D=$d $(pipe_flags $d) -o "$tmp/e.cubin" "$J" 2> "$tmp/err"; then
    "$NVDIS" -c "$tmp/e.cubin" > "$tmp/e.sass"
    regs=$(grep -oE 'STSM\.16\.M88\.4 \[R[0-9]+(\+0x[0-9a-f]+)?\]' "$tmp/e.sass" | sed -E 's/.*\[(R[0-9]+).*/\1/' | sort -u | wc -l)
    sts=$(grep -c 'STSM\.16\.M88\.4 \[R' "$tmp/e.sass")
    [ -n "${VERBOSE:-}" ] && echo "jfa.d$d epilogue: $sts STSM through $regs address registers"
    if [ "$sts" -lt $((d / 16)) ] || [ "$regs" -gt 8 ] || [ "$regs" -lt 1 ]; then
      echo "FAIL jfa.d$d epilogue: $sts STSM (expected >= $((d / 16))) through $regs address registers (expected 1..8)"; fail=$((fail+1))
    fi
  else
    echo "FAIL jfa.d$d: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
  fi
done
# the default kernels, and with the options of `make jfa-ab`
for opts in "" "--tree-reductions"; do
  for v in "64 self" "64 causal" "64 bcast" "128 self" "128 causal" "128 bcast"; do
    set -- $v
    # the shipped build flags (mk/examples.mk jfa_pipe), then the options
    d=$1; kind=$2; defs="-D D=$d $(pipe_flags $d) $opts"
    [ $kind = causal ] && defs="$defs -D CAUSAL=true"
    [ $kind = bcast ] && defs="$defs -D BCAST=true"
    name=jfa.d$d.$kind${opts:+ ($opts)}
    if ! "$TILEC" $defs -o "$tmp/j.cubin" "$J" 2> "$tmp/err"; then
      n=$((n+1)); echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
    fi
    # the unmasked KV loop: S = Q K^T (D/16 k-steps) and P V (BN/16 = 8)
    check "$name (SASS)" "$tmp/j.cubin" $((d / 16 + 8)) 20
  done
done
if "$TILEC" -o "$tmp/g.cubin" examples/gemm/gemm.tile 2> "$tmp/err"; then
  check "gemm (SASS)" "$tmp/g.cubin" 4 4
else
  n=$((n+1)); echo "FAIL gemm: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
fi

echo "sass property checks: $((n-fail))/$n passed"
[ $fail -eq 0 ]

#!/bin/sh
# tests/ptx/gemm_props.sh - property checks of the warp-specialized persistent
# GEMM (examples/gemm/gemm.tile) without a GPU:
#   - sm_90a PTX uses every Hopper primitive the kernel is written with:
#     wgmma (m64n256k16 bf16 -> f32, fence / commit_group / wait_group 1 and 0),
#     TMA loads and stores, mbarrier init / expect_tx / try_wait.parity,
#     setmaxnreg per task (232 up, 40 down), .maxnreg, fence.proxy.async,
#     .maxntid 384 (warps(12));
#   - the metadata (tilec --emit=meta, and the copy embedded in the PTX as
#     __tile_meta) has smem 230400 and the three tmabox lines;
#   - ptxas -v: no spills, no stack frame;
#   - sm_100a: the compile fails cleanly (exit 1, the accumulator must be
#     in tensor memory there -- gemm_sm100.tile is the Blackwell kernel --,
#     no internal compiler error, no signal).
#
#   B=build sh tests/ptx/gemm_props.sh        (from the repository root)
#   TILE_PTXAS=/path/to/ptxas                  (else $CUDA_HOME, /usr/local/cuda, PATH)
set -u
B=${B:-build}
TILEC=$B/bin/tilec
SRC=examples/gemm/gemm.tile
PTXAS=${TILE_PTXAS:-}
[ -n "$PTXAS" ] || { [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/ptxas" ] && PTXAS=$CUDA_HOME/bin/ptxas; }
[ -n "$PTXAS" ] || { [ -x /usr/local/cuda/bin/ptxas ] && PTXAS=/usr/local/cuda/bin/ptxas; }
[ -n "$PTXAS" ] || PTXAS=$(command -v ptxas || echo ptxas)

if [ ! -x "$TILEC" ]; then
  echo "gemm_props: $TILEC not found (build it first: make B=$B all)"
  exit 1
fi
if [ ! -f "$SRC" ]; then
  echo "gemm_props: $SRC not found (run me from the repository root)"
  exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gemm_props.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
n=0

bad() { # bad NAME WHY
  echo "FAIL $1: $2"
  fail=$((fail + 1))
}
check() { # check NAME DESC FILE GREP-ERE
  n=$((n + 1))
  grep -Eq -- "$4" "$3" || bad "$1" "$2 (no match for /$4/)"
}
check_line() { # check_line NAME DESC FILE EXACT-LINE
  n=$((n + 1))
  grep -Fqx -- "$4" "$3" || bad "$1" "$2 (no line '$4')"
}

# ---- sm_90a PTX ----------------------------------------------------------------
ptx=$tmp/gemm.sm_90a.ptx
n=$((n + 1))
if ! "$TILEC" --arch=sm_90a --emit=ptx -o "$ptx" "$SRC" 2>"$tmp/err"; then
  bad "gemm/sm_90a" "tilec --emit=ptx failed"
  cat "$tmp/err"
  echo "gemm property checks: $((n - fail))/$n passed"
  exit 1
fi
P=gemm/sm_90a
S='[[:space:]]+'
check "$P" "target" "$ptx" "^\.target sm_90a\$"
check "$P" "kernel entry" "$ptx" "\.visible \.entry gemm\("
check "$P" "wgmma m64n256k16 bf16 -> f32" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16"
check "$P" "wgmma.fence" "$ptx" "wgmma\.fence\.sync\.aligned"
check "$P" "wgmma.commit_group" "$ptx" "wgmma\.commit_group\.sync\.aligned"
check "$P" "wgmma.wait_group 1 (one group in flight)" "$ptx" "wgmma\.wait_group\.sync\.aligned${S}1;"
check "$P" "wgmma.wait_group 0 (drain)" "$ptx" "wgmma\.wait_group\.sync\.aligned${S}0;"
# The TMA load's destination state space: shared::cluster (PTX ISA 8.0) or
# shared::cta (PTX ISA 8.6); both are a bulk tensor copy global -> shared.
check "$P" "TMA load (bulk tensor global -> shared, completes on an mbarrier)" "$ptx" \
  "cp\.async\.bulk\.tensor\.2d\.shared::(cluster|cta)\.global\..*mbarrier::complete_tx::bytes"
check "$P" "TMA store (bulk tensor shared -> global)" "$ptx" "cp\.async\.bulk\.tensor\.2d\.global\.shared::cta"
check "$P" "TMA store completion (bulk wait_group)" "$ptx" "cp\.async\.bulk\.wait_group"
check "$P" "mbarrier.try_wait.parity" "$ptx" "mbarrier\.try_wait\.parity"
check "$P" "mbarrier.init" "$ptx" "mbarrier\.init"
check "$P" "mbarrier.arrive.expect_tx" "$ptx" "mbarrier\.arrive\.expect_tx"
check "$P" "mbarrier.arrive (consumers release a slot)" "$ptx" "mbarrier\.arrive\.(shared(::cta)?\.)?b64"
check "$P" "setmaxnreg.inc 232 (consumers)" "$ptx" "setmaxnreg\.inc\.sync\.aligned\.u32${S}232;"
check "$P" "setmaxnreg.dec 40 (producer)" "$ptx" "setmaxnreg\.dec\.sync\.aligned\.u32${S}40;"
check "$P" ".maxnreg" "$ptx" "^[[:space:]]*\.maxnreg${S}[0-9]+"
check "$P" "fence.proxy.async (st.shared before the TMA store)" "$ptx" "fence\.proxy\.async"
check "$P" ".maxntid 384 (warps(12))" "$ptx" "^[[:space:]]*\.maxntid 384, 1, 1"
check "$P" "line table names gemm.tile" "$ptx" "\.file${S}1 \".*gemm\.tile\""

# ---- metadata ---------------------------------------------------------------------
meta=$tmp/gemm.meta
n=$((n + 1))
if ! "$TILEC" --arch=sm_90a --emit=meta -o "$meta" "$SRC" 2>"$tmp/err"; then
  bad "gemm/meta" "tilec --emit=meta failed"
  cat "$tmp/err"
else
  check_line gemm/meta "threads" "$meta" "threads 384"
  check_line gemm/meta "shared memory (1024 B of mbarriers + 4 x 16 KB A + 4 x 32 KB B + 4 x 8 KB C)" "$meta" "smem 230400"
  check_line gemm/meta "tmabox a" "$meta" "tmabox a 128 64 swizzle 128"
  check_line gemm/meta "tmabox b" "$meta" "tmabox b 256 64 swizzle 128"
  check_line gemm/meta "tmabox c" "$meta" "tmabox c 64 64 swizzle 128"
  check_line gemm/meta "param a is a TMA descriptor" "$meta" "param a tma bf16 128"
  # The copy embedded in the PTX (__tile_meta = {b, y, t, e, s, 0}) is the same text.
  n=$((n + 1))
  sed -n 's/.*__tile_meta\[[0-9]*\] = {\([0-9, ]*\)};.*/\1/p' "$ptx" | tr ',' '\n' |
    awk '{ v = $1 + 0; if (v) printf "%c", v }' >"$tmp/embedded.meta"
  if ! cmp -s "$meta" "$tmp/embedded.meta"; then
    bad gemm/meta "the __tile_meta embedded in the PTX differs from --emit=meta"
    diff "$meta" "$tmp/embedded.meta" | sed 's/^/     /' | head -20
  fi
fi

# ---- ptxas resource report --------------------------------------------------------
if [ -x "$PTXAS" ] || command -v "$PTXAS" >/dev/null 2>&1; then
  log=$tmp/ptxas.log
  n=$((n + 1))
  if ! "$PTXAS" -arch=sm_90a -v "$ptx" -o "$tmp/gemm.cubin" >"$log" 2>&1; then
    bad "$P" "ptxas failed"
    cat "$log"
  fi
  check "$P" "ptxas: no spills" "$log" "0 bytes spill stores, 0 bytes spill loads"
  check "$P" "ptxas: no stack frame" "$log" "(^|[^0-9])0 bytes stack frame"
elif [ "${TILE_ALLOW_MISSING_TOOLS:-0}" = 1 ]; then
  echo "SKIP gemm ptxas checks: no ptxas ('$PTXAS'; TILE_ALLOW_MISSING_TOOLS=1)"
else
  n=$((n + 1))
  bad "$P" "no ptxas ('$PTXAS'): set TILE_PTXAS or CUDA_HOME, or run sh scripts/install-deps.sh (TILE_ALLOW_MISSING_TOOLS=1 skips the ptxas checks instead)"
fi

# ---- sm_100a: a clean refusal of register accumulators ---------------------------
P=gemm/sm_100a
n=$((n + 1))
"$TILEC" --arch=sm_100a -o "$tmp/gemm.sm_100a.cubin" "$SRC" >"$tmp/out100" 2>"$tmp/err100"
rc=$?
if [ "$rc" -ne 1 ]; then
  bad "$P" "exit status $rc, expected 1"
  head -n 5 "$tmp/err100"
fi
check "$P" "the error asks for tensor memory" "$tmp/err100" "error: the accumulator of mma_async on sm_100a is an f32 tensor-memory view"
n=$((n + 1))
if grep -q 'internal compiler error' "$tmp/err100"; then
  bad "$P" "internal compiler error: $(grep -m1 'internal compiler error' "$tmp/err100")"
fi
n=$((n + 1))
if [ -s "$tmp/gemm.sm_100a.cubin" ]; then bad "$P" "a cubin was written although the compile failed"; fi

echo "gemm property checks: $((n - fail))/$n passed"
[ "$fail" -eq 0 ]

#!/bin/sh
# tests/ptx/run.sh - compile every example for sm_90a and sm_100a and check
# properties of the PTX and of ptxas's resource report (no GPU needed):
#   - the target line, the Tile source line table (.loc/.file), the
#     __tile_meta metadata global;
#   - the instructions each kernel must use (vector loads, shuffles, mma.sync,
#     approximate exp2 / rsqrt, shared-memory staging);
#   - ptxas: no spills, no local-memory stack;
#   - each example compiles to cubin in well under a second.
set -u
B=${B:-build}
TILEC=$B/bin/tilec
PTXAS=${TILE_PTXAS:-}
[ -n "$PTXAS" ] || { [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/ptxas" ] && PTXAS=$CUDA_HOME/bin/ptxas; }
[ -n "$PTXAS" ] || { [ -x /usr/local/cuda/bin/ptxas ] && PTXAS=/usr/local/cuda/bin/ptxas; }
[ -n "$PTXAS" ] || PTXAS=$(command -v ptxas || echo ptxas)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0; n=0

check() { # check NAME DESC FILE GREP-ERE
  n=$((n+1))
  if ! grep -Eq "$4" "$3"; then echo "FAIL $1: $2 (no match for /$4/)"; fail=$((fail+1)); fi
}
check_not() {
  n=$((n+1))
  if grep -Eq "$4" "$3"; then echo "FAIL $1: $2 (unexpected /$4/)"; fail=$((fail+1)); fi
}

for arch in sm_90a sm_100a; do
  for e in vector_add softmax layernorm matmul; do
    src=examples/$e/$e.tile
    ptx=$tmp/$e.$arch.ptx
    if ! "$TILEC" --arch=$arch --emit=ptx -o "$ptx" "$src" 2> "$tmp/err"; then
      echo "FAIL $e/$arch: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
    fi
    check "$e/$arch" "target" "$ptx" "^\.target $arch\$"
    check "$e/$arch" "line table names the .tile file" "$ptx" "\.file[[:space:]]+1 \".*$e\.tile\""
    check "$e/$arch" ".loc directives" "$ptx" "^[[:space:]]+\.loc[[:space:]]+1 [0-9]+ [0-9]+"
    check "$e/$arch" "metadata global" "$ptx" "\.visible \.global \.align 1 \.b8 __tile_meta\["
    check "$e/$arch" "kernel entry" "$ptx" "\.visible \.entry $e\("
    check "$e/$arch" "maxntid from warps(4)" "$ptx" "\.maxntid 128, 1, 1"
    case $e in
      vector_add)
        check "$e/$arch" "16-byte vector loads" "$ptx" "ld\.global\.v4\.b32"
        check "$e/$arch" "16-byte vector stores" "$ptx" "st\.global\.v4\.b32"
        check_not "$e/$arch" "no shared memory needed" "$ptx" "(ld|st)\.shared" ;;
      softmax)
        check "$e/$arch" "warp butterfly reductions" "$ptx" "shfl\.sync\.bfly\.b32"
        check "$e/$arch" "fast exp2" "$ptx" "ex2\.approx"
        check "$e/$arch" "cross-warp reduction through shared memory" "$ptx" "st\.shared" ;;
      layernorm)
        check "$e/$arch" "fast rsqrt" "$ptx" "rsqrt\.approx"
        check "$e/$arch" "loops" "$ptx" "bra\.uni|@%p[0-9]+ bra"
        check "$e/$arch" "warp butterfly reductions" "$ptx" "shfl\.sync\.bfly\.b32" ;;
      matmul)
        check "$e/$arch" "tensor-core mma.sync bf16" "$ptx" "mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32"
        check "$e/$arch" "operands staged through shared memory" "$ptx" "ld\.shared"
        check "$e/$arch" "CTA barriers around the staging" "$ptx" "bar\.sync|barrier\.sync" ;;
    esac
    # ptxas resource report
    if [ -x "$PTXAS" ]; then
      "$PTXAS" -arch=$arch -v "$ptx" -o "$tmp/$e.$arch.cubin" > "$tmp/ptxas.log" 2>&1 || { echo "FAIL $e/$arch: ptxas failed"; cat "$tmp/ptxas.log"; fail=$((fail+1)); }
      check "$e/$arch" "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
      check "$e/$arch" "ptxas: no stack frame" "$tmp/ptxas.log" "0 bytes stack frame"
    fi
    # compile time (cubin, whole pipeline)
    n=$((n+1))
    t0=$(date +%s%N)
    "$TILEC" --arch=$arch -o "$tmp/t.cubin" "$src"
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    if [ "$ms" -ge 1000 ]; then echo "FAIL $e/$arch: compile took ${ms} ms (>= 1 s)"; fail=$((fail+1)); fi
  done
done
echo "ptx property checks: $((n-fail))/$n passed"
[ $fail -eq 0 ]

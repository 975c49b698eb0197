#!/bin/sh
# tests/ptx/run.sh - compile every example for sm_90a and sm_100a and check
# properties of the PTX and of ptxas's resource report (no GPU needed):
#   - the target line, the Tile source line table (.loc/.file), the
#     __tile_meta metadata global;
#   - the instructions each kernel must use (vector loads, shuffles, mma.sync,
#     approximate exp2 / rsqrt, shared-memory staging);
#   - ptxas: no spills, no local-memory stack;
#   - tilec --stats: the registers and spills ptxas -v reports;
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
# Without a ptxas that runs, the ptxas checks below cannot run: that is a
# failure (CI has one: scripts/install-deps.sh), unless
# TILE_ALLOW_MISSING_TOOLS=1 says skipping them is fine here.
if ! "$PTXAS" --version > /dev/null 2>&1; then
  if [ "${TILE_ALLOW_MISSING_TOOLS:-0}" = 1 ]; then
    echo "SKIP ptxas checks: no ptxas ('$PTXAS'; TILE_ALLOW_MISSING_TOOLS=1)"
  else
    n=$((n+1)); fail=$((fail+1))
    echo "FAIL ptxas: '$PTXAS' does not run: set TILE_PTXAS or CUDA_HOME, or run sh scripts/install-deps.sh" \
         "(TILE_ALLOW_MISSING_TOOLS=1 skips the ptxas checks instead)"
  fi
  PTXAS=/nonexistent/ptxas   # every [ -x "$PTXAS" ] below is false
fi

check() { # check NAME DESC FILE GREP-ERE
  n=$((n+1))
  if ! grep -Eq "$4" "$3"; then echo "FAIL $1: $2 (no match for /$4/)"; fail=$((fail+1)); fi
}
# assemble NAME ARCH PTX: ptxas -v, its report in $tmp/ptxas.log; a failure
# is counted and printed; status 0 when it assembled
assemble() {
  n=$((n+1))
  "$PTXAS" -arch=$2 -v "$3" -o "$tmp/$1.cubin" > "$tmp/ptxas.log" 2>&1 && return 0
  echo "FAIL $1: ptxas failed"; cat "$tmp/ptxas.log"; fail=$((fail+1)); return 1
}
check_not() {
  n=$((n+1))
  if grep -Eq "$4" "$3"; then echo "FAIL $1: $2 (unexpected /$4/)"; fail=$((fail+1)); fi
}
# jfa_ptx NAME OUT DEFS...: jfa_fwd.tile to PTX in OUT with tilec's -D DEFS;
# a failure is counted and printed; status 0 when it compiled
jfa_ptx() {
  name=$1; out=$2; shift 2
  "$TILEC" "$@" --emit=ptx -o "$out" "$J" 2> "$tmp/err" && return 0
  echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); return 1
}
# wgmma_async NAME: ptxas (its log in $tmp/ptxas.log) did not have to inject
# warpgroup.arrive (C7519) nor serialize the wgmmas (C7520: every MMA
# waited for, about 13% on J2)
wgmma_async() {
  check_not "$1" "ptxas injects no warpgroup.arrive" "$tmp/ptxas.log" "C7519"
  check_not "$1" "ptxas keeps the wgmmas asynchronous" "$tmp/ptxas.log" "C7520|Performance Loss"
}
# spills_at_most NAME BYTES: ptxas's report (in $tmp/ptxas.log) spills at
# most BYTES, and no wgmma warning of any kind (C7510-C7520)
spills_at_most() {
  sp=$(sed -n 's/.* \([0-9][0-9]*\) bytes spill stores.*/\1/p' "$tmp/ptxas.log" | head -n 1)
  n=$((n+1))
  if [ "${sp:-999}" -gt "$2" ]; then echo "FAIL $1: ptxas spills ${sp:-?} bytes (at most $2)"; fail=$((fail+1)); fi
  check_not "$1" "ptxas keeps the wgmmas asynchronous" "$tmp/ptxas.log" "C7510|C7512|C7514|C7519|C7520|Performance Loss"
}

for arch in sm_90a sm_100a; do
  for e in vector_add softmax layernorm matmul; do
    src=examples/$e/$e.tile
    ptx=$tmp/$e.$arch.ptx
    defs=
    if ! "$TILEC" --arch=$arch $defs --emit=ptx -o "$ptx" "$src" 2> "$tmp/err"; then
      echo "FAIL $e/$arch: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
    fi
    check "$e/$arch" "target" "$ptx" "^\.target $arch\$"
    check "$e/$arch" "line table names the .tile file" "$ptx" "\.file[[:space:]]+1 \".*$e\.tile\""
    check "$e/$arch" ".loc directives" "$ptx" "^[[:space:]]+\.loc[[:space:]]+1 [0-9]+ [0-9]+"
    check "$e/$arch" "metadata global" "$ptx" "\.visible \.global \.align 1 \.b8 __tile_meta\["
    check "$e/$arch" "kernel entry" "$ptx" "\.visible \.entry $e\("
    if [ $e = matmul ]; then check "$e/$arch" "maxntid from warps(8)" "$ptx" "\.maxntid 256, 1, 1"
    else check "$e/$arch" "maxntid from warps(4)" "$ptx" "\.maxntid 128, 1, 1"; fi
    case $e/$arch in
      vector_add/*)
        check "$e/$arch" "16-byte vector loads" "$ptx" "ld\.global\.v4\.b32"
        check "$e/$arch" "16-byte vector stores" "$ptx" "st\.global\.v4\.b32"
        check_not "$e/$arch" "no shared memory needed" "$ptx" "(ld|st)\.shared" ;;
      softmax/*)
        check "$e/$arch" "warp butterfly reductions" "$ptx" "shfl\.sync\.bfly\.b32"
        check "$e/$arch" "fast exp2" "$ptx" "ex2\.approx"
        check "$e/$arch" "cross-warp reduction through shared memory" "$ptx" "st\.shared" ;;
      layernorm/*)
        check "$e/$arch" "fast rsqrt" "$ptx" "rsqrt\.approx"
        check "$e/$arch" "loops" "$ptx" "bra\.uni|@%p[0-9]+ bra"
        check "$e/$arch" "warp butterfly reductions" "$ptx" "shfl\.sync\.bfly\.b32" ;;
      matmul/sm_90a) # the compiler's pipeline (pipeline.c): TMA into rings, async wgmma
        check "$e/$arch" "TMA copies of the tiles" "$ptx" "cp\.async\.bulk\.tensor\.2d\.shared::cta\.global\.tile\.mbarrier::complete_tx::bytes"
        check "$e/$arch" "the bytes expected on the ring's mbarrier" "$ptx" "mbarrier\.arrive\.expect_tx"
        check "$e/$arch" "the tiles awaited on it" "$ptx" "mbarrier\.try_wait\.parity"
        check "$e/$arch" "the descriptors are grid constants" "$ptx" "\.param \.align 64 \.b8 matmul_param_11\[128\]"
        check "$e/$arch" "C staged by stmatrix" "$ptx" "stmatrix\.sync\.aligned"
        check "$e/$arch" "C written by TMA" "$ptx" "cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group"
        check_not "$e/$arch" "no per-thread stores of C" "$ptx" "st\.global"
        check_not "$e/$arch" "no per-thread copies" "$ptx" "cp\.async\.cg\.shared\.global"
        check "$e/$arch" "async wgmma 64x256x16 bf16" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n256k16\.f32\.bf16\.bf16"
        check "$e/$arch" "one wgmma group kept in flight" "$ptx" "wgmma\.wait_group\.sync\.aligned[[:space:]]+1;"
        check_not "$e/$arch" "no mma.sync" "$ptx" "mma\.sync\.aligned\.m16n8k16" ;;
      matmul/sm_100a) # the compiler's pipeline on tcgen05 (pipeline_sm100.c): TMA into rings, tcgen05.mma
        # into tensor memory committed to the slots' mbarriers, tcgen05.ld after the loop, C by TMA
        check "$e/$arch" "TMA copies of the tiles" "$ptx" "cp\.async\.bulk\.tensor\.2d\.shared::cta\.global\.tile\.mbarrier::complete_tx::bytes"
        check "$e/$arch" "tcgen05.mma kind::f16" "$ptx" "tcgen05\.mma\.cta_group::1\.kind::f16"
        check "$e/$arch" "tcgen05.commit to an mbarrier" "$ptx" "tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one"
        check "$e/$arch" "tcgen05.alloc" "$ptx" "tcgen05\.alloc\.cta_group::1"
        check "$e/$arch" "tcgen05.dealloc" "$ptx" "tcgen05\.dealloc\.cta_group::1"
        check "$e/$arch" "tcgen05.ld 32x32b (a warpgroup's 128 columns)" "$ptx" "tcgen05\.ld\.sync\.aligned\.32x32b\.x128\.b32"
        check "$e/$arch" "tcgen05.wait::ld" "$ptx" "tcgen05\.wait::ld"
        check "$e/$arch" "the slots awaited on mbarriers" "$ptx" "mbarrier\.try_wait\.parity"
        check "$e/$arch" "C written by TMA" "$ptx" "cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group"
        check_not "$e/$arch" "no wgmma" "$ptx" "wgmma"
        check_not "$e/$arch" "no mma.sync" "$ptx" "mma\.sync"
        check_not "$e/$arch" "no per-thread stores of C" "$ptx" "st\.global" ;;
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
    "$TILEC" --arch=$arch $defs -o "$tmp/t.cubin" "$src"
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    # 1 s for the release build; the sanitizer build's compiler (ASan, -O1)
    # runs 2-3 times slower (the pipelined matmul: 0.34 s here, 1.0-1.1 s there)
    lim=1000; [ -n "${TILE_SAN:-}" ] && lim=3000
    if [ "$ms" -ge $lim ]; then echo "FAIL $e/$arch: compile took ${ms} ms (>= $lim ms)"; fail=$((fail+1)); fi
  done
done
# The Triton-style matmul on sm_100a (pipeline_sm100.c) with the leaky_relu
# epilogue (mk/tutorials.mk's matmul_lrelu) and with pointer increments
# (tests/emu/matmul_ptrinc.tile: cp.async rings, C stored from the tcgen05.ld
# registers): tcgen05 and nothing older, and no spills
for v in "matmul_lrelu examples/matmul/matmul.tile -D LEAKY_RELU=true" "matmul_ptrinc tests/emu/matmul_ptrinc.tile"; do
  set -- $v
  name=$1.sm_100a; src=$2; shift 2
  ptx=$tmp/$name.ptx
  if ! "$TILEC" --arch=sm_100a "$@" --emit=ptx -o "$ptx" "$src" 2> "$tmp/err"; then
    echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
  fi
  check "$name" "tcgen05.mma kind::f16" "$ptx" "tcgen05\.mma\.cta_group::1\.kind::f16"
  check "$name" "tcgen05.commit" "$ptx" "tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one"
  check "$name" "tcgen05.alloc" "$ptx" "tcgen05\.alloc\.cta_group::1"
  check "$name" "tcgen05.dealloc" "$ptx" "tcgen05\.dealloc\.cta_group::1"
  check "$name" "tcgen05.ld 32x32b" "$ptx" "tcgen05\.ld\.sync\.aligned\.32x32b"
  check_not "$name" "no wgmma" "$ptx" "wgmma"
  check_not "$name" "no mma.sync" "$ptx" "mma\.sync"
  if [ $name = matmul_ptrinc.sm_100a ]; then
    check "$name" "cp.async copies into the rings" "$ptx" "cp\.async\.cg\.shared\.global"
  else
    check "$name" "TMA copies of the tiles" "$ptx" "cp\.async\.bulk\.tensor\.2d\.shared::cta\.global"
  fi
  if [ -x "$PTXAS" ] && assemble "$name" sm_100a "$ptx"; then
    check "$name" "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
    check "$name" "ptxas: no stack frame" "$tmp/ptxas.log" "0 bytes stack frame"
  fi
done
# The layer-norm backward on rows of 16384 in its three-kernel form
# (mk/tutorials.mk's .split A/B build and the f32 build, DWDB=false): its
# row kernel keeps no dw/db partial sums and
# fits 16 warps' registers (with them it spilled 344 bytes: 0.79x Triton);
# the dw/db partial-sum kernel does not spill either. The one-kernel form
# (layernorm_bwd) needs the partial sums beside the row and spills here:
# the hosts and the bench use the three kernels for such builds, and its
# section of the ptxas report is left out of the check.
n=$((n+1))
ptx=$tmp/lnb16k.ptx
if "$TILEC" -D T=f16 -D BLOCK=16384 -D WARPS=16 -D DWDB=false -D 'n_cols=multiple_of(16)' -D 'stride=multiple_of(16)' \
     --emit=ptx -o "$ptx" examples/layernorm_bwd/layernorm_bwd.tile 2> "$tmp/err"; then
  check layernorm_bwd.b16384 "the dw/db partial-sum kernel" "$ptx" "\.entry layernorm_bwd_dwdb_part\("
  if [ -x "$PTXAS" ] && assemble layernorm_bwd.b16384 sm_90a "$ptx"; then
    awk '/Function properties for /{skip = ($NF == "layernorm_bwd")} !skip' "$tmp/ptxas.log" > "$tmp/ptxas16k.log"
    check layernorm_bwd.b16384 "ptxas: the row and partial-sum kernels reported" "$tmp/ptxas16k.log" \
      "properties for layernorm_bwd_dx"
    check_not layernorm_bwd.b16384 "ptxas: no spills in its three-kernel form" "$tmp/ptxas16k.log" "[1-9][0-9]* bytes spill"
  fi
else
  echo "FAIL layernorm_bwd.b16384: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
fi
# The same rows with the dw/db partial sums in the row kernel (DWDB=true,
# the shipped f16 build since the twentieth session): the compiler homes them in shared memory (compiler/home.c: 2 x 64 KB),
# so the row kernel loads and stores its part of them each row instead of
# carrying them, and spills a few bytes where carrying them spilled 344
# (eleventh session). At 128 registers ptxas's spill moves with the order
# of the instructions: 24 bytes before the row's two sums shared one
# exchange (thirty-fifth session), 44 after; the bound is 64.
n=$((n+1))
ptx=$tmp/lnb16k_home.ptx
if "$TILEC" -D T=f16 -D BLOCK=16384 -D WARPS=16 -D DWDB=true -D W_ONCE=false \
     --emit=ptx -o "$ptx" examples/layernorm_bwd/layernorm_bwd.tile 2> "$tmp/err"; then
  awk '/^.visible .entry /{on = ($3 == "layernorm_bwd_dx(")} on' "$ptx" > "$tmp/lnb16k_dx.ptx"
  check layernorm_bwd.home "the row kernel stores its partial sums to shared memory, 16 bytes a store" \
    "$tmp/lnb16k_dx.ptx" "st\.shared\.v4\.(b32|f32)"
  check layernorm_bwd.home "and loads them back" "$tmp/lnb16k_dx.ptx" "ld\.shared\.v4\.(b32|f32)"
  if [ -x "$PTXAS" ] && assemble layernorm_bwd.home sm_90a "$ptx"; then
    sp=$(awk '/Function properties for /{on = ($NF == "layernorm_bwd_dx")} on && /bytes spill stores/{print $5; exit}' \
      "$tmp/ptxas.log")
    n=$((n+1))
    if [ -z "$sp" ] || [ "$sp" -gt 64 ]; then
      echo "FAIL layernorm_bwd.home: the row kernel spills '${sp:-?}' bytes (at most 64)"; fail=$((fail+1))
    fi
  fi
else
  echo "FAIL layernorm_bwd.home: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
fi
# The row loads through cp.async rings (stages(RING), compiler/pipeline_rows.c):
# the row kernel copies x and dy with 16-byte cp.async (zero-filled past the
# row's end), waits for all but the newest group (two rows ahead; at 16384
# columns, one slot beside the homed dw/db, for every group) and reads the
# rows back 16 bytes a load; w (the same every row) stays a global load.
# Both assemble with at most a few spilled bytes.
ring_ptx() { # ring_ptx NAME WAIT DEFS...
  name=layernorm_bwd.$1 wait_n=$2; shift 2
  n=$((n+1))
  ptx=$tmp/lnb_$name.ptx
  if ! "$TILEC" -D T=f16 -D 'n_cols=multiple_of(16)' -D 'stride=multiple_of(16)' "$@" --emit=ptx -o "$ptx" \
       examples/layernorm_bwd/layernorm_bwd.tile 2> "$tmp/err"; then
    echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); return
  fi
  awk '/^.visible .entry /{on = ($3 == "layernorm_bwd_dx(")} on' "$ptx" > "$tmp/lnb_ring_dx.ptx"
  check $name "16-byte cp.async copies of the rows" "$tmp/lnb_ring_dx.ptx" \
    "cp\.async\.cg\.shared\.global \[[^]]*\], \[[^]]*\], 16"
  check $name "the wait for the row's copies" "$tmp/lnb_ring_dx.ptx" "cp\.async\.wait_group $wait_n;"
  check $name "the rows read back 16 bytes a load" "$tmp/lnb_ring_dx.ptx" "ld\.shared\.v4\.b32"
  check $name "w still a global load" "$tmp/lnb_ring_dx.ptx" "ld\.global[.a-zA-Z0-9_:]*\.v4\.b32"
  if [ -x "$PTXAS" ] && assemble $name sm_90a "$ptx"; then
    sp=$(awk '/Function properties for /{on = ($NF == "layernorm_bwd_dx")} on && /bytes spill stores/{print $5; exit}' \
      "$tmp/ptxas.log")
    n=$((n+1))
    if [ -z "$sp" ] || [ "$sp" -gt 32 ]; then
      echo "FAIL $name: the row kernel spills '${sp:-?}' bytes (at most 32)"; fail=$((fail+1))
    fi
  fi
}
ring_ptx ring3 1 -D BLOCK=8192 -D WARPS=16 -D W_ONCE=false -D RING=3
ring_ptx ring1 0 -D BLOCK=16384 -D WARPS=16 -D W_ONCE=false -D RING=2
# The vector add as the JIT specializes it for n % 16 == 0 (mk/tutorials.mk's
# vector_add.s16, Triton's specialization): every load and store 16 bytes,
# with no per-element fallback beside them (the unspecialized build guards
# each 4-element chunk: a v4 load and four predicated scalar ones). The
# layer-norm backward's PREFETCH build (rows up to 4096: the next row's
# loads before this row's reductions) assembles without spills.
ptx=$tmp/va16.ptx
if "$TILEC" -D 'n=multiple_of(16)' --emit=ptx -o "$ptx" examples/vector_add/vector_add.tile 2> "$tmp/err"; then
  check vector_add.s16 "16-byte loads" "$ptx" "ld\.global(\.nc)?\.v4\.b32"
  check_not vector_add.s16 "no scalar loads beside them" "$ptx" "ld\.global(\.nc)?\.b32"
  check_not vector_add.s16 "no scalar stores" "$ptx" "st\.global\.b32"
else
  n=$((n+1)); echo "FAIL vector_add.s16: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
fi
ptx=$tmp/lnb4k.ptx
if "$TILEC" -D T=f16 -D BLOCK=4096 -D WARPS=8 -D 'n_cols=multiple_of(16)' -D 'stride=multiple_of(16)' \
     --emit=ptx -o "$ptx" examples/layernorm_bwd/layernorm_bwd.tile 2> "$tmp/err"; then
  "$TILEC" -D T=f16 -D BLOCK=4096 -D WARPS=8 --emit=meta -o "$tmp/lnb4k.meta" examples/layernorm_bwd/layernorm_bwd.tile
  check layernorm_bwd.b4096 "PREFETCH on at 4096 (its metadata)" "$tmp/lnb4k.meta" "^const PREFETCH bool true$"
  if [ -x "$PTXAS" ] && assemble layernorm_bwd.b4096 sm_90a "$ptx"; then
    check_not layernorm_bwd.b4096 "ptxas: no spills in any of its kernels" "$tmp/ptxas.log" "[1-9][0-9]* bytes spill"
  fi
else
  n=$((n+1)); echo "FAIL layernorm_bwd.b4096: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
fi
# The Blackwell GEMM (examples/gemm/gemm_sm100.tile, issue 18): tensor
# memory and tcgen05 for sm_100a, assembled by ptxas (no B200 runs it; the
# emulator does, docs/blackwell.md): one tcgen05.alloc of all 512 columns
# (the metadata's tmem line), relinquished and freed; a chain of K/16
# tcgen05.mma kind::f16 per stage committed to an mbarrier; the epilogue's
# tcgen05.ld 32x32b.x64 waited for with wait::ld; the fences around thread
# syncs; TMA in and out; no wgmma; ptxas: no spills, no stack frame.
G100=examples/gemm/gemm_sm100.tile
ptx=$tmp/gemm_sm100.ptx
n=$((n+1))
if ! "$TILEC" --arch=sm_100a --emit=ptx -o "$ptx" "$G100" 2> "$tmp/err"; then
  echo "FAIL gemm_sm100: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
else
  name=gemm_sm100
  check $name "target" "$ptx" "^\.target sm_100a\$"
  check $name "TMEM allocated by one warp" "$ptx" "tcgen05\.alloc\.cta_group::1\.sync\.aligned\.shared::cta\.b32"
  check $name "the right to allocate given up" "$ptx" "tcgen05\.relinquish_alloc_permit\.cta_group::1\.sync\.aligned;"
  check $name "TMEM freed" "$ptx" "tcgen05\.dealloc\.cta_group::1\.sync\.aligned\.b32"
  check $name "tcgen05.mma bf16 into TMEM (smem descriptors)" "$ptx" \
    "tcgen05\.mma\.cta_group::1\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], %rd[0-9]+, %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
  check $name "MMAs committed to mbarriers" "$ptx" "tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one\.shared::cluster\.b64"
  check $name "the accumulator read 64 columns at a time" "$ptx" "tcgen05\.ld\.sync\.aligned\.32x32b\.x64\.b32"
  check $name "and waited for" "$ptx" "tcgen05\.wait::ld\.sync\.aligned;"
  check $name "fences before thread syncs" "$ptx" "tcgen05\.fence::before_thread_sync;"
  check $name "fences after thread syncs" "$ptx" "tcgen05\.fence::after_thread_sync;"
  check $name "the instruction descriptor (bf16, f32, M 128, N 256, K-major)" "$ptx" "mov\.b32[[:space:]]+%r[0-9]+, 138413200;"
  check $name "sm_100 smem descriptors (version bit 46, 128B swizzle)" "$ptx" "4611756662049538048"
  check $name "TMA loads" "$ptx" "cp\.async\.bulk\.tensor\.2d\.shared::cta\.global"
  check $name "TMA stores" "$ptx" "cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group"
  check $name "register budgets per task" "$ptx" "setmaxnreg\.dec\.sync\.aligned\.u32"
  check_not $name "no wgmma" "$ptx" "wgmma"
  "$TILEC" --arch=sm_100a --emit=meta -o "$tmp/gemm_sm100.meta" "$G100"
  check $name "metadata: all 512 TMEM columns" "$tmp/gemm_sm100.meta" "^tmem 512\$"
  if [ -x "$PTXAS" ] && assemble $name sm_100a "$ptx"; then
    check $name "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
    check $name "ptxas: no stack frame" "$tmp/ptxas.log" "0 bytes stack frame"
  fi
fi
# The JFA forward for Blackwell (jfa_fwd_sm100.tile; docs/blackwell.md "The
# JFA forward"), each head dim and variant the library loads: S = Q K^T
# from shared memory and O += P V with P from tensor memory (A in TMEM),
# committed to mbarriers; the softmax replicas read S (two .x64 loads: a
# 16-warp kernel's cap of 128 registers leaves no room for one .x128) and
# write P, the correction warps rescale O, with tcgen05.ld/st 32x32b; no
# wgmma; 16 warps (512 threads) and a register budget per task (load and
# MMA warps 32, correction 96, the two softmax warpgroups 192 each: 65,536
# in all); the metadata's TMEM columns (S0, S1, O0, O1: 2 x 128 + 2 x D,
# rounded up to a power of two: 512); ptxas: no spills, no stack frame.
J100=examples/jagged_attention/jfa_fwd_sm100.tile
for d in 64 128; do
  for v in self causal bcast; do
    name=jfa_fwd_sm100.d$d.$v; ptx=$tmp/$name.ptx
    defs=; [ $v = causal ] && defs="-D CAUSAL=true"; [ $v = bcast ] && defs="-D BCAST=true"
    n=$((n+1))
    if ! "$TILEC" --arch=sm_100a -D D=$d $defs --emit=ptx -o "$ptx" "$J100" 2> "$tmp/err"; then
      echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
    fi
    check $name "target" "$ptx" "^\.target sm_100a\$"
    check $name "S = Q K^T: tcgen05.mma from shared memory" "$ptx" \
      "tcgen05\.mma\.cta_group::1\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], %rd[0-9]+, %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
    check $name "O += P V: tcgen05.mma with P from tensor memory" "$ptx" \
      "tcgen05\.mma\.cta_group::1\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], \[%r[0-9]+\], %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
    check $name "MMAs committed to mbarriers" "$ptx" "tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one\.shared::cluster\.b64"
    check $name "S read a row a thread (128 columns as two .x64)" "$ptx" "tcgen05\.ld\.sync\.aligned\.32x32b\.x64\.b32"
    check_not $name "no .x128 (over the 16-warp cap: ptxas C7602)" "$ptx" "32x32b\.x128"
    check $name "P written back (bf16 pairs, 64 columns)" "$ptx" "tcgen05\.st\.sync\.aligned\.32x32b\.x64\.b32"
    check $name "O rescaled in tensor memory" "$ptx" "tcgen05\.st\.sync\.aligned\.32x32b\.x32\.b32"
    check $name "fences after thread syncs" "$ptx" "tcgen05\.fence::after_thread_sync;"
    check $name "TMA loads" "$ptx" "cp\.async\.bulk\.tensor\.2d\.shared::cta\.global"
    check $name "16 warps" "$ptx" "^\.maxntid 512, 1, 1\$"
    check $name "load and MMA warps: 32 registers" "$ptx" "setmaxnreg\.dec\.sync\.aligned\.u32[[:space:]]+32;"
    check $name "correction warpgroup: 96 registers" "$ptx" "setmaxnreg\.dec\.sync\.aligned\.u32[[:space:]]+96;"
    check $name "softmax warpgroups: 192 registers" "$ptx" "setmaxnreg\.inc\.sync\.aligned\.u32[[:space:]]+192;"
    check_not $name "no wgmma" "$ptx" "wgmma"
    # EXP2_FMA (4 + D / 32): one exponential in 6 (D = 64) or 8 (D = 128)
    # of the softmax's 128 a thread on the FMA pipe, rounded by cvt.rni;
    # with EXP2_FMA = 0 none, and that many more ex2.approx
    if [ $v = self ]; then
      k=$((4 + d / 32)); nr=$(grep -c "cvt\.rni\.f32\.f32" "$ptx"); ne=$(grep -c "ex2\.approx" "$ptx")
      "$TILEC" --arch=sm_100a -D D=$d -D EXP2_FMA=0 --emit=ptx -o "$tmp/$name.nofma.ptx" "$J100" 2> "$tmp/err"
      ne0=$(grep -c "ex2\.approx" "$tmp/$name.nofma.ptx"); nr0=$(grep -c "cvt\.rni\.f32\.f32" "$tmp/$name.nofma.ptx")
      if [ "$nr" -eq $((128 / k)) ] && [ "$nr0" -eq 0 ] && [ $((ne0 - ne)) -eq "$nr" ]; then
        echo "ok   $name: one exponential in $k on the FMA pipe ($nr of 128; $ne0 ex2.approx without)"
      else
        echo "FAIL $name: EXP2_FMA=$k: $nr polynomial exponentials, $ne ex2.approx; without: $nr0 and $ne0"
        fail=$((fail+1))
      fi
    fi
    "$TILEC" --arch=sm_100a -D D=$d $defs --emit=meta -o "$tmp/$name.meta" "$J100"
    check $name "metadata: 512 TMEM columns" "$tmp/$name.meta" "^tmem 512\$"
    if [ -x "$PTXAS" ] && assemble $name sm_100a "$ptx"; then
      check $name "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
      check $name "ptxas: no stack frame" "$tmp/ptxas.log" "0 bytes stack frame"
    fi
  done
done
# The CTA pair's JFA forward (jfa_fwd_sm100.tile with CTAS = 2, head dim
# 128; docs/blackwell.md "The CTA pair"): clusters of two CTAs; every MMA
# the pair's (tcgen05.mma.cta_group::2: S from shared memory, P V with P from
# tensor memory, no ::1 form, which ptxas refuses beside ::2), committed to
# both CTAs' mbarriers (multicast); the pair's allocation; both CTAs' TMA
# loads completing on the even CTA's mbarrier (.cta_group::2), K as [64, 64]
# boxes (half of a block's keys); arrivals on the even CTA's mbarriers
# (shared::cluster); the same register budgets; 512 TMEM columns; ptxas: no
# spills, no stack frame.
for v in self causal bcast; do
  name=jfa_fwd_sm100.pair.$v; ptx=$tmp/$name.ptx
  defs=; [ $v = causal ] && defs="-D CAUSAL=true"; [ $v = bcast ] && defs="-D BCAST=true"
  n=$((n+1))
  if ! "$TILEC" --arch=sm_100a -D D=128 -D CTAS=2 $defs --emit=ptx -o "$ptx" "$J100" 2> "$tmp/err"; then
    echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
  fi
  check $name "clusters of two CTAs" "$ptx" "^\.reqnctapercluster 2, 1, 1\$"
  check $name "S = Q K^T: the pair's tcgen05.mma from shared memory" "$ptx" \
    "tcgen05\.mma\.cta_group::2\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], %rd[0-9]+, %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
  check $name "O += P V: the pair's tcgen05.mma with P from tensor memory" "$ptx" \
    "tcgen05\.mma\.cta_group::2\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], \[%r[0-9]+\], %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
  check_not $name "no one-CTA tcgen05" "$ptx" "cta_group::1"
  check $name "commits multicast to both CTAs" "$ptx" \
    "tcgen05\.commit\.cta_group::2\.mbarrier::arrive::one\.shared::cluster\.multicast::cluster\.b64"
  check $name "the pair's allocation" "$ptx" "tcgen05\.alloc\.cta_group::2"
  check $name "TMA loads onto the even CTA's mbarrier" "$ptx" "cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes\.cta_group::2"
  check $name "arrivals on the even CTA's mbarriers" "$ptx" "mbarrier\.arrive\.release\.cluster\.shared::cluster\.b64"
  check $name "softmax warpgroups: 192 registers" "$ptx" "setmaxnreg\.inc\.sync\.aligned\.u32[[:space:]]+192;"
  check_not $name "no wgmma" "$ptx" "wgmma"
  "$TILEC" --arch=sm_100a -D D=128 -D CTAS=2 $defs --emit=meta -o "$tmp/$name.meta" "$J100"
  check $name "metadata: 512 TMEM columns" "$tmp/$name.meta" "^tmem 512\$"
  check $name "metadata: clusters of two" "$tmp/$name.meta" "^cluster 2 1 1\$"
  if [ -x "$PTXAS" ] && assemble $name sm_100a "$ptx"; then
    check $name "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
    check $name "ptxas: no stack frame" "$tmp/ptxas.log" "0 bytes stack frame"
  fi
done
n=$((n+1))
if "$TILEC" --arch=sm_100a -D D=64 -D CTAS=2 --emit=ptx -o "$tmp/pair64.ptx" "$J100" 2> "$tmp/err" ||
   ! grep -q "the CTA pair at head dim 128" "$tmp/err"; then
  echo "FAIL jfa_fwd_sm100.pair.d64: expected the head-dim-128 diagnostic"; cat "$tmp/err"; fail=$((fail+1))
else
  echo "ok   jfa_fwd_sm100.pair.d64: refused (the CTA pair at head dim 128)"
fi
# The CTA pair's JFA backward (jfa_bwd_sm100_pair.tile, head dim 128;
# docs/blackwell.md "The JFA backward on the CTA pair"): clusters of two;
# every tcgen05 the pair's (no ::1 form); S^T, dP^T and dQ from shared
# memory, dV and dK with A from tensor memory; dQ with the M = 128
# instruction descriptor (0x08210490: bf16, B N-major, N 128, M 128); dS
# sent to the peer by one bulk copy into its shared memory; commits
# multicast; TMA loads completing on the even CTA's mbarrier; 12 warps with
# their budgets (144, 112, 232); 512 TMEM columns; ptxas: no spills, no
# stack frame. The deterministic build's dQ counters.
JBP=examples/jagged_attention/jfa_bwd_sm100_pair.tile
for v in self causal bcast; do
  name=jfa_bwd_sm100_pair.$v; ptx=$tmp/$name.ptx
  defs=; [ $v = causal ] && defs="-D CAUSAL=true"; [ $v = bcast ] && defs="-D BCAST=true"
  n=$((n+1))
  if ! "$TILEC" --arch=sm_100a -D D=128 $defs --emit=ptx -o "$ptx" "$JBP" 2> "$tmp/err"; then
    echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
  fi
  check $name "clusters of two CTAs" "$ptx" "^\.reqnctapercluster 2, 1, 1\$"
  check $name "S^T, dP^T, dQ: the pair's tcgen05.mma from shared memory" "$ptx" \
    "tcgen05\.mma\.cta_group::2\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], %rd[0-9]+, %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
  check $name "dV, dK: the pair's tcgen05.mma with A from tensor memory" "$ptx" \
    "tcgen05\.mma\.cta_group::2\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], \[%r[0-9]+\], %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
  check $name "dQ: the M = 128 instruction descriptor" "$ptx" "mov\.b32[[:space:]]+%r[0-9]+, 136381584;"
  check_not $name "no one-CTA tcgen05" "$ptx" "cta_group::1"
  check $name "dS sent to the peer: a bulk copy into its shared memory" "$ptx" \
    "cp\.async\.bulk\.shared::cluster\.shared::cta\.mbarrier::complete_tx::bytes \[%r[0-9]+\], \[%r[0-9]+\], %r[0-9]+, \[%r[0-9]+\];"
  check $name "commits multicast to both CTAs" "$ptx" \
    "tcgen05\.commit\.cta_group::2\.mbarrier::arrive::one\.shared::cluster\.multicast::cluster\.b64"
  check $name "TMA loads onto the even CTA's mbarrier" "$ptx" "cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes\.cta_group::2"
  check $name "dQ added by TMA reduce-add" "$ptx" "cp\.reduce\.async\.bulk\.tensor\.2d\.global\.shared::cta\.add"
  check $name "compute warpgroup: 232 registers" "$ptx" "setmaxnreg\.inc\.sync\.aligned\.u32[[:space:]]+232;"
  check $name "load and MMA warps: 56 registers (descriptors made at the issue)" "$ptx" \
    "setmaxnreg\.dec\.sync\.aligned\.u32[[:space:]]+56;"
  check_not $name "descriptors in registers, no %rd+imm operand" "$ptx" "tcgen05\.mma[^;]*%rd[0-9]+\+"
  check_not $name "no wgmma" "$ptx" "wgmma"
  "$TILEC" --arch=sm_100a -D D=128 $defs --emit=meta -o "$tmp/$name.meta" "$JBP"
  check $name "metadata: 512 TMEM columns" "$tmp/$name.meta" "^tmem 512\$"
  check $name "metadata: 12 warps" "$tmp/$name.meta" "^threads 384\$"
  if [ -x "$PTXAS" ] && assemble $name sm_100a "$ptx"; then
    check $name "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
    check $name "ptxas: no stack frame" "$tmp/ptxas.log" "0 bytes stack frame"
  fi
done
name=jfa_bwd_sm100_pair.self.det; ptx=$tmp/$name.ptx
n=$((n+1))
if ! "$TILEC" --arch=sm_100a -D D=128 -D DET=true --emit=ptx -o "$ptx" "$JBP" 2> "$tmp/err"; then
  echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
else
  check $name "dQ blocks in rank order: the counter waited for (acquire)" "$ptx" "ld\.acquire\.gpu\.global\.b32"
  check $name "and passed on (release) after the adds are flushed" "$ptx" "st\.release\.gpu\.global\.b32"
  check $name "the flush" "$ptx" "cp\.async\.bulk\.wait_group 0;"
fi
# The JFA backward for Blackwell (jfa_bwd_sm100.tile; docs/blackwell.md "The
# JFA backward"), each head dim and variant the library loads, deterministic
# or not: S^T = K Q^T, dP^T = V dO^T and dQ = dS K from shared memory, dV +=
# P^T dO and dK += dS^T Q with A from tensor memory, committed to
# mbarriers; S^T and dP^T read 64 columns a thread, P^T and dS^T written
# back (bf16 pairs: 32 columns), dQ read by the dq warps (D columns of lanes
# 64-127), dK and dV 32 columns at a time; dQ added by TMA reduce-add; no
# wgmma; a register budget per warpgroup (load, MMA and dq warps 184, the
# compute warpgroup 240); the items taken by a counter (DYN) but in
# deterministic mode; the metadata's TMEM columns (128 + 3 D, rounded
# up to a power of two: 512); ptxas: no spills, no stack frame.
JB100=examples/jagged_attention/jfa_bwd_sm100.tile
for d in 64 128; do
  for v in self causal bcast self.det; do
    name=jfa_bwd_sm100.d$d.$v; ptx=$tmp/$name.ptx
    defs=; [ $v = causal ] && defs="-D CAUSAL=true"; [ $v = bcast ] && defs="-D BCAST=true"
    [ $v = self.det ] && defs="-D DET=true"
    n=$((n+1))
    if ! "$TILEC" --arch=sm_100a -D D=$d $defs --emit=ptx -o "$ptx" "$JB100" 2> "$tmp/err"; then
      echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
    fi
    check $name "target" "$ptx" "^\.target sm_100a\$"
    check $name "S^T, dP^T, dQ: tcgen05.mma from shared memory" "$ptx" \
      "tcgen05\.mma\.cta_group::1\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], %rd[0-9]+, %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
    check $name "dV, dK: tcgen05.mma with A from tensor memory" "$ptx" \
      "tcgen05\.mma\.cta_group::1\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], \[%r[0-9]+\], %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
    check $name "MMAs committed to mbarriers" "$ptx" "tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one\.shared::cluster\.b64"
    check $name "S^T and dP^T read a key a thread (64 columns)" "$ptx" "tcgen05\.ld\.sync\.aligned\.32x32b\.x64\.b32"
    check $name "dQ read by the dq warps ($d columns)" "$ptx" "tcgen05\.ld\.sync\.aligned\.32x32b\.x$d\.b32"
    check $name "dK and dV read 32 columns at a time" "$ptx" "tcgen05\.ld\.sync\.aligned\.32x32b\.x32\.b32"
    check $name "P^T and dS^T written back (bf16 pairs, 32 columns)" "$ptx" "tcgen05\.st\.sync\.aligned\.32x32b\.x32\.b32"
    check $name "fences after thread syncs" "$ptx" "tcgen05\.fence::after_thread_sync;"
    check $name "TMA loads" "$ptx" "cp\.async\.bulk\.tensor\.2d\.shared::cta\.global"
    check $name "dQ added by TMA reduce-add" "$ptx" "cp\.reduce\.async\.bulk\.tensor\.2d\.global\.shared::cta\.add"
    check $name "load, MMA and dq warps: 184 registers" "$ptx" "setmaxnreg\.dec\.sync\.aligned\.u32[[:space:]]+184;"
    check $name "compute warpgroup: 240 registers" "$ptx" "setmaxnreg\.(dec|inc)\.sync\.aligned\.u32[[:space:]]+240;"
    check_not $name "no wgmma" "$ptx" "wgmma"
    if [ $v = self.det ]; then check_not $name "its own list (no counter)" "$ptx" "atom\.acq_rel\.gpu\.global\.add\.u32"
    else check $name "items taken by a counter (DYN)" "$ptx" "atom\.acq_rel\.gpu\.global\.add\.u32"; fi
    "$TILEC" --arch=sm_100a -D D=$d $defs --emit=meta -o "$tmp/$name.meta" "$JB100"
    check $name "metadata: 512 TMEM columns" "$tmp/$name.meta" "^tmem 512\$"
    # two S^T and dP^T buffers at D = 64 (4 x 64 + 3 x 64 = 448 columns), one at 128 (2 x 64 + 3 x 128 = 512)
    "$TILEC" --arch=sm_100a -D D=$d $defs --stats -o "$tmp/$name.cubin" "$JB100" 2> "$tmp/$name.stats"
    check $name "TMEM: S^T and dP^T buffers for D = $d" "$tmp/$name.stats" \
      "tensor memory: $([ $d = 64 ] && echo 448 || echo 512) of 512 columns"
    if [ -x "$PTXAS" ] && assemble $name sm_100a "$ptx"; then
      check $name "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
      check $name "ptxas: no stack frame" "$tmp/ptxas.log" "0 bytes stack frame"
    fi
  done
done
# The 2-CTA Blackwell GEMM (examples/gemm/gemm_sm100_2cta.tile): a CTA
# pair's tensor memory and MMAs (.cta_group::2 throughout: ptxas refuses a
# kernel mixing ::1 and ::2), in clusters of 2 (.reqnctapercluster); the
# pair's MMA issued with the M = 256 instruction descriptor; its commits
# multicast to both CTAs' mbarriers; both CTAs' TMA loads completing on the
# even CTA's mbarrier (.cta_group::2, mapa to the even rank); the
# epilogues' arrivals on the even CTA's mbarriers through mapa; the cluster
# barriers around allocation and dealloc; no wgmma; ptxas: no spills, no
# stack frame. Then its -D PAIRS=2 build: clusters of 4, A's loads
# multicast (.multicast::cluster with .cta_group::2 and a 16-bit mask).
G2=examples/gemm/gemm_sm100_2cta.tile
ptx=$tmp/gemm_sm100_2cta.ptx
n=$((n+1))
if ! "$TILEC" --arch=sm_100a --emit=ptx -o "$ptx" "$G2" 2> "$tmp/err"; then
  echo "FAIL gemm_sm100_2cta: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
else
  name=gemm_sm100_2cta
  check $name "clusters of 2" "$ptx" "^\.reqnctapercluster 2, 1, 1\$"
  check $name "the pair's TMEM allocated" "$ptx" "tcgen05\.alloc\.cta_group::2\.sync\.aligned\.shared::cta\.b32"
  check $name "the pair's right to allocate given up" "$ptx" "tcgen05\.relinquish_alloc_permit\.cta_group::2\.sync\.aligned;"
  check $name "the pair's TMEM freed" "$ptx" "tcgen05\.dealloc\.cta_group::2\.sync\.aligned\.b32"
  check $name "the pair's MMA" "$ptx" \
    "tcgen05\.mma\.cta_group::2\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], %rd[0-9]+, %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
  check $name "commits multicast to both CTAs" "$ptx" \
    "tcgen05\.commit\.cta_group::2\.mbarrier::arrive::one\.shared::cluster\.multicast::cluster\.b64"
  check $name "the instruction descriptor (bf16, f32, M 256, N 256, K-major)" "$ptx" "mov\.b32[[:space:]]+%r[0-9]+, 272630928;"
  check $name "the issuer: the even CTA's elected thread" "$ptx" "mov\.u32[[:space:]]+%r[0-9]+, %cluster_ctarank;"
  check $name "arrivals on the even CTA's mbarriers" "$ptx" "mapa\.shared::cluster\.u32"
  check $name "TMA loads completing on the pair's mbarrier" "$ptx" \
    "cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes\.cta_group::2 \[%rd[0-9]+\], \[%rd[0-9]+, \{%r[0-9]+, %r[0-9]+\}\], \[%rd[0-9]+\];"
  check_not $name "no TMA load of one CTA's (.shared::cta)" "$ptx" "cp\.async\.bulk\.tensor\.2d\.shared::cta\.global"
  check_not $name "no multicast (one pair)" "$ptx" "multicast::cluster\.cta_group::2 \["
  check $name "... released at cluster scope" "$ptx" "mbarrier\.arrive\.release\.cluster\.shared::cluster\.b64 _"
  check $name "cluster barriers (allocation, dealloc)" "$ptx" "barrier\.cluster\.wait\.acquire\.aligned;"
  check $name "the accumulator read 64 columns at a time" "$ptx" "tcgen05\.ld\.sync\.aligned\.32x32b\.x64\.b32"
  check_not $name "no .cta_group::1" "$ptx" "cta_group::1"
  check_not $name "no wgmma" "$ptx" "wgmma"
  "$TILEC" --arch=sm_100a --emit=meta -o "$tmp/gemm_sm100_2cta.meta" "$G2"
  check $name "metadata: all 512 TMEM columns" "$tmp/gemm_sm100_2cta.meta" "^tmem 512\$"
  check $name "metadata: clusters of 2" "$tmp/gemm_sm100_2cta.meta" "^cluster 2 1 1\$"
  if [ -x "$PTXAS" ] && assemble $name sm_100a "$ptx"; then
    check $name "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
    check $name "ptxas: no stack frame" "$tmp/ptxas.log" "0 bytes stack frame"
  fi
fi
ptx=$tmp/gemm_sm100_2cta_mc.ptx
n=$((n+1))
if ! "$TILEC" --arch=sm_100a -D PAIRS=2 --emit=ptx -o "$ptx" "$G2" 2> "$tmp/err"; then
  echo "FAIL gemm_sm100_2cta_mc: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
else
  name=gemm_sm100_2cta_mc
  check $name "clusters of 4" "$ptx" "^\.reqnctapercluster 4, 1, 1\$"
  check $name "A multicast, completing on the pairs' mbarriers" "$ptx" \
    "cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes\.multicast::cluster\.cta_group::2 \[%rd[0-9]+\], \[%rd[0-9]+, \{%r[0-9]+, %r[0-9]+\}\], \[%rd[0-9]+\], %rs[0-9]+;"
  check $name "B completing on the pair's mbarrier" "$ptx" \
    "cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes\.cta_group::2 \[%rd[0-9]+\], \[%rd[0-9]+, \{%r[0-9]+, %r[0-9]+\}\], \[%rd[0-9]+\];"
  check $name "the pair's MMA" "$ptx" "tcgen05\.mma\.cta_group::2\.kind::f16"
  check_not $name "no .cta_group::1" "$ptx" "cta_group::1"
  "$TILEC" --arch=sm_100a -D PAIRS=2 --emit=meta -o "$tmp/gemm_sm100_2cta_mc.meta" "$G2"
  check $name "metadata: clusters of 4" "$tmp/gemm_sm100_2cta_mc.meta" "^cluster 4 1 1\$"
  check $name "metadata: all 512 TMEM columns" "$tmp/gemm_sm100_2cta_mc.meta" "^tmem 512\$"
  if [ -x "$PTXAS" ] && assemble $name sm_100a "$ptx"; then
    check $name "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
    check $name "ptxas: no stack frame" "$tmp/ptxas.log" "0 bytes stack frame"
  fi
fi
# TMA multicast on Hopper (tma_load(..., multicast = mask) without cta = r):
# .multicast::cluster with the mask, no .cta_group; ptxas assembles it.
ptx=$tmp/tma_mcast_sm90.ptx
n=$((n+1))
cat > "$tmp/tma_mcast.tile" <<'EOF_T'
kernel k(a: tma<bf16, [128, 64]>) warps(4) cluster(2) {
    let a_s = smem(bf16, [128, 64], buffers = 1);
    let full = mbarrier(1, arrive = 1);
    barrier_expect(full[0], 16384);
    if cluster_rank() == 0 { tma_load(a, [0, 0], a_s[0], full[0], multicast = 3); }
    barrier_wait(full[0], 0);
}
EOF_T
if ! "$TILEC" --arch=sm_90a --emit=ptx -o "$ptx" "$tmp/tma_mcast.tile" 2> "$tmp/err"; then
  echo "FAIL tma_mcast_sm90: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
else
  name=tma_mcast_sm90
  check $name "multicast TMA load" "$ptx" \
    "cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes\.multicast::cluster \[%rd[0-9]+\], \[%rd[0-9]+, \{%r[0-9]+, %r[0-9]+\}\], \[[a-z_%0-9+]+\], %rs[0-9]+;"
  check_not $name "no .cta_group on Hopper" "$ptx" "cta_group"
  [ -x "$PTXAS" ] && assemble $name sm_90a "$ptx"
fi
# Jagged Flash Attention (examples/jagged_attention): each variant for
# sm_90a uses the Hopper machinery it is written around and the fast
# softmax code; on sm_100a its register accumulators are refused with a
# diagnostic (tcgen05 keeps them in tensor memory: the Blackwell kernel is
# still to come).
J=examples/jagged_attention/jfa_fwd.tile
for v in "64 self" "64 causal" "64 bcast" "128 self" "128 causal" "128 bcast"; do
  set -- $v
  # the shipped build flags (mk/examples.mk jfa_pipe)
  d=$1; kind=$2; defs="-D D=$d $(${MAKE:-make} -s --no-print-directory jfa-flags D=$d)"
  [ $kind = causal ] && defs="$defs -D CAUSAL=true"
  [ $kind = bcast ] && defs="$defs -D BCAST=true"
  ptx=$tmp/jfa.d$d.$kind.ptx
  jfa_ptx jfa.d$d.$kind "$ptx" $defs || continue
  name=jfa.d$d.$kind
  check "$name" "wgmma" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16"
  check "$name" "P from registers (wgmma with A words)" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n$d""k16\.f32\.bf16\.bf16 \{"
  check "$name" "TMA loads" "$ptx" "cp\.async\.bulk\.tensor\.2d"
  check "$name" "mbarrier waits" "$ptx" "mbarrier\.try_wait\.parity"
  check "$name" "register budgets per task" "$ptx" "setmaxnreg\.(inc|dec)\.sync\.aligned\.u32"
  check "$name" "ping-pong named barriers (non-aligned)" "$ptx" "barrier\.arrive"
  check "$name" "ftz exp2" "$ptx" "ex2\.approx\.ftz\.f32"
  check "$name" "fused multiply-adds in the softmax" "$ptx" "fma\.rn\.f32"
  check "$name" "paired bf16 conversion of P" "$ptx" "cvt\.rn\.bf16x2\.f32"
  check "$name" "O by TMA store" "$ptx" "cp\.async\.bulk\.tensor\.2d\.global\.shared::cta\.bulk_group"
  check "$name" "the TMA store waited for before its buffer is reused" "$ptx" "cp\.async\.bulk\.wait_group\.read 0"
  if [ -x "$PTXAS" ] && assemble "$name" sm_90a "$ptx"; then
      # no spills (since the warp index is known warp-uniform: before, the
      # per-tile set-up at D = 128 spilled 16-40 bytes)
      sp=$(sed -n 's/.* \([0-9][0-9]*\) bytes spill stores.*/\1/p' "$tmp/ptxas.log" | head -n 1)
      n=$((n+1))
      if [ "${sp:-999}" -gt 0 ]; then echo "FAIL $name: ptxas spills ${sp:-?} bytes"; fail=$((fail+1)); fi
      wgmma_async "$name"
  fi
done
# the attention variants (variants/*.tile, issue 17): the same pipeline
# (asynchronous wgmmas, TMA, no spills); the window masks its head and
# tail blocks, the soft-cap runs tanh.approx on every score; block-sparse
# reads its mask as words of 32 blocks' bits (jfa_variant.tile visit_next),
# in both kernels (forward and backward), and no variant reads bytes
for v in "window 64" "window 128" "softcap 64" "softcap 128" "alibi 64" "alibi 128" "prefix_lm 64" "prefix_lm 128" \
         "blocksparse 64" "blocksparse 128"; do
  set -- $v
  name=jfa.variant.$1.d$2
  ptx=$tmp/$name.ptx
  fl=""; [ $2 = 64 ] && fl=--tree-reductions
  if ! "$TILEC" -D D=$2 $fl --emit=ptx -o "$ptx" examples/jagged_attention/variants/$1.tile 2> "$tmp/err"; then
    echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
  fi
  check "$name" "S and P V by wgmma" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16"
  check "$name" "TMA loads" "$ptx" "cp\.async\.bulk\.tensor\.2d"
  check "$name" "the variant's arguments read from vparams" "$ptx" "ld\.param\.b64.*jfa_fwd_param_16"
  if [ $1 = softcap ]; then check "$name" "tanh.approx on the scores" "$ptx" "tanh\.approx\.f32"
  else check_not "$name" "no tanh" "$ptx" "tanh\.approx"; fi
  check_not "$name" "no byte loads (block-sparse reads its mask as words of bits)" "$ptx" "ld\.global\.b8"
  if [ $1 = blocksparse ]; then check "$name" "the mask's words tested by a shift" "$ptx" \
    "sh[rl]\.[bu]32[[:space:]]+%r[0-9]+, %r[0-9]+, %r[0-9]+;"
  else check_not "$name" "no variable shifts (no block mask)" "$ptx" "sh[rl]\.[bu]32[[:space:]]+%r[0-9]+, %r[0-9]+, %r[0-9]+;"; fi
  if [ -x "$PTXAS" ] && assemble "$name" sm_90a "$ptx"; then
    check "$name" "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
    wgmma_async "$name"
  fi
done
# the same variant files for Blackwell (--arch=sm_100a: their
# jfa_kernels.tile import takes jfa_fwd_sm100.tile): tcgen05.mma with S
# and P in tensor memory, no wgmma (none of Hopper's kernels came along),
# the variant's hooks as above; ptxas: no spills, no stack frame, in any
# of the cubin's kernels (jfa_fwd, jfa_bwd). ALiBi spilled 20 bytes in the
# 88-register correction warps and block-sparse at D = 128 12 bytes in the
# 24-register load warp until their budgets became 96 and 32 (the softmax
# warpgroups 192; docs/blackwell.md)
for v in "window 64" "window 128" "softcap 64" "softcap 128" "alibi 64" "alibi 128" "prefix_lm 64" "prefix_lm 128" \
         "blocksparse 64" "blocksparse 128"; do
  set -- $v
  name=jfa.variant.$1.d$2.sm_100a
  ptx=$tmp/$name.ptx
  n=$((n+1))
  if ! "$TILEC" --arch=sm_100a -D D=$2 --emit=ptx -o "$ptx" examples/jagged_attention/variants/$1.tile 2> "$tmp/err"; then
    echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
  fi
  check "$name" "target" "$ptx" "^\.target sm_100a\$"
  check "$name" "S = Q K^T: tcgen05.mma from shared memory" "$ptx" \
    "tcgen05\.mma\.cta_group::1\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], %rd[0-9]+, %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
  check "$name" "O += P V: tcgen05.mma with P from tensor memory" "$ptx" \
    "tcgen05\.mma\.cta_group::1\.kind::f16(\.collector::a::discard)? \[%r[0-9]+\], \[%r[0-9]+\], %rd[0-9]+, %r[0-9]+, %p[0-9]+;"
  check "$name" "MMAs committed to mbarriers" "$ptx" "tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one\.shared::cluster\.b64"
  check_not "$name" "no wgmma" "$ptx" "wgmma"
  check "$name" "TMA loads" "$ptx" "cp\.async\.bulk\.tensor\.2d"
  check "$name" "the variant's arguments read from vparams" "$ptx" "ld\.param\.b64.*jfa_fwd_param_16"
  if [ $1 = softcap ]; then check "$name" "tanh.approx on the scores" "$ptx" "tanh\.approx\.f32"
  else check_not "$name" "no tanh" "$ptx" "tanh\.approx"; fi
  check_not "$name" "no byte loads (block-sparse reads its mask as words of bits)" "$ptx" "ld\.global\.b8"
  if [ $1 = blocksparse ]; then check "$name" "the mask's words tested by a shift" "$ptx" \
    "sh[rl]\.[bu]32[[:space:]]+%r[0-9]+, %r[0-9]+, %r[0-9]+;"
  else check_not "$name" "no variable shifts (no block mask)" "$ptx" "sh[rl]\.[bu]32[[:space:]]+%r[0-9]+, %r[0-9]+, %r[0-9]+;"; fi
  if [ -x "$PTXAS" ] && assemble "$name" sm_100a "$ptx"; then
    check_not "$name" "ptxas: no spills in any of its kernels" "$tmp/ptxas.log" "[1-9][0-9]* bytes spill"
    check_not "$name" "ptxas: no stack frame in any of its kernels" "$tmp/ptxas.log" "[1-9][0-9]* bytes stack frame"
  fi
done
# the merge kernel of split tiles (jfa_combine.tile): plain loads, stores
# and exp2, so it builds for both targets; ptxas: no spills
for arch in sm_90a sm_100a; do
  for v in "64 false" "128 false" "128 true"; do
    set -- $v
    name=jfa_combine.d$1.bcast_$2.$arch
    ptx=$tmp/$name.ptx
    if ! "$TILEC" --arch=$arch -D D=$1 -D BCAST=$2 --emit=ptx -o "$ptx" examples/jagged_attention/jfa_combine.tile 2> "$tmp/err"; then
      echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
    fi
    check "$name" "target" "$ptx" "^\.target $arch\$"
    check "$name" "kernel entry" "$ptx" "\.visible \.entry jfa_combine\("
    check "$name" "fast exp2 of the slot weights" "$ptx" "ex2\.approx"
    check "$name" "bf16 output" "$ptx" "cvt\.rn\.bf16x2\.f32"
    if [ -x "$PTXAS" ] && assemble "$name" $arch "$ptx"; then
      check "$name" "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
    fi
  done
done
# mma_wait(n, acc, release = bar): the elected mbarrier arrival comes right
# after wgmma.wait_group, before the accumulator is read
n=$((n+1))
if ! "$TILEC" --emit=ptx -o "$tmp/rel.ptx" tests/golden/ir/mma_wait_release.tile 2> "$tmp/err"; then
  echo "FAIL mma_wait_release: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
else
  w=$(grep -n "wgmma.wait_group" "$tmp/rel.ptx" | head -n 1 | cut -d: -f1)
  a=$(grep -n "mbarrier.arrive" "$tmp/rel.ptx" | head -n 1 | cut -d: -f1)
  if [ -z "$w" ] || [ -z "$a" ] || [ "$a" -lt "$w" ]; then
    echo "FAIL mma_wait_release: no mbarrier.arrive after wgmma.wait_group (wait line ${w:-none}, arrive line ${a:-none})"
    fail=$((fail+1))
  fi
fi
# exp2(x, fma_every = 4): one register in four through the FMA-pipe
# polynomial (round, five fma, exponent add), the rest ex2.approx
n=$((n+1))
if ! "$TILEC" --emit=ptx -o "$tmp/fma.ptx" tests/golden/ir/exp2_fma_every.tile 2> "$tmp/err"; then
  echo "FAIL exp2_fma_every: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
else
  ne=$(grep -c "ex2\.approx" "$tmp/fma.ptx"); nr=$(grep -c "cvt\.rni\.f32\.f32" "$tmp/fma.ptx"); nf=$(grep -c "fma\.rn\.f32" "$tmp/fma.ptx")
  # 1024 elements over 128 threads: 8 registers each, 2 on the FMA pipe
  [ "$ne" = 6 ] && [ "$nr" = 2 ] && [ "$nf" -ge 10 ] || {
    echo "FAIL exp2_fma_every: $ne ex2.approx (want 6), $nr cvt.rni (want 2), $nf fma (want >= 10)"; fail=$((fail+1)); }
fi
# Triton's fused-attention tutorial (examples/fused_attention, issue 10), as
# mk/tutorials.mk builds it at head dims 64 and 128: on sm_90a every
# kernel's dots in loops run on wgmma (pipeline_multi.c: the forward's two,
# the backward's three and four a loop, with P and dS as A from registers:
# the dots of N = the head dim, A four words), fed by TMA in the forward
# (cp.async with --no-tma-rings, below) and cp.async in the backward; ptxas keeps
# the wgmmas asynchronous, and no kernel spills (at head dim 128 too: the
# backward's 128-row blocks on two warpgroups). On sm_100a the dots stay on
# mma.sync.
FA=examples/fused_attention/fused_attention.tile
fa_kernel() { # fa_kernel PTX NAME: the PTX of one entry, to stdout
  awk -v k="$2(" '/^\.visible \.entry/{on=index($0, ".entry " k)>0} on' "$1"
}
for v in "sm_90a false f16 64" "sm_90a true bf16 64" "sm_100a true f16 64" "sm_90a false bf16 128" "sm_90a true f16 128"; do
  set -- $v
  arch=$1 hd=$4; name=fused_attention.d$hd.$([ $2 = true ] && echo causal || echo full).$3.$arch; ptx=$tmp/$name.ptx
  n=$((n+1))
  regs=; [ $arch.$hd.$2 = sm_90a.64.true ] && regs="-D REGS=128" # as mk/tutorials.mk
  if ! "$TILEC" --arch=$arch -D HEAD_DIM=$hd -D CAUSAL=$2 -D T=$3 $regs --emit=ptx -o "$ptx" "$FA" 2> "$tmp/err"; then
    echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
  fi
  if [ $arch = sm_100a ]; then
    check_not "$name" "no wgmma on sm_100a" "$ptx" "wgmma"
    check "$name" "dots on mma.sync" "$ptx" "mma\.sync\.aligned\.m16n8k16"
    if [ -x "$PTXAS" ] && assemble "$name" sm_100a "$ptx"; then :; fi
    continue
  fi
  for k in attn_fwd attn_bwd_dkdv attn_bwd_dq attn_bwd; do
    fa_kernel "$ptx" $k > "$tmp/$name.$k.ptx"
    check "$name.$k" "wgmma" "$tmp/$name.$k.ptx" "wgmma\.mma_async\.sync\.aligned\.m64n(32|64|128)k16\.f32\.$3\.$3"
    check "$name.$k" "P (dS) from registers: wgmma with A words" "$tmp/$name.$k.ptx" \
      "wgmma\.mma_async\.sync\.aligned\.m64n${hd}k16\.f32\.$3\.$3 \{.*\}, \{%r[0-9]+, %r[0-9]+, %r[0-9]+, %r[0-9]+\}, %rd"
    if [ $k = attn_fwd ]; then
      # the forward's rings by TMA (pipeline_multi.c): the unmasked loop's
      # tiles as rows of a 2-D tensor, the masked one's as planes of a 3-D one
      check "$name.$k" "rings filled by TMA" "$tmp/$name.$k.ptx" "cp\.async\.bulk\.tensor\.2d\.shared::cta\.global"
      check "$name.$k" "masked loop's tiles in planes" "$tmp/$name.$k.ptx" "cp\.async\.bulk\.tensor\.3d\.shared::cta\.global"
      check_not "$name.$k" "no cp.async left" "$tmp/$name.$k.ptx" "cp\.async\.cg"
    else # the backward's loops of three and four dots: cp.async
      check "$name.$k" "operands copied by cp.async" "$tmp/$name.$k.ptx" "cp\.async\.cg\.shared\.global"
    fi
    check_not "$name.$k" "no dot left on mma.sync (the partial blocks are loops too)" "$tmp/$name.$k.ptx" "mma\.sync"
    # O, dQ, dK, dV: the wgmma results stored 16 bytes a thread (passes.c's
    # wide_store, lower_ops.c's warp_swap), not from the accumulator's pairs
    check "$name.$k" "results stored 16 bytes a thread" "$tmp/$name.$k.ptx" "st\.global\.v4\.b32"
    [ $k = attn_fwd ] || check_not "$name.$k" "no 4-byte result stores" "$tmp/$name.$k.ptx" "st\.global\.b32"
  done
  # dK/dV: S^T, dV, dP^T, dK; dQ: S, dP, dQ; m64nNk16 steps of K = the head
  # dim, 32 (BM1) or BN2 = 4096 / the head dim; two loops each (the blocks,
  # the partial block)
  nk=$(grep -c "wgmma\.mma_async" "$tmp/$name.attn_bwd_dkdv.ptx"); nq=$(grep -c "wgmma\.mma_async" "$tmp/$name.attn_bwd_dq.ptx")
  wk=$((2 * (2 * hd / 16 + 2 * 32 / 16))) wq=$((2 * (2 * hd / 16 + 4096 / hd / 16)))
  n=$((n+1))
  [ $2 = false ] && [ "$nk" != $wk -o "$nq" != $wq ] && {
    echo "FAIL $name: $nk wgmma in attn_bwd_dkdv (want $wk), $nq in attn_bwd_dq (want $wq)"; fail=$((fail+1)); }
  if [ -x "$PTXAS" ] && assemble "$name" sm_90a "$ptx"; then
    wgmma_async "$name"
    for k in attn_fwd attn_bwd_dkdv attn_bwd_dq attn_bwd; do
      n=$((n+1))
      sp=$(sed -n "/Function properties for $k\$/{n;s/.* \([0-9][0-9]*\) bytes spill stores.*/\1/p;}" "$tmp/ptxas.log")
      [ "${sp:-999}" = 0 ] || { echo "FAIL $name.$k: ptxas spills ${sp:-?} bytes"; fail=$((fail+1)); }
    done
    # the staged tiles' descriptors made where each wgmma is issued
    # (OPF_FRESH_A/B, lower_hw.c): hoisted, they took the dQ kernel at head
    # dim 128 to 142 registers, one program an SM instead of two
    n=$((n+1))
    nr=$(sed -n "/Function properties for attn_bwd_dq\$/,/Used/{s/.*Used \([0-9][0-9]*\) registers.*/\1/p;}" "$tmp/ptxas.log")
    [ "${nr:-999}" -le 128 ] || { echo "FAIL $name.attn_bwd_dq: ${nr:-?} registers (want <= 128: two programs an SM)"; fail=$((fail+1)); }
    check "$name.attn_bwd_dq" "a staged tile's descriptor made at its wgmma" "$tmp/$name.attn_bwd_dq.ptx" "^[[:space:]]*mov\.b64 %rd[0-9]+, %rd[0-9]+;"
    # REGS = 128 (the causal dK/dV at head dim 64): two programs of 8 warps an
    # SM; REGS = 0 (the default): no cap in the PTX
    n=$((n+1))
    nr=$(sed -n "/Function properties for attn_bwd_dkdv\$/,/Used/{s/.*Used \([0-9][0-9]*\) registers.*/\1/p;}" "$tmp/ptxas.log")
    fa_kernel "$ptx" attn_bwd_dkdv > "$tmp/$name.dkdv.ptx"
    if [ -n "$regs" ]; then
      grep -q "^\.maxnreg 128" "$tmp/$name.dkdv.ptx" && [ "${nr:-999}" -le 128 ] ||
        { echo "FAIL $name.attn_bwd_dkdv: REGS=128 gives ${nr:-?} registers (want <= 128, .maxnreg 128)"; fail=$((fail+1)); }
    elif grep -q "maxnreg" "$tmp/$name.dkdv.ptx"; then
      echo "FAIL $name.attn_bwd_dkdv: .maxnreg without REGS"; fail=$((fail+1))
    fi
  fi
done
# --no-wide-stores (an A/B switch): the results stored from the pairs again
name=fused_attention.d64.full.f16.nowide; ptx=$tmp/$name.ptx
n=$((n+1))
if "$TILEC" --arch=sm_90a -D HEAD_DIM=64 --no-wide-stores --emit=ptx -o "$ptx" "$FA" 2> "$tmp/err"; then
  fa_kernel "$ptx" attn_bwd_dkdv > "$tmp/$name.dkdv.ptx"
  check "$name" "dK, dV stored 4 bytes a thread" "$tmp/$name.dkdv.ptx" "st\.global\.b32"
  check_not "$name" "no 16-byte result stores" "$tmp/$name.dkdv.ptx" "st\.global\.v4\.b32"
else
  echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
fi
# --no-tma-rings (an A/B switch): the same loops fed by cp.async instead
name=fused_attention.d64.full.f16.cpasync; ptx=$tmp/$name.ptx
n=$((n+1))
if "$TILEC" --arch=sm_90a -D HEAD_DIM=64 --no-tma-rings --emit=ptx -o "$ptx" "$FA" 2> "$tmp/err"; then
  check "$name" "operands copied by cp.async" "$ptx" "cp\.async\.cg\.shared\.global"
  check_not "$name" "no TMA" "$ptx" "cp\.async\.bulk\.tensor"
  if [ -x "$PTXAS" ] && assemble "$name" sm_90a "$ptx"; then :; fi
else
  echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
fi
# the math builtins (lower_math.c): each on its PTX instruction, for both
# targets, and ptxas takes them: tanh -> tanh.approx.f32, sin/cos ->
# sin/cos.approx.ftz.f32, rcp -> rcp.approx.ftz.f32, fdiv -> div.full.f32
# (never the IEEE div.rn), erf -> fma polynomials and one ex2.approx.ftz,
# its clamp a NaN-propagating min
for arch in sm_90a sm_100a; do
  name=math_builtins.$arch; ptx=$tmp/$name.ptx
  n=$((n+1))
  if ! "$TILEC" --arch=$arch --emit=ptx -o "$ptx" tests/golden/ir/math_builtins.tile 2> "$tmp/err"; then
    echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
  fi
  check "$name" "tanh" "$ptx" "tanh\.approx\.f32"
  check "$name" "sin" "$ptx" "sin\.approx\.ftz\.f32"
  check "$name" "cos" "$ptx" "cos\.approx\.ftz\.f32"
  check "$name" "rcp" "$ptx" "rcp\.approx\.ftz\.f32"
  check "$name" "fdiv" "$ptx" "div\.full\.f32"
  check_not "$name" "fdiv is not the IEEE division" "$ptx" "div\.rn\.f32"
  check "$name" "erf: ex2 of its polynomial" "$ptx" "ex2\.approx\.ftz\.f32"
  check "$name" "erf: NaN-propagating clamp" "$ptx" "min\.NaN\.f32"
  check "$name" "bf16 widened" "$ptx" "cvt\.f32\.bf16"
  if [ -x "$PTXAS" ] && assemble "$name" $arch "$ptx"; then
    check "$name" "ptxas: no spills" "$tmp/ptxas.log" "0 bytes spill stores, 0 bytes spill loads"
  fi
done
# every inline asm is convergent: a named barrier between two elected
# mbarrier arrivals stays one bar.sync (was copied into the arms of the
# merged elected-thread branches: 18 copies, a hang in JFA's SKIP_IDLE)
n=$((n+1))
if ! "$TILEC" --emit=ptx -o "$tmp/conv.ptx" tests/ptx/convergent_barrier.tile 2> "$tmp/err"; then
  echo "FAIL convergent_barrier: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
else
  nb=$(grep -c "barrier\.sync %r" "$tmp/conv.ptx")
  [ "$nb" = 1 ] || { echo "FAIL convergent_barrier: $nb named bar.sync instructions, want 1"; fail=$((fail+1)); }
  "$TILEC" --emit=llvm -o "$tmp/conv.ll" tests/ptx/convergent_barrier.tile 2> /dev/null
  check convergent_barrier "inline asm calls carry the convergent attribute" "$tmp/conv.ll" "^attributes #[0-9]+ = \{ convergent nounwind \}"
fi

# The backward pass (jfa_bwd.tile): every head dim x variant x mode (and the
# ablations atomic, dsf32, dsbf16): S^T / dP^T / dQ as m64n64 wgmmas, dV and dK
# as wgmmas over the head dim with P^T and dS^T from registers (none with A
# read transposed from shared memory, imm-trans-a 1), dS stored transposed
# by stmatrix.trans, dQ added by TMA reduce-add (at D = 128 by bulk
# reduce-adds, BULK), the packed producer/reducer warpgroup at 24
# registers and the consumers at 240; deterministic mode's counters (acquire
# loads, release stores, the reduce's writes waited for); otherwise the
# items' counter (DYN). ptxas: no
# serialized or fenced-up wgmmas; no spills at D = 64; at D = 128 at most 96
# bytes (the producer's and reducer's per-item scalars at 24 registers; 68
# with GROUP's loop over an item's KV blocks, the A/B build group).
JB=examples/jagged_attention/jfa_bwd.tile
for v in "64 self 0" "64 causal 0" "64 bcast 0" "128 self 0" "128 causal 0" "128 bcast 0" "64 causal 1" "128 bcast 1" "128 causal 1" \
         "128 self 0 atomic" "64 bcast 0 atomic" "128 self 0 dsf32" "64 causal 1 dsbf16"; do
  set -- $v
  d=$1; kind=$2; det=$3; defs="-D D=$d"
  [ $kind = causal ] && defs="$defs -D CAUSAL=true"
  [ $kind = bcast ] && defs="$defs -D BCAST=true"
  [ $det = 1 ] && defs="$defs -D DET=true"
  [ "${4:-}" = atomic ] && defs="$defs -D DQ_ATOMIC=true"
  [ "${4:-}" = dsbf16 ] && defs="$defs -D DS_BF16=true"
  [ "${4:-}" = dsf32 ] && defs="$defs -D DS_BF16=false"
  name=jfa_bwd.d$d.$kind.det$det${4:+.$4}
  ptx=$tmp/$name.ptx
  n=$((n+1))
  if ! "$TILEC" $defs --emit=ptx -o "$ptx" "$JB" 2> "$tmp/err"; then
    echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
  fi
  check "$name" "S^T, dP^T and dQ wgmmas" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.bf16\.bf16"
  check "$name" "dV from register P^T" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n$d""k16\.f32\.bf16\.bf16 \{"
  check_not "$name" "dK's A from registers (none transposed from shared memory)" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n$d""k16\.f32\.bf16\.bf16 .*p, 1, +1, 1, +1;"
  if [ "${4:-}" = atomic ]; then
    check "$name" "dQ by atomics from the registers" "$ptx" "red\\.global\\.add(\\.v[24])?\\.f32"
    check_not "$name" "no dQ reduce-add" "$ptx" "cp\\.reduce\\.async"
  else # BULK (D = 128) and DQT (D = 64): the stage by bulk reduce-adds, no tensor map
    check "$name" "dQ by bulk reduce-add" "$ptx" "cp\.reduce\.async\.bulk\.global\.shared::cta\.bulk_group\.add\.f32"
    check_not "$name" "no dQ TMA reduce-add" "$ptx" "cp\.reduce\.async\.bulk\.tensor"
    # DQT: dQ^T over all 128 keys, 32 query rows a warpgroup (N = 32), K^T read transposed from shared memory
    [ $d = 64 ] && check "$name" "dQ^T by N = 32 wgmmas (DQT)" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n32k16\.f32\.bf16\.bf16 .*p, 1, +1, 1, +0;"
  fi
  check "$name" "producer and reducer at 24 registers" "$ptx" "setmaxnreg\.dec\.sync\.aligned\.u32[[:space:]]+24"
  check "$name" "consumers at 240 registers" "$ptx" "setmaxnreg\.inc\.sync\.aligned\.u32[[:space:]]+240"
  # the warpgroups meet at the dS barrier from different copies of the step
  # (masked, unmasked): a named barrier must not be bar.sync (.aligned)
  [ $d = 128 ] && check "$name" "dS named barrier not aligned" "$ptx" "barrier\.sync %r[0-9]+, %r[0-9]+;"
  check "$name" "dS stored transposed by stmatrix" "$ptx" "stmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16"
  # a partial item's dK and dV (store_grad): 16 bytes a thread, D / 16
  # stores each (and DET_FIN's dQ's, 16-byte too)
  n=$((n+1)); ns=$(grep -c "st\.global\.v4\.b32" "$ptx")
  [ "$ns" -ge $((d / 8)) ] || { echo "FAIL $name: $ns 16-byte dK/dV stores (want at least $((d / 8)))"; fail=$((fail+1)); }
  check_not "$name" "no 4-byte dK/dV stores" "$ptx" "st\.global\.b32"
  check_not "$name" "no element-wise 2-byte stores" "$ptx" "st\.shared\.b16"
  # P^T in bf16 feeds dV's wgmma and is read back as f32 for dS: still one
  # packed conversion per pair (a scalar cvt.rn.bf16.f32 is an F2F in SASS)
  check "$name" "P^T and dS^T converted in pairs" "$ptx" "cvt\.rn\.bf16x2\.f32"
  check_not "$name" "no scalar f32 -> bf16 conversions" "$ptx" "cvt\.rn\.bf16\.f32"
  # DS_BF16 (the default at D = 128): dS = P^T (dP^T - Delta) as a packed
  # bf16 product, P^T never widened
  dsb=0; [ $d = 128 ] && dsb=1
  [ "${4:-}" = dsbf16 ] && dsb=1
  [ "${4:-}" = dsf32 ] && dsb=0
  if [ $dsb = 1 ]; then
    check "$name" "dS by mul.bf16x2" "$ptx" "mul(\.rn)?\.bf16x2"
    check_not "$name" "P^T not widened back to f32" "$ptx" "cvt\.f32\.bf16"
  else
    check_not "$name" "dS in f32 (no bf16 arithmetic)" "$ptx" "mul(\.rn)?\.bf16x2"
  fi
  # the dQ stage's TMA box: 8 columns (32-byte rows, no bank conflicts) at
  # D = 128, 32 at D = 64 (where the reducer needs the wide rows)
  "$TILEC" $defs --emit=meta -o "$tmp/$name.meta" "$JB" 2> /dev/null
  if [ $d = 128 ]; then check "$name" "dQ stage box" "$tmp/$name.meta" "^tmabox dq_acc 64 8 swizzle 32$"
  else check "$name" "dQ stage box" "$tmp/$name.meta" "^tmabox dq_acc 64 32 swizzle 128$"; fi
  if [ $det = 1 ] && [ $d = 128 ] && [ $kind = causal ]; then
    # DET_FIN: the deterministic build where OWN applies is FIN (its dQ sums in one order): the items' counter,
    # the blocks' flags, no turns
    check "$name" "FIN in the metadata (DET_FIN)" "$tmp/$name.meta" "^const FIN bool true$"
    check "$name" "no turns (TURNS off)" "$tmp/$name.meta" "^const TURNS bool false$"
    check "$name" "items taken by a counter (DYN)" "$ptx" "atom\.acq_rel\.gpu\.global\.add\.u32"
    check "$name" "the others wait for the block's flag (acquire)" "$ptx" "ld\.acquire\.gpu\.global\.b32"
    check "$name" "the owner raises it (release)" "$ptx" "st\.release\.gpu\.global\.b32"
    check "$name" "the first KV block loads the others' sum (bulk copy to shared memory)" "$ptx" \
      "cp\.async\.bulk\.shared::cluster\.global"
  elif [ $det = 1 ]; then
    check "$name" "waits for its turn (acquire)" "$ptx" "ld\.acquire\.gpu\.global\.b32"
    check "$name" "hands the turn on (release)" "$ptx" "st\.release\.gpu\.global\.b32"
    check "$name" "the adds are written before the release" "$ptx" "cp\.async\.bulk\.wait_group 0;"
  else
    # DYN: the items taken by an atomic counter
    check "$name" "items taken by a counter (DYN)" "$ptx" "atom\.acq_rel\.gpu\.global\.add\.u32"
    # OWN (causal at D = 128): each dQ block's owner writes it by a bulk copy, flushes and raises its flag
    # (release); the others wait for the flag (acquire). Without it, no other counters.
    if [ $d = 128 ] && [ $kind = causal ] && [ "${4:-}" != atomic ]; then
      check "$name" "OWN in the metadata" "$tmp/$name.meta" "^const OWN bool true$"
      check "$name" "a block's owner writes it by a bulk copy (OWN)" "$ptx" \
        "cp\.async\.bulk\.global\.shared::cta\.bulk_group \["
      check "$name" "the others wait for its flag (acquire)" "$ptx" "ld\.acquire\.gpu\.global\.b32"
      check "$name" "the owner raises it (release)" "$ptx" "st\.release\.gpu\.global\.b32"
      check "$name" "the owner's write is done before the flag" "$ptx" "cp\.async\.bulk\.wait_group 0;"
    else
      check_not "$name" "no counters" "$ptx" "ld\.acquire"
    fi
    # GROUP (self-attention at D = 64): a short sequence's head in one item, each dQ block's first KV block
    # writes it; off at D = 128 (its A/B lost there)
    if [ $d = 128 ] && [ $kind = causal ] && [ "${4:-}" != atomic ]; then
      check_not "$name" "GROUP off" "$tmp/$name.meta" "^const GROUP i32 [1-9]"
    elif [ $d = 64 ] && [ $kind != bcast ] && [ "${4:-}" != atomic ]; then
      check "$name" "GROUP in the metadata" "$tmp/$name.meta" "^const GROUP i32 4$"
      check "$name" "a block's first contribution written by a bulk copy (GROUP)" "$ptx" \
        "cp\.async\.bulk\.global\.shared::cta\.bulk_group \["
    else
      check_not "$name" "no bulk copies (no GROUP)" "$ptx" "cp\.async\.bulk\.global\.shared::cta\.bulk_group \["
    fi
  fi
  if [ -x "$PTXAS" ] && assemble "$name" sm_90a "$ptx"; then
    sp=$(sed -n 's/.* \([0-9][0-9]*\) bytes spill stores.*/\1/p' "$tmp/ptxas.log" | head -n 1)
    lim=0; [ $d = 128 ] && lim=96
    n=$((n+1))
    if [ "${sp:-999}" -gt $lim ]; then echo "FAIL $name: ptxas spills ${sp:-?} bytes (at most $lim)"; fail=$((fail+1)); fi
    check_not "$name" "ptxas keeps the wgmmas asynchronous" "$tmp/ptxas.log" "C7510|C7512|C7514|C7519|C7520|Performance Loss"
  fi
done
# Q80 (self-attention at head dim 128, 80-row query blocks; twenty-second
# session): S^T, dP^T and dQ^T are one wgmma of N = 80 each (pair
# accumulators), dQ^T's A is K^T read transposed from shared memory, dV and
# dK chain over K = 80 from the registers; the metadata says QB = 80 (the
# host picks the workspace layout by it) and the Q-side boxes are 80 rows;
# the producer takes its items with a shuffle, not shared-memory scratch;
# the reducer adds the dQ^T stage with bulk reduce-adds (bulk_store_add);
# ptxas keeps the wgmmas asynchronous and spills at most 128 bytes.
name=jfa_bwd.d128.self.q80; ptx=$tmp/$name.ptx
n=$((n+1))
if "$TILEC" -D D=128 -D Q80=true --emit=ptx -o "$ptx" "$JB" 2> "$tmp/err" &&
   "$TILEC" -D D=128 -D Q80=true --emit=meta -o "$tmp/$name.meta" "$JB" 2> "$tmp/err"; then
  check "$name" "S^T, dP^T, dQ^T as wgmmas of N = 80" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n80k16\.f32\.bf16\.bf16"
  check_not "$name" "no 64-row steps" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n64k16"
  check "$name" "dQ^T's A (K^T) transposed from shared memory" "$ptx" "m64n80k16\.f32\.bf16\.bf16 .*p, 1, +1, 1, +0;"
  check "$name" "dV and dK from registers" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.bf16\.bf16 \{"
  check "$name" "QB = 80 in the metadata" "$tmp/$name.meta" "^const QB i32 80$"
  check "$name" "80-row Q box" "$tmp/$name.meta" "^tmabox q 80 64 swizzle 128$"
  check "$name" "LSE rows of 128" "$tmp/$name.meta" "^tmabox lse2 1 128 swizzle 0$"
  check "$name" "items shuffled to the warp" "$ptx" "shfl\.sync\.idx\.b32"
  check "$name" "dQ^T's stage added in bulk (one instruction a buffer)" "$ptx" \
    "cp\.reduce\.async\.bulk\.global\.shared::cta\.bulk_group\.add\.f32"
  check_not "$name" "no TMA reduce-adds of 32-byte rows" "$ptx" "cp\.reduce\.async\.bulk\.tensor"
  if [ -x "$PTXAS" ] && assemble "$name" sm_90a "$ptx"; then spills_at_most "$name" 128; fi
else
  echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
fi
# Q80 with the causal mask (the A/B build q80c; twenty-third session): 80-row
# steps, ptxas keeps the wgmmas asynchronous, at most 192 bytes of spills
name=jfa_bwd.d128.causal.q80; ptx=$tmp/$name.ptx
n=$((n+1))
if "$TILEC" -D D=128 -D CAUSAL=true -D Q80=true --emit=ptx -o "$ptx" "$JB" 2> "$tmp/err"; then
  check "$name" "S^T, dP^T, dQ^T as wgmmas of N = 80" "$ptx" "wgmma\.mma_async\.sync\.aligned\.m64n80k16\.f32\.bf16\.bf16"
  if [ -x "$PTXAS" ] && assemble "$name" sm_90a "$ptx"; then spills_at_most "$name" 192; fi
else
  echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
fi
# DQ_BULK (BULK, the default at D = 128; forced at D = 64): the 64-row stage
# added by bulk reduce-adds (one at D = 128, the two partials at D = 64), no
# TMA boxes; BULK=false at D = 128 (the A/B build nobulk) back to TMA boxes,
# broadcast-Q's too
for v in "64 true CAUSAL" "128 false CAUSAL" "128 false BCAST"; do
  set -- $v
  d=$1; name=jfa_bwd.d$d.$3.bulk$2; ptx=$tmp/$name.ptx
  n=$((n+1))
  if "$TILEC" -D D=$d -D $3=true -D BULK=$2 --emit=ptx -o "$ptx" "$JB" 2> "$tmp/err"; then
    if [ $2 = true ]; then
      check "$name" "the dQ stage added in bulk" "$ptx" "cp\.reduce\.async\.bulk\.global\.shared::cta\.bulk_group\.add\.f32"
      check_not "$name" "no TMA reduce-adds" "$ptx" "cp\.reduce\.async\.bulk\.tensor"
    else
      check "$name" "the dQ stage by TMA reduce-adds" "$ptx" "cp\.reduce\.async\.bulk\.tensor\.2d\.global\.shared::cta\.add"
      check_not "$name" "no bulk adds" "$ptx" "cp\.reduce\.async\.bulk\.global\.shared::cta\.bulk_group\.add"
    fi
  else
    echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
  fi
done
# and its small kernels: the accumulator (the stage's layout) zeroed and read back
name=jfa_bwd_pre.q80; ptx=$tmp/$name.ptx
n=$((n+1))
if "$TILEC" -D QB=80 --emit=ptx -o "$ptx" examples/jagged_attention/jfa_bwd_pre.tile 2> "$tmp/err"; then
  check "$name" "both kernels" "$ptx" "\.visible \.entry jfa_bwd_post\("
else
  echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
fi
# its small kernels: Delta and the LSE before it, dQ to bf16 after it
for arch in sm_90a sm_100a; do
  for b in false true; do
    name=jfa_bwd_pre.bcast_$b.$arch; ptx=$tmp/$name.ptx
    n=$((n+1))
    if ! "$TILEC" --arch=$arch -D BCAST=$b --emit=ptx -o "$ptx" examples/jagged_attention/jfa_bwd_pre.tile 2> "$tmp/err"; then
      echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
    fi
    check "$name" "both kernels" "$ptx" "\.visible \.entry jfa_bwd_post\("
    check "$name" "16-byte loads of O and dO" "$ptx" "ld\.global(\.nc)?\.v4"
    if [ -x "$PTXAS" ] && assemble "$name" $arch "$ptx"; then
      check "$name" "no spills" "$tmp/ptxas.log" " 0 bytes spill stores"
    fi
  done
done
n=$((n+1))
if "$TILEC" --arch=sm_100a -D D=128 -o "$tmp/jb.cubin" "$JB" 2> "$tmp/err"; then
  echo "FAIL jfa_bwd/sm_100a: expected a diagnostic (register accumulators on sm_100a)"; fail=$((fail+1))
elif ! grep -q "error: the accumulator of mma_async on sm_100a is an f32 tensor-memory view" "$tmp/err"; then
  echo "FAIL jfa_bwd/sm_100a: unexpected diagnostic"; cat "$tmp/err"; fail=$((fail+1))
fi

n=$((n+1))
if "$TILEC" --arch=sm_100a -D D=128 -o "$tmp/j.cubin" "$J" 2> "$tmp/err"; then
  echo "FAIL jfa/sm_100a: expected a diagnostic (register accumulators on sm_100a)"; fail=$((fail+1))
elif ! grep -q "error: the accumulator of mma_async on sm_100a is an f32 tensor-memory view" "$tmp/err"; then
  echo "FAIL jfa/sm_100a: unexpected diagnostic"; cat "$tmp/err"; fail=$((fail+1))
fi

# tilec passes on what ptxas says about lost performance as a warning (a
# stand-in ptxas that reports C7520 and writes an empty cubin)
cat > "$tmp/fake-ptxas" <<'SH'
#!/bin/sh
out=; while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
: > "$out"
echo "ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized due to a test in the function 'k'"
SH
chmod +x "$tmp/fake-ptxas"
n=$((n+1))
if ! "$TILEC" --ptxas="$tmp/fake-ptxas" -o "$tmp/va.cubin" examples/vector_add/vector_add.tile 2> "$tmp/err"; then
  echo "FAIL ptxas warning: tilec failed"; cat "$tmp/err"; fail=$((fail+1))
elif ! grep -q "warning: ptxas: (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized" "$tmp/err"; then
  echo "FAIL ptxas warning: C7520 not reported"; cat "$tmp/err"; fail=$((fail+1))
fi

# print and device_assert (tests/emu/debug; the emulator runs them in
# test_emu_runtime): vprintf with a global format string and an argument
# buffer in local memory, trap after a failed assert's report; ptxas
# assembles them for both targets
for arch in sm_90a sm_100a; do
  for d in print assert; do
    ptx=$tmp/debug_$d.$arch.ptx
    if ! "$TILEC" --arch=$arch --emit=ptx -o "$ptx" tests/emu/debug/$d.tile 2> "$tmp/err"; then
      n=$((n+1)); echo "FAIL $d.tile/$arch: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
    fi
    check "$d.tile/$arch" "vprintf declared" "$ptx" "^\.extern \.func .*vprintf"
    check "$d.tile/$arch" "vprintf called" "$ptx" "call\.uni \(retval0\), vprintf, \(param0, param1\)"
    check "$d.tile/$arch" "the format, a global string" "$ptx" "\.global \.align 1 \.b8 __tile_fmt0\["
    check "$d.tile/$arch" "the arguments in local memory" "$ptx" "st\.local\.b64"
    [ $d = assert ] && check "$d.tile/$arch" "trap after the report" "$ptx" "^[[:space:]]+trap;"
    [ -x "$PTXAS" ] && assemble "debug_${d}_$arch" $arch "$ptx"
  done
done
# clock64() (tests/emu/debug/clock.tile, run in test_emu_runtime): two
# reads of %clock64, neither merged nor dropped
for arch in sm_90a sm_100a; do
  ptx=$tmp/debug_clock.$arch.ptx
  if ! "$TILEC" --arch=$arch --emit=ptx -o "$ptx" tests/emu/debug/clock.tile 2> "$tmp/err"; then
    n=$((n+1)); echo "FAIL clock.tile/$arch: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
  fi
  n=$((n+1))
  if [ "$(grep -c "mov\.u64 %rd[0-9]*, %clock64;" "$ptx")" = 2 ]; then echo "ok   clock.tile/$arch: two reads of %clock64"
  else echo "FAIL clock.tile/$arch: not two reads of %clock64"; fail=$((fail+1)); fi
  [ -x "$PTXAS" ] && assemble "debug_clock_$arch" $arch "$ptx"
done

# tilec --stats reports the registers and spills ptxas -v reports for the
# same PTX (with -lineinfo, as tilec assembles): a warp-specialized kernel
# on each target and one without tasks
for v in "sm_90a examples/gemm/gemm.tile" "sm_90a examples/matmul/matmul.tile" \
         "sm_100a examples/gemm/gemm_sm100.tile" "sm_100a examples/gemm/gemm_sm100_2cta.tile"; do
  set -- $v
  arch=$1; src=$2; name=stats/$(basename "$src" .tile)/$arch
  [ -x "$PTXAS" ] || continue
  n=$((n+1))
  if ! "$TILEC" --arch=$arch --ptxas="$PTXAS" --stats="$tmp/stats.txt" -o "$tmp/s.cubin" "$src" 2> "$tmp/err" ||
     ! "$TILEC" --arch=$arch --emit=ptx -o "$tmp/s.ptx" "$src" 2> "$tmp/err"; then
    echo "FAIL $name: tilec failed"; cat "$tmp/err"; fail=$((fail+1)); continue
  fi
  "$PTXAS" -arch=$arch -v -lineinfo "$tmp/s.ptx" -o "$tmp/s2.cubin" > "$tmp/ptxas.log" 2>&1 ||
    { echo "FAIL $name: ptxas failed"; cat "$tmp/ptxas.log"; fail=$((fail+1)); continue; }
  want=$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' "$tmp/ptxas.log" | head -n 1)
  got=$(sed -n 's/^  registers: \([0-9]*\) a thread.*/\1/p' "$tmp/stats.txt")
  wsp=$(sed -n 's/.* \([0-9]*\) bytes spill stores, \([0-9]*\) bytes spill loads.*/\1 \2/p' "$tmp/ptxas.log" | head -n 1)
  gsp=$(sed -n 's/^  spills: \([0-9]*\) bytes stored, \([0-9]*\) bytes loaded.*/\1 \2/p' "$tmp/stats.txt")
  if [ -z "$want" ] || [ "$got" != "$want" ] || [ "$gsp" != "$wsp" ]; then
    echo "FAIL $name: --stats says registers '$got', spills '$gsp'; ptxas -v '$want', '$wsp'"
    fail=$((fail+1))
  fi
done

echo "ptx property checks: $((n-fail))/$n passed"
[ $fail -eq 0 ]

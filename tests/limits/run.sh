#!/bin/sh
# tests/limits/run.sh - compile time stays bounded up to the size limits.
#
#   B=build sh tests/limits/run.sh        (from the repository root)
#   LIMIT_S=10                            (seconds one compile may take)
#
# Every element a thread holds of a tile is its own SSA value down to the
# PTX, and ptxas and LLVM take more than linear time in straight-line code:
# before the limits, 2^17 elements over 4 warps took 22 s and 2^20 never
# finished. lower.c (check_size) now bounds the 32-bit values one thread
# holds of one tile (TC_MAX_THREAD_VALUES) and those the kernel's
# operations read and write per thread, summed (TC_MAX_KERNEL_VALUES).
# This sweeps tile sizes, and the length of kernels, up to those limits:
# each largest accepted program must compile (cubin, ptxas included) in
# LIMIT_S seconds, and the one just past the limit must be refused at once
# (exit 1) with the limit's diagnostic. The shipped examples the limits
# must leave alone (JFA at head dim 128, the GEMM, the widest wgmma) must
# compile too. A bound check: generous on a loaded 2-core machine, where the
# largest accepted programs take 1-4 s.
#
# One line per case (ok/FAIL, seconds), then a count; exit status 1 if any
# failed. Without ptxas the compiles stop at PTX (said once).
set -u
B=${B:-build}
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
TILEC=$B/bin/tilec
LIMIT_S=${LIMIT_S:-10}
ROOT=$(pwd)

if [ ! -x "$TILEC" ]; then
  echo "limits: $TILEC not found (build it first: make B=${B##*/} $B/bin/tilec)"
  exit 1
fi
if [ ! -f "$ROOT/examples/jagged_attention/jfa_fwd.tile" ]; then
  echo "limits: run me from the repository root"
  exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/limits.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
if command -v timeout >/dev/null 2>&1; then TO="timeout $((LIMIT_S * 3))"; else TO=""; fi

# cubin when ptxas is there, else PTX
printf 'kernel k(x: *f32) warps(4) { store(x + arange(0, 128), 1.0); }\n' > "$TMP/probe.tile"
EMIT=cubin
if ! "$TILEC" -o "$TMP/probe.out" "$TMP/probe.tile" > "$TMP/probe.err" 2>&1; then
  EMIT=ptx
  echo "note: no working ptxas ($(grep -m1 error "$TMP/probe.err")): compiling to PTX only"
fi

npass=0
nfail=0
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
over() { awk -v s="$1" -v l="$LIMIT_S" 'BEGIN { exit !(s > l) }'; }

# run NAME FILE ARGS...: compile, set RC, SECS, ERR (the first error line)
run() {
  name=$1 file=$2
  shift 2
  t0=$(now)
  $TO "$TILEC" --emit=$EMIT -o "$TMP/out" "$@" "$file" > "$TMP/$name.log" 2>&1
  RC=$?
  SECS=$(elapsed "$t0" "$(now)")
  ERR=$(grep -m1 'error: ' "$TMP/$name.log")
}

# accept NAME FILE ARGS...: must compile, within LIMIT_S
accept() {
  name=$1
  run "$@"
  if [ "$RC" -ne 0 ]; then
    echo "FAIL $name: exit status $RC, expected 0 (${SECS}s): $ERR"
    nfail=$((nfail + 1))
  elif over "$SECS"; then
    echo "FAIL $name: took ${SECS}s, over ${LIMIT_S}s"
    nfail=$((nfail + 1))
  else
    echo "ok   $name ${SECS}s"
    npass=$((npass + 1))
  fi
}

# refuse NAME PATTERN FILE ARGS...: must fail with exit 1 and a diagnostic
# containing PATTERN, within LIMIT_S
refuse() {
  name=$1 pat=$2
  shift 2
  run "$name" "$@"
  if [ "$RC" -ne 1 ] || ! printf '%s\n' "$ERR" | grep -q "$pat"; then
    echo "FAIL $name: exit status $RC (${SECS}s), expected 1 with '$pat'; got: $ERR"
    nfail=$((nfail + 1))
  elif over "$SECS"; then
    echo "FAIL $name: took ${SECS}s, over ${LIMIT_S}s"
    nfail=$((nfail + 1))
  else
    echo "ok   $name refused ${SECS}s"
    npass=$((npass + 1))
  fi
}

# lowers FILE ARGS...: does lowering accept it (--emit=mlir; fast)?
lowers() {
  f=$1
  shift
  "$TILEC" --emit=mlir -o /dev/null "$@" "$f" > /dev/null 2>&1
}

PER_TILE='values per thread and tile'
PER_KERNEL='is too large to compile'

# ---- generators ----
# ew N T W: load, an elementwise op, store, on one N-element tile
ew() {
  f=$TMP/ew_$1_$2_$3.tile
  op='exp(a)'
  [ "$2" = f32 ] || op='a * a + a'
  cat > "$f" <<EOF
kernel k(x: *$2, out: *$2) warps($3) {
    let offs = arange(0, $1);
    let a = load(x + offs);
    store(out + offs, $op);
}
EOF
  echo "$f"
}
# softmax R C W: a row softmax of an R x C tile (reductions, broadcasts)
softmax() {
  f=$TMP/softmax_$1_$2_$3.tile
  cat > "$f" <<EOF
kernel k(x: *f32, out: *f32) warps($3) {
    let r = arange(0, $1);
    let c = arange(0, $2);
    let offs = r[:, None] * $2 + c[None, :];
    let v = load(x + offs);
    let e = exp(v - max(v, axis = 1)[:, None]);
    store(out + offs, e / sum(e, axis = 1)[:, None]);
}
EOF
  echo "$f"
}
# dot M N K W: one f16 product (mma.sync), f32 result
dot() {
  f=$TMP/dot_$1_$2_$3_$4.tile
  cat > "$f" <<EOF
kernel k(a: *f16, b: *f16, c: *f32) warps($4) {
    let m = arange(0, $1);
    let n = arange(0, $2);
    let kk = arange(0, $3);
    let x = load(a + m[:, None] * $3 + kk[None, :]);
    let y = load(b + kk[:, None] * $2 + n[None, :]);
    store(c + m[:, None] * $2 + n[None, :], dot(x, y));
}
EOF
  echo "$f"
}
# chain N K T W: K dependent multiply-adds on one N-element tile
chain() {
  f=$TMP/chain_$1_$2_$3_$4.tile
  {
    echo "kernel k(x: *$3, out: *$3) warps($4) {"
    echo "    let offs = arange(0, $1);"
    echo "    let a0 = load(x + offs);"
    i=0
    while [ "$i" -lt "$2" ]; do
      echo "    let a$((i + 1)) = a$i * a$i + a0;"
      i=$((i + 1))
    done
    echo "    store(out + offs, a$2);"
    echo "}"
  } > "$f"
  echo "$f"
}
# scalar: N unrolled iterations of a dependent i64 multiply-add
SCALAR=$TMP/scalar.tile
cat > "$SCALAR" <<'EOF'
kernel k(x: *i64, out: *i64, const N: i32 = 1) warps(4) {
    let a0 = load(x);
    let a = a0;
    for i in static_range(0, N) {
        a = a * a + a0;
    }
    store(out, a);
}
EOF

# ---- one tile per thread: sizes up to the limit, then one past ----
for n in 1024 4096 16384 65536; do accept "ew_f32_${n}_w4" "$(ew $n f32 4)"; done
refuse ew_f32_131072_w4 "$PER_TILE" "$(ew 131072 f32 4)"
accept ew_f32_262144_w16 "$(ew 262144 f32 16)"
refuse ew_f32_524288_w16 "$PER_TILE" "$(ew 524288 f32 16)"
refuse ew_f32_1048576_w32 "$PER_TILE" "$(ew 1048576 f32 32)"
accept ew_i64_32768_w4 "$(ew 32768 i64 4)"
refuse ew_i64_65536_w4 "$PER_TILE" "$(ew 65536 i64 4)"
for r in 32 128; do accept "softmax_${r}x512_w4" "$(softmax $r 512 4)"; done
refuse softmax_256x512_w4 "$PER_TILE" "$(softmax 256 512 4)"
accept softmax_1024x512_w32 "$(softmax 1024 512 32)"
refuse softmax_1024x1024_w32 "$PER_TILE" "$(softmax 1024 1024 32)"
for s in 64 128; do accept "dot_f16_${s}^3_w4" "$(dot $s $s $s 4)"; done
refuse "dot_f16_256^3_w4" "$PER_TILE" "$(dot 256 256 256 4)"

# ---- the kernel's total: the longest accepted chain, then one longer ----
# chain_limit NAME N T W: K grows until lowering refuses
chain_limit() {
  cname=$1 n=$2 t=$3 w=$4
  k=1
  while lowers "$(chain $n $k $t $w)" && [ "$k" -lt 1000 ]; do k=$((k + 1)); done
  accept "${cname}_K$((k - 1))" "$(chain $n $((k - 1)) $t $w)"
  refuse "${cname}_K$k" "$PER_KERNEL" "$(chain $n $k $t $w)"
}
chain_limit chain_f32_65536_w4 65536 f32 4
chain_limit chain_f32_8192_w4 8192 f32 4
chain_limit chain_i64_8192_w4 8192 i64 4

# the longest accepted scalar chain (binary search), then one longer
lo=1 hi=4096
while [ $((hi - lo)) -gt 1 ]; do
  mid=$(((lo + hi) / 2))
  if lowers "$SCALAR" -D N=$mid; then lo=$mid; else hi=$mid; fi
done
accept "scalar_i64_chain_N$lo" "$SCALAR" -D N=$lo
refuse "scalar_i64_chain_N$hi" "$PER_KERNEL" "$SCALAR" -D N=$hi

# ---- the shipped kernels stay under the limits ----
J=examples/jagged_attention
accept jfa_fwd_d128 "$J/jfa_fwd.tile" -D D=128
accept jfa_fwd_d128_causal "$J/jfa_fwd.tile" -D D=128 -D CAUSAL=true
accept jfa_bwd_d128 "$J/jfa_bwd.tile" -D D=128
accept jfa_bwd_d128_causal_det "$J/jfa_bwd.tile" -D D=128 -D CAUSAL=true -D DET=true
accept gemm examples/gemm/gemm.tile
accept mma_wide tests/gpu/prims/mma_wide.tile

echo "limits: $npass passed, $nfail failed ($TILEC, $EMIT)"
[ "$nfail" -eq 0 ]

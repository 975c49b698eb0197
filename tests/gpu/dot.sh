#!/bin/bash
# tests/gpu/dot.sh - the Triton-style matmul (examples/matmul/matmul.tile:
# `dot` in a K loop that the compiler pipelines, issue 10) on the GPU:
# float64-checked random and edge sizes, compute-sanitizer at small sizes,
# then the speed beside Triton's tutorial kernel, cuBLAS and Tile's explicit
# GEMM (tests/gpu/bench_dot.py; gemm_host), and the SASS's shape.
# Build with `make gpu-bundle`, run there with build-gpu carried:
#   B=build-gpu OUT=$OUT bash tests/gpu/dot.sh
set -u
B=${B:-build}
OUT=${OUT:-$B/gpu-logs}
mkdir -p "$OUT"
SEED=${SEED:-$(date +%s)}
fail=0
row() { printf '%-44s %-5s %s\n' "$1" "$2" "$3" | tee -a "$OUT/dot_summary.txt"; }
MM="$B/examples/matmul_host --cubin $B/examples/matmul.sm_90a.cubin"

log=$OUT/dot_check.log
: > "$log"
ok=1
$MM --trials 12 --seed "$SEED" >> "$log" 2>&1 || ok=0
for s in "4096 4096 4096" "1000 1000 1000" "129 257 72" "1 1 1" "128 256 64" "300 500 4099" "8192 8192 1024"; do
  set -- $s
  $MM --size "$1" --size "$2" --size "$3" >> "$log" 2>&1 || ok=0
done
[ $ok = 1 ] && row "matmul.tile: 12 random + 7 edge sizes" PASS "max $(grep -o 'rel_err=[^ ]*' "$log" | sort -t= -k2 -g | tail -1)" ||
  { row "matmul.tile checks" FAIL "see $log"; fail=1; }

if [ "${SAN:-1}" = 1 ] && command -v compute-sanitizer > /dev/null; then
  for s in "100 70 50" "33 65 17" "200 300 130"; do
    set -- $s
    for tool in memcheck racecheck synccheck; do
      l=$OUT/dot.$tool.$1.log
      compute-sanitizer --tool $tool --error-exitcode 9 $MM --size "$1" --size "$2" --size "$3" > "$l" 2>&1
      rc=$?
      if [ $rc -eq 0 ] && grep -q "ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards" "$l"; then row "matmul $tool ($s)" PASS ""
      else row "matmul $tool ($s)" FAIL "rc=$rc, see $l"; fail=1; fi
    done
  done
fi

if command -v cuobjdump > /dev/null; then
  cuobjdump --dump-sass "$B/examples/matmul.sm_90a.cubin" > "$OUT/matmul.sass" 2>&1
  row "matmul SASS: HGMMA / LDGSTS / LDL+STL" "$(grep -c HGMMA "$OUT/matmul.sass") / $(grep -c LDGSTS "$OUT/matmul.sass") / $(grep -cE 'LDL|STL' "$OUT/matmul.sass")" ""
fi

# speed: Tile, Triton's tutorial, cuBLAS in one process; then the explicit GEMM
L=$(mktemp -d "${TMPDIR:-/tmp}/tile_pylib.XXXXXX") || exit 1
cp "$B/lib/libtilert.so.0" "$L/" 2>/dev/null
export TILE_LIB_DIR="$L" PYTHONPATH="$(pwd)/python${PYTHONPATH:+:$PYTHONPATH}"
DOT_CUBIN2=${DOT_CUBIN2:-$B/examples/matmul.k16.sm_90a.cubin} timeout 400 python3 -W ignore tests/gpu/bench_dot.py "$B/examples/matmul.sm_90a.cubin" \
  ${DOT_SHAPES:-4096,4096,4096 8192,8192,8192 4096,4096,1024 2048,2048,2048} > "$OUT/bench_dot.log" 2>&1 || fail=1
cat "$OUT/bench_dot.log" | tee -a "$OUT/dot_summary.txt"
for s in 4096 8192; do
  "$B/examples/gemm_host" --cubin "$B/examples/gemm.sm_90a.cubin" --size $s --size $s --size $s --bench 2>&1 | grep "^bench" |
    sed 's/^/explicit gemm.tile: /' | tee -a "$OUT/dot_summary.txt"
done
rm -rf "$L"
exit $fail

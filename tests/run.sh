#!/bin/sh
# tests/run.sh - run every test that needs no GPU: unit tests (cmocka),
# golden tests, PTX property checks of the examples, and (when a GPU is
# present) nothing more: GPU tests are tests/gpu/run.sh.
set -u
B=${B:-build}
fail=0
for t in "$B"/tests/test_*; do
  [ -x "$t" ] || continue
  echo "== $(basename "$t")"
  if ! "$t"; then echo "FAILED: $t"; fail=1; fi
done
for s in tests/golden/run.sh tests/ptx/run.sh tests/ptx/gemm_props.sh tests/ptx/sass_props.sh; do
  [ -f "$s" ] || continue
  echo "== $s"
  if ! B=$B sh "$s"; then echo "FAILED: $s"; fail=1; fi
done
echo "== tests/fuzz/regress.sh (the fuzzer's and the adversarial inputs' reproducers)"
if ! TILEC=$B/bin/tilec sh tests/fuzz/regress.sh > "${TMPDIR:-/tmp}/regress.log" 2>&1; then
  grep FAIL "${TMPDIR:-/tmp}/regress.log"; echo "FAILED: tests/fuzz/regress.sh"; fail=1
else
  echo "$(grep -c '^ok' "${TMPDIR:-/tmp}/regress.log") reproducers pass"
fi
if [ $fail -ne 0 ]; then echo "SOME TESTS FAILED"; exit 1; fi
echo "ALL TESTS PASSED"

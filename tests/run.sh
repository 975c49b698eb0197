#!/bin/sh
# tests/run.sh - run every test that needs no GPU: unit tests (cmocka),
# golden tests, PTX property checks of the examples, the PTX oracles
# (tests/ptx/oracles.sh), the examples on the emulator (tests/emu/run.sh),
# every shipped kernel through the JIT (tests/jit/run.sh), `make install`
# and programs built against it with pkg-config (tests/install/run.sh),
# the benchmark report's tooling on made-up figures (tests/bench/run.sh),
# the fuzzers' reproducers and a short run of the
# frontend fuzzer, and (when a GPU is present) nothing more: GPU tests are
# tests/gpu/run.sh. A missing ptxas, nvdisasm or python3 fails the checks
# that need it, unless TILE_ALLOW_MISSING_TOOLS=1.
set -u
B=${B:-build}
fail=0
for t in "$B"/tests/test_*; do
  [ -x "$t" ] || continue
  echo "== $(basename "$t")"
  if ! "$t"; then echo "FAILED: $t"; fail=1; fi
done
for s in tests/golden/run.sh tests/cli/run.sh tests/limits/run.sh tests/ptx/run.sh tests/ptx/gemm_props.sh tests/ptx/sass_props.sh \
         tests/ptx/oracles.sh tests/emu/run.sh tests/emu/tutorials.sh tests/jit/run.sh tests/install/run.sh tests/python/run.sh \
         tests/bench/run.sh; do
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
# The frontend fuzzer, briefly, with its corpus (build-fuzz/corpus and
# tests/fuzz/seeds): once per `make test` (not again for the sanitizer build,
# the fuzzer has its own), TILE_FUZZ_SECONDS (60; 0: not at all). Without a
# clang that links libFuzzer it prints SKIP (sh scripts/install-deps.sh --fuzz).
fs=${TILE_FUZZ_SECONDS:-60}
if [ -z "${TILE_SAN:-}" ] && [ "$fs" != 0 ]; then
  echo "== tests/fuzz/run.sh $fs (frontend fuzzer)"
  if ! B=$B FUZZ_SKIP_MISSING=1 sh tests/fuzz/run.sh "$fs"; then echo "FAILED: tests/fuzz/run.sh"; fail=1; fi
fi
if [ $fail -ne 0 ]; then echo "SOME TESTS FAILED"; exit 1; fi
echo "ALL TESTS PASSED"

#!/bin/sh
# tests/run.sh - run every test that needs no GPU: unit tests (cmocka),
# golden tests, PTX property checks of the examples, the PTX oracles
# (tests/ptx/oracles.sh), the examples on the emulator (tests/emu/run.sh,
# tests/emu/blackwell.sh, tests/emu/tutorials.sh), every shipped kernel
# through the JIT (tests/jit/run.sh), `make install` and programs built
# against it with pkg-config (tests/install/run.sh), the benchmark report's
# tooling on made-up figures (tests/bench/run.sh), the fuzzers' reproducers
# and a short run of the frontend fuzzer, and (when a GPU is present)
# nothing more: GPU tests are tests/gpu/run.sh. A missing ptxas, nvdisasm or
# python3 fails the checks that need it, unless TILE_ALLOW_MISSING_TOOLS=1.
#
# The scripts run in two lanes at once when there are two cores or more
# (TILE_TEST_JOBS, default the cores; 1: one after the other): the emulator
# runs one thread each, and CI has 2 cores. The first lane prints as it
# goes, the second when it is done; each script prints its seconds.
set -u
B=${B:-build}
t0=$(date +%s)
L=$(mktemp -d "${TMPDIR:-/tmp}/tile-tests.XXXXXX") || exit 1
trap 'rm -rf "$L"' EXIT
trap 'exit 130' INT TERM

units() {
  for t in "$B"/tests/test_*; do
    [ -x "$t" ] || continue
    echo "== $(basename "$t")"
    if ! "$t"; then echo "FAILED: $t"; st=1; fi
  done
}
regress() {
  if ! TILEC=$B/bin/tilec sh tests/fuzz/regress.sh > "$L/regress.log" 2>&1; then
    grep FAIL "$L/regress.log"; echo "FAILED: tests/fuzz/regress.sh"; st=1
  else
    echo "$(grep -c '^ok' "$L/regress.log") reproducers pass"
  fi
}
# The frontend fuzzer, briefly, with its corpus (build-fuzz/corpus and
# tests/fuzz/seeds): once per `make test` (not again for the sanitizer build,
# the fuzzer has its own), TILE_FUZZ_SECONDS (60; 0: not at all). Without a
# clang that links libFuzzer it prints SKIP (sh scripts/install-deps.sh --fuzz).
fuzz() {
  fs=${TILE_FUZZ_SECONDS:-60}
  [ "$fs" = 0 ] && { echo "(the frontend fuzzer: TILE_FUZZ_SECONDS=0)"; return; }
  if ! B=$B FUZZ_SKIP_MISSING=1 sh tests/fuzz/run.sh "$fs"; then echo "FAILED: tests/fuzz/run.sh"; st=1; fi
}
# LANE STEP...: each step a script or one of the functions above, in order;
# the lane's status in $L/LANE.rc
lane() {
  name=$1
  shift
  st=0
  for s; do
    case $s in *.sh) [ -f "$s" ] || continue ;; esac
    echo "== $s"
    t1=$(date +%s)
    case $s in
      *.sh) if ! B=$B sh "$s"; then echo "FAILED: $s"; st=1; fi ;;
      *) "$s" ;;
    esac
    echo "-- $s: $(( $(date +%s) - t1 )) s"
  done
  echo $st > "$L/$name.rc"
}

# the sanitizer build (TILE_SAN, make san-run) runs the scripts that drive
# the compiler and the emulator through their paths, with a short emulator
# list (tests/emu/san.sh); the PTX and SASS properties, the full emulator
# runs, the JIT of every kernel, install, Python and benchmark tooling check
# the same code's outputs and run in the release build only
if [ -n "${TILE_SAN:-}" ]; then
  lane1="units tests/golden/run.sh tests/cli/run.sh tests/limits/run.sh regress"
  lane2="tests/emu/san.sh"
else
  # (2026-12-07, a 2-core machine: the first lane 1892 s with the JIT's
  # 361 s in the second, the second 2127 s for blackwell.sh alone; the JIT
  # moved here, about 2250 s each)
  lane1="units tests/golden/run.sh tests/cli/run.sh tests/limits/run.sh tests/ptx/run.sh tests/ptx/gemm_props.sh
         tests/ptx/sass_props.sh tests/ptx/oracles.sh tests/ptx/pdl.sh tests/emu/run.sh tests/emu/tutorials.sh tests/python/run.sh
         tests/jit/run.sh regress"
  lane2="tests/emu/blackwell.sh tests/install/run.sh tests/bench/run.sh fuzz"
fi
jobs=${TILE_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
if [ "$jobs" -ge 2 ] 2>/dev/null; then
  echo "(two lanes: the second's output follows the first's)"
  # shellcheck disable=SC2086
  lane 2 $lane2 > "$L/lane2.log" 2>&1 &
  pid=$!
  # shellcheck disable=SC2086
  lane 1 $lane1
  wait $pid
  echo "== the second lane"
  cat "$L/lane2.log"
else
  # shellcheck disable=SC2086
  lane 1 $lane1 $lane2
fi
fail=0
for r in "$L"/*.rc; do [ "$(cat "$r")" = 0 ] || fail=1; done
[ -f "$L/1.rc" ] || fail=1
[ "$jobs" -ge 2 ] 2>/dev/null && { [ -f "$L/2.rc" ] || fail=1; }
if [ $fail -ne 0 ]; then echo "SOME TESTS FAILED ($(( $(date +%s) - t0 )) s)"; exit 1; fi
echo "ALL TESTS PASSED ($(( $(date +%s) - t0 )) s)"

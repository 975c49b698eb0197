#!/bin/sh
# tests/fuzz/run.sh [SECONDS] - build the frontend fuzzer (libFuzzer + ASan +
# UBSan, clang) into build-fuzz/ and run it for SECONDS (default 60).
#
#   sh tests/fuzz/run.sh 60        (or: make fuzz FUZZ_SECONDS=60)
#
# Corpus: build-fuzz/corpus (new inputs go there), read together with the
# seeds in tests/fuzz/seeds/; dictionary tests/fuzz/tile.dict.  Crashes,
# leaks, timeouts and out-of-memory inputs go to build-fuzz/artifacts/.
# Exit status: 0 when nothing was found, 1 when the fuzzer found a problem
# (its reproducer path is printed), 2 when the build failed.
#
# Environment:
#   CLANG=...          the clang to use (default /usr/lib/llvm-22/bin/clang)
#   LLVM_DIR=...       LLVM/MLIR prefix for headers and libraries
#   FUZZ_JOBS=N        run N fuzzing processes (libFuzzer -fork=N; keeps going
#                      after a crash and collects every artifact)
#   FUZZ_ARGS="..."    extra libFuzzer flags
#   FUZZ_BUILD_ONLY=1  build and stop
#   FUZZ_DIR=DIR       the fuzzer's folder (default build-fuzz): objects,
#                      binary, corpus, artifacts, log
#   B=DIR              the build folder whose generated lexer and stdlib are
#                      used (default build; made there when missing)
#   FUZZ_SKIP_MISSING=1  no clang, or one without libFuzzer: print SKIP and
#                      exit 0 instead of failing (what `make test` uses)
set -u
cd "$(dirname "$0")/../.." || exit 2
SECONDS_TO_RUN=${1:-60}
case $SECONDS_TO_RUN in ''|*[!0-9]*) echo "usage: sh tests/fuzz/run.sh [SECONDS]" >&2; exit 2;; esac
LLVM_DIR=${LLVM_DIR:-/usr/lib/llvm-22}
CLANG=${CLANG:-$LLVM_DIR/bin/clang}
[ -x "$CLANG" ] || CLANG=$(command -v clang-22 || command -v clang || true)
skip_or_fail() { # skip_or_fail MESSAGE: no fuzzing toolchain here
  if [ "${FUZZ_SKIP_MISSING:-0}" = 1 ]; then echo "SKIP fuzzing: $1 (sh scripts/install-deps.sh --fuzz)"; exit 0; fi
  echo "run.sh: $1" >&2; exit 2
}
[ -n "$CLANG" ] || skip_or_fail "clang not found (set CLANG=)"
FB=${FUZZ_DIR:-build-fuzz}
GB=${B:-build}
OBJ=$FB/obj
BIN=$FB/fuzz_frontend
JOBS=${MAKE_JOBS:-$(nproc 2>/dev/null || echo 2)}

# --- generated sources (re2c lexer, embedded stdlib, build identity) ------
make -s B="$GB" "$GB/gen/lexer.c" "$GB/gen/stdlib.c" "$GB/gen/build_id.c" ||
  { echo "run.sh: cannot generate the lexer/stdlib/build id" >&2; exit 2; }

# --- does this clang have libFuzzer? -------------------------------------
mkdir -p "$OBJ" "$FB/artifacts" "$FB/corpus" "$FB/cwd"
probe=$FB/probe.c
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n){(void)d;(void)n;return 0;}\n' >"$probe"
if ! "$CLANG" -fsanitize=fuzzer,address,undefined "$probe" -o "$FB/probe" 2>"$FB/probe.log"; then
  [ "${FUZZ_SKIP_MISSING:-0}" = 1 ] || cat "$FB/probe.log" >&2
  rm -f "$probe" "$FB/probe.log"
  skip_or_fail "$CLANG cannot link -fsanitize=fuzzer; install the compiler-rt runtime: apt-get install libclang-rt-22-dev"
fi
rm -f "$FB/probe" "$probe" "$FB/probe.log"

# --- build (incremental: an object is rebuilt when its source or a header
# --- is newer) ------------------------------------------------------------
SAN="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CFLAGS="-std=c11 -D_GNU_SOURCE -g -O1 $SAN -Iinclude -Icompiler -I$GB/gen -isystem $LLVM_DIR/include -w"
# The MLIR libraries: the Makefile's own list (it changes as the backend
# grows), else a copy of it.
MLIR_LIBS=$(printf 'print-mlir-libs:\n\t@echo $(MLIR_LIBS)\n' |
            make -s --no-print-directory -f Makefile -f - LLVM_DIR="$LLVM_DIR" print-mlir-libs 2>/dev/null)
[ -n "$MLIR_LIBS" ] || MLIR_LIBS="-L$LLVM_DIR/lib -lMLIRCAPIRegisterEverything -lMLIRCAPIConversion \
 -lMLIRCAPITransforms -lMLIRCAPITarget -lMLIRCAPILLVM -lMLIRCAPINVVM -lMLIRCAPIArith -lMLIRCAPISCF \
 -lMLIRCAPIControlFlow -lMLIRCAPIIR -lMLIR -lLLVM-22 -lstdc++ -Wl,-rpath,$LLVM_DIR/lib"
HDRS="$(ls compiler/*.h) include/tile/tilec.h tests/fuzz/run.sh"
SRCS="$(ls compiler/*.c | grep -v '^compiler/main\.c$') $GB/gen/lexer.c $GB/gen/stdlib.c $GB/gen/build_id.c tests/fuzz/fuzz_frontend.c"

newer() { # newer TARGET FILES...: true when TARGET is missing or older than one of FILES
  t=$1; shift
  [ -e "$t" ] || return 0
  for f in "$@"; do [ -e "$f" ] && [ "$f" -nt "$t" ] && return 0; done
  return 1
}

OBJS=""
todo=""
for s in $SRCS; do
  o=$OBJ/$(echo "$s" | tr '/' '_' | sed 's/\.c$/.o/')
  OBJS="$OBJS $o"
  if newer "$o" "$s" $HDRS; then todo="$todo $s:$o"; fi
done
if [ -n "$todo" ]; then
  echo "run.sh: compiling$(echo "$todo" | wc -w | tr -d ' ') files with $CLANG"
  # shellcheck disable=SC2086
  if ! printf '%s\n' $todo | xargs -P "$JOBS" -n 1 sh -c \
      's=${0%%:*}; o=${0#*:}; '"$CLANG"' '"$CFLAGS"' -c "$s" -o "$o" || { rm -f "$o"; exit 255; }'; then
    echo "run.sh: build failed" >&2
    exit 2
  fi
fi
if newer "$BIN" $OBJS; then
  # shellcheck disable=SC2086
  if ! "$CLANG" $SAN $OBJS -o "$BIN" $MLIR_LIBS -ldl -lpthread -lm 2>"$FB/link.log"; then
    # The fuzzer stops at the Tile IR and never calls into MLIR: when the
    # MLIR libraries do not link (a library the list lacks), link the
    # frontend with a stub backend rather than not fuzzing.
    head -n 5 "$FB/link.log" >&2
    echo "run.sh: linking with the MLIR libraries failed; linking a stub backend (tests/fuzz/stub_backend.c)" >&2
    FE_OBJS=$(for o in $OBJS; do case $o in *compiler_lower*|*compiler_backend*) ;; *) echo "$o";; esac; done)
    # shellcheck disable=SC2086
    if ! "$CLANG" $CFLAGS -c tests/fuzz/stub_backend.c -o "$OBJ/stub_backend.o" ||
       ! "$CLANG" $SAN $FE_OBJS "$OBJ/stub_backend.o" -o "$BIN" -ldl -lpthread -lm; then
      echo "run.sh: link failed" >&2
      exit 2
    fi
  fi
fi
echo "run.sh: built $BIN"
[ "${FUZZ_BUILD_ONLY:-0}" = 1 ] && exit 0

# --- run -------------------------------------------------------------------
# The fuzzer runs in an empty directory: `import "x.tile"` in an input
# resolves there (nothing), then in the embedded stdlib.
ROOT=$(pwd)
before=$(ls "$FB/artifacts" 2>/dev/null | sort)
FORK=""
[ -n "${FUZZ_JOBS:-}" ] && FORK="-fork=$FUZZ_JOBS -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "run.sh: fuzzing for $SECONDS_TO_RUN s (log: $FB/fuzz.log)"
t0=$(date +%s)
# shellcheck disable=SC2086
(cd "$FB/cwd" && "$ROOT/$BIN" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
   -dict="$ROOT/tests/fuzz/tile.dict" -artifact_prefix="$ROOT/$FB/artifacts/" -print_final_stats=1 \
   $FORK ${FUZZ_ARGS:-} "$ROOT/$FB/corpus" "$ROOT/tests/fuzz/seeds") >"$FB/fuzz.log" 2>&1
rc=$?
tail -n 15 "$FB/fuzz.log"
# the totals: executions (the largest "#N" status line or final stats count;
# with -fork the jobs' own stats are partial) and seconds
execs=$( (sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$FB/fuzz.log"
          sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$FB/fuzz.log") | sort -n | tail -n 1)
echo "run.sh: ${execs:-?} executions in $(( $(date +%s) - t0 )) s (corpus: $FB/corpus + tests/fuzz/seeds)"
after=$(ls "$FB/artifacts" 2>/dev/null | sort)
new=$(printf '%s\n' "$after" | grep -vxF -e "$before" -e '' || true)
[ -z "$before" ] && new=$after
if [ -n "$new" ]; then
  echo "run.sh: the fuzzer found problems (see $FB/fuzz.log):"
  for f in $new; do echo "  $FB/artifacts/$f"; done
  echo "reproduce: $BIN $FB/artifacts/<file>; minimize: $BIN -minimize_crash=1 -runs=20000 <file>"
  exit 1
fi
if [ $rc -ne 0 ]; then
  echo "run.sh: the fuzzer exited with status $rc (see $FB/fuzz.log)" >&2
  exit 1
fi
echo "run.sh: no crashes in $SECONDS_TO_RUN s"
exit 0

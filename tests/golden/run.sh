#!/bin/sh
# tests/golden/run.sh - golden tests of the tilec frontend (no GPU needed).
#
#   B=build sh tests/golden/run.sh                  (from the repository root)
#   B=build-san TILE_SAN=1 sh tests/golden/run.sh   (the sanitizer build)
#   UPDATE=1 sh tests/golden/run.sh                 (rewrite the IR goldens)
#   JOBS=N                                          (parallel runs; default: CPUs)
#
# diag/NAME.tile   a bad program.  tilec runs in diag/ (so diagnostics name
#                  the bare file), with the arguments in NAME.flags if that
#                  exists (split at blanks), under a 10 s limit.  It must exit
#                  with the status in NAME.status (default 1), print no
#                  "internal compiler error", die of no signal and (under
#                  TILE_SAN=1, but checked always) trip no sanitizer, and
#                    NAME.expected      must equal its first error line, or
#                    NAME.expected_all  must equal all its error lines, and
#                    NAME.expected_stderr (if there) all of its standard error:
#                    notes, source lines and carets too.
#                  Error lines are the diagnostics containing "error: "
#                  (not the indented source lines and carets).
#                  KNOWN_ISSUES.md lists the cases that are deliberately not
#                  here; their reproducers are in diag/known/, which is not run.
# ir/NAME.*.expected  the exact --emit=tir and --emit=ast output of every
#                  example (examples/*/*.tile) and of ir/*.tile, run from the
#                  folder of the .tile, with the arguments in ir/NAME.flags if
#                  that exists (--arch=sm_100a for Blackwell's programs);
#                  tilec must exit 0.  UPDATE=1 rewrites these files instead
#                  of comparing.
# stats/NAME.expected  the compile report (tilec --stats=- --emit=ptx: no
#                  assembler, so no registers, which are ptxas's to choose)
#                  of stats/NAME.tile, or else of the example
#                  examples/*/NAME.tile, run from its folder with the
#                  arguments in stats/NAME.flags if that exists; the numbers
#                  of its time line read N.  tilec must exit 0.  UPDATE=1
#                  rewrites these files too.
#
# One line per failing case, then a count; exit status 1 if any failed.
set -u
B=${B:-build}
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
TILEC=$B/bin/tilec
ROOT=$(pwd)
G=$ROOT/tests/golden
UPDATE=${UPDATE:-0}
TILE_SAN=${TILE_SAN:-0}

if [ ! -x "$TILEC" ]; then
  echo "golden: $TILEC not found (build it first: make B=${B##*/} all)"
  exit 1
fi
if [ ! -d "$G/diag" ] || [ ! -d "$ROOT/examples" ]; then
  echo "golden: run me from the repository root"
  exit 1
fi
if command -v timeout >/dev/null 2>&1; then TO="timeout 10"; else TO=""; fi
if [ "$TILE_SAN" = 1 ]; then
  # Report sanitizer findings on stderr, where the checks below look.
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
  export ASAN_OPTIONS UBSAN_OPTIONS
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/golden.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM

npass=0
nfail=0
fail() {
  echo "FAIL $1: $2"
  nfail=$((nfail + 1))
}

# Problems every run must be free of: signals, timeouts, ICEs, sanitizers.
# $1 case name, $2 exit status, $3 stderr file.  Returns 1 after a FAIL.
check_health() {
  if [ "$2" -eq 124 ] || [ "$2" -eq 137 ]; then
    fail "$1" "timed out (10 s)"
    return 1
  fi
  if [ "$2" -ge 128 ]; then
    fail "$1" "killed by signal $(($2 - 128))"
    return 1
  fi
  if grep -q 'internal compiler error' "$3"; then
    fail "$1" "$(grep -m1 'internal compiler error' "$3")"
    return 1
  fi
  if grep -q 'AddressSanitizer\|LeakSanitizer\|UndefinedBehaviorSanitizer\|runtime error: ' "$3"; then
    fail "$1" "sanitizer: $(grep -m1 'Sanitizer\|runtime error: ' "$3")"
    return 1
  fi
  return 0
}

# Runs go in parallel, JOBS at a time (tilec starts in ~40 ms, mostly
# loading LLVM); the checks then read their results in order.
JOBS=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 4)}
[ "$JOBS" -ge 2 ] 2>/dev/null || JOBS=2
[ "$JOBS" -le 16 ] || JOBS=16
running=0
# $1 result prefix, $2 folder, then the tilec arguments.
spawn() {
  pfx=$1 dir=$2
  shift 2
  (cd "$dir" && $TO "$TILEC" "$@" </dev/null >"$pfx.out" 2>"$pfx.err"; echo $? >"$pfx.rc") &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then
    wait
    running=0
  fi
}

# ---- diagnostics: run -------------------------------------------------------
cd "$G/diag" || exit 1
for f in *.tile; do
  [ -f "$f" ] || continue
  n=${f%.tile}
  flags=""
  [ -f "$n.flags" ] && flags=$(cat "$n.flags")
  # shellcheck disable=SC2086  # flags are split at blanks on purpose
  spawn "$TMP/d.$n" "$G/diag" $flags -o /dev/null "$f"
done

# ---- IR dumps: run -----------------------------------------------------------
seen=" "
irs=""
for f in "$ROOT"/examples/*/*.tile "$G"/ir/*.tile; do
  [ -f "$f" ] || continue
  grep -q '^kernel ' "$f" || continue     # a library of functions (imported by kernels)
  base=$(basename "$f" .tile)
  case $seen in *" $base "*)
    fail "ir/$base" "two programs named $base.tile (examples/ and tests/golden/ir/)"
    continue ;;
  esac
  seen="$seen$base "
  irs="$irs $base"
  iflags=""
  [ -f "$G/ir/$base.flags" ] && iflags=$(cat "$G/ir/$base.flags")
  for stage in tir ast; do
    # shellcheck disable=SC2086  # flags are split at blanks on purpose
    spawn "$TMP/i.$base.$stage" "$(dirname "$f")" $iflags --emit=$stage "$(basename "$f")"
  done
done

# ---- compile reports: run ----------------------------------------------------
stats=""
for e in "$G"/stats/*.expected; do
  [ -f "$e" ] || continue
  base=$(basename "$e" .expected)
  f=$G/stats/$base.tile
  [ -f "$f" ] || f=$(ls "$ROOT"/examples/*/"$base.tile" 2>/dev/null | head -n 1)
  if [ ! -f "$f" ]; then
    fail "stats/$base" "no stats/$base.tile nor examples/*/$base.tile"
    continue
  fi
  stats="$stats $base"
  sflags=""
  [ -f "$G/stats/$base.flags" ] && sflags=$(cat "$G/stats/$base.flags")
  # shellcheck disable=SC2086  # flags are split at blanks on purpose
  spawn "$TMP/s.$base" "$(dirname "$f")" $sflags --stats=- --emit=ptx -o /dev/null "$(basename "$f")"
done
wait

# ---- diagnostics: check -----------------------------------------------------
for f in *.tile; do
  [ -f "$f" ] || continue
  n=${f%.tile}
  name=diag/$n
  want_rc=1
  [ -f "$n.status" ] && want_rc=$(cat "$n.status")
  if [ ! -f "$n.expected" ] && [ ! -f "$n.expected_all" ] && [ ! -f "$n.expected_stderr" ]; then
    fail "$name" "no $n.expected, $n.expected_all or $n.expected_stderr"
    continue
  fi
  rc=$(cat "$TMP/d.$n.rc" 2>/dev/null || echo 255)
  err=$TMP/d.$n.err
  check_health "$name" "$rc" "$err" || continue
  if [ "$rc" != "$want_rc" ]; then
    fail "$name" "exit status $rc, expected $want_rc; first line: $(head -n 1 "$err")"
    continue
  fi
  grep -v '^[[:space:]]' "$err" | grep 'error: ' >"$TMP/errs"
  if [ -f "$n.expected" ]; then
    got=$(head -n 1 "$TMP/errs")
    want=$(cat "$n.expected")
    if [ "$got" != "$want" ]; then
      fail "$name" "first error differs"
      echo "     expected: $want"
      echo "     got:      $got"
      continue
    fi
  fi
  if [ -f "$n.expected_stderr" ]; then
    if ! diff "$n.expected_stderr" "$err" >"$TMP/diff"; then
      fail "$name" "standard error differs (< expected, > got)"
      sed 's/^/     /' "$TMP/diff"
      continue
    fi
  fi
  if [ -f "$n.expected_all" ]; then
    if ! diff "$n.expected_all" "$TMP/errs" >"$TMP/diff"; then
      fail "$name" "error lines differ (< expected, > got)"
      sed 's/^/     /' "$TMP/diff"
      continue
    fi
  fi
  npass=$((npass + 1))
done

# ---- IR dumps: check ---------------------------------------------------------
for base in $irs; do
  for stage in tir ast; do
    pfx=$TMP/i.$base.$stage
    exp=$G/ir/$base.$stage.expected
    rel=tests/golden/ir/$base.$stage.expected
    name=ir/$base.$stage
    rc=$(cat "$pfx.rc" 2>/dev/null || echo 255)
    check_health "$name" "$rc" "$pfx.err" || continue
    if [ "$rc" -ne 0 ]; then
      fail "$name" "exit status $rc: $(grep -m1 'error' "$pfx.err")"
      continue
    fi
    if [ "$UPDATE" = 1 ]; then
      if ! cmp -s "$pfx.out" "$exp"; then
        cp "$pfx.out" "$exp"
        echo "updated $rel"
      fi
      npass=$((npass + 1))
      continue
    fi
    if [ ! -f "$exp" ]; then
      fail "$name" "missing $rel (run with UPDATE=1 to create it)"
      continue
    fi
    if ! diff -u "$exp" "$pfx.out" >"$TMP/diff"; then
      fail "$name" "output differs from $rel (UPDATE=1 rewrites it):"
      sed -n '3,22p' "$TMP/diff" | sed 's/^/     /'
      continue
    fi
    npass=$((npass + 1))
  done
done

# ---- compile reports: check --------------------------------------------------
for base in $stats; do
  pfx=$TMP/s.$base
  exp=$G/stats/$base.expected
  name=stats/$base
  rc=$(cat "$pfx.rc" 2>/dev/null || echo 255)
  check_health "$name" "$rc" "$pfx.err" || continue
  if [ "$rc" -ne 0 ]; then
    fail "$name" "exit status $rc: $(grep -m1 'error' "$pfx.err")"
    continue
  fi
  sed -E '/^time \(ms\):/s/[0-9]+(\.[0-9]+)?/N/g' "$pfx.out" >"$pfx.masked"
  if [ "$UPDATE" = 1 ]; then
    if ! cmp -s "$pfx.masked" "$exp"; then
      cp "$pfx.masked" "$exp"
      echo "updated tests/golden/stats/$base.expected"
    fi
    npass=$((npass + 1))
    continue
  fi
  if ! diff -u "$exp" "$pfx.masked" >"$TMP/diff"; then
    fail "$name" "report differs from tests/golden/stats/$base.expected (UPDATE=1 rewrites it):"
    sed -n '3,22p' "$TMP/diff" | sed 's/^/     /'
    continue
  fi
  npass=$((npass + 1))
done

# Goldens whose program is gone.
for e in "$G"/ir/*.expected; do
  [ -f "$e" ] || continue
  base=$(basename "$e" .expected)
  base=${base%.*}
  case $seen in *" $base "*) ;; *) fail "ir/$base" "stale golden tests/golden/ir/$(basename "$e"): no $base.tile" ;; esac
done

total=$((npass + nfail))
if [ "$nfail" -ne 0 ]; then
  echo "golden: $nfail of $total FAILED ($TILEC)"
  exit 1
fi
echo "golden: all $total passed ($TILEC)"
exit 0

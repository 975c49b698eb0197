#!/bin/sh
# tests/fuzz/regress.sh [FILES...] - replay the fuzzer's reproducers.
#
# Runs every tests/fuzz/crashes/fixed/*.tile (or the FILES given) through
#   build/bin/tilec --emit=tir|tokens|ast FILE      (10 s limit each)
# and, when build-fuzz/fuzz_frontend exists (sh tests/fuzz/run.sh builds it),
# through the sanitized fuzz target too.  A reproducer passes when every run
# exits 0 or 1 (no signal, no internal compiler error, no timeout) in under
# 5 s.  Exit status 1 when one fails (every reproducer here was fixed: a
# failure is a regression).
set -u
cd "$(dirname "$0")/../.." || exit 2
TILEC=${TILEC:-build/bin/tilec}
FUZZ=build-fuzz/fuzz_frontend
[ $# -gt 0 ] || set -- tests/fuzz/crashes/fixed/*.tile
fail=0
for f in "$@"; do
  why=""
  for e in tir tokens ast; do
    t0=$(date +%s)
    timeout 10 "$TILEC" --emit=$e "$f" >/dev/null 2>/tmp/regress.$$ </dev/null
    rc=$?
    t=$(( $(date +%s) - t0 ))
    if [ $rc -eq 124 ]; then why="$why $e:timeout"
    elif [ $rc -gt 1 ]; then why="$why $e:rc=$rc"
    elif [ $t -ge 5 ]; then why="$why $e:${t}s"
    fi
    grep -q 'internal compiler error' /tmp/regress.$$ && why="$why $e:ICE"
  done
  if [ -x "$FUZZ" ]; then
    if ! ASAN_OPTIONS=detect_leaks=1 timeout 60 "$FUZZ" -timeout=10 -rss_limit_mb=4096 "$f" >/tmp/regress.$$ 2>&1; then
      what=$(grep -v 'Running' /tmp/regress.$$ | grep -m1 -oE 'runtime error: .{0,60}|ERROR: [A-Za-z]+: [a-z-]+|fuzz_frontend: .{0,60}|Timeout|out-of-memory')
      why="$why sanitized:[${what:-failed}]"
    fi
  fi
  if [ -n "$why" ]; then echo "FAIL $f:$why"; fail=1; else echo "ok   $f"; fi
done
rm -f /tmp/regress.$$
exit $fail

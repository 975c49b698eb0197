#!/bin/sh
# tests/bench/run.sh - the benchmark report's tooling without a GPU:
# bench/png.py (the charts, no matplotlib) and bench/report.py (raw JSON of
# bench/run_all.sh -> tables, plots, the docs/perf.md section) on made-up
# figures; then bench/run_all.sh's own no-GPU path (it must say SKIP and
# exit 0). Plain python3, standard library only.
set -u
PY=${PYTHON:-python3}
if ! command -v "$PY" > /dev/null 2>&1; then
  if [ "${TILE_ALLOW_MISSING_TOOLS:-}" = 1 ]; then echo "SKIP bench: no $PY"; exit 0; fi
  echo "FAIL bench: no $PY"; exit 1
fi
fail=0
PYTHONDONTWRITEBYTECODE=1 "$PY" -m unittest discover -s tests/bench -p 'test_*.py' || fail=1
# without a GPU the runner says so and runs nothing (CI has none)
if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  T=$(mktemp -d "${TMPDIR:-/tmp}/tile_bench.XXXXXX") || exit 1
  out=$(OUT="$T/raw" bash bench/run_all.sh 2>&1); r=$?
  rm -rf "$T"
  case "$out" in
    SKIP*) [ $r = 0 ] && echo "ok bench/run_all.sh without a GPU: $out" || { echo "FAIL bench/run_all.sh: exit $r"; fail=1; } ;;
    *) echo "FAIL bench/run_all.sh without a GPU did not skip: $out"; fail=1 ;;
  esac
fi
[ $fail = 0 ] && echo "bench: all passed" || echo "bench: FAILED"
exit $fail

#!/bin/sh
# tests/ptx/oracles.sh - the PTX-level oracles (tests/ptx/oracles.py): small
# kernels and the examples compiled by tilec and run in a PTX simulator
# (tests/ptx/ptxsim.py) against values computed independently of the
# compiler: masked loads/stores at sizes that are not a multiple of the
# vector width stay inside the arrays, ring(i, S) slots and phases, TMA
# coordinate order ({col, row}), the swizzled shared-memory addresses of
# smem_store / smem_load / stmatrix.
#
#   B=build sh tests/ptx/oracles.sh [GROUP]     GROUP: masked, ring, tma, swizzle
#
# Needs python3: without it the checks fail, unless
# TILE_ALLOW_MISSING_TOOLS=1 (then they print SKIP).
set -u
B=${B:-build}
if ! command -v python3 > /dev/null 2>&1; then
  if [ "${TILE_ALLOW_MISSING_TOOLS:-0}" = 1 ]; then echo "SKIP oracle checks: no python3 (TILE_ALLOW_MISSING_TOOLS=1)"; exit 0; fi
  echo "FAIL oracle checks: no python3 (TILE_ALLOW_MISSING_TOOLS=1 skips them instead)"
  exit 1
fi
if [ ! -x "$B/bin/tilec" ]; then
  echo "FAIL oracle checks: $B/bin/tilec not found (build it first: make B=$B all)"
  exit 1
fi
exec python3 tests/ptx/oracles.py "$B/bin/tilec" "$@"

#!/bin/sh
# tests/jit/run.sh - the JIT builds every kernel the Makefile ships, with the
# same options: each tilec command of the cubin rules under `make examples`
# (the examples, the GEMMs, Jagged Flash Attention forward and backward, the
# primitives' and the wgmma-rate tests' kernels), run again with
# $B/tests/jit_tilec in place of tilec (tests/jit/jit_tilec.c: tilec's
# command line through tile_jit_compile_cubin), must give the cubin tilec
# gives, byte for byte: the build's own cubin when it is newer than $B's
# tilec (make test has just built them), else tilec run here into a
# temporary folder.  A tilec option that has no tile_jit_options field fails
# here.  Under the sanitizer build (TILE_SAN=1) every fourth command only:
# the same code, three times slower.
set -u
B=${B:-build}
JT=$B/tests/jit_tilec
T=${TMPDIR:-/tmp}/tile_jit_run.$$
mkdir -p "$T" || exit 1
trap 'rm -rf "$T"' EXIT
for x in "$JT" "$B/bin/tilec"; do
  [ -x "$x" ] || { echo "FAIL $x is missing (make $x)"; exit 1; }
done
# the commands make would run, without running them (its own options, not
# those of a make that called this script)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n -B B="$B" examples 2> "$T/make.err" |
  grep "^$B/bin/tilec " | grep -v -- "--emit=" | grep "\.cubin " | tr -d "'" > "$T/cmds"  # (make quotes -D values)
n=$(wc -l < "$T/cmds")
if [ "$n" -lt 40 ]; then
  echo "FAIL only $n tilec commands found in make -n examples:"; tail -n 3 "$T/make.err"; exit 1
fi
export TILE_CACHE_DIR="$T/cache"
# ptxas (CUDA 13.0) does not always write the same bytes for the same PTX:
# gemm_sm100_2cta.tile -D PAIRS=2 for sm_100a gives one of two cubins. So a
# JIT cubin that differs passes if one of 8 more tilec builds matches it.
same_as_some() {
  k=0
  while [ $k -lt 8 ]; do
    # shellcheck disable=SC2086
    "$B/bin/tilec" $(echo "$2" | sed "s|OUT|$3.again.cubin|") > /dev/null 2>&1 &&
      cmp -s "$1" "$T/$3.again.cubin" && return 0
    k=$((k + 1))
  done
  return 1
}
fail=0 ok=0 i=0
while read -r line; do
  i=$((i + 1))
  [ -n "${TILE_SAN:-}" ] && [ $((i % 4)) -ne 1 ] && continue
  # shellcheck disable=SC2086
  set -- $line
  shift
  args= ref=
  while [ $# -gt 0 ]; do
    if [ "$1" = -o ]; then ref=$2; args="$args -o $T/OUT"; shift 2; continue; fi
    args="$args $1"; shift
  done
  want=$T/$i.tilec.cubin
  if [ -f "$ref" ] && [ "$ref" -nt "$B/bin/tilec" ]; then want=$ref; fi
  # shellcheck disable=SC2086
  if [ "$want" != "$ref" ] && ! "$B/bin/tilec" $(echo "$args" | sed "s|OUT|$i.tilec.cubin|") > "$T/log" 2>&1; then
    echo "FAIL tilec could not build $ref:"; echo "  $line"; tail -n 5 "$T/log"; fail=1
  elif ! "$JT" $(echo "$args" | sed "s|OUT|$i.cubin|") > "$T/log" 2>&1; then
    echo "FAIL the JIT could not build $ref:"; echo "  $line"; tail -n 5 "$T/log"; fail=1
  elif ! cmp -s "$want" "$T/$i.cubin" && ! same_as_some "$T/$i.cubin" "$args" $i; then
    echo "FAIL the JIT's cubin differs from tilec's (8 builds) for:"; echo "  $line"; fail=1
  else
    ok=$((ok + 1))
  fi
done < "$T/cmds"
# a second run of one is a hit, with the same bytes
set -- $(head -n 1 "$T/cmds")
shift
args=$(echo "$*" | sed "s| -o [^ ]*| -o $T/again.cubin|")
# shellcheck disable=SC2086
if [ "$("$JT" $args 2>&1)" != hit ] || ! cmp -s "$T/1.cubin" "$T/again.cubin"; then
  echo "FAIL a second JIT build of the first kernel was not a cache hit with the same cubin"; fail=1
fi
[ $fail -eq 0 ] && echo "jit: all $ok shipped cubins built by the JIT, identical to tilec's" || echo "jit: FAILED"
exit $fail

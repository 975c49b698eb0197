#!/bin/bash
# session 29, call 1 (carry build-wx): OWN, each dQ block written first by its owner (the last KV block that adds
# into it) so that the accumulator needs no zeros: its A/B on J2 (causal, the shipped causal d128 kernel beside the
# own build), and on a causal 256 window over J1 and J2 (jfa_bwd_host --window 256: the shipped window cubin beside
# ab_var/own); the own builds' checks (every causal and window case, one 32k sequence among them: 512 items of one
# sequence, each waiting on the one before it), memcheck and racecheck at 7 CTAs
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
OWN=build-w/examples/ab_bwd/own; OWNV=build-w/examples/ab_var/own
el "A/B J2 (default ms / own ms)"
timeout 150 $H --cubins build-w/examples --bench $S --only J2 --ab $OWN --reps 30 > $OUT/ab_j2.txt 2>&1
echo "rc=$?"; grep -v "checked=" $OUT/ab_j2.txt; grep "checked=" $OUT/ab_j2.txt | grep -v " OK$"
el "A/B window 256 on J1, J2 (default ms / own ms)"
timeout 150 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --ab $OWNV --reps 30 > $OUT/ab_win.txt 2>&1
echo "rc=$?"; grep -v "checked=" $OUT/ab_win.txt; grep "checked=" $OUT/ab_win.txt | grep -v " OK$"
el "own: the full check's cases (causal and not, both head dims, deterministic too)"
for c in "32k" "random B=40 len" "mixed (empty" "B=20000" "len=777" "empty"; do
  timeout 90 $H --cubins $OWN --check --case "$c" > "$OUT/own_check_$c.txt" 2>&1
  echo "$c: rc=$? $(grep -v '^error' "$OUT/own_check_$c.txt" | grep -c ' OK$') OK"
  grep -v "^error\| OK$" "$OUT/own_check_$c.txt" | grep -v "^target\|^(no det" | tail -n 4
done
el "own window: every window case"
timeout 90 $H --cubins $OWNV --check --case window > $OUT/ownv_check.txt 2>&1
echo "rc=$?"; grep -v "^error" $OUT/ownv_check.txt | grep -c " OK$"; grep -v "^error\| OK$" $OUT/ownv_check.txt | tail -n 4
for tool in memcheck racecheck; do
  el "own $tool"
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $H --cubins $OWN --check --small --case causal \
    --ctas 7 > $OUT/own_$tool.txt 2>&1
  echo "rc=$?"; tail -n 2 $OUT/own_$tool.txt
done
el "A/B J2 again, and the window on J2 again (drift)"
timeout 100 $H --cubins build-w/examples --bench $S --only J2 --ab $OWN --reps 30 2>&1 | grep "^J2\|^ab"
timeout 100 $H --cubins build-w/examples --bench $S --only J2 --window 256 --ab $OWNV --reps 30 2>&1 | grep "^J2\|^ab"
el done

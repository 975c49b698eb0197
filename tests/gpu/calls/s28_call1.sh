#!/bin/bash
# session 28, call 1 (carry build-wx build-fa4a): the Hopper pair for broadcast-Q: its two A/B builds (hpmc:
# multicast only; hpair: multicast + the pair's dQ over DSMEM) beside the default on J4, interleaved; the full
# broadcast-Q check of hpair; memcheck, synccheck, racecheck of hpair's small broadcast-Q cases at 8 CTAs
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
mkdir -p /tmp/fa4 && cp build-fa4a/part.aa /tmp/fa4/
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
HP=build-w/examples/ab_bwd/hpair
el "A/B J4"
B=build-w OUT=$OUT AB_BWD="hpmc hpair" ONLY=J4 TBENCH=120 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep -v "^      fwd\|^suite"
el "hpair: every broadcast-Q case"
timeout 90 build-w/examples/jfa_bwd_host --cubins $HP --check --case bcast > $OUT/hp_check.txt 2>&1
echo "rc=$?"; grep -v "^error" $OUT/hp_check.txt | tail -n 12
for tool in memcheck synccheck racecheck; do
  el "hpair $tool"
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins $HP --check --small \
    --case bcast --ctas 8 > $OUT/hp_$tool.txt 2>&1
  echo "rc=$?"; tail -n 2 $OUT/hp_$tool.txt
done
python3 tests/gpu/racecheck_bulk.py $OUT/hp_racecheck.txt examples/jagged_attention 2>&1 | tail -n 5
el done

#!/bin/bash
# session 28, call 3 (carry build-wx): the Hopper pair with its lists dealt round robin in dyn_order's order
# (call 1 had the scheduler's lists: hpmc 0.776x, hpair 0.662x on J4): hps (the pair's lists alone), hpmc
# (+ multicast), hpair (+ the pair's dQ over DSMEM), each interleaved beside the default on J4; hpair's
# broadcast-Q checks and its sanitizers; ncu of hpmc's main kernel on J4
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib
HP=build-w/examples/ab_bwd/hpair
el "A/B J4"
B=build-w OUT=$OUT AB_BWD="hps hpmc hpair" ONLY=J4 TBENCH=120 sh tests/gpu/jfa_bwd.sh ab 2>&1 | grep -v "^      fwd\|^suite"
el "hpair: every broadcast-Q case"
timeout 90 build-w/examples/jfa_bwd_host --cubins $HP --check --case bcast > $OUT/hp_check.txt 2>&1
echo "rc=$?"; grep -v "^error" $OUT/hp_check.txt | grep -c " OK$"; grep -v "^error\| OK$" $OUT/hp_check.txt | tail -n 4
for tool in memcheck synccheck racecheck; do
  el "hpair $tool"
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 build-w/examples/jfa_bwd_host --cubins $HP --check --small \
    --case bcast --ctas 8 > $OUT/hp_$tool.txt 2>&1
  echo "rc=$?"; tail -n 2 $OUT/hp_$tool.txt
done
el "ncu: hpmc's main kernel on J4 (if the call is under 200 s)"
[ $(( $(date +%s) - t0 )) -lt 200 ] && B=build-w OUT=$OUT/prof SUITES="J4" KERNEL=bwd CUBINS=build-w/examples/ab_bwd/hpmc TPROF=100 bash tests/gpu/profile.sh 2>&1 | tail -n 30
(cd $OUT && tar czf prof.tgz prof && rm -rf prof)
el done

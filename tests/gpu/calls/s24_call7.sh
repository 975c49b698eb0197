#!/bin/bash
# session 24, call 7 (right after call 6): FA4 installed; the final shipped kernels beside FA4, every suite, twice
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
t0=$(date +%s); el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || { echo "no build-w: not the warm machine"; exit 3; }
cp build-fa4b/*part* build-fa4b/*.whl /tmp/fa4/ && cd /tmp/fa4 && cat part.* > nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl && rm part.* &&
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site *.whl > $OUT/pip.txt 2>&1; echo "pip $?"; cd - >/dev/null
export LD_LIBRARY_PATH=build-w/lib PYTHONUNBUFFERED=1
for k in 1 2; do
  el "run $k: shipped beside FA4, every suite"; nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
  timeout 150 python3 tests/gpu/side_by_side.py --lib build-w/lib/libjfa.so --suites build-w/shared-bench/suites --cubins build-w/examples \
    --bwd --peer fa4 --json $OUT/sbs_$k.json > $OUT/sbs_$k.txt 2>&1; echo rc=$?
  grep -v "Warning\|exe_args\|^\s*$\|warn" $OUT/sbs_$k.txt | tail -n 6
done
el done

#!/bin/sh
# scripts/gpu_slim_bundle.sh - the GPU machine's slim bundle (under the 64 MiB carry): build-w with the
# hosts, the sm_90a cubins, the A/B folders named by AB (build/examples/ab_bwd/NAME), libjfa.so, libtilert,
# cmocka and ../shared/bench, packed as build-wx/w.tar.xz (carry build-wx; unpack there with
# `tar xJf build-wx/w.tar.xz`, then run with B=build-w LD_LIBRARY_PATH=build-w/lib).
#   make all && make jfa-bwd-ab JFA_BWD_AB=q64:Q80=false && AB=q64 sh scripts/gpu_slim_bundle.sh
set -eu
cd "$(dirname "$0")/.."
mkdir -p build-wx
B=build; W=build-w
rm -rf $W && mkdir -p $W/examples $W/lib $W/examples/ab_bwd
cp $B/examples/*_host $W/examples/ 2>/dev/null || true
rm -f $W/examples/*_jit*
cp $B/examples/*.sm_90a.cubin $W/examples/
for d in ${AB:-}; do cp -r $B/examples/ab_bwd/$d $W/examples/ab_bwd/; done
[ -d $B/examples/ab_var ] && cp -r $B/examples/ab_var $W/examples/ab_var   # make jfa-var-ab
for d in ${AB_FWD:-}; do mkdir -p $W/examples/ab && cp -r $B/examples/ab/$d $W/examples/ab/; done   # make jfa-ab
cp -r ../shared/bench $W/shared-bench
cp -L /usr/lib/x86_64-linux-gnu/libcmocka.so.0 $W/lib/
cp -L $B/lib/libtilert.so.0 $W/lib/
if [ -x $B/gpu/test_prims ]; then   # make prims: the primitives' checks (tests/gpu/prims)
  mkdir -p $W/tests/prims && cp $B/gpu/test_prims $W/tests/ && cp $B/tests/prims/*.cubin $W/tests/prims/
fi
gcc -std=c11 -D_GNU_SOURCE -O2 -fPIC -Iinclude -Icompiler -Ibuild/gen -shared examples/jagged_attention/jfa.c examples/jagged_attention/jfa_bwd.c examples/jagged_attention/jfa_check.c -o $W/lib/libjfa.so $B/lib/libtilert.a -ldl -lpthread -lm
tar cJf build-wx/w.tar.xz $W
du -sh $W build-wx/w.tar.xz

#!/bin/sh
# tests/gpu/jfa_bwd.sh - Jagged Flash Attention's backward pass on the GPU:
# the correctness cases (float64 reference, both modes), compute-sanitizer
# on small ones, the benchmark suites. Build here with `make gpu-bundle`,
# run on the GPU machine with B=build-gpu carried:
#   B=build-gpu OUT=$OUT sh tests/gpu/jfa_bwd.sh [small] [check] [san] [bench] [ab] [fwd] [peers]
# (ab: the small cases with each backward option of $B/examples/ab_bwd/*
#  (make jfa-bwd-ab; AB_BWD="ss" picks), then the suites with the option's
#  backward timed interleaved with the default's, both sampled-checked;
#  fwd: the forward's small cases, after a compiler change; peers: peers.py
#  (FA2 varlen, dense cuDNN; PEERS=...) for their backward in the same call;
#  sbs: ours beside the peer in one Python process (tests/gpu/side_by_side.py
#  --bwd: backward and training step alternating, gradients compared);
#  PEER=fa4 makes FlashAttention-4 the peer, its wheels installed in
#  /tmp/site first as ../shared/bench/fa4_wheels.sh says)
# Each step runs under a time limit (a hang must not eat the device call).
B=${B:-build}
OUT=${OUT:-/tmp/jfa-bwd-out}
mkdir -p "$OUT"
steps=${*:-small check san bench}
rc=0
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
H="$B/examples/jfa_bwd_host"
for s in $steps; do
  case $s in
  small)
    echo "== jfa bwd: small cases"
    timeout ${TSMALL:-60} "$H" --cubins "$B/examples" --check --small > "$OUT/bwd_small.txt" 2>&1
    r=$?; grep -v " OK$" "$OUT/bwd_small.txt" | tail -n 20
    [ $r = 0 ] || { echo "small: exit $r$([ $r = 124 ] && echo ', timed out: a hang')"; rc=1; } ;;
  check)
    echo "== jfa bwd: correctness"
    timeout ${TCHECK:-240} "$H" --cubins "$B/examples" --check > "$OUT/bwd_check.txt" 2>&1
    r=$?; grep -v " OK$" "$OUT/bwd_check.txt" | tail -n 30; grep -c " OK$" "$OUT/bwd_check.txt"
    [ $r = 0 ] || { echo "check: exit $r$([ $r = 124 ] && echo ', timed out')"; rc=1; } ;;
  san)
    for tool in memcheck racecheck synccheck; do
      echo "== jfa bwd: compute-sanitizer $tool (small cases)"
      timeout ${TSAN:-150} compute-sanitizer --tool $tool --error-exitcode 9 "$H" --cubins "$B/examples" --check --small \
        > "$OUT/bwd_san_$tool.txt" 2>&1
      r=$?; tail -n 3 "$OUT/bwd_san_$tool.txt"
      # racecheck does not order bulk copies by their mbarrier (FUSE_POST's bulk_load): those pairs alone pass
      [ $tool = racecheck ] && [ $r = 9 ] && python3 tests/gpu/racecheck_bulk.py "$OUT/bwd_san_$tool.txt" examples && r=0
      [ $r = 0 ] || { echo "sanitizer $tool: exit $r"; rc=1; }
    done ;;
  bench)
    echo "== jfa bwd: benchmark suites"
    timeout ${TBENCH:-180} "$H" --cubins "$B/examples" --bench "$B/shared-bench/suites" ${ONLY:+--only $ONLY} \
      > "$OUT/bwd_bench.txt" 2>&1
    r=$?; grep -v "checked=" "$OUT/bwd_bench.txt"; grep "checked=" "$OUT/bwd_bench.txt" | grep -v " OK$"
    [ $r = 0 ] || { echo "bench: exit $r$([ $r = 124 ] && echo ', timed out')"; rc=1; } ;;
  ab)
    for d in ${AB_BWD:-$(ls "$B/examples/ab_bwd" 2>/dev/null)}; do
      dir="$B/examples/ab_bwd/$d"
      echo "== jfa bwd: option $d: small cases"
      timeout ${TSMALL:-60} "$H" --cubins "$dir" --check --small > "$OUT/bwd_ab_${d}_small.txt" 2>&1
      r=$?; grep -v " OK$" "$OUT/bwd_ab_${d}_small.txt" | tail -n 6
      [ $r = 0 ] || { echo "$d: small cases exit $r$([ $r = 124 ] && echo ', timed out: a hang')"; rc=1; continue; }
      echo "== jfa bwd: option $d beside the default (interleaved)"
      timeout ${TBENCH:-180} "$H" --cubins "$B/examples" --bench "$B/shared-bench/suites" --ab "$dir" \
        ${ONLY:+--only $ONLY} > "$OUT/bwd_ab_$d.txt" 2>&1
      r=$?; grep -v "checked=" "$OUT/bwd_ab_$d.txt"; grep "checked=" "$OUT/bwd_ab_$d.txt" | grep -v " OK$"
      [ $r = 0 ] || { echo "$d: bench exit $r"; rc=1; }
    done ;;
  fwd)
    echo "== jfa forward: small cases"
    timeout ${TSMALL:-60} "$B/examples/jfa_host" --cubins "$B/examples" --check --small > "$OUT/fwd_small.txt" 2>&1
    r=$?; grep -v " OK$" "$OUT/fwd_small.txt" | grep -v "^error:" | tail -n 6
    [ $r = 0 ] || { echo "fwd small: exit $r"; rc=1; } ;;
  peers)
    echo "== peers (backward = fwd+bwd - fwd)"
    timeout ${TPEERS:-150} python3 "$B/shared-bench/peers.py" "$B/shared-bench/suites" --peers ${PEERS:-varlen,dense} \
      --json "$OUT/peers.json" > "$OUT/peers.txt" 2>&1
    r=$?; grep -v "Warning\|warn" "$OUT/peers.txt" | tail -n 14
    [ $r = 0 ] || { echo "peers: exit $r"; rc=1; } ;;
  sbs)
    echo "== jfa bwd: ours beside ${PEER:-the best PyTorch peer} (one process)"
    timeout ${TSBS:-300} python3 tests/gpu/side_by_side.py --bwd --lib "$B/lib/libjfa.so" --cubins "$B/examples" \
      --suites "$B/shared-bench/suites" ${PEER:+--peer $PEER} ${ONLY:+--only $ONLY} --json "$OUT/bwd_sbs.json" \
      > "$OUT/bwd_sbs.txt" 2>&1
    r=$?; grep -v "Warning\|warn" "$OUT/bwd_sbs.txt" | tail -n 12
    [ $r = 0 ] || { echo "sbs: exit $r"; rc=1; } ;;
  *) echo "unknown step $s"; rc=2 ;;
  esac
done
exit $rc

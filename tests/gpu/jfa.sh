#!/bin/sh
# tests/gpu/jfa.sh - Jagged Flash Attention on the GPU: the correctness
# cases, compute-sanitizer on small ones, the benchmark suites, and the peers
# (PyTorch's jagged paths) in the same run. Build here with `make gpu-bundle`,
# run on the GPU machine with B=build-gpu carried:
#   B=build-gpu OUT=$OUT sh tests/gpu/jfa.sh [check] [san] [bench] [peers] [sbs] [ab] [abi] [alloc] [variants]
#     [blocksparse]
# (blocksparse: block-sparse attention's checks, forward and backward, the
#  sanitizers on its small cases, then its rows beside FlexAttention)
# (sbs: ours beside the peers in one Python process, tests/gpu/side_by_side.py)
# (ab: the default kernel, then each option built by `make jfa-ab`, one
#  process each; abi: the small cases per option, then ONE process that
#  times the default and every option interleaved on each suite
#  (jfa_host --ab), so clock/thermal drift hits all alike: its `ab SUITE
#  NAME ms TFLOP/s RATIOx` lines, RATIO = default ms / option ms;
#  AB="order_wait skip_idle" runs only those, for ab and abi)
B=${B:-build}
OUT=${OUT:-/tmp/jfa-out}
mkdir -p "$OUT"
steps=${*:-check san bench peers}
rc=0
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
# the option folders: AB="name1 name2", or every folder of $B/examples/ab ("all" last)
ab_opts() {
  if [ -n "${AB:-}" ]; then
    for a in $AB; do echo "$B/examples/ab/$a"; done
  else
    ls -d "$B"/examples/ab/* 2>/dev/null | grep -v '/all$'; ls -d "$B"/examples/ab/all 2>/dev/null
  fi
}
# small_check DIR NAME LOG SUFFIX: the small correctness cases of one cubin
# folder under a time limit (TCHECK seconds: an option that deadlocks must
# not eat the device call); on failure print why and return 1
small_check() {
  timeout ${TCHECK:-40} "$B/examples/jfa_host" --cubins "$1" --check --small > "$3" 2>&1
  r=$?
  [ $r = 0 ] && return 0
  echo "$2: the small correctness cases FAILED (exit $r$([ $r = 124 ] && echo ', timed out: a hang'))$4"
  grep FAIL "$3" | head -3; tail -n 2 "$3"
  return 1
}
for s in $steps; do
  case $s in
  check)
    echo "== jfa: correctness"
    timeout ${TCHECK_ALL:-150} "$B/examples/jfa_host" --cubins "$B/examples" --check 2>&1 | tee "$OUT/jfa_check.txt" || rc=1 ;;
  san)
    for tool in memcheck racecheck synccheck; do
      echo "== jfa: compute-sanitizer $tool (small cases)"
      timeout ${TSAN:-150} compute-sanitizer --tool $tool --error-exitcode 9 "$B/examples/jfa_host" --cubins "$B/examples" --check --small \
        >"$OUT/jfa_san_$tool.txt" 2>&1
      r=$?; tail -n 3 "$OUT/jfa_san_$tool.txt"; [ $r = 0 ] || { echo "sanitizer $tool: exit $r"; rc=1; }
    done ;;
  bench)
    echo "== jfa: benchmark suites"
    timeout ${TBENCH:-90} "$B/examples/jfa_host" --cubins "$B/examples" --bench "$B/shared-bench/suites" 2>&1 | tee "$OUT/jfa_bench.txt" || rc=1 ;;
  ab)
    # the default kernel, then each option of $B/examples/ab/* (make jfa-ab),
    # in one run: every suite's time and sampled correctness. Each run has a
    # time limit (a kernel option that deadlocks must not eat the device
    # call): TCHECK seconds for the small cases, TBENCH for the suites.
    echo "== jfa: A/B of the kernel options (same run)"
    # AB="name1 name2" picks options (default: every folder of $B/examples/ab)
    opts=$(ab_opts)
    for d in "$B/examples" $opts; do
      [ -d "$d" ] || continue
      name=$(basename "$d"); [ "$d" = "$B/examples" ] && name=default
      # the short edge cases first (empty, length 1, 64, 65, 127.., broadcast nq=70)
      small_check "$d" "$name" "$OUT/jfa_ab_${name}_check.txt" "" || { rc=1; continue; }
      timeout ${TBENCH:-90} "$B/examples/jfa_host" --cubins "$d" --bench "$B/shared-bench/suites" > "$OUT/jfa_ab_$name.txt" 2>&1
      r=$?
      [ $r = 0 ] || { echo "$name: bench exit $r$([ $r = 124 ] && echo ', timed out: a hang')"; rc=1; }
      grep -E "^(J[0-9]|D8k) " "$OUT/jfa_ab_$name.txt" | grep -v "checked=" | sed "s/^/$name /"
      grep -q "ALL OK" "$OUT/jfa_ab_$name.txt" || { echo "$name: a sampled check FAILED"; rc=1; }
    done ;;
  abi)
    # interleaved A/B: the small correctness cases per option (TCHECK
    # seconds each; an option that fails them is left out), then one run of
    # the suites with every remaining option beside the default, timed round
    # robin in the same process (8 options a process, more in further groups; TBENCH_ABI seconds each)
    echo "== jfa: interleaved A/B of the kernel options (one process)"
    opts=$(ab_opts)
    lists=""; list=""; n=0; failed=""
    for d in $opts; do
      [ -d "$d" ] || { echo "$d: no such option folder"; rc=1; continue; }
      name=$(basename "$d")
      small_check "$d" "$name" "$OUT/jfa_abi_${name}_check.txt" ": left out" || { rc=1; failed="$failed $name"; continue; }
      # jfa_host --ab takes 8 options: more run as further interleaved groups
      if [ $n = 8 ]; then lists="$lists $list"; list=""; n=0; fi
      list="$list${list:+,}$d"; n=$((n + 1))
    done
    [ -n "$list" ] && lists="$lists $list"
    [ -n "$failed" ] && echo "options left out (small cases failed):$failed"
    [ -n "$lists" ] || { echo "no option to compare (none built, or all failed the small cases)"; rc=1; }
    g=0
    for list in $lists; do
      g=$((g + 1)); log="$OUT/jfa_abi$([ $g -gt 1 ] && echo _$g).txt"
      timeout ${TBENCH_ABI:-300} "$B/examples/jfa_host" --cubins "$B/examples" --bench "$B/shared-bench/suites" \
        --ab "$list" > "$log" 2>&1
      r=$?
      grep -E "^(suite|#  suite|J[0-9]+|D8k|ab) " "$log" | grep -v "checked="
      [ $r = 0 ] || { echo "abi: exit $r$([ $r = 124 ] && echo ', timed out: a hang')"; tail -n 3 "$log"; rc=1; }
      grep -q "ALL OK" "$log" || { echo "abi: a sampled check FAILED (see $log)"; rc=1; }
    done ;;
  alloc)
    # J2 on eight differently placed buffer sets in one process (was bimodal
    # between processes: is it where the tensors land?)
    echo "== jfa: J2 with the buffers placed eight ways"
    timeout ${TBENCH:-90} "$B/examples/jfa_host" --cubins "$B/examples" --bench "$B/shared-bench/suites" --only J2 \
      --allocs 8 2>&1 | grep -v "checked=" | tee "$OUT/jfa_alloc.txt" || rc=1 ;;
  variants)
    # the forward variants (issue 17) beside FA4 (when carried: /tmp/site)
    # and FA2 varlen, one process, effective TFLOP/s over the kept pairs
    echo "== jfa: forward variants beside FA4 / FA2 varlen (one process)"
    timeout ${TVAR:-300} python3 tests/gpu/side_by_side.py --lib "$B/lib/libjfa.so" --cubins "$B/examples" \
      --suites "$B/shared-bench/suites" --variant "${VARIANTS:-window:256,window:1024,softcap:30,alibi:1}" \
      --only "${ONLY:-J1,J2}" --rounds 4 ${VBWD:+--bwd-variants} --json "$OUT/variants.json" > "$OUT/variants.txt" 2>&1
    r=$?; grep -v Warning "$OUT/variants.txt" | tail -n 20
    [ $r = 0 ] || { echo "variants: exit $r"; rc=1; } ;;
  blocksparse)
    # block-sparse attention (variants/blocksparse.tile): the float64 checks
    # of both passes (random 50% masks, none, all, per batch and per
    # sequence, causal and not, split-size and B = 20000 batches), the
    # sanitizers on the forward's small cases, then forward + backward
    # beside FlexAttention with the same random 50% block masks (one process)
    echo "== jfa: block-sparse attention"
    for e in jfa jfa_bwd; do
      timeout ${TCHECK_ALL:-150} "$B/examples/${e}_host" --cubins "$B/examples" --check --blocksparse \
        > "$OUT/blocksparse_${e}_check.txt" 2>&1
      r=$?; grep -c " OK$" "$OUT/blocksparse_${e}_check.txt" | sed "s/^/$e: checks OK: /"
      grep FAIL "$OUT/blocksparse_${e}_check.txt" | head -5; tail -n 1 "$OUT/blocksparse_${e}_check.txt"
      [ $r = 0 ] || { echo "blocksparse $e check: exit $r"; rc=1; }
    done
    for tool in memcheck racecheck synccheck; do
      timeout ${TSAN:-150} compute-sanitizer --tool $tool --error-exitcode 9 "$B/examples/jfa_host" --cubins "$B/examples" \
        --check --small --blocksparse > "$OUT/blocksparse_san_$tool.txt" 2>&1
      r=$?; echo "sanitizer $tool: $(tail -n 1 "$OUT/blocksparse_san_$tool.txt")"; [ $r = 0 ] || { echo "sanitizer $tool: exit $r"; rc=1; }
    done
    timeout ${TVAR:-400} python3 tests/gpu/side_by_side.py --lib "$B/lib/libjfa.so" --cubins "$B/examples" \
      --suites "$B/shared-bench/suites" --variant "${BSVARIANTS:-blocksparse:0.5,blocksparse_causal:0.5}" \
      --only "${ONLY:-J1,J2}" --rounds 4 --bwd-variants --json "$OUT/blocksparse.json" > "$OUT/blocksparse.txt" 2>&1
    r=$?; grep -v Warning "$OUT/blocksparse.txt" | tail -n 12
    [ $r = 0 ] || { echo "blocksparse bench: exit $r"; rc=1; } ;;
  sbs)
    # ours and the best peer in ONE process, one protocol (peers.py's bench),
    # alternating: first from a cooled GPU (1 s idle before every
    # measurement, as peers.py's runs between set-ups), then back to back
    # (the GPU at its power cap): tests/gpu/side_by_side.py
    echo "== jfa: side by side with the peers (one process; cool start, then back to back)"
    for mode in "cool 4 1" "hot 8 0"; do
      set -- $mode
      timeout ${TSBS:-240} python3 tests/gpu/side_by_side.py --lib "$B/lib/libjfa.so" --cubins "$B/examples" \
        --suites "$B/shared-bench/suites" --rounds $2 --gap $3 --json "$OUT/sbs_$1.json" > "$OUT/sbs_$1.txt" 2>&1
      r=$?
      echo "-- $1"; grep -v Warning "$OUT/sbs_$1.txt"
      [ $r = 0 ] || { echo "side_by_side ($1): exit $r"; rc=1; }
    done ;;
  peers)
    echo "== peers (PyTorch) on the same suites"
    python3 "$B/shared-bench/peers.py" "$B/shared-bench/suites" ${PEERS:+--peers $PEERS} --json "$OUT/peers.json" 2>&1 | tee "$OUT/peers.txt" || rc=1 ;;
  esac
done
exit $rc

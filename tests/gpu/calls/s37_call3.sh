#!/bin/bash
# session 37, call 3 (carry build-wx: `make jfa-bwd-ab JFA_BWD_AB=tl:TIMELINE=true && make jfa-var-ab
# JFA_VAR_AB=tl:TIMELINE=true && AB=tl sh scripts/gpu_slim_bundle.sh`): where the backward's time goes outside
# its items. The thirty-second session's timelines put J1's items at about 9.9 ms a CTA (15,888 items of 82 us
# over 132 CTAs) against a 12.8-13.3 ms backward. Here: each CTA's span (its first item's begin to its last
# item's end) beside the whole backward's host-clock time in the same launch, and Nsight Compute's duration of
# each kernel (pre, main, post) of one backward per suite.
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader -lms 250 > $OUT/clocks.txt &
CLK=$!
el "every suite against the TIMELINE build, then one timed launch with the stamps"
timeout 200 $H --cubins build-w/examples --bench $S --only J1,J2,J3,J4,D8k --reps 5 --ab build-w/examples/ab_bwd/tl \
  --timeline $OUT/tl 2>&1 | grep "^J\|^D\|^ab\|FAIL\|rror\|timeline: [JD]"
el "window 256, J1"
timeout 90 $H --cubins build-w/examples --bench $S --only J1 --window 256 --reps 5 --ab build-w/examples/ab_var/tl \
  --timeline $OUT/tlw 2>&1 | grep "^J\|^ab\|FAIL\|rror\|timeline: [JD]"
kill $CLK
awk -F, '{print $1+0}' $OUT/clocks.txt | sort -n | awk '{a[NR]=$1} END {printf "SM clock samples: %d, min %d, p10 %d, median %d, p90 %d, max %d MHz\n", NR, a[1], a[int(NR*0.1)+1], a[int(NR*0.5)+1], a[int(NR*0.9)], a[NR]}'
MHZ=$(awk -F, '{print $1+0}' $OUT/clocks.txt | sort -n | awk '{a[NR]=$1} END {print a[int(NR*0.5)+1]}')
el "timelines at $MHZ MHz (the median of the sampled SM clock)"
for f in $OUT/tl.*.csv $OUT/tlw.*.csv; do
  case $f in *steps.csv) continue ;; esac
  python3 tests/gpu/timeline.py $f --mhz $MHZ | grep -v "^  \|^phase\|^kv_wait\|^load\|^issue_lag\|^end_"
done
el "Nsight Compute: each kernel's duration, one backward a suite (clocks left alone)"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
for s in J1 J2 D8k; do
  timeout 120 $NCU --clock-control none --kernel-name regex:^jfa_bwd --launch-skip 3 --launch-count 3 \
    --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second $H --cubins build-w/examples --bench $S \
    --only $s --reps 1 > $OUT/ncu.$s.txt 2>&1
  echo "$s: $(grep -E '^  jfa_bwd|gpu__time_duration|per_second' $OUT/ncu.$s.txt | awk '{print $1, $NF}' | tr '\n' ' ')"
done
el done

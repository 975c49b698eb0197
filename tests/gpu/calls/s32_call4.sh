#!/bin/bash
# session 32, call 4 (carry build-wx with ab_bwd/tl and ab_var/tl, the 16-field TIMELINE): call 3 again with
# the end of an item split (last MMAs, staging, the copies' reads), the 256 window's timelines (call 3's
# failed: its ab_var/tl was built before the no-buffer guard), and J1's lengths under a causal mask (J1c),
# whose steps call 3's J1/J2 difference asks about
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
python3 - "$S" <<'PY'
import json, sys
d = sys.argv[1]
js = json.load(open(d + "/suites.json"))
j1 = [s for s in js if s["name"] == "J1"][0]
c = dict(j1); c["name"] = "J1c"; c["causal"] = True
js.append(c)
json.dump(js, open(d + "/suites.json", "w"), indent=1)
PY
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader -lms 250 > $OUT/clocks.txt &
CLK=$!
el "J1, J2, J1c against the TIMELINE build"
timeout 150 $H --cubins build-w/examples --bench $S --only J1,J2,J1c --reps 5 --ab build-w/examples/ab_bwd/tl \
  --timeline $OUT/tl 2>&1 | grep "^J\|^ab\|FAIL\|rror\|timeline"
el "window 256, J1 and J2"
timeout 100 $H --cubins build-w/examples --bench $S --only J1,J2 --window 256 --reps 5 --ab build-w/examples/ab_var/tl \
  --timeline $OUT/tlw 2>&1 | grep "^J\|^ab\|FAIL\|rror\|timeline"
kill $CLK
MHZ=$(awk -F, '{print $1+0}' $OUT/clocks.txt | sort -n | awk '{a[NR]=$1} END {print a[int(NR*0.9)]}')
el "timelines at $MHZ MHz (the 90th percentile of the sampled SM clock)"
for f in $OUT/tl*.csv; do python3 tests/gpu/timeline.py $f --mhz $MHZ; done
el done

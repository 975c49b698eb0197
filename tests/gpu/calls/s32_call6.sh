#!/bin/bash
# session 32, call 6 (carry build-wx with ab_bwd/tl: TIMELINE with the steps' waits): why J1's steps (not
# causal) cost 2.24 us and J1c's 1.84 (calls 4-5). Per step: the consumers' waits for the Q block, the other
# warpgroup and the dQ stage; the reducer's wait and work. J1, J1c and J2; the csvs stay on the GPU machine
# (tens of MB), their summaries come back
set -u
. tests/gpu/calls/lib.sh
H=build-w/examples/jfa_bwd_host; S=build-w/shared-bench/suites
python3 - "$S" <<'PY'
import json, sys
d = sys.argv[1]
js = json.load(open(d + "/suites.json"))
c = dict([s for s in js if s["name"] == "J1"][0]); c["name"] = "J1c"; c["causal"] = True
js.append(c)
json.dump(js, open(d + "/suites.json", "w"), indent=1)
PY
mkdir -p /tmp/tlout
el "J1, J2, J1c with the TIMELINE build"
timeout 150 $H --cubins build-w/examples --bench $S --only J1,J2,J1c --reps 3 --ab build-w/examples/ab_bwd/tl \
  --timeline /tmp/tlout/tl 2>&1 | grep "^J\|^ab\|FAIL\|rror"
for s in J1 J1c J2; do
  python3 tests/gpu/timeline.py /tmp/tlout/tl.$s.csv --mhz 1980 --steps /tmp/tlout/tl.$s.steps.csv | tee $OUT/tl.$s.txt
done
el done

#!/bin/bash
# session 32, call 5 (carry build-wx with ab_bwd/tl and ab_bwd/tlno = TIMELINE without OWN): why J1's steps
# (not causal) cost 2.24 us and J1c's (the same lengths, causal) 1.84 (call 4). J1c's timeline without OWN
# (its dQ accumulator zeroed by jfa_bwd_pre and read back, as J1's is): if its steps come to about J1's, the
# accumulator's zeros are the difference
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
for ab in tlno tl; do
  el "J1c against $ab"
  timeout 60 $H --cubins build-w/examples --bench $S --only J1c --reps 5 --ab build-w/examples/ab_bwd/$ab \
    --timeline $OUT/$ab 2>&1 | grep "^J\|^ab\|FAIL\|rror\|timeline"
done
for f in $OUT/tl*.csv; do python3 tests/gpu/timeline.py $f --mhz 1980 | head -14; done
el done

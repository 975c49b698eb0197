#!/bin/bash
# tests/gpu/clocks.sh - SM clock and board power while each phase runs:
# the wgmma rate loop, our JFA on D8k and J1, dense cuDNN on D8k. Tells
# whether a sustained benchmark is power-limited (a lower clock than a
# single cold launch) and whether ours and the peer run at the same clock.
#   make gpu-bundle (here); run: OUT=$OUT bash tests/gpu/clocks.sh  (carry build-gpu)
# Prints, per phase: seconds, median SM clock (MHz), median power (W),
# and the clock-event reasons seen. Logs: $OUT/smi.csv, $OUT/clocks_*.txt.
set -u
B=${B:-build-gpu}
OUT=${OUT:-/tmp/clocks}
CUBINS=${CUBINS:-$B/examples}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
nvidia-smi -q -d POWER,CLOCK,PERFORMANCE > "$OUT/smi_q.txt" 2>&1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader,nounits -lms 20 > "$OUT/smi.csv" 2>&1 &
smi=$!
marks="$OUT/marks.txt"; : > "$marks"
phase() { # phase NAME CMD...: run CMD, note its start and end (epoch s)
  local name=$1; shift
  local a=$(date +%s.%N)
  "$@" > "$OUT/clocks_$name.txt" 2>&1
  echo "$name $a $(date +%s.%N)" >> "$marks"
  sleep 2
}
sleep 1
phase idle sleep 2
phase rate "$B/tests/rate/wgmma_rate" "$B/tests/rate/wgmma_rate.d128.bx0.both.cubin"
phase jfa_D8k "$B/examples/jfa_host" --cubins "$CUBINS" --bench "$B/shared-bench/suites" --only D8k --reps ${REPS:-800}
phase cudnn_D8k python3 tests/gpu/cudnn_loop.py ${SECS:-4}
phase jfa_J1 "$B/examples/jfa_host" --cubins "$CUBINS" --bench "$B/shared-bench/suites" --only J1 --reps ${REPS:-800}
phase fa2_J1 python3 "$B/shared-bench/peers.py" "$B/shared-bench/suites" --only J1 --peers varlen
kill $smi; wait $smi 2>/dev/null
python3 - "$OUT/smi.csv" "$marks" <<'PY'
import sys, datetime, statistics
rows = []
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    if len(f) < 5: continue
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((t, float(f[1]), float(f[2]), f[3], f[4]))
    except ValueError:
        pass
print("phase          s   samples  SM MHz (med, min)   power W (med, max)  reasons")
for line in open(sys.argv[2]):
    name, a, b = line.split(); a = float(a); b = float(b)
    # the middle of the phase, past start-up (module load, python import)
    lo = a + 0.3 * (b - a); hi = b - 0.05 * (b - a)
    s = [r for r in rows if lo <= r[0] <= hi]
    if not s:
        print(f"{name:12s} {b-a:5.1f}  no samples"); continue
    clk = [r[1] for r in s]; pw = [r[2] for r in s]
    why = sorted(set(r[4] for r in s))
    print(f"{name:12s} {b-a:5.1f} {len(s):7d}  {statistics.median(clk):7.0f} {min(clk):6.0f}      {statistics.median(pw):7.1f} {max(pw):6.1f}   {' '.join(why)}")
PY
grep -E "^(J1|D8k) " "$OUT/clocks_jfa_D8k.txt" "$OUT/clocks_jfa_J1.txt" | grep -v checked=
cat "$OUT/clocks_cudnn_D8k.txt"; grep -E "D8k|J1" "$OUT/clocks_fa2_J1.txt" | tail -2

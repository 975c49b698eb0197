#!/bin/sh
# tests/gpu/rate/run.sh - the wgmma rate of JFA's KV-loop products for
# 128, 144, 160 and 192 keys per block (wgmma_rate.tile), interleaved in one
# process. Build here (make gpu-bundle), run on the GPU machine with
# build-gpu carried:  B=build-gpu sh tests/gpu/rate/run.sh
B=${B:-build-gpu}
export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"
R=$B/tests/rate
for mode in both qk pv; do
  "$R/wgmma_rate" $(for bx in 0 16 32 64; do echo "$R/wgmma_rate.d128.bx$bx.$mode.cubin"; done) || exit 1
done
"$R/wgmma_rate" $(for bx in 0 32; do echo "$R/wgmma_rate.d64.bx$bx.both.cubin"; done)

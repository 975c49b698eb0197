#!/bin/sh
# tests/gpu/profile_attn.sh - Nsight Compute on the fused-attention forward,
# Tile's default and .fb32 builds beside Triton's tutorial kernel, one launch
# each (tests/gpu/profile_attn.py), 4x16x1024x128 f16 unless SHAPE says
# otherwise: duration, instructions, tensor-pipe and issue activity, and the
# stall reasons a issued instruction. On the GPU machine, with build-tut:
#   B=build-tut sh tests/gpu/profile_attn.sh     (docs/perf.md, 2026-12-04)
set -u
B=${B:-build-tut}
SHAPE=${SHAPE:-4 16 1024 128}
S=smsp__average_warps_issue_stalled
M=""
for r in barrier long_scoreboard wait math_pipe_throttle mio_throttle short_scoreboard lg_throttle dispatch_stall \
         not_selected selected membar sleeping misc no_instruction branch_resolving imc_miss drain; do
  M="$M${M:+,}${S}_${r}_per_issue_active.ratio"
done
M="$M,smsp__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
M="$M,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active"
M="$M,gpu__time_duration.sum,launch__registers_per_thread,launch__shared_mem_per_block_dynamic"
M="$M,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size"
for s in "" .fb32; do
  echo "=== suffix '$s'"
  # shellcheck disable=SC2086
  TILE_LIB_DIR=$(cd "$B/lib" && pwd) ncu --profile-from-start off --metrics "$M" \
    python3 -W ignore tests/gpu/profile_attn.py --build "$B" --suffix "$s" $SHAPE 2>&1 |
    grep -v "^==PROF==" | grep -E "profile_attn|attn_fwd|\.ratio|\.sum|\.pct|launch__|\.avg" |
    sed "s/${S}_//; s/_per_issue_active.ratio//"
done

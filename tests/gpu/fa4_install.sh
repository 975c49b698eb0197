#!/bin/sh
# tests/gpu/fa4_install.sh - on the GPU machine, the second call of a pair:
# FlashAttention-4's wheels into /tmp/site (side_by_side.py --peer fa4 finds
# them there). The first call carried build-fa4a and copied its part.aa to
# /tmp/fa4; this one carries build-fa4b (../shared/bench/fa4_wheels.sh makes
# both). Logs pip's output into ${OUT:-/tmp}/pip.txt; exits non-zero when the
# first half is missing (not the warm machine) or pip fails.
set -u
[ -f /tmp/fa4/part.aa ] || { echo "fa4_install: /tmp/fa4/part.aa missing: the first call of the pair ran elsewhere"; exit 3; }
cp build-fa4b/*part* build-fa4b/*.whl /tmp/fa4/ || exit 3
cd /tmp/fa4 && cat part.* > nvidia_cutlass_dsl_libs_cu13-4.8.1-cp312-cp312-manylinux_2_28_x86_64.whl && rm part.* &&
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site ./*.whl > "${OUT:-/tmp}/pip.txt" 2>&1
r=$?; echo "fa4_install: pip exit $r"; exit $r

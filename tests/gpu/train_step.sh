#!/bin/sh
# tests/gpu/train_step.sh - the training loop's attention step, end to end
# (a new batch of lengths every step: schedule, upload, forward, backward),
# Tile beside FA2 varlen in one process (tests/gpu/train_step.py). Build
# here: `make train-step-bundle` (build-step: libtilert.so.0, libjfa.so.0
# and the JFA cubins, a few MB) and copy ../shared/bench/suites into
# build-step/suites; run there with build-step carried:
#   B=build-step OUT=$OUT sh tests/gpu/train_step.sh [--only J1,J3]
# Prints the table; $OUT/train_step.json keeps the figures.
set -u
B=${B:-build-step}
OUT=${OUT:-/tmp/tile-step-out}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
for f in "$B/lib/libtilert.so.0" "$B/lib/libjfa.so.0" "$B/suites/suites.json"; do
  [ -e "$f" ] || { echo "FAIL train_step: $f is missing (make train-step-bundle)"; exit 2; }
done
if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2> /dev/null; then
  echo "SKIP train_step: no PyTorch with a GPU"; exit 0
fi
export TILE_LIB_DIR="$(cd "$B/lib" && pwd)" TILE_JFA_CUBIN_DIR="$(cd "$B/examples" && pwd)"
export PYTHONPATH="$(pwd)/python${PYTHONPATH:+:$PYTHONPATH}"
unset TILE_INTERPRET
PYTHONUNBUFFERED=1 "$PY" -W ignore tests/gpu/train_step.py "$B/suites" --json "$OUT/train_step.json" "$@" \
  > "$OUT/train_step.log" 2>&1
rc=$?
cat "$OUT/train_step.log"
exit $rc

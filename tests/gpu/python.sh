#!/bin/sh
# tests/gpu/python.sh - the Python package (python/tile) on the GPU machine
# with its PyTorch: tests/gpu/python_check.py (JFA forward and backward
# against float64 PyTorch on tiny and medium jagged shapes, causal and not,
# head dims 64 and 128; float64-reference gradcheck; broadcast-Q; the
# variants; deterministic dq; streams; argument errors; torch.compile and
# opcheck; tile.Kernel through the JIT, from a cubin, and gemm's TMA
# descriptors). Build here with `make gpu-bundle` (it runs
# gpu-bundle-python: libtilert.so.0, libjfa.so.0 and the standalone JIT
# libtilejit.so.0.xz in build-gpu/lib), run there with build-gpu carried:
#   B=build-gpu OUT=$OUT sh tests/gpu/python.sh
# The JIT (LLVM/MLIR inside, 70 MB) is unpacked into a temporary library
# folder beside copies of the other two. ptxas for the JIT: the usual
# search (TILE_PTXAS, CUDA_HOME, /usr/local/cuda, PATH), else Triton's own
# copy inside PyTorch's installation. Logs in $OUT/python.log.
set -u
B=${B:-build}
OUT=${OUT:-/tmp/tile-python-out}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
L=$(mktemp -d "${TMPDIR:-/tmp}/tile_pylib.XXXXXX") || exit 1
trap 'rm -rf "$L"' EXIT
for f in libtilert.so.0 libjfa.so.0; do
  if [ -f "$B/lib/$f" ]; then cp "$B/lib/$f" "$L/"
  else echo "FAIL python: $B/lib/$f is missing (make gpu-bundle)"; exit 1; fi
done
if [ -f "$B/lib/libtilejit.so.0.xz" ]; then
  xz -d -c "$B/lib/libtilejit.so.0.xz" > "$L/libtilejit.so.0" || { echo "FAIL python: cannot unpack the JIT"; exit 1; }
elif [ -f "$B/lib/libtilejit.so.0" ]; then
  cp "$B/lib/libtilejit.so.0" "$L/"
else
  echo "note: no libtilejit in $B/lib: the JIT check will fail"
fi
if [ -z "${TILE_PTXAS:-}" ] && ! command -v ptxas > /dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/ptxas ] &&
   [ ! -x "${CUDA_HOME:-/nonexistent}/bin/ptxas" ]; then
  p=$("$PY" -c 'import os, triton; print(os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas"))' 2>/dev/null)
  if [ -n "$p" ] && [ -x "$p" ]; then export TILE_PTXAS="$p"; echo "ptxas: $p (Triton's)"; fi
fi
export TILE_LIB_DIR="$L" TILE_JFA_CUBIN_DIR="$(cd "$B/examples" && pwd)" PYTHONPATH="$(pwd)/python${PYTHONPATH:+:$PYTHONPATH}"
# (TILE_PY_DEVICE=cpu TILE_INTERPRET=1: a smoke run on the emulator, shapes shrunk)
[ "${TILE_PY_DEVICE:-cuda}" = cpu ] || unset TILE_INTERPRET
"$PY" -W ignore -c 'import torch, sys; print("python %s, torch %s, %s" % (sys.version.split()[0], torch.__version__,
  torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"))'
timeout "${TPY:-540}" "$PY" -W ignore::UserWarning tests/gpu/python_check.py > "$OUT/python.log" 2>&1
rc=$?
grep -E '^(PASS|FAIL|SKIP) |passed, [0-9]+ failed' "$OUT/python.log"
[ $rc = 124 ] && echo "FAIL python: timed out after ${TPY:-540} s (see $OUT/python.log)"
[ $rc = 0 ] || { echo "(tracebacks in $OUT/python.log)"; tail -n 30 "$OUT/python.log" | grep -v '^PASS'; }
exit $rc

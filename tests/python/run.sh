#!/bin/sh
# tests/python/run.sh - the Python package (python/tile) without a GPU, on
# the build's shared libraries and cubins (B, default build), the emulator
# as the device (TILE_INTERPRET=1):
#   test_basic.py  no PyTorch: import, library discovery, jfa_params against
#                  jfa.h, the JIT and its errors, launches on DeviceBuffers,
#                  autotuning (a scripted clock), JFA's C checks as exceptions, a JFA forward pass against a
#                  float64 reference (pure Python)
#   test_torch.py  PyTorch: argument checks before any launch; forward and
#                  backward of the custom op against float64 PyTorch on tiny
#                  jagged shapes; fake tensors, opcheck, torch.compile;
#                  tile.Kernel on tensors
#
# PyTorch: the python3's own when it imports; else (PyPI has no CPU-only
# build for Linux, only the CUDA one: about 3.3 GB to download, 4.6 GB
# installed, 75 s here) it is installed once with `pip install --target`
# into TILE_PY_SITE (default ~/.cache/tile-python/torch-<version>-py<X.Y>,
# outside the clone, so later runs on the machine reuse it), when the
# disk has 10 GB free and TILE_PY_TORCH is not 0. Without it test_torch.py
# is skipped with a SKIP line (not a failure). Skipped under the sanitizer
# build (TILE_SAN=1): its libraries need the sanitizer runtimes preloaded.
set -u
B=${B:-build}
PY=${PYTHON:-python3}
if [ -n "${TILE_SAN:-}" ]; then
  echo "SKIP python: not under the sanitizer build (the plain build's run covers it)"; exit 0
fi
if ! command -v "$PY" > /dev/null 2>&1; then
  if [ "${TILE_ALLOW_MISSING_TOOLS:-}" = 1 ]; then echo "SKIP python: no $PY"; exit 0; fi
  echo "FAIL python: no $PY"; exit 1
fi
for f in "$B/lib/libtilert.so.0" "$B/lib/libjfa.so.0" "$B/lib/libtilejit.so.0"; do
  [ -e "$f" ] || { echo "FAIL python: $f is missing (make B=$B shared-libs)"; exit 1; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/tile_python.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export TILE_LIB_DIR="$(cd "$B/lib" && pwd)" TILE_JFA_CUBIN_DIR="$(cd "$B/examples" && pwd)" TILE_INTERPRET=1 \
  TILE_CACHE_DIR="$T/cache" PYTHONDONTWRITEBYTECODE=1
PYPATH="$(pwd)/python"
fail=0

# unittest prints "Ran N tests" and OK / FAILED; keep its output when it fails
run() {
  name=$1
  shift
  start=$(date +%s)
  if PYTHONPATH="$PYPATH${EXTRA_PATH:+:$EXTRA_PATH}" "$PY" -W ignore "tests/python/$name" "$@" > "$T/$name.log" 2>&1; then
    echo "ok   $name: $(grep -E '^Ran [0-9]+ tests' "$T/$name.log") ($(($(date +%s) - start)) s)$(grep -q skipped "$T/$name.log" && echo ", $(grep -o 'skipped=[0-9]*' "$T/$name.log")")"
    grep '^note:' "$T/$name.log" | sed 's/^/     /'
  else
    echo "FAIL $name:"; tail -n 40 "$T/$name.log"; fail=1
  fi
}

EXTRA_PATH=
run test_basic.py

# PyTorch
TORCH_REQ=${TILE_PY_TORCH_REQ:-torch==2.11.0}
if "$PY" -c "import torch" > /dev/null 2>&1; then
  have_torch=1
else
  have_torch=0
  pyver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  SITE=${TILE_PY_SITE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/tile-python/$(echo "$TORCH_REQ" | sed 's/[^A-Za-z0-9.]\{1,\}/-/g')-py$pyver}
  if [ -d "$SITE/torch" ] && PYTHONPATH="$SITE" "$PY" -c "import torch" > /dev/null 2>&1; then
    have_torch=1
  elif [ "${TILE_PY_TORCH:-}" = 0 ]; then
    why="TILE_PY_TORCH=0"
  elif ! "$PY" -m pip --version > /dev/null 2>&1; then
    why="no pip for $PY"
  else
    mkdir -p "$(dirname "$SITE")"
    free_kb=$(df -Pk "$(dirname "$SITE")" | awk 'NR == 2 { print $4 }')
    if [ "${free_kb:-0}" -lt 10485760 ]; then
      why="less than 10 GB free for it beside $SITE"
    else
      echo "     installing $TORCH_REQ into $SITE (once; about 3.3 GB from PyPI)"
      start=$(date +%s)
      rm -rf "$SITE.part"
      if timeout 1200 "$PY" -m pip install --no-input --no-cache-dir -q --disable-pip-version-check \
           --target "$SITE.part" "$TORCH_REQ" > "$T/pip.log" 2>&1 && mv "$SITE.part" "$SITE" &&
         PYTHONPATH="$SITE" "$PY" -c "import torch" > /dev/null 2>&1; then
        have_torch=1
        echo "     installed in $(($(date +%s) - start)) s"
      else
        rm -rf "$SITE.part"
        why="pip install $TORCH_REQ failed: $(tail -n 1 "$T/pip.log")"
      fi
    fi
  fi
  [ $have_torch -eq 1 ] && EXTRA_PATH=$SITE
fi
if [ $have_torch -eq 1 ]; then
  run test_torch.py
else
  echo "SKIP test_torch.py: PyTorch cannot be imported ($why)"
fi

[ $fail -eq 0 ] || exit 1

# tests/gpu/calls/lib.sh - what every call script starts with (source it from the repository root on the GPU
# machine): $OUT, el (the seconds since the start, then a label), build-w unpacked from the carried build-wx
# (scripts/gpu_slim_bundle.sh), the card named, its libraries on the path
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
t0=$(date +%s)
el() { echo "== $(( $(date +%s) - t0 )) s: $*"; }
[ -d build-w ] || tar xJf build-wx/w.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv,noheader
export LD_LIBRARY_PATH=build-w/lib

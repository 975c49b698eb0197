#!/bin/sh
# scripts/install-deps.sh [--fuzz] [--check] [--quiet] [--pypi-ptxas] - install what
# building and testing Tile needs on Debian 12 (bookworm), and nothing that is
# already there.  Safe to run any number of times: with everything present it
# installs nothing and only prints what it found.
#
#   Debian packages  llvm-22 llvm-22-dev libmlir-22-dev mlir-22-tools re2c
#                    libcmocka-dev libstdc++-12-dev libzstd-dev pkgconf; with --fuzz
#                    also clang-22 libclang-rt-22-dev
#                    (each checked with dpkg, only the missing ones installed,
#                    through sudo when not root)
#   ptxas            searched like tilec does: $TILE_PTXAS, $CUDA_HOME/bin,
#                    $CUDA_PATH/bin, /usr/local/cuda/bin, PATH.  When there is
#                    none (or it is older than CUDA 13, or --pypi-ptxas), NVIDIA's
#                    PyPI package nvidia-cuda-nvcc (CUDA 13) is installed into
#                    build/cuda-pypi with `pip install --target`, and
#                    build/toolchain.env is written:  TILE_PTXAS=/abs/path/ptxas
#                    (a line both make and sh read; the Makefile includes it and
#                    exports TILE_PTXAS).  When a system ptxas is used the file
#                    is removed, so it never points at a stale ptxas.  Both sit
#                    in build/ whatever B is (make B=build-san reads them too);
#                    `make clean` removes them and the next `make test` puts
#                    them back.
#
#   --check        install nothing: say what is missing, exit 1 if anything is
#   --fuzz         also the fuzzing toolchain (clang-22 with libFuzzer)
#   --quiet        print nothing when nothing is missing (for make's deps-check)
#   --pypi-ptxas   use the PyPI ptxas even when a system one exists
#
# Environment: TILE_NVCC_PYPI (the pip requirement, default
# 'nvidia-cuda-nvcc==13.0.*'), PYTHON (default python3).
set -eu

cd "$(dirname "$0")/.."
B=build
PYTHON=${PYTHON:-python3}
NVCC_REQ=${TILE_NVCC_PYPI:-nvidia-cuda-nvcc==13.0.*}
PYPI_DIR=$B/cuda-pypi
ENV_FILE=$B/toolchain.env

fuzz=0 check=0 quiet=0 force_pypi=0
for a in "$@"; do
  case $a in
    --fuzz) fuzz=1 ;;
    --check) check=1 ;;
    -q|--quiet) quiet=1 ;;
    --pypi-ptxas) force_pypi=1 ;;
    -h|--help) sed -n '2,/^set /p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps: unknown option $a (try --help)" >&2; exit 2 ;;
  esac
done

say() { echo "install-deps: $*"; }
info() { [ $quiet -eq 1 ] || say "$@"; }
die() { echo "install-deps: error: $*" >&2; exit 1; }

# --- root or sudo ------------------------------------------------------------
SUDO=
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo > /dev/null 2>&1; then SUDO=sudo
  else SUDO=none
  fi
fi
as_root() {
  [ "$SUDO" = none ] && die "not root and no sudo: run as root: $*"
  say "running: ${SUDO:+$SUDO }$*"
  if [ -n "$SUDO" ]; then sudo env DEBIAN_FRONTEND=noninteractive "$@"
  else env DEBIAN_FRONTEND=noninteractive "$@"
  fi
}

apt_updated=0
apt_install() {
  command -v apt-get > /dev/null 2>&1 || die "no apt-get: not a Debian system; install by hand: $*"
  [ "$SUDO" = none ] && die "not root and no sudo; as root, run: apt-get update && apt-get install -y $*"
  if [ $apt_updated -eq 0 ]; then
    as_root apt-get update
    apt_updated=1
  fi
  as_root apt-get install -y "$@"
}

# --- Debian packages ---------------------------------------------------------
# libstdc++-12-dev: the MLIR libraries need -lstdc++ (g++ brings it; gcc alone
# does not).  libzstd-dev: `make jit-static` / `make gpu-bundle` link LLVM
# statically with -lzstd.  pkgconf: tests/install/run.sh builds programs
# against an installed Tile with pkg-config alone.
PKGS="llvm-22 llvm-22-dev libmlir-22-dev mlir-22-tools re2c libcmocka-dev libstdc++-12-dev libzstd-dev pkgconf"
[ $fuzz -eq 1 ] && PKGS="$PKGS clang-22 libclang-rt-22-dev"

pkg_ok() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2> /dev/null || true)" = "install ok installed" ]
}

missing=
if command -v dpkg-query > /dev/null 2>&1; then
  for p in $PKGS; do
    pkg_ok "$p" || missing="$missing $p"
  done
else
  # Not Debian: look for the files themselves.
  [ -f /usr/lib/llvm-22/include/mlir-c/IR.h ] || missing="$missing llvm-22-dev libmlir-22-dev"
  command -v re2c > /dev/null 2>&1 || missing="$missing re2c"
  [ -f /usr/include/cmocka.h ] || missing="$missing libcmocka-dev"
  command -v pkg-config > /dev/null 2>&1 || missing="$missing pkgconf"
  [ $fuzz -eq 1 ] && { command -v clang-22 > /dev/null 2>&1 || missing="$missing clang-22 libclang-rt-22-dev"; }
fi
missing=${missing# }

status=0
if [ -z "$missing" ]; then
  info "Debian packages present: $PKGS"
elif [ $check -eq 1 ]; then
  say "missing Debian packages: $missing"
  status=1
else
  say "installing missing Debian packages: $missing"
  # shellcheck disable=SC2086
  apt_install $missing
fi

# --- ptxas ---------------------------------------------------------------------
# The release of a ptxas ("13" for "release 13.0, V13.0.88"), empty if it
# does not run.
ptxas_major() {
  "$1" --version 2> /dev/null | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p' | head -1
}

find_system_ptxas() {
  for c in "${TILE_PTXAS:-}" "${CUDA_HOME:+$CUDA_HOME/bin/ptxas}" "${CUDA_PATH:+$CUDA_PATH/bin/ptxas}" \
           /usr/local/cuda/bin/ptxas "$(command -v ptxas 2> /dev/null || true)"; do
    [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
  done
  return 1
}

find_pypi_ptxas() {
  [ -d "$PYPI_DIR" ] || return 1
  f=$(find "$PYPI_DIR" -path '*/bin/ptxas' -type f 2> /dev/null | head -1)
  [ -n "$f" ] && [ -x "$f" ] && echo "$f"
}

ptxas=
if [ $force_pypi -eq 0 ] && ptxas=$(find_system_ptxas); then
  v=$(ptxas_major "$ptxas")
  if [ -z "$v" ]; then
    say "warning: $ptxas does not run (--version failed); using the PyPI ptxas instead"
    ptxas=
  elif [ "$v" -lt 13 ]; then
    say "warning: $ptxas is CUDA $v; Tile needs CUDA 13: using the PyPI ptxas instead"
    ptxas=
  else
    info "ptxas: $ptxas (CUDA $v)"
  fi
else
  ptxas=
fi

if [ -n "$ptxas" ]; then
  # tilec finds this one by itself; drop a PyPI pointer left from before.
  if [ -f "$ENV_FILE" ] && [ $check -eq 0 ]; then
    say "removing $ENV_FILE (a system ptxas is used)"
    rm -f "$ENV_FILE"
  fi
else
  p=$(find_pypi_ptxas || true)
  if [ -n "$p" ] && [ -n "$(ptxas_major "$p")" ]; then
    info "ptxas: $p (PyPI, already installed)"
  elif [ $check -eq 1 ]; then
    say "missing: ptxas (no CUDA 13 toolkit; would pip install '$NVCC_REQ' into $PYPI_DIR)"
    status=1
  else
    say "no CUDA 13 ptxas found (TILE_PTXAS, CUDA_HOME, CUDA_PATH, /usr/local/cuda, PATH)"
    if ! "$PYTHON" -m pip --version > /dev/null 2>&1; then
      say "no pip for $PYTHON: installing python3-pip"
      apt_install python3 python3-pip
      PYTHON=python3
    fi
    say "running: $PYTHON -m pip install --no-deps --target $PYPI_DIR '$NVCC_REQ'"
    rm -rf "$PYPI_DIR"
    mkdir -p "$B"
    # --target installs outside any Python environment (PEP 668 does not apply).
    PIP_BREAK_SYSTEM_PACKAGES=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore \
      "$PYTHON" -m pip install --no-deps --no-input --target "$PYPI_DIR" "$NVCC_REQ"
    p=$(find_pypi_ptxas || true)
    [ -n "$p" ] || die "pip installed $NVCC_REQ but no bin/ptxas is in $PYPI_DIR"
    [ -n "$(ptxas_major "$p")" ] || die "$p does not run"
    say "ptxas: $p (PyPI, $("$p" --version | sed -n 's/.*release \([^,]*\),.*/\1/p'))"
  fi
  if [ -n "$p" ] && [ $check -eq 0 ]; then
    p=$(cd "$(dirname "$p")" && pwd)/ptxas
    line="TILE_PTXAS=$p"
    if [ -f "$ENV_FILE" ] && [ "$(tail -1 "$ENV_FILE")" = "$line" ]; then
      info "$ENV_FILE: $line"
    else
      mkdir -p "$B"
      {
        echo "# written by scripts/install-deps.sh: no CUDA 13 toolkit here, so tilec uses"
        echo "# the ptxas of NVIDIA's PyPI package.  Read by the Makefile (and sh: . $ENV_FILE)."
        echo "$line"
      } > "$ENV_FILE"
      say "wrote $ENV_FILE: $line"
      say "outside make, use: export $line"
    fi
  fi
fi

# nvdisasm, for the tests only (tests/ptx/sass_props.sh checks the SASS of
# the Hopper kernels): the toolkit's, else NVIDIA's PyPI wheel in
# build/cuda-pypi-tools.  Optional: without it those checks say SKIP.
NVDIS_REQ=${TILE_NVDISASM_PYPI:-nvidia-cuda-nvdisasm>=13,<14}
TOOLS_DIR=$B/cuda-pypi-tools
have_nvdisasm() {
  for c in "${TILE_NVDISASM:-}" "${CUDA_HOME:+$CUDA_HOME/bin/nvdisasm}" /usr/local/cuda/bin/nvdisasm \
           "$(command -v nvdisasm 2> /dev/null || true)"; do
    [ -n "$c" ] && [ -x "$c" ] && return 0
  done
  [ -d "$TOOLS_DIR" ] && [ -n "$(find "$TOOLS_DIR" -path '*/bin/nvdisasm' -type f 2> /dev/null | head -1)" ]
}
if ! have_nvdisasm; then
  if [ $check -eq 1 ]; then
    info "optional: nvdisasm (would pip install '$NVDIS_REQ' into $TOOLS_DIR for the SASS checks)"
  elif "$PYTHON" -m pip --version > /dev/null 2>&1; then
    say "installing nvdisasm for the SASS checks: pip install --target $TOOLS_DIR '$NVDIS_REQ'"
    mkdir -p "$B"
    PIP_BREAK_SYSTEM_PACKAGES=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore \
      "$PYTHON" -m pip install -q --no-deps --no-input --target "$TOOLS_DIR" "$NVDIS_REQ" ||
      say "warning: could not install $NVDIS_REQ: the SASS checks will be skipped"
  else
    say "note: no pip: the SASS checks (nvdisasm) will be skipped"
  fi
fi

if [ $check -eq 1 ]; then
  [ $status -eq 0 ] && info "everything present"
  exit $status
fi
info "done"

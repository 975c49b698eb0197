#!/bin/sh
# scripts/pkgconfig.sh OUTDIR - write Tile's pkg-config files into OUTDIR
# (what `make install` puts in $(LIBDIR)/pkgconfig).  The folders, the version
# and the link lines come from the environment, set by mk/install.mk:
#   PC_PREFIX PC_LIBDIR PC_INCLUDEDIR PC_BINDIR PC_DATADIR PC_VERSION
#   PC_MLIR_LIBS (the MLIR/LLVM link line)  PC_LDLIBS (-ldl -lpthread -lm)
#
# Two files per library; the plain one links the shared library, the
# -static one the archive (named by its path, so that the linker cannot
# pick the .so beside it):
#   tile   the JIT, the runtime and the compiler  (-ltilejit -ltilert -ltilec)
#   tilert the runtime alone, no MLIR/LLVM         (-ltilert)
#   tilec  the compiler library                    (-ltilec)
#   jfa    Jagged Flash Attention's host API       (-ljfa -ltilert); its
#          kernels: pkg-config --variable=cubindir jfa
# The shared libraries carry their MLIR/LLVM dependencies themselves; the
# link line is in Libs.private (pkg-config --static) and in the -static files.
set -eu
out=${1:?usage: scripts/pkgconfig.sh OUTDIR}
prefix=${PC_PREFIX:?}
mkdir -p "$out"

# a folder under the prefix as ${prefix}/..., so the files read like the usual ones
rel() {
  case $1 in
    "$prefix") echo '${prefix}' ;;
    "$prefix"/*) echo '${prefix}'"${1#"$prefix"}" ;;
    *) echo "$1" ;;
  esac
}

# pc NAME DESCRIPTION REQUIRES LIBS LIBS_PRIVATE [EXTRA-VARIABLE-LINES]
pc() {
  {
    echo "prefix=$prefix"
    echo "libdir=$(rel "$PC_LIBDIR")"
    echo "includedir=$(rel "$PC_INCLUDEDIR")"
    echo "bindir=$(rel "$PC_BINDIR")"
    echo "tilec=\${bindir}/tilec"
    echo "stdlibdir=$(rel "$PC_DATADIR")/tile"
    [ -z "${6:-}" ] || printf '%s\n' "$6"
    echo
    echo "Name: $1"
    echo "Description: $2"
    echo "Version: $PC_VERSION"
    [ -z "$3" ] || echo "Requires: $3"
    echo "Cflags: -I\${includedir}"
    echo "Libs: $4"
    [ -z "$5" ] || echo "Libs.private: $5"
  } > "$out/$1.pc"
}

mlir="$PC_MLIR_LIBS $PC_LDLIBS"
cubindir="cubindir=\${libdir}/tile/jfa"
pc tilert "Tile runtime: load tilec's cubins, launch kernels, move memory (libcuda opened at run time)" \
  "" "-L\${libdir} -ltilert" "$PC_LDLIBS"
pc tilert-static "Tile runtime, static archive" "" "\${libdir}/libtilert.a $PC_LDLIBS" ""
pc tilec "Tile compiler library: Tile source to PTX and cubins through MLIR/LLVM" \
  "" "-L\${libdir} -ltilec" "$mlir"
pc tilec-static "Tile compiler library, static archive" "" "\${libdir}/libtilec.a $mlir" ""
pc tile "Tile: the JIT with its on-disk cache, the runtime and the compiler" \
  "tilert tilec" "-L\${libdir} -ltilejit" ""
pc tile-static "Tile: the JIT, the runtime and the compiler, static archives" \
  "tilert-static tilec-static" "\${libdir}/libtilejit.a" ""
pc jfa "Jagged Flash Attention: the host API of its forward and backward kernels" \
  "tilert" "-L\${libdir} -ljfa" "-lm" "$cubindir"
pc jfa-static "Jagged Flash Attention host API, static archive" \
  "tilert-static" "\${libdir}/libjfa.a -lm" "" "$cubindir"

#!/bin/sh
# tests/install/run.sh - `make install` into a temporary prefix, then C
# programs built against it with pkg-config alone (PKG_CONFIG_LIBDIR: the
# prefix's .pc files and nothing else), once on the shared libraries and once
# on the static archives (the -static .pc files), run without a GPU
# (TILE_INTERPRET=1: the emulator is the device):
#   - examples/vector_add's host program, JIT build (tile, tile-static): it
#     compiles vector_add.tile in process and checks the kernel against its
#     float64 reference (the second build finds the first one's cubin in the
#     cache);
#   - the same program, runtime only (tilert, tilert-static), on a cubin the
#     installed tilec compiled: no MLIR or LLVM library in it;
#   - tests/install/jfa_plan.c (jfa, jfa-static): Jagged Flash Attention's
#     API, planning a forward pass with a kernel from the installed cubins.
# Then an install under DESTDIR (its .pc files name PREFIX) and `make
# uninstall` there, which must leave nothing.  Skipped under the sanitizer
# build (TILE_SAN=1): its libraries need the sanitizers' runtimes.
set -u
B=${B:-build}
if [ -n "${TILE_SAN:-}" ]; then
  echo "SKIP install: not under the sanitizer build (the plain build's run covers it)"; exit 0
fi
if ! command -v pkg-config > /dev/null 2>&1; then
  echo "FAIL no pkg-config (sh scripts/install-deps.sh installs pkgconf)"; exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/tile_install.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
P=$T/prefix
CC=${CC:-cc}
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
# make with its own options, not those of a make that called this script
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -s B="$B" "$@"; }

if ! mk install PREFIX="$P" > "$T/install.log" 2>&1; then
  echo "FAIL make install PREFIX=$P:"; tail -n 10 "$T/install.log"; exit 1
fi
for f in bin/tilec include/tile/runtime.h include/tile/tilec.h include/tile/jagged.h include/tile/jfa.h \
         share/tile/std/prelude.tile share/doc/tile/README.md share/doc/tile/docs/runtime.md; do
  [ -f "$P/$f" ] || bad "install: $f is missing"
done
for l in tilec tilert tilejit jfa; do
  for f in "lib$l.a" "lib$l.so" "lib$l.so.0"; do [ -e "$P/lib/$f" ] || bad "install: lib/$f is missing"; done
  so=$(readelf -d "$P/lib/lib$l.so" 2> /dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [ "$so" = "lib$l.so.0" ] || bad "lib$l.so: soname '$so', expected lib$l.so.0"
done
for p in tile tilert tilec jfa; do
  for v in "" -static; do [ -f "$P/lib/pkgconfig/$p$v.pc" ] || bad "install: lib/pkgconfig/$p$v.pc is missing"; done
done
nc=$(ls "$P"/lib/tile/jfa/*.cubin 2> /dev/null | wc -l)
[ "$nc" -ge 26 ] || bad "install: $nc JFA cubins in lib/tile/jfa, expected at least 26"
[ $fail -eq 0 ] && ok "make install: tilec, 4 libraries (.a and .so), headers, std, docs, $nc JFA cubins, 8 .pc files"

export PKG_CONFIG_LIBDIR="$P/lib/pkgconfig" PKG_CONFIG_PATH=
export TILE_INTERPRET=1 TILE_CACHE_DIR="$T/cache"
version=$(sed -n 's/.*TILEC_VERSION_STRING "\([^"]*\)".*/\1/p' include/tile/tilec.h)
[ "$(pkg-config --modversion tile)" = "$version" ] || bad "pkg-config --modversion tile is not $version"

# build NAME PKG ARGS...: $T/NAME from ARGS with PKG's flags (-lm: the host's own)
build() {
  n=$1 pkg=$2
  shift 2
  # shellcheck disable=SC2046
  if $CC -o "$T/$n" "$@" $(pkg-config --cflags --libs "$pkg") -lm > "$T/$n.log" 2>&1; then return 0; fi
  bad "$n: $CC ... \$(pkg-config --cflags --libs $pkg):"; tail -n 5 "$T/$n.log"; return 1
}
# linked NAME: the libraries NAME needs, one line
linked() { readelf -d "$T/$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
# run NAME ARGS...: NAME on the emulator, with the prefix's libraries; its output in $T/NAME.out
run() {
  n=$1
  shift
  LD_LIBRARY_PATH="$P/lib" timeout 300 "$T/$n" "$@" > "$T/$n.out" 2>&1 && return 0
  bad "$n $*:"; tail -n 5 "$T/$n.out"; return 1
}

VA=examples/vector_add
VARGS="--trials 2 --seed 5 --size 5000"
"$P/bin/tilec" -o "$T/va.cubin" $VA/vector_add.tile || bad "the installed tilec could not compile vector_add"
for v in "" -static; do
  # the JIT: tile.pc / tile-static.pc
  if build "va_jit$v" "tile$v" -DTILE_WITH_JIT $VA/vector_add_host.c &&
     run "va_jit$v" --jit $VA/vector_add.tile $VARGS; then
    l=$(linked "va_jit$v")
    if ! grep -q " OK$" "$T/va_jit$v.out" || grep -v " OK$" "$T/va_jit$v.out" | grep -q rel_err; then
      bad "va_jit$v: the kernel did not match its reference:"; tail -n 3 "$T/va_jit$v.out"
    elif [ -z "$v" ] && ! echo "$l" | grep -q "libtilejit.so.0"; then
      bad "va_jit (tile.pc) is not linked to libtilejit.so: $l"
    elif [ -n "$v" ] && echo "$l" | grep -q "libtile"; then
      bad "va_jit-static (tile-static.pc) needs a Tile shared library: $l"
    elif [ -n "$v" ] && ! grep -q "cache hit" "$T/va_jit$v.out"; then
      bad "va_jit-static did not find the cubin va_jit put in the cache"
    else
      ok "vector_add through the JIT, cc \$(pkg-config --cflags --libs tile$v): $(grep -c ' OK$' "$T/va_jit$v.out") checks; needs $l"
    fi
  fi
  # the runtime alone: tilert.pc / tilert-static.pc
  if build "va_rt$v" "tilert$v" $VA/vector_add_host.c && run "va_rt$v" --cubin "$T/va.cubin" $VARGS; then
    l=$(linked "va_rt$v")
    if ! grep -q " OK$" "$T/va_rt$v.out"; then
      bad "va_rt$v: the kernel did not match its reference:"; tail -n 3 "$T/va_rt$v.out"
    elif echo "$l" | grep -q -E "MLIR|LLVM|libtilec"; then
      bad "va_rt$v (tilert$v.pc) links the compiler: $l"
    else
      ok "vector_add from the installed tilec's cubin, cc \$(pkg-config --cflags --libs tilert$v); needs $l"
    fi
  fi
  # Jagged Flash Attention's API and its installed kernels
  if build "jfa_plan$v" "jfa$v" tests/install/jfa_plan.c &&
     run "jfa_plan$v" "$(pkg-config --variable=cubindir "jfa$v")"; then
    ok "JFA API, cc \$(pkg-config --cflags --libs jfa$v): $(tail -n 1 "$T/jfa_plan$v.out")"
  fi
done

# DESTDIR: the files under it, the .pc files naming PREFIX; then uninstall
S=$T/stage
if ! mk install DESTDIR="$S" PREFIX=/opt/tile > "$T/stage.log" 2>&1; then
  bad "make install DESTDIR=... PREFIX=/opt/tile:"; tail -n 5 "$T/stage.log"
elif [ ! -x "$S/opt/tile/bin/tilec" ] || ! grep -qx "prefix=/opt/tile" "$S/opt/tile/lib/pkgconfig/tile.pc"; then
  bad "make install DESTDIR=$S PREFIX=/opt/tile: no $S/opt/tile/bin/tilec, or tile.pc without prefix=/opt/tile"
elif ! mk uninstall DESTDIR="$S" PREFIX=/opt/tile > "$T/stage.log" 2>&1; then
  bad "make uninstall:"; tail -n 5 "$T/stage.log"
elif [ -n "$(find "$S" ! -type d)" ]; then
  bad "make uninstall left: $(find "$S" ! -type d | head -n 5)"
else
  ok "make install DESTDIR=... PREFIX=/opt/tile, then make uninstall"
fi
[ $fail -eq 0 ] && echo "install: all passed" || echo "install: FAILED"
exit $fail

#!/bin/sh
# tests/cli/run.sh - the tilec command line: what it refuses before
# compiling, and its exit status (0 ok, 1 the program or its file is wrong,
# 2 bad usage).  No GPU and no ptxas needed: the compiling cases stop at
# --emit=tir, and the refused ones never reach the compiler.
#
#   B=build sh tests/cli/run.sh            (from the repository root)
#
# One line per failing case, then a count; exit status 1 if any failed.
set -u
B=${B:-build}
case $B in /*) ;; *) B=$(pwd)/$B ;; esac
TILEC=$B/bin/tilec
if [ ! -x "$TILEC" ]; then
  echo "cli: $TILEC not found (build it first: make B=${B##*/} ${B##*/}/bin/tilec)"
  exit 1
fi
if command -v timeout >/dev/null 2>&1; then TO="timeout 10"; else TO=""; fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cli.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT INT TERM
cd "$TMP" || exit 1

npass=0
nfail=0
# run NAME WANT_STATUS WANT_STDERR_TEXT ARGS...: tilec ARGS exits with
# WANT_STATUS and its standard error contains WANT_STDERR_TEXT ("" = any).
run() {
  name=$1 want=$2 text=$3
  shift 3
  $TO "$TILEC" "$@" </dev/null >out.txt 2>err.txt
  rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL $name: exit status $rc, expected $want; stderr: $(head -n 2 err.txt)"
    nfail=$((nfail + 1))
  elif [ -n "$text" ] && ! grep -qF -- "$text" err.txt; then
    echo "FAIL $name: stderr lacks '$text'; it is: $(head -n 2 err.txt)"
    nfail=$((nfail + 1))
  else
    npass=$((npass + 1))
  fi
}
# unchanged NAME FILE: FILE still holds the source (was not overwritten).
unchanged() {
  if cmp -s "$2" src.orig; then
    npass=$((npass + 1))
  else
    echo "FAIL $1: $2 was overwritten"
    nfail=$((nfail + 1))
    cp src.orig "$2"
  fi
}

cat >src.orig <<'EOF'
kernel k(x: *f32) warps(4) {
    store(x + arange(0, 128), zeros([128], f32));
}
EOF
cp src.orig same.tile
mkdir sub
ln -s same.tile link.tile
ln same.tile hard.tile 2>/dev/null || cp same.tile hard.tile

# ---- the output must never be the input --------------------------------
for emit in cubin ptx tir; do
  run "same-name-$emit" 2 "is the input" --emit=$emit -o same.tile same.tile
  unchanged "same-name-$emit" same.tile
done
run same-file-other-name 2 "(the same file)" -o ./same.tile same.tile
unchanged same-file-other-name same.tile
run same-file-via-folder 2 "(the same file)" -o sub/../same.tile same.tile
unchanged same-file-via-folder same.tile
run output-symlink-to-input 2 "(the same file)" -o link.tile same.tile
unchanged output-symlink-to-input same.tile
run input-symlink-to-output 2 "(the same file)" -o same.tile link.tile
unchanged input-symlink-to-output same.tile
if [ "$(stat -c %i hard.tile 2>/dev/null)" = "$(stat -c %i same.tile 2>/dev/null)" ]; then
  run output-hard-link 2 "(the same file)" -o hard.tile same.tile
  unchanged output-hard-link same.tile
fi
# the default output (FILE.ptx next to FILE.tile) is the input through a link
cp src.orig auto.tile
ln -s auto.tile auto.ptx
run default-output-is-input 2 "(the same file)" --emit=ptx auto.tile
unchanged default-output-is-input auto.tile

# ---- the input must be a regular file ----------------------------------
run input-directory 1 "'sub' is a directory" --emit=tir sub
run input-directory-slash 1 "is a directory" --emit=tir sub/
run input-dev-zero 1 "'/dev/zero' is not a regular file (a device)" --emit=tir /dev/zero
run input-dev-null 1 "is not a regular file (a device)" --emit=tir /dev/null
if mkfifo fifo 2>/dev/null; then
  run input-fifo 1 "'fifo' is not a regular file (a pipe)" --emit=tir fifo
fi
run input-missing 1 "cannot read 'missing.tile': No such file or directory" --emit=tir missing.tile
if grep -q 'Illegal seek' err.txt; then echo "FAIL input-missing: 'Illegal seek'"; nfail=$((nfail + 1)); fi

# ---- exit status: the program's errors 1, usage 2 ---------------------
printf 'kernel k(x: *f32) { store(x, y); }\n' >bad.tile
run program-error 1 "bad.tile:1:30: error: unknown name 'y'" --emit=tir bad.tile
run no-input 2 "no input file"
run two-inputs 2 "more than one input file" same.tile bad.tile
run unknown-option 2 "unknown option --frobnicate" --frobnicate same.tile
run bad-emit 2 "unknown --emit stage" --emit=sass same.tile
run bad-tma-rings 2 "unknown --tma-rings mode (auto, all or none): --tma-rings=some" --tma-rings=some same.tile
run bad-define 2 "-D needs NAME=VALUE" -D same.tile
run bad-arch 2 "unknown --arch 'sm_80'" --arch=sm_80 --emit=tir same.tile
run missing-o-arg 2 "-o needs a file name" same.tile -o

# ---- what works still works ---------------------------------------------
run tir-to-stdout 0 "" --emit=tir -o - same.tile
if grep -q 'kernel @k' out.txt; then npass=$((npass + 1)); else echo "FAIL tir-to-stdout: no TIR"; nfail=$((nfail + 1)); fi
run tir-to-file 0 "" --emit=tir -o sub/k.tir same.tile
if grep -q 'kernel @k' sub/k.tir; then npass=$((npass + 1)); else echo "FAIL tir-to-file: no TIR"; nfail=$((nfail + 1)); fi
unchanged tir-to-file same.tile
# a double quote in the file name: LLVM would write it as \" in the PTX's
# .file line, which ptxas refuses (exit 3, no location)
cp same.tile 'q"uote.tile'
run quote-in-name-ptx 0 "" --emit=ptx -o q.ptx 'q"uote.tile'
if grep '^[[:space:]]*\.file' q.ptx | grep -q '\\"'; then
  echo "FAIL quote-in-name-ptx: the .file line escapes a quote: $(grep '\.file' q.ptx | head -n 1)"; nfail=$((nfail + 1))
else npass=$((npass + 1)); fi

# ---- --stats: the compile report (docs/stats.md) ----------------------------
run stats-stderr 0 "kernel k (same.tile:1): 4 warps, 128 threads" --emit=tir --stats same.tile
run stats-stdout 0 "" --emit=ptx -o /dev/null --stats=- same.tile
if grep -q '^time (ms): parse' out.txt; then npass=$((npass + 1)); else echo "FAIL stats-stdout: no report"; nfail=$((nfail + 1)); fi
run stats-file 0 "" --emit=tir -o /dev/null --stats=sub/k.stats same.tile
if grep -q '^kernel k ' sub/k.stats; then npass=$((npass + 1)); else echo "FAIL stats-file: no report"; nfail=$((nfail + 1)); fi
run stats-no-name 2 "--stats= needs a file name" --stats= same.tile
run stats-is-input 2 "--stats=link.tile would replace the input" --emit=tir -o /dev/null --stats=link.tile same.tile
unchanged stats-is-input same.tile
run stats-is-output 2 "would replace the output" --emit=tir -o k.out --stats=k.out same.tile
# a program with errors before its Tile IR: no report, its status
run stats-program-error 1 "error: unknown name 'y'" --emit=tir --stats bad.tile
if grep -q '^kernel ' err.txt; then echo "FAIL stats-program-error: a report"; nfail=$((nfail + 1)); else npass=$((npass + 1)); fi

# -D NAME=multiple_of(N) of a run-time integer: in the metadata (the
# runtime's launch check), combined with the source's own promise
cat > mult.tile <<'EOF'
kernel k(x: *f32, n: i32, m: i32 multiple_of(4)) {
    let o = arange(0, 64);
    store(x + o, 1.0, o < n + m);
}
EOF
run define-multiple 0 "" --emit=meta -o meta.txt -D 'n=multiple_of(16)' -D 'm=multiple_of(6)' mult.tile
if grep -qx "multiple n 16" meta.txt && grep -qx "multiple m 12" meta.txt; then npass=$((npass + 1))
else echo "FAIL define-multiple: metadata $(grep multiple meta.txt | tr '\n' ' ')"; nfail=$((nfail + 1)); fi
run define-multiple-bad 1 "-D can only promise multiple_of(N)" -D 'n=multiple_of(16)x' mult.tile

total=$((npass + nfail))
if [ "$nfail" -ne 0 ]; then
  echo "cli: $nfail of $total FAILED ($TILEC)"
  exit 1
fi
echo "cli: all $total passed ($TILEC)"
exit 0

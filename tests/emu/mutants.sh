#!/bin/sh
# tests/emu/mutants.sh - broken lowerings must fail the emulator's checks
# (issue 16's proof: the bugs a reviewer planted in the compiler survived
# every GPU-less test before the emulator).
#
# Each tests/emu/mutants/NN-name.patch breaks the compiler in one realistic
# way. For each, this script copies the compiler's sources (the working
# tree as it is, uncommitted changes included) into a scratch folder,
# applies the patch, builds tilec there (starting from $B's objects, so
# only the patched files recompile), compiles every cubin tests/emu/run.sh
# and tests/emu/blackwell.sh need with it (`make emu-cubins`), and runs
# tests/emu/run.sh and tests/emu/blackwell.sh on those
# cubins with $B's host programs. The patch's `expect:` line says what must
# happen: `caught` (some check fails) or `survives` (a known gap of the
# emulator, named in the patch; it is reported, and a survivor that gets
# caught is reported as news, not as a failure).
#
#   B=build sh tests/emu/mutants.sh [NAME ...]      (make test-mutants)
#
# MUTANTS_JOBS (default 2): mutants run at once. A table of what caught
# each mutant prints last; the exit status is 0 when every `caught` one was.
set -u
B=${B:-build}
ROOT=$(pwd)
BA=$(cd "$B" 2>/dev/null && pwd) || { echo "mutants: no build folder $B (make first)"; exit 2; }
for f in "$BA/bin/tilec" "$BA/lib/libtilec.a" "$BA/examples/vector_add_host" "$BA/examples/jfa_host"; do
  [ -e "$f" ] || { echo "mutants: $f missing (make first)"; exit 2; }
done
JOBS=${MUTANTS_JOBS:-2}
W=$(mktemp -d "${TMPDIR:-/tmp}/tile_mutants.XXXXXX") || exit 2
[ -n "${MUTANTS_KEEP:-}" ] && echo "mutants: keeping $W" || trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM

# one mutant: $1 = patch file; writes $W/NAME.result (caught, survived|why or
# error|why) and $W/NAME.checks (each failing check: what it said)
run_mutant() {
  p=$1
  n=$(basename "$p" .patch)
  d=$W/$n
  mkdir -p "$d/src" "$d/build/obj" "$d/build/lib" "$d/build/bin" "$d/build/examples" "$d/tmp"
  (cd "$ROOT" && cp -pR compiler include dsl scripts mk examples Makefile "$d/src/") &&
    cp -pR "$BA/obj/compiler" "$BA/obj/gen" "$d/build/obj/" && cp -pR "$BA/gen" "$d/build/" &&
    cp -p "$BA/lib/libtilec.a" "$d/build/lib/" && cp -p "$BA/bin/tilec" "$d/build/bin/" || {
    echo "error|cannot copy the tree" > "$W/$n.result"; return; }
  if ! (cd "$d/src" && patch -p1 -s < "$p") > "$d/build.log" 2>&1; then
    echo "error|the patch does not apply (update $p)" > "$W/$n.result"; return
  fi
  # the patched sources are newer than the copied objects: only they rebuild
  if ! make -s -C "$d/src" B="$d/build" "$d/build/bin/tilec" emu-cubins >> "$d/build.log" 2>&1; then
    echo "error|does not build: $(grep -m1 -i 'error' "$d/build.log")" > "$W/$n.result"; return
  fi
  for h in "$BA"/examples/*_host "$BA"/examples/*_host_jit; do ln -s "$h" "$d/build/examples/"; done
  TMPDIR=$d/tmp B=$d/build sh "$ROOT/tests/emu/run.sh" > "$d/run.log" 2>&1
  rc=$?
  TMPDIR=$d/tmp B=$d/build sh "$ROOT/tests/emu/blackwell.sh" >> "$d/run.log" 2>&1 || rc=1
  # what caught it: each failing check, and the first line of its log that
  # says why (the emulator's report, else a result marked FAIL, else an
  # error); a check without a log of its own: the lines run.sh printed
  for c in $(sed -n 's/^FAIL \([^ :]*\) on the emulator[^:]*:.*/\1/p; s/^FAIL \([^ :]*\) \(--[a-z-]*\):.*/\1\2/p' "$d/run.log" | awk '!s[$0]++'); do
    log=$d/tmp/emu_$c.log
    if [ ! -f "$log" ]; then
      log=$d/tmp/check_$c.log
      awk -v want="$c" '/^(ok|FAIL) / || /^emulator: / { on = 0 }
                        on { print }
                        /^FAIL / { n = $0; sub(/^FAIL /, "", n); sub(/ on the emulator:$/, "", n); sub(/:$/, "", n);
                                   gsub(/ /, "", n); if (n == want) on = 1 }' "$d/run.log" > "$log"
    fi
    why=$(grep -m1 '(emulator) (' "$log" | sed 's/.*(emulator) (//; s/)$//')
    [ -n "$why" ] || why=$(grep -m1 ' FAIL$' "$log")
    [ -n "$why" ] || why=$(grep -m1 -i 'failed\|deadlock\|error' "$log")
    [ -n "$why" ] || why=$(head -n 1 "$log")
    echo "$c: $(echo "$why" | tr '\n\r' '  ' | tr -s ' ' | cut -c1-150)" >> "$W/$n.checks"
  done
  if [ $rc -ne 0 ]; then echo caught > "$W/$n.result"
  else echo "survived|every check passed" > "$W/$n.result"; fi
}

patches=
if [ $# -gt 0 ]; then
  for a in "$@"; do
    f=$(ls "$ROOT"/tests/emu/mutants/*"$a"*.patch 2>/dev/null | head -1)
    [ -n "$f" ] || { echo "mutants: no patch matches $a"; exit 2; }
    patches="$patches $f"
  done
else
  patches=$(ls "$ROOT"/tests/emu/mutants/*.patch)
fi

t0=$(date +%s)
running=0
for p in $patches; do
  run_mutant "$p" &
  running=$((running + 1))
  if [ $running -ge "$JOBS" ]; then wait; running=0; fi
done
wait

fail=0
printf '\n%-22s %-9s %-9s %s\n' mutant expect result "the checks that failed (each: the first line of its log that says why)"
for p in $patches; do
  n=$(basename "$p" .patch)
  expect=$(sed -n 's/^expect: *//p' "$p" | head -1)
  res=$(cat "$W/$n.result" 2>/dev/null || echo "error|no result")
  st=${res%%|*}
  what=${res#*|}
  verdict=$st
  case "$expect:$st" in
    caught:caught | survives:survived) ;;
    survives:caught) verdict="caught (news: a survivor is now caught; update its expect line)" ;;
    *) fail=1; verdict="$st  <-- FAILED" ;;
  esac
  if [ "$st" = caught ]; then
    printf '%-22s %-9s %-9s by %s\n' "$n" "$expect" "$verdict" "$(sed 's/:.*//' "$W/$n.checks" | paste -sd, - | sed 's/,/, /g')"
    sed 's/^/    /' "$W/$n.checks"
  else
    printf '%-22s %-9s %-9s %s\n' "$n" "$expect" "$verdict" "$what"
  fi
  if [ "$st" = error ] || { [ "$expect" = caught ] && [ "$st" != caught ]; }; then
    tail -n 5 "$W/$n/build.log" "$W/$n/run.log" 2>/dev/null | sed 's/^/    /'
  fi
done
echo "($(($(date +%s) - t0)) s)"
[ $fail -eq 0 ] && echo "mutants: every broken lowering expected to be caught was" || echo "mutants: FAILED"
exit $fail

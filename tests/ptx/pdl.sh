#!/bin/sh
# tests/ptx/pdl.sh - programmatic dependent launch in the shipped PTX (no GPU
# needed): every kernel built with pdl(true) waits (griddepcontrol.wait)
# before its first access to memory other than its parameters and shared
# memory, so that a launch overlapping the stream's previous grid reads
# nothing stale; the kernels that ship with it have it (and signal
# launch_dependents), and those without pdl(true) have neither.
#   B=build sh tests/ptx/pdl.sh      (after make all: $B/examples/*.ptx)
set -u
B=${B:-build}
E=$B/examples
ls "$E"/*.ptx > /dev/null 2>&1 || { echo "pdl: no PTX in $E (make all first)"; exit 1; }
# entries that must wait at entry, and entries that must not
WITH="layernorm_bwd_dx layernorm_bwd layernorm_bwd_dwdb_part layernorm_bwd_dwdb attn_bwd_pre attn_bwd attn_bwd_dkdv
      attn_bwd_dq jfa_bwd jfa_bwd_pre jfa_bwd_post jfa_fwd jfa_combine"
WITHOUT="attn_fwd matmul gemm gemm_pair softmax layernorm vector_add"
# one line per entry of every file: FILE ENTRY WAIT-LINE LAUNCH-LINE FIRST-ACCESS-LINE (0: none)
awk '
  FNR == 1 { name = "" }
  /^\.(visible )?\.entry / { s = $0; sub(/.*\.entry[ \t]+/, "", s); sub(/\(.*/, "", s); name = s; w = l = a = 0; next }
  name != "" && /griddepcontrol\.wait/ && !w { w = FNR }
  name != "" && /griddepcontrol\.launch_dependents/ && !l { l = FNR }
  name != "" && !a && /(^|[ \t;])(@!?%p[0-9]+[ \t]+)?((ld|st|atom|red)\.(global|b[0-9]|u[0-9]|s[0-9]|f[0-9]|v[0-9])|cp\.async|cp\.reduce|prefetch\.)/ {
    a = FNR }
  name != "" && /^}/ { print FILENAME, name, w, l, a; name = "" }
' "$E"/*.ptx > "${TMPDIR:-/tmp}/pdl.$$"
n=0 fail=0
while read -r f e w l a; do
  n=$((n + 1))
  ff=${f##*/}
  if [ "$w" != 0 ] && [ "$a" != 0 ] && [ "$a" -lt "$w" ]; then
    echo "FAIL $ff $e: a memory access (line $a) before griddepcontrol.wait (line $w)"
    fail=$((fail + 1))
  fi
  if [ "$w" != 0 ] && [ "$l" = 0 ]; then echo "FAIL $ff $e: waits, but no launch_dependents"; fail=$((fail + 1)); fi
  case " $(echo $WITH) " in *" $e "*) [ "$w" = 0 ] && { echo "FAIL $ff $e: built without pdl(true)"; fail=$((fail + 1)); } ;; esac
  case " $WITHOUT " in *" $e "*) { [ "$w" != 0 ] || [ "$l" != 0 ]; } && { echo "FAIL $ff $e: griddepcontrol without pdl"; fail=$((fail + 1)); } ;; esac
done < "${TMPDIR:-/tmp}/pdl.$$"
waits=$(awk '$3 != 0' "${TMPDIR:-/tmp}/pdl.$$" | wc -l)
rm -f "${TMPDIR:-/tmp}/pdl.$$"
[ "$waits" -gt 0 ] || { echo "FAIL: no entry waits at all"; fail=$((fail + 1)); }
echo "pdl: $n entries, $waits with pdl(true), $fail failed"
[ "$fail" = 0 ]

/* fuzz_frontend.c - libFuzzer target for the Tile frontend.
 *
 * Feeds the input bytes to tilec_compile three times: up to the Tile IR
 * (lexer, parser, imports of the embedded stdlib, sema/IR generation, layout
 * and the Tile passes; no MLIR, LLVM or ptxas), and once each for the token
 * and AST dumps.  Whatever the bytes, the library must return a status in
 * range, never crash, abort, leak or hang, and report an internal compiler
 * error only for compiler bugs: TILEC_ERR_INTERNAL is turned into a crash
 * here so that the fuzzer saves the input.
 *
 * Build and run: sh tests/fuzz/run.sh [SECONDS]   (or make fuzz). */
#include "tile/tilec.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int src_has_ice_text;

static void check(const char *stage, tilec_status st, tilec_result *r) {
  if (!r) {
    fprintf(stderr, "fuzz_frontend: tilec_compile(%s) returned no result (status %d)\n", stage, (int)st);
    abort();
  }
  if (st != tilec_result_status(r)) {
    fprintf(stderr, "fuzz_frontend: %s: returned status %d but the result says %d\n", stage, (int)st,
            (int)tilec_result_status(r));
    abort();
  }
  /* Touch every accessor, so ASan sees any bad buffer. */
  const char *d = tilec_result_diagnostics(r);
  size_t dn = strlen(d);
  size_t len = 0;
  const char *o = tilec_result_output(r, &len);
  if (len && o[len] != 0) { /* text stages are NUL terminated */
    fprintf(stderr, "fuzz_frontend: %s: output is not NUL terminated\n", stage);
    abort();
  }
  const char *m = tilec_result_metadata(r);
  if (m) (void)strlen(m);
  if (st != TILEC_OK && st != TILEC_ERR_SOURCE) {
    /* Only source errors are expected from arbitrary input: options are
     * fixed, and no toolchain runs before the TIR stage. */
    fprintf(stderr, "fuzz_frontend: %s: unexpected status %d (%s)\n--- diagnostics ---\n%.*s\n", stage, (int)st,
            st == TILEC_ERR_INTERNAL ? "internal compiler error" : "?", (int)(dn > 4000 ? 4000 : dn), d);
    abort();
  }
  if (st == TILEC_ERR_SOURCE && tilec_result_error_count(r) == 0) {
    fprintf(stderr, "fuzz_frontend: %s: source error status with no error counted\n", stage);
    abort();
  }
  /* dg_ice's two-line form, when the source itself does not hold the words
   * (diagnostics echo source lines and static_assert messages). */
  if (!src_has_ice_text && strstr(d, "error: internal compiler error: ") &&
      strstr(d, "\n  (please report this with the source that caused it)\n")) {
    fprintf(stderr, "fuzz_frontend: %s: diagnostics report an internal compiler error:\n%.*s\n", stage,
            (int)(dn > 4000 ? 4000 : dn), d);
    abort();
  }
}

static void one(const uint8_t *data, size_t size, tilec_emit emit) {
  tilec_options o;
  tilec_options_init(&o);
  o.emit = emit;
  tilec_result *r = NULL;
  /* The name has no folder part, so `import "x.tile"` resolves against the
   * current directory and then the embedded stdlib (run.sh runs the fuzzer
   * in an empty directory). */
  tilec_status st = tilec_compile("fuzz.tile", (const char *)data, size, &o, &r);
  check(tilec_emit_name(emit), st, r);
  tilec_result_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  src_has_ice_text = memmem(data, size, "internal compiler error", 23) != NULL;
  one(data, size, TILEC_EMIT_TIR);
  one(data, size, TILEC_EMIT_TOKENS);
  one(data, size, TILEC_EMIT_AST);
  return 0;
}

/* stub_backend.c - stands in for the MLIR/LLVM backend (compiler/lower*.c,
 * backend.c) when tests/fuzz/run.sh cannot link the MLIR libraries.  The
 * fuzz target stops at the Tile IR and never reaches the backend; if it ever
 * does, this reports an internal error, which the target turns into a crash. */
#include "tilec_int.h"

bool lw_lower_and_compile(Ctx *c, TModule *m, tilec_emit emit, BackendOut *out) {
  (void)m;
  (void)emit;
  (void)out;
  dg_ice(c, (Loc){0}, "the fuzz build has no backend (MLIR libraries not linked)");
  return false;
}

/* fuzz_ptx.c - libFuzzer target for the emulator (emu/): the PTX parser on
 * the input bytes, and every kernel it accepts run for a bounded number of
 * instructions on one small CTA whose pointer parameters are 0 and whose
 * only global memory is one small buffer (so every other access is
 * refused with a report, never made). Aborts on a parse error without the
 * "ptx:LINE:" prefix or a launch failure without a report. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../emu/emu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size ? size : 1); /* exact size: ASan sees a read past the end */
  if (!text) return 0;
  memcpy(text, data, size);
  EmModule *m = NULL;
  char err[256];
  if (!em_ptx_parse(text, size, &m, err, sizeof err)) {
    if (strncmp(err, "ptx:", 4)) abort();
    free(text);
    return 0;
  }
  static float buf[256]; /* read-only for the harness: the kernels' one allocation */
  EmRange rg = {buf, sizeof buf};
  for (int i = 0; i < m->nfuncs; i++) {
    const EmFunc *f = &m->funcs[i];
    if (!f->entry || f->param_bytes > 4096) continue;
    uint8_t *params = calloc(1, f->param_bytes + 8);
    if (!params) break;
    EmLaunch l = {.kernel = f->name, .grid = {1, 1, 1}, .block = {64, 1, 1}, .dyn_smem = 256, .params = params,
                  .params_size = f->param_bytes + 8, .max_steps = 20000, .ranges = &rg, .nranges = 1};
    if (!em_launch(m, &l, err, sizeof err) && !err[0]) abort(); /* a failure always says why */
    free(params);
  }
  em_module_free(m);
  free(text);
  return 0;
}

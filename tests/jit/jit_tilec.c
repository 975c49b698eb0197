/* jit_tilec.c - tilec's command line, compiled through the JIT
 * (tile_jit_compile_cubin) instead of the compiler library, for
 * tests/jit/run.sh: every tilec command the Makefile runs to build a shipped
 * cubin must build the same cubin here, so each of tilec's code generation
 * options has its tile_jit_options field.
 *
 *   jit_tilec [tilec's options] [--no-cache] -o OUT.cubin FILE.tile
 *
 * Takes the options that shape a cubin (--arch, -D, -I, -O, --no-line-info,
 * --tree-reductions, --no-stmatrix, --tma-rings=MODE and --no-tma-rings, --no-smem-home, --no-wide-stores,
 * --embed-ptx, --nvjitlink, --ptxas,
 * --max-errors, and --stats: the compile report on standard error, as
 * tilec --stats prints it); any other option is refused with exit status 2, so a new
 * tilec option used by a shipped kernel fails the test until the JIT has it.
 * The cache is $TILE_CACHE_DIR's (the JIT's usual lookup) unless --no-cache.
 * Prints "hit" or "compiled".  Exit status: 0, 1 compile failed, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile/runtime.h"

static int usage(const char *msg, const char *arg) {
  fprintf(stderr, "jit_tilec: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
  return 2;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0, k;
  do {
    if (n == cap) {
      char *b = realloc(buf, cap = cap ? 2 * cap : 65536);
      if (!b) break;
      buf = b;
    }
    k = fread(buf + n, 1, cap - n, f);
    n += k;
  } while (k > 0);
  fclose(f);
  *len = n;
  return buf;
}

int main(int argc, char **argv) {
  enum { MAXN = 256 };
  static tile_jit_define defs[MAXN];
  static char *names[MAXN];
  static const char *incs[MAXN];
  tile_jit_options o = {0};
  o.arch = "sm_90a"; /* tilec's default, not the device's */
  const char *in = NULL, *out = NULL;
  int ndefs = 0, nincs = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strncmp(a, "--arch=", 7)) o.arch = a + 7;
    else if (!strcmp(a, "--arch") && i + 1 < argc) o.arch = argv[++i];
    else if (!strncmp(a, "-D", 2)) {
      const char *d = a[2] ? a + 2 : i + 1 < argc ? argv[++i] : "";
      const char *eq = strchr(d, '=');
      if (!eq || eq == d || ndefs == MAXN) return usage("-D needs NAME=VALUE, got", d);
      names[ndefs] = strndup(d, (size_t)(eq - d));
      defs[ndefs].name = names[ndefs];
      defs[ndefs++].value = eq + 1;
    } else if (!strncmp(a, "-I", 2)) {
      const char *d = a[2] ? a + 2 : i + 1 < argc ? argv[++i] : NULL;
      if (!d || nincs == MAXN) return usage("-I needs a folder", NULL);
      incs[nincs++] = d;
    } else if (!strcmp(a, "-o") && i + 1 < argc) out = argv[++i];
    else if (!strncmp(a, "-O", 2) && a[2] >= '0' && a[2] <= '3' && !a[3]) {
      o.opt_level = a[2] == '0' ? TILE_JIT_O0 : a[2] - '0';
    } else if (!strcmp(a, "--no-line-info")) o.no_line_info = 1;
    else if (!strcmp(a, "--tree-reductions")) o.tree_reductions = 1;
    else if (!strcmp(a, "--no-stmatrix")) o.no_stmatrix = 1;
    else if (!strcmp(a, "--no-tma-rings") || !strcmp(a, "--tma-rings=none")) o.no_tma_rings = 1, o.tma_rings_all = 0;
    else if (!strcmp(a, "--tma-rings=all")) o.no_tma_rings = 0, o.tma_rings_all = 1;
    else if (!strcmp(a, "--tma-rings=auto")) o.no_tma_rings = 0, o.tma_rings_all = 0;
    else if (!strcmp(a, "--no-smem-home")) o.no_smem_home = 1;
    else if (!strcmp(a, "--no-wide-stores")) o.no_wide_stores = 1;
    else if (!strcmp(a, "--embed-ptx")) o.embed_ptx = 1;
    else if (!strcmp(a, "--nvjitlink")) o.use_nvjitlink = 1;
    else if (!strncmp(a, "--ptxas=", 8)) o.ptxas = a + 8;
    else if (!strncmp(a, "--max-errors=", 13)) o.max_errors = atoi(a + 13);
    else if (!strcmp(a, "--no-cache")) o.no_cache = 1;
    else if (!strcmp(a, "--stats")) o.stats = 1;
    else if (a[0] == '-') return usage("option with no JIT equivalent here:", a);
    else if (in) return usage("more than one input:", a);
    else in = a;
  }
  if (!in || !out) return usage("usage: jit_tilec [tilec options] -o OUT.cubin FILE.tile", NULL);
  o.defines = defs;
  o.ndefines = ndefs;
  o.include_dirs = incs;
  o.ninclude_dirs = nincs;
  size_t len = 0;
  char *src = slurp(in, &len);
  if (!src) return usage("cannot read", in);
  void *cubin = NULL;
  size_t size = 0;
  tile_jit_stats st;
  tile_status s = tile_jit_compile_cubin(in, src, len, &o, &cubin, &size, &st);
  int rc = 0;
  if (s != TILE_OK) {
    fprintf(stderr, "jit_tilec: %s: %s\n", tile_status_name(s), tile_last_error());
    rc = 1;
  } else {
    FILE *f = fopen(out, "wb");
    size_t w = f ? fwrite(cubin, 1, size, f) : 0;
    if (!f || fclose(f) || w != size) {
      fprintf(stderr, "jit_tilec: cannot write %s\n", out);
      rc = 1;
    } else {
      printf("%s\n", st.cache_hit ? "hit" : "compiled");
    }
  }
  if (st.report) fputs(st.report, stderr); /* also of a compile that failed */
  free(st.report);
  free(cubin);
  free(src);
  for (int i = 0; i < ndefs; i++) free(names[i]);
  return rc;
}

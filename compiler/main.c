/* main.c - tilec, the command-line driver: a thin layer over libtilec.
 *
 *   tilec [--arch=sm_90a|sm_100a] [--emit=STAGE] [-D NAME=VALUE]... [-I DIR]...
 *         [-O0..3] [--no-line-info] [--nvjitlink] [--ptxas=PATH] [--tree-reductions] [--no-stmatrix] [--tma-rings=MODE] [--no-tma-rings] [--no-smem-home] [--no-wide-stores] [--embed-ptx] [-v]
 *         [--stats[=FILE]] [-o OUT] FILE.tile
 *
 * The input must be a regular file, and the output (-o, or FILE.cubin /
 * FILE.ptx next to it) must not be the input file, by name or by inode.
 *
 * Exit status: 0 success, 1 the program has errors (or its file cannot be
 * read), 2 bad usage, 3 toolchain problem (ptxas), 4 internal compiler error. */
#include "tile/tilec.h"
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *f) {
  fprintf(f,
          "usage: tilec [options] FILE.tile\n"
          "\n"
          "Compile a Tile program to a cubin (or print an intermediate stage).\n"
          "\n"
          "options:\n"
          "  --arch=ARCH        target: sm_90a (default, Hopper) or sm_100a (Blackwell)\n"
          "  --emit=STAGE       tokens | ast | tir | mlir | llvm | ptx | cubin (default) | meta\n"
          "  -D NAME=VALUE      value of a kernel's constant parameter (repeatable); for a run-time\n"
          "                     integer parameter, NAME=multiple_of(N) promises its values' divisibility\n"
          "  -I DIR             also search DIR for `import \"file.tile\";`\n"
          "  -o OUT             output file ('-' for standard output)\n"
          "  -O0 .. -O3         LLVM optimization level (default -O3)\n"
          "  --no-line-info     do not keep Tile source lines in the PTX/cubin\n"
          "  --tree-reductions  combine a thread's elements of a reduction in a balanced\n"
          "                     tree (shorter dependency chains) instead of one chain\n"
          "  --no-stmatrix      store 16-bit tiles to shared memory element-wise, not by\n"
          "                     stmatrix (for A/B measurements)\n"
          "  --tma-rings=MODE   how the rings of a loop with two to four dots are filled:\n"
          "                     auto (default: TMA for loops of two dots, cp.async for\n"
          "                     three and four), all (TMA wherever it applies), none\n"
          "                     (cp.async everywhere); for A/B measurements\n"
          "  --no-tma-rings     --tma-rings=none\n"
          "  --no-smem-home     keep loop accumulators in registers even where they do not\n"
          "                     fit, not in shared memory (for A/B measurements)\n"
          "  --no-wide-stores   store 16- and 8-bit MMA results from the accumulator's\n"
          "                     pairs of columns, not rearranged in the warp for 16-byte\n"
          "                     stores (for A/B measurements)\n"
          "  --embed-ptx        carry the PTX inside the cubin, for the emulator\n"
          "                     (TILE_INTERPRET=1, docs/emulator.md)\n"
          "  --nvjitlink        assemble PTX with libnvJitLink instead of ptxas\n"
          "  --ptxas=PATH       the ptxas to run (default: $TILE_PTXAS, $CUDA_HOME/bin, PATH)\n"
          "  --max-errors=N     stop after N errors (default 20)\n"
          "  -v                 print the time spent\n"
          "  --stats[=FILE]     print the compile report (registers, spills, shared and\n"
          "                     tensor memory, barriers, tasks, time per stage;\n"
          "                     docs/stats.md) to standard error, or to FILE ('-':\n"
          "                     standard output)\n"
          "  --version          print the version\n"
          "  --help             print this help\n"
          "\n"
          "cubin and ptx go next to the input (FILE.cubin, FILE.ptx) unless -o is given;\n"
          "the other stages print to standard output.\n");
}

static int bad(const char *msg, const char *arg) {
  fprintf(stderr, "tilec: error: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
  fprintf(stderr, "try 'tilec --help'\n");
  return 2;
}

/* The input must be a regular file: a folder or a device (/dev/zero) is
 * refused with what it is, before the library tries to read it. */
static int check_input(const char *in, struct stat *st) {
  if (stat(in, st) != 0) return 0; /* missing, no access: the library says why */
  if (S_ISDIR(st->st_mode)) {
    fprintf(stderr, "tilec: error: '%s' is a directory, not a Tile source file\n", in);
    return 1;
  }
  if (!S_ISREG(st->st_mode)) {
    fprintf(stderr, "tilec: error: '%s' is not a regular file (%s); tilec reads Tile source files\n", in,
            S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? "a device" : S_ISFIFO(st->st_mode) ? "a pipe"
            : S_ISSOCK(st->st_mode) ? "a socket" : "of another kind");
    return 1;
  }
  return 0;
}

/* Writing the output must never replace the input: the same name, or
 * another name of the same file (a link), by device and inode. */
static int same_file(const char *in, const struct stat *ist, const char *out) {
  if (!strcmp(in, out)) return 1;
  struct stat ost;
  return S_ISREG(ist->st_mode) && stat(out, &ost) == 0 && ost.st_dev == ist->st_dev && ost.st_ino == ist->st_ino;
}

static int add_define(tilec_define *defs, int *n, const char *arg) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg) return -1;
  if (*n >= 256) return -1;
  char *name = malloc((size_t)(eq - arg) + 1);
  if (!name) return -1;
  memcpy(name, arg, (size_t)(eq - arg));
  name[eq - arg] = 0;
  defs[*n].name = name;
  defs[*n].value = eq + 1;
  (*n)++;
  return 0;
}

int main(int argc, char **argv) {
  tilec_options o;
  tilec_options_init(&o);
  static tilec_define defs[256];
  static const char *incs[64];
  int ndefs = 0, nincs = 0;
  const char *in = NULL, *outpath = NULL, *statspath = NULL;
  int verbose = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--version")) {
      printf("%s\n", tilec_version());
      return 0;
    } else if (!strncmp(a, "--arch=", 7)) {
      o.arch = a + 7;
    } else if (!strcmp(a, "--arch") && i + 1 < argc) {
      o.arch = argv[++i];
    } else if (!strncmp(a, "--emit=", 7)) {
      if (tilec_emit_parse(a + 7, &o.emit)) return bad("unknown --emit stage", a + 7);
    } else if (!strcmp(a, "-D")) {
      if (i + 1 >= argc || add_define(defs, &ndefs, argv[++i])) return bad("-D needs NAME=VALUE", NULL);
    } else if (!strncmp(a, "-D", 2)) {
      if (add_define(defs, &ndefs, a + 2)) return bad("-D needs NAME=VALUE, got", a + 2);
    } else if (!strcmp(a, "-I")) {
      if (i + 1 >= argc || nincs >= 64) return bad("-I needs a folder", NULL);
      incs[nincs++] = argv[++i];
    } else if (!strncmp(a, "-I", 2)) {
      if (nincs >= 64) return bad("too many -I folders", NULL);
      incs[nincs++] = a + 2;
    } else if (!strcmp(a, "-o")) {
      if (i + 1 >= argc) return bad("-o needs a file name", NULL);
      outpath = argv[++i];
    } else if (!strncmp(a, "-O", 2) && a[2] >= '0' && a[2] <= '3' && !a[3]) {
      o.opt_level = a[2] - '0';
    } else if (!strcmp(a, "--no-line-info")) {
      o.line_info = 0;
    } else if (!strcmp(a, "--tree-reductions")) {
      o.tree_reductions = 1;
    } else if (!strcmp(a, "--no-stmatrix")) {
      o.no_stmatrix = 1;
    } else if (!strcmp(a, "--no-tma-rings") || !strcmp(a, "--tma-rings=none")) {
      o.no_tma_rings = 1, o.tma_rings_all = 0;
    } else if (!strcmp(a, "--tma-rings=all")) {
      o.no_tma_rings = 0, o.tma_rings_all = 1;
    } else if (!strcmp(a, "--tma-rings=auto")) {
      o.no_tma_rings = 0, o.tma_rings_all = 0;
    } else if (!strncmp(a, "--tma-rings", 11)) {
      return bad("unknown --tma-rings mode (auto, all or none):", a);
    } else if (!strcmp(a, "--no-smem-home")) {
      o.no_smem_home = 1;
    } else if (!strcmp(a, "--no-wide-stores")) {
      o.no_wide_stores = 1;
    } else if (!strcmp(a, "--embed-ptx")) {
      o.embed_ptx = 1;
    } else if (!strcmp(a, "--nvjitlink")) {
      o.use_nvjitlink = 1;
    } else if (!strncmp(a, "--ptxas=", 8)) {
      o.ptxas = a + 8;
    } else if (!strncmp(a, "--max-errors=", 13)) {
      o.max_errors = atoi(a + 13);
      if (o.max_errors <= 0) return bad("--max-errors needs a positive number", NULL);
    } else if (!strcmp(a, "-v")) {
      verbose = 1;
    } else if (!strcmp(a, "--stats")) {
      statspath = "";
    } else if (!strncmp(a, "--stats=", 8)) {
      if (!a[8]) return bad("--stats= needs a file name ('-' for standard output)", NULL);
      statspath = a + 8;
    } else if (a[0] == '-' && a[1]) {
      return bad("unknown option", a);
    } else {
      if (in) return bad("more than one input file:", a);
      in = a;
    }
  }
  if (!in) return bad("no input file", NULL);
  struct stat ist;
  memset(&ist, 0, sizeof ist);
  int rc = check_input(in, &ist);
  /* cubin and ptx go next to the input unless -o is given */
  char *auto_path = NULL;
  if (!rc && !outpath && (o.emit == TILEC_EMIT_CUBIN || o.emit == TILEC_EMIT_PTX)) {
    size_t n = strlen(in);
    const char *ext = o.emit == TILEC_EMIT_CUBIN ? ".cubin" : ".ptx";
    auto_path = malloc(n + 8);
    if (!auto_path) rc = 4;
    else {
      memcpy(auto_path, in, n + 1);
      if (n > 5 && !strcmp(auto_path + n - 5, ".tile")) auto_path[n - 5] = 0;
      strcat(auto_path, ext);
      outpath = auto_path;
    }
  }
  if (!rc && outpath && strcmp(outpath, "-") && same_file(in, &ist, outpath)) {
    if (!strcmp(in, outpath))
      fprintf(stderr, "tilec: error: the output '%s' is the input: writing it would replace the source\n", outpath);
    else
      fprintf(stderr, "tilec: error: the output '%s' is the input '%s' (the same file): writing it would replace the "
                      "source\n", outpath, in);
    fprintf(stderr, "try 'tilec --help'\n");
    rc = 2;
  }
  tilec_result *r = NULL;
  if (!rc) {
    o.defines = defs;
    o.ndefines = ndefs;
    o.include_dirs = incs;
    o.ninclude_dirs = nincs;
    tilec_status st = tilec_compile_file(in, &o, &r);
    if (!r) {
      fprintf(stderr, "tilec: error: out of memory\n");
      rc = 4;
    } else {
      fputs(tilec_result_diagnostics(r), stderr);
      if (st != TILEC_OK)
        rc = st == TILEC_ERR_SOURCE || st == TILEC_ERR_IO ? 1 : st == TILEC_ERR_OPTIONS ? 2
             : st == TILEC_ERR_TOOLCHAIN ? 3 : 4;
    }
  }
  if (r && !rc) {
    size_t len;
    const void *data = tilec_result_output(r, &len);
    if (!outpath || !strcmp(outpath, "-")) {
      fwrite(data, 1, len, stdout);
    } else {
      FILE *f = fopen(outpath, "wb");
      if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
        fprintf(stderr, "tilec: error: cannot write '%s': %s\n", outpath, strerror(errno));
        rc = 1;
      }
    }
  }
  /* the report, also of a compile that failed after its Tile IR was built
   * (shared memory over the limit: what takes it) */
  const char *report = r ? tilec_result_stats(r) : NULL;
  if (statspath && report) {
    if (!*statspath) {
      fputs(report, stderr);
    } else if (!strcmp(statspath, "-")) {
      fputs(report, stdout);
    } else if (same_file(in, &ist, statspath) || (outpath && !strcmp(statspath, outpath))) {
      fprintf(stderr, "tilec: error: --stats=%s would replace the %s\n", statspath,
              same_file(in, &ist, statspath) ? "input" : "output");
      if (!rc) rc = 2;
    } else {
      FILE *f = fopen(statspath, "w");
      bool ok = f && fputs(report, f) >= 0;
      if (f && fclose(f)) ok = false;
      if (!ok) {
        fprintf(stderr, "tilec: error: cannot write '%s': %s\n", statspath, strerror(errno));
        if (!rc) rc = 1;
      }
    }
  }
  free(auto_path);
  if (verbose && r) fprintf(stderr, "tilec: %s in %.3f s\n", tilec_emit_name(o.emit), tilec_result_seconds(r));
  tilec_result_free(r);
  for (int i = 0; i < ndefs; i++) free((void *)defs[i].name);
  return rc;
}

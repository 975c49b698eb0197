/* testutil.h - shared helpers for the cmocka unit tests. */
#ifndef TILE_TESTUTIL_H
#define TILE_TESTUTIL_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>
#include "tile/tilec.h"

#ifndef TILE_SRC_DIR
#define TILE_SRC_DIR "."
#endif
#ifndef TILE_BUILD_DIR
#define TILE_BUILD_DIR "build"
#endif

/* Tile source (named name, len bytes) compiled to emit's text with ndefs
 * -D values; a compile error fails the test. Caller frees. */
static inline char *tu_compile(const char *name, const char *src, size_t len, tilec_emit emit,
                               const tilec_define *defs, int ndefs) {
  tilec_options o;
  tilec_options_init(&o);
  o.emit = emit;
  o.defines = defs;
  o.ndefines = ndefs;
  tilec_result *r = NULL;
  tilec_status st = tilec_compile(name, src, len, &o, &r);
  if (st != TILEC_OK) print_error("%s\n", r ? tilec_result_diagnostics(r) : "no result");
  assert_int_equal(st, TILEC_OK);
  char *s = strdup(tilec_result_output(r, NULL));
  tilec_result_free(r);
  return s;
}

/* xorshift64: the tests' reproducible random numbers (*state != 0) */
static inline uint64_t tu_xorshift(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

/* Read a whole file; NULL if it cannot be read. Caller frees. */
static inline char *tu_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (!buf) { fclose(f); return NULL; }
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  buf[got] = 0;
  if (len) *len = got;
  return buf;
}

/* A fresh temporary directory (mkdtemp), path written into buf. */
static inline int tu_tmpdir(char *buf, size_t cap) {
  const char *base = getenv("TMPDIR");
  snprintf(buf, cap, "%s/tiletest.XXXXXX", base && *base ? base : "/tmp");
  return mkdtemp(buf) ? 0 : -1;
}

/* Remove a directory tree (for tmpdirs made by tests). */
static inline void tu_rmtree(const char *path) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", path);
}
/* cmocka checks of a text: it contains needle / it does not (what names the
 * text in the failure message, which prints the whole text). */
static inline void has(const char *hay, const char *needle, const char *what) {
  if (!hay || !strstr(hay, needle)) {
    print_error("%s does not contain:\n  %s\n--- %s ---\n%s\n", what, needle, what, hay ? hay : "(null)");
    fail();
  }
}
static inline void lacks(const char *hay, const char *needle, const char *what) {
  if (hay && strstr(hay, needle)) {
    print_error("%s should not contain:\n  %s\n--- %s ---\n%s\n", what, needle, what, hay);
    fail();
  }
}

/* ptxas for sm_100a/sm_90a assembly checks: $TILE_PTXAS, $CUDA_HOME/bin, /usr/local/cuda/bin, PATH (NULL: none). */
static inline const char *tu_ptxas_path(void) {
  static char buf[4096];
  const char *e = getenv("TILE_PTXAS");
  if (e && *e && access(e, X_OK) == 0) return e;
  const char *home = getenv("CUDA_HOME");
  if (home) {
    snprintf(buf, sizeof buf, "%s/bin/ptxas", home);
    if (access(buf, X_OK) == 0) return buf;
  }
  if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) return "/usr/local/cuda/bin/ptxas";
  return system("command -v ptxas >/dev/null 2>&1") == 0 ? "ptxas" : NULL;
}

/* Assemble each of the n PTX texts with ptxas for arch in dir (k<i>.ptx,
 * k<i>.cubin, k<i>.log); a refusal fails the test with ptxas's log and
 * the PTX (dir removed first). */
static inline void tu_ptxas_each(const char *ptxas, const char *arch, const char *const *ptx, int n, const char *dir) {
  char path[600], cmd[8192];
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/k%d.ptx", dir, i);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(ptx[i], f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' -arch=%s '%s' -o '%s/k%d.cubin' 2>'%s/k%d.log'", ptxas, arch, path, dir, i, dir, i);
    if (system(cmd) != 0) {
      snprintf(path, sizeof path, "%s/k%d.log", dir, i);
      char *log = tu_read_file(path, NULL);
      print_error("ptxas refuses kernel %d:\n%s\n--- its PTX ---\n%s\n", i, log ? log : "", ptx[i]);
      free(log);
      tu_rmtree(dir);
      fail();
    }
  }
}

#ifdef TILE_EMU_H
/* The emulator's tests (after emu/emu.h): parse ptx and run the launch l;
 * true when it ran, else the report (or the parser's error) in err. */
static inline bool tu_emu_run(const char *ptx, const EmLaunch *l, char *err, size_t errlen) {
  EmModule *m = NULL;
  if (!em_ptx_parse(ptx, strlen(ptx), &m, err, errlen)) return false;
  bool ok = em_launch(m, l, err, errlen);
  em_module_free(m);
  return ok;
}

/* tu_emu_run, failing the test with the emulator's report (what: the case) */
static inline void tu_emu_must(const char *ptx, const EmLaunch *l, const char *what) {
  char err[1024];
  if (!tu_emu_run(ptx, l, err, sizeof err)) {
    print_error("%s: %s\n", what, err);
    fail();
  }
}
#endif

/* ---- TIR text helpers (tests that include tilec_int.h first) ---------- */
#ifdef TILEC_INT_H

/* the TIR of src with defs; rings: tilec's --tma-rings (0 auto, 1 none, 2 all) */
static inline char *tir_dn(const char *src, const tilec_define *defs, int nd, int rings) {
  tilec_options o;
  tilec_options_init(&o);
  o.emit = TILEC_EMIT_TIR;
  o.no_tma_rings = rings == 1;
  o.tma_rings_all = rings == 2;
  o.defines = defs;
  o.ndefines = nd;
  tilec_result *r = NULL;
  tilec_status st = tilec_compile("p.tile", src, strlen(src), &o, &r);
  if (st != TILEC_OK) {
    print_error("compile failed (%d):\n%s\n--- source ---\n%s\n", st, tilec_result_diagnostics(r), src);
    tilec_result_free(r);
    fail();
  }
  char *s = strdup(tilec_result_output(r, NULL));
  tilec_result_free(r);
  return s;
}

/* src (named name, with the prelude) parsed, checked and through the
 * passes on a context of its own, for tests that walk or change the
 * in-memory TIR; *m gets the module; a compile error fails the test.
 * tu_ctx_free ends it. */
static inline Ctx *tu_build(const char *name, const char *src, const tilec_define *defs, int nd, TModule **m) {
  Ctx *c = calloc(1, sizeof *c);
  assert_non_null(c);
  ar_init(&c->arena);
  tilec_options_init(&c->opts);
  c->opts.emit = TILEC_EMIT_TIR;
  c->opts.defines = defs;
  c->opts.ndefines = nd;
  c->sm = 90;
  c->arch = "sm_90a";
  Program *prog = ar_alloc(&c->arena, sizeof *prog);
  c->prog = prog;
  Vec imports = {0};
  size_t plen = 0;
  const char *pre = tc_stdlib_lookup("std/prelude.tile", &plen);
  assert_non_null(pre);
  ps_parse(c, cx_add_source(c, "<tile>/std/prelude.tile", pre, plen, true), prog, &imports);
  ps_parse(c, cx_add_source(c, name, src, strlen(src), false), prog, &imports);
  *m = ar_alloc(&c->arena, sizeof **m);
  if (!(c->nerrors == 0 && sm_build(c, prog, *m) && pass_run(c, *m))) {
    print_error("%s did not compile:\n%s\n", name, c->diags.data ? c->diags.data : "");
    fail();
  }
  return c;
}

static inline void tu_ctx_free(Ctx *c) {
  buf_free(&c->diags);
  ar_free(&c->arena);
  free(c);
}

static inline char *tir_d(const char *src, const tilec_define *defs, int nd) { return tir_dn(src, defs, nd, 0); }
static inline char *tir(const char *src) { return tir_d(src, NULL, 0); }

static inline char *tir_file(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", TILE_SRC_DIR, rel);
  char *src = tu_read_file(path, NULL);
  assert_non_null(src);
  char *t = tir(src);
  free(src);
  return t;
}

/* The n-th (0-based) line whose op is `op` ("load", "store", "convert_layout",
 * ...), i.e. "%N = op " or "op " after the indentation; "" when none. */
/* Returned strings live in a ring of buffers: valid for the next 15 calls. */
static inline char *ring(void) {
  static char bufs[16][2048];
  static int next;
  return bufs[next++ % 16];
}

static inline const char *op_line(const char *text, const char *op, int nth) {
  char *line = ring();
  const char *p = text;
  while (*p) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    const char *q = p;
    while (q < p + n && *q == ' ') q++;
    if (*q == '%') {
      const char *eq = strstr(q, " = ");
      if (eq && eq < p + n) q = eq + 3;
    }
    size_t ol = strlen(op);
    if ((size_t)(p + n - q) > ol && !strncmp(q, op, ol) && q[ol] == ' ' && nth-- == 0) {
      if (n >= 2047) n = 2047;
      memcpy(line, p, n);
      line[n] = 0;
      return line;
    }
    p = e ? e + 1 : p + n;
  }
  line[0] = 0;
  return line;
}

static inline int op_count(const char *text, const char *op) {
  int n = 0;
  while (*op_line(text, op, n)) n++;
  return n;
}

/* The layout part of an op line ("#blocked<...>" up to the location). */
static inline const char *layout_of(const char *line) {
  char *l = ring();
  const char *p = strstr(line, " : ");
  p = p ? strstr(p, " #") : NULL;
  if (!p) {
    l[0] = 0;
    return l;
  }
  p++;
  const char *e = strstr(p, "  @");
  size_t n = e ? (size_t)(e - p) : strlen(p);
  if (n >= 2047) n = 2047;
  memcpy(l, p, n);
  l[n] = 0;
  return l;
}

/* The result id of an op line ("%12 = ..." -> 12), -1 when none. */
static inline int result_id(const char *line) {
  while (*line == ' ') line++;
  return *line == '%' ? atoi(line + 1) : -1;
}

/* Operand k (0-based) of an op line, -1 when none. */
static inline int operand_id(const char *line, int k) {
  const char *p = strstr(line, " = ");
  p = p ? p + 3 : line;
  while (*p == ' ') p++;
  for (int i = 0; (p = strchr(p, '%')); i++) {
    const char *end = strstr(line, " : ");
    if (end && p > end) break;
    if (i == k) return atoi(p + 1);
    p++;
  }
  return -1;
}

/* The line defining %id. */
static inline const char *def_line(const char *text, int id) {
  char *line = ring();
  char pat[32];
  snprintf(pat, sizeof pat, "%%%d = ", id);
  const char *p = strstr(text, pat);
  while (p && p > text && p[-1] != ' ' && p[-1] != '\n') p = strstr(p + 1, pat);
  line[0] = 0;
  if (!p) return line;
  while (p > text && p[-1] != '\n') p--;
  size_t n = strcspn(p, "\n");
  if (n >= 2047) n = 2047;
  memcpy(line, p, n);
  line[n] = 0;
  return line;
}

/* Every tile type printed in the TIR carries a layout. */
static inline void every_tile_has_layout(const char *text) {
  const char *p = text;
  while (*p) {
    size_t n = strcspn(p, "\n");
    char line[2048];
    snprintf(line, sizeof line, "%.*s", (int)(n < 2047 ? n : 2047), p);
    const char *c = strstr(line, " : ");
    if (c && strchr(c, '[') && !strstr(c, " #") && !strstr(line, "kernel @") && !strstr(c, "smem<") &&
        !strstr(c, ": mbarrier[")) {
      print_error("tile without a layout: %s\n", line);
      fail();
    }
    p += n;
    if (*p) p++;
  }
}

/* ---- coalescing ---------------------------------------------------------- */

static inline char *copy_src(const char *dtype, int block, int warps, const char *offs_expr) {
  char *s = malloc(1024);
  snprintf(s, 1024,
           "kernel k(x: *%s, y: *%s, n: i32) warps(%d) {\n"
           "    let offs = program_id(0) * %d + arange(0, %d);\n"
           "    let v = load(x + %s, offs < n);\n"
           "    store(y + %s, v, offs < n);\n"
           "}\n",
           dtype, dtype, warps, block, block, offs_expr, offs_expr);
  return s;
}

#endif

#ifdef JFA_H /* the JFA host API's tests (test_jfa_api.c, test_jfa_bwd_items.c) */
/* lengths 100, 50, 50 */
__attribute__((unused)) static int32_t TU_JFA_OFF[4] = {0, 100, 150, 200};
/* three sequences (TU_JFA_OFF), two heads, head dim 128 */
static inline jfa_params tu_jfa_params(void) {
  jfa_params p = {0};
  p.batch = 3;
  p.cu_seqlens = TU_JFA_OFF;
  p.heads = 2;
  p.head_dim = 128;
  return p;
}
#endif

#endif

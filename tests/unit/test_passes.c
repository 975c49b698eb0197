/* test_passes.c - unit tests for compiler/passes.c (with axisinfo.c):
 * layout assignment as seen in TILEC_EMIT_TIR output - coalesced 16-byte
 * vectors for contiguous loads and stores, the order of a 2-D access that is
 * contiguous along dim 0, mma / dot-operand layouts with conversions before
 * `dot`, loop-carried accumulators that stay #mma, #slice layouts from
 * reductions, and rematerialized aranges - plus a structural verifier that
 * walks the in-memory TIR after pass_run (internal API) and checks that
 * every operation's operands have the layouts the operation needs, and the
 * check of arrivals that a shared-memory store or read reaches without a
 * barrier, through ifs and loops. Axis info has its own tests:
 * test_axisinfo.c. */
#include "testutil.h"
#include "tilec_int.h"

/* For a test of a compiler bug not fixed yet (commented "KNOWN BUG: ..."):
 * cmocka's skip(), unless TILE_TEST_KNOWN_BUGS=1 asks to run it. */
#define KNOWN_BUG(why)                                                   \
  do {                                                                   \
    if (!getenv("TILE_TEST_KNOWN_BUGS")) {                               \
      print_message("[ KNOWN BUG ] %s\n", why);                          \
      skip();                                                            \
    }                                                                    \
  } while (0)

/* ---- TIR text helpers --------------------------------------------------- */

static char *tir_d(const char *src, const tilec_define *defs, int nd) {
  tilec_options o;
  tilec_options_init(&o);
  o.emit = TILEC_EMIT_TIR;
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

static char *tir(const char *src) { return tir_d(src, NULL, 0); }

static char *tir_file(const char *rel) {
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
static char *ring(void) {
  static char bufs[16][2048];
  static int next;
  return bufs[next++ % 16];
}

static const char *op_line(const char *text, const char *op, int nth) {
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

static int op_count(const char *text, const char *op) {
  int n = 0;
  while (*op_line(text, op, n)) n++;
  return n;
}

/* The layout part of an op line ("#blocked<...>" up to the location). */
static const char *layout_of(const char *line) {
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
static int result_id(const char *line) {
  while (*line == ' ') line++;
  return *line == '%' ? atoi(line + 1) : -1;
}

/* Operand k (0-based) of an op line, -1 when none. */
static int operand_id(const char *line, int k) {
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
static const char *def_line(const char *text, int id) {
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
static void every_tile_has_layout(const char *text) {
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

static char *copy_src(const char *dtype, int block, int warps, const char *offs_expr) {
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

static void test_coalesced_1d(void **state) {
  (void)state;
  static const struct {
    const char *dt;
    int spt;
  } cases[] = {{"f32", 4}, {"bf16", 8}, {"f16", 8}, {"i32", 4}, {"u8", 16}, {"i8", 16}, {"f64", 2}, {"i64", 2}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *src = copy_src(cases[i].dt, 4096, 4, "offs");
    char *t = tir(src);
    char want[128];
    snprintf(want, sizeof want, "#blocked<spt=[%d], tpw=[32], wpc=[4], order=[0]>", cases[i].spt);
    const char *ld = op_line(t, "load", 0);
    if (strcmp(layout_of(ld), want)) {
      print_error("%s: load has %s, want %s\n%s\n", cases[i].dt, layout_of(ld), want, t);
      fail();
    }
    /* the store takes the loaded value with no conversion */
    assert_int_equal(op_count(t, "convert_layout"), 0);
    const char *st = op_line(t, "store", 0);
    assert_int_equal(operand_id(st, 1), result_id(ld));
    has(layout_of(def_line(t, operand_id(st, 0))), want, "store pointer layout");
    every_tile_has_layout(t);
    free(t);
    free(src);
  }
}

/* Fewer elements per thread than 16 bytes: the vector shrinks to fit. */
static void test_coalesced_small_tiles(void **state) {
  (void)state;
  static const struct {
    int block, warps;
    const char *want;
  } cases[] = {
      {1024, 4, "#blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>"},
      {256, 4, "#blocked<spt=[2], tpw=[32], wpc=[4], order=[0]>"},
      {128, 4, "#blocked<spt=[1], tpw=[32], wpc=[4], order=[0]>"},
      {64, 4, "#blocked<spt=[1], tpw=[32], wpc=[4], order=[0]>"},
      {512, 8, "#blocked<spt=[2], tpw=[32], wpc=[8], order=[0]>"},
      {1024, 1, "#blocked<spt=[4], tpw=[32], wpc=[1], order=[0]>"},
      {16, 1, "#blocked<spt=[1], tpw=[32], wpc=[1], order=[0]>"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *src = copy_src("f32", cases[i].block, cases[i].warps, "offs");
    char *t = tir(src);
    const char *l = layout_of(op_line(t, "load", 0));
    /* tpw/wpc may replicate on tiles smaller than the CTA: check spt always,
     * the whole layout where the table says so */
    char spt[32];
    snprintf(spt, sizeof spt, "spt=[%c]", strstr(cases[i].want, "spt=[")[5]);
    has(l, spt, "load layout");
    if (cases[i].block >= 32 * cases[i].warps) has(l, cases[i].want, "load layout");
    free(t);
    free(src);
  }
}

/* Non-contiguous pointers get one element per access. */
static void test_uncoalesced(void **state) {
  (void)state;
  char *src = copy_src("f32", 1024, 4, "offs * 2");
  char *t = tir(src);
  has(layout_of(op_line(t, "load", 0)), "spt=[1]", "strided load");
  free(t);
  free(src);
  /* a broadcast pointer (all lanes the same address) too */
  t = tir("kernel k(x: *f32, y: *f32) { let v = load(x + zeros([1024], i32)); store(y + arange(0, 1024), v); }");
  has(layout_of(op_line(t, "load", 0)), "spt=[1]", "broadcast load");
  free(t);
}

/* 2-D accesses: the contiguous dimension is the fastest one. */
static void test_coalesced_2d_order(void **state) {
  (void)state;
  /* contiguous along dim 1 (row major) */
  char *t = tir(
      "kernel k(x: *f32, y: *f32, ld: i32) {\n"
      "    let r = arange(0, 64);\n"
      "    let c = arange(0, 32);\n"
      "    let v = load(x + r[:, None] * ld + c[None, :]);\n"
      "    store(y + r[:, None] * ld + c[None, :], v);\n"
      "}\n");
  const char *l = layout_of(op_line(t, "load", 0));
  has(l, "spt=[1,4]", "row-major load");
  has(l, "order=[1,0]", "row-major load");
  every_tile_has_layout(t);
  free(t);
  /* contiguous along dim 0 (column major): order=[0,1] */
  t = tir(
      "kernel k(x: *f32, y: *f32, ld: i32) {\n"
      "    let r = arange(0, 64);\n"
      "    let c = arange(0, 32);\n"
      "    let v = load(x + r[:, None] + c[None, :] * ld);\n"
      "    store(y + r[:, None] + c[None, :] * ld, v);\n"
      "}\n");
  const char *ld = op_line(t, "load", 0);
  l = layout_of(ld);
  has(l, "#blocked<spt=[4,1]", "column-major load");
  has(l, "order=[0,1]", "column-major load");
  has(layout_of(def_line(t, operand_id(op_line(t, "store", 0), 0))), "order=[0,1]", "column-major store");
  assert_int_equal(op_count(t, "convert_layout"), 0);
  free(t);
  /* bf16 column major: 8 elements along dim 0 */
  t = tir(
      "kernel k(x: *bf16, y: *bf16, ld: i32) {\n"
      "    let r = arange(0, 128);\n"
      "    let c = arange(0, 32);\n"
      "    let v = load(x + r[:, None] + c[None, :] * ld);\n"
      "    store(y + r[:, None] + c[None, :] * ld, v);\n"
      "}\n");
  l = layout_of(op_line(t, "load", 0));
  has(l, "#blocked<spt=[8,1]", "bf16 column-major load");
  has(l, "order=[0,1]", "bf16 column-major load");
  free(t);
  /* a transposing copy: read row major, write column major -> one conversion */
  t = tir(
      "kernel k(x: *f32, y: *f32) {\n"
      "    let r = arange(0, 64);\n"
      "    let c = arange(0, 64);\n"
      "    let v = load(x + r[:, None] * 64 + c[None, :]);\n"
      "    store(y + r[:, None] + c[None, :] * 64, v);\n"
      "}\n");
  has(layout_of(op_line(t, "load", 0)), "order=[1,0]", "load");
  const char *cv = op_line(t, "convert_layout", 0);
  has(cv, "order=[0,1]", "the conversion before the store");
  assert_int_equal(operand_id(op_line(t, "store", 0), 1), result_id(cv));
  free(t);
}

/* ---- dot ---------------------------------------------------------------- */

static void check_dot(const char *t, const char *mma) {
  char a[256], b[256];
  snprintf(a, sizeof a, "#dot<a, %s>", mma);
  snprintf(b, sizeof b, "#dot<b, %s>", mma);
  const char *d = op_line(t, "dot", 0);
  if (!*d) {
    print_error("no dot in:\n%s\n", t);
    fail();
  }
  has(layout_of(d), mma, "dot result");
  /* both operands come from conversions into the operand layouts */
  const char *da = def_line(t, operand_id(d, 0));
  has(da, "convert_layout", "operand a");
  has(layout_of(da), a, "operand a");
  const char *db = def_line(t, operand_id(d, 1));
  has(db, "convert_layout", "operand b");
  has(layout_of(db), b, "operand b");
}

/* A Triton-style matmul the pipeline leaves alone (64-byte rows of K, row
 * strides of unknown alignment): dot on mma.sync, operands converted. */
static const char MATMUL_MMA[] =
    "kernel matmul(a: *bf16, b: *bf16, c: *bf16, M: i32, N: i32, K: i32, lda: i32, ldb: i32, ldc: i32,\n"
    "              const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) warps(4) {\n"
    "    let rm = program_id(0) * BM + arange(0, BM);\n"
    "    let rn = program_id(1) * BN + arange(0, BN);\n"
    "    let rk = arange(0, BK);\n"
    "    let acc = zeros([BM, BN], f32);\n"
    "    for k in range(0, K, BK) {\n"
    "        let ka = k + rk;\n"
    "        let ta = load(a + rm[:, None] * lda + ka[None, :], (rm[:, None] < M) & (ka[None, :] < K), 0.0);\n"
    "        let tb = load(b + ka[:, None] * ldb + rn[None, :], (ka[:, None] < K) & (rn[None, :] < N), 0.0);\n"
    "        acc = dot(ta, tb, acc);\n"
    "    }\n"
    "    store(c + rm[:, None] * ldc + rn[None, :], acc as bf16, (rm[:, None] < M) & (rn[None, :] < N));\n"
    "}\n";

static void test_dot_layouts(void **state) {
  (void)state;
  char *t = tir(MATMUL_MMA);
  has(t, "not pipelined: a is not known to be read in aligned 16-byte runs", "the pipeline's note");
  check_dot(t, "#mma<v2, warps=[4,1]>");
  every_tile_has_layout(t);
  free(t);
  static const struct {
    const char *dt;
    int m, n, k, warps;
    const char *mma;
  } cases[] = {
      {"bf16", 64, 64, 32, 4, "#mma<v2, warps=[4,1]>"}, {"f16", 128, 128, 32, 8, "#mma<v2, warps=[8,1]>"},
      {"f16", 16, 64, 16, 4, "#mma<v2, warps=[1,4]>"},  {"f32", 32, 32, 16, 4, "#mma<v2, warps=[2,2]>"},
      {"bf16", 16, 8, 16, 1, "#mma<v2, warps=[1,1]>"},  {"bf16", 16, 16, 16, 4, "#mma<v2, warps=[1,2]>"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char src[1024];
    snprintf(src, sizeof src,
             "kernel k(a: *%s, b: *%s, c: *f32) warps(%d) {\n"
             "    let rm = arange(0, %d);\n"
             "    let rn = arange(0, %d);\n"
             "    let rk = arange(0, %d);\n"
             "    let x = load(a + rm[:, None] * %d + rk[None, :]);\n"
             "    let y = load(b + rk[:, None] * %d + rn[None, :]);\n"
             "    store(c + rm[:, None] * %d + rn[None, :], dot(x, y));\n"
             "}\n",
             cases[i].dt, cases[i].dt, cases[i].warps, cases[i].m, cases[i].n, cases[i].k, cases[i].k, cases[i].n,
             cases[i].n);
    t = tir(src);
    check_dot(t, cases[i].mma);
    /* the accumulator (zeros) is made directly in the mma layout */
    const char *acc = def_line(t, operand_id(op_line(t, "dot", 0), 2));
    has(acc, "splat", "accumulator");
    has(layout_of(acc), cases[i].mma, "accumulator");
    /* only the operands are converted (to the dot operand layouts): the
     * result is stored straight from the accumulator registers */
    assert_int_equal(op_count(t, "convert_layout"), 2);
    const char *st = op_line(t, "store", 0);
    has(layout_of(def_line(t, operand_id(st, 1))), cases[i].mma, "stored value");
    every_tile_has_layout(t);
    free(t);
  }
}

/* pipeline.c: the Triton-style matmul becomes copies into two rings issued
 * two iterations ahead (4 stages), one wgmma a step kept in flight, the
 * waits where the schedule needs them; what stops it is said in a note. */
/* src with its first `from` replaced by `to` (malloc'd). */
static char *spliced(const char *src, const char *from, const char *to) {
  const char *at = strstr(src, from);
  assert_non_null(at);
  size_t n = strlen(src) + strlen(to) + 1;
  char *m = malloc(n);
  snprintf(m, n, "%.*s%s%s", (int)(at - src), src, to, at + strlen(from));
  return m;
}

/* pipeline.c's two dots in a loop (Triton's attention forward): K and V
 * through rings of cp.async copies, Q stored once into shared memory
 * before the first loop, P from registers; each dot a wgmma waited for at
 * once; the masked loop after reuses the rings. */
static char *attn_fwd_tir(const char *src, const tilec_define *defs, int nd) {
  char *t = tir_d(src, defs, nd);
  char *end = strstr(t, "kernel @attn_bwd_pre");
  assert_non_null(end);
  *end = 0; /* attn_fwd alone */
  return t;
}

static void test_pipelined_pair(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/fused_attention/fused_attention.tile", TILE_SRC_DIR);
  char *src = tu_read_file(path, NULL);
  assert_non_null(src);
  char *t = attn_fwd_tir(src, NULL, 0);
  has(t, "// pipeline: dot at 52:14 and the one after it pipelined: 4 stages (copies 2 iterations ahead) of 2 tiles "
         "through cp.async into 128-byte swizzled shared memory (65536 bytes), the second's a from registers",
      "the first loop's note");
  has(t, "(65536 bytes, the rings of the loop before)", "the second loop's note");
  has(t, "smem<f16, [128, 64] x 1, swizzle 128>", "Q, staged");
  assert_int_equal(op_count(t, "dot"), 0);
  assert_int_equal(op_count(t, "mma_async"), 4);
  assert_int_equal(op_count(t, "smem_store"), 1); /* Q once, for both loops */
  assert_int_equal(op_count(t, "smem_alloc"), 3);
  /* per loop: 2 prologue iterations and 1 in the body, of K and V */
  assert_int_equal(op_count(t, "async_copy"), 12);
  assert_int_equal(op_count(t, "async_commit"), 6);
  assert_int_equal(op_count(t, "load"), 1); /* Q's own load, before the loops */
  const char *ss = strstr(t, "smem_store"), *body = strstr(t, "  do (");
  assert_true(ss && body && ss < body);
  const char *aw = strstr(body, "async_wait"), *fe = strstr(body, "fence_async_shared"),
             *bar = strstr(body, "named_barrier id=0 threads=256"), *cp = strstr(body, "async_copy"),
             *m1 = strstr(body, "mma_async"), *w1 = m1 ? strstr(m1, "mma_wait 0") : NULL,
             *m2 = w1 ? strstr(w1, "mma_async") : NULL, *w2 = m2 ? strstr(m2, "mma_wait 0") : NULL;
  assert_true(aw && fe && bar && cp && m1 && w1 && m2 && w2);
  assert_true(aw < fe && fe < bar && bar < cp && cp < m1);
  every_tile_has_layout(t);
  free(t);
  /* what stops it, said */
  char *s0 = spliced(src, "warps(WARPS) {", "warps(WARPS) stages(0) {");
  t = attn_fwd_tir(s0, NULL, 0);
  has(t, "dot at 52:14 and the one after it not pipelined: stages(0)", "stages(0)");
  assert_int_equal(op_count(t, "mma_async"), 0);
  free(t);
  free(s0);
  tilec_define w4 = {"WARPS", "4"};
  t = attn_fwd_tir(src, &w4, 1);
  has(t, "not pipelined: each warpgroup computes 64 rows on wgmma, so M must be 16 x warps", "M = 128 on 4 warps");
  assert_int_equal(op_count(t, "dot"), 4);
  free(t);
  free(src);
}

/* pipeline_multi.c's three and four dots in a loop (Triton's attention
 * backward): dK/dV's loop reads Q and dO from rings (each tile by two
 * dots, one transposed), K and V staged before the loop, P^T and dS^T from
 * registers; dQ's loop reads K and V from rings, Q and dO staged. The
 * kernel named alone, from "kernel @name(" to the next kernel. */
static char *kernel_tir(const char *src, const char *name, const tilec_define *defs, int nd) {
  char *t = tir_d(src, defs, nd), head[128];
  snprintf(head, sizeof head, "kernel @%s(", name);
  char *at = strstr(t, head);
  assert_non_null(at);
  char *end = strstr(at + 1, "\nkernel @");
  if (end) end[1] = 0;
  memmove(t, at, strlen(at) + 1);
  return t;
}

/* In the first loop body of t: the waits and the copies, then the wgmmas
 * and their waits in the order `want` spells ("A": mma_async, "W1":
 * mma_wait 1). */
static void multi_body_order(const char *t, const char *want) {
  const char *body = strstr(t, "  do (");
  assert_non_null(body);
  const char *aw = strstr(body, "async_wait"), *fe = strstr(body, "fence_async_shared"),
             *bar = strstr(body, "named_barrier id=0 threads=256"), *cp = strstr(body, "async_copy"),
             *m = strstr(body, "mma_async"), *end = strstr(body, "\n  }");
  assert_true(aw && fe && bar && cp && m && end);
  assert_true(aw < fe && fe < bar && bar < cp && cp < m);
  char got[64] = "";
  for (const char *q = body; (q = strstr(q, " mma_")) && q < end; q++) {
    size_t n = strlen(got);
    if (!strncmp(q, " mma_async ", 11)) snprintf(got + n, sizeof got - n, "%sA", n ? " " : "");
    else if (!strncmp(q, " mma_wait ", 10)) snprintf(got + n, sizeof got - n, "%sW%c", n ? " " : "", q[10]);
  }
  assert_string_equal(got, want);
}

static void test_pipelined_multi(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/fused_attention/fused_attention.tile", TILE_SRC_DIR);
  char *src = tu_read_file(path, NULL);
  assert_non_null(src);
  /* dK, dV: four dots */
  char *t = kernel_tir(src, "attn_bwd_dkdv", NULL, 0);
  has(t, "// pipeline: dot at 148:15 and the 3 after it pipelined: 4 stages (copies 2 iterations ahead) of 2 tiles "
         "through cp.async into 128-byte swizzled shared memory (32768 bytes), a x b of each dot: staged x ring 1^T "
         "(early); registers x ring 2; staged x ring 2^T (early); registers x ring 1; each dot a wgmma on 2 warpgroups, the early "
         "ones (operands in shared memory) issued together at the first and each waited for where it is used, the "
         "others waited for at once",
      "dkdv's note");
  has(t, "smem<f16, [128, 64] x 1, swizzle 128>", "K or V, staged");
  has(t, "smem<f16, [32, 64] x 4, swizzle 128>", "Q's or dO's ring");
  has(t, "(32768 bytes, the rings of the loop before)", "the partial block's loop, on the same rings");
  assert_int_equal(op_count(t, "smem_alloc"), 4);
  assert_int_equal(op_count(t, "smem_store"), 2); /* K and V, once for both loops */
  assert_int_equal(op_count(t, "mma_async"), 8);
  assert_int_equal(op_count(t, "dot"), 0);
  /* per loop: 2 prologue iterations and 1 in the body, of Q and dO: one copy each, though two dots read each */
  assert_int_equal(op_count(t, "async_copy"), 12);
  assert_int_equal(op_count(t, "async_commit"), 6);
  assert_int_equal(op_count(t, "slice"), 4); /* Q^T and dO^T: views of the slots */
  /* S^T and dP^T issued together, dP^T left running through P^T's softmax and dV */
  multi_body_order(t, "A A W1 A W0 W1 A W0");
  every_tile_has_layout(t);
  free(t);
  /* dQ: three dots */
  t = kernel_tir(src, "attn_bwd_dq", NULL, 0);
  has(t, "// pipeline: dot at 221:14 and the 2 after it pipelined: 4 stages (copies 2 iterations ahead) of 2 tiles "
         "through cp.async into 128-byte swizzled shared memory (32768 bytes), a x b of each dot: staged x ring 1^T "
         "(early); staged x ring 2^T (early); registers x ring 1; each dot a wgmma on 2 warpgroups, the early ones",
      "dq's note");
  assert_int_equal(op_count(t, "smem_store"), 2); /* Q and dO */
  assert_int_equal(op_count(t, "mma_async"), 6);
  assert_int_equal(op_count(t, "dot"), 0);
  assert_int_equal(op_count(t, "async_copy"), 12);
  multi_body_order(t, "A A W1 W0 A W0");
  every_tile_has_layout(t);
  free(t);
  /* the fused kernel, causal: six loops (dK/dV's diagonal, rest and partial
   * blocks, dQ's), the rings of the first for all, four tiles staged */
  tilec_define causal = {"CAUSAL", "true"};
  t = kernel_tir(src, "attn_bwd", &causal, 1);
  assert_int_equal(op_count(t, "mma_async"), 21);
  assert_int_equal(op_count(t, "dot"), 0);
  assert_int_equal(op_count(t, "smem_store"), 4);
  assert_int_equal(op_count(t, "smem_alloc"), 6);
  {
    int n = 0;
    for (const char *q = t; (q = strstr(q, "the rings of the loop before")); q++) n++;
    assert_int_equal(n, 5);
  }
  every_tile_has_layout(t);
  free(t);
  /* what stops it, said */
  char *s0 = spliced(src, "const CAUSAL: bool = false, const T: dtype = f16, const WARPS: i32 = 8) warps(WARPS) {\n"
                          "    dkdv_program",
                     "const CAUSAL: bool = false, const T: dtype = f16, const WARPS: i32 = 8) warps(WARPS) stages(0) {\n"
                     "    dkdv_program");
  t = kernel_tir(s0, "attn_bwd_dkdv", NULL, 0);
  has(t, "dot at 148:15 and the 3 after it not pipelined: stages(0)", "stages(0)");
  assert_int_equal(op_count(t, "mma_async"), 0);
  free(t);
  free(s0);
  tilec_define w4 = {"WARPS", "4"};
  t = kernel_tir(src, "attn_bwd_dq", &w4, 1);
  has(t, "dot at 221:14 not pipelined: each warpgroup computes 64 rows on wgmma, so M must be 16 x warps",
      "M = 128 on 4 warps");
  assert_int_equal(op_count(t, "mma_async"), 0);
  free(t);
  /* a tile the loop loads that something besides the dots reads stays a load: the dot refused */
  char *s1 = spliced(src, "    let dsT = pT * (dpT - di[None, :]);",
                     "    let di2 = di + sum(dob as f32, axis = 1) * 0.0;\n    let dsT = pT * (dpT - di2[None, :]);");
  t = kernel_tir(s1, "attn_bwd_dkdv", NULL, 0);
  has(t, "dot at 153:10 not pipelined: b is used by more than the dot", "dO read by more than the dots");
  assert_int_equal(op_count(t, "mma_async"), 0);
  free(t);
  free(s1);
  free(src);
}

static void test_pipelined_dot(void **state) {
  (void)state;
  char *t = tir_file("examples/matmul/matmul.tile");
  has(t, "// pipeline: dot at ", "the note");
  has(t, "pipelined: 4 stages (TMA 2 iterations ahead), a [128, 64] K-major and b [64, 256] N-major", "the note");
  has(t, "smem<bf16, [128, 64] x 4, swizzle 128>", "A's ring");
  has(t, "smem<bf16, [64, 256] x 4, swizzle 128>", "B's ring");
  has(t, "mbarrier_alloc offset=0 arrive=1 : mbarrier[4]", "the rings' mbarriers");
  /* the descriptors, derived parameters after the caller's */
  has(t, "%8 ldc: i32 multiple_of(8), %", "the caller's parameters first");
  has(t, "__dot_a: tma<bf16, [128, 64], swizzle 128>", "A's descriptor");
  has(t, "__dot_b: tma<bf16, [64, 64], swizzle 128>", "B's descriptor (four boxes a tile)");
  has(t, "__dot_c: tma<bf16, [128, 64], swizzle 128>", "C's descriptor");
  /* the epilogue: C staged on the B ring's bytes, written by TMA */
  has(t, "// pipeline: store at 48:5 staged in shared memory (on the B ring) and written by TMA", "the store's note");
  has(t, "smem_alloc offset=1024 %119 : smem<bf16, [128, 256], swizzle 128>", "C's staging tile, on the B ring");
  assert_int_equal(op_count(t, "store"), 0);
  assert_int_equal(op_count(t, "smem_store"), 1);
  assert_int_equal(op_count(t, "tma_store"), 1);
  assert_int_equal(op_count(t, "tma_store_wait"), 1);
  {
    const char *e0 = strstr(t, "mma_wait 0"), *ss = strstr(t, "smem_store"), *fe = ss ? strstr(ss, "fence_async_shared") : NULL,
               *ts = strstr(t, "tma_store ");
    assert_true(e0 && ss && fe && ts && e0 < ss && ss < fe && fe < ts);
  }
  assert_int_equal(op_count(t, "dot"), 0);
  assert_int_equal(op_count(t, "load"), 0);
  assert_int_equal(op_count(t, "async_copy"), 0);
  /* prologue: 2 iterations x 2 operands; loop: 2 */
  assert_int_equal(op_count(t, "tma_load"), 6);
  assert_int_equal(op_count(t, "barrier_expect"), 3);
  assert_int_equal(op_count(t, "mma_async"), 1);
  /* in the loop: the barrier (every warpgroup past the wgmma that read the
   * slot refilled), the copies ahead, then this iteration's tiles awaited,
   * the wgmma; one left in flight; nothing waits on copies after the loop */
  const char *body = strstr(t, "  do (");
  assert_non_null(body);
  const char *bar = strstr(body, "named_barrier id=0 threads=256"), *tl = strstr(body, "tma_load"),
             *bw = strstr(body, "barrier_wait"), *mma = strstr(body, "mma_async"), *w1 = strstr(body, "mma_wait 1");
  assert_true(bar && tl && bw && mma && w1);
  assert_true(bar < tl && tl < bw && bw < mma && mma < w1);
  assert_non_null(strstr(w1, "mma_wait 0"));
  assert_null(strstr(w1, "async_wait"));
  every_tile_has_layout(t);
  free(t);
  /* Triton's form: pointers the loop advances by a uniform step, masks
   * against K - k: cp.async. axisinfo keeps them aligned, the copies
   * issued ahead use them advanced, and they are carried in the copies'
   * layout (no conversion through shared memory in the loop) */
  t = tir_file("tests/emu/matmul_ptrinc.tile");
  has(t, "pipelined: 4 stages (copies 2 iterations ahead)", "the note (pointer increments)");
  has(t, "(not TMA: a its addresses are not base + rows * stride + columns)", "why not TMA");
  assert_int_equal(op_count(t, "load"), 0);
  assert_int_equal(op_count(t, "async_copy"), 6);
  assert_int_equal(op_count(t, "async_commit"), 3);
  for (int i = 0; *op_line(t, "convert_layout", i); i++) /* no pointer tile converted */
    lacks(op_line(t, "convert_layout", i), ": *bf16[", "a conversion");
  /* in the loop: wait for this iteration's copies (1 group may stay in
   * flight), fence, barrier, then the wgmma; one wgmma left in flight */
  body = strstr(t, "  do (");
  assert_non_null(body);
  const char *w = strstr(body, "async_wait 1"), *f = strstr(body, "fence_async_shared");
  bar = strstr(body, "named_barrier id=0 threads=256"), mma = strstr(body, "mma_async"), w1 = strstr(body, "mma_wait 1");
  assert_true(w && f && bar && mma && w1);
  assert_true(w < f && f < bar && bar < mma && mma < w1);
  /* after the loop: the last wgmma, then the copies past the end */
  const char *end = strstr(w1, "mma_wait 0");
  assert_non_null(end);
  assert_non_null(strstr(end, "async_wait 0"));
  free(t);
  t = tir_file("tests/emu/matmul_nested.tile");
  has(t, "(not TMA: a the loop is inside another loop)", "why not TMA (nested)");
  free(t);
  /* what keeps the plain lowering, each with its reason */
  static const struct {
    const char *from, *to, *why;
  } no[] = {
      {"warps(WARPS)", "warps(4)", "M must be 16 x warps"},
      {"lda: i32 multiple_of(8)", "lda: i32", "a is not known to be read in aligned 16-byte runs"},
      {"const BK: i32 = 64", "const BK: i32 = 32", "a is not whole 128-byte rows"},
      {"stages(STAGES)", "stages(0)", "not pipelined: stages(0)"},
      {"(ka[None, :] < K), 0.0)", "(ka[None, :] < K), 1.0)", "a is loaded with a nonzero 'other'"},
      {"(ka[None, :] < K), 0.0)", "(ka[None, :] <= K), 0.0)", "a has a mask that does not keep a prefix"},
  };
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/matmul/matmul.tile", TILE_SRC_DIR);
  char *src = tu_read_file(path, NULL);
  assert_non_null(src);
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    char *m = spliced(src, no[i].from, no[i].to);
    t = tir(m);
    has(t, no[i].why, no[i].from);
    assert_int_equal(op_count(t, "mma_async"), 0);
    assert_int_equal(op_count(t, "dot"), 1);
    free(t);
    free(m);
  }
  /* what is pipelined on cp.async instead of TMA, each with its reason */
  static const struct {
    const char *from, *to, *why;
  } copy[] = {
      {"(rm[:, None] < M) & (ka[None, :] < K), 0.0)", "(ka[None, :] < K), 0.0)",
       "(not TMA: a its mask is not (rows < R) & (columns < C))"},
      {"(rm[:, None] < M) & (ka", "(rm[:, None] < M - 1) & (ka", "(not TMA: a its mask's bounds are not parameters"},
      {"load(a + rm[:, None] * lda", "load(a + rm[:, None] * (lda + 8)", "(not TMA: a its row stride is not a parameter"},
      {"load(b + ka[:, None] * ldb", "load(b + 64 + ka[:, None] * ldb", "(not TMA: b its base is not a pointer parameter)"},
      {"(ka[:, None] < K) & (rn[None, :] < N)", "(ka[:, None] < K) & (ka[:, None] < N)",
       "(not TMA: b its mask is not (rows < R) & (columns < C))"},
      {"b: *bf16,", "b: *bf16, __dot_b: i32,", "(not TMA: a a parameter is named like the descriptors"},
  };
  /* the store kept in registers, with its reason */
  static const struct {
    const char *from, *to, *why;
  } st[] = {
      {"ldc: i32 multiple_of(8)", "ldc: i32", "written from registers (not by TMA: its row stride is not known"},
      {"(rn[None, :] < N);", "(rn[None, :] < N - 1);", "(not by TMA: its mask is not (rows < R) & (columns < C)"},
      {"store(c + rm[:, None] * ldc", "store(c + 8 + rm[:, None] * ldc", "(not by TMA: its addresses are not base"},
  };
  for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
    char *m = spliced(src, st[i].from, st[i].to);
    t = tir(m);
    has(t, st[i].why, st[i].from);
    assert_int_equal(op_count(t, "tma_load"), 6);
    assert_int_equal(op_count(t, "tma_store"), 0);
    assert_int_equal(op_count(t, "store"), 1);
    free(t);
    free(m);
  }
  for (size_t i = 0; i < sizeof copy / sizeof copy[0]; i++) {
    char *m = spliced(src, copy[i].from, copy[i].to);
    t = tir(m);
    has(t, copy[i].why, copy[i].from);
    assert_int_equal(op_count(t, "mma_async"), 1);
    assert_int_equal(op_count(t, "tma_load"), 0);
    assert_int_equal(op_count(t, "async_copy"), 6);
    free(t);
    free(m);
  }
  free(src);
}

/* The accumulator of a dot in a loop is #mma in the loop: no conversion of
 * it per iteration, and the loop result is #mma too. */
static void test_loop_carried_accumulator(void **state) {
  (void)state;
  char *t = tir(MATMUL_MMA);
  const char *fl = op_line(t, "for", 0);
  has(layout_of(fl), "#mma<v2, warps=[4,1]>", "for result");
  /* the block argument of the accumulator */
  const char *hdr = strstr(t, "  do (");
  assert_non_null(hdr);
  char h[512];
  snprintf(h, sizeof h, "%.*s", (int)strcspn(hdr, "\n"), hdr);
  has(h, "f32[64, 64] #mma<v2, warps=[4,1]>", "loop header");
  int arg = atoi(strrchr(h, '%') + 1);
  /* the dot consumes the block argument directly ... */
  const char *d = op_line(t, "dot", 0);
  assert_int_equal(operand_id(d, 2), arg);
  /* ... and the yield gives the dot result back directly */
  const char *y = op_line(t, "yield", 0);
  assert_int_equal(operand_id(y, 0), result_id(d));
  /* no conversion touches the accumulator inside the loop */
  for (int i = 0; *op_line(t, "convert_layout", i); i++) {
    const char *cv = op_line(t, "convert_layout", i);
    assert_int_not_equal(operand_id(cv, 0), arg);
    assert_int_not_equal(operand_id(cv, 0), result_id(d));
    assert_true(strncmp(layout_of(cv), "#mma", 4) != 0);
  }
  /* the initial value is built in #mma outside the loop (no conversion) */
  const char *init = def_line(t, operand_id(fl, 3));
  has(init, "splat", "accumulator init");
  has(layout_of(init), "#mma", "accumulator init");
  free(t);
  /* same with `acc += dot(...)`-style code and a while loop */
  t = tir(
      "kernel k(a: *f16, b: *f16, c: *f32, n: i32) {\n"
      "    let r = arange(0, 64);\n"
      "    let acc = zeros([64, 64], f32);\n"
      "    let i = 0;\n"
      "    while i < n {\n"
      "        let x = load(a + r[:, None] * 64 + r[None, :] + i);\n"
      "        let y = load(b + r[:, None] * 64 + r[None, :] + i);\n"
      "        acc = dot(x, y, acc);\n"
      "        i += 64;\n"
      "    }\n"
      "    store(c + r[:, None] * 64 + r[None, :], acc);\n"
      "}\n");
  const char *w = op_line(t, "while", 0);
  has(w, "#mma", "while results");
  for (int i = 0; *op_line(t, "convert_layout", i); i++)
    assert_true(strncmp(layout_of(op_line(t, "convert_layout", i)), "#mma", 4) != 0);
  free(t);
}

/* ---- reductions ------------------------------------------------------------ */

static void test_reduction_slices(void **state) {
  (void)state;
  char *t = tir(
      "kernel k(x: *f32, out: *f32) {\n"
      "    let r = arange(0, 64);\n"
      "    let c = arange(0, 128);\n"
      "    let v = load(x + r[:, None] * 128 + c[None, :]);\n"
      "    let s = sum(v, axis = 1);\n"
      "    let m = max(v, axis = 0);\n"
      "    let t = min(v);\n"
      "    store(out + r, s);\n"
      "    store(out + c, m + t);\n"
      "}\n");
  const char *ld = op_line(t, "load", 0);
  char parent[256];
  snprintf(parent, sizeof parent, "%s", layout_of(ld));
  char want[512];
  const char *r1 = op_line(t, "reduce", 0);
  has(r1, "reduce sum axis=1", "first reduce");
  snprintf(want, sizeof want, "#slice<dim=1, %s>", parent);
  has(layout_of(r1), want, "sum(axis=1) layout");
  const char *r2 = op_line(t, "reduce", 1);
  has(r2, "reduce max axis=0", "second reduce");
  snprintf(want, sizeof want, "#slice<dim=0, %s>", parent);
  has(layout_of(r2), want, "max(axis=0) layout");
  /* a full reduction ends in a scalar (no layout) */
  int nred = op_count(t, "reduce");
  assert_int_equal(nred, 4);
  const char *last = op_line(t, "reduce", 3);
  has(last, "reduce min axis=0", "last reduce");
  lacks(last, "#", "scalar reduce");
  every_tile_has_layout(t);
  free(t);
  /* row softmax on a 2-D tile: the reduced rows come back with expand_dims
   * into the parent layout, no conversions at all */
  t = tir(
      "kernel k(x: *f32, y: *f32) {\n"
      "    let r = arange(0, 32);\n"
      "    let c = arange(0, 128);\n"
      "    let p = r[:, None] * 128 + c[None, :];\n"
      "    let v = load(x + p);\n"
      "    let e = exp(v - max(v, axis = 1)[:, None]);\n"
      "    store(y + p, e / sum(e, axis = 1)[:, None]);\n"
      "}\n");
  assert_int_equal(op_count(t, "convert_layout"), 0);
  const char *ex = op_line(t, "expand_dims", 0);
  assert_true(*ex != 0);
  for (int i = 0; *op_line(t, "reduce", i); i++) has(layout_of(op_line(t, "reduce", i)), "#slice<dim=1, ", "reduce");
  free(t);
}

/* ---- rematerialization ---------------------------------------------------- */

/* No convert_layout takes an arange (or a value computed only from aranges
 * and constants): such values are recomputed in the layout the user wants. */
static void no_convert_of_cheap(const char *t) {
  for (int i = 0; *op_line(t, "convert_layout", i); i++) {
    char cv[2048];
    snprintf(cv, sizeof cv, "%s", op_line(t, "convert_layout", i));
    int src = operand_id(cv, 0);
    /* follow the chain of definitions */
    int work[64], nw = 0;
    work[nw++] = src;
    bool cheap = true;
    int steps = 0;
    while (nw && cheap && steps++ < 64) {
      int id = work[--nw];
      const char *d = def_line(t, id);
      if (!*d) {
        cheap = false; /* a block argument or parameter */
        break;
      }
      const char *q = strstr(d, " = ") + 3;
      /* what passes.c cannot recompute: memory, reductions, dot, trans, and
       * results of control flow (multi-result lines are not found above) */
      static const char *opaque[] = {"load ", "reduce ", "dot ", "trans ", "atomic_add ", "for ", "while ", "if "};
      for (size_t k = 0; k < sizeof opaque / sizeof opaque[0]; k++)
        if (!strncmp(q, opaque[k], strlen(opaque[k]))) cheap = false;
      if (!cheap) break;
      for (int k = 0; operand_id(d, k) >= 0 && nw < 60; k++) work[nw++] = operand_id(d, k);
    }
    if (cheap) {
      print_error("convert_layout of an arange chain remains:\n%s\n--- TIR ---\n%s\n", cv, t);
      fail();
    }
  }
}

static void test_arange_rematerialized(void **state) {
  (void)state;
  /* one arange used in three layouts: a 1-D store, and both sides of a 2-D
   * tile */
  char *t = tir(
      "kernel k(x: *f32, out: *f32) {\n"
      "    let r = arange(0, 64);\n"
      "    let v = load(x + r[:, None] * 64 + r[None, :]);\n"
      "    store(out + r, sum(v, axis = 1));\n"
      "    store(out + r[None, :] + r[:, None] * 64, v);\n"
      "}\n");
  int nar = op_count(t, "arange");
  assert_true(nar >= 2); /* cloned per layout */
  for (int i = 0; i < nar; i++) {
    const char *a = op_line(t, "arange", i);
    has(a, "arange 0, 64 : i32[64] #", "arange");
    char pat[32];
    snprintf(pat, sizeof pat, "convert_layout %%%d ", result_id(a));
    lacks(t, pat, "TIR");
  }
  no_convert_of_cheap(t);
  free(t);
  static const char *ex[] = {"examples/matmul/matmul.tile", "examples/vector_add/vector_add.tile",
                             "examples/softmax/softmax.tile", "examples/layernorm/layernorm.tile"};
  for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
    t = tir_file(ex[i]);
    for (int j = 0; *op_line(t, "arange", j); j++) {
      char pat[32];
      snprintf(pat, sizeof pat, "convert_layout %%%d ", result_id(op_line(t, "arange", j)));
      lacks(t, pat, ex[i]);
    }
    no_convert_of_cheap(t);
    every_tile_has_layout(t);
    free(t);
  }
}

/* User-written conversions stay; trans gives the transposed layout. */
static void test_user_layouts(void **state) {
  (void)state;
  char *t = tir(
      "kernel k(x: *f32, y: *f32) {\n"
      "    let r = arange(0, 32);\n"
      "    let v = load(x + r[:, None] * 32 + r[None, :]);\n"
      "    let w = convert_layout(v, blocked([1, 1], [1, 32], [4, 1], [1, 0]));\n"
      "    store(y + r[:, None] * 32 + r[None, :], exp(w));\n"
      "}\n");
  const char *cv = op_line(t, "convert_layout", 0);
  has(layout_of(cv), "#blocked<spt=[1,1], tpw=[1,32], wpc=[4,1], order=[1,0]>", "user conversion");
  /* exp runs in the user's layout */
  has(layout_of(op_line(t, "exp", 0)), "#blocked<spt=[1,1], tpw=[1,32], wpc=[4,1], order=[1,0]>", "exp");
  free(t);
  t = tir(
      "kernel k(x: *f32, y: *f32) {\n"
      "    let r = arange(0, 64);\n"
      "    let c = arange(0, 16);\n"
      "    let v = load(x + r[:, None] * 16 + c[None, :]);\n"
      "    store(y + c[:, None] * 64 + r[None, :], trans(v));\n"
      "}\n");
  const char *ld = layout_of(op_line(t, "load", 0));
  has(ld, "order=[1,0]", "load");
  const char *tr = layout_of(op_line(t, "trans", 0));
  has(tr, "order=[0,1]", "trans");
  free(t);
}

/* ---- structural verification on the in-memory TIR ------------------------ */

typedef struct V {
  Ctx *c;
  int warps;
  int nops, nchecked;
  char err[1024];
} V;

static const Layout *lay(const TValue *v) { return v->type->layout; }
static bool is_tile(const TValue *v) { return v->type->kind == TY_TILE; }

static bool same_at(V *vv, const Layout *a, const Layout *b, const Type *t) {
  if (!a || !b) return false;
  return ly_same(a, b, t->rank, t->shape, vv->warps);
}

#define VFAIL(op, ...)                                                                  \
  do {                                                                                  \
    if (!vv->err[0]) {                                                                  \
      int k_ = snprintf(vv->err, sizeof vv->err, "%s @%d:%d: ", ir_opname((op)->opc), (op)->loc.line, \
                        (op)->loc.col);                                                 \
      snprintf(vv->err + k_, sizeof vv->err - (size_t)k_, __VA_ARGS__);                 \
    }                                                                                   \
  } while (0)

static void check_value(V *vv, TOp *op, TValue *v) {
  if (!is_tile(v)) return;
  LinLayout lin;
  const char *why = NULL;
  if (!lay(v)) VFAIL(op, "tile %%%d has no layout", v->id);
  else if (!ly_linear(lay(v), v->type->rank, v->type->shape, vv->warps, &lin, &why))
    VFAIL(op, "layout %s of %%%d does not fit %s: %s", ly_str(vv->c, lay(v)), v->id, ty_str(vv->c, v->type),
          why ? why : "");
}

static void same_as(V *vv, TOp *op, TValue *a, TValue *b, const char *what) {
  if (!is_tile(a) || !is_tile(b)) return;
  if (!same_at(vv, lay(a), lay(b), a->type))
    VFAIL(op, "%s: %s vs %s", what, lay(a) ? ly_str(vv->c, lay(a)) : "none", lay(b) ? ly_str(vv->c, lay(b)) : "none");
}

static bool cheap(const TValue *v, int depth) {
  if (!is_tile(v)) return true;
  if (!v->def || depth > 12) return false;
  TOp *d = v->def;
  if (d->opc == OP_SPLAT || d->opc == OP_ARANGE) return true;
  if (d->opc == OP_EXPAND_DIMS || d->opc == OP_BROADCAST || d->opc == OP_CONVERT) return cheap(d->opnds[0], depth + 1);
  if (!ir_is_elementwise(d->opc)) return false;
  for (int i = 0; i < d->nopnds; i++)
    if (!cheap(d->opnds[i], depth + 1)) return false;
  return true;
}

static void verify_op(TOp *op, void *ud) {
  V *vv = ud;
  vv->nops++;
  for (int i = 0; i < op->nres; i++) check_value(vv, op, op->res[i]);
  for (int r = 0; r < op->nregions; r++)
    for (int i = 0; i < op->regions[r]->nargs; i++) check_value(vv, op, op->regions[r]->args[i]);
  TValue *res = op->nres ? op->res[0] : NULL;
  switch (op->opc) {
  case OP_LOAD:
  case OP_STORE:
  case OP_ATOMIC_ADD:
    for (int i = 1; i < op->nopnds; i++) same_as(vv, op, op->opnds[i], op->opnds[0], "memory operand vs pointers");
    if (res) same_as(vv, op, res, op->opnds[0], "loaded value vs pointers");
    vv->nchecked++;
    break;
  case OP_REDUCE:
    if (res && is_tile(res)) {
      const Layout *want = ly_slice(vv->c, op->axis, lay(op->opnds[0]));
      if (!same_at(vv, lay(res), want, res->type)) VFAIL(op, "reduce result is not the slice of its operand");
    }
    vv->nchecked++;
    break;
  case OP_EXPAND_DIMS:
    if (is_tile(op->opnds[0]) && !same_at(vv, lay(op->opnds[0]), ly_slice(vv->c, op->axis, lay(res)),
                                          op->opnds[0]->type))
      VFAIL(op, "expand_dims operand is not the slice of the result layout");
    vv->nchecked++;
    break;
  case OP_BROADCAST:
    if (!same_at(vv, lay(op->opnds[0]), lay(res), op->opnds[0]->type))
      VFAIL(op, "broadcast changes the layout");
    vv->nchecked++;
    break;
  case OP_TRANS: {
    const Layout *t = ly_transpose(vv->c, lay(op->opnds[0]));
    if (!t || !same_at(vv, lay(res), t, res->type)) VFAIL(op, "trans result is not the transposed layout");
    vv->nchecked++;
    break;
  }
  case OP_DOT: {
    const Layout *m = lay(res);
    if (!m || m->kind != LY_MMA) {
      VFAIL(op, "dot result is not #mma");
      break;
    }
    for (int i = 0; i < 2; i++) {
      const Layout *l = lay(op->opnds[i]);
      if (!l || l->kind != LY_DOTOP || l->opidx != i || !same_at(vv, l->parent, m, res->type) ||
          l->kbits != ty_dtype_bits((DType)op->opnds[i]->type->elem.dt))
        VFAIL(op, "dot operand %d has layout %s", i, l ? ly_str(vv->c, l) : "none");
    }
    same_as(vv, op, op->opnds[2], res, "dot accumulator vs result");
    vv->nchecked++;
    break;
  }
  case OP_CONVERT:
    if (same_at(vv, lay(op->opnds[0]), lay(res), res->type)) VFAIL(op, "a conversion to the same layout remains");
    if (op->opnds[0]->def && op->opnds[0]->def->opc == OP_CONVERT) VFAIL(op, "a conversion of a conversion remains");
    if ((op->flags & OPF_INSERTED) && cheap(op->opnds[0], 0))
      VFAIL(op, "a conversion of a rematerializable value (%s) remains",
            op->opnds[0]->def ? ir_opname(op->opnds[0]->def->opc) : "arg");
    vv->nchecked++;
    break;
  case OP_FOR: {
    TBlock *b = op->regions[0];
    TOp *y = b->last;
    for (int i = 0; i < op->nres; i++) {
      same_as(vv, op, op->opnds[3 + i], b->args[1 + i], "loop init vs block argument");
      same_as(vv, op, op->res[i], b->args[1 + i], "loop result vs block argument");
      if (y && y->opc == OP_YIELD) same_as(vv, op, y->opnds[i], b->args[1 + i], "yield vs block argument");
    }
    vv->nchecked++;
    break;
  }
  case OP_WHILE: {
    TBlock *bf = op->regions[0], *af = op->regions[1];
    TOp *cond = bf->last, *y = af->last;
    for (int i = 0; i < op->nres; i++) {
      same_as(vv, op, op->opnds[i], bf->args[i], "while init vs before argument");
      same_as(vv, op, op->res[i], af->args[i], "while result vs after argument");
      if (cond && cond->opc == OP_CONDITION) same_as(vv, op, cond->opnds[1 + i], af->args[i], "condition vs after");
      if (y && y->opc == OP_YIELD) same_as(vv, op, y->opnds[i], bf->args[i], "yield vs before argument");
    }
    vv->nchecked++;
    break;
  }
  case OP_IF:
    for (int r = 0; r < 2 && r < op->nregions; r++) {
      TOp *y = op->regions[r]->last;
      if (y && y->opc == OP_YIELD)
        for (int i = 0; i < op->nres && i < y->nopnds; i++) same_as(vv, op, y->opnds[i], op->res[i], "if yield");
    }
    vv->nchecked++;
    break;
  default:
    if (ir_is_elementwise(op->opc) && res && is_tile(res)) {
      for (int i = 0; i < op->nopnds; i++) same_as(vv, op, op->opnds[i], res, "elementwise operand vs result");
      vv->nchecked++;
    }
  }
}

/* parse (with the prelude) + sema + passes on a hand-built context, then
 * verify every op; returns the number of ops checked. */
static int verify_source(const char *name, const char *src, const tilec_define *defs, int nd) {
  Ctx *c = calloc(1, sizeof *c);
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
  TModule *m = ar_alloc(&c->arena, sizeof *m);
  bool ok = c->nerrors == 0 && sm_build(c, prog, m) && pass_run(c, m);
  if (!ok) {
    print_error("%s did not compile:\n%s\n", name, c->diags.data ? c->diags.data : "");
    fail();
  }
  int checked = 0;
  for (int k = 0; k < m->kernels.len; k++) {
    TFunc *f = m->kernels.data[k];
    V vv = {.c = c, .warps = f->warps};
    ir_walk(f->body, verify_op, &vv);
    if (vv.err[0]) {
      Buf b = {0};
      ir_print_module(c, m, &b);
      print_error("%s, kernel %s: %s\n--- TIR ---\n%s\n", name, f->name, vv.err, b.data ? b.data : "");
      buf_free(&b);
      fail();
    }
    assert_true(vv.nops > 0);
    checked += vv.nchecked;
  }
  buf_free(&c->diags);
  ar_free(&c->arena);
  free(c);
  return checked;
}

static void test_verify_examples(void **state) {
  (void)state;
  static const char *ex[] = {"examples/vector_add/vector_add.tile", "examples/softmax/softmax.tile",
                             "examples/layernorm/layernorm.tile", "examples/matmul/matmul.tile"};
  for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TILE_SRC_DIR, ex[i]);
    char *src = tu_read_file(path, NULL);
    assert_non_null(src);
    /* (the pipelined matmul keeps few tile ops: its loads and its store
     * became TMA copies) */
    int nv = verify_source(ex[i], src, NULL, 0);
    if (nv < 4) print_error("%s: %d checked\n", ex[i], nv);
    assert_true(nv >= 4);
    free(src);
  }
  /* matmul specialized for other block shapes and warp counts */
  static const char *bs[][3] = {{"128", "128", "32"}, {"16", "64", "16"}, {"32", "16", "64"}, {"256", "8", "16"}};
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/matmul/matmul.tile", TILE_SRC_DIR);
  char *mm = tu_read_file(path, NULL);
  assert_non_null(mm);
  for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) {
    tilec_define d[3] = {{"BM", bs[i][0]}, {"BN", bs[i][1]}, {"BK", bs[i][2]}};
    verify_source("matmul.tile", mm, d, 3);
  }
  free(mm);
}

static void test_verify_synthetic(void **state) {
  (void)state;
  static const char *srcs[] = {
      /* while loop carrying a tile, if with tile results */
      "kernel k(x: *f32, n: i32) {\n"
      "    let r = arange(0, 256);\n"
      "    let acc = zeros([256], f32);\n"
      "    let i = 0;\n"
      "    while i < n { acc += load(x + r + i); i += 256; }\n"
      "    if n > 5 { acc = acc * 2.0; } else { acc = exp(acc); }\n"
      "    store(x + r, acc);\n"
      "}\n",
      /* reductions both ways, broadcasts back, where, fma, casts */
      "kernel k(x: *bf16, y: *f32) warps(8) {\n"
      "    let r = arange(0, 64);\n"
      "    let c = arange(0, 256);\n"
      "    let v = load(x + r[:, None] * 256 + c[None, :]) as f32;\n"
      "    let rm = max(v, axis = 1);\n"
      "    let cm = sum(v, axis = 0);\n"
      "    let z = where(v > rm[:, None], fma(v, v, cm[None, :]), 0.0);\n"
      "    store(y + r[:, None] * 256 + c[None, :], z);\n"
      "    store(y + c, cm);\n"
      "    atomic_add(y + r, rm);\n"
      "}\n",
      /* column-major loads into a dot, transposes, a loop with two carried tiles */
      "kernel k(a: *f16, b: *f16, c: *f32, n: i32) warps(4) {\n"
      "    let r = arange(0, 64);\n"
      "    let k = arange(0, 32);\n"
      "    let acc = zeros([64, 64], f32);\n"
      "    let s = zeros([64], f32);\n"
      "    for i in range(0, n, 32) {\n"
      "        let x = load(a + r[:, None] + (k[None, :] + i) * 64);\n"
      "        let y = trans(load(b + r[:, None] * 32 + k[None, :] + i));\n"
      "        acc = dot(x, y, acc);\n"
      "        s += sum(acc, axis = 1);\n"
      "    }\n"
      "    store(c + r[:, None] * 64 + r[None, :], acc + s[:, None]);\n"
      "}\n",
      /* f32 dot (tf32 operands), 1 warp, nested loops */
      "kernel k(a: *f32, c: *f32, n: i32) warps(1) {\n"
      "    let r = arange(0, 16);\n"
      "    let k = arange(0, 8);\n"
      "    let acc = zeros([16, 16], f32);\n"
      "    for i in range(0, n) {\n"
      "        for j in range(0, n) {\n"
      "            let x = load(a + r[:, None] * 8 + k[None, :] + j);\n"
      "            let y = load(a + k[:, None] * 16 + r[None, :] + i);\n"
      "            acc = dot(x, y, acc);\n"
      "        }\n"
      "    }\n"
      "    store(c + r[:, None] * 16 + r[None, :], acc);\n"
      "}\n",
      /* 3-D tiles, expand_dims / broadcast chains, scalar broadcasts */
      "kernel k(x: *f32, y: *f32, s: f32) {\n"
      "    let a = arange(0, 4);\n"
      "    let b = arange(0, 8);\n"
      "    let c = arange(0, 32);\n"
      "    let p = a[:, None, None] * 256 + b[None, :, None] * 32 + c[None, None, :];\n"
      "    let v = load(x + p) * s;\n"
      "    store(y + p, v + sum(v, axis = 2)[:, :, None]);\n"
      "}\n",
      /* reductions and a transpose of a loop-carried #mma accumulator */
      "kernel k(a: *bf16, c: *f32, n: i32) {\n"
      "    let r = arange(0, 64);\n"
      "    let k = arange(0, 32);\n"
      "    let acc = zeros([64, 64], f32);\n"
      "    for i in range(0, n, 32) {\n"
      "        let x = load(a + r[:, None] * 32 + k[None, :] + i);\n"
      "        let y = load(a + k[:, None] * 64 + r[None, :] + i);\n"
      "        acc = dot(x, y, acc);\n"
      "    }\n"
      "    let rs = sum(acc, axis = 1);\n"
      "    let cm = max(acc, axis = 0);\n"
      "    let t = trans(acc);\n"
      "    store(c + r[:, None] * 64 + r[None, :], t - rs[None, :] + cm[:, None]);\n"
      "    store(c + r, rs);\n"
      "}\n",
      /* a while loop whose condition reduces a carried tile; if with tile results */
      "kernel k(x: *f32, n: i32) {\n"
      "    let r = arange(0, 128);\n"
      "    let v = load(x + r);\n"
      "    let s = 0.0;\n"
      "    let i = 0;\n"
      "    while sum(v) > 1.0 && i < n {\n"
      "        v = v * 0.5;\n"
      "        i += 1;\n"
      "    }\n"
      "    if n > 3 {\n"
      "        v = load(x + r * 2);\n"
      "    } else {\n"
      "        v = exp(v);\n"
      "    }\n"
      "    store(x + r, v);\n"
      "}\n",
      /* online-softmax style loop: two carried tiles, one of them a slice */
      "kernel k(x: *f16, y: *f32, n: i32) warps(8) {\n"
      "    let r = arange(0, 32);\n"
      "    let c = arange(0, 256);\n"
      "    let acc = zeros([32, 256], f32);\n"
      "    let m = full([32], -inf, f32);\n"
      "    for i in range(0, n) {\n"
      "        let v = load(x + r[:, None] * 256 + c[None, :] + i * 8192) as f32;\n"
      "        let mn = max(m, max(v, axis = 1));\n"
      "        acc = acc * exp(m - mn)[:, None] + v;\n"
      "        m = mn;\n"
      "    }\n"
      "    store(y + r[:, None] * 256 + c[None, :], acc / m[:, None]);\n"
      "}\n",
      /* narrow and wide dtypes, masked loads with other, atomics */
      "kernel k(x: *i8, y: *u16, z: *f64, n: i32) {\n"
      "    let r = arange(0, 1024);\n"
      "    let v = load(x + r, r < n, 0);\n"
      "    store(y + r, (v as u16) * 3, r < n);\n"
      "    store(z + r, (v as f64) / 3.0, r < n);\n"
      "    atomic_add(z + r % 7, v as f64);\n"
      "}\n",
      /* a carried tile whose layout flips every iteration (trans), an if
       * inside the loop, and a while inside a for */
      "kernel k(x: *f32, n: i32) {\n"
      "    let r = arange(0, 32);\n"
      "    let acc = load(x + r[:, None] * 32 + r[None, :]);\n"
      "    for i in range(0, n) {\n"
      "        acc = trans(acc) + 1.0;\n"
      "        if i > 3 { acc = acc * 2.0; }\n"
      "        let j = 0;\n"
      "        while j < i { acc = acc - sum(acc, axis = 0)[None, :]; j += 1; }\n"
      "    }\n"
      "    store(x + r[:, None] * 32 + r[None, :], acc);\n"
      "}\n",
      /* rank-4 tiles */
      "kernel k(x: *f32, y: *f32) {\n"
      "    let a = arange(0, 2);\n"
      "    let b = arange(0, 4);\n"
      "    let c = arange(0, 8);\n"
      "    let d = arange(0, 16);\n"
      "    let p = a[:, None, None, None] * 512 + b[None, :, None, None] * 128 + c[None, None, :, None] * 16 + d[None, None, None, :];\n"
      "    let v = load(x + p);\n"
      "    store(y + p, v - sum(v, axis = 3)[:, :, :, None] + max(v, axis = 0)[None, :, :, :]);\n"
      "}\n",
  };
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
    char name[32];
    snprintf(name, sizeof name, "synthetic%zu.tile", i);
    assert_true(verify_source(name, srcs[i], NULL, 0) > 5);
  }
}

/* ---- barrier_arrive after smem_store / smem_read, through control flow -- */

/* The 1-based line of the first line holding mark; 0 when none. */
static int marked_line(const char *src, const char *mark) {
  const char *p = strstr(src, mark);
  if (!p) return 0;
  int line = 1;
  for (const char *q = src; q < p; q++) line += *q == '\n';
  return line;
}

/* src compiles with want_errors errors: each at the arrival marked A (one
 * of them), with a note at the store or read marked N. */
static void check_arrive_src(const char *src, int want_errors, const char *what, bool previous) {
  tilec_options o;
  tilec_options_init(&o);
  o.emit = TILEC_EMIT_TIR;
  tilec_result *r = NULL;
  tilec_status st = tilec_compile("p.tile", src, strlen(src), &o, &r);
  const char *d = tilec_result_diagnostics(r);
  int nerr = 0;
  for (const char *p = d; (p = strstr(p, ": error: ")); p++) nerr++;
  bool ok = nerr == want_errors && (st == TILEC_OK) == (want_errors == 0);
  if (ok && want_errors) {
    char want[256];
    snprintf(want, sizeof want, "p.tile:%d:", marked_line(src, "/*A*/"));
    const char *e = strstr(d, want);
    ok = e && !strncmp(strstr(e, ": error: ") + 9, "barrier_arrive after ", 21) &&
         !strncmp(strstr(e, " after ") + 7, what, strlen(what));
    snprintf(want, sizeof want, "p.tile:%d:", marked_line(src, "/*N*/"));
    const char *n = strstr(d, want);
    char note[128];
    snprintf(note, sizeof note, "note: the %s%s is here", what, previous ? " of the previous iteration" : "");
    ok = ok && n && strstr(n, note) && strcspn(n, "\n") > strlen(note) &&
         strstr(n, note) < n + strcspn(n, "\n");
  }
  if (!ok) {
    print_error("want %d error(s)%s%s%s, got:\n%s\n--- source ---\n%s\n", want_errors, want_errors ? " after " : "",
                want_errors ? what : "", previous ? " (previous iteration)" : "", d, src);
    tilec_result_free(r);
    fail();
  }
  tilec_result_free(r);
}

/* check_arrive_src of a kernel with one task whose body is body. */
static void check_arrive_case(const char *body, int want_errors, const char *what, bool previous) {
  char src[4096];
  snprintf(src, sizeof src,
           "kernel k(out: *i32, n: i32, flag: i32) warps(4) {\n"
           "    let c = smem(bf16, [64, 64], buffers = 2);\n"
           "    let info = smem(i32, [1, 8], buffers = 2, swizzle = 0);\n"
           "    let bar = mbarrier(2, arrive = 1);\n"
           "    tasks {\n"
           "        task t(warps = 4) {\n"
           "%s"
           "        }\n"
           "    }\n"
           "}\n",
           body);
  check_arrive_src(src, want_errors, what, previous);
}

static void test_arrive_after_smem(void **state) {
  (void)state;
#define S "smem_store(c[0], zeros([64, 64], bf16));"
#define R "store(out, smem_read(info[0], 0, 0));"
#define A "barrier_arrive(bar[0]);"
#define B "task_barrier();"
  static const struct {
    const char *body;
    int errors;
    const char *what; /* smem_store / smem_read */
    bool previous;    /* the note names the previous iteration */
  } cases[] = {
      /* straight-line code, as before */
      {S "/*N*/\n" A "/*A*/\n", 1, "smem_store", false},
      {R "/*N*/\n" A "/*A*/\n", 1, "smem_read", false},
      {S "\n" B "\n" A "\n", 0, NULL, false},
      {S "\n" "named_barrier(1, 128);\n" A "\n", 0, NULL, false},
      {S "/*N*/\n" "named_barrier_arrive(1, 128);\n" A "/*A*/\n", 1, "smem_store", false},
      {S "/*N*/\n" A "/*A*/\n" A "\n", 1, "smem_store", false}, /* reported once */
      /* if: either arm reaches what follows, unless a barrier in it intervenes */
      {"if flag > 0 {\n" S "/*N*/\n}\n" A "/*A*/\n", 1, "smem_store", false},
      {"if flag > 0 {\n" S "\n" B "\n} else {\n" S "/*N*/\n}\n" A "/*A*/\n", 1, "smem_store", false},
      {"if flag > 0 {\n" S "\n" B "\n} else {\n" S "\n" B "\n}\n" A "\n", 0, NULL, false},
      {"if flag > 0 {\n" S "\n" B "\n}\n" A "\n", 0, NULL, false},
      {S "/*N*/\n" "if flag > 0 {\n" B "\n}\n" A "/*A*/\n", 1, "smem_store", false},
      {"if flag > 0 {\n" R "\n} else {\n" S "/*N*/\n}\n" A "/*A*/\n", 1, "smem_store", false},
      {"if flag > 0 {\n" R "/*N*/\n}\n" B "\n" A "\n", 0, NULL, false},
      {"if flag > 0 {\n" R "/*N*/\n}\n" A "/*A*/\n", 1, "smem_read", false},
      /* for: the end of the body reaches its start and the code after it */
      {"for i in range(0, n) {\n" A "/*A*/\n" S "/*N*/\n}\n", 1, "smem_store", true},
      {"for i in range(0, n) {\n" A "\n" S "\n" B "\n}\n" A "\n", 0, NULL, false},
      {"for i in range(0, n) {\n" A "/*A*/\n" R "/*N*/\n}\n", 1, "smem_read", true},
      {"for i in range(0, n) {\n" "if i > 0 {\n" A "/*A*/\n}\n" S "/*N*/\n}\n", 1, "smem_store", true},
      {"for i in range(0, n) {\n" B "\n" S "/*N*/\n}\n" A "/*A*/\n", 1, "smem_store", false},
      {"for i in range(0, n) {\n" A "/*A*/\n" "for j in range(0, n) {\n" S "/*N*/\n}\n}\n", 1, "smem_store", true},
      {"for i in range(0, n) {\n" A "\n" "for j in range(0, n) {\n" S "\n}\n" B "\n}\n", 0, NULL, false},
      {"for i in range(0, n) {\n" "for j in range(0, n) {\n" A "/*A*/\n}\n" S "/*N*/\n}\n", 1, "smem_store", true},
      /* the store before the loop is what the first iteration meets */
      {S "/*N*/\n" "for i in range(0, n) {\n" A "/*A*/\n" S "\n}\n", 1, "smem_store", false},
      /* ... but a read before it is the lesser race: the store of the previous iteration is named */
      {R "\n" "for i in range(0, n) {\n" A "/*A*/\n" S "/*N*/\n}\n", 1, "smem_store", true},
      /* while: the condition runs before each iteration and once more at the exit */
      {"let i = 0;\nwhile i < n {\n" A "/*A*/\n" R "/*N*/\ni = i + 1;\n}\n", 1, "smem_read", true},
      {"let i = 0;\nwhile i < n {\n" A "\n" R "\n" B "\ni = i + 1;\n}\n" A "\n", 0, NULL, false},
      {"let i = 0;\nwhile i < n {\n" B "\n" S "/*N*/\ni = i + 1;\n}\n" A "/*A*/\n", 1, "smem_store", false},
  };
#undef S
#undef R
#undef A
#undef B
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check_arrive_case(cases[i].body, cases[i].errors, cases[i].what, cases[i].previous);
}

/* Loops nested in loops' conditions compile at once: each region is
 * summarized in one walk, not once more per enclosing condition (which
 * would be 2^40 walks here: the condition of the loop in w40 calls w39,
 * whose loop's condition calls w38, ...). */
static void test_arrive_deep_loops(void **state) {
  (void)state;
  enum { K = 40 };
  char src[16384];
  size_t len = (size_t)snprintf(src, sizeof src, "fn w0(x) { return x; }\n");
  for (int k = 1; k <= K; k++)
    len += (size_t)snprintf(src + len, sizeof src - len,
                            "fn w%d(x) {\n    let j = 0;\n    while w%d(j) < x { j = j + 1; }\n    return j;\n}\n", k,
                            k - 1);
  snprintf(src + len, sizeof src - len,
           "kernel k(n: i32) warps(4) {\n"
           "    let c = smem(bf16, [64, 64]);\n"
           "    let bar = mbarrier(1, arrive = 1);\n"
           "    tasks {\n"
           "        task t(warps = 4) {\n"
           "            let i = 0;\n"
           "            while w%d(i) < n {\n"
           "                barrier_arrive(bar[0]); /*A*/\n"
           "                smem_store(c[0], zeros([64, 64], bf16)); /*N*/\n"
           "                i = i + 1;\n"
           "            }\n"
           "        }\n"
           "    }\n"
           "}\n",
           K);
  check_arrive_src(src, 1, "smem_store", true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_coalesced_1d),
      cmocka_unit_test(test_coalesced_small_tiles),
      cmocka_unit_test(test_uncoalesced),
      cmocka_unit_test(test_coalesced_2d_order),
      cmocka_unit_test(test_dot_layouts),
      cmocka_unit_test(test_loop_carried_accumulator),
      cmocka_unit_test(test_pipelined_dot),
      cmocka_unit_test(test_pipelined_pair),
      cmocka_unit_test(test_pipelined_multi),
      cmocka_unit_test(test_reduction_slices),
      cmocka_unit_test(test_arange_rematerialized),
      cmocka_unit_test(test_user_layouts),
      cmocka_unit_test(test_verify_examples),
      cmocka_unit_test(test_verify_synthetic),
      cmocka_unit_test(test_arrive_after_smem),
      cmocka_unit_test(test_arrive_deep_loops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

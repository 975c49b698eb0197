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
 * test_axisinfo.c; the pipelining of dot loops, test_pipeline.c. The TIR
 * text helpers are testutil.h's. */
#include "tilec_int.h"
#include "testutil.h"

/* For a test of a compiler bug not fixed yet (commented "KNOWN BUG: ..."):
 * cmocka's skip(), unless TILE_TEST_KNOWN_BUGS=1 asks to run it. */
#define KNOWN_BUG(why)                                                   \
  do {                                                                   \
    if (!getenv("TILE_TEST_KNOWN_BUGS")) {                               \
      print_message("[ KNOWN BUG ] %s\n", why);                          \
      skip();                                                            \
    }                                                                    \
  } while (0)

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
  TModule *m = NULL;
  Ctx *c = tu_build(name, src, defs, nd, &m);
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
  tu_ctx_free(c);
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

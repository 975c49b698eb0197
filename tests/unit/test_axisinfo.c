/* test_axisinfo.c - unit tests for compiler/axisinfo.c: the contiguity,
 * divisibility and constancy facts ax_analyze claims for every TIR value
 * (they decide vector widths and mask handling), checked by brute force
 * against concrete values of fixed and random programs. */
#include "testutil.h"
#include "tilec_int.h"

/* ---- axis info against brute force ------------------------------------- */

/* Concrete values of TIR values for one assignment of the parameters (those
 * with multiple_of/align get multiples), to check the facts ax_analyze
 * claims: contiguity, divisibility and constancy per dimension. */
typedef struct Ev {
  int64_t **val; /* by value id; NULL = unknown */
  int nval;
  unsigned seed;
} Ev;

static unsigned rnd(Ev *e) {
  e->seed = e->seed * 1103515245u + 12345u;
  return e->seed >> 8;
}

static int64_t numel_of(const TValue *v) { return v->type->kind == TY_TILE ? ty_numel(v->type) : 1; }

static int64_t *ev_get(Ev *e, TValue *v) { return v->id < e->nval ? e->val[v->id] : NULL; }

static void ev_set(Ev *e, TValue *v, int64_t *x) {
  if (v->id < e->nval) e->val[v->id] = x;
}

/* row-major index of coordinate c in shape */
static int64_t lin_index(const int *shape, int rank, const int *c) {
  int64_t k = 0;
  for (int d = 0; d < rank; d++) k = k * shape[d] + c[d];
  return k;
}

static void unravel(const int *shape, int rank, int64_t k, int *c) {
  for (int d = rank - 1; d >= 0; d--) {
    c[d] = (int)(k % shape[d]);
    k /= shape[d];
  }
}

static void ev_op(TOp *op, void *ud) {
  Ev *e = ud;
  if (op->nres != 1 || op->nregions) return;
  TValue *r = op->res[0];
  int64_t n = numel_of(r);
  int rank = r->type->kind == TY_TILE ? r->type->rank : 0;
  int64_t *a = op->nopnds > 0 ? ev_get(e, op->opnds[0]) : NULL, *b = op->nopnds > 1 ? ev_get(e, op->opnds[1]) : NULL;
  DType dt = (DType)r->type->elem.dt;
  bool isint = ty_is_int(dt) || dt == DT_BOOL || dt == DT_PTR;
  if (!isint) return;
  int64_t *x = calloc((size_t)n, sizeof *x);
  int c[TC_MAX_RANK];
  switch (op->opc) {
  case OP_CONST: x[0] = op->ival; break;
  case OP_PROGRAM_ID:
  case OP_NUM_PROGRAMS: x[0] = rnd(e) % 4096; break;
  case OP_ARANGE:
    for (int64_t i = 0; i < n; i++) x[i] = op->ival + i;
    break;
  case OP_SPLAT:
    if (!a) goto unknown;
    for (int64_t i = 0; i < n; i++) x[i] = a[0];
    break;
  case OP_EXPAND_DIMS:
  case OP_CAST:
    if (!a) goto unknown;
    memcpy(x, a, sizeof *x * (size_t)n);
    break;
  case OP_BROADCAST: {
    if (!a) goto unknown;
    const Type *it = op->opnds[0]->type;
    for (int64_t i = 0; i < n; i++) {
      unravel(r->type->shape, rank, i, c);
      for (int d = 0; d < rank; d++)
        if (it->shape[d] == 1) c[d] = 0;
      x[i] = a[lin_index(it->shape, rank, c)];
    }
    break;
  }
  case OP_ADD: case OP_SUB: case OP_MUL: case OP_AND: case OP_OR: case OP_XOR: case OP_CMP: case OP_PTR_ADD:
  case OP_MIN: case OP_MAX: case OP_SHL: {
    if (!a || !b) goto unknown;
    int64_t scale = op->opc == OP_PTR_ADD ? ty_dtype_bytes((DType)r->type->elem.pointee) : 1;
    for (int64_t i = 0; i < n; i++) {
      int64_t p = a[i], q = b[i];
      switch (op->opc) {
      /* wrap like the hardware (and keep UBSan quiet) */
      case OP_ADD: x[i] = (int64_t)((uint64_t)p + (uint64_t)q); break;
      case OP_SUB: x[i] = (int64_t)((uint64_t)p - (uint64_t)q); break;
      case OP_MUL: x[i] = (int64_t)((uint64_t)p * (uint64_t)q); break;
      case OP_AND: x[i] = p & q; break;
      case OP_OR: x[i] = p | q; break;
      case OP_XOR: x[i] = p ^ q; break;
      case OP_MIN: x[i] = p < q ? p : q; break;
      case OP_MAX: x[i] = p > q ? p : q; break;
      case OP_SHL: x[i] = (int64_t)((uint64_t)p << (q & 63)); break;
      case OP_PTR_ADD: x[i] = (int64_t)((uint64_t)p + (uint64_t)q * (uint64_t)scale); break;
      default:
        switch (op->pred) {
        case CMP_EQ: x[i] = p == q; break;
        case CMP_NE: x[i] = p != q; break;
        case CMP_LT: x[i] = p < q; break;
        case CMP_LE: x[i] = p <= q; break;
        case CMP_GT: x[i] = p > q; break;
        default: x[i] = p >= q; break;
        }
      }
    }
    break;
  }
  default:
  unknown:
    free(x);
    return;
  }
  ev_set(e, r, x);
}

/* Check the AxisInfo of v against its values; returns a message or NULL. */
static const char *check_ax(Ctx *c, TValue *v, const int64_t *x) {
  static char msg[512];
  const AxisInfo *ax = ax_get(c, v);
  if (v->type->kind != TY_TILE) {
    int64_t dv = ax->div[0];
    if (dv > 1 && x[0] % dv) {
      snprintf(msg, sizeof msg, "scalar %%%d = %lld is claimed divisible by %lld", v->id, (long long)x[0],
               (long long)dv);
      return msg;
    }
    return NULL;
  }
  int rank = v->type->rank;
  const int *sh = v->type->shape;
  int64_t n = ty_numel(v->type);
  int64_t step = v->type->elem.dt == DT_PTR ? ty_dtype_bytes((DType)v->type->elem.pointee) : 1;
  bool isbool = v->type->elem.dt == DT_BOOL;
  for (int d = 0; d < rank; d++) {
    int64_t cg = ax->contig[d], dv = ax->div[d], cs = ax->constancy[d];
    if (cg < 1 || cs < 1 || dv < 1 || sh[d] % (cg > sh[d] ? sh[d] : cg) || sh[d] % (cs > sh[d] ? sh[d] : cs)) {
      snprintf(msg, sizeof msg, "%%%d dim %d: bad facts contig=%lld div=%lld constancy=%lld", v->id, d, (long long)cg,
               (long long)dv, (long long)cs);
      return msg;
    }
    for (int64_t i = 0; i < n; i++) {
      int co[TC_MAX_RANK];
      unravel(sh, rank, i, co);
      int k = co[d];
      if (!isbool && cg > 1 && k % cg) {
        int prev[TC_MAX_RANK];
        memcpy(prev, co, sizeof prev);
        prev[d]--;
        if (x[i] != x[lin_index(sh, rank, prev)] + step) {
          snprintf(msg, sizeof msg, "%%%d dim %d: claimed contiguity %lld, but elements %d and %d are %lld and %lld",
                   v->id, d, (long long)cg, k - 1, k, (long long)x[lin_index(sh, rank, prev)], (long long)x[i]);
          return msg;
        }
      }
      if (!isbool && dv > 1 && k % (cg > 1 ? cg : 1) == 0 && x[i] % dv) {
        snprintf(msg, sizeof msg, "%%%d dim %d: run start %d is %lld, claimed divisible by %lld", v->id, d, k,
                 (long long)x[i], (long long)dv);
        return msg;
      }
      if (cs > 1 && k % cs) {
        int prev[TC_MAX_RANK];
        memcpy(prev, co, sizeof prev);
        prev[d]--;
        if (x[i] != x[lin_index(sh, rank, prev)]) {
          snprintf(msg, sizeof msg, "%%%d dim %d: claimed constancy %lld, but elements %d and %d differ (%lld, %lld)",
                   v->id, d, (long long)cs, k - 1, k, (long long)x[lin_index(sh, rank, prev)], (long long)x[i]);
          return msg;
        }
      }
    }
  }
  return NULL;
}

typedef struct AxCheck {
  Ctx *c;
  Ev *e;
  const char *err;
  TOp *where;
  int nchecked;
} AxCheck;

static void ax_check_op(TOp *op, void *ud) {
  AxCheck *k = ud;
  if (k->err || op->nres != 1) return;
  int64_t *x = ev_get(k->e, op->res[0]);
  if (!x) return;
  k->nchecked++;
  const char *m = check_ax(k->c, op->res[0], x);
  if (m) {
    k->err = m;
    k->where = op;
  }
}

/* Parse + sema one kernel, run ax_analyze, and compare with `trials`
 * random evaluations.  Returns NULL or the first wrong claim. */
static const char *ax_brute(const char *src, int trials, char *where, size_t cap) {
  Ctx *c = calloc(1, sizeof *c);
  ar_init(&c->arena);
  tilec_options_init(&c->opts);
  c->sm = 90;
  c->arch = "sm_90a";
  Program *prog = ar_alloc(&c->arena, sizeof *prog);
  c->prog = prog;
  Vec imports = {0};
  ps_parse(c, cx_add_source(c, "ax.tile", src, strlen(src), false), prog, &imports);
  TModule *m = ar_alloc(&c->arena, sizeof *m);
  if (c->nerrors || !sm_build(c, prog, m)) {
    print_error("did not compile:\n%s\n", c->diags.data ? c->diags.data : "");
    fail();
  }
  TFunc *f = m->kernels.data[0];
  ax_analyze(c, f);
  static char err[600];
  const char *result = NULL;
  for (int t = 0; t < trials && !result; t++) {
    Ev e = {.nval = c->next_value_id, .seed = 7u + 7919u * (unsigned)t};
    e.val = calloc((size_t)e.nval, sizeof *e.val);
    for (int i = 0; i < f->nparams; i++) {
      TParam *p = &f->params[i];
      int64_t *x = calloc(1, sizeof *x);
      int64_t al = p->align > 0 ? p->align : 1;
      if (p->elem.dt == DT_PTR) x[0] = ((int64_t)(rnd(&e) % 100000) + 1) * al; /* a byte address */
      else x[0] = (int64_t)(rnd(&e) % 64) * al;
      /* the edge: a value right at a run boundary */
      if (t % 3 == 0 && p->elem.dt != DT_PTR) x[0] = al * (1 + t % 5);
      ev_set(&e, p->value, x);
    }
    ir_walk(f->body, ev_op, &e);
    AxCheck k = {.c = c, .e = &e};
    ir_walk(f->body, ax_check_op, &k);
    if (k.err) {
      snprintf(err, sizeof err, "%s (trial %d)", k.err, t);
      snprintf(where, cap, "%s @%d:%d", ir_opname(k.where->opc), k.where->loc.line, k.where->loc.col);
      result = err;
    }
    for (int i = 0; i < e.nval; i++) free(e.val[i]);
    free(e.val);
  }
  buf_free(&c->diags);
  ar_free(&c->arena);
  free(c);
  return result;
}

static void expect_ax_sound(const char *src) {
  char where[128] = "";
  const char *e = ax_brute(src, 24, where, sizeof where);
  if (e) {
    print_error("axis info is wrong at %s: %s\n--- source ---\n%s\n", where, e, src);
    fail();
  }
}

static void test_axisinfo_sound(void **state) {
  (void)state;
  /* the patterns of the examples */
  expect_ax_sound(
      "kernel k(x: *f32, n: i32) {\n"
      "    let offs = program_id(0) * 1024 + arange(0, 1024);\n"
      "    let mask = offs < n;\n"
      "    store(x + offs, load(x + offs, mask), mask);\n"
      "}\n");
  expect_ax_sound(
      "kernel k(x: *f32, n: i32 multiple_of(16)) {\n"
      "    let offs = program_id(0) * 1024 + arange(0, 1024);\n"
      "    let m1 = offs < n;\n"
      "    let m2 = offs >= n;\n"
      "    let m3 = n > offs;\n"
      "    let m4 = n <= offs;\n"
      "    let m5 = offs == n;\n"
      "    store(x + offs, 1.0, m1 & m2 | m3 & m4 | m5);\n"
      "}\n");
  expect_ax_sound(
      "kernel k(x: *i32, s: i32, t: i32 multiple_of(4)) {\n"
      "    let r = arange(0, 64);\n"
      "    let a = r + s;\n"
      "    let b = (r + t) - t;\n"
      "    let c = (r - 3) - s;\n"
      "    store(x + c, c);\n"
      "    store(x + r, a + b);\n"
      "    store(x + r + t, max(r, t) + min(a, 7));\n"
      "    let z = r[None, :] + (t * 64 + s) + r[:, None];\n"
      "    store(x + z, z);\n"
      "    let w = where(r < 32, r, r + 64);\n"
      "    store(x + w, w);\n"
      "}\n");
  /* the examples without products of contiguous values (see
   * test_axisinfo_mul_of_contiguous for matmul's) */
  static const char *ex[] = {"examples/vector_add/vector_add.tile", "examples/softmax/softmax.tile",
                             "examples/layernorm/layernorm.tile"};
  for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TILE_SRC_DIR, ex[i]);
    char *src = tu_read_file(path, NULL);
    assert_non_null(src);
    expect_ax_sound(src);
    free(src);
  }
}

/* Regression (found by this suite; fixed in a27b98b): the divisibility of a
 * product took the divisibility of a contiguous operand as if it held for
 * every element: (64*pid + arange(0, 64)) is divisible by 64 only at the
 * start of its run, yet `* 2` was claimed divisible by 128 everywhere
 * (Triton counts a contiguous operand's divisibility as 1 here).  With
 * `rows[:, None] + arange(0, 128)[None, :]` as offsets the f32 loads became
 * ld.global.v4 at x + 8*row bytes: misaligned for odd rows. */
static void test_axisinfo_mul_of_contiguous(void **state) {
  (void)state;
  const char *src =
      "kernel k(x: *f32, y: *f32) {\n"
      "    let rows = (program_id(0) * 64 + arange(0, 64)) * 2;\n"
      "    let p = rows[:, None] + arange(0, 128)[None, :];\n"
      "    store(y + p, load(x + p));\n"
      "}\n";
  expect_ax_sound(src);
  /* the accesses of 8-byte-aligned rows can be at most 8 bytes wide */
  tilec_options o;
  tilec_options_init(&o);
  o.emit = TILEC_EMIT_PTX;
  tilec_result *r;
  assert_int_equal(tilec_compile("mis.tile", src, strlen(src), &o, &r), TILEC_OK);
  lacks(tilec_result_output(r, NULL), "ld.global.v4", "PTX");
  tilec_result_free(r);
  expect_ax_sound(
      "kernel k(a: *bf16 align(64), M: i32 multiple_of(8), lda: i32 multiple_of(16)) {\n"
      "    let rm = program_id(0) * 64 + arange(0, 64);\n"
      "    let rk = arange(8, 40);\n"
      "    let p = a + rm[:, None] * lda + rk[None, :];\n"
      "    let q = a + rm[:, None] + rk[None, :] * lda;\n"
      "    let m = (rm[:, None] < M) & (rk[None, :] < 32);\n"
      "    store(p, load(q, m, 0.0), m);\n"
      "}\n");
}

/* Regression (found by this suite; fixed in a27b98b): ax_analyze gave
 * `offs <= n` (and `offs > n`, `n < offs`, `n >= offs`) the constancy of
 * `offs < n`: gcd(contiguity, div(offs), div(n)).  That holds only when the
 * truth value changes at n; for <= and > it changes at n + 1: with n a
 * multiple of 16, [16, 17, 18, 19] <= 16 is [1, 0, 0, 0].  The lowering then
 * predicated a whole 16-byte access on the first element's bit, so
 * store(y + offs, v, offs <= n) with `n: i32 multiple_of(16)` wrote 3
 * elements past the mask (one `@p st.global.v4` per group in the PTX). */
static void test_axisinfo_le_mask(void **state) {
  (void)state;
  static const char *cmps[] = {"offs <= n", "offs > n", "n < offs", "n >= offs"};
  for (int i = 0; i < 4; i++) {
    char src[512];
    snprintf(src, sizeof src,
             "kernel k(x: *f32, y: *f32, n: i32 multiple_of(16)) {\n"
             "    let offs = arange(0, 512);\n"
             "    let mask = %s;\n"
             "    store(y + offs, load(x + offs, mask), mask);\n"
             "}\n",
             cmps[i]);
    /* the lowering must not predicate a whole vector on one element's bit:
     * a vector store needs per-element stores for partial vectors */
    tilec_options o;
    tilec_options_init(&o);
    o.emit = TILEC_EMIT_PTX;
    tilec_result *r;
    assert_int_equal(tilec_compile("le.tile", src, strlen(src), &o, &r), TILEC_OK);
    const char *ptx = tilec_result_output(r, NULL);
    bool partial_ok = !strstr(ptx, "st.global.v4") || strstr(ptx, "st.global.b32");
    tilec_result_free(r);
    expect_ax_sound(src);
    assert_true(partial_ok);
  }
}

/* KNOWN BUG: add and sub take gcd(div(x), div(y)) as the divisibility of
 * every run of the result, but a contiguous operand is divisible by div only
 * at the start of its runs: `64 - r` (contiguity 1, decreasing) is claimed
 * divisible by 64 everywhere although 64 - 1 = 63, and `r + r` (contiguity 1)
 * is claimed divisible by 2^20.  Broadcast along a new axis and added to a
 * contiguous arange, such offsets get vectorized: with
 *   let p = (64 - r)[:, None] + arange(0, 16)[None, :];
 * the f32 loads are ld.global.v4 at x + 4*(64 - r) bytes, misaligned for
 * every odd r (and `(r + r)[:, None] + ...` gives v4 at x + 8*r). */
static void test_axisinfo_add_sub_of_contiguous(void **state) {
  (void)state;
  static const struct {
    const char *rows;
    const char *forbidden; /* the widest access the true alignment allows is narrower */
  } cases[] = {{"(64 - r)", "ld.global.v"}, {"(r + r)", "ld.global.v4"}, {"(48 - r * 1)", "ld.global.v"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char src[512];
    snprintf(src, sizeof src,
             "kernel k(x: *f32, y: *f32) {\n"
             "    let r = arange(0, 64);\n"
             "    let p = %s[:, None] + arange(0, 16)[None, :];\n"
             "    store(y + p, load(x + p));\n"
             "}\n",
             cases[i].rows);
    tilec_options o;
    tilec_options_init(&o);
    o.emit = TILEC_EMIT_PTX;
    tilec_result *r;
    assert_int_equal(tilec_compile("addsub.tile", src, strlen(src), &o, &r), TILEC_OK);
    bool aligned = !strstr(tilec_result_output(r, NULL), cases[i].forbidden);
    tilec_result_free(r);
    expect_ax_sound(src);
    if (!aligned) {
      print_error("%s: the PTX has %s accesses at misaligned addresses\n", cases[i].rows, cases[i].forbidden);
      fail();
    }
  }
}

/* Random integer expressions (sums, differences, products, comparisons,
 * masks, broadcasts of program ids, parameters with multiple_of, aranges at
 * odd and aligned offsets) in 1-D and 2-D: every fact ax_analyze claims must
 * hold for concrete values. */
typedef struct Gen {
  unsigned seed;
  char buf[4096];
  int n;
} Gen;

static unsigned gnext(Gen *g) {
  g->seed = g->seed * 1664525u + 1013904223u;
  return g->seed >> 8;
}

static void gput(Gen *g, const char *s) { g->n += snprintf(g->buf + g->n, sizeof g->buf - (size_t)g->n, "%s", s); }

/* an integer expression of shape [64] (1-D) */
static void gen_int(Gen *g, int depth) {
  unsigned k = gnext(g) % (depth > 2 ? 6 : 11);
  char t[64];
  switch (k) {
  case 0: gput(g, "r"); break;
  case 1:
    /* arange(lo, lo + 64), lo aligned or not */
    {
      unsigned lo = (gnext(g) % 4) * (1u << (gnext(g) % 5)) + (gnext(g) % 3 == 0 ? 1 : 0);
      snprintf(t, sizeof t, "arange(%u, %u)", lo, lo + 64);
    }
    gput(g, t);
    break;
  case 2: gput(g, (const char *[]){"a", "b", "c", "program_id(0)"}[gnext(g) % 4]); break;
  case 3:
    snprintf(t, sizeof t, "%u", (gnext(g) % 2) ? (1u << (gnext(g) % 7)) : gnext(g) % 40);
    gput(g, t);
    break;
  case 4: gput(g, "pid64"); break;
  case 5: gput(g, "rc"); break;
  default: {
    static const char *ops[] = {" + ", " - ", " * ", " + ", " * "};
    gput(g, "(");
    gen_int(g, depth + 1);
    gput(g, ops[gnext(g) % 5]);
    gen_int(g, depth + 1);
    gput(g, ")");
  }
  }
}

static void gen_bool(Gen *g) {
  static const char *cmp[] = {" < ", " <= ", " > ", " >= ", " == ", " != "};
  gput(g, "(");
  gen_int(g, 1);
  gput(g, cmp[gnext(g) % 6]);
  gen_int(g, 1);
  gput(g, ")");
}

/* KNOWN BUG: fails on the add/sub divisibility bug of
 * test_axisinfo_add_sub_of_contiguous (e.g. `16 - r`, the first program);
 * with that rule fixed it runs 300 programs (3000 locally: no other unsound
 * fact found). */
static void test_axisinfo_random(void **state) {
  (void)state;
  Gen g = {.seed = 2024};
  for (int prog = 0; prog < 300; prog++) {
    g.n = 0;
    gput(&g,
         "kernel k(x: *i32, a: i32, b: i32 multiple_of(8), c: i32 multiple_of(16)) {\n"
         "    let r = arange(0, 64);\n"
         "    let pid64 = program_id(0) * 64 + r;\n"
         "    let rc = r + c;\n");
    for (int i = 0; i < 4; i++) {
      char t[64];
      snprintf(t, sizeof t, "    let v%d = zeros([64], i32) + ", i); /* a tile even when the expression is scalar */
      gput(&g, t);
      gen_int(&g, 0);
      gput(&g, ";\n");
    }
    gput(&g, "    let m = (zeros([64], i32) == 0) & "); /* a tile even when both sides are scalars */
    gen_bool(&g);
    gput(&g, " & ");
    gen_bool(&g);
    gput(&g, ";\n");
    /* 2-D combinations */
    gput(&g,
         "    let t = v0[:, None] * 64 + v1[None, :];\n"
         "    let u = v2[:, None] + v3[None, :] * b;\n"
         "    let w = t < u;\n"
         "    store(x + t, u, m[None, :] & w);\n"
         "}\n");
    char where[128] = "";
    const char *e = ax_brute(g.buf, 6, where, sizeof where);
    if (e) {
      print_error("program %d: axis info is wrong at %s: %s\n--- source ---\n%s\n", prog, where, e, g.buf);
      fail();
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_axisinfo_sound),
      cmocka_unit_test(test_axisinfo_le_mask),
      cmocka_unit_test(test_axisinfo_add_sub_of_contiguous),
      cmocka_unit_test(test_axisinfo_random),
      cmocka_unit_test(test_axisinfo_mul_of_contiguous),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_home.c - loop accumulators homed in shared memory (compiler/home.c):
 * which loops and values move, the shared-memory budget, hm_check's
 * barriers where a homed value's load and store layouts differ, and the
 * homed kernel on the emulator against C. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "tilec_int.h"
#include "testutil.h"
#include "tile/tilec.h"
#include "../../emu/emu.h"

#include <math.h>

/* Column sums and sums of squares over n_rows rows of BLOCK f32, on one
 * warp: at BLOCK = 4096 each thread's share of the two accumulators is 256
 * registers, more than a thread has. */
static const char source[] =
    "kernel colsum(x: *f32, s1: *f32, s2: *f32, n_rows: i32, const BLOCK: i32 = 4096) warps(1) {\n"
    "    let cols = arange(0, BLOCK);\n"
    "    let a = zeros([BLOCK], f32);\n"
    "    let b = zeros([BLOCK], f32);\n"
    "    for r in range(0, n_rows) {\n"
    "        let v = load(x + r * BLOCK + cols);\n"
    "        a += v;\n"
    "        b += v * v;\n"
    "    }\n"
    "    store(s1 + cols, a);\n"
    "    store(s2 + cols, b);\n"
    "}\n";

static char *compile(tilec_emit emit, const char *block) {
  tilec_define d = {"BLOCK", block};
  return tu_compile("home.tile", source, sizeof source - 1, emit, block ? &d : NULL, block ? 1 : 0);
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* Both accumulators move (a note each, an allocation each, loaded and
 * stored once an iteration); the loop carries neither; one barrier
 * before the loop and one after. */
static void test_wide_homed(void **state) {
  (void)state;
  char *t = compile(TILEC_EMIT_TIR, NULL);
  assert_int_equal(count(t, "// home: the loop at 5:5 keeps"), 2);
  has(t, "keeps 'a' (f32[4096], 128 registers a thread) in shared memory, 16384 bytes", "a's note");
  assert_int_equal(count(t, "= smem_alloc"), 2);
  assert_int_equal(count(t, "smem_store"), 4); /* the initial values and each iteration's */
  assert_int_equal(count(t, "= smem_load"), 4); /* each iteration's and the results */
  assert_int_equal(count(t, "named_barrier"), 2);
  lacks(t, "-> (f32[4096]", "a loop carrying a 4096-wide tile");
  free(t);
}

/* At BLOCK = 256 (8 registers a thread each) nothing moves. */
static void test_narrow_stays(void **state) {
  (void)state;
  char *t = compile(TILEC_EMIT_TIR, "256");
  lacks(t, "home:", "a home note");
  lacks(t, "smem_alloc", "an allocation");
  free(t);
}

/* At BLOCK = 32768 each accumulator is 128 KB, and a conversion of the
 * kernel's widest tile (128 KB of scratch) must still fit beside what is
 * homed: nothing moves, and the kernel still compiles. */
static void test_budget(void **state) {
  (void)state;
  char *t = compile(TILEC_EMIT_TIR, "32768");
  lacks(t, "home:", "a home note");
  lacks(t, "smem_alloc", "an allocation");
  free(t);
}

/* The homed kernel on the emulator (one warp, 4096 columns), n_rows = 0,
 * 1, 5: the sums as C computes them. */
static void test_runs(void **state) {
  (void)state;
  char *ptx = compile(TILEC_EMIT_PTX, NULL);
  has(ptx, "st.shared", "a store to shared memory");
  EmModule *m = NULL;
  char err[512];
  if (!em_ptx_parse(ptx, strlen(ptx), &m, err, sizeof err)) {
    print_error("PTX: %s\n", err);
    fail();
  }
  enum { N = 4096, R = 5 };
  float *x = malloc(sizeof(float) * N * R), *s1 = malloc(sizeof(float) * N), *s2 = malloc(sizeof(float) * N);
  assert_non_null(x);
  assert_non_null(s1);
  assert_non_null(s2);
  uint64_t seed = 7;
  for (int i = 0; i < N * R; i++) x[i] = (float)(tu_xorshift(&seed) % 2001) / 1000.0f - 1.0f;
  const int ns[] = {0, 1, R};
  for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++) {
    int n = ns[q];
    for (int j = 0; j < N; j++) s1[j] = s2[j] = NAN;
    struct {
      uint64_t x, s1, s2;
      int32_t n, pad;
    } p = {(uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)s1, (uint64_t)(uintptr_t)s2, n, 0};
    EmRange rg[3] = {{x, sizeof(float) * N * R}, {s1, sizeof(float) * N}, {s2, sizeof(float) * N}};
    EmLaunch l = {.kernel = "colsum", .grid = {1, 1, 1}, .block = {32, 1, 1}, .params = &p, .params_size = sizeof p,
                  .dyn_smem = 2 * sizeof(float) * N + 1024, /* the two homes, and scratch */
                  .ranges = rg, .nranges = 3};
    if (!em_launch(m, &l, err, sizeof err)) {
      print_error("n = %d: %s\n", n, err);
      fail();
    }
    for (int j = 0; j < N; j++) {
      float a = 0, b = 0;
      for (int r = 0; r < n; r++) a += x[r * N + j], b += x[r * N + j] * x[r * N + j];
      if (fabsf(s1[j] - a) > 1e-5f || fabsf(s2[j] - b) > 1e-5f) {
        print_error("n = %d, column %d: %g %g, want %g %g\n", n, j, s1[j], s2[j], a, b);
        fail();
      }
    }
  }
  free(x);
  free(s1);
  free(s2);
  em_module_free(m);
  free(ptx);
}

/* hm_check (after layouts): where a homed value is loaded in one layout
 * and stored from another, barriers go before the body's first load of it
 * and before the store. No shipped kernel gets differing layouts (the
 * homed load takes the layout of what it is added to), so the test builds
 * the kernel with the internal API and gives the stored value another
 * layout by hand. */
static int count_bars(TBlock *b) {
  int n = 0;
  for (TOp *op = b->first; op; op = op->next) n += op->opc == OP_NAMED_BAR;
  return n;
}

static bool is_home(const TValue *v) { return v->def && v->def->opc == OP_SMEM_ALLOC && (v->def->flags & OPF_HOME); }

static void test_check_barriers(void **state) {
  (void)state;
  TModule *m = NULL;
  Ctx *c = tu_build("home.tile", source, NULL, 0, &m);
  TFunc *f = m->kernels.data[0];
  TOp *loop = NULL;
  for (TOp *op = f->body->first; op; op = op->next)
    if (op->opc == OP_FOR) loop = op;
  assert_non_null(loop);
  TBlock *body = loop->regions[0];
  assert_int_equal(count_bars(body), 0); /* same layouts: nothing to order */
  /* the homed stores, each value given a layout unlike its load's */
  int nst = 0;
  TOp *stores[2] = {NULL, NULL}, *loads[2] = {NULL, NULL};
  for (TOp *op = body->first; op; op = op->next) {
    if (op->opc != OP_SMEM_STORE || !is_home(op->opnds[0]) || nst == 2) continue;
    for (TOp *ld = body->first; ld && !loads[nst]; ld = ld->next)
      if (ld->opc == OP_SMEM_LOAD && ld->opnds[0] == op->opnds[0]) loads[nst] = ld;
    assert_non_null(loads[nst]);
    TValue *v = op->opnds[1];
    Type *t = ar_alloc(&c->arena, sizeof *t);
    *t = *v->type;
    const Layout *other = NULL;
    for (int vec = 1; vec <= 8 && !other; vec *= 2) {
      static const int order[1] = {0};
      const Layout *l = ly_blocked_for(c, t->rank, t->shape, f->warps, vec, order);
      if (!ly_same(l, v->type->layout, t->rank, t->shape, f->warps)) other = l;
    }
    assert_non_null(other);
    t->layout = other;
    v->type = t;
    stores[nst++] = op;
  }
  assert_int_equal(nst, 2); /* a and b */
  hm_check(c, f);
  assert_int_equal(count_bars(body), 4);
  for (int i = 0; i < 2; i++) {
    assert_true(stores[i]->prev && stores[i]->prev->opc == OP_NAMED_BAR);
    /* the first load of each: a barrier right before it (the second value's
     * first load may follow the first's barrier and load) */
    assert_true(loads[i]->prev && loads[i]->prev->opc == OP_NAMED_BAR);
  }
  tu_ctx_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wide_homed),
      cmocka_unit_test(test_narrow_stays),
      cmocka_unit_test(test_budget),
      cmocka_unit_test(test_check_barriers),
      cmocka_unit_test(test_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_tuples.c - variables that hold tuples, carried by run-time loops
 * (for, while) and merged by run-time ifs item by item (sema_stmt.c): the
 * carried values in the TIR, and a kernel run on the emulator against the
 * same arithmetic in C. The diagnostics (a tuple that changes its shape,
 * an item's type, a buffer item that changes) are golden tests:
 * tests/golden/diag/1714_tuple_carried.tile, 123_tuple_carried_in_if.tile. */
#include "testutil.h"
#include "tile/tilec.h"
#include "../../compiler/tilec_int.h"
#include "../../emu/emu.h"

#include <math.h>

/* acc = (s, (p, c)) over a loop with an if inside, st = (a buffer, an
 * int) whose buffer item is not carried, w = (a tile, an int) over a
 * while loop */
static const char source[] =
    "kernel tup(x: *f32, out: *f32, n: i32) warps(4) {\n"
    "    let j = arange(0, 128);\n"
    "    let v = load(x + j);\n"
    "    let buf = smem(f32, [8, 128]);\n"
    "    let acc = (zeros([128], f32), (zeros([128], f32) + 1.0, 0));\n"
    "    let st = (buf, 0);\n"
    "    for i in range(0, n) {\n"
    "        let (s, pc) = acc;\n"
    "        let (p, c) = pc;\n"
    "        if i % 3 != 0 {\n"
    "            acc = (s + v * (i as f32), (p * 0.5, c + 1));\n"
    "        }\n"
    "        let (b, t) = st;\n"
    "        st = (b, t + i);\n"
    "    }\n"
    "    let k = 0;\n"
    "    let w = (zeros([128], f32), 0);\n"
    "    while k < n {\n"
    "        let (a, b) = w;\n"
    "        w = (a + 2.0, b + k);\n"
    "        k += 1;\n"
    "    }\n"
    "    let (s, pc) = acc;\n"
    "    let (p, c) = pc;\n"
    "    let (a, b) = w;\n"
    "    let (bf, t) = st;\n"
    "    store(out + j, s + p + (c as f32) + a + (b as f32) + (t as f32) * 1000.0);\n"
    "}\n";

static char *compile(tilec_emit emit) { return tu_compile("tup.tile", source, sizeof source - 1, emit, NULL, 0); }

/* The results of the first op `what` ("= for %") in t from `from` on: the
 * commas before it on its line, plus one. */
static int results_of(const char *t, const char *from, const char *what, const char **at) {
  const char *op = strstr(from, what);
  if (!op) print_error("no '%s' in:\n%s\n", what, t);
  assert_non_null(op);
  const char *line = op;
  while (line > t && line[-1] != '\n') line--;
  int n = 1;
  for (const char *q = line; q < op; q++) n += *q == ',';
  *at = op;
  return n;
}

/* The loops carry the tuples' run-time items only: the for loop s, p, c
 * and st's int (not its buffer), the while loop k and w's two items; the
 * if merges the three items of acc. */
static void test_carried_values(void **state) {
  (void)state;
  char *t = compile(TILEC_EMIT_TIR);
  const char *f, *i, *w;
  assert_int_equal(results_of(t, t, "= for %", &f), 4);  /* s, p, c, t */
  assert_int_equal(results_of(t, f, "= if %", &i), 3);   /* s, p, c: st is not assigned in the if */
  assert_int_equal(results_of(t, t, "= while %", &w), 3); /* k, w's two items */
  free(t);
}

/* The kernel on the emulator, n = 0, 1, 7: the sums as C computes them. */
static void test_runs(void **state) {
  (void)state;
  char *ptx = compile(TILEC_EMIT_PTX);
  EmModule *m = NULL;
  char err[512];
  if (!em_ptx_parse(ptx, strlen(ptx), &m, err, sizeof err)) {
    print_error("PTX: %s\n", err);
    fail();
  }
  float x[128], out[128];
  for (int j = 0; j < 128; j++) x[j] = 0.25f * (float)(j - 64);
  const int ns[] = {0, 1, 7};
  for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++) {
    int n = ns[q];
    for (int j = 0; j < 128; j++) out[j] = NAN;
    struct {
      uint64_t x, out;
      int32_t n, pad;
    } p = {(uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)out, n, 0};
    EmRange rg[2] = {{x, sizeof x}, {out, sizeof out}};
    EmLaunch l = {.kernel = "tup", .grid = {1, 1, 1}, .block = {128, 1, 1}, .params = &p, .params_size = sizeof p,
                  .ranges = rg, .nranges = 2};
    if (!em_launch(m, &l, err, sizeof err)) {
      print_error("n = %d: %s\n", n, err);
      fail();
    }
    for (int j = 0; j < 128; j++) {
      float s = 0, pp = 1;
      int c = 0, b = 0, t = 0;
      for (int i = 0; i < n; i++) {
        if (i % 3 != 0) s += x[j] * (float)i, pp *= 0.5f, c++;
        t += i;
        b += i;
      }
      float want = s + pp + (float)c + 2.0f * (float)n + (float)b + (float)t * 1000.0f;
      if (fabsf(out[j] - want) > 1e-4f * fmaxf(1.0f, fabsf(want))) {
        print_error("n = %d, element %d: %g, want %g\n", n, j, out[j], want);
        fail();
      }
    }
  }
  em_module_free(m);
  free(ptx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_carried_values),
      cmocka_unit_test(test_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

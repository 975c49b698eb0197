/* test_rows.c - a dot-less loop's loads through cp.async rings
 * (compiler/pipeline_rows.c, stages(S)): which loads and loops take them
 * (--emit=tir's notes), and the kernels on the emulator against C, at
 * 2 to 4 slots, under round-robin and adversarial schedules (the emulator
 * fails a slot read before this thread's wait covers its copy, and a copy
 * into a slot another thread may still read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "tile/tilec.h"
#include "../../emu/emu.h"
#include "testutil.h"

#include <math.h>

/* rowscale: a persistent loop over rows (step num_programs), each row
 * scaled by its dot product with w (w the same every row: a plain load).
 * colsum: column sums over blocks of 8 rows of 64 f16, a 2-D tile with a
 * row mask, constant step. */
static const char source[] =
    "kernel rowscale(x: *f32, w: *f32, y: *f32, n_rows: i32, n_cols: i32 multiple_of(16),\n"
    "                const S: i32 = 3) warps(2) stages(S) {\n"
    "    let cols = arange(0, 256);\n"
    "    let mask = cols < n_cols;\n"
    "    for row in range(program_id(0), n_rows, num_programs(0)) {\n"
    "        let v = load(x + row * n_cols + cols, mask, 0.0);\n"
    "        let wv = load(w + cols, mask, 0.0);\n"
    "        let s = sum(v * wv);\n"
    "        store(y + row * n_cols + cols, v * s, mask);\n"
    "    }\n"
    "}\n"
    "kernel colsum(x: *f16, y: *f32, n_rows: i32, const S: i32 = 3) warps(1) stages(S) {\n"
    "    let r = arange(0, 8);\n"
    "    let c = arange(0, 64);\n"
    "    let acc = zeros([8, 64], f32);\n"
    "    for r0 in range(0, n_rows, 8) {\n"
    "        let rows = r0 + r;\n"
    "        acc += load(x + rows[:, None] * 64 + c[None, :], (rows < n_rows)[:, None], 0.0) as f32;\n"
    "    }\n"
    "    store(y + c, sum(acc, axis = 0));\n"
    "}\n";

static char *compile(tilec_emit emit, const char *stages) {
  tilec_define d = {"S", stages};
  return tu_compile("rows.tile", source, sizeof source - 1, emit, &d, 1);
}

static void test_notes(void **state) {
  (void)state;
  char *t = compile(TILEC_EMIT_TIR, "3");
  has(t, "// ring: loop at 5:5 loads 6:17 through cp.async rings of 3 slots (copies 2 iterations ahead, 3072 bytes",
      "rowscale's ring");
  has(t, "// ring: the load at 7:18 stays a plain load: it reads the same addresses every iteration", "w's note");
  has(t, "// ring: loop at 16:5 loads 18:16 through cp.async rings of 3 slots (copies 2 iterations ahead, 3072 bytes",
      "colsum's ring");
  has(t, "async_wait 1", "the wait for all but the newest group");
  has(t, "async_wait 0", "the wait after the loop");
  free(t);
  t = compile(TILEC_EMIT_TIR, "2");
  has(t, "rings of 2 slots (copies 1 iteration ahead", "two slots");
  free(t);
  t = compile(TILEC_EMIT_TIR, "0");
  lacks(t, "// ring:", "a note without stages");
  lacks(t, "async_copy", "a copy without stages");
  free(t);
}

/* the kernels' PTX at stages(S), with its copies */
static char *ptx_at(const char *stages) {
  char *ptx = compile(TILEC_EMIT_PTX, stages);
  has(ptx, "cp.async.cg.shared.global", "a cp.async");
  return ptx;
}

static const int scheds[] = {EM_SCHED_RR, EM_SCHED_ADVERSARIAL};

/* rowscale on 3 CTAs (a CTA with no row at n_rows = 2), rows of 240 of
 * 256 columns, 2, 3 and 4 slots. */
static void test_rowscale_runs(void **state) {
  (void)state;
  enum { C = 240, R = 20 };
  float *x = malloc(sizeof(float) * C * R), *w = malloc(sizeof(float) * C), *y = malloc(sizeof(float) * C * R);
  assert_non_null(x);
  assert_non_null(w);
  assert_non_null(y);
  uint64_t seed = 11;
  for (int i = 0; i < C * R; i++) x[i] = (float)(tu_xorshift(&seed) % 2001) / 1000.0f - 1.0f;
  for (int i = 0; i < C; i++) w[i] = (float)(tu_xorshift(&seed) % 2001) / 1000.0f - 1.0f;
  const char *ss[] = {"2", "3", "4"};
  for (int si = 0; si < 3; si++) {
    char *ptx = ptx_at(ss[si]);
    const int ns[] = {0, 1, 2, 7, R};
    for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++)
      for (size_t k = 0; k < sizeof scheds / sizeof scheds[0]; k++) {
        int n = ns[q];
        for (int i = 0; i < C * R; i++) y[i] = NAN;
        struct {
          uint64_t x, w, y;
          int32_t n, cols;
        } p = {(uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)w, (uint64_t)(uintptr_t)y, n, C};
        EmRange rg[3] = {{x, sizeof(float) * C * R}, {w, sizeof(float) * C}, {y, sizeof(float) * C * R}};
        EmLaunch l = {.kernel = "rowscale", .grid = {3, 1, 1}, .block = {64, 1, 1}, .params = &p,
                      .params_size = sizeof p, .dyn_smem = 64 * 1024, .sched = scheds[k], .seed = 5,
                      .ranges = rg, .nranges = 3};
        char what[64];
        snprintf(what, sizeof what, "stages(%s), n_rows %d", ss[si], n);
        tu_emu_must(ptx, &l, what);
        for (int r = 0; r < R; r++) {
          double s = 0;
          for (int j = 0; j < C; j++) s += (double)x[r * C + j] * w[j];
          for (int j = 0; j < C; j++) {
            float want = (float)(x[r * C + j] * s), got = y[r * C + j];
            bool ok = r < n ? fabsf(got - want) <= 1e-4f * (1.0f + fabsf(want)) : isnan(got);
            if (!ok) {
              print_error("%s, sched %d: y[%d][%d] = %g, want %g\n", what, scheds[k], r, j, got, r < n ? want : NAN);
              fail();
            }
          }
        }
      }
    free(ptx);
  }
  free(x);
  free(w);
  free(y);
}

static uint16_t f2h(float f) { /* exact for the small integers used here */
  uint32_t u;
  memcpy(&u, &f, 4);
  if (f == 0) return 0;
  uint32_t sign = (u >> 16) & 0x8000, ex = ((u >> 23) & 0xff) - 127 + 15, mant = (u >> 13) & 0x3ff;
  return (uint16_t)(sign | ex << 10 | mant);
}

/* colsum over 0, 5 (one partial block), 8 and 29 rows. */
static void test_colsum_runs(void **state) {
  (void)state;
  enum { R = 29 };
  uint16_t *x = malloc(sizeof(uint16_t) * 64 * R);
  float *y = malloc(sizeof(float) * 64), *xf = malloc(sizeof(float) * 64 * R);
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(xf);
  uint64_t seed = 3;
  for (int i = 0; i < 64 * R; i++) xf[i] = (float)((int)(tu_xorshift(&seed) % 17) - 8), x[i] = f2h(xf[i]);
  char *ptx = ptx_at("3");
  const int ns[] = {0, 5, 8, R};
  for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++)
    for (size_t k = 0; k < sizeof scheds / sizeof scheds[0]; k++) {
      int n = ns[q];
      for (int j = 0; j < 64; j++) y[j] = NAN;
      struct {
        uint64_t x, y;
        int32_t n, pad;
      } p = {(uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)y, n, 0};
      EmRange rg[2] = {{x, sizeof(uint16_t) * 64 * R}, {y, sizeof(float) * 64}};
      EmLaunch l = {.kernel = "colsum", .grid = {1, 1, 1}, .block = {32, 1, 1}, .params = &p, .params_size = sizeof p,
                    .dyn_smem = 64 * 1024, .sched = scheds[k], .seed = 9, .ranges = rg, .nranges = 2};
      char what[64];
      snprintf(what, sizeof what, "colsum, n_rows %d", n);
      tu_emu_must(ptx, &l, what);
      for (int j = 0; j < 64; j++) {
        float want = 0;
        for (int r = 0; r < n; r++) want += xf[r * 64 + j];
        if (y[j] != want) {
          print_error("%s, sched %d: y[%d] = %g, want %g\n", what, scheds[k], j, y[j], want);
          fail();
        }
      }
    }
  free(ptx);
  free(x);
  free(y);
  free(xf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_notes),
      cmocka_unit_test(test_rowscale_runs),
      cmocka_unit_test(test_colsum_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

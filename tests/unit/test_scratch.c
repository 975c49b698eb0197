/* test_scratch.c - where reductions across warps put their scratch and
 * which barriers they skip (lower_core.c lw_scr_claim, lower.c lower_for):
 * the barriers each kernel's PTX keeps, and the kernels on the emulator
 * against C under round-robin and adversarial schedules. The emulator fails
 * a scratch write over a word another warp may still read with no barrier
 * between (emu/check.c), so a barrier skipped where it was needed fails
 * here (tried: lower_for erasing the for body's first barrier always fails
 * `cols`; the halves not alternating fails `one`; a claim ignoring what
 * may still be read fails `three`). */
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

/* Rows of 256 f32 on 4 warps: every reduction of a row crosses warps.
 * one: a sum a row (the loop's next sum writes where this one reads: a
 *   barrier before it stays).
 * three: three reductions a row in three places (the first's barrier, made
 *   before the loop's end was known, goes).
 * soft: max, then the sum of exp(v - max) (softmax's pair).
 * flat: two reductions, no loop (nothing to wait for at the entry).
 * cond: a reduction in an if in the loop, one after it.
 * cols: a [64, 64] tile summed over axis 0 (across warps, 1024 bytes of
 *   partials) and axis 1 (inside each warp), in a loop. */
static const char source[] =
    "kernel one(x: *f32, y: *f32, n_rows: i32) warps(4) {\n"
    "    let c = arange(0, 256);\n"
    "    for row in range(0, n_rows) {\n"
    "        store(y + row, sum(load(x + row * 256 + c)));\n"
    "    }\n"
    "}\n"
    "kernel three(x: *f32, y: *f32, n_rows: i32) warps(4) {\n"
    "    let c = arange(0, 256);\n"
    "    for row in range(0, n_rows) {\n"
    "        let v = load(x + row * 256 + c);\n"
    "        let a = sum(v);\n"
    "        let b = sum(v * v);\n"
    "        let m = max(v, axis = 0);\n"
    "        store(y + row * 256 + c, v * a + b - m);\n"
    "    }\n"
    "}\n"
    "kernel soft(x: *f32, y: *f32, n_rows: i32) warps(4) {\n"
    "    let c = arange(0, 256);\n"
    "    for row in range(0, n_rows) {\n"
    "        let v = load(x + row * 256 + c);\n"
    "        let e = exp(v - max(v, axis = 0));\n"
    "        store(y + row * 256 + c, e / sum(e));\n"
    "    }\n"
    "}\n"
    "kernel flat(x: *f32, y: *f32) warps(4) {\n"
    "    let c = arange(0, 256);\n"
    "    let v = load(x + c);\n"
    "    store(y + c, v * sum(v) - min(v, axis = 0));\n"
    "}\n"
    "kernel cond(x: *f32, y: *f32, n_rows: i32) warps(4) {\n"
    "    let c = arange(0, 256);\n"
    "    for row in range(0, n_rows) {\n"
    "        let v = load(x + row * 256 + c);\n"
    "        let s = 0.0;\n"
    "        if row % 2 == 0 {\n"
    "            s = sum(v);\n"
    "        }\n"
    "        store(y + row * 256 + c, v * s + max(v, axis = 0));\n"
    "    }\n"
    "}\n"
    "kernel cols(x: *f32, y: *f32, n_rows: i32) warps(4) {\n"
    "    let r = arange(0, 64);\n"
    "    let c = arange(0, 64);\n"
    "    for b in range(0, n_rows) {\n"
    "        let v = load(x + b * 4096 + r[:, None] * 64 + c[None, :]);\n"
    "        let s = sum(v, axis = 0);\n"
    "        let t = sum(v, axis = 1);\n"
    "        store(y + b * 4096 + r[:, None] * 64 + c[None, :], v * s[None, :] + t[:, None]);\n"
    "    }\n"
    "}\n";

/* bar.sync in kernel k's PTX */
static int barriers(const char *ptx, const char *k) {
  char head[64];
  snprintf(head, sizeof head, ".entry %s(", k);
  const char *p = strstr(ptx, head);
  assert_non_null(p);
  const char *end = strstr(p, "\n}");
  assert_non_null(end);
  int n = 0;
  for (const char *q = p; (q = strstr(q, "bar.sync")) && q < end; q++) n++;
  return n;
}

static char *ptx_of(void) { return tu_compile("scratch.tile", source, sizeof source - 1, TILEC_EMIT_PTX, NULL, 0); }

/* Before the change every reduction had two barriers (one before its
 * writes, one between its writes and its reads). */
static void test_barriers(void **state) {
  (void)state;
  char *ptx = ptx_of();
  assert_int_equal(barriers(ptx, "one"), 1);   /* the row's sum in the half the last row's did not read */
  assert_int_equal(barriers(ptx, "three"), 2); /* sum(v) and max(v) in one exchange, sum(v * v) beside */
  assert_int_equal(barriers(ptx, "soft"), 2);  /* the sum needs the max */
  assert_int_equal(barriers(ptx, "flat"), 1);  /* both at once, and nothing before them */
  assert_int_equal(barriers(ptx, "cols"), 2);  /* 1024 bytes of partials: no room for two halves, so the
                                                  barrier before the writes stays */
  free(ptx);
}

static const int scheds[] = {EM_SCHED_RR, EM_SCHED_ADVERSARIAL};

/* the C reference of kernel k's row (256 values; cols: a 64 x 64 block) */
static void reference(const char *k, int row, const float *x, double *want) {
  if (!strcmp(k, "cols")) {
    for (int i = 0; i < 64; i++)
      for (int j = 0; j < 64; j++) {
        double s = 0, t = 0;
        for (int q = 0; q < 64; q++) s += x[q * 64 + j], t += x[i * 64 + q];
        want[i * 64 + j] = x[i * 64 + j] * s + t;
      }
    return;
  }
  double s = 0, ss = 0, mx = -INFINITY, mn = INFINITY;
  for (int j = 0; j < 256; j++) {
    s += x[j];
    ss += (double)x[j] * x[j];
    mx = fmax(mx, x[j]);
    mn = fmin(mn, x[j]);
  }
  double es = 0;
  for (int j = 0; j < 256; j++) es += exp(x[j] - mx);
  for (int j = 0; j < 256; j++) {
    if (!strcmp(k, "three")) want[j] = x[j] * s + ss - mx;
    else if (!strcmp(k, "soft")) want[j] = exp(x[j] - mx) / es;
    else if (!strcmp(k, "flat")) want[j] = x[j] * s - mn;
    else if (!strcmp(k, "cond")) want[j] = x[j] * (row % 2 == 0 ? s : 0) + mx;
  }
  if (!strcmp(k, "one")) want[0] = s;
}

static void test_runs(void **state) {
  (void)state;
  enum { R = 5, N = 4096 * R };
  float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
  double *want = malloc(sizeof(double) * 4096);
  assert_non_null(x);
  assert_non_null(y);
  assert_non_null(want);
  uint64_t seed = 7;
  for (int i = 0; i < N; i++) x[i] = (float)(tu_xorshift(&seed) % 2001) / 1000.0f - 1.0f;
  char *ptx = ptx_of();
  const char *ks[] = {"one", "three", "soft", "flat", "cond", "cols"};
  for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
    for (size_t s = 0; s < sizeof scheds / sizeof scheds[0]; s++) {
      const char *k = ks[ki];
      int rows = !strcmp(k, "flat") ? 1 : R, width = !strcmp(k, "cols") ? 4096 : 256;
      for (int i = 0; i < N; i++) y[i] = NAN;
      struct {
        uint64_t x, y;
        int32_t n, pad;
      } p = {(uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)y, rows, 0};
      EmRange rg[2] = {{x, sizeof(float) * N}, {y, sizeof(float) * N}};
      EmLaunch l = {.kernel = k, .grid = {1, 1, 1}, .block = {128, 1, 1}, .params = &p, .params_size = sizeof p,
                    .dyn_smem = 16 * 1024, .sched = scheds[s], .seed = 3, .ranges = rg, .nranges = 2};
      char what[64];
      snprintf(what, sizeof what, "%s, sched %d", k, scheds[s]);
      tu_emu_must(ptx, &l, what);
      for (int r = 0; r < rows; r++) {
        reference(k, r, x + (size_t)r * width, want);
        int n = !strcmp(k, "one") ? 1 : width;
        for (int j = 0; j < n; j++) {
          float got = !strcmp(k, "one") ? y[r] : y[(size_t)r * width + j];
          if (!(fabs(got - want[j]) <= 1e-4 * (1 + fabs(want[j])))) {
            print_error("%s: row %d [%d] = %g, want %g\n", what, r, j, got, want[j]);
            fail();
          }
        }
      }
    }
  free(ptx);
  free(x);
  free(y);
  free(want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_barriers),
      cmocka_unit_test(test_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

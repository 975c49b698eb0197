/* test_emu.c - the emulator (emu/): tilec's PTX for the examples, parsed
 * and run on the CPU against references computed here; the reports for a
 * bad access, an instruction it cannot run yet and broken PTX. */
#include "testutil.h"
#include "tile/tilec.h"
#include "../../emu/emu.h"

#include <math.h>

static size_t last_smem; /* the dynamic shared memory of the last module_of (its metadata's "smem N") */

/* The PTX of an example (compiled in-process), parsed. */
static EmModule *module_of(const char *example, char **ptx_out) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/%s/%s.tile", TILE_SRC_DIR, example, example);
  tilec_options o;
  tilec_options_init(&o);
  o.emit = TILEC_EMIT_PTX;
  tilec_result *r = NULL;
  tilec_status st = tilec_compile_file(path, &o, &r);
  if (st != TILEC_OK) print_error("%s: %s\n", path, r ? tilec_result_diagnostics(r) : "no result");
  assert_int_equal(st, TILEC_OK);
  size_t len = 0;
  const char *ptx = tilec_result_output(r, &len);
  const char *meta = tilec_result_metadata(r), *sm = meta ? strstr(meta, "\nsmem ") : NULL;
  last_smem = sm ? (size_t)strtoul(sm + 6, NULL, 10) : 0;
  char err[256];
  EmModule *m = NULL;
  bool ok = em_ptx_parse(ptx, len, &m, err, sizeof err);
  if (!ok) print_error("%s: %s\n", example, err);
  assert_true(ok);
  if (ptx_out) {
    *ptx_out = malloc(len + 1);
    memcpy(*ptx_out, ptx, len);
    (*ptx_out)[len] = 0;
  }
  tilec_result_free(r);
  return m;
}

static float frand(uint64_t *s) { return (float)(tu_xorshift(s) >> 40) / (float)(1 << 24) * 2.0f - 1.0f; }

/* vector_add(x, y, out, n): BLOCK = 1024 elements per program, 4 warps */
static bool run_vector_add(const EmModule *m, float *x, float *y, float *out, int n, const EmRange *rg, int nrg,
                           char *err, size_t errlen) {
  struct {
    uint64_t x, y, out;
    int32_t n;
    int32_t pad;
  } p = {(uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)y, (uint64_t)(uintptr_t)out, n, 0};
  EmLaunch l = {.kernel = "vector_add", .grid = {(unsigned)(n + 1023) / 1024, 1, 1}, .block = {128, 1, 1},
                .params = &p, .params_size = sizeof p, .ranges = rg, .nranges = nrg};
  return em_launch(m, &l, err, errlen);
}

static void test_vector_add(void **state) {
  (void)state;
  EmModule *m = module_of("vector_add", NULL);
  const EmFunc *f = em_find_func(m, "vector_add");
  assert_non_null(f);
  assert_int_equal(f->nparams, 4);
  assert_int_equal(f->param_bytes, 28);
  /* sizes around the vector width (4) and the block (1024): the masked tails */
  int sizes[] = {1, 3, 4, 5, 1023, 1024, 1025, 3001};
  uint64_t seed = 7;
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    int n = sizes[k];
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n), *out = malloc(sizeof(float) * (n + 8));
    for (int i = 0; i < n; i++) x[i] = frand(&seed), y[i] = frand(&seed);
    for (int i = 0; i < n + 8; i++) out[i] = -99.0f;
    EmRange rg[3] = {{x, sizeof(float) * n}, {y, sizeof(float) * n}, {out, sizeof(float) * n}};
    char err[512];
    bool ok = run_vector_add(m, x, y, out, n, rg, 3, err, sizeof err);
    if (!ok) print_error("n=%d: %s\n", n, err);
    assert_true(ok);
    for (int i = 0; i < n; i++) assert_true(out[i] == x[i] + y[i]);
    for (int i = n; i < n + 8; i++) assert_true(out[i] == -99.0f); /* nothing past the end */
    free(x), free(y), free(out);
  }
  em_module_free(m);
}

/* A launch that reads past its buffers is stopped with the access, the
 * Tile line and the thread. */
static void test_out_of_bounds_report(void **state) {
  (void)state;
  EmModule *m = module_of("vector_add", NULL);
  int n = 100;
  float *x = calloc(n, sizeof(float)), *y = calloc(n, sizeof(float)), *out = calloc(n, sizeof(float));
  EmRange rg[3] = {{x, sizeof(float) * 64}, {y, sizeof(float) * n}, {out, sizeof(float) * n}}; /* x: 64 only */
  char err[512];
  assert_false(run_vector_add(m, x, y, out, n, rg, 3, err, sizeof err));
  assert_non_null(strstr(err, "outside every allocation"));
  assert_non_null(strstr(err, "vector_add.tile:"));
  assert_non_null(strstr(err, "thread"));
  free(x), free(y), free(out);
  em_module_free(m);
}

/* softmax(x, out, n_cols, stride): one program per row, shuffles and a
 * cross-warp reduction through shared memory. */
static void test_softmax(void **state) {
  (void)state;
  EmModule *m = module_of("softmax", NULL);
  assert_true(last_smem > 0); /* the cross-warp reduction's scratch */
  int rows = 3, cols[] = {1, 37, 1001, 1024};
  uint64_t seed = 11;
  for (size_t k = 0; k < sizeof cols / sizeof *cols; k++) {
    int nc = cols[k], stride = nc + 3;
    float *x = malloc(sizeof(float) * rows * stride), *out = malloc(sizeof(float) * rows * stride);
    for (int i = 0; i < rows * stride; i++) x[i] = 4.0f * frand(&seed), out[i] = -99.0f;
    struct {
      uint64_t x, out;
      int32_t n_cols, stride;
    } p = {(uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)out, nc, stride};
    EmRange rg[2] = {{x, sizeof(float) * rows * stride}, {out, sizeof(float) * rows * stride}};
    EmLaunch l = {.kernel = "softmax", .grid = {(unsigned)rows, 1, 1}, .block = {128, 1, 1}, .params = &p,
                  .params_size = sizeof p, .ranges = rg, .nranges = 2, .dyn_smem = last_smem};
    char err[512];
    bool ok = em_launch(m, &l, err, sizeof err);
    if (!ok) print_error("cols=%d: %s\n", nc, err);
    assert_true(ok);
    for (int r = 0; r < rows; r++) {
      double mx = -INFINITY, s = 0;
      for (int c = 0; c < nc; c++) mx = fmax(mx, x[r * stride + c]);
      for (int c = 0; c < nc; c++) s += exp(x[r * stride + c] - mx);
      for (int c = 0; c < nc; c++) {
        double want = exp(x[r * stride + c] - mx) / s, got = out[r * stride + c];
        if (fabs(got - want) > 1e-5 * fabs(want) + 1e-7) {
          print_error("cols=%d row %d col %d: %g, want %g\n", nc, r, c, got, want);
          fail();
        }
      }
      for (int c = nc; c < stride; c++) assert_true(out[r * stride + c] == -99.0f);
    }
    free(x), free(out);
  }
  em_module_free(m);
}

/* An instruction the emulator cannot run yet stops the launch with its
 * name (gemm: wgmma, mbarriers, TMA). */
static void test_unsupported_report(void **state) {
  (void)state;
  EmModule *m = module_of("gemm", NULL);
  const EmFunc *f = NULL;
  for (int i = 0; i < m->nfuncs; i++)
    if (m->funcs[i].entry) f = &m->funcs[i];
  assert_non_null(f);
  uint8_t params[1024] = {0};
  EmLaunch l = {.kernel = f->name, .grid = {1, 1, 1}, .block = {128, 1, 1}, .params = params,
                .params_size = sizeof params, .max_steps = 1000000};
  unsigned nt = f->maxntid[0] ? (unsigned)f->maxntid[0] : 128;
  l.block[0] = nt;
  l.dyn_smem = 200 * 1024;
  char err[512];
  assert_false(em_launch(m, &l, err, sizeof err));
  assert_non_null(strstr(err, "cannot run this instruction yet"));
  em_module_free(m);
}

/* Broken PTX: every prefix of a real module and a few flipped bytes are
 * refused or parsed, never a crash (the sanitizer build runs this too). */
static void test_parse_hostile(void **state) {
  (void)state;
  char *ptx = NULL;
  EmModule *m = module_of("softmax", &ptx);
  em_module_free(m);
  size_t len = strlen(ptx);
  char err[256];
  int refused = 0;
  for (size_t n = 0; n < len; n += 13) {
    EmModule *x = NULL;
    char *cut = malloc(n ? n : 1);
    memcpy(cut, ptx, n);
    if (em_ptx_parse(cut, n, &x, err, sizeof err)) em_module_free(x);
    else {
      refused++;
      assert_non_null(strstr(err, "ptx:"));
    }
    free(cut);
  }
  assert_true(refused > 0);
  uint64_t seed = 3;
  for (int k = 0; k < 200; k++) {
    char *bad = malloc(len);
    memcpy(bad, ptx, len);
    for (int j = 0; j < 4; j++) bad[tu_xorshift(&seed) % len] = (char)(tu_xorshift(&seed) & 0xff);
    EmModule *x = NULL;
    if (em_ptx_parse(bad, len, &x, err, sizeof err)) em_module_free(x);
    free(bad);
  }
  free(ptx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vector_add),
      cmocka_unit_test(test_out_of_bounds_report),
      cmocka_unit_test(test_softmax),
      cmocka_unit_test(test_unsupported_report),
      cmocka_unit_test(test_parse_hostile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

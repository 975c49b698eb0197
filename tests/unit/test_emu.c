/* test_emu.c - the emulator (emu/): tilec's PTX for the examples, parsed
 * and run on the CPU against references computed here; the reports for a
 * bad access, a warp missing from an mma, an instruction it cannot run yet
 * and broken PTX. */
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

/* bf16 <-> float for the test's buffers (round to nearest even; finite values) */
static uint16_t bf16_of(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static double double_of_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* matmul(a, b, c, M, N, K, lda, ldb, ldc): a 128x256 tile of C per program
 * (a 1-D grid), 8 warps, the compiler's pipeline: TMA copies into shared
 * memory and async wgmma with f32 accumulators, bf16 out, C staged in
 * shared memory and written by TMA. Shapes
 * around the 128x256x64 blocks; padded rows everywhere (strides multiples
 * of 8, as the kernel declares): A's and B's padding holds NaN (a copy the
 * masks leave out would spread it), C's a sentinel that must survive.
 * Against a float64 product of the same bf16 inputs, within 1e-2 of the
 * row's largest |C| (bf16 output: 2^-9 relative, plus the f32 sums). */
static void test_matmul(void **state) {
  (void)state;
  EmModule *m = module_of("matmul", NULL);
  size_t smem = last_smem;
  assert_true(smem > 0); /* the tiles staged in shared memory */
  const EmFunc *f = em_find_func(m, "matmul");
  assert_non_null(f);
  assert_int_equal(f->nparams, 12); /* and the three descriptors the runtime derives (__dot_a, __dot_b, __dot_c) */
  int nwg = 0, ntma = 0;
  for (int i = 0; i < f->nins; i++) nwg += f->ins[i].opc == EM_WGMMA, ntma += f->ins[i].opc == EM_TMA_LOAD;
  assert_true(nwg > 0 && ntma > 0); /* the dot runs pipelined on TMA, not on the mma.sync fallback */
  int shapes[][3] = {{128, 256, 64}, {70, 50, 40}, {1, 1, 1}, {130, 265, 200}};
  const uint16_t nan = 0x7fc0, sentinel = 0xdead;
  uint64_t seed = 5;
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], lda = (K + 7) / 8 * 8 + 8, ldb = (N + 7) / 8 * 8 + 8,
        ldc = (N + 7) / 8 * 8 + 8;
    uint16_t *a = malloc(sizeof(uint16_t) * M * lda), *b = malloc(sizeof(uint16_t) * K * ldb),
             *c = malloc(sizeof(uint16_t) * M * ldc);
    for (int i = 0; i < M * lda; i++) a[i] = i % lda < K ? bf16_of(frand(&seed)) : nan;
    for (int i = 0; i < K * ldb; i++) b[i] = i % ldb < N ? bf16_of(frand(&seed)) : nan;
    for (int i = 0; i < M * ldc; i++) c[i] = sentinel;
    /* the parameter buffer as the kernel declares it: 3 pointers, 6 i32,
     * then the tensor maps of A (M x K) and B (K x N) as tile_launch builds
     * them from those (metadata "derive": boxes 128 x 64 and 64 x 64) */
    _Alignas(64) uint8_t params[512] = {0};
    uint64_t ptrs[3] = {(uint64_t)(uintptr_t)a, (uint64_t)(uintptr_t)b, (uint64_t)(uintptr_t)c};
    int32_t ints[6] = {M, N, K, lda, ldb, ldc};
    assert_true(f->param_bytes <= sizeof params);
    for (int i = 0; i < 9; i++) {
      assert_int_equal(f->params[i].size, i < 3 ? 8 : 4);
      memcpy(params + f->params[i].offset, i < 3 ? (const void *)&ptrs[i] : (const void *)&ints[i - 3],
             f->params[i].size);
    }
    /* A (M x K), B (K x N), C (M x N): boxes 128 x 64, 64 x 64, 128 x 64 */
    const struct {
      void *base;
      uint64_t cols, rows, ld;
      uint32_t box_rows;
    } maps[3] = {{a, (uint64_t)K, (uint64_t)M, (uint64_t)lda, 128},
                 {b, (uint64_t)N, (uint64_t)K, (uint64_t)ldb, 64},
                 {c, (uint64_t)N, (uint64_t)M, (uint64_t)ldc, 128}};
    for (int j = 0; j < 3; j++) {
      _Alignas(64) EmTensorMap map;
      uint64_t dims[2] = {maps[j].cols, maps[j].rows}, strides[1] = {2u * maps[j].ld};
      uint32_t box[2] = {64, maps[j].box_rows}, estr[2] = {1, 1};
      bool unsup = false;
      char why[256];
      bool ok = em_tmap_encode(&map, 9 /* bf16 */, 2, maps[j].base, dims, strides, box, estr, 0, 3, 2, 0, &unsup, why,
                               sizeof why);
      if (!ok) print_error("%s\n", why);
      assert_true(ok);
      assert_int_equal(f->params[9 + j].size, 128);
      memcpy(params + f->params[9 + j].offset, &map, 128);
    }
    EmRange rg[3] = {{a, sizeof(uint16_t) * M * lda}, {b, sizeof(uint16_t) * K * ldb}, {c, sizeof(uint16_t) * M * ldc}};
    EmLaunch l = {.kernel = "matmul", .grid = {(unsigned)((M + 127) / 128 * ((N + 255) / 256)), 1, 1},
                  .block = {256, 1, 1}, .params = params, .params_size = f->param_bytes, .dyn_smem = smem,
                  .ranges = rg, .nranges = 3};
    char err[512];
    bool ok = em_launch(m, &l, err, sizeof err);
    if (!ok) print_error("%dx%dx%d: %s\n", M, N, K, err);
    assert_true(ok);
    double *want = malloc(sizeof(double) * N);
    for (int i = 0; i < M; i++) {
      double big = 0;
      for (int j = 0; j < N; j++) {
        want[j] = 0;
        for (int k = 0; k < K; k++) want[j] += double_of_bf16(a[i * lda + k]) * double_of_bf16(b[k * ldb + j]);
        big = fmax(big, fabs(want[j]));
      }
      for (int j = 0; j < N; j++) {
        double got = double_of_bf16(c[i * ldc + j]);
        if (!(fabs(got - want[j]) <= 1e-2 * big + 1e-6)) { /* NaN fails too */
          print_error("%dx%dx%d: C[%d][%d] = %g, want %g\n", M, N, K, i, j, got, want[j]);
          fail();
        }
      }
      for (int j = N; j < ldc; j++) assert_int_equal(c[i * ldc + j], sentinel); /* nothing outside M x N */
    }
    free(want), free(a), free(b), free(c);
  }
  em_module_free(m);
}

/* mma.sync: a warp with a lane missing deadlocks with a report; the forms
 * exec does not run stay unsupported; bad operands are a parse error. */
static void test_mma_reports(void **state) {
  (void)state;
  static const char head[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                             ".visible .entry k(.param .u32 k_param_0)\n{\n"
                             "  .reg .pred %p<2>;\n  .reg .b32 %r<12>;\n"
                             "  mov.u32 %r0, %tid.x;\n  ld.param.u32 %r1, [k_param_0];\n"
                             "  setp.ge.u32 %p0, %r0, %r1;\n  @%p0 exit;\n";
  char ptx[1024], err[512];
  EmModule *m = NULL;
  /* threads at or past the parameter exit before the mma */
  snprintf(ptx, sizeof ptx, "%s  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%%r2, %%r3, %%r4, %%r5}, "
           "{%%r6, %%r7, %%r8, %%r9}, {%%r10, %%r11}, {%%r2, %%r3, %%r4, %%r5};\n  ret;\n}\n", head);
  bool ok = em_ptx_parse(ptx, strlen(ptx), &m, err, sizeof err);
  if (!ok) print_error("%s\n", err);
  assert_true(ok);
  assert_int_equal(em_find_func(m, "k")->ins[4].opc, EM_MMA);
  uint32_t n = 32;
  EmLaunch l = {.kernel = "k", .grid = {1, 1, 1}, .block = {64, 1, 1}, .params = &n, .params_size = 4};
  ok = em_launch(m, &l, err, sizeof err); /* one full warp at the mma, the other gone */
  if (!ok) print_error("%s\n", err);
  assert_true(ok);
  n = 31; /* lane 31 gone */
  assert_false(em_launch(m, &l, err, sizeof err));
  assert_non_null(strstr(err, "deadlock"));
  assert_non_null(strstr(err, "0xffffffff"));
  assert_non_null(strstr(err, "mma.sync"));
  n = 64;
  l.block[0] = 48; /* a partial warp */
  assert_false(em_launch(m, &l, err, sizeof err));
  assert_non_null(strstr(err, "deadlock"));
  em_module_free(m);
  /* other shapes, accumulator types, modifiers: parsed, not run */
  const char *other[] = {"mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32",
                         "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16",
                         "mma.sync.aligned.m16n8k16.row.col.f32.f16.bf16.f32",
                         "mma.sync.aligned.m16n8k16.row.col.satfinite.f32.bf16.bf16.f32",
                         "mma.sp.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"};
  for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
    snprintf(ptx, sizeof ptx, "%s  %s {%%r2, %%r3, %%r4, %%r5}, {%%r6, %%r7, %%r8, %%r9}, {%%r10, %%r11}, "
             "{%%r2, %%r3, %%r4, %%r5};\n  ret;\n}\n", head, other[i]);
    ok = em_ptx_parse(ptx, strlen(ptx), &m, err, sizeof err);
    if (!ok) print_error("%s: %s\n", other[i], err);
    assert_true(ok);
    assert_int_equal(em_find_func(m, "k")->ins[4].opc, EM_UNSUPPORTED);
    em_module_free(m);
  }
  const char *bad[] = {"{%r2, %r3, %r4, %r5}, {%r6, %r7, %r8, %r9}, {%r10}, {%r2, %r3, %r4, %r5}",
                       "{%r2, %r3, %r4, %r5}, {%r6, %r7, %r8, %r9}, {%r10, %r11}",
                       "{%r2, %r3, %r4, %r5}, {%r6, %r7, %r8, _}, {%r10, %r11}, {%r2, %r3, %r4, %r5}",
                       "{%r2, %r3, %r4, %r5}, %r6, {%r10, %r11}, {%r2, %r3, %r4, %r5}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(ptx, sizeof ptx, "%s  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 %s;\n  ret;\n}\n", head,
             bad[i]);
    m = NULL;
    assert_false(em_ptx_parse(ptx, strlen(ptx), &m, err, sizeof err));
    assert_non_null(strstr(err, "ptx:12:"));
  }
}

/* cvt to bf16x2/f16x2 (matmul's epilogue packs its f32 accumulators so):
 * the first source in the upper half; the directed roundings at 16 bits.
 * x = 1 + 0.84 bf16 units (6.75 f16 units) and FLT_MAX, which only
 * rounding up or to nearest takes to infinity. */
static void test_cvt_16bit(void **state) {
  (void)state;
  static const char ptx[] =
      ".version 8.0\n.target sm_90a\n.address_size 64\n"
      ".visible .entry cv(.param .u64 cv_param_0, .param .f32 cv_param_1, .param .f32 cv_param_2)\n{\n"
      "  .reg .b32 %r<8>;\n  .reg .f32 %f<2>;\n  .reg .b64 %rd<1>;\n  .reg .b16 %rs<4>;\n"
      "  ld.param.u64 %rd0, [cv_param_0];\n  ld.param.f32 %f0, [cv_param_1];\n  ld.param.f32 %f1, [cv_param_2];\n"
      "  cvt.rn.bf16x2.f32 %r0, %f0, %f1;\n  cvt.rz.bf16x2.f32 %r1, %f0, %f1;\n"
      "  cvt.rn.f16x2.f32 %r2, %f0, %f1;\n  cvt.rz.f16x2.f32 %r3, %f0, %f1;\n"
      "  cvt.rm.bf16.f32 %rs0, %f0;\n  cvt.rp.bf16.f32 %rs1, %f1;\n"
      "  cvt.rm.bf16.f32 %rs2, %f1;\n  cvt.rp.bf16.f32 %rs3, %f0;\n"
      "  mov.b32 %r4, {%rs0, %rs1};\n  mov.b32 %r5, {%rs2, %rs3};\n"
      "  st.global.v4.b32 [%rd0], {%r0, %r1, %r2, %r3};\n  st.global.v2.b32 [%rd0+16], {%r4, %r5};\n"
      "  ret;\n}\n";
  char err[512];
  EmModule *m = NULL;
  bool ok = em_ptx_parse(ptx, strlen(ptx), &m, err, sizeof err);
  if (!ok) print_error("%s\n", err);
  assert_true(ok);
  const struct { float x; uint32_t want[6]; } cases[] = {
      {1.0f + 3.0f / 512 + 3.0f / 4096,
       {0x3f81bf81u, 0x3f80bf80u, 0x3c07bc07u, 0x3c06bc06u, 0xbf803f80u, 0x3f81bf81u}},
      {3.40282347e38f, {0x7f80ff80u, 0x7f7fff7fu, 0x7c00fc00u, 0x7bfffbffu, 0xff7f7f7fu, 0x7f80ff80u}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    uint32_t out[6] = {0};
    struct { uint64_t out; float a, b; } p = {(uint64_t)(uintptr_t)out, cases[i].x, -cases[i].x};
    EmLaunch l = {.kernel = "cv", .grid = {1, 1, 1}, .block = {1, 1, 1}, .params = &p, .params_size = sizeof p};
    ok = em_launch(m, &l, err, sizeof err);
    if (!ok) print_error("%s\n", err);
    assert_true(ok);
    for (int j = 0; j < 6; j++) {
      if (out[j] != cases[i].want[j]) print_error("x=%g word %d: 0x%08x, want 0x%08x\n", cases[i].x, j, out[j], cases[i].want[j]);
      assert_int_equal(out[j], cases[i].want[j]);
    }
  }
  em_module_free(m);
}

/* layernorm(x, y, w, b, mean, rstd, n_cols, stride, eps): rows walked in
 * 1024-wide chunks (so 2500 columns take three), rsqrt, one thread's
 * scalar stores of the row's mean and 1/std. */
static void test_layernorm(void **state) {
  (void)state;
  EmModule *m = module_of("layernorm", NULL);
  const EmFunc *f = em_find_func(m, "layernorm");
  assert_non_null(f);
  assert_int_equal(f->nparams, 9);
  int rows = 2, cols[] = {1, 33, 1024, 2500};
  uint64_t seed = 5;
  for (size_t k = 0; k < sizeof cols / sizeof *cols; k++) {
    int nc = cols[k], stride = nc + 1;
    size_t nx = (size_t)rows * stride;
    float *x = malloc(sizeof(float) * nx), *y = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nc),
          *b = malloc(sizeof(float) * nc), mean[2] = {-99, -99}, rstd[2] = {-99, -99};
    for (size_t i = 0; i < nx; i++) x[i] = 3.0f * frand(&seed) + 1.0f, y[i] = -99.0f;
    for (int i = 0; i < nc; i++) w[i] = frand(&seed), b[i] = frand(&seed);
    uint8_t params[64] = {0};
    uint64_t ptrs[6] = {(uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)y, (uint64_t)(uintptr_t)w,
                        (uint64_t)(uintptr_t)b, (uint64_t)(uintptr_t)mean, (uint64_t)(uintptr_t)rstd};
    for (int i = 0; i < 6; i++) memcpy(params + f->params[i].offset, &ptrs[i], 8);
    int32_t ints[2] = {nc, stride};
    float eps = 1e-5f;
    memcpy(params + f->params[6].offset, &ints[0], 4);
    memcpy(params + f->params[7].offset, &ints[1], 4);
    memcpy(params + f->params[8].offset, &eps, 4);
    EmRange rg[6] = {{x, sizeof(float) * nx}, {y, sizeof(float) * nx}, {w, sizeof(float) * nc},
                     {b, sizeof(float) * nc}, {mean, sizeof mean}, {rstd, sizeof rstd}};
    EmLaunch l = {.kernel = "layernorm", .grid = {(unsigned)rows, 1, 1}, .block = {128, 1, 1}, .params = params,
                  .params_size = f->param_bytes, .ranges = rg, .nranges = 6, .dyn_smem = last_smem};
    char err[512];
    bool ok = em_launch(m, &l, err, sizeof err);
    if (!ok) print_error("cols=%d: %s\n", nc, err);
    assert_true(ok);
    for (int r = 0; r < rows; r++) {
      double mu = 0, var = 0;
      for (int c = 0; c < nc; c++) mu += x[r * stride + c];
      mu /= nc;
      for (int c = 0; c < nc; c++) var += (x[r * stride + c] - mu) * (x[r * stride + c] - mu);
      double rs = 1.0 / sqrt(var / nc + 1e-5);
      assert_true(fabs(mean[r] - mu) <= 1e-5 * (fabs(mu) + 1));
      assert_true(fabs(rstd[r] - rs) <= 1e-4 * rs);
      for (int c = 0; c < nc; c++) {
        double want = (x[r * stride + c] - mu) * rs * w[c] + b[c], got = y[r * stride + c];
        if (fabs(got - want) > 1e-4 * (fabs(want) + 1)) {
          print_error("cols=%d row %d col %d: %g, want %g\n", nc, r, c, got, want);
          fail();
        }
      }
      assert_true(y[r * stride + nc] == -99.0f); /* the padding column untouched */
    }
    free(x), free(y), free(w), free(b);
  }
  em_module_free(m);
}

/* A hand-written kernel k(out) on `block` threads: true when it ran; out
 * is 16 u64 words prefilled with 0xab.. */
static bool run_k(const char *body, unsigned block, uint64_t *out, char *err, size_t errlen) {
  char text[4096];
  snprintf(text, sizeof text,
           ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n"
           ".reg .b64 %%rd<8>;\n.reg .b32 %%r<8>;\n.reg .b16 %%rs<4>;\n.reg .pred %%p<8>;\n"
           "ld.param.u64 %%rd1, [out];\n%s\nret;\n}\n", body);
  EmModule *m = NULL;
  if (!em_ptx_parse(text, strlen(text), &m, err, errlen)) return false;
  memset(out, 0xab, 16 * sizeof *out);
  struct { uint64_t p; } p = {(uint64_t)(uintptr_t)out};
  EmRange rg = {out, 16 * sizeof *out};
  EmLaunch l = {.kernel = "k", .grid = {1, 1, 1}, .block = {block, 1, 1}, .params = &p, .params_size = sizeof p,
                .ranges = &rg, .nranges = 1};
  bool ok = em_launch(m, &l, err, errlen);
  em_module_free(m);
  return ok;
}

/* Semantics a review against the PTX ISA found wrong in the first version
 * (each case failed then). */
static void test_isa_cases(void **state) {
  (void)state;
  uint64_t out[16];
  char err[512];
  /* setp with two destinations: p = (a < b), q = !(a < b) */
  assert_true(run_k("setp.lt.s32 %p3|%p4, 5, 2;\nselp.u64 %rd2, 1, 0, %p3;\nselp.u64 %rd3, 1, 0, %p4;\n"
                    "st.global.u64 [%rd1], %rd2;\nst.global.u64 [%rd1+8], %rd3;", 1, out, err, sizeof err));
  assert_int_equal(out[0], 0);
  assert_int_equal(out[1], 1);
  /* vote.uni: every lane false is uniform */
  assert_true(run_k("setp.ne.s32 %p1, 0, 0;\nvote.sync.uni.pred %p2, %p1, 0xffffffff;\nselp.u64 %rd2, 1, 0, %p2;\n"
                    "st.global.u64 [%rd1], %rd2;", 32, out, err, sizeof err));
  assert_int_equal(out[0], 1);
  /* add.sat.s32 clamps; neg/abs of the minimum wrap (no C overflow: the sanitizer build runs this) */
  assert_true(run_k("add.sat.s32 %r1, 2147483647, 1;\ncvt.u64.u32 %rd2, %r1;\nst.global.u64 [%rd1], %rd2;\n"
                    "mov.b64 %rd2, 0x8000000000000000;\nneg.s64 %rd3, %rd2;\nabs.s64 %rd4, %rd2;\n"
                    "st.global.u64 [%rd1+8], %rd3;\nst.global.u64 [%rd1+16], %rd4;", 1, out, err, sizeof err));
  assert_int_equal(out[0], 0x7fffffff);
  assert_int_equal(out[1], 0x8000000000000000ull);
  assert_int_equal(out[2], 0x8000000000000000ull);
  /* shf (funnel shift of {b:a}; LLVM's signed division by a power of two of a shifted value):
   * .l.wrap by 36 = by 4, .r.wrap by 4, .l.clamp by 40 = by 32 (a), .r.clamp by 40 = by 32 (b) */
  assert_true(run_k("mov.b32 %r1, 0x89abcdef;\nmov.b32 %r2, 0x01234567;\nshf.l.wrap.b32 %r3, %r1, %r2, 36;\n"
                    "shf.r.wrap.b32 %r4, %r1, %r2, 4;\nshf.l.clamp.b32 %r5, %r1, %r2, 40;\n"
                    "shf.r.clamp.b32 %r6, %r1, %r2, 40;\nst.global.v4.b32 [%rd1], {%r3, %r4, %r5, %r6};", 1, out,
                    err, sizeof err));
  assert_int_equal(out[0], 0x789abcdeull << 32 | 0x12345678);
  assert_int_equal(out[1], 0x01234567ull << 32 | 0x89abcdef);
  /* red.global.add.v4.f32 (a row of partial sums, 16 bytes at once) from two threads */
  assert_true(run_k("mov.u32 %r5, %tid.x;\nsetp.eq.u32 %p1, %r5, 0;\nmov.b64 %rd2, 0;\n"
                    "@%p1 st.global.v2.b64 [%rd1+64], {%rd2, %rd2};\nbar.sync 0;\n"
                    "mov.b32 %r1, 0f3F800000;\nmov.b32 %r2, 0f40000000;\nmov.b32 %r3, 0f40400000;\n"
                    "mov.b32 %r4, 0f40800000;\nred.global.add.v4.f32 [%rd1+64], {%r1, %r2, %r3, %r4};", 2, out, err,
                    sizeof err));
  assert_int_equal(out[8], 0x40800000ull << 32 | 0x40000000);
  assert_int_equal(out[9], 0x41000000ull << 32 | 0x40C00000);
  /* float -> 64-bit integer saturates (1e19, 1e20 as f32) */
  assert_true(run_k("cvt.rzi.s64.f32 %rd2, 0f5F0AC723;\ncvt.rzi.u64.f32 %rd3, 0f60AD78EC;\n"
                    "st.global.u64 [%rd1], %rd2;\nst.global.u64 [%rd1+8], %rd3;", 1, out, err, sizeof err));
  assert_int_equal(out[0], 0x7fffffffffffffffull);
  assert_int_equal(out[1], ~0ull);
  /* a signed load into a wider register is sign-extended; mul.wide.s16 writes 32 bits */
  assert_true(run_k("st.global.u32 [%rd1+64], 0xffffffff;\nld.global.s32 %rd2, [%rd1+64];\n"
                    "st.global.u64 [%rd1], %rd2;\nmul.wide.s16 %r2, -1, 1;\nmul.wide.u32 %rd3, %r2, 2;\n"
                    "st.global.u64 [%rd1+8], %rd3;", 1, out, err, sizeof err));
  assert_int_equal(out[0], ~0ull);
  assert_int_equal(out[1], 0x1fffffffeull);
  /* conversions round once from the exact source: a 64-bit integer to f32,
   * to f64 toward zero, an f64 to f16 (1 + 2^-11 + 2^-30: through f32 it would tie and round to even) */
  assert_true(run_k("cvt.rn.f32.u64 %r1, 0x8000008000000001;\ncvt.u64.u32 %rd2, %r1;\nst.global.u64 [%rd1], %rd2;\n"
                    "cvt.rz.f64.s64 %rd3, 9007199254740995;\nst.global.u64 [%rd1+8], %rd3;\n"
                    "mov.b64 %rd4, 0x3FF0020000400000;\ncvt.rn.f16.f64 %rs1, %rd4;\ncvt.u64.u16 %rd5, %rs1;\n"
                    "st.global.u64 [%rd1+16], %rd5;", 1, out, err, sizeof err));
  assert_int_equal(out[0], 0x5f000001);
  assert_int_equal(out[1], 0x4340000000000001ull); /* 2^53 + 2 */
  assert_int_equal(out[2], 0x3c01);
  /* 16-bit float arithmetic, rounded once to nearest even: bf16 1.5 * 3 and 1.5 + 2^-8 (a tie: 1.5),
   * 1.5 + 2^-7 packed with 2 * 0.5; f16 fma 1 * 2^-11 + 1 (a tie: 1) and 1 + 2^-10; neg.bf16x2 */
  assert_true(run_k("mov.b32 %r1, 0x3fc03fc0;\nmov.b32 %r2, 0x3b804040;\nmul.bf16x2 %r3, %r1, %r2;\n"
                    "add.bf16x2 %r4, %r1, %r2;\nmov.b32 %r5, 0x3c003f00;\nadd.bf16x2 %r6, %r1, %r5;\n"
                    "mov.b16 %rs1, 0x3c00;\nmov.b16 %rs2, 0x1000;\nfma.rn.f16 %rs3, %rs1, %rs2, %rs1;\n"
                    "mov.b16 %rs2, 0x1400;\nfma.rn.f16 %rs0, %rs1, %rs2, %rs1;\nmov.b32 %r7, {%rs3, %rs0};\n"
                    "neg.bf16x2 %r1, %r2;\n"
                    "st.global.v4.b32 [%rd1], {%r3, %r4, %r6, %r7};\nst.global.b32 [%rd1+16], %r1;", 1, out, err,
                    sizeof err));
  uint32_t w[5];
  memcpy(w, out, sizeof w);
  assert_int_equal(w[0], 0x3bc04090u); /* hi 1.5 * 2^-8 = 0x3bc0; lo 1.5 * 3 = 4.5 = 0x4090 */
  assert_int_equal(w[1], 0x3fc04090u); /* hi 1.5 + 2^-8 ties to 1.5 (even); lo 1.5 + 3 = 4.5 */
  assert_int_equal(w[2], 0x3fc14000u); /* hi 1.5 + 2^-7 = 0x3fc1; lo 1.5 + 0.5 = 2 */
  assert_int_equal(w[3], 0x3c013c00u); /* lo: 1 + 2^-11 ties to 1; hi: 1 + 2^-10 = 0x3c01 */
  assert_int_equal(w[4], 0xbb80c040u);
  /* 16-bit compares, as the f32 values they are: bf16 1.5 < 2, f16 1 < 1 (false), bf16 NaN >= 0 (false),
   * f16 -0 == +0 */
  assert_true(run_k("mov.b16 %rs1, 0x3fc0;\nmov.b16 %rs2, 0x4000;\nsetp.lt.bf16 %p1, %rs1, %rs2;\n"
                    "mov.b16 %rs3, 0x3c00;\nsetp.lt.f16 %p2, %rs3, %rs3;\nmov.b16 %rs1, 0x7fc0;\nmov.b16 %rs2, 0;\n"
                    "setp.ge.bf16 %p3, %rs1, %rs2;\nmov.b16 %rs3, 0x8000;\nsetp.eq.f16 %p4, %rs3, %rs2;\n"
                    "selp.u64 %rd2, 1, 0, %p1;\nselp.u64 %rd3, 1, 0, %p2;\nselp.u64 %rd4, 1, 0, %p3;\n"
                    "selp.u64 %rd5, 1, 0, %p4;\nst.global.v2.u64 [%rd1], {%rd2, %rd3};\n"
                    "st.global.v2.u64 [%rd1+16], {%rd4, %rd5};", 1, out, err, sizeof err));
  assert_int_equal(out[0], 1);
  assert_int_equal(out[1], 0);
  assert_int_equal(out[2], 0);
  assert_int_equal(out[3], 1);
  /* sm_100's packed f32 pairs (LLVM emits them for f32 arithmetic there): each half as its f32
   * instruction, the low word the first element; fma rounds once */
  assert_true(run_k("mov.b32 %r1, 0f3FC00000;\nmov.b32 %r2, 0f40400000;\nmov.b64 %rd2, {%r1, %r2};\n"
                    "mov.b32 %r3, 0f40000000;\nmov.b32 %r4, 0fBF000000;\nmov.b64 %rd3, {%r3, %r4};\n"
                    "mul.f32x2 %rd4, %rd2, %rd3;\nadd.rn.f32x2 %rd5, %rd2, %rd3;\nsub.f32x2 %rd6, %rd2, %rd3;\n"
                    "st.global.v2.u64 [%rd1], {%rd4, %rd5};\n"
                    "mov.b32 %r5, 0f3F800800;\nmov.b32 %r6, 0f33800000;\nmov.b64 %rd7, {%r5, %r6};\n"
                    "mov.b32 %r7, 0fBF800000;\nmov.b64 %rd2, {%r5, %r7};\n"
                    "mov.b32 %r1, 0fBF801000;\nmov.b32 %r2, 0fBF000000;\nmov.b64 %rd3, {%r1, %r2};\n"
                    "fma.rn.f32x2 %rd4, %rd7, %rd2, %rd3;\n"
                    "st.global.v2.u64 [%rd1+16], {%rd6, %rd4};",
                    1, out, err, sizeof err));
  assert_int_equal(out[0], 0xBFC0000040400000ull); /* 1.5 * 2 = 3; 3 * -0.5 = -1.5 */
  assert_int_equal(out[1], 0x4020000040600000ull); /* 3.5; 2.5 */
  assert_int_equal(out[2], 0x40600000BF000000ull); /* -0.5; 3.5 */
  /* lo: (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24 (rounding the product first would give 0); hi: 2^-24 * -1 - 0.5 */
  assert_int_equal(out[3], 0xBF00000133800000ull);
  /* sm_100's mixed precision (16-bit sources before the f32 one): f16 (1 + 2^-10)^2 - 1 in one rounding,
   * bf16 1.5 + 0.25, f16 2 - 0.5 */
  assert_true(run_k("mov.b16 %rs1, 0x3c01;\nmov.b32 %r1, 0fBF800000;\nfma.rn.f32.f16 %r2, %rs1, %rs1, %r1;\n"
                    "mov.b16 %rs2, 0x3fc0;\nmov.b32 %r3, 0f3E800000;\nadd.f32.bf16 %r4, %rs2, %r3;\n"
                    "mov.b16 %rs3, 0x4000;\nmov.b32 %r5, 0f3F000000;\nsub.rn.f32.f16 %r6, %rs3, %r5;\n"
                    "mov.b64 %rd2, {%r2, %r4};\ncvt.u64.u32 %rd3, %r6;\nst.global.v2.u64 [%rd1], {%rd2, %rd3};",
                    1, out, err, sizeof err));
  assert_int_equal(out[0], 0x3FE000003B001000ull); /* 1.75; 2^-9 + 2^-20 */
  assert_int_equal(out[1], 0x3FC00000ull);
  /* sm_100's three-input min/max.f32 (LLVM folds a max reduction into them): max(1, 3, 2),
   * min.NaN with a NaN third */
  assert_true(run_k("max.f32 %r1, 0f3F800000, 0f40400000, 0f40000000;\n"
                    "min.NaN.f32 %r2, 0f3F800000, 0f40400000, 0f7FC00000;\nmov.b64 %rd2, {%r1, %r2};\n"
                    "st.global.u64 [%rd1], %rd2;", 1, out, err, sizeof err));
  assert_int_equal(out[0] & 0xffffffffu, 0x40400000u);
  uint32_t hi = (uint32_t)(out[0] >> 32);
  float fhi;
  memcpy(&fhi, &hi, 4);
  assert_true(isnan(fhi));
  /* immediates in a vector operand (LLVM's stores of a constant tile: {0, 0, 0, 0}, 0f... floats),
   * mixed with registers, and in a pack; min/max.relu.s32 clamp at 0 */
  assert_true(run_k("mov.b32 %r1, 7;\nst.global.v4.b32 [%rd1], {0f3F800000, %r1, 0f3F800000, 0f3F800000};\n"
                    "mov.b64 %rd2, {%r1, 5};\nst.global.v2.b32 [%rd1+16], {-2, -2};\nst.global.u64 [%rd1+24], %rd2;\n"
                    "min.relu.s32 %r2, -5, 3;\nmax.relu.s32 %r3, -5, -3;\nmin.relu.s32 %r4, 9, 4;\n"
                    "st.global.v4.b32 [%rd1+32], {%r2, %r3, %r4, 0};",
                    1, out, err, sizeof err));
  assert_int_equal(out[0], 0x000000073F800000ull);
  assert_int_equal(out[1], 0x3F8000003F800000ull);
  assert_int_equal(out[2], 0xFFFFFFFEFFFFFFFEull);
  assert_int_equal(out[3], 0x0000000500000007ull);
  assert_int_equal(out[4], 0); /* min.relu(-5, 3) = 0; max.relu(-5, -3) = 0 */
  assert_int_equal(out[5], 4);
  /* refused with a report rather than run wrong (or out of bounds) */
  const char *bad[][2] = {
      {"ld.global.u32 %r1, %ntid.x;", "not a memory address"},
      {"ld.global.v4.b32 {%r1, %r2}, [%rd1];", "does not match .v4"},
      {"shfl.sync.idx.b32;", "operands"},
      {"mov.b32 %r1, 0x3c003c00;\nsetp.lt.f16x2 %p1|%p2, %r1, %r1;", "16-bit float arithmetic"},
      {"mov.b16 %rs1, 0x3c00;\nadd.sat.f16 %rs2, %rs1, %rs1;", "16-bit float arithmetic"},
      {"mul.wide.s64 %rd3, 4, 4;", ".wide on a 64-bit type"},
      {"mov.b64 %rd2, 0;\nadd.sat.f32x2 %rd3, %rd2, %rd2;", "f32x2"},
      {"mov.b16 %rs1, 0;\nfma.rn.sat.f32.f16 %r2, %rs1, %rs1, %r1;", "mixed-precision"},
      {"mov.b16 %rs1, 0;\nmul.f32.f16 %r2, %rs1, %r1;", "cannot run this"},
      {"add.f32 %r1, 0f3F800000, 0f3F800000, 0f3F800000;", "add with 4 operands"},
      {"st.param.u64 [out], %rd1;", "parameters"},
      {"st.global.v2.b32 [%rd1], {1, 2};", "cannot run this instruction yet"}, /* two different immediates */
      {"ld.global.v2.b32 {%r1, 0}, [%rd1];", "into an immediate"},
      {"red.global.add.v4.u32 [%rd1], {%r1, %r1, %r1, %r1};", "unsupported vector atomic"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    bool ok = run_k(bad[i][0], 1, out, err, sizeof err);
    if (ok || !strstr(err, bad[i][1])) print_error("'%s': %s (want '%s')\n", bad[i][0], ok ? "ran" : err, bad[i][1]);
    assert_false(ok);
    assert_non_null(strstr(err, bad[i][1]));
  }
}

/* An instruction the emulator cannot run yet stops the launch with its
 * name (elect.sync, a TMA load with an L2 cache hint). */
static void test_unsupported_report(void **state) {
  (void)state;
  uint64_t out[16];
  char err[512];
  const char *bad[] = {"elect.sync %r1|%p1, 0xffffffff;", "shf.l.wrap.b64 %rd2, %rd1, %rd1, 3;",
                       "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
                       ".cta_group::2.L2::cache_hint [%rd1], [%rd1, {%r1, %r2}], [%rd1], %rs1, %rd2;"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    bool ok = run_k(bad[i], 32, out, err, sizeof err);
    if (ok || !strstr(err, "cannot run this instruction yet")) print_error("'%s': %s\n", bad[i], ok ? "ran" : err);
    assert_false(ok);
    assert_non_null(strstr(err, "cannot run this instruction yet"));
    assert_non_null(strstr(err, i == 0 ? "elect.sync" : i == 1 ? "shf" : "cache_hint"));
  }
}

/* brx.idx through a .branchtargets table (LLVM's jump table for a switch,
 * as in jfa_bwd_post's accumulator layouts): each thread takes the target
 * its index names (one target listed twice), falling into the table's
 * place skips it, and an index past the table is reported, not run. */
static const char *brx_body(unsigned mod) {
  static char b[1024];
  snprintf(b, sizeof b,
           "mov.u32 %%r1, %%tid.x;\nrem.u32 %%r2, %%r1, %u;\nmov.b64 %%rd2, 0;\n"
           "$L_tab: .branchtargets $L_a, $L_b, $L_a;\nbrx.idx %%r2, $L_tab;\n"
           "$L_a:\nadd.s64 %%rd2, %%rd2, 10;\nbra $L_c;\n$L_b:\nadd.s64 %%rd2, %%rd2, 20;\n"
           "$L_c:\ncvt.u64.u32 %%rd3, %%r1;\nmad.lo.s64 %%rd4, %%rd3, 8, %%rd1;\nst.global.u64 [%%rd4], %%rd2;",
           mod);
  return b;
}

static void test_brx_idx(void **state) {
  (void)state;
  uint64_t out[16];
  char err[512];
  bool ok = run_k(brx_body(3), 6, out, err, sizeof err);
  if (!ok) print_error("%s\n", err);
  assert_true(ok);
  static const uint64_t want[6] = {10, 20, 10, 10, 20, 10};
  for (int i = 0; i < 6; i++) assert_int_equal(out[i], want[i]);
  assert_false(run_k(brx_body(4), 4, out, err, sizeof err)); /* thread 3: index 3 of 3 targets */
  assert_non_null(strstr(err, "outside its table of 3 targets"));
}

/* bar.red (PTX ISA, "bar.red"): every thread of the barrier gets the
 * reduction of their predicates: .popc the count of true ones, .and and
 * .or; a negated predicate operand; with a thread count; a barrier met
 * with bar.red by some threads and bar.sync by others is reported. */
static void test_bar_red(void **state) {
  (void)state;
  uint64_t out[16];
  char err[1024];
  const char *body =
      "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 37;\nbar.red.popc.u32 %r2, 0, %p1;\n"
      "setp.ne.u32 %p2, %r1, 50;\nbar.red.and.pred %p3, 1, %p2;\nbarrier.red.or.pred %p4, 2, 96, !%p2;\n"
      "setp.lt.u32 %p6, %r1, 1000;\nbar.red.and.pred %p5, 3, %p6;\nbar.red.or.pred %p7, 4, !%p6;\n"
      "setp.eq.u32 %p1, %r1, 95;\n@!%p1 bra END;\nst.global.u32 [%rd1], %r2;\n"
      "selp.u32 %r3, 1, 0, %p3;\nst.global.u32 [%rd1+8], %r3;\nselp.u32 %r3, 1, 0, %p4;\nst.global.u32 [%rd1+16], %r3;\n"
      "selp.u32 %r3, 1, 0, %p5;\nst.global.u32 [%rd1+24], %r3;\nselp.u32 %r3, 1, 0, %p7;\nst.global.u32 [%rd1+32], %r3;\n"
      "END:";
  bool ok = run_k(body, 96, out, err, sizeof err);
  if (!ok) print_error("%s\n", err);
  assert_true(ok);
  assert_int_equal((uint32_t)out[0], 37);
  assert_int_equal((uint32_t)out[1], 0);
  assert_int_equal((uint32_t)out[2], 1);
  assert_int_equal((uint32_t)out[3], 1);
  assert_int_equal((uint32_t)out[4], 0);
  const char *mixed = "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bra A;\nbar.sync 4;\nbra END;\n"
                      "A:\nbar.red.popc.u32 %r2, 4, %p1;\nEND:";
  assert_false(run_k(mixed, 64, out, err, sizeof err));
  has(err, "barrier 4: threads meet at it with different reductions", "the report");
  assert_false(run_k("bar.red.popc.pred %p1, 0, %p2;", 32, out, err, sizeof err));
  has(err, "cannot run this instruction yet", "the report");
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
      cmocka_unit_test(test_layernorm),
      cmocka_unit_test(test_isa_cases),
      cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_mma_reports),
      cmocka_unit_test(test_cvt_16bit),
      cmocka_unit_test(test_unsupported_report),
      cmocka_unit_test(test_bar_red),
      cmocka_unit_test(test_brx_idx),
      cmocka_unit_test(test_parse_hostile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_tma.c - TMA descriptors and the metadata that describes them:
 *
 *   - the GEMM example compiled with libtilec to a cubin: the __tile_meta it
 *     carries parses to three tma parameters with the boxes and swizzles of
 *     its `tmabox` lines (and the metadata returned by tilec_result_metadata
 *     is the same text);
 *   - the metadata parser accepts `tmabox` and `multiple` lines and rejects
 *     malformed ones with the line number;
 *   - without a GPU, loading the GEMM cubin gives TILE_ERR_NO_DRIVER or
 *     TILE_ERR_NO_DEVICE (a clean status, not a crash);
 *   - with a GPU (skipped, with a message, when tile_init fails):
 *     tile_tma_desc_2d rejects bad tensors with TILE_ERR_INVALID and a
 *     message naming the parameter and accepts a good one; tile_launch
 *     rejects an integer argument that breaks `multiple_of`.
 */
#include <unistd.h>

#include "testutil.h"
#include "tile/runtime.h"
#include "tile/tilec.h"

#define GEMM_PATH TILE_SRC_DIR "/examples/gemm/gemm.tile"

/* ---- helpers ---- */

static int have_ptxas(void) {
  static int cached = -1;
  if (cached < 0) {
    char buf[256];
    tilec_options o;
    tilec_options_init(&o);
    cached = tilec_assembler_version(&o, buf, sizeof buf) == 0;
  }
  return cached;
}

/* Is there a usable GPU?  (tile_init(0) succeeds; checked once.) */
static int have_gpu(void) {
  static int cached = -1;
  if (cached < 0) cached = tile_init(0) == TILE_OK;
  return cached;
}

#define NEED_PTXAS()                                                    \
  do {                                                                  \
    if (!have_ptxas()) {                                                \
      fprintf(stderr, "[  SKIP    ] no ptxas: cubin test skipped\n"); \
      skip();                                                           \
    }                                                                   \
  } while (0)

#define NEED_GPU()                                                              \
  do {                                                                          \
    if (!have_gpu()) {                                                          \
      fprintf(stderr, "[  SKIP    ] no GPU (%s): GPU test skipped\n",         \
              tile_last_error());                                               \
      skip();                                                                   \
    }                                                                           \
  } while (0)

typedef struct Compiled {
  void *cubin; /* malloc'ed */
  size_t size;
  char *meta;  /* tilec_result_metadata, malloc'ed */
  char *diags;
} Compiled;

static void compiled_free(Compiled *c) {
  free(c->cubin);
  free(c->meta);
  free(c->diags);
  memset(c, 0, sizeof *c);
}

/* Compile a file (path) or a source string (src != NULL) to a cubin for
 * `arch`.  Returns the tilec status; on TILEC_OK, c holds the cubin. */
static tilec_status compile(const char *path, const char *src, const char *arch, Compiled *c) {
  memset(c, 0, sizeof *c);
  tilec_options o;
  tilec_options_init(&o);
  o.arch = arch;
  o.emit = TILEC_EMIT_CUBIN;
  tilec_result *r = NULL;
  tilec_status st = src ? tilec_compile(path, src, strlen(src), &o, &r) : tilec_compile_file(path, &o, &r);
  assert_non_null(r);
  c->diags = strdup(tilec_result_diagnostics(r));
  if (st == TILEC_OK) {
    size_t len = 0;
    const void *out = tilec_result_output(r, &len);
    assert_non_null(out);
    assert_true(len > 64);
    c->cubin = malloc(len);
    assert_non_null(c->cubin);
    memcpy(c->cubin, out, len);
    c->size = len;
    const char *m = tilec_result_metadata(r);
    assert_non_null(m);
    c->meta = strdup(m);
  } else {
    fprintf(stderr, "%s", c->diags);
  }
  tilec_result_free(r);
  return st;
}

static void compile_gemm(const char *arch, Compiled *c) {
  tilec_status st = compile(GEMM_PATH, NULL, arch, c);
  assert_int_equal(st, TILEC_OK);
}

static tile_meta *parse(const char *text, char *err, size_t cap) {
  return tile_meta_parse(text, strlen(text), err, cap);
}

/* Parsing must fail with an error containing both substrings. */
static void expect_parse_error(const char *text, const char *want1, const char *want2) {
  char err[512] = "";
  tile_meta *m = parse(text, err, sizeof err);
  if (m || !strstr(err, want1) || (want2 && !strstr(err, want2))) {
    fprintf(stderr, "text:\n%s\nerror: '%s'\nwanted: '%s' '%s'\n", text, err, want1, want2 ? want2 : "");
    tile_meta_free(m);
    fail();
  }
}

static const tile_param_info *find_param(const tile_kernel_info *k, const char *name) {
  for (int i = 0; i < k->nparams; i++)
    if (!strcmp(k->params[i].name, name)) return &k->params[i];
  return NULL;
}

static int param_index(const tile_kernel_info *k, const char *name) {
  for (int i = 0; i < k->nparams; i++)
    if (!strcmp(k->params[i].name, name)) return i;
  return -1;
}

static void expect_tma(const tile_kernel_info *k, const char *name, int rows, int cols, int swizzle) {
  const tile_param_info *p = find_param(k, name);
  assert_non_null(p);
  assert_int_equal(p->kind, TILE_PARAM_TMA);
  assert_string_equal(p->dtype, "bf16");
  assert_int_equal(p->size, 128);
  assert_int_equal(p->align, 64);
  assert_int_equal(p->box[0], rows);
  assert_int_equal(p->box[1], cols);
  assert_int_equal(p->swizzle, swizzle);
}

static void expect_i32(const tile_kernel_info *k, const char *name, int multiple) {
  const tile_param_info *p = find_param(k, name);
  assert_non_null(p);
  assert_int_equal(p->kind, TILE_PARAM_SCALAR);
  assert_string_equal(p->dtype, "i32");
  assert_int_equal(p->size, 4);
  assert_int_equal(p->multiple, multiple);
  assert_int_equal(p->box[0], 0);
  assert_int_equal(p->box[1], 0);
}

/* The GEMM's kernel as its metadata describes it. */
static void expect_gemm_kernel(const tile_kernel_info *k) {
  assert_string_equal(k->name, "gemm");
  assert_int_equal(k->threads, 384); /* warps(12) */
  assert_int_equal(k->smem_bytes, 230400);
  assert_int_equal(k->cluster[0], 1);
  assert_int_equal(k->cluster[1], 1);
  assert_int_equal(k->cluster[2], 1);
  assert_int_equal(k->nparams, 6); /* a, b, c, M, N, K (STAGES and GROUP are constants) */
  assert_int_equal(param_index(k, "a"), 0);
  assert_int_equal(param_index(k, "b"), 1);
  assert_int_equal(param_index(k, "c"), 2);
  assert_int_equal(param_index(k, "M"), 3);
  expect_tma(k, "a", 128, 64, 128);
  expect_tma(k, "b", 256, 64, 128);
  expect_tma(k, "c", 64, 64, 128);
  expect_i32(k, "M", 1);
  expect_i32(k, "N", 1);
  expect_i32(k, "K", 1);
}

/* ---- the GEMM's metadata (no GPU) ---- */

static void test_gemm_meta_text(void **state) {
  (void)state;
  NEED_PTXAS();
  Compiled c;
  compile_gemm("sm_90a", &c);
  assert_non_null(strstr(c.meta, "\ntmabox a 128 64 swizzle 128\n"));
  assert_non_null(strstr(c.meta, "\ntmabox b 256 64 swizzle 128\n"));
  assert_non_null(strstr(c.meta, "\ntmabox c 64 64 swizzle 128\n"));
  assert_non_null(strstr(c.meta, "\nparam a tma bf16 128\n"));
  assert_non_null(strstr(c.meta, "\nsmem 230400\n"));
  /* no `multiple` lines: M, N, K promise nothing */
  assert_null(strstr(c.meta, "\nmultiple "));
  /* the text embedded in the cubin is the same */
  size_t len = 0;
  const char *text = tile_cubin_find_meta(c.cubin, c.size, &len);
  assert_non_null(text);
  assert_true(text >= (const char *)c.cubin && text + len <= (const char *)c.cubin + c.size);
  size_t n = strlen(c.meta);
  assert_true(len == n || (len == n + 1 && text[n] == 0));
  assert_memory_equal(text, c.meta, n);
  compiled_free(&c);
}

static void test_gemm_meta_parse(void **state) {
  (void)state;
  NEED_PTXAS();
  Compiled c;
  compile_gemm("sm_90a", &c);
  size_t len = 0;
  const char *text = tile_cubin_find_meta(c.cubin, c.size, &len);
  assert_non_null(text);
  char err[512] = "";
  tile_meta *m = tile_meta_parse(text, len, err, sizeof err);
  if (!m) fprintf(stderr, "parse error: %s\n", err);
  assert_non_null(m);
  assert_int_equal(tile_meta_num_kernels(m), 1);
  expect_gemm_kernel(tile_meta_kernel(m, 0));
  tile_meta_free(m);
  compiled_free(&c);
}

/* multiple_of(16) becomes a `multiple` line and the param's `multiple`. */
static const char FILL_SRC[] = "kernel fill(x: *i32, n: i32 multiple_of(16)) {\n"
                               "    let i = program_id(0) * 128 + arange(0, 128);\n"
                               "    store(x + i, i, i < n);\n"
                               "}\n";

static void test_multiple_of_meta(void **state) {
  (void)state;
  NEED_PTXAS();
  Compiled c;
  assert_int_equal(compile("fill.tile", FILL_SRC, "sm_90a", &c), TILEC_OK);
  assert_non_null(strstr(c.meta, "\nmultiple n 16\n"));
  size_t len = 0;
  const char *text = tile_cubin_find_meta(c.cubin, c.size, &len);
  assert_non_null(text);
  char err[512] = "";
  tile_meta *m = tile_meta_parse(text, len, err, sizeof err);
  assert_non_null(m);
  const tile_kernel_info *k = tile_meta_kernel(m, 0);
  assert_string_equal(k->name, "fill");
  assert_int_equal(k->nparams, 2);
  expect_i32(k, "n", 16);
  assert_int_equal(k->params[0].kind, TILE_PARAM_PTR);
  assert_int_equal(k->params[0].multiple, 1);
  tile_meta_free(m);
  compiled_free(&c);
}

/* ---- the metadata parser: tmabox and multiple ---- */

#define HEAD "tile-meta 1\narch sm_90a\nkernel k\nthreads 128\nsmem 0\ncluster 1 1 1\n"

static void test_meta_tmabox_valid(void **state) {
  (void)state;
  static const char text[] = HEAD "param a tma bf16 128\n"
                                  "tmabox a 128 64 swizzle 128\n"
                                  "param b tma f32 128\n"
                                  "tmabox b 256 8 swizzle 32\n"
                                  "param c tma u8 128\n"
                                  "tmabox c 1 16 swizzle 0\n"
                                  "param d tma f16 128\n" /* no box: not built from this metadata */
                                  "param n scalar i32 4\n"
                                  "multiple n 16\n"
                                  "param m scalar i64 8\n"
                                  "multiple m 1048576\n"
                                  "param x ptr f32 16\n"
                                  "end\n";
  char err[512] = "";
  tile_meta *m = parse(text, err, sizeof err);
  if (!m) fprintf(stderr, "parse error: %s\n", err);
  assert_non_null(m);
  const tile_kernel_info *k = tile_meta_kernel(m, 0);
  assert_int_equal(k->nparams, 7);
  const tile_param_info *p = k->params;
  assert_int_equal(p[0].kind, TILE_PARAM_TMA);
  assert_int_equal(p[0].box[0], 128);
  assert_int_equal(p[0].box[1], 64);
  assert_int_equal(p[0].swizzle, 128);
  assert_int_equal(p[1].box[0], 256);
  assert_int_equal(p[1].box[1], 8);
  assert_int_equal(p[1].swizzle, 32);
  assert_int_equal(p[2].box[0], 1);
  assert_int_equal(p[2].box[1], 16);
  assert_int_equal(p[2].swizzle, 0);
  assert_int_equal(p[3].kind, TILE_PARAM_TMA);
  assert_int_equal(p[3].box[0], 0);
  assert_int_equal(p[3].box[1], 0);
  assert_int_equal(p[4].multiple, 16);
  assert_int_equal(p[5].multiple, 1048576);
  assert_int_equal(p[6].multiple, 1);
  tile_meta_free(m);
}

static void test_meta_tmabox_errors(void **state) {
  (void)state;
  /* HEAD is 6 lines: the param is line 7, the tmabox line 8 */
  expect_parse_error(HEAD "param a tma bf16 128\ntmabox a 128 64 swizzle\nend\n", "line 8:",
                     "tmabox NAME ROWS COLS swizzle S");
  expect_parse_error(HEAD "param a tma bf16 128\ntmabox a 128 64 swizzle 128 7\nend\n", "line 8:",
                     "tmabox NAME ROWS COLS swizzle S");
  expect_parse_error(HEAD "param a tma bf16 128\ntmabox a 128 64\nend\n", "line 8:", "tmabox NAME");
  expect_parse_error(HEAD "param a tma bf16 128\ntmabox z 128 64 swizzle 128\nend\n", "line 8:",
                     "no parameter 'z'");
  /* the box comes after its parameter */
  expect_parse_error(HEAD "tmabox a 128 64 swizzle 128\nparam a tma bf16 128\nend\n", "line 7:",
                     "no parameter 'a'");
  expect_parse_error(HEAD "param n scalar i32 4\ntmabox n 128 64 swizzle 128\nend\n", "line 8:",
                     "'n' is not a tma parameter");
  expect_parse_error(HEAD "param x ptr bf16 16\ntmabox x 128 64 swizzle 128\nend\n", "line 8:",
                     "'x' is not a tma parameter");
  expect_parse_error(HEAD "param a tma bf16 128\ntmabox a 128 64 swizzle 48\nend\n", "line 8:",
                     "swizzle 48 is not 0, 32, 64 or 128");
  expect_parse_error(HEAD "param a tma bf16 128\ntmabox a 128 64 swizzle 256\nend\n", "line 8:", "swizzle");
  expect_parse_error(HEAD "param a tma bf16 128\ntmabox a 128 64 swizzle -1\nend\n", "line 8:", "swizzle");
  expect_parse_error(HEAD "param a tma bf16 128\ntmabox a 0 64 swizzle 128\nend\n", "line 8:", "box rows");
  expect_parse_error(HEAD "param a tma bf16 128\ntmabox a 257 64 swizzle 128\nend\n", "line 8:", "box rows");
  expect_parse_error(HEAD "param a tma bf16 128\ntmabox a 128 0 swizzle 128\nend\n", "line 8:", "box columns");
  expect_parse_error(HEAD "param a tma bf16 128\ntmabox a 128 x64 swizzle 128\nend\n", "line 8:", "box columns");
  /* a tma parameter is 128 bytes */
  expect_parse_error(HEAD "param a tma bf16 64\nend\n", "line 7:", "128 bytes");
  /* tmabox outside a kernel block */
  expect_parse_error("tile-meta 1\ntmabox a 128 64 swizzle 128\n", "line 2:", "outside a kernel");
}

static void test_meta_multiple_errors(void **state) {
  (void)state;
  expect_parse_error(HEAD "param n scalar i32 4\nmultiple n\nend\n", "line 8:", "multiple NAME N");
  expect_parse_error(HEAD "param n scalar i32 4\nmultiple n 16 16\nend\n", "line 8:", "multiple NAME N");
  expect_parse_error(HEAD "param n scalar i32 4\nmultiple q 16\nend\n", "line 8:", "no parameter 'q'");
  expect_parse_error(HEAD "param n scalar i32 4\nmultiple n 0\nend\n", "line 8:", "multiple");
  expect_parse_error(HEAD "param n scalar i32 4\nmultiple n 2097152\nend\n", "line 8:", "multiple");
  expect_parse_error(HEAD "param n scalar i32 4\nmultiple n -16\nend\n", "line 8:", "multiple");
  expect_parse_error(HEAD "param x ptr f32 16\nmultiple x 16\nend\n", "line 8:", "'x' is not an integer scalar");
  expect_parse_error(HEAD "param a tma bf16 128\nmultiple a 16\nend\n", "line 8:", "'a' is not an integer scalar");
}

/* ---- no GPU: a clean status ---- */

static void test_gemm_load_no_gpu(void **state) {
  (void)state;
  NEED_PTXAS();
  tile_status s = tile_init(0);
  if (s == TILE_OK) {
    fprintf(stderr, "[  SKIP    ] a GPU is present: the no-GPU load test does not apply\n");
    skip();
  }
  assert_true(s == TILE_ERR_NO_DRIVER || s == TILE_ERR_NO_DEVICE);
  Compiled c;
  compile_gemm("sm_90a", &c);
  tile_module *m = (tile_module *)1;
  tile_status ls = tile_module_load_data(c.cubin, c.size, &m);
  fprintf(stderr, "    tile_module_load_data(gemm): %s: %s\n", tile_status_name(ls), tile_last_error());
  assert_true(ls == TILE_ERR_NO_DRIVER || ls == TILE_ERR_NO_DEVICE);
  assert_null(m);
  assert_true(strlen(tile_last_error()) > 10);
  /* the same through a file */
  char dir[512], path[600];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  snprintf(path, sizeof path, "%s/gemm.cubin", dir);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(c.cubin, 1, c.size, f), c.size);
  fclose(f);
  m = (tile_module *)1;
  ls = tile_module_load_file(path, &m);
  assert_true(ls == TILE_ERR_NO_DRIVER || ls == TILE_ERR_NO_DEVICE);
  assert_null(m);
  tu_rmtree(dir);
  compiled_free(&c);
}

/* The checks that need no kernel. */
static void test_tma_desc_null(void **state) {
  (void)state;
  tile_tma_desc d;
  assert_int_equal(tile_tma_desc_2d(&d, NULL, 0, 0, 16, 16, 16), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "tile_tma_desc_2d"));
  assert_int_equal(tile_tma_desc_2d(NULL, NULL, 0, 0, 16, 16, 16), TILE_ERR_INVALID);
  assert_int_equal(_Alignof(tile_tma_desc), 64);
  assert_int_equal(sizeof(tile_tma_desc), 128);
}

/* ---- with a GPU ---- */

typedef struct Gpu {
  Compiled c;
  tile_module *mod;
  tile_kernel *k;
  tile_devptr buf;
} Gpu;

/* Load the GEMM on the GPU (an sm_90a device: the GEMM is Hopper-only). */
static int gemm_on_gpu(Gpu *g) {
  memset(g, 0, sizeof *g);
  char arch[32];
  assert_int_equal(tile_device_arch(arch, sizeof arch), TILE_OK);
  if (strcmp(arch, "sm_90a") != 0) {
    fprintf(stderr, "[  SKIP    ] the GEMM needs sm_90a; this GPU is %s\n", arch);
    return 0;
  }
  compile_gemm(arch, &g->c);
  tile_status s = tile_module_load_data(g->c.cubin, g->c.size, &g->mod);
  if (s != TILE_OK) fprintf(stderr, "load: %s\n", tile_last_error());
  assert_int_equal(s, TILE_OK);
  assert_int_equal(tile_module_get_kernel(g->mod, "gemm", &g->k), TILE_OK);
  expect_gemm_kernel(tile_kernel_get_info(g->k));
  assert_int_equal(tile_malloc(&g->buf, 1 << 20), TILE_OK);
  return 1;
}

static void gpu_free(Gpu *g) {
  if (g->buf) tile_free(g->buf);
  tile_module_unload(g->mod);
  compiled_free(&g->c);
}

/* tile_tma_desc_2d must fail with `want` and a message holding both substrings. */
static void expect_desc_error(const tile_kernel *k, int param, tile_devptr base, uint64_t rows, uint64_t cols,
                              uint64_t stride, const char *want1, const char *want2) {
  tile_tma_desc d;
  tile_status s = tile_tma_desc_2d(&d, k, param, base, rows, cols, stride);
  const char *e = tile_last_error();
  if (s != TILE_ERR_INVALID || !strstr(e, want1) || (want2 && !strstr(e, want2))) {
    fprintf(stderr, "tile_tma_desc_2d(param %d, base 0x%llx, %llu x %llu, stride %llu): %s: '%s'\n"
                    "wanted TILE_ERR_INVALID with '%s' '%s'\n",
            param, (unsigned long long)base, (unsigned long long)rows, (unsigned long long)cols,
            (unsigned long long)stride, tile_status_name(s), e, want1, want2 ? want2 : "");
    fail();
  }
}

static void test_gpu_tma_desc(void **state) {
  (void)state;
  NEED_GPU();
  NEED_PTXAS();
  Gpu g;
  if (!gemm_on_gpu(&g)) {
    gpu_free(&g);
    skip();
  }
  const tile_kernel *k = g.k;
  tile_devptr base = g.buf; /* cuMemAlloc: 256-byte aligned */
  /* good: A is 512 x 1024 bf16, B is 256 x 1024, C is 512 x 256 */
  tile_tma_desc d;
  memset(&d, 0xAB, sizeof d);
  tile_status s = tile_tma_desc_2d(&d, k, 0, base, 512, 1024, 1024);
  if (s != TILE_OK) fprintf(stderr, "good descriptor: %s\n", tile_last_error());
  assert_int_equal(s, TILE_OK);
  assert_int_equal(tile_tma_desc_2d(&d, k, 1, base, 256, 1024, 1024), TILE_OK);
  assert_int_equal(tile_tma_desc_2d(&d, k, 2, base, 512, 256, 256), TILE_OK);
  /* a row stride larger than the row (a sub-matrix), a tensor smaller than the box */
  assert_int_equal(tile_tma_desc_2d(&d, k, 0, base, 100, 40, 1024), TILE_OK);
  /* a single row */
  assert_int_equal(tile_tma_desc_2d(&d, k, 0, base, 1, 8, 8), TILE_OK);

  /* misaligned base */
  expect_desc_error(k, 0, base + 8, 512, 1024, 1024, "'a'", "not 16-byte aligned");
  expect_desc_error(k, 1, base + 2, 256, 1024, 1024, "'b'", "16-byte aligned");
  /* row pitch not a multiple of 16 bytes: 1001 bf16 = 2002 bytes */
  expect_desc_error(k, 0, base, 512, 1001, 1001, "'a'", "multiple of 16");
  expect_desc_error(k, 2, base, 512, 256, 260, "'c'", "520 bytes apart");
  /* empty tensors */
  expect_desc_error(k, 0, base, 0, 1024, 1024, "'a'", "0 x 1024");
  expect_desc_error(k, 1, base, 256, 0, 1024, "'b'", "256 x 0");
  /* extents beyond TMA's 2^32 - 1 */
  expect_desc_error(k, 0, base, 1ull << 32, 1024, 1024, "'a'", "2^32-1");
  /* a stride smaller than a row */
  expect_desc_error(k, 0, base, 512, 1024, 512, "'a'", "row stride 512");
  /* not a TMA parameter: M is parameter 3 */
  expect_desc_error(k, 3, base, 512, 1024, 1024, "'M'", "not a TMA descriptor");
  expect_desc_error(k, 5, base, 512, 1024, 1024, "'K'", "not a TMA descriptor");
  /* no such parameter */
  expect_desc_error(k, 6, base, 512, 1024, 1024, "no parameter 6", "'gemm'");
  expect_desc_error(k, -1, base, 512, 1024, 1024, "no parameter -1", NULL);
  expect_desc_error(k, 1000, base, 512, 1024, 1024, "no parameter 1000", NULL);
  /* a good call after the failures still works */
  assert_int_equal(tile_tma_desc_2d(&d, k, 0, base, 512, 1024, 1024), TILE_OK);
  gpu_free(&g);
}

/* tile_launch checks multiple_of before launching. */
static void test_gpu_launch_multiple_of(void **state) {
  (void)state;
  NEED_GPU();
  NEED_PTXAS();
  char arch[32];
  assert_int_equal(tile_device_arch(arch, sizeof arch), TILE_OK);
  Compiled c;
  assert_int_equal(compile("fill.tile", FILL_SRC, arch, &c), TILEC_OK);
  tile_module *mod = NULL;
  tile_kernel *k = NULL;
  assert_int_equal(tile_module_load_data(c.cubin, c.size, &mod), TILE_OK);
  assert_int_equal(tile_module_get_kernel(mod, "fill", &k), TILE_OK);
  assert_int_equal(tile_kernel_get_info(k)->params[1].multiple, 16);
  tile_devptr x = 0;
  assert_int_equal(tile_malloc(&x, 256 * sizeof(int32_t)), TILE_OK);
  int32_t n = 100; /* not a multiple of 16 */
  void *args[2] = {&x, &n};
  tile_status s = tile_launch(k, 2, 1, 1, args, 2, NULL);
  assert_int_equal(s, TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "'n'"));
  assert_non_null(strstr(tile_last_error(), "100"));
  assert_non_null(strstr(tile_last_error(), "multiple of 16"));
  n = -8;
  assert_int_equal(tile_launch(k, 2, 1, 1, args, 2, NULL), TILE_ERR_INVALID);
  /* a multiple launches and runs */
  n = 144;
  s = tile_launch(k, 2, 1, 1, args, 2, NULL);
  if (s != TILE_OK) fprintf(stderr, "launch: %s\n", tile_last_error());
  assert_int_equal(s, TILE_OK);
  assert_int_equal(tile_synchronize(), TILE_OK);
  int32_t host[256];
  assert_int_equal(tile_memcpy_dtoh(host, x, sizeof host), TILE_OK);
  for (int i = 0; i < 144; i++) assert_int_equal(host[i], i);
  n = 0; /* zero is a multiple of everything */
  assert_int_equal(tile_launch(k, 1, 1, 1, args, 2, NULL), TILE_OK);
  assert_int_equal(tile_synchronize(), TILE_OK);
  tile_free(x);
  tile_module_unload(mod);
  compiled_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gemm_meta_text),
      cmocka_unit_test(test_gemm_meta_parse),
      cmocka_unit_test(test_multiple_of_meta),
      cmocka_unit_test(test_meta_tmabox_valid),
      cmocka_unit_test(test_meta_tmabox_errors),
      cmocka_unit_test(test_meta_multiple_errors),
      cmocka_unit_test(test_tma_desc_null),
      cmocka_unit_test(test_gemm_load_no_gpu),
      cmocka_unit_test(test_gpu_tma_desc),
      cmocka_unit_test(test_gpu_launch_multiple_of),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_tma_desc.c - what tile_tma_desc_2d asks the driver to encode, checked
 * field by field against values worked out by hand, without a GPU.
 *
 * The test builds a stand-in libcuda.so.1 (every entry point the runtime
 * looks up: runtime/driver.c's RT_SYM list, read at run time) whose
 * cuTensorMapEncodeTiled writes its arguments into the 128-byte descriptor
 * instead of encoding them, loads it before the runtime does (dlopen of
 * "libcuda.so.1" then finds it by its soname, on a GPU machine too), and
 * loads a cubin whose metadata declares TMA parameters with non-square
 * boxes and elements of 1 to 8 bytes.  For each one the arguments must be
 * what the CUDA driver API documents (cuda.h 13):
 *   data type (UINT8 0, INT32 3, FLOAT16 6, FLOAT32 7, FLOAT64 8, BFLOAT16 9),
 *   rank 2, the global address, globalDim = {cols, rows} (innermost first),
 *   globalStrides = {row pitch in BYTES}, boxDim = {box cols, box rows},
 *   elementStrides = {1, 1}, interleave NONE (0), swizzle NONE/32B/64B/128B
 *   (0/1/2/3) from the metadata, oobFill NONE (0: out-of-bounds elements read
 *   as zero).
 * Rows != cols, box rows != box cols and elements wider than a byte, so a
 * swapped pair or a pitch in elements instead of bytes cannot pass.
 * The cubin needs ptxas: without it the test fails, unless
 * TILE_ALLOW_MISSING_TOOLS=1 (then it is skipped, with a message). */
#include <dlfcn.h>
#include <unistd.h>

#include "testutil.h"
#include "tile/runtime.h"

/* ---- the stand-in driver ------------------------------------------------- */

/* Entry points with behaviour; every other RT_SYM name returns 0 (success). */
static const char FAKE_SRC[] =
    "#include <stdint.h>\n"
    "#include <string.h>\n"
    "static int cur_ctx;\n"
    "static int calls;\n"
    "int cuInit(unsigned f) { (void)f; return 0; }\n"
    "int cuDriverGetVersion(int *v) { *v = 13000; return 0; }\n"
    "int cuGetErrorName(int r, const char **s) { (void)r; *s = \"FAKE_ERROR\"; return 0; }\n"
    "int cuGetErrorString(int r, const char **s) { (void)r; *s = \"stand-in driver\"; return 0; }\n"
    "int cuDeviceGetCount(int *n) { *n = 1; return 0; }\n"
    "int cuDeviceGet(int *d, int o) { *d = o; return 0; }\n"
    "int cuDeviceGetAttribute(int *v, int a, int d) { (void)d; *v = a == 75 ? 9 : a == 76 ? 0 : 1 << 20; return 0; }\n"
    "int cuDevicePrimaryCtxRetain(void **c, int d) { (void)d; *c = &cur_ctx; return 0; }\n"
    "int cuCtxGetCurrent(void **c) { *c = &cur_ctx; return 0; }\n"
    "int cuModuleLoadData(void **m, const void *p) { (void)p; *m = &calls; return 0; }\n"
    "int cuModuleGetFunction(void **f, void *m, const char *n) { (void)m; (void)n; *f = &calls; return 0; }\n"
    "int cuTensorMapEncodeTiled(void *map, int dt, unsigned rank, void *addr, const uint64_t *dims,\n"
    "                           const uint64_t *strides, const unsigned *box, const unsigned *estr,\n"
    "                           int il, int sw, int l2, int oob) {\n"
    "  uint64_t *w = map;\n"
    "  memset(w, 0, 128);\n"
    "  if (rank < 1 || rank > 2) return 1;\n"
    "  w[0] = 0x46414b45; w[1] = (uint64_t)dt; w[2] = rank; w[3] = (uint64_t)(uintptr_t)addr;\n"
    "  for (unsigned i = 0; i < rank; i++) {\n"
    "    w[4 + i] = dims[i]; w[7 + i] = box[i]; w[9 + i] = estr[i];\n"
    "    if (i + 1 < rank) w[6 + i] = strides[i];\n"
    "  }\n"
    "  w[11] = (uint64_t)il; w[12] = (uint64_t)sw; w[13] = (uint64_t)l2; w[14] = (uint64_t)oob;\n"
    "  w[15] = (uint64_t)++calls;\n"
    "  return 0;\n"
    "}\n";

static const char *SPECIAL[] = {"cuInit", "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString",
                                "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetAttribute",
                                "cuDevicePrimaryCtxRetain", "cuCtxGetCurrent", "cuModuleLoadData",
                                "cuModuleGetFunction", "cuTensorMapEncodeTiled"};

static int is_special(const char *name) {
  for (size_t i = 0; i < sizeof SPECIAL / sizeof SPECIAL[0]; i++)
    if (!strcmp(SPECIAL[i], name)) return 1;
  return 0;
}

static char fake_dir[512];
static int fake_ready;
static char fake_error[2048];

/* Write the stand-in's source (stubs for every RT_SYM name of driver.c,
 * preferred and fallback), build it and load it. */
static int build_fake(void) {
  if (tu_tmpdir(fake_dir, sizeof fake_dir) != 0) return snprintf(fake_error, sizeof fake_error, "mkdtemp"), -1;
  char *drv = tu_read_file(TILE_SRC_DIR "/runtime/driver.c", NULL);
  if (!drv) return snprintf(fake_error, sizeof fake_error, "cannot read runtime/driver.c"), -1;
  char src[700];
  snprintf(src, sizeof src, "%s/fake_cuda.c", fake_dir);
  FILE *f = fopen(src, "w");
  if (!f) return free(drv), snprintf(fake_error, sizeof fake_error, "cannot write %s", src), -1;
  fputs(FAKE_SRC, f);
  int nsyms = 0;
  for (const char *p = strstr(drv, "RT_SYM("); p; p = strstr(p + 1, "RT_SYM(")) {
    const char *q = strchr(p, ')');
    for (const char *s = strchr(p, '"'); s && (!q || s < q); s = strchr(s, '"')) { /* each "name" in RT_SYM(...) */
      const char *e = strchr(s + 1, '"');
      if (!e) break;
      char name[128];
      size_t n = (size_t)(e - s - 1);
      if (n > 0 && n < sizeof name) {
        memcpy(name, s + 1, n);
        name[n] = 0;
        if (!strncmp(name, "cu", 2) && !is_special(name)) fprintf(f, "int %s(void) { return 0; }\n", name);
        nsyms++;
      }
      s = e + 1;
    }
  }
  fclose(f);
  free(drv);
  if (nsyms < 30) return snprintf(fake_error, sizeof fake_error, "only %d RT_SYM names in runtime/driver.c", nsyms), -1;
  const char *cc = getenv("CC");
  if (!cc || !*cc) cc = "cc";
  char cmd[1600], lib[600];
  snprintf(lib, sizeof lib, "%s/libcuda.so.1", fake_dir);
  snprintf(cmd, sizeof cmd, "%s -shared -fPIC -Wl,-soname,libcuda.so.1 -o '%s' '%s' 2>&1", cc, lib, src);
  if (system(cmd) != 0) return snprintf(fake_error, sizeof fake_error, "cannot build the stand-in: %s", cmd), -1;
  /* loaded first: the runtime's dlopen("libcuda.so.1") then matches its soname */
  if (!dlopen(lib, RTLD_NOW | RTLD_GLOBAL))
    return snprintf(fake_error, sizeof fake_error, "dlopen %s: %s", lib, dlerror()), -1;
  return 0;
}

/* ---- the cubin ----------------------------------------------------------- */

/* Parameters: a..f TMA descriptors (box rows x cols), then n. */
static const char META[] = "tile-meta 1\narch sm_90a\nkernel k\nthreads 128\nsmem 0\ncluster 1 1 1\n"
                           "param a tma f32 128\ntmabox a 16 32 swizzle 128\n"
                           "param b tma bf16 128\ntmabox b 128 64 swizzle 128\n"
                           "param c tma f16 128\ntmabox c 8 16 swizzle 32\n"
                           "param d tma i32 128\ntmabox d 4 16 swizzle 64\n"
                           "param e tma u8 128\ntmabox e 2 64 swizzle 0\n"
                           "param f tma f64 128\ntmabox f 24 8 swizzle 64\n"
                           "param n scalar i32 4\n"
                           "end\n";

static tile_module *load_module(void) {
  const char *ptxas = tu_ptxas_path();
  if (!ptxas) {
    if (getenv("TILE_ALLOW_MISSING_TOOLS")) {
      print_message("[  SKIP    ] no ptxas (TILE_ALLOW_MISSING_TOOLS is set): TMA descriptor test skipped\n");
      skip();
    }
    fail_msg("no ptxas ($TILE_PTXAS, $CUDA_HOME/bin, /usr/local/cuda/bin, PATH): the TMA descriptor test needs "
             "one for its cubin (set TILE_ALLOW_MISSING_TOOLS=1 to skip)");
  }
  char dir[512], ptx[600], cubin[600], cmd[6000];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  snprintf(ptx, sizeof ptx, "%s/k.ptx", dir);
  snprintf(cubin, sizeof cubin, "%s/k.cubin", dir);
  FILE *f = fopen(ptx, "w");
  assert_non_null(f);
  fprintf(f, ".version 8.0\n.target sm_90a\n.address_size 64\n");
  size_t n = strlen(META) + 1;
  fprintf(f, ".visible .global .align 1 .b8 __tile_meta[%zu] = {", n);
  for (size_t i = 0; i < n; i++) fprintf(f, "%s%u", i ? ", " : "", (unsigned char)META[i]);
  fprintf(f, "};\n.visible .entry k()\n{\n  ret;\n}\n");
  fclose(f);
  snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90a '%s' -o '%s'", ptxas, ptx, cubin);
  int rc = system(cmd);
  size_t size = 0;
  char *data = rc == 0 ? tu_read_file(cubin, &size) : NULL;
  tu_rmtree(dir);
  if (!data) fail_msg("ptxas failed: %s", cmd);
  tile_module *m = NULL;
  tile_status st = tile_module_load_data(data, size, &m);
  free(data);
  if (st != TILE_OK) fail_msg("tile_module_load_data with the stand-in driver: %s", tile_last_error());
  return m;
}

/* ---- the checks ------------------------------------------------------------ */

typedef struct Enc {
  uint64_t magic, dtype, rank, addr, dims[2], stride, box[2], estr[2], interleave, swizzle, l2, oob, calls;
} Enc;

static Enc decode(const tile_tma_desc *d) {
  uint64_t w[16];
  memcpy(w, d->bytes, sizeof w);
  Enc e = {w[0], w[1], w[2], w[3], {w[4], w[5]}, w[6], {w[7], w[8]}, {w[9], w[10]}, w[11], w[12], w[13], w[14], w[15]};
  return e;
}

typedef struct Case {
  int param;
  const char *what;
  uint64_t rows, cols, row_stride;
  /* expected, by hand */
  uint64_t dtype, dim0, dim1, pitch_bytes, box0, box1, swizzle;
} Case;

static const Case CASES[] = {
    /* f32, 300 x 200, rows 208 elements apart: pitch 832 bytes; box 16 x 32 */
    {0, "a: f32 300 x 200 (row stride 208), box [16, 32], 128B", 300, 200, 208, 7, 200, 300, 832, 32, 16, 3},
    /* bf16, 1000 x 72, rows 80 apart: 160 bytes; box 128 x 64 */
    {1, "b: bf16 1000 x 72 (row stride 80), box [128, 64], 128B", 1000, 72, 80, 9, 72, 1000, 160, 64, 128, 3},
    /* f16, 5 x 24, dense: 48 bytes; box 8 x 16 */
    {2, "c: f16 5 x 24, box [8, 16], 32B", 5, 24, 24, 6, 24, 5, 48, 16, 8, 1},
    /* i32, 3 x 20, dense: 80 bytes; box 4 x 16 */
    {3, "d: i32 3 x 20, box [4, 16], 64B", 3, 20, 20, 3, 20, 3, 80, 16, 4, 2},
    /* u8, 7 x 100, rows 112 apart: 112 bytes; box 2 x 64 */
    {4, "e: u8 7 x 100 (row stride 112), box [2, 64], none", 7, 100, 112, 0, 100, 7, 112, 64, 2, 0},
    /* f64, 9 x 10, dense: 80 bytes; box 24 x 8 */
    {5, "f: f64 9 x 10, box [24, 8], 64B", 9, 10, 10, 8, 10, 9, 80, 8, 24, 2},
};

static tile_module *mod;
static tile_kernel *kern;

static void need_fake(void) {
  if (!fake_ready) fail_msg("the stand-in libcuda: %s", fake_error);
  if (!mod) {
    if (tile_init(0) != TILE_OK) fail_msg("tile_init with the stand-in libcuda: %s", tile_last_error());
    mod = load_module();
    assert_int_equal(tile_module_get_kernel(mod, "k", &kern), TILE_OK);
  }
}

#define EXPECT(field, want)                                                                                   \
  do {                                                                                                        \
    if ((uint64_t)(field) != (uint64_t)(want)) {                                                              \
      print_error("%s: %s = %llu, want %llu\n", c->what, #field, (unsigned long long)(field),                 \
                  (unsigned long long)(want));                                                                \
      bad++;                                                                                                  \
    }                                                                                                         \
  } while (0)

static void test_encode_fields(void **state) {
  (void)state;
  need_fake();
  int bad = 0;
  uint64_t last_calls = 0;
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
    const Case *c = &CASES[i];
    tile_tma_desc d;
    memset(&d, 0xab, sizeof d);
    tile_devptr base = 0x7f1234560000ull + 0x100 * i; /* 16-byte aligned */
    tile_status st = tile_tma_desc_2d(&d, kern, c->param, base, c->rows, c->cols, c->row_stride);
    if (st != TILE_OK) {
      print_error("%s: tile_tma_desc_2d: %s\n", c->what, tile_last_error());
      bad++;
      continue;
    }
    Enc e = decode(&d);
    EXPECT(e.magic, 0x46414b45); /* the stand-in wrote it */
    EXPECT(e.calls, last_calls + 1);
    last_calls = e.calls;
    EXPECT(e.dtype, c->dtype);
    EXPECT(e.rank, 2);
    EXPECT(e.addr, base);
    EXPECT(e.dims[0], c->dim0);
    EXPECT(e.dims[1], c->dim1);
    EXPECT(e.stride, c->pitch_bytes);
    EXPECT(e.box[0], c->box0);
    EXPECT(e.box[1], c->box1);
    EXPECT(e.estr[0], 1);
    EXPECT(e.estr[1], 1);
    EXPECT(e.interleave, 0);
    EXPECT(e.swizzle, c->swizzle);
    EXPECT(e.oob, 0);
    if (e.l2 > 3) {
      print_error("%s: L2 promotion %llu is not one of 0..3\n", c->what, (unsigned long long)e.l2);
      bad++;
    }
  }
  assert_int_equal(bad, 0);
}

/* A mistake is a message naming the parameter, and the driver is not
 * called (the descriptor stays as it was). */
static void expect_reject(int param, tile_devptr base, uint64_t rows, uint64_t cols, uint64_t stride,
                          const char *want) {
  tile_tma_desc d;
  memset(&d, 0xab, sizeof d);
  tile_status st = tile_tma_desc_2d(&d, kern, param, base, rows, cols, stride);
  if (st != TILE_ERR_INVALID || !strstr(tile_last_error(), want)) {
    print_error("param %d, %llu x %llu stride %llu at 0x%llx: status %d '%s', want TILE_ERR_INVALID '%s'\n", param,
                (unsigned long long)rows, (unsigned long long)cols, (unsigned long long)stride,
                (unsigned long long)base, st, tile_last_error(), want);
    fail();
  }
  for (size_t i = 0; i < sizeof d.bytes; i++)
    if (d.bytes[i] != 0xab) fail_msg("rejected descriptor was written (byte %zu)", i);
}

static void test_encode_rejects(void **state) {
  (void)state;
  need_fake();
  expect_reject(0, 0x7f1234560000ull, 300, 200, 201, "804 bytes"); /* f32: 201 * 4 bytes, not a multiple of 16 */
  expect_reject(1, 0x7f1234560000ull, 10, 72, 76, "152 bytes");    /* bf16: 76 * 2 */
  expect_reject(0, 0x7f1234560008ull, 300, 200, 208, "16-byte aligned");
  expect_reject(0, 0x7f1234560000ull, 300, 200, 100, "row stride 100");
  expect_reject(6, 0x7f1234560000ull, 3, 4, 4, "not a TMA descriptor");
  /* one row: no pitch to check */
  tile_tma_desc d;
  assert_int_equal(tile_tma_desc_2d(&d, kern, 0, 0x7f1234560000ull, 1, 200, 201), TILE_OK);
  Enc e = decode(&d);
  assert_int_equal(e.dims[0], 200);
  assert_int_equal(e.dims[1], 1);
}

int main(void) {
  fake_ready = build_fake() == 0;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_encode_fields),
      cmocka_unit_test(test_encode_rejects),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  if (mod) tile_module_unload(mod);
  if (fake_dir[0]) tu_rmtree(fake_dir);
  return rc;
}

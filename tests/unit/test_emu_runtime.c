/* test_emu_runtime.c - the runtime on the emulator without the environment
 * variable: tile_init_ex's backend option, the JIT's PTX carried in
 * process (no assembler, no cubin: reports name Tile lines), and
 * tile_module_load_ptx's checks. One process, one backend: the emulator,
 * chosen by the first test. */
#include "testutil.h"
#include "tile/runtime.h"

static const char *const VADD =
    "kernel vadd(x: *f32, y: *f32, out: *f32, n: i32) warps(4) {\n"
    "    let offs = program_id(0) * 512 + arange(0, 512);\n"
    "    let mask = offs < n;\n"
    "    store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);\n"
    "}\n";

/* The same, its load of y unmasked: the last program reads past y. */
static const char *const VADD_OOB =
    "kernel vadd(x: *f32, y: *f32, out: *f32, n: i32) warps(4) {\n"
    "    let offs = program_id(0) * 512 + arange(0, 512);\n"
    "    let mask = offs < n;\n"
    "    let b = load(y + offs);\n"
    "    store(out + offs, load(x + offs, mask) + b, mask);\n"
    "}\n";

static void test_backend_option(void **state) {
  (void)state;
  assert_int_equal(tile_init_ex(NULL), TILE_ERR_INVALID);
  tile_init_options bad = {.backend = (tile_backend)7};
  assert_int_equal(tile_init_ex(&bad), TILE_ERR_INVALID);
  has(tile_last_error(), "backend 7", "the message");
  tile_init_options o = {.ordinal = 0, .backend = TILE_BACKEND_EMULATOR};
  assert_int_equal(tile_init_ex(&o), TILE_OK);
  assert_int_equal(tile_emulated(), 1);
  tile_device_info info;
  assert_int_equal(tile_device_info_get(&info), TILE_OK);
  has(info.name, "Tile emulator", "the device name");
  /* chosen once: the GPU cannot be asked for now; the default and the
   * emulator again are fine */
  tile_init_options gpu = {.backend = TILE_BACKEND_GPU};
  assert_int_equal(tile_init_ex(&gpu), TILE_ERR_INVALID);
  has(tile_last_error(), "already runs its kernels on the emulator", "the message");
  tile_init_options def = {0};
  assert_int_equal(tile_init_ex(&def), TILE_OK);
  assert_int_equal(tile_init_ex(&o), TILE_OK);
  tile_init_options far = {.ordinal = 1, .backend = TILE_BACKEND_EMULATOR};
  assert_int_equal(tile_init_ex(&far), TILE_ERR_INVALID); /* the emulator is one device */
}

/* Run vadd of module m on n elements; returns the launch's status. */
static tile_status run_vadd(tile_module *m, int n, float *out) {
  tile_kernel *k;
  assert_int_equal(tile_module_get_kernel(m, "vadd", &k), TILE_OK);
  size_t bytes = sizeof(float) * (size_t)n;
  float *x = malloc(bytes), *y = malloc(bytes);
  for (int i = 0; i < n; i++) x[i] = (float)i, y[i] = 0.5f * (float)i;
  tile_devptr dx, dy, dout;
  assert_int_equal(tile_malloc(&dx, bytes), TILE_OK);
  assert_int_equal(tile_malloc(&dy, bytes), TILE_OK);
  assert_int_equal(tile_malloc(&dout, bytes), TILE_OK);
  assert_int_equal(tile_memcpy_htod(dx, x, bytes), TILE_OK);
  assert_int_equal(tile_memcpy_htod(dy, y, bytes), TILE_OK);
  void *args[] = {&dx, &dy, &dout, &n};
  tile_status s = tile_launch(k, (unsigned)(n + 511) / 512, 1, 1, args, 4, NULL);
  if (s == TILE_OK) assert_int_equal(tile_memcpy_dtoh(out, dout, bytes), TILE_OK);
  tile_free(dx);
  tile_free(dy);
  tile_free(dout);
  free(x);
  free(y);
  return s;
}

/* The JIT on the emulator stops at PTX: no assembler is needed (a ptxas
 * that does not exist), the module is the PTX itself, and a kernel's bad
 * access is reported at its Tile line. */
static void test_jit_ptx(void **state) {
  (void)state;
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.ptxas = "/nonexistent/ptxas", .cache_dir = dir};
  tile_module *m = NULL;
  tile_jit_stats st;
  tile_status s = tile_jit_load("vadd.tile", VADD, strlen(VADD), &o, &m, &st);
  if (s != TILE_OK) print_error("%s\n", tile_last_error());
  assert_int_equal(s, TILE_OK);
  assert_int_equal(st.cache_hit, 0);
  int n = 1000;
  float *out = malloc(sizeof(float) * (size_t)n);
  assert_int_equal(run_vadd(m, n, out), TILE_OK);
  for (int i = 0; i < n; i++) assert_true(out[i] == 1.5f * (float)i);
  assert_int_equal(tile_module_unload(m), TILE_OK);
  /* again: the PTX entry comes from the cache */
  assert_int_equal(tile_jit_load("vadd.tile", VADD, strlen(VADD), &o, &m, &st), TILE_OK);
  assert_int_equal(st.cache_hit, 1);
  assert_int_equal(run_vadd(m, 700, out), TILE_OK);
  assert_true(out[699] == 1.5f * 699.0f);
  assert_int_equal(tile_module_unload(m), TILE_OK);
  /* the unmasked load past the end of y: its Tile line in the report */
  assert_int_equal(tile_jit_load("vadd_oob.tile", VADD_OOB, strlen(VADD_OOB), &o, &m, &st), TILE_OK);
  assert_int_equal(run_vadd(m, n, out), TILE_ERR_CUDA);
  has(tile_last_error(), "vadd_oob.tile:4", "the report");
  has(tile_last_error(), "outside every allocation", "the report");
  assert_int_equal(tile_module_unload(m), TILE_OK);
  free(out);
  tu_rmtree(dir);
}

static void test_load_ptx_checks(void **state) {
  (void)state;
  tile_module *m = (tile_module *)1;
  const char *ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n";
  assert_int_equal(tile_module_load_ptx(ptx, strlen(ptx), "nonsense", 8, &m), TILE_ERR_BAD_MODULE);
  assert_null(m);
  assert_int_equal(tile_module_load_ptx(NULL, 0, "", 0, &m), TILE_ERR_INVALID);
  assert_int_equal(tile_module_load_ptx("a\0b", 3, "x", 1, &m), TILE_ERR_BAD_MODULE);
  has(tile_last_error(), "NUL", "the message");
  /* metadata naming a kernel the PTX does not have */
  const char *meta = "tile-meta 1\narch sm_90a\nkernel nothere\nthreads 128\nsmem 0\ncluster 1 1 1\nend\n";
  tile_status s = tile_module_load_ptx(ptx, strlen(ptx), meta, strlen(meta), &m);
  assert_int_not_equal(s, TILE_OK);
  assert_null(m);
}

int main(void) {
  unsetenv("TILE_INTERPRET"); /* the option alone picks the emulator */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_backend_option),
      cmocka_unit_test(test_jit_ptx),
      cmocka_unit_test(test_load_ptx_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

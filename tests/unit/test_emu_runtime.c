/* test_emu_runtime.c - the runtime on the emulator without the environment
 * variable: tile_init_ex's backend option, the JIT's PTX carried in
 * process (no assembler, no cubin: reports name Tile lines),
 * tile_module_load_ptx's checks, multiple_of on an unsigned argument, and
 * print / device_assert run by the
 * emulator against golden output (tests/emu/debug), and CTAs taking turns
 * (TILE_EMU_CTA_TURN), and programmatic dependent launch. One process, one
 * backend: the emulator, chosen by the first test. */
#include "testutil.h"
#include "tile/runtime.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

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

/* A cluster launch through tile_launch (cuLaunchKernelEx with the cluster
 * dimension, as on the GPU): each program writes its cluster_rank(); a grid
 * the cluster does not divide is refused by the runtime. */
static const char *const CLUSTER =
    "kernel k(x: *i32) warps(1) cluster(2, 1, 1) {\n"
    "    let offs = arange(0, 32);\n"
    "    store(x + program_id(0) * 32 + offs, offs * 0 + cluster_rank());\n"
    "}\n";

static void test_cluster_launch(void **state) {
  (void)state;
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.ptxas = "/nonexistent/ptxas", .cache_dir = dir};
  tile_module *m = NULL;
  tile_status s = tile_jit_load("cluster.tile", CLUSTER, strlen(CLUSTER), &o, &m, NULL);
  if (s != TILE_OK) print_error("%s\n", tile_last_error());
  assert_int_equal(s, TILE_OK);
  tile_kernel *k = NULL;
  assert_int_equal(tile_module_get_kernel(m, "k", &k), TILE_OK);
  tile_devptr dx = 0;
  assert_int_equal(tile_malloc(&dx, 8 * 32 * sizeof(int32_t)), TILE_OK);
  void *args[] = {&dx};
  s = tile_launch(k, 8, 1, 1, args, 1, NULL);
  if (s != TILE_OK) print_error("%s\n", tile_last_error());
  assert_int_equal(s, TILE_OK);
  int32_t out[8 * 32];
  assert_int_equal(tile_memcpy_dtoh(out, dx, sizeof out), TILE_OK);
  for (int i = 0; i < 8 * 32; i++) assert_int_equal(out[i], (i / 32) % 2);
  assert_int_not_equal(tile_launch(k, 3, 1, 1, args, 1, NULL), TILE_OK);
  has(tile_last_error(), "cluster", "the error");
  int held = 0; /* the emulator holds every cluster of a launch */
  assert_int_equal(tile_kernel_max_clusters(k, &held), TILE_OK);
  assert_int_equal(held, INT_MAX);
  assert_int_equal(tile_kernel_max_clusters(NULL, &held), TILE_ERR_INVALID);
  tile_free(dx);
  assert_int_equal(tile_module_unload(m), TILE_OK);
  tu_rmtree(dir);
}

/* pdl(true): programmatic dependent launch. tile_launch passes the
 * attribute (cuLaunchKernelEx) for a kernel whose metadata says `pdl`, and
 * the emulator then fails any global access a thread makes before its
 * griddepcontrol.wait (on a GPU the previous grid could still be writing
 * it). The compiler's kernel waits first and runs; the same PTX with its
 * wait moved after the first global load is refused, and runs when
 * TILE_PDL=0 launches it the plain way. */
static const char *const PDL_SRC =
    "kernel vadd(x: *f32, y: *f32, out: *f32, n: i32) warps(4) pdl(true) {\n"
    "    let offs = program_id(0) * 512 + arange(0, 512);\n"
    "    let mask = offs < n;\n"
    "    store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);\n"
    "}\n";

static void test_pdl_launch(void **state) {
  (void)state;
  char *ptx = tu_compile("pdl.tile", PDL_SRC, strlen(PDL_SRC), TILEC_EMIT_PTX, NULL, 0);
  char *meta = tu_compile("pdl.tile", PDL_SRC, strlen(PDL_SRC), TILEC_EMIT_META, NULL, 0);
  has(meta, "\npdl\n", "the metadata");
  char *w = strstr(ptx, "griddepcontrol.wait;");
  assert_non_null(w);
  assert_non_null(strstr(ptx, "griddepcontrol.launch_dependents;"));
  char *ld = strstr(ptx, "ld.global");
  assert_non_null(ld);
  assert_true(w < ld); /* before any global access */
  tile_module *m = NULL;
  assert_int_equal(tile_module_load_ptx(ptx, strlen(ptx), meta, strlen(meta), &m), TILE_OK);
  assert_int_equal(tile_module_kernel_info(m, 0)->pdl, 1);
  int n = 1000;
  float *out = malloc(sizeof(float) * (size_t)n);
  assert_int_equal(run_vadd(m, n, out), TILE_OK);
  for (int i = 0; i < n; i++) assert_true(out[i] == 1.5f * (float)i);
  assert_int_equal(tile_module_unload(m), TILE_OK);

  /* the wait moved to after the first global load's line */
  size_t len = strlen(ptx), wl = strlen("griddepcontrol.wait;");
  char *bad = malloc(len + 1);
  char *eol = strchr(ld, '\n');
  assert_non_null(eol);
  size_t a = (size_t)(w - ptx), b = (size_t)(eol + 1 - ptx);
  memcpy(bad, ptx, a);                                   /* up to the wait */
  memcpy(bad + a, ptx + a + wl, b - a - wl);             /* what followed it, through the load's line */
  memcpy(bad + b - wl, "griddepcontrol.wait;", wl);      /* the wait */
  memcpy(bad + b, ptx + b, len - b + 1);
  assert_int_equal(tile_module_load_ptx(bad, len, meta, strlen(meta), &m), TILE_OK);
  assert_int_equal(run_vadd(m, n, out), TILE_ERR_CUDA);
  has(tile_last_error(), "before griddepcontrol.wait", "the report");
  setenv("TILE_PDL", "0", 1); /* the plain launch: no overlap, nothing to wait for */
  assert_int_equal(run_vadd(m, n, out), TILE_OK);
  unsetenv("TILE_PDL");
  assert_true(out[n - 1] == 1.5f * (float)(n - 1));
  assert_int_equal(tile_module_unload(m), TILE_OK);

  /* the metadata's pdl line: once, no fields */
  const char *twice = "tile-meta 1\narch sm_90a\nkernel vadd\nthreads 128\nsmem 0\ncluster 1 1 1\npdl\npdl\nend\n";
  assert_int_equal(tile_module_load_ptx(ptx, len, twice, strlen(twice), &m), TILE_ERR_BAD_MODULE);
  has(tile_last_error(), "second 'pdl'", "the error");
  const char *arg = "tile-meta 1\narch sm_90a\nkernel vadd\nthreads 128\nsmem 0\ncluster 1 1 1\npdl 1\nend\n";
  assert_int_equal(tile_module_load_ptx(ptx, len, arg, strlen(arg), &m), TILE_ERR_BAD_MODULE);
  free(bad);
  free(out);
  free(ptx);
  free(meta);
}

/* bulk_store and bulk_load through the compiler and the emulator: a [64, 64] f32 tile stored to a 128-byte
 * swizzled view, copied out as its bytes lie (bulk_store), copied back into another slot (bulk_load, completing
 * on an mbarrier) and read in the view's layout: every element back in place, where the bytes in global
 * memory are the swizzled image (row 1's first 16 bytes are elements 4..7). */
static const char *const BULK =
    "kernel k(raw: *f32, out: *f32) warps(4) {\n"
    "    let s = smem(f32, [64, 64], buffers = 2, swizzle = 128);\n"
    "    let bar = mbarrier(1, arrive = 1);\n"
    "    let r = arange(0, 64);\n"
    "    smem_store(s[0], (r[:, None] * 64 + r[None, :]) as f32);\n"
    "    fence_async_shared();\n"
    "    named_barrier(1, 128);\n"
    "    bulk_store(raw, s[0]);\n"
    "    tma_store_flush(0);\n"
    "    barrier_expect(bar[0], 64 * 64 * 4);\n"
    "    bulk_load(s[1], raw, bar[0]);\n"
    "    barrier_wait(bar[0], 0);\n"
    "    store(out + r[:, None] * 64 + r[None, :], smem_load(s[1]));\n"
    "}\n";

static void test_bulk_load_store(void **state) {
  (void)state;
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.ptxas = "/nonexistent/ptxas", .cache_dir = dir};
  tile_module *m = NULL;
  tile_status s = tile_jit_load("bulk.tile", BULK, strlen(BULK), &o, &m, NULL);
  if (s != TILE_OK) print_error("%s\n", tile_last_error());
  assert_int_equal(s, TILE_OK);
  tile_kernel *k = NULL;
  assert_int_equal(tile_module_get_kernel(m, "k", &k), TILE_OK);
  int held = 0;
  assert_int_equal(tile_kernel_max_clusters(k, &held), TILE_ERR_INVALID); /* no clusters */
  has(tile_last_error(), "without clusters", "the error");
  tile_devptr draw = 0, dout = 0;
  assert_int_equal(tile_malloc(&draw, 64 * 64 * sizeof(float)), TILE_OK);
  assert_int_equal(tile_malloc(&dout, 64 * 64 * sizeof(float)), TILE_OK);
  void *args[] = {&draw, &dout};
  s = tile_launch(k, 1, 1, 1, args, 2, NULL);
  if (s != TILE_OK) print_error("%s\n", tile_last_error());
  assert_int_equal(s, TILE_OK);
  static float out[64 * 64], raw[64 * 64];
  assert_int_equal(tile_memcpy_dtoh(out, dout, sizeof out), TILE_OK);
  assert_int_equal(tile_memcpy_dtoh(raw, draw, sizeof raw), TILE_OK);
  for (int i = 0; i < 64 * 64; i++)
    if (out[i] != (float)i) {
      print_error("out[%d] = %g\n", i, out[i]);
      fail();
    }
  /* 32 floats a 128-byte row of a column block: row 1's 16-byte units are swapped in pairs */
  assert_true(raw[0] == 0.0f && raw[32] == 68.0f && raw[36] == 64.0f);
  tile_free(draw);
  tile_free(dout);
  assert_int_equal(tile_module_unload(m), TILE_OK);
  tu_rmtree(dir);
}

/* multiple_of on an unsigned argument is checked on its unsigned value:
 * 3,000,000,000 is a multiple of 3 (read as a signed 32-bit number it is
 * -1,294,967,296, which is not), 3,000,000,001 is not. */
static const char *const UMUL =
    "kernel k(x: *u32, n: u32 multiple_of(3)) warps(1) {\n"
    "    let offs = arange(0, 32);\n"
    "    store(x + offs, offs as u32 + n);\n"
    "}\n";

static void test_multiple_of_unsigned(void **state) {
  (void)state;
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.ptxas = "/nonexistent/ptxas", .cache_dir = dir};
  tile_module *m = NULL;
  tile_jit_stats st;
  assert_int_equal(tile_jit_load("umul.tile", UMUL, strlen(UMUL), &o, &m, &st), TILE_OK);
  tile_kernel *k = NULL;
  assert_int_equal(tile_module_get_kernel(m, "k", &k), TILE_OK);
  tile_devptr dx = 0;
  assert_int_equal(tile_malloc(&dx, 32 * sizeof(uint32_t)), TILE_OK);
  uint32_t n = 3000000000u;
  void *args[] = {&dx, &n};
  assert_int_equal(tile_launch(k, 1, 1, 1, args, 2, NULL), TILE_OK);
  assert_int_equal(tile_synchronize(), TILE_OK);
  uint32_t out[32];
  assert_int_equal(tile_memcpy_dtoh(out, dx, sizeof out), TILE_OK);
  assert_int_equal(out[31], 3000000031u);
  n = 3000000001u;
  assert_int_equal(tile_launch(k, 1, 1, 1, args, 2, NULL), TILE_ERR_INVALID);
  has(tile_last_error(), "3000000001, not a multiple of 3", "the refusal");
  tile_free(dx);
  assert_int_equal(tile_module_unload(m), TILE_OK);
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

/* ---- print and device_assert (tests/emu/debug: the kernels and their golden output) ---- */

/* JIT-compile tests/emu/debug/NAME.tile (its diagnostics and reports name
 * it NAME.tile) on the emulator. */
static tile_module *debug_module(const char *name) {
  char path[600], file[64];
  snprintf(path, sizeof path, "%s/tests/emu/debug/%s.tile", TILE_SRC_DIR, name);
  snprintf(file, sizeof file, "%s.tile", name);
  size_t len = 0;
  char *src = tu_read_file(path, &len);
  assert_non_null(src);
  tile_jit_options o = {.no_cache = 1};
  tile_module *m = NULL;
  tile_status s = tile_jit_load(file, src, len, &o, &m, NULL);
  if (s != TILE_OK) print_error("%s\n", tile_last_error());
  assert_int_equal(s, TILE_OK);
  free(src);
  return m;
}

/* Run a launch with stdout sent to a file; returns what it printed. */
typedef struct Captured {
  char *out;
  tile_status status;
  char report[4096];
} Captured;

static Captured launch_captured(tile_kernel *k, unsigned grid, void **args, int nargs) {
  Captured c = {0};
  char path[256];
  snprintf(path, sizeof path, "%s/tile_emu_out.XXXXXX", getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  fflush(stdout);
  int saved = dup(1);
  dup2(fd, 1);
  c.status = tile_launch(k, grid, 1, 1, args, nargs, NULL);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  close(fd);
  if (c.status != TILE_OK) snprintf(c.report, sizeof c.report, "%s", tile_last_error());
  c.out = tu_read_file(path, NULL);
  unlink(path);
  assert_non_null(c.out);
  return c;
}

static void expect_golden(const char *out, const char *name) {
  char path[600];
  snprintf(path, sizeof path, "%s/tests/emu/debug/%s", TILE_SRC_DIR, name);
  const char *update = getenv("UPDATE");
  if (update && !strcmp(update, "1")) { /* UPDATE=1: rewrite the golden file */
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(out, f);
    fclose(f);
  }
  char *want = tu_read_file(path, NULL);
  assert_non_null(want);
  if (strcmp(out, want)) {
    print_error("the output differs from %s:\n--- got ---\n%s--- expected ---\n%s", path, out, want);
    fail();
  }
  free(want);
}

static void test_print(void **state) {
  (void)state;
  tile_module *m = debug_module("print");
  tile_kernel *k;
  assert_int_equal(tile_module_get_kernel(m, "show", &k), TILE_OK);
  float x[128];
  for (int i = 0; i < 128; i++) x[i] = i == 0 ? 0.5f : i == 1 ? -1234.5678f : 1.0f;
  tile_devptr dx;
  assert_int_equal(tile_malloc(&dx, sizeof x), TILE_OK);
  assert_int_equal(tile_memcpy_htod(dx, x, sizeof x), TILE_OK);
  int32_t n = 42;
  int64_t big = -5000000000ll;
  uint16_t h = 0x3fc0; /* bf16 1.5 */
  void *args[] = {&dx, &n, &big, &h};
  Captured c = launch_captured(k, 2, args, 4);
  if (c.status != TILE_OK) print_error("%s\n", c.report);
  assert_int_equal(c.status, TILE_OK);
  expect_golden(c.out, "print.expected");
  free(c.out);
  tile_free(dx);
  assert_int_equal(tile_module_unload(m), TILE_OK);
}

/* clock64(): on the emulator the CTA's count of steps so far (a step: one
 * thread's instruction), which grows with the work between the two reads;
 * on a GPU the SM's cycles */
static void test_clock64(void **state) {
  (void)state;
  tile_module *m = debug_module("clock");
  tile_kernel *k;
  assert_int_equal(tile_module_get_kernel(m, "spent", &k), TILE_OK);
  float x[128] = {0};
  tile_devptr dx, dout;
  assert_int_equal(tile_malloc(&dx, sizeof x), TILE_OK);
  assert_int_equal(tile_malloc(&dout, 2 * sizeof(int64_t)), TILE_OK);
  assert_int_equal(tile_memcpy_htod(dx, x, sizeof x), TILE_OK);
  int64_t spent[2][2];
  int32_t ns[2] = {2, 20};
  for (int r = 0; r < 2; r++) {
    void *args[] = {&dx, &dout, &ns[r]};
    assert_int_equal(tile_launch(k, 2, 1, 1, args, 3, NULL), TILE_OK);
    assert_int_equal(tile_synchronize(), TILE_OK);
    assert_int_equal(tile_memcpy_dtoh(spent[r], dout, sizeof spent[r]), TILE_OK);
  }
  for (int p = 0; p < 2; p++) {
    assert_true(spent[0][p] > 0);
    assert_true(spent[1][p] > spent[0][p] + 18); /* 18 more trips through the loop: at least a step each */
  }
  assert_int_equal(tile_memcpy_dtoh(x, dx, sizeof x), TILE_OK);
  assert_true(x[0] >= 22.0f && x[127] >= 22.0f); /* (the two programs race on x: at least one's stores) */
  tile_free(dx), tile_free(dout);
  assert_int_equal(tile_module_unload(m), TILE_OK);
}

static void test_device_assert(void **state) {
  (void)state;
  tile_module *m = debug_module("assert");
  tile_kernel *k;
  assert_int_equal(tile_module_get_kernel(m, "check", &k), TILE_OK);
  float x[32];
  for (int i = 0; i < 32; i++) x[i] = (float)i;
  tile_devptr dx;
  assert_int_equal(tile_malloc(&dx, sizeof x), TILE_OK);
  assert_int_equal(tile_memcpy_htod(dx, x, sizeof x), TILE_OK);
  /* everything holds: the kernel runs to its end */
  int32_t n = 32;
  void *args[] = {&dx, &n};
  Captured c = launch_captured(k, 1, args, 2);
  assert_int_equal(c.status, TILE_OK);
  expect_golden(c.out, "assert_ok.expected");
  free(c.out);
  /* the tile's condition fails in two threads: both report, the first traps */
  x[5] = -1.0f, x[17] = -2.0f;
  assert_int_equal(tile_memcpy_htod(dx, x, sizeof x), TILE_OK);
  c = launch_captured(k, 1, args, 2);
  assert_int_equal(c.status, TILE_ERR_CUDA);
  expect_golden(c.out, "assert_tile.expected");
  has(c.report, "assert.tile:10: trap: the kernel stopped", "the report");
  has(c.report, "x must not be negative (program (0, 0, 0), thread 5)", "the report");
  has(c.report, "thread 5,0,0", "the report");
  free(c.out);
  /* the scalar's fails: one report (the program's elected thread) */
  n = 0;
  c = launch_captured(k, 1, args, 2);
  assert_int_equal(c.status, TILE_ERR_CUDA);
  expect_golden(c.out, "assert_scalar.expected");
  has(c.report, "assert.tile:9: trap", "the report");
  free(c.out);
  tile_free(dx);
  assert_int_equal(tile_module_unload(m), TILE_OK);
}

/* Pinned memory, the stream-ordered copy and the events (the JFA plan's
 * update path) on the emulator: the bytes arrive, bad arguments are refused. */
static void test_async_copy(void **state) {
  (void)state;
  void *h = NULL;
  assert_int_equal(tile_host_alloc(&h, 256), TILE_OK);
  assert_non_null(h);
  for (int i = 0; i < 64; i++) ((int32_t *)h)[i] = 7 * i - 3;
  tile_devptr d;
  assert_int_equal(tile_malloc(&d, 256), TILE_OK);
  tile_stream s;
  tile_event e;
  assert_int_equal(tile_stream_create(&s), TILE_OK);
  assert_int_equal(tile_event_create(&e), TILE_OK);
  assert_int_equal(tile_memcpy_htod_async(d, h, 256, s), TILE_OK);
  assert_int_equal(tile_event_record(e, s), TILE_OK);
  assert_int_equal(tile_stream_wait_event(NULL, e), TILE_OK);
  assert_int_equal(tile_event_synchronize(e), TILE_OK);
  int32_t back[64];
  assert_int_equal(tile_memcpy_dtoh(back, d, 256), TILE_OK);
  for (int i = 0; i < 64; i++) assert_int_equal(back[i], 7 * i - 3);
  assert_int_equal(tile_memcpy_htod_async(d, NULL, 4, s), TILE_ERR_INVALID);
  assert_int_equal(tile_memcpy_htod_async(d + 128, h, 256, s), TILE_ERR_CUDA); /* past the allocation */
  has(tile_last_error(), "cuMemcpyHtoD", "the message");
  assert_int_equal(tile_event_synchronize(NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_stream_wait_event(s, NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_host_alloc(NULL, 4), TILE_ERR_INVALID);
  void *z = (void *)1;
  assert_int_equal(tile_host_alloc(&z, 0), TILE_OK);
  assert_null(z);
  assert_int_equal(tile_host_free(NULL), TILE_OK);
  assert_int_equal(tile_host_free(h), TILE_OK);
  assert_int_equal(tile_event_destroy(e), TILE_OK);
  assert_int_equal(tile_stream_destroy(s), TILE_OK);
  assert_int_equal(tile_free(d), TILE_OK);
}

/* TILE_EMU_CTA_TURN: CTAs that take their work from a counter. One after
 * another (unset), the first CTA takes every item; taking turns of one
 * round, the items spread over the CTAs. A value that is not a number
 * fails the launch, naming the variable. */
static const char *const TAKE =
    "kernel take(counter: *i32, who: *i32, n: i32) warps(1) {\n"
    "    let w = atomic_add(counter, 1);\n"
    "    while w < n {\n"
    "        store(who + w + arange(0, 1), zeros([1], i32) + program_id(0));\n"
    "        w = atomic_add(counter, 1);\n"
    "    }\n"
    "}\n";

static void test_cta_turn(void **state) {
  (void)state;
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.ptxas = "/nonexistent/ptxas", .cache_dir = dir};
  tile_module *m = NULL;
  tile_status s = tile_jit_load("take.tile", TAKE, strlen(TAKE), &o, &m, NULL);
  if (s != TILE_OK) print_error("%s\n", tile_last_error());
  assert_int_equal(s, TILE_OK);
  tile_kernel *k = NULL;
  assert_int_equal(tile_module_get_kernel(m, "take", &k), TILE_OK);
  enum { N = 64, GRID = 4 };
  tile_devptr dc = 0, dw = 0;
  assert_int_equal(tile_malloc(&dc, 4), TILE_OK);
  assert_int_equal(tile_malloc(&dw, N * 4), TILE_OK);
  int32_t n = N, who[N];
  void *args[] = {&dc, &dw, &n};
  for (int turn = 0; turn <= 1; turn++) {
    if (turn) setenv("TILE_EMU_CTA_TURN", "1", 1);
    else unsetenv("TILE_EMU_CTA_TURN");
    assert_int_equal(tile_memset_d32_async(dc, 0, 1, NULL), TILE_OK);
    s = tile_launch(k, GRID, 1, 1, args, 3, NULL);
    if (s != TILE_OK) print_error("%s\n", tile_last_error());
    assert_int_equal(s, TILE_OK);
    assert_int_equal(tile_memcpy_dtoh(who, dw, sizeof who), TILE_OK);
    int seen[GRID] = {0}, ctas = 0;
    for (int i = 0; i < N; i++) {
      assert_true(who[i] >= 0 && who[i] < GRID);
      ctas += !seen[who[i]]++;
    }
    if (turn) assert_true(ctas >= 2); /* spread over the CTAs */
    else assert_int_equal(seen[0], N); /* the first CTA took them all */
  }
  setenv("TILE_EMU_CTA_TURN", "x", 1);
  assert_int_equal(tile_launch(k, GRID, 1, 1, args, 3, NULL), TILE_ERR_CUDA);
  has(tile_last_error(), "TILE_EMU_CTA_TURN", "the error");
  unsetenv("TILE_EMU_CTA_TURN");
  tile_free(dc);
  tile_free(dw);
  assert_int_equal(tile_module_unload(m), TILE_OK);
  tu_rmtree(dir);
}

int main(void) {
  unsetenv("TILE_INTERPRET"); /* the option alone picks the emulator */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_backend_option),
      cmocka_unit_test(test_jit_ptx),
      cmocka_unit_test(test_bulk_load_store),
      cmocka_unit_test(test_multiple_of_unsigned),
      cmocka_unit_test(test_cluster_launch),
      cmocka_unit_test(test_pdl_launch),
      cmocka_unit_test(test_load_ptx_checks),
      cmocka_unit_test(test_print),
      cmocka_unit_test(test_clock64),
      cmocka_unit_test(test_device_assert),
      cmocka_unit_test(test_async_copy),
      cmocka_unit_test(test_cta_turn),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_stats.c - the compile report (tilec --stats, docs/stats.md) through
 * its two accessors: tilec_result_stats() of the compiler library at each
 * stage (none before Tile IR; buffers from Tile IR on; scratch once lowered;
 * registers and spills once assembled; one also for a kernel whose shared
 * memory is over the limit), and tile_jit_stats.report of the JIT (only when
 * asked; compiled, not fetched, even when the cache has the kernel).
 * The golden tests (tests/golden/stats) check the report's whole text.
 * Cubin cases need ptxas (found like tilec finds it); without one they are
 * skipped. */
#include <unistd.h>

#include "testutil.h"
#include "tile/runtime.h"
#include "tile/tilec.h"

#define TASKS TILE_SRC_DIR "/tests/golden/stats/tasks_scratch.tile"

static const char BIG[] = /* 8 x 32 KB of buffers: over the 227 KB an SM gives a CTA */
    "kernel big(x: *f32) warps(4) {\n"
    "    let a = smem(bf16, [128, 128], buffers = 8);\n"
    "    let ready = mbarrier(1);\n"
    "    store(x + arange(0, 128), zeros([128], f32));\n"
    "}\n";

static int have_ptxas(void) {
  char buf[256];
  tilec_options o;
  tilec_options_init(&o);
  return tilec_assembler_version(&o, buf, sizeof buf) == 0;
}

/* The report of compiling path to emit (a copy, or NULL), with the status. */
static char *report_of(const char *path, tilec_emit emit, tilec_status *st) {
  tilec_options o;
  tilec_options_init(&o);
  o.emit = emit;
  tilec_result *r = NULL;
  *st = tilec_compile_file(path, &o, &r);
  assert_non_null(r);
  const char *s = tilec_result_stats(r);
  char *copy = s ? strdup(s) : NULL;
  tilec_result_free(r);
  return copy;
}

/* Before Tile IR there is nothing to report. */
static void test_none_before_tir(void **state) {
  (void)state;
  tilec_status st;
  assert_null(report_of(TASKS, TILEC_EMIT_TOKENS, &st));
  assert_null(report_of(TASKS, TILEC_EMIT_AST, &st));
  assert_int_equal(st, TILEC_OK);
  tilec_result *r = NULL;
  const char *bad = "kernel k(x: *f32) {\n  let a = ;\n}\n";
  assert_int_equal(tilec_compile("bad.tile", bad, strlen(bad), NULL, &r), TILEC_ERR_SOURCE);
  assert_null(tilec_result_stats(r));
  tilec_result_free(r);
  assert_null(tilec_result_stats(NULL));
}

/* Tile IR: the buffers, the tasks and their budgets; nothing lowered yet. */
static void test_tir(void **state) {
  (void)state;
  tilec_status st;
  char *s = report_of(TASKS, TILEC_EMIT_TIR, &st);
  assert_int_equal(st, TILEC_OK);
  has(s, "kernel tasks_scratch (", "report");
  has(s, "12 warps, 384 threads", "report");
  has(s, "registers: not assembled; cap 168 (maxnreg)", "report");
  has(s, "consumer x2  4-7, 8-11  232 (setmaxnreg.inc)", "report");
  has(s, "producer     0          40 (setmaxnreg.dec)", "report");
  has(s, "mbarrier[2], arrive 1", "report");
  has(s, " buf ", "report");
  has(s, "smem<f32, [64, 64] x 2, swizzle 128>", "report");
  has(s, "shared memory: 33792 bytes allocated; scratch not known (not lowered)", "report");
  has(s, "named barriers: 8-10 (task replicas), named_barrier 1", "report");
  has(s, "time (ms): parse ", "report");
  lacks(s, "lowering", "report");
  free(s);
}

/* PTX: the scratch of each task, at the lines that take it; no assembler. */
static void test_ptx(void **state) {
  (void)state;
  tilec_status st;
  char *s = report_of(TASKS, TILEC_EMIT_PTX, &st);
  assert_int_equal(st, TILEC_OK);
  has(s, "shared memory: 35840 bytes of 232448: 33792 allocated + 2048 scratch", "report");
  has(s, "1024 each @33792", "report");
  has(s, "scratch  task consumer, 2 replicas x 1024", "report");
  has(s, "1024 bytes  " TASKS ":6 (in col_sums, inlined at " TASKS ":21)", "report");
  has(s, "reduce f32[64, 64] along 0, across warps", "report");
  has(s, "convert f32[64] #slice<dim=0", "report");
  has(s, "spills: not assembled", "report");
  has(s, " lowering ", "report");
  has(s, " ptx ", "report");
  lacks(s, "ptxas", "report");
  free(s);
}

/* A cubin: the assembler's registers, spills and barriers. */
static void test_cubin(void **state) {
  (void)state;
  if (!have_ptxas()) {
    print_message("no ptxas: skipping\n");
    skip();
  }
  tilec_status st;
  char *s = report_of(TASKS, TILEC_EMIT_CUBIN, &st);
  assert_int_equal(st, TILEC_OK);
  const char *p = strstr(s, "registers: ");
  assert_non_null(p);
  int regs = 0;
  assert_int_equal(sscanf(p, "registers: %d a thread", &regs), 1);
  assert_true(regs > 0 && regs <= 255);
  has(s, "spills: 0 bytes stored, 0 bytes loaded; stack frame 0 bytes", "report");
  has(s, "; ptxas: 16 used", "report");
  has(s, " ptxas ", "report");
  free(s);
}

/* Shared memory over the limit is an error, and the report says what takes it
 * (here a buffer the kernel does not even use). */
static void test_over_limit(void **state) {
  (void)state;
  tilec_result *r = NULL;
  assert_int_equal(tilec_compile("big.tile", BIG, strlen(BIG), NULL, &r), TILEC_ERR_SOURCE);
  has(tilec_result_diagnostics(r), "allocates 263168 bytes of shared memory", "diagnostics");
  const char *s = tilec_result_stats(r);
  has(s, "kernel big (big.tile:1)", "report");
  /* dce removes a buffer nothing uses, not the bytes passes.c gave it */
  has(s, "1024    262144  a       smem<bf16, [128, 128] x 8, swizzle 128> (unused, still placed)  big.tile:2",
      "report");
  has(s, "shared memory: 263168 bytes allocated; scratch not known (not lowered)", "report");
  tilec_result_free(r);
}

/* The JIT: a report only when asked, compiled even on a cache hit. */
static void test_jit(void **state) {
  (void)state;
  if (!have_ptxas()) {
    print_message("no ptxas: skipping\n");
    skip();
  }
  char dir[4096];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  size_t len = 0;
  char *src = tu_read_file(TASKS, &len);
  assert_non_null(src);
  tile_jit_options o = {0};
  o.arch = "sm_90a";
  o.cache_dir = dir;
  tile_jit_stats st;
  void *cubin = NULL;
  size_t size = 0;
  /* no report unless asked */
  assert_int_equal(tile_jit_compile_cubin("tasks_scratch.tile", src, len, &o, &cubin, &size, &st), TILE_OK);
  assert_int_equal(st.cache_hit, 0);
  assert_null(st.report);
  free(cubin);
  /* asked: compiled although the cache has it, the same cubin */
  o.stats = 1;
  void *again = NULL;
  size_t size2 = 0;
  assert_int_equal(tile_jit_compile_cubin("tasks_scratch.tile", src, len, &o, &again, &size2, &st), TILE_OK);
  assert_int_equal(st.cache_hit, 0);
  has(st.report, "kernel tasks_scratch (tasks_scratch.tile:9)", "JIT report");
  has(st.report, "registers: ", "JIT report");
  has(st.report, "1024 each @33792", "JIT report");
  free(st.report);
  /* the library's report of the same compile is the same but for the times */
  tilec_status cst;
  char *lib = report_of(TASKS, TILEC_EMIT_CUBIN, &cst);
  assert_non_null(lib);
  free(lib);
  /* and without stats the next call is a hit again */
  o.stats = 0;
  void *third = NULL;
  assert_int_equal(tile_jit_compile_cubin("tasks_scratch.tile", src, len, &o, &third, &size, &st), TILE_OK);
  assert_int_equal(st.cache_hit, 1);
  assert_null(st.report);
  assert_int_equal(size, size2);
  assert_memory_equal(third, again, size);
  free(again);
  free(third);
  /* asked with no stats struct to hand it to: no leak (ASan), no crash */
  o.stats = 1;
  assert_int_equal(tile_jit_compile_cubin("tasks_scratch.tile", src, len, &o, &cubin, &size, NULL), TILE_OK);
  free(cubin);
  /* a failed compile hands back its report too */
  cubin = NULL;
  assert_int_equal(tile_jit_compile_cubin("big.tile", BIG, strlen(BIG), &o, &cubin, &size, &st), TILE_ERR_COMPILE);
  assert_null(cubin);
  has(st.report, "kernel big (big.tile:1)", "JIT report of a failed compile");
  free(st.report);
  free(src);
  tu_rmtree(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_none_before_tir), cmocka_unit_test(test_tir),        cmocka_unit_test(test_ptx),
      cmocka_unit_test(test_cubin),           cmocka_unit_test(test_over_limit), cmocka_unit_test(test_jit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_emu_regs.c - the register file under setmaxnreg (emu/regs.c) on
 * hand-written PTX: the CTA's register pool, setmaxnreg.inc waiting for
 * what .dec gives back, the deadlock report of budgets that ask more than
 * the pool holds, the launch count (the cubin's, .maxnreg, or .maxntid x
 * .minnctapersm), and the runtime reading the cubin's register count. */
#include "../../emu/emu.h"
#include "testutil.h"
#include "../../runtime/rt.h"

#define HEAD ".version 8.0\n.target sm_90a\n.address_size 64\n"

/* gemm's shape: 384 threads, warpgroup 0 (the producer) works longer than a warp's slice,
 * stores 7 to out[0] and gives registers back (dec DEC); warpgroups 1 and
 * 2 ask for more (inc INC), then copy out[0] into out[1 + tid]. DIRS: the
 * entry's performance directives. */
static void kernel(char *ptx, size_t n, const char *dirs, int dec, int inc) {
  snprintf(ptx, n,
           HEAD ".visible .entry k(.param .u64 out)\n%s\n{\n"
           ".reg .b64 %%rd<8>;\n.reg .b32 %%r<8>;\n.reg .pred %%p<4>;\n"
           "ld.param.u64 %%rd1, [out];\nmov.u32 %%r1, %%tid.x;\nshr.u32 %%r2, %%r1, 7;\n"
           "setp.ne.u32 %%p1, %%r2, 0;\n@%%p1 bra CONS;\n"
           "mov.u32 %%r3, 0;\nLOOP:\nadd.u32 %%r3, %%r3, 1;\nsetp.lt.u32 %%p2, %%r3, 6000;\n@%%p2 bra LOOP;\n"
           "mov.u32 %%r5, 7;\nst.global.u32 [%%rd1], %%r5;\n"
           "setmaxnreg.dec.sync.aligned.u32 %d;\nret;\n"
           "CONS:\nsetmaxnreg.inc.sync.aligned.u32 %d;\n"
           "ld.global.u32 %%r4, [%%rd1];\nmul.wide.u32 %%rd2, %%r1, 4;\nadd.s64 %%rd3, %%rd1, %%rd2;\n"
           "st.global.u32 [%%rd3+4], %%r4;\nret;\n}\n",
           dirs, dec, inc);
}

static bool launch(const char *ptx, unsigned threads, unsigned regs, int sched, uint64_t seed, uint32_t *out,
                   char *err, size_t errlen) {
  uint64_t p = (uint64_t)(uintptr_t)out;
  EmLaunch l = {.kernel = "k", .grid = {1, 1, 1}, .block = {threads, 1, 1}, .params = &p, .params_size = 8,
                .sched = sched, .seed = seed, .max_steps = 20000000, .regs = regs};
  return tu_emu_run(ptx, &l, err, errlen);
}

/* The budgets that fit (40 + 2 x 232 over a pool of 384 x 168) run under
 * every schedule, and no consumer moves past its inc before the producer's
 * dec: each reads the 7 stored before it. */
static void test_pool_balanced(void **state) {
  (void)state;
  char ptx[4096], err[2048];
  static uint32_t out[1 + 384];
  const char *dirs[] = {".maxnreg 168", ".maxntid 384, 1, 1\n.minnctapersm 1"};
  for (size_t d = 0; d < 2; d++) {
    kernel(ptx, sizeof ptx, dirs[d], 40, 232);
    for (uint64_t seed = 0; seed < 6; seed++) {
      memset(out, 0, sizeof out);
      int sched = seed == 0 ? EM_SCHED_RR : seed < 3 ? EM_SCHED_RANDOM : EM_SCHED_ADVERSARIAL;
      if (!launch(ptx, 384, 0, sched, seed, out, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
      }
      for (int i = 128; i < 384; i++) assert_int_equal(out[1 + i], 7);
    }
  }
}

/* Eight registers a thread more for the consumers: one warpgroup gets its
 * 9,216, the other waits for 9,216 with 7,168 left: a deadlock that names
 * setmaxnreg, the budget, what the pool holds and what the CTA started with. */
static void test_pool_over_budget(void **state) {
  (void)state;
  char ptx[4096], err[2048];
  static uint32_t out[1 + 384];
  kernel(ptx, sizeof ptx, ".maxnreg 168", 40, 240);
  for (uint64_t seed = 0; seed < 6; seed++) {
    int sched = seed == 0 ? EM_SCHED_RR : seed < 3 ? EM_SCHED_RANDOM : EM_SCHED_ADVERSARIAL;
    assert_false(launch(ptx, 384, 0, sched, seed, out, err, sizeof err));
    has(err, "deadlock", "the report");
    has(err, "setmaxnreg.inc to 240 registers a thread asks the CTA's register pool for 9216 more", "the report");
    has(err, "the pool holds 7168", "the report");
    has(err, "384 threads x 168 = 64512", "the report");
    has(err, "setmaxnreg.inc.sync.aligned.u32", "the report");
  }
  /* the register count of the cubin wins over .maxnreg: at 160 the producer frees 15,360, the consumers ask 18,432 */
  kernel(ptx, sizeof ptx, ".maxnreg 168", 40, 232);
  assert_false(launch(ptx, 384, 160, EM_SCHED_RR, 0, out, err, sizeof err));
  has(err, "asks the CTA's register pool for 9216 more (warps 8-11, from 160 a thread), and the pool holds 6144",
      "the report");
  assert_true(launch(ptx, 384, 168, EM_SCHED_RR, 0, out, err, sizeof err));
  /* without a register cap ptxas ignores setmaxnreg (C7508): so does the pool */
  kernel(ptx, sizeof ptx, "", 40, 240);
  assert_true(launch(ptx, 384, 0, EM_SCHED_RR, 0, out, err, sizeof err));
}

/* .dec above what a warp holds, .inc below it; a launch whose registers an SM cannot hold. */
static void test_pool_misuse(void **state) {
  (void)state;
  char ptx[4096], err[2048];
  static uint32_t out[1 + 384];
  kernel(ptx, sizeof ptx, ".maxnreg 168", 200, 232);
  assert_false(launch(ptx, 384, 0, EM_SCHED_RR, 0, out, err, sizeof err));
  has(err, "setmaxnreg.dec to 200 registers a thread, but warp 0 holds 168", "the report");
  kernel(ptx, sizeof ptx, ".maxnreg 168", 40, 160);
  assert_false(launch(ptx, 384, 0, EM_SCHED_RR, 0, out, err, sizeof err));
  has(err, "setmaxnreg.inc to 160 registers a thread, but warp 4 holds 168", "the report");
  kernel(ptx, sizeof ptx, ".maxnreg 168", 40, 232);
  assert_false(launch(ptx, 384, 176, EM_SCHED_RR, 0, out, err, sizeof err));
  has(err, "384 threads x 176 registers (67584) is more than an SM's 65536", "the report");
  /* a CTA of 64 threads: an incomplete warpgroup (without a cap: passed over, as ptxas does) */
  kernel(ptx, sizeof ptx, ".maxnreg 168", 40, 232);
  assert_false(launch(ptx, 64, 0, EM_SCHED_RR, 0, out, err, sizeof err));
  has(err, "setmaxnreg in warpgroup 0, which the CTA's 64 threads leave incomplete", "the report");
  kernel(ptx, sizeof ptx, "", 40, 232);
  assert_true(launch(ptx, 64, 0, EM_SCHED_RR, 0, out, err, sizeof err));
  /* 255 registers count as 256: 256 threads fit exactly */
  assert_false(launch(ptx, 384, 255, EM_SCHED_RR, 0, out, err, sizeof err));
  has(err, "384 threads x 256 registers", "the report");
}

/* The runtime reads the register count ptxas gave gemm (EIATTR_REGCOUNT):
 * 168, its .maxnreg; a kernel name the cubin lacks: 0. */
static void test_cubin_regcount(void **state) {
  (void)state;
  size_t n = 0;
  char *bin = tu_read_file(TILE_BUILD_DIR "/examples/gemm.sm_90a.cubin", &n);
  if (!bin) {
    print_message("skipped: no gemm cubin (build the examples)\n");
    skip();
  }
  rt_elf e;
  assert_int_equal(rt_elf_open(&e, bin, n), TILE_OK);
  assert_int_equal(rt_elf_regcount(&e, "gemm"), 168);
  assert_int_equal(rt_elf_regcount(&e, "no_such_kernel"), 0);
  free(bin);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pool_balanced),
      cmocka_unit_test(test_pool_over_budget),
      cmocka_unit_test(test_pool_misuse),
      cmocka_unit_test(test_cubin_regcount),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

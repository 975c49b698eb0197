/* test_emu_tcorder.c - the race checks of tcgen05's tensor-memory accesses
 * (emu/tmem.c over emu/check.c's clocks) on hand-written sm_100a PTX: warp
 * 0 stores lanes 0..31 with tcgen05.st, warp 4 (the same lane quarter)
 * loads them with tcgen05.ld. Clean with the writer's tcgen05.wait::st, a
 * bar.sync and the reader's tcgen05.fence::after_thread_sync; each one
 * left out is a `race` report naming the columns, the lanes, the store and
 * what is missing. (An MMA's writes read before its commit's mbarrier:
 * test_emu_tcgen05.c, test_kernel_async.) */
#include "../../emu/emu.h"
#include "testutil.h"

enum { FULL, NO_WAIT, NO_SYNC, NO_FENCE, OWN_NO_WAIT };

static void kernel(char *ptx, size_t n, int v) {
  snprintf(ptx, n,
           ".version 8.6\n.target sm_100a\n.address_size 64\n.shared .align 4 .b32 slot;\n"
           ".visible .entry k(.param .u64 out)\n{\n.reg .b64 %%rd<8>;\n.reg .b32 %%r<16>;\n.reg .pred %%p<4>;\n"
           "ld.param.u64 %%rd1, [out];\nmov.u32 %%r1, %%tid.x;\nshr.u32 %%r7, %%r1, 5;\nsetp.ne.u32 %%p1, %%r7, 0;\n"
           "mov.u32 %%r2, slot;\n@%%p1 bra A1;\n"
           "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%%r2], 32;\n"
           "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n"
           "A1:\nbar.sync 0;\nld.shared.b32 %%r3, [slot];\n@%%p1 bra B1;\nadd.u32 %%r4, %%r1, 1000;\n"
           "tcgen05.st.sync.aligned.32x32b.x1.b32 [%%r3], {%%r4};\n%s"
           "%s"
           "tcgen05.fence::before_thread_sync;\nB1:\n%s"
           "setp.ne.u32 %%p2, %%r7, 4;\n@%%p2 bra C1;\n%s"
           "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%%r5}, [%%r3];\ntcgen05.wait::ld.sync.aligned;\n"
           "sub.u32 %%r6, %%r1, 128;\nmul.wide.u32 %%rd2, %%r6, 4;\nadd.s64 %%rd3, %%rd1, %%rd2;\n"
           "st.global.u32 [%%rd3], %%r5;\nC1:\nbar.sync 0;\n@%%p1 bra D1;\n%s"
           "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %%r3, 32;\nD1:\nret;\n}\n",
           v == NO_WAIT || v == OWN_NO_WAIT ? "" : "tcgen05.wait::st.sync.aligned;\n",
           v == OWN_NO_WAIT ? "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r5}, [%r3];\ntcgen05.wait::ld.sync.aligned;\n" : "",
           v == NO_SYNC ? "" : "bar.sync 0;\n", v == NO_FENCE ? "" : "tcgen05.fence::after_thread_sync;\n",
           v == NO_WAIT || v == OWN_NO_WAIT ? "tcgen05.wait::st.sync.aligned;\n" : "");
}

static bool launch(const char *ptx, int sched, uint64_t seed, uint32_t *out, char *err, size_t errlen) {
  uint64_t p = (uint64_t)(uintptr_t)out;
  EmLaunch l = {.kernel = "k", .grid = {1, 1, 1}, .block = {160, 1, 1}, .params = &p, .params_size = 8,
                .sched = sched, .seed = seed, .max_steps = 20000000};
  return tu_emu_run(ptx, &l, err, errlen);
}

static const int scheds[][2] = {{EM_SCHED_RR, 0}, {EM_SCHED_RANDOM, 1}, {EM_SCHED_RANDOM, 2},
                                {EM_SCHED_ADVERSARIAL, 3}, {EM_SCHED_ADVERSARIAL, 4}};

/* wait::st, bar.sync, fence::after_thread_sync: clean, and warp 4 reads what warp 0 stored */
static void test_tcorder_clean(void **state) {
  (void)state;
  char ptx[4096], err[2048];
  uint32_t out[32];
  kernel(ptx, sizeof ptx, FULL);
  for (int s = 0; s < 5; s++) {
    memset(out, 0, sizeof out);
    if (!launch(ptx, scheds[s][0], (uint64_t)scheds[s][1], out, err, sizeof err)) {
      print_error("%s\n", err);
      fail();
    }
    for (int l = 0; l < 32; l++) assert_int_equal(out[l], 1000 + l);
  }
}

static void test_tcorder_reports(void **state) {
  (void)state;
  char ptx[4096], err[2048];
  uint32_t out[32];
  const char *lead = "race: the tcgen05.ld reads tensor memory columns 0..0 (lanes 0..31), which warp 0's tcgen05.st "
                     "at ptx line";
  kernel(ptx, sizeof ptx, NO_WAIT); /* every schedule: the barrier orders the st before the ld */
  for (int s = 0; s < 5; s++) {
    assert_false(launch(ptx, scheds[s][0], (uint64_t)scheds[s][1], out, err, sizeof err));
    has(err, lead, "the report");
    has(err, "(thread 0) wrote, before that warp's tcgen05.wait::st", "the report");
    has(err, "(CTA 0,0,0 thread 128,0,0): tcgen05.ld", "the report");
  }
  kernel(ptx, sizeof ptx, NO_FENCE);
  for (int s = 0; s < 5; s++) {
    assert_false(launch(ptx, scheds[s][0], (uint64_t)scheds[s][1], out, err, sizeof err));
    has(err, lead, "the report");
    has(err, "with no tcgen05.fence::after_thread_sync between the thread sync and this instruction", "the report");
  }
  /* no barrier: reported under the schedules where warp 0 stores (and waits) before warp 4 loads (a load
     before the store is not seen: the shadow keeps no reads) */
  kernel(ptx, sizeof ptx, NO_SYNC);
  int seen = 0;
  for (uint64_t seed = 1; seed <= 16; seed++)
    if (!launch(ptx, EM_SCHED_RANDOM, seed, out, err, sizeof err)) {
      has(err, lead, "the report");
      has(err, "with no thread sync (a barrier or an mbarrier) between the writer's tcgen05.wait::st and this thread",
          "the report");
      seen++;
    }
  assert_true(seen > 0);
  /* the storing warp itself reads before its wait::st */
  kernel(ptx, sizeof ptx, OWN_NO_WAIT);
  assert_false(launch(ptx, EM_SCHED_RR, 0, out, err, sizeof err));
  has(err, "which its own warp's tcgen05.st at ptx line", "the report");
  has(err, "before the tcgen05.wait::st that completes it", "the report");
  /* checks off: the values as they land, no report */
  kernel(ptx, sizeof ptx, NO_FENCE);
  uint64_t p = (uint64_t)(uintptr_t)out;
  EmLaunch l = {.kernel = "k", .grid = {1, 1, 1}, .block = {160, 1, 1}, .params = &p, .params_size = 8,
                .max_steps = 20000000, .no_checks = true};
  assert_true(tu_emu_run(ptx, &l, err, sizeof err));
  assert_int_equal(out[5], 1005);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tcorder_clean),
      cmocka_unit_test(test_tcorder_reports),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_emu_check.c - the emulator's checks (emu/check.c, the barrier
 * checks of emu/async.c, the schedules of emu/sched.c) on hand-written
 * PTX: each check fires on a kernel that breaks its rule and stays quiet
 * on the same kernel with the rule kept (so none of them is always on);
 * the reports name the schedule and its seed, and a seed replays its
 * report. The broken Tile kernels of tests/emu/broken are test_emu_broken.c. */
#include "testutil.h"
#include "../../emu/emu.h"

#include <stddef.h>

#define HEAD ".version 8.0\n.target sm_90a\n.address_size 64\n"

static bool run_sched(const char *ptx, unsigned block, const void *params, size_t psize, int sched, uint64_t seed,
                      char *err, size_t errlen) {
  EmModule *m = NULL;
  if (!em_ptx_parse(ptx, strlen(ptx), &m, err, errlen)) {
    print_error("parse: %s\n", err);
    fail();
  }
  EmLaunch l = {.kernel = "k", .grid = {1, 1, 1}, .block = {block, 1, 1}, .params = params, .params_size = psize,
                .max_steps = 20000000, .sched = sched, .seed = seed};
  bool ok = em_launch(m, &l, err, errlen);
  em_module_free(m);
  return ok;
}

/* The kernel runs clean (broken 0), or fails with a report holding each of want. */
static void expect(const char *ptx, unsigned block, const void *params, size_t psize, const char *const *want) {
  char err[2048];
  bool ok = run_sched(ptx, block, params, psize, EM_SCHED_DEFAULT, 0, err, sizeof err);
  if (!want) {
    if (!ok) print_error("should run clean: %s\n", err);
    assert_true(ok);
    return;
  }
  if (ok) print_error("should fail with '%s'\n", want[0]);
  assert_false(ok);
  for (; *want; want++) has(err, *want, "the report");
}

/* ---- generic accesses ---- */

/* Warp 0 stores s[lane], warp 1 loads it: without a barrier between them a
 * race, with bar.sync clean; a load of bytes nobody stored: uninitialized. */
static void test_race_between_warps(void **state) {
  (void)state;
  char ptx[2048];
  uint64_t p = 0;
  for (int mode = 0; mode < 4; mode++) {
    /* 0: bar.sync between; 1: none; 2: warp 1 reads s[lane + 32], never written; 3: bar.arrive by the
       writer and bar.sync by the reader (a producer/consumer pair, clean) */
    const char *sync = mode == 1 || mode == 2 ? "" : mode == 3 ? "@%p1 bar.arrive 1, 64;\n@!%p1 bar.sync 1, 64;\n"
                                                               : "bar.sync 0;\n";
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 4 .b32 s[64];\n.visible .entry k(.param .u64 out)\n{\n"
             ".reg .b64 %%rd<8>;\n.reg .b32 %%r<8>;\n.reg .pred %%p<4>;\n"
             "mov.u32 %%r1, %%tid.x;\nand.b32 %%r2, %%r1, 31;\nsetp.lt.u32 %%p1, %%r1, 32;\n"
             "mul.wide.u32 %%rd1, %%r2, 4;\nmov.u64 %%rd2, s;\nadd.s64 %%rd2, %%rd2, %%rd1;\n"
             "@%%p1 st.shared.u32 [%%rd2], %%r1;\n%s"
             "@!%%p1 ld.shared.u32 %%r3, [%%rd2+%d];\nret;\n}\n", sync, mode == 2 ? 128 : 0);
    const char *race[] = {"race: reads smem+0x0, written by warp 0 (thread 0)", "no barrier between the write and this read",
                          "(CTA 0,0,0 thread 32,0,0): ld.shared.u32", "[schedule rr]", NULL};
    const char *uninit[] = {"uninitialized: reads smem+0x80, which nothing has written", NULL};
    expect(ptx, 64, &p, sizeof p, mode == 1 ? race : mode == 2 ? uninit : NULL);
  }
  /* a write over another warp's read with no barrier between (a scratch buffer reused too early) */
  snprintf(ptx, sizeof ptx, HEAD ".shared .align 4 .b32 s[64];\n.visible .entry k(.param .u64 out)\n{\n"
           ".reg .b64 %%rd<8>;\n.reg .b32 %%r<8>;\n.reg .pred %%p<4>;\n"
           "mov.u32 %%r1, %%tid.x;\nand.b32 %%r2, %%r1, 31;\nsetp.lt.u32 %%p1, %%r1, 32;\n"
           "mul.wide.u32 %%rd1, %%r2, 4;\nmov.u64 %%rd2, s;\nadd.s64 %%rd2, %%rd2, %%rd1;\n"
           "@%%p1 st.shared.u32 [%%rd2], %%r1;\nbar.sync 0;\n@!%%p1 ld.shared.u32 %%r3, [%%rd2];\n"
           "@!%%p1 bra.uni END;\nmov.u32 %%r4, 0;\nSPIN:\nadd.u32 %%r4, %%r4, 1;\nsetp.lt.u32 %%p2, %%r4, 100;\n"
           "@%%p2 bra SPIN;\nst.shared.u32 [%%rd2], %%r4;\nEND:\nret;\n}\n");
  /* whichever warp goes first, one of the two accesses finds the other: the write after the read (WAR) or
     the read after the write (RAW), never nothing */
  char err[2048];
  int kinds = 0;
  for (uint64_t seed = 0; seed <= 12; seed++) {
    uint64_t p2 = 0;
    assert_false(run_sched(ptx, 64, &p2, sizeof p2, seed ? EM_SCHED_RANDOM : EM_SCHED_RR, seed, err, sizeof err));
    if (strstr(err, "race: writes smem+0x")) {
      has(err, "which warp 1 reads, with no barrier between that read and this write", "the report");
      kinds |= 1;
    } else {
      has(err, "race: reads smem+0x", "the report");
      kinds |= 2;
    }
  }
  assert_int_equal(kinds, 3);
}

/* An elected thread's mbarrier arrival releases what its thread knows, not
 * its warp's other lanes' stores (or other warps'): warps 0-1 store, thread 0
 * arrives, warps 2-3 wait and read. Without a bar.sync before the arrival
 * warp 1's stores are a race; with it, clean. (tilec rejects the Tile
 * form of this bug: barrier_arrive after smem_store without task_barrier.) */
static void test_race_through_mbarrier(void **state) {
  (void)state;
  char ptx[2048];
  uint64_t p = 0;
  for (int bar = 0; bar <= 1; bar++) {
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 8 .b64 mb;\n.shared .align 4 .b32 s[64];\n"
             ".visible .entry k(.param .u64 out)\n{\n.reg .b64 %%rd<8>;\n.reg .b32 %%r<8>;\n.reg .pred %%p<4>;\n"
             "mov.u32 %%r1, %%tid.x;\nsetp.lt.u32 %%p1, %%r1, 64;\nsetp.eq.u32 %%p2, %%r1, 0;\n"
             "@%%p2 mbarrier.init.shared.b64 [mb], 1;\nbar.sync 0;\n"
             "and.b32 %%r2, %%r1, 63;\nmul.wide.u32 %%rd1, %%r2, 4;\nmov.u64 %%rd2, s;\nadd.s64 %%rd2, %%rd2, %%rd1;\n"
             "@%%p1 st.shared.u32 [%%rd2], %%r1;\n%s"
             "@%%p2 mbarrier.arrive.shared.b64 %%rd3, [mb];\n@%%p1 bra.uni END;\n"
             "WAIT:\nmbarrier.try_wait.parity.shared.b64 %%p3, [mb], 0;\n@!%%p3 bra WAIT;\n"
             "ld.shared.u32 %%r3, [%%rd2];\nEND:\nret;\n}\n", bar ? "@%p1 bar.sync 1, 64;\n" : "");
    const char *race[] = {"race: reads smem+0x88, written by warp 1 (thread 32)", NULL};
    expect(ptx, 128, &p, sizeof p, bar ? NULL : race);
  }
}

/* ---- TMA ---- */

typedef struct MapParams {
  uint64_t out;
  uint8_t pad[56];
  _Alignas(64) EmTensorMap map;
} MapParams;

static _Alignas(64) float g[8 * 32];

static void map_of(MapParams *p) {
  uint64_t dims[2] = {32, 8}, strides[1] = {32 * 4};
  uint32_t box[2] = {32, 8}, es[2] = {1, 1};
  memset(p, 0, sizeof *p);
  assert_true(em_tmap_encode(&p->map, 7 /* f32 */, 2, g, dims, strides, box, es, 0, 3 /* 128B */, 0, 0, NULL, NULL, 0));
}

/* 128 threads fill a 1024-byte box (a word each, twice), then thread 0
 * stores it with TMA. fence / bar: whether each is there. */
static const char *store_ptx(char *buf, size_t n, bool fence, bool bar) {
  snprintf(buf, n, HEAD ".shared .align 1024 .b8 box[1024];\n"
           ".visible .entry k(.param .u64 out, .param .align 64 .b8 map[128])\n{\n"
           ".reg .b64 %%rd<10>;\n.reg .b32 %%r<10>;\n.reg .pred %%p<4>;\n"
           "mov.b64 %%rd2, map;\ncvta.param.u64 %%rd2, %%rd2;\nmov.u32 %%r3, %%tid.x;\nmov.u32 %%r1, 0;\n"
           "mul.wide.u32 %%rd4, %%r3, 8;\nmov.u64 %%rd6, box;\nadd.s64 %%rd6, %%rd6, %%rd4;\n"
           "st.shared.v2.u32 [%%rd6], {%%r3, %%r3};\n%s%s"
           "setp.ne.u32 %%p3, %%r3, 0;\n@%%p3 exit;\n"
           "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%%rd2, {%%r1, %%r1}], [box];\n"
           "cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\nret;\n}\n",
           fence ? "fence.proxy.async.shared::cta;\n" : "", bar ? "bar.sync 0;\n" : "");
  return buf;
}

static void test_tma_store_proxy(void **state) {
  (void)state;
  char ptx[4096];
  MapParams p;
  map_of(&p);
  expect(store_ptx(ptx, sizeof ptx, true, true), 128, &p, sizeof p, NULL);
  const char *proxy[] = {"proxy: the TMA store reads smem+0x0, written by warp 0 (thread 0)",
                         "with no fence.proxy.async between the write and this asynchronous read",
                         "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group", NULL};
  expect(store_ptx(ptx, sizeof ptx, false, true), 128, &p, sizeof p, proxy);
  /* no barrier: thread 0 issues before warps 1-3 wrote (uninitialized), or after (a race), or they write
     while it may still read (slot), as the schedule has it */
  char err[2048];
  assert_false(run_sched(store_ptx(ptx, sizeof ptx, true, false), 128, &p, sizeof p, EM_SCHED_RR, 0, err, sizeof err));
  has(err, "uninitialized: the TMA store reads smem+0x", "the report");
  int kinds = 0;
  for (uint64_t seed = 1; seed <= 12; seed++) {
    assert_false(run_sched(ptx, 128, &p, sizeof p, EM_SCHED_RANDOM, seed, err, sizeof err));
    kinds |= strstr(err, "uninitialized:") ? 1 : strstr(err, "race: the TMA store reads") ? 2 : strstr(err, "slot:") ? 4 : 8;
  }
  assert_int_equal(kinds & 8, 0);
}

/* One thread loads a box through an mbarrier and reads it: before the wait
 * a race with the TMA load, after it clean. */
static void test_tma_load_wait(void **state) {
  (void)state;
  char ptx[4096];
  MapParams p;
  map_of(&p);
  for (int wait = 0; wait <= 1; wait++) {
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 1024 .b8 box[1024];\n.shared .align 8 .b64 bar;\n"
             ".visible .entry k(.param .u64 out, .param .align 64 .b8 map[128])\n{\n"
             ".reg .b64 %%rd<10>;\n.reg .b32 %%r<10>;\n.reg .pred %%p<4>;\n"
             "mov.b64 %%rd2, map;\ncvta.param.u64 %%rd2, %%rd2;\nmov.u32 %%r1, 0;\n"
             "mbarrier.init.shared.b64 [bar], 1;\nmbarrier.arrive.expect_tx.shared.b64 %%rd3, [bar], 1024;\n"
             "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [box], [%%rd2, {%%r1, %%r1}], "
             "[bar];\n%s"
             "ld.shared.u32 %%r5, [box+64];\n%sret;\n}\n",
             wait ? "WAIT:\nmbarrier.try_wait.parity.shared.b64 %p1, [bar], 0;\n@!%p1 bra WAIT;\n" : "",
             wait ? "" : "WAIT:\nmbarrier.try_wait.parity.shared.b64 %p1, [bar], 0;\n@!%p1 bra WAIT;\n");
    const char *race[] = {"race: reads smem+0x40, written by the TMA load at ptx line 16",
                          "completing on the mbarrier at smem+0x400", "no wait for that mbarrier's phase", NULL};
    expect(ptx, 1, &p, sizeof p, wait ? NULL : race);
  }
}

/* Expected bytes fewer than the loads bring: the phase completes on the
 * first load, the second's bytes go to the next phase. A thread that
 * arrives twice in one phase. */
static void test_mbarrier_counts(void **state) {
  (void)state;
  char ptx[4096];
  MapParams p;
  map_of(&p);
  for (int bytes = 1024; bytes <= 2048; bytes += 1024) {
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 1024 .b8 box[2048];\n.shared .align 8 .b64 bar;\n"
             ".visible .entry k(.param .u64 out, .param .align 64 .b8 map[128])\n{\n"
             ".reg .b64 %%rd<10>;\n.reg .b32 %%r<10>;\n.reg .pred %%p<4>;\n"
             "mov.b64 %%rd2, map;\ncvta.param.u64 %%rd2, %%rd2;\nmov.u32 %%r1, 0;\n"
             "mbarrier.init.shared.b64 [bar], 1;\nmbarrier.arrive.expect_tx.shared.b64 %%rd3, [bar], %d;\n"
             "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [box], [%%rd2, {%%r1, %%r1}], "
             "[bar];\n"
             "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [box+1024], [%%rd2, {%%r1, %%r1}], "
             "[bar];\nWAIT:\nmbarrier.try_wait.parity.shared.b64 %%p1, [bar], 0;\n@!%%p1 bra WAIT;\nret;\n}\n", bytes);
    const char *few[] = {"mbarrier: at smem+0x800 completed phase 0 before the TMA load",
                         "brought its 1024 bytes: the transaction bytes expected (here) are fewer than the loads bring",
                         "mbarrier.arrive.expect_tx", NULL};
    expect(ptx, 1, &p, sizeof p, bytes == 1024 ? few : NULL);
  }
  static const char twice[] = HEAD ".shared .align 8 .b64 bar;\n.visible .entry k(.param .u64 out)\n{\n"
      ".reg .b64 %rd<8>;\n.reg .pred %p<4>;\nmbarrier.init.shared.b64 [bar], 2;\n"
      "mbarrier.arrive.shared.b64 %rd2, [bar];\nmbarrier.arrive.shared.b64 %rd3, [bar];\nret;\n}\n";
  uint64_t o = 0;
  const char *two[] = {"mbarrier: this thread arrives twice in phase 0 of at smem+0x0 (pending arrivals 1 of 2)", NULL};
  expect(twice, 1, &o, sizeof o, two);
  /* two threads, one arrival each: clean */
  static const char each[] = HEAD ".shared .align 8 .b64 bar;\n.visible .entry k(.param .u64 out)\n{\n"
      ".reg .b64 %rd<8>;\n.reg .b32 %r<4>;\n.reg .pred %p<4>;\nmov.u32 %r1, %tid.x;\nsetp.ne.u32 %p1, %r1, 0;\n"
      "@!%p1 mbarrier.init.shared.b64 [bar], 2;\nbar.sync 0;\nmbarrier.arrive.shared.b64 %rd2, [bar];\n"
      "WAIT:\nmbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;\n@!%p2 bra WAIT;\nret;\n}\n";
  expect(each, 2, &o, sizeof o, NULL);
}

/* ---- wgmma ---- */

/* A warpgroup fills A and B with bf16 ones and runs one wgmma: with
 * fence.proxy.async before the barrier clean; without it a proxy report;
 * B overwritten between the wgmma and its wait: slot. */
static void test_wgmma_operands(void **state) {
  (void)state;
  char ptx[4096];
  static float out[128 * 4];
  for (int mode = 0; mode < 3; mode++) {
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 1024 .b8 s[4096];\n"
             ".visible .entry k(.param .u64 out)\n{\n.reg .b64 %%rd<12>;\n.reg .b32 %%r<20>;\n.reg .f32 %%f<8>;\n"
             ".reg .pred %%p<4>;\nld.param.u64 %%rd1, [out];\nmov.u32 %%r1, %%tid.x;\n"
             "mov.u64 %%rd2, s;\nmul.wide.u32 %%rd3, %%r1, 16;\nadd.s64 %%rd4, %%rd2, %%rd3;\n"
             "mov.b32 %%r2, 0x3f803f80;\nst.shared.v4.b32 [%%rd4], {%%r2, %%r2, %%r2, %%r2};\n"
             "setp.lt.u32 %%p1, %%r1, 16;\n@!%%p1 bra FILLED;\nst.shared.v4.b32 [%%rd4+2048], {%%r2, %%r2, %%r2, %%r2};\n"
             "FILLED:\n%sbar.sync 0;\n"
             "mov.b64 %%rd5, 0x0000001000080000;\nmov.b64 %%rd6, 0x0000001000080080;\nwgmma.fence.sync.aligned;\n"
             "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%%f0, %%f1, %%f2, %%f3}, %%rd5, %%rd6, 0, 1, 1, 0, 0;\n"
             "wgmma.commit_group.sync.aligned;\n%s"
             "wgmma.wait_group.sync.aligned 0;\nmul.wide.u32 %%rd7, %%r1, 16;\nadd.s64 %%rd7, %%rd1, %%rd7;\n"
             "st.global.v4.f32 [%%rd7], {%%f0, %%f1, %%f2, %%f3};\nret;\n}\n",
             mode == 1 ? "" : "fence.proxy.async.shared::cta;\n",
             mode == 2 ? "@%p1 st.shared.v4.b32 [%rd4+2048], {%r2, %r2, %r2, %r2};\n" : "");
    const char *proxy[] = {"proxy: the wgmma.mma_async reads smem+0x0, written by warp 0 (thread 0)",
                           "no fence.proxy.async", NULL};
    const char *slot[] = {"slot: writes smem+0x800 while the wgmma.mma_async at ptx line",
                          "(warpgroup 0) may still read it: no wgmma.wait_group of it happens before", "st.shared.v4.b32",
                          NULL};
    uint64_t p = (uint64_t)(uintptr_t)out;
    expect(ptx, 128, &p, sizeof p, mode == 0 ? NULL : mode == 1 ? proxy : slot);
  }
}

/* ---- schedules ---- */

/* The report names the schedule and seed; the same seed gives the same
 * report. (The checks follow happens-before, not timing: a race is found
 * under every schedule whose run makes both accesses; the schedule
 * decides which of the two is reported, and the order the kernel's own
 * results see.) */
static void test_schedules(void **state) {
  (void)state;
  /* warp 1 reads what warp 0 wrote after a barrier, then warp 0 writes again with no second barrier */
  static const char ptx[] = HEAD ".shared .align 4 .b32 s[32];\n.visible .entry k(.param .u64 out)\n{\n"
      ".reg .b64 %rd<8>;\n.reg .b32 %r<8>;\n.reg .pred %p<4>;\n"
      "mov.u32 %r1, %tid.x;\nand.b32 %r2, %r1, 31;\nsetp.lt.u32 %p1, %r1, 32;\n"
      "mul.wide.u32 %rd1, %r2, 4;\nmov.u64 %rd2, s;\nadd.s64 %rd2, %rd2, %rd1;\n"
      "@%p1 st.shared.u32 [%rd2], %r1;\nbar.sync 0;\n@!%p1 ld.shared.u32 %r3, [%rd2];\n"
      "@%p1 st.shared.u32 [%rd2], %r2;\nret;\n}\n";
  uint64_t p = 0;
  char err[2048], again[2048];
  int found = 0;
  for (uint64_t seed = 1; seed <= 16; seed++) {
    bool ok = run_sched(ptx, 64, &p, sizeof p, EM_SCHED_ADVERSARIAL, seed, err, sizeof err);
    if (ok) continue;
    found++;
    char tag[64];
    snprintf(tag, sizeof tag, "[schedule adversarial, seed %llu]", (unsigned long long)seed);
    has(err, tag, "the report");
    has(err, "race: ", "the report");
    assert_false(run_sched(ptx, 64, &p, sizeof p, EM_SCHED_ADVERSARIAL, seed, again, sizeof again));
    assert_string_equal(err, again); /* replayed */
  }
  assert_int_equal(found, 16);
  /* the default launch (seed 0) is round-robin, a seed alone random */
  EmLaunch l = {.seed = 0};
  assert_int_equal(em_sched_of(&l), EM_SCHED_RR);
  l.seed = 3;
  assert_int_equal(em_sched_of(&l), EM_SCHED_RANDOM);
  l.sched = EM_SCHED_ADVERSARIAL;
  assert_int_equal(em_sched_of(&l), EM_SCHED_ADVERSARIAL);
  assert_string_equal(em_sched_name(EM_SCHED_ADVERSARIAL), "adversarial");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_race_between_warps), cmocka_unit_test(test_race_through_mbarrier),
      cmocka_unit_test(test_tma_store_proxy),
      cmocka_unit_test(test_tma_load_wait),      cmocka_unit_test(test_mbarrier_counts),
      cmocka_unit_test(test_wgmma_operands),     cmocka_unit_test(test_schedules),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

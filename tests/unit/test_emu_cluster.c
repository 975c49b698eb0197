/* test_emu_cluster.c - thread block clusters on the emulator (emu/cluster.c,
 * emu/sched.c, emu/async.c) on hand-written PTX: the cluster's special
 * registers, distributed shared memory through mapa (shared::cluster and
 * generic addresses; ld, st, atom), barrier.cluster, an arrival on another
 * CTA's mbarrier, a multicast TMA load completing on every destination's
 * mbarrier, the launch's checks, and the reports: a deadlock across the
 * cluster naming each CTA, barrier.cluster misuse, a rank outside the
 * cluster, a race the cluster barrier orders. */
#include "../../emu/emu.h"
#include "testutil.h"

#define HEAD ".version 8.0\n.target sm_90a\n.address_size 64\n"

static bool launch(const char *ptx, const unsigned grid[3], const unsigned cluster[3], unsigned block,
                   const void *params, size_t psize, int sched, uint64_t seed, char *err, size_t errlen) {
  EmLaunch l = {.kernel = "k", .grid = {grid[0], grid[1], grid[2]}, .block = {block, 1, 1}, .params = params,
                .params_size = psize, .sched = sched, .seed = seed, .max_steps = 20000000,
                .cluster = {cluster[0], cluster[1], cluster[2]}};
  return tu_emu_run(ptx, &l, err, errlen);
}

/* every schedule the tests run under: round-robin, two random, two adversarial */
static const int scheds[][2] = {{EM_SCHED_RR, 0}, {EM_SCHED_RANDOM, 1}, {EM_SCHED_RANDOM, 2},
                                {EM_SCHED_ADVERSARIAL, 3}, {EM_SCHED_ADVERSARIAL, 4}};

static void must_run(const char *ptx, const unsigned grid[3], const unsigned cluster[3], unsigned block,
                     const void *params, size_t psize, int s) {
  char err[2048];
  if (!launch(ptx, grid, cluster, block, params, psize, scheds[s][0], (uint64_t)scheds[s][1], err, sizeof err)) {
    print_error("%s\n", err);
    fail();
  }
}

/* ---- special registers ---- */

static const char sreg_ptx[] = HEAD
    ".visible .entry k(.param .u64 out)\n{\n.reg .b64 %rd<8>;\n.reg .b32 %r<16>;\n"
    "ld.param.u64 %rd1, [out];\nmov.u32 %r1, %ctaid.x;\nmov.u32 %r2, %ctaid.y;\nmov.u32 %r3, %nctaid.x;\n"
    "mad.lo.u32 %r4, %r2, %r3, %r1;\nmul.wide.u32 %rd2, %r4, 48;\nadd.s64 %rd3, %rd1, %rd2;\n"
    "mov.u32 %r5, %cluster_ctarank;\nst.global.u32 [%rd3], %r5;\n"
    "mov.u32 %r5, %cluster_nctarank;\nst.global.u32 [%rd3+4], %r5;\n"
    "mov.u32 %r5, %clusterid.x;\nst.global.u32 [%rd3+8], %r5;\n"
    "mov.u32 %r5, %clusterid.y;\nst.global.u32 [%rd3+12], %r5;\n"
    "mov.u32 %r5, %nclusterid.x;\nst.global.u32 [%rd3+16], %r5;\n"
    "mov.u32 %r5, %nclusterid.y;\nst.global.u32 [%rd3+20], %r5;\n"
    "mov.u32 %r5, %cluster_ctaid.x;\nst.global.u32 [%rd3+24], %r5;\n"
    "mov.u32 %r5, %cluster_ctaid.y;\nst.global.u32 [%rd3+28], %r5;\n"
    "mov.u32 %r5, %cluster_nctaid.x;\nst.global.u32 [%rd3+32], %r5;\n"
    "mov.u32 %r5, %cluster_nctaid.y;\nst.global.u32 [%rd3+36], %r5;\n"
    "mov.u32 %r5, %is_explicit_cluster;\nst.global.u32 [%rd3+40], %r5;\n"
    "mov.u32 %r5, %cluster_nctaid.z;\nst.global.u32 [%rd3+44], %r5;\nret;\n}\n";

/* A 4 x 4 grid in 2 x 2 clusters: each CTA's rank (x fastest), cluster id
 * and place in it; a launch without clusters: a cluster of one, not explicit. */
static void test_cluster_sregs(void **state) {
  (void)state;
  static uint32_t out[16][12];
  uint64_t p = (uint64_t)(uintptr_t)out;
  must_run(sreg_ptx, (unsigned[]){4, 4, 1}, (unsigned[]){2, 2, 1}, 32, &p, 8, 0);
  for (unsigned y = 0; y < 4; y++)
    for (unsigned x = 0; x < 4; x++) {
      const uint32_t *o = out[y * 4 + x];
      uint32_t want[12] = {(x % 2) + 2 * (y % 2), 4, x / 2, y / 2, 2, 2, x % 2, y % 2, 2, 2, 1, 1};
      for (int i = 0; i < 12; i++) {
        if (o[i] != want[i]) print_error("CTA %u,%u word %d: %u, want %u\n", x, y, i, o[i], want[i]);
        assert_int_equal(o[i], want[i]);
      }
    }
  memset(out, 0, sizeof out);
  must_run(sreg_ptx, (unsigned[]){2, 1, 1}, (unsigned[]){1, 1, 1}, 32, &p, 8, 0);
  uint32_t want[12] = {0, 1, 1, 0, 2, 1, 0, 0, 1, 1, 0, 1};
  for (int i = 0; i < 12; i++) assert_int_equal(out[1][i], want[i]);
  /* .reqnctapercluster gives the shape when the launch names none */
  char ptx[sizeof sreg_ptx + 64];
  const char *brace = strstr(sreg_ptx, "\n{");
  snprintf(ptx, sizeof ptx, "%.*s\n.reqnctapercluster 2, 1, 1%s", (int)(brace - sreg_ptx), sreg_ptx, brace);
  must_run(ptx, (unsigned[]){4, 1, 1}, (unsigned[]){0, 0, 0}, 32, &p, 8, 0);
  assert_int_equal(out[3][0], 1);
  assert_int_equal(out[3][1], 2);
  assert_int_equal(out[3][2], 1);
  assert_int_equal(out[3][10], 1);
  char err[1024];
  assert_false(launch(sreg_ptx, (unsigned[]){3, 1, 1}, (unsigned[]){2, 1, 1}, 32, &p, 8, EM_SCHED_RR, 0, err, sizeof err));
  has(err, "cluster 2x1x1 with grid 3x1x1", "the report");
}

/* ---- distributed shared memory ---- */

/* 4 CTAs of 64 threads in a cluster: thread i stores rank * 1000 + i into
 * buf[i]; barrier.cluster; it reads buf[i] of the next rank through
 * mapa.shared::cluster (out[cta][i]) and of the previous one through a
 * generic mapa (out[cta][64 + i]), and adds 1 to rank 0's counter with
 * atom.shared::cluster; barrier.cluster again (a window stays while others
 * may read it); thread 0 of rank 0 writes the counter to out[4][0]. */
static const char dsmem_ptx[] = HEAD
    ".shared .align 4 .b32 buf[64];\n.shared .align 4 .b32 cnt;\n"
    ".visible .entry k(.param .u64 out)\n{\n.reg .b64 %rd<16>;\n.reg .b32 %r<16>;\n.reg .pred %p<4>;\n"
    "ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmov.u32 %r2, %cluster_ctarank;\nmov.u32 %r3, %ctaid.x;\n"
    "setp.ne.u32 %p1, %r1, 0;\n@%p1 bra S;\nmov.u32 %r9, 0;\nst.shared.u32 [cnt], %r9;\nS:\n"
    "mul.lo.u32 %r4, %r2, 1000;\nadd.u32 %r4, %r4, %r1;\nshl.b32 %r5, %r1, 2;\nmov.u32 %r6, buf;\n"
    "add.u32 %r6, %r6, %r5;\nst.shared.u32 [%r6], %r4;\n"
    "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n"
    "add.u32 %r7, %r2, 1;\nand.b32 %r7, %r7, 3;\nmapa.shared::cluster.u32 %r8, %r6, %r7;\n"
    "ld.shared::cluster.u32 %r10, [%r8];\n"
    "mul.wide.u32 %rd2, %r3, 512;\nadd.s64 %rd3, %rd1, %rd2;\nmul.wide.u32 %rd4, %r1, 4;\nadd.s64 %rd5, %rd3, %rd4;\n"
    "st.global.u32 [%rd5], %r10;\n"
    "add.u32 %r7, %r2, 3;\nand.b32 %r7, %r7, 3;\ncvt.u64.u32 %rd6, %r6;\ncvta.shared.u64 %rd7, %rd6;\n"
    "mapa.u64 %rd8, %rd7, %r7;\nld.u32 %r11, [%rd8];\nst.global.u32 [%rd5+256], %r11;\n"
    "mov.u32 %r12, cnt;\nmov.u32 %r13, 0;\nmapa.shared::cluster.u32 %r14, %r12, %r13;\n"
    "atom.shared::cluster.add.u32 %r15, [%r14], 1;\n"
    "barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n"
    "or.b32 %r9, %r1, %r2;\nsetp.ne.u32 %p2, %r9, 0;\n@%p2 bra END;\nld.shared.u32 %r9, [cnt];\n"
    "st.global.u32 [%rd1+2048], %r9;\nEND:\nret;\n}\n";

static void test_cluster_dsmem(void **state) {
  (void)state;
  static uint32_t out[4 * 128 + 1];
  uint64_t p = (uint64_t)(uintptr_t)out;
  for (int s = 0; s < 5; s++) {
    memset(out, 0, sizeof out);
    must_run(dsmem_ptx, (unsigned[]){4, 1, 1}, (unsigned[]){4, 1, 1}, 64, &p, 8, s);
    for (unsigned c = 0; c < 4; c++)
      for (unsigned i = 0; i < 64; i++) {
        assert_int_equal(out[c * 128 + i], ((c + 1) % 4) * 1000 + i);
        assert_int_equal(out[c * 128 + 64 + i], ((c + 3) % 4) * 1000 + i);
      }
    assert_int_equal(out[512], 256);
  }
  /* eight CTAs in two clusters of four: each cluster on its own */
  static uint32_t out8[8 * 128 + 1];
  p = (uint64_t)(uintptr_t)out8;
  must_run(dsmem_ptx, (unsigned[]){8, 1, 1}, (unsigned[]){4, 1, 1}, 64, &p, 8, 1);
  for (unsigned c = 0; c < 8; c++) assert_int_equal(out8[c * 128 + 5], ((c % 4 + 1) % 4) * 1000 + 5);
  /* without the second barrier.cluster a CTA may exit while the others still read its window (reported when a
     read comes after its last thread exited), and rank 0 reads its counter while the others may still add to it
     (a race across the cluster): either comes first */
  char ptx[sizeof dsmem_ptx];
  memcpy(ptx, dsmem_ptx, sizeof ptx);
  char *b2 = strstr(ptx, "barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;\n");
  assert_non_null(b2);
  memmove(b2, b2 + 62, strlen(b2 + 62) + 1);
  char err[2048];
  p = (uint64_t)(uintptr_t)out;
  assert_false(launch(ptx, (unsigned[]){4, 1, 1}, (unsigned[]){4, 1, 1}, 64, &p, 8, EM_SCHED_RR, 0, err, sizeof err));
  if (!strstr(err, "whose threads have all exited"))
    has(err, "race: reads smem+0x100, written by CTA 3,0,0 (rank 3) with no barrier.cluster (or mbarrier arrival it "
             "made) between that write and this read", "the report");
}

/* ---- an arrival on another CTA's mbarrier ---- */

/* Cluster of 2: each CTA inits its mbarrier (count 1), barrier.cluster;
 * rank 1 stores 42 into rank 0's word and arrives on rank 0's mbarrier
 * (mbarrier.arrive.release.cluster.shared::cluster, state _) -- or, in the
 * broken form, on its own; rank 0 waits on its mbarrier and copies the
 * word out. */
static void remote_arrive_ptx(char *ptx, size_t n, bool own) {
  snprintf(ptx, n,
           HEAD ".shared .align 8 .b64 bar;\n.shared .align 4 .b32 word;\n"
           ".visible .entry k(.param .u64 out)\n{\n.reg .b64 %%rd<8>;\n.reg .b32 %%r<16>;\n.reg .pred %%p<4>;\n"
           "ld.param.u64 %%rd1, [out];\nmov.u32 %%r2, %%cluster_ctarank;\nsetp.ne.u32 %%p1, %%r2, 0;\n"
           "mbarrier.init.shared.b64 [bar], 1;\n"
           "barrier.cluster.arrive;\nbarrier.cluster.wait;\n@%%p1 bra ONE;\n"
           "W:\nmbarrier.try_wait.parity.shared.b64 %%p2, [bar], 0;\n@!%%p2 bra W;\n"
           "ld.shared.u32 %%r3, [word];\nst.global.u32 [%%rd1], %%r3;\nret;\n"
           "ONE:\nmov.u32 %%r4, word;\nmov.u32 %%r5, 0;\nmapa.shared::cluster.u32 %%r6, %%r4, %%r5;\n"
           "mov.u32 %%r7, 42;\nst.shared::cluster.u32 [%%r6], %%r7;\nmov.u32 %%r8, bar;\n"
           "mapa.shared::cluster.u32 %%r9, %%r8, %s;\n"
           "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%%r9];\nret;\n}\n",
           own ? "%r2" : "%r5");
}

static void test_cluster_remote_mbarrier(void **state) {
  (void)state;
  char ptx[4096], err[2048];
  uint32_t out[2] = {0};
  uint64_t p = (uint64_t)(uintptr_t)out;
  remote_arrive_ptx(ptx, sizeof ptx, false);
  for (int s = 0; s < 5; s++) {
    out[0] = 0;
    must_run(ptx, (unsigned[]){2, 1, 1}, (unsigned[]){2, 1, 1}, 1, &p, 8, s);
    assert_int_equal(out[0], 42);
  }
  /* the arrival on its own mbarrier: rank 0 waits forever, and the report names both CTAs */
  remote_arrive_ptx(ptx, sizeof ptx, true);
  assert_false(launch(ptx, (unsigned[]){2, 1, 1}, (unsigned[]){2, 1, 1}, 1, &p, 8, EM_SCHED_RR, 0, err, sizeof err));
  has(err, "deadlock: every thread of the cluster is blocked", "the report");
  has(err, "in its cluster of 2 CTAs (co-scheduled); CTA 1,0,0 (rank 1) has ended", "the report");
  has(err, "pending arrivals 1 of 1", "the report");
  has(err, "(CTA 0,0,0 rank 0 thread 0,0,0)", "the report");
  /* the store after the arrival: rank 0's read races with it (ordered by nothing across the cluster) */
  remote_arrive_ptx(ptx, sizeof ptx, false);
  char *st = strstr(ptx, "mov.u32 %r7, 42;\nst.shared::cluster.u32 [%r6], %r7;\n");
  assert_non_null(st);
  char line[64];
  size_t ln = strlen("mov.u32 %r7, 42;\nst.shared::cluster.u32 [%r6], %r7;\n");
  memcpy(line, st, ln);
  memmove(st, st + ln, strlen(st + ln) + 1);
  char *ret = strstr(st, "b64 _, [%r9];\n") + strlen("b64 _, [%r9];\n");
  memmove(ret + ln, ret, strlen(ret) + 1);
  memcpy(ret, line, ln);
  for (int s = 0; s < 5; s++) {
    assert_false(launch(ptx, (unsigned[]){2, 1, 1}, (unsigned[]){2, 1, 1}, 1, &p, 8, scheds[s][0],
                        (uint64_t)scheds[s][1], err, sizeof err));
    has(err, "race: reads smem+0x8, written by CTA 1,0,0 (rank 1) with no barrier.cluster (or mbarrier arrival it made)",
        "the report");
  }
  /* a state destination for another CTA's mbarrier */
  remote_arrive_ptx(ptx, sizeof ptx, false);
  char *u = strstr(ptx, "b64 _, [%r9]");
  assert_non_null(u);
  memmove(u + 15, u + 12, strlen(u + 12) + 1);
  memcpy(u, "b64 %rd2, [%r9]", 15);
  assert_false(launch(ptx, (unsigned[]){2, 1, 1}, (unsigned[]){2, 1, 1}, 1, &p, 8, EM_SCHED_RR, 0, err, sizeof err));
  has(err, "its destination must be _", "the report");
}

/* ---- a multicast TMA load ---- */

typedef struct McParams {
  uint64_t out;
  uint8_t pad[56];
  _Alignas(64) EmTensorMap map;
} McParams;

/* Cluster of 2, one thread each: each inits its mbarrier and expects the
 * box's 256 bytes; barrier.cluster; rank 0 loads a 16 x 4 box of u32 at
 * (0, 4) with .multicast::cluster to both (mask 3); each waits on its own
 * mbarrier and copies its box to out[rank]. */
static const char mcast_ptx[] = HEAD
    ".shared .align 128 .b8 box[256];\n.shared .align 8 .b64 bar;\n"
    ".visible .entry k(.param .u64 out, .param .align 64 .b8 map[128])\n{\n"
    ".reg .b64 %rd<16>;\n.reg .b32 %r<16>;\n.reg .pred %p<4>;\n.reg .b16 %rs<2>;\n"
    "ld.param.u64 %rd1, [out];\nmov.b64 %rd2, map;\ncvta.param.u64 %rd2, %rd2;\nmov.u32 %r2, %cluster_ctarank;\n"
    "mbarrier.init.shared.b64 [bar], 1;\nfence.mbarrier_init.release.cluster;\n"
    "mbarrier.arrive.expect_tx.shared.b64 %rd3, [bar], 256;\n"
    "barrier.cluster.arrive;\nbarrier.cluster.wait;\n"
    "setp.ne.u32 %p1, %r2, 0;\n@%p1 bra W;\nmov.u32 %r3, 0;\nmov.u32 %r4, 4;\nmov.u16 %rs1, 3;\n"
    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
    "[box], [%rd2, {%r3, %r4}], [bar], %rs1;\n"
    "W:\nmbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;\n@!%p2 bra W;\n"
    "mul.wide.u32 %rd4, %r2, 256;\nadd.s64 %rd5, %rd1, %rd4;\nmov.u32 %r5, 0;\n"
    "L:\nsetp.ge.u32 %p3, %r5, 256;\n@%p3 bra E;\nmov.u32 %r6, box;\nadd.u32 %r6, %r6, %r5;\n"
    "ld.shared.u32 %r7, [%r6];\ncvt.u64.u32 %rd6, %r5;\nadd.s64 %rd7, %rd5, %rd6;\nst.global.u32 [%rd7], %r7;\n"
    "add.u32 %r5, %r5, 4;\nbra L;\nE:\nbarrier.cluster.arrive;\nbarrier.cluster.wait;\nret;\n}\n";

static void test_cluster_multicast(void **state) {
  (void)state;
  static _Alignas(64) uint32_t g[16 * 16];
  static uint32_t out[2][64];
  for (int i = 0; i < 256; i++) g[i] = (uint32_t)i * 7 + 1;
  McParams p = {.out = (uint64_t)(uintptr_t)out};
  uint64_t dims[2] = {16, 16}, strides[1] = {64};
  uint32_t box[2] = {16, 4}, es[2] = {1, 1};
  char why[256];
  assert_true(em_tmap_encode(&p.map, 2 /* u32 */, 2, g, dims, strides, box, es, 0, 0, 0, 0, NULL, why, sizeof why));
  for (int s = 0; s < 5; s++) {
    memset(out, 0, sizeof out);
    must_run(mcast_ptx, (unsigned[]){2, 1, 1}, (unsigned[]){2, 1, 1}, 1, &p, sizeof p, s);
    for (int r = 0; r < 2; r++)
      for (int i = 0; i < 64; i++) assert_int_equal(out[r][i], g[64 + i]);
  }
  /* a mask naming a rank outside the cluster */
  char ptx[sizeof mcast_ptx], err[2048];
  memcpy(ptx, mcast_ptx, sizeof ptx);
  char *m = strstr(ptx, "mov.u16 %rs1, 3;");
  m[14] = '5';
  assert_false(launch(ptx, (unsigned[]){2, 1, 1}, (unsigned[]){2, 1, 1}, 1, &p, sizeof p, EM_SCHED_RR, 0, err,
                      sizeof err));
  has(err, "CTA mask 0x5 names ranks outside of a cluster of 2 CTAs", "the report");
}

/* ---- reports ---- */

static void test_cluster_reports(void **state) {
  (void)state;
  char ptx[2048], err[2048];
  uint64_t p = 0;
  const char *bad[][2] = {
      {"barrier.cluster.wait;", "barrier.cluster.wait with no barrier.cluster.arrive before it"},
      {"barrier.cluster.arrive;\nbarrier.cluster.arrive;", "barrier.cluster.arrive twice (phase 0)"},
      {"mov.u32 %r1, 2;\nmov.u32 %r2, s;\nmapa.shared::cluster.u32 %r3, %r2, %r1;", "mapa to CTA rank 2 of a cluster of 2"},
      {"mov.u32 %r1, 0x3000000;\nld.shared::cluster.u32 %r2, [%r1];", "names CTA rank 2 of a cluster of 2 CTAs"},
      {"mov.u32 %r1, 0x2000000;\nmbarrier.try_wait.parity.shared.b64 %p1, [%r1], 0;", "is in CTA rank 1's window"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 8 .b32 s[4];\n.visible .entry k(.param .u64 out)\n{\n"
             ".reg .b32 %%r<8>;\n.reg .pred %%p<2>;\n%s\nret;\n}\n", bad[i][0]);
    assert_false(launch(ptx, (unsigned[]){2, 1, 1}, (unsigned[]){2, 1, 1}, 32, &p, 8, EM_SCHED_RR, 0, err, sizeof err));
    has(err, bad[i][1], "the report");
  }
  /* a barrier.cluster that one CTA never reaches: it waits at a bar.sync no one else joins */
  snprintf(ptx, sizeof ptx, HEAD ".visible .entry k(.param .u64 out)\n{\n.reg .b32 %%r<8>;\n.reg .pred %%p<2>;\n"
           "mov.u32 %%r1, %%cluster_ctarank;\nmov.u32 %%r2, %%tid.x;\nor.b32 %%r3, %%r1, %%r2;\n"
           "setp.eq.u32 %%p1, %%r3, 0;\n@%%p1 bar.sync 1, 32;\nbarrier.cluster.arrive;\nbarrier.cluster.wait;\nret;\n}\n");
  assert_false(launch(ptx, (unsigned[]){2, 1, 1}, (unsigned[]){2, 1, 1}, 32, &p, 8, EM_SCHED_RR, 0, err, sizeof err));
  has(err, "deadlock: every thread of the cluster is blocked", "the report");
  has(err, "barrier.cluster (phase 0: 63 of the cluster's 64 live threads arrived, 2 CTAs)", "the report");
}

/* The shared-memory checks take barrier.cluster as a barrier over each CTA:
 * warp 1 reads what warp 0 stored, clean with the cluster barrier between,
 * a race without. */
static void test_cluster_barrier_orders(void **state) {
  (void)state;
  char ptx[2048], err[2048];
  uint64_t p = 0;
  for (int with = 0; with < 2; with++) {
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 4 .b32 s[64];\n.visible .entry k(.param .u64 out)\n{\n"
             ".reg .b32 %%r<8>;\n.reg .pred %%p<2>;\nmov.u32 %%r1, %%tid.x;\nsetp.ge.u32 %%p1, %%r1, 32;\n"
             "shl.b32 %%r2, %%r1, 2;\nmov.u32 %%r3, s;\nadd.u32 %%r3, %%r3, %%r2;\n@!%%p1 st.shared.u32 [%%r3], %%r1;\n"
             "%s\nsub.u32 %%r5, %%r3, 128;\n@%%p1 ld.shared.u32 %%r4, [%%r5];\nret;\n}\n",
             with ? "barrier.cluster.arrive;\nbarrier.cluster.wait;" : "");
    for (int s = 0; s < 5; s++) {
      bool ok = launch(ptx, (unsigned[]){2, 1, 1}, (unsigned[]){2, 1, 1}, 64, &p, 8, scheds[s][0],
                       (uint64_t)scheds[s][1], err, sizeof err);
      if (with && !ok) print_error("%s\n", err);
      assert_true(ok == (with == 1));
      if (!with) has(err, "smem+0x", "the report"); /* a race, or (the reader first) uninitialized */
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cluster_sregs),          cmocka_unit_test(test_cluster_dsmem),
      cmocka_unit_test(test_cluster_remote_mbarrier), cmocka_unit_test(test_cluster_multicast),
      cmocka_unit_test(test_cluster_reports),        cmocka_unit_test(test_cluster_barrier_orders),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_emu_tmapair.c - TMA loads of a CTA pair on the emulator (emu/async.c,
 * emu/check.c) on hand-written PTX: cp.async.bulk.tensor with .cta_group::2
 * completing on the peer CTA's mbarrier (the PTX ISA, cp.async.bulk.tensor:
 * "When .cta_group::2 is specified, the mbarrier object mbar can be in
 * shared memory of either the same CTA as the shared memory destination
 * dstMem or in its peer-CTA"), and with .multicast::cluster (each
 * destination's signal goes to the CTA of its pair whose %cluster_ctarank
 * has the parity of the CTA holding mbar). What the 2-CTA GEMM
 * (examples/gemm/gemm_sm100_2cta.tile) does: each CTA loads its half of the
 * pair's operands and the even CTA's one mbarrier counts both; in clusters
 * of 4, the first pair multicasts A to the second.
 *
 * And the broken variants, each reported: the odd CTA's load without
 * .cta_group::2 on the peer's mbarrier; an mbarrier outside the pair; the
 * even CTA expecting only its own bytes; the even CTA reading the odd CTA's
 * bytes without waiting (a race across the cluster); a multicast mask
 * missing the peer pair's CTA, or the signal sent to the odd CTAs (both a
 * deadlock); a multicast .cta_group::1 load naming another CTA's mbarrier. */
#include "../../emu/emu.h"
#include "testutil.h"

#define HEAD ".version 8.6\n.target sm_100a\n.address_size 64\n"

typedef struct TmParams {
  uint64_t out;
  uint8_t pad[56];
  _Alignas(64) EmTensorMap map;
} TmParams;

static const int scheds[][2] = {{EM_SCHED_RR, 0}, {EM_SCHED_RANDOM, 1}, {EM_SCHED_RANDOM, 2},
                                {EM_SCHED_ADVERSARIAL, 3}, {EM_SCHED_ADVERSARIAL, 4}};

static bool launch(const char *ptx, unsigned n, const TmParams *p, int s, char *err, size_t errlen) {
  EmLaunch l = {.kernel = "k", .grid = {n, 1, 1}, .block = {1, 1, 1}, .params = p, .params_size = sizeof *p,
                .sched = scheds[s][0], .seed = (uint64_t)scheds[s][1], .max_steps = 2000000,
                .cluster = {n, 1, 1}};
  return tu_emu_run(ptx, &l, err, errlen);
}

/* A 16 x 16 u32 tensor; the box is 16 x 4 (256 bytes): rows 4 b .. 4 b + 3 at coordinate (0, 4 b). */
static _Alignas(64) uint32_t g[16 * 16];

static void setup_map(TmParams *p, void *out) {
  for (int i = 0; i < 256; i++) g[i] = (uint32_t)i * 7 + 1;
  *p = (TmParams){.out = (uint64_t)(uintptr_t)out};
  uint64_t dims[2] = {16, 16}, strides[1] = {64};
  uint32_t box[2] = {16, 4}, es[2] = {1, 1};
  char why[256];
  assert_true(em_tmap_encode(&p->map, 2 /* u32 */, 2, g, dims, strides, box, es, 0, 0, 0, 0, NULL, why, sizeof why));
}

/* Copy 256 bytes at shared::cluster address %r20 to global %rd20 (a loop labelled by id; clobbers %r21-%r23,
 * %rd21-%rd22, %p3). */
static const char *copy_out(char *buf, size_t n, int id) {
  snprintf(buf, n,
           "mov.u32 %%r21, 0;\nCL%d:\nsetp.ge.u32 %%p3, %%r21, 256;\n@%%p3 bra CE%d;\nadd.u32 %%r22, %%r20, %%r21;\n"
           "ld.shared::cluster.u32 %%r23, [%%r22];\ncvt.u64.u32 %%rd21, %%r21;\nadd.s64 %%rd22, %%rd20, %%rd21;\n"
           "st.global.u32 [%%rd22], %%r23;\nadd.u32 %%r21, %%r21, 4;\nbra CL%d;\nCE%d:\n",
           id, id, id, id);
  return buf;
}

/* ---- .cta_group::2: both CTAs' loads complete on the even CTA's mbarrier ---- */

/* Cluster of 2, one thread each. Each inits its mbarrier; the even CTA
 * expects EXPECT bytes (both boxes: 512); barrier.cluster. CTA r loads box
 * r (rows 4r..) into its own `box`, completing on the even CTA's mbarrier
 * (mapa to rank 0) with CTAG; the even CTA waits (WAIT), then copies the
 * odd CTA's box (ld.shared::cluster) to out[64..127] and its own to
 * out[0..63];
 * barrier.cluster keeps the odd CTA's window alive meanwhile. */
static void pair_ptx(char *ptx, size_t n, const char *ctag, int expect, bool wait) {
  char c0[512], c1[512];
  snprintf(ptx, n,
           HEAD ".shared .align 128 .b8 box[256];\n.shared .align 8 .b64 bar;\n"
           ".visible .entry k(.param .u64 out, .param .align 64 .b8 map[128])\n{\n"
           ".reg .b64 %%rd<32>;\n.reg .b32 %%r<32>;\n.reg .pred %%p<4>;\n"
           "ld.param.u64 %%rd1, [out];\nmov.b64 %%rd2, map;\ncvta.param.u64 %%rd2, %%rd2;\n"
           "mov.u32 %%r2, %%cluster_ctarank;\nsetp.ne.u32 %%p1, %%r2, 0;\n"
           "mbarrier.init.shared.b64 [bar], 1;\nfence.mbarrier_init.release.cluster;\n"
           "@!%%p1 mbarrier.arrive.expect_tx.shared.b64 %%rd3, [bar], %d;\n"
           "barrier.cluster.arrive;\nbarrier.cluster.wait;\n"
           "mov.u32 %%r3, 0;\nshl.b32 %%r4, %%r2, 2;\nmov.u32 %%r5, bar;\nmov.u32 %%r6, 0;\n"
           "mapa.shared::cluster.u32 %%r7, %%r5, %%r6;\n"
           "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes%s "
           "[box], [%%rd2, {%%r3, %%r4}], [%%r7];\n"
           "@%%p1 bra E;\n%s"
           "mov.u32 %%r8, box;\nmov.u32 %%r9, 1;\nmapa.shared::cluster.u32 %%r20, %%r8, %%r9;\n"
           "add.s64 %%rd20, %%rd1, 256;\n%s"
           "mov.u32 %%r20, box;\nmov.u64 %%rd20, %%rd1;\n%s"
           "E:\nbarrier.cluster.arrive;\nbarrier.cluster.wait;\nret;\n}\n",
           expect, ctag,
           wait ? "W:\nmbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;\n@!%p2 bra W;\n" : "",
           copy_out(c0, sizeof c0, 0), copy_out(c1, sizeof c1, 1));
}

static void test_pair_peer_mbarrier(void **state) {
  (void)state;
  static uint32_t out[128];
  TmParams p;
  setup_map(&p, out);
  char ptx[8192], err[2048];
  pair_ptx(ptx, sizeof ptx, ".cta_group::2", 512, true);
  for (int s = 0; s < 5; s++) {
    memset(out, 0, sizeof out);
    if (!launch(ptx, 2, &p, s, err, sizeof err)) print_error("%s\n%s\n", err, ptx), fail();
    for (int i = 0; i < 128; i++) assert_int_equal(out[i], g[i]); /* box 0 then box 1: rows 0..7 */
  }
  /* the odd CTA's load without .cta_group::2 (::1, as written or the default) on the even CTA's mbarrier */
  for (int v = 0; v < 2; v++) {
    pair_ptx(ptx, sizeof ptx, v ? ".cta_group::1" : "", 512, true);
    assert_false(launch(ptx, 2, &p, 0, err, sizeof err));
    has(err, "the mbarrier at shared::cluster address", "the report");
    has(err, "is in CTA rank 0's window, not this CTA's", "the report");
  }
  /* the even CTA expects its own bytes only: its phase completes on the first box to land, and the other box's
     bytes are reported (they land in a phase that completed without them), or its reads are (that box's bytes,
     read with no wait for the phase they count to) */
  pair_ptx(ptx, sizeof ptx, ".cta_group::2", 256, true);
  for (int s = 0; s < 5; s++) {
    assert_false(launch(ptx, 2, &p, s, err, sizeof err));
    if (!strstr(err, "expected (here) are fewer than the loads bring (CTA 0,0,0 rank 0"))
      has(err, "race: reads smem+0x0", "the report");
  }
  /* the even CTA reads the odd CTA's box without waiting for the mbarrier: a race across the cluster (the load
     issued, its bytes not known to the reader), or a read of bytes nothing wrote yet (not issued) */
  pair_ptx(ptx, sizeof ptx, ".cta_group::2", 512, false);
  int races = 0;
  for (int s = 0; s < 5; s++) {
    assert_false(launch(ptx, 2, &p, s, err, sizeof err));
    if (strstr(err, "uninitialized: reads smem+0x0 of CTA 1,0,0 (rank 1)")) continue;
    has(err, "race: reads smem+0x0 of CTA 1,0,0 (rank 1), written by CTA 1,0,0 (rank 1) with no barrier.cluster",
        "the report");
    races++;
  }
  assert_true(races > 0);
}

/* Cluster of 4: CTA rank 2 names rank 0's mbarrier, which is not in its pair (ranks 2 and 3). */
static void test_pair_not_peer(void **state) {
  (void)state;
  static uint32_t out[128];
  TmParams p;
  setup_map(&p, out);
  char ptx[8192], err[2048];
  pair_ptx(ptx, sizeof ptx, ".cta_group::2", 512, true);
  assert_false(launch(ptx, 4, &p, 0, err, sizeof err));
  has(err, "the .cta_group::2 TMA load completes on an mbarrier of CTA rank 0: it must be this CTA's (rank ",
      "the report");
  if (!strstr(err, "(rank 2) or its peer's in the CTA pair (rank 3)"))
    has(err, "(rank 3) or its peer's in the CTA pair (rank 2)", "the report");
}

/* ---- .multicast::cluster with .cta_group::2: two pairs sharing a box ---- */

/* Cluster of 4 (pairs 0-1 and 2-3), one thread each. Each inits its
 * mbarrier; the even CTAs expect 512 bytes; barrier.cluster. Rank 0
 * multicasts box 0 to ranks 0 and 2 (mask 0b0101) and rank 1 box 1 to ranks
 * 1 and 3 (MASK1), both naming the mbarrier of BARRANK (rank 0: even, so
 * each destination signals its pair's even CTA) with CTAG. The even CTAs
 * wait and copy their own box and the odd peer's out: out[pair][0..127]. */
static void mc_ptx(char *ptx, size_t n, const char *ctag, const char *mask1, int barrank) {
  char c0[512], c1[512];
  snprintf(ptx, n,
           HEAD ".shared .align 128 .b8 box[256];\n.shared .align 8 .b64 bar;\n"
           ".visible .entry k(.param .u64 out, .param .align 64 .b8 map[128])\n{\n"
           ".reg .b64 %%rd<32>;\n.reg .b32 %%r<32>;\n.reg .pred %%p<4>;\n.reg .b16 %%rs<4>;\n"
           "ld.param.u64 %%rd1, [out];\nmov.b64 %%rd2, map;\ncvta.param.u64 %%rd2, %%rd2;\n"
           "mov.u32 %%r2, %%cluster_ctarank;\nand.b32 %%r10, %%r2, 1;\nsetp.ne.u32 %%p1, %%r10, 0;\n"
           "mbarrier.init.shared.b64 [bar], 1;\nfence.mbarrier_init.release.cluster;\n"
           "@!%%p1 mbarrier.arrive.expect_tx.shared.b64 %%rd3, [bar], 512;\n"
           "barrier.cluster.arrive;\nbarrier.cluster.wait;\n"
           "setp.ge.u32 %%p2, %%r2, 2;\n@%%p2 bra S;\n"
           "mov.u32 %%r3, 0;\nshl.b32 %%r4, %%r2, 2;\nmov.u32 %%r5, bar;\nmov.u32 %%r6, %d;\n"
           "mapa.shared::cluster.u32 %%r7, %%r5, %%r6;\nmov.u16 %%rs1, 5;\n@%%p1 mov.u16 %%rs1, %s;\n"
           "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster%s "
           "[box], [%%rd2, {%%r3, %%r4}], [%%r7], %%rs1;\n"
           "S:\n@%%p1 bra E;\n"
           "W:\nmbarrier.try_wait.parity.shared.b64 %%p2, [bar], 0;\n@!%%p2 bra W;\n"
           "shr.u32 %%r11, %%r2, 1;\nmul.wide.u32 %%rd4, %%r11, 512;\nadd.s64 %%rd5, %%rd1, %%rd4;\n"
           "mov.u32 %%r20, box;\nmov.u64 %%rd20, %%rd5;\n%s"
           "mov.u32 %%r8, box;\nadd.u32 %%r9, %%r2, 1;\nmapa.shared::cluster.u32 %%r20, %%r8, %%r9;\n"
           "add.s64 %%rd20, %%rd5, 256;\n%s"
           "E:\nbarrier.cluster.arrive;\nbarrier.cluster.wait;\nret;\n}\n",
           barrank, mask1, ctag, copy_out(c0, sizeof c0, 0), copy_out(c1, sizeof c1, 1));
}

static void test_pair_multicast(void **state) {
  (void)state;
  static uint32_t out[2][128];
  TmParams p;
  setup_map(&p, out);
  char ptx[8192], err[2048];
  mc_ptx(ptx, sizeof ptx, ".cta_group::2", "10", 0);
  for (int s = 0; s < 5; s++) {
    memset(out, 0, sizeof out);
    if (!launch(ptx, 4, &p, s, err, sizeof err)) print_error("%s\n%s\n", err, ptx), fail();
    for (int q = 0; q < 2; q++)
      for (int i = 0; i < 128; i++) assert_int_equal(out[q][i], g[i]); /* each pair: box 0 (even), box 1 (odd) */
  }
  /* rank 1's mask misses rank 3 (the second pair's odd CTA): rank 2's mbarrier never gets those bytes */
  mc_ptx(ptx, sizeof ptx, ".cta_group::2", "2", 0);
  for (int s = 0; s < 5; s += 3) {
    assert_false(launch(ptx, 4, &p, s, err, sizeof err));
    has(err, "deadlock: every thread of the cluster is blocked", "the report");
    has(err, "tx bytes 256", "the report");
  }
  /* rank 1 names its own (odd) mbarrier: the signals go to the odd CTAs, which expect nothing; the even ones wait */
  mc_ptx(ptx, sizeof ptx, ".cta_group::2", "10", 1);
  assert_false(launch(ptx, 4, &p, 0, err, sizeof err));
  has(err, "deadlock: every thread of the cluster is blocked", "the report");
  /* without .cta_group::2 the mbarrier operand must be the issuing CTA's own */
  mc_ptx(ptx, sizeof ptx, "", "10", 0);
  assert_false(launch(ptx, 4, &p, 0, err, sizeof err));
  has(err, "is in CTA rank 0's window, not this CTA's", "the report");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pair_peer_mbarrier),
      cmocka_unit_test(test_pair_not_peer),
      cmocka_unit_test(test_pair_multicast),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

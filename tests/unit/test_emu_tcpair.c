/* test_emu_tcpair.c - the CTA pair's tcgen05 (.cta_group::2) under the
 * emulator (emu/tcgen05_pair.c, emu/tmem.c, emu/ptx_tc.c): the instruction
 * descriptor of M = 256 and 128 field by field, what the pair's MMA refuses, the
 * pair's M = 128 (64 rows of A a CTA, D folded onto the 128 lanes), the
 * pair's MMA with A in tensor memory (each CTA's rows in its own), and a
 * hand-written sm_100a kernel on a cluster of two CTAs: each CTA holds 128
 * rows of A and 64 of B's 128 columns in its own shared memory; warp 0 of
 * each runs tcgen05.alloc/relinquish/dealloc.cta_group::2; thread 0 of the
 * even CTA issues four tcgen05.mma.cta_group::2 (M 256, N 128, K 64) and
 * one tcgen05.commit.cta_group::2 ... multicast::cluster to both CTAs'
 * mbarriers; every warp of each CTA waits on its own mbarrier and loads its
 * 32 lanes of its 128 rows of D. Checked against float64 under every
 * schedule; then the reports of broken variants: the odd CTA not waiting
 * for the commit (a race on its tensor memory), a commit that does not
 * multicast (the odd CTA waits forever), .cta_group::1 mixed with ::2, a
 * launch without a cluster, the odd CTA ending while the pair's MMA may
 * still write its tensor memory. Every kernel is assembled by ptxas for
 * sm_100a (test_ptxas), so the forms are real. */
#include "../../emu/emu.h"
#include "../../emu/tcgen05.h"
#include "testutil.h"
#include "tile/tilec.h"

#include <math.h>

/* ---- the instruction descriptor of M = 256 ---- */

static uint32_t idesc(int ab, int n, int m) { return 1u << 4 | (uint32_t)ab << 7 | (uint32_t)ab << 10 | (uint32_t)(n >> 3) << 17 | (uint32_t)(m >> 4) << 24; }

static void test_idesc_pair(void **state) {
  (void)state;
  EmTcIdesc d;
  char err[256];
  /* PTX ISA's table: M >> 4 in bits 24-28 (256 -> 16 -> bit 28), N >> 3 in bits 17-22 */
  uint32_t v = idesc(1, 128, 256);
  assert_int_equal(v, 0x10200490u);
  assert_true(em_tc_idesc_pair(v, &d, err, sizeof err));
  assert_int_equal(d.m, 256);
  assert_int_equal(d.n, 128);
  assert_int_equal(d.atype, ET_BF16);
  assert_int_equal(d.dtype, ET_F32);
  assert_true(em_tc_idesc_pair(idesc(0, 256, 256), &d, err, sizeof err));
  assert_int_equal(d.n, 256);
  assert_int_equal(d.atype, ET_F16);
  assert_true(em_tc_idesc_pair(idesc(1, 32, 256) | 1u << 15, &d, err, sizeof err));
  assert_true(d.a_mn && !d.b_mn);
  /* one CTA's decoder refuses M = 256; the pair's refuses what it does not run */
  assert_false(em_tc_idesc(v, &d, err, sizeof err));
  assert_true(em_tc_idesc_pair(idesc(1, 128, 128), &d, err, sizeof err)); /* M = 128: 64 rows a CTA */
  assert_int_equal(d.m, 128);
  assert_int_equal(d.dn, 64);
  assert_int_equal(em_tc_idesc_pair(v, &d, err, sizeof err) ? d.dn : 0, 128);
  assert_false(em_tc_idesc_pair(idesc(1, 48, 256), &d, err, sizeof err));
  has(err, "N = 48", "N 48");
  assert_false(em_tc_idesc_pair(idesc(1, 128, 64), &d, err, sizeof err));
  has(err, "M = 64", "M 64");
  assert_false(em_tc_idesc_pair(v | 1u << 23, &d, err, sizeof err));
  has(err, "reserved", "reserved bit");
  EmTcMma op = {.adesc = 0x4000404000010000ull, .bdesc = 0x4000404000010400ull, .d_taddr = 0};
  op.id.raw = v;
  assert_true(em_tc_mma_pair_check(&op, err, sizeof err));
  op.d_taddr = 1u << 16;
  assert_false(em_tc_mma_pair_check(&op, err, sizeof err));
  has(err, "start at lane 0", "lane");
  op.d_taddr = 400;
  assert_false(em_tc_mma_pair_check(&op, err, sizeof err));
  has(err, "pass the 512 columns", "columns");
  /* A in tensor memory: each CTA's 128 rows at the same address, from lane 0 */
  op.d_taddr = 0, op.a_tmem = true, op.a_taddr = 256;
  assert_true(em_tc_mma_pair_check(&op, err, sizeof err));
  op.a_taddr = 32u << 16 | 256;
  assert_false(em_tc_mma_pair_check(&op, err, sizeof err));
  has(err, "rows of A start at lane 0", "A lane");
  op.a_taddr = 508;
  assert_false(em_tc_mma_pair_check(&op, err, sizeof err));
  has(err, "A at tensor-memory address 0x000001fc: columns 508..515", "A columns");
}

/* ---- the pair's MMA with A in tensor memory (em_tc_mma_pair_run, a pure function) ----
 * M 256, N 64, K 16: CTA r holds rows 128 r .. of A at column 256 of its own tensor memory (two bf16 a
 * column), columns 32 r .. of B in its shared memory (K-major, 128-byte swizzle), and rows 128 r .. of D at
 * column 0. Checked against float64, then an A cell never written in the odd CTA is refused. */
static uint16_t rnd_bf16(uint64_t *s, double *v);

static void test_pair_tmem_a(void **state) {
  (void)state;
  EmTmemCells *tm[2] = {calloc(1, sizeof(EmTmemCells)), calloc(1, sizeof(EmTmemCells))};
  static uint8_t img[2][4096];
  double A[256][16], B[64][16];
  uint64_t rs = 991;
  EmTcSdesc db;
  char err[320];
  const uint64_t bdesc = 0x4000404000010000ull; /* K-major, 128-byte swizzle, at shared byte 0 */
  assert_non_null(tm[0]);
  assert_non_null(tm[1]);
  assert_true(em_tc_sdesc(bdesc, "B", &db, err, sizeof err));
  for (int m = 0; m < 256; m++)
    for (int k = 0; k < 16; k++) {
      uint16_t h = rnd_bf16(&rs, &A[m][k]);
      uint32_t *cell = &tm[m / 128]->cell[m % 128][256 + k / 2];
      *cell = (*cell & ~(0xffffu << (16 * (k % 2)))) | (uint32_t)h << (16 * (k % 2));
      tm[m / 128]->def[m % 128][(256 + k / 2) / 8] |= (uint8_t)(1u << ((256 + k / 2) % 8));
    }
  for (int n = 0; n < 64; n++)
    for (int k = 0; k < 16; k++) {
      uint16_t h = rnd_bf16(&rs, &B[n][k]);
      uint64_t a = em_tc_sdesc_addr(&db, false, n % 32, k);
      assert_true(a + 1 < sizeof img[0]);
      img[n / 32][a] = (uint8_t)h, img[n / 32][a + 1] = (uint8_t)(h >> 8);
    }
  EmTcMma op = {.a_tmem = true, .a_taddr = 256, .bdesc = bdesc, .d_taddr = 0, .accumulate = false};
  op.id.raw = idesc(1, 64, 256);
  const uint8_t *sm[2] = {img[0], img[1]};
  size_t sb[2] = {sizeof img[0], sizeof img[1]};
  bool ok = em_tc_mma_pair_run(&op, sm, sb, tm, err, sizeof err);
  if (!ok) print_error("%s\n", err);
  assert_true(ok);
  int bad = 0;
  for (int m = 0; m < 256; m++)
    for (int n = 0; n < 64; n++) {
      double want = 0, mag = 0;
      for (int k = 0; k < 16; k++) want += A[m][k] * B[n][k], mag += fabs(A[m][k] * B[n][k]);
      float got;
      memcpy(&got, &tm[m / 128]->cell[m % 128][n], 4);
      if (!(fabs(got - want) <= 1e-6 * mag + 1e-30) && bad++ < 5)
        print_error("D[%d][%d] = %.9g, want %.9g\n", m, n, (double)got, want);
    }
  assert_int_equal(bad, 0);
  tm[1]->def[5][(256 + 3) / 8] &= (uint8_t)~(1u << ((256 + 3) % 8)); /* the odd CTA's row 5, column 259 */
  assert_false(em_tc_mma_pair_run(&op, sm, sb, tm, err, sizeof err));
  has(err, "row 133 (the odd CTA's lane 5, column 259) was never written", "undefined A");
  free(tm[0]);
  free(tm[1]);
}

/* ---- the pair's M = 128 (em_tc_mma_pair_run): 64 rows of A a CTA, D folded onto the 128 lanes ----
 * M 128, N 128, K 16: CTA r holds rows 64 r .. of A and columns 64 r .. of B in its shared memory (K-major,
 * 128-byte swizzle; A at byte 0, B at 8192), and rows 64 r .. of D at column 32 of its tensor memory: row m's
 * columns 0..63 on lane m, columns 64..127 on lane 64 + m (the data-path layout B), 64 columns in all. Run
 * twice (the second accumulates), checked against float64; column 96 (past D's 64) stays untouched. */
static void test_pair_m128(void **state) {
  (void)state;
  EmTmemCells *tm[2] = {calloc(1, sizeof(EmTmemCells)), calloc(1, sizeof(EmTmemCells))};
  static uint8_t img[2][16384];
  double A[128][16], B[128][16];
  uint64_t rs = 4242;
  EmTcSdesc da, db;
  EmTcIdesc id;
  char err[320];
  const uint64_t adesc = 0x4000404000010000ull, bdesc = adesc + (8192 >> 4);
  assert_non_null(tm[0]);
  assert_non_null(tm[1]);
  assert_true(em_tc_sdesc(adesc, "A", &da, err, sizeof err));
  assert_true(em_tc_sdesc(bdesc, "B", &db, err, sizeof err));
  for (int m = 0; m < 128; m++)
    for (int k = 0; k < 16; k++) {
      uint16_t h = rnd_bf16(&rs, &A[m][k]);
      uint64_t a = em_tc_sdesc_addr(&da, false, m % 64, k);
      img[m / 64][a] = (uint8_t)h, img[m / 64][a + 1] = (uint8_t)(h >> 8);
    }
  for (int n = 0; n < 128; n++)
    for (int k = 0; k < 16; k++) {
      uint16_t h = rnd_bf16(&rs, &B[n][k]);
      uint64_t a = em_tc_sdesc_addr(&db, false, n % 64, k);
      assert_true(a + 1 < sizeof img[0]);
      img[n / 64][a] = (uint8_t)h, img[n / 64][a + 1] = (uint8_t)(h >> 8);
    }
  EmTcMma op = {.adesc = adesc, .bdesc = bdesc, .d_taddr = 32, .accumulate = false};
  op.id.raw = idesc(1, 128, 128);
  assert_true(em_tc_idesc_pair(op.id.raw, &id, err, sizeof err));
  assert_int_equal(id.m, 128);
  assert_int_equal(id.dn, 64);
  assert_true(em_tc_mma_pair_check(&op, err, sizeof err));
  const uint8_t *sm[2] = {img[0], img[1]};
  size_t sb[2] = {sizeof img[0], sizeof img[1]};
  for (int pass = 0; pass < 2; pass++) {
    op.accumulate = pass > 0;
    bool ok = em_tc_mma_pair_run(&op, sm, sb, tm, err, sizeof err);
    if (!ok) print_error("%s\n", err);
    assert_true(ok);
  }
  int bad = 0;
  for (int m = 0; m < 128; m++)
    for (int n = 0; n < 128; n++) {
      double want = 0, mag = 0;
      for (int k = 0; k < 16; k++) want += 2 * A[m][k] * B[n][k], mag += fabs(2 * A[m][k] * B[n][k]);
      float got;
      memcpy(&got, &tm[m / 64]->cell[m % 64 + 64 * (n / 64)][32 + n % 64], 4);
      if (!(fabs(got - want) <= 1e-6 * mag + 1e-30) && bad++ < 5)
        print_error("D[%d][%d] = %.9g, want %.9g\n", m, n, (double)got, want);
    }
  assert_int_equal(bad, 0);
  for (int r = 0; r < 2; r++)
    for (int l = 0; l < 128; l++) assert_int_equal(tm[r]->def[l][96 / 8], 0); /* columns 96.. never written */
  /* D's 64 columns must fit: at column 480 they would pass 512 */
  op.d_taddr = 480;
  assert_false(em_tc_mma_pair_check(&op, err, sizeof err));
  has(err, "columns 480..543", "M 128 columns");
  op.d_taddr = 448;
  assert_true(em_tc_mma_pair_check(&op, err, sizeof err));
  op.a_tmem = true, op.a_taddr = 256;
  assert_false(em_tc_mma_pair_check(&op, err, sizeof err));
  has(err, "M = 256 only", "M 128 A from tensor memory");
  free(tm[0]);
  free(tm[1]);
}

/* ---- the pair's GEMM kernel ---- */

#define HEAD ".version 8.7\n.target sm_100a\n.address_size 64\n"

static char *made[16];
static int nmade;
static char *mixed; /* the kernel mixing .cta_group::1 and ::2: ptxas refuses it too */

enum { P_NOWAIT = 1 /* the odd CTA reads D without waiting on its mbarrier */,
       P_NOMCAST = 2 /* the commit arrives on the even CTA's mbarrier only */,
       P_MIXED = 4 /* the allocation is .cta_group::1 */,
       P_EARLYEXIT = 8 /* the odd CTA exits at once: no wait, no cluster barrier, its columns freed first */,
       P_LATEWRITE = 16 /* the odd CTA's thread 0 stores into its half of A after the cluster barrier */,
       P_NOFENCE_ODD = 32 /* the odd CTA copies its operands with generic stores and no fence.proxy.async */ };

/* img: two images of 24576 bytes (one a CTA: A 128 x 64 at 0, B's 64 columns x 64 at 16384, 128-byte rows,
 * swizzled); out: two 128 x 128 f32 blocks (the CTA's rows of D). */
static char *pair_ptx(int broken) {
  size_t cap = 64 * 1024, n = 0;
  char *s = malloc(cap);
#define P(...) (n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__))
  const char *grp = broken & P_MIXED ? "cta_group::1" : "cta_group::2";
  P(HEAD ".shared .align 1024 .b8 tile[24576];\n.shared .align 8 .b64 bar;\n.shared .align 4 .b32 slot;\n"
      ".visible .entry k(.param .u64 img, .param .u64 out)\n.reqnctapercluster 2, 1, 1\n{\n"
      ".reg .b64 %%rd<40>;\n.reg .b32 %%r<200>;\n.reg .b16 %%rs<4>;\n.reg .pred %%p<10>;\n"
      "ld.param.u64 %%rd1, [img];\nld.param.u64 %%rd2, [out];\nmov.u32 %%r1, %%tid.x;\nshr.u32 %%r10, %%r1, 5;\n"
      "mov.u32 %%r50, %%cluster_ctarank;\nmul.wide.u32 %%rd30, %%r50, 24576;\nadd.u64 %%rd1, %%rd1, %%rd30;\n"
      "mul.wide.u32 %%rd31, %%r50, 65536;\nadd.u64 %%rd2, %%rd2, %%rd31;\nmov.u32 %%r2, %%r1;\n"
      "COPY:\nmul.wide.u32 %%rd3, %%r2, 16;\nadd.u64 %%rd4, %%rd1, %%rd3;\n"
      "ld.global.v4.b32 {%%r3, %%r4, %%r5, %%r6}, [%%rd4];\nmov.u32 %%r7, tile;\nshl.b32 %%r8, %%r2, 4;\n"
      "add.u32 %%r9, %%r7, %%r8;\nst.shared.v4.b32 [%%r9], {%%r3, %%r4, %%r5, %%r6};\nadd.u32 %%r2, %%r2, 128;\n"
      "setp.lt.u32 %%p1, %%r2, 1536;\n@%%p1 bra COPY;\n%sfence.proxy.async.shared::cta;\nFENCED:\n"
      "setp.ne.u32 %%p2, %%r10, 0;\nsetp.ne.u32 %%p3, %%r1, 0;\nsetp.ne.u32 %%p6, %%r50, 0;\n"
      "@%%p2 bra NOALLOC;\nmov.u32 %%r11, slot;\n"
      "tcgen05.alloc.%s.sync.aligned.shared::cta.b32 [%%r11], 128;\n"
      "tcgen05.relinquish_alloc_permit.%s.sync.aligned;\nNOALLOC:\n"
      "@%%p3 bra NOINIT;\nmbarrier.init.shared::cta.b64 [bar], 1;\nNOINIT:\n"
      "tcgen05.fence::before_thread_sync;\nbar.sync 0;\n"
      /* both CTAs' operands, mbarriers and columns are ready before the even CTA issues */
      "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n"
      "tcgen05.fence::after_thread_sync;\n"
      "ld.shared.b32 %%r12, [slot];\nshl.b32 %%r30, %%r10, 21;\nadd.u32 %%r31, %%r12, %%r30;\n",
    broken & P_NOFENCE_ODD ? "setp.ne.u32 %p8, %r50, 0;\n@%p8 bra FENCED;\n" : "", grp, grp);
  if (broken & P_LATEWRITE) /* unordered with the even CTA's MMA, which reads it (before or after) */
    P("@%%p3 bra NOLATE;\n@!%%p6 bra NOLATE;\nmov.u32 %%r40, tile;\nst.shared.b32 [%%r40+64], %%r40;\nNOLATE:\n");
  if (broken & P_EARLYEXIT) /* the odd CTA: free the columns and leave */
    P("@!%%p6 bra EVEN;\n@%%p2 bra END;\ntcgen05.dealloc.%s.sync.aligned.b32 %%r12, 128;\nbra.uni END;\nEVEN:\n", grp);
  /* thread 0 of the even CTA: the descriptors (the same offsets in both CTAs), four MMAs, the commit */
  P("or.pred %%p7, %%p3, %%p6;\n@%%p7 bra WAITMMA;\nmov.u32 %%r13, tile;\nshr.u32 %%r14, %%r13, 4;\n"
    "cvt.u64.u32 %%rd5, %%r14;\nmov.b64 %%rd6, 0x4000404000010000;\nadd.u64 %%rd7, %%rd6, %%rd5;\n"
    "add.u64 %%rd8, %%rd7, 1024;\nmov.u32 %%r15, %u;\n", idesc(1, 128, 256));
  for (int k = 0; k < 4; k++) {
    P("setp.ne.u32 %%p4, %d, 0;\nadd.u64 %%rd9, %%rd7, %d;\nadd.u64 %%rd10, %%rd8, %d;\n", k, 2 * k, 2 * k);
    P("tcgen05.mma.cta_group::2.kind::f16 [%%r12], %%rd9, %%rd10, %%r15, %%p4;\n");
  }
  if (broken & P_NOMCAST) P("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [bar];\n");
  else P("mov.b16 %%rs1, 3;\n"
         "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [bar], %%rs1;\n");
  P("WAITMMA:\n");
  if (broken & P_NOWAIT) P("@%%p6 bra LOAD;\n");
  P("mbarrier.try_wait.parity.shared::cta.b64 %%p5, [bar], 0;\n@!%%p5 bra WAITMMA;\nLOAD:\n"
    "tcgen05.fence::after_thread_sync;\n");
  for (int c = 0; c < 8; c++) {
    P("tcgen05.ld.sync.aligned.32x32b.x16.b32 {");
    for (int i = 0; i < 16; i++) P("%s%%r%d", i ? ", " : "", 60 + i);
    P("}, [%%r31+%d];\ntcgen05.wait::ld.sync.aligned;\n", 16 * c);
    P("mul.wide.u32 %%rd11, %%r1, 512;\nadd.u64 %%rd12, %%rd2, %%rd11;\n");
    for (int i = 0; i < 16; i++) P("st.global.b32 [%%rd12+%d], %%r%d;\n", 4 * (16 * c + i), 60 + i);
  }
  /* the PTX ISA's example: a cluster barrier, then each CTA's warp frees the pair's columns */
  P("tcgen05.fence::before_thread_sync;\nbar.sync 0;\n"
    "barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n"
    "@%%p2 bra END;\ntcgen05.fence::after_thread_sync;\n"
    "tcgen05.dealloc.%s.sync.aligned.b32 %%r12, 128;\nEND:\nret;\n}\n", grp);
#undef P
  assert_true(n < cap);
  if (nmade < 16 && !(broken & P_MIXED)) made[nmade++] = strdup(s);
  else if (broken & P_MIXED) mixed = strdup(s);
  return s;
}

typedef struct {
  uint8_t img[2][24576];
  double a[256][64], b[128][64];
  float out[2][128 * 128];
} Pair;

/* a random bf16: 0 one time in 16, else +-(1 + m) 2^e, e in -6..0 (sums exact in double) */
static uint16_t rnd_bf16(uint64_t *s, double *v) {
  uint64_t r = tu_xorshift(s);
  if ((r & 15) == 0) return *v = 0, 0;
  int e = -(int)((r >> 4) % 7);
  uint32_t m = (uint32_t)(r >> 8) & 127, neg = (r >> 40) & 1;
  *v = ldexp(1.0 + ldexp(m, -7), e) * (neg ? -1 : 1);
  return (uint16_t)(neg << 15 | (uint32_t)(e + 127) << 7 | m);
}

static void pair_init(Pair *g, uint64_t seed) {
  uint64_t s = 77 + seed;
  for (int c = 0; c < 2; c++)
    for (size_t i = 0; i < sizeof g->img[c]; i++) g->img[c][i] = (uint8_t)tu_xorshift(&s);
  for (int c = 0; c < 2; c++)
    for (int r = 0; r < 192; r++) /* 128 rows of A, then 64 columns of B (their K contiguous) */
      for (int k = 0; k < 64; k++) {
        double v;
        uint16_t h = rnd_bf16(&s, &v);
        size_t off = (r < 128 ? 0 : 16384) + (size_t)(r < 128 ? r : r - 128) * 128 + (size_t)k * 2;
        off ^= ((off >> 7) & 7) << 4; /* the 128-byte swizzle */
        g->img[c][off] = (uint8_t)h, g->img[c][off + 1] = (uint8_t)(h >> 8);
        if (r < 128) g->a[128 * c + r][k] = v;
        else g->b[64 * c + r - 128][k] = v;
      }
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < 128 * 128; i++) g->out[c][i] = NAN;
}

static int pair_check(const Pair *g) {
  int bad = 0;
  for (int m = 0; m < 256; m++)
    for (int n = 0; n < 128; n++) {
      double want = 0, mag = 0; /* four MMAs, each rounded to f32: within 1e-6 of the sum of |products| */
      for (int k = 0; k < 64; k++) want += g->a[m][k] * g->b[n][k], mag += fabs(g->a[m][k] * g->b[n][k]);
      double got = g->out[m / 128][(m % 128) * 128 + n];
      if (!(fabs(got - want) <= 1e-6 * mag + 1e-30)) {
        if (bad < 5) print_error("D[%d][%d] = %.9g, want %.9g\n", m, n, got, want);
        bad++;
      }
    }
  return bad;
}

static bool run(const char *ptx, Pair *g, unsigned cluster, int sched, uint64_t seed, char *err, size_t errlen) {
  uint64_t p[2] = {(uint64_t)(uintptr_t)g->img, (uint64_t)(uintptr_t)g->out};
  EmLaunch l = {.kernel = "k", .grid = {2, 1, 1}, .block = {128, 1, 1}, .params = p, .params_size = sizeof p,
                .max_steps = 50000000, .sched = sched, .seed = seed, .cluster = {cluster, 1, 1}};
  return tu_emu_run(ptx, &l, err, errlen);
}

static const int scheds[][2] = {{EM_SCHED_RR, 0}, {EM_SCHED_RANDOM, 1}, {EM_SCHED_RANDOM, 2},
                                {EM_SCHED_ADVERSARIAL, 3}, {EM_SCHED_ADVERSARIAL, 4}};

static void test_pair_gemm(void **state) {
  (void)state;
  char *ptx = pair_ptx(0), err[2048];
  Pair *g = malloc(sizeof *g);
  for (int i = 0; i < 5; i++) {
    pair_init(g, (uint64_t)i);
    bool ok = run(ptx, g, 2, scheds[i][0], (uint64_t)scheds[i][1], err, sizeof err);
    if (!ok) print_error("schedule %d: %s\n", i, err);
    assert_true(ok);
    assert_int_equal(pair_check(g), 0);
  }
  free(g);
  free(ptx);
}

static void must_fail(int broken, unsigned cluster, int sched, const char *const *want) {
  char *ptx = pair_ptx(broken), err[4096];
  Pair *g = malloc(sizeof *g);
  pair_init(g, 9);
  bool ok = run(ptx, g, cluster, sched, 5, err, sizeof err);
  if (ok) print_error("variant %d ran clean\n", broken);
  if (getenv("TCPAIR_SHOW")) print_message("variant %d: %s\n", broken, err);
  assert_false(ok);
  for (; *want; want++) has(err, *want, *want);
  free(g);
  free(ptx);
}

static void test_pair_reports(void **state) {
  (void)state;
  /* the odd CTA reads D before the commit's arrival: a race on its own tensor memory, naming the pair's MMA */
  must_fail(P_NOWAIT, 2, EM_SCHED_ADVERSARIAL,
            (const char *const[]){"race: the tcgen05.ld reads tensor memory columns", "tcgen05.mma", NULL});
  /* the commit arrives on the even CTA's mbarrier only: the odd CTA waits forever */
  must_fail(P_NOMCAST, 2, EM_SCHED_RR, (const char *const[]){"deadlock", NULL});
  /* .cta_group::1 allocation, .cta_group::2 MMA */
  must_fail(P_MIXED, 2, EM_SCHED_RR, (const char *const[]){"tcgen05 with .cta_group::2 after .cta_group::1", NULL});
  /* the odd CTA writes its half of A with no cluster barrier between that and the even CTA's MMA: a race
   * whichever comes first (the MMA reads a write it was not released, as a remote load would, or, as here
   * on both schedules, the write lands on bytes the MMA reads until its commit) */
  must_fail(P_LATEWRITE, 2, EM_SCHED_RR, (const char *const[]){"smem+0x40", NULL});
  must_fail(P_LATEWRITE, 2, EM_SCHED_ADVERSARIAL, (const char *const[]){"smem+0x40", NULL});
  /* the odd CTA's operands written by its threads' generic stores, released by the cluster barrier but never
   * fenced for the async proxy that the even CTA's MMA reads them through: a proxy report on the peer's bytes */
  must_fail(P_NOFENCE_ODD, 2, EM_SCHED_RR, (const char *const[]){"proxy: the tcgen05.mma.cta_group::2 reads smem+",
                                                                  "of the peer CTA (rank 1)", NULL});
  must_fail(P_NOFENCE_ODD, 2, EM_SCHED_ADVERSARIAL, (const char *const[]){"no fence.proxy.async in that CTA", NULL});
  /* the odd CTA frees its columns and exits while the pair's MMA is to write them */
  must_fail(P_EARLYEXIT, 2, EM_SCHED_ADVERSARIAL,
            (const char *const[]){"tcgen05.dealloc of columns 0..127 while the pair's tcgen05.mma", NULL});
}

/* ---- a Tile kernel: the pair's M = 128 with half of A sent by the peer (dsmem_copy) ----
 * Compiled by libtilec for sm_100a and run here: D [128, 128] = A [128, 256] B [256, 128], CTA r holding rows
 * 64 r .. of A and of B^T; each CTA loads its own rows' K half r and the peer's rows' K half r, which it sends
 * into the peer's A (cp.async.bulk.shared::cluster, completing on the peer's mbarrier, which the peer
 * expects); the odd CTA tells the even one its operands are complete; the even CTA issues the M = 128 MMA;
 * each CTA stores its 64 rows of D from the folded layout (lane l: row l % 64, columns 64 (l / 64) ..).
 * Against float64 on three schedules; then two broken kernels: the odd CTA reports ready without waiting
 * for the bytes the even CTA sends it (the MMA reads bytes not yet written), and the source overwritten
 * right after the copy is issued (the copy may still read it). */
static const char *xchg_src =
    "// The CTA pair's M = 128 MMA with half of A's K columns sent by the peer.\n"
    "// D [128, 128] = A [128, 256] B [256, 128]; CTA r holds rows 64 r .. of A\n"
    "// and rows 64 r .. of B^T (B's columns), every K column.\n"
    "kernel xchg(a: *bf16, bt: *bf16, out: *f32) warps(4) cluster(2) {\n"
    "    let a_s = smem(bf16, [64, 256]);        // this CTA's rows of A\n"
    "    let x_s = smem(bf16, [64, 128]);        // the peer's rows, this CTA's K half: sent over\n"
    "    let b_s = smem(bf16, [64, 256]);        // this CTA's 64 columns of B, K-major\n"
    "    let xbar = mbarrier(1, arrive = 1);     // the peer's half of a_s landed\n"
    "    let ready = mbarrier(1, arrive = 2);    // both CTAs' operands are in place (the even CTA's)\n"
    "    let done = mbarrier(1, arrive = 1);\n"
    "    let acc = tmem(f32, [128, 64], pair = true);\n"
    "    tasks {\n"
    "    task main(warps = 4) {\n"
    "        let r = cluster_rank();\n"
    "        let p = r ^ 1;\n"
    "        let rows = arange(0, 64);\n"
    "        let ks = arange(0, 128);\n"
    "        let own = load(a + ((64 * r + rows) * 256)[:, None] + (128 * r + ks)[None, :]);\n"
    "        let peer = load(a + ((64 * p + rows) * 256)[:, None] + (128 * r + ks)[None, :]);\n"
    "        let kk = arange(0, 256);\n"
    "        smem_store(b_s[0], load(bt + ((64 * r + rows) * 256)[:, None] + kk[None, :]));\n"
    "        smem_store(x_s[0], peer);\n"
    "        if r == 0 { smem_store(a_s[0].slice(1, 0, 128), own); } else { smem_store(a_s[0].slice(1, 128, 128), own); }\n"
    "        fence_async_shared();\n"
    "        barrier_expect(xbar[0], 64 * 128 * 2);\n"
    "        task_barrier();\n"
    "        if r == 0 { dsmem_copy(x_s[0], a_s[0].slice(1, 0, 128), xbar[0], cta = p); }\n"
    "        else { dsmem_copy(x_s[0], a_s[0].slice(1, 128, 128), xbar[0], cta = p); }\n"
    "        barrier_wait(xbar[0], 0);\n"
    "        barrier_arrive(ready[0], cta = 0);\n"
    "        if r == 0 {\n"
    "            barrier_wait(ready[0], 0);\n"
    "            mma_async(a_s[0], b_s[0].trans(), acc[0], accumulate = false, commit = done[0]);\n"
    "        }\n"
    "        barrier_wait(done[0], 0);\n"
    "        let d = tmem_load(acc[0]);              // lane l: row l % 64, columns 64 (l / 64) ..\n"
    "        let l = arange(0, 128);\n"
    "        let row = 64 * r + l % 64;\n"
    "        let col = 64 * (l / 64);\n"
    "        store(out + (row * 128 + col)[:, None] + arange(0, 64)[None, :], d);\n"
    "    }\n"
    "    }\n"
    "}\n";

static size_t xchg_smem; /* the kernel's shared memory (its metadata's "smem" line) */

static char *xchg_ptx(const char *from, const char *to) {
  char *src = strdup(xchg_src);
  if (from) {
    char *at = strstr(src, from);
    assert_non_null(at);
    size_t n = strlen(src) + strlen(to) + 1;
    char *t = malloc(n);
    snprintf(t, n, "%.*s%s%s", (int)(at - src), src, to, at + strlen(from));
    free(src);
    src = t;
  }
  tilec_options o;
  tilec_options_init(&o);
  o.arch = "sm_100a";
  o.emit = TILEC_EMIT_PTX;
  tilec_result *r = NULL;
  tilec_status st = tilec_compile("xchg.tile", src, strlen(src), &o, &r);
  if (st != TILEC_OK) print_error("%s\n", tilec_result_diagnostics(r));
  assert_int_equal(st, TILEC_OK);
  size_t len;
  const char *ptx = tilec_result_output(r, &len);
  char *out = strndup(ptx, len);
  const char *meta = tilec_result_metadata(r), *sm = meta ? strstr(meta, "\nsmem ") : NULL;
  assert_non_null(sm);
  xchg_smem = (size_t)strtoull(sm + 6, NULL, 10);
  tilec_result_free(r);
  free(src);
  if (nmade < 16) made[nmade++] = strdup(out);
  return out;
}

typedef struct {
  uint16_t a[128 * 256], bt[128 * 256];
  double ad[128][256], bd[128][256];
  float out[128 * 128];
} Xchg;

static bool xchg_run(const char *ptx, Xchg *x, int sched, uint64_t seed, char *err, size_t errlen) {
  uint64_t p[3] = {(uint64_t)(uintptr_t)x->a, (uint64_t)(uintptr_t)x->bt, (uint64_t)(uintptr_t)x->out};
  for (int i = 0; i < 128 * 128; i++) x->out[i] = NAN;
  EmLaunch l = {.kernel = "xchg", .grid = {2, 1, 1}, .block = {128, 1, 1}, .params = p, .params_size = sizeof p,
                .max_steps = 200000000, .sched = sched, .seed = seed, .cluster = {2, 1, 1},
                .dyn_smem = xchg_smem};
  return tu_emu_run(ptx, &l, err, errlen);
}

static void test_tile_exchange(void **state) {
  (void)state;
  Xchg *x = malloc(sizeof *x);
  assert_non_null(x);
  uint64_t rs = 2024;
  for (int i = 0; i < 128 * 256; i++) {
    x->a[i] = rnd_bf16(&rs, &x->ad[i / 256][i % 256]);
    x->bt[i] = rnd_bf16(&rs, &x->bd[i / 256][i % 256]);
  }
  char *ptx = xchg_ptx(NULL, NULL), err[2048];
  has(ptx, "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes", "the bulk copy");
  has(ptx, "tcgen05.mma.cta_group::2", "the pair's MMA");
  for (int i = 0; i < 3; i++) {
    int sc = i == 0 ? EM_SCHED_RR : i == 1 ? EM_SCHED_RANDOM : EM_SCHED_ADVERSARIAL;
    bool ok = xchg_run(ptx, x, sc, (uint64_t)i + 3, err, sizeof err);
    if (!ok) print_error("schedule %d: %s\n", i, err);
    assert_true(ok);
    int bad = 0;
    for (int m = 0; m < 128; m++)
      for (int n = 0; n < 128; n++) {
        double want = 0, mag = 0; /* 16 MMAs, each rounded to f32 */
        for (int k = 0; k < 256; k++) want += x->ad[m][k] * x->bd[n][k], mag += fabs(x->ad[m][k] * x->bd[n][k]);
        double got = x->out[m * 128 + n];
        if (!(fabs(got - want) <= 4e-6 * mag + 1e-30) && bad++ < 5)
          print_error("D[%d][%d] = %.9g, want %.9g\n", m, n, got, want);
      }
    assert_int_equal(bad, 0);
  }
  free(ptx);
  /* the odd CTA arrives on the even CTA's `ready` without waiting for the bytes sent to it */
  ptx = xchg_ptx("barrier_wait(xbar[0], 0);", "if r == 0 { barrier_wait(xbar[0], 0); }");
  bool ok = xchg_run(ptx, x, EM_SCHED_ADVERSARIAL, 5, err, sizeof err);
  if (getenv("TCPAIR_SHOW")) print_message("no wait: %s\n", err);
  assert_false(ok);
  has(err, "tcgen05.mma.cta_group::2", "the MMA reads them");
  free(ptx);
  /* the source of the copy overwritten while the copy may still read it */
  ptx = xchg_ptx("    barrier_wait(xbar[0], 0);", "    task_barrier();\n    smem_store(x_s[0], own);\n    task_barrier();\n    barrier_wait(xbar[0], 0);");
  ok = xchg_run(ptx, x, EM_SCHED_ADVERSARIAL, 5, err, sizeof err);
  if (getenv("TCPAIR_SHOW")) print_message("overwrite: %s\n", err);
  assert_false(ok);
  has(err, "the source of the bulk copy into CTA rank", "the source overwritten");
  free(ptx);
  free(x);
}

static void test_ptxas(void **state) {
  (void)state;
  const char *ptxas = tu_ptxas_path();
  if (!ptxas) {
    if (getenv("TILE_ALLOW_MISSING_TOOLS")) {
      print_message("[  SKIP    ] no ptxas (TILE_ALLOW_MISSING_TOOLS is set): the sm_100a forms are not assembled\n");
      skip();
    }
    fail_msg("no ptxas: test_ptxas assembles the kernels for sm_100a (set TILE_ALLOW_MISSING_TOOLS=1 to skip)");
  }
  assert_true(nmade >= 4);
  char dir[512], path[600], cmd[8192];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tu_ptxas_each(ptxas, "sm_100a", (const char *const *)made, nmade, dir);
  /* the emulator's rule is ptxas's: one .cta_group in a kernel */
  assert_non_null(mixed);
  snprintf(path, sizeof path, "%s/mixed.ptx", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(mixed, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "'%s' -arch=sm_100a '%s' -o '%s/mixed.cubin' 2>'%s/mixed.log'", ptxas, path, dir, dir);
  assert_int_not_equal(system(cmd), 0);
  snprintf(path, sizeof path, "%s/mixed.log", dir);
  char *log = tu_read_file(path, NULL);
  assert_non_null(log);
  has(log, ".cta_group::1) and CTA pair granularity(.cta_group::2)", "ptxas's refusal");
  free(log);
  free(mixed);
  mixed = NULL;
  tu_rmtree(dir);
  for (int i = 0; i < nmade; i++) free(made[i]);
  nmade = 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_idesc_pair),
      cmocka_unit_test(test_pair_tmem_a),
      cmocka_unit_test(test_pair_m128),
      cmocka_unit_test(test_pair_gemm),
      cmocka_unit_test(test_pair_reports),
      cmocka_unit_test(test_tile_exchange),
      cmocka_unit_test(test_ptxas),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

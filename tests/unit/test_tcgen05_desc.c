/* test_tcgen05_desc.c - the Blackwell MMA descriptors (compiler/desc.c)
 * field by field, the register layout of tcgen05.ld/st 32x32b that the
 * compiler gives tmem_load / tmem_store, and the PTX an sm_100a kernel gets.
 *
 * The expected fields are written out here from the tables, independently
 * of desc.c (each checked against two sources, docs/blackwell.md):
 *   instruction descriptor, .kind::f16: PTX ISA 9.7.16.4.2 Table 42 and
 *     CUTLASS cute/arch/mma_sm100_desc.hpp (UMMA::InstrDescriptor);
 *   shared-memory descriptor: PTX ISA 9.7.16.4 ("Shared memory descriptor"),
 *     CUTLASS UMMA::SmemDescriptor / UMMA::LayoutType and MLIR's
 *     nvvm.tcgen05.mma_smem_desc table (NVVMOps.td);
 *   wgmma's descriptor (sm_90a): PTX ISA 9.7.15.5.1.2.2, CUTLASS
 *     GmmaDescriptor;
 *   tcgen05.ld/st .32x32b: PTX ISA 9.7.16.8.x "Matrix fragments for
 *     tcgen05.ld/st .32x32b" (thread t of the warp gets TMEM lane base + t,
 *     register r column base + r) and the rule that warp w of a warpgroup
 *     reaches lanes 32 (w % 4) .. 32 (w % 4) + 31. */
#include "testutil.h"
#include "tilec_int.h"
#include "tile/tilec.h"

static uint64_t field(uint64_t x, int lo, int width) { return (x >> lo) & ((1ull << width) - 1); }

/* ---- instruction descriptor -------------------------------------------- */

static void check_idesc(int m, int n, bool bf16, bool a_mn, bool b_mn) {
  uint32_t d = dsc_idesc_f16(m, n, bf16, a_mn, b_mn);
  assert_int_equal(field(d, 0, 2), 0);             /* sparsity selector */
  assert_int_equal(field(d, 2, 1), 0);             /* dense */
  assert_int_equal(field(d, 3, 1), 0);             /* no saturate */
  assert_int_equal(field(d, 4, 2), 1);             /* D: F32 = 1 */
  assert_int_equal(field(d, 6, 1), 0);             /* reserved */
  assert_int_equal(field(d, 7, 3), bf16 ? 1 : 0);  /* A: F16 = 0, BF16 = 1 */
  assert_int_equal(field(d, 10, 3), bf16 ? 1 : 0); /* B */
  assert_int_equal(field(d, 13, 1), 0);            /* negate A */
  assert_int_equal(field(d, 14, 1), 0);            /* negate B */
  assert_int_equal(field(d, 15, 1), a_mn);         /* transpose A (M-major) */
  assert_int_equal(field(d, 16, 1), b_mn);         /* transpose B (N-major) */
  assert_int_equal(field(d, 17, 6), n >> 3);       /* N >> 3 */
  assert_int_equal(field(d, 23, 1), 0);            /* reserved */
  assert_int_equal(field(d, 24, 5), m >> 4);       /* M >> 4 */
  assert_int_equal(field(d, 29, 1), 0);            /* reserved */
  assert_int_equal(field(d, 30, 2), 0);            /* max shift (.ws only) */
}

static void test_idesc_fields(void **state) {
  (void)state;
  for (int n = 16; n <= 256; n += 16)
    for (int t = 0; t < 8; t++) check_idesc(128, n, t & 1, t >> 1 & 1, t >> 2 & 1);
  for (int n = 8; n <= 256; n += 8) check_idesc(64, n, true, false, false);
  for (int n = 32; n <= 256; n += 32) check_idesc(256, n, true, false, false); /* a CTA pair's M = 256 */
}

/* Whole words, computed by hand from the table: what gemm_sm100 uses. */
static void test_idesc_words(void **state) {
  (void)state;
  /* bf16 x bf16 -> f32, M 128, N 256, both K-major:
   * 1<<4 | 1<<7 | 1<<10 | 32<<17 | 8<<24 */
  assert_int_equal(dsc_idesc_f16(128, 256, true, false, false), 0x08400490u);
  /* f16, M 128, N 128, K-major: 1<<4 | 16<<17 | 8<<24 */
  assert_int_equal(dsc_idesc_f16(128, 128, false, false, false), 0x08200010u);
  /* bf16, M 128, N 64, B N-major (P V with V's N contiguous):
   * 1<<4 | 1<<7 | 1<<10 | 1<<16 | 8<<17 | 8<<24 */
  assert_int_equal(dsc_idesc_f16(128, 64, true, false, true), 0x08110490u);
  /* the CTA pair's (gemm_sm100_2cta): bf16, M 256, N 256, K-major: 1<<4 | 1<<7 | 1<<10 | 32<<17 | 16<<24 */
  assert_int_equal(dsc_idesc_f16(256, 256, true, false, false), 0x10400490u);
}

/* ---- shared-memory descriptors ----------------------------------------- */

static void test_smem_desc_sm100(void **state) {
  (void)state;
  static const struct { int swizzle, code; } sw[] = {{0, 0}, {128, 2}, {64, 4}, {32, 6}};
  static const int64_t offs[] = {16, 128, 1024, 2048, 16384, 32768, 262128};
  for (size_t s = 0; s < sizeof sw / sizeof sw[0]; s++)
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
      for (size_t j = 0; j < sizeof offs / sizeof offs[0]; j++) {
        uint64_t d = dsc_smem_hi(offs[i], offs[j], sw[s].swizzle, true);
        assert_int_equal(field(d, 0, 14), 0);                  /* start: ORed in at run time */
        assert_int_equal(field(d, 14, 2), 0);                  /* reserved */
        assert_int_equal(field(d, 16, 14), offs[i] >> 4);      /* LBO >> 4 */
        assert_int_equal(field(d, 30, 2), 0);                  /* reserved */
        assert_int_equal(field(d, 32, 14), offs[j] >> 4);      /* SBO >> 4 */
        assert_int_equal(field(d, 46, 3), 1);                  /* fixed 0b001: the version */
        assert_int_equal(field(d, 49, 3), 0);                  /* base offset */
        assert_int_equal(field(d, 52, 1), 0);                  /* LBO mode: relative */
        assert_int_equal(field(d, 53, 8), 0);                  /* fixed 0 */
        assert_int_equal(field(d, 61, 3), (uint64_t)sw[s].code); /* swizzle */
      }
  /* the K-major 128-byte-swizzled operand of gemm_sm100: LBO 16 (unused), SBO 1024 */
  assert_true(dsc_smem_hi(16, 1024, 128, true) == 0x4000404000010000ull);
  /* and its start field */
  assert_int_equal(dsc_smem_start(0x2A400), 0x2A40);
  assert_int_equal(dsc_smem_start(0x7FFF0), 0x3FFF); /* 18-bit addresses: the top bits go */
  assert_int_equal(dsc_smem_start(0x40010), 0x1);
}

static void test_smem_desc_sm90(void **state) {
  (void)state;
  static const struct { int swizzle, code; } sw[] = {{0, 0}, {128, 1}, {64, 2}, {32, 3}};
  for (size_t s = 0; s < sizeof sw / sizeof sw[0]; s++) {
    uint64_t d = dsc_smem_hi(128 * 256, 1024, sw[s].swizzle, false);
    assert_int_equal(field(d, 16, 14), 128 * 256 >> 4);
    assert_int_equal(field(d, 32, 14), 1024 >> 4);
    assert_int_equal(field(d, 46, 16), 0); /* no version bit, base offset 0, reserved */
    assert_int_equal(field(d, 62, 2), (uint64_t)sw[s].code);
  }
  /* what lower_hw.c builds for wgmma (K-major, 128-byte swizzle) */
  assert_true(dsc_smem_hi(16, 1024, 128, false) == ((1ull << 16) | (64ull << 32) | (1ull << 62)));
  /* the 128-byte swizzle sets bit 62 in both encodings */
  assert_true(field(dsc_smem_hi(16, 1024, 128, true), 62, 1) == 1);
}

static void test_kmajor_steps(void **state) {
  (void)state;
  /* bf16, 128-byte rows: 16 elements are 32 bytes, 2 descriptor units;
   * the 5th step of a 2-block-wide operand is the next column block,
   * rows x 128 bytes further */
  for (int k = 0; k < 4; k++) assert_int_equal(dsc_kmajor_step(2, 128, k), 2 * k);
  assert_int_equal(dsc_kmajor_step(2, 128, 4), 128 * 128 >> 4);
  assert_int_equal(dsc_kmajor_step(2, 256, 5), (256 * 128 + 32) >> 4);
  assert_int_equal(dsc_kmajor_step(2, 64, 7), (64 * 128 + 96) >> 4);
}

/* ---- tcgen05.ld/st 32x32b register layout ------------------------------ */

static void test_32x32b_layout(void **state) {
  (void)state;
  Ctx *c = calloc(1, sizeof *c);
  ar_init(&c->arena);
  for (int W = 1; W <= 4; W *= 2)
    for (int C = 1; C <= 256; C *= 2) {
      /* the layout passes.c gives tmem_load's result (tmem_layout) */
      int spt[2] = {1, C}, tpw[2] = {32, 1}, wpc[2] = {W, 1}, order[2] = {1, 0};
      const Layout *l = ly_blocked(c, 2, spt, tpw, wpc, order);
      LinLayout lin;
      const char *why = NULL;
      assert_true(ly_linear(l, 2, (int[]){32 * W, C}, W, &lin, &why));
      for (int w = 0; w < W; w++)
        for (int t = 0; t < 32; t++)
          for (int r = 0; r < C; r++) {
            /* coordinate of (register r, lane t, warp w): XOR of the bases */
            int row = 0, col = 0;
            for (int i = 0; i < lin.nreg; i++)
              if (r >> i & 1) row ^= lin.reg[i][0], col ^= lin.reg[i][1];
            for (int i = 0; i < lin.nlane; i++)
              if (t >> i & 1) row ^= lin.lane[i][0], col ^= lin.lane[i][1];
            for (int i = 0; i < lin.nwarp; i++)
              if (w >> i & 1) row ^= lin.warp[i][0], col ^= lin.warp[i][1];
            /* 32x32b: TMEM lane 32 w + t (the warp's own 32 lanes), column r */
            assert_int_equal(row, 32 * w + t);
            assert_int_equal(col, r);
          }
    }
  ar_free(&c->arena);
  free(c);
}

/* ---- the PTX of an sm_100a kernel -------------------------------------- */

static char *compile_ptx(const char *path) {
  tilec_options o;
  tilec_options_init(&o);
  o.emit = TILEC_EMIT_PTX;
  o.arch = "sm_100a";
  tilec_result *r = NULL;
  tilec_status st = tilec_compile_file(path, &o, &r);
  assert_non_null(r);
  if (st != TILEC_OK) fprintf(stderr, "%s\n", tilec_result_diagnostics(r));
  assert_int_equal(st, TILEC_OK);
  size_t n;
  const char *p = tilec_result_output(r, &n);
  char *s = strdup(p);
  tilec_result_free(r);
  return s;
}

static void test_gemm_ptx(void **state) {
  (void)state;
  char *p = compile_ptx(TILE_SRC_DIR "/examples/gemm/gemm_sm100.tile");
  /* the forms the emulator reads (docs/blackwell.md) */
  has(p, "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", "ptx");
  has(p, "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;", "ptx");
  has(p, "tcgen05.dealloc.cta_group::1.sync.aligned.b32", "ptx");
  has(p, "tcgen05.mma.cta_group::1.kind::f16", "ptx");
  has(p, "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64", "ptx");
  has(p, "tcgen05.ld.sync.aligned.32x32b.x64.b32", "ptx");
  has(p, "tcgen05.wait::ld.sync.aligned;", "ptx");
  has(p, "tcgen05.fence::before_thread_sync;", "ptx");
  has(p, "tcgen05.fence::after_thread_sync;", "ptx");
  lacks(p, "wgmma", "ptx");
  /* the instruction descriptor and the descriptors' constant part, as
   * computed by hand above (decimal in the PTX) */
  has(p, "138413200;", "ptx");            /* 0x08400490 */
  has(p, "4611756662049538048;", "ptx");  /* 0x4000404000010000 */
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_idesc_fields),  cmocka_unit_test(test_idesc_words),
      cmocka_unit_test(test_smem_desc_sm100), cmocka_unit_test(test_smem_desc_sm90),
      cmocka_unit_test(test_kmajor_steps),  cmocka_unit_test(test_32x32b_layout),
      cmocka_unit_test(test_gemm_ptx),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

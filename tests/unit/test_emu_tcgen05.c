/* test_emu_tcgen05.c - Blackwell's tcgen05 under the emulator (emu/tcgen05.c,
 * emu/tmem.c, emu/ptx_tc.c): the instruction and shared-memory descriptors
 * field by field against the PTX ISA's tables; one .kind::f16 MMA on random
 * bf16/f16 operands against a float64 product, for every M/N, major-ness and
 * swizzle, A from shared and from tensor memory; the tcgen05.ld/st lane
 * layouts against CUTLASS's thread-value layouts (the ISA draws them only);
 * and hand-written sm_100a PTX kernels through em_launch: alloc -> mma ->
 * commit -> mbarrier wait -> ld -> st.global against float64, the
 * asynchrony (a late read of shared memory, results only after the commit),
 * and the reports (over-allocation, double dealloc, use after dealloc, a CTA
 * that ends holding columns, a warp outside its lane quarter, an accumulator
 * never written, a register read before tcgen05.wait::ld, ...). Every kernel
 * here is assembled by ptxas for sm_100a (test_ptxas), so the forms are real.
 *
 * The operand writers build tiles the way TMA and tilec do (rows of S bytes,
 * column blocks, the swizzle applied to offsets in a 1024-byte aligned tile),
 * not from descriptor arithmetic; the descriptors then name what the tile is
 * (as in test_emu_wgmma.c, whose conventions these follow). Values have
 * bounded exponents, so the float64 sums are exact in any order and the
 * reference is the exact result rounded once. */
#include "testutil.h"
#include "../../emu/emu.h"
#include "../../emu/tcgen05.h"

#include <math.h>
#include <unistd.h>

typedef struct {
  uint16_t bits;
  double v;
} H;

/* a random bf16 or f16: 0 one time in 16, else +-(1 + m) 2^e, e in -6..0 */
static H rnd_half(uint64_t *s, bool f16) {
  uint64_t r = tu_xorshift(s);
  H h = {0, 0.0};
  if ((r & 15) == 0) return h;
  int e = -(int)((r >> 4) % 7), mb = f16 ? 10 : 7;
  uint32_t m = (uint32_t)(r >> 8) & ((1u << mb) - 1), neg = (r >> 40) & 1;
  h.v = ldexp(1.0 + ldexp(m, -mb), e) * (neg ? -1 : 1);
  h.bits = (uint16_t)(neg << 15 | (uint32_t)(e + (f16 ? 15 : 127)) << mb | m);
  return h;
}

/* a random f32 accumulator: +-(1 + m) 2^e, e in -8..2 */
static float rnd_acc(uint64_t *s) {
  uint64_t r = tu_xorshift(s);
  int e = (int)((r >> 4) % 11) - 8;
  return (float)(ldexp(1.0 + ldexp((double)((r >> 8) & 0x7fffff), -23), e) * ((r >> 40) & 1 ? -1 : 1));
}

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float f32_from(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* ---- descriptors, field by field ---- */

/* The instruction descriptor as the PTX ISA's table lays it out (.kind::f16). */
static uint32_t idesc(int dt, int at, int bt, int nega, int negb, int tra, int trb, int n, int m) {
  return (uint32_t)dt << 4 | (uint32_t)at << 7 | (uint32_t)bt << 10 | (uint32_t)nega << 13 | (uint32_t)negb << 14 |
         (uint32_t)tra << 15 | (uint32_t)trb << 16 | (uint32_t)(n >> 3) << 17 | (uint32_t)(m >> 4) << 24;
}

static void test_idesc(void **state) {
  (void)state;
  EmTcIdesc d;
  char err[256];
  /* bf16 x bf16 -> f32, M 128, N 256, both K-major: 0x08400490 (bits 4, 7, 10; 32 << 17; 8 << 24) */
  assert_int_equal(idesc(1, 1, 1, 0, 0, 0, 0, 256, 128), 0x08400490u);
  assert_true(em_tc_idesc(0x08400490u, &d, err, sizeof err));
  assert_int_equal(d.m, 128);
  assert_int_equal(d.n, 256);
  assert_int_equal(d.atype, ET_BF16);
  assert_int_equal(d.btype, ET_BF16);
  assert_int_equal(d.dtype, ET_F32);
  assert_false(d.a_mn || d.b_mn || d.neg_a || d.neg_b || d.sparse || d.sat);
  /* f16, M 64, N 8, A negated and M-major, B N-major */
  uint32_t v = idesc(1, 0, 0, 1, 0, 1, 1, 8, 64);
  assert_int_equal(v, 0x0403a010u);
  assert_true(em_tc_idesc(v, &d, err, sizeof err));
  assert_int_equal(d.m, 64);
  assert_int_equal(d.n, 8);
  assert_int_equal(d.atype, ET_F16);
  assert_true(d.neg_a && !d.neg_b && d.a_mn && d.b_mn);
  /* each field alone */
  assert_true(em_tc_idesc(idesc(1, 1, 1, 0, 1, 0, 0, 16, 128), &d, err, sizeof err) && d.neg_b && !d.neg_a);
  assert_true(em_tc_idesc(idesc(1, 1, 1, 0, 0, 0, 1, 48, 64), &d, err, sizeof err) && d.b_mn && !d.a_mn && d.n == 48);
  /* every N of each M */
  for (int n = 8; n <= 256; n += 8) {
    assert_true(em_tc_idesc(idesc(1, 0, 0, 0, 0, 0, 0, n, 64), &d, err, sizeof err));
    assert_int_equal(d.n, n);
    assert_int_equal(em_tc_idesc(idesc(1, 0, 0, 0, 0, 0, 0, n, 128), &d, err, sizeof err), n % 16 == 0);
  }
  /* refusals, each with its reason */
  struct { uint32_t v; const char *why; } bad[] = {
      {idesc(1, 1, 1, 0, 0, 0, 0, 64, 128) | 1u << 6, "reserved"},
      {idesc(1, 1, 1, 0, 0, 0, 0, 64, 128) | 1u << 23, "reserved"},
      {idesc(1, 1, 1, 0, 0, 0, 0, 64, 128) | 1u << 29, "reserved"},
      {idesc(1, 1, 1, 0, 0, 0, 0, 64, 128) | 1u << 2, "sparse"},
      {idesc(1, 1, 1, 0, 0, 0, 0, 64, 128) | 1u << 3, "saturate"},
      {idesc(1, 1, 1, 0, 0, 0, 0, 64, 128) | 1u << 30, "maximum shift"},
      {idesc(0, 1, 1, 0, 0, 0, 0, 64, 128), "f16 D"},
      {idesc(2, 1, 1, 0, 0, 0, 0, 64, 128), "D type 2"},
      {idesc(1, 2, 2, 0, 0, 0, 0, 64, 128), "A type 2"},
      {idesc(1, 0, 1, 0, 0, 0, 0, 64, 128), "mixes"},
      {idesc(1, 1, 1, 0, 0, 0, 0, 64, 256), "M = 256"},
      {idesc(1, 1, 1, 0, 0, 0, 0, 64, 32), "M = 32"},
      {idesc(1, 1, 1, 0, 0, 0, 0, 8, 128), "N = 8"},
      {idesc(1, 1, 1, 0, 0, 0, 0, 0, 64), "N = 0"},
      {idesc(1, 1, 1, 0, 0, 0, 0, 8, 64) | 0x3fu << 17, "N = 504"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_false(em_tc_idesc(bad[i].v, &d, err, sizeof err));
    has(err, bad[i].why, "the refusal");
  }
}

/* The shared-memory descriptor as the PTX ISA's table lays it out. */
static uint64_t sdesc(uint32_t start, uint32_t lbo, uint32_t sbo, int mode) {
  return (uint64_t)(start >> 4) | (uint64_t)(lbo >> 4) << 16 | (uint64_t)(sbo >> 4) << 32 | 1ull << 46 |
         (uint64_t)mode << 61;
}

static void test_sdesc(void **state) {
  (void)state;
  EmTcSdesc d;
  char err[256];
  /* start 0x1230, LBO 16, SBO 1024, 128-byte swizzle (2): 0x4000_4040_0001_0123 */
  uint64_t v = sdesc(0x1230, 16, 1024, 2);
  assert_true(v == 0x4000404000010123ull);
  assert_true(em_tc_sdesc(v, "A", &d, err, sizeof err));
  assert_int_equal(d.start, 0x1230);
  assert_int_equal(d.lbo, 16);
  assert_int_equal(d.sbo, 1024);
  assert_int_equal(d.version, 1);
  assert_int_equal(d.base, 0);
  assert_int_equal(d.sw, 128);
  assert_false(d.base32b);
  /* the other modes, the largest fields */
  static const int modes[5] = {0, 1, 2, 4, 6}, sws[5] = {0, 128, 128, 64, 32};
  for (int i = 0; i < 5; i++) {
    assert_true(em_tc_sdesc(sdesc(0x3fff0, 0x3fff0, 0x3fff0, modes[i]), "B", &d, err, sizeof err));
    assert_int_equal(d.start, 0x3fff0);
    assert_int_equal(d.lbo, 0x3fff0);
    assert_int_equal(d.sbo, 0x3fff0);
    assert_int_equal(d.sw, sws[i]);
    assert_int_equal(d.base32b, modes[i] == 1);
  }
  /* a few addresses worked by hand (start 0):
   * K-major 128B, SBO 1024: (9, 5) is 1024 + 128 + 10 = 1162, row bits (1162 >> 7) & 7 = 1: chunk 0 ^ 1 -> 1178
   * K-major 32B, SBO 256: (3, 9) is 96 + 18 = 114, (114 >> 7) & 1 = 0 -> 114; (5, 9) 160 + 18 = 178 -> 178 ^ 16 = 162
   * MN-major 64B, LBO 2048, SBO 512: (37, 10) is 1 * 2048 + 5 * 2 + 1 * 512 + 2 * 64 = 2698, (2698 >> 7) & 3 = 1 -> 2714
   * MN-major none, LBO 128, SBO 256: (11, 9) is 256 + 6 + 128 + 16 = 406
   * K-major none, LBO 128, SBO 256: (11, 9) is 256 + 48 + 128 + 2 = 434
   * mode 1 (MN), LBO 4096, SBO 512: (70, 6) is 4096 + 12 + 512 + 256 = 4876, (4876 >> 7) & 3 = 2: 32-byte chunk 0 ^ 2 -> 4940 */
  struct { uint64_t v; bool mn; int mn_i, k; uint64_t want; } at[] = {
      {sdesc(0, 16, 1024, 2), false, 9, 5, 1178},   {sdesc(0, 16, 256, 6), false, 3, 9, 114},
      {sdesc(0, 16, 256, 6), false, 5, 9, 162},     {sdesc(0, 2048, 512, 4), true, 37, 10, 2714},
      {sdesc(0, 128, 256, 0), true, 11, 9, 406},    {sdesc(0, 128, 256, 0), false, 11, 9, 434},
      {sdesc(0, 4096, 512, 1), true, 70, 6, 4940},
  };
  for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
    assert_true(em_tc_sdesc(at[i].v, "A", &d, err, sizeof err));
    uint64_t got = em_tc_sdesc_addr(&d, at[i].mn, at[i].mn_i, at[i].k);
    if (got != at[i].want) {
      print_error("case %zu: address %llu, want %llu\n", i, (unsigned long long)got, (unsigned long long)at[i].want);
      fail();
    }
  }
  /* refusals */
  struct { uint64_t v; const char *why; } bad[] = {
      {sdesc(0, 16, 1024, 2) & ~(1ull << 46), "(a Hopper wgmma descriptor?)"},
      {sdesc(0, 16, 1024, 2) | 1ull << 47, "bits 46-48"},
      {sdesc(0, 16, 1024, 3), "swizzle mode 3"},
      {sdesc(0, 16, 1024, 5), "swizzle mode 5"},
      {sdesc(0, 16, 1024, 7), "swizzle mode 7"},
      {sdesc(0, 16, 1024, 2) | 1ull << 52, "LBO mode"},
      {sdesc(0, 16, 1024, 2) | 3ull << 49, "base offset 3"},
      {sdesc(0, 16, 1024, 2) | 1ull << 14, "reserved"},
      {sdesc(0, 16, 1024, 2) | 1ull << 31, "reserved"},
      {sdesc(0, 16, 1024, 2) | 1ull << 55, "reserved"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_false(em_tc_sdesc(bad[i].v, "B", &d, err, sizeof err));
    has(err, bad[i].why, "the refusal");
  }
}

/* ---- one MMA against float64 ---- */

typedef struct {
  int m, n;
  bool f16;
  H a[128][16], b[256][16]; /* b[n][k]: column n of B */
  float d0[128][256];
  uint8_t *smem;
  size_t smem_bytes;
  EmTmemCells *tm, *tm0;
} Prob;

static void put16(Prob *p, size_t off, uint16_t v) {
  assert_true(off + 2 <= p->smem_bytes);
  p->smem[off] = (uint8_t)v;
  p->smem[off + 1] = (uint8_t)(v >> 8);
}

enum { MAJ_K = 0, MAJ_MN = 1 };

typedef struct {
  int major, sw; /* sw: 0 32 64 128, or 1: 128-byte rows with 32-byte atoms (MN-major) */
  int variant;   /* no swizzle: the order of the core matrices; swizzled: spacing and the k offset */
  int rows;
} Lay;

/* chunk c of row r inside the swizzle pattern lands at c ^ pat(r) */
static size_t swz(int sw, size_t row_off, int r, size_t byte) {
  if (sw == 1) return row_off + ((byte / 32) ^ (size_t)(r % 4)) * 32 + byte % 32;
  int pat = sw == 128 ? r % 8 : sw == 64 ? (r % 8) / 2 : sw == 32 ? (r % 8) / 4 : 0;
  return row_off + ((byte / 16) ^ (size_t)pat) * 16 + byte % 16;
}

typedef uint16_t (*Elem)(const Prob *p, int mn, int k);
static uint16_t elem_a(const Prob *p, int mn, int k) { return p->a[mn][k].bits; }
static uint16_t elem_b(const Prob *p, int mn, int k) { return p->b[mn][k].bits; }

/* Write the operand at base (1024-aligned); its descriptor, its span. */
static uint64_t place(Prob *p, const Lay *l, Elem get, size_t base, size_t *span) {
  uint64_t start, lbo, sbo;
  int R = l->rows;
  if (!l->sw) { /* core matrices of 8 rows x 16 bytes */
    size_t s_mn = l->variant % 2 ? 256 : 128, s_k = l->variant % 2 ? 128 : (size_t)(R / 8) * 128;
    for (int mn = 0; mn < R; mn++)
      for (int k = 0; k < 16; k++) {
        size_t cm = base + (size_t)(mn / 8) * s_mn + (size_t)(k / 8) * s_k;
        size_t in = l->major == MAJ_K ? (size_t)(mn % 8) * 16 + (size_t)(k % 8) * 2
                                      : (size_t)(k % 8) * 16 + (size_t)(mn % 8) * 2;
        put16(p, cm + in, get(p, mn, k));
      }
    start = base, sbo = s_mn, lbo = s_k;
    *span = (size_t)(R / 8) * 256;
  } else if (l->major == MAJ_K) { /* R rows of S bytes, K contiguous; the operand 16 columns from k0 */
    int S = l->sw, k0 = (l->variant % 4) * 16 % (S / 2);
    size_t step = (size_t)8 * S * (l->variant & 4 ? 2 : 1);
    for (int mn = 0; mn < R; mn++)
      for (int k = 0; k < 16; k++) {
        size_t row = base + (size_t)(mn / 8) * step + (size_t)(mn % 8) * S;
        put16(p, swz(S, row, mn % 8, (size_t)(k0 + k) * 2), get(p, mn, k));
      }
    start = base + (size_t)k0 * 2, sbo = step, lbo = 16;
    *span = (size_t)(R / 8) * step;
  } else { /* KR rows (K) of S bytes (MN contiguous), column blocks `blk` apart; the operand rows k0.. */
    int S = l->sw == 1 ? 128 : l->sw, per = S / 2, KR = l->variant & 1 ? 32 : 16, k0 = l->variant & 1 ? 16 : 0;
    size_t blk = (size_t)KR * S * (l->variant & 2 ? 2 : 1);
    for (int mn = 0; mn < R; mn++)
      for (int k = 0; k < 16; k++) {
        int kr = k0 + k;
        size_t row = base + (size_t)(mn / per) * blk + (size_t)kr * S;
        put16(p, swz(l->sw, row, kr % 8, (size_t)(mn % per) * 2), get(p, mn, k));
      }
    start = base + (size_t)k0 * S, lbo = blk, sbo = (size_t)(l->sw == 1 ? 4 : 8) * S;
    *span = (size_t)((R + per - 1) / per) * blk;
  }
  int mode = l->sw == 128 ? 2 : l->sw == 64 ? 4 : l->sw == 32 ? 6 : l->sw == 1 ? 1 : 0;
  return sdesc((uint32_t)start, (uint32_t)lbo, (uint32_t)sbo, mode);
}

/* The lane of row m (CUTLASS tmem_frg: M 64 is ((16,4),N):((1,32),128), M 128 one row a lane). */
static int lane_of(int M, int lane0, int m) { return M == 128 ? m : lane0 + (m % 16) + 32 * (m / 16); }

static void set_cell(EmTmemCells *tm, int lane, int col, uint32_t v) {
  tm->cell[lane][col] = v;
  tm->def[lane][col / 8] |= (uint8_t)(1u << (col % 8));
}

static const char *lay_str(const Lay *l, char *buf, size_t cap) {
  if (!l) return "tmem";
  snprintf(buf, cap, "%s-major sw%d v%d", l->major ? "MN" : "K", l->sw, l->variant);
  return buf;
}

/* One MMA: A of layout la (NULL: in tensor memory), B of layout lb. */
static void run_case(int M, int N, bool f16, const Lay *la, const Lay *lb, bool acc, bool nega, bool negb, int scale,
                     int lane0, uint64_t *seed) {
  Prob *p = calloc(1, sizeof *p);
  p->m = M, p->n = N, p->f16 = f16;
  for (int m = 0; m < M; m++)
    for (int k = 0; k < 16; k++) p->a[m][k] = rnd_half(seed, f16);
  for (int n = 0; n < N; n++)
    for (int k = 0; k < 16; k++) p->b[n][k] = rnd_half(seed, f16);
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) p->d0[m][n] = rnd_acc(seed);
  p->smem_bytes = 160 * 1024;
  p->smem = malloc(p->smem_bytes);
  for (size_t i = 0; i < p->smem_bytes; i++) p->smem[i] = (uint8_t)tu_xorshift(seed); /* garbage */
  p->tm = malloc(sizeof *p->tm);
  p->tm0 = malloc(sizeof *p->tm0);
  for (int l = 0; l < 128; l++)
    for (int c = 0; c < 512; c++) p->tm->cell[l][c] = (uint32_t)tu_xorshift(seed);
  memset(p->tm->def, 0, sizeof p->tm->def);
  EmTcMma op = {.id.raw = idesc(1, !f16, !f16, nega, negb, la ? la->major : 0, lb->major, N, M), .accumulate = acc,
                .scale_d = scale};
  int dcol = (int)(tu_xorshift(seed) % (uint64_t)(512 - N + 1)) & ~7, acol = dcol >= 64 ? 0 : 504;
  op.d_taddr = (uint32_t)lane0 << 16 | (uint32_t)dcol;
  size_t span_a = 0, span_b = 0, base_a = 1024;
  if (la) {
    Lay l = *la;
    l.rows = M;
    op.adesc = place(p, &l, elem_a, base_a, &span_a);
  } else {
    op.a_tmem = true;
    if (acol == 504) acol = dcol + N <= 496 ? 496 : 0;
    op.a_taddr = (uint32_t)lane0 << 16 | (uint32_t)acol;
    for (int m = 0; m < M; m++)
      for (int c = 0; c < 8; c++)
        set_cell(p->tm, lane_of(M, lane0, m), acol + c, (uint32_t)p->a[m][2 * c].bits | (uint32_t)p->a[m][2 * c + 1].bits << 16);
  }
  Lay l = *lb;
  l.rows = N;
  size_t base_b = (base_a + span_a + 2047) & ~(size_t)1023;
  op.bdesc = place(p, &l, elem_b, base_b, &span_b);
  assert_true(base_b + span_b <= p->smem_bytes);
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      if (acc) set_cell(p->tm, lane_of(M, lane0, m), dcol + n, f32_bits(p->d0[m][n]));
      else p->tm->cell[lane_of(M, lane0, m)][dcol + n] = 0x7fc00000u; /* not to be read */
    }
  memcpy(p->tm0, p->tm, sizeof *p->tm);
  char err[512], sa[64], sb[64], what[256];
  snprintf(what, sizeof what, "M=%d N=%d %s A %s B %s acc=%d neg=%d%d scale=%d lane0=%d", M, N, f16 ? "f16" : "bf16",
           lay_str(la, sa, sizeof sa), lay_str(lb, sb, sizeof sb), acc, nega, negb, scale, lane0);
  bool ok = em_tc_mma_run(&op, p->smem, p->smem_bytes, p->tm, err, sizeof err);
  if (!ok) print_error("%s: %s\n", what, err);
  assert_true(ok);
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      double s = acc ? ldexp(p->d0[m][n], -scale) : -0.0;
      for (int k = 0; k < 16; k++) s += (nega ? -1 : 1) * p->a[m][k].v * ((negb ? -1 : 1) * p->b[n][k].v);
      uint32_t got = p->tm->cell[lane_of(M, lane0, m)][dcol + n];
      if (got != f32_bits((float)s)) {
        print_error("%s: D[%d][%d] = %.9g (0x%08x), want %.9g\n", what, m, n, f32_from(got), got, (float)s);
        fail();
      }
      p->tm0->cell[lane_of(M, lane0, m)][dcol + n] = got;
    }
  /* nothing else written */
  assert_memory_equal(p->tm0->cell, p->tm->cell, sizeof p->tm->cell);
  free(p->smem), free(p->tm), free(p->tm0), free(p);
}

static const int SWK[4] = {0, 32, 64, 128}, SWMN[5] = {0, 32, 64, 128, 1};

/* every layout of A against every layout of B (K-major: 4 swizzles;
 * MN-major: those and mode 1), M 64 and 128, N rotating, bf16 and f16 */
static void test_mma_layouts(void **state) {
  (void)state;
  uint64_t seed = 21;
  static const int NS[6] = {16, 64, 128, 256, 48, 208};
  int i = 0;
  for (int am = 0; am < 2; am++)
    for (int as = 0; as < (am ? 5 : 4); as++)
      for (int bm = 0; bm < 2; bm++)
        for (int bs = 0; bs < (bm ? 5 : 4); bs++, i++) {
          int M = i % 2 ? 64 : 128, N = NS[(i / 2) % 6];
          Lay la = {am, am ? SWMN[as] : SWK[as], i % 8, 0}, lb = {bm, bm ? SWMN[bs] : SWK[bs], (i / 3) % 8, 0};
          run_case(M, N, (i / 5) % 2, &la, &lb, true, false, false, 0, M == 64 ? 16 * (i / 4 % 2) : 0, &seed);
        }
}

/* every N of both M; A from tensor memory against every layout of B */
static void test_mma_shapes(void **state) {
  (void)state;
  uint64_t seed = 22;
  Lay k128 = {MAJ_K, 128, 1, 0}, mn64 = {MAJ_MN, 64, 2, 0};
  for (int n = 8; n <= 256; n += 8) {
    run_case(64, n, n % 16 == 8, &k128, &mn64, n % 3 != 0, false, false, 0, n % 32 ? 0 : 16, &seed);
    if (n % 16 == 0) run_case(128, n, n % 32 == 0, &mn64, &k128, n % 3 == 0, false, false, 0, 0, &seed);
  }
  for (int bm = 0; bm < 2; bm++)
    for (int bs = 0; bs < (bm ? 5 : 4); bs++)
      for (int M = 64; M <= 128; M += 64) {
        Lay lb = {bm, bm ? SWMN[bs] : SWK[bs], bs * 3 % 8, 0};
        run_case(M, M == 64 ? 72 : 96, bs % 2, NULL, &lb, bs % 2 == 0, false, false, 0, M == 64 ? 16 * bm : 0, &seed);
      }
}

/* enable-input-d off (the old D, NaN, never read), negated A and B, scale-input-d */
static void test_mma_modifiers(void **state) {
  (void)state;
  uint64_t seed = 23;
  Lay la = {MAJ_K, 128, 1, 0}, lb = {MAJ_MN, 32, 3, 0};
  for (int acc = 0; acc < 2; acc++)
    for (int na = 0; na < 2; na++)
      for (int nb = 0; nb < 2; nb++) {
        run_case(128, 64, acc, &la, &lb, acc, na, nb, acc ? 3 : 0, 0, &seed);
        run_case(64, 32, !acc, NULL, &lb, acc, na, nb, acc * 15, 16, &seed);
      }
}

/* A = the identity in each 16-row block (f16, K-major no swizzle), B[k][n]
 * = 128 k + n % 128: D[m][n] = 128 (m % 16) + n % 128 + 0.25, read at the
 * lane the ISA's layout F gives row m of an M = 64 accumulator at lane 16:
 * 16 + 32 (m / 16) + m % 16 -- and lanes 0-15, 48-63, ... untouched. */
static void test_mma_known_answer(void **state) {
  (void)state;
  static uint8_t smem[64 * 32 + 256 * 32 + 2048];
  EmTmemCells *tm = calloc(1, sizeof *tm);
  memset(smem, 0, sizeof smem);
  for (int m = 0; m < 64; m++) /* K-major, no swizzle: core matrices 8 rows x 16 bytes, SBO 128 (rows), LBO 1024 (k halves) */
    put16(&(Prob){.smem = smem, .smem_bytes = sizeof smem}, (size_t)(m / 8) * 128 + (size_t)(m % 8) * 16 +
          (size_t)((m % 16) / 8) * 1024 + (size_t)(m % 8) * 2, 0x3c00);
  for (int n = 0; n < 256; n++) /* B K-major, 32-byte swizzle: column n is row n of 32 bytes */
    for (int k = 0; k < 16; k++) {
      int v = 128 * k + n % 128, e = 0;
      uint16_t h = 0;
      if (v) {
        while ((v >> e) > 1) e++;
        h = (uint16_t)((e + 15) << 10 | ((v << 10 >> e) & 0x3ff));
      }
      size_t off = 2048 + (size_t)n * 32 + (size_t)k * 2;
      off ^= ((off >> 7) & 1) << 4;
      smem[off] = (uint8_t)h, smem[off + 1] = (uint8_t)(h >> 8);
    }
  for (int l = 0; l < 128; l++)
    for (int c = 0; c < 512; c++) set_cell(tm, l, c, f32_bits(0.25f));
  EmTcMma op = {.id.raw = idesc(1, 0, 0, 0, 0, 0, 0, 256, 64), .accumulate = true, .adesc = sdesc(0, 1024, 128, 0),
                .bdesc = sdesc(2048, 16, 256, 6), .d_taddr = 16u << 16 | 256};
  char err[256];
  bool ok = em_tc_mma_run(&op, smem, sizeof smem, tm, err, sizeof err);
  if (!ok) print_error("%s\n", err);
  assert_true(ok);
  for (int l = 0; l < 128; l++)
    for (int c = 0; c < 512; c++) {
      bool row = c >= 256 && l % 32 >= 16;
      float want = row ? (float)(128 * (l % 16) + (c - 256) % 128) + 0.25f : 0.25f;
      if (f32_from(tm->cell[l][c]) != want) {
        print_error("lane %d column %d: %g, want %g\n", l, c, f32_from(tm->cell[l][c]), want);
        fail();
      }
    }
  free(tm);
}

/* What em_tc_mma_check refuses: lanes, columns, A in tensor memory M-major,
 * mode 1 K-major, a Hopper descriptor; the shared window's end; a D or A
 * never written. */
static void test_mma_refusals(void **state) {
  (void)state;
  static uint8_t smem[32768];
  EmTmemCells *tm = calloc(1, sizeof *tm);
  uint32_t id = idesc(1, 1, 1, 0, 0, 0, 0, 64, 128), id64 = idesc(1, 1, 1, 0, 0, 0, 0, 64, 64);
  uint64_t ok_a = sdesc(0, 16, 1024, 2), ok_b = sdesc(2048, 16, 1024, 2);
  struct { EmTcMma op; const char *why; } bad[] = {
      {{.id.raw = id, .adesc = ok_a, .bdesc = ok_b, .d_taddr = 16u << 16}, "starts at lane 0"},
      {{.id.raw = id64, .adesc = ok_a, .bdesc = ok_b, .d_taddr = 32u << 16}, "lane 0 or 16"},
      {{.id.raw = id, .adesc = ok_a, .bdesc = ok_b, .d_taddr = 480}, "pass the 512 columns"},
      {{.id.raw = id | 1u << 15, .a_tmem = true, .a_taddr = 64, .bdesc = ok_b}, "transpose-A"},
      {{.id.raw = id64, .a_tmem = true, .a_taddr = 16u << 16 | 64, .bdesc = ok_b}, "the same lane"},
      {{.id.raw = id, .adesc = sdesc(0, 16, 512, 1), .bdesc = ok_b}, "MN-major only"},
      {{.id.raw = id, .adesc = ok_a & ~(1ull << 46), .bdesc = ok_b}, "Hopper"},
      {{.id.raw = id, .adesc = ok_a, .bdesc = sdesc(30720, 16, 1024, 2)}, "outside the CTA's 32768-byte shared window"},
      {{.id.raw = id, .adesc = ok_a, .bdesc = ok_b, .accumulate = true}, "never written"},
      {{.id.raw = id, .a_tmem = true, .a_taddr = 64, .bdesc = ok_b}, "was never written"},
      {{.id.raw = id, .adesc = ok_a, .bdesc = ok_b, .scale_d = 16}, "scale-input-d 16"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char err[512];
    assert_false(em_tc_mma_run(&bad[i].op, smem, sizeof smem, tm, err, sizeof err));
    has(err, bad[i].why, "the refusal");
  }
  free(tm);
}

/* ---- tcgen05.ld / st layouts against CUTLASS's TMEM_LOAD layouts ---- */

/* A CuTe layout (a flat list of modes) at index i, colexicographic. */
static long cute_at(const int *shape, const long *stride, int n, long i) {
  long r = 0;
  for (int d = 0; d < n; d++) r += (i % shape[d]) * stride[d], i /= shape[d];
  return r;
}

/* copy_traits_sm100.hpp, Copy_Traits<SM100_TMEM_LOAD_16dp{64,128,256}b{1,2}x>:
 * DstLayout (thread modes, then value modes, in bits) and ValID's row width
 * (bits per lane: a bit index b is lane b / row, column bit b % row). */
typedef struct {
  int shape, num, nt, nv, row;
  int ts[3];
  long tst[3];
  int vs[3];
  long vst[3];
} CuteTv;
static const CuteTv TV[] = {
    {EM_TC_16X64B, 1, 3, 1, 64, {2, 2, 8}, {512, 32, 64}, {32}, {1}},
    {EM_TC_16X64B, 2, 3, 2, 128, {2, 2, 8}, {1024, 32, 128}, {32, 2}, {1, 64}},
    {EM_TC_16X128B, 1, 2, 2, 128, {4, 8}, {32, 128}, {32, 2}, {1, 1024}},
    {EM_TC_16X128B, 2, 2, 3, 256, {4, 8}, {32, 256}, {32, 2, 2}, {1, 2048, 128}},
    {EM_TC_16X256B, 1, 2, 2, 256, {4, 8}, {64, 256}, {64, 2}, {1, 2048}},
    {EM_TC_16X256B, 2, 2, 3, 512, {4, 8}, {64, 512}, {64, 2, 2}, {1, 4096, 256}},
};

static void test_ldst_layouts(void **state) {
  (void)state;
  for (size_t x = 0; x < sizeof TV / sizeof *TV; x++) {
    const CuteTv *tv = &TV[x];
    int nr = em_tc_ldst_regs(tv->shape, tv->num);
    for (int t = 0; t < 32; t++)
      for (int j = 0; j < nr; j++) {
        long bit0 = cute_at(tv->ts, tv->tst, tv->nt, t) + cute_at(tv->vs, tv->vst, tv->nv, 32L * j);
        int lane = (int)(bit0 / tv->row), col = (int)(bit0 % tv->row) / 32;
        for (int b = 1; b < 32; b++) /* a register's 32 bits are one cell */
          assert_true(cute_at(tv->ts, tv->tst, tv->nt, t) + cute_at(tv->vs, tv->vst, tv->nv, 32L * j + b) == bit0 + b);
        int gl, gc;
        em_tc_ldst_cell(tv->shape, t, j, &gl, &gc);
        if (gl != lane || gc != col) {
          print_error("%s.x%d thread %d register %d: lane %d column %d, CUTLASS says lane %d column %d\n",
                      em_tc_shape_name(tv->shape), tv->num, t, j, gl, gc, lane, col);
          fail();
        }
      }
  }
  /* every shape and .num: each cell of lanes x columns exactly once */
  for (int s = EM_TC_32X32B; s <= EM_TC_16X256B; s++)
    for (int num = 1; em_tc_ldst_regs(s, num); num *= 2) {
      int nl = em_tc_ldst_lanes(s), nc = em_tc_ldst_cols(s, num), nr = em_tc_ldst_regs(s, num);
      assert_int_equal(nl * nc, 32 * nr);
      uint8_t *seen = calloc((size_t)(nl * nc), 1);
      for (int t = 0; t < 32; t++)
        for (int j = 0; j < nr; j++) {
          int l, c;
          em_tc_ldst_cell(s, t, j, &l, &c);
          assert_true(l >= 0 && l < nl && c >= 0 && c < nc);
          assert_int_equal(seen[l * nc + c]++, 0);
        }
      free(seen);
    }
  assert_int_equal(em_tc_ldst_regs(EM_TC_32X32B, 128), 128);
  assert_int_equal(em_tc_ldst_regs(EM_TC_32X32B, 256), 0);
  assert_int_equal(em_tc_ldst_regs(EM_TC_16X128B, 64), 128);
  assert_int_equal(em_tc_ldst_regs(EM_TC_16X128B, 128), 0);
  assert_int_equal(em_tc_ldst_regs(EM_TC_16X256B, 32), 128);
  assert_int_equal(em_tc_ldst_regs(EM_TC_16X256B, 3), 0);
}

/* ---- kernels ---- */

#define HEAD ".version 8.7\n.target sm_100a\n.address_size 64\n"

/* every kernel text made here, for test_ptxas */
static char *made[64];
static int nmade;

static char *keep(char *ptx) {
  if (nmade < 64) made[nmade++] = strdup(ptx);
  return ptx;
}

static bool checks_off; /* the next launches without the shared- and tensor-memory checks */

static bool launch(const char *ptx, unsigned block, const void *params, size_t psize, int sched, uint64_t seed,
                   char *err, size_t errlen) {
  EmModule *m = NULL;
  if (!em_ptx_parse(ptx, strlen(ptx), &m, err, errlen)) {
    print_error("parse: %s\n", err);
    fail();
  }
  EmLaunch l = {.kernel = "k", .grid = {1, 1, 1}, .block = {block, 1, 1}, .params = params, .params_size = psize,
                .max_steps = 50000000, .sched = sched, .seed = seed, .no_checks = checks_off};
  bool ok = em_launch(m, &l, err, errlen);
  em_module_free(m);
  return ok;
}

/* A GEMM tile: C (M x 64, f32) = A (M x 64) B^T (B: 64 x 64, K-major), on one
 * CTA of 128 threads. The tile image (A, 128-byte rows swizzled, at 0; B at
 * 16384) is copied from global memory; warp 0 allocates 128 columns; thread 0
 * issues four MMAs (K = 16 each, the descriptors' start stepped 32 bytes) and
 * commits them to an mbarrier the CTA waits on; then each warp loads its
 * lanes and stores them. a_tmem: A goes to tensor memory first (tcgen05.st,
 * a row a thread, bf16 pairs in 32 columns from column 64) and the MMAs take
 * [a_tmem]. M 64: D is layout F (lanes 32q..32q+15), loaded with 16x256b.
 * Broken variants: no mbarrier wait; no tcgen05.wait::ld; the A tile zeroed
 * after the MMAs are issued (they read it as they run). */
enum { K_NOWAIT = 1, K_NOLDWAIT = 2, K_CLOBBER = 4, K_DISCARD = 8 /* not broken: .collector::a::discard, as LLVM writes */,
       K_NOFENCE = 16 /* A in tensor memory: no fence::after_thread_sync between the bar.sync and the MMA */,
       K_STOVER = 32 /* every warp stores into D (its lanes, column 5) before the commit's mbarrier */ };
static char *gemm_ptx(int M, bool f16, bool a_tmem, int broken) {
  size_t cap = 64 * 1024, n = 0;
  char *s = malloc(cap);
#define P(...) (n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__))
  uint32_t id = idesc(1, !f16, !f16, 0, 0, 0, 0, 64, M);
  P(HEAD ".shared .align 1024 .b8 tile[24576];\n.shared .align 8 .b64 bar;\n.shared .align 4 .b32 slot;\n"
      ".visible .entry k(.param .u64 img, .param .u64 out, .param .u64 arow)\n{\n"
      ".reg .b64 %%rd<40>;\n.reg .b32 %%r<200>;\n.reg .pred %%p<10>;\n"
      "ld.param.u64 %%rd1, [img];\nld.param.u64 %%rd2, [out];\nld.param.u64 %%rd20, [arow];\n"
      "mov.u32 %%r1, %%tid.x;\nshr.u32 %%r10, %%r1, 5;\nmov.u32 %%r2, %%r1;\n"
      "COPY:\nmul.wide.u32 %%rd3, %%r2, 16;\nadd.u64 %%rd4, %%rd1, %%rd3;\n"
      "ld.global.v4.b32 {%%r3, %%r4, %%r5, %%r6}, [%%rd4];\nmov.u32 %%r7, tile;\nshl.b32 %%r8, %%r2, 4;\n"
      "add.u32 %%r9, %%r7, %%r8;\nst.shared.v4.b32 [%%r9], {%%r3, %%r4, %%r5, %%r6};\nadd.u32 %%r2, %%r2, 128;\n"
      "setp.lt.u32 %%p1, %%r2, 1536;\n@%%p1 bra COPY;\nfence.proxy.async.shared::cta;\n"
      "setp.ne.u32 %%p2, %%r10, 0;\nsetp.ne.u32 %%p3, %%r1, 0;\n"
      "@%%p2 bra NOALLOC;\nmov.u32 %%r11, slot;\n"
      "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%%r11], 128;\n"
      "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\nNOALLOC:\n"
      "@%%p3 bra NOINIT;\nmbarrier.init.shared::cta.b64 [bar], 1;\nNOINIT:\n"
      "tcgen05.fence::before_thread_sync;\nbar.sync 0;\ntcgen05.fence::after_thread_sync;\n"
      "ld.shared.b32 %%r12, [slot];\nshl.b32 %%r30, %%r10, 21;\nadd.u32 %%r31, %%r12, %%r30;\n");
  assert_true(!a_tmem || M == 128);
  if (a_tmem) { /* thread m stores row m of A (64 bf16 = 32 words) at lane m, columns 64..95 */
    P("mul.wide.u32 %%rd21, %%r1, 128;\nadd.u64 %%rd22, %%rd20, %%rd21;\n");
    for (int i = 0; i < 32; i++) P("ld.global.b32 %%r%d, [%%rd22+%d];\n", 100 + i, 4 * i);
    P("tcgen05.st.sync.aligned.32x32b.x32.b32 [%%r31+64], {");
    for (int i = 0; i < 32; i++) P("%s%%r%d", i ? ", " : "", 100 + i);
    P("};\ntcgen05.wait::st.sync.aligned;\ntcgen05.fence::before_thread_sync;\nbar.sync 0;\n%s",
      broken & K_NOFENCE ? "" : "tcgen05.fence::after_thread_sync;\n");
  }
  /* thread 0: the descriptors (start from the tile's address), four MMAs, the commit */
  P("@%%p3 bra WAITMMA;\nmov.u32 %%r13, tile;\nshr.u32 %%r14, %%r13, 4;\ncvt.u64.u32 %%rd5, %%r14;\n"
    "mov.b64 %%rd6, 0x4000404000010000;\nadd.u64 %%rd7, %%rd6, %%rd5;\nadd.u64 %%rd8, %%rd7, 1024;\n"
    "mov.u32 %%r15, %u;\nmov.u32 %%r16, 0;\n", id); /* B at 16384: + 1024 in 16-byte units */
  for (int k = 0; k < 4; k++) {
    P(k ? "setp.eq.u32 %%p4, %%r16, 0;\n" : "setp.ne.u32 %%p4, %%r16, 0;\n"); /* enable-input-d: from the second on */
    P("add.u64 %%rd9, %%rd7, %d;\nadd.u64 %%rd10, %%rd8, %d;\n", 2 * k, 2 * k);
    if (a_tmem) P("add.u32 %%r17, %%r12, %d;\ntcgen05.mma.cta_group::1.kind::f16 [%%r12], [%%r17], %%rd10, %%r15, %%p4;\n",
                  64 + 8 * k);
    else P("tcgen05.mma.cta_group::1.kind::f16%s [%%r12], %%rd9, %%rd10, %%r15, %%p4;\n",
           broken & K_DISCARD ? ".collector::a::discard" : "");
  }
  if (broken & K_CLOBBER) /* the A tile overwritten before the MMAs have run: they read it as they run */
    P("mov.u32 %%r18, 0;\nCLOB:\nshl.b32 %%r19, %%r18, 4;\nadd.u32 %%r19, %%r19, %%r13;\n"
      "st.shared.v4.b32 [%%r19], {%%r16, %%r16, %%r16, %%r16};\nadd.u32 %%r18, %%r18, 1;\n"
      "setp.lt.u32 %%p8, %%r18, 1024;\n@%%p8 bra CLOB;\n");
  P("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];\nWAITMMA:\n");
  if (broken & K_STOVER) P("tcgen05.st.sync.aligned.32x32b.x1.b32 [%%r31+5], {%%r1};\ntcgen05.wait::st.sync.aligned;\n");
  if (!(broken & K_NOWAIT)) P("mbarrier.try_wait.parity.shared::cta.b64 %%p5, [bar], 0;\n@!%%p5 bra WAITMMA;\n");
  P("tcgen05.fence::after_thread_sync;\n");
  /* each warp: its lanes; row m of D, 64 f32 */
  if (M == 128) {
    for (int c = 0; c < 4; c++) {
      P("tcgen05.ld.sync.aligned.32x32b.x16.b32 {");
      for (int i = 0; i < 16; i++) P("%s%%r%d", i ? ", " : "", 40 + 16 * c + i);
      P("}, [%%r31+%d];\n", 16 * c);
    }
    if (!(broken & K_NOLDWAIT)) P("tcgen05.wait::ld.sync.aligned;\n");
    P("mul.wide.u32 %%rd11, %%r1, 256;\nadd.u64 %%rd12, %%rd2, %%rd11;\n");
    for (int i = 0; i < 64; i++) P("st.global.b32 [%%rd12+%d], %%r%d;\n", 4 * i, 40 + i);
  } else { /* 16x256b.x8: thread t register j is lane t/4 + 8 ((j/2) % 2), column 2 (t%4) + j%2 + 8 (j/4) */
    P("tcgen05.ld.sync.aligned.16x256b.x8.b32 {");
    for (int i = 0; i < 32; i++) P("%s%%r%d", i ? ", " : "", 40 + i);
    P("}, [%%r31];\n");
    if (!(broken & K_NOLDWAIT)) P("tcgen05.wait::ld.sync.aligned;\n");
    /* row = 16 warp + lane/4 (+ 8), column: computed per register */
    P("and.b32 %%r20, %%r1, 31;\nshr.u32 %%r21, %%r20, 2;\nshl.b32 %%r22, %%r10, 4;\nadd.u32 %%r23, %%r21, %%r22;\n"
      "and.b32 %%r24, %%r20, 3;\nshl.b32 %%r25, %%r24, 1;\n" /* 2 (t % 4) */
      "mul.lo.u32 %%r26, %%r23, 64;\nadd.u32 %%r26, %%r26, %%r25;\nmul.wide.u32 %%rd13, %%r26, 4;\n"
      "add.u64 %%rd14, %%rd2, %%rd13;\n");
    for (int j = 0; j < 32; j++)
      P("st.global.b32 [%%rd14+%d], %%r%d;\n", 4 * (64 * 8 * ((j / 2) % 2) + j % 2 + 8 * (j / 4)), 40 + j);
  }
  P("tcgen05.fence::before_thread_sync;\nbar.sync 0;\n@%%p2 bra END;\ntcgen05.fence::after_thread_sync;\n"
    "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %%r12, 128;\nEND:\nret;\n}\n");
#undef P
  assert_true(n < cap);
  return s;
}

typedef struct {
  uint8_t img[24576];
  uint32_t arow[128][32]; /* A row-major, bf16/f16 pairs */
  double a[128][64], b[64][64];
  float out[128 * 64];
} Gemm;

static void gemm_init(Gemm *g, int M, bool f16, uint64_t *seed) {
  for (size_t i = 0; i < sizeof g->img; i++) g->img[i] = (uint8_t)tu_xorshift(seed);
  memset(g->arow, 0, sizeof g->arow);
  for (int r = 0; r < 64 + M; r++)
    for (int k = 0; k < 64; k++) {
      H h = rnd_half(seed, f16);
      bool isa = r < M;
      size_t off = (isa ? 0 : 16384) + (size_t)(isa ? r : r - M) * 128 + (size_t)k * 2; /* TMA's 128-byte swizzle */
      off ^= ((off >> 7) & 7) << 4;
      g->img[off] = (uint8_t)h.bits, g->img[off + 1] = (uint8_t)(h.bits >> 8);
      if (isa) g->a[r][k] = h.v, g->arow[r][k / 2] |= (uint32_t)h.bits << (16 * (k % 2));
      else g->b[r - M][k] = h.v;
    }
  for (int i = 0; i < 128 * 64; i++) g->out[i] = NAN;
}

/* C against float64 (K = 64 in four MMAs: within 1e-6 of the sum of |products|) */
static int gemm_check(const Gemm *g, int M, bool quiet) {
  int bad = 0;
  for (int m = 0; m < M; m++)
    for (int n = 0; n < 64; n++) {
      double s = 0, mag = 0;
      for (int k = 0; k < 64; k++) s += g->a[m][k] * g->b[n][k], mag += fabs(g->a[m][k] * g->b[n][k]);
      double got = g->out[m * 64 + n];
      if (!(fabs(got - s) <= 1e-6 * mag + 1e-30)) {
        if (!quiet && bad < 5) print_error("C[%d][%d] = %.9g, want %.9g\n", m, n, got, s);
        bad++;
      }
    }
  return bad;
}

static void run_gemm(int M, bool f16, bool a_tmem, int sched, uint64_t seed, int flags) {
  uint64_t s = 31 + seed;
  Gemm *g = malloc(sizeof *g);
  gemm_init(g, M, f16, &s);
  char *ptx = keep(gemm_ptx(M, f16, a_tmem, flags)), err[2048];
  uint64_t p[3] = {(uint64_t)(uintptr_t)g->img, (uint64_t)(uintptr_t)g->out, (uint64_t)(uintptr_t)g->arow};
  bool ok = launch(ptx, 128, p, sizeof p, sched, seed, err, sizeof err);
  if (!ok) print_error("M=%d f16=%d a_tmem=%d sched=%d seed=%llu: %s\n", M, f16, a_tmem, sched,
                       (unsigned long long)seed, err);
  assert_true(ok);
  assert_int_equal(gemm_check(g, M, false), 0);
  free(ptx);
  free(g);
}

static void test_kernel_gemm(void **state) {
  (void)state;
  run_gemm(128, false, false, EM_SCHED_RR, 0, 0);
  run_gemm(128, true, false, EM_SCHED_RR, 0, K_DISCARD);
  run_gemm(64, false, false, EM_SCHED_RR, 0, 0);
  run_gemm(128, false, true, EM_SCHED_RR, 0, 0);
  for (uint64_t seed = 1; seed <= 3; seed++) {
    run_gemm(128, seed == 2, seed == 3, EM_SCHED_RANDOM, seed, 0);
    run_gemm(seed == 1 ? 64 : 128, false, seed == 2, EM_SCHED_ADVERSARIAL, seed, 0);
  }
}

/* The asynchrony: without the mbarrier wait the loads see the columns as
 * allocated (never written: the NaN pattern), not C, and the checks report
 * the MMA that overwrites what a load read; with the A tile
 * overwritten by zeros after issue, the MMAs (which read it as they run)
 * give zeros, and the checks report the store (a write over bytes an MMA
 * may still read); without tcgen05.wait::ld the first store reads a poisoned
 * register. */
static void test_kernel_async(void **state) {
  (void)state;
  uint64_t s = 41;
  Gemm *g = malloc(sizeof *g);
  char err[2048];
  uint64_t p[3] = {(uint64_t)(uintptr_t)g->img, (uint64_t)(uintptr_t)g->out, (uint64_t)(uintptr_t)g->arow};
  gemm_init(g, 128, false, &s);
  char *ptx = keep(gemm_ptx(128, false, false, K_NOWAIT));
  checks_off = true; /* the values (the checks report the load: below) */
  bool ok = launch(ptx, 128, p, sizeof p, EM_SCHED_RR, 0, err, sizeof err);
  checks_off = false;
  if (!ok) print_error("%s\n", err);
  assert_true(ok);
  assert_int_equal(gemm_check(g, 128, true), 128 * 64);
  for (int i = 0; i < 128 * 64; i++) assert_int_equal(f32_bits(g->out[i]), 0x7fa0deadu);
  /* with the checks on, the first race found is the other side of the same missing wait: the chain's next MMA
     overwrites columns a warp has read with no sync after its tcgen05.wait::ld (a write after a read) */
  assert_false(launch(ptx, 128, p, sizeof p, EM_SCHED_RR, 0, err, sizeof err));
  has(err, "race: the tcgen05.mma writes tensor memory columns 0..63 (lanes 96..127), which warp 3's tcgen05.ld at",
      "the report");
  has(err, "with no thread sync (a barrier or an mbarrier) between the reader's tcgen05.wait::ld and this thread",
      "the report");
  free(ptx);

  gemm_init(g, 128, false, &s);
  ptx = keep(gemm_ptx(128, false, false, K_CLOBBER));
  checks_off = true; /* the values */
  ok = launch(ptx, 128, p, sizeof p, EM_SCHED_RR, 0, err, sizeof err);
  checks_off = false;
  if (!ok) print_error("%s\n", err);
  assert_true(ok);
  for (int i = 0; i < 128 * 64; i++) assert_true(g->out[i] == 0.0f);
  /* with the checks on, the clobbering store is a write over bytes the MMA may still read (2026-12-04) */
  assert_false(launch(ptx, 128, p, sizeof p, EM_SCHED_RR, 0, err, sizeof err));
  has(err, "slot: writes smem+0x", "the report");
  has(err, "while the tcgen05.mma at ptx line", "the report");
  has(err, "no wait for an mbarrier phase its tcgen05.commit completes happens before", "the report");
  free(ptx);

  gemm_init(g, 128, false, &s);
  ptx = keep(gemm_ptx(128, false, false, K_NOLDWAIT));
  assert_false(launch(ptx, 128, p, sizeof p, EM_SCHED_RR, 0, err, sizeof err));
  has(err, "a destination of a tcgen05.ld not yet waited for (tcgen05.wait::ld)", "the report");
  has(err, "st.global.b32", "the report");
  free(ptx);

  /* A stored into tensor memory by every warp, read by thread 0's MMA with no fence::after_thread_sync after the
     barrier: the race checks name the store of another warp */
  gemm_init(g, 128, false, &s);
  ptx = keep(gemm_ptx(128, false, true, K_NOFENCE));
  assert_false(launch(ptx, 128, p, sizeof p, EM_SCHED_RR, 0, err, sizeof err));
  has(err, "race: the tcgen05.mma reads A, tensor memory columns 64..71 (lanes 32..63), which warp 1's tcgen05.st",
      "the report");
  has(err, "with no tcgen05.fence::after_thread_sync between the thread sync and this instruction", "the report");
  free(ptx);

  /* a tcgen05.st into D before the commit's mbarrier: the MMAs may still write it */
  gemm_init(g, 128, false, &s);
  ptx = keep(gemm_ptx(128, false, false, K_STOVER));
  assert_false(launch(ptx, 128, p, sizeof p, EM_SCHED_RR, 0, err, sizeof err));
  has(err, "race: the tcgen05.st writes tensor memory columns 5..5 (lanes 0..31), which the tcgen05.mma at ptx line",
      "the report");
  has(err, "may still write: no wait on the mbarrier of a tcgen05.commit after it happens before", "the report");
  free(ptx);
  free(g);
}

/* tcgen05.st of each shape (register j of thread t holds 100 t + j), read
 * back with 32x32b.x64 (thread l: lane l) by warp 0: each value at the cell
 * CUTLASS's layout gives it (test_ldst_layouts), the other cells the
 * allocation's NaN pattern. Then 16x128b.x2 loads at lane 16 of the same
 * cells. */
static char *ldst_ptx(int shape, int num) {
  static const char *const names[] = {NULL, "32x32b", "16x64b", "16x128b", "16x256b"};
  int nr = em_tc_ldst_regs(shape, num);
  size_t cap = 32 * 1024, n = 0;
  char *s = malloc(cap);
#define P(...) (n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__))
  P(HEAD ".shared .align 4 .b32 slot;\n.visible .entry k(.param .u64 out)\n{\n.reg .b64 %%rd<8>;\n"
      ".reg .b32 %%r<300>;\nld.param.u64 %%rd1, [out];\nmov.u32 %%r1, %%tid.x;\nmov.u32 %%r2, slot;\n"
      "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%%r2], 64;\nld.shared.b32 %%r3, [slot];\n"
      "mul.lo.u32 %%r4, %%r1, 100;\n");
  for (int j = 0; j < nr; j++) P("add.u32 %%r%d, %%r4, %d;\n", 10 + j, j);
  P("tcgen05.st.sync.aligned.%s.x%d.b32 [%%r3], {", names[shape], num);
  for (int j = 0; j < nr; j++) P("%s%%r%d", j ? ", " : "", 10 + j);
  P("};\ntcgen05.wait::st.sync.aligned;\ntcgen05.ld.sync.aligned.32x32b.x64.b32 {");
  for (int j = 0; j < 64; j++) P("%s%%r%d", j ? ", " : "", 150 + j);
  P("}, [%%r3];\ntcgen05.wait::ld.sync.aligned;\nmul.wide.u32 %%rd2, %%r1, 256;\nadd.u64 %%rd3, %%rd1, %%rd2;\n");
  for (int j = 0; j < 64; j++) P("st.global.b32 [%%rd3+%d], %%r%d;\n", 4 * j, 150 + j);
  /* 16x128b.x2 at lane 16: thread t register j is lane 16 + t/4 + 8 (j%2), column t%4 + 4 (j/2) */
  P("add.u32 %%r5, %%r3, 0x100000;\ntcgen05.ld.sync.aligned.16x128b.x2.b32 {%%r220, %%r221, %%r222, %%r223}, [%%r5];\n"
    "tcgen05.wait::ld.sync.aligned;\nmul.wide.u32 %%rd4, %%r1, 16;\nadd.u64 %%rd5, %%rd1, %%rd4;\n"
    "st.global.v4.b32 [%%rd5+8192], {%%r220, %%r221, %%r222, %%r223};\n"
    "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %%r3, 64;\nret;\n}\n");
#undef P
  return s;
}

static void test_kernel_ldst(void **state) {
  (void)state;
  static const int nums[5] = {0, 64, 32, 16, 8}; /* each shape filling 64 columns */
  for (int shape = EM_TC_32X32B; shape <= EM_TC_16X256B; shape++) {
    int num = nums[shape], nr = em_tc_ldst_regs(shape, num), nl = em_tc_ldst_lanes(shape);
    uint32_t out[32 * 64 + 32 * 4], want[32][64];
    for (int l = 0; l < 32; l++)
      for (int c = 0; c < 64; c++) want[l][c] = 0x7fa0deadu;
    for (int t = 0; t < 32; t++)
      for (int j = 0; j < nr; j++) { /* the cell by the test's own formulas (CUTLASS, checked above) */
        int l = shape == EM_TC_32X32B ? t : shape == EM_TC_16X64B ? t / 4 + 8 * (t % 2)
                : shape == EM_TC_16X128B ? t / 4 + 8 * (j % 2) : t / 4 + 8 * ((j / 2) % 2);
        int c = shape == EM_TC_32X32B ? j : shape == EM_TC_16X64B ? (t / 2) % 2 + 2 * j
                : shape == EM_TC_16X128B ? t % 4 + 4 * (j / 2) : 2 * (t % 4) + j % 2 + 8 * (j / 4);
        assert_true(l < nl && c < 64);
        want[l][c] = (uint32_t)(100 * t + j);
      }
    char *ptx = keep(ldst_ptx(shape, num)), err[2048];
    uint64_t p = (uint64_t)(uintptr_t)out;
    bool ok = launch(ptx, 32, &p, sizeof p, EM_SCHED_RR, 0, err, sizeof err);
    if (!ok) print_error("%s: %s\n", em_tc_shape_name(shape), err);
    assert_true(ok);
    for (int l = 0; l < 32; l++)
      for (int c = 0; c < 64; c++)
        if (out[l * 64 + c] != want[l][c]) {
          print_error("%s: lane %d column %d = 0x%x, want 0x%x\n", em_tc_shape_name(shape), l, c, out[l * 64 + c],
                      want[l][c]);
          fail();
        }
    for (int t = 0; t < 32; t++)
      for (int j = 0; j < 4; j++)
        assert_int_equal(out[2048 + 4 * t + j], want[16 + t / 4 + 8 * (j % 2)][t % 4 + 4 * (j / 2)]);
    free(ptx);
  }
}

/* tcgen05.commit: its mbarrier (count 2) completes only when both commits'
 * arrivals are in (thread 0's, after its MMA, and thread 1's), not at the
 * commits: test_wait right after each (the same round) sees the phase still
 * open. The generic forms of alloc and commit (a cvta'd address). */
static void test_kernel_commit(void **state) {
  (void)state;
  char ptx[4096], err[2048];
  snprintf(ptx, sizeof ptx, HEAD ".shared .align 1024 .b8 tile[16384];\n.shared .align 8 .b64 bar;\n"
           ".shared .align 4 .b32 slot;\n.visible .entry k(.param .u64 out)\n{\n.reg .b64 %%rd<8>;\n"
           ".reg .b32 %%r<40>;\n.reg .pred %%p<8>;\nld.param.u64 %%rd1, [out];\nmov.u32 %%r1, %%tid.x;\n"
           "mov.u64 %%rd7, slot;\ncvta.shared.u64 %%rd7, %%rd7;\n" /* the generic form of alloc */
           "tcgen05.alloc.cta_group::1.sync.aligned.b32 [%%rd7], 32;\n"
           "setp.ne.u32 %%p1, %%r1, 0;\n@!%%p1 mbarrier.init.shared::cta.b64 [bar], 2;\nbar.sync 0;\n"
           "ld.shared.b32 %%r3, [slot];\n@%%p1 bra W1;\nmov.u32 %%r4, tile;\nshr.u32 %%r5, %%r4, 4;\ncvt.u64.u32 %%rd2, %%r5;\n"
           "mov.b64 %%rd3, 0x4000404000010000;\nadd.u64 %%rd4, %%rd3, %%rd2;\nsetp.ne.u32 %%p2, %%r1, 0;\n"
           "tcgen05.mma.cta_group::1.kind::f16 [%%r3], %%rd4, %%rd4, %u, %%p2;\n"
           "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [bar];\n"
           "mbarrier.test_wait.parity.shared::cta.b64 %%p3, [bar], 0;\nselp.u32 %%r6, 1, 0, %%p3;\n"
           "st.global.b32 [%%rd1], %%r6;\n"
           "W1:\nsetp.ne.u32 %%p5, %%r1, 1;\n@%%p5 bra W;\nmov.u64 %%rd7, bar;\ncvta.shared.u64 %%rd7, %%rd7;\n"
           "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [%%rd7];\n"
           "mbarrier.test_wait.parity.shared::cta.b64 %%p3, [bar], 0;\nselp.u32 %%r7, 1, 0, %%p3;\n"
           "st.global.b32 [%%rd1+4], %%r7;\n"
           "W:\nmbarrier.try_wait.parity.shared::cta.b64 %%p4, [bar], 0;\n@!%%p4 bra W;\n"
           "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%%r8, %%r9}, [%%r3];\ntcgen05.wait::ld.sync.aligned;\n"
           "mul.wide.u32 %%rd5, %%r1, 8;\nadd.u64 %%rd6, %%rd1, %%rd5;\nst.global.v2.b32 [%%rd6+8], {%%r8, %%r9};\n"
           "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %%r3, 32;\nret;\n}\n",
           idesc(1, 1, 1, 0, 0, 0, 0, 16, 128));
  keep(ptx);
  uint32_t out[2 + 64];
  uint64_t p = (uint64_t)(uintptr_t)out;
  for (int sched = EM_SCHED_RR; sched <= EM_SCHED_ADVERSARIAL; sched++) {
    memset(out, 0xee, sizeof out);
    bool ok = launch(ptx, 32, &p, sizeof p, sched, 7, err, sizeof err);
    if (!ok) print_error("%s\n", err);
    assert_true(ok);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 0);
    for (int l = 0; l < 32; l++) /* A = B = the zeroed tile: D = 0, written */
      assert_true(out[2 + 2 * l] == 0 && out[3 + 2 * l] == 0);
  }
}

/* ---- reports ---- */

static void must_fail(const char *body, unsigned block, const char *const *want) {
  char ptx[8192], err[2048];
  snprintf(ptx, sizeof ptx, HEAD ".shared .align 1024 .b8 tile[16384];\n.shared .align 8 .b64 bar;\n"
           ".shared .align 4 .b32 slot;\n.visible .entry k(.param .u64 out)\n{\n.reg .b64 %%rd<16>;\n"
           ".reg .b32 %%r<64>;\n.reg .pred %%p<8>;\nmov.u32 %%r1, %%tid.x;\nmov.u32 %%r2, slot;\n%s\nret;\n}\n",
           body);
  keep(ptx);
  uint64_t p = 0;
  bool ok = launch(ptx, block, &p, sizeof p, EM_SCHED_RR, 0, err, sizeof err);
  if (ok) print_error("ran, but should have failed:\n%s\n", ptx);
  assert_false(ok);
  for (; *want; want++) has(err, *want, "the report");
}

#define ALLOC(n) "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], " #n ";\nld.shared.b32 %r3, [slot];\n"
#define DEALLOC(n) "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r3, " #n ";\n"
#define MMA(acc)                                                                                                      \
  "mov.u32 %r4, tile;\nshr.u32 %r5, %r4, 4;\ncvt.u64.u32 %rd2, %r5;\nmov.b64 %rd3, 0x4000404000010000;\n"             \
  "add.u64 %rd4, %rd3, %rd2;\nmov.u32 %r6, 0x08100490;\nsetp.eq.u32 %p2, %r1, " #acc ";\n"                             \
  "setp.eq.u32 %p1, %r1, 0;\n@%p1 tcgen05.mma.cta_group::1.kind::f16 [%r3], %rd4, %rd4, %r6, %p2;\n"

static void test_reports(void **state) {
  (void)state;
  const char *over[] = {"tcgen05.alloc of 32 columns with 512 of the CTA's 512 columns", "over-allocation",
                        "512 columns at 0", NULL};
  must_fail(ALLOC(512) "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], 32;\n" DEALLOC(512), 32, over);
  const char *twice[] = {"tcgen05.dealloc of column 0: already released by the tcgen05.dealloc at ptx line",
                         "double dealloc", NULL};
  must_fail(ALLOC(32) DEALLOC(32) DEALLOC(32), 32, twice);
  const char *uad[] = {"tcgen05.ld: column 0 of tensor memory was released by the tcgen05.dealloc at ptx line",
                       "use after dealloc", NULL};
  must_fail(ALLOC(64) DEALLOC(64) "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r7}, [%r3];\n", 32, uad);
  const char *held[] = {"the CTA ended with tensor memory allocated (64 columns at 0", "tcgen05.dealloc before the kernel exits",
                        NULL};
  must_fail(ALLOC(64), 32, held);
  const char *relinq[] = {"tcgen05.alloc after the CTA's tcgen05.relinquish_alloc_permit", NULL};
  must_fail(ALLOC(32) "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ALLOC(32), 32, relinq);
  const char *cols[] = {"tcgen05.alloc of 48 columns: a power of two from 32 to 512", NULL};
  must_fail("mov.u32 %r9, 48;\ntcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r2], %r9;\n", 32, cols);
  const char *size[] = {"tcgen05.dealloc of 32 columns at column 0, allocated with 64", NULL};
  must_fail(ALLOC(64) DEALLOC(32), 32, size);
  const char *never[] = {"tcgen05.dealloc of column 0: no tcgen05.alloc returned that address", NULL};
  must_fail("mov.u32 %r3, 0;\n" DEALLOC(32), 32, never);
  const char *quarter[] = {"tcgen05.ld.32x32b at lanes 0..31 by warp 1: a warp reaches only the lanes of its quarter, "
                           "32..63", "thread 32,0,0", NULL};
  must_fail("setp.ge.u32 %p3, %r1, 32;\n@%p3 bra SKIP;\n" ALLOC(32) "SKIP:\nbar.sync 0;\nld.shared.b32 %r3, [slot];\n"
            "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r7}, [%r3];\n", 64, quarter);
  const char *half[] = {"tcgen05.st.16x128b at lanes 24..39 by warp 0", NULL};
  must_fail(ALLOC(32) "add.u32 %r8, %r3, 0x180000;\ntcgen05.st.sync.aligned.16x128b.x1.b32 [%r8], {%r1, %r1};\n", 32,
            half);
  const char *unalloc[] = {"tcgen05.ld: column 32 of tensor memory is not allocated", NULL};
  must_fail(ALLOC(32) "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r7, %r8}, [%r3+31];\n", 32, unalloc);
  const char *differ[] = {"the tensor-memory address differs across the warp", "lane 1", NULL};
  must_fail(ALLOC(32) "add.u32 %r8, %r3, %r1;\ntcgen05.ld.sync.aligned.32x32b.x1.b32 {%r7}, [%r8];\n", 32, differ);
  const char *early[] = {"reads %r7, a destination of a tcgen05.ld not yet waited for", NULL};
  must_fail(ALLOC(32) "tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r7}, [%r3];\nadd.u32 %r8, %r7, 1;\n", 32, early);
  const char *acc[] = {"tcgen05.mma (issued by thread 0)", "accumulated into (enable-input-d)", "never written",
                       "enable-input-d false", NULL};
  must_fail(ALLOC(64) MMA(0) "bar.sync 0;\n", 32, acc);
  const char *flight[] = {"tcgen05.dealloc of columns 0..63 while the tcgen05.mma at ptx line", "has not completed",
                          NULL};
  must_fail(ALLOC(64) MMA(1) DEALLOC(64), 32, flight);
  const char *hopper[] = {"tcgen05.mma: the A descriptor", "(a Hopper wgmma descriptor?)", NULL};
  must_fail(ALLOC(64) "mov.u32 %r4, tile;\nshr.u32 %r5, %r4, 4;\ncvt.u64.u32 %rd2, %r5;\nmov.b64 %rd3, 0x4000004000010000;\n"
            "add.u64 %rd4, %rd3, %rd2;\nmov.u32 %r6, 0x08100490;\nsetp.ne.u32 %p2, %r1, %r1;\n"
            "tcgen05.mma.cta_group::1.kind::f16 [%r3], %rd4, %rd4, %r6, %p2;\n", 32, hopper);
  /* .cta_group::2 runs (test_emu_tcpair.c) on a CTA pair; a launch without a cluster has none */
  const char *cg2[] = {"the cluster needs an even number of CTAs", "tcgen05.mma.cta_group::2.kind::f16", NULL};
  must_fail("mov.b64 %rd4, 0;\nsetp.ne.u32 %p2, %r1, %r1;\n"
            "tcgen05.mma.cta_group::2.kind::f16 [%r2], %rd4, %rd4, 0, %p2;\n", 32, cg2);
  const char *tf32[] = {"cannot run this instruction yet", "tcgen05.mma.cta_group::1.kind::tf32", NULL};
  must_fail("mov.b64 %rd4, 0;\nsetp.ne.u32 %p2, %r1, %r1;\n"
            "tcgen05.mma.cta_group::1.kind::tf32 [%r2], %rd4, %rd4, 0, %p2;\n", 32, tf32);
  const char *mask[] = {"disable-output-lane mask", NULL};
  must_fail(ALLOC(64) "mov.b64 %rd4, 0;\nsetp.ne.u32 %p2, %r1, %r1;\n"
            "tcgen05.mma.cta_group::1.kind::f16 [%r3], %rd4, %rd4, 0, {%r1, %r1, %r1, %r1}, %p2;\n", 32, mask);
  const char *cp[] = {"cannot run this instruction yet", "tcgen05.cp.cta_group::1.128x256b", NULL};
  must_fail("mov.b64 %rd4, 0;\ntcgen05.cp.cta_group::1.128x256b [%r2], %rd4;\n", 32, cp);
  const char *nofill[] = {"with .collector::a::use, but no .collector::a::fill filled the collector buffer", NULL};
  must_fail(ALLOC(64) "mov.b64 %rd4, 0x4000404000010000;\nsetp.ne.u32 %p2, %r1, %r1;\nmov.u32 %r6, 0x08100490;\n"
            "tcgen05.mma.cta_group::1.kind::f16.collector::a::fill [%r3], %rd4, %rd4, %r6, %p2;\n"
            "tcgen05.mma.cta_group::1.kind::f16 [%r3], %rd4, %rd4, %r6, %p2;\n"
            "tcgen05.mma.cta_group::1.kind::f16.collector::a::use [%r3], %rd4, %rd4, %r6, %p2;\n", 32, nofill);
  const char *other[] = {"with .collector::a::lastuse of A descriptor 0x4000404000010002, but the collector holds A "
                         "descriptor 0x4000404000010000 (the .collector::a::fill at ptx line", NULL};
  must_fail(ALLOC(64) "mov.b64 %rd4, 0x4000404000010000;\nadd.u64 %rd5, %rd4, 2;\nsetp.ne.u32 %p2, %r1, %r1;\n"
            "mov.u32 %r6, 0x08100490;\n"
            "tcgen05.mma.cta_group::1.kind::f16.collector::a::fill [%r3], %rd4, %rd4, %r6, %p2;\n"
            "tcgen05.mma.cta_group::1.kind::f16.collector::a::use [%r3], %rd4, %rd5, %r6, %p2;\n"
            "tcgen05.mma.cta_group::1.kind::f16.collector::a::lastuse [%r3], %rd5, %rd5, %r6, %p2;\n", 32, other);
  const char *nobar[] = {"is not an mbarrier", NULL};
  must_fail("mov.u64 %rd5, bar;\ntcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%rd5];\n", 32,
            nobar);
}

/* ---- ptxas: every kernel above assembles for sm_100a ---- */

static void test_ptxas(void **state) {
  (void)state;
  const char *ptxas = tu_ptxas_path();
  if (!ptxas) {
    if (getenv("TILE_ALLOW_MISSING_TOOLS")) {
      print_message("[  SKIP    ] no ptxas (TILE_ALLOW_MISSING_TOOLS is set): the sm_100a forms are not assembled\n");
      skip();
    }
    fail_msg("no ptxas ($TILE_PTXAS, $CUDA_HOME/bin, /usr/local/cuda/bin, PATH): test_ptxas assembles the kernels "
             "for sm_100a (set TILE_ALLOW_MISSING_TOOLS=1 to skip)");
  }
  assert_true(nmade >= 20);
  char dir[512];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tu_ptxas_each(ptxas, "sm_100a", (const char *const *)made, nmade, dir);
  tu_rmtree(dir);
  for (int i = 0; i < nmade; i++) free(made[i]);
  nmade = 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_idesc),          cmocka_unit_test(test_sdesc),
      cmocka_unit_test(test_mma_layouts),    cmocka_unit_test(test_mma_shapes),
      cmocka_unit_test(test_mma_modifiers),  cmocka_unit_test(test_mma_known_answer),
      cmocka_unit_test(test_mma_refusals),   cmocka_unit_test(test_ldst_layouts),
      cmocka_unit_test(test_kernel_gemm),    cmocka_unit_test(test_kernel_async),
      cmocka_unit_test(test_kernel_ldst),    cmocka_unit_test(test_kernel_commit),
      cmocka_unit_test(test_reports),        cmocka_unit_test(test_ptxas),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

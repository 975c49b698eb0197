/* test_emu_wgmma.c - the emulator's wgmma (emu/wgmma.c, em_wgmma_run):
 * random bf16/f16 operands placed in shared memory by writers of this file,
 * in the canonical layouts as the PTX ISA and CUTLASS describe them (swizzle
 * atoms of 8 rows, the 16-byte chunks of a row XORed with the row inside
 * the pattern; core matrices of 8 x 16 bytes without a swizzle), and D
 * compared bit for bit with a float64 product rounded once to f32.
 *
 * The writers build tiles the way TMA and tilec do (rows of S bytes, column
 * blocks, the swizzle applied to offsets from a 1024-byte aligned tile), not
 * from descriptor arithmetic; the descriptors then name what the tile is:
 *   K-major:  SBO = bytes between 8-row groups; LBO = bytes between the two
 *             8-element halves of K (no swizzle only; swizzled: 1, unused);
 *   MN-major: swizzled: LBO = bytes between column blocks of S/2 elements of
 *             MN, SBO = bytes between 8-row groups of K; no swizzle: SBO =
 *             bytes between core matrices along MN, LBO = along K.
 * Every byte the operands do not use holds random garbage, so a misplaced
 * read changes D. The values have bounded exponents, so the float64 sums are
 * exact whatever their order: the reference is the exact result, rounded once.
 *
 * Fragments are packed by the inverse of the ISA's formulas (element (row,
 * col) -> thread, register), test_known_answer reads D by the formulas
 * themselves. test_compiler_cases runs the descriptors tilec ships (the
 * constants are checked in the PTX it compiles here): gemm's K-major 128-byte
 * swizzled A and B stepped 32 bytes per k16, attention's two-block K-major
 * Q, the MN-major V (LBO = block rows x 128) under an A from registers, and
 * the backward's MN-major operands. */
#include "testutil.h"
#include "tile/tilec.h"
#include "../../emu/emu.h"

#include <math.h>

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

/* The fragments, by the inverse of the ISA's formulas: element (row, col)
 * of the 64 x N D or the 64 x 16 A belongs to thread 32 (row/16) + 4 (row%8)
 * + (col%8)/2; its D register is 4 (col/8) + 2 ((row%16)/8) + col%2, its A
 * register 2 (col/8) + (row%16)/8, low half for an even col. */
static int frag_thread(int row, int col) { return 32 * (row / 16) + 4 * (row % 8) + (col % 8) / 2; }
static int d_reg(int row, int col) { return 4 * (col / 8) + 2 * ((row % 16) / 8) + col % 2; }
static int a_reg(int row, int col) { return 2 * (col / 8) + (row % 16) / 8; }

/* One problem: A (64 x 16), B (16 x N), the old D, and the smem image. */
typedef struct {
  int n;
  bool f16;
  H a[64][16], b[16][256];
  float d0[64][256];
  uint8_t *smem;
  size_t smem_bytes;
  uint32_t d[128][128], aregs[128][4];
} Prob;

static void prob_init(Prob *p, int n, bool f16, uint64_t *s, size_t smem_bytes) {
  p->n = n, p->f16 = f16;
  for (int m = 0; m < 64; m++)
    for (int k = 0; k < 16; k++) p->a[m][k] = rnd_half(s, f16);
  for (int k = 0; k < 16; k++)
    for (int j = 0; j < n; j++) p->b[k][j] = rnd_half(s, f16);
  for (int m = 0; m < 64; m++)
    for (int j = 0; j < n; j++) p->d0[m][j] = rnd_acc(s);
  p->smem_bytes = smem_bytes;
  p->smem = malloc(smem_bytes);
  for (size_t i = 0; i < smem_bytes; i++) p->smem[i] = (uint8_t)tu_xorshift(s); /* garbage */
  memset(p->d, 0xA5, sizeof p->d);
  for (int m = 0; m < 64; m++)
    for (int j = 0; j < n; j++) p->d[frag_thread(m, j)][d_reg(m, j)] = f32_bits(p->d0[m][j]);
  memset(p->aregs, 0, sizeof p->aregs);
  for (int m = 0; m < 64; m++)
    for (int k = 0; k < 16; k++)
      p->aregs[frag_thread(m, k)][a_reg(m, k)] |= (uint32_t)p->a[m][k].bits << (16 * (k % 2));
}

static void put16(Prob *p, size_t off, uint16_t v) {
  assert_true(off + 2 <= p->smem_bytes);
  p->smem[off] = (uint8_t)v;
  p->smem[off + 1] = (uint8_t)(v >> 8);
}

/* ---- the writers: one operand (rows x 16: rows of A, or columns of B) ---- */

enum { MAJ_K = 0, MAJ_MN = 1 };

typedef struct {
  int major, sw; /* sw: swizzle width in bytes, 0 32 64 128 */
  int variant;   /* no swizzle: the order of the core matrices; swizzled: spacing and the k offset */
  int rows;      /* 64 (A) or N (B) */
} Lay;

/* The 16-byte chunk c of row r (inside an 8-row swizzle pattern of rows of
 * sw bytes) is stored at chunk c ^ pat(r): the 128-byte swizzle XORs with
 * r, the 64-byte one with r / 2 (its rows pair up in the 1024-byte pattern
 * row of 128 bytes), the 32-byte one with r / 4. */
static size_t swz(int sw, size_t row_off, int r, size_t byte) {
  int pat = sw == 128 ? r % 8 : sw == 64 ? (r % 8) / 2 : sw == 32 ? (r % 8) / 4 : 0;
  return row_off + ((byte / 16) ^ (size_t)pat) * 16 + byte % 16;
}

/* The element getter of the operand: (mn, k) -> its bits. */
typedef uint16_t (*Elem)(const Prob *p, int mn, int k);
static uint16_t elem_a(const Prob *p, int mn, int k) { return p->a[mn][k].bits; }
static uint16_t elem_b(const Prob *p, int mn, int k) { return p->b[k][mn].bits; }

/* Write the operand at `base` (1024-aligned); return its descriptor and
 * the bytes it spans (*span). */
static uint64_t place(Prob *p, const Lay *l, Elem get, size_t base, size_t *span) {
  uint64_t start, lbo, sbo;
  int R = l->rows;
  if (!l->sw) {
    /* core matrices (i along MN, j along K) of 128 contiguous bytes: 8 rows
     * of 16 bytes (K-major: a row of 8 k; MN-major: a k of 8 mn) */
    size_t s_mn = l->variant ? 256 : 128, s_k = l->variant ? 128 : (size_t)(R / 8) * 128;
    for (int mn = 0; mn < R; mn++)
      for (int k = 0; k < 16; k++) {
        size_t cm = base + (size_t)(mn / 8) * s_mn + (size_t)(k / 8) * s_k;
        size_t in = l->major == MAJ_K ? (size_t)(mn % 8) * 16 + (size_t)(k % 8) * 2
                                      : (size_t)(k % 8) * 16 + (size_t)(mn % 8) * 2;
        put16(p, cm + in, get(p, mn, k));
      }
    start = base, sbo = s_mn, lbo = s_k;
    *span = (size_t)(R / 8) * 256;
  } else if (l->major == MAJ_K) {
    /* a tile of R rows x S / 2 elements of K (one column block: rows of S
     * bytes), the 8-row patterns `step` bytes apart; the operand is 16
     * columns of it from k0 (a k-step inside the row, as tilec's) */
    int S = l->sw;
    int k0 = (l->variant % 4) * 16 % (S / 2);
    size_t step = (size_t)8 * S * (l->variant & 4 ? 2 : 1);
    for (int mn = 0; mn < R; mn++)
      for (int k = 0; k < 16; k++) {
        size_t row = base + (size_t)(mn / 8) * step + (size_t)(mn % 8) * S;
        put16(p, swz(S, row, mn % 8, (size_t)(k0 + k) * 2), get(p, mn, k));
      }
    start = base + (size_t)k0 * 2, sbo = step, lbo = 16;
    *span = (size_t)(R / 8) * step;
  } else {
    /* a tile of KR rows (K) x R columns (MN), MN contiguous: column blocks
     * of S / 2 elements, each KR rows of S bytes, `blk` bytes apart; the
     * operand is rows k0..k0+15 */
    int S = l->sw, per = S / 2, KR = l->variant & 1 ? 32 : 16, k0 = l->variant & 1 ? 16 : 0;
    size_t blk = (size_t)KR * S * (l->variant & 2 ? 2 : 1);
    for (int mn = 0; mn < R; mn++)
      for (int k = 0; k < 16; k++) {
        int kr = k0 + k;
        size_t row = base + (size_t)(mn / per) * blk + (size_t)kr * S;
        put16(p, swz(S, row, kr % 8, (size_t)(mn % per) * 2), get(p, mn, k));
      }
    start = base + (size_t)k0 * S, lbo = blk, sbo = (size_t)8 * S;
    *span = (size_t)((R + per - 1) / per) * blk;
  }
  uint64_t mode = l->sw == 128 ? 1 : l->sw == 64 ? 2 : l->sw == 32 ? 3 : 0;
  return (start >> 4) | (lbo >> 4) << 16 | (sbo >> 4) << 32 | mode << 62;
}

/* D as em_wgmma_run must leave it: old D (scale_d) plus sa A times sb B. */
static float ref_elem(const Prob *p, int m, int j, bool scale_d, int sa, int sb) {
  double s = scale_d ? p->d0[m][j] : -0.0;
  for (int k = 0; k < 16; k++) s += sa * p->a[m][k].v * (sb * p->b[k][j].v);
  return (float)s;
}

static void check_d(const Prob *p, bool scale_d, int sa, int sb, const char *what) {
  for (int m = 0; m < 64; m++)
    for (int j = 0; j < p->n; j++) {
      float want = ref_elem(p, m, j, scale_d, sa, sb);
      uint32_t got = p->d[frag_thread(m, j)][d_reg(m, j)];
      if (got != f32_bits(want)) {
        print_error("%s: D[%d][%d] = %.9g (0x%08x), want %.9g\n", what, m, j, f32_from(got), got, want);
        fail();
      }
    }
}

static const char *lay_str(const Lay *l, char *buf, size_t cap) {
  snprintf(buf, cap, "%s-major sw%d v%d", l->major ? "MN" : "K", l->sw, l->variant);
  return buf;
}

/* One wgmma of the given layouts (la NULL: A from registers). */
/* One wgmma against the reference; then the same from only the 16-byte pieces em_wgmma_addrs names. */
static void run_case(int n, bool f16, const Lay *la, const Lay *lb, bool scale_d, int sa, int sb, uint64_t *seed) {
  Prob *p = malloc(sizeof *p);
  prob_init(p, n, f16, seed, 160 * 1024);
  size_t span_a = 0, span_b = 0, base_a = 1024;
  EmWgmma w = {.n = n, .atype = f16 ? ET_F16 : ET_BF16, .btype = f16 ? ET_F16 : ET_BF16, .a_regs = !la,
               .scale_d = scale_d, .scale_a = sa, .scale_b = sb};
  if (la) {
    w.adesc = place(p, la, elem_a, base_a, &span_a);
    w.trans_a = la->major;
  }
  size_t base_b = (base_a + span_a + 2047) & ~(size_t)1023;
  w.bdesc = place(p, lb, elem_b, base_b, &span_b);
  w.trans_b = lb->major;
  assert_true(base_b + span_b + 1024 <= p->smem_bytes);
  if (!scale_d) /* the old D must not be read at all */
    for (int t = 0; t < 128; t++)
      for (int r = 0; r < n / 2; r++) p->d[t][r] = 0x7fc00000u;
  char err[512], sa_s[64], sb_s[64], what[256];
  snprintf(what, sizeof what, "n=%d %s A %s B %s scale_d=%d sa=%d sb=%d", n, f16 ? "f16" : "bf16",
           la ? lay_str(la, sa_s, sizeof sa_s) : "regs", lay_str(lb, sb_s, sizeof sb_s), scale_d, sa, sb);
  uint32_t(*d_in)[128] = malloc(sizeof p->d);
  memcpy(d_in, p->d, sizeof p->d);
  bool ok = em_wgmma_run(&w, p->smem, p->smem_bytes, la ? NULL : (const uint32_t(*)[4])p->aregs, p->d, err, sizeof err);
  if (!ok) print_error("%s: %s\n", what, err);
  assert_true(ok);
  check_d(p, scale_d, sa, sb, what);
  /* em_wgmma_addrs (the checks' footprint) names every byte it read: with NaN everywhere else, the same D */
  static uint32_t pieces[(64 + 256) * 2];
  int np = em_wgmma_addrs(&w, pieces);
  assert_int_equal(np, (la ? 128 : 0) + 2 * n);
  uint8_t *only = malloc(p->smem_bytes);
  for (size_t i = 0; i < p->smem_bytes; i++) only[i] = i % 2 ? 0x7f : 0xff; /* 0x7fff: NaN in bf16 and f16 */
  for (int i = 0; i < np; i++) {
    assert_true(pieces[i] % 16 == 0 && pieces[i] + 16 <= p->smem_bytes);
    memcpy(only + pieces[i], p->smem + pieces[i], 16);
  }
  ok = em_wgmma_run(&w, only, p->smem_bytes, la ? NULL : (const uint32_t(*)[4])p->aregs, d_in, err, sizeof err);
  assert_true(ok);
  if (memcmp(d_in, p->d, sizeof p->d)) print_error("%s: em_wgmma_addrs leaves out bytes it reads\n", what);
  assert_memory_equal(d_in, p->d, sizeof p->d);
  free(only), free(d_in);
  /* registers past N/2 untouched */
  for (int t = 0; t < 128; t++)
    for (int r = n / 2; r < 128; r++) assert_int_equal(p->d[t][r], 0xA5A5A5A5u);
  free(p->smem);
  free(p);
}

static const int SWS[4] = {0, 32, 64, 128};
static const int NS[4] = {8, 64, 128, 256};

/* every swizzle x major-ness of A against every one of B, N 8 to 256, bf16 and f16 */
static void test_layouts(void **state) {
  (void)state;
  uint64_t seed = 11;
  int i = 0;
  for (int f16 = 0; f16 < 2; f16++)
    for (int am = 0; am < 2; am++)
      for (int as = 0; as < 4; as++)
        for (int bm = 0; bm < 2; bm++)
          for (int bs = 0; bs < 4; bs++, i++) {
            int n = NS[(i / 8 + f16) % 4]; /* each layout of B with every N */
            Lay la = {am, SWS[as], i % 8, 64}, lb = {bm, SWS[bs], (i / 3) % 8, n};
            run_case(n, f16, &la, &lb, true, 1, 1, &seed);
          }
}

/* A from registers (the RS form) against every layout of B */
static void test_a_regs(void **state) {
  (void)state;
  uint64_t seed = 12;
  for (int f16 = 0; f16 < 2; f16++)
    for (int bm = 0; bm < 2; bm++)
      for (int bs = 0; bs < 4; bs++)
        for (int ni = 0; ni < 4; ni++) {
          Lay lb = {bm, SWS[bs], ni * 3 % 8, NS[ni]};
          run_case(NS[ni], f16, NULL, &lb, ni % 2, 1, 1, &seed);
        }
}

/* scale-d off (the old D, NaN here, ignored) and on; imm-scale-a/b of -1 */
static void test_scales(void **state) {
  (void)state;
  uint64_t seed = 13;
  Lay la = {MAJ_K, 128, 1, 64}, lb = {MAJ_MN, 64, 3, 64};
  for (int sd = 0; sd < 2; sd++)
    for (int sa = -1; sa <= 1; sa += 2)
      for (int sb = -1; sb <= 1; sb += 2) {
        run_case(64, sd, &la, &lb, sd, sa, sb, &seed);
        run_case(64, !sd, NULL, &lb, sd, sa, sb, &seed);
      }
}

/* A = the 16 x 16 identity in each warp's rows (from registers, f16),
 * B[k][n] = 128 k + n % 128: D[m][n] = 128 (m % 16) + n % 128 + old D,
 * read from each thread's registers by the ISA's formulas: register r of
 * thread t holds row 16 (t/32) + (t%32)/4 + 8 ((r/2)%2), column 8 (r/4) +
 * 2 (t%4) + r%2. */
static void test_known_answer(void **state) {
  (void)state;
  static uint8_t smem[256 * 32 + 1024];
  uint32_t a[128][4] = {{0}}, (*d)[128] = calloc(128, sizeof *d);
  for (int t = 0; t < 128; t++) {
    int g = (t % 32) / 4, q = t % 4;
    for (int i = 0; i < 8; i++) {
      int row = g + 8 * ((i / 2) % 2), col = 2 * q + i % 2 + 8 * (i / 4);
      if (row == col) a[t][i / 2] |= 0x3c00u << (16 * (i % 2)); /* f16 1.0 */
    }
    for (int r = 0; r < 128; r++) d[t][r] = f32_bits(0.25f);
  }
  /* B K-major, 128-byte swizzle: column n of B is row n of a [256, 64] tile */
  for (int n = 0; n < 256; n++)
    for (int k = 0; k < 16; k++) {
      int v = 128 * k + n % 128, e = 0;
      uint16_t h = 0;
      if (v) {
        while ((v >> e) > 1) e++;
        h = (uint16_t)((e + 15) << 10 | ((v << 10 >> e) & 0x3ff)); /* exact: v < 2048 */
      }
      size_t off = (size_t)n * 32 + (size_t)k * 2; /* rows of 32 bytes: the 32-byte swizzle */
      off ^= ((off >> 7) & 1) << 4;
      smem[off] = (uint8_t)h, smem[off + 1] = (uint8_t)(h >> 8);
    }
  EmWgmma w = {.n = 256, .atype = ET_F16, .btype = ET_F16, .a_regs = true,
               .bdesc = 3ull << 62 | 16ull << 32 | 1ull << 16, .scale_d = true, .scale_a = 1, .scale_b = 1};
  char err[256];
  bool ok = em_wgmma_run(&w, smem, sizeof smem, (const uint32_t(*)[4])a, d, err, sizeof err);
  if (!ok) print_error("%s\n", err);
  assert_true(ok);
  for (int t = 0; t < 128; t++)
    for (int r = 0; r < 128; r++) {
      int row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((r / 2) % 2), col = 8 * (r / 4) + 2 * (t % 4) + r % 2;
      float want = (float)(128 * (row % 16) + col % 128) + 0.25f;
      if (f32_from(d[t][r]) != want) {
        print_error("thread %d register %d (row %d col %d): %g, want %g\n", t, r, row, col, f32_from(d[t][r]), want);
        fail();
      }
    }
  free(d);
}

/* Subnormals, signed zeros, infinities and NaNs of both types, decoded
 * exactly: B holds them (K-major, no swizzle), A (registers) is 1 or 0 at
 * random, so D = sums of them, IEEE in double (0 x inf = NaN), any NaN
 * matching any NaN. Without scale-d a sum of -0 products stays -0. */
static void test_special_values(void **state) {
  (void)state;
  static const struct { uint16_t bits; double v; } F16[] = {
      {0x0001, 0x1p-24}, {0x03ff, 1023 * 0x1p-24}, {0x8200, -0x1p-15}, {0x0400, 0x1p-14}, {0x7bff, 65504.0},
      {0x8000, -0.0}, {0x7c00, INFINITY}, {0xfc00, -INFINITY}, {0x7e00, NAN}, {0x3c00, 1.0}, {0xc000, -2.0}},
    BF16[] = {{0x0001, 0x1p-133}, {0x007f, 127 * 0x1p-133}, {0x8040, -0x1p-127}, {0x0080, 0x1p-126},
              {0x7f7f, 0x1.fep127}, {0x8000, -0.0}, {0x7f80, INFINITY}, {0xff80, -INFINITY}, {0x7fc1, NAN},
              {0x3f80, 1.0}, {0xc000, -2.0}};
  uint64_t seed = 31;
  for (int f16 = 0; f16 < 2; f16++)
    for (int sd = 0; sd < 2; sd++) {
      int nv = f16 ? (int)(sizeof F16 / sizeof *F16) : (int)(sizeof BF16 / sizeof *BF16);
      Prob *p = malloc(sizeof *p);
      prob_init(p, 64, f16, &seed, 8192);
      for (int m = 0; m < 64; m++)
        for (int k = 0; k < 16; k++) {
          bool one = (tu_xorshift(&seed) % 8) == 0 || m % 16 == k;
          p->a[m][k].bits = one ? (f16 ? 0x3c00 : 0x3f80) : 0, p->a[m][k].v = one ? 1.0 : 0.0;
        }
      for (int k = 0; k < 16; k++)
        for (int j = 0; j < 64; j++) {
          /* mostly zeros of both signs, the special values sparse */
          uint64_t x = tu_xorshift(&seed);
          int i = x % 16 == 0 && j > 1 ? (int)((x >> 8) % (uint64_t)nv) : 5; /* column 0: -0s */
          if (j == 1) i = k == 0 ? 0 : 5; /* column 1: the smallest subnormal and -0s */
          if (x % 16 != 0 && (x >> 20) % 2 && j > 1) p->b[k][j].bits = 0, p->b[k][j].v = 0.0;
          else p->b[k][j].bits = f16 ? F16[i].bits : BF16[i].bits, p->b[k][j].v = f16 ? F16[i].v : BF16[i].v;
        }
      memset(p->aregs, 0, sizeof p->aregs);
      for (int m = 0; m < 64; m++)
        for (int k = 0; k < 16; k++)
          p->aregs[frag_thread(m, k)][a_reg(m, k)] |= (uint32_t)p->a[m][k].bits << (16 * (k % 2));
      for (int j = 0; j < 64; j++)
        for (int k = 0; k < 16; k++) /* core matrices: 8 of N 128 bytes apart (SBO), the two of K 1024 (LBO) */
          put16(p, 1024 + (size_t)(j / 8) * 128 + (size_t)(k / 8) * 1024 + (size_t)(j % 8) * 16 + (size_t)(k % 8) * 2,
                p->b[k][j].bits);
      EmWgmma w = {.n = 64, .atype = f16 ? ET_F16 : ET_BF16, .btype = f16 ? ET_F16 : ET_BF16, .a_regs = true,
                   .bdesc = 1024 >> 4 | (1024ull >> 4) << 16 | (128ull >> 4) << 32, .scale_d = sd, .scale_a = 1,
                   .scale_b = 1};
      char err[256];
      bool ok = em_wgmma_run(&w, p->smem, p->smem_bytes, (const uint32_t(*)[4])p->aregs, p->d, err, sizeof err);
      if (!ok) print_error("%s\n", err);
      assert_true(ok);
      int nan = 0, inf = 0, negz = 0, sub = 0;
      for (int m = 0; m < 64; m++)
        for (int j = 0; j < 64; j++) {
          float want = ref_elem(p, m, j, sd, 1, 1), got = f32_from(p->d[frag_thread(m, j)][d_reg(m, j)]);
          nan += !!isnan(want), inf += !!isinf(want), negz += want == 0 && signbit(want);
          sub += fpclassify(want) == FP_SUBNORMAL;
          if (isnan(want) ? !isnan(got) : f32_bits(got) != f32_bits(want)) {
            print_error("%s scale_d=%d: D[%d][%d] = %a, want %a\n", f16 ? "f16" : "bf16", sd, m, j, got, want);
            fail();
          }
        }
      /* each kind reached (-0 and f32 subnormals without the old D; subnormals from bf16 only) */
      if (!(nan > 0 && inf > 0 && (sd || (negz > 0 && (f16 || sub > 0)))))
        print_error("NaN %d inf %d -0 %d subnormal %d\n", nan, inf, negz, sub);
      assert_true(nan > 0 && inf > 0 && (sd || (negz > 0 && (f16 || sub > 0))));
      free(p->smem);
      free(p);
    }
}

/* ---- tilec's own descriptors --------------------------------------------- */

/* The PTX of an example, compiled here (the head dim alone set: the wgmma
 * forms do not depend on the pipeline options of mk/examples.mk). */
static char *example_ptx(const char *file, const tilec_define *defs, int ndefs) {
  char path[512];
  snprintf(path, sizeof path, "%s/examples/%s", TILE_SRC_DIR, file);
  tilec_options o;
  tilec_options_init(&o);
  o.emit = TILEC_EMIT_PTX;
  o.defines = defs, o.ndefines = ndefs;
  tilec_result *r = NULL;
  tilec_status st = tilec_compile_file(path, &o, &r);
  if (st != TILEC_OK) print_error("%s: %s\n", path, r ? tilec_result_diagnostics(r) : "no result");
  assert_int_equal(st, TILEC_OK);
  size_t len = 0;
  const char *ptx = tilec_result_output(r, &len);
  char *out = malloc(len + 1);
  memcpy(out, ptx, len);
  out[len] = 0;
  tilec_result_free(r);
  return out;
}

/* Every wgmma descriptor constant of the PTX (integers >= 2^62) must be
 * one of the forms tested below: 128-byte swizzle, base offset 0, SBO 1024,
 * LBO 16 (K-major) or block rows x 128 with 64 or 128 rows (MN-major);
 * `need` lists the forms that must appear. */
static void check_ptx_descs(const char *ptx, const char *name, const uint64_t *need, int nneed) {
  int found[8] = {0}, total = 0;
  for (const char *s = ptx; *s; s++) {
    if (*s < '0' || *s > '9' || (s > ptx && ((s[-1] >= '0' && s[-1] <= '9') || s[-1] == '%' || s[-1] == '_' ||
                                             (s[-1] >= 'a' && s[-1] <= 'z'))))
      continue;
    uint64_t v = strtoull(s, NULL, 10);
    if (v < (1ull << 62)) continue;
    total++;
    uint64_t form = v & ~0x3FFFull;
    bool ok = form == 0x4000004000010000ull || form == 0x4000004002000000ull || form == 0x4000004004000000ull;
    if (!ok) {
      print_error("%s: descriptor constant %llu (0x%016llx) is not a form this test covers\n", name,
                  (unsigned long long)v, (unsigned long long)v);
      fail();
    }
    for (int i = 0; i < nneed; i++) found[i] |= form == need[i];
  }
  assert_true(total > 0);
  for (int i = 0; i < nneed; i++) {
    if (!found[i]) print_error("%s: no descriptor of the form 0x%016llx\n", name, (unsigned long long)need[i]);
    assert_true(found[i]);
  }
}

/* Does the PTX have a line containing `a` that, spaces removed, contains
 * `b` and `c` (c NULL: b alone)? */
static bool ptx_has(const char *ptx, const char *a, const char *b, const char *c) {
  for (const char *s = strstr(ptx, a); s; s = strstr(s + 1, a)) {
    const char *e = strchr(s, '\n');
    char line[4096];
    size_t n = 0;
    for (const char *x = s; x < (e ? e : s + strlen(s)) && n + 1 < sizeof line; x++)
      if (*x != ' ' && *x != '\t') line[n++] = *x;
    line[n] = 0;
    if (strstr(line, b) && (!c || strstr(line, c))) return true;
  }
  return false;
}

/* tilec's 128-byte swizzled tile [rows, cols] of bf16 (compiler/lower_hw.c
 * smem_elem_offset, what TMA writes): column blocks of 64 elements, each
 * rows x 128 bytes; the chunk XORed with the row in its 8-row group. */
static size_t tile_off(int rows, int r, int c) {
  size_t off = (size_t)(c / 64) * (size_t)rows * 128 + (size_t)r * 128 + (size_t)(c % 64) * 2;
  return off ^ ((off >> 7) & 7) << 4;
}

/* A chain of K/16 wgmmas over a K-wide A (64 x K) and B (K x N), the way
 * tilec issues it: descriptors from the base constant plus the k-step, the
 * first with scale-d off; D compared with the exact chain (each wgmma's sum
 * rounded once to f32). Tiles at 1024-aligned offsets of the window. */
typedef struct {
  const char *name;
  int K, N;
  int a_kind;        /* 0: K-major tile [a_rows, K] at rows a_r0..; 1: MN-major tile [K, 64]; 2: registers */
  int a_rows, a_r0;  /* the K-major tile's rows and the slice's first row */
  int b_mn;          /* B: 0 K-major tile [N, K]; 1 MN-major tile [K, N] */
  uint64_t a_form, b_form;
} Chain;

static void run_chain(const Chain *c, uint64_t *seed) {
  int K = c->K, N = c->N;
  size_t a_base = 2048, a_bytes = c->a_kind == 0 ? (size_t)c->a_rows * K * 2 : (size_t)K * 64 * 2;
  size_t b_base = (a_base + a_bytes + 1023) & ~(size_t)1023, b_bytes = (size_t)K * N * 2;
  size_t win = b_base + b_bytes + 512;
  uint8_t *smem = malloc(win);
  for (size_t i = 0; i < win; i++) smem[i] = (uint8_t)tu_xorshift(seed);
  H(*A)[128] = malloc(sizeof(H) * 64 * 128), (*B)[256] = malloc(sizeof(H) * 128 * 256);
  for (int m = 0; m < 64; m++)
    for (int k = 0; k < K; k++) {
      A[m][k] = rnd_half(seed, false);
      size_t off = c->a_kind == 0 ? tile_off(c->a_rows, c->a_r0 + m, k) : tile_off(K, k, m);
      if (c->a_kind != 2)
        smem[a_base + off] = (uint8_t)A[m][k].bits, smem[a_base + off + 1] = (uint8_t)(A[m][k].bits >> 8);
    }
  for (int k = 0; k < K; k++)
    for (int n = 0; n < N; n++) {
      B[k][n] = rnd_half(seed, false);
      size_t off = c->b_mn ? tile_off(K, k, n) : tile_off(N, n, k);
      smem[b_base + off] = (uint8_t)B[k][n].bits, smem[b_base + off + 1] = (uint8_t)(B[k][n].bits >> 8);
    }
  uint32_t(*d)[128] = calloc(128, sizeof *d);
  float ref[64][256];
  for (int k16 = 0; k16 < K / 16; k16++) {
    /* tilec's k-steps (lower_hw.c): K-major +32 bytes in the 128-byte row,
     * past its end the next column block (rows x 128 bytes further);
     * MN-major 16 rows of 128 bytes */
    size_t kb = (size_t)k16 * 32;
    uint64_t a_step = c->a_kind == 1 ? (uint64_t)k16 * 128 : ((kb / 128) * c->a_rows * 128 + kb % 128) >> 4;
    uint64_t b_step = c->b_mn ? (uint64_t)k16 * 128 : ((kb / 128) * N * 128 + kb % 128) >> 4;
    size_t a_start = a_base + (c->a_kind == 0 ? (size_t)c->a_r0 * 128 : 0);
    EmWgmma w = {.n = N, .atype = ET_BF16, .btype = ET_BF16, .a_regs = c->a_kind == 2,
                 .adesc = (c->a_form | a_start >> 4) + a_step, .bdesc = (c->b_form | b_base >> 4) + b_step,
                 .trans_a = c->a_kind == 1, .trans_b = c->b_mn, .scale_d = k16 > 0, .scale_a = 1, .scale_b = 1};
    uint32_t aregs[128][4] = {{0}};
    for (int m = 0; m < 64; m++)
      for (int k = 0; k < 16; k++)
        aregs[frag_thread(m, k)][a_reg(m, k)] |= (uint32_t)A[m][16 * k16 + k].bits << (16 * (k % 2));
    char err[512];
    bool ok = em_wgmma_run(&w, smem, win, (const uint32_t(*)[4])aregs, d, err, sizeof err);
    if (!ok) print_error("%s k16=%d: %s\n", c->name, k16, err);
    assert_true(ok);
    for (int m = 0; m < 64; m++)
      for (int n = 0; n < N; n++) {
        double s = k16 ? ref[m][n] : 0.0;
        for (int k = 16 * k16; k < 16 * k16 + 16; k++) s += A[m][k].v * B[k][n].v;
        ref[m][n] = (float)s;
      }
  }
  for (int m = 0; m < 64; m++)
    for (int n = 0; n < N; n++) {
      uint32_t got = d[frag_thread(m, n)][d_reg(m, n)];
      if (got != f32_bits(ref[m][n])) {
        print_error("%s: D[%d][%d] = %.9g, want %.9g\n", c->name, m, n, f32_from(got), ref[m][n]);
        fail();
      }
    }
  free(d), free(A), free(B), free(smem);
}

static void test_compiler_cases(void **state) {
  (void)state;
  const uint64_t KMAJ = 4611686293305360384ull, MN64 = 4611686293338849280ull, MN128 = 4611686293372403712ull;
  /* the constants, in the PTX tilec makes of the examples */
  char *gemm = example_ptx("gemm/gemm.tile", NULL, 0);
  check_ptx_descs(gemm, "gemm", (uint64_t[]){KMAJ}, 1);
  assert_true(ptx_has(gemm, "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", ",p,1,1,0,0;", NULL));
  tilec_define fwd[] = {{"D", "128"}};
  char *jf = example_ptx("jagged_attention/jfa_fwd.tile", fwd, 1);
  check_ptx_descs(jf, "jfa_fwd d128", (uint64_t[]){KMAJ, MN128}, 2);
  assert_true(ptx_has(jf, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", ",p,1,1,0,0;", NULL));
  /* A in registers, B MN-major (imm-trans-b 1) */
  assert_true(ptx_has(jf, "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "},{%r", ",p,1,1,1;}"));
  tilec_define bwd[] = {{"D", "64"}};
  char *jb = example_ptx("jagged_attention/jfa_bwd.tile", bwd, 1);
  check_ptx_descs(jb, "jfa_bwd d64", (uint64_t[]){KMAJ, MN64, MN128}, 3);
  /* DQT: dQ^T = K^T dS^T, A (K^T) M-contiguous from shared memory (imm-trans-a 1), N = 32 */
  assert_true(ptx_has(jb, "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16", ",p,1,1,1,0;", NULL));
  free(gemm), free(jf), free(jb);

  uint64_t seed = 21;
  const Chain chains[] = {
      /* gemm: a_s[s].slice(0, 64, 64) of [128, 64] x b_s[s].trans() of [256, 64], N = 256 */
      {"gemm", 64, 256, 0, 128, 64, 0, KMAJ, KMAJ},
      /* jfa_fwd d128: Q [64, 128] (two column blocks) x K^T of [128, 128] */
      {"jfa_fwd QK^T", 128, 128, 0, 64, 0, 0, KMAJ, KMAJ},
      /* jfa_fwd d128: P (registers) x V [128, 128], N-contiguous: LBO 128 x 128 */
      {"jfa_fwd PV", 128, 128, 2, 0, 0, 1, 0, MN128},
      /* jfa_bwd d64: MN-major B [64, 64] (LBO 64 x 128) with K-major A */
      {"jfa_bwd dV", 64, 64, 0, 64, 0, 1, KMAJ, MN64},
      /* an M-contiguous A (view.trans() of [K, 64]) with an MN-major B two blocks wide */
      {"MN-major A and B", 64, 128, 1, 0, 0, 1, MN64, MN64},
  };
  for (size_t i = 0; i < sizeof chains / sizeof *chains; i++) run_chain(&chains[i], &seed);
}

/* ---- refusals --------------------------------------------------------------- */

static void expect_refusal(const EmWgmma *w, const uint8_t *smem, size_t bytes, const char *needle) {
  static uint32_t d[128][128], a[128][4];
  memset(d, 0x5A, sizeof d);
  char err[512] = "";
  bool ok = em_wgmma_run(w, smem, bytes, (const uint32_t(*)[4])a, d, err, sizeof err);
  if (ok) print_error("accepted; expected a refusal with \"%s\"\n", needle);
  assert_false(ok);
  has(err, "wgmma", "the report");
  has(err, needle, "the report");
  for (int t = 0; t < 128; t++)
    for (int r = 0; r < 128; r++) assert_int_equal(d[t][r], 0x5A5A5A5Au); /* D untouched */
}

static void test_refusals(void **state) {
  (void)state;
  static uint8_t smem[64 * 1024];
  /* K-major 128-byte swizzle: A spans 64 rows x 128 bytes, B (N = 64) the same */
  const uint64_t K128 = 1ull << 62 | 64ull << 32 | 1ull << 16;
  EmWgmma ok = {.n = 64, .atype = ET_BF16, .btype = ET_BF16, .adesc = K128 | (1024 >> 4), .bdesc = K128 | (9216 >> 4),
                .scale_a = 1, .scale_b = 1};
  /* the exact window: B's last row ends at 9216 + 8192 */
  uint32_t(*d)[128] = calloc(128, sizeof *d);
  char err[512];
  bool r = em_wgmma_run(&ok, smem, 9216 + 8192, NULL, d, err, sizeof err);
  if (!r) print_error("%s\n", err);
  assert_true(r);
  free(d);
  expect_refusal(&ok, smem, 9216 + 8192 - 1, "outside");
  expect_refusal(&ok, smem, 9216 + 8192 - 16, "B descriptor");
  EmWgmma w = ok;
  w.adesc = K128 | (16384u >> 4) | 0x3FFFull; /* start near 256 KB */
  expect_refusal(&w, smem, sizeof smem, "A descriptor");
  w = ok, w.bdesc = (ok.bdesc & ~(0x3FFFull << 32)) | 0x3FFFull << 32; /* SBO of 256 KB */
  expect_refusal(&w, smem, sizeof smem, "outside");
  w = ok, w.adesc |= 1ull << 49; /* base offset */
  expect_refusal(&w, smem, sizeof smem, "base offset");
  w = ok, w.bdesc |= 1ull << 47; /* reserved */
  expect_refusal(&w, smem, sizeof smem, "reserved");
  int bad_n[] = {0, 4, 12, 100, 264, -8, 512};
  for (size_t i = 0; i < sizeof bad_n / sizeof *bad_n; i++) {
    w = ok, w.n = bad_n[i];
    expect_refusal(&w, smem, sizeof smem, "N = ");
  }
  w = ok, w.btype = ET_F16;
  expect_refusal(&w, smem, sizeof smem, "not A bf16 with B f16");
  w = ok, w.atype = ET_F32, w.btype = ET_F32;
  expect_refusal(&w, smem, sizeof smem, "bf16");
  w = ok, w.scale_a = 0;
  expect_refusal(&w, smem, sizeof smem, "scale");
  w = ok, w.trans_b = 2;
  expect_refusal(&w, smem, sizeof smem, "trans");
  w = ok, w.a_regs = true, w.trans_a = 1;
  expect_refusal(&w, smem, sizeof smem, "imm-trans-a");
  w = ok, w.a_regs = true;
  uint32_t(*d2)[128] = calloc(128, sizeof *d2);
  assert_false(em_wgmma_run(&w, smem, sizeof smem, NULL, d2, err, sizeof err)); /* no A registers */
  free(d2);
  /* an interleaved (unswizzled) B whose LBO reaches past the window */
  w = ok, w.bdesc = (9216 >> 4) | 8ull << 32 | 0x3000ull << 16;
  expect_refusal(&w, smem, sizeof smem, "no swizzle");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_known_answer),
      cmocka_unit_test(test_layouts),
      cmocka_unit_test(test_a_regs),
      cmocka_unit_test(test_scales),
      cmocka_unit_test(test_special_values),
      cmocka_unit_test(test_compiler_cases),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

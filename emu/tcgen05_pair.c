/* tcgen05_pair.c - the MMA of a CTA pair (tcgen05.mma.cta_group::2
 * .kind::f16) as a pure function of its operands: the two CTAs' shared
 * windows and tensor memories in, the two tensor memories out. tmem.c
 * issues and queues it (and tcgen05.c is the one-CTA MMA, whose descriptor
 * decoding this file uses).
 *
 * How the operands are split (tcgen05.h gives the summary): PTX ISA 9.1,
 * 9.7.16 -- "Issue Granularity" (an MMA of .cta_group::2 is issued by one
 * thread of the CTA pair, the peer CTA must not have exited), the matrix
 * shapes of .cta_group::2 (M 128 or 256), and the data-path layouts of
 * .cta_group::2 (each CTA's tensor memory holds its half of D's rows, all
 * 128 lanes for M = 256); the CTA pair is the two CTAs whose %cluster_ctarank
 * differ only in bit 0. A split as rows 0..M/2-1 in the even CTA and the
 * rest in the odd one, B as columns 0..N/2-1 / N/2..N-1, the same
 * descriptors and D address in both: CUTLASS (cute/atom/mma_traits_sm100.hpp,
 * SM100_MMA_F16BF16_2x1SM_SS: the A and B tiles per SM of a 2SM atom), the
 * tilus documentation of tcgen05.mma (cta_group=2: A = [a0; a1], B =
 * [b0, b1], D = [d0; d1], CTA0 the even rank) and CUTLASS's 2SM GEMM
 * kernels, which pass one descriptor for both CTAs' shared memory.
 *
 * A in tensor memory (.cta_group::2 with [a-tmem]): each CTA's 128 rows of
 * A at the same address in its own tensor memory, as its half of D (the
 * tilus documentation of tcgen05.mma: A a shared or a tensor-memory tensor,
 * the split as above); with M = 256 only.
 *
 * M = 128 (each CTA 64 rows of A and of D): D's 64 rows fold onto the 128
 * lanes, columns 0..N/2-1 of row m on lane m and columns N/2..N-1 on lane
 * 64 + m, column n % (N/2) -- the data-path layout B of the PTX ISA, as
 * CUTLASS's tmem_frg_2sm lays out M_MMA = 64 ("2x2" atom: lane m + 64 (n /
 * (N/2)), column n % (N/2)) and the TVM tirx documentation describes it
 * ("column halves folded across the two 64-lane halves"). So D takes N/2
 * columns of each CTA's tensor memory (EmTcIdesc.dn). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tcgen05.h"

bool em_tc_idesc_pair(uint32_t v, EmTcIdesc *d, char *err, size_t errlen) {
  /* every other field as for one CTA: decode it with M = 128 in its place */
  uint32_t m = (v >> 24) & 0x1f;
  if (!em_tc_idesc((v & ~(0x1fu << 24)) | (8u << 24), d, err, errlen)) return false;
  d->raw = v;
  d->m = (int)m << 4;
  if (d->m != 256 && d->m != 128)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x has M = %d: .cta_group::2 has M 128 or 256 (M >> 4 "
                   "in bits 24-28)", v, d->m);
  if (d->n < 32 || d->n > 256 || d->n % 32)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x has N = %d: with .cta_group::2, N is 32 to "
                   "256 in steps of 32, N/2 columns of B in each CTA", v, d->n);
  d->dn = d->m == 128 ? d->n / 2 : d->n; /* M = 128: each CTA's 64 rows of D fold onto its 128 lanes */
  return true;
}

bool em_tc_mma_pair_check(const EmTcMma *op, char *err, size_t errlen) {
  EmTcIdesc id;
  EmTcSdesc da = {0}, db;
  if (!em_tc_idesc_pair(op->id.raw, &id, err, errlen)) return false;
  if (op->a_tmem && id.m == 128)
    return em_errf(err, errlen, "A in tensor memory with M = 128 (.cta_group::2): the emulator runs A from tensor "
                   "memory with M = 256 only");
  if (op->a_tmem) {
    int al = (int)(op->a_taddr >> 16), ac = (int)(op->a_taddr & 0xffff);
    if (al)
      return em_errf(err, errlen, "A at tensor-memory address 0x%08x: with M = 256 each CTA's 128 rows of A start at "
                     "lane 0 (lane %d here)", op->a_taddr, al);
    if (ac + 8 > EM_TMEM_COLS)
      return em_errf(err, errlen, "A at tensor-memory address 0x%08x: columns %d..%d pass the 512 columns", op->a_taddr,
                     ac, ac + 7);
  } else if (!em_tc_sdesc(op->adesc, "A", &da, err, errlen)) {
    return false;
  }
  if (!em_tc_sdesc(op->bdesc, "B", &db, err, errlen)) return false;
  if ((!op->a_tmem && da.base32b && !id.a_mn) || (db.base32b && !id.b_mn))
    return em_errf(err, errlen, "a descriptor's swizzle mode 1 (128-byte rows, 32-byte atoms) with a K-major operand: "
                   "the emulator models that mode MN-major only");
  if (op->scale_d < 0 || op->scale_d > 15) return em_errf(err, errlen, "scale-input-d %d (0 to 15)", op->scale_d);
  int dl = (int)(op->d_taddr >> 16), dc = (int)(op->d_taddr & 0xffff);
  if (dl)
    return em_errf(err, errlen, "D at tensor-memory address 0x%08x: on a CTA pair each CTA's rows of D start at lane 0 "
                   "(lane %d here)", op->d_taddr, dl);
  if (dc + id.dn > EM_TMEM_COLS)
    return em_errf(err, errlen, "D at tensor-memory address 0x%08x: columns %d..%d pass the 512 columns", op->d_taddr, dc,
                   dc + id.dn - 1);
  return true;
}

/* rows mn 0..rows-1, k 0..15 of an operand in one CTA's window */
static bool load(const EmTcSdesc *d, bool mn_major, int rows, bool f16, double scale, const char *which, int cta,
                 const uint8_t *smem, size_t bytes, double (*out)[16], char *err, size_t errlen) {
  for (int mn = 0; mn < rows; mn++)
    for (int k = 0; k < 16; k++) {
      uint64_t a = em_tc_sdesc_addr(d, mn_major, mn, k);
      if (a >= bytes || bytes - a < 2)
        return em_errf(err, errlen, "the %s descriptor 0x%016" PRIx64 " reads shared bytes 0x%" PRIx64 "..0x%" PRIx64
                       " (%s %d, k %d) of the pair's %s CTA, outside its %zu-byte shared window", which, d->raw, a,
                       a + 1, which[0] == 'A' ? "row" : "column", mn, k, cta ? "odd" : "even", bytes);
      out[mn][k] = scale * em_half_value((uint16_t)(smem[a] | smem[a + 1] << 8), f16);
    }
  return true;
}

static bool def_bit(const EmTmemCells *tm, int lane, int col) { return tm->def[lane][col / 8] >> (col % 8) & 1; }

/* rows 0..127, k 0..15 of A in CTA `cta`'s tensor memory: row m on lane m, two 16-bit elements a column */
static bool tmem_a(uint32_t taddr, bool f16, double scale, int cta, const EmTmemCells *tm, double (*out)[16], char *err,
                   size_t errlen) {
  int ac = (int)(taddr & 0xffff);
  for (int m = 0; m < 128; m++)
    for (int k = 0; k < 16; k++) {
      if (!def_bit(tm, m, ac + k / 2))
        return em_errf(err, errlen, "A in tensor memory at 0x%08x: row %d (the %s CTA's lane %d, column %d) was never "
                       "written", taddr, 128 * cta + m, cta ? "odd" : "even", m, ac + k / 2);
      out[m][k] = scale * em_half_value((uint16_t)(tm->cell[m][ac + k / 2] >> (16 * (k % 2))), f16);
    }
  return true;
}

bool em_tc_mma_pair_run(const EmTcMma *op, const uint8_t *const smem[2], const size_t smem_bytes[2],
                        EmTmemCells *tm[2], char *err, size_t errlen) {
  if (!em_tc_mma_pair_check(op, err, errlen)) return false;
  EmTcIdesc id;
  EmTcSdesc da = {0}, db;
  em_tc_idesc_pair(op->id.raw, &id, NULL, 0);
  if (!op->a_tmem) em_tc_sdesc(op->adesc, "A", &da, NULL, 0);
  em_tc_sdesc(op->bdesc, "B", &db, NULL, 0);
  bool f16 = id.atype == ET_F16;
  int N = id.n, h = N / 2, R = id.m / 2, dc = (int)(op->d_taddr & 0xffff);
  double A[2][128][16], B[256][16];
  for (int r = 0; r < 2; r++) {
    if (op->a_tmem ? !tmem_a(op->a_taddr, f16, id.neg_a ? -1 : 1, r, tm[r], A[r], err, errlen)
                   : !load(&da, id.a_mn, R, f16, id.neg_a ? -1 : 1, "A", r, smem[r], smem_bytes[r], A[r], err, errlen))
      return false;
    if (!load(&db, id.b_mn, h, f16, id.neg_b ? -1 : 1, "B", r, smem[r], smem_bytes[r], B + r * h, err, errlen))
      return false;
  }
  /* row m, column n of a CTA's D: lane m, column n (M = 256); M = 128 folds the second half of the columns
   * onto lanes 64.. */
#define DLANE(m, n) (R == 128 ? (m) : (m) + 64 * ((n) / h))
#define DCOL(n) (dc + (R == 128 ? (n) : (n) % h))
  if (op->accumulate)
    for (int r = 0; r < 2; r++)
      for (int m = 0; m < R; m++)
        for (int n = 0; n < N; n++)
          if (!def_bit(tm[r], DLANE(m, n), DCOL(n)))
            return em_errf(err, errlen, "D at tensor-memory address 0x%08x is accumulated into (enable-input-d), but "
                           "row %d column %d (the %s CTA's lane %d, column %d) was never written since its "
                           "allocation: the first MMA of a chain wants enable-input-d false", op->d_taddr,
                           R * r + m, n, r ? "odd" : "even", DLANE(m, n), DCOL(n));
  double scale = 1.0 / (double)(1u << op->scale_d);
  for (int r = 0; r < 2; r++)
    for (int m = 0; m < R; m++)
      for (int n = 0; n < N; n++) {
        int l = DLANE(m, n), x = DCOL(n);
        uint32_t *cell = &tm[r]->cell[l][x];
        double s = -0.0;
        if (op->accumulate) {
          float old;
          memcpy(&old, cell, 4);
          s = (double)old * scale;
        }
        for (int k = 0; k < 16; k++) s += A[r][m][k] * B[n][k];
        float f = (float)s;
        memcpy(cell, &f, 4);
        tm[r]->def[l][x / 8] |= (uint8_t)(1u << (x % 8));
      }
#undef DLANE
#undef DCOL
  return true;
}

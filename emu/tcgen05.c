/* tcgen05.c - Blackwell's fifth-generation tensor core (sm_100a) as pure
 * functions of the operands (issues 16 and 18): the instruction and
 * shared-memory descriptors of tcgen05.mma, what one .kind::f16 MMA
 * computes into tensor memory, and the per-thread layouts of tcgen05.ld /
 * tcgen05.st. The asynchronous side (allocation, the MMA queue, commits to
 * mbarriers, waits) is tmem.c's.
 *
 * Sources, each fact from two where the PTX ISA gives it only as a figure:
 * the PTX ISA 9.1, section 9.7.16 (tensor memory and its addressing, the
 * instruction descriptor table, the shared-memory descriptor table, the
 * data-path layouts, the data-movement shapes); CUTLASS
 * cute/arch/mma_sm100_desc.hpp (UMMA::InstrDescriptor, SmemDescriptor,
 * LayoutType), cute/atom/mma_traits_sm100.hpp (make_umma_desc's canonical
 * layouts; tmem_frg: the M = 64 accumulator at 16 lanes of each 32-lane
 * quarter) and cute/atom/copy_traits_sm100.hpp (the TMEM_LOAD/STORE
 * 32dp32b, 16dp64b, 16dp128b, 16dp256b thread-value layouts, which the
 * ISA draws in figures 183-186); the CUDA toolkit's cuda::ptx
 * tcgen05_*.h (the instruction forms), and ptxas, which assembles every
 * form the tests use.
 *
 * Operand layouts (16-bit elements; mn the row of A or the column of B, k
 * in 0..15; S the swizzle span in bytes) -- those of wgmma (wgmma.c), plus
 * one swizzle mode:
 *   K-major, no swizzle: start + (mn/8) SBO + (mn%8) 16 + (k/8) LBO + (k%8) 2
 *   K-major, swizzled:   start + (mn/8) SBO + (mn%8) S + 2k    (LBO unused)
 *   MN-major, no swizzle: start + (mn/8) SBO + (mn%8) 2 + (k/8) LBO + (k%8) 16
 *   MN-major, swizzled:  start + (mn/(S/2)) LBO + (mn%(S/2)) 2 + (k/8) SBO + (k%8) S
 *   MN-major, 128-byte rows with 32-byte atoms (mode 1): four K rows of 128
 *     bytes to an atom: start + (mn/64) LBO + (mn%64) 2 + (k/4) SBO + (k%4) 128
 * then the swizzle on the absolute address: S = 128, 64, 32 XOR the
 * 16-byte chunk bits [4,4+b) with [7,7+b), b = 3, 2, 1 (Swizzle<b,4,3>);
 * mode 1 XORs the 32-byte chunk bits [5,7) with [7,9) (Swizzle<2,5,2>).
 * Mode 1 K-major is refused (CUTLASS: "invalid for Major-K").
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tcgen05.h"

/* ---- the instruction descriptor ---- */

bool em_tc_idesc(uint32_t v, EmTcIdesc *d, char *err, size_t errlen) {
  static const EmType ab[8] = {ET_F16, ET_BF16};
  *d = (EmTcIdesc){.raw = v};
  d->sparse_sel = (int)(v & 3);
  d->sparse = (v >> 2) & 1;
  d->sat = (v >> 3) & 1;
  unsigned dt = (v >> 4) & 3, at = (v >> 7) & 7, bt = (v >> 10) & 7;
  d->dtype = dt == 0 ? ET_F16 : dt == 1 ? ET_F32 : ET_NONE;
  d->atype = ab[at];
  d->btype = ab[bt];
  d->neg_a = (v >> 13) & 1;
  d->neg_b = (v >> 14) & 1;
  d->a_mn = (v >> 15) & 1;
  d->b_mn = (v >> 16) & 1;
  d->n = d->dn = (int)((v >> 17) & 0x3f) << 3;
  d->m = (int)((v >> 24) & 0x1f) << 4;
  d->max_shift = (int)(v >> 30);
  uint32_t reserved = v & (1u << 6 | 1u << 23 | 1u << 29);
  if (reserved)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x sets reserved bits (0x%08x)", v, reserved);
  if (d->sparse)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x asks for a sparse A (bit 2): the emulator runs dense "
                   "MMAs only (and tcgen05.mma.sp names sparsity)", v);
  if (d->sparse_sel || d->sat)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x sets the sparsity selector or saturate bits, which "
                   ".kind::f16 has not", v);
  if (d->max_shift)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x sets a maximum shift (bits 30-31), which only "
                   "tcgen05.mma.ws has", v);
  if (d->dtype == ET_NONE)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x has D type %u (.kind::f16: 0 f16, 1 f32)", v, dt);
  if (d->dtype != ET_F32)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x asks for an f16 D: the emulator runs f32 "
                   "accumulators only", v);
  if (at > 1 || bt > 1)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x has A type %u and B type %u (.kind::f16: 0 f16, "
                   "1 bf16)", v, at, bt);
  if (at != bt)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x mixes an %s A with a %s B: the emulator runs one type "
                   "for both", v, at ? "bf16" : "f16", bt ? "bf16" : "f16");
  if (d->m != 64 && d->m != 128)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x has M = %d: cta_group::1 has M 64 or 128 (M >> 4 in "
                   "bits 24-28)", v, d->m);
  int step = d->m == 64 ? 8 : 16;
  if (d->n < step || d->n > 256 || d->n % step)
    return em_errf(err, errlen, "the instruction descriptor 0x%08x has N = %d: with M = %d, N is %d to 256 in steps of "
                   "%d (N >> 3 in bits 17-22)", v, d->n, d->m, step, step);
  return true;
}

/* ---- the shared-memory descriptor ---- */

bool em_tc_sdesc(uint64_t v, const char *which, EmTcSdesc *d, char *err, size_t errlen) {
  *d = (EmTcSdesc){.raw = v};
  d->start = (uint32_t)(v & 0x3fff) << 4;
  d->lbo = (uint32_t)((v >> 16) & 0x3fff) << 4;
  d->sbo = (uint32_t)((v >> 32) & 0x3fff) << 4;
  d->version = (int)((v >> 46) & 7);
  d->base = (int)((v >> 49) & 7);
  d->lbo_mode = (int)((v >> 52) & 1);
  d->mode = (int)(v >> 61);
  static const int sw[8] = {0, 128, 128, 0, 64, 0, 32, 0};
  d->sw = sw[d->mode];
  d->base32b = d->mode == 1;
  uint64_t reserved = v & (3ull << 14 | 3ull << 30 | 0xffull << 53);
  if (reserved)
    return em_errf(err, errlen, "the %s descriptor 0x%016" PRIx64 " sets reserved bits (0x%016" PRIx64 ")", which, v,
                   reserved);
  if (d->version != 1)
    return em_errf(err, errlen, "the %s descriptor 0x%016" PRIx64 " has %u in bits 46-48, not the 0b001 tcgen05 "
                   "descriptors carry%s", which, v, (unsigned)d->version,
                   d->version == 0 ? " (a Hopper wgmma descriptor?)" : "");
  if (d->mode == 3 || d->mode == 5 || d->mode == 7)
    return em_errf(err, errlen, "the %s descriptor 0x%016" PRIx64 " has swizzle mode %d (0 none, 1 128-byte with "
                   "32-byte atoms, 2 128-byte, 4 64-byte, 6 32-byte)", which, v, d->mode);
  if (d->lbo_mode)
    return em_errf(err, errlen, "the %s descriptor 0x%016" PRIx64 " sets the LBO mode (bit 52, for 48-byte K tiles): "
                   "the emulator does not model it", which, v);
  if (d->base)
    return em_errf(err, errlen, "the %s descriptor 0x%016" PRIx64 " has matrix base offset %d; the emulator models only "
                   "0 (the swizzle pattern starting on its repeat boundary of the shared window)", which, v, d->base);
  return true;
}

uint64_t em_tc_sdesc_addr(const EmTcSdesc *d, bool mn_major, int mn, int k) {
  uint64_t a, m = (uint64_t)mn, kk = (uint64_t)k, s = (uint64_t)d->sw;
  if (d->base32b) {
    a = d->start + (m / 64) * d->lbo + (m % 64) * 2 + (kk / 4) * d->sbo + (kk % 4) * 128;
    return a ^ (((a >> 7) & 3) << 5);
  }
  if (!mn_major) {
    if (!s) a = d->start + (m / 8) * d->sbo + (m % 8) * 16 + (kk / 8) * d->lbo + (kk % 8) * 2;
    else a = d->start + (m / 8) * d->sbo + (m % 8) * s + kk * 2;
  } else {
    if (!s) a = d->start + (m / 8) * d->sbo + (m % 8) * 2 + (kk / 8) * d->lbo + (kk % 8) * 16;
    else a = d->start + (m / (s / 2)) * d->lbo + (m % (s / 2)) * 2 + (kk / 8) * d->sbo + (kk % 8) * s;
  }
  if (s) a ^= ((a >> 7) & (s / 16 - 1)) << 4;
  return a;
}

/* ---- the MMA ---- */

static int tlane(uint32_t taddr) { return (int)(taddr >> 16); }
static int tcol(uint32_t taddr) { return (int)(taddr & 0xffff); }

bool em_tc_mma_check(const EmTcMma *op, char *err, size_t errlen) {
  EmTcIdesc id;
  EmTcSdesc da, db;
  if (!em_tc_idesc(op->id.raw, &id, err, errlen)) return false;
  if (!op->a_tmem) {
    if (!em_tc_sdesc(op->adesc, "A", &da, err, errlen)) return false;
    if (da.base32b && !id.a_mn)
      return em_errf(err, errlen, "the A descriptor's swizzle mode 1 (128-byte rows, 32-byte atoms) with a K-major A: "
                     "the emulator models that mode MN-major only");
  } else if (id.a_mn) {
    return em_errf(err, errlen, "A in tensor memory with the transpose-A bit set (bit 15): A in tensor memory has one "
                   "layout, a row to a lane");
  }
  if (!em_tc_sdesc(op->bdesc, "B", &db, err, errlen)) return false;
  if (db.base32b && !id.b_mn)
    return em_errf(err, errlen, "the B descriptor's swizzle mode 1 (128-byte rows, 32-byte atoms) with a K-major B: the "
                   "emulator models that mode MN-major only");
  if (op->scale_d < 0 || op->scale_d > 15)
    return em_errf(err, errlen, "scale-input-d %d (0 to 15)", op->scale_d);
  int dl = tlane(op->d_taddr), dc = tcol(op->d_taddr);
  if (id.m == 128 && dl != 0)
    return em_errf(err, errlen, "D at tensor-memory address 0x%08x: an M = 128 accumulator starts at lane 0 (lane %d "
                   "here)", op->d_taddr, dl);
  if (id.m == 64 && dl != 0 && dl != 16)
    return em_errf(err, errlen, "D at tensor-memory address 0x%08x: an M = 64 accumulator starts at lane 0 or 16 (lane "
                   "%d here)", op->d_taddr, dl);
  if (dc + id.n > EM_TMEM_COLS)
    return em_errf(err, errlen, "D at tensor-memory address 0x%08x: columns %d..%d pass the 512 columns", op->d_taddr, dc,
                   dc + id.n - 1);
  if (op->a_tmem) {
    int al = tlane(op->a_taddr), ac = tcol(op->a_taddr);
    if (al != dl)
      return em_errf(err, errlen, "A at tensor-memory address 0x%08x and D at 0x%08x: A and D start at the same lane "
                     "(%d and %d here)", op->a_taddr, op->d_taddr, al, dl);
    if (ac + 8 > EM_TMEM_COLS)
      return em_errf(err, errlen, "A at tensor-memory address 0x%08x: columns %d..%d pass the 512 columns",
                     op->a_taddr, ac, ac + 7);
  }
  return true;
}

static bool def_bit(const EmTmemCells *tm, int lane, int col) { return tm->def[lane][col / 8] >> (col % 8) & 1; }

static bool tc_load(const EmTcSdesc *d, bool mn_major, int rows, bool f16, double scale, const char *which,
                    const uint8_t *smem, size_t smem_bytes, double (*out)[16], char *err, size_t errlen) {
  for (int mn = 0; mn < rows; mn++)
    for (int k = 0; k < 16; k++) {
      uint64_t a = em_tc_sdesc_addr(d, mn_major, mn, k);
      if (a >= smem_bytes || smem_bytes - a < 2)
        return em_errf(err, errlen,
                       "the %s descriptor 0x%016" PRIx64 " (%s-major, swizzle mode %d) reads shared bytes 0x%" PRIx64
                       "..0x%" PRIx64 " (%s %d, k %d), outside the CTA's %zu-byte shared window",
                       which, d->raw, mn_major ? "MN" : "K", d->mode, a, a + 1, which[0] == 'A' ? "row" : "column", mn,
                       k, smem_bytes);
      out[mn][k] = scale * em_half_value((uint16_t)(smem[a] | smem[a + 1] << 8), f16);
    }
  return true;
}

bool em_tc_mma_run(const EmTcMma *op, const uint8_t *smem, size_t smem_bytes, EmTmemCells *tm, char *err,
                   size_t errlen) {
  if (!em_tc_mma_check(op, err, errlen)) return false;
  if (!smem && smem_bytes) return em_errf(err, errlen, "no shared memory window");
  EmTcIdesc id;
  em_tc_idesc(op->id.raw, &id, NULL, 0);
  bool f16 = id.atype == ET_F16;
  int M = id.m, N = id.n, dl = tlane(op->d_taddr), dc = tcol(op->d_taddr);
  double A[128][16], B[256][16];
  EmTcSdesc da, db;
  em_tc_sdesc(op->bdesc, "B", &db, NULL, 0);
  if (!tc_load(&db, id.b_mn, N, f16, id.neg_b ? -1 : 1, "B", smem, smem_bytes, B, err, errlen)) return false;
  if (op->a_tmem) {
    int ac = tcol(op->a_taddr);
    for (int m = 0; m < M; m++) {
      int lane = em_tc_row_lane(M, dl, m);
      for (int k = 0; k < 16; k++) {
        if (!def_bit(tm, lane, ac + k / 2))
          return em_errf(err, errlen, "A in tensor memory at 0x%08x: row %d (lane %d, column %d) was never written",
                         op->a_taddr, m, lane, ac + k / 2);
        uint16_t h = (uint16_t)(tm->cell[lane][ac + k / 2] >> (16 * (k % 2)));
        A[m][k] = (id.neg_a ? -1 : 1) * em_half_value(h, f16);
      }
    }
  } else {
    em_tc_sdesc(op->adesc, "A", &da, NULL, 0);
    if (!tc_load(&da, id.a_mn, M, f16, id.neg_a ? -1 : 1, "A", smem, smem_bytes, A, err, errlen)) return false;
  }
  double scale = ldexp(1.0, -op->scale_d);
  if (op->accumulate)
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++)
        if (!def_bit(tm, em_tc_row_lane(M, dl, m), dc + n))
          return em_errf(err, errlen, "D at tensor-memory address 0x%08x is accumulated into (enable-input-d), but row %d "
                         "column %d (lane %d, column %d) was never written since its allocation: the first MMA of a "
                         "chain wants enable-input-d false", op->d_taddr, m, n, em_tc_row_lane(M, dl, m), dc + n);
  for (int m = 0; m < M; m++) {
    int lane = em_tc_row_lane(M, dl, m);
    for (int n = 0; n < N; n++) {
      uint32_t *cell = &tm->cell[lane][dc + n];
      double s = -0.0; /* the products alone keep their sign */
      if (op->accumulate) {
        float old;
        memcpy(&old, cell, 4);
        s = (double)old * scale;
      }
      for (int k = 0; k < 16; k++) s += A[m][k] * B[n][k];
      float f = (float)s;
      memcpy(cell, &f, 4);
      tm->def[lane][(dc + n) / 8] |= (uint8_t)(1u << ((dc + n) % 8));
    }
  }
  return true;
}

/* ---- tcgen05.ld / tcgen05.st layouts ---- */

/* log2 of the largest .num of each shape (PTX ISA, the .num table of tcgen05.ld/st) */
static int max_num(int s) { return s == EM_TC_32X32B || s == EM_TC_16X64B ? 128 : s == EM_TC_16X128B ? 64 : s == EM_TC_16X256B ? 32 : 0; }

int em_tc_ldst_regs(int s, int num) {
  if (num < 1 || num > max_num(s) || (num & (num - 1))) return 0;
  return s == EM_TC_16X128B ? 2 * num : s == EM_TC_16X256B ? 4 * num : num;
}
int em_tc_ldst_lanes(int s) { return s == EM_TC_32X32B ? 32 : 16; }
int em_tc_ldst_cols(int s, int num) {
  return s == EM_TC_32X32B ? num : s == EM_TC_16X64B ? 2 * num : s == EM_TC_16X128B ? 4 * num : 8 * num;
}

void em_tc_ldst_cell(int s, int t, int j, int *lane, int *col) {
  switch (s) {
  case EM_TC_32X32B: /* a lane per thread, a column per register */
    *lane = t, *col = j;
    break;
  case EM_TC_16X64B: /* threads 4r, 4r+2 on lane r; 4r+1, 4r+3 on lane r + 8; register j at columns 2j, 2j+1 */
    *lane = t / 4 + 8 * (t % 2), *col = (t / 2) % 2 + 2 * j;
    break;
  case EM_TC_16X128B: /* threads 4r..4r+3 across lane r (even registers) and r + 8 (odd) */
    *lane = t / 4 + 8 * (j % 2), *col = t % 4 + 4 * (j / 2);
    break;
  default: /* 16x256b: two adjacent columns a thread, lanes r and r + 8, then the next 8 columns */
    *lane = t / 4 + 8 * ((j / 2) % 2), *col = 2 * (t % 4) + j % 2 + 8 * (j / 4);
    break;
  }
}

const char *em_tc_shape_name(int s) {
  return s == EM_TC_32X32B ? "32x32b" : s == EM_TC_16X64B ? "16x64b" : s == EM_TC_16X128B ? "16x128b"
         : s == EM_TC_16X256B ? "16x256b" : "?";
}

/* wgmma.c - Hopper's warpgroup MMA, wgmma.mma_async.m64nNk16 with f32
 * accumulators and bf16/f16 inputs, as a pure function of the operands
 * (issue 16). The asynchronous part (fence, commit groups, wait) belongs to
 * exec.c; this file is what one wgmma computes once it runs.
 *
 * Facts used here, each checked against two sources (the PTX ISA, sections
 * 9.7.15.5.1 "Register Fragments and Shared Memory Matrix Layouts" and
 * 9.7.15.5.1.2.2 "Matrix Descriptor Format", with the tcgen05 table of
 * leading/stride offsets that describes the same canonical layouts; CUTLASS
 * cute/arch/mma_sm90_desc.hpp (GmmaDescriptor) and
 * cute/atom/mma_traits_sm90_gmma.hpp (make_gmma_desc, CLayout_64xN,
 * ALayout_64x16); MLIR's NVGPUToNVVM (the wgmma accumulator store); tilec's
 * own descriptors, compiler/lower_hw.c):
 *
 * Descriptor (64 bits): start address bits 0-13, leading dimension byte
 * offset (LBO) bits 16-29, stride dimension byte offset (SBO) bits 32-45,
 * each a byte count >> 4; base offset bits 49-51; swizzle bits 62-63 (0
 * none, 1 128-byte, 2 64-byte, 3 32-byte). Other bits are reserved.
 *
 * Operand layouts, for a 16-bit element at (mn, k) -- mn the row of A (M)
 * or the column of B (N), k in 0..15 -- with S the swizzle width in bytes:
 *   K-major, no swizzle: 8x8 core matrices of 128 contiguous bytes (8 rows
 *     of 16 bytes); the next 8 rows of MN at SBO, the next 8 of K at LBO:
 *       start + (mn/8) SBO + (mn%8) 16 + (k/8) LBO + (k%8) 2
 *   K-major, swizzled: rows of S bytes, K contiguous, 8-row groups at SBO
 *     (LBO unused):  start + (mn/8) SBO + (mn%8) S + 2k
 *   MN-major, no swizzle: core matrices of 8 K-rows of 16 bytes (8
 *     elements of MN); the next 8 of MN at SBO, the next 8 of K at LBO:
 *       start + (mn/8) SBO + (mn%8) 2 + (k/8) LBO + (k%8) 16
 *   MN-major, swizzled: rows of S bytes along MN (S/2 elements), one per k;
 *     the next S/2 of MN at LBO, the next 8 rows of K at SBO:
 *       start + (mn/(S/2)) LBO + (mn%(S/2)) 2 + (k/8) SBO + (k%8) S
 *   The swizzle then XORs the 16-byte chunk index (address bits 4..) with
 *   the bits just above the 128-byte row (7..): bits [4,4+b) ^= [7,7+b),
 *   b = 3, 2, 1 for S = 128, 64, 32 (CUTLASS's Swizzle<b,4,3>) -- on the
 *   absolute shared-memory address, so the pattern repeats on 1024-, 512-
 *   and 256-byte boundaries: base offset 0. A nonzero base offset (a
 *   pattern that starts elsewhere) is refused.
 *
 * Register fragments, thread t = 32 w + l of the warpgroup, g = l / 4,
 * q = l % 4 (the layout of mma.m16n8k16 per warp, warp w taking rows
 * 16w..16w+15):
 *   D (f32), register r: row 16w + g + 8 ((r/2) % 2), column 8 (r/4) + 2q + r%2
 *   A (bf16x2/f16x2), register j, half h (low 16 bits h = 0), element
 *     i = 2j + h: row 16w + g + 8 ((i/2) % 2), column 2q + i%2 + 8 (i/4)
 *
 * Arithmetic: every product of two bf16 or f16 values is exact in a double;
 * each element of D is the old D (when scale-d) plus the 16 products in k
 * order, summed in double and rounded once to f32 (the GPU's order and
 * intermediate rounding are unspecified: it may differ in the last bits).
 * Without scale-d the sum starts from -0, so D is the IEEE sum of the
 * products alone (all -0 gives -0). Infinities and NaNs propagate as in
 * IEEE arithmetic (0 x inf is NaN); a NaN's payload is whatever the
 * conversion of the double gives.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "emu.h"

typedef struct WgDesc {
  uint64_t raw;
  uint64_t start, lbo, sbo; /* bytes */
  int sw;                   /* swizzle width in bytes: 0 (none), 32, 64, 128 */
} WgDesc;

static const char *wg_type(EmType t) {
  switch (t) {
  case ET_BF16: return "bf16";
  case ET_F16: return "f16";
  case ET_F32: return "f32";
  case ET_F64: return "f64";
  case ET_BF16X2: return "bf16x2";
  case ET_F16X2: return "f16x2";
  default: return t >= ET_B8 && t <= ET_S64 ? "an integer type" : "no type";
  }
}

/* Decode descriptor v of operand `which` ("A" or "B"). */
static bool wg_desc(uint64_t v, const char *which, WgDesc *d, char *err, size_t errlen) {
  static const int sw_bytes[4] = {0, 128, 64, 32};
  const uint64_t known = 0x3FFFull | 0x3FFFull << 16 | 0x3FFFull << 32 | 7ull << 49 | 3ull << 62;
  if (v & ~known)
    return em_errf(err, errlen, "wgmma: the %s descriptor 0x%016" PRIx64 " sets reserved bits (0x%016" PRIx64 ")",
                   which, v, v & ~known);
  unsigned base = (unsigned)(v >> 49) & 7;
  d->raw = v;
  d->start = (v & 0x3FFF) << 4;
  d->lbo = ((v >> 16) & 0x3FFF) << 4;
  d->sbo = ((v >> 32) & 0x3FFF) << 4;
  d->sw = sw_bytes[v >> 62];
  if (base && !d->sw)
    return em_errf(err, errlen, "wgmma: the %s descriptor 0x%016" PRIx64 " has matrix base offset %u without a swizzle",
                   which, v, base);
  if (base)
    return em_errf(err, errlen,
                   "wgmma: the %s descriptor 0x%016" PRIx64 " has matrix base offset %u; the emulator models only 0 "
                   "(the %d-byte swizzle's pattern starting on a %d-byte boundary of the shared window)",
                   which, v, base, d->sw, d->sw * 8);
  return true;
}

/* Byte address (in the shared window) of element (mn, k), k in 0..15. */
static uint64_t wg_addr(const WgDesc *d, bool mn_major, int mn, int k) {
  uint64_t a, m = (uint64_t)mn, kk = (uint64_t)k;
  if (!mn_major) {
    if (!d->sw) a = d->start + (m / 8) * d->sbo + (m % 8) * 16 + (kk / 8) * d->lbo + (kk % 8) * 2;
    else a = d->start + (m / 8) * d->sbo + (m % 8) * (uint64_t)d->sw + kk * 2;
  } else {
    if (!d->sw) a = d->start + (m / 8) * d->sbo + (m % 8) * 2 + (kk / 8) * d->lbo + (kk % 8) * 16;
    else {
      uint64_t per = (uint64_t)d->sw / 2; /* elements of MN in one swizzle row */
      a = d->start + (m / per) * d->lbo + (m % per) * 2 + (kk / 8) * d->sbo + (kk % 8) * (uint64_t)d->sw;
    }
  }
  if (d->sw) a ^= ((a >> 7) & (uint64_t)(d->sw / 16 - 1)) << 4;
  return a;
}

static double wg_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Read the rows x 16 operand described by d (rows: 64 for A, N for B)
 * into out[mn][k], times scale. */
static bool wg_load(const WgDesc *d, bool mn_major, int rows, bool f16, double scale, const char *which,
                    const uint8_t *smem, size_t smem_bytes, double (*out)[16], char *err, size_t errlen) {
  for (int mn = 0; mn < rows; mn++)
    for (int k = 0; k < 16; k++) {
      uint64_t a = wg_addr(d, mn_major, mn, k);
      if (a >= smem_bytes || smem_bytes - a < 2)
        return em_errf(err, errlen,
                       "wgmma: the %s descriptor 0x%016" PRIx64 " (%s-major, %s) reads shared bytes 0x%" PRIx64
                       "..0x%" PRIx64 " (%s %d, k %d), outside the CTA's %zu-byte shared window",
                       which, d->raw, mn_major ? "MN" : "K",
                       d->sw == 128 ? "128-byte swizzle" : d->sw == 64 ? "64-byte swizzle"
                                                         : d->sw == 32 ? "32-byte swizzle" : "no swizzle",
                       a, a + 1, which[0] == 'A' ? "row" : "column", mn, k, smem_bytes);
      uint16_t h = (uint16_t)(smem[a] | smem[a + 1] << 8);
      out[mn][k] = scale * em_half_value(h, f16);
    }
  return true;
}

bool em_wgmma_run(const EmWgmma *w, const uint8_t *smem, size_t smem_bytes, const uint32_t (*a)[4], uint32_t (*d)[128],
                  char *err, size_t errlen) {
  if (!w || !d) return em_errf(err, errlen, "wgmma: no instruction or no accumulator");
  int n = w->n;
  if (n < 8 || n > 256 || n % 8)
    return em_errf(err, errlen, "wgmma: N = %d is not a multiple of 8 from 8 to 256 (m64nNk16)", n);
  if ((w->atype != ET_BF16 && w->atype != ET_F16) || w->btype != w->atype)
    return em_errf(err, errlen,
                   "wgmma: the emulator runs .f32.bf16.bf16 and .f32.f16.f16 only (A and B of one type, bf16 or "
                   "f16), not A %s with B %s",
                   wg_type(w->atype), wg_type(w->btype));
  if ((w->scale_a != 1 && w->scale_a != -1) || (w->scale_b != 1 && w->scale_b != -1))
    return em_errf(err, errlen, "wgmma: imm-scale-a/imm-scale-b must be 1 or -1, not %d and %d", w->scale_a,
                   w->scale_b);
  if ((w->trans_a != 0 && w->trans_a != 1) || (w->trans_b != 0 && w->trans_b != 1))
    return em_errf(err, errlen, "wgmma: imm-trans-a/imm-trans-b must be 0 or 1, not %d and %d", w->trans_a,
                   w->trans_b);
  if (w->a_regs && w->trans_a)
    return em_errf(err, errlen, "wgmma: A from registers has no imm-trans-a (its fragment layout is fixed)");
  if (w->a_regs && !a) return em_errf(err, errlen, "wgmma: A from registers, but no A registers given");
  if (!smem && smem_bytes) return em_errf(err, errlen, "wgmma: no shared memory window");
  bool f16 = w->atype == ET_F16;

  double A[64][16], B[256][16];
  WgDesc da, db;
  if (!wg_desc(w->bdesc, "B", &db, err, errlen)) return false;
  if (!w->a_regs && !wg_desc(w->adesc, "A", &da, err, errlen)) return false;
  if (!wg_load(&db, w->trans_b == 1, n, f16, w->scale_b, "B", smem, smem_bytes, B, err, errlen)) return false;
  if (w->a_regs) {
    for (int t = 0; t < 128; t++) {
      int wp = t / 32, g = (t % 32) / 4, q = t % 4;
      for (int i = 0; i < 8; i++) {
        uint16_t h = (uint16_t)(a[t][i / 2] >> (16 * (i % 2)));
        A[16 * wp + g + 8 * ((i / 2) % 2)][2 * q + i % 2 + 8 * (i / 4)] = w->scale_a * em_half_value(h, f16);
      }
    }
  } else if (!wg_load(&da, w->trans_a == 1, 64, f16, w->scale_a, "A", smem, smem_bytes, A, err, errlen)) {
    return false;
  }

  /* each element of D reads only its own old value: d is updated in place */
  for (int t = 0; t < 128; t++) {
    int wp = t / 32, g = (t % 32) / 4, q = t % 4;
    for (int r = 0; r < n / 2; r++) {
      int row = 16 * wp + g + 8 * ((r / 2) % 2), col = 8 * (r / 4) + 2 * q + r % 2;
      double s = w->scale_d ? wg_f32(d[t][r]) : -0.0; /* -0: the sum of the products alone keeps their sign */
      for (int k = 0; k < 16; k++) s += A[row][k] * B[col][k];
      float f = (float)s;
      uint32_t u;
      memcpy(&u, &f, 4);
      d[t][r] = u;
    }
  }
  return true;
}

int em_wgmma_addrs(const EmWgmma *w, uint32_t *out) {
  WgDesc da, db;
  int n = 0;
  if (!w || w->n < 8 || w->n > 256 || w->n % 8 || !wg_desc(w->bdesc, "B", &db, NULL, 0)) return -1;
  if (!w->a_regs && !wg_desc(w->adesc, "A", &da, NULL, 0)) return -1;
  /* eight elements along the contiguous dimension are one 16-byte piece in every layout (a core matrix's
     row; the swizzles move whole pieces) */
  for (int op = w->a_regs ? 1 : 0; op < 2; op++) {
    const WgDesc *d = op ? &db : &da;
    bool mn_major = (op ? w->trans_b : w->trans_a) == 1;
    int rows = op ? w->n : 64;
    for (int mn = 0; mn < rows; mn += mn_major ? 8 : 1)
      for (int k = 0; k < 16; k += mn_major ? 1 : 8) out[n++] = (uint32_t)wg_addr(d, mn_major, mn, k);
  }
  return n;
}

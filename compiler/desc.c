/* desc.c - the MMA descriptors as pure functions of their fields: the
 * shared-memory matrix descriptor of wgmma (sm_90a) and of tcgen05.mma
 * (sm_100a), and tcgen05's instruction descriptor. The lowerings OR the
 * run-time start address into the constant part made here; the unit test
 * (tests/unit/test_tcgen05_desc.c) checks every field bit by bit.
 *
 * Sources, each field checked against at least two (docs/blackwell.md):
 *   PTX ISA 9.7.16.4 "Matrix Descriptors" (the shared memory descriptor,
 *   and 9.7.16.4.2 "Instruction descriptor", Table 42, .kind::f16); CUTLASS
 *   cute/arch/mma_sm100_desc.hpp (UMMA::SmemDescriptor, UMMA::InstrDescriptor,
 *   UMMA::LayoutType); MLIR's NVVM dialect, NVVMOps.td
 *   (nvvm.tcgen05.mma_smem_desc's table); for wgmma, PTX ISA 9.7.15.5.1.2.2
 *   and CUTLASS cute/arch/mma_sm90_desc.hpp (GmmaDescriptor).
 *
 * Shared-memory descriptor (64 bits):
 *   bits  0-13  start address >> 4 (of the 18-bit shared-memory address)
 *   bits 16-29  leading dimension byte offset >> 4 (LBO)
 *   bits 32-45  stride dimension byte offset >> 4 (SBO)
 *   bits 46-48  sm_100: fixed 0b001 (the descriptor version); sm_90: reserved 0
 *   bits 49-51  matrix base offset (0: the swizzle pattern starts on its
 *               1024/512/256-byte boundary, as every tilec buffer does)
 *   bit  52     sm_100: LBO mode (0: relative byte offset)
 *   bits 61-63  sm_100: swizzle 0 none, 1 128B with 32B atoms, 2 128B, 4 64B, 6 32B
 *   bits 62-63  sm_90: swizzle 0 none, 1 128B, 2 64B, 3 32B
 *   (the 128-byte swizzle sets bit 62 in both)
 *
 * Instruction descriptor, .kind::f16 (32 bits):
 *   bits 0-1 sparsity selector (0), bit 2 sparsity (0 dense), bit 3 saturate
 *   (0), bits 4-5 D type (1 = f32), bit 6 reserved, bits 7-9 A type (0 f16,
 *   1 bf16), bits 10-12 B type, bit 13 negate A, bit 14 negate B, bit 15
 *   transpose A (1 = M-major), bit 16 transpose B (1 = N-major), bits 17-22
 *   N >> 3, bit 23 reserved, bits 24-28 M >> 4, bit 29 reserved, bits 30-31
 *   max shift (.ws only: 0). */
#include "tilec_int.h"

uint64_t dsc_smem_start(uint64_t addr) { return (addr & 0x3FFFF) >> 4; }

uint64_t dsc_smem_hi(int64_t lbo, int64_t sbo, int swizzle, bool sm100) {
  uint64_t d = ((uint64_t)(lbo >> 4) & 0x3FFF) << 16 | ((uint64_t)(sbo >> 4) & 0x3FFF) << 32;
  if (sm100) {
    int code = swizzle == 128 ? 2 : swizzle == 64 ? 4 : swizzle == 32 ? 6 : 0;
    d |= 1ull << 46 | (uint64_t)code << 61;
  } else {
    int code = swizzle == 128 ? 1 : swizzle == 64 ? 2 : swizzle == 32 ? 3 : 0;
    d |= (uint64_t)code << 62;
  }
  return d;
}

uint32_t dsc_idesc_f16(int m, int n, bool bf16, bool a_mn, bool b_mn) {
  return 1u << 4                         /* D: f32 */
         | (uint32_t)bf16 << 7           /* A: bf16 (1) or f16 (0) */
         | (uint32_t)bf16 << 10          /* B: the same */
         | (uint32_t)a_mn << 15          /* A M-major */
         | (uint32_t)b_mn << 16          /* B N-major */
         | ((uint32_t)n >> 3 & 0x3F) << 17 /* N >> 3 */
         | ((uint32_t)m >> 4 & 0x1F) << 24; /* M >> 4 */
}

int64_t dsc_kmajor_step(int eb, int block_rows, int k) {
  int64_t bytes = (int64_t)k * 16 * eb;
  return ((bytes / 128) * block_rows * 128 + bytes % 128) >> 4;
}

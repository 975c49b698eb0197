/* emu/tcgen05.h - Blackwell's fifth-generation tensor core (tcgen05, sm_100a)
 * under the emulator (issues 16 and 18): what tcgen05.c computes, as pure
 * functions of their operands, and what tmem.c (the per-CTA tensor memory
 * and the instructions' execution) and ptx_tc.c (their decoding) share.
 *
 * Tensor memory (PTX ISA 9.7.16.1): per CTA 128 lanes x 512 columns of
 * 32-bit cells; an address is (lane << 16) | column. */
#ifndef TILE_EMU_TCGEN05_H
#define TILE_EMU_TCGEN05_H

#include "emu.h"

enum { EM_TMEM_LANES = 128, EM_TMEM_COLS = 512 };

/* What tmem.c keeps of a CTA's tensor memory: the cells, and which were
 * written since their allocation (def: a bit per cell, lane-major). */
typedef struct EmTmemCells {
  uint32_t cell[EM_TMEM_LANES][EM_TMEM_COLS];
  uint8_t def[EM_TMEM_LANES][EM_TMEM_COLS / 8];
} EmTmemCells;

/* The 32-bit instruction descriptor of tcgen05.mma .kind::f16 (PTX ISA
 * 9.7.16.4.2, the instruction descriptor table):
 *   bits 0-1 sparsity selector, 2 sparsity, 3 saturate (integer kinds),
 *   4-5 D type (0 f16, 1 f32), 6 reserved, 7-9 A type, 10-12 B type
 *   (0 f16, 1 bf16), 13 negate A, 14 negate B, 15 transpose A (1: A is
 *   M-major), 16 transpose B (1: B is N-major), 17-22 N >> 3, 23 reserved,
 *   24-28 M >> 4, 29 reserved, 30-31 maximum shift (.ws only). */
typedef struct EmTcIdesc {
  uint32_t raw;
  int m, n;
  int dn;                     /* D's columns in each CTA's tensor memory: n, or n / 2 for a CTA pair's M = 128 */
  EmType atype, btype, dtype; /* ET_F16 / ET_BF16; ET_F16 / ET_F32 (ET_NONE: an encoding with no type) */
  bool neg_a, neg_b;
  bool a_mn, b_mn;            /* the transpose bits: the operand is M-/N-major (0: K-major) */
  bool sparse, sat;
  int sparse_sel, max_shift;
} EmTcIdesc;

/* Decode v; false with the reason when it is not a dense .kind::f16
 * descriptor of a cta_group::1 MMA the emulator runs (f32 D; M 64 with N
 * 8..256 in steps of 8, or M 128 with N 16..256 in steps of 16; A and B of
 * one type; reserved bits zero). The fields are filled either way. */
bool em_tc_idesc(uint32_t v, EmTcIdesc *d, char *err, size_t errlen);

/* The 64-bit shared-memory matrix descriptor of tcgen05 (PTX ISA
 * 9.7.16.4.1): start address bits 0-13, leading-dimension byte offset
 * (LBO) 16-29, stride-dimension byte offset (SBO) 32-45 (each >> 4),
 * a fixed version 0b001 in bits 46-48 (Hopper's wgmma descriptors have 0
 * there), matrix base offset 49-51, LBO mode 52 (1: LBO an absolute
 * address, for 48-byte K tiles only), reserved 53-60, swizzle mode 61-63:
 * 0 none, 1 128-byte swizzle with 32-byte atomicity, 2 128-byte, 4
 * 64-byte, 6 32-byte (3, 5, 7 unused). */
typedef struct EmTcSdesc {
  uint64_t raw;
  uint32_t start, lbo, sbo; /* bytes */
  int version, base, lbo_mode, mode;
  int sw;                   /* the swizzle span in bytes: 0, 32, 64, 128 */
  bool base32b;             /* mode 1: 128-byte rows, 32-byte chunks swizzled (CUTLASS's Swizzle<2,5,2>) */
} EmTcSdesc;

/* Decode v (of operand `which`, "A" or "B", for reports); false with the
 * reason for a malformed descriptor or one the emulator does not model (a
 * base offset other than 0, LBO mode 1). */
bool em_tc_sdesc(uint64_t v, const char *which, EmTcSdesc *d, char *err, size_t errlen);

/* The shared-window byte address of the 16-bit element (mn, k), k in
 * 0..15, of an operand laid out as d describes, K-major or MN-major (the
 * canonical layouts of PTX ISA 9.7.16.4.1 / 9.7.15.5.1.2, swizzle applied
 * to the absolute address). */
uint64_t em_tc_sdesc_addr(const EmTcSdesc *d, bool mn_major, int mn, int k);

/* The lane of row m (0..M-1) of an M-row matrix in tensor memory whose
 * address has lane lane0: M 128 one row per lane (layout D of PTX ISA
 * 9.7.16.10.5); M 64 (layout F, half the datapath) 16 rows in each
 * 32-lane quarter, rows 16q..16q+15 at lanes lane0 + 32q + 0..15, lane0
 * being 0 or 16. */
static inline int em_tc_row_lane(int m_rows, int lane0, int m) {
  return m_rows == 64 ? lane0 + 32 * (m / 16) + m % 16 : lane0 + m;
}

/* One tcgen05.mma.cta_group::1.kind::f16: D (M x N, f32, in tensor memory
 * at d_taddr) = A (M x 16) * B (16 x N) [+ D * 2^-scale_d], A from shared
 * memory (adesc) or from tensor memory (a_taddr: row m at the lane of row
 * m, 16-bit elements two to a column, k = 2c in the low half of column
 * c), B from shared memory (bdesc, its N columns as the N "rows" of the
 * layout). Each element of D is summed in double and rounded once to f32
 * (-0 plus the products when not accumulating). */
typedef struct EmTcMma {
  EmTcIdesc id;
  bool a_tmem;
  uint64_t adesc, bdesc;
  uint32_t a_taddr, d_taddr;
  bool accumulate; /* enable_input_d */
  int scale_d;     /* scale_input_d: 0..15 */
} EmTcMma;

/* Check the operands (descriptors, tensor-memory addresses and their
 * lanes, shapes); false with the reason. */
bool em_tc_mma_check(const EmTcMma *op, char *err, size_t errlen);
/* Run it on the shared window and the tensor memory tm. False with the
 * reason for operands em_tc_mma_check refuses, shared bytes outside the
 * window, or (tm->def) a cell read that was never written. */
bool em_tc_mma_run(const EmTcMma *op, const uint8_t *smem, size_t smem_bytes, EmTmemCells *tm, char *err,
                   size_t errlen);

/* tcgen05.ld / tcgen05.st data-movement shapes (PTX ISA 9.7.16.2.3). */
typedef enum EmTcShape { EM_TC_32X32B = 1, EM_TC_16X64B, EM_TC_16X128B, EM_TC_16X256B } EmTcShape;

/* Registers per thread of shape s with .num = num (a power of two from 1;
 * 0 when the ISA has no such .num for the shape); lanes and columns the
 * warp touches. */
int em_tc_ldst_regs(int s, int num);
int em_tc_ldst_lanes(int s);
int em_tc_ldst_cols(int s, int num);
/* The cell (lane and column offsets from the address) of register j of
 * thread t (0..31) of the warp. */
void em_tc_ldst_cell(int s, int t, int j, int *lane, int *col);
const char *em_tc_shape_name(int s);

/* ---- shared by tmem.c and ptx_tc.c: EmIns fields of the tcgen05 opcodes ----
 * EM_TC_LD / EM_TC_ST: rank the EmTcShape, type2 log2(.num).
 * EM_TC_MMA: rank 1 when A is in tensor memory; type2 the collector usage
 *   of A (0 discard, the default; 1 fill; 2 use; 3 lastuse); EMM_TC_MASK:
 *   a disable-output-lane vector; EMM_TC_SCALE: a scale-input-d immediate.
 * EM_TC_WAIT: rank 0 wait::ld, 1 wait::st. EM_TC_FENCE: rank 0
 *   before_thread_sync, 1 after_thread_sync.
 * EM_TC_ALLOC, _DEALLOC, _RELINQUISH, _MMA, _COMMIT: EMM_TC_PAIR for
 *   .cta_group::2; EM_TC_COMMIT: EMM_MCAST for .multicast::cluster (a
 *   ctaMask operand after the mbarrier). */
enum { EMM_TC_MASK = 1u << 26, EMM_TC_SCALE = 1u << 27, EMM_TC_PAIR = 1u << 29 };

/* ---- tcgen05_pair.c: the MMA of a CTA pair (.cta_group::2) ----
 * One tcgen05.mma.cta_group::2.kind::f16, issued by one thread of the pair,
 * computes D (M = 256 x N) = A (256 x 16) * B (16 x N) with the operands
 * split over the pair's two CTAs (rank 2p: "even", 2p + 1: "odd"; PTX ISA
 * 9.7.16, the data path and issue granularity of .cta_group::2; CUTLASS's
 * SM100_MMA_F16BF16_2x1SM_SS): the same descriptors and tensor-memory
 * address are read in each CTA; A's rows 0..127 come from the even CTA's
 * shared memory, 128..255 from the odd one's; B's columns 0..N/2-1 from
 * the even CTA's, N/2..N-1 from the odd one's (each holds N/2 of the
 * descriptor's "rows"); D's rows 0..127 go to the even CTA's tensor memory,
 * lanes 0..127 at the address's columns, rows 128..255 to the odd one's.
 * The instruction descriptor's M field says 256 (16 in bits 24-28); N is
 * 32..256 in steps of 32 (each CTA's B half a multiple of 16). */
bool em_tc_idesc_pair(uint32_t v, EmTcIdesc *d, char *err, size_t errlen);
bool em_tc_mma_pair_check(const EmTcMma *op, char *err, size_t errlen);
/* smem[0], tm[0]: the even CTA's; smem[1], tm[1]: the odd one's. */
bool em_tc_mma_pair_run(const EmTcMma *op, const uint8_t *const smem[2], const size_t smem_bytes[2],
                        EmTmemCells *tm[2], char *err, size_t errlen);

/* ptx_tc.c: em_ptx_tc_opcode: true when the opcode's root is tcgen05 (in
 * then decoded, or EM_UNSUPPORTED); em_ptx_tc_operands: NULL when the
 * operands fit (and the MMA's optional ones recorded in in), else what is
 * wrong with them. */
bool em_ptx_tc_opcode(const char *s, int len, EmIns *in);
const char *em_ptx_tc_operands(EmIns *in);

#endif

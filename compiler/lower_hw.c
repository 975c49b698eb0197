/* lower_hw.c - lowering of the explicit Hopper primitives: shared memory
 * rings and views (with the 32/64/128-byte swizzles TMA and wgmma use),
 * mbarriers, TMA loads and stores, wgmma (mma_async) with shared-memory
 * descriptors, and the register-side waits.
 *
 * Single-thread operations (TMA issue, barrier arrivals, expect-tx) run on
 * the group's elected thread (L->elect: thread 0 of the CTA, or of the task
 * replica inside a task). */
#include "lower.h"
#include <stdio.h>
#include <math.h>
#include <string.h>

static MlirValue addr_of(Lw *L, TValue *v) { return lw_get(L, v)->v[0]; }

static MlirValue byte_gep(Lw *L, MlirValue base, MlirValue off) { return lw_gep(L, base, off, L->i8, L->ptr3); }

/* Is view's address the same on every trip through any loop: a slot of
 * one buffer, or a constant slot (k_s[0]), not a ring's run-time one? */
static bool fixed_view(const TValue *v) {
  while (v->def && v->def->opc == OP_SLICE) v = v->def->opnds[0];
  if (!v->def || v->def->opc != OP_SLOT) return true;
  const TValue *i = v->def->opnds[1], *base = v->def->opnds[0];
  return (i->def && i->def->opc == OP_CONST) || base->type->nbuf <= 1;
}

/* The address of smem_load/smem_store's view, made opaque where the op is
 * when the view is a fixed, swizzled one: the addresses of its register
 * groups (the base plus up to 8 XORed thread offsets) are then computed
 * next to the accesses. LLVM hoisted all of them out of every loop and
 * kept them live through it: the 80-row attention backward's dQ^T stage
 * (one buffer) and its neighbours spilled about 30 and serialized the
 * wgmmas. A ring slot's base changes from trip to trip already; a fixed
 * unswizzled row (a homed accumulator, compiler/home.c) is one address,
 * which is better hoisted (layernorm_bwd spilled 72 bytes, not 24, when
 * it was not). */
static MlirValue opaque_addr(Lw *L, const TValue *view) {
  MlirValue p = addr_of(L, (TValue *)view);
  if (!view->type->swizzle || !fixed_view(view)) return p;
  MlirValue i = lw_cast(L, "llvm.ptrtoint", p, L->i32);
  i = lw_asm(L, "mov.b32 $0, $1;", "=r,r", 1, &i, L->i32, true);
  return lw_cast(L, "llvm.inttoptr", i, L->ptr3);
}

static int elem_bytes(const Type *t) { return ty_dtype_bytes((DType)t->elem.dt); }

/* Bytes between slots of a ring: whole 1024-byte swizzle atoms. */
static int64_t slot_stride(const TOp *alloc) {
  if (alloc->opc == OP_BAR_ALLOC) return 8;
  int64_t b = alloc->ival2;
  int sw = alloc->res[0]->type->swizzle;
  /* unswizzled slots 128-byte aligned: what TMA needs of a shared-memory box */
  return sw ? (b + 1023) & ~(int64_t)1023 : (b + 127) & ~(int64_t)127;
}

/* Row size in bytes of one swizzle block (the whole row when unswizzled). */
static int block_row_bytes(const Type *t) {
  int row = t->shape[t->trans ? 0 : 1] * elem_bytes(t);
  return t->swizzle ? t->swizzle : row;
}

/* Byte offset of element (r, c) of a view of `rows` rows, swizzled like
 * CUTLASS's Swizzle<log2(S/16), 4, 3>: the 16-byte chunk index XORs with
 * the row inside each 8-row (S = 128) group. */
static MlirValue elem_offset(Lw *L, const Type *t, MlirValue r, MlirValue c) {
  int eb = elem_bytes(t), S = block_row_bytes(t), rows = ty_block_rows(t);
  int per_block = S / eb;
  MlirValue cb = lw_bin(L, "arith.muli", c, lw_i32(L, eb));
  MlirValue off;
  if (t->shape[1] * eb > S) { /* several column blocks, each rows x S bytes */
    MlirValue blk = lw_bin(L, "arith.divui", c, lw_i32(L, per_block));
    MlirValue inb = lw_bin(L, "arith.remui", cb, lw_i32(L, S));
    off = lw_bin(L, "arith.addi", lw_bin(L, "arith.muli", blk, lw_i32(L, rows * S)),
                 lw_bin(L, "arith.addi", lw_bin(L, "arith.muli", r, lw_i32(L, S)), inb));
  } else {
    off = lw_bin(L, "arith.addi", lw_bin(L, "arith.muli", r, lw_i32(L, S)), cb);
  }
  if (!t->swizzle) return off;
  int mask = t->swizzle / 16 - 1;
  MlirValue bits = lw_bin(L, "arith.andi", lw_bin(L, "arith.shrui", off, lw_i32(L, 7)), lw_i32(L, mask));
  return lw_bin(L, "arith.xori", off, lw_bin(L, "arith.shli", bits, lw_i32(L, 4)));
}

/* elem_offset on constants. With power-of-two sizes (the row block and,
 * for a view several column blocks wide, rows x S) every step of it --
 * shifts, masks, the swizzle's XOR -- is linear over GF(2) in the bits of
 * (r, c): offset(a ^ b) = offset(a) ^ offset(b) (smem_offset_linear). */
static bool ispow2(int64_t x) { return x > 0 && !(x & (x - 1)); }

bool smem_offset_linear(const Type *t) {
  int eb = elem_bytes(t), S = block_row_bytes(t);
  bool multi = t->shape[1] * eb > S;
  return ispow2(eb) && ispow2(S) && (!multi || ispow2(ty_block_rows(t)));
}

int64_t smem_elem_offset(const Type *t, int64_t r, int64_t c) {
  int eb = elem_bytes(t), S = block_row_bytes(t), rows = ty_block_rows(t);
  int64_t cb = c * eb, off;
  if (t->shape[1] * eb > S) off = (c / (S / eb)) * rows * S + r * S + cb % S;
  else off = r * S + cb;
  if (!t->swizzle) return off;
  int mask = t->swizzle / 16 - 1;
  return off ^ (((off >> 7) & mask) << 4);
}

int64_t smem_thread_bits(const Type *t, const LinLayout *lin) {
  int64_t m = 0;
  for (int i = 0; i < lin->nlane; i++) m |= smem_elem_offset(t, lin->lane[i][0], lin->lane[i][1]);
  for (int i = 0; i < lin->nwarp; i++) m |= smem_elem_offset(t, lin->warp[i][0], lin->warp[i][1]);
  return m;
}

/* Is basis vector b the column step v alone? */
static bool col_step(const int *b, int v) { return b[0] == 0 && b[1] == v; }

/* smem_store of a 16-bit tile by stmatrix.m8n8.x4: one instruction stores
 * four 8 x 8 matrices, each thread handing over 8 elements (two per 32-bit
 * register, a fragment row's pair) and lane 8i + j giving the address of
 * row j of matrix i. It fits when 8 elements of a shared-memory row (one
 * 16-byte chunk) come from three bits of the layout, in order:
 *   reg 0, lane 0, lane 1  -> the fragment's columns: plain stmatrix, the
 *                             rows' addresses from lanes 2-4;
 *   lane 2, lane 3, lane 4 -> the fragment's rows: stmatrix.trans (the MMA
 *                             layout stored transposed, dS^T as dS in
 *                             attention's backward), the addresses from
 *                             reg 0 and lanes 0-1;
 * every other bit moving whole chunks (columns in steps of 8), and registers
 * 1 and 2 picking the four matrices. Each thread computes its lane's row
 * address once; each group of 8 registers adds a constant (as smem_move). */
static bool stmatrix_store(Lw *L, const LinLayout *lin, TValue *view, LV *val) {
  const Type *t = view->type;
  if (L->c->opts.no_stmatrix || elem_bytes(t) != 2 || lin->rank != 2 || lin->nlane != 5 || lin->nreg < 3 ||
      !smem_offset_linear(t))
    return false;
  bool trans;
  const int *addr[3];
  if (col_step(lin->lane[2], 1) && col_step(lin->lane[3], 2) && col_step(lin->lane[4], 4)) {
    trans = true;
    addr[0] = lin->reg[0], addr[1] = lin->lane[0], addr[2] = lin->lane[1];
  } else if (col_step(lin->reg[0], 1) && col_step(lin->lane[0], 2) && col_step(lin->lane[1], 4)) {
    trans = false;
    addr[0] = lin->lane[2], addr[1] = lin->lane[3], addr[2] = lin->lane[4];
  } else {
    return false;
  }
  for (int i = 0; i < 3; i++)
    if (addr[i][1] & 7) return false;
  for (int i = 1; i < lin->nreg; i++)
    if (lin->reg[i][1] & 7) return false;
  for (int i = 0; i < lin->nwarp; i++)
    if (lin->warp[i][1] & 7) return false;
  /* lane 8i + j: row j of matrix i (registers 2i, 2i + 1) */
  LinLayout at = *lin;
  for (int d = 0; d < 2; d++) {
    at.lane[0][d] = addr[0][d], at.lane[1][d] = addr[1][d], at.lane[2][d] = addr[2][d];
    at.lane[3][d] = lin->reg[1][d], at.lane[4][d] = lin->reg[2][d];
  }
  MlirValue base = addr_of(L, view), tc[TC_MAX_RANK];
  lw_thread_coord(L, &at, tc);
  MlirValue toff = elem_offset(L, t, tc[0], tc[1]);
  int64_t tmask = smem_thread_bits(t, &at);
  MlirType v2 = lw_vec_type(lw_elem_type(L, t->elem), 2);
  const char *text = trans ? "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [$0], {$1, $2, $3, $4};"
                           : "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};";
  for (int g = 0; g < ly_nregs(lin); g += 8) {
    int rc[TC_MAX_RANK];
    ly_reg_coord(lin, g, rc);
    int64_t kc = smem_elem_offset(t, rc[0], rc[1]);
    MlirValue o = toff;
    if (kc & tmask) o = lw_bin(L, "arith.xori", o, lw_i32(L, (int)(kc & tmask)));
    MlirValue args[5];
    args[0] = byte_gep(L, byte_gep(L, base, o), lw_i32(L, (int)(kc & ~tmask)));
    for (int i = 0; i < 4; i++)
      args[1 + i] = lw_cast(L, "llvm.bitcast", lw_vec_build(L, v2, 2, &val->v[g + 2 * i]), L->i32);
    lw_asm(L, text, "l,r,r,r,r", 5, args, (MlirType){0}, true);
  }
  return true;
}

/* A thread's addresses into a view, register group by register group
 * (smem_move, the cp.async copies): when the offset is linear
 * (smem_offset_linear), the thread's part is computed once and each group
 * adds its constant -- the bits the thread part can never set as an
 * immediate, the rest (the swizzled 16-byte chunk) XORed in; else from
 * (r, c) each time. */
typedef struct SmemAddr {
  const Type *t;
  MlirValue base, toff, tc[TC_MAX_RANK];
  int64_t tmask; /* the offset bits the thread part can set */
  bool linear;
} SmemAddr;

static void smem_addr_init(Lw *L, SmemAddr *a, TValue *view, const LinLayout *lin) {
  a->t = view->type;
  a->base = opaque_addr(L, view);
  lw_thread_coord(L, lin, a->tc);
  a->linear = smem_offset_linear(a->t);
  a->tmask = 0;
  if (a->linear) {
    a->toff = elem_offset(L, a->t, a->tc[0], a->tc[1]);
    a->tmask = smem_thread_bits(a->t, lin);
  }
}

static MlirValue smem_addr(Lw *L, const SmemAddr *a, const LinLayout *lin, int g) {
  int rc[TC_MAX_RANK];
  ly_reg_coord(lin, g, rc);
  if (a->linear) {
    int64_t kc = smem_elem_offset(a->t, rc[0], rc[1]);
    MlirValue o = a->toff;
    if (kc & a->tmask) o = lw_bin(L, "arith.xori", o, lw_i32(L, (int)(kc & a->tmask)));
    return byte_gep(L, byte_gep(L, a->base, o), lw_i32(L, (int)(kc & ~a->tmask)));
  }
  MlirValue r = lw_bin(L, "arith.xori", a->tc[0], lw_i32(L, rc[0]));
  MlirValue c = lw_bin(L, "arith.xori", a->tc[1], lw_i32(L, rc[1]));
  return byte_gep(L, a->base, elem_offset(L, a->t, r, c));
}

/* smem_load / smem_store: each thread moves its registers, vectorized over
 * registers that are consecutive along the row inside one 16-byte chunk,
 * addressed by smem_addr (an address per register group recomputed from
 * (r, c) each time cost ptxas 32 live registers for the accumulator of a
 * 64 x 128 tile). */
/* A row tile in a [1, n] view (home.c's accumulators, pipeline_rows.c's
 * rings): its layout as row 0 of a 2-D one. */
static void as_row(LinLayout *lin) {
  if (lin->rank != 1) return;
  lin->rank = 2;
  lin->shape[1] = lin->shape[0], lin->shape[0] = 1;
  for (int i = 0; i < lin->nreg; i++) lin->reg[i][1] = lin->reg[i][0], lin->reg[i][0] = 0;
  for (int i = 0; i < lin->nlane; i++) lin->lane[i][1] = lin->lane[i][0], lin->lane[i][0] = 0;
  for (int i = 0; i < lin->nwarp; i++) lin->warp[i][1] = lin->warp[i][0], lin->warp[i][0] = 0;
}

static bool smem_move(Lw *L, TOp *op, bool store) {
  TValue *view = op->opnds[0], *tile = store ? op->opnds[1] : op->res[0];
  const Type *t = view->type;
  LinLayout lin;
  if (!lw_linear(L, tile, &lin)) return false;
  as_row(&lin);
  if (store && (op->flags & OPF_TRANS)) { /* element (r, c) of the tile goes to (c, r) of the view */
    int sw = lin.shape[0];
    lin.shape[0] = lin.shape[1], lin.shape[1] = sw;
    for (int i = 0; i < lin.nreg; i++) sw = lin.reg[i][0], lin.reg[i][0] = lin.reg[i][1], lin.reg[i][1] = sw;
    for (int i = 0; i < lin.nlane; i++) sw = lin.lane[i][0], lin.lane[i][0] = lin.lane[i][1], lin.lane[i][1] = sw;
    for (int i = 0; i < lin.nwarp; i++) sw = lin.warp[i][0], lin.warp[i][0] = lin.warp[i][1], lin.warp[i][1] = sw;
  }
  if (store && stmatrix_store(L, &lin, view, lw_get(L, tile))) return true;
  int eb = elem_bytes(t);
  MlirType et = lw_elem_type(L, t->elem);
  SmemAddr ad;
  smem_addr_init(L, &ad, view, &lin);
  int k = 0;
  while (k < lin.nreg && lin.reg[k][1] == (1 << k) && lin.reg[k][0] == 0) k++;
  int vec = 1 << k;
  while (vec > 1 && (vec * eb > 16)) vec /= 2;
  int n = ly_nregs(&lin);
  LV *val = store ? lw_get(L, tile) : lw_new(L, n);
  for (int g = 0; g < n; g += vec) {
    MlirValue p = smem_addr(L, &ad, &lin, g);
    if (vec == 1) {
      if (store) lw_store(L, val->v[g], p, eb);
      else val->v[g] = lw_load(L, p, et, eb);
    } else {
      MlirType vt = lw_vec_type(et, vec);
      if (store) {
        lw_store(L, lw_vec_build(L, vt, vec, &val->v[g]), p, vec * eb);
      } else {
        MlirValue v = lw_load(L, p, vt, vec * eb);
        for (int j = 0; j < vec; j++) val->v[g + j] = lw_vec_extract(L, v, j, et);
      }
    }
  }
  if (!store) lw_set(tile, val);
  return true;
}

/* cp.async (pipeline.c's copies): each thread's 16-byte chunks of the
 * tile go straight to their swizzled place in the view. A chunk reads the
 * elements its count (pipeline.c's, at the chunk's first element) keeps and
 * zero-fills the rest; an invalid copy (an iteration past the loop's end)
 * reads nothing. */
static bool lower_async_copy(Lw *L, TOp *op) {
  TValue *view = op->opnds[0], *ptr = op->opnds[1];
  TValue *mask = (op->flags & OPF_MASK) ? op->opnds[2] : NULL /* the count, or (OPF_OTHER) a bool mask */, *valid = op->opnds[op->nopnds - 1];
  const Type *t = view->type;
  LinLayout lin;
  if (!lw_linear(L, ptr, &lin)) return false;
  as_row(&lin);
  if (op->flags & OPF_TRANS) { /* element (r, c) of the tile goes to (c, r) of the view */
    int sw = lin.shape[0];
    lin.shape[0] = lin.shape[1], lin.shape[1] = sw;
    for (int i = 0; i < lin.nreg; i++) sw = lin.reg[i][0], lin.reg[i][0] = lin.reg[i][1], lin.reg[i][1] = sw;
    for (int i = 0; i < lin.nlane; i++) sw = lin.lane[i][0], lin.lane[i][0] = lin.lane[i][1], lin.lane[i][1] = sw;
    for (int i = 0; i < lin.nwarp; i++) sw = lin.warp[i][0], lin.warp[i][0] = lin.warp[i][1], lin.warp[i][1] = sw;
  }
  int eb = elem_bytes(t), vec = 16 / eb;
  for (int k = 0; (1 << k) < vec; k++)
    if (k >= lin.nreg || lin.reg[k][1] != (1 << k) || lin.reg[k][0] != 0) {
      dg_ice(L->c, op->loc, "async copy: a thread's registers are not 16-byte chunks of a row");
      return false;
    }
  LV *P = lw_get(L, ptr), *Cn = mask ? lw_get(L, mask) : NULL;
  MlirValue ok = lw_get(L, valid)->v[0], none = lw_i32(L, 0);
  SmemAddr ad;
  smem_addr_init(L, &ad, view, &lin);
  for (int g = 0; g < ly_nregs(&lin); g += vec) {
    MlirValue p = smem_addr(L, &ad, &lin, g);
    if (!mask || (op->flags & OPF_OTHER)) { /* all or nothing: the ignore-src form, zeros where not kept */
      MlirValue keep = mask ? lw_bin(L, "arith.andi", Cn->v[g], ok) : ok;
      lw_asm(L, "{ .reg .pred z; setp.eq.b32 z, $2, 0; cp.async.cg.shared.global [$0], [$1], 16, z; }", "l,l,r", 3,
             (MlirValue[]){p, P->v[g], lw_cast(L, "arith.extui", keep, L->i32)}, (MlirType){0}, true);
      continue;
    }
    MlirValue n = eb > 1 ? lw_bin(L, "arith.muli", Cn->v[g], lw_i32(L, eb)) : Cn->v[g]; /* the chunk's kept elements */
    n = lw_select(L, ok, n, none);
    lw_asm(L, "cp.async.cg.shared.global [$0], [$1], 16, $2;", "l,l,r", 3, (MlirValue[]){p, P->v[g], n},
           (MlirType){0}, true);
  }
  return true;
}

static void set1(Lw *L, TValue *v, MlirValue x) {
  LV *lv = lw_new(L, 1);
  lv->v[0] = x;
  lw_set(v, lv);
}

static MlirValue bar_addr(Lw *L, TValue *b) { return addr_of(L, b); }

static void try_wait(Lw *L, MlirValue bar, MlirValue phase) {
  MlirValue ops[3] = {bar, phase, lw_i32(L, 10000000)}; /* suspend-time hint, ns */
  lw_op(L, "nvvm.mbarrier.try_wait.parity", 3, ops, 0, NULL, 0, NULL);
}

/* wgmma smem descriptor (its fields: desc.c): start address, leading/stride
 * byte offsets, swizzle (layout type 1 = 128B, bits 62-63).
 *   K-major: LBO unused (1), SBO = 1024 bytes between 8-row groups.
 *   MN-major (N contiguous, transposed in wgmma's terms): LBO = bytes between
 *   64-element column blocks of N (rows x 128), SBO = 1024 bytes between
 *   8-row groups along K.
 * fresh (MMA_ASYNC's OPF_FRESH_A/B: a tile staged before a pipelined loop,
 * at the same address every iteration): the descriptor is made opaque where
 * the wgmma is issued, so that LLVM does not hoist every k-step's descriptor
 * out of the loop and keep them all live across it (16 registers for the
 * attention forward's Q at head dim 128; the backward's loops spilled on
 * TMA without it). */
static MlirValue wgmma_desc_lbo(Lw *L, MlirValue addr, int64_t lbo, bool fresh) {
  MlirValue a = lw_cast(L, "llvm.ptrtoint", addr, L->i64);
  MlirValue start = lw_bin(L, "arith.shrui", lw_bin(L, "arith.andi", a, lw_int(L, L->i64, 0x3FFFF)),
                           lw_int(L, L->i64, 4));
  MlirValue d = lw_bin(L, "arith.ori", start, lw_int(L, L->i64, (int64_t)dsc_smem_hi(lbo, 1024, 128, false)));
  return fresh ? lw_asm(L, "mov.b64 $0, $1;", "=l,l", 1, &d, L->i64, true) : d;
}
static MlirValue wgmma_desc(Lw *L, MlirValue addr, bool fresh) { return wgmma_desc_lbo(L, addr, 16, fresh); }

/* Is operand b [K, N] stored N-contiguous (MN-major)? */
static bool b_mn_major(const TValue *b) { return !b->type->trans; }
/* Where k-step k (16 elements of K) of a K-major operand starts, in
 * descriptor units (16 bytes) from its start: 32 bytes (bf16) further in
 * the 128-byte row, and past each row's end the next column block, which
 * starts block-rows x 128 bytes further. */
static int64_t kmajor_step(const Type *t, int k) { return dsc_kmajor_step(elem_bytes(t), ty_block_rows(t), k); }
/* Is operand a [M, K] (shared memory) stored M-contiguous (view.trans() of
 * a [K, M] buffer: dS^T as the A of dK = dS^T Q in attention's backward)? */
static bool a_mn_major(const TValue *a) { return a->type->kind != TY_TILE && a->type->trans; }
/* B descriptor and its offset for k-step k (descriptor units of 16 bytes). */
static MlirValue b_desc(Lw *L, TValue *b, bool fresh) {
  if (b_mn_major(b)) return wgmma_desc_lbo(L, addr_of(L, b), (int64_t)ty_block_rows(b->type) * 128, fresh);
  return wgmma_desc(L, addr_of(L, b), fresh);
}
static int64_t b_kstep(const TValue *b, int k) {
  if (b_mn_major(b)) return (int64_t)k * ((16 * 128) >> 4); /* 16 rows of K, 128 bytes each */
  return kmajor_step(b->type, k);
}

/* An empty asm that "rewrites" the registers a wgmma batch reads (A
 * fragments, accumulators), placed just before wgmma.fence: whatever
 * computes them (conversions of P, rescaling of O) is then finished before
 * the fence. Without it LLVM may sink that arithmetic past the fence, ptxas
 * then injects warpgroup.arrive before each wgmma, and where it cannot
 * prove those convergent it serializes every wgmma of the kernel (C7520). */
static void fence_operands(Lw *L, MlirValue *v, int n) {
  for (int b0 = 0; b0 < n; b0 += 120) {
    int m = n - b0 < 120 ? n - b0 : 120;
    Buf cons = {0};
    MlirType *ft = ar_alloc(&L->c->arena, sizeof(MlirType) * (size_t)m);
    for (int i = 0; i < m; i++) {
      ft[i] = mlirValueGetType(v[b0 + i]);
      buf_printf(&cons, "%s=%s", i ? "," : "", mlirTypeEqual(ft[i], L->f32) ? "f" : "r");
    }
    for (int i = 0; i < m; i++) buf_printf(&cons, ",%d", i);
    MlirType st = m == 1 ? ft[0] : mlirLLVMStructTypeLiteralGet(L->mc, m, ft, false);
    MlirValue r = lw_asm(L, "// wgmma operands", cons.data, m, v + b0, st, true);
    buf_free(&cons);
    for (int i = 0; i < m; i++) v[b0 + i] = m == 1 ? r : lw_extract(L, r, i, ft[i]);
  }
}

/* Is the accumulator a splat of +0.0 (zeros([64, N]))? Then the first
 * wgmma of the chain does not read it (scale-d = 0): no zero registers are
 * made and kept live, and ptxas needs no moves into the fragment. */
static bool zero_acc(const TValue *acc) {
  const TOp *d = acc->def;
  while (d && d->opc == OP_CONVERT) d = d->opnds[0]->def;
  if (!d || d->opc != OP_SPLAT) return false;
  const TOp *c = d->opnds[0]->def;
  return c && c->opc == OP_CONST && c->fval == 0.0 && !signbit(c->fval);
}

/* The accumulator registers v (all of them, in fragment order) as the
 * results of mma_async op: one tile, or two side by side. */
static void set_results(Lw *L, TOp *op, const MlirValue *v) {
  int at = 0;
  for (int r = 0; r < op->nres; r++) {
    int n = lw_get(L, op->opnds[2 + r])->n;
    LV *out = lw_new(L, n);
    memcpy(out->v, v + at, sizeof(MlirValue) * (size_t)n);
    lw_set(op->res[r], out);
    at += n;
  }
}

/* wgmma with A in registers (mma.sync A fragments per warp), B in shared
 * memory: the NVVM op takes descriptors only, so this one is PTX. */
static bool mma_regs_a(Lw *L, TOp *op, LV *C) {
  TValue *b = op->opnds[1];
  /* a, or a pair (a, a2) side by side along K (op->ival) */
  TValue *ap[2] = {op->opnds[0], op->ival ? op->opnds[op->nopnds - 1] : NULL};
  int na = ap[1] ? 2 : 1, K = b->type->shape[0], N = b->type->shape[1];
  LinLayout LAp[2];
  LV *Ap[2];
  for (int i = 0; i < na; i++) {
    if (!lw_linear(L, ap[i], &LAp[i])) return false;
    Ap[i] = lw_get(L, ap[i]);
  }
  TValue *a = ap[0];
  int k1 = ap[0]->type->shape[1] / 16; /* k-steps from the first part */
  int n = C->n;
  MlirType et = lw_elem_type(L, a->type->elem);
  const char *ty = a->type->elem.dt == DT_BF16 ? "bf16" : "f16";
  MlirValue db = b_desc(L, b, op->flags & OPF_FRESH_B);
  MlirType *ft = ar_alloc(&L->c->arena, sizeof(MlirType) * (size_t)n);
  for (int i = 0; i < n; i++) ft[i] = L->f32;
  MlirType st = mlirLLVMStructTypeLiteralGet(L->mc, n, ft, false);
  Buf text = {0}, cons = {0};
  buf_printf(&text, "{ .reg .pred p; setp.ne.b32 p, $%d, 0; wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {", n + 5,
             N, ty, ty);
  for (int i = 0; i < n; i++) buf_printf(&text, i ? ", $%d" : "$%d", i);
  buf_printf(&text, "}, {$%d, $%d, $%d, $%d}, $%d, p, 1, 1, %d; }", n, n + 1, n + 2, n + 3, n + 4,
             b_mn_major(b) ? 1 : 0);
  for (int i = 0; i < n; i++) buf_printf(&cons, i ? ",=f" : "=f");
  buf_puts(&cons, ",r,r,r,r,l,r");
  for (int i = 0; i < n; i++) buf_printf(&cons, ",%d", i);
  MlirValue *args = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)(n + 6));
  MlirValue *cur = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)n);
  memcpy(cur, C->v, sizeof(MlirValue) * (size_t)n);
  MlirValue one = lw_i32(L, 1);
  /* every A word first, then the operand fence, then wgmma.fence */
  int nw = 4 * (K / 16);
  MlirValue *ops = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)(nw + n));
  for (int k = 0; k < K / 16; k++) {
    int part = k < k1 ? 0 : 1, kk = k - part * k1;
    const LinLayout *LA = &LAp[part];
    const LV *A = Ap[part];
    for (int p = 0; p < 4; p++) {
      int j0 = 2 * p, j1 = 2 * p + 1, c0[TC_MAX_RANK] = {0}, c1[TC_MAX_RANK] = {0};
      c0[0] = ((j0 >> 1) & 1) * 8, c0[1] = kk * 16 + (j0 & 1) + ((j0 >> 2) & 1) * 8;
      c1[0] = ((j1 >> 1) & 1) * 8, c1[1] = kk * 16 + (j1 & 1) + ((j1 >> 2) & 1) * 8;
      int r0 = ly_solve_reg(LA, c0), r1 = ly_solve_reg(LA, c1);
      if (r0 < 0 || r1 < 0) {
        dg_ice(L->c, op->loc, "wgmma: A register not found");
        return false;
      }
      MlirValue v = lw_vec_build(L, lw_vec_type(et, 2), 2, (MlirValue[]){A->v[r0], A->v[r1]});
      ops[4 * k + p] = lw_cast(L, "llvm.bitcast", v, L->i32);
    }
  }
  bool zero = op->nres == 1 && zero_acc(op->opnds[2]);
  if (zero) { /* the first wgmma ignores the accumulator (scale-d = 0) */
    MlirValue u = lw_op1(L, "llvm.mlir.undef", 0, NULL, L->f32, 0, NULL);
    for (int i = 0; i < n; i++) cur[i] = u;
  }
  memcpy(ops + nw, cur, sizeof(MlirValue) * (size_t)n);
  fence_operands(L, ops, zero ? nw : nw + n);
  memcpy(cur, ops + nw, sizeof(MlirValue) * (size_t)n);
  lw_op(L, "nvvm.wgmma.fence.aligned", 0, NULL, 0, NULL, 0, NULL);
  for (int k = 0; k < K / 16; k++) {
    memcpy(args, ops + 4 * k, sizeof(MlirValue) * 4);
    MlirValue step = lw_int(L, L->i64, b_kstep(b, k));
    args[4] = k ? lw_bin(L, "arith.addi", db, step) : db;
    args[5] = k == 0 && zero ? lw_i32(L, 0) : one;
    memcpy(args + 6, cur, sizeof(MlirValue) * (size_t)n);
    /* operands: A words, B descriptor, scale flag, then the tied accumulators */
    MlirValue r = lw_asm(L, text.data, cons.data, n + 6, args, st, true);
    for (int i = 0; i < n; i++) cur[i] = lw_extract(L, r, i, L->f32);
  }
  buf_free(&text);
  buf_free(&cons);
  set_results(L, op, cur);
  return true;
}

static bool lower_mma_async(Lw *L, TOp *op) {
  TValue *a = op->opnds[0], *b = op->opnds[1];
  int M = a->type->shape[0], K = a->type->shape[1], N = b->type->shape[1];
  /* pipeline.c's: M = 16 x warps, warpgroup g computing rows 64g .. 64g + 63
   * (A from registers: each warpgroup holds its own rows' fragments, the
   * same registers of the layout in every warp, so nothing changes) */
  bool split = M > 64 && M == 16 * L->warps && L->warps % 4 == 0;
  if (M != 64 && !split) {
    dg_error(L->c, op->loc, "mma_async with M = %d is not supported yet (one warpgroup computes 64 rows)", M);
    return false;
  }
  /* the accumulator: one tile, or two side by side (wgmma's fragment
   * register i covers columns 8 (i / 4) + ..., whatever N is, so N1's
   * registers followed by N2's are the fragment of N1 + N2) */
  LV *C = lw_get(L, op->opnds[2]);
  if (op->nres == 2) {
    LV *C2 = lw_get(L, op->opnds[3]);
    LV *both = lw_new(L, C->n + C2->n);
    memcpy(both->v, C->v, sizeof(MlirValue) * (size_t)C->n);
    memcpy(both->v + C->n, C2->v, sizeof(MlirValue) * (size_t)C2->n);
    C = both;
  }
  if (C->n != N / 2) {
    dg_ice(L->c, op->loc, "wgmma accumulator has %d registers, expected %d", C->n, N / 2);
    return false;
  }
  if (a->type->kind == TY_TILE) return mma_regs_a(L, op, C);
  MlirType *ft = ar_alloc(&L->c->arena, sizeof(MlirType) * (size_t)C->n);
  for (int i = 0; i < C->n; i++) ft[i] = L->f32;
  MlirType st = mlirLLVMStructTypeLiteralGet(L->mc, C->n, ft, false);
  MlirValue *cv = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)C->n);
  memcpy(cv, C->v, sizeof(MlirValue) * (size_t)C->n);
  bool zero = op->nres == 1 && zero_acc(op->opnds[2]); /* the first wgmma ignores it (scale-d = 0) */
  if (!zero) fence_operands(L, cv, C->n);
  MlirValue s = lw_op1(L, "llvm.mlir.undef", 0, NULL, st, 0, NULL);
  for (int i = 0; zero ? 0 : i < C->n; i++) {
    char pos[32];
    snprintf(pos, sizeof pos, "array<i64: %d>", i);
    MlirNamedAttribute at = lw_attr(L, "position", lw_pattr(L, pos));
    s = lw_op1(L, "llvm.insertvalue", 2, (MlirValue[]){s, cv[i]}, st, 1, &at);
  }
  lw_op(L, "nvvm.wgmma.fence.aligned", 0, NULL, 0, NULL, 0, NULL);
  /* an M-contiguous a is addressed like an N-contiguous b */
  bool amn = a_mn_major(a);
  bool fa = op->flags & OPF_FRESH_A;
  MlirValue da = amn ? wgmma_desc_lbo(L, addr_of(L, a), (int64_t)ty_block_rows(a->type) * 128, fa)
                     : wgmma_desc(L, addr_of(L, a), fa),
            db = b_desc(L, b, op->flags & OPF_FRESH_B);
  if (split) { /* this warpgroup's 64 rows: 64 rows of 128 bytes further (K-major), or 64 elements of M */
    int64_t bytes = amn ? (int64_t)(64 * elem_bytes(a->type) / 128) * ty_block_rows(a->type) * 128 : 64 * 128;
    MlirValue wg = lw_bin(L, "arith.shrui", L->warp, lw_i32(L, 2));
    MlirValue off = lw_bin(L, "arith.muli", wg, lw_i32(L, (int)(bytes >> 4)));
    da = lw_bin(L, "arith.addi", da, lw_cast(L, "arith.extui", off, L->i64));
  }
  const char *ty = a->type->elem.dt == DT_BF16 ? "#nvvm.wgmma_type<bf16>" : "#nvvm.wgmma_type<f16>";
  char shape[64];
  snprintf(shape, sizeof shape, "#nvvm.shape<m = 64, n = %d, k = 16>", N);
  MlirNamedAttribute at[10] = {
      lw_attr(L, "layoutA", lw_pattr(L, amn ? "#nvvm.mma_layout<col>" : "#nvvm.mma_layout<row>")),
      lw_attr(L, "layoutB", lw_pattr(L, b_mn_major(b) ? "#nvvm.mma_layout<row>" : "#nvvm.mma_layout<col>")),
      lw_attr(L, "satfinite", lw_pattr(L, "#nvvm.mma_int_overflow<wrapped>")),
      lw_attr(L, "scaleA", lw_pattr(L, "#nvvm.wgmma_scale_in<one>")),
      lw_attr(L, "scaleB", lw_pattr(L, "#nvvm.wgmma_scale_in<one>")),
      lw_attr(L, "scaleD", lw_pattr(L, "#nvvm.wgmma_scale_out<one>")),
      lw_attr(L, "shape", lw_pattr(L, shape)),
      lw_attr(L, "typeA", lw_pattr(L, ty)),
      lw_attr(L, "typeB", lw_pattr(L, ty)),
      lw_attr(L, "typeD", lw_pattr(L, "#nvvm.wgmma_type<f32>")),
  };
  for (int k = 0; k < K / 16; k++) {
    /* the next 16 columns of K start 32 bytes further (>> 4: +2), or in the next column block */
    MlirValue step = lw_int(L, L->i64, amn ? (int64_t)k * ((16 * 128) >> 4) : kmajor_step(a->type, k)),
              bst = lw_int(L, L->i64, b_kstep(b, k));
    MlirValue dak = k ? lw_bin(L, "arith.addi", da, step) : da, dbk = k ? lw_bin(L, "arith.addi", db, bst) : db;
    at[5] = lw_attr(L, "scaleD", lw_pattr(L, k == 0 && zero ? "#nvvm.wgmma_scale_out<zero>" : "#nvvm.wgmma_scale_out<one>"));
    s = lw_op1(L, "nvvm.wgmma.mma_async", 3, (MlirValue[]){s, dak, dbk}, st, 10, at);
  }
  MlirValue *res = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)C->n);
  for (int i = 0; i < C->n; i++) res[i] = lw_extract(L, s, i, L->f32);
  set_results(L, op, res);
  return true;
}

/* After wgmma.wait_group, tie the accumulator registers to the wait so
 * nothing reads them earlier (an empty asm that "rewrites" them). */
/* mma_wait(n, acc, after = x): wgmma.wait_group behind a branch on a
 * warp-uniform value made from x. ptxas schedules WARPGROUP.DEPBAR as early
 * as it can: in an attention loop it lands before the softmax that the PTX
 * puts ahead of it, and the softmax no longer overlaps the P V wgmmas in
 * flight. A branch that depends on x (through redux.sync, so it is uniform
 * and needs no divergence bookkeeping) keeps the wait after x. The branch
 * is never taken in practice (x's bits would have to OR-reduce to one NaN
 * pattern), and when it is, it only runs a membar and the same wait. The
 * labels start with '$' (written $$ in asm), which no Tile name can. */
static void wait_after(Lw *L, TValue *x, int n) {
  LV *v = lw_get(L, x);
  MlirValue bits = (MlirValue){0};
  for (int i = 0; i < v->n; i++) {
    MlirValue e = v->v[i];
    MlirType t = mlirValueGetType(e);
    MlirValue w;
    if (mlirTypeEqual(t, L->i32)) w = e;
    else if (mlirTypeEqual(t, L->f32)) w = lw_cast(L, "llvm.bitcast", e, L->i32);
    else if (mlirTypeIsAFloat(t)) {
      unsigned wd = mlirFloatTypeGetWidth(t);
      MlirType it = mlirIntegerTypeGet(L->mc, wd);
      w = lw_cast(L, "llvm.bitcast", e, it);
      w = wd < 32 ? lw_cast(L, "arith.extui", w, L->i32) : lw_cast(L, "arith.trunci", w, L->i32);
    } else if (mlirTypeIsAInteger(t)) {
      unsigned wd = mlirIntegerTypeGetWidth(t);
      w = wd < 32 ? lw_cast(L, "arith.extui", e, L->i32) : lw_cast(L, "arith.trunci", e, L->i32);
    } else {
      continue;
    }
    bits = mlirValueIsNull(bits) ? w : lw_bin(L, "arith.ori", bits, w);
  }
  if (mlirValueIsNull(bits)) bits = lw_i32(L, 0);
  char text[400];
  snprintf(text, sizeof text,
           "{ .reg .pred p; .reg .b32 t; redux.sync.min.u32 t, $0, -1; setp.eq.u32 p, t, 2143289345; "
           "@p bra.uni $$tile_rare; bra.uni $$tile_back; $$tile_rare: membar.cta; "
           "$$tile_back: wgmma.wait_group.sync.aligned %d; }",
           n);
  lw_asm(L, text, "r", 1, &bits, (MlirType){0}, true);
}

static void tie_registers(Lw *L, TValue *in, TValue *outv) {
  LV *src = lw_get(L, in);
  int n = src->n;
  if (n > 255) n = 255;
  Buf cons = {0};
  for (int i = 0; i < n; i++) buf_printf(&cons, i ? ",=f" : "=f");
  for (int i = 0; i < n; i++) buf_printf(&cons, ",%d", i);
  MlirType *ft = ar_alloc(&L->c->arena, sizeof(MlirType) * (size_t)n);
  for (int i = 0; i < n; i++) ft[i] = L->f32;
  MlirType st = n == 1 ? L->f32 : mlirLLVMStructTypeLiteralGet(L->mc, n, ft, false);
  MlirValue r = lw_asm(L, "// wgmma registers ready", cons.data, n, src->v, st, true);
  buf_free(&cons);
  LV *out = lw_new(L, src->n);
  for (int i = 0; i < src->n; i++) out->v[i] = i >= n ? src->v[i] : n == 1 ? r : lw_extract(L, r, i, L->f32);
  lw_set(outv, out);
}

static void elected(Lw *L, IfScope *sc) { lw_begin_if(L, sc); }

/* One arrival on mbarrier bar by the group's elected thread. */
static void arrive_elected(Lw *L, TValue *bar) {
  IfScope sc;
  elected(L, &sc);
  MlirValue b = bar_addr(L, bar);
  lw_asm(L, "mbarrier.arrive.shared::cta.b64 _, [$0];", "l", 1, &b, (MlirType){0}, true);
  lw_end_if(L, &sc, L->elect);
}

/* barrier_arrive(bar, cta = r): the mbarrier at bar's offset in CTA r of the cluster, released at cluster scope
 * (what this thread's CTA did before is visible to the threads that wait there). */
static void arrive_remote(Lw *L, TValue *bar, MlirValue rank) {
  IfScope sc;
  elected(L, &sc);
  MlirValue a64 = lw_cast(L, "llvm.ptrtoint", bar_addr(L, bar), L->i64);
  MlirValue ops[2] = {lw_cast(L, "arith.trunci", a64, L->i32), rank};
  MlirValue ra = lw_asm(L, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r", 2, ops, L->i32, true);
  lw_asm(L, "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [$0];", "r", 1, &ra, (MlirType){0}, true);
  lw_end_if(L, &sc, L->elect);
}

/* dsmem_copy (builtins_hw.c): the elected thread's bulk copy into CTA r's shared memory, completing on the
 * mbarrier at bar's offset there (mapa: both shared::cluster addresses). */
static void dsmem_copy(Lw *L, TOp *op) {
  IfScope sc;
  elected(L, &sc);
  MlirValue rank = lw_get(L, op->opnds[3])->v[0];
  MlirValue a32[3];
  TValue *v[3] = {op->opnds[1], op->opnds[0], op->opnds[2]};
  for (int i = 0; i < 3; i++) {
    MlirValue p = i == 2 ? bar_addr(L, v[i]) : addr_of(L, v[i]);
    a32[i] = lw_cast(L, "arith.trunci", lw_cast(L, "llvm.ptrtoint", p, L->i64), L->i32);
  }
  MlirValue ops[4];
  for (int i = 0; i < 3; i += 2) /* the destination and the mbarrier, in CTA r */
    ops[i] = lw_asm(L, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r", 2, (MlirValue[]){a32[i], rank}, L->i32, true);
  ops[1] = a32[1];
  ops[3] = lw_i32(L, (int32_t)op->ival);
  lw_asm(L, "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [$0], [$1], $3, [$2];",
         "r,r,r,r", 4, (MlirValue[]){ops[0], ops[1], ops[2], ops[3]}, (MlirType){0}, true);
  lw_end_if(L, &sc, L->elect);
}

/* bulk_store_add (builtins_hw.c): the elected thread's bulk reduce-add of the view's bytes into global memory
 * at the pointer, in a bulk group of its own (tma_store_wait / tma_store_flush wait for it); bulk_store (ival2):
 * the same copy writing them. */
static void bulk_store_add(Lw *L, TOp *op) {
  IfScope sc;
  elected(L, &sc);
  const char *ty = "f32";
  DType dt = (DType)op->opnds[1]->type->elem.dt;
  if (dt == DT_F16) ty = "noftz.f16";
  else if (dt == DT_BF16) ty = "noftz.bf16";
  char text[160];
  if (op->ival2) /* bulk_store: a copy */
    snprintf(text, sizeof text, "cp.async.bulk.global.shared::cta.bulk_group [$0], [$1], $2;");
  else
    snprintf(text, sizeof text, "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.%s [$0], [$1], $2;", ty);
  MlirValue g = lw_get(L, op->opnds[0])->v[0], src = addr_of(L, op->opnds[1]);
  MlirValue s32 = lw_cast(L, "arith.trunci", lw_cast(L, "llvm.ptrtoint", src, L->i64), L->i32);
  lw_asm(L, text, "l,r,r", 3, (MlirValue[]){g, s32, lw_i32(L, (int32_t)op->ival)}, (MlirType){0}, true);
  lw_asm(L, "cp.async.bulk.commit_group;", "", 0, NULL, (MlirType){0}, true);
  lw_end_if(L, &sc, L->elect);
}

/* bulk_load (builtins_hw.c): the elected thread's bulk copy of global memory into the view, completing on the
 * mbarrier (a CTA's own shared::cta addresses are shared::cluster addresses of it). */
static void bulk_load(Lw *L, TOp *op) {
  IfScope sc;
  elected(L, &sc);
  MlirValue g = lw_get(L, op->opnds[0])->v[0];
  MlirValue a32[2];
  MlirValue p[2] = {addr_of(L, op->opnds[1]), bar_addr(L, op->opnds[2])};
  for (int i = 0; i < 2; i++) a32[i] = lw_cast(L, "arith.trunci", lw_cast(L, "llvm.ptrtoint", p[i], L->i64), L->i32);
  lw_asm(L, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];", "r,l,r,r", 4,
         (MlirValue[]){a32[0], g, lw_i32(L, (int32_t)op->ival), a32[1]}, (MlirType){0}, true);
  lw_end_if(L, &sc, L->elect);
}

static bool lower_tma(Lw *L, TOp *op) {
  bool load = op->opc == OP_TMA_LOAD;
  TValue *desc = op->opnds[0], *view = op->opnds[3];
  MlirValue tmap = addr_of(L, desc);
  MlirValue row = lw_get(L, op->opnds[1])->v[0], col = lw_get(L, op->opnds[2])->v[0];
  MlirValue dst = addr_of(L, view);
  const Type *d = desc->type, *w = view->type;
  int eb = elem_bytes(w), nblk = w->shape[1] / d->shape[1];
  int blk_bytes = ty_block_rows(w) * d->shape[1] * eb; /* the view's column blocks */
  IfScope sc;
  elected(L, &sc);
  /* the cluster forms (builtins_hw.c, tma_cluster_args): .multicast::cluster with the mask, .cta_group::2 on the
     mbarrier at bar's offset in CTA rank r (mapa: a shared::cluster address) */
  bool mcast = load && (op->flags & OPF_MCAST), pair = load && (op->flags & OPF_PAIR);
  MlirValue mask = {0}, bar = {0};
  if (mcast) mask = lw_cast(L, "arith.trunci", lw_get(L, op->opnds[5])->v[0], L->i16);
  if (load) bar = bar_addr(L, op->opnds[4]);
  if (pair) {
    MlirValue ops[2] = {lw_cast(L, "arith.trunci", lw_cast(L, "llvm.ptrtoint", bar, L->i64), L->i32),
                        lw_get(L, op->opnds[op->nopnds - 1])->v[0]};
    MlirValue ra = lw_asm(L, "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r", 2, ops, L->i32, true);
    bar = lw_cast(L, "llvm.inttoptr", lw_cast(L, "arith.extui", ra, L->i64), L->ptr3);
  }
  for (int j = 0; j < nblk; j++) {
    MlirValue cj = j ? lw_bin(L, "arith.addi", col, lw_i32(L, j * d->shape[1])) : col;
    MlirValue pj = j ? byte_gep(L, dst, lw_i32(L, j * blk_bytes)) : dst;
    if (load && (mcast || pair)) {
      MlirValue p7 = lw_cast(L, "llvm.addrspacecast", pj, mlirLLVMPointerTypeGet(L->mc, 7));
      MlirNamedAttribute at[3] = {
          lw_attr(L, "mode", lw_pattr(L, "#nvvm.tma_load_mode<tile>")),
          lw_attr(L, "operandSegmentSizes", lw_pattr(L, mcast ? "array<i32: 1, 1, 2, 1, 0, 1, 0, 0>"
                                                              : "array<i32: 1, 1, 2, 1, 0, 0, 0, 0>")),
          lw_attr(L, "group", lw_pattr(L, "#nvvm.cta_group<cta_2>")),
      };
      lw_op(L, "nvvm.cp.async.bulk.tensor.shared.cluster.global", mcast ? 6 : 5,
            (MlirValue[]){p7, tmap, cj, row, bar, mask}, 0, NULL, pair ? 3 : 2, at);
    } else if (load) { /* OPF_PLANE (pipeline.c): a 3-D descriptor's box in plane opnds[5] */
      bool plane = op->flags & OPF_PLANE;
      MlirNamedAttribute at[3] = {
          lw_attr(L, "isCTAOnly", mlirBoolAttrGet(L->mc, 1)),
          lw_attr(L, "mode", lw_pattr(L, "#nvvm.tma_load_mode<tile>")),
          lw_attr(L, "operandSegmentSizes", lw_pattr(L, plane ? "array<i32: 1, 1, 3, 1, 0, 0, 0, 0>"
                                                              : "array<i32: 1, 1, 2, 1, 0, 0, 0, 0>")),
      };
      MlirValue z = plane ? lw_get(L, op->opnds[5])->v[0] : (MlirValue){0};
      lw_op(L, "nvvm.cp.async.bulk.tensor.shared.cluster.global", plane ? 6 : 5,
            plane ? (MlirValue[]){pj, tmap, cj, row, z, bar} : (MlirValue[]){pj, tmap, cj, row, bar}, 0, NULL, 3, at);
    } else {
      const char *text = op->pred ? "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group "
                                    "[$0, {$1, $2}], [$3];"
                                  : "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], [$3];";
      lw_asm(L, text, "l,r,r,l", 4, (MlirValue[]){tmap, cj, row, pj}, (MlirType){0}, true);
    }
  }
  if (!load) lw_asm(L, "cp.async.bulk.commit_group;", "", 0, NULL, (MlirType){0}, true);
  lw_end_if(L, &sc, L->elect);
  return true;
}

bool lw_hw_op(Lw *L, TOp *op) {
  switch (op->opc) {
  case OP_SMEM_ALLOC:
    set1(L, op->res[0], byte_gep(L, L->smem, lw_i32(L, op->ival)));
    lw_note_smem(L, op->res[0], op->ival);
    return true;
  case OP_BAR_ALLOC: {
    MlirValue base = byte_gep(L, L->smem, lw_i32(L, op->ival));
    set1(L, op->res[0], base);
    lw_note_smem(L, op->res[0], op->ival);
    IfScope sc;
    elected(L, &sc);
    for (int i = 0; i < op->res[0]->type->nbuf; i++) {
      MlirValue b = byte_gep(L, base, lw_i32(L, 8 * i));
      lw_op(L, "nvvm.mbarrier.init", 2, (MlirValue[]){b, lw_i32(L, op->ival2)}, 0, NULL, 0, NULL);
    }
    lw_op(L, "nvvm.fence.mbarrier.init", 0, NULL, 0, NULL, 0, NULL);
    lw_end_if(L, &sc, L->elect);
    lw_barrier(L);
    return true;
  }
  case OP_SLOT: {
    TValue *base = op->opnds[0];
    const TOp *alloc = base->def;
    while (alloc && alloc->opc != OP_SMEM_ALLOC && alloc->opc != OP_BAR_ALLOC) alloc = alloc->opnds[0]->def;
    if (!alloc) {
      dg_ice(L->c, op->loc, "slot of a value that is not an allocation");
      return false;
    }
    MlirValue i = lw_get(L, op->opnds[1])->v[0];
    MlirValue off = lw_bin(L, "arith.muli", i, lw_i32(L, slot_stride(alloc)));
    set1(L, op->res[0], byte_gep(L, addr_of(L, base), off));
    return true;
  }
  case OP_SLICE: {
    TValue *v = op->opnds[0];
    if (v->type->kind == TY_TILE) return lw_shape_op(L, op); /* register-tile window */
    if (op->nopnds == 1) { /* trans(): same bytes */
      set1(L, op->res[0], addr_of(L, v));
      return true;
    }
    MlirValue off = lw_get(L, op->opnds[1])->v[0];
    int rowb = block_row_bytes(v->type);
    if (op->axis == 1 && !v->type->swizzle && v->type->shape[0] == 1) { /* a piece of one unswizzled row */
      set1(L, op->res[0], byte_gep(L, addr_of(L, v), lw_bin(L, "arith.muli", off, lw_i32(L, elem_bytes(v->type)))));
      return true;
    }
    if (op->axis == 1) { /* whole column blocks: each is rows x (block row) bytes */
      int per_block = rowb / elem_bytes(v->type);
      MlirValue blk = lw_bin(L, "arith.divui", off, lw_i32(L, per_block));
      set1(L, op->res[0],
           byte_gep(L, addr_of(L, v), lw_bin(L, "arith.muli", blk, lw_i32(L, ty_block_rows(v->type) * rowb))));
      return true;
    }
    set1(L, op->res[0], byte_gep(L, addr_of(L, v), lw_bin(L, "arith.muli", off, lw_i32(L, rowb))));
    return true;
  }
  case OP_SMEM_LOAD: return smem_move(L, op, false);
  case OP_SMEM_STORE: return smem_move(L, op, true);
  case OP_SMEM_READ:
  case OP_SMEM_WRITE: {
    TValue *view = op->opnds[0];
    MlirValue r = lw_get(L, op->opnds[1])->v[0], c = lw_get(L, op->opnds[2])->v[0];
    MlirValue p = byte_gep(L, addr_of(L, view), elem_offset(L, view->type, r, c));
    int eb = elem_bytes(view->type);
    if (op->opc == OP_SMEM_WRITE) {
      IfScope sc;
      elected(L, &sc);
      lw_store(L, lw_get(L, op->opnds[3])->v[0], p, eb);
      lw_end_if(L, &sc, L->elect);
      return true;
    }
    MlirValue x = lw_load(L, p, lw_elem_type(L, view->type->elem), eb);
    /* the same value in every thread; through redux.sync (as scalar global
     * loads) so that ptxas keeps what is derived from it uniform */
    if (mlirTypeEqual(mlirValueGetType(x), L->i32))
      x = lw_warp_uniform(L, x);
    set1(L, op->res[0], x);
    return true;
  }
  case OP_BAR_EXPECT: {
    IfScope sc;
    elected(L, &sc);
    MlirValue ops[2] = {bar_addr(L, op->opnds[0]), lw_get(L, op->opnds[1])->v[0]};
    lw_op(L, "nvvm.mbarrier.arrive.expect_tx", 2, ops, 0, NULL, 0, NULL);
    lw_end_if(L, &sc, L->elect);
    return true;
  }
  case OP_BAR_ARRIVE:
    if (op->nopnds == 2) arrive_remote(L, op->opnds[0], lw_get(L, op->opnds[1])->v[0]);
    else if (op->ival) { /* each = true: every thread's own arrival */
      MlirValue b = bar_addr(L, op->opnds[0]);
      lw_asm(L, "mbarrier.arrive.shared::cta.b64 _, [$0];", "l", 1, &b, (MlirType){0}, true);
    } else arrive_elected(L, op->opnds[0]);
    return true;
  case OP_BAR_WAIT:
    try_wait(L, bar_addr(L, op->opnds[0]), lw_get(L, op->opnds[1])->v[0]);
    return true;
  case OP_NAMED_BAR:
    if (op->ival == 0) { /* task_barrier(): the task replica's own */
      lw_barrier(L);
    } else {
      MlirValue id = op->nopnds ? lw_get(L, op->opnds[0])->v[0] : lw_i32(L, op->ival);
      MlirValue args[2] = {id, lw_i32(L, op->ival2)};
      /* not bar.sync (= barrier.sync.aligned: every thread at the same
       * instruction): the warpgroups that meet at a named barrier may come
       * from different code, e.g. a masked and an unmasked copy of a loop
       * body (synccheck: "divergent threads in block") */
      lw_asm(L, op->pred ? "barrier.arrive $0, $1;" : "barrier.sync $0, $1;", "r,r", 2, args, (MlirType){0}, true);
    }
    return true;
  case OP_FENCE_ASYNC: {
    MlirNamedAttribute at[2] = {
        lw_attr(L, "kind", lw_pattr(L, "#nvvm.proxy_kind<async.shared>")),
        lw_attr(L, "space", lw_pattr(L, "#nvvm.shared_space<cta>")),
    };
    lw_op(L, "nvvm.fence.proxy", 0, NULL, 0, NULL, 2, at);
    return true;
  }
  case OP_TMA_LOAD:
  case OP_TMA_STORE: return lower_tma(L, op);
  case OP_DSMEM_COPY: dsmem_copy(L, op); return true;
  case OP_BULK_STORE_ADD: bulk_store_add(L, op); return true;
  case OP_BULK_LOAD: bulk_load(L, op); return true;
  case OP_TMA_STORE_WAIT: {
    IfScope sc;
    elected(L, &sc);
    char text[64];
    snprintf(text, sizeof text, "cp.async.bulk.wait_group%s %lld;", op->ival2 ? "" : ".read", (long long)op->ival);
    lw_asm(L, text, "", 0, NULL, (MlirType){0}, true);
    lw_end_if(L, &sc, L->elect);
    return true;
  }
  case OP_MMA_ASYNC: return lower_mma_async(L, op);
  case OP_ASYNC_COPY: return lower_async_copy(L, op);
  case OP_ASYNC_COMMIT: lw_asm(L, "cp.async.commit_group;", "", 0, NULL, (MlirType){0}, true); return true;
  case OP_ASYNC_WAIT: {
    char text[48];
    snprintf(text, sizeof text, "cp.async.wait_group %lld;", (long long)op->ival);
    lw_asm(L, text, "", 0, NULL, (MlirType){0}, true);
    return true;
  }
  case OP_MMA_COMMIT: lw_op(L, "nvvm.wgmma.commit.group.sync.aligned", 0, NULL, 0, NULL, 0, NULL); return true;
  case OP_MMA_WAIT: {
    if (op->ival2) {
      wait_after(L, op->opnds[op->ival2 - 1], (int)op->ival);
    } else {
      MlirNamedAttribute at = lw_attr(L, "group", mlirIntegerAttrGet(L->i64, op->ival));
      lw_op(L, "nvvm.wgmma.wait.group.sync.aligned", 0, NULL, 0, NULL, 1, &at);
    }
    if (op->pred) arrive_elected(L, op->opnds[op->pred - 1]); /* release = bar, before the registers are read */
    for (int i = 0; i < op->nres; i++) tie_registers(L, op->opnds[i], op->res[i]);
    return true;
  }
  case OP_SEM_WAIT: {
    MlirValue ops[2] = {lw_get(L, op->opnds[0])->v[0], lw_get(L, op->opnds[1])->v[0]};
    lw_asm(L,
           "{ .reg .pred p; .reg .b32 v; $$tile_sem: ld.acquire.gpu.global.b32 v, [$0]; setp.lo.u32 p, v, $1; "
           "@p bra $$tile_sem; fence.proxy.async.global; }",
           "l,r", 2, ops, (MlirType){0}, true);
    return true;
  }
  case OP_SEM_SIGNAL: {
    MlirValue ops[2] = {lw_get(L, op->opnds[0])->v[0], lw_get(L, op->opnds[1])->v[0]};
    IfScope sc;
    elected(L, &sc);
    lw_asm(L, "fence.proxy.async.global; st.release.gpu.global.b32 [$0], $1;", "l,r", 2, ops, (MlirType){0}, true);
    lw_end_if(L, &sc, L->elect);
    return true;
  }
  case OP_CLUSTER_RANK:
    set1(L, op->res[0], lw_op1(L, "nvvm.read.ptx.sreg.cluster.ctarank", 0, NULL, L->i32, 0, NULL));
    return true;
  case OP_CLUSTER_SYNC:
    lw_cluster_sync(L);
    return true;
  case OP_REPLICA_ID:
    set1(L, op->res[0], mlirValueIsNull(L->replica) ? lw_i32(L, 0) : L->replica);
    return true;
  default: dg_ice(L->c, op->loc, "no lowering for %s", ir_opname(op->opc)); return false;
  }
}

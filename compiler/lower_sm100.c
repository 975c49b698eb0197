/* lower_sm100.c - lowering of Blackwell's own primitives (sm_100a): tensor
 * memory (one tcgen05.alloc per kernel, its address through shared memory,
 * relinquish and dealloc), tcgen05.mma chains with shared-memory and
 * instruction descriptors (desc.c), tcgen05.commit, tcgen05.ld/st in the
 * 32x32b shape with their waits, and the tcgen05 fences the compiler places
 * around thread synchronization. Shared memory, mbarriers and TMA are
 * lower_hw.c's, as on Hopper. docs/blackwell.md lists the PTX this emits.
 *
 * A TMEM address is an i32: lane in bits 16-31, column in bits 0-15. */
#include "lower.h"
#include <stdio.h>
#include <string.h>

static MlirType ptr6(Lw *L) { return mlirLLVMPointerTypeGet(L->mc, 6); }
static MlirValue tptr(Lw *L, MlirValue a) { return lw_cast(L, "llvm.inttoptr", a, ptr6(L)); }
static MlirValue addr_of(Lw *L, TValue *v) { return lw_get(L, v)->v[0]; }
static MlirValue add(Lw *L, MlirValue a, int64_t k) {
  return k ? lw_bin(L, "arith.addi", a, lw_int(L, mlirValueGetType(a), k)) : a;
}
static void set1(Lw *L, TValue *v, MlirValue x) {
  LV *lv = lw_new(L, 1);
  lv->v[0] = x;
  lw_set(v, lv);
}


static void fence(Lw *L, bool after) {
  MlirNamedAttribute at = lw_attr(L, "kind", lw_pattr(L, after ? "#nvvm.tcgen05_fence<after>" : "#nvvm.tcgen05_fence<before>"));
  lw_op(L, "nvvm.tcgen05.fence", 0, NULL, 0, NULL, 1, &at);
}

static bool is_tc(const TOp *op) {
  return op->opc == OP_TMEM_LOAD || op->opc == OP_TMEM_STORE || op->opc == OP_TC_MMA || op->opc == OP_TC_COMMIT;
}

static bool uses(const TBlock *b, bool into_tasks) {
  for (const TOp *op = b->first; op; op = op->next) {
    if (is_tc(op)) return true;
    if (op->opc == OP_TASKS && !into_tasks) continue;
    for (int r = 0; r < op->nregions; r++)
      if (uses(op->regions[r], into_tasks)) return true;
  }
  return false;
}

bool lw_tc_uses(const TBlock *b, bool into_tasks) { return uses(b, into_tasks); }

/* Thread synchronization in code that issues tcgen05 operations: before
 * it, tcgen05.fence::before_thread_sync orders this thread's tcgen05 ops
 * (loads and stores of tensor memory, MMAs) before the sync; after a sync
 * that waits, tcgen05.fence::after_thread_sync orders the ops that follow
 * after it (PTX ISA, "tcgen05 memory consistency model"). mbarrier arrivals
 * (barrier_arrive, barrier_expect) are syncs that do not wait; barrier_wait
 * one that does; task_barrier() and named_barrier() both. */
void lw_tc_sync(Lw *L, TOp *op, bool after) {
  if (!L->tcgen05) return;
  switch (op->opc) {
  case OP_BAR_WAIT:
    if (after) fence(L, true);
    return;
  case OP_BAR_ARRIVE:
  case OP_BAR_EXPECT:
    if (!after) fence(L, false);
    return;
  case OP_NAMED_BAR:
    if (!after) fence(L, false);
    else if (!op->pred) fence(L, true); /* barrier.sync waits; barrier.arrive does not */
    return;
  default: return;
  }
}

/* The kernel's tensor memory: warp 0 allocates every column the tmem()
 * allocations take (rounded up to a power of two) and gives up the right
 * to allocate more; tcgen05.alloc writes the address to a word of shared
 * memory, which every thread reads after a CTA barrier. At the top level
 * of the kernel, before the tasks: every warp runs it. */
/* A CTA pair's kernel (tmem(..., pair = true)): the allocation instructions take .cta_group::2. */
static int group_attr(Lw *L, MlirNamedAttribute *at) {
  if (!L->kf->tmem_pair) return 0;
  *at = lw_attr(L, "group", lw_pattr(L, "#nvvm.cta_group<cta_2>"));
  return 1;
}

static void tmem_alloc(Lw *L) {
  TFunc *f = L->kf;
  MlirValue slot = lw_gep(L, L->smem, lw_i32(L, f->tmem_slot), L->i8, L->ptr3);
  MlirValue warp0 = lw_cmpi(L, CMPI_EQ, L->warp, lw_i32(L, 0)); /* before the if: its condition */
  MlirNamedAttribute g;
  int ng = group_attr(L, &g);
  IfScope sc;
  lw_begin_if(L, &sc);
  lw_op(L, "nvvm.tcgen05.alloc", 2, (MlirValue[]){slot, lw_i32(L, ir_tmem_alloc_cols(f))}, 0, NULL, ng, &g);
  lw_op(L, "nvvm.tcgen05.relinquish_alloc_permit", 0, NULL, 0, NULL, ng, &g);
  lw_end_if(L, &sc, warp0);
  fence(L, false);
  lw_barrier(L);
  if (f->tmem_pair) lw_cluster_sync(L); /* the pair's columns and mbarriers, ready for the other CTA */
  fence(L, true);
  L->tmem_base = lw_load(L, slot, L->i32, 4);
  L->tmem_ready = true;
}

/* Before the kernel returns: every thread's tcgen05 work is ordered before
 * a CTA barrier, after which warp 0 frees the columns. The warp index's
 * redux.sync and the address are computed again here (from the thread
 * index, which LLVM keeps from the entry, and the word tcgen05.alloc
 * wrote), not kept from the entry: a value live through every task is live
 * across each task's setmaxnreg, and ptxas spilled them in the 16-warp JFA
 * forward (8 bytes in its causal D = 128 kernel). */
void lw_tc_kernel_end(Lw *L) {
  if (!L->tmem_ready) return;
  fence(L, false);
  lw_barrier(L);
  if (L->kf->tmem_pair) lw_cluster_sync(L); /* the PTX ISA's example: the pair syncs, then each CTA frees */
  MlirNamedAttribute g;
  int ng = group_attr(L, &g);
  MlirValue tid = lw_op1(L, "nvvm.read.ptx.sreg.tid.x", 0, NULL, L->i32, 0, NULL);
  MlirValue warp = lw_warp_uniform(L, lw_bin(L, "arith.shrui", tid, lw_i32(L, 5)));
  MlirValue slot = lw_gep(L, L->smem, lw_i32(L, L->kf->tmem_slot), L->i8, L->ptr3);
  MlirValue base = lw_load(L, slot, L->i32, 4);
  MlirValue warp0 = lw_cmpi(L, CMPI_EQ, warp, lw_i32(L, 0));
  IfScope sc;
  lw_begin_if(L, &sc);
  fence(L, true);
  MlirValue ops[2] = {tptr(L, base), lw_i32(L, ir_tmem_alloc_cols(L->kf))};
  lw_op(L, "nvvm.tcgen05.dealloc", 2, ops, 0, NULL, ng, &g);
  lw_end_if(L, &sc, warp0);
}

/* The layout tcgen05.ld/st 32x32b moves, as passes.c assigns it: register
 * i = column i, lane bit i = row 2^i, warp bit i = row 32 * 2^i; on more
 * than 4 warps (128 rows), warp bits 2.. split the columns: warpgroup g
 * holds the g-th share (*split shares). */
static bool check_32x32b(Lw *L, TOp *op, const LinLayout *l, int *split) {
  int rw = l->nwarp < 2 || l->shape[0] != 128 ? l->nwarp : 2; /* the warp bits that walk rows */
  *split = 1 << (l->nwarp - rw);
  int cols = l->rank == 2 ? l->shape[1] / *split : 0;
  bool ok = l->rank == 2 && l->nlane == 5 && (1 << l->nreg) == cols && (32 << rw) == l->shape[0];
  for (int i = 0; ok && i < l->nreg; i++) ok = l->reg[i][0] == 0 && l->reg[i][1] == 1 << i;
  for (int i = 0; ok && i < l->nlane; i++) ok = l->lane[i][0] == 1 << i && l->lane[i][1] == 0;
  for (int i = 0; ok && i < rw; i++) ok = l->warp[i][0] == 32 << i && l->warp[i][1] == 0;
  for (int i = rw; ok && i < l->nwarp; i++) ok = l->warp[i][0] == 0 && l->warp[i][1] == cols << (i - rw);
  if (!ok) dg_ice(L->c, op->loc, "%s: the tile is not in the 32x32b layout", ir_opname(op->opc));
  return ok;
}

/* This warp's part of a view: lanes 32 (w % 4) .. + 31 (w: the warp's index
 * in the group; the lane rule was checked by sema), and with a column
 * split, warpgroup w / 4's share of the columns (words 32-bit columns each). */
static MlirValue warp_addr(Lw *L, TValue *view, int split, int words) {
  if (split == 1) {
    MlirValue lane = lw_bin(L, "arith.shli", L->warp, lw_i32(L, 5 + 16));
    return lw_bin(L, "arith.addi", addr_of(L, view), lane);
  }
  MlirValue lane = lw_bin(L, "arith.shli", lw_bin(L, "arith.andi", L->warp, lw_i32(L, 3)), lw_i32(L, 5 + 16));
  MlirValue col = lw_bin(L, "arith.muli", lw_bin(L, "arith.shrui", L->warp, lw_i32(L, 2)), lw_i32(L, words));
  return lw_bin(L, "arith.addi", addr_of(L, view), lw_bin(L, "arith.addi", lane, col));
}

/* An empty asm that "rewrites" the words: uses of what tcgen05.ld returned
 * stay after tcgen05.wait::ld (LLVM sees no dependence on the wait). */
static void tie(Lw *L, MlirValue *w, int n) {
  for (int b0 = 0; b0 < n; b0 += 120) {
    int m = n - b0 < 120 ? n - b0 : 120;
    Buf cons = {0};
    for (int i = 0; i < m; i++) buf_puts(&cons, i ? ",=r" : "=r");
    for (int i = 0; i < m; i++) buf_printf(&cons, ",%d", i);
    MlirType *ft = ar_alloc(&L->c->arena, sizeof(MlirType) * (size_t)m);
    for (int i = 0; i < m; i++) ft[i] = L->i32;
    MlirType st = m == 1 ? L->i32 : mlirLLVMStructTypeLiteralGet(L->mc, m, ft, false);
    MlirValue r = lw_asm(L, "// tmem registers ready", cons.data, m, w + b0, st, true);
    buf_free(&cons);
    for (int i = 0; i < m; i++) w[b0 + i] = m == 1 ? r : lw_extract(L, r, i, L->i32);
  }
}

#define LDST_MAX 128 /* 32-bit registers of one tcgen05.ld/st .32x32b (.x128) */

/* The registers one tcgen05.ld/st moves: LDST_MAX, or fewer when the
 * kernel's register cap leaves no room for them beside the address and
 * the values live across the instruction. ptxas checks each instruction
 * against the cap at entry, even in a task whose setmaxnreg raises it
 * (C7602: a 16-warp kernel's cap is 128, and .x128 needs about 146), while
 * it allocates the task's code within the raised budget: so a 128-column
 * load there is two .x64. */
static int ldst_max(Lw *L) {
  int cap = L->kf->maxnreg ? L->kf->maxnreg : ir_even_maxnreg(L->kf->warps);
  int n = LDST_MAX;
  while (n > 1 && n > cap - 32) n /= 2;
  return n;
}

static MlirNamedAttribute shape_32x32b(Lw *L) {
  return lw_attr(L, "shape", lw_pattr(L, "#nvvm.tcgen05_ldst_shape<shape_32x32b>"));
}

static bool tmem_load(Lw *L, TOp *op) {
  TValue *view = op->opnds[0], *r = op->res[0];
  LinLayout lin;
  int split;
  if (!lw_linear(L, r, &lin) || !check_32x32b(L, op, &lin, &split)) return false;
  DType dt = (DType)r->type->elem.dt;
  int cols = r->type->shape[1] / split, words = ty_tmem_cols(dt, cols);
  MlirValue base = warp_addr(L, view, split, words);
  MlirValue *w = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)words);
  MlirNamedAttribute sh = shape_32x32b(L);
  int most = ldst_max(L);
  for (int j = 0; j < words; j += most) {
    int n = words - j < most ? words - j : most;
    MlirType t = n == 1 ? L->i32 : lw_vec_type(L->i32, n);
    MlirValue v = lw_op1(L, "nvvm.tcgen05.ld", 1, (MlirValue[]){tptr(L, add(L, base, j))}, t, 1, &sh);
    for (int i = 0; i < n; i++) w[j + i] = n == 1 ? v : lw_vec_extract(L, v, i, L->i32);
  }
  MlirNamedAttribute k = lw_attr(L, "kind", lw_pattr(L, "#nvvm.tcgen05_wait<load>"));
  lw_op(L, "nvvm.tcgen05.wait", 0, NULL, 0, NULL, 1, &k);
  tie(L, w, words);
  LV *out = lw_new(L, cols);
  MlirType et = lw_elem_type(L, r->type->elem);
  for (int i = 0; i < words; i++) {
    if (ty_dtype_bits(dt) == 16) { /* two elements a word, the even column in the low half */
      MlirValue pair = lw_cast(L, "llvm.bitcast", w[i], lw_vec_type(et, 2));
      out->v[2 * i] = lw_vec_extract(L, pair, 0, et);
      out->v[2 * i + 1] = lw_vec_extract(L, pair, 1, et);
    } else {
      out->v[i] = dt == DT_F32 ? lw_cast(L, "llvm.bitcast", w[i], L->f32) : w[i];
    }
  }
  lw_set(r, out);
  return true;
}

static bool tmem_store(Lw *L, TOp *op) {
  TValue *view = op->opnds[0], *x = op->opnds[1];
  LinLayout lin;
  int split;
  if (!lw_linear(L, x, &lin) || !check_32x32b(L, op, &lin, &split)) return false;
  DType dt = (DType)x->type->elem.dt;
  int cols = x->type->shape[1] / split, words = ty_tmem_cols(dt, cols);
  LV *in = lw_get(L, x);
  MlirType et = lw_elem_type(L, x->type->elem);
  MlirValue *w = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)words);
  for (int i = 0; i < words; i++) {
    if (ty_dtype_bits(dt) == 16)
      w[i] = lw_cast(L, "llvm.bitcast", lw_vec_build(L, lw_vec_type(et, 2), 2, &in->v[2 * i]), L->i32);
    else
      w[i] = dt == DT_F32 ? lw_cast(L, "llvm.bitcast", in->v[i], L->i32) : in->v[i];
  }
  MlirValue base = warp_addr(L, view, split, words);
  MlirNamedAttribute sh = shape_32x32b(L);
  int most = ldst_max(L);
  for (int j = 0; j < words; j += most) {
    int n = words - j < most ? words - j : most;
    MlirValue v = n == 1 ? w[j] : lw_vec_build(L, lw_vec_type(L->i32, n), n, w + j);
    lw_op(L, "nvvm.tcgen05.st", 2, (MlirValue[]){tptr(L, add(L, base, j)), v}, 0, NULL, 1, &sh);
  }
  /* the stores are complete before anything this thread does next (a
   * thread sync that hands the columns to the MMA) */
  MlirNamedAttribute k = lw_attr(L, "kind", lw_pattr(L, "#nvvm.tcgen05_wait<store>"));
  lw_op(L, "nvvm.tcgen05.wait", 0, NULL, 0, NULL, 1, &k);
  return true;
}

/* A shared-memory operand's descriptor: the run-time start address ORed
 * into the constant fields (desc.c). Hopper's layouts (lower_hw.c): a
 * K-major operand of 128-byte swizzled rows (LBO unused: 16; SBO 1024, the
 * next 8 rows); an MN-major one with LBO the distance between its 64-element
 * column blocks (block rows x 128) and SBO 1024 (the next 8 rows of K). */
static MlirValue smem_desc(Lw *L, TValue *v, bool mn) {
  int64_t lbo = mn ? (int64_t)ty_block_rows(v->type) * 128 : 16;
  MlirValue a = lw_cast(L, "llvm.ptrtoint", addr_of(L, v), L->i64);
  MlirValue start = lw_bin(L, "arith.shrui", lw_bin(L, "arith.andi", a, lw_int(L, L->i64, 0x3FFFF)), lw_int(L, L->i64, 4));
  return lw_bin(L, "arith.ori", start, lw_int(L, L->i64, (int64_t)dsc_smem_hi(lbo, 1024, 128, true)));
}

/* A descriptor made anew where the MMA is issued: without this, LLVM hoists
 * every k-step's descriptor (loop-invariant: shared-memory addresses and
 * constants) out of the MMA warp's loops, and a warp issuing several chains
 * keeps dozens of 64-bit values live (the CTA pair's JFA backward needed 144
 * registers in its MMA warp). One mov a chain; its k-steps add constants. */
static MlirValue opaque(Lw *L, MlirValue desc) {
  return lw_asm(L, "mov.b64 $0, $1;", "=l,l", 1, &desc, L->i64, true);
}

/* k-step k's descriptor from an opaque base: an add of its own (LLVM would
 * fold a plain one into the operand as `%rd+imm`, a form ptxas takes but the
 * PTX ISA's tcgen05.mma does not spell out). */
static MlirValue desc_add(Lw *L, MlirValue base, int64_t k) {
  if (!k) return base;
  char text[64];
  snprintf(text, sizeof text, "add.s64 $0, $1, %lld;", (long long)k);
  return lw_asm(L, text, "=l,l", 1, &base, L->i64, true);
}

/* The descriptor offset (16-byte units) of k-step k of a shared-memory operand. */
static int64_t kstep(const TValue *v, bool mn, int k) {
  if (mn) return (int64_t)k * ((16 * 128) >> 4); /* 16 rows of K, 128 bytes each */
  return dsc_kmajor_step(ty_dtype_bytes((DType)v->type->elem.dt), ty_block_rows(v->type), k);
}

/* mma_async on sm_100a: the chain of K/16 tcgen05.mma, issued by the
 * group's elected thread (tcgen05.mma is a single thread's instruction),
 * then tcgen05.commit to the mbarrier when asked. */
/* The commit of a CTA pair's MMAs arrives on the mbarrier at bar's offset in both CTAs of the pair
 * (.multicast::cluster, mask 0b11 << the even rank); one CTA's, on its own. */
static void commit(Lw *L, TOp *op, TValue *bar) {
  if (!(op->flags & OPF_PAIR)) {
    lw_op(L, "nvvm.tcgen05.commit", 1, (MlirValue[]){addr_of(L, bar)}, 0, NULL, 0, NULL);
    return;
  }
  MlirValue even = lw_bin(L, "arith.andi", L->pair_rank, lw_i32(L, ~1));
  MlirValue mask = lw_cast(L, "arith.trunci", lw_bin(L, "arith.shli", lw_i32(L, 3), even), mlirIntegerTypeGet(L->mc, 16));
  MlirNamedAttribute g;
  group_attr(L, &g);
  lw_op(L, "nvvm.tcgen05.commit", 2, (MlirValue[]){addr_of(L, bar), mask}, 0, NULL, 1, &g);
}

/* A pair's MMAs and commits: the elected thread of the even CTA of the pair issues them. */
static MlirValue issuer(Lw *L, TOp *op) {
  if (!(op->flags & OPF_PAIR)) return L->elect;
  L->pair_rank = lw_op1(L, "nvvm.read.ptx.sreg.cluster.ctarank", 0, NULL, L->i32, 0, NULL);
  MlirValue odd = lw_bin(L, "arith.andi", L->pair_rank, lw_i32(L, 1));
  return lw_bin(L, "arith.andi", L->elect, lw_cmpi(L, CMPI_EQ, odd, lw_i32(L, 0)));
}

static bool tc_mma(Lw *L, TOp *op) {
  TValue *a = op->opnds[0], *b = op->opnds[1], *d = op->opnds[2];
  bool a_tmem = a->type->kind == TY_TMEM, pair = op->flags & OPF_PAIR;
  bool a_mn = !a_tmem && a->type->trans, b_mn = !b->type->trans;
  int M = a->type->shape[0], K = a->type->shape[1], N = b->type->shape[1];
  if (pair) M *= 2, N *= 2; /* the pair's shape: each CTA holds M/2 rows of A (128 or 64) and N/2 columns of B */
  bool bf16 = a->type->elem.dt == DT_BF16;
  MlirValue flag = op->ival > 0 ? lw_get(L, op->opnds[3])->v[0] : (MlirValue){0};
  MlirValue who = issuer(L, op);
  IfScope sc;
  lw_begin_if(L, &sc);
  MlirValue dp = tptr(L, addr_of(L, d));
  MlirValue da = a_tmem ? addr_of(L, a) : opaque(L, smem_desc(L, a, a_mn)), db = opaque(L, smem_desc(L, b, b_mn));
  MlirValue idesc = lw_i32(L, (int32_t)dsc_idesc_f16(M, N, bf16, a_mn, b_mn));
  MlirNamedAttribute at[3] = {
      lw_attr(L, "kind", lw_pattr(L, "#nvvm.tcgen05_mma_kind<f16>")),
      lw_attr(L, "ctaGroup", lw_pattr(L, pair ? "#nvvm.cta_group<cta_2>" : "#nvvm.cta_group<cta_1>")),
      lw_attr(L, "operandSegmentSizes", lw_pattr(L, "array<i32: 1, 1, 1, 1, 1, 0, 0>")),
  };
  for (int k = 0; k < K / 16; k++) {
    /* A in tensor memory: 16 more 16-bit elements of K are 8 more columns */
    MlirValue ak = a_tmem ? tptr(L, add(L, da, 8 * k)) : desc_add(L, da, kstep(a, a_mn, k));
    MlirValue bk = desc_add(L, db, kstep(b, b_mn, k));
    MlirValue en = k > 0 || op->ival == 0 ? lw_int(L, L->i1, 1) : op->ival < 0 ? lw_int(L, L->i1, 0) : flag;
    lw_op(L, "nvvm.tcgen05.mma", 5, (MlirValue[]){dp, ak, bk, idesc, en}, 0, NULL, 3, at);
  }
  if (op->ival2) commit(L, op, op->opnds[op->ival2 - 1]);
  lw_end_if(L, &sc, who);
  return true;
}

bool lw_tc_owns(const TOp *op) {
  switch (op->opc) {
  case OP_TMEM_ALLOC: case OP_TMEM_LOAD: case OP_TMEM_STORE: case OP_TC_MMA: case OP_TC_COMMIT: return true;
  case OP_SLOT: case OP_SLICE: return op->opnds[0]->type->kind == TY_TMEM;
  default: return false;
  }
}

bool lw_tc_op(Lw *L, TOp *op) {
  switch (op->opc) {
  case OP_TMEM_ALLOC:
    if (!L->tmem_ready) tmem_alloc(L);
    set1(L, op->res[0], add(L, L->tmem_base, op->ival));
    return true;
  case OP_SLOT: { /* slot i of a ring: ival2 columns apart */
    const TOp *alloc = op->opnds[0]->def;
    if (!alloc || alloc->opc != OP_TMEM_ALLOC) {
      dg_ice(L->c, op->loc, "slot of a tensor-memory value that is not an allocation");
      return false;
    }
    MlirValue i = lw_get(L, op->opnds[1])->v[0];
    set1(L, op->res[0],
         lw_bin(L, "arith.addi", addr_of(L, op->opnds[0]), lw_bin(L, "arith.muli", i, lw_i32(L, alloc->ival2))));
    return true;
  }
  case OP_SLICE: {
    TValue *v = op->opnds[0];
    MlirValue off = lw_get(L, op->opnds[1])->v[0];
    if (op->axis == 0) off = lw_bin(L, "arith.shli", off, lw_i32(L, 16)); /* lanes */
    else if (ty_dtype_bits((DType)v->type->elem.dt) == 16) off = lw_bin(L, "arith.shrui", off, lw_i32(L, 1));
    set1(L, op->res[0], lw_bin(L, "arith.addi", addr_of(L, v), off));
    return true;
  }
  case OP_TMEM_LOAD: return tmem_load(L, op);
  case OP_TMEM_STORE: return tmem_store(L, op);
  case OP_TC_MMA: return tc_mma(L, op);
  case OP_TC_COMMIT: {
    MlirValue who = issuer(L, op);
    IfScope sc;
    lw_begin_if(L, &sc);
    commit(L, op, op->opnds[0]);
    lw_end_if(L, &sc, who);
    return true;
  }
  default: dg_ice(L->c, op->loc, "no Blackwell lowering for %s", ir_opname(op->opc)); return false;
  }
}

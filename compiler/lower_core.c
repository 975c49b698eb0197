/* lower_core.c - the builder under every lowering file (prefix lw_): MLIR
 * operations, constants, casts, inline asm and intrinsics, LLVM loads,
 * stores and geps, the registers of a Tile value (LV), barriers, globals.
 * lower.c (the driver) and the lowerings of each family of ops
 * (lower_ops.c, lower_mem.c, lower_math.c, lower_hw.c, lower_sm100.c,
 * lower_debug.c) build with these and call nothing above them. */
#include "lower.h"
#include <stdio.h>
#include <string.h>

static MlirStringRef sref(const char *s) { return mlirStringRefCreateFromCString(s); }

MlirNamedAttribute lw_attr(Lw *L, const char *name, MlirAttribute a) {
  return mlirNamedAttributeGet(mlirIdentifierGet(L->mc, sref(name)), a);
}

MlirAttribute lw_pattr(Lw *L, const char *text) {
  MlirAttribute a = mlirAttributeParseGet(L->mc, sref(text));
  if (mlirAttributeIsNull(a)) dg_ice(L->c, (Loc){0}, "bad MLIR attribute text '%s'", text);
  return a;
}

void lw_insert(Lw *L, MlirOperation op) {
  if (L->in_prologue) mlirBlockInsertOwnedOperationBefore(L->entry, L->prologue_end, op);
  else mlirBlockAppendOwnedOperation(L->blk, op);
}

MlirOperation lw_op(Lw *L, const char *name, int nopnd, const MlirValue *opnds, int nres, const MlirType *res,
                    int nattr, const MlirNamedAttribute *attrs) {
  MlirOperationState st = mlirOperationStateGet(sref(name), L->loc);
  if (nopnd) mlirOperationStateAddOperands(&st, nopnd, opnds);
  if (nres) mlirOperationStateAddResults(&st, nres, res);
  if (nattr) mlirOperationStateAddAttributes(&st, nattr, attrs);
  MlirOperation op = mlirOperationCreate(&st);
  lw_insert(L, op);
  return op;
}

MlirValue lw_op1(Lw *L, const char *name, int nopnd, const MlirValue *opnds, MlirType res, int nattr,
                 const MlirNamedAttribute *attrs) {
  return mlirOperationGetResult(lw_op(L, name, nopnd, opnds, 1, &res, nattr, attrs), 0);
}

MlirValue lw_int(Lw *L, MlirType t, int64_t v) {
  MlirNamedAttribute a = lw_attr(L, "value", mlirIntegerAttrGet(t, v));
  return lw_op1(L, "arith.constant", 0, NULL, t, 1, &a);
}

MlirValue lw_i32(Lw *L, int64_t v) { return lw_int(L, L->i32, v); }

MlirValue lw_warp_uniform(Lw *L, MlirValue x) {
  return lw_asm(L, "redux.sync.min.u32 $0, $1, -1;", "=r,r", 1, &x, L->i32, true);
}

MlirValue lw_float(Lw *L, MlirType t, double v) {
  MlirNamedAttribute a = lw_attr(L, "value", mlirFloatAttrDoubleGet(L->mc, t, v));
  return lw_op1(L, "arith.constant", 0, NULL, t, 1, &a);
}

/* Float adds, subtracts and multiplies may be contracted into fused
 * multiply-adds (as nvcc's default --fmad=true and Triton do): LLVM's NVPTX
 * backend otherwise emits mul.rn/add.rn, which ptxas must not fuse. */
MlirValue lw_bin(Lw *L, const char *name, MlirValue a, MlirValue b) {
  if (!strcmp(name, "arith.addf") || !strcmp(name, "arith.subf") || !strcmp(name, "arith.mulf")) {
    MlirNamedAttribute fm = lw_attr(L, "fastmath", lw_pattr(L, "#arith.fastmath<contract>"));
    return lw_op1(L, name, 2, (MlirValue[]){a, b}, mlirValueGetType(a), 1, &fm);
  }
  return lw_op1(L, name, 2, (MlirValue[]){a, b}, mlirValueGetType(a), 0, NULL);
}

MlirValue lw_cmpi(Lw *L, int pred, MlirValue a, MlirValue b) {
  MlirNamedAttribute at = lw_attr(L, "predicate", mlirIntegerAttrGet(L->i64, pred));
  return lw_op1(L, "arith.cmpi", 2, (MlirValue[]){a, b}, L->i1, 1, &at);
}

MlirValue lw_select(Lw *L, MlirValue c, MlirValue a, MlirValue b) {
  return lw_op1(L, "arith.select", 3, (MlirValue[]){c, a, b}, mlirValueGetType(a), 0, NULL);
}

MlirValue lw_cast(Lw *L, const char *name, MlirValue v, MlirType to) { return lw_op1(L, name, 1, &v, to, 0, NULL); }

MlirValue lw_intrin(Lw *L, const char *intrin, int n, const MlirValue *args, MlirType res) {
  char seg[64];
  snprintf(seg, sizeof seg, "array<i32: %d, 0>", n);
  MlirNamedAttribute at[3] = {
      lw_attr(L, "intrin", mlirStringAttrGet(L->mc, sref(intrin))),
      lw_attr(L, "operandSegmentSizes", lw_pattr(L, seg)),
      lw_attr(L, "op_bundle_sizes", lw_pattr(L, "array<i32>")),
  };
  MlirOperation op = lw_op(L, "llvm.call_intrinsic", n, args, mlirTypeIsNull(res) ? 0 : 1, &res, 3, at);
  return mlirTypeIsNull(res) ? (MlirValue){0} : mlirOperationGetResult(op, 0);
}

MlirValue lw_asm(Lw *L, const char *text, const char *constraints, int n, const MlirValue *args, MlirType res,
                 bool side_effects) {
  MlirNamedAttribute at[3] = {
      lw_attr(L, "asm_string", mlirStringAttrGet(L->mc, sref(text))),
      lw_attr(L, "constraints", mlirStringAttrGet(L->mc, sref(constraints))),
      lw_attr(L, "has_side_effects", mlirUnitAttrGet(L->mc)),
  };
  bool has_res = !mlirTypeIsNull(res);
  MlirOperation op = lw_op(L, "llvm.inline_asm", n, args, has_res ? 1 : 0, &res, side_effects ? 3 : 2, at);
  return has_res ? mlirOperationGetResult(op, 0) : (MlirValue){0};
}

MlirValue lw_extract(Lw *L, MlirValue agg, int i, MlirType t) {
  char pos[32];
  snprintf(pos, sizeof pos, "array<i64: %d>", i);
  MlirNamedAttribute at = lw_attr(L, "position", lw_pattr(L, pos));
  return lw_op1(L, "llvm.extractvalue", 1, &agg, t, 1, &at);
}

MlirValue lw_vec_extract(Lw *L, MlirValue vec, int i, MlirType t) {
  MlirValue idx = lw_i32(L, i);
  return lw_op1(L, "llvm.extractelement", 2, (MlirValue[]){vec, idx}, t, 0, NULL);
}

MlirValue lw_vec_build(Lw *L, MlirType vecty, int n, const MlirValue *elems) {
  MlirValue v = lw_op1(L, "llvm.mlir.undef", 0, NULL, vecty, 0, NULL);
  for (int i = 0; i < n; i++) {
    MlirValue idx = lw_i32(L, i);
    v = lw_op1(L, "llvm.insertelement", 3, (MlirValue[]){v, elems[i], idx}, vecty, 0, NULL);
  }
  return v;
}

MlirValue lw_gep(Lw *L, MlirValue ptr, MlirValue idx, MlirType elem, MlirType ptrty) {
  MlirNamedAttribute at[2] = {
      lw_attr(L, "rawConstantIndices", lw_pattr(L, "array<i32: -2147483648>")),
      lw_attr(L, "elem_type", mlirTypeAttrGet(elem)),
  };
  return lw_op1(L, "llvm.getelementptr", 2, (MlirValue[]){ptr, idx}, ptrty, 2, at);
}

MlirValue lw_load(Lw *L, MlirValue ptr, MlirType t, int align) {
  MlirNamedAttribute at = lw_attr(L, "alignment", mlirIntegerAttrGet(L->i64, align));
  return lw_op1(L, "llvm.load", 1, &ptr, t, 1, &at);
}

void lw_store(Lw *L, MlirValue v, MlirValue ptr, int align) {
  MlirNamedAttribute at = lw_attr(L, "alignment", mlirIntegerAttrGet(L->i64, align));
  lw_op(L, "llvm.store", 2, (MlirValue[]){v, ptr}, 0, NULL, 1, &at);
}

/* barrier.cluster (every thread of every CTA of the cluster): what each CTA did before (its mbarriers'
 * initialization, its shared memory's writes) is visible to the others, and none goes on until all have come;
 * a CTA that has come here no longer has its shared memory touched by the others' earlier work (cluster_sync(),
 * and the CTA pair's tensor memory at the start and the end). */
void lw_cluster_sync(Lw *L) {
  lw_asm(L, "barrier.cluster.arrive.release.aligned;", "", 0, NULL, (MlirType){0}, true);
  lw_asm(L, "barrier.cluster.wait.acquire.aligned;", "", 0, NULL, (MlirType){0}, true);
}

/* Synchronize the threads that share this code: the whole CTA (barrier 0)
 * or, inside a task, the task replica's own named barrier. */
/* A barrier of this group of warps. Outside IfScopes it runs wherever the
 * code around it does: the scratch is then known free. */
static MlirOperation barrier_op(Lw *L) {
  MlirOperation op = {0};
  if (mlirValueIsNull(L->bar_id)) {
    op = lw_op(L, "nvvm.barrier0", 0, NULL, 0, NULL, 0, NULL);
  } else {
    MlirValue args[2] = {L->bar_id, lw_i32(L, L->bar_threads)};
    lw_asm(L, "bar.sync $0, $1;", "r,r", 2, args, (MlirType){0}, true);
  }
  if (L->if_depth == 0) {
    L->scr_used = 0;
    L->scr_unknown = L->scr_pending = L->scr_last_parity = false;
  }
  return op;
}

void lw_barrier(Lw *L) { barrier_op(L); }

/* ---- scratch tracking: which scratch bytes may still be read ---- */

static uint64_t scr_mask(int off, int bytes) {
  int g0 = off / 16, g1 = (off + bytes + 15) / 16; /* granules [g0, g1), g1 <= 64 */
  uint64_t hi = g1 >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << g1) - 1;
  return hi & ~(((uint64_t)1 << g0) - 1);
}

void lw_scr_unknown(Lw *L) {
  L->scr_unknown = true;
  L->scr_pending = L->scr_last_parity = false;
}

void lw_scr_use(Lw *L, int off, int bytes) {
  if (off + bytes > LW_SCR_BYTES || L->if_depth) lw_scr_unknown(L);
  else L->scr_used |= scr_mask(off, bytes);
}

/* Where bytes of scratch go: the first of 0, s, 2s, 3s (s: bytes rounded
 * to 16) that no thread may still be reading (preferring places other
 * than the ones scr_bar guards), with no barrier; else a barrier and 0.
 * At the top of a for body (pending) that barrier is kept in scr_bar, for
 * lower_for to erase when neither the loop's entry nor the body's end
 * leaves reads of those bytes; and there the place alternates between two
 * halves by the iteration's parity, so that a body whose only exchange
 * this is (a row's reductions, fused) needs no barrier before its writes:
 * iteration i + 1 writes the half iteration i did not read. */
ScrPlace lw_scr_claim(Lw *L, int bytes) {
  L->scr_claimed = true;
  L->scr_last_parity = false;
  int step = (bytes + 15) & ~15;
  uint64_t avoid = mlirOperationIsNull(L->scr_bar) ? 0 : L->scr_bar_used;
  for (int pass = 0; pass < 2 && !L->scr_unknown && !L->if_depth; pass++)
    for (int off = 0; off < 4 * step && off + bytes <= LW_SCR_BYTES; off += step)
      if (!((L->scr_used | (pass ? 0 : avoid)) & scr_mask(off, bytes))) {
        L->scr_used |= scr_mask(off, bytes);
        return (ScrPlace){off, bytes, {0}};
      }
  bool pending = L->scr_pending && !L->if_depth && bytes <= LW_SCR_BYTES && mlirValueIsNull(L->bar_id);
  MlirOperation b = barrier_op(L);
  ScrPlace p = {0, bytes, {0}};
  if (pending) {
    L->scr_bar = b;
    L->scr_bar_parity = false;
    MlirType it = mlirValueIsNull(L->for_iv) ? L->i1 : mlirValueGetType(L->for_iv);
    if ((mlirTypeEqual(it, L->i32) || mlirTypeEqual(it, L->i64)) && 2 * step <= LW_SCR_BYTES) {
      /* the iteration's parity: ((iv - lb) / step) & 1 */
      MlirValue k = lw_bin(L, "arith.subi", L->for_iv, L->for_lb);
      k = lw_bin(L, "arith.divsi", k, L->for_step);
      if (!mlirTypeEqual(mlirValueGetType(k), L->i32)) k = lw_cast(L, "arith.trunci", k, L->i32);
      p.dyn = lw_bin(L, "arith.muli", lw_bin(L, "arith.andi", k, lw_i32(L, 1)), lw_i32(L, step));
      p.extent = 2 * step;
      L->scr_bar_parity = true;
    }
    L->scr_bar_used = scr_mask(0, p.extent);
  }
  lw_scr_use(L, 0, p.extent);
  return p;
}

void lw_scr_done(Lw *L, ScrPlace p) {
  lw_scr_use(L, p.base, p.extent);
  L->scr_last_parity = !mlirValueIsNull(p.dyn);
}

MlirType lw_elem_type(Lw *L, Elem e) {
  switch ((DType)e.dt) {
  case DT_BOOL: return L->i1;
  case DT_I8: case DT_U8: return L->i8;
  case DT_I16: case DT_U16: return L->i16;
  case DT_I32: case DT_U32: return L->i32;
  case DT_I64: case DT_U64: return L->i64;
  case DT_F16: return L->f16;
  case DT_BF16: return L->bf16;
  case DT_F32: return L->f32;
  case DT_F64: return L->f64;
  case DT_PTR: return L->ptr1;
  default: return L->i32;
  }
}

MlirType lw_vec_type(MlirType elem, int n) {
  int64_t shape[1] = {n};
  return mlirVectorTypeGet(1, shape, elem);
}

LV *lw_new(Lw *L, int n) {
  LV *lv = ar_alloc(&L->c->arena, sizeof *lv);
  lv->n = n;
  lv->v = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)(n > 0 ? n : 1));
  return lv;
}

void lw_set(TValue *v, LV *lv) { v->lw = lv; }

/* Remember a shared-memory allocation made outside tasks (see lower_tasks). */
void lw_note_smem(Lw *L, TValue *v, int off) {
  if (L->replica.ptr) return; /* made inside a task: already task-local */
  if (L->nsmem_vals == L->smem_cap) {
    int cap = L->smem_cap ? 2 * L->smem_cap : 16;
    TValue **nv = ar_alloc(&L->c->arena, sizeof(TValue *) * (size_t)cap);
    int *no = ar_alloc(&L->c->arena, sizeof(int) * (size_t)cap);
    if (L->nsmem_vals) {
      memcpy(nv, L->smem_vals, sizeof(TValue *) * (size_t)L->nsmem_vals);
      memcpy(no, L->smem_offs, sizeof(int) * (size_t)L->nsmem_vals);
    }
    L->smem_vals = nv, L->smem_offs = no, L->smem_cap = cap;
  }
  L->smem_vals[L->nsmem_vals] = v;
  L->smem_offs[L->nsmem_vals++] = off;
}

LV *lw_get(Lw *L, TValue *v) {
  if (!v->lw) {
    dg_ice(L->c, v->def ? v->def->loc : (Loc){0}, "value %%%d used before it was lowered", v->id);
    LV *lv = lw_new(L, 1);
    lv->v[0] = lw_i32(L, 0);
    return lv;
  }
  return v->lw;
}

bool lw_linear(Lw *L, const TValue *v, LinLayout *out) {
  const char *why = "no layout";
  if (v->type->kind != TY_TILE || !v->type->layout ||
      !ly_linear(v->type->layout, v->type->rank, v->type->shape, L->warps, out, &why)) {
    dg_ice(L->c, v->def ? v->def->loc : (Loc){0}, "value %%%d (%s) has no usable layout: %s", v->id,
           ty_str(L->c, v->type), why);
    return false;
  }
  return true;
}

void lw_add_global(Lw *L, const char *name, MlirType t, int addr_space, MlirAttribute value, bool constant, int align) {
  MlirNamedAttribute at[7];
  int n = 0;
  at[n++] = lw_attr(L, "sym_name", mlirStringAttrGet(L->mc, sref(name)));
  at[n++] = lw_attr(L, "global_type", mlirTypeAttrGet(t));
  at[n++] = lw_attr(L, "linkage", lw_pattr(L, "#llvm.linkage<external>"));
  at[n++] = lw_attr(L, "addr_space", mlirIntegerAttrGet(L->i32, addr_space));
  at[n++] = lw_attr(L, "alignment", mlirIntegerAttrGet(L->i64, align));
  if (constant) at[n++] = lw_attr(L, "constant", mlirUnitAttrGet(L->mc));
  if (!mlirAttributeIsNull(value)) at[n++] = lw_attr(L, "value", value);
  MlirOperationState st = mlirOperationStateGet(sref("llvm.mlir.global"), L->loc);
  mlirOperationStateAddAttributes(&st, n, at);
  MlirRegion r = mlirRegionCreate();
  mlirOperationStateAddOwnedRegions(&st, 1, &r);
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(L->mod), mlirOperationCreate(&st));
}

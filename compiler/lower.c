/* lower.c - Tile IR to MLIR through the MLIR C API builder functions.
 *
 * A kernel becomes an llvm.func marked nvvm.kernel whose body uses the
 * upstream arith, scf, llvm and nvvm dialects.  Each TIR tile becomes the
 * registers one thread owns under its layout (LV); elementwise ops apply per
 * register, control flow maps to scf.for / scf.if / scf.while carrying the
 * flattened registers, and layout-dependent ops (reductions, conversions,
 * dot, memory) live in lower_ops.c and lower_mem.c; the builder they all
 * use is lower_core.c.  Every op carries the
 * Tile source location, which becomes PTX .loc line info. */
#include "lower.h"
#include <stdio.h>
#include <string.h>

static MlirStringRef sref(const char *s) { return mlirStringRefCreateFromCString(s); }

static int nregs_of(Lw *L, const TValue *v) {
  if (v->type->kind != TY_TILE) return 1;
  LinLayout lin;
  if (!lw_linear(L, v, &lin)) return 1;
  return ly_nregs(&lin);
}

/* The file name as the PTX line table may carry it: LLVM writes it inside
 * `.file N "..."` escaping a double quote as \", which ptxas refuses, so a
 * quote becomes an apostrophe (the name only labels line info). */
static MlirStringRef line_table_name(Lw *L, const Source *src) {
  if (!strchr(src->name, '"')) return sref(src->name);
  char *n = ar_strdup(&L->c->arena, src->name);
  for (char *p = n; *p; p++)
    if (*p == '"') *p = '\'';
  return sref(n);
}

static MlirLocation loc_of(Lw *L, Loc loc) {
  if (!loc.src || loc.line <= 0) return mlirLocationUnknownGet(L->mc);
  return mlirLocationFileLineColGet(L->mc, line_table_name(L, loc.src), (unsigned)loc.line, (unsigned)loc.col);
}

/* ---- elementwise ---- */

static bool is_f(DType d) { return ty_is_float(d); }
static bool is_u(DType d) { return d == DT_U8 || d == DT_U16 || d == DT_U32 || d == DT_U64 || d == DT_BOOL; }

static MlirValue cast_one(Lw *L, MlirValue x, Elem from, Elem to) {
  DType f = (DType)from.dt, t = (DType)to.dt;
  MlirType tt = lw_elem_type(L, to);
  if (f == DT_PTR && t == DT_PTR) /* `p as *f32`: LLVM's pointers are untyped */
    return mlirTypeEqual(mlirValueGetType(x), tt) ? x : lw_cast(L, "llvm.addrspacecast", x, tt);
  if (f == DT_PTR) return lw_cast(L, "llvm.ptrtoint", x, tt);
  if (t == DT_PTR) return lw_cast(L, "llvm.inttoptr", x, tt);
  if (t == DT_BOOL) {
    if (is_f(f)) return lw_op1(L, "arith.cmpf", 2, (MlirValue[]){x, lw_float(L, mlirValueGetType(x), 0)}, L->i1, 1,
                               (MlirNamedAttribute[]){lw_attr(L, "predicate", mlirIntegerAttrGet(L->i64, 13))});
    return lw_cmpi(L, CMPI_NE, x, lw_int(L, mlirValueGetType(x), 0));
  }
  if (is_f(f) && is_f(t)) {
    int bf = ty_dtype_bits(f), bt = ty_dtype_bits(t);
    if (bf == bt) { /* f16 <-> bf16 through f32 */
      MlirValue w = lw_cast(L, "arith.extf", x, L->f32);
      return lw_cast(L, "arith.truncf", w, tt);
    }
    return lw_cast(L, bt > bf ? "arith.extf" : "arith.truncf", x, tt);
  }
  if (is_f(f)) return lw_cast(L, is_u(t) ? "arith.fptoui" : "arith.fptosi", x, tt);
  if (is_f(t)) return lw_cast(L, is_u(f) ? "arith.uitofp" : "arith.sitofp", x, tt);
  int bf = ty_dtype_bits(f), bt = ty_dtype_bits(t);
  if (bf == bt) return x;
  if (bt < bf) return lw_cast(L, "arith.trunci", x, tt);
  return lw_cast(L, is_u(f) ? "arith.extui" : "arith.extsi", x, tt);
}

static MlirValue elementwise(Lw *L, TOp *op, MlirValue *a) {
  DType dt = (DType)op->opnds[0]->type->elem.dt;
  bool fl = is_f(dt), un = is_u(dt);
  MlirType t = mlirValueGetType(a[0]);
  switch (op->opc) {
  case OP_ADD: return lw_bin(L, fl ? "arith.addf" : "arith.addi", a[0], a[1]);
  case OP_SUB: return lw_bin(L, fl ? "arith.subf" : "arith.subi", a[0], a[1]);
  case OP_MUL: return lw_bin(L, fl ? "arith.mulf" : "arith.muli", a[0], a[1]);
  case OP_DIV: return lw_bin(L, fl ? "arith.divf" : un ? "arith.divui" : "arith.divsi", a[0], a[1]);
  case OP_REM: return lw_bin(L, fl ? "arith.remf" : un ? "arith.remui" : "arith.remsi", a[0], a[1]);
  case OP_AND: return lw_bin(L, "arith.andi", a[0], a[1]);
  case OP_OR: return lw_bin(L, "arith.ori", a[0], a[1]);
  case OP_XOR: return lw_bin(L, "arith.xori", a[0], a[1]);
  case OP_SHL: return lw_bin(L, "arith.shli", a[0], a[1]);
  case OP_SHR: return lw_bin(L, un ? "arith.shrui" : "arith.shrsi", a[0], a[1]);
  case OP_MIN: return lw_bin(L, fl ? "arith.minimumf" : un ? "arith.minui" : "arith.minsi", a[0], a[1]);
  case OP_MAX: return lw_bin(L, fl ? "arith.maximumf" : un ? "arith.maxui" : "arith.maxsi", a[0], a[1]);
  case OP_CMP: {
    if (fl) {
      static const int fp[] = {1, 13, 4, 5, 2, 3}; /* oeq une olt ole ogt oge */
      MlirNamedAttribute at = lw_attr(L, "predicate", mlirIntegerAttrGet(L->i64, fp[op->pred]));
      return lw_op1(L, "arith.cmpf", 2, a, L->i1, 1, &at);
    }
    static const int sp[] = {CMPI_EQ, CMPI_NE, CMPI_SLT, CMPI_SLE, CMPI_SGT, CMPI_SGE};
    static const int upred[] = {CMPI_EQ, CMPI_NE, CMPI_ULT, CMPI_ULE, CMPI_UGT, CMPI_UGE};
    return lw_cmpi(L, un ? upred[op->pred] : sp[op->pred], a[0], a[1]);
  }
  case OP_PTR_ADD: {
    Elem pe = {op->opnds[0]->type->elem.pointee, 0};
    return lw_gep(L, a[0], a[1], lw_elem_type(L, pe), L->ptr1);
  }
  case OP_NEG:
    if (fl) return lw_cast(L, "arith.negf", a[0], t);
    return lw_bin(L, "arith.subi", lw_int(L, t, 0), a[0]);
  case OP_NOT: return lw_bin(L, "arith.xori", a[0], lw_int(L, t, dt == DT_BOOL ? 1 : -1));
  case OP_EXP: case OP_EXP2: case OP_LOG: case OP_LOG2: case OP_RSQRT: case OP_TANH: case OP_SIN: case OP_COS:
  case OP_ERF: case OP_RCP: case OP_FDIV: return lw_math_f32(L, op->opc, a, dt);
  case OP_SQRT: return lw_intrin(L, "llvm.sqrt", 1, a, t);
  case OP_FLOOR: return lw_intrin(L, "llvm.floor", 1, a, t);
  case OP_CEIL: return lw_intrin(L, "llvm.ceil", 1, a, t);
  case OP_ABS:
    if (fl) return lw_intrin(L, "llvm.fabs", 1, a, t);
    if (un) return a[0];
    return lw_select(L, lw_cmpi(L, CMPI_SLT, a[0], lw_int(L, t, 0)), lw_bin(L, "arith.subi", lw_int(L, t, 0), a[0]),
                     a[0]);
  case OP_FMA: return lw_intrin(L, "llvm.fma", 3, a, t);
  case OP_SELECT: return lw_select(L, a[0], a[1], a[2]);
  case OP_CAST: return cast_one(L, a[0], op->opnds[0]->type->elem, op->to);
  default:
    dg_ice(L->c, op->loc, "no lowering for elementwise op %s", ir_opname(op->opc));
    return a[0];
  }
}

static MlirBlock new_block(Lw *L, int n, const MlirType *types);
static MlirOperation make_region_op(Lw *L, const char *name, int nopnd, MlirValue *opnds, int nres, MlirType *res,
                                    int nreg, MlirBlock *blocks);

/* x * f with OPF_SKIP_ONES (scale_rows): when every factor this warp holds is
 * exactly 1 the warp skips the multiplies. The test is one redux.sync (a
 * uniform register, so the branch needs no divergence bookkeeping); the
 * factors of a row broadcast are the same registers, so LLVM compares each
 * distinct one once. */
static void skip_ones_mul(Lw *L, TOp *op, LV **in, int n, LV *out) {
  MlirType et = lw_elem_type(L, op->res[0]->type->elem);
  MlirValue one = lw_float(L, et, 1.0);
  MlirNamedAttribute oeq = lw_attr(L, "predicate", mlirIntegerAttrGet(L->i64, 1));
  MlirValue all = (MlirValue){0};
  for (int r = 0; r < n; r++) {
    MlirValue f = in[1]->v[in[1]->n == 1 ? 0 : r];
    MlirValue eq = lw_op1(L, "arith.cmpf", 2, (MlirValue[]){f, one}, L->i1, 1, &oeq);
    all = mlirValueIsNull(all) ? eq : lw_bin(L, "arith.andi", all, eq);
  }
  MlirValue w = lw_cast(L, "arith.extui", all, L->i32);
  MlirValue u = lw_warp_uniform(L, w);
  MlirValue skip = lw_cmpi(L, CMPI_NE, u, lw_i32(L, 0));
  MlirType *ts = ar_alloc(&L->c->arena, sizeof(MlirType) * (size_t)n);
  for (int r = 0; r < n; r++) ts[r] = et;
  MlirBlock blocks[2], saved = L->blk;
  blocks[0] = new_block(L, 0, NULL); /* all ones: x as it is */
  L->blk = blocks[0];
  lw_op(L, "scf.yield", n, in[0]->v, 0, NULL, 0, NULL);
  blocks[1] = new_block(L, 0, NULL);
  L->blk = blocks[1];
  MlirValue *prod = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)n);
  for (int r = 0; r < n; r++) {
    MlirValue a[2] = {in[0]->v[in[0]->n == 1 ? 0 : r], in[1]->v[in[1]->n == 1 ? 0 : r]};
    prod[r] = elementwise(L, op, a);
  }
  lw_op(L, "scf.yield", n, prod, 0, NULL, 0, NULL);
  L->blk = saved;
  MlirOperation mop = make_region_op(L, "scf.if", 1, &skip, n, ts, 2, blocks);
  for (int r = 0; r < n; r++) out->v[r] = mlirOperationGetResult(mop, r);
  lw_set(op->res[0], out);
}

/* Is v read back as a wider float by an op after `from` (in its block or
 * the regions nested there)? */
static bool widened_in(const TOp *from, const TValue *v) {
  for (const TOp *o = from; o; o = o->next) {
    if (o->opc == OP_CAST && o->nopnds == 1 && o->opnds[0] == v) return true;
    for (int r = 0; r < o->nregions; r++)
      if (o->regions[r]->first && widened_in(o->regions[r]->first, v)) return true;
  }
  return false;
}

static void lower_elementwise(Lw *L, TOp *op) {
  int n = nregs_of(L, op->res[0]);
  LV *out = lw_new(L, n);
  LV *in[4];
  for (int i = 0; i < op->nopnds && i < 4; i++) {
    in[i] = lw_get(L, op->opnds[i]);
    if (in[i]->n != n && in[i]->n != 1) {
      dg_ice(L->c, op->loc, "%s: operand %d has %d registers, result %d", ir_opname(op->opc), i, in[i]->n, n);
      return;
    }
  }
  /* f32 -> bf16/f16 two registers at a time: one cvt.rn.bf16x2.f32 per pair,
   * already packed the way mma operands (P of attention) take them. When the
   * result is also read back as f32 (jfa_bwd: dS = P (dP - Delta) with P in
   * bf16), LLVM splits a vector truncf into two scalar cvt.rn.bf16.f32 and
   * repacks them, and ptxas makes each an F2F on the slow conversion pipe
   * beside the softmax's MUFU.EX2 (32 F2F + 16 PRMT per thread and Q block
   * instead of 16 F2FP: 4-8% of the backward): then the pair is converted
   * by inline PTX, which LLVM cannot split. Only then: where P feeds only
   * the PV wgmma (the forward), the asm's outputs tied into loop-carried
   * registers make ptxas serialize the wgmmas (C7513). */
  DType to = (DType)op->to.dt;
  if (op->opc == OP_CAST && op->opnds[0]->type->elem.dt == DT_F32 && (to == DT_BF16 || to == DT_F16) && n % 2 == 0 &&
      in[0]->n == n) {
    MlirType et = lw_elem_type(L, op->to), v2f = lw_vec_type(L->f32, 2), v2h = lw_vec_type(et, 2);
    bool opaque = widened_in(op->next, op->res[0]);
    const char *cvt = to == DT_BF16 ? "cvt.rn.bf16x2.f32 $0, $2, $1;" : "cvt.rn.f16x2.f32 $0, $2, $1;";
    for (int r = 0; r < n; r += 2) {
      MlirValue h;
      if (opaque) {
        MlirValue bits = lw_asm(L, cvt, "=r,f,f", 2, (MlirValue[]){in[0]->v[r], in[0]->v[r + 1]}, L->i32, true);
        h = lw_cast(L, "llvm.bitcast", bits, v2h);
      } else {
        MlirValue v = lw_vec_build(L, v2f, 2, (MlirValue[]){in[0]->v[r], in[0]->v[r + 1]});
        h = lw_cast(L, "arith.truncf", v, v2h);
      }
      out->v[r] = lw_vec_extract(L, h, 0, et);
      out->v[r + 1] = lw_vec_extract(L, h, 1, et);
    }
    lw_set(op->res[0], out);
    return;
  }
  if ((op->flags & OPF_SKIP_ONES) && op->opc == OP_MUL && n > 1) {
    skip_ones_mul(L, op, in, n, out);
    return;
  }
  for (int r = 0; r < n; r++) {
    MlirValue a[4];
    for (int i = 0; i < op->nopnds && i < 4; i++) a[i] = in[i]->v[in[i]->n == 1 ? 0 : r];
    if (op->opc == OP_EXP2 && op->ival >= 2 && r % op->ival == op->ival - 1 &&
        op->opnds[0]->type->elem.dt == DT_F32) /* fma_every: this register on the FMA pipe */
      out->v[r] = lw_exp2_fma(L, a[0]);
    else
      out->v[r] = elementwise(L, op, a);
  }
  lw_set(op->res[0], out);
}

/* ---- control flow ---- */

static void lower_block(Lw *L, TBlock *b);

/* Flatten the registers of a list of values. */
static int flat_count(Lw *L, TValue **vs, int n) {
  int k = 0;
  for (int i = 0; i < n; i++) k += lw_get(L, vs[i])->n;
  return k;
}

static void flatten(Lw *L, TValue **vs, int n, MlirValue *out) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    LV *lv = lw_get(L, vs[i]);
    for (int j = 0; j < lv->n; j++) out[k++] = lv->v[j];
  }
}

static MlirType *types_of(Lw *L, TValue **vs, int n, int *count) {
  int k = 0;
  for (int i = 0; i < n; i++) k += nregs_of(L, vs[i]);
  MlirType *t = ar_alloc(&L->c->arena, sizeof(MlirType) * (size_t)(k + 1));
  k = 0;
  for (int i = 0; i < n; i++) {
    int r = nregs_of(L, vs[i]);
    MlirType et = lw_elem_type(L, vs[i]->type->elem);
    for (int j = 0; j < r; j++) t[k++] = et;
  }
  *count = k;
  return t;
}

/* Bind a block's TIR arguments (from index `first`) to MLIR block arguments. */
static void bind_args(Lw *L, TBlock *tb, int first, MlirBlock mb, int mfirst) {
  int k = mfirst;
  for (int i = first; i < tb->nargs; i++) {
    int n = nregs_of(L, tb->args[i]);
    LV *lv = lw_new(L, n);
    for (int j = 0; j < n; j++) lv->v[j] = mlirBlockGetArgument(mb, k++);
    lw_set(tb->args[i], lv);
  }
}

static MlirBlock new_block(Lw *L, int n, const MlirType *types) {
  MlirLocation *locs = ar_alloc(&L->c->arena, sizeof(MlirLocation) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) locs[i] = L->loc;
  return mlirBlockCreate(n, types, locs);
}

static MlirOperation make_region_op(Lw *L, const char *name, int nopnd, MlirValue *opnds, int nres, MlirType *res,
                                    int nreg, MlirBlock *blocks) {
  MlirOperationState st = mlirOperationStateGet(sref(name), L->loc);
  if (nopnd) mlirOperationStateAddOperands(&st, nopnd, opnds);
  if (nres) mlirOperationStateAddResults(&st, nres, res);
  MlirRegion regs[2];
  for (int i = 0; i < nreg; i++) {
    regs[i] = mlirRegionCreate();
    mlirRegionAppendOwnedBlock(regs[i], blocks[i]);
  }
  mlirOperationStateAddOwnedRegions(&st, nreg, regs);
  MlirOperation op = mlirOperationCreate(&st);
  lw_insert(L, op);
  return op;
}

static void bind_results(Lw *L, TOp *op, MlirOperation mop) {
  int k = 0;
  for (int i = 0; i < op->nres; i++) {
    int n = nregs_of(L, op->res[i]);
    LV *lv = lw_new(L, n);
    for (int j = 0; j < n; j++) lv->v[j] = mlirOperationGetResult(mop, k++);
    lw_set(op->res[i], lv);
  }
}

static void terminator(Lw *L, const char *name, TValue **vs, int n, MlirValue first) {
  int k = flat_count(L, vs, n);
  int extra = mlirValueIsNull(first) ? 0 : 1;
  MlirValue *ops = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)(k + 2));
  if (extra) ops[0] = first;
  flatten(L, vs, n, ops + extra);
  lw_op(L, name, k + extra, ops, 0, NULL, 0, NULL);
}

static void lower_for(Lw *L, TOp *op) {
  TBlock *tb = op->regions[0];
  int ncar = op->nres, nt;
  MlirType *rtypes = types_of(L, op->res, ncar, &nt);
  MlirType *btypes = ar_alloc(&L->c->arena, sizeof(MlirType) * (size_t)(nt + 2));
  btypes[0] = lw_elem_type(L, op->opnds[0]->type->elem);
  memcpy(btypes + 1, rtypes, sizeof(MlirType) * (size_t)nt);
  MlirValue *opnds = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)(nt + 4));
  for (int i = 0; i < 3; i++) opnds[i] = lw_get(L, op->opnds[i])->v[0];
  flatten(L, op->opnds + 3, ncar, opnds + 3);
  MlirBlock body = new_block(L, nt + 1, btypes);
  LV *iv = lw_new(L, 1);
  iv->v[0] = mlirBlockGetArgument(body, 0);
  lw_set(tb->args[0], iv);
  bind_args(L, tb, 1, body, 1);
  MlirBlock saved = L->blk;
  L->blk = body;
  /* the body's first scratch write takes a barrier (the previous
   * iteration's end is not lowered yet), erased below if neither what the
   * loop's entry nor what the body's end may still read overlaps it */
  uint64_t entry_used = L->scr_used;
  bool entry_known = !L->scr_unknown && !L->if_depth;
  Lw outer = *L; /* the scr_bar and for_ fields of a for around this one */
  L->scr_bar = (MlirOperation){0};
  L->scr_unknown = true;
  L->scr_pending = !L->if_depth;
  L->for_iv = iv->v[0];
  L->for_lb = opnds[0];
  L->for_step = opnds[2];
  lower_block(L, tb);
  if (!mlirOperationIsNull(L->scr_bar) && entry_known && !(entry_used & L->scr_bar_used) && !L->scr_unknown &&
      (!(L->scr_used & L->scr_bar_used) || (L->scr_bar_parity && L->scr_last_parity))) {
    mlirOperationRemoveFromParent(L->scr_bar);
    mlirOperationDestroy(L->scr_bar);
  }
  L->scr_bar = outer.scr_bar;
  L->scr_bar_used = outer.scr_bar_used;
  L->scr_bar_parity = outer.scr_bar_parity;
  L->for_iv = outer.for_iv;
  L->for_lb = outer.for_lb;
  L->for_step = outer.for_step;
  L->blk = saved;
  L->loc = loc_of(L, op->loc);
  MlirOperation mop = make_region_op(L, "scf.for", nt + 3, opnds, nt, rtypes, 1, &body);
  bind_results(L, op, mop);
}

static void lower_if(Lw *L, TOp *op) {
  int nt;
  MlirType *rtypes = types_of(L, op->res, op->nres, &nt);
  MlirBlock blocks[2];
  MlirBlock saved = L->blk;
  for (int r = 0; r < 2; r++) {
    blocks[r] = new_block(L, 0, NULL);
    L->blk = blocks[r];
    lw_scr_unknown(L);
    lower_block(L, op->regions[r]);
  }
  L->blk = saved;
  L->loc = loc_of(L, op->loc);
  MlirValue c = lw_get(L, op->opnds[0])->v[0];
  MlirOperation mop = make_region_op(L, "scf.if", 1, &c, nt, rtypes, 2, blocks);
  bind_results(L, op, mop);
}

static void lower_while(Lw *L, TOp *op) {
  int nt;
  MlirType *rtypes = types_of(L, op->res, op->nres, &nt);
  MlirValue *opnds = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)(nt + 1));
  flatten(L, op->opnds, op->nopnds, opnds);
  MlirBlock blocks[2];
  MlirBlock saved = L->blk;
  for (int r = 0; r < 2; r++) {
    blocks[r] = new_block(L, nt, rtypes);
    bind_args(L, op->regions[r], 0, blocks[r], 0);
    L->blk = blocks[r];
    lw_scr_unknown(L);
    lower_block(L, op->regions[r]);
  }
  L->blk = saved;
  L->loc = loc_of(L, op->loc);
  MlirOperation mop = make_region_op(L, "scf.while", nt, opnds, nt, rtypes, 2, blocks);
  bind_results(L, op, mop);
}

/* ---- ops ---- */

static MlirValue sreg(Lw *L, const char *name) { return lw_op1(L, name, 0, NULL, L->i32, 0, NULL); }

static int warps_slots(const TBlock *b) { /* warps a task occupies (whole warpgroups) */
  int per = b->warps < 4 ? 4 : b->warps;
  return per * b->replicas;
}

/* tasks: an if/else chain on the warp index; each branch sets the task's
 * register budget (setmaxnreg, on whole warpgroups) and runs the task body
 * on its warps with its own thread coordinates, named barrier and scratch
 * shared memory. Warps of a task narrower than a warpgroup idle, unless
 * small tasks share the warpgroup (sema_stmt.c packs them): then one
 * branch covers the warpgroup, sets its budget once (every warp of a
 * warpgroup must execute the same setmaxnreg), and dispatches each task to
 * its own warps. */
static void lower_task_body(Lw *L, TOp *op, int i, MlirValue warp, MlirValue lo, int per) {
  TBlock *tb = op->regions[i];
  /* the task's own prologue: thread coordinates are relative to it */
  MlirBlock saved_entry = L->entry;
  MlirOperation saved_pe = L->prologue_end;
  TCoord *saved_coords = L->coords;
  MlirValue saved_warp = L->warp, saved_scratch = L->scratch, saved_elect = L->elect, saved_bar = L->bar_id;
  MlirValue saved_rep = L->replica, saved_tw = L->task_warp;
  int saved_warps = L->warps, saved_bt = L->bar_threads;
  bool saved_tc = L->tcgen05;
  L->tcgen05 = lw_tc_uses(tb, true);
  MlirValue rel = lw_bin(L, "arith.subi", warp, lo);
  MlirValue rep = lw_bin(L, "arith.divui", rel, lw_i32(L, per));
  MlirValue tw = lw_bin(L, "arith.remui", rel, lw_i32(L, per));
  /* idle warps of a narrow task do nothing more */
  MlirValue active = lw_cmpi(L, CMPI_ULT, tw, lw_i32(L, tb->warps));
  IfScope body;
  lw_begin_if(L, &body);
  L->entry = L->blk;
  L->prologue_end = lw_op(L, "llvm.mlir.undef", 0, NULL, 1, &L->i32, 0, NULL);
  L->coords = NULL;
  L->warps = tb->warps;
  L->warp = tw;
  L->task_warp = tw;
  L->replica = rep;
  L->elect = lw_bin(L, "arith.andi", lw_cmpi(L, CMPI_EQ, tw, lw_i32(L, 0)), lw_cmpi(L, CMPI_EQ, L->lane, lw_i32(L, 0)));
  /* named barriers 8.. belong to task replicas (1..7 are the program's) */
  int first_rep = 0;
  for (int j = 0; j < i; j++) first_rep += op->regions[j]->replicas;
  L->bar_id = lw_bin(L, "arith.addi", rep, lw_i32(L, 8 + first_rep));
  L->bar_threads = tb->warps * 32;
  /* The task's own copy of the shared-memory base address, and of every
   * kernel-level buffer and mbarrier address derived from it. Shared by
   * all tasks, the base is one register live across the whole kernel and
   * ptxas keeps it (and the ring-slot and descriptor arithmetic on it)
   * off the uniform datapath: with it R2UR moves per wgmma and divergence
   * bookkeeping around every mbarrier wait, 6% of the JFA KV loop. An
   * opaque mov per task keeps the address a short-lived constant. */
  MlirValue saved_smem = L->smem;
  L->smem = lw_cast(L, "llvm.inttoptr", lw_asm(L, "mov.u64 $0, tile_smem;", "=l", 0, NULL, L->i64, true), L->ptr3);
  LV **saved_vals = ar_alloc(&L->c->arena, sizeof(LV *) * (size_t)(L->nsmem_vals ? L->nsmem_vals : 1));
  int nsaved = L->nsmem_vals;
  for (int j = 0; j < nsaved; j++) {
    TValue *sv = L->smem_vals[j];
    saved_vals[j] = sv->lw;
    LV *lv = lw_new(L, 1);
    lv->v[0] = lw_gep(L, L->smem, lw_i32(L, L->smem_offs[j]), L->i8, L->ptr3);
    lw_set(sv, lv);
  }
  /* scratch: one slice per replica after the earlier tasks' slices, sized
   * by what this task's own conversions need (patched once lowered), so a
   * producer that converts nothing costs no shared memory */
  MlirValue stride = lw_i32(L, 0);
  MlirValue idx = lw_bin(L, "arith.addi", lw_i32(L, L->task_scratch), lw_bin(L, "arith.muli", rep, stride));
  L->scratch = lw_gep(L, lw_gep(L, L->smem, lw_i32(L, L->kf->smem_static), L->i8, L->ptr3), idx, L->i8, L->ptr3);
  int saved_max = L->smem_max;
  L->smem_max = 0;
  lw_scr_unknown(L); /* (inside the task's IfScope: it stays so) */
  lower_block(L, tb);
  int task_stride = (L->smem_max + 127) & ~127;
  mlirOperationSetAttributeByName(mlirOpResultGetOwner(stride), sref("value"), mlirIntegerAttrGet(L->i32, task_stride));
  st_note_task(L->c, tb, L->kf->smem_static + L->task_scratch, task_stride);
  L->task_scratch += task_stride * tb->replicas;
  L->smem_max = saved_max;
  for (int j = 0; j < nsaved; j++) lw_set(L->smem_vals[j], saved_vals[j]);
  L->smem = saved_smem;
  lw_end_if(L, &body, active);
  L->entry = saved_entry;
  L->prologue_end = saved_pe;
  L->coords = saved_coords;
  L->warp = saved_warp;
  L->scratch = saved_scratch;
  L->elect = saved_elect;
  L->bar_id = saved_bar;
  L->replica = saved_rep;
  L->task_warp = saved_tw;
  L->warps = saved_warps;
  L->bar_threads = saved_bt;
  L->tcgen05 = saved_tc;
}

static MlirValue warp_in(Lw *L, MlirValue warp, int lo, int hi) {
  return lw_bin(L, "arith.andi", lw_cmpi(L, CMPI_UGE, warp, lw_i32(L, lo)), lw_cmpi(L, CMPI_ULT, warp, lw_i32(L, hi)));
}

static void lower_tasks(Lw *L, TOp *op) {
  int kernel_regs = L->kf->maxnreg;
  MlirValue warp = L->warp;
  for (int i = 0, j; i < op->nregions; i = j) {
    /* regions i .. j-1 share warpgroups: one task, or small tasks packed */
    TBlock *tb = op->regions[i];
    int glo = tb->warp0 & ~3, ghi = tb->warp0 + warps_slots(tb);
    for (j = i + 1; j < op->nregions && tb->warps < 4 && op->regions[j]->warp0 >= glo &&
                    op->regions[j]->warp0 < glo + 4;
         j++) {}
    if (j > i + 1) ghi = glo + 4;
    MlirValue in = warp_in(L, warp, glo, ghi);
    IfScope sc;
    lw_begin_if(L, &sc);
    if (tb->regs) {
      MlirNamedAttribute at[2] = {
          lw_attr(L, "action", lw_pattr(L, tb->regs > kernel_regs ? "#nvvm<action increase>" : "#nvvm<action decrease>")),
          lw_attr(L, "regCount", mlirIntegerAttrGet(L->i32, tb->regs)),
      };
      lw_op(L, "nvvm.setmaxregister", 0, NULL, 0, NULL, 2, at);
    }
    if (j == i + 1) {
      lower_task_body(L, op, i, warp, lw_i32(L, tb->warp0), warps_slots(tb) / tb->replicas);
    } else {
      for (int k = i; k < j; k++) {
        TBlock *t = op->regions[k];
        MlirValue mine = warp_in(L, warp, t->warp0, t->warp0 + t->warps);
        IfScope one;
        lw_begin_if(L, &one);
        lower_task_body(L, op, k, warp, lw_i32(L, t->warp0), t->warps);
        lw_end_if(L, &one, mine);
      }
    }
    lw_end_if(L, &sc, in);
  }
}

static void lower_op(Lw *L, TOp *op) {
  L->loc = loc_of(L, op->loc);
  switch (op->opc) {
  case OP_CONST: {
    LV *lv = lw_new(L, 1);
    MlirType t = lw_elem_type(L, op->res[0]->type->elem);
    lv->v[0] = ty_is_float((DType)op->res[0]->type->elem.dt) ? lw_float(L, t, op->fval) : lw_int(L, t, op->ival);
    lw_set(op->res[0], lv);
    return;
  }
  case OP_SPLAT: {
    int n = nregs_of(L, op->res[0]);
    LV *lv = lw_new(L, n);
    MlirValue s = lw_get(L, op->opnds[0])->v[0];
    for (int i = 0; i < n; i++) lv->v[i] = s;
    lw_set(op->res[0], lv);
    return;
  }
  case OP_PROGRAM_ID:
  case OP_NUM_PROGRAMS: {
    static const char *pid[] = {"nvvm.read.ptx.sreg.ctaid.x", "nvvm.read.ptx.sreg.ctaid.y",
                                "nvvm.read.ptx.sreg.ctaid.z"};
    static const char *np[] = {"nvvm.read.ptx.sreg.nctaid.x", "nvvm.read.ptx.sreg.nctaid.y",
                               "nvvm.read.ptx.sreg.nctaid.z"};
    LV *lv = lw_new(L, 1);
    lv->v[0] = sreg(L, op->opc == OP_PROGRAM_ID ? pid[op->axis] : np[op->axis]);
    lw_set(op->res[0], lv);
    return;
  }
  case OP_ARANGE:
  case OP_EXPAND_DIMS:
  case OP_BROADCAST:
  case OP_TRANS:
  case OP_CONVERT: lw_shape_op(L, op); return;
  case OP_LOAD: lw_load_op(L, op); return;
  case OP_STORE: lw_store_op(L, op); return;
  case OP_ATOMIC_ADD: lw_atomic_op(L, op); return;
  case OP_REDUCE: lw_reduce(L, op); return;
  case OP_DOT: lw_dot(L, op); return;
  case OP_FOR: lower_for(L, op); return;
  case OP_IF: lower_if(L, op); return;
  case OP_WHILE: lower_while(L, op); return;
  case OP_YIELD:
    if (op->block->parent && op->block->parent->opc == OP_TASKS) return; /* end of a task */
    terminator(L, "scf.yield", op->opnds, op->nopnds, (MlirValue){0});
    return;
  case OP_CONDITION:
    terminator(L, "scf.condition", op->opnds + 1, op->nopnds - 1, lw_get(L, op->opnds[0])->v[0]);
    return;
  case OP_RETURN:
    lw_tc_kernel_end(L); /* tensor memory, if the kernel has any */
    lw_op(L, "llvm.return", 0, NULL, 0, NULL, 0, NULL);
    return;
  case OP_TASKS: lower_tasks(L, op); return;
  case OP_PRINT:
  case OP_DEVICE_ASSERT:
  case OP_CLOCK: lw_debug_op(L, op); return;
  default:
    if (lw_tc_owns(op)) {
      lw_tc_op(L, op);
      return;
    }
    if (op->opc >= OP_SMEM_ALLOC && op->opc < OP_COUNT) {
      lw_tc_sync(L, op, false);
      lw_hw_op(L, op);
      lw_tc_sync(L, op, true);
      return;
    }
    if (ir_is_elementwise(op->opc)) {
      lower_elementwise(L, op);
      return;
    }
    dg_ice(L->c, op->loc, "no lowering for %s", ir_opname(op->opc));
  }
}

/* The lowering state of a module: Lw and, for the shared-memory error,
 * the operation with the largest scratch (L points at LwMod.L, its first
 * member, everywhere). */
typedef struct LwMod {
  Lw L;
  TOp *scratch_op;
  int scratch_bytes;
} LwMod;

/* Stops at the first error: the ops after a failed one would read its
 * missing registers. */
static void lower_block(Lw *L, TBlock *b) {
  LwMod *M = (LwMod *)L;
  for (TOp *op = b->first; op && !L->c->ice && !L->c->nerrors; op = op->next) {
    int before = L->smem_max;
    L->smem_max = 0; /* what this op takes, for the compile report; then the group's maximum again */
    L->scr_claimed = false;
    lower_op(L, op);
    /* after a region, or scratch used by an op that did not track it,
     * any scratch byte may still be read */
    if (op->nregions || (L->smem_max && !L->scr_claimed)) lw_scr_unknown(L);
    if (L->smem_max && !op->nregions) st_note_scratch(L->c, op, L->smem_max);
    if (L->smem_max < before) L->smem_max = before;
    /* the innermost op that raised the scratch, not the loop around it */
    if (L->smem_max > before && L->smem_max > M->scratch_bytes) M->scratch_op = op, M->scratch_bytes = L->smem_max;
  }
}

/* Shared memory over the limit once lowering has added its scratch: the
 * program's error, at the operation that needs the most scratch. */
static void smem_error(Lw *L, TFunc *f) {
  LwMod *M = (LwMod *)L;
  Ctx *c = L->c;
  TOp *op = M->scratch_op;
  int scratch = f->smem_bytes - f->smem_static;
  if (!op) {
    dg_error(c, f->loc, "kernel '%s' needs %d bytes of shared memory (%d allocated + %d scratch); the limit is %d",
             f->name, f->smem_bytes, f->smem_static, scratch, 227 * 1024);
    return;
  }
  const char *what = op->opc == OP_CONVERT ? "converting" : op->opc == OP_REDUCE ? "this reduction of" : "this operation on";
  TValue *v = op->opc == OP_CONVERT || op->opc == OP_REDUCE ? op->opnds[0] : op->nres ? op->res[0] : op->opnds[0];
  char *layouts = op->opc == OP_CONVERT && v->type->layout && op->res[0]->type->layout
                    ? ar_printf(&c->arena, " from %s to %s", ly_str(c, v->type->layout), ly_str(c, op->res[0]->type->layout))
                    : "";
  dg_error(c, op->loc, "%s %s%s needs %d bytes of shared memory as scratch, which puts kernel '%s' over the limit: "
                       "%d bytes (%d of smem()/mbarrier() allocations + %d of scratch), at most %d",
           what, ty_str(c, v->type), layouts, M->scratch_bytes, f->name, f->smem_bytes, f->smem_static, scratch,
           227 * 1024);
  if (op->opc == OP_CONVERT) dg_note(c, op->loc, "a layout conversion goes through shared memory; a smaller tile, or "
                                                 "another shape of the operation, needs less");
}

/* ---- size limits ----
 * Each element a thread holds of a tile is its own SSA value from here to
 * the PTX, and ptxas (with LLVM's instruction selection a distant second)
 * takes more than linear time in the length of straight-line code, the
 * more so once a thread's values overflow its 255 registers: a 2^18-element
 * f32 tile over 4 warps (2048 values per thread) took 11 s, a softmax over
 * 1024 values per thread 8 s, 2^20 elements minutes. Two bounds, counted in
 * 32-bit values (a 64-bit element counts twice), keep every kernel this
 * accepts well under 10 s on a small machine: what one thread holds of one
 * tile, and what the kernel's operations read and write per thread, summed
 * over the operations (a loop body counts once, an unrolled static_range
 * once per iteration, a scalar as one value). Checked before any MLIR is
 * built, and reported at the operation responsible. */
typedef struct SizeCheck {
  Ctx *c;
  TFunc *f;
  int64_t total;
  bool failed;
} SizeCheck;

/* The 32-bit values one thread holds of v; *elems: its elements, for a tile. */
static int thread_values(const TValue *v, int warps, int *elems) {
  LinLayout lin;
  const char *why;
  DType dt = (DType)v->type->elem.dt; /* pointers count once: their offsets fold into one base */
  int wide = dt == DT_I64 || dt == DT_U64 || dt == DT_F64 ? 2 : 1;
  *elems = 0;
  if (v->type->kind == TY_SCALAR) return wide;
  if (v->type->kind != TY_TILE || !v->type->layout ||
      !ly_linear(v->type->layout, v->type->rank, v->type->shape, warps, &lin, &why))
    return 0; /* shared memory, barriers (or lowering reports the layout) */
  *elems = ly_nregs(&lin);
  return *elems * wide;
}

static void size_block(SizeCheck *sc, TBlock *b) {
  int warps = ir_block_warps(b);
  for (TOp *op = b->first; op && !sc->failed; op = op->next) {
    int n;
    for (int i = 0; i < op->nres && !sc->failed; i++) {
      int vals = thread_values(op->res[i], warps, &n);
      sc->total += vals;
      if (vals > TC_MAX_THREAD_VALUES) {
        Type *t = op->res[i]->type;
        /* a conversion passes.c inserted: an operand in the layout its user needs */
        char *what = op->opc == OP_CONVERT ? ar_printf(&sc->c->arena, "the %s operand here, in the layout %s,",
                                                       ty_str(sc->c, t), ly_str(sc->c, t->layout))
                                           : ar_printf(&sc->c->arena, "this %s tile", ty_str(sc->c, t));
        dg_error(sc->c, op->loc, "%s puts %d elements in each thread (%d warps); the limit is %d 32-bit values per "
                                 "thread and tile (%d of 64 bits): use smaller tiles or more warps",
                 what, n, warps, TC_MAX_THREAD_VALUES, TC_MAX_THREAD_VALUES / 2);
        sc->failed = true;
      }
    }
    for (int i = 0; i < op->nopnds; i++) sc->total += thread_values(op->opnds[i], warps, &n);
    if (!sc->failed && sc->total > TC_MAX_KERNEL_VALUES) {
      dg_error(sc->c, op->loc, "kernel '%s' is too large to compile: its operations read and write more than %d "
                               "32-bit values per thread in all, and this one brings the total over; use run-time "
                               "loops (range) instead of static_range, smaller tiles or more warps",
               sc->f->name, TC_MAX_KERNEL_VALUES);
      sc->failed = true;
    }
    for (int r = 0; r < op->nregions && !sc->failed; r++) size_block(sc, op->regions[r]);
  }
}

static bool check_size(Ctx *c, TFunc *f) {
  SizeCheck sc = {c, f, 0, false};
  size_block(&sc, f->body);
  return !sc.failed;
}

/* ---- kernels and the module ---- */

static void lower_kernel(Lw *L, TFunc *f) {
  Ctx *c = L->c;
  if (!check_size(c, f)) return;
  L->kf = f;
  L->warps = f->warps;
  L->coords = NULL;
  L->loc = loc_of(L, f->loc);
  MlirType *ptypes = ar_alloc(&c->arena, sizeof(MlirType) * (size_t)(f->nparams + 1));
  for (int i = 0; i < f->nparams; i++)
    ptypes[i] = f->params[i].tma ? mlirLLVMPointerTypeGet(L->mc, 0) : lw_elem_type(L, f->params[i].elem);
  bool regs_tasks = false;
  for (TOp *op = f->body->first; op; op = op->next)
    if (op->opc == OP_TASKS && op->nregions && op->regions[0]->regs) regs_tasks = true;
  if (regs_tasks && !f->maxnreg) f->maxnreg = ir_even_maxnreg(f->warps); /* setmaxnreg needs a cap at entry */
  MlirType fty = mlirLLVMFunctionTypeGet(L->vd, f->nparams, ptypes, false);
  MlirBlock entry = new_block(L, f->nparams, ptypes);
  char maxntid[64];
  snprintf(maxntid, sizeof maxntid, "array<i32: %d, 1, 1>", f->warps * 32);
  MlirNamedAttribute at[10];
  int na = 0;
  bool any_tma = false;
  for (int i = 0; i < f->nparams; i++) any_tma |= f->params[i].tma;
  if (any_tma) {
    /* TMA descriptors are passed by value (128 bytes, 64-aligned, grid constants) */
    Buf b = {0};
    buf_puts(&b, "[");
    for (int i = 0; i < f->nparams; i++)
      buf_puts(&b, f->params[i].tma ? (i ? ", {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, "
                                           "nvvm.grid_constant}"
                                         : "{llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, "
                                           "nvvm.grid_constant}")
                                     : (i ? ", {}" : "{}"));
    buf_puts(&b, "]");
    at[na++] = lw_attr(L, "arg_attrs", lw_pattr(L, b.data));
    buf_free(&b);
  }
  at[na++] = lw_attr(L, "sym_name", mlirStringAttrGet(L->mc, sref(f->name)));
  at[na++] = lw_attr(L, "function_type", mlirTypeAttrGet(fty));
  at[na++] = lw_attr(L, "nvvm.kernel", mlirUnitAttrGet(L->mc));
  at[na++] = lw_attr(L, "nvvm.maxntid", lw_pattr(L, maxntid));
  if (f->cluster[0] * f->cluster[1] * f->cluster[2] > 1) {
    char cd[64];
    snprintf(cd, sizeof cd, "array<i32: %d, %d, %d>", f->cluster[0], f->cluster[1], f->cluster[2]);
    at[na++] = lw_attr(L, "nvvm.cluster_dim", lw_pattr(L, cd));
  }
  if (f->maxnreg) {
    at[na++] = lw_attr(L, "nvvm.maxnreg", mlirIntegerAttrGet(L->i32, f->maxnreg));
    at[na++] = lw_attr(L, "nvvm.minctasm", mlirIntegerAttrGet(L->i32, 1));
  }
  MlirOperationState st = mlirOperationStateGet(sref("llvm.func"), L->loc);
  mlirOperationStateAddAttributes(&st, na, at);
  MlirRegion body = mlirRegionCreate();
  mlirRegionAppendOwnedBlock(body, entry);
  mlirOperationStateAddOwnedRegions(&st, 1, &body);
  MlirOperation fn = mlirOperationCreate(&st);
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(L->mod), fn);
  L->entry = L->blk = entry;
  /* prologue: thread ids and the shared-memory base */
  L->tid = sreg(L, "nvvm.read.ptx.sreg.tid.x");
  L->lane = lw_bin(L, "arith.andi", L->tid, lw_i32(L, 31));
  /* the warp index through redux.sync: REDUX writes a uniform register, so
   * ptxas knows the warp index -- and the task replica, its named barrier
   * and every loop bound computed from them -- is warp-uniform. Without it
   * a causal kernel's KV loop bound (which depends on the replica's first
   * query row) left the whole loop off the uniform datapath. Volatile, so
   * it stays here at the entry, where every lane of every warp is active. */
  L->warp = lw_warp_uniform(L, lw_bin(L, "arith.shrui", L->tid, lw_i32(L, 5)));
  MlirNamedAttribute g = lw_attr(L, "global_name", mlirFlatSymbolRefAttrGet(L->mc, sref("tile_smem")));
  L->smem = lw_op1(L, "llvm.mlir.addressof", 0, NULL, L->ptr3, 1, &g);
  L->scratch = lw_gep(L, L->smem, lw_i32(L, f->smem_static), L->i8, L->ptr3);
  L->elect = lw_cmpi(L, CMPI_EQ, L->tid, lw_i32(L, 0));
  L->bar_id = (MlirValue){0};
  L->replica = L->task_warp = (MlirValue){0};
  L->task_scratch = 0;
  L->tcgen05 = lw_tc_uses(f->body, false);
  L->tmem_ready = false;
  L->tmem_base = (MlirValue){0};
  /* marker: values that depend only on the thread are inserted before it */
  L->prologue_end = lw_op(L, "llvm.mlir.undef", 0, NULL, 1, &L->i32, 0, NULL);
  L->kentry = entry;
  L->kprologue = L->prologue_end;
  if (f->pdl) {
    /* programmatic dependent launch: the runtime lets this grid start while
     * the stream's previous grid finishes; every thread waits here, before
     * any memory access, until that grid's writes are visible. And the next
     * grid may launch (and wait likewise) once every CTA of this one has
     * started: it can take SMs as this grid's CTAs leave them. */
    /* inline PTX with a memory clobber, not nvvm.griddepcontrol: LLVM's
     * intrinsic is IntrNoMem, which would let loads move above the wait */
    lw_asm(L, "griddepcontrol.wait;", "~{memory}", 0, NULL, (MlirType){0}, true);
    lw_asm(L, "griddepcontrol.launch_dependents;", "~{memory}", 0, NULL, (MlirType){0}, true);
  }
  L->printbuf = (MlirValue){0};
  for (int i = 0; i < f->nparams; i++) {
    LV *lv = lw_new(L, 1);
    lv->v[0] = mlirBlockGetArgument(entry, i);
    lw_set(f->params[i].value, lv);
  }
  L->smem_max = 0;
  ((LwMod *)L)->scratch_op = NULL;
  ((LwMod *)L)->scratch_bytes = 0;
  L->scr_used = 0; /* nothing has touched the scratch at the kernel's entry */
  L->scr_unknown = L->scr_pending = false;
  L->if_depth = 0;
  L->scr_bar = (MlirOperation){0};
  L->for_iv = L->for_lb = L->for_step = (MlirValue){0};
  L->nred_done = 0;
  lower_block(L, f->body);
  /* code outside tasks uses the scratch from offset 0 (it does not run
   * while tasks do); task replicas use their own slices from offset 0 up */
  int outside = (L->smem_max + 127) & ~127;
  f->smem_bytes = f->smem_static + (outside > L->task_scratch ? outside : L->task_scratch);
  if (f->smem_bytes > 227 * 1024) smem_error(L, f);
}

/* Build the MLIR module for all kernels.  meta is the metadata text that
 * travels in the cubin as the global __tile_meta. */
bool lw_build_module(Ctx *c, TModule *m, MlirContext mc, MlirModule *out);
bool lw_build_module(Ctx *c, TModule *m, MlirContext mc, MlirModule *out) {
  LwMod M = {.L = {.c = c, .mc = mc}};
  Lw *L = &M.L;
  L->loc = mlirLocationUnknownGet(mc);
  L->i1 = mlirIntegerTypeGet(mc, 1);
  L->i8 = mlirIntegerTypeGet(mc, 8);
  L->i16 = mlirIntegerTypeGet(mc, 16);
  L->i32 = mlirIntegerTypeGet(mc, 32);
  L->i64 = mlirIntegerTypeGet(mc, 64);
  L->f16 = mlirF16TypeGet(mc);
  L->bf16 = mlirBF16TypeGet(mc);
  L->f32 = mlirF32TypeGet(mc);
  L->f64 = mlirF64TypeGet(mc);
  L->ptr1 = mlirLLVMPointerTypeGet(mc, 1);
  L->ptr3 = mlirLLVMPointerTypeGet(mc, 3);
  L->vd = mlirLLVMVoidTypeGet(mc);
  L->mod = mlirModuleCreateEmpty(L->loc);
  lw_add_global(L, "tile_smem", mlirLLVMArrayTypeGet(L->i8, 0), 3, (MlirAttribute){0}, false, 16);
  for (int k = 0; k < m->kernels.len && !c->ice; k++) lower_kernel(L, m->kernels.data[k]);
  /* metadata (after lowering: it needs the shared-memory size) */
  Buf meta = {0};
  md_write(c, m, &meta);
  buf_put(&meta, "", 1); /* keep the NUL inside the global */
  buf_free(&c->meta);
  md_write(c, m, &c->meta);
  MlirAttribute s = mlirStringAttrGet(mc, mlirStringRefCreate(meta.data, meta.len));
  lw_add_global(L, "__tile_meta", mlirLLVMArrayTypeGet(L->i8, (unsigned)meta.len), 1, s, true, 1);
  buf_free(&meta);
  *out = L->mod;
  return !c->ice && c->nerrors == 0;
}

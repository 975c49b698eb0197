/* lower_reduce.c - reductions: sum, max and min over an axis of a tile (or
 * all of it), and any()/all().
 *
 * A reduction combines the registers of each thread, then the lanes of each
 * warp (butterfly shuffles), then the warps along the axis through scratch
 * shared memory: each warp's partials written, a barrier, every thread
 * reading the partials of its output elements. Two things keep the barriers
 * few on row-wise kernels, whose rows each take a few reductions:
 *   - the scratch goes where no thread may still read (lw_scr_claim), so
 *     no barrier before the writes where the bytes are free;
 *   - reductions that do not depend on each other share one exchange: when
 *     one is lowered, the reductions after it in its block whose operands
 *     are already computed are lowered with it (mates), their partials
 *     written beside its own before the one barrier (layernorm_bwd's two
 *     sums of a row: one barrier, not two). */
#include "lower.h"
#include <string.h>

static MlirValue combine(Lw *L, RedKind k, DType dt, MlirValue a, MlirValue b) {
  bool fl = ty_is_float(dt), un = dt == DT_U8 || dt == DT_U16 || dt == DT_U32 || dt == DT_U64;
  switch (k) {
  case RED_SUM: return lw_bin(L, fl ? "arith.addf" : "arith.addi", a, b);
  case RED_MAX: return lw_bin(L, fl ? "arith.maximumf" : un ? "arith.maxui" : "arith.maxsi", a, b);
  default: return lw_bin(L, fl ? "arith.minimumf" : un ? "arith.minui" : "arith.minsi", a, b);
  }
}

static bool pure_basis(const int *b, int rank, int *dim) {
  int nz = 0;
  for (int d = 0; d < rank; d++)
    if (b[d]) {
      nz++;
      *dim = d;
    }
  return nz <= 1;
}

/* any()/all(): OR/AND of this thread's elements, then one barrier
 * reduction (bar.red.or/and.pred) over the threads that run this code: the
 * task replica's named barrier inside a task, else barrier 0 (the CTA).
 * Duplicated elements (broadcast layouts) do not change an OR or an AND.
 * The result goes through redux.sync (a uniform register) so that ptxas
 * knows a branch on it is warp-uniform (no BSSY/BSYNC around it). */
static bool lw_vote(Lw *L, TOp *op) {
  TValue *x = op->opnds[0];
  bool any = op->pred == RED_ANY;
  LV *src = lw_get(L, x);
  MlirValue v = src->v[0];
  for (int i = 1; i < src->n; i++) v = lw_bin(L, any ? "arith.ori" : "arith.andi", v, src->v[i]);
  MlirValue w = lw_cast(L, "arith.extui", v, L->i32), r;
  if (mlirValueIsNull(L->bar_id)) {
    r = lw_asm(L, any ? "{ .reg .pred p, q; setp.ne.b32 p, $1, 0; bar.red.or.pred q, 0, p; selp.b32 $0, 1, 0, q; redux.sync.min.u32 $0, $0, -1; }"
                      : "{ .reg .pred p, q; setp.ne.b32 p, $1, 0; bar.red.and.pred q, 0, p; selp.b32 $0, 1, 0, q; redux.sync.min.u32 $0, $0, -1; }",
               "=r,r", 1, &w, L->i32, true);
  } else {
    MlirValue args[3] = {w, L->bar_id, lw_i32(L, L->bar_threads)};
    r = lw_asm(L, any ? "{ .reg .pred p, q; setp.ne.b32 p, $1, 0; bar.red.or.pred q, $2, $3, p; selp.b32 $0, 1, 0, q; redux.sync.min.u32 $0, $0, -1; }"
                      : "{ .reg .pred p, q; setp.ne.b32 p, $1, 0; bar.red.and.pred q, $2, $3, p; selp.b32 $0, 1, 0, q; redux.sync.min.u32 $0, $0, -1; }",
               "=r,r,r,r", 3, args, L->i32, true);
  }
  LV *out = lw_new(L, 1);
  out->v[0] = lw_cmpi(L, CMPI_NE, r, lw_i32(L, 0));
  lw_set(op->res[0], out);
  return true;
}

/* One reduction on its way: its layout, its partials (acc[o], one an
 * output register; rep[o], an input register of each), and for the step
 * across warps, where each partial goes in its scratch (flat[o] + the
 * warp's index along the axis, in elements from `off` bytes in). */
typedef struct Red {
  TOp *op;
  LinLayout S;
  int axis;
  RedKind kind;
  DType dt;
  MlirType et;
  int eb, nout, wa, lane_dup, warp_dup;
  MlirValue *acc, *flat, widx;
  int *rep;
  int64_t bytes; /* scratch: 0 when the axis has no warp bits */
  int off;       /* its place, bytes into the scratch ... */
  MlirValue dyn; /* ... plus these elements at run time (null: none) */
} Red;

/* The warp bits along op's axis (0: the reduction stays in each warp). */
static int warp_axis_bits(Lw *L, TOp *op, LinLayout *S) {
  int wax = 0;
  for (int i = 0; i < S->nwarp; i++) {
    int dim = -1;
    if (pure_basis(S->warp[i], S->rank, &dim) && dim == op->axis) wax |= 1 << i;
  }
  (void)L;
  return wax;
}

/* Inside each thread, then across lanes; and the scratch indices. */
static bool red_local(Lw *L, TOp *op, Red *R) {
  memset(R, 0, sizeof *R);
  TValue *x = op->opnds[0];
  R->op = op;
  R->axis = op->axis;
  R->kind = (RedKind)op->pred;
  R->dt = (DType)x->type->elem.dt;
  R->et = lw_elem_type(L, x->type->elem);
  R->eb = ty_dtype_bytes(R->dt);
  LinLayout *S = &R->S;
  if (!lw_linear(L, x, S)) return false;
  LV *src = lw_get(L, x);
  int axis = R->axis;
  /* 1. inside each thread */
  int amask = 0; /* register bits along the axis */
  for (int i = 0; i < S->nreg; i++) {
    int dim = -1;
    if (!pure_basis(S->reg[i], S->rank, &dim)) {
      dg_ice(L->c, op->loc, "reduction over a layout with mixed register bases");
      return false;
    }
    if (dim == axis) amask |= 1 << i;
  }
  int nin = ly_nregs(S);
  int nout = nin >> __builtin_popcount((unsigned)amask);
  R->nout = nout;
  R->acc = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)nout);
  R->rep = ar_alloc(&L->c->arena, sizeof(int) * (size_t)nout);
  /* One chain (the default), or a balanced tree with --tree-reductions
   * (log2 depth: a row max of 64 elements is 6 dependent steps, not 63;
   * measured 2% faster in JFA's D = 64 loop, 1.5-3% slower at D = 128,
   * where ptxas interleaves the chains with the exp2s better). */
  int k = 0, nax = 1 << __builtin_popcount((unsigned)amask);
  MlirValue *t = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)nax);
  for (int i = 0; i < nin; i++) {
    if (i & amask) continue;
    int n = 0;
    for (int j = 0; j < nin; j++)
      if (!(j & ~amask)) t[n++] = src->v[i | j];
    if (!L->c->opts.tree_reductions) {
      for (int j = 1; j < n; j++) t[0] = combine(L, R->kind, R->dt, t[0], t[j]);
    } else {
      for (; n > 1; n /= 2) /* n is a power of two: pairs (0, 1), (2, 3), ... into 0, 1, ... */
        for (int j = 0; j < n / 2; j++) t[j] = combine(L, R->kind, R->dt, t[2 * j], t[2 * j + 1]);
    }
    R->acc[k] = t[0];
    R->rep[k] = i;
    k++;
  }
  /* 2. across lanes */
  for (int i = 0; i < S->nlane; i++) {
    int dim = -1;
    if (!pure_basis(S->lane[i], S->rank, &dim)) {
      dg_ice(L->c, op->loc, "reduction over a layout with mixed lane bases");
      return false;
    }
    if (dim == axis) {
      for (int o = 0; o < nout; o++)
        R->acc[o] = combine(L, R->kind, R->dt, R->acc[o], lw_shfl_xor(L, R->acc[o], R->dt, 1 << i));
      R->lane_dup |= 1 << i;
    } else if (dim < 0) {
      R->lane_dup |= 1 << i;
    }
  }
  /* 3 (the indices). across warps, through shared memory */
  int wax = 0;
  for (int i = 0; i < S->nwarp; i++) {
    int dim = -1;
    if (!pure_basis(S->warp[i], S->rank, &dim)) {
      dg_ice(L->c, op->loc, "reduction over a layout with mixed warp bases");
      return false;
    }
    if (dim == axis) wax |= 1 << i;
    else if (dim < 0) R->warp_dup |= 1 << i;
  }
  if (!wax) return true;
  MlirValue tc[TC_MAX_RANK];
  lw_thread_coord(L, S, tc);
  /* output element coordinates (axis dropped) and their flat index */
  int orank = S->rank - 1, oshape[TC_MAX_RANK];
  int64_t ostride[TC_MAX_RANK];
  for (int d = 0, e = 0; d < S->rank; d++)
    if (d != axis) oshape[e++] = S->shape[d];
  int64_t s = 1;
  for (int d = orank - 1; d >= 0; d--) {
    ostride[d] = s;
    s *= oshape[d];
  }
  R->wa = 1 << __builtin_popcount((unsigned)wax);
  R->bytes = s * R->wa * R->eb;
  /* this thread's index among the warps along the axis */
  R->widx = lw_i32(L, 0);
  for (int i = 0, j = 0; i < S->nwarp; i++)
    if (wax >> i & 1) {
      MlirValue bit = lw_bin(L, "arith.andi", lw_bin(L, "arith.shrui", L->warp, lw_i32(L, i)), lw_i32(L, 1));
      R->widx = lw_bin(L, "arith.ori", R->widx, lw_bin(L, "arith.shli", bit, lw_i32(L, j)));
      j++;
    }
  R->flat = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)nout);
  for (int o = 0; o < nout; o++) {
    int rc[TC_MAX_RANK];
    ly_reg_coord(S, R->rep[o], rc);
    MlirValue f = lw_i32(L, 0);
    for (int d = 0, e = 0; d < S->rank; d++) {
      if (d == axis) continue;
      MlirValue cd = lw_bin(L, "arith.xori", tc[d], lw_i32(L, rc[d]));
      f = lw_bin(L, "arith.addi", f, lw_bin(L, "arith.muli", cd, lw_i32(L, ostride[e])));
      e++;
    }
    R->flat[o] = lw_bin(L, "arith.muli", f, lw_i32(L, R->wa));
  }
  return true;
}

static MlirValue red_slot(Lw *L, Red *R, int o, MlirValue w) {
  MlirValue off = lw_bin(L, "arith.addi", lw_bin(L, "arith.addi", R->flat[o], w), lw_i32(L, R->off / R->eb));
  if (!mlirValueIsNull(R->dyn)) off = lw_bin(L, "arith.addi", off, R->dyn);
  return lw_gep(L, L->scratch, off, R->et, L->ptr3);
}

/* One copy of each warp's partials (the lanes and warps that hold
 * duplicates write nothing). */
static void red_write(Lw *L, Red *R) {
  MlirValue pred = lw_cmpi(L, CMPI_EQ, lw_bin(L, "arith.andi", L->lane, lw_i32(L, R->lane_dup)), lw_i32(L, 0));
  if (R->warp_dup)
    pred = lw_bin(L, "arith.andi", pred,
                  lw_cmpi(L, CMPI_EQ, lw_bin(L, "arith.andi", L->warp, lw_i32(L, R->warp_dup)), lw_i32(L, 0)));
  IfScope sc;
  lw_begin_if(L, &sc);
  for (int o = 0; o < R->nout; o++) lw_store(L, R->acc[o], red_slot(L, R, o, R->widx), R->eb);
  lw_end_if(L, &sc, pred);
}

static void red_read(Lw *L, Red *R) {
  for (int o = 0; o < R->nout; o++) {
    MlirValue v = {0};
    for (int w = 0; w < R->wa; w++) {
      MlirValue x1 = lw_load(L, red_slot(L, R, o, lw_i32(L, w)), R->et, R->eb);
      v = mlirValueIsNull(v) ? x1 : combine(L, R->kind, R->dt, v, x1);
    }
    R->acc[o] = v;
  }
}

/* The outputs, in the result layout's register order. */
static bool red_place(Lw *L, Red *R) {
  TValue *r = R->op->res[0];
  if (r->type->kind != TY_TILE) {
    LV *out = lw_new(L, 1);
    out->v[0] = R->acc[0];
    lw_set(r, out);
    return true;
  }
  LinLayout D;
  if (!lw_linear(L, r, &D)) return false;
  int nd = ly_nregs(&D);
  if (nd != R->nout) {
    dg_ice(L->c, R->op->loc, "reduction result has %d registers, expected %d", nd, R->nout);
    return false;
  }
  LV *out = lw_new(L, nd);
  for (int o = 0; o < R->nout; o++) {
    int rc[TC_MAX_RANK], oc[TC_MAX_RANK] = {0};
    ly_reg_coord(&R->S, R->rep[o], rc);
    for (int d = 0, e = 0; d < R->S.rank; d++)
      if (d != R->axis) oc[e++] = rc[d];
    int idx = ly_solve_reg(&D, oc);
    if (idx < 0) {
      dg_ice(L->c, R->op->loc, "reduction result layout does not match its input");
      return false;
    }
    out->v[idx] = R->acc[o];
  }
  lw_set(r, out);
  return true;
}

/* Is v computed before op (op's block, or a block around it)? */
static bool defined_before(const TValue *v, const TOp *op) {
  if (!v->def) return true; /* an argument of this block or of one around it */
  if (v->def->block != op->block) return true; /* (SSA: a block around op's) */
  for (const TOp *p = op->prev; p; p = p->prev)
    if (p == v->def) return true;
  return false;
}

enum { RED_MATES = 3, RED_LOOKAHEAD = 48 };

/* Reductions after op in its block, across warps as op is, whose operands
 * are computed before op: lowered with op, one exchange for all. */
static int find_mates(Lw *L, TOp *op, TOp **mates) {
  int n = 0, seen = 0;
  for (TOp *q = op->next; q && n < RED_MATES && seen < RED_LOOKAHEAD; q = q->next, seen++) {
    if (q->opc != OP_REDUCE || q->pred == RED_ANY || q->pred == RED_ALL) continue;
    if (!defined_before(q->opnds[0], op)) continue;
    LinLayout S;
    if (!lw_linear(L, q->opnds[0], &S) || !warp_axis_bits(L, q, &S)) continue;
    mates[n++] = q;
  }
  return n;
}

bool lw_reduce(Lw *L, TOp *op) {
  if (op->pred == RED_ANY || op->pred == RED_ALL) return lw_vote(L, op);
  for (int i = 0; i < L->nred_done; i++) /* lowered already, with an earlier reduction */
    if (L->red_done[i] == op) {
      L->red_done[i] = L->red_done[--L->nred_done];
      return true;
    }
  Red R[1 + RED_MATES];
  if (!red_local(L, op, &R[0])) return false;
  int n = 1;
  TOp *mates[RED_MATES];
  if (R[0].bytes && L->nred_done + RED_MATES <= LW_RED_DONE) {
    int nm = find_mates(L, op, mates);
    for (int i = 0; i < nm; i++) {
      if (!red_local(L, mates[i], &R[n])) return false;
      L->red_done[L->nred_done++] = mates[i];
      n++;
    }
  }
  /* 3. across warps: every partial written, one barrier, all read */
  int total = 0;
  for (int i = 0; i < n; i++) {
    R[i].off = total;
    total += (int)((R[i].bytes + 15) & ~15);
  }
  if (total) {
    ScrPlace p = lw_scr_claim(L, total);
    if (p.base + p.extent > L->smem_max) L->smem_max = p.base + p.extent;
    for (int i = 0; i < n; i++) {
      R[i].off += p.base;
      if (!mlirValueIsNull(p.dyn) && R[i].bytes)
        R[i].dyn = lw_bin(L, "arith.divui", p.dyn, lw_i32(L, R[i].eb)); /* (a multiple of 16 bytes) */
    }
    for (int i = 0; i < n; i++)
      if (R[i].bytes) red_write(L, &R[i]);
    lw_barrier(L);
    for (int i = 0; i < n; i++)
      if (R[i].bytes) red_read(L, &R[i]);
    lw_scr_done(L, p);
  }
  for (int i = 0; i < n; i++)
    if (!red_place(L, &R[i])) return false;
  return true;
}

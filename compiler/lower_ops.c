/* lower_ops.c - the layout-dependent part of lowering: thread coordinates,
 * register gathers (broadcast, expand_dims, trans, cheap conversions),
 * conversions through shared memory and inside a warp, and dot on
 * mma.sync (reductions: lower_reduce.c).
 * All of it works on linear layouts (layout.c), so any layout pair works. */
#include "lower.h"
#include <stdio.h>
#include <string.h>

struct TCoord {
  int rank, nlane, nwarp;
  int lane[5][TC_MAX_RANK], warp[6][TC_MAX_RANK];
  MlirValue coord[TC_MAX_RANK];
  TCoord *next;
};

static int ilog2(int x) {
  int r = 0;
  while ((1 << r) < x) r++;
  return r;
}

static bool same_thread_bases(const TCoord *t, const LinLayout *l) {
  if (t->rank != l->rank || t->nlane != l->nlane || t->nwarp != l->nwarp) return false;
  return !memcmp(t->lane, l->lane, sizeof t->lane[0] * (size_t)l->nlane) &&
         !memcmp(t->warp, l->warp, sizeof t->warp[0] * (size_t)l->nwarp);
}

/* Contribution of one id bit: ((id >> bit) & 1) * basis, for a power-of-two basis. */
static MlirValue bit_term(Lw *L, MlirValue id, int bit, int basis) {
  MlirValue m = lw_bin(L, "arith.andi", id, lw_i32(L, 1 << bit));
  int sh = ilog2(basis) - bit;
  if (sh > 0) return lw_bin(L, "arith.shli", m, lw_i32(L, sh));
  if (sh < 0) return lw_bin(L, "arith.shrui", m, lw_i32(L, -sh));
  return m;
}

/* The coordinate (per dimension) of a thread's register 0, i.e. the XOR of
 * the lane and warp bases selected by this thread's lane and warp ids.
 * Computed once per layout, in the kernel prologue. */
void lw_thread_coord(Lw *L, const LinLayout *lin, MlirValue *coord) {
  for (TCoord *t = L->coords; t; t = t->next)
    if (same_thread_bases(t, lin)) {
      memcpy(coord, t->coord, sizeof t->coord);
      return;
    }
  TCoord *t = ar_alloc(&L->c->arena, sizeof *t);
  t->rank = lin->rank;
  t->nlane = lin->nlane;
  t->nwarp = lin->nwarp;
  memcpy(t->lane, lin->lane, sizeof t->lane);
  memcpy(t->warp, lin->warp, sizeof t->warp);
  bool saved = L->in_prologue;
  MlirLocation sl = L->loc;
  L->in_prologue = true;
  L->loc = mlirLocationUnknownGet(L->mc);
  for (int d = 0; d < lin->rank; d++) {
    MlirValue acc = {0};
    for (int k = 0; k < 2; k++) {
      int n = k ? lin->nwarp : lin->nlane;
      MlirValue id = k ? L->warp : L->lane;
      for (int i = 0; i < n; i++) {
        int b = k ? lin->warp[i][d] : lin->lane[i][d];
        if (!b) continue;
        MlirValue term = bit_term(L, id, i, b);
        acc = mlirValueIsNull(acc) ? term : lw_bin(L, "arith.xori", acc, term);
      }
    }
    t->coord[d] = mlirValueIsNull(acc) ? lw_i32(L, 0) : acc;
  }
  L->in_prologue = saved;
  L->loc = sl;
  t->next = L->coords;
  L->coords = t;
  memcpy(coord, t->coord, sizeof t->coord);
}

/* Bits that lanes/warps vs registers contribute along dimension d. */
static int thread_bits(const LinLayout *l, int d) {
  int m = 0;
  for (int i = 0; i < l->nlane; i++) m |= l->lane[i][d];
  for (int i = 0; i < l->nwarp; i++) m |= l->warp[i][d];
  return m;
}

MlirValue lw_canonical_pred(Lw *L, const LinLayout *lin) {
  int lm = 0, wm = 0;
  for (int i = 0; i < lin->nlane; i++) {
    bool z = true;
    for (int d = 0; d < lin->rank; d++) z &= lin->lane[i][d] == 0;
    if (z) lm |= 1 << i;
  }
  for (int i = 0; i < lin->nwarp; i++) {
    bool z = true;
    for (int d = 0; d < lin->rank; d++) z &= lin->warp[i][d] == 0;
    if (z) wm |= 1 << i;
  }
  if (!lm && !wm) return (MlirValue){0};
  MlirValue p = (MlirValue){0};
  if (lm) p = lw_cmpi(L, CMPI_EQ, lw_bin(L, "arith.andi", L->lane, lw_i32(L, lm)), lw_i32(L, 0));
  if (wm) {
    MlirValue q = lw_cmpi(L, CMPI_EQ, lw_bin(L, "arith.andi", L->warp, lw_i32(L, wm)), lw_i32(L, 0));
    p = mlirValueIsNull(p) ? q : lw_bin(L, "arith.andi", p, q);
  }
  return p;
}

/* ---- coordinate maps between two layouts ---- */

enum { MAP_ID, MAP_PROJECT, MAP_DROP, MAP_TRANS, MAP_OFFSET };

/* Map a destination coordinate to the source coordinate it reads. */
static void map_coord(int kind, const int *arg, int drank, const int *dc, int *sc) {
  memset(sc, 0, sizeof(int) * TC_MAX_RANK);
  switch (kind) {
  case MAP_ID: memcpy(sc, dc, sizeof(int) * TC_MAX_RANK); break;
  case MAP_PROJECT:
    for (int d = 0; d < drank; d++) sc[d] = arg[d] ? 0 : dc[d];
    break;
  case MAP_DROP:
    for (int d = 0, e = 0; d < drank; d++)
      if (d != arg[0]) sc[e++] = dc[d];
    break;
  case MAP_TRANS:
    sc[0] = dc[1];
    sc[1] = dc[0];
    break;
  case MAP_OFFSET: /* arg = (dim, offset); the offset applies to whole coordinates only */
    memcpy(sc, dc, sizeof(int) * TC_MAX_RANK);
    break;
  }
}

bool lw_gather(Lw *L, LV *src, const LinLayout *S, const LinLayout *D, int kind, const int *arg, LV *out) {
  int sc[TC_MAX_RANK];
  if (S->nwarp != D->nwarp || S->nlane != D->nlane) return false;
  for (int i = 0; i < D->nlane; i++) {
    map_coord(kind, arg, D->rank, D->lane[i], sc);
    if (memcmp(sc, S->lane[i], sizeof(int) * (size_t)S->rank)) return false;
  }
  for (int i = 0; i < D->nwarp; i++) {
    map_coord(kind, arg, D->rank, D->warp[i], sc);
    if (memcmp(sc, S->warp[i], sizeof(int) * (size_t)S->rank)) return false;
  }
  int n = ly_nregs(D);
  int *idx = ar_alloc(&L->c->arena, sizeof(int) * (size_t)n);
  for (int r = 0; r < n; r++) {
    int dc[TC_MAX_RANK];
    ly_reg_coord(D, r, dc);
    map_coord(kind, arg, D->rank, dc, sc);
    if (kind == MAP_OFFSET) sc[arg[0]] += arg[1]; /* aligned: the bits do not overlap */
    idx[r] = ly_solve_reg(S, sc);
    if (idx[r] < 0 || idx[r] >= src->n) return false;
  }
  out->n = n;
  out->v = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)n);
  for (int r = 0; r < n; r++) out->v[r] = src->v[idx[r]];
  return true;
}

/* ---- shared memory ---- */

typedef struct SmemTile {
  int rank, shape[TC_MAX_RANK];
  int64_t stride[TC_MAX_RANK];
  int eb;
  MlirType st; /* storage type */
  int64_t bytes;
} SmemTile;

static void smem_tile(Lw *L, SmemTile *t, const LinLayout *S, Elem e) {
  memset(t, 0, sizeof *t);
  t->rank = S->rank;
  memcpy(t->shape, S->shape, sizeof t->shape);
  if (e.dt == DT_BOOL) {
    t->st = L->i8;
    t->eb = 1;
  } else if (e.dt == DT_PTR) {
    t->st = L->i64;
    t->eb = 8;
  } else {
    t->st = lw_elem_type(L, e);
    t->eb = ty_dtype_bytes((DType)e.dt);
  }
  int64_t s = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    t->stride[d] = s;
    int64_t row = t->shape[d];
    /* pad rows of 2-D+ tiles by 16 bytes to spread shared-memory banks */
    if (d == t->rank - 1 && t->rank >= 2 && row * t->eb >= 64) row += 16 / t->eb;
    s *= row;
  }
  t->bytes = s * t->eb;
  if (t->bytes > L->smem_max) L->smem_max = (int)t->bytes;
}

static MlirValue to_store(Lw *L, MlirValue v, Elem e) {
  if (e.dt == DT_BOOL) return lw_cast(L, "arith.extui", v, L->i8);
  if (e.dt == DT_PTR) return lw_cast(L, "llvm.ptrtoint", v, L->i64);
  return v;
}
static MlirValue from_store(Lw *L, MlirValue v, Elem e) {
  if (e.dt == DT_BOOL) return lw_cmpi(L, CMPI_NE, v, lw_int(L, L->i8, 0));
  if (e.dt == DT_PTR) return lw_cast(L, "llvm.inttoptr", v, L->ptr1);
  return v;
}

/* Offset (elements) of coordinate thread ^ reg, per dimension. */
static MlirValue offset_of(Lw *L, const SmemTile *t, const MlirValue *tc, const int *rc, const int *tmask) {
  MlirValue acc = {0};
  int64_t cst = 0;
  for (int d = 0; d < t->rank; d++) {
    MlirValue c;
    if ((tmask[d] & rc[d]) == 0) { /* disjoint bits: xor == add */
      cst += (int64_t)rc[d] * t->stride[d];
      c = tc[d];
    } else {
      c = lw_bin(L, "arith.xori", tc[d], lw_i32(L, rc[d]));
    }
    MlirValue term = t->stride[d] == 1 ? c : lw_bin(L, "arith.muli", c, lw_i32(L, t->stride[d]));
    acc = mlirValueIsNull(acc) ? term : lw_bin(L, "arith.addi", acc, term);
  }
  if (mlirValueIsNull(acc)) return lw_i32(L, cst);
  return cst ? lw_bin(L, "arith.addi", acc, lw_i32(L, cst)) : acc;
}

static MlirValue smem_addr(Lw *L, const SmemTile *t, MlirValue off) {
  return lw_gep(L, L->scratch, off, t->st, L->ptr3);
}

/* Registers [r, r+vec) hold consecutive elements along the last dimension,
 * and the thread part keeps vector alignment: the vector width usable. */
static int vec_width(const LinLayout *l, int eb) {
  int last = l->rank - 1, k = 0;
  while (k < l->nreg) {
    bool unit = true;
    for (int d = 0; d < l->rank; d++) unit &= l->reg[k][d] == (d == last ? 1 << k : 0);
    if (!unit) break;
    k++;
  }
  int v = 1 << k;
  while (v > 1 && (v * eb > 16 || (thread_bits(l, last) & (v - 1)))) v /= 2;
  return v;
}

/* Begin/end a region executed only where `pred` holds (no results). */
void lw_begin_if(Lw *L, IfScope *s) {
  L->if_depth++;
  s->saved = L->blk;
  s->body = mlirBlockCreate(0, NULL, NULL);
  L->blk = s->body;
}

void lw_end_if(Lw *L, IfScope *s, MlirValue pred) {
  L->if_depth--;
  lw_op(L, "scf.yield", 0, NULL, 0, NULL, 0, NULL);
  L->blk = s->saved;
  MlirOperationState st = mlirOperationStateGet(mlirStringRefCreateFromCString("scf.if"), L->loc);
  mlirOperationStateAddOperands(&st, 1, &pred);
  MlirRegion r[2] = {mlirRegionCreate(), mlirRegionCreate()};
  mlirRegionAppendOwnedBlock(r[0], s->body);
  MlirBlock eb = mlirBlockCreate(0, NULL, NULL);
  mlirRegionAppendOwnedBlock(r[1], eb);
  MlirBlock saved = L->blk;
  L->blk = eb;
  lw_op(L, "scf.yield", 0, NULL, 0, NULL, 0, NULL);
  L->blk = saved;
  mlirOperationStateAddOwnedRegions(&st, 2, r);
  mlirBlockAppendOwnedOperation(L->blk, mlirOperationCreate(&st));
}

/* Write a tile's registers to shared memory (one copy of each element),
 * barrier, and read back the registers of layout D, where D's element at
 * coordinate c comes from the source at map(c). */
static LV *smem_map(Lw *L, LV *src, const LinLayout *S, const LinLayout *D, Elem e, int kind, const int *arg) {
  SmemTile t;
  smem_tile(L, &t, S, e);
  MlirValue tcs[TC_MAX_RANK], tcd[TC_MAX_RANK];
  lw_thread_coord(L, S, tcs);
  lw_thread_coord(L, D, tcd);
  int tms[TC_MAX_RANK], tmd[TC_MAX_RANK];
  for (int d = 0; d < TC_MAX_RANK; d++) {
    tms[d] = d < S->rank ? thread_bits(S, d) : 0;
    tmd[d] = 0;
  }
  lw_barrier(L);
  /* writes */
  MlirValue cp = lw_canonical_pred(L, S);
  IfScope sc;
  if (!mlirValueIsNull(cp)) lw_begin_if(L, &sc);
  int vw = vec_width(S, t.eb);
  int n = ly_nregs(S);
  for (int r = 0; r < n; r += vw) {
    int rc[TC_MAX_RANK];
    ly_reg_coord(S, r, rc);
    MlirValue addr = smem_addr(L, &t, offset_of(L, &t, tcs, rc, tms));
    if (vw == 1) {
      lw_store(L, to_store(L, src->v[r], e), addr, t.eb);
    } else {
      MlirValue el[16];
      for (int j = 0; j < vw; j++) el[j] = to_store(L, src->v[r + j], e);
      MlirType vt = lw_vec_type(t.st, vw);
      lw_store(L, lw_vec_build(L, vt, vw, el), addr, vw * t.eb);
    }
  }
  if (!mlirValueIsNull(cp)) lw_end_if(L, &sc, cp);
  lw_barrier(L);
  /* reads: map the destination thread coordinate into the source space */
  MlirValue mtc[TC_MAX_RANK];
  int zero[TC_MAX_RANK] = {0};
  (void)zero;
  for (int d = 0; d < TC_MAX_RANK; d++) mtc[d] = lw_i32(L, 0);
  switch (kind) {
  case MAP_ID: for (int d = 0; d < D->rank; d++) mtc[d] = tcd[d]; break;
  case MAP_PROJECT:
    for (int d = 0; d < D->rank; d++) mtc[d] = arg[d] ? lw_i32(L, 0) : tcd[d];
    break;
  case MAP_DROP:
    for (int d = 0, k = 0; d < D->rank; d++)
      if (d != arg[0]) mtc[k++] = tcd[d];
    break;
  case MAP_TRANS: mtc[0] = tcd[1]; mtc[1] = tcd[0]; break;
  }
  int dmask[TC_MAX_RANK], mm[TC_MAX_RANK];
  for (int d = 0; d < TC_MAX_RANK; d++) dmask[d] = d < D->rank ? thread_bits(D, d) : 0;
  map_coord(kind, arg, D->rank, dmask, mm);
  for (int d = 0; d < TC_MAX_RANK; d++) tmd[d] = mm[d];
  int nd = ly_nregs(D);
  LV *out = lw_new(L, nd);
  int rw = kind == MAP_ID ? vec_width(D, t.eb) : 1;
  for (int r = 0; r < nd; r += rw) {
    int rc[TC_MAX_RANK], mrc[TC_MAX_RANK];
    ly_reg_coord(D, r, rc);
    map_coord(kind, arg, D->rank, rc, mrc);
    MlirValue addr = smem_addr(L, &t, offset_of(L, &t, mtc, mrc, tmd));
    if (rw == 1) {
      out->v[r] = from_store(L, lw_load(L, addr, t.st, t.eb), e);
    } else {
      MlirType vt = lw_vec_type(t.st, rw);
      MlirValue v = lw_load(L, addr, vt, rw * t.eb);
      for (int j = 0; j < rw; j++) out->v[r + j] = from_store(L, lw_vec_extract(L, v, j, t.st), e);
    }
  }
  return out;
}

LV *lw_smem_convert(Lw *L, LV *src, const LinLayout *S, const LinLayout *D, Elem e) {
  return smem_map(L, src, S, D, e, MAP_ID, NULL);
}

static LV *warp_swap(Lw *L, LV *src, const LinLayout *S, const LinLayout *D, Elem e);

/* arange, expand_dims, broadcast, trans, convert_layout */
bool lw_shape_op(Lw *L, TOp *op) {
  TValue *r = op->res[0];
  LinLayout D;
  if (!lw_linear(L, r, &D)) return false;
  if (op->opc == OP_ARANGE) {
    MlirValue tc[TC_MAX_RANK];
    lw_thread_coord(L, &D, tc);
    int tm = thread_bits(&D, 0);
    int n = ly_nregs(&D);
    LV *out = lw_new(L, n);
    for (int i = 0; i < n; i++) {
      int rc[TC_MAX_RANK];
      ly_reg_coord(&D, i, rc);
      if ((tm & rc[0]) == 0) out->v[i] = lw_bin(L, "arith.addi", tc[0], lw_i32(L, rc[0] + op->ival));
      else out->v[i] = lw_bin(L, "arith.addi", lw_bin(L, "arith.xori", tc[0], lw_i32(L, rc[0])), lw_i32(L, op->ival));
    }
    lw_set(r, out);
    return true;
  }
  TValue *x = op->opnds[0];
  LV *src = lw_get(L, x);
  if (x->type->kind != TY_TILE) { /* expand_dims of a scalar is a splat */
    int n = ly_nregs(&D);
    LV *out = lw_new(L, n);
    for (int i = 0; i < n; i++) out->v[i] = src->v[0];
    lw_set(r, out);
    return true;
  }
  LinLayout S;
  if (!lw_linear(L, x, &S)) return false;
  int kind = MAP_ID, arg[TC_MAX_RANK] = {0};
  switch (op->opc) {
  case OP_EXPAND_DIMS: kind = MAP_DROP; arg[0] = op->axis; break;
  case OP_BROADCAST:
    kind = MAP_PROJECT;
    for (int d = 0; d < r->type->rank; d++) arg[d] = x->type->shape[d] == 1 && r->type->shape[d] != 1;
    break;
  case OP_TRANS: kind = MAP_TRANS; break;
  case OP_SLICE:
    kind = MAP_OFFSET;
    arg[0] = op->axis;
    arg[1] = (int)op->ival;
    break;
  default: break;
  }
  LV *out = lw_new(L, 0);
  if (!lw_gather(L, src, &S, &D, kind, arg, out)) {
    if (kind == MAP_OFFSET) {
      dg_error(L->c, op->loc, "this slice of %s does not line up with the tile's registers (slice along a dimension "
                              "whose layout repeats in registers, e.g. the columns of a wgmma accumulator)",
               ty_str(L->c, x->type));
      return false;
    }
    LV *w = kind == MAP_ID ? warp_swap(L, src, &S, &D, x->type->elem) : NULL;
    out = w ? w : smem_map(L, src, &S, &D, x->type->elem, kind, arg);
  }
  lw_set(r, out);
  return true;
}

/* ---- warp shuffles (here and lower_reduce.c) ---- */

static MlirValue shfl32(Lw *L, MlirValue v, int off) {
  MlirNamedAttribute at = lw_attr(L, "kind", lw_pattr(L, "#nvvm<shfl_kind bfly>"));
  MlirValue ops[4] = {lw_i32(L, -1), v, lw_i32(L, off), lw_i32(L, 31)};
  return lw_op1(L, "nvvm.shfl.sync", 4, ops, mlirValueGetType(v), 1, &at);
}

/* Butterfly shuffle of any scalar type. */
MlirValue lw_shfl_xor(Lw *L, MlirValue v, DType dt, int off) {
  MlirType t = mlirValueGetType(v);
  switch (dt) {
  case DT_F32: case DT_I32: case DT_U32: return shfl32(L, v, off);
  case DT_F16: case DT_BF16:
    return lw_cast(L, "arith.truncf", shfl32(L, lw_cast(L, "arith.extf", v, L->f32), off), t);
  case DT_I8: case DT_I16: return lw_cast(L, "arith.trunci", shfl32(L, lw_cast(L, "arith.extsi", v, L->i32), off), t);
  case DT_U8: case DT_U16: case DT_BOOL:
    return lw_cast(L, "arith.trunci", shfl32(L, lw_cast(L, "arith.extui", v, L->i32), off), t);
  default: { /* 64-bit: two halves */
    MlirType v2 = lw_vec_type(L->i32, 2);
    MlirValue w = lw_cast(L, "llvm.bitcast", v, v2);
    MlirValue lo = shfl32(L, lw_vec_extract(L, w, 0, L->i32), off);
    MlirValue hi = shfl32(L, lw_vec_extract(L, w, 1, L->i32), off);
    return lw_cast(L, "llvm.bitcast", lw_vec_build(L, v2, 2, (MlirValue[]){lo, hi}), t);
  }
  }
}

/* ---- conversions inside a warp ---- */

static bool same_basis(const int *a, const int *b) { return !memcmp(a, b, sizeof(int) * TC_MAX_RANK); }

/* Pack g consecutive registers of 32 / g bits into one i32, and back. */
static MlirValue pack_word(Lw *L, MlirValue *v, int g, MlirType et) {
  if (g == 1) return v[0];
  return lw_cast(L, "llvm.bitcast", lw_vec_build(L, lw_vec_type(et, g), g, v), L->i32);
}

static void unpack_word(Lw *L, MlirValue w, int g, MlirType et, MlirValue *out) {
  if (g == 1) {
    out[0] = w;
    return;
  }
  MlirValue v = lw_cast(L, "llvm.bitcast", w, lw_vec_type(et, g));
  for (int j = 0; j < g; j++) out[j] = lw_vec_extract(L, v, j, et);
}

/* A conversion that moves elements only between the lanes of a warp (the
 * same warp bases; every lane basis of D a register basis of S or already
 * in place): each lane bit i of D that S has in register bit k trades
 * places with it, one butterfly shuffle (xor 1 << i) per pair of
 * registers that differ in bit k, then the registers are renamed. What
 * the wide mma layouts of stores need (ly_mma_wide: 2 shuffles per 32-bit
 * word for 16 bytes a thread), without shared memory or a barrier.
 * Registers narrower than 32 bits travel packed when no swap splits a
 * word. NULL when the layouts are not such a pair. */
static LV *warp_swap(Lw *L, LV *src, const LinLayout *S, const LinLayout *D, Elem e) {
  if (e.dt == DT_PTR || e.dt == DT_BOOL || S->nwarp != D->nwarp || S->nlane != D->nlane || S->nreg != D->nreg)
    return NULL;
  for (int i = 0; i < S->nwarp; i++)
    if (!same_basis(S->warp[i], D->warp[i])) return NULL;
  LinLayout C = *S;
  int swap_lane[5], swap_reg[5], ns = 0, low = 32;
  for (int i = 0; i < D->nlane; i++) {
    if (same_basis(C.lane[i], D->lane[i])) continue;
    int k = 0;
    while (k < C.nreg && !same_basis(C.reg[k], D->lane[i])) k++;
    if (k == C.nreg) return NULL;
    int t[TC_MAX_RANK];
    memcpy(t, C.reg[k], sizeof t);
    memcpy(C.reg[k], C.lane[i], sizeof t);
    memcpy(C.lane[i], t, sizeof t);
    swap_lane[ns] = i, swap_reg[ns++] = k;
    if (k < low) low = k;
  }
  if (!ns) return NULL;
  int n = ly_nregs(D);
  int *idx = ar_alloc(&L->c->arena, sizeof(int) * (size_t)n);
  for (int r = 0; r < n; r++) {
    int dc[TC_MAX_RANK];
    ly_reg_coord(D, r, dc);
    idx[r] = ly_solve_reg(&C, dc);
    if (idx[r] < 0 || idx[r] >= src->n) return NULL;
  }
  /* words: 2^p registers each, p < every swapped register bit */
  int eb = ty_dtype_bytes((DType)e.dt), p = 0;
  while ((1 << (p + 1)) * eb <= 4 && p + 1 <= low) p++;
  int g = 1 << p, nw = n / g;
  MlirType et = lw_elem_type(L, e);
  MlirValue *w = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)nw);
  for (int j = 0; j < nw; j++) w[j] = pack_word(L, &src->v[j * g], g, et);
  for (int s = 0; s < ns; s++) {
    int kb = 1 << (swap_reg[s] - p), lb = 1 << swap_lane[s];
    MlirValue hi = lw_cmpi(L, CMPI_NE, lw_bin(L, "arith.andi", L->lane, lw_i32(L, lb)), lw_i32(L, 0));
    for (int a = 0; a < nw; a++) {
      if (a & kb) continue;
      int b = a | kb;
      /* a lane with bit i set keeps its b and takes its partner's b as
       * its a; the partner keeps its a and takes this lane's a as its b */
      MlirValue send = lw_select(L, hi, w[a], w[b]);
      MlirValue recv = g > 1 ? shfl32(L, send, lb) : lw_shfl_xor(L, send, (DType)e.dt, lb);
      MlirValue na = lw_select(L, hi, recv, w[a]), nb = lw_select(L, hi, w[b], recv);
      w[a] = na, w[b] = nb;
    }
  }
  MlirValue *vals = ar_alloc(&L->c->arena, sizeof(MlirValue) * (size_t)n);
  for (int j = 0; j < nw; j++) unpack_word(L, w[j], g, et, &vals[j * g]);
  LV *out = lw_new(L, n);
  for (int r = 0; r < n; r++) out->v[r] = vals[idx[r]];
  return out;
}

/* ---- dot on mma.sync ---- */

/* Two 16-bit operand elements in one register: i32 for bf16, vector<2xf16>
 * for f16 (what nvvm.mma.sync expects for each). */
static MlirValue pack2(Lw *L, MlirValue a, MlirValue b, MlirType et) {
  MlirType vt = lw_vec_type(et, 2);
  MlirValue v = lw_vec_build(L, vt, 2, (MlirValue[]){a, b});
  if (mlirTypeEqual(et, L->f16)) return v;
  return lw_cast(L, "llvm.bitcast", v, L->i32);
}

static int reg_at(const LinLayout *l, int c0, int c1) {
  int c[TC_MAX_RANK] = {c0, c1};
  return ly_solve_reg(l, c);
}

bool lw_dot(Lw *L, TOp *op) {
  TValue *a = op->opnds[0], *b = op->opnds[1], *cacc = op->opnds[2], *r = op->res[0];
  LinLayout LA, LB, LC;
  if (!lw_linear(L, a, &LA) || !lw_linear(L, b, &LB) || !lw_linear(L, cacc, &LC)) return false;
  const Layout *mma = r->type->layout;
  int M = a->type->shape[0], K = a->type->shape[1], N = b->type->shape[1];
  int wm = mma->wm, wn = mma->wn;
  DType dt = (DType)a->type->elem.dt;
  bool tf32 = dt == DT_F32;
  int ik = tf32 ? 8 : 16;
  MlirType et = lw_elem_type(L, a->type->elem);
  LV *A = lw_get(L, a), *B = lw_get(L, b), *C = lw_get(L, cacc);
  LV *out = lw_new(L, C->n);
  char shape[64];
  snprintf(shape, sizeof shape, "#nvvm.shape<m = 16, n = 8, k = %d>", ik);
  const char *ptx = tf32 ? "#nvvm.mma_type<tf32>" : dt == DT_BF16 ? "#nvvm.mma_type<bf16>" : "#nvvm.mma_type<f16>";
  MlirNamedAttribute at[6] = {
      lw_attr(L, "layoutA", lw_pattr(L, "#nvvm.mma_layout<row>")),
      lw_attr(L, "layoutB", lw_pattr(L, "#nvvm.mma_layout<col>")),
      lw_attr(L, "multiplicandAPtxType", lw_pattr(L, ptx)),
      lw_attr(L, "multiplicandBPtxType", lw_pattr(L, ptx)),
      lw_attr(L, "operandSegmentSizes", lw_pattr(L, "array<i32: 4, 2, 4>")),
      lw_attr(L, "shape", lw_pattr(L, shape)),
  };
  MlirType st = mlirLLVMStructTypeLiteralGet(L->mc, 4, (MlirType[]){L->f32, L->f32, L->f32, L->f32}, false);
  for (int mi = 0; mi < M / (16 * wm); mi++) {
    for (int ni = 0; ni < N / (8 * wn); ni++) {
      int m0 = mi * 16 * wm, n0 = ni * 8 * wn;
      int ci[4];
      MlirValue acc[4];
      for (int j = 0; j < 4; j++) {
        ci[j] = reg_at(&LC, m0 + (j >> 1) * 8, n0 + (j & 1));
        if (ci[j] < 0) {
          dg_ice(L->c, op->loc, "dot: accumulator register not found");
          return false;
        }
        acc[j] = C->v[ci[j]];
      }
      for (int ki = 0; ki < K / ik; ki++) {
        MlirValue ops[10];
        int k0 = ki * ik;
        if (!tf32) {
          for (int p = 0; p < 4; p++) {
            int j0 = 2 * p, j1 = 2 * p + 1;
            int r0 = reg_at(&LA, m0 + ((j0 >> 1) & 1) * 8, k0 + (j0 & 1) + ((j0 >> 2) & 1) * 8);
            int r1 = reg_at(&LA, m0 + ((j1 >> 1) & 1) * 8, k0 + (j1 & 1) + ((j1 >> 2) & 1) * 8);
            if (r0 < 0 || r1 < 0) goto bad;
            ops[p] = pack2(L, A->v[r0], A->v[r1], et);
          }
          for (int p = 0; p < 2; p++) {
            int r0 = reg_at(&LB, k0 + p * 8, n0), r1 = reg_at(&LB, k0 + p * 8 + 1, n0);
            if (r0 < 0 || r1 < 0) goto bad;
            ops[4 + p] = pack2(L, B->v[r0], B->v[r1], et);
          }
        } else {
          for (int j = 0; j < 4; j++) {
            int r0 = reg_at(&LA, m0 + (j & 1) * 8, k0 + (j >> 1) * 4);
            if (r0 < 0) goto bad;
            ops[j] = lw_cast(L, "llvm.bitcast", A->v[r0], L->i32);
          }
          for (int j = 0; j < 2; j++) {
            int r0 = reg_at(&LB, k0 + j * 4, n0);
            if (r0 < 0) goto bad;
            ops[4 + j] = lw_cast(L, "llvm.bitcast", B->v[r0], L->i32);
          }
        }
        for (int j = 0; j < 4; j++) ops[6 + j] = acc[j];
        MlirValue res = lw_op1(L, "nvvm.mma.sync", 10, ops, st, 6, at);
        for (int j = 0; j < 4; j++) acc[j] = lw_extract(L, res, j, L->f32);
      }
      for (int j = 0; j < 4; j++) out->v[ci[j]] = acc[j];
    }
  }
  lw_set(r, out);
  return true;
bad:
  dg_ice(L->c, op->loc, "dot: operand register not found");
  return false;
}

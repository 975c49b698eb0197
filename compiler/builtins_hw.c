/* builtins_hw.c - the explicit hardware primitives (Hopper, sm_90a):
 * shared memory rings and views, mbarriers, TMA, wgmma (mma_async) and the
 * values tasks use.  Every check names the shapes, dtypes and sizes it
 * compared; nothing is guessed: what the source says is what is lowered.
 * What sm_100a shares (shared memory, barriers, TMA, tasks, and the ring
 * slots and slices of views, tensor memory's too) is here; Blackwell's own
 * builtins are in builtins_sm100.c, which uses the argument helpers at the
 * end of this file (sm_hw_*), never the other way round. */
#include "sema.h"
#include <string.h>

static bool is_kind(SVal v, TypeKind k) { return v.k == V_RT && v.v->type->kind == k; }

static TValue *view_arg(S *s, BArgs *a, int i, const char *fname, const char *what) {
  if (!is_kind(a->v[i], TY_SMEM)) {
    dg_error(s->c, a->loc[i], "%s of '%s' must be a shared-memory view such as buf[slot], not %s", what, fname,
             sv_desc(s, a->v[i]));
    return NULL;
  }
  TValue *v = a->v[i].v;
  if (v->type->nbuf) {
    dg_error(s->c, a->loc[i], "%s of '%s' is a ring of %d buffer%s; pick one slot with [i]", what, fname,
             v->type->nbuf, v->type->nbuf == 1 ? "" : "s");
    return NULL;
  }
  return v;
}

static TValue *bar_arg(S *s, BArgs *a, int i, const char *fname) {
  if (!is_kind(a->v[i], TY_BAR) || a->v[i].v->type->nbuf) {
    dg_error(s->c, a->loc[i], "'%s' needs one mbarrier such as bars[slot], not %s", fname,
             is_kind(a->v[i], TY_BAR) ? "a whole array of mbarriers" : sv_desc(s, a->v[i]));
    return NULL;
  }
  return a->v[i].v;
}

static TValue *int_arg(S *s, BArgs *a, int i, const char *fname, const char *what) {
  SVal v = a->v[i];
  if (v.k == V_INT) return sm_rt_as(s, v, (Elem){DT_I32, 0}, a->loc[i]);
  if (v.k == V_RT && v.v->type->kind == TY_SCALAR && ty_is_int((DType)v.v->type->elem.dt)) {
    if (v.v->type->elem.dt != DT_I32) return sm_cast(s, v.v, (Elem){DT_I32, 0}, a->loc[i]);
    return v.v;
  }
  dg_error(s->c, a->loc[i], "%s of '%s' must be a scalar integer, not %s", what, fname, sv_desc(s, v));
  return NULL;
}

static TOp *emit(S *s, Opcode opc, Loc loc, int n, TValue **ops, Type *rt) {
  TOp *op = ir_op(s->c, opc, loc, n, ops, rt ? 1 : 0, &rt);
  ir_append(s->blk, op);
  return op;
}

static bool at_top_level(S *s, Loc loc, const char *what) {
  if (s->blk == s->kf->body) return true;
  dg_error(s->c, loc, "%s must be at the top level of the kernel (shared memory and barriers are allocated once, "
                      "before loops and tasks)",
           what);
  return false;
}

/* The swizzle TMA and wgmma use for rows of `inner_bytes`. */
static int default_swizzle(int inner_bytes) {
  if (inner_bytes % 128 == 0) return 128;
  if (inner_bytes % 64 == 0) return 64;
  if (inner_bytes % 32 == 0) return 32;
  return 0;
}

/* smem(dtype, shape, buffers=1, swizzle=auto) */
static SVal b_smem(S *s, Node *call, Node *self) {
  static const Spec sp = {{"dtype", "shape", "buffers", "swizzle"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "smem", &sp, &a)) return sv_err();
  if (a.v[0].k != V_DTYPE || a.v[0].elem.dt == DT_PTR || a.v[0].elem.dt == DT_BOOL) {
    dg_error(s->c, a.loc[0], "smem needs a number dtype such as bf16, not %s", sv_desc(s, a.v[0]));
    return sv_err();
  }
  int rank, shape[TC_MAX_RANK];
  if (!sm_dims_list(s, a.v[1], a.loc[1], "the shape of smem", &rank, shape, false)) return sv_err();
  if (rank != 2) {
    dg_error(s->c, a.loc[1], "smem buffers are 2-D tiles (rows, contiguous columns), not %d-D", rank);
    return sv_err();
  }
  if (shape[1] & (shape[1] - 1)) {
    dg_error(s->c, a.loc[1], "smem [%d, %d]: the columns must be a power of two (the rows may be any number, a "
                             "multiple of 8 when swizzled)",
             shape[0], shape[1]);
    return sv_err();
  }
  int64_t nbuf = 1, sw;
  if (a.given[2] && !sm_const_int(s, a.v[2], a.loc[2], "the number of buffers", &nbuf)) return sv_err();
  if (nbuf < 1 || nbuf > 64) {
    dg_error(s->c, a.loc[2], "smem buffers=%lld must be between 1 and 64", (long long)nbuf);
    return sv_err();
  }
  Elem e = a.v[0].elem;
  int eb = ty_dtype_bytes((DType)e.dt);
  sw = default_swizzle(shape[1] * eb);
  if (a.given[3]) {
    if (!sm_const_int(s, a.v[3], a.loc[3], "the swizzle", &sw)) return sv_err();
    if (sw != 0 && sw != 32 && sw != 64 && sw != 128) {
      dg_error(s->c, a.loc[3], "swizzle must be 0, 32, 64 or 128 bytes, not %lld", (long long)sw);
      return sv_err();
    }
    if (sw && (shape[1] * eb) % sw) {
      dg_error(s->c, a.loc[3], "a %lld-byte swizzle needs rows that are a multiple of %lld bytes; [%d, %d] %s rows "
                               "are %d bytes",
               (long long)sw, (long long)sw, shape[0], shape[1], ty_dtype_name((DType)e.dt), shape[1] * eb);
      return sv_err();
    }
  }
  if (sw && shape[0] % 8) {
    dg_error(s->c, a.loc[1], "a swizzled smem tile needs a multiple of 8 rows (the swizzle repeats every 8 rows), "
                             "not %d",
             shape[0]);
    return sv_err();
  }
  if (!at_top_level(s, call->loc, "smem(...)")) return sv_err();
  Type *t = ty_tile(s->c, e, 2, shape);
  t->kind = TY_SMEM;
  t->brows = shape[0];
  t->nbuf = (int)nbuf;
  t->swizzle = (int)sw;
  TOp *op = emit(s, OP_SMEM_ALLOC, call->loc, 0, NULL, t);
  op->ival2 = (int64_t)shape[0] * shape[1] * eb;
  return sv_rt(op->res[0]);
}

/* mbarrier(count, arrive=1) */
static SVal b_mbarrier(S *s, Node *call, Node *self) {
  static const Spec sp = {{"count", "arrive"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, "mbarrier", &sp, &a)) return sv_err();
  int64_t n, arrive = 1;
  if (!sm_const_int(s, a.v[0], a.loc[0], "the number of mbarriers", &n)) return sv_err();
  if (a.given[1] && !sm_const_int(s, a.v[1], a.loc[1], "the arrive count", &arrive)) return sv_err();
  if (n < 1 || n > 256) {
    dg_error(s->c, a.loc[0], "mbarrier count %lld must be between 1 and 256", (long long)n);
    return sv_err();
  }
  if (arrive < 1 || arrive > 1024) {
    dg_error(s->c, a.loc[1], "mbarrier arrive count %lld must be between 1 and 1024", (long long)arrive);
    return sv_err();
  }
  if (!at_top_level(s, call->loc, "mbarrier(...)")) return sv_err();
  Type *t = ty_void(s->c);
  t->kind = TY_BAR;
  t->nbuf = (int)n;
  TOp *op = emit(s, OP_BAR_ALLOC, call->loc, 0, NULL, t);
  op->ival2 = arrive;
  return sv_rt(op->res[0]);
}

/* buf[i], bars[i] (called from sema's index expression) */
SVal sm_slot(S *s, TValue *base, SVal idx, Loc loc) {
  if (idx.k == V_ERR) return idx;
  int n = base->type->nbuf;
  if (!n) {
    dg_error(s->c, loc, "%s is a single %s, not a ring: it has no slots to index", ty_str(s->c, base->type),
             base->type->kind == TY_BAR ? "mbarrier" : "view");
    return sv_err();
  }
  if (idx.k == V_INT && (idx.i < 0 || idx.i >= n)) {
    dg_error(s->c, loc, "slot %lld is out of range for %s (0 to %d)", (long long)idx.i, ty_str(s->c, base->type), n - 1);
    return sv_err();
  }
  BArgs a = {0};
  a.v[0] = idx;
  a.loc[0] = loc;
  TValue *i = int_arg(s, &a, 0, "indexing", "the slot");
  if (!i) return sv_err();
  Type *t = ty_tile(s->c, base->type->elem, base->type->rank, base->type->shape);
  t->kind = base->type->kind;
  t->swizzle = base->type->swizzle;
  t->brows = base->type->brows;
  t->lane0 = base->type->lane0;
  t->nbuf = 0;
  return sv_rt(emit(s, OP_SLOT, loc, 2, (TValue *[]){base, i}, t)->res[0]);
}

/* view.slice(dim, offset, size): rows (dim 0) of any multiple of 8 rows for
 * swizzled views (the column blocks of a wide view stay where they are:
 * Type.brows); columns (dim 1) by whole swizzle blocks. */
/* x.slice(dim, offset, size) of a register tile: a compile-time window
 * aligned to its size (e.g. 64 columns of a wgmma accumulator): the same
 * registers, no data movement. */
static SVal tile_slice(S *s, Node *call, BArgs *a) {
  TValue *x = a->v[0].v;
  int64_t dim, off, size;
  if (!sm_const_int(s, a->v[1], a->loc[1], "the dimension", &dim) ||
      !sm_const_int(s, a->v[2], a->loc[2], "the offset of a register-tile slice", &off) ||
      !sm_const_int(s, a->v[3], a->loc[3], "the size", &size))
    return sv_err();
  int r = x->type->rank;
  if (dim < 0 || dim >= r) {
    dg_error(s->c, a->loc[1], "dimension %lld is out of range for %s", (long long)dim, ty_str(s->c, x->type));
    return sv_err();
  }
  int n = x->type->shape[dim];
  if (size < 1 || size > n || (size & (size - 1)) || off < 0 || off % size || off + size > n) {
    dg_error(s->c, call->loc, "slice(%lld, %lld, %lld) of %s: the size must be a power of two and the offset a "
                              "multiple of it inside the tile",
             (long long)dim, (long long)off, (long long)size, ty_str(s->c, x->type));
    return sv_err();
  }
  int shape[TC_MAX_RANK];
  for (int i = 0; i < r; i++) shape[i] = x->type->shape[i];
  shape[dim] = (int)size;
  TOp *op = emit(s, OP_SLICE, call->loc, 1, &x, ty_tile(s->c, x->type->elem, r, shape));
  op->axis = (int)dim;
  op->ival = off;
  return sv_rt(op->res[0]);
}

/* Whether the scalar v is a multiple of m by its construction: a constant
 * multiple, a product with such a factor, or a sum or difference of such
 * (a run-time column-slice offset like `r * 64`). */
static bool provably_multiple(const TValue *v, int64_t m, int depth) {
  const TOp *d = v->def;
  if (!d || depth > 16) return false;
  switch (d->opc) {
  case OP_CONST: return d->ival % m == 0;
  case OP_MUL: return provably_multiple(d->opnds[0], m, depth + 1) || provably_multiple(d->opnds[1], m, depth + 1);
  case OP_ADD:
  case OP_SUB: return provably_multiple(d->opnds[0], m, depth + 1) && provably_multiple(d->opnds[1], m, depth + 1);
  default: return false;
  }
}

/* view.slice(dim, offset, size) of a tensor-memory view: rows (dim 0) are
 * TMEM lanes, taken 32 at a time at a constant offset (a warp reaches 32
 * lanes: see tmem_load); columns (dim 1) at a constant offset, or a run-time
 * one inside the view by the caller's promise; 16-bit elements lie two to a
 * 32-bit column, so their offsets and sizes are even. */
static SVal tmem_slice(S *s, Node *call, BArgs *a) {
  TValue *v = a->v[0].v;
  int64_t dim, size;
  if (v->type->nbuf) {
    dg_error(s->c, a->loc[0], "the view of 'slice' is a ring of %d tensor-memory buffer%s; pick one slot with [i]",
             v->type->nbuf, v->type->nbuf == 1 ? "" : "s");
    return sv_err();
  }
  if (!sm_const_int(s, a->v[1], a->loc[1], "the dimension", &dim) ||
      !sm_const_int(s, a->v[3], a->loc[3], "the size", &size))
    return sv_err();
  if (dim != 0 && dim != 1) {
    dg_error(s->c, a->loc[1], "a tensor-memory view has two dimensions; slice along lanes (0) or columns (1)");
    return sv_err();
  }
  int n = v->type->shape[dim];
  int per = dim == 0 ? 32 : ty_dtype_bits((DType)v->type->elem.dt) == 16 ? 2 : 1;
  bool konst = a->v[2].k == V_INT;
  if (dim == 0 && !konst) {
    dg_error(s->c, a->loc[2], "a lane slice of tensor memory takes a compile-time offset (a multiple of 32)");
    return sv_err();
  }
  if (size < per || size > n || size % per || (konst && (a->v[2].i < 0 || a->v[2].i % per || a->v[2].i + size > n))) {
    dg_error(s->c, call->loc, "slice(%lld, %s, %lld) of %s: %s", (long long)dim,
             konst ? ar_printf(&s->c->arena, "%lld", (long long)a->v[2].i) : "offset", (long long)size,
             ty_str(s->c, v->type),
             dim == 0 ? "lanes go 32 at a time (a warp's share), at offsets that are multiples of 32 inside the view"
                      : per == 2 ? "16-bit elements lie two to a TMEM column: an even offset and size inside the view"
                                 : "the columns must lie inside the view");
    return sv_err();
  }
  TValue *off = int_arg(s, a, 2, "slice", "the offset");
  if (!off) return sv_err();
  Type *t = ty_with_elem(s->c, v->type, v->type->elem);
  t->shape[dim] = (int)size;
  if (dim == 0) t->lane0 = v->type->lane0 + (int)a->v[2].i;
  TOp *op = emit(s, OP_SLICE, call->loc, 2, (TValue *[]){v, off}, t);
  op->axis = (int)dim;
  return sv_rt(op->res[0]);
}

static SVal b_slice(S *s, Node *call, Node *self) {
  static const Spec sp = {{"view", "dim", "offset", "size"}, 4};
  BArgs a;
  if (!sm_bind_args(s, call, self, "slice", &sp, &a)) return sv_err();
  if (a.v[0].k == V_RT && a.v[0].v->type->kind == TY_TILE) return tile_slice(s, call, &a);
  if (a.v[0].k == V_RT && a.v[0].v->type->kind == TY_TMEM) return tmem_slice(s, call, &a);
  TValue *v = view_arg(s, &a, 0, "slice", "the view");
  int64_t dim, size;
  if (!v || !sm_const_int(s, a.v[1], a.loc[1], "the dimension", &dim) ||
      !sm_const_int(s, a.v[3], a.loc[3], "the size", &size))
    return sv_err();
  if (v->type->trans) {
    dg_error(s->c, call->loc, "slice a view before transposing it");
    return sv_err();
  }
  if (dim == 1) { /* whole swizzle blocks of columns */
    int eb = ty_dtype_bytes((DType)v->type->elem.dt);
    int per = v->type->swizzle ? v->type->swizzle / eb : v->type->shape[1];
    /* one unswizzled row (the LSE of a block of rows): any aligned
     * power-of-two piece of it, for smem_load (16 bytes at least, TMA's
     * and vector loads' alignment) */
    if (!v->type->swizzle && v->type->shape[0] == 1 && a.v[2].k == V_INT) {
      int min = 16 / eb > 1 ? 16 / eb : 1, cols = v->type->shape[1];
      int64_t o = a.v[2].i;
      if (size < min || size > cols || (size & (size - 1)) || o < 0 || o % size || o + size > cols) {
        dg_error(s->c, call->loc, "a column slice of one unswizzled row (%s) takes a power-of-two piece of at least "
                                  "%d columns (16 bytes) inside the row, at an offset that is a multiple of its size; "
                                  "got slice(1, %lld, %lld)",
                 ty_str(s->c, v->type), min, (long long)o, (long long)size);
        return sv_err();
      }
      per = min;
    }
    int cols = v->type->shape[1];
    /* a run-time offset must be a multiple of the block by construction
     * (r * 64); that it stays inside the view is the caller's promise, as
     * for a run-time row offset */
    bool rt = a.v[2].k == V_RT && a.v[2].v->type->kind == TY_SCALAR && ty_is_int((DType)a.v[2].v->type->elem.dt) &&
              provably_multiple(a.v[2].v, per, 0);
    if ((!rt && (a.v[2].k != V_INT || a.v[2].i < 0 || a.v[2].i % per || a.v[2].i + size > cols)) || size % per ||
        size > cols || size < 1 || (size & (size - 1))) {
      dg_error(s->c, call->loc, "a column slice of %s takes whole %d-column swizzle blocks at an offset that is a "
                                "compile-time constant or a run-time product with a multiple of %d (like r * %d)",
               ty_str(s->c, v->type), per, per, per);
      return sv_err();
    }
    TValue *off = int_arg(s, &a, 2, "slice", "the offset");
    if (!off) return sv_err();
    Type *t = ty_with_elem(s->c, v->type, v->type->elem);
    t->shape[1] = (int)size;
    TOp *op = emit(s, OP_SLICE, call->loc, 2, (TValue *[]){v, off}, t);
    op->axis = 1;
    return sv_rt(op->res[0]);
  }
  if (dim != 0) {
    dg_error(s->c, a.loc[1], "a view has two dimensions; slice along rows (0) or whole column blocks (1)");
    return sv_err();
  }
  int rows = v->type->shape[0];
  if (size < 1 || size > rows) {
    dg_error(s->c, a.loc[3], "slice size %lld must be between 1 and the view's %d rows", (long long)size, rows);
    return sv_err();
  }
  if (v->type->swizzle && size % 8) {
    dg_error(s->c, a.loc[3], "a swizzled view is sliced in multiples of 8 rows, not %lld", (long long)size);
    return sv_err();
  }
  if (a.v[2].k == V_INT && (a.v[2].i < 0 || a.v[2].i + size > rows || (v->type->swizzle && a.v[2].i % 8))) {
    dg_error(s->c, a.loc[2], "slice offset %lld of %lld rows does not fit the view's %d rows%s", (long long)a.v[2].i,
             (long long)size, rows, v->type->swizzle ? " (or is not a multiple of 8)" : "");
    return sv_err();
  }
  TValue *off = int_arg(s, &a, 2, "slice", "the offset");
  if (!off) return sv_err();
  Type *t = ty_with_elem(s->c, v->type, v->type->elem);
  t->shape[0] = (int)size;
  TOp *op = emit(s, OP_SLICE, call->loc, 2, (TValue *[]){v, off}, t);
  op->axis = 0;
  return sv_rt(op->res[0]);
}

/* view.trans(): the same memory seen as its transpose (for K-major B). */
SVal sm_view_trans(S *s, TValue *v, Loc loc) {
  if (v->type->nbuf) {
    dg_error(s->c, loc, "trans() applies to one slot of a ring: buf[i].trans()");
    return sv_err();
  }
  Type *t = ty_with_elem(s->c, v->type, v->type->elem);
  t->shape[0] = v->type->shape[1];
  t->shape[1] = v->type->shape[0];
  t->trans = !v->type->trans;
  return sv_rt(emit(s, OP_SLICE, loc, 1, &v, t)->res[0]);
}

static SVal b_smem_load(S *s, Node *call, Node *self) {
  static const Spec sp = {{"view"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, "smem_load", &sp, &a)) return sv_err();
  TValue *v = view_arg(s, &a, 0, "smem_load", "the view");
  if (!v) return sv_err();
  if (v->type->trans) {
    dg_error(s->c, a.loc[0], "smem_load of a transposed view is not supported yet");
    return sv_err();
  }
  if (v->type->shape[0] & (v->type->shape[0] - 1)) {
    dg_error(s->c, a.loc[0], "smem_load of %s: a register tile's rows are a power of two (load a row slice)",
             ty_str(s->c, v->type));
    return sv_err();
  }
  Type *t = ty_tile(s->c, v->type->elem, 2, v->type->shape);
  return sv_rt(emit(s, OP_SMEM_LOAD, call->loc, 1, &v, t)->res[0]);
}

static SVal b_smem_store(S *s, Node *call, Node *self) {
  static const Spec sp = {{"view", "value"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "smem_store", &sp, &a)) return sv_err();
  TValue *v = view_arg(s, &a, 0, "smem_store", "the view");
  if (!v) return sv_err();
  if (v->type->trans) {
    dg_error(s->c, a.loc[0], "smem_store to a transposed view is not supported yet");
    return sv_err();
  }
  TValue *x = a.v[1].k == V_RT ? a.v[1].v : NULL;
  if (!x || x->type->kind != TY_TILE || !ty_same_shape(x->type, v->type) ||
      !ty_elem_eq(x->type->elem, v->type->elem)) {
    dg_error(s->c, a.loc[1], "smem_store of %s into %s: the tile must have the view's shape and dtype",
             sv_desc(s, a.v[1]), ty_str(s->c, v->type));
    return sv_err();
  }
  emit(s, OP_SMEM_STORE, call->loc, 2, (TValue *[]){v, x}, NULL);
  return (SVal){.k = V_VOID};
}

/* smem_read(view, r, c): element (r, c) of a shared-memory view as a scalar
 * (every thread reads it); smem_write(view, r, c, x): one thread of the
 * group (the one that arrives on mbarriers) writes it. What a producer
 * hands its consumers beside a TMA load: written before barrier_expect,
 * read after barrier_wait on the same mbarrier. */
static SVal b_smem_elem(S *s, Node *call, Node *self, bool write) {
  static const Spec spr = {{"view", "row", "col"}, 3};
  static const Spec spw = {{"view", "row", "col", "value"}, 4};
  const char *name = write ? "smem_write" : "smem_read";
  BArgs a;
  if (!sm_bind_args(s, call, self, name, write ? &spw : &spr, &a)) return sv_err();
  TValue *v = view_arg(s, &a, 0, name, "the view");
  if (!v) return sv_err();
  if (v->type->trans || v->type->rank != 2) {
    dg_error(s->c, a.loc[0], "%s needs a 2-D view that is not transposed, not %s", name, ty_str(s->c, v->type));
    return sv_err();
  }
  TValue *r = int_arg(s, &a, 1, name, "the row");
  TValue *c = int_arg(s, &a, 2, name, "the column");
  if (!r || !c) return sv_err();
  for (int k = 1; k <= 2; k++)
    if (a.v[k].k == V_INT && (a.v[k].i < 0 || a.v[k].i >= v->type->shape[k - 1])) {
      dg_error(s->c, a.loc[k], "%s %lld is outside %s", k == 1 ? "row" : "column", (long long)a.v[k].i,
               ty_str(s->c, v->type));
      return sv_err();
    }
  Elem e = v->type->elem;
  if (!write) return sv_rt(emit(s, OP_SMEM_READ, call->loc, 3, (TValue *[]){v, r, c}, ty_scalar(s->c, e))->res[0]);
  TValue *x = NULL;
  if (sv_is_const(a.v[3])) {
    x = sm_rt_as(s, a.v[3], e, a.loc[3]);
    if (!x) return sv_err(); /* sm_rt_as said why */
  } else if (a.v[3].k == V_RT && a.v[3].v->type->kind == TY_SCALAR && ty_elem_eq(a.v[3].v->type->elem, e)) x = a.v[3].v;
  if (!x) {
    dg_error(s->c, a.loc[3], "smem_write into %s needs a scalar of dtype %s, not %s", ty_str(s->c, v->type),
             ty_dtype_name((DType)e.dt), sv_desc(s, a.v[3]));
    return sv_err();
  }
  emit(s, OP_SMEM_WRITE, call->loc, 4, (TValue *[]){v, r, c, x}, NULL);
  return (SVal){.k = V_VOID};
}

/* `cta = r` of an operation on CTA r of the kernel's cluster (barrier_arrive, dsmem_copy): the kernel has
 * clusters, and a constant r is one of their ranks. */
static TValue *cta_rank_arg(S *s, BArgs *a, int i, const char *fname, const char *verb) {
  int nc = s->kf->cluster[0] * s->kf->cluster[1] * s->kf->cluster[2];
  if (nc < 2) {
    dg_error(s->c, a->loc[i], "%s(..., cta = r) %s CTA r of the kernel's cluster, but the kernel runs without "
                              "clusters (add cluster(N))", fname, verb);
    return NULL;
  }
  if (a->v[i].k == V_INT && (a->v[i].i < 0 || a->v[i].i >= nc)) {
    dg_error(s->c, a->loc[i], "%s(..., cta = %lld): the cluster has CTAs 0 to %d", fname, (long long)a->v[i].i, nc - 1);
    return NULL;
  }
  return int_arg(s, a, i, fname, "the CTA rank");
}

static SVal b_bar_op(S *s, Node *call, Node *self, Opcode opc, const char *name) {
  /* cta = r: the mbarrier at bar's offset in CTA rank r of the cluster; each = true: every thread of the group
   * arrives, not one elected thread (each releases its own reads and writes; the mbarrier counts them all) */
  static const Spec sp1 = {{"bar", "cta", "each"}, 1};
  static const Spec sp2e = {{"bar", "bytes"}, 2};
  static const Spec sp2w = {{"bar", "phase"}, 2};
  BArgs a;
  const Spec *sp = opc == OP_BAR_ARRIVE ? &sp1 : opc == OP_BAR_EXPECT ? &sp2e : &sp2w;
  if (!sm_bind_args(s, call, self, name, sp, &a)) return sv_err();
  TValue *b = bar_arg(s, &a, 0, name);
  if (!b) return sv_err();
  TValue *ops[2] = {b, NULL};
  int n = 1;
  if (opc != OP_BAR_ARRIVE) {
    if (opc == OP_BAR_EXPECT && a.v[1].k == V_INT && (a.v[1].i <= 0 || a.v[1].i >= (1 << 20))) {
      dg_error(s->c, a.loc[1], "barrier_expect of %lld bytes: the transaction count must be 1 to %d",
               (long long)a.v[1].i, (1 << 20) - 1);
      return sv_err();
    }
    if (opc == OP_BAR_WAIT && a.v[1].k == V_INT && a.v[1].i != 0 && a.v[1].i != 1) {
      dg_error(s->c, a.loc[1], "the phase of barrier_wait is a parity: 0 or 1, not %lld", (long long)a.v[1].i);
      return sv_err();
    }
    ops[1] = int_arg(s, &a, 1, name, opc == OP_BAR_EXPECT ? "the byte count" : "the phase");
    if (!ops[1]) return sv_err();
    n = 2;
  } else if (a.given[1]) { /* an arrival on another CTA's mbarrier (mapa + mbarrier.arrive.shared::cluster) */
    if (!(ops[1] = cta_rank_arg(s, &a, 1, name, "arrives on"))) return sv_err();
    n = 2;
  }
  bool each = false;
  if (opc == OP_BAR_ARRIVE && a.given[2]) {
    if (a.v[2].k != V_BOOL) {
      dg_error(s->c, a.loc[2], "barrier_arrive(..., each = ...) takes a compile-time true or false, not %s",
               sv_desc(s, a.v[2]));
      return sv_err();
    }
    each = a.v[2].i;
    if (each && a.given[1]) {
      dg_error(s->c, a.loc[2], "barrier_arrive(..., each = true) arrives on this CTA's mbarrier; with cta = r "
                               "one elected thread arrives");
      return sv_err();
    }
    /* every thread of the group arrives: fewer expected arrivals would end the phase before the last of them */
    TOp *al = b->def;
    while (al && al->opc != OP_BAR_ALLOC && al->nopnds) al = al->opnds[0]->def;
    int threads = s->warps * 32;
    if (each && al && al->opc == OP_BAR_ALLOC && al->ival2 < threads) {
      dg_error(s->c, a.loc[2], "barrier_arrive(..., each = true): the %d threads of this %s arrive, but the "
                               "mbarrier expects %lld arrivals a phase (mbarrier(n, arrive = ...) counts them all)",
               threads, s->in_task ? "task" : "kernel", (long long)al->ival2);
      return sv_err();
    }
  }
  TOp *op = emit(s, opc, call->loc, n, ops, NULL);
  if (op && each) op->ival = 1;
  return (SVal){.k = V_VOID};
}

/* named_barrier(id, threads) waits (bar.sync); named_barrier_arrive(id,
 * threads) arrives without waiting (bar.arrive): what two warpgroups use to
 * take turns. The id is 1..7, a constant or a runtime i32 (then it must be
 * 1..7 at run time: ping-pong picks its partner's id from replica_id()); the
 * thread count is a constant. */
static SVal b_named_barrier(S *s, Node *call, Node *self, bool arrive) {
  static const Spec sp = {{"id", "threads"}, 2};
  const char *name = arrive ? "named_barrier_arrive" : "named_barrier";
  BArgs a;
  if (!sm_bind_args(s, call, self, name, &sp, &a)) return sv_err();
  int64_t id = -1, th;
  TValue *dyn = NULL;
  if (a.v[0].k == V_INT) {
    if (!sm_const_int(s, a.v[0], a.loc[0], "the barrier id", &id)) return sv_err();
    if (id < 1 || id > 7) {
      dg_error(s->c, a.loc[0], "named barrier ids are 1 to 7 (0 is the whole CTA's, 8 to 15 belong to tasks: use "
                               "task_barrier()), not %lld",
               (long long)id);
      return sv_err();
    }
  } else {
    dyn = int_arg(s, &a, 0, name, "the barrier id");
    if (!dyn) return sv_err();
  }
  if (!sm_const_int(s, a.v[1], a.loc[1], "the thread count", &th)) return sv_err();
  if (th < 32 || th % 32 || th > s->kf->warps * 32) {
    dg_error(s->c, a.loc[1], "%s of %lld threads: a multiple of 32 between 32 and the kernel's %d threads", name,
             (long long)th, s->kf->warps * 32);
    return sv_err();
  }
  TOp *op = emit(s, OP_NAMED_BAR, call->loc, dyn ? 1 : 0, dyn ? &dyn : NULL, NULL);
  op->ival = dyn ? -1 : id;
  op->ival2 = th;
  op->pred = arrive;
  return (SVal){.k = V_VOID};
}

static bool coords(S *s, BArgs *a, int i, int rank, const char *fname, TValue **out) {
  SVal l = a->v[i];
  if ((l.k != V_LIST && l.k != V_TUPLE) || l.n != rank) {
    if (l.k == V_LIST || l.k == V_TUPLE)
      dg_error(s->c, a->loc[i], "'%s' needs %d coordinates like [row, col], not %d", fname, rank, l.n);
    else
      dg_error(s->c, a->loc[i], "'%s' needs %d coordinates like [row, col], not %s", fname, rank, sv_desc(s, l));
    return false;
  }
  for (int d = 0; d < rank; d++) {
    BArgs b = {0};
    b.v[0] = l.items[d];
    b.loc[0] = a->loc[i];
    out[d] = int_arg(s, &b, 0, fname, "a coordinate");
    if (!out[d]) return false;
  }
  return true;
}

/* The view a TMA moves must be the descriptor's box, repeated along the
 * contiguous dimension when the view is wider than one swizzle block. */
static bool tma_fits(S *s, TValue *desc, TValue *v, Loc loc, const char *fname) {
  Type *d = desc->type, *w = v->type;
  if (!ty_elem_eq(d->elem, w->elem)) {
    dg_error(s->c, loc, "'%s' moves %s through a descriptor of %s", fname, ty_str(s->c, w), ty_elem_str(s->c, d->elem));
    return false;
  }
  if (w->trans) {
    dg_error(s->c, loc, "'%s' of a transposed view: pass the view itself", fname);
    return false;
  }
  if (w->shape[0] != d->shape[0] || w->shape[1] % d->shape[1] || w->swizzle != d->swizzle) {
    dg_error(s->c, loc, "'%s' of %s through %s: the view must be the descriptor's box (or several boxes side by "
                        "side) with the same swizzle",
             fname, ty_str(s->c, w), ty_str(s->c, d));
    return false;
  }
  /* several boxes: each fills one column block of the view (a swizzle wide) */
  int eb = ty_dtype_bytes((DType)w->elem.dt);
  if (w->shape[1] > d->shape[1] && (!w->swizzle || d->shape[1] * eb != w->swizzle)) {
    dg_error(s->c, loc, "'%s' of %s through %s: a view several boxes wide takes boxes one swizzle block wide "
                        "(%d bytes a row), not %d bytes",
             fname, ty_str(s->c, w), ty_str(s->c, d), w->swizzle, d->shape[1] * eb);
    return false;
  }
  return true;
}

/* tma_load's cluster forms (docs/language.md 10, docs/blackwell.md):
 *   multicast = m: the box lands at the destination's offset in every CTA
 *     of the cluster whose bit is set in the 16-bit mask m, and completes
 *     on the mbarrier at bar's offset there (.multicast::cluster; OPF_MCAST,
 *     the mask an i32 operand after bar);
 *   cta = r: the load completes on the mbarrier at bar's offset in CTA r,
 *     this CTA or its peer of the CTA pair (ranks 2p, 2p + 1), with
 *     .cta_group::2 (OPF_PAIR, the rank an operand last). With multicast
 *     too, each destination's signal goes to the CTA of its pair whose rank
 *     has r's parity (the PTX ISA, cp.async.bulk.tensor). */
static bool tma_cluster_args(S *s, BArgs *a, TValue **ops, int *n, int *flags) {
  int nc = s->kf->cluster[0] * s->kf->cluster[1] * s->kf->cluster[2];
  if (a->given[4]) {
    if (nc < 2) {
      dg_error(s->c, a->loc[4], "tma_load(..., multicast = mask) writes every CTA of the mask in the kernel's "
                                "cluster, but the kernel runs without clusters (add cluster(N))");
      return false;
    }
    if (a->v[4].k == V_INT && (a->v[4].i < 1 || a->v[4].i >= (1ll << nc))) {
      dg_error(s->c, a->loc[4], "tma_load(..., multicast = %lld): the mask names CTAs of the cluster by bit, 1 to %lld "
                                "for a cluster of %d (bit r: CTA rank r)",
               (long long)a->v[4].i, (1ll << nc) - 1, nc);
      return false;
    }
    if (!(ops[(*n)++] = int_arg(s, a, 4, "tma_load", "the CTA mask"))) return false;
    *flags |= OPF_MCAST;
  }
  if (a->given[5]) {
    if (s->c->sm < 100) {
      dg_error(s->c, a->loc[5], "tma_load(..., cta = r) completes on the CTA pair's mbarrier (.cta_group::2), which "
                                "%s does not have (sm_100a)", s->c->arch);
      return false;
    }
    if (nc < 2 || nc % 2) {
      if (nc < 2)
        dg_error(s->c, a->loc[5], "tma_load(..., cta = r) completes on an mbarrier of the CTA pair (ranks 2p, 2p + 1 "
                                  "of a cluster), but the kernel runs without clusters (add cluster(2))");
      else
        dg_error(s->c, a->loc[5], "tma_load(..., cta = r) completes on an mbarrier of the CTA pair (ranks 2p, 2p + 1 "
                                  "of a cluster), but the kernel's clusters have %d CTAs, an odd number",
                 nc);
      return false;
    }
    if (a->v[5].k == V_INT && (a->v[5].i < 0 || a->v[5].i >= nc)) {
      dg_error(s->c, a->loc[5], "tma_load(..., cta = %lld): the cluster has CTAs 0 to %d", (long long)a->v[5].i, nc - 1);
      return false;
    }
    if (!(ops[(*n)++] = int_arg(s, a, 5, "tma_load", "the CTA rank"))) return false;
    *flags |= OPF_PAIR;
  }
  return true;
}

/* tma_load, tma_store, and tma_store_add (add = true: the copy engine adds
 * the view into global memory, element by element, instead of writing it:
 * cp.reduce.async.bulk.tensor .add; f32, f16 and bf16) */
static SVal b_tma(S *s, Node *call, Node *self, bool load, bool add) {
  static const Spec spl = {{"desc", "coords", "dst", "bar", "multicast", "cta"}, 4};
  static const Spec sps = {{"desc", "coords", "src"}, 3};
  const char *name = load ? "tma_load" : add ? "tma_store_add" : "tma_store";
  BArgs a;
  if (!sm_bind_args(s, call, self, name, load ? &spl : &sps, &a)) return sv_err();
  if (!is_kind(a.v[0], TY_TMA)) {
    dg_error(s->c, a.loc[0], "'%s' needs a TMA descriptor parameter (declared like 'a: tma<bf16, [128, 64]>'), not %s",
             name, sv_desc(s, a.v[0]));
    return sv_err();
  }
  TValue *desc = a.v[0].v, *c[2];
  if (!coords(s, &a, 1, 2, name, c)) return sv_err();
  TValue *v = view_arg(s, &a, 2, name, load ? "the destination" : "the source");
  if (!v || !tma_fits(s, desc, v, a.loc[2], name)) return sv_err();
  if (load) {
    TValue *b = bar_arg(s, &a, 3, name);
    if (!b) return sv_err();
    TValue *ops[7] = {desc, c[0], c[1], v, b};
    int n = 5, flags = 0;
    if (!tma_cluster_args(s, &a, ops, &n, &flags)) return sv_err();
    emit(s, OP_TMA_LOAD, call->loc, n, ops, NULL)->flags |= flags;
  } else {
    DType dt = (DType)v->type->elem.dt;
    if (add && dt != DT_F32 && dt != DT_F16 && dt != DT_BF16) {
      dg_error(s->c, a.loc[2], "'%s' adds f32, f16 or bf16 elements, not %s", name, ty_dtype_name(dt));
      return sv_err();
    }
    TOp *op = emit(s, OP_TMA_STORE, call->loc, 4, (TValue *[]){desc, c[0], c[1], v}, NULL);
    op->pred = add;
  }
  return (SVal){.k = V_VOID};
}

/* dsmem_copy(src, dst, bar, cta = r): one bulk copy of the TMA engine from this CTA's shared view src into
 * the view dst of CTA r of the cluster (cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes):
 * its bytes complete on the mbarrier at bar's offset in CTA r, which expects them (barrier_expect there). The
 * views have one type and are each one run of bytes (a whole buffer slot, or whole column blocks of every row),
 * so the bytes land in the same layout, swizzle included. The elected thread issues it; src is read through
 * the async proxy (fence_async_shared() after writing it). */
static bool contiguous(const Type *t) {
  int eb = ty_dtype_bytes((DType)t->elem.dt), span = t->swizzle ? t->swizzle : t->shape[1] * eb;
  return !t->trans && (ty_block_rows(t) == t->shape[0] || t->shape[1] * eb <= span);
}

static SVal b_dsmem_copy(S *s, Node *call, Node *self) {
  static const Spec sp = {{"src", "dst", "bar", "cta"}, 4};
  BArgs a;
  if (!sm_bind_args(s, call, self, "dsmem_copy", &sp, &a)) return sv_err();
  TValue *src = view_arg(s, &a, 0, "dsmem_copy", "the source");
  TValue *dst = src ? view_arg(s, &a, 1, "dsmem_copy", "the destination") : NULL;
  TValue *bar = dst ? bar_arg(s, &a, 2, "dsmem_copy") : NULL;
  if (!bar) return sv_err();
  const Type *x = src->type, *y = dst->type;
  if (!ty_eq(x, y) || x->swizzle != y->swizzle) {
    dg_error(s->c, call->loc, "dsmem_copy copies bytes as they lie: the source and the destination must be views of "
                              "one type, shape and swizzle, not %s and %s",
             ty_str(s->c, x), ty_str(s->c, y));
    return sv_err();
  }
  int64_t bytes = ty_numel(x) * ty_dtype_bytes((DType)x->elem.dt);
  if (!contiguous(x) || !contiguous(y) || bytes % 16) {
    dg_error(s->c, call->loc, "dsmem_copy of %s: a bulk copy moves one run of bytes, a multiple of 16: a whole "
                              "buffer slot, or whole column blocks of every row (a slice of some rows of a view "
                              "wider than its %d-byte swizzle lies in pieces)",
             ty_str(s->c, x), x->swizzle);
    return sv_err();
  }
  TValue *r = cta_rank_arg(s, &a, 3, "dsmem_copy", "copies into");
  if (!r) return sv_err();
  emit(s, OP_DSMEM_COPY, call->loc, 4, (TValue *[]){src, dst, bar, r}, NULL)->ival = bytes;
  return (SVal){.k = V_VOID};
}

/* The bytes a bulk copy of the shared view v moves (one run of them, a multiple of 16), or -1 after an error
 * at loc: "NM PREP TYPE: ...". */
static int64_t bulk_bytes(S *s, TValue *v, Loc loc, const char *nm, const char *prep) {
  int64_t bytes = ty_numel(v->type) * ty_dtype_bytes((DType)v->type->elem.dt);
  if (contiguous(v->type) && bytes % 16 == 0) return bytes;
  dg_error(s->c, loc, "%s %s %s: a bulk copy moves one run of bytes, a multiple of 16: a whole buffer slot, or "
                      "whole column blocks of every row",
           nm, prep, ty_str(s->c, v->type));
  return -1;
}

/* bulk_store_add(ptr, src): the copy engine adds the shared view src, as one run of bytes, into global memory
 * from ptr on, element by element (cp.reduce.async.bulk.global.shared::cta.bulk_group.add; f32, f16 or bf16):
 * a reduce-add without a TMA descriptor, one instruction for a whole staged block that the accumulator keeps in
 * the stage's own layout (swizzle included). Like tma_store_add: the group's elected thread issues it, src is
 * read through the async proxy (fence_async_shared() after writing it), tma_store_wait / tma_store_flush wait
 * for it. ptr must be 16-byte aligned (the hardware's rule; the emulator checks it at run time). add false:
 * bulk_store, the same bulk copy writing the bytes (cp.async.bulk.global.shared::cta.bulk_group). */
static SVal b_bulk_store_add(S *s, Node *call, Node *self, bool add) {
  const char *nm = add ? "bulk_store_add" : "bulk_store";
  static const Spec sp = {{"ptr", "src"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, nm, &sp, &a)) return sv_err();
  SVal p = a.v[0];
  if (p.k != V_RT || p.v->type->kind != TY_SCALAR || p.v->type->elem.dt != DT_PTR) {
    dg_error(s->c, a.loc[0], "'%s' %s global memory at a pointer (*f32, *f16 or *bf16), not %s", nm,
             add ? "adds into" : "writes", sv_desc(s, p));
    return sv_err();
  }
  TValue *v = view_arg(s, &a, 1, nm, "the source");
  if (!v) return sv_err();
  DType dt = (DType)v->type->elem.dt, pt = (DType)p.v->type->elem.pointee;
  if (dt != DT_F32 && dt != DT_F16 && dt != DT_BF16) {
    dg_error(s->c, a.loc[1], "'%s' %s f32, f16 or bf16 elements, not %s", nm, add ? "adds" : "writes",
             ty_dtype_name(dt));
    return sv_err();
  }
  if (pt != dt) {
    dg_error(s->c, a.loc[0], "'%s' %s %s elements %s a pointer to %s: the types must match", nm,
             add ? "adds" : "writes", ty_dtype_name(dt), add ? "into" : "through", ty_dtype_name(pt));
    return sv_err();
  }
  int64_t bytes = bulk_bytes(s, v, a.loc[1], nm, "of");
  if (bytes < 0) return sv_err();
  TOp *op = emit(s, OP_BULK_STORE_ADD, call->loc, 2, (TValue *[]){p.v, v}, NULL);
  op->ival = bytes;
  op->ival2 = !add;
  return (SVal){.k = V_VOID};
}

/* bulk_load(dst, ptr, bar): the copy engine copies global memory from ptr on, as one run of bytes, into the
 * shared view dst (cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes), completing that many
 * transaction bytes on the mbarrier bar (barrier_expect it first, as for tma_load): bulk_store's inverse, no TMA
 * descriptor, the bytes landing as they lie (a block that bulk_store or bulk_store_add wrote from a view of the
 * same type comes back in the view's own layout, swizzle included). The pointer's element type is the view's;
 * ptr must be 16-byte aligned (the hardware's rule; the emulator checks it). The group's elected thread issues it. */
static SVal b_bulk_load(S *s, Node *call, Node *self) {
  static const Spec sp = {{"dst", "ptr", "bar"}, 3};
  BArgs a;
  if (!sm_bind_args(s, call, self, "bulk_load", &sp, &a)) return sv_err();
  TValue *v = view_arg(s, &a, 0, "bulk_load", "the destination");
  if (!v) return sv_err();
  SVal p = a.v[1];
  if (p.k != V_RT || p.v->type->kind != TY_SCALAR || p.v->type->elem.dt != DT_PTR) {
    dg_error(s->c, a.loc[1], "'bulk_load' reads global memory at a pointer, not %s", sv_desc(s, p));
    return sv_err();
  }
  DType dt = (DType)v->type->elem.dt, pt = (DType)p.v->type->elem.pointee;
  if (pt != dt) {
    dg_error(s->c, a.loc[1], "'bulk_load' reads %s elements through a pointer to %s: the types must match",
             ty_dtype_name(dt), ty_dtype_name(pt));
    return sv_err();
  }
  int64_t bytes = bulk_bytes(s, v, a.loc[0], "bulk_load", "into");
  if (bytes < 0) return sv_err();
  TValue *bar = bar_arg(s, &a, 2, "bulk_load");
  if (!bar) return sv_err();
  emit(s, OP_BULK_LOAD, call->loc, 3, (TValue *[]){p.v, v, bar}, NULL)->ival = bytes;
  return (SVal){.k = V_VOID};
}

static SVal b_wait_n(S *s, Node *call, Node *self, Opcode opc, const char *name) {
  static const Spec sp = {{"pending", "acc", "after", "release"}, 0};
  BArgs a;
  if (opc == OP_MMA_WAIT && s->c->sm != 90) {
    dg_error(s->c, call->loc, "mma_wait on %s (tcgen05 completion through mbarriers) is not supported yet", s->c->arch);
    return sv_err();
  }
  if (!sm_bind_args(s, call, self, name, &sp, &a)) return sv_err();
  int64_t n = 0;
  if (a.given[0] && !sm_const_int(s, a.v[0], a.loc[0], "the number of groups left in flight", &n)) return sv_err();
  if (n < 0 || n > 7) {
    dg_error(s->c, a.loc[0], "%s(%lld): between 0 and 7 groups may stay in flight", name, (long long)n);
    return sv_err();
  }
  for (int i = 1; i < 4; i++) /* acc, after, release: mma_wait's alone */
    if (a.given[i] && opc != OP_MMA_WAIT) {
      dg_error(s->c, a.loc[i], "%s takes only the number of stores left in flight", name);
      return sv_err();
    }
  TValue *acc = NULL, *acc2 = NULL;
  if (a.given[1] && a.v[1].k == V_TUPLE && a.v[1].n == 2 && a.v[1].items[0].k == V_RT &&
      a.v[1].items[1].k == V_RT && a.v[1].items[0].v->type->kind == TY_TILE &&
      a.v[1].items[1].v->type->kind == TY_TILE) { /* the pair of one mma_async */
    acc = a.v[1].items[0].v;
    acc2 = a.v[1].items[1].v;
  } else if (a.given[1]) {
    if (a.v[1].k != V_RT || a.v[1].v->type->kind != TY_TILE) {
      dg_error(s->c, a.loc[1], "%s takes the accumulator tile whose registers it waits for, not %s%s", name,
               sv_desc(s, a.v[1]), a.v[1].k == V_TUPLE ? " (or a pair of tiles, as mma_async returns)" : "");
      return sv_err();
    }
    acc = a.v[1].v;
  }
  /* after = x: a scheduling hint, "do not wait before x is computed" (see
   * lower_hw.c); x is a run-time value, best a small one (row statistics) */
  TValue *after = NULL;
  if (a.given[2]) {
    if (a.v[2].k != V_RT || (a.v[2].v->type->kind != TY_SCALAR && a.v[2].v->type->kind != TY_TILE) ||
        a.v[2].v->type->elem.dt == DT_PTR) {
      dg_error(s->c, a.loc[2], "after = takes a number or a tile of numbers computed at run time, not %s",
               sv_desc(s, a.v[2]));
      return sv_err();
    }
    after = a.v[2].v;
  }
  /* release = bar: one elected arrival on bar right after the wait, before
   * anything reads the accumulator (frees the operand buffers the finished
   * MMAs read, without the compiler scheduling the arrival late) */
  TValue *rel = NULL;
  if (a.given[3]) {
    if (!(rel = bar_arg(s, &a, 3, name))) return sv_err();
  }
  TValue *ops[4];
  int nops = 0;
  if (acc) ops[nops++] = acc;
  if (acc2) ops[nops++] = acc2;
  if (after) ops[nops++] = after;
  int after_at = after ? nops : 0;
  if (rel) ops[nops++] = rel;
  /* results: the accumulator(s), registers tied to the wait */
  TOp *op = ir_op(s->c, opc, call->loc, nops, ops, acc2 ? 2 : acc ? 1 : 0,
                  (Type *[]){acc ? acc->type : NULL, acc2 ? acc2->type : NULL});
  ir_append(s->blk, op);
  op->ival = n;
  op->ival2 = after_at;          /* 1 + the index of `after` */
  op->pred = rel ? nops : 0;     /* 1 + the index of `release` */
  if (acc2) {
    SVal *items = ar_alloc(&s->c->arena, 2 * sizeof *items);
    items[0] = sv_rt(op->res[0]);
    items[1] = sv_rt(op->res[1]);
    return (SVal){.k = V_TUPLE, .n = 2, .items = items};
  }
  return acc ? sv_rt(op->res[0]) : (SVal){.k = V_VOID};
}

/* sem_wait(ptr, value) / sem_signal(ptr, value): a counter in global
 * memory that orders work across CTAs (the deterministic dQ reduction of
 * attention's backward: each block's contributions added in a fixed order).
 * sem_wait: every thread of the group spins on an acquire load until
 * *ptr >= value (unsigned; the counter only grows: a lane that reads late,
 * after its group's elected thread has signalled value + 1, must still
 * leave, which == would not let it), then a proxy fence orders what it saw
 * before its own bulk
 * (TMA) accesses. sem_signal: the elected thread stores value with release
 * semantics, after a proxy fence, so that its completed bulk (TMA) writes
 * (tma_store_flush) are visible to whoever then waits for the value. */
static SVal b_sem(S *s, Node *call, Node *self, bool wait) {
  static const Spec sp = {{"ptr", "value"}, 2};
  const char *name = wait ? "sem_wait" : "sem_signal";
  BArgs a;
  if (!sm_bind_args(s, call, self, name, &sp, &a)) return sv_err();
  SVal p = a.v[0];
  if (p.k != V_RT || p.v->type->kind != TY_SCALAR || p.v->type->elem.dt != DT_PTR ||
      (p.v->type->elem.pointee != DT_I32 && p.v->type->elem.pointee != DT_U32)) {
    dg_error(s->c, a.loc[0], "'%s' needs one pointer to a 32-bit integer in global memory (*i32 or *u32), not %s",
             name, sv_desc(s, p));
    return sv_err();
  }
  TValue *v = int_arg(s, &a, 1, name, "the value");
  if (!v) return sv_err();
  emit(s, wait ? OP_SEM_WAIT : OP_SEM_SIGNAL, call->loc, 2, (TValue *[]){p.v, v}, NULL);
  return (SVal){.k = V_VOID};
}

static bool in_one_warpgroup(S *s, Loc loc, const char *name) {
  if (s->warps == 4) return true;
  dg_error(s->c, loc, "'%s' runs on one warpgroup (4 warps); here the code runs on %d warps (put it in a task with "
                      "warps = 4)",
           name, s->warps);
  return false;
}

/* mma_async(a, b, acc): acc + a @ b on wgmma, a and b in shared memory:
 * a is [M, K] with K contiguous, b is [K, N] given as view.trans() of an
 * [N, K] buffer (K contiguous).
 * acc may be a pair (acc1, acc2) of [M, N1] and [M, N2] tiles, N1 + N2 = N:
 * one wgmma of N columns whose accumulator is the two side by side (its
 * registers are acc1's then acc2's), returned as a pair. Register tiles
 * are powers of two; this gives a wgmma of N = 160 (128 + 32) without a
 * narrow second wgmma that would reread a.
 * Likewise a register-tile a may be a pair (a1, a2) of [M, K1] and [M, K2]
 * tiles side by side along K: one chain of wgmmas over K = K1 + K2 (P V
 * of a 160-key block), not two chains (the second would wait at its
 * wgmma.fence for the first to finish with the accumulator). */
static SVal b_mma_async(S *s, Node *call, Node *self) {
  static const Spec sp = {{"a", "b", "acc"}, 3};
  BArgs a;
  if (!sm_bind_args(s, call, self, "mma_async", &sp, &a)) return sv_err();
  if (s->c->sm != 90) {
    dg_error(s->c, call->loc, "mma_async on %s lowers to tcgen05.mma, which is not supported yet", s->c->arch);
    return sv_err();
  }
  /* operand a: a shared-memory view, or a register tile (wgmma with A in
   * registers), or a pair of register tiles side by side along K */
  TValue *x2 = NULL;
  if (a.v[0].k == V_TUPLE && a.v[0].n == 2 && a.v[0].items[0].k == V_RT && a.v[0].items[1].k == V_RT &&
      a.v[0].items[0].v->type->kind == TY_TILE && a.v[0].items[1].v->type->kind == TY_TILE) {
    TValue *p1 = a.v[0].items[0].v, *p2 = a.v[0].items[1].v;
    if (p1->type->rank != 2 || p2->type->rank != 2 || p1->type->shape[0] != p2->type->shape[0] ||
        !ty_elem_eq(p1->type->elem, p2->type->elem) || p1->type->shape[1] % 16 || p2->type->shape[1] % 16) {
      dg_error(s->c, a.loc[0], "operand a of mma_async as a pair: two 2-D tiles with the same rows and dtype, each "
                               "K a multiple of 16; got %s and %s",
               ty_str(s->c, p1->type), ty_str(s->c, p2->type));
      return sv_err();
    }
    a.v[0] = a.v[0].items[0];
    x2 = p2;
  } else if (a.v[0].k == V_TUPLE) {
    dg_error(s->c, a.loc[0], "operand a of mma_async as a pair is two register tiles side by side along K, not %s "
                             "(a shared-memory a is one view: slice or widen it instead)",
             sv_desc(s, a.v[0]));
    return sv_err();
  }
  bool a_regs = a.v[0].k == V_RT && a.v[0].v->type->kind == TY_TILE;
  TValue *x = a_regs ? a.v[0].v : view_arg(s, &a, 0, "mma_async", "operand a");
  TValue *y = x ? view_arg(s, &a, 1, "mma_async", "operand b") : NULL;
  if (!x || !y) return sv_err();
  if (a_regs && x->type->rank != 2) {
    dg_error(s->c, a.loc[0], "operand a of mma_async must be a 2-D tile [M, K], not %s", ty_str(s->c, x->type));
    return sv_err();
  }
  TValue *acc = a.v[2].k == V_RT ? a.v[2].v : NULL, *acc2 = NULL;
  if (a.v[2].k == V_TUPLE && a.v[2].n == 2 && a.v[2].items[0].k == V_RT && a.v[2].items[1].k == V_RT) {
    acc = a.v[2].items[0].v;
    acc2 = a.v[2].items[1].v;
  }
  for (int i = 0; i < 2; i++) {
    TValue *t = i ? acc2 : acc;
    if (i && !t) break;
    if (!t || t->type->kind != TY_TILE || t->type->rank != 2 || t->type->elem.dt != DT_F32) {
      dg_error(s->c, a.loc[2], "the accumulator of mma_async must be an f32 tile [M, N] (or a pair of them side by "
                               "side), not %s",
               sv_desc(s, a.v[2]));
      return sv_err();
    }
  }
  if (acc2 && (acc->type->shape[1] % 8 || acc2->type->shape[1] % 8)) {
    dg_error(s->c, a.loc[2], "the two accumulators of mma_async, %s and %s, must each have a multiple of 8 columns "
                             "(whole 8-column blocks of the wgmma fragment)",
             ty_str(s->c, acc->type), ty_str(s->c, acc2->type));
    return sv_err();
  }
  int n_acc = acc->type->shape[1] + (acc2 ? acc2->type->shape[1] : 0);
  if (acc2 && acc2->type->shape[0] != acc->type->shape[0]) {
    dg_error(s->c, a.loc[2], "the two accumulators of mma_async, %s and %s, must have the same rows",
             ty_str(s->c, acc->type), ty_str(s->c, acc2->type));
    return sv_err();
  }
  DType dt = (DType)x->type->elem.dt;
  if (dt != y->type->elem.dt || (dt != DT_BF16 && dt != DT_F16)) {
    dg_error(s->c, call->loc, "mma_async needs two bf16 or two f16 operands, not %s and %s", ty_str(s->c, x->type),
             ty_str(s->c, y->type));
    return sv_err();
  }
  int M = x->type->shape[0], K = x->type->shape[1] + (x2 ? x2->type->shape[1] : 0), K2 = y->type->shape[0],
      N = y->type->shape[1];
  if (K != K2 || acc->type->shape[0] != M || n_acc != N) {
    dg_error(s->c, call->loc, "mma_async of %s and %s into %s%s%s: shapes must be [M, K], [K, N] and [M, N]%s",
             ty_str(s->c, x->type), ty_str(s->c, y->type), ty_str(s->c, acc->type), acc2 ? " + " : "",
             acc2 ? ty_str(s->c, acc2->type) : "", acc2 ? " (the two accumulators' columns adding up to N)" : "");
    return sv_err();
  }
  bool a_mn = !a_regs && x->type->trans; /* [M, K] stored with M contiguous: view.trans() of a [K, M] buffer */
  bool b_mn = !y->type->trans; /* [K, N] stored with N contiguous (e.g. V in attention) */
  if (M != 64) {
    dg_error(s->c, call->loc, "mma_async of [%d, %d] x [%d, %d]: a warpgroup's wgmma computes M = 64 rows (split the "
                              "rows over tasks or replicas)",
             M, K, K, N);
    return sv_err();
  }
  if (M % 64 || N % 8 || N > 256 || K % 16) {
    dg_error(s->c, call->loc, "mma_async of [%d, %d] x [%d, %d]: wgmma needs M a multiple of 64, N a multiple of 8 "
                              "up to 256, and K a multiple of 16",
             M, K, K, N);
    return sv_err();
  }
  int eb = ty_dtype_bytes(dt);
  /* K-major operands: whole 128-byte rows of K (several column blocks
   * make one chain of wgmmas over all of K) */
  bool a_ok = a_regs || (x->type->swizzle == 128 && (a_mn ? (M * eb) % 128 == 0 : (K * eb) % 128 == 0));
  bool b_ok = y->type->swizzle == 128 && (b_mn ? (N * eb) % 128 == 0 : (K * eb) % 128 == 0);
  if (!a_ok || !b_ok) {
    dg_error(s->c, call->loc, "mma_async reads shared memory with a 128-byte swizzle: K-major operands are whole "
                              "128-byte rows of K (K a multiple of %d), an N-contiguous b (or M-contiguous a, "
                              "view.trans()) is whole 128-byte blocks of N (M); got %s and %s",
             128 / eb, ty_str(s->c, x->type), ty_str(s->c, y->type));
    return sv_err();
  }
  if (!in_one_warpgroup(s, call->loc, "mma_async")) return sv_err();
  /* operands: a, b, acc, [acc2], [a2] (op->ival = 1: the last is a2) */
  TValue *ops[5] = {x, y, acc};
  int nops = 3;
  if (acc2) ops[nops++] = acc2;
  if (x2) ops[nops++] = x2;
  TOp *op = ir_op(s->c, OP_MMA_ASYNC, call->loc, nops, ops, acc2 ? 2 : 1, (Type *[]){acc->type, acc2 ? acc2->type : NULL});
  op->ival = x2 != NULL;
  ir_append(s->blk, op);
  if (!acc2) return sv_rt(op->res[0]);
  SVal *items = ar_alloc(&s->c->arena, 2 * sizeof *items);
  items[0] = sv_rt(op->res[0]);
  items[1] = sv_rt(op->res[1]);
  return (SVal){.k = V_TUPLE, .n = 2, .items = items};
}

static const char *const blackwell_only[] = {"tmem", "tmem_load", "tmem_store", NULL};

static SVal b_cluster_rank(S *s, Node *call, Node *self) {
  if (call->nlist || self) dg_error(s->c, call->loc, "cluster_rank() takes no arguments");
  return sv_rt(emit(s, OP_CLUSTER_RANK, call->loc, 0, NULL, ty_dt(s->c, DT_I32))->res[0]);
}

/* cluster_sync(): every thread of every CTA of the kernel's cluster meets there (barrier.cluster): after the
 * mbarriers are declared, before another CTA's are arrived on (barrier_arrive(..., cta = r)) or its shared
 * memory written (multicast, dsmem_copy); at the end, before a CTA exits while the others may still do so. */
static SVal b_cluster_sync(S *s, Node *call, Node *self) {
  if (call->nlist || self) dg_error(s->c, call->loc, "cluster_sync() takes no arguments");
  else if (s->kf->cluster[0] * s->kf->cluster[1] * s->kf->cluster[2] < 2)
    dg_error(s->c, call->loc, "cluster_sync() syncs the CTAs of a cluster, but the kernel runs without clusters "
                              "(add cluster(N))");
  else if (s->in_task)
    dg_error(s->c, call->loc, "cluster_sync() waits for every thread of the cluster: call it outside tasks { }");
  else emit(s, OP_CLUSTER_SYNC, call->loc, 0, NULL, NULL);
  return (SVal){.k = V_VOID};
}

bool sm_builtin_hw(S *s, Node *call, const char *name, Node *self, SVal *out) {
  for (int i = 0; blackwell_only[i]; i++)
    if (!strcmp(name, blackwell_only[i])) {
      if (s->c->sm < 100) dg_error(s->c, call->loc, "'%s': tensor memory exists only on Blackwell (sm_100a), not %s",
                                   name, s->c->arch);
      else dg_error(s->c, call->loc, "'%s' is not supported yet on %s", name, s->c->arch);
      *out = sv_err();
      return true;
    }
  if (!strcmp(name, "smem")) *out = b_smem(s, call, self);
  else if (!strcmp(name, "cluster_rank")) *out = b_cluster_rank(s, call, self);
  else if (!strcmp(name, "cluster_sync")) *out = b_cluster_sync(s, call, self);
  else if (!strcmp(name, "mbarrier")) *out = b_mbarrier(s, call, self);
  else if (!strcmp(name, "slice")) *out = b_slice(s, call, self);
  else if (!strcmp(name, "smem_load")) *out = b_smem_load(s, call, self);
  else if (!strcmp(name, "smem_read")) *out = b_smem_elem(s, call, self, false);
  else if (!strcmp(name, "smem_write")) *out = b_smem_elem(s, call, self, true);
  else if (!strcmp(name, "smem_store")) *out = b_smem_store(s, call, self);
  else if (!strcmp(name, "barrier_expect")) *out = b_bar_op(s, call, self, OP_BAR_EXPECT, name);
  else if (!strcmp(name, "barrier_arrive")) *out = b_bar_op(s, call, self, OP_BAR_ARRIVE, name);
  else if (!strcmp(name, "barrier_wait")) *out = b_bar_op(s, call, self, OP_BAR_WAIT, name);
  else if (!strcmp(name, "named_barrier")) *out = b_named_barrier(s, call, self, false);
  else if (!strcmp(name, "named_barrier_arrive")) *out = b_named_barrier(s, call, self, true);
  else if (!strcmp(name, "tma_load")) *out = b_tma(s, call, self, true, false);
  else if (!strcmp(name, "tma_store")) *out = b_tma(s, call, self, false, false);
  else if (!strcmp(name, "tma_store_add")) *out = b_tma(s, call, self, false, true);
  else if (!strcmp(name, "tma_store_wait")) *out = b_wait_n(s, call, self, OP_TMA_STORE_WAIT, name);
  else if (!strcmp(name, "dsmem_copy")) *out = b_dsmem_copy(s, call, self);
  else if (!strcmp(name, "bulk_store_add")) *out = b_bulk_store_add(s, call, self, true);
  else if (!strcmp(name, "bulk_store")) *out = b_bulk_store_add(s, call, self, false);
  else if (!strcmp(name, "bulk_load")) *out = b_bulk_load(s, call, self);
  else if (!strcmp(name, "tma_store_flush")) {
    /* the writes to global memory are done, not just the reads of shared memory */
    *out = b_wait_n(s, call, self, OP_TMA_STORE_WAIT, name);
    if (out->k != V_ERR) s->blk->last->ival2 = 1;
  } else if (!strcmp(name, "sem_wait")) *out = b_sem(s, call, self, true);
  else if (!strcmp(name, "sem_signal")) *out = b_sem(s, call, self, false);
  else if (!strcmp(name, "mma_async")) *out = b_mma_async(s, call, self);
  else if (!strcmp(name, "mma_wait")) *out = b_wait_n(s, call, self, OP_MMA_WAIT, name);
  else if (!strcmp(name, "task_barrier")) {
    if (call->nlist || self) dg_error(s->c, call->loc, "task_barrier() takes no arguments");
    if (!s->in_task) {
      dg_error(s->c, call->loc, "task_barrier() synchronizes the warps of one task replica; use it inside a task");
      *out = sv_err();
      return true;
    }
    emit(s, OP_NAMED_BAR, call->loc, 0, NULL, NULL);
    *out = (SVal){.k = V_VOID};
  } else if (!strcmp(name, "fence_async_shared") || !strcmp(name, "mma_commit") || !strcmp(name, "replica_id")) {
    if (call->nlist || self) {
      dg_error(s->c, call->loc, "%s() takes no arguments", name);
      *out = sv_err();
      return true;
    }
    Opcode opc = name[0] == 'f' ? OP_FENCE_ASYNC : name[0] == 'm' ? OP_MMA_COMMIT : OP_REPLICA_ID;
    if (opc == OP_MMA_COMMIT && s->c->sm != 90) {
      dg_error(s->c, call->loc, "mma_commit on %s (tcgen05.commit) is not supported yet", s->c->arch);
      *out = sv_err();
      return true;
    }
    if (opc == OP_REPLICA_ID && !s->in_task) {
      dg_error(s->c, call->loc, "replica_id() is only meaningful inside a task");
      *out = sv_err();
      return true;
    }
    TOp *op = emit(s, opc, call->loc, 0, NULL, opc == OP_REPLICA_ID ? ty_dt(s->c, DT_I32) : NULL);
    *out = opc == OP_REPLICA_ID ? sv_rt(op->res[0]) : (SVal){.k = V_VOID};
  } else {
    return false;
  }
  return true;
}

/* The argument helpers builtins_sm100.c shares. */
TValue *sm_hw_view_arg(S *s, BArgs *a, int i, const char *fname, const char *what) {
  return view_arg(s, a, i, fname, what);
}
TValue *sm_hw_bar_arg(S *s, BArgs *a, int i, const char *fname) { return bar_arg(s, a, i, fname); }
TValue *sm_hw_int_arg(S *s, BArgs *a, int i, const char *fname, const char *what) {
  return int_arg(s, a, i, fname, what);
}

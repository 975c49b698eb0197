/* builtins.c - the built-in functions of the core language: argument
 * type checks with messages that name shapes and dtypes (the arguments bound
 * by sema_val.c's sm_bind_args), and the
 * TIR they emit.  Explicit-hardware primitives (shared memory, barriers, TMA,
 * async MMA) are recognized and rejected with "not supported yet". */
#include "sema.h"
#include <math.h>
#include <string.h>

static TValue *tile_arg(S *s, SVal v, Loc loc, const char *fname, const char *what) {
  if (v.k == V_RT) return v.v;
  if (sv_is_const(v)) return sm_rt(s, v, loc);
  if (v.k != V_ERR) dg_error(s->c, loc, "'%s' needs a tile or a number as %s, not %s", fname, what, sv_desc(s, v));
  return NULL;
}

static int rank_of(TValue *v) { return v->type->kind == TY_TILE ? v->type->rank : 0; }

static bool dtype_arg(S *s, BArgs *a, int i, Elem *out, const char *fname) {
  if (!a->given[i]) return false;
  if (a->v[i].k != V_DTYPE) {
    dg_error(s->c, a->loc[i], "'%s' expects a type such as f32 here, not %s", fname, sv_desc(s, a->v[i]));
    return false;
  }
  *out = a->v[i].elem;
  return true;
}

static SVal b_program_id(S *s, Node *call, Node *self, Opcode opc, const char *name) {
  static const Spec sp = {{"axis"}, 0};
  BArgs a;
  if (!sm_bind_args(s, call, self, name, &sp, &a)) return sv_err();
  int64_t axis = 0;
  if (a.given[0] && !sm_const_int(s, a.v[0], a.loc[0], "the axis", &axis)) return sv_err();
  if (axis < 0 || axis > 2) {
    dg_error(s->c, a.loc[0], "%s axis must be 0, 1 or 2, not %lld", name, (long long)axis);
    return sv_err();
  }
  TOp *op = ir_op(s->c, opc, call->loc, 0, NULL, 1, (Type *[]){ty_dt(s->c, DT_I32)});
  op->axis = (int)axis;
  ir_append(s->blk, op);
  return sv_rt(op->res[0]);
}

static SVal b_arange(S *s, Node *call, Node *self) {
  static const Spec sp = {{"start", "end"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "arange", &sp, &a)) return sv_err();
  int64_t lo, hi;
  if (!sm_const_int(s, a.v[0], a.loc[0], "the start of arange", &lo) ||
      !sm_const_int(s, a.v[1], a.loc[1], "the end of arange", &hi))
    return sv_err();
  if (lo < INT32_MIN || lo > INT32_MAX || hi < INT32_MIN || hi > INT32_MAX) {
    dg_error(s->c, call->loc, "arange bounds must fit in i32");
    return sv_err();
  }
  int64_t n = hi - lo;
  if (n <= 0 || (n & (n - 1)) || n > TC_MAX_ELEMS) {
    dg_error(s->c, call->loc, "arange(%lld, %lld) has %lld elements; the count must be a power of two (1 to %d)",
             (long long)lo, (long long)hi, (long long)n, TC_MAX_ELEMS);
    return sv_err();
  }
  if (lo < INT32_MIN || hi > INT32_MAX) {
    dg_error(s->c, call->loc, "arange bounds must fit in i32");
    return sv_err();
  }
  int shape[1] = {(int)n};
  TOp *op = ir_op(s->c, OP_ARANGE, call->loc, 0, NULL, 1, (Type *[]){ty_tile(s->c, (Elem){DT_I32, 0}, 1, shape)});
  op->ival = lo;
  op->ival2 = hi;
  ir_append(s->blk, op);
  return sv_rt(op->res[0]);
}

static SVal b_full(S *s, Node *call, Node *self, bool zeros) {
  static const Spec spz = {{"shape", "dtype"}, 1};
  static const Spec spf = {{"shape", "value", "dtype"}, 2};
  const char *name = zeros ? "zeros" : "full";
  BArgs a;
  if (!sm_bind_args(s, call, self, name, zeros ? &spz : &spf, &a)) return sv_err();
  int rank, shape[TC_MAX_RANK];
  if (!sm_shape_list(s, a.v[0], a.loc[0], ar_printf(&s->c->arena, "the shape of %s", name), &rank, shape))
    return sv_err();
  int di = zeros ? 1 : 2;
  SVal val = zeros ? sv_int(0, DT_VOID) : a.v[1];
  Elem e = {DT_F32, 0};
  if (a.given[di]) {
    if (!dtype_arg(s, &a, di, &e, name)) return sv_err();
  } else if (!zeros) {
    if (val.k == V_RT) e = val.v->type->elem;
    else if (val.k == V_INT) e = (Elem){DT_I32, 0};
    else if (val.k == V_BOOL) e = (Elem){DT_BOOL, 0};
    else if (val.k == V_FLOAT && val.dt != DT_VOID) e = (Elem){(uint8_t)val.dt, 0};
  }
  if (val.k == V_RT && val.v->type->kind != TY_SCALAR) {
    dg_error(s->c, a.loc[1], "the value of full() must be a scalar, not %s", ty_str(s->c, val.v->type));
    return sv_err();
  }
  TValue *v = sm_rt_as(s, val, e, call->loc);
  if (!v) return sv_err();
  return sv_rt(sm_splat(s, v, rank, shape, call->loc));
}

static SVal b_load(S *s, Node *call, Node *self) {
  static const Spec sp = {{"ptr", "mask", "other"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, "load", &sp, &a)) return sv_err();
  TValue *p = a.v[0].k == V_RT ? a.v[0].v : NULL;
  if (!p || p->type->elem.dt != DT_PTR) {
    dg_error(s->c, a.loc[0], "load needs a pointer or a tile of pointers, not %s", sv_desc(s, a.v[0]));
    return sv_err();
  }
  Elem pe = {p->type->elem.pointee, 0};
  TValue *mask = NULL, *other = NULL;
  int rank = rank_of(p), shape[TC_MAX_RANK];
  for (int i = 0; i < rank; i++) shape[i] = p->type->shape[i];
  if (a.given[1] && a.v[1].k != V_NONE) {
    if (a.v[1].k == V_BOOL) {
      if (!a.v[1].i) { /* nothing is loaded: the result is `other` */
        SVal o = a.given[2] && a.v[2].k != V_NONE ? a.v[2] : sv_int(0, DT_VOID);
        TValue *ov = sv_is_const(o) ? sm_rt_as(s, o, pe, a.loc[2]) : tile_arg(s, o, a.loc[2], "load", "'other'");
        if (!ov) return sv_err();
        if (!ty_elem_eq(ov->type->elem, pe)) {
          dg_error(s->c, a.loc[2], "'other' of load is %s but the pointers load %s", ty_str(s->c, ov->type),
                   ty_elem_str(s->c, pe));
          return sv_err();
        }
        TValue *r = sm_broadcast_to(s, ov, rank, shape, call->loc);
        return r ? sv_rt(r) : sv_err();
      }
    } else {
      mask = tile_arg(s, a.v[1], a.loc[1], "load", "the mask");
      if (!mask) return sv_err();
      if (mask->type->elem.dt != DT_BOOL) {
        dg_error(s->c, a.loc[1], "the mask of load must be bool, not %s (compare, e.g. 'offs < n')",
                 ty_str(s->c, mask->type));
        return sv_err();
      }
      if (rank_of(mask) > rank) { /* a scalar pointer with a tile mask: broadcast the pointer */
        rank = rank_of(mask);
        for (int i = 0; i < rank; i++) shape[i] = mask->type->shape[i];
      }
    }
  }
  if (a.given[2] && a.v[2].k != V_NONE) {
    if (sv_is_const(a.v[2])) {
      other = sm_rt_as(s, a.v[2], pe, a.loc[2]);
    } else {
      other = tile_arg(s, a.v[2], a.loc[2], "load", "'other'");
      if (other && !ty_elem_eq(other->type->elem, pe)) {
        dg_error(s->c, a.loc[2], "'other' of load is %s but the pointers load %s", ty_str(s->c, other->type),
                 ty_elem_str(s->c, pe));
        return sv_err();
      }
    }
    if (!other) return sv_err();
  }
  if (mask && !other) other = sm_rt_as(s, sv_int(0, DT_VOID), pe, call->loc);
  p = sm_broadcast_to(s, p, rank, shape, a.loc[0]);
  if (!p) return sv_err();
  if (mask) mask = sm_broadcast_to(s, mask, rank, shape, a.loc[1]);
  if (other) other = sm_broadcast_to(s, other, rank, shape, a.loc[2]);
  if ((a.given[1] && a.v[1].k != V_NONE && a.v[1].k != V_BOOL && !mask) || (a.given[2] && !other && a.v[2].k != V_NONE))
    return sv_err();
  TValue *ops[3] = {p, mask, other};
  int n = mask ? 3 : 1;
  TOp *op = ir_op(s->c, OP_LOAD, call->loc, n, ops, 1, (Type *[]){ty_with_elem(s->c, p->type, pe)});
  op->flags = mask ? (OPF_MASK | OPF_OTHER) : 0;
  ir_append(s->blk, op);
  return sv_rt(op->res[0]);
}

static SVal b_store_like(S *s, Node *call, Node *self, bool atomic) {
  static const Spec sp = {{"ptr", "value", "mask"}, 2};
  const char *name = atomic ? "atomic_add" : "store";
  BArgs a;
  if (!sm_bind_args(s, call, self, name, &sp, &a)) return sv_err();
  TValue *p = a.v[0].k == V_RT ? a.v[0].v : NULL;
  if (!p || p->type->elem.dt != DT_PTR) {
    dg_error(s->c, a.loc[0], "%s needs a pointer or a tile of pointers, not %s", name, sv_desc(s, a.v[0]));
    return sv_err();
  }
  Elem pe = {p->type->elem.pointee, 0};
  TValue *v;
  if (sv_is_const(a.v[1])) {
    v = sm_rt_as(s, a.v[1], pe, a.loc[1]);
  } else {
    v = tile_arg(s, a.v[1], a.loc[1], name, "the value");
    if (v && !ty_elem_eq(v->type->elem, pe)) {
      dg_error(s->c, a.loc[1], "%s of %s values through pointers to %s; convert with 'as %s'", name,
               ty_str(s->c, v->type), ty_elem_str(s->c, pe), ty_elem_str(s->c, pe));
      return sv_err();
    }
  }
  if (!v) return sv_err();
  if (atomic) {
    DType d = (DType)pe.dt;
    if (!(d == DT_F32 || d == DT_F16 || d == DT_BF16 || d == DT_I32 || d == DT_U32 || d == DT_I64 || d == DT_U64 ||
          d == DT_F64)) {
      dg_error(s->c, a.loc[0], "atomic_add does not support %s", ty_dtype_name(d));
      return sv_err();
    }
  }
  int rank = rank_of(p), shape[TC_MAX_RANK];
  for (int i = 0; i < rank; i++) shape[i] = p->type->shape[i];
  if (rank_of(v) > rank) {
    dg_error(s->c, a.loc[1], "%s of %s through %s: the value has more dimensions than the pointers", name,
             ty_str(s->c, v->type), ty_str(s->c, p->type));
    return sv_err();
  }
  TValue *mask = NULL;
  if (a.given[2] && a.v[2].k != V_NONE) {
    if (a.v[2].k == V_BOOL) {
      if (!a.v[2].i) { /* nothing is stored */
        if (atomic) return sv_rt(sm_broadcast_to(s, sm_rt_as(s, sv_int(0, DT_VOID), pe, call->loc), rank, shape, call->loc));
        return (SVal){.k = V_VOID};
      }
    } else {
      mask = tile_arg(s, a.v[2], a.loc[2], name, "the mask");
      if (!mask) return sv_err();
      if (mask->type->elem.dt != DT_BOOL) {
        dg_error(s->c, a.loc[2], "the mask of %s must be bool, not %s", name, ty_str(s->c, mask->type));
        return sv_err();
      }
      if (rank_of(mask) > rank) {
        rank = rank_of(mask);
        for (int i = 0; i < rank; i++) shape[i] = mask->type->shape[i];
      }
    }
  }
  p = sm_broadcast_to(s, p, rank, shape, a.loc[0]);
  v = p ? sm_broadcast_to(s, v, rank, shape, a.loc[1]) : NULL;
  if (mask && v) mask = sm_broadcast_to(s, mask, rank, shape, a.loc[2]);
  if (!p || !v || (a.given[2] && a.v[2].k == V_RT && !mask)) return sv_err();
  TValue *ops[3] = {p, v, mask};
  TOp *op = ir_op(s->c, atomic ? OP_ATOMIC_ADD : OP_STORE, call->loc, mask ? 3 : 2, ops, atomic ? 1 : 0,
                  (Type *[]){v->type});
  op->flags = mask ? OPF_MASK : 0;
  ir_append(s->blk, op);
  return atomic ? sv_rt(op->res[0]) : (SVal){.k = V_VOID};
}

static SVal b_dot(S *s, Node *call, Node *self) {
  static const Spec sp = {{"a", "b", "acc"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "dot", &sp, &a)) return sv_err();
  TValue *x = tile_arg(s, a.v[0], a.loc[0], "dot", "a"), *y = x ? tile_arg(s, a.v[1], a.loc[1], "dot", "b") : NULL;
  if (!x || !y) return sv_err();
  if (rank_of(x) != 2 || rank_of(y) != 2) {
    dg_error(s->c, call->loc, "dot multiplies 2-D tiles, not %s and %s", ty_str(s->c, x->type), ty_str(s->c, y->type));
    return sv_err();
  }
  int M = x->type->shape[0], K = x->type->shape[1], K2 = y->type->shape[0], N = y->type->shape[1];
  if (K != K2) {
    dg_error(s->c, call->loc, "dot of %s and %s: inner dimensions differ (%d vs %d)", ty_str(s->c, x->type),
             ty_str(s->c, y->type), K, K2);
    return sv_err();
  }
  DType dx = (DType)x->type->elem.dt, dy = (DType)y->type->elem.dt;
  if (dx != dy || !(dx == DT_F16 || dx == DT_BF16 || dx == DT_F32)) {
    dg_error(s->c, call->loc, "dot needs two f16, two bf16 or two f32 tiles, not %s and %s", ty_str(s->c, x->type),
             ty_str(s->c, y->type));
    return sv_err();
  }
  int kmin = dx == DT_F32 ? 8 : 16;
  if (M < 16 || N < 8 || K < kmin) {
    dg_error(s->c, call->loc, "dot of %s and %s is smaller than a tensor-core instruction: needs M >= 16, N >= 8, "
                              "K >= %d",
             ty_str(s->c, x->type), ty_str(s->c, y->type), kmin);
    return sv_err();
  }
  int shape[2] = {M, N};
  Type *rt = ty_tile(s->c, (Elem){DT_F32, 0}, 2, shape);
  TValue *acc;
  if (a.given[2] && a.v[2].k != V_NONE) {
    acc = tile_arg(s, a.v[2], a.loc[2], "dot", "acc");
    if (!acc) return sv_err();
    if (sv_is_const(a.v[2])) acc = sm_splat(s, sm_rt_as(s, a.v[2], (Elem){DT_F32, 0}, a.loc[2]), 2, shape, a.loc[2]);
    if (!ty_eq(acc->type, rt)) {
      dg_error(s->c, a.loc[2], "the accumulator of dot must be %s, not %s", ty_str(s->c, rt), ty_str(s->c, acc->type));
      return sv_err();
    }
  } else {
    acc = sm_splat(s, sm_rt_as(s, sv_float(0, DT_VOID), (Elem){DT_F32, 0}, call->loc), 2, shape, call->loc);
  }
  return sv_rt(sm_emit1(s, OP_DOT, call->loc, 3, (TValue *[]){x, y, acc}, rt));
}

static SVal reduce_axis(S *s, TValue *v, int axis, RedKind k, Loc loc) {
  int r = rank_of(v), shape[TC_MAX_RANK];
  for (int i = 0, j = 0; i < r; i++)
    if (i != axis) shape[j++] = v->type->shape[i];
  Elem e = v->type->elem;
  if (k == RED_SUM && (e.dt == DT_F16 || e.dt == DT_BF16)) {
    v = sm_cast(s, v, (Elem){DT_F32, 0}, loc); /* accumulate halves in f32 */
    e = (Elem){DT_F32, 0};
  }
  TOp *op = ir_op(s->c, OP_REDUCE, loc, 1, &v, 1, (Type *[]){ty_tile(s->c, e, r - 1, shape)});
  op->axis = axis;
  op->pred = k;
  ir_append(s->blk, op);
  return sv_rt(op->res[0]);
}

static SVal b_reduce(S *s, Node *call, Node *self, RedKind k, const char *name) {
  static const Spec sp = {{"x", "axis"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, name, &sp, &a)) return sv_err();
  TValue *v = tile_arg(s, a.v[0], a.loc[0], name, "x");
  if (!v) return sv_err();
  if (rank_of(v) == 0) {
    dg_error(s->c, a.loc[0], "%s reduces a tile, not the scalar %s", name, ty_str(s->c, v->type));
    return sv_err();
  }
  DType d = (DType)v->type->elem.dt;
  if (d == DT_BOOL || d == DT_PTR) {
    dg_error(s->c, a.loc[0], "%s of %s is not defined; cast to a number first", name, ty_str(s->c, v->type));
    return sv_err();
  }
  if (!a.given[1] || a.v[1].k == V_NONE) {
    SVal r = sv_rt(v);
    while (r.k == V_RT && rank_of(r.v) > 0) r = reduce_axis(s, r.v, rank_of(r.v) - 1, k, call->loc);
    return r;
  }
  int64_t axis;
  if (!sm_const_int(s, a.v[1], a.loc[1], "the axis", &axis)) return sv_err();
  if (axis < 0) axis += rank_of(v);
  if (axis < 0 || axis >= rank_of(v)) {
    dg_error(s->c, a.loc[1], "axis %lld is out of range for %s", (long long)axis, ty_str(s->c, v->type));
    return sv_err();
  }
  return reduce_axis(s, v, (int)axis, k, call->loc);
}

/* any(x) / all(x): whether some / every element of a bool tile is true, as
 * one scalar that every thread holds (one barrier reduction across the
 * CTA, or across the task replica inside a task). */
static SVal b_vote(S *s, Node *call, Node *self, bool is_any) {
  const char *name = is_any ? "any" : "all";
  static const Spec sp = {{"x"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, name, &sp, &a)) return sv_err();
  if (sv_is_const(a.v[0])) {
    if (a.v[0].k == V_BOOL) return a.v[0];
  } else if (a.v[0].k == V_RT && a.v[0].v->type->elem.dt == DT_BOOL) {
    TValue *v = a.v[0].v;
    if (rank_of(v) == 0) return a.v[0];
    TOp *op = ir_op(s->c, OP_REDUCE, call->loc, 1, &v, 1, (Type *[]){ty_tile(s->c, v->type->elem, 0, NULL)});
    op->axis = -1;
    op->pred = is_any ? RED_ANY : RED_ALL;
    ir_append(s->blk, op);
    return sv_rt(op->res[0]);
  }
  dg_error(s->c, a.loc[0], "%s needs a bool tile (a comparison), not %s", name, sv_desc(s, a.v[0]));
  return sv_err();
}

static SVal b_minmax(S *s, Node *call, Node *self, bool is_max) {
  const char *name = is_max ? "max" : "min";
  int nargs = call->nlist + (self ? 1 : 0);
  bool has_axis = false;
  for (int i = 0; i < call->nlist; i++) has_axis |= call->list[i]->argname && !strcmp(call->list[i]->argname, "axis");
  if (nargs == 1 || has_axis) return b_reduce(s, call, self, is_max ? RED_MAX : RED_MIN, name);
  static const Spec sp = {{"a", "b"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, name, &sp, &a)) return sv_err();
  SVal x = a.v[0], y = a.v[1];
  if (sv_is_const(x) && sv_is_const(y)) {
    bool fl = x.k == V_FLOAT || y.k == V_FLOAT;
    double fx = x.k == V_FLOAT ? x.f : (double)x.i, fy = y.k == V_FLOAT ? y.f : (double)y.i;
    if (fl) return sv_float(is_max ? fmax(fx, fy) : fmin(fx, fy), x.k == V_FLOAT ? x.dt : y.dt);
    return sv_int(is_max ? (x.i > y.i ? x.i : y.i) : (x.i < y.i ? x.i : y.i), x.dt != DT_VOID ? x.dt : y.dt);
  }
  if (!sm_unify(s, &x, &y, call->loc, name)) return sv_err();
  if (x.v->type->elem.dt == DT_BOOL || x.v->type->elem.dt == DT_PTR) {
    dg_error(s->c, call->loc, "%s is not defined on %s", name, ty_str(s->c, x.v->type));
    return sv_err();
  }
  return sv_rt(sm_emit1(s, is_max ? OP_MAX : OP_MIN, call->loc, 2, (TValue *[]){x.v, y.v}, x.v->type));
}

static SVal b_where(S *s, Node *call, Node *self) {
  static const Spec sp = {{"cond", "a", "b"}, 3};
  BArgs a;
  if (!sm_bind_args(s, call, self, "where", &sp, &a)) return sv_err();
  if (a.v[0].k == V_BOOL) return a.v[0].i ? a.v[1] : a.v[2];
  TValue *c = tile_arg(s, a.v[0], a.loc[0], "where", "the condition");
  if (!c) return sv_err();
  if (c->type->elem.dt != DT_BOOL) {
    dg_error(s->c, a.loc[0], "the condition of where must be bool, not %s", ty_str(s->c, c->type));
    return sv_err();
  }
  SVal x = a.v[1], y = a.v[2];
  if (!sm_unify(s, &x, &y, call->loc, "where")) return sv_err();
  SVal cv = sv_rt(c), xv = x;
  /* broadcast all three to one shape */
  if (!sm_unify(s, &cv, &xv, call->loc, "where")) return sv_err();
  c = cv.v;
  int r = rank_of(c), shape[TC_MAX_RANK];
  for (int i = 0; i < r; i++) shape[i] = c->type->shape[i];
  /* cv/xv unify cast c to x's dtype; redo c from the original as bool */
  TValue *cb = tile_arg(s, a.v[0], a.loc[0], "where", "the condition");
  cb = sm_broadcast_to(s, cb, r, shape, a.loc[0]);
  TValue *xb = sm_broadcast_to(s, x.v, r, shape, a.loc[1]);
  TValue *yb = xb ? sm_broadcast_to(s, y.v, r, shape, a.loc[2]) : NULL;
  if (!cb || !xb || !yb) return sv_err();
  return sv_rt(sm_emit1(s, OP_SELECT, call->loc, 3, (TValue *[]){cb, xb, yb}, xb->type));
}

static SVal b_fma(S *s, Node *call, Node *self) {
  static const Spec sp = {{"a", "b", "c"}, 3};
  BArgs a;
  if (!sm_bind_args(s, call, self, "fma", &sp, &a)) return sv_err();
  SVal x = a.v[0], y = a.v[1], z = a.v[2];
  if (sv_is_const(x) && sv_is_const(y) && sv_is_const(z)) {
    double f[3];
    SVal v[3] = {x, y, z};
    for (int i = 0; i < 3; i++) f[i] = v[i].k == V_FLOAT ? v[i].f : (double)v[i].i;
    return sv_float(fma(f[0], f[1], f[2]), DT_VOID);
  }
  if (!sm_unify(s, &x, &y, call->loc, "fma") || !sm_unify(s, &x, &z, call->loc, "fma") ||
      !sm_unify(s, &y, &z, call->loc, "fma"))
    return sv_err();
  if (!ty_is_float((DType)x.v->type->elem.dt)) {
    dg_error(s->c, call->loc, "fma needs floating-point arguments, not %s", ty_str(s->c, x.v->type));
    return sv_err();
  }
  return sv_rt(sm_emit1(s, OP_FMA, call->loc, 3, (TValue *[]){x.v, y.v, z.v}, x.v->type));
}

/* fdiv(a, b): a / b by div.full.f32 (2 ulp over the whole range; lower_math.c),
 * where '/' on floats is the IEEE division (div.rn, several instructions). */
static SVal b_fdiv(S *s, Node *call, Node *self) {
  static const Spec sp = {{"a", "b"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "fdiv", &sp, &a)) return sv_err();
  SVal x = a.v[0], y = a.v[1];
  if (sv_is_const(x) && sv_is_const(y) && x.k != V_BOOL && y.k != V_BOOL) {
    double f = x.k == V_FLOAT ? x.f : (double)x.i, g = y.k == V_FLOAT ? y.f : (double)y.i;
    return sv_float(f / g, x.k == V_FLOAT ? x.dt : y.k == V_FLOAT ? y.dt : DT_VOID);
  }
  if (!sm_unify(s, &x, &y, call->loc, "fdiv")) return sv_err();
  DType dt = (DType)x.v->type->elem.dt;
  if (!ty_is_float(dt)) {
    dg_error(s->c, call->loc, "'fdiv' needs floating-point arguments, not %s; cast them first (e.g. 'x as f32')",
             ty_str(s->c, x.v->type));
    return sv_err();
  }
  if (dt == DT_F64 && sm_math_f32_only(OP_FDIV)) {
    dg_error(s->c, call->loc, "'fdiv' of f64 is not supported yet (the fast approximations are f32); use '/'");
    return sv_err();
  }
  return sv_rt(sm_emit1(s, OP_FDIV, call->loc, 2, (TValue *[]){x.v, y.v}, x.v->type));
}

static SVal b_range(S *s, Node *call, Node *self, bool is_static) {
  const char *name = is_static ? "static_range" : "range";
  static const Spec sp = {{"start", "end", "step"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, name, &sp, &a)) return sv_err();
  SVal r = {.k = V_RANGE, .is_static = is_static, .n = 3};
  r.items = ar_alloc(&s->c->arena, sizeof(SVal) * 3);
  if (!a.given[1]) {
    r.items[0] = sv_int(0, DT_VOID);
    r.items[1] = a.v[0];
  } else {
    r.items[0] = a.v[0];
    r.items[1] = a.v[1];
  }
  r.items[2] = a.given[2] ? a.v[2] : sv_int(1, DT_VOID);
  return r;
}

static SVal b_blocked(S *s, Node *call, Node *self) {
  static const Spec sp = {{"spt", "tpw", "wpc", "order"}, 4};
  BArgs a;
  if (!sm_bind_args(s, call, self, "blocked", &sp, &a)) return sv_err();
  int v[4][TC_MAX_RANK], rank = -1;
  static const char *what[] = {"spt (elements per thread)", "tpw (threads per warp)", "wpc (warps per CTA)",
                               "order"};
  for (int i = 0; i < 4; i++) {
    SVal l = a.v[i];
    if (l.k != V_LIST || l.n < 1 || l.n > TC_MAX_RANK) {
      dg_error(s->c, a.loc[i], "%s must be a list of 1 to %d integers", what[i], TC_MAX_RANK);
      return sv_err();
    }
    if (rank >= 0 && l.n != rank) {
      dg_error(s->c, a.loc[i], "%s has %d entries but spt has %d", what[i], l.n, rank);
      return sv_err();
    }
    rank = l.n;
    for (int j = 0; j < l.n; j++) {
      int64_t x;
      if (!sm_const_int(s, l.items[j], a.loc[i], what[i], &x)) return sv_err();
      if (i == 3 && (x < 0 || x >= l.n)) {
        dg_error(s->c, a.loc[i], "order must be a permutation of 0..%d, not contain %lld", l.n - 1, (long long)x);
        return sv_err();
      }
      if (i < 3 && (x <= 0 || (x & (x - 1)) || x > 1024)) {
        dg_error(s->c, a.loc[i], "%s entries must be powers of two, got %lld", what[i], (long long)x);
        return sv_err();
      }
      v[i][j] = (int)x;
    }
  }
  int64_t prod_t = 1, prod_w = 1;
  int seen = 0;
  for (int j = 0; j < rank; j++) {
    prod_t *= v[1][j]; /* each entry <= 1024, rank <= 4: fits in 64 bits */
    prod_w *= v[2][j];
    if (v[3][j] < 0 || v[3][j] >= rank || (seen >> v[3][j] & 1)) {
      dg_error(s->c, a.loc[3], "order must be a permutation of 0..%d", rank - 1);
      return sv_err();
    }
    seen |= 1 << v[3][j];
  }
  if (prod_t != 32) {
    dg_error(s->c, a.loc[1], "threads per warp multiply to %lld, not 32", (long long)prod_t);
    return sv_err();
  }
  if (prod_w != s->warps) {
    dg_error(s->c, a.loc[2], "warps per CTA multiply to %lld, but the kernel has %d warps", (long long)prod_w, s->warps);
    return sv_err();
  }
  return (SVal){.k = V_LAYOUT, .layout = ly_blocked(s->c, rank, v[0], v[1], v[2], v[3])};
}

static SVal b_convert_layout(S *s, Node *call, Node *self) {
  static const Spec sp = {{"x", "layout"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "convert_layout", &sp, &a)) return sv_err();
  TValue *v = tile_arg(s, a.v[0], a.loc[0], "convert_layout", "x");
  if (!v) return sv_err();
  if (rank_of(v) == 0) {
    dg_error(s->c, a.loc[0], "convert_layout needs a tile, not %s", ty_str(s->c, v->type));
    return sv_err();
  }
  if (a.v[1].k != V_LAYOUT) {
    dg_error(s->c, a.loc[1], "convert_layout needs a layout such as blocked(...), not %s", sv_desc(s, a.v[1]));
    return sv_err();
  }
  const Layout *l = a.v[1].layout;
  LinLayout lin;
  const char *why = NULL;
  if (l->rank != rank_of(v) || !ly_linear(l, rank_of(v), v->type->shape, s->warps, &lin, &why)) {
    dg_error(s->c, a.loc[1], "layout %s cannot hold %s: %s", ly_str(s->c, l), ty_str(s->c, v->type),
             why ? why : "the ranks differ");
    return sv_err();
  }
  return sv_rt(sm_emit1(s, OP_CONVERT, call->loc, 1, &v, ty_with_layout(s->c, v->type, l)));
}

static SVal b_trans(S *s, Node *call, Node *self) {
  static const Spec sp = {{"x"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, "trans", &sp, &a)) return sv_err();
  if (a.v[0].k == V_RT && a.v[0].v->type->kind == TY_SMEM) return sm_view_trans(s, a.v[0].v, call->loc);
  TValue *v = tile_arg(s, a.v[0], a.loc[0], "trans", "x");
  if (!v) return sv_err();
  if (rank_of(v) != 2) {
    dg_error(s->c, a.loc[0], "trans needs a 2-D tile, not %s", ty_str(s->c, v->type));
    return sv_err();
  }
  int shape[2] = {v->type->shape[1], v->type->shape[0]};
  return sv_rt(sm_emit1(s, OP_TRANS, call->loc, 1, &v, ty_tile(s->c, v->type->elem, 2, shape)));
}

static SVal b_expand_dims(S *s, Node *call, Node *self) {
  static const Spec sp = {{"x", "axis"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "expand_dims", &sp, &a)) return sv_err();
  TValue *v = tile_arg(s, a.v[0], a.loc[0], "expand_dims", "x");
  int64_t axis;
  if (!v || !sm_const_int(s, a.v[1], a.loc[1], "the axis", &axis)) return sv_err();
  int r = rank_of(v);
  if (r + 1 > TC_MAX_RANK) {
    dg_error(s->c, call->loc, "expand_dims of %s would give %d dimensions; the limit is %d", ty_str(s->c, v->type), r + 1,
             TC_MAX_RANK);
    return sv_err();
  }
  if (axis < 0) axis += r + 1;
  if (axis < 0 || axis > r) {
    dg_error(s->c, a.loc[1], "axis %lld is out of range for expand_dims of %s", (long long)axis, ty_str(s->c, v->type));
    return sv_err();
  }
  int shape[TC_MAX_RANK];
  for (int i = 0, j = 0; i < r + 1; i++) shape[i] = i == axis ? 1 : v->type->shape[j++];
  if (r == 0) return sv_rt(sm_splat(s, v, 1, shape, call->loc));
  TOp *op = ir_op(s->c, OP_EXPAND_DIMS, call->loc, 1, &v, 1, (Type *[]){ty_tile(s->c, v->type->elem, r + 1, shape)});
  op->axis = (int)axis;
  ir_append(s->blk, op);
  return sv_rt(op->res[0]);
}

/* scale_rows(x, f) = x * f[:, None] for a 2-D float tile x and one factor
 * per row; a warp whose factors are all exactly 1 skips the multiplies (an
 * attention kernel's O rescale, where most blocks leave the max alone). */
static SVal b_scale_rows(S *s, Node *call, Node *self) {
  static const Spec sp = {{"x", "f"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "scale_rows", &sp, &a)) return sv_err();
  TValue *x = tile_arg(s, a.v[0], a.loc[0], "scale_rows", "x");
  TValue *f = tile_arg(s, a.v[1], a.loc[1], "scale_rows", "f");
  if (!x || !f) return sv_err();
  if (rank_of(x) != 2 || !ty_is_float((DType)x->type->elem.dt)) {
    dg_error(s->c, a.loc[0], "scale_rows scales a 2-D float tile, not %s", ty_str(s->c, x->type));
    return sv_err();
  }
  if (rank_of(f) != 1 || f->type->shape[0] != x->type->shape[0] || f->type->elem.dt != x->type->elem.dt) {
    dg_error(s->c, a.loc[1], "scale_rows of %s needs one %s factor per row (%s[%d]), not %s", ty_str(s->c, x->type),
             ty_dtype_name((DType)x->type->elem.dt), ty_dtype_name((DType)x->type->elem.dt), x->type->shape[0],
             ty_str(s->c, f->type));
    return sv_err();
  }
  int shape[2] = {f->type->shape[0], 1};
  TOp *e = ir_op(s->c, OP_EXPAND_DIMS, call->loc, 1, &f, 1, (Type *[]){ty_tile(s->c, f->type->elem, 2, shape)});
  e->axis = 1;
  ir_append(s->blk, e);
  SVal r = sm_binary(s, TK_STAR, sv_rt(x), sv_rt(e->res[0]), call->loc);
  if (r.k == V_RT && r.v->def && r.v->def->opc == OP_MUL) r.v->def->flags |= OPF_SKIP_ONES;
  return r;
}

static SVal b_broadcast_to(S *s, Node *call, Node *self) {
  static const Spec sp = {{"x", "shape"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "broadcast_to", &sp, &a)) return sv_err();
  TValue *v = tile_arg(s, a.v[0], a.loc[0], "broadcast_to", "x");
  int rank, shape[TC_MAX_RANK];
  if (!v || !sm_shape_list(s, a.v[1], a.loc[1], "the shape", &rank, shape)) return sv_err();
  TValue *r = sm_broadcast_to(s, v, rank, shape, call->loc);
  return r ? sv_rt(r) : sv_err();
}

static SVal b_static_assert(S *s, Node *call, Node *self) {
  static const Spec sp = {{"cond", "msg"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, "static_assert", &sp, &a)) return sv_err();
  if (a.given[1] && a.v[1].k != V_STR) {
    dg_error(s->c, a.loc[1], "the message of static_assert must be a string");
    return sv_err();
  }
  if (a.v[0].k != V_BOOL) {
    dg_error(s->c, a.loc[0], "static_assert needs a condition known at compile time, not %s", sv_desc(s, a.v[0]));
    return sv_err();
  }
  if (!a.v[0].i) {
    if (a.given[1]) dg_error(s->c, call->loc, "static assertion failed: %s", a.v[1].s);
    else dg_error(s->c, call->loc, "static assertion failed");
  }
  return (SVal){.k = V_VOID};
}

static SVal b_cast(S *s, Node *call, Node *self) {
  static const Spec sp = {{"x", "dtype"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "cast", &sp, &a)) return sv_err();
  Elem e;
  if (!dtype_arg(s, &a, 1, &e, "cast")) return sv_err();
  TValue *v = tile_arg(s, a.v[0], a.loc[0], "cast", "x");
  if (!v) return sv_err();
  TValue *r = sm_cast(s, v, e, call->loc);
  return r ? sv_rt(r) : sv_err();
}

static SVal b_math1(S *s, Node *call, Node *self, Opcode opc, const char *name) {
  static const Spec sp = {{"x"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, name, &sp, &a)) return sv_err();
  return sm_unary_math(s, opc, a.v[0], call->loc, name);
}

/* exp2(x, fma_every = k): every k-th element of each thread's registers is
 * computed on the FMA pipe (lower_math.c, lw_exp2_fma) instead of MUFU.EX2, whose
 * throughput (16 per clock per SM) an attention softmax is bound by. */
static SVal b_exp2(S *s, Node *call, Node *self) {
  static const Spec sp = {{"x", "fma_every"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, "exp2", &sp, &a)) return sv_err();
  int64_t k = 0;
  if (a.given[1]) {
    if (!sm_const_int(s, a.v[1], a.loc[1], "fma_every of exp2", &k)) return sv_err();
    if (k < 2 || k > 64) {
      dg_error(s->c, a.loc[1], "exp2(x, fma_every = %lld): one element in k goes to the FMA pipe, k from 2 to 64",
               (long long)k);
      return sv_err();
    }
  }
  SVal r = sm_unary_math(s, OP_EXP2, a.v[0], call->loc, "exp2");
  if (k && r.k == V_RT && r.v->def && r.v->def->opc == OP_EXP2) {
    if (r.v->type->elem.dt != DT_F32) {
      dg_error(s->c, a.loc[1], "exp2(x, fma_every = ...) needs f32 x, not %s; cast it first (x as f32)",
               ty_str(s->c, r.v->type));
      return sv_err();
    }
    r.v->def->ival = k;
  }
  return r;
}

static const char *const unsupported[] = {"alias", "fence_mbarrier_init", NULL};

bool sm_builtin(S *s, Node *call, const char *name, Node *self, SVal *out) {
  static const struct {
    const char *name;
    Opcode opc;
  } math1[] = {{"exp", OP_EXP},   {"exp2", OP_EXP2},   {"log", OP_LOG},     {"log2", OP_LOG2}, {"sqrt", OP_SQRT},
               {"rsqrt", OP_RSQRT}, {"abs", OP_ABS},     {"floor", OP_FLOOR}, {"ceil", OP_CEIL}, {"tanh", OP_TANH},
               {"sin", OP_SIN},     {"cos", OP_COS},     {"erf", OP_ERF},     {"rcp", OP_RCP}};
  if (sm_builtin_sm100(s, call, name, self, out)) return true;
  if (sm_builtin_hw(s, call, name, self, out)) return true;
  if (sm_builtin_debug(s, call, name, self, out)) return true;
  if (!strcmp(name, "exp2")) {
    *out = b_exp2(s, call, self);
    return true;
  }
  for (size_t i = 0; i < sizeof math1 / sizeof math1[0]; i++)
    if (!strcmp(name, math1[i].name)) {
      *out = b_math1(s, call, self, math1[i].opc, name);
      return true;
    }
  if (!strcmp(name, "program_id")) *out = b_program_id(s, call, self, OP_PROGRAM_ID, name);
  else if (!strcmp(name, "num_programs")) *out = b_program_id(s, call, self, OP_NUM_PROGRAMS, name);
  else if (!strcmp(name, "arange")) *out = b_arange(s, call, self);
  else if (!strcmp(name, "zeros")) *out = b_full(s, call, self, true);
  else if (!strcmp(name, "full")) *out = b_full(s, call, self, false);
  else if (!strcmp(name, "load")) *out = b_load(s, call, self);
  else if (!strcmp(name, "store")) *out = b_store_like(s, call, self, false);
  else if (!strcmp(name, "atomic_add")) *out = b_store_like(s, call, self, true);
  else if (!strcmp(name, "dot")) *out = b_dot(s, call, self);
  else if (!strcmp(name, "sum")) *out = b_reduce(s, call, self, RED_SUM, "sum");
  else if (!strcmp(name, "max")) *out = b_minmax(s, call, self, true);
  else if (!strcmp(name, "min")) *out = b_minmax(s, call, self, false);
  else if (!strcmp(name, "any")) *out = b_vote(s, call, self, true);
  else if (!strcmp(name, "all")) *out = b_vote(s, call, self, false);
  else if (!strcmp(name, "where")) *out = b_where(s, call, self);
  else if (!strcmp(name, "fma")) *out = b_fma(s, call, self);
  else if (!strcmp(name, "fdiv")) *out = b_fdiv(s, call, self);
  else if (!strcmp(name, "range")) *out = b_range(s, call, self, false);
  else if (!strcmp(name, "static_range")) *out = b_range(s, call, self, true);
  else if (!strcmp(name, "blocked")) *out = b_blocked(s, call, self);
  else if (!strcmp(name, "convert_layout")) *out = b_convert_layout(s, call, self);
  else if (!strcmp(name, "trans")) *out = b_trans(s, call, self);
  else if (!strcmp(name, "expand_dims")) *out = b_expand_dims(s, call, self);
  else if (!strcmp(name, "broadcast_to")) *out = b_broadcast_to(s, call, self);
  else if (!strcmp(name, "scale_rows")) *out = b_scale_rows(s, call, self);
  else if (!strcmp(name, "static_assert")) *out = b_static_assert(s, call, self);
  else if (!strcmp(name, "cast")) *out = b_cast(s, call, self);
  else if (!strcmp(name, "num_warps")) {
    if (call->nlist || self) dg_error(s->c, call->loc, "num_warps() takes no arguments");
    *out = sv_int(s->warps, DT_VOID);
  } else {
    for (int i = 0; unsupported[i]; i++)
      if (!strcmp(name, unsupported[i])) {
        dg_error(s->c, call->loc, "'%s' is not supported yet on %s (explicit hardware primitives are being built)",
                 name, s->c->arch);
        *out = sv_err();
        return true;
      }
    return false;
  }
  return true;
}

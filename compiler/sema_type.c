/* sema_type.c - types written in the source (`f32[128, 64]`, `*bf16`,
 * `tma<bf16, [64, 64]>`), the checks of a value against one, and the
 * top-level constants, evaluated when first named (their expressions
 * through sm_eval). */
#include "sema.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool sm_type_expr(S *s, TypeExpr *te, Type **out, Elem *elem) {
  switch (te->kind) {
  case TE_NAME: {
    DType dt;
    if (!ty_dtype_parse(te->name, &dt)) {
      Sym *y = sm_lookup(s, te->name);
      SVal v = y ? (y->kind == SYM_VAR ? y->val : y->kind == SYM_CONST_DECL ? sm_const_decl_value(s, y) : sv_err())
                 : sv_err();
      if (v.k == V_DTYPE) {
        *elem = v.elem;
        *out = ty_scalar(s->c, v.elem);
        return true;
      }
      dg_error(s->c, te->loc, "unknown type '%s' (types are bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, "
                              "f32, f64, pointers like *f32 and tiles like f32[128])",
               te->name);
      return false;
    }
    *elem = (Elem){(uint8_t)dt, 0};
    *out = ty_scalar(s->c, *elem);
    return true;
  }
  case TE_PTR: {
    Type *inner;
    Elem ie;
    if (!sm_type_expr(s, te->elem, &inner, &ie)) return false;
    if (inner->kind != TY_SCALAR || ie.dt == DT_PTR || ie.dt == DT_BOOL) {
      dg_error(s->c, te->loc, "pointers point to numbers (e.g. *f32, *bf16, *i32), not to %s", ty_str(s->c, inner));
      return false;
    }
    *elem = (Elem){DT_PTR, ie.dt};
    *out = ty_scalar(s->c, *elem);
    return true;
  }
  case TE_TILE: {
    Type *inner;
    Elem ie;
    if (!sm_type_expr(s, te->elem, &inner, &ie)) return false;
    if (inner->kind != TY_SCALAR) {
      dg_error(s->c, te->loc, "tile elements must be scalars or pointers, not %s", ty_str(s->c, inner));
      return false;
    }
    SVal dims = {.k = V_LIST, .n = te->ndims};
    dims.items = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)te->ndims);
    for (int i = 0; i < te->ndims; i++) dims.items[i] = sm_eval(s, te->dims[i]);
    int rank, shape[TC_MAX_RANK];
    if (!sm_shape_list(s, dims, te->loc, "the tile type", &rank, shape)) return false;
    *elem = ie;
    *out = ty_tile(s->c, ie, rank, shape);
    return true;
  }
  case TE_TUPLE: {
    Type **items = ar_alloc(&s->c->arena, sizeof(Type *) * (size_t)(te->nitems + 1));
    for (int i = 0; i < te->nitems; i++) {
      Elem e;
      if (!sm_type_expr(s, te->items[i], &items[i], &e)) return false;
    }
    *out = ty_tuple(s->c, items, te->nitems);
    *elem = (Elem){0};
    return true;
  }
  case TE_GENERIC:
    dg_error(s->c, te->loc, "'%s<...>' types (TMA descriptors, shared memory) are not supported yet on %s", te->name,
             s->c->arch);
    return false;
  }
  return false;
}

/* Check (and for constants, convert) a value against a declared type. */
SVal sm_check_type(S *s, SVal v, TypeExpr *te, Loc loc, const char *what) {
  if (v.k == V_ERR) return v;
  if (te->kind == TE_NAME && !strcmp(te->name, "dtype")) {
    if (v.k == V_DTYPE) return v;
    dg_error(s->c, loc, "%s is declared dtype but is %s", what, sv_desc(s, v));
    return sv_err();
  }
  Type *t;
  Elem e;
  if (!sm_type_expr(s, te, &t, &e)) return sv_err();
  if (t->kind == TY_TUPLE) {
    if (v.k != V_TUPLE || v.n != t->nitems) {
      dg_error(s->c, loc, "%s is declared %s but is %s%s", what, ty_str(s->c, t), sv_desc(s, v),
               v.k == V_TUPLE ? ar_printf(&s->c->arena, " of %d items", v.n) : "");
      return sv_err();
    }
    SVal r = v;
    r.items = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)(v.n + 1));
    for (int i = 0; i < v.n; i++) {
      r.items[i] = sm_check_type(s, v.items[i], te->items[i], loc, ar_printf(&s->c->arena, "item %d of %s", i, what));
      if (r.items[i].k == V_ERR) return sv_err();
    }
    return r;
  }
  if (sv_is_const(v) && t->kind == TY_SCALAR) {
    TValue *r = sm_rt_as(s, v, e, loc);
    return r ? sv_rt(r) : sv_err();
  }
  if (v.k != V_RT) {
    dg_error(s->c, loc, "%s is declared %s but is %s", what, ty_str(s->c, t), sv_desc(s, v));
    return sv_err();
  }
  if (!ty_eq(v.v->type, t)) {
    dg_error(s->c, loc, "%s is declared %s but is %s", what, ty_str(s->c, t), ty_str(s->c, v.v->type));
    return sv_err();
  }
  return v;
}

/* A compile-time value given a declared scalar type (a typed constant or
 * `const` parameter): it stays a compile-time value, converted or checked
 * against the type. `what` names it in messages. */
SVal sm_typed_const(S *s, SVal v, TypeExpr *type, Loc loc, const char *what) {
  Type *t;
  Elem e;
  if (!sm_type_expr(s, type, &t, &e)) return sv_err();
  if (t->kind != TY_SCALAR || e.dt == DT_PTR) {
    dg_error(s->c, type->loc, "a constant has a scalar type such as i32 or f32");
    return sv_err();
  }
  if (ty_is_float((DType)e.dt)) return sv_float(v.k == V_FLOAT ? v.f : (double)v.i, (DType)e.dt);
  if (e.dt == DT_BOOL) {
    if (v.k == V_BOOL) return v;
    dg_error(s->c, loc, "%s is declared bool but is %s", what, sv_desc(s, v));
    return sv_err();
  }
  if (v.k == V_FLOAT) {
    dg_error(s->c, loc, "%s is declared %s but its value %g is not an integer", what, ty_dtype_name((DType)e.dt), v.f);
    return sv_err();
  }
  if (v.k == V_BOOL) {
    dg_error(s->c, loc, "%s is declared %s but is %s", what, ty_dtype_name((DType)e.dt), sv_desc(s, v));
    return sv_err();
  }
  return sm_fold_typed(s, sv_int(v.i, DT_VOID), (DType)e.dt, loc);
}

SVal sm_const_decl_value(S *s, Sym *y) {
  if (y->state == 2) return y->val;
  if (y->state == 1) {
    dg_error(s->c, y->decl->loc, "constant '%s' is defined in terms of itself", y->name);
    y->state = 2;
    y->val = sv_err();
    return y->val;
  }
  y->state = 1;
  /* Top-level constants see only globals; ops they emit go to a scratch
   * block (a run-time value is an error below). */
  Frame fr = sm_frame_enter(s);
  TBlock *saved_blk = s->blk;
  s->blk = ir_block(s->c, 0, NULL);
  const InlineSite *inl = s->c->inl; /* its errors are the constant's, not the calls' that first read it */
  s->c->inl = NULL;
  SVal v = sm_eval(s, y->decl->value);
  s->c->inl = inl;
  s->blk = saved_blk;
  if (v.k == V_RT) {
    dg_error(s->c, y->decl->value->loc, "the value of constant '%s' is not known at compile time", y->name);
    v = sv_err();
  }
  if (y->decl->type && sv_is_const(v))
    v = sm_typed_const(s, v, y->decl->type, y->decl->value->loc, ar_printf(&s->c->arena, "constant '%s'", y->name));
  sm_frame_leave(s, fr);
  y->val = v;
  y->state = 2;
  return v;
}

/* ---- statements: compiler/sema_stmt.c ---- */

/* ---- calls ---- */


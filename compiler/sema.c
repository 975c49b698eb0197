/* sema.c - semantic analysis and Tile IR generation in one walk.
 *
 * The AST is evaluated the way Triton's frontend evaluates Python: names are
 * bound to values that are either compile-time constants (folded here) or
 * run-time TIR values; `fn` calls are inlined; `if` on a constant and
 * `static_range` loops are resolved at compile time; everything else becomes
 * TIR with structured control flow.  Variables assigned inside `if`, `for`
 * and `while` become results / loop-carried values of those ops, so the IR
 * is SSA from the start.  Every error names the source location and the
 * types or shapes involved.
 * Here: values, expressions, types written in the source, calls, kernels.
 * Beside it: sema_ops.c (promotion and broadcasting, constant folding,
 * operators), sema_stmt.c (statements), sema_env.c (names and scopes),
 * builtins*.c (builtins). */
#include "sema.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- values ---- */

SVal sv_err(void) { return (SVal){.k = V_ERR}; }
SVal sv_int(int64_t i, DType dt) { return (SVal){.k = V_INT, .i = i, .dt = dt}; }
SVal sv_float(double f, DType dt) { return (SVal){.k = V_FLOAT, .f = f, .dt = dt}; }
SVal sv_bool(bool b) { return (SVal){.k = V_BOOL, .i = b, .dt = DT_BOOL}; }
SVal sv_rt(TValue *v) { return v ? (SVal){.k = V_RT, .v = v} : sv_err(); }
bool sv_is_const(SVal v) { return v.k == V_INT || v.k == V_FLOAT || v.k == V_BOOL; }

DType sm_const_dtype(SVal v) {
  if (v.k == V_BOOL) return DT_BOOL;
  if (v.dt != DT_VOID) return v.dt;
  if (v.k == V_FLOAT) return DT_F32;
  return (v.i >= INT32_MIN && v.i <= INT32_MAX) ? DT_I32 : DT_I64;
}

Type *sv_type(S *s, SVal v) {
  if (v.k == V_RT) return v.v->type;
  if (sv_is_const(v)) return ty_dt(s->c, sm_const_dtype(v));
  return NULL;
}

const char *sv_desc(S *s, SVal v) {
  Arena *a = &s->c->arena;
  switch (v.k) {
  case V_RT: return ty_str(s->c, v.v->type);
  case V_INT: return ar_printf(a, "constant %lld", (long long)v.i);
  case V_FLOAT: return ar_printf(a, "constant %g", v.f);
  case V_BOOL: return v.i ? "constant true" : "constant false";
  case V_DTYPE: return ar_printf(a, "the type %s", ty_elem_str(s->c, v.elem));
  case V_LIST: return "a list";
  case V_TUPLE: return "a tuple";
  case V_STR: return "a string";
  case V_NONE: return "None";
  case V_LAYOUT: return "a layout";
  case V_RANGE: return "a range";
  case V_VOID: return "nothing (the call returns no value)";
  default: return "an invalid value";
  }
}

/* ---- emission helpers ---- */

TValue *sm_emit1(S *s, Opcode opc, Loc loc, int n, TValue **opnds, Type *rt) {
  TOp *op = ir_op(s->c, opc, loc, n, opnds, rt ? 1 : 0, &rt);
  ir_append(s->blk, op);
  return rt ? op->res[0] : NULL;
}

TOp *sm_emit_op(S *s, Opcode opc, Loc loc, int n, TValue **opnds, int nres, Type **rts) {
  TOp *op = ir_op(s->c, opc, loc, n, opnds, nres, rts);
  ir_append(s->blk, op);
  return op;
}

bool sm_int_fits(int64_t v, DType dt) {
  switch (dt) {
  case DT_BOOL: return v == 0 || v == 1;
  case DT_I8: return v >= INT8_MIN && v <= INT8_MAX;
  case DT_U8: return v >= 0 && v <= UINT8_MAX;
  case DT_I16: return v >= INT16_MIN && v <= INT16_MAX;
  case DT_U16: return v >= 0 && v <= UINT16_MAX;
  case DT_I32: return v >= INT32_MIN && v <= INT32_MAX;
  case DT_U32: return v >= 0 && v <= (int64_t)UINT32_MAX;
  default: return true;
  }
}

static TValue *emit_const(S *s, Elem e, int64_t i, double f, Loc loc) {
  TOp *op = sm_emit_op(s, OP_CONST, loc, 0, NULL, 1, (Type *[]){ty_scalar(s->c, e)});
  op->ival = i;
  op->fval = f;
  if (ty_is_float((DType)e.dt)) op->ival = 0;
  else op->fval = 0;
  return op->res[0];
}

TValue *sm_rt_as(S *s, SVal v, Elem e, Loc loc) {
  if (v.k == V_RT) {
    if (ty_elem_eq(v.v->type->elem, e)) return v.v;
    return sm_cast(s, v.v, e, loc);
  }
  if (!sv_is_const(v)) {
    if (v.k != V_ERR) dg_error(s->c, loc, "expected a value, found %s", sv_desc(s, v));
    return NULL;
  }
  DType dt = (DType)e.dt;
  if (dt == DT_PTR) {
    dg_error(s->c, loc, "a constant cannot be used as a pointer");
    return NULL;
  }
  if (ty_is_float(dt)) return emit_const(s, e, 0, v.k == V_FLOAT ? v.f : (double)v.i, loc);
  if (v.k == V_FLOAT) {
    if (v.f != floor(v.f) || fabs(v.f) > 9.2e18) {
      dg_error(s->c, loc, "constant %g is not an integer and cannot become %s", v.f, ty_dtype_name(dt));
      return NULL;
    }
    v = sv_int((int64_t)v.f, DT_VOID);
  }
  if (!sm_int_fits(v.i, dt)) {
    dg_error(s->c, loc, "constant %lld does not fit in %s", (long long)v.i, ty_dtype_name(dt));
    return NULL;
  }
  return emit_const(s, e, v.i, 0, loc);
}

TValue *sm_rt(S *s, SVal v, Loc loc) {
  if (v.k == V_RT) return v.v;
  if (!sv_is_const(v)) {
    if (v.k != V_ERR) dg_error(s->c, loc, "expected a value, found %s", sv_desc(s, v));
    return NULL;
  }
  return sm_rt_as(s, v, (Elem){(uint8_t)sm_const_dtype(v), 0}, loc);
}

TValue *sm_cast(S *s, TValue *v, Elem to, Loc loc) {
  if (ty_elem_eq(v->type->elem, to)) return v;
  Elem from = v->type->elem;
  if ((from.dt == DT_PTR) != (to.dt == DT_PTR)) {
    bool ok = (from.dt == DT_PTR && (to.dt == DT_I64 || to.dt == DT_U64)) ||
              (to.dt == DT_PTR && (from.dt == DT_I64 || from.dt == DT_U64));
    if (!ok) {
      dg_error(s->c, loc, "cannot cast %s to %s (pointers convert only to and from i64/u64)",
               ty_str(s->c, v->type), ty_elem_str(s->c, to));
      return NULL;
    }
  }
  TOp *op = sm_emit_op(s, OP_CAST, loc, 1, &v, 1, (Type *[]){ty_with_elem(s->c, v->type, to)});
  op->to = to;
  return op->res[0];
}

TValue *sm_splat(S *s, TValue *v, int rank, const int *shape, Loc loc) {
  if (rank == 0) return v;
  return sm_emit1(s, OP_SPLAT, loc, 1, &v, ty_tile(s->c, v->type->elem, rank, shape));
}

/* ---- promotion, broadcasting, constant folding, binary operators: compiler/sema_ops.c ---- */

/* ---- environment: compiler/sema_env.c ---- */

static SVal eval_const_decl(S *s, Sym *y);

static bool type_expr(S *s, TypeExpr *te, Type **out, Elem *elem_only);

/* Builtin names that denote constants or types. */
static bool ident_value(S *s, Node *n, SVal *out) {
  DType dt;
  if (ty_dtype_parse(n->name, &dt)) {
    *out = (SVal){.k = V_DTYPE, .elem = {(uint8_t)dt, 0}};
    return true;
  }
  if (!strcmp(n->name, "inf")) {
    *out = sv_float(INFINITY, DT_VOID);
    return true;
  }
  if (!strcmp(n->name, "nan")) {
    *out = sv_float(NAN, DT_VOID);
    return true;
  }
  (void)s;
  return false;
}

/* ---- expressions ---- */

static SVal call_expr(S *s, Node *n, const char *name, Node *self);

static SVal index_expr(S *s, Node *n) {
  SVal base = sm_expr(s, n->lhs);
  if (base.k == V_ERR) return base;
  if (base.k == V_LIST || base.k == V_TUPLE) {
    if (n->nlist != 1) {
      dg_error(s->c, n->loc, "a %s takes one index", base.k == V_LIST ? "list" : "tuple");
      return sv_err();
    }
    int64_t i;
    if (!sm_const_int(s, sm_expr(s, n->list[0]), n->list[0]->loc, "a tuple or list index", &i)) return sv_err();
    if (i < 0) i += base.n;
    if (i < 0 || i >= base.n) {
      dg_error(s->c, n->list[0]->loc, "index %lld is out of range for a %s of %d items", (long long)i,
               base.k == V_LIST ? "list" : "tuple", base.n);
      return sv_err();
    }
    return base.items[i];
  }
  if (base.k == V_RT && (base.v->type->kind == TY_SMEM || base.v->type->kind == TY_BAR || base.v->type->kind == TY_TMEM)) {
    if (n->nlist != 1 || n->list[0]->kind == ND_SLICE_ALL || n->list[0]->kind == ND_NONE) {
      dg_error(s->c, n->loc, "%s is indexed with one slot number: buf[i]", ty_str(s->c, base.v->type));
      return sv_err();
    }
    return sm_slot(s, base.v, sm_expr(s, n->list[0]), n->list[0]->loc);
  }
  TValue *v = sm_rt(s, base, n->loc);
  if (!v) return sv_err();
  int rank = v->type->kind == TY_TILE ? v->type->rank : 0;
  int kept = 0;
  for (int i = 0; i < n->nlist; i++) {
    Node *a = n->list[i];
    if (a->kind == ND_SLICE_ALL) kept++;
    else if (a->kind != ND_NONE) {
      dg_error(s->c, a->loc,
               "tiles are indexed only with ':' (keep a dimension) and None (add one); to pick elements use "
               "masks, where() or reductions");
      return sv_err();
    }
  }
  if (kept != rank) {
    dg_error(s->c, n->loc, "index of %s has %d ':' entries but the tile has %d dimensions", ty_str(s->c, v->type),
             kept, rank);
    return sv_err();
  }
  int newrank = n->nlist;
  if (newrank > TC_MAX_RANK) {
    dg_error(s->c, n->loc, "indexing would give %d dimensions; the limit is %d", newrank, TC_MAX_RANK);
    return sv_err();
  }
  for (int i = 0; i < n->nlist; i++) {
    if (n->list[i]->kind != ND_NONE) continue;
    int cur = v->type->kind == TY_TILE ? v->type->rank : 0, ns[TC_MAX_RANK];
    for (int j = 0, k = 0; j < cur + 1; j++) ns[j] = j == i ? 1 : v->type->shape[k++];
    if (cur == 0) {
      v = sm_splat(s, v, 1, ns, n->loc);
      continue;
    }
    TOp *op = sm_emit_op(s, OP_EXPAND_DIMS, n->loc, 1, &v, 1, (Type *[]){ty_tile(s->c, v->type->elem, cur + 1, ns)});
    op->axis = i;
    v = op->res[0];
  }
  return sv_rt(v);
}

bool sm_budget(S *s, Loc loc) {
  if (s->c->too_big) return false;
  if (++s->steps > TC_MAX_STEPS) {
    s->c->too_big = true;
    dg_error(s->c, loc, "the program expands too much at compile time (more than %d evaluation steps after "
                        "inlining and unrolling)", TC_MAX_STEPS);
    return false;
  }
  if (s->depth > TC_MAX_EVAL_DEPTH) {
    s->c->too_big = true;
    dg_error(s->c, loc, "inlined calls and nested expressions go more than %d levels deep", TC_MAX_EVAL_DEPTH);
    return false;
  }
  return true;
}

static SVal expr_inner(S *s, Node *n);

SVal sm_expr(S *s, Node *n) {
  if (!n) return sv_err();
  if (dg_too_many(s->c) || !sm_budget(s, n->loc)) return sv_err();
  s->depth++;
  SVal v = expr_inner(s, n);
  s->depth--;
  return v;
}

static SVal expr_inner(S *s, Node *n) {
  switch (n->kind) {
  case ND_INT:
    if (n->overflow) return sv_err();
    if (n->ival > (uint64_t)INT64_MAX) {
      dg_error(s->c, n->loc, "integer literal %llu is larger than the largest i64", (unsigned long long)n->ival);
      return sv_err();
    }
    return sv_int((int64_t)n->ival, DT_VOID);
  case ND_FLOAT: return sv_float(n->fval, DT_VOID);
  case ND_BOOL: return sv_bool(n->ival != 0);
  case ND_STR: return (SVal){.k = V_STR, .s = n->str};
  case ND_NONE: return (SVal){.k = V_NONE};
  case ND_IDENT: {
    Sym *y = sm_lookup(s, n->name);
    if (y) {
      if (y->kind == SYM_VAR && s->in_task && y->val.k == V_RT && y->val.v->type->kind == TY_TILE) {
        bool inside = false;
        for (Sym *z = s->scope; z && z != s->task_scope; z = z->next) inside |= z == y;
        if (!inside) {
          dg_error(s->c, n->loc, "'%s' is a register tile spread over the warps outside this task; compute it inside "
                                 "the task (or pass it through shared memory)",
                   n->name);
          return sv_err();
        }
      }
      if (y->kind == SYM_VAR) return y->val;
      if (y->kind == SYM_CONST_DECL) return eval_const_decl(s, y);
      dg_error(s->c, n->loc, "'%s' is a function; call it with '%s(...)'", n->name, n->name);
      return sv_err();
    }
    SVal v;
    if (ident_value(s, n, &v)) return v;
    if (s->kparams)
      for (int i = 0; i < s->kparams->nparams; i++)
        if (!s->kparams->params[i].is_const && !strcmp(s->kparams->params[i].name, n->name)) {
          dg_error(s->c, n->loc, "'%s' is a run-time parameter; it cannot be used in the kernel's header (constant "
                                 "parameters, attributes and types must be known at compile time)",
                   n->name);
          return sv_err();
        }
    dg_error(s->c, n->loc, "unknown name '%s'", n->name);
    return sv_err();
  }
  case ND_UNARY: {
    SVal a = sm_expr(s, n->lhs);
    if (a.k == V_ERR) return a;
    if (n->op == TK_MINUS) {
      if (a.k == V_INT) {
        if (a.i == INT64_MIN) {
          dg_error(s->c, n->loc, "constant expression overflows 64 bits");
          return sv_err();
        }
        return sm_fold_typed(s, sv_int(-a.i, DT_VOID), a.dt, n->loc);
      }
      if (a.k == V_FLOAT) return sv_float(-a.f, a.dt);
      TValue *v = sm_rt(s, a, n->loc);
      if (!v) return sv_err();
      DType dt = (DType)v->type->elem.dt;
      if (!ty_is_float(dt) && !ty_is_int(dt)) {
        dg_error(s->c, n->loc, "unary '-' needs a number, not %s", ty_str(s->c, v->type));
        return sv_err();
      }
      return sv_rt(sm_emit1(s, OP_NEG, n->loc, 1, &v, v->type));
    }
    if (n->op == TK_BANG) {
      if (a.k == V_BOOL) return sv_bool(!a.i);
      TValue *v = a.k == V_RT ? a.v : NULL;
      if (!v || v->type->elem.dt != DT_BOOL) {
        dg_error(s->c, n->loc, "'!' needs a boolean, not %s (use '~' for the bits of an integer)", sv_desc(s, a));
        return sv_err();
      }
      return sv_rt(sm_emit1(s, OP_NOT, n->loc, 1, &v, v->type));
    }
    /* ~ */
    if (a.k == V_INT) {
      int64_t r = ~a.i;
      if (a.dt != DT_VOID && !ty_is_signed(a.dt) && ty_dtype_bits(a.dt) < 64)
        r &= (int64_t)((1ull << ty_dtype_bits(a.dt)) - 1); /* ~(0 as u8) is 255 */
      return sm_fold_typed(s, sv_int(r, DT_VOID), a.dt, n->loc);
    }
    TValue *v = a.k == V_RT ? a.v : NULL;
    if (!v || !ty_is_int((DType)v->type->elem.dt)) {
      dg_error(s->c, n->loc, "'~' needs an integer, not %s", sv_desc(s, a));
      return sv_err();
    }
    return sv_rt(sm_emit1(s, OP_NOT, n->loc, 1, &v, v->type));
  }
  case ND_BINARY: {
    SVal a = sm_expr(s, n->lhs);
    if ((n->op == TK_ANDAND || n->op == TK_OROR) && a.k == V_BOOL) {
      /* compile-time short circuit */
      if ((n->op == TK_ANDAND && !a.i) || (n->op == TK_OROR && a.i)) return a;
      SVal b = sm_expr(s, n->rhs);
      if (b.k == V_BOOL || b.k == V_ERR) return b;
      return sm_binary(s, n->op, a, b, n->loc);
    }
    SVal b = sm_expr(s, n->rhs);
    return sm_binary(s, n->op, a, b, n->loc);
  }
  case ND_CAST: {
    SVal a = sm_expr(s, n->lhs);
    if (a.k == V_ERR) return a;
    if (a.k == V_RT && a.v->type->kind != TY_SCALAR && a.v->type->kind != TY_TILE) {
      dg_error(s->c, n->loc, "'as' converts numbers and tiles, not %s", ty_str(s->c, a.v->type));
      return sv_err();
    }
    Type *t;
    Elem e;
    if (!type_expr(s, n->type, &t, &e)) return sv_err();
    if (t->kind != TY_SCALAR) {
      dg_error(s->c, n->type->loc, "'as' converts element types; give a scalar type such as f32, not %s",
               ty_str(s->c, t));
      return sv_err();
    }
    if (sv_is_const(a) && e.dt != DT_PTR) {
      if (ty_is_float((DType)e.dt)) return sv_float(a.k == V_FLOAT ? a.f : (double)a.i, (DType)e.dt);
      if (e.dt == DT_BOOL) return sv_bool(a.k == V_FLOAT ? a.f != 0 : a.i != 0);
      if (a.k == V_FLOAT && (isnan(a.f) || fabs(a.f) > 9.2e18)) {
        dg_error(s->c, n->loc, "constant %g cannot be converted to %s", a.f, ty_dtype_name((DType)e.dt));
        return sv_err();
      }
      int64_t iv = a.k == V_FLOAT ? (int64_t)a.f : a.i;
      /* integer conversions wrap like C */
      int bits = ty_dtype_bits((DType)e.dt);
      if (bits < 64) {
        uint64_t m = (1ull << bits) - 1, u = (uint64_t)iv & m;
        if (ty_is_signed((DType)e.dt) && (u >> (bits - 1) & 1)) iv = (int64_t)(u | ~m);
        else iv = (int64_t)u;
      }
      return sv_int(iv, (DType)e.dt);
    }
    TValue *v = sm_rt(s, a, n->loc);
    if (!v) return sv_err();
    return sv_rt(sm_cast(s, v, e, n->loc));
  }
  case ND_LIST:
  case ND_TUPLE: {
    SVal r = {.k = n->kind == ND_LIST ? V_LIST : V_TUPLE, .n = n->nlist};
    r.items = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)(n->nlist + 1));
    for (int i = 0; i < n->nlist; i++) {
      r.items[i] = sm_expr(s, n->list[i]);
      if (r.items[i].k == V_ERR) return sv_err();
    }
    return r;
  }
  case ND_INDEX: return index_expr(s, n);
  case ND_CALL: return call_expr(s, n, n->name, NULL);
  case ND_METHOD: return call_expr(s, n, n->name, n->lhs);
  case ND_SLICE_ALL:
    dg_error(s->c, n->loc, "':' is only valid inside a tile index like x[:, None]");
    return sv_err();
  default:
    dg_error(s->c, n->loc, "this statement is not an expression");
    return sv_err();
  }
}

/* ---- types written in the source ---- */

static bool type_expr(S *s, TypeExpr *te, Type **out, Elem *elem) {
  switch (te->kind) {
  case TE_NAME: {
    DType dt;
    if (!ty_dtype_parse(te->name, &dt)) {
      Sym *y = sm_lookup(s, te->name);
      SVal v = y ? (y->kind == SYM_VAR ? y->val : y->kind == SYM_CONST_DECL ? eval_const_decl(s, y) : sv_err())
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
    if (!type_expr(s, te->elem, &inner, &ie)) return false;
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
    if (!type_expr(s, te->elem, &inner, &ie)) return false;
    if (inner->kind != TY_SCALAR) {
      dg_error(s->c, te->loc, "tile elements must be scalars or pointers, not %s", ty_str(s->c, inner));
      return false;
    }
    SVal dims = {.k = V_LIST, .n = te->ndims};
    dims.items = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)te->ndims);
    for (int i = 0; i < te->ndims; i++) dims.items[i] = sm_expr(s, te->dims[i]);
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
      if (!type_expr(s, te->items[i], &items[i], &e)) return false;
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
  if (!type_expr(s, te, &t, &e)) return sv_err();
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
static SVal typed_const(S *s, SVal v, TypeExpr *type, Loc loc, const char *what) {
  Type *t;
  Elem e;
  if (!type_expr(s, type, &t, &e)) return sv_err();
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

static SVal eval_const_decl(S *s, Sym *y) {
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
  SVal v = sm_expr(s, y->decl->value);
  s->c->inl = inl;
  s->blk = saved_blk;
  if (v.k == V_RT) {
    dg_error(s->c, y->decl->value->loc, "the value of constant '%s' is not known at compile time", y->name);
    v = sv_err();
  }
  if (y->decl->type && sv_is_const(v))
    v = typed_const(s, v, y->decl->type, y->decl->value->loc, ar_printf(&s->c->arena, "constant '%s'", y->name));
  sm_frame_leave(s, fr);
  y->val = v;
  y->state = 2;
  return v;
}

/* ---- statements: compiler/sema_stmt.c ---- */

/* ---- calls ---- */

static SVal inline_call(S *s, Node *call, Func *f, Node *self) {
  int nargs = call->nlist + (self ? 1 : 0);
  SVal *vals = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)(f->nparams + 1));
  bool *given = ar_alloc(&s->c->arena, sizeof(bool) * (size_t)(f->nparams + 1));
  Loc *locs = ar_alloc(&s->c->arena, sizeof(Loc) * (size_t)(f->nparams + 1));
  int pos = 0;
  for (int i = 0; i < nargs; i++) {
    Node *a = self ? (i == 0 ? self : call->list[i - 1]) : call->list[i];
    int slot = -1;
    if (a->argname) {
      for (int j = 0; j < f->nparams; j++)
        if (!strcmp(f->params[j].name, a->argname)) slot = j;
      if (slot < 0) {
        dg_error(s->c, a->loc, "function '%s' has no parameter named '%s'", f->name, a->argname);
        return sv_err();
      }
    } else {
      slot = pos++;
      if (slot >= f->nparams) {
        dg_error(s->c, a->loc, "function '%s' takes %d argument%s, but more were given", f->name, f->nparams,
                 f->nparams == 1 ? "" : "s");
        return sv_err();
      }
    }
    if (given[slot]) {
      dg_error(s->c, a->loc, "argument '%s' of '%s' is given twice", f->params[slot].name, f->name);
      return sv_err();
    }
    given[slot] = true;
    vals[slot] = sm_expr(s, a);
    locs[slot] = a->loc;
    if (vals[slot].k == V_ERR) return sv_err();
  }
  if (s->inline_depth >= TC_MAX_INLINE) {
    dg_error(s->c, call->loc, "calls of '%s' nest more than %d deep (is it recursive? Tile functions are inlined "
                              "and cannot recurse)",
             f->name, TC_MAX_INLINE);
    return sv_err();
  }
  /* The defaults and the body are f's code: errors there get a note naming
   * this call (and the calls around it), diag.c. */
  const InlineSite *outer = s->c->inl;
  InlineSite *site = ar_alloc(&s->c->arena, sizeof *site);
  site->fn = f->name;
  site->call = call->loc;
  site->call.at = outer;
  for (int j = 0; j < f->nparams; j++) {
    if (given[j]) continue;
    if (f->params[j].deflt) {
      s->inline_depth++; /* a default may call functions, even this one */
      Frame fr = sm_frame_enter(s);
      s->c->inl = site;
      vals[j] = sm_expr(s, f->params[j].deflt);
      s->c->inl = outer;
      sm_frame_leave(s, fr);
      s->inline_depth--;
      locs[j] = f->params[j].loc;
      if (vals[j].k == V_ERR) return sv_err();
      continue;
    }
    dg_error(s->c, call->loc, "call of '%s' is missing argument '%s'", f->name, f->params[j].name);
    dg_note(s->c, f->params[j].loc, "'%s' is declared here", f->params[j].name);
    return sv_err();
  }
  if (s->inline_depth >= TC_MAX_INLINE) {
    dg_error(s->c, call->loc, "calls of '%s' nest more than %d deep (is it recursive? Tile functions are inlined "
                              "and cannot recurse)",
             f->name, TC_MAX_INLINE);
    return sv_err();
  }
  Frame fr = sm_frame_enter(s);
  for (int j = 0; j < f->nparams; j++) {
    SVal v = vals[j];
    if (f->params[j].is_const && v.k == V_RT) {
      dg_error(s->c, locs[j], "argument '%s' of '%s' must be a compile-time constant, not %s", f->params[j].name,
               f->name, ty_str(s->c, v.v->type));
      sm_frame_leave(s, fr);
      return sv_err();
    }
    if (f->params[j].type && f->params[j].is_const && sv_is_const(v))
      v = typed_const(s, v, f->params[j].type, locs[j],
                      ar_printf(&s->c->arena, "argument '%s' of '%s'", f->params[j].name, f->name));
    else if (f->params[j].type)
      v = sm_check_type(s, v, f->params[j].type, locs[j], ar_printf(&s->c->arena, "argument '%s' of '%s'",
                                                                  f->params[j].name, f->name));
    if (v.k == V_ERR) {
      sm_frame_leave(s, fr);
      return sv_err();
    }
    sm_bind(s, f->params[j].name, v);
  }
  s->inline_depth++;
  SVal ret = {.k = V_VOID};
  bool returned = false;
  St st = {.in_fn = true, .ret = &ret, .returned = &returned};
  int errs = s->c->nerrors;
  s->c->inl = site;
  sm_block_stmts(s, f->body, &st, true);
  bool ok = s->c->nerrors == errs; /* else already reported */
  if (ok && f->ret && !returned) {
    dg_error(s->c, f->loc, "function '%s' declares a result type but does not end with 'return'", f->name);
    ok = false;
  }
  s->c->inl = outer;
  s->inline_depth--;
  sm_frame_leave(s, fr);
  if (!ok) return sv_err();
  if (f->ret)
    ret = sm_check_type(s, ret, f->ret, call->loc, ar_printf(&s->c->arena, "the result of '%s'", f->name));
  return ret;
}

static SVal call_expr(S *s, Node *n, const char *name, Node *self) {
  Sym *y = sm_lookup(s, name);
  if (y && y->kind == SYM_FUNC) {
    if (y->fn->is_kernel) {
      dg_error(s->c, n->loc, "'%s' is a kernel; kernels cannot be called (make it a fn)", name);
      return sv_err();
    }
    return inline_call(s, n, y->fn, self);
  }
  SVal out;
  if (sm_builtin(s, n, name, self, &out)) return out;
  if (y) dg_error(s->c, n->loc, "'%s' is not a function", name);
  else if (self) dg_error(s->c, n->loc, "unknown method '%s'", name);
  else {
    dg_error(s->c, n->loc, "unknown function '%s'", name);
    sm_note_untaken_imports(s->c);
  }
  return sv_err();
}

/* ---- kernels ---- */

static bool parse_define_value(S *s, const char *text, SVal *out) {
  DType dt;
  if (ty_dtype_parse(text, &dt)) {
    *out = (SVal){.k = V_DTYPE, .elem = {(uint8_t)dt, 0}};
    return true;
  }
  if (!strcmp(text, "true") || !strcmp(text, "false")) {
    *out = sv_bool(text[0] == 't');
    return true;
  }
  char *end;
  errno = 0;
  long long iv = strtoll(text, &end, 0);
  if (*text && !*end && errno == 0) {
    *out = sv_int(iv, DT_VOID);
    return true;
  }
  errno = 0;
  double fv = strtod(text, &end);
  if (*text && !*end && errno == 0) {
    *out = sv_float(fv, DT_VOID);
    return true;
  }
  (void)s;
  return false;
}

static const char *const_text(S *s, SVal v) {
  switch (v.k) {
  case V_INT: return ar_printf(&s->c->arena, "%lld", (long long)v.i);
  case V_FLOAT: return ar_printf(&s->c->arena, "%.17g", v.f);
  case V_BOOL: return v.i ? "true" : "false";
  case V_DTYPE: return ty_elem_str(s->c, v.elem);
  default: return "?";
  }
}

/* a: tma<bf16, [BOX_ROWS, BOX_COLS]> (optionally a third argument: the swizzle) */
static bool tma_param(S *s, Param *p, TParam *tp, Type **out) {
  TypeExpr *te = p->type;
  if (te->nitems != 1 || te->nargs < 1 || te->nargs > 2) {
    dg_error(s->c, te->loc, "a TMA descriptor is written tma<DTYPE, [ROWS, COLS]> (optionally a swizzle: "
                            "tma<bf16, [128, 64], 128>)");
    return false;
  }
  Type *et;
  Elem e;
  if (!type_expr(s, te->items[0], &et, &e)) return false;
  if (et->kind != TY_SCALAR || e.dt == DT_PTR || e.dt == DT_BOOL) {
    dg_error(s->c, te->items[0]->loc, "TMA descriptors move numbers, not %s", ty_str(s->c, et));
    return false;
  }
  int rank, box[TC_MAX_RANK];
  if (!sm_dims_list(s, sm_expr(s, te->args[0]), te->loc, "the TMA box", &rank, box, false)) return false;
  if (rank != 2 || box[0] > 256 || box[1] > 256) {
    dg_error(s->c, te->loc, "a TMA box is 2-D with at most 256 elements per dimension");
    return false;
  }
  if (!sm_is_pow2(box[1])) {
    dg_error(s->c, te->loc, "a TMA box's columns must be a power of two, not %d (its rows may be any number up to 256)",
             box[1]);
    return false;
  }
  int eb = ty_dtype_bytes((DType)e.dt), inner = box[1] * eb;
  int64_t sw = inner % 128 == 0 ? 128 : inner % 64 == 0 ? 64 : inner % 32 == 0 ? 32 : 0;
  if (sw > inner) sw = 0;
  if (te->nargs == 2) {
    if (!sm_const_int(s, sm_expr(s, te->args[1]), te->loc, "the swizzle", &sw)) return false;
    if (sw != 0 && sw != 32 && sw != 64 && sw != 128) {
      dg_error(s->c, te->loc, "TMA swizzle must be 0, 32, 64 or 128 bytes");
      return false;
    }
  }
  if (sw && inner > sw) {
    dg_error(s->c, te->loc, "a TMA box row of %d bytes is wider than its %lld-byte swizzle; use boxes of %lld bytes "
                            "per row (the compiler issues several for a wider view)",
             inner, (long long)sw, (long long)sw);
    return false;
  }
  if (inner % 16) {
    dg_error(s->c, te->loc, "a TMA box row must be a multiple of 16 bytes, not %d", inner);
    return false;
  }
  tp->name = p->name;
  tp->elem = e;
  tp->tma = true;
  tp->rank = 2;
  tp->box[0] = box[0];
  tp->box[1] = box[1];
  tp->swizzle = (int)sw;
  tp->align = 64;
  Type *t = ty_tile(s->c, e, 2, box);
  t->kind = TY_TMA;
  t->swizzle = (int)sw;
  *out = t;
  return true;
}

static void build_kernel(S *s, Func *f, const bool *define_used) {
  Ctx *c = s->c;
  TFunc *kf = ar_alloc(&c->arena, sizeof *kf);
  kf->name = f->name;
  kf->loc = f->loc;
  kf->cluster[0] = kf->cluster[1] = kf->cluster[2] = 1;
  s->kf = kf;
  s->scope = NULL;
  s->frame = ++s->nframes; /* a fresh frame: earlier kernels' locals are gone */
  s->inline_depth = 0;
  s->kparams = f;
  /* The header (constant parameters, attributes, types) is evaluated at
   * compile time; anything it emits lands in a scratch block. */
  s->blk = ir_block(c, 0, NULL);
  (void)define_used;
  /* Constant parameters first: attributes and types may use them. */
  Vec consts = {0};
  int nrt = 0;
  for (int i = 0; i < f->nparams; i++) {
    Param *p = &f->params[i];
    if (!p->is_const) {
      nrt++;
      continue;
    }
    SVal v = sv_err();
    bool have = false, from_define = false;
    for (int d = 0; d < c->opts.ndefines; d++)
      if (!strcmp(c->opts.defines[d].name, p->name)) {
        from_define = true;
        if (!parse_define_value(s, c->opts.defines[d].value, &v)) {
          dg_error(c, p->loc, "-D %s=%s: the value is not a number, true/false or a type name", p->name,
                   c->opts.defines[d].value);
          v = sv_err();
        }
        have = true;
      }
    if (!have && p->deflt) {
      v = sm_expr(s, p->deflt);
      have = true;
      if (v.k == V_RT) {
        dg_error(c, p->deflt->loc, "the default of constant parameter '%s' must be known at compile time", p->name);
        v = sv_err();
      }
    }
    if (!have) {
      dg_error(c, p->loc, "constant parameter '%s' of kernel '%s' has no value; give it a default ('= ...') or "
                          "pass -D %s=VALUE",
               p->name, f->name, p->name);
      v = sv_err();
    }
    /* type check */
    if (v.k != V_ERR && p->type) {
      if (p->type->kind == TE_NAME && !strcmp(p->type->name, "dtype")) {
        if (v.k != V_DTYPE) {
          dg_error(c, p->loc, "constant parameter '%s' is a dtype but its value is %s", p->name, sv_desc(s, v));
          v = sv_err();
        }
      } else {
        Type *t;
        Elem e;
        if (!type_expr(s, p->type, &t, &e)) v = sv_err();
        else if (t->kind != TY_SCALAR || e.dt == DT_PTR) {
          dg_error(c, p->type->loc, "constant parameters are numbers, booleans or dtypes, not %s", ty_str(c, t));
          v = sv_err();
        } else if (e.dt == DT_BOOL) {
          if (v.k != V_BOOL) {
            dg_error(c, p->loc, "constant parameter '%s' is bool but its value is %s", p->name, sv_desc(s, v));
            v = sv_err();
          }
        } else if (ty_is_float((DType)e.dt)) {
          if (v.k == V_INT) v = sv_float((double)v.i, (DType)e.dt);
          else if (v.k == V_FLOAT) v.dt = (DType)e.dt;
          else {
            dg_error(c, p->loc, "constant parameter '%s' is %s but its value is %s", p->name, ty_dtype_name((DType)e.dt),
                     sv_desc(s, v));
            v = sv_err();
          }
        } else {
          if (v.k != V_INT) {
            dg_error(c, p->loc, "constant parameter '%s' is %s but its value is %s", p->name, ty_dtype_name((DType)e.dt),
                     sv_desc(s, v));
            v = sv_err();
          } else if (!sm_int_fits(v.i, (DType)e.dt)) {
            dg_error(c, p->loc, "%s %s=%lld: the value does not fit in %s", from_define ? "-D" : "the default",
                     p->name, (long long)v.i, ty_dtype_name((DType)e.dt));
            v = sv_err();
          } else {
            v = sv_int(v.i, (DType)e.dt);
          }
        }
      }
    }
    sm_bind(s, p->name, v);
    if (v.k != V_ERR) {
      TConstInfo *ci = ar_alloc(&c->arena, sizeof *ci);
      ci->name = p->name;
      ci->dt = v.k == V_DTYPE ? DT_VOID : sm_const_dtype(v);
      ci->text = (char *)const_text(s, v);
      vec_push(&c->arena, &consts, ci);
    }
  }
  kf->nconsts = consts.len;
  kf->consts = ar_alloc(&c->arena, sizeof(TConstInfo) * (size_t)(consts.len + 1));
  for (int i = 0; i < consts.len; i++) kf->consts[i] = *(TConstInfo *)consts.data[i];
  sm_kernel_attrs(s, f, kf);
  s->warps = kf->warps;
  /* Run-time parameters become the body's block arguments. */
  Type **types = ar_alloc(&c->arena, sizeof(Type *) * (size_t)(nrt + 1));
  kf->params = ar_alloc(&c->arena, sizeof(TParam) * (size_t)(nrt + 1));
  int k = 0;
  bool ok = true;
  for (int i = 0; i < f->nparams; i++) {
    Param *p = &f->params[i];
    if (p->is_const) continue;
    Type *t;
    Elem e;
    if (p->type->kind == TE_GENERIC && !strcmp(p->type->name, "tma")) {
      if (!tma_param(s, p, &kf->params[k], &t)) {
        ok = false;
        continue;
      }
      types[k] = t;
      k++;
      continue;
    }
    if (!type_expr(s, p->type, &t, &e)) {
      ok = false;
      continue;
    }
    if (t->kind != TY_SCALAR) {
      dg_error(c, p->type->loc, "kernel parameter '%s' has type %s; kernels take pointers and scalars (tiles are "
                                "loaded inside the kernel)",
               p->name, ty_str(c, t));
      ok = false;
      continue;
    }
    if (e.dt == DT_BOOL) {
      dg_error(c, p->type->loc, "kernel parameter '%s' cannot be bool; pass an i32 and compare it", p->name);
      ok = false;
      continue;
    }
    int align = e.dt == DT_PTR ? 16 : 1;
    if (p->align) {
      int64_t av;
      if (!sm_const_int(s, sm_expr(s, p->align), p->align->loc, "the alignment", &av)) {
        ok = false;
        continue;
      }
      if (p->is_multiple_of) {
        if (e.dt == DT_PTR || !ty_is_int((DType)e.dt)) {
          dg_error(c, p->align->loc, "multiple_of(...) applies to integer parameters; pointers use align(...)");
          ok = false;
          continue;
        }
        if (av < 1 || av > (1 << 20)) {
          dg_error(c, p->align->loc, "multiple_of(%lld) is out of range", (long long)av);
          ok = false;
          continue;
        }
      } else {
        if (e.dt != DT_PTR) {
          dg_error(c, p->align->loc, "align(...) applies to pointer parameters; integers use multiple_of(...)");
          ok = false;
          continue;
        }
        int eb = ty_dtype_bytes((DType)e.pointee);
        if (!sm_is_pow2(av) || av < eb || av > 256) {
          dg_error(c, p->align->loc, "align(%lld) must be a power of two between the element size (%d) and 256",
                   (long long)av, eb);
          ok = false;
          continue;
        }
      }
      align = (int)av;
    }
    int promised = sm_define_multiple(s, p, e);
    if (promised < 0) {
      ok = false;
      continue;
    }
    if (promised > 1) { /* both promises: their least common multiple */
      int64_t g = align, r = promised;
      while (r) {
        int64_t rem = g % r;
        g = r, r = rem;
      }
      int64_t l = (int64_t)align / g * promised;
      if (l > (1 << 20)) {
        dg_error(c, p->loc, "'%s' is promised multiple_of(%d) and multiple_of(%d): together more than 2^20", p->name,
                 align, promised);
        ok = false;
        continue;
      }
      align = (int)l;
    }
    kf->params[k].name = p->name;
    kf->params[k].elem = e;
    kf->params[k].align = align;
    types[k] = t;
    k++;
  }
  kf->nparams = k;
  s->kparams = NULL;
  if (!ok) return;
  kf->body = ir_block(c, k, types);
  kf->body->warps = kf->warps;
  for (int i = 0; i < k; i++) {
    kf->params[i].value = kf->body->args[i];
    kf->body->args[i]->name = kf->params[i].name;
    sm_bind(s, kf->params[i].name, sv_rt(kf->body->args[i]));
  }
  s->blk = kf->body;
  St st = {0};
  sm_block_stmts(s, f->body, &st, true);
  sm_emit1(s, OP_RETURN, f->loc, 0, NULL, NULL);
  vec_push(&c->arena, &c->mod->kernels, kf);
}

bool sm_build(Ctx *c, Program *p, TModule *m) {
  S s = {.c = c, .prog = p};
  c->mod = m;
  sm_declare_globals(&s, p);
  /* Every constant of the user's files is checked, used or not (a typed
   * constant whose value does not fit its type is an error even before a
   * kernel reads it); generic functions stay checked where they are used. */
  for (int i = 0; i < p->consts.len && !dg_too_many(c); i++) {
    ConstDecl *d = p->consts.data[i];
    Sym *y = sm_global_find(&s, d->name);
    if (y && y->kind == SYM_CONST_DECL && y->decl == d && !d->loc.src->builtin) eval_const_decl(&s, y);
  }
  int nk = 0;
  for (int i = 0; i < p->funcs.len && !dg_too_many(c); i++) {
    Func *f = p->funcs.data[i];
    if (!f->is_kernel) continue;
    nk++;
    build_kernel(&s, f, NULL);
  }
  if (nk == 0 && c->nerrors == 0) dg_plain(c, "no kernel in the program (declare one with 'kernel name(...) { ... }')");
  c->inl = NULL; /* later stages' errors name calls through their ops' locations */
  return c->nerrors == 0;
}

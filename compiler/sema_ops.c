/* sema_ops.c - operators in semantic analysis: promotion and broadcasting
 * (sm_promote, sm_broadcast_to, sm_unify: two operands to one type),
 * constant folding of compile-time values (with overflow checks against
 * the result dtype) and binary operators on run-time values (the
 * comparison and arithmetic ops they emit). */
#include <math.h>
#include <string.h>

#include "sema.h"
/* ---- constant folding ---- */

static const char *op_text(S *s, int op);

SVal sm_fold_typed(S *s, SVal r, DType dt, Loc loc) {
  if (r.k == V_INT && dt != DT_VOID) {
    if (!sm_int_fits(r.i, dt)) {
      dg_error(s->c, loc, "constant expression overflows %s (value %lld)", ty_dtype_name(dt), (long long)r.i);
      return sv_err();
    }
    r.dt = dt;
  }
  return r;
}

static SVal fold(S *s, int op, SVal a, SVal b, Loc loc) {
  const char *opn = lx_kind_name((TokKind)op);
  DType dt = a.dt != DT_VOID ? a.dt : b.dt;
  if (a.k == V_INT && b.k == V_INT && a.dt != DT_VOID && b.dt != DT_VOID && a.dt != b.dt) {
    /* two typed constants promote like run-time values */
    Elem e;
    if (!sm_promote(s, (Elem){(uint8_t)a.dt, 0}, (Elem){(uint8_t)b.dt, 0}, &e, loc, op_text(s, op))) return sv_err();
    dt = (DType)e.dt;
  }
  if (a.k == V_BOOL && b.k == V_BOOL) {
    bool x = a.i, y = b.i;
    switch (op) {
    case TK_ANDAND: case TK_AMP: return sv_bool(x && y);
    case TK_OROR: case TK_PIPE: return sv_bool(x || y);
    case TK_CARET: case TK_NE: return sv_bool(x != y);
    case TK_EQ: return sv_bool(x == y);
    default: break;
    }
    dg_error(s->c, loc, "operator %s is not defined on booleans", opn);
    return sv_err();
  }
  if (a.k == V_FLOAT || b.k == V_FLOAT) {
    double x = a.k == V_FLOAT ? a.f : (double)a.i, y = b.k == V_FLOAT ? b.f : (double)b.i;
    DType fdt = a.k == V_FLOAT ? a.dt : b.dt;
    switch (op) {
    case TK_PLUS: return sv_float(x + y, fdt);
    case TK_MINUS: return sv_float(x - y, fdt);
    case TK_STAR: return sv_float(x * y, fdt);
    case TK_SLASH: return sv_float(x / y, fdt);
    case TK_PERCENT: return sv_float(fmod(x, y), fdt);
    case TK_EQ: return sv_bool(x == y);
    case TK_NE: return sv_bool(x != y);
    case TK_LT: return sv_bool(x < y);
    case TK_LE: return sv_bool(x <= y);
    case TK_GT: return sv_bool(x > y);
    case TK_GE: return sv_bool(x >= y);
    default: break;
    }
    dg_error(s->c, loc, "operator %s is not defined on floating-point values", opn);
    return sv_err();
  }
  int64_t x = a.i, y = b.i, r = 0;
  bool ovf = false;
  switch (op) {
  case TK_PLUS: ovf = __builtin_add_overflow(x, y, &r); break;
  case TK_MINUS: ovf = __builtin_sub_overflow(x, y, &r); break;
  case TK_STAR: ovf = __builtin_mul_overflow(x, y, &r); break;
  case TK_SLASH:
  case TK_PERCENT:
    if (y == 0) {
      dg_error(s->c, loc, "division by zero in a constant expression");
      return sv_err();
    }
    if (x == INT64_MIN && y == -1) ovf = true;
    else r = op == TK_SLASH ? x / y : x % y;
    break;
  case TK_AMP: r = x & y; break;
  case TK_PIPE: r = x | y; break;
  case TK_CARET: r = x ^ y; break;
  case TK_SHL:
  case TK_SHR:
    if (y < 0 || y >= 64) {
      dg_error(s->c, loc, "shift amount %lld is out of range", (long long)y);
      return sv_err();
    }
    r = op == TK_SHL ? (int64_t)((uint64_t)x << y) : x >> y;
    if (op == TK_SHL && (r >> y) != x) ovf = true;
    break;
  case TK_EQ: return sv_bool(x == y);
  case TK_NE: return sv_bool(x != y);
  case TK_LT: return sv_bool(x < y);
  case TK_LE: return sv_bool(x <= y);
  case TK_GT: return sv_bool(x > y);
  case TK_GE: return sv_bool(x >= y);
  case TK_ANDAND: case TK_OROR:
    dg_error(s->c, loc, "operator %s needs booleans, not integers", opn);
    return sv_err();
  default:
    dg_error(s->c, loc, "operator %s is not defined on integers", opn);
    return sv_err();
  }
  if (ovf) {
    dg_error(s->c, loc, "constant expression overflows 64 bits");
    return sv_err();
  }
  return sm_fold_typed(s, sv_int(r, DT_VOID), dt, loc);
}

/* ---- promotion and broadcasting ---- */

static const char *shape_str(S *s, int rank, const int *shape) {
  Buf b = {0};
  buf_puts(&b, "[");
  for (int i = 0; i < rank; i++) buf_printf(&b, i ? ", %d" : "%d", shape[i]);
  buf_puts(&b, "]");
  char *r = ar_strdup(&s->c->arena, b.data);
  buf_free(&b);
  return r;
}

/* Broadcast a value to a shape (numpy rules: align right, 1 stretches). */
TValue *sm_broadcast_to(S *s, TValue *v, int rank, const int *shape, Loc loc) {
  Type *t = v->type;
  if (t->kind == TY_SCALAR) return sm_splat(s, v, rank, shape, loc);
  if (t->rank > rank) {
    dg_error(s->c, loc, "cannot broadcast %s to the smaller shape %s", ty_str(s->c, t), shape_str(s, rank, shape));
    return NULL;
  }
  while (v->type->rank < rank) {
    int ns[TC_MAX_RANK];
    ns[0] = 1;
    for (int i = 0; i < v->type->rank; i++) ns[i + 1] = v->type->shape[i];
    TOp *op = sm_emit_op(s, OP_EXPAND_DIMS, loc, 1, &v, 1, (Type *[]){ty_tile(s->c, t->elem, v->type->rank + 1, ns)});
    op->axis = 0;
    v = op->res[0];
  }
  bool same = true;
  for (int i = 0; i < rank; i++) {
    if (v->type->shape[i] == shape[i]) continue;
    if (v->type->shape[i] != 1) {
      dg_error(s->c, loc, "cannot broadcast %s to %s: dimension %d is %d, not 1 or %d", ty_str(s->c, t),
               shape_str(s, rank, shape), i, v->type->shape[i], shape[i]);
      return NULL;
    }
    same = false;
  }
  if (same) return v;
  TOp *op = sm_emit_op(s, OP_BROADCAST, loc, 1, &v, 1, (Type *[]){ty_tile(s->c, t->elem, rank, shape)});
  for (int i = 0; i < rank; i++) op->shape[i] = shape[i];
  return op->res[0];
}

/* The common dtype of two run-time element types, or false with a message. */
bool sm_promote(S *s, Elem a, Elem b, Elem *out, Loc loc, const char *opname) {
  if (ty_elem_eq(a, b)) {
    *out = a;
    return true;
  }
  DType x = (DType)a.dt, y = (DType)b.dt;
  if (x == DT_PTR || y == DT_PTR) {
    dg_error(s->c, loc, "'%s' cannot combine %s and %s", opname, ty_elem_str(s->c, a), ty_elem_str(s->c, b));
    return false;
  }
  if (x == DT_BOOL) {
    *out = b;
    return true;
  }
  if (y == DT_BOOL) {
    *out = a;
    return true;
  }
  if (ty_is_float(x) && ty_is_float(y)) {
    DType r = (x == DT_F64 || y == DT_F64) ? DT_F64 : DT_F32;
    *out = (Elem){(uint8_t)r, 0};
    return true;
  }
  if (ty_is_float(x) != ty_is_float(y)) {
    *out = ty_is_float(x) ? a : b;
    return true;
  }
  int bx = ty_dtype_bits(x), by = ty_dtype_bits(y);
  if (bx == by) {
    dg_error(s->c, loc, "'%s' mixes %s and %s; cast one of them explicitly with 'as'", opname, ty_dtype_name(x),
             ty_dtype_name(y));
    return false;
  }
  *out = bx > by ? a : b;
  return true;
}

bool sm_unify(S *s, SVal *a, SVal *b, Loc loc, const char *opname) {
  if (a->k == V_ERR || b->k == V_ERR) return false;
  for (int i = 0; i < 2; i++) {
    SVal *v = i ? b : a;
    if ((v->k != V_RT && !sv_is_const(*v)) ||
        (v->k == V_RT && v->v->type->kind != TY_SCALAR && v->v->type->kind != TY_TILE)) {
      dg_error(s->c, loc, "'%s' needs a number or a tile, not %s", opname, sv_desc(s, *v));
      return false;
    }
  }
  Elem e;
  if (a->k != V_RT && b->k != V_RT) {
    /* two constants (e.g. where(mask, 1.0, 0.0)): their common dtype */
    DType da = sm_const_dtype(*a), db = sm_const_dtype(*b);
    if (a->k == V_FLOAT || b->k == V_FLOAT) e = (Elem){(uint8_t)(ty_is_float(da) ? da : db), 0};
    else if (a->dt != DT_VOID || b->dt != DT_VOID) e = (Elem){(uint8_t)(a->dt != DT_VOID ? a->dt : b->dt), 0};
    else e = (Elem){(uint8_t)(ty_dtype_bits(da) >= ty_dtype_bits(db) ? da : db), 0};
  } else if (a->k == V_RT && b->k == V_RT) {
    if (!sm_promote(s, a->v->type->elem, b->v->type->elem, &e, loc, opname)) return false;
  } else {
    SVal *r = a->k == V_RT ? a : b, *k = a->k == V_RT ? b : a;
    e = r->v->type->elem;
    if (k->k == V_FLOAT && !ty_is_float((DType)e.dt)) {
      if (e.dt == DT_PTR) {
        dg_error(s->c, loc, "'%s' cannot combine a pointer with a float", opname);
        return false;
      }
      e = (Elem){DT_F32, 0};
    }
    if (k->dt != DT_VOID && k->dt != (DType)e.dt && e.dt != DT_PTR) {
      /* a typed constant (a const parameter): promote like a run-time value */
      if (!sm_promote(s, e, (Elem){(uint8_t)k->dt, 0}, &e, loc, opname)) return false;
    }
  }
  TValue *va = sm_rt_as(s, *a, e, loc), *vb = va ? sm_rt_as(s, *b, e, loc) : NULL;
  if (!va || !vb) return false;
  /* shapes */
  int ra = va->type->kind == TY_TILE ? va->type->rank : 0, rb = vb->type->kind == TY_TILE ? vb->type->rank : 0;
  int r = ra > rb ? ra : rb, shape[TC_MAX_RANK];
  for (int i = 0; i < r; i++) {
    int da = i - (r - ra) >= 0 ? va->type->shape[i - (r - ra)] : 1;
    int db = i - (r - rb) >= 0 ? vb->type->shape[i - (r - rb)] : 1;
    if (da != db && da != 1 && db != 1) {
      dg_error(s->c, loc, "'%s' cannot broadcast %s and %s: dimension %d is %d vs %d", opname, ty_str(s->c, va->type),
               ty_str(s->c, vb->type), i, da, db);
      return false;
    }
    shape[i] = da > db ? da : db;
  }
  va = sm_broadcast_to(s, va, r, shape, loc);
  vb = va ? sm_broadcast_to(s, vb, r, shape, loc) : NULL;
  if (!va || !vb) return false;
  *a = sv_rt(va);
  *b = sv_rt(vb);
  return true;
}

/* ---- binary operators on run-time values ---- */

static Opcode arith_op(int op) {
  switch (op) {
  case TK_PLUS: return OP_ADD;
  case TK_MINUS: return OP_SUB;
  case TK_STAR: return OP_MUL;
  case TK_SLASH: return OP_DIV;
  case TK_PERCENT: return OP_REM;
  case TK_AMP: case TK_ANDAND: return OP_AND;
  case TK_PIPE: case TK_OROR: return OP_OR;
  case TK_CARET: return OP_XOR;
  case TK_SHL: return OP_SHL;
  case TK_SHR: return OP_SHR;
  default: return OP_COUNT;
  }
}

static int cmp_pred(int op) {
  switch (op) {
  case TK_EQ: return CMP_EQ;
  case TK_NE: return CMP_NE;
  case TK_LT: return CMP_LT;
  case TK_LE: return CMP_LE;
  case TK_GT: return CMP_GT;
  case TK_GE: return CMP_GE;
  default: return -1;
  }
}

static bool is_ptr_val(SVal v) { return v.k == V_RT && v.v->type->elem.dt == DT_PTR; }

static SVal ptr_arith(S *s, int op, SVal p, SVal off, Loc loc) {
  if (off.k == V_RT ? !ty_is_int((DType)off.v->type->elem.dt) : off.k != V_INT) {
    dg_error(s->c, loc, "pointer arithmetic needs an integer offset, not %s", sv_desc(s, off));
    return sv_err();
  }
  TValue *o = off.k == V_RT ? off.v : sm_rt(s, off, loc);
  if (!o) return sv_err();
  if (op == TK_MINUS) {
    o = sm_emit1(s, OP_NEG, loc, 1, &o, o->type);
  }
  /* shapes: broadcast pointer and offset together */
  SVal a = p, b = sv_rt(o);
  TValue *pv = a.v;
  int ra = pv->type->kind == TY_TILE ? pv->type->rank : 0, rb = o->type->kind == TY_TILE ? o->type->rank : 0;
  int r = ra > rb ? ra : rb, shape[TC_MAX_RANK];
  for (int i = 0; i < r; i++) {
    int da = i - (r - ra) >= 0 ? pv->type->shape[i - (r - ra)] : 1;
    int db = i - (r - rb) >= 0 ? o->type->shape[i - (r - rb)] : 1;
    if (da != db && da != 1 && db != 1) {
      dg_error(s->c, loc, "cannot broadcast pointers %s and offsets %s: dimension %d is %d vs %d",
               ty_str(s->c, pv->type), ty_str(s->c, o->type), i, da, db);
      return sv_err();
    }
    shape[i] = da > db ? da : db;
  }
  (void)b;
  pv = sm_broadcast_to(s, pv, r, shape, loc);
  o = pv ? sm_broadcast_to(s, o, r, shape, loc) : NULL;
  if (!pv || !o) return sv_err();
  return sv_rt(sm_emit1(s, OP_PTR_ADD, loc, 2, (TValue *[]){pv, o}, pv->type));
}

/* An operator's spelling without the quotes lx_kind_name adds. */
static const char *op_text(S *s, int op) {
  const char *q = lx_kind_name((TokKind)op);
  size_t n = strlen(q);
  return n > 2 && q[0] == '\'' ? ar_strndup(&s->c->arena, q + 1, n - 2) : q;
}

SVal sm_binary(S *s, int op, SVal a, SVal b, Loc loc) {
  if (a.k == V_ERR || b.k == V_ERR) return sv_err();
  if (sv_is_const(a) && sv_is_const(b)) return fold(s, op, a, b, loc);
  const char *opn = op_text(s, op);
  if ((op == TK_PLUS || op == TK_MINUS) && is_ptr_val(a)) return ptr_arith(s, op, a, b, loc);
  if (op == TK_PLUS && is_ptr_val(b)) return ptr_arith(s, op, b, a, loc);
  if (is_ptr_val(a) || is_ptr_val(b)) {
    dg_error(s->c, loc, "operator '%s' is not defined on pointers (only pointer + integer offset)", opn);
    return sv_err();
  }
  if (!sm_unify(s, &a, &b, loc, opn)) return sv_err();
  TValue *x = a.v, *y = b.v;
  DType dt = (DType)x->type->elem.dt;
  int pred = cmp_pred(op);
  if (pred >= 0) {
    TOp *o = sm_emit_op(s, OP_CMP, loc, 2, (TValue *[]){x, y}, 1,
                     (Type *[]){ty_with_elem(s->c, x->type, (Elem){DT_BOOL, 0})});
    o->pred = pred;
    return sv_rt(o->res[0]);
  }
  if (op == TK_ANDAND || op == TK_OROR) {
    if (dt != DT_BOOL) {
      dg_error(s->c, loc, "operator '%s' needs booleans, not %s (use '&' / '|' for bits)", opn, ty_str(s->c, x->type));
      return sv_err();
    }
  }
  Opcode oc = arith_op(op);
  if (oc == OP_COUNT) {
    dg_error(s->c, loc, "unknown operator '%s'", opn);
    return sv_err();
  }
  if (dt == DT_BOOL && (oc == OP_ADD || oc == OP_SUB || oc == OP_MUL || oc == OP_DIV || oc == OP_REM ||
                        oc == OP_SHL || oc == OP_SHR)) {
    dg_error(s->c, loc, "operator '%s' is not defined on booleans; cast to an integer type first", opn);
    return sv_err();
  }
  if (ty_is_float(dt) && (oc == OP_AND || oc == OP_OR || oc == OP_XOR || oc == OP_SHL || oc == OP_SHR)) {
    dg_error(s->c, loc, "operator '%s' is not defined on %s", opn, ty_str(s->c, x->type));
    return sv_err();
  }
  if (b.k != V_RT) { /* unreachable: unify made both run-time */ }
  TOp *yd = y->def;
  if (yd && yd->opc == OP_SPLAT) yd = yd->opnds[0]->def;
  if (yd && yd->opc == OP_CONST && !ty_is_float(dt)) {
    if ((oc == OP_DIV || oc == OP_REM) && yd->ival == 0) {
      dg_error(s->c, loc, "integer division by zero");
      return sv_err();
    }
    if ((oc == OP_SHL || oc == OP_SHR) && (yd->ival < 0 || yd->ival >= ty_dtype_bits(dt))) {
      dg_error(s->c, loc, "shift by %lld is out of range for %s (0 to %d)", (long long)yd->ival,
               ty_dtype_name(dt), ty_dtype_bits(dt) - 1);
      return sv_err();
    }
  }
  return sv_rt(sm_emit1(s, oc, loc, 2, (TValue *[]){x, y}, x->type));
}

/* The math builtins computed by fast f32 approximations (lower_math.c):
 * refused on f64 rather than silently narrowed. */
bool sm_math_f32_only(Opcode opc) {
  switch (opc) {
  case OP_EXP: case OP_EXP2: case OP_LOG: case OP_LOG2: case OP_RSQRT: case OP_TANH: case OP_SIN: case OP_COS:
  case OP_ERF: case OP_RCP: case OP_FDIV: return true;
  default: return false;
  }
}

SVal sm_unary_math(S *s, Opcode opc, SVal a, Loc loc, const char *name) {
  if (a.k == V_ERR) return a;
  if (sv_is_const(a) && a.k != V_BOOL) {
    double x = a.k == V_FLOAT ? a.f : (double)a.i;
    double r;
    switch (opc) {
    case OP_EXP: r = exp(x); break;
    case OP_EXP2: r = exp2(x); break;
    case OP_LOG: r = log(x); break;
    case OP_LOG2: r = log2(x); break;
    case OP_SQRT: r = sqrt(x); break;
    case OP_RSQRT: r = 1.0 / sqrt(x); break;
    case OP_FLOOR: r = floor(x); break;
    case OP_CEIL: r = ceil(x); break;
    case OP_TANH: r = tanh(x); break;
    case OP_SIN: r = sin(x); break;
    case OP_COS: r = cos(x); break;
    case OP_ERF: r = erf(x); break;
    case OP_RCP: r = 1.0 / x; break;
    case OP_ABS:
      if (a.k == V_INT) {
        if (a.i == INT64_MIN) {
          dg_error(s->c, loc, "constant expression overflows 64 bits");
          return sv_err();
        }
        return sv_int(a.i < 0 ? -a.i : a.i, a.dt);
      }
      r = fabs(x);
      break;
    default: r = x;
    }
    return sv_float(r, a.k == V_FLOAT ? a.dt : DT_VOID);
  }
  TValue *v = sm_rt(s, a, loc);
  if (!v) return sv_err();
  DType dt = (DType)v->type->elem.dt;
  if (opc == OP_ABS && (ty_is_int(dt) || ty_is_float(dt))) return sv_rt(sm_emit1(s, opc, loc, 1, &v, v->type));
  if (!ty_is_float(dt)) {
    dg_error(s->c, loc, "'%s' needs a floating-point argument, not %s; cast it first (e.g. 'x as f32')", name,
             ty_str(s->c, v->type));
    return sv_err();
  }
  if (dt == DT_F64 && sm_math_f32_only(opc)) {
    dg_error(s->c, loc, "'%s' of f64 is not supported yet (the fast approximations are f32); use 'x as f32'", name);
    return sv_err();
  }
  return sv_rt(sm_emit1(s, opc, loc, 1, &v, v->type));
}

/* ---- compile-time integers and shape lists ---- */

bool sm_const_int(S *s, SVal v, Loc loc, const char *what, int64_t *out) {
  if (v.k == V_INT) {
    *out = v.i;
    return true;
  }
  if (v.k == V_BOOL) {
    *out = v.i;
    return true;
  }
  if (v.k != V_ERR) dg_error(s->c, loc, "%s must be a compile-time integer, not %s", what, sv_desc(s, v));
  return false;
}

bool sm_is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

bool sm_shape_list(S *s, SVal v, Loc loc, const char *what, int *rank, int *shape) {
  return sm_dims_list(s, v, loc, what, rank, shape, true);
}

/* A list of compile-time sizes; pow2: each a power of two (a register
 * tile's), else any positive size (shared-memory rows, TMA box rows). */
bool sm_dims_list(S *s, SVal v, Loc loc, const char *what, int *rank, int *shape, bool pow2) {
  if (v.k == V_ERR) return false;
  SVal single;
  SVal *items = v.items;
  int n = v.n;
  if (v.k == V_INT) {
    single = v;
    items = &single;
    n = 1;
  } else if (v.k != V_LIST && v.k != V_TUPLE) {
    dg_error(s->c, loc, "%s must be a list of compile-time sizes like [128, 64], not %s", what, sv_desc(s, v));
    return false;
  }
  if (n < 1 || n > TC_MAX_RANK) {
    dg_error(s->c, loc, "%s must have 1 to %d dimensions, not %d", what, TC_MAX_RANK, n);
    return false;
  }
  int64_t total = 1;
  for (int i = 0; i < n; i++) {
    int64_t d;
    if (!sm_const_int(s, items[i], loc, "a tile dimension", &d)) return false;
    if (pow2 && (!sm_is_pow2(d) || d > TC_MAX_ELEMS)) {
      dg_error(s->c, loc, "tile dimension %d of %s is %lld; dimensions must be powers of two up to %d", i, what,
               (long long)d, TC_MAX_ELEMS);
      return false;
    }
    if (!pow2 && (d < 1 || d > TC_MAX_ELEMS)) {
      dg_error(s->c, loc, "dimension %d of %s is %lld; it must be between 1 and %d", i, what, (long long)d,
               TC_MAX_ELEMS);
      return false;
    }
    total *= d;
    shape[i] = (int)d;
    if (total > TC_MAX_ELEMS) break; /* reported below; never overflows */
  }
  if (total > TC_MAX_ELEMS) {
    dg_error(s->c, loc, "%s has %lld elements; the limit for a %s is %d", what, (long long)total,
             pow2 ? "register tile" : "buffer", TC_MAX_ELEMS);
    return false;
  }
  *rank = n;
  return true;
}


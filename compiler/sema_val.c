/* sema_val.c - the bottom of semantic analysis: compile-time values and
 * their descriptions, the TIR they become (constants, casts, splats), the
 * evaluation budget, and the binding of a call's arguments to a builtin's
 * parameters. Expressions are evaluated through S.eval (sm_eval), which
 * sema.c sets to its sm_expr: so the files that evaluate arguments and
 * constants -- builtins*.c, sema_env.c, sema_type.c, sema_stmt.c -- sit
 * below sema.c and call nothing above them (tilec_int.h, the map). */
#include "sema.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

SVal sm_eval(S *s, Node *n) { return s->eval(s, n); }

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
/* A call's arguments bound to the builtin's parameters (positional, then by name), each evaluated. */
bool sm_bind_args(S *s, Node *call, Node *self, const char *fname, const Spec *sp, BArgs *a) {
  memset(a, 0, sizeof *a);
  int n = 0;
  while (n < 8 && sp->names[n]) n++;
  int pos = 0;
  int total = call->nlist + (self ? 1 : 0);
  for (int i = 0; i < total; i++) {
    Node *arg = self ? (i == 0 ? self : call->list[i - 1]) : call->list[i];
    int slot = -1;
    if (arg->argname) {
      for (int j = 0; j < n; j++)
        if (!strcmp(sp->names[j], arg->argname)) slot = j;
      if (slot < 0) {
        dg_error(s->c, arg->loc, "'%s' has no parameter named '%s'", fname, arg->argname);
        return false;
      }
    } else {
      slot = pos++;
      if (slot >= n) {
        dg_error(s->c, arg->loc, "'%s' takes at most %d argument%s", fname, n, n == 1 ? "" : "s");
        return false;
      }
    }
    if (a->given[slot]) {
      dg_error(s->c, arg->loc, "argument '%s' of '%s' is given twice", sp->names[slot], fname);
      return false;
    }
    a->given[slot] = true;
    a->loc[slot] = arg->loc;
    a->v[slot] = sm_eval(s, arg);
    if (a->v[slot].k == V_ERR) return false;
  }
  for (int j = 0; j < sp->nreq; j++)
    if (!a->given[j]) {
      dg_error(s->c, call->loc, "'%s' needs argument '%s'", fname, sp->names[j]);
      return false;
    }
  for (int j = 0; j < n; j++)
    if (!a->given[j]) a->loc[j] = call->loc;
  return true;
}


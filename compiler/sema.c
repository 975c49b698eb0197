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
 * Here: expressions, calls, kernels. Below it (sema.h has the order):
 * sema_val.c (values, emission, argument binding), sema_ops.c (promotion
 * and broadcasting, constant folding, operators), sema_env.c (names and
 * scopes), sema_type.c (types written in the source, top-level constants),
 * builtins*.c (builtins), sema_stmt.c (statements). */
#include "sema.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



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
      if (y->kind == SYM_CONST_DECL) return sm_const_decl_value(s, y);
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
    if (!sm_type_expr(s, n->type, &t, &e)) return sv_err();
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
      v = sm_typed_const(s, v, f->params[j].type, locs[j],
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
  if (!sm_type_expr(s, te->items[0], &et, &e)) return false;
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
        if (!sm_type_expr(s, p->type, &t, &e)) v = sv_err();
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
    if (!sm_type_expr(s, p->type, &t, &e)) {
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
  S s = {.c = c, .prog = p, .eval = sm_expr};
  c->mod = m;
  sm_declare_globals(&s, p);
  /* Every constant of the user's files is checked, used or not (a typed
   * constant whose value does not fit its type is an error even before a
   * kernel reads it); generic functions stay checked where they are used. */
  for (int i = 0; i < p->consts.len && !dg_too_many(c); i++) {
    ConstDecl *d = p->consts.data[i];
    Sym *y = sm_global_find(&s, d->name);
    if (y && y->kind == SYM_CONST_DECL && y->decl == d && !d->loc.src->builtin) sm_const_decl_value(&s, y);
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

/* sema_stmt.c - semantic analysis of statements: let and assignment,
 * if (compile-time and run-time), loops (range, static_range, while),
 * return, tasks; the snapshots that merge what the branches of a run-time
 * if or the body of a loop assign. Expressions and calls are in sema.c. */
#include <math.h>
#include <string.h>

#include "sema.h"
/* ---- statements ---- */

typedef struct Snap {
  Sym **syms;
  SVal *vals;
  int n;
} Snap;

static Snap snapshot(S *s) {
  Snap sn = {0};
  for (Sym *y = s->scope; y; y = y->next) sn.n++;
  sn.syms = ar_alloc(&s->c->arena, sizeof(Sym *) * (size_t)(sn.n + 1));
  sn.vals = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)(sn.n + 1));
  int i = 0;
  for (Sym *y = s->scope; y; y = y->next, i++) {
    sn.syms[i] = y;
    sn.vals[i] = y->val;
  }
  return sn;
}

static SVal *current_vals(S *s, Snap *sn) {
  SVal *v = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)(sn->n + 1));
  for (int i = 0; i < sn->n; i++) v[i] = sn->syms[i]->val;
  return v;
}

static void restore(Snap *sn) {
  for (int i = 0; i < sn->n; i++) sn->syms[i]->val = sn->vals[i];
}

static bool sval_same(SVal a, SVal b) {
  if (a.k != b.k) return false;
  switch (a.k) {
  case V_RT: return a.v == b.v;
  case V_INT: case V_BOOL: return a.i == b.i && a.dt == b.dt;
  case V_FLOAT: return (a.f == b.f || (isnan(a.f) && isnan(b.f))) && a.dt == b.dt;
  case V_ERR: return true;
  default: return a.items == b.items && a.elem.dt == b.elem.dt && a.layout == b.layout && a.s == b.s;
  }
}

static void stmt(S *s, Node *n, St *st, bool last);

void sm_block_stmts(S *s, Node *b, St *st, bool last_is_tail) {
  Sym *saved = s->scope;
  s->bdepth++;
  for (int i = 0; i < b->nlist && !dg_too_many(s->c) && !s->c->too_big; i++)
    stmt(s, b->list[i], st, last_is_tail && i == b->nlist - 1);
  s->bdepth--;
  /* pop lets of this block, but keep in-place updates of outer variables */
  sm_scope_restore(s, saved);
}

/* A 'let' of a name that a variable of an enclosing block of this function
 * already has (not a parameter, not one of this block's): legal, but the
 * rest of the block then reads and assigns the new one, which is easy to
 * miss (an inner `let turn = 1;` once hid a loop's `turn` from the code
 * after it). */
static void let_shadows(S *s, const char *name, Loc loc) {
  Sym *o = sm_local_find(s, name);
  if (o && o->kind == SYM_VAR && o->bdepth >= 1 && o->bdepth < s->bdepth)
    dg_warning(s->c, loc, "'let %s' hides the '%s' of an enclosing block for the rest of this block (rename one, "
                          "or assign with '%s = ...' to update the outer one)", name, name, name);
}

/* Names assigned anywhere inside a statement (for loop-carried values). */
static void assigned_names(S *s, Node *n, Vec *out) {
  if (!n) return;
  switch (n->kind) {
  case ND_ASSIGN:
    if (n->lhs->kind == ND_IDENT) vec_push(&s->c->arena, out, n->lhs->name);
    else if (n->lhs->kind == ND_TUPLE)
      for (int i = 0; i < n->lhs->nlist; i++)
        if (n->lhs->list[i]->kind == ND_IDENT) vec_push(&s->c->arena, out, n->lhs->list[i]->name);
    break;
  case ND_BLOCK:
  case ND_TASKS:
    for (int i = 0; i < n->nlist; i++) assigned_names(s, n->list[i], out);
    break;
  case ND_TASK: assigned_names(s, n->body, out); break;
  case ND_IF:
    assigned_names(s, n->then, out);
    assigned_names(s, n->els, out);
    break;
  case ND_FOR:
  case ND_WHILE: assigned_names(s, n->body, out); break;
  default: break;
  }
}

/* Whether a value can be carried by a loop or merged by an if: run-time
 * scalars and tiles and constants; not shared or tensor memory, mbarriers
 * or TMA descriptors (which stay what they are: a tuple's such items may
 * not change, see below), nor anything else. who: "variable 'x'". */
static bool is_handle(SVal v) {
  return v.k == V_RT && (v.v->type->kind == TY_SMEM || v.v->type->kind == TY_BAR || v.v->type->kind == TY_TMA ||
                         v.v->type->kind == TY_TMEM);
}

static bool can_carry(S *s, SVal v, const char *who, Loc loc, const char *what) {
  if (is_handle(v)) {
    dg_error(s->c, loc, "%s holds %s and cannot change inside %s (index the ring with a variable slot "
                        "instead: buf[slot])",
             who, ty_str(s->c, v.v->type), what);
    return false;
  }
  if (v.k == V_RT || sv_is_const(v) || v.k == V_ERR) return true;
  dg_error(s->c, loc, "%s holds %s and cannot change inside %s", who, sv_desc(s, v), what);
  return false;
}

static const char *var_noun(S *s, const char *name) { return ar_printf(&s->c->arena, "variable '%s'", name); }

/* Make `v` a run-time value of type `t` (a constant is converted; anything
 * else must match exactly). */
static TValue *coerce_to(S *s, SVal v, Type *t, const char *who, Loc loc, const char *where) {
  if (v.k == V_ERR) return NULL;
  if (sv_is_const(v) && t->kind == TY_SCALAR) return sm_rt_as(s, v, t->elem, loc);
  if (sv_is_const(v) && t->kind == TY_TILE) {
    TValue *x = sm_rt_as(s, v, t->elem, loc);
    return x ? sm_splat(s, x, t->rank, t->shape, loc) : NULL;
  }
  if (v.k != V_RT) {
    dg_error(s->c, loc, "%s holds %s %s", who, sv_desc(s, v), where);
    return NULL;
  }
  if (!ty_eq(v.v->type, t)) {
    dg_error(s->c, loc, "%s is %s before %s but %s after it; a variable keeps its type and shape", who,
             ty_str(s->c, t), where, ty_str(s->c, v.v->type));
    return NULL;
  }
  return v.v;
}

/* ---- tuples carried by loops and merged by run-time ifs ----
 * A variable that holds a tuple is carried leaf by leaf: its items (nested
 * tuples flattened, depth first) are carried as separate values and the
 * tuple is rebuilt around them. It keeps its shape (the same count of
 * items, nested the same way). An item that is a buffer, an mbarrier or a
 * descriptor is not carried: it must be the same at the end of the body
 * (or in both branches). Any other variable is a tuple of one item. */

static int leaf_count(SVal v) {
  if (v.k != V_TUPLE) return 1;
  int n = 0;
  for (int i = 0; i < v.n; i++) n += leaf_count(v.items[i]);
  return n;
}

static void leaves_of(SVal v, SVal *out, int *k) {
  if (v.k != V_TUPLE) {
    out[(*k)++] = v;
    return;
  }
  for (int i = 0; i < v.n; i++) leaves_of(v.items[i], out, k);
}

static bool same_shape(SVal a, SVal b) {
  if (a.k != V_TUPLE || b.k != V_TUPLE) return (a.k == V_TUPLE) == (b.k == V_TUPLE);
  if (a.n != b.n) return false;
  for (int i = 0; i < a.n; i++)
    if (!same_shape(a.items[i], b.items[i])) return false;
  return true;
}

/* shape's tuple structure around leaves lv[*k], lv[*k + 1], ... */
static SVal rebuild(S *s, SVal shape, const SVal *lv, int *k) {
  if (shape.k != V_TUPLE) return lv[(*k)++];
  SVal r = shape;
  r.items = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)(shape.n + 1));
  for (int i = 0; i < shape.n; i++) r.items[i] = rebuild(s, shape.items[i], lv, k);
  return r;
}

static void shape_pattern(SVal v, Buf *b) {
  if (v.k != V_TUPLE) {
    buf_puts(b, "_");
    return;
  }
  buf_puts(b, "(");
  for (int i = 0; i < v.n; i++) {
    if (i) buf_puts(b, ", ");
    shape_pattern(v.items[i], b);
  }
  buf_puts(b, ")");
}

/* "a tuple (_, (_, _))", or the value's own description */
static const char *shape_desc(S *s, SVal v) {
  if (v.k != V_TUPLE) return sv_desc(s, v);
  Buf b = {0};
  shape_pattern(v, &b);
  const char *r = ar_printf(&s->c->arena, "a tuple %s", b.data ? b.data : "()");
  buf_free(&b);
  return r;
}

/* The path of leaf *l of v ("1.0": item 0 of item 1), appended to b; true once found. */
static bool leaf_path(SVal v, int *l, Buf *b) {
  if (v.k != V_TUPLE) return (*l)-- == 0;
  for (int i = 0; i < v.n; i++) {
    size_t at = b->len;
    buf_printf(b, at ? ".%d" : "%d", i);
    if (leaf_path(v.items[i], l, b)) return true;
    b->len = at;
    if (b->data) b->data[at] = 0;
  }
  return false;
}

/* Leaf l of variable `name` (shape: its value), for diagnostics: "variable 'x'", "item 1.0 of variable 'acc'". */
static const char *leaf_noun(S *s, const char *name, SVal shape, int l) {
  if (shape.k != V_TUPLE) return var_noun(s, name);
  Buf b = {0};
  leaf_path(shape, &l, &b);
  const char *r = ar_printf(&s->c->arena, "item %s of variable '%s'", b.data ? b.data : "?", name);
  buf_free(&b);
  return r;
}

/* The loop-carried leaves of a loop's variables cv[0..ncv). */
typedef struct Carry {
  Sym **cv;
  int ncv, nl, na;
  int *first;   /* cv[i]'s first leaf */
  SVal *shape;  /* cv[i]'s value before the loop */
  SVal *leaf;   /* every variable's leaves before the loop, in order */
  int *arg;     /* leaf j's carried value (block argument, result), -1 if it is not carried */
  TValue **init; /* the na carried values' initial values and types */
  Type **type;
} Carry;

/* Flatten the variables' values before the loop; false (said) when one cannot be carried. */
static bool carry_begin(S *s, Carry *cr, Loc loc) {
  Arena *a = &s->c->arena;
  cr->first = ar_alloc(a, sizeof(int) * (size_t)(cr->ncv + 1));
  cr->shape = ar_alloc(a, sizeof(SVal) * (size_t)(cr->ncv + 1));
  cr->nl = 0;
  for (int i = 0; i < cr->ncv; i++) {
    cr->first[i] = cr->nl;
    cr->shape[i] = cr->cv[i]->val;
    cr->nl += leaf_count(cr->cv[i]->val);
  }
  cr->leaf = ar_alloc(a, sizeof(SVal) * (size_t)(cr->nl + 1));
  cr->arg = ar_alloc(a, sizeof(int) * (size_t)(cr->nl + 1));
  cr->init = ar_alloc(a, sizeof(TValue *) * (size_t)(cr->nl + 1));
  cr->type = ar_alloc(a, sizeof(Type *) * (size_t)(cr->nl + 1));
  int k = 0;
  for (int i = 0; i < cr->ncv; i++) leaves_of(cr->cv[i]->val, cr->leaf, &k);
  cr->na = 0;
  for (int i = 0; i < cr->ncv; i++)
    for (int l = 0; l < leaf_count(cr->shape[i]); l++) {
      int j = cr->first[i] + l;
      cr->arg[j] = -1;
      if (cr->shape[i].k == V_TUPLE && is_handle(cr->leaf[j])) continue; /* stays; checked at the end */
      if (!can_carry(s, cr->leaf[j], leaf_noun(s, cr->cv[i]->name, cr->shape[i], l), loc, "a loop")) return false;
      TValue *v = sm_rt(s, cr->leaf[j], loc);
      if (!v) return false;
      cr->arg[j] = cr->na;
      cr->init[cr->na] = v;
      cr->type[cr->na++] = v->type;
    }
  return true;
}

/* The variables as the carried values args[0..na) (a block's arguments, then named after them; or an op's
 * results), the items not carried as they were. */
static void carry_bind(S *s, Carry *cr, TValue **args, bool name) {
  SVal *lv = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)(cr->nl + 1));
  for (int j = 0; j < cr->nl; j++) lv[j] = cr->arg[j] < 0 ? cr->leaf[j] : sv_rt(args[cr->arg[j]]);
  for (int i = 0; i < cr->ncv; i++) {
    int k = cr->first[i];
    for (int l = 0; l < leaf_count(cr->shape[i]) && name; l++)
      if (cr->arg[k + l] >= 0) args[cr->arg[k + l]]->name = cr->cv[i]->name;
    cr->cv[i]->val = rebuild(s, cr->shape[i], lv, &k);
  }
}

/* The variables' values at the end of the body as ys[0..na) of the carried types; false (said) if one
 * changed its shape or type, or an item not carried changed. */
static bool carry_end(S *s, Carry *cr, TValue **ys, Loc loc, const char *where) {
  bool ok = true;
  SVal *lv = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)(cr->nl + 1));
  for (int i = 0; i < cr->ncv; i++) {
    SVal v = cr->cv[i]->val;
    if (v.k == V_ERR) {
      ok = false;
      continue;
    }
    if (!same_shape(cr->shape[i], v)) {
      dg_error(s->c, loc, "variable '%s' is %s before %s but %s after it; a variable keeps its shape", cr->cv[i]->name,
               shape_desc(s, cr->shape[i]), where, shape_desc(s, v));
      ok = false;
      continue;
    }
    int k = cr->first[i];
    leaves_of(v, lv, &k);
    for (int l = 0; l < leaf_count(v); l++) {
      int j = cr->first[i] + l;
      const char *who = leaf_noun(s, cr->cv[i]->name, cr->shape[i], l);
      if (cr->arg[j] < 0) {
        if (!sval_same(lv[j], cr->leaf[j])) {
          can_carry(s, lv[j].k == V_ERR ? cr->leaf[j] : lv[j], who, loc, "a loop");
          ok = false;
        }
        continue;
      }
      ys[cr->arg[j]] = coerce_to(s, lv[j], cr->type[cr->arg[j]], who, loc, where);
      if (!ys[cr->arg[j]]) ok = false;
    }
  }
  return ok;
}

/* The variables as the loop's results res[0..na), or errors. */
static void carry_results(S *s, Carry *cr, TValue **res, bool ok) {
  if (!ok) {
    for (int i = 0; i < cr->ncv; i++) cr->cv[i]->val = sv_err();
    return;
  }
  carry_bind(s, cr, res, false);
}

static void if_stmt(S *s, Node *n, St *st) {
  SVal cond = sm_eval(s, n->cond);
  if (cond.k == V_ERR) return;
  if (cond.k == V_BOOL) { /* compile-time if: only the taken branch exists */
    if (cond.i) sm_block_stmts(s, n->then, st, false);
    else if (n->els) {
      if (n->els->kind == ND_IF) if_stmt(s, n->els, st);
      else sm_block_stmts(s, n->els, st, false);
    }
    return;
  }
  TValue *c = cond.k == V_RT ? cond.v : NULL;
  if (!c || c->type->kind != TY_SCALAR || c->type->elem.dt != DT_BOOL) {
    dg_error(s->c, n->cond->loc,
             "the condition of 'if' must be a scalar bool, not %s (for tiles, use where() or a mask)",
             sv_desc(s, cond));
    return;
  }
  Snap sn = snapshot(s);
  TBlock *outer = s->blk;
  TBlock *tb = ir_block(s->c, 0, NULL), *eb = ir_block(s->c, 0, NULL);
  s->blk = tb;
  sm_block_stmts(s, n->then, st, false);
  SVal *tv = current_vals(s, &sn);
  restore(&sn);
  s->blk = eb;
  if (n->els) {
    if (n->els->kind == ND_IF) if_stmt(s, n->els, st);
    else sm_block_stmts(s, n->els, st, false);
  }
  SVal *ev = current_vals(s, &sn);
  restore(&sn);
  /* Which variables changed, and their merged type: leaf by leaf (a variable that holds a tuple keeps its
   * shape; a leaf that is the same constant in both branches stays one) */
  Vec idx = {0}, lidx = {0}, types = {0}, tl = {0};
  SVal **merged = ar_alloc(&s->c->arena, sizeof(SVal *) * (size_t)(sn.n + 1));
  for (int i = 0; i < sn.n; i++) {
    if (sval_same(tv[i], sn.vals[i]) && sval_same(ev[i], sn.vals[i])) continue;
    const char *name = sn.syms[i]->name;
    if (tv[i].k == V_ERR || ev[i].k == V_ERR) {
      sn.syms[i]->val = sv_err();
      continue;
    }
    if (!same_shape(tv[i], ev[i])) {
      dg_error(s->c, n->loc, "variable '%s' is %s after the 'if' (then branch) but %s after its else branch; a "
                             "variable keeps its shape",
               name, shape_desc(s, tv[i]), shape_desc(s, ev[i]));
      sn.syms[i]->val = sv_err();
      continue;
    }
    int nl = leaf_count(tv[i]), k = 0;
    SVal *tls = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)(nl + 1));
    SVal *els = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)(nl + 1));
    leaves_of(tv[i], tls, &k);
    k = 0;
    leaves_of(ev[i], els, &k);
    merged[i] = ar_alloc(&s->c->arena, sizeof(SVal) * (size_t)(nl + 1));
    bool bad = false;
    for (int l = 0; l < nl; l++) {
      SVal a = tls[l], b = els[l];
      merged[i][l] = a;
      if (a.k == V_ERR || b.k == V_ERR) {
        bad = true;
        continue;
      }
      if (sval_same(a, b)) continue; /* the same constant, or value, in both branches */
      const char *ln = leaf_noun(s, name, tv[i], l);
      if (!can_carry(s, a, ln, n->loc, "an 'if'") || !can_carry(s, b, ln, n->loc, "an 'if'")) {
        bad = true;
        continue;
      }
      Type *t = a.k == V_RT ? a.v->type : b.k == V_RT ? b.v->type : sv_type(s, a);
      if (a.k != V_RT && b.k != V_RT && a.k == V_FLOAT) t = sv_type(s, a);
      if (a.k != V_RT && b.k != V_RT && b.k == V_FLOAT) t = sv_type(s, b);
      vec_push(&s->c->arena, &idx, (void *)(intptr_t)i);
      vec_push(&s->c->arena, &lidx, (void *)(intptr_t)l);
      vec_push(&s->c->arena, &types, t);
      SVal *pa = ar_alloc(&s->c->arena, sizeof(SVal) * 2);
      pa[0] = a, pa[1] = b;
      vec_push(&s->c->arena, &tl, pa);
    }
    if (bad) {
      sn.syms[i]->val = sv_err();
      merged[i] = NULL;
    }
  }
  TValue **ty = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(idx.len + 1));
  TValue **ey = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(idx.len + 1));
  bool ok = true;
  int nm = 0;
  for (int j = 0; j < idx.len; j++) {
    int i = (int)(intptr_t)idx.data[j];
    if (!merged[i]) continue; /* said above */
    const char *name = leaf_noun(s, sn.syms[i]->name, tv[i], (int)(intptr_t)lidx.data[j]);
    SVal *pa = tl.data[j];
    s->blk = tb;
    ty[nm] = coerce_to(s, pa[0], types.data[j], name, n->loc, "the 'if' (then branch)");
    s->blk = eb;
    ey[nm] = coerce_to(s, pa[1], types.data[j], name, n->loc, "the 'if' (else branch)");
    if (!ty[nm] || !ey[nm]) ok = false;
    types.data[nm] = types.data[j], idx.data[nm] = idx.data[j], lidx.data[nm] = lidx.data[j];
    nm++;
  }
  s->blk = tb;
  sm_emit1(s, OP_YIELD, n->loc, ok ? nm : 0, ty, NULL);
  s->blk = eb;
  sm_emit1(s, OP_YIELD, n->loc, ok ? nm : 0, ey, NULL);
  s->blk = outer;
  TOp *op = sm_emit_op(s, OP_IF, n->loc, 1, &c, ok ? nm : 0, (Type **)types.data);
  ir_add_region(s->c, op, tb);
  ir_add_region(s->c, op, eb);
  for (int j = 0; j < nm; j++) {
    int i = (int)(intptr_t)idx.data[j];
    merged[i][(int)(intptr_t)lidx.data[j]] = ok ? sv_rt(op->res[j]) : sv_err();
  }
  for (int i = 0; i < sn.n; i++) {
    if (!merged[i]) continue;
    int k = 0;
    sn.syms[i]->val = tv[i].k == V_TUPLE ? rebuild(s, tv[i], merged[i], &k) : merged[i][0];
    if (!ok) sn.syms[i]->val = sv_err();
  }
}

/* Find the loop-carried variables of a loop: outer variables the body assigns. */
static int carried_vars(S *s, Node *body, Node *cond, Sym ***out) {
  Vec names = {0};
  assigned_names(s, body, &names);
  (void)cond;
  Vec syms = {0};
  for (int i = 0; i < names.len; i++) {
    Sym *y = sm_local_find(s, names.data[i]);
    if (!y || y->kind != SYM_VAR) continue;
    bool dup = false;
    for (int j = 0; j < syms.len; j++) dup |= syms.data[j] == y;
    if (!dup) vec_push(&s->c->arena, &syms, y);
  }
  *out = (Sym **)syms.data;
  return syms.len;
}

static void static_for(S *s, Node *n, SVal r, St *st) {
  int64_t a, b, step;
  if (!sm_const_int(s, r.items[0], n->init->loc, "the start of static_range", &a) ||
      !sm_const_int(s, r.items[1], n->init->loc, "the end of static_range", &b) ||
      !sm_const_int(s, r.items[2], n->init->loc, "the step of static_range", &step))
    return;
  if (step == 0) {
    dg_error(s->c, n->init->loc, "static_range step must not be zero");
    return;
  }
  __int128 span = step > 0 ? (__int128)b - a : (__int128)a - b;
  __int128 st128 = step > 0 ? step : -(__int128)step;
  __int128 trips = span <= 0 ? 0 : (span + st128 - 1) / st128;
  if (trips > 4096) {
    dg_error(s->c, n->init->loc, "static_range unrolls %.0f iterations; the limit is 4096 (use range for a loop)",
             (double)trips);
    return;
  }
  bool outermost = s->unroll_depth++ == 0;
  int ops0 = s->c->nops;
  for (__int128 i = a; step > 0 ? i < b : i > b; i += step) {
    if (!sm_budget(s, n->loc)) break;
    Sym *saved = s->scope;
    sm_bind(s, n->name, sv_int((int64_t)i, DT_VOID));
    sm_block_stmts(s, n->body, st, false);
    sm_scope_restore(s, saved);
    if (dg_too_many(s->c) || s->c->too_big) break;
    if (outermost && s->c->nops - ops0 > TC_MAX_UNROLLED_OPS) {
      dg_error(s->c, n->init->loc, "unrolling this static_range creates more than %d operations, which would take "
                                   "too long to compile; use range for a run-time loop",
               TC_MAX_UNROLLED_OPS);
      break;
    }
  }
  s->unroll_depth--;
}

static void for_stmt(S *s, Node *n, St *st) {
  SVal r = sm_eval(s, n->init);
  if (r.k == V_ERR) return;
  if (r.k != V_RANGE) {
    dg_error(s->c, n->init->loc, "'for' loops over range(...) or static_range(...), not %s", sv_desc(s, r));
    return;
  }
  if (r.is_static) {
    static_for(s, n, r, st);
    return;
  }
  /* bounds: a common integer type */
  SVal lo = r.items[0], hi = r.items[1], step = r.items[2];
  if (step.k == V_INT && step.i <= 0) {
    dg_error(s->c, n->init->loc, "range step must be positive (got %lld)", (long long)step.i);
    return;
  }
  Elem ie = {DT_I32, 0};
  for (int i = 0; i < 3; i++) {
    SVal v = r.items[i];
    if (v.k == V_RT) {
      if (v.v->type->kind != TY_SCALAR || !ty_is_int((DType)v.v->type->elem.dt)) {
        dg_error(s->c, n->init->loc, "range bounds must be scalar integers, not %s", ty_str(s->c, v.v->type));
        return;
      }
      if (ty_dtype_bits((DType)v.v->type->elem.dt) > 32) ie = (Elem){DT_I64, 0};
    } else if (v.k == V_INT) {
      if (!sm_int_fits(v.i, DT_I32)) ie = (Elem){DT_I64, 0};
    } else {
      dg_error(s->c, n->init->loc, "range bounds must be integers, not %s", sv_desc(s, v));
      return;
    }
  }
  TValue *lb = sm_rt_as(s, lo, ie, n->init->loc), *ub = sm_rt_as(s, hi, ie, n->init->loc),
         *st_ = sm_rt_as(s, step, ie, n->init->loc);
  if (!lb || !ub || !st_) return;
  Carry cr = {0};
  cr.ncv = carried_vars(s, n->body, NULL, &cr.cv);
  if (!carry_begin(s, &cr, n->loc)) return;
  int nl = cr.na;
  TValue **inits = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(nl + 4));
  Type **types = ar_alloc(&s->c->arena, sizeof(Type *) * (size_t)(nl + 2));
  inits[0] = lb;
  inits[1] = ub;
  inits[2] = st_;
  types[0] = ty_scalar(s->c, ie);
  for (int j = 0; j < nl; j++) inits[3 + j] = cr.init[j], types[1 + j] = cr.type[j];
  TBlock *body = ir_block(s->c, nl + 1, types);
  TBlock *outer = s->blk;
  s->blk = body;
  Sym *saved = s->scope;
  carry_bind(s, &cr, body->args + 1, true);
  sm_bind(s, n->name, sv_rt(body->args[0]));
  body->args[0]->name = n->name;
  sm_block_stmts(s, n->body, st, false);
  sm_scope_restore(s, saved);
  TValue **ys = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(nl + 1));
  bool ok = carry_end(s, &cr, ys, n->loc, "the loop body");
  sm_emit1(s, OP_YIELD, n->loc, ok ? nl : 0, ys, NULL);
  s->blk = outer;
  TOp *op = sm_emit_op(s, OP_FOR, n->loc, 3 + nl, inits, nl, types + 1);
  ir_add_region(s->c, op, body);
  carry_results(s, &cr, op->res, ok);
}

static void while_stmt(S *s, Node *n, St *st) {
  Carry cr = {0};
  cr.ncv = carried_vars(s, n->body, n->cond, &cr.cv);
  if (!carry_begin(s, &cr, n->loc)) return;
  int nl = cr.na;
  TBlock *outer = s->blk;
  Snap sn = snapshot(s);
  TBlock *before = ir_block(s->c, nl, cr.type);
  s->blk = before;
  carry_bind(s, &cr, before->args, false);
  SVal cond = sm_eval(s, n->cond);
  if (cond.k == V_ERR) {
    restore(&sn);
    s->blk = outer;
    return;
  }
  if (cond.k == V_BOOL) {
    restore(&sn);
    s->blk = outer;
    if (cond.i) dg_error(s->c, n->cond->loc, "the loop condition is always true: the loop would never end");
    return; /* always false: the loop vanishes */
  }
  if (cond.k != V_RT || cond.v->type->kind != TY_SCALAR || cond.v->type->elem.dt != DT_BOOL) {
    dg_error(s->c, n->cond->loc, "the condition of 'while' must be a scalar bool, not %s", sv_desc(s, cond));
    restore(&sn);
    s->blk = outer;
    return;
  }
  TValue **cargs = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(nl + 2));
  cargs[0] = cond.v;
  for (int j = 0; j < nl; j++) cargs[1 + j] = before->args[j];
  sm_emit1(s, OP_CONDITION, n->cond->loc, nl + 1, cargs, NULL);
  TBlock *after = ir_block(s->c, nl, cr.type);
  s->blk = after;
  carry_bind(s, &cr, after->args, false);
  sm_block_stmts(s, n->body, st, false);
  TValue **ys = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(nl + 1));
  bool ok = carry_end(s, &cr, ys, n->loc, "the loop body");
  sm_emit1(s, OP_YIELD, n->loc, ok ? nl : 0, ys, NULL);
  s->blk = outer;
  TOp *op = sm_emit_op(s, OP_WHILE, n->loc, nl, cr.init, nl, cr.type);
  ir_add_region(s->c, op, before);
  ir_add_region(s->c, op, after);
  carry_results(s, &cr, op->res, ok);
}

/* tasks { task name(warps = W, regs = R, replicas = N) { ... } ... }
 * Each task is a region run by its own warps (whole warpgroups), all at
 * once; register tiles inside are spread over the task's warps. */
static void tasks_stmt(S *s, Node *n, St *st) {
  Ctx *c = s->c;
  if (s->blk != s->kf->body || s->in_task) {
    dg_error(c, n->loc, "'tasks' must be at the top level of the kernel");
    return;
  }
  if (s->kf->has_tasks) {
    dg_error(c, n->loc, "a kernel has one 'tasks' block");
    return;
  }
  if (n->nlist == 0) {
    dg_error(c, n->loc, "'tasks' needs at least one task");
    return;
  }
  s->kf->has_tasks = true;
  TOp *op = ir_op(c, OP_TASKS, n->loc, 0, NULL, 0, NULL);
  int warp0 = 0;
  int64_t regs_total = 0;
  /* Tasks of 1 or 2 warps, one replica each, with the same register budget
   * (given: tasks without budgets keep a warpgroup each, as they always
   * have) share a warpgroup when they follow one another and fit in its 4 warps
   * (a TMA producer warp and a reduction warp): one setmaxnreg for the
   * warpgroup, whose warps all execute it. pack_wg is the first warp of the
   * warpgroup being filled (-1: none), pack_used its warps taken. */
  int pack_wg = -1, pack_used = 0;
  int64_t pack_regs = 0;
  bool any_regs = false, all_regs = true;
  Snap sn = snapshot(s);
  TBlock *outer = s->blk;
  for (int i = 0; i < n->nlist; i++) {
    Node *t = n->list[i];
    int64_t w = 0, r = 0, rep = 1;
    bool has_w = false, has_r = false;
    for (int j = 0; j < t->nlist; j++) {
      Node *arg = t->list[j];
      const char *k = arg->argname ? arg->argname : "";
      int64_t v;
      if (strcmp(k, "warps") && strcmp(k, "regs") && strcmp(k, "replicas")) {
        dg_error(c, arg->loc, "task arguments are warps = N, regs = R and replicas = K (by name)");
        return;
      }
      if (!sm_const_int(s, sm_eval(s, arg), arg->loc, k, &v)) return;
      if (!strcmp(k, "warps")) w = v, has_w = true;
      else if (!strcmp(k, "regs")) r = v, has_r = true;
      else rep = v;
    }
    if (!has_w && !strcmp(t->name, "default")) {
      /* the default task takes the warps the others leave */
      int others = 0, pw = -1, pused = 0;
      int64_t pregs = 0;
      for (int j = 0; j < n->nlist; j++) {
        Node *u = n->list[j];
        if (j == i) {
          pw = -1; /* the default task breaks a run of small tasks */
          continue;
        }
        int64_t uw = 0, ur = 1, ug = 0;
        for (int q = 0; q < u->nlist; q++) {
          Node *arg = u->list[q];
          int64_t v;
          if (!arg->argname || arg->kind != ND_INT) continue; /* checked when that task is built */
          v = (int64_t)arg->ival;
          if (!strcmp(arg->argname, "warps")) uw = v;
          else if (!strcmp(arg->argname, "replicas")) ur = v;
          else if (!strcmp(arg->argname, "regs")) ug = v;
        }
        bool small = uw < 4 && ur == 1;
        if (small && pw >= 0 && pused + uw <= 4 && ug && pregs == ug) { /* packed, as below */
          pused += (int)uw;
          continue;
        }
        others += (int)((uw < 4 ? 4 : uw) * ur);
        pw = small ? 0 : -1, pused = (int)uw, pregs = ug;
      }
      w = rep > 0 ? (s->kf->warps - others) / rep : 0;
      has_w = w > 0;
    }
    if (!has_w) {
      dg_error(c, t->loc, "task '%s' needs warps = N (only a task named 'default' takes the warps left over)", t->name);
      return;
    }
    if (!(w == 1 || w == 2 || (w % 4 == 0 && w >= 4 && w <= 32))) {
      dg_error(c, t->loc, "task '%s' has warps = %lld; a task has 1, 2 or a multiple of 4 warps (it occupies whole "
                          "warpgroups: a 1- or 2-warp task leaves the rest of its warpgroup idle)",
               t->name, (long long)w);
      return;
    }
    if (rep < 1 || rep > 8) {
      dg_error(c, t->loc, "task '%s' has replicas = %lld (1 to 8)", t->name, (long long)rep);
      return;
    }
    if (has_r && (r < 24 || r > 256 || r % 8)) {
      dg_error(c, t->loc, "task '%s' has regs = %lld; setmaxnreg takes a multiple of 8 from 24 to 256", t->name,
               (long long)r);
      return;
    }
    any_regs |= has_r;
    all_regs &= has_r;
    int64_t slots = (w < 4 ? 4 : w) * rep; /* whole warpgroups */
    int first = warp0;
    bool small = w < 4 && rep == 1;
    if (small && has_r && pack_wg >= 0 && pack_used + w <= 4 && pack_regs == r) {
      first = pack_wg + pack_used; /* beside the previous small task, in its warpgroup */
      pack_used += (int)w;
    } else {
      regs_total += has_r ? slots * 32 * r : 0;
      warp0 += (int)slots;
      pack_wg = small ? first : -1;
      pack_used = small ? (int)w : 0;
      pack_regs = r;
    }
    TBlock *b = ir_block(c, 0, NULL);
    b->warps = (int)w;
    b->replicas = (int)rep;
    b->regs = (int)r;
    b->warp0 = first;
    b->task_name = t->name;
    ir_add_region(c, op, b);
    s->blk = b;
    int saved_warps = s->warps;
    s->warps = (int)w;
    s->in_task = true;
    s->task_warp0 = first;
    s->task_scope = s->scope;
    sm_block_stmts(s, t->body, st, false);
    s->in_task = false;
    s->warps = saved_warps;
    ir_append(b, ir_op(c, OP_YIELD, t->loc, 0, NULL, 0, NULL));
    for (int k = 0; k < sn.n; k++)
      if (!sval_same(sn.syms[k]->val, sn.vals[k])) {
        dg_error(c, t->loc, "task '%s' assigns '%s', which is declared outside it; tasks run at the same time and "
                            "share no variables (use shared memory and barriers)",
                 t->name, sn.syms[k]->name);
        sn.syms[k]->val = sn.vals[k];
      }
  }
  s->blk = outer;
  if (warp0 != s->kf->warps) {
    dg_error(c, n->loc, "the tasks use %d warps but the kernel has warps(%d)", warp0, s->kf->warps);
    return;
  }
  if (any_regs && !all_regs) {
    dg_error(c, n->loc, "give every task a register budget (regs = R) or none");
    return;
  }
  if (regs_total > 65536) {
    dg_error(c, n->loc, "the tasks' register budgets add up to %lld registers; an SM has 65536", (long long)regs_total);
    return;
  }
  /* setmaxnreg moves registers between the CTA's warpgroups: what one
   * raises, another must have given back. The CTA starts with its warps x
   * the entry cap (maxnreg, else the even share of 65536 that lower.c
   * sets); asking for more makes a setmaxnreg.inc wait forever. */
  if (any_regs && all_regs) {
    int threads = s->kf->warps * 32;
    int64_t cap = s->kf->maxnreg ? s->kf->maxnreg : 65536 / threads;
    if (!s->kf->maxnreg) {
      cap -= cap % 8;
      if (cap > 255) cap = 255;
    }
    cap = (cap + 7) / 8 * 8; /* registers are allocated 8 a thread at a time (255 -> 256) */
    if (regs_total > cap * threads) {
      dg_error(c, n->loc, "the tasks' register budgets add up to %lld registers, more than the %lld the CTA starts "
                          "with (%d threads x %lld each): the warpgroups that ask for more would wait forever for "
                          "registers no other warpgroup gives back; lower a budget by %lld registers a thread in "
                          "some warpgroup",
               (long long)regs_total, (long long)(cap * threads), threads, (long long)cap,
               (long long)((regs_total - cap * threads + 127) / 128));
      return;
    }
  }
  ir_append(s->blk, op);
}

static void assign_one(S *s, Node *target, SVal v, Loc loc) {
  Sym *y = sm_local_find(s, target->name);
  if (!y) {
    Sym *g = sm_lookup(s, target->name);
    if (g) dg_error(s->c, target->loc, "cannot assign to '%s': it is a %s, not a variable", target->name,
                    g->kind == SYM_FUNC ? "function" : "constant");
    else dg_error(s->c, target->loc, "cannot assign to '%s': no such variable (declare it with 'let %s = ...')",
                  target->name, target->name);
    return;
  }
  if (v.k == V_ERR) {
    y->val = v;
    return;
  }
  /* A variable keeps its type once it is a run-time value. */
  if (y->val.k == V_RT) {
    TValue *nv = coerce_to(s, v, y->val.v->type, var_noun(s, y->name), loc, "the assignment");
    if (nv) {
      nv->name = nv->name ? nv->name : y->name;
      y->val = sv_rt(nv);
    }
    return;
  }
  if (v.k == V_RT && !v.v->name) v.v->name = y->name;
  y->val = v;
}

static void stmt_inner(S *s, Node *n, St *st, bool last);

static void stmt(S *s, Node *n, St *st, bool last) {
  if (!sm_budget(s, n->loc)) return;
  s->depth++;
  stmt_inner(s, n, st, last);
  s->depth--;
}

static void stmt_inner(S *s, Node *n, St *st, bool last) {
  s->loc = n->loc;
  switch (n->kind) {
  case ND_LET: {
    SVal v = sm_eval(s, n->init);
    if (v.k == V_VOID) {
      dg_error(s->c, n->init->loc, "this call returns no value");
      v = sv_err();
    }
    if (n->nnames) {
      if (v.k == V_ERR) {
        for (int i = 0; i < n->nnames; i++) sm_bind(s, n->names[i], sv_err());
        return;
      }
      if (v.k != V_TUPLE || v.n != n->nnames) {
        dg_error(s->c, n->loc, "'let' binds %d names but the value is %s%s", n->nnames, sv_desc(s, v),
                 v.k == V_TUPLE ? ar_printf(&s->c->arena, " of %d items", v.n) : "");
        for (int i = 0; i < n->nnames; i++) sm_bind(s, n->names[i], sv_err());
        return;
      }
      for (int i = 0; i < n->nnames; i++)
        for (int j = 0; j < i; j++)
          if (!strcmp(n->names[i], n->names[j])) {
            dg_error(s->c, n->loc, "'%s' is bound twice in this 'let'", n->names[i]);
            return;
          }
      for (int i = 0; i < n->nnames; i++) let_shadows(s, n->names[i], n->loc);
      for (int i = 0; i < n->nnames; i++) sm_bind(s, n->names[i], v.items[i]);
      return;
    }
    if (n->type) v = sm_check_type(s, v, n->type, n->init->loc, ar_printf(&s->c->arena, "'%s'", n->name));
    if (v.k == V_RANGE) {
      dg_error(s->c, n->init->loc, "a range can only be used directly in a 'for' loop");
      v = sv_err();
    }
    let_shadows(s, n->name, n->loc);
    sm_bind(s, n->name, v);
    return;
  }
  case ND_ASSIGN: {
    SVal v = sm_eval(s, n->rhs);
    if (n->op != TK_ASSIGN) {
      static const int base[][2] = {{TK_PLUSEQ, TK_PLUS},     {TK_MINUSEQ, TK_MINUS}, {TK_STAREQ, TK_STAR},
                                    {TK_SLASHEQ, TK_SLASH},   {TK_PERCENTEQ, TK_PERCENT}, {TK_AMPEQ, TK_AMP},
                                    {TK_PIPEEQ, TK_PIPE},     {TK_CARETEQ, TK_CARET}, {TK_SHLEQ, TK_SHL},
                                    {TK_SHREQ, TK_SHR}};
      int op = 0;
      for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        if (base[i][0] == n->op) op = base[i][1];
      if (n->lhs->kind != ND_IDENT) {
        dg_error(s->c, n->loc, "compound assignment needs a single variable");
        return;
      }
      SVal cur = sm_eval(s, n->lhs);
      v = sm_binary(s, op, cur, v, n->loc);
    }
    if (n->lhs->kind == ND_TUPLE) {
      if (v.k == V_ERR) return;
      if (v.k != V_TUPLE || v.n != n->lhs->nlist) {
        dg_error(s->c, n->loc, "assignment to %d variables needs a tuple of %d values, not %s", n->lhs->nlist,
                 n->lhs->nlist, sv_desc(s, v));
        return;
      }
      for (int i = 0; i < v.n; i++) {
        if (n->lhs->list[i]->kind != ND_IDENT) {
          dg_error(s->c, n->lhs->list[i]->loc, "only variables can be assigned");
          continue;
        }
        assign_one(s, n->lhs->list[i], v.items[i], n->loc);
      }
      return;
    }
    assign_one(s, n->lhs, v, n->loc);
    return;
  }
  case ND_EXPR: {
    SVal v = sm_eval(s, n->lhs);
    (void)v;
    return;
  }
  case ND_IF: if_stmt(s, n, st); return;
  case ND_FOR: for_stmt(s, n, st); return;
  case ND_WHILE: while_stmt(s, n, st); return;
  case ND_BLOCK: sm_block_stmts(s, n, st, false); return;
  case ND_RETURN:
    if (!st->in_fn) {
      if (n->lhs) dg_error(s->c, n->loc, "a kernel returns nothing; write results with store()");
      else if (!last) dg_error(s->c, n->loc, "'return' is only allowed at the end of a kernel");
      return;
    }
    if (!last) {
      dg_error(s->c, n->loc,
               "'return' is only allowed as the last statement of a function; assign the result to a variable "
               "and return it at the end");
      return;
    }
    *st->ret = n->lhs ? sm_eval(s, n->lhs) : (SVal){.k = V_VOID};
    *st->returned = true;
    return;
  case ND_TASKS: tasks_stmt(s, n, st); return;
  default: dg_ice(s->c, n->loc, "unexpected statement kind %d", n->kind); return;
  }
}


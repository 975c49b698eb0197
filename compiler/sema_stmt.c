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
  for (int i = 0; i < b->nlist && !dg_too_many(s->c) && !s->c->too_big; i++)
    stmt(s, b->list[i], st, last_is_tail && i == b->nlist - 1);
  /* pop lets of this block, but keep in-place updates of outer variables */
  sm_scope_restore(s, saved);
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

static bool can_carry(S *s, SVal v, const char *name, Loc loc, const char *what) {
  if (v.k == V_RT && (v.v->type->kind == TY_SMEM || v.v->type->kind == TY_BAR || v.v->type->kind == TY_TMA ||
                      v.v->type->kind == TY_TMEM)) {
    dg_error(s->c, loc, "variable '%s' holds %s and cannot change inside %s (index the ring with a variable slot "
                        "instead: buf[slot])",
             name, ty_str(s->c, v.v->type), what);
    return false;
  }
  if (v.k == V_RT || sv_is_const(v) || v.k == V_ERR) return true;
  dg_error(s->c, loc, "variable '%s' holds %s and cannot change inside %s", name, sv_desc(s, v), what);
  return false;
}

/* Make `v` a run-time value of type `t` (a constant is converted; anything
 * else must match exactly). */
static TValue *coerce_to(S *s, SVal v, Type *t, const char *name, Loc loc, const char *where) {
  if (v.k == V_ERR) return NULL;
  if (sv_is_const(v) && t->kind == TY_SCALAR) return sm_rt_as(s, v, t->elem, loc);
  if (sv_is_const(v) && t->kind == TY_TILE) {
    TValue *x = sm_rt_as(s, v, t->elem, loc);
    return x ? sm_splat(s, x, t->rank, t->shape, loc) : NULL;
  }
  if (v.k != V_RT) {
    dg_error(s->c, loc, "variable '%s' holds %s %s", name, sv_desc(s, v), where);
    return NULL;
  }
  if (!ty_eq(v.v->type, t)) {
    dg_error(s->c, loc, "variable '%s' is %s before %s but %s after it; a variable keeps its type and shape", name,
             ty_str(s->c, t), where, ty_str(s->c, v.v->type));
    return NULL;
  }
  return v.v;
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
  /* Which variables changed, and their merged type. */
  Vec idx = {0};
  Vec types = {0};
  for (int i = 0; i < sn.n; i++) {
    if (sval_same(tv[i], sn.vals[i]) && sval_same(ev[i], sn.vals[i])) continue;
    const char *name = sn.syms[i]->name;
    if (tv[i].k == V_ERR || ev[i].k == V_ERR) {
      sn.syms[i]->val = sv_err();
      continue;
    }
    if (sv_is_const(tv[i]) && sv_is_const(ev[i]) && sval_same(tv[i], ev[i])) continue;
    if (!can_carry(s, tv[i], name, n->loc, "an 'if'") || !can_carry(s, ev[i], name, n->loc, "an 'if'")) {
      sn.syms[i]->val = sv_err();
      continue;
    }
    Type *t = tv[i].k == V_RT ? tv[i].v->type : ev[i].k == V_RT ? ev[i].v->type : sv_type(s, tv[i]);
    if (tv[i].k != V_RT && ev[i].k != V_RT && tv[i].k == V_FLOAT) t = sv_type(s, tv[i]);
    if (tv[i].k != V_RT && ev[i].k != V_RT && ev[i].k == V_FLOAT) t = sv_type(s, ev[i]);
    vec_push(&s->c->arena, &idx, (void *)(intptr_t)i);
    vec_push(&s->c->arena, &types, t);
  }
  TValue **ty = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(idx.len + 1));
  TValue **ey = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(idx.len + 1));
  bool ok = true;
  for (int j = 0; j < idx.len; j++) {
    int i = (int)(intptr_t)idx.data[j];
    const char *name = sn.syms[i]->name;
    s->blk = tb;
    ty[j] = coerce_to(s, tv[i], types.data[j], name, n->loc, "the 'if' (then branch)");
    s->blk = eb;
    ey[j] = coerce_to(s, ev[i], types.data[j], name, n->loc, "the 'if' (else branch)");
    if (!ty[j] || !ey[j]) ok = false;
  }
  s->blk = tb;
  sm_emit1(s, OP_YIELD, n->loc, ok ? idx.len : 0, ty, NULL);
  s->blk = eb;
  sm_emit1(s, OP_YIELD, n->loc, ok ? idx.len : 0, ey, NULL);
  s->blk = outer;
  TOp *op = sm_emit_op(s, OP_IF, n->loc, 1, &c, ok ? idx.len : 0, (Type **)types.data);
  ir_add_region(s->c, op, tb);
  ir_add_region(s->c, op, eb);
  for (int j = 0; j < idx.len; j++) {
    int i = (int)(intptr_t)idx.data[j];
    sn.syms[i]->val = ok ? sv_rt(op->res[j]) : sv_err();
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
  Sym **cv;
  int ncv = carried_vars(s, n->body, NULL, &cv);
  TValue **inits = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(ncv + 4));
  Type **types = ar_alloc(&s->c->arena, sizeof(Type *) * (size_t)(ncv + 2));
  inits[0] = lb;
  inits[1] = ub;
  inits[2] = st_;
  types[0] = ty_scalar(s->c, ie);
  for (int i = 0; i < ncv; i++) {
    if (!can_carry(s, cv[i]->val, cv[i]->name, n->loc, "a loop")) return;
    TValue *v = sm_rt(s, cv[i]->val, n->loc);
    if (!v) return;
    inits[3 + i] = v;
    types[1 + i] = v->type;
  }
  TBlock *body = ir_block(s->c, ncv + 1, types);
  TBlock *outer = s->blk;
  s->blk = body;
  Sym *saved = s->scope;
  for (int i = 0; i < ncv; i++) cv[i]->val = sv_rt(body->args[1 + i]);
  sm_bind(s, n->name, sv_rt(body->args[0]));
  body->args[0]->name = n->name;
  for (int i = 0; i < ncv; i++) body->args[1 + i]->name = cv[i]->name;
  sm_block_stmts(s, n->body, st, false);
  sm_scope_restore(s, saved);
  TValue **ys = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(ncv + 1));
  bool ok = true;
  for (int i = 0; i < ncv; i++) {
    ys[i] = coerce_to(s, cv[i]->val, types[1 + i], cv[i]->name, n->loc, "the loop body");
    if (!ys[i]) ok = false;
  }
  sm_emit1(s, OP_YIELD, n->loc, ok ? ncv : 0, ys, NULL);
  s->blk = outer;
  TOp *op = sm_emit_op(s, OP_FOR, n->loc, 3 + ncv, inits, ncv, types + 1);
  ir_add_region(s->c, op, body);
  for (int i = 0; i < ncv; i++) cv[i]->val = ok ? sv_rt(op->res[i]) : sv_err();
}

static void while_stmt(S *s, Node *n, St *st) {
  Sym **cv;
  int ncv = carried_vars(s, n->body, n->cond, &cv);
  TValue **inits = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(ncv + 1));
  Type **types = ar_alloc(&s->c->arena, sizeof(Type *) * (size_t)(ncv + 1));
  for (int i = 0; i < ncv; i++) {
    if (!can_carry(s, cv[i]->val, cv[i]->name, n->loc, "a loop")) return;
    TValue *v = sm_rt(s, cv[i]->val, n->loc);
    if (!v) return;
    inits[i] = v;
    types[i] = v->type;
  }
  TBlock *outer = s->blk;
  Snap sn = snapshot(s);
  TBlock *before = ir_block(s->c, ncv, types);
  s->blk = before;
  for (int i = 0; i < ncv; i++) cv[i]->val = sv_rt(before->args[i]);
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
  TValue **cargs = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(ncv + 2));
  cargs[0] = cond.v;
  for (int i = 0; i < ncv; i++) cargs[1 + i] = before->args[i];
  sm_emit1(s, OP_CONDITION, n->cond->loc, ncv + 1, cargs, NULL);
  TBlock *after = ir_block(s->c, ncv, types);
  s->blk = after;
  for (int i = 0; i < ncv; i++) cv[i]->val = sv_rt(after->args[i]);
  sm_block_stmts(s, n->body, st, false);
  TValue **ys = ar_alloc(&s->c->arena, sizeof(TValue *) * (size_t)(ncv + 1));
  bool ok = true;
  for (int i = 0; i < ncv; i++) {
    ys[i] = coerce_to(s, cv[i]->val, types[i], cv[i]->name, n->loc, "the loop body");
    if (!ys[i]) ok = false;
  }
  sm_emit1(s, OP_YIELD, n->loc, ok ? ncv : 0, ys, NULL);
  s->blk = outer;
  TOp *op = sm_emit_op(s, OP_WHILE, n->loc, ncv, inits, ncv, types);
  ir_add_region(s->c, op, before);
  ir_add_region(s->c, op, after);
  for (int i = 0; i < ncv; i++) cv[i]->val = ok ? sv_rt(op->res[i]) : sv_err();
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
    TValue *nv = coerce_to(s, v, y->val.v->type, y->name, loc, "the assignment");
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
      for (int i = 0; i < n->nnames; i++) sm_bind(s, n->names[i], v.items[i]);
      return;
    }
    if (n->type) v = sm_check_type(s, v, n->type, n->init->loc, ar_printf(&s->c->arena, "'%s'", n->name));
    if (v.k == V_RANGE) {
      dg_error(s->c, n->init->loc, "a range can only be used directly in a 'for' loop");
      v = sv_err();
    }
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


/* pipeline.c - software pipelining of `dot` in a loop over K (sm_90a).
 *
 * The Triton-style matmul loads its operand tiles with plain loads and
 * multiplies them with dot; left alone, every iteration waits for its
 * loads and then for the tensor cores. This pass rewrites such a loop
 * into what the explicit GEMM does by hand:
 *
 *   a ring of S slots of swizzled shared memory for each operand;
 *   before the loop, cp.async copies of iterations 0 .. D-1 (D = S - 2);
 *   in iteration i:
 *     cp.async.wait_group D-1        (this thread's copies of i landed)
 *     fence.proxy.async + bar.sync   (everyone's, visible to wgmma; and
 *                                      every warpgroup is past the wgmma
 *                                      of i - 2, so its slot is free)
 *     copies of iteration i + D into slot (i + D) % S, commit
 *     acc = wgmma(slot i % S, acc), commit, wait until 1 is in flight
 *   after the loop, wait for the last wgmma and for the copies.
 *
 * The copies are the loads' own address and mask computations, cloned
 * with the induction variable moved D iterations ahead (or set to an
 * iteration of the prologue); a copy of an iteration past the end copies
 * nothing. Each thread copies 16-byte chunks, so the pass needs to know
 * (axisinfo.c) that the addresses run contiguously in 16-byte aligned
 * chunks, and that within a chunk the mask keeps a prefix of the elements
 * (a mask constant over the chunk, `offs < n`, or an `&` of such): the
 * copy then reads as many bytes as the mask keeps and zero-fills the rest.
 *
 * When both tiles are boxes of 2-D tensors the host can describe (the
 * TMA section below), the copies are TMA instead: one thread issues each
 * tile's copy into slot (i + D) % S after the barrier, with the bytes
 * expected on the slot's mbarrier, and everyone waits on that mbarrier
 * (phase (i / S) % 2) instead of cp.async.wait_group and the proxy fence;
 * nothing is issued past the end. The descriptors are derived kernel
 * parameters the runtime builds at launch.
 *
 * A loop with two to four dots (attention forward and backward) is
 * pipeline_multi.c's: cp.async rings for the tiles it loads, the tiles
 * from before the loop stored once, P as wgmma's A from registers, each
 * dot waited for at once. It builds on the helpers pipeline.h exports.
 *
 * Anything else keeps the plain lowering (dot on mma.sync), and
 * f->notes says why: --emit=tir prints the notes at the top of the kernel.
 */
#include "tilec_int.h"
#include "pipeline.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void pl_note(Pl *p, Loc loc, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  vec_push(&p->c->arena, &p->f->notes, ar_printf(&p->c->arena, "pipeline: dot at %d:%d %s", loc.line, loc.col, buf));
}

/* ---- use counts (fresh: sema leaves them unset) ---- */
static void zero_uses(TOp *op, void *ud) {
  (void)ud;
  for (int i = 0; i < op->nres; i++) op->res[i]->uses = 0;
  for (int r = 0; r < op->nregions; r++)
    for (int i = 0; i < op->regions[r]->nargs; i++) op->regions[r]->args[i]->uses = 0;
}
static void count_uses(TOp *op, void *ud) {
  (void)ud;
  for (int i = 0; i < op->nopnds; i++) op->opnds[i]->uses++;
}
void pl_count_uses(TFunc *f) {
  ir_walk(f->body, zero_uses, NULL);
  ir_walk(f->body, count_uses, NULL);
}

/* ---- building ops ---- */
TOp *pl_mk(Pl *p, TOp *before, Opcode opc, Loc loc, int n, TValue **opnds, Type *rt) {
  TOp *op = ir_op(p->c, opc, loc, n, opnds, rt ? 1 : 0, rt ? (Type *[]){rt} : NULL);
  ir_insert_before(before, op);
  return op;
}
TValue *pl_mk1(Pl *p, TOp *before, Opcode opc, Loc loc, int n, TValue **opnds, Type *rt) {
  return pl_mk(p, before, opc, loc, n, opnds, rt)->res[0];
}
TValue *pl_iconst(Pl *p, TOp *before, Type *t, int64_t v, Loc loc) {
  TOp *op = pl_mk(p, before, OP_CONST, loc, 0, NULL, t);
  op->ival = v;
  return op->res[0];
}
TValue *pl_bin(Pl *p, TOp *before, Opcode opc, TValue *a, TValue *b, Loc loc) {
  return pl_mk1(p, before, opc, loc, 2, (TValue *[]){a, b}, a->type);
}
TValue *pl_cmp_lt(Pl *p, TOp *before, TValue *a, TValue *b, Loc loc) {
  TOp *op = pl_mk(p, before, OP_CMP, loc, 2, (TValue *[]){a, b}, ty_dt(p->c, DT_BOOL));
  op->pred = CMP_LT;
  return op->res[0];
}

/* Iteration j of fop's loop: lo + j * step (lo for j = 0). */
TValue *pl_iter(Pl *p, TOp *before, TOp *fop, int j, Loc loc) {
  TValue *lo = fop->opnds[0], *step = fop->opnds[2];
  Type *ti = ty_dt(p->c, DT_I32);
  return j ? pl_bin(p, before, OP_ADD, lo, pl_bin(p, before, OP_MUL, pl_iconst(p, before, ti, j, loc), step, loc), loc)
           : lo;
}

/* In fop's body: this iteration's number it = (iv - lo) / step, its slot cur = it % S and the slot D
 * iterations ahead, nxt = (it + D) % S. */
void pl_ring_index(Pl *p, TOp *before, TOp *fop, int S, int D, Loc loc, TValue **it, TValue **cur, TValue **nxt) {
  TValue *iv = fop->regions[0]->args[0], *lo = fop->opnds[0], *step = fop->opnds[2];
  Type *ti = ty_dt(p->c, DT_I32);
  *it = pl_bin(p, before, OP_DIV, pl_bin(p, before, OP_SUB, iv, lo, loc), step, loc);
  *cur = pl_bin(p, before, OP_REM, *it, pl_iconst(p, before, ti, S, loc), loc);
  *nxt = pl_bin(p, before, OP_REM, pl_bin(p, before, OP_ADD, *it, pl_iconst(p, before, ti, D, loc), loc),
                pl_iconst(p, before, ti, S, loc), loc);
}

/* ---- what the loads may be ---- */

/* A splat (or broadcast, or conversion) of the constant zero. */
bool pl_is_zero(const TValue *v) {
  const TOp *d = v->def;
  while (d && (d->opc == OP_SPLAT || d->opc == OP_BROADCAST || d->opc == OP_CONVERT || d->opc == OP_EXPAND_DIMS))
    d = d->opnds[0]->def;
  return d && d->opc == OP_CONST && d->ival == 0 && d->fval == 0.0;
}

/* Does mask m keep a prefix of each aligned run of `vec` elements along
 * dimension d (so that a chunk's copy reads its first n elements)? */
bool pl_prefix_mask(Ctx *c, TValue *m, int d, int vec, int depth) {
  if (depth > 16 || m->type->kind != TY_TILE) return false;
  if (m->type->shape[d] == 1 || ax_get(c, m)->constancy[d] % vec == 0) return true;
  TOp *op = m->def;
  if (!op) return false;
  switch (op->opc) {
  case OP_AND: return pl_prefix_mask(c, op->opnds[0], d, vec, depth + 1) && pl_prefix_mask(c, op->opnds[1], d, vec, depth + 1);
  case OP_BROADCAST:
  case OP_CONVERT: return pl_prefix_mask(c, op->opnds[0], d, vec, depth + 1);
  case OP_EXPAND_DIMS:
    if (op->axis == d) return true;
    return pl_prefix_mask(c, op->opnds[0], d > op->axis ? d - 1 : d, vec, depth + 1);
  case OP_CMP: {
    /* x < y or y > x: x steps by one along d, y constant along it */
    TValue *x = op->opnds[0], *y = op->opnds[1];
    if (op->pred == CMP_GT) x = op->opnds[1], y = op->opnds[0];
    else if (op->pred != CMP_LT) return false;
    const AxisInfo *ax = ax_get(c, x), *ay = ax_get(c, y);
    if (x->type->kind != TY_TILE || y->type->kind != TY_TILE || !ty_is_int((DType)x->type->elem.dt)) return false;
    return ax->contig[d] % vec == 0 && (ay->constancy[d] % vec == 0 || y->type->shape[d] == 1);
  }
  default: return false;
  }
}

/* ---- slices: the ops of the loop body a load's operands come from ---- */

static bool in_slice(const Slice *s, const TOp *op) {
  for (int i = 0; i < s->n; i++)
    if (s->ops[i] == op) return true;
  return false;
}

/* Is v the same in every iteration of the loop whose body is body? */
bool pl_invariant(TBlock *body, TValue *v, int depth) {
  if (depth > 32) return false;
  if (!v->def) return v->block != body;
  TOp *d = v->def;
  if (d->block != body) return true;
  if (d->nregions || !(ir_is_elementwise(d->opc) || d->opc == OP_CONST || d->opc == OP_SPLAT || d->opc == OP_ARANGE ||
                       d->opc == OP_EXPAND_DIMS || d->opc == OP_BROADCAST || d->opc == OP_CONVERT))
    return false;
  for (int i = 0; i < d->nopnds; i++)
    if (!pl_invariant(body, d->opnds[i], depth + 1)) return false;
  return true;
}

static bool collect(Pl *p, Slice *s, TBlock *body, TValue *v, int depth);
bool pl_collect(Pl *p, Slice *s, TBlock *body, TValue *v) { return collect(p, s, body, v, 0); }

/* v, carried by the loop: its yield must be v + step (step invariant). */
static bool carried(Pl *p, Slice *s, TBlock *body, TValue *v, int depth) {
  for (int i = 0; i < s->ncarried; i++)
    if (s->carried[i] == v) return true;
  TOp *y = body->last;
  TValue *nx = y && y->opc == OP_YIELD && v->index - 1 < y->nopnds ? y->opnds[v->index - 1] : NULL;
  TOp *d = nx ? nx->def : NULL;
  TValue *step = NULL;
  if (d && d->block == body && (d->opc == OP_PTR_ADD || d->opc == OP_ADD) && d->opnds[0] == v) step = d->opnds[1];
  else if (d && d->block == body && d->opc == OP_ADD && d->opnds[1] == v) step = d->opnds[0];
  if (!step || !pl_invariant(body, step, 0) || s->ncarried == PL_MAX_CARRIED || v->type->kind != step->type->kind)
    return s->why = "its addresses depend on a value the loop carries, other than one it advances by the same step "
                    "every iteration",
           false;
  if (!collect(p, s, body, step, depth + 1)) return false; /* the step's own ops, cloned before their users */
  s->carried[s->ncarried] = v;
  s->step[s->ncarried++] = step;
  return true;
}

static bool collect(Pl *p, Slice *s, TBlock *body, TValue *v, int depth) {
  if (depth > 64) return s->why = "its address computation is too deep to clone", false;
  if (!v->def) {
    if (v->block == body && v->index > 0) return carried(p, s, body, v, depth);
    return true; /* the induction variable, or from outside the loop */
  }
  TOp *d = v->def;
  if (d->block != body || in_slice(s, d)) return true;
  if (d->nregions || !(ir_is_elementwise(d->opc) || d->opc == OP_CONST || d->opc == OP_SPLAT || d->opc == OP_ARANGE ||
                       d->opc == OP_EXPAND_DIMS || d->opc == OP_BROADCAST || d->opc == OP_PROGRAM_ID ||
                       d->opc == OP_NUM_PROGRAMS || d->opc == OP_CONVERT))
    return s->why = "its addresses are computed by something other than arithmetic (a load, a loop)", false;
  for (int i = 0; i < d->nopnds; i++)
    if (!collect(p, s, body, d->opnds[i], depth + 1)) return false;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 16;
    TOp **ops = ar_alloc(&p->c->arena, sizeof(TOp *) * (size_t)cap);
    if (s->n) memcpy(ops, s->ops, sizeof(TOp *) * (size_t)s->n);
    s->ops = ops, s->cap = cap;
  }
  s->ops[s->n++] = d; /* post-order: operands first */
  return true;
}

/* Clone slice s before `before`, the induction variable iv replaced by k;
 * map[i] is what value v_i (the results of s->ops[i]) became. */
typedef struct Clone {
  const Slice *s;
  TValue *iv, *k;
  TValue **to; /* per slice op: its clone's result */
  /* the carried values: from `base` (the loop's value in this iteration,
   * or its initial value for the prologue) `steps` steps further */
  Pl *p;
  TOp *before;
  TOp *fop;
  bool prologue;
  int steps;
  TValue *adv[PL_MAX_CARRIED];
} Clone;


static TValue *mapped(Clone *cl, TValue *v);

/* v (carried, index i of the slice's carried values) `steps` iterations on. */
static TValue *advanced(Clone *cl, int i) {
  if (cl->adv[i]) return cl->adv[i];
  TValue *v = cl->s->carried[i], *step = mapped(cl, cl->s->step[i]);
  TValue *base = cl->prologue ? cl->fop->opnds[3 + v->index - 1] : v;
  Loc loc = cl->fop->loc;
  if (cl->steps == 0) return cl->adv[i] = base;
  TValue *k = pl_iconst(cl->p, cl->before, ty_scalar(cl->p->c, step->type->elem), cl->steps, loc);
  if (step->type->kind == TY_TILE) k = pl_mk1(cl->p, cl->before, OP_SPLAT, loc, 1, &k, step->type);
  TValue *by = pl_mk1(cl->p, cl->before, OP_MUL, loc, 2, (TValue *[]){step, k}, step->type);
  return cl->adv[i] = pl_mk1(cl->p, cl->before, base->type->elem.dt == DT_PTR ? OP_PTR_ADD : OP_ADD, loc, 2,
                          (TValue *[]){base, by}, base->type);
}

static TValue *mapped(Clone *cl, TValue *v) {
  if (v == cl->iv) return cl->k;
  if (v->def) {
    for (int i = 0; i < cl->s->n; i++)
      if (cl->s->ops[i] == v->def) return cl->to[i];
  } else {
    for (int i = 0; i < cl->s->ncarried; i++)
      if (cl->s->carried[i] == v) return advanced(cl, i);
  }
  return v;
}

static void clone_slice(Pl *p, Clone *cl, TOp *before) {
  const Slice *s = cl->s;
  cl->p = p, cl->before = before;
  cl->to = ar_alloc(&p->c->arena, sizeof(TValue *) * (size_t)(s->n + 1));
  for (int i = 0; i < s->n; i++) {
    TOp *o = s->ops[i];
    TValue **ops = ar_alloc(&p->c->arena, sizeof(TValue *) * (size_t)(o->nopnds + 1));
    for (int j = 0; j < o->nopnds; j++) ops[j] = mapped(cl, o->opnds[j]);
    TOp *n = ir_op(p->c, o->opc, o->loc, o->nopnds, ops, 1, (Type *[]){o->res[0]->type});
    n->ival = o->ival, n->ival2 = o->ival2, n->fval = o->fval, n->axis = o->axis, n->pred = o->pred;
    n->to = o->to, n->flags = o->flags, n->str = o->str;
    memcpy(n->shape, o->shape, sizeof n->shape);
    n->res[0]->name = o->res[0]->name;
    ir_insert_before(before, n);
    cl->to[i] = n->res[0];
  }
}


/* ---- TMA: a tile that is a box of a 2-D tensor ----
 *
 * A load of `base + rows[:, None] * stride + cols[None, :]` masked with
 * `(rows[:, None] < R) & (cols[None, :] < C)`, where base, stride, R and C
 * are kernel parameters (or constants) and rows and cols are runs
 * `x + arange(0, n)`, reads the box at (rows[0], cols[0]) of the R x C
 * tensor at base, and zero where the mask is false: what a TMA copy does
 * (out-of-bounds elements are zero-filled, none is read). The runtime
 * builds the descriptor at launch from the parameters (a derived kernel
 * parameter, docs/metadata.md), so the loop issues one copy a tile from
 * one thread instead of each thread computing addresses and masks. */
typedef struct Run {
  TValue *x; /* NULL: 0 */
  int64_t off;
  int n;
} Run;

static TValue *thru(TValue *v) {
  while (v->def && v->def->opc == OP_CONVERT) v = v->def->opnds[0];
  return v;
}

/* through layout conversions and the widening of i32 to i64 (an offset
 * computed in 32 bits and added to a 64-bit one: TMA's coordinates are
 * 32-bit, as the 32-bit values were) */
static TValue *thru_int(TValue *v) {
  for (;;) {
    v = thru(v);
    TOp *d = v->def;
    if (!d || d->opc != OP_CAST || d->res[0]->type->elem.dt != DT_I64 || d->opnds[0]->type->elem.dt != DT_I32)
      return v;
    v = d->opnds[0];
  }
}

/* The scalar a tile is a splat of (through broadcasts and expand_dims). */
static TValue *scalar_of(TValue *v) {
  if (v->type->kind == TY_SCALAR) return v;
  for (TOp *d = thru(v)->def; d; d = thru(d->opnds[0])->def) {
    if (d->opc == OP_SPLAT) return d->opnds[0]->type->kind == TY_SCALAR ? d->opnds[0] : NULL;
    if (d->opc != OP_BROADCAST && d->opc != OP_EXPAND_DIMS) return NULL;
  }
  return NULL;
}

/* A 1-D i32 run: arange(lo, hi), or splat(x) + one. */
static bool run_of(TValue *v, Run *r) {
  v = thru(v);
  TOp *d = v->def;
  if (!d || v->type->kind != TY_TILE || v->type->rank != 1 || v->type->elem.dt != DT_I32) return false;
  if (d->opc == OP_ARANGE) {
    *r = (Run){NULL, (int64_t)d->ival, v->type->shape[0]};
    return true;
  }
  if (d->opc != OP_ADD) return false;
  for (int i = 0; i < 2; i++) {
    TValue *x = scalar_of(d->opnds[i]);
    if (x && x->type->elem.dt == DT_I32 && run_of(d->opnds[1 - i], r) && !r->x) {
      r->x = x;
      return true;
    }
  }
  return false;
}

/* A 2-D tile that varies along dimension *d only: a run, or a run times a
 * scalar (*coef), expanded (and broadcast) along the other dimension. */
static bool term_of(TValue *v, int *d, Run *r, TValue **coef) {
  v = thru_int(v);
  TOp *op = v->def;
  *coef = NULL;
  if (!op || v->type->kind != TY_TILE) return false;
  if (op->opc == OP_BROADCAST) return term_of(op->opnds[0], d, r, coef);
  if (op->opc == OP_MUL)
    for (int i = 0; i < 2; i++) {
      TValue *s = scalar_of(op->opnds[i]);
      if (s && term_of(op->opnds[1 - i], d, r, coef) && !*coef) return *coef = s, true;
    }
  if (op->opc != OP_EXPAND_DIMS || v->type->rank != 2) return false;
  *d = 1 - op->axis;
  TValue *x = thru(op->opnds[0]);
  if (x->def && x->def->opc == OP_MUL)
    for (int i = 0; i < 2; i++) {
      TValue *s = scalar_of(x->def->opnds[i]);
      if (s && run_of(x->def->opnds[1 - i], r)) return *coef = s, true;
    }
  return run_of(x, r);
}

typedef struct Box {
  TValue *base, *plane; /* plane: a scalar offset (splat), if any */
  bool seen[2];
  Run run[2];
  TValue *coef[2], *bound[2];
} Box;

static bool off_terms(TValue *v, Box *b) {
  TValue *u = thru_int(v);
  TOp *op = u->def;
  if (op && op->opc == OP_BROADCAST) return off_terms(op->opnds[0], b);
  if (op && op->opc == OP_ADD && u->type->kind == TY_TILE && u->type->rank == 2)
    return off_terms(op->opnds[0], b) && off_terms(op->opnds[1], b);
  TValue *sc = u->type->kind == TY_TILE ? scalar_of(u) : NULL;
  if (sc) return !b->plane && (b->plane = sc, true);
  int d;
  Run r;
  TValue *coef;
  if (!term_of(u, &d, &r, &coef) || b->seen[d]) return false;
  b->seen[d] = true, b->run[d] = r, b->coef[d] = coef;
  return true;
}

static bool ptr_terms(TValue *v, Box *b) {
  v = thru(v);
  TOp *op = v->def;
  if (!op) return false;
  if (op->opc == OP_BROADCAST) return ptr_terms(op->opnds[0], b);
  if (op->opc == OP_SPLAT) return !b->base && (b->base = op->opnds[0], true);
  if (op->opc == OP_PTR_ADD) return ptr_terms(op->opnds[0], b) && off_terms(op->opnds[1], b);
  return false;
}

static bool same_run(const Run *a, const Run *b) { return a->x == b->x && a->off == b->off && a->n == b->n; }

static bool mask_terms(TValue *v, Box *b) {
  v = thru(v);
  TOp *op = v->def;
  if (!op) return false;
  if (op->opc == OP_BROADCAST) return mask_terms(op->opnds[0], b);
  if (op->opc == OP_AND) return mask_terms(op->opnds[0], b) && mask_terms(op->opnds[1], b);
  int d = -1; /* expand_dims of a 1-D comparison (`rows[:, None]`): along the other dimension */
  if (op->opc == OP_EXPAND_DIMS && v->type->rank == 2) {
    d = 1 - op->axis;
    v = thru(op->opnds[0]);
    if (!(op = v->def) || v->type->rank != 1) return false;
  }
  if (op->opc != OP_CMP || (op->pred != CMP_LT && op->pred != CMP_GT)) return false;
  TValue *x = op->opnds[0], *y = op->opnds[1];
  if (op->pred == CMP_GT) x = op->opnds[1], y = op->opnds[0];
  Run r;
  TValue *coef = NULL, *s = scalar_of(y);
  if (!s || (d < 0 ? !term_of(x, &d, &r, &coef) : !run_of(x, &r)) || coef || b->bound[d] || !b->seen[d] ||
      !same_run(&r, &b->run[d]))
    return false;
  b->bound[d] = s;
  return true;
}

/* A kernel parameter (not a descriptor) or a constant: what the runtime can read at launch. */
static bool host_known(Pl *p, TValue *v, bool ptr) {
  if (!v->def) return v->block == p->f->body && v->index < p->f->nparams && !p->f->params[v->index].tma &&
                      (p->f->params[v->index].elem.dt == DT_PTR) == ptr;
  return !ptr && v->def->opc == OP_CONST && ty_is_int((DType)v->type->elem.dt);
}

/* A scalar as pk times a product of leaves (through muls and widenings);
 * false past 4 leaves or on a leaf that is not a 32-bit integer. */
static bool factors(TValue *v, Operand *o) {
  v = thru_int(v);
  TOp *d = v->def;
  if (d && d->opc == OP_MUL) return factors(d->opnds[0], o) && factors(d->opnds[1], o);
  if (d && d->opc == OP_CONST && !d->nopnds && ty_is_int((DType)v->type->elem.dt)) return o->pk *= d->ival, true;
  if (v->type->kind != TY_SCALAR || v->type->elem.dt != DT_I32 || o->npleaf == 4) return false;
  o->pleaf[o->npleaf++] = v;
  return true;
}

/* Divide the plane's factors by f (a parameter leaf, or a constant). */
static bool divide(Operand *o, TValue *f) {
  f = thru_int(f);
  if (f->def && f->def->opc == OP_CONST) {
    int64_t k = f->def->ival;
    return k > 0 && o->pk % k == 0 && (o->pk /= k, true);
  }
  for (int i = 0; i < o->npleaf; i++)
    if (o->pleaf[i] == f) {
      o->pleaf[i] = o->pleaf[--o->npleaf];
      return true;
    }
  return false;
}

static bool tma_match(Pl *p, TOp *fop, TValue *v, Operand *o) {
  TOp *ld = o->load;
  for (TOp *up = fop->block->parent; up; up = up->block->parent)
    if (up->opc == OP_FOR || up->opc == OP_WHILE)
      return o->no_tma = "the loop is inside another loop", false;
  int rows = v->type->shape[1 - o->cd], rd = 1 - o->cd;
  if (rows > 256) return o->no_tma = "a TMA box is at most 256 rows", false;
  Box b = {0};
  if (!ptr_terms(ld->opnds[0], &b) || !b.seen[0] || !b.seen[1])
    return o->no_tma = "its addresses are not base + rows * stride + columns", false;
  if (!host_known(p, b.base, true)) return o->no_tma = "its base is not a pointer parameter", false;
  if (b.coef[o->cd] || !b.coef[rd] || !host_known(p, b.coef[rd], false))
    return o->no_tma = "its row stride is not a parameter or a constant", false;
  if ((ld->flags & OPF_MASK) && !mask_terms(ld->opnds[1], &b))
    return o->no_tma = "its mask is not (rows < R) & (columns < C)", false;
  for (int d = 0; d < 2; d++)
    if (b.bound[d] && !host_known(p, b.bound[d], false))
      return o->no_tma = "its mask's bounds are not parameters or constants", false;
  for (int d = 0; d < 2; d++) {
    if (b.run[d].n != v->type->shape[d]) return o->no_tma = "its runs do not span the tile", false;
    o->start[d] = b.run[d].x, o->off[d] = b.run[d].off;
  }
  /* no column mask: the columns the run reads, from 0 (a constant run) */
  if (!b.bound[o->cd] && (b.run[o->cd].x || b.run[o->cd].off < 0))
    return o->no_tma = "its columns are neither masked (columns < C) nor a constant run", false;
  o->cols = b.run[o->cd].off + b.run[o->cd].n;
  o->pk = 1, o->npleaf = 0, o->planes = false;
  /* base + X * stride (rows unbounded: row X + r) or base + X * R * stride (plane X of R rows). Row
   * X + r is a 32-bit TMA coordinate: past 2^31 rows the tensor would exceed any GPU's memory, since a
   * ring's rows are at least 128 bytes (the swizzle) */
  if (b.plane) {
    if (!factors(b.plane, o) || !divide(o, b.coef[rd]))
      return o->no_tma = "its scalar offset is not a product of 32-bit values and the row stride", false;
    if (b.bound[rd] && !divide(o, b.bound[rd]))
      return o->no_tma = "its scalar offset is not a multiple of its mask's rows times the row stride", false;
    o->planes = b.bound[rd] != NULL;
  } else o->pk = 0;
  o->src[0] = b.base, o->src[1] = b.bound[o->cd], o->src[2] = b.bound[rd], o->src[3] = b.coef[rd];
  return o->tma = true;
}

bool pl_check_operand(Pl *p, TValue *v, TBlock *body, Operand *o, const char **why, bool shared) {
  Ctx *c = p->c;
  memset(o, 0, sizeof *o);
  bool tr = v->def && v->def->opc == OP_TRANS; /* trans(load(...)) */
  if (tr && v->uses != 1 && !shared) return *why = "is used by more than the dot", false;
  if (tr) v = v->def->opnds[0];
  TOp *ld = v->def;
  if (!ld || ld->opc != OP_LOAD || ld->block != body) return *why = "is not loaded in the loop's body", false;
  if (v->uses != 1 && !shared) return *why = "is used by more than the dot", false;
  TValue *ptr = ld->opnds[0];
  if (ptr->type->kind != TY_TILE || ptr->type->rank != 2) return *why = "is not a 2-D tile load", false;
  if ((ld->flags & OPF_OTHER) && !pl_is_zero(ld->opnds[2])) return *why = "is loaded with a nonzero 'other'", false;
  int eb = ty_dtype_bytes((DType)v->type->elem.dt), vec = 16 / eb;
  const AxisInfo *ax = ax_get(c, ptr);
  o->cd = ax->contig[1] >= ax->contig[0] ? 1 : 0;
  if (ax->contig[o->cd] < vec || ax->div[o->cd] < 16 || v->type->shape[o->cd] % vec)
    return *why = "is not known to be read in aligned 16-byte runs (a pointer align(16) and row strides multiple_of(8) "
                  "for 16-bit elements let the compiler see it)",
           false;
  if ((ld->flags & OPF_MASK) && !pl_prefix_mask(c, ld->opnds[1], o->cd, vec, 0))
    return *why = "has a mask that does not keep a prefix of each 16-byte run (it should be `offs < n` terms and "
                  "masks constant along the contiguous dimension)",
           false;
  int rows = v->type->shape[1 - o->cd], cols = v->type->shape[o->cd];
  if ((cols * eb) % 128 || rows % 8)
    return *why = "is not whole 128-byte rows along its contiguous dimension (wgmma's 128-byte swizzle)", false;
  o->trans = (o->cd == 0) != tr;
  o->copy_trans = o->cd == 0;
  int shape[2] = {rows, cols};
  Type *t = ty_tile(c, v->type->elem, 2, shape);
  t->kind = TY_SMEM;
  t->brows = rows;
  t->swizzle = 128;
  o->buf = t;
  o->bytes = (int64_t)rows * cols * eb;
  o->load = ld;
  for (int i = 0; i < ld->nopnds; i++) {
    if (i == 2) break; /* 'other' is zero: the copy zero-fills */
    if (!collect(p, &o->s, body, ld->opnds[i], 0)) return *why = o->s.why, false;
  }
  tma_match(p, body->parent, v, o);
  return true;
}

/* The number of elements mask m keeps of the run of vec elements along
 * dimension d starting at each element (a prefix: prefix_mask checked),
 * built from the clone's values: a kept-or-not mask gives vec or 0,
 * `x < y` gives clamp(y - x, 0, vec), `&` the smaller. Only the runs'
 * first elements are read (lower_hw.c); the copy reads that many. */
static TValue *splat_i32(Pl *p, TOp *before, const Type *like, int64_t v, Loc loc) {
  TValue *k = pl_iconst(p, before, ty_dt(p->c, DT_I32), v, loc);
  return pl_mk1(p, before, OP_SPLAT, loc, 1, &k, ty_with_elem(p->c, like, (Elem){DT_I32, 0}));
}
static TValue *count_of(Pl *p, TOp *before, Clone *cl, TValue *m, int d, int vec, Loc loc) {
  Ctx *c = p->c;
  Type *ct = ty_with_elem(c, m->type, (Elem){DT_I32, 0});
  TOp *op = m->def;
  if (m->type->shape[d] == 1 || ax_get(c, m)->constancy[d] % vec == 0) {
    TValue *args[3] = {mapped(cl, m), splat_i32(p, before, m->type, vec, loc), splat_i32(p, before, m->type, 0, loc)};
    return pl_mk1(p, before, OP_SELECT, loc, 3, args, ct);
  }
  switch (op->opc) {
  case OP_AND:
    return pl_bin(p, before, OP_MIN, count_of(p, before, cl, op->opnds[0], d, vec, loc),
               count_of(p, before, cl, op->opnds[1], d, vec, loc), loc);
  case OP_CONVERT: return count_of(p, before, cl, op->opnds[0], d, vec, loc);
  case OP_BROADCAST:
  case OP_EXPAND_DIMS: {
    int dd = op->opc == OP_EXPAND_DIMS && d > op->axis ? d - 1 : d;
    TValue *in = count_of(p, before, cl, op->opnds[0], dd, vec, loc);
    TOp *n = pl_mk(p, before, op->opc, loc, 1, &in, ct);
    n->axis = op->axis;
    memcpy(n->shape, op->shape, sizeof n->shape);
    return n->res[0];
  }
  default: { /* OP_CMP, x < y or y > x */
    TValue *x = op->opnds[0], *y = op->opnds[1];
    if (op->pred == CMP_GT) x = op->opnds[1], y = op->opnds[0];
    TValue *diff = pl_bin(p, before, OP_SUB, mapped(cl, y), mapped(cl, x), loc);
    Type *dt = diff->type;
    TValue *zero = pl_mk1(p, before, OP_SPLAT, loc, 1, (TValue *[]){pl_iconst(p, before, ty_scalar(c, dt->elem), 0, loc)}, dt);
    TValue *top = pl_mk1(p, before, OP_SPLAT, loc, 1, (TValue *[]){pl_iconst(p, before, ty_scalar(c, dt->elem), vec, loc)}, dt);
    TValue *r = pl_bin(p, before, OP_MIN, pl_bin(p, before, OP_MAX, diff, zero, loc), top, loc);
    if (dt->elem.dt == DT_I32) return r;
    TOp *cv = pl_mk(p, before, OP_CAST, loc, 1, &r, ct);
    cv->to = (Elem){DT_I32, 0};
    return cv->res[0];
  }
  }
}

/* The slot view of a ring, as the dot's operand: the tile's orientation
 * (a transposed view when the tile is stored transposed). */
TValue *pl_slot(Pl *p, TOp *before, TValue *ring, TValue *i, Loc loc) {
  Type *t = ty_tile(p->c, ring->type->elem, 2, ring->type->shape);
  t->kind = TY_SMEM, t->swizzle = ring->type->swizzle, t->brows = ring->type->brows;
  return pl_mk1(p, before, OP_SLOT, loc, 2, (TValue *[]){ring, i}, t);
}
TValue *pl_as_operand(Pl *p, TOp *before, TValue *view, bool trans, Loc loc) {
  if (!trans) return view;
  Type *t = ty_with_elem(p->c, view->type, view->type->elem);
  t->shape[0] = view->type->shape[1], t->shape[1] = view->type->shape[0];
  t->trans = true;
  return pl_mk1(p, before, OP_SLICE, loc, 1, &view, t);
}

/* Copies of one iteration (induction variable value k, valid: it exists)
 * of the n loaded tiles into slot index si. */
void pl_copies_n(Pl *p, TOp *before, Operand *ops, int nops, TValue **rings, TValue *iv, TValue *k, TValue *valid,
                     TValue *si, TOp *fop, bool prologue, int steps, Loc loc) {
  for (int j = 0; j < nops; j++) {
    Operand *o = &ops[j];
    Clone cl = {.s = &o->s, .iv = iv, .k = k, .fop = fop, .prologue = prologue, .steps = steps};
    clone_slice(p, &cl, before);
    TValue *view = pl_slot(p, before, rings[j], si, loc);
    TValue *args[4] = {view, mapped(&cl, o->load->opnds[0])};
    int n = 2;
    int vec = 16 / ty_dtype_bytes((DType)o->buf->elem.dt), flags = o->copy_trans ? OPF_TRANS : 0;
    if (o->load->flags & OPF_MASK) {
      TValue *m = o->load->opnds[1];
      if (ax_get(p->c, m)->constancy[o->cd] % vec == 0) { /* whole chunks kept or not: the mask itself */
        args[n++] = mapped(&cl, m);
        flags |= OPF_MASK | OPF_OTHER;
      } else {
        args[n++] = count_of(p, before, &cl, m, o->cd, vec, loc);
        flags |= OPF_MASK;
      }
    }
    args[n++] = valid;
    TOp *cp = pl_mk(p, before, OP_ASYNC_COPY, o->load->loc, n, args, NULL);
    cp->flags = flags;
  }
  pl_mk(p, before, OP_ASYNC_COMMIT, loc, 0, NULL, NULL);
}
static void copies(Pl *p, TOp *before, Operand *ops, TValue **rings, TValue *iv, TValue *k, TValue *valid, TValue *si,
                   TOp *fop, bool prologue, int steps, Loc loc) {
  pl_copies_n(p, before, ops, 2, rings, iv, k, valid, si, fop, prologue, steps, loc);
}

/* ---- the TMA form ---- */

/* A derived kernel parameter: the descriptor of operand o's tensor, which
 * the runtime builds at launch (TParam.derived). */
TValue *pl_add_desc(Pl *p, Operand *o, const char *name) {
  Ctx *c = p->c;
  TFunc *f = p->f;
  TParam *np = ar_alloc(&c->arena, sizeof(TParam) * (size_t)(f->nparams + 2));
  memcpy(np, f->params, sizeof(TParam) * (size_t)f->nparams);
  TParam *q = &np[f->nparams];
  memset(q, 0, sizeof *q);
  int eb = ty_dtype_bytes((DType)o->buf->elem.dt);
  q->name = name;
  q->elem = o->buf->elem;
  q->tma = q->derived = true;
  q->rank = 2;
  q->box[0] = o->buf->shape[0];
  q->box[1] = 128 / eb;
  q->swizzle = 128;
  q->align = 64;
  for (int i = 0; i < 4; i++) {
    TValue *v = o->src[i];
    q->from[i] = v && !v->def ? v->index : -1;
    q->lit[i] = v ? (v->def ? (int64_t)v->def->ival : 0) : i == 1 ? o->cols : (int64_t)INT32_MAX; /* unbounded rows */
  }
  q->planes = o->planes;
  Type *t = ty_tile(c, q->elem, 2, q->box);
  t->kind = TY_TMA;
  t->swizzle = 128;
  q->value = ir_add_arg(c, f->body, t);
  f->params = np;
  f->nparams++;
  return q->value;
}

TValue *pl_bars(Pl *p, int n, const char *name, Loc loc) {
  Type *t = ty_void(p->c);
  t->kind = TY_BAR, t->nbuf = n;
  TOp *al = ir_op(p->c, OP_BAR_ALLOC, loc, 0, NULL, 1, (Type *[]){t});
  al->ival2 = 1; /* one arrival: the issuing thread's arrive.expect_tx, or one tcgen05.commit */
  al->res[0]->name = name;
  ir_insert_before(p->f->body->first, al);
  return al->res[0];
}

TValue *pl_bar_slot(Pl *p, TOp *before, TValue *bars, TValue *i, Loc loc) {
  Type *t = ty_void(p->c);
  t->kind = TY_BAR;
  return pl_mk1(p, before, OP_SLOT, loc, 2, (TValue *[]){bars, i}, t);
}

/* The coordinate x + off of a run, in the clone. */
static TValue *coord(Pl *p, TOp *before, Clone *cl, TValue *x, int64_t off, Loc loc) {
  Type *ti = ty_dt(p->c, DT_I32);
  if (!x) return pl_iconst(p, before, ti, off, loc);
  TValue *v = mapped(cl, x);
  return off ? pl_bin(p, before, OP_ADD, v, pl_iconst(p, before, ti, off, loc), loc) : v;
}

/* X of operand o's plane (pk times its leaves), in the clone */
static TValue *plane_x(Pl *p, TOp *before, Clone *cl, Operand *o, Loc loc) {
  Type *ti = ty_dt(p->c, DT_I32);
  TValue *x = o->pk != 1 || !o->npleaf ? pl_iconst(p, before, ti, o->pk, loc) : NULL;
  for (int i = 0; i < o->npleaf; i++) {
    TValue *l = mapped(cl, o->pleaf[i]);
    x = x ? pl_bin(p, before, OP_MUL, x, l, loc) : l;
  }
  return x;
}

/* if (valid) { expect the nops tiles' bytes on full[si]; TMA them into slot si } */
void pl_tma_issue(Pl *p, TOp *before, Operand *ops, int nops, TValue **rings, TValue **descs, TValue *full,
                  TValue *iv, TValue *k, TValue *valid, TValue *si, TOp *fop, bool prologue, int steps, Loc loc) {
  Ctx *c = p->c;
  TBlock *then = ir_block(c, 0, NULL), *els = ir_block(c, 0, NULL);
  TOp *yt = ir_op(c, OP_YIELD, loc, 0, NULL, 0, NULL);
  ir_append(then, yt);
  ir_append(els, ir_op(c, OP_YIELD, loc, 0, NULL, 0, NULL));
  TOp *iff = ir_op(c, OP_IF, loc, 1, &valid, 0, NULL);
  ir_add_region(c, iff, then);
  ir_add_region(c, iff, els);
  ir_insert_before(before, iff);
  TValue *bar = pl_bar_slot(p, yt, full, si, loc);
  int64_t bytes = 0;
  for (int j = 0; j < nops; j++) bytes += ops[j].bytes;
  pl_mk(p, yt, OP_BAR_EXPECT, loc, 2, (TValue *[]){bar, pl_iconst(p, yt, ty_dt(c, DT_I32), bytes, loc)}, NULL);
  for (int j = 0; j < nops; j++) {
    Operand *o = &ops[j];
    Clone cl = {.s = &o->s, .iv = iv, .k = k, .fop = fop, .prologue = prologue, .steps = steps};
    clone_slice(p, &cl, yt);
    TValue *row = coord(p, yt, &cl, o->start[1 - o->cd], o->off[1 - o->cd], loc);
    TValue *col = coord(p, yt, &cl, o->start[o->cd], o->off[o->cd], loc);
    TValue *view = pl_slot(p, yt, rings[j], si, loc);
    TValue *x = o->pk ? plane_x(p, yt, &cl, o, loc) : NULL;
    if (x && !o->planes) row = pl_bin(p, yt, OP_ADD, x, row, loc); /* rows of an unbounded tensor from X */
    TOp *tl = pl_mk(p, yt, OP_TMA_LOAD, o->load->loc, x && o->planes ? 6 : 5,
                    (TValue *[]){descs[j], row, col, view, bar, x}, NULL);
    if (x && o->planes) tl->flags |= OPF_PLANE;
  }
}

void pl_tma_step(Pl *p, TOp *before, Operand *ops, int nops, TValue **rings, TValue **descs, TValue *full, TOp *fop,
                 TValue *it, TValue *cur, TValue *nxt, int S, int D, int warps, Loc loc) {
  Type *ti = ty_dt(p->c, DT_I32);
  TValue *iv = fop->regions[0]->args[0], *hi = fop->opnds[1], *step = fop->opnds[2];
  TOp *bar = pl_mk(p, before, OP_NAMED_BAR, loc, 0, NULL, NULL);
  bar->ival = 0, bar->ival2 = 32 * warps;
  TValue *kn = pl_bin(p, before, OP_ADD, iv, pl_bin(p, before, OP_MUL, pl_iconst(p, before, ti, D, loc), step, loc), loc);
  pl_tma_issue(p, before, ops, nops, rings, descs, full, iv, kn, pl_cmp_lt(p, before, kn, hi, loc), nxt, fop, false, D,
               loc);
  TValue *phase = pl_bin(p, before, OP_REM, pl_bin(p, before, OP_DIV, it, pl_iconst(p, before, ti, S, loc), loc),
                         pl_iconst(p, before, ti, 2, loc), loc);
  pl_mk(p, before, OP_BAR_WAIT, loc, 2, (TValue *[]){pl_bar_slot(p, before, full, cur, loc), phase}, NULL);
}

/* ---- the epilogue: C through the dead rings and TMA ----
 *
 * After the loop the rings hold nothing anyone reads. A store of the
 * accumulator's tile (or of an elementwise function of it) that is a box of
 * a 2-D tensor (as the loads: base + rows * stride + cols, masked rows < R
 * & cols < C, all parameters), with rows known to be 16-byte aligned (the
 * stride multiple_of(16 / element bytes)), is staged in shared memory on
 * the B ring's bytes and written by TMA (its out-of-bounds part clipped):
 * 16-byte coalesced writes, instead of each thread storing pairs (or single
 * elements, when nothing says the rows are aligned) from the MMA layout. */
static const char *store_box(Pl *p, TOp *st, int M, int N, Operand *o) {
  TValue *v = st->opnds[1];
  if (v->type->kind != TY_TILE || v->type->rank != 2 || v->type->shape[0] != M || v->type->shape[1] != N)
    return "it is not the accumulator's tile";
  DType dt = (DType)v->type->elem.dt;
  if (dt != DT_BF16 && dt != DT_F16 && dt != DT_F32) return "it stores neither bf16, f16 nor f32";
  if (!(st->flags & OPF_MASK) || (st->flags & ~OPF_MASK)) return "it has no plain mask to give the tensor's extent";
  Box b = {0};
  if (!ptr_terms(st->opnds[0], &b) || !b.seen[0] || !b.seen[1] || !host_known(p, b.base, true) || b.coef[1] ||
      !b.coef[0] || !host_known(p, b.coef[0], false))
    return "its addresses are not base + rows * stride + columns (parameters)";
  if (!mask_terms(st->opnds[2], &b) || !b.bound[0] || !b.bound[1] || !host_known(p, b.bound[0], false) ||
      !host_known(p, b.bound[1], false))
    return "its mask is not (rows < R) & (columns < C) (parameters)";
  int eb = ty_dtype_bytes(dt);
  TValue *stride = b.coef[0];
  int64_t mult = stride->def ? (int64_t)stride->def->ival : p->f->params[stride->index].align;
  if ((mult * eb) % 16) return "its row stride is not known to be a multiple of 16 bytes (declare it multiple_of)";
  for (int d = 0; d < 2; d++) {
    if (b.run[d].n != v->type->shape[d]) return "its runs do not span the tile";
    o->start[d] = b.run[d].x, o->off[d] = b.run[d].off;
  }
  o->src[0] = b.base, o->src[1] = b.bound[1], o->src[2] = b.bound[0], o->src[3] = stride;
  int shape[2] = {M, N};
  o->buf = ty_tile(p->c, v->type->elem, 2, shape);
  o->bytes = (int64_t)M * N * eb;
  return NULL;
}

/* The store after the loop (fin: the wait for the last wgmma), if one fits;
 * else a note saying why not. */
void pl_tma_epilogue(Pl *p, TOp *fin, TValue *ringb, int64_t ringb_bytes, int warps, Loc loc) {
  Ctx *c = p->c;
  int M = fin->res[0]->type->shape[0], N = fin->res[0]->type->shape[1];
  TOp *st = NULL;
  for (TOp *op = fin->next; op; op = op->next)
    if (op->opc == OP_STORE && op->nopnds >= 2 && op->opnds[1]->type->kind == TY_TILE) {
      st = op;
      break;
    }
  if (!st) return;
  Operand o;
  memset(&o, 0, sizeof o);
  const char *why = store_box(p, st, M, N, &o);
  if (!why && o.bytes > ringb_bytes) why = "the tile is larger than the B ring it would be staged in";
  for (int i = 0; i < p->f->nparams && !why; i++)
    if (!strcmp(p->f->params[i].name, "__dot_c")) why = "a parameter is named like its descriptor (__dot_c)";
  if (why) {
    vec_push(&c->arena, &p->f->notes,
             ar_printf(&c->arena, "pipeline: store at %d:%d written from registers (not by TMA: %s)", st->loc.line,
                       st->loc.col, why));
    return;
  }
  /* the staging tile: 128-byte swizzled column blocks, on the B ring's bytes */
  Type *t = ty_tile(c, o.buf->elem, 2, o.buf->shape);
  t->kind = TY_SMEM, t->swizzle = 128, t->brows = M;
  TOp *al = ir_op(c, OP_SMEM_ALLOC, loc, 1, &ringb, 1, (Type *[]){t});
  al->ival2 = o.bytes;
  al->flags |= OPF_ALIAS;
  al->res[0]->name = "<dot C>";
  ir_insert_after(ringb->def, al);
  TValue *desc = pl_add_desc(p, &o, "__dot_c"); /* boxes of M rows, 128 bytes wide */
  /* every warpgroup's wgmmas are done (each waited for its own) before the
   * ring is overwritten; the stores are visible to the copy engine (fence)
   * and all made (barrier) before one thread issues the copy */
  TOp *b0 = pl_mk(p, st, OP_NAMED_BAR, loc, 0, NULL, NULL);
  b0->ival = 0, b0->ival2 = 32 * warps;
  pl_mk(p, st, OP_SMEM_STORE, st->loc, 2, (TValue *[]){al->res[0], st->opnds[1]}, NULL);
  pl_mk(p, st, OP_FENCE_ASYNC, loc, 0, NULL, NULL);
  TOp *b1 = pl_mk(p, st, OP_NAMED_BAR, loc, 0, NULL, NULL);
  b1->ival = 0, b1->ival2 = 32 * warps;
  Slice none = {0};
  Clone cl = {.s = &none};
  TValue *row = coord(p, st, &cl, o.start[0], o.off[0], loc), *col = coord(p, st, &cl, o.start[1], o.off[1], loc);
  pl_mk(p, st, OP_TMA_STORE, st->loc, 4, (TValue *[]){desc, row, col, al->res[0]}, NULL);
  TOp *w = pl_mk(p, st, OP_TMA_STORE_WAIT, loc, 0, NULL, NULL);
  w->ival = 0; /* .read: the staging tile is read before the kernel ends */
  vec_push(&c->arena, &p->f->notes,
           ar_printf(&c->arena, "pipeline: store at %d:%d staged in shared memory (on the B ring) and written by TMA "
                                "(__dot_c)", st->loc.line, st->loc.col));
  ir_remove(st);
}

int64_t pl_smem_in_use(TBlock *b) {
  int64_t n = 0;
  for (TOp *op = b->first; op; op = op->next) {
    if (op->opc == OP_SMEM_ALLOC && !(op->flags & OPF_ALIAS))
      n += ((op->ival2 + 1023) & ~(int64_t)1023) * (op->res[0]->type->nbuf ? op->res[0]->type->nbuf : 1);
    if (op->opc == OP_BAR_ALLOC) n += 8 * op->res[0]->type->nbuf;
    for (int r = 0; r < op->nregions; r++) n += pl_smem_in_use(op->regions[r]);
  }
  return n;
}

static void pipeline_dot(Pl *p, TOp *fop, TOp *dot) {
  Ctx *c = p->c;
  TFunc *f = p->f;
  TBlock *body = fop->regions[0];
  Loc loc = dot->loc;
  const char *why = NULL;
  TValue *a = dot->opnds[0], *b = dot->opnds[1], *acc = dot->opnds[2];
  int M = a->type->shape[0], K = a->type->shape[1], N = b->type->shape[1];
  DType dt = (DType)a->type->elem.dt;
  int warps = f->warps, ai = acc->block == body ? acc->index : -1;
  TValue *iv = body->args[0];
  if (f->stages == 0) return pl_note(p, loc, "not pipelined: stages(0)");
  if (c->sm != 90) return pl_note(p, loc, "not pipelined: sm_100a lowers dot on mma.sync for now");
  if (f->has_tasks) return pl_note(p, loc, "not pipelined: the kernel has tasks (pipeline it by hand)");
  if (dt != DT_BF16 && dt != DT_F16) return pl_note(p, loc, "not pipelined: wgmma here takes bf16 or f16 operands");
  if (warps % 4 || M != 16 * warps)
    return pl_note(p, loc, "of [%d, %d] x [%d, %d] on %d warps not pipelined: each warpgroup (4 warps) computes 64 rows "
                        "on wgmma, so M must be 16 x warps", M, K, K, N, warps);
  if (N % 8 || N > 256 || K % 16) return pl_note(p, loc, "not pipelined: wgmma needs N a multiple of 8 up to 256");
  if (ai < 1 || dot->res[0]->uses != 1 || acc->uses != 1 || body->last->opc != OP_YIELD ||
      body->last->opnds[ai - 1] != dot->res[0])
    return pl_note(p, loc, "not pipelined: its accumulator is not a value the loop carries from dot to dot");
  if (iv->type->elem.dt != DT_I32) return pl_note(p, loc, "not pipelined: the loop counts in 64 bits");
  TOp *sd = fop->opnds[2]->def;
  if (!sd || sd->opc != OP_CONST || sd->ival <= 0)
    return pl_note(p, loc, "not pipelined: the loop's step is not a positive constant");
  Operand ops[2];
  if (!pl_check_operand(p, a, body, &ops[0], &why, false)) return pl_note(p, loc, "not pipelined: a %s", why);
  if (!pl_check_operand(p, b, body, &ops[1], &why, false)) return pl_note(p, loc, "not pipelined: b %s", why);
  /* TMA when both tiles are boxes of tensors the host can describe (else cp.async) */
  bool tma = ops[0].tma && ops[1].tma;
  for (int i = 0; i < f->nparams && tma; i++)
    if (!strcmp(f->params[i].name, "__dot_a") || !strcmp(f->params[i].name, "__dot_b"))
      tma = false, ops[0].tma = false, ops[0].no_tma = "a parameter is named like the descriptors (__dot_a, __dot_b)";
  /* stages: S slots, copies D = S - 2 iterations ahead */
  int64_t stage = ((ops[0].bytes + 1023) & ~1023) + ((ops[1].bytes + 1023) & ~1023);
  int64_t used = pl_smem_in_use(f->body) + (tma ? 1024 : 0); /* the mbarriers, before the first 1024-byte boundary */
  int S = f->stages;
  if (S < 0) {
    for (S = 4; S > 3 && used + S * stage > PL_SMEM_BUDGET; S--) {
    }
    if (used + S * stage > PL_SMEM_BUDGET)
      return pl_note(p, loc, "not pipelined: 3 stages of %lld bytes do not fit in shared memory", (long long)stage);
  } else if (used + S * stage > PL_SMEM_LIMIT) {
    dg_error(c, dot->loc, "stages(%d): %d slots of %lld bytes for this dot's operands do not fit in shared memory "
                          "(%lld bytes already allocated; at most %d)",
             S, S, (long long)stage, (long long)used, PL_SMEM_LIMIT);
    return;
  }
  int D = S - 2;
  Type *ti = ty_dt(c, DT_I32);
  TValue *hi = fop->opnds[1], *step = fop->opnds[2];

  /* the rings (and for TMA their mbarriers and descriptors), at the kernel's entry */
  TValue *rings[2], *descs[2] = {0}, *full = NULL;
  for (int j = 0; j < 2; j++) {
    Type *t = ty_tile(c, ops[j].buf->elem, 2, ops[j].buf->shape);
    t->kind = TY_SMEM, t->swizzle = 128, t->brows = ops[j].buf->brows, t->nbuf = S;
    TOp *al = ir_op(c, OP_SMEM_ALLOC, loc, 0, NULL, 1, (Type *[]){t});
    al->ival2 = ops[j].bytes;
    al->res[0]->name = j ? "<dot B>" : "<dot A>"; /* what the compile report calls it (stats.c) */
    if (f->body->first) ir_insert_before(f->body->first, al);
    else ir_append(f->body, al);
    rings[j] = al->res[0];
    if (tma) descs[j] = pl_add_desc(p, &ops[j], j ? "__dot_b" : "__dot_a");
  }
  if (tma) full = pl_bars(p, S, "<dot full>", loc);
  /* in a loop, the rings were used by the last run of this one: every
   * warpgroup's last wgmma must be done with them before they are refilled
   * (each waited only for its own) */
  for (TOp *up = fop->block->parent; up; up = up->block->parent)
    if (up->opc == OP_FOR || up->opc == OP_WHILE) {
      TOp *b0 = pl_mk(p, fop, OP_NAMED_BAR, loc, 0, NULL, NULL);
      b0->ival = 0, b0->ival2 = 32 * warps;
      break;
    }
  /* the prologue: iterations 0 .. D-1 */
  for (int j = 0; j < D; j++) {
    TValue *k = pl_iter(p, fop, fop, j, loc);
    if (tma)
      pl_tma_issue(p, fop, ops, 2, rings, descs, full, iv, k, pl_cmp_lt(p, fop, k, hi, loc), pl_iconst(p, fop, ti, j, loc), fop,
                true, j, loc);
    else
      copies(p, fop, ops, rings, iv, k, pl_cmp_lt(p, fop, k, hi, loc), pl_iconst(p, fop, ti, j, loc), fop, true, j, loc);
  }
  /* the body, where the dot was */
  TValue *it, *cur, *nxt;
  pl_ring_index(p, dot, fop, S, D, loc, &it, &cur, &nxt);
  TValue *kn = NULL;
  if (tma) { /* every warpgroup is past the wgmma of it - 2 (slot nxt is free) */
    pl_tma_step(p, dot, ops, 2, rings, descs, full, fop, it, cur, nxt, S, D, warps, loc);
  } else {
    TOp *w = pl_mk(p, dot, OP_ASYNC_WAIT, loc, 0, NULL, NULL);
    w->ival = D - 1;
    pl_mk(p, dot, OP_FENCE_ASYNC, loc, 0, NULL, NULL);
    TOp *bar = pl_mk(p, dot, OP_NAMED_BAR, loc, 0, NULL, NULL);
    bar->ival = 0, bar->ival2 = 32 * warps;
    kn = pl_bin(p, dot, OP_ADD, iv, pl_bin(p, dot, OP_MUL, pl_iconst(p, dot, ti, D, loc), step, loc), loc);
    copies(p, dot, ops, rings, iv, kn, pl_cmp_lt(p, dot, kn, hi, loc), nxt, fop, false, D, loc);
  }
  TValue *va = pl_as_operand(p, dot, pl_slot(p, dot, rings[0], cur, loc), ops[0].trans, loc);
  TValue *vb = pl_as_operand(p, dot, pl_slot(p, dot, rings[1], cur, loc), ops[1].trans, loc);
  TValue *r = pl_mk1(p, dot, OP_MMA_ASYNC, loc, 3, (TValue *[]){va, vb, acc}, acc->type);
  pl_mk(p, dot, OP_MMA_COMMIT, loc, 0, NULL, NULL);
  TOp *mw = pl_mk(p, dot, OP_MMA_WAIT, loc, 1, &r, acc->type);
  mw->ival = 1;
  ir_replace_uses(body, dot->res[0], mw->res[0]);
  ir_remove(dot);
  /* after the loop: the last wgmma, and (cp.async) the copies past the end
   * (none read memory); TMA issues none past the end */
  TValue *res = fop->res[ai - 1];
  TOp *fin = ir_op(c, OP_MMA_WAIT, loc, 1, &res, 1, (Type *[]){acc->type});
  if (!tma) ir_insert_after(fop, ir_op(c, OP_ASYNC_WAIT, loc, 0, NULL, 0, NULL));
  ir_insert_after(fop, fin);
  ir_replace_uses(fop->block, res, fin->res[0]);
  fin->opnds[0] = res; /* (replace_uses reached the wait's own operand) */
  if (tma)
    pl_note(p, loc,
         "pipelined: %d stages (TMA %d iterations ahead), a [%d, %d] %s-major and b [%d, %d] %s-major into 128-byte "
         "swizzled shared memory (%lld bytes) from descriptors the runtime builds at launch (__dot_a, __dot_b), "
         "wgmma m64n%dk16 on %d warpgroup%s, one in flight",
         S, D, M, K, ops[0].trans ? "M" : "K", K, N, ops[1].trans ? "K" : "N", (long long)(S * stage), N, warps / 4,
         warps > 4 ? "s" : "");
  else
    pl_note(p, loc,
         "pipelined: %d stages (copies %d iterations ahead), a [%d, %d] %s-major and b [%d, %d] %s-major through "
         "cp.async into 128-byte swizzled shared memory (%lld bytes), wgmma m64n%dk16 on %d warpgroup%s, one in "
         "flight (not TMA: %s %s)",
         S, D, M, K, ops[0].trans ? "M" : "K", K, N, ops[1].trans ? "K" : "N", (long long)(S * stage), N, warps / 4,
         warps > 4 ? "s" : "", ops[0].tma ? "b" : "a", ops[0].tma ? ops[1].no_tma : ops[0].no_tma);
  if (tma && fop->block == f->body)
    pl_tma_epilogue(p, fin, rings[1], S * ((ops[1].bytes + 1023) & ~(int64_t)1023), warps, loc);
}

typedef struct Found {
  TOp *fop, *dot;
} Found;

static void find(TOp *op, void *ud) {
  Found *fd = ud;
  if (fd->dot || op->opc != OP_DOT || !op->block->parent || op->block->parent->opc != OP_FOR) return;
  fd->fop = op->block->parent;
  fd->dot = op;
}

/* The first dot that is the direct child of a loop (NULL if none), and
 * its loop in *fop: the single-dot pipelines' candidate (pl_run, pb_run). */
TOp *pl_first_loop_dot(TFunc *f, TOp **fop) {
  Found fd = {0};
  ir_walk(f->body, find, &fd);
  *fop = fd.fop;
  return fd.dot;
}

bool pl_check_stages(Ctx *c, TFunc *f) {
  TOp *fop, *dot = pl_first_loop_dot(f, &fop);
  if (!dot || f->stages != 2) return true;
  dg_error(c, dot->loc, "stages(2): a dot's pipeline has 3 to 8 slots of shared memory per operand (the slots the "
                        "wgmmas still read, the rest being filled)");
  return false;
}

/* One dot per kernel, the first in a loop (pipeline_multi.c takes the
 * loops with two to four dots, before this runs). */
void pl_run(Ctx *c, TFunc *f) {
  Pl p = {c, f};
  pl_count_uses(f);
  TOp *fop, *dot = pl_first_loop_dot(f, &fop);
  if (!dot) return;
  pipeline_dot(&p, fop, dot);
}

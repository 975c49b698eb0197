/* passes.c - Tile IR passes: axis analysis, layout assignment (with
 * coalescing of loads and stores and mma layouts for dot), conversion
 * insertion, rematerialization of cheap values in the layout their user
 * wants, and dead-code elimination.
 *
 *   pass_run:  ax_analyze -> pipeline (pipeline.c) -> ax_analyze -> assign (repeated until loop-carried layouts are
 *              stable) -> remat -> fold converts -> dce -> verify
 */
#include "tilec_int.h"
#include <string.h>

typedef struct P {
  Ctx *c;
  TFunc *f;
  int warps;
  bool changed;
} P;

static bool is_tile(const TValue *v) { return v->type->kind == TY_TILE; }
static const Layout *lay(const TValue *v) { return v->type->layout; }
static void set_layout(P *p, TValue *v, const Layout *l) {
  if (is_tile(v)) v->type = ty_with_layout(p->c, v->type, l);
}

static bool same(P *p, const Layout *a, const Layout *b, const Type *t) {
  if (!a || !b) return a == b;
  return ly_same(a, b, t->rank, t->shape, p->warps);
}

static int elem_bytes(const Type *t) {
  if (t->elem.dt == DT_PTR) return ty_dtype_bytes((DType)t->elem.pointee);
  if (t->elem.dt == DT_BOOL) return 4;
  return ty_dtype_bytes((DType)t->elem.dt);
}

static const Layout *default_for(P *p, const Type *t) {
  return ly_default(p->c, t->rank, t->shape, p->warps, elem_bytes(t));
}

/* Make operand i of op have layout l, inserting a conversion before op. */
static void require(P *p, TOp *op, int i, const Layout *l) {
  TValue *v = op->opnds[i];
  if (!is_tile(v) || !l) return;
  if (!lay(v)) set_layout(p, v, default_for(p, v->type)); /* should not happen */
  if (same(p, lay(v), l, v->type)) return;
  TOp *cv = ir_op(p->c, OP_CONVERT, op->loc, 1, &v, 1, (Type *[]){ty_with_layout(p->c, v->type, l)});
  cv->flags = OPF_INSERTED;
  cv->res[0]->ax = v->ax;
  ir_insert_before(op, cv);
  op->opnds[i] = cv->res[0];
}

/* A value that is cheap to recompute in another layout. */
static bool is_cheap(const TValue *v, int depth) {
  if (!is_tile(v)) return true;
  if (!v->def || depth > 12) return false;
  TOp *d = v->def;
  switch (d->opc) {
  case OP_SPLAT:
  case OP_ARANGE: return true;
  case OP_SMEM_LOAD: /* a homed accumulator (home.c): each thread loads its own part in any layout */
    return d->opnds[0]->def && d->opnds[0]->def->opc == OP_SMEM_ALLOC && (d->opnds[0]->def->flags & OPF_HOME);
  case OP_EXPAND_DIMS:
  case OP_BROADCAST:
  case OP_CONVERT: return is_cheap(d->opnds[0], depth + 1);
  default:
    if (!ir_is_elementwise(d->opc)) return false;
    for (int i = 0; i < d->nopnds; i++)
      if (!is_cheap(d->opnds[i], depth + 1)) return false;
    return true;
  }
}

/* The coalesced layout for memory accesses through a tile of pointers:
 * contiguous dimension fastest, up to 16 bytes per thread. */
static const Layout *coalesced(P *p, TValue *ptr) {
  const Type *t = ptr->type;
  const AxisInfo *ax = ax_get(p->c, ptr);
  int order[TC_MAX_RANK], r = t->rank;
  for (int i = 0; i < r; i++) order[i] = r - 1 - i;
  /* stable sort by contiguity, descending (ties keep the last dim first) */
  for (int i = 1; i < r; i++)
    for (int j = i; j > 0 && ax->contig[order[j]] > ax->contig[order[j - 1]]; j--) {
      int tmp = order[j];
      order[j] = order[j - 1];
      order[j - 1] = tmp;
    }
  int eb = elem_bytes(t);
  int64_t numel = ty_numel(t);
  int64_t vec = 16 / eb;
  int64_t cg = ax->contig[order[0]];
  int64_t c2 = 1;
  while (c2 * 2 <= cg) c2 *= 2;
  if (vec > c2) vec = c2;
  int64_t per_thread = numel / (32 * p->warps);
  if (per_thread < 1) per_thread = 1;
  if (vec > per_thread) vec = per_thread;
  if (vec < 1) vec = 1;
  return ly_blocked_for(p->c, r, t->shape, p->warps, (int)vec, order);
}

static const Layout *forced(const TValue *v) { return (const Layout *)v->aux; }

static void assign_block(P *p, TBlock *b);

/* Pick the layout for an elementwise op: an operand made by an op that
 * fixes its layout (a load, dot, reduction, ...), else a loop-carried value
 * (whose layout the loop pass can still change), else the first tile. */
static const Layout *pick(P *p, TOp *op) {
  const Layout *first = NULL, *carried = NULL;
  for (int i = 0; i < op->nopnds; i++) {
    TValue *v = op->opnds[i];
    if (!is_tile(v) || !lay(v)) continue;
    if (!first) first = lay(v);
    if (is_cheap(v, 0)) continue;
    if (v->def) return lay(v);
    if (!carried) carried = lay(v);
  }
  if (carried) return carried;
  return first ? first : default_for(p, op->res[0]->type);
}

/* Is v the accumulator pipeline_sm100.c reads back, or computed from it elementwise? */
static bool from_dot_acc(const TValue *v, int depth) {
  const TOp *d = v->def;
  if (!d || depth > 16) return false;
  if (d->opc == OP_TMEM_LOAD) return (d->flags & OPF_DOT_ACC) != 0;
  if (!ir_is_elementwise(d->opc) && d->opc != OP_CONVERT) return false;
  for (int i = 0; i < d->nopnds; i++)
    if (from_dot_acc(d->opnds[i], depth + 1)) return true;
  return false;
}

/* The register layout of tensor memory's 32x32b shape (tcgen05.ld/st):
 * a thread a row (lane t of warp k: row 32k + t), its registers the
 * columns in order. More than 4 warps on 128 rows (the accumulator
 * pipeline_sm100.c reads back): warpgroup g takes the g-th share of the
 * columns (warp bits 0-1 the rows, the rest the columns: the lane rule). */
static const Layout *tmem_layout(P *p, const Type *t) {
  if (p->warps > 4 && t->shape[0] == 128) {
    int g = p->warps / 4;
    int spt[2] = {1, t->shape[1] / g}, tpw[2] = {32, 1}, wpc[2] = {4, g}, order[2] = {0, 1};
    return ly_blocked(p->c, 2, spt, tpw, wpc, order);
  }
  int spt[2] = {1, t->shape[1]}, tpw[2] = {32, 1}, wpc[2] = {p->warps, 1}, order[2] = {1, 0};
  return ly_blocked(p->c, 2, spt, tpw, wpc, order);
}

/* The store of a 16- or 8-bit MMA result: the accumulator's pairs of
 * columns make 4 bytes a thread (half of each 32-byte sector a warp's
 * store touches, and four times the store instructions); ly_mma_wide's
 * layout gives a thread 8 consecutive columns (16 bytes at 16 bits) for
 * two shuffles a word (lower_ops.c's warp_swap), where the pointers'
 * contiguity and alignment allow the wide access. --no-wide-stores keeps
 * the pairs (an A/B switch). */
static const Layout *wide_store(P *p, TValue *ptr, TValue *val, const Layout *mma) {
  int eb = elem_bytes(val->type);
  if (p->c->opts.no_wide_stores || eb > 2 || mma->cols > 2 || val->type->rank != 2) return mma;
  const AxisInfo *ax = ax_get(p->c, ptr);
  int64_t cols = 16 / eb;
  if (cols > 8) cols = 8;
  for (; cols > 2; cols /= 2) {
    if (ax->contig[1] < cols || ax->div[1] % (cols * eb)) continue;
    const Layout *w = ly_mma_wide(p->c, mma, (int)cols);
    LinLayout lin; /* (too few columns a warp for 8: try 4) */
    if (ly_linear(w, 2, val->type->shape, p->warps, &lin, NULL)) return w;
  }
  return mma;
}

static int ilog2(int x) {
  int r = 0;
  while ((1 << r) < x) r++;
  return r;
}

static void assign_op(P *p, TOp *op) {
  Ctx *c = p->c;
  TValue *r = op->nres ? op->res[0] : NULL;
  switch (op->opc) {
  case OP_SPLAT:
  case OP_ARANGE:
    set_layout(p, r, default_for(p, r->type));
    return;
  case OP_CONVERT:
    if (!(op->flags & OPF_INSERTED)) return; /* the user's layout stands */
    return;
  case OP_LOAD: {
    if (!is_tile(r)) return;
    const Layout *l = coalesced(p, op->opnds[0]);
    for (int i = 0; i < op->nopnds; i++) require(p, op, i, l);
    set_layout(p, r, l);
    return;
  }
  case OP_ASYNC_COPY: { /* cp.async: 16-byte chunks of the tile, a thread's consecutive registers */
    const Layout *l = coalesced(p, op->opnds[1]);
    for (int i = 1; i < op->nopnds; i++) require(p, op, i, l);
    return;
  }
  case OP_STORE:
  case OP_ATOMIC_ADD: {
    if (!is_tile(op->opnds[0])) return;
    const Layout *l = coalesced(p, op->opnds[0]);
    /* A store of an MMA result whose rows are contiguous in memory writes
     * straight from the accumulator registers (pairs of elements) instead of
     * a round trip through shared memory: the epilogue of an attention
     * kernel has no shared memory to spare (atomic adds too: a dQ block
     * added from a wgmma accumulator). Wide stores of such tiles are what
     * TMA store is for. */
    TValue *val = op->nopnds > 1 ? op->opnds[1] : NULL;
    if ((op->opc == OP_STORE || op->opc == OP_ATOMIC_ADD) && val && is_tile(val) && !is_cheap(val, 0) && lay(val) &&
        lay(val)->kind == LY_MMA && ax_get(c, op->opnds[0])->contig[val->type->rank - 1] >= 2) {
      l = lay(val);
      if (op->opc == OP_STORE) l = wide_store(p, op->opnds[0], val, l);
    }
    /* Likewise the accumulator pipeline_sm100.c reads back with tcgen05.ld
     * (or an elementwise function of it, in its 32x32b layout: a thread a
     * row, its columns in its registers, contiguous in memory already). */
    if (op->opc == OP_STORE && val && is_tile(val) && val->type->rank == 2 && lay(val) && lay(val)->kind == LY_BLOCKED &&
        lay(val)->tpw[0] == 32 && lay(val)->spt[1] >= 2 && from_dot_acc(val, 0) && ax_get(c, op->opnds[0])->contig[1] >= 2)
      l = lay(val);
    /* A small vector reduced from an MMA result (an attention kernel's row
     * statistics, LSE) is stored from the registers that hold it, one
     * owner per element, instead of through shared memory and two
     * barriers to coalesce a few hundred bytes. */
    if (op->opc == OP_STORE && val && is_tile(val) && !is_cheap(val, 0) && lay(val) && lay(val)->kind == LY_SLICE &&
        lay(val)->parent->kind == LY_MMA && ty_numel(val->type) <= 32 * p->warps)
      l = lay(val);
    for (int i = 0; i < op->nopnds; i++) require(p, op, i, l);
    if (r) set_layout(p, r, l);
    return;
  }
  case OP_REDUCE: {
    TValue *x = op->opnds[0];
    if (is_tile(r)) set_layout(p, r, ly_slice(c, op->axis, lay(x)));
    return;
  }
  case OP_EXPAND_DIMS: {
    const Layout *in = lay(op->opnds[0]);
    const Layout *out;
    if (in && in->kind == LY_SLICE && in->dim == op->axis && in->parent->rank == r->type->rank) out = in->parent;
    else out = default_for(p, r->type);
    require(p, op, 0, ly_slice(c, op->axis, out));
    set_layout(p, r, out);
    return;
  }
  case OP_BROADCAST:
    set_layout(p, r, lay(op->opnds[0]));
    return;
  case OP_TRANS: {
    const Layout *in = lay(op->opnds[0]);
    if (!in || in->kind != LY_BLOCKED) {
      in = default_for(p, op->opnds[0]->type);
      require(p, op, 0, in);
    }
    set_layout(p, r, ly_transpose(c, in));
    return;
  }
  case OP_MMA_ASYNC: { /* wgmma: the accumulator of a warpgroup (4 warps, 16 rows each), or of every
                         warpgroup, 64 rows each (pipeline.c's: M = 16 x warps) */
    int M = op->opnds[2]->type->shape[0];
    const Layout *mma = ly_mma(c, 2, M == 16 * p->warps && M > 64 ? p->warps : 4, 1, 8);
    if (op->opnds[0]->type->kind == TY_TILE) /* A from registers: the mma.sync A fragments, per warp */
      require(p, op, 0, ly_dotop(c, 0, mma, 16));
    require(p, op, 2, mma);
    set_layout(p, r, mma);
    if (op->nres == 2) { /* a pair of accumulators side by side (one wgmma) */
      require(p, op, 3, mma);
      set_layout(p, op->res[1], mma);
    }
    if (op->ival) require(p, op, op->nopnds - 1, ly_dotop(c, 0, mma, 16)); /* a's second part */
    return;
  }
  case OP_MMA_WAIT: /* the accumulator(s) it ties */
    for (int i = 0; i < op->nres; i++) set_layout(p, op->res[i], lay(op->opnds[i]));
    return;
  case OP_SLICE: /* a register-tile window keeps the tile's (shape-agnostic) layout */
    if (r && is_tile(r)) set_layout(p, r, lay(op->opnds[0]));
    return;
  case OP_SMEM_LOAD:
    set_layout(p, r, default_for(p, r->type));
    return;
  case OP_TMEM_LOAD: /* tcgen05.ld 32x32b: thread t of warp k holds row 32k + t, all columns */
    set_layout(p, r, tmem_layout(p, r->type));
    return;
  case OP_TMEM_STORE:
    require(p, op, 1, tmem_layout(p, op->opnds[1]->type));
    return;
  case OP_TASKS:
    for (int i = 0; i < op->nregions; i++) assign_block(p, op->regions[i]);
    return;
  case OP_DOT: {
    int M = r->type->shape[0], N = r->type->shape[1];
    int wm = p->warps, wn = 1;
    while (wm > 1 && 16 * wm > M) wm /= 2;
    wn = p->warps / wm;
    while (wn > 1 && 8 * wn > N) wn /= 2;
    const Layout *mma = ly_mma(c, 2, wm, wn, 8);
    int kbits = ty_dtype_bits((DType)op->opnds[0]->type->elem.dt);
    require(p, op, 0, ly_dotop(c, 0, mma, kbits));
    require(p, op, 1, ly_dotop(c, 1, mma, kbits));
    require(p, op, 2, mma);
    set_layout(p, r, mma);
    (void)ilog2;
    return;
  }
  case OP_FOR: {
    TBlock *body = op->regions[0];
    for (int i = 0; i < op->nres; i++) {
      TValue *init = op->opnds[3 + i], *arg = body->args[1 + i];
      if (!is_tile(init)) continue;
      const Layout *l = forced(arg) ? forced(arg) : lay(init);
      require(p, op, 3 + i, l);
      set_layout(p, arg, l);
      set_layout(p, op->res[i], l);
    }
    assign_block(p, body);
    return;
  }
  case OP_WHILE: {
    TBlock *before = op->regions[0], *after = op->regions[1];
    for (int i = 0; i < op->nres; i++) {
      TValue *init = op->opnds[i];
      if (!is_tile(init)) continue;
      const Layout *l = forced(before->args[i]) ? forced(before->args[i]) : lay(init);
      require(p, op, i, l);
      set_layout(p, before->args[i], l);
      set_layout(p, after->args[i], l);
      set_layout(p, op->res[i], l);
    }
    assign_block(p, before);
    assign_block(p, after);
    return;
  }
  case OP_IF: {
    assign_block(p, op->regions[0]);
    assign_block(p, op->regions[1]);
    TOp *ty = op->regions[0]->last, *ey = op->regions[1]->last;
    for (int i = 0; i < op->nres; i++) {
      if (!is_tile(op->res[i])) continue;
      const Layout *l = lay(ty->opnds[i]);
      if (ey && ey->opc == OP_YIELD) require(p, ey, i, l);
      set_layout(p, op->res[i], l);
    }
    return;
  }
  case OP_YIELD: {
    TOp *parent = op->block->parent;
    if (!parent || parent->opc == OP_IF) return; /* if: handled by the parent */
    if (parent->opc == OP_FOR) {
      for (int i = 0; i < op->nopnds; i++) require(p, op, i, lay(parent->regions[0]->args[1 + i]));
    } else if (parent->opc == OP_WHILE) {
      for (int i = 0; i < op->nopnds; i++) require(p, op, i, lay(parent->regions[0]->args[i]));
    }
    return;
  }
  case OP_CONDITION: {
    TOp *parent = op->block->parent;
    for (int i = 1; i < op->nopnds; i++) require(p, op, i, lay(parent->regions[1]->args[i - 1]));
    return;
  }
  default:
    break;
  }
  if (ir_is_elementwise(op->opc) && r && is_tile(r)) {
    const Layout *l = pick(p, op);
    for (int i = 0; i < op->nopnds; i++) require(p, op, i, l);
    set_layout(p, r, l);
  }
}

static void assign_block(P *p, TBlock *b) {
  int saved = p->warps;
  if (b->warps) p->warps = b->warps; /* a task's tiles live on its warps */
  for (TOp *op = b->first; op;) {
    TOp *next = op->next;
    assign_op(p, op);
    op = next;
  }
  p->warps = saved;
}

/* Undo an assignment round: drop inserted conversions and free layouts. */
static void strip(TOp *op, void *ud) {
  P *p = ud;
  p->warps = ir_block_warps(op->block);
  if (op->opc == OP_CONVERT && (op->flags & OPF_INSERTED)) {
    ir_replace_uses(p->f->body, op->res[0], op->opnds[0]);
    ir_remove(op);
    return;
  }
  if (op->opc == OP_CONVERT) return; /* user-pinned */
  for (int i = 0; i < op->nres; i++)
    if (is_tile(op->res[i])) op->res[i]->type = ty_with_layout(p->c, op->res[i]->type, NULL);
  for (int r = 0; r < op->nregions; r++)
    for (int i = 0; i < op->regions[r]->nargs; i++) {
      TValue *a = op->regions[r]->args[i];
      if (is_tile(a)) a->type = ty_with_layout(p->c, a->type, NULL);
    }
}

/* After a round: a loop-carried tile whose body yields another layout takes
 * that layout (one conversion of the initial value outside the loop instead
 * of one per iteration). */
static void fix_loops(TOp *op, void *ud) {
  P *p = ud;
  p->warps = ir_block_warps(op->block);
  if (op->opc != OP_FOR && op->opc != OP_WHILE) return;
  TBlock *yb = op->opc == OP_FOR ? op->regions[0] : op->regions[1];
  TOp *y = yb->last;
  if (!y || y->opc != OP_YIELD) return;
  for (int i = 0; i < y->nopnds; i++) {
    TValue *v = y->opnds[i];
    if (!is_tile(v)) continue;
    if (v->def && v->def->opc == OP_CONVERT && (v->def->flags & OPF_INSERTED)) v = v->def->opnds[0];
    TValue *arg = op->opc == OP_FOR ? op->regions[0]->args[1 + i] : op->regions[0]->args[i];
    if (same(p, lay(v), lay(arg), arg->type)) continue;
    if (forced(arg)) continue; /* decided once: avoid ping-pong */
    arg->aux = (void *)lay(v);
    p->changed = true;
  }
}

/* A tile of pointers the loop carries and advances (Triton's `ptrs += BK`)
 * takes, from the start, the coalesced layout of the memory operation it
 * addresses in the body (directly, or through one ptr_add: the pipeline's
 * copies issued ahead): left to its initial value's layout, every
 * iteration would convert it, through shared memory. */
static void seed_loop_pointers(TOp *op, void *ud) {
  P *p = ud;
  if (op->opc != OP_FOR) return;
  p->warps = ir_block_warps(op->regions[0]);
  TBlock *body = op->regions[0];
  for (int i = 1; i < body->nargs; i++) {
    TValue *arg = body->args[i];
    if (!is_tile(arg) || arg->type->elem.dt != DT_PTR || forced(arg)) continue;
    for (TOp *u = body->first; u; u = u->next) {
      int pi = u->opc == OP_ASYNC_COPY ? 1 : (u->opc == OP_LOAD || u->opc == OP_STORE || u->opc == OP_ATOMIC_ADD) ? 0 : -1;
      if (pi < 0 || pi >= u->nopnds) continue;
      TValue *ptr = u->opnds[pi];
      TOp *d = ptr->def;
      if (ptr == arg || (d && d->opc == OP_PTR_ADD && d->opnds[0] == arg)) {
        arg->aux = (void *)coalesced(p, ptr);
        break;
      }
    }
  }
  p->warps = ir_block_warps(op->block);
}

/* ---- rematerialization ---- */

typedef struct Remat {
  TValue *from;
  const Layout *l;
  TValue *to;
  struct Remat *next;
} Remat;

static TValue *remat(P *p, TValue *v, const Layout *l, Remat **memo);

static TValue *remat_clone(P *p, TValue *v, const Layout *l, Remat **memo) {
  TOp *d = v->def;
  if (d->opc == OP_CONVERT) return remat(p, d->opnds[0], l, memo);
  TValue *ops[8];
  for (int i = 0; i < d->nopnds && i < 8; i++) {
    TValue *o = d->opnds[i];
    const Layout *ol = l;
    if (d->opc == OP_EXPAND_DIMS) ol = ly_slice(p->c, d->axis, l);
    ops[i] = is_tile(o) ? remat(p, o, ol, memo) : o;
    if (!ops[i]) return NULL;
  }
  TOp *n = ir_op(p->c, d->opc, d->loc, d->nopnds, ops, 1, (Type *[]){ty_with_layout(p->c, v->type, l)});
  n->ival = d->ival;
  n->ival2 = d->ival2;
  n->fval = d->fval;
  n->axis = d->axis;
  n->pred = d->pred;
  n->to = d->to;
  n->flags = d->flags;
  memcpy(n->shape, d->shape, sizeof n->shape);
  n->res[0]->ax = v->ax;
  n->res[0]->name = v->name;
  ir_insert_after(d, n);
  return n->res[0];
}

static TValue *remat(P *p, TValue *v, const Layout *l, Remat **memo) {
  if (!is_tile(v)) return v;
  if (same(p, lay(v), l, v->type)) return v;
  for (Remat *m = *memo; m; m = m->next)
    if (m->from == v && same(p, m->l, l, v->type)) return m->to;
  TValue *r = remat_clone(p, v, l, memo);
  if (!r) return NULL;
  Remat *m = ar_alloc(&p->c->arena, sizeof *m);
  *m = (Remat){v, l, r, *memo};
  *memo = m;
  return r;
}

typedef struct RematCtx {
  P *p;
  Remat *memo;
} RematCtx;

static void remat_op(TOp *op, void *ud) {
  RematCtx *rc = ud;
  P *p = rc->p;
  p->warps = ir_block_warps(op->block);
  if (op->opc != OP_CONVERT) return;
  TValue *src = op->opnds[0];
  if (!is_tile(src) || !src->def || !is_cheap(src, 0)) return;
  TValue *n = remat(p, src, lay(op->res[0]), &rc->memo);
  if (!n) return;
  ir_replace_uses(p->f->body, op->res[0], n);
  ir_remove(op);
}

/* A conversion to the layout its source already has, or of a conversion. */
static void fold_converts(TOp *op, void *ud) {
  P *p = ud;
  p->warps = ir_block_warps(op->block);
  if (op->opc != OP_CONVERT) return;
  TValue *src = op->opnds[0];
  while (src->def && src->def->opc == OP_CONVERT) src = src->def->opnds[0];
  op->opnds[0] = src;
  if (same(p, lay(src), lay(op->res[0]), src->type)) {
    ir_replace_uses(p->f->body, op->res[0], src);
    ir_remove(op);
  }
}

/* convert_layout(smem_load(v)): load v in the wanted layout instead (right
 * where the first load is, so a conversion inside a loop becomes a load
 * before it); each thread reads its own elements, with no round trip
 * through scratch shared memory (a [64, 128] bf16 Q as wgmma A fragments
 * needed 34 KB of it). The first load goes when nothing else uses it. */
static void load_in_layout(TOp *op, void *ud) {
  P *p = ud;
  if (op->opc != OP_CONVERT) return;
  TOp *ld = op->opnds[0]->def;
  if (!ld || ld->opc != OP_SMEM_LOAD) return;
  TOp *n = ir_op(p->c, OP_SMEM_LOAD, ld->loc, 1, ld->opnds, 1, (Type *[]){op->res[0]->type});
  ir_insert_after(ld, n);
  ir_replace_uses(p->f->body, op->res[0], n->res[0]);
  ir_remove(op);
}

/* smem_store(view, trans(x)): store x with its coordinates swapped, from
 * whatever layout x has (a wgmma accumulator's dS for dQ = dS K), instead of
 * a round trip through scratch shared memory to a blocked layout that
 * trans() can relabel. Runs before layouts are assigned; the trans, if
 * unused otherwise, is dead code. */
static void fuse_trans_store(TOp *op, void *ud) {
  (void)ud;
  if (op->opc != OP_SMEM_STORE || (op->flags & OPF_TRANS)) return;
  TOp *t = op->opnds[1]->def;
  if (!t || t->opc != OP_TRANS || t->opnds[0]->type->rank != 2) return;
  op->opnds[1] = t->opnds[0];
  op->flags |= OPF_TRANS;
}

/* convert_layout(broadcast(x)) -> broadcast(convert_layout(x)): convert the
 * small tile before it is stretched (a row of 64 LSE values broadcast over
 * a [64, 64] wgmma accumulator), so that no [64, 64] tile goes through
 * scratch shared memory; load_in_layout then folds an smem_load source. */
static void sink_broadcast_converts(TOp *op, void *ud) {
  P *p = ud;
  p->warps = ir_block_warps(op->block);
  if (op->opc != OP_CONVERT) return;
  TOp *bc = op->opnds[0]->def;
  if (!bc || bc->opc != OP_BROADCAST || !is_tile(bc->opnds[0])) return;
  TValue *x = bc->opnds[0];
  const Layout *l = lay(op->res[0]);
  LinLayout lin;
  const char *why;
  if (!ly_linear(l, x->type->rank, x->type->shape, p->warps, &lin, &why)) return;
  TValue *xc = x;
  if (!same(p, lay(x), l, x->type)) {
    TOp *cv = ir_op(p->c, OP_CONVERT, op->loc, 1, &x, 1, (Type *[]){ty_with_layout(p->c, x->type, l)});
    cv->flags = OPF_INSERTED;
    cv->res[0]->ax = x->ax;
    ir_insert_before(op, cv);
    xc = cv->res[0];
  }
  TOp *nb = ir_op(p->c, OP_BROADCAST, bc->loc, 1, &xc, 1, (Type *[]){op->res[0]->type});
  memcpy(nb->shape, bc->shape, sizeof nb->shape);
  nb->res[0]->ax = op->res[0]->ax;
  ir_insert_before(op, nb);
  ir_replace_uses(p->f->body, op->res[0], nb->res[0]);
  ir_remove(op);
}

/* ---- dead code ---- */

static void count_uses(TOp *op, void *ud) {
  (void)ud;
  for (int i = 0; i < op->nopnds; i++) op->opnds[i]->uses++;
}

static void zero_uses(TOp *op, void *ud) {
  (void)ud;
  for (int i = 0; i < op->nres; i++) op->res[i]->uses = 0;
  for (int r = 0; r < op->nregions; r++)
    for (int i = 0; i < op->regions[r]->nargs; i++) op->regions[r]->args[i]->uses = 0;
}

static bool has_effects(const TOp *op) {
  switch (op->opc) {
  case OP_STORE: case OP_ATOMIC_ADD: case OP_FOR: case OP_IF: case OP_WHILE: case OP_CONDITION: case OP_YIELD:
  case OP_RETURN: case OP_SMEM_STORE: case OP_SMEM_WRITE: case OP_BAR_EXPECT: case OP_BAR_ARRIVE: case OP_BAR_WAIT: case OP_NAMED_BAR:
  case OP_FENCE_ASYNC: case OP_TMA_LOAD: case OP_TMA_STORE: case OP_TMA_STORE_WAIT: case OP_DSMEM_COPY: case OP_BULK_STORE_ADD: case OP_BULK_LOAD:
  case OP_MMA_ASYNC:
  case OP_MMA_COMMIT: case OP_MMA_WAIT: case OP_TASKS: case OP_BAR_ALLOC: case OP_SEM_WAIT: case OP_SEM_SIGNAL: case OP_CLUSTER_SYNC:
  case OP_TMEM_ALLOC: case OP_TMEM_STORE: case OP_TC_MMA: case OP_TC_COMMIT: case OP_PRINT: case OP_DEVICE_ASSERT:
  case OP_ASYNC_COPY: case OP_ASYNC_COMMIT: case OP_ASYNC_WAIT:
    return true;
  default:
    return false;
  }
}

static void dce_op(TOp *op, void *ud) {
  P *p = ud;
  if (has_effects(op) || op->nres == 0) return;
  for (int i = 0; i < op->nres; i++)
    if (op->res[i]->uses) return;
  for (int i = 0; i < op->nopnds; i++) op->opnds[i]->uses--;
  ir_remove(op);
  p->changed = true;
}

static void dce(P *p) {
  ir_walk(p->f->body, zero_uses, NULL);
  ir_walk(p->f->body, count_uses, NULL);
  do {
    p->changed = false;
    /* walk backwards by repeating: users are visited before their operands
     * only across iterations, which converge quickly */
    ir_walk(p->f->body, dce_op, p);
  } while (p->changed);
}

/* ---- verification ---- */

static void verify_op(TOp *op, void *ud) {
  P *p = ud;
  p->warps = ir_block_warps(op->block);
  for (int i = 0; i < op->nres; i++) {
    TValue *v = op->res[i];
    if (!is_tile(v)) continue;
    if (p->warps & (p->warps - 1)) {
      dg_error(p->c, op->loc, "register tiles are spread over a power-of-two number of warps, but this code runs on "
                              "%d warps (move it into a task)",
               p->warps);
      return;
    }
    LinLayout lin;
    const char *why = "no layout";
    if (!lay(v) || !ly_linear(lay(v), v->type->rank, v->type->shape, p->warps, &lin, &why)) {
      dg_ice(p->c, op->loc, "%s result %s has no valid layout (%s)", ir_opname(op->opc), ty_str(p->c, v->type), why);
      return;
    }
  }
}

/* Shared memory: the TMEM address word (kernels that use tensor memory),
 * mbarriers (8 bytes each), then the buffers, each
 * aligned to 1024 bytes (the 128-byte swizzle repeats every 1024 bytes and
 * TMA and wgmma address it from an aligned base). Scratch for layout
 * conversions goes after them (lowering). */
#define SMEM_LIMIT (227 * 1024)

typedef struct Plan {
  Ctx *c;
  int64_t off;
  int phase; /* 0: mbarriers, 1: small unswizzled buffers, 2: the rest, 3: aliases (OPF_ALIAS) */
} Plan;

enum { OPF_PLACED = 1 << 20 }; /* plan_op: an smem_alloc already given its offset */

static void plan_op(TOp *op, void *ud) {
  Plan *pl = ud;
  if (pl->phase == 0 && op->opc == OP_BAR_ALLOC) {
    op->ival = pl->off;
    pl->off += 8 * op->res[0]->type->nbuf;
  } else if (pl->phase == 1 && op->opc == OP_SMEM_ALLOC && !op->res[0]->type->swizzle && !(op->flags & OPF_ALIAS)) {
    /* a small unswizzled buffer (scalars a producer hands its consumers)
     * goes in the gap between the mbarriers and the first 1024-byte
     * boundary, where it costs nothing; 128-byte aligned slots, as a TMA
     * box in shared memory needs (a row of 64 LSE values) */
    int64_t at = (pl->off + 127) & ~(int64_t)127;
    int64_t bytes = ((op->ival2 + 127) & ~(int64_t)127) * op->res[0]->type->nbuf;
    if (at + bytes <= 1024) {
      op->ival = at;
      op->flags |= OPF_PLACED;
      pl->off = at + bytes;
    }
  } else if (pl->phase == 3 && op->opc == OP_SMEM_ALLOC && (op->flags & OPF_ALIAS)) {
    op->ival = op->opnds[0]->def->ival; /* on another allocation's bytes (pipeline.c: C staged in a dead ring) */
  } else if (pl->phase == 2 && op->opc == OP_SMEM_ALLOC && !(op->flags & (OPF_PLACED | OPF_ALIAS))) {
    pl->off = (pl->off + 1023) & ~(int64_t)1023;
    op->ival = pl->off;
    int64_t slot = op->res[0]->type->swizzle ? (op->ival2 + 1023) & ~(int64_t)1023 : (op->ival2 + 127) & ~(int64_t)127;
    pl->off += slot * op->res[0]->type->nbuf; /* lower_hw.c slot_stride() */
  }
}

static void plan_smem(Ctx *c, TFunc *f) {
  Plan pl = {c, 0, 0};
  if (f->tmem_cols) { /* the word tcgen05.alloc writes the TMEM address to (lower_sm100.c), before the mbarriers */
    f->tmem_slot = 0;
    pl.off = 8;
  }
  for (pl.phase = 0; pl.phase < 4; pl.phase++) ir_walk(f->body, plan_op, &pl);
  st_note_allocs(c, f); /* for the compile report: dce drops an unused buffer, not its bytes */
  f->smem_static = (int)((pl.off + 127) & ~(int64_t)127);
  if (pl.off > SMEM_LIMIT)
    dg_error(c, f->loc, "kernel '%s' allocates %lld bytes of shared memory; an SM gives a CTA at most %d (227 KB)",
             f->name, (long long)pl.off, SMEM_LIMIT);
}

/* barrier_arrive is one arrival by one elected thread: stores to shared
 * (or tensor) memory by the other threads of the group must be ordered before it by a
 * task_barrier()/named_barrier(), and so must their reads of a buffer the
 * arrival frees. A store or read that reaches an arrival with no barrier on
 * some path between them is a race the compiler can see. The check follows
 * the structured control flow: what is pending at the end of either arm of
 * an if reaches the code after it, and what is pending at the end of a loop
 * body reaches the start of the next iteration and the code after the loop.
 *
 * What is pending is one of nothing < an smem_read < an smem_store (the
 * worse to arrive after); where paths meet it is the larger. A store sets
 * it, a read raises it to at least a read, a barrier and an arrival (which
 * reports it) clear it, other ops pass it on; so what a block leaves is a
 * Gen: what it sets, joined with what came in unless every path clears
 * that. A loop's head then needs no iteration to reach its fixed point: it
 * is what comes in joined with what one pass of the body sets. */
typedef struct Pending {
  int kind;      /* 0, OP_SMEM_READ or OP_SMEM_STORE */
  const TOp *at; /* the store or read, for the note */
  bool back;     /* it reached the loop's head over the back edge */
} Pending;

typedef struct Gen {
  Pending set; /* what the block leaves pending from nothing */
  bool pass;   /* what comes in gets through (no barrier on some path) */
} Gen;

static int pending_rank(int kind) { return kind == OP_SMEM_STORE ? 2 : kind == OP_SMEM_READ ? 1 : 0; }

/* Where two paths meet: the worse; a tie keeps a. */
static Pending pending_join(Pending a, Pending b) { return pending_rank(b.kind) > pending_rank(a.kind) ? b : a; }

/* What follows `in` after a block of effect g. */
static Pending gen_apply(Gen g, Pending in) { return g.pass ? pending_join(g.set, in) : g.set; }

/* a, then b */
static Gen gen_then(Gen a, Gen b) { return (Gen){gen_apply(b, a.set), a.pass && b.pass}; }

static Gen arrive_gen(TBlock *b);

/* What one pass of a loop, from its head back to it, leaves pending from
 * nothing: the body of a for loop; the condition (region 0, the "before"
 * block), then the body, of a while loop, whose condition's effect goes to
 * *cond (if not NULL). Each region is walked once, so nested loops cost
 * time linear in their size. */
static Pending loop_set(TOp *op, Gen *cond) {
  if (op->opc == OP_FOR) return arrive_gen(op->regions[0]).set;
  Gen c = arrive_gen(op->regions[0]);
  if (cond) *cond = c;
  return gen_then(c, arrive_gen(op->regions[1])).set;
}

static Gen op_gen(TOp *op) {
  switch (op->opc) {
  case OP_SMEM_STORE:
  case OP_TMEM_STORE: return (Gen){{OP_SMEM_STORE, op, false}, false}; /* a store; tmem's likewise */
  case OP_SMEM_READ:
  case OP_TMEM_LOAD: return (Gen){{OP_SMEM_READ, op, false}, true}; /* a read the arrival may free */
  case OP_NAMED_BAR: return (Gen){{0}, op->pred != 0}; /* bar.arrive (pred) orders nothing for this thread */
  case OP_BAR_ARRIVE: return (Gen){{0}, false};
  case OP_MMA_WAIT: return (Gen){{0}, !op->pred}; /* release = ...: an arrival */
  case OP_IF: {
    Gen t = arrive_gen(op->regions[0]), e = arrive_gen(op->regions[1]);
    return (Gen){pending_join(t.set, e.set), t.pass || e.pass};
  }
  case OP_FOR: return (Gen){loop_set(op, NULL), true}; /* it exits at its head */
  case OP_WHILE: { /* it exits after its condition */
    Gen cond;
    Pending head = loop_set(op, &cond);
    return (Gen){gen_apply(cond, head), cond.pass};
  }
  case OP_TASKS: return (Gen){{0}, true}; /* other warps */
  default: {
    Gen g = {{0}, true}; /* no other op has regions today; should one, each may run */
    for (int r = 0; r < op->nregions; r++) {
      Gen x = arrive_gen(op->regions[r]);
      g.set = pending_join(g.set, x.set);
    }
    return g;
  }
  }
}

static Gen arrive_gen(TBlock *b) {
  Gen g = {{0}, true};
  for (TOp *op = b->first; op; op = op->next) g = gen_then(g, op_gen(op));
  return g;
}

/* Walk block b entered with `in`, report the arrivals something reaches,
 * and return what is pending at its end. */
static Pending check_arrives(Ctx *c, TBlock *b, Pending in) {
  Pending p = in;
  for (TOp *op = b->first; op; op = op->next) {
    switch (op->opc) {
    case OP_IF: {
      Pending t = check_arrives(c, op->regions[0], p);
      p = pending_join(t, check_arrives(c, op->regions[1], p));
      break;
    }
    case OP_FOR:
    case OP_WHILE: {
      Pending g = loop_set(op, NULL);
      bool back = pending_rank(g.kind) > pending_rank(p.kind);
      Pending head = back ? (Pending){g.kind, g.at, true} : p;
      if (op->opc == OP_FOR) {
        check_arrives(c, op->regions[0], head);
        p = back ? g : p;
      } else {
        p = check_arrives(c, op->regions[0], head);
        check_arrives(c, op->regions[1], p);
        if (back) p.back = false; /* after the loop: the last iteration's, not the previous one's */
      }
      break;
    }
    case OP_TASKS: /* other warps: each task starts with nothing pending */
      for (int r = 0; r < op->nregions; r++) check_arrives(c, op->regions[r], (Pending){0});
      break;
    case OP_BAR_ARRIVE:
    case OP_MMA_WAIT:
      /* barrier_arrive(..., each = true): every thread releases its own accesses */
      if (p.kind && (op->opc == OP_BAR_ARRIVE ? !op->ival : op->pred != 0)) {
        const char *what = op->opc == OP_BAR_ARRIVE ? "barrier_arrive" : "mma_wait(..., release = ...)";
        int before = c->nerrors;
        if (p.kind == OP_SMEM_STORE)
          dg_error(c, op->loc, "%s after %s without task_barrier(): only one elected thread "
                               "arrives, so the other threads' stores are not ordered before the arrival", what,
                   ir_opname(p.at->opc));
        else
          dg_error(c, op->loc, "%s after %s without task_barrier(): only one elected thread "
                               "arrives, so the other threads may still be reading when the buffer is released", what,
                   ir_opname(p.at->opc));
        if (c->nerrors > before) {
          dg_note(c, p.at->loc, "the %s%s is here", ir_opname(p.at->opc), p.back ? " of the previous iteration" : "");
          if (op->opc == OP_BAR_ARRIVE && (p.at->opc == OP_SMEM_READ || p.at->opc == OP_SMEM_WRITE ||
                                           p.at->opc == OP_SMEM_STORE || p.at->opc == OP_SMEM_LOAD))
            dg_note(c, op->loc, "or let every thread arrive, each after its own accesses: barrier_arrive(..., "
                                "each = true), with the mbarrier's arrive count covering them all");
        }
      }
      p = gen_apply(op_gen(op), p);
      break;
    case OP_TC_MMA:
      /* tcgen05.mma is one elected thread's too: the other threads' stores
       * (of its operands) and loads of tensor memory (its accumulator, which
       * it overwrites) must be ordered before it */
      if (p.kind == OP_SMEM_STORE || (p.kind && p.at->opc == OP_TMEM_LOAD)) {
        int before = c->nerrors;
        if (p.kind == OP_SMEM_STORE)
          dg_error(c, op->loc, "mma_async after %s without task_barrier(): one elected thread issues the MMA, so "
                               "the other threads' stores are not ordered before it", ir_opname(p.at->opc));
        else
          dg_error(c, op->loc, "mma_async after tmem_load without task_barrier(): one elected thread issues the MMA, "
                               "so the other threads may still be reading tensor memory it writes");
        if (c->nerrors > before) {
          dg_note(c, p.at->loc, "the %s%s is here", ir_opname(p.at->opc), p.back ? " of the previous iteration" : "");
          if (op->opc == OP_BAR_ARRIVE && (p.at->opc == OP_SMEM_READ || p.at->opc == OP_SMEM_WRITE ||
                                           p.at->opc == OP_SMEM_STORE || p.at->opc == OP_SMEM_LOAD))
            dg_note(c, op->loc, "or let every thread arrive, each after its own accesses: barrier_arrive(..., "
                                "each = true), with the mbarrier's arrive count covering them all");
        }
        p = (Pending){0};
      }
      break;
    default:
      for (int r = 0; r < op->nregions; r++) p = pending_join(p, check_arrives(c, op->regions[r], p));
      if (!op->nregions) p = gen_apply(op_gen(op), p);
      break;
    }
  }
  return p;
}

/* Whether v is an mma_async result not yet through mma_wait: made by
 * mma_async, or carried by a loop / an if whose yielded (or initial) value
 * is. Depth-limited: loop-carried values refer to themselves. */
static bool in_flight(const TValue *v, int depth) {
  if (depth > 8 || !v) return false;
  const TOp *d = v->def;
  if (d) {
    if (d->opc == OP_MMA_ASYNC) return true;
    if (d->opc == OP_FOR) {
      const TOp *y = d->regions[0]->last;
      return (y && y->opc == OP_YIELD && v->index < y->nopnds && in_flight(y->opnds[v->index], depth + 1)) ||
             (3 + v->index < d->nopnds && in_flight(d->opnds[3 + v->index], depth + 1));
    }
    if (d->opc == OP_IF) {
      for (int r = 0; r < d->nregions; r++) {
        const TOp *y = d->regions[r]->last;
        if (y && y->opc == OP_YIELD && v->index < y->nopnds && in_flight(y->opnds[v->index], depth + 1)) return true;
      }
    }
    return false;
  }
  const TBlock *b = v->block;
  const TOp *p = b ? b->parent : NULL;
  if (p && p->opc == OP_FOR && b == p->regions[0] && v->index >= 1) {
    int k = v->index - 1;
    const TOp *y = b->last;
    return (3 + k < p->nopnds && in_flight(p->opnds[3 + k], depth + 1)) ||
           (y && y->opc == OP_YIELD && k < y->nopnds && in_flight(y->opnds[k], depth + 1));
  }
  return false;
}

/* An mma_async result is in flight until mma_wait: reading it is a race. */
static void check_wgmma_reads(TOp *op, void *ud) {
  Ctx *c = ud;
  if (op->opc == OP_MMA_WAIT && op->ival2) { /* after = x: x is read before the wait */
    TValue *x = op->opnds[op->ival2 - 1];
    if (in_flight(x, 0))
      dg_error(c, op->loc, "after = names the accumulator of an mma_async that may still be running; it is read "
                           "before this wait");
    return;
  }
  if (op->opc == OP_MMA_ASYNC || op->opc == OP_MMA_WAIT || op->opc == OP_YIELD || op->opc == OP_FOR ||
      op->opc == OP_CONDITION || op->opc == OP_WHILE)
    return;
  for (int i = 0; i < op->nopnds; i++)
    if (in_flight(op->opnds[i], 0)) {
      dg_error(c, op->loc, "this reads the accumulator of an mma_async that may still be running; wait for it "
                           "first: acc = mma_wait(0, acc)");
      return;
    }
}

bool pass_run(Ctx *c, TModule *m) {
  for (int k = 0; k < m->kernels.len; k++) {
    TFunc *f = m->kernels.data[k];
    P p = {.c = c, .f = f, .warps = f->warps};
    ax_analyze(c, f);
    if (!pl_check_stages(c, f)) return false;
    if (!pm_run(c, f)) { /* loops of two to four dots, else one dot */
      if (c->sm >= 100) pb_run(c, f);
      else pl_run(c, f);
    }
    if (c->nerrors) return false;
    hm_run(c, f); /* accumulators the registers cannot hold, to shared memory (home.c) */
    pr_run(c, f); /* a dot-less loop's loads through rings, with stages(S) (pipeline_rows.c) */
    if (c->nerrors) return false;
    ax_analyze(c, f); /* again, for what the pipeline made */
    plan_smem(c, f);
    check_arrives(c, f->body, (Pending){0});
    ir_walk(f->body, check_wgmma_reads, c);
    ir_walk(f->body, fuse_trans_store, &p);
    ir_walk(f->body, seed_loop_pointers, &p);
    for (int round = 0; round < 4; round++) {
      assign_block(&p, f->body);
      p.changed = false;
      ir_walk(f->body, fix_loops, &p);
      if (!p.changed) break;
      ir_walk(f->body, strip, &p);
    }
    RematCtx rc = {&p, NULL};
    ir_walk(f->body, remat_op, &rc);
    ir_walk(f->body, fold_converts, &p);
    ir_walk(f->body, sink_broadcast_converts, &p);
    ir_walk(f->body, fold_converts, &p);
    ir_walk(f->body, load_in_layout, &p);
    dce(&p);
    hm_check(c, f); /* after dce: the homed loads left are the used ones */
    ir_walk(f->body, verify_op, &p);
    if (c->nerrors) return false;
  }
  return true;
}

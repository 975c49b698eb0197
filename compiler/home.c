/* home.c - loop accumulators homed in shared memory (prefix hm_).
 *
 * A loop over rows that sums tiles as wide as the row (layer norm's
 * backward: dw += dy * xhat, db += dy, over rows of 16384) carries them in
 * registers, beside the tiles each iteration loads. When those together
 * need more registers a thread than the kernel's threads may have, ptxas
 * spills, and the author's way out was a second kernel that reads the
 * inputs again. Here the compiler moves such accumulators to shared
 * memory instead: the loop no longer carries them; each iteration loads
 * the thread's part, adds, and stores it back, so only one iteration's
 * worth of it is ever in registers.
 *
 *   before the loop:  home = smem_alloc; smem_store(home, init); barrier
 *   in the body:      acc = smem_load(home) ... smem_store(home, acc')
 *   after the loop:   barrier; result = smem_load(home)
 *
 * In the body each thread reads back the elements it wrote, provided the
 * load and the store use one layout; layouts are chosen later (passes.c),
 * so hm_check runs after them and puts barriers around the body's loads
 * and stores where the layouts differ. The barriers before and after the
 * loop cover the initial value's layout and the result's.
 *
 * Which loops: a loop (for) outside tasks with no dot and no explicit
 * shared-memory or barrier op in it, whose tiles -- what it carries, what
 * its body loads (counted as f32, as it is usually computed on) and the
 * tiles from before it that the body reads -- need more 32-bit registers a
 * thread than the kernel has (its maxnreg,
 * else the register file over its threads, at most 255). Which values: a
 * carried tile of at least 4 registers a thread that the body updates from
 * itself through elementwise ops (an accumulator; a tile loaded a row
 * ahead is not one). What was done goes to f->notes (--emit=tir). */
#include "tilec_int.h"

/* HM_MAX_BYTES: the most homed values may take of a CTA's 227 KB of
 * shared memory (hm_run leaves room for the kernel's own buffers and the
 * scratch of layout conversions and reductions, planned later) */
enum { HM_MIN_REGS = 4, HM_MAX_BYTES = 160 * 1024 };

static bool is_tile(const TValue *v) { return v->type->kind == TY_TILE; }

static int64_t numel(const Type *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->shape[i];
  return n;
}

/* 32-bit registers a thread for a tile of t spread over `threads` threads,
 * at `bytes` an element. */
static int regs_of(const Type *t, int threads, int bytes) {
  return (int)((numel(t) * bytes + 4 * (int64_t)threads - 1) / (4 * (int64_t)threads));
}

typedef struct Scan {
  TOp *loop;
  int load_regs, in_regs, threads;
  bool blocked; /* a dot, tasks, or explicit shared memory: left alone */
  const TValue *seen[64];
  int nseen;
} Scan;

/* Whether op is inside loop (in one of its regions, at any depth). */
static bool inside(const TOp *op, const TOp *loop) {
  for (const TBlock *b = op->block; b && b->parent; b = b->parent->block)
    if (b->parent == loop) return true;
  return false;
}

static void scan_op(TOp *op, void *ud) {
  Scan *s = ud;
  if (op->opc == OP_DOT) s->blocked = true;
  if (op->opc >= OP_SMEM_ALLOC && op->opc != OP_PRINT && op->opc != OP_DEVICE_ASSERT && op->opc != OP_CLOCK)
    s->blocked = true;
  if (op->opc == OP_LOAD && op->nres && is_tile(op->res[0])) s->load_regs += regs_of(op->res[0]->type, s->threads, 4);
  /* tiles from before the loop that the body reads (w, the column mask):
   * live through every iteration, at their own width */
  for (int i = 0; i < op->nopnds; i++) {
    const TValue *v = op->opnds[i];
    if (!is_tile(v) || !v->def || inside(v->def, s->loop) || v->def == s->loop) continue;
    if (v->def->opc == OP_SPLAT || v->def->opc == OP_CONST) continue;
    bool dup = false;
    for (int j = 0; j < s->nseen; j++) dup |= s->seen[j] == v;
    if (dup || s->nseen == 64) continue;
    s->seen[s->nseen++] = v;
    int eb = v->type->elem.dt == DT_BOOL ? 1 : ty_dtype_bytes((DType)v->type->elem.dt);
    s->in_regs += regs_of(v->type, s->threads, eb);
  }
}

/* Whether v is computed from arg through elementwise ops of this block
 * (depth-limited). */
static bool reaches(const TValue *v, const TValue *arg, const TBlock *b, int depth) {
  if (v == arg) return true;
  if (!v->def || v->def->block != b || depth > 16) return false;
  Opcode o = v->def->opc;
  if (!ir_is_elementwise(o) && o != OP_CAST && o != OP_CONVERT && o != OP_SELECT && o != OP_FMA) return false;
  for (int i = 0; i < v->def->nopnds; i++)
    if (reaches(v->def->opnds[i], arg, b, depth + 1)) return true;
  return false;
}

/* Removes carried value k of loop op (its init, body argument, yielded
 * value and result); the caller has replaced their uses. */
static void drop_carried(TOp *op, int k) {
  TBlock *body = op->regions[0];
  TOp *y = body->last;
  for (int i = 3 + k; i + 1 < op->nopnds; i++) op->opnds[i] = op->opnds[i + 1];
  op->nopnds--;
  for (int i = 1 + k; i + 1 < body->nargs; i++) body->args[i] = body->args[i + 1], body->args[i]->index = i;
  body->nargs--;
  for (int i = k; i + 1 < y->nopnds; i++) y->opnds[i] = y->opnds[i + 1];
  y->nopnds--;
  for (int i = k; i + 1 < op->nres; i++) op->res[i] = op->res[i + 1], op->res[i]->index = i;
  op->nres--;
}

static TOp *barrier(Ctx *c, Loc loc) { return ir_op(c, OP_NAMED_BAR, loc, 0, NULL, 0, NULL); }

typedef struct Use {
  const TValue *v;
  bool found;
} Use;

static void find_use(TOp *op, void *ud) {
  Use *u = ud;
  for (int i = 0; i < op->nopnds; i++)
    if (op->opnds[i] == u->v) u->found = true;
}

/* Whether op or an op of its regions uses v. */
static bool uses(TOp *op, const TValue *v) {
  Use u = {v, false};
  find_use(op, &u);
  for (int r = 0; r < op->nregions && !u.found; r++) ir_walk(op->regions[r], find_use, &u);
  return u.found;
}

static bool is_barrier(const TOp *op) { return op && op->opc == OP_NAMED_BAR && op->ival == 0 && !op->nopnds && !op->pred; }

static void home_one(Ctx *c, TFunc *f, TOp *op, int k, int regs, int need, int have) {
  TBlock *body = op->regions[0];
  TValue *arg = body->args[1 + k], *init = op->opnds[3 + k], *res = op->res[k];
  TOp *y = body->last;
  TValue *out = y->opnds[k];
  const Type *t = arg->type;
  int n = (int)numel(t), eb = ty_dtype_bytes((DType)t->elem.dt);
  Type *vt = ty_tile(c, t->elem, 2, (int[]){1, n});
  vt->kind = TY_SMEM;
  vt->brows = 1;
  vt->nbuf = 1;
  TOp *al = ir_op(c, OP_SMEM_ALLOC, op->loc, 0, NULL, 1, &vt);
  al->ival2 = (int64_t)n * eb;
  al->flags |= OPF_HOME;
  TValue *home = al->res[0];
  home->name = arg->name;
  /* one barrier between the initial stores and the loop, one between the
   * loop and the loads after it, however many values are homed */
  TOp *at = is_barrier(op->prev) ? op->prev : op;
  ir_insert_before(at, al);
  ir_insert_before(at, ir_op(c, OP_SMEM_STORE, op->loc, 2, (TValue *[]){home, init}, 0, NULL));
  if (at == op) ir_insert_before(op, barrier(c, op->loc));
  TOp *ld = ir_op(c, OP_SMEM_LOAD, op->loc, 1, &home, 1, (Type *[]){(Type *)t});
  if (body->first) ir_insert_before(body->first, ld);
  else ir_append(body, ld);
  ir_replace_uses(body, arg, ld->res[0]);
  /* loaded where first used, not at the top of the body: live in registers
   * only from there to the store */
  for (TOp *u = ld->next; u; u = u->next)
    if (uses(u, ld->res[0])) {
      ir_remove(ld);
      ir_insert_before(u, ld);
      break;
    }
  ir_insert_before(y, ir_op(c, OP_SMEM_STORE, op->loc, 2, (TValue *[]){home, out}, 0, NULL));
  TOp *after = ir_op(c, OP_SMEM_LOAD, op->loc, 1, &home, 1, (Type *[]){(Type *)res->type});
  if (!is_barrier(op->next)) ir_insert_after(op, barrier(c, op->loc));
  ir_insert_after(op->next, after);
  /* the result's uses: everything after the loop in its block, nested
   * regions and the block's yield included */
  for (TOp *u = after->next; u; u = u->next) {
    for (int i = 0; i < u->nopnds; i++)
      if (u->opnds[i] == res) u->opnds[i] = after->res[0];
    for (int r = 0; r < u->nregions; r++) ir_replace_uses(u->regions[r], res, after->res[0]);
  }
  vec_push(&c->arena, &f->notes,
           ar_printf(&c->arena,
                     "home: the loop at %d:%d keeps '%s' (%s, %d registers a thread) in shared memory, %d bytes: "
                     "its tiles need about %d registers a thread of %d",
                     op->loc.line, op->loc.col, arg->name ? arg->name : "?", ty_str(c, t), regs, n * eb, need, have));
  drop_carried(op, k);
}

static void home_loop(Ctx *c, TFunc *f, TOp *op, int threads, int have, int64_t *left) {
  TBlock *body = op->regions[0];
  TOp *y = body->last;
  if (!y || y->opc != OP_YIELD) return;
  Scan s = {.loop = op, .threads = threads};
  ir_walk(body, scan_op, &s);
  if (s.blocked) return;
  int carried = 0; /* tiles the body changes (one it passes through unchanged is not live in it) */
  for (int k = 0; k + 1 < body->nargs; k++)
    if (is_tile(body->args[1 + k]) && y->opnds[k] != body->args[1 + k])
      carried += regs_of(body->args[1 + k]->type, threads, ty_dtype_bytes((DType)body->args[1 + k]->type->elem.dt));
  int need = carried + s.load_regs + s.in_regs;
  if (need <= have) return;
  for (int k = body->nargs - 2; k >= 0; k--) { /* from the last: drop_carried shifts those after k */
    TValue *arg = body->args[1 + k];
    if (!is_tile(arg) || arg->type->rank > 2) continue;
    int regs = regs_of(arg->type, threads, ty_dtype_bytes((DType)arg->type->elem.dt));
    if (regs < HM_MIN_REGS || y->opnds[k] == arg || !reaches(y->opnds[k], arg, body, 0)) continue;
    int64_t bytes = numel(arg->type) * ty_dtype_bytes((DType)arg->type->elem.dt);
    if (bytes > *left) continue;
    *left -= bytes;
    home_one(c, f, op, k, regs, need, have);
  }
}

static void visit(Ctx *c, TFunc *f, TBlock *b, int threads, int have, int64_t *left) {
  for (TOp *op = b->first; op; op = op->next) {
    if (op->opc == OP_TASKS) continue;
    for (int r = 0; r < op->nregions; r++) visit(c, f, op->regions[r], threads, have, left);
    if (op->opc == OP_FOR) home_loop(c, f, op, threads, have, left);
  }
}

typedef struct Smem {
  int64_t used, widest; /* bytes of the kernel's buffers; of its widest register tile */
} Smem;

static void count_smem(TOp *op, void *ud) {
  Smem *m = ud;
  if (op->opc == OP_SMEM_ALLOC && !(op->flags & OPF_ALIAS))
    m->used += op->ival2 * (op->res[0]->type->nbuf ? op->res[0]->type->nbuf : 1);
  /* (pointer and 64-bit index tiles are recomputed where used, not converted) */
  for (int i = 0; i < op->nres; i++) {
    const Type *t = op->res[i]->type;
    int eb = is_tile(op->res[i]) && t->elem.dt != DT_PTR ? ty_dtype_bytes((DType)t->elem.dt) : 8;
    if (eb <= 4 && numel(t) * eb > m->widest) m->widest = numel(t) * eb;
  }
}

void hm_run(Ctx *c, TFunc *f) {
  if (f->has_tasks || c->opts.no_smem_home) return;
  int threads = f->warps * 32;
  int have = f->maxnreg ? f->maxnreg : 65536 / threads;
  if (have > 255) have = 255;
  /* the budget: what the kernel's buffers and the scratch of a conversion
   * of its widest tile (lowering's, planned later) leave of a CTA's
   * 227 KB, and at most HM_MAX_BYTES */
  Smem m = {0, 0};
  ir_walk(f->body, count_smem, &m);
  int64_t left = 227 * 1024 - m.used - m.widest - 1024;
  if (left > HM_MAX_BYTES) left = HM_MAX_BYTES;
  visit(c, f, f->body, threads, have, &left);
}

/* After layouts: in a loop whose homed value is loaded in one layout and
 * stored from another, a thread may read what another wrote; a barrier
 * before the body's first load and one before its store order them. */
typedef struct Check {
  Ctx *c;
  int warps;
} Check;

static bool homed(const TValue *view) { return view->def && view->def->opc == OP_SMEM_ALLOC && (view->def->flags & OPF_HOME); }

static void check_loop(TOp *op, void *ud) {
  Check *k = ud;
  if (op->opc != OP_FOR) return;
  TBlock *body = op->regions[0];
  for (TOp *st = body->first; st; st = st->next) {
    if (st->opc != OP_SMEM_STORE || !homed(st->opnds[0])) continue;
    bool same = true;
    TOp *first = NULL;
    for (TOp *ld = body->first; ld; ld = ld->next)
      if (ld->opc == OP_SMEM_LOAD && ld->opnds[0] == st->opnds[0]) {
        if (!first) first = ld;
        const Type *lt = ld->res[0]->type, *vt = st->opnds[1]->type;
        if (!lt->layout || !vt->layout || !ly_same(lt->layout, vt->layout, lt->rank, lt->shape, k->warps)) same = false;
      }
    if (same || !first) continue;
    ir_insert_before(first, barrier(k->c, op->loc));
    ir_insert_before(st, barrier(k->c, op->loc));
  }
}

void hm_check(Ctx *c, TFunc *f) {
  Check k = {c, f->warps};
  ir_walk(f->body, check_loop, &k);
}

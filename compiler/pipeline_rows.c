/* pipeline_rows.c - a loop's plain loads through cp.async rings (prefix pr_).
 *
 * A row-wise kernel (layer norm's backward, softmax over a strip of rows)
 * loops over rows: each iteration loads a row, reduces it, stores a row.
 * Left alone, every iteration waits a memory latency for its loads. The
 * author could load the next row a row ahead into registers, but a long
 * row already fills the registers, and then nothing is in flight while
 * the row is reduced. With `stages(S)` on a kernel that has no dot, this
 * pass puts the row's loads in shared memory instead, as Triton's
 * `num_stages` does for the loads of a loop:
 *
 *   a ring of S slots of (unswizzled) shared memory for each such load;
 *   before the loop, cp.async copies of iterations 0 .. D-1 (D = S - 1);
 *   in iteration i, before the first of the loads:
 *     cp.async.wait_group D-1       (this thread's copies of i landed)
 *     bar.sync                      (everyone's; and everyone is done
 *                                    reading the slot of i - 1)
 *     copies of iteration i + D into slot (i + D) % S, commit
 *   each load reads its slot i % S (smem_load) where it was;
 *   after the loop, wait for the copies (past the end they copy nothing).
 *
 * With stages(2) and no room for two slots (long rows beside home.c's
 * accumulators), one: each iteration waits, synchronizes, reads its rows
 * into registers, synchronizes again and copies the next rows into the
 * slot, so they are in flight while this row is computed.
 *
 * The copies are the loads' own address and mask computations, cloned with
 * the induction variable moved ahead (pipeline.c's slices and clones); a
 * copy of an iteration past the end reads nothing. Which loads: tiles the
 * loop's body loads at addresses that change with the iteration, read in
 * aligned 16-byte runs (axisinfo.c) with a mask that keeps a prefix of each
 * run and a zero (or no) `other`, at least 16 bytes a thread. A load whose
 * address does not change (a weight row read again every iteration) stays
 * a plain load: it is an L1 hit. Which loops: `for` loops with no nested
 * control flow and bounds not both constants (such a loop is unrolled and
 * its loads are in flight together) in a kernel with no dot and no tasks;
 * rings that do not fit in shared memory beside what is allocated are
 * left out.
 *
 * The loads are issued D iterations early: a store in the loop must not
 * write what a later iteration loads (docs/language.md 9d). What was done,
 * or why not, goes to f->notes (--emit=tir). */
#include "tilec_int.h"
#include "pipeline.h"
#include <stdio.h>
#include <string.h>

enum { PR_MAX_LOADS = 8 };

static void note(Pl *p, Loc loc, const char *what) {
  vec_push(&p->c->arena, &p->f->notes, ar_printf(&p->c->arena, "ring: loop at %d:%d %s", loc.line, loc.col, what));
}

typedef struct Scan {
  bool dot;
} Scan;

static void scan_kernel(TOp *op, void *ud) {
  Scan *s = ud;
  /* a dot, or what a dot's pipeline made of it (the pipelines run first), or tasks */
  if (op->opc == OP_DOT || op->opc == OP_MMA_ASYNC || op->opc == OP_TC_MMA || op->opc == OP_ASYNC_COPY ||
      op->opc == OP_TMA_LOAD || op->opc == OP_TASKS)
    s->dot = true;
}

/* Whether load ld (directly in body) can be copied through a ring: *o
 * filled in, else *why. */
static bool check_load(Pl *p, TOp *ld, TBlock *body, Operand *o, const char **why) {
  Ctx *c = p->c;
  memset(o, 0, sizeof *o);
  TValue *v = ld->res[0], *ptr = ld->opnds[0];
  if (v->type->kind != TY_TILE || ptr->type->rank > 2) return *why = "is not a 1-D or 2-D tile", false;
  if (ld->flags & ~(OPF_MASK | OPF_OTHER)) return *why = "has a flag a copy cannot keep", false;
  if ((ld->flags & OPF_OTHER) && !pl_is_zero(ld->opnds[2])) return *why = "is loaded with a nonzero 'other'", false;
  if (pl_invariant(body, ptr, 0)) return *why = "reads the same addresses every iteration (an L1 hit)", false;
  int rank = ptr->type->rank, cd = rank - 1, eb = ty_dtype_bytes((DType)v->type->elem.dt), vec = 16 / eb;
  const AxisInfo *ax = ax_get(c, ptr);
  if (eb > 16 || ax->contig[cd] < vec || ax->div[cd] < 16 || v->type->shape[cd] % vec)
    return *why = "is not known to be read in aligned 16-byte runs (pointers align(16) and strides and offsets "
                  "multiple_of(16) let the compiler see it)",
           false;
  if (ty_numel(v->type) < (int64_t)32 * p->f->warps * vec)
    return *why = "is smaller than 16 bytes a thread", false;
  if ((ld->flags & OPF_MASK) && !pl_prefix_mask(c, ld->opnds[1], cd, vec, 0))
    return *why = "has a mask that does not keep a prefix of each 16-byte run", false;
  int shape[2] = {rank == 2 ? v->type->shape[0] : 1, v->type->shape[cd]};
  Type *t = ty_tile(c, v->type->elem, 2, shape);
  t->kind = TY_SMEM, t->swizzle = 0, t->brows = shape[0];
  o->buf = t;
  o->cd = cd;
  o->bytes = (int64_t)shape[0] * shape[1] * eb;
  o->load = ld;
  for (int i = 0; i < ld->nopnds && i < 2; i++) /* ('other' is zero: the copy zero-fills) */
    if (!pl_collect(p, &o->s, body, ld->opnds[i])) return *why = o->s.why, false;
  return true;
}

static void ring_loop(Pl *p, TOp *fop) {
  Ctx *c = p->c;
  TFunc *f = p->f;
  TBlock *body = fop->regions[0];
  Loc loc = fop->loc;
  TValue *iv = body->args[0];
  for (TOp *op = body->first; op; op = op->next)
    if (op->nregions) return note(p, loc, "has no ring: it has nested control flow");
  if (iv->type->elem.dt != DT_I32) return note(p, loc, "has no ring: it counts in 64 bits");
  TOp *d0 = fop->opnds[0]->def, *d1 = fop->opnds[1]->def;
  if (d0 && d0->opc == OP_CONST && d1 && d1->opc == OP_CONST)
    return note(p, loc, "has no ring: its bounds are constants (unrolled, its loads are all in flight at once)");
  /* a positive constant, or num_programs (a persistent loop: `range(pid, n, num_programs(0))`) */
  TOp *sd = fop->opnds[2]->def;
  if (!sd || !((sd->opc == OP_CONST && sd->ival > 0) || sd->opc == OP_NUM_PROGRAMS))
    return note(p, loc, "has no ring: its step is neither a positive constant nor num_programs");
  Operand ops[PR_MAX_LOADS];
  int n = 0;
  TOp *at = NULL;
  int64_t stage = 0;
  for (TOp *op = body->first; op; op = op->next) {
    if (op->opc != OP_LOAD || op->res[0]->type->kind != TY_TILE) continue;
    const char *why = NULL;
    if (n == PR_MAX_LOADS) why = "is past the eighth";
    else if (check_load(p, op, body, &ops[n], &why)) {
      if (!at) at = op;
      stage += (ops[n].bytes + 1023) & ~(int64_t)1023;
      n++;
      continue;
    }
    vec_push(&c->arena, &f->notes, ar_printf(&c->arena, "ring: the load at %d:%d stays a plain load: it %s",
                                             op->loc.line, op->loc.col, why));
  }
  if (!n) return;
  int S = f->stages, D = S - 1;
  int64_t used = pl_smem_in_use(f->body);
  /* one slot: read into registers at the top of the iteration, then refilled (when two do not fit) */
  bool one = S == 2 && used + S * stage > PL_SMEM_LIMIT && used + stage <= PL_SMEM_LIMIT;
  if (one) S = 1;
  if (used + S * stage > PL_SMEM_LIMIT)
    return note(p, loc, ar_printf(&c->arena, "has no ring: %d slots of %lld bytes for its loads do not fit in shared "
                                             "memory (%lld bytes already allocated; at most %d)",
                                  S, (long long)stage, (long long)used, PL_SMEM_LIMIT));
  Type *ti = ty_dt(c, DT_I32);
  TValue *hi = fop->opnds[1], *step = fop->opnds[2];
  TValue *rings[PR_MAX_LOADS];
  for (int j = 0; j < n; j++) {
    Type *t = ty_tile(c, ops[j].buf->elem, 2, ops[j].buf->shape);
    t->kind = TY_SMEM, t->swizzle = 0, t->brows = ops[j].buf->brows, t->nbuf = S;
    TOp *al = ir_op(c, OP_SMEM_ALLOC, loc, 0, NULL, 1, (Type *[]){t});
    al->ival2 = ops[j].bytes;
    al->res[0]->name = ar_printf(&c->arena, "<ring %d:%d>", ops[j].load->loc.line, ops[j].load->loc.col);
    if (f->body->first) ir_insert_before(f->body->first, al);
    else ir_append(f->body, al);
    rings[j] = al->res[0];
  }
  /* inside another loop, the last run's slots may still be read by a slower warp */
  for (TOp *up = fop->block->parent; up; up = up->block->parent)
    if (up->opc == OP_FOR || up->opc == OP_WHILE) {
      TOp *b0 = pl_mk(p, fop, OP_NAMED_BAR, loc, 0, NULL, NULL);
      b0->ival = 0, b0->ival2 = 32 * f->warps;
      break;
    }
  /* the prologue: iterations 0 .. D-1 */
  for (int j = 0; j < D; j++) {
    TValue *k = pl_iter(p, fop, fop, j, loc);
    pl_copies_n(p, fop, ops, n, rings, iv, k, pl_cmp_lt(p, fop, k, hi, loc), pl_iconst(p, fop, ti, j, loc), fop, true,
                j, loc);
  }
  /* the body: before its first ring load, wait, synchronize, copy D ahead
   * (one slot: read it first, synchronize again, then refill it) */
  TValue *it, *cur, *nxt;
  if (one) cur = nxt = pl_iconst(p, at, ti, 0, loc);
  else pl_ring_index(p, at, fop, S, D, loc, &it, &cur, &nxt);
  TOp *w = pl_mk(p, at, OP_ASYNC_WAIT, loc, 0, NULL, NULL);
  w->ival = D - 1;
  TOp *bar = pl_mk(p, at, OP_NAMED_BAR, loc, 0, NULL, NULL);
  bar->ival = 0, bar->ival2 = 32 * f->warps;
  TOp *bar2 = NULL; /* one slot: the reads go before it, the copies after it */
  if (one) {
    bar2 = pl_mk(p, at, OP_NAMED_BAR, loc, 0, NULL, NULL);
    bar2->ival = 0, bar2->ival2 = 32 * f->warps;
  }
  TValue *kn = pl_bin(p, at, OP_ADD, iv, pl_bin(p, at, OP_MUL, pl_iconst(p, at, ti, D, loc), step, loc), loc);
  pl_copies_n(p, at, ops, n, rings, iv, kn, pl_cmp_lt(p, at, kn, hi, loc), nxt, fop, false, D, loc);
  char list[256] = "";
  size_t len = 0;
  for (int j = 0; j < n; j++) {
    TOp *ld = ops[j].load, *rd_at = one ? bar2 : ld;
    TValue *view = pl_slot(p, rd_at, rings[j], cur, ld->loc);
    TValue *r = pl_mk1(p, rd_at, OP_SMEM_LOAD, ld->loc, 1, &view, ld->res[0]->type);
    r->name = ld->res[0]->name;
    ir_replace_uses(body, ld->res[0], r);
    if (len + 32 < sizeof list)
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%d:%d", j ? ", " : "", ld->loc.line, ld->loc.col);
    ir_remove(ld);
  }
  TOp *fin = ir_op(c, OP_ASYNC_WAIT, loc, 0, NULL, 0, NULL);
  fin->ival = 0;
  ir_insert_after(fop, fin);
  if (one)
    note(p, loc, ar_printf(&c->arena, "loads %s through cp.async into one slot each (two do not fit), read at the top "
                                      "of each iteration and refilled with the next (%lld bytes of shared memory)",
                           list, (long long)stage));
  else
    note(p, loc, ar_printf(&c->arena, "loads %s through cp.async rings of %d slots (copies %d iteration%s ahead, %lld "
                                      "bytes of shared memory)",
                           list, S, D, D > 1 ? "s" : "", (long long)(S * stage)));
}

typedef struct Loops {
  TOp *v[16];
  int n;
} Loops;

static void find_loops(TOp *op, void *ud) {
  Loops *l = ud;
  if (op->opc == OP_FOR && l->n < 16) l->v[l->n++] = op;
}

void pr_run(Ctx *c, TFunc *f) {
  if (f->stages < 2 || f->has_tasks) return;
  Scan s = {0};
  ir_walk(f->body, scan_kernel, &s);
  if (s.dot) return; /* a dot's loop has its own rings (pipeline.c, pipeline_multi.c) */
  Pl p = {c, f};
  pl_count_uses(f);
  Loops l = {0};
  ir_walk(f->body, find_loops, &l);
  for (int i = 0; i < l.n && !c->nerrors; i++) ring_loop(&p, l.v[i]);
}

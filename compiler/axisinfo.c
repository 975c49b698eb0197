/* axisinfo.c - contiguity, divisibility and constancy of integer and pointer
 * values (the facts that decide vector widths of loads and stores and the
 * layouts that make them coalesced).  A forward walk over TIR; loop-carried
 * values and anything unknown get the conservative answer (1, 1, 1). */
#include "tilec_int.h"
#include <string.h>

#define AX_BIG (1 << 20)

static int64_t gcd(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Largest power of two dividing x (x == 0: "anything"). */
static int64_t pow2_div(int64_t x) {
  if (x == 0) return AX_BIG;
  int64_t p = 1;
  while (!(x & p) && p < AX_BIG) p <<= 1;
  return p;
}

static int rank_of(const TValue *v) { return v->type->kind == TY_TILE ? v->type->rank : 0; }

/* Divisibility that holds for every element (not only at run starts). */
static int64_t every_div(const AxisInfo *x, int rank) {
  int64_t g = 0;
  for (int e = 0; e < (rank ? rank : 1); e++) g = gcd(g, x->contig[e] > 1 ? 1 : x->div[e]);
  return g ? g : 1;
}

static AxisInfo *new_info(Ctx *c, const TValue *v, int64_t contig, int64_t div, int64_t constancy) {
  AxisInfo *a = ar_alloc(&c->arena, sizeof *a);
  int r = rank_of(v);
  for (int d = 0; d < TC_MAX_RANK; d++) {
    int64_t n = d < r ? v->type->shape[d] : 1;
    a->contig[d] = contig < n ? contig : n;
    a->div[d] = div;
    a->constancy[d] = constancy < n ? constancy : n;
    if (d >= r && r > 0) a->contig[d] = a->constancy[d] = 1;
  }
  return a;
}

static AxisInfo *conservative(Ctx *c, const TValue *v) {
  AxisInfo *a = new_info(c, v, 1, 1, 1);
  if (rank_of(v) == 0) a->constancy[0] = AX_BIG; /* scalars are uniform */
  return a;
}

const AxisInfo *ax_get(Ctx *c, TValue *v) {
  if (!v->ax) v->ax = conservative(c, v);
  return v->ax;
}

static int64_t elem_bytes_ptr(const TValue *v) {
  return v->type->elem.dt == DT_PTR ? ty_dtype_bytes((DType)v->type->elem.pointee) : 1;
}

static void visit(TOp *op, void *ud) {
  Ctx *c = ud;
  if (op->nres != 1) return;
  TValue *r = op->res[0];
  int rk = rank_of(r);
  AxisInfo *a;
  const AxisInfo *x = op->nopnds > 0 ? ax_get(c, op->opnds[0]) : NULL;
  const AxisInfo *y = op->nopnds > 1 ? ax_get(c, op->opnds[1]) : NULL;
  switch (op->opc) {
  case OP_CONST:
    a = new_info(c, r, 1, ty_is_int((DType)r->type->elem.dt) ? pow2_div(op->ival) : 1, AX_BIG);
    break;
  case OP_PROGRAM_ID:
  case OP_NUM_PROGRAMS: a = new_info(c, r, 1, 1, AX_BIG); break;
  case OP_SPLAT:
    a = new_info(c, r, 1, x->div[0], AX_BIG);
    break;
  case OP_ARANGE: {
    a = new_info(c, r, AX_BIG, pow2_div(op->ival), 1);
    break;
  }
  case OP_ADD:
  case OP_SUB:
  case OP_PTR_ADD: {
    a = new_info(c, r, 1, 1, 1);
    int64_t scale = op->opc == OP_PTR_ADD ? elem_bytes_ptr(r) : 1;
    for (int d = 0; d < (rk ? rk : 1); d++) {
      int64_t c1 = gcd(x->contig[d], y->constancy[d]), c2 = gcd(x->constancy[d], y->contig[d]);
      int64_t rc = op->opc == OP_SUB ? c1 : (c1 > c2 ? c1 : c2);
      a->contig[d] = rc;
      /* An operand's divisibility holds at its own run starts; where the
       * result's runs are shorter, only every rc-th element counts. */
      int64_t dx = x->contig[d] > rc ? gcd(x->div[d], rc) : x->div[d];
      int64_t dy0 = y->contig[d] > rc ? gcd(y->div[d], rc) : y->div[d];
      int64_t dy = dy0 >= AX_BIG ? AX_BIG : dy0 * scale;
      a->div[d] = gcd(dx, dy);
      a->constancy[d] = gcd(x->constancy[d], y->constancy[d]);
    }
    break;
  }
  case OP_MUL: {
    /* The product steps by more than one, so every element starts a run:
     * only divisibility that holds for every element of each side counts. */
    a = new_info(c, r, 1, 1, 1);
    int64_t ex = every_div(x, rank_of(op->opnds[0])), ey = every_div(y, rank_of(op->opnds[1]));
    for (int d = 0; d < (rk ? rk : 1); d++) {
      int64_t dv = ex * ey;
      a->div[d] = dv > AX_BIG ? AX_BIG : dv;
      a->constancy[d] = gcd(x->constancy[d], y->constancy[d]);
    }
    break;
  }
  case OP_CMP:
  case OP_AND:
  case OP_OR: {
    a = new_info(c, r, 1, 1, 1);
    for (int d = 0; d < (rk ? rk : 1); d++) {
      int64_t k = gcd(x->constancy[d], y->constancy[d]);
      /* `offs < n` (or `offs >= n`, `n > offs`, `n <= offs`): along a run
       * of consecutive offsets the truth value changes only at offs == n,
       * so runs aligned to n's divisibility keep one value. (For <= and >
       * the change is at n + 1: no such guarantee.) */
      bool lhs_contig = x->contig[d] > 1;
      bool ok_pred = op->opc == OP_CMP &&
                     (lhs_contig ? (op->pred == CMP_LT || op->pred == CMP_GE) : (op->pred == CMP_GT || op->pred == CMP_LE));
      if (ok_pred) {
        const AxisInfo *ct = lhs_contig ? x : y, *cs = lhs_contig ? y : x;
        if (ct->contig[d] > 1 && cs->constancy[d] >= ct->contig[d]) {
          int64_t g = gcd(ct->contig[d], gcd(ct->div[d], cs->div[d]));
          if (g > k) k = g;
        }
      }
      a->constancy[d] = k;
    }
    break;
  }
  case OP_EXPAND_DIMS: {
    /* Along the new size-1 axis every element starts its own run, so its
     * divisibility is that of every element: 1 if the input steps by one
     * along any dimension. */
    a = new_info(c, r, 1, 1, 1);
    int64_t every = AX_BIG;
    int xr = rank_of(op->opnds[0]);
    for (int e = 0; e < (xr ? xr : 1); e++) {
      int64_t de = x->contig[e] > 1 ? 1 : x->div[e];
      every = gcd(every, de);
    }
    for (int d = 0, e = 0; d < rk; d++) {
      if (d == op->axis) continue;
      a->contig[d] = x->contig[e];
      a->div[d] = x->div[e];
      a->constancy[d] = x->constancy[e];
      e++;
    }
    a->div[op->axis] = every;
    break;
  }
  case OP_BROADCAST: {
    a = new_info(c, r, 1, 1, 1);
    for (int d = 0; d < rk; d++) {
      bool bc = op->opnds[0]->type->shape[d] == 1 && r->type->shape[d] != 1;
      a->contig[d] = bc ? 1 : x->contig[d];
      a->div[d] = x->div[d];
      a->constancy[d] = bc ? r->type->shape[d] : x->constancy[d];
    }
    break;
  }
  case OP_CONVERT:
  case OP_CAST:
    if (op->opc == OP_CAST && ty_is_float((DType)op->to.dt)) {
      a = conservative(c, r);
    } else {
      a = ar_alloc(&c->arena, sizeof *a);
      *a = *x;
    }
    break;
  default:
    if (ir_is_elementwise(op->opc) && op->nopnds >= 1) {
      a = conservative(c, r);
      for (int d = 0; d < (rk ? rk : 1); d++) {
        int64_t k = x->constancy[d];
        for (int i = 1; i < op->nopnds; i++) k = gcd(k, ax_get(c, op->opnds[i])->constancy[d]);
        a->constancy[d] = k;
      }
    } else {
      a = conservative(c, r);
    }
  }
  r->ax = a;
}

/* Operands before users, and a loop's induction variable (lo + i * step:
 * divisible by what both are) before its body. */
/* A step the same in every iteration and for every element: constants,
 * values from outside the loop's body, splats and arithmetic of those. */
static bool uniform_step(const TBlock *body, const TValue *v, int depth) {
  if (depth > 8) return false;
  if (!v->def) return v->block != body;
  const TOp *d = v->def;
  if (d->block != body || d->opc == OP_CONST) return true;
  if (d->opc != OP_SPLAT && d->opc != OP_BROADCAST && !ir_is_elementwise(d->opc)) return false;
  for (int i = 0; i < d->nopnds; i++)
    if (!uniform_step(body, d->opnds[i], depth + 1)) return false;
  return true;
}

static void walk(Ctx *c, TBlock *b);

/* A loop-carried value the body advances by a uniform step (Triton's
 * `ptrs += BK`): x_i = init + i * step keeps init's runs and constancy,
 * and is divisible by what init and the step both are. Others: nothing
 * known. The body is walked again once the carried values are known. */
static void loop_carried(Ctx *c, TOp *op) {
  TBlock *body = op->regions[0];
  TOp *y = body->last;
  bool any = false;
  for (int i = 0; i < op->nres; i++) {
    TValue *arg = body->args[1 + i], *init = op->opnds[3 + i];
    TValue *nx = y && y->opc == OP_YIELD && i < y->nopnds ? y->opnds[i] : NULL;
    TOp *d = nx ? nx->def : NULL;
    TValue *step = NULL;
    if (d && (d->opc == OP_PTR_ADD || d->opc == OP_ADD) && d->opnds[0] == arg) step = d->opnds[1];
    else if (d && d->opc == OP_ADD && d->opnds[1] == arg) step = d->opnds[0];
    if (!step || !uniform_step(body, step, 0)) continue;
    AxisInfo *a = ar_alloc(&c->arena, sizeof *a);
    *a = *ax_get(c, init);
    int64_t sd = ax_get(c, step)->div[0], scale = d->opc == OP_PTR_ADD ? elem_bytes_ptr(arg) : 1;
    sd = sd >= AX_BIG ? AX_BIG : sd * scale;
    for (int k = 0; k < TC_MAX_RANK; k++) a->div[k] = gcd(a->div[k], sd);
    arg->ax = a;
    any = true;
  }
  if (any) walk(c, body);
}

static void walk(Ctx *c, TBlock *b) {
  for (TOp *op = b->first; op; op = op->next) {
    if (op->opc == OP_FOR) {
      TValue *iv = op->regions[0]->args[0];
      int64_t d = gcd(ax_get(c, op->opnds[0])->div[0], ax_get(c, op->opnds[2])->div[0]);
      AxisInfo *a = new_info(c, iv, 1, d ? d : 1, AX_BIG);
      a->constancy[0] = AX_BIG; /* a scalar: uniform */
      iv->ax = a;
      for (int i = 0; i < op->nres; i++) op->regions[0]->args[1 + i]->ax = NULL; /* conservative, first */
    }
    for (int i = 0; i < op->nregions; i++) walk(c, op->regions[i]);
    if (op->opc == OP_FOR) loop_carried(c, op);
    visit(op, c);
  }
}

void ax_analyze(Ctx *c, TFunc *f) {
  for (int i = 0; i < f->nparams; i++) {
    TValue *v = f->params[i].value;
    AxisInfo *a = new_info(c, v, 1, f->params[i].align > 0 ? f->params[i].align : 1, AX_BIG);
    v->ax = a;
  }
  walk(c, f->body);
}

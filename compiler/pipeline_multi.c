/* pipeline_multi.c - loops with two to four dots, software pipelined (sm_90a).
 *
 * Attention's loops: the forward's S = Q K^T, a softmax, O += P V (two
 * dots); the backward's dK/dV loop (S^T = K Q^T, dV += P^T dO,
 * dP^T = V dO^T, dK += dS^T Q: four) and dQ loop (S = Q K^T, dP = dO V^T,
 * dQ += dS K: three). Each operand of each dot is one of
 *
 *   'L'  a tile the loop loads: a ring of S slots of 128-byte swizzled
 *        shared memory, copied by cp.async D = S - 1 iterations ahead, one
 *        commit group an iteration for all the rings (every wgmma of an
 *        iteration is waited for within it, so after the barrier at the top
 *        of iteration i no warp reads slot i - 1 and the copies of i + S - 1
 *        may fill it). One load may feed
 *        several dots, transposed or not (the backward's Q and dO): one
 *        ring, each dot its own view of the slot;
 *   'I'  a tile from before the loop (K and V in dK/dV, Q and dO in dQ):
 *        stored once into swizzled shared memory before the first loop
 *        that needs it;
 *   'R'  for a, a tile the body computes (P, dS): wgmma with A from
 *        registers.
 *
 * Each dot becomes a wgmma waited for at once (the softmax needs the
 * first's result, the next iteration the accumulators). A later loop whose
 * rings have the same tiles' shapes (the masked tail of the keys, or dQ's
 * loops after dK/dV's in the fused backward) reuses the rings after a
 * barrier. Runs before pipeline.c's pl_run, which takes the kernels with
 * none of these loops; the notes (--emit=tir) say what was built or why
 * not.
 */
#include "pipeline.h"
#include <stdio.h>
#include <string.h>

#define PM_DOTS 4
#define PM_RINGS 4
#define PM_STAGED 8

#define PM_DESCS 8

typedef struct MultiState {
  int nrings, S, nloops;
  Type *ring_t[PM_RINGS];
  TValue *rings[PM_RINGS];
  int nstaged;
  TValue *staged_v[PM_STAGED], *staged[PM_STAGED];
  /* the TMA form's descriptors, one per tensor and form, shared by the loops */
  int ndescs;
  Operand desc_o[PM_DESCS];
  TValue *descs[PM_DESCS];
} MultiState;

/* Do operands a and b read one tensor through one descriptor? */
static bool same_desc(const Operand *a, const Operand *b) {
  if (a->planes != b->planes || a->cols != b->cols || a->buf->shape[0] != b->buf->shape[0] ||
      a->buf->elem.dt != b->buf->elem.dt)
    return false;
  for (int i = 0; i < 4; i++) {
    TValue *x = a->src[i], *y = b->src[i];
    if (x == y) continue;
    if (!x || !y || !x->def || !y->def || x->def->ival != y->def->ival) return false;
  }
  return true;
}

/* operand o's descriptor: one made for an earlier ring or loop, or a new derived parameter */
static TValue *desc_of(Pl *p, MultiState *ps, Operand *o) {
  for (int i = 0; i < ps->ndescs; i++)
    if (same_desc(&ps->desc_o[i], o)) return ps->descs[i];
  ps->desc_o[ps->ndescs] = *o;
  return ps->descs[ps->ndescs] = pl_add_desc(p, o, ar_printf(&p->c->arena, "__ring_%d", ps->ndescs)), ps->ndescs++,
         ps->descs[ps->ndescs - 1];
}

/* Can the loop's rings be TMA's? (every tile a box of a tensor the host
 * can describe, descriptors to spare); else why not */
static const char *no_tma(Pl *p, MultiState *ps, Operand *ops, int nops, int nd) {
  int fresh = 0;
  if (p->c->opts.no_tma_rings) return "--no-tma-rings";
  /* the backward's loops: on TMA, ptxas gave them 10-30 more registers (spilling at the REGS = 128 cap of
     the causal dK/dV at head dim 64 and in the fused kernel at 128), not yet worth it unmeasured */
  if (nd > 2 && !p->c->opts.tma_rings_all)
    return "a loop of three or four dots keeps cp.async (TMA's form needs more registers there; --tma-rings=all)";
  for (int j = 0; j < nops; j++) {
    if (!ops[j].tma) return ops[j].no_tma;
    bool have = false;
    for (int i = 0; i < ps->ndescs && !have; i++) have = same_desc(&ps->desc_o[i], &ops[j]);
    for (int i = 0; i < j && !have; i++) have = same_desc(&ops[i], &ops[j]);
    fresh += !have;
  }
  if (ps->ndescs + fresh > PM_DESCS) return "more tensors than descriptors the kernel may take";
  for (int i = 0; i < p->f->nparams; i++)
    if (!p->f->params[i].derived && !strncmp(p->f->params[i].name, "__ring_", 7))
      return "a parameter is named like the descriptors (__ring_N)";
  return NULL;
}

static bool defined_outside(TBlock *body, TValue *v) { return v->def ? v->def->block != body : v->block != body; }

/* A tile from before the loop, stored row-major with 128-byte swizzled
 * column blocks (as the rings' slots); NULL and why if it cannot be. */
static Type *staged_type(Pl *p, TValue *v, const char **why) {
  Type *vt = v->type;
  if (vt->kind != TY_TILE || vt->rank != 2) return *why = "is not a 2-D tile", NULL;
  int eb = ty_dtype_bytes((DType)vt->elem.dt);
  if ((vt->shape[1] * eb) % 128 || vt->shape[0] % 8) return *why = "is not whole 128-byte rows (wgmma's swizzle)", NULL;
  Type *t = ty_tile(p->c, vt->elem, 2, vt->shape);
  t->kind = TY_SMEM, t->swizzle = 128, t->brows = vt->shape[0], t->nbuf = 1;
  return t;
}

static TOp *entry_alloc(Pl *p, Type *t, int64_t bytes, const char *name, Loc loc) {
  TOp *al = ir_op(p->c, OP_SMEM_ALLOC, loc, 0, NULL, 1, (Type *[]){t});
  al->ival2 = bytes;
  al->res[0]->name = name;
  if (p->f->body->first) ir_insert_before(p->f->body->first, al);
  else ir_append(p->f->body, al);
  return al;
}

/* Is every use of load result v an a or b of the loop's dots, directly or
 * through a trans the dots alone use? (Then one ring serves them all.) */
static bool dots_only(TBlock *body, TValue *v, TOp **dots, int nd) {
  int n = 0;
  for (int d = 0; d < nd; d++)
    for (int j = 0; j < 2; j++) n += dots[d]->opnds[j] == v;
  for (TOp *op = body->first; op; op = op->next) {
    if (op->opc != OP_TRANS || op->opnds[0] != v) continue;
    int m = 0;
    for (int d = 0; d < nd; d++)
      for (int j = 0; j < 2; j++) m += dots[d]->opnds[j] == op->res[0];
    if (m != op->res[0]->uses) return false;
    n++;
  }
  return n == v->uses;
}

/* The load a dot operand reads (v, or trans(v)), and whether through trans. */
static TOp *load_of(TBlock *body, TValue *v, bool *tr) {
  *tr = v->def && v->def->opc == OP_TRANS && v->def->block == body;
  if (*tr) v = v->def->opnds[0];
  return v->def && v->def->opc == OP_LOAD && v->def->block == body ? v->def : NULL;
}

/* The accumulator acc of a dot, as a value usable at the loop's first dot
 * d0: itself when it is defined before d0 (or outside the body, or
 * carried), a copy before d0 of a splat of a constant, else NULL. */
static TValue *acc_at(Pl *p, TBlock *body, TValue *acc, TOp *d0) {
  if (!acc->def || acc->def->block != body) return acc;
  for (TOp *op = body->first; op && op != d0; op = op->next)
    if (op == acc->def) return acc;
  TOp *sp = acc->def, *k = sp->opc == OP_SPLAT ? sp->opnds[0]->def : NULL;
  if (!k || k->opc != OP_CONST || k->nopnds) return NULL;
  TOp *k2 = pl_mk(p, d0, OP_CONST, k->loc, 0, NULL, k->res[0]->type);
  k2->ival = k->ival, k2->fval = k->fval;
  return pl_mk1(p, d0, OP_SPLAT, sp->loc, 1, &k2->res[0], acc->type);
}

/* A staged operand's wgmma descriptor is made where each wgmma is issued
 * (OPF_FRESH_A/B): hoisted out of the loop, every k-step's descriptor of it
 * stayed live across the loop (8 to 16 registers a tile; the d128 dQ
 * kernel took 142 registers instead of 128, one program an SM instead of
 * two). */
static int fresh(const char kind[2]) {
  return (kind[0] == 'I' ? OPF_FRESH_A : 0) | (kind[1] == 'I' ? OPF_FRESH_B : 0);
}

static const char *after(int nd) {
  static const char *s[] = {"", "", "the one after it", "the 2 after it", "the 3 after it"};
  return s[nd];
}

static void pipeline_loop(Pl *p, MultiState *ps, TOp *fop, TOp **dots, int nd) {
  Ctx *c = p->c;
  TFunc *f = p->f;
  TBlock *body = fop->regions[0];
  Loc loc = dots[0]->loc;
  int warps = f->warps;
  TValue *iv = body->args[0];
  const char *why = NULL, *rest = after(nd);
  if (f->stages == 0) return pl_note(p, loc, "and %s not pipelined: stages(0)", rest);
  if (c->sm != 90) return pl_note(p, loc, "and %s not pipelined: sm_100a lowers dot on mma.sync for now", rest);
  if (f->has_tasks) return pl_note(p, loc, "and %s not pipelined: the kernel has tasks", rest);
  if (iv->type->elem.dt != DT_I32) return pl_note(p, loc, "and %s not pipelined: the loop counts in 64 bits", rest);
  TOp *sd = fop->opnds[2]->def;
  if (!sd || sd->opc != OP_CONST || sd->ival <= 0)
    return pl_note(p, loc, "and %s not pipelined: the loop's step is not a positive constant", rest);
  /* what each operand is: 'L' loaded in the loop (ops[]), 'I' from before it, 'R' a register tile (a only) */
  Operand ops[PM_RINGS];
  int nops = 0, ring_of[PM_DOTS][2];
  bool trans_of[PM_DOTS][2];
  char kind[PM_DOTS][2];
  for (int d = 0; d < nd; d++) {
    TOp *dot = dots[d];
    TValue *a = dot->opnds[0], *b = dot->opnds[1];
    int M = a->type->shape[0], K = a->type->shape[1], N = b->type->shape[1];
    DType dt = (DType)a->type->elem.dt;
    if (dt != DT_BF16 && dt != DT_F16)
      return pl_note(p, dot->loc, "not pipelined: wgmma here takes bf16 or f16 operands");
    if (warps % 4 || M != 16 * warps)
      return pl_note(p, dot->loc,
                     "not pipelined: each warpgroup computes 64 rows on wgmma, so M must be 16 x warps (M = %d on %d "
                     "warps)",
                     M, warps);
    if (N % 8 || N > 256 || K % 16)
      return pl_note(p, dot->loc, "not pipelined: wgmma needs N a multiple of 8 up to 256");
    for (int j = 0; j < 2; j++) {
      TValue *v = dot->opnds[j];
      const char *lw = NULL;
      bool tr;
      TOp *ld = load_of(body, v, &tr);
      ring_of[d][j] = -1;
      for (int k = 0; k < nops && ld; k++)
        if (ops[k].load == ld) ring_of[d][j] = k;
      if (ring_of[d][j] >= 0) { /* a tile another dot reads too */
        kind[d][j] = 'L', trans_of[d][j] = (ops[ring_of[d][j]].cd == 0) != tr;
      } else if (nops < PM_RINGS &&
                 pl_check_operand(p, v, body, &ops[nops], &lw, ld && dots_only(body, ld->res[0], dots, nd))) {
        kind[d][j] = 'L', trans_of[d][j] = ops[nops].trans, ring_of[d][j] = nops++;
      } else if (defined_outside(body, v) && staged_type(p, v, &why)) {
        kind[d][j] = 'I';
      } else if (j == 0 && v->type->kind == TY_TILE) {
        kind[d][j] = 'R';
      } else {
        return pl_note(p, dot->loc, "not pipelined: %s %s", j ? "b" : "a",
                       lw ? lw : why ? why : "is neither loaded in the loop nor from before it");
      }
    }
  }
  if (!nops) return pl_note(p, loc, "and %s not pipelined: neither loads a tile in the loop", rest);
  int64_t stage = 0, staged_bytes = 0;
  int nnew = 0;
  for (int j = 0; j < nops; j++) stage += (ops[j].bytes + 1023) & ~1023;
  bool reuse = ps->nrings == nops;
  for (int j = 0; j < nops && reuse; j++)
    reuse = ps->ring_t[j]->elem.dt == ops[j].buf->elem.dt && ps->ring_t[j]->shape[0] == ops[j].buf->shape[0] &&
            ps->ring_t[j]->shape[1] == ops[j].buf->shape[1];
  for (int d = 0; d < nd; d++)
    for (int j = 0; j < 2; j++)
      if (kind[d][j] == 'I') {
        bool have = false;
        TValue *v = dots[d]->opnds[j];
        for (int k = 0; k < ps->nstaged; k++) have |= ps->staged_v[k] == v;
        for (int e = 0; e < d * 2 + j && !have; e++) have |= kind[e / 2][e % 2] == 'I' && dots[e / 2]->opnds[e % 2] == v;
        if (!have)
          staged_bytes += (int64_t)v->type->shape[0] * v->type->shape[1] * ty_dtype_bytes((DType)v->type->elem.dt),
              nnew++;
      }
  if (ps->nstaged + nnew > PM_STAGED)
    return pl_note(p, loc, "and %s not pipelined: more than %d tiles from before the loops to stage", rest, PM_STAGED);
  const char *why_not_tma = no_tma(p, ps, ops, nops, nd);
  bool tma = !why_not_tma;
  int S = reuse ? ps->S : f->stages;
  if (!reuse) {
    int64_t used = pl_smem_in_use(f->body) + ((staged_bytes + 1023) & ~1023) + (tma ? 1024 : 0);
    if (S < 0) S = 3; /* copies two iterations ahead; stages(S) asks for S - 1 */
    if (used + S * stage > (f->stages < 0 ? PL_SMEM_BUDGET : PL_SMEM_LIMIT))
      return pl_note(p, loc, "and %s not pipelined: %d stages of %lld bytes do not fit in shared memory", rest, S,
                     (long long)stage);
  }
  int D = S - 1; /* the slot of iteration i - 1 is free after the barrier at the top of i (see the top) */
  Type *ti = ty_dt(c, DT_I32);
  TValue *hi = fop->opnds[1], *step = fop->opnds[2];
  if (reuse) { /* every warp is done with the rings' last slots (the previous loop's wgmmas were waited) */
    TOp *b0 = pl_mk(p, fop, OP_NAMED_BAR, loc, 0, NULL, NULL);
    b0->ival = 0, b0->ival2 = 32 * warps;
  } else {
    static const char *names[PM_RINGS] = {"<dot ring 1>", "<dot ring 2>", "<dot ring 3>", "<dot ring 4>"};
    for (int j = 0; j < nops; j++) {
      Type *t = ty_tile(c, ops[j].buf->elem, 2, ops[j].buf->shape);
      t->kind = TY_SMEM, t->swizzle = 128, t->brows = ops[j].buf->brows, t->nbuf = S;
      ps->rings[j] = entry_alloc(p, t, ops[j].bytes, names[j], loc)->res[0];
      ps->ring_t[j] = t;
    }
    ps->nrings = nops, ps->S = S;
  }
  /* TMA: each loop its own full barriers (phase 0 at its first iteration), the descriptors shared */
  TValue *full = NULL, *descs[PM_RINGS] = {0};
  if (tma) {
    full = pl_bars(p, S, "<ring full>", loc);
    for (int j = 0; j < nops; j++) descs[j] = desc_of(p, ps, &ops[j]);
  }
  ps->nloops++;
  /* the prologue: iterations 0 .. D-1, issued before the staged tiles' stores below, which wait for their
   * loads (the forward's Q): the copies' latency and theirs overlap instead of adding up */
  for (int j = 0; j < D; j++) {
    TValue *k = pl_iter(p, fop, fop, j, loc);
    if (tma)
      pl_tma_issue(p, fop, ops, nops, ps->rings, descs, full, iv, k, pl_cmp_lt(p, fop, k, hi, loc),
                   pl_iconst(p, fop, ti, j, loc), fop, true, j, loc);
    else
      pl_copies_n(p, fop, ops, nops, ps->rings, iv, k, pl_cmp_lt(p, fop, k, hi, loc), pl_iconst(p, fop, ti, j, loc),
                  fop, true, j, loc);
  }
  /* the tiles from before the loop, stored once (before the first loop that needs them; the barrier at the
   * top of its first iteration orders them before its wgmmas too) */
  TValue *opnd[PM_DOTS][2];
  bool stored = false;
  for (int d = 0; d < nd; d++)
    for (int j = 0; j < 2; j++) {
      TValue *v = dots[d]->opnds[j];
      opnd[d][j] = v;
      if (kind[d][j] != 'I') continue;
      TValue *sm = NULL;
      for (int k = 0; k < ps->nstaged; k++)
        if (ps->staged_v[k] == v) sm = ps->staged[k];
      if (!sm) {
        Type *t = staged_type(p, v, &why);
        int64_t bytes = (int64_t)t->shape[0] * t->shape[1] * ty_dtype_bytes((DType)t->elem.dt);
        sm = entry_alloc(p, t, bytes, "<dot staged>", loc)->res[0];
        pl_mk(p, fop, OP_SMEM_STORE, loc, 2, (TValue *[]){sm, v}, NULL);
        ps->staged_v[ps->nstaged] = v, ps->staged[ps->nstaged++] = sm;
        stored = true;
      }
      opnd[d][j] = sm;
    }
  if (stored) { /* the stores visible to wgmma (async proxy) and all made */
    pl_mk(p, fop, OP_FENCE_ASYNC, loc, 0, NULL, NULL);
    TOp *b1 = pl_mk(p, fop, OP_NAMED_BAR, loc, 0, NULL, NULL);
    b1->ival = 0, b1->ival2 = 32 * warps;
  }
  /* the body: this iteration's tiles landed and visible, the copies of it + D issued, then the wgmmas */
  TOp *d0 = dots[0];
  TValue *it, *cur, *nxt;
  pl_ring_index(p, d0, fop, S, D, loc, &it, &cur, &nxt);
  if (tma) { /* every warp is past the wgmmas of it - 1 (slot nxt is free) */
    pl_tma_step(p, d0, ops, nops, ps->rings, descs, full, fop, it, cur, nxt, S, D, warps, loc);
  } else {
    TOp *w = pl_mk(p, d0, OP_ASYNC_WAIT, loc, 0, NULL, NULL);
    w->ival = D - 1;
    pl_mk(p, d0, OP_FENCE_ASYNC, loc, 0, NULL, NULL);
    TOp *bar = pl_mk(p, d0, OP_NAMED_BAR, loc, 0, NULL, NULL);
    bar->ival = 0, bar->ival2 = 32 * warps;
    TValue *kn = pl_bin(p, d0, OP_ADD, iv, pl_bin(p, d0, OP_MUL, pl_iconst(p, d0, ti, D, loc), step, loc), loc);
    pl_copies_n(p, d0, ops, nops, ps->rings, iv, kn, pl_cmp_lt(p, d0, kn, hi, loc), nxt, fop, false, D, loc);
  }
  /* With three or four dots, those that read only shared memory (and an
   * accumulator there at the first dot) are issued together where the
   * first dot was, each waited for where it is used (the wait lets the
   * later ones run on: groups complete in order), so that dP^T runs on the
   * tensor cores while P^T's softmax runs; a dot with a from registers
   * is waited for at once (wgmma reads the registers while it runs). */
  TValue *early_acc[PM_DOTS] = {0}, *early_res[PM_DOTS] = {0};
  int group[PM_DOTS], committed = 0, nearly = 0;
  for (int d = 0; d < nd && nd > 2; d++)
    if (kind[d][0] != 'R' && kind[d][1] != 'R' && (early_acc[d] = acc_at(p, body, dots[d]->opnds[2], d0))) nearly++;
  if (nearly < 2) memset(early_acc, 0, sizeof early_acc), nearly = 0;
  for (int d = 0; d < nd; d++) {
    if (!early_acc[d]) continue;
    TOp *dot = dots[d], *at = d0;
    TValue *acc = early_acc[d], *in[2];
    for (int j = 0; j < 2; j++) {
      int r = ring_of[d][j];
      in[j] = r >= 0 ? pl_as_operand(p, at, pl_slot(p, at, ps->rings[r], cur, dot->loc), trans_of[d][j], dot->loc)
                     : opnd[d][j];
    }
    /* issued at the first dot; waited for below, at its own place */
    early_res[d] = pl_mk1(p, at, OP_MMA_ASYNC, dot->loc, 3, (TValue *[]){in[0], in[1], acc}, acc->type);
    early_res[d]->def->flags |= fresh(kind[d]);
    pl_mk(p, at, OP_MMA_COMMIT, dot->loc, 0, NULL, NULL);
    group[d] = committed++;
  }
  for (int d = 0; d < nd; d++) {
    TOp *dot = dots[d];
    TValue *acc = dot->opnds[2], *res = early_res[d];
    int pending = 0;
    if (res) {
      pending = committed - 1 - group[d]; /* the groups committed after this one may stay in flight (groups
                                             complete in order; one a later wait 0 covered: a no-op) */
    } else {
      TValue *in[2];
      for (int j = 0; j < 2; j++) {
        int r = ring_of[d][j];
        in[j] = r >= 0 ? pl_as_operand(p, dot, pl_slot(p, dot, ps->rings[r], cur, dot->loc), trans_of[d][j], dot->loc)
                       : opnd[d][j];
      }
      res = pl_mk1(p, dot, OP_MMA_ASYNC, dot->loc, 3, (TValue *[]){in[0], in[1], acc}, acc->type);
      res->def->flags |= fresh(kind[d]);
      pl_mk(p, dot, OP_MMA_COMMIT, dot->loc, 0, NULL, NULL);
      group[d] = committed++;
    }
    TOp *mw = pl_mk(p, dot, OP_MMA_WAIT, dot->loc, 1, &res, acc->type);
    mw->ival = pending;
    ir_replace_uses(body, dot->res[0], mw->res[0]);
    ir_remove(dot);
  }
  if (!tma) ir_insert_after(fop, ir_op(c, OP_ASYNC_WAIT, loc, 0, NULL, 0, NULL)); /* the copies past the end */
  /* how the rings are filled, for the notes */
  char how[200];
  if (tma)
    snprintf(how, sizeof how, "by TMA %d iterations ahead (one thread; descriptors the runtime builds at launch)", D);
  else snprintf(how, sizeof how, "through cp.async (copies %d iterations ahead; not TMA: %s)", D, why_not_tma);
  if (nd == 2) {
    pl_note(p, loc,
            "and the one after it pipelined: %d stages of %d tile%s %s into 128-byte swizzled shared memory (%lld "
            "bytes%s)%s, each dot a wgmma on %d warpgroup%s waited for at once",
            S, nops, nops > 1 ? "s" : "", how, (long long)(S * stage), reuse ? ", the rings of the loop before" : "",
            kind[1][0] == 'R' ? ", the second's a from registers" : "", warps / 4, warps > 4 ? "s" : "");
    return;
  }
  /* each dot's a and b: ring N (^T: seen transposed), staged (from before the loop) or registers */
  char what[320];
  int n = 0;
  for (int d = 0; d < nd; d++)
    for (int j = 0; j < 2; j++) {
      const char *sep = j ? " x " : d ? "; " : "";
      if (kind[d][j] == 'L')
        n += snprintf(what + n, sizeof what - (size_t)n, "%sring %d%s", sep, ring_of[d][j] + 1,
                      trans_of[d][j] ? "^T" : "");
      else n += snprintf(what + n, sizeof what - (size_t)n, "%s%s", sep, kind[d][j] == 'I' ? "staged" : "registers");
      if (j && early_res[d]) n += snprintf(what + n, sizeof what - (size_t)n, " (early)");
    }
  pl_note(p, loc,
          "and %s pipelined: %d stages of %d tile%s %s into 128-byte swizzled shared memory (%lld bytes%s), a x b of "
          "each dot: %s; each dot a wgmma on %d warpgroup%s, %s",
          rest, S, nops, nops > 1 ? "s" : "", how, (long long)(S * stage), reuse ? ", the rings of the loop before" : "",
          what, warps / 4, warps > 4 ? "s" : "",
          nearly ? "the early ones (operands in shared memory) issued together at the first and each waited for where "
                   "it is used, the others waited for at once"
                 : "waited for at once");
}

/* The loops of the kernel's body with two to four dots in their body. */
static int multi_loops(TBlock *b, TOp **loops, TOp *(*dots)[PM_DOTS], int *ndots, int max) {
  int n = 0;
  for (TOp *op = b->first; op && n < max; op = op->next) {
    if (op->opc != OP_FOR) continue;
    int nd = 0;
    TOp *ds[PM_DOTS] = {0};
    for (TOp *x = op->regions[0]->first; x; x = x->next)
      if (x->opc == OP_DOT) {
        if (nd < PM_DOTS) ds[nd] = x;
        nd++;
      }
    if (nd < 2 || nd > PM_DOTS) continue;
    loops[n] = op, ndots[n] = nd;
    memcpy(dots[n], ds, sizeof ds);
    n++;
  }
  return n;
}

bool pm_run(Ctx *c, TFunc *f) {
  Pl p = {c, f};
  pl_count_uses(f);
  TOp *loops[8], *dots[8][PM_DOTS];
  int nd[8];
  int nl = multi_loops(f->body, loops, dots, nd, 8);
  MultiState ps = {0};
  for (int i = 0; i < nl && !c->nerrors; i++) pipeline_loop(&p, &ps, loops[i], dots[i], nd[i]);
  return nl > 0;
}

/* pipeline_sm100.c - the single-dot K loop on sm_100a, on tcgen05.
 *
 * pipeline.c's rewrite of a Triton-style `acc = dot(load(a...), load(b...),
 * acc)` loop, for Blackwell: the same rings of S slots of 128-byte
 * swizzled shared memory, filled D = S - 2 iterations ahead by TMA (both
 * tiles boxes of tensors the host can describe) or else by cp.async, but
 * the MMA is tcgen05's:
 *
 *   before the loop: a [128, N] f32 accumulator in tensor memory (N of the
 *     512 columns, counted in f->tmem_cols: lower_sm100.c's tcgen05.alloc
 *     takes them at the kernel's start and frees them at its end); mbarriers
 *     empty[S] (tcgen05.commit: the MMAs that read the slot are done) and
 *     done (after the loop); the copies of iterations 0 .. D-1
 *   in iteration i (every thread):
 *     TMA: wait full[i % S] (phase (i / S) % 2)
 *     cp.async: cp.async.wait_group D-1, fence.proxy.async, bar.sync
 *     one thread: K/16 tcgen05.mma of slot i % S into the accumulator (the
 *       first iteration's first overwrites it), tcgen05.commit to empty[i % S]
 *     wait empty[(i + D) % S] for the MMAs of i - 2 (the phase before the
 *       slot's use by i + D: a fresh mbarrier passes the first round)
 *     the copies of iteration i + D into slot (i + D) % S
 *   after the loop: one thread commits to done, every thread waits for it,
 *     and the accumulator comes back to registers with tcgen05.ld 32x32b
 *     (a thread a row: warp w reaches TMEM lanes 32 (w % 4) .. + 31, so
 *     warps 4 .. 7 of an 8-warp kernel read the right half of the columns);
 *     a loop that ran no iteration gives the accumulator's zeros instead.
 *
 * The loop still carries the accumulator's initial value (zeros), unchanged:
 * LLVM folds it away. The epilogue's store goes through the dead B ring by
 * TMA as on sm_90a (pl_tma_epilogue). Anything else keeps dot on mma.sync;
 * f->notes says why (--emit=tir).
 */
#include "tilec_int.h"
#include "pipeline.h"
#include <stdio.h>
#include <string.h>

#define PB_TMEM_COLUMNS 512

/* Why a dot cannot go on tcgen05 here (NULL: it can). */
static const char *unfit(Pl *p, TOp *fop, TOp *dot) {
  TFunc *f = p->f;
  TBlock *body = fop->regions[0];
  TValue *a = dot->opnds[0], *b = dot->opnds[1], *acc = dot->opnds[2];
  int M = a->type->shape[0], K = a->type->shape[1], N = b->type->shape[1], W = f->warps;
  DType dt = (DType)a->type->elem.dt;
  int ai = acc->block == body ? acc->index : -1;
  if (f->stages == 0) return "stages(0)";
  if (f->has_tasks) return "the kernel has tasks (pipeline it by hand)";
  if (dt != DT_BF16 && dt != DT_F16) return "tcgen05.mma kind::f16 takes bf16 or f16 operands";
  if (acc->type->elem.dt != DT_F32) return "the accumulator is not f32";
  if (M != 128) return "one CTA's tcgen05.mma computes M = 128 rows (the M = 64 form is not supported yet)";
  if (N % 16 || N < 16 || N > 256 || K % 16) return "tcgen05.mma with M = 128 needs N a multiple of 16 up to 256 and K of 16";
  if (W % 4 || W > 16 || N % (W / 4) || (N / (W / 4)) % 8)
    return "tcgen05.ld reads the accumulator a warpgroup (4 warps) at a time, so the warps are 4, 8 or 16 and each "
           "warpgroup's share of N a multiple of 8";
  if (ai < 1 || dot->res[0]->uses != 1 || acc->uses != 1 || body->last->opc != OP_YIELD ||
      body->last->opnds[ai - 1] != dot->res[0])
    return "its accumulator is not a value the loop carries from dot to dot";
  if (!pl_is_zero(fop->opnds[3 + ai - 1])) return "its accumulator does not start at zeros (the first MMA overwrites tensor memory)";
  if (fop->block != f->body) return "the loop is not at the kernel's top level (one accumulator in tensor memory, one done mbarrier phase)";
  if (body->args[0]->type->elem.dt != DT_I32) return "the loop counts in 64 bits";
  TOp *sd = fop->opnds[2]->def;
  if (!sd || sd->opc != OP_CONST || sd->ival <= 0) return "the loop's step is not a positive constant";
  if (f->tmem_pair) return "the kernel's tensor memory is a CTA pair's";
  if (f->tmem_cols + N > PB_TMEM_COLUMNS) return "the accumulator's columns do not fit in tensor memory next to the kernel's tmem()";
  return NULL;
}

static void pipeline_dot(Pl *p, TOp *fop, TOp *dot) {
  Ctx *c = p->c;
  TFunc *f = p->f;
  TBlock *body = fop->regions[0];
  Loc loc = dot->loc;
  const char *why = unfit(p, fop, dot);
  if (why) return pl_note(p, loc, "not on tcgen05 (mma.sync instead): %s", why);
  TValue *a = dot->opnds[0], *b = dot->opnds[1], *acc = dot->opnds[2];
  int M = a->type->shape[0], K = a->type->shape[1], N = b->type->shape[1], W = f->warps;
  int ai = acc->index;
  TValue *iv = body->args[0];
  Operand ops[2];
  if (!pl_check_operand(p, a, body, &ops[0], &why, false))
    return pl_note(p, loc, "not on tcgen05 (mma.sync instead): a %s", why);
  if (!pl_check_operand(p, b, body, &ops[1], &why, false))
    return pl_note(p, loc, "not on tcgen05 (mma.sync instead): b %s", why);
  bool tma = ops[0].tma && ops[1].tma;
  for (int i = 0; i < f->nparams && tma; i++)
    if (!strcmp(f->params[i].name, "__dot_a") || !strcmp(f->params[i].name, "__dot_b"))
      tma = false, ops[0].tma = false, ops[0].no_tma = "a parameter is named like the descriptors (__dot_a, __dot_b)";
  /* stages: S slots, copies D = S - 2 iterations ahead (the slot refilled in
   * iteration i was read by the MMAs of i - 2, done by then most often) */
  int64_t stage = ((ops[0].bytes + 1023) & ~1023) + ((ops[1].bytes + 1023) & ~1023);
  int64_t used = pl_smem_in_use(f->body) + 1024; /* the mbarriers (and the TMEM address word) */
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
  Type *ti = ty_dt(c, DT_I32), *tb = ty_dt(c, DT_BOOL);
  TValue *lo = fop->opnds[0], *hi = fop->opnds[1], *step = fop->opnds[2];

  /* at the kernel's entry: the rings, the mbarriers, the descriptors, the accumulator */
  TValue *rings[2], *descs[2] = {0};
  for (int j = 0; j < 2; j++) {
    Type *t = ty_tile(c, ops[j].buf->elem, 2, ops[j].buf->shape);
    t->kind = TY_SMEM, t->swizzle = 128, t->brows = ops[j].buf->brows, t->nbuf = S;
    TOp *al = ir_op(c, OP_SMEM_ALLOC, loc, 0, NULL, 1, (Type *[]){t});
    al->ival2 = ops[j].bytes;
    al->res[0]->name = j ? "<dot B>" : "<dot A>";
    ir_insert_before(f->body->first, al);
    rings[j] = al->res[0];
    if (tma) descs[j] = pl_add_desc(p, &ops[j], j ? "__dot_b" : "__dot_a");
  }
  TValue *full = tma ? pl_bars(p, S, "<dot full>", loc) : NULL;
  TValue *empty = pl_bars(p, S, "<dot empty>", loc), *done = pl_bars(p, 1, "<dot done>", loc);
  int shape[2] = {M, N};
  Type *tt = ty_tile(c, (Elem){DT_F32, 0}, 2, shape);
  tt->kind = TY_TMEM, tt->nbuf = 1;
  TOp *ta = ir_op(c, OP_TMEM_ALLOC, loc, 0, NULL, 1, (Type *[]){tt});
  ta->ival = f->tmem_cols, ta->ival2 = N;
  ta->res[0]->name = "<dot acc>";
  f->tmem_cols += N;
  ir_insert_before(f->body->first, ta);

  /* the prologue: iterations 0 .. D-1 */
  for (int j = 0; j < D; j++) {
    TValue *k = pl_iter(p, fop, fop, j, loc);
    TValue *valid = pl_cmp_lt(p, fop, k, hi, loc), *si = pl_iconst(p, fop, ti, j, loc);
    if (tma) pl_tma_issue(p, fop, ops, 2, rings, descs, full, iv, k, valid, si, fop, true, j, loc);
    else pl_copies_n(p, fop, ops, 2, rings, iv, k, valid, si, fop, true, j, loc);
  }
  /* the body, where the dot was */
  TValue *it = pl_bin(p, dot, OP_DIV, pl_bin(p, dot, OP_SUB, iv, lo, loc), step, loc);
  TValue *sv = pl_iconst(p, dot, ti, S, loc), *two = pl_iconst(p, dot, ti, 2, loc);
  TValue *cur = pl_bin(p, dot, OP_REM, it, sv, loc);
  TValue *ahead = pl_bin(p, dot, OP_ADD, it, pl_iconst(p, dot, ti, D, loc), loc);
  TValue *nxt = pl_bin(p, dot, OP_REM, ahead, sv, loc);
  if (tma) {
    TValue *phase = pl_bin(p, dot, OP_REM, pl_bin(p, dot, OP_DIV, it, sv, loc), two, loc);
    pl_mk(p, dot, OP_BAR_WAIT, loc, 2, (TValue *[]){pl_bar_slot(p, dot, full, cur, loc), phase}, NULL);
  } else {
    TOp *w = pl_mk(p, dot, OP_ASYNC_WAIT, loc, 0, NULL, NULL);
    w->ival = D - 1;
    pl_mk(p, dot, OP_FENCE_ASYNC, loc, 0, NULL, NULL);
    TOp *bar = pl_mk(p, dot, OP_NAMED_BAR, loc, 0, NULL, NULL);
    bar->ival = 0, bar->ival2 = 32 * W;
  }
  TValue *va = pl_as_operand(p, dot, pl_slot(p, dot, rings[0], cur, loc), ops[0].trans, loc);
  TValue *vb = pl_as_operand(p, dot, pl_slot(p, dot, rings[1], cur, loc), ops[1].trans, loc);
  Type *vt = ty_tile(c, (Elem){DT_F32, 0}, 2, shape);
  vt->kind = TY_TMEM;
  TValue *d = pl_mk1(p, dot, OP_SLOT, loc, 2, (TValue *[]){ta->res[0], pl_iconst(p, dot, ti, 0, loc)}, vt);
  TOp *first = pl_mk(p, dot, OP_CMP, loc, 2, (TValue *[]){it, pl_iconst(p, dot, ti, 0, loc)}, tb);
  first->pred = CMP_GT; /* accumulate from the second iteration on */
  TOp *mma = pl_mk(p, dot, OP_TC_MMA, loc, 5,
                   (TValue *[]){va, vb, d, first->res[0], pl_bar_slot(p, dot, empty, cur, loc)}, NULL);
  mma->ival = 1, mma->ival2 = 5;
  /* slot nxt: its use by iteration i + D waits for the MMAs of i + D - S
   * (phase u - 1 of empty[nxt], u = (i + D) / S: parity (u + 1) % 2) */
  TValue *u = pl_bin(p, dot, OP_DIV, ahead, sv, loc);
  TValue *par = pl_bin(p, dot, OP_REM, pl_bin(p, dot, OP_ADD, u, pl_iconst(p, dot, ti, 1, loc), loc), two, loc);
  pl_mk(p, dot, OP_BAR_WAIT, loc, 2, (TValue *[]){pl_bar_slot(p, dot, empty, nxt, loc), par}, NULL);
  TValue *kn = pl_bin(p, dot, OP_ADD, iv, pl_bin(p, dot, OP_MUL, pl_iconst(p, dot, ti, D, loc), step, loc), loc);
  if (tma) pl_tma_issue(p, dot, ops, 2, rings, descs, full, iv, kn, pl_cmp_lt(p, dot, kn, hi, loc), nxt, fop, false, D, loc);
  else pl_copies_n(p, dot, ops, 2, rings, iv, kn, pl_cmp_lt(p, dot, kn, hi, loc), nxt, fop, false, D, loc);
  ir_replace_uses(body, dot->res[0], acc); /* the loop carries the zeros unchanged */
  ir_remove(dot);

  /* after the loop: every MMA done, the accumulator back in registers */
  TValue *res = fop->res[ai - 1];
  TOp *at = fop->next;
  if (!tma) pl_mk(p, at, OP_ASYNC_WAIT, loc, 0, NULL, NULL);
  TValue *bd = pl_bar_slot(p, at, done, pl_iconst(p, at, ti, 0, loc), loc);
  pl_mk(p, at, OP_TC_COMMIT, loc, 1, &bd, NULL);
  pl_mk(p, at, OP_BAR_WAIT, loc, 2, (TValue *[]){bd, pl_iconst(p, at, ti, 0, loc)}, NULL);
  TValue *d2 = pl_mk1(p, at, OP_SLOT, loc, 2, (TValue *[]){ta->res[0], pl_iconst(p, at, ti, 0, loc)}, vt);
  TOp *ldop = pl_mk(p, at, OP_TMEM_LOAD, loc, 1, &d2, acc->type);
  ldop->flags |= OPF_DOT_ACC; /* a store of it writes from the registers (passes.c) */
  TValue *ld = ldop->res[0];
  TValue *ran = pl_cmp_lt(p, at, lo, hi, loc);
  TValue *rant = pl_mk1(p, at, OP_SPLAT, loc, 1, &ran, ty_with_elem(c, acc->type, (Elem){DT_BOOL, 0}));
  /* (the zeros the loop started from, not its result: those are made where they are used) */
  TOp *sel = pl_mk(p, at, OP_SELECT, loc, 3, (TValue *[]){rant, ld, fop->opnds[3 + ai - 1]}, acc->type);
  ir_replace_uses(fop->block, res, sel->res[0]);
  int G = W / 4;
  char rd[96];
  if (G > 1) snprintf(rd, sizeof rd, " (warpgroup g: columns %d g .. %d g + %d)", N / G, N / G, N / G - 1);
  else rd[0] = 0;
  if (tma)
    pl_note(p, loc,
            "pipelined on tcgen05: %d stages (TMA %d iterations ahead), a [%d, %d] %s-major and b [%d, %d] %s-major "
            "into 128-byte swizzled shared memory (%lld bytes) from descriptors the runtime builds at launch (__dot_a, "
            "__dot_b), tcgen05.mma m128n%dk16 kind::f16 issued by one thread into a [128, %d] f32 accumulator in "
            "tensor memory (columns %d..%d), each slot freed by the commit of the MMAs that read it; read back after "
            "the loop by tcgen05.ld 32x32b on %d warps%s",
            S, D, M, K, ops[0].trans ? "M" : "K", K, N, ops[1].trans ? "K" : "N", (long long)(S * stage), N, N,
            (int)ta->ival, (int)ta->ival + N - 1, W, rd);
  else
    pl_note(p, loc,
            "pipelined on tcgen05: %d stages (copies %d iterations ahead), a [%d, %d] %s-major and b [%d, %d] %s-major "
            "through cp.async into 128-byte swizzled shared memory (%lld bytes), tcgen05.mma m128n%dk16 kind::f16 "
            "issued by one thread into a [128, %d] f32 accumulator in tensor memory (columns %d..%d), each slot freed "
            "by the commit of the MMAs that read it; read back after the loop by tcgen05.ld 32x32b on %d warps%s "
            "(not TMA: %s %s)",
            S, D, M, K, ops[0].trans ? "M" : "K", K, N, ops[1].trans ? "K" : "N", (long long)(S * stage), N, N,
            (int)ta->ival, (int)ta->ival + N - 1, W, rd, ops[0].tma ? "b" : "a",
            ops[0].tma ? ops[1].no_tma : ops[0].no_tma);
  if (tma) pl_tma_epilogue(p, sel, rings[1], S * ((ops[1].bytes + 1023) & ~(int64_t)1023), W, loc);
}

void pb_run(Ctx *c, TFunc *f) {
  Pl p = {c, f};
  pl_count_uses(f);
  TOp *fop, *dot = pl_first_loop_dot(f, &fop);
  if (!dot) return;
  pipeline_dot(&p, fop, dot);
}

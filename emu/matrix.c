/* matrix.c - the warp's and warpgroup's matrix instructions under the
 * emulator (issue 16): stmatrix and ldmatrix (warp collectives), and the
 * asynchronous side of wgmma.mma_async (a warpgroup collective) around
 * em_wgmma_run (wgmma.c), which computes one.
 *
 * stmatrix/ldmatrix .m8n8.xR.b16 (PTX ISA, "Warp-level matrix store/load
 * instructions"): R 8x8 matrices of 16-bit elements; lane 8i + r gives the
 * shared address of row r of matrix i (16 contiguous bytes); lane l holds,
 * in its register i, elements (l / 4, 2 (l % 4)) (low half) and
 * (l / 4, 2 (l % 4) + 1) of matrix i. With .trans the matrix in memory is
 * the transpose: the element at (row, col) of the fragment is at row col,
 * column row of memory.
 *
 * wgmma: the 128 threads of a warpgroup meet at wgmma.mma_async; the
 * operation is queued with what it reads at issue (descriptors, scale-d,
 * the RS form's A registers) and run when a wgmma.wait_group of the
 * warpgroup needs it: its shared-memory operands are read then, the latest
 * moment the hardware may read them, so that a kernel that lets a
 * producer overwrite a stage before waiting gets the wrong numbers here
 * too. The accumulators are read and written at that moment as well;
 * until then they hold EM_WG_POISON, so that a thread reading one before
 * its wait_group is reported.
 * commit_group and wait_group count per thread (the ISA's warp-level
 * .sync): an operation belongs to the group its threads' next commit
 * closes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "exec_int.h"

/* ---- stmatrix / ldmatrix ---- */

static int32_t reg_of(const EmArg *a, int i) { return a->kind == EA_LVEC ? a->lv[i] : a->vec[i]; }

static void ldst_matrix(Cta *c, Thr *t, const EmIns *in) {
  unsigned w0 = t->warp * 32;
  bool st = in->opc == EM_STMATRIX, tr = (in->mod & EMM_TRANS) != 0;
  const EmArg *ad = &in->a[st ? 0 : 1], *rv = &in->a[st ? 1 : 0];
  uint8_t *row[4][8];
  for (int i = 0; i < in->rank; i++)
    for (int r = 0; r < 8; r++) {
      uint32_t a;
      const Thr *o = &c->t[w0 + 8 * i + r];
      if (!em_smem_at(c, (Thr *)o, in, (EmSpace)in->space, ad, 16, 16, "a matrix row", &a)) return;
      if (!(st ? em_chk_write : em_chk_read)(c, o, in, a, 16)) return;
      row[i][r] = c->smem + a;
    }
  uint32_t v[32][4];
  for (unsigned l = 0; l < 32; l++)
    for (int i = 0; i < in->rank; i++) {
      int rr = (int)l / 4, cc = 2 * ((int)l % 4);
      uint16_t *p0 = (uint16_t *)(void *)(tr ? row[i][cc] + 2 * rr : row[i][rr] + 2 * cc);
      uint16_t *p1 = (uint16_t *)(void *)(tr ? row[i][cc + 1] + 2 * rr : row[i][rr] + 2 * cc + 2);
      if (st) {
        uint32_t x = (uint32_t)c->t[w0 + l].r[reg_of(rv, i)];
        uint16_t lo = (uint16_t)x, hi = (uint16_t)(x >> 16);
        memcpy(p0, &lo, 2), memcpy(p1, &hi, 2);
      } else {
        uint16_t lo, hi;
        memcpy(&lo, p0, 2), memcpy(&hi, p1, 2);
        v[l][i] = (uint32_t)hi << 16 | lo;
      }
    }
  if (!st) /* written after every address is read: a destination may be an address register */
    for (unsigned l = 0; l < 32; l++)
      for (int i = 0; i < in->rank; i++) c->t[w0 + l].r[reg_of(rv, i)] = v[l][i];
}

/* ---- wgmma ---- */

/* Issue: the 128 threads of t's warpgroup stand at this wgmma.mma_async. */
static void wgmma_issue(Cta *c, Thr *t, const EmIns *in) {
  unsigned t0 = t->warp / 4 * 128;
  Thr *g = &c->t[t0];
  const EmArg *a = in->a;
  bool rs = a[1].kind == EA_VEC;
  EmWgOp op = {.in = in, .group = g->wg_groups};
  op.w = (EmWgmma){.n = in->rank * 8, .atype = (EmType)in->type2, .btype = (EmType)in->type2, .a_regs = rs,
                   .adesc = rs ? 0 : em_src(c, g, &a[1], ET_B64), .bdesc = em_src(c, g, &a[2], ET_B64),
                   .scale_d = em_src(c, g, &a[3], ET_PRED) != 0, .scale_a = (int)a[4].imm, .scale_b = (int)a[5].imm,
                   .trans_a = rs ? 0 : (int)a[6].imm, .trans_b = (int)a[rs ? 6 : 7].imm};
  if ((op.w.scale_a != 1 && op.w.scale_a != -1) || (op.w.scale_b != 1 && op.w.scale_b != -1) ||
      (unsigned)op.w.trans_a > 1 || (unsigned)op.w.trans_b > 1) {
    em_fail(c, t, in, "wgmma.mma_async: imm-scale must be 1 or -1, imm-trans 0 or 1");
    return;
  }
  for (unsigned k = 0; k < 128; k++) { /* what the warpgroup gives must agree */
    Thr *o = &c->t[t0 + k];
    if (o->wg_groups != g->wg_groups) {
      em_fail(c, o, in, "wgmma.mma_async: threads of warpgroup %u have committed different numbers of wgmma groups "
              "(%d and %d)", t0 / 128, o->wg_groups, g->wg_groups);
      return;
    }
    if ((!rs && em_src(c, o, &a[1], ET_B64) != op.w.adesc) || em_src(c, o, &a[2], ET_B64) != op.w.bdesc ||
        (em_src(c, o, &a[3], ET_PRED) != 0) != op.w.scale_d) {
      em_fail(c, o, in, "wgmma.mma_async: the descriptors or scale-d differ across warpgroup %u", t0 / 128);
      return;
    }
  }
  if (rs) {
    if (!(op.a = malloc(sizeof *op.a * 128))) {
      em_fail(c, t, in, "out of memory");
      return;
    }
    for (unsigned k = 0; k < 128; k++)
      for (int j = 0; j < 4; j++) op.a[k][j] = (uint32_t)c->t[t0 + k].r[a[1].vec[j]];
  }
  /* the accumulators: kept, and poisoned until the wait runs the operation */
  int nd = op.w.n / 2;
  if (!(op.d = malloc(sizeof *op.d * 128 * (size_t)nd))) {
    free(op.a);
    em_fail(c, t, in, "out of memory");
    return;
  }
  for (unsigned k = 0; k < 128; k++)
    for (int i = 0; i < nd; i++) {
      uint64_t *r = &c->t[t0 + k].r[reg_of(&a[0], i)];
      op.d[k * (unsigned)nd + (unsigned)i] = *r;
      *r = EM_WG_POISON;
    }
  if (!em_chk_wgmma_issue(c, t0, &op)) {
    free(op.a), free(op.d);
    return;
  }
  EmWgQueue *q = &c->wg[t0 / 128];
  if (q->n == q->cap) {
    int cap = q->cap ? 2 * q->cap : 16;
    EmWgOp *nq = realloc(q->op, sizeof *nq * (size_t)cap);
    if (!nq) {
      free(op.a), free(op.d);
      em_fail(c, t, in, "out of memory");
      return;
    }
    q->op = nq, q->cap = cap;
  }
  q->op[q->n++] = op;
}

/* Run operation q->op[x] of the warpgroup at t0. Its accumulators: as at
 * issue, or (poison there: an earlier operation of the chain was pending)
 * as that operation delivered them, which run first. Each result goes to
 * the next pending operation that took the register poisoned (in place of
 * its poison), or, when none did, to the register. */
static bool wgmma_run(Cta *c, unsigned t0, EmWgQueue *q, int x) {
  EmWgOp *op = &q->op[x];
  const EmArg *d = &op->in->a[0];
  int nd = op->w.n / 2;
  if (!c->wgd && !(c->wgd = malloc(sizeof *c->wgd * 128))) {
    em_fail(c, &c->t[t0], op->in, "out of memory");
    return false;
  }
  for (unsigned k = 0; k < 128; k++)
    for (int i = 0; i < nd; i++) {
      uint64_t v = op->d[k * (unsigned)nd + (unsigned)i];
      c->wgd[k][i] = (uint32_t)(v == EM_WG_POISON ? c->t[t0 + k].r[reg_of(d, i)] : v);
    }
  char why[256];
  if (!em_wgmma_run(&op->w, c->smem, c->smem_size, (const uint32_t(*)[4])op->a, c->wgd, why, sizeof why)) {
    em_fail(c, &c->t[t0], op->in, "wgmma.mma_async of warpgroup %u: %s", t0 / 128, why);
    return false;
  }
  for (int i = 0; i < nd; i++) {
    int32_t r = reg_of(d, i);
    EmWgOp *next = NULL;
    int j = -1;
    for (int y = x + 1; y < q->n && !next; y++) { /* the register in a later operation (same place first) */
      const EmArg *yd = &q->op[y].in->a[0];
      int ynd = q->op[y].w.n / 2;
      j = i < ynd && reg_of(yd, i) == r ? i : -1;
      for (int jj = 0; j < 0 && jj < ynd; jj++)
        if (reg_of(yd, jj) == r) j = jj;
      if (j >= 0 && q->op[y].d[j] == EM_WG_POISON) next = &q->op[y];
    }
    for (unsigned k = 0; k < 128; k++) {
      if (next) next->d[k * (unsigned)(next->w.n / 2) + (unsigned)j] = c->wgd[k][i];
      else c->t[t0 + k].r[r] = c->wgd[k][i];
    }
  }
  return true;
}

/* wgmma.wait_group N by t: every operation of its warpgroup in a group
 * older than t's N most recent commits runs now, in issue order. */
static void wgmma_wait(Cta *c, Thr *t, const EmIns *in) {
  int64_t keep = in->a[0].imm;
  if (keep < 0 || keep > 7) {
    em_fail(c, t, in, "wgmma.wait_group %lld (0 to 7)", (long long)keep);
    return;
  }
  unsigned t0 = t->warp / 4 * 128;
  EmWgQueue *q = &c->wg[t0 / 128];
  int below = t->wg_groups - (int)keep, k = 0;
  for (int i = 0; i < q->n; i++) {
    EmWgOp *op = &q->op[i];
    if (op->group < below && !c->failed) {
      wgmma_run(c, t0, q, i);
      free(op->a), free(op->d);
    } else {
      q->op[k++] = *op;
    }
  }
  q->n = k;
  em_chk_wgmma_wait(c, t, below);
}

void em_matrix_finish(Cta *c, Thr *t, const EmIns *in) {
  bool wg = in->opc == EM_WGMMA;
  unsigned t0 = wg ? t->warp / 4 * 128 : t->warp * 32, nt = wg ? 128 : 32;
  if (wg) wgmma_issue(c, t, in);
  else ldst_matrix(c, t, in);
  if (c->failed) return;
  for (unsigned k = 0; k < nt; k++) {
    c->t[t0 + k].state = T_RUN;
    c->t[t0 + k].pc++;
  }
}

void em_matrix_step(Cta *c, Thr *t, const EmIns *in) {
  switch ((EmOpc)in->opc) {
  case EM_WG_COMMIT:
    t->wg_groups++;
    break;
  case EM_WG_WAIT:
    wgmma_wait(c, t, in);
    if (c->failed) return;
    break;
  default:
    em_fail(c, t, in, "the emulator cannot run this instruction yet");
    return;
  }
  t->pc++;
}

bool em_matrix_end(Cta *c) {
  for (int g = 0; g < c->nwg; g++) {
    EmWgQueue *q = &c->wg[g];
    if (q->n) {
      em_fail(c, &c->t[g * 128], q->op[0].in,
              "warpgroup %d ended with %d wgmma.mma_async never waited for (wgmma.wait_group)", g, q->n);
      return false;
    }
  }
  return true;
}

/* Free what a CTA's queues hold (between CTAs and at the end). */
void em_matrix_reset(Cta *c) {
  for (int g = 0; g < c->nwg; g++) {
    for (int i = 0; i < c->wg[g].n; i++) free(c->wg[g].op[i].a), free(c->wg[g].op[i].d);
    c->wg[g].n = 0;
  }
}

/* matrix.c - the warp's and warpgroup's collectives under the emulator
 * (issue 16): the warp collectives of the core set (shfl.sync, redux.sync,
 * vote.sync, mma.sync; exec.c's em_step waits on em_matrix_coll_ready and
 * runs em_matrix_coll_finish), stmatrix and ldmatrix (warp collectives),
 * and the asynchronous side of wgmma.mma_async (a warpgroup collective)
 * around em_wgmma_run (wgmma.c), which computes one.
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

/* ---- collectives: shfl.sync, redux.sync, vote.sync, mma.sync ---- */

/* Every thread of the member mask (in t's warp) waits at this pc: compute. */
bool em_matrix_coll_ready(Cta *c, Thr *t) {
  unsigned w0 = t->warp * 32;
  if (t->cwg) { /* the warpgroup's 128 threads */
    unsigned t0 = t->warp / 4 * 128;
    if (t0 + 128 > (unsigned)c->n) return false;
    for (unsigned k = 0; k < 128; k++)
      if (c->t[t0 + k].state != T_COLL || c->t[t0 + k].pc != t->pc) return false;
    return true;
  }
  for (unsigned l = 0; l < 32; l++) {
    if (!(t->cmask >> l & 1)) continue;
    if (w0 + l >= (unsigned)c->n) return false;
    Thr *o = &c->t[w0 + l];
    if (o->state != T_COLL || o->pc != t->pc) return false;
  }
  return true;
}

/* mma.sync.aligned.m16n8k16.row.col.f32.X.X.f32 (X = in->type2, bf16 or
 * f16) for the warp at w0: D (16x8) = A (16x16) * B (16x8) + C, each lane
 * holding the pieces that the PTX ISA's "Matrix Fragments for mma.m16n8k16
 * with floating point type" gives it (groupID g = lane >> 2,
 * threadID_in_group q = lane % 4; element i of a vector is its register
 * i / 2 for A and B, low half first, register i for C and D):
 *   A a0..a7: row g for i in {0, 1, 4, 5}, else g + 8;  col 2q + (i & 1), + 8 for i >= 4
 *   B b0..b3: row (k) 2q + (i & 1), + 8 for i >= 2;     col (n) g
 *   C, D c0..c3: row g for i < 2, else g + 8;           col 2q + (i & 1)
 * The lanes' registers are read here, at completion, rather than stashed
 * on arrival: a lane blocked at the collective runs nothing, so they still
 * hold what it brought. Every product of two bf16 or f16 values is exact in
 * a double, and each D element is their sum plus C's, computed in double
 * and rounded once to f32 -- the GPU's summation order and intermediate
 * rounding are unspecified, so a result may differ from it in the last
 * bits of an f32. d gets the lanes' D registers (written by the caller,
 * after everything is read, since D may share registers with A, B or C). */
static void mma_m16n8k16(const Cta *c, unsigned w0, const EmIns *in, uint32_t d[32][4]) {
  double A[16][16], B[16][8], C[16][8];
  bool f16 = in->type2 == ET_F16;
  for (unsigned l = 0; l < 32; l++) {
    const Thr *o = &c->t[w0 + l];
    int g = (int)l >> 2, q = (int)l % 4;
    for (int i = 0; i < 8; i++) {
      uint16_t h = (uint16_t)(o->r[in->a[1].vec[i / 2]] >> (16 * (i & 1)));
      A[(i < 2 || (i >= 4 && i < 6)) ? g : g + 8][2 * q + (i & 1) + (i >= 4 ? 8 : 0)] = f16 ? em_f32_of_f16(h) : em_f32_of_bf16(h);
    }
    for (int i = 0; i < 4; i++) {
      uint16_t h = (uint16_t)(o->r[in->a[2].vec[i / 2]] >> (16 * (i & 1)));
      B[2 * q + (i & 1) + (i >= 2 ? 8 : 0)][g] = f16 ? em_f32_of_f16(h) : em_f32_of_bf16(h);
    }
    for (int i = 0; i < 4; i++) C[i < 2 ? g : g + 8][2 * q + (i & 1)] = em_f32_of(o->r[in->a[3].vec[i]]);
  }
  for (unsigned l = 0; l < 32; l++) {
    int g = (int)l >> 2, q = (int)l % 4;
    for (int i = 0; i < 4; i++) {
      int row = i < 2 ? g : g + 8, col = 2 * q + (i & 1);
      double s = C[row][col];
      for (int k = 0; k < 16; k++) s += A[row][k] * B[k][col];
      d[l][i] = (uint32_t)em_bits_of_f32((float)s);
    }
  }
}

void em_matrix_coll_finish(Cta *c, Thr *t, const EmIns *in) {
  unsigned w0 = t->warp * 32;
  uint32_t mask = t->cmask;
  for (unsigned l = 0; l < 32; l++) {
    if (!(mask >> l & 1)) continue;
    Thr *o = &c->t[w0 + l];
    if (o->cmask != mask) {
      em_fail(c, o, in, "warp collective with member masks that disagree (0x%08x and 0x%08x)", mask, o->cmask);
      return;
    }
  }
  if (in->opc == EM_STMATRIX || in->opc == EM_LDMATRIX || in->opc == EM_WGMMA) {
    em_matrix_finish(c, t, in);
    return;
  }
  if (in->opc == EM_SETMAXNREG) {
    em_reg_finish(c, t, in);
    return;
  }
  if (in->opc >= EM_TC_ALLOC && in->opc <= EM_TC_FENCE) {
    em_tc_finish(c, t, in);
    return;
  }
  uint64_t red = 0;
  uint32_t d[32][4];
  if (in->opc == EM_MMA) mma_m16n8k16(c, w0, in, d);
  if (in->opc == EM_REDUX && in->type != ET_U32 && in->type != ET_S32 && in->type != ET_B32) {
    em_fail(c, t, in, "the emulator cannot run this reduction's type yet");
    return;
  }
  if (in->opc == EM_REDUX || in->opc == EM_VOTE) {
    bool first = true, v0 = false, uni = true; /* vote.uni: every lane's value equals the first's */
    for (unsigned l = 0; l < 32; l++) {
      if (!(mask >> l & 1)) continue;
      uint64_t v = c->t[w0 + l].cval;
      bool s = in->type == ET_S32;
      if (in->opc == EM_VOTE) {
        if (in->sub == ESB_BALLOT) red |= (uint64_t)(v != 0) << l;
        else if (in->sub == ESB_VUNI) {
          if (first) v0 = v != 0;
          uni = uni && (v != 0) == v0;
          red = uni;
        } else if (first) red = v != 0;
        else if (in->sub == ESB_ALL) red = red && v;
        else if (in->sub == ESB_ANY) red = red || v;
      } else if (first) red = v & 0xffffffffu;
      else switch (in->sub) {
        case ESB_ADD: red = (red + v) & 0xffffffffu; break;
        case ESB_MIN: red = s ? ((int32_t)v < (int32_t)red ? v : red) : (v < red ? v : red); break;
        case ESB_MAX: red = s ? ((int32_t)v > (int32_t)red ? v : red) : (v > red ? v : red); break;
        case ESB_AND: red &= v; break;
        case ESB_OR: red |= v; break;
        case ESB_XOR: red ^= v; break;
        default: break;
        }
      first = false;
    }
  }
  for (unsigned l = 0; l < 32; l++) {
    if (!(mask >> l & 1)) continue;
    Thr *o = &c->t[w0 + l];
    if (in->opc == EM_SHFL) {
      /* shfl.sync.mode.b32 d[|p], a, b, c, membermask: c packs the clamp (bits 0-4) and segment mask (8-12) */
      uint32_t b = (uint32_t)o->cval2 & 31, cc = (uint32_t)(o->cval2 >> 32);
      uint32_t clamp = cc & 31, segmask = (cc >> 8) & 31;
      uint32_t maxl = (l & segmask) | (clamp & ~segmask), minl = l & segmask, j = l;
      bool ok = true;
      switch (in->sub) {
      case ESB_UP: j = l - b; ok = (int)j >= (int)maxl; break;
      case ESB_DOWN: j = l + b; ok = j <= maxl; break;
      case ESB_BFLY: j = l ^ b; ok = j <= maxl; break;
      default: j = minl | (b & ~segmask); ok = j <= maxl; break;
      }
      if (!ok || j > 31 || !(mask >> j & 1)) j = l;
      em_dst(o, &in->a[0], ET_B32, c->t[w0 + j].cval);
      if (in->a[1].kind == EA_REG && in->nargs == 6) em_dst(o, &in->a[1], ET_PRED, ok);
    } else if (in->opc == EM_MMA) {
      for (int i = 0; i < 4; i++)
        if (in->a[0].vec[i] >= 0) o->r[in->a[0].vec[i]] = d[l][i];
    } else {
      em_dst(o, &in->a[0], in->opc == EM_VOTE && in->sub != ESB_BALLOT ? ET_PRED : ET_B32, red);
    }
    o->state = T_RUN;
    o->pc++;
  }
}

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

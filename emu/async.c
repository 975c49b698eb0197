/* async.c - Hopper's asynchronous copy engine and its barriers, run by the
 * emulator (issue 16): mbarriers, cp.async.bulk.tensor (TMA) loads, stores
 * and reductions, bulk groups, bulk copies into the cluster, setmaxnreg.
 *
 * mbarrier (PTX ISA, "Parallel Synchronization and Communication
 * Instructions: mbarrier"): an object in shared memory with an expected
 * arrival count, the arrivals pending in the current phase, a transaction
 * count and a phase number. A phase completes when its pending arrivals
 * and its transaction count are both zero; the barrier then moves to the
 * next phase with the expected count pending again. arrive.expect_tx first
 * raises the transaction count, then arrives; a TMA load's complete_tx
 * lowers it by the bytes it wrote. try_wait.parity P is true once the
 * phase of parity P has completed, i.e. while the current phase's parity
 * differs from P; a try_wait that would return false blocks the thread
 * instead (T_MBAR) until the barrier's phase completes, so that a spinning
 * warp costs nothing and a barrier that never completes is a deadlock
 * reported with its state, not a hang.
 *
 * TMA: a copy is queued when issued and done at a later scheduling point
 * (exec's round end, delayed by up to two rounds under a seed), or for a
 * store when its thread waits for its bulk group, and in any case before
 * the CTA ends. The box is read or written then, element by element: the
 * global coordinate of box element i in dimension d is c[d] + i * estr[d];
 * elements outside the tensor are filled (zero, or NaN for the NaN fill) on
 * a load and dropped on a store; in shared memory the box is dense, its
 * first dimension innermost, each byte address swizzled as em_swizzle says.
 * A load signals the full box's bytes (out-of-bounds elements included) to
 * its mbarrier. Reductions combine in the tensor's element type.
 */
#include <stdio.h>
#include <stdlib.h>

#include "exec_int.h"

/* ---- addresses ---- */

/* A shared-memory operand: its offset in the window of *owner (a .shared
 * address, or a generic one inside the window; a shared::cluster address
 * names another CTA of the cluster), `bytes` of it inside, aligned. With
 * owner NULL only the executing CTA's own window is taken. */
static bool smem_at(Cta *c, Thr *t, const EmIns *in, EmSpace sp, const EmArg *ad, size_t bytes, uint32_t align,
                    const char *what, uint32_t *out, Cta **owner) {
  uint64_t a;
  if (!em_addr_of(c, t, in, ad, &a)) return false;
  if (sp != ES_SHARED) {
    if (a < EM_SMEM_GENERIC || a >= EM_SMEM_GENERIC + (1ull << 32)) {
      em_fail(c, t, in, "%s at 0x%llx is not in shared memory", what, (unsigned long long)a);
      return false;
    }
    a -= EM_SMEM_GENERIC;
  }
  uint64_t tagged = a;
  Cta *o = em_clu_owner(c, t, in, &a);
  if (!o) return false;
  if (owner) *owner = o;
  else if (o != c) {
    em_fail(c, t, in, "%s at shared::cluster address 0x%llx is in CTA rank %d's window, not this CTA's", what,
            (unsigned long long)tagged, o->rank);
    return false;
  }
  c = o;
  if (a % align) {
    em_fail(c, t, in, "%s at smem+0x%llx is not %u-byte aligned", what, (unsigned long long)a, align);
    return false;
  }
  if (a >= c->smem_size || bytes > c->smem_size - a) {
    em_fail(c, t, in, "%s at smem+0x%llx (%zu bytes) outside the CTA's %zu bytes of shared memory", what,
            (unsigned long long)a, bytes, c->smem_size);
    return false;
  }
  *out = (uint32_t)a;
  return true;
}

bool em_smem_at(Cta *c, Thr *t, const EmIns *in, EmSpace sp, const EmArg *ad, size_t bytes, uint32_t align,
                const char *what, uint32_t *out) {
  return smem_at(c, t, in, sp, ad, bytes, align, what, out, NULL);
}

bool em_smem_at_cluster(Cta *c, Thr *t, const EmIns *in, EmSpace sp, const EmArg *ad, size_t bytes, uint32_t align,
                        const char *what, uint32_t *out, Cta **owner) {
  *owner = c;
  return smem_at(c, t, in, sp, ad, bytes, align, what, out, owner);
}

/* ---- mbarriers ---- */

static EmMbar *mb_find(Cta *c, uint32_t addr) {
  for (int i = 0; i < c->nmb; i++)
    if (c->mb[i].addr == addr) return &c->mb[i];
  return NULL;
}

/* The initialized mbarrier an operand names (else a report), in *owner's
 * window (another CTA's for a shared::cluster address; owner NULL: only
 * the executing CTA's). */
static EmMbar *mb_of(Cta *c, Thr *t, const EmIns *in, EmSpace sp, const EmArg *ad, Cta **owner) {
  uint32_t addr;
  Cta *o = c;
  if (!smem_at(c, t, in, sp, ad, 8, 8, "the mbarrier", &addr, owner ? &o : NULL)) return NULL;
  if (owner) *owner = o;
  EmMbar *b = mb_find(o, addr);
  if (!b && o != c)
    em_fail(c, t, in, "smem+0x%x of CTA rank %d is not an mbarrier (no mbarrier.init set it up)", addr, o->rank);
  else if (!b)
    em_fail(c, t, in, "smem+0x%x is not an mbarrier (no mbarrier.init set it up)", addr);
  return b;
}

/* Its phase completes when nothing is pending: the next phase starts, its
 * waiters run again (and look at the phase once more). */
static void mb_settle(Cta *c, EmMbar *b) {
  if (b->pending || b->tx) return;
  em_chk_mbar_complete(c, b);
  for (int r = 0; r < 16; r++) /* what its arrivals released across the cluster (check.c) */
    b->xdone[r] = b->xacc[r] > b->xdone[r] ? b->xacc[r] : b->xdone[r], b->xacc[r] = 0;
  b->phase++;
  b->pending = b->count;
  if (!b->waiters) return;
  for (int i = 0; i < c->n; i++)
    if (c->t[i].state == T_MBAR && c->t[i].mbar == b->addr) c->t[i].state = T_RUN;
  b->waiters = 0;
}

/* The transaction count stays within the ISA's range, 2^20 - 1 either way. */
static bool mb_tx(Cta *c, const Thr *t, const EmIns *in, EmMbar *b, int64_t d) {
  b->tx += d;
  if (b->tx > 0xfffff || b->tx < -0xfffff) {
    char nm[160];
    em_fail(c, t, in, "mbarrier: %s: transaction count %lld outside +-(2^20 - 1)", em_mbar_name(c, b, nm, sizeof nm),
            (long long)b->tx);
    return false;
  }
  return true;
}

void em_mbar_waits(const Cta *c, const Thr *t, char *buf, size_t n) {
  const EmMbar *b = NULL;
  for (int i = 0; i < c->nmb && !b; i++)
    if (c->mb[i].addr == t->mbar) b = &c->mb[i];
  if (!b) {
    snprintf(buf, n, "an mbarrier at smem+0x%x", t->mbar);
    return;
  }
  char nm[160];
  snprintf(buf, n,
           "the mbarrier %s to complete a phase of parity %d (it is in phase %u: pending arrivals %u of "
           "%u, tx bytes %lld)",
           em_mbar_name(c, b, nm, sizeof nm), t->mbar_parity, b->phase, b->pending, b->count, (long long)b->tx);
}

static void mbar_step(Cta *c, Thr *t, const EmIns *in) {
  const EmArg *a = in->a;
  if (in->opc == EM_MBAR_INIT) {
    uint32_t addr;
    uint64_t count = em_src(c, t, &a[1], ET_U32);
    if (!em_smem_at(c, t, in, (EmSpace)in->space, &a[0], 8, 8, "the mbarrier", &addr)) return;
    if (count < 1 || count > 0xfffff) {
      em_fail(c, t, in, "mbarrier.init with a count of %llu (1 to 2^20 - 1)", (unsigned long long)count);
      return;
    }
    EmMbar *b = mb_find(c, addr);
    if (!b) {
      if (c->nmb == c->capmb) {
        int cap = c->capmb ? 2 * c->capmb : 16;
        EmMbar *nb = realloc(c->mb, sizeof *nb * (size_t)cap);
        if (!nb) {
          em_fail(c, t, in, "out of memory");
          return;
        }
        c->mb = nb, c->capmb = cap;
      }
      b = &c->mb[c->nmb++];
      *b = (EmMbar){.addr = addr};
    }
    if (b->waiters) {
      em_fail(c, t, in, "mbarrier.init of the mbarrier at smem+0x%x while %d threads wait on it", addr, b->waiters);
      return;
    }
    *b = (EmMbar){.addr = addr, .count = (uint32_t)count, .pending = (uint32_t)count, .init_in = in};
    em_chk_mbar_init(c, b);
    t->pc++;
    return;
  }
  /* arrive and expect_tx may name another CTA's mbarrier (shared::cluster): o, unchecked by check.c */
  Cta *o = c;
  EmMbar *b = mb_of(c, t, in, (EmSpace)in->space, &a[in->opc == EM_MBAR_EXPECT_TX ? 0 : 1],
                    in->opc == EM_MBAR_WAIT ? NULL : &o);
  if (!b) return;
  if (o != c && in->opc == EM_MBAR_ARRIVE && a[0].kind != EA_SINK) {
    em_fail(c, t, in, "an arrival on CTA rank %d's mbarrier returns no state: its destination must be _", o->rank);
    return;
  }
  switch ((EmOpc)in->opc) {
  case EM_MBAR_EXPECT_TX:
    b->exp_in = in, b->exp_thr = (int)(t - c->t);
    if (!mb_tx(c, t, in, b, (int64_t)em_src(c, t, &a[1], ET_U32))) return;
    mb_settle(o, b);
    break;
  case EM_MBAR_ARRIVE: {
    uint64_t n = 1;
    if (in->mod & EMM_EXPECT_TX) {
      b->exp_in = in, b->exp_thr = (int)(t - c->t);
      if (!mb_tx(c, t, in, b, (int64_t)em_src(c, t, &a[2], ET_U32))) return;
    } else if (in->nargs > 2) {
      n = em_src(c, t, &a[2], ET_U32);
    }
    if (n < 1 || n > b->pending) {
      char nm[160];
      em_fail(c, t, in, "mbarrier: %s: %llu arrival%s in phase %u, which has %u of %u pending: more arrivals than the "
              "phase expects", em_mbar_name(c, b, nm, sizeof nm), (unsigned long long)n, n == 1 ? "" : "s", b->phase,
              b->pending, b->count);
      return;
    }
    if (o == c && !em_chk_mbar_arrive(c, t, in, b)) return;
    em_chk_x_release(c, t, b->xacc);
    em_dst(t, &a[0], ET_B64, b->phase); /* the state: the phase it arrived in */
    b->pending -= (uint32_t)n;
    mb_settle(o, b);
    break;
  }
  case EM_MBAR_WAIT: {
    /* parity P: done once the current phase's parity differs; a state: once the phase moved on */
    uint64_t v = em_src(c, t, &a[2], ET_U64);
    int parity = (in->mod & EMM_PARITY) ? (int)(v & 1) : (int)(v & 1);
    bool done = (in->mod & EMM_PARITY) ? (b->phase & 1) != (uint32_t)parity : b->phase != (uint32_t)v;
    if (!done && !(in->mod & EMM_TEST)) {
      t->state = T_MBAR;
      t->mbar = b->addr;
      t->mbar_parity = parity;
      b->waiters++;
      return; /* the pc stays: it asks again when woken */
    }
    if (done) em_chk_mbar_acquire(c, t, b), em_chk_x_acquire(t, b->xdone);
    em_dst(t, &a[0], ET_PRED, done);
    break;
  }
  default:
    break;
  }
  t->pc++;
}

/* ---- TMA ---- */

/* Combine an element of global memory (g) with one from shared (s) in the
 * tensor's type; false for a reduction the type does not have. */
static bool reduce(int dtype, int op, uint8_t *g, const uint8_t *s) {
  if (dtype == 6 || dtype == 9 || dtype == 7 || dtype == 10 || dtype == 8) { /* f16, bf16, f32, f64 */
    double x, y, r;
    uint16_t hx, hy;
    float fx, fy;
    if (dtype == 8) memcpy(&x, g, 8), memcpy(&y, s, 8);
    else if (dtype == 7 || dtype == 10) memcpy(&fx, g, 4), memcpy(&fy, s, 4), x = fx, y = fy;
    else {
      memcpy(&hx, g, 2), memcpy(&hy, s, 2);
      x = dtype == 6 ? em_f32_of_f16(hx) : em_f32_of_bf16(hx);
      y = dtype == 6 ? em_f32_of_f16(hy) : em_f32_of_bf16(hy);
    }
    if (op == ESB_ADD) r = x + y;
    else if (op == ESB_MIN) r = fmin(x, y);
    else if (op == ESB_MAX) r = fmax(x, y);
    else return false;
    if (dtype == 8) memcpy(g, &r, 8);
    else if (dtype == 7 || dtype == 10) fx = (float)r, memcpy(g, &fx, 4);
    else hx = dtype == 6 ? em_f16_of((float)r) : em_bf16_of((float)r), memcpy(g, &hx, 2);
    return true;
  }
  if (dtype > 5) return false; /* tf32 */
  int bytes = dtype == 0 ? 1 : dtype == 1 ? 2 : dtype <= 3 ? 4 : 8;
  bool sgn = dtype == 3 || dtype == 5;
  uint64_t x = 0, y = 0, r, mask = bytes == 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
  memcpy(&x, g, (size_t)bytes), memcpy(&y, s, (size_t)bytes);
  int64_t sx = sgn ? (int64_t)(x << (64 - 8 * bytes)) >> (64 - 8 * bytes) : (int64_t)x;
  int64_t sy = sgn ? (int64_t)(y << (64 - 8 * bytes)) >> (64 - 8 * bytes) : (int64_t)y;
  switch (op) {
  case ESB_ADD: r = x + y; break;
  case ESB_MIN: r = sgn ? (sx < sy ? x : y) : (x < y ? x : y); break;
  case ESB_MAX: r = sgn ? (sx > sy ? x : y) : (x > y ? x : y); break;
  case ESB_INC: r = x >= y ? 0 : x + 1; break;
  case ESB_DEC: r = (x == 0 || x > y) ? y : x - 1; break;
  case ESB_AND: r = x & y; break;
  case ESB_OR: r = x | y; break;
  case ESB_XOR: r = x ^ y; break;
  default: return false;
  }
  r &= mask;
  memcpy(g, &r, (size_t)bytes);
  return true;
}

static bool remote_written(void *c, uint32_t a, uint32_t n) {
  em_chk_remote_write(c, NULL, a, n); /* ordered through the mbarrier it completes on */
  return true;
}

/* When a queued copy may complete: the next round (round-robin), within three (random), or when nothing else
 * can move, else late (adversarial). */
static uint64_t due_round(Cta *c) {
  return c->sched == EM_SCHED_RR ? c->round + 1
         : c->sched == EM_SCHED_RANDOM ? c->round + 1 + em_rand(c) % 3
                                        : c->round + 64;
}

/* Queue op in CTA d (issued by t of c). */
static bool aq_push(Cta *c, Thr *t, const EmIns *in, Cta *d, const EmAsync *op) {
  if (d->naq == d->capaq) {
    int cap = d->capaq ? 2 * d->capaq : 16;
    EmAsync *nq = realloc(d->aq, sizeof *nq * (size_t)cap);
    if (!nq) {
      em_fail(c, t, in, "out of memory");
      return false;
    }
    d->aq = nq, d->capaq = cap;
  }
  d->aq[d->naq++] = *op;
  return true;
}

/* ---- bulk copies into the cluster (cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes) ----
 * PTX ISA, cp.async.bulk: `size` bytes (a multiple of 16, both addresses 16-byte aligned) from the executing CTA's
 * shared memory to a CTA of the cluster, completing `size` transaction bytes on the mbarrier, which lies in the
 * destination's CTA. Queued in the destination CTA like a TMA load and done at a later scheduling point: the
 * source is read then, so the bytes it had at issue must still be there (a hash of them is compared); the bytes
 * it writes are known through the mbarrier's phase (check.c, em_chk_copy_issue/done). */
static uint64_t fnv(const uint8_t *p, uint32_t n) {
  uint64_t h = 1469598103934665603ull;
  for (uint32_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static void s2c_issue(Cta *c, Thr *t, const EmIns *in) {
  uint64_t n = em_src(c, t, &in->a[2], ET_U32);
  if (c->failed) return;
  if (n == 0 || n % 16) {
    em_fail(c, t, in, "cp.async.bulk of %llu bytes: the size is a positive multiple of 16", (unsigned long long)n);
    return;
  }
  EmAsync op = {.in = in, .thr = (int)(t - c->t), .load = true, .copy = true, .scta = c->rank, .bytes = (uint32_t)n,
                .mcta = -1};
  Cta *d = c, *mo = c;
  if (!smem_at(c, t, in, ES_SHARED, &in->a[0], n, 16, "the bulk copy's destination", &op.smem, &d) ||
      !em_smem_at(c, t, in, ES_SHARED, &in->a[1], n, 16, "the bulk copy's source", &op.src))
    return;
  EmMbar *b = mb_of(c, t, in, ES_SHARED, &in->a[3], &mo);
  if (!b) return;
  if (mo != d) {
    em_fail(c, t, in, "the bulk copy writes CTA rank %d's shared memory but completes on an mbarrier of CTA rank %d: "
            "the mbarrier lies in the destination's CTA", d->rank, mo->rank);
    return;
  }
  if (d->ended) {
    em_fail(c, t, in, "cluster: the bulk copy writes CTA rank %d, whose threads have all exited", d->rank);
    return;
  }
  if (!em_chk_async_src(c, t, in, "the bulk copy reads", op.src, op.bytes)) return;
  op.mbar = b->addr, op.phase = b->phase, op.remote = d != c;
  op.sum = fnv(c->smem + op.src, op.bytes);
  op.due = due_round(c);
  em_chk_copy_issue(d, &op);
  if (!aq_push(c, t, in, d, &op)) return;
  t->pc++;
}

/* cp.reduce.async.bulk.global.shared::cta.bulk_group.add: queued as a one-dimensional TMA store-add whose map
 * the instruction implies (the destination as a tensor of size bytes, its box the whole of it);
 * cp.async.bulk.global.shared::cta.bulk_group (red 0), the same as a store. */
static void bulk_red_issue(Cta *c, Thr *t, const EmIns *in) {
  uint64_t n = em_src(c, t, &in->a[2], ET_U32), ga;
  const char *nm = in->red ? "cp.reduce.async.bulk" : "cp.async.bulk"; /* a reduce-add, or a copy (red 0) */
  if (c->failed) return;
  if (n == 0 || n % 16) {
    em_fail(c, t, in, "%s of %llu bytes: the size is a positive multiple of 16", nm, (unsigned long long)n);
    return;
  }
  if (!em_addr_of(c, t, in, &in->a[0], &ga)) return;
  if (ga % 16) {
    em_fail(c, t, in, "%s into 0x%llx: the global address must be 16-byte aligned", nm, (unsigned long long)ga);
    return;
  }
  int es = in->type2 == ET_F32 ? 4 : 2;
  if (n / (uint64_t)es > 65535) {
    em_fail(c, t, in, "%s of %llu bytes: more than the emulator models at once (65535 elements)", nm,
            (unsigned long long)n);
    return;
  }
  EmAsync op = {.in = in, .thr = (int)(t - c->t), .load = false, .group = t->bulk_groups, .mcta = -1};
  op.map.rank = 1, op.map.esize = (uint8_t)es, op.map.estr[0] = 1, op.map.box[0] = (uint16_t)(n / (uint64_t)es);
  op.map.dtype = in->type2 == ET_F32 ? 7 : in->type2 == ET_F16 ? 6 : 9; /* CUtensorMapDataType FLOAT32, FLOAT16, BFLOAT16 */
  op.map.base = ga, op.map.dims[0] = n / (uint64_t)es, op.map.strides[0] = (uint64_t)es;
  if (!em_smem_at(c, t, in, ES_SHARED, &in->a[1], (size_t)n, 16, in->red ? "the bulk reduction's source" : "the bulk copy's source", &op.smem)) return;
  op.due = due_round(c);
  if (!em_chk_tma_issue(c, t, &op)) return;
  if (!aq_push(c, t, in, c, &op)) return;
  t->pc++;
}

/* cp.async.bulk.shared::{cluster,cta}.global.mbarrier::complete_tx::bytes: queued as a one-dimensional TMA load
 * whose map the instruction implies (the source as a tensor of size bytes, its box the whole of it), into this
 * CTA's shared memory (both addresses 16-byte aligned, the size a multiple of 16), completing on this CTA's
 * mbarrier. */
static void bulk_g2s_issue(Cta *c, Thr *t, const EmIns *in) {
  uint64_t n = em_src(c, t, &in->a[2], ET_U32), ga;
  if (c->failed) return;
  if (n == 0 || n % 16) {
    em_fail(c, t, in, "cp.async.bulk of %llu bytes: the size is a positive multiple of 16", (unsigned long long)n);
    return;
  }
  if (!em_addr_of(c, t, in, &in->a[1], &ga)) return;
  if (ga % 16) {
    em_fail(c, t, in, "cp.async.bulk from 0x%llx: the global address must be 16-byte aligned", (unsigned long long)ga);
    return;
  }
  if (n / 4 > 65535) {
    em_fail(c, t, in, "cp.async.bulk of %llu bytes: more than the emulator models at once (65535 words)",
            (unsigned long long)n);
    return;
  }
  EmAsync op = {.in = in, .thr = (int)(t - c->t), .load = true, .group = t->bulk_groups, .mcta = -1};
  op.map.rank = 1, op.map.esize = 4, op.map.estr[0] = 1, op.map.box[0] = (uint16_t)(n / 4);
  op.map.dtype = 7; /* CUtensorMapDataType FLOAT32: the bytes as words */
  op.map.base = ga, op.map.dims[0] = n / 4, op.map.strides[0] = 4;
  if (!em_smem_at(c, t, in, ES_SHARED, &in->a[0], (size_t)n, 16, "the bulk copy's destination", &op.smem)) return;
  EmMbar *b = mb_of(c, t, in, ES_SHARED, &in->a[3], NULL);
  if (!b) return;
  op.mbar = b->addr, op.phase = b->phase;
  op.due = due_round(c);
  if (!em_chk_tma_issue(c, t, &op)) return;
  if (!aq_push(c, t, in, c, &op)) return;
  t->pc++;
}

/* Do a queued bulk copy in its destination CTA c. */
static bool s2c_do(Cta *c, EmAsync *op) {
  Cta *sc = c->clu ? c->clu->cta[op->scta] : c;
  const Thr *t = &sc->t[op->thr];
  if (sc->ended) {
    em_fail(sc, t, op->in, "cluster: the bulk copy into CTA rank %d completes after its source CTA (rank %d) exited: "
            "the source must stay until the copy is done", c->rank, sc->rank);
    return false;
  }
  if (fnv(sc->smem + op->src, op->bytes) != op->sum) {
    em_fail(sc, t, op->in, "race: smem+0x%x..0x%x, the source of the bulk copy into CTA rank %d, changed before the "
            "copy completed (nothing this CTA waits for tells it the copy has read them)", op->src,
            op->src + op->bytes - 1, c->rank);
    return false;
  }
  memcpy(c->smem + op->smem, sc->smem + op->src, op->bytes);
  EmMbar *b = mb_find(c, op->mbar);
  if (!b) {
    em_fail(sc, t, op->in, "the bulk copy completed on smem+0x%x of CTA rank %d, no longer an mbarrier", op->mbar, c->rank);
    return false;
  }
  if (b->phase != op->phase || (!b->pending && b->tx > 0 && (uint64_t)b->tx < op->bytes)) {
    char nm[160];
    em_fail(sc, t, op->in, "mbarrier: %s (CTA rank %d) %s the bulk copy's %u bytes: the transaction bytes expected "
            "are fewer than the copies bring", em_mbar_name(c, b, nm, sizeof nm), c->rank,
            b->phase != op->phase ? "completed its phase before" : "expects fewer than", op->bytes);
    return false;
  }
  em_chk_copy_done(c, op, b->xacc);
  if (!mb_tx(c, t, op->in, b, -(int64_t)op->bytes)) return false;
  mb_settle(c, b);
  return true;
}

/* Do a queued copy (op->remote: a multicast load another CTA of the cluster issued; its thread is that CTA's). */
static bool tma_do(Cta *c, EmAsync *op) {
  if (op->copy) return s2c_do(c, op);
  const EmTensorMap *m = &op->map;
  const Thr *t = &c->t[op->thr];
  const EmIns *in = op->in;
  uint32_t n[5] = {1, 1, 1, 1, 1}, i[5] = {0};
  for (int d = 0; d < m->rank; d++) n[d] = em_tmap_box_n(m, d);
  int es = m->esize, red = op->load ? 0 : in->red;
  uint64_t nan = !m->oob ? 0 : es == 2 ? 0x7fff : es == 4 ? 0x7fffffff : ~0ull >> 1; /* the NaN fill: a quiet NaN */
  uint32_t off = 0;
  for (i[4] = 0; i[4] < n[4]; i[4]++)
    for (i[3] = 0; i[3] < n[3]; i[3]++)
      for (i[2] = 0; i[2] < n[2]; i[2]++)
        for (i[1] = 0; i[1] < n[1]; i[1]++) {
          /* one row of the box: its global start, and whether the outer coordinates are inside */
          bool in_outer = true;
          uint64_t g = m->base;
          for (int d = 1; d < m->rank; d++) {
            int64_t x = (int64_t)op->coord[d] + (int64_t)i[d] * m->estr[d];
            in_outer &= x >= 0 && (uint64_t)x < m->dims[d];
            g += (uint64_t)x * m->strides[d];
          }
          for (i[0] = 0; i[0] < n[0]; i[0]++, off += (uint32_t)es) {
            int64_t x = (int64_t)op->coord[0] + (int64_t)i[0] * m->estr[0];
            bool inside = in_outer && x >= 0 && (uint64_t)x < m->dims[0];
            uint8_t *s = c->smem + em_swizzle(op->smem + off, m->swizzle);
            if (!inside) {
              if (op->load) memcpy(s, &nan, (size_t)es);
              continue;
            }
            uint8_t *p = em_gmem(c, t, in, g + (uint64_t)x * (uint64_t)es, (size_t)es);
            if (!p) return false;
            if (op->load) memcpy(s, p, (size_t)es);
            else if (!red) memcpy(p, s, (size_t)es);
            else if (!reduce(m->dtype, red, p, s)) {
              em_fail(c, t, in, "the reduction cannot combine elements of data type %d", m->dtype);
              return false;
            }
          }
        }
  if (!op->load) return true;
  Cta *mc = op->mcta >= 0 ? c->clu->cta[op->mcta] : c; /* .cta_group::2: maybe the pair's peer's mbarrier */
  EmMbar *b = mb_find(mc, op->mbar);
  if (!b) {
    em_fail(c, t, in, "the TMA load completed on smem+0x%x%s, no longer an mbarrier", op->mbar,
            mc != c ? " of the peer CTA" : "");
    return false;
  }
  /* its phase completed without its bytes, or they are more than the phase still expects (all arrived) */
  bool early = b->phase != op->phase, over = !b->pending && b->tx > 0 && (uint64_t)b->tx < em_tmap_box_bytes(m);
  if (early || over) {
    char nm[160], where[160] = "";
    const EmIns *e = b->exp_in ? b->exp_in : in;
    if (in->line > 0) snprintf(where, sizeof where, " at line %d", in->line);
    Cta *ec = b->exp_in ? mc : c; /* the report names the expect_tx's thread, in the mbarrier's CTA */
    if (early)
      em_fail(ec, b->exp_in ? &mc->t[b->exp_thr] : t, e,
              "mbarrier: %s completed phase %u before the TMA load%s (issued in that phase) brought its %llu bytes: "
              "the transaction bytes expected (here) are fewer than the loads bring",
              em_mbar_name(c, b, nm, sizeof nm), op->phase, where, (unsigned long long)em_tmap_box_bytes(m));
    else
      em_fail(ec, b->exp_in ? &mc->t[b->exp_thr] : t, e,
              "mbarrier: %s, phase %u, every arrival in, expects %lld more transaction bytes; the TMA load%s brings "
              "%llu: the bytes expected (here) are fewer than the loads bring",
              em_mbar_name(c, b, nm, sizeof nm), b->phase, (long long)b->tx, where, (unsigned long long)em_tmap_box_bytes(m));
    return false;
  }
  if (mc != c) em_chk_tma_peer_done(c, op, b->xacc); /* ordered through the peer's mbarrier phase */
  else if (op->remote) em_box_chunks(op, remote_written, c); /* another CTA's multicast: written, unchecked */
  else em_chk_tma_done(c, op);
  if (!mb_tx(c, t, in, b, -(int64_t)em_tmap_box_bytes(m))) return false;
  mb_settle(mc, b);
  return true;
}

static void tma_issue(Cta *c, Thr *t, const EmIns *in) {
  bool load = in->opc == EM_TMA_LOAD;
  const EmArg *ta = &in->a[load ? 1 : 0];
  EmAsync op = {.in = in, .thr = (int)(t - c->t), .load = load, .group = t->bulk_groups};
  uint64_t ma;
  EmArg base = *ta;
  base.kind = EA_ADDR; /* the map's address, without the coordinates */
  if (!em_addr_of(c, t, in, &base, &ma)) return;
  if (ma % 64) {
    em_fail(c, t, in, "the tensor map at 0x%llx is not 64-byte aligned", (unsigned long long)ma);
    return;
  }
  const uint8_t *mp = em_mem(c, t, in, ES_GENERIC, ma, sizeof(EmTensorMap));
  if (!mp) return;
  if (!em_tmap_decode(mp, &op.map)) {
    em_fail(c, t, in, "0x%llx holds no tensor map made by cuTensorMapEncodeTiled under TILE_INTERPRET=1",
            (unsigned long long)ma);
    return;
  }
  if (op.map.rank != in->rank) {
    em_fail(c, t, in, "a %dd copy with a tensor map of rank %d", in->rank, op.map.rank);
    return;
  }
  for (int d = 0; d < in->rank; d++) {
    EmArg r = {.kind = EA_REG, .reg = ta->vec[d], .sym = -1};
    op.coord[d] = (int32_t)em_src(c, t, &r, ET_S32);
  }
  /* the box's first element must start 16 bytes into a row: the H200 stops the kernel with
     CUDA_ERROR_ILLEGAL_INSTRUCTION otherwise (a reduce-add at column 80 i + row0 did, 2026-12-06) */
  if (op.map.interleave == 0 && (int64_t)op.coord[0] * op.map.esize % 16) {
    em_fail(c, t, in, "the %s's innermost coordinate %d is %lld bytes into a row, not a multiple of 16 (the hardware "
            "faults: CUDA_ERROR_ILLEGAL_INSTRUCTION)", load ? "TMA load" : "TMA store", op.coord[0],
            (long long)op.coord[0] * op.map.esize);
    return;
  }
  uint64_t bytes = em_tmap_box_bytes(&op.map);
  if (op.map.swizzle) bytes = (bytes + 127) & ~127ull; /* a swizzled byte stays in its 128-byte line */
  if (!em_smem_at(c, t, in, ES_SHARED, &in->a[load ? 0 : 1], (size_t)bytes, 128, load ? "the TMA destination" : "the TMA source",
               &op.smem))
    return;
  /* .cta_group::2 (PTX ISA, cp.async.bulk.tensor): the mbarrier may be in the CTA pair's peer (ranks differing in
     bit 0); ::1 (the default): in the CTA the data lands in */
  bool pair = load && in->type2 == 2;
  Cta *mo = c;
  op.mcta = -1;
  if (load) {
    EmMbar *b = mb_of(c, t, in, ES_SHARED, &in->a[2], pair ? &mo : NULL);
    if (!b) return;
    if (pair && ((c->rank ^ 1) >= c->clu->n || (mo != c && mo->rank != (c->rank ^ 1)))) {
      em_fail(c, t, in, "the .cta_group::2 TMA load completes on an mbarrier of CTA rank %d: it must be this CTA's "
              "(rank %d) or its peer's in the CTA pair (rank %d%s)", mo->rank, c->rank, c->rank ^ 1,
              (c->rank ^ 1) >= c->clu->n ? ", which the cluster lacks" : "");
      return;
    }
    op.mbar = b->addr, op.phase = b->phase;
  }
  op.due = due_round(c);
  /* .multicast::cluster: the box lands at the same offset in each CTA of the mask, and completes on the
     mbarrier at the same offset in each (PTX ISA, cp.async.bulk.tensor); with .cta_group::2 on the mbarrier at that
     offset in the CTA of each destination's pair whose rank has the parity of the one the operand names */
  uint32_t mask = 1u << c->rank;
  if (in->mod & EMM_MCAST) {
    mask = (uint32_t)em_src(c, t, &in->a[3], ET_U16) & 0xffffu;
    if (!mask || mask >> c->clu->n) {
      em_fail(c, t, in, "the multicast TMA load's CTA mask 0x%x names %s of a cluster of %d CTAs", mask,
              mask ? "ranks outside" : "no CTA", c->clu->n);
      return;
    }
  }
  for (int r = 0; r < c->clu->n; r++) {
    if (!(mask >> r & 1)) continue;
    Cta *d = c->clu->cta[r];
    if (d->ended) {
      em_fail(c, t, in, "cluster: the multicast TMA load writes CTA rank %d, whose threads have all exited", r);
      return;
    }
    EmAsync dop = op;
    dop.remote = d != c;
    int mr = pair ? (r & ~1) | (mo->rank & 1) : r; /* the CTA whose mbarrier it completes on */
    if (pair && mr >= c->clu->n) {
      em_fail(c, t, in, "the .cta_group::2 TMA load's signal for CTA rank %d goes to rank %d, which the cluster lacks",
              r, mr);
      return;
    }
    dop.mcta = mr != r ? mr : -1;
    if (dop.remote || dop.mcta >= 0) {
      Cta *m = c->clu->cta[mr];
      if (m->ended) {
        em_fail(c, t, in, "cluster: the TMA load completes on an mbarrier of CTA rank %d, whose threads have all exited",
                mr);
        return;
      }
      EmMbar *b = mb_find(m, op.mbar);
      if (!b) {
        em_fail(c, t, in, "the %sTMA load completes on smem+0x%x of CTA rank %d, which is not an mbarrier there",
                mask != 1u << c->rank ? "multicast " : "", op.mbar, mr);
        return;
      }
      dop.phase = b->phase;
    }
    if (!dop.remote && !em_chk_tma_issue(c, t, &dop)) return;
    if (!aq_push(c, t, in, d, &dop)) return;
  }
  t->pc++;
}

/* Do (in issue order) the queued copies that pick() selects. */
static bool drain(Cta *c, bool (*pick)(const Cta *, const EmAsync *, const void *), const void *arg, bool *any) {
  int k = 0;
  for (int i = 0; i < c->naq; i++) {
    EmAsync op = c->aq[i];
    if (c->failed || !pick(c, &op, arg)) {
      c->aq[k++] = op;
      continue;
    }
    *any = true;
    if (!tma_do(c, &op)) {
      c->aq[k++] = op;
      continue;
    }
  }
  c->naq = k;
  return !c->failed;
}

typedef struct WaitArg { int thr, below; } WaitArg;
static bool pick_group(const Cta *c, const EmAsync *op, const void *arg) {
  const WaitArg *w = arg;
  (void)c;
  return !op->load && op->thr == w->thr && op->group < w->below;
}
static bool pick_due(const Cta *c, const EmAsync *op, const void *arg) { return *(const bool *)arg || op->due <= c->round; }

/* The adversarial schedule's pick: the k-th copy in the queue (drain asks in order). */
static bool pick_one(const Cta *c, const EmAsync *op, const void *arg) {
  (void)c, (void)op;
  return (*(int *)(uintptr_t)arg)-- == 0;
}

bool em_async_tick(Cta *c, bool all) {
  bool any = false;
  if (c->sched == EM_SCHED_ADVERSARIAL) { /* nothing else can move: complete one copy, chosen by the seed */
    if (all && c->naq) {
      int k = (int)(em_rand(c) % (uint64_t)c->naq);
      drain(c, pick_one, &k, &any);
      return any;
    }
  }
  drain(c, pick_due, &all, &any);
  return any;
}

bool em_async_end(Cta *c) {
  bool any = false, all = true;
  if (!drain(c, pick_due, &all, &any)) return false;
  for (int i = 0; i < c->nmb; i++)
    if (c->mb[i].tx > 0) { /* bytes expected that no copy will bring */
      char nm[160];
      em_fail(c, NULL, NULL, "mbarrier: the CTA ended with the mbarrier %s expecting %lld more transaction bytes",
              em_mbar_name(c, &c->mb[i], nm, sizeof nm), (long long)c->mb[i].tx);
      return false;
    }
  return true;
}

/* ---- one instruction ---- */

void em_async_step(Cta *c, Thr *t, const EmIns *in) {
  switch ((EmOpc)in->opc) {
  case EM_MBAR_INIT: case EM_MBAR_ARRIVE: case EM_MBAR_EXPECT_TX: case EM_MBAR_WAIT:
    mbar_step(c, t, in);
    return;
  case EM_TMA_LOAD: case EM_TMA_STORE:
    tma_issue(c, t, in);
    return;
  case EM_BULK_S2C:
    s2c_issue(c, t, in);
    return;
  case EM_BULK_RED:
    bulk_red_issue(c, t, in);
    return;
  case EM_BULK_G2S:
    bulk_g2s_issue(c, t, in);
    return;
  case EM_BULK_COMMIT:
    t->bulk_groups++;
    break;
  case EM_BULK_WAIT: { /* at most N of the thread's most recent bulk groups still pending */
    int64_t keep = in->a[0].imm;
    if (keep < 0 || keep > 63) {
      em_fail(c, t, in, "cp.async.bulk.wait_group %lld", (long long)keep);
      return;
    }
    WaitArg w = {(int)(t - c->t), t->bulk_groups - (int)keep};
    bool any = false;
    if (!drain(c, pick_group, &w, &any)) return;
    em_chk_bulk_wait(c, t, w.below);
    break;
  }
  default:
    em_fail(c, t, in, "the emulator cannot run this instruction yet");
    return;
  }
  t->pc++;
}

/* tcgen05.commit's arrival, when the operations before it are done. */
bool em_mbar_arrive_async(Cta *c, const Thr *t, const EmIns *in, uint32_t addr) {
  EmMbar *b = mb_find(c, addr);
  if (!b) {
    em_fail(c, t, in, "the tcgen05.commit completed on smem+0x%x, no longer an mbarrier", addr);
    return false;
  }
  if (b->pending < 1) {
    em_fail(c, t, in, "mbarrier at smem+0x%x: the tcgen05.commit's arrival in a phase with none pending", addr);
    return false;
  }
  if (!em_chk_mbar_arrive(c, t, in, b)) return false; /* the issuing thread's release (as it is now: a later point) */
  b->pending--;
  mb_settle(c, b);
  return true;
}

/* A .cta_group::2 or multicast tcgen05.commit's arrival on CTA d's mbarrier, issued by t of c (another CTA of
 * the cluster): unchecked by check.c as a thread's arrival (its tcgen05 epoch: tmem.c's em_chk_tc_commit). */
bool em_mbar_arrive_remote(Cta *d, Cta *c, const Thr *t, const EmIns *in, uint32_t addr) {
  EmMbar *b = mb_find(d, addr);
  if (!b) {
    em_fail(c, t, in, "the tcgen05.commit completed on smem+0x%x of CTA rank %d, not an mbarrier there", addr, d->rank);
    return false;
  }
  if (b->pending < 1) {
    em_fail(c, t, in, "mbarrier at smem+0x%x of CTA rank %d: the tcgen05.commit's arrival in a phase with none pending",
            addr, d->rank);
    return false;
  }
  b->pending--;
  mb_settle(d, b);
  return true;
}

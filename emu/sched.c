/* sched.c - the emulator's scheduler (issue 16): threads within a CTA,
 * CTAs within the grid, and the deadlock reports.
 *
 * Within a CTA, threads run in rounds: every warp in turn (warps in order,
 * or shuffled each round under EmLaunch.seed), its lanes in lockstep -- one
 * instruction each per sweep, as a converged warp runs on the GPU -- until
 * none can run or the warp has used its slice; then the bulk copies in flight
 * that are due complete (all of them when no thread moved). A round in
 * which nothing moved or completed is a deadlock, reported with what each
 * warp waits for.
 *
 * CTAs run one at a time, in launch order, each to its end -- unless it
 * waits for another CTA: a thread whose acquire (or relaxed, volatile)
 * load of global memory keeps reading the same value is spinning (T_SPIN),
 * and a CTA in which nothing else can move is set aside (its state kept)
 * while the next CTA starts; set-aside CTAs are resumed in turn once every
 * CTA has started (or too many are resident). A full turn over them in
 * which none got further is a deadlock across CTAs.
 *
 * With EmLaunch.cta_turn = R (TILE_EMU_CTA_TURN), a CTA is also set aside
 * after R rounds in which it moved: every CTA of the grid starts (as many
 * as fit) and they take turns, as the GPU's resident CTAs run side by side.
 * Under a seeded schedule the next turn goes to any of them, at random, so
 * a CTA may run several turns ahead of another. A persistent kernel that
 * hands its work out by a counter then spreads it over its CTAs, and what its CTAs must wait for from one another (a flag
 * another CTA raises) is exercised; one after another, the first CTA takes
 * all of the work.
 */
#include <stdio.h>
#include <stdlib.h>

#include "exec_int.h"

enum { EM_SLICE = 1 << 14 }; /* steps a thread runs before the next one gets its turn */
enum { EM_TURN_SLICE = 64 };  /* the same when CTAs take turns (EmLaunch.cta_turn): a turn is a few steps */
enum { CTA_FAILED, CTA_DONE, CTA_WAITS };

static const char *waits_for(const Cta *c, const Thr *t, char *buf, size_t n) {
  if (t->state == T_BAR)
    snprintf(buf, n, "barrier %d (%d of %d arrived)", t->bar, c->bar_arrived[t->bar], c->bar_count[t->bar]);
  else if (t->state == T_COLL && t->cwg)
    snprintf(buf, n, "the other threads of its warpgroup (warps %u-%u) at %s", t->warp / 4 * 4, t->warp / 4 * 4 + 3,
             c->f->ins[t->pc].text);
  else if (t->state == T_COLL)
    snprintf(buf, n, "a warp collective with member mask 0x%08x", t->cmask);
  else if (t->state == T_MBAR)
    em_mbar_waits(c, t, buf, n);
  else if (t->state == T_REGS)
    em_reg_waits(c, t, buf, n);
  else if (t->state == T_CBAR)
    em_clu_waits(c, t, buf, n);
  else if (t->state == T_SPIN)
    snprintf(buf, n, "global memory at 0x%llx to change from %llu (it spins on it; no CTA changes it)",
             (unsigned long long)t->spin_addr, (unsigned long long)t->spin_val);
  else
    snprintf(buf, n, "nothing");
  return buf;
}

/* Every thread is blocked: name the first and what it waits for, then
 * what each other warp waits for (warps alike merged: "warps 4-7"). */
static void deadlock(Cta *c, const char *scope, const char *tail) {
  int blocked = 0, first = -1;
  for (int i = 0; i < c->n; i++)
    if (c->t[i].state != T_DONE) blocked++, first = first < 0 ? i : first;
  for (int i = 0; i < c->n; i++) /* a warpgroup waiting for registers is the cause: name it first */
    if (c->t[i].state == T_REGS) {
      first = i;
      break;
    }
  Thr *t = &c->t[first];
  char what[256], others[1024] = "", prev[256] = "", cur[256];
  size_t len = 0;
  int from = -1, nw = (c->n + 31) / 32;
  for (int w = (int)t->warp + 1; w <= nw; w++) {
    const Thr *o = NULL;
    for (int i = w * 32; w < nw && i < c->n && i < w * 32 + 32 && !o; i++)
      if (c->t[i].state != T_DONE) o = &c->t[i];
    if (o) waits_for(c, o, cur, sizeof cur);
    if (from >= 0 && (!o || strcmp(cur, prev))) { /* close the run of warps from..w-1 */
      int k = w - 1 == from ? snprintf(others + len, sizeof others - len, "; warp %d waits for %s", from, prev)
                            : snprintf(others + len, sizeof others - len, "; warps %d-%d wait for %s", from, w - 1, prev);
      len = k < 0 || (size_t)k >= sizeof others - len ? sizeof others - 1 : len + (size_t)k;
      from = -1;
    }
    if (o && from < 0) from = w, memcpy(prev, cur, sizeof prev);
  }
  em_fail(c, t, &c->f->ins[t->pc], "deadlock: %s (%d threads of this CTA); warp %u waits for %s%s%s", scope, blocked,
          t->warp, waits_for(c, t, what, sizeof what), others, tail);
}

EmSched em_sched_of(const EmLaunch *l) {
  if (l->sched > EM_SCHED_DEFAULT && l->sched <= EM_SCHED_ADVERSARIAL) return (EmSched)l->sched;
  return l->seed ? EM_SCHED_RANDOM : EM_SCHED_RR;
}

/* One round of c: each warp in turn, its lanes in lockstep, then the
 * copies in flight that are due (all of them when nothing moved, unless
 * others of the cluster did: `quiet`). wake: its spinning threads look
 * again. Sets *moved (a thread did more than spin), *left (threads remain),
 * *spinning; false when the CTA failed. */
/* The default step budget of one CTA: EM_DEFAULT_STEPS for each CTA of the
 * grid, up to 8. CTAs run one at a time here, so a persistent kernel whose
 * CTAs take their work from a shared counter (the attention backward's
 * DYN) runs the whole grid's work on its first CTA. */
static uint64_t default_steps(const EmLaunch *l) {
  uint64_t n = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
  return EM_DEFAULT_STEPS * (n < 1 ? 1 : n > 8 ? 8 : n);
}

static bool cta_round(Cta *c, bool wake, bool quiet, bool *moved, bool *completed, bool *left, bool *spinning) {
  uint64_t max = c->l->max_steps ? c->l->max_steps : default_steps(c->l);
  int nw = (c->n + 31) / 32, *order = c->order;
  *moved = *left = *spinning = *completed = false;
  for (int k = 0; c->sched != EM_SCHED_RR && k < nw; k++) {
    int j = k + (int)(em_rand(c) % (uint64_t)(nw - k)), x = order[k];
    order[k] = order[j], order[j] = x;
  }
  for (int k = 0; k < nw && !c->failed; k++) {
    /* the warp's lanes in lockstep, one instruction each per sweep, until none can run */
    int lo = order[k] * 32, hi = lo + 32 < c->n ? lo + 32 : c->n;
    uint64_t did[32] = {0}, spun_at[32], spun_val[32];
    bool was[32];
    for (int i = lo; i < hi; i++) {
      was[i - lo] = wake && c->t[i].state == T_SPIN;
      spun_at[i - lo] = c->t[i].spin_addr, spun_val[i - lo] = c->t[i].spin_val;
      if (was[i - lo]) c->t[i].state = T_RUN;
    }
    for (int budget = c->l->cta_turn ? EM_TURN_SLICE : EM_SLICE; budget > 0 && !c->failed; budget--) {
      bool any = false;
      for (int i = lo; i < hi && !c->failed; i++) {
        Thr *t = &c->t[i];
        if (t->state != T_RUN) continue;
        if (t->pc < 0 || t->pc >= c->f->nins) {
          em_fail(c, t, NULL, "ran off the end of %s (pc %d)", c->f->name, t->pc);
          break;
        }
        if (c->f->ins[t->pc].mod & EMM_SYS) em_sys_step(c, t); /* local memory, call, trap (sys.c) */
        else em_step(c, t);
        did[i - lo]++, any = true;
        if (++c->steps > max)
          em_fail(c, t, &c->f->ins[t->pc < c->f->nins ? t->pc : c->f->nins - 1],
                  "still running after %llu instructions: a hang?", (unsigned long long)max);
      }
      if (!any) break;
    }
    for (int i = lo; i < hi; i++) {
      const Thr *t = &c->t[i];
      /* a spin that looked again and spins on is no move -- unless it got past its wait (and maybe stored what
       * others wait for) and now spins on another word or value */
      *moved |= did[i - lo] && !(was[i - lo] && t->state == T_SPIN && t->spin_addr == spun_at[i - lo] &&
                                 t->spin_val == spun_val[i - lo]);
      *spinning |= t->state == T_SPIN;
      *left |= t->state != T_DONE;
    }
  }
  if (c->failed) return false;
  c->round++;
  bool all = !*moved && !quiet;
  *completed = em_async_tick(c, all);
  *completed |= em_tc_tick(c, all);
  *completed |= em_cpa_tick(c, all);
  return !c->failed;
}

/* At the end of a CTA: nothing left pending (else a report). */
static bool cta_end(Cta *c) {
  if (!em_async_end(c) || !em_matrix_end(c) || !em_tc_end(c) || !em_cpa_end(c)) return false;
  for (int i = 0; i < 16; i++)
    if (c->bar_arrived[i]) {
      em_fail(c, NULL, NULL, "the CTA ended with %d threads arrived at barrier %d and never released",
              c->bar_arrived[i], i);
      return false;
    }
  return true;
}

static bool clu_failed(const EmClu *u) {
  for (int k = 0; k < u->n; k++)
    if (u->cta[k]->failed) return true;
  return false;
}

/* Every thread of the cluster is blocked: the first CTA with a thread left
 * (one waiting for registers or a barrier.cluster first) reports, naming
 * what the cluster's other CTAs wait for. */
static void clu_deadlock(EmClu *u, const char *scope, const char *others) {
  Cta *c = NULL;
  for (int k = 0; k < u->n; k++) {
    Cta *d = u->cta[k];
    for (int i = 0; i < d->n && (!c || c->live == 0); i++)
      if (d->t[i].state == T_REGS) c = d;
    if (!c && d->live) c = d;
  }
  if (!c) c = u->cta[0];
  if (u->n == 1) {
    deadlock(c, scope, others);
    return;
  }
  char sc[1024], w[256];
  size_t len = (size_t)snprintf(sc, sizeof sc, "; in its cluster of %d CTAs (co-scheduled)", u->n);
  for (int k = 0; k < u->n && len < sizeof sc; k++) {
    Cta *d = u->cta[k];
    if (d == c) continue;
    const Thr *o = NULL;
    for (int i = 0; i < d->n && !o; i++)
      if (d->t[i].state != T_DONE) o = &d->t[i];
    int m = o ? snprintf(sc + len, sizeof sc - len, "; CTA %u,%u,%u (rank %d) thread %u waits for %s", d->ctaid[0],
                         d->ctaid[1], d->ctaid[2], d->rank, o->linear, waits_for(d, o, w, sizeof w))
              : snprintf(sc + len, sizeof sc - len, "; CTA %u,%u,%u (rank %d) has ended", d->ctaid[0], d->ctaid[1],
                         d->ctaid[2], d->rank);
    len = m < 0 ? sizeof sc : len + (size_t)m;
  }
  if (len < sizeof sc) snprintf(sc + len, sizeof sc - len, "%s", others);
  deadlock(c, scope, sc);
}

/* Run a cluster's CTAs, co-scheduled, until they all end, one fails, or
 * they wait for another cluster (resume: it was set aside before; its
 * spinning threads look again). */
static int run_clu(EmClu *u, bool resume) {
  bool wake = resume;
  unsigned turn = u->cta[0]->l->cta_turn, rounds = 0;
  u->progressed = false;
  for (;;) {
    bool any = false, left = false, spinning = false;
    for (int k = 0; k < u->n; k++) {
      Cta *c = u->cta[k];
      if (c->ended) continue;
      bool mv, cp, lf, sp;
      if (!cta_round(c, wake, any && u->n > 1, &mv, &cp, &lf, &sp) || clu_failed(u)) return CTA_FAILED;
      any |= mv || cp, left |= lf, spinning |= sp;
      if (!lf) {
        if (!cta_end(c) || clu_failed(u)) return CTA_FAILED;
        c->ended = true;
      }
    }
    if (!left) return CTA_DONE;
    wake = any;
    if (any) {
      u->progressed = true;
      if (turn && ++rounds >= turn) return CTA_WAITS; /* its turn is over: the next CTA's */
      continue;
    }
    if (spinning) return CTA_WAITS;
    clu_deadlock(u, u->n > 1 ? "every thread of the cluster is blocked" : "every thread is blocked", "");
    return CTA_FAILED;
  }
}

static void cta_free(Cta *c) {
  if (!c) return;
  em_matrix_reset(c);
  em_chk_free(c);
  em_tc_free(c);
  em_cpa_free(c);
  em_reg_free(c);
  for (int g = 0; c->wg && g < c->nwg; g++) free(c->wg[g].op);
  free(c->wg);
  free(c->wgd);
  free(c->mb);
  free(c->aq);
  free(c->order);
  em_sys_free(c);
  free(c->t);
  free(c->regs);
  free(c->smem);
  free(c);
}

/* CTA number `lin` of the grid (x fastest), its threads at their first
 * instruction. NULL when out of memory. */
static Cta *cta_new(const Cta *proto, uint64_t lin) {
  const EmLaunch *l = proto->l;
  size_t nthr = (size_t)proto->n, nregs = (size_t)(proto->f->nregs ? proto->f->nregs : 1);
  Cta *c = malloc(sizeof *c);
  if (!c) return NULL;
  *c = *proto;
  c->t = calloc(nthr, sizeof *c->t);
  c->regs = calloc(nthr * nregs, sizeof *c->regs);
  c->smem = calloc(c->smem_size ? c->smem_size : 1, 1);
  c->nwg = (int)(nthr + 127) / 128;
  c->wg = calloc((size_t)c->nwg, sizeof *c->wg);
  c->order = calloc((nthr + 31) / 32, sizeof *c->order);
  c->chk = NULL;
  c->tc = NULL;
  c->cpa = NULL;
  c->reg_warp = NULL;
  if (!c->t || !c->regs || !c->smem || !c->wg || !c->order || !em_reg_new(c) || (!l->no_checks && !em_chk_new(c))) {
    cta_free(c);
    return NULL;
  }
  c->ctaid[0] = (unsigned)(lin % l->grid[0]);
  c->ctaid[1] = (unsigned)(lin / l->grid[0] % l->grid[1]);
  c->ctaid[2] = (unsigned)(lin / ((uint64_t)l->grid[0] * l->grid[1]));
  c->live = c->n;
  c->rng = c->sched != EM_SCHED_RR ? l->seed ^ (lin * 0x9e3779b97f4a7c15ull) : 0;
  for (size_t w = 0; w < (nthr + 31) / 32; w++) c->order[w] = (int)w;
  for (unsigned i = 0; i < nthr; i++) {
    Thr *t = &c->t[i];
    *t = (Thr){.r = c->regs + (size_t)i * nregs, .state = T_RUN, .linear = i};
    t->tid[0] = i % l->block[0];
    t->tid[1] = (i / l->block[0]) % l->block[1];
    t->tid[2] = i / (l->block[0] * l->block[1]);
    t->lane = i % 32, t->warp = i / 32;
  }
  return c;
}

static void clu_free(EmClu *u) {
  if (!u) return;
  for (int k = 0; k < u->n; k++) cta_free(u->cta[k]);
  free(u->cta);
  free(u);
}

/* Cluster number `lin` of the grid (x fastest) of shape cd: its CTAs by rank (x fastest). NULL when out of memory. */
static EmClu *clu_new(const Cta *proto, uint64_t lin, const unsigned cd[3], bool expl) {
  const EmLaunch *l = proto->l;
  unsigned nc[3] = {l->grid[0] / cd[0], l->grid[1] / cd[1], l->grid[2] / cd[2]};
  unsigned id[3] = {(unsigned)(lin % nc[0]), (unsigned)(lin / nc[0] % nc[1]), (unsigned)(lin / ((uint64_t)nc[0] * nc[1]))};
  EmClu *u = calloc(1, sizeof *u);
  int n = (int)(cd[0] * cd[1] * cd[2]);
  if (!u || !(u->cta = calloc((size_t)n, sizeof *u->cta))) {
    free(u);
    return NULL;
  }
  memcpy(u->dim, cd, sizeof u->dim);
  u->is_explicit = expl;
  for (int r = 0; r < n; r++) {
    unsigned x = id[0] * cd[0] + (unsigned)r % cd[0], y = id[1] * cd[1] + (unsigned)r / cd[0] % cd[1],
             z = id[2] * cd[2] + (unsigned)r / (cd[0] * cd[1]);
    Cta *c = cta_new(proto, x + (uint64_t)l->grid[0] * (y + (uint64_t)l->grid[1] * z));
    if (!c) {
      clu_free(u);
      return NULL;
    }
    c->clu = u, c->rank = r;
    u->cta[u->n++] = c;
    u->cb_live += c->n;
  }
  return u;
}

bool em_launch(const EmModule *m, const EmLaunch *l, char *err, size_t errlen) {
  if (err && errlen) err[0] = 0;
  char scratch[8];
  if (!err || !errlen) err = scratch, errlen = sizeof scratch;
  const EmFunc *f = m ? em_find_func(m, l->kernel) : NULL;
  if (!f || !f->entry) {
    snprintf(err, errlen, "no kernel named '%s' in the module", l && l->kernel ? l->kernel : "(null)");
    return false;
  }
  uint64_t nthr = (uint64_t)l->block[0] * l->block[1] * l->block[2];
  if (nthr == 0 || nthr > 1024 || !l->grid[0] || !l->grid[1] || !l->grid[2]) {
    snprintf(err, errlen, "launch of %s: block %ux%ux%u, grid %ux%ux%u", f->name, l->block[0], l->block[1],
             l->block[2], l->grid[0], l->grid[1], l->grid[2]);
    return false;
  }
  if (l->params_size < f->param_bytes) {
    snprintf(err, errlen, "launch of %s: %zu parameter bytes, the kernel takes %u", f->name, l->params_size,
             f->param_bytes);
    return false;
  }
  size_t dyn0 = m->static_smem;
  for (int i = 0; i < m->nglobals; i++)
    if (m->globals[i].space == ES_SHARED && m->globals[i].is_extern) dyn0 = m->globals[i].offset;
  Cta proto = {.m = m, .f = f, .l = l, .n = (int)nthr, .err = err, .errlen = errlen, .smem_size = dyn0 + l->dyn_smem,
               .sched = em_sched_of(l)};
  if (!em_reg_launch(f, l->regs, nthr, &proto.reg_launch, err, errlen)) return false;
  /* the cluster shape: the launch's, else the kernel's .reqnctapercluster, else one CTA */
  unsigned cd[3] = {l->cluster[0], l->cluster[1], l->cluster[2]};
  bool expl = cd[0] * cd[1] * cd[2] > 1 || f->explicitcluster;
  if (!cd[0] || !cd[1] || !cd[2] || cd[0] * cd[1] * cd[2] == 1)
    for (int i = 0; i < 3; i++) cd[i] = f->reqncluster[i] > 0 ? (unsigned)f->reqncluster[i] : 1;
  uint64_t csize = (uint64_t)cd[0] * cd[1] * cd[2];
  if (csize > 16 || l->grid[0] % cd[0] || l->grid[1] % cd[1] || l->grid[2] % cd[2]) {
    snprintf(err, errlen, "launch of %s: cluster %ux%ux%u with grid %ux%ux%u (at most 16 CTAs, dividing the grid)",
             f->name, cd[0], cd[1], cd[2], l->grid[0], l->grid[1], l->grid[2]);
    return false;
  }
  /* clusters set aside at once: as many as 4 GB of their state holds (at least 1, at most 1024 CTAs) */
  uint64_t per = csize * (nthr * (uint64_t)(f->nregs ? f->nregs : 1) * 8 + proto.smem_size + nthr * sizeof(Thr) +
                          4096 + (l->no_checks ? 0 : em_chk_bytes(proto.smem_size, (int)nthr)));
  uint64_t total = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2] / csize, next = 0;
  int maxres = (int)((4ull << 30) / per), nres = 0, cap = (int)(1024 / csize);
  uint64_t moves = 0; /* turns that moved: a resident cluster stuck since the last of them is stuck for good */
  maxres = maxres < 1 ? 1 : maxres > cap ? cap : maxres;
  EmClu **res = calloc((size_t)maxres + 1, sizeof *res);
  bool ok = res != NULL;
  if (!ok) snprintf(err, errlen, "launch of %s: out of memory", f->name);
  uint64_t dice = l->seed * 0x9e3779b97f4a7c15ull + 1; /* cta_turn under a seeded schedule: whose turn */
  while (ok && (next < total || nres)) {
    bool fresh = next < total && nres < maxres;
    int pick = 0; /* the longest set aside, or (taking turns, seeded) any of them */
    if (!fresh && l->cta_turn && proto.sched != EM_SCHED_RR && nres > 1) {
      dice ^= dice << 13, dice ^= dice >> 7, dice ^= dice << 17;
      pick = (int)(dice % (uint64_t)nres);
    }
    EmClu *u = fresh ? clu_new(&proto, next++, cd, expl) : res[pick];
    if (!u) {
      snprintf(err, errlen, "launch of %s: out of memory", f->name);
      ok = false;
      break;
    }
    if (!fresh) memmove(res + pick, res + pick + 1, sizeof *res * (size_t)(--nres - pick));
    int r = run_clu(u, !fresh);
    if (r != CTA_WAITS) {
      ok = r == CTA_DONE;
      clu_free(u);
      moves++;
      continue;
    }
    if (fresh || u->progressed) moves++, u->stuck_at = 0;
    else u->stuck_at = moves + 1;
    res[nres++] = u;
    bool stuck = true; /* every resident one had a turn since the last move, and none moved */
    for (int i = 0; i < nres && stuck; i++) stuck = res[i]->stuck_at == moves + 1;
    if (stuck && (next >= total || nres >= maxres)) { /* a turn over them all, and nothing moved */
      char scope[128];
      snprintf(scope, sizeof scope, "every resident %s (%d%s) waits for another", csize > 1 ? "cluster" : "CTA", nres,
               next < total ? ", the emulator's most" : "");
      /* what the other resident CTAs wait for: a thread spinning on global memory first (another CTA's flag) */
      char others[1024] = "", w[256];
      size_t len = 0;
      for (int i = 1; i < nres && i <= 6 && len < sizeof others; i++) {
        Cta *d = res[i]->cta[0];
        const Thr *o = NULL;
        for (int j = 0; j < d->n && !o; j++)
          if (d->t[j].state == T_SPIN) o = &d->t[j];
        for (int j = 0; j < d->n && !o; j++)
          if (d->t[j].state != T_DONE) o = &d->t[j];
        if (!o) continue;
        int k = snprintf(others + len, sizeof others - len, "; CTA %u,%u,%u thread %u waits for %s", d->ctaid[0],
                         d->ctaid[1], d->ctaid[2], o->linear, waits_for(d, o, w, sizeof w));
        len = k < 0 ? sizeof others : len + (size_t)k;
      }
      if (nres > 7 && len < sizeof others) snprintf(others + len, sizeof others - len, "; (%d more)", nres - 7);
      clu_deadlock(res[0], scope, others);
      ok = false;
    }
  }
  for (int i = 0; i < nres; i++) clu_free(res[i]);
  free(res);
  return ok;
}

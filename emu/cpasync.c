/* cpasync.c - Ampere's non-bulk asynchronous copy (sm_80+), what tilec
 * emits for pipelined `dot` loops: cp.async.{ca,cg}.shared.global,
 * cp.async.commit_group, cp.async.wait_group N, cp.async.wait_all.
 *
 * PTX ISA, "Data Movement and Conversion Instructions: cp.async" and the
 * async-group completion mechanism: a copy of cp-size bytes (4, 8, 16) from
 * global to shared memory, src-size of them read from src and the rest
 * zero-filled (src-size 0, or ignore-src true, reads nothing); the copy
 * happens at some point between its issue and the completion of its
 * thread's cp.async.wait_group that covers its group. Groups are per thread:
 * commit_group closes the copies issued since the last one into a group,
 * wait_group N returns once at most N of the thread's most recent groups are
 * pending, wait_all is commit_group + wait_group 0. Copies issued after the
 * last commit belong to no group and no wait_group waits for them.
 *
 * Here a copy is queued at its issue (its source bounds checked then: an
 * access outside every allocation is reported at the cp.async) and done at
 * the end of a later round (round-robin: the next; random: 0 to 2 rounds
 * later), or at the wait_group that needs it -- under the adversarial
 * schedule only then, as late as the hardware may. What it writes is
 * checked as a write of the issuing warp's cp.async stream (check.c):
 * complete for the issuing thread at its wait_group, for other threads once
 * a barrier orders that wait before them; and through the generic proxy
 * (PTX ISA: "cp.async is treated as a weak memory operation performed in
 * the generic proxy"), so a wgmma or TMA store reading it needs a
 * fence.proxy.async after the wait. A thread that ends with a copy its
 * wait_groups never covered is reported.
 */
#include <stdio.h>
#include <stdlib.h>

#include "exec_int.h"

typedef struct Copy {
  const EmIns *in;
  int thr, group;   /* the issuing thread, and the group it belongs to (its cpa_groups at issue) */
  uint64_t due;     /* the round from which a tick may do it */
  uint32_t smem;    /* destination, in the window */
  uint8_t size, src; /* cp-size, and the bytes read from src (the rest zero) */
  const uint8_t *g; /* the source (NULL: src 0) */
} Copy;

struct EmCpaq {
  Copy *q;
  int n, cap;
};

static void copy_do(Cta *c, const Copy *op) {
  uint8_t *d = c->smem + op->smem;
  if (op->src) memcpy(d, op->g, op->src);
  memset(d + op->src, 0, (size_t)(op->size - op->src));
  c->t[op->thr].cpa_inflight--;
}

/* Do (in issue order) the queued copies of thread thr (every thread: -1) in
 * groups below `below` (-1: any group) and due (or any when !due_only). */
static bool drain(Cta *c, int thr, int below, bool due_only) {
  struct EmCpaq *q = c->cpa;
  bool any = false;
  int k = 0;
  if (!q) return false;
  for (int i = 0; i < q->n; i++) {
    Copy *op = &q->q[i];
    if ((thr >= 0 && op->thr != thr) || (below >= 0 && op->group >= below) || (due_only && op->due > c->round)) {
      q->q[k++] = *op;
      continue;
    }
    copy_do(c, op);
    any = true;
  }
  q->n = k;
  return any;
}

static void issue(Cta *c, Thr *t, const EmIns *in) {
  const EmArg *a = in->a;
  uint64_t size = (uint64_t)a[2].imm, src = size;
  int extra = in->nargs - 3 - ((in->mod & EMM_HINT) ? 1 : 0);
  if (extra > 0) {
    const EmArg *s = &a[3];
    if (s->kind == EA_REG && c->f->reg_type[s->reg] == ET_PRED) src = em_src(c, t, s, ET_PRED) ? 0 : size; /* ignore-src */
    else src = em_src(c, t, s, ET_U32);
    if (c->failed) return;
  }
  if (src > size) {
    em_fail(c, t, in, "cp.async with src-size %llu, more than its cp-size %llu (undefined behaviour)",
            (unsigned long long)src, (unsigned long long)size);
    return;
  }
  Copy op = {.in = in, .thr = (int)(t - c->t), .group = t->cpa_groups, .size = (uint8_t)size, .src = (uint8_t)src};
  if (!em_smem_at(c, t, in, ES_SHARED, &a[0], (size_t)size, (uint32_t)size, "the cp.async destination", &op.smem)) return;
  if (src) { /* src-size 0 reads nothing: its address need not be valid */
    uint64_t ga;
    if (!em_addr_of(c, t, in, &a[1], &ga)) return;
    if (ga % size) {
      em_fail(c, t, in, "the cp.async source at 0x%llx is not %llu-byte aligned", (unsigned long long)ga,
              (unsigned long long)size);
      return;
    }
    if (!(op.g = em_gmem(c, t, in, ga, (size_t)src))) return;
  }
  if (!em_chk_cpa_issue(c, t, in, op.smem, (uint32_t)size, op.group)) return;
  op.due = c->sched == EM_SCHED_RR ? c->round + 1
           : c->sched == EM_SCHED_RANDOM ? c->round + 1 + em_rand(c) % 3
                                          : UINT64_MAX; /* adversarial: at the wait that needs it */
  struct EmCpaq *q = c->cpa;
  if (!q && !(q = c->cpa = calloc(1, sizeof *q))) {
    em_fail(c, t, in, "out of memory");
    return;
  }
  if (q->n == q->cap) {
    int cap = q->cap ? 2 * q->cap : 64;
    Copy *nq = realloc(q->q, sizeof *nq * (size_t)cap);
    if (!nq) {
      em_fail(c, t, in, "out of memory");
      return;
    }
    q->q = nq, q->cap = cap;
  }
  q->q[q->n++] = op;
  t->cpa_inflight++;
  t->cpa_last = op.group + 1;
  t->cpa_in = in;
  t->pc++;
}

void em_cpa_step(Cta *c, Thr *t, const EmIns *in) {
  switch ((EmOpc)in->opc) {
  case EM_CPA:
    issue(c, t, in);
    return;
  case EM_CPA_COMMIT:
    t->cpa_groups++;
    break;
  case EM_CPA_WAIT: { /* at most N of the thread's most recent groups still pending */
    int64_t keep = (in->mod & EMM_ALL) ? 0 : in->a[0].imm;
    if (keep < 0 || keep > 1 << 20) {
      em_fail(c, t, in, "cp.async.wait_group %lld", (long long)keep);
      return;
    }
    if (in->mod & EMM_ALL) t->cpa_groups++; /* wait_all: commit_group; wait_group 0 */
    int below = t->cpa_groups - (int)keep;
    if (t->cpa_inflight) drain(c, (int)(t - c->t), below, false);
    if (below > t->cpa_waited) t->cpa_waited = below;
    em_chk_cpa_wait(c, t, below);
    break;
  }
  default:
    em_fail(c, t, in, "the emulator cannot run this instruction yet");
    return;
  }
  t->pc++;
}

bool em_cpa_tick(Cta *c, bool all) {
  if (!c->cpa || !c->cpa->n || c->sched == EM_SCHED_ADVERSARIAL) return false;
  return drain(c, -1, -1, !all);
}

bool em_cpa_end(Cta *c) {
  for (int i = 0; c->cpa && i < c->n; i++) {
    const Thr *t = &c->t[i];
    if (t->cpa_last <= t->cpa_waited) continue;
    if (t->cpa_last > t->cpa_groups)
      em_fail(c, t, t->cpa_in, "cp.async: the thread ended with copies never committed (no cp.async.commit_group "
              "after this cp.async, so no cp.async.wait_group waits for it)");
    else
      em_fail(c, t, t->cpa_in, "cp.async: the thread ended with copies never waited for (no cp.async.wait_group or "
              "wait_all covers the group of this cp.async)");
    return false;
  }
  if (c->cpa) drain(c, -1, -1, false);
  return true;
}

void em_cpa_free(Cta *c) {
  if (!c->cpa) return;
  free(c->cpa->q);
  free(c->cpa);
  c->cpa = NULL;
}

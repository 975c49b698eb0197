/* cluster.c - thread block clusters (issue 6): the cluster's special
 * registers, barrier.cluster, mapa and the shared::cluster window.
 *
 * Every CTA belongs to a cluster (a launch without a cluster shape: a
 * cluster of one, as the PTX ISA says); the CTAs of a cluster are created
 * together and run co-scheduled (sched.c: rounds over all of them), so
 * that they may wait for each other. A shared::cluster address is the
 * shared-window offset with the CTA's rank + 1 above bit 24
 * (EM_DSMEM_TAG); an untagged one is the executing CTA's own (the
 * shared::cta window lies inside the shared::cluster one). mapa makes a
 * tagged address (a generic one for mapa.u64: EM_SMEM_GENERIC + the tagged
 * offset); em_mem and em_smem_at follow the tag into the other CTA's
 * window.
 *
 * barrier.cluster (PTX ISA, "barrier.cluster"): every non-exited thread
 * of the cluster arrives (barrier.cluster.arrive), then waits for the
 * phase to complete (barrier.cluster.wait); a thread that exits counts as
 * arrived. An arrive twice with no wait between, and a wait with no
 * arrive, are reported. .relaxed, .release, .acquire and .aligned order
 * nothing here (sequentially consistent); the shared-memory checks see
 * the barrier as a bar.sync over each CTA (check.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "exec_int.h"

Cta *em_clu_owner(Cta *c, const Thr *t, const EmIns *in, uint64_t *a) {
  uint64_t tag = *a >> EM_DSMEM_SHIFT;
  if (!tag) return c;
  if (tag > (uint64_t)c->clu->n) {
    em_fail(c, t, in, "shared::cluster address 0x%llx names CTA rank %llu of a cluster of %d CTAs",
            (unsigned long long)*a, (unsigned long long)(tag - 1), c->clu->n);
    return NULL;
  }
  *a &= (1ull << EM_DSMEM_SHIFT) - 1;
  Cta *d = c->clu->cta[tag - 1];
  if (d->ended) { /* its threads all exited: on the GPU its shared memory may belong to another CTA by now */
    em_fail(c, t, in, "cluster: a shared::cluster access to CTA %u,%u,%u (rank %d), whose threads have all exited (a "
            "barrier.cluster before its exit keeps its shared memory alive for the cluster)", d->ctaid[0], d->ctaid[1],
            d->ctaid[2], d->rank);
    return NULL;
  }
  return d;
}

/* The phase completes once every live thread of the cluster arrived: the waiters look again. */
static void settle(EmClu *u) {
  if (!u->cb_arrived || u->cb_arrived < u->cb_live) return;
  u->cb_phase++;
  u->cb_arrived = 0;
  memcpy(u->cb_done, u->cb_acc, sizeof u->cb_done);
  memset(u->cb_acc, 0, sizeof u->cb_acc);
  for (int k = 0; k < u->n; k++) {
    Cta *d = u->cta[k];
    em_chk_cbar_complete(d);
    for (int i = 0; i < d->n; i++)
      if (d->t[i].state == T_CBAR) d->t[i].state = T_RUN;
  }
}

void em_clu_exit(Cta *c, Thr *t) {
  EmClu *u = c->clu;
  u->cb_live--;
  if (t->cb_arr) u->cb_arrived--; /* its arrival now counts through its exit */
  t->cb_arr = 0;
  settle(u);
}

void em_clu_step(Cta *c, Thr *t, const EmIns *in) {
  EmClu *u = c->clu;
  if (in->opc == EM_MAPA) {
    bool generic = in->space != ES_SHARED;
    uint64_t a = em_src(c, t, &in->a[1], generic ? ET_U64 : ET_U32), off = a;
    uint64_t rank = em_src(c, t, &in->a[2], ET_U32);
    if (generic) {
      if (a < EM_SMEM_GENERIC || a >= EM_SMEM_GENERIC + (1ull << 32)) {
        em_fail(c, t, in, "mapa of 0x%llx, not a shared-memory address", (unsigned long long)a);
        return;
      }
      off = a - EM_SMEM_GENERIC;
    }
    off &= (1ull << EM_DSMEM_SHIFT) - 1;
    if (rank >= (uint64_t)u->n) {
      em_fail(c, t, in, "mapa to CTA rank %llu of a cluster of %d CTAs", (unsigned long long)rank, u->n);
      return;
    }
    if (off >= c->smem_size) {
      em_fail(c, t, in, "mapa of smem+0x%llx, outside the CTA's %zu bytes of shared memory", (unsigned long long)off,
              c->smem_size);
      return;
    }
    uint64_t r = ((rank + 1) << EM_DSMEM_SHIFT) | off;
    em_dst(t, &in->a[0], (EmType)in->type, generic ? EM_SMEM_GENERIC + r : r);
    t->pc++;
    return;
  }
  if (in->mod & EMM_ARRIVE) {
    if (t->cb_arr) {
      em_fail(c, t, in, "barrier.cluster.arrive twice (phase %u) with no barrier.cluster.wait between", u->cb_phase);
      return;
    }
    t->cb_arr = u->cb_phase + 1;
    u->cb_arrived++;
    em_chk_cbar_arrive(c, t);
    em_chk_x_release(c, t, u->cb_acc);
    t->pc++;
    settle(u);
    return;
  }
  if (!t->cb_arr) {
    em_fail(c, t, in, "barrier.cluster.wait with no barrier.cluster.arrive before it");
    return;
  }
  if (u->cb_phase < t->cb_arr) { /* its phase has not completed: wait (the pc stays) */
    t->state = T_CBAR;
    return;
  }
  t->cb_arr = 0;
  em_chk_cbar_wait(c, t);
  em_chk_x_acquire(t, u->cb_done);
  t->pc++;
}

void em_clu_waits(const Cta *c, const Thr *t, char *buf, size_t n) {
  const EmClu *u = c->clu;
  snprintf(buf, n, "barrier.cluster (phase %u: %d of the cluster's %d live threads arrived, %d CTA%s)", u->cb_phase,
           u->cb_arrived, u->cb_live, u->n, u->n == 1 ? "" : "s");
}

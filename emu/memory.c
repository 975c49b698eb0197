/* memory.c - the host bytes behind an address of a PTX memory space:
 * the CTA's shared-memory window (or another CTA's of the cluster, through
 * a shared::cluster address: cluster.c finds it, check.c records the
 * remote access), the kernel's parameters, the module's .global data and
 * the launch's device ranges. A bad address is a report, never a host
 * access. exec.c and the engines call it; it calls cluster.c, check.c and
 * report.c. */
#include <stdio.h>

#include "exec_int.h"

/* Host pointer for `bytes` at address a in space sp; NULL (and a report)
 * when it is outside every window and range. */
uint8_t *em_mem(Cta *c, const Thr *t, const EmIns *in, EmSpace sp, uint64_t a, size_t bytes) {
  if (sp == ES_GENERIC && a >= EM_SMEM_GENERIC && a < EM_SMEM_GENERIC + (1ull << 32)) {
    sp = ES_SHARED;
    a -= EM_SMEM_GENERIC;
  }
  if ((sp == ES_GENERIC || sp == ES_PARAM) && a >= EM_PARAM_GENERIC && a < EM_PARAM_GENERIC + (1ull << 32)) {
    a -= EM_PARAM_GENERIC;
    if (a + bytes > c->l->params_size) {
      em_fail(c, t, in, "parameter read at offset %llu (%zu bytes) past the %zu-byte parameter buffer",
           (unsigned long long)a, bytes, c->l->params_size);
      return NULL;
    }
    return (uint8_t *)c->l->params + a;
  }
  if (sp == ES_SHARED) {
    uint64_t tagged = a;
    Cta *d = em_clu_owner(c, t, in, &a); /* a shared::cluster address: another CTA's window (cluster.c) */
    if (!d) return NULL;
    if (a + bytes > d->smem_size || a + bytes < a) {
      em_fail(c, t, in, "shared-memory access at %llu (%zu bytes) outside the CTA's %zu bytes%s",
              (unsigned long long)a, bytes, d->smem_size, d != c || tagged != a ? " (shared::cluster)" : "");
      return NULL;
    }
    if (d != c && in && (in->opc == EM_ST || in->opc == EM_ATOM || in->opc == EM_RED))
      em_chk_remote_write(d, c, (uint32_t)a, (uint32_t)bytes);
    if (d != c && in && in->opc == EM_LD && !em_chk_remote_read(d, c, t, in, (uint32_t)a, (uint32_t)bytes)) return NULL;
    return d->smem + a;
  }
  if (sp == ES_PARAM) {
    em_fail(c, t, in, "parameter address %llu outside the parameter space", (unsigned long long)a);
    return NULL;
  }
  if (a % (bytes < 16 ? bytes : 16)) {
    em_fail(c, t, in, "misaligned %zu-byte access at 0x%llx", bytes, (unsigned long long)a);
    return NULL;
  }
  return em_gmem(c, t, in, a, bytes);
}

/* Global memory: inside the module's .global data or one of the launch's
 * ranges (any address but null when it gives none); no alignment asked. */
uint8_t *em_gmem(Cta *c, const Thr *t, const EmIns *in, uint64_t a, size_t bytes) {
  if (c->l->pdl && t && !t->gdc_waited) { /* the previous grid may still be writing it on a GPU */
    em_fail(c, t, in, "global access at 0x%llx before griddepcontrol.wait, in a launch that overlaps the stream's "
                      "previous grid (programmatic dependent launch)", (unsigned long long)a);
    return NULL;
  }
  for (int i = 0; i < c->m->nglobals; i++) { /* the module's own .global data */
    const EmGlobal *g = &c->m->globals[i];
    uint64_t b = (uint64_t)(uintptr_t)g->init;
    if (g->init && a >= b && a + bytes <= b + g->size) return (uint8_t *)(uintptr_t)a;
  }
  if (c->l->ranges) {
    for (int i = 0; i < c->l->nranges; i++) {
      uint64_t b = (uint64_t)(uintptr_t)c->l->ranges[i].base;
      if (a >= b && a + bytes <= b + c->l->ranges[i].bytes) return (uint8_t *)(uintptr_t)a;
    }
    em_fail(c, t, in, "global access at 0x%llx (%zu bytes) outside every allocation", (unsigned long long)a, bytes);
    return NULL;
  }
  if (a < 4096) {
    em_fail(c, t, in, "global access at 0x%llx: a null pointer", (unsigned long long)a);
    return NULL;
  }
  return (uint8_t *)(uintptr_t)a;
}

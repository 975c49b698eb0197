/* report.c - at the bottom of the emulator's files: the one report a CTA
 * makes when something fails (em_fail: where in the Tile source and the
 * PTX, which CTA and thread, which schedule), the schedules' names, and
 * the xorshift dice the random and adversarial schedules roll (em_rand).
 * It calls no other file of the emulator, so every file may call it. */
#include <stdarg.h>
#include <stdio.h>

#include "exec_int.h"

void em_fail(Cta *c, const Thr *t, const EmIns *in, const char *fmt, ...) {
  if (c->failed) return;
  c->failed = true;
  char what[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  char where[192] = "";
  if (in) {
    const char *file = in->file > 0 && in->file < c->m->nfiles && c->m->files[in->file] ? c->m->files[in->file] : NULL;
    if (file && in->line > 0)
      snprintf(where, sizeof where, "%s:%d: ", file, in->line);
  }
  char who[128] = "", rank[32] = "";
  if (c->clu && c->clu->n > 1) snprintf(rank, sizeof rank, " rank %d", c->rank);
  if (t)
    snprintf(who, sizeof who, " (CTA %u,%u,%u%s thread %u,%u,%u)", c->ctaid[0], c->ctaid[1], c->ctaid[2], rank,
             t->tid[0], t->tid[1], t->tid[2]);
  char sched[64];
  if (c->sched == EM_SCHED_RR) snprintf(sched, sizeof sched, "schedule rr");
  else snprintf(sched, sizeof sched, "schedule %s, seed %llu", em_sched_name((EmSched)c->sched),
                (unsigned long long)c->l->seed);
  snprintf(c->err, c->errlen, "%s%s%s%s%s [ptx line %d] [%s]", where, what, who, in && in->text ? ": " : "",
           in && in->text ? in->text : "", in ? in->ptx_line : 0, sched);
}

const char *em_sched_name(EmSched s) {
  return s == EM_SCHED_RANDOM ? "random" : s == EM_SCHED_ADVERSARIAL ? "adversarial" : "rr";
}

uint64_t em_rand(Cta *c) {
  uint64_t x = c->rng ? c->rng : 0x9e3779b97f4a7c15ull;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return c->rng = x;
}

/* regs.c - the register file under setmaxnreg (issue 6): a CTA's pool of
 * registers, what each warp holds, setmaxnreg.inc waiting for registers.
 *
 * PTX ISA, "setmaxnreg": setmaxnreg.dec releases registers of the warps
 * of a warpgroup to a per-CTA register pool; setmaxnreg.inc asks the pool
 * for registers and blocks until enough are free; both are .sync.aligned
 * over a warpgroup. The CTA starts with every warp holding the kernel's
 * launch register count (registers are allocated 8 a thread at a time, so
 * 255 counts 256) and nothing free in the pool: the pool holds only what
 * .dec gave back. (The SM's 65,536 registers bound the CTA's allocation at
 * launch; a launch that asks more is refused.) The launch count is the
 * cubin's (EmLaunch.regs, what the runtime reads from its .nv.info), else
 * the kernel's .maxnreg, else the cap ptxas derives from .maxntid and
 * .minnctapersm; with none of them ptxas ignores setmaxnreg (C7508) and so
 * does the pool here (the instruction is still checked).
 *
 * Without a cap setmaxnreg is checked and passed over, thread by thread
 * (exec.c). With one, a warpgroup's setmaxnreg (the CTA's last warpgroup
 * incomplete: reported) is run once all its 128 threads stand at it:
 * .dec gives back (held - N) registers a thread of each warp and lets the
 * warpgroups waiting in .inc take what now fits (in warpgroup order);
 * .inc takes (N - held) a thread or leaves its threads in T_REGS until a
 * .dec frees enough. A warpgroup waiting for registers that never come is
 * a deadlock report naming setmaxnreg, the registers asked and what the
 * pool holds. Exited warps keep their registers (the pool gets them back
 * only through .dec).
 */
#include <stdio.h>
#include <stdlib.h>

#include "exec_int.h"

enum { EM_SM_REGS = 65536 };

/* The launch count: regs (the cubin's) when given, else the PTX's cap. 0: not modelled. */
static int launch_regs(const EmFunc *f, unsigned regs, uint64_t nthr) {
  int r = (int)regs;
  if (!r) r = f->maxnreg;
  if (!r && f->maxntid[0] && f->minnctapersm) {
    uint64_t n = (uint64_t)f->maxntid[0] * (uint64_t)(f->maxntid[1] ? f->maxntid[1] : 1) *
                 (uint64_t)(f->maxntid[2] ? f->maxntid[2] : 1) * (uint64_t)f->minnctapersm;
    n = (n + 31) / 32 * 32;
    r = n ? (int)(EM_SM_REGS / n) / 8 * 8 : 0;
    if (r > 255) r = 255;
  }
  (void)nthr;
  return r;
}

bool em_reg_launch(const EmFunc *f, unsigned regs, uint64_t nthr, int *out, char *err, size_t errlen) {
  int r = launch_regs(f, regs, nthr);
  *out = 0;
  if (!r) return true;
  int per = (r + 7) / 8 * 8;
  uint64_t warps = (nthr + 31) / 32, total = warps * 32 * (uint64_t)per;
  if (total > EM_SM_REGS) {
    snprintf(err, errlen,
             "launch of %s: %llu threads x %d registers (%llu) is more than an SM's %d registers "
             "(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES on the GPU)",
             f->name, (unsigned long long)(warps * 32), per, (unsigned long long)total, EM_SM_REGS);
    return false;
  }
  *out = per;
  return true;
}

bool em_reg_new(Cta *c) {
  int nw = (c->n + 31) / 32;
  c->reg_warp = malloc(sizeof *c->reg_warp * (size_t)nw);
  if (!c->reg_warp) return false;
  for (int w = 0; w < nw; w++) c->reg_warp[w] = c->reg_launch;
  c->reg_free = 0;
  return true;
}

void em_reg_free(Cta *c) {
  free(c->reg_warp);
  c->reg_warp = NULL;
}

/* The registers warpgroup g (its warps below the CTA's end) needs more to hold n a thread. */
static int64_t need(const Cta *c, int g, int n) {
  int64_t k = 0;
  for (int w = g * 4; w < g * 4 + 4 && w * 32 < c->n; w++) k += 32 * (int64_t)(n - c->reg_warp[w]);
  return k;
}

static void set_warps(Cta *c, int g, int n) {
  for (int w = g * 4; w < g * 4 + 4 && w * 32 < c->n; w++) c->reg_warp[w] = n;
}

/* Release the threads of warpgroup g waiting at its setmaxnreg. */
static void release(Cta *c, int g) {
  for (int i = g * 128; i < g * 128 + 128 && i < c->n; i++) {
    Thr *o = &c->t[i];
    o->state = T_RUN;
    o->pc++;
  }
}

/* The warpgroups waiting in setmaxnreg.inc take what now fits, in order. */
static void grant(Cta *c) {
  for (int g = 0; g * 128 < c->n; g++) {
    Thr *t0 = &c->t[g * 128];
    if (t0->state != T_REGS) continue;
    int n = (int)c->f->ins[t0->pc].a[0].imm;
    int64_t k = need(c, g, n);
    if (k > c->reg_free) continue;
    c->reg_free -= k;
    set_warps(c, g, n);
    release(c, g);
  }
}

/* Every thread of t's warpgroup stands at the setmaxnreg in. */
void em_reg_finish(Cta *c, Thr *t, const EmIns *in) {
  int g = (int)t->warp / 4, n = (int)in->a[0].imm;
  bool inc = in->sub == ESB_INC;
  for (int w = g * 4; w < g * 4 + 4 && w * 32 < c->n; w++)
    if (inc ? n < c->reg_warp[w] : n > c->reg_warp[w]) {
      em_fail(c, t, in, "setmaxnreg.%s to %d registers a thread, but warp %d holds %d: .%s cannot %s them",
              inc ? "inc" : "dec", n, w, c->reg_warp[w], inc ? "inc" : "dec", inc ? "lower" : "raise");
      return;
    }
  if (!inc) {
    c->reg_free -= need(c, g, n); /* a negative need: what it gives back */
    set_warps(c, g, n);
    release(c, g);
    grant(c);
    return;
  }
  for (int i = g * 128; i < g * 128 + 128 && i < c->n; i++) c->t[i].state = T_REGS;
  grant(c);
}

void em_reg_waits(const Cta *c, const Thr *t, char *buf, size_t n) {
  int g = (int)t->warp / 4, want = (int)c->f->ins[t->pc].a[0].imm;
  int64_t k = need(c, g, want);
  snprintf(buf, n,
           "registers: setmaxnreg.inc to %d registers a thread asks the CTA's register pool for %lld more "
           "(warps %d-%d, from %d a thread), and the pool holds %lld (the CTA started with %d threads x %d = %lld; "
           "an SM has %d)",
           want, (long long)k, g * 4, g * 4 + 3, c->reg_warp[g * 4], (long long)c->reg_free, (c->n + 31) / 32 * 32,
           c->reg_launch, (long long)((c->n + 31) / 32 * 32) * c->reg_launch, EM_SM_REGS);
}

/* tmem.c - Blackwell's tensor memory and the tcgen05 instructions under
 * the emulator (issues 16 and 18): a CTA's 128 x 512 cells, their
 * allocation, the asynchronous MMA pipe and its commits to mbarriers, and
 * tcgen05.ld / tcgen05.st with Blackwell's lane rules. What one MMA
 * computes, the descriptors and the ld/st layouts are tcgen05.c's.
 *
 * PTX ISA 9.7.16 as modelled here (cta_group::1; cta_group::2 below):
 *   - tcgen05.alloc / dealloc / relinquish_alloc_permit are warp
 *     collectives. alloc takes a power of two of columns from 32 to 512
 *     and writes the address (lane 0 << 16 | column) to shared memory; the
 *     emulator places it at the lowest free column that is a multiple of
 *     its size. Columns not yet written hold a NaN pattern (0x7fa0dead).
 *     An allocation the CTA's 512 columns cannot hold is reported (on the
 *     GPU it would wait for another warp's dealloc; a CTA's own
 *     allocations that exceed 512 columns are a bug), so is an alloc after
 *     relinquish_alloc_permit, a dealloc of columns not allocated (twice:
 *     "double dealloc"), of a different size than allocated, or while an
 *     MMA into them is still in flight, any access to columns not
 *     allocated ("after its dealloc" when they were), and a CTA that ends
 *     with columns allocated.
 *   - tcgen05.mma is issued by one thread; its operands' values (addresses,
 *     descriptors, enable-input-d) are taken at issue and checked then.
 *     The MMAs of a CTA run in issue order, one tensor-core pipe, at a
 *     later scheduling point (like a TMA copy: the end of the next round,
 *     up to two more under a random schedule, only when nothing else can
 *     move under the adversarial one); the shared memory and tensor memory
 *     they read are read then, as late as the hardware may read them.
 *   - tcgen05.commit (one thread) queues behind every operation issued
 *     before it and makes its mbarrier receive one arrival when they are
 *     done.
 *   - tcgen05.ld / st are warp collectives (every thread gives the same
 *     address); warp w reaches lanes 32 (w % 4) .. 32 (w % 4) + 31 only.
 *     ld reads the cells at issue; its registers hold EM_TC_POISON until
 *     the thread's tcgen05.wait::ld, where the values land (a read of one
 *     before that is reported). st takes its registers at issue and writes
 *     the cells at the thread's tcgen05.wait::st (an MMA or another warp
 *     reading them before that sees the old values, as it may on the GPU).
 *   - tcgen05.fence::before/after_thread_sync order nothing here (the
 *     emulator is sequentially consistent); the checks follow after.
 *
 * With the checks on (c->chk), a shadow of each lane quarter's columns
 * orders tcgen05's accesses (check.c's clocks): its last tcgen05.st
 * (warp, whether its wait::st came, that wait's epoch) and the last MMA
 * writing it (the MMA pipe's epoch). An MMA reading cells (D with
 * enable-input-d, A in tensor memory) or a tcgen05.ld of cells another
 * warp stored must come after the writer's tcgen05.wait::st, a thread
 * sync and a tcgen05.fence::after_thread_sync (its own warp's: after the
 * wait::st); a tcgen05.ld or st of cells an MMA writes must come after a
 * wait on the mbarrier of a tcgen05.commit that covers the MMA. Each is a
 * `race` report naming the columns, the lanes, the other instruction and
 * what is missing.
 *
 * .cta_group::2 (a CTA pair: the CTAs of the cluster whose ranks differ in
 * bit 0; PTX ISA 9.7.16, "Issue Granularity"):
 *   - every tcgen05 instruction of a CTA uses one .cta_group (the PTX ISA
 *     asks it of a kernel); mixing is reported at the first that differs;
 *     the peer CTA must be in the cluster (a cluster of an even size);
 *   - alloc / dealloc / relinquish are run by a warp of each CTA of the
 *     pair; each runs on its own CTA's columns here (the same program makes
 *     the same choices, so the addresses agree), and an MMA checks that its
 *     D columns are allocated in both;
 *   - tcgen05.mma.cta_group::2 is issued by one thread of either CTA and
 *     queued on that CTA's pipe; when it runs it reads A and B from both
 *     CTAs' shared memory and writes both CTAs' tensor memory
 *     (tcgen05_pair.c); the peer must not have ended. A dealloc in either
 *     CTA of columns a queued pair MMA writes is reported;
 *   - tcgen05.commit (either group) arrives, when the issuing thread's
 *     MMAs before it are done, on the mbarrier it names (a shared::cluster
 *     address: possibly the peer's), or with .multicast::cluster on the
 *     mbarrier at that offset in each CTA of ctaMask;
 *   - the checks: the pair MMA's writes stand in each CTA's shadow under
 *     that CTA's own pipe epoch, and the commit carries each target CTA's
 *     epoch to its mbarrier, so the peer's tcgen05.ld of D before a wait on
 *     a commit covering the MMA is a race report, as in one CTA. The
 *     tcgen05.st-before-MMA ordering is checked for the issuing CTA's
 *     tensor memory only (the peer's threads have no clocks the issuing
 *     thread's can be compared with); with A in tensor memory, the peer's
 *     cells of A are checked at the CTA's granularity (tc_order_peer: the
 *     peer's wait::st, then a release of the peer's that the issuing thread
 *     acquired).
 */
#include <stdio.h>
#include <stdlib.h>

#include "exec_int.h"
#include "tcgen05.h"

static bool mma_smem_reads(Cta *c, Cta *pc, bool pair, const Thr *t, const EmIns *in, const EmTcMma *m,
                           uint32_t ep);

#define TC_GARBAGE 0x7fa0deadu

typedef struct TcAlloc {
  int col, ncols;
  const EmIns *in; /* its tcgen05.alloc */
} TcAlloc;

typedef struct TcOp { /* an MMA or a commit, in issue order */
  const EmIns *in;
  int thr;
  bool commit;
  bool pair;       /* .cta_group::2: an MMA of the pair (the peer: rank ^ 1) */
  uint16_t mask;   /* a commit: the CTAs (ranks) whose mbarrier at mbar it arrives on */
  uint32_t eps[16]; /* a commit: each target CTA's pipe epoch at issue (the checks) */
  uint32_t ep;   /* the checks' MMA-pipe epoch: an MMA's own, the last MMA's before a commit */
  uint32_t mbar;
  EmTcMma mma;
  uint64_t due;
} TcOp;

typedef struct TcSt {
  uint16_t lane, col;
  uint32_t v;
} TcSt;

typedef struct TcLd {
  int32_t reg;
  uint32_t v;
} TcLd;

typedef struct TcThr { /* a thread's tcgen05.ld values and tcgen05.st cells not yet waited for */
  TcLd *ld;
  int nld, capld;
  TcSt *st;
  int nst, capst;
  const EmIns *st_in;
  int (*ldr)[3]; /* the checks: the cells of the warp's tcgen05.ld not yet waited for (quarter, column, count) */
  int nldr, capldr;
} TcThr;

struct EmTc {
  EmTmemCells *tm;
  TcAlloc al[EM_TMEM_COLS / 32];
  int nal;
  const EmIns *freed[EM_TMEM_COLS]; /* the dealloc that last released each column, NULL: never */
  bool relinquished;
  int group;             /* the .cta_group of its tcgen05 instructions: 1 or 2 (0: none yet), and the first */
  const EmIns *group_in;
  bool coll;             /* the A collector buffer holds an operand (a .collector::a::fill MMA's) */
  bool coll_tmem;
  uint64_t coll_a;       /* its descriptor or tensor-memory address */
  const EmIns *coll_in;
  TcOp *q;
  int nq, capq;
  TcThr *th; /* c->n of them */
  struct TcCell *ck; /* the checks' shadow, [4][512] (NULL: checks off) */
  uint32_t last_ep;  /* the checks' epoch of the last MMA issued */
};

/* The checks' shadow of one column of one lane quarter. */
typedef struct TcCell {
  int8_t stw;            /* the warp whose tcgen05.st wrote it last (-1: none since the last MMA write) */
  bool pend;             /* that st's wait::st has not come yet */
  uint32_t step;         /* the writer's epoch at its wait::st */
  uint32_t xstep;        /* and its CTA's cluster epoch then (what the pair's other CTA must have acquired) */
  const EmIns *st_in;    /* the st, and a thread of its warp */
  int st_thr;
  uint32_t mep;          /* the last MMA writing it: its pipe epoch (0: none), instruction, thread */
  const EmIns *mma_in;
  int mma_thr;
  int8_t ldw;            /* the warp whose tcgen05.ld read it last (-1: none since the last MMA write) */
  bool ldpend;           /* that ld's wait::ld has not come yet */
  uint32_t ldstep;       /* the reader's epoch at its wait::ld */
  const EmIns *ld_in;    /* the ld, and a thread of its warp */
  int ld_thr;
} TcCell;

static bool grow(void **p, int *cap, int need, size_t sz) {
  if (need <= *cap) return true;
  int nc = *cap ? 2 * *cap : 16;
  while (nc < need) nc *= 2;
  void *np = realloc(*p, sz * (size_t)nc);
  if (!np) return false;
  *p = np, *cap = nc;
  return true;
}

static struct EmTc *tc_of(Cta *c, const Thr *t, const EmIns *in) {
  if (c->tc) return c->tc;
  struct EmTc *tc = calloc(1, sizeof *tc);
  if (tc) tc->tm = malloc(sizeof *tc->tm), tc->th = calloc((size_t)c->n, sizeof *tc->th);
  if (tc && c->chk && (tc->ck = calloc(4 * EM_TMEM_COLS, sizeof *tc->ck)))
    for (int i = 0; i < 4 * EM_TMEM_COLS; i++) tc->ck[i].stw = -1, tc->ck[i].ldw = -1;
  if (!tc || !tc->tm || !tc->th || (c->chk && !tc->ck)) {
    if (tc) free(tc->tm), free(tc->th), free(tc->ck);
    free(tc);
    em_fail(c, t, in, "out of memory (tensor memory)");
    return NULL;
  }
  return c->tc = tc;
}

void em_tc_free(Cta *c) {
  struct EmTc *tc = c->tc;
  if (!tc) return;
  for (int i = 0; i < c->n; i++) free(tc->th[i].ld), free(tc->th[i].st), free(tc->th[i].ldr);
  free(tc->th);
  free(tc->q);
  free(tc->tm);
  free(tc->ck);
  free(tc);
  c->tc = NULL;
}

/* ---- the checks' ordering of tcgen05 accesses ---- */

static const char *where(const Cta *c, const EmIns *in, char *buf, size_t n) {
  const char *f = in && in->file > 0 && in->file < c->m->nfiles ? c->m->files[in->file] : NULL;
  if (f && in->line > 0) snprintf(buf, n, "%s:%d", f, in->line);
  else snprintf(buf, n, "ptx line %d", in ? in->ptx_line : 0);
  return buf;
}

/* t's access (what: "the tcgen05.ld reads") of quarters q0..q1, columns col..col+n-1, against the last st and
 * (mma: ld and st) the last MMA of each cell; false after a report. */
static bool tc_order(Cta *c, const Thr *t, const EmIns *in, const char *what, int q0, int q1, int col, int n,
                     bool st_too, bool mma) {
  struct EmTc *tc = c->tc;
  if (!tc || !tc->ck) return true;
  for (int q = q0; q <= q1; q++)
    for (int x = col; x < col + n && x < EM_TMEM_COLS; x++) {
      const TcCell *k = &tc->ck[q * EM_TMEM_COLS + x];
      char w[160], cols[96];
      snprintf(cols, sizeof cols, "tensor memory columns %d..%d (lanes %d..%d)", col, col + n - 1, 32 * q, 32 * q + 31);
      if (mma && k->mep && !em_chk_tc_mma_done(c, t, k->mep)) {
        em_fail(c, t, in, "race: %s %s, which the tcgen05.mma at %s (thread %d) may still write: no wait on the "
                "mbarrier of a tcgen05.commit after it happens before", what, cols, where(c, k->mma_in, w, sizeof w),
                k->mma_thr);
        return false;
      }
      if (!st_too || k->stw < 0) continue;
      bool own = k->stw == (int)t->warp;
      int kn = k->pend ? -1 : em_chk_tc_knows(c, t, k->stw, k->step);
      if (kn == 2) continue;
      char who[64] = "its own warp's";
      if (!own) snprintf(who, sizeof who, "warp %d's", k->stw);
      em_fail(c, t, in, "race: %s %s, which %s tcgen05.st at %s (thread %d) wrote, %s", what, cols, who,
              where(c, k->st_in, w, sizeof w), k->st_thr,
              kn < 0 ? (own ? "before the tcgen05.wait::st that completes it" : "before that warp's tcgen05.wait::st")
              : kn == 0 ? "with no thread sync (a barrier or an mbarrier) between the writer's tcgen05.wait::st and "
                          "this thread"
                        : "with no tcgen05.fence::after_thread_sync between the thread sync and this instruction");
      return false;
    }
  return true;
}

/* An MMA's write of columns col..col+n-1 (all four quarters) against the last tcgen05.ld of each cell (a
 * write after a read): the reading warp's tcgen05.wait::ld, a thread sync and a tcgen05.fence::after_thread_sync
 * must come before the MMA is issued, or it may overwrite the cells before the ld has read them (the early
 * release of an accumulator: its readers hand it back once their ld's are done); false after a report. */
static bool tc_order_war(Cta *c, const Thr *t, const EmIns *in, int col, int n) {
  struct EmTc *tc = c->tc;
  if (!tc || !tc->ck) return true;
  for (int q = 0; q < 4; q++)
    for (int x = col; x < col + n && x < EM_TMEM_COLS; x++) {
      const TcCell *k = &tc->ck[q * EM_TMEM_COLS + x];
      if (k->ldw < 0) continue;
      int kn = k->ldpend ? -1 : em_chk_tc_knows(c, t, k->ldw, k->ldstep);
      if (kn == 2) continue;
      char w[160];
      em_fail(c, t, in, "race: the tcgen05.mma writes tensor memory columns %d..%d (lanes %d..%d), which warp %d's "
              "tcgen05.ld at %s (thread %d) reads, %s", col, col + n - 1, 32 * q, 32 * q + 31, k->ldw,
              where(c, k->ld_in, w, sizeof w), k->ld_thr,
              kn < 0 ? "before that warp's tcgen05.wait::ld"
              : kn == 0 ? "with no thread sync (a barrier or an mbarrier) between the reader's tcgen05.wait::ld and "
                          "this thread"
                        : "with no tcgen05.fence::after_thread_sync between the thread sync and this instruction");
      return false;
    }
  return true;
}

/* A pair MMA's read of A in the peer CTA pc's tensor memory (columns col..col+n-1, all lanes), issued by t of
 * c: each cell a tcgen05.st of pc's wrote must have had its wait::st, and t must have acquired pc's cluster
 * epoch of that wait through a release of pc's (an mbarrier arrival on c's barrier after the store); false after
 * a report. Not checked across the CTAs: the writer's own thread sync and tcgen05 fences (the epochs are the
 * CTA's, not the warp's). */
static bool tc_order_peer(Cta *c, Cta *pc, const Thr *t, const EmIns *in, int col, int n) {
  struct EmTc *ptc = pc->tc;
  if (!ptc || !ptc->ck) return true;
  for (int q = 0; q < 4; q++)
    for (int x = col; x < col + n && x < EM_TMEM_COLS; x++) {
      const TcCell *k = &ptc->ck[q * EM_TMEM_COLS + x];
      if (k->stw < 0 || (!k->pend && em_chk_x_knows(t, pc, k->xstep))) continue;
      char w[160];
      em_fail(c, t, in, "race: the tcgen05.mma.cta_group::2 reads A in the peer CTA's (rank %d) tensor memory, columns "
              "%d..%d (lanes %d..%d), which warp %d's tcgen05.st at %s (thread %d) wrote, %s", pc->rank, col,
              col + n - 1, 32 * q, 32 * q + 31, k->stw, where(pc, k->st_in, w, sizeof w), k->st_thr,
              k->pend ? "before that warp's tcgen05.wait::st"
                      : "with no release of that CTA's after its tcgen05.wait::st (an mbarrier arrival on this CTA's "
                        "barrier) acquired by this thread");
      return false;
    }
  return true;
}

/* ---- allocation ---- */

static const TcAlloc *alloc_of(const struct EmTc *tc, int col) {
  for (int i = 0; i < tc->nal; i++)
    if (col >= tc->al[i].col && col < tc->al[i].col + tc->al[i].ncols) return &tc->al[i];
  return NULL;
}

/* Columns col..col+n-1 allocated in tc (c's, or its peer's) (else a report naming `what`). */
static bool cols_ok_in(Cta *c, const struct EmTc *tc, const Thr *t, const EmIns *in, int col, int n, const char *what) {
  if (!tc) {
    em_fail(c, t, in, "%s: no column of tensor memory is allocated", what);
    return false;
  }
  if (col < 0 || n < 0 || col + n > EM_TMEM_COLS) {
    em_fail(c, t, in, "%s: columns %d..%d are outside the 512 columns of tensor memory", what, col, col + n - 1);
    return false;
  }
  for (int x = col; x < col + n; x++) {
    if (alloc_of(tc, x)) continue;
    if (tc->freed[x])
      em_fail(c, t, in, "%s: column %d of tensor memory was released by the tcgen05.dealloc at ptx line %d (use after "
              "dealloc)", what, x, tc->freed[x]->ptx_line);
    else em_fail(c, t, in, "%s: column %d of tensor memory is not allocated (no tcgen05.alloc holds it)", what, x);
    return false;
  }
  return true;
}

static bool cols_ok(Cta *c, const Thr *t, const EmIns *in, int col, int n, const char *what) {
  return cols_ok_in(c, c->tc, t, in, col, n, what);
}

/* ---- CTA pairs (.cta_group::2) ---- */

/* One .cta_group in the CTA's tcgen05 instructions; for ::2, the peer CTA (else NULL after a report; for ::1,
 * c itself). */
static Cta *group_of(Cta *c, const Thr *t, const EmIns *in) {
  struct EmTc *tc = c->tc;
  int g = in->mod & EMM_TC_PAIR ? 2 : 1;
  if (tc->group && tc->group != g) {
    em_fail(c, t, in, "tcgen05 with .cta_group::%d after .cta_group::%d (ptx line %d): every tcgen05 instruction of a "
            "kernel uses one .cta_group", g, tc->group, tc->group_in->ptx_line);
    return NULL;
  }
  if (!tc->group) tc->group = g, tc->group_in = in;
  if (g == 1) return c;
  int pr = c->rank ^ 1;
  if (pr >= c->clu->n) {
    em_fail(c, t, in, "tcgen05 .cta_group::2 in CTA rank %d of a cluster of %d CTA%s: the CTA pair is ranks %d and %d, "
            "so the cluster needs an even number of CTAs (launch with a cluster of 2)", c->rank, c->clu->n,
            c->clu->n == 1 ? "" : "s", c->rank & ~1, pr);
    return NULL;
  }
  return c->clu->cta[pr];
}

static Cta *peer_of(Cta *c) { return c->clu->cta[c->rank ^ 1]; }

static void describe_allocs(const struct EmTc *tc, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < tc->nal && len < n; i++) {
    int k = snprintf(buf + len, n - len, "%s%d columns at %d (ptx line %d)", i ? ", " : "", tc->al[i].ncols,
                     tc->al[i].col, tc->al[i].in->ptx_line);
    if (k < 0) break;
    len += (size_t)k;
  }
}

/* The warp's threads agree on an operand's value (else a report). */
static bool uniform(Cta *c, unsigned w0, const EmIns *in, const uint64_t *v, const char *what) {
  for (unsigned l = 1; l < 32; l++)
    if (v[l] != v[0]) {
      em_fail(c, &c->t[w0 + l], in, "%s differs across the warp (0x%llx in lane 0, 0x%llx in lane %u): the instruction "
              "is .sync.aligned", what, (unsigned long long)v[0], (unsigned long long)v[l], l);
      return false;
    }
  return true;
}

static void tc_alloc(Cta *c, unsigned w0, const EmIns *in) {
  Thr *t = &c->t[w0];
  struct EmTc *tc = tc_of(c, t, in);
  if (!tc || !group_of(c, t, in)) return;
  uint64_t n[32], dst[32];
  for (unsigned l = 0; l < 32; l++) {
    Thr *o = &c->t[w0 + l];
    n[l] = em_src(c, o, &in->a[1], ET_U32);
    if (!em_addr_of(c, o, in, &in->a[0], &dst[l])) return;
  }
  if (!uniform(c, w0, in, n, "the column count") || !uniform(c, w0, in, dst, "the destination")) return;
  unsigned ncols = (unsigned)n[0];
  if (ncols < 32 || ncols > 512 || (ncols & (ncols - 1))) {
    em_fail(c, t, in, "tcgen05.alloc of %u columns: a power of two from 32 to 512", ncols);
    return;
  }
  if (tc->relinquished) {
    em_fail(c, t, in, "tcgen05.alloc after the CTA's tcgen05.relinquish_alloc_permit");
    return;
  }
  uint32_t off;
  if (!em_smem_at(c, t, in, (EmSpace)in->space, &in->a[0], 4, 4, "the tcgen05.alloc destination", &off)) return;
  int col = -1, used = 0;
  for (int i = 0; i < tc->nal; i++) used += tc->al[i].ncols;
  for (int x = 0; x + (int)ncols <= EM_TMEM_COLS && col < 0; x += (int)ncols) {
    bool free_run = true;
    for (int i = 0; i < tc->nal && free_run; i++)
      free_run = tc->al[i].col + tc->al[i].ncols <= x || tc->al[i].col >= x + (int)ncols;
    if (free_run) col = x;
  }
  if (col < 0) {
    char held[512];
    describe_allocs(tc, held, sizeof held);
    em_fail(c, t, in, "tcgen05.alloc of %u columns with %d of the CTA's 512 columns of tensor memory allocated (%s): "
            "over-allocation (on the GPU it waits for a dealloc that this CTA would have to make)", ncols, used, held);
    return;
  }
  tc->al[tc->nal++] = (TcAlloc){.col = col, .ncols = (int)ncols, .in = in};
  for (int l = 0; l < EM_TMEM_LANES; l++)
    for (int x = col; x < col + (int)ncols; x++) {
      tc->tm->cell[l][x] = TC_GARBAGE;
      tc->tm->def[l][x / 8] &= (uint8_t)~(1u << (x % 8));
    }
  if (!em_chk_write(c, t, in, off, 4)) return;
  uint32_t taddr = (uint32_t)col;
  memcpy(c->smem + off, &taddr, 4);
}

static bool op_touches(const TcOp *op, int col, int n) {
  if (op->commit) return false;
  int dc = (int)(op->mma.d_taddr & 0xffff), ac = (int)(op->mma.a_taddr & 0xffff);
  if (dc < col + n && dc + op->mma.id.dn > col) return true;
  return op->mma.a_tmem && ac < col + n && ac + 8 > col;
}

static void tc_dealloc(Cta *c, unsigned w0, const EmIns *in) {
  Thr *t = &c->t[w0];
  struct EmTc *tc = tc_of(c, t, in);
  Cta *pc = tc ? group_of(c, t, in) : NULL;
  if (!pc) return;
  uint64_t n[32], ta[32];
  for (unsigned l = 0; l < 32; l++) {
    n[l] = em_src(c, &c->t[w0 + l], &in->a[1], ET_U32);
    ta[l] = em_src(c, &c->t[w0 + l], &in->a[0], ET_U32);
  }
  if (!uniform(c, w0, in, n, "the column count") || !uniform(c, w0, in, ta, "the address")) return;
  int col = (int)(ta[0] & 0xffff), ncols = (int)n[0];
  if (ta[0] >> 16) {
    em_fail(c, t, in, "tcgen05.dealloc of 0x%08llx: the address of an allocation has lane 0", (unsigned long long)ta[0]);
    return;
  }
  int k = -1;
  for (int i = 0; i < tc->nal; i++)
    if (tc->al[i].col == col) k = i;
  if (k < 0) {
    if (col < EM_TMEM_COLS && tc->freed[col])
      em_fail(c, t, in, "tcgen05.dealloc of column %d: already released by the tcgen05.dealloc at ptx line %d (double "
              "dealloc)", col, tc->freed[col]->ptx_line);
    else em_fail(c, t, in, "tcgen05.dealloc of column %d: no tcgen05.alloc returned that address", col);
    return;
  }
  if (tc->al[k].ncols != ncols) {
    em_fail(c, t, in, "tcgen05.dealloc of %d columns at column %d, allocated with %d (ptx line %d)", ncols, col,
            tc->al[k].ncols, tc->al[k].in->ptx_line);
    return;
  }
  for (int i = 0; i < tc->nq; i++)
    if (op_touches(&tc->q[i], col, ncols)) {
      em_fail(c, t, in, "tcgen05.dealloc of columns %d..%d while the tcgen05.mma at ptx line %d (thread %d) that uses "
              "them has not completed: wait for its tcgen05.commit's mbarrier first", col, col + ncols - 1,
              tc->q[i].in->ptx_line, tc->q[i].thr);
      return;
    }
  for (int i = 0; pc != c && pc->tc && i < pc->tc->nq; i++) /* the peer's pair MMAs write these columns too */
    if (pc->tc->q[i].pair && op_touches(&pc->tc->q[i], col, ncols)) {
      em_fail(c, t, in, "tcgen05.dealloc of columns %d..%d while the pair's tcgen05.mma at ptx line %d (thread %d of "
              "the peer CTA, rank %d) that writes them has not completed: wait for its tcgen05.commit's mbarrier first",
              col, col + ncols - 1, pc->tc->q[i].in->ptx_line, pc->tc->q[i].thr, pc->rank);
      return;
    }
  for (int x = col; x < col + ncols; x++) tc->freed[x] = in;
  tc->al[k] = tc->al[--tc->nal];
}

/* ---- the MMA pipe ---- */

static EmMbar *mbar_at(Cta *c, uint32_t addr) {
  for (int i = 0; i < c->nmb; i++)
    if (c->mb[i].addr == addr) return &c->mb[i];
  return NULL;
}

static bool enqueue(Cta *c, Thr *t, const EmIns *in, TcOp *op) {
  struct EmTc *tc = c->tc;
  if (!grow((void **)&tc->q, &tc->capq, tc->nq + 1, sizeof *tc->q)) {
    em_fail(c, t, in, "out of memory");
    return false;
  }
  op->in = in, op->thr = (int)(t - c->t);
  op->due = c->sched == EM_SCHED_RR ? c->round + 1
            : c->sched == EM_SCHED_RANDOM ? c->round + 1 + em_rand(c) % 3
                                           : c->round + 64; /* adversarial: when nothing else can move, or late */
  tc->q[tc->nq++] = *op;
  return true;
}

static void tc_mma_issue(Cta *c, Thr *t, const EmIns *in) {
  struct EmTc *tc = tc_of(c, t, in);
  Cta *pc = tc ? group_of(c, t, in) : NULL;
  if (!pc) return;
  bool pair = pc != c;
  struct EmTc *ptc = pair ? pc->tc : NULL;
  const EmArg *a = in->a;
  TcOp op = {0};
  EmTcMma *m = &op.mma;
  uint64_t v;
  if (in->mod & EMM_TC_MASK) {
    em_fail(c, t, in, "tcgen05.mma with a disable-output-lane mask: the emulator does not run that form yet");
    return;
  }
  if (!em_addr_of(c, t, in, &a[0], &v)) return;
  m->d_taddr = (uint32_t)v;
  m->a_tmem = in->rank == 1;
  if (m->a_tmem) {
    if (!em_addr_of(c, t, in, &a[1], &v)) return;
    m->a_taddr = (uint32_t)v;
  } else {
    m->adesc = em_src(c, t, &a[1], ET_B64);
  }
  m->bdesc = em_src(c, t, &a[2], ET_B64);
  m->id.raw = (uint32_t)em_src(c, t, &a[3], ET_B32);
  m->accumulate = em_src(c, t, &a[4], ET_PRED) != 0;
  m->scale_d = (in->mod & EMM_TC_SCALE) ? (int)a[5].imm : 0;
  if (c->failed) return;
  char why[320];
  if (!(pair ? em_tc_mma_pair_check(m, why, sizeof why) : em_tc_mma_check(m, why, sizeof why))) {
    em_fail(c, t, in, "tcgen05.mma%s: %s", pair ? ".cta_group::2" : "", why);
    return;
  }
  if (pair) em_tc_idesc_pair(m->id.raw, &m->id, NULL, 0);
  else em_tc_idesc(m->id.raw, &m->id, NULL, 0);
  if (!cols_ok(c, t, in, (int)(m->d_taddr & 0xffff), m->id.dn, "tcgen05.mma's D")) return;
  if (pair && pc->ended) {
    em_fail(c, t, in, "tcgen05.mma.cta_group::2 with the peer CTA (rank %d) ended: the pair's MMA writes its tensor "
            "memory, and the peer must not have exited", pc->rank);
    return;
  }
  if (pair && !cols_ok_in(c, ptc, t, in, (int)(m->d_taddr & 0xffff), m->id.dn, "tcgen05.mma.cta_group::2's D in the "
                          "peer CTA"))
    return;
  if (m->a_tmem && !cols_ok(c, t, in, (int)(m->a_taddr & 0xffff), 8, "tcgen05.mma's A")) return;
  if (pair && m->a_tmem &&
      !cols_ok_in(c, ptc, t, in, (int)(m->a_taddr & 0xffff), 8, "tcgen05.mma.cta_group::2's A in the peer CTA"))
    return;
  /* the A collector: fill keeps A; use and lastuse take the A it keeps (which must be this MMA's A: the
   * emulator reads A from memory again, the same operand); discard (the default) and lastuse empty it */
  uint64_t aop = m->a_tmem ? m->a_taddr : m->adesc;
  int cu = in->type2;
  if ((cu == 2 || cu == 3) && !tc->coll) {
    em_fail(c, t, in, "tcgen05.mma with .collector::a::%s, but no .collector::a::fill filled the collector buffer "
            "since its last discard", cu == 2 ? "use" : "lastuse");
    return;
  }
  if ((cu == 2 || cu == 3) && (tc->coll_tmem != m->a_tmem || tc->coll_a != aop)) {
    em_fail(c, t, in, "tcgen05.mma with .collector::a::%s of A %s 0x%llx, but the collector holds A %s 0x%llx (the "
            ".collector::a::fill at ptx line %d)", cu == 2 ? "use" : "lastuse", m->a_tmem ? "at" : "descriptor",
            (unsigned long long)aop, tc->coll_tmem ? "at" : "descriptor", (unsigned long long)tc->coll_a,
            tc->coll_in->ptx_line);
    return;
  }
  int dcol = (int)(m->d_taddr & 0xffff);
  if (m->accumulate && !tc_order(c, t, in, "the tcgen05.mma reads its accumulator,", 0, 3, dcol, m->id.dn, true, false))
    return;
  if (m->a_tmem && !tc_order(c, t, in, "the tcgen05.mma reads A,", 0, 3, (int)(m->a_taddr & 0xffff), 8, true, false))
    return;
  if (pair && m->a_tmem && !tc_order_peer(c, pc, t, in, (int)(m->a_taddr & 0xffff), 8)) return;
  if (!tc_order_war(c, t, in, dcol, m->id.dn)) return;
  tc->coll = cu == 1 || cu == 2;
  if (cu == 1) tc->coll_tmem = m->a_tmem, tc->coll_a = aop, tc->coll_in = in;
  op.ep = tc->last_ep = em_chk_tc_mma(c);
  op.pair = pair;
  if (!mma_smem_reads(c, NULL, pair, t, in, m, op.ep)) return;
  for (int q = 0; tc->ck && q < 4; q++)
    for (int x = dcol; x < dcol + m->id.dn && x < EM_TMEM_COLS; x++)
      tc->ck[q * EM_TMEM_COLS + x] =
          (TcCell){.stw = -1, .mep = op.ep, .mma_in = in, .mma_thr = (int)(t - c->t), .ldw = -1};
  if (pair) { /* the peer's cells: written by this MMA, under the peer's own pipe epoch */
    uint32_t pe = ptc->last_ep = em_chk_tc_mma(pc);
    if (!mma_smem_reads(c, pc, true, t, in, m, pe)) return; /* and its halves of A and B, read under it */
    for (int q = 0; ptc->ck && q < 4; q++)
      for (int x = dcol; x < dcol + m->id.dn && x < EM_TMEM_COLS; x++)
        ptc->ck[q * EM_TMEM_COLS + x] =
            (TcCell){.stw = -1, .mep = pe, .mma_in = in, .mma_thr = (int)(t - c->t), .ldw = -1};
  }
  enqueue(c, t, in, &op);
}

/* One range of the bytes an MMA reads: of the issuing CTA c, or (pc) of the pair's peer CTA. */
static bool tc_read(Cta *c, Cta *pc, const Thr *t, const EmIns *in, uint64_t lo, uint64_t hi, uint32_t ep) {
  if (hi <= lo) return true;
  return pc ? em_chk_tc_read_peer(pc, c, t, in, (uint32_t)lo, (uint32_t)(hi - lo), ep)
            : em_chk_tc_read(c, t, in, (uint32_t)lo, (uint32_t)(hi - lo), ep);
}

/* The shared-memory bytes an MMA reads in one CTA (B, and A unless in tensor memory), for the race checker:
 * each 16-element row of a K step is 2-byte elements, runs of them merged into one range. */
static bool mma_operand_reads(Cta *c, Cta *pc, const Thr *t, const EmIns *in, uint64_t desc, bool mn_major, int rows,
                              uint32_t ep) {
  EmTcSdesc d;
  if (!em_tc_sdesc(desc, "", &d, NULL, 0)) return true; /* em_tc_mma_run reports it */
  uint64_t lo = 0, hi = 0; /* the open run [lo, hi) */
  for (int r = 0; r < rows; r++)
    for (int k = 0; k < 16; k++) {
      uint64_t a = em_tc_sdesc_addr(&d, mn_major, r, k);
      if (a == hi) { hi += 2; continue; }
      if (!tc_read(c, pc, t, in, lo, hi, ep)) return false;
      lo = a, hi = a + 2;
    }
  return tc_read(c, pc, t, in, lo, hi, ep);
}

/* An MMA's operand reads in the issuing CTA c (pc NULL) or in the pair's peer pc: with .cta_group::2 (pair)
 * each CTA holds half of A's rows and half of B's columns at the same descriptors (tcgen05_pair.c). */
static bool mma_smem_reads(Cta *c, Cta *pc, bool pair, const Thr *t, const EmIns *in, const EmTcMma *m,
                           uint32_t ep) {
  if (!ep || c->failed) return true;
  int arows = pair ? m->id.m / 2 : m->id.m, brows = pair ? m->id.n / 2 : m->id.n;
  if (!m->a_tmem && !mma_operand_reads(c, pc, t, in, m->adesc, m->id.a_mn, arows, ep)) return false;
  return mma_operand_reads(c, pc, t, in, m->bdesc, m->id.b_mn, brows, ep);
}

/* The commit arrives on the mbarrier it names (in the executing CTA or, through a shared::cluster address,
 * another of the cluster), or with .multicast::cluster on the mbarrier at that offset in each CTA of ctaMask. */
static void tc_commit(Cta *c, Thr *t, const EmIns *in) {
  struct EmTc *tc = tc_of(c, t, in);
  uint32_t addr;
  Cta *o = c;
  if (!tc || !group_of(c, t, in) ||
      !em_smem_at_cluster(c, t, in, (EmSpace)in->space, &in->a[0], 8, 8, "the mbarrier", &addr, &o))
    return;
  uint32_t mask = 1u << o->rank;
  if (in->mod & EMM_MCAST) {
    mask = (uint32_t)em_src(c, t, &in->a[1], ET_U16) & 0xffffu;
    if (!mask || mask >> c->clu->n) {
      em_fail(c, t, in, "the multicast tcgen05.commit's CTA mask 0x%x names %s of a cluster of %d CTAs", mask,
              mask ? "ranks outside" : "no CTA", c->clu->n);
      return;
    }
  }
  TcOp op = {.commit = true, .mbar = addr, .ep = tc->last_ep, .mask = (uint16_t)mask};
  for (int r = 0; r < c->clu->n; r++) {
    if (!(mask >> r & 1)) continue;
    Cta *d = c->clu->cta[r];
    if (!mbar_at(d, addr)) {
      if (d == c) em_fail(c, t, in, "smem+0x%x is not an mbarrier (no mbarrier.init set it up)", addr);
      else em_fail(c, t, in, "smem+0x%x of CTA rank %d is not an mbarrier (no mbarrier.init set it up)", addr, r);
      return;
    }
    op.eps[r] = d == c ? tc->last_ep : d->tc ? d->tc->last_ep : 0; /* the checks: it covers every MMA issued before */
  }
  enqueue(c, t, in, &op);
}

/* Complete the operation at the head of the queue. */
static bool run_head(Cta *c) {
  struct EmTc *tc = c->tc;
  TcOp op = tc->q[0];
  memmove(tc->q, tc->q + 1, sizeof *tc->q * (size_t)--tc->nq);
  Thr *t = &c->t[op.thr];
  if (op.commit) {
    for (int r = 0; r < c->clu->n; r++) {
      if (!(op.mask >> r & 1)) continue;
      Cta *d = c->clu->cta[r];
      if (d != c && d->ended) {
        em_fail(c, t, op.in, "the tcgen05.commit arrives on an mbarrier of CTA rank %d, whose threads have all exited",
                r);
        return false;
      }
      em_chk_tc_commit(d, mbar_at(d, op.mbar), op.eps[r]);
      if (!(d == c ? em_mbar_arrive_async(c, t, op.in, op.mbar) : em_mbar_arrive_remote(d, c, t, op.in, op.mbar)))
        return false;
    }
    return true;
  }
  if (!cols_ok(c, t, op.in, (int)(op.mma.d_taddr & 0xffff), op.mma.id.dn, "tcgen05.mma's D (as it runs)")) return false;
  if (op.pair) {
    Cta *pc = peer_of(c);
    if (pc->ended) {
      em_fail(c, t, op.in, "tcgen05.mma.cta_group::2 (issued by thread %d) runs with the peer CTA (rank %d) ended: the "
              "peer must not exit while the pair's MMA may write its tensor memory", op.thr, pc->rank);
      return false;
    }
    if (!cols_ok_in(c, pc->tc, t, op.in, (int)(op.mma.d_taddr & 0xffff), op.mma.id.dn,
                    "tcgen05.mma.cta_group::2's D in the peer CTA (as it runs)"))
      return false;
    if (op.mma.a_tmem && (!cols_ok(c, t, op.in, (int)(op.mma.a_taddr & 0xffff), 8, "tcgen05.mma's A (as it runs)") ||
                          !cols_ok_in(c, pc->tc, t, op.in, (int)(op.mma.a_taddr & 0xffff), 8,
                                      "tcgen05.mma.cta_group::2's A in the peer CTA (as it runs)")))
      return false;
    Cta *ev = c->rank & 1 ? pc : c, *od = c->rank & 1 ? c : pc;
    const uint8_t *sm[2] = {ev->smem, od->smem};
    size_t sb[2] = {ev->smem_size, od->smem_size};
    EmTmemCells *tm[2] = {ev->tc->tm, od->tc->tm};
    char why[320];
    if (!em_tc_mma_pair_run(&op.mma, sm, sb, tm, why, sizeof why)) {
      em_fail(c, t, op.in, "tcgen05.mma.cta_group::2 (issued by thread %d): %s", op.thr, why);
      return false;
    }
    return true;
  }
  if (op.mma.a_tmem && !cols_ok(c, t, op.in, (int)(op.mma.a_taddr & 0xffff), 8, "tcgen05.mma's A (as it runs)"))
    return false;
  char why[320];
  if (!em_tc_mma_run(&op.mma, c->smem, c->smem_size, tc->tm, why, sizeof why)) {
    em_fail(c, t, op.in, "tcgen05.mma (issued by thread %d): %s", op.thr, why);
    return false;
  }
  return true;
}

bool em_tc_tick(Cta *c, bool all) {
  struct EmTc *tc = c->tc;
  if (!tc || !tc->nq || c->failed) return false;
  if (c->sched == EM_SCHED_ADVERSARIAL && all) { /* nothing else can move: one operation */
    run_head(c);
    return true;
  }
  bool any = false;
  while (tc->nq && !c->failed && (all || tc->q[0].due <= c->round)) {
    run_head(c);
    any = true;
  }
  return any;
}

/* ---- tcgen05.ld / tcgen05.st ---- */

static int32_t reg_at(const EmArg *v, int i) { return v->kind == EA_LVEC ? v->lv[i] : v->vec[i]; }

static void tc_ldst(Cta *c, unsigned w0, const EmIns *in) {
  Thr *t = &c->t[w0];
  struct EmTc *tc = tc_of(c, t, in);
  if (!tc) return;
  bool ld = in->opc == EM_TC_LD;
  const EmArg *ta = &in->a[ld ? 1 : 0], *v = &in->a[ld ? 0 : 1];
  int s = in->rank, num = 1 << in->type2, nr = em_tc_ldst_regs(s, num);
  uint64_t addr[32];
  for (unsigned l = 0; l < 32; l++)
    if (!em_addr_of(c, &c->t[w0 + l], in, ta, &addr[l])) return;
  if (!uniform(c, w0, in, addr, "the tensor-memory address")) return;
  int lane0 = (int)((uint32_t)addr[0] >> 16), col0 = (int)(addr[0] & 0xffff), q = (int)(t->warp % 4);
  int nl = em_tc_ldst_lanes(s), nc = em_tc_ldst_cols(s, num);
  if (lane0 < 32 * q || lane0 + nl > 32 * q + 32) {
    em_fail(c, t, in, "tcgen05.%s.%s at lanes %d..%d by warp %u: a warp reaches only the lanes of its quarter, %d..%d "
            "for warp %u (warp %% 4 = %d)", ld ? "ld" : "st", em_tc_shape_name(s), lane0, lane0 + nl - 1, t->warp,
            32 * q, 32 * q + 31, t->warp, q);
    return;
  }
  if (!cols_ok(c, t, in, col0, nc, ld ? "tcgen05.ld" : "tcgen05.st")) return;
  int qa = lane0 / 32, qb = (lane0 + nl - 1) / 32;
  if (!tc_order(c, t, in, ld ? "the tcgen05.ld reads" : "the tcgen05.st writes", qa, qb, col0, nc, ld, true)) return;
  for (int qq = qa; !ld && tc->ck && qq <= qb; qq++)
    for (int x = col0; x < col0 + nc; x++) {
      TcCell *k = &tc->ck[qq * EM_TMEM_COLS + x];
      *k = (TcCell){.stw = (int8_t)t->warp, .pend = true, .st_in = in, .st_thr = (int)w0, .ldw = k->ldw,
                    .ldpend = k->ldpend, .ldstep = k->ldstep, .ld_in = k->ld_in, .ld_thr = k->ld_thr};
    }
  if (ld && tc->ck) { /* the cells this warp reads, until its wait::ld (kept on its first thread) */
    TcThr *h0 = &tc->th[w0];
    if (!grow((void **)&h0->ldr, &h0->capldr, h0->nldr + 1, sizeof *h0->ldr)) {
      em_fail(c, t, in, "out of memory");
      return;
    }
    h0->ldr[h0->nldr][0] = qa, h0->ldr[h0->nldr][1] = col0, h0->ldr[h0->nldr++][2] = nc;
    for (int qq = qa; qq <= qb; qq++)
      for (int x = col0; x < col0 + nc; x++) {
        TcCell *k = &tc->ck[qq * EM_TMEM_COLS + x];
        k->ldw = (int8_t)t->warp, k->ldpend = true, k->ld_in = in, k->ld_thr = (int)w0;
      }
  }
  for (unsigned l = 0; l < 32; l++) {
    Thr *o = &c->t[w0 + l];
    TcThr *h = &tc->th[w0 + l];
    if (ld ? !grow((void **)&h->ld, &h->capld, h->nld + nr, sizeof *h->ld)
           : !grow((void **)&h->st, &h->capst, h->nst + nr, sizeof *h->st)) {
      em_fail(c, o, in, "out of memory");
      return;
    }
    for (int j = 0; j < nr; j++) {
      int lane, col;
      em_tc_ldst_cell(s, (int)l, j, &lane, &col);
      lane += lane0, col += col0;
      if (ld) {
        h->ld[h->nld++] = (TcLd){reg_at(v, j), tc->tm->cell[lane][col]};
      } else {
        EmArg r = {.kind = EA_REG, .reg = reg_at(v, j), .sym = -1};
        uint32_t x = (uint32_t)em_src(c, o, &r, ET_B32);
        if (c->failed) return;
        h->st[h->nst++] = (TcSt){(uint16_t)lane, (uint16_t)col, x};
        h->st_in = in;
      }
    }
  }
  if (ld) /* the destinations are poisoned until tcgen05.wait::ld (after every value is read: they may overlap) */
    for (unsigned l = 0; l < 32; l++)
      for (int j = 0; j < nr; j++) c->t[w0 + l].r[reg_at(v, j)] = EM_TC_POISON;
}

static void tc_wait(Cta *c, Thr *t, const EmIns *in) {
  struct EmTc *tc = c->tc;
  if (!tc) return;
  TcThr *h = &tc->th[t - c->t];
  if (in->rank == 0) {
    for (int i = 0; i < h->nld; i++) t->r[h->ld[i].reg] = h->ld[i].v;
    h->nld = 0;
    if (tc->ck && h->nldr) { /* the warp's first thread: its lds are complete, at this epoch */
      uint32_t e = em_chk_tc_now(c, t);
      for (int i = 0; i < h->nldr; i++)
        for (int x = h->ldr[i][1]; x < h->ldr[i][1] + h->ldr[i][2] && x < EM_TMEM_COLS; x++) {
          TcCell *k = &tc->ck[h->ldr[i][0] * EM_TMEM_COLS + x];
          if (k->ldw == (int)t->warp && k->ldpend) k->ldpend = false, k->ldstep = e;
        }
      h->nldr = 0;
    }
    return;
  }
  uint32_t e = tc->ck && h->nst ? em_chk_tc_now(c, t) : 0;
  for (int i = 0; i < h->nst; i++) {
    TcSt *s = &h->st[i];
    if (!cols_ok(c, t, h->st_in, s->col, 1, "tcgen05.st (completing at tcgen05.wait::st)")) return;
    TcCell *k = tc->ck ? &tc->ck[s->lane / 32 * EM_TMEM_COLS + s->col] : NULL;
    if (k && k->stw == (int)t->warp && k->pend) k->pend = false, k->step = e, k->xstep = em_chk_x_now(c);
    tc->tm->cell[s->lane][s->col] = s->v;
    tc->tm->def[s->lane][s->col / 8] |= (uint8_t)(1u << (s->col % 8));
  }
  h->nst = 0;
}

/* ---- one instruction ---- */

void em_tc_finish(Cta *c, Thr *t, const EmIns *in) {
  unsigned w0 = t->warp * 32;
  switch ((EmOpc)in->opc) {
  case EM_TC_ALLOC: tc_alloc(c, w0, in); break;
  case EM_TC_DEALLOC: tc_dealloc(c, w0, in); break;
  case EM_TC_RELINQUISH: {
    struct EmTc *tc = tc_of(c, t, in);
    if (tc && group_of(c, t, in)) tc->relinquished = true;
    break;
  }
  case EM_TC_LD: case EM_TC_ST: tc_ldst(c, w0, in); break;
  default: em_fail(c, t, in, "the emulator cannot run this instruction yet"); break;
  }
  if (c->failed) return;
  for (unsigned k = 0; k < 32; k++) {
    c->t[w0 + k].state = T_RUN;
    c->t[w0 + k].pc++;
  }
}

void em_tc_step(Cta *c, Thr *t, const EmIns *in) {
  switch ((EmOpc)in->opc) {
  case EM_TC_MMA: tc_mma_issue(c, t, in); break;
  case EM_TC_COMMIT: tc_commit(c, t, in); break;
  case EM_TC_WAIT: tc_wait(c, t, in); break;
  case EM_TC_FENCE: /* ordering: sequentially consistent here; the checks follow after_thread_sync */
    if (in->rank == 1) em_chk_tc_fence_after(c, t);
    break;
  default: em_fail(c, t, in, "the emulator cannot run this instruction yet"); break;
  }
  if (!c->failed) t->pc++;
}

bool em_tc_end(Cta *c) {
  struct EmTc *tc = c->tc;
  if (!tc) return true;
  while (tc->nq && !c->failed) run_head(c);
  if (c->failed) return false;
  if (tc->nal) {
    char held[512];
    describe_allocs(tc, held, sizeof held);
    em_fail(c, NULL, tc->al[0].in, "the CTA ended with tensor memory allocated (%s): every tcgen05.alloc wants its "
            "tcgen05.dealloc before the kernel exits", held);
    return false;
  }
  return true;
}

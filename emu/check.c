/* check.c - the emulator's checks of shared memory (issue 16): races
 * between warps, between the generic and the async proxy, asynchronous
 * reads overwritten before they are known to be over, reads of bytes
 * nothing wrote; and the names of mbarriers in reports.
 *
 * Happens-before is tracked with vector clocks over "agents": each warp
 * (its generic accesses: ld/st.shared, stmatrix, ldmatrix; the lanes of a
 * warp write under one epoch, as they run converged), each warp's
 * cp.async stream (an epoch per group: a copy's bytes are written at its
 * issue as far as the checks go, and complete for a thread whose clock
 * has its group's epoch), each warp's bulk-copy stream (TMA stores
 * reading shared memory), each warpgroup's wgmma stream (reading its
 * operands), and each mbarrier (the TMA loads completing on it). Every thread has its own clock (what it knows: a lane
 * that waits does not tell the lanes of its warp that did not); a warp's
 * epoch ticks after one of its threads publishes it (an arrival, a fence).
 * The synchronizations join clocks:
 *   bar.sync / bar.arrive: the arrivals' clocks are joined, and every
 *     warp that bar.sync releases takes the join;
 *   mbarrier.arrive: the phase collects the arrivals' clocks; when the
 *     phase completes it also publishes the TMA loads that completed on it;
 *     a try_wait/test_wait that succeeds takes what the phases released;
 *   wgmma.wait_group N / cp.async.bulk.wait_group[.read] N: the waiting
 *     thread learns that the operations of the older groups read what they
 *     read; cp.async.wait_group N: that its older groups' copies are done.
 * A second clock per thread (avc) holds only what reached it through a
 * fence.proxy.async: a TMA store or a wgmma may read bytes written by
 * generic stores or cp.async copies (generic proxy too, PTX ISA) only if
 * a proxy fence lies on the happens-before path from the write to the
 * issue (the writer's fence before its barrier arrival, CUTLASS's
 * pattern, or the issuer's after it).
 *
 * Shadow memory, one record per 4-byte word of the CTA's window: the last
 * write (agent, epoch, instruction, thread), up to two reads not yet known
 * to be over (agent, epoch), and which bytes were ever written. Checked:
 *   race: a read of a word whose last write does not happen before it (a
 *     plain store of another warp with no barrier between; a TMA load's
 *     bytes read without waiting for its mbarrier phase); a write (or a
 *     TMA load) over a word another warp reads with no barrier between,
 *     or that a TMA load in flight writes; any access to bytes of a
 *     cp.async its clock does not know to be done;
 *   proxy: a TMA store or wgmma reading generic-proxy writes that happen
 *     before it with no fence.proxy.async on the way;
 *   slot: a write or TMA load over bytes a wgmma or TMA store may still be
 *     reading (no wait_group of it happens before);
 *   uninitialized: a read (generic, TMA store, wgmma) of bytes never
 *     written (by a store, stmatrix, or a TMA load that completed).
 * Not checked: two unordered plain stores to one word (tilec's replicated
 * layouts store equal values from several warps); races between lanes of
 * one warp; atomics; global memory. Two reads per word are remembered
 * (reads that happen before a newer one are dropped); a third unordered
 * reader drops the oldest (a race through it goes unseen).
 */
#include <stdio.h>
#include <stdlib.h>

#include "exec_int.h"

/* Agents: warps 0..nw-1, then each warp's cp.async stream (agc + w: the
 * copies its threads issue, which write through the generic proxy), each
 * warp's bulk stream (agb + w), each warpgroup's wgmma stream (agw + g),
 * each mbarrier (agm + its index): numbered densely so that joins cover
 * few entries; 255 at most. The first ngen (2 nw) write through the
 * generic proxy: the fenced clocks (avc) have an entry for each. */
enum { NW = 32, GN = 2 * NW, AG_N = 256 };
#define EP_MAX 0xffffffu
#define MK(ag, ep) ((uint32_t)(ag) << 24 | (uint32_t)(ep))
#define AG(m) ((int)((m) >> 24))
#define EP(m) ((m)&EP_MAX)

typedef struct Word {
  uint32_t w;    /* the last write: MK(agent, epoch); 0: none */
  uint32_t r[2]; /* reads not known to be over */
  int32_t wpc;   /* the writing instruction (index in the function) */
  uint16_t wthr; /* and thread (a TMA load: its issuing thread) */
  uint8_t init;  /* bytes of the word ever written, bit i byte i */
  uint8_t pad;
  uint32_t xw;   /* the writing CTA of the cluster (rank + 1 above bit 24) and its epoch then (EmClu.xep); 0: none */
} Word;

static uint32_t xw_of(const Cta *c) { return c && c->clu ? (uint32_t)(c->rank + 1) << 24 | (c->clu->xep[c->rank] & EP_MAX) : 0; }

/* Word d, which t (of c) reads, was written by another CTA of the cluster that t does not know to have released it. */
static bool x_unordered(const Cta *c, const Thr *t, const Word *d) {
  int r = (int)(d->xw >> 24) - 1;
  return d->xw && c->clu && r != c->rank && r < 16 && t->xc[r] < (d->xw & EP_MAX);
}

static bool x_race(Cta *c, const Thr *t, const EmIns *in, const Cta *owner, size_t x, const Word *d) {
  const Cta *w = c->clu->cta[(d->xw >> 24) - 1];
  char at_own[64] = "";
  if (owner != c) snprintf(at_own, sizeof at_own, " of CTA %u,%u,%u (rank %d)", owner->ctaid[0], owner->ctaid[1],
                           owner->ctaid[2], owner->rank);
  em_fail(c, t, in, "race: reads smem+0x%x%s, written by CTA %u,%u,%u (rank %d) with no barrier.cluster (or mbarrier "
          "arrival it made) between that write and this read", (unsigned)(x * 4), at_own, w->ctaid[0], w->ctaid[1],
          w->ctaid[2], w->rank);
  return false;
}

typedef struct ChkMb {
  uint32_t cur[AG_N], cura[GN];   /* what the current phase's arrivals release */
  uint32_t done[AG_N], donea[GN]; /* what its completed phases released */
  uint32_t ncomp;                 /* phases completed: the TMA loads on it count to phase ncomp + 1 */
  uint32_t arrived[32];           /* threads that arrived in the current phase */
} ChkMb;

typedef struct EmChk EmChk;
struct EmChk {
  int nw, ngen, used;    /* warps; the generic-proxy writers (warps, cp.async streams); agents in use */
  int agc, agb, agw, agm; /* the first cp.async-stream, bulk-stream, wgmma-stream and mbarrier agents */
  int agt;               /* the tcgen05.mma pipe (its epochs: the MMAs issued, tc_ep the last) */
  uint32_t tc_ep;
  uint32_t (*tvc)[NW];   /* tmem.c: each thread's warp clock at its last tcgen05.fence::after_thread_sync (NULL: none yet) */
  uint32_t (*vc)[AG_N];  /* each thread's clock */
  uint32_t (*avc)[GN];   /* what of the generic-proxy writes reaches the thread through a proxy fence */
  uint32_t fenced[GN];   /* the most of each generic writer's epochs any of the CTA's proxy fences covered */
  uint32_t ep[NW];       /* each warp's epoch (its accesses are marked with it) */
  bool pub[NW];          /* the epoch was published: the warp's next access ticks it */
  uint32_t bar[16][AG_N], bara[16][GN];
  uint32_t cbar[AG_N], cbara[GN], cdone[AG_N], cdonea[GN]; /* barrier.cluster: this phase's arrivals, the last phase's */
  ChkMb *mb[AG_N];       /* by index in Cta.mb */
  Word *sh;
  size_t nsh;
  const EmIns *ag_in[AG_N]; /* an asynchronous reader's last instruction (reports) */
};

size_t em_chk_bytes(size_t smem_size, int nthr) {
  return sizeof(EmChk) + ((smem_size + 3) / 4) * sizeof(Word) + (size_t)nthr * (AG_N + GN) * 4;
}

bool em_chk_new(Cta *c) {
  EmChk *k = calloc(1, sizeof *k);
  if (!k) return false;
  k->nw = (c->n + 31) / 32;
  k->agc = k->nw, k->agb = 2 * k->nw, k->agw = 3 * k->nw, k->agt = k->agw + (k->nw + 3) / 4, k->agm = k->agt + 1;
  k->ngen = k->agb;
  k->used = k->agm;
  k->nsh = (c->smem_size + 3) / 4;
  k->vc = calloc((size_t)c->n, sizeof *k->vc);
  k->avc = calloc((size_t)c->n, sizeof *k->avc);
  k->sh = calloc(k->nsh ? k->nsh : 1, sizeof *k->sh);
  if (!k->vc || !k->avc || !k->sh) {
    free(k->vc), free(k->avc), free(k->sh), free(k);
    return false;
  }
  for (int w = 0; w < k->nw; w++) k->ep[w] = 1;
  c->chk = k;
  return true;
}

void em_chk_free(Cta *c) {
  EmChk *k = c->chk;
  if (!k) return;
  for (int i = 0; i < AG_N; i++) free(k->mb[i]);
  free(k->vc), free(k->avc), free(k->sh), free(k->tvc), free(k);
  c->chk = NULL;
}

/* ---- clocks ---- */

static void join(uint32_t *a, const uint32_t *b, int n) {
  for (int i = 0; i < n; i++)
    if (b[i] > a[i]) a[i] = b[i];
}

/* The epoch w's accesses are marked with now. */
static uint32_t tick(EmChk *k, int w) {
  if (k->pub[w]) {
    if (k->ep[w] < EP_MAX) k->ep[w]++;
    k->pub[w] = false;
  }
  return k->ep[w];
}

/* Thread t's clock, its own warp's entry brought up to date. */
static uint32_t *row_of(EmChk *k, const Thr *t) {
  uint32_t *r = k->vc[t->linear];
  r[t->warp] = k->ep[t->warp];
  return r;
}

/* t publishes its clock (row_of first): its warp's next access ticks. */
static void publish(EmChk *k, const Thr *t) { k->pub[t->warp] = true; }

static int mb_index(const Cta *c, const EmMbar *b) { return (int)(b - c->mb); }

/* The checks' state of mbarrier i (NULL: none, or past the agents: unchecked). */
static ChkMb *chk_mb(const EmChk *k, int i) { return k && i >= 0 && k->agm + i < AG_N - 1 ? k->mb[i] : NULL; }

/* ---- reports ---- */

static const char *at(const Cta *c, int pc, char *buf, size_t n) {
  const EmIns *in = pc >= 0 && pc < c->f->nins ? &c->f->ins[pc] : NULL;
  const char *file = in && in->file > 0 && in->file < c->m->nfiles ? c->m->files[in->file] : NULL;
  if (!in) snprintf(buf, n, "an unknown place");
  else if (file && in->line > 0) {
    const char *base = strrchr(file, '/');
    snprintf(buf, n, "%s:%d", base ? base + 1 : file, in->line);
  } else snprintf(buf, n, "ptx line %d", in->ptx_line);
  return buf;
}

static const char *ins_at(const Cta *c, const EmIns *in, char *buf, size_t n) {
  return at(c, in ? (int)(in - c->f->ins) : -1, buf, n);
}

/* Who wrote word d: "warp 4 (thread 130) at gemm.tile:87", or the TMA load. */
static const char *writer(const Cta *c, const Word *d, char *buf, size_t n) {
  char w[96];
  int ag = AG(d->w);
  if (ag < c->chk->nw) snprintf(buf, n, "warp %d (thread %u) at %s", ag, d->wthr, at(c, d->wpc, w, sizeof w));
  else if (ag < c->chk->agb) snprintf(buf, n, "the cp.async at %s (thread %u)", at(c, d->wpc, w, sizeof w), d->wthr);
  else {
    char nm[160];
    const EmMbar *b = ag - c->chk->agm < c->nmb ? &c->mb[ag - c->chk->agm] : NULL;
    const EmIns *wi = d->wpc >= 0 && d->wpc < c->f->nins ? &c->f->ins[d->wpc] : NULL;
    snprintf(buf, n, "%s at %s, completing on the mbarrier %s",
             wi && wi->opc == EM_BULK_S2C ? "the bulk copy (from another CTA)" : "the TMA load",
             at(c, d->wpc, w, sizeof w), b ? em_mbar_name(c, b, nm, sizeof nm) : "?");
  }
  return buf;
}

static bool is_cpa(const EmChk *k, int ag) { return ag >= k->agc && ag < k->agb; }

/* Why the cp.async that last wrote word d is not known to be complete to
 * thread t (an access that does not come after its wait, and for another
 * thread a barrier after that). */
static const char *cpa_why(const Cta *c, const Thr *t, const Word *d) {
  const EmChk *k = c->chk;
  if (t && d->wthr == t->linear)
    return "before a cp.async.wait_group of this thread covers it (the copy may still be in flight)";
  if (d->wthr < (unsigned)c->n && k->vc[d->wthr][AG(d->w)] >= EP(d->w))
    return "after its thread's cp.async.wait_group but with no barrier between that wait and this access";
  return "with no cp.async.wait_group of it in its thread, and then a barrier, before this access (the copy may still "
         "be in flight)";
}

/* What an asynchronous reader is, for reports. */
static const char *reader(const Cta *c, int ag, char *buf, size_t n) {
  char w[96];
  const EmChk *k = c->chk;
  if (ag < k->nw) snprintf(buf, n, "warp %d reads it", ag);
  else if (ag < k->agw)
    snprintf(buf, n, "the TMA store at %s (warp %d) may still read it: no cp.async.bulk.wait_group.read of it happens "
             "before", ins_at(c, k->ag_in[ag], w, sizeof w), ag - k->agb);
  else if (ag == k->agt)
    snprintf(buf, n, "the tcgen05.mma at %s may still read it: no wait for an mbarrier phase its tcgen05.commit "
             "completes happens before", ins_at(c, k->ag_in[ag], w, sizeof w));
  else
    snprintf(buf, n, "the wgmma.mma_async at %s (warpgroup %d) may still read it: no wgmma.wait_group of it happens "
             "before", ins_at(c, k->ag_in[ag], w, sizeof w), ag - k->agw);
  return buf;
}

/* ---- generic accesses ---- */

static uint8_t word_mask(uint32_t a, uint32_t n, size_t x) {
  uint32_t lo = a > x * 4 ? a - (uint32_t)x * 4 : 0, hi = a + n < x * 4 + 4 ? a + n - (uint32_t)x * 4 : 4;
  return (uint8_t)(((1u << hi) - 1) & ~((1u << lo) - 1));
}

/* Remember a read by agent ag at epoch ep, whose clock is row: reads that
 * happen before it are dropped (a write after it is after them too). */
static void add_read(Word *d, int ag, uint32_t ep, const uint32_t *row) {
  for (int j = 0; j < 2; j++)
    if (d->r[j] && (AG(d->r[j]) == ag || row[AG(d->r[j])] >= EP(d->r[j]))) d->r[j] = 0;
  uint32_t m = MK(ag, ep);
  if (!d->r[0]) d->r[0] = m;
  else if (!d->r[1]) d->r[1] = m;
  else d->r[1] = d->r[0], d->r[0] = m;
}

static bool uninit(Cta *c, const Thr *t, const EmIns *in, const char *what, const Word *d, size_t x, uint8_t m) {
  int b = 0;
  while (b < 4 && !((m & ~d->init) >> b & 1)) b++;
  em_fail(c, t, in, "uninitialized: %s smem+0x%x, which nothing has written (no store, stmatrix or completed TMA "
          "load)", what, (unsigned)(x * 4 + (size_t)b));
  return false;
}

bool em_chk_read(Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n) {
  EmChk *k = c->chk;
  if (!k || !n || (uint64_t)a + n > c->smem_size) return true;
  int w = (int)t->warp;
  uint32_t ep = tick(k, w), *row = row_of(k, t);
  for (size_t x = a / 4; x <= (a + n - 1) / 4; x++) {
    Word *d = &k->sh[x];
    uint8_t m = word_mask(a, n, x);
    if (d->w && AG(d->w) != w && row[AG(d->w)] < EP(d->w)) {
      char wb[256];
      em_fail(c, t, in, "race: reads smem+0x%x, written by %s, %s", (unsigned)(x * 4), writer(c, d, wb, sizeof wb),
              AG(d->w) < k->nw ? "with no barrier between the write and this read"
              : is_cpa(k, AG(d->w)) ? cpa_why(c, t, d) : "with no wait for that mbarrier's phase");
      return false;
    }
    if ((d->init & m) != m) return uninit(c, t, in, "reads", d, x, m);
    if (x_unordered(c, t, d)) return x_race(c, t, in, c, x, d);
    add_read(d, w, ep, row);
  }
  return true;
}

/* Over word d, agent ag (clock row) writes: the reads and the TMA write it
 * must come after. */
static bool write_ok(Cta *c, const Thr *t, const EmIns *in, const char *what, int ag, const uint32_t *row, Word *d,
                     size_t x) {
  char b1[256];
  if (d->w && AG(d->w) >= c->chk->agm && row[AG(d->w)] < EP(d->w)) {
    em_fail(c, t, in, "race: %s smem+0x%x, which %s writes, with no wait for that mbarrier's phase", what,
            (unsigned)(x * 4), writer(c, d, b1, sizeof b1));
    return false;
  }
  if (d->w && is_cpa(c->chk, AG(d->w)) && row[AG(d->w)] < EP(d->w)) { /* a copy that may still be in flight */
    em_fail(c, t, in, "race: %s smem+0x%x, which %s writes, %s", what, (unsigned)(x * 4), writer(c, d, b1, sizeof b1),
            cpa_why(c, t, d));
    return false;
  }
  for (int j = 0; j < 2; j++) {
    uint32_t r = d->r[j];
    if (!r || AG(r) == ag || row[AG(r)] >= EP(r)) continue;
    if (AG(r) < c->chk->nw) em_fail(c, t, in, "race: %s smem+0x%x, which warp %d reads, with no barrier between that read and "
                            "this write", what, (unsigned)(x * 4), AG(r));
    else em_fail(c, t, in, "slot: %s smem+0x%x while %s", what, (unsigned)(x * 4), reader(c, AG(r), b1, sizeof b1));
    return false;
  }
  return true;
}

bool em_chk_write(Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n) {
  EmChk *k = c->chk;
  if (!k || !n || (uint64_t)a + n > c->smem_size) return true;
  int w = (int)t->warp;
  uint32_t ep = tick(k, w), *row = row_of(k, t);
  for (size_t x = a / 4; x <= (a + n - 1) / 4; x++) {
    Word *d = &k->sh[x];
    if (!write_ok(c, t, in, "writes", w, row, d, x)) return false;
    d->w = MK(w, ep), d->wpc = (int32_t)(in - c->f->ins), d->wthr = (uint16_t)t->linear;
    d->init |= word_mask(a, n, x);
    d->r[0] = d->r[1] = 0;
    d->xw = xw_of(c);
  }
  return true;
}

void em_chk_atomic(Cta *c, uint32_t a, uint32_t n) {
  EmChk *k = c->chk;
  if (!k || !n || (uint64_t)a + n > c->smem_size) return;
  for (size_t x = a / 4; x <= (a + n - 1) / 4; x++) k->sh[x].init |= word_mask(a, n, x);
}

/* ---- fences and barriers ---- */

void em_chk_fence(Cta *c, const Thr *t, const EmIns *in) {
  EmChk *k = c->chk;
  if (!k || !in->text || strncmp(in->text, "fence.proxy.async", 17) || strstr(in->text, ".global")) return;
  memcpy(k->avc[t->linear], row_of(k, t), sizeof k->avc[0]); /* every generic write it knows of is fenced */
  join(k->fenced, k->avc[t->linear], k->ngen);
  publish(k, t);
}

void em_chk_bar_arrive(Cta *c, const Thr *t, int id) {
  EmChk *k = c->chk;
  if (!k) return;
  join(k->bar[id], row_of(k, t), k->used);
  join(k->bara[id], k->avc[t->linear], k->ngen);
  publish(k, t);
}

void em_chk_bar_release(Cta *c, int id) {
  EmChk *k = c->chk;
  if (!k) return;
  for (int i = 0; i < c->n; i++) {
    const Thr *t = &c->t[i];
    if (t->state != T_BAR || t->bar != id) continue;
    join(k->vc[i], k->bar[id], k->used);
    join(k->avc[i], k->bara[id], k->ngen);
  }
  memset(k->bar[id], 0, sizeof k->bar[id][0] * (size_t)k->used);
  memset(k->bara[id], 0, sizeof k->bara[id][0] * (size_t)k->ngen);
}

/* barrier.cluster: the arrivals of this CTA's threads joined; the completed
 * phase's join, taken by each thread at its wait (the next phase cannot
 * complete before every thread waited on this one, so it stays). */
void em_chk_cbar_arrive(Cta *c, const Thr *t) {
  EmChk *k = c->chk;
  if (!k) return;
  join(k->cbar, row_of(k, t), k->used);
  join(k->cbara, k->avc[t->linear], k->ngen);
  publish(k, t);
}

void em_chk_cbar_complete(Cta *c) {
  EmChk *k = c->chk;
  if (!k) return;
  memcpy(k->cdone, k->cbar, sizeof k->cdone), memcpy(k->cdonea, k->cbara, sizeof k->cdonea);
  memset(k->cbar, 0, sizeof k->cbar), memset(k->cbara, 0, sizeof k->cbara);
}

void em_chk_cbar_wait(Cta *c, const Thr *t) {
  EmChk *k = c->chk;
  if (!k) return;
  join(k->vc[t->linear], k->cdone, k->used);
  join(k->avc[t->linear], k->cdonea, k->ngen);
}

void em_chk_remote_write(Cta *c, const Cta *src, uint32_t a, uint32_t n) {
  EmChk *k = c->chk;
  if (!k || !n || (uint64_t)a + n > c->smem_size) return;
  for (size_t x = a / 4; x <= (a + n - 1) / 4; x++) {
    Word *d = &k->sh[x];
    d->init |= word_mask(a, n, x);
    d->w = 0, d->r[0] = d->r[1] = 0;
    d->xw = xw_of(src);
  }
}

static bool peer_written(void *c, uint32_t a, uint32_t n) {
  em_chk_remote_write(c, c, a, n);
  return true;
}

void em_chk_tma_peer_done(Cta *c, const EmAsync *op, uint32_t *acc) {
  EmClu *u = c->clu;
  if (!c->chk || !u) return;
  em_box_chunks(op, peer_written, c); /* written at c's epoch now (xw_of), which the release below covers */
  if (u->xep[c->rank] > acc[c->rank]) acc[c->rank] = u->xep[c->rank];
  if (u->xep[c->rank] < EP_MAX) u->xep[c->rank]++;
}

/* A bulk copy into the cluster (async.c) landing in CTA d on its mbarrier b: from its issue, its bytes are
 * known to d's threads only through b's phase (w: b's agent), and to the cluster's other CTAs only once that
 * phase completes (xw: no epoch yet); when it lands, they count to the phase it completes (the release of d's
 * epoch that the phase carries, as a .cta_group::2 TMA load's). Its issuer is another CTA's thread, so reads
 * of d's still in flight over those bytes are not checked against it. */
void em_chk_copy_issue(Cta *d, const EmAsync *op) {
  EmChk *k = d->chk;
  if (!k || (uint64_t)op->smem + op->bytes > d->smem_size) return;
  int i = -1;
  for (int j = 0; j < d->nmb && i < 0; j++)
    if (d->mb[j].addr == op->mbar) i = j;
  uint32_t w = chk_mb(k, i) ? MK(k->agm + i, k->mb[i]->ncomp + 1) : 0;
  for (size_t x = op->smem / 4; x <= (op->smem + op->bytes - 1) / 4; x++) {
    Word *wd = &k->sh[x];
    wd->w = w, wd->wpc = (int32_t)(op->in - d->f->ins), wd->wthr = (uint16_t)op->thr;
    wd->r[0] = wd->r[1] = 0;
    wd->xw = d->clu ? (uint32_t)(d->rank + 1) << 24 | EP_MAX : 0;
  }
}

void em_chk_copy_done(Cta *d, const EmAsync *op, uint32_t *acc) {
  EmChk *k = d->chk;
  if (!k || (uint64_t)op->smem + op->bytes > d->smem_size) return;
  uint32_t xw = xw_of(d);
  for (size_t x = op->smem / 4; x <= (op->smem + op->bytes - 1) / 4; x++) {
    Word *wd = &k->sh[x];
    wd->init |= word_mask(op->smem, op->bytes, x);
    if (wd->xw >> 24 == (uint32_t)(d->rank + 1) && (wd->xw & EP_MAX) == EP_MAX) wd->xw = xw;
  }
  EmClu *u = d->clu;
  if (!u) return;
  if (u->xep[d->rank] > acc[d->rank]) acc[d->rank] = u->xep[d->rank];
  if (u->xep[d->rank] < EP_MAX) u->xep[d->rank]++;
}

/* ---- across a cluster's CTAs: an epoch per CTA, ticking at each release by one of its threads ---- */

void em_chk_x_release(Cta *c, const Thr *t, uint32_t *acc) {
  EmClu *u = c->clu;
  if (!c->chk || !u || u->n < 2) return;
  for (int r = 0; r < u->n; r++)
    if (t->xc[r] > acc[r]) acc[r] = t->xc[r];
  if (u->xep[c->rank] > acc[c->rank]) acc[c->rank] = u->xep[c->rank];
  if (u->xep[c->rank] < EP_MAX) u->xep[c->rank]++;
}

uint32_t em_chk_x_now(const Cta *c) { return c->chk && c->clu ? c->clu->xep[c->rank] & EP_MAX : 0; }

bool em_chk_x_knows(const Thr *t, const Cta *w, uint32_t e) { return !w->chk || !w->clu || t->xc[w->rank] >= e; }

void em_chk_x_acquire(Thr *t, const uint32_t *done) {
  for (int r = 0; r < 16; r++)
    if (done[r] > t->xc[r]) t->xc[r] = done[r];
}

bool em_chk_remote_read(Cta *d, Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n) {
  EmChk *k = d->chk;
  if (!k || !n || (uint64_t)a + n > d->smem_size) return true;
  for (size_t x = a / 4; x <= (a + n - 1) / 4; x++) {
    const Word *w = &k->sh[x];
    uint8_t m = word_mask(a, n, x);
    if (x_unordered(c, t, w)) return x_race(c, t, in, d, x, w);
    if ((w->init & m) != m) {
      em_fail(c, t, in, "uninitialized: reads smem+0x%x of CTA %u,%u,%u (rank %d), which nothing has written",
              (unsigned)(x * 4), d->ctaid[0], d->ctaid[1], d->ctaid[2], d->rank);
      return false;
    }
  }
  return true;
}

/* ---- tcgen05 ordering (tmem.c keeps the tensor-memory shadow) ---- */

uint32_t em_chk_tc_now(Cta *c, const Thr *t) {
  EmChk *k = c->chk;
  if (!k) return 0;
  tick(k, t->warp); /* after the warp's last release: a thread that saw only that release does not know of this */
  uint32_t e = row_of(k, t)[t->warp];
  publish(k, t);
  return e;
}

int em_chk_tc_knows(Cta *c, const Thr *t, int w, uint32_t e) {
  EmChk *k = c->chk;
  if (!k || w == (int)t->warp || w < 0 || w >= k->nw) return 2;
  if (k->vc[t->linear][w] < e) return 0;
  return k->tvc && k->tvc[t->linear][w] >= e ? 2 : 1;
}

void em_chk_tc_fence_after(Cta *c, const Thr *t) {
  EmChk *k = c->chk;
  if (!k || (!k->tvc && !(k->tvc = calloc((size_t)c->n, sizeof *k->tvc)))) return; /* out of memory: unchecked */
  memcpy(k->tvc[t->linear], k->vc[t->linear], sizeof k->tvc[0][0] * (size_t)k->nw);
}

uint32_t em_chk_tc_mma(Cta *c) {
  EmChk *k = c->chk;
  return k && k->tc_ep < EP_MAX ? ++k->tc_ep : 0;
}

void em_chk_tc_commit(Cta *c, EmMbar *b, uint32_t e) {
  EmChk *k = c->chk;
  ChkMb *m = b ? chk_mb(k, mb_index(c, b)) : NULL;
  if (m && m->cur[k->agt] < e) m->cur[k->agt] = e;
}

bool em_chk_tc_mma_done(Cta *c, const Thr *t, uint32_t e) {
  EmChk *k = c->chk;
  return !k || k->vc[t->linear][k->agt] >= e;
}

/* ---- mbarriers ---- */

void em_chk_mbar_init(Cta *c, EmMbar *b) {
  EmChk *k = c->chk;
  int i = mb_index(c, b);
  if (!k || k->agm + i >= AG_N - 1) return; /* agents run out: unchecked */
  if (!k->mb[i] && !(k->mb[i] = calloc(1, sizeof *k->mb[i]))) return; /* out of memory: unchecked */
  ChkMb *m = k->mb[i];
  memset(m->cur, 0, sizeof m->cur[0] * (size_t)k->used), memset(m->cura, 0, sizeof m->cura),
      memset(m->arrived, 0, sizeof m->arrived);
  if (k->agm + i + 1 > k->used) k->used = k->agm + i + 1;
}

bool em_chk_mbar_arrive(Cta *c, const Thr *t, const EmIns *in, EmMbar *b) {
  EmChk *k = c->chk;
  int i = mb_index(c, b);
  if (!chk_mb(k, i)) return true;
  ChkMb *m = k->mb[i];
  if (m->arrived[t->linear / 32] >> (t->linear % 32) & 1) {
    char nm[160];
    em_fail(c, t, in, "mbarrier: this thread arrives twice in phase %u of %s (pending arrivals %u of %u): more "
            "arrivals than the barrier expects per phase", b->phase, em_mbar_name(c, b, nm, sizeof nm), b->pending,
            b->count);
    return false;
  }
  m->arrived[t->linear / 32] |= 1u << (t->linear % 32);
  join(m->cur, row_of(k, t), k->used);
  join(m->cura, k->avc[t->linear], k->ngen);
  publish(k, t);
  return true;
}

void em_chk_mbar_complete(Cta *c, EmMbar *b) {
  EmChk *k = c->chk;
  int i = mb_index(c, b);
  if (!chk_mb(k, i)) return;
  ChkMb *m = k->mb[i];
  if (m->ncomp < EP_MAX) m->ncomp++;
  if (m->cur[k->agm + i] < m->ncomp) m->cur[k->agm + i] = m->ncomp; /* the TMA loads that completed on it */
  join(m->done, m->cur, k->used);
  join(m->donea, m->cura, k->ngen);
  memset(m->cur, 0, sizeof m->cur[0] * (size_t)k->used), memset(m->cura, 0, sizeof m->cura),
      memset(m->arrived, 0, sizeof m->arrived);
}

void em_chk_mbar_acquire(Cta *c, const Thr *t, EmMbar *b) {
  EmChk *k = c->chk;
  int i = mb_index(c, b);
  if (!chk_mb(k, i)) return;
  join(k->vc[t->linear], k->mb[i]->done, k->used);
  join(k->avc[t->linear], k->mb[i]->donea, k->ngen);
}

/* ---- asynchronous accesses ---- */

/* An asynchronous read (TMA store, wgmma) issued by warps whose clocks are
 * row / arow (a warpgroup: the least of its warps'): of word x. */
static bool async_read_ok(Cta *c, const Thr *t, const EmIns *in, const char *what, const uint32_t *row,
                          const uint32_t *arow, Word *d, size_t x, uint8_t m) {
  char wb[256];
  int ag = AG(d->w);
  if (d->w && ag < c->chk->ngen && arow[ag] < EP(d->w)) {
    if (row[ag] >= EP(d->w))
      em_fail(c, t, in, "proxy: %s smem+0x%x, written by %s through the generic proxy, with no fence.proxy.async "
              "between the write and this asynchronous read%s", what, (unsigned)(x * 4), writer(c, d, wb, sizeof wb),
              is_cpa(c->chk, ag) ? " (cp.async writes through the generic proxy, PTX ISA: fence.proxy.async after its "
                                   "cp.async.wait_group, before the barrier)" : "");
    else if (is_cpa(c->chk, ag))
      em_fail(c, t, in, "race: %s smem+0x%x, written by %s, %s", what, (unsigned)(x * 4), writer(c, d, wb, sizeof wb),
              cpa_why(c, t, d));
    else
      em_fail(c, t, in, "race: %s smem+0x%x, written by %s, with no barrier (nor fence.proxy.async) between the write "
              "and this asynchronous read", what, (unsigned)(x * 4), writer(c, d, wb, sizeof wb));
    return false;
  }
  if (d->w && ag >= c->chk->agm && row[ag] < EP(d->w)) {
    em_fail(c, t, in, "race: %s smem+0x%x, which %s writes, with no wait for that mbarrier's phase", what,
            (unsigned)(x * 4), writer(c, d, wb, sizeof wb));
    return false;
  }
  if ((d->init & m) != m) return uninit(c, t, in, what, d, x, m);
  return true;
}

/* The source of a bulk copy into the cluster (async.c), read through the async proxy from its issue: written
 * before it, through a proxy fence when by generic stores. (Writes over it before the copy completes are
 * caught by the copy itself: async.c compares the bytes.) */
bool em_chk_async_src(Cta *c, const Thr *t, const EmIns *in, const char *what, uint32_t a, uint32_t n) {
  EmChk *k = c->chk;
  if (!k || !n || (uint64_t)a + n > c->smem_size) return true;
  uint32_t *row = row_of(k, t), *arow = k->avc[t->linear];
  for (size_t x = a / 4; x <= (a + n - 1) / 4; x++)
    if (!async_read_ok(c, t, in, what, row, arow, &k->sh[x], x, word_mask(a, n, x))) return false;
  return true;
}

bool em_chk_tc_read(Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n, uint32_t ep) {
  EmChk *k = c->chk;
  if (!k || !n || !ep || (uint64_t)a + n > c->smem_size) return true;
  tick(k, (int)t->warp);
  uint32_t *row = row_of(k, t), *arow = k->avc[t->linear];
  k->ag_in[k->agt] = in;
  for (size_t x = a / 4; x <= (a + n - 1) / 4; x++) {
    Word *d = &k->sh[x];
    /* (mask 0: bytes never written are not reported here, unlike wgmma's; the emulator's window starts zeroed) */
    if (!async_read_ok(c, t, in, "the tcgen05.mma reads", row, arow, d, x, 0)) return false;
    add_read(d, k->agt, ep, row);
  }
  return true;
}

/* The peer CTA's shared memory that a pair MMA (.cta_group::2, issued by t of c) reads: what the peer wrote
 * there must have been released to t (a barrier.cluster, or an mbarrier arrival it made, as for a remote
 * load), and the bytes stay read by the peer's tcgen05 pipe at epoch pep until a commit to one of the peer's
 * mbarriers covers it, so that the peer's own writes into them before that wait are races. The peer's
 * generic-proxy writes (its threads' stores, its cp.async copies) must be covered by a fence.proxy.async of
 * one of its threads (a `proxy` report otherwise); whether that fence lies on the path to t is not told apart
 * across the CTAs (their clocks are per CTA), nor are bytes never written. */
bool em_chk_tc_read_peer(Cta *pc, Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n, uint32_t pep) {
  static const uint32_t none[AG_N]; /* the issuing thread knows of no read of the peer's as over */
  EmChk *k = pc->chk;
  if (!k || !n || !pep || (uint64_t)a + n > pc->smem_size) return true;
  k->ag_in[k->agt] = in;
  for (size_t x = a / 4; x <= (a + n - 1) / 4; x++) {
    Word *d = &k->sh[x];
    if (x_unordered(c, t, d)) return x_race(c, t, in, pc, x, d);
    int ag = AG(d->w);
    if (d->w && ag < k->ngen && k->fenced[ag] < EP(d->w)) {
      char wb[256];
      em_fail(c, t, in, "proxy: the tcgen05.mma.cta_group::2 reads smem+0x%x of the peer CTA (rank %d), written by %s "
              "through the generic proxy, with no fence.proxy.async in that CTA after the write", (unsigned)(x * 4),
              pc->rank, writer(pc, d, wb, sizeof wb));
      return false;
    }
    add_read(d, k->agt, pep, none);
  }
  return true;
}

typedef struct Box {
  Cta *c;
  const Thr *t;
  const EmAsync *op;
  int w, ag;
  uint32_t ep, *row, *arow; /* the issuing thread's clocks */
} Box;

static bool box_load(void *arg, uint32_t a, uint32_t n) {
  Box *b = arg;
  EmChk *k = b->c->chk;
  for (size_t x = a / 4; x <= (a + n - 1) / 4 && x < k->nsh; x++) {
    Word *d = &k->sh[x];
    if (!write_ok(b->c, b->t, b->op->in, "the TMA load overwrites", b->w, b->row, d, x)) return false;
    if (d->w && AG(d->w) < k->nw && AG(d->w) != b->w && b->row[AG(d->w)] < EP(d->w)) {
      char wb[256];
      em_fail(b->c, b->t, b->op->in, "race: the TMA load overwrites smem+0x%x, written by %s, with no barrier between",
              (unsigned)(x * 4), writer(b->c, d, wb, sizeof wb));
      return false;
    }
    d->w = b->ag < AG_N ? MK(b->ag, b->ep) : 0;
    d->wpc = (int32_t)(b->op->in - b->c->f->ins), d->wthr = (uint16_t)b->op->thr;
    d->r[0] = d->r[1] = 0;
    /* completing on the peer's mbarrier (.cta_group::2): no thread of the cluster knows it until its phase
       completes (em_chk_tma_peer_done marks it then) */
    d->xw = b->op->mcta >= 0 && b->c->clu ? (uint32_t)(b->c->rank + 1) << 24 | EP_MAX : xw_of(b->c);
  }
  return true;
}

static bool box_store(void *arg, uint32_t a, uint32_t n) {
  Box *b = arg;
  EmChk *k = b->c->chk;
  for (size_t x = a / 4; x <= (a + n - 1) / 4 && x < k->nsh; x++) {
    Word *d = &k->sh[x];
    if (!async_read_ok(b->c, b->t, b->op->in, "the TMA store reads", b->row, b->arow, d, x, word_mask(a, n, x)))
      return false;
    add_read(d, b->ag, b->ep, b->row);
  }
  return true;
}

static bool box_done(void *arg, uint32_t a, uint32_t n) {
  Box *b = arg;
  EmChk *k = b->c->chk;
  for (size_t x = a / 4; x <= (a + n - 1) / 4 && x < k->nsh; x++) {
    Word *d = &k->sh[x];
    d->init |= word_mask(a, n, x);
    if (b->ag < AG_N && AG(d->w) == b->ag) d->w = MK(b->ag, b->ep); /* counted to the phase it completes on */
  }
  return true;
}

bool em_chk_tma_issue(Cta *c, const Thr *t, const EmAsync *op) {
  EmChk *k = c->chk;
  if (!k) return true;
  Box b = {.c = c, .t = t, .op = op, .w = (int)t->warp};
  tick(k, b.w);
  b.row = row_of(k, t), b.arow = k->avc[t->linear];
  if (op->load) {
    int i = -1;
    for (int j = 0; j < c->nmb && i < 0 && op->mcta < 0; j++) /* completing on another CTA's: no agent here */
      if (c->mb[j].addr == op->mbar) i = j;
    b.ag = chk_mb(k, i) ? k->agm + i : AG_N;
    b.ep = b.ag < AG_N ? k->mb[i]->ncomp + 1 : 0;
    return em_box_chunks(op, box_load, &b);
  }
  b.ag = k->agb + b.w;
  b.ep = (uint32_t)op->group + 1;
  k->ag_in[b.ag] = op->in;
  return em_box_chunks(op, box_store, &b);
}

void em_chk_tma_done(Cta *c, const EmAsync *op) {
  EmChk *k = c->chk;
  if (!k || !op->load) return;
  Box b = {.c = c, .op = op, .ag = AG_N};
  for (int j = 0; j < c->nmb; j++)
    if (c->mb[j].addr == op->mbar && chk_mb(k, j)) b.ag = k->agm + j, b.ep = k->mb[j]->ncomp + 1;
  em_box_chunks(op, box_done, &b);
}

void em_chk_bulk_wait(Cta *c, const Thr *t, int below) {
  EmChk *k = c->chk;
  if (k && below > 0 && k->vc[t->linear][k->agb + t->warp] < (uint32_t)below)
    k->vc[t->linear][k->agb + t->warp] = (uint32_t)below;
}

/* Entry a of what every thread of the warpgroup at t0 knows (the least of
 * their clocks: row, and of their fenced clocks: arow), once (have). Its
 * own warps' writes: ordered by program order, fenced when the writing
 * warp fenced them. */
static inline void need(const Cta *c, unsigned t0, uint32_t *row, uint32_t *arow, uint8_t *have, int a) {
  const EmChk *k = c->chk;
  if (have[a]) return;
  have[a] = 1;
  int w0 = (int)t0 / 32;
  bool own = a >= w0 && a < w0 + 4;
  unsigned lo = own ? (unsigned)a * 32 : t0, hi = (own ? lo + 32 : t0 + 128) < (unsigned)c->n ? (own ? lo + 32 : t0 + 128)
                                                                                               : (unsigned)c->n;
  uint32_t r = EP_MAX, ar = EP_MAX;
  for (unsigned j = lo; j < hi; j++) {
    if (k->vc[j][a] < r) r = k->vc[j][a];
    if (a < k->ngen && k->avc[j][a] < ar) ar = k->avc[j][a];
  }
  row[a] = own ? k->ep[a] : r;
  if (a < k->ngen) arow[a] = ar;
}

bool em_chk_wgmma_issue(Cta *c, unsigned t0, const EmWgOp *op) {
  EmChk *k = c->chk;
  if (!k) return true;
  static _Thread_local uint32_t addr[(64 + 256) * 2];
  int n = em_wgmma_addrs(&op->w, addr), w0 = (int)t0 / 32, g = (int)t0 / 128, ag = k->agw + g;
  if (n < 0) return true; /* em_wgmma_run reports the descriptor */
  uint32_t row[AG_N], arow[GN]; /* what the warpgroup knows, entry by entry as the words need them (need) */
  uint8_t have[AG_N] = {0};
  for (int w = w0; w < w0 + 4 && w < k->nw; w++) tick(k, w);
  k->ag_in[ag] = op->in;
  uint32_t ep = (uint32_t)op->group + 1;
  const Thr *t = &c->t[t0];
  uint32_t ok_w = 0; /* a write already found ordered */
  for (int i = 0; i < n; i++) {
    if (c->smem_size < 16 || addr[i] > c->smem_size - 16) continue; /* em_wgmma_run reports it */
    for (size_t x = addr[i] / 4; x < addr[i] / 4 + 4; x++) {
      Word *d = &k->sh[x];
      need(c, t0, row, arow, have, AG(d->w));
      if ((d->w != ok_w || d->init != 0xf) &&
          !async_read_ok(c, t, op->in, "the wgmma.mma_async reads", row, arow, d, x, 0xf))
        return false;
      ok_w = d->w;
      if (d->r[0]) need(c, t0, row, arow, have, AG(d->r[0]));
      if (d->r[1]) need(c, t0, row, arow, have, AG(d->r[1]));
      add_read(d, ag, ep, row);
    }
  }
  return true;
}

void em_chk_wgmma_wait(Cta *c, const Thr *t, int below) {
  EmChk *k = c->chk;
  if (!k || below <= 0) return;
  int ag = k->agw + (int)t->warp / 4;
  if (k->vc[t->linear][ag] < (uint32_t)below) k->vc[t->linear][ag] = (uint32_t)below;
}

/* ---- names ---- */

/* The name a `let NAME = mbarrier(` on line `line` of `file` gives, if the
 * file can be read from here. */
static bool src_name(const char *file, int line, char *out, size_t n) {
  FILE *f = file ? fopen(file, "r") : NULL;
  if (!f) return false;
  char buf[512];
  bool ok = false;
  for (int l = 1; fgets(buf, sizeof buf, f); l++) {
    if (l < line) continue;
    const char *p = strstr(buf, "let "), *q = strstr(buf, "mbarrier(");
    if (p && q && q > p) {
      p += 4;
      while (*p == ' ') p++;
      size_t len = 0;
      while (p[len] == '_' || (p[len] >= 'a' && p[len] <= 'z') || (p[len] >= 'A' && p[len] <= 'Z') ||
             (p[len] >= '0' && p[len] <= '9'))
        len++;
      if (len && len < n) memcpy(out, p, len), out[len] = 0, ok = true;
    }
    break;
  }
  fclose(f);
  return ok;
}

const char *em_mbar_name(const Cta *c, const EmMbar *b, char *buf, size_t n) {
  const EmIns *in = b->init_in;
  if (!in || in->line <= 0) {
    snprintf(buf, n, "at smem+0x%x", b->addr);
    return buf;
  }
  int idx = 0; /* its index among the mbarriers one line initialized */
  for (int i = 0; i < c->nmb; i++) {
    const EmIns *o = c->mb[i].init_in;
    if (o && o->line == in->line && o->file == in->file && c->mb[i].addr < b->addr) idx++;
  }
  const char *file = in->file > 0 && in->file < c->m->nfiles ? c->m->files[in->file] : NULL;
  const char *base = file && strrchr(file, '/') ? strrchr(file, '/') + 1 : file ? file : "?";
  char name[64];
  if (src_name(file, in->line, name, sizeof name))
    snprintf(buf, n, "%s[%d] (smem+0x%x, %s:%d)", name, idx, b->addr, base, in->line);
  else
    snprintf(buf, n, "#%d of %s:%d (smem+0x%x)", idx, base, in->line, b->addr);
  return buf;
}

/* ---- cp.async (non-bulk) ---- */

/* A cp.async writes its n bytes at issue, as far as the checks go, under
 * its warp's cp.async stream at the epoch of its group: complete for a
 * thread whose clock has that epoch (its own wait_group; a barrier after
 * it for the others). Until then any access to them is a race. */
bool em_chk_cpa_issue(Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n, int group) {
  EmChk *k = c->chk;
  if (!k || !n || (uint64_t)a + n > c->smem_size) return true;
  int w = (int)t->warp, ag = k->agc + w;
  uint32_t *row = row_of(k, t), ep = (uint32_t)group + 1 < EP_MAX ? (uint32_t)group + 1 : EP_MAX;
  for (size_t x = a / 4; x <= (a + n - 1) / 4; x++) {
    Word *d = &k->sh[x];
    if (!write_ok(c, t, in, "the cp.async writes", ag, row, d, x)) return false;
    if (d->w && AG(d->w) < k->nw && AG(d->w) != w && row[AG(d->w)] < EP(d->w)) {
      char wb[256];
      em_fail(c, t, in, "race: the cp.async overwrites smem+0x%x, written by %s, with no barrier between",
              (unsigned)(x * 4), writer(c, d, wb, sizeof wb));
      return false;
    }
    d->w = MK(ag, ep), d->wpc = (int32_t)(in - c->f->ins), d->wthr = (uint16_t)t->linear;
    d->init |= word_mask(a, n, x);
    d->r[0] = d->r[1] = 0;
    d->xw = xw_of(c);
  }
  return true;
}

void em_chk_cpa_wait(Cta *c, const Thr *t, int below) {
  EmChk *k = c->chk;
  if (!k || below <= 0) return;
  uint32_t *v = &k->vc[t->linear][k->agc + (int)t->warp], b = (uint32_t)below < EP_MAX ? (uint32_t)below : EP_MAX;
  if (*v < b) *v = b;
}

/* exec_int.h - what the executor's files share (exec.c: threads, the core
 * instructions, the scheduler; async.c: mbarriers, TMA, bulk groups;
 * matrix.c: the warp collectives, stmatrix/ldmatrix and wgmma). Internal to emu/: the CTA and
 * thread state, the report and operand helpers, the 16-bit float
 * conversions.
 *
 * The files' floors, each calling only those below it: report.c (em_fail,
 * em_rand); the pure ones (tma.c, wgmma.c, tcgen05*.c); operand.c; check.c;
 * cluster.c; memory.c; async.c, cpasync.c, regs.c, sys.c; tmem.c;
 * matrix.c; exec.c (one instruction: it dispatches to the engines); sched.c
 * (CTAs, rounds, launches). */
#ifndef TILE_EMU_EXEC_INT_H
#define TILE_EMU_EXEC_INT_H

#include <math.h>
#include <string.h>

#include "emu.h"

#define EM_PARAM_GENERIC 0x7f0000000000ull
#define EM_DEFAULT_STEPS 200000000ull

/* Thread states: running; at a bar.sync; at a warp or warpgroup collective;
 * at an mbarrier wait whose phase has not completed; spinning on global
 * memory (an acquire load that keeps reading the same value: another CTA
 * must change it); waiting in setmaxnreg.inc for registers (regs.c); at a
 * barrier.cluster.wait (cluster.c); exited. */
enum { T_RUN, T_BAR, T_COLL, T_MBAR, T_SPIN, T_REGS, T_CBAR, T_DONE };

enum { EM_SPIN_LOADS = 8 }; /* the same value this many times in a row: a spin */

typedef struct Thr {
  uint64_t *r;
  int pc, state, bar;
  unsigned tid[3], lane, warp, linear;
  uint64_t cval, cval2; /* what it brings to a collective */
  uint32_t cmask;
  bool cwg;             /* the collective is its warpgroup's (wgmma.mma_async), not its warp's */
  uint32_t mbar;        /* T_MBAR: the mbarrier's shared address, and the phase parity it waits for */
  int mbar_parity;
  int bulk_groups;      /* cp.async.bulk.commit_group executed so far */
  int wg_groups;        /* wgmma.commit_group executed so far */
  int cpa_groups;       /* cpasync.c: cp.async.commit_group executed so far (wait_all counts as one) */
  int cpa_waited;       /* the groups below this are complete (its wait_groups) */
  int cpa_last;         /* the group of its last cp.async + 1 (0: none), and that instruction */
  const EmIns *cpa_in;
  int cpa_inflight;     /* its copies not yet done */
  uint64_t spin_addr, spin_val; /* the last acquire load from global memory, and how often in a row */
  int spin_n;
  uint32_t cb_arr;      /* cluster.c: the barrier.cluster phase it arrived in + 1 (0: not arrived) */
  uint32_t xc[16];      /* check.c: what it knows of each cluster CTA's epoch (EmClu.xep) */
  bool gdc_waited;      /* it executed griddepcontrol.wait (memory.c: a pdl launch's global accesses need it) */
} Thr;

/* An mbarrier (PTX ISA: a 64-bit object in shared memory): its expected
 * arrival count, the arrivals still pending in the current phase, the
 * transaction bytes still expected (negative when completions came first),
 * the phase number. Kept beside the window, keyed by its shared address. */
typedef struct EmMbar {
  uint32_t addr, count, pending, phase;
  int64_t tx;
  int waiters; /* threads in T_MBAR on it */
  const EmIns *init_in; /* its mbarrier.init (its Tile line names it in reports) */
  const EmIns *exp_in;  /* the last expect_tx / arrive.expect_tx on it, and its thread */
  int exp_thr;
  uint32_t xacc[16], xdone[16]; /* check.c: the cluster epochs its current phase's arrivals release, and its past ones */
} EmMbar;

/* A bulk copy in flight (cp.async.bulk.tensor): done at a later scheduling
 * point, or when its thread waits for its bulk group. */
typedef struct EmAsync {
  const EmIns *in; /* the issuing instruction and thread (for reports) */
  int thr;
  bool load;       /* global -> shared (mbarrier completion); else shared -> global (bulk group) */
  bool remote;     /* a multicast load issued by another CTA of the cluster (thr: its thread there) */
  int mcta;        /* a load completing on another CTA's mbarrier (.cta_group::2: the pair's peer): its cluster rank;
                      -1: on the mbarrier of the CTA it writes */
  int group;       /* a store's bulk group: the thread's bulk_groups when issued */
  uint64_t due;    /* the round from which the scheduler may complete it */
  uint32_t smem, mbar;
  uint32_t phase;  /* a load: its mbarrier's phase when issued (the phase its bytes count towards) */
  int32_t coord[5];
  EmTensorMap map;
  /* a bulk copy into a CTA of the cluster (cp.async.bulk.shared::cluster.shared::cta): queued in the destination
     CTA (smem: where it lands, mbar: its mbarrier there), read from CTA rank scta at src when done */
  bool copy;
  int scta;
  uint32_t src, bytes;
  uint64_t sum;    /* the source bytes at issue (a hash): the copy may read them until it completes */
} EmAsync;

/* A wgmma.mma_async of a warpgroup, issued and not yet waited for: run by
 * the first wgmma.wait_group that needs it (its shared-memory operands are
 * read then, as late as the hardware may read them). */
typedef struct EmWgOp {
  const EmIns *in;
  EmWgmma w;
  int group;           /* the warpgroup's wg_groups when issued */
  uint32_t (*a)[4];    /* the RS form's A fragments, read at issue (128 threads), else NULL */
  uint64_t *d;         /* the accumulators at issue, 128 x N/2 (EM_WG_POISON: an earlier operation's) */
} EmWgOp;

typedef struct EmWgQueue {
  EmWgOp *op;
  int n, cap;
} EmWgQueue;

/* A cluster (cluster.c): its CTAs by rank, run co-scheduled (sched.c). */
typedef struct EmClu {
  struct Cta **cta;
  int n;
  unsigned dim[3];
  bool is_explicit;      /* a cluster shape was given (launch or .reqnctapercluster) */
  bool progressed;       /* sched.c: its last turn did more than spin */
  uint64_t stuck_at;     /* sched.c: 1 + the launch's count of turns that moved when one of its turns last did not */
  int cb_live;           /* barrier.cluster: the cluster's threads that have not exited */
  int cb_arrived;        /* and those that arrived in the current phase */
  uint32_t cb_phase;
  uint32_t xep[16];      /* check.c: each CTA's epoch: its shared-memory writes since its threads' last release */
  uint32_t cb_acc[16], cb_done[16]; /* check.c: what barrier.cluster's current and last phase release */
} EmClu;

/* A shared::cluster address: the CTA's rank + 1 above this bit, its shared-window offset below. */
#define EM_DSMEM_SHIFT 24

typedef struct Cta {
  const EmModule *m;
  const EmFunc *f;
  const EmLaunch *l;
  Thr *t;
  int n;
  uint8_t *smem;
  size_t smem_size;
  unsigned ctaid[3];
  int bar_arrived[16], bar_count[16];
  uint8_t bar_red[16];  /* bar.red: the reduction of the barrier's current arrivals (EmSub; 0: bar.sync) */
  uint32_t bar_acc[16]; /* and its value so far */
  int live; /* threads that have not exited */
  uint64_t steps, round, rng;
  char *err;
  size_t errlen;
  bool failed;
  EmMbar *mb;     /* mbarriers */
  int nmb, capmb;
  EmAsync *aq;    /* bulk copies in flight */
  int naq, capaq;
  EmWgQueue *wg;  /* per warpgroup: wgmma operations issued, not yet run */
  int nwg;
  uint32_t (*wgd)[128]; /* scratch: a warpgroup's accumulators */
  uint64_t *regs;       /* every thread's registers */
  struct EmSys *sys;    /* sys.c: the threads' local windows and what each printed last (NULL until used) */
  int *order;           /* the warps' order in a round */
  bool progressed;      /* sched.c: this turn did more than spin */
  int sched;            /* EmSched, resolved */
  struct EmChk *chk;    /* check.c's shadow state (NULL: checks off) */
  struct EmTc *tc;      /* tmem.c: tensor memory and the tcgen05 queue (NULL until the first tcgen05 instruction) */
  struct EmCpaq *cpa;   /* cpasync.c: the cp.async copies in flight (NULL until the first cp.async) */
  int reg_launch;       /* regs.c: registers a thread at launch (0: the register file not modelled) */
  int *reg_warp;        /* regs.c: the registers a thread of each warp holds */
  int64_t reg_free;     /* regs.c: the CTA's register pool: what setmaxnreg.dec gave back, not yet taken */
  EmClu *clu;           /* its cluster (one CTA when the launch has none) */
  int rank;             /* its rank in it (%cluster_ctarank) */
  bool ended;           /* sched.c: its threads have all exited (its window stays while the cluster runs) */
} Cta;

/* What an accumulator register of a wgmma.mma_async holds until the
 * wait_group that runs it: a value no 32-bit register can hold and no
 * 64-bit one will, so that reading it (em_src) is reported. */
#define EM_WG_POISON 0xdeadbeef7fc0deadull
/* What a destination register of a tcgen05.ld holds until its thread's
 * tcgen05.wait::ld. */
#define EM_TC_POISON 0xdeadbeef7fc1deadull

/* ---- exec.c ---- */
void em_step(Cta *c, Thr *t); /* one instruction of t */
/* ---- report.c (below every other file): the CTA's one report, the seeded schedules' numbers ---- */
void em_fail(Cta *c, const Thr *t, const EmIns *in, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
uint64_t em_rand(Cta *c);
/* ---- operand.c: source operands (registers, immediates, special registers, symbols), destinations, the
 * address of a memory operand ---- */
uint64_t em_src(const Cta *c, const Thr *t, const EmArg *a, EmType ty);
void em_dst(Thr *t, const EmArg *a, EmType ty, uint64_t v);
bool em_addr_of(Cta *c, Thr *t, const EmIns *in, const EmArg *ad, uint64_t *out);
/* ---- memory.c: the host bytes behind an address of a space (NULL after a report) ---- */
uint8_t *em_mem(Cta *c, const Thr *t, const EmIns *in, EmSpace sp, uint64_t a, size_t bytes);
uint8_t *em_gmem(Cta *c, const Thr *t, const EmIns *in, uint64_t a, size_t bytes);

/* ---- sys.c ---- */
void em_sys_step(Cta *c, Thr *t); /* t's instruction, which the parser marked EMM_SYS */
void em_sys_free(Cta *c);

/* ---- async.c ---- */
/* A shared-memory operand (a .shared address when sp is ES_SHARED, else a
 * generic one): its offset in the window, `bytes` of it inside, aligned to
 * `align`; false after a report naming `what`. */
bool em_smem_at(Cta *c, Thr *t, const EmIns *in, EmSpace sp, const EmArg *ad, size_t bytes, uint32_t align,
                const char *what, uint32_t *out);
/* The same for a shared::cluster address, which may be in another CTA of the cluster: *owner. */
bool em_smem_at_cluster(Cta *c, Thr *t, const EmIns *in, EmSpace sp, const EmArg *ad, size_t bytes, uint32_t align,
                        const char *what, uint32_t *out, Cta **owner);
/* Execute one of EM_MBAR_*, EM_TMA_*, EM_BULK_*, EM_SETMAXNREG (advancing
 * the pc, or blocking the thread). */
void em_async_step(Cta *c, Thr *t, const EmIns *in);
/* Complete the copies in flight that are due (every one when `all`);
 * true when any completed. */
bool em_async_tick(Cta *c, bool all);
/* What a thread in T_MBAR waits for, for the deadlock report. */
void em_mbar_waits(const Cta *c, const Thr *t, char *buf, size_t n);
/* At the end of a CTA: nothing left pending (else a report). */
bool em_async_end(Cta *c);

/* ---- cpasync.c: cp.async (non-bulk), its groups ---- */
void em_cpa_step(Cta *c, Thr *t, const EmIns *in); /* EM_CPA, EM_CPA_COMMIT, EM_CPA_WAIT */
bool em_cpa_tick(Cta *c, bool all); /* do the copies that are due (every one when all); true when any */
bool em_cpa_end(Cta *c);            /* at the end of a CTA: no copy left unwaited (else a report) */
void em_cpa_free(Cta *c);

/* ---- matrix.c ---- */
/* Execute EM_STMATRIX, EM_LDMATRIX, EM_WGMMA (collectives: the thread
 * waits for its warp or warpgroup), EM_WG_COMMIT, EM_WG_WAIT. */
void em_matrix_step(Cta *c, Thr *t, const EmIns *in);
/* Every thread of t's collective (warp or warpgroup) stands at its pc:
 * compute it and release them. */
void em_matrix_finish(Cta *c, Thr *t, const EmIns *in);
bool em_matrix_end(Cta *c);
void em_matrix_reset(Cta *c);
/* The core set's warp collectives (shfl.sync, redux.sync, vote.sync,
 * mma.sync), for em_step: em_matrix_coll_ready, true when every thread of
 * t's member mask stands at this pc; em_matrix_coll_finish computes the
 * collective (and em_matrix_finish's and em_tc_finish's) for all of them. */
bool em_matrix_coll_ready(Cta *c, Thr *t);
void em_matrix_coll_finish(Cta *c, Thr *t, const EmIns *in);

/* ---- check.c: the checks of shared memory and barriers (NULL c->chk: off) ----
 * Addresses are offsets in the CTA's window. Each returns false after a
 * report (em_fail). */
bool em_chk_new(Cta *c);  /* false: out of memory */
void em_chk_free(Cta *c);
size_t em_chk_bytes(size_t smem_size, int nthr); /* what em_chk_new allocates */
bool em_chk_read(Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n);  /* ld.shared, ldmatrix */
bool em_chk_write(Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n); /* st.shared, stmatrix */
void em_chk_atomic(Cta *c, uint32_t a, uint32_t n);                               /* atom/red.shared */
void em_chk_fence(Cta *c, const Thr *t, const EmIns *in);                         /* fence.* / membar.* */
void em_chk_bar_arrive(Cta *c, const Thr *t, int id);
void em_chk_bar_release(Cta *c, int id); /* before its waiters run */
bool em_chk_mbar_arrive(Cta *c, const Thr *t, const EmIns *in, EmMbar *b);
void em_chk_mbar_init(Cta *c, EmMbar *b);
void em_chk_mbar_complete(Cta *c, EmMbar *b);
void em_chk_mbar_acquire(Cta *c, const Thr *t, EmMbar *b);
bool em_chk_tma_issue(Cta *c, const Thr *t, const EmAsync *op);
void em_chk_tma_done(Cta *c, const EmAsync *op);
void em_chk_bulk_wait(Cta *c, const Thr *t, int below);
bool em_chk_wgmma_issue(Cta *c, unsigned t0, const EmWgOp *op);
void em_chk_wgmma_wait(Cta *c, const Thr *t, int below);
/* cp.async of n bytes at a (group: the thread's cpa_groups at issue); its thread's wait_group up to below */
bool em_chk_cpa_issue(Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n, int group);
void em_chk_cpa_wait(Cta *c, const Thr *t, int below);
/* An mbarrier's name for reports: "full[1] (gemm.tile:39)", from the Tile
 * line of its mbarrier.init, else its address. */
const char *em_mbar_name(const Cta *c, const EmMbar *b, char *buf, size_t n);
/* tma.c: the TMA box's bytes in shared memory, 16 at a time (the
 * swizzle moves 16-byte chunks): fn(arg, address, bytes) for each; the
 * box's extent in shared memory along dimension d, and its bytes. */
uint32_t em_tmap_box_n(const EmTensorMap *m, int d);
uint64_t em_tmap_box_bytes(const EmTensorMap *m);
bool em_box_chunks(const EmAsync *op, bool (*fn)(void *, uint32_t, uint32_t), void *arg); /* false: fn said stop */

/* check.c: tcgen05 ordering, for tmem.c's tensor-memory shadow (every one a no-op, or "known", with the checks
 * off). em_chk_tc_now: t's warp's epoch now (past its last release), published (its wait::st or wait::ld).
 * em_chk_tc_knows: what t knows of warp w's epoch e: 0 nothing, 1 through a thread sync, 2 through a sync and a
 * tcgen05.fence::after_thread_sync after it (or w is t's warp). em_chk_tc_fence_after: t's
 * fence::after_thread_sync. em_chk_tc_mma: a new MMA's epoch of the CTA's tcgen05 pipe; em_chk_tc_commit: a
 * commit covering the MMAs up to e arrives on b's phase; em_chk_tc_mma_done: t waited on a phase a commit
 * covering MMA e arrived on. */
uint32_t em_chk_tc_now(Cta *c, const Thr *t);
int em_chk_tc_knows(Cta *c, const Thr *t, int w, uint32_t e);
void em_chk_tc_fence_after(Cta *c, const Thr *t);
uint32_t em_chk_tc_mma(Cta *c);
/* tmem.c: a tcgen05.mma of pipe epoch ep reads n bytes of the issuing CTA's shared memory at a (A or B), through the
 * async proxy, until a commit covering ep is known: after the writes (a fence.proxy.async after generic ones), and no
 * write over them before that (bytes never written are not checked). _peer: the same for a pair MMA's half in the
 * peer CTA pc, at the peer's pipe epoch pep (the peer's writes released to the issuer, as a remote read's) */
void em_chk_copy_issue(Cta *d, const EmAsync *op);
void em_chk_copy_done(Cta *d, const EmAsync *op, uint32_t *acc);
bool em_chk_async_src(Cta *c, const Thr *t, const EmIns *in, const char *what, uint32_t a, uint32_t n);
bool em_chk_tc_read(Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n, uint32_t ep);
bool em_chk_tc_read_peer(Cta *pc, Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n, uint32_t pep);
void em_chk_tc_commit(Cta *c, EmMbar *b, uint32_t e);
bool em_chk_tc_mma_done(Cta *c, const Thr *t, uint32_t e);

/* ---- tmem.c: tensor memory and the tcgen05 instructions (sm_100a) ---- */
/* Warp collectives (alloc, dealloc, relinquish_alloc_permit, ld, st): every
 * lane of t's warp stands at in; run it and release them. */
void em_tc_finish(Cta *c, Thr *t, const EmIns *in);
/* One thread's tcgen05.mma, commit, wait, fence (advancing its pc). */
void em_tc_step(Cta *c, Thr *t, const EmIns *in);
/* Complete the queued MMAs and commits that are due (every one when all;
 * one under the adversarial schedule); true when any completed. */
bool em_tc_tick(Cta *c, bool all);
/* At the end of a CTA: drain the queue, nothing left allocated (else a report). */
bool em_tc_end(Cta *c);
void em_tc_free(Cta *c);
/* async.c: one arrival on the mbarrier at addr from an asynchronous engine
 * (tcgen05.commit), on behalf of t's instruction in; false after a report. */
bool em_mbar_arrive_async(Cta *c, const Thr *t, const EmIns *in, uint32_t addr);
/* The same arrival on another CTA d of c's cluster (a .cta_group::2 or multicast tcgen05.commit). */
bool em_mbar_arrive_remote(Cta *d, Cta *c, const Thr *t, const EmIns *in, uint32_t addr);

/* ---- regs.c: the register file under setmaxnreg ---- */
/* The registers a thread holds at launch of f with nthr threads (regs: the
 * cubin's count, 0: from the PTX), into *out (0: not modelled); false with
 * a report in err when the CTA would take more than an SM's registers. */
bool em_reg_launch(const EmFunc *f, unsigned regs, uint64_t nthr, int *out, char *err, size_t errlen);
bool em_reg_new(Cta *c); /* false: out of memory */
void em_reg_free(Cta *c);
/* Every thread of t's warpgroup stands at the setmaxnreg in: run it (or leave them in T_REGS). */
void em_reg_finish(Cta *c, Thr *t, const EmIns *in);
/* What a thread in T_REGS waits for, for the deadlock report. */
void em_reg_waits(const Cta *c, const Thr *t, char *buf, size_t n);

/* ---- cluster.c: clusters ---- */
/* The CTA whose window the shared(::cluster) address *a is in (its tag stripped from *a); NULL after a report. */
Cta *em_clu_owner(Cta *c, const Thr *t, const EmIns *in, uint64_t *a);
void em_clu_step(Cta *c, Thr *t, const EmIns *in); /* EM_CBAR, EM_MAPA */
void em_clu_exit(Cta *c, Thr *t);                  /* t exited: it no longer holds barrier.cluster back */
void em_clu_waits(const Cta *c, const Thr *t, char *buf, size_t n); /* T_CBAR, for the deadlock report */
/* check.c: barrier.cluster as the checks see it (a bar.sync over each CTA); a write by another CTA of the
 * cluster (through shared::cluster: src, its epoch then; or a multicast TMA load, src NULL: ordered by the
 * mbarrier it completes on) into a's n bytes of c's window: written, by no agent this CTA's clocks know. */
void em_chk_cbar_arrive(Cta *c, const Thr *t);
void em_chk_cbar_complete(Cta *c);
void em_chk_cbar_wait(Cta *c, const Thr *t);
void em_chk_remote_write(Cta *c, const Cta *src, uint32_t a, uint32_t n);
/* A TMA load into c that completed on another CTA's mbarrier (.cta_group::2): its bytes are c's writes at a
 * cluster epoch of c's, which the mbarrier's phase releases (acc: its xacc) to the threads that wait on it. */
void em_chk_tma_peer_done(Cta *c, const EmAsync *op, uint32_t *acc);
/* Across a cluster's CTAs (per CTA epochs, check.c): t of c releases what it knows into acc (a barrier.cluster
 * arrival, an mbarrier arrival); a thread takes what a completed phase released; a read (remote: of d's window)
 * of words another CTA wrote must know that CTA's epoch of the write (false after a report). */
void em_chk_x_release(Cta *c, const Thr *t, uint32_t *acc);
void em_chk_x_acquire(Thr *t, const uint32_t *done);
/* em_chk_x_now: CTA c's cluster epoch now (what its next release will publish); em_chk_x_knows: whether t (of
 * another CTA) acquired CTA w's epoch e through a release of w's */
uint32_t em_chk_x_now(const Cta *c);
bool em_chk_x_knows(const Thr *t, const Cta *w, uint32_t e);
bool em_chk_remote_read(Cta *d, Cta *c, const Thr *t, const EmIns *in, uint32_t a, uint32_t n);

/* ---- numbers (shared by the files above) ---- */
static inline int em_type_bits(EmType t) {
  switch (t) {
  case ET_PRED: return 1;
  case ET_B8: case ET_U8: case ET_S8: return 8;
  case ET_B16: case ET_U16: case ET_S16: case ET_F16: case ET_BF16: return 16;
  case ET_B64: case ET_U64: case ET_S64: case ET_F64: case ET_F32X2: return 64;
  default: return 32;
  }
}
static inline uint64_t em_mask_of(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }
static inline double em_f64_of(uint64_t bits) {
  double d;
  memcpy(&d, &bits, 8);
  return d;
}
static inline uint64_t em_bits_of_f64(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return u;
}
static inline float em_f32_of(uint64_t bits) {
  uint32_t u = (uint32_t)bits;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline uint64_t em_bits_of_f32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
/* f32 -> bf16, round to nearest even (NaN stays NaN) */
static inline uint16_t em_bf16_of(float f) {
  uint32_t u = (uint32_t)em_bits_of_f32(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static inline float em_f32_of_bf16(uint16_t h) { return em_f32_of((uint64_t)h << 16); }
/* f32 -> f16, round to nearest even */
static inline uint16_t em_f16_of(float f) {
  uint32_t u = (uint32_t)em_bits_of_f32(f), sign = (u >> 16) & 0x8000u;
  int32_t e = (int32_t)((u >> 23) & 0xff) - 127 + 15;
  uint32_t mant = u & 0x7fffffu;
  if (((u >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return (uint16_t)sign;
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
  return (uint16_t)(sign | h);
}
static inline float em_f32_of_f16(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  if (e == 31) return em_f32_of(sign | 0x7f800000u | (mant << 13));
  if (e == 0) {
    float v = ldexpf((float)mant, -24);
    return sign ? -v : v;
  }
  return em_f32_of(sign | ((e - 15 + 127) << 23) | (mant << 13));
}

#endif

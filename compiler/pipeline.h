/* pipeline.h - what pipeline.c shares with pipeline_multi.c (internal to
 * the two; pipeline.c depends on nothing in pipeline_multi.c).
 *
 * pipeline.c: the single-dot K loop (TMA or cp.async rings), and the pieces
 * every form is built of: use counts, op builders, an operand tile's
 * checks (pl_check_operand: a load in the loop's body that cp.async can
 * copy into a 128-byte swizzled ring), its copies (pl_copies_n), ring slots
 * as wgmma operands (pl_slot, pl_as_operand), the shared memory already
 * allocated (pl_smem_in_use), and the TMA form's pieces (pl_add_desc,
 * pl_bar_slot, pl_tma_issue, pl_tma_epilogue). pipeline_multi.c: loops
 * with two to four dots (pm_run, tilec_int.h). pipeline_sm100.c: the
 * single-dot K loop on sm_100a, on tcgen05 (pb_run, tilec_int.h). pipeline_rows.c:
 * a dot-less loop's plain loads through unswizzled rings (pr_run, tilec_int.h). */
#ifndef TILEC_PIPELINE_H
#define TILEC_PIPELINE_H
#include "tilec_int.h"

#define PL_SMEM_BUDGET (200 * 1024) /* what the default stage count may take */
#define PL_SMEM_LIMIT (227 * 1024)

typedef struct Pl {
  Ctx *c;
  TFunc *f;
} Pl;

#define PL_MAX_CARRIED 8
typedef struct Slice {
  TOp **ops;
  int n, cap;
  const char *why;
  /* values the loop carries that the addresses use, each advanced by a
   * step that is the same every iteration (Triton's `pa += BK * stride`) */
  TValue *carried[PL_MAX_CARRIED], *step[PL_MAX_CARRIED];
  int ncarried;
} Slice;

/* ---- one operand of the dot ---- */
typedef struct Operand {
  TOp *load;
  Slice s;
  int cd;        /* the contiguous dimension of the tile */
  Type *buf;     /* the ring's slot type (nbuf = S on the alloc) */
  bool copy_trans; /* the loaded tile is stored transposed in the slot (its contiguous dimension is 0) */
  bool trans;    /* the dot's operand is the slot seen transposed (copy_trans, unless trans(load)) */
  int64_t bytes; /* of one slot */
  /* TMA (tma_match): the tile is the box at (start[0], start[1]) of a 2-D
   * tensor (or of one plane of a 3-D one) the host can describe from the
   * kernel's parameters */
  bool tma;
  const char *no_tma; /* why not */
  TValue *start[2];   /* per tile dimension: x of x + off (NULL: 0) */
  int64_t off[2];
  TValue *src[4];     /* the tensor: pointer, columns, rows, row stride (parameters or constants; a NULL
                         columns: the constant cols; a NULL rows: unbounded, 2^31 - 1) */
  int64_t cols;       /* columns when there is no column mask: the run's end */
  /* a scalar offset in the address (`base + z * R * stride + rows * stride
   * + columns`): with no row mask, the rows of a tensor without planes
   * start at X = z * R (row X + r); with one (rows < R), the box lies in
   * plane X = z of a 3-D tensor of planes of R rows (planes). X is pk
   * times the product of the npleaf leaves (32-bit scalars). */
  bool planes;
  TValue *pleaf[4];
  int npleaf;
  int64_t pk;
} Operand;

/* "pipeline: dot at LINE:COL ..." into f->notes (--emit=tir prints them) */
void pl_note(Pl *p, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void pl_count_uses(TFunc *f); /* TValue.uses, fresh */
TOp *pl_mk(Pl *p, TOp *before, Opcode opc, Loc loc, int n, TValue **opnds, Type *rt);
TValue *pl_mk1(Pl *p, TOp *before, Opcode opc, Loc loc, int n, TValue **opnds, Type *rt);
TValue *pl_iconst(Pl *p, TOp *before, Type *t, int64_t v, Loc loc);
TValue *pl_bin(Pl *p, TOp *before, Opcode opc, TValue *a, TValue *b, Loc loc);
TValue *pl_cmp_lt(Pl *p, TOp *before, TValue *a, TValue *b, Loc loc);
/* iteration j of fop's loop (lo + j * step), for the prologue's copies */
TValue *pl_iter(Pl *p, TOp *before, TOp *fop, int j, Loc loc);
/* in fop's body: it = (iv - lo) / step, its slot cur = it % S, the slot D ahead nxt = (it + D) % S */
void pl_ring_index(Pl *p, TOp *before, TOp *fop, int S, int D, Loc loc, TValue **it, TValue **cur, TValue **nxt);
/* v (a load in body, or trans of one) as a ring's tile, into *o; else false
 * and *why. shared: the load (and the trans) may have more uses (the
 * caller checked they are all dots of the loop). */
bool pl_check_operand(Pl *p, TValue *v, TBlock *body, Operand *o, const char **why, bool shared);
/* the cp.async copies of one iteration (iv = k, valid) of nops tiles into slot si, one commit */
void pl_copies_n(Pl *p, TOp *before, Operand *ops, int nops, TValue **rings, TValue *iv, TValue *k, TValue *valid,
                 TValue *si, TOp *fop, bool prologue, int steps, Loc loc);
TValue *pl_slot(Pl *p, TOp *before, TValue *ring, TValue *i, Loc loc);
TValue *pl_as_operand(Pl *p, TOp *before, TValue *view, bool trans, Loc loc);
int64_t pl_smem_in_use(TBlock *b);
/* a splat (or broadcast, or conversion) of the constant zero */
bool pl_is_zero(const TValue *v);
/* the TMA form: operand o's tensor as a derived descriptor parameter */
TValue *pl_add_desc(Pl *p, Operand *o, const char *name);
/* n mbarriers of one arrival each, allocated at the kernel's entry */
TValue *pl_bars(Pl *p, int n, const char *name, Loc loc);
TValue *pl_bar_slot(Pl *p, TOp *before, TValue *bars, TValue *i, Loc loc);
/* if (valid) { expect the nops tiles' bytes on full[si]; one thread TMAs them into slot si } */
void pl_tma_issue(Pl *p, TOp *before, Operand *ops, int nops, TValue **rings, TValue **descs, TValue *full,
                  TValue *iv, TValue *k, TValue *valid, TValue *si, TOp *fop, bool prologue, int steps, Loc loc);
/* one iteration (it, slot cur) of a TMA ring before `before`: the CTA barrier (every warp is done with
 * slot nxt), the copies of it + D into nxt by one thread, then the wait for slot cur's tiles */
void pl_tma_step(Pl *p, TOp *before, Operand *ops, int nops, TValue **rings, TValue **descs, TValue *full, TOp *fop,
                 TValue *it, TValue *cur, TValue *nxt, int S, int D, int warps, Loc loc);
/* the store of the accumulator after fin (M x N, fin's result) staged on the B ring and written by TMA, if it fits */
void pl_tma_epilogue(Pl *p, TOp *fin, TValue *ringb, int64_t ringb_bytes, int warps, Loc loc);

/* slices: the ops of body that v is computed from, into s (false and s->why if they cannot be cloned) */
bool pl_collect(Pl *p, Slice *s, TBlock *body, TValue *v);
/* v is the same in every iteration of the loop whose body is body */
bool pl_invariant(TBlock *body, TValue *v, int depth);
/* mask m keeps a prefix of each aligned run of vec elements along dimension d */
bool pl_prefix_mask(Ctx *c, TValue *m, int d, int vec, int depth);

/* pipeline.c: the first dot directly inside a loop, and that loop */
TOp *pl_first_loop_dot(TFunc *f, TOp **fop);

#endif

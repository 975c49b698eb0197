/* jfa_int.h - what the JFA host code shares, in three files that call
 * downwards only: jfa.c (the library, plans, the forward pass, the one-call
 * wrappers) -> jfa_bwd.c (the backward pass) -> jfa_check.c (argument
 * checks, uploads, loading kernels). Not a public header. */
#ifndef JFA_INT_H
#define JFA_INT_H

#include "jfa.h"
#include "tile/jagged.h"

enum { BLOCK_M = 128 };      /* forward: query rows per tile (jfa_fwd's BM) */
/* jfa_fwd's parameter k (its TMA box rows are the KV block) and ot (O for
 * the TMA-store epilogue) */
enum { K_PARAM = 1, O_TMA_PARAM = 15 };
enum { BWD_KB = 128, BWD_QB = 64 }; /* backward: keys per work item, query rows per step (jfa_bwd's KB, QB) */
enum { V_SELF, V_CAUSAL, V_BCAST, NVARIANT_BWD, V_WINDOW = NVARIANT_BWD, V_SOFTCAP, V_SOFTCAP_CAUSAL, V_ALIBI,
       V_ALIBI_CAUSAL, V_BLOCKSPARSE, V_BLOCKSPARSE_CAUSAL, NVARIANT };
/* jfa_fwd's vparams: the variant's arguments (the variant_args of variants/NAME.tile) */
enum { JFA_VPARAMS = 8 }; /* words before ALiBi's slopes (one a head) */
/* Limits the checks enforce (jfa_check.c): rows of any tensor (offsets[B],
 * num_q, B x num_q) are TMA coordinates and int32 kernel arithmetic, with
 * room for two blocks past the end; elements of a row (heads x head_dim) are
 * int32 column indices; the backward's pre/post grids have one program row
 * per head (grid y <= 65535). With them every product of sizes below fits
 * int64 (and size_t). */
enum { JFA_MAX_ROWS = INT32_MAX - 2 * BLOCK_M, JFA_MAX_ROW_ELEMS = INT32_MAX / 2, JFA_BWD_MAX_HEADS = 65535 };

struct jfa_lib {
  char dir[1024];
  tile_module *mod[2][NVARIANT]; /* [head_dim 64 / 128][variant] */
  tile_kernel *kern[2][NVARIANT];
  tile_module *det_mod[2][NVARIANT]; /* a variant's cubin built with DET (its deterministic backward): [head_dim][variant] */
  tile_module *pair_mod[NVARIANT]; /* the CTA pair's forward (jfa_params.cta_pair): head dim 128, [variant] */
  tile_kernel *pair_kern[NVARIANT_BWD];
  tile_module *pair_cmod[2];       /* its jfa_combine (256-row slots): [self / bcast] */
  tile_kernel *pair_ckern[2];
  tile_module *cmod[2][2];       /* jfa_combine: [head_dim 64 / 128][self / bcast] */
  tile_kernel *ckern[2][2];
  tile_module *bmod[2][NVARIANT_BWD][2]; /* jfa_bwd: [head_dim][variant][deterministic] */
  tile_kernel *bkern[2][NVARIANT_BWD][2];
  tile_module *pair_bmod[NVARIANT_BWD]; /* the CTA pair's backward (jfa_bwd_sm100_pair.tile): head dim 128, [variant] */
  tile_kernel *pair_bkern[NVARIANT_BWD];
  tile_module *pmod[2][3];       /* jfa_bwd_pre (and jfa_bwd_post in the same cubin): [head_dim][self / bcast /
                                    self with 80-row query blocks] */
  tile_kernel *pre[2][3], *post[2][3];
  int sm_count;
  char arch[8]; /* the cubins' target: "sm_90a" or "sm_100a" (from the device) */
};

/* A device buffer that grows and never shrinks: a plan's update reuses it
 * (jfa_check.c). */
typedef struct jfa_buf {
  tile_devptr p;
  size_t cap;
} jfa_buf;

/* A plan's uploads (jfa_check.c). Each update queues its copies (and
 * fills) and flushes them at once: the bytes go through one of two
 * page-locked slots, copied on the caller's stream, so the host never
 * waits for the GPU (a slot is reused two updates later, after its copies
 * ran). The copies wait on the device for the plan's last run (last_use)
 * and its runs for the last update (updated), on whatever streams. A
 * buffer that must grow waits on the host for both, once: growth is
 * geometric. */
enum { JFA_STAGE_SLOTS = 2, JFA_MAX_UPLOADS = 16 };
typedef struct jfa_stage {
  struct {
    void *host;
    size_t cap;
    tile_event done;
    int pending;
  } slot[JFA_STAGE_SLOTS];
  int next;
  tile_event last_use, updated;
  int used, upd; /* recorded at least once */
  int n;
  struct {
    jfa_buf *dst;
    const void *src; /* NULL: capacity only (fill: a memset to value) */
    size_t bytes;
    int fill;
    uint32_t value;
  } up[JFA_MAX_UPLOADS];
} jfa_stage;
/* Queue a copy of bytes from src (NULL: only make room) into dst. src must
 * stay until the flush. */
void jfa_stage_copy(jfa_stage *s, jfa_buf *dst, const void *src, size_t bytes);
/* Queue dst's first bytes (a multiple of 4) set to the 32-bit value. */
void jfa_stage_fill(jfa_stage *s, jfa_buf *dst, uint32_t value, size_t bytes);
tile_status jfa_stage_flush(jfa_stage *s, tile_stream stream);
/* Around a run of the plan's kernels on stream: wait for the last update;
 * mark the buffers in use. */
tile_status jfa_stage_before_run(jfa_stage *s, tile_stream stream);
tile_status jfa_stage_after_run(jfa_stage *s, tile_stream stream);
/* Wait on the host for every copy and run (before the buffers are freed). */
tile_status jfa_stage_wait(jfa_stage *s);
void jfa_stage_free(jfa_stage *s);
void jfa_buf_free(jfa_buf *b);

struct jfa_plan {
  jfa_lib *lib;
  jfa_params p;
  tile_kernel *k;
  int64_t total;     /* rows of K/V (offsets[B]) */
  int ctas;
  int fwd_ctas;      /* CTAs a forward work item: 1, or 2 (jfa_params.cta_pair) */
  int block_n;       /* the forward kernel's KV block */
  tile_jagged_schedule sched;
  tile_jagged_split split; /* the work lists the kernel runs: sched, its tail maybe split */
  tile_kernel *combine;    /* when split.ncombine > 0 */
  jfa_stage stage;         /* the uploads */
  int32_t *off32;          /* the offsets as int32 (the source of d_offsets) */
  tile_status failed;      /* not TILE_OK: the last update failed half-way; runs refuse */
  jfa_buf d_offsets, d_work, d_cta_start, d_combine; /* int32 copies on the device */
  jfa_buf d_part_o, d_part_lse;                      /* the pieces' partial outputs */
  jfa_buf d_vparams;                                 /* JFA_VPARAMS int32: the variant's arguments */
  tile_module *own_mod;                                  /* a jfa_params.variant kernel's module */
  tile_module *own_pair_mod;                             /* and its CTA pair's forward (NAME.pair) */
  tile_module *own_det_mod;                              /* and its deterministic backward's (NAME.det) */
  int vidx;                                              /* the built-in kernels' V_* */
  char vname[48];                                        /* jfa_params.variant, or "" */
  /* backward (jfa_bwd.c), when p.passes has JFA_BWD */
  struct jfa_bwd_state *bwd;
  tile_devptr bwd_timeline; /* a TIMELINE build's stamps (jfa_bwd.tile), 0: none */
};

/* jfa_bwd.c: where a TIMELINE build of jfa_bwd (a measuring build,
 * jfa_bwd.tile) writes its stamps: ctas x (TL_ITEMS x 16 + TL_STEPS x 8) int64, zeroed by
 * the caller; 0, none (the shipped kernels write nothing). */
void jfa_plan_bwd_timeline(jfa_plan *plan, tile_devptr buf);

/* jfa_check.c */
/* The module of the plan's variant (a built-in one past NVARIANT_BWD, or
 * jfa_params.variant): the cubin holds both passes' kernels. Loaded once
 * (into the library, or the plan for the caller's own), its D and CAUSAL
 * constants checked against the plan's. */
tile_status jfa_variant_kernel(jfa_plan *plan, const char *kernel, tile_kernel **out);
int64_t jfa_offset_at(const jfa_params *p, int64_t i);
/* p's scalar fields (modes, head_dim, heads, batch, num_q and the products
 * of sizes they make), without reading the offsets. */
tile_status jfa_check_ranges(const jfa_params *p);
/* The block mask (jfa_params.block_mask) in the variant's arguments:
 * the words it adds after the JFA_VPARAMS header (0 without a mask), and
 * the packing variants/blocksparse.tile reads: word 0, the per-batch mask's
 * n (its n x n blocks; 0: per sequence); word 1, the word the masks start
 * at; words JFA_VPARAMS + b, sequence b's first word (per sequence). A
 * mask of n x n blocks is 2 n cdiv(n, 32) words: its bits a line of
 * cdiv(n, 32) words each, n rows (query block qm: bit kn % 32 of word
 * kn / 32 for KV block kn), then n columns (KV block kn: bit qm % 32 of
 * word qm / 32), so that a role reads a word every 32 blocks whichever
 * way it walks the mask. p checked. */
size_t jfa_block_mask_words(const jfa_params *p);
void jfa_block_mask_pack(const jfa_params *p, int32_t *vp);
/* The mask's fields of the scheduler's parameters (none without one). */
void jfa_block_mask_sched(const jfa_params *p, tile_jagged_params *jp);
/* jfa_check_tensor's flags: the kernels read it with TMA and take its row
 * stride as an int32 (16-byte rows, row stride < 2^31); it is indexed
 * without strides (dense: the LSE). */
enum { JFA_TMA = 1, JFA_DENSE = 2 };
/* name: what the message calls it; shape: the expected shape (rank dims,
 * each >= 0). Rank-4 tensors are [B, num_q, H, D] with rows in dimension 1. */
tile_status jfa_check_tensor(const char *name, const jfa_tensor *t, const char *dtype, int rank,
                             const int64_t *shape, int flags);
/* The forward's five tensors, each alone (jfa_check_tensors without the
 * overlap of its outputs, for the backward, which reads o and lse). */
tile_status jfa_check_fwd_shapes(const jfa_params *p, int64_t total_rows, const jfa_tensor *q, const jfa_tensor *k,
                                 const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse);
/* The outputs t[0 .. nout-1] share no byte with any other of the n
 * (checked) tensors. */
tile_status jfa_check_disjoint(const jfa_tensor *const *t, const char *const *names, int n, int nout);
/* Kernel `name` of DIR/NAME.dD.VARIANT.ARCH.cubin (ARCH: lib->arch), loaded into *mod, *kern on first use. */
tile_status jfa_load_kernel(const jfa_lib *lib, const char *name, int head_dim, const char *variant,
                            tile_module **mod, tile_kernel **kern);

/* jfa_bwd.c: the backward's work list, host code alone (no GPU): the
 * schedule (KV blocks over `ctas` CTAs) and 8 int32 per item, {b, h, KV
 * block, first Q block, end Q block, rank, counter of Q block 0, workspace
 * row of Q block 0}; deterministic mode: each CTA's items in ascending rank.
 * pair: the CTA pair's (jfa_bwd_sm100_pair.tile): items of 256 keys, query
 * blocks of 128 rows, a work list per pair of CTAs (ctas / 2 of them); the
 * workspace row stays in rows of 64.
 * dyn: the list of a DYN kernel (jfa_bwd.tile), which its CTAs take item by
 * item from a counter: one list, sequences by their heaviest item, each one's
 * items head by head, KV blocks ascending (descending with own: dyn_order); sched.cta_start is
 * then only read for its total. Not with pair or deterministic mode.
 * Self-attention: qbmap, (sequence, block) of each of the nqb query blocks. */
typedef struct jfa_bwd_items {
  int qb;                       /* in: the kernel's query rows per step (jfa_bwd's QB: 64 or 80; 0: BWD_QB) */
  int group;                    /* in: jfa_bwd's GROUP (DYN, self-attention, not deterministic): a head's KV blocks
                                   of a sequence of at most this many are one item (field 5: their count; 0 in
                                   the others), run in order by one CTA, which writes their dQ blocks first and
                                   so needs no zeros (jfa_bwd_pre skips those blocks); 0: none */
  int own;                      /* in: jfa_bwd's OWN (DYN, self-attention): each dQ block is written first by the
                                   last KV block that adds into it, which the others wait for, so each head's
                                   KV blocks (those not grouped) are listed last first */
  int32_t *cta_start;           /* grouped: sched.cta_start with the list's new length last, else NULL */
  int64_t ungrouped;            /* out: the items that are not a group (all of them when nothing was grouped) */
  tile_jagged_schedule sched;
  int32_t *work;
  int32_t *qbmap;
  int64_t nitems, nqb, ws_rows;
} jfa_bwd_items;
/* Floats in a workspace row of LSE or Delta for query blocks of qb rows
 * (a TMA box's columns are a power of two). */
static inline int64_t jfa_bwd_lw(int qb) { return qb > 64 ? 128 : 64; }
/* A persistent pair kernel's CTAs (the Blackwell CTA pair's, forward and
 * backward): ctas, or twice the pairs the device holds at once when that is
 * fewer (held: tile_kernel_max_clusters; 0 when unknown). A pair needs two
 * SMs of one GPC, so a device may hold fewer than half its SMs in pairs; a
 * pair more would run its list after the others, and the deterministic
 * kernel's items, which wait for each other across CTAs, could wait
 * forever. */
static inline int jfa_pair_ctas(int ctas, int held) { return held > 0 && held < ctas / 2 ? 2 * held : ctas; }
/* Floats of the f32 dQ accumulator: [q_rows, heads x d], or by query block
 * (qb x d floats a block, the backward's dQ stage as it lies: 80-row blocks
 * always, 64-row ones with the kernel's DQ_BULK). blocks: self-attention,
 * the workspace rows (a block at its row); broadcast-Q, heads x the query
 * blocks of num_q (every sequence adds into the same). */
static inline int64_t jfa_bwd_acc_floats(int64_t q_rows, int64_t blocks, int64_t heads, int64_t d, int qb,
                                         int by_block) {
  return qb > 64 || by_block ? d * blocks * qb : q_rows * heads * d;
}
tile_status jfa_bwd_items_build(const jfa_params *p, int ctas, int pair, int dyn, jfa_bwd_items *out);
/* The same into *it from an earlier build (or zeroed), reusing its arrays;
 * it->sched.reused = 1 when the lengths were those of the last build (the
 * items are then unchanged). On failure *it is freed and zeroed. */
tile_status jfa_bwd_items_rebuild(const jfa_params *p, int ctas, int pair, int dyn, jfa_bwd_items *it);
void jfa_bwd_items_free(jfa_bwd_items *it);

/* jfa_bwd.c: the backward half of a plan (work list, workspace), made by
 * jfa_plan_create when p->passes asks for it (kernels, state); filled for
 * the plan's offsets (plan->p.cu_seqlens, batch and total) by
 * jfa_bwd_plan_fill, which queues its uploads on plan->stage; freed with
 * the plan. *same is 1 when the lengths were the last fill's. */
tile_status jfa_bwd_plan_create(jfa_plan *plan);
tile_status jfa_bwd_plan_fill(jfa_plan *plan, int *same);
void jfa_bwd_plan_destroy(jfa_plan *plan);
void jfa_bwd_lib_close(jfa_lib *lib);

#endif

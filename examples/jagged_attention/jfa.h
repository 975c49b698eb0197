/* jfa.h - the host API of Jagged Flash Attention (forward): one call on
 * device pointers, shaped like FlashAttention's varlen interface
 * (q, k, v, cu_seqlens, max_seqlen, causal, softmax_scale).
 *
 *   jfa_lib *lib;
 *   jfa_lib_open("build/examples", &lib);          // the tilec-built cubins
 *   jfa_varlen_fwd(lib, &q, &k, &v, &o, &lse, cu_seqlens, batch,
 *                  max_seqlen, causal, softmax_scale, stream);
 *
 * Every argument is checked before anything is read, allocated or launched,
 * with overflow-safe arithmetic: NULL pointers; the batch (0 .. 10^7) before
 * any offset is read; heads, head_dim and num_q in range (the backward: at
 * most 65535 heads); offsets starting at 0, non-decreasing and ending below
 * 2^31 - 256 rows; dtypes and shapes (totals that agree with the offsets);
 * strides positive, heads and head dims contiguous, rows at least a row and
 * 16 bytes apart (TMA) with a row stride below 2^31 elements, the LSE dense;
 * each tensor's extent (shape x stride x element size) without overflow and
 * below 2^64 from its 16-byte-aligned base; every output sharing no byte with
 * any other tensor. Bad input returns TILE_ERR_INVALID with a message in
 * tile_last_error() and launches nothing.
 *
 * The kernel is persistent: the work, (sequence, head, 128-row query block)
 * tiles, is scheduled on the host (tile/jagged.h) from the offsets in host
 * memory: a caller whose cu_seqlens lives on the GPU passes the lengths it
 * packed (a data loader has them), not a device-to-host copy that would
 * wait for the GPU. A training loop builds a jfa_plan once and, for each
 * new batch, jfa_plan_update (schedule rebuilt, uploaded on the stream,
 * no host wait) then jfa_plan_forward / jfa_plan_backward; the one-call
 * jfa_varlen_fwd / jfa_varlen_bwd plan, run, and wait for the stream.
 */
#ifndef JFA_H
#define JFA_H

#include <stddef.h>
#include <stdint.h>

#include "tile/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A strided device tensor (element strides, like torch.Tensor.stride()). */
typedef struct jfa_tensor {
  tile_devptr data;
  const char *dtype; /* "bf16", "f32", ... */
  int rank;
  int64_t shape[4];
  int64_t stride[4];
} jfa_tensor;

/* The kernels, from cubins built by tilec
 * (DIR/jfa_fwd.d{64,128}.{self,causal,bcast}.sm_90a.cubin), each loaded on
 * first use; on a Blackwell (compute capability 10.x) the sm_100a ones
 * (jfa_fwd_sm100.tile, built as DIR/jfa_fwd.d{64,128}.{self,causal,bcast}.
 * sm_100a.cubin, with jfa_combine's): the forward pass only. */
typedef struct jfa_lib jfa_lib;
tile_status jfa_lib_open(const char *cubin_dir, jfa_lib **out);
void jfa_lib_close(jfa_lib *lib);
/* The target whose cubins the library loads, from the device: "sm_90a"
 * (compute capability 9.x) or "sm_100a" (10.x; the forward pass only). */
const char *jfa_lib_arch(const jfa_lib *lib);

/* The shape of one forward problem. */
typedef struct jfa_params {
  int64_t batch;             /* B >= 0 (0: nothing to do) */
  const void *cu_seqlens;    /* host, B+1 entries: the jagged offsets of K/V (and Q in self-attention) */
  int cu_seqlens_64bit;      /* 0: int32_t, else int64_t */
  int heads, head_dim;       /* head_dim 64 or 128 */
  int causal;                /* self-attention only */
  int64_t num_q;             /* > 0: broadcast-Q with a dense Q of num_q rows; 0: self-attention */
  float softmax_scale;       /* 0: 1/sqrt(head_dim) */
  int no_zigzag;             /* 1: natural tile order, round robin (to measure the scheduler) */
  int no_split;              /* 1: never split the tiles of the last partial pass (tile_jagged_split_tail) */
  int num_ctas;              /* 0: one per SM */
  int passes;                /* what the plan runs: JFA_FWD, JFA_BWD or both (0: JFA_FWD) */
  int deterministic;         /* backward: dQ added in a fixed order, so dq is bitwise the same run to run */
  /* Variants (self-attention, forward; one at a time): window: query i
   * sees keys i - window_left .. i + window_right of its sequence (-1: no
   * bound on that side; window_right = 0 is a causal window; not with
   * causal); softcap > 0: scores s -> softcap * tanh(s / softcap) (with or
   * without causal). */
  int window;
  int window_left, window_right;
  float softcap;
  const float *alibi_slopes; /* host, `heads` slopes: scores s - slope_h |i - j| (ALiBi), causal or not; NULL: none */
  /* A variant of your own (docs/tutorial-variant.md): the forward kernel
   * jfa_fwd.d<head_dim>.<variant>.sm_90a.cubin of the library's folder,
   * built from a file that imports jfa_fwd.tile and overrides its hooks;
   * variant: [a-z0-9_], 1 to 40 characters, NULL: the built-in kernels.
   * Its CAUSAL constant must match `causal` (checked), and it reads
   * variant_args[0 .. nvariant_args) as its kernel's vparams. Self-attention,
   * forward; not with window, softcap or alibi_slopes. */
  const char *variant;
  const int32_t *variant_args; /* host */
  int nvariant_args;           /* 0 .. JFA_MAX_VARIANT_ARGS */
  /* Block-sparse attention (variants/blocksparse.tile; self-attention,
   * forward and backward, with or without causal, which it ANDs with; not
   * with window, softcap, alibi_slopes or a variant of your own; not in
   * deterministic mode). block_mask (host memory, read by jfa_plan_create
   * only) holds one byte per pair of a query block of JFA_MASK_BLOCK rows
   * and a KV block of JFA_MASK_BLOCK keys of a sequence: 1, the pair is
   * visited; 0, skipped (its K and V never loaded, no work scheduled).
   * Visited blocks are masked only where the sequence ends or the causal
   * diagonal runs. A query row that sees no key gets O = 0, LSE = -inf and
   * zero gradients. The layout, block_mask_mode:
   *   JFA_MASK_PER_BATCH: one n x n mask for every sequence, row-major (row
   *     qm: query block qm; column kn: KV block kn), n >= every sequence's
   *     cdiv(L, JFA_MASK_BLOCK) (a sequence uses its top-left corner);
   *     block_mask_bytes = n * n;
   *   JFA_MASK_PER_SEQUENCE: sequence b's nb x nb mask, nb = cdiv(L_b,
   *     JFA_MASK_BLOCK), row-major, right after sequence b-1's (an empty
   *     sequence has none); block_mask_bytes = the sum of nb^2.
   * block_mask_bytes is checked against the batch, each byte must be 0 or
   * 1, and at most JFA_MAX_MASK_BYTES. NULL: no mask (mode and bytes 0). */
  const uint8_t *block_mask;
  int block_mask_mode;         /* JFA_MASK_PER_BATCH or JFA_MASK_PER_SEQUENCE */
  int64_t block_mask_bytes;
  /* Blackwell (sm_100a), the forward: 1 runs it on CTA pairs (clusters of
   * two CTAs sharing each MMA, tcgen05.mma.cta_group::2): a pair takes 256
   * query rows and each CTA loads half of every K and V block (the
   * jfa_fwd.d128.VARIANT.pair.sm_100a cubins, a variant file's NAME.pair).
   * Head dim 128; self-attention (causal or not), broadcast-Q and the
   * variants above but the block mask; num_ctas (or the SMs) counts CTAs,
   * two a pair. 0: a CTA a tile. */
  int cta_pair;
} jfa_params;

enum { JFA_MAX_VARIANT_ARGS = 4096, JFA_WINDOW_MAX = 1 << 30 /* window extents and windowed sequences stay below */ };
enum { JFA_MASK_PER_BATCH = 1, JFA_MASK_PER_SEQUENCE = 2, JFA_MASK_BLOCK = 128,
       JFA_MAX_MASK_BYTES = (1 << 30) /* indexed in 32 bits by the kernels */ };

enum { JFA_FWD = 1, JFA_BWD = 2 };

/* The checks jfa_plan_create and jfa_plan_forward run first, on their own
 * (no GPU needed): TILE_OK, or TILE_ERR_INVALID with the message set.
 * total_rows receives cu_seqlens[batch]. The scalars are checked before the
 * offsets are read (cu_seqlens must have batch + 1 entries). */
tile_status jfa_check_params(const jfa_params *p, int64_t *total_rows);

typedef struct jfa_plan jfa_plan;
/* Load the kernels, build the schedules for p's offsets and upload them;
 * the uploads are waited for, so the plan runs at once on any stream. */
tile_status jfa_plan_create(jfa_lib *lib, const jfa_params *p, jfa_plan **out);
/* The same plan for a new batch (a training loop: new lengths every step):
 * cu_seqlens (host, batch + 1 entries, int64_t when cu_seqlens_64bit, else
 * int32_t) replaces the offsets the plan was made or last updated with;
 * every other field of its jfa_params stays. Checked as jfa_plan_create
 * checks them: bad input returns TILE_ERR_INVALID and leaves the plan as
 * it was. The schedules are rebuilt into the plan's arrays (the same
 * lengths as last time cost a comparison, and nothing is uploaded) and
 * copied to the device on `stream` through page-locked memory: the host
 * does not wait for the GPU, and the plan's runs, on any stream, wait on
 * the device for the copies; the copies wait for the plan's last run.
 * Device buffers grow and never shrink; a batch larger than any before it
 * makes the host wait once for the plan's last run (and its memory is
 * reallocated, 1.5x at a time). Other failures (out of memory) leave the
 * plan refusing to run until an update succeeds. A block-sparse plan
 * (block_mask) is refused: its mask is laid out for its own batch. */
tile_status jfa_plan_update(jfa_plan *plan, const void *cu_seqlens, int cu_seqlens_64bit, int64_t batch,
                            tile_stream stream);
/* Waits for the plan's uploads and runs, then frees it. */
void jfa_plan_destroy(jfa_plan *plan);
/* Tiles, the largest per-CTA KV work (pieces of split tiles counted with
 * their overhead) and the total, for reports (all 0 for a NULL plan). */
void jfa_plan_stats(const jfa_plan *plan, int64_t *ntiles, int64_t *max_cta_cost, int64_t *total_cost, int *ctas);
/* Split tiles and their pieces (0, 0: nothing split; the forward pass is
 * then one kernel, else jfa_fwd and jfa_combine). */
void jfa_plan_split_stats(const jfa_plan *plan, int64_t *split_tiles, int64_t *pieces);

/* A plan whose schedule splits tiles (jfa_plan_split_stats) owns the
 * scratch its pieces write and jfa_combine reads: run one forward pass of
 * such a plan at a time (one plan per stream). */
/* Self-attention: q, k, v, o [total, H, D] bf16; lse [H, total] f32.
 * Broadcast-Q: q [num_q, H, D]; k, v [total, H, D]; o [B, num_q, H, D];
 * lse [B, H, num_q]. Rows may be strided (a multiple of 8 elements, for
 * TMA); heads and head dims are contiguous. */
tile_status jfa_plan_forward(jfa_plan *plan, const jfa_tensor *q, const jfa_tensor *k, const jfa_tensor *v,
                             const jfa_tensor *o, const jfa_tensor *lse, tile_stream stream);

/* The forward's tensors for p and total_rows (0 .. 2^31 - 257; when
 * p->cu_seqlens is set, it must be cu_seqlens[batch]); o and lse share no
 * byte with each other or with q, k, v (which may share memory). */
tile_status jfa_check_tensors(const jfa_params *p, int64_t total_rows, const jfa_tensor *q, const jfa_tensor *k,
                              const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse);

/* The one call (FlashAttention varlen's shape): check every argument (the
 * tensors too) before the plan, plan, run, free the plan. max_seqlen (0:
 * not checked; < 0 is an error) must be >= every sequence's length. */
tile_status jfa_varlen_fwd(jfa_lib *lib, const jfa_tensor *q, const jfa_tensor *k, const jfa_tensor *v,
                           const jfa_tensor *o, const jfa_tensor *lse, const int32_t *cu_seqlens, int64_t batch,
                           int64_t max_seqlen, int causal, float softmax_scale, tile_stream stream);

/* ---- the backward pass ------------------------------------------------------
 *
 * Given dO, the forward's inputs and outputs (q, k, v, o, lse) and the same
 * offsets, computes dq, dk, dv (bf16; dq accumulated in f32). A plan made
 * with passes & JFA_BWD owns the backward's work list (32 bytes an item:
 * a KV block of 128 keys and head) and its workspace (jfa_bwd_workspace_bytes
 * says how much: the f32 dQ accumulator, the LSE in log2 units and Delta =
 * rowsum(dO * O), and in deterministic mode one counter per (head, query
 * block of 64 or 80 rows), otherwise the counter by which the CTAs take their work
 * items); run one backward pass of a plan at a time (one plan per
 * stream). deterministic = 1 adds each dQ block's contributions in a fixed
 * order, so dq is bitwise the same from run to run (the KV blocks of one
 * sequence in order; broadcast-Q: sequence by sequence); its CTAs wait for
 * each other, so num_ctas may not exceed the SMs, and nothing else may hold
 * SMs while it runs.
 *
 * Self-attention: dout, dq like q [total, H, D]; dk, dv like k.
 * Broadcast-Q: dout like o [B, num_q, H, D]; dq like q [num_q, H, D]; dk,
 * dv like k [total, H, D]. Rows may be strided (a multiple of 8 elements);
 * heads and head dims are contiguous; an output shares no byte with any
 * other tensor. */
tile_status jfa_plan_backward(jfa_plan *plan, const jfa_tensor *dout, const jfa_tensor *q, const jfa_tensor *k,
                              const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse, const jfa_tensor *dq,
                              const jfa_tensor *dk, const jfa_tensor *dv, tile_stream stream);
tile_status jfa_check_bwd_tensors(const jfa_params *p, int64_t total_rows, const jfa_tensor *dout,
                                  const jfa_tensor *q, const jfa_tensor *k, const jfa_tensor *v, const jfa_tensor *o,
                                  const jfa_tensor *lse, const jfa_tensor *dq, const jfa_tensor *dk,
                                  const jfa_tensor *dv);
/* The workspace a plan for p allocates for the backward pass, in bytes: at
 * most this (the largest of the dQ accumulator's layouts the loaded kernel
 * may use: row-major, by 64-row block, and in self-attention at head dim
 * 128 by 80-row block). */
tile_status jfa_bwd_workspace_bytes(const jfa_params *p, size_t *bytes);
/* Backward work items (KV blocks of 128 keys), the largest per-CTA work and
 * the total (in the kernel's query blocks of 64 or 80 rows), for reports. */
void jfa_plan_bwd_stats(const jfa_plan *plan, int64_t *nitems, int64_t *max_cta_cost, int64_t *total_cost, int *ctas);

/* The one call, shaped like FlashAttention's varlen backward
 * (dout, q, k, v, out, lse, cu_seqlens, max_seqlen, causal, softmax_scale,
 * deterministic): plan, run, free the plan. */
tile_status jfa_varlen_bwd(jfa_lib *lib, const jfa_tensor *dout, const jfa_tensor *q, const jfa_tensor *k,
                           const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse, const jfa_tensor *dq,
                           const jfa_tensor *dk, const jfa_tensor *dv, const int32_t *cu_seqlens, int64_t batch,
                           int64_t max_seqlen, int causal, float softmax_scale, int deterministic, tile_stream stream);

#ifdef __cplusplus
}
#endif
#endif

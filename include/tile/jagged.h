/* jagged.h - host-side scheduling of jagged attention tiles over a
 * persistent kernel's CTAs (Jagged Flash Attention, technique 3).
 *
 * A jagged batch packs B sequences back to back; offsets[b]..offsets[b+1]
 * are the rows of sequence b.  The work of the attention forward pass is the
 * set of tiles (b, h, m): sequence b, head h, query block m (BLOCK_M query
 * rows).  The scheduler enumerates them, gives each a cost (the number of
 * BLOCK_N-wide KV blocks it visits, causal-aware), sorts them by cost,
 * descending, and deals them to `num_ctas` per-CTA work lists in zigzag
 * (boustrophedon) order, so every CTA of the persistent kernel gets about the
 * same amount of KV work.  Causal batches are dealt sequence-major instead
 * (sequences by their heaviest tile, each one's tiles together, heaviest
 * first, each to the least-loaded CTA) so a sequence's K/V is shared in L2;
 * sliding-window batches too.  docs/runtime.md ("Jagged tile scheduling") has the
 * cost model and the layout the kernel reads.
 *
 * Pure host code: no driver, no GPU.  Errors are TILE_ERR_INVALID (or
 * TILE_ERR_NOMEM) with a message in tile_last_error().
 *
 * Host memory only, and no stall: the builder reads the batch's lengths from
 * host memory (offsets or lengths).  A caller whose cu_seqlens lives only in
 * device memory (a CUDA tensor) would have to copy it to the host first,
 * a device-to-host copy that waits for the stream: that path stalls the GPU
 * before every step.  The path that does not is to pass the host-side
 * lengths the caller already has (a data loader knows the lengths it packed
 * before it uploads cu_seqlens): tile_jagged_params.lengths takes them as
 * they are, no prefix sum needed.  The cost (docs/perf.md, 2026-12-02,
 * bench/jagged_sched.c): about 0.4 to 3 ns a tile on a 2-core development
 * machine, under 5 % of the kernel's time on every benchmark suite; the
 * same lengths again cost a comparison (tile_jagged_schedule_rebuild).
 */
#ifndef TILE_JAGGED_H
#define TILE_JAGGED_H

#include <stdint.h>

#include "tile/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TILE_JAGGED_MAX_BATCH 10000000          /* B <= 10^7 */
#define TILE_JAGGED_MAX_TILES (INT32_MAX / 4)   /* 4 int32 per tile, indexed in int32 */
#define TILE_JAGGED_MAX_CTAS (1 << 20)
#define TILE_JAGGED_MAX_ITEMS (INT32_MAX / 8)   /* split work lists: 8 int32 per item, indexed in int32 */

typedef struct tile_jagged_params {
  int64_t batch;         /* B, 1 .. TILE_JAGGED_MAX_BATCH */
  const void *offsets;   /* B+1 entries: offsets[0] = 0, non-decreasing */
  int offsets_are_64bit; /* 0: int32_t offsets, else int64_t */
  int heads;             /* >= 1 */
  int block_m, block_n;  /* query / KV block rows: multiples of 16, 16 .. 256 */
  int causal;            /* self-attention only: query i sees keys j <= i */
  int64_t num_q;         /* broadcast-Q: rows of the dense Q shared by every sequence; 0 = self-attention */
  int num_ctas;          /* work lists to build (one per CTA of the persistent grid), 1 .. TILE_JAGGED_MAX_CTAS */
  int zigzag;            /* 1: sort by cost, descending (ties in (b, h, m) order), deal in zigzag
                            (causal: sequence-major, least-loaded CTA; docs/runtime.md);
                            0: natural (b, h, m) order, round robin (the baseline) */
  int backward;          /* 1: the tiles of attention's backward pass instead: (b, h, n), KV block n of
                            block_n keys, each costing the query blocks of block_m rows it meets
                            (causal: those at or after its first key); see the cost model below */
  const void *lengths;   /* instead of offsets (which must then be NULL): B sequence lengths, >= 0, in
                            host memory, int64_t when offsets_are_64bit else int32_t */
  int window;            /* 1: a sliding window (self-attention, not with causal; forward or backward):
                            query i sees keys i - window_left .. i + window_right of its sequence; 0: none
                            (the two bounds are then ignored) */
  int window_left, window_right; /* >= 0, or -1: no bound on that side ((-1, 0) is causal, (-1, -1)
                            is no mask) */
  /* Block-sparse attention (self-attention, forward or backward, causal or not, not with a window):
     NULL, none; else one byte per pair of a query block and a KV block of mask_block positions each,
     in host memory: non-zero, the pair is visited; 0, skipped (and costs nothing).  Its layout is
     block_mask_mode's (below); block_mask_bytes is its size, checked against the batch.  A forward
     tile then costs the KV blocks it visits, a backward tile the query blocks that visit it (a tile
     that visits none costs 0, and is still dealt: it writes its zeros). */
  const uint8_t *block_mask;
  int block_mask_mode;      /* TILE_JAGGED_MASK_PER_BATCH or TILE_JAGGED_MASK_PER_SEQUENCE */
  int64_t block_mask_row;   /* per batch: the blocks of a row, at least every sequence's cdiv(L, mask_block) */
  int64_t block_mask_bytes; /* the mask's size in bytes */
  int mask_block;           /* positions of a mask block: forward, block_m = block_n = mask_block;
                               backward, block_n = mask_block, a multiple of block_m */
} tile_jagged_params;

/* tile_jagged_params.block_mask_mode.  Per batch: one mask of
 * block_mask_row x block_mask_row bytes for every sequence, row-major (row
 * qm: query block qm; column kn: KV block kn; a sequence of nb blocks uses
 * its top-left nb x nb).  Per sequence: sequence b's nb_b x nb_b bytes,
 * nb_b = cdiv(L_b, mask_block), row-major, right after sequence b-1's
 * (empty sequences take none). */
enum { TILE_JAGGED_MASK_PER_BATCH = 1, TILE_JAGGED_MASK_PER_SEQUENCE = 2 };

/* Work lists, all CTAs in one array: CTA c runs tiles cta_start[c] ..
 * cta_start[c+1]-1, in that order; tile i is work[4*i .. 4*i+3] =
 * {b, h, m, cost}.  Both arrays are malloc'ed (never NULL after a successful
 * build, even with no tiles); copy 16 * ntiles and 4 * (num_ctas + 1) bytes
 * to the device. */
typedef struct tile_jagged_schedule {
  int32_t *work;        /* 4 x ntiles: {b, h, m, cost} */
  int32_t *cta_start;   /* num_ctas + 1 prefix offsets into work, in tiles */
  int64_t ntiles;       /* tiles in all lists */
  int64_t total_cost;   /* sum of all tile costs (KV blocks) */
  int64_t max_cta_cost; /* the largest per-CTA sum of costs: the makespan */
  int64_t max_tile_cost; /* the largest cost of one tile */
  int num_ctas;
  int64_t work_cap, cta_cap; /* capacity of work (tiles) and cta_start (entries), kept by rebuild */
  int reused;           /* 1: the last rebuild was asked for the schedule it already held and kept it */
  void *priv;           /* the builder's: a copy of the lengths it built from, and its scratch memory */
} tile_jagged_schedule;

/* Validate p (and its offsets), enumerate, cost, sort and deal the tiles.
 * On failure *out is zeroed (tile_jagged_schedule_free on it is a no-op).
 *
 * Cost of tile (b, h, m), in KV blocks of block_n rows:
 *   self-attention, L = offsets[b+1] - offsets[b], query rows
 *   [m*block_m, e), e = min((m+1)*block_m, L):
 *     non-causal: cdiv(L, block_n);  causal: (e-1)/block_n + 1
 *   broadcast-Q (num_q > 0): cdiv(num_q, block_m) tiles per (b, h), each of
 *   cost cdiv(L, block_n).
 *   sliding window (window = 1, left / right -1 for no bound): the KV blocks
 *     [first, end) holding a key some row of the tile sees,
 *     first = left < 0 ? 0 : max(m*block_m - left, 0) / block_n,
 *     end = min(right < 0 ? L-1 : (m+1)*block_m - 1 + right, L-1) / block_n + 1,
 *     cost end - first (>= 1): costs vary with m, so window schedules are
 *     dealt like causal ones (sequence-major, least-loaded CTA).
 * Empty sequences: in self-attention they have no rows, hence no tiles.  In
 * broadcast-Q mode an empty KV sequence still has num_q output rows, so its
 * tiles are emitted with cost 0 (the kernel must write O = 0 and LSE = -inf
 * for them); they sort last.
 *
 * Backward (p->backward): tile (b, h, n) is KV block n (keys [n*block_n,
 * min((n+1)*block_n, L))) of sequence b, cdiv(L, block_n) tiles per (b, h);
 * its cost is the query blocks of block_m rows it meets:
 *   self-attention, non-causal: cdiv(L, block_m);
 *   causal: cdiv(L, block_m) - (n*block_n)/block_m (queries before the
 *     block's first key see none of it);
 *   broadcast-Q: cdiv(num_q, block_m);
 *   sliding window: the query blocks [first, end) holding a row that sees
 *     a key of the block (rows q with k_lo - right <= q <= k_hi - 1 + left,
 *     k_lo = n*block_n, k_hi = (n+1)*block_n),
 *     first = right < 0 ? 0 : max(k_lo - right, 0) / block_m,
 *     end = min(left < 0 ? L-1 : k_hi - 1 + left, L-1) / block_m + 1,
 *     cost end - first (>= 1), dealt like causal's backward (sequence-major,
 *     KV blocks in ascending order, least-loaded CTA): (-1, 0) is causal's
 *     schedule, byte for byte.  A sequence's query blocks must fit int32.
 * Empty sequences have no tiles.  The work list holds {b, h, n, cost}.
 *
 * Block-sparse (p->block_mask): the costs above count only the blocks the
 * mask visits (forward: KV blocks j of the range above with mask[m][j];
 * backward: query blocks i of its range with mask[i * block_m /
 * mask_block][n]), so they vary with m; dealt like causal schedules
 * (sequence-major, least-loaded CTA).  Never reused by a rebuild (the
 * mask is not part of what it compares). */
tile_status tile_jagged_schedule_build(const tile_jagged_params *p, tile_jagged_schedule *out);
/* The same into a schedule from an earlier build or rebuild (or a zeroed
 * one), reusing its arrays when they are large enough: a training loop that
 * schedules every batch then pays no page faults for the work list, which
 * dominate a fresh build of millions of tiles.  When p and its lengths are
 * those the schedule was last built from (every field of p equal but the
 * pointers, and the same bytes behind offsets or lengths: a copy is kept),
 * it returns at once with s->reused = 1 and *s untouched: the same batch
 * shape every step (inference, fixed-length packing) is scheduled once, and
 * the caller can skip the split and the upload too.  The arrays must not have
 * been modified since.  Otherwise s->reused = 0.  The schedule keeps its
 * scratch memory (about 16 bytes a sequence and 4 a tile) until freed.  On
 * failure *s is freed and zeroed. */
tile_status tile_jagged_schedule_rebuild(const tile_jagged_params *p, tile_jagged_schedule *s);
/* Free the arrays and zero *s.  NULL and zeroed schedules are fine. */
void tile_jagged_schedule_free(tile_jagged_schedule *s);

/* Tail splitting (split-KV for the last pass).  A persistent grid whose
 * tiles are all alike (a dense batch: 4096 tiles on 132 CTAs) ends with a
 * partial pass: 4 CTAs run a 32nd tile while 128 idle, 3% of the run.  The
 * split takes the tiles of that last partial pass out of their lists, cuts
 * each into pieces of consecutive KV blocks, and gives each piece to the
 * least-loaded CTA.  A piece writes an fp32 partial output and its
 * log-sum-exp to a partial slot ("part"); a second kernel combines the parts
 * of each split tile.  Applied to zigzag, non-causal schedules only, and only
 * when the estimated makespan (counting piece_overhead KV blocks for every
 * piece) drops by at least 1%; otherwise the result holds the schedule's own
 * lists, unsplit, in the format below.  Window schedules (least-loaded, no
 * partial pass) have as their tail the last tile of every CTA whose load is
 * above the ideal ceil(total_cost / num_ctas); those are cut and dealt the
 * same way.  Causal schedules are not split.
 *
 * Work items are 8 int32: {b, h, m, kv_begin, kv_end, part, 0, 0}: KV blocks
 * kv_begin .. kv_end-1 of tile (b, h, m); part -1 for a whole tile (kv_begin
 * 0, kv_end its cost; a window tile: kv_begin its first block, kv_end =
 * kv_begin + cost), else the partial slot 0 .. nparts-1.  Combine entries
 * are 8 int32: {b, h, m, first_part, count, 0, 0, 0}: the tile's parts are
 * slots first_part .. first_part+count-1, in KV order.  Block-sparse
 * schedules (not causal) are split like window ones, their tail cut by the
 * blocks the mask visits: a whole tile's item is {b, h, m, 0, end, -1, 0,
 * 0}, end its range's end without the mask (the kernel skips the blocks
 * the mask does not visit), a piece's KV range runs from its first visited
 * block to the next piece's. */
typedef struct tile_jagged_split_params {
  int min_piece;      /* fewest KV blocks in a piece, >= 1 */
  int piece_overhead; /* the cost of a piece's start and end, in KV blocks, >= 0 */
  int max_parts;      /* the most partial slots (the caller's buffer), >= 0; 0 = no split */
} tile_jagged_split_params;

typedef struct tile_jagged_split {
  int32_t *work;        /* 8 x nitems */
  int32_t *cta_start;   /* num_ctas + 1 prefix offsets into work, in items */
  int32_t *combine;     /* 8 x ncombine */
  int64_t nitems, nparts, ncombine;
  int64_t max_cta_cost; /* the makespan in KV blocks, pieces counted with their overhead */
  int num_ctas;
} tile_jagged_split;

/* Split the tail of s, built from p (s must come from
 * tile_jagged_schedule_build/rebuild with these params).  sp == NULL: no
 * split (the lists converted).  On failure *out is zeroed. */
tile_status tile_jagged_split_tail(const tile_jagged_params *p, const tile_jagged_schedule *s,
                                   const tile_jagged_split_params *sp, tile_jagged_split *out);
void tile_jagged_split_free(tile_jagged_split *out);

/* Check a jagged offsets array of batch+1 entries (int64_t when is64, else
 * int32_t): offsets[0] = 0, non-decreasing, and offsets[batch] = total_rows
 * (not checked when total_rows < 0).  The message names the first bad index
 * and its values. */
tile_status tile_jagged_check_offsets(const void *offsets, int64_t batch, int is64, int64_t total_rows);

#ifdef __cplusplus
}
#endif
#endif

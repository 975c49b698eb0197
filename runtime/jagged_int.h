/* jagged_int.h - what the jagged scheduler's two files share: the cost
 * model (static inline: the dealing calls it per tile) and step 1 of the
 * schedule, in jagged_count.c (jc_): the lengths read and checked, then
 * per sequence its tile count and heaviest tile.  jagged.c (the sorting,
 * the dealing, the schedule's memory, tail splitting) calls jagged_count.c,
 * never the other way round.
 */
#ifndef TILE_RT_JAGGED_INT_H
#define TILE_RT_JAGGED_INT_H

#include <stdint.h>

#include "rt.h"
#include "tile/jagged.h"

/* ---- the cost model ---- */

/* x / d for a block size d (a multiple of 16 up to 256) and 0 <= x < 2^63
 * + 2^8, without a division: d = odd * 2^s, x / d = (x >> s) / odd = the
 * high half of (x >> s) * m, m = floor(2^64 / odd) + 1, exact while
 * (x >> s) * (odd - 2^64 mod odd) < 2^64 (here (x >> s) < 2^60 and odd <=
 * 15).  odd = 1: (x >> (s - 1)) * 2^63, the same shift. */
typedef struct bdiv {
  uint64_t m, d;
  int s;
} bdiv;

static inline bdiv bdiv_of(int d) {
  int s = __builtin_ctz((unsigned)d);
  uint64_t odd = (uint64_t)d >> s;
  bdiv r = {odd == 1 ? (uint64_t)1 << 63 : UINT64_MAX / odd + 1, (uint64_t)d, odd == 1 ? s - 1 : s};
  return r;
}

static inline int64_t bd(bdiv d, int64_t x) {
  __extension__ typedef unsigned __int128 u128;
  return (int64_t)(((u128)((uint64_t)x >> d.s) * d.m) >> 64);
}

/* cdiv(x, d), 0 <= x < 2^63 */
static inline int64_t bcdiv(bdiv d, int64_t x) {
  __extension__ typedef unsigned __int128 u128;
  return (int64_t)(((u128)(((uint64_t)x + d.d - 1) >> d.s) * d.m) >> 64);
}

typedef struct jctx {
  bdiv dm, dn; /* division by block_m, block_n */
  int64_t bm, bn;
  int causal;
  int64_t nqb; /* broadcast-Q: query blocks per (b, h); 0 in self-attention */
  int bwd;     /* backward tiles: KV blocks, costed by the query blocks they meet */
  int win;     /* a sliding window (self-attention): query q sees keys q - wl .. q + wr */
  int64_t wl, wr; /* its bounds, -1: none */
  const int32_t *mc;   /* block-sparse: every tile's cost, sequence b's from mbase[b] on; NULL: none */
  const int64_t *mbase;
} jctx;

/* A window's KV blocks for query block m of a sequence of L > m * bm rows:
 * [win_first, win_end), those holding a key some row of rows [m*bm,
 * (m+1)*bm) sees (variants/window.tile's kv_blocks; (m+1)*bm is not clipped
 * to L there either, and need not be: the last key is).  Not a window: the
 * first block is 0. */
static inline int64_t win_first(const jctx *c, int64_t m) {
  if (!c->win || c->wl < 0) return 0;
  int64_t q = m * c->bm - c->wl;
  return q > 0 ? bd(c->dn, q) : 0;
}

static inline int64_t win_end(const jctx *c, int64_t L, int64_t m) {
  int64_t q1 = (m + 1) * c->bm, last = L - 1; /* no overflow: q1 - 1 + wr only when below L - 1 */
  if (c->wr >= 0 && c->wr < L - q1) last = q1 - 1 + c->wr;
  return bd(c->dn, last) + 1;
}

/* The backward's: the query blocks of bm rows holding a row that sees a
 * key of KV block n (keys [n*bn, (n+1)*bn) of a sequence of L > n * bn
 * rows): rows q with n*bn - wr <= q <= (n+1)*bn - 1 + wl, inside [0, L):
 * [win_q_first, win_q_end), variants/window.tile's q_blocks (which does
 * not clip (n+1)*bn to L either, and need not: the last row is clipped).
 * At least one block: row n*bn sees key n*bn. */
static inline int64_t win_q_first(const jctx *c, int64_t n) {
  if (c->wr < 0) return 0;
  int64_t q = n * c->bn - c->wr;
  return q > 0 ? bd(c->dm, q) : 0;
}

static inline int64_t win_q_end(const jctx *c, int64_t L, int64_t n) {
  int64_t k1 = (n + 1) * c->bn, last = L - 1; /* no overflow: k1 - 1 + wl only when below L - 1 */
  if (c->wl >= 0 && c->wl < L - k1) last = k1 - 1 + c->wl;
  return bd(c->dm, last) + 1;
}

/* Tiles of a sequence of L rows (0: none): its query blocks (forward), or
 * its KV blocks (backward). */
static inline int64_t seq_blocks(const jctx *c, int64_t L) {
  if (c->bwd) return bcdiv(c->dn, L);
  return c->nqb ? c->nqb : bcdiv(c->dm, L);
}

/* Forward: KV blocks visited by query block m of a sequence of L rows.
 * Backward: query blocks met by KV block m. */
static inline int64_t tile_cost(const jctx *c, int64_t L, int64_t m) {
  if (c->bwd) {
    if (c->nqb) return c->nqb;
    if (c->win) return win_q_end(c, L, m) - win_q_first(c, m);
    int64_t q = bcdiv(c->dm, L);
    return c->causal ? q - bd(c->dm, m * c->bn) : q;
  }
  if (c->win) return win_end(c, L, m) - win_first(c, m);
  if (!c->causal) return bcdiv(c->dn, L);
  int64_t e = (m + 1) * c->bm;
  if (e > L) e = L;
  return bd(c->dn, e - 1) + 1;
}

/* tile_cost of sequence b's tile m, a block-sparse one's from the mask's
 * counts (jc_count_mask) */
static inline int64_t tile_cost_b(const jctx *c, int64_t b, int64_t L, int64_t m) {
  return c->mc ? c->mc[c->mbase[b] + m] : tile_cost(c, L, m);
}

/* Block sizes: multiples of 16 from 16 to 256 (a KV block of 160 or 176
 * rows is a wgmma N or K that is not a power of two). */
static inline int good_block(int v) { return v >= 16 && v <= 256 && v % 16 == 0; }

/* ---- jagged_count.c: step 1, the lengths and the per-sequence counts ---- */

typedef struct seq_counts {
  int64_t ntiles, ng;       /* tiles, sequences with tiles */
  int64_t maxcost, mincost; /* the largest and smallest tile costs */
  int64_t minmax;           /* the smallest heaviest tile of a sequence */
  int64_t work_ub;          /* tiles x their sequence's heaviest: a bound on the total cost */
  int bad;                  /* past a limit: jc_count_slow says which */
} seq_counts;

/* The B lengths of p (offsets or lengths, int32 or int64) into len[], checked
 * (the messages of tile_jagged_check_offsets), and their sum into *rows. */
tile_status jc_read_lengths(const tile_jagged_params *p, int64_t *len, int64_t *rows);
/* Per sequence b: nbv[b] tiles, of costs up to cmx[b], totals into *o
 * (small: every length below 2^27); o->bad when past the limits. */
void jc_count_seqs(const jctx *c, const int64_t *len, int64_t B, int H, int small, int32_t *nbv, int32_t *cmx,
                   seq_counts *o);
/* jc_count_seqs for a sliding window (c->win). */
void jc_count_window(const jctx *c, const int64_t *len, int64_t B, int H, int32_t *nbv, int32_t *cmx,
                     seq_counts *o);
/* The block mask's fields of p, checked against the other fields (not the
 * lengths); TILE_OK when there is none. */
tile_status jc_check_mask(const tile_jagged_params *p);
/* jc_count_seqs for a block-sparse batch: every tile costed from the mask
 * into mc (sequence b's from mbase[b] on; mc has room for the tiles of one
 * head, mbase for B entries); the mask's size checked against the
 * lengths (TILE_ERR_INVALID, o untouched) */
tile_status jc_count_mask(const jctx *c, const tile_jagged_params *p, const int64_t *len, int32_t *nbv, int32_t *cmx,
                          int32_t *mc, int64_t *mbase, seq_counts *o);
/* The tiles of one head: the room jc_count_mask needs in mc; -1 past the
 * limits. */
int64_t jc_head_tiles(const jctx *c, const int64_t *len, int64_t B);
/* The error of the first sequence past the limits (after o->bad). */
tile_status jc_count_slow(const jctx *c, const tile_jagged_params *p, const int64_t *len);

#endif

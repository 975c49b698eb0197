/* jagged_count.c - step 1 of the jagged tile scheduler (jagged.c's header
 * comment says the steps): the B lengths read from offsets or lengths and
 * checked (tile_jagged_check_offsets, jc_read_lengths), then per sequence
 * its tile count and heaviest tile, branch-free (jc_count_seqs; a sliding
 * window's costed tile by tile, jc_count_window), and the error of the
 * first sequence past the limits (jc_count_slow).  The cost model is in
 * jagged_int.h.
 */
#include "jagged_int.h"

/* ---- offsets and lengths ---- */

static inline int64_t off_at(const void *o, int is64, int64_t i) {
  return is64 ? ((const int64_t *)o)[i] : (int64_t)((const int32_t *)o)[i];
}

tile_status tile_jagged_check_offsets(const void *offsets, int64_t batch, int is64, int64_t total_rows) {
  if (!offsets) return rt_fail(TILE_ERR_INVALID, "jagged offsets: the offsets pointer is NULL");
  if (batch < 1 || batch > TILE_JAGGED_MAX_BATCH)
    return rt_fail(TILE_ERR_INVALID, "jagged offsets: batch %lld is out of range (1 to %d sequences)",
                   (long long)batch, TILE_JAGGED_MAX_BATCH);
  int64_t first = off_at(offsets, is64, 0);
  if (first != 0)
    return rt_fail(TILE_ERR_INVALID, "jagged offsets: offsets[0] is %lld, must be 0", (long long)first);
  int64_t prev = 0;
  for (int64_t i = 1; i <= batch; i++) {
    int64_t v = off_at(offsets, is64, i);
    if (v < prev)
      return rt_fail(TILE_ERR_INVALID,
                     "jagged offsets decrease at index %lld: offsets[%lld] = %lld > offsets[%lld] = %lld "
                     "(sequence %lld would have a negative length)",
                     (long long)i, (long long)(i - 1), (long long)prev, (long long)i, (long long)v,
                     (long long)(i - 1));
    prev = v;
  }
  if (total_rows >= 0 && prev != total_rows)
    return rt_fail(TILE_ERR_INVALID,
                   "jagged offsets: offsets[%lld] (the end of the last sequence) is %lld, but the tensor has %lld rows",
                   (long long)batch, (long long)prev, (long long)total_rows);
  return TILE_OK;
}

/* The B lengths of p (offsets or lengths, int32 or int64) into len[], checked
 * (the messages of tile_jagged_check_offsets), and their sum into *rows.
 * Branch-free loops: the bad cases are found afterwards. */
tile_status jc_read_lengths(const tile_jagged_params *p, int64_t *len, int64_t *rows) {
  const int64_t B = p->batch;
  int bad = 0;
  if (p->lengths) {
    if (p->offsets)
      return rt_fail(TILE_ERR_INVALID, "jagged schedule: give offsets or lengths, not both");
    if (p->offsets_are_64bit) {
      const int64_t *l = p->lengths;
      for (int64_t b = 0; b < B; b++) len[b] = l[b], bad |= l[b] < 0;
    } else {
      const int32_t *l = p->lengths;
      for (int64_t b = 0; b < B; b++) len[b] = l[b], bad |= l[b] < 0;
    }
    uint64_t sum = 0;
    for (int64_t b = 0; b < B && !bad; b++) bad |= (sum += (uint64_t)len[b]) > (uint64_t)INT64_MAX;
    *rows = (int64_t)sum;
    if (!bad) return TILE_OK;
    int64_t s = 0;
    for (int64_t b = 0; b < B; b++) {
      if (len[b] < 0)
        return rt_fail(TILE_ERR_INVALID, "jagged lengths: lengths[%lld] is %lld, must be >= 0", (long long)b,
                       (long long)len[b]);
      if (len[b] > INT64_MAX - s)
        return rt_fail(TILE_ERR_INVALID, "jagged lengths: the lengths up to lengths[%lld] add up to more than "
                                         "2^63 - 1 rows", (long long)b);
      s += len[b];
    }
    return TILE_OK;
  }
  if (!p->offsets) return tile_jagged_check_offsets(NULL, B, p->offsets_are_64bit, -1);
  if (p->offsets_are_64bit) {
    const int64_t *o = p->offsets;
    bad = o[0] != 0;
    for (int64_t b = 0; b < B; b++) len[b] = (int64_t)((uint64_t)o[b + 1] - (uint64_t)o[b]), bad |= o[b + 1] < o[b];
  } else {
    const int32_t *o = p->offsets;
    bad = o[0] != 0;
    for (int64_t b = 0; b < B; b++) len[b] = (int64_t)o[b + 1] - o[b], bad |= o[b + 1] < o[b];
  }
  *rows = off_at(p->offsets, p->offsets_are_64bit, B);
  return bad ? tile_jagged_check_offsets(p->offsets, B, p->offsets_are_64bit, -1) : TILE_OK;
}

/* Per sequence b: nbv[b] tiles, of costs up to cmx[b].  Branch-free, the
 * limits checked at the end. */
void jc_count_seqs(const jctx *c, const int64_t *len, int64_t B, int H, int small, int32_t *nbv, int32_t *cmx,
                   seq_counts *o) {
  const int64_t MT = TILE_JAGGED_MAX_TILES, bm = c->bm, bn = c->bn, nqb = c->nqb;
  const bdiv dm = c->dm, dn = c->dn;
  /* every length below 2^27: x / d = (x * M) >> 36, M = ceil(2^36 / d), for
   * 0 <= x < 2^28 (x * (M * d - 2^36) < 2^36: the error stays below 1 / d):
   * a multiply into any register and a constant shift */
  const uint64_t Mm = ((uint64_t)1 << 36) / (uint64_t)bm + 1, Mn = ((uint64_t)1 << 36) / (uint64_t)bn + 1;
  const int causal = c->causal;
  int64_t blocks = 0, ng = 0, maxcost = 0, mincost = INT64_MAX, minmax = INT64_MAX;
  uint64_t wsum = 0; /* < 2^60 when nothing is past the limits, else not used */
  int bad = 0;
#define COUNT_ONE(NB, CMAX, CMIN)                                         \
  for (int64_t b = 0; b < B; b++) {                                       \
    const int64_t L = len[b], nb = (NB), cmax = (CMAX);                   \
    const int64_t nbc = nb <= MT ? nb : MT + 1, some = nb != 0;           \
    const int64_t cmin = (CMIN);                                          \
    nbv[b] = (int32_t)nbc, cmx[b] = (int32_t)cmax;                        \
    blocks += nbc;                                                        \
    wsum += (uint64_t)nbc * (uint64_t)cmax;                               \
    bad |= (nb > MT) | (some & (cmax > INT32_MAX));                       \
    ng += some;                                                           \
    maxcost = some && cmax > maxcost ? cmax : maxcost;                    \
    mincost = some && cmin < mincost ? cmin : mincost;                    \
    minmax = some && cmax < minmax ? cmax : minmax;                       \
  }
#define COUNT_ALL                                                                          \
  if (!c->bwd && !causal) /* every tile cdiv(L, bn) */                                     \
    COUNT_ONE(nqb ? nqb : CDIVM(L), CDIVN(L), cmax)                                         \
  else if (!c->bwd) /* costs rise with m: cost(0) .. cost(nb - 1) = cdiv(L, bn) */         \
    COUNT_ONE(CDIVM(L), CDIVN(L), DIVN((L < bm ? L : bm) - some) + some)                     \
  else if (!causal) /* every tile cdiv(L, bm) (broadcast-Q: the query blocks) */           \
    COUNT_ONE(CDIVN(L), nqb ? nqb : CDIVM(L), cmax)                                         \
  else /* costs fall with n: cost(0) = cdiv(L, bm) .. cost(nb - 1) */                      \
    COUNT_ONE(CDIVN(L), CDIVM(L), cmax - DIVM((nbc - some) * bn))
  if (small) {
#define DIVM(x) ((int64_t)(((uint64_t)(x) * Mm) >> 36))
#define DIVN(x) ((int64_t)(((uint64_t)(x) * Mn) >> 36))
#define CDIVM(x) DIVM((x) + bm - 1)
#define CDIVN(x) DIVN((x) + bn - 1)
    COUNT_ALL
#undef DIVM
#undef DIVN
#undef CDIVM
#undef CDIVN
  } else {
#define DIVM(x) bd(dm, x)
#define DIVN(x) bd(dn, x)
#define CDIVM(x) bcdiv(dm, x)
#define CDIVN(x) bcdiv(dn, x)
    COUNT_ALL
#undef DIVM
#undef DIVN
#undef CDIVM
#undef CDIVN
  }
#undef COUNT_ALL
#undef COUNT_ONE
  o->bad = bad || blocks > MT / H; /* blocks < 2^53: no overflow */
  o->ntiles = o->bad ? 0 : blocks * H;
  o->ng = ng, o->maxcost = maxcost, o->mincost = mincost, o->minmax = minmax;
  o->work_ub = o->bad ? 0 : (int64_t)wsum * H;
}

/* jc_count_seqs for a window: costs rise and fall with m (the window's left
 * edge enters the sequence, its right edge leaves it), so each sequence's
 * tiles are costed one by one: as many steps as the tiles, which the
 * dealing walks anyway.  Past the limits when there are too many tiles, or
 * a sequence's blocks of the other kind (forward: KV blocks, the range the
 * work items index; backward: query blocks, the range JFA's items index)
 * pass int32, which bounds every cost too. */
void jc_count_window(const jctx *c, const int64_t *len, int64_t B, int H, int32_t *nbv, int32_t *cmx,
                     seq_counts *o) {
  const int64_t MT = TILE_JAGGED_MAX_TILES;
  int64_t blocks = 0, ng = 0, maxcost = 0, mincost = INT64_MAX, minmax = INT64_MAX, wsum = 0;
  int bad = 0;
  for (int64_t b = 0; b < B && !bad; b++) { /* the limits first: the walk below is then bounded */
    int64_t nb = seq_blocks(c, len[b]);
    bad = nb > MT || (blocks += nb) > MT / H || bcdiv(c->bwd ? c->dm : c->dn, len[b]) > INT32_MAX;
  }
  for (int64_t b = 0; b < B && !bad; b++) {
    const int64_t L = len[b], nb = seq_blocks(c, L);
    int64_t cmax = 0, cmin = INT64_MAX;
    for (int64_t m = 0; m < nb; m++) {
      int64_t cost = tile_cost(c, L, m);
      cmax = cost > cmax ? cost : cmax;
      cmin = cost < cmin ? cost : cmin;
    }
    nbv[b] = (int32_t)nb, cmx[b] = (int32_t)cmax;
    if (!nb) continue;
    ng++;
    wsum += nb * cmax;
    maxcost = cmax > maxcost ? cmax : maxcost;
    mincost = cmin < mincost ? cmin : mincost;
    minmax = cmax < minmax ? cmax : minmax;
  }
  o->bad = bad;
  o->ntiles = bad ? 0 : blocks * H;
  o->ng = ng, o->maxcost = maxcost, o->mincost = mincost, o->minmax = minmax;
  o->work_ub = bad ? 0 : wsum * H; /* < 2^29 tiles of < 2^31 */
}

/* The error of the first sequence past the limits (the count is not used). */
tile_status jc_count_slow(const jctx *c, const tile_jagged_params *p, const int64_t *len) {
  int64_t ntiles = 0;
  const int H = p->heads;
  for (int64_t b = 0; b < p->batch; b++) {
    int64_t L = len[b];
    int64_t nb = seq_blocks(c, L);
    if (nb == 0) continue;
    if (nb > TILE_JAGGED_MAX_TILES || (ntiles += nb * H) > TILE_JAGGED_MAX_TILES)
      return rt_fail(TILE_ERR_INVALID,
                     "jagged schedule: more than %d tiles (reached at sequence %lld of %lld rows, %lld query blocks "
                     "x %d heads): tile indices would overflow int32; use larger blocks or split the batch",
                     TILE_JAGGED_MAX_TILES, (long long)b, (long long)L, (long long)nb, H);
    if (c->win && !c->bwd && bcdiv(c->dn, L) > INT32_MAX)
      return rt_fail(TILE_ERR_INVALID,
                     "jagged schedule: sequence %lld has %lld KV rows, %lld blocks of %d: the window's KV block "
                     "indices overflow int32", (long long)b, (long long)L, (long long)bcdiv(c->dn, L), p->block_n);
    if (c->win && c->bwd && bcdiv(c->dm, L) > INT32_MAX)
      return rt_fail(TILE_ERR_INVALID,
                     "jagged schedule: sequence %lld has %lld query rows, %lld blocks of %d: the window's query "
                     "block indices overflow int32", (long long)b, (long long)L, (long long)bcdiv(c->dm, L),
                     p->block_m);
    /* costs never decrease with m (forward) or never increase (backward); a window's are bounded by the
     * check above */
    int64_t c0 = tile_cost(c, L, 0), c1 = tile_cost(c, L, nb - 1), cmax = c0 > c1 ? c0 : c1;
    if (cmax > INT32_MAX)
      return rt_fail(TILE_ERR_INVALID,
                     "jagged schedule: sequence %lld has %lld KV rows, %lld blocks of %d: the tile cost overflows int32",
                     (long long)b, (long long)L, (long long)cmax, p->block_n);
  }
  return rt_fail(TILE_ERR_INVALID, "jagged schedule: the batch is past the limits"); /* not reached */
}

/* ---- block-sparse masks ---- */

tile_status jc_check_mask(const tile_jagged_params *p) {
  if (!p->block_mask) return TILE_OK;
  const int per_batch = p->block_mask_mode == TILE_JAGGED_MASK_PER_BATCH;
  if (!per_batch && p->block_mask_mode != TILE_JAGGED_MASK_PER_SEQUENCE)
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: block_mask_mode is %d, must be %d (one mask per batch) or %d "
                                     "(one per sequence)", p->block_mask_mode, TILE_JAGGED_MASK_PER_BATCH,
                   TILE_JAGGED_MASK_PER_SEQUENCE);
  if (p->num_q > 0 || p->window)
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: a block mask is for self-attention without a sliding window "
                                     "(num_q %lld, window %d)", (long long)p->num_q, p->window);
  const int blk = p->mask_block;
  if (!good_block(blk) || (!p->backward && (p->block_m != blk || p->block_n != blk)) ||
      (p->backward && (p->block_n != blk || blk % p->block_m)))
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: mask_block %d with block_m %d, block_n %d: the mask's blocks "
                                     "must be the forward's query and KV blocks, or the backward's KV blocks and a "
                                     "multiple of its query blocks (a multiple of 16 from 16 to 256)",
                   blk, p->block_m, p->block_n);
  if (p->block_mask_bytes < 0)
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: block_mask_bytes is %lld", (long long)p->block_mask_bytes);
  if (per_batch && (p->block_mask_row < 0 || p->block_mask_row > INT32_MAX ||
                    p->block_mask_row * p->block_mask_row != p->block_mask_bytes))
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: a per-batch block mask of rows of %lld blocks is %lld bytes, "
                                     "not %lld", (long long)p->block_mask_row,
                   (long long)(p->block_mask_row >= 0 && p->block_mask_row <= INT32_MAX
                                   ? p->block_mask_row * p->block_mask_row : -1),
                   (long long)p->block_mask_bytes);
  return TILE_OK;
}

int64_t jc_head_tiles(const jctx *c, const int64_t *len, int64_t B) {
  int64_t n = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t nb = seq_blocks(c, len[b]);
    if (nb > TILE_JAGGED_MAX_TILES || (n += nb) > TILE_JAGGED_MAX_TILES) return -1;
  }
  return n;
}

tile_status jc_count_mask(const jctx *c, const tile_jagged_params *p, const int64_t *len, int32_t *nbv, int32_t *cmx,
                          int32_t *mc, int64_t *mbase, seq_counts *o) {
  const int64_t B = p->batch, blk = p->mask_block, qstep = c->bwd ? blk / c->bm : 1;
  const int per_seq = p->block_mask_mode == TILE_JAGGED_MASK_PER_SEQUENCE;
  const bdiv dk = bdiv_of(p->mask_block);
  /* the mask's size against the lengths first: every index below is then inside it */
  int64_t need = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t nk = bcdiv(dk, len[b]);
    if (!per_seq && nk > p->block_mask_row)
      return rt_fail(TILE_ERR_INVALID, "jagged schedule: sequence %lld has %lld blocks of %d, more than the per-batch "
                                       "block mask's rows of %lld", (long long)b, (long long)nk, p->mask_block,
                     (long long)p->block_mask_row);
    if (per_seq && (need += nk * nk) > p->block_mask_bytes) break; /* nk < 2^28: no overflow */
  }
  if (per_seq && need != p->block_mask_bytes) {
    int64_t want = 0;
    for (int64_t b = 0; b < B && want <= INT64_MAX / 2; b++) want += bcdiv(dk, len[b]) * bcdiv(dk, len[b]);
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: the per-sequence block mask is %lld bytes; the batch's "
                                     "sequences need %lld (cdiv(L, %d)^2 each)", (long long)p->block_mask_bytes,
                   (long long)want, p->mask_block);
  }
  int64_t tiles = 0, at = 0, ng = 0, maxcost = 0, mincost = INT64_MAX, minmax = INT64_MAX, wsum = 0;
  for (int64_t b = 0; b < B; b++) {
    const int64_t L = len[b], nb = seq_blocks(c, L), nk = bcdiv(dk, L), row = per_seq ? nk : p->block_mask_row;
    const uint8_t *ms = p->block_mask + at;
    if (per_seq) at += nk * nk;
    mbase[b] = tiles;
    int64_t cmax = 0, cmin = INT64_MAX;
    for (int64_t m = 0; m < nb; m++) {
      int64_t cost = 0;
      if (!c->bwd) { /* KV blocks [0, e) of query block m, those the mask visits */
        for (int64_t j = 0, e = tile_cost(c, L, m); j < e; j++) cost += ms[m * row + j] != 0;
      } else { /* query blocks [i0, i1) of KV block m */
        int64_t i0 = c->causal ? bd(c->dm, m * c->bn) : 0, i1 = bcdiv(c->dm, L);
        for (int64_t i = i0; i < i1; i++) cost += ms[(i / qstep) * row + m] != 0;
      }
      /* a tile the mask empties still loads its Q block (backward: K and V) and writes its output (zeros, the
       * LSE): it costs what one block does. At 0 the dealing (each tile to the least-loaded CTA) put every
       * empty tile on one CTA: 2,104 of J2's at 25 %, the forward 1.8x slower than with every block */
      if (cost == 0) cost = 1;
      mc[tiles + m] = (int32_t)cost; /* at most the blocks of a sequence, < 2^31 */
      cmax = cost > cmax ? cost : cmax;
      cmin = cost < cmin ? cost : cmin;
    }
    tiles += nb;
    nbv[b] = (int32_t)nb, cmx[b] = (int32_t)cmax;
    if (!nb) continue;
    ng++;
    wsum += nb * cmax;
    maxcost = cmax > maxcost ? cmax : maxcost;
    mincost = cmin < mincost ? cmin : mincost;
    minmax = cmax < minmax ? cmax : minmax;
  }
  o->bad = 0;
  o->ntiles = tiles * p->heads;
  o->ng = ng, o->maxcost = maxcost, o->mincost = mincost, o->minmax = minmax;
  o->work_ub = wsum * p->heads;
  return TILE_OK;
}

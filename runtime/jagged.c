/* jagged.c - the host-side tile scheduler of Jagged Flash Attention
 * (include/tile/jagged.h; docs/runtime.md, "Jagged tile scheduling").
 *
 * A tile's cost depends on (b, m) only and is monotonic in m; in a
 * non-causal batch it is the same for all of a sequence's tiles.  The
 * scheduler works on sequences, not tiles, until it writes the tiles out:
 *   1. (jagged_count.c) read the lengths (from offsets or lengths,
 *      checked), then per sequence its tile count and heaviest tile,
 *      dividing by the block sizes with multiplies (bdiv; jc_count_seqs),
 *      branch-free; reject what would overflow int32;
 *   2. zigzag: sort the sequences by their heaviest tile, descending, with
 *      a stable counting sort (a qsort on unique (cost, b) keys when costs
 *      are far above the sequence count: enormous KV sequences against few
 *      query blocks);
 *   3. not causal: walk the sorted sequences, each as "for h: for m" --
 *      which is the (b, h, m) tie order -- and deal the tiles in that order:
 *      rank k lands in pass p = k / num_ctas at lane r = k % num_ctas, which
 *      is CTA r on even passes and CTA num_ctas-1-r on odd ones, at position
 *      p of that CTA's list.  List lengths are known in advance, so every
 *      tile is written once, straight to its final slot (deal_sorted); the
 *      CTAs' costs follow from the runs of one cost, not from every tile.
 *      Causal: each sorted sequence dealt whole, heaviest query block
 *      first, every tile to the least-loaded CTA (choose_bq: a bucket queue
 *      over the loads, or a tournament tree when the loads do not fit one;
 *      round robin when every tile costs the same), then written to its
 *      list (place_causal).
 * Sliding windows (p->window) are dealt like causal batches: a window's
 * costs rise and fall with m, so each sequence's tiles are costed one by
 * one (jc_count_window) and dealt sequence-major to the least-loaded CTA; the
 * tail split then cuts the last tile of each CTA above the ideal load, and
 * every work item's KV range starts at the window's first block.  The
 * backward's window tiles (KV blocks) cost the query blocks holding a row
 * that sees one of their keys (win_q_first, win_q_end: the kernel's
 * q_blocks) and are dealt the same way, KV blocks in ascending order like
 * causal's backward (the window (-1, 0) is causal's schedule, byte for
 * byte).
 * Without zigzag, step 2 is skipped and the tiles are dealt round robin in
 * natural order.  tile_jagged_schedule_rebuild keeps a copy of what it
 * built from and returns at once when it is asked for the same schedule.
 * tests/unit/test_jagged_same.c holds the previous implementation (segments
 * and a tournament tree for every causal tile: 10x slower on causal
 * batches) and checks that this one gives byte-identical schedules.
 * The cost model (bdiv, jctx, tile_cost, the window's block ranges) is in
 * jagged_int.h, shared with jagged_count.c.
 */
#include <stdlib.h>
#include <string.h>

#include "jagged_int.h"

/* ---- dealing in passes (zigzag or round robin) ---- */

/* The baseline's dealer: rank p * n + r is tile p of CTA r's list, which
 * starts at ls[r]; lc[r] sums its costs. */
typedef struct lanes {
  int32_t *work;
  const int32_t *ls;
  int64_t *lc;
  int n;
  int64_t p;
  int r;
} lanes;

/* A tile {b, h, m, cost} in one 16-byte register. */
typedef int32_t v4i __attribute__((vector_size(16)));

static inline void put_tile(int32_t *dst, v4i t) { memcpy(dst, &t, sizeof t); }

/* Round robin in natural order (zigzag off, the baseline): deal the nb
 * tiles (b, h, 0..nb-1) of each head h at the next ranks, of cost `cost`
 * (< 0: each tile's own, from c and L), adding their costs to the lanes'.
 * The state lives in locals: the int32 stores into work could alias the
 * lane starts. */
static void deal_lanes(lanes *d, int32_t b, int32_t nb, int H, int32_t cost, const jctx *c, int64_t L) {
  int32_t *const work = d->work;
  const int n = d->n;
  int64_t p = d->p;
  int r = d->r;
  const int32_t *ls = d->ls;
  int64_t *lc = d->lc;
  const v4i step_m = {0, 0, 1, 0};
  for (int h = 0; h < H; h++) {
    v4i t = {b, h, 0, cost};
    for (int32_t m = 0; m < nb; m++, t += step_m) {
      int32_t cm = cost;
      if (cost < 0) t[3] = cm = (int32_t)tile_cost_b(c, b, L, m);
      put_tile(work + 4 * (ls[r] + p), t);
      lc[r] += cm;
      if (++r == n) r = 0, p++;
    }
  }
  d->p = p;
  d->r = r;
}

/* Zigzag, not causal: deal the sorted sequences' tiles, each sequence's as
 * "for h: for m" (one cost), at the next ranks.  lp[q][r]: the list of lane
 * r in a pass of parity q; a pass's tiles go at its index in the lists. */
static void deal_sorted(int32_t *const *lp0, int32_t *const *lp1, int n, const int32_t *order, int64_t ng,
                        const int32_t *nbv, const int32_t *cmx, int H) {
  int32_t *const *lp = lp0;
  int64_t at = 0; /* 4 * the pass */
  int r = 0;
  const v4i step_m = {0, 0, 1, 0};
  const v4i step_h = {0, 1, 0, 0};
  for (int64_t i = 0; i < ng; i++) {
    const int32_t b = order[i], nb = nbv[b], cost = cmx[b];
    if (nb == 1) { /* short sequences: one loop over the heads */
      v4i t = {b, 0, 0, cost};
      for (int h = 0; h < H; h++, t += step_h) {
        put_tile(lp[r] + at, t);
        if (++r == n) r = 0, at += 4, lp = lp == lp0 ? lp1 : lp0;
      }
      continue;
    }
    for (int h = 0; h < H; h++) {
      v4i t = {b, h, 0, cost};
      for (int32_t m = 0; m < nb; m++, t += step_m) {
        put_tile(lp[r] + at, t);
        if (++r == n) r = 0, at += 4, lp = lp == lp0 ? lp1 : lp0;
      }
    }
  }
}

static int key_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* ---- the least-loaded CTA ---- */

/* A tournament tree over the CTAs' loads.  Node i (1 <= i < P) holds the
 * load and index of the better of its children (less load, ties: lower
 * index); leaf P + c is CTA c, leaves past num_ctas hold INT64_MAX.  Taking
 * a tile updates one leaf-to-root path: log2(n) compare-and-copy steps. */
typedef struct ltree {
  int64_t *load; /* 2 * P entries */
  int32_t *idx;  /* 2 * P entries */
  int P;
} ltree;

/* CTA c starts at loads[c] (NULL: every CTA at 0). */
static void lt_init_loads(ltree *t, int n, const int64_t *loads) {
  for (int i = 0; i < t->P; i++) t->load[t->P + i] = i < n ? (loads ? loads[i] : 0) : INT64_MAX, t->idx[t->P + i] = i;
  for (int i = t->P - 1; i >= 1; i--) { /* equal loads: the left child (lower index) wins */
    int w = t->load[2 * i + 1] < t->load[2 * i] ? 2 * i + 1 : 2 * i;
    t->load[i] = t->load[w], t->idx[i] = t->idx[w];
  }
}

static inline int32_t lt_take(ltree *t, int64_t cost) {
  int32_t c = t->idx[1];
  int i = t->P + c;
  t->load[i] += cost;
  for (i >>= 1; i >= 1; i >>= 1) {
    int l = 2 * i, r = l + 1;
    int w = (t->load[r] < t->load[l] || (t->load[r] == t->load[l] && t->idx[r] < t->idx[l])) ? r : l;
    t->load[i] = t->load[w], t->idx[i] = t->idx[w];
  }
  return c;
}

/* A bucket queue, for tiles of cost >= 1 dealt from loads that start at 0.
 * Every CTA's load lies in [cur, cur + maxcost] (a CTA only gets a tile
 * when its load is the least, cur), so bucket (load mod W), W > maxcost, is
 * a bitset of the CTAs of that load, in `words` 64-bit words: word j of
 * bucket x is bk[j * W + x].  The least-loaded CTA with the lowest index is
 * the lowest bit of the first non-empty bucket from cur on (cur steps over
 * the empty ones: at most the final least load, total cost / n, steps).
 * The word being taken from is held in `bits` (its slot zeroed); the CTAs
 * it gives tiles to go to later buckets (1 <= cost < W), their bits
 * collected in `acc` for the slot `pend` and written when the slot changes
 * or before any slot is read (slot W * words: a sink). */
typedef struct bqueue {
  uint64_t *bk;  /* W * words + 1 */
  uint64_t mask; /* W - 1 */
  int64_t W, jW, pend; /* jW = j * W */
  int words, j;        /* j: the word of bucket cur in `bits` */
  uint64_t cur, bits, acc;
} bqueue;

static void bq_init(bqueue *q, uint64_t *bk, int64_t W, int n) {
  q->words = (n + 63) / 64;
  memset(bk, 0, ((size_t)W * (size_t)q->words + 1) * sizeof *bk);
  for (int i = 0; i < n; i++) bk[(int64_t)(i / 64) * W] |= 1ull << (i % 64);
  q->bk = bk, q->mask = (uint64_t)W - 1, q->W = W;
  q->j = 0, q->jW = 0, q->cur = 0, q->bits = bk[0], bk[0] = 0, q->acc = 0, q->pend = W * q->words;
}

static inline int32_t bq_take(bqueue *q, int64_t cost) {
  while (!q->bits) {
    q->bk[q->pend] |= q->acc, q->acc = 0;
    if (++q->j == q->words) q->j = 0, q->cur++;
    q->jW = q->j * q->W;
    uint64_t *w = q->bk + q->jW + (int64_t)(q->cur & q->mask);
    q->bits = *w, *w = 0;
  }
  int i = __builtin_ctzll(q->bits);
  q->bits &= q->bits - 1;
  int64_t slot = q->jW + (int64_t)((q->cur + (uint64_t)cost) & q->mask);
  if (slot != q->pend) q->bk[q->pend] |= q->acc, q->pend = slot, q->acc = 0;
  q->acc |= 1ull << i;
  return q->j * 64 + i;
}

/* The largest load, after at least one take. */
static int64_t bq_max_load(bqueue *q) {
  q->bk[q->pend] |= q->acc, q->acc = 0;
  for (uint64_t d = q->mask; d >= 1; d--)
    for (int j = 0; j < q->words; j++)
      if (q->bk[j * q->W + (int64_t)((q->cur + d) & q->mask)]) return (int64_t)(q->cur + d);
  return (int64_t)q->cur;
}

/* Causal schedules (zigzag on) are sequence-major: the sequences sorted by
 * their heaviest tile, descending (ties in natural order), each dealt whole,
 * heaviest query blocks first, all heads of a query block together.  A
 * causal sequence's tiles span every cost from 1 to its maximum; sorting the
 * tiles by cost would scatter a sequence over the whole run and fetch its K/V
 * from DRAM again for each cost.  Dealt together, its tiles run at about the
 * same time and share K/V in L2 (9% faster on J2, docs/perf.md).  Since the
 * costs in this order are not monotonic, zigzag passes would balance them
 * poorly; each tile goes instead to the CTA with the least work so far
 * (ties: the lowest index), which keeps every CTA within one tile of the
 * mean (Graham's list-scheduling bound) and keeps the tiles dealt together
 * running together.
 *
 * Two walks over the tiles in that order: give each to the least-loaded
 * CTA (from the bucket queue or the tree), recording it in cta[k] and
 * counting it in pos[]; then, the list starts known, place each at
 * work[4 * pos[cta[k]]++].  When every tile costs the same, the least-loaded
 * CTA is plain round robin and one walk places them (place_round_robin). */
typedef struct causal_order {
  const jctx *c;
  const int32_t *order, *nbv; /* sequences in dealing order, their tile counts */
  const int64_t *len;
  int64_t ng;
  int H;
} causal_order;

/* the walk: sequence g's query block m (the heaviest first) of cost `cost`,
 * its H tiles numbered k .. k+H-1 */
#define CAUSAL_WALK(o, ...)                                                 \
  do {                                                                      \
    const jctx *c_ = (o)->c;                                                \
    const int H = (o)->H;                                                   \
    int64_t k = 0;                                                          \
    for (int64_t g = 0; g < (o)->ng; g++) {                                 \
      const int32_t b = (o)->order[g], nb = (o)->nbv[b];                    \
      const int64_t L = (o)->len[b];                                        \
      for (int32_t mi = 0; mi < nb; mi++, k += H) {                         \
        const int32_t m = c_->bwd ? mi : nb - 1 - mi;                       \
        const int32_t cost = (int32_t)tile_cost_b(c_, b, L, m);             \
        __VA_ARGS__                                                         \
      }                                                                     \
    }                                                                       \
  } while (0)

/* choose with the bucket queue; returns the total cost */
static int64_t choose_bq(const causal_order *o, bqueue *q, int32_t *cta, int32_t *pos) {
  bqueue Q = *q; /* in registers */
  int64_t total = 0;
  CAUSAL_WALK(o, {
    total += (int64_t)cost * H;
    for (int h = 0; h < H; h++) {
      int32_t x = bq_take(&Q, cost);
      cta[k + h] = x;
      pos[x]++;
    }
  });
  *q = Q;
  return total;
}

static int64_t choose_tree(const causal_order *o, ltree *t, int32_t *cta, int32_t *pos) {
  int64_t total = 0;
  CAUSAL_WALK(o, {
    total += (int64_t)cost * H;
    for (int h = 0; h < H; h++) {
      int32_t x = lt_take(t, cost);
      cta[k + h] = x;
      pos[x]++;
    }
  });
  return total;
}

static void place_causal(const causal_order *o, const int32_t *cta, int32_t *work, int32_t *pos) {
  const v4i step_h = {0, 1, 0, 0};
  CAUSAL_WALK(o, {
    v4i t = {b, 0, m, cost};
    for (int h = 0; h < H; h++, t += step_h) put_tile(work + 4 * (int64_t)pos[cta[k + h]]++, t);
  });
}

/* Every tile of one cost: after k tiles the first k mod n CTAs carry one
 * more, so the least-loaded CTA of tile k is k mod n: round robin, tile k
 * at position k / n of CTA k mod n's list (which starts at ls[k mod n]). */
static void place_round_robin(const causal_order *o, int32_t cost, const int32_t *ls, int n, int32_t *work) {
  const v4i step_h = {0, 1, 0, 0};
  const int H = o->H, bwd = o->c->bwd;
  int64_t p = 0;
  int r = 0;
  for (int64_t g = 0; g < o->ng; g++) {
    const int32_t b = o->order[g], nb = o->nbv[b];
    for (int32_t mi = 0; mi < nb; mi++) {
      v4i t = {b, 0, bwd ? mi : nb - 1 - mi, cost};
      for (int h = 0; h < H; h++, t += step_h) {
        put_tile(work + 4 * (ls[r] + p), t);
        if (++r == n) r = 0, p++;
      }
    }
  }
}

/* ---- the schedule's memory: what it was built from, scratch ---- */

typedef struct jkey {
  int64_t batch, num_q;
  int is64, is_len, heads, bm, bn, causal, ctas, zig, bwd;
  int win, wl, wr; /* all 0 without a window */
} jkey;

typedef struct jpriv {
  jkey key;
  int has_key;
  void *bytes; /* a copy of the offsets or lengths the schedule was built from */
  size_t nbytes, bytes_cap;
  void *seq, *tmp; /* scratch: per sequence, and for the dealing */
  size_t seq_cap, tmp_cap;
  void *mask; /* block-sparse: every tile's cost (jc_count_mask) */
  size_t mask_cap;
} jpriv;

static jkey key_of(const tile_jagged_params *p) {
  jkey k;
  memset(&k, 0, sizeof k); /* padding too: keys are compared with memcmp */
  k.batch = p->batch, k.num_q = p->num_q;
  k.is64 = p->offsets_are_64bit != 0, k.is_len = p->lengths != NULL, k.heads = p->heads;
  k.bm = p->block_m, k.bn = p->block_n, k.causal = p->causal != 0, k.ctas = p->num_ctas;
  k.zig = p->zigzag != 0, k.bwd = p->backward != 0;
  if (p->window) k.win = p->window, k.wl = p->window_left, k.wr = p->window_right;
  return k;
}

static size_t key_bytes(const tile_jagged_params *p) {
  return (size_t)(p->lengths ? p->batch : p->batch + 1) * (p->offsets_are_64bit ? 8 : 4);
}

/* s was built from p and the same lengths (p is valid if so). */
static int same_input(const tile_jagged_schedule *s, const tile_jagged_params *p) {
  const jpriv *v = s->priv;
  if (!v || !v->has_key || !p || (p->lengths && p->offsets) || p->block_mask) return 0;
  jkey k = key_of(p);
  if (memcmp(&k, &v->key, sizeof k)) return 0;
  const void *src = p->lengths ? p->lengths : p->offsets;
  return src && v->nbytes == key_bytes(p) && !memcmp(src, v->bytes, v->nbytes);
}

/* buf with room for `need` bytes (contents not kept), NULL when out of memory */
static void *room(void **buf, size_t *cap, size_t need) {
  if (need == 0) need = 1;
  if (*cap < need) {
    free(*buf);
    *buf = malloc(need);
    *cap = *buf ? need : 0;
  }
  return *buf;
}

static void priv_free(jpriv *v) {
  if (!v) return;
  free(v->bytes), free(v->seq), free(v->tmp), free(v->mask);
  free(v);
}

void tile_jagged_schedule_free(tile_jagged_schedule *s) {
  if (!s) return;
  free(s->work);
  free(s->cta_start);
  priv_free(s->priv);
  memset(s, 0, sizeof *s);
}

/* carve `bytes` (rounded up to 64) from the arena at *at */
static void *carve(char **at, size_t bytes) {
  void *r = *at;
  *at += (bytes + 63) & ~(size_t)63;
  return r;
}

/* ---- building ---- */

/* The window fields of p (ignored when p->window is 0). */
static tile_status check_window(const tile_jagged_params *p) {
  if (!p->window) return TILE_OK;
  if (p->window != 1)
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: window is %d, must be 0 (none) or 1 (a sliding window)",
                   p->window);
  if (p->window_left < -1 || p->window_right < -1)
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: window_left %d, window_right %d: each must be >= 0, or -1 "
                                     "for no bound", p->window_left, p->window_right);
  if (p->num_q > 0)
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: a sliding window is defined for self-attention only "
                                     "(num_q must be 0)");
  if (p->causal)
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: a sliding window with causal set: give the causal window "
                                     "as window_right = 0 instead (causal must be 0)");
  return TILE_OK;
}

/* Build into out, reusing its arrays when they are large enough. */
static tile_status build(const tile_jagged_params *p, tile_jagged_schedule *out) {
  out->ntiles = out->total_cost = out->max_cta_cost = out->max_tile_cost = 0;
  out->num_ctas = 0;
  out->reused = 0;
  if (out->priv) ((jpriv *)out->priv)->has_key = 0;
  if (!p) return rt_fail(TILE_ERR_INVALID, "tile_jagged_schedule_build: NULL parameters");
  if (p->batch < 1 || p->batch > TILE_JAGGED_MAX_BATCH)
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: batch %lld is out of range (1 to %d sequences)",
                   (long long)p->batch, TILE_JAGGED_MAX_BATCH);
  if (p->heads < 1) return rt_fail(TILE_ERR_INVALID, "jagged schedule: heads is %d, must be at least 1", p->heads);
  if (!good_block(p->block_m) || !good_block(p->block_n))
    return rt_fail(TILE_ERR_INVALID,
                   "jagged schedule: block_m = %d, block_n = %d: each must be a multiple of 16 from 16 to 256",
                   p->block_m, p->block_n);
  if (p->num_ctas < 1 || p->num_ctas > TILE_JAGGED_MAX_CTAS)
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: num_ctas is %d, must be 1 to %d", p->num_ctas,
                   TILE_JAGGED_MAX_CTAS);
  if (p->num_q < 0)
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: num_q is %lld (0 = self-attention, > 0 = broadcast-Q rows)",
                   (long long)p->num_q);
  if (p->causal && p->num_q > 0)
    return rt_fail(TILE_ERR_INVALID, "jagged schedule: causal masking is defined for self-attention only "
                                     "(num_q must be 0 when causal is set)");
  tile_status st = check_window(p);
  if (st == TILE_OK) st = jc_check_mask(p);
  if (st != TILE_OK) return st;
  const int n = p->num_ctas, H = p->heads, zig = p->zigzag != 0;
  const int64_t B = p->batch;
  if (!out->priv && !(out->priv = calloc(1, sizeof(jpriv)))) goto nomem0;
  jpriv *v = out->priv;
  /* per sequence: its length, tiles and heaviest tile's cost */
  if (!room(&v->seq, &v->seq_cap, (size_t)B * 16 + 128)) goto nomem0;
  char *at = v->seq;
  int64_t *len = carve(&at, (size_t)B * 8);
  int32_t *nbv = carve(&at, (size_t)B * 4), *cmx = carve(&at, (size_t)B * 4);
  int64_t rows = 0;
  st = jc_read_lengths(p, len, &rows);
  if (st != TILE_OK) return st;

  jctx c = {bdiv_of(p->block_m), bdiv_of(p->block_n), p->block_m, p->block_n, p->causal != 0, 0, p->backward != 0,
            p->window != 0, p->window_left, p->window_right};
  if (p->num_q > 0) {
    c.nqb = (p->num_q + p->block_m - 1) / p->block_m;
    if (c.nqb > TILE_JAGGED_MAX_TILES)
      return rt_fail(TILE_ERR_INVALID, "jagged schedule: num_q = %lld gives %lld query blocks per (sequence, head), "
                                       "more than the %d tiles a schedule can hold",
                     (long long)p->num_q, (long long)c.nqb, TILE_JAGGED_MAX_TILES);
  }

  /* 1. Count tiles and sequences with tiles, find the largest cost. */
  seq_counts k1;
  if (p->block_mask) { /* every tile's cost from the mask, into the schedule's scratch */
    int64_t nt = jc_head_tiles(&c, len, B);
    if (nt < 0 || nt > TILE_JAGGED_MAX_TILES / H) return jc_count_slow(&c, p, len);
    if (!room(&v->mask, &v->mask_cap, (size_t)nt * 4 + (size_t)B * 8 + 128)) goto nomem0;
    char *mat = v->mask;
    int64_t *mbase = carve(&mat, (size_t)B * 8);
    int32_t *mc = carve(&mat, (size_t)nt * 4);
    st = jc_count_mask(&c, p, len, nbv, cmx, mc, mbase, &k1);
    if (st != TILE_OK) return st;
    c.mc = mc, c.mbase = mbase;
  } else if (c.win)
    jc_count_window(&c, len, B, H, nbv, cmx, &k1);
  else
    jc_count_seqs(&c, len, B, H, rows < ((int64_t)1 << 27), nbv, cmx, &k1);
  if (k1.bad) return jc_count_slow(&c, p, len);
  const int64_t ntiles = k1.ntiles, ng = k1.ng, maxcost = k1.maxcost, mincost = k1.mincost, minmax = k1.minmax;

  if (!out->cta_start || out->cta_cap < n + 1) {
    free(out->cta_start);
    out->cta_start = malloc(((size_t)n + 1) * sizeof(int32_t));
    out->cta_cap = out->cta_start ? n + 1 : 0;
  }
  if (!out->work || out->work_cap < ntiles || out->work_cap < 1) {
    int64_t cap = ntiles ? ntiles : 1;
    free(out->work);
    out->work = malloc((size_t)cap * 4 * sizeof(int32_t));
    out->work_cap = out->work ? cap : 0;
  }
  if (!out->cta_start || !out->work) goto nomem;
  out->num_ctas = n;
  out->ntiles = ntiles;

  /* scratch for the sort and the dealing */
  const int sort_count = maxcost <= ng + (1 << 16);
  /* causal and window schedules: costs vary within a sequence, dealt
   * sequence-major to the least-loaded CTA */
  const int causal_zig = zig && (c.causal || c.win || c.mc);
  int Pt = 1;
  while (Pt < n) Pt <<= 1;
  int64_t W = 1;
  while (W <= maxcost) W <<= 1;
  const int64_t words = (n + 63) / 64;
  /* the bucket queue: costs >= 1, its buckets small, and its scan (one
   * bucket per unit of the least load, at most work_ub / n) short */
  const int use_bq = causal_zig && mincost >= 1 && W * words <= (1 << 16) &&
                     (k1.work_ub / n + 2) * words <= 4 * ntiles + (1 << 16);
  size_t need = (size_t)ng * 4 + 64;                                  /* order */
  need += (sort_count ? ((size_t)maxcost + 1) * 8 : (size_t)ng * 8) + 64; /* its sort */
  need += (size_t)n * 32 + 256;                                        /* lanes, or fill */
  if (causal_zig) /* cta, and the bucket queue or the tree */
    need += (size_t)(ntiles ? ntiles : 1) * 4 + 64 + (use_bq ? (size_t)(W * words + 1) * 8 + 64 : (size_t)Pt * 24 + 128);
  if (!room(&v->tmp, &v->tmp_cap, need)) goto nomem;
  at = v->tmp;
  int32_t *order = carve(&at, (size_t)ng * 4);

  /* 2. The sequences with tiles, by their heaviest tile, descending; ties
   * in natural order. */
  if (zig && minmax == maxcost) { /* one cost: natural order */
    for (int64_t b = 0, i = 0; b < B; b++)
      if (nbv[b]) order[i++] = (int32_t)b;
  } else if (zig && sort_count) {
    int64_t *pos = carve(&at, ((size_t)maxcost + 1) * 8);
    memset(pos, 0, ((size_t)maxcost + 1) * 8);
    for (int64_t b = 0; b < B; b++)
      if (nbv[b]) pos[cmx[b]]++;
    int64_t run = 0;
    for (int64_t cost = maxcost; cost >= 0; cost--) {
      int64_t cnt = pos[cost];
      pos[cost] = run;
      run += cnt;
    }
    for (int64_t b = 0; b < B; b++)
      if (nbv[b]) order[pos[cmx[b]]++] = (int32_t)b;
  } else if (zig) {
    uint64_t *keys = carve(&at, (size_t)ng * 8);
    int64_t i = 0;
    for (int64_t b = 0; b < B; b++)
      if (nbv[b]) keys[i++] = (uint64_t)(INT32_MAX - cmx[b]) << 32 | (uint64_t)b;
    qsort(keys, (size_t)ng, sizeof *keys, key_cmp);
    for (i = 0; i < ng; i++) order[i] = (int32_t)(keys[i] & 0xffffffffu);
  }

  int64_t total = 0, makespan = 0;
  if (causal_zig && mincost < maxcost) {
    /* 3''. Causal: sequence-major, each tile to the least-loaded CTA. */
    int32_t *fill = carve(&at, (size_t)n * 4), *cta = carve(&at, (size_t)(ntiles ? ntiles : 1) * 4);
    memset(fill, 0, (size_t)n * 4);
    causal_order o = {&c, order, nbv, len, ng, H};
    bqueue q = {0};
    ltree t = {NULL, NULL, Pt};
    if (use_bq) {
      bq_init(&q, carve(&at, (size_t)(W * words + 1) * 8), W, n);
    } else {
      t.load = carve(&at, (size_t)Pt * 16);
      t.idx = carve(&at, (size_t)Pt * 8);
      lt_init_loads(&t, n, NULL);
    }
    total = use_bq ? choose_bq(&o, &q, cta, fill) : choose_tree(&o, &t, cta, fill); /* choose (and count) */
    out->cta_start[0] = 0;
    for (int i = 0; i < n; i++) out->cta_start[i + 1] = out->cta_start[i] + fill[i];
    memcpy(fill, out->cta_start, (size_t)n * sizeof *fill);
    place_causal(&o, cta, out->work, fill);
    if (use_bq) {
      makespan = ntiles ? bq_max_load(&q) : 0;
    } else {
      for (int i = 0; i < n; i++) makespan = t.load[Pt + i] > makespan ? t.load[Pt + i] : makespan;
    }
  } else {
    /* List lengths: P full passes, then R tiles in pass P (left to right, or
     * right to left when zigzag and P is odd). */
    int64_t P = ntiles / n, R = ntiles % n;
    int flip = zig && !causal_zig && (P & 1);
    out->cta_start[0] = 0;
    for (int i = 0; i < n; i++) {
      int extra = flip ? i >= n - R : i < R;
      out->cta_start[i + 1] = (int32_t)(out->cta_start[i] + P + extra);
    }
    int64_t *lc0 = carve(&at, (size_t)n * 8), *lc1 = carve(&at, (size_t)n * 8);
    memset(lc0, 0, (size_t)n * 8), memset(lc1, 0, (size_t)n * 8);
    if (causal_zig) {
      /* 3b. Causal, every tile of one cost: the least-loaded CTA is round robin. */
      int32_t *ls0 = carve(&at, (size_t)n * 4);
      for (int i = 0; i < n; i++) ls0[i] = out->cta_start[i];
      causal_order o = {&c, order, nbv, len, ng, H};
      place_round_robin(&o, (int32_t)maxcost, ls0, n, out->work);
      total = ntiles * maxcost;
      lc0[0] = (P + (R > 0)) * maxcost; /* the makespan */
    } else if (zig) {
      /* 3. Sorted: each sequence's tiles are of one cost. */
      int32_t **lp0 = carve(&at, (size_t)n * sizeof *lp0), **lp1 = carve(&at, (size_t)n * sizeof *lp1);
      for (int i = 0; i < n; i++) lp0[i] = out->work + 4 * (int64_t)out->cta_start[i];
      for (int i = 0; i < n; i++) lp1[i] = lp0[n - 1 - i];
      deal_sorted(lp0, lp1, n, order, ng, nbv, cmx, H);
      /* The lanes' costs, from the runs of one cost in rank order: with
       * cost(k) = sum over runs j ending at rank K_j of d_j [k < K_j],
       * d_j = (run j's cost) - (the next run's), lane r of parity q gets
       * sum_j d_j f(K_j), f(K) = #{k < K in that lane}: the passes of
       * parity q below P = K / n, plus one when r < K % n and P has parity
       * q (a scalar per parity and a difference array over the lanes). */
      int64_t S[2] = {0, 0}, k = 0;
      for (int64_t i = 0; i < ng; i++) {
        int64_t cost = cmx[order[i]], next = i + 1 < ng ? cmx[order[i + 1]] : 0;
        k += (int64_t)nbv[order[i]] * H;
        total += cost * nbv[order[i]] * H;
        if (next == cost) continue;
        int64_t dj = cost - next, Pk = k / n, rem = k % n;
        S[0] += dj * ((Pk + 1) / 2), S[1] += dj * (Pk / 2);
        int64_t *D = Pk & 1 ? lc1 : lc0;
        if (rem) D[0] += dj, D[rem] -= dj;
      }
      for (int q = 0; q < 2; q++)
        for (int64_t i = 0, run = S[q], *D = q ? lc1 : lc0; i < n; i++) run += D[i], D[i] = run;
    } else {
      /* Baseline: natural (b, h, m) order, round robin. */
      int32_t *ls0 = carve(&at, (size_t)n * 4);
      for (int i = 0; i < n; i++) ls0[i] = out->cta_start[i];
      lanes d = {out->work, ls0, lc0, n, 0, 0};
      for (int64_t b = 0; b < B; b++)
        if (nbv[b]) deal_lanes(&d, (int32_t)b, nbv[b], H, c.causal || c.win || c.mc ? -1 : cmx[b], &c, len[b]);
      for (int i = 0; i < n; i++) total += lc0[i];
    }
    for (int i = 0; i < n; i++) {
      int64_t l = lc0[i] + (zig && !causal_zig ? lc1[n - 1 - i] : 0);
      makespan = l > makespan ? l : makespan;
    }
  }

  out->total_cost = total;
  out->max_tile_cost = maxcost;
  out->max_cta_cost = makespan;
  /* remember the input, for a rebuild that asks for the same schedule */
  v->nbytes = key_bytes(p);
  if (!room(&v->bytes, &v->bytes_cap, v->nbytes)) goto nomem;
  memcpy(v->bytes, p->lengths ? p->lengths : p->offsets, v->nbytes);
  v->key = key_of(p);
  v->has_key = !p->block_mask; /* a mask's schedule is never reused (same_input) */
  return TILE_OK;

nomem:
  return rt_fail(TILE_ERR_NOMEM, "jagged schedule: out of memory for %lld tiles over %d CTAs", (long long)ntiles, n);
nomem0:
  return rt_fail(TILE_ERR_NOMEM, "jagged schedule: out of memory for %lld sequences", (long long)B);
}

tile_status tile_jagged_schedule_build(const tile_jagged_params *p, tile_jagged_schedule *out) {
  if (!out) return rt_fail(TILE_ERR_INVALID, "tile_jagged_schedule_build: NULL output schedule");
  memset(out, 0, sizeof *out);
  tile_status st = build(p, out);
  if (st != TILE_OK) tile_jagged_schedule_free(out);
  return st;
}

tile_status tile_jagged_schedule_rebuild(const tile_jagged_params *p, tile_jagged_schedule *s) {
  if (!s) return rt_fail(TILE_ERR_INVALID, "tile_jagged_schedule_rebuild: NULL schedule");
  if (same_input(s, p)) {
    s->reused = 1;
    return TILE_OK;
  }
  tile_status st = build(p, s);
  if (st != TILE_OK) tile_jagged_schedule_free(s);
  return st;
}

/* ---- tail splitting (tile/jagged.h, tile_jagged_split_tail) ---- */

void tile_jagged_split_free(tile_jagged_split *o) {
  if (!o) return;
  free(o->work);
  free(o->cta_start);
  free(o->combine);
  memset(o, 0, sizeof *o);
}

static tile_status split_alloc(tile_jagged_split *o, int64_t nitems, int n, int64_t ncombine) {
  o->work = malloc((size_t)(nitems ? nitems : 1) * 8 * sizeof(int32_t));
  o->cta_start = malloc(((size_t)n + 1) * sizeof(int32_t));
  o->combine = malloc((size_t)(ncombine ? ncombine : 1) * 8 * sizeof(int32_t));
  if (o->work && o->cta_start && o->combine) return TILE_OK;
  tile_jagged_split_free(o);
  return rt_fail(TILE_ERR_NOMEM, "jagged split: out of memory for %lld work items", (long long)nitems);
}

static inline void put_item(int32_t *w, const int32_t *tile, int32_t kb, int32_t ke, int32_t part) {
  w[0] = tile[0], w[1] = tile[1], w[2] = tile[2], w[3] = kb, w[4] = ke, w[5] = part, w[6] = 0, w[7] = 0;
}

/* The schedule's own lists in the 8-int format, nothing split.  c: a
 * window's (each item's KV range starts at the window's first block), or
 * NULL. */
static tile_status split_none(const jctx *c, const tile_jagged_schedule *s, tile_jagged_split *o) {
  if (s->ntiles > TILE_JAGGED_MAX_ITEMS)
    return rt_fail(TILE_ERR_INVALID, "jagged split: %lld tiles, more than the %d work items of 8 int32 that int32 "
                                     "indices reach; use larger blocks or split the batch",
                   (long long)s->ntiles, TILE_JAGGED_MAX_ITEMS);
  tile_status st = split_alloc(o, s->ntiles, s->num_ctas, 0);
  if (st != TILE_OK) return st;
  /* {b, h, m, cost} -> {b, h, m, 0, cost, -1, 0, 0}: two 16-byte stores and the cost */
  const v4i keep3 = {-1, -1, -1, 0}, whole = {0, -1, 0, 0};
  const int32_t *src = s->work;
  int32_t *dst = o->work;
  for (int64_t i = 0, nt = s->ntiles; i < nt; i++) {
    v4i t;
    memcpy(&t, src + 4 * i, sizeof t);
    int32_t cost = src[4 * i + 3];
    put_tile(dst + 8 * i, t & keep3);
    put_tile(dst + 8 * i + 4, whole);
    dst[8 * i + 4] = cost;
  }
  if (c) /* a window: {b, h, m, first, first + cost, -1, 0, 0} */
    for (int64_t i = 0, nt = s->ntiles; i < nt; i++) {
      int32_t f = (int32_t)win_first(c, src[4 * i + 2]);
      dst[8 * i + 3] = f, dst[8 * i + 4] += f;
    }
  memcpy(o->cta_start, s->cta_start, ((size_t)s->num_ctas + 1) * sizeof(int32_t));
  o->nitems = s->ntiles;
  o->num_ctas = s->num_ctas;
  o->max_cta_cost = s->max_cta_cost;
  return TILE_OK;
}

/* A block-sparse schedule's tiles in the split: a tile's KV range without
 * the mask, [0, end), and where its visited blocks lie (the kernel skips
 * the others; a tile's cost counts only those it visits). */
typedef struct mask_split {
  const tile_jagged_params *p;
  jctx c;          /* the unmasked cost model: the range's end */
  int64_t *first;  /* per sequence: its mask's first byte (per sequence), or 0 */
} mask_split;

static int64_t seq_len(const tile_jagged_params *p, int64_t b) {
  if (p->lengths) return p->offsets_are_64bit ? ((const int64_t *)p->lengths)[b] : ((const int32_t *)p->lengths)[b];
  if (p->offsets_are_64bit) return ((const int64_t *)p->offsets)[b + 1] - ((const int64_t *)p->offsets)[b];
  return (int64_t)((const int32_t *)p->offsets)[b + 1] - ((const int32_t *)p->offsets)[b];
}

static tile_status mask_split_init(mask_split *m, const tile_jagged_params *p) {
  const jctx c = {bdiv_of(p->block_m), bdiv_of(p->block_n), p->block_m, p->block_n, p->causal != 0};
  m->p = p, m->c = c;
  m->first = malloc((size_t)p->batch * sizeof *m->first);
  if (!m->first) return rt_fail(TILE_ERR_NOMEM, "jagged split: out of memory for %lld sequences", (long long)p->batch);
  int64_t at = 0;
  for (int64_t b = 0; b < p->batch; b++) {
    int64_t nk = bcdiv(c.dn, seq_len(p, b));
    m->first[b] = p->block_mask_mode == TILE_JAGGED_MASK_PER_SEQUENCE ? at : 0;
    at += nk * nk;
  }
  return TILE_OK;
}

/* tile w's unmasked range's end */
static int32_t mask_end(const mask_split *m, const int32_t *w) {
  return (int32_t)tile_cost(&m->c, seq_len(m->p, w[0]), w[2]);
}

/* tile w's n-th visited KV block (from 0), or its range's end */
static int32_t mask_pos(const mask_split *m, const int32_t *w, int64_t n) {
  int64_t L = seq_len(m->p, w[0]), e = tile_cost(&m->c, L, w[2]);
  int64_t row = m->p->block_mask_mode == TILE_JAGGED_MASK_PER_SEQUENCE ? bcdiv(m->c.dn, L) : m->p->block_mask_row;
  const uint8_t *ms = m->p->block_mask + m->first[w[0]] + (int64_t)w[2] * row;
  for (int64_t j = 0, seen = 0; j < e; j++)
    if (ms[j] && seen++ == n) return (int32_t)j;
  return (int32_t)e;
}

/* The schedule's lists, nothing split (a block-sparse one's with each
 * item's unmasked range). */
static tile_status no_split(const jctx *wcp, const mask_split *m, const tile_jagged_schedule *s,
                            tile_jagged_split *o) {
  tile_status st = split_none(wcp, s, o);
  for (int64_t i = 0; st == TILE_OK && m && i < o->nitems; i++) o->work[8 * i + 4] = mask_end(m, o->work + 8 * i);
  return st;
}

/* A piece of a tail tile: KV blocks [kb, ke) of tail tile t (its k-th). */
typedef struct piece {
  int32_t size, t, k, cta;
} piece;

static int piece_cmp(const void *a, const void *b) {
  const piece *x = a, *y = b; /* larger first, then tile, then piece: deterministic */
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return (x->k > y->k) - (x->k < y->k);
}

tile_status tile_jagged_split_tail(const tile_jagged_params *p, const tile_jagged_schedule *s,
                                   const tile_jagged_split_params *sp, tile_jagged_split *out) {
  if (!out) return rt_fail(TILE_ERR_INVALID, "tile_jagged_split_tail: NULL output");
  memset(out, 0, sizeof *out);
  if (!p || !s) return rt_fail(TILE_ERR_INVALID, "tile_jagged_split_tail: NULL parameters or schedule");
  if (p->backward)
    return rt_fail(TILE_ERR_INVALID, "jagged split: tail splitting cuts forward tiles' KV ranges; this schedule is "
                                     "a backward one (params.backward)");
  if (s->num_ctas < 1 || s->num_ctas != p->num_ctas || !s->cta_start || !s->work)
    return rt_fail(TILE_ERR_INVALID, "jagged split: the schedule was not built with these parameters "
                                     "(num_ctas %d, schedule's %d)", p->num_ctas, s->num_ctas);
  if (sp && (sp->min_piece < 1 || sp->piece_overhead < 0 || sp->max_parts < 0))
    return rt_fail(TILE_ERR_INVALID, "jagged split: min_piece must be >= 1, piece_overhead and max_parts >= 0 "
                                     "(got %d, %d, %d)", sp->min_piece, sp->piece_overhead, sp->max_parts);
  tile_status st = check_window(p);
  if (st == TILE_OK) st = jc_check_mask(p);
  if (st != TILE_OK) return st;
  const int win = p->window != 0, masked = p->block_mask != NULL;
  if (win && (!good_block(p->block_m) || !good_block(p->block_n)))
    return rt_fail(TILE_ERR_INVALID, "jagged split: the schedule was not built with these parameters "
                                     "(block_m %d, block_n %d)", p->block_m, p->block_n);
  /* a window's KV ranges start at its first block (win_first) */
  const jctx wc = {bdiv_of(win ? p->block_m : 16), bdiv_of(win ? p->block_n : 16), p->block_m, p->block_n, 0, 0, 0,
                   win, p->window_left, p->window_right};
  const jctx *wcp = win ? &wc : NULL;
  /* a block-sparse tile's pieces cut its visited blocks, not its range */
  mask_split ms = {0}, *msp = masked ? &ms : NULL;
  if (masked && (st = mask_split_init(&ms, p)) != TILE_OK) return st;
  const int lm = win || masked; /* dealt to the least-loaded CTA */
  const int n = s->num_ctas;
  const int64_t P = s->ntiles / n, R0 = s->ntiles % n;
  /* the tail: the zigzag, non-causal deal leaves its lightest tiles in one
   * last partial pass, at position P of R0 lists; a window's deal (to the
   * least-loaded CTA) has the last tile of each CTA above the ideal load */
  if (!sp || sp->max_parts == 0 || !p->zigzag || p->causal || (!lm && R0 == 0)) {
    st = no_split(wcp, msp, s, out);
    free(ms.first);
    return st;
  }

  int64_t *load = calloc((size_t)n, sizeof *load);
  const int64_t Rcap = lm ? n : R0;
  int32_t *tail = malloc((size_t)Rcap * sizeof *tail); /* work index of each tail tile, in rank (window: CTA) order */
  int32_t *kof = malloc((size_t)Rcap * sizeof *kof);   /* pieces of each */
  int32_t *first = malloc((size_t)Rcap * sizeof *first); /* its first partial slot, or -1 (not split) */
  int32_t *keep = malloc((size_t)n * sizeof *keep);      /* whole tiles each CTA keeps: the start of its list */
  int Pw = 1;
  while (Pw < n) Pw <<= 1;
  int64_t *tl = malloc((size_t)2 * Pw * sizeof *tl);
  int32_t *ti = malloc((size_t)2 * Pw * sizeof *ti);
  piece *pc = NULL;
  int64_t R = 0;
  if (!load || !tail || !kof || !first || !keep || !tl || !ti) goto nomem;
  if (!lm) {
    R = R0;
    for (int64_t r = 0; r < R; r++) {
      int c = (P & 1) ? n - 1 - (int)r : (int)r;
      if (s->cta_start[c + 1] - s->cta_start[c] != P + 1) { /* not the layout build() makes */
        st = rt_fail(TILE_ERR_INVALID, "jagged split: the schedule was not built with these parameters");
        goto done;
      }
      tail[r] = s->cta_start[c] + (int32_t)P;
    }
    for (int c = 0; c < n; c++) {
      keep[c] = (int32_t)P;
      for (int64_t i = s->cta_start[c]; i < s->cta_start[c] + P; i++) load[c] += s->work[4 * i + 3];
    }
  } else {
    /* Every CTA got its last tile while it was the least loaded, so without
     * it its load is at most the final least load, at most the ideal. */
    const int64_t ideal = (s->total_cost + n - 1) / n;
    if (s->cta_start[0] != 0 || s->cta_start[n] != s->ntiles) goto bad_layout;
    for (int c = 0; c < n; c++) {
      int32_t a = s->cta_start[c], e = s->cta_start[c + 1];
      if (e < a) goto bad_layout;
      for (int32_t i = a; i < e; i++) load[c] += s->work[4 * (int64_t)i + 3];
      keep[c] = e - a;
      if (e > a && load[c] > ideal) tail[R++] = e - 1, keep[c]--, load[c] -= s->work[4 * (int64_t)(e - 1) + 3];
    }
    if (R == 0) { /* the makespan is the ideal already */
      st = no_split(wcp, msp, s, out);
      goto done;
    }
  }
  /* pieces per tail tile: spread the R tiles over all n CTAs, each piece at
   * least min_piece blocks, at most max_parts partial slots in all */
  int64_t k_each = n / R, parts, npieces;
  for (;; k_each--) {
    parts = npieces = 0;
    for (int64_t r = 0; r < R; r++) {
      int64_t cost = s->work[4 * (int64_t)tail[r] + 3], k = cost / sp->min_piece;
      if (k > k_each) k = k_each;
      if (k < 1) k = 1;
      kof[r] = (int32_t)k;
      npieces += k;
      if (k > 1) parts += k;
    }
    if (parts <= sp->max_parts || k_each <= 1) break;
  }
  if (parts == 0) {
    st = no_split(wcp, msp, s, out);
    goto done;
  }
  pc = malloc((size_t)npieces * sizeof *pc);
  if (!pc) goto nomem;
  {
    int64_t q = 0;
    for (int64_t r = 0; r < R; r++) {
      int64_t cost = s->work[4 * (int64_t)tail[r] + 3], k = kof[r];
      for (int64_t j = 0; j < k; j++)
        pc[q++] = (piece){(int32_t)((j + 1) * cost / k - j * cost / k), (int32_t)r, (int32_t)j, 0};
    }
  }
  qsort(pc, (size_t)npieces, sizeof *pc, piece_cmp);
  /* largest piece first, each to the least-loaded CTA */
  ltree t = {tl, ti, Pw};
  lt_init_loads(&t, n, load);
  for (int64_t i = 0; i < npieces; i++) {
    int64_t extra = kof[pc[i].t] > 1 ? sp->piece_overhead : 0;
    pc[i].cta = lt_take(&t, pc[i].size + extra);
  }
  int64_t m1 = 0;
  for (int c = 0; c < n; c++)
    if (t.load[Pw + c] > m1) m1 = t.load[Pw + c];
  if (m1 > s->max_cta_cost - s->max_cta_cost / 100) { /* under 1% better: not worth a second kernel */
    st = no_split(wcp, msp, s, out);
    goto done;
  }
  int64_t ncomb = 0;
  for (int64_t r = 0; r < R; r++) ncomb += kof[r] > 1;
  int64_t nitems = s->ntiles - R + npieces;
  if (nitems > TILE_JAGGED_MAX_ITEMS) {
    st = no_split(wcp, msp, s, out);
    goto done;
  }
  if ((st = split_alloc(out, nitems, n, ncomb)) != TILE_OK) goto done;
  /* list lengths: the whole tiles kept, then the pieces given to the CTA */
  memset(load, 0, (size_t)n * sizeof *load); /* reused: pieces per CTA, then fill positions */
  for (int64_t i = 0; i < npieces; i++) load[pc[i].cta]++;
  out->cta_start[0] = 0;
  for (int c = 0; c < n; c++) out->cta_start[c + 1] = out->cta_start[c] + (int32_t)(keep[c] + load[c]);
  for (int c = 0; c < n; c++) {
    for (int64_t i = 0; i < keep[c]; i++) {
      const int32_t *w = s->work + 4 * (s->cta_start[c] + i);
      int32_t f = (int32_t)win_first(&wc, w[2]);
      put_item(out->work + 8 * ((int64_t)out->cta_start[c] + i), w, f, masked ? mask_end(&ms, w) : f + w[3], -1);
    }
    load[c] = out->cta_start[c] + keep[c];
  }
  /* partial slots: tail tiles in rank order, pieces in KV order */
  int64_t slot = 0, e = 0;
  for (int64_t r = 0; r < R; r++) {
    int32_t k = kof[r];
    first[r] = k > 1 ? (int32_t)slot : -1;
    if (k > 1) {
      const int32_t *w = s->work + 4 * (int64_t)tail[r];
      int32_t *ce = out->combine + 8 * e++;
      ce[0] = w[0], ce[1] = w[1], ce[2] = w[2], ce[3] = (int32_t)slot, ce[4] = k, ce[5] = ce[6] = ce[7] = 0;
      slot += k;
    }
  }
  for (int64_t i = 0; i < npieces; i++) {
    const int32_t *w = s->work + 4 * (int64_t)tail[pc[i].t];
    int64_t cost = w[3], k = kof[pc[i].t];
    int32_t f = (int32_t)win_first(&wc, w[2]);
    int32_t kb = f + (int32_t)(pc[i].k * cost / k), ke = f + (int32_t)((pc[i].k + 1) * cost / k);
    if (masked) /* its visited blocks pc[i].k * cost / k .. (pc[i].k + 1) * cost / k - 1 */
      kb = mask_pos(&ms, w, pc[i].k * cost / k), ke = mask_pos(&ms, w, (pc[i].k + 1) * cost / k);
    put_item(out->work + 8 * load[pc[i].cta]++, w, kb, ke, k > 1 ? first[pc[i].t] + pc[i].k : -1);
  }
  out->nitems = nitems;
  out->nparts = slot;
  out->ncombine = ncomb;
  out->num_ctas = n;
  out->max_cta_cost = m1;
  goto done;
bad_layout:
  st = rt_fail(TILE_ERR_INVALID, "jagged split: the schedule was not built with these parameters");
  goto done;
nomem:
  st = rt_fail(TILE_ERR_NOMEM, "jagged split: out of memory for %lld tiles over %d CTAs", (long long)s->ntiles, n);
done:
  free(load), free(tail), free(kof), free(first), free(keep), free(tl), free(ti), free(pc), free(ms.first);
  return st;
}

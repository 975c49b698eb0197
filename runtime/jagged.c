/* jagged.c - the host-side tile scheduler of Jagged Flash Attention
 * (include/tile/jagged.h; docs/runtime.md, "Jagged tile scheduling").
 *
 * A tile's cost depends on (b, m) only, and never decreases with m, so the
 * tiles of one cost in one sequence are a run of query blocks m_lo..m_hi (for
 * every head).  The scheduler sorts these runs ("segments": one per sequence
 * when not causal, at most one per query block when causal), not the tiles:
 *   1. validate: count tiles and segments, find the largest cost, reject
 *      what would overflow int32;
 *   2. list the segments in natural (b, m) order and sort them by cost,
 *      descending, with a stable counting sort (a qsort on unique (cost,
 *      index) keys when costs are far above the segment count: enormous KV
 *      sequences against few query blocks); causal: sort the sequences by
 *      their heaviest tile instead, keep each sequence's tiles together,
 *      heaviest first, and deal them to the least-loaded CTA (L2 reuse of
 *      its K/V and a makespan within one tile of the mean; deal_causal);
 *   3. walk the sorted segments, each as "for h: for m" -- which is the
 *      (b, h, m) tie order -- and deal the tiles in that order: rank k lands
 *      in pass p = k / num_ctas at lane r = k % num_ctas, which is CTA r on
 *      even passes and CTA num_ctas-1-r on odd ones, at position p of that
 *      CTA's list.  List lengths are known in advance, so every tile is
 *      written once, straight to its final slot, and consecutive ranks write
 *      num_ctas sequential streams (cache friendly).
 * Without zigzag, step 2 is skipped and the tiles are dealt round robin in
 * natural order.
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "tile/jagged.h"

/* ---- offsets ---- */

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

/* ---- the cost model ---- */

typedef struct jctx {
  const void *off;
  int is64;
  int64_t bm, bn; /* block_m, block_n */
  int causal;
  int64_t nqb; /* broadcast-Q: query blocks per (b, h); 0 in self-attention */
  int bwd;     /* backward tiles: KV blocks, costed by the query blocks they meet */
} jctx;

static inline int64_t seq_len(const jctx *c, int64_t b) {
  return off_at(c->off, c->is64, b + 1) - off_at(c->off, c->is64, b);
}

/* Tiles of sequence b, of L rows (0: none): its query blocks (forward), or
 * its KV blocks (backward). */
static inline int64_t seq_blocks(const jctx *c, int64_t L) {
  if (c->bwd) return (L + c->bn - 1) / c->bn;
  return c->nqb ? c->nqb : (L + c->bm - 1) / c->bm;
}

/* Forward: KV blocks visited by query block m of a sequence of L rows.
 * Backward: query blocks met by KV block m. */
static inline int64_t tile_cost(const jctx *c, int64_t L, int64_t m) {
  if (c->bwd) {
    if (c->nqb) return c->nqb;
    int64_t q = (L + c->bm - 1) / c->bm;
    return c->causal ? q - (m * c->bn) / c->bm : q;
  }
  if (!c->causal) return (L + c->bn - 1) / c->bn;
  int64_t e = (m + 1) * c->bm;
  if (e > L) e = L;
  return (e - 1) / c->bn + 1;
}

/* Block sizes: multiples of 16 from 16 to 256 (a KV block of 160 or 176
 * rows is a wgmma N or K that is not a power of two). */
static int good_block(int v) { return v >= 16 && v <= 256 && v % 16 == 0; }

/* Query blocks m_lo..m_hi of sequence b, all of one cost. */
typedef struct segment {
  int32_t b, m_lo, m_hi, cost;
} segment;

/* The segments of the batch in natural (b, m) order.  SEG_COUNT: pos[cost]++
 * for each; SEG_LIST: dst[0], dst[1], ...; SEG_SCATTER: dst[pos[cost]++].
 * Returns the number of segments. */
enum { SEG_COUNT, SEG_LIST, SEG_SCATTER };

static int64_t list_segments(const jctx *c, int64_t B, int mode, segment *dst, int64_t *pos) {
  int64_t ns = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t L = seq_len(c, b);
    int64_t nb = seq_blocks(c, L);
    if (nb == 0) continue;
    int64_t lo = 0, cost = tile_cost(c, L, 0);
    for (int64_t m = c->causal ? 1 : nb; m <= nb; m++) {
      int64_t next = m < nb ? tile_cost(c, L, m) : -1;
      if (next == cost) continue;
      segment s = {(int32_t)b, (int32_t)lo, (int32_t)(m - 1), (int32_t)cost};
      if (mode == SEG_COUNT) pos[cost]++;
      else if (mode == SEG_LIST) dst[ns] = s;
      else dst[pos[cost]++] = s;
      ns++;
      lo = m;
      cost = next;
    }
  }
  return ns;
}

/* ---- dealing ---- */

typedef struct dealer {
  int32_t *work;
  const int32_t *start;
  int64_t *cta_cost;
  int64_t total;
  int64_t p; /* the next rank is p * n + r: pass p, lane r */
  int r;
  int n, zig;
} dealer;

/* Deal tiles (b, h, m_lo..m_hi), h = h0..h1-1, at the next ranks.  The state
 * lives in locals: the int32 stores into work could alias the dealer's fields. */
static inline void deal_segment(dealer *d, const segment *s, int h0, int h1) {
  int32_t *const work = d->work;
  const int32_t *const start = d->start;
  int64_t *const cta_cost = d->cta_cost;
  const int n = d->n, zig = d->zig;
  const int32_t b = s->b, m_lo = s->m_lo, m_hi = s->m_hi, cost = s->cost;
  int64_t p = d->p;
  int r = d->r;
  for (int h = h0; h < h1; h++)
    for (int32_t m = m_lo; m <= m_hi; m++) {
      int c = (zig && (p & 1)) ? n - 1 - r : r;
      int32_t *t = work + 4 * (start[c] + p);
      t[0] = b;
      t[1] = h;
      t[2] = m;
      t[3] = cost;
      cta_cost[c] += cost;
      if (++r == n) {
        r = 0;
        p++;
      }
    }
  d->p = p;
  d->r = r;
  d->total += (int64_t)cost * (h1 - h0) * (m_hi - m_lo + 1);
}

static int key_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

void tile_jagged_schedule_free(tile_jagged_schedule *s) {
  if (!s) return;
  free(s->work);
  free(s->cta_start);
  memset(s, 0, sizeof *s);
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
 * running together. */
typedef struct causal_order {
  const segment *seg;
  const int64_t *first; /* first[g] .. first[g+1]-1: the segments of sequence group g */
  const uint64_t *keys; /* groups in dealing order (low 32 bits: g) */
  int64_t ng;
  int H;
  int bwd;              /* backward: a sequence's costs fall with m, so its heaviest tiles come first */
} causal_order;

/* The least-loaded CTA: a tournament tree over the CTAs' loads.  Node i
 * (1 <= i < P) holds the load and index of the better of its children
 * (less load, ties: lower index); leaf P + c is CTA c, leaves past num_ctas
 * hold INT64_MAX.  Taking a tile updates one leaf-to-root path: log2(n)
 * compare-and-copy steps on adjacent entries. */
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

/* Walk the tiles in dealing order.  cta == NULL is not allowed; with
 * t != NULL each tile is given to the least-loaded CTA and its choice
 * recorded in cta[k] (and counted in pos[]); with t == NULL the recorded
 * choices place the tiles at work[4 * pos[c]++].  Returns the total cost. */
static int64_t deal_causal(const causal_order *o, ltree *t, int32_t *cta, int32_t *work, int32_t *pos) {
  int64_t total = 0, k = 0;
  for (int64_t g = 0; g < o->ng; g++) {
    int64_t gi = (int64_t)(o->keys[g] & 0xffffffffu), nseg = o->first[gi + 1] - o->first[gi];
    for (int64_t qi = 0; qi < nseg; qi++) {
      const segment *s = &o->seg[o->bwd ? o->first[gi] + qi : o->first[gi + 1] - 1 - qi];
      int32_t span = s->m_hi - s->m_lo;
      for (int32_t mi = 0; mi <= span; mi++)
        for (int h = 0, m = o->bwd ? s->m_lo + mi : s->m_hi - mi; h < o->H; h++, k++) {
          total += s->cost;
          if (t) {
            int32_t c = lt_take(t, s->cost);
            cta[k] = c;
            pos[c]++;
            continue;
          }
          int32_t *w = work + 4 * (int64_t)pos[cta[k]]++;
          w[0] = s->b, w[1] = h, w[2] = m, w[3] = s->cost;
        }
    }
  }
  return total;
}

/* Build into out, reusing its arrays when they are large enough. */
static tile_status build(const tile_jagged_params *p, tile_jagged_schedule *out) {
  out->ntiles = out->total_cost = out->max_cta_cost = out->max_tile_cost = 0;
  out->num_ctas = 0;
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
  tile_status st = tile_jagged_check_offsets(p->offsets, p->batch, p->offsets_are_64bit, -1);
  if (st != TILE_OK) return st;

  jctx c = {p->offsets, p->offsets_are_64bit != 0, p->block_m, p->block_n, p->causal != 0, 0, p->backward != 0};
  if (p->num_q > 0) {
    c.nqb = (p->num_q + p->block_m - 1) / p->block_m;
    if (c.nqb > TILE_JAGGED_MAX_TILES)
      return rt_fail(TILE_ERR_INVALID, "jagged schedule: num_q = %lld gives %lld query blocks per (sequence, head), "
                                       "more than the %d tiles a schedule can hold",
                     (long long)p->num_q, (long long)c.nqb, TILE_JAGGED_MAX_TILES);
  }
  const int n = p->num_ctas, H = p->heads, zig = p->zigzag != 0;
  const int64_t B = p->batch;

  /* 1. Count tiles and (an upper bound of) segments, find the largest cost. */
  int64_t ntiles = 0, nseg = 0, maxcost = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t L = seq_len(&c, b);
    int64_t nb = seq_blocks(&c, L);
    if (nb == 0) continue;
    if (nb > TILE_JAGGED_MAX_TILES || (ntiles += nb * H) > TILE_JAGGED_MAX_TILES)
      return rt_fail(TILE_ERR_INVALID,
                     "jagged schedule: more than %d tiles (reached at sequence %lld of %lld rows, %lld query blocks "
                     "x %d heads): tile indices would overflow int32; use larger blocks or split the batch",
                     TILE_JAGGED_MAX_TILES, (long long)b, (long long)L, (long long)nb, H);
    /* costs never decrease with m (forward) or never increase (backward) */
    int64_t cmin = tile_cost(&c, L, 0), cmax = tile_cost(&c, L, nb - 1);
    if (cmin > cmax) {
      int64_t t = cmin;
      cmin = cmax, cmax = t;
    }
    if (cmax > INT32_MAX)
      return rt_fail(TILE_ERR_INVALID,
                     "jagged schedule: sequence %lld has %lld KV rows, %lld blocks of %d: the tile cost overflows int32",
                     (long long)b, (long long)L, (long long)cmax, p->block_n);
    if (cmax > maxcost) maxcost = cmax;
    nseg += cmax - cmin + 1 < nb ? cmax - cmin + 1 : nb;
  }

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
  int64_t *cta_cost = calloc((size_t)n, sizeof(int64_t));
  segment *seg = malloc((size_t)(nseg ? nseg : 1) * sizeof *seg);
  int64_t *pos = NULL;
  if (!out->cta_start || !out->work || !cta_cost || !seg) goto nomem;
  out->num_ctas = n;
  out->ntiles = ntiles;

  /* List lengths: P full passes, then R tiles in pass P (left to right, or
   * right to left when zigzag and P is odd). */
  {
    int64_t P = ntiles / n, R = ntiles % n;
    int flip = zig && (P & 1);
    out->cta_start[0] = 0;
    for (int i = 0; i < n; i++) {
      int extra = flip ? i >= n - R : i < R;
      out->cta_start[i + 1] = (int32_t)(out->cta_start[i] + P + extra);
    }
  }

  dealer d = {out->work, out->cta_start, cta_cost, 0, 0, 0, n, zig};
  if (!zig) {
    /* Baseline: natural (b, h, m) order, round robin.  A causal sequence has
     * several segments: deal all of them for head 0, then for head 1, ... */
    int64_t ns = list_segments(&c, B, SEG_LIST, seg, NULL);
    for (int64_t i = 0, j; i < ns; i = j) {
      for (j = i + 1; j < ns && seg[j].b == seg[i].b; j++) {}
      for (int h = 0; h < H; h++)
        for (int64_t k = i; k < j; k++) deal_segment(&d, &seg[k], h, h + 1);
    }
  } else if (c.causal) {
    /* 2'', 3''. Causal: sequence-major, dealt greedily (see deal_causal). */
    int64_t ns = list_segments(&c, B, SEG_LIST, seg, NULL);
    uint64_t *keys = malloc((size_t)(ns ? ns : 1) * sizeof *keys);
    int64_t *first = malloc((size_t)(ns + 1) * sizeof *first);
    int P = 1;
    while (P < n) P <<= 1;
    int32_t *fill = calloc((size_t)n, sizeof *fill), *idx = malloc((size_t)2 * P * sizeof *idx);
    int64_t *load = malloc((size_t)2 * P * sizeof *load);
    int32_t *cta = malloc((size_t)(ntiles ? ntiles : 1) * sizeof *cta);
    if (!keys || !first || !fill || !idx || !load || !cta) {
      free(keys), free(first), free(fill), free(idx), free(load), free(cta);
      goto nomem;
    }
    int64_t ng = 0;
    for (int64_t i = 0, j; i < ns; i = j, ng++) {
      for (j = i + 1; j < ns && seg[j].b == seg[i].b; j++) {}
      first[ng] = i; /* a sequence's segments: ascending m, ascending cost (backward: descending) */
      keys[ng] = (uint64_t)(INT32_MAX - seg[c.bwd ? i : j - 1].cost) << 32 | (uint64_t)ng;
    }
    first[ng] = ns;
    qsort(keys, (size_t)ng, sizeof *keys, key_cmp);
    causal_order o = {seg, first, keys, ng, H, c.bwd};
    ltree t = {load, idx, P};
    lt_init_loads(&t, n, NULL);
    deal_causal(&o, &t, cta, NULL, fill); /* choose (and count) */
    out->cta_start[0] = 0;
    for (int i = 0; i < n; i++) out->cta_start[i + 1] = out->cta_start[i] + fill[i];
    memcpy(fill, out->cta_start, (size_t)n * sizeof *fill);
    d.total = deal_causal(&o, NULL, cta, out->work, fill); /* place */
    memcpy(cta_cost, load + P, (size_t)n * sizeof *load);
    free(keys), free(first), free(fill), free(idx), free(load), free(cta);
  } else if (maxcost <= nseg + (1 << 16)) {
    /* 2, 3. Counting sort, highest cost first; ties keep natural order. */
    pos = calloc((size_t)maxcost + 1, sizeof *pos);
    if (!pos) goto nomem;
    list_segments(&c, B, SEG_COUNT, NULL, pos);
    int64_t run = 0;
    for (int64_t cost = maxcost; cost >= 0; cost--) {
      int64_t cnt = pos[cost];
      pos[cost] = run;
      run += cnt;
    }
    int64_t ns = list_segments(&c, B, SEG_SCATTER, seg, pos);
    for (int64_t i = 0; i < ns; i++) deal_segment(&d, &seg[i], 0, H);
  } else {
    /* 2, 3'. Few segments with huge costs: sort unique (cost, index) keys. */
    int64_t ns = list_segments(&c, B, SEG_LIST, seg, NULL);
    uint64_t *keys = malloc((size_t)(ns ? ns : 1) * sizeof *keys);
    if (!keys) goto nomem;
    for (int64_t i = 0; i < ns; i++) keys[i] = (uint64_t)(INT32_MAX - seg[i].cost) << 32 | (uint64_t)i;
    qsort(keys, (size_t)ns, sizeof *keys, key_cmp);
    for (int64_t i = 0; i < ns; i++) deal_segment(&d, &seg[keys[i] & 0xffffffffu], 0, H);
    free(keys);
  }

  out->total_cost = d.total;
  out->max_tile_cost = maxcost;
  for (int i = 0; i < n; i++)
    if (cta_cost[i] > out->max_cta_cost) out->max_cta_cost = cta_cost[i];
  free(cta_cost);
  free(seg);
  free(pos);
  return TILE_OK;

nomem:
  free(cta_cost);
  free(seg);
  free(pos);
  return rt_fail(TILE_ERR_NOMEM, "jagged schedule: out of memory for %lld tiles over %d CTAs", (long long)ntiles, n);
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

/* The schedule's own lists in the 8-int format, nothing split. */
static tile_status split_none(const tile_jagged_schedule *s, tile_jagged_split *o) {
  if (s->ntiles > TILE_JAGGED_MAX_ITEMS)
    return rt_fail(TILE_ERR_INVALID, "jagged split: %lld tiles, more than the %d work items of 8 int32 that int32 "
                                     "indices reach; use larger blocks or split the batch",
                   (long long)s->ntiles, TILE_JAGGED_MAX_ITEMS);
  tile_status st = split_alloc(o, s->ntiles, s->num_ctas, 0);
  if (st != TILE_OK) return st;
  for (int64_t i = 0; i < s->ntiles; i++) put_item(o->work + 8 * i, s->work + 4 * i, 0, s->work[4 * i + 3], -1);
  memcpy(o->cta_start, s->cta_start, ((size_t)s->num_ctas + 1) * sizeof(int32_t));
  o->nitems = s->ntiles;
  o->num_ctas = s->num_ctas;
  o->max_cta_cost = s->max_cta_cost;
  return TILE_OK;
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
  const int n = s->num_ctas;
  const int64_t P = s->ntiles / n, R = s->ntiles % n;
  /* only the zigzag, non-causal deal leaves its lightest tiles in one last
   * partial pass, at position P of R lists */
  if (!sp || sp->max_parts == 0 || !p->zigzag || p->causal || R == 0) return split_none(s, out);

  int64_t *load = calloc((size_t)n, sizeof *load);
  int32_t *tail = malloc((size_t)R * sizeof *tail); /* work index of each tail tile, in rank order */
  int32_t *kof = malloc((size_t)R * sizeof *kof);   /* pieces of each */
  int32_t *first = malloc((size_t)R * sizeof *first); /* its first partial slot, or -1 (not split) */
  int Pw = 1;
  while (Pw < n) Pw <<= 1;
  int64_t *tl = malloc((size_t)2 * Pw * sizeof *tl);
  int32_t *ti = malloc((size_t)2 * Pw * sizeof *ti);
  piece *pc = NULL;
  tile_status st = TILE_OK;
  if (!load || !tail || !kof || !first || !tl || !ti) goto nomem;
  for (int c = 0; c < n; c++)
    for (int64_t i = s->cta_start[c]; i < s->cta_start[c] + P; i++) load[c] += s->work[4 * i + 3];
  for (int64_t r = 0; r < R; r++) {
    int c = (P & 1) ? n - 1 - (int)r : (int)r;
    if (s->cta_start[c + 1] - s->cta_start[c] != P + 1) { /* not the layout build() makes */
      st = rt_fail(TILE_ERR_INVALID, "jagged split: the schedule was not built with these parameters");
      goto done;
    }
    tail[r] = s->cta_start[c] + (int32_t)P;
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
    st = split_none(s, out);
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
    st = split_none(s, out);
    goto done;
  }
  int64_t ncomb = 0;
  for (int64_t r = 0; r < R; r++) ncomb += kof[r] > 1;
  int64_t nitems = P * n + npieces;
  if (nitems > TILE_JAGGED_MAX_ITEMS) {
    st = split_none(s, out);
    goto done;
  }
  if ((st = split_alloc(out, nitems, n, ncomb)) != TILE_OK) goto done;
  /* list lengths: P whole tiles, then the pieces given to the CTA */
  memset(load, 0, (size_t)n * sizeof *load); /* reused: pieces per CTA, then fill positions */
  for (int64_t i = 0; i < npieces; i++) load[pc[i].cta]++;
  out->cta_start[0] = 0;
  for (int c = 0; c < n; c++) out->cta_start[c + 1] = out->cta_start[c] + (int32_t)(P + load[c]);
  for (int c = 0; c < n; c++) {
    for (int64_t i = 0; i < P; i++) {
      const int32_t *w = s->work + 4 * (s->cta_start[c] + i);
      put_item(out->work + 8 * ((int64_t)out->cta_start[c] + i), w, 0, w[3], -1);
    }
    load[c] = out->cta_start[c] + P;
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
    int32_t kb = (int32_t)(pc[i].k * cost / k), ke = (int32_t)((pc[i].k + 1) * cost / k);
    put_item(out->work + 8 * load[pc[i].cta]++, w, kb, ke, k > 1 ? first[pc[i].t] + pc[i].k : -1);
  }
  out->nitems = nitems;
  out->nparts = slot;
  out->ncombine = ncomb;
  out->num_ctas = n;
  out->max_cta_cost = m1;
  goto done;
nomem:
  st = rt_fail(TILE_ERR_NOMEM, "jagged split: out of memory for %lld tiles over %d CTAs", (long long)s->ntiles, n);
done:
  free(load), free(tail), free(kof), free(first), free(tl), free(ti), free(pc);
  return st;
}

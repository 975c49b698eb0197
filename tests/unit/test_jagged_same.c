/* test_jagged_same.c - the tile scheduler (runtime/jagged.c) against the
 * implementation it replaced, kept below as the reference: runtime/jagged.c
 * of commit 7dcf099 (segments, a qsort of the causal sequences, a
 * tournament tree for every causal tile), unchanged but for the names
 * ref_build and ref_split_tail.  The kernels read the work lists as they
 * are, so the new scheduler must give the same bytes:
 *
 *   - random batches of every mode (forward, backward; self, causal,
 *     broadcast-Q; zigzag on and off; int32 and int64 offsets) and shape
 *     (short and long sequences, empty ones, all of one length, skewed;
 *     1 to 300 CTAs and some past 64 or 2^16; every block size): the same
 *     work lists, list starts and totals as the reference, and the same
 *     tail split (work items, combine entries, makespan);
 *   - the paths inside: the bucket queue and the tree of the causal
 *     dealing, one cost (round robin), the qsort of huge costs;
 *   - lengths in place of offsets give the same schedule; bad lengths are
 *     rejected;
 *   - rebuild: a new batch is rebuilt (s.reused = 0, the reference's
 *     bytes), the same batch again is kept (s.reused = 1, nothing touched),
 *     a changed length or parameter is rebuilt.
 */
#include "testutil.h"
#include "tile/jagged.h"
#include "tile/runtime.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rng(void) { return tu_xorshift(&rng_state); }

/* ================= the reference (runtime/jagged.c of 7dcf099) ================= */

static tile_status rt_fail(tile_status s, const char *fmt, ...) {
  (void)fmt;
  return s;
}

static inline int64_t off_at(const void *o, int is64, int64_t i) {
  return is64 ? ((const int64_t *)o)[i] : (int64_t)((const int32_t *)o)[i];
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
static tile_status ref_build(const tile_jagged_params *p, tile_jagged_schedule *out) {
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

/* ---- tail splitting (tile/jagged.h, tile_jagged_split_tail) ---- */


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

static tile_status ref_split_tail(const tile_jagged_params *p, const tile_jagged_schedule *s,
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

/* ================= the tests ================= */

static void ref_ok(const tile_jagged_params *p, tile_jagged_schedule *r) {
  memset(r, 0, sizeof *r);
  assert_int_equal(ref_build(p, r), TILE_OK);
}

static void ref_free(tile_jagged_schedule *r) {
  free(r->work), free(r->cta_start);
  memset(r, 0, sizeof *r);
}

/* s holds exactly the reference's schedule for p */
static void same_schedule(const tile_jagged_params *p, const tile_jagged_schedule *s) {
  tile_jagged_schedule r;
  ref_ok(p, &r);
  assert_int_equal(s->num_ctas, r.num_ctas);
  assert_int_equal(s->ntiles, r.ntiles);
  assert_int_equal(s->total_cost, r.total_cost);
  assert_int_equal(s->max_cta_cost, r.max_cta_cost);
  assert_int_equal(s->max_tile_cost, r.max_tile_cost);
  assert_memory_equal(s->cta_start, r.cta_start, ((size_t)r.num_ctas + 1) * 4);
  if (r.ntiles) assert_memory_equal(s->work, r.work, (size_t)r.ntiles * 16);
  ref_free(&r);
}

static void same_split(const tile_jagged_params *p, const tile_jagged_schedule *s, const tile_jagged_split_params *sp) {
  tile_jagged_split a, b;
  tile_status sa = tile_jagged_split_tail(p, s, sp, &a), sb = ref_split_tail(p, s, sp, &b);
  assert_int_equal(sa, sb);
  if (sa == TILE_OK) {
    assert_int_equal(a.nitems, b.nitems);
    assert_int_equal(a.nparts, b.nparts);
    assert_int_equal(a.ncombine, b.ncombine);
    assert_int_equal(a.max_cta_cost, b.max_cta_cost);
    assert_int_equal(a.num_ctas, b.num_ctas);
    assert_memory_equal(a.cta_start, b.cta_start, ((size_t)a.num_ctas + 1) * 4);
    if (a.nitems) assert_memory_equal(a.work, b.work, (size_t)a.nitems * 32);
    if (a.ncombine) assert_memory_equal(a.combine, b.combine, (size_t)a.ncombine * 32);
  }
  tile_jagged_split_free(&a), tile_jagged_split_free(&b);
}

static const int blocks[] = {16, 32, 48, 64, 128, 160, 176, 256};

/* B lengths of one of several shapes */
static int64_t *random_lengths(int64_t B) {
  int64_t *len = malloc((size_t)B * sizeof *len);
  int shape = (int)(rng() % 6);
  int64_t maxlen = shape == 0 ? 64 : shape == 1 ? 700 : 4000;
  int64_t same = 1 + (int64_t)(rng() % 600);
  for (int64_t b = 0; b < B; b++) {
    uint64_t r = rng();
    if (shape == 3) len[b] = same; /* all of one length */
    else if (shape == 4) len[b] = r % 10 < 3 ? 0 : (int64_t)(r % 8) * 128; /* empty, whole blocks */
    else if (shape == 5) len[b] = r % 100 < 90 ? 1 + (int64_t)(r % 200) : 2000 + (int64_t)(r % 9000); /* skewed */
    else len[b] = r % 8 == 0 ? 0 : (int64_t)(r % (uint64_t)(maxlen + 1));
  }
  return len;
}

static void offsets_of(const int64_t *len, int64_t B, int64_t **o64, int32_t **o32) {
  *o64 = malloc((size_t)(B + 1) * sizeof **o64);
  *o32 = malloc((size_t)(B + 1) * sizeof **o32);
  (*o64)[0] = 0;
  for (int64_t b = 0; b < B; b++) (*o64)[b + 1] = (*o64)[b] + len[b];
  for (int64_t b = 0; b <= B; b++) (*o32)[b] = (int32_t)(*o64)[b];
}

static int random_ctas(void) {
  uint64_t r = rng() % 20;
  if (r == 0) return 1;
  if (r == 1) return 65 + (int)(rng() % 200); /* several words of the bucket queue */
  if (r == 2) return 70000;                   /* the bucket queue would be too large: the tree */
  return 1 + (int)(rng() % 150);
}

static void test_random_same(void **state) {
  (void)state;
  for (int iter = 0; iter < 600; iter++) {
    int64_t B = 1 + (int64_t)(rng() % (iter % 10 == 0 ? 3000 : 60));
    int64_t *len = random_lengths(B), *o64;
    int32_t *o32;
    offsets_of(len, B, &o64, &o32);
    tile_jagged_params p = {0};
    p.batch = B;
    p.offsets_are_64bit = (int)(rng() % 2);
    p.offsets = p.offsets_are_64bit ? (const void *)o64 : (const void *)o32;
    p.heads = 1 + (int)(rng() % 9);
    p.block_m = blocks[rng() % 8], p.block_n = blocks[rng() % 8];
    p.backward = (int)(rng() % 2);
    int mode = (int)(rng() % 5); /* self twice, causal twice, broadcast-Q */
    p.causal = mode == 1 || mode == 2;
    p.num_q = mode == 4 ? 1 + (int64_t)(rng() % 700) : 0;
    p.num_ctas = random_ctas();
    p.zigzag = rng() % 4 != 0;
    tile_jagged_schedule s;
    assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
    same_schedule(&p, &s);
    if (!p.backward) {
      tile_jagged_split_params sp = {1 + (int)(rng() % 6), (int)(rng() % 3), rng() % 3 ? p.num_ctas : (int)(rng() % 8)};
      same_split(&p, &s, rng() % 8 ? &sp : NULL);
    }
    /* the same from the lengths */
    tile_jagged_params q = p;
    q.offsets = NULL;
    int64_t *l64 = len;
    int32_t *l32 = malloc((size_t)B * sizeof *l32);
    for (int64_t b = 0; b < B; b++) l32[b] = (int32_t)len[b];
    q.lengths = q.offsets_are_64bit ? (const void *)l64 : (const void *)l32;
    tile_jagged_schedule t;
    assert_int_equal(tile_jagged_schedule_build(&q, &t), TILE_OK);
    same_schedule(&p, &t);
    tile_jagged_schedule_free(&s), tile_jagged_schedule_free(&t);
    free(len), free(l32), free(o64), free(o32);
  }
}

/* The causal dealing's paths: one cost (round robin), the bucket queue,
 * the tree (costs past what the bucket queue holds, or a scan too long for
 * few CTAs), on batches of short and long sequences. */
static void test_causal_paths(void **state) {
  (void)state;
  static const int64_t maxlens[] = {64, 128, 1000, 9000, 70000, 300000};
  static const int ctas[] = {1, 2, 7, 64, 132, 200, 1000, 70000};
  for (int iter = 0; iter < 200; iter++) {
    int64_t B = 1 + (int64_t)(rng() % 400), maxlen = maxlens[rng() % 6];
    int64_t *len = malloc((size_t)B * sizeof *len), *o64;
    int32_t *o32;
    for (int64_t b = 0; b < B; b++) len[b] = rng() % 3 ? 1 + (int64_t)(rng() % 64) : (int64_t)(rng() % (uint64_t)maxlen);
    offsets_of(len, B, &o64, &o32);
    tile_jagged_params p = {0};
    p.batch = B, p.offsets = o32, p.heads = 1 + (int)(rng() % 8), p.causal = 1, p.zigzag = 1;
    p.block_m = rng() % 2 ? 128 : 64, p.block_n = rng() % 2 ? 128 : 176, p.backward = (int)(rng() % 2);
    p.num_ctas = ctas[rng() % 8];
    tile_jagged_schedule s;
    assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
    same_schedule(&p, &s);
    tile_jagged_schedule_free(&s);
    free(len), free(o64), free(o32);
  }
}

/* Costs far above the sequence count: the qsort of (cost, b) keys. */
static void test_huge_costs_same(void **state) {
  (void)state;
  int64_t len[6] = {(int64_t)1 << 30, 3, (int64_t)1 << 29, 0, ((int64_t)1 << 30) - 5, 1 << 20};
  int64_t off[7] = {0};
  for (int b = 0; b < 6; b++) off[b + 1] = off[b] + len[b];
  for (int mode = 0; mode < 6; mode++) {
    tile_jagged_params p = {0};
    p.batch = 6, p.offsets = off, p.offsets_are_64bit = 1, p.heads = 2, p.block_m = 256, p.block_n = 16;
    p.num_q = mode < 2 ? 70 : 0, p.causal = mode >= 4, p.backward = mode == 3, p.num_ctas = 3, p.zigzag = mode != 1;
    if (p.causal || p.backward) p.batch = 2, len[0] = 1 << 22; /* keep the tile count small */
    if (p.causal || p.backward) off[1] = len[0], off[2] = off[1] + 3;
    tile_jagged_schedule s;
    assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
    same_schedule(&p, &s);
    tile_jagged_schedule_free(&s);
  }
}

static void test_lengths_bad(void **state) {
  (void)state;
  int32_t l32[3] = {5, -1, 7};
  int64_t l64[3] = {INT64_MAX - 2, 2, 7};
  int32_t off[4] = {0, 5, 5, 12};
  tile_jagged_params p = {0};
  p.batch = 3, p.lengths = l32, p.heads = 1, p.block_m = 64, p.block_n = 64, p.num_ctas = 4, p.zigzag = 1;
  tile_jagged_schedule s;
  memset(&s, 0x5a, sizeof s);
  assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "lengths[1] is -1, must be >= 0"));
  assert_null(s.work);
  p.lengths = l64, p.offsets_are_64bit = 1;
  assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "add up to more than 2^63 - 1 rows"));
  p.lengths = l32, p.offsets_are_64bit = 0, p.offsets = off;
  assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "give offsets or lengths, not both"));
  int32_t good[3] = {5, 0, 7};
  p.lengths = good, p.offsets = NULL;
  assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
  assert_int_equal(s.ntiles, 2);
  p.offsets = off; /* both: refused even when the lengths match the schedule's */
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_ERR_INVALID);
  assert_null(s.work);
}

/* Rebuild: new batches rebuilt, the same batch kept. */
static void test_reuse(void **state) {
  (void)state;
  const int64_t B = 500;
  int64_t *len = random_lengths(B), *o64;
  int32_t *o32;
  offsets_of(len, B, &o64, &o32);
  int32_t *copy = malloc((size_t)(B + 1) * sizeof *copy);
  memcpy(copy, o32, (size_t)(B + 1) * sizeof *copy);
  tile_jagged_params p = {0};
  p.batch = B, p.offsets = o32, p.heads = 4, p.block_m = 128, p.block_n = 128, p.causal = 1, p.num_ctas = 132;
  p.zigzag = 1;
  tile_jagged_schedule s;
  memset(&s, 0, sizeof s);
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  same_schedule(&p, &s);
  int64_t nt = s.ntiles;
  int32_t *w = s.work;
  int32_t *snap = malloc((size_t)nt * 16);
  memcpy(snap, s.work, (size_t)nt * 16);
  /* the same lengths in another buffer: kept, untouched */
  p.offsets = copy;
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 1);
  assert_ptr_equal(s.work, w);
  assert_int_equal(s.ntiles, nt);
  assert_memory_equal(s.work, snap, (size_t)nt * 16);
  /* one parameter changed: rebuilt */
  p.heads = 3;
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  same_schedule(&p, &s);
  p.heads = 4;
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  assert_memory_equal(s.work, snap, (size_t)nt * 16);
  /* one length changed (the next one shifted): rebuilt */
  copy[B / 2] += 1;
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  same_schedule(&p, &s);
  /* the same again, then as lengths, then int64 offsets: rebuilt for a new form */
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 1);
  p.offsets = o64, p.offsets_are_64bit = 1;
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  assert_memory_equal(s.work, snap, (size_t)nt * 16);
  p.offsets = NULL, p.lengths = len;
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 1);
  assert_memory_equal(s.work, snap, (size_t)nt * 16);
  /* a failure frees; a build (not a rebuild) never reuses */
  p.block_m = 8;
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_ERR_INVALID);
  assert_null(s.priv);
  p.block_m = 128;
  assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  tile_jagged_schedule_free(&s);
  free(len), free(o64), free(o32), free(copy), free(snap);
}

/* Rebuilding into one schedule, batch after batch of every mode, keeps
 * giving the reference's bytes (its scratch and arrays reused). */
static void test_rebuild_sequence(void **state) {
  (void)state;
  tile_jagged_schedule s;
  memset(&s, 0, sizeof s);
  for (int iter = 0; iter < 150; iter++) {
    int64_t B = 1 + (int64_t)(rng() % 800);
    int64_t *len = random_lengths(B), *o64;
    int32_t *o32;
    offsets_of(len, B, &o64, &o32);
    tile_jagged_params p = {0};
    p.batch = B, p.offsets = o32, p.heads = 1 + (int)(rng() % 8);
    p.block_m = blocks[rng() % 8], p.block_n = blocks[rng() % 8], p.causal = (int)(rng() % 2);
    p.backward = (int)(rng() % 2), p.num_ctas = random_ctas(), p.zigzag = rng() % 3 != 0;
    assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
    assert_int_equal(s.reused, 0);
    same_schedule(&p, &s);
    free(len), free(o64), free(o32);
  }
  tile_jagged_schedule_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_same),  cmocka_unit_test(test_causal_paths),
      cmocka_unit_test(test_huge_costs_same), cmocka_unit_test(test_lengths_bad),
      cmocka_unit_test(test_reuse),        cmocka_unit_test(test_rebuild_sequence),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

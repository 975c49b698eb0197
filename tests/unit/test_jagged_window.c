/* test_jagged_window.c - the tile scheduler (include/tile/jagged.h) on
 * sliding-window attention (tile_jagged_params.window; issue 17):
 *
 *   - every window tile's cost against a brute-force count (the KV blocks
 *     holding a key some row of the tile sees, row by row), and its range
 *     against variants/window.tile's kv_blocks, over random lengths, block
 *     sizes and bounds (-1, 0, tiny, past the sequence);
 *   - (-1, 0) is causal: the same schedule byte for byte; (-1, -1) costs
 *     what a non-causal tile costs;
 *   - random batches against a reference dealer (sequence-major by heaviest
 *     tile, query blocks last first, heads together, least-loaded CTA): the
 *     same lists, every tile exactly once, the totals, Graham's bound; the
 *     round-robin baseline with the window's costs;
 *   - the split's work items: KV ranges start at the window's first block,
 *     a split tile's pieces cover exactly its window range, never worse;
 *     hand cases where the split pays (fewer tiles than CTAs) and where the
 *     makespan is the ideal already;
 *   - hostile values: bounds below -1, window not 0/1, with num_q or
 *     causal, KV block indices past int32 (build and split), query block
 *     indices past int32 (backward), the split of a backward schedule;
 *   - rebuild: the window bounds are part of what is compared;
 *   - the backward (tile_jagged_params.backward): every KV block's cost
 *     against a brute-force count of the query blocks holding a row that
 *     sees one of its keys, and against variants/window.tile's q_blocks;
 *     (-1, 0) is causal's backward schedule byte for byte, (-1, -1) costs
 *     the unmasked blocks; random batches against the reference dealer
 *     (KV blocks in ascending order), every tile once; the makespan on a
 *     realistic batch against the window-blind (unmasked) schedule.
 */
#include "testutil.h"
#include "tile/jagged.h"
#include "tile/runtime.h"

static uint64_t rng_state = 0x51ed2701a3b4c5d7ull;
static uint64_t rng(void) { return tu_xorshift(&rng_state); }

static int64_t *offsets_of(const int64_t *len, int64_t B) {
  int64_t *o = malloc((size_t)(B + 1) * sizeof *o);
  o[0] = 0;
  for (int64_t b = 0; b < B; b++) o[b + 1] = o[b] + len[b];
  return o;
}

static tile_jagged_params wparams(int64_t B, const int64_t *off, int heads, int bm, int bn, int ctas, int zig,
                                  int wl, int wr) {
  tile_jagged_params p = {0};
  p.batch = B, p.offsets = off, p.offsets_are_64bit = 1, p.heads = heads;
  p.block_m = bm, p.block_n = bn, p.num_ctas = ctas, p.zigzag = zig;
  p.window = 1, p.window_left = wl, p.window_right = wr;
  return p;
}

static tile_jagged_schedule build_ok(const tile_jagged_params *p) {
  tile_jagged_schedule s;
  tile_status st = tile_jagged_schedule_build(p, &s);
  if (st != TILE_OK) fprintf(stderr, "build failed: %s: %s\n", tile_status_name(st), tile_last_error());
  assert_int_equal(st, TILE_OK);
  return s;
}

/* Brute force: the KV blocks of bn keys holding a key that some row q of
 * [q0, q1) sees (q - wl <= k <= q + wr, -1: unbounded), key by key. */
static int64_t ref_range(int64_t L, int64_t q0, int64_t q1, int bn, int wl, int wr, int64_t *first) {
  int64_t lo = -1, hi = -1, n = 0;
  for (int64_t kb = 0; kb * bn < L; kb++) {
    int seen = 0;
    for (int64_t k = kb * bn; k < (kb + 1) * bn && k < L && !seen; k++)
      for (int64_t q = q0; q < q1 && !seen; q++) seen = (wl < 0 || k >= q - wl) && (wr < 0 || k <= q + wr);
    if (seen) {
      if (lo < 0) lo = kb;
      assert_true(hi < 0 || hi == kb - 1); /* one run of blocks */
      hi = kb, n++;
    }
  }
  *first = lo;
  return n;
}

/* variants/window.tile's kv_blocks, as the kernel computes it (-1 as
 * UNBOUNDED = 2^30; q_hi not clipped to the sequence). */
static void kernel_range(int64_t L, int64_t m, int bm, int bn, int wl, int wr, int64_t *first, int64_t *end) {
  const int64_t UNB = (int64_t)1 << 30;
  int64_t left = wl < 0 ? UNB : wl, right = wr < 0 ? UNB : wr, qlo = m * bm, qhi = m * bm + bm;
  int64_t f = qlo - left > 0 ? qlo - left : 0;
  int64_t last = qhi - 1 + right < L - 1 ? qhi - 1 + right : L - 1;
  int64_t e1 = (L + bn - 1) / bn, e2 = (last + 1 + bn - 1) / bn;
  *first = f / bn;
  *end = e1 < e2 ? e1 : e2;
}

/* the window's first block of query block m (the host's) */
static int64_t first_of(const tile_jagged_params *p, int64_t m) {
  if (p->window_left < 0) return 0;
  int64_t q = m * p->block_m - p->window_left;
  return q > 0 ? q / p->block_n : 0;
}

static int64_t len_of(const tile_jagged_params *p, int64_t b) {
  const int64_t *o = p->offsets;
  return o[b + 1] - o[b];
}

static const int good_blocks[] = {16, 32, 48, 64, 96, 128, 160, 176, 192, 256};

static int pick_bound(int64_t maxlen) {
  switch (rng() % 6) {
  case 0: return -1;
  case 1: return 0;
  case 2: return (int)(rng() % 8);
  case 3: return (int)(rng() % 300);
  case 4: return (int)(rng() % (uint64_t)(2 * maxlen + 1));
  default: return (int)(rng() % 2000);
  }
}

/* ---- costs ---- */

static void test_costs_brute(void **state) {
  (void)state;
  int64_t checked = 0;
  for (int iter = 0; iter < 400; iter++) {
    int bm = good_blocks[rng() % 10], bn = good_blocks[rng() % 10];
    int64_t L = 1 + (int64_t)(rng() % (iter % 4 ? 700 : 2500));
    int wl = pick_bound(L), wr = pick_bound(L);
    int64_t off[2] = {0, L};
    tile_jagged_params p = wparams(1, off, 1, bm, bn, 1, 0, wl, wr);
    tile_jagged_schedule s = build_ok(&p);
    assert_int_equal(s.ntiles, (L + bm - 1) / bm);
    int64_t total = 0, mx = 0;
    for (int64_t i = 0; i < s.ntiles; i++) {
      const int32_t *w = s.work + 4 * i;
      int64_t m = w[2];
      assert_int_equal(m, i); /* one CTA, round robin: natural order */
      int64_t q1 = (m + 1) * bm < L ? (m + 1) * bm : L, f, kf, ke;
      int64_t cost = ref_range(L, m * bm, q1, bn, wl, wr, &f);
      if (w[3] != cost)
        fprintf(stderr, "L %lld bm %d bn %d window (%d, %d) m %lld: cost %d, brute force %lld\n", (long long)L, bm,
                bn, wl, wr, (long long)m, w[3], (long long)cost);
      assert_int_equal(w[3], cost);
      assert_true(cost >= 1);
      assert_int_equal(first_of(&p, m), f);
      kernel_range(L, m, bm, bn, wl, wr, &kf, &ke); /* the kernel's own range is the same */
      assert_int_equal(kf, f);
      assert_int_equal(ke, f + cost);
      total += cost, mx = cost > mx ? cost : mx;
      checked++;
    }
    assert_int_equal(s.total_cost, total);
    assert_int_equal(s.max_tile_cost, mx);
    assert_int_equal(s.max_cta_cost, total);
    tile_jagged_schedule_free(&s);
  }
  print_message("[  INFO    ] %lld window tiles against brute force\n", (long long)checked);
}

/* Hand values: BM = BN = 128, a 4096-row sequence. */
static void test_costs_hand(void **state) {
  (void)state;
  int64_t off[2] = {0, 4096};
  struct {
    int wl, wr;
    int32_t c0, c1, c8, c31; /* costs of query blocks 0, 1, 8, 31 */
  } cases[] = {
      {256, 0, 1, 2, 3, 3},    /* keys m*128-256 .. : blocks m-2 .. m */
      {1024, 0, 1, 2, 9, 9},   /* blocks m-8 .. m */
      {333, 0, 1, 2, 4, 4},    /* blocks m-3 .. m */
      {0, 0, 1, 1, 1, 1},      /* the diagonal */
      {-1, 0, 1, 2, 9, 32},    /* causal */
      {-1, -1, 32, 32, 32, 32}, /* no mask */
      {100, 50, 2, 3, 3, 2},   /* blocks m-1 .. m+1 but the last */
      {0, -1, 32, 31, 24, 1},  /* keys from the row on */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tile_jagged_params p = wparams(1, off, 1, 128, 128, 1, 0, cases[i].wl, cases[i].wr);
    tile_jagged_schedule s = build_ok(&p);
    assert_int_equal(s.ntiles, 32);
    assert_int_equal(s.work[4 * 0 + 3], cases[i].c0);
    assert_int_equal(s.work[4 * 1 + 3], cases[i].c1);
    assert_int_equal(s.work[4 * 8 + 3], cases[i].c8);
    assert_int_equal(s.work[4 * 31 + 3], cases[i].c31);
    tile_jagged_schedule_free(&s);
  }
}

/* (-1, 0) is causal, byte for byte; (-1, -1) costs the unmasked tiles. */
static void test_causal_equivalent(void **state) {
  (void)state;
  for (int iter = 0; iter < 60; iter++) {
    int64_t B = 1 + (int64_t)(rng() % 200);
    int64_t *len = malloc((size_t)B * sizeof *len);
    for (int64_t b = 0; b < B; b++) len[b] = rng() % 7 == 0 ? 0 : (int64_t)(rng() % (iter % 2 ? 300 : 5000));
    int64_t *o = offsets_of(len, B);
    int bm = good_blocks[rng() % 10], bn = good_blocks[rng() % 10], H = 1 + (int)(rng() % 8);
    int ctas = 1 + (int)(rng() % 300), zig = iter % 4 != 0;
    tile_jagged_params w = wparams(B, o, H, bm, bn, ctas, zig, -1, 0), c = w;
    c.window = 0, c.causal = 1, c.window_left = 12345; /* ignored without a window */
    tile_jagged_schedule sw, sc;
    if (tile_jagged_schedule_build(&c, &sc) == TILE_OK) {
      sw = build_ok(&w);
      assert_int_equal(sw.ntiles, sc.ntiles);
      assert_int_equal(sw.total_cost, sc.total_cost);
      assert_int_equal(sw.max_cta_cost, sc.max_cta_cost);
      assert_int_equal(sw.max_tile_cost, sc.max_tile_cost);
      assert_memory_equal(sw.cta_start, sc.cta_start, ((size_t)ctas + 1) * 4);
      if (sw.ntiles) assert_memory_equal(sw.work, sc.work, (size_t)sw.ntiles * 16);
      tile_jagged_schedule_free(&sw), tile_jagged_schedule_free(&sc);
    }
    /* (-1, -1): every tile cdiv(L, bn) */
    w.window_left = w.window_right = -1;
    if (tile_jagged_schedule_build(&w, &sw) == TILE_OK) {
      for (int64_t i = 0; i < sw.ntiles; i++)
        assert_int_equal(sw.work[4 * i + 3], (len[sw.work[4 * i]] + bn - 1) / bn);
      tile_jagged_schedule_free(&sw);
    }
    free(len), free(o);
  }
}

/* ---- dealing ---- */

typedef struct rt {
  int32_t b, h, m, cost, seqmax, ord; /* ord: -m forward (query blocks last first), m backward (KV blocks) */
} rt;

static int rt_cmp(const void *a, const void *b) { /* heaviest sequence first, then b, ord, h */
  const rt *x = a, *y = b;
  if (x->seqmax != y->seqmax) return x->seqmax > y->seqmax ? -1 : 1;
  if (x->b != y->b) return x->b < y->b ? -1 : 1;
  if (x->ord != y->ord) return x->ord < y->ord ? -1 : 1;
  return (x->h > y->h) - (x->h < y->h);
}

static int64_t ref_qrange(int64_t L, int64_t n, int bm, int bn, int wl, int wr, int64_t *first);

/* The reference: every tile with its brute-force cost, in the dealing order
 * (zigzag: sequence-major; else natural), each to the least-loaded CTA
 * (lowest index on ties; round robin without zigzag).  Returns the tiles
 * per CTA in list order.  Backward: the tiles are KV blocks, costed by
 * ref_qrange, dealt in ascending order. */
static void ref_deal(const tile_jagged_params *p, int32_t **work, int32_t **start, int64_t *nt, int64_t *total,
                     int64_t *mk) {
  int64_t cap = 64, n = 0;
  rt *t = malloc((size_t)cap * sizeof *t);
  for (int64_t b = 0; b < p->batch; b++) {
    const int bwd = p->backward != 0;
    int64_t L = len_of(p, b), bt = bwd ? p->block_n : p->block_m, nb = (L + bt - 1) / bt, f, smax = 0;
    int64_t n0 = n, *cm = malloc((size_t)(nb ? nb : 1) * sizeof *cm);
    for (int64_t m = 0; m < nb; m++) {
      int64_t q1 = (m + 1) * p->block_m < L ? (m + 1) * p->block_m : L;
      if (bwd)
        cm[m] = ref_qrange(L, m, p->block_m, p->block_n, p->window_left, p->window_right, &f);
      else
        cm[m] = ref_range(L, m * p->block_m, q1, p->block_n, p->window_left, p->window_right, &f);
      smax = cm[m] > smax ? cm[m] : smax;
    }
    for (int h = 0; h < p->heads; h++)
      for (int64_t m = 0; m < nb; m++) {
        if (n == cap) t = realloc(t, (size_t)(cap *= 2) * sizeof *t);
        t[n++] = (rt){(int32_t)b, h, (int32_t)m, (int32_t)cm[m], 0, (int32_t)(bwd ? m : -m)};
      }
    free(cm);
    for (int64_t i = n0; i < n; i++) t[i].seqmax = (int32_t)smax;
  }
  if (p->zigzag) qsort(t, (size_t)n, sizeof *t, rt_cmp);
  int C = p->num_ctas;
  int64_t *load = calloc((size_t)C, sizeof *load);
  int32_t *cta = malloc((size_t)(n ? n : 1) * sizeof *cta), *cnt = calloc((size_t)C + 1, sizeof *cnt);
  *total = 0;
  for (int64_t i = 0; i < n; i++) {
    int best = (int)(i % C); /* round robin */
    if (p->zigzag) {         /* the lowest index among the least loaded */
      best = 0;
      for (int c = 1; c < C; c++)
        if (load[c] < load[best]) best = c;
    }
    cta[i] = best, load[best] += t[i].cost, cnt[best + 1]++, *total += t[i].cost;
  }
  *start = malloc(((size_t)C + 1) * sizeof **start);
  (*start)[0] = 0;
  for (int c = 0; c < C; c++) (*start)[c + 1] = (*start)[c] + cnt[c + 1];
  *work = malloc((size_t)(n ? n : 1) * 16);
  int32_t *fill = malloc((size_t)C * sizeof *fill);
  for (int c = 0; c < C; c++) fill[c] = (*start)[c];
  for (int64_t i = 0; i < n; i++) {
    int32_t *w = *work + 4 * (int64_t)fill[cta[i]]++;
    w[0] = t[i].b, w[1] = t[i].h, w[2] = t[i].m, w[3] = t[i].cost;
  }
  *mk = 0;
  for (int c = 0; c < C; c++) *mk = load[c] > *mk ? load[c] : *mk;
  *nt = n;
  free(t), free(load), free(cta), free(cnt), free(fill);
}

static void test_random_vs_reference(void **state) {
  (void)state;
  for (int iter = 0; iter < 150; iter++) {
    int64_t B = 1 + (int64_t)(rng() % (iter % 3 ? 60 : 400));
    int64_t *len = malloc((size_t)B * sizeof *len);
    int64_t maxl = iter % 5 == 0 ? 64 : iter % 2 ? 700 : 3000;
    for (int64_t b = 0; b < B; b++) len[b] = rng() % 9 == 0 ? 0 : (int64_t)(rng() % (uint64_t)maxl);
    if (iter % 7 == 0)
      for (int64_t b = 0; b < B; b++) len[b] = 640; /* all alike */
    int64_t *o = offsets_of(len, B);
    int bm = good_blocks[rng() % 10], bn = good_blocks[rng() % 10];
    int wl = pick_bound(maxl), wr = pick_bound(maxl);
    if (iter % 11 == 0) wl = 0, wr = 0;
    tile_jagged_params p = wparams(B, o, 1 + (int)(rng() % 6), bm, bn, 1 + (int)(rng() % (iter % 4 ? 140 : 700)),
                                   iter % 6 != 0, wl, wr);
    tile_jagged_schedule s = build_ok(&p);
    int32_t *rw, *rs;
    int64_t rn, rtot, rmk;
    ref_deal(&p, &rw, &rs, &rn, &rtot, &rmk);
    assert_int_equal(s.ntiles, rn);
    assert_int_equal(s.total_cost, rtot);
    assert_int_equal(s.max_cta_cost, rmk);
    assert_memory_equal(s.cta_start, rs, ((size_t)p.num_ctas + 1) * 4);
    if (rn) assert_memory_equal(s.work, rw, (size_t)rn * 16);
    if (p.zigzag) assert_true(s.max_cta_cost <= (s.total_cost + p.num_ctas - 1) / p.num_ctas + s.max_tile_cost);
    /* every tile exactly once: (b, h, m) in natural order */
    char *seen = calloc((size_t)(rn ? rn : 1), 1);
    int64_t *base = malloc((size_t)(B + 1) * sizeof *base);
    base[0] = 0;
    for (int64_t b = 0; b < B; b++) base[b + 1] = base[b] + (len[b] + bm - 1) / bm * p.heads;
    for (int64_t i = 0; i < s.ntiles; i++) {
      const int32_t *w = s.work + 4 * i;
      int64_t nb = (len[w[0]] + bm - 1) / bm;
      assert_true(w[1] >= 0 && w[1] < p.heads && w[2] >= 0 && w[2] < nb);
      int64_t k = base[w[0]] + (int64_t)w[1] * nb + w[2];
      assert_false(seen[k]);
      seen[k] = 1;
    }
    free(seen), free(base), free(rw), free(rs);
    tile_jagged_schedule_free(&s);
    free(len), free(o);
  }
}

/* ---- the split ---- */

/* The split is a valid cover of s for a window: every tile's items tile the
 * window's range [first, first + cost) exactly (whole: part -1; pieces: the
 * slots of its combine entry, in KV order), inside the kernel's own range;
 * the reported makespan is the largest per-CTA sum. */
static void check_window_split(const tile_jagged_params *p, const tile_jagged_schedule *s, const tile_jagged_split *x,
                               int overhead) {
  assert_int_equal(x->num_ctas, s->num_ctas);
  assert_int_equal(x->cta_start[0], 0);
  assert_int_equal(x->cta_start[x->num_ctas], x->nitems);
  int64_t mk = 0;
  for (int c = 0; c < x->num_ctas; c++) {
    int64_t load = 0;
    assert_true(x->cta_start[c + 1] >= x->cta_start[c]);
    for (int32_t i = x->cta_start[c]; i < x->cta_start[c + 1]; i++) {
      const int32_t *w = x->work + 8 * (int64_t)i;
      load += w[4] - w[3] + (w[5] >= 0 ? overhead : 0);
    }
    mk = load > mk ? load : mk;
  }
  assert_int_equal(mk, x->max_cta_cost);
  /* per tile: gather its items */
  int64_t B = p->batch;
  int64_t *base = malloc((size_t)(B + 1) * sizeof *base);
  base[0] = 0;
  for (int64_t b = 0; b < B; b++) base[b + 1] = base[b] + (len_of(p, b) + p->block_m - 1) / p->block_m * p->heads;
  int64_t nt = base[B];
  assert_int_equal(nt, s->ntiles);
  int32_t *cov = calloc((size_t)(nt ? nt : 1), sizeof *cov);   /* blocks covered */
  int32_t *cnt = calloc((size_t)(nt ? nt : 1), sizeof *cnt);   /* items */
  int32_t *lo = malloc((size_t)(nt ? nt : 1) * sizeof *lo), *p0 = malloc((size_t)(nt ? nt : 1) * sizeof *p0);
  char *used = calloc((size_t)(x->nparts ? x->nparts : 1), 1);
  int64_t pieces = 0;
  for (int64_t i = 0; i < x->nitems; i++) {
    const int32_t *w = x->work + 8 * i;
    int64_t L = len_of(p, w[0]), nb = (L + p->block_m - 1) / p->block_m, kf, ke;
    int64_t k = base[w[0]] + (int64_t)w[1] * nb + w[2];
    kernel_range(L, w[2], p->block_m, p->block_n, p->window_left, p->window_right, &kf, &ke);
    assert_true(w[3] >= kf && w[4] <= ke && w[4] > w[3]); /* inside the window, never empty */
    if (cnt[k] == 0 || w[3] < lo[k]) lo[k] = w[3];
    cov[k] += w[4] - w[3], cnt[k]++;
    if (w[5] >= 0) {
      assert_true(w[5] < x->nparts);
      assert_false(used[w[5]]);
      used[w[5]] = 1, pieces++;
      if (w[3] == kf) p0[k] = w[5];
    } else {
      assert_int_equal(w[3], kf), assert_int_equal(w[4], ke); /* whole: the window's range */
    }
  }
  assert_int_equal(pieces, x->nparts);
  for (int64_t i = 0; i < s->ntiles; i++) {
    const int32_t *t = s->work + 4 * i;
    int64_t L = len_of(p, t[0]), nb = (L + p->block_m - 1) / p->block_m;
    int64_t k = base[t[0]] + (int64_t)t[1] * nb + t[2];
    assert_true(cnt[k] >= 1);
    assert_int_equal(cov[k], t[3]); /* no gap, no overlap: the pieces are within the range and sum to it */
    assert_int_equal(lo[k], first_of(p, t[2]));
    if (cnt[k] > 1) { /* its combine entry: the slots in KV order */
      int found = 0;
      for (int64_t e = 0; e < x->ncombine; e++) {
        const int32_t *ce = x->combine + 8 * e;
        if (ce[0] == t[0] && ce[1] == t[1] && ce[2] == t[2]) {
          found++;
          assert_int_equal(ce[3], p0[k]);
          assert_int_equal(ce[4], cnt[k]);
          /* piece j of the tile has slot ce[3] + j and starts where j-1 ends */
          int32_t at = (int32_t)lo[k];
          for (int32_t j = 0; j < ce[4]; j++) {
            int hit = 0;
            for (int64_t q = 0; q < x->nitems; q++) {
              const int32_t *w = x->work + 8 * q;
              if (w[5] == ce[3] + j) {
                assert_true(w[0] == t[0] && w[1] == t[1] && w[2] == t[2]);
                assert_int_equal(w[3], at);
                at = w[4], hit = 1;
              }
            }
            assert_true(hit);
          }
          assert_int_equal(at, lo[k] + t[3]);
        }
      }
      assert_int_equal(found, 1);
    }
  }
  free(base), free(cov), free(cnt), free(lo), free(p0), free(used);
}

static tile_jagged_split split_ok(const tile_jagged_params *p, const tile_jagged_schedule *s,
                                  const tile_jagged_split_params *sp) {
  tile_jagged_split x;
  tile_status st = tile_jagged_split_tail(p, s, sp, &x);
  if (st != TILE_OK) fprintf(stderr, "split failed: %s\n", tile_last_error());
  assert_int_equal(st, TILE_OK);
  check_window_split(p, s, &x, sp ? sp->piece_overhead : 0);
  return x;
}

/* Fewer tiles than CTAs: one 4096-row sequence, window (1024, 0), 132 CTAs,
 * JFA's split parameters: tiles of up to 9 blocks cut in two. */
static void test_split_hand(void **state) {
  (void)state;
  tile_jagged_split_params sp = {4, 1, 132};
  int64_t off[2] = {0, 4096};
  tile_jagged_params p = wparams(1, off, 1, 128, 128, 132, 1, 1024, 0);
  tile_jagged_schedule s = build_ok(&p);
  assert_int_equal(s.ntiles, 32);
  assert_int_equal(s.max_cta_cost, 9);
  assert_int_equal(s.total_cost, 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 24 * 9);
  tile_jagged_split x = split_ok(&p, &s, &sp);
  /* one tile per CTA; the 30 of 3 blocks or more are above the ideal (2
   * blocks), and those of 8 or 9 are cut in two (k = min(132 / 30, cost /
   * 4) = 2: 4 + 1 and 5 + 1 with the overhead); the largest left whole, 7 */
  assert_int_equal(x.ncombine, 25);
  assert_int_equal(x.nparts, 50);
  assert_int_equal(x.max_cta_cost, 7);
  tile_jagged_split_free(&x);
  /* no split parameters, and without zigzag: the lists unchanged, each KV
   * range the window's */
  for (int i = 0; i < 2; i++) {
    tile_jagged_params q = p;
    q.zigzag = i;
    tile_jagged_schedule t = build_ok(&q);
    x = split_ok(&q, &t, i ? NULL : &sp);
    assert_int_equal(x.nparts, 0);
    assert_int_equal(x.nitems, t.ntiles);
    assert_memory_equal(x.cta_start, t.cta_start, 133 * 4);
    for (int64_t k = 0; k < t.ntiles; k++) {
      int32_t f = (int32_t)first_of(&q, t.work[4 * k + 2]);
      int32_t want[8] = {t.work[4 * k], t.work[4 * k + 1], t.work[4 * k + 2], f, f + t.work[4 * k + 3], -1, 0, 0};
      assert_memory_equal(x.work + 8 * k, want, sizeof want);
    }
    assert_int_equal(x.max_cta_cost, t.max_cta_cost);
    tile_jagged_split_free(&x);
    tile_jagged_schedule_free(&t);
  }
  tile_jagged_schedule_free(&s);
  /* every load at the ideal: nothing to split */
  int64_t eq[3] = {0, 1024, 2048};
  p = wparams(2, eq, 4, 128, 128, 8, 1, -1, -1); /* 64 tiles of 8 blocks on 8 CTAs */
  s = build_ok(&p);
  assert_int_equal(s.max_cta_cost, 64);
  x = split_ok(&p, &s, &sp);
  assert_int_equal(x.nparts, 0);
  assert_int_equal(x.nitems, 64);
  tile_jagged_split_free(&x);
  tile_jagged_schedule_free(&s);
}

static void test_split_random(void **state) {
  (void)state;
  int split = 0, whole = 0;
  for (int iter = 0; iter < 400; iter++) {
    int64_t B = 1 + (int64_t)(rng() % 40);
    int64_t *len = malloc((size_t)B * sizeof *len);
    int64_t maxl = iter % 3 == 0 ? 300 : 5000;
    for (int64_t b = 0; b < B; b++) len[b] = (int64_t)(rng() % (uint64_t)maxl);
    int64_t *o = offsets_of(len, B);
    int bm = good_blocks[rng() % 10], bn = iter % 2 ? 64 : good_blocks[rng() % 10];
    int wl = pick_bound(maxl), wr = pick_bound(maxl);
    tile_jagged_params p = wparams(B, o, 1 + (int)(rng() % 8), bm, bn, 1 + (int)(rng() % 200), 1, wl, wr);
    tile_jagged_split_params sp = {1 + (int)(rng() % 4), (int)(rng() % 3), (int)(rng() % 300)};
    tile_jagged_schedule s = build_ok(&p);
    tile_jagged_split x = split_ok(&p, &s, &sp);
    assert_true(x.nparts <= sp.max_parts);
    assert_true(x.max_cta_cost <= s.max_cta_cost);
    if (x.nparts) {
      split++;
      assert_true(x.max_cta_cost <= s.max_cta_cost - s.max_cta_cost / 100);
    } else {
      whole++;
    }
    tile_jagged_split_free(&x);
    tile_jagged_schedule_free(&s);
    free(len), free(o);
  }
  print_message("[  INFO    ] random window splits: %d split, %d left whole\n", split, whole);
  assert_true(split >= 20 && whole >= 20);
}

/* ---- hostile values ---- */

static void expect_invalid(const tile_jagged_params *p, const char *needle) {
  tile_jagged_schedule s;
  memset(&s, 0x5a, sizeof s);
  tile_status st = tile_jagged_schedule_build(p, &s);
  if (st != TILE_ERR_INVALID || !strstr(tile_last_error(), needle))
    fprintf(stderr, "expected INVALID with \"%s\", got %s: %s\n", needle, tile_status_name(st), tile_last_error());
  assert_int_equal(st, TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), needle));
  assert_null(s.work);
  assert_int_equal(s.ntiles, 0);
}

static void test_bad(void **state) {
  (void)state;
  int64_t off[3] = {0, 100, 300};
  tile_jagged_params good = wparams(2, off, 2, 64, 64, 4, 1, 128, 0), p;
  p = good, p.window_left = -2;
  expect_invalid(&p, "window_left -2, window_right 0");
  p = good, p.window_right = -3;
  expect_invalid(&p, "window_right -3");
  p = good, p.window_left = INT32_MIN;
  expect_invalid(&p, "must be >= 0, or -1");
  p = good, p.window = 2;
  expect_invalid(&p, "window is 2");
  p = good, p.window = -1;
  expect_invalid(&p, "window is -1");
  p = good, p.num_q = 64;
  expect_invalid(&p, "self-attention only (num_q must be 0)");
  p = good, p.backward = 1, p.num_q = 64;
  expect_invalid(&p, "self-attention only (num_q must be 0)");
  p = good, p.backward = 1, p.causal = 1;
  expect_invalid(&p, "window_right = 0 instead");
  p = good, p.causal = 1;
  expect_invalid(&p, "window_right = 0 instead");
  /* KV block indices past int32: 2^36 rows in blocks of 16 */
  int64_t huge[2] = {0, (int64_t)1 << 36};
  p = wparams(1, huge, 1, 256, 16, 4, 1, 100, 0);
  expect_invalid(&p, "the window's KV block indices overflow int32");
  /* the backward: its 2^28 KV blocks fit, its 2^32 query blocks of 16 do not */
  p = wparams(1, huge, 1, 16, 256, 4, 1, 100, 0);
  p.backward = 1;
  expect_invalid(&p, "the window's query block indices overflow int32");
  /* too many tiles (KV blocks, backward) */
  p.block_m = 256, p.block_n = 16;
  expect_invalid(&p, "tile indices would overflow int32");
  /* bounds past any sequence are fine, and so are they without a window */
  p = good, p.window_left = INT32_MAX, p.window_right = INT32_MAX;
  tile_jagged_schedule s = build_ok(&p);
  tile_jagged_schedule_free(&s);
  p = good, p.window = 0, p.window_left = -7, p.window_right = -9;
  s = build_ok(&p);
  tile_jagged_schedule_free(&s);
  p = good, p.backward = 1, p.window_left = INT32_MAX, p.window_right = INT32_MAX;
  s = build_ok(&p);
  for (int64_t i = 0; i < s.ntiles; i++) /* every query block of its sequence */
    assert_int_equal(s.work[4 * i + 3], (off[s.work[4 * i] + 1] - off[s.work[4 * i]] + 63) / 64);
  tile_jagged_schedule_free(&s);
  p = good, p.backward = 1, p.window_left = 0, p.window_right = 0; /* the diagonal */
  s = build_ok(&p);
  assert_int_equal(s.max_tile_cost, 1);
  /* a backward schedule is not split */
  {
    tile_jagged_split_params sp1 = {2, 1, 10};
    tile_jagged_split x1;
    assert_int_equal(tile_jagged_split_tail(&p, &s, &sp1, &x1), TILE_ERR_INVALID);
    assert_non_null(strstr(tile_last_error(), "a backward one"));
    assert_null(x1.work);
  }
  tile_jagged_schedule_free(&s);

  /* the split checks the window too */
  s = build_ok(&good);
  tile_jagged_split_params sp = {2, 1, 10};
  tile_jagged_split x;
  p = good, p.window_left = -2;
  assert_int_equal(tile_jagged_split_tail(&p, &s, &sp, &x), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "window_left -2"));
  assert_null(x.work);
  p = good, p.causal = 1;
  assert_int_equal(tile_jagged_split_tail(&p, &s, &sp, &x), TILE_ERR_INVALID);
  p = good, p.block_n = 0;
  assert_int_equal(tile_jagged_split_tail(&p, &s, &sp, &x), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "not built with these parameters"));
  /* a layout that is not a build's */
  tile_jagged_schedule t = s;
  int32_t start[5] = {0, 3, 2, 4, (int32_t)s.ntiles};
  t.cta_start = start;
  assert_int_equal(tile_jagged_split_tail(&good, &t, &sp, &x), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "not built with these parameters"));
  tile_jagged_schedule_free(&s);
}

/* The window is part of what a rebuild compares. */
static void test_rebuild(void **state) {
  (void)state;
  int64_t len[4] = {1000, 0, 3000, 129};
  int64_t *o = offsets_of(len, 4);
  tile_jagged_params p = wparams(4, o, 3, 128, 64, 16, 1, 256, 0);
  tile_jagged_schedule s;
  memset(&s, 0, sizeof s);
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 1);
  p.window_right = 1;
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  tile_jagged_schedule f = build_ok(&p);
  assert_memory_equal(s.work, f.work, (size_t)f.ntiles * 16);
  tile_jagged_schedule_free(&f);
  p.window_left = 300;
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  p.window = 0; /* no window: the bounds no longer matter */
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  p.window_left = 5, p.window_right = -1;
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 1);
  tile_jagged_schedule_free(&s);
  free(o);
}

/* A realistic batch: the window-aware makespan is at the ideal, where the
 * window-blind schedule (costed unmasked) is not. */
static void test_makespan(void **state) {
  (void)state;
  int64_t B = 300;
  int64_t *len = malloc((size_t)B * sizeof *len);
  for (int64_t b = 0; b < B; b++) len[b] = 1 + (int64_t)(rng() % 4096);
  int64_t *o = offsets_of(len, B);
  for (int W = 256; W <= 1024; W *= 4) {
    tile_jagged_params p = wparams(B, o, 8, 128, 128, 132, 1, W, 0), blind = p;
    blind.window = 0;
    tile_jagged_schedule s = build_ok(&p), sb = build_ok(&blind);
    int64_t lb = (s.total_cost + 131) / 132;
    lb = s.max_tile_cost > lb ? s.max_tile_cost : lb;
    /* the blind lists under the window's costs */
    int64_t mkb = 0;
    for (int c = 0; c < 132; c++) {
      int64_t l = 0;
      for (int32_t i = sb.cta_start[c]; i < sb.cta_start[c + 1]; i++) {
        const int32_t *w = sb.work + 4 * (int64_t)i;
        int64_t L = len[w[0]], kf, ke;
        kernel_range(L, w[2], 128, 128, W, 0, &kf, &ke);
        l += ke - kf;
      }
      mkb = l > mkb ? l : mkb;
    }
    print_message("[  INFO    ] window %d: makespan / bound %.4f, window-blind %.4f\n", W,
                  (double)s.max_cta_cost / (double)lb, (double)mkb / (double)lb);
    assert_true(s.max_cta_cost <= lb + s.max_tile_cost);
    assert_true(s.max_cta_cost * 1000 <= lb * 1010); /* within 1% */
    assert_true(s.max_cta_cost <= mkb);
    tile_jagged_schedule_free(&s), tile_jagged_schedule_free(&sb);
  }
  free(len), free(o);
}

/* ---- the backward ---- */

/* Brute force: the query blocks of bm rows holding a row q of [0, L) that
 * sees some key k of KV block n (keys [n*bn, min((n+1)*bn, L))): q - wl <=
 * k <= q + wr (-1: unbounded), row by row (a row sees the block when its
 * keys [q - wl, q + wr] meet the block's; key by key when L is short). */
static int64_t ref_qrange(int64_t L, int64_t n, int bm, int bn, int wl, int wr, int64_t *first) {
  int64_t lo = -1, hi = -1, cnt = 0, k0 = n * bn, k1 = (n + 1) * bn < L ? (n + 1) * bn : L;
  for (int64_t qb = 0; qb * bm < L; qb++) {
    int seen = 0;
    for (int64_t q = qb * bm; q < (qb + 1) * bm && q < L && !seen; q++) {
      int64_t a = wl < 0 || q - wl < k0 ? k0 : q - wl, e = wr < 0 || q + wr > k1 - 1 ? k1 - 1 : q + wr;
      seen = a <= e;
      if (L <= 300) { /* key by key agrees */
        int kseen = 0;
        for (int64_t k = k0; k < k1 && !kseen; k++) kseen = (wl < 0 || k >= q - wl) && (wr < 0 || k <= q + wr);
        assert_int_equal(kseen, seen);
      }
    }
    if (seen) {
      if (lo < 0) lo = qb;
      assert_true(hi < 0 || hi == qb - 1); /* one run of blocks */
      hi = qb, cnt++;
    }
  }
  *first = lo;
  return cnt;
}

/* variants/window.tile's q_blocks, as the kernel computes it (-1 as
 * UNBOUNDED = 2^30; k_hi = n*bn + bn not clipped to the sequence), which is
 * also what jfa_bwd.c gives the items as [i0, i1) */
static void kernel_qrange(int64_t L, int64_t n, int bm, int bn, int wl, int wr, int64_t *first, int64_t *end) {
  const int64_t UNB = (int64_t)1 << 30;
  int64_t left = wl < 0 ? UNB : wl, right = wr < 0 ? UNB : wr, klo = n * bn, khi = n * bn + bn;
  int64_t f = klo - right > 0 ? klo - right : 0;
  int64_t last = khi - 1 + left < L - 1 ? khi - 1 + left : L - 1;
  int64_t e1 = (L + bm - 1) / bm, e2 = (last + 1 + bm - 1) / bm;
  *first = f / bm;
  *end = e1 < e2 ? e1 : e2;
}

static void test_bwd_costs_brute(void **state) {
  (void)state;
  int64_t checked = 0;
  for (int iter = 0; iter < 400; iter++) {
    int bm = good_blocks[rng() % 10], bn = good_blocks[rng() % 10];
    int64_t L = 1 + (int64_t)(rng() % (iter % 4 ? 700 : 2500));
    int wl = pick_bound(L), wr = pick_bound(L);
    int64_t off[2] = {0, L};
    tile_jagged_params p = wparams(1, off, 1, bm, bn, 1, 0, wl, wr);
    p.backward = 1;
    tile_jagged_schedule s = build_ok(&p);
    assert_int_equal(s.ntiles, (L + bn - 1) / bn);
    int64_t total = 0, mx = 0;
    for (int64_t i = 0; i < s.ntiles; i++) {
      const int32_t *w = s.work + 4 * i;
      int64_t n = w[2];
      assert_int_equal(n, i); /* one CTA, round robin: natural order */
      int64_t f, kf, ke, cost = ref_qrange(L, n, bm, bn, wl, wr, &f);
      if (w[3] != cost)
        fprintf(stderr, "L %lld bm %d bn %d window (%d, %d) backward n %lld: cost %d, brute force %lld\n",
                (long long)L, bm, bn, wl, wr, (long long)n, w[3], (long long)cost);
      assert_int_equal(w[3], cost);
      assert_true(cost >= 1);
      kernel_qrange(L, n, bm, bn, wl, wr, &kf, &ke); /* the kernel's range is the same blocks */
      assert_int_equal(kf, f);
      assert_int_equal(ke, f + cost);
      total += cost, mx = cost > mx ? cost : mx;
      checked++;
    }
    assert_int_equal(s.total_cost, total);
    assert_int_equal(s.max_tile_cost, mx);
    assert_int_equal(s.max_cta_cost, total);
    tile_jagged_schedule_free(&s);
  }
  print_message("[  INFO    ] %lld backward window tiles against brute force\n", (long long)checked);
}

/* Hand values: JFA's backward blocks (64 query rows, 128 keys), a 4096-row
 * sequence: 32 KV blocks, 64 query blocks. */
static void test_bwd_costs_hand(void **state) {
  (void)state;
  int64_t off[2] = {0, 4096};
  struct {
    int wl, wr;
    int32_t c0, c1, c8, c29, c31; /* costs of KV blocks 0, 1, 8, 29, 31 */
  } cases[] = {
      {256, 0, 6, 6, 6, 6, 2},      /* rows n*128 .. n*128+383: blocks 2n .. 2n+5, clipped at the end */
      {1024, 0, 18, 18, 18, 6, 2},  /* rows n*128 .. n*128+1151 */
      {-1, 0, 64, 62, 48, 6, 2},    /* causal: 64 - 2n */
      {-1, -1, 64, 64, 64, 64, 64}, /* no mask */
      {0, 0, 2, 2, 2, 2, 2},        /* the diagonal */
      {100, 50, 4, 5, 5, 5, 3},     /* rows n*128-50 .. n*128+227 */
      {0, -1, 2, 4, 18, 60, 64},    /* rows up to the block's last key: 2n + 2 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tile_jagged_params p = wparams(1, off, 1, 64, 128, 1, 0, cases[i].wl, cases[i].wr);
    p.backward = 1;
    tile_jagged_schedule s = build_ok(&p);
    assert_int_equal(s.ntiles, 32);
    assert_int_equal(s.work[4 * 0 + 3], cases[i].c0);
    assert_int_equal(s.work[4 * 1 + 3], cases[i].c1);
    assert_int_equal(s.work[4 * 8 + 3], cases[i].c8);
    assert_int_equal(s.work[4 * 29 + 3], cases[i].c29);
    assert_int_equal(s.work[4 * 31 + 3], cases[i].c31);
    tile_jagged_schedule_free(&s);
  }
}

/* (-1, 0) is causal's backward, byte for byte (the same costs, and both
 * dealt sequence-major, KV blocks ascending, to the least-loaded CTA);
 * (-1, -1) costs the unmasked KV blocks (but is dealt to the least-loaded
 * CTA, not in zigzag passes: not the same lists). */
static void test_bwd_causal_equivalent(void **state) {
  (void)state;
  for (int iter = 0; iter < 60; iter++) {
    int64_t B = 1 + (int64_t)(rng() % 200);
    int64_t *len = malloc((size_t)B * sizeof *len);
    for (int64_t b = 0; b < B; b++) len[b] = rng() % 7 == 0 ? 0 : (int64_t)(rng() % (iter % 2 ? 300 : 5000));
    if (iter % 10 == 0)
      for (int64_t b = 0; b < B; b++) len[b] = len[b] % 64 + 1; /* one KV block each: round robin */
    int64_t *o = offsets_of(len, B);
    int bm = good_blocks[rng() % 10], bn = good_blocks[rng() % 10], H = 1 + (int)(rng() % 8);
    int ctas = 1 + (int)(rng() % 300), zig = iter % 4 != 0;
    tile_jagged_params w = wparams(B, o, H, bm, bn, ctas, zig, -1, 0), c = w;
    w.backward = c.backward = 1;
    c.window = 0, c.causal = 1, c.window_left = 12345; /* ignored without a window */
    tile_jagged_schedule sw, sc;
    if (tile_jagged_schedule_build(&c, &sc) == TILE_OK) {
      sw = build_ok(&w);
      assert_int_equal(sw.ntiles, sc.ntiles);
      assert_int_equal(sw.total_cost, sc.total_cost);
      assert_int_equal(sw.max_cta_cost, sc.max_cta_cost);
      assert_int_equal(sw.max_tile_cost, sc.max_tile_cost);
      assert_memory_equal(sw.cta_start, sc.cta_start, ((size_t)ctas + 1) * 4);
      if (sw.ntiles) assert_memory_equal(sw.work, sc.work, (size_t)sw.ntiles * 16);
      tile_jagged_schedule_free(&sw), tile_jagged_schedule_free(&sc);
    }
    /* (-1, -1): every tile cdiv(L, bm) */
    w.window_left = w.window_right = -1;
    if (tile_jagged_schedule_build(&w, &sw) == TILE_OK) {
      for (int64_t i = 0; i < sw.ntiles; i++)
        assert_int_equal(sw.work[4 * i + 3], (len[sw.work[4 * i]] + bm - 1) / bm);
      tile_jagged_schedule_free(&sw);
    }
    free(len), free(o);
  }
}

static void test_bwd_random_vs_reference(void **state) {
  (void)state;
  for (int iter = 0; iter < 150; iter++) {
    int64_t B = 1 + (int64_t)(rng() % (iter % 3 ? 60 : 400));
    int64_t *len = malloc((size_t)B * sizeof *len);
    int64_t maxl = iter % 5 == 0 ? 64 : iter % 2 ? 700 : 3000;
    for (int64_t b = 0; b < B; b++) len[b] = rng() % 9 == 0 ? 0 : (int64_t)(rng() % (uint64_t)maxl);
    if (iter % 7 == 0)
      for (int64_t b = 0; b < B; b++) len[b] = 640; /* all alike */
    int64_t *o = offsets_of(len, B);
    int bm = good_blocks[rng() % 10], bn = good_blocks[rng() % 10];
    int wl = pick_bound(maxl), wr = pick_bound(maxl);
    if (iter % 11 == 0) wl = 0, wr = 0;
    if (iter % 13 == 0) bm = 64, bn = 128, wl = 256, wr = 0; /* JFA's blocks, a causal window */
    tile_jagged_params p = wparams(B, o, 1 + (int)(rng() % 6), bm, bn, 1 + (int)(rng() % (iter % 4 ? 140 : 700)),
                                   iter % 6 != 0, wl, wr);
    p.backward = 1;
    tile_jagged_schedule s = build_ok(&p);
    int32_t *rw, *rs;
    int64_t rn, rtot, rmk;
    ref_deal(&p, &rw, &rs, &rn, &rtot, &rmk);
    assert_int_equal(s.ntiles, rn);
    assert_int_equal(s.total_cost, rtot);
    assert_int_equal(s.max_cta_cost, rmk);
    assert_memory_equal(s.cta_start, rs, ((size_t)p.num_ctas + 1) * 4);
    if (rn) assert_memory_equal(s.work, rw, (size_t)rn * 16);
    if (p.zigzag) assert_true(s.max_cta_cost <= (s.total_cost + p.num_ctas - 1) / p.num_ctas + s.max_tile_cost);
    /* every tile exactly once: (b, h, n) in natural order, its cost the brute force's */
    char *seen = calloc((size_t)(rn ? rn : 1), 1);
    int64_t *base = malloc((size_t)(B + 1) * sizeof *base);
    base[0] = 0;
    for (int64_t b = 0; b < B; b++) base[b + 1] = base[b] + (len[b] + bn - 1) / bn * p.heads;
    assert_int_equal(base[B], s.ntiles);
    for (int64_t i = 0; i < s.ntiles; i++) {
      const int32_t *w = s.work + 4 * i;
      int64_t nb = (len[w[0]] + bn - 1) / bn, f;
      assert_true(w[1] >= 0 && w[1] < p.heads && w[2] >= 0 && w[2] < nb);
      int64_t k = base[w[0]] + (int64_t)w[1] * nb + w[2];
      assert_false(seen[k]);
      seen[k] = 1;
      assert_int_equal(w[3], ref_qrange(len[w[0]], w[2], bm, bn, wl, wr, &f));
    }
    free(seen), free(base), free(rw), free(rs);
    tile_jagged_schedule_free(&s);
    free(len), free(o);
  }
}

/* A realistic batch, JFA's backward blocks: the window-aware makespan is
 * at the ideal, where the window-blind schedule (every KV block costed
 * as all of its sequence's query blocks, what jfa_bwd.c did before) is
 * not. */
static void test_bwd_makespan(void **state) {
  (void)state;
  int64_t B = 300;
  int64_t *len = malloc((size_t)B * sizeof *len);
  for (int64_t b = 0; b < B; b++) len[b] = 1 + (int64_t)(rng() % 4096);
  int64_t *o = offsets_of(len, B);
  for (int W = 256; W <= 1024; W *= 4) {
    tile_jagged_params p = wparams(B, o, 8, 64, 128, 132, 1, W, 0), blind = p;
    p.backward = blind.backward = 1;
    blind.window = 0;
    tile_jagged_schedule s = build_ok(&p), sb = build_ok(&blind);
    int64_t lb = (s.total_cost + 131) / 132;
    lb = s.max_tile_cost > lb ? s.max_tile_cost : lb;
    /* the blind lists under the window's costs */
    int64_t mkb = 0;
    for (int c = 0; c < 132; c++) {
      int64_t l = 0;
      for (int32_t i = sb.cta_start[c]; i < sb.cta_start[c + 1]; i++) {
        const int32_t *w = sb.work + 4 * (int64_t)i;
        int64_t kf, ke;
        kernel_qrange(len[w[0]], w[2], 64, 128, W, 0, &kf, &ke);
        l += ke - kf;
      }
      mkb = l > mkb ? l : mkb;
    }
    print_message("[  INFO    ] backward window %d: makespan / bound %.4f, window-blind %.4f\n", W,
                  (double)s.max_cta_cost / (double)lb, (double)mkb / (double)lb);
    assert_true(s.max_cta_cost <= lb + s.max_tile_cost);
    assert_true(s.max_cta_cost * 1000 <= lb * 1010); /* within 1% */
    assert_true(s.max_cta_cost <= mkb);
    tile_jagged_schedule_free(&s), tile_jagged_schedule_free(&sb);
  }
  free(len), free(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_costs_brute),   cmocka_unit_test(test_costs_hand),
      cmocka_unit_test(test_causal_equivalent), cmocka_unit_test(test_random_vs_reference),
      cmocka_unit_test(test_split_hand),    cmocka_unit_test(test_split_random),
      cmocka_unit_test(test_bad),           cmocka_unit_test(test_rebuild),
      cmocka_unit_test(test_makespan),
      cmocka_unit_test(test_bwd_costs_brute),   cmocka_unit_test(test_bwd_costs_hand),
      cmocka_unit_test(test_bwd_causal_equivalent), cmocka_unit_test(test_bwd_random_vs_reference),
      cmocka_unit_test(test_bwd_makespan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

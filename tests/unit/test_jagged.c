/* test_jagged.c - the host-side jagged tile scheduler (include/tile/jagged.h):
 *
 *   - causal and non-causal tile costs on hand examples (L = 1, L = BM,
 *     L = BM+1, L a multiple of no block), with BM > BN and BM < BN;
 *   - the exact zigzag dealing of a hand-made example, and of the baseline;
 *   - random batches (self, causal, broadcast-Q; int32 and int64 offsets;
 *     empty sequences; more CTAs than tiles) against a brute-force reference:
 *     the same lists tile for tile, every tile exactly once, costs
 *     non-increasing in the global dealing order (causal: sequence-major,
 *     each tile to the least-loaded CTA, within one tile of the mean), the
 *     reported totals;
 *   - empty sequences (no tiles in self mode, cost-0 tiles in broadcast-Q);
 *   - the qsort path for costs far above the tile count;
 *   - bad parameters and offsets rejected with messages;
 *   - rebuild: reuses the arrays, gives the same schedule as a fresh build;
 *   - B = 10^5 x 16 heads: fast, balanced (max CTA cost <= ceil(total/n) +
 *     the largest tile), and zigzag's makespan beats the round-robin
 *     baseline on a skewed length distribution;
 *   - tail splitting: dense batches (the D8k shape, fewer tiles than CTAs,
 *     broadcast-Q) cut their last partial pass into pieces with the
 *     expected counts and makespan; causal, round robin, whole passes, a
 *     tail of 1-block tiles and no split parameters are left unsplit; random
 *     batches always give a valid cover (every tile's KV blocks once, slots
 *     once and in KV order, one combine entry per split tile) that is never
 *     worse; bad arguments are rejected.
 */
#include <time.h>

#include "testutil.h"
#include "tile/jagged.h"
#include "tile/runtime.h"

/* ---- helpers ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) { return tu_xorshift(&rng_state); }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* int64 offsets from lengths (caller frees). */
static int64_t *offsets_of(const int64_t *len, int64_t B) {
  int64_t *o = malloc((size_t)(B + 1) * sizeof *o);
  o[0] = 0;
  for (int64_t b = 0; b < B; b++) o[b + 1] = o[b] + len[b];
  return o;
}
static int32_t *offsets32_of(const int64_t *o64, int64_t B) {
  int32_t *o = malloc((size_t)(B + 1) * sizeof *o);
  for (int64_t b = 0; b <= B; b++) o[b] = (int32_t)o64[b];
  return o;
}

static tile_jagged_params params(int64_t B, const void *off, int is64, int heads, int bm, int bn, int causal,
                                 int64_t nq, int ctas, int zig) {
  tile_jagged_params p = {B, off, is64, heads, bm, bn, causal, nq, ctas, zig};
  return p;
}

static tile_jagged_schedule build_ok(const tile_jagged_params *p) {
  tile_jagged_schedule s;
  tile_status st = tile_jagged_schedule_build(p, &s);
  if (st != TILE_OK) fprintf(stderr, "build failed: %s: %s\n", tile_status_name(st), tile_last_error());
  assert_int_equal(st, TILE_OK);
  assert_non_null(s.work);
  assert_non_null(s.cta_start);
  return s;
}

/* Brute-force cost: count the KV blocks that hold at least one key some
 * query row of the tile sees. */
static int64_t ref_cost(int64_t Lkv, int64_t q1, int bn, int causal) {
  if (!causal && Lkv > (int64_t)1 << 24) return (Lkv + bn - 1) / bn; /* huge KV (test_huge_costs): closed form */
  int64_t n = 0;
  for (int64_t kb = 0; kb * bn < Lkv; kb++)
    if (!causal || kb * bn <= q1 - 1) n++; /* some query row q < q1 sees key kb * bn */
  return n;
}

typedef struct rtile {
  int32_t b, h, m, cost;
  int64_t idx;     /* natural index */
  int32_t seqcost; /* the heaviest tile of its sequence */
} rtile;

static int rtile_cmp(const void *a, const void *b) {
  const rtile *x = a, *y = b;
  if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Causal: sequences by their heaviest tile (descending, then in order), a
 * sequence's tiles by query block (descending), then head. */
static int rtile_causal_cmp(const void *a, const void *b) {
  const rtile *x = a, *y = b;
  if (x->seqcost != y->seqcost) return x->seqcost > y->seqcost ? -1 : 1;
  if (x->b != y->b) return x->b < y->b ? -1 : 1;
  if (x->m != y->m) return x->m > y->m ? -1 : 1;
  return x->h < y->h ? -1 : x->h > y->h;
}

/* The reference schedule: enumerate, sort (or not), deal pass by pass. */
static void ref_schedule(const tile_jagged_params *p, int32_t **work_out, int32_t **start_out, int64_t *nt_out,
                         int64_t *total_out, int64_t *makespan_out) {
  int64_t cap = 1024, nt = 0;
  rtile *t = malloc((size_t)cap * sizeof *t);
  for (int64_t b = 0; b < p->batch; b++) {
    int64_t o0 = p->offsets_are_64bit ? ((const int64_t *)p->offsets)[b] : ((const int32_t *)p->offsets)[b];
    int64_t o1 = p->offsets_are_64bit ? ((const int64_t *)p->offsets)[b + 1] : ((const int32_t *)p->offsets)[b + 1];
    int64_t L = o1 - o0;
    int64_t rows = p->num_q ? p->num_q : L;
    for (int h = 0; h < p->heads; h++)
      for (int64_t m = 0; m * p->block_m < rows; m++) {
        if (nt == cap) t = realloc(t, (size_t)(cap *= 2) * sizeof *t);
        int64_t q1 = (m + 1) * p->block_m < rows ? (m + 1) * p->block_m : rows;
        t[nt] = (rtile){(int32_t)b, h, (int32_t)m, (int32_t)ref_cost(L, q1, p->block_n, p->causal),
                        nt, 0};
        nt++;
      }
  }
  for (int64_t i = 0, j; i < nt; i = j) { /* the heaviest tile of each sequence */
    int32_t mx = 0;
    for (j = i; j < nt && t[j].b == t[i].b; j++) mx = t[j].cost > mx ? t[j].cost : mx;
    for (int64_t k = i; k < j; k++) t[k].seqcost = mx;
  }
  if (p->zigzag) qsort(t, (size_t)nt, sizeof *t, p->causal ? rtile_causal_cmp : rtile_cmp);
  int n = p->num_ctas;
  int64_t *cnt = calloc((size_t)n, sizeof *cnt), *load = calloc((size_t)n, sizeof *load);
  int *cta_of = malloc((size_t)(nt ? nt : 1) * sizeof *cta_of);
  for (int64_t k = 0; k < nt; k++) {
    int64_t pass = k / n;
    int r = (int)(k % n);
    int c = (p->zigzag && pass % 2 == 1) ? n - 1 - r : r;
    if (p->zigzag && p->causal) { /* causal: the least-loaded CTA, ties to the lowest index */
      c = 0;
      for (int i = 1; i < n; i++)
        if (load[i] < load[c]) c = i;
    }
    cta_of[k] = c;
    cnt[c]++;
    load[c] += t[k].cost;
  }
  int32_t *start = malloc((size_t)(n + 1) * sizeof *start);
  start[0] = 0;
  for (int c = 0; c < n; c++) start[c + 1] = start[c] + (int32_t)cnt[c];
  int32_t *work = malloc((size_t)(nt ? nt : 1) * 4 * sizeof *work);
  int64_t *fill = calloc((size_t)n, sizeof *fill), total = 0, mk = 0;
  for (int64_t k = 0; k < nt; k++) {
    int32_t *w = work + 4 * (start[cta_of[k]] + fill[cta_of[k]]++);
    w[0] = t[k].b, w[1] = t[k].h, w[2] = t[k].m, w[3] = t[k].cost;
    total += t[k].cost;
  }
  for (int c = 0; c < n; c++)
    if (load[c] > mk) mk = load[c];
  *work_out = work, *start_out = start, *nt_out = nt, *total_out = total, *makespan_out = mk;
  free(t), free(cnt), free(load), free(cta_of), free(fill);
}

/* The rank-k tile of the global dealing order, read back from the lists. */
static const int32_t *dealt(const tile_jagged_schedule *s, int64_t k, int zig) {
  int n = s->num_ctas;
  int64_t pass = k / n;
  int r = (int)(k % n);
  int c = (zig && pass % 2 == 1) ? n - 1 - r : r;
  assert_true(s->cta_start[c] + pass < s->cta_start[c + 1]);
  return s->work + 4 * (s->cta_start[c] + pass);
}

static int tuple_lex(const void *a, const void *b) {
  const int32_t *x = a, *y = b;
  for (int i = 0; i < 4; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/* Everything the schedule promises, checked against the reference. */
static void check_against_ref(const tile_jagged_params *p, const tile_jagged_schedule *s) {
  int32_t *rw, *rs;
  int64_t rnt, rtotal, rmk;
  ref_schedule(p, &rw, &rs, &rnt, &rtotal, &rmk);
  assert_int_equal(s->num_ctas, p->num_ctas);
  assert_int_equal(s->ntiles, rnt);
  assert_int_equal(s->total_cost, rtotal);
  assert_int_equal(s->max_cta_cost, rmk);
  assert_int_equal(s->cta_start[0], 0);
  assert_memory_equal(s->cta_start, rs, (size_t)(p->num_ctas + 1) * sizeof(int32_t));
  if (rnt) assert_memory_equal(s->work, rw, (size_t)rnt * 4 * sizeof(int32_t));
  /* Independently of the reference: costs non-increasing in dealing order
   * (zigzag, not causal), every tile exactly once (set equality after
   * sorting); causal zigzag: within one tile of the mean (Graham). */
  int64_t maxc = 0;
  for (int64_t k = 0; k < s->ntiles; k++) {
    const int32_t *w = (p->zigzag && p->causal) ? s->work + 4 * k : dealt(s, k, p->zigzag);
    if (w[3] > maxc) maxc = w[3];
    if (p->zigzag && !p->causal && k) assert_true(dealt(s, k - 1, 1)[3] >= w[3]);
  }
  if (p->zigzag && p->causal)
    assert_true(s->max_cta_cost <= (s->total_cost + p->num_ctas - 1) / p->num_ctas + s->max_tile_cost);
  assert_int_equal(s->max_tile_cost, maxc);
  if (rnt) {
    int32_t *a = malloc((size_t)rnt * 16), *b = malloc((size_t)rnt * 16);
    memcpy(a, s->work, (size_t)rnt * 16);
    memcpy(b, rw, (size_t)rnt * 16);
    qsort(a, (size_t)rnt, 16, tuple_lex);
    qsort(b, (size_t)rnt, 16, tuple_lex);
    assert_memory_equal(a, b, (size_t)rnt * 16);
    for (int64_t i = 1; i < rnt; i++) assert_true(tuple_lex(a + 4 * (i - 1), a + 4 * i) < 0); /* no duplicates */
    free(a), free(b);
  }
  free(rw), free(rs);
}

/* ---- tests ---- */

/* One sequence of L rows, one head, one CTA: the tile costs in m order. */
static void costs_of(int64_t L, int bm, int bn, int causal, int32_t *costs, int64_t *ntiles) {
  int64_t off[2] = {0, L};
  tile_jagged_params p = params(1, off, 1, 1, bm, bn, causal, 0, 1, 0);
  tile_jagged_schedule s = build_ok(&p);
  *ntiles = s.ntiles;
  for (int64_t i = 0; i < s.ntiles; i++) {
    assert_int_equal(s.work[4 * i], 0);
    assert_int_equal(s.work[4 * i + 2], i); /* natural order */
    costs[i] = s.work[4 * i + 3];
  }
  tile_jagged_schedule_free(&s);
}

static void test_causal_costs(void **state) {
  (void)state;
  int32_t c[64];
  int64_t nt;
  costs_of(1, 128, 128, 1, c, &nt);
  assert_int_equal(nt, 1), assert_int_equal(c[0], 1);
  costs_of(1, 128, 128, 0, c, &nt);
  assert_int_equal(nt, 1), assert_int_equal(c[0], 1);
  costs_of(128, 128, 128, 1, c, &nt); /* L = BM */
  assert_int_equal(nt, 1), assert_int_equal(c[0], 1);
  costs_of(128, 128, 64, 1, c, &nt);
  assert_int_equal(nt, 1), assert_int_equal(c[0], 2);
  costs_of(129, 128, 64, 1, c, &nt); /* L = BM + 1: a one-row last block */
  assert_int_equal(nt, 2), assert_int_equal(c[0], 2), assert_int_equal(c[1], 3);
  costs_of(129, 128, 128, 1, c, &nt);
  assert_int_equal(nt, 2), assert_int_equal(c[0], 1), assert_int_equal(c[1], 2);
  costs_of(129, 128, 128, 0, c, &nt);
  assert_int_equal(nt, 2), assert_int_equal(c[0], 2), assert_int_equal(c[1], 2);
  costs_of(300, 128, 64, 1, c, &nt); /* a multiple of no block */
  assert_int_equal(nt, 3), assert_int_equal(c[0], 2), assert_int_equal(c[1], 4), assert_int_equal(c[2], 5);
  costs_of(300, 128, 64, 0, c, &nt);
  assert_int_equal(nt, 3), assert_int_equal(c[0], 5), assert_int_equal(c[1], 5), assert_int_equal(c[2], 5);
  costs_of(300, 64, 128, 1, c, &nt); /* BM < BN: several query blocks share a KV block */
  assert_int_equal(nt, 5);
  int32_t want[5] = {1, 1, 2, 2, 3};
  assert_memory_equal(c, want, sizeof want);
  costs_of(300, 16, 256, 1, c, &nt);
  assert_int_equal(nt, 19);
  for (int i = 0; i < 19; i++) assert_int_equal(c[i], i < 16 ? 1 : 2);
  /* a KV block of 160 rows (not a power of two): causal query block m
   * ends at row min(128 (m + 1), 300) - 1 = 127, 255, 299: KV blocks 0..0,
   * 0..1, 0..1 */
  costs_of(300, 128, 160, 1, c, &nt);
  assert_int_equal(nt, 3), assert_int_equal(c[0], 1), assert_int_equal(c[1], 2), assert_int_equal(c[2], 2);
  costs_of(300, 128, 160, 0, c, &nt);
  assert_int_equal(nt, 3), assert_int_equal(c[0], 2), assert_int_equal(c[1], 2), assert_int_equal(c[2], 2);
  costs_of(321, 48, 176, 0, c, &nt); /* cdiv(321, 48) = 7 tiles of cdiv(321, 176) = 2 */
  assert_int_equal(nt, 7), assert_int_equal(c[6], 2);
}

/* Seven one-tile sequences of costs 1 5 3 7 2 7 4 (L = 16*cost, BM = 256,
 * BN = 16) over 3 CTAs. */
static void test_zigzag_exact(void **state) {
  (void)state;
  int64_t len[7] = {16, 80, 48, 112, 32, 112, 64};
  int64_t *off = offsets_of(len, 7);
  tile_jagged_params p = params(7, off, 1, 1, 256, 16, 0, 0, 3, 1);
  tile_jagged_schedule s = build_ok(&p);
  /* sorted: b3(7) b5(7) b1(5) b6(4) b2(3) b4(2) b0(1)
   * pass 0 -> CTA 0,1,2: b3 b5 b1; pass 1 -> CTA 2,1,0: b6 b2 b4; pass 2 -> CTA 0: b0 */
  int32_t start[4] = {0, 3, 5, 7};
  int32_t work[7 * 4] = {3, 0, 0, 7, 4, 0, 0, 2, 0, 0, 0, 1, /* CTA 0 */
                         5, 0, 0, 7, 2, 0, 0, 3,             /* CTA 1 */
                         1, 0, 0, 5, 6, 0, 0, 4};            /* CTA 2 */
  assert_int_equal(s.ntiles, 7);
  assert_memory_equal(s.cta_start, start, sizeof start);
  assert_memory_equal(s.work, work, sizeof work);
  assert_int_equal(s.total_cost, 29);
  assert_int_equal(s.max_cta_cost, 10); /* 10 10 9 */
  assert_int_equal(s.max_tile_cost, 7);
  tile_jagged_schedule_free(&s);

  /* The baseline: natural order, round robin: CTA 0 b0 b3 b6 (12), CTA 1 b1 b4 (7), CTA 2 b2 b5 (10). */
  p.zigzag = 0;
  s = build_ok(&p);
  int32_t bstart[4] = {0, 3, 5, 7};
  int32_t bwork[7 * 4] = {0, 0, 0, 1, 3, 0, 0, 7, 6, 0, 0, 4, 1, 0, 0, 5, 4, 0, 0, 2, 2, 0, 0, 3, 5, 0, 0, 7};
  assert_memory_equal(s.cta_start, bstart, sizeof bstart);
  assert_memory_equal(s.work, bwork, sizeof bwork);
  assert_int_equal(s.max_cta_cost, 12);
  tile_jagged_schedule_free(&s);

  /* Two passes plus a partial odd pass: it fills from the right.  8 tiles over 3
   * CTAs: passes 0, 1 take 6, pass 2 (even) takes CTAs 0, 1. 10 tiles over 4:
   * pass 2 is even again; 7 tiles over 2: pass 3 (odd) is partial -> CTA 1. */
  int64_t len2[7] = {16, 16, 16, 16, 16, 16, 16};
  int64_t *off2 = offsets_of(len2, 7);
  p = params(7, off2, 1, 1, 256, 16, 0, 0, 2, 1);
  s = build_ok(&p);
  int32_t s2[3] = {0, 3, 7}; /* passes: 0 1 | 1 0 | 0 1 | 1 -> CTA 0: 3 tiles, CTA 1: 4 */
  assert_memory_equal(s.cta_start, s2, sizeof s2);
  int32_t w2[7 * 4] = {0, 0, 0, 1, 3, 0, 0, 1, 4, 0, 0, 1, /* CTA 0: ranks 0, 3, 4 */
                       1, 0, 0, 1, 2, 0, 0, 1, 5, 0, 0, 1, 6, 0, 0, 1}; /* CTA 1: ranks 1, 2, 5, 6 */
  assert_memory_equal(s.work, w2, sizeof w2);
  tile_jagged_schedule_free(&s);
  free(off), free(off2);
}

static void test_random_vs_reference(void **state) {
  (void)state;
  static const int blocks[] = {16, 32, 64, 128, 256, 48, 160, 176}; /* not only powers of two */
  for (int iter = 0; iter < 300; iter++) {
    int64_t B = 1 + (int64_t)(rng() % 40);
    int64_t *len = malloc((size_t)B * sizeof *len);
    int maxlen = (int)(rng() % 3 == 0 ? 20 : rng() % 2 ? 700 : 3000);
    for (int64_t b = 0; b < B; b++) len[b] = rng() % 4 == 0 ? 0 : (int64_t)(rng() % (uint64_t)(maxlen + 1));
    int64_t *o64 = offsets_of(len, B);
    int32_t *o32 = offsets32_of(o64, B);
    int is64 = iter & 1;
    int bcast = rng() % 3 == 0;
    tile_jagged_params p = params(B, is64 ? (void *)o64 : (void *)o32, is64, 1 + (int)(rng() % 5),
                                  blocks[rng() % 8], blocks[rng() % 8], bcast ? 0 : (int)(rng() % 2),
                                  bcast ? 1 + (int64_t)(rng() % 500) : 0, 1 + (int)(rng() % 150), (iter / 2) % 2);
    tile_jagged_schedule s = build_ok(&p);
    check_against_ref(&p, &s);
    /* Deterministic: a second build is byte-identical. */
    tile_jagged_schedule s2 = build_ok(&p);
    assert_memory_equal(s2.cta_start, s.cta_start, (size_t)(p.num_ctas + 1) * 4);
    if (s.ntiles) assert_memory_equal(s2.work, s.work, (size_t)s.ntiles * 16);
    /* int32 and int64 offsets give the same schedule. */
    p.offsets = is64 ? (void *)o32 : (void *)o64;
    p.offsets_are_64bit = !is64;
    tile_jagged_schedule s3 = build_ok(&p);
    assert_int_equal(s3.ntiles, s.ntiles);
    assert_memory_equal(s3.cta_start, s.cta_start, (size_t)(p.num_ctas + 1) * 4);
    if (s.ntiles) assert_memory_equal(s3.work, s.work, (size_t)s.ntiles * 16);
    tile_jagged_schedule_free(&s), tile_jagged_schedule_free(&s2), tile_jagged_schedule_free(&s3);
    free(len), free(o64), free(o32);
  }
}

static void test_empty_sequences(void **state) {
  (void)state;
  int32_t off[7] = {0, 0, 5, 5, 5, 10, 10}; /* sequences 1 and 4 have 5 rows */
  tile_jagged_params p = params(6, off, 0, 2, 64, 64, 1, 0, 4, 1);
  tile_jagged_schedule s = build_ok(&p);
  assert_int_equal(s.ntiles, 4); /* 2 sequences x 2 heads x 1 block */
  for (int64_t i = 0; i < s.ntiles; i++) {
    assert_true(s.work[4 * i] == 1 || s.work[4 * i] == 4);
    assert_int_equal(s.work[4 * i + 3], 1);
  }
  check_against_ref(&p, &s);
  tile_jagged_schedule_free(&s);

  /* All empty: no tiles, valid (non-NULL) arrays, all lists empty. */
  int32_t zero[4] = {0, 0, 0, 0};
  p = params(3, zero, 0, 2, 64, 64, 0, 0, 5, 1);
  s = build_ok(&p);
  assert_int_equal(s.ntiles, 0);
  assert_int_equal(s.total_cost, 0);
  assert_int_equal(s.max_cta_cost, 0);
  for (int c = 0; c <= 5; c++) assert_int_equal(s.cta_start[c], 0);
  tile_jagged_schedule_free(&s);
  tile_jagged_schedule_free(&s); /* twice: a no-op */
  tile_jagged_schedule_free(NULL);

  /* Broadcast-Q: empty KV sequences still get their tiles, with cost 0, last. */
  p = params(6, off, 0, 2, 64, 64, 0, 100, 3, 1);
  s = build_ok(&p);
  assert_int_equal(s.ntiles, 6 * 2 * 2); /* every (b, h) has cdiv(100, 64) = 2 query blocks */
  assert_int_equal(s.total_cost, 2 * 2 * 2 * 1);
  for (int64_t k = 0; k < s.ntiles; k++) {
    const int32_t *w = dealt(&s, k, 1);
    int nonempty = w[0] == 1 || w[0] == 4;
    assert_int_equal(w[3], nonempty ? 1 : 0);
    assert_int_equal(k < 8, nonempty); /* cost 0 sorts last */
  }
  check_against_ref(&p, &s);
  tile_jagged_schedule_free(&s);
}

static void test_broadcast_q(void **state) {
  (void)state;
  int64_t len[4] = {1000, 1, 0, 257};
  int64_t *off = offsets_of(len, 4);
  tile_jagged_params p = params(4, off, 1, 3, 128, 64, 0, 300, 7, 1);
  tile_jagged_schedule s = build_ok(&p);
  assert_int_equal(s.ntiles, 4 * 3 * 3); /* cdiv(300, 128) = 3 */
  int64_t want[4] = {16, 1, 0, 5};       /* cdiv(L, 64) */
  for (int64_t i = 0; i < s.ntiles; i++) {
    assert_true(s.work[4 * i + 2] >= 0 && s.work[4 * i + 2] < 3);
    assert_int_equal(s.work[4 * i + 3], want[s.work[4 * i]]);
  }
  assert_int_equal(s.total_cost, 9 * (16 + 1 + 0 + 5));
  check_against_ref(&p, &s);
  tile_jagged_schedule_free(&s);

  /* Nq not a multiple of BM, Nq < BM: one block. */
  p.num_q = 5;
  s = build_ok(&p);
  assert_int_equal(s.ntiles, 4 * 3);
  check_against_ref(&p, &s);
  tile_jagged_schedule_free(&s);
  free(off);
}

/* Costs far above the tile count take the qsort path: same order. */
static void test_huge_costs(void **state) {
  (void)state;
  int64_t len[5] = {(int64_t)1 << 34, 3, (int64_t)1 << 33, 0, ((int64_t)1 << 34) - 5};
  int64_t *off = offsets_of(len, 5);
  tile_jagged_params p = params(5, off, 1, 2, 64, 16, 0, 70, 3, 1);
  tile_jagged_schedule s = build_ok(&p);
  assert_int_equal(s.max_tile_cost, (int64_t)1 << 30);
  check_against_ref(&p, &s);
  assert_int_equal(dealt(&s, 0, 1)[0], 0);
  assert_int_equal(dealt(&s, 4, 1)[0], 4); /* 2 heads x 2 blocks of cost 2^30, then b4's */
  tile_jagged_schedule_free(&s);
  p.zigzag = 0;
  s = build_ok(&p);
  check_against_ref(&p, &s);
  tile_jagged_schedule_free(&s);
  free(off);
}

static void expect_invalid(const tile_jagged_params *p, const char *needle) {
  tile_jagged_schedule s;
  memset(&s, 0x5a, sizeof s);
  tile_status st = tile_jagged_schedule_build(p, &s);
  if (st != TILE_ERR_INVALID || !strstr(tile_last_error(), needle))
    fprintf(stderr, "expected INVALID with \"%s\", got %s: %s\n", needle, tile_status_name(st), tile_last_error());
  assert_int_equal(st, TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), needle));
  assert_null(s.work); /* zeroed on failure */
  assert_null(s.cta_start);
  assert_int_equal(s.ntiles, 0);
  tile_jagged_schedule_free(&s);
}

static void test_bad_params(void **state) {
  (void)state;
  int32_t off[4] = {0, 10, 20, 30};
  tile_jagged_params good = params(3, off, 0, 2, 64, 64, 0, 0, 4, 1), p;
  tile_jagged_schedule s;
  assert_int_equal(tile_jagged_schedule_build(NULL, &s), TILE_ERR_INVALID);
  assert_int_equal(tile_jagged_schedule_build(&good, NULL), TILE_ERR_INVALID);
  p = good, p.batch = 0;
  expect_invalid(&p, "batch 0 is out of range");
  p = good, p.batch = TILE_JAGGED_MAX_BATCH + 1;
  expect_invalid(&p, "batch 10000001 is out of range");
  p = good, p.heads = 0;
  expect_invalid(&p, "heads is 0");
  p = good, p.block_m = 8;
  expect_invalid(&p, "multiple of 16 from 16 to 256");
  p = good, p.block_n = 100;
  expect_invalid(&p, "block_n = 100");
  p = good, p.block_n = 0;
  expect_invalid(&p, "block_n = 0");
  p = good, p.block_n = 272;
  expect_invalid(&p, "block_n = 272");
  p = good, p.block_m = 512;
  expect_invalid(&p, "block_m = 512");
  p = good, p.num_ctas = 0;
  expect_invalid(&p, "num_ctas is 0");
  p = good, p.num_ctas = TILE_JAGGED_MAX_CTAS + 1;
  expect_invalid(&p, "num_ctas");
  p = good, p.num_q = -1;
  expect_invalid(&p, "num_q is -1");
  p = good, p.num_q = 64, p.causal = 1;
  expect_invalid(&p, "causal masking is defined for self-attention only");
  p = good, p.offsets = NULL;
  expect_invalid(&p, "NULL");

  /* Tile counts and costs that would overflow int32. */
  int64_t big[2] = {0, (int64_t)1 << 35};
  p = params(1, big, 1, 1, 16, 256, 0, 0, 4, 1);
  expect_invalid(&p, "tile indices would overflow int32");
  int32_t small[2] = {0, 16};
  p = params(1, small, 0, 1 << 30, 16, 16, 0, 0, 4, 1);
  expect_invalid(&p, "more than 536870911 tiles");
  int64_t longkv[2] = {0, (int64_t)1 << 40};
  p = params(1, longkv, 1, 1, 64, 16, 0, 1, 4, 1);
  expect_invalid(&p, "the tile cost overflows int32");
  p = params(1, small, 0, 1, 16, 16, 0, (int64_t)1 << 36, 4, 1);
  expect_invalid(&p, "query blocks per (sequence, head)");
  /* Exactly at the limit of costs is fine: cdiv(L, 16) = INT32_MAX. */
  int64_t edge[2] = {0, (int64_t)INT32_MAX * 16};
  p = params(1, edge, 1, 1, 16, 16, 0, 1, 4, 1);
  s = build_ok(&p);
  assert_int_equal(s.max_tile_cost, INT32_MAX);
  assert_int_equal(s.work[3], INT32_MAX);
  tile_jagged_schedule_free(&s);
}

static void test_bad_offsets(void **state) {
  (void)state;
  int32_t o1[4] = {3, 10, 20, 30};
  assert_int_equal(tile_jagged_check_offsets(o1, 3, 0, -1), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "offsets[0] is 3, must be 0"));
  tile_jagged_params p = params(3, o1, 0, 2, 64, 64, 0, 0, 4, 1);
  expect_invalid(&p, "offsets[0] is 3");

  int64_t o2[5] = {0, 10, 20, 15, 30};
  assert_int_equal(tile_jagged_check_offsets(o2, 4, 1, 30), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "decrease at index 3: offsets[2] = 20 > offsets[3] = 15"));
  p = params(4, o2, 1, 2, 64, 64, 0, 0, 4, 1);
  expect_invalid(&p, "offsets[2] = 20 > offsets[3] = 15");

  int32_t o3[3] = {0, -1, 5};
  assert_int_equal(tile_jagged_check_offsets(o3, 2, 0, -1), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "offsets[0] = 0 > offsets[1] = -1"));

  int32_t o4[4] = {0, 10, 20, 30};
  assert_int_equal(tile_jagged_check_offsets(o4, 3, 0, 30), TILE_OK);
  assert_int_equal(tile_jagged_check_offsets(o4, 3, 0, -1), TILE_OK);
  assert_int_equal(tile_jagged_check_offsets(o4, 3, 0, 31), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "offsets[3] (the end of the last sequence) is 30, but the tensor has 31 rows"));
  assert_int_equal(tile_jagged_check_offsets(NULL, 3, 0, 30), TILE_ERR_INVALID);
  assert_int_equal(tile_jagged_check_offsets(o4, 0, 0, 0), TILE_ERR_INVALID);
  /* int32 vs int64 reading: the same bytes read as int64 are garbage, and
   * offsets[0] = 10 << 32 | 0 is caught. */
  assert_int_equal(tile_jagged_check_offsets(o4, 1, 1, -1), TILE_ERR_INVALID);
}

static void test_rebuild(void **state) {
  (void)state;
  int64_t len[6] = {300, 0, 1000, 17, 4096, 5};
  int64_t *off = offsets_of(len, 6);
  tile_jagged_params big = params(6, off, 1, 4, 64, 64, 1, 0, 10, 1);
  tile_jagged_params small = params(3, off, 1, 2, 128, 64, 0, 0, 3, 0);
  tile_jagged_schedule s;
  memset(&s, 0, sizeof s);
  assert_int_equal(tile_jagged_schedule_rebuild(&big, &s), TILE_OK); /* from a zeroed schedule */
  check_against_ref(&big, &s);
  int32_t *w = s.work, *cs = s.cta_start;
  assert_true(s.work_cap >= s.ntiles && s.cta_cap >= 11);
  assert_int_equal(tile_jagged_schedule_rebuild(&small, &s), TILE_OK); /* smaller: same arrays */
  assert_ptr_equal(s.work, w);
  assert_ptr_equal(s.cta_start, cs);
  check_against_ref(&small, &s);
  assert_int_equal(tile_jagged_schedule_rebuild(&big, &s), TILE_OK);
  check_against_ref(&big, &s);
  big.num_ctas = 500; /* more CTAs than tiles: many empty lists, a larger cta_start */
  assert_int_equal(tile_jagged_schedule_rebuild(&big, &s), TILE_OK);
  check_against_ref(&big, &s);
  assert_true(s.cta_cap >= 501);
  big.heads = 64; /* more tiles: a larger work array */
  assert_int_equal(tile_jagged_schedule_rebuild(&big, &s), TILE_OK);
  check_against_ref(&big, &s);
  big.block_m = 7; /* a failure frees and zeroes */
  assert_int_equal(tile_jagged_schedule_rebuild(&big, &s), TILE_ERR_INVALID);
  assert_null(s.work);
  assert_null(s.cta_start);
  assert_int_equal(s.work_cap, 0);
  assert_int_equal(tile_jagged_schedule_rebuild(&small, &s), TILE_OK);
  check_against_ref(&small, &s);
  tile_jagged_schedule_free(&s);
  assert_int_equal(tile_jagged_schedule_rebuild(&small, NULL), TILE_ERR_INVALID);
  free(off);
}

/* A recommendation-like skewed batch: most histories short, a few very long. */
static int64_t *skewed_lengths(int64_t B) {
  int64_t *len = malloc((size_t)B * sizeof *len);
  for (int64_t b = 0; b < B; b++) {
    uint64_t r = rng() % 1000;
    if (r < 50) len[b] = 0;
    else if (r < 900) len[b] = 1 + (int64_t)(rng() % 512);
    else if (r < 990) len[b] = 512 + (int64_t)(rng() % 3584);
    else len[b] = 4096 + (int64_t)(rng() % 12288);
  }
  return len;
}

static void test_huge_batch(void **state) {
  (void)state;
  const int64_t B = 100000;
  int64_t *len = skewed_lengths(B);
  int64_t *o64 = offsets_of(len, B);
  int32_t *o32 = offsets32_of(o64, B);
  for (int causal = 0; causal <= 1; causal++) {
    tile_jagged_params p = params(B, o32, 0, 16, 128, 128, causal, 0, 132, 1);
    double t0 = now_ms();
    tile_jagged_schedule s = build_ok(&p);
    double ms = now_ms() - t0;
    p.zigzag = 0;
    double t1 = now_ms();
    tile_jagged_schedule base = build_ok(&p);
    double bms = now_ms() - t1;
    p.zigzag = 1;
    double t2 = now_ms();
    assert_int_equal(tile_jagged_schedule_rebuild(&p, &base), TILE_OK); /* warm arrays: no page faults */
    double rms = now_ms() - t2;
    assert_int_equal(base.max_cta_cost, s.max_cta_cost);
    assert_memory_equal(base.work, s.work, (size_t)s.ntiles * 16);
    p.zigzag = 0;
    assert_int_equal(tile_jagged_schedule_rebuild(&p, &base), TILE_OK);
    int64_t ideal = (s.total_cost + 131) / 132;
    fprintf(stderr,
            "[  INFO    ] B=%lld H=16 %s: %lld tiles, total cost %lld, ideal %lld; zigzag makespan %lld (%.3f x ideal, "
            "build %.1f ms, rebuild %.1f ms), round robin %lld (%.3f x ideal, %.1f ms)\n",
            (long long)B, causal ? "causal" : "non-causal", (long long)s.ntiles, (long long)s.total_cost,
            (long long)ideal, (long long)s.max_cta_cost, (double)s.max_cta_cost / ideal, ms, rms,
            (long long)base.max_cta_cost, (double)base.max_cta_cost / ideal, bms);
    assert_int_equal(s.ntiles, base.ntiles);
    assert_int_equal(s.total_cost, base.total_cost);
    assert_true(s.max_cta_cost <= ideal + s.max_tile_cost);
    assert_true(s.max_cta_cost <= base.max_cta_cost);
    assert_true(ms < 2000); /* generous: sanitizer builds run this too */
    /* Per-CTA sums agree with the reported makespan; costs sorted in dealing order. */
    int64_t mk = 0;
    for (int c = 0; c < 132; c++) {
      int64_t sum = 0;
      for (int32_t i = s.cta_start[c]; i < s.cta_start[c + 1]; i++) sum += s.work[4 * i + 3];
      if (sum > mk) mk = sum;
    }
    assert_int_equal(mk, s.max_cta_cost);
    if (!causal) /* causal schedules are sequence-major, dealt to the least-loaded CTA */
      for (int64_t k = 1; k < s.ntiles; k++) assert_true(dealt(&s, k - 1, 1)[3] >= dealt(&s, k, 1)[3]);
    tile_jagged_schedule_free(&s), tile_jagged_schedule_free(&base);
  }
  free(len), free(o64), free(o32);
}

/* A small skewed batch: the exact reference agrees, and zigzag beats round robin. */
static void test_makespan_skewed(void **state) {
  (void)state;
  const int64_t B = 2000;
  int64_t *len = skewed_lengths(B);
  int64_t *o64 = offsets_of(len, B);
  for (int causal = 0; causal <= 1; causal++) {
    tile_jagged_params p = params(B, o64, 1, 4, 128, 64, causal, 0, 132, 1);
    tile_jagged_schedule z = build_ok(&p);
    check_against_ref(&p, &z);
    p.zigzag = 0;
    tile_jagged_schedule r = build_ok(&p);
    check_against_ref(&p, &r);
    assert_true(z.max_cta_cost <= r.max_cta_cost);
    assert_true(z.max_cta_cost <= (z.total_cost + 131) / 132 + z.max_tile_cost);
    tile_jagged_schedule_free(&z), tile_jagged_schedule_free(&r);
  }
  /* Sorted lengths (long sequences first) are round robin's worst case. */
  int64_t len2[264];
  for (int i = 0; i < 264; i++) len2[i] = i < 132 ? 8192 : 64;
  int64_t *o2 = offsets_of(len2, 264);
  tile_jagged_params p = params(264, o2, 1, 1, 128, 128, 1, 0, 132, 1);
  tile_jagged_schedule z = build_ok(&p);
  p.zigzag = 0;
  tile_jagged_schedule r = build_ok(&p);
  assert_true(z.max_cta_cost < r.max_cta_cost);
  tile_jagged_schedule_free(&z), tile_jagged_schedule_free(&r);
  free(len), free(o64), free(o2);
}

/* ---- tail splitting ---- */

static int item_cmp(const void *a, const void *b) {
  const int32_t *x = a, *y = b;
  for (int i = 0; i < 4; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/* The split is a valid cover of s: every tile's KV blocks exactly once (a
 * whole tile: part -1, 0 .. cost; pieces: consecutive ranges with the slots
 * of one combine entry, in KV order), every slot used once, and the reported
 * makespan is the largest per-CTA sum (pieces with their overhead). */
static void check_split(const tile_jagged_schedule *s, const tile_jagged_split *x, const tile_jagged_split_params *sp) {
  assert_int_equal(x->num_ctas, s->num_ctas);
  assert_int_equal(x->cta_start[0], 0);
  assert_int_equal(x->cta_start[x->num_ctas], x->nitems);
  int64_t mk = 0;
  for (int c = 0; c < x->num_ctas; c++) {
    assert_true(x->cta_start[c + 1] >= x->cta_start[c]);
    int64_t load = 0;
    for (int32_t i = x->cta_start[c]; i < x->cta_start[c + 1]; i++) {
      const int32_t *w = x->work + 8 * i;
      load += w[4] - w[3] + (w[5] >= 0 ? sp->piece_overhead : 0);
    }
    if (load > mk) mk = load;
  }
  assert_int_equal(mk, x->max_cta_cost);
  /* sorted by (b, h, m, kv_begin): each tile's items tile its range */
  int32_t *it = malloc((size_t)(x->nitems ? x->nitems : 1) * 8 * sizeof *it);
  memcpy(it, x->work, (size_t)x->nitems * 8 * sizeof *it);
  qsort(it, (size_t)x->nitems, 8 * sizeof *it, item_cmp);
  int32_t *tl = malloc((size_t)(s->ntiles ? s->ntiles : 1) * 4 * sizeof *tl);
  memcpy(tl, s->work, (size_t)s->ntiles * 4 * sizeof *tl);
  qsort(tl, (size_t)s->ntiles, 4 * sizeof *tl, item_cmp); /* (b, h, m, cost): unique (b, h, m) */
  char *used = calloc((size_t)(x->nparts ? x->nparts : 1), 1);
  int64_t j = 0, pieces = 0;
  for (int64_t t = 0; t < s->ntiles; t++) {
    const int32_t *tile = tl + 4 * t;
    int32_t next = 0, part0 = -2;
    int64_t k = 0;
    for (; j < x->nitems && !memcmp(it + 8 * j, tile, 3 * sizeof *tile); j++, k++) {
      const int32_t *w = it + 8 * j;
      assert_int_equal(w[3], next); /* no gap, no overlap */
      assert_true(w[4] > w[3] || (w[4] == 0 && tile[3] == 0));
      next = w[4];
      if (k == 0) part0 = w[5];
      if (w[5] >= 0) {
        assert_true(w[5] < x->nparts);
        assert_int_equal(w[5], part0 + k); /* slots in KV order */
        assert_false(used[w[5]]);
        used[w[5]] = 1;
        pieces++;
      } else {
        assert_int_equal(w[3], 0); /* whole */
      }
    }
    assert_int_equal(next, tile[3]);
    if (k > 1) { /* split: its combine entry */
      int found = 0;
      for (int64_t e = 0; e < x->ncombine; e++) {
        const int32_t *ce = x->combine + 8 * e;
        if (!memcmp(ce, tile, 3 * sizeof *tile)) {
          found++;
          assert_int_equal(ce[3], part0);
          assert_int_equal(ce[4], k);
        }
      }
      assert_int_equal(found, 1);
    } else {
      assert_int_equal(k, 1);
      assert_int_equal(part0, -1);
    }
  }
  assert_int_equal(j, x->nitems);
  assert_int_equal(pieces, x->nparts);
  int64_t sum = 0;
  for (int64_t e = 0; e < x->ncombine; e++) sum += x->combine[8 * e + 4];
  assert_int_equal(sum, x->nparts);
  free(it), free(tl), free(used);
}

static tile_jagged_split split_ok(const tile_jagged_params *p, const tile_jagged_schedule *s,
                                  const tile_jagged_split_params *sp) {
  tile_jagged_split x;
  tile_status st = tile_jagged_split_tail(p, s, sp, &x);
  if (st != TILE_OK) fprintf(stderr, "split failed: %s\n", tile_last_error());
  assert_int_equal(st, TILE_OK);
  static const tile_jagged_split_params none = {1, 0, 0};
  check_split(s, &x, sp ? sp : &none);
  return x;
}

/* Dense batches: the last partial pass is cut into pieces over all CTAs. */
static void test_split_dense(void **state) {
  (void)state;
  tile_jagged_split_params sp = {2, 1, 4 * 132};
  /* D8k: 4 x 8192 rows, 16 heads: 4096 tiles of 64 blocks, 31 passes + 4 */
  int64_t len[4] = {8192, 8192, 8192, 8192};
  int64_t *o = offsets_of(len, 4);
  tile_jagged_params p = params(4, o, 1, 16, 128, 128, 0, 0, 132, 1);
  tile_jagged_schedule s = build_ok(&p);
  assert_int_equal(s.max_cta_cost, 32 * 64);
  tile_jagged_split x = split_ok(&p, &s, &sp);
  assert_int_equal(x.ncombine, 4);
  assert_int_equal(x.nparts, 4 * 32);            /* 64 / min_piece 2 pieces each (n / 4 = 33 would be more) */
  assert_int_equal(x.max_cta_cost, 31 * 64 + 3); /* one piece of 2 blocks + its overhead */
  tile_jagged_split_free(&x);
  /* the slot budget: at most 8 partial slots */
  tile_jagged_split_params few = {2, 1, 8};
  x = split_ok(&p, &s, &few);
  assert_true(x.nparts <= 8 && x.nparts > 0);
  tile_jagged_split_free(&x);
  tile_jagged_schedule_free(&s);
  /* fewer tiles than CTAs: 32 tiles of 32 blocks on 132 CTAs, 4 pieces each */
  int64_t one[1] = {4096};
  int64_t *o1 = offsets_of(one, 1);
  p = params(1, o1, 1, 1, 128, 128, 0, 0, 132, 1);
  s = build_ok(&p);
  x = split_ok(&p, &s, &sp);
  assert_int_equal(x.ncombine, 32);
  assert_int_equal(x.nparts, 128);
  assert_int_equal(x.max_cta_cost, 8 + 1);
  tile_jagged_split_free(&x);
  tile_jagged_schedule_free(&s);
  /* broadcast-Q of one long KV sequence */
  p = params(1, o1, 1, 2, 128, 128, 0, 200, 132, 1);
  s = build_ok(&p);
  x = split_ok(&p, &s, &sp);
  assert_true(x.ncombine == 4 && x.max_cta_cost < s.max_cta_cost);
  tile_jagged_split_free(&x);
  tile_jagged_schedule_free(&s);
  free(o), free(o1);
}

/* No split where it cannot help or does not apply: the lists unchanged. */
static void test_split_none(void **state) {
  (void)state;
  tile_jagged_split_params sp = {2, 1, 1000};
  int64_t len[4] = {8192, 8192, 8192, 8192};
  int64_t *o = offsets_of(len, 4);
  tile_jagged_params cases[5];
  cases[0] = params(4, o, 1, 16, 128, 128, 1, 0, 132, 1); /* causal */
  cases[1] = params(4, o, 1, 16, 128, 128, 0, 0, 132, 0); /* round robin */
  cases[2] = params(4, o, 1, 33, 128, 128, 0, 0, 132, 1); /* 64 x 33 tiles: whole passes */
  cases[3] = params(4, o, 1, 16, 128, 128, 0, 0, 132, 1); /* sp NULL */
  int64_t tiny[300];
  for (int i = 0; i < 300; i++) tiny[i] = i < 200 ? 1000 : 100; /* the tail: 1-block tiles */
  int64_t *ot = offsets_of(tiny, 300);
  cases[4] = params(300, ot, 1, 1, 128, 128, 0, 0, 132, 1);
  for (int i = 0; i < 5; i++) {
    tile_jagged_schedule s = build_ok(&cases[i]);
    tile_jagged_split x = split_ok(&cases[i], &s, i == 3 ? NULL : &sp);
    assert_int_equal(x.nparts, 0);
    assert_int_equal(x.ncombine, 0);
    assert_int_equal(x.nitems, s.ntiles);
    assert_memory_equal(x.cta_start, s.cta_start, ((size_t)s.num_ctas + 1) * sizeof(int32_t));
    for (int64_t t = 0; t < s.ntiles; t++) {
      int32_t want[8] = {s.work[4 * t], s.work[4 * t + 1], s.work[4 * t + 2], 0, s.work[4 * t + 3], -1, 0, 0};
      assert_memory_equal(x.work + 8 * t, want, sizeof want);
    }
    assert_int_equal(x.max_cta_cost, s.max_cta_cost);
    tile_jagged_split_free(&x);
    tile_jagged_schedule_free(&s);
  }
  free(o), free(ot);
}

/* Random batches: whatever is decided, the split is a valid cover and never
 * worse than the schedule. */
static void test_split_random(void **state) {
  (void)state;
  int split = 0, whole = 0;
  for (int iter = 0; iter < 300; iter++) {
    int64_t B = 1 + (int64_t)(rng() % 40);
    int64_t *len = malloc((size_t)B * sizeof *len);
    int64_t maxl = iter % 3 == 0 ? 300 : 5000;
    for (int64_t b = 0; b < B; b++) len[b] = (int64_t)(rng() % (uint64_t)maxl);
    int64_t *o = offsets_of(len, B);
    int bcast = iter % 5 == 0;
    tile_jagged_params p = params(B, o, 1, 1 + (int)(rng() % 8), 128, iter % 2 ? 64 : 128, 0,
                                  bcast ? 1 + (int64_t)(rng() % 700) : 0, 1 + (int)(rng() % 200), 1);
    tile_jagged_split_params sp = {1 + (int)(rng() % 4), (int)(rng() % 3), (int)(rng() % 300)};
    tile_jagged_schedule s;
    if (tile_jagged_schedule_build(&p, &s) == TILE_OK) {
      tile_jagged_split x = split_ok(&p, &s, &sp);
      assert_true(x.nparts <= sp.max_parts);
      assert_true(x.max_cta_cost <= s.max_cta_cost);
      if (x.nparts) split++;
      else whole++;
      tile_jagged_split_free(&x);
      tile_jagged_schedule_free(&s);
    }
    free(len), free(o);
  }
  print_message("[  INFO    ] random splits: %d split, %d left whole\n", split, whole);
  assert_true(split >= 10 && whole >= 10); /* both outcomes exercised */
}

static void test_split_bad(void **state) {
  (void)state;
  int64_t len[1] = {4096};
  int64_t *o = offsets_of(len, 1);
  tile_jagged_params p = params(1, o, 1, 1, 128, 128, 0, 0, 132, 1);
  tile_jagged_schedule s = build_ok(&p);
  tile_jagged_split x;
  tile_jagged_split_params bad = {0, 1, 10};
  assert_int_equal(tile_jagged_split_tail(&p, &s, &bad, &x), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "min_piece"));
  assert_null(x.work);
  tile_jagged_split_params sp = {2, 1, 10};
  p.num_ctas = 64; /* not the schedule's */
  assert_int_equal(tile_jagged_split_tail(&p, &s, &sp, &x), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "not built with these parameters"));
  assert_int_equal(tile_jagged_split_tail(NULL, &s, &sp, &x), TILE_ERR_INVALID);
  assert_int_equal(tile_jagged_split_tail(&p, &s, &sp, NULL), TILE_ERR_INVALID);
  tile_jagged_split_free(&x); /* zeroed: a no-op */
  tile_jagged_split_free(NULL);
  tile_jagged_schedule_free(&s);
  free(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_causal_costs),     cmocka_unit_test(test_zigzag_exact),
      cmocka_unit_test(test_random_vs_reference), cmocka_unit_test(test_empty_sequences),
      cmocka_unit_test(test_broadcast_q),      cmocka_unit_test(test_huge_costs),
      cmocka_unit_test(test_bad_params),       cmocka_unit_test(test_bad_offsets),
      cmocka_unit_test(test_rebuild),          cmocka_unit_test(test_huge_batch),       cmocka_unit_test(test_makespan_skewed),
      cmocka_unit_test(test_split_dense),      cmocka_unit_test(test_split_none),
      cmocka_unit_test(test_split_random),     cmocka_unit_test(test_split_bad),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_jagged_mask.c - the tile scheduler (include/tile/jagged.h) on
 * block-sparse attention (tile_jagged_params.block_mask; issue 7):
 *
 *   - every tile's cost against a brute-force count of the blocks it
 *     visits (forward: the KV blocks with a mask bit that hold a key some
 *     row of the tile may see; backward: the 64-row query blocks whose mask
 *     block visits the KV block and hold a row at or after its first key),
 *     per batch and per sequence, causal or not, over random lengths and
 *     masks; every tile in exactly one list, the totals, the makespan and
 *     Graham's bound (sequence-major, least-loaded CTA);
 *   - an all-ones mask costs what no mask costs, tile by tile; an all-zero
 *     mask deals every tile at one block's cost (its Q or K/V load and its
 *     output), spread over the CTAs as evenly as one-block tiles go;
 *   - the split's work items: a whole tile's KV range is its range without
 *     the mask; a split tile's pieces cover its visited blocks, each once;
 *   - hostile values: a bad mode, sizes that do not match the batch, a
 *     per-batch row shorter than a sequence, with num_q or a window, mask
 *     blocks that are not the kernel's;
 *   - rebuild never reuses a masked schedule (the mask is not compared).
 */
#include "testutil.h"
#include "tile/jagged.h"
#include "tile/runtime.h"

static uint64_t rng_state = 0x7a3c5e1f2b4d6089ull;
static uint64_t rng(void) { return tu_xorshift(&rng_state); }

enum { BLK = 128 };

typedef struct mcase {
  int64_t B, *len, *off;
  uint8_t *mask;
  int64_t bytes, row, *mofs; /* mofs: sequence b's first byte (per sequence) */
  int mode;
} mcase;

static int64_t cdiv64(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* random lengths (some empty, some under a block) and a random mask of
 * density pct % */
static mcase make_case(int64_t B, int64_t maxlen, int mode, int pct) {
  mcase c = {B, malloc((size_t)B * 8), malloc((size_t)(B + 1) * 8), NULL, 0, 0, malloc((size_t)(B + 1) * 8), mode};
  c.off[0] = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t r = (int64_t)(rng() % 8);
    c.len[b] = r == 0 ? 0 : r == 1 ? (int64_t)(rng() % BLK) + 1 : (int64_t)(rng() % (uint64_t)maxlen);
    c.off[b + 1] = c.off[b] + c.len[b];
    int64_t nk = cdiv64(c.len[b], BLK);
    c.row = nk > c.row ? nk : c.row;
  }
  if (mode == TILE_JAGGED_MASK_PER_BATCH) {
    c.row += (int64_t)(rng() % 3); /* a mask wider than the batch needs is fine */
    c.bytes = c.row * c.row;
  } else {
    for (int64_t b = 0; b < B; b++) c.mofs[b] = c.bytes, c.bytes += cdiv64(c.len[b], BLK) * cdiv64(c.len[b], BLK);
  }
  c.mask = malloc((size_t)(c.bytes ? c.bytes : 1));
  for (int64_t i = 0; i < c.bytes; i++) c.mask[i] = (int)(rng() % 100) < pct ? (uint8_t)(1 + rng() % 3) : 0;
  return c;
}

static void free_case(mcase *c) { free(c->len), free(c->off), free(c->mask), free(c->mofs); }

static int bit(const mcase *c, int64_t b, int64_t qm, int64_t kn) {
  if (c->mode == TILE_JAGGED_MASK_PER_BATCH) return c->mask[qm * c->row + kn] != 0;
  return c->mask[c->mofs[b] + qm * cdiv64(c->len[b], BLK) + kn] != 0;
}

static tile_jagged_params mparams(const mcase *c, int heads, int bwd, int causal, int ctas) {
  tile_jagged_params p = {0};
  p.batch = c->B, p.offsets = c->off, p.offsets_are_64bit = 1, p.heads = heads;
  p.block_m = bwd ? 64 : BLK, p.block_n = BLK, p.num_ctas = ctas, p.zigzag = 1;
  p.causal = causal, p.backward = bwd;
  p.block_mask = c->mask, p.block_mask_mode = c->mode, p.block_mask_bytes = c->bytes;
  p.block_mask_row = c->mode == TILE_JAGGED_MASK_PER_BATCH ? c->row : 0;
  p.mask_block = BLK;
  return p;
}

/* Brute force, key by key: forward tile (b, m) visits KV block j when the
 * mask says so and some key of it is seen by some row of the tile; backward
 * tile (b, n): the 64-row query blocks i of the mask's row that hold a row
 * seeing some key of block n. */
static int64_t ref_cost(const mcase *c, int64_t b, int64_t m, int bwd, int causal) {
  int64_t L = c->len[b], n = 0;
  if (!bwd) {
    for (int64_t j = 0; j * BLK < L; j++) {
      int64_t last_row = ((m + 1) * BLK < L ? (m + 1) * BLK : L) - 1;
      n += bit(c, b, m, j) && (!causal || j * BLK <= last_row);
    }
  } else {
    for (int64_t i = 0; i * 64 < L; i++) {
      int64_t last_row = ((i + 1) * 64 < L ? (i + 1) * 64 : L) - 1;
      n += bit(c, b, i / 2, m) && (!causal || last_row >= m * BLK);
    }
  }
  return n ? n : 1; /* a tile the mask empties costs one block (its loads and its output) */
}

/* every tile once, its cost the brute force's; totals and makespan */
static void check_schedule(const mcase *c, const tile_jagged_params *p, const tile_jagged_schedule *s) {
  int bwd = p->backward;
  int64_t ntiles = 0, total = 0, mx = 0, maxtile = 0;
  for (int64_t b = 0; b < c->B; b++) ntiles += (bwd ? cdiv64(c->len[b], BLK) : cdiv64(c->len[b], BLK)) * p->heads;
  assert_int_equal(s->ntiles, ntiles);
  assert_int_equal(s->cta_start[0], 0);
  assert_int_equal(s->cta_start[p->num_ctas], ntiles);
  /* seen[(tile index of (b, m)) * heads + h] */
  int64_t *first = malloc((size_t)(c->B + 1) * 8);
  first[0] = 0;
  for (int64_t b = 0; b < c->B; b++) first[b + 1] = first[b] + cdiv64(c->len[b], BLK);
  char *seen = calloc((size_t)(ntiles ? ntiles : 1), 1);
  for (int k = 0; k < p->num_ctas; k++) {
    int64_t load = 0;
    for (int32_t i = s->cta_start[k]; i < s->cta_start[k + 1]; i++) {
      const int32_t *t = s->work + 4 * (int64_t)i;
      assert_true(t[0] >= 0 && t[0] < c->B && t[1] >= 0 && t[1] < p->heads);
      assert_true(t[2] >= 0 && t[2] < cdiv64(c->len[t[0]], BLK));
      int64_t idx = (first[t[0]] + t[2]) * p->heads + t[1];
      assert_int_equal(seen[idx], 0);
      seen[idx] = 1;
      assert_int_equal(t[3], ref_cost(c, t[0], t[2], bwd, p->causal));
      load += t[3];
      maxtile = t[3] > maxtile ? t[3] : maxtile;
    }
    total += load;
    mx = load > mx ? load : mx;
  }
  assert_int_equal(s->total_cost, total);
  assert_int_equal(s->max_cta_cost, mx);
  /* Graham: each tile went to the least-loaded CTA */
  assert_true(mx <= total / p->num_ctas + maxtile);
  free(first), free(seen);
}

static void test_costs_random(void **state) {
  (void)state;
  for (int trial = 0; trial < 120; trial++) {
    int mode = trial & 1 ? TILE_JAGGED_MASK_PER_SEQUENCE : TILE_JAGGED_MASK_PER_BATCH;
    int bwd = (trial >> 1) & 1, causal = (trial >> 2) & 1;
    mcase c = make_case(1 + (int64_t)(rng() % 40), 1 + (int64_t)(rng() % 3000), mode, (int)(rng() % 101));
    tile_jagged_params p = mparams(&c, 1 + (int)(rng() % 4), bwd, causal, 1 + (int)(rng() % 140));
    tile_jagged_schedule s;
    tile_status st = tile_jagged_schedule_build(&p, &s);
    if (st != TILE_OK) fprintf(stderr, "build: %s\n", tile_last_error());
    assert_int_equal(st, TILE_OK);
    check_schedule(&c, &p, &s);
    /* the baseline (round robin) costs the same tiles alike */
    p.zigzag = 0;
    tile_jagged_schedule s0;
    assert_int_equal(tile_jagged_schedule_build(&p, &s0), TILE_OK);
    assert_int_equal(s0.total_cost, s.total_cost);
    for (int64_t i = 0; i < s0.ntiles; i++)
      assert_int_equal(s0.work[4 * i + 3], ref_cost(&c, s0.work[4 * i], s0.work[4 * i + 2], bwd, causal));
    tile_jagged_schedule_free(&s0);
    tile_jagged_schedule_free(&s);
    free_case(&c);
  }
}

/* all ones: the unmasked costs, tile by tile; all zeros: every tile, cost 1, evenly dealt */
static void test_full_and_empty(void **state) {
  (void)state;
  for (int t = 0; t < 8; t++) {
    int bwd = t & 1, causal = (t >> 1) & 1, mode = t & 4 ? TILE_JAGGED_MASK_PER_SEQUENCE : TILE_JAGGED_MASK_PER_BATCH;
    mcase c = make_case(30, 2500, mode, 100);
    tile_jagged_params p = mparams(&c, 3, bwd, causal, 17), q = p;
    q.block_mask = NULL;
    tile_jagged_schedule s, s0;
    assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
    assert_int_equal(tile_jagged_schedule_build(&q, &s0), TILE_OK);
    assert_int_equal(s.total_cost, s0.total_cost);
    assert_int_equal(s.ntiles, s0.ntiles);
    for (int64_t i = 0; i < s.ntiles; i++) { /* find (b, h, m) in the unmasked lists */
      const int32_t *a = s.work + 4 * i;
      int found = 0;
      for (int64_t j = 0; j < s0.ntiles && !found; j++) {
        const int32_t *x = s0.work + 4 * j;
        if (x[0] == a[0] && x[1] == a[1] && x[2] == a[2]) found = 1, assert_int_equal(x[3], a[3]);
      }
      assert_true(found);
    }
    tile_jagged_schedule_free(&s0);
    tile_jagged_schedule_free(&s);
    memset(c.mask, 0, (size_t)c.bytes);
    assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
    assert_int_equal(s.total_cost, s.ntiles);
    assert_int_equal(s.max_cta_cost, (s.ntiles + p.num_ctas - 1) / p.num_ctas); /* (the empty tiles were all
                                                                                   dealt to one CTA at cost 0) */
    check_schedule(&c, &p, &s);
    tile_jagged_schedule_free(&s);
    free_case(&c);
  }
}

/* the split: a whole tile's item spans its unmasked range; a split tile's
 * pieces cut its visited blocks, each exactly once (the blocks between
 * them are unvisited), in KV order through its partial slots; causal
 * schedules are not split */
static void test_split(void **state) {
  (void)state;
  int nsplit = 0;
  for (int t = 0; t < 24; t++) {
    int causal = t % 4 == 3;
    /* few long sequences: fewer tiles than CTAs, where the split pays */
    mcase c = make_case(1 + t % 3, 6000, t & 1 ? TILE_JAGGED_MASK_PER_SEQUENCE : TILE_JAGGED_MASK_PER_BATCH,
                        30 + 10 * (t % 5));
    tile_jagged_params p = mparams(&c, 1 + t % 2, 0, causal, 132);
    tile_jagged_schedule s;
    assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
    tile_jagged_split_params sp = {4, 1, 132};
    tile_jagged_split o;
    assert_int_equal(tile_jagged_split_tail(&p, &s, &sp, &o), TILE_OK);
    if (causal) assert_int_equal(o.nparts, 0);
    nsplit += o.nparts > 0;
    assert_true(o.max_cta_cost <= s.max_cta_cost);
    /* visited blocks of each tile (b, h, m): covered once */
    int64_t ntile = 0, *first = malloc((size_t)(c.B + 1) * 8);
    for (int64_t b = 0; b < c.B; b++) first[b] = ntile, ntile += cdiv64(c.len[b], BLK) * p.heads;
    int64_t maxnk = 0;
    for (int64_t b = 0; b < c.B; b++) maxnk = cdiv64(c.len[b], BLK) > maxnk ? cdiv64(c.len[b], BLK) : maxnk;
    char *cover = calloc((size_t)(ntile * maxnk + 1), 1);
    int64_t parts_seen = 0;
    for (int64_t i = 0; i < o.nitems; i++) {
      const int32_t *w = o.work + 8 * i;
      int64_t L = c.len[w[0]], end = cdiv64(L, BLK);
      if (causal) {
        int64_t e = (w[2] + 1) * BLK < L ? (w[2] + 1) * BLK : L;
        end = (e - 1) / BLK + 1;
      }
      assert_true(w[3] >= 0 && w[3] <= w[4] && w[4] <= end);
      if (w[5] < 0) assert_true(w[3] == 0 ? w[4] == end : 1);
      else parts_seen++;
      int64_t tix = first[w[0]] + (int64_t)w[1] * cdiv64(L, BLK) + w[2];
      for (int32_t j = w[3]; j < w[4]; j++)
        if (bit(&c, w[0], w[2], j)) {
          assert_int_equal(cover[tix * maxnk + j], 0);
          cover[tix * maxnk + j] = 1;
        }
    }
    assert_int_equal(parts_seen, o.nparts);
    for (int64_t b = 0; b < c.B; b++) /* every visited block of every tile covered */
      for (int h = 0; h < p.heads; h++)
        for (int64_t m = 0; m < cdiv64(c.len[b], BLK); m++) {
          int64_t tix = first[b] + (int64_t)h * cdiv64(c.len[b], BLK) + m;
          int64_t e = cdiv64(c.len[b], BLK);
          if (causal) {
            int64_t q1 = (m + 1) * BLK < c.len[b] ? (m + 1) * BLK : c.len[b];
            e = (q1 - 1) / BLK + 1;
          }
          for (int64_t j = 0; j < e; j++) assert_int_equal(cover[tix * maxnk + j], bit(&c, b, m, j));
        }
    /* combine entries: each split tile's parts, consecutive slots */
    for (int64_t e = 0; e < o.ncombine; e++) {
      const int32_t *ce = o.combine + 8 * e;
      assert_true(ce[4] > 1 && ce[3] >= 0 && ce[3] + ce[4] <= o.nparts);
    }
    free(first), free(cover);
    tile_jagged_split_free(&o);
    tile_jagged_schedule_free(&s);
    free_case(&c);
  }
  assert_true(nsplit > 0); /* some were split */
}

static void expect_bad(const tile_jagged_params *p, const char *want) {
  tile_jagged_schedule s;
  tile_status st = tile_jagged_schedule_build(p, &s);
  if (st != TILE_ERR_INVALID) fprintf(stderr, "built, but want '%s'\n", want);
  assert_int_equal(st, TILE_ERR_INVALID);
  if (!strstr(tile_last_error(), want)) fprintf(stderr, "got '%s', want '%s'\n", tile_last_error(), want);
  assert_non_null(strstr(tile_last_error(), want));
  assert_null(s.work);
}

static void test_bad(void **state) {
  (void)state;
  mcase c = make_case(10, 2000, TILE_JAGGED_MASK_PER_SEQUENCE, 50);
  mcase d = make_case(10, 2000, TILE_JAGGED_MASK_PER_BATCH, 50);
  tile_jagged_params p = mparams(&c, 2, 0, 0, 8), x;
  x = p, x.block_mask_mode = 3;
  expect_bad(&x, "block_mask_mode is 3");
  x = p, x.block_mask_bytes = c.bytes + 1;
  expect_bad(&x, "the batch's sequences need");
  x = p, x.block_mask_bytes = c.bytes - 1;
  expect_bad(&x, "the batch's sequences need");
  x = p, x.block_mask_bytes = -1;
  expect_bad(&x, "block_mask_bytes is -1");
  x = p, x.num_q = 64;
  expect_bad(&x, "self-attention");
  x = p, x.window = 1, x.window_left = 5;
  expect_bad(&x, "self-attention without a sliding window");
  x = p, x.block_m = 64;
  expect_bad(&x, "mask_block 128 with block_m 64");
  x = p, x.mask_block = 100;
  expect_bad(&x, "mask_block 100");
  x = p, x.backward = 1, x.block_m = 48;
  expect_bad(&x, "a multiple of its query blocks");
  tile_jagged_params y = mparams(&d, 2, 0, 0, 8);
  x = y, x.block_mask_bytes = d.bytes + 1;
  expect_bad(&x, "per-batch block mask");
  int64_t need = 0;
  for (int64_t b = 0; b < d.B; b++) need = cdiv64(d.len[b], BLK) > need ? cdiv64(d.len[b], BLK) : need;
  x = y, x.block_mask_row = need - 1, x.block_mask_bytes = (need - 1) * (need - 1);
  expect_bad(&x, "more than the per-batch block mask's rows");
  /* the split checks the mask too */
  tile_jagged_schedule s;
  assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
  tile_jagged_split o;
  x = p, x.block_mask_mode = 0;
  assert_int_equal(tile_jagged_split_tail(&x, &s, NULL, &o), TILE_ERR_INVALID);
  tile_jagged_schedule_free(&s);
  free_case(&c), free_case(&d);
}

/* a rebuild with the same lengths but another mask: rebuilt */
static void test_rebuild(void **state) {
  (void)state;
  mcase c = make_case(20, 2000, TILE_JAGGED_MASK_PER_SEQUENCE, 50);
  tile_jagged_params p = mparams(&c, 2, 0, 0, 8);
  tile_jagged_schedule s = {0};
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  int64_t before = s.total_cost;
  for (int64_t i = 0; i < c.bytes; i++) c.mask[i] = 1;
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  assert_true(s.total_cost >= before);
  check_schedule(&c, &p, &s);
  /* and a maskless build after a masked one is not taken for it */
  tile_jagged_params q = p;
  q.block_mask = NULL;
  assert_int_equal(tile_jagged_schedule_rebuild(&q, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  assert_int_equal(tile_jagged_schedule_rebuild(&q, &s), TILE_OK);
  assert_int_equal(s.reused, 1);
  assert_int_equal(tile_jagged_schedule_rebuild(&p, &s), TILE_OK);
  assert_int_equal(s.reused, 0);
  tile_jagged_schedule_free(&s);
  free_case(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_costs_random), cmocka_unit_test(test_full_and_empty), cmocka_unit_test(test_split),
      cmocka_unit_test(test_bad),          cmocka_unit_test(test_rebuild),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

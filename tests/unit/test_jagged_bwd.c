/* test_jagged_bwd.c - the scheduler's backward mode (tile_jagged_params.
 * backward, include/tile/jagged.h): the tiles of attention's backward pass
 * are KV blocks, each costing the query blocks it meets.
 *
 *   - hand examples of the cost model: non-causal (every query block of the
 *     sequence), causal (the query blocks at or after the KV block's first
 *     key: cdiv(L, bm) - n*bn/bm), broadcast-Q (cdiv(num_q, bm));
 *   - random batches, each mode, zigzag on and off: every (b, h, n) exactly
 *     once with its cost from the model, the reported total, the makespan
 *     within one tile of the mean (the least-loaded dealing of causal
 *     batches, Graham's bound) or the zigzag's pass structure (costs
 *     non-increasing in dealing order);
 *   - empty sequences have no tiles in any mode (broadcast-Q too: no keys,
 *     nothing to differentiate);
 *   - causal: a sequence's tiles are dealt together, heaviest first.
 */
#include "testutil.h"
#include "tile/jagged.h"
#include "tile/runtime.h"

static uint64_t rng_state = 0x51ed270b27f32a9dull;
static uint64_t rng(void) { return tu_xorshift(&rng_state); }

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The model: query blocks of bm rows met by KV block n (bn keys) of a
 * sequence of L rows. */
static int64_t model_cost(int64_t L, int64_t n, int bm, int bn, int causal, int64_t num_q) {
  if (num_q > 0) return cdiv(num_q, bm);
  return causal ? cdiv(L, bm) - n * bn / bm : cdiv(L, bm);
}

static tile_jagged_params bparams(int64_t B, const int64_t *off, int heads, int causal, int64_t num_q, int ctas,
                                  int zigzag) {
  tile_jagged_params p = {0};
  p.batch = B;
  p.offsets = off;
  p.offsets_are_64bit = 1;
  p.heads = heads;
  p.block_m = 64;
  p.block_n = 128;
  p.causal = causal;
  p.num_q = num_q;
  p.num_ctas = ctas;
  p.zigzag = zigzag;
  p.backward = 1;
  return p;
}

/* every (b, h, n) once, costs from the model, totals and makespan */
static void check_schedule(const tile_jagged_params *p, const tile_jagged_schedule *s) {
  const int64_t *off = p->offsets;
  int64_t B = p->batch, H = p->heads, want = 0, total = 0, maxtile = 0;
  int64_t *first = malloc((size_t)(B + 1) * sizeof *first); /* tile index base of each sequence */
  first[0] = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t L = off[b + 1] - off[b], nb = cdiv(L, p->block_n);
    first[b + 1] = first[b] + nb * H;
    for (int64_t n = 0; n < nb; n++) {
      int64_t c = model_cost(L, n, p->block_m, p->block_n, p->causal, p->num_q);
      total += c * H;
      if (c > maxtile) maxtile = c;
    }
  }
  want = first[B];
  assert_int_equal(s->ntiles, want);
  assert_int_equal(s->total_cost, total);
  char *seen = calloc((size_t)(want ? want : 1), 1);
  int64_t maxcta = 0;
  for (int c = 0; c < s->num_ctas; c++) {
    int64_t load = 0, prev_b = -1, prev_cost = INT64_MAX;
    for (int32_t i = s->cta_start[c]; i < s->cta_start[c + 1]; i++) {
      const int32_t *t = s->work + 4 * (int64_t)i;
      int64_t b = t[0], h = t[1], n = t[2], L = off[b + 1] - off[b];
      assert_true(b >= 0 && b < B && h >= 0 && h < H && n >= 0 && n < cdiv(L, p->block_n));
      assert_int_equal(t[3], model_cost(L, n, p->block_m, p->block_n, p->causal, p->num_q));
      int64_t id = first[b] + h * cdiv(L, p->block_n) + n;
      assert_int_equal(seen[id], 0);
      seen[id] = 1;
      load += t[3];
      /* causal: within one CTA's run of one sequence, heaviest first */
      if (p->causal && p->zigzag && b == prev_b) assert_true(t[3] <= prev_cost);
      prev_b = b, prev_cost = t[3];
    }
    if (load > maxcta) maxcta = load;
  }
  assert_int_equal(s->max_cta_cost, maxcta);
  assert_int_equal(s->max_tile_cost, maxtile);
  /* balance: the least-loaded dealing (causal) and the zigzag passes stay
   * within one tile of the mean */
  if (p->zigzag) assert_true(maxcta <= cdiv(total, s->num_ctas) + maxtile);
  free(seen);
  free(first);
}

static void test_bwd_costs(void **state) {
  (void)state;
  /* L = 300: KV blocks 0..2 (128 keys), query blocks 0..4 (64 rows) */
  int64_t off[2] = {0, 300};
  tile_jagged_params p = bparams(1, off, 1, 0, 0, 4, 1);
  tile_jagged_schedule s;
  assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
  assert_int_equal(s.ntiles, 3);
  for (int64_t i = 0; i < 3; i++) assert_int_equal(s.work[4 * i + 3], 5); /* every query block */
  tile_jagged_schedule_free(&s);
  p.causal = 1; /* block n sees query blocks 2n .. 4: 5, 3, 1 */
  assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
  int32_t cost[3] = {0};
  for (int64_t i = 0; i < 3; i++) cost[s.work[4 * i + 2]] = s.work[4 * i + 3];
  assert_int_equal(cost[0], 5);
  assert_int_equal(cost[1], 3);
  assert_int_equal(cost[2], 1);
  assert_int_equal(s.total_cost, 9);
  tile_jagged_schedule_free(&s);
  /* broadcast-Q: 200 queries = 4 blocks, for every KV block; empty sequences none */
  int64_t off2[4] = {0, 0, 300, 301};
  p = bparams(3, off2, 2, 0, 200, 4, 1);
  assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
  assert_int_equal(s.ntiles, 2 * (3 + 1));
  for (int64_t i = 0; i < s.ntiles; i++) {
    assert_int_equal(s.work[4 * i + 3], 4);
    assert_true(s.work[4 * i] != 0);
  }
  tile_jagged_schedule_free(&s);
}

static void test_bwd_random(void **state) {
  (void)state;
  for (int round = 0; round < 60; round++) {
    int64_t B = 1 + (int64_t)(rng() % 200), *off = malloc((size_t)(B + 1) * sizeof *off);
    int mode = round % 3, ctas = 1 + (int)(rng() % 140), heads = 1 + (int)(rng() % 4);
    off[0] = 0;
    for (int64_t b = 0; b < B; b++) off[b + 1] = off[b] + (rng() % 5 == 0 ? 0 : (int64_t)(rng() % 1500));
    if (off[B] == 0) off[B] = 1;
    for (int zig = 0; zig <= 1; zig++) {
      tile_jagged_params p = bparams(B, off, heads, mode == 1, mode == 2 ? 1 + (int64_t)(rng() % 400) : 0, ctas, zig);
      tile_jagged_schedule s;
      assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
      check_schedule(&p, &s);
      tile_jagged_schedule_free(&s);
    }
    free(off);
  }
}

/* causal, zigzag: a sequence's tiles go out together (sequence-major), so
 * the sequences appear in the dealing order one after the other */
static void test_bwd_causal_sequence_major(void **state) {
  (void)state;
  int64_t off[4] = {0, 1000, 1100, 5000};
  tile_jagged_params p = bparams(3, off, 2, 1, 0, 1, 1);
  tile_jagged_schedule s;
  assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
  /* one CTA: its list is the dealing order; the longest sequence first */
  int64_t switches = 0;
  for (int64_t i = 1; i < s.ntiles; i++) switches += s.work[4 * i] != s.work[4 * (i - 1)];
  assert_int_equal(switches, 2);
  assert_int_equal(s.work[0], 2);
  assert_int_equal(s.work[3], cdiv(3900, 64)); /* its KV block 0, every query block */
  tile_jagged_schedule_free(&s);
}

/* tail splitting cuts forward tiles' KV ranges: a backward schedule is refused */
static void test_bwd_no_split(void **state) {
  (void)state;
  int64_t off[2] = {0, 4096};
  tile_jagged_params p = bparams(1, off, 1, 0, 0, 132, 1);
  tile_jagged_schedule s;
  assert_int_equal(tile_jagged_schedule_build(&p, &s), TILE_OK);
  tile_jagged_split_params sp = {4, 1, 132};
  tile_jagged_split x;
  assert_int_equal(tile_jagged_split_tail(&p, &s, &sp, &x), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "backward"));
  tile_jagged_schedule_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bwd_costs),
      cmocka_unit_test(test_bwd_random),
      cmocka_unit_test(test_bwd_causal_sequence_major),
      cmocka_unit_test(test_bwd_no_split),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

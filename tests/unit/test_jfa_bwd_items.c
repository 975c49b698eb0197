/* test_jfa_bwd_items.c - the JFA backward's work items, built on the host
 * (examples/jagged_attention/jfa_bwd.c, jfa_bwd_items_build): deterministic
 * mode's reduction order run to completion (no stall), the CTA pair's
 * items, a sliding window's, the DYN kernel's one list and its order, and
 * the 80-row kernel's. No GPU. */
#include "../../examples/jagged_attention/jfa.c"
#include "../../examples/jagged_attention/jfa_bwd.c"
#include "../../examples/jagged_attention/jfa_check.c"

#include "testutil.h" /* after jfa.h: its JFA helpers */

#define params tu_jfa_params

/* Deterministic mode's protocol on the host: each CTA's reduction warp
 * walks its items' Q blocks in order and may add into a block's dQ only
 * when the block's counter equals the item's rank, then sets it to rank + 1.
 * Run it to completion: it must never stall (every CTA waiting), and every
 * counter must end at its number of contributors. Random batches in every
 * mode, few and many CTAs. */
/* 1 when every CTA got through its list, 0 at a stall (the kernel would hang) */
static int run_det(const jfa_bwd_items *it, int ctas, int64_t H) {
  int64_t ncnt = H * it->nqb;
  int32_t *cnt = calloc((size_t)(ncnt ? ncnt : 1), sizeof *cnt);
  int64_t *want = calloc((size_t)(ncnt ? ncnt : 1), sizeof *want);
  int64_t *item = malloc((size_t)ctas * sizeof *item), *qi = malloc((size_t)ctas * sizeof *qi);
  int64_t *pend = malloc((size_t)ctas * sizeof *pend); /* chain 2: the block whose count this CTA holds, -1 */
  int32_t *pval = malloc((size_t)ctas * sizeof *pval);
  for (int64_t i = 0; i < it->nitems; i++)
    for (int32_t q = it->work[8 * i + 3]; q < it->work[8 * i + 4]; q++) want[it->work[8 * i + 6] + q]++;
  for (int c = 0; c < ctas; c++) {
    item[c] = it->sched.cta_start[c];
    qi[c] = item[c] < it->sched.cta_start[c + 1] ? it->work[8 * item[c] + 3] : 0;
  }
  int done = 1;
  for (int64_t left = it->nitems; left > 0;) {
    int moved = 0;
    for (int c = 0; c < ctas; c++)
      while (item[c] < it->sched.cta_start[c + 1]) {
        const int32_t *w = it->work + 8 * item[c];
        int32_t *k = &cnt[w[6] + qi[c]];
        if (*k != w[5]) break; /* not its turn yet */
        *k = w[5] + 1;
        moved = 1;
        if (++qi[c] == w[4]) {
          left--;
          if (++item[c] < it->sched.cta_start[c + 1]) qi[c] = it->work[8 * item[c] + 3];
        }
      }
    if (!moved) {
      done = 0;
      break;
    }
  }
  for (int64_t i = 0; done && i < ncnt; i++) assert_int_equal(cnt[i], want[i]);
  free(cnt), free(want), free(item), free(qi);
  return done;
}

static void simulate_det(const jfa_params *p, int ctas) {
  jfa_bwd_items it;
  assert_int_equal(jfa_bwd_items_build(p, ctas, 0, 0, &it), TILE_OK);
  assert_true(run_det(&it, ctas, p->heads));
  /* the check can fail: two items of one CTA that meet the same dQ block,
   * swapped out of rank order, stall it */
  for (int c = 0; c < ctas; c++)
    for (int32_t i = it.sched.cta_start[c]; i + 1 < it.sched.cta_start[c + 1]; i++) {
      int32_t *a = it.work + 8 * (int64_t)i, *b = a + 8;
      if (a[6] != b[6] || a[5] == b[5] || a[4] <= b[3] || b[4] <= a[3]) continue;
      int32_t tmp[8];
      memcpy(tmp, a, sizeof tmp), memcpy(a, b, sizeof tmp), memcpy(b, tmp, sizeof tmp);
      assert_false(run_det(&it, ctas, p->heads));
      memcpy(b, a, sizeof tmp), memcpy(a, tmp, sizeof tmp);
      c = ctas;
      break;
    }
  jfa_bwd_items_free(&it);
}

static void test_bwd_det_order(void **state) {
  (void)state;
  uint64_t x = 0x2545f4914f6cdd1dull;
  for (int round = 0; round < 48; round++) {
    int32_t off[65];
    int B = 1 + (int)(tu_xorshift(&x) % 64);
    off[0] = 0;
    for (int b = 0; b < B; b++) {
      tu_xorshift(&x);
      off[b + 1] = off[b] + (x % 7 == 0 ? 0 : (int32_t)(x % 1200));
    }
    jfa_params p = params();
    p.batch = B;
    p.cu_seqlens = off;
    p.heads = 1 + round % 3;
    p.deterministic = 1;
    p.passes = JFA_BWD;
    p.causal = round % 3 == 1;
    p.num_q = round % 3 == 2 ? 1 + (int64_t)(x % 300) : 0;
    p.no_zigzag = round % 5 == 0;
    simulate_det(&p, 1 + round % 7 * 20);
  }
}

/* The CTA pair's backward items (jfa_bwd_items_build with pair = 1;
 * jfa_bwd_sm100_pair.tile): a work list per pair of CTAs; an item per
 * (sequence, head, block of 256 keys) with its query blocks of 128 rows
 * (causal: from the item's diagonal, 2 kb); the workspace row and the dQ
 * counters still in rows of 64. Then deterministic mode's protocol as the
 * pair's kernel runs it: CTA r of a pair adds query block 2 i + r of 64 rows
 * (none past the sequence's queries) when its counter is the item's rank.
 * Random batches, self, causal and broadcast-Q, few and many pairs. */
static int run_det_pair(const jfa_bwd_items *it, int owners, int64_t H, const jfa_params *p) {
  int64_t ncnt = H * it->nqb;
  int32_t *cnt = calloc((size_t)(ncnt ? ncnt : 1), sizeof *cnt);
  int64_t *want = calloc((size_t)(ncnt ? ncnt : 1), sizeof *want);
  int64_t *pos = calloc((size_t)owners * 2, sizeof *pos); /* each CTA's place: item * 4096 + step */
  for (int64_t i = 0; i < it->nitems; i++) {
    const int32_t *w = it->work + 8 * i;
    int64_t qlen = p->num_q > 0 ? p->num_q : jfa_offset_at(p, w[0] + 1) - jfa_offset_at(p, w[0]);
    for (int32_t q = w[3]; q < w[4]; q++)
      for (int r = 0; r < 2; r++)
        if (64 * (2 * q + r) < qlen) want[w[6] + 2 * q + r]++;
  }
  for (int c = 0; c < owners; c++) pos[2 * c] = pos[2 * c + 1] = (int64_t)it->sched.cta_start[c] * 4096;
  int done = 1;
  for (;;) {
    int moved = 0, left = 0;
    for (int x = 0; x < 2 * owners; x++) {
      int c = x / 2, r = x % 2;
      for (;;) {
        int64_t item = pos[x] / 4096, step = pos[x] % 4096;
        if (item >= it->sched.cta_start[c + 1]) break;
        const int32_t *w = it->work + 8 * item;
        int32_t q = w[3] + (int32_t)step;
        if (q >= w[4]) { pos[x] = (item + 1) * 4096; moved = 1; continue; }
        int64_t qlen = p->num_q > 0 ? p->num_q : jfa_offset_at(p, w[0] + 1) - jfa_offset_at(p, w[0]);
        int32_t g = 2 * q + r;
        if (64 * (int64_t)g < qlen) {
          int32_t *k = &cnt[w[6] + g];
          if (*k != w[5]) { left = 1; break; } /* not its turn yet */
          *k = w[5] + 1;
        }
        pos[x]++, moved = 1;
      }
    }
    if (!left) break;
    if (!moved) { done = 0; break; }
  }
  for (int64_t i = 0; done && i < ncnt; i++) assert_int_equal(cnt[i], want[i]);
  free(cnt), free(want), free(pos);
  return done;
}

static void test_bwd_pair_items(void **state) {
  (void)state;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < 36; round++) {
    int32_t off[41];
    int B = 1 + (int)(tu_xorshift(&x) % 40);
    off[0] = 0;
    for (int b = 0; b < B; b++) {
      tu_xorshift(&x);
      off[b + 1] = off[b] + (x % 5 == 0 ? 0 : (int32_t)(x % 1500));
    }
    jfa_params p = params();
    p.batch = B;
    p.cu_seqlens = off;
    p.heads = 1 + round % 3;
    p.passes = JFA_BWD;
    p.deterministic = round % 2;
    p.causal = round % 3 == 1;
    p.num_q = round % 3 == 2 ? 1 + (int64_t)(x % 400) : 0;
    int ctas = 2 + 2 * (round % 9) + (round % 4 == 3); /* an odd count: its last CTA idles */
    jfa_bwd_items it;
    assert_int_equal(jfa_bwd_items_build(&p, ctas, 1, 0, &it), TILE_OK);
    int owners = ctas / 2;
    assert_int_equal(it.sched.cta_start[owners], it.nitems);
    int64_t H = p.heads, nqb64 = 0, items = 0, qb0 = 0;
    for (int b = 0; b < B; b++) nqb64 += (off[b + 1] - off[b] + 63) / 64;
    if (p.num_q) nqb64 = (p.num_q + 63) / 64;
    assert_int_equal(it.nqb, nqb64);
    for (int b = 0; b < B; b++) items += H * ((off[b + 1] - off[b] + 255) / 256);
    assert_int_equal(it.nitems, items);
    for (int64_t i = 0; i < it.nitems; i++) {
      const int32_t *w = it.work + 8 * i;
      int64_t L = off[w[0] + 1] - off[w[0]], qlen = p.num_q ? p.num_q : L;
      assert_true((int64_t)w[2] * 256 < L);
      assert_int_equal(w[3], p.causal ? 2 * w[2] : 0);
      assert_int_equal(w[4], (qlen + 127) / 128);
      qb0 = 0;
      for (int b = 0; b < w[0]; b++) qb0 += (off[b + 1] - off[b] + 63) / 64;
      assert_int_equal(w[7], p.num_q ? ((int64_t)w[0] * H + w[1]) * nqb64 : w[1] * nqb64 + qb0);
    }
    if (p.deterministic) assert_true(run_det_pair(&it, owners, H, &p));
    jfa_bwd_items_free(&it);
  }
}

/* A sliding window's backward items (jfa_bwd_items_build): the schedule
 * costs each KV block by the query blocks it meets (tile_jagged_params.
 * window), and each item's [i0, i1) is exactly the query blocks holding a
 * row that sees one of its keys (row by row; variants/window.tile's
 * q_blocks gives the same range, so the kernel runs the host's), its
 * length the item's cost (the internal check); every (b, h, n) once. */
static void test_bwd_window_items(void **state) {
  (void)state;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  const int bounds[] = {-1, 0, 1, 20, 63, 64, 100, 128, 256, 1000, 1024, 5000};
  for (int round = 0; round < 60; round++) {
    int32_t off[41];
    int B = 1 + (int)(tu_xorshift(&x) % 40);
    off[0] = 0;
    for (int b = 0; b < B; b++) off[b + 1] = off[b] + (int32_t)(tu_xorshift(&x) % 3000) * (round % 9 != 0);
    jfa_params p = params();
    p.batch = B;
    p.cu_seqlens = off;
    p.heads = 1 + round % 3;
    p.passes = JFA_BWD;
    p.window = 1;
    p.window_left = bounds[tu_xorshift(&x) % 12];
    p.window_right = round % 2 ? 0 : bounds[tu_xorshift(&x) % 12];
    p.no_zigzag = round % 5 == 0;
    assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
    int ctas = 1 + (int)(tu_xorshift(&x) % 140);
    jfa_bwd_items it;
    assert_int_equal(jfa_bwd_items_build(&p, ctas, 0, 0, &it), TILE_OK);
    int64_t kb0[42] = {0};
    for (int b = 0; b < B; b++) kb0[b + 1] = kb0[b] + (off[b + 1] - off[b] + BWD_KB - 1) / BWD_KB;
    assert_int_equal(it.nitems, kb0[B] * p.heads);
    char *seen = calloc((size_t)(it.nitems ? it.nitems : 1), 1);
    int64_t total = 0;
    for (int64_t i = 0; i < it.nitems; i++) {
      const int32_t *w = it.work + 8 * i;
      int64_t L = off[w[0] + 1] - off[w[0]], k0 = (int64_t)w[2] * BWD_KB, k1 = k0 + BWD_KB < L ? k0 + BWD_KB : L;
      int64_t lo = -1, hi = -1;
      for (int64_t q = 0; q < L; q++) { /* rows that see a key of [k0, k1) */
        int64_t a = p.window_left < 0 || q - p.window_left < k0 ? k0 : q - p.window_left;
        int64_t e = p.window_right < 0 || q + p.window_right > k1 - 1 ? k1 - 1 : q + p.window_right;
        if (a <= e) lo = lo < 0 ? q / BWD_QB : lo, hi = q / BWD_QB;
      }
      assert_true(lo >= 0);
      assert_int_equal(w[3], lo);
      assert_int_equal(w[4], hi + 1);
      assert_int_equal(it.sched.work[4 * i + 3], hi + 1 - lo); /* the cost the schedule dealt */
      int64_t k = (kb0[w[0]] * p.heads + (int64_t)w[1] * (kb0[w[0] + 1] - kb0[w[0]]) + w[2]);
      assert_true(k < it.nitems);
      assert_false(seen[k]);
      seen[k] = 1;
      total += hi + 1 - lo;
    }
    assert_int_equal(total, it.sched.total_cost);
    free(seen);
    jfa_bwd_items_free(&it);
  }
}

/* A DYN kernel's list (jfa_bwd_items_build with dyn = 1): the same items as
 * the CTAs' lists, each once, now as one list: each sequence's items
 * together, head by head, KV blocks ascending: first the sequences with an
 * item over 1/16 of a CTA's share of the work, by their heaviest item
 * descending (ties in batch order), then the rest in batch order
 * (no_zigzag: all in batch order); self,
 * causal, windows and broadcast-Q. In deterministic mode dyn changes
 * nothing. */
static void test_bwd_dyn_items(void **state) {
  (void)state;
  uint64_t x = 0x2545f4914f6cdd1dull;
  for (int round = 0; round < 48; round++) {
    int32_t off[41];
    int B = 1 + (int)(tu_xorshift(&x) % 40);
    off[0] = 0;
    for (int b = 0; b < B; b++) off[b + 1] = off[b] + (int32_t)(tu_xorshift(&x) % 2000) * (round % 7 != 0 || b % 2);
    jfa_params p = params();
    p.batch = B;
    p.cu_seqlens = off;
    p.heads = 1 + round % 3;
    p.passes = JFA_BWD;
    p.causal = round % 4 == 1;
    if (round % 4 == 2) p.window = 1, p.window_left = 100 + round * 7, p.window_right = round % 3 ? 0 : 50;
    if (round % 4 == 3) p.num_q = 1 + (int64_t)(tu_xorshift(&x) % 300);
    p.deterministic = round % 8 == 7;
    p.no_zigzag = round % 5 == 4;
    assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
    int ctas = 1 + (int)(tu_xorshift(&x) % 140);
    jfa_bwd_items st, dy;
    assert_int_equal(jfa_bwd_items_build(&p, ctas, 0, 0, &st), TILE_OK);
    assert_int_equal(jfa_bwd_items_build(&p, ctas, 0, 1, &dy), TILE_OK);
    assert_int_equal(dy.nitems, st.nitems);
    assert_int_equal(dy.sched.cta_start[ctas], dy.nitems); /* all a DYN kernel reads of the lists */
    if (p.deterministic) { /* unchanged: the deterministic kernel keeps its lists */
      assert_memory_equal(dy.work, st.work, (size_t)st.nitems * 32);
      jfa_bwd_items_free(&st), jfa_bwd_items_free(&dy);
      continue;
    }
    /* every static item exactly once, unchanged (found by its (b, h, n)) */
    int64_t kb0[42] = {0};
    for (int b = 0; b < B; b++) kb0[b + 1] = kb0[b] + (off[b + 1] - off[b] + BWD_KB - 1) / BWD_KB;
    int32_t **slot = calloc((size_t)(st.nitems ? st.nitems : 1), sizeof *slot);
    for (int64_t i = 0; i < st.nitems; i++) {
      int32_t *w = st.work + 8 * i;
      slot[kb0[w[0]] * p.heads + (int64_t)w[1] * (kb0[w[0] + 1] - kb0[w[0]]) + w[2]] = w;
    }
    int32_t heaviest[40], order[40], r = 0;
    int64_t total = 0;
    for (int b = 0; b < B; b++) heaviest[b] = -1, order[b] = b;
    for (int64_t i = 0; i < st.nitems && !p.no_zigzag; i++) { /* no_zigzag: b order */
      int32_t *w = st.work + 8 * i;
      if (w[4] - w[3] > heaviest[w[0]]) heaviest[w[0]] = w[4] - w[3];
      total += w[4] - w[3];
    }
    for (int b = 0; b < B; b++) /* light (no item over 1/16 of a CTA's share): b order, after the heavy */
      if (heaviest[b] <= total / (16 * ctas)) heaviest[b] = -1;
    for (int i = 1; i < B; i++) /* heaviest item descending, ties in b order */
      for (int j = i; j > 0 && heaviest[order[j]] > heaviest[order[j - 1]]; j--)
        r = order[j], order[j] = order[j - 1], order[j - 1] = r;
    r = 0;
    for (int64_t i = 0; i < dy.nitems;) {
      int32_t b = dy.work[8 * i], nb = (int32_t)(kb0[b + 1] - kb0[b]);
      /* sequence b's items next, all of them, in (h, n) order */
      while (r < B && kb0[order[r] + 1] == kb0[order[r]]) r++; /* empty sequences have no items */
      assert_int_equal(b, order[r++]);
      for (int32_t h = 0; h < p.heads; h++)
        for (int32_t n = 0; n < nb; n++, i++) {
          const int32_t *w = dy.work + 8 * i, *want = slot[kb0[b] * p.heads + (int64_t)h * nb + n];
          assert_non_null(want);
          assert_memory_equal(w, want, 32);
          slot[kb0[b] * p.heads + (int64_t)h * nb + n] = NULL; /* once */
        }
    }
    free(slot);
    jfa_bwd_items_free(&st), jfa_bwd_items_free(&dy);
  }
}

/* GROUP (jfa_bwd_items.group = G, a DYN kernel's): the DYN list with each
 * head's KV blocks of a sequence of at most G of them merged into its first
 * item (field 5 their count, the query range left to the kernel's variant:
 * [0, INT32_MAX)), every other item as it was with field 5 = 0; the new
 * length last in cta_start; deterministic mode and broadcast-Q ungrouped.
 * Without it (group 0) the list is the DYN one. `ungrouped` counts the
 * items that are not a group. */
static void test_bwd_group_items(void **state) {
  (void)state;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < 40; round++) {
    int32_t off[33];
    int B = 1 + (int)(tu_xorshift(&x) % 32);
    off[0] = 0;
    for (int b = 0; b < B; b++) off[b + 1] = off[b] + (int32_t)(tu_xorshift(&x) % (round % 3 ? 700 : 3000));
    jfa_params p = params();
    p.batch = B;
    p.cu_seqlens = off;
    p.heads = 1 + round % 3;
    p.passes = JFA_BWD;
    p.causal = round % 4 == 1;
    if (round % 4 == 2) p.window = 1, p.window_left = 200, p.window_right = 0;
    if (round % 10 == 9) p.num_q = 100, p.causal = 0, p.window = 0;
    p.deterministic = round % 10 == 7;
    assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
    int G = 1 + round % 4, ctas = 1 + (int)(tu_xorshift(&x) % 140);
    jfa_bwd_items dy = {0}, gr = {0};
    assert_int_equal(jfa_bwd_items_rebuild(&p, ctas, 0, 1, &dy), TILE_OK);
    gr.group = G;
    assert_int_equal(jfa_bwd_items_rebuild(&p, ctas, 0, 1, &gr), TILE_OK);
    assert_int_equal(dy.ungrouped, dy.nitems); /* group 0: no item is a group */
    if (p.deterministic || p.num_q) { /* not grouped */
      assert_int_equal(gr.ungrouped, gr.nitems);
      assert_int_equal(gr.nitems, dy.nitems);
      assert_null(gr.cta_start);
      assert_memory_equal(gr.work, dy.work, (size_t)dy.nitems * 32);
      jfa_bwd_items_free(&dy), jfa_bwd_items_free(&gr);
      continue;
    }
    assert_non_null(gr.cta_start);
    assert_int_equal(gr.cta_start[ctas], gr.nitems);
    int64_t i = 0, j = 0, ungrouped = 0;
    for (; i < dy.nitems; j++) {
      assert_true(j < gr.nitems);
      const int32_t *w = dy.work + 8 * i, *g = gr.work + 8 * j;
      int64_t nkv = (off[w[0] + 1] - off[w[0]] + BWD_KB - 1) / BWD_KB;
      assert_int_equal(g[0], w[0]), assert_int_equal(g[1], w[1]), assert_int_equal(g[2], w[2]);
      assert_int_equal(g[6], w[6]), assert_int_equal(g[7], w[7]);
      if (nkv <= G) { /* the head's nkv items, KV blocks 0.. in order, as one */
        assert_int_equal(w[2], 0);
        assert_int_equal(g[5], nkv);
        assert_int_equal(g[3], 0), assert_int_equal(g[4], INT32_MAX);
        for (int64_t k = 1; k < nkv; k++) {
          const int32_t *y = dy.work + 8 * (i + k);
          assert_int_equal(y[0], w[0]), assert_int_equal(y[1], w[1]), assert_int_equal(y[2], k);
        }
        i += nkv;
      } else {
        assert_int_equal(g[5], 0);
        assert_memory_equal(g, w, 5 * sizeof *w);
        ungrouped++;
        i++;
      }
    }
    assert_int_equal(j, gr.nitems);
    assert_int_equal(gr.ungrouped, ungrouped); /* 0: jfa_bwd_post has nothing to do with FP (jfa_bwd.c) */
    jfa_bwd_items_free(&dy), jfa_bwd_items_free(&gr);
  }
}

/* OWN's protocol on the host (jfa_bwd.tile, dq_owner): CTAs take the DYN
 * list's items in order, each the next one when it is free; an item walks
 * its query blocks in order, and at block i the block's owner -- the
 * largest KV block of its head whose item meets i -- raises the block's
 * flag, while any other item may pass only once the flag is up; chain
 * (FIN): each passes only once every KV block after it has (its turn,
 * the owner's block minus its own), and moves the count on; chain 2
 * (FIN_LAZY): an item other than the owner moves the count on only as it
 * passes its next block, or at its end (its turn held meanwhile; a final
 * step's wait a step early, FIN_AHEAD, comes before that release in the
 * kernel too, so this covers both). 1 when
 * every item got through, 0 at a stall (the kernel would hang). Items of
 * a GROUP (with it->group, field 5 > 0) write their blocks first
 * themselves: no flags. pct < 100: a block mask (block-sparse) keeps
 * about pct % of the pairs of 128-row query blocks and KV blocks (a hash
 * of sequence, query block and KV block); an item steps only over the
 * query blocks it visits, and a block's owner is the last KV block that
 * visits it. */
static int pair_kept(int32_t b, int32_t q, int32_t kn, int pct) {
  uint64_t h = ((uint64_t)(uint32_t)b * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(uint32_t)(q * 64 / 128) << 20) ^
               (uint64_t)(uint32_t)kn;
  h ^= h >> 29, h *= 0xbf58476d1ce4e5b9ull, h ^= h >> 32;
  return pct >= 100 || (int)(h % 100) < pct;
}
static int run_own(const jfa_bwd_items *it, int ctas, int64_t H, int64_t nqb, int chain, int pct) {
  int64_t nb = H * nqb, n = it->nitems;
  int32_t *owner = malloc((size_t)(nb ? nb : 1) * sizeof *owner);
  int32_t *flag = calloc((size_t)(nb ? nb : 1), sizeof *flag);
  int64_t *item = malloc((size_t)ctas * sizeof *item), *qi = malloc((size_t)ctas * sizeof *qi);
  int64_t *pend = malloc((size_t)ctas * sizeof *pend); /* chain 2: the block whose count this CTA holds, -1 */
  int32_t *pval = malloc((size_t)ctas * sizeof *pval);
  for (int64_t b = 0; b < nb; b++) owner[b] = -1;
  for (int64_t i = 0; i < n; i++) {
    const int32_t *w = it->work + 8 * i;
    if (it->group > 0 && w[5] > 0) continue;
    for (int32_t q = w[3]; q < w[4]; q++)
      if (w[2] > owner[w[7] + q] && pair_kept(w[0], q, w[2], pct)) owner[w[7] + q] = w[2];
  }
  int64_t next = 0, left = n;
  for (int c = 0; c < ctas; c++) item[c] = -1, pend[c] = -1;
  int done = 1;
  while (left > 0) {
    int moved = 0;
    for (int c = 0; c < ctas; c++) {
      if (item[c] < 0) {
        if (next == n) continue;
        item[c] = next++, moved = 1;
        qi[c] = it->group > 0 && it->work[8 * item[c] + 5] > 0 ? INT32_MAX : it->work[8 * item[c] + 3];
      }
      const int32_t *w = it->work + 8 * item[c];
      while (qi[c] < w[4] && !pair_kept(w[0], (int32_t)qi[c], w[2], pct)) qi[c]++, moved = 1; /* skipped */
      if (qi[c] < w[4]) {
        int64_t blk = w[7] + qi[c];
        int32_t turn = chain ? owner[blk] - w[2] : owner[blk] == w[2] ? 0 : 1;
        if (flag[blk] < turn) continue; /* waits for the owner (chain: for its turn) */
        if (pend[c] >= 0 && flag[pend[c]] < pval[c]) flag[pend[c]] = pval[c]; /* chain 2: the held count */
        pend[c] = -1;
        if (chain == 2 && turn > 0) {
          pend[c] = blk, pval[c] = turn + 1;
        } else if (flag[blk] < turn + 1) {
          flag[blk] = turn + 1;
        }
        qi[c]++, moved = 1;
      }
      if (qi[c] >= w[4]) {
        if (pend[c] >= 0 && flag[pend[c]] < pval[c]) flag[pend[c]] = pval[c]; /* the item's end */
        pend[c] = -1;
        item[c] = -1, left--, moved = 1;
      }
    }
    if (!moved) {
      done = 0;
      break;
    }
  }
  free(owner), free(flag), free(item), free(qi), free(pend), free(pval);
  return done;
}

/* OWN (jfa_bwd_items.own, a DYN kernel's): the DYN list with each head's
 * KV blocks last first -- those of a sequence GROUP does not merge -- so
 * that every block's owner is taken before the items that wait for it:
 * the protocol above runs to the end at any CTA count. The check can
 * fail: the same list with the KV blocks first first stalls (causal, a
 * sequence longer than the CTAs can hold). */
static void test_bwd_own_items(void **state) {
  (void)state;
  uint64_t x = 0x853c49e6748fea9bull;
  for (int round = 0; round < 40; round++) {
    int32_t off[33];
    int B = 1 + (int)(tu_xorshift(&x) % 32);
    off[0] = 0;
    for (int b = 0; b < B; b++) off[b + 1] = off[b] + (int32_t)(tu_xorshift(&x) % (round % 3 ? 700 : 5000));
    jfa_params p = params();
    p.batch = B;
    p.cu_seqlens = off;
    p.heads = 1 + round % 3;
    p.passes = JFA_BWD;
    p.causal = round % 4 != 0;
    if (round % 4 == 2) p.causal = 0, p.window = 1, p.window_left = 200 + round, p.window_right = round % 3 ? 0 : 40;
    assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
    int G = round % 5 == 4 ? 4 : 0, ctas = 1 + (int)(tu_xorshift(&x) % (round % 2 ? 8 : 140));
    jfa_bwd_items dy = {0}, ow = {0};
    dy.group = ow.group = G;
    ow.own = 1;
    assert_int_equal(jfa_bwd_items_rebuild(&p, ctas, 0, 1, &dy), TILE_OK);
    assert_int_equal(jfa_bwd_items_rebuild(&p, ctas, 0, 1, &ow), TILE_OK);
    assert_int_equal(ow.nitems, dy.nitems);
    /* the same items; within each (sequence, head) of more than G KV blocks, reversed */
    for (int64_t i = 0; i < dy.nitems;) {
      const int32_t *w = dy.work + 8 * i;
      int64_t nkv = (off[w[0] + 1] - off[w[0]] + BWD_KB - 1) / BWD_KB;
      if (nkv <= G) {
        assert_memory_equal(ow.work + 8 * i, w, 32);
        i++;
        continue;
      }
      for (int64_t k = 0; k < nkv; k++)
        assert_memory_equal(ow.work + 8 * (i + k), dy.work + 8 * (i + nkv - 1 - k), 32);
      i += nkv;
    }
    assert_true(run_own(&ow, ctas, p.heads, ow.nqb, 0, 100));
    assert_true(run_own(&ow, ctas, p.heads, ow.nqb, 1, 100));
    assert_true(run_own(&ow, ctas, p.heads, ow.nqb, 2, 100));
    /* a block mask (GROUP is off with block skips): the owner is the last KV block that visits */
    if (G == 0) assert_true(run_own(&ow, ctas, p.heads, ow.nqb, 0, 10 + 20 * (round % 4)));
    jfa_bwd_items_free(&dy), jfa_bwd_items_free(&ow);
  }
  /* first first: a causal 4096-token sequence on 3 CTAs stalls (its third
   * KV block's item waits for the fourth's, which nobody can take) */
  int32_t off[2] = {0, 4096};
  jfa_params p = params();
  p.batch = 1, p.cu_seqlens = off, p.heads = 1, p.passes = JFA_BWD, p.causal = 1;
  jfa_bwd_items dy = {0}, ow = {0};
  ow.own = 1;
  assert_int_equal(jfa_bwd_items_rebuild(&p, 3, 0, 1, &dy), TILE_OK);
  assert_int_equal(jfa_bwd_items_rebuild(&p, 3, 0, 1, &ow), TILE_OK);
  assert_false(run_own(&dy, 3, 1, dy.nqb, 0, 100));
  assert_true(run_own(&ow, 3, 1, ow.nqb, 0, 100));
  assert_false(run_own(&dy, 3, 1, dy.nqb, 1, 100));
  assert_true(run_own(&ow, 3, 1, ow.nqb, 1, 100));
  assert_false(run_own(&dy, 3, 1, dy.nqb, 2, 100));
  assert_true(run_own(&ow, 3, 1, ow.nqb, 2, 100));
  assert_false(run_own(&dy, 3, 1, dy.nqb, 0, 50)); /* and with half the pairs masked */
  assert_true(run_own(&ow, 3, 1, ow.nqb, 0, 50));
  jfa_bwd_items_free(&dy), jfa_bwd_items_free(&ow);
}

/* The 80-row kernel's items (jfa_bwd_items.qb = 80, jfa_bwd.tile's Q80):
 * the same KV blocks as with 64 rows, each ranging over the 80-row query
 * blocks of its sequence (all of them: no causal mask), the workspace rows
 * and the query blocks' map counted in 80-row blocks. */
static void test_bwd_items80(void **state) {
  (void)state;
  int32_t off[6] = {0, 0, 1, 80, 81, 1081}; /* empty, 1, 79, 1, 1000 rows */
  jfa_params p = params();
  p.batch = 5;
  p.cu_seqlens = off;
  p.heads = 3;
  p.passes = JFA_BWD;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  for (int dyn = 0; dyn < 2; dyn++) {
    jfa_bwd_items a, b = {.qb = 80};
    assert_int_equal(jfa_bwd_items_build(&p, 7, 0, dyn, &a), TILE_OK);
    assert_int_equal(jfa_bwd_items_rebuild(&p, 7, 0, dyn, &b), TILE_OK);
    assert_int_equal(b.nitems, a.nitems);
    int64_t qb0[6] = {0, 0, 1, 2, 3, 3 + 13}, nqb = qb0[5]; /* cdiv(L, 80) a sequence */
    assert_int_equal(b.nqb, nqb);
    assert_int_equal(b.ws_rows, p.heads * nqb);
    for (int64_t g = 0; g < nqb; g++) { /* (sequence, block) of each 80-row block */
      int32_t sb = b.qbmap[2 * g], i = b.qbmap[2 * g + 1];
      assert_true(sb >= 0 && sb < 5 && qb0[sb] + i == g);
    }
    for (int64_t i = 0; i < b.nitems; i++) {
      const int32_t *w = b.work + 8 * i;
      int64_t L = off[w[0] + 1] - off[w[0]];
      assert_true((int64_t)w[2] * BWD_KB < L);
      assert_int_equal(w[3], 0);
      assert_int_equal(w[4], (L + 79) / 80);
      assert_int_equal(w[7], w[1] * nqb + qb0[w[0]]);
    }
    jfa_bwd_items_free(&a), jfa_bwd_items_free(&b);
  }
}

/* The pair kernels' CTAs (jfa_pair_ctas): the plan's, unless the device
 * holds fewer pairs than half of them; an unknown answer (0) leaves them. */
static void test_pair_ctas(void **state) {
  (void)state;
  assert_int_equal(jfa_pair_ctas(132, 66), 132);
  assert_int_equal(jfa_pair_ctas(132, 64), 128);
  assert_int_equal(jfa_pair_ctas(133, 66), 133); /* the odd CTA idles anyway */
  assert_int_equal(jfa_pair_ctas(132, 0), 132);
  assert_int_equal(jfa_pair_ctas(8, 1000), 8);
  assert_int_equal(jfa_pair_ctas(148, 70), 140);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bwd_det_order),
      cmocka_unit_test(test_bwd_pair_items),
      cmocka_unit_test(test_bwd_window_items),
      cmocka_unit_test(test_bwd_dyn_items),
      cmocka_unit_test(test_bwd_items80),
      cmocka_unit_test(test_bwd_group_items),
      cmocka_unit_test(test_bwd_own_items),
      cmocka_unit_test(test_pair_ctas),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

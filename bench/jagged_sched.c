/* jagged_sched.c - what JFA's host-side scheduling (runtime/jagged.c) costs,
 * and how good its schedules are, on the benchmark suites.
 *
 *   make bench-sched                        (builds and runs it; see below)
 *   build/bench/jagged_sched [--suites DIR] [--only J1,J2] [--reps N] [--ctas N]
 *
 * Every suite of DIR/suites.json (default ../shared/bench/suites), plus two
 * batches of short causal sequences (C8k: 8192 sequences of 1..64 tokens,
 * 4 heads; C100k: 100,000 of 1..64, 8 heads), each scheduled as JFA's plans
 * schedule it: the forward (128-row query blocks, 128-key KV blocks,
 * tile_jagged_schedule_rebuild then tile_jagged_split_tail with JFA's split
 * parameters) and the backward (backward = 1, 64-row query blocks, 128-key
 * KV blocks), on --ctas work lists (132: the H200's SMs).  Columns:
 *
 *   tiles     tiles of the pass
 *   new       a new batch every call, as a training loop sees it: the
 *             suite's lengths and the same lengths in reverse order (D8k:
 *             the last sequence one row shorter) alternately, rebuilt into
 *             warm arrays, plus the split (forward); best and median of
 *             --reps calls, in microseconds
 *   ns/tile   best "new" per tile
 *   fresh     tile_jagged_schedule_build into new arrays (+ split), best, us:
 *             what jfa_plan_create pays (page faults included)
 *   same      the same lengths again: the rebuild finds them unchanged and
 *             keeps the schedule (s.reused), best, us
 *   mk/LB     the makespan (the forward's after the split) over the lower
 *             bound max(ceil(total / CTAs), largest tile)
 *   gain      the zigzag gain: round robin's makespan / the scheduler's
 *
 * Then sliding windows (--windows, default 256,1024: query i sees keys
 * i - W .. i, the causal window of docs/perf.md; on the self-attention
 * suites, causal or not), forward and backward, scheduled window-aware
 * (tile_jagged_params.window) and window-blind (costed as unmasked tiles,
 * what JFA did before the scheduler knew windows: the forward until
 * 3da0c96, the backward until the backward learnt them), the forward's
 * both split with JFA's parameters:
 *
 *   new, ns/tile   as above, window-aware
 *   mk/LB     the window-aware makespan (the forward's after the split)
 *             over the lower bound max(ceil(total / CTAs), largest tile),
 *             window costs
 *   blind     the window-blind lists' makespan under the window's costs
 *             (forward: each item's KV range clipped to the window's, a
 *             piece's overhead counted; backward: each KV block's query
 *             blocks, which the kernel clips to the window's) over the same
 *             bound
 *   pieces    partial slots of the window-aware split (0: not split; the
 *             backward is not split)
 *   gain      blind makespan / window-aware makespan
 *
 * Then block-sparse masks (--masks, default 50: the per cent of 128 x 128
 * blocks each sequence keeps, at random, as ../shared/bench/
 * variant_peers.py's FlexAttention peer; --masks none skips them) on the
 * self-attention suites, with their causal flag, forward and backward,
 * scheduled mask-aware (tile_jagged_params.block_mask) and mask-blind
 * (costed as unmasked tiles, split as JFA splits them):
 *
 *   new, ns/tile   a mask-aware build, best of --reps, and per tile
 *   mk/LB     the mask-aware makespan (the forward's after its split)
 *             over max(ceil(total / CTAs), largest tile), mask costs
 *   blind     the mask-blind lists' makespan under the mask's costs (a
 *             piece's overhead counted) over the same bound
 *   gain      blind makespan / mask-aware makespan
 *
 * Timings are wall clock (CLOCK_MONOTONIC) on whatever machine runs it; the
 * kernel times to compare them with are in docs/perf.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tile/jagged.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct bcase {
  char name[32];
  int heads, causal;
  int64_t num_q, B;
  int64_t *len;
} bcase;

static int32_t *offsets_of(const int64_t *len, int64_t B) {
  int32_t *o = malloc((size_t)(B + 1) * sizeof *o);
  o[0] = 0;
  for (int64_t b = 0; b < B; b++) o[b + 1] = o[b] + (int32_t)len[b];
  return o;
}

static void die(const char *what) {
  fprintf(stderr, "jagged_sched: %s failed: %s\n", what, tile_last_error());
  exit(1);
}

/* JFA's forward split parameters (examples/jagged_attention/jfa.c) */
static tile_jagged_split_params split_of(int ctas) {
  tile_jagged_split_params sp = {4, 1, ctas};
  return sp;
}

/* one pass of one case: time it and measure its schedule */
static void run_pass(const bcase *c, int bwd, int reps, int ctas) {
  int64_t *alt = malloc((size_t)c->B * sizeof *alt);
  for (int64_t b = 0; b < c->B; b++) alt[b] = c->len[c->B - 1 - b];
  if (!memcmp(alt, c->len, (size_t)c->B * sizeof *alt)) { /* reversal changes nothing: shorten the last */
    for (int64_t b = c->B - 1; b >= 0; b--)
      if (alt[b] > 0) {
        alt[b]--;
        break;
      }
  }
  int32_t *off[2] = {offsets_of(c->len, c->B), offsets_of(alt, c->B)};
  tile_jagged_params p = {0};
  p.batch = c->B;
  p.offsets = off[0];
  p.heads = c->heads;
  p.block_m = bwd ? 64 : 128;
  p.block_n = 128;
  p.causal = c->causal;
  p.num_q = c->num_q;
  p.num_ctas = ctas;
  p.zigzag = 1;
  p.backward = bwd;
  tile_jagged_split_params sp = split_of(ctas);

  tile_jagged_schedule s;
  memset(&s, 0, sizeof s);
  tile_jagged_split sl;
  double *t = malloc((size_t)reps * sizeof *t), best_fresh = 1e30, best_same = 1e30;
  /* new batches, alternately, into warm arrays (two warm-up calls first) */
  for (int i = -2; i < reps; i++) {
    p.offsets = off[(i + 2) & 1];
    double t0 = now_us();
    if (tile_jagged_schedule_rebuild(&p, &s) != TILE_OK) die("rebuild");
    if (!bwd && tile_jagged_split_tail(&p, &s, &sp, &sl) != TILE_OK) die("split");
    double dt = now_us() - t0;
    if (s.reused) {
      fprintf(stderr, "jagged_sched: %s: a new batch was reused\n", c->name);
      exit(1);
    }
    if (!bwd) tile_jagged_split_free(&sl);
    if (i >= 0) t[i] = dt;
  }
  qsort(t, (size_t)reps, sizeof *t, dcmp);
  double best_new = t[0], med_new = t[reps / 2];
  /* the same batch again */
  p.offsets = off[(reps + 1) & 1];
  for (int i = 0; i < reps; i++) {
    double t0 = now_us();
    if (tile_jagged_schedule_rebuild(&p, &s) != TILE_OK) die("rebuild");
    double dt = now_us() - t0;
    if (!s.reused) {
      fprintf(stderr, "jagged_sched: %s: the same batch was rebuilt\n", c->name);
      exit(1);
    }
    if (dt < best_same) best_same = dt;
  }
  /* fresh arrays, as jfa_plan_create builds */
  p.offsets = off[0];
  tile_jagged_schedule f;
  for (int i = 0; i < (reps < 5 ? reps : 5); i++) {
    double t0 = now_us();
    if (tile_jagged_schedule_build(&p, &f) != TILE_OK) die("build");
    if (!bwd && tile_jagged_split_tail(&p, &f, &sp, &sl) != TILE_OK) die("split");
    double dt = now_us() - t0;
    if (dt < best_fresh) best_fresh = dt;
    if (!bwd) tile_jagged_split_free(&sl);
    if (i + 1 < (reps < 5 ? reps : 5)) tile_jagged_schedule_free(&f);
  }
  /* quality: the suite's own lengths, scheduled, split, and round robin */
  int64_t mk = f.max_cta_cost;
  if (!bwd) {
    if (tile_jagged_split_tail(&p, &f, &sp, &sl) != TILE_OK) die("split");
    mk = sl.max_cta_cost;
    tile_jagged_split_free(&sl);
  }
  int64_t lb = (f.total_cost + ctas - 1) / ctas;
  if (f.max_tile_cost > lb) lb = f.max_tile_cost;
  p.zigzag = 0;
  tile_jagged_schedule rr;
  if (tile_jagged_schedule_build(&p, &rr) != TILE_OK) die("round-robin build");
  printf("%-6s %-3s %9lld %9.1f %9.1f %8.2f %9.1f %9.2f %8.4f %7.3f\n", c->name, bwd ? "bwd" : "fwd",
         (long long)f.ntiles, best_new, med_new, best_new * 1e3 / (double)(f.ntiles ? f.ntiles : 1), best_fresh,
         best_same, lb ? (double)mk / (double)lb : 1.0, mk ? (double)rr.max_cta_cost / (double)mk : 1.0);
  fflush(stdout);
  tile_jagged_schedule_free(&s), tile_jagged_schedule_free(&f), tile_jagged_schedule_free(&rr);
  free(t), free(alt), free(off[0]), free(off[1]);
}

/* The largest per-CTA cost of split lists x under the window (W, 0)'s
 * costs: each item's KV range clipped to the window's blocks, pieces with
 * their overhead. */
static int64_t window_makespan(const tile_jagged_split *x, const int64_t *len, int bm, int bn, int W, int overhead) {
  int64_t mk = 0;
  for (int c = 0; c < x->num_ctas; c++) {
    int64_t load = 0;
    for (int32_t i = x->cta_start[c]; i < x->cta_start[c + 1]; i++) {
      const int32_t *w = x->work + 8 * (int64_t)i;
      int64_t L = len[w[0]], q0 = (int64_t)w[2] * bm, q1 = q0 + bm;
      int64_t f = q0 - W > 0 ? (q0 - W) / bn : 0, last = q1 - 1 < L - 1 ? q1 - 1 : L - 1, e = last / bn + 1;
      int64_t a = w[3] > f ? w[3] : f, b = w[4] < e ? w[4] : e;
      load += (b > a ? b - a : 0) + (w[5] >= 0 ? overhead : 0);
    }
    mk = load > mk ? load : mk;
  }
  return mk;
}

/* The largest per-CTA cost of backward lists s (KV blocks of bn keys) under
 * the window (W, 0)'s costs: the query blocks of bm rows holding a row of
 * n*bn .. n*bn + bn - 1 + W (variants/window.tile's q_blocks). */
static int64_t window_makespan_bwd(const tile_jagged_schedule *s, const int64_t *len, int bm, int bn, int W) {
  int64_t mk = 0;
  for (int c = 0; c < s->num_ctas; c++) {
    int64_t load = 0;
    for (int32_t i = s->cta_start[c]; i < s->cta_start[c + 1]; i++) {
      const int32_t *w = s->work + 4 * (int64_t)i;
      int64_t L = len[w[0]], k0 = (int64_t)w[2] * bn, last = k0 + bn - 1 + W < L - 1 ? k0 + bn - 1 + W : L - 1;
      load += last / bm + 1 - k0 / bm;
    }
    mk = load > mk ? load : mk;
  }
  return mk;
}

/* one window of one case, backward (JFA's blocks: 64 query rows, 128 keys;
 * not split): the window-aware schedule timed and measured, the window-blind
 * one (non-causal backward) measured under the window's costs */
static void run_window_bwd(const bcase *c, int W, int reps, int ctas, const int32_t *const *off) {
  tile_jagged_params p = {0};
  p.batch = c->B;
  p.offsets = off[0];
  p.heads = c->heads;
  p.block_m = 64;
  p.block_n = 128;
  p.num_ctas = ctas;
  p.zigzag = 1;
  p.backward = 1;
  p.window = 1;
  p.window_left = W;
  p.window_right = 0;
  tile_jagged_schedule s;
  memset(&s, 0, sizeof s);
  double *t = malloc((size_t)reps * sizeof *t);
  for (int i = -2; i < reps; i++) {
    p.offsets = off[(i + 2) & 1];
    double t0 = now_us();
    if (tile_jagged_schedule_rebuild(&p, &s) != TILE_OK) die("backward window rebuild");
    double dt = now_us() - t0;
    if (i >= 0) t[i] = dt;
  }
  qsort(t, (size_t)reps, sizeof *t, dcmp);
  p.offsets = off[0];
  if (tile_jagged_schedule_rebuild(&p, &s) != TILE_OK) die("backward window rebuild");
  int64_t lb = (s.total_cost + ctas - 1) / ctas;
  if (s.max_tile_cost > lb) lb = s.max_tile_cost;
  int64_t mk = window_makespan_bwd(&s, c->len, 64, 128, W);
  if (mk != s.max_cta_cost) {
    fprintf(stderr, "jagged_sched: %s backward window %d: makespan %lld, the schedule says %lld\n", c->name, W,
            (long long)mk, (long long)s.max_cta_cost);
    exit(1);
  }
  tile_jagged_params q = p; /* window-blind: costed as unmasked KV blocks */
  q.window = 0;
  tile_jagged_schedule sb;
  if (tile_jagged_schedule_build(&q, &sb) != TILE_OK) die("backward blind build");
  int64_t mkb = window_makespan_bwd(&sb, c->len, 64, 128, W);
  printf("%-6s %6d %9lld %9.1f %8.2f %8.4f %8.4f %7s %7.3f  bwd\n", c->name, W, (long long)s.ntiles, t[0],
         t[0] * 1e3 / (double)(s.ntiles ? s.ntiles : 1), (double)mk / (double)lb, (double)mkb / (double)lb, "-",
         (double)mkb / (double)mk);
  fflush(stdout);
  tile_jagged_schedule_free(&s), tile_jagged_schedule_free(&sb);
  free(t);
}

/* one window of one case: the window-aware schedule timed and measured, the
 * window-blind one measured under the window's costs; then the backward's */
static void run_window(const bcase *c, int W, int reps, int ctas) {
  int64_t *alt = malloc((size_t)c->B * sizeof *alt);
  for (int64_t b = 0; b < c->B; b++) alt[b] = c->len[c->B - 1 - b];
  if (!memcmp(alt, c->len, (size_t)c->B * sizeof *alt))
    for (int64_t b = c->B - 1; b >= 0; b--)
      if (alt[b] > 0) {
        alt[b]--;
        break;
      }
  int32_t *off[2] = {offsets_of(c->len, c->B), offsets_of(alt, c->B)};
  tile_jagged_params p = {0};
  p.batch = c->B;
  p.offsets = off[0];
  p.heads = c->heads;
  p.block_m = 128;
  p.block_n = 128;
  p.num_ctas = ctas;
  p.zigzag = 1;
  p.window = 1;
  p.window_left = W;
  p.window_right = 0;
  tile_jagged_split_params sp = split_of(ctas);
  tile_jagged_schedule s;
  memset(&s, 0, sizeof s);
  tile_jagged_split sl;
  double *t = malloc((size_t)reps * sizeof *t);
  for (int i = -2; i < reps; i++) {
    p.offsets = off[(i + 2) & 1];
    double t0 = now_us();
    if (tile_jagged_schedule_rebuild(&p, &s) != TILE_OK) die("window rebuild");
    if (tile_jagged_split_tail(&p, &s, &sp, &sl) != TILE_OK) die("window split");
    double dt = now_us() - t0;
    tile_jagged_split_free(&sl);
    if (i >= 0) t[i] = dt;
  }
  qsort(t, (size_t)reps, sizeof *t, dcmp);
  /* quality on the suite's own lengths */
  p.offsets = off[0];
  if (tile_jagged_schedule_rebuild(&p, &s) != TILE_OK) die("window rebuild");
  if (tile_jagged_split_tail(&p, &s, &sp, &sl) != TILE_OK) die("window split");
  int64_t lb = (s.total_cost + ctas - 1) / ctas;
  if (s.max_tile_cost > lb) lb = s.max_tile_cost;
  int64_t mk = window_makespan(&sl, c->len, 128, 128, W, sp.piece_overhead);
  if (mk != sl.max_cta_cost) {
    fprintf(stderr, "jagged_sched: %s window %d: makespan %lld, the split says %lld\n", c->name, W, (long long)mk,
            (long long)sl.max_cta_cost);
    exit(1);
  }
  int64_t pieces = sl.nparts;
  tile_jagged_split_free(&sl);
  tile_jagged_params q = p; /* window-blind: costed as unmasked tiles */
  q.window = 0;
  tile_jagged_schedule sb;
  if (tile_jagged_schedule_build(&q, &sb) != TILE_OK) die("blind build");
  if (tile_jagged_split_tail(&q, &sb, &sp, &sl) != TILE_OK) die("blind split");
  int64_t mkb = window_makespan(&sl, c->len, 128, 128, W, sp.piece_overhead);
  tile_jagged_split_free(&sl);
  printf("%-6s %6d %9lld %9.1f %8.2f %8.4f %8.4f %7lld %7.3f  fwd\n", c->name, W, (long long)s.ntiles, t[0],
         t[0] * 1e3 / (double)(s.ntiles ? s.ntiles : 1), (double)mk / (double)lb, (double)mkb / (double)lb,
         (long long)pieces, (double)mkb / (double)mk);
  fflush(stdout);
  tile_jagged_schedule_free(&s), tile_jagged_schedule_free(&sb);
  run_window_bwd(c, W, reps, ctas, (const int32_t *const *)off);
  free(t), free(alt), free(off[0]), free(off[1]);
}

/* A random per-sequence block mask keeping pct % of the blocks (a fixed
 * generator), packed as JFA's JFA_MASK_PER_SEQUENCE; first[b]: sequence b's
 * first byte */
static uint8_t *mask_of(const bcase *c, int pct, int64_t *bytes, int64_t *first) {
  int64_t n = 0;
  for (int64_t b = 0; b < c->B; b++) first[b] = n, n += ((c->len[b] + 127) / 128) * ((c->len[b] + 127) / 128);
  uint8_t *m = malloc((size_t)(n ? n : 1));
  uint64_t x = 0x2545f4914f6cdd1dull;
  for (int64_t i = 0; i < n; i++) x ^= x << 13, x ^= x >> 7, x ^= x << 17, m[i] = (int)(x % 100) < pct;
  *bytes = n;
  return m;
}

/* one mask of one case, forward then backward: the mask-aware schedule
 * timed and measured, the mask-blind one measured under the mask's costs */
static void run_mask(const bcase *c, int pct, int reps, int ctas) {
  int64_t bytes, *first = malloc((size_t)c->B * sizeof *first);
  uint8_t *m = mask_of(c, pct, &bytes, first);
  int32_t *off = offsets_of(c->len, c->B);
  for (int bwd = 0; bwd <= 1; bwd++) {
    tile_jagged_params p = {0};
    p.batch = c->B, p.offsets = off, p.heads = c->heads, p.causal = c->causal;
    p.block_m = bwd ? 64 : 128, p.block_n = 128, p.num_ctas = ctas, p.zigzag = 1, p.backward = bwd;
    tile_jagged_params q = p; /* mask-blind */
    p.block_mask = m, p.block_mask_mode = TILE_JAGGED_MASK_PER_SEQUENCE, p.block_mask_bytes = bytes;
    p.mask_block = 128;
    tile_jagged_schedule s = {0}, sb;
    double best = 1e30;
    for (int i = 0; i < reps; i++) {
      double t0 = now_us();
      if (tile_jagged_schedule_rebuild(&p, &s) != TILE_OK) die("mask build");
      double dt = now_us() - t0;
      if (dt < best) best = dt;
    }
    int64_t lb = (s.total_cost + ctas - 1) / ctas, mk = s.max_cta_cost;
    if (s.max_tile_cost > lb) lb = s.max_tile_cost;
    tile_jagged_split sp = {0};
    tile_jagged_split_params spp = split_of(ctas);
    if (!bwd) { /* the forward's after its split */
      if (tile_jagged_split_tail(&p, &s, &spp, &sp) != TILE_OK) die("mask split");
      mk = sp.max_cta_cost;
      tile_jagged_split_free(&sp);
    }
    if (tile_jagged_schedule_build(&q, &sb) != TILE_OK) die("blind build");
    if (!bwd && tile_jagged_split_tail(&q, &sb, &spp, &sp) != TILE_OK) die("blind split");
    int64_t mkb = 0;
    for (int k = 0; k < ctas; k++) { /* the blind lists under the mask's costs */
      int64_t load = 0;
      int32_t a = bwd ? sb.cta_start[k] : sp.cta_start[k], e = bwd ? sb.cta_start[k + 1] : sp.cta_start[k + 1];
      for (int32_t i = a; i < e; i++) {
        const int32_t *w = bwd ? sb.work + 4 * (int64_t)i : sp.work + 8 * (int64_t)i;
        int64_t L = c->len[w[0]], nb = (L + 127) / 128;
        const uint8_t *ms = m + first[w[0]];
        if (!bwd) {
          for (int32_t j = w[3]; j < w[4]; j++) load += ms[(int64_t)w[2] * nb + j];
          load += w[5] >= 0 ? spp.piece_overhead : 0;
        } else {
          for (int64_t i0 = c->causal ? (int64_t)w[2] * 2 : 0, qi = i0; qi < (L + 63) / 64; qi++)
            load += ms[(qi / 2) * nb + w[2]];
        }
      }
      mkb = load > mkb ? load : mkb;
    }
    printf("%-6s %5d%% %9lld %9.1f %8.2f %8.4f %8.4f %7.3f  %s%s\n", c->name, pct, (long long)s.ntiles, best,
           best * 1e3 / (double)(s.ntiles ? s.ntiles : 1), lb ? (double)mk / (double)lb : 1.0,
           lb ? (double)mkb / (double)lb : 1.0, mk ? (double)mkb / (double)mk : 1.0,
           bwd ? "bwd" : "fwd", c->causal ? " causal" : "");
    fflush(stdout);
    tile_jagged_schedule_free(&s), tile_jagged_schedule_free(&sb), tile_jagged_split_free(&sp);
  }
  free(m), free(first), free(off);
}

/* the suites: a minimal reader of suites.json's flat objects (the same as
 * examples/jagged_attention/jfa_test.h's) */
static int read_suites(const char *dir, bcase *cs, int cap) {
  char path[1024];
  snprintf(path, sizeof path, "%s/suites.json", dir);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "jagged_sched: cannot open %s\n", path);
    return -1;
  }
  static char js[1 << 16];
  size_t n = fread(js, 1, sizeof js - 1, f);
  js[n] = 0;
  fclose(f);
  int nc = 0;
  for (char *o = strchr(js, '{'); o && nc < cap; o = strchr(o + 1, '{')) {
    char *end = strchr(o, '}');
    if (!end) break;
    *end = 0;
    bcase *c = &cs[nc];
    memset(c, 0, sizeof *c);
    char mode[32] = "self", lf[128] = "";
    char *s;
    if ((s = strstr(o, "\"name\""))) sscanf(strchr(s + 6, '"') + 1, "%31[^\"]", c->name);
    if ((s = strstr(o, "\"mode\""))) sscanf(strchr(s + 6, '"') + 1, "%31[^\"]", mode);
    if ((s = strstr(o, "\"lengths_file\""))) sscanf(strchr(s + 14, '"') + 1, "%127[^\"]", lf);
    if ((s = strstr(o, "\"heads\""))) c->heads = (int)strtol(strchr(s, ':') + 1, NULL, 10);
    if ((s = strstr(o, "\"num_q\""))) c->num_q = strtol(strchr(s, ':') + 1, NULL, 10);
    if ((s = strstr(o, "\"causal\""))) c->causal = strstr(s, "true") && strstr(s, "true") < strchr(s, ',');
    if (strcmp(mode, "broadcast_q")) c->num_q = 0;
    o = end;
    snprintf(path, sizeof path, "%s/%s", dir, lf);
    FILE *lfp = fopen(path, "rb");
    if (!lfp) {
      fprintf(stderr, "jagged_sched: cannot open %s\n", path);
      return -1;
    }
    int64_t lcap = 1024;
    c->len = malloc((size_t)lcap * sizeof *c->len);
    long x;
    while (fscanf(lfp, "%ld", &x) == 1) {
      if (c->B == lcap) c->len = realloc(c->len, (size_t)(lcap *= 2) * sizeof *c->len);
      c->len[c->B++] = x;
    }
    fclose(lfp);
    nc++;
  }
  return nc;
}

/* B sequences of 1..maxlen tokens (a fixed generator: the same every run) */
static void short_causal(bcase *c, const char *name, int64_t B, int heads, int64_t maxlen) {
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  c->heads = heads, c->causal = 1, c->B = B;
  c->len = malloc((size_t)B * sizeof *c->len);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int64_t b = 0; b < B; b++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c->len[b] = 1 + (int64_t)(x % (uint64_t)maxlen);
  }
}

int main(int argc, char **argv) {
  const char *dir = "../shared/bench/suites", *only = NULL, *windows = "256,1024", *masks = "50";
  int reps = 20, ctas = 132;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--suites") && i + 1 < argc) dir = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--ctas") && i + 1 < argc) ctas = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--windows") && i + 1 < argc) windows = argv[++i];
    else if (!strcmp(argv[i], "--masks") && i + 1 < argc) masks = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--suites DIR] [--only J1,C8k] [--reps N] [--ctas N] [--windows W,W | none] "
              "[--masks PCT,PCT | none]\n", argv[0]);
      return 2;
    }
  }
  if (reps < 1 || ctas < 1) {
    fprintf(stderr, "jagged_sched: --reps and --ctas must be at least 1\n");
    return 2;
  }
  bcase cs[34];
  int nc = read_suites(dir, cs, 32);
  if (nc < 0) return 1;
  short_causal(&cs[nc++], "C8k", 8192, 4, 64);
  short_causal(&cs[nc++], "C100k", 100000, 8, 64);
  printf("# %d CTAs; times in us: best and median of %d calls (see the header of bench/jagged_sched.c)\n", ctas,
         reps);
  printf("%-6s %-3s %9s %9s %9s %8s %9s %9s %8s %7s\n", "suite", "dir", "tiles", "new", "new-med", "ns/tile",
         "fresh", "same", "mk/LB", "gain");
  for (int i = 0; i < nc; i++)
    if (!only || strstr(only, cs[i].name))
      for (int bwd = 0; bwd <= 1; bwd++) run_pass(&cs[i], bwd, reps, ctas);
  if (strcmp(windows, "none")) {
    printf("# sliding windows (W, 0), forward and backward, window-aware against window-blind (see the header)\n");
    printf("%-6s %6s %9s %9s %8s %8s %8s %7s %7s  %s\n", "suite", "window", "tiles", "new", "ns/tile", "mk/LB",
           "blind", "pieces", "gain", "dir");
    for (int i = 0; i < nc; i++) {
      if ((only && !strstr(only, cs[i].name)) || cs[i].num_q > 0 || !strncmp(cs[i].name, "C", 1)) continue;
      for (const char *w = windows; *w;) {
        int W = atoi(w);
        if (W > 0) run_window(&cs[i], W, reps, ctas);
        w = strchr(w, ',');
        if (!w) break;
        w++;
      }
    }
  }
  if (strcmp(masks, "none")) {
    printf("# block-sparse masks (random 128 x 128 blocks kept), forward and backward, mask-aware against "
           "mask-blind (see the header)\n");
    printf("%-6s %6s %9s %9s %8s %8s %8s %7s  %s\n", "suite", "kept", "tiles", "new", "ns/tile", "mk/LB", "blind",
           "gain", "dir");
    for (int i = 0; i < nc; i++) {
      if ((only && !strstr(only, cs[i].name)) || cs[i].num_q > 0 || !strncmp(cs[i].name, "C", 1)) continue;
      for (const char *k = masks; *k;) {
        run_mask(&cs[i], atoi(k), reps, ctas);
        k = strchr(k, ',');
        if (!k) break;
        k++;
      }
    }
  }
  for (int i = 0; i < nc; i++) free(cs[i].len);
  return 0;
}

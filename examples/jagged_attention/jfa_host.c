/* jfa_host.c - checks and benchmarks Jagged Flash Attention (forward) on the
 * GPU through the host API (jfa.h).
 *
 *   jfa_host --cubins DIR --check [--small] [--update] [--seed S]
 *       every correctness case (empty sequences, length 1, ragged lengths,
 *       one 32k sequence, B = 1, B = 20000, both head dims, causal or not,
 *       broadcast-Q with num_q not a multiple of 64) against a float64
 *       reference on sampled rows; outputs poisoned with NaN first and a
 *       guard band after O checked untouched; plus the API's bad-input errors.
 *       --update: each plan made for another batch, then jfa_plan_update'd
 *       (jfa_test.h, plan_for). --ctas N: plans of N CTAs, so that each
 *       walks several tiles (the small cases have fewer than 132).
 *   jfa_host --cubins DIR --check [--small] --blocksparse [--ignore-mask]
 *       block-sparse attention's cases only (jfa_params.block_mask: random
 *       masks, none, all, per batch and per sequence, causal or not);
 *       --ignore-mask runs the kernel without the mask, the reference with
 *       it: every case but the all-ones mask's must then fail.
 *   jfa_host --cubins DIR --bench SUITES_DIR [--only J1,J4] [--reps N]
 *            [--allocs N | --ab DIR1[,DIR2,...]]
 *       TFLOP/s on ../shared/bench/suites (the shapes peers.py gives
 *       PyTorch), with the zigzag scheduler on and off (timed interleaved,
 *       the median of N launches each), and a sampled check. One line a suite:
 *         suite shape ms TFLOP/s no-zigzag gain max/avg
 *       --allocs N: each suite on N differently placed buffer sets (J2#0..).
 *       --ab: up to 8 more cubin folders (the same kernel built with other
 *       options, `make jfa-ab`), each named by its basename. Every suite's
 *       plans, the default's zigzag and no-zigzag and each variant's zigzag,
 *       are timed round robin in this one process, so that clock and thermal
 *       drift hits them all alike; after the default's line, one a variant:
 *         ab SUITE NAME ms TFLOP/s RATIO x   (RATIO = default ms / NAME ms,
 *                                             > 1: the variant is faster)
 *       then the sampled check runs for the default and for each variant (on
 *       the same inputs); a variant that fails prints
 *         ab SUITE NAME FAILED ...   and at the end   ab variant NAME (DIR) FAILED
 *       and the exit status is 1.
 *
 * Exit status 0 only when every check passed. */
#include <sys/stat.h>

#include "jfa_test.h"

typedef struct Data {
  int64_t total, qrows, orows;
  int32_t *off;
  uint16_t *q, *k, *v, *o;
  float *lse;
  tile_devptr dq, dk, dv, dout, dlse;
  size_t o_bytes, lse_count;
} Data;

enum { GUARD_ROWS = 3 };
static const uint16_t GUARD = 0x7777;
static int num_ctas; /* --ctas N: plans with N CTAs, each walking several tiles (0: one per SM) */
static int cta_pair; /* --pair: the CTA pair's forward (jfa_params.cta_pair, sm_100a): head dim 128 */

static void tensors(const Case *c, const Data *d, jfa_tensor *q, jfa_tensor *k, jfa_tensor *v, jfa_tensor *o,
                    jfa_tensor *lse) {
  tensor3(q, d->dq, "bf16", d->qrows, c->H, c->D);
  tensor3(k, d->dk, "bf16", d->total, c->H, c->D);
  tensor3(v, d->dv, "bf16", d->total, c->H, c->D);
  tensor_o(o, d->dout, c, d->total);
  tensor_lse(lse, d->dlse, c, d->total);
}

static void data_make(const Case *c, Data *d) {
  memset(d, 0, sizeof *d);
  d->off = malloc((size_t)(c->B + 1) * sizeof *d->off);
  d->off[0] = 0;
  for (int64_t b = 0; b < c->B; b++) d->off[b + 1] = d->off[b] + (int32_t)c->len[b];
  d->total = d->off[c->B];
  d->qrows = c->num_q > 0 ? c->num_q : d->total;
  d->orows = c->num_q > 0 ? c->B * c->num_q : d->total;
  size_t row = (size_t)c->H * c->D;
  size_t nq = (size_t)d->qrows * row, nkv = (size_t)d->total * row, no = (size_t)d->orows * row;
  d->q = malloc(nq * 2 + 2);
  d->k = malloc(nkv * 2 + 2);
  d->v = malloc(nkv * 2 + 2);
  d->o = malloc((no + GUARD_ROWS * row) * 2);
  d->lse_count = (size_t)c->H * (c->num_q > 0 ? (size_t)(c->B * c->num_q) : (size_t)d->total);
  d->lse = malloc(d->lse_count * 4 + 4);
  fill_bf16(d->q, nq);
  fill_bf16(d->k, nkv);
  fill_bf16(d->v, nkv);
  d->o_bytes = (no + GUARD_ROWS * row) * 2;
  CHECK(tile_malloc(&d->dq, nq * 2 + 16));
  CHECK(tile_malloc(&d->dk, nkv * 2 + 16));
  CHECK(tile_malloc(&d->dv, nkv * 2 + 16));
  CHECK(tile_malloc(&d->dout, d->o_bytes));
  CHECK(tile_malloc(&d->dlse, d->lse_count * 4 + 16));
  if (nq) CHECK(tile_memcpy_htod(d->dq, d->q, nq * 2));
  if (nkv) CHECK(tile_memcpy_htod(d->dk, d->k, nkv * 2));
  if (nkv) CHECK(tile_memcpy_htod(d->dv, d->v, nkv * 2));
}

static void poison(Data *d, size_t row) {
  size_t no = (size_t)d->orows * row;
  CHECK(tile_memset_d8(d->dout, 0xff, no * 2)); /* bf16 NaN */
  uint32_t g = (uint32_t)GUARD << 16 | GUARD;
  CHECK(tile_memset_d32(d->dout + no * 2, g, GUARD_ROWS * row / 2));
  CHECK(tile_memset_d32(d->dlse, 0x7fc00000u, d->lse_count + 1)); /* f32 NaN, one past the end too */
}

static void data_free(Data *d) {
  tile_free(d->dq);
  tile_free(d->dk);
  tile_free(d->dv);
  tile_free(d->dout);
  tile_free(d->dlse);
  free(d->off);
  free(d->q);
  free(d->k);
  free(d->v);
  free(d->o);
  free(d->lse);
}

/* --variant NAME: a variant of your own (docs/tutorial-variant.md), with
 * --variant-args its words; custom_visible is its mask in the float64
 * reference: add yours here. */
static const char *custom_variant;
static int32_t custom_args[64];
static int ncustom_args, custom_causal;

static int custom_visible(int64_t i, int64_t j) {
  if (!strcmp(custom_variant, "prefix_lm")) /* bidirectional over the first args[0] keys, causal after */
    return j <= i || j < custom_args[0];
  if (!strcmp(custom_variant, "holes")) /* tests/emu/holes.tile: blocks of 128 skipped where (qm + kn) % 3 == 2 */
    return (i / 128 + j / 128) % 3 != 2;
  return -1; /* no reference for it */
}

/* float64 reference of query row i (of sequence b in self-attention, of the
 * dense Q in broadcast-Q), head h; compares O and LSE. */
static void check_row(const Case *c, const Data *d, const BlockMask *bm, int64_t b, int64_t i, int h, float scale,
                      ErrStat *eo, ErrStat *el, long *lse_bad) {
  int D = c->D;
  size_t row = (size_t)c->H * D;
  int64_t start = d->off[b], L = d->off[b + 1] - start;
  int64_t qr = c->num_q > 0 ? i : start + i;
  int64_t orow = c->num_q > 0 ? b * c->num_q + i : start + i;
  int64_t lidx = c->num_q > 0 ? ((int64_t)b * c->H + h) * c->num_q + i : (int64_t)h * d->total + start + i;
  /* the keys row i sees: j0 .. j0 + nk - 1 */
  int64_t j0 = 0, nk = c->causal ? i + 1 : L;
  if (c->window) {
    int64_t lo = c->wl < 0 ? 0 : i - c->wl, hi = c->wr < 0 ? L - 1 : i + c->wr;
    j0 = lo < 0 ? 0 : lo;
    nk = (hi > L - 1 ? L - 1 : hi) - j0 + 1;
    if (nk < 0) nk = 0;
  }
  if (custom_variant) j0 = 0, nk = L; /* every key, the invisible ones at -inf */
  int64_t seen = 0;
  double qv[128], acc[128] = {0};
  for (int x = 0; x < D; x++) qv[x] = bf2f(d->q[(size_t)qr * row + (size_t)h * D + x]);
  double *s = malloc((size_t)(nk > 0 ? nk : 1) * sizeof *s), mx = -INFINITY;
  for (int64_t j = 0; j < nk; j++) {
    if ((custom_variant && (custom_visible(i, j0 + j) != 1 || (custom_causal && j0 + j > i))) ||
        !mask_sees(c, bm, b, i, j0 + j)) {
      s[j] = -INFINITY;
      continue;
    }
    seen++;
    const uint16_t *kr = d->k + (size_t)(start + j0 + j) * row + (size_t)h * D;
    double t = 0;
    for (int x = 0; x < D; x++) t += qv[x] * bf2f(kr[x]);
    s[j] = t * scale;
    if (c->softcap > 0) s[j] = c->softcap * tanh(s[j] / c->softcap);
    if (c->alibi) s[j] -= (double)alibi_slope(h, c->H) * fabs((double)(i - (j0 + j)));
    if (s[j] > mx) mx = s[j];
  }
  if (!custom_variant && !c->mask_mode) seen = nk;
  double sum = 0;
  for (int64_t j = 0; j < nk && seen > 0; j++) {
    if (s[j] == -INFINITY) continue;
    double p = exp(s[j] - mx);
    sum += p;
    const uint16_t *vr = d->v + (size_t)(start + j0 + j) * row + (size_t)h * D;
    for (int x = 0; x < D; x++) acc[x] += p * bf2f(vr[x]);
  }
  free(s);
  for (int x = 0; x < D; x++) {
    double ref = seen > 0 ? acc[x] / sum : 0.0;
    err_add(eo, bf2f(d->o[(size_t)orow * row + (size_t)h * D + x]), ref);
  }
  float got = d->lse[lidx];
  if (seen == 0) {
    if (!(isinf(got) && got < 0)) (*lse_bad)++;
  } else {
    err_add(el, got, mx + log(sum));
  }
}

static const char *case_filter; /* --case SUBSTR: only the cases whose name has it */
static int blocksparse_only;     /* --blocksparse: the block-sparse cases only */

/* Run the case once and check it; returns true when it passed. */
static bool run_check(jfa_lib *lib, const Case *c, int quick) {
  if (case_filter && !strstr(c->name, case_filter)) return true;
  Data d;
  data_make(c, &d);
  BlockMask bm;
  mask_make(c, &bm);
  size_t row = (size_t)c->H * c->D;
  poison(&d, row);
  jfa_params p = {0};
  p.num_ctas = num_ctas;
  p.cta_pair = cta_pair;
  p.batch = c->B;
  p.cu_seqlens = d.off;
  p.heads = c->H;
  p.head_dim = c->D;
  p.causal = c->causal;
  p.num_q = c->num_q;
  p.window = c->window;
  p.window_left = c->wl;
  p.window_right = c->wr;
  p.softcap = c->softcap;
  float slopes[64];
  for (int h = 0; h < c->H && h < 64; h++) slopes[h] = alibi_slope(h, c->H);
  p.alibi_slopes = c->alibi ? slopes : NULL;
  if (custom_variant) {
    p.variant = custom_variant;
    p.variant_args = custom_args, p.nvariant_args = ncustom_args;
    p.causal = custom_causal;
  }
  mask_params(c, &bm, &p);
  jfa_plan *plan;
  CHECK(plan_for(lib, &p, &plan));
  jfa_tensor q, k, v, o, lse;
  tensors(c, &d, &q, &k, &v, &o, &lse);
  CHECK(jfa_plan_forward(plan, &q, &k, &v, &o, &lse, NULL));
  CHECK(tile_synchronize());
  CHECK(tile_memcpy_dtoh(d.o, d.dout, d.o_bytes));
  CHECK(tile_memcpy_dtoh(d.lse, d.dlse, d.lse_count * 4 + 4));
  char dn[160]; /* --dump (tests/gpu/emu_xval.sh) */
  snprintf(dn, sizeof dn, "%s D=%d H=%d.o", c->name, c->D, c->H);
  host_dump(dn, "bf16", d.o, d.o_bytes / 2);
  memcpy(dn + strlen(dn) - 1, "lse", 4);
  host_dump(dn, "f32", d.lse, d.lse_count);
  /* every output written (no NaN left), the guard band untouched */
  long unwritten = 0, guard = 0;
  size_t no = (size_t)d.orows * row;
  for (size_t i = 0; i < no; i++) unwritten += bf2f(d.o[i]) != bf2f(d.o[i]);
  for (size_t i = 0; i < GUARD_ROWS * row; i++) guard += d.o[no + i] != GUARD;
  for (size_t i = 0; i < d.lse_count; i++) unwritten += d.lse[i] != d.lse[i];
  uint32_t past;
  memcpy(&past, &d.lse[d.lse_count], 4);
  guard += past != 0x7fc00000u;
  /* the reference on sampled rows */
  ErrStat eo = {0}, el = {0};
  long lse_bad = 0, rows_checked = 0;
  float scale = (float)(1.0 / sqrt((double)c->D));
  int64_t nseq = quick ? 8 : 48, edge = quick ? 16 : 70, nrand = quick ? 8 : 40;
  int64_t seq_step = c->B > nseq ? c->B / nseq : 1;
  for (int64_t b = 0; b < c->B; b += seq_step) {
    int64_t L = d.off[b + 1] - d.off[b];
    int64_t nrows = c->num_q > 0 ? c->num_q : L;
    /* all rows of short sequences; else the first and last `edge` and some random ones */
    double work = (double)nrows * (double)(L + 1) * c->D;
    int all = work < (quick ? 2e6 : 2e7);
    for (int h = 0; h < c->H; h += (c->H > 2 ? c->H - 1 : 1)) {
      if (all) {
        for (int64_t i = 0; i < nrows; i++, rows_checked++) check_row(c, &d, &bm, b, i, h, scale, &eo, &el, &lse_bad);
      } else {
        for (int64_t i = 0; i < edge && i < nrows; i++, rows_checked++)
          check_row(c, &d, &bm, b, i, h, scale, &eo, &el, &lse_bad);
        for (int64_t i = nrows - edge > edge ? nrows - edge : edge; i < nrows; i++, rows_checked++)
          check_row(c, &d, &bm, b, i, h, scale, &eo, &el, &lse_bad);
        for (int r = 0; r < nrand; r++, rows_checked++)
          check_row(c, &d, &bm, b, rng_int(0, nrows - 1), h, scale, &eo, &el, &lse_bad);
      }
    }
  }
  int64_t ntiles, maxc, totc, nsplit, npieces;
  int ctas;
  jfa_plan_stats(plan, &ntiles, &maxc, &totc, &ctas);
  jfa_plan_split_stats(plan, &nsplit, &npieces);
  jfa_plan_destroy(plan);
  char tiles[48];
  if (nsplit) snprintf(tiles, sizeof tiles, "%lld(%lld split:%lld)", (long long)ntiles, (long long)nsplit,
                       (long long)npieces);
  else snprintf(tiles, sizeof tiles, "%lld", (long long)ntiles);
  double ro = err_rel(&eo), rl = err_rel(&el);
  bool ok = eo.bad == 0 && el.bad == 0 && ro <= 1e-2 && rl <= 1e-3 && !unwritten && !guard && !lse_bad;
  char var[48] = "";
  if (c->window) snprintf(var, sizeof var, "window(%d,%d)", c->wl, c->wr);
  else if (c->softcap > 0) snprintf(var, sizeof var, "softcap %g", c->softcap);
  else if (c->alibi) snprintf(var, sizeof var, "alibi");
  else if (custom_variant) snprintf(var, sizeof var, "%s%s", custom_variant, custom_causal ? " causal" : "");
  else if (c->mask_mode)
    snprintf(var, sizeof var, "blocksparse %d%% %s%s", c->mask_pct,
             c->mask_mode == JFA_MASK_PER_BATCH ? "per-batch" : "per-seq", ignore_mask ? " IGNORED" : "");
  printf("%-28s B=%-6lld rows=%-7lld D=%-3d H=%d %s%s %s tiles=%-6s checked=%-6ld O_err=%.2e LSE_err=%.2e "
         "unwritten=%ld guard=%ld nonfinite=%ld %s\n",
         c->name, (long long)c->B, (long long)d.total, c->D, c->H, c->causal ? "causal" : "",
         c->num_q > 0 ? "bcast" : "", var, tiles, rows_checked, ro, rl, unwritten, guard,
         eo.bad + el.bad + lse_bad, ok ? "OK" : "FAIL");
  data_free(&d);
  mask_free(&bm);
  return ok;
}

/* Block-sparse attention (jfa_params.block_mask): random masks of half the
 * blocks, none and all (= plain attention), per batch and per sequence,
 * causal and not, sequences shorter than a block and empty, both head dims
 * (make test runs the small set on the emulator). */
static bool check_blocksparse(jfa_lib *lib, int small) {
  static const int64_t mixed[] = {0, 1, 127, 128, 129, 0, 300, 1, 64, 65, 1000, 0, 159, 160, 161, 319, 321, 480};
  static const int64_t b1100[] = {1100}, b4096[] = {4096}, b4500[] = {4300, 4500};
  enum { PB = JFA_MASK_PER_BATCH, PS = JFA_MASK_PER_SEQUENCE };
  bool ok = true;
  for (int D = 64; D <= 128; D += 64) {
    Case cs[] = {
        {"bs 50% mixed", D, 2, 0, 0, 18, lens_of(18, mixed), .mask_mode = PS, .mask_pct = 50},
        {"bs 50% causal mixed", D, 2, 1, 0, 18, lens_of(18, mixed), .mask_mode = PB, .mask_pct = 50},
        {"bs none causal mixed", D, 2, 1, 0, 18, lens_of(18, mixed), .mask_mode = PS, .mask_pct = 0},
        {"bs all mixed", D, 2, 0, 0, 18, lens_of(18, mixed), .mask_mode = PB, .mask_pct = 100},
        {"bs 50% B=1 len=1100", D, 2, 0, 0, 1, lens_of(1, b1100), .mask_mode = PB, .mask_pct = 50},
        {"bs 50% causal B=1 len=1100", D, 2, 1, 0, 1, lens_of(1, b1100), .mask_mode = PS, .mask_pct = 50},
        {"bs none mixed", D, 2, 0, 0, 18, lens_of(18, mixed), .mask_mode = PB, .mask_pct = 0},
        {"bs all causal mixed", D, 2, 1, 0, 18, lens_of(18, mixed), .mask_mode = PS, .mask_pct = 100},
        {"bs 30% random B=40", D, 3, 0, 0, 40, lens_random(40, 0, 2000), .mask_mode = PS, .mask_pct = 30},
        {"bs 70% causal random B=40", D, 2, 1, 0, 40, lens_random(40, 0, 2000), .mask_mode = PB, .mask_pct = 70},
        {"bs 50% B=1 len=4096", D, 1, 0, 0, 1, lens_of(1, b4096), .mask_mode = PS, .mask_pct = 50},
        {"bs 50% B=20000 len 0..300", D, 2, 1, 0, 20000, lens_random(20000, 0, 300), .mask_mode = PS, .mask_pct = 50},
        /* more than 32 blocks: the kernels read the mask a word of 32 blocks at a time */
        {"bs 30% causal B=2 len=4300,4500", D, 1, 1, 0, 2, lens_of(2, b4500), .mask_mode = PB, .mask_pct = 30},
    };
    size_t n = sizeof cs / sizeof cs[0];
    for (size_t i = 0; i < n; i++) {
      if (!small || i < 8 || (i == n - 1 && D == 64)) ok &= run_check(lib, &cs[i], small);
      free(cs[i].len);
    }
  }
  return ok;
}

/* ---- bad input: errors, no launch -------------------------------------- */
static bool check_errors(jfa_lib *lib) {
  bool ok = true;
  int32_t off[4] = {0, 100, 90, 200};
  jfa_params p = {0};
  p.batch = 3;
  p.cu_seqlens = off;
  p.heads = 2;
  p.head_dim = 128;
  struct {
    const char *what;
    jfa_params p;
    const char *want;
  } bad[8];
  int n = 0;
  bad[n].what = "offsets not monotonic", bad[n].p = p, bad[n++].want = "offsets[";
  int32_t good[4] = {0, 100, 150, 200};
  p.cu_seqlens = good;
  bad[n].what = "head_dim 96", bad[n].p = p, bad[n].p.head_dim = 96, bad[n++].want = "head_dim 96";
  bad[n].what = "causal broadcast-Q", bad[n].p = p, bad[n].p.causal = 1, bad[n].p.num_q = 64, bad[n++].want = "causal";
  bad[n].what = "heads 0", bad[n].p = p, bad[n].p.heads = 0, bad[n++].want = "heads";
  int32_t notzero[4] = {5, 100, 150, 200};
  bad[n].what = "offsets[0] != 0", bad[n].p = p, bad[n].p.cu_seqlens = notzero, bad[n++].want = "offsets[0]";
  for (int i = 0; i < n; i++) {
    jfa_plan *plan = NULL;
    tile_status st = jfa_plan_create(lib, &bad[i].p, &plan);
    bool good_err = st == TILE_ERR_INVALID && strstr(tile_last_error(), bad[i].want) && !plan;
    printf("error: %-24s -> %s: %s %s\n", bad[i].what, tile_status_name(st), tile_last_error(), good_err ? "OK" : "FAIL");
    ok &= good_err;
  }
  /* block masks (sequences of 100, 50, 50 rows: one block each) */
  uint8_t m3[9] = {1, 0, 1, 1, 1, 1, 0, 0, 1}, m2[3] = {1, 2, 0};
  struct {
    const char *what, *want;
    const uint8_t *m;
    int mode, window, causal, det;
    int64_t bytes, num_q;
  } bm[] = {{"mask too short", "the batch's sequences need 3", m3, JFA_MASK_PER_SEQUENCE, 0, 0, 0, 2, 0},
            {"mask byte 2", "block_mask[1] is 2", m2, JFA_MASK_PER_SEQUENCE, 0, 0, 0, 3, 0},
            {"mask mode 3", "block_mask_mode 3", m3, 3, 0, 0, 0, 3, 0},
            {"mask not square", "not a square", m3, JFA_MASK_PER_BATCH, 0, 0, 0, 3, 0},
            {"mask per batch 0x0", "the longest sequence has 1", m3, JFA_MASK_PER_BATCH, 0, 0, 0, 0, 0},
            {"mask mode, no mask", "without a block_mask", NULL, JFA_MASK_PER_BATCH, 0, 0, 0, 1, 0},
            {"mask and window", "one at a time", m3, JFA_MASK_PER_BATCH, 1, 0, 0, 9, 0},
            {"mask broadcast-Q", "self-attention", m3, JFA_MASK_PER_BATCH, 0, 0, 0, 9, 64},
            {"mask bytes -1", "block_mask_bytes -1", m3, JFA_MASK_PER_BATCH, 0, 0, 0, -1, 0}};
  for (size_t i = 0; i < sizeof bm / sizeof bm[0]; i++) {
    jfa_params q = p;
    q.block_mask = bm[i].m, q.block_mask_mode = bm[i].mode, q.block_mask_bytes = bm[i].bytes;
    q.window = bm[i].window, q.causal = bm[i].causal, q.num_q = bm[i].num_q;
    if (bm[i].det) q.passes = JFA_FWD | JFA_BWD, q.deterministic = 1;
    jfa_plan *plan = NULL;
    tile_status st = jfa_plan_create(lib, &q, &plan);
    bool good_err = st == TILE_ERR_INVALID && strstr(tile_last_error(), bm[i].want) && !plan;
    printf("error: %-24s -> %s: %s %s\n", bm[i].what, tile_status_name(st), tile_last_error(), good_err ? "OK" : "FAIL");
    ok &= good_err;
  }
  /* tensor checks on a valid plan: nothing is launched, so fake addresses do */
  Case c = {"err", 128, 2, 0, 0, 3, NULL};
  Data d = {0};
  d.total = 200, d.qrows = 200, d.dq = d.dk = d.dv = d.dout = d.dlse = 0x100000;
  jfa_plan *plan;
  CHECK(jfa_plan_create(lib, &p, &plan));
  struct {
    const char *what, *want;
    int field;
  } tb[] = {{"q as f32", "q must be bf16", 0}, {"k misaligned", "not 16-byte aligned", 1},
            {"v wrong rows", "v has shape", 2},   {"q row stride 1030", "rows must start 16 bytes apart", 3},
            {"lse wrong rank", "lse must have 2", 4}, {"q heads strided", "contiguous", 5}};
  for (size_t i = 0; i < sizeof tb / sizeof tb[0]; i++) {
    jfa_tensor q, k, v, o, lse;
    tensors(&c, &d, &q, &k, &v, &o, &lse);
    switch (tb[i].field) {
    case 0: q.dtype = "f32"; break;
    case 1: k.data += 8; break;
    case 2: v.shape[0] = 199; break;
    case 3: q.stride[0] = 1030; break;
    case 4: lse.rank = 3; break;
    case 5: q.stride[1] = 256; break;
    }
    tile_status st = jfa_plan_forward(plan, &q, &k, &v, &o, &lse, NULL);
    bool good_err = st == TILE_ERR_INVALID && strstr(tile_last_error(), tb[i].want);
    printf("error: %-24s -> %s: %s %s\n", tb[i].what, tile_status_name(st), tile_last_error(), good_err ? "OK" : "FAIL");
    ok &= good_err;
  }
  jfa_plan_destroy(plan);
  return ok;
}

/* ---- benchmark ------------------------------------------------------------ */
enum { MAX_AB = 8 };

/* --ab: a kernel variant, another folder of cubins timed beside the default */
typedef struct Variant {
  const char *dir;
  char name[64]; /* the folder's basename */
  jfa_lib *lib;
  bool failed;   /* a plan or a sampled check failed on some suite */
} Variant;

/* Median launch times of n plans, measured interleaved round robin
 * (p0, p1, ..., pn-1, p0, ...) so that clock and thermal drift hits all of
 * them alike; 3 warm-up rounds first. */
/* CHECK that names the plan (a variant's kernel that faults says which) */
static void check_plan(tile_status st, const char *who, const char *what) {
  if (st == TILE_OK) return;
  fprintf(stderr, "jfa_host: %s: %s failed: %s: %s\n", who, what, tile_status_name(st), tile_last_error());
  printf("%s: %s FAILED\n", who, what);
  exit(2);
}

static void time_many(jfa_plan **plans, const char *const *who, int n, const jfa_tensor *t, int reps,
                      double *med) {
  tile_event e0, e1;
  CHECK(tile_event_create(&e0));
  CHECK(tile_event_create(&e1));
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < n; k++) {
      check_plan(jfa_plan_forward(plans[k], &t[0], &t[1], &t[2], &t[3], &t[4], NULL), who[k], "warm-up forward");
      check_plan(tile_synchronize(), who[k], "warm-up forward (synchronize)");
    }
  float *ms = malloc((size_t)reps * (size_t)n * sizeof *ms);
  for (int i = 0; i < reps; i++)
    for (int k = 0; k < n; k++) {
      CHECK(tile_event_record(e0, NULL));
      check_plan(jfa_plan_forward(plans[k], &t[0], &t[1], &t[2], &t[3], &t[4], NULL), who[k], "forward");
      CHECK(tile_event_record(e1, NULL));
      check_plan(tile_event_elapsed_ms(&ms[(size_t)k * reps + i], e0, e1), who[k], "forward (timed)");
    }
  for (int k = 0; k < n; k++) med[k] = median_ms(ms + (size_t)k * reps, reps);
  free(ms);
  tile_event_destroy(e0);
  tile_event_destroy(e1);
}

typedef struct BenchCtx {
  jfa_lib *lib;
  int reps, allocs, nab;
  Variant *ab;
  bool ok;
} BenchCtx;

static void bench_suite(const Case *cs, void *ud) {
  BenchCtx *x = ud;
  jfa_lib *lib = x->lib;
  int reps = x->reps, allocs = x->allocs, nab = x->nab;
  Variant *ab = x->ab;
  bool ok = true;
  Case c = *cs;
  const char *name = c.name;
  int64_t B = c.B;
  bool noplan[MAX_AB] = {false};
  /* --allocs N: the same suite N times, each on fresh buffers placed
   * differently (a spacer of a few MB allocated first): does the time
   * depend on where the tensors land? (J2 was bimodal between processes)
   * (--ab needs allocs == 1: main refuses both) */
  for (int a = 0; a < allocs; a++) {
    tile_devptr spacer = 0;
    if (a > 0) CHECK(tile_malloc(&spacer, (size_t)a * (3u << 20) + 4096));
    Data d;
    data_make(&c, &d);
    jfa_tensor t[5];
    tensors(&c, &d, &t[0], &t[1], &t[2], &t[3], &t[4]);
    jfa_params p = {0};
    p.batch = B;
    p.cu_seqlens = d.off;
    p.heads = c.H;
    p.head_dim = c.D;
    p.causal = c.causal;
    p.num_q = c.num_q;
    /* plans[0]: the default kernel, zigzag; [1]: no zigzag; [2..]: the
     * --ab variants (zigzag) whose plan could be made; vi[] maps back */
    jfa_plan *plans[3 + MAX_AB];
    const char *who[3 + MAX_AB] = {"default", "default no-zigzag"};
    char whob[MAX_AB][160]; /* the name for time_many, or why the plan failed */
    int vi[3 + MAX_AB], np = 2;
    CHECK(jfa_plan_create(lib, &p, &plans[0]));
    int64_t nsplit, npieces;
    jfa_plan_split_stats(plans[0], &nsplit, &npieces);
    if (nsplit) { /* the tail split measured against no split (vi -1) */
      p.no_split = 1;
      CHECK(jfa_plan_create(lib, &p, &plans[np]));
      p.no_split = 0;
      who[np] = "default no-split";
      vi[np++] = -1;
    }
    for (int v = 0; v < nab; v++) {
      tile_status st = jfa_plan_create(ab[v].lib, &p, &plans[np]);
      if (st != TILE_OK) { /* reported after the default's line */
        snprintf(whob[v], sizeof whob[v], "%s: %s", tile_status_name(st), tile_last_error());
        ab[v].failed = noplan[v] = true;
        ok = false;
        continue;
      }
      snprintf(whob[v], sizeof whob[v], "ab %s variant %s", name, ab[v].name);
      who[np] = whob[v];
      vi[np++] = v;
    }
    p.no_zigzag = 1;
    CHECK(jfa_plan_create(lib, &p, &plans[1]));
    double flops = fwd_flops(&c);
    double med[3 + MAX_AB];
    time_many(plans, who, np, t, reps, med);
    double t_zz = med[0], t_rr = med[1];
    int64_t ntiles, maxc, totc;
    int ctas;
    jfa_plan_stats(plans[0], &ntiles, &maxc, &totc, &ctas);
    char shape[64];
    snprintf(shape, sizeof shape, "B=%lld H=%d D=%d%s%s", (long long)B, c.H, c.D, c.causal ? " causal" : "",
             c.num_q ? " bcast" : "");
    char label[40];
    if (allocs > 1) snprintf(label, sizeof label, "%s#%d", name, a);
    else snprintf(label, sizeof label, "%s", name);
    printf("%-5s %-34s %10.4f %10.1f %10.1f %7.3fx %10.3f\n", label, shape, t_zz, flops / t_zz / 1e9,
           flops / t_rr / 1e9, t_rr / t_zz, (double)maxc * ctas / (double)(totc ? totc : 1));
    for (int k = 2; k < np; k++)
      printf("ab %-5s %-20s %10.4f %10.1f %7.3fx\n", label, vi[k] >= 0 ? ab[vi[k]].name : "(no split)", med[k],
             flops / med[k] / 1e9, t_zz / med[k]);
    if (nsplit)
      printf("      split: %lld tiles of the last pass cut into %lld pieces (no split: the '(no split)' line)\n",
             (long long)nsplit, (long long)npieces);
    for (int v = 0; v < nab; v++)
      if (noplan[v]) printf("ab %-5s %-20s FAILED: no plan: %s\n", label, ab[v].name, whob[v]);
    fflush(stdout);
    for (int k = 0; k < np; k++) jfa_plan_destroy(plans[k]);
    data_free(&d);
    if (spacer) tile_free(spacer);
  }
  /* and a sampled correctness check of the same suite: the default, then
   * each variant on the same inputs and rows (the generator rewound) */
  uint64_t rng0 = rng_state;
  ok &= run_check(lib, &c, 1);
  uint64_t rng1 = rng_state;
  for (int v = 0; v < nab; v++) {
    char vname[128];
    snprintf(vname, sizeof vname, "%s ab:%s", name, ab[v].name);
    Case cv = c;
    cv.name = vname;
    rng_state = rng0;
    if (noplan[v]) continue; /* reported above; run_check would exit on it */
    bool vok = run_check(ab[v].lib, &cv, 1);
    if (!vok) {
      printf("ab %-5s %-20s FAILED the sampled check\n", name, ab[v].name);
      ab[v].failed = true;
    }
    ok &= vok;
  }
  rng_state = rng1;
  x->ok &= ok;
}

static bool bench_suites(jfa_lib *lib, const char *dir, const char *only, int reps, int allocs, Variant *ab, int nab) {
  printf("%-5s %-34s %10s %10s %10s %8s %10s\n", "suite", "shape", "ms", "TFLOP/s", "no-zigzag", "gain", "max/avg");
  if (nab > 0)
    printf("#  %-5s %-20s %10s %10s %8s  (--ab: timed interleaved with the above; default ms / variant ms)\n",
           "suite", "variant", "ms", "TFLOP/s", "vs-dflt");
  BenchCtx x = {lib, reps, allocs, nab, ab, true};
  bool ok = each_suite(dir, only, bench_suite, &x) && x.ok;
  for (int v = 0; v < nab; v++)
    if (ab[v].failed) printf("ab variant %s (%s) FAILED\n", ab[v].name, ab[v].dir);
  return ok;
}

/* --ab DIR1[,DIR2,...]: adds the folders (cut out of the argument in place)
 * to ab[]; false on an empty name or more than MAX_AB in all. */
static bool parse_ab(char *list, Variant *ab, int *nab) {
  for (char *s = list;;) {
    char *comma = strchr(s, ',');
    if (comma) *comma = 0;
    if (!*s || *nab == MAX_AB) return false;
    Variant *v = &ab[(*nab)++];
    memset(v, 0, sizeof *v);
    v->dir = s;
    /* the name: the basename, trailing slashes ignored */
    size_t n = strlen(s);
    while (n > 1 && s[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && s[b - 1] != '/') b--;
    if (n - b >= sizeof v->name) b = n - (sizeof v->name - 1);
    memcpy(v->name, s + b, n - b);
    v->name[n - b] = 0;
    if (!comma) return true;
    s = comma + 1;
  }
}

int main(int argc, char **argv) {
  const char *cubins = NULL, *suites = NULL, *only = NULL;
  int check = 0, small = 0, reps = 20, allocs = 1;
  uint64_t seed = 1;
  Variant ab[MAX_AB];
  int nab = 0;
  bool usage = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--cubins") && i + 1 < argc) cubins = argv[++i];
    else if (!strcmp(argv[i], "--check")) check = 1;
    else if (!strcmp(argv[i], "--small")) small = 1; /* a few small cases (for compute-sanitizer) */
    else if (!strcmp(argv[i], "--update")) plan_by_update = 1; /* plans made for another batch, then updated */
    else if (!strcmp(argv[i], "--bench") && i + 1 < argc) suites = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--case") && i + 1 < argc) case_filter = argv[++i];
    else if (!strcmp(argv[i], "--variant") && i + 1 < argc) custom_variant = argv[++i];
    else if (!strcmp(argv[i], "--variant-causal")) custom_causal = 1;
    else if (!strcmp(argv[i], "--ignore-mask")) ignore_mask = 1; /* jfa_test.h: the checks must fail */
    else if (!strcmp(argv[i], "--blocksparse")) blocksparse_only = 1;
    else if (!strcmp(argv[i], "--variant-args") && i + 1 < argc) {
      for (char *t = strtok(argv[++i], ","); t && ncustom_args < 64; t = strtok(NULL, ","))
        custom_args[ncustom_args++] = (int32_t)strtol(t, NULL, 0);
    }
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--allocs") && i + 1 < argc) allocs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--ctas") && i + 1 < argc) num_ctas = atoi(argv[++i]); /* several tiles a CTA */
    else if (!strcmp(argv[i], "--pair")) cta_pair = 1; /* the CTA pair's forward: its cases (head dim 128) */
    else if (!strcmp(argv[i], "--dump") && i + 1 < argc) host_dump_open(argv[++i]); /* the outputs (host.h) */
    else if (!strcmp(argv[i], "--ab") && i + 1 < argc) {
      if (!parse_ab(argv[++i], ab, &nab)) {
        fprintf(stderr, "%s: --ab takes 1 to %d comma-separated cubin folders (in all), none empty\n", argv[0],
                MAX_AB);
        usage = true;
        break;
      }
    } else {
      usage = true;
      break;
    }
  }
  if (usage) {
    fprintf(stderr,
            "usage: %s --cubins DIR (--check [--small] [--update] [--case SUBSTR] [--variant NAME [--variant-args A,B,..] "
            "[--variant-causal] | --blocksparse [--ignore-mask]]\n"
            "       | --bench SUITES_DIR [--only J1,J2] [--reps N]\n"
            "       [--allocs N | --ab DIR1[,DIR2,...]]) [--seed S] [--ctas N] [--pair]\n",
            argv[0]);
    return 2;
  }
  if (!cubins || (!check && !suites)) {
    fprintf(stderr, "%s: give --cubins DIR and --check or --bench DIR\n", argv[0]);
    return 2;
  }
  if (cta_pair && (blocksparse_only || nab > 0)) {
    fprintf(stderr, "%s: --pair runs the CTA pair's cases at head dim 128 (not --blocksparse, not --ab)\n", argv[0]);
    return 2;
  }
  if (nab > 0 && !suites) {
    fprintf(stderr, "%s: --ab times variants in the benchmark: give --bench SUITES_DIR too\n", argv[0]);
    return 2;
  }
  if (nab > 0 && allocs > 1) {
    fprintf(stderr, "%s: --ab and --allocs N > 1 do not go together (run them separately)\n", argv[0]);
    return 2;
  }
  for (int v = 0; v < nab; v++) {
    struct stat st;
    if (stat(ab[v].dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      fprintf(stderr, "%s: --ab %s: not a folder of cubins\n", argv[0], ab[v].dir);
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  setvbuf(stdout, NULL, _IOLBF, 0); /* a run cut short (a hang, a timeout) still shows its lines */
  rng_state = 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
  CHECK(tile_init(0));
  jfa_lib *lib;
  CHECK(jfa_lib_open(cubins, &lib));
  for (int v = 0; v < nab; v++) {
    tile_status st = jfa_lib_open(ab[v].dir, &ab[v].lib);
    if (st != TILE_OK) {
      fprintf(stderr, "%s: --ab %s: cannot open: %s: %s\n", argv[0], ab[v].dir, tile_status_name(st),
              tile_last_error());
      return 2;
    }
  }
  bool ok = true;
  if (check) printf("target: %s\n", jfa_lib_arch(lib)); /* whose cubins run (tests/emu/run.sh greps it) */
  /* the variants' checks run where their cubins are (not in A/B folders) */
  char vpath[1200];
  snprintf(vpath, sizeof vpath, cta_pair ? "%s/jfa_fwd.d128.window.pair.%s.cubin" : "%s/jfa_fwd.d64.window.%s.cubin",
           cubins, jfa_lib_arch(lib));
  FILE *vf = fopen(vpath, "rb");
  int variants = vf != NULL;
  if (vf) fclose(vf);
  if (check && !variants) printf("(no variant cubins in %s: the window checks are skipped)\n", cubins);
  if (check && blocksparse_only) {
    ok &= check_blocksparse(lib, small);
    check = 0;
  }
  if (check && custom_variant) {
    /* a variant of your own: its cases only, against custom_visible */
    if (custom_visible(0, 0) < 0) {
      fprintf(stderr, "%s: no float64 reference for variant '%s': add its mask to custom_visible in %s\n", argv[0],
              custom_variant, __FILE__);
      return 2;
    }
    static const int64_t vmixed[] = {0, 1, 127, 128, 129, 0, 300, 1, 64, 65, 1000, 0, 159, 160, 161, 319, 321, 480};
    static const int64_t v4096[] = {4096};
    for (int D = cta_pair ? 128 : 64; D <= 128; D += 64) {
      Case vc[] = {
          {"variant mixed", D, 2, 0, 0, 18, lens_of(18, vmixed)},
          {"variant random B=40", D, 2, 0, 0, 40, lens_random(40, 0, small ? 600 : 2000)},
          {"variant split B=1 len=4096", D, 1, 0, 0, 1, lens_of(1, v4096)},
      };
      int n = small ? 1 : 3;
      for (int i = 0; i < 3; i++) {
        if (i < n) ok &= run_check(lib, &vc[i], small);
        free(vc[i].len);
      }
    }
    check = 0;
  }
  if (check) {
    ok &= check_errors(lib);
    /* around multiples of 64, 128 and 160 (the KV blocks of the kernel options) */
    static const int64_t mixed[] = {0, 1, 127, 128, 129, 0, 300, 1, 64, 65, 1000, 0, 159, 160, 161, 319, 321, 480};
    static const int64_t one32k[] = {32768};
    static const int64_t b1[] = {777};
    static const int64_t allempty[] = {0, 0, 0};
    /* fewer tiles than CTAs: the schedule splits them (pieces + jfa_combine) */
    static const int64_t b1100[] = {1100}, b3001[] = {3001}, b4096[] = {4096}, two5000[] = {5000, 4999};
    static const int64_t self3[] = {128, 256, 300};
    for (int D = cta_pair ? 128 : 64; D <= 128 && small; D += 64) {
      Case cs[] = {
          {"mixed (empty, 1, 127..1000)", D, 2, 1, 0, 18, lens_of(18, mixed)},
          {"bcast nq=70", D, 2, 0, 70, 4, lens_random(4, 0, 300)},
          {"split B=1 len=1100", D, 1, 0, 0, 1, lens_of(1, b1100)},
          /* whole tiles of the non-causal kernel: its TMA-store epilogue
           * (the cases above reach it only split or causal) */
          {"self 3 seqs 128..300", D, 2, 0, 0, 3, lens_of(3, self3)},
          {"window (100, 0) mixed", D, 2, 0, 0, 18, lens_of(18, mixed), 1, 100, 0, 0},
          {"softcap 2 mixed", D, 2, 0, 0, 18, lens_of(18, mixed), 0, 0, 0, 2.0f},
          {"softcap 2 causal mixed", D, 2, 1, 0, 18, lens_of(18, mixed), 0, 0, 0, 2.0f},
          {"alibi mixed", D, 4, 0, 0, 18, lens_of(18, mixed), 0, 0, 0, 0, 1},
      };
      for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        if (variants || !(cs[i].window || cs[i].softcap > 0 || cs[i].alibi)) ok &= run_check(lib, &cs[i], 1);
        free(cs[i].len);
      }
      if (cta_pair) { /* the pair's 256-row items: a second half past the sequence's end, causal halves apart */
        static const int64_t odd[] = {129, 255, 256, 257, 640, 1, 0, 383};
        Case pc[] = {
            {"pair: causal, halves of 256", D, 2, 1, 0, 8, lens_of(8, odd)},
            {"pair: self, halves of 256", D, 3, 0, 0, 8, lens_of(8, odd)},
            {"pair: bcast nq=300", D, 2, 0, 300, 3, lens_random(3, 0, 400)},
            {"pair: bcast split nq=600 B=1", D, 1, 0, 600, 1, lens_random(1, 300, 700)},
            {"pair: window (5, 3) mixed", D, 2, 0, 0, 18, lens_of(18, mixed), 1, 5, 3, 0},
        };
        for (size_t i = 0; i < sizeof pc / sizeof pc[0]; i++) {
          if (variants || !pc[i].window) ok &= run_check(lib, &pc[i], 1);
          free(pc[i].len);
        }
      }
    }
    for (int D = cta_pair ? 128 : 64; D <= 128 && !small; D += 64) {
      for (int causal = 0; causal <= 1; causal++) {
        Case cs[] = {
            {"mixed (empty, 1, 127..1000)", D, 3, causal, 0, 18, lens_of(18, mixed)},
            {"B=1 len=777", D, 2, causal, 0, 1, lens_of(1, b1)},
            {"random B=40 len 0..2000", D, 4, causal, 0, 40, lens_random(40, 0, 2000)},
            {"B=20000 len 0..40", D, 2, causal, 0, 20000, lens_random(20000, 0, 40)},
            {"one 32k sequence", D, 2, causal, 0, 1, lens_of(1, one32k)},
            {"all empty", D, 2, causal, 0, 3, lens_of(3, allempty)},
            {"empty batch (B=0)", D, 2, causal, 0, 0, lens_of(0, allempty)},
            {"split? B=1 len=4096", D, 1, causal, 0, 1, lens_of(1, b4096)},
            {"split? B=1 len=3001", D, 2, causal, 0, 1, lens_of(1, b3001)},
        };
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
          ok &= run_check(lib, &cs[i], 0);
          free(cs[i].len);
        }
      }
      /* variants (issue 17): windows shorter than a block, longer than
       * the sequence, one-sided, causal; a split sequence */
      Case vc[] = {
          {"window mixed", D, 3, 0, 0, 18, lens_of(18, mixed), 1, 100, 50, 0},
          {"window causal 256", D, 2, 0, 0, 40, lens_random(40, 0, 2000), 1, 256, 0, 0},
          {"window short (5, 3)", D, 2, 0, 0, 18, lens_of(18, mixed), 1, 5, 3, 0},
          {"window long (5000, 5000)", D, 2, 0, 0, 18, lens_of(18, mixed), 1, 5000, 5000, 0},
          {"window right only (-1, 10)", D, 2, 0, 0, 40, lens_random(40, 0, 1000), 1, -1, 10, 0},
          {"window left only (300, -1)", D, 2, 0, 0, 40, lens_random(40, 0, 1000), 1, 300, -1, 0},
          {"window split B=1 len=4096", D, 1, 0, 0, 1, lens_of(1, b4096), 1, 333, 0, 0},
          {"window B=20000 len 0..40", D, 2, 0, 0, 20000, lens_random(20000, 0, 40), 1, 7, 0, 0},
          {"softcap 30 mixed", D, 3, 0, 0, 18, lens_of(18, mixed), 0, 0, 0, 30.0f},
          {"softcap 0.5 random B=40", D, 2, 0, 0, 40, lens_random(40, 0, 2000), 0, 0, 0, 0.5f},
          {"softcap split B=1 len=4096", D, 1, 0, 0, 1, lens_of(1, b4096), 0, 0, 0, 5.0f},
          {"softcap 3 causal random B=40", D, 2, 1, 0, 40, lens_random(40, 0, 2000), 0, 0, 0, 3.0f},
          {"alibi mixed", D, 3, 0, 0, 18, lens_of(18, mixed), 0, 0, 0, 0, 1},
          {"alibi causal random B=40", D, 8, 1, 0, 40, lens_random(40, 0, 2000), 0, 0, 0, 0, 1},
          {"alibi split B=1 len=4096", D, 2, 0, 0, 1, lens_of(1, b4096), 0, 0, 0, 0, 1},
      };
      for (size_t i = 0; i < sizeof vc / sizeof vc[0] && variants; i++) ok &= run_check(lib, &vc[i], 0);
      for (size_t i = 0; i < sizeof vc / sizeof vc[0]; i++) free(vc[i].len);
      Case bq[] = {
          {"bcast nq=200 mixed", D, 3, 0, 200, 18, lens_of(18, mixed)},
          {"bcast nq=1 B=5", D, 2, 0, 1, 5, lens_random(5, 0, 700)},
          {"bcast nq=333 B=300", D, 2, 0, 333, 300, lens_random(300, 0, 600)},
          {"bcast split nq=200 B=2", D, 1, 0, 200, 2, lens_of(2, two5000)},
      };
      for (size_t i = 0; i < sizeof bq / sizeof bq[0]; i++) {
        ok &= run_check(lib, &bq[i], 0);
        free(bq[i].len);
      }
    }
  }
  if (allocs < 1) allocs = 1;
  if (suites) ok &= bench_suites(lib, suites, only, reps, allocs, ab, nab);
  for (int v = 0; v < nab; v++) jfa_lib_close(ab[v].lib);
  jfa_lib_close(lib);
  printf("%s\n", ok ? "ALL OK" : "SOME CHECKS FAILED");
  return ok ? 0 : 1;
}

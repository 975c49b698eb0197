/* jfa_bwd_host.c - checks and benchmarks Jagged Flash Attention's backward
 * pass on the GPU through the host API (jfa.h).
 *
 *   jfa_bwd_host --cubins DIR --check [--small] [--seed S]
 *       the forward's correctness cases (empty sequences, length 1, ragged
 *       lengths, one 32k sequence, B = 20000, both head dims, causal or
 *       not, broadcast-Q with num_q not a multiple of 64), each in normal
 *       and deterministic mode: the forward makes O and LSE, then dq, dk,
 *       dv (poisoned with NaN first, a guard band after each checked
 *       untouched) are compared with a float64 reference on sampled rows,
 *       computed from the same q, k, v, dO and the forward's O and LSE (the
 *       backward's inputs); deterministic mode runs twice and must give
 *       bitwise the same dq; plus the API's bad-input errors. --ctas N:
 *       plans of N CTAs, so that each walks several items (the small cases
 *       have fewer items than 132 CTAs).
 *   jfa_bwd_host --cubins DIR --check [--small] --blocksparse [--ignore-mask]
 *       block-sparse attention's cases only (as jfa_host's), the reference
 *       with the mask; --ignore-mask: the kernels without it (must fail).
 *   jfa_bwd_host --cubins DIR --bench SUITES_DIR [--only J1,J4] [--reps N] [--ab DIR2] [--window L | --sparse P]
 *       backward TFLOP/s (2.5 x the forward's FLOPs, FlashAttention's
 *       convention) on ../shared/bench/suites: zigzag, no zigzag and
 *       deterministic plans timed interleaved (the median of N launches
 *       each), the forward in the same process, and a training step
 *       (forward + backward); then a sampled check of the suite; --ab: the
 *       backward of DIR2's cubins (other kernel options) timed interleaved
 *       too, and checked on the same inputs; --window L: every
 *       self-attention suite under a causal sliding window of L keys (the
 *       window variant's cubins, its deterministic plan too; FLOPs
 *       the pairs the window keeps); --sparse P: under a random block
 *       mask per sequence keeping P % of the 128 x 128 blocks (the
 *       block-sparse variant's cubins, FLOPs over the pairs it keeps);
 *       --timeline PREFIX (DIR2 a TIMELINE build of jfa_bwd.tile): one
 *       more backward of DIR2's with its clock64() stamps, written as
 *       PREFIX.SUITE.csv (tests/gpu/timeline.py reads them).
 *       One line:
 *         suite shape bwd-ms bwd-TFLOP/s no-zigzag gain det det-cost
 *         fwd-ms step-ms max/avg
 *
 * Exit status 0 only when every check passed. */
#include "jfa_test.h"
#include "jfa_int.h" /* jfa_plan_bwd_timeline (--timeline) */
#include <time.h>

enum { GUARD_ROWS = 2 };
static const uint16_t GUARD = 0x7777;

/* Host and device copies of one problem. Device buffers of the outputs
 * (dq, dk, dv) carry GUARD_ROWS guard rows after the tensor. */
typedef struct Data {
  int64_t total, qrows, orows;
  int32_t *off;
  uint16_t *q, *k, *v, *o, *dout, *dq, *dk, *dv;
  float *lse;
  tile_devptr gq, gk, gv, go, glse, gdout, gdq, gdk, gdv;
  size_t lse_count;
} Data;

/* t: q, k, v, o, lse, dout, dq, dk, dv */
static void tensors(const Case *c, const Data *d, jfa_tensor *t) {
  tensor3(&t[0], d->gq, "bf16", d->qrows, c->H, c->D);
  tensor3(&t[1], d->gk, "bf16", d->total, c->H, c->D);
  tensor3(&t[2], d->gv, "bf16", d->total, c->H, c->D);
  tensor_o(&t[3], d->go, c, d->total);
  tensor_lse(&t[4], d->glse, c, d->total);
  tensor_o(&t[5], d->gdout, c, d->total);
  tensor3(&t[6], d->gdq, "bf16", d->qrows, c->H, c->D);
  tensor3(&t[7], d->gdk, "bf16", d->total, c->H, c->D);
  tensor3(&t[8], d->gdv, "bf16", d->total, c->H, c->D);
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
  size_t g = GUARD_ROWS * row;
  d->q = malloc(nq * 2 + 2), d->dq = malloc((nq + g) * 2);
  d->k = malloc(nkv * 2 + 2), d->dk = malloc((nkv + g) * 2);
  d->v = malloc(nkv * 2 + 2), d->dv = malloc((nkv + g) * 2);
  d->o = malloc(no * 2 + 2), d->dout = malloc(no * 2 + 2);
  d->lse_count = (size_t)c->H * (size_t)d->orows;
  d->lse = malloc(d->lse_count * 4 + 4);
  fill_bf16(d->q, nq);
  fill_bf16(d->k, nkv);
  fill_bf16(d->v, nkv);
  fill_bf16(d->dout, no);
  CHECK(tile_malloc(&d->gq, nq * 2 + 16));
  CHECK(tile_malloc(&d->gk, nkv * 2 + 16));
  CHECK(tile_malloc(&d->gv, nkv * 2 + 16));
  CHECK(tile_malloc(&d->go, no * 2 + 16));
  CHECK(tile_malloc(&d->gdout, no * 2 + 16));
  CHECK(tile_malloc(&d->glse, d->lse_count * 4 + 16));
  CHECK(tile_malloc(&d->gdq, (nq + g) * 2));
  CHECK(tile_malloc(&d->gdk, (nkv + g) * 2));
  CHECK(tile_malloc(&d->gdv, (nkv + g) * 2));
  if (nq) CHECK(tile_memcpy_htod(d->gq, d->q, nq * 2));
  if (nkv) CHECK(tile_memcpy_htod(d->gk, d->k, nkv * 2));
  if (nkv) CHECK(tile_memcpy_htod(d->gv, d->v, nkv * 2));
  if (no) CHECK(tile_memcpy_htod(d->gdout, d->dout, no * 2));
}

/* NaN into the gradients, the guard pattern after them */
static void poison(const Data *d, size_t row) {
  tile_devptr p[3] = {d->gdq, d->gdk, d->gdv};
  size_t n[3] = {(size_t)d->qrows * row, (size_t)d->total * row, (size_t)d->total * row};
  uint32_t gw = (uint32_t)GUARD << 16 | GUARD;
  for (int i = 0; i < 3; i++) {
    CHECK(tile_memset_d8(p[i], 0xff, n[i] * 2));
    CHECK(tile_memset_d32(p[i] + n[i] * 2, gw, GUARD_ROWS * row / 2));
  }
}

static void data_free(Data *d) {
  tile_devptr g[] = {d->gq, d->gk, d->gv, d->go, d->glse, d->gdout, d->gdq, d->gdk, d->gdv};
  for (size_t i = 0; i < sizeof g / sizeof *g; i++) tile_free(g[i]);
  void *h[] = {d->off, d->q, d->k, d->v, d->o, d->dout, d->dq, d->dk, d->dv, d->lse};
  for (size_t i = 0; i < sizeof h / sizeof *h; i++) free(h[i]);
}

static double dotbf(const uint16_t *a, const uint16_t *b, int D) {
  double t = 0;
  for (int x = 0; x < D; x++) t += (double)bf2f(a[x]) * bf2f(b[x]);
  return t;
}

/* The float64 backward from the backward's inputs: q, k, v, dO and the
 * forward's O and LSE. Query row i of sequence b (self; broadcast-Q: dense
 * row i against sequence b): its O / dO row, its LSE, its Delta. */
typedef struct Ref {
  const Case *c;
  const Data *d;
  double scale;
  const BlockMask *bm; /* the case's block mask (none: bm->m NULL) */
} Ref;

static size_t orow_of(const Ref *r, int64_t b, int64_t i) {
  return (size_t)(r->c->num_q > 0 ? b * r->c->num_q + i : r->d->off[b] + i);
}
static double lse_of(const Ref *r, int64_t b, int64_t i, int h) {
  const Case *c = r->c;
  return c->num_q > 0 ? r->d->lse[((size_t)b * c->H + h) * c->num_q + i] : r->d->lse[(size_t)h * r->d->total + r->d->off[b] + i];
}
static double delta_of(const Ref *r, int64_t b, int64_t i, int h) {
  size_t row = (size_t)r->c->H * r->c->D, o = orow_of(r, b, i) * row + (size_t)h * r->c->D;
  return dotbf(r->d->o + o, r->d->dout + o, r->c->D);
}
static const uint16_t *q_row(const Ref *r, int64_t b, int64_t i, int h) {
  size_t row = (size_t)r->c->H * r->c->D;
  int64_t qr = r->c->num_q > 0 ? i : r->d->off[b] + i;
  return r->d->q + (size_t)qr * row + (size_t)h * r->c->D;
}

/* --variant NAME: a variant of the user's own (docs/tutorial-variant.md),
 * its cubin jfa_fwd.dD.NAME.ARCH.cubin beside the others; the float64
 * reference knows "holes" (tests/emu/holes.tile: blocks of 128 skipped where
 * (qm + kn) % 3 == 2), as jfa_host's does */
static const char *custom_variant;

/* Whether query row i sees key j of sequence b (causal, the case's window,
 * its block mask, the custom variant's holes) */
static bool sees(const Ref *r, int64_t b, int64_t i, int64_t j) {
  const Case *c = r->c;
  if (c->causal && j > i) return false;
  if (custom_variant && (i / 128 + j / 128) % 3 == 2) return false;
  if (!mask_sees(c, r->bm, b, i, j)) return false;
  if (c->window && ((c->wl >= 0 && j < i - c->wl) || (c->wr >= 0 && j > i + c->wr))) return false;
  return true;
}

/* dS[i, j] (unscaled: P (dP - Delta), through the variant's score) and
 * P[i, j], key j of sequence b */
static void p_ds(const Ref *r, int64_t b, int64_t i, int64_t j, int h, double delta, double lse, double *p, double *ds) {
  const Case *c = r->c;
  size_t row = (size_t)c->H * c->D;
  const uint16_t *kr = r->d->k + (size_t)(r->d->off[b] + j) * row + (size_t)h * c->D;
  const uint16_t *vr = r->d->v + (size_t)(r->d->off[b] + j) * row + (size_t)h * c->D;
  const uint16_t *dor = r->d->dout + orow_of(r, b, i) * row + (size_t)h * c->D;
  double s = dotbf(q_row(r, b, i, h), kr, c->D) * r->scale, grad = 1.0;
  if (c->softcap > 0) {
    double t = tanh(s / c->softcap);
    s = c->softcap * t, grad = 1.0 - t * t;
  }
  if (c->alibi) s -= (double)alibi_slope(h, c->H) * fabs((double)(i - j));
  *p = exp(s - lse);
  *ds = *p * (dotbf(dor, vr, c->D) - delta) * grad;
}

/* dK and dV of key j of sequence b, head h */
static void check_key(const Ref *r, int64_t b, int64_t j, int h, ErrStat *ek, ErrStat *ev) {
  const Case *c = r->c;
  int D = c->D;
  size_t row = (size_t)c->H * D;
  int64_t L = r->d->off[b + 1] - r->d->off[b], nqr = c->num_q > 0 ? c->num_q : L;
  double dk[128] = {0}, dv[128] = {0};
  for (int64_t i = c->causal ? j : 0; i < nqr; i++) {
    if (!sees(r, b, i, j)) continue;
    double p, ds;
    p_ds(r, b, i, j, h, delta_of(r, b, i, h), lse_of(r, b, i, h), &p, &ds);
    const uint16_t *qr = q_row(r, b, i, h), *dor = r->d->dout + orow_of(r, b, i) * row + (size_t)h * D;
    for (int x = 0; x < D; x++) {
      dv[x] += p * bf2f(dor[x]);
      dk[x] += ds * r->scale * bf2f(qr[x]);
    }
  }
  size_t kr = (size_t)(r->d->off[b] + j) * row + (size_t)h * D;
  for (int x = 0; x < D; x++) {
    err_add(ek, bf2f(r->d->dk[kr + x]), dk[x]);
    err_add(ev, bf2f(r->d->dv[kr + x]), dv[x]);
  }
}

/* dQ of query row i (of sequence b in self-attention; of the dense Q, summed
 * over every sequence, in broadcast-Q), head h */
static void check_query(const Ref *r, int64_t b, int64_t i, int h, ErrStat *eq) {
  const Case *c = r->c;
  int D = c->D;
  size_t row = (size_t)c->H * D;
  double dq[128] = {0};
  int64_t b0 = c->num_q > 0 ? 0 : b, b1 = c->num_q > 0 ? c->B : b + 1;
  for (int64_t s = b0; s < b1; s++) {
    int64_t L = r->d->off[s + 1] - r->d->off[s], nk = c->causal ? i + 1 : L;
    if (nk == 0) continue;
    double delta = delta_of(r, s, i, h), lse = lse_of(r, s, i, h);
    for (int64_t j = 0; j < nk; j++) {
      if (!sees(r, s, i, j)) continue;
      double p, ds;
      p_ds(r, s, i, j, h, delta, lse, &p, &ds);
      const uint16_t *kr = r->d->k + (size_t)(r->d->off[s] + j) * row + (size_t)h * D;
      for (int x = 0; x < D; x++) dq[x] += ds * r->scale * bf2f(kr[x]);
    }
  }
  int64_t qr = c->num_q > 0 ? i : r->d->off[b] + i;
  for (int x = 0; x < D; x++) err_add(eq, bf2f(r->d->dq[(size_t)qr * row + (size_t)h * D + x]), dq[x]);
}

static const BlockMask nomask; /* the cases without one */

static int num_ctas; /* --ctas N: plans with N CTAs (several items each: the hand-offs between items) */
static int cta_pair; /* --pair: jfa_params.cta_pair at head dim 128 (Blackwell: the pair's forward and backward) */

static jfa_params params_of(const Case *c, const Data *d, const BlockMask *bm, int det) {
  jfa_params p = {0};
  p.num_ctas = num_ctas;
  p.batch = c->B;
  p.cu_seqlens = d->off;
  p.heads = c->H;
  p.head_dim = c->D;
  p.causal = c->causal;
  p.num_q = c->num_q;
  p.passes = JFA_FWD | JFA_BWD;
  p.deterministic = det;
  p.window = c->window, p.window_left = c->wl, p.window_right = c->wr;
  p.softcap = c->softcap;
  static float slopes[64];
  for (int h = 0; h < c->H && h < 64; h++) slopes[h] = alibi_slope(h, c->H);
  p.alibi_slopes = c->alibi ? slopes : NULL;
  mask_params(c, bm, &p);
  p.variant = custom_variant;
  p.cta_pair = cta_pair && c->D == 128 && !p.block_mask;
  return p;
}

/* gradients back to the host; counts NaN (unwritten) and guard changes */
static void fetch_grads(const Case *c, Data *d, long *unwritten, long *guard) {
  size_t row = (size_t)c->H * c->D, g = GUARD_ROWS * row;
  size_t n[3] = {(size_t)d->qrows * row, (size_t)d->total * row, (size_t)d->total * row};
  uint16_t *h[3] = {d->dq, d->dk, d->dv};
  tile_devptr dv[3] = {d->gdq, d->gdk, d->gdv};
  for (int i = 0; i < 3; i++) {
    CHECK(tile_memcpy_dtoh(h[i], dv[i], (n[i] + g) * 2));
    for (size_t e = 0; e < n[i]; e++) *unwritten += bf2f(h[i][e]) != bf2f(h[i][e]);
    for (size_t e = 0; e < g; e++) *guard += h[i][n[i] + e] != GUARD;
  }
}

/* Run the case (forward, then backward) and check the gradients; det: in
 * deterministic mode, twice, dq bitwise equal. */
static const char *case_filter; /* --case SUBSTR: only the cases whose name has it */

static bool run_check(jfa_lib *lib, const Case *c, int quick, int det) {
  if (case_filter && !strstr(c->name, case_filter)) return true;
  Data d;
  data_make(c, &d);
  BlockMask bm;
  mask_make(c, &bm);
  size_t row = (size_t)c->H * c->D;
  jfa_params p = params_of(c, &d, &bm, det);
  jfa_plan *plan;
  CHECK(plan_for(lib, &p, &plan));
  jfa_tensor t[9];
  tensors(c, &d, t);
  CHECK(jfa_plan_forward(plan, &t[0], &t[1], &t[2], &t[3], &t[4], NULL));
  CHECK(tile_synchronize());
  size_t no = (size_t)d.orows * row;
  if (no) CHECK(tile_memcpy_dtoh(d.o, d.go, no * 2));
  CHECK(tile_memcpy_dtoh(d.lse, d.glse, d.lse_count * 4 + 4));
  if (!det) /* the checked call is the plan's second: it must not build on what the first left in the workspace
               (the f32 dQ accumulator's sums, the item counter DYN's CTAs took their items by); deterministic
               mode's repeat below checks the same */
    CHECK(jfa_plan_backward(plan, &t[5], &t[0], &t[1], &t[2], &t[3], &t[4], &t[6], &t[7], &t[8], NULL));
  poison(&d, row);
  CHECK(jfa_plan_backward(plan, &t[5], &t[0], &t[1], &t[2], &t[3], &t[4], &t[6], &t[7], &t[8], NULL));
  CHECK(tile_synchronize());
  long unwritten = 0, guard = 0, differ = 0;
  fetch_grads(c, &d, &unwritten, &guard);
  char dn[160]; /* --dump (tests/gpu/emu_xval.sh) */
  const char *gname[3] = {"dq", "dk", "dv"};
  const uint16_t *gdata[3] = {d.dq, d.dk, d.dv};
  size_t gcount[3] = {(size_t)d.qrows * row, (size_t)d.total * row, (size_t)d.total * row};
  for (int i = 0; i < 3; i++) {
    snprintf(dn, sizeof dn, "%s%s D=%d H=%d.%s", c->name, det ? " det" : "", c->D, c->H, gname[i]);
    host_dump(dn, "bf16", gdata[i], gcount[i]);
  }
  if (det) { /* again: the same bits */
    size_t nq = (size_t)d.qrows * row;
    uint16_t *first = malloc(nq * 2 + 2);
    memcpy(first, d.dq, nq * 2);
    poison(&d, row);
    CHECK(jfa_plan_backward(plan, &t[5], &t[0], &t[1], &t[2], &t[3], &t[4], &t[6], &t[7], &t[8], NULL));
    CHECK(tile_synchronize());
    fetch_grads(c, &d, &unwritten, &guard);
    for (size_t e = 0; e < nq; e++) differ += first[e] != d.dq[e];
    free(first);
  }
  /* the reference on sampled keys and query rows */
  Ref r = {c, &d, 1.0 / sqrt((double)c->D), &bm};
  ErrStat ek = {0}, ev = {0}, eq = {0};
  long checked = 0;
  int64_t nseq = quick ? 6 : 24, edge = quick ? 8 : 24, nrand = quick ? 6 : 24;
  int64_t seq_step = c->B > nseq ? c->B / nseq : 1;
  double total_keys = (double)d.total;
  for (int64_t b = 0; b < c->B; b += seq_step) {
    int64_t L = d.off[b + 1] - d.off[b], nqr = c->num_q > 0 ? c->num_q : L;
    double per_key = (double)nqr * c->D, per_q = (c->num_q > 0 ? total_keys : (double)L) * c->D;
    for (int h = 0; h < c->H; h += (c->H > 2 ? c->H - 1 : 1)) {
      /* every row when cheap; else the first and last `edge` and some random ones */
      int allk = per_key * L < (quick ? 4e6 : 4e7), allq = per_q * nqr < (quick ? 4e6 : 4e7);
      for (int pass = 0; pass < 2; pass++) {
        int64_t n = pass ? nqr : L;
        int all = pass ? allq : allk;
        if (c->num_q > 0 && pass && b != 0) continue; /* dQ is one dense tensor: check it once */
        for (int64_t s = 0; s < (all ? n : 2 * edge + nrand) && n > 0; s++, checked++) {
          int64_t i = all ? s : s < edge ? s : s < 2 * edge ? n - 1 - (s - edge) : rng_int(0, n - 1);
          if (i < 0 || i >= n) continue;
          if (pass) check_query(&r, b, i, h, &eq);
          else check_key(&r, b, i, h, &ek, &ev);
        }
      }
    }
  }
  int64_t nitems, maxc, totc;
  int ctas;
  jfa_plan_bwd_stats(plan, &nitems, &maxc, &totc, &ctas);
  jfa_plan_destroy(plan);
  double rq = err_rel(&eq), rk = err_rel(&ek), rv = err_rel(&ev);
  long nonfinite = eq.bad + ek.bad + ev.bad;
  bool ok = nonfinite == 0 && rq <= 1e-2 && rk <= 1e-2 && rv <= 1e-2 && !unwritten && !guard && !differ;
  char var[48] = "";
  if (c->window) snprintf(var, sizeof var, " window(%d,%d)", c->wl, c->wr);
  else if (c->softcap > 0) snprintf(var, sizeof var, " softcap %g", c->softcap);
  else if (c->alibi) snprintf(var, sizeof var, " alibi");
  else if (custom_variant) snprintf(var, sizeof var, " %s", custom_variant);
  else if (c->mask_mode)
    snprintf(var, sizeof var, " blocksparse %d%% %s%s", c->mask_pct,
             c->mask_mode == JFA_MASK_PER_BATCH ? "per-batch" : "per-seq", ignore_mask ? " IGNORED" : "");
  printf("%-28s%s B=%-6lld rows=%-7lld D=%-3d H=%d %s%s%s items=%-6lld checked=%-6ld dQ=%.2e dK=%.2e dV=%.2e "
         "unwritten=%ld guard=%ld nonfinite=%ld%s %s\n",
         c->name, det ? " det" : "", (long long)c->B, (long long)d.total, c->D, c->H, c->causal ? "causal" : "",
         c->num_q > 0 ? "bcast" : "", var, (long long)nitems, checked, rq, rk, rv, unwritten, guard, nonfinite,
         det ? (differ ? " RUN-TO-RUN-DIFFERS" : " bitwise-repeatable") : "", ok ? "OK" : "FAIL");
  data_free(&d);
  mask_free(&bm);
  return ok;
}

/* Block-sparse attention's backward (jfa_params.block_mask): random masks
 * of half the blocks, none and all, per batch and per sequence, causal and
 * not, sequences shorter than a block and empty, both head dims (make test
 * runs the small set on the emulator). */
static int det_variants;    /* the variants' deterministic cubins (NAME.det) are there: their checks run */
static int no_det_variants; /* --no-det-variants: skip them (a second schedule of make test's) */

static bool check_blocksparse(jfa_lib *lib, int small) {
  static const int64_t mixed[] = {0, 1, 127, 128, 129, 0, 300, 1, 64, 65, 1000, 0, 159, 160, 161, 319, 321, 480};
  static const int64_t b777[] = {777}, b4500[] = {4300, 4500};
  enum { PB = JFA_MASK_PER_BATCH, PS = JFA_MASK_PER_SEQUENCE };
  bool ok = true;
  for (int D = 64; D <= 128; D += 64) {
    Case cs[] = {
        {"bs 50% mixed", D, 2, 0, 0, 18, lens_of(18, mixed), .mask_mode = PS, .mask_pct = 50},
        {"bs 50% causal mixed", D, 2, 1, 0, 18, lens_of(18, mixed), .mask_mode = PB, .mask_pct = 50},
        {"bs none causal mixed", D, 2, 1, 0, 18, lens_of(18, mixed), .mask_mode = PS, .mask_pct = 0},
        {"bs all mixed", D, 2, 0, 0, 18, lens_of(18, mixed), .mask_mode = PB, .mask_pct = 100},
        {"bs 50% causal B=1 len=777", D, 2, 1, 0, 1, lens_of(1, b777), .mask_mode = PS, .mask_pct = 50},
        {"bs all causal mixed", D, 2, 1, 0, 18, lens_of(18, mixed), .mask_mode = PS, .mask_pct = 100},
        {"bs none mixed", D, 2, 0, 0, 18, lens_of(18, mixed), .mask_mode = PB, .mask_pct = 0},
        {"bs 30% random B=40", D, 3, 0, 0, 40, lens_random(40, 0, 2000), .mask_mode = PS, .mask_pct = 30},
        {"bs 70% causal random B=40", D, 2, 1, 0, 40, lens_random(40, 0, 2000), .mask_mode = PB, .mask_pct = 70},
        {"bs 50% B=20000 len 0..300", D, 2, 1, 0, 20000, lens_random(20000, 0, 300), .mask_mode = PS, .mask_pct = 50},
        /* more than 32 blocks: the kernels read the mask a word of 32 blocks at a time */
        {"bs 30% causal B=2 len=4300,4500", D, 1, 1, 0, 2, lens_of(2, b4500), .mask_mode = PB, .mask_pct = 30},
    };
    size_t n = sizeof cs / sizeof cs[0];
    for (size_t i = 0; i < n; i++) {
      /* (the last at both head dims: at 128 the causal kernel's dQ owners are found a mask word at a time) */
      if (!small || i < 5 || i == n - 1) ok &= run_check(lib, &cs[i], small, 0);
      /* deterministic: the blocks a mask skips pass their turn on (the 50% masks) */
      if ((!small || i < 2) && det_variants) ok &= run_check(lib, &cs[i], small, 1);
      free(cs[i].len);
    }
  }
  return ok;
}

/* ---- bad input: errors, no launch ---------------------------------------- */
static bool check_errors(jfa_lib *lib) {
  bool ok = true;
  int32_t off[4] = {0, 100, 150, 200};
  Case c = {"err", 128, 2, 0, 0, 3, NULL};
  Data d = {0};
  d.off = off;
  d.total = 200, d.qrows = 200, d.orows = 200;
  d.gq = d.gk = d.gv = d.go = d.glse = d.gdout = 0x100000;
  d.gdq = 0x200000, d.gdk = 0x300000, d.gdv = 0x400000;
  jfa_params p = params_of(&c, &d, &nomask, 0);
  jfa_plan *plan;
  p.passes = JFA_FWD;
  CHECK(jfa_plan_create(lib, &p, &plan));
  jfa_tensor t[9];
  tensors(&c, &d, t);
  tile_status st = jfa_plan_backward(plan, &t[5], &t[0], &t[1], &t[2], &t[3], &t[4], &t[6], &t[7], &t[8], NULL);
  bool good = st == TILE_ERR_INVALID && strstr(tile_last_error(), "without the backward");
  printf("error: %-28s -> %s: %s %s\n", "forward-only plan", tile_status_name(st), tile_last_error(), good ? "OK" : "FAIL");
  ok &= good;
  jfa_plan_destroy(plan);
  p.passes = 4;
  st = jfa_plan_create(lib, &p, &plan);
  good = st == TILE_ERR_INVALID && strstr(tile_last_error(), "passes");
  printf("error: %-28s -> %s: %s %s\n", "passes 4", tile_status_name(st), tile_last_error(), good ? "OK" : "FAIL");
  ok &= good;
  p.passes = JFA_BWD;
  CHECK(jfa_plan_create(lib, &p, &plan));
  st = jfa_plan_forward(plan, &t[0], &t[1], &t[2], &t[3], &t[4], NULL);
  good = st == TILE_ERR_INVALID && strstr(tile_last_error(), "backward pass only");
  printf("error: %-28s -> %s: %s %s\n", "backward-only plan forward", tile_status_name(st), tile_last_error(),
         good ? "OK" : "FAIL");
  ok &= good;
  struct {
    const char *what, *want;
    int field;
  } tb[] = {{"dout as f32", "dout must be bf16", 0},     {"dq misaligned", "not 16-byte aligned", 1},
            {"dk wrong rows", "dk has shape", 2},         {"dv row stride 1030", "16 bytes apart", 3},
            {"dq is q", "overlap in memory", 4},          {"dv is dk", "overlap in memory", 5},
            {"dout heads strided", "contiguous", 6},      {"lse wrong rank", "lse must have 2", 7}};
  for (size_t i = 0; i < sizeof tb / sizeof tb[0]; i++) {
    tensors(&c, &d, t);
    switch (tb[i].field) {
    case 0: t[5].dtype = "f32"; break;
    case 1: t[6].data += 8; break;
    case 2: t[7].shape[0] = 199; break;
    case 3: t[8].stride[0] = 1030; break;
    case 4: t[6].data = t[0].data; break;
    case 5: t[8].data = t[7].data; break;
    case 6: t[5].stride[1] = 256; break;
    case 7: t[4].rank = 3; break;
    }
    st = jfa_plan_backward(plan, &t[5], &t[0], &t[1], &t[2], &t[3], &t[4], &t[6], &t[7], &t[8], NULL);
    good = st == TILE_ERR_INVALID && strstr(tile_last_error(), tb[i].want);
    printf("error: %-28s -> %s: %s %s\n", tb[i].what, tile_status_name(st), tile_last_error(), good ? "OK" : "FAIL");
    ok &= good;
  }
  jfa_plan_destroy(plan);
  return ok;
}

/* ---- benchmark -------------------------------------------------------------- */
static void die_plan(tile_status st, const char *who) {
  if (st == TILE_OK) return;
  fprintf(stderr, "jfa_bwd_host: %s failed: %s: %s\n", who, tile_status_name(st), tile_last_error());
  printf("%s FAILED\n", who);
  exit(2);
}

/* kind 0: backward; 1: forward; 2: forward + backward (a training step) */
static void run_plan(jfa_plan *pl, const jfa_tensor *t, int kind, const char *who) {
  if (kind >= 1) die_plan(jfa_plan_forward(pl, &t[0], &t[1], &t[2], &t[3], &t[4], NULL), who);
  if (kind != 1) die_plan(jfa_plan_backward(pl, &t[5], &t[0], &t[1], &t[2], &t[3], &t[4], &t[6], &t[7], &t[8], NULL), who);
}

/* medians of n (plan, kind) pairs timed round robin after 3 warm-up rounds */
static void time_many(jfa_plan **plans, const int *kind, const char *const *who, int n, const jfa_tensor *t, int reps,
                      double *med) {
  tile_event e0, e1;
  CHECK(tile_event_create(&e0));
  CHECK(tile_event_create(&e1));
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < n; k++) {
      run_plan(plans[k], t, kind[k], who[k]);
      die_plan(tile_synchronize(), who[k]);
    }
  float *ms = malloc((size_t)reps * (size_t)n * sizeof *ms);
  for (int i = 0; i < reps; i++)
    for (int k = 0; k < n; k++) {
      CHECK(tile_event_record(e0, NULL));
      run_plan(plans[k], t, kind[k], who[k]);
      CHECK(tile_event_record(e1, NULL));
      die_plan(tile_event_elapsed_ms(&ms[(size_t)k * reps + i], e0, e1), who[k]);
    }
  for (int k = 0; k < n; k++) med[k] = median_ms(ms + (size_t)k * reps, reps);
  free(ms);
  tile_event_destroy(e0);
  tile_event_destroy(e1);
}

/* ab: another folder of cubins (the same kernels built with other options),
 * its backward timed interleaved with the default's and checked on the
 * suite's inputs; NULL: none */
typedef struct BenchCtx {
  jfa_lib *lib, *ab;
  const char *ab_name;
  int reps;
  bool ok;
} BenchCtx;

static int bench_window; /* --window L (with --bench): every self-attention suite under a causal window of L keys */
static int bench_sparse = -1; /* --sparse P (with --bench): every self-attention suite under a random block mask */
static const char *bench_timeline; /* --timeline PREFIX (with --ab DIR, a TIMELINE build): PREFIX.SUITE.csv */

/* --timeline: one more backward of the --ab plan (a TIMELINE build of
 * jfa_bwd.tile) with its stamps on, written as PREFIX.SUITE.csv: a line a
 * work item of each CTA's first TL_ITEMS (cta, t, then the record's 8
 * fields: clock64() as the item begins, K and V in, first step done, last
 * step done, dK and dV out; steps, item, the producer's K/V issue; at
 * head dim 128 the last MMAs done, dK and dV staged, the copies read). */
enum { TL_ITEMS = 512, TL_STEPS = 8192 };
static bool write_timeline(jfa_plan *plan, const Case *c, jfa_tensor *t, int ctas) {
  size_t ni = (size_t)ctas * TL_ITEMS * 16, n = ni + (size_t)ctas * TL_STEPS * 8; /* the items', the steps' */
  int64_t *h = calloc(n, sizeof *h); /* (the record: jfa_bwd.tile, TIMELINE) */
  tile_devptr d = 0;
  bool ok = h && tile_malloc(&d, n * 8) == TILE_OK && tile_memset_d32_async(d, 0, n * 2, NULL) == TILE_OK;
  if (ok) {
    jfa_plan_bwd_timeline(plan, d);
    struct timespec t0, t1; /* the whole backward (pre, main, post), host clock: the CTAs' spans beside it */
    ok = tile_synchronize() == TILE_OK;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ok = ok && jfa_plan_backward(plan, &t[5], &t[0], &t[1], &t[2], &t[3], &t[4], &t[6], &t[7], &t[8], NULL) == TILE_OK &&
         tile_synchronize() == TILE_OK;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ok = ok && tile_memcpy_dtoh(h, d, n * 8) == TILE_OK;
    jfa_plan_bwd_timeline(plan, 0);
    if (ok)
      printf("timeline: %s backward %.1f us (host clock, launch to synchronize)\n", c->name,
             (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) * 1e-3);
  }
  char path[512];
  snprintf(path, sizeof path, "%s.%s.csv", bench_timeline, c->name);
  FILE *f = ok ? fopen(path, "w") : NULL;
  if (f) {
    fprintf(f, "cta,t,begin,kv_in,first_done,last_done,end,steps,item,kv_issue,mmas_done,staged,copied\n");
    for (int a = 0; a < ctas; a++)
      for (int i = 0; i < TL_ITEMS; i++) {
        const int64_t *r = h + ((size_t)a * TL_ITEMS + i) * 16;
        if (r[4] == 0) continue; /* no such item */
        fprintf(f, "%d,%d", a, i);
        for (int k = 0; k < 11; k++) fprintf(f, ",%lld", (long long)r[k]);
        fprintf(f, "\n");
      }
    fclose(f);
    printf("timeline: %s\n", path);
    snprintf(path, sizeof path, "%s.%s.steps.csv", bench_timeline, c->name); /* the steps' waits */
    if ((f = fopen(path, "w"))) {
      fprintf(f, "cta,qi,q_full,meet,dq_empty,red_wait,red_work,acc_wait\n");
      for (int a = 0; a < ctas; a++)
        for (int i = 0; i < TL_STEPS; i++) {
          const int64_t *r = h + ni + ((size_t)a * TL_STEPS + i) * 8;
          if (!r[0] && !r[1] && !r[2] && !r[3] && !r[4] && !r[5]) continue; /* no such step */
          fprintf(f, "%d,%d,%lld,%lld,%lld,%lld,%lld,%lld\n", a, i, (long long)r[0], (long long)r[1], (long long)r[2],
                  (long long)r[3], (long long)r[4], (long long)r[5]);
        }
      fclose(f);
      printf("timeline: %s\n", path);
    }
  } else {
    printf("timeline: FAILED (%s)\n", ok ? path : tile_last_error());
  }
  if (d) tile_free(d);
  free(h);
  return f != NULL;
}

/* The forward's FLOPs over the (query, key) pairs a block mask keeps (and
 * the causal mask), FlashAttention's convention. */
static double mask_flops(const Case *c, const BlockMask *bm) {
  double f = 0;
  for (int64_t b = 0; b < c->B; b++) {
    int64_t L = c->len[b], nb = mask_nb(L);
    for (int64_t qm = 0; qm < nb; qm++)
      for (int64_t kn = 0; kn < nb; kn++) {
        if (!mask_sees(c, bm, b, qm * JFA_MASK_BLOCK, kn * JFA_MASK_BLOCK)) continue;
        for (int64_t i = qm * JFA_MASK_BLOCK; i < L && i < (qm + 1) * JFA_MASK_BLOCK; i++) {
          int64_t hi = (kn + 1) * JFA_MASK_BLOCK < L ? (kn + 1) * JFA_MASK_BLOCK : L;
          if (c->causal && hi > i + 1) hi = i + 1;
          if (hi > kn * JFA_MASK_BLOCK) f += (double)(hi - kn * JFA_MASK_BLOCK);
        }
      }
  }
  return 4.0 * c->H * c->D * f;
}

static void bench_suite(const Case *cs, void *ud) {
  BenchCtx *x = ud;
  jfa_lib *lib = x->lib, *ab = x->ab;
  const char *ab_name = x->ab_name, *name = cs->name;
  int reps = x->reps;
  bool ok = true;
  Case c = *cs;
  if (bench_window > 0 && c.num_q == 0) /* --window L: the suite under a causal window of L keys */
    c.window = 1, c.wl = bench_window, c.wr = 0, c.causal = 0;
  if (bench_sparse >= 0 && c.num_q == 0) /* --sparse P: a random per-sequence block mask, P % of the blocks */
    c.mask_mode = JFA_MASK_PER_SEQUENCE, c.mask_pct = bench_sparse;
  int64_t B = c.B;
  Data d;
  data_make(&c, &d);
  jfa_tensor t[9];
  tensors(&c, &d, t);
  BlockMask bm;
  mask_make(&c, &bm);
  jfa_params p = params_of(&c, &d, &bm, 0);
  jfa_plan *plans[4] = {NULL};
  CHECK(jfa_plan_create(lib, &p, &plans[0]));
  p.no_zigzag = 1;
  CHECK(jfa_plan_create(lib, &p, &plans[1]));
  p.no_zigzag = 0, p.deterministic = 1;
  if (!c.mask_mode) /* (--sparse: not timed, its column is the default's) */
    CHECK(jfa_plan_create(lib, &p, &plans[2]));
  p.deterministic = 0;
  if (ab) CHECK(jfa_plan_create(ab, &p, &plans[3]));
  jfa_plan *pl[6] = {plans[0], plans[1], plans[2] ? plans[2] : plans[0], plans[0], plans[0], plans[3]};
  int kind[6] = {0, 0, 0, 1, 2, 0};
  const char *who[6] = {"backward", "backward no-zigzag", "backward deterministic", "forward", "step", "ab backward"};
  /* O and LSE for the backward's inputs */
  die_plan(jfa_plan_forward(plans[0], &t[0], &t[1], &t[2], &t[3], &t[4], NULL), "forward");
  double med[6];
  time_many(pl, kind, who, ab ? 6 : 5, t, reps, med);
  double flops = c.mask_mode ? mask_flops(&c, &bm) : fwd_flops(&c), bflops = 2.5 * flops;
  int64_t nitems, maxc, totc;
  int ctas;
  jfa_plan_bwd_stats(plans[0], &nitems, &maxc, &totc, &ctas);
  char shape[64];
  char win[24] = "";
  if (c.window) snprintf(win, sizeof win, " window %d", c.wl);
  if (c.mask_mode) snprintf(win, sizeof win, " blocks %d%%", c.mask_pct);
  snprintf(shape, sizeof shape, "B=%lld H=%d D=%d%s%s%s", (long long)B, c.H, c.D, c.causal ? " causal" : "",
           c.num_q ? " bcast" : "", win);
  printf("%-5s %-28s %9.4f %8.1f %9.1f %6.3fx %8.1f %7.3fx %9.4f %9.4f %8.3f\n", name, shape, med[0],
         bflops / med[0] / 1e9, bflops / med[1] / 1e9, med[1] / med[0], bflops / med[2] / 1e9, med[2] / med[0],
         med[3], med[4], (double)maxc * ctas / (double)(totc ? totc : 1));
  printf("      fwd %.1f TFLOP/s, step (fwd + bwd) %.1f TFLOP/s\n", flops / med[3] / 1e9,
         3.5 * flops / med[4] / 1e9);
  if (ab) {
    int ab_ctas = 0; /* the variant's main kernel's CTAs (a pair kernel's: as many pairs as the device holds) */
    jfa_plan_bwd_stats(plans[3], NULL, NULL, NULL, &ab_ctas);
    printf("ab %-5s %-20s bwd %9.4f ms %8.1f TFLOP/s %7.3fx (default ms / variant ms) %d CTAs\n", name, ab_name,
           med[5], bflops / med[5] / 1e9, med[0] / med[5], ab_ctas);
    if (bench_timeline) ok &= write_timeline(plans[3], &c, t, ab_ctas);
  }
  fflush(stdout);
  for (int k = 0; k < 4; k++) jfa_plan_destroy(plans[k]);
  data_free(&d);
  mask_free(&bm);
  uint64_t rng0 = rng_state;
  ok &= run_check(lib, &c, 1, 0);
  if (ab) { /* the variant on the same inputs and rows */
    uint64_t rng1 = rng_state;
    rng_state = rng0;
    char vname[64];
    snprintf(vname, sizeof vname, "%s ab:%s", name, ab_name);
    Case cv = c;
    cv.name = vname;
    bool vok = run_check(ab, &cv, 1, 0);
    if (!vok) printf("ab %-5s %-20s FAILED the sampled check\n", name, ab_name);
    ok &= vok;
    rng_state = rng1;
  }
  x->ok &= ok;
}

static bool bench_suites(jfa_lib *lib, const char *dir, const char *only, int reps, jfa_lib *ab, const char *ab_name) {
  printf("%-5s %-28s %9s %8s %9s %7s %8s %8s %9s %9s %8s\n", "suite", "shape", "bwd-ms", "TFLOP/s", "no-zigzag",
         "gain", "det", "det-cost", "fwd-ms", "step-ms", "max/avg");
  BenchCtx x = {lib, ab, ab_name, reps, true};
  return each_suite(dir, only, bench_suite, &x) && x.ok;
}

int main(int argc, char **argv) {
  const char *cubins = NULL, *suites = NULL, *only = NULL, *abdir = NULL;
  int check = 0, small = 0, reps = 20, det_only = 0, blocksparse_only = 0;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--cubins") && i + 1 < argc) cubins = argv[++i];
    else if (!strcmp(argv[i], "--check")) check = 1;
    else if (!strcmp(argv[i], "--small")) small = 1;
    else if (!strcmp(argv[i], "--update")) plan_by_update = 1; /* plans made for another batch, then updated */
    else if (!strcmp(argv[i], "--det")) det_only = 1; /* only the deterministic mode */
    else if (!strcmp(argv[i], "--no-det-variants")) no_det_variants = 1; /* the variants not in deterministic mode */
    else if (!strcmp(argv[i], "--blocksparse")) blocksparse_only = 1; /* only the block-sparse cases */
    else if (!strcmp(argv[i], "--ignore-mask")) ignore_mask = 1;      /* jfa_test.h: the checks must fail */
    else if (!strcmp(argv[i], "--case") && i + 1 < argc) case_filter = argv[++i];
    else if (!strcmp(argv[i], "--bench") && i + 1 < argc) suites = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--dump") && i + 1 < argc) host_dump_open(argv[++i]); /* the gradients (host.h) */
    else if (!strcmp(argv[i], "--ab") && i + 1 < argc) abdir = argv[++i];
    else if (!strcmp(argv[i], "--ctas") && i + 1 < argc) num_ctas = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--window") && i + 1 < argc) bench_window = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--sparse") && i + 1 < argc) bench_sparse = atoi(argv[++i]) < 0 ? -2 : atoi(argv[i]);
    else if (!strcmp(argv[i], "--timeline") && i + 1 < argc) bench_timeline = argv[++i];
    else if (!strcmp(argv[i], "--pair")) cta_pair = 1; /* the CTA pair's passes, head dim 128 only */
    else if (!strcmp(argv[i], "--variant") && i + 1 < argc) custom_variant = argv[++i];
    else {
      fprintf(stderr,
              "usage: %s --cubins DIR (--check [--small] [--update] [--case SUBSTR] [--det | --blocksparse [--ignore-mask]]\n"
              "       | --bench SUITES_DIR [--only J1,J2] [--reps N] [--ab DIR [--timeline PREFIX]] [--window L | --sparse P])\n"
              "       [--seed S] [--ctas N] [--no-det-variants] [--pair] [--variant holes (with --check)]\n",
              argv[0]);
      return 2;
    }
  }
  if (!cubins || (!check && !suites)) {
    fprintf(stderr, "%s: give --cubins DIR and --check or --bench DIR\n", argv[0]);
    return 2;
  }
  if (bench_window < 0 || (bench_sparse != -1 && (bench_sparse < 0 || bench_sparse > 100)) ||
      (bench_window > 0 && bench_sparse >= 0)) {
    fprintf(stderr, "%s: --window takes a number of keys (> 0), --sparse a percentage (0 to 100), and not both\n",
            argv[0]);
    return 2;
  }
  if (bench_timeline && (!suites || !abdir)) {
    fprintf(stderr, "%s: --timeline PREFIX goes with --bench and --ab DIR, DIR a TIMELINE build of jfa_bwd.tile "
                    "(make jfa-bwd-ab JFA_BWD_AB=tl:TIMELINE=true)\n", argv[0]);
    return 2;
  }
  if (custom_variant && (strcmp(custom_variant, "holes") || !check || blocksparse_only || cta_pair)) {
    fprintf(stderr, "%s: --variant: the float64 reference knows \"holes\" (tests/emu/holes.tile), with --check "
                    "(not --blocksparse, --pair)\n", argv[0]);
    return 2;
  }
  if (reps < 1) reps = 1;
  setvbuf(stdout, NULL, _IOLBF, 0);
  rng_state = 0x9E3779B97F4A7C15ull ^ (seed * 0xBF58476D1CE4E5B9ull);
  CHECK(tile_init(0));
  jfa_lib *lib;
  CHECK(jfa_lib_open(cubins, &lib));
  bool ok = true;
  if (check) printf("target: %s\n", jfa_lib_arch(lib)); /* whose cubins run (tests/emu/run.sh greps it) */
  /* the variants' checks run where their cubins are (not in A/B folders) */
  char vpath[1200];
  snprintf(vpath, sizeof vpath, "%s/jfa_fwd.d64.window.%s.cubin", cubins, jfa_lib_arch(lib));
  FILE *vf = fopen(vpath, "rb");
  int variants = vf != NULL;
  if (vf) fclose(vf);
  if (check && !variants) printf("(no variant cubins in %s: the variants' checks are skipped)\n", cubins);
  snprintf(vpath, sizeof vpath, "%s/jfa_fwd.d64.window.det.%s.cubin", cubins, jfa_lib_arch(lib));
  if ((vf = fopen(vpath, "rb"))) det_variants = !no_det_variants, fclose(vf);
  if (check && variants && !det_variants)
    printf("(no deterministic variant cubins in %s: the variants' deterministic checks are skipped)\n", cubins);
  if (check && blocksparse_only) {
    ok &= check_blocksparse(lib, small);
    check = 0;
  }
  if (check && custom_variant) { /* the variant's own cases: sequences of 0 to 1000 and 4500 rows, not causal */
    static const int64_t mix[] = {0, 1, 127, 128, 129, 0, 300, 1, 64, 65, 1000, 0, 159, 160, 161, 319, 321, 480};
    static const int64_t b4500[] = {4500};
    for (int D = 64; D <= 128; D += 64) {
      Case cs[] = {{"variant mixed", D, 2, 0, 0, 18, lens_of(18, mix)},
                   {"variant B=1 len=4500", D, 1, 0, 0, 1, lens_of(1, b4500)}};
      for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        if (!small || i == 0 || D == 64) ok &= run_check(lib, &cs[i], small, 0);
        free(cs[i].len);
      }
    }
    check = 0;
  }
  if (check) {
    ok &= check_errors(lib);
    static const int64_t mixed[] = {0, 1, 127, 128, 129, 0, 300, 1, 64, 65, 1000, 0, 159, 160, 161, 319, 321, 480};
    static const int64_t one32k[] = {32768};
    static const int64_t b1[] = {777};
    static const int64_t allempty[] = {0, 0, 0};
    for (int D = cta_pair ? 128 : 64; D <= 128; D += 64) {
      for (int det = det_only; det <= 1; det++) {
        if (small) {
          Case cs[] = {
              {"mixed (empty, 1, 127..1000)", D, 2, 1, 0, 18, lens_of(18, mixed)},
              {"self mixed (no causal mask)", D, 2, 0, 0, 18, lens_of(18, mixed)},
              {"bcast nq=70", D, 2, 0, 70, 4, lens_random(4, 0, 300)},
              /* every sequence one item a head at D = 64 (GROUP): no jfa_bwd_post at all (FUSE_POST) */
              {"short (0..512) causal", D, 2, 1, 0, 9, lens_random(9, 0, 512)},
              {"window (100, 20) mixed", D, 2, 0, 0, 18, lens_of(18, mixed), 1, 100, 20, 0},
              {"softcap 2 causal mixed", D, 2, 1, 0, 18, lens_of(18, mixed), 0, 0, 0, 2.0f},
              {"alibi mixed", D, 4, 0, 0, 18, lens_of(18, mixed), 0, 0, 0, 0, 1},
          };
          for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            bool var = cs[i].window || cs[i].softcap > 0 || cs[i].alibi;
            if (!(var && !(det ? det_variants : variants))) ok &= run_check(lib, &cs[i], 1, det);
            free(cs[i].len);
          }
          if (cta_pair) { /* the pair's own: no mask; a 256-key item whose odd half is past the end;
                                     broadcast-Q with query blocks of 128 rows, the last one short */
            static const int64_t halves[] = {129, 255, 256, 257, 383, 600};
            Case pc[] = {
                {"pair self mixed", D, 2, 0, 0, 18, lens_of(18, mixed)},
                {"pair causal halves", D, 2, 1, 0, 6, lens_of(6, halves)},
                {"pair bcast nq=300", D, 2, 0, 300, 5, lens_random(5, 0, 600)},
            };
            for (size_t i = 0; i < sizeof pc / sizeof pc[0]; i++) {
              ok &= run_check(lib, &pc[i], 1, det);
              free(pc[i].len);
            }
          }
          continue;
        }
        for (int causal = 0; causal <= 1; causal++) {
          Case cs[] = {
              {"mixed (empty, 1, 127..1000)", D, 3, causal, 0, 18, lens_of(18, mixed)},
              {"B=1 len=777", D, 2, causal, 0, 1, lens_of(1, b1)},
              {"random B=40 len 0..2000", D, 4, causal, 0, 40, lens_random(40, 0, 2000)},
              {"B=20000 len 0..40", D, 2, causal, 0, 20000, lens_random(20000, 0, 40)},
              {"one 32k sequence", D, 2, causal, 0, 1, lens_of(1, one32k)},
              {"all empty", D, 2, causal, 0, 3, lens_of(3, allempty)},
              {"empty batch (B=0)", D, 2, causal, 0, 0, lens_of(0, allempty)},
          };
          for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            ok &= run_check(lib, &cs[i], 0, det);
            free(cs[i].len);
          }
        }
        /* the variants (issue 17), deterministic too (their NAME.det cubins) */
        Case vc[] = {
            {"window mixed", D, 3, 0, 0, 18, lens_of(18, mixed), 1, 100, 50, 0},
            {"window causal 256 B=40", D, 2, 0, 0, 40, lens_random(40, 0, 2000), 1, 256, 0, 0},
            {"window short (5, 3)", D, 2, 0, 0, 18, lens_of(18, mixed), 1, 5, 3, 0},
            {"window left only (300, -1)", D, 2, 0, 0, 40, lens_random(40, 0, 1000), 1, 300, -1, 0},
            {"softcap 30 mixed", D, 3, 0, 0, 18, lens_of(18, mixed), 0, 0, 0, 30.0f},
            {"softcap 0.5 causal B=40", D, 2, 1, 0, 40, lens_random(40, 0, 2000), 0, 0, 0, 0.5f},
            {"alibi mixed", D, 3, 0, 0, 18, lens_of(18, mixed), 0, 0, 0, 0, 1},
            {"alibi causal B=40", D, 8, 1, 0, 40, lens_random(40, 0, 2000), 0, 0, 0, 0, 1},
        };
        for (size_t i = 0; i < sizeof vc / sizeof vc[0]; i++) {
          if (det ? det_variants : variants) ok &= run_check(lib, &vc[i], 0, det);
          free(vc[i].len);
        }
        Case bq[] = {
            {"bcast nq=200 mixed", D, 3, 0, 200, 18, lens_of(18, mixed)},
            {"bcast nq=1 B=5", D, 2, 0, 1, 5, lens_random(5, 0, 700)},
            {"bcast nq=333 B=300", D, 2, 0, 333, 300, lens_random(300, 0, 600)},
        };
        for (size_t i = 0; i < sizeof bq / sizeof bq[0]; i++) {
          ok &= run_check(lib, &bq[i], 0, det);
          free(bq[i].len);
        }
      }
    }
  }
  jfa_lib *ab = NULL;
  if (abdir) CHECK(jfa_lib_open(abdir, &ab));
  const char *ab_name = abdir ? strrchr(abdir, '/') ? strrchr(abdir, '/') + 1 : abdir : NULL;
  if (suites) ok &= bench_suites(lib, suites, only, reps, ab, ab_name);
  jfa_lib_close(ab);
  jfa_lib_close(lib);
  printf("%s\n", ok ? "ALL OK" : "SOME CHECKS FAILED");
  return ok ? 0 : 1;
}

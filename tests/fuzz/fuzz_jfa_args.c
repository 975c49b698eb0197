/* fuzz_jfa_args.c - libFuzzer target: the JFA host API's argument checks
 * (examples/jagged_attention/jfa.h) on hostile arguments, no GPU.
 *
 * The input decodes into a jfa_params (batch, offsets of either width,
 * heads, head_dim, num_q, modes), the nine tensors of a backward pass built
 * right for those params, then up to 15 mutations of tensor fields (data,
 * dtype, rank, a shape or a stride set to an extreme value, one tensor
 * aliased onto another, a NULL tensor). A zero byte always means "the
 * ordinary value", so an all-zero input is a valid self-attention problem.
 * The offsets array is malloc'ed with exactly batch + 1 entries (one when the
 * batch is out of range): AddressSanitizer catches any read the checks make
 * before the batch is known to be in range.
 *
 * Every entry point is called: jfa_check_params, jfa_check_tensors,
 * jfa_check_bwd_tensors, jfa_bwd_workspace_bytes, jfa_varlen_fwd and
 * jfa_varlen_bwd (lib NULL: they must fail, after every other check),
 * jfa_plan_create (lib NULL), the stats functions on NULL; for small accepted
 * problems also the host-side schedules (tile_jagged_schedule_build and
 * tile_jagged_split_tail, jfa_bwd_items_build). Besides the sanitizers, an
 * oracle recomputes in 128-bit integers what an accepted call promises (the
 * offsets, ranges that fit the kernels' int32 arithmetic and TMA's limits,
 * positive strides, extents below 2^64, outputs disjoint from every other
 * tensor, the workspace size) and aborts when a check let something through.
 *
 *   make fuzz-host FUZZ_SECONDS=120      (mk/fuzz_host.mk; README.md here)
 *   FUZZ_VERBOSE=1 build-fuzz/host/fuzz_jfa_args FILE   (what each call said)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/jagged_attention/jfa.c"
#include "../../examples/jagged_attention/jfa_bwd.c"
#include "../../examples/jagged_attention/jfa_check.c"

typedef __int128 i128;

#define FAIL(...)                                                                                                     \
  do {                                                                                                                \
    fprintf(stderr, "fuzz_jfa_args: " __VA_ARGS__);                                                                   \
    fprintf(stderr, "\n  (last message: %s)\n", tile_last_error());                                                   \
    abort();                                                                                                          \
  } while (0)

static int verbose = -1;

static void say(const char *call, tile_status st) {
  if (verbose < 0) verbose = getenv("FUZZ_VERBOSE") != NULL;
  if (verbose) fprintf(stderr, "%-24s %s: %s\n", call, tile_status_name(st), st == TILE_OK ? "" : tile_last_error());
}

/* ---- reading the input ---- */

typedef struct rd {
  const uint8_t *p;
  size_t n;
} rd;

static uint64_t take(rd *r, int bytes) { /* 0 past the end */
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) {
    v |= (uint64_t)(r->n ? *r->p : 0) << (8 * i);
    if (r->n) r->p++, r->n--;
  }
  return v;
}

/* a value: `normal` (selector 0 .. 191), else one of the extremes */
static int64_t pick(rd *r, int64_t normal) {
  unsigned sel = (unsigned)take(r, 1);
  if (sel < 192) return normal;
  static const int64_t ext[] = {0,
                                -1,
                                1,
                                INT32_MAX,
                                INT32_MIN,
                                (int64_t)INT32_MAX + 1,
                                INT64_MAX,
                                INT64_MIN,
                                (int64_t)1 << 62,
                                (int64_t)1 << 40,
                                (int64_t)1 << 32,
                                65535,
                                65536,
                                TILE_JAGGED_MAX_BATCH,
                                TILE_JAGGED_MAX_BATCH + 1LL,
                                JFA_MAX_ROWS,
                                JFA_MAX_ROWS + 1LL,
                                JFA_MAX_ROW_ELEMS,
                                JFA_MAX_ROW_ELEMS + 1LL,
                                -((int64_t)1 << 62)};
  unsigned n = sizeof ext / sizeof *ext;
  sel -= 192;
  if (sel < n) return ext[sel];
  uint64_t u = (uint64_t)normal; /* wrapping arithmetic: normal may be extreme itself */
  switch (sel - n) {
  case 0: return (int64_t)take(r, 8);
  case 1: return (int64_t)(u + 1);
  case 2: return (int64_t)(u - 1);
  case 3: return (int64_t)(u * 2);
  case 4: return (int64_t)(u + 8);
  case 5: return (int64_t)(0 - u);
  default: return (int64_t)take(r, 2) - 32768;
  }
}

/* ---- the oracle (128-bit arithmetic) ---- */

static int ebytes(const jfa_tensor *t) { return !strcmp(t->dtype, "f32") ? 4 : 2; }

/* an accepted tensor's bytes [*lo, *hi); what the checks promise about it */
static void oracle_tensor(const char *name, const jfa_tensor *t, bool tma, i128 *lo, i128 *hi) {
  bool empty = false;
  for (int d = 0; d < t->rank; d++) {
    if (t->shape[d] < 0) FAIL("%s accepted with shape[%d] = %lld", name, d, (long long)t->shape[d]);
    empty |= t->shape[d] == 0;
  }
  *lo = *hi = (i128)t->data;
  if (t->data % 16) FAIL("%s accepted at a misaligned address", name);
  if (empty) return;
  i128 last = 0;
  for (int d = 0; d < t->rank; d++) {
    if (t->stride[d] < 1) FAIL("%s accepted with stride[%d] = %lld", name, d, (long long)t->stride[d]);
    i128 x = (i128)(t->shape[d] - 1) * t->stride[d]; /* < 2^126 */
    if (x > (i128)UINT64_MAX) FAIL("%s accepted spanning more than 2^64 bytes", name);
    last += x;
  }
  *hi = *lo + (last + 1) * ebytes(t);
  if (*hi > (i128)UINT64_MAX) FAIL("%s accepted past the end of the address space", name);
  if (!t->data) FAIL("%s accepted with a NULL data pointer", name);
  int row = t->rank == 4 ? 1 : 0;
  i128 row_elems = 1;
  for (int d = row + 1; d < t->rank; d++) row_elems *= t->shape[d];
  if (t->stride[row] < row_elems) FAIL("%s accepted with overlapping rows", name);
  if (tma && (t->stride[row] > INT32_MAX || (i128)t->stride[row] * ebytes(t) % 16))
    FAIL("%s accepted with row stride %lld", name, (long long)t->stride[row]);
  if (!tma) { /* the LSE: indexed densely */
    i128 want = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
      if (t->shape[d] > 1 && t->stride[d] != want) FAIL("%s accepted, not dense", name);
      want *= t->shape[d];
    }
  }
}

static void oracle_disjoint(const jfa_tensor *const *t, const char *const *names, int n, int nout, const bool *tma) {
  i128 lo[9], hi[9];
  for (int i = 0; i < n; i++) oracle_tensor(names[i], t[i], tma[i], &lo[i], &hi[i]);
  for (int i = 0; i < nout; i++)
    for (int j = 0; j < n; j++)
      if (i != j && lo[i] < hi[i] && lo[j] < hi[j] && lo[i] < hi[j] && lo[j] < hi[i])
        FAIL("%s and %s overlap, accepted", names[i], names[j]);
}

/* What an accepted jfa_params promises: the kernels' int32 rows, TMA's
 * extents, the backward's grid rows. */
static void oracle_params(const jfa_params *p, const int64_t *off, int64_t total) {
  if (p->batch < 0 || p->batch > TILE_JAGGED_MAX_BATCH) FAIL("batch %lld accepted", (long long)p->batch);
  if (off[0] != 0) FAIL("offsets[0] = %lld accepted", (long long)off[0]);
  for (int64_t b = 0; b < p->batch; b++)
    if (off[b + 1] < off[b]) FAIL("decreasing offsets accepted at %lld", (long long)b);
  if (total != off[p->batch]) FAIL("total %lld != offsets[batch] %lld", (long long)total, (long long)off[p->batch]);
  if (total > INT32_MAX - 2 * BLOCK_M) FAIL("%lld rows accepted", (long long)total);
  if (p->head_dim != 64 && p->head_dim != 128) FAIL("head_dim %d accepted", p->head_dim);
  if (p->heads < 1 || (i128)p->heads * p->head_dim > INT32_MAX / 2) FAIL("heads %d accepted", p->heads);
  if (p->num_q < 0 || p->num_q > INT32_MAX / 2 || (i128)p->batch * p->num_q > INT32_MAX - 2 * BLOCK_M)
    FAIL("num_q %lld accepted", (long long)p->num_q);
  if ((p->passes & JFA_BWD) && p->heads > 65535) FAIL("%d heads accepted for the backward", p->heads);
}

/* ---- building the arguments ---- */

enum { MAX_B = 64, NT = 9 };
static const char *const tname[NT] = {"q", "k", "v", "o", "lse", "dout", "dq", "dk", "dv"};

static void tensor_of(jfa_tensor *t, tile_devptr data, const char *dtype, int rank, const int64_t *shape) {
  memset(t, 0, sizeof *t);
  t->data = data, t->dtype = dtype, t->rank = rank;
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    t->shape[d] = shape[d], t->stride[d] = s;
    s = (int64_t)((uint64_t)s * (uint64_t)(shape[d] > 0 ? shape[d] : 1)); /* wraps on hostile shapes: fine */
  }
}

/* the nine tensors for p with `total` rows, 2^36 bytes apart */
static void build_tensors(const jfa_params *p, int64_t total, jfa_tensor *t) {
  int64_t H = p->heads, D = p->head_dim, B = p->batch, NQ = p->num_q;
  int bcast = NQ > 0;
  int64_t q3[3] = {bcast ? NQ : total, H, D}, kv[3] = {total, H, D}, o4[4] = {B, NQ, H, D};
  int64_t l2[2] = {H, total}, l3[3] = {B, H, NQ};
  tile_devptr base = (tile_devptr)1 << 36;
  tensor_of(&t[0], base * 1, "bf16", 3, q3);
  tensor_of(&t[1], base * 2, "bf16", 3, kv);
  tensor_of(&t[2], base * 3, "bf16", 3, kv);
  if (bcast) tensor_of(&t[3], base * 4, "bf16", 4, o4);
  else tensor_of(&t[3], base * 4, "bf16", 3, q3);
  if (bcast) tensor_of(&t[4], base * 5, "f32", 3, l3);
  else tensor_of(&t[4], base * 5, "f32", 2, l2);
  t[5] = t[3], t[5].data = base * 6;
  t[6] = t[0], t[6].data = base * 7;
  t[7] = t[1], t[7].data = base * 8;
  t[8] = t[2], t[8].data = base * 9;
}

static void mutate(rd *r, jfa_tensor *t, bool *null) {
  static const char *const dtypes[] = {"bf16", "f32", "f16", "", "bf16x"};
  unsigned what = (unsigned)take(r, 1), i = (unsigned)take(r, 1) % NT, d = (unsigned)take(r, 1) % 4;
  jfa_tensor *x = &t[i];
  switch (what % 10) {
  case 0: x->stride[d] = pick(r, x->stride[d]); break;
  case 1: x->shape[d] = pick(r, x->shape[d]); break;
  case 2: x->data = (tile_devptr)pick(r, (int64_t)x->data); break;
  case 3: x->data = t[(i + 1 + d) % NT].data + 16 * (take(r, 2) % 4096); break; /* alias another */
  case 4: x->dtype = take(r, 1) % 8 == 7 ? NULL : dtypes[take(r, 1) % 5]; break;
  case 5: x->rank = (int)pick(r, x->rank); break;
  case 6: null[i] = true; break;
  case 7: x->stride[d] = (int64_t)take(r, 1) * 8; break; /* small strides, some of them right */
  case 8: x->data = ~(tile_devptr)0 - 16 * take(r, 2) - 15; break; /* near the top of the address space */
  default: x->stride[d] = (int64_t)(0 - (uint64_t)x->stride[d]); break;
  }
}

/* ---- the target ---- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rd r = {data, size};
  jfa_params p;
  memset(&p, 0, sizeof p);
  /* batch: small (then offsets of batch + 1 entries), or hostile (1 entry) */
  int64_t batch = pick(&r, (int64_t)(take(&r, 1) % (MAX_B + 1)));
  if (batch >= 0 && batch <= TILE_JAGGED_MAX_BATCH) batch %= MAX_B + 1; /* valid: the array has them all */
  bool in_range = batch >= 0 && batch <= MAX_B;
  int64_t n = in_range ? batch + 1 : 1;
  int is64 = take(&r, 1) & 1;
  int64_t *off64 = malloc((size_t)n * sizeof *off64);
  int32_t *off32 = malloc((size_t)n * sizeof *off32);
  int32_t *wrap32 = malloc((size_t)n * sizeof *wrap32); /* the int32 wrappers' copy */
  off64[0] = pick(&r, 0);
  for (int64_t b = 1; b < n; b++) off64[b] = (int64_t)((uint64_t)off64[b - 1] + (uint64_t)pick(&r, (int64_t)(take(&r, 1) * 3)));
  for (int64_t b = 0; b < n; b++) off32[b] = wrap32[b] = (int32_t)off64[b];
  if (!is64)
    for (int64_t b = 0; b < n; b++) off64[b] = off32[b]; /* the values the checks see */
  p.batch = batch;
  p.cu_seqlens = is64 ? (const void *)off64 : (const void *)off32;
  p.cu_seqlens_64bit = is64;
  if (take(&r, 1) == 255) p.cu_seqlens = NULL;
  p.heads = (int)pick(&r, 1 + (int64_t)(take(&r, 1) % 4));
  p.head_dim = (int)pick(&r, take(&r, 1) & 1 ? 64 : 128);
  unsigned mode = (unsigned)take(&r, 1);
  p.num_q = pick(&r, mode & 1 ? 1 + (int64_t)(take(&r, 1) % 200) : 0);
  p.causal = (mode >> 1) & 1;
  p.passes = (int)pick(&r, (mode >> 2) & 3);
  p.deterministic = (int)pick(&r, (mode >> 4) & 1);
  p.no_zigzag = (mode >> 5) & 1;
  p.no_split = (mode >> 6) & 1;
  p.num_ctas = (int)pick(&r, (int64_t)(take(&r, 1) % 140));
  uint32_t scale_bits = (uint32_t)take(&r, 4);
  if (mode & 128) memcpy(&p.softmax_scale, &scale_bits, 4);

  int64_t total = -1;
  tile_status st = jfa_check_params(&p, &total);
  say("jfa_check_params", st);
  if (st != TILE_OK && st != TILE_ERR_INVALID) FAIL("jfa_check_params: status %d", (int)st);
  if (st == TILE_OK) oracle_params(&p, off64, total);

  /* the tensors, for the total the offsets give (or a hostile one) */
  int64_t t_rows = st == TILE_OK ? total : (in_range ? off64[n - 1] : 0);
  t_rows = pick(&r, t_rows);
  jfa_tensor t[NT];
  bool null[NT] = {0};
  build_tensors(&p, t_rows, t);
  for (unsigned m = (unsigned)take(&r, 1) % 16; m > 0; m--) mutate(&r, t, null);
  const jfa_tensor *a[NT];
  for (int i = 0; i < NT; i++) a[i] = null[i] ? NULL : &t[i];

  tile_status sf = jfa_check_tensors(&p, t_rows, a[0], a[1], a[2], a[3], a[4]);
  say("jfa_check_tensors", sf);
  if (sf != TILE_OK && sf != TILE_ERR_INVALID) FAIL("jfa_check_tensors: status %d", (int)sf);
  if (sf == TILE_OK) {
    if (jfa_check_ranges(&p) != TILE_OK) FAIL("jfa_check_tensors accepted bad params");
    if (p.cu_seqlens && (st != TILE_OK || total != t_rows)) FAIL("jfa_check_tensors accepted total %lld", (long long)t_rows);
    const jfa_tensor *f[5] = {a[3], a[4], a[0], a[1], a[2]};
    const char *const fn[5] = {"o", "lse", "q", "k", "v"};
    const bool ft[5] = {true, false, true, true, true};
    oracle_disjoint(f, fn, 5, 2, ft);
  }
  tile_status sb = jfa_check_bwd_tensors(&p, t_rows, a[5], a[0], a[1], a[2], a[3], a[4], a[6], a[7], a[8]);
  say("jfa_check_bwd_tensors", sb);
  if (sb != TILE_OK && sb != TILE_ERR_INVALID) FAIL("jfa_check_bwd_tensors: status %d", (int)sb);
  if (sb == TILE_OK) {
    const jfa_tensor *b9[9] = {a[6], a[7], a[8], a[5], a[0], a[1], a[2], a[3], a[4]};
    const char *const bn[9] = {"dq", "dk", "dv", "dout", "q", "k", "v", "o", "lse"};
    const bool bt[9] = {true, true, true, true, true, true, true, true, false};
    oracle_disjoint(b9, bn, 9, 3, bt);
  }

  size_t ws = 7;
  tile_status sw = jfa_bwd_workspace_bytes(&p, &ws);
  say("jfa_bwd_workspace_bytes", sw);
  if (sw != TILE_OK && sw != TILE_ERR_INVALID) FAIL("jfa_bwd_workspace_bytes: status %d", (int)sw);
  if (sw != TILE_OK && ws != 0) FAIL("jfa_bwd_workspace_bytes failed with bytes = %zu", ws);
  if (sw == TILE_OK) { /* the same sum in 128 bits: nothing wrapped */
    if (st != TILE_OK) FAIL("jfa_bwd_workspace_bytes accepted what jfa_check_params refused");
    /* query blocks of 64 rows (rows of 64 floats), and in self-attention
     * at head dim 128 of 80 (rows of 128; the accumulator by block, [D,
     * H x blocks x 80]): the larger */
    i128 H = p.heads, D = p.head_dim, B = p.batch, NQ = p.num_q, want = 0;
    for (int qb = 64; qb <= 80; qb += 16) {
      if (qb == 80 && (NQ > 0 || D != 128)) break;
      i128 nqb = 0, lw = qb == 64 ? 64 : 128, rows = NQ > 0 ? NQ : total;
      if (NQ > 0) nqb = (NQ + qb - 1) / qb;
      else
        for (int64_t b = 0; b < p.batch; b++) nqb += (off64[b + 1] - off64[b] + qb - 1) / qb;
      i128 acc = qb == 80 ? D * H * nqb * 80 : rows * H * D;
      if (qb == 64 && H * nqb * 64 * D > acc) acc = H * nqb * 64 * D; /* by block (DQ_BULK; broadcast-Q: shared) */
      i128 w = acc * 4 + 2 * (NQ > 0 ? B * H : H) * nqb * lw * 4 + (NQ > 0 ? 0 : nqb * 8);
      /* the dQ blocks' counters, or DYN's item counter (and in self-attention OWN's flags, one a dQ block);
       * deterministic mode the larger (it runs FIN's kernel where that is the default) */
      i128 flags = 4 + (NQ > 0 ? 0 : H * nqb * 4), counters = H * nqb * 4;
      w += p.deterministic && counters > flags ? counters : flags;
      if (w > want) want = w;
    }
    if ((i128)ws != want) FAIL("workspace %zu bytes, expected %lld", ws, (long long)want);
  }

  /* the wrappers: lib NULL, so they must fail, and with "lib is NULL" only
   * when everything else was right */
  int64_t max_seqlen = pick(&r, (int64_t)take(&r, 2));
  const int32_t *w32 = p.cu_seqlens ? wrap32 : NULL;
  tile_status v1 = jfa_varlen_fwd(NULL, a[0], a[1], a[2], a[3], a[4], w32, batch, max_seqlen, p.causal,
                                  p.softmax_scale, NULL);
  say("jfa_varlen_fwd", v1);
  if (v1 != TILE_ERR_INVALID) FAIL("jfa_varlen_fwd without a library: status %d", (int)v1);
  tile_status v2 = jfa_varlen_bwd(NULL, a[5], a[0], a[1], a[2], a[3], a[4], a[6], a[7], a[8], w32, batch, max_seqlen,
                                  p.causal, p.softmax_scale, p.deterministic, NULL);
  say("jfa_varlen_bwd", v2);
  if (v2 != TILE_ERR_INVALID) FAIL("jfa_varlen_bwd without a library: status %d", (int)v2);
  if (strstr(tile_last_error(), "lib is NULL")) { /* then everything else passed */
    if (!a[0] || a[0]->rank != 3 || !p.cu_seqlens) FAIL("jfa_varlen_bwd got to the library with bad arguments");
    for (int64_t b = 0; b < batch; b++)
      if (max_seqlen > 0 && (int64_t)wrap32[b + 1] - wrap32[b] > max_seqlen) FAIL("max_seqlen not enforced");
  }

  jfa_plan *plan = (jfa_plan *)&p;
  tile_status sp = jfa_plan_create(NULL, &p, &plan);
  if (sp != TILE_ERR_INVALID || plan) FAIL("jfa_plan_create without a library: status %d", (int)sp);
  int64_t x0, x1, x2;
  int c0;
  jfa_plan_stats(NULL, &x0, &x1, &x2, &c0);
  jfa_plan_split_stats(NULL, &x0, &x1);
  jfa_plan_bwd_stats(NULL, &x0, &x1, &x2, &c0);

  /* small accepted problems: the host schedules the plans would build */
  int ctas = p.num_ctas > 0 ? p.num_ctas : 132;
  if (st == TILE_OK && p.batch > 0 && ctas <= 4096) {
    i128 rows = p.num_q > 0 ? (i128)p.batch * p.num_q : total;
    if ((rows / 64 + p.batch) * p.heads <= 20000 && (total / 64 + p.batch) * p.heads <= 20000) {
      tile_jagged_params jp = {0};
      jp.batch = p.batch, jp.offsets = p.cu_seqlens, jp.offsets_are_64bit = p.cu_seqlens_64bit;
      jp.heads = p.heads, jp.block_m = BLOCK_M, jp.block_n = 128, jp.causal = p.causal, jp.num_q = p.num_q;
      jp.num_ctas = ctas, jp.zigzag = !p.no_zigzag;
      jp.window = p.window, jp.window_left = p.window_left, jp.window_right = p.window_right;
      tile_jagged_schedule s;
      tile_jagged_split sp2;
      if (tile_jagged_schedule_build(&jp, &s) == TILE_OK) {
        tile_jagged_split_params spp = {4, 1, ctas};
        if (tile_jagged_split_tail(&jp, &s, p.no_split ? NULL : &spp, &sp2) == TILE_OK) tile_jagged_split_free(&sp2);
        tile_jagged_schedule_free(&s);
      }
      jfa_bwd_items it;
      if (jfa_bwd_items_build(&p, ctas, 0, ctas & 1, &it) == TILE_OK) jfa_bwd_items_free(&it); /* dyn: odd */
    }
  }
  free(off64);
  free(off32);
  free(wrap32);
  return 0;
}

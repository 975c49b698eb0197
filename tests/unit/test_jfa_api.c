/* test_jfa_api.c - the JFA host API's input checks (examples/jagged_attention/
 * jfa.h), which run before anything touches the GPU: bad offsets, head dims,
 * modes, and every tensor property the kernel relies on (dtype, rank, shape,
 * contiguity, 16-byte alignment of bases and rows) give TILE_ERR_INVALID
 * with a message that names the problem; the same for the backward pass
 * (its gradients and dO, outputs that alias inputs, the passes and
 * deterministic fields) and its workspace size; and hostile arguments (huge
 * batches, extreme offsets, overflowing strides and extents, aliased
 * outputs, nonsense totals and ranges, NULLs), which crashed, overflowed or
 * passed before. */
#include "../../examples/jagged_attention/jfa.c"
#include "../../examples/jagged_attention/jfa_bwd.c"
#include "../../examples/jagged_attention/jfa_check.c"

#include "testutil.h" /* after jfa.h: its JFA helpers */

static int32_t *const OFF = TU_JFA_OFF;
#define params tu_jfa_params

static void expect_err(tile_status st, const char *want) {
  if (st != TILE_ERR_INVALID || !strstr(tile_last_error(), want))
    fprintf(stderr, "got %s: '%s', wanted '%s'\n", tile_status_name(st), tile_last_error(), want);
  assert_int_equal(st, TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), want));
}

static void test_params(void **state) {
  (void)state;
  int64_t total = -1;
  jfa_params p = params();
  assert_int_equal(jfa_check_params(&p, &total), TILE_OK);
  assert_int_equal(total, 200);

  int32_t dec[4] = {0, 100, 90, 200};
  p.cu_seqlens = dec;
  expect_err(jfa_check_params(&p, NULL), "offsets[1] = 100 > offsets[2] = 90");
  int32_t nz[4] = {5, 100, 150, 200};
  p.cu_seqlens = nz;
  expect_err(jfa_check_params(&p, NULL), "offsets[0] is 5");
  p = params();
  p.cu_seqlens = NULL;
  expect_err(jfa_check_params(&p, NULL), "cu_seqlens is NULL");
  p = params();
  p.head_dim = 96;
  expect_err(jfa_check_params(&p, NULL), "head_dim 96 is not supported");
  p = params();
  p.heads = 0;
  expect_err(jfa_check_params(&p, NULL), "heads must be >= 1");
  p = params();
  p.batch = -1;
  expect_err(jfa_check_params(&p, NULL), "batch -1 out of range");
  p = params();
  p.causal = 1;
  p.num_q = 64;
  expect_err(jfa_check_params(&p, NULL), "no causal mask");
  p = params();
  p.softmax_scale = -1.0f;
  expect_err(jfa_check_params(&p, NULL), "softmax_scale");
  p = params();
  p.softmax_scale = 1.0f / 0.0f;
  expect_err(jfa_check_params(&p, NULL), "softmax_scale");
  /* int64 offsets beyond 32-bit rows */
  int64_t big[2] = {0, (int64_t)1 << 33};
  p = params();
  p.batch = 1;
  p.cu_seqlens = big;
  p.cu_seqlens_64bit = 1;
  expect_err(jfa_check_params(&p, NULL), "too large for 32-bit row indices");
  /* an empty batch is fine */
  p = params();
  p.batch = 0;
  assert_int_equal(jfa_check_params(&p, &total), TILE_OK);
  assert_int_equal(total, 0);
  expect_err(jfa_check_params(NULL, NULL), "params is NULL");
  /* the CTA pair's forward: head dim 128, self-attention (causal or not) or broadcast-Q */
  p = params();
  p.cta_pair = 1;
  assert_int_equal(jfa_check_params(&p, &total), TILE_OK);
  p.causal = 1;
  assert_int_equal(jfa_check_params(&p, &total), TILE_OK);
  p.cta_pair = 2;
  expect_err(jfa_check_params(&p, NULL), "cta_pair 2 is not 0 or 1");
  p = params();
  p.cta_pair = 1, p.head_dim = 64;
  expect_err(jfa_check_params(&p, NULL), "cta_pair with head_dim 64");
  p = params();
  p.cta_pair = 1, p.window = 1, p.window_left = 10, p.window_right = 0; /* the variants: their NAME.pair cubins */
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  p = params();
  p.cta_pair = 1, p.softcap = 2.0f;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
}

static void t3(jfa_tensor *t, tile_devptr p, const char *dt, int64_t a, int64_t b, int64_t c) {
  memset(t, 0, sizeof *t);
  t->data = p;
  t->dtype = dt;
  t->rank = 3;
  t->shape[0] = a, t->shape[1] = b, t->shape[2] = c;
  t->stride[0] = b * c, t->stride[1] = c, t->stride[2] = 1;
}

typedef struct Set {
  jfa_tensor q, k, v, o, lse;
} Set;

/* every tensor 1 MiB apart: no two share a byte (the outputs may not) */
static Set self_set(void) {
  Set s;
  t3(&s.q, 1 << 20, "bf16", 200, 2, 128);
  t3(&s.k, 2 << 20, "bf16", 200, 2, 128);
  t3(&s.v, 3 << 20, "bf16", 200, 2, 128);
  t3(&s.o, 4 << 20, "bf16", 200, 2, 128);
  memset(&s.lse, 0, sizeof s.lse);
  s.lse.data = 5 << 20, s.lse.dtype = "f32", s.lse.rank = 2;
  s.lse.shape[0] = 2, s.lse.shape[1] = 200, s.lse.stride[0] = 200, s.lse.stride[1] = 1;
  return s;
}

static tile_status run(const jfa_params *p, const Set *s) {
  return jfa_check_tensors(p, 200, &s->q, &s->k, &s->v, &s->o, &s->lse);
}

static void test_tensors_self(void **state) {
  (void)state;
  jfa_params p = params();
  Set s = self_set();
  assert_int_equal(run(&p, &s), TILE_OK);
  /* strided rows (a multiple of 8 elements) are fine */
  s.q.stride[0] = 264;
  assert_int_equal(run(&p, &s), TILE_OK);

  s = self_set(); s.q.dtype = "f32";
  expect_err(run(&p, &s), "q must be bf16, not f32");
  s = self_set(); s.k.dtype = NULL;
  expect_err(run(&p, &s), "k must be bf16, not (none)");
  s = self_set(); s.lse.dtype = "bf16";
  expect_err(run(&p, &s), "lse must be f32");
  s = self_set(); s.v.rank = 2;
  expect_err(run(&p, &s), "v must have 3 dimensions, not 2");
  s = self_set(); s.k.shape[0] = 199;
  expect_err(run(&p, &s), "k has shape [199, 2, 128]; expected [200, 2, 128]");
  s = self_set(); s.o.shape[1] = 4;
  expect_err(run(&p, &s), "o has shape [200, 4, 128]");
  s = self_set(); s.q.stride[1] = 256;
  expect_err(run(&p, &s), "q must be contiguous after its first dimension");
  s = self_set(); s.q.stride[2] = 2;
  expect_err(run(&p, &s), "q must be contiguous after its first dimension (stride[2] = 2");
  s = self_set(); s.v.stride[0] = 100;
  expect_err(run(&p, &s), "v rows overlap");
  s = self_set(); s.k.data += 8;
  expect_err(run(&p, &s), "k is not 16-byte aligned");
  s = self_set(); s.q.stride[0] = 260;
  expect_err(run(&p, &s), "q rows must start 16 bytes apart");
  s = self_set(); s.o.stride[0] = 260;
  expect_err(run(&p, &s), "o rows must start 16 bytes apart");
  s = self_set(); s.o.data = 0;
  expect_err(run(&p, &s), "o has a NULL data pointer");
  expect_err(jfa_check_tensors(&p, 200, NULL, &s.k, &s.v, &s.o, &s.lse), "q is NULL");
}

static void test_tensors_bcast(void **state) {
  (void)state;
  jfa_params p = params();
  p.num_q = 70;
  Set s = self_set();
  t3(&s.q, 1 << 20, "bf16", 70, 2, 128);
  memset(&s.o, 0, sizeof s.o);
  s.o.data = 4 << 20, s.o.dtype = "bf16", s.o.rank = 4;
  int64_t osh[4] = {3, 70, 2, 128}, ost[4] = {70 * 256, 256, 128, 1};
  memcpy(s.o.shape, osh, sizeof osh);
  memcpy(s.o.stride, ost, sizeof ost);
  t3(&s.lse, 5 << 20, "f32", 3, 2, 70);
  assert_int_equal(run(&p, &s), TILE_OK);
  Set bad = s;
  bad.o.stride[0] = 70 * 256 + 8;
  expect_err(run(&p, &bad), "o's batch stride");
  bad = s;
  bad.lse.shape[2] = 64;
  expect_err(run(&p, &bad), "lse has shape [3, 2, 64]; expected [3, 2, 70]");
  bad = s;
  t3(&bad.q, 1 << 20, "bf16", 200, 2, 128); /* a jagged Q in broadcast mode */
  expect_err(run(&p, &bad), "q has shape [200, 2, 128]; expected [70, 2, 128]");
}

/* plan_create checks before it needs a GPU or a library */
static void test_plan_create_checks_first(void **state) {
  (void)state;
  jfa_params p = params();
  p.head_dim = 32;
  jfa_plan *plan = (jfa_plan *)1;
  expect_err(jfa_plan_create(NULL, &p, &plan), "head_dim 32");
  assert_null(plan);
  p = params();
  expect_err(jfa_plan_create(NULL, &p, &plan), "lib is NULL");
  expect_err(jfa_plan_create(NULL, &p, NULL), "out is NULL");
  expect_err(jfa_plan_forward(NULL, NULL, NULL, NULL, NULL, NULL, NULL), "plan is NULL");
}

/* ---- the backward pass ---- */
typedef struct BSet {
  Set f;
  jfa_tensor dout, dq, dk, dv;
} BSet;

/* every tensor 1 MiB apart: no two share a byte */
static BSet bwd_set(void) {
  BSet s;
  s.f = self_set();
  t3(&s.dout, 6 << 20, "bf16", 200, 2, 128);
  t3(&s.dq, 7 << 20, "bf16", 200, 2, 128);
  t3(&s.dk, 8 << 20, "bf16", 200, 2, 128);
  t3(&s.dv, 9 << 20, "bf16", 200, 2, 128);
  return s;
}

static tile_status brun(const jfa_params *p, const BSet *s) {
  return jfa_check_bwd_tensors(p, 200, &s->dout, &s->f.q, &s->f.k, &s->f.v, &s->f.o, &s->f.lse, &s->dq, &s->dk, &s->dv);
}

static void test_bwd_tensors(void **state) {
  (void)state;
  jfa_params p = params();
  BSet s = bwd_set();
  assert_int_equal(brun(&p, &s), TILE_OK);
  s = bwd_set(); s.dout.dtype = "f32";
  expect_err(brun(&p, &s), "dout must be bf16, not f32");
  s = bwd_set(); s.dq.shape[0] = 199;
  expect_err(brun(&p, &s), "dq has shape [199, 2, 128]; expected [200, 2, 128]");
  s = bwd_set(); s.dk.data += 4;
  expect_err(brun(&p, &s), "dk is not 16-byte aligned");
  s = bwd_set(); s.dv.stride[0] = 1030;
  expect_err(brun(&p, &s), "dv rows must start 16 bytes apart");
  s = bwd_set(); s.dout.stride[1] = 256;
  expect_err(brun(&p, &s), "dout must be contiguous after its first dimension");
  s = bwd_set(); s.dq.data = s.f.q.data;
  expect_err(brun(&p, &s), "dq and q overlap in memory");
  s = bwd_set(); s.dk.data = s.dout.data + 256 * 2 * 100; /* dk starts at dout's row 100 */
  expect_err(brun(&p, &s), "dk and dout overlap in memory");
  s = bwd_set(); s.dv.data = s.dk.data - 256 * 2 * 199; /* dv's last row is dk's first */
  expect_err(brun(&p, &s), "dk and dv overlap in memory");
  s = bwd_set(); s.dv.data = s.dk.data + 256 * 2 * 200; /* right after dk: fine */
  assert_int_equal(brun(&p, &s), TILE_OK);
  s = bwd_set(); s.f.lse.rank = 3;
  expect_err(brun(&p, &s), "lse must have 2 dimensions"); /* the forward's checks come first */
  s = bwd_set();
  expect_err(jfa_check_bwd_tensors(&p, 200, NULL, &s.f.q, &s.f.k, &s.f.v, &s.f.o, &s.f.lse, &s.dq, &s.dk, &s.dv),
             "dout is NULL");
  /* broadcast-Q: dout like o [B, nq, H, D], dq like q [nq, H, D] */
  p.num_q = 70;
  s = bwd_set();
  t3(&s.f.q, s.f.q.data, "bf16", 70, 2, 128);
  t3(&s.dq, s.dq.data, "bf16", 70, 2, 128);
  t3(&s.f.lse, s.f.lse.data, "f32", 3, 2, 70);
  int64_t osh[4] = {3, 70, 2, 128}, ost[4] = {70 * 256, 256, 128, 1};
  jfa_tensor *o4[2] = {&s.f.o, &s.dout};
  for (int i = 0; i < 2; i++) {
    tile_devptr d = o4[i]->data;
    memset(o4[i], 0, sizeof *o4[i]);
    o4[i]->data = d, o4[i]->dtype = "bf16", o4[i]->rank = 4;
    memcpy(o4[i]->shape, osh, sizeof osh);
    memcpy(o4[i]->stride, ost, sizeof ost);
  }
  assert_int_equal(brun(&p, &s), TILE_OK);
  BSet bad = s;
  bad.dout.stride[0] += 8;
  expect_err(brun(&p, &bad), "dout's batch stride");
  bad = s;
  t3(&bad.dq, s.dq.data, "bf16", 200, 2, 128);
  expect_err(brun(&p, &bad), "dq has shape [200, 2, 128]; expected [70, 2, 128]");
}

static void test_bwd_params(void **state) {
  (void)state;
  jfa_params p = params();
  p.passes = 4;
  expect_err(jfa_check_params(&p, NULL), "passes 4");
  p.passes = -1;
  expect_err(jfa_check_params(&p, NULL), "passes -1");
  p = params();
  p.deterministic = 2;
  expect_err(jfa_check_params(&p, NULL), "deterministic must be 0 or 1");
  p = params();
  p.passes = JFA_FWD | JFA_BWD;
  p.deterministic = 1;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  expect_err(jfa_plan_backward(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), "plan is NULL");
}

/* the workspace: the f32 dQ accumulator, two rows of floats per (head,
 * query block) and the query blocks' (sequence, block) map; deterministic
 * mode adds a counter per (head, query block), the DYN kernel one for its
 * items (and in self-attention a flag per (head, query block), OWN's).
 * Self-attention at head dim
 * 128: the larger of the 64-row layout (rows of 64 floats) and the 80-row
 * one (rows of 128, the accumulator by block, [D, H x blocks x 80]:
 * jfa_bwd.tile's Q80) */
static void test_bwd_workspace(void **state) {
  (void)state;
  jfa_params p = params(); /* lengths 100, 50, 50: 2 + 1 + 1 query blocks of 64, and of 80 */
  size_t bytes = 0;
  assert_int_equal(jfa_bwd_workspace_bytes(&p, &bytes), TILE_OK);
  size_t acc = (size_t)128 * (2 * 4) * 80 * 4, ws = 2 * (size_t)(2 * 4) * 128 * 4, map = 4 * 8;
  assert_int_equal(bytes, acc + ws + map + 4 + 2 * 4 * 4); /* + the DYN kernel's item counter, OWN's flags */
  p.deterministic = 1; /* the same: deterministic mode runs FIN's kernel (its flags) where that is the default */
  assert_int_equal(jfa_bwd_workspace_bytes(&p, &bytes), TILE_OK);
  assert_int_equal(bytes, acc + ws + map + 4 + 2 * 4 * 4);
  /* head dim 64: 64-row blocks only, the accumulator by block the larger (DQ_BULK: 2 x 4 blocks of 64 x 64) */
  p = params();
  p.head_dim = 64;
  assert_int_equal(jfa_bwd_workspace_bytes(&p, &bytes), TILE_OK);
  assert_int_equal(bytes, (size_t)(2 * 4) * 64 * 64 * 4 + 2 * (size_t)(2 * 4) * 64 * 4 + map + 4 + 2 * 4 * 4);
  /* 81 rows: two query blocks of 64 or of 80; the 80-row layout is the larger (160 accumulator columns a head) */
  int32_t off81[2] = {0, 81};
  p = params();
  p.batch = 1;
  p.cu_seqlens = off81;
  assert_int_equal(jfa_bwd_workspace_bytes(&p, &bytes), TILE_OK);
  assert_int_equal(bytes, (size_t)128 * (2 * 2) * 80 * 4 + 2 * (size_t)(2 * 2) * 128 * 4 + 2 * 8 + 4 + 2 * 2 * 4);
  /* broadcast-Q, 70 queries: 2 blocks per (sequence, head); dQ is [70, H, D], the accumulator by block the
   * larger (DQ_BULK: 2 heads x 2 blocks of 64 x 128, shared by the sequences) */
  p = params();
  p.num_q = 70;
  assert_int_equal(jfa_bwd_workspace_bytes(&p, &bytes), TILE_OK);
  assert_int_equal(bytes, (size_t)2 * 2 * 64 * 128 * 4 + 2 * (size_t)(3 * 2 * 2) * 64 * 4 + 4);
  p.head_dim = 80;
  expect_err(jfa_bwd_workspace_bytes(&p, &bytes), "head_dim 80");
  expect_err(jfa_bwd_workspace_bytes(&p, NULL), "bytes is NULL");
}

/* ---- hostile arguments ----
 *
 * Each case below crashed, overflowed or was accepted before these checks
 * existed; all must give TILE_ERR_INVALID with a message that names the
 * problem, read nothing they should not (the offsets only after the batch
 * is in range) and launch nothing. The one-call wrappers run with lib =
 * NULL: everything is checked before the library is touched. */

/* the wrappers on the self set of 200 rows (q, k, v, o, lse) */
static tile_status vfwd(const Set *s, const int32_t *off, int64_t batch, int64_t max_seqlen) {
  return jfa_varlen_fwd(NULL, &s->q, &s->k, &s->v, &s->o, &s->lse, off, batch, max_seqlen, 0, 0.0f, NULL);
}
static tile_status vbwd(const BSet *s, const int32_t *off, int64_t batch, int64_t max_seqlen) {
  return jfa_varlen_bwd(NULL, &s->dout, &s->f.q, &s->f.k, &s->f.v, &s->f.o, &s->f.lse, &s->dq, &s->dk, &s->dv, off,
                        batch, max_seqlen, 0, 0.0f, 0, NULL);
}

/* Block-sparse attention (jfa_params.block_mask): its checks against the
 * batch; the packing variants/blocksparse.tile reads (vparams: the per-batch
 * row, the word the bytes start at, each sequence's first byte); the
 * backward items, each costing the query blocks of its unmasked range that
 * the mask visits (row q / 128 of the mask, column: the KV block), their
 * ranges the unmasked ones. */
static void test_block_mask(void **state) {
  (void)state;
  int32_t off[4] = {0, 100, 150, 400}; /* 1, 1 and 2 blocks of 128 */
  uint8_t ms[6] = {1, 0, 1, 1, 0, 1}, mb[4] = {1, 1, 0, 1};
  jfa_params p = params();
  p.cu_seqlens = off;
  p.block_mask = ms, p.block_mask_mode = JFA_MASK_PER_SEQUENCE, p.block_mask_bytes = 6;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  int32_t vp[32];
  memset(vp, 0x55, sizeof vp);
  /* 3 sequence offsets, then each mask's rows and columns of bits: 2 + 2 + 4 words */
  assert_int_equal(jfa_block_mask_words(&p), 3 + 8);
  jfa_block_mask_pack(&p, vp);
  assert_int_equal(vp[0], 0);
  assert_int_equal(vp[1], JFA_VPARAMS + 3);
  assert_int_equal(vp[JFA_VPARAMS], 0), assert_int_equal(vp[JFA_VPARAMS + 1], 2), assert_int_equal(vp[JFA_VPARAMS + 2], 4);
  /* {1} | {0} | {1 1; 0 1}: rows 3, 2 (query block 1 sees KV block 1 only), columns 1, 3 */
  int32_t want[8] = {1, 1, 0, 0, 3, 2, 1, 3};
  assert_memory_equal(vp + vp[1], want, sizeof want);
  jfa_params q = p;
  q.block_mask = mb, q.block_mask_mode = JFA_MASK_PER_BATCH, q.block_mask_bytes = 4;
  assert_int_equal(jfa_check_params(&q, NULL), TILE_OK);
  assert_int_equal(jfa_block_mask_words(&q), 4);
  jfa_block_mask_pack(&q, vp);
  assert_int_equal(vp[0], 2);
  assert_int_equal(vp[1], JFA_VPARAMS);
  int32_t want_b[4] = {3, 2, 1, 3};
  assert_memory_equal(vp + vp[1], want_b, sizeof want_b);
  /* masks of up to 70 x 70 blocks (three words a line): every bit read back
   * both ways, as variants/blocksparse.tile reads it */
  uint64_t y = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < 20; round++) {
    int32_t o[4] = {0};
    int64_t bytes = 0;
    for (int b = 0; b < 3; b++) {
      o[b + 1] = o[b] + (int32_t)(tu_xorshift(&y) % (70 * 128));
      bytes += ((o[b + 1] - o[b] + 127) / 128) * ((o[b + 1] - o[b] + 127) / 128);
    }
    uint8_t *m = malloc(3 * 71 * 71); /* room for either mode's bytes */
    for (int64_t i = 0; i < 3 * 71 * 71; i++) m[i] = tu_xorshift(&y) % 3 == 0;
    jfa_params r = params();
    r.batch = 3, r.cu_seqlens = o, r.block_mask = m, r.block_mask_mode = JFA_MASK_PER_SEQUENCE;
    r.block_mask_bytes = bytes;
    int per_batch = round % 2;
    if (per_batch) { /* one mask of the largest sequence's size (or one more) */
      int64_t n = 0;
      for (int b = 0; b < 3; b++) n = (o[b + 1] - o[b] + 127) / 128 > n ? (o[b + 1] - o[b] + 127) / 128 : n;
      n += round % 4 == 1;
      r.block_mask_mode = JFA_MASK_PER_BATCH, r.block_mask_bytes = n * n;
    }
    assert_int_equal(jfa_check_params(&r, NULL), TILE_OK);
    size_t words = JFA_VPARAMS + jfa_block_mask_words(&r);
    int32_t *v = malloc(words * 4);
    jfa_block_mask_pack(&r, v);
    int64_t byte = 0;
    for (int b = 0; b < 3; b++) {
      int64_t nb = (o[b + 1] - o[b] + 127) / 128, n = per_batch ? v[0] : nb;
      const int32_t *mw = v + v[1] + (per_batch ? 0 : v[JFA_VPARAMS + b]);
      const uint8_t *mm = m + (per_batch ? 0 : byte);
      int64_t w = (n + 31) / 32;
      for (int64_t qm = 0; qm < nb; qm++)
        for (int64_t kn = 0; kn < nb; kn++) {
          int bit = mm[qm * n + kn];
          assert_int_equal(((uint32_t)mw[qm * w + kn / 32] >> (kn % 32)) & 1, bit);
          assert_int_equal(((uint32_t)mw[(n + kn) * w + qm / 32] >> (qm % 32)) & 1, bit);
        }
      assert_true(mw + 2 * n * w <= v + words);
      byte += nb * nb;
    }
    free(v);
    free(m);
  }
  /* bad masks */
  q = p, q.block_mask_bytes = 5;
  expect_err(jfa_check_params(&q, NULL), "need 6");
  q = p, q.block_mask_mode = JFA_MASK_PER_BATCH, q.block_mask_bytes = 1;
  expect_err(jfa_check_params(&q, NULL), "the longest sequence has 2 blocks");
  q = p, q.block_mask_mode = JFA_MASK_PER_BATCH, q.block_mask_bytes = 5;
  expect_err(jfa_check_params(&q, NULL), "not a square");
  uint8_t bad[6] = {1, 0, 1, 0, 255, 1};
  q = p, q.block_mask = bad;
  expect_err(jfa_check_params(&q, NULL), "block_mask[4] is 255");
  q = p, q.block_mask = NULL;
  expect_err(jfa_check_params(&q, NULL), "without a block_mask");
  q = p, q.block_mask_mode = 0;
  expect_err(jfa_check_params(&q, NULL), "block_mask_mode 0");
  q = p, q.softcap = 2;
  expect_err(jfa_check_params(&q, NULL), "one at a time");
  q = p, q.variant = "mine";
  expect_err(jfa_check_params(&q, NULL), "block_mask (build them into it)");
  q = p, q.passes = JFA_BWD, q.deterministic = 1; /* the deterministic backward of a block mask: built */
  assert_int_equal(jfa_check_params(&q, NULL), TILE_OK);
  q = p, q.block_mask_bytes = (int64_t)JFA_MAX_MASK_BYTES + 1;
  expect_err(jfa_check_params(&q, NULL), "out of range");
  q = p, q.batch = 0;
  expect_err(jfa_check_params(&q, NULL), "an empty batch has no blocks");
  /* the backward's items over random masks */
  uint64_t x = 0x2545f4914f6cdd1dull;
  for (int round = 0; round < 40; round++) {
    int32_t o[31];
    int B = 1 + (int)(tu_xorshift(&x) % 30);
    o[0] = 0;
    int64_t bytes = 0;
    for (int b = 0; b < B; b++) {
      o[b + 1] = o[b] + (int32_t)(tu_xorshift(&x) % 1500);
      int64_t nb = (o[b + 1] - o[b] + 127) / 128;
      bytes += nb * nb;
    }
    uint8_t *m = malloc((size_t)bytes + 1);
    for (int64_t i = 0; i < bytes; i++) m[i] = tu_xorshift(&x) % 2;
    jfa_params r = params();
    r.batch = B, r.cu_seqlens = o, r.passes = JFA_BWD, r.causal = round % 2;
    r.block_mask = m, r.block_mask_mode = JFA_MASK_PER_SEQUENCE, r.block_mask_bytes = bytes;
    assert_int_equal(jfa_check_params(&r, NULL), TILE_OK);
    jfa_bwd_items it;
    assert_int_equal(jfa_bwd_items_build(&r, 1 + (int)(tu_xorshift(&x) % 100), 0, 0, &it), TILE_OK);
    int64_t first[31], total = 0;
    first[0] = 0;
    for (int b = 0; b < B; b++) first[b + 1] = first[b] + ((o[b + 1] - o[b] + 127) / 128) * ((o[b + 1] - o[b] + 127) / 128);
    for (int64_t i = 0; i < it.nitems; i++) {
      const int32_t *w = it.work + 8 * i;
      int64_t L = o[w[0] + 1] - o[w[0]], nb = (L + 127) / 128;
      int64_t i0 = r.causal ? (int64_t)w[2] * BWD_KB / BWD_QB : 0, i1 = (L + BWD_QB - 1) / BWD_QB, cost = 0;
      assert_int_equal(w[3], i0);
      assert_int_equal(w[4], i1);
      for (int64_t qi = i0; qi < i1; qi++) cost += m[first[w[0]] + (qi * BWD_QB / 128) * nb + w[2]];
      if (cost == 0) cost = 1; /* a KV block the mask empties still loads K, V and writes zeros: one block */
      assert_int_equal(it.sched.work[4 * i + 3], cost);
      total += cost;
    }
    assert_int_equal(total, it.sched.total_cost);
    jfa_bwd_items_free(&it);
    free(m);
  }
}

/* A huge batch: the offsets (4 entries here) must not be read, not even by
 * the wrappers' max_seqlen check. */
static void test_hostile_batch(void **state) {
  (void)state;
  Set s = self_set();
  BSet b = bwd_set();
  int32_t *off = malloc(4 * sizeof *off); /* exactly 4 entries: ASan sees any read past them */
  memcpy(off, OFF, sizeof TU_JFA_OFF);
  int64_t huge[] = {(int64_t)1 << 40, INT64_MAX, TILE_JAGGED_MAX_BATCH + 1LL, -1, INT64_MIN};
  for (size_t i = 0; i < sizeof huge / sizeof *huge; i++) {
    char want[64];
    snprintf(want, sizeof want, "batch %lld out of range", (long long)huge[i]);
    expect_err(vfwd(&s, off, huge[i], 100), want);
    expect_err(vfwd(&s, off, huge[i], 0), want);
    expect_err(vbwd(&b, off, huge[i], 100), want);
  }
  /* the right batch and no GPU library: everything else was fine */
  expect_err(vfwd(&s, off, 3, 100), "lib is NULL");
  expect_err(vbwd(&b, off, 3, 100), "lib is NULL");
  free(off);
}

/* Offsets at the ends of the int32 and int64 ranges: no signed overflow
 * (sequence lengths are differences), offsets[0] and monotonicity checked
 * before max_seqlen compares lengths, totals within int32 row indices. */
static void test_hostile_offsets(void **state) {
  (void)state;
  Set s = self_set();
  BSet b = bwd_set();
  int32_t ext[2] = {INT32_MIN, INT32_MAX}; /* INT32_MAX - INT32_MIN overflows int */
  expect_err(vfwd(&s, ext, 1, 10), "offsets[0] is -2147483648");
  expect_err(vbwd(&b, ext, 1, 10), "offsets[0] is -2147483648");
  int32_t neg[2] = {-5, 100}; /* a "length" of 105 */
  expect_err(vfwd(&s, neg, 1, 50), "offsets[0] is -5");
  int32_t dec[3] = {0, INT32_MAX, INT32_MIN}; /* INT32_MIN - INT32_MAX overflows int */
  expect_err(vfwd(&s, dec, 2, 10), "offsets decrease at index 2");
  int32_t big[2] = {0, INT32_MAX}; /* int32 offsets, but rows past the kernel's int32 arithmetic */
  expect_err(vfwd(&s, big, 1, 0), "too large for 32-bit row indices");
  expect_err(vfwd(&s, OFF, 3, -1), "max_seqlen -1");
  expect_err(vfwd(&s, OFF, 3, 99), "sequence 0 has 100 rows, more than max_seqlen = 99");
  /* int64 offsets */
  jfa_params p = params();
  int64_t e64[3] = {0, INT64_MAX, INT64_MIN};
  p.cu_seqlens = e64, p.cu_seqlens_64bit = 1, p.batch = 1;
  expect_err(jfa_check_params(&p, NULL), "too large for 32-bit row indices");
  p.batch = 2;
  expect_err(jfa_check_params(&p, NULL), "offsets decrease at index 2");
  int64_t n64[2] = {INT64_MIN, 0};
  p.cu_seqlens = n64, p.batch = 1;
  expect_err(jfa_check_params(&p, NULL), "offsets[0] is -9223372036854775808");
  p.batch = 0;
  expect_err(jfa_check_params(&p, NULL), "offsets[0] is -9223372036854775808");
}

/* Strides: positive, their byte products and every tensor's extent without
 * overflow, row strides what the kernels take (int32, 16-byte rows), the
 * LSE dense (the kernels index it without a stride). */
static void test_hostile_strides(void **state) {
  (void)state;
  jfa_params p = params();
  Set s = self_set();
  s.q.stride[0] = (int64_t)1 << 62; /* x 2 bytes overflowed int64, and passed the 16-byte test */
  expect_err(run(&p, &s), "q's row stride 4611686018427387904 is too large");
  s = self_set(); s.k.stride[0] = INT64_MAX;
  expect_err(run(&p, &s), "k's row stride");
  s = self_set(); s.v.stride[0] = (int64_t)1 << 58; /* 199 x 2^58 x 2 bytes: past 2^64 */
  expect_err(run(&p, &s), "v's row stride");
  s = self_set(); s.q.stride[0] = (int64_t)INT32_MAX + 1; /* the kernels take row strides as int32 */
  expect_err(run(&p, &s), "q's row stride 2147483648 is too large");
  s = self_set(); s.q.stride[0] = -256;
  expect_err(run(&p, &s), "q has stride[0] = -256; strides must be positive");
  /* a tensor that ends past the top of the address space */
  s = self_set(); s.k.data = ~(tile_devptr)0 - 0xffff; /* 16-byte aligned, 64 KiB below 2^64 */
  expect_err(run(&p, &s), "k (102400 bytes at 0xffffffffffff0000) runs past the end of the address space");
  /* one row and one head: the strides of size-1 dimensions must still be positive */
  int32_t one[2] = {0, 1};
  p.batch = 1, p.cu_seqlens = one, p.heads = 1;
  Set t;
  t3(&t.q, 1 << 20, "bf16", 1, 1, 128);
  t3(&t.k, 2 << 20, "bf16", 1, 1, 128);
  t3(&t.v, 3 << 20, "bf16", 1, 1, 128);
  t3(&t.o, 4 << 20, "bf16", 1, 1, 128);
  memset(&t.lse, 0, sizeof t.lse);
  t.lse.data = 5 << 20, t.lse.dtype = "f32", t.lse.rank = 2;
  t.lse.shape[0] = 1, t.lse.shape[1] = 1, t.lse.stride[0] = 1, t.lse.stride[1] = 1;
  assert_int_equal(jfa_check_tensors(&p, 1, &t.q, &t.k, &t.v, &t.o, &t.lse), TILE_OK);
  Set u = t;
  u.q.stride[0] = -256;
  expect_err(jfa_check_tensors(&p, 1, &u.q, &u.k, &u.v, &u.o, &u.lse), "q has stride[0] = -256");
  u = t, u.k.stride[1] = -128;
  expect_err(jfa_check_tensors(&p, 1, &u.q, &u.k, &u.v, &u.o, &u.lse), "k has stride[1] = -128");
  u = t, u.o.stride[0] = 0;
  expect_err(jfa_check_tensors(&p, 1, &u.q, &u.k, &u.v, &u.o, &u.lse), "o has stride[0] = 0");
  u = t, u.lse.stride[0] = INT64_MIN;
  expect_err(jfa_check_tensors(&p, 1, &u.q, &u.k, &u.v, &u.o, &u.lse), "lse has stride[0]");
  u = t, u.q.stride[0] = 64; /* one row, but TMA still needs the row stride >= the row */
  expect_err(jfa_check_tensors(&p, 1, &u.q, &u.k, &u.v, &u.o, &u.lse), "q rows overlap");
  /* empty tensors (a batch of empty sequences): strides never used, 0 or
   * torch's 1 are fine */
  int32_t none[3] = {0, 0, 0};
  p = params();
  p.batch = 2, p.cu_seqlens = none;
  Set e = self_set();
  jfa_tensor *ee[] = {&e.q, &e.k, &e.v, &e.o};
  for (int i = 0; i < 4; i++) ee[i]->shape[0] = 0;
  e.lse.shape[1] = 0, e.lse.stride[0] = 0; /* examples/jagged_attention/jfa_test.h's [H, total] */
  assert_int_equal(jfa_check_tensors(&p, 0, &e.q, &e.k, &e.v, &e.o, &e.lse), TILE_OK);
  e.lse.stride[0] = 1; /* torch.empty(2, 0).stride() */
  assert_int_equal(jfa_check_tensors(&p, 0, &e.q, &e.k, &e.v, &e.o, &e.lse), TILE_OK);
  e.q.data = e.o.data; /* no bytes: no overlap */
  assert_int_equal(jfa_check_tensors(&p, 0, &e.q, &e.k, &e.v, &e.o, &e.lse), TILE_OK);
  /* the LSE is indexed densely: [H, total] with a padded row is wrong */
  p = params();
  s = self_set(); s.lse.stride[0] = 208;
  expect_err(run(&p, &s), "lse must be dense");
  /* broadcast-Q, one sequence, one query: o [1, 1, H, D]; its row stride
   * is stride[1], the kernels' o_stride, though that dimension has one
   * element */
  int32_t off1[2] = {0, 200};
  p = params();
  p.batch = 1, p.cu_seqlens = off1, p.num_q = 1;
  s = self_set();
  t3(&s.q, 1 << 20, "bf16", 1, 2, 128);
  memset(&s.o, 0, sizeof s.o);
  s.o.data = 4 << 20, s.o.dtype = "bf16", s.o.rank = 4;
  int64_t osh[4] = {1, 1, 2, 128}, ost[4] = {256, 256, 128, 1};
  memcpy(s.o.shape, osh, sizeof osh);
  memcpy(s.o.stride, ost, sizeof ost);
  t3(&s.lse, 5 << 20, "f32", 1, 2, 1);
  assert_int_equal(run(&p, &s), TILE_OK);
  Set bad = s;
  bad.o.stride[1] = 3;
  expect_err(run(&p, &bad), "o rows overlap (stride[1] = 3 < 256)");
  bad.o.stride[1] = 260;
  expect_err(run(&p, &bad), "o rows must start 16 bytes apart (row stride 260");
  bad.o.stride[1] = (int64_t)1 << 31;
  expect_err(run(&p, &bad), "o's row stride 2147483648 is too large");
}

/* Outputs share no byte with an input or with each other: forward (o, lse)
 * and backward (dq, dk, dv), through the wrappers too. */
static void test_hostile_alias(void **state) {
  (void)state;
  jfa_params p = params();
  Set s = self_set(); /* 1 MiB apart; each of q, k, v, o is 102400 bytes */
  assert_int_equal(run(&p, &s), TILE_OK);
  Set a = s;
  a.o.data = s.q.data;
  expect_err(run(&p, &a), "o and q overlap in memory");
  a = s, a.o.data = s.v.data + 102400 - 16; /* o's first row is v's last */
  expect_err(run(&p, &a), "o and v overlap in memory");
  a = s, a.o.data = s.v.data + 102400; /* right after v: fine */
  assert_int_equal(run(&p, &a), TILE_OK);
  a = s, a.lse.data = s.k.data + 1024;
  expect_err(run(&p, &a), "lse and k overlap in memory");
  a = s, a.lse.data = s.o.data + 512;
  expect_err(run(&p, &a), "o and lse overlap in memory");
  a = s, a.q.data = s.k.data; /* inputs may share memory */
  assert_int_equal(run(&p, &a), TILE_OK);
  /* the wrappers check the tensors before a plan exists */
  a = s, a.o.data = s.q.data;
  expect_err(vfwd(&a, OFF, 3, 0), "o and q overlap in memory");
  BSet b = bwd_set();
  b.dq.data = b.f.k.data;
  expect_err(vbwd(&b, OFF, 3, 0), "dq and k overlap in memory");
  /* the backward: an output whose extent wrapped around 2^64 used to look empty */
  b = bwd_set();
  b.dk.data = ~(tile_devptr)0 - 0xffff;
  expect_err(brun(&p, &b), "dk (102400 bytes at 0xffffffffffff0000) runs past the end of the address space");
}

/* total_rows must agree with the offsets and fit the kernels' rows; negative
 * or mismatched totals with tensors of that shape were accepted. */
static void test_hostile_totals(void **state) {
  (void)state;
  jfa_params p = params();
  Set s = self_set();
  Set n = s;
  jfa_tensor *all[] = {&n.q, &n.k, &n.v, &n.o};
  for (int i = 0; i < 4; i++) all[i]->shape[0] = -1;
  n.lse.shape[1] = -1;
  expect_err(jfa_check_tensors(&p, -1, &n.q, &n.k, &n.v, &n.o, &n.lse), "total_rows -1 out of range");
  Set m = s;
  jfa_tensor *allm[] = {&m.q, &m.k, &m.v, &m.o};
  for (int i = 0; i < 4; i++) allm[i]->shape[0] = 300;
  m.lse.shape[1] = 300, m.lse.stride[0] = 300;
  expect_err(jfa_check_tensors(&p, 300, &m.q, &m.k, &m.v, &m.o, &m.lse),
             "total_rows 300 does not match offsets[3] = 200");
  expect_err(jfa_check_tensors(&p, (int64_t)1 << 40, &s.q, &s.k, &s.v, &s.o, &s.lse), "total_rows");
  BSet b = bwd_set();
  expect_err(jfa_check_bwd_tensors(&p, 300, &b.dout, &b.f.q, &b.f.k, &b.f.v, &b.f.o, &b.f.lse, &b.dq, &b.dk, &b.dv),
             "total_rows 300 does not match");
  /* an empty batch has no rows */
  p.batch = 0;
  p.cu_seqlens = NULL;
  expect_err(jfa_check_tensors(&p, 200, &s.q, &s.k, &s.v, &s.o, &s.lse), "an empty batch has no rows");
}

/* heads, head_dim, num_q and batch in range whatever the batch (an empty
 * batch skipped them), and in the wrappers before q's int64 shape becomes an
 * int. */
static void test_hostile_ranges(void **state) {
  (void)state;
  jfa_params p = params();
  p.batch = 0;
  p.heads = INT32_MAX;
  expect_err(jfa_check_params(&p, NULL), "heads 2147483647");
  p = params();
  p.batch = 0;
  p.num_q = INT64_MAX;
  expect_err(jfa_check_params(&p, NULL), "num_q 9223372036854775807");
  size_t bytes = 1;
  expect_err(jfa_bwd_workspace_bytes(&p, &bytes), "num_q"); /* num_q x H x D x 4 overflowed */
  assert_int_equal(bytes, 0);
  p = params();
  p.num_q = (int64_t)1 << 30;
  expect_err(jfa_check_params(&p, NULL), "num_q");
  p = params();
  p.num_q = 805306368; /* 3 << 28 fits int32, but B x num_q output rows do not */
  expect_err(jfa_check_params(&p, NULL), "3 x 805306368 output rows");
  p = params();
  p.passes = JFA_BWD;
  p.heads = 70000, p.head_dim = 64; /* the backward's grids have one program row per head */
  expect_err(jfa_check_params(&p, NULL), "heads 70000");
  p.passes = JFA_FWD;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  expect_err(jfa_bwd_workspace_bytes(&p, &bytes), "heads 70000");
  p = params();
  p.num_q = -1; /* jfa_check_tensors alone took it for self-attention */
  Set s = self_set();
  expect_err(run(&p, &s), "num_q must be >= 0");
  p = params();
  p.head_dim = 0;
  expect_err(run(&p, &s), "head_dim 0");
  /* the wrappers read heads and head_dim from q's shape */
  p = params();
  s = self_set();
  s.q.shape[1] = ((int64_t)1 << 32) + 2; /* was cast to int: 2 heads */
  expect_err(vfwd(&s, OFF, 3, 0), "q has 4294967298 heads");
  s = self_set();
  s.q.shape[2] = ((int64_t)1 << 32) + 128;
  expect_err(vfwd(&s, OFF, 3, 0), "head_dim 4294967424 is not supported");
  s = self_set();
  s.q.shape[1] = 0;
  expect_err(vfwd(&s, OFF, 3, 0), "q has 0 heads");
}

/* NULL pointers anywhere: an error, never a crash. */
static void test_hostile_null(void **state) {
  (void)state;
  int64_t a = 1, b = 1, c = 1;
  int ctas = 1;
  jfa_plan_stats(NULL, &a, &b, &c, &ctas);
  assert_true(a == 0 && b == 0 && c == 0 && ctas == 0);
  a = b = 1;
  jfa_plan_split_stats(NULL, &a, &b);
  assert_true(a == 0 && b == 0);
  jfa_plan_bwd_stats(NULL, &a, &b, &c, &ctas);
  Set s = self_set();
  BSet bs = bwd_set();
  expect_err(jfa_varlen_fwd(NULL, &s.q, NULL, &s.v, &s.o, &s.lse, OFF, 3, 0, 0, 0.0f, NULL), "k is NULL");
  expect_err(jfa_varlen_fwd(NULL, &s.q, &s.k, &s.v, &s.o, NULL, OFF, 3, 0, 0, 0.0f, NULL), "lse is NULL");
  expect_err(jfa_varlen_fwd(NULL, NULL, &s.k, &s.v, &s.o, &s.lse, OFF, 3, 0, 0, 0.0f, NULL), "q is NULL");
  expect_err(jfa_varlen_fwd(NULL, &s.q, &s.k, &s.v, &s.o, &s.lse, NULL, 3, 100, 0, 0.0f, NULL), "cu_seqlens is NULL");
  expect_err(jfa_varlen_bwd(NULL, NULL, &bs.f.q, &bs.f.k, &bs.f.v, &bs.f.o, &bs.f.lse, &bs.dq, &bs.dk, &bs.dv, OFF, 3, 0,
                            0, 0.0f, 0, NULL),
             "dout is NULL");
  expect_err(jfa_varlen_bwd(NULL, &bs.dout, &bs.f.q, &bs.f.k, &bs.f.v, &bs.f.o, &bs.f.lse, &bs.dq, &bs.dk, NULL, OFF,
                            3, 0, 0, 0.0f, 0, NULL),
             "dv is NULL");
  s.q.dtype = NULL;
  expect_err(vfwd(&s, OFF, 3, 0), "q must be bf16, not (none)");
  jfa_params p = params();
  expect_err(jfa_check_bwd_tensors(NULL, 200, &bs.dout, &bs.f.q, &bs.f.k, &bs.f.v, &bs.f.o, &bs.f.lse, &bs.dq, &bs.dk,
                                   &bs.dv),
             "params is NULL");
  expect_err(jfa_check_bwd_tensors(&p, 200, &bs.dout, &bs.f.q, &bs.f.k, &bs.f.v, &bs.f.o, &bs.f.lse, NULL, &bs.dk,
                                   &bs.dv),
             "dq is NULL");
}

/* the variants' parameters (issue 17): checked with the rest, before any launch */
static void test_variant_params(void **state) {
  (void)state;
  jfa_params p = params();
  p.window = 1, p.window_left = 100, p.window_right = 0;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  p.window_left = -1, p.window_right = -1; /* unbounded both ways: allowed (self-attention) */
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  p.window_left = -2;
  expect_err(jfa_check_params(&p, NULL), "window_left -2");
  p.window_left = 1 << 30; /* the kernel adds extents to positions in 32 bits */
  expect_err(jfa_check_params(&p, NULL), "each is 0 .. 1073741823");
  p.window_left = 100;
  int64_t huge[2] = {0, (int64_t)1 << 30};
  p.cu_seqlens = huge, p.cu_seqlens_64bit = 1, p.batch = 1;
  expect_err(jfa_check_params(&p, NULL), "sequences under 1073741824");
  p = params();
  p = params();
  p.window = 2;
  expect_err(jfa_check_params(&p, NULL), "window must be 0 or 1");
  p = params();
  p.window = 1, p.causal = 1;
  expect_err(jfa_check_params(&p, NULL), "a causal window is window_right = 0");
  p = params();
  p.window = 1, p.num_q = 64;
  expect_err(jfa_check_params(&p, NULL), "for self-attention");
  p = params();
  p.window = 1, p.passes = JFA_FWD | JFA_BWD;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  p.deterministic = 1; /* the deterministic backward of a window: built */
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  p = params();
  p.softcap = 30.0f;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  p.causal = 1; /* soft-capped causal attention: built */
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  p.causal = 0;
  p.window = 1;
  expect_err(jfa_check_params(&p, NULL), "one at a time");
  float slopes[2] = {0.5f, 0.25f};
  p = params();
  p.alibi_slopes = slopes;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  p.causal = 1;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  p.softcap = 2.0f;
  expect_err(jfa_check_params(&p, NULL), "one at a time");
  p.softcap = 0.0f;
  slopes[1] = 1.0f / 0.0f;
  expect_err(jfa_check_params(&p, NULL), "alibi_slopes[1] is not finite");
  slopes[1] = 0.25f;
  p.causal = 0, p.passes = JFA_FWD | JFA_BWD, p.deterministic = 1;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  /* a variant of the caller's: its name names a cubin */
  int32_t words[3] = {1, 2, 3};
  p = params();
  p.variant = "sink_window";
  p.variant_args = words, p.nvariant_args = 3;
  assert_int_equal(jfa_check_params(&p, NULL), TILE_OK);
  p.variant = "../etc";
  expect_err(jfa_check_params(&p, NULL), "[a-z0-9_]");
  p.variant = "";
  expect_err(jfa_check_params(&p, NULL), "1 to 40 characters");
  p.variant = "mine", p.softcap = 1.0f;
  expect_err(jfa_check_params(&p, NULL), "without window, softcap");
  p.softcap = 0, p.nvariant_args = -1;
  expect_err(jfa_check_params(&p, NULL), "nvariant_args -1");
  p.nvariant_args = 2, p.variant_args = NULL;
  expect_err(jfa_check_params(&p, NULL), "variant_args not NULL");
  p = params();
  p.variant_args = words, p.nvariant_args = 1;
  expect_err(jfa_check_params(&p, NULL), "variant_args without a variant");
  p = params();
  p.softcap = -1.0f;
  expect_err(jfa_check_params(&p, NULL), "softcap must be finite");
  p.softcap = 0.0f / 0.0f;
  expect_err(jfa_check_params(&p, NULL), "softcap must be finite");
  p.softcap = 1.0f / 0.0f;
  expect_err(jfa_check_params(&p, NULL), "softcap must be finite");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_params),
      cmocka_unit_test(test_variant_params),
      cmocka_unit_test(test_tensors_self),
      cmocka_unit_test(test_tensors_bcast),
      cmocka_unit_test(test_plan_create_checks_first),
      cmocka_unit_test(test_bwd_tensors),
      cmocka_unit_test(test_bwd_params),
      cmocka_unit_test(test_bwd_workspace),
      cmocka_unit_test(test_block_mask),
      cmocka_unit_test(test_hostile_batch),
      cmocka_unit_test(test_hostile_offsets),
      cmocka_unit_test(test_hostile_strides),
      cmocka_unit_test(test_hostile_alias),
      cmocka_unit_test(test_hostile_totals),
      cmocka_unit_test(test_hostile_ranges),
      cmocka_unit_test(test_hostile_null),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

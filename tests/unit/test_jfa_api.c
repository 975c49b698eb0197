/* test_jfa_api.c - the JFA host API's input checks (examples/jagged_attention/
 * jfa.h), which run before anything touches the GPU: bad offsets, head dims,
 * modes, and every tensor property the kernel relies on (dtype, rank, shape,
 * contiguity, 16-byte alignment of bases and rows) give TILE_ERR_INVALID
 * with a message that names the problem; the same for the backward pass
 * (its gradients and dO, outputs that alias inputs, the passes and
 * deterministic fields) and its workspace size. */
#include "testutil.h"

#include "../../examples/jagged_attention/jfa.c"
#include "../../examples/jagged_attention/jfa_bwd.c"
#include "../../examples/jagged_attention/jfa_check.c"

static int32_t OFF[4] = {0, 100, 150, 200};

static jfa_params params(void) {
  jfa_params p = {0};
  p.batch = 3;
  p.cu_seqlens = OFF;
  p.heads = 2;
  p.head_dim = 128;
  return p;
}

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

static Set self_set(void) {
  Set s;
  t3(&s.q, 0x10000, "bf16", 200, 2, 128);
  t3(&s.k, 0x20000, "bf16", 200, 2, 128);
  t3(&s.v, 0x30000, "bf16", 200, 2, 128);
  t3(&s.o, 0x40000, "bf16", 200, 2, 128);
  memset(&s.lse, 0, sizeof s.lse);
  s.lse.data = 0x50000, s.lse.dtype = "f32", s.lse.rank = 2;
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
  t3(&s.q, 0x10000, "bf16", 70, 2, 128);
  memset(&s.o, 0, sizeof s.o);
  s.o.data = 0x40000, s.o.dtype = "bf16", s.o.rank = 4;
  int64_t osh[4] = {3, 70, 2, 128}, ost[4] = {70 * 256, 256, 128, 1};
  memcpy(s.o.shape, osh, sizeof osh);
  memcpy(s.o.stride, ost, sizeof ost);
  t3(&s.lse, 0x50000, "f32", 3, 2, 70);
  assert_int_equal(run(&p, &s), TILE_OK);
  Set bad = s;
  bad.o.stride[0] = 70 * 256 + 8;
  expect_err(run(&p, &bad), "o's batch stride");
  bad = s;
  bad.lse.shape[2] = 64;
  expect_err(run(&p, &bad), "lse has shape [3, 2, 64]; expected [3, 2, 70]");
  bad = s;
  t3(&bad.q, 0x10000, "bf16", 200, 2, 128); /* a jagged Q in broadcast mode */
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

/* every tensor 1 MB apart: no two share a byte */
static BSet bwd_set(void) {
  BSet s;
  s.f = self_set();
  jfa_tensor *all[] = {&s.f.q, &s.f.k, &s.f.v, &s.f.o, &s.f.lse};
  for (int i = 0; i < 5; i++) all[i]->data = (tile_devptr)(i + 1) << 20;
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

/* the workspace: the f32 dQ accumulator, two rows of 64 floats per (head,
 * query block) and the query blocks' (sequence, block) map; deterministic
 * mode adds a counter per (head, query block) */
static void test_bwd_workspace(void **state) {
  (void)state;
  jfa_params p = params(); /* lengths 100, 50, 50: 2 + 1 + 1 query blocks of 64 */
  size_t bytes = 0;
  assert_int_equal(jfa_bwd_workspace_bytes(&p, &bytes), TILE_OK);
  size_t acc = 200 * 2 * 128 * 4, ws = 2 * (size_t)(2 * 4) * 64 * 4, map = 4 * 8;
  assert_int_equal(bytes, acc + ws + map);
  p.deterministic = 1;
  assert_int_equal(jfa_bwd_workspace_bytes(&p, &bytes), TILE_OK);
  assert_int_equal(bytes, acc + ws + map + 2 * 4 * 4);
  /* broadcast-Q, 70 queries: 2 blocks per (sequence, head); dQ is [70, H, D] */
  p = params();
  p.num_q = 70;
  assert_int_equal(jfa_bwd_workspace_bytes(&p, &bytes), TILE_OK);
  assert_int_equal(bytes, (size_t)70 * 2 * 128 * 4 + 2 * (size_t)(3 * 2 * 2) * 64 * 4);
  p.head_dim = 80;
  expect_err(jfa_bwd_workspace_bytes(&p, &bytes), "head_dim 80");
  expect_err(jfa_bwd_workspace_bytes(&p, NULL), "bytes is NULL");
}

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
  assert_int_equal(jfa_bwd_items_build(p, ctas, &it), TILE_OK);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_params),
      cmocka_unit_test(test_tensors_self),
      cmocka_unit_test(test_tensors_bcast),
      cmocka_unit_test(test_plan_create_checks_first),
      cmocka_unit_test(test_bwd_tensors),
      cmocka_unit_test(test_bwd_params),
      cmocka_unit_test(test_bwd_workspace),
      cmocka_unit_test(test_bwd_det_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

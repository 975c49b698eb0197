/* test_jfa_api.c - the JFA host API's input checks (examples/jagged_attention/
 * jfa.h), which run before anything touches the GPU: bad offsets, head dims,
 * modes, and every tensor property the kernel relies on (dtype, rank, shape,
 * contiguity, 16-byte alignment of bases and rows) give TILE_ERR_INVALID
 * with a message that names the problem. */
#include "testutil.h"

#include "../../examples/jagged_attention/jfa.c"

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_params),
      cmocka_unit_test(test_tensors_self),
      cmocka_unit_test(test_tensors_bcast),
      cmocka_unit_test(test_plan_create_checks_first),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_pipeline.c - unit tests for compiler/pipeline.c and
 * pipeline_multi.c, as seen in TILEC_EMIT_TIR output: a dot in a K loop
 * staged through TMA or cp.async rings and run on wgmma (the single-dot
 * form), and loops of 2 to 4 dots (Triton's attention forward and
 * backward: rings, staged operands, A from registers, the waits), with the
 * reasons a loop is not pipelined. The TIR text helpers are testutil.h's. */
#include "tilec_int.h"
#include "testutil.h"

static char *spliced(const char *src, const char *from, const char *to) {
  const char *at = strstr(src, from);
  assert_non_null(at);
  size_t n = strlen(src) + strlen(to) + 1;
  char *m = malloc(n);
  snprintf(m, n, "%.*s%s%s", (int)(at - src), src, to, at + strlen(from));
  return m;
}

/* pipeline_multi.c's two dots in a loop (Triton's attention forward): K
 * and V through rings of cp.async copies (--no-tma-rings; TMA's form is
 * test_pipelined_multi_tma's), Q stored once into shared memory before the
 * first loop, P from registers; each dot a wgmma waited for at once; the
 * masked loop after reuses the rings. */
static char *attn_fwd_tir(const char *src, const tilec_define *defs, int nd) {
  char *t = tir_dn(src, defs, nd, 1);
  char *end = strstr(t, "kernel @attn_bwd_pre");
  assert_non_null(end);
  *end = 0; /* attn_fwd alone */
  return t;
}

static void test_pipelined_pair(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/fused_attention/fused_attention.tile", TILE_SRC_DIR);
  char *src = tu_read_file(path, NULL);
  assert_non_null(src);
  char *t = attn_fwd_tir(src, NULL, 0);
  has(t, "// pipeline: dot at 57:14 and the one after it pipelined: 4 stages of 2 tiles through cp.async (copies 3 iterations "
         "ahead; not TMA: --no-tma-rings) into 128-byte swizzled shared memory (65536 bytes), the second's a from registers",
      "the first loop's note");
  has(t, "(65536 bytes, the rings of the loop before)", "the second loop's note");
  has(t, "smem<f16, [128, 64] x 1, swizzle 128>", "Q, staged");
  assert_int_equal(op_count(t, "dot"), 0);
  assert_int_equal(op_count(t, "mma_async"), 4);
  assert_int_equal(op_count(t, "smem_store"), 1); /* Q once, for both loops */
  assert_int_equal(op_count(t, "smem_alloc"), 3);
  /* per loop (4 stages: copies 3 ahead): 3 prologue iterations and 1 in the body, of K and V */
  assert_int_equal(op_count(t, "async_copy"), 16);
  assert_int_equal(op_count(t, "async_commit"), 8);
  assert_int_equal(op_count(t, "load"), 1); /* Q's own load, before the loops */
  const char *ss = strstr(t, "smem_store"), *body = strstr(t, "  do (");
  assert_true(ss && body && ss < body);
  const char *aw = strstr(body, "async_wait"), *fe = strstr(body, "fence_async_shared"),
             *bar = strstr(body, "named_barrier id=0 threads=256"), *cp = strstr(body, "async_copy"),
             *m1 = strstr(body, "mma_async"), *w1 = m1 ? strstr(m1, "mma_wait 0") : NULL,
             *m2 = w1 ? strstr(w1, "mma_async") : NULL, *w2 = m2 ? strstr(m2, "mma_wait 0") : NULL;
  assert_true(aw && fe && bar && cp && m1 && w1 && m2 && w2);
  assert_true(aw < fe && fe < bar && bar < cp && cp < m1);
  every_tile_has_layout(t);
  free(t);
  /* what stops it, said */
  tilec_define s0 = {"STAGES", "0"}; /* attn_fwd's stages(STAGES) */
  t = attn_fwd_tir(src, &s0, 1);
  has(t, "dot at 57:14 and the one after it not pipelined: stages(0)", "stages(0)");
  assert_int_equal(op_count(t, "mma_async"), 0);
  free(t);
  tilec_define w4 = {"FWARPS", "4"};
  t = attn_fwd_tir(src, &w4, 1);
  has(t, "not pipelined: each warpgroup computes 64 rows on wgmma, so M must be 16 x warps", "M = 128 on 4 warps");
  assert_int_equal(op_count(t, "dot"), 4);
  free(t);
  free(src);
}

/* pipeline_multi.c's three and four dots in a loop (Triton's attention
 * backward): dK/dV's loop reads Q and dO from rings (each tile by two
 * dots, one transposed), K and V staged before the loop, P^T and dS^T from
 * registers; dQ's loop reads K and V from rings, Q and dO staged. The
 * kernel named alone, from "kernel @name(" to the next kernel. */
static char *kernel_tir_n(const char *src, const char *name, const tilec_define *defs, int nd, int rings) {
  char *t = tir_dn(src, defs, nd, rings), head[128];
  snprintf(head, sizeof head, "kernel @%s(", name);
  char *at = strstr(t, head);
  assert_non_null(at);
  char *end = strstr(at + 1, "\nkernel @");
  if (end) end[1] = 0;
  memmove(t, at, strlen(at) + 1);
  return t;
}
/* the cp.async form (--no-tma-rings), which the tests below check in detail */
static char *kernel_tir(const char *src, const char *name, const tilec_define *defs, int nd) {
  return kernel_tir_n(src, name, defs, nd, 1);
}

/* In the first loop body of t: the waits and the copies, then the wgmmas
 * and their waits in the order `want` spells ("A": mma_async, "W1":
 * mma_wait 1). */
static void multi_body_order(const char *t, const char *want) {
  const char *body = strstr(t, "  do (");
  assert_non_null(body);
  const char *aw = strstr(body, "async_wait"), *fe = strstr(body, "fence_async_shared"),
             *bar = strstr(body, "named_barrier id=0 threads=256"), *cp = strstr(body, "async_copy"),
             *m = strstr(body, "mma_async"), *end = strstr(body, "\n  }");
  assert_true(aw && fe && bar && cp && m && end);
  assert_true(aw < fe && fe < bar && bar < cp && cp < m);
  char got[64] = "";
  for (const char *q = body; (q = strstr(q, " mma_")) && q < end; q++) {
    size_t n = strlen(got);
    if (!strncmp(q, " mma_async ", 11)) snprintf(got + n, sizeof got - n, "%sA", n ? " " : "");
    else if (!strncmp(q, " mma_wait ", 10)) snprintf(got + n, sizeof got - n, "%sW%c", n ? " " : "", q[10]);
  }
  assert_string_equal(got, want);
}

static void test_pipelined_multi(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/fused_attention/fused_attention.tile", TILE_SRC_DIR);
  char *src = tu_read_file(path, NULL);
  assert_non_null(src);
  /* dK, dV: four dots */
  char *t = kernel_tir(src, "attn_bwd_dkdv", NULL, 0);
  has(t, "// pipeline: dot at 156:15 and the 3 after it pipelined: 4 stages of 2 tiles through cp.async (copies 3 iterations "
         "ahead; not TMA: --no-tma-rings) into 128-byte swizzled shared memory (32768 bytes), a x b of each dot: staged x ring 1^T "
         "(early); registers x ring 2; staged x ring 2^T (early); registers x ring 1; each dot a wgmma on 2 warpgroups, the early "
         "ones (operands in shared memory) issued together at the first and each waited for where it is used, the "
         "others waited for at once",
      "dkdv's note");
  has(t, "smem<f16, [128, 64] x 1, swizzle 128>", "K or V, staged");
  has(t, "smem<f16, [32, 64] x 4, swizzle 128>", "Q's or dO's ring");
  has(t, "(32768 bytes, the rings of the loop before)", "the partial block's loop, on the same rings");
  assert_int_equal(op_count(t, "smem_alloc"), 4);
  assert_int_equal(op_count(t, "smem_store"), 2); /* K and V, once for both loops */
  assert_int_equal(op_count(t, "mma_async"), 8);
  assert_int_equal(op_count(t, "dot"), 0);
  /* per loop: 3 prologue iterations and 1 in the body, of Q and dO: one copy each, though two dots read each */
  assert_int_equal(op_count(t, "async_copy"), 16);
  assert_int_equal(op_count(t, "async_commit"), 8);
  assert_int_equal(op_count(t, "slice"), 4); /* Q^T and dO^T: views of the slots */
  /* S^T and dP^T issued together, dP^T left running through P^T's softmax and dV */
  multi_body_order(t, "A A W1 A W0 W1 A W0");
  /* K and V (staged: a of S^T and dP^T) have their descriptors made at each wgmma, not hoisted (OPF_FRESH_A) */
  assert_int_equal(op_count(t, "mma_async fresh_a"), 4);
  lacks(t, "fresh_b", "b is never staged here");
  every_tile_has_layout(t);
  free(t);
  /* dQ: three dots */
  t = kernel_tir(src, "attn_bwd_dq", NULL, 0);
  has(t, "// pipeline: dot at 229:14 and the 2 after it pipelined: 4 stages of 2 tiles through cp.async (copies 3 iterations "
         "ahead; not TMA: --no-tma-rings) into 128-byte swizzled shared memory (65536 bytes), a x b of each dot: staged x ring 1^T "
         "(early); staged x ring 2^T (early); registers x ring 1; each dot a wgmma on 2 warpgroups, the early ones",
      "dq's note");
  assert_int_equal(op_count(t, "smem_store"), 2); /* Q and dO */
  assert_int_equal(op_count(t, "mma_async"), 6);
  assert_int_equal(op_count(t, "dot"), 0);
  assert_int_equal(op_count(t, "async_copy"), 16);
  multi_body_order(t, "A A W1 W0 A W0");
  assert_int_equal(op_count(t, "mma_async fresh_a"), 4); /* Q and dO, staged: a of S and dP */
  every_tile_has_layout(t);
  free(t);
  /* the fused kernel, causal: six loops (dK/dV's diagonal, rest and partial
   * blocks, dQ's), the rings of the first for all (dQ's steps of 32 keys, as
   * dK/dV's of 32 queries: the same ring shapes), four tiles staged */
  t = kernel_tir(src, "attn_bwd", (tilec_define[]){{"CAUSAL", "true"}, {"BN2", "32"}}, 2);
  assert_int_equal(op_count(t, "mma_async"), 21);
  assert_int_equal(op_count(t, "dot"), 0);
  assert_int_equal(op_count(t, "smem_store"), 4);
  assert_int_equal(op_count(t, "smem_alloc"), 6);
  {
    int n = 0;
    for (const char *q = t; (q = strstr(q, "the rings of the loop before")); q++) n++;
    assert_int_equal(n, 5);
  }
  every_tile_has_layout(t);
  free(t);
  /* what stops it, said */
  tilec_define st0 = {"BWD_STAGES", "0"}; /* the backward kernels' stages(BWD_STAGES) */
  t = kernel_tir(src, "attn_bwd_dkdv", &st0, 1);
  has(t, "dot at 156:15 and the 3 after it not pipelined: stages(0)", "stages(0)");
  assert_int_equal(op_count(t, "mma_async"), 0);
  free(t);
  tilec_define w4 = {"WARPS", "4"};
  t = kernel_tir(src, "attn_bwd_dq", &w4, 1);
  has(t, "dot at 229:14 not pipelined: each warpgroup computes 64 rows on wgmma, so M must be 16 x warps",
      "M = 128 on 4 warps");
  assert_int_equal(op_count(t, "mma_async"), 0);
  free(t);
  /* a tile the loop loads that something besides the dots reads stays a load: the dot refused */
  char *s1 = spliced(src, "    let dsT = pT * (dpT - di[None, :]);",
                     "    let di2 = di + sum(dob as f32, axis = 1) * 0.0;\n    let dsT = pT * (dpT - di2[None, :]);");
  t = kernel_tir(s1, "attn_bwd_dkdv", NULL, 0);
  has(t, "dot at 161:10 not pipelined: b is used by more than the dot", "dO read by more than the dots");
  assert_int_equal(op_count(t, "mma_async"), 0);
  free(t);
  free(s1);
  free(src);
}

/* TMA's rings (pipeline_multi.c), the default where every tile a loop
 * loads is a box of a tensor the host can describe: one thread issues the
 * copies after the barrier, everyone waits on the slot's mbarrier. The
 * forward's unmasked loop reads K and V as rows of a 2-D tensor without a
 * row bound, from row z * n_ctx (the head's base, a scalar offset); the
 * masked loop as plane z of a 3-D tensor of n_ctx rows, so that rows past
 * n_ctx read zeros as its mask says. Each loop has its own mbarriers. */
static void test_pipelined_multi_tma(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/fused_attention/fused_attention.tile", TILE_SRC_DIR);
  char *src = tu_read_file(path, NULL);
  assert_non_null(src);
  char *t = kernel_tir_n(src, "attn_fwd", NULL, 0, 0);
  has(t, "// pipeline: dot at 57:14 and the one after it pipelined: 4 stages of 2 tiles by TMA 3 iterations ahead (one "
         "thread; descriptors the runtime builds at launch) into 128-byte swizzled shared memory (65536 bytes), the "
         "second's a from registers",
      "the first loop's note");
  has(t, "(65536 bytes, the rings of the loop before)", "the second loop's note");
  for (int i = 0; i < 4; i++) {
    char want[64];
    snprintf(want, sizeof want, "__ring_%d: tma<f16, [64, 64], swizzle 128>", i);
    has(t, want, "a descriptor per tensor and form");
  }
  lacks(t, "__ring_4", "a fifth descriptor");
  assert_int_equal(op_count(t, "async_copy"), 0);
  assert_int_equal(op_count(t, "load"), 1); /* Q's own load, before the loops */
  assert_int_equal(op_count(t, "mbarrier_alloc"), 2);
  /* per loop: 3 prologue iterations and 1 in the body, of K and V; the masked loop's in planes */
  assert_int_equal(op_count(t, "tma_load"), 16);
  {
    int n = 0;
    for (const char *q = t; (q = strstr(q, "tma_load plane ")); q++) n++;
    assert_int_equal(n, 8);
  }
  const char *body = strstr(t, "  do (");
  assert_non_null(body);
  const char *bar = strstr(body, "named_barrier id=0 threads=256"), *tl = strstr(body, "tma_load"),
             *bw = strstr(body, "barrier_wait"), *m1 = strstr(body, "mma_async"), *end = strstr(body, "\n  }");
  assert_true(bar && tl && bw && m1 && end);
  assert_true(bar < tl && tl < bw && bw < m1 && m1 < end);
  const char *aw = strstr(body, "async_wait");
  assert_true(!aw || aw > end);
  every_tile_has_layout(t);
  free(t);
  /* the backward's loops of three and four dots keep cp.async, said */
  t = kernel_tir_n(src, "attn_bwd", (tilec_define[]){{"CAUSAL", "true"}, {"BN2", "32"}}, 2, 0);
  has(t, "not TMA: a loop of three or four dots keeps cp.async", "why the backward is not on TMA");
  lacks(t, "__ring_0", "a descriptor");
  assert_int_equal(op_count(t, "tma_load"), 0);
  assert_int_equal(op_count(t, "mma_async"), 21);
  free(t);
  /* --tma-rings=all: the six loops on TMA too (Q and dO, K and V: a 2-D and a planes descriptor each, eight in
   * all), each loop 3 prologue iterations and 1 in the body of two tiles, no cp.async left */
  t = kernel_tir_n(src, "attn_bwd", (tilec_define[]){{"CAUSAL", "true"}, {"BN2", "32"}}, 2, 2);
  lacks(t, "keeps cp.async", "a loop left on cp.async");
  has(t, "dot at 156:15 and the 3 after it pipelined: 4 stages of 2 tiles by TMA 3 iterations ahead", "dK/dV's note");
  has(t, "dot at 229:14 and the 2 after it pipelined: 4 stages of 2 tiles by TMA 3 iterations ahead", "dQ's note");
  has(t, "__ring_7: tma<f16, [32, 64], swizzle 128>", "the eighth descriptor");
  assert_int_equal(op_count(t, "tma_load"), 48);
  assert_int_equal(op_count(t, "async_copy"), 0);
  assert_int_equal(op_count(t, "mbarrier_alloc"), 6);
  assert_int_equal(op_count(t, "mma_async"), 21);
  assert_int_equal(op_count(t, "mma_async fresh_a"), 12); /* S^T, dP^T (K, V staged); S, dP (Q, dO staged) */
  every_tile_has_layout(t);
  free(t);
  /* what keeps cp.async, said: a mask bound the host cannot read */
  char *m = spliced(src, "let inb = offs_n[:, None] < n_ctx;", "let inb = offs_n[:, None] < n_ctx - 1;");
  t = kernel_tir_n(m, "attn_fwd", NULL, 0, 0);
  has(t, "through cp.async (copies 3 iterations ahead; not TMA: its mask's bounds are not parameters or constants)",
      "why not TMA");
  assert_int_equal(op_count(t, "tma_load"), 8); /* the unmasked loop's stay TMA */
  free(t);
  free(m);
  free(src);
}

static void test_pipelined_dot(void **state) {
  (void)state;
  char *t = tir_file("examples/matmul/matmul.tile");
  has(t, "// pipeline: dot at ", "the note");
  has(t, "pipelined: 4 stages (TMA 2 iterations ahead), a [128, 64] K-major and b [64, 256] N-major", "the note");
  has(t, "smem<bf16, [128, 64] x 4, swizzle 128>", "A's ring");
  has(t, "smem<bf16, [64, 256] x 4, swizzle 128>", "B's ring");
  has(t, "mbarrier_alloc offset=0 arrive=1 : mbarrier[4]", "the rings' mbarriers");
  /* the descriptors, derived parameters after the caller's */
  has(t, "%8 ldc: i32 multiple_of(8), %", "the caller's parameters first");
  has(t, "__dot_a: tma<bf16, [128, 64], swizzle 128>", "A's descriptor");
  has(t, "__dot_b: tma<bf16, [64, 64], swizzle 128>", "B's descriptor (four boxes a tile)");
  has(t, "__dot_c: tma<bf16, [128, 64], swizzle 128>", "C's descriptor");
  /* the epilogue: C staged on the B ring's bytes, written by TMA */
  has(t, "// pipeline: store at 48:5 staged in shared memory (on the B ring) and written by TMA", "the store's note");
  has(t, "smem_alloc offset=1024 %119 : smem<bf16, [128, 256], swizzle 128>", "C's staging tile, on the B ring");
  assert_int_equal(op_count(t, "store"), 0);
  assert_int_equal(op_count(t, "smem_store"), 1);
  assert_int_equal(op_count(t, "tma_store"), 1);
  assert_int_equal(op_count(t, "tma_store_wait"), 1);
  {
    const char *e0 = strstr(t, "mma_wait 0"), *ss = strstr(t, "smem_store"), *fe = ss ? strstr(ss, "fence_async_shared") : NULL,
               *ts = strstr(t, "tma_store ");
    assert_true(e0 && ss && fe && ts && e0 < ss && ss < fe && fe < ts);
  }
  assert_int_equal(op_count(t, "dot"), 0);
  assert_int_equal(op_count(t, "load"), 0);
  assert_int_equal(op_count(t, "async_copy"), 0);
  /* prologue: 2 iterations x 2 operands; loop: 2 */
  assert_int_equal(op_count(t, "tma_load"), 6);
  assert_int_equal(op_count(t, "barrier_expect"), 3);
  assert_int_equal(op_count(t, "mma_async"), 1);
  /* in the loop: the barrier (every warpgroup past the wgmma that read the
   * slot refilled), the copies ahead, then this iteration's tiles awaited,
   * the wgmma; one left in flight; nothing waits on copies after the loop */
  const char *body = strstr(t, "  do (");
  assert_non_null(body);
  const char *bar = strstr(body, "named_barrier id=0 threads=256"), *tl = strstr(body, "tma_load"),
             *bw = strstr(body, "barrier_wait"), *mma = strstr(body, "mma_async"), *w1 = strstr(body, "mma_wait 1");
  assert_true(bar && tl && bw && mma && w1);
  assert_true(bar < tl && tl < bw && bw < mma && mma < w1);
  assert_non_null(strstr(w1, "mma_wait 0"));
  assert_null(strstr(w1, "async_wait"));
  every_tile_has_layout(t);
  free(t);
  /* Triton's form: pointers the loop advances by a uniform step, masks
   * against K - k: cp.async. axisinfo keeps them aligned, the copies
   * issued ahead use them advanced, and they are carried in the copies'
   * layout (no conversion through shared memory in the loop) */
  t = tir_file("tests/emu/matmul_ptrinc.tile");
  has(t, "pipelined: 4 stages (copies 2 iterations ahead)", "the note (pointer increments)");
  has(t, "(not TMA: a its addresses are not base + rows * stride + columns)", "why not TMA");
  assert_int_equal(op_count(t, "load"), 0);
  assert_int_equal(op_count(t, "async_copy"), 6);
  assert_int_equal(op_count(t, "async_commit"), 3);
  for (int i = 0; *op_line(t, "convert_layout", i); i++) /* no pointer tile converted */
    lacks(op_line(t, "convert_layout", i), ": *bf16[", "a conversion");
  /* in the loop: wait for this iteration's copies (1 group may stay in
   * flight), fence, barrier, then the wgmma; one wgmma left in flight */
  body = strstr(t, "  do (");
  assert_non_null(body);
  const char *w = strstr(body, "async_wait 1"), *f = strstr(body, "fence_async_shared");
  bar = strstr(body, "named_barrier id=0 threads=256"), mma = strstr(body, "mma_async"), w1 = strstr(body, "mma_wait 1");
  assert_true(w && f && bar && mma && w1);
  assert_true(w < f && f < bar && bar < mma && mma < w1);
  /* after the loop: the last wgmma, then the copies past the end */
  const char *end = strstr(w1, "mma_wait 0");
  assert_non_null(end);
  assert_non_null(strstr(end, "async_wait 0"));
  free(t);
  t = tir_file("tests/emu/matmul_nested.tile");
  has(t, "(not TMA: a the loop is inside another loop)", "why not TMA (nested)");
  free(t);
  /* what keeps the plain lowering, each with its reason */
  static const struct {
    const char *from, *to, *why;
  } no[] = {
      {"warps(WARPS)", "warps(4)", "M must be 16 x warps"},
      {"lda: i32 multiple_of(8)", "lda: i32", "a is not known to be read in aligned 16-byte runs"},
      {"const BK: i32 = 64", "const BK: i32 = 32", "a is not whole 128-byte rows"},
      {"stages(STAGES)", "stages(0)", "not pipelined: stages(0)"},
      {"(ka[None, :] < K), 0.0)", "(ka[None, :] < K), 1.0)", "a is loaded with a nonzero 'other'"},
      {"(ka[None, :] < K), 0.0)", "(ka[None, :] <= K), 0.0)", "a has a mask that does not keep a prefix"},
  };
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/matmul/matmul.tile", TILE_SRC_DIR);
  char *src = tu_read_file(path, NULL);
  assert_non_null(src);
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    char *m = spliced(src, no[i].from, no[i].to);
    t = tir(m);
    has(t, no[i].why, no[i].from);
    assert_int_equal(op_count(t, "mma_async"), 0);
    assert_int_equal(op_count(t, "dot"), 1);
    free(t);
    free(m);
  }
  /* what is pipelined on cp.async instead of TMA, each with its reason */
  static const struct {
    const char *from, *to, *why;
  } copy[] = {
      {"(rm[:, None] < M) & (ka[None, :] < K), 0.0)", "(rm[:, None] < M) & (ka[None, :] < K) & (rm[:, None] < K), 0.0)",
       "(not TMA: a its mask is not (rows < R) & (columns < C))"},
      {"(rm[:, None] < M) & (ka", "(rm[:, None] < M - 1) & (ka", "(not TMA: a its mask's bounds are not parameters"},
      {"load(a + rm[:, None] * lda", "load(a + rm[:, None] * (lda + 8)", "(not TMA: a its row stride is not a parameter"},
      {"load(b + ka[:, None] * ldb", "load(b + 64 + ka[:, None] * ldb", "(not TMA: b its base is not a pointer parameter)"},
      {"(ka[:, None] < K) & (rn[None, :] < N)", "(ka[:, None] < K) & (ka[:, None] < N)",
       "(not TMA: b its mask is not (rows < R) & (columns < C))"},
      {"b: *bf16,", "b: *bf16, __dot_b: i32,", "(not TMA: a a parameter is named like the descriptors"},
  };
  /* the store kept in registers, with its reason */
  static const struct {
    const char *from, *to, *why;
  } st[] = {
      {"ldc: i32 multiple_of(8)", "ldc: i32", "written from registers (not by TMA: its row stride is not known"},
      {"(rn[None, :] < N);", "(rn[None, :] < N - 1);", "(not by TMA: its mask is not (rows < R) & (columns < C)"},
      {"store(c + rm[:, None] * ldc", "store(c + 8 + rm[:, None] * ldc", "(not by TMA: its addresses are not base"},
  };
  for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
    char *m = spliced(src, st[i].from, st[i].to);
    t = tir(m);
    has(t, st[i].why, st[i].from);
    assert_int_equal(op_count(t, "tma_load"), 6);
    assert_int_equal(op_count(t, "tma_store"), 0);
    assert_int_equal(op_count(t, "store"), 1);
    free(t);
    free(m);
  }
  for (size_t i = 0; i < sizeof copy / sizeof copy[0]; i++) {
    char *m = spliced(src, copy[i].from, copy[i].to);
    t = tir(m);
    has(t, copy[i].why, copy[i].from);
    assert_int_equal(op_count(t, "mma_async"), 1);
    assert_int_equal(op_count(t, "tma_load"), 0);
    assert_int_equal(op_count(t, "async_copy"), 6);
    free(t);
    free(m);
  }
  free(src);
}

/* The backward at head dim 128 as mk/tutorials.mk builds it for sm_90a:
 * 128-row blocks (the kernels' default BN1 = BM2 = 128) on 8 warps, each
 * dot's 128 rows on two warpgroups of 64; the tiles staged before the
 * loops [128, 128], the rings' slots [32, 128]; the fused kernel, causal,
 * stages K, V, Q and dO (4 x 32 KiB) and keeps 4 stages of the two rings
 * (64 KiB) within the budget. The 64-row blocks the tutorial had at this
 * head dim are refused on 8 warps, the note saying M and the warps. */
static void test_pipelined_multi_d128(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/fused_attention/fused_attention.tile", TILE_SRC_DIR);
  char *src = tu_read_file(path, NULL);
  assert_non_null(src);
  tilec_define d128[] = {{"HEAD_DIM", "128"}, {"CAUSAL", "true"}},
               b64[] = {{"HEAD_DIM", "128"}, {"BN1", "64"}, {"BM2", "64"}};
  char *t = kernel_tir(src, "attn_bwd_dkdv", d128, 1);
  has(t, "// pipeline: dot at 156:15 and the 3 after it pipelined: 3 stages of 2 tiles through cp.async (copies 2 iterations "
         "ahead; not TMA: --no-tma-rings) into 128-byte swizzled shared memory (49152 bytes), a x b of each dot: staged x ring 1^T "
         "(early); registers x ring 2; staged x ring 2^T (early); registers x ring 1; each dot a wgmma on 2 warpgroups",
      "dkdv's note at d128");
  has(t, "smem<f16, [128, 128] x 1, swizzle 128>", "K or V, staged");
  has(t, "smem<f16, [32, 128] x 3, swizzle 128>", "Q's or dO's ring");
  assert_int_equal(op_count(t, "mma_async"), 8);
  assert_int_equal(op_count(t, "dot"), 0);
  assert_int_equal(op_count(t, "smem_store"), 2);
  multi_body_order(t, "A A W1 A W0 W1 A W0");
  every_tile_has_layout(t);
  free(t);
  t = kernel_tir(src, "attn_bwd_dq", d128, 1);
  has(t, "// pipeline: dot at 229:14 and the 2 after it pipelined: 3 stages of 2 tiles through cp.async (copies 2 iterations "
         "ahead; not TMA: --no-tma-rings) into 128-byte swizzled shared memory (49152 bytes), a x b of each dot: staged x ring 1^T "
         "(early); staged x ring 2^T (early); registers x ring 1; each dot a wgmma on 2 warpgroups",
      "dq's note at d128");
  assert_int_equal(op_count(t, "mma_async"), 6);
  assert_int_equal(op_count(t, "dot"), 0);
  multi_body_order(t, "A A W1 W0 A W0");
  free(t);
  /* the fused kernel, causal: six loops on the first loop's rings, 176 KiB of shared memory in all */
  t = kernel_tir(src, "attn_bwd", d128, 2);
  assert_int_equal(op_count(t, "mma_async"), 21);
  assert_int_equal(op_count(t, "dot"), 0);
  assert_int_equal(op_count(t, "smem_store"), 4);
  assert_int_equal(op_count(t, "smem_alloc"), 6);
  has(t, "smem_alloc offset=155648 : smem<f16, [32, 128] x 3, swizzle 128>", "the last ring, at 152 KiB");
  {
    int n = 0;
    for (const char *q = t; (q = strstr(q, "the rings of the loop before")); q++) n++;
    assert_int_equal(n, 5);
  }
  every_tile_has_layout(t);
  free(t);
  /* 64-row blocks on 8 warps: refused, every dot left for mma.sync */
  t = kernel_tir(src, "attn_bwd_dkdv", b64, 3);
  has(t, "dot at 156:15 not pipelined: each warpgroup computes 64 rows on wgmma, so M must be 16 x warps (M = 64 on 8 "
         "warps)",
      "BN1 = 64 on 8 warps");
  assert_int_equal(op_count(t, "mma_async"), 0);
  assert_int_equal(op_count(t, "dot"), 8);
  free(t);
  t = kernel_tir(src, "attn_bwd_dq", b64, 3);
  has(t, "dot at 229:14 not pipelined: each warpgroup computes 64 rows on wgmma, so M must be 16 x warps (M = 64 on 8 "
         "warps)",
      "BM2 = 64 on 8 warps");
  assert_int_equal(op_count(t, "mma_async"), 0);
  free(t);
  /* head dim 256 on 4 stages: the staged tiles and the rings no longer fit, said */
  t = kernel_tir(src, "attn_bwd_dkdv", (tilec_define[]){{"HEAD_DIM", "256"}, {"BWD_STAGES", "4"}}, 2);
  has(t, "dot at 156:15 and the 3 after it not pipelined: 4 stages of 32768 bytes do not fit in shared memory",
      "d256's rings");
  assert_int_equal(op_count(t, "mma_async"), 0);
  free(t);
  free(src);
}

/* The accumulator of a dot in a loop is #mma in the loop: no conversion of
 * it per iteration, and the loop result is #mma too. */

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pipelined_dot),
      cmocka_unit_test(test_pipelined_pair),
      cmocka_unit_test(test_pipelined_multi),
      cmocka_unit_test(test_pipelined_multi_d128),
      cmocka_unit_test(test_pipelined_multi_tma),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

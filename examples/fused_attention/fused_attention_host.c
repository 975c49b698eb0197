/* fused_attention_host.c - runs fused_attention.tile (Triton's tutorial 06:
 * the forward, the backward's preprocess, dK/dV and dQ kernels, and the
 * fused backward) on random [Z, H, N_CTX, HEAD_DIM] inputs against a float64
 * reference computed from the same 16-bit inputs.
 *
 *   fused_attention_host --cubin FILE [--size Z --size H --size N_CTX] [--trials N] [--bench]
 *
 * The cubin says which variant it is (its constants: HEAD_DIM, CAUSAL, T =
 * f16 or bf16, the block sizes). Sizes are random when not given (N_CTX not a
 * multiple of the blocks included); the first trial's N_CTX is a multiple of
 * every block. Checked: O and M (the log2-sum-exp2 the forward saves), Delta,
 * dQ, dK, dV from the three backward kernels, and dQ, dK, dV again from the
 * fused one. Large shapes (--bench) are checked on a sample: the first and
 * last heads, every step-th row (then dK and dV, which need every row, only
 * where all rows were taken); every element of every output must be finite. */
#include "../common/host.h"

static uint16_t f2h(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000, e = (u >> 23) & 0xff, mant = u & 0x7fffff;
  if (e == 0xff) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
  int ex = (int)e - 127 + 15;
  if (ex >= 31) return (uint16_t)(sign | 0x7c00);
  if (ex <= 0) { /* subnormal or zero: round to nearest even */
    if (ex < -10) return (uint16_t)sign;
    mant |= 0x800000;
    int shift = 14 - ex;
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)ex << 10) | (mant >> 13), rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++; /* may carry into the exponent: still right */
  return (uint16_t)(sign | h);
}
static float h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, mant = h & 0x3ff, u;
  if (e == 0) {
    if (!mant) u = sign;
    else { /* subnormal */
      float f = (float)mant * (1.0f / 16777216.0f);
      return sign ? -f : f;
    }
  } else if (e == 31) u = sign | 0x7f800000 | (mant << 13);
  else u = sign | ((e - 15 + 127) << 23) | (mant << 13);
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static int is_bf16;
static uint16_t to16(float f) { return is_bf16 ? f2bf(f) : f2h(f); }
static double from16(uint16_t h) { return is_bf16 ? bf2f(h) : h2f(h); }

static int const_int(const tile_kernel_info *ki, const char *name, int dflt) {
  const char *v = tile_kernel_const(ki, name);
  return v ? atoi(v) : dflt;
}


static void err_add16(ErrStat *e, uint16_t out, double ref) { err_add(e, from16(out), ref); }
/* every element finite (NaN poison overwritten): counted into e->bad */
static void all_finite16(ErrStat *e, const uint16_t *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(from16(x[i]))) e->bad++;
}
static void all_finite32(ErrStat *e, const float *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) e->bad++;
}

int main(int argc, char **argv) {
  HostArgs a;
  parse_args(argc, argv, &a);
  CHECK(tile_init(0));
  tile_module *m = load_module(&a);
  tile_kernel *kf, *kpre, *kdkdv, *kdq, *kbwd;
  CHECK(tile_module_get_kernel(m, "attn_fwd", &kf));
  CHECK(tile_module_get_kernel(m, "attn_bwd_pre", &kpre));
  CHECK(tile_module_get_kernel(m, "attn_bwd_dkdv", &kdkdv));
  CHECK(tile_module_get_kernel(m, "attn_bwd_dq", &kdq));
  CHECK(tile_module_get_kernel(m, "attn_bwd", &kbwd));
  const tile_kernel_info *fi = tile_kernel_get_info(kf);
  const int D = const_int(fi, "HEAD_DIM", 64), BM = const_int(fi, "BM", 128);
  const char *cz = tile_kernel_const(fi, "CAUSAL"), *ty = tile_kernel_const(fi, "T");
  const int causal = cz && !strcmp(cz, "true");
  is_bf16 = ty && !strcmp(ty, "bf16");
  const int PRE_BM = const_int(tile_kernel_get_info(kpre), "PRE_BM", 128);
  const int BN1 = const_int(tile_kernel_get_info(kdkdv), "BN1", 128);
  const int BM2 = const_int(tile_kernel_get_info(kdq), "BM2", 128);
  const int FBN1 = const_int(tile_kernel_get_info(kbwd), "BN1", 128);
  const double tol_o = is_bf16 ? 1e-2 : 4e-3, tol_g = is_bf16 ? 2e-2 : 8e-3;
  printf("attention: HEAD_DIM %d, %s, %s\n", D, causal ? "causal" : "not causal", is_bf16 ? "bf16" : "f16");
  int failures = 0;
  for (int t = 0; t < a.trials; t++) {
    long Z = a.nsizes > 0 ? a.sizes[0] : rng_int(1, 2);
    long H = a.nsizes > 1 ? a.sizes[1] : rng_int(1, 2);
    long N = a.nsizes > 2 ? a.sizes[2] : (t == 0 ? 128 : rng_int(1, 200));
    long ZH = Z * H;
    size_t ne = (size_t)(ZH * N * D), nr = (size_t)(ZH * N);
    uint16_t *Q = malloc(ne * 2), *K = malloc(ne * 2), *V = malloc(ne * 2), *dO = malloc(ne * 2);
    uint16_t *O = malloc(ne * 2), *dQ = malloc(ne * 2), *dK = malloc(ne * 2), *dV = malloc(ne * 2);
    float *Mo = malloc(nr * 4), *Dl = malloc(nr * 4);
    for (size_t i = 0; i < ne; i++) {
      Q[i] = to16(rng_float(-1, 1));
      K[i] = to16(rng_float(-1, 1));
      V[i] = to16(rng_float(-1, 1));
      dO[i] = to16(rng_float(-1, 1));
    }
    float sm_scale = 0.5f;
    tile_devptr dq_, dk_, dv_, ddo, dout, dm, ddl, ddq, ddk, ddv;
    tile_devptr *bufs16[] = {&dq_, &dk_, &dv_, &ddo, &dout, &ddq, &ddk, &ddv};
    for (int i = 0; i < 8; i++) CHECK(tile_malloc(bufs16[i], ne * 2));
    CHECK(tile_malloc(&dm, nr * 4));
    CHECK(tile_malloc(&ddl, nr * 4));
    CHECK(tile_memcpy_htod(dq_, Q, ne * 2));
    CHECK(tile_memcpy_htod(dk_, K, ne * 2));
    CHECK(tile_memcpy_htod(dv_, V, ne * 2));
    CHECK(tile_memcpy_htod(ddo, dO, ne * 2));
    CHECK(tile_memset_d8(dout, 0xff, ne * 2)); /* 0xffff: NaN in f16 and bf16 */
    CHECK(tile_memset_d32(dm, 0x7fc00000u, nr));
    CHECK(tile_memset_d32(ddl, 0x7fc00000u, nr));
    int ni = (int)N;
    void *fargs[] = {&dq_, &dk_, &dv_, &dout, &dm, &sm_scale, &ni};
    HostLaunch lf = {kf, (unsigned)((N + BM - 1) / BM), (unsigned)ZH, fargs, 7};
    CHECK(tile_launch(lf.k, lf.gx, lf.gy, 1, lf.args, lf.nargs, NULL));
    void *pargs[] = {&dout, &ddo, &ddl, &ni};
    HostLaunch lp = {kpre, (unsigned)((N + PRE_BM - 1) / PRE_BM), (unsigned)ZH, pargs, 4};
    CHECK(tile_launch(lp.k, lp.gx, lp.gy, 1, lp.args, lp.nargs, NULL));
    CHECK(tile_memset_d8(ddq, 0xff, ne * 2));
    CHECK(tile_memset_d8(ddk, 0xff, ne * 2));
    CHECK(tile_memset_d8(ddv, 0xff, ne * 2));
    void *kvargs[] = {&dq_, &dk_, &dv_, &ddo, &dm, &ddl, &ddk, &ddv, &sm_scale, &ni};
    HostLaunch lkv = {kdkdv, (unsigned)((N + BN1 - 1) / BN1), (unsigned)ZH, kvargs, 10};
    CHECK(tile_launch(lkv.k, lkv.gx, lkv.gy, 1, lkv.args, lkv.nargs, NULL));
    void *qargs[] = {&dq_, &dk_, &dv_, &ddo, &dm, &ddl, &ddq, &sm_scale, &ni};
    HostLaunch lq = {kdq, (unsigned)((N + BM2 - 1) / BM2), (unsigned)ZH, qargs, 9};
    CHECK(tile_launch(lq.k, lq.gx, lq.gy, 1, lq.args, lq.nargs, NULL));
    CHECK(tile_synchronize());
    CHECK(tile_memcpy_dtoh(O, dout, ne * 2));
    CHECK(tile_memcpy_dtoh(Mo, dm, nr * 4));
    CHECK(tile_memcpy_dtoh(Dl, ddl, nr * 4));
    CHECK(tile_memcpy_dtoh(dQ, ddq, ne * 2));
    CHECK(tile_memcpy_dtoh(dK, ddk, ne * 2));
    CHECK(tile_memcpy_dtoh(dV, ddv, ne * 2));
    const char *t16 = is_bf16 ? "bf16" : "f16";
    host_dump("attention.O", t16, O, ne);
    host_dump("attention.M", "f32", Mo, nr);
    host_dump("attention.Delta", "f32", Dl, nr);
    host_dump("attention.dQ", t16, dQ, ne);
    host_dump("attention.dK", t16, dK, ne);
    host_dump("attention.dV", t16, dV, ne);

    /* the fused backward into fresh (poisoned) buffers */
    uint16_t *fdQ = malloc(ne * 2), *fdK = malloc(ne * 2), *fdV = malloc(ne * 2);
    CHECK(tile_memset_d8(ddq, 0xff, ne * 2));
    CHECK(tile_memset_d8(ddk, 0xff, ne * 2));
    CHECK(tile_memset_d8(ddv, 0xff, ne * 2));
    void *bargs[] = {&dq_, &dk_, &dv_, &ddo, &dm, &ddl, &ddq, &ddk, &ddv, &sm_scale, &ni};
    HostLaunch lb = {kbwd, (unsigned)((N + FBN1 - 1) / FBN1), (unsigned)ZH, bargs, 11};
    CHECK(tile_launch(lb.k, lb.gx, lb.gy, 1, lb.args, lb.nargs, NULL));
    CHECK(tile_synchronize());
    CHECK(tile_memcpy_dtoh(fdQ, ddq, ne * 2));
    CHECK(tile_memcpy_dtoh(fdK, ddk, ne * 2));
    CHECK(tile_memcpy_dtoh(fdV, ddv, ne * 2));
    host_dump("attention.fused.dQ", t16, fdQ, ne);
    host_dump("attention.fused.dK", t16, fdK, ne);
    host_dump("attention.fused.dV", t16, fdV, ne);

    /* float64 reference; large shapes on a sample of heads and rows */
    ErrStat eo = {0}, em = {0}, ed = {0}, eq = {0}, ek = {0}, ev = {0}, fq = {0}, fk = {0}, fv = {0};
    all_finite16(&eo, O, ne);
    all_finite32(&em, Mo, nr);
    all_finite32(&ed, Dl, nr);
    all_finite16(&eq, dQ, ne);
    all_finite16(&ek, dK, ne);
    all_finite16(&ev, dV, ne);
    all_finite16(&fq, fdQ, ne);
    all_finite16(&fk, fdK, ne);
    all_finite16(&fv, fdV, ne);
    double work = (double)N * N * D;
    int sample_heads = work * ZH > 2e9;
    long row_step = work > 2e9 ? (long)(work / 2e9) + 1 : 1;
    double *s = malloc((size_t)N * sizeof(double));
    double *o = malloc((size_t)D * sizeof(double)), *acc = malloc((size_t)D * sizeof(double));
    double *gk = malloc((size_t)N * D * sizeof(double)), *gv = malloc((size_t)N * D * sizeof(double));
    for (long hz = 0; hz < ZH; hz++) {
      if (sample_heads && hz != 0 && hz != ZH - 1) continue;
      size_t hb = (size_t)hz * N * D;
      memset(gk, 0, (size_t)N * D * sizeof(double));
      memset(gv, 0, (size_t)N * D * sizeof(double));
      for (long i = 0; i < N; i += row_step) {
        long nk = causal ? i + 1 : N;
        double mx = -INFINITY, l = 0;
        for (long j = 0; j < nk; j++) {
          double d = 0;
          for (int c = 0; c < D; c++) d += from16(Q[hb + i * D + c]) * from16(K[hb + j * D + c]);
          s[j] = d * sm_scale;
          mx = fmax(mx, s[j]);
        }
        for (long j = 0; j < nk; j++) l += (s[j] = exp(s[j] - mx));
        for (int c = 0; c < D; c++) o[c] = 0;
        for (long j = 0; j < nk; j++) {
          s[j] /= l; /* P */
          for (int c = 0; c < D; c++) o[c] += s[j] * from16(V[hb + j * D + c]);
        }
        double delta = 0;
        for (int c = 0; c < D; c++) {
          err_add16(&eo, O[hb + i * D + c], o[c]);
          delta += o[c] * from16(dO[hb + i * D + c]);
        }
        err_add(&em, Mo[hz * N + i], (mx + log(l)) / M_LN2);
        err_add(&ed, Dl[hz * N + i], delta);
        for (int c = 0; c < D; c++) acc[c] = 0;
        for (long j = 0; j < nk; j++) {
          double d = 0;
          for (int c = 0; c < D; c++) d += from16(dO[hb + i * D + c]) * from16(V[hb + j * D + c]);
          double ds = s[j] * (d - delta) * sm_scale;
          for (int c = 0; c < D; c++) {
            acc[c] += ds * from16(K[hb + j * D + c]);
            gk[j * D + c] += ds * from16(Q[hb + i * D + c]);
            gv[j * D + c] += s[j] * from16(dO[hb + i * D + c]);
          }
        }
        for (int c = 0; c < D; c++) {
          err_add16(&eq, dQ[hb + i * D + c], acc[c]);
          err_add16(&fq, fdQ[hb + i * D + c], acc[c]);
        }
      }
      if (row_step == 1)
        for (long j = 0; j < N * D; j++) {
          err_add16(&ek, dK[hb + j], gk[j]);
          err_add16(&ev, dV[hb + j], gv[j]);
          err_add16(&fk, fdK[hb + j], gk[j]);
          err_add16(&fv, fdV[hb + j], gv[j]);
        }
    }
    char shape[96];
    snprintf(shape, sizeof shape, "%ldx%ldx%ldx%d%s", Z, H, N, D, causal ? " causal" : "");
    int ok = err_report("attn.O", shape, &eo, tol_o);
    ok &= err_report("attn.M", shape, &em, 1e-4);
    ok &= err_report("attn.Delta", shape, &ed, tol_o);
    ok &= err_report("attn.dQ", shape, &eq, tol_g);
    if (row_step == 1) {
      ok &= err_report("attn.dK", shape, &ek, tol_g);
      ok &= err_report("attn.dV", shape, &ev, tol_g);
    }
    ok &= err_report("attn_bwd.dQ", shape, &fq, tol_g);
    if (row_step == 1) {
      ok &= err_report("attn_bwd.dK", shape, &fk, tol_g);
      ok &= err_report("attn_bwd.dV", shape, &fv, tol_g);
    }
    failures += !ok;
    if (a.bench) {
      /* FLOPs as the tutorial counts them: 4 Z H N^2 D forward (half when
       * causal), 2.5 times that backward */
      double fl = 4.0 * ZH * N * N * D * (causal ? 0.5 : 1.0);
      double ms = bench_seq_ms(&lf, 1);
      printf("bench attn_fwd %s: %.4f ms, %.1f TFLOP/s\n", shape, ms, fl / ms / 1e9);
      HostLaunch three[] = {lp, lkv, lq}, two[] = {lp, lb};
      ms = bench_seq_ms(three, 3);
      printf("bench attn_bwd (pre + dkdv + dq) %s: %.4f ms, %.1f TFLOP/s\n", shape, ms, 2.5 * fl / ms / 1e9);
      ms = bench_seq_ms(two, 2);
      printf("bench attn_bwd (pre + fused) %s: %.4f ms, %.1f TFLOP/s\n", shape, ms, 2.5 * fl / ms / 1e9);
    }
    for (int i = 0; i < 8; i++) tile_free(*bufs16[i]);
    tile_free(dm);
    tile_free(ddl);
    free(Q), free(K), free(V), free(dO), free(O), free(dQ), free(dK), free(dV), free(Mo), free(Dl);
    free(fdQ), free(fdK), free(fdV), free(s), free(o), free(acc), free(gk), free(gv);
  }
  host_done(&a, m);
  return failures ? 1 : 0;
}

/* layernorm_bwd_host.c - runs layernorm_bwd.tile (the layer-norm backward
 * of Triton's tutorial 05: dx, then dw and db from per-program partial sums)
 * on random [rows, cols] inputs against a float64 reference.
 *
 *   layernorm_bwd_host --cubin FILE [--size ROWS --size COLS [--size G]] [--trials N] [--bench]
 *
 * The cubin says the element type (T = f32 or f16) and BLOCK (cols <= BLOCK).
 * G is the number of programs of the first kernel (each takes a strip of
 * rows); by default twice the SMs (random under 64 in the random trials, so
 * that strips of several rows and a last short strip are covered). mean and
 * rstd are inputs (what the forward saved): computed here from x. A cubin
 * built with DWDB=false (long rows) leaves dw and db to its
 * layernorm_bwd_dwdb_part kernel: grid (cdiv(cols, BN), G), then
 * layernorm_bwd_dwdb as before. Cubins with the one-kernel form
 * (layernorm_bwd: atomics into SUMS copies of the f32 sums, the last
 * program finishing dw and db) run it too, twice (the second call must find
 * the sums and the ticket count the first left zeroed), checked the same
 * way; --bench times both forms. */
#include "../common/host.h"

enum { PART_ROWS = 512 }; /* rows a layernorm_bwd_dwdb_part program sums (DWDB=false; best of 64..512 at 4096 x 15872 on the H200) */

static int is_f16;
static uint16_t f2h(float f) { /* round to nearest even, no subnormal outputs needed here */
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000;
  int ex = (int)((u >> 23) & 0xff) - 127 + 15;
  uint32_t mant = u & 0x7fffff;
  if (ex <= 0) return (uint16_t)sign;
  if (ex >= 31) return (uint16_t)(sign | 0x7c00);
  uint32_t h = ((uint32_t)ex << 10) | (mant >> 13), rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return (uint16_t)(sign | h);
}
static float h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, mant = h & 0x3ff, u;
  if (e == 0) {
    float f = (float)mant * (1.0f / 16777216.0f);
    return sign ? -f : f;
  }
  u = e == 31 ? sign | 0x7f800000 | (mant << 13) : sign | ((e - 15 + 127) << 23) | (mant << 13);
  float f;
  memcpy(&f, &u, 4);
  return f;
}
/* elements of T (f32 or f16) in a byte buffer */
static double get(const void *p, size_t i) { return is_f16 ? h2f(((const uint16_t *)p)[i]) : ((const float *)p)[i]; }
static void put(void *p, size_t i, float v) {
  if (is_f16) ((uint16_t *)p)[i] = f2h(v);
  else ((float *)p)[i] = v;
}

/* dx, dw, db on the device against the float64 reference rdx, rw, rb */
static int check_out(const char *what, const char *shape, tile_devptr dDX, tile_devptr dDW, tile_devptr dDB, void *dx,
                     void *dw, void *db, const double *rdx, const double *rw, const double *rb, const double *aw,
                     const double *ab, size_t n, long cols, size_t es, double tol_dx, double tol_w) {
  CHECK(tile_memcpy_dtoh(dx, dDX, n * es));
  CHECK(tile_memcpy_dtoh(dw, dDW, (size_t)cols * es));
  CHECK(tile_memcpy_dtoh(db, dDB, (size_t)cols * es));
  const char *tn = is_f16 ? "f16" : "f32";
  char name[64];
  snprintf(name, sizeof name, "%s.dx", what);
  host_dump(name, tn, dx, n);
  snprintf(name, sizeof name, "%s.dw", what);
  host_dump(name, tn, dw, (size_t)cols);
  snprintf(name, sizeof name, "%s.db", what);
  host_dump(name, tn, db, (size_t)cols);
  ErrStat ex = {0}, ew = {0}, eb = {0};
  for (size_t i = 0; i < n; i++) err_add(&ex, get(dx, i), rdx[i]);
  for (long c = 0; c < cols; c++) {
    err_add_sum(&ew, get(dw, (size_t)c), rw[c], aw[c]);
    err_add_sum(&eb, get(db, (size_t)c), rb[c], ab[c]);
  }
  snprintf(name, sizeof name, "%s.dx", what);
  int ok = err_report(name, shape, &ex, tol_dx);
  snprintf(name, sizeof name, "%s.dw", what);
  ok &= err_report(name, shape, &ew, tol_w);
  snprintf(name, sizeof name, "%s.db", what);
  ok &= err_report(name, shape, &eb, tol_w);
  return ok;
}

int main(int argc, char **argv) {
  HostArgs a;
  parse_args(argc, argv, &a);
  CHECK(tile_init(0));
  tile_device_info dev;
  CHECK(tile_device_info_get(&dev));
  tile_module *m = load_module(&a);
  tile_kernel *kdx, *kdw, *kpart = NULL;
  CHECK(tile_module_get_kernel(m, "layernorm_bwd_dx", &kdx));
  CHECK(tile_module_get_kernel(m, "layernorm_bwd_dwdb", &kdw));
  const tile_kernel_info *info = tile_kernel_get_info(kdx);
  const char *dwdb = tile_kernel_const(info, "DWDB");
  long PBN = 0;
  if (dwdb && !strcmp(dwdb, "false")) {
    CHECK(tile_module_get_kernel(m, "layernorm_bwd_dwdb_part", &kpart));
    const char *pbn = tile_kernel_const(tile_kernel_get_info(kpart), "BN");
    PBN = pbn ? atol(pbn) : 256;
  }
  /* the one-kernel form, where its partial sums fit (not with DWDB=false) */
  tile_kernel *kfused = NULL;
  long SUMS = 1; /* copies of the sums (layernorm_bwd's SUMS) */
  if (!kpart && tile_module_get_kernel(m, "layernorm_bwd", &kfused) != TILE_OK) kfused = NULL;
  if (kfused) {
    const char *k = tile_kernel_const(tile_kernel_get_info(kfused), "SUMS");
    SUMS = k ? atol(k) : 1;
  }
  const char *bs = tile_kernel_const(info, "BLOCK"), *ty = tile_kernel_const(info, "T");
  const char *bn = tile_kernel_const(tile_kernel_get_info(kdw), "BN");
  long BLOCK = bs ? atol(bs) : 1024, BN = bn ? atol(bn) : 128;
  is_f16 = ty && !strcmp(ty, "f16");
  size_t es = is_f16 ? 2 : 4;
  double tol_dx = is_f16 ? 2e-3 : 1e-5, tol_w = is_f16 ? 2e-3 : 1e-5;
  int failures = 0;
  for (int t = 0; t < a.trials; t++) {
    long rows = a.nsizes > 0 ? a.sizes[0] : rng_int(1, 600);
    long cols = a.nsizes > 1 ? a.sizes[1] : (t == 0 ? BLOCK : t == 1 ? 1 : rng_int(1, BLOCK));
    long G = a.nsizes > 2 ? a.sizes[2] : a.nsizes > 0 ? 2L * dev.sm_count : rng_int(1, 64);
    if (cols > BLOCK) {
      fprintf(stderr, "cols %ld > BLOCK %ld of this cubin\n", cols, BLOCK);
      return 2;
    }
    if (G > rows) G = rows;
    long rpp = (rows + G - 1) / G;
    G = (rows + rpp - 1) / rpp; /* no program without rows */
    long stride = cols;
    size_t n = (size_t)(rows * stride);
    void *x = malloc(n * es), *dy = malloc(n * es), *dx = malloc(n * es), *w = malloc((size_t)cols * es);
    void *dw = malloc((size_t)cols * es), *db = malloc((size_t)cols * es);
    float *mean = malloc((size_t)rows * 4), *rstd = malloc((size_t)rows * 4);
    for (size_t i = 0; i < n; i++) {
      put(x, i, rng_float(-3, 5));
      put(dy, i, rng_float(-1, 1));
    }
    for (long i = 0; i < cols; i++) put(w, (size_t)i, rng_float(0.5f, 1.5f));
    for (long r = 0; r < rows; r++) {
      double mu = 0, var = 0;
      for (long c = 0; c < cols; c++) mu += get(x, (size_t)(r * stride + c));
      mu /= (double)cols;
      for (long c = 0; c < cols; c++) {
        double d = get(x, (size_t)(r * stride + c)) - mu;
        var += d * d;
      }
      mean[r] = (float)mu;
      rstd[r] = (float)(1.0 / sqrt(var / (double)cols + 1e-5));
    }
    tile_devptr dX, dDY, dDX, dW, dM, dR, dDWp, dDBp, dDW, dDB;
    CHECK(tile_malloc(&dX, n * es));
    CHECK(tile_malloc(&dDY, n * es));
    CHECK(tile_malloc(&dDX, n * es));
    CHECK(tile_malloc(&dW, (size_t)cols * es));
    CHECK(tile_malloc(&dM, (size_t)rows * 4));
    CHECK(tile_malloc(&dR, (size_t)rows * 4));
    CHECK(tile_malloc(&dDWp, (size_t)(G * cols) * 4));
    CHECK(tile_malloc(&dDBp, (size_t)(G * cols) * 4));
    CHECK(tile_malloc(&dDW, (size_t)cols * es));
    CHECK(tile_malloc(&dDB, (size_t)cols * es));
    CHECK(tile_memcpy_htod(dX, x, n * es));
    CHECK(tile_memcpy_htod(dDY, dy, n * es));
    CHECK(tile_memcpy_htod(dW, w, (size_t)cols * es));
    CHECK(tile_memcpy_htod(dM, mean, (size_t)rows * 4));
    CHECK(tile_memcpy_htod(dR, rstd, (size_t)rows * 4));
    /* NaN poison: 0xffff is an f16 NaN, 0xffffffff an f32 one */
    CHECK(tile_memset_d8(dDX, 0xff, n * es));
    CHECK(tile_memset_d8(dDWp, 0xff, (size_t)(G * cols) * 4));
    CHECK(tile_memset_d8(dDBp, 0xff, (size_t)(G * cols) * 4));
    CHECK(tile_memset_d8(dDW, 0xff, (size_t)cols * es));
    CHECK(tile_memset_d8(dDB, 0xff, (size_t)cols * es));
    /* DWDB=false: the partial-sum kernel's row strips are longer than the
     * row kernel's (PART_ROWS, or --size's fourth value): its closing
     * reduction over a [BM, BN] tile costs about what 16 rows do */
    long rppp = a.nsizes > 3 ? a.sizes[3] : PART_ROWS, Gp = G;
    if (kpart) {
      if (rppp < 1) rppp = 1;
      Gp = (rows + rppp - 1) / rppp;
      if (Gp > G) Gp = G; /* the partial buffers have G rows */
      rppp = (rows + Gp - 1) / Gp;
      Gp = (rows + rppp - 1) / rppp;
    }
    int ri = (int)rows, ci = (int)cols, si = (int)stride, rppi = (int)rpp, gi = (int)Gp, rpppi = (int)rppp;
    void *args1[] = {&dX, &dDY, &dW, &dM, &dR, &dDX, &dDWp, &dDBp, &ri, &ci, &si, &rppi};
    void *args2[] = {&dDWp, &dDBp, &dDW, &dDB, &gi, &ci};
    unsigned g2 = (unsigned)((cols + BN - 1) / BN);
    void *args3[] = {&dX, &dDY, &dM, &dR, &dDWp, &dDBp, &ri, &ci, &si, &rpppi};
    unsigned g3 = kpart ? (unsigned)((cols + PBN - 1) / PBN) : 0;
    CHECK(tile_launch(kdx, (unsigned)G, 1, 1, args1, 12, NULL));
    if (kpart) CHECK(tile_launch(kpart, g3, (unsigned)Gp, 1, args3, 10, NULL));
    CHECK(tile_launch(kdw, g2, 1, 1, args2, 6, NULL));
    CHECK(tile_synchronize());
    const char *tn = is_f16 ? "f16" : "f32";
    /* the float64 reference */
    double *rdx = malloc(n * sizeof(double));
    double *rw = calloc((size_t)cols, sizeof(double)), *rb = calloc((size_t)cols, sizeof(double));
    /* dw and db are sums over the rows: their errors are measured against
     * the sums of the terms' magnitudes (err_add_sum) */
    double *aw = calloc((size_t)cols, sizeof(double)), *ab = calloc((size_t)cols, sizeof(double));
    for (long r = 0; r < rows; r++) {
      double c1 = 0, c2 = 0;
      for (long c = 0; c < cols; c++) {
        size_t i = (size_t)(r * stride + c);
        double xh = (get(x, i) - mean[r]) * rstd[r], wdy = get(w, (size_t)c) * get(dy, i);
        c1 += xh * wdy;
        c2 += wdy;
        rw[c] += get(dy, i) * xh;
        rb[c] += get(dy, i);
        aw[c] += fabs(get(dy, i) * xh);
        ab[c] += fabs(get(dy, i));
      }
      c1 /= (double)cols;
      c2 /= (double)cols;
      for (long c = 0; c < cols; c++) {
        size_t i = (size_t)(r * stride + c);
        double xh = (get(x, i) - mean[r]) * rstd[r], wdy = get(w, (size_t)c) * get(dy, i);
        rdx[i] = (wdy - (xh * c1 + c2)) * rstd[r];
      }
    }
    char shape[80];
    if (kpart) snprintf(shape, sizeof shape, "%ldx%ld %s G=%ld/%ld", rows, cols, tn, G, Gp);
    else snprintf(shape, sizeof shape, "%ldx%ld %s G=%ld", rows, cols, tn, G);
    int ok = check_out("lnbwd", shape, dDX, dDW, dDB, dx, dw, db, rdx, rw, rb, aw, ab, n, cols, es, tol_dx, tol_w);
    /* the one-kernel form (layernorm_bwd: atomics and a last-program
     * ticket), twice: the second call finds the sums and the count the
     * first left zeroed */
    tile_devptr dSW = 0, dSB = 0, dCnt = 0;
    int fi = 0;
    void *argsf[] = {&dX, &dDY, &dW, &dM, &dR, &dDX, &dDW, &dDB, &dSW, &dSB, &dCnt, &ri, &ci, &si, &rppi};
    size_t sums = (size_t)(SUMS * cols) * 4;
    if (kfused) {
      CHECK(tile_malloc(&dSW, sums));
      CHECK(tile_malloc(&dSB, sums));
      CHECK(tile_malloc(&dCnt, 4));
      CHECK(tile_memset_d8(dSW, 0, sums));
      CHECK(tile_memset_d8(dSB, 0, sums));
      CHECK(tile_memset_d8(dCnt, 0, 4));
      for (int call = 0; call < 2; call++) {
        CHECK(tile_memset_d8(dDX, 0xff, n * es));
        CHECK(tile_memset_d8(dDW, 0xff, (size_t)cols * es));
        CHECK(tile_memset_d8(dDB, 0xff, (size_t)cols * es));
        CHECK(tile_launch(kfused, (unsigned)G, 1, 1, argsf, 15, NULL));
        CHECK(tile_synchronize());
        ok &= check_out(call ? "lnbwd1.again" : "lnbwd1", shape, dDX, dDW, dDB, dx, dw, db, rdx, rw, rb, aw, ab, n, cols, es,
                        tol_dx, tol_w);
      }
      float *sw = malloc(sums), *sb = malloc(sums);
      CHECK(tile_memcpy_dtoh(sw, dSW, sums));
      CHECK(tile_memcpy_dtoh(sb, dSB, sums));
      CHECK(tile_memcpy_dtoh(&fi, dCnt, 4));
      int dirty = fi != 0;
      for (long c = 0; c < SUMS * cols; c++) dirty |= sw[c] != 0.0f || sb[c] != 0.0f;
      if (dirty) fprintf(stderr, "FAIL lnbwd1 %s: the sums or the count (%d) not left zero\n", shape, fi);
      ok &= !dirty;
      free(sw), free(sb);
    }
    failures += !ok;
    if (a.bench) {
      /* the tutorial's count: x, dy read and dx written (3 x numel x size) */
      double ms1 = bench_ms(kdx, (unsigned)G, 1, args1, 12), ms2 = bench_ms(kdw, g2, 1, args2, 6);
      double ms3 = kpart ? bench_ms(kpart, g3, (unsigned)Gp, args3, 10) : 0;
      printf("bench layernorm_bwd %s: %.4f ms (dx %.4f + dwdb %.4f", shape, ms1 + ms2 + ms3, ms1, ms2);
      if (kpart) printf(" + dwdb_part %.4f", ms3);
      printf("), %.0f GB/s\n", 3.0 * (double)n * (double)es / (ms1 + ms2 + ms3) / 1e6);
      if (kfused) {
        double msf = bench_ms(kfused, (unsigned)G, 1, argsf, 15);
        printf("bench layernorm_bwd (one kernel) %s: %.4f ms, %.0f GB/s\n", shape, msf,
               3.0 * (double)n * (double)es / msf / 1e6);
      }
    }
    if (kfused) tile_free(dSW), tile_free(dSB), tile_free(dCnt);
    free(rdx);
    tile_devptr *bufs[] = {&dX, &dDY, &dDX, &dW, &dM, &dR, &dDWp, &dDBp, &dDW, &dDB};
    for (int i = 0; i < 10; i++) tile_free(*bufs[i]);
    free(x), free(dy), free(dx), free(w), free(dw), free(db), free(mean), free(rstd), free(rw), free(rb), free(aw), free(ab);
  }
  host_done(&a, m);
  return failures ? 1 : 0;
}

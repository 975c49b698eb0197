/* layernorm_host.c - runs layernorm.tile on random [rows, cols] matrices
 * (any cols: the kernel loops over BLOCK-wide chunks) against float64. */
#include "../common/host.h"

int main(int argc, char **argv) {
  HostArgs a;
  parse_args(argc, argv, &a);
  CHECK(tile_init(0));
  tile_module *m = load_module(&a);
  tile_kernel *k;
  CHECK(tile_module_get_kernel(m, "layernorm", &k));
  int failures = 0;
  for (int t = 0; t < a.trials; t++) {
    long rows = a.nsizes > 0 ? a.sizes[0] : rng_int(1, 3000);
    long cols = a.nsizes > 1 ? a.sizes[1] : (t == 0 ? 4096 : t == 1 ? 1 : rng_int(1, 9000));
    long stride = cols;
    size_t bytes = (size_t)(rows * stride) * 4;
    float *x = malloc(bytes), *y = malloc(bytes), *w = malloc((size_t)cols * 4), *b = malloc((size_t)cols * 4);
    float *mean = malloc((size_t)rows * 4), *rstd = malloc((size_t)rows * 4);
    for (long i = 0; i < rows * stride; i++) x[i] = rng_float(-3, 5);
    for (long i = 0; i < cols; i++) {
      w[i] = rng_float(0.5f, 1.5f);
      b[i] = rng_float(-1, 1);
    }
    tile_devptr dx, dy, dw, db, dm, dr;
    CHECK(tile_malloc(&dx, bytes));
    CHECK(tile_malloc(&dy, bytes));
    CHECK(tile_malloc(&dw, (size_t)cols * 4));
    CHECK(tile_malloc(&db, (size_t)cols * 4));
    CHECK(tile_malloc(&dm, (size_t)rows * 4));
    CHECK(tile_malloc(&dr, (size_t)rows * 4));
    CHECK(tile_memcpy_htod(dx, x, bytes));
    CHECK(tile_memcpy_htod(dw, w, (size_t)cols * 4));
    CHECK(tile_memcpy_htod(db, b, (size_t)cols * 4));
    CHECK(tile_memset_d32(dy, 0x7fc00000u, (size_t)(rows * stride)));
    CHECK(tile_memset_d32(dm, 0x7fc00000u, (size_t)rows));
    CHECK(tile_memset_d32(dr, 0x7fc00000u, (size_t)rows));
    int ci = (int)cols, si = (int)stride;
    float eps = 1e-5f;
    void *args[] = {&dx, &dy, &dw, &db, &dm, &dr, &ci, &si, &eps};
    CHECK(tile_launch(k, (unsigned)rows, 1, 1, args, 9, NULL));
    CHECK(tile_synchronize());
    CHECK(tile_memcpy_dtoh(y, dy, bytes));
    CHECK(tile_memcpy_dtoh(mean, dm, (size_t)rows * 4));
    CHECK(tile_memcpy_dtoh(rstd, dr, (size_t)rows * 4));
    host_dump("layernorm.y", "f32", y, (size_t)(rows * stride));
    host_dump("layernorm.mean", "f32", mean, (size_t)rows);
    host_dump("layernorm.rstd", "f32", rstd, (size_t)rows);
    ErrStat ey = {0}, em = {0}, er = {0};
    for (long r = 0; r < rows; r++) {
      const float *xr = x + r * stride;
      double mu = 0, var = 0;
      for (long c = 0; c < cols; c++) mu += xr[c];
      mu /= (double)cols;
      for (long c = 0; c < cols; c++) var += (xr[c] - mu) * (xr[c] - mu);
      var /= (double)cols;
      double rs = 1.0 / sqrt(var + 1e-5);
      err_add(&em, mean[r], mu);
      err_add(&er, rstd[r], rs);
      for (long c = 0; c < cols; c++) err_add(&ey, y[r * stride + c], (xr[c] - mu) * rs * w[c] + b[c]);
    }
    char shape[64];
    snprintf(shape, sizeof shape, "%ldx%ld", rows, cols);
    int ok = err_report("layernorm.y", shape, &ey, 1e-5);
    ok &= err_report("layernorm.mu", shape, &em, 1e-5);
    ok &= err_report("layernorm.rs", shape, &er, 1e-5);
    failures += !ok;
    if (a.bench) {
      double ms = bench_ms(k, (unsigned)rows, 1, args, 9);
      printf("bench layernorm %s: %.4f ms, %.0f GB/s\n", shape, ms, 2.0 * (double)(rows * cols) * 4 / ms / 1e6);
    }
    tile_free(dx);
    tile_free(dy);
    tile_free(dw);
    tile_free(db);
    tile_free(dm);
    tile_free(dr);
    free(x);
    free(y);
    free(w);
    free(b);
    free(mean);
    free(rstd);
  }
  host_done(&a, m);
  return failures ? 1 : 0;
}

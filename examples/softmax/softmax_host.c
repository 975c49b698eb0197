/* softmax_host.c - runs softmax.tile on random [rows, cols] matrices
 * (cols up to BLOCK = 1024) against a float64 reference. */
#include "../common/host.h"

int main(int argc, char **argv) {
  HostArgs a;
  parse_args(argc, argv, &a);
  CHECK(tile_init(0));
  tile_module *m = load_module(&a);
  tile_kernel *k;
  CHECK(tile_module_get_kernel(m, "softmax", &k));
  int failures = 0;
  for (int t = 0; t < a.trials; t++) {
    long rows = a.nsizes > 0 ? a.sizes[0] : rng_int(1, 5000);
    long cols = a.nsizes > 1 ? a.sizes[1] : (t == 0 ? 1024 : t == 1 ? 1 : rng_int(1, 1024));
    long stride = cols + (t % 3 == 2 ? rng_int(0, 7) : 0); /* sometimes padded rows */
    size_t bytes = (size_t)(rows * stride) * 4;
    float *x = malloc(bytes), *o = malloc(bytes);
    for (long i = 0; i < rows * stride; i++) x[i] = rng_float(-8, 8);
    tile_devptr dx, dout;
    CHECK(tile_malloc(&dx, bytes));
    CHECK(tile_malloc(&dout, bytes));
    CHECK(tile_memcpy_htod(dx, x, bytes));
    CHECK(tile_memset_d32(dout, 0x7fc00000u, (size_t)(rows * stride)));
    int ci = (int)cols, si = (int)stride;
    void *args[] = {&dx, &dout, &ci, &si};
    CHECK(tile_launch(k, (unsigned)rows, 1, 1, args, 4, NULL));
    CHECK(tile_synchronize());
    CHECK(tile_memcpy_dtoh(o, dout, bytes));
    host_dump("softmax.out", "f32", o, (size_t)(rows * stride));
    ErrStat e = {0};
    for (long r = 0; r < rows; r++) {
      const float *xr = x + r * stride;
      double mx = -INFINITY, s = 0;
      for (long c = 0; c < cols; c++) mx = fmax(mx, xr[c]);
      for (long c = 0; c < cols; c++) s += exp((double)xr[c] - mx);
      for (long c = 0; c < cols; c++) err_add(&e, o[r * stride + c], exp((double)xr[c] - mx) / s);
    }
    char shape[64];
    snprintf(shape, sizeof shape, "%ldx%ld stride %ld", rows, cols, stride);
    failures += !err_report("softmax", shape, &e, 1e-5);
    if (a.bench) {
      double ms = bench_ms(k, (unsigned)rows, 1, args, 4);
      printf("bench softmax %s: %.4f ms, %.0f GB/s\n", shape, ms, 2.0 * (double)(rows * cols) * 4 / ms / 1e6);
    }
    tile_free(dx);
    tile_free(dout);
    free(x);
    free(o);
  }
  host_done(&a, m);
  return failures ? 1 : 0;
}

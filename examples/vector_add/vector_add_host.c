/* vector_add_host.c - runs vector_add.tile on random sizes and checks it
 * against a float64 reference. */
#include "../common/host.h"

int main(int argc, char **argv) {
  HostArgs a;
  parse_args(argc, argv, &a);
  CHECK(tile_init(0));
  tile_module *m = load_module(&a);
  tile_kernel *k;
  CHECK(tile_module_get_kernel(m, "vector_add", &k));
  int block = 1024;
  int failures = 0;
  for (int t = 0; t < a.trials; t++) {
    long n = a.nsizes ? a.sizes[0] : (t == 0 ? 1 : t == 1 ? 1024 : rng_int(1, 3000000));
    size_t bytes = (size_t)n * 4;
    float *x = malloc(bytes), *y = malloc(bytes), *o = malloc(bytes);
    for (long i = 0; i < n; i++) {
      x[i] = rng_float(-1, 1);
      y[i] = rng_float(-1, 1);
    }
    tile_devptr dx, dy, dout;
    CHECK(tile_malloc(&dx, bytes));
    CHECK(tile_malloc(&dy, bytes));
    CHECK(tile_malloc(&dout, bytes));
    CHECK(tile_memcpy_htod(dx, x, bytes));
    CHECK(tile_memcpy_htod(dy, y, bytes));
    CHECK(tile_memset_d32(dout, 0x7fc00000u, (size_t)n)); /* NaN poison */
    int ni = (int)n;
    void *args[] = {&dx, &dy, &dout, &ni};
    CHECK(tile_launch(k, (unsigned)((n + block - 1) / block), 1, 1, args, 4, NULL));
    CHECK(tile_synchronize());
    CHECK(tile_memcpy_dtoh(o, dout, bytes));
    host_dump("vector_add.out", "f32", o, (size_t)n);
    ErrStat e = {0};
    for (long i = 0; i < n; i++) err_add(&e, o[i], (double)x[i] + (double)y[i]);
    char shape[64];
    snprintf(shape, sizeof shape, "n=%ld", n);
    failures += !err_report("vector_add", shape, &e, 1e-6);
    if (a.bench) {
      double ms = bench_ms(k, (unsigned)((n + block - 1) / block), 1, args, 4);
      printf("bench vector_add n=%ld: %.4f ms, %.0f GB/s\n", n, ms, 3.0 * (double)bytes / ms / 1e6);
    }
    tile_free(dx);
    tile_free(dy);
    tile_free(dout);
    free(x);
    free(y);
    free(o);
  }
  host_done(&a, m);
  return failures ? 1 : 0;
}

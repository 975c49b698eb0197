/* gemm_host.c - runs gemm.tile (C = A @ B^T, bf16 in, f32 accumulate, bf16
 * out; persistent, warp-specialized, TMA + wgmma) on random M, N, K including
 * sizes that are not multiples of the 128 x 256 x 64 tiles, against a float64
 * reference from the same bf16 inputs. --bench times it (median of 50).
 *
 * TMA needs each row to start on a 16-byte boundary, so rows of A, B and C
 * are padded to a multiple of 8 elements; the kernel sees the true M, N, K. */
#include "../common/host.h"

static long pad8(long x) { return (x + 7) / 8 * 8; }

int main(int argc, char **argv) {
  HostArgs a;
  parse_args(argc, argv, &a);
  CHECK(tile_init(0));
  tile_device_info dev;
  CHECK(tile_device_info_get(&dev));
  tile_module *m = load_module(&a);
  /* gemm (persistent, 128 x 256 tiles) or gemm_simple (one 64 x 256 tile per CTA) */
  /* ... or gemm_pair (gemm_sm100_2cta.tile: clusters of 2 CTAs, 256 x 256 tiles, an even grid; with -D PAIRS=2
     clusters of 4, two pairs side by side: 256 x 512 blocks, a grid of fours. The cluster shape is the cubin's) */
  tile_kernel *k;
  int pair = tile_module_get_kernel(m, "gemm_pair", &k) == TILE_OK;
  int simple = !pair && tile_module_get_kernel(m, "gemm", &k) != TILE_OK;
  if (simple) CHECK(tile_module_get_kernel(m, "gemm_simple", &k));
  int failures = 0;
  for (int t = 0; t < a.trials; t++) {
    long M = a.nsizes > 0 ? a.sizes[0] : (t == 0 ? 1024 : rng_int(1, 1500));
    long N = a.nsizes > 1 ? a.sizes[1] : (t == 0 ? 1024 : rng_int(1, 1500));
    long K = a.nsizes > 2 ? a.sizes[2] : (t == 0 ? 1024 : rng_int(1, 1500));
    long lda = pad8(K), ldb = pad8(K), ldc = pad8(N);
    uint16_t *A = calloc((size_t)(M * lda), 2), *B = calloc((size_t)(N * ldb), 2), *C = malloc((size_t)(M * ldc) * 2);
    for (long i = 0; i < M; i++)
      for (long j = 0; j < K; j++) A[i * lda + j] = f2bf(rng_float(-1, 1));
    for (long i = 0; i < N; i++)
      for (long j = 0; j < K; j++) B[i * ldb + j] = f2bf(rng_float(-1, 1));
    tile_devptr dA, dB, dC;
    CHECK(tile_malloc(&dA, (size_t)(M * lda) * 2));
    CHECK(tile_malloc(&dB, (size_t)(N * ldb) * 2));
    CHECK(tile_malloc(&dC, (size_t)(M * ldc) * 2));
    CHECK(tile_memcpy_htod(dA, A, (size_t)(M * lda) * 2));
    CHECK(tile_memcpy_htod(dB, B, (size_t)(N * ldb) * 2));
    CHECK(tile_memset_d8(dC, 0xff, (size_t)(M * ldc) * 2)); /* bf16 NaN */
    tile_tma_desc da, db, dc;
    CHECK(tile_tma_desc_2d(&da, k, 0, dA, (uint64_t)M, (uint64_t)K, (uint64_t)lda));
    CHECK(tile_tma_desc_2d(&db, k, 1, dB, (uint64_t)N, (uint64_t)K, (uint64_t)ldb));
    CHECK(tile_tma_desc_2d(&dc, k, 2, dC, (uint64_t)M, (uint64_t)N, (uint64_t)ldc));
    int Mi = (int)M, Ni = (int)N, Ki = (int)K;
    void *args[] = {&da, &db, &dc, &Mi, &Ni, &Ki};
    long tiles = ((M + 127) / 128) * ((N + 255) / 256);
    unsigned grid = (unsigned)(tiles < dev.sm_count ? tiles : dev.sm_count), gy = 1;
    if (simple) grid = (unsigned)((M + 63) / 64), gy = (unsigned)((N + 255) / 256);
    if (pair) {
      long cl = tile_kernel_get_info(k)->cluster[0], bn = 128 * cl; /* a cluster's block: 256 x bn */
      long blocks = ((M + 255) / 256) * ((N + bn - 1) / bn), nclusters = dev.sm_count / cl;
      grid = (unsigned)cl * (unsigned)(blocks < nclusters ? blocks : nclusters);
    }
    CHECK(tile_launch(k, grid, gy, 1, args, 6, NULL));
    CHECK(tile_synchronize());
    CHECK(tile_memcpy_dtoh(C, dC, (size_t)(M * ldc) * 2));
    host_dump("gemm.C", "bf16", C, (size_t)(M * ldc));
    ErrStat e = {0};
    double *row = malloc((size_t)N * sizeof(double));
    long step = (double)M * N * K > 2e9 ? (long)((double)M * N * K / (a.bench ? 5e8 : 2e9)) + 1 : 1;
    for (long i = 0; i < M; i += step) {
      for (long j = 0; j < N; j++) {
        double s = 0;
        const uint16_t *ar = A + i * lda, *br = B + j * ldb;
        for (long kk = 0; kk < K; kk++) s += (double)bf2f(ar[kk]) * bf2f(br[kk]);
        row[j] = s;
      }
      for (long j = 0; j < N; j++) err_add(&e, bf2f(C[i * ldc + j]), row[j]);
    }
    free(row);
    char shape[64];
    snprintf(shape, sizeof shape, "%ldx%ldx%ld", M, N, K);
    failures += !err_report("gemm", shape, &e, 1e-2);
    if (a.bench) {
      double ms = bench_ms(k, grid, gy, args, 6);
      printf("bench gemm %s: %.4f ms, %.1f TFLOP/s\n", shape, ms, 2.0 * (double)M * N * K / ms / 1e9);
    }
    tile_free(dA);
    tile_free(dB);
    tile_free(dC);
    free(A);
    free(B);
    free(C);
  }
  host_done(&a, m);
  return failures ? 1 : 0;
}

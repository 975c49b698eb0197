/* matmul_host.c - runs matmul.tile (bf16, tensor cores) on random M, N, K,
 * including sizes that are not multiples of the blocks, against a float64
 * reference computed from the same bf16 inputs. The kernel takes row
 * strides that are multiples of 8 elements: rows of A and B are padded to
 * them (the padding holds NaN, which no correct kernel reads). The block
 * sizes and the fused leaky_relu epilogue (LEAKY_RELU, Triton's tutorial 03)
 * are read from the cubin's constants. */
#include "../common/host.h"

int main(int argc, char **argv) {
  HostArgs a;
  parse_args(argc, argv, &a);
  CHECK(tile_init(0));
  tile_module *m = load_module(&a);
  tile_kernel *k;
  CHECK(tile_module_get_kernel(m, "matmul", &k));
  const tile_kernel_info *info = tile_kernel_get_info(k);
  const char *cbm = tile_kernel_const(info, "BM"), *cbn = tile_kernel_const(info, "BN");
  const char *leaky = tile_kernel_const(info, "LEAKY_RELU");
  int BM = cbm ? atoi(cbm) : 64, BN = cbn ? atoi(cbn) : 64;
  int act = leaky && !strcmp(leaky, "true");
  int failures = 0;
  for (int t = 0; t < a.trials; t++) {
    long M = a.nsizes > 0 ? a.sizes[0] : (t == 0 ? 256 : rng_int(1, 700));
    long N = a.nsizes > 1 ? a.sizes[1] : (t == 0 ? 256 : rng_int(1, 700));
    long K = a.nsizes > 2 ? a.sizes[2] : (t == 0 ? 256 : rng_int(1, 700));
    long lda = (K + 7) / 8 * 8, ldb = (N + 7) / 8 * 8, ldcl = (N + 7) / 8 * 8; /* rows padded to 16 bytes */
    uint16_t *A = malloc((size_t)(M * lda) * 2), *B = malloc((size_t)(K * ldb) * 2), *C = malloc((size_t)(M * ldcl) * 2);
    for (long i = 0; i < M * lda; i++) A[i] = i % lda < K ? f2bf(rng_float(-1, 1)) : 0xffff;
    for (long i = 0; i < K * ldb; i++) B[i] = i % ldb < N ? f2bf(rng_float(-1, 1)) : 0xffff;
    tile_devptr dA, dB, dC;
    CHECK(tile_malloc(&dA, (size_t)(M * lda) * 2));
    CHECK(tile_malloc(&dB, (size_t)(K * ldb) * 2));
    CHECK(tile_malloc(&dC, (size_t)(M * ldcl) * 2));
    CHECK(tile_memcpy_htod(dA, A, (size_t)(M * lda) * 2));
    CHECK(tile_memcpy_htod(dB, B, (size_t)(K * ldb) * 2));
    CHECK(tile_memset_d8(dC, 0xff, (size_t)(M * ldcl) * 2)); /* 0xffff is a bf16 NaN */
    int Mi = (int)M, Ni = (int)N, Ki = (int)K, ldai = (int)lda, ldbi = (int)ldb, ldc = (int)ldcl;
    void *args[] = {&dA, &dB, &dC, &Mi, &Ni, &Ki, &ldai, &ldbi, &ldc};
    unsigned grid = (unsigned)(((M + BM - 1) / BM) * ((N + BN - 1) / BN)); /* 1-D, grouped in the kernel */
    CHECK(tile_launch(k, grid, 1, 1, args, 9, NULL));
    CHECK(tile_synchronize());
    CHECK(tile_memcpy_dtoh(C, dC, (size_t)(M * ldcl) * 2));
    /* dumped without the rows' padding (a GPU's TMA store may write the
     * rest of a row's last 16 bytes: docs/emulator.md) */
    for (long i = 1; i < M; i++) memmove(C + i * N, C + i * ldcl, (size_t)N * 2);
    host_dump("matmul.C", "bf16", C, (size_t)(M * N));
    for (long i = M - 1; i > 0; i--) memmove(C + i * ldcl, C + i * N, (size_t)N * 2);
    ErrStat e = {0};
    double *row = malloc((size_t)N * sizeof(double));
    /* large problems: check a sample of rows (every step-th) */
    long step = (double)M * N * K > 2e9 ? (long)((double)M * N * K / 2e9) + 1 : 1;
    for (long i = 0; i < M; i += step) {
      for (long j = 0; j < N; j++) row[j] = 0;
      for (long kk = 0; kk < K; kk++) {
        double av = bf2f(A[i * lda + kk]);
        const uint16_t *br = B + kk * ldb;
        for (long j = 0; j < N; j++) row[j] += av * bf2f(br[j]);
      }
      for (long j = 0; j < N; j++) err_add(&e, bf2f(C[i * ldcl + j]), act && row[j] < 0 ? 0.01 * row[j] : row[j]);
    }
    free(row);
    char shape[64];
    snprintf(shape, sizeof shape, "%ldx%ldx%ld", M, N, K);
    failures += !err_report(act ? "matmul+lrelu" : "matmul", shape, &e, 1e-2);
    if (a.bench) {
      double ms = bench_ms(k, grid, 1, args, 9);
      printf("bench matmul %s: %.4f ms, %.1f TFLOP/s\n", shape, ms, 2.0 * (double)M * N * K / ms / 1e9);
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

/* test_prims.c - GPU checks of the explicit primitives, one small kernel
 * each (the .tile files beside this one, compiled by tilec beforehand):
 *   mma_regs_a      wgmma with A in registers, B through TMA, cluster(1,1,1)
 *   smem_roundtrip  registers -> swizzled smem -> registers, swizzle 0/32/64/128
 *   tma_copy        TMA load + TMA store of odd-sized matrices (edges clipped)
 *   tasks_default   a producer task and a default task with two replicas
 *   cluster_rank    clusters of two CTAs
 * usage: test_prims DIR   (DIR holds NAME.cubin; smem_roundtrip.SW.cubin)
 * Prints one line per check; exit status 0 only if all pass. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tile/runtime.h"

static int failures;
#define CHECK(call)                                                                                   \
  do {                                                                                                \
    tile_status st_ = (call);                                                                         \
    if (st_ != TILE_OK) {                                                                             \
      printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #call, tile_last_error());                     \
      failures++;                                                                                     \
      return;                                                                                         \
    }                                                                                                 \
  } while (0)

static const char *dir;
static tile_kernel *kernel(const char *file, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  tile_module *m;
  tile_kernel *k;
  if (tile_module_load_file(path, &m) != TILE_OK || tile_module_get_kernel(m, name, &k) != TILE_OK) {
    printf("FAIL load %s: %s\n", path, tile_last_error());
    failures++;
    return NULL;
  }
  return k;
}

static uint16_t f2bf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static float bf2f(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static float frand(void) { return (float)rand() / RAND_MAX * 2 - 1; }

static void report(const char *what, int ok, const char *detail) {
  printf("%s %-34s %s\n", ok ? "PASS" : "FAIL", what, detail);
  if (!ok) failures++;
}

static void test_mma_regs_a(void) {
  tile_kernel *k = kernel("mma_regs_a.cubin", "wa");
  if (!k) return;
  uint16_t A[64 * 64], Bm[64 * 64];
  float C[64 * 64];
  for (int i = 0; i < 64 * 64; i++) A[i] = f2bf(frand()), Bm[i] = f2bf(frand());
  tile_devptr dA, dB, dC;
  CHECK(tile_malloc(&dA, sizeof A));
  CHECK(tile_malloc(&dB, sizeof Bm));
  CHECK(tile_malloc(&dC, sizeof C));
  CHECK(tile_memcpy_htod(dA, A, sizeof A));
  CHECK(tile_memcpy_htod(dB, Bm, sizeof Bm));
  CHECK(tile_memset_d32(dC, 0x7fc00000u, 64 * 64));
  tile_tma_desc db;
  CHECK(tile_tma_desc_2d(&db, k, 1, dB, 64, 64, 64));
  void *args[] = {&dA, &db, &dC};
  CHECK(tile_launch(k, 1, 1, 1, args, 3, NULL));
  CHECK(tile_synchronize());
  CHECK(tile_memcpy_dtoh(C, dC, sizeof C));
  double num = 0, den = 0;
  int bad = 0;
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) {
      double s = 0;
      for (int kk = 0; kk < 64; kk++) s += (double)bf2f(A[i * 64 + kk]) * bf2f(Bm[j * 64 + kk]);
      if (!isfinite(C[i * 64 + j])) bad++;
      num += (C[i * 64 + j] - s) * (C[i * 64 + j] - s);
      den += s * s;
    }
  char d[96];
  snprintf(d, sizeof d, "rel_err=%.2e nonfinite=%d", sqrt(num / den), bad);
  report("wgmma A in registers (64x64x64)", !bad && sqrt(num / den) < 1e-5, d);
}

static double rel(const float *got, const double *ref, int n, int *bad) {
  double num = 0, den = 0;
  *bad = 0;
  for (int i = 0; i < n; i++) {
    if (!isfinite(got[i])) (*bad)++;
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return sqrt(num / den);
}

/* O = P @ V with V N-contiguous (MN-major B), S = Q @ K[:, 64:128]^T. */
static void test_mma_mn(void) {
  tile_kernel *k = kernel("mma_mn_major.cubin", "mma_mn");
  if (!k) return;
  static uint16_t P[64 * 64], V[64 * 128], Q[64 * 64], K[64 * 128];
  static float O[64 * 128], Sg[64 * 64];
  static double Or[64 * 128], Sr[64 * 64];
  for (int i = 0; i < 64 * 64; i++) P[i] = f2bf(frand()), Q[i] = f2bf(frand());
  for (int i = 0; i < 64 * 128; i++) V[i] = f2bf(frand()), K[i] = f2bf(frand());
  tile_devptr dP, dV, dQ, dK, dO, dS;
  CHECK(tile_malloc(&dP, sizeof P));
  CHECK(tile_malloc(&dV, sizeof V));
  CHECK(tile_malloc(&dQ, sizeof Q));
  CHECK(tile_malloc(&dK, sizeof K));
  CHECK(tile_malloc(&dO, sizeof O));
  CHECK(tile_malloc(&dS, sizeof Sg));
  CHECK(tile_memcpy_htod(dP, P, sizeof P));
  CHECK(tile_memcpy_htod(dV, V, sizeof V));
  CHECK(tile_memcpy_htod(dQ, Q, sizeof Q));
  CHECK(tile_memcpy_htod(dK, K, sizeof K));
  CHECK(tile_memset_d32(dO, 0x7fc00000u, 64 * 128));
  CHECK(tile_memset_d32(dS, 0x7fc00000u, 64 * 64));
  tile_tma_desc dv, dq, dk;
  CHECK(tile_tma_desc_2d(&dv, k, 1, dV, 64, 128, 128));
  CHECK(tile_tma_desc_2d(&dq, k, 2, dQ, 64, 64, 64));
  CHECK(tile_tma_desc_2d(&dk, k, 3, dK, 64, 128, 128));
  void *args[] = {&dP, &dv, &dq, &dk, &dO, &dS};
  CHECK(tile_launch(k, 1, 1, 1, args, 6, NULL));
  CHECK(tile_synchronize());
  CHECK(tile_memcpy_dtoh(O, dO, sizeof O));
  CHECK(tile_memcpy_dtoh(Sg, dS, sizeof Sg));
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 128; j++) {
      double acc = 0;
      for (int kk = 0; kk < 64; kk++) acc += (double)bf2f(P[i * 64 + kk]) * bf2f(V[kk * 128 + j]);
      Or[i * 128 + j] = acc;
    }
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++) {
      double acc = 0;
      for (int kk = 0; kk < 64; kk++) acc += (double)bf2f(Q[i * 64 + kk]) * bf2f(K[j * 128 + 64 + kk]);
      Sr[i * 64 + j] = acc;
    }
  int bad;
  char d[96];
  double e = rel(O, Or, 64 * 128, &bad);
  snprintf(d, sizeof d, "rel_err=%.2e nonfinite=%d", e, bad);
  report("wgmma N-contiguous B (P @ V)", !bad && e < 1e-5, d);
  e = rel(Sg, Sr, 64 * 64, &bad);
  snprintf(d, sizeof d, "rel_err=%.2e nonfinite=%d", e, bad);
  report("wgmma on a column block of K", !bad && e < 1e-5, d);
}

static void test_smem_roundtrip(int sw) {
  char file[64];
  snprintf(file, sizeof file, "smem_roundtrip.%d.cubin", sw);
  tile_kernel *k = kernel(file, "smem_roundtrip");
  if (!k) return;
  uint16_t X[64 * 128], Y[64 * 128];
  for (int i = 0; i < 64 * 128; i++) X[i] = f2bf(frand());
  tile_devptr dx, dy;
  CHECK(tile_malloc(&dx, sizeof X));
  CHECK(tile_malloc(&dy, sizeof Y));
  CHECK(tile_memcpy_htod(dx, X, sizeof X));
  CHECK(tile_memset_d8(dy, 0xff, sizeof Y));
  void *args[] = {&dx, &dy};
  CHECK(tile_launch(k, 1, 1, 1, args, 2, NULL));
  CHECK(tile_synchronize());
  CHECK(tile_memcpy_dtoh(Y, dy, sizeof Y));
  int diff = 0;
  for (int i = 0; i < 64 * 128; i++) diff += X[i] != Y[i];
  char what[64], d[64];
  snprintf(what, sizeof what, "smem round trip, swizzle %d", sw);
  snprintf(d, sizeof d, "%d of 8192 elements differ", diff);
  report(what, diff == 0, d);
}

static void test_tma_copy(int M, int N) {
  tile_kernel *k = kernel("tma_copy.cubin", "tma_copy");
  if (!k) return;
  /* rows padded to 16 bytes, plus 16 more bytes that must stay untouched
   * (a TMA store may write the padding up to the row's 16-byte boundary) */
  int ld16 = (N + 7) / 8 * 8, ld = ld16 + 8;
  size_t bytes = (size_t)M * ld * 2;
  uint16_t *X = malloc(bytes), *Y = malloc(bytes);
  for (size_t i = 0; i < (size_t)M * ld; i++) X[i] = f2bf(frand());
  tile_devptr dx, dy;
  CHECK(tile_malloc(&dx, bytes));
  CHECK(tile_malloc(&dy, bytes));
  CHECK(tile_memcpy_htod(dx, X, bytes));
  CHECK(tile_memset_d8(dy, 0xff, bytes));
  tile_tma_desc ds, dd;
  CHECK(tile_tma_desc_2d(&ds, k, 0, dx, (uint64_t)M, (uint64_t)N, (uint64_t)ld));
  CHECK(tile_tma_desc_2d(&dd, k, 1, dy, (uint64_t)M, (uint64_t)N, (uint64_t)ld));
  void *args[] = {&ds, &dd, &M, &N};
  CHECK(tile_launch(k, (unsigned)(((M + 63) / 64) * ((N + 63) / 64)), 1, 1, args, 4, NULL));
  CHECK(tile_synchronize());
  CHECK(tile_memcpy_dtoh(Y, dy, bytes));
  int diff = 0, beyond = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < ld; j++) {
      if (j < N) diff += X[i * ld + j] != Y[i * ld + j];
      else if (j >= ld16 && Y[i * ld + j] != 0xffff) { /* past the 16-byte boundary: untouched */
        if (beyond++ < 4)
          printf("  padding (%d, %d) = 0x%04x (source 0x%04x, next row's first 0x%04x)\n", i, j, Y[i * ld + j],
                 X[i * ld + j], i + 1 < M ? X[(i + 1) * ld] : 0);
      }
    }
  char what[64], d[96];
  snprintf(what, sizeof what, "TMA load+store copy %dx%d", M, N);
  snprintf(d, sizeof d, "%d elements differ, %d padding elements written", diff, beyond);
  report(what, !diff && !beyond, d);
  free(X);
  free(Y);
}

static void test_tasks_default(void) {
  tile_kernel *k = kernel("tasks_default.cubin", "tasks_default");
  if (!k) return;
  float X[128], Y[256];
  for (int i = 0; i < 128; i++) X[i] = frand();
  tile_devptr dx, dy;
  CHECK(tile_malloc(&dx, sizeof X));
  CHECK(tile_malloc(&dy, sizeof Y));
  CHECK(tile_memcpy_htod(dx, X, sizeof X));
  CHECK(tile_memset_d32(dy, 0x7fc00000u, 256));
  void *args[] = {&dx, &dy};
  CHECK(tile_launch(k, 1, 1, 1, args, 2, NULL));
  CHECK(tile_synchronize());
  CHECK(tile_memcpy_dtoh(Y, dy, sizeof Y));
  int bad = 0;
  for (int r = 0; r < 2; r++)
    for (int i = 0; i < 128; i++) bad += fabsf(Y[r * 128 + i] - (2 * X[i] + r)) > 1e-5f || !isfinite(Y[r * 128 + i]);
  char d[64];
  snprintf(d, sizeof d, "%d of 256 wrong", bad);
  report("tasks: producer + default x2", bad == 0, d);
}

static void test_cluster_rank(void) {
  tile_kernel *k = kernel("cluster_rank.cubin", "cluster_rank_k");
  if (!k) return;
  int out[8];
  tile_devptr d;
  CHECK(tile_malloc(&d, sizeof out));
  CHECK(tile_memset_d32(d, 0xffffffffu, 8));
  void *args[] = {&d};
  CHECK(tile_launch(k, 8, 1, 1, args, 1, NULL));
  CHECK(tile_synchronize());
  CHECK(tile_memcpy_dtoh(out, d, sizeof out));
  int bad = 0;
  for (int i = 0; i < 8; i++) bad += out[i] != i % 2;
  report("cluster(2,1,1): cluster_rank()", bad == 0, bad ? "wrong ranks" : "ranks 0,1,0,1,...");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  if (tile_init(0) != TILE_OK) {
    printf("SKIP no GPU: %s\n", tile_last_error());
    return 0;
  }
  srand(12345);
  test_mma_regs_a();
  test_mma_mn();
  int sws[] = {0, 32, 64, 128};
  for (int i = 0; i < 4; i++) test_smem_roundtrip(sws[i]);
  test_tma_copy(64, 64);
  test_tma_copy(200, 100);
  test_tma_copy(1, 8);
  test_tasks_default();
  test_cluster_rank();
  printf("%s\n", failures ? "PRIMITIVE TESTS FAILED" : "PRIMITIVE TESTS PASSED");
  return failures ? 1 : 0;
}

/* test_prims.c - GPU checks of the explicit primitives, one small kernel
 * each (the .tile files beside this one, compiled by tilec beforehand):
 *   mma_regs_a      wgmma with A in registers, B through TMA, cluster(1,1,1)
 *   smem_roundtrip  registers -> swizzled smem -> registers, swizzle 0/32/64/128
 *   tma_copy        TMA load + TMA store of odd-sized matrices (edges clipped)
 *   tasks_default   a producer task and a default task with two replicas
 *   cluster_rank    clusters of two CTAs
 *   vote_rows       any()/all() over a row per program (barrier 0), as
 *                   values, as `if` conditions, in a `while` condition
 *   vote_tasks      any()/all() in a 4-warp task with two replicas
 *   vote_tasks_mixed  any()/all() in a 1-warp task beside a 4-warp task x2
 *   scale_rows      scale_rows(x, f) = x * f[:, None] on 64 x 64 (and
 *   scale_rows_wide 64 x 128; scale_rows_rowmax: f from a row max): a warp
 *                   whose factors are all 1 skips the multiplies; all ones,
 *                   one factor != 1 at every row, 1 + ulp, -1/0/-0/NaN/inf
 *                   factors, mixed row groups
 *   smem_scalars    smem_write/smem_read: a 1-warp producer task hands 4 i32
 *                   scalars per item to a 4-warp consumer task x2 through a
 *                   3-slot ring beside mbarriers (1000 items per program);
 *                   every value of every item for both replicas, and held
 *                   by every thread (task_barrier() before the consumers'
 *                   arrival: tilec requires it after smem_read)
 *   smem_scalars_f32  the same with f32 (NaN payloads, -0, inf, denormals)
 *                   through a 2-slot ring, bit for bit
 *   exp2_fma        exp2(x, fma_every = 2) against exp2 in double: relative
 *                   error <= 4e-7 on [-126, 127], 0 below -127 (as
 *                   ex2.approx.ftz), +inf from 128, NaN for NaN, -inf -> 0;
 *                   both register paths (FMA polynomial, ex2.approx) hit
 *   bulk_ring       bulk_load into a 2-slot ring (a 1-warp loader task, a
 *                   4-warp consumer task, full/empty mbarriers), 4 programs
 *                   x 64 blocks of 64 x 64 f32, every element bit for bit
 *   mma_wide        a 160-key block: S = Q K^T as one N = 160 wgmma chain
 *                   into a pair of accumulators (K over two column blocks),
 *                   O = (P1, P2) V with A a pair along K, and row slices of
 *                   two-block views of 160 rows (S2, O2), and S with Q
 *                   smem_load-ed into registers (S3)
 *   cluster_sync    cluster_sync() around a dsmem_copy each way between the
 *                   CTAs of a pair (clusters of 2), every element checked
 * usage: test_prims DIR [NAME]   (DIR holds NAME.cubin; smem_roundtrip.SW.cubin; NAME: that check alone,
 * of those that take one: bulk_ring, cluster_sync)
 * Prints one line per check; exit status 0 only if all pass. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

static const char *watchdog_what;
static void watchdog(int sig) {
  (void)sig;
  char msg[160];
  int len = snprintf(msg, sizeof msg, "FAIL %s: no result after 60 s (a barrier that never completes?)\n",
                     watchdog_what ? watchdog_what : "?");
  if (write(1, msg, (size_t)len) < 0) _exit(3);
  _exit(1);
}
/* The watchdog armed for one launch: a kernel that hangs fails with what's name instead of hanging the run. */
static void watchdog_arm(const char *what) {
  watchdog_what = what;
  fflush(stdout); /* the watchdog leaves with _exit: nothing may stay buffered */
  signal(SIGALRM, watchdog);
  alarm(60);
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

/* cluster_sync() (cluster_sync.tile): 4 programs, clusters of 2; program p receives the block of rank
 * 1 - p % 2 through its partner's dsmem_copy, element e = e + 4096 * that rank. */
static void test_cluster_sync(void) {
  tile_kernel *k = kernel("cluster_sync.cubin", "cluster_sync_k");
  if (!k) return;
  enum { P = 4, E = 4096 };
  static float out[P * E];
  tile_devptr d;
  CHECK(tile_malloc(&d, sizeof out));
  CHECK(tile_memset_d32(d, 0xffffffffu, P * E));
  void *args[] = {&d};
  watchdog_arm("cluster_sync");
  CHECK(tile_launch(k, P, 1, 1, args, 1, NULL));
  CHECK(tile_synchronize());
  alarm(0);
  CHECK(tile_memcpy_dtoh(out, d, sizeof out));
  int bad = 0;
  for (int p = 0; p < P; p++)
    for (int e = 0; e < E; e++) bad += out[p * E + e] != (float)(e + E * (1 - p % 2));
  report("cluster_sync(): blocks swapped between the CTAs of a pair by dsmem_copy", bad == 0,
         bad ? "wrong elements" : "every element");
}

/* any()/all(): rows (or a task group's part of one) are filled around the
 * threshold t; the expected votes are computed from the filled data. */
enum { V_NONE, V_NONE_EQ, V_ALL, V_ONE_ABOVE, V_ONE_BELOW, V_ONE_EQ, V_RANDOM };
static float above(float t) { return t + 0.01f + (float)rand() / (float)RAND_MAX * 1.5f; }
static float below(float t) { return t - 0.01f - (float)rand() / (float)RAND_MAX * 1.5f; }
static void vote_fill(float *x, int n, float t, int kind, int pos) {
  for (int i = 0; i < n; i++) {
    switch (kind) {
    case V_NONE: x[i] = below(t); break;
    case V_NONE_EQ: x[i] = i % 3 ? below(t) : t; break; /* equal to t is not above */
    case V_ALL: x[i] = above(t); break;
    case V_ONE_ABOVE: x[i] = i == pos ? t + 0.5f + (float)pos / 32.0f : below(t); break;
    case V_ONE_BELOW: x[i] = i == pos ? below(t) : above(t); break;
    case V_ONE_EQ: x[i] = i == pos ? t : above(t); break;
    default: x[i] = rand() % 2 ? above(t) : below(t); break;
    }
  }
}
static void vote_ref(const float *x, int n, float t, int *any, int *all) {
  *any = 0;
  *all = 1;
  for (int i = 0; i < n; i++) {
    if (x[i] > t) *any = 1;
    else *all = 0;
  }
}
static const char *vote_kind_name[] = {"none", "none(some == t)", "all", "one above", "one below", "one == t", "random"};

#define CHECK_RET(call, rv)                                                                           \
  do {                                                                                                \
    tile_status st_ = (call);                                                                         \
    if (st_ != TILE_OK) {                                                                             \
      printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #call, tile_last_error());                     \
      failures++;                                                                                     \
      return rv;                                                                                      \
    }                                                                                                 \
  } while (0)

/* Launches k(x, t, out, held) on `grid` programs with out and held poisoned;
 * copies both back. Returns 0 when something failed (already reported). */
static int vote_launch(tile_kernel *k, unsigned grid, const float *x, size_t nx, float t, int *out, size_t nout,
                       int *held, size_t nheld) {
  tile_devptr dx, dout, dheld;
  CHECK_RET(tile_malloc(&dx, nx * sizeof *x), 0);
  CHECK_RET(tile_malloc(&dout, nout * sizeof *out), 0);
  CHECK_RET(tile_malloc(&dheld, nheld * sizeof *held), 0);
  CHECK_RET(tile_memcpy_htod(dx, x, nx * sizeof *x), 0);
  CHECK_RET(tile_memset_d32(dout, 0xdeadbeefu, nout), 0);
  CHECK_RET(tile_memset_d32(dheld, 0xdeadbeefu, nheld), 0);
  void *args[] = {&dx, &t, &dout, &dheld};
  CHECK_RET(tile_launch(k, grid, 1, 1, args, 4, NULL), 0);
  CHECK_RET(tile_synchronize(), 0);
  CHECK_RET(tile_memcpy_dtoh(out, dout, nout * sizeof *out), 0);
  CHECK_RET(tile_memcpy_dtoh(held, dheld, nheld * sizeof *held), 0);
  tile_free(dx);
  tile_free(dout);
  tile_free(dheld);
  return 1;
}

/* vote_rows: one 256-element row per program, warps(4). Rows with no
 * element above t, all above, exactly one above or exactly one not above
 * (at positions in every warp, both elements of a thread, and element 255:
 * the last lane of the last warp in the layout tilec picks), elements equal
 * to t, and random rows. */
static void test_vote_rows(float t) {
  tile_kernel *k = kernel("vote_rows.cubin", "vote_rows");
  if (!k) return;
  enum { N = 256, MAXROWS = 64 };
  static const int pos[] = {0, 1, 2, 31, 62, 63, 64, 65, 127, 128, 190, 191, 192, 193, 253, 254, 255};
  int npos = (int)(sizeof pos / sizeof pos[0]);
  int kind[MAXROWS], at[MAXROWS], rows = 0;
  kind[rows] = V_NONE, at[rows++] = -1;
  kind[rows] = V_NONE_EQ, at[rows++] = -1;
  kind[rows] = V_ALL, at[rows++] = -1;
  for (int j = 0; j < npos; j++) kind[rows] = V_ONE_ABOVE, at[rows++] = pos[j];
  for (int j = 0; j < npos; j++) kind[rows] = V_ONE_BELOW, at[rows++] = pos[j];
  kind[rows] = V_ONE_EQ, at[rows++] = 0;
  kind[rows] = V_ONE_EQ, at[rows++] = 100;
  kind[rows] = V_ONE_EQ, at[rows++] = 255;
  while (rows < 48) kind[rows] = V_RANDOM, at[rows++] = -1;
  static float X[MAXROWS * N], W[N];
  static int out[MAXROWS * 4], held[MAXROWS * N];
  for (int r = 0; r < rows; r++) vote_fill(X + r * N, N, t, kind[r], at[r]);
  if (!vote_launch(k, (unsigned)rows, X, (size_t)rows * N, t, out, (size_t)rows * 4, held, (size_t)rows * N)) return;
  int bad_vote = 0, bad_loop = 0, bad_held = 0, shown = 0;
  for (int r = 0; r < rows; r++) {
    int any, all, n = 0;
    vote_ref(X + r * N, N, t, &any, &all);
    /* while any(w > t) { w = w - 1.0; } in f32, as the kernel does it */
    memcpy(W, X + r * N, sizeof W);
    for (;;) {
      int a2, l2;
      vote_ref(W, N, t, &a2, &l2);
      if (!a2) break;
      for (int i = 0; i < N; i++) W[i] = W[i] - 1.0f;
      n++;
    }
    int *o = out + r * 4, wrong = o[0] != any || o[1] != all || o[2] != any + 2 * all, hw = 0;
    for (int i = 0; i < N; i++) hw += held[r * N + i] != any + 2 * all;
    bad_vote += wrong;
    bad_loop += o[3] != n;
    bad_held += hw != 0;
    if ((wrong || o[3] != n || hw) && shown++ < 4)
      printf("  row %d (%s at %d): any=%d all=%d if=%d loops=%d, %d of 256 held wrong; expected %d %d %d %d\n", r,
             vote_kind_name[kind[r]], at[r], o[0], o[1], o[2], o[3], hw, any, all, any + 2 * all, n);
  }
  char what[64], d[96];
  snprintf(what, sizeof what, "any/all per row (t=%g)", t);
  snprintf(d, sizeof d, "%d of %d rows wrong (values or if)", bad_vote, rows);
  report(what, bad_vote == 0, d);
  snprintf(what, sizeof what, "while any(): iterations (t=%g)", t);
  snprintf(d, sizeof d, "%d of %d rows wrong", bad_loop, rows);
  report(what, bad_loop == 0, d);
  snprintf(what, sizeof what, "any/all held by every thread (t=%g)", t);
  snprintf(d, sizeof d, "%d of %d rows with a wrong thread", bad_held, rows);
  report(what, bad_held == 0, d);
}

/* Groups voting side by side in one CTA (task replicas, or different
 * tasks): G groups per program, group g reads x[(p * G + g) * 128 ...]
 * (len[g] elements of it) and writes out[q * 2 ..], held[q * 128 ...].
 * Neighbouring groups get kinds with different results, so a barrier
 * reduction that mixes groups shows. */
static void test_vote_groups(const char *file, const char *name, const char *what0, int G, const int *len, float t) {
  tile_kernel *k = kernel(file, name);
  if (!k) return;
  enum { S = 128, PROGS = 48, MAXQ = PROGS * 3 };
  static float X[MAXQ * S];
  static int out[MAXQ * 2], held[MAXQ * S], kind[MAXQ], at[MAXQ];
  static const int kinds[] = {V_NONE, V_ONE_ABOVE, V_ALL, V_ONE_BELOW, V_NONE_EQ, V_ONE_EQ, V_RANDOM};
  int nq = PROGS * G;
  for (int q = 0; q < nq; q++) {
    int p = q / G, g = q % G, n = len[g];
    /* program p: group g gets kind (p + g) % 4 of the first four for most
     * programs (none / one above / all / one below: neighbours differ), a
     * later kind for the last ones; positions sweep the group */
    kind[q] = p < PROGS - 6 ? kinds[(p + g) % 4] : kinds[4 + (p + g) % 3];
    at[q] = (p * 5 + g * 37 + (p % 3 == 0 ? n - 1 : 0)) % n;
    if (p % 7 == 0) at[q] = n - 1; /* the last lane of the last warp */
    if (kind[q] != V_ONE_ABOVE && kind[q] != V_ONE_BELOW && kind[q] != V_ONE_EQ) at[q] = -1;
    vote_fill(X + q * S, n, t, kind[q], at[q]);
    /* what the group must not read: the opposite of its first element */
    for (int i = n; i < S; i++) X[q * S + i] = X[q * S] > t ? below(t) : above(t);
  }
  if (!vote_launch(k, PROGS, X, (size_t)nq * S, t, out, (size_t)nq * 2, held, (size_t)nq * S)) return;
  int bad = 0, bad_held = 0, shown = 0;
  for (int q = 0; q < nq; q++) {
    int any, all, hw = 0, n = len[q % G];
    vote_ref(X + q * S, n, t, &any, &all);
    for (int i = 0; i < n; i++) hw += held[q * S + i] != any + 2 * all;
    for (int i = n; i < S; i++) hw += held[q * S + i] != (int)0xdeadbeefu; /* not written */
    int wrong = out[q * 2] != any || out[q * 2 + 1] != all;
    bad += wrong;
    bad_held += hw != 0;
    if ((wrong || hw) && shown++ < 4)
      printf("  program %d group %d (%s at %d): any=%d all=%d, %d of %d held wrong; expected %d %d\n", q / G, q % G,
             vote_kind_name[kind[q]], at[q], out[q * 2], out[q * 2 + 1], hw, n, any, all);
  }
  char what[80], d[96];
  snprintf(what, sizeof what, "%s (t=%g)", what0, t);
  snprintf(d, sizeof d, "%d of %d groups wrong, %d with a wrong thread", bad, nq, bad_held);
  report(what, bad == 0 && bad_held == 0, d);
}

/* scale_rows(x, f) = x * f[:, None]: program p scales its [64, N] block of x
 * by its 64 factors (warps(4)); a warp whose factors are all exactly 1 skips
 * the multiplies and keeps x as it is. Programs are grouped into checks by
 * how their factors are set. Every row of x holds a few special values (NaN
 * with payloads, signalling NaN, +-inf, -0, denormals, +-FLT_MAX) among
 * random ones. Expected: x * f[r] in f32 on the host (mul.f32 is the same
 * IEEE multiply, denormals kept), bit for bit, except that any NaN matches
 * any NaN; for all-ones programs x itself, bit for bit, NaN payloads and all
 * (nothing may be multiplied there). With frowmax the kernel takes its
 * factors as max(fm[r, 0..63]) over a [64, 64] block that repeats f[r] along
 * each row (f in the row layout of x, as a reduction leaves it), else as a
 * plain [64] load. */
enum { SR_ONES, SR_RANDOM, SR_ONE_ROW, SR_ONE_ULP, SR_ONE_SPECIAL, SR_GROUPS, SR_RANDOM_SPECIAL, SR_NCHECKS };
static const char *sr_check_name[SR_NCHECKS] = {
    "all factors 1 (x bit for bit)", "random factors", "one factor != 1, at each row", "one factor 1+ulp, at each row",
    "one -1/0/-0/NaN/inf/1-ulp",     "1 in row groups, rest random", "random, with -1/0/-0/NaN/inf"};
static const uint32_t sr_special[] = {
    0x7fc12345u, /* NaN with a payload */
    0xffc00001u, /* negative NaN */
    0x7f800001u, /* signalling NaN */
    0x7f800000u, 0xff800000u, /* +-inf */
    0x80000000u, 0x00000000u, /* -0, +0 */
    0x00000001u, 0x807fffffu, /* denormals */
    0x7f7fffffu, 0xff7fffffu, /* +-FLT_MAX */
    0x00800000u, 0x3f800000u, /* FLT_MIN, 1 */
};
static uint32_t f2u(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float u2f(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static float sr_factor(void) { /* random, never 1 */
  float v;
  do v = ldexpf(frand(), rand() % 8 - 3);
  while (v == 1.0f);
  return v;
}
/* row groups for SR_GROUPS: row r gets factor 1 where sr_group(g, r) holds
 * (halves, even/odd, rows (r >> 1) & 3 == k and r & 3 == k (one warp's rows
 * in the 64 x 64 and the 64 x 128 layouts tilec picks now) and their
 * complements, half-warp row groups) */
enum { SR_NGROUPS = 23 };
static int sr_group(int g, int r, char *name, size_t n) {
  int k = g & 3, in;
  const char *what;
  switch (g < 20 ? g / 4 : g) {
  case 0: /* g = 0..3 */
    in = g == 0 ? r < 32 : g == 1 ? r >= 32 : g == 2 ? r % 2 == 0 : r % 2 == 1;
    what = g == 0 ? "r < 32" : g == 1 ? "r >= 32" : g == 2 ? "r even" : "r odd";
    snprintf(name, n, "1 where %s", what);
    return in;
  case 1: snprintf(name, n, "1 where (r>>1)&3 == %d", k); return ((r >> 1) & 3) == k;
  case 2: snprintf(name, n, "1 where r&3 == %d", k); return (r & 3) == k;
  case 3: snprintf(name, n, "1 where (r>>1)&3 != %d", k); return ((r >> 1) & 3) != k;
  case 4: snprintf(name, n, "1 where r&3 != %d", k); return (r & 3) != k;
  case 20: snprintf(name, n, "1 where r&15 < 8"); return (r & 15) < 8;
  case 21: snprintf(name, n, "1 where r&15 >= 8"); return (r & 15) >= 8;
  default: snprintf(name, n, "1 where r&16 == 0"); return (r & 16) == 0;
  }
}

static void test_scale_rows(const char *file, const char *name, int N, int frowmax) {
  tile_kernel *k = kernel(file, name);
  if (!k) return;
  enum { M = 64, MAXP = 256 };
  static const int sp_pos[] = {0, 7, 8, 15, 16, 31, 32, 63};
  const float sp_val[] = {-1.0f, 0.0f, -0.0f, NAN, INFINITY, nextafterf(1.0f, 0.0f)};
  const float rs_val[] = {-1.0f, 0.0f, -0.0f, NAN, INFINITY};
  int nsp = (int)(sizeof sp_val / sizeof sp_val[0]), nrs = (int)(sizeof rs_val / sizeof rs_val[0]);
  static float F[MAXP * M];
  static int check[MAXP];
  static char desc[MAXP][48];
  int P = 0;
  for (int i = 0; i < 3; i++, P++) {
    check[P] = SR_ONES, snprintf(desc[P], sizeof desc[P], "all 1");
    for (int r = 0; r < M; r++) F[P * M + r] = 1.0f;
  }
  for (int i = 0; i < 4; i++, P++) {
    check[P] = SR_RANDOM, snprintf(desc[P], sizeof desc[P], "random");
    for (int r = 0; r < M; r++) F[P * M + r] = sr_factor();
  }
  for (int pos = 0; pos < M; pos++, P++) { /* every row: each is some warp's */
    check[P] = SR_ONE_ROW;
    for (int r = 0; r < M; r++) F[P * M + r] = r == pos ? sr_factor() : 1.0f;
    snprintf(desc[P], sizeof desc[P], "1 but f[%d] = %g", pos, F[P * M + pos]);
  }
  for (int pos = 0; pos < M; pos++, P++) {
    check[P] = SR_ONE_ULP, snprintf(desc[P], sizeof desc[P], "1 but f[%d] = 1+ulp", pos);
    for (int r = 0; r < M; r++) F[P * M + r] = r == pos ? nextafterf(1.0f, 2.0f) : 1.0f;
  }
  for (int j = 0; j < (int)(sizeof sp_pos / sizeof sp_pos[0]); j++)
    for (int v = 0; v < nsp; v++, P++) {
      check[P] = SR_ONE_SPECIAL;
      snprintf(desc[P], sizeof desc[P], "1 but f[%d] = %.9g", sp_pos[j], sp_val[v]);
      for (int r = 0; r < M; r++) F[P * M + r] = r == sp_pos[j] ? sp_val[v] : 1.0f;
    }
  for (int g = 0; g < SR_NGROUPS; g++, P++) {
    check[P] = SR_GROUPS;
    for (int r = 0; r < M; r++) F[P * M + r] = sr_group(g, r, desc[P], sizeof desc[P]) ? 1.0f : sr_factor();
  }
  for (int i = 0; i < 4; i++, P++) {
    check[P] = SR_RANDOM_SPECIAL, snprintf(desc[P], sizeof desc[P], "random, specials from row %d", i * 13 + 3);
    for (int r = 0; r < M; r++) F[P * M + r] = sr_factor();
    for (int v = 0; v < nrs; v++) F[P * M + (i * 13 + 3 + v * 11) % M] = rs_val[v];
  }
  if (P > MAXP) {
    printf("FAIL scale_rows: %d programs, room for %d\n", P, MAXP);
    failures++;
    return;
  }
  size_t nx = (size_t)P * M * N;
  float *X = malloc(nx * sizeof *X), *O = malloc(nx * sizeof *O);
  int nspec = (int)(sizeof sr_special / sizeof sr_special[0]);
  for (int p = 0; p < P; p++)
    for (int r = 0; r < M; r++) {
      float *row = X + ((size_t)p * M + r) * N;
      for (int c = 0; c < N; c++) row[c] = ldexpf(frand(), rand() % 40 - 20);
      for (int j = 0; j < 4; j++) row[(r * 7 + j * 17 + p) % N] = u2f(sr_special[(r * 3 + j + p) % nspec]);
    }
  size_t nf = (size_t)P * M * (frowmax ? 64 : 1);
  float *FA = malloc(nf * sizeof *FA); /* what the kernel reads as f */
  for (size_t i = 0; i < nf; i++) FA[i] = F[frowmax ? i / 64 : i];
  tile_devptr dx, df, dout;
  CHECK(tile_malloc(&dx, nx * sizeof *X));
  CHECK(tile_malloc(&df, nf * sizeof *FA));
  CHECK(tile_malloc(&dout, nx * sizeof *O));
  CHECK(tile_memcpy_htod(dx, X, nx * sizeof *X));
  CHECK(tile_memcpy_htod(df, FA, nf * sizeof *FA));
  CHECK(tile_memset_d32(dout, 0xdeadbeefu, nx));
  void *args[] = {&dx, &df, &dout};
  CHECK(tile_launch(k, (unsigned)P, 1, 1, args, 3, NULL));
  CHECK(tile_synchronize());
  CHECK(tile_memcpy_dtoh(O, dout, nx * sizeof *O));
  char tag[32];
  snprintf(tag, sizeof tag, "%dx%d%s", M, N, frowmax ? " f=rowmax" : "");
  int progs[SR_NCHECKS] = {0}, bad_progs[SR_NCHECKS] = {0}, shown[SR_NCHECKS] = {0};
  long bad[SR_NCHECKS] = {0}, unwritten[SR_NCHECKS] = {0}, payload[SR_NCHECKS] = {0};
  for (int p = 0; p < P; p++) {
    int ch = check[p], strict = ch == SR_ONES;
    long b = 0;
    progs[ch]++;
    for (int r = 0; r < M; r++)
      for (int c = 0; c < N; c++) {
        size_t i = ((size_t)p * M + r) * N + c;
        float f = F[p * M + r];
        uint32_t xb = f2u(X[i]), got = f2u(O[i]), want = strict ? xb : f2u(X[i] * f);
        if (got == want || (!strict && isnan(u2f(got)) && isnan(u2f(want)))) continue;
        b++;
        unwritten[ch] += got == 0xdeadbeefu;
        payload[ch] += isnan(u2f(got)) && isnan(u2f(want)); /* strict only */
        if (shown[ch]++ < 4)
          printf("  %s program %d (%s): [%d][%d] x=%.9g (0x%08x) f=%.9g (0x%08x): got %.9g (0x%08x), expected "
                 "%.9g (0x%08x)\n",
                 tag, p, desc[p], r, c, X[i], xb, f, f2u(f), O[i], got, u2f(want), want);
      }
    bad[ch] += b;
    bad_progs[ch] += b != 0;
  }
  for (int ch = 0; ch < SR_NCHECKS; ch++) {
    char what[96], d[128];
    snprintf(what, sizeof what, "scale_rows %s: %s", tag, sr_check_name[ch]);
    snprintf(d, sizeof d, "%d of %d programs wrong, %ld elements (%ld unwritten%s)", bad_progs[ch], progs[ch],
             bad[ch], unwritten[ch], ch == SR_ONES && payload[ch] ? ", some NaN payloads changed" : "");
    report(what, bad_progs[ch] == 0 && progs[ch] > 0, d);
  }
  tile_free(dx);
  tile_free(df);
  tile_free(dout);
  free(X);
  free(O);
  free(FA);
}

/* smem_write / smem_read (smem_scalars.tile, smem_scalars_f32.tile): a 1-warp
 * producer task hands NV scalars per item to a 4-warp consumer task with two
 * replicas through a ring of a small smem buffer, beside the mbarriers
 * `ready` (arrive = 1) and `freed` (arrive = 2). Program p runs n items;
 * consumer replica r of program p stores, for item i and value k,
 * q = (p * 2 + r) * n + i:
 *   out[q * NV + k]                one store per replica (all threads, one value)
 *   held[(q * NV + k) * 128 + t]   the value as the thread storing element t holds it
 * Both are poisoned with SS_POISON (no expected value equals it) and
 * compared bit for bit with want[(p * n + i) * NV + k]. A kernel that hangs
 * (a barrier never completes) is caught by an alarm. */
#define SS_POISON 0xdeadbeefu
/* "item j's value" when a wrong value is, at the same position, the value
 * of exactly one item j near i (a ring slot read before it was written, or
 * after it was overwritten) */
static void ss_whose(const uint32_t *want, int p, int n, int NV, int i, int k, uint32_t got, char *buf, size_t cap) {
  buf[0] = 0;
  if (got == SS_POISON) {
    snprintf(buf, cap, " (unwritten)");
    return;
  }
  int found = -1, count = 0;
  for (int j = i - 6; j <= i + 6; j++)
    if (j >= 0 && j < n && want[((size_t)p * n + j) * NV + k] == got) found = j, count++;
  if (count == 1) snprintf(buf, cap, " (item %d's value)", found);
}
static void ss_show(int isf, uint32_t u, char *buf, size_t cap) {
  if (isf) snprintf(buf, cap, "%.9g (0x%08x)", u2f(u), u);
  else snprintf(buf, cap, "%d (0x%08x)", (int32_t)u, u);
}
static void ss_check(const char *what, int P, int n, int NV, const char *const *posname, int isf, const uint32_t *want,
                     const uint32_t *out, const uint32_t *held) {
  long bad = 0, unwritten = 0, bad_held_vals = 0, bad_threads = 0;
  int shown = 0, shown_held = 0, items_bad = 0, items_bad_held = 0;
  for (int p = 0; p < P; p++)
    for (int i = 0; i < n; i++) {
      int item_bad = 0, item_bad_held = 0;
      for (int r = 0; r < 2; r++)
        for (int k = 0; k < NV; k++) {
          size_t q = ((size_t)(p * 2 + r) * n + i) * NV + k;
          uint32_t w = want[((size_t)p * n + i) * NV + k], g = out[q];
          char gs[48], ws[48], whose[40];
          if (g != w) {
            bad++, item_bad = 1;
            unwritten += g == SS_POISON;
            if (shown++ < 4) {
              ss_show(isf, g, gs, sizeof gs), ss_show(isf, w, ws, sizeof ws);
              ss_whose(want, p, n, NV, i, k, g, whose, sizeof whose);
              printf("  %s: program %d item %d replica %d %s: got %s%s, expected %s\n", what, p, i, r, posname[k], gs,
                     whose, ws);
            }
          }
          int nt = 0, t0 = -1;
          for (int t = 0; t < 128; t++)
            if (held[q * 128 + t] != w) nt++, t0 = t0 < 0 ? t : t0;
          if (nt) {
            bad_held_vals++, bad_threads += nt, item_bad_held = 1;
            if (shown_held++ < 4) {
              uint32_t g0 = held[q * 128 + t0];
              ss_show(isf, g0, gs, sizeof gs), ss_show(isf, w, ws, sizeof ws);
              ss_whose(want, p, n, NV, i, k, g0, whose, sizeof whose);
              printf("  %s: program %d item %d replica %d %s: %d of 128 threads wrong, thread %d holds %s%s, "
                     "expected %s\n",
                     what, p, i, r, posname[k], nt, t0, gs, whose, ws);
            }
          }
        }
      items_bad += item_bad, items_bad_held += item_bad_held;
    }
  char w1[96], d[128];
  snprintf(w1, sizeof w1, "%s: values", what);
  snprintf(d, sizeof d, "%ld of %ld wrong (%ld unwritten), in %d of %d items", bad, (long)P * n * 2 * NV, unwritten,
           items_bad, P * n);
  report(w1, bad == 0, d);
  snprintf(w1, sizeof w1, "%s: held by every thread", what);
  snprintf(d, sizeof d, "%ld of %ld values with a wrong thread (%ld threads), in %d items", bad_held_vals,
           (long)P * n * 2 * NV, bad_threads, items_bad_held);
  report(w1, bad_held_vals == 0, d);
}
/* Launches k(in, out, held, n) on P programs, out/held poisoned; copies
 * them back. 0 when something failed (already reported). */
static int ss_launch(tile_kernel *k, const char *what, int P, int n, const void *in, size_t in_bytes, uint32_t *out,
                     size_t nout, uint32_t *held, size_t nheld) {
  tile_devptr din, dout, dheld;
  CHECK_RET(tile_malloc(&din, in_bytes), 0);
  CHECK_RET(tile_malloc(&dout, nout * 4), 0);
  CHECK_RET(tile_malloc(&dheld, nheld * 4), 0);
  CHECK_RET(tile_memcpy_htod(din, in, in_bytes), 0);
  CHECK_RET(tile_memset_d32(dout, SS_POISON, nout), 0);
  CHECK_RET(tile_memset_d32(dheld, SS_POISON, nheld), 0);
  void *args[] = {&din, &dout, &dheld, &n};
  watchdog_arm(what);
  tile_status st = tile_launch(k, (unsigned)P, 1, 1, args, 4, NULL);
  if (st == TILE_OK) st = tile_synchronize();
  alarm(0);
  if (st != TILE_OK) {
    printf("FAIL %s: launch: %s\n", what, tile_last_error());
    failures++;
    return 0;
  }
  CHECK_RET(tile_memcpy_dtoh(out, dout, nout * 4), 0);
  CHECK_RET(tile_memcpy_dtoh(held, dheld, nheld * 4), 0);
  tile_free(din);
  tile_free(dout);
  tile_free(dheld);
  return 1;
}

/* i32: item i of program p (w = work[p * n + i], |w| < 2^29 so nothing
 * overflows): (0,0) = w, (1,7) = i * 7 + 3, (1,0) = -1000000 - i,
 * (0,5) = w * 3 - i. */
static void test_smem_scalars(const char *name, const char *what) {
  tile_kernel *k = kernel("smem_scalars.cubin", name);
  if (!k) return;
  enum { P = 8, N = 1000, NV = 4 };
  static const char *const pos[NV] = {"(0,0) = work[i]", "(1,7) = i*7+3", "(1,0) = -1000000-i", "(0,5) = work[i]*3-i"};
  static const int32_t specials[] = {0, -1, 1, -(1 << 29) + 1, (1 << 29) - 1, 3, -3};
  int32_t *work = malloc(sizeof(int32_t) * P * N);
  uint32_t *want = malloc(sizeof(uint32_t) * P * N * NV), *out = malloc(sizeof(uint32_t) * P * 2 * N * NV),
           *held = malloc(sizeof(uint32_t) * P * 2 * N * NV * 128);
  for (int j = 0; j < P * N; j++) {
    int i = j % N;
    int32_t w = j % 97 < 7 ? specials[j % 97]
                           : (int32_t)((((uint32_t)rand() << 12) ^ (uint32_t)rand()) % (1u << 30)) - (1 << 29);
    work[j] = w;
    want[(size_t)j * NV + 0] = (uint32_t)w;
    want[(size_t)j * NV + 1] = (uint32_t)(i * 7 + 3);
    want[(size_t)j * NV + 2] = (uint32_t)(-1000000 - i);
    want[(size_t)j * NV + 3] = (uint32_t)(w * 3 - i);
  }
  if (ss_launch(k, what, P, N, work, sizeof(int32_t) * P * N, out, (size_t)P * 2 * N * NV, held,
                (size_t)P * 2 * N * NV * 128))
    ss_check(what, P, N, NV, pos, 0, want, out, held);
  free(work);
  free(want);
  free(out);
  free(held);
}

/* f32, bit for bit: item i of program p (j = p * n + i): (0,1) = x[j*4],
 * (1,0) = x[j*4+1], (2,3) = x[j*4+2], (3,2) = x[j*4+3], (3,3) = i * -0.5f,
 * (1,3) = -0.0. Every third x is a special value (NaN payloads, signalling
 * NaNs, +-inf, +-0, denormals, +-FLT_MAX), at every position in turn. */
static void test_smem_scalars_f32(void) {
  const char *what = "smem_write/read f32, 2-slot ring";
  tile_kernel *k = kernel("smem_scalars_f32.cubin", "smem_scalars_f32");
  if (!k) return;
  enum { P = 4, N = 1000, NV = 6 };
  static const char *const pos[NV] = {"(0,1) = x[4j]",   "(1,0) = x[4j+1]",   "(2,3) = x[4j+2]",
                                      "(3,2) = x[4j+3]", "(3,3) = i * -0.5", "(1,3) = -0.0"};
  static const uint32_t specials[] = {0x7fc12345u, 0xffc00001u, 0x7f800001u, 0x7fbfffffu, 0x7f800000u,
                                      0xff800000u, 0x80000000u, 0x00000000u, 0x00000001u, 0x807fffffu,
                                      0x7f7fffffu, 0xff7fffffu, 0x7fffffffu, 0xffffffffu};
  int nspec = (int)(sizeof specials / sizeof specials[0]);
  float *x = malloc(sizeof(float) * P * N * 4);
  uint32_t *want = malloc(sizeof(uint32_t) * P * N * NV), *out = malloc(sizeof(uint32_t) * P * 2 * N * NV),
           *held = malloc(sizeof(uint32_t) * P * 2 * N * NV * 128);
  for (int e = 0; e < P * N * 4; e++)
    x[e] = e % 3 == 0 ? u2f(specials[(e / 3) % nspec]) : ldexpf(frand(), rand() % 40 - 20);
  for (int j = 0; j < P * N; j++) {
    int i = j % N;
    for (int c = 0; c < 4; c++) want[(size_t)j * NV + c] = f2u(x[j * 4 + c]);
    want[(size_t)j * NV + 4] = f2u((float)i * -0.5f);
    want[(size_t)j * NV + 5] = 0x80000000u;
  }
  if (ss_launch(k, what, P, N, x, sizeof(float) * P * N * 4, out, (size_t)P * 2 * N * NV, held,
                (size_t)P * 2 * N * NV * 128))
    ss_check(what, P, N, NV, pos, 1, want, out, held);
  free(x);
  free(want);
  free(out);
  free(held);
}

static void test_exp2_fma(void) {
  tile_kernel *k = kernel("exp2_fma.cubin", "exp2_fma");
  if (!k) return;
  enum { P = 64, N = P * 1024 };
  float *x = malloc(sizeof(float) * N), *y2 = malloc(sizeof(float) * N), *y0 = malloc(sizeof(float) * N);
  static const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 127.0f, 127.99f, 128.0f, 1000.0f,
                                   -126.0f, -126.5f, -127.0f, -127.5f, -150.0f, INFINITY, -INFINITY, NAN};
  int ns = (int)(sizeof specials / sizeof specials[0]);
  for (int i = 0; i < N; i++) /* every special at both register parities; the rest over [-130, 130] */
    x[i] = i < 4 * ns ? specials[(i / 2) % ns] : (float)(rand() % 2600000) / 10000.0f - 130.0f + frand() * 1e-4f;
  tile_devptr dx, d2, d0;
  CHECK(tile_malloc(&dx, sizeof(float) * N));
  CHECK(tile_malloc(&d2, sizeof(float) * N));
  CHECK(tile_malloc(&d0, sizeof(float) * N));
  CHECK(tile_memcpy_htod(dx, x, sizeof(float) * N));
  void *args[] = {&dx, &d2, &d0};
  CHECK(tile_launch(k, P, 1, 1, args, 3, NULL));
  CHECK(tile_synchronize());
  CHECK(tile_memcpy_dtoh(y2, d2, sizeof(float) * N));
  CHECK(tile_memcpy_dtoh(y0, d0, sizeof(float) * N));
  double worst = 0, worst0 = 0;
  long bad = 0, differ = 0;
  for (int i = 0; i < N; i++) {
    double v = x[i], r = exp2(v), got = y2[i];
    int ok;
    if (isnan(v)) ok = isnan(got);
    else if (v >= 128) ok = isinf(got) && got > 0;
    else if (v < -127) ok = got == 0;
    else if (v < -126) ok = got >= 0 && got <= 0x1p-126; /* ex2.approx.ftz flushes these; the polynomial may too */
    else {
      double e = fabs(got - r) / r, e0 = fabs((double)y0[i] - r) / r;
      if (e > worst) worst = e;
      if (e0 > worst0) worst0 = e0;
      ok = e <= 4e-7;
    }
    if (!ok && bad++ < 3) printf("     x = %.9g: exp2 = %.9g, fma_every = 2 gave %.9g\n", v, r, got);
    differ += y2[i] != y0[i];
  }
  char d[160];
  snprintf(d, sizeof d, "max rel err %.2e (ex2.approx %.2e), %ld bad, %ld differ from ex2.approx", worst, worst0,
           bad, differ);
  report("exp2(x, fma_every = 2)", bad == 0 && differ > 0, d);
  tile_free(dx);
  tile_free(d2);
  tile_free(d0);
  free(x);
  free(y2);
  free(y0);
}

/* mma_wide.tile: S = Q K^T [64, 160], O = P V, O2 = P[:, 128:] V[128:, :],
 * S2 = Q K[128:, :]^T, against double references. */
static void test_mma_wide(void) {
  tile_kernel *k = kernel("mma_wide.cubin", "mma_wide");
  if (!k) return;
  static uint16_t P[64 * 160], Q[64 * 128], K[160 * 128], V[160 * 128];
  static float S[64 * 160], O[64 * 128], O2[64 * 128], S2[64 * 32], S3[64 * 160];
  static double Sr[64 * 160], Or[64 * 128], O2r[64 * 128], S2r[64 * 32];
  for (int i = 0; i < 64 * 160; i++) P[i] = f2bf(frand());
  for (int i = 0; i < 64 * 128; i++) Q[i] = f2bf(frand());
  for (int i = 0; i < 160 * 128; i++) K[i] = f2bf(frand()), V[i] = f2bf(frand());
  tile_devptr dP, dQ, dK, dV, dS, dO, dO2, dS2, dS3;
  CHECK(tile_malloc(&dP, sizeof P));
  CHECK(tile_malloc(&dQ, sizeof Q));
  CHECK(tile_malloc(&dK, sizeof K));
  CHECK(tile_malloc(&dV, sizeof V));
  CHECK(tile_malloc(&dS, sizeof S));
  CHECK(tile_malloc(&dO, sizeof O));
  CHECK(tile_malloc(&dO2, sizeof O2));
  CHECK(tile_malloc(&dS2, sizeof S2));
  CHECK(tile_malloc(&dS3, sizeof S3));
  CHECK(tile_memcpy_htod(dP, P, sizeof P));
  CHECK(tile_memcpy_htod(dQ, Q, sizeof Q));
  CHECK(tile_memcpy_htod(dK, K, sizeof K));
  CHECK(tile_memcpy_htod(dV, V, sizeof V));
  CHECK(tile_memset_d32(dS, 0x7fc00000u, 64 * 160));
  CHECK(tile_memset_d32(dO, 0x7fc00000u, 64 * 128));
  CHECK(tile_memset_d32(dO2, 0x7fc00000u, 64 * 128));
  CHECK(tile_memset_d32(dS2, 0x7fc00000u, 64 * 32));
  CHECK(tile_memset_d32(dS3, 0x7fc00000u, 64 * 160));
  tile_tma_desc dq, dk, dv;
  CHECK(tile_tma_desc_2d(&dq, k, 1, dQ, 64, 128, 128));
  CHECK(tile_tma_desc_2d(&dk, k, 2, dK, 160, 128, 128));
  CHECK(tile_tma_desc_2d(&dv, k, 3, dV, 160, 128, 128));
  void *args[] = {&dP, &dq, &dk, &dv, &dS, &dO, &dO2, &dS2, &dS3};
  CHECK(tile_launch(k, 1, 1, 1, args, 9, NULL));
  CHECK(tile_synchronize());
  CHECK(tile_memcpy_dtoh(S, dS, sizeof S));
  CHECK(tile_memcpy_dtoh(O, dO, sizeof O));
  CHECK(tile_memcpy_dtoh(O2, dO2, sizeof O2));
  CHECK(tile_memcpy_dtoh(S2, dS2, sizeof S2));
  CHECK(tile_memcpy_dtoh(S3, dS3, sizeof S3));
  for (int i = 0; i < 64; i++) {
    for (int j = 0; j < 160; j++) {
      double acc = 0;
      for (int kk = 0; kk < 128; kk++) acc += (double)bf2f(Q[i * 128 + kk]) * bf2f(K[j * 128 + kk]);
      Sr[i * 160 + j] = acc;
      if (j >= 128) S2r[i * 32 + j - 128] = acc;
    }
    for (int j = 0; j < 128; j++) {
      double acc = 0, acc2 = 0;
      for (int kk = 0; kk < 160; kk++) {
        double t = (double)bf2f(P[i * 160 + kk]) * bf2f(V[kk * 128 + j]);
        acc += t;
        if (kk >= 128) acc2 += t;
      }
      Or[i * 128 + j] = acc;
      O2r[i * 128 + j] = acc2;
    }
  }
  const char *what[5] = {"wgmma N=160, pair of accumulators", "wgmma A pair along K (128 + 32)",
                         "wgmma B = row slice of 2 blocks", "wgmma K^T = row slice of 2 blocks",
                         "wgmma A = smem_load (A fragments)"};
  const float *got[5] = {S, O, O2, S2, S3};
  const double *ref[5] = {Sr, Or, O2r, S2r, Sr};
  int n[5] = {64 * 160, 64 * 128, 64 * 128, 64 * 32, 64 * 160};
  for (int t = 0; t < 5; t++) {
    int bad;
    char d[96];
    double e = rel(got[t], ref[t], n[t], &bad);
    snprintf(d, sizeof d, "rel_err=%.2e nonfinite=%d", e, bad);
    report(what[t], !bad && e < 1e-5, d);
  }
  tile_free(dP), tile_free(dQ), tile_free(dK), tile_free(dV);
  tile_free(dS), tile_free(dO), tile_free(dO2), tile_free(dS2), tile_free(dS3);
}

/* bulk_load (bulk_ring.tile): block b of src comes back as 2 x + (b mod n) in out's block b, for every
 * element (x * 2 is exact, so a fused multiply-add gives the same bits). out is poisoned first. */
static void test_bulk_ring(void) {
  tile_kernel *k = kernel("bulk_ring.cubin", "bulk_ring");
  if (!k) return;
  int P = 4, n = 64;
  size_t elems = (size_t)P * n * 4096, bytes = elems * sizeof(float);
  float *X = malloc(bytes), *Y = malloc(bytes);
  for (size_t i = 0; i < elems; i++) X[i] = frand();
  tile_devptr dx, dy;
  CHECK(tile_malloc(&dx, bytes));
  CHECK(tile_malloc(&dy, bytes));
  CHECK(tile_memcpy_htod(dx, X, bytes));
  CHECK(tile_memset_d8(dy, 0xff, bytes));
  void *args[] = {&dx, &dy, &n};
  watchdog_arm("bulk_ring");
  CHECK(tile_launch(k, (unsigned)P, 1, 1, args, 3, NULL));
  CHECK(tile_synchronize());
  alarm(0);
  CHECK(tile_memcpy_dtoh(Y, dy, bytes));
  size_t bad = 0;
  for (size_t i = 0; i < elems; i++) {
    float want = X[i] * 2.0f + (float)((i / 4096) % (size_t)n);
    if (memcmp(&want, &Y[i], 4)) {
      if (bad++ < 4) printf("  out[block %zu, %zu] = %g, want %g\n", i / 4096, i % 4096, Y[i], want);
    }
  }
  printf("%s bulk_load ring (4 programs x 64 blocks of 64x64 f32): %zu of %zu elements wrong\n", bad ? "FAIL" : "PASS",
         bad, elems);
  if (bad) failures++;
  tile_free(dx);
  tile_free(dy);
  free(X);
  free(Y);
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: %s DIR [bulk_ring | cluster_sync]\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  const char *only = argc == 3 ? argv[2] : NULL;
  if (only && strcmp(only, "bulk_ring") && strcmp(only, "cluster_sync")) {
    fprintf(stderr, "%s: no check named '%s' runs alone (bulk_ring and cluster_sync do)\n", argv[0], only);
    return 2;
  }
  if (tile_init(0) != TILE_OK) {
    printf("SKIP no GPU: %s\n", tile_last_error());
    return 0;
  }
  srand(12345);
  if (only) {
    if (!strcmp(only, "bulk_ring")) test_bulk_ring();
    else test_cluster_sync();
    printf("%s\n", failures ? "PRIMITIVE TESTS FAILED" : "PRIMITIVE TESTS PASSED");
    return failures ? 1 : 0;
  }
  test_mma_regs_a();
  test_mma_mn();
  test_mma_wide();
  int sws[] = {0, 32, 64, 128};
  for (int i = 0; i < 4; i++) test_smem_roundtrip(sws[i]);
  test_tma_copy(64, 64);
  test_tma_copy(200, 100);
  test_tma_copy(1, 8);
  test_tasks_default();
  test_cluster_rank();
  test_cluster_sync();
  static const int halves[] = {128, 128}, mixed[] = {32, 128, 128};
  float ts[] = {0.25f, -3.0f};
  for (int i = 0; i < 2; i++) {
    test_vote_rows(ts[i]);
    test_vote_groups("vote_tasks.cubin", "vote_tasks", "any/all in task replicas x2", 2, halves, ts[i]);
    test_vote_groups("vote_tasks_mixed.cubin", "vote_tasks_mixed", "any/all in a 1-warp task + task x2", 3, mixed,
                     ts[i]);
  }
  test_scale_rows("scale_rows.cubin", "scale_rows_k", 64, 0);
  test_scale_rows("scale_rows_wide.cubin", "scale_rows_wide_k", 128, 0);
  test_scale_rows("scale_rows_rowmax.cubin", "scale_rows_rowmax_k", 64, 1);
  test_smem_scalars("smem_scalars", "smem_write/read i32, 3-slot ring");
  test_smem_scalars_f32();
  test_exp2_fma();
  test_bulk_ring();
  printf("%s\n", failures ? "PRIMITIVE TESTS FAILED" : "PRIMITIVE TESTS PASSED");
  return failures ? 1 : 0;
}

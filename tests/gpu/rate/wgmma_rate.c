/* wgmma_rate.c - times wgmma_rate.tile's variants interleaved in one
 * process and prints the tensor rate of each (TFLOP/s, and per cent of the
 * first variant with the same products), so that a 160-key block's wgmmas
 * (N = 160 for S, K = 160 for P V) can be compared with 128 keys' without
 * the softmax, the pipeline or the masks.
 *   usage: wgmma_rate CUBIN...   (named wgmma_rate.dD.bxBX.MODE.cubin,
 *                                 MODE: both | qk | pv; tests/gpu/rate/run.sh)
 * Prints SKIP without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile/runtime.h"

enum { MAXV = 16, ROUNDS = 7, LAUNCHES = 5, ITERS = 4000 };

typedef struct {
  const char *path;
  int d, bx, qk, pv;
  tile_kernel *k;
  double ms[ROUNDS];
} Variant;

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define CK(call)                                                                                      \
  do {                                                                                                \
    tile_status st_ = (call);                                                                         \
    if (st_ != TILE_OK) {                                                                             \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, tile_last_error());                \
      return 1;                                                                                       \
    }                                                                                                 \
  } while (0)

int main(int argc, char **argv) {
  if (argc < 2 || argc - 1 > MAXV) {
    fprintf(stderr, "usage: %s CUBIN... (at most %d)\n", argv[0], MAXV);
    return 2;
  }
  Variant v[MAXV];
  int n = argc - 1;
  for (int i = 0; i < n; i++) {
    Variant *x = &v[i];
    memset(x, 0, sizeof *x);
    x->path = argv[i + 1];
    const char *base = strrchr(x->path, '/') ? strrchr(x->path, '/') + 1 : x->path;
    char mode[16] = "";
    int end = 0;
    if (sscanf(base, "wgmma_rate.d%d.bx%d.%15[a-z].cubin%n", &x->d, &x->bx, mode, &end) != 3 || base[end] ||
        end == 0 || (strcmp(mode, "both") && strcmp(mode, "qk") && strcmp(mode, "pv"))) {
      fprintf(stderr, "%s: not named wgmma_rate.dD.bxBX.MODE.cubin\n", x->path);
      return 2;
    }
    x->qk = strcmp(mode, "pv") != 0;
    x->pv = strcmp(mode, "qk") != 0;
  }
  if (tile_init(0) != TILE_OK) {
    printf("SKIP no GPU: %s\n", tile_last_error());
    return 0;
  }
  tile_device_info dev;
  CK(tile_device_info_get(&dev));
  for (int i = 0; i < n; i++) {
    tile_module *m;
    CK(tile_module_load_file(v[i].path, &m));
    CK(tile_module_get_kernel(m, "wgmma_rate", &v[i].k));
  }
  unsigned ctas = (unsigned)dev.sm_count;
  tile_devptr out;
  CK(tile_malloc(&out, (size_t)ctas * 128 * 4));
  int iters = ITERS;
  void *args[] = {&out, &iters};
  tile_event e0, e1;
  CK(tile_event_create(&e0));
  CK(tile_event_create(&e1));
  for (int i = 0; i < n; i++) CK(tile_launch(v[i].k, ctas, 1, 1, args, 2, NULL)); /* warm-up */
  CK(tile_synchronize());
  for (int r = 0; r < ROUNDS; r++)
    for (int i = 0; i < n; i++) {
      CK(tile_event_record(e0, NULL));
      for (int l = 0; l < LAUNCHES; l++) CK(tile_launch(v[i].k, ctas, 1, 1, args, 2, NULL));
      CK(tile_event_record(e1, NULL));
      CK(tile_synchronize());
      float ms;
      CK(tile_event_elapsed_ms(&ms, e0, e1));
      v[i].ms[r] = ms / LAUNCHES;
    }
  printf("%-34s %9s %9s %8s   (%u CTAs x 2 warpgroups x %d iterations, median of %d rounds)\n", "variant", "ms",
         "TFLOP/s", "vs-first", ctas, ITERS, ROUNDS);
  double first[4] = {0};
  for (int i = 0; i < n; i++) {
    qsort(v[i].ms, ROUNDS, sizeof v[i].ms[0], cmp);
    double ms = v[i].ms[ROUNDS / 2], kb = 128 + v[i].bx;
    double flop = (double)ctas * 2 * ITERS * ((v[i].qk ? 2.0 * 64 * kb * v[i].d : 0) + (v[i].pv ? 2.0 * 64 * v[i].d * kb : 0));
    double tf = flop / ms / 1e9;
    int mode = v[i].qk + 2 * v[i].pv;
    if (!first[mode]) first[mode] = tf;
    const char *base = strrchr(v[i].path, '/') ? strrchr(v[i].path, '/') + 1 : v[i].path;
    printf("%-34s %9.4f %9.1f %7.3fx\n", base, ms, tf, tf / first[mode]);
  }
  return 0;
}

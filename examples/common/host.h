/* host.h - what the example host programs share: loading the kernel from a
 * cubin (tilec) or from source (the JIT), random inputs, NaN-poisoned
 * outputs, float64 references and relative errors, and the CLI:
 *
 *   PROG [--cubin FILE.cubin | --jit FILE.tile] [--trials N] [--seed S]
 *        [--size N ...]   (example-specific sizes; random when not given)
 *        [--dump FILE]    (every output as it came back, for a comparison of
 *                          two runs: host_dump below)
 *
 * Exit status 0 only when every trial matched its reference. */
#ifndef TILE_EXAMPLE_HOST_H
#define TILE_EXAMPLE_HOST_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tile/runtime.h"

#define CHECK(call)                                                                              \
  do {                                                                                           \
    tile_status st_ = (call);                                                                    \
    if (st_ != TILE_OK) {                                                                        \
      fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call, tile_status_name(st_), \
              tile_last_error());                                                                \
      exit(2);                                                                                   \
    }                                                                                            \
  } while (0)

typedef struct HostArgs {
  const char *cubin, *jit;
  int trials;
  uint64_t seed;
  long sizes[4];
  int nsizes;
  const char **defines; /* NAME=VALUE for the JIT */
  int ndefines;
  int bench;            /* --bench: also time the kernel (median of 50 launches) */
  const char *dump;     /* --dump FILE */
} HostArgs;

/* --dump FILE (tests/gpu/emu_xval.sh compares a GPU's run with the
 * emulator's): each output a host checks, as it came back from the device,
 * appended as a record: a text line "N:NAME DTYPE COUNT" (N counts the
 * records from 0; spaces in NAME become '_') and COUNT elements' raw bytes.
 * Off (every call returns at once) until host_dump_open. */
static FILE *host_dump_f;
static int host_dump_n;
static inline void host_dump_open(const char *path) {
  if (!(host_dump_f = fopen(path, "wb"))) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
}
static inline void host_dump(const char *name, const char *dtype, const void *data, size_t count) {
  if (!host_dump_f) return;
  size_t eb = !strcmp(dtype, "f64") || !strcmp(dtype, "i64") ? 8 : !strcmp(dtype, "f32") || !strcmp(dtype, "i32") ? 4
              : !strcmp(dtype, "u8") ? 1 : 2;
  fprintf(host_dump_f, "%d:", host_dump_n++);
  for (const char *c = name; *c; c++) fputc(*c == ' ' || *c == '\n' ? '_' : *c, host_dump_f);
  fprintf(host_dump_f, " %s %zu\n", dtype, count);
  if (count && fwrite(data, eb, count, host_dump_f) != count) {
    fprintf(stderr, "--dump: write failed\n");
    exit(2);
  }
}
static inline void host_dump_close(void) {
  if (host_dump_f && fclose(host_dump_f) != 0) fprintf(stderr, "--dump: write failed\n");
  host_dump_f = NULL;
}

static uint64_t rng_state = 88172645463325252ull;
static inline uint64_t rng_next(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static inline double rng_uniform(void) { return (double)(rng_next() >> 11) * (1.0 / 9007199254740992.0); }
static inline float rng_float(float lo, float hi) { return lo + (hi - lo) * (float)rng_uniform(); }
static inline long rng_int(long lo, long hi) { return lo + (long)(rng_next() % (uint64_t)(hi - lo + 1)); }

static inline void parse_args(int argc, char **argv, HostArgs *a) {
  memset(a, 0, sizeof *a);
  a->trials = 1;
  a->seed = 1;
  a->defines = calloc((size_t)argc, sizeof(char *));
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--cubin") && i + 1 < argc) a->cubin = argv[++i];
    else if (!strcmp(argv[i], "--jit") && i + 1 < argc) a->jit = argv[++i];
    else if (!strcmp(argv[i], "--trials") && i + 1 < argc) a->trials = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) a->seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--size") && i + 1 < argc && a->nsizes < 4) a->sizes[a->nsizes++] = atol(argv[++i]);
    else if (!strcmp(argv[i], "-D") && i + 1 < argc) a->defines[a->ndefines++] = argv[++i];
    else if (!strcmp(argv[i], "--bench")) a->bench = 1;
    else if (!strcmp(argv[i], "--dump") && i + 1 < argc) a->dump = argv[++i];
    else {
      fprintf(stderr,
              "usage: %s (--cubin FILE | --jit FILE.tile) [--trials N] [--seed S] [--size N]... [-D N=V] "
              "[--dump FILE]\n",
              argv[0]);
      exit(2);
    }
  }
  if (!a->cubin == !a->jit) {
    fprintf(stderr, "%s: give exactly one of --cubin FILE and --jit FILE.tile\n", argv[0]);
    exit(2);
  }
  rng_state = 0x9E3779B97F4A7C15ull ^ (a->seed * 0xBF58476D1CE4E5B9ull);
  if (!rng_state) rng_state = 1;
  if (a->dump) host_dump_open(a->dump);
}

/* At the end of main: the module unloaded and the arguments freed, so that
 * the sanitizer builds (the emulator runs these programs without a GPU)
 * see no leaks. */
static inline void host_done(HostArgs *a, tile_module *m) {
  CHECK(tile_module_unload(m));
  free(a->defines);
  a->defines = NULL;
  host_dump_close();
}

static inline tile_module *load_module(const HostArgs *a) {
  tile_module *m = NULL;
  if (a->cubin) {
    CHECK(tile_module_load_file(a->cubin, &m));
    return m;
  }
#ifdef TILE_WITH_JIT
  FILE *f = fopen(a->jit, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", a->jit);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *src = malloc((size_t)n + 1);
  if (!src || fread(src, 1, (size_t)n, f) != (size_t)n) exit(2);
  fclose(f);
  tile_jit_define *defs = calloc((size_t)a->ndefines + 1, sizeof *defs);
  for (int i = 0; i < a->ndefines; i++) {
    char *eq = strchr(a->defines[i], '=');
    if (!eq) exit(2);
    *eq = 0;
    defs[i].name = a->defines[i];
    defs[i].value = eq + 1;
  }
  tile_jit_options o = {0};
  o.defines = defs;
  o.ndefines = a->ndefines;
  tile_jit_stats st;
  CHECK(tile_jit_load(a->jit, src, (size_t)n, &o, &m, &st));
  printf("jit: %s (%s, %.3f s)\n", a->jit, st.cache_hit ? "cache hit" : "compiled", st.compile_seconds);
  free(src);
  free(defs);
  return m;
#else
  fprintf(stderr, "this build has no JIT (build the -jit variant)\n");
  exit(2);
#endif
}

/* Median time in milliseconds of one run of n launches in a row (CUDA
 * events around each run, after warm-up runs): a kernel, or a pass made
 * of several (attention's backward: preprocess, dK/dV, dQ). */
typedef struct HostLaunch {
  tile_kernel *k;
  unsigned gx, gy;
  void **args;
  int nargs;
} HostLaunch;
static inline double bench_seq_ms(const HostLaunch *l, int n) {
  enum { WARM = 5, REPS = 50 };
  tile_event e0, e1;
  CHECK(tile_event_create(&e0));
  CHECK(tile_event_create(&e1));
  for (int w = 0; w < WARM; w++)
    for (int i = 0; i < n; i++) CHECK(tile_launch(l[i].k, l[i].gx, l[i].gy, 1, l[i].args, l[i].nargs, NULL));
  float t[REPS];
  for (int r = 0; r < REPS; r++) {
    CHECK(tile_event_record(e0, NULL));
    for (int i = 0; i < n; i++) CHECK(tile_launch(l[i].k, l[i].gx, l[i].gy, 1, l[i].args, l[i].nargs, NULL));
    CHECK(tile_event_record(e1, NULL));
    CHECK(tile_event_elapsed_ms(&t[r], e0, e1));
  }
  for (int i = 1; i < REPS; i++)
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      float x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  tile_event_destroy(e0);
  tile_event_destroy(e1);
  return t[REPS / 2];
}

/* Median time of one launch in milliseconds. */
static inline double bench_ms(tile_kernel *k, unsigned gx, unsigned gy, void **args, int nargs) {
  HostLaunch l = {k, gx, gy, args, nargs};
  return bench_seq_ms(&l, 1);
}

/* bf16 <-> float (round to nearest even) */
static inline uint16_t f2bf(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static inline float bf2f(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* ||out - ref|| / ||ref||; NaN or Inf anywhere in out fails (count them). */
typedef struct ErrStat {
  double num, den;
  long bad; /* NaN/Inf (unwritten outputs are NaN-poisoned) */
} ErrStat;
static inline void err_add(ErrStat *e, double out, double ref) {
  if (!isfinite(out)) {
    e->bad++;
    return;
  }
  e->num += (out - ref) * (out - ref);
  e->den += ref * ref;
}
/* a sum's error measured against the sum of its terms' magnitudes (abs_sum),
 * not the sum itself: a sum that cancels (a column of db over few rows)
 * carries the rounding of its terms, which |ref| alone would overstate */
static inline void err_add_sum(ErrStat *e, double out, double ref, double abs_sum) {
  if (!isfinite(out)) {
    e->bad++;
    return;
  }
  e->num += (out - ref) * (out - ref);
  e->den += abs_sum * abs_sum;
}
static inline double err_rel(const ErrStat *e) { return e->den > 0 ? sqrt(e->num / e->den) : sqrt(e->num); }
static inline int err_report(const char *what, const char *shape, const ErrStat *e, double tol) {
  double r = err_rel(e);
  int ok = e->bad == 0 && r <= tol;
  printf("%-12s %-28s rel_err=%.3e nonfinite=%ld tol=%.0e %s\n", what, shape, r, e->bad, tol, ok ? "OK" : "FAIL");
  return ok;
}
#endif

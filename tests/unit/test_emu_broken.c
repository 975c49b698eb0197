/* test_emu_broken.c - the broken-kernel suite (issue 16, "Proof"): every
 * tests/emu/broken/NAME.tile is a small Tile kernel with one deliberate
 * bug (its header comment says which), compiled here by the tilec library
 * (PTX with line information) and run on the emulator with every check on.
 * Its report's first words -- "NAME.tile:LINE: KIND" -- must equal
 * NAME.expected; the same kernel compiled with -D FIXED=1 (the bug fixed)
 * must run clean, also under a few random and adversarial schedules, so
 * that no check is simply always on. UPDATE=1 rewrites the .expected files.
 *
 * The launch is built from the kernel's metadata alone: one CTA of its
 * threads and shared memory; a pointer parameter gets 1 MiB of zeros, an
 * integer scalar 256, a float scalar 1.0, a TMA parameter a 256 x 256
 * tensor of zeros of its type with the kernel's box and swizzle.
 *
 * NAME.ptx is a hand-written kernel, for what tilec cannot emit (or
 * refuses to): its `//@ ` lines are its metadata in tilec's words (kernel,
 * threads, smem, param, and grid X Y Z, cluster X Y Z), a line with
 * `// BROKEN` is only in the broken kernel, one with `// FIXED` only in the
 * fixed twin, and each instruction line (starting with a tab) gets a .loc of
 * its own line in the file, so that reports name NAME.ptx:LINE (the file
 * names itself with `.file 1 "NAME.ptx"`). */
#include "testutil.h"
#include "tile/tilec.h"
#include "../../emu/emu.h"

#include <dirent.h>

enum { PTR_BYTES = 1 << 20, TENSOR = 256 };

typedef struct Kernel {
  EmModule *m;
  char name[128];
  unsigned threads, grid[3], cluster[3];
  size_t smem;
  char meta[4096];
} Kernel;

/* "NAME X Y Z" of the metadata into v (left as it is when absent) */
static void meta_dim3(const char *meta, const char *name, unsigned v[3]) {
  char key[32];
  snprintf(key, sizeof key, "\n%s ", name);
  const char *p = strstr(meta, key);
  if (p) sscanf(p + strlen(key), "%u %u %u", &v[0], &v[1], &v[2]);
}

/* A hand-written NAME.ptx (the header comment says how it is read). */
static bool load_ptx(const char *path, int fixed, Kernel *k) {
  size_t len = 0;
  char *src = tu_read_file(path, &len);
  if (!src) {
    print_error("%s: cannot read it\n", path);
    return false;
  }
  size_t cap = len * 2 + 4096, n = 0, ml = 0;
  char *ptx = malloc(cap);
  assert_non_null(ptx);
  k->meta[0] = 0;
  int line = 1;
  for (char *p = src; *p; line++) {
    char *e = strchr(p, '\n');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    char buf[512];
    snprintf(buf, sizeof buf, "%.*s", (int)(l < sizeof buf - 1 ? l : sizeof buf - 1), p);
    bool drop = strstr(buf, fixed ? "// BROKEN" : "// FIXED") != NULL;
    if (!strncmp(buf, "//@ ", 4) && ml < sizeof k->meta - 1)
      ml += (size_t)snprintf(k->meta + ml, sizeof k->meta - ml, "\n%s", buf + 4), ml = ml < sizeof k->meta ? ml : sizeof k->meta - 1;
    const char *w = buf + strspn(buf, "\t ");
    if (!drop && buf[0] == '\t' && *w && !strchr("./{}", *w) && w[strlen(w) - 1] != ':' && n + 64 < cap)
      n += (size_t)snprintf(ptx + n, cap - n, "\t.loc 1 %d 0\n", line);
    if (n + l + 2 < cap) n += (size_t)snprintf(ptx + n, cap - n, "%s\n", drop ? "" : buf);
    p = e ? e + 1 : p + l;
  }
  free(src);
  if (ml < sizeof k->meta - 1) snprintf(k->meta + ml, sizeof k->meta - ml, "\n");
  char err[256];
  bool ok = em_ptx_parse(ptx, n, &k->m, err, sizeof err);
  if (!ok) print_error("%s: %s\n", path, err);
  free(ptx);
  return ok;
}

/* Compile path with FIXED=fixed to PTX and parse it (a .ptx file: load_ptx). */
static bool compile_tile(const char *path, int fixed, Kernel *k) {
  tilec_options o;
  tilec_options_init(&o);
  o.emit = TILEC_EMIT_PTX;
  tilec_define d = {"FIXED", fixed ? "1" : "0"};
  o.defines = &d, o.ndefines = 1;
  tilec_result *r = NULL;
  tilec_status st = tilec_compile_file(path, &o, &r);
  if (st != TILEC_OK) {
    print_error("%s (FIXED=%d): %s\n", path, fixed, r ? tilec_result_diagnostics(r) : "no result");
    tilec_result_free(r);
    return false;
  }
  size_t len = 0;
  const char *ptx = tilec_result_output(r, &len), *meta = tilec_result_metadata(r);
  snprintf(k->meta, sizeof k->meta, "%s", meta ? meta : "");
  char err[256];
  bool ok = em_ptx_parse(ptx, len, &k->m, err, sizeof err);
  if (!ok) print_error("%s: %s\n", path, err);
  tilec_result_free(r);
  return ok;
}

static bool compile(const char *path, int fixed, Kernel *k) {
  size_t pl = strlen(path);
  for (int i = 0; i < 3; i++) k->grid[i] = k->cluster[i] = 1;
  if (!(pl > 4 && !strcmp(path + pl - 4, ".ptx") ? load_ptx(path, fixed, k) : compile_tile(path, fixed, k)))
    return false;
  const char *p = strstr(k->meta, "\nkernel "), *t = strstr(k->meta, "\nthreads "), *s = strstr(k->meta, "\nsmem ");
  k->threads = t ? (unsigned)strtoul(t + 9, NULL, 10) : 128;
  k->smem = s ? (size_t)strtoul(s + 6, NULL, 10) : 0;
  if (p) sscanf(p + 8, "%127s", k->name);
  meta_dim3(k->meta, "grid", k->grid);
  meta_dim3(k->meta, "cluster", k->cluster);
  return true;
}

static int dtype_bytes(const char *d) {
  if (!strcmp(d, "f64") || !strcmp(d, "i64") || !strcmp(d, "u64")) return 8;
  if (!strcmp(d, "f32") || !strcmp(d, "i32") || !strcmp(d, "u32")) return 4;
  if (!strcmp(d, "bf16") || !strcmp(d, "f16") || !strcmp(d, "i16") || !strcmp(d, "u16")) return 2;
  return 1;
}

/* CUtensorMapDataType of a Tile dtype */
static int dtype_tma(const char *d) {
  return !strcmp(d, "bf16") ? 9 : !strcmp(d, "f16") ? 6 : !strcmp(d, "f32") ? 7 : !strcmp(d, "i32") ? 3 : 0;
}

/* Launch k with parameters built from its metadata; the report in err. */
static bool launch(const Kernel *k, int sched, uint64_t seed, char *err, size_t errlen) {
  const EmFunc *f = em_find_func(k->m, k->name);
  assert_non_null(f);
  size_t pb = (f->param_bytes + 64 + 63) / 64 * 64;
  uint8_t *params = aligned_alloc(64, pb); /* a tensor map parameter is 64-byte aligned */
  memset(params, 0, pb);
  void *bufs[16] = {0};
  EmRange rg[16];
  int nb = 0, np = 0;
  const char *line = k->meta;
  while ((line = strstr(line, "\nparam "))) {
    line++;
    char name[64], kind[16], dt[16];
    if (sscanf(line, "param %63s %15s %15s", name, kind, dt) != 3 || np >= f->nparams || nb >= 16) break;
    uint8_t *at = params + f->params[np++].offset;
    if (!strcmp(kind, "ptr")) {
      void *b = calloc(1, PTR_BYTES);
      uint64_t a = (uint64_t)(uintptr_t)b;
      memcpy(at, &a, 8);
      rg[nb] = (EmRange){b, PTR_BYTES}, bufs[nb++] = b;
    } else if (!strcmp(kind, "scalar")) {
      if (dt[0] == 'f') {
        float v = 1.0f;
        memcpy(at, &v, 4);
      } else {
        int32_t v = 256;
        memcpy(at, &v, dtype_bytes(dt) < 4 ? (size_t)dtype_bytes(dt) : 4);
      }
    } else { /* tma: "tmabox NAME ROWS COLS swizzle S" on the next line */
      unsigned rows = 0, cols = 0, sw = 0;
      const char *tb = strstr(line, "\ntmabox ");
      assert_non_null(tb);
      assert_int_equal(sscanf(tb + 8, "%*s %u %u swizzle %u", &rows, &cols, &sw), 3);
      int es = dtype_bytes(dt);
      void *b = aligned_alloc(256, (size_t)TENSOR * TENSOR * (size_t)es);
      memset(b, 0, (size_t)TENSOR * TENSOR * (size_t)es);
      rg[nb] = (EmRange){b, (size_t)TENSOR * TENSOR * (size_t)es}, bufs[nb++] = b;
      uint64_t dims[2] = {TENSOR, TENSOR}, strides[1] = {(uint64_t)TENSOR * (uint64_t)es};
      uint32_t box[2] = {cols, rows}, estr[2] = {1, 1};
      char why[256];
      bool ok = em_tmap_encode((EmTensorMap *)(void *)at, dtype_tma(dt), 2, b, dims, strides, box, estr, 0,
                               sw == 128 ? 3 : sw == 64 ? 2 : sw == 32 ? 1 : 0, 0, 0, NULL, why, sizeof why);
      if (!ok) print_error("%s: tensor map: %s\n", name, why);
      assert_true(ok);
    }
  }
  EmLaunch l = {.kernel = k->name, .grid = {k->grid[0], k->grid[1], k->grid[2]}, .block = {k->threads, 1, 1}, .dyn_smem = k->smem,
                .params = params, .params_size = f->param_bytes, .ranges = rg, .nranges = nb, .sched = sched,
                .seed = seed, .max_steps = 50000000, .cluster = {k->cluster[0], k->cluster[1], k->cluster[2]}};
  bool ok = em_launch(k->m, &l, err, errlen);
  for (int i = 0; i < nb; i++) free(bufs[i]);
  free(params);
  return ok;
}

/* "FILE:LINE: KIND" of a report: the Tile file's base name, the line, the words before the next colon. */
static void key_of(const char *err, char *out, size_t n) {
  const char *colon = strchr(err, ':'), *end = colon ? strchr(colon + 1, ':') : NULL;
  const char *kind_end = end ? strchr(end + 1, ':') : NULL;
  if (!kind_end) {
    snprintf(out, n, "(no Tile line) %.80s", err);
    return;
  }
  const char *base = err;
  for (const char *p = err; p < colon; p++)
    if (*p == '/') base = p + 1;
  snprintf(out, n, "%.*s", (int)(kind_end - base), base);
}

static const uint64_t seeds[] = {1, 2, 3};

static void check_one(const char *dir, const char *file, int *failures) {
  char path[2048], exp_path[2048], want[256] = "", got[256];
  snprintf(path, sizeof path, "%.900s/%.120s", dir, file);
  size_t ext = strlen(file) - (strchr(file, '.') ? (size_t)(strrchr(file, '.') - file) : 0);
  snprintf(exp_path, sizeof exp_path, "%.900s/%.*s.expected", dir, (int)(strlen(file) - ext), file);
  size_t len = 0;
  char *e = tu_read_file(exp_path, &len);
  if (e) {
    snprintf(want, sizeof want, "%.*s", (int)strcspn(e, "\n"), e);
    free(e);
  }
  char err[4096];
  Kernel k = {0};
  if (!compile(path, 0, &k)) {
    (*failures)++;
    return;
  }
  bool ok = launch(&k, EM_SCHED_RR, 0, err, sizeof err);
  key_of(err, got, sizeof got);
  if (getenv("UPDATE") && *getenv("UPDATE") == '1' && !ok) {
    FILE *f = fopen(exp_path, "w");
    if (f) fprintf(f, "%s\n", got), fclose(f);
    snprintf(want, sizeof want, "%s", got);
  }
  if (ok || strcmp(got, want)) {
    print_error("FAIL %s: %s\n  want: %s\n  got:  %s\n", file, ok ? "ran clean" : "a different report", want,
                ok ? "(none)" : err);
    (*failures)++;
  } else {
    print_message("ok   %s: %s\n", file, getenv("VERBOSE") ? err : got);
  }
  /* other schedules find it too (the kind may differ: which access comes first) */
  for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++)
    for (int s = EM_SCHED_RANDOM; s <= EM_SCHED_ADVERSARIAL; s++)
      if (launch(&k, s, seeds[i], err, sizeof err)) {
        print_error("FAIL %s: ran clean under schedule %s, seed %llu\n", file, em_sched_name((EmSched)s),
                    (unsigned long long)seeds[i]);
        (*failures)++;
      }
  em_module_free(k.m);
  /* the fixed twin runs clean under every schedule */
  Kernel fx = {0};
  if (!compile(path, 1, &fx)) {
    (*failures)++;
    return;
  }
  for (size_t i = 0; i <= sizeof seeds / sizeof *seeds; i++)
    for (int s = i ? EM_SCHED_RANDOM : EM_SCHED_RR; s <= (i ? EM_SCHED_ADVERSARIAL : EM_SCHED_RR); s++)
      if (!launch(&fx, s, i ? seeds[i - 1] : 0, err, sizeof err)) {
        print_error("FAIL %s with FIXED=1: %s\n", file, err);
        (*failures)++;
      }
  em_module_free(fx.m);
}

static void test_broken_kernels(void **state) {
  (void)state;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/tests/emu/broken", TILE_SRC_DIR);
  DIR *d = opendir(dir);
  assert_non_null(d);
  char names[64][128];
  int n = 0, failures = 0;
  struct dirent *de;
  while ((de = readdir(d)) && n < 64) {
    size_t l = strlen(de->d_name);
    if ((l > 5 && !strcmp(de->d_name + l - 5, ".tile")) || (l > 4 && !strcmp(de->d_name + l - 4, ".ptx"))) snprintf(names[n++], sizeof names[0], "%.127s", de->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
  const char *only = getenv("BROKEN");
  for (int i = 0; i < n; i++)
    if (!only || strstr(names[i], only)) check_one(dir, names[i], &failures);
  assert_true(n >= 8);
  assert_int_equal(failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_broken_kernels)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

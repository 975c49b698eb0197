/* test_jit.c - tile_jit_compile_cubin end to end: compiles a real kernel with
 * the in-process compiler for sm_90a (no GPU needed) and checks the cache
 * behaviour: miss then hit, keys that follow the defines, repair of a corrupt
 * entry and eviction of one that does not load, edited imports, no_cache,
 * many threads at once, compile errors and a source over the size limit. */
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tile/runtime.h"
#include "../../runtime/cache.h"

static const char VADD[] =
    "kernel vadd(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 256) warps(4) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let mask = offs < n;\n"
    "    store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);\n"
    "}\n";

static const char BROKEN[] =
    "kernel broken(x: *f32) warps(4) {\n"
    "    let a = ;\n"
    "}\n";

typedef struct fixture {
  char dir[4096];
  tile_jit_options opts;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (!f || tu_tmpdir(f->dir, sizeof f->dir) != 0) { free(f); return -1; }
  f->opts.arch = "sm_90a";
  f->opts.cache_dir = f->dir;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  tu_rmtree(f->dir);
  free(f);
  return 0;
}

/* Compile VADD with opts; asserts success and an ELF cubin. */
static void *compile_ok(const tile_jit_options *opts, size_t *size, tile_jit_stats *st) {
  void *cubin = NULL;
  tile_status s = tile_jit_compile_cubin("vadd.tile", VADD, strlen(VADD), opts, &cubin, size, st);
  if (s != TILE_OK) fprintf(stderr, "%s: %s\n", tile_status_name(s), tile_last_error());
  assert_int_equal(s, TILE_OK);
  assert_non_null(cubin);
  assert_true(*size > 4);
  assert_memory_equal(cubin, "\x7f" "ELF", 4);
  assert_int_equal(strlen(st->key), 64);
  return cubin;
}

static void entry_path(const fixture *f, const char *key, char *buf, size_t cap) {
  snprintf(buf, cap, "%s/%c%c/%s.cubin", f->dir, key[0], key[1], key);
}

static void test_miss_then_hit(void **state) {
  fixture *f = *state;
  tile_jit_stats s1, s2;
  size_t n1, n2;
  void *c1 = compile_ok(&f->opts, &n1, &s1);
  assert_int_equal(s1.cache_hit, 0);
  assert_int_equal(s1.cache_rebuilt, 0);
  char path[4200];
  entry_path(f, s1.key, path, sizeof path);
  assert_int_equal(access(path, F_OK), 0);

  void *c2 = compile_ok(&f->opts, &n2, &s2);
  assert_int_equal(s2.cache_hit, 1);
  assert_string_equal(s1.key, s2.key);
  assert_int_equal(n1, n2);
  assert_memory_equal(c1, c2, n1);
  free(c1);
  free(c2);

  /* stats may be NULL */
  void *c3 = NULL;
  size_t n3 = 0;
  assert_int_equal(tile_jit_compile_cubin("vadd.tile", VADD, strlen(VADD), &f->opts, &c3, &n3, NULL),
                   TILE_OK);
  assert_int_equal(n3, n1);
  free(c3);
}

static void test_define_changes_key(void **state) {
  fixture *f = *state;
  tile_jit_stats s1, s2, s3;
  size_t n1, n2, n3;
  void *c1 = compile_ok(&f->opts, &n1, &s1);
  tile_jit_define d = {"BLOCK", "512"};
  tile_jit_options o = f->opts;
  o.defines = &d;
  o.ndefines = 1;
  void *c2 = compile_ok(&o, &n2, &s2);
  assert_int_equal(s2.cache_hit, 0);
  assert_string_not_equal(s1.key, s2.key);
  void *c3 = compile_ok(&o, &n3, &s3);
  assert_int_equal(s3.cache_hit, 1);
  assert_string_equal(s2.key, s3.key);
  /* a different opt level or arch string is a different key too */
  tile_jit_stats s4;
  size_t n4;
  o.opt_level = 2;
  void *c4 = compile_ok(&o, &n4, &s4);
  assert_int_equal(s4.cache_hit, 0);
  assert_string_not_equal(s4.key, s2.key);
  free(c1);
  free(c2);
  free(c3);
  free(c4);
}

static void test_corrupt_entry_rebuilt(void **state) {
  fixture *f = *state;
  tile_jit_stats s1, s2, s3;
  size_t n1, n2, n3;
  void *c1 = compile_ok(&f->opts, &n1, &s1);
  char path[4200];
  entry_path(f, s1.key, path, sizeof path);
  size_t flen = 0;
  char *raw = tu_read_file(path, &flen);
  assert_non_null(raw);
  raw[flen - 1] ^= 0x40; /* one payload byte */
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  assert_int_equal(fwrite(raw, 1, flen, fp), flen);
  fclose(fp);
  free(raw);

  void *c2 = compile_ok(&f->opts, &n2, &s2);
  assert_int_equal(s2.cache_hit, 0);
  assert_int_equal(s2.cache_rebuilt, 1);
  void *c3 = compile_ok(&f->opts, &n3, &s3);
  assert_int_equal(s3.cache_hit, 1);
  assert_int_equal(s3.cache_rebuilt, 0);
  assert_int_equal(n2, n3);
  assert_memory_equal(c2, c3, n2);
  free(c1);
  free(c2);
  free(c3);
}

/* An entry that passes every check of the cache (its checksum is that of its
 * bytes) but whose cubin does not load - here the first half of the real one,
 * as an interrupted compiler might leave it - must not be served as a hit
 * forever: tile_jit_load evicts it and compiles again.  No GPU needed: the
 * runtime rejects a bad cubin (ELF, metadata) before it touches the driver,
 * and then fails the good one for want of a driver (or of tile_init). */
static void test_unloadable_entry_evicted(void **state) {
  fixture *f = *state;
  tile_jit_stats st;
  size_t n;
  uint8_t *good = compile_ok(&f->opts, &n, &st);
  size_t half = n / 2;
  uint8_t *payload = malloc(12 + half);
  assert_non_null(payload);
  memcpy(payload, "TJDEPS01\0\0\0\0", 12); /* the manifest: no imported files */
  memcpy(payload + 12, good, half);
  char err[1024];
  assert_int_equal(tc_cache_store(f->dir, st.key, payload, 12 + half, err, sizeof err), 0);

  /* the cache hands it out as a hit ... */
  tile_jit_stats s1;
  size_t n1;
  void *c1 = compile_ok(&f->opts, &n1, &s1);
  assert_int_equal(s1.cache_hit, 1);
  assert_int_equal(n1, half);
  free(c1);
  /* ... whose cubin the runtime rejects */
  tile_module *m = NULL;
  assert_int_equal(tile_module_load_data(payload + 12, half, &m), TILE_ERR_BAD_MODULE);
  free(payload);

  /* tile_jit_load: evicted, rebuilt, stored; the fresh cubin gets as far as
   * this machine allows (no driver here; a module on a GPU after tile_init) */
  tile_jit_stats s2;
  tile_status s = tile_jit_load("vadd.tile", VADD, strlen(VADD), &f->opts, &m, &s2);
  if (s != TILE_OK && s != TILE_ERR_NO_DRIVER && s != TILE_ERR_NO_DEVICE && s != TILE_ERR_INVALID) {
    print_error("tile_jit_load: %s: %s\n", tile_status_name(s), tile_last_error());
    fail();
  }
  assert_int_equal(s2.cache_hit, 0);
  assert_int_equal(s2.cache_rebuilt, 1);
  assert_string_equal(s2.key, st.key);
  if (s == TILE_OK) tile_module_unload(m);

  /* the entry holds the whole cubin again */
  tile_jit_stats s3;
  size_t n3;
  void *c3 = compile_ok(&f->opts, &n3, &s3);
  assert_int_equal(s3.cache_hit, 1);
  assert_int_equal(n3, n);
  assert_memory_equal(c3, good, n);
  free(c3);

  /* a load that fails for the machine's sake leaves a good entry alone */
  if (s != TILE_OK) {
    tile_jit_stats s4;
    assert_int_equal(tile_jit_load("vadd.tile", VADD, strlen(VADD), &f->opts, &m, &s4), s);
    assert_int_equal(s4.cache_hit, 1);
    assert_int_equal(s4.cache_rebuilt, 0);
  }
  free(good);
}

static void write_text(const char *path, const char *text) {
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
  fclose(fp);
}

/* The key holds the main source only; the entry remembers the imported
 * files' hashes, so editing (or removing) an imported file is a miss. */
static void test_import_change_recompiles(void **state) {
  fixture *f = *state;
  static const char MAIN[] = "import \"lib.tile\";\n"
                             "kernel k(out: *f32) warps(4) {\n"
                             "    store(out + arange(0, 128), value() + zeros([128], f32));\n"
                             "}\n";
  char main_path[4200], lib_path[4200];
  snprintf(main_path, sizeof main_path, "%s/main.tile", f->dir);
  snprintf(lib_path, sizeof lib_path, "%s/lib.tile", f->dir);
  write_text(lib_path, "fn value() { return 1.0; }\n");
  tile_jit_options o = f->opts;
  char cache[4200];
  snprintf(cache, sizeof cache, "%s/cache", f->dir);
  o.cache_dir = cache;
  void *c[5] = {0};
  size_t n[5] = {0};
  tile_jit_stats st[5];
  for (int i = 0; i < 2; i++)
    assert_int_equal(tile_jit_compile_cubin(main_path, MAIN, strlen(MAIN), &o, &c[i], &n[i], &st[i]), TILE_OK);
  assert_int_equal(st[0].cache_hit, 0);
  assert_int_equal(st[1].cache_hit, 1);
  write_text(lib_path, "fn value() { return 2.0; }\n");
  for (int i = 2; i < 4; i++)
    assert_int_equal(tile_jit_compile_cubin(main_path, MAIN, strlen(MAIN), &o, &c[i], &n[i], &st[i]), TILE_OK);
  assert_string_equal(st[2].key, st[0].key); /* same key, ... */
  assert_int_equal(st[2].cache_hit, 0);      /* ... but the import changed */
  assert_int_equal(st[3].cache_hit, 1);
  assert_true(n[2] != n[0] || memcmp(c[2], c[0], n[0]) != 0);
  assert_int_equal(n[2], n[3]);
  assert_memory_equal(c[2], c[3], n[2]);
  /* the import gone: a compile error, not the stale entry */
  assert_int_equal(unlink(lib_path), 0);
  assert_int_equal(tile_jit_compile_cubin(main_path, MAIN, strlen(MAIN), &o, &c[4], &n[4], &st[4]),
                   TILE_ERR_COMPILE);
  assert_non_null(strstr(tile_last_error(), "cannot find 'lib.tile'"));
  for (int i = 0; i < 5; i++) free(c[i]);
}

static void test_no_cache(void **state) {
  fixture *f = *state;
  char nodir[4200];
  snprintf(nodir, sizeof nodir, "%s/never", f->dir);
  tile_jit_options o = f->opts;
  o.cache_dir = nodir;
  o.no_cache = 1;
  tile_jit_stats s1, s2;
  size_t n1, n2;
  void *c1 = compile_ok(&o, &n1, &s1);
  void *c2 = compile_ok(&o, &n2, &s2);
  assert_int_equal(s1.cache_hit, 0);
  assert_int_equal(s2.cache_hit, 0);
  assert_string_equal(s1.key, s2.key);
  struct stat st;
  assert_int_equal(stat(nodir, &st), -1);
  /* an existing entry is not read either */
  free(compile_ok(&f->opts, &n2, &s2)); /* fill the real cache */
  o.cache_dir = f->dir;
  free(compile_ok(&o, &n2, &s2));
  assert_int_equal(s2.cache_hit, 0);
  free(c1);
  free(c2);
}

typedef struct thread_arg {
  const tile_jit_options *opts;
  tile_status status;
  void *cubin;
  size_t size;
} thread_arg;

static void *compile_thread(void *p) {
  thread_arg *a = p;
  tile_jit_stats st;
  a->status = tile_jit_compile_cubin("vadd.tile", VADD, strlen(VADD), a->opts, &a->cubin, &a->size,
                                     &st);
  return NULL;
}

static void test_threads(void **state) {
  fixture *f = *state;
  thread_arg args[8];
  pthread_t th[8];
  for (int i = 0; i < 8; i++) {
    memset(&args[i], 0, sizeof args[i]);
    args[i].opts = &f->opts;
    assert_int_equal(pthread_create(&th[i], NULL, compile_thread, &args[i]), 0);
  }
  for (int i = 0; i < 8; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  for (int i = 0; i < 8; i++) {
    assert_int_equal(args[i].status, TILE_OK);
    assert_int_equal(args[i].size, args[0].size);
    assert_memory_equal(args[i].cubin, args[0].cubin, args[0].size);
  }
  for (int i = 0; i < 8; i++) free(args[i].cubin);
}

static void test_compile_error(void **state) {
  fixture *f = *state;
  void *cubin = (void *)1;
  size_t size = 1;
  tile_jit_stats st;
  tile_status s = tile_jit_compile_cubin("broken.tile", BROKEN, strlen(BROKEN), &f->opts, &cubin,
                                         &size, &st);
  assert_int_equal(s, TILE_ERR_COMPILE);
  assert_null(cubin);
  assert_int_equal(size, 0);
  assert_non_null(strstr(tile_last_error(), "error:"));
  assert_non_null(strstr(tile_last_error(), "broken.tile"));
  /* and nothing was cached */
  char path[4200];
  entry_path(f, st.key, path, sizeof path);
  assert_int_equal(access(path, F_OK), -1);
}

/* A source over the compiler's size limit (8 MiB): the compiler's error,
 * before any work, and nothing cached. */
static void test_source_too_large(void **state) {
  fixture *f = *state;
  size_t n = (8 << 20) + 1;
  char *src = malloc(n);
  assert_non_null(src);
  memset(src, '\n', n);
  memcpy(src, VADD, strlen(VADD));
  void *cubin = NULL;
  size_t size = 0;
  tile_jit_stats st;
  assert_int_equal(tile_jit_compile_cubin("big.tile", src, n, &f->opts, &cubin, &size, &st),
                   TILE_ERR_COMPILE);
  free(src);
  assert_null(cubin);
  assert_non_null(strstr(tile_last_error(), "'big.tile' is too large: 8388609 bytes"));
  char path[4200];
  entry_path(f, st.key, path, sizeof path);
  assert_int_equal(access(path, F_OK), -1);
}

static void test_bad_arguments(void **state) {
  fixture *f = *state;
  void *cubin = NULL;
  size_t size = 0;
  assert_int_equal(tile_jit_compile_cubin("v.tile", VADD, strlen(VADD), &f->opts, NULL, &size, NULL),
                   TILE_ERR_INVALID);
  tile_jit_options o = f->opts;
  o.opt_level = 9;
  assert_int_equal(tile_jit_compile_cubin("v.tile", VADD, strlen(VADD), &o, &cubin, &size, NULL),
                   TILE_ERR_INVALID);
  assert_true(strlen(tile_last_error()) > 0);
  o = f->opts;
  o.ndefines = 1; /* but no array */
  assert_int_equal(tile_jit_compile_cubin("v.tile", VADD, strlen(VADD), &o, &cubin, &size, NULL),
                   TILE_ERR_INVALID);
  /* arch NULL without tile_init (or without a GPU): the runtime's error */
  o = f->opts;
  o.arch = NULL;
  tile_status s = tile_jit_compile_cubin("v.tile", VADD, strlen(VADD), &o, &cubin, &size, NULL);
  assert_int_not_equal(s, TILE_OK);
  assert_true(strlen(tile_last_error()) > 0);
  assert_null(cubin);
}

static void test_cache_dir(void **state) {
  fixture *f = *state;
  char buf[4200];
  assert_int_equal(tile_jit_cache_dir(&f->opts, buf, sizeof buf), TILE_OK);
  assert_string_equal(buf, f->dir);
  char *saved = getenv("TILE_CACHE_DIR") ? strdup(getenv("TILE_CACHE_DIR")) : NULL;
  setenv("TILE_CACHE_DIR", "/some/where", 1);
  assert_int_equal(tile_jit_cache_dir(NULL, buf, sizeof buf), TILE_OK);
  assert_string_equal(buf, "/some/where");
  assert_int_equal(tile_jit_cache_dir(NULL, buf, 4), TILE_ERR_INVALID);
  if (saved) setenv("TILE_CACHE_DIR", saved, 1);
  else unsetenv("TILE_CACHE_DIR");
  free(saved);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_miss_then_hit, setup, teardown),
    cmocka_unit_test_setup_teardown(test_define_changes_key, setup, teardown),
    cmocka_unit_test_setup_teardown(test_corrupt_entry_rebuilt, setup, teardown),
    cmocka_unit_test_setup_teardown(test_unloadable_entry_evicted, setup, teardown),
    cmocka_unit_test_setup_teardown(test_import_change_recompiles, setup, teardown),
    cmocka_unit_test_setup_teardown(test_no_cache, setup, teardown),
    cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
    cmocka_unit_test_setup_teardown(test_compile_error, setup, teardown),
    cmocka_unit_test_setup_teardown(test_source_too_large, setup, teardown),
    cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
    cmocka_unit_test_setup_teardown(test_cache_dir, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

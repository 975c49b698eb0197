/* test_jit_options.c - tile_jit_options carries every code generation option
 * of tilec: each field gives the cubin the compiler library gives for the
 * matching tilec_options (byte for byte), a key of its own, and a cache hit
 * the second time; include folders resolve imports; max_errors and ptxas
 * reach the compiler; bad values are refused.  (tests/jit/run.sh does the
 * same for every kernel the Makefile ships, with their own flags.)  No GPU:
 * the arch is given. */
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "tile/runtime.h"
#include "tile/tilec.h"

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

/* A source of the repository: its path (as the Makefile names it) and text. */
typedef struct src {
  char path[4400];
  char *text;
  size_t len;
} src;

static src read_src(const char *rel) {
  src s;
  snprintf(s.path, sizeof s.path, "%s/%s", TILE_SRC_DIR, rel);
  s.text = tu_read_file(s.path, &s.len);
  assert_non_null(s.text);
  return s;
}

/* Compile s through the JIT with o (asserting success) into *cubin. */
static size_t jit_cubin(const src *s, const tile_jit_options *o, void **cubin, tile_jit_stats *st) {
  size_t n = 0;
  tile_status r = tile_jit_compile_cubin(s->path, s->text, s->len, o, cubin, &n, st);
  if (r != TILE_OK) fprintf(stderr, "%s: %s\n", tile_status_name(r), tile_last_error());
  assert_int_equal(r, TILE_OK);
  return n;
}

/* What the JIT gives for o (compiled, then a hit) equals what the compiler
 * library gives for c; the key is returned in key. */
static void same_as_tilec(const src *s, const tile_jit_options *o, const tilec_options *c, char key[65]) {
  tilec_result *r = NULL;
  tilec_status cs = tilec_compile(s->path, s->text, s->len, c, &r);
  if (cs != TILEC_OK) fprintf(stderr, "%s", r ? tilec_result_diagnostics(r) : "no result\n");
  assert_int_equal(cs, TILEC_OK);
  size_t want_n = 0;
  const void *want = tilec_result_output(r, &want_n);
  void *got[2] = {0};
  tile_jit_stats st[2];
  for (int i = 0; i < 2; i++) {
    size_t n = jit_cubin(s, o, &got[i], &st[i]);
    assert_int_equal(st[i].cache_hit, i);
    assert_int_equal(n, want_n);
    assert_memory_equal(got[i], want, n);
    free(got[i]);
  }
  assert_string_equal(st[0].key, st[1].key);
  memcpy(key, st[0].key, 65);
  tilec_result_free(r);
}

/* Each flag: the same cubin as tilec's flag, which differs from the
 * default's (so the flag reached the compiler), under a key of its own. */
static void test_each_flag(void **state) {
  fixture *f = *state;
  src softmax = read_src("examples/softmax/softmax.tile");
  src gemm = read_src("examples/gemm/gemm_simple.tile");
  src attn = read_src("examples/fused_attention/fused_attention.tile");
  enum { NFLAGS = 9 };
  static const char *names[NFLAGS] = {"no_line_info", "tree_reductions", "no_stmatrix", "embed_ptx", "-O0",
                                      "no_tma_rings", "tma_rings_all", "no_smem_home", "no_wide_stores"};
  /* homes: a loop summing rows too wide for one warp's registers */
  static const char wide[] = "kernel colsum(x: *f32, s: *f32, n: i32) warps(1) {\n"
                             "    let cols = arange(0, 4096);\n"
                             "    let a = zeros([4096], f32);\n"
                             "    for r in range(0, n) { a += load(x + r * 4096 + cols); }\n"
                             "    store(s + cols, a);\n"
                             "}\n";
  src home = {.path = "home.tile", .text = strdup(wide), .len = sizeof wide - 1};
  char keys[NFLAGS + 2][65];
  tilec_options c;
  tilec_options_init(&c);
  same_as_tilec(&softmax, &f->opts, &c, keys[NFLAGS]); /* the defaults first: cached by the loop */
  same_as_tilec(&gemm, &f->opts, &c, keys[NFLAGS + 1]);
  for (int i = 0; i < NFLAGS; i++) {
    tile_jit_options o = f->opts;
    tilec_options_init(&c);
    /* stmatrix: a 16-bit tile stored to shared memory; the rings: a loop of two dots (and the backward's of
     * three and four, which only tma_rings_all changes) */
    const src *s = i == 2 ? &gemm : i == 7 ? &home : i >= 5 ? &attn : &softmax;
    switch (i) {
    case 0: o.no_line_info = 1, c.line_info = 0; break;
    case 1: o.tree_reductions = 1, c.tree_reductions = 1; break;
    case 2: o.no_stmatrix = 1, c.no_stmatrix = 1; break;
    case 3: o.embed_ptx = 1, c.embed_ptx = 1; break;
    case 4: o.opt_level = TILE_JIT_O0, c.opt_level = 0; break;
    case 5: o.no_tma_rings = 1, c.no_tma_rings = 1; break;
    case 6: o.tma_rings_all = 1, c.tma_rings_all = 1; break;
    case 7: o.no_smem_home = 1, c.no_smem_home = 1; break;
    case 8: o.no_wide_stores = 1, c.no_wide_stores = 1; break; /* the attention's O, dQ, dK, dV stores */
    }
    print_message("option %s\n", names[i]);
    same_as_tilec(s, &o, &c, keys[i]);
    /* and the default differs */
    void *def = NULL, *with = NULL;
    tile_jit_stats st;
    size_t nd = jit_cubin(s, &f->opts, &def, &st);
    size_t nw = jit_cubin(s, &o, &with, &st);
    assert_true(nd != nw || memcmp(def, with, nd) != 0);
    free(def);
    free(with);
  }
  for (int i = 0; i < NFLAGS + 2; i++)
    for (int j = 0; j < i; j++) assert_string_not_equal(keys[i], keys[j]);
  free(softmax.text);
  free(gemm.text);
  free(attn.text);
  free(home.text);
}

static void write_text(const char *path, const char *text) {
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  assert_int_equal(fwrite(text, 1, strlen(text), fp), strlen(text));
  fclose(fp);
}

/* include_dirs: an import found only in an include folder; the folders are
 * part of the key (another folder, another library, another entry). */
static void test_include_dirs(void **state) {
  fixture *f = *state;
  static const char MAIN[] = "import \"lib.tile\";\n"
                             "kernel k(out: *f32) warps(4) {\n"
                             "    store(out + arange(0, 128), value() + zeros([128], f32));\n"
                             "}\n";
  char a[4200], b[4200], path[4300];
  snprintf(a, sizeof a, "%s/a", f->dir);
  snprintf(b, sizeof b, "%s/b", f->dir);
  assert_int_equal(mkdir(a, 0700), 0);
  assert_int_equal(mkdir(b, 0700), 0);
  snprintf(path, sizeof path, "%s/lib.tile", a);
  write_text(path, "fn value() { return 1.0; }\n");
  snprintf(path, sizeof path, "%s/lib.tile", b);
  write_text(path, "fn value() { return 2.0; }\n");
  void *cubin = NULL;
  size_t n = 0;
  tile_jit_stats st[3];
  tile_jit_options o = f->opts;
  /* main.tile's own folder (the fixture's) has no lib.tile */
  snprintf(path, sizeof path, "%s/main.tile", f->dir);
  assert_int_equal(tile_jit_compile_cubin(path, MAIN, strlen(MAIN), &o, &cubin, &n, NULL), TILE_ERR_COMPILE);
  has(tile_last_error(), "cannot find 'lib.tile'", "the diagnostics");
  const char *dirs_a[] = {a}, *dirs_b[] = {b}, *dirs_ba[] = {b, a};
  void *c[3] = {0};
  size_t cn[3];
  const char *const *lists[3] = {dirs_a, dirs_b, dirs_ba};
  for (int i = 0; i < 3; i++) {
    o.include_dirs = lists[i];
    o.ninclude_dirs = i == 2 ? 2 : 1;
    assert_int_equal(tile_jit_compile_cubin(path, MAIN, strlen(MAIN), &o, &c[i], &cn[i], &st[i]), TILE_OK);
    assert_int_equal(st[i].cache_hit, 0);
  }
  assert_true(cn[0] != cn[1] || memcmp(c[0], c[1], cn[0]) != 0); /* 1.0 vs 2.0 */
  assert_int_equal(cn[1], cn[2]);                                 /* b first: b's lib.tile */
  assert_memory_equal(c[1], c[2], cn[1]);
  assert_string_not_equal(st[0].key, st[1].key);
  assert_string_not_equal(st[1].key, st[2].key);
  /* the same as tilec -I */
  tilec_options co;
  tilec_options_init(&co);
  co.include_dirs = dirs_a;
  co.ninclude_dirs = 1;
  src s = {.text = (char *)MAIN, .len = strlen(MAIN)};
  snprintf(s.path, sizeof s.path, "%s", path);
  o.include_dirs = dirs_a;
  o.ninclude_dirs = 1;
  char key[65], cache2[4300]; /* same_as_tilec expects a miss, then a hit: a fresh cache */
  snprintf(cache2, sizeof cache2, "%s/cache2", f->dir);
  o.cache_dir = cache2;
  same_as_tilec(&s, &o, &co, key);
  assert_string_equal(key, st[0].key);
  for (int i = 0; i < 3; i++) free(c[i]);
}

/* The ptxas the compiler's search finds first, but PATH (backend.c). */
static int find_ptxas(char *buf, size_t cap) {
  const char *e = getenv("TILE_PTXAS");
  if (e && *e && access(e, X_OK) == 0) return snprintf(buf, cap, "%s", e), 1;
  const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (int i = 0; i < 3; i++)
    if (homes[i] && (snprintf(buf, cap, "%s/bin/ptxas", homes[i]), access(buf, X_OK) == 0)) return 1;
  return 0;
}

/* max_errors and ptxas reach the compiler. */
static void test_max_errors_and_ptxas(void **state) {
  fixture *f = *state;
  static const char BAD[] = "kernel k(x: *f32) warps(4) {\n"
                            "    let a = nope1;\n"
                            "    let b = nope2;\n"
                            "    let c = nope3;\n"
                            "    let d = nope4;\n"
                            "}\n";
  tile_jit_options o = f->opts;
  void *cubin = NULL;
  size_t n = 0;
  assert_int_equal(tile_jit_compile_cubin("bad.tile", BAD, strlen(BAD), &o, &cubin, &n, NULL), TILE_ERR_COMPILE);
  has(tile_last_error(), "nope4", "all four errors");
  o.max_errors = 2;
  assert_int_equal(tile_jit_compile_cubin("bad.tile", BAD, strlen(BAD), &o, &cubin, &n, NULL), TILE_ERR_COMPILE);
  has(tile_last_error(), "nope2", "two errors");
  lacks(tile_last_error(), "nope3", "two errors");
  tilec_options c;
  tilec_options_init(&c);
  c.max_errors = 2;
  tilec_result *r = NULL;
  assert_int_equal(tilec_compile("bad.tile", BAD, strlen(BAD), &c, &r), TILEC_ERR_SOURCE);
  assert_string_equal(tile_last_error(), tilec_result_diagnostics(r));
  tilec_result_free(r);

  /* a ptxas that is not there: the toolchain's error, nothing cached */
  o = f->opts;
  o.ptxas = "/nonexistent/ptxas";
  static const char OK[] = "kernel k(out: *f32) warps(4) { store(out + arange(0, 128), zeros([128], f32)); }\n";
  tile_jit_stats st;
  assert_int_equal(tile_jit_compile_cubin("k.tile", OK, strlen(OK), &o, &cubin, &n, &st), TILE_ERR_COMPILE);
  has(tile_last_error(), "/nonexistent/ptxas", "the toolchain error");
  assert_null(cubin);
  /* the ptxas the search finds, named: the same cubin as the default, and
   * the same key (the key holds the assembler's version, not its path) */
  char ver[256];
  tilec_options_init(&c);
  if (tilec_assembler_version(&c, ver, sizeof ver) != 0) {
    print_message("no ptxas: the explicit-path check is skipped\n");
    return;
  }
  char path[4200];
  if (!find_ptxas(path, sizeof path)) {
    print_message("ptxas only on PATH: the explicit-path check is skipped\n");
    return;
  }
  void *c0 = NULL, *c1 = NULL;
  size_t n0 = 0, n1 = 0;
  tile_jit_stats s0, s1;
  tile_jit_options d = f->opts;
  d.no_cache = 1;
  assert_int_equal(tile_jit_compile_cubin("k.tile", OK, strlen(OK), &d, &c0, &n0, &s0), TILE_OK);
  d.ptxas = path;
  assert_int_equal(tile_jit_compile_cubin("k.tile", OK, strlen(OK), &d, &c1, &n1, &s1), TILE_OK);
  assert_int_equal(n0, n1);
  assert_memory_equal(c0, c1, n0);
  assert_string_equal(s0.key, s1.key);
  free(c0);
  free(c1);
}

/* use_nvjitlink: the in-process assembler when libnvJitLink is there (its
 * own key), else the compiler's message. */
static void test_nvjitlink(void **state) {
#ifdef __SANITIZE_ADDRESS__
  (void)state; /* dlopen'ing libnvJitLink leaves a leak LeakSanitizer reports (test_compile.c) */
#else
  fixture *f = *state;
  static const char OK[] = "kernel k(out: *f32) warps(4) { store(out + arange(0, 128), zeros([128], f32)); }\n";
  tile_jit_options o = f->opts;
  o.use_nvjitlink = 1;
  tilec_options c;
  tilec_options_init(&c);
  c.use_nvjitlink = 1;
  char ver[256];
  void *cubin = NULL;
  size_t n = 0;
  tile_jit_stats st, sd;
  if (tilec_assembler_version(&c, ver, sizeof ver) != 0) {
    assert_int_equal(tile_jit_compile_cubin("k.tile", OK, strlen(OK), &o, &cubin, &n, &st), TILE_ERR_COMPILE);
    has(tile_last_error(), "nvJitLink", "the toolchain error");
    return;
  }
  src s = {.path = "k.tile", .text = (char *)OK, .len = strlen(OK)};
  same_as_tilec(&s, &o, &c, st.key);
  assert_int_equal(tile_jit_compile_cubin("k.tile", OK, strlen(OK), &f->opts, &cubin, &n, &sd), TILE_OK);
  assert_string_not_equal(st.key, sd.key);
  free(cubin);
#endif
}

static void test_bad_options(void **state) {
  fixture *f = *state;
  static const char OK[] = "kernel k(out: *f32) warps(4) { store(out + arange(0, 128), zeros([128], f32)); }\n";
  void *cubin = NULL;
  size_t n = 0;
  const char *empty[] = {""}, *null[] = {NULL};
  for (int i = 0; i < 6; i++) {
    tile_jit_options o = f->opts;
    switch (i) {
    case 0: o.ninclude_dirs = 1; break; /* no array */
    case 1: o.ninclude_dirs = -1; break;
    case 2: o.include_dirs = empty, o.ninclude_dirs = 1; break;
    case 3: o.include_dirs = null, o.ninclude_dirs = 1; break;
    case 4: o.max_errors = -1; break;
    case 5: o.ptxas = ""; break;
    }
    assert_int_equal(tile_jit_compile_cubin("k.tile", OK, strlen(OK), &o, &cubin, &n, NULL), TILE_ERR_INVALID);
    assert_true(strlen(tile_last_error()) > 0);
    assert_null(cubin);
  }
  tile_jit_options o = f->opts;
  o.opt_level = TILE_JIT_O0 - 1;
  assert_int_equal(tile_jit_compile_cubin("k.tile", OK, strlen(OK), &o, &cubin, &n, NULL), TILE_ERR_INVALID);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_each_flag, setup, teardown),
    cmocka_unit_test_setup_teardown(test_include_dirs, setup, teardown),
    cmocka_unit_test_setup_teardown(test_max_errors_and_ptxas, setup, teardown),
    cmocka_unit_test_setup_teardown(test_nvjitlink, setup, teardown),
    cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

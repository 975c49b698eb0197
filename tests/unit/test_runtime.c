/* test_runtime.c - unit tests for libtilert: the metadata parser, finding
 * __tile_meta in real cubins made with ptxas, robustness against truncated
 * and corrupted cubins, the no-GPU path, and (only when a GPU is present)
 * loading and launching kernels.
 */
#include <pthread.h>
#include <unistd.h>

#include "testutil.h"
#include "tile/runtime.h"

/* ---- helpers ---- */

static tile_meta *parse(const char *text, char *err, size_t cap) {
  return tile_meta_parse(text, strlen(text), err, cap);
}

/* Parsing must fail with an error that contains every `want` substring. */
static void expect_parse_error(const char *text, const char *want1, const char *want2) {
  char err[512];
  tile_meta *m = parse(text, err, sizeof err);
  if (m || !strstr(err, want1) || (want2 && !strstr(err, want2))) {
    fprintf(stderr, "text:\n%s\nerror: '%s'\nwanted: '%s' '%s'\n", text, err, want1,
            want2 ? want2 : "");
    tile_meta_free(m);
    fail();
  }
}

/* The same search order as tilec: $TILE_PTXAS, $CUDA_HOME, the default
 * toolkit folder, then PATH. */
static const char *ptxas_path(void) {
  static char buf[4096];
  const char *e = getenv("TILE_PTXAS");
  if (e && access(e, X_OK) == 0) return e;
  const char *home = getenv("CUDA_HOME");
  if (home) {
    snprintf(buf, sizeof buf, "%s/bin/ptxas", home);
    if (access(buf, X_OK) == 0) return buf;
  }
  static const char *cands[] = {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"};
  for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++)
    if (access(cands[i], X_OK) == 0) return cands[i];
  return system("command -v ptxas >/dev/null 2>&1") == 0 ? "ptxas" : NULL;
}

/* Is there a usable GPU? (tile_init(0) succeeds; checked once.) */
static int have_gpu(void) {
  static int cached = -1;
  if (cached < 0) cached = tile_init(0) == TILE_OK;
  return cached;
}

static void test_arch(char *arch, size_t cap) {
  if (!have_gpu() || tile_device_arch(arch, cap) != TILE_OK) snprintf(arch, cap, "sm_90a");
}

/* Build a cubin from PTX `body` (entries) plus a __tile_meta holding `meta`
 * (omitted when NULL).  Returns the malloc'ed cubin, NULL when ptxas is
 * missing (the caller skips), fails the test when ptxas fails. */
static unsigned char *make_cubin(const char *meta, const char *body, size_t *size) {
  const char *ptxas = ptxas_path();
  if (!ptxas) return NULL;
  char dir[512], ptx[600], cubin[600], cmd[8400], arch[32];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  snprintf(ptx, sizeof ptx, "%s/k.ptx", dir);
  snprintf(cubin, sizeof cubin, "%s/k.cubin", dir);
  test_arch(arch, sizeof arch);
  FILE *f = fopen(ptx, "w");
  assert_non_null(f);
  fprintf(f, ".version 8.0\n.target %s\n.address_size 64\n", arch);
  if (meta) {
    size_t n = strlen(meta) + 1;
    fprintf(f, ".visible .global .align 1 .b8 __tile_meta[%zu] = {", n);
    for (size_t i = 0; i < n; i++) fprintf(f, "%s%u", i ? ", " : "", (unsigned char)meta[i]);
    fprintf(f, "};\n");
  }
  fputs(body, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s -arch=%s '%s' -o '%s'", ptxas, arch, ptx, cubin);
  int rc = system(cmd);
  unsigned char *data = rc == 0 ? (unsigned char *)tu_read_file(cubin, size) : NULL;
  tu_rmtree(dir);
  if (rc != 0) fail_msg("ptxas failed: %s", cmd);
  assert_non_null(data);
  return data;
}

#define NEED_CUBIN(c)                                                      \
  do {                                                                     \
    if (!(c)) {                                                            \
      fprintf(stderr, "[  SKIP    ] ptxas not found: cubin tests skipped\n"); \
      skip();                                                              \
    }                                                                      \
  } while (0)

static const char EMPTY_ENTRY[] = ".visible .entry k()\n{\n  ret;\n}\n";
static const char K_META[] = "tile-meta 1\narch sm_90a\nkernel k\nthreads 128\nsmem 0\n"
                             "cluster 1 1 1\nend\n";

/* ---- metadata ---- */

static const char VALID_META[] =
    "tile-meta 1\n"
    "arch sm_90a\n"
    "# a comment\n"
    "\n"
    "kernel vadd\n"
    "threads 128\n"
    "smem 0\n"
    "cluster 1 1 1\n"
    "param x ptr f32 16\n"
    "param y ptr f32 16\n"
    "param out ptr f32 16\n"
    "param n scalar i32 4\n"
    "const BLOCK i32 1024\n"
    "end\n"
    "kernel gemm_tma\n"
    "threads 384\n"
    "smem 200000\n"
    "cluster 2 1 1\n"
    "param a tma bf16 128\n"
    "param c ptr bf16 128\n"
    "param alpha scalar f32 4\n"
    "const T dtype bf16\n"
    "end\n"
    "kernel noargs\n"
    "threads 32\n"
    "end\n";

static void test_meta_valid(void **state) {
  (void)state;
  char err[256];
  tile_meta *m = parse(VALID_META, err, sizeof err);
  assert_non_null(m);
  assert_string_equal(err, "");
  assert_int_equal(tile_meta_num_kernels(m), 3);

  const tile_kernel_info *k = tile_meta_kernel(m, 0);
  assert_string_equal(k->name, "vadd");
  assert_int_equal(k->threads, 128);
  assert_int_equal(k->smem_bytes, 0);
  assert_int_equal(k->cluster[0], 1);
  assert_int_equal(k->nparams, 4);
  assert_string_equal(k->params[2].name, "out");
  assert_int_equal(k->params[2].kind, TILE_PARAM_PTR);
  assert_string_equal(k->params[2].dtype, "f32");
  assert_int_equal(k->params[2].size, 8);
  assert_int_equal(k->params[2].align, 16);
  assert_string_equal(k->params[3].name, "n");
  assert_int_equal(k->params[3].kind, TILE_PARAM_SCALAR);
  assert_string_equal(k->params[3].dtype, "i32");
  assert_int_equal(k->params[3].size, 4);

  k = tile_meta_kernel(m, 1);
  assert_string_equal(k->name, "gemm_tma");
  assert_int_equal(k->threads, 384);
  assert_int_equal(k->smem_bytes, 200000);
  assert_int_equal(k->cluster[0], 2);
  assert_int_equal(k->cluster[1], 1);
  assert_int_equal(k->cluster[2], 1);
  assert_int_equal(k->nparams, 3);
  assert_int_equal(k->params[0].kind, TILE_PARAM_TMA);
  assert_int_equal(k->params[0].size, 128);
  assert_string_equal(k->params[0].dtype, "bf16");
  assert_int_equal(k->params[1].align, 128);
  assert_string_equal(k->params[2].name, "alpha");
  assert_string_equal(tile_kernel_const(k, "T"), "bf16"); /* const T: dtype = bf16 */

  k = tile_meta_kernel(m, 2);
  assert_string_equal(k->name, "noargs");
  assert_int_equal(k->nparams, 0);
  assert_int_equal(k->cluster[2], 1); /* default 1 1 1 */

  assert_null(tile_meta_kernel(m, 3));
  assert_null(tile_meta_kernel(m, -1));
  tile_meta_free(m);
  tile_meta_free(NULL);
}

static void test_meta_unknown_keyword(void **state) {
  (void)state;
  const char *text = "tile-meta 1\nkernel k\nthreads 64\nmaxregs 128\nfuture thing with many "
                     "fields a b c d e f g h\nend\n";
  char err[256];
  tile_meta *m = parse(text, err, sizeof err);
  assert_non_null(m);
  assert_int_equal(tile_meta_kernel(m, 0)->threads, 64);
  tile_meta_free(m);
}

static void test_meta_text_forms(void **state) {
  (void)state;
  /* CRLF line ends, no final newline, a NUL ending the text early, tabs. */
  const char crlf[] = "tile-meta 1\r\nkernel k\r\nthreads\t64\r\nend";
  tile_meta *m = tile_meta_parse(crlf, sizeof crlf - 1, NULL, 0);
  assert_non_null(m);
  tile_meta_free(m);
  const char nul[] = "tile-meta 1\nkernel k\nthreads 64\nend\n\0garbage \xff\n";
  m = tile_meta_parse(nul, sizeof nul - 1, NULL, 0);
  assert_non_null(m);
  tile_meta_free(m);
  /* len cuts the text: "end" is missing. */
  const char *t = "tile-meta 1\nkernel k\nthreads 64\nend\n";
  char err[256];
  assert_null(tile_meta_parse(t, strlen(t) - 4, err, sizeof err));
  assert_non_null(strstr(err, "no 'end'"));
  /* No kernels at all is valid text. */
  m = parse("tile-meta 1\narch sm_100a\n", err, sizeof err);
  assert_non_null(m);
  assert_int_equal(tile_meta_num_kernels(m), 0);
  tile_meta_free(m);
  assert_null(tile_meta_parse(NULL, 0, err, sizeof err));
  assert_int_equal(tile_meta_num_kernels(NULL), 0);
}

static void test_meta_version(void **state) {
  (void)state;
  expect_parse_error("tile-meta 2\nkernel k\nthreads 32\nend\n", "line 1:", "version '2'");
  /* constants: kept per kernel, each once */
  expect_parse_error("tile-meta 1\nkernel k\nthreads 32\nconst D i32 64\nconst D i32 128\nend\n", "line 5:",
                     "'D' is given twice");
  {
    char err[256];
    tile_meta *m = parse("tile-meta 1\nkernel a\nthreads 32\nconst D i32 64\nconst CAUSAL bool true\nend\n"
                         "kernel b\nthreads 32\nend\nkernel c\nthreads 32\nconst D i32 128\nend\n",
                         err, sizeof err);
    assert_non_null(m);
    assert_int_equal(tile_meta_kernel(m, 0)->nconsts, 2);
    assert_string_equal(tile_kernel_const(tile_meta_kernel(m, 0), "CAUSAL"), "true");
    assert_int_equal(tile_meta_kernel(m, 1)->nconsts, 0);
    assert_null(tile_kernel_const(tile_meta_kernel(m, 1), "D"));
    assert_string_equal(tile_kernel_const(tile_meta_kernel(m, 2), "D"), "128");
    tile_meta_free(m);
  }
  expect_parse_error("", "line 1:", "empty");
  expect_parse_error("hello\n", "line 1:", "tile-meta 1");
  expect_parse_error("\ntile-meta 1\n", "line 1:", "tile-meta 1");
  expect_parse_error("tile-meta 1 extra\n", "line 1:", NULL);
  expect_parse_error("tile-meta\n", "line 1:", NULL);
}

static void test_meta_errors(void **state) {
  (void)state;
  static const struct {
    const char *text, *want1, *want2;
  } cases[] = {
      {"tile-meta 1\nkernel k\nend\n", "line 3:", "no 'threads'"},
      {"tile-meta 1\nkernel k\nthreads 0\nend\n", "line 3:", "threads"},
      {"tile-meta 1\nkernel k\nthreads 2048\nend\n", "line 3:", "1 to 1024"},
      {"tile-meta 1\nkernel k\nthreads abc\nend\n", "line 3:", "'abc'"},
      {"tile-meta 1\nkernel k\nthreads -5\nend\n", "line 3:", NULL},
      {"tile-meta 1\nkernel k\nthreads 99999999999999999999999\nend\n", "line 3:", NULL},
      {"tile-meta 1\nkernel k\nthreads 32 64\nend\n", "line 3:", "threads N"},
      {"tile-meta 1\nkernel k\nthreads 32\nthreads 64\nend\n", "line 4:", "second 'threads'"},
      {"tile-meta 1\nkernel k\nthreads 32\nsmem 999999999\nend\n", "line 4:", "smem"},
      {"tile-meta 1\nkernel k\nthreads 32\ncluster 0 1 1\nend\n", "line 4:", "cluster"},
      {"tile-meta 1\nkernel k\nthreads 32\ncluster 4 4 4\nend\n", "line 4:", "more than 16"},
      {"tile-meta 1\nkernel k\nthreads 32\ncluster 2 1\nend\n", "line 4:", "cluster X Y Z"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam x ptr f32\nend\n", "line 4:",
       "param NAME KIND DTYPE N"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam x ptr f33 16\nend\n", "line 4:",
       "unknown dtype 'f33'"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam x pointer f32 16\nend\n", "line 4:",
       "unknown parameter kind"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam x ptr f32 12\nend\n", "line 4:",
       "power of two"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam x ptr f32 0\nend\n", "line 4:", NULL},
      {"tile-meta 1\nkernel k\nthreads 32\nparam n scalar i64 4\nend\n", "line 4:",
       "does not fit"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam n scalar i32 3\nend\n", "line 4:", NULL},
      {"tile-meta 1\nkernel k\nthreads 32\nparam d tma bf16 64\nend\n", "line 4:", "128"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam 9x ptr f32 16\nend\n", "line 4:",
       "not an identifier"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam x ptr f32 16\nparam x ptr f32 16\nend\n",
       "line 5:", "declared twice"},
      {"tile-meta 1\nkernel k\nthreads 32\nconst B i31 4\nend\n", "line 4:", "unknown dtype"},
      {"tile-meta 1\nkernel k\nthreads 32\nconst T dtype q8\nend\n", "line 4:", "unknown dtype 'q8'"},
      {"tile-meta 1\nkernel k\nthreads 32\nconst B i32\nend\n", "line 4:", "const NAME"},
      {"tile-meta 1\nkernel k\nthreads 32\nend extra\n", "line 4:", "'end'"},
      {"tile-meta 1\nkernel k\nthreads 32\n", "line 3:", "no 'end'"},
      {"tile-meta 1\nkernel k\nthreads 32\nkernel j\nthreads 32\nend\n", "line 4:",
       "missing 'end'"},
      {"tile-meta 1\nkernel k\nthreads 32\nend\nkernel k\nthreads 32\nend\n", "line 5:",
       "defined twice"},
      {"tile-meta 1\nkernel\n", "line 2:", "kernel NAME"},
      /* found by fuzz_loader: the entry it names would be the metadata's own symbol */
      {"tile-meta 1\nkernel __tile_meta\nthreads 32\nend\n", "line 2:", "named '__tile_meta'"},
      {"tile-meta 1\nkernel 1k\nthreads 32\nend\n", "line 2:", "not an identifier"},
      {"tile-meta 1\nthreads 32\n", "line 2:", "outside a kernel block"},
      {"tile-meta 1\nend\n", "line 2:", "outside a kernel block"},
      {"tile-meta 1\nbogus\n", "line 2:", "'bogus'"},
      {"tile-meta 1\narch sm_90a\narch sm_100a\n", "line 3:", "second 'arch'"},
      {"tile-meta 1\nkernel k\nthreads 32\narch sm_90a\nend\n", "line 4:", "'arch' inside"},
      {"tile-meta 1\nkernel k\nthreads \x01 32\nend\n", "line 3:", "invalid byte 0x01"},
      /* derived descriptors (a pipelined dot's TMA) */
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d tma bf16 128 64 swizzle 128 from a n n\nend\n", "line 7:", "derive NAME tma"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d ptr bf16 128 64 swizzle 128 from a n n n\nend\n", "line 7:", "not 'ptr'"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d tma bf16 300 64 swizzle 128 from a n n n\nend\n", "line 7:", "box rows"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d tma bf16 128 64 swizzle 100 from a n n n\nend\n", "line 7:", "not 0, 32, 64 or 128"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d tma bf16 128 64 swizzle 128 of a n n n\nend\n", "line 7:", "expected 'from'"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d tma bf16 128 64 swizzle 128 from n n n n\nend\n", "line 7:", "'n' is not a pointer"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d tma bf16 128 64 swizzle 128 from a f n n\nend\n", "line 7:", "'f' is not an integer"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d tma bf16 128 64 swizzle 128 from a m n n\nend\n", "line 7:", "no parameter 'm'"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d tma bf16 128 64 swizzle 128 from a 0 n n\nend\n", "line 7:", "positive extent"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d tma bf16 128 64 swizzle 128 from 7 n n n\nend\n", "line 7:", "positive extent"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d tma bf16 128 64 swizzle 128 from a n n n plains\nend\n", "line 7:", "[planes]"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive n tma bf16 128 64 swizzle 128 from a n n n\nend\n", "line 7:", "declared twice"},
      {"tile-meta 1\nkernel k\nthreads 32\nparam a ptr bf16 16\nparam n scalar i32 4\nparam f scalar f32 4\nderive d tma bf16 128 64 swizzle 128 from a n n n\nderive d tma bf16 128 64 swizzle 128 from a n n n\nend\n",
       "line 8:", "declared twice"},
      {"tile-meta 1\nkernel k\xc3\xa9\nthreads 32\nend\n", "line 2:", "invalid byte 0xc3"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    expect_parse_error(cases[i].text, cases[i].want1, cases[i].want2);

  /* A line longer than the limit, and a name longer than its field. */
  char text[3000];
  snprintf(text, sizeof text, "tile-meta 1\nkernel k\nthreads 32\n# %02000d\nend\n", 0);
  expect_parse_error(text, "line 4:", "longer than");
  snprintf(text, sizeof text, "tile-meta 1\nkernel %0200d\n", 0);
  expect_parse_error(text, "line 2:", NULL);
  snprintf(text, sizeof text, "tile-meta 1\nkernel k\nthreads 32\nparam p%070d ptr f32 4\nend\n", 0);
  expect_parse_error(text, "line 4:", "longer than 63");

  /* err may be NULL, or tiny. */
  assert_null(parse("tile-meta 2\n", NULL, 0));
  char small[8];
  assert_null(parse("tile-meta 2\n", small, sizeof small));
  assert_true(strlen(small) < sizeof small);
}

/* "derive": the descriptors tilec adds for a pipelined dot, built by
 * tile_launch from the other arguments; not launch arguments themselves. */
static void test_meta_derived(void **state) {
  (void)state;
  static const char text[] = "tile-meta 1\nkernel mm\nthreads 256\nparam a ptr bf16 16\nparam M scalar i32 4\n"
                             "param K scalar i64 8\nparam lda scalar i32 4\n"
                             "derive __dot_a tma bf16 128 64 swizzle 128 from a K M lda\n"
                             "derive __dot_c tma f16 64 32 swizzle 64 from a 4096 M 4096\n"
                             "derive __ring_0 tma bf16 64 64 swizzle 128 from a 128 M 128 planes\nend\n";
  char err[256];
  tile_meta *m = parse(text, err, sizeof err);
  if (!m) print_error("%s\n", err);
  assert_non_null(m);
  const tile_kernel_info *k = tile_meta_kernel(m, 0);
  assert_int_equal(k->nparams, 4); /* the caller passes four */
  assert_int_equal(k->nderived, 3);
  const tile_derived_info *d = &k->derived[0];
  assert_string_equal(d->name, "__dot_a");
  assert_string_equal(d->dtype, "bf16");
  assert_int_equal(d->box[0], 128);
  assert_int_equal(d->box[1], 64);
  assert_int_equal(d->swizzle, 128);
  assert_int_equal(d->from[0], 0);
  assert_int_equal(d->from[1], 2);
  assert_int_equal(d->from[2], 1);
  assert_int_equal(d->from[3], 3);
  d = &k->derived[1];
  assert_string_equal(d->dtype, "f16");
  assert_int_equal(d->from[1], -1);
  assert_true(d->lit[1] == 4096 && d->lit[3] == 4096);
  assert_int_equal(d->from[2], 1);
  assert_int_equal(d->planes, 0);
  d = &k->derived[2]; /* a 3-D tensor: planes of M rows */
  assert_int_equal(d->planes, 1);
  assert_int_equal(d->from[2], 1);
  assert_true(d->lit[1] == 128 && d->lit[3] == 128);
  tile_meta_free(m);
}

/* Many kernels and params: the one-block result stays consistent. */
static void test_meta_many(void **state) {
  (void)state;
  size_t cap = 1 << 20, n = 0;
  char *text = malloc(cap);
  assert_non_null(text);
  n += (size_t)snprintf(text + n, cap - n, "tile-meta 1\n");
  for (int k = 0; k < 200; k++) {
    n += (size_t)snprintf(text + n, cap - n, "kernel k%d\nthreads %d\n", k, 32 * (1 + k % 32));
    for (int p = 0; p < k % 13; p++)
      n += (size_t)snprintf(text + n, cap - n, "param p%d ptr f32 %d\n", p, 1 << (p % 8));
    n += (size_t)snprintf(text + n, cap - n, "end\n");
  }
  char err[256];
  tile_meta *m = tile_meta_parse(text, n, err, sizeof err);
  assert_non_null(m);
  assert_int_equal(tile_meta_num_kernels(m), 200);
  for (int k = 0; k < 200; k++) {
    const tile_kernel_info *ki = tile_meta_kernel(m, k);
    char name[16];
    snprintf(name, sizeof name, "k%d", k);
    assert_string_equal(ki->name, name);
    assert_int_equal(ki->nparams, k % 13);
    for (int p = 0; p < ki->nparams; p++) assert_int_equal(ki->params[p].align, 1 << (p % 8));
  }
  tile_meta_free(m);
  free(text);
}

/* ---- cubins ---- */

static void test_cubin_find_meta(void **state) {
  (void)state;
  size_t size;
  unsigned char *cubin = make_cubin(K_META, EMPTY_ENTRY, &size);
  NEED_CUBIN(cubin);
  size_t len = 0;
  const char *text = tile_cubin_find_meta(cubin, size, &len);
  assert_non_null(text);
  assert_int_equal(len, strlen(K_META));
  assert_memory_equal(text, K_META, len);
  assert_true(text >= (const char *)cubin && text + len <= (const char *)cubin + size);
  assert_non_null(tile_cubin_find_meta(cubin, size, NULL));

  tile_module *m = (tile_module *)1;
  tile_status s = tile_module_load_data(cubin, size, &m);
  if (have_gpu()) {
    assert_int_equal(s, TILE_OK);
    assert_int_equal(tile_module_num_kernels(m), 1);
    assert_string_equal(tile_module_kernel_info(m, 0)->name, "k");
    assert_int_equal(tile_module_unload(m), TILE_OK);
  } else {
    assert_true(s == TILE_ERR_NO_DRIVER || s == TILE_ERR_NO_DEVICE);
    assert_null(m);
    assert_true(tile_last_error()[0] != 0);
  }
  free(cubin);
}

static void test_cubin_without_meta(void **state) {
  (void)state;
  size_t size;
  unsigned char *cubin = make_cubin(NULL, EMPTY_ENTRY, &size);
  NEED_CUBIN(cubin);
  size_t len = 99;
  assert_null(tile_cubin_find_meta(cubin, size, &len));
  assert_int_equal(len, 0);
  tile_module *m;
  assert_int_equal(tile_module_load_data(cubin, size, &m), TILE_ERR_BAD_MODULE);
  assert_null(m);
  assert_string_equal(tile_last_error(),
                      "not a Tile cubin: no __tile_meta symbol (was it built by tilec?)");
  free(cubin);
}

static void test_cubin_bad_meta(void **state) {
  (void)state;
  size_t size;
  /* The metadata names a kernel the cubin does not have. */
  unsigned char *cubin =
      make_cubin("tile-meta 1\nkernel vadd\nthreads 128\nend\n", EMPTY_ENTRY, &size);
  NEED_CUBIN(cubin);
  tile_module *m;
  assert_int_equal(tile_module_load_data(cubin, size, &m), TILE_ERR_BAD_MODULE);
  assert_non_null(strstr(tile_last_error(), "kernel 'vadd'"));
  free(cubin);
  /* Metadata of the wrong version: the parser's message, with its line. */
  cubin = make_cubin("tile-meta 2\nkernel k\nthreads 128\nend\n", EMPTY_ENTRY, &size);
  assert_int_equal(tile_module_load_data(cubin, size, &m), TILE_ERR_BAD_MODULE);
  assert_non_null(strstr(tile_last_error(), "line 1:"));
  assert_non_null(strstr(tile_last_error(), "version"));
  free(cubin);
}

static void test_not_a_cubin(void **state) {
  (void)state;
  tile_module *m;
  const char *ptx = ".version 8.0\n.target sm_90a\n";
  assert_int_equal(tile_module_load_data(ptx, strlen(ptx), &m), TILE_ERR_BAD_MODULE);
  assert_non_null(strstr(tile_last_error(), "ELF"));
  assert_int_equal(tile_module_load_data("", 0, &m), TILE_ERR_BAD_MODULE);
  assert_int_not_equal(tile_module_load_data(NULL, 10, &m), TILE_OK);
  assert_int_equal(tile_module_load_data(ptx, 4, NULL), TILE_ERR_INVALID);
  assert_null(tile_cubin_find_meta(NULL, 0, NULL));
  assert_int_equal(tile_module_load_file("/nonexistent/k.cubin", &m), TILE_ERR_NOT_FOUND);
  assert_non_null(strstr(tile_last_error(), "/nonexistent/k.cubin"));
  assert_int_equal(tile_module_load_file("/", &m), TILE_ERR_IO);
}

static void test_module_load_file(void **state) {
  (void)state;
  size_t size;
  unsigned char *cubin = make_cubin(K_META, EMPTY_ENTRY, &size);
  NEED_CUBIN(cubin);
  char dir[512], path[600];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  snprintf(path, sizeof path, "%s/k.cubin", dir);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(cubin, 1, size, f), size);
  fclose(f);
  tile_module *m;
  tile_status s = tile_module_load_file(path, &m);
  if (have_gpu()) {
    assert_int_equal(s, TILE_OK);
    tile_kernel *k;
    assert_int_equal(tile_module_get_kernel(m, "k", &k), TILE_OK);
    assert_int_equal(tile_kernel_get_info(k)->threads, 128);
    assert_int_equal(tile_module_get_kernel(m, "nope", &k), TILE_ERR_NOT_FOUND);
    assert_non_null(strstr(tile_last_error(), "'nope'"));
    tile_module_unload(m);
  } else {
    assert_true(s == TILE_ERR_NO_DRIVER || s == TILE_ERR_NO_DEVICE);
  }
  /* A truncated file: the message names the file. */
  f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(cubin, 1, size / 2, f), size / 2);
  fclose(f);
  assert_int_equal(tile_module_load_file(path, &m), TILE_ERR_BAD_MODULE);
  assert_non_null(strstr(tile_last_error(), path));
  tu_rmtree(dir);
  free(cubin);
}

/* ---- robustness ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Feed one variant (an exact-size heap copy, so ASan/valgrind see any
 * overread) to the parsing entry points.  tile_module_load_data is used only
 * without a GPU: with one, a variant that passes validation would reach the
 * driver, which is not ours to fuzz. */
static int check_variant(const unsigned char *data, size_t size) {
  unsigned char *copy = malloc(size ? size : 1);
  assert_non_null(copy);
  if (size) memcpy(copy, data, size);
  size_t len = 0;
  const char *text = tile_cubin_find_meta(copy, size, &len);
  int found = text != NULL;
  if (text) {
    assert_true(text >= (const char *)copy && text + len <= (const char *)copy + size);
    tile_meta_free(tile_meta_parse(text, len, NULL, 0));
  }
  if (!have_gpu()) {
    tile_module *m = (tile_module *)1;
    tile_status s = tile_module_load_data(copy, size, &m);
    assert_true(s == TILE_ERR_BAD_MODULE || s == TILE_ERR_NO_DRIVER ||
                s == TILE_ERR_NO_DEVICE);
    assert_null(m);
    assert_true(tile_last_error()[0] != 0);
  }
  free(copy);
  return found;
}

static uint64_t rd64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void test_cubin_truncated(void **state) {
  (void)state;
  size_t size;
  unsigned char *cubin = make_cubin(K_META, EMPTY_ENTRY, &size);
  NEED_CUBIN(cubin);
  int found = 0;
  for (size_t n = 0; n <= size; n++) found += check_variant(cubin, n);
  assert_true(found >= 1); /* at least the whole file */
  free(cubin);
}

static void test_cubin_corrupted(void **state) {
  (void)state;
  size_t size;
  unsigned char *cubin = make_cubin(K_META, EMPTY_ENTRY, &size);
  NEED_CUBIN(cubin);
  unsigned char *v = malloc(size);
  assert_non_null(v);
  uint64_t shoff = rd64(cubin + 40), symoff = 0, symsize = 0;
  unsigned shnum = cubin[60] | cubin[61] << 8;
  for (unsigned i = 0; i < shnum && shoff + 64 * (i + 1) <= size; i++) {
    const unsigned char *sh = cubin + shoff + 64 * i;
    if (sh[4] == 2) symoff = rd64(sh + 24), symsize = rd64(sh + 32); /* SHT_SYMTAB */
  }
  assert_true(symsize > 0 && symoff + symsize <= size);
  static const unsigned char nasty[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0x40};
  int found = 0;
  for (int iter = 0; iter < 6000; iter++) {
    memcpy(v, cubin, size);
    int nflips = 1 + (int)(rng() % 8);
    for (int j = 0; j < nflips; j++) {
      size_t at;
      switch (rng() % 4) {
      case 0: at = rng() % 64; break;                     /* ELF header */
      case 1: at = shoff + rng() % (size - shoff); break; /* section table (at the end) */
      case 2: at = symoff + rng() % symsize; break;       /* symbol table */
      default: at = rng() % size; break;
      }
      if (rng() % 2) v[at] ^= (unsigned char)(1u << (rng() % 8));
      else v[at] = nasty[rng() % sizeof nasty];
    }
    found += check_variant(v, size);
  }
  fprintf(stderr, "    %d of 6000 corrupted cubins still had readable metadata\n", found);
  /* Random bytes, with and without an ELF64 CUDA header in front. */
  for (int iter = 0; iter < 1000; iter++) {
    size_t n = (size_t)(rng() % size);
    for (size_t j = 0; j < n; j++) v[j] = (unsigned char)rng();
    if (iter % 2 && n >= 20) memcpy(v, "\177ELF\2\1\1\0\0\0\0\0\0\0\0\0\2\0\276\0", 20);
    check_variant(v, n);
  }
  free(v);
  free(cubin);
}

/* ---- no GPU ---- */

/* Runs first, before any tile_init in this process. */
static void test_before_init(void **state) {
  (void)state;
  tile_devptr p = 1;
  tile_status s = tile_malloc(&p, 16);
  assert_int_equal(p, 0);
  assert_true(s == TILE_ERR_NO_DRIVER || s == TILE_ERR_NO_DEVICE || s == TILE_ERR_INVALID);
  if (s == TILE_ERR_INVALID) assert_non_null(strstr(tile_last_error(), "call tile_init first"));
  char arch[16];
  assert_int_equal(tile_device_arch(arch, sizeof arch), s);
}

static void *thread_last_error(void *arg) {
  (void)arg;
  return (void *)(uintptr_t)(tile_last_error()[0] == 0);
}

static void test_last_error_per_thread(void **state) {
  (void)state;
  tile_module *m;
  assert_int_equal(tile_module_load_data("x", 1, &m), TILE_ERR_BAD_MODULE);
  assert_true(tile_last_error()[0] != 0);
  pthread_t t;
  void *fresh = NULL;
  assert_int_equal(pthread_create(&t, NULL, thread_last_error, NULL), 0);
  pthread_join(t, &fresh);
  assert_true(fresh != NULL); /* a new thread has "" */
  /* A successful call keeps the last failure's message. */
  char err[64];
  tile_meta_free(parse("tile-meta 1\n", err, sizeof err));
  assert_true(tile_last_error()[0] != 0);
}

static void test_status_names(void **state) {
  (void)state;
  assert_string_equal(tile_status_name(TILE_OK), "TILE_OK");
  assert_string_equal(tile_status_name(TILE_ERR_BAD_MODULE), "TILE_ERR_BAD_MODULE");
  assert_string_equal(tile_status_name(TILE_ERR_NOMEM), "TILE_ERR_NOMEM");
  assert_string_equal(tile_status_name((tile_status)99), "TILE_ERR_UNKNOWN");
}

static void test_invalid_args(void **state) {
  (void)state;
  assert_int_equal(tile_malloc(NULL, 16), TILE_ERR_INVALID);
  assert_int_equal(tile_memcpy_htod(0, NULL, 16), TILE_ERR_INVALID);
  assert_int_equal(tile_memcpy_dtoh(NULL, 0, 16), TILE_ERR_INVALID);
  assert_int_equal(tile_stream_create(NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_event_create(NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_event_elapsed_ms(NULL, NULL, NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_device_info_get(NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_device_arch(NULL, 0), TILE_ERR_INVALID);
  assert_int_equal(tile_launch(NULL, 1, 1, 1, NULL, 0, NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_module_unload(NULL), TILE_OK);
  assert_int_equal(tile_module_num_kernels(NULL), 0);
  assert_null(tile_module_kernel_info(NULL, 0));
  assert_null(tile_kernel_get_info(NULL));
  tile_kernel *k;
  assert_int_equal(tile_module_get_kernel(NULL, "k", &k), TILE_ERR_INVALID);
}

static void expect_no_gpu(tile_status s, tile_status want) {
  assert_int_equal(s, want);
  assert_true(strlen(tile_last_error()) > 10);
}

static void test_no_gpu(void **state) {
  (void)state;
  tile_status s = tile_init(0);
  if (s == TILE_OK) {
    fprintf(stderr, "[  SKIP    ] a GPU is present: the no-GPU test does not apply\n");
    skip();
  }
  assert_true(s == TILE_ERR_NO_DRIVER || s == TILE_ERR_NO_DEVICE);
  fprintf(stderr, "    tile_init(0): %s: %s\n", tile_status_name(s), tile_last_error());
  if (s == TILE_ERR_NO_DRIVER) assert_non_null(strstr(tile_last_error(), "libcuda"));
  expect_no_gpu(tile_init(0), s); /* the same answer again */
  expect_no_gpu(tile_init(3), s);
  tile_devptr p = 1234;
  expect_no_gpu(tile_malloc(&p, 1024), s);
  assert_int_equal(p, 0);
  expect_no_gpu(tile_free(0), s);
  char buf[16];
  expect_no_gpu(tile_memcpy_htod(0, buf, sizeof buf), s);
  expect_no_gpu(tile_memcpy_dtoh(buf, 0, sizeof buf), s);
  expect_no_gpu(tile_memcpy_dtod(0, 0, 16), s);
  expect_no_gpu(tile_memset_d8(0, 1, 16), s);
  expect_no_gpu(tile_memset_d32(0, 1, 16), s);
  expect_no_gpu(tile_synchronize(), s);
  tile_stream st;
  expect_no_gpu(tile_stream_create(&st), s);
  expect_no_gpu(tile_stream_synchronize(NULL), s);
  expect_no_gpu(tile_stream_destroy(NULL), s);
  tile_event e;
  expect_no_gpu(tile_event_create(&e), s);
  expect_no_gpu(tile_event_record((tile_event)1, NULL), s);
  float ms;
  expect_no_gpu(tile_event_elapsed_ms(&ms, (tile_event)1, (tile_event)1), s);
  tile_device_info info;
  expect_no_gpu(tile_device_info_get(&info), s);
  char arch[16];
  expect_no_gpu(tile_device_arch(arch, sizeof arch), s);
}

/* ---- with a GPU ---- */

#define NEED_GPU()                                                            \
  do {                                                                        \
    if (!have_gpu()) {                                                        \
      fprintf(stderr, "[  SKIP    ] no GPU: %s\n", tile_last_error());          \
      skip();                                                                 \
    }                                                                         \
  } while (0)

static const char VADD_PTX[] =
    ".visible .entry vadd(.param .u64 x, .param .u64 y, .param .u64 out, .param .u32 n)\n"
    "{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<6>;\n  .reg .f32 %f<4>;\n  .reg .b64 %rd<10>;\n"
    "  ld.param.u64 %rd1, [x];\n  ld.param.u64 %rd2, [y];\n"
    "  ld.param.u64 %rd3, [out];\n  ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  setp.ge.s32 %p1, %r5, %r1;\n  @%p1 bra DONE;\n"
    "  cvta.to.global.u64 %rd4, %rd1;\n  cvta.to.global.u64 %rd5, %rd2;\n"
    "  cvta.to.global.u64 %rd6, %rd3;\n  mul.wide.s32 %rd7, %r5, 4;\n"
    "  add.s64 %rd8, %rd4, %rd7;\n  ld.global.f32 %f1, [%rd8];\n"
    "  add.s64 %rd8, %rd5, %rd7;\n  ld.global.f32 %f2, [%rd8];\n"
    "  add.f32 %f3, %f1, %f2;\n  add.s64 %rd8, %rd6, %rd7;\n  st.global.f32 [%rd8], %f3;\n"
    "DONE:\n  ret;\n}\n"
    /* out[ctaid.x] = cluster size, to check the cluster launch */
    ".visible .entry clus(.param .u64 out)\n"
    "{\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, %ctaid.x;\n  mov.u32 %r2, %cluster_nctarank;\n"
    "  mul.wide.u32 %rd3, %r1, 4;\n  add.s64 %rd4, %rd2, %rd3;\n"
    "  st.global.u32 [%rd4], %r2;\n  ret;\n}\n"
    /* writes and reads the last word of 100000 bytes of dynamic smem */
    ".extern .shared .align 16 .b8 dsm[];\n"
    ".visible .entry bigsmem(.param .u64 out)\n"
    "{\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [out];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mov.u32 %r1, 4242;\n  st.shared.u32 [dsm+99996], %r1;\n  bar.sync 0;\n"
    "  ld.shared.u32 %r2, [dsm+99996];\n  st.global.u32 [%rd2], %r2;\n  ret;\n}\n";

static const char VADD_META[] =
    "tile-meta 1\n"
    "kernel vadd\nthreads 128\nsmem 0\ncluster 1 1 1\n"
    "param x ptr f32 16\nparam y ptr f32 16\nparam out ptr f32 16\nparam n scalar i32 4\nend\n"
    "kernel clus\nthreads 32\ncluster 2 1 1\nparam out ptr u32 4\nend\n"
    "kernel bigsmem\nthreads 32\nsmem 100000\nparam out ptr u32 4\nend\n";

static void test_gpu_device(void **state) {
  (void)state;
  NEED_GPU();
  tile_device_info info;
  assert_int_equal(tile_device_info_get(&info), TILE_OK);
  char arch[16];
  assert_int_equal(tile_device_arch(arch, sizeof arch), TILE_OK);
  fprintf(stderr, "    %s, %s, %d SMs, %zu MiB, smem optin %d, L2 %d\n", info.name, arch,
          info.sm_count, info.total_mem >> 20, info.max_smem_per_block_optin, info.l2_bytes);
  assert_true(info.sm_count > 0 && info.total_mem > 0);
  assert_int_equal(strncmp(arch, "sm_", 3), 0);
  assert_int_equal(tile_device_arch(arch, 3), TILE_ERR_INVALID);
  assert_int_equal(tile_init(1 << 20), TILE_ERR_INVALID);
}

static void *thread_malloc(void *arg) {
  (void)arg;
  tile_devptr p = 0; /* this thread never called tile_init */
  tile_status s = tile_malloc(&p, 256);
  if (s == TILE_OK) s = tile_memset_d8(p, 7, 256);
  if (s == TILE_OK) s = tile_free(p);
  return (void *)(uintptr_t)(s == TILE_OK);
}

static void *thread_init(void *arg) {
  (void)arg;
  tile_status s = TILE_OK;
  for (int i = 0; i < 50 && s == TILE_OK; i++) {
    tile_devptr p = 0;
    s = tile_init(0);
    if (s == TILE_OK) s = tile_malloc(&p, 4096);
    if (s == TILE_OK) s = tile_free(p);
  }
  return (void *)(uintptr_t)(s == TILE_OK);
}

static void test_gpu_threads(void **state) {
  (void)state;
  NEED_GPU();
  pthread_t t[8];
  for (int i = 0; i < 8; i++) assert_int_equal(pthread_create(&t[i], NULL, thread_init, NULL), 0);
  for (int i = 0; i < 8; i++) {
    void *ok = NULL;
    pthread_join(t[i], &ok);
    assert_true(ok != NULL);
  }
}

static void test_gpu_memory(void **state) {
  (void)state;
  NEED_GPU();
  enum { N = 1000 };
  uint32_t host[N], back[N];
  for (int i = 0; i < N; i++) host[i] = (uint32_t)i * 3u;
  tile_devptr a, b, z;
  assert_int_equal(tile_malloc(&a, sizeof host), TILE_OK);
  assert_int_equal(tile_malloc(&b, sizeof host), TILE_OK);
  assert_int_equal(tile_malloc(&z, 0), TILE_OK);
  assert_int_equal(z, 0);
  assert_int_equal(tile_memcpy_htod(a, host, sizeof host), TILE_OK);
  assert_int_equal(tile_memcpy_dtod(b, a, sizeof host), TILE_OK);
  assert_int_equal(tile_memcpy_dtoh(back, b, sizeof back), TILE_OK);
  assert_memory_equal(host, back, sizeof host);
  assert_int_equal(tile_memset_d32(b, 0xdeadbeef, N), TILE_OK);
  assert_int_equal(tile_memcpy_dtoh(back, b, sizeof back), TILE_OK);
  assert_int_equal(back[N - 1], 0xdeadbeef);
  assert_int_equal(tile_memset_d8(b, 0x11, 4), TILE_OK);
  assert_int_equal(tile_memcpy_dtoh(back, b, 4), TILE_OK);
  assert_int_equal(back[0], 0x11111111);
  assert_int_equal(tile_memset_d32(b + 2, 0, 1), TILE_ERR_INVALID);
  assert_int_equal(tile_synchronize(), TILE_OK);
  assert_int_equal(tile_free(a), TILE_OK);
  assert_int_equal(tile_free(b), TILE_OK);
  assert_int_equal(tile_free(0), TILE_OK);
  /* CUDA errors name the call and CUDA's error. */
  tile_devptr huge;
  assert_int_equal(tile_malloc(&huge, (size_t)1 << 52), TILE_ERR_CUDA);
  fprintf(stderr, "    %s\n", tile_last_error());
  assert_non_null(strstr(tile_last_error(), "cuMemAlloc"));
  assert_non_null(strstr(tile_last_error(), "CUDA_ERROR_"));
  /* Another thread uses the initialised context without tile_init. */
  pthread_t t;
  void *ok = NULL;
  assert_int_equal(pthread_create(&t, NULL, thread_malloc, NULL), 0);
  pthread_join(t, &ok);
  assert_true(ok != NULL);
}

static void test_gpu_launch(void **state) {
  (void)state;
  NEED_GPU();
  size_t size;
  unsigned char *cubin = make_cubin(VADD_META, VADD_PTX, &size);
  NEED_CUBIN(cubin);
  tile_module *m;
  assert_int_equal(tile_module_load_data(cubin, size, &m), TILE_OK);
  free(cubin);
  assert_int_equal(tile_module_num_kernels(m), 3);
  tile_kernel *vadd, *clus, *big;
  assert_int_equal(tile_module_get_kernel(m, "vadd", &vadd), TILE_OK);
  assert_int_equal(tile_module_get_kernel(m, "clus", &clus), TILE_OK);
  assert_int_equal(tile_module_get_kernel(m, "bigsmem", &big), TILE_OK);

  enum { N = 1000 };
  float x[N], y[N], out[N];
  for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = 0.5f * (float)i;
  tile_devptr dx, dy, dout;
  assert_int_equal(tile_malloc(&dx, sizeof x), TILE_OK);
  assert_int_equal(tile_malloc(&dy, sizeof y), TILE_OK);
  assert_int_equal(tile_malloc(&dout, sizeof out + 64), TILE_OK);
  tile_memcpy_htod(dx, x, sizeof x);
  tile_memcpy_htod(dy, y, sizeof y);
  int n = N;
  void *args[] = {&dx, &dy, &dout, &n};

  /* Argument checks. */
  assert_int_equal(tile_launch(vadd, 8, 1, 1, args, 3, NULL), TILE_ERR_INVALID);
  assert_string_equal(tile_last_error(), "kernel 'vadd' takes 4 arguments, got 3");
  tile_devptr bad = dout + 4;
  void *bad_args[] = {&dx, &dy, &bad, &n};
  assert_int_equal(tile_launch(vadd, 8, 1, 1, bad_args, 4, NULL), TILE_ERR_INVALID);
  fprintf(stderr, "    %s\n", tile_last_error());
  assert_non_null(strstr(tile_last_error(), "argument 2 ('out') of kernel 'vadd' is 0x"));
  assert_non_null(strstr(tile_last_error(), "not 16-byte aligned"));
  void *null_args[] = {&dx, NULL, &dout, &n};
  assert_int_equal(tile_launch(vadd, 8, 1, 1, null_args, 4, NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_launch(vadd, 8, 1, 1, NULL, 4, NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_launch(vadd, 0, 1, 1, args, 4, NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_launch(vadd, 1u << 31, 1, 1, args, 4, NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_launch(vadd, 1, 65536, 1, args, 4, NULL), TILE_ERR_INVALID);

  /* A real launch, timed, on a stream. */
  tile_stream st;
  tile_event e0, e1;
  assert_int_equal(tile_stream_create(&st), TILE_OK);
  assert_int_equal(tile_event_create(&e0), TILE_OK);
  assert_int_equal(tile_event_create(&e1), TILE_OK);
  assert_int_equal(tile_event_record(e0, st), TILE_OK);
  assert_int_equal(tile_launch(vadd, (N + 127) / 128, 1, 1, args, 4, st), TILE_OK);
  assert_int_equal(tile_event_record(e1, st), TILE_OK);
  float ms = -1;
  assert_int_equal(tile_event_elapsed_ms(&ms, e0, e1), TILE_OK);
  assert_true(ms >= 0);
  assert_int_equal(tile_stream_synchronize(st), TILE_OK);
  assert_int_equal(tile_memcpy_dtoh(out, dout, sizeof out), TILE_OK);
  for (int i = 0; i < N; i++) assert_true(out[i] == 1.5f * (float)i);
  tile_event_destroy(e0);
  tile_event_destroy(e1);
  assert_int_equal(tile_stream_destroy(st), TILE_OK);

  /* Cluster launch: every block sees a cluster of 2. */
  void *cargs[] = {&dout};
  assert_int_equal(tile_launch(clus, 3, 1, 1, cargs, 1, NULL), TILE_ERR_INVALID);
  assert_non_null(strstr(tile_last_error(), "cluster"));
  assert_int_equal(tile_launch(clus, 8, 1, 1, cargs, 1, NULL), TILE_OK);
  uint32_t sizes[8];
  assert_int_equal(tile_memcpy_dtoh(sizes, dout, sizeof sizes), TILE_OK);
  for (int i = 0; i < 8; i++) assert_int_equal(sizes[i], 2);

  /* More than 48 KiB of dynamic shared memory. */
  assert_int_equal(tile_launch(big, 1, 1, 1, cargs, 1, NULL), TILE_OK);
  assert_int_equal(tile_synchronize(), TILE_OK);
  assert_int_equal(tile_memcpy_dtoh(sizes, dout, 4), TILE_OK);
  assert_int_equal(sizes[0], 4242);

  tile_free(dx);
  tile_free(dy);
  tile_free(dout);
  assert_int_equal(tile_module_unload(m), TILE_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_before_init), /* first: no tile_init yet */
      cmocka_unit_test(test_meta_valid),
      cmocka_unit_test(test_meta_unknown_keyword),
      cmocka_unit_test(test_meta_text_forms),
      cmocka_unit_test(test_meta_version),
      cmocka_unit_test(test_meta_errors),
      cmocka_unit_test(test_meta_derived),
      cmocka_unit_test(test_meta_many),
      cmocka_unit_test(test_status_names),
      cmocka_unit_test(test_invalid_args),
      cmocka_unit_test(test_last_error_per_thread),
      cmocka_unit_test(test_not_a_cubin),
      cmocka_unit_test(test_cubin_find_meta),
      cmocka_unit_test(test_cubin_without_meta),
      cmocka_unit_test(test_cubin_bad_meta),
      cmocka_unit_test(test_module_load_file),
      cmocka_unit_test(test_cubin_truncated),
      cmocka_unit_test(test_cubin_corrupted),
      cmocka_unit_test(test_no_gpu),
      cmocka_unit_test(test_gpu_device),
      cmocka_unit_test(test_gpu_memory),
      cmocka_unit_test(test_gpu_threads),
      cmocka_unit_test(test_gpu_launch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

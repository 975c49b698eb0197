/* test_oracles.c - compiler facts checked against expected values that do
 * not come from the compiler itself:
 *
 *   - the shared-memory swizzle (smem_elem_offset): byte offsets written out
 *     by hand from the PTX ISA's description of the 32/64/128-byte swizzle
 *     modes (the 16-byte chunk index XORed with the row within the repeating
 *     group), and every element of a set of views against CUTLASS's
 *     Swizzle<B, 4, 3> applied to the unswizzled box layout;
 *   - the PTX header: `.version 8.8` and `.target sm_100a` for Blackwell,
 *     at least `.version 8.6` (TMA into .shared::cta) and `.target sm_90a`
 *     for Hopper;
 *   - the shared-memory plan of every shipped kernel (and the golden IR
 *     tests): the smem_alloc / mbarrier_alloc offsets of `--emit=tir`, with
 *     sizes computed here from the types, never overlap, are aligned as TMA
 *     and wgmma need, and fit in the metadata's `smem` and in 227 KB.
 *
 * The PTX-level oracles (masked loads at sizes that are not a multiple of
 * the vector width, ring slot/phase sequences, TMA coordinate order, the
 * swizzle of the emitted addresses) run the emitted PTX in a small
 * simulator: tests/ptx/oracles.sh. */
#include <glob.h>

#include "testutil.h"
#include "tilec_int.h"

/* ---- the swizzle ---------------------------------------------------------- */

static Type smem_view(DType dt, int rows, int cols, int swizzle, int brows) {
  Type t = {0};
  t.kind = TY_SMEM;
  t.elem.dt = (uint8_t)dt;
  t.rank = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.swizzle = swizzle;
  t.brows = brows;
  return t;
}

typedef struct Want {
  DType dt;
  int rows, cols, swizzle, brows;
  int r, c;
  int64_t off;
} Want;

/* Worked by hand (eb = element bytes, S = swizzle bytes = row bytes of one
 * block): the unswizzled byte is r*S + c*eb (plus a column block's
 * brows*S); its 16-byte chunk (byte / 16 within the row) is XORed with
 *   128B: r % 8          (rows of 128 bytes, the pattern repeats every 1024)
 *   64B:  (r / 2) % 4    (rows of 64 bytes: two rows per 128 bytes)
 *   32B:  (r / 4) % 2    (rows of 32 bytes: four rows per 128 bytes)  */
static const Want HAND[] = {
    /* bf16 [64, 64], 128B: row = 128 bytes, 8 chunks of 8 elements */
    {DT_BF16, 64, 64, 128, 0, 0, 0, 0},
    {DT_BF16, 64, 64, 128, 0, 0, 8, 16},     /* chunk 1 ^ 0 */
    {DT_BF16, 64, 64, 128, 0, 1, 0, 144},    /* 128 + (0 ^ 1) * 16 */
    {DT_BF16, 64, 64, 128, 0, 1, 8, 128},    /* 128 + (1 ^ 1) * 16 */
    {DT_BF16, 64, 64, 128, 0, 3, 8, 416},    /* 384 + (1 ^ 3) * 16 */
    {DT_BF16, 64, 64, 128, 0, 7, 63, 910},   /* 896 + (7 ^ 7) * 16 + 14 */
    {DT_BF16, 64, 64, 128, 0, 8, 0, 1024},   /* row 8: the pattern starts again */
    {DT_BF16, 64, 64, 128, 0, 9, 17, 1202},  /* 1152 + (2 ^ 1) * 16 + 2 */
    {DT_BF16, 64, 64, 128, 0, 13, 42, 1668}, /* 1664 + (5 ^ 5) * 16 + 4 */
    /* bf16 [32, 32], 64B: row = 64 bytes, 4 chunks */
    {DT_BF16, 32, 32, 64, 0, 1, 0, 64},   /* (1 / 2) % 4 = 0 */
    {DT_BF16, 32, 32, 64, 0, 2, 0, 144},  /* 128 + (0 ^ 1) * 16 */
    {DT_BF16, 32, 32, 64, 0, 2, 8, 128},  /* 128 + (1 ^ 1) * 16 */
    {DT_BF16, 32, 32, 64, 0, 5, 13, 378}, /* 320 + (1 ^ 2) * 16 + 10 */
    {DT_BF16, 32, 32, 64, 0, 7, 31, 462}, /* 448 + (3 ^ 3) * 16 + 14 */
    {DT_BF16, 32, 32, 64, 0, 8, 0, 512},  /* (8 / 2) % 4 = 0 */
    {DT_BF16, 32, 32, 64, 0, 15, 0, 1008}, /* 960 + (0 ^ 3) * 16 */
    /* f32 [16, 8], 32B: row = 32 bytes, 2 chunks of 4 elements */
    {DT_F32, 16, 8, 32, 0, 3, 5, 116}, /* (3 / 4) % 2 = 0: 96 + 20 */
    {DT_F32, 16, 8, 32, 0, 4, 0, 144}, /* 128 + (0 ^ 1) * 16 */
    {DT_F32, 16, 8, 32, 0, 4, 4, 128}, /* 128 + (1 ^ 1) * 16 */
    {DT_F32, 16, 8, 32, 0, 6, 6, 200}, /* 192 + (1 ^ 1) * 16 + 8 */
    {DT_F32, 16, 8, 32, 0, 8, 1, 260}, /* (8 / 4) % 2 = 0 */
    /* several column blocks: bf16 [64, 128], 128B: block 1 starts 64 * 128 bytes in */
    {DT_BF16, 64, 128, 128, 0, 3, 70, 8636}, /* 8192 + 384 + (0 ^ 3) * 16 + 12 */
    /* a row slice of a 128-row allocation: block 1 starts 128 * 128 bytes in */
    {DT_BF16, 64, 128, 128, 128, 3, 70, 16828},
    /* f32 [32, 64], 128B: 32 elements per block, block 1 at 32 * 128 */
    {DT_F32, 32, 64, 128, 0, 5, 40, 4848}, /* 4096 + 640 + (2 ^ 5) * 16 */
    /* unswizzled: plain row-major */
    {DT_F32, 4, 12, 0, 0, 2, 5, 116},
    {DT_I32, 2, 8, 0, 0, 1, 7, 60},
};

static void test_swizzle_hand_values(void **state) {
  (void)state;
  int bad = 0;
  for (size_t i = 0; i < sizeof HAND / sizeof HAND[0]; i++) {
    const Want *w = &HAND[i];
    Type t = smem_view(w->dt, w->rows, w->cols, w->swizzle, w->brows);
    int64_t got = smem_elem_offset(&t, w->r, w->c);
    if (got != w->off) {
      print_error("smem_elem_offset(%s [%d, %d] swizzle %d brows %d, (%d, %d)) = %lld, want %lld\n",
                  w->dt == DT_F32 ? "f32" : w->dt == DT_I32 ? "i32" : "bf16", w->rows, w->cols, w->swizzle, w->brows,
                  w->r, w->c, (long long)got, (long long)w->off);
      bad++;
    }
  }
  assert_int_equal(bad, 0);
}

/* CUTLASS's Swizzle<B, M, S> (cute/swizzle.hpp): the B bits above bit M + S
 * are XORed into the B bits above bit M. TMA's 32/64/128-byte modes are
 * B = 1, 2, 3 with M = 4 (16-byte units), S = 3 (rows of 128 bytes). */
static int64_t cutlass_swizzle(int64_t off, int B, int M, int S) {
  int64_t yyy = ((1LL << B) - 1) << (M + S);
  return off ^ ((off & yyy) >> S);
}

/* The unswizzled position of (r, c) in what TMA writes: boxes of `S` bytes
 * of row, each box `block_rows` rows high, side by side. */
static int64_t box_offset(int eb, int S, int block_rows, int r, int c) {
  int per = S / eb;
  return (int64_t)(c / per) * block_rows * S + (int64_t)r * S + (int64_t)(c % per) * eb;
}

static void check_view_cutlass(DType dt, int eb, int rows, int cols, int swizzle, int brows) {
  Type t = smem_view(dt, rows, cols, swizzle, brows);
  int B = swizzle == 128 ? 3 : swizzle == 64 ? 2 : 1;
  int block_rows = brows ? brows : rows;
  int bad = 0;
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) {
      int64_t want = cutlass_swizzle(box_offset(eb, swizzle, block_rows, r, c), B, 4, 3);
      int64_t got = smem_elem_offset(&t, r, c);
      if (got != want && bad++ < 5)
        print_error("[%d, %d] eb %d swizzle %d brows %d: (%d, %d) at %lld, Swizzle<%d,4,3> says %lld\n", rows, cols,
                    eb, swizzle, brows, r, c, (long long)got, B, (long long)want);
    }
  assert_int_equal(bad, 0);
}

static void test_swizzle_cutlass(void **state) {
  (void)state;
  static const int sws[] = {32, 64, 128};
  for (int i = 0; i < 3; i++) {
    int S = sws[i];
    check_view_cutlass(DT_BF16, 2, 64, S / 2, S, 0);      /* one block wide */
    check_view_cutlass(DT_F32, 4, 32, S / 4, S, 0);
    check_view_cutlass(DT_I8, 1, 16, S, S, 0);
    check_view_cutlass(DT_BF16, 2, 64, 2 * S / 2, S, 0);  /* two blocks */
    check_view_cutlass(DT_F32, 4, 16, 4 * S / 4, S, 0);   /* four blocks */
    check_view_cutlass(DT_BF16, 2, 160, S / 2, S, 0);     /* 160 rows (a KV slot) */
  }
  check_view_cutlass(DT_BF16, 2, 64, 128, 128, 128); /* row slice of a 128-row allocation */
  check_view_cutlass(DT_BF16, 2, 64, 256, 128, 0);
}

/* ---- the PTX header ----------------------------------------------------- */

static char *compile_text(const char *path, const char *arch, tilec_emit emit, const tilec_define *defs, int ndefs,
                          char **meta) {
  tilec_options o;
  tilec_options_init(&o);
  o.arch = arch;
  o.emit = emit;
  o.defines = defs;
  o.ndefines = ndefs;
  tilec_result *r = NULL;
  tilec_status st = tilec_compile_file(path, &o, &r);
  if (st != TILEC_OK) {
    print_error("%s (%s): tilec status %d\n%s\n", path, arch, st, r ? tilec_result_diagnostics(r) : "");
    tilec_result_free(r);
    fail();
  }
  size_t len = 0;
  char *out = strdup((const char *)tilec_result_output(r, &len));
  if (meta) {
    const char *m = tilec_result_metadata(r);
    *meta = m ? strdup(m) : NULL;
  }
  tilec_result_free(r);
  return out;
}

/* The first line starting with `key`; its rest in buf. */
static int line_after(const char *text, const char *key, char *buf, size_t cap) {
  size_t k = strlen(key);
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    if (!strncmp(p, key, k)) {
      size_t n = strcspn(p + k, "\n");
      if (n >= cap) n = cap - 1;
      memcpy(buf, p + k, n);
      buf[n] = 0;
      return 1;
    }
  return 0;
}

static void check_header(const char *path, const char *arch, int min_version, int max_version) {
  char *ptx = compile_text(path, arch, TILEC_EMIT_PTX, NULL, 0, NULL);
  char v[64], t[64];
  if (!line_after(ptx, ".version ", v, sizeof v) || !line_after(ptx, ".target ", t, sizeof t)) {
    print_error("%s (%s): no .version or .target line\n", path, arch);
    free(ptx);
    fail();
  }
  int maj = 0, min = 0;
  int ok = sscanf(v, "%d.%d", &maj, &min) == 2;
  int ver = maj * 10 + min;
  if (!ok || ver < min_version || ver > max_version) {
    print_error("%s (%s): .version %s; want %d.%d to %d.%d\n", path, arch, v, min_version / 10, min_version % 10,
                max_version / 10, max_version % 10);
    free(ptx);
    fail();
  }
  if (strcmp(t, arch) != 0) {
    print_error("%s (%s): .target %s\n", path, arch, t);
    free(ptx);
    fail();
  }
  free(ptx);
}

/* sm_100a needs PTX ISA 8.8 (what the backend asks LLVM for; CUDA 13's
 * ptxas reads up to 9.0); sm_90a at least 8.6, which TMA into
 * .shared::cta (isCTAOnly) needs. */
static void test_ptx_version_target(void **state) {
  (void)state;
  check_header(TILE_SRC_DIR "/examples/vector_add/vector_add.tile", "sm_100a", 88, 88);
  check_header(TILE_SRC_DIR "/examples/softmax/softmax.tile", "sm_100a", 88, 88);
  check_header(TILE_SRC_DIR "/examples/jagged_attention/jfa_combine.tile", "sm_100a", 88, 88);
  check_header(TILE_SRC_DIR "/examples/vector_add/vector_add.tile", "sm_90a", 86, 90);
  check_header(TILE_SRC_DIR "/examples/gemm/gemm.tile", "sm_90a", 86, 90);
}

/* ---- the shared-memory plan ------------------------------------------- */

#define SMEM_LIMIT (227 * 1024)

typedef struct Alloc {
  int64_t off, end; /* [off, end): the bytes its slots use */
  int align;        /* what its offset must be a multiple of */
  char what[160];
} Alloc;

static int dtype_bytes(const char *d) {
  if (!strcmp(d, "f64") || !strcmp(d, "i64") || !strcmp(d, "u64")) return 8;
  if (!strcmp(d, "f32") || !strcmp(d, "i32") || !strcmp(d, "u32")) return 4;
  if (!strcmp(d, "bf16") || !strcmp(d, "f16") || !strcmp(d, "i16") || !strcmp(d, "u16")) return 2;
  if (!strcmp(d, "i8") || !strcmp(d, "u8") || !strcmp(d, "bool")) return 1;
  return 0;
}

static int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

/* One TIR line: an smem_alloc or mbarrier_alloc, as an Alloc (1), or not
 * one (0). Slots, per docs/language.md: swizzled ones 1024-byte aligned,
 * unswizzled ones 128-byte aligned (a TMA box), mbarriers 8 bytes each. */
static int parse_alloc(const char *line, Alloc *a) {
  const char *p;
  long long off;
  memset(a, 0, sizeof *a);
  if ((p = strstr(line, "smem_alloc offset="))) {
    char dt[16];
    int rows, cols, nbuf = 1, sw = 0, target, alias = 0;
    int got = sscanf(p, "smem_alloc offset=%lld : smem<%15[^,], [%d, %d] x %d", &off, dt, &rows, &cols, &nbuf);
    if (got < 4) { /* on another allocation's bytes (pipeline.c's staging of C): "offset=N %V : ..." */
      got = sscanf(p, "smem_alloc offset=%lld %%%d : smem<%15[^,], [%d, %d] x %d", &off, &target, dt, &rows, &cols,
                   &nbuf);
      alias = 1;
      got -= 1;
    }
    if (got < 4) {
      print_error("cannot parse: %s\n", line);
      fail();
    }
    const char *s = strstr(p, "swizzle ");
    if (s && s < strchr(p, '>')) sw = atoi(s + 8);
    int eb = dtype_bytes(dt);
    assert_true(eb > 0);
    int64_t bytes = (int64_t)rows * cols * eb, stride = round_up(bytes, sw ? 1024 : 128);
    a->off = off;
    a->end = off + (nbuf - 1) * stride + bytes;
    a->align = sw ? 1024 : 128;
    snprintf(a->what, sizeof a->what, "smem<%s, [%d, %d] x %d, swizzle %d> at %lld%s", dt, rows, cols, nbuf, sw, off,
             alias ? " (alias)" : "");
    return alias ? 2 : 1;
  }
  if ((p = strstr(line, "mbarrier_alloc offset="))) {
    int arrive, n = 1;
    if (sscanf(p, "mbarrier_alloc offset=%lld arrive=%d : mbarrier[%d]", &off, &arrive, &n) < 2) {
      print_error("cannot parse: %s\n", line);
      fail();
    }
    a->off = off;
    a->end = off + 8LL * n;
    a->align = 8;
    snprintf(a->what, sizeof a->what, "mbarrier[%d] at %lld", n, off);
    return 1;
  }
  return 0;
}

/* The `smem N` of kernel `name` in the metadata, or -1. */
static int64_t meta_smem(const char *meta, const char *name) {
  char key[160];
  snprintf(key, sizeof key, "kernel %s\n", name);
  const char *k = strstr(meta, key);
  if (!k) return -1;
  const char *s = strstr(k, "\nsmem ");
  const char *e = strstr(k, "\nend");
  if (!s || (e && s > e)) return -1;
  return atoll(s + 6);
}

/* Check one kernel's allocations; returns the number of problems (printed
 * unless quiet). */
static int quiet;
#define complain(...) (quiet ? (void)0 : print_error(__VA_ARGS__))
static int check_allocs(const char *cfg, const char *kname, Alloc *a, int n, int64_t smem) {
  int bad = 0;
  for (int i = 0; i < n; i++) {
    if (a[i].off % a[i].align) {
      complain("%s: kernel %s: %s is not %d-byte aligned\n", cfg, kname, a[i].what, a[i].align);
      bad++;
    }
    if (a[i].end > SMEM_LIMIT) {
      complain("%s: kernel %s: %s ends at %lld, past 227 KB\n", cfg, kname, a[i].what, (long long)a[i].end);
      bad++;
    }
    if (smem >= 0 && a[i].end > smem) {
      complain("%s: kernel %s: %s ends at %lld, past the metadata's smem %lld\n", cfg, kname, a[i].what,
                  (long long)a[i].end, (long long)smem);
      bad++;
    }
    for (int j = 0; j < i; j++)
      if (a[i].off < a[j].end && a[j].off < a[i].end) {
        complain("%s: kernel %s: %s overlaps %s (ends at %lld)\n", cfg, kname, a[i].what, a[j].what,
                    (long long)a[j].end);
        bad++;
      }
  }
  if (smem > SMEM_LIMIT) {
    complain("%s: kernel %s: metadata smem %lld > 227 KB\n", cfg, kname, (long long)smem);
    bad++;
  }
  return bad;
}

/* The target a program is built for: sm_100a when it says so in the
 * flags file beside it (a golden IR test's NAME.flags) or its name ends in
 * _sm100.tile (examples/gemm/gemm_sm100.tile), else sm_90a. */
static const char *arch_of(const char *path) {
  size_t n = strlen(path);
  if (n > 11 && !strcmp(path + n - 11, "_sm100.tile")) return "sm_100a";
  char fl[600];
  snprintf(fl, sizeof fl, "%.*s.flags", (int)(n > 5 ? n - 5 : n), path);
  char *f = tu_read_file(fl, NULL);
  const char *arch = f && strstr(f, "--arch=sm_100a") ? "sm_100a" : "sm_90a";
  free(f);
  return arch;
}

/* Compile (TIR and metadata) and check every kernel of the file. Returns
 * the number of allocations seen. */
static int check_plan(const char *path, const tilec_define *defs, int ndefs) {
  char cfg[600];
  const char *arch = arch_of(path);
  int n = snprintf(cfg, sizeof cfg, "%s", path);
  for (int i = 0; i < ndefs && n < (int)sizeof cfg; i++)
    n += snprintf(cfg + n, sizeof cfg - (size_t)n, " -D %s=%s", defs[i].name, defs[i].value);
  char *tir = compile_text(path, arch, TILEC_EMIT_TIR, defs, ndefs, NULL);
  char *meta = NULL;
  char *mlir = compile_text(path, arch, TILEC_EMIT_MLIR, defs, ndefs, &meta);
  free(mlir);
  assert_non_null(meta);
  Alloc a[64];
  int na = 0, total = 0, bad = 0;
  char kname[128] = "";
  for (char *line = strtok(tir, "\n");; line = strtok(NULL, "\n")) {
    if (!line || !strncmp(line, "kernel @", 8)) { /* a kernel ends */
      if (kname[0]) bad += check_allocs(cfg, kname, a, na, meta_smem(meta, kname));
      if (!line) break;
      sscanf(line, "kernel @%127[^(]", kname);
      na = 0;
      continue;
    }
    Alloc x;
    int kind = parse_alloc(line, &x);
    if (kind == 1) {
      assert_true(na < 64);
      a[na++] = x;
      total++;
    } else if (kind == 2) { /* an alias lies within an allocation of the same kernel (declared before it) */
      int inside = 0;
      for (int i = 0; i < na; i++) inside |= x.off >= a[i].off && x.end <= a[i].end && x.off % x.align == 0;
      if (!inside) {
        print_error("%s: %s is not within an allocation\n", cfg, x.what);
        bad++;
      }
      total++;
    }
  }
  free(tir);
  free(meta);
  assert_int_equal(bad, 0);
  return total;
}

#define DEF(n, v) {n, v}
#define CHECK_PLAN(path, ...)                                                        \
  do {                                                                               \
    static const tilec_define defs_[] = {__VA_ARGS__};                               \
    total += check_plan(TILE_SRC_DIR "/" path, defs_, sizeof defs_ / sizeof defs_[0]); \
  } while (0)

static void test_smem_plan_shipped(void **state) {
  (void)state;
  int total = 0;
  total += check_plan(TILE_SRC_DIR "/examples/gemm/gemm.tile", NULL, 0);
  CHECK_PLAN("examples/gemm/gemm.tile", DEF("STAGES", "3"));
  total += check_plan(TILE_SRC_DIR "/examples/gemm/gemm_simple.tile", NULL, 0);
  total += check_plan(TILE_SRC_DIR "/examples/gemm/gemm_sm100.tile", NULL, 0); /* sm_100a: TMEM's word first */
  /* JFA forward: the source's defaults are the shipped kernels */
  CHECK_PLAN("examples/jagged_attention/jfa_fwd.tile", DEF("D", "64"));
  CHECK_PLAN("examples/jagged_attention/jfa_fwd.tile", DEF("D", "128"));
  CHECK_PLAN("examples/jagged_attention/jfa_fwd.tile", DEF("D", "128"), DEF("CAUSAL", "true"));
  CHECK_PLAN("examples/jagged_attention/jfa_fwd.tile", DEF("D", "64"), DEF("BCAST", "true"));
  CHECK_PLAN("examples/jagged_attention/jfa_fwd.tile", DEF("D", "64"), DEF("STAGES", "3"));
  /* JFA backward and its small kernels */
  CHECK_PLAN("examples/jagged_attention/jfa_bwd.tile", DEF("D", "64"));
  CHECK_PLAN("examples/jagged_attention/jfa_bwd.tile", DEF("D", "128"));
  CHECK_PLAN("examples/jagged_attention/jfa_bwd.tile", DEF("D", "128"), DEF("DET", "true"), DEF("BCAST", "true"));
  CHECK_PLAN("examples/jagged_attention/jfa_bwd.tile", DEF("D", "64"), DEF("DS_BF16", "true"));
  CHECK_PLAN("examples/jagged_attention/jfa_bwd.tile", DEF("D", "128"), DEF("DQ_ATOMIC", "true"));
  CHECK_PLAN("examples/jagged_attention/jfa_combine.tile", DEF("D", "128"));
  total += check_plan(TILE_SRC_DIR "/examples/jagged_attention/jfa_bwd_pre.tile", NULL, 0);
  static const char *plain[] = {"vector_add", "softmax", "layernorm", "matmul"};
  for (int i = 0; i < 4; i++) {
    char p[512];
    snprintf(p, sizeof p, TILE_SRC_DIR "/examples/%s/%s.tile", plain[i], plain[i]);
    total += check_plan(p, NULL, 0);
  }
  /* the golden IR tests (several allocate rings and mbarriers) */
  glob_t g;
  assert_int_equal(glob(TILE_SRC_DIR "/tests/golden/ir/*.tile", 0, NULL, &g), 0);
  for (size_t i = 0; i < g.gl_pathc; i++) total += check_plan(g.gl_pathv[i], NULL, 0);
  globfree(&g);
  /* the test saw the allocations (not a parser that matches nothing) */
  print_message("%d allocations checked\n", total);
  if (total < 40) {
    print_error("only %d allocations seen in --emit=tir of the shipped kernels\n", total);
    fail();
  }
}

/* The checker itself: an overlap and a misaligned ring are caught. */
static void test_smem_plan_checker(void **state) {
  (void)state;
  Alloc a[3];
  assert_int_equal(parse_alloc("  %6 = smem_alloc offset=1024 : smem<bf16, [128, 64] x 4, swizzle 128>  @36:15", &a[0]), 1);
  assert_int_equal(a[0].end, 1024 + 4 * 16384);
  assert_int_equal(parse_alloc("  %9 = mbarrier_alloc offset=0 arrive=1 : mbarrier[4]  @39:16", &a[1]), 1);
  assert_int_equal(a[1].end, 32);
  assert_int_equal(parse_alloc("  %8 = smem_alloc offset=128 : smem<f32, [1, 64] x 2>  @1:1", &a[2]), 1);
  assert_int_equal(a[2].end, 128 + 256 + 256);
  Alloc al;
  assert_int_equal(parse_alloc("  %12 = smem_alloc offset=1024 %6 : smem<bf16, [128, 256], swizzle 128>  @1:1", &al), 2);
  assert_int_equal(al.off, 1024);
  assert_int_equal(al.end, 1024 + 65536);
  assert_int_equal(check_allocs("self-test", "k", a, 3, 100000), 0);
  a[2].off = 24; /* overlaps the mbarriers, and not 128-aligned */
  a[2].end = 24 + 512;
  quiet = 1;
  assert_int_equal(check_allocs("self-test", "k", a, 3, 100000), 2);
  a[2].off = 66560; /* after the ring, but past 227 KB (and so is the metadata's smem) */
  a[2].end = SMEM_LIMIT + 8;
  assert_int_equal(check_allocs("self-test", "k", a, 3, 300000), 2);
  quiet = 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_swizzle_hand_values),
      cmocka_unit_test(test_swizzle_cutlass),
      cmocka_unit_test(test_ptx_version_target),
      cmocka_unit_test(test_smem_plan_checker),
      cmocka_unit_test(test_smem_plan_shipped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* jit.c - tile_jit_*: compile Tile source in process with libtilec, keeping
 * the cubins in the on-disk cache of cache.c.
 *
 * The cache key is the SHA-256 of a sequence of length-prefixed fields (each
 * field: its length as 8 bytes little endian, then its bytes):
 *
 *   "tile-jit-key-3"                 format tag (bump when this list or the entry changes)
 *   tilec_version()
 *   tilec_assembler_version()        "ptxas 13.0.88", ...
 *   arch                             opts->arch or the device's ("sm_90a")
 *   "O<n>"                           optimisation level
 *   "emit=<cubin|ptx> line_info=<0|1> nvjitlink=<0|1> tree_reductions=<0|1>
 *    no_stmatrix=<0|1> embed_ptx=<0|1> no_tma_rings=<0|1>
 *    tma_rings_all=<0|1> no_smem_home=<0|1>"  (one field; ptx: tile_jit_load
 *                                    on the emulator, the assembler "none (PTX)")
 *   "include_dirs=<n>", then each    the -I folders, in the caller's order
 *   "defines=<n>"                    then, sorted by name (ties keep the
 *   name, value                      caller's order), two fields per define
 *   filename                         it lands in the cubin's line table
 *   source bytes
 *
 * Imported files are not in the key (they are only known once compiled): an
 * entry's payload is a manifest of the files `import` read, each with the
 * SHA-256 of the text compiled, followed by the cubin.  A hit whose imported
 * files no longer hash the same is a miss: recompiled and stored again.
 *   "TJDEPS01" | u32 count | count x (u32 path length | path | SHA-256[32]) | cubin
 * where, for the emulator (emit=ptx), the cubin's place holds
 *   "TJPTX001" | u32 metadata length | metadata text | PTX text
 *
 * With tile_jit_options.stats, the compiler's report (tilec --stats) comes
 * back in tile_jit_stats.report. It describes a compile, so such a call
 * compiles even when the cache holds the entry (and stores it as a miss
 * would): the cubin is the same either way.
 *
 * Errors go through tile_set_error into tile_last_error() (the runtime's
 * public interface: libtilejit.so needs nothing that libtilert.so hides).
 * A broken cache never fails a compile: lookup errors count as misses and
 * failing stores are ignored (TILE_JIT_VERBOSE=1 prints them to stderr).
 *
 * An entry can pass every check of cache.c (its checksum is that of the bytes
 * stored) and still hold a cubin that does not load: written by a buggy or
 * interrupted compiler, or planted.  tile_jit_load evicts such an entry when
 * its cubin is rejected (bad ELF or metadata, or cuModuleLoadData refusing
 * the image) and compiles once more; if the fresh cubin does not load either,
 * that error is returned.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "jit_int.h"
#include "tile/runtime.h"
#include "tile/tilec.h"

#define JIT_KEY_TAG "tile-jit-key-3"
#define DEPS_MAGIC "TJDEPS01"
#define PTX_MAGIC "TJPTX001"
#define JIT_PATH_MAX 4096

/* Everything one compile request needs, derived from the caller's options. */
typedef struct jit_req {
  const char *filename;
  const char *source;
  size_t len;
  const tile_jit_options *opts; /* never NULL (defaults when the caller passed NULL) */
  char arch[64];
  int opt_level;
  tilec_define *cdefs;         /* caller's order, for the compiler */
  const tile_jit_define **sorted; /* sorted by name, for the key */
  tilec_options copts;
  char asm_version[256];
  int asm_known;               /* 0: assembler not found; no store then */
  int ptx;                     /* tile_jit_load on the emulator: PTX and metadata, no assembler */
} jit_req;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tj_verbose(const char *fmt, ...) {
  const char *v = getenv("TILE_JIT_VERBOSE");
  if (!v || !*v || !strcmp(v, "0")) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("tile-jit: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* ---- request preparation ---------------------------------------------- */

static tile_status check_args(const char *source, size_t len, const tile_jit_options *o) {
  if (!source && len) return tile_set_error(TILE_ERR_INVALID, "tile_jit: source is NULL");
  if (o->ndefines < 0 || (o->ndefines > 0 && !o->defines))
    return tile_set_error(TILE_ERR_INVALID, "tile_jit: %d defines but no array", o->ndefines);
  for (int i = 0; i < o->ndefines; i++)
    if (!o->defines[i].name || !o->defines[i].name[0] || !o->defines[i].value)
      return tile_set_error(TILE_ERR_INVALID, "tile_jit: define %d has no name or no value", i);
  if (o->opt_level < TILE_JIT_O0 || o->opt_level > 3)
    return tile_set_error(TILE_ERR_INVALID, "tile_jit: opt_level %d is not in 1..3, 0 (default) or TILE_JIT_O0",
                          o->opt_level);
  if (o->ninclude_dirs < 0 || (o->ninclude_dirs > 0 && !o->include_dirs))
    return tile_set_error(TILE_ERR_INVALID, "tile_jit: %d include_dirs but no array", o->ninclude_dirs);
  for (int i = 0; i < o->ninclude_dirs; i++)
    if (!o->include_dirs[i] || !o->include_dirs[i][0])
      return tile_set_error(TILE_ERR_INVALID, "tile_jit: include_dirs[%d] is NULL or empty", i);
  if (o->max_errors < 0)
    return tile_set_error(TILE_ERR_INVALID, "tile_jit: max_errors %d is negative (0 = default)", o->max_errors);
  if (o->ptxas && !o->ptxas[0]) return tile_set_error(TILE_ERR_INVALID, "tile_jit: ptxas is an empty path");
  return TILE_OK;
}

static tile_status resolve_arch(const tile_jit_options *o, char *buf, size_t cap) {
  if (!o->arch) return tile_device_arch(buf, cap); /* sets the message on failure */
  if (!o->arch[0] || strlen(o->arch) >= cap)
    return tile_set_error(TILE_ERR_INVALID, "tile_jit: bad arch '%.80s'", o->arch);
  memcpy(buf, o->arch, strlen(o->arch) + 1);
  return TILE_OK;
}

/* qsort comparator over define pointers: by name, then array position (the
 * pointers point into one array, so their order is the caller's order). */
static int cmp_define(const void *a, const void *b) {
  const tile_jit_define *x = *(const tile_jit_define *const *)a;
  const tile_jit_define *y = *(const tile_jit_define *const *)b;
  int c = strcmp(x->name, y->name);
  if (c) return c;
  return x < y ? -1 : x > y;
}

static tile_status copy_defines(jit_req *q) {
  int n = q->opts->ndefines;
  if (n == 0) return TILE_OK;
  q->cdefs = calloc((size_t)n, sizeof *q->cdefs);
  q->sorted = calloc((size_t)n, sizeof *q->sorted);
  if (!q->cdefs || !q->sorted) return tile_set_error(TILE_ERR_NOMEM, "tile_jit: out of memory");
  for (int i = 0; i < n; i++) {
    q->cdefs[i].name = q->opts->defines[i].name;
    q->cdefs[i].value = q->opts->defines[i].value;
    q->sorted[i] = &q->opts->defines[i];
  }
  qsort(q->sorted, (size_t)n, sizeof *q->sorted, cmp_define);
  return TILE_OK;
}

static void req_free(jit_req *q) {
  free(q->cdefs);
  free(q->sorted);
}

/* Validate, resolve the arch, build the compiler options. ptx: compile to
 * PTX for the emulator (see jit_load). */
static tile_status req_init(jit_req *q, const char *filename, const char *source, size_t len,
                            const tile_jit_options *opts, int ptx) {
  static const tile_jit_options defaults;
  memset(q, 0, sizeof *q);
  q->opts = opts ? opts : &defaults;
  q->filename = filename && *filename ? filename : "<jit>";
  q->source = source ? source : "";
  q->len = len;
  tile_status s = check_args(source, len, q->opts);
  if (s == TILE_OK) s = resolve_arch(q->opts, q->arch, sizeof q->arch);
  if (s == TILE_OK) s = copy_defines(q);
  if (s != TILE_OK) return s;
  q->opt_level = q->opts->opt_level == TILE_JIT_O0 ? 0 : q->opts->opt_level ? q->opts->opt_level : 3;
  tilec_options_init(&q->copts);
  q->copts.arch = q->arch;
  q->copts.emit = TILEC_EMIT_CUBIN;
  q->copts.defines = q->cdefs;
  q->copts.ndefines = q->opts->ndefines;
  q->copts.opt_level = q->opt_level;
  q->copts.include_dirs = q->opts->include_dirs;
  q->copts.ninclude_dirs = q->opts->ninclude_dirs;
  q->copts.line_info = !q->opts->no_line_info;
  q->copts.tree_reductions = !!q->opts->tree_reductions;
  q->copts.no_stmatrix = !!q->opts->no_stmatrix;
  q->copts.no_tma_rings = !!q->opts->no_tma_rings;
  q->copts.tma_rings_all = !!q->opts->tma_rings_all;
  q->copts.no_smem_home = !!q->opts->no_smem_home;
  q->copts.no_wide_stores = !!q->opts->no_wide_stores;
  q->copts.embed_ptx = !!q->opts->embed_ptx;
  q->copts.use_nvjitlink = !!q->opts->use_nvjitlink;
  q->copts.ptxas = q->opts->ptxas;
  if (q->opts->max_errors) q->copts.max_errors = q->opts->max_errors;
  q->ptx = ptx;
  if (ptx) { /* PTX depends on no assembler */
    q->copts.emit = TILEC_EMIT_PTX;
    q->asm_known = 1;
    snprintf(q->asm_version, sizeof q->asm_version, "none (PTX)");
    return TILE_OK;
  }
  q->asm_known = tilec_assembler_version(&q->copts, q->asm_version, sizeof q->asm_version) == 0;
  if (!q->asm_known) snprintf(q->asm_version, sizeof q->asm_version, "unknown");
  return TILE_OK;
}

/* ---- key ------------------------------------------------------------------ */

static void key_field(tc_sha256_ctx *c, const void *data, size_t n) {
  uint8_t len[8];
  for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)n >> (8 * i));
  tc_sha256_update(c, len, sizeof len);
  tc_sha256_update(c, data, n);
}

static void key_str(tc_sha256_ctx *c, const char *s) { key_field(c, s, strlen(s)); }

static void compute_key(const jit_req *q, char hex[TC_SHA256_HEX_SIZE]) {
  char tmp[256];
  tc_sha256_ctx c;
  tc_sha256_init(&c);
  key_str(&c, JIT_KEY_TAG);
  key_str(&c, tilec_version());
  key_str(&c, q->asm_version);
  key_str(&c, q->arch);
  snprintf(tmp, sizeof tmp, "O%d", q->opt_level);
  key_str(&c, tmp);
  snprintf(tmp, sizeof tmp,
           "emit=%s line_info=%d nvjitlink=%d tree_reductions=%d no_stmatrix=%d embed_ptx=%d no_tma_rings=%d "
           "tma_rings_all=%d no_smem_home=%d no_wide_stores=%d",
           q->ptx ? "ptx" : "cubin", q->copts.line_info, q->copts.use_nvjitlink, q->copts.tree_reductions, q->copts.no_stmatrix,
           q->copts.embed_ptx, q->copts.no_tma_rings, q->copts.tma_rings_all,
           q->copts.no_smem_home, q->copts.no_wide_stores);
  key_str(&c, tmp);
  snprintf(tmp, sizeof tmp, "include_dirs=%d", q->copts.ninclude_dirs);
  key_str(&c, tmp);
  for (int i = 0; i < q->copts.ninclude_dirs; i++) key_str(&c, q->copts.include_dirs[i]);
  snprintf(tmp, sizeof tmp, "defines=%d", q->opts->ndefines);
  key_str(&c, tmp);
  for (int i = 0; i < q->opts->ndefines; i++) {
    key_str(&c, q->sorted[i]->name);
    key_str(&c, q->sorted[i]->value);
  }
  key_str(&c, q->filename);
  key_field(&c, q->source, q->len);
  uint8_t digest[TC_SHA256_SIZE];
  tc_sha256_final(&c, digest);
  tc_hex(digest, sizeof digest, hex);
}

tile_status tj_key(const char *filename, const char *source, size_t len, const tile_jit_options *opts, int ptx,
                   char hex[TC_SHA256_HEX_SIZE], int *storable) {
  jit_req q;
  tile_status s = req_init(&q, filename, source, len, opts, ptx);
  if (s == TILE_OK) compute_key(&q, hex);
  *storable = s == TILE_OK && q.asm_known;
  req_free(&q);
  return s;
}

/* ---- compile ----------------------------------------------------------------- */

static tile_status compile_fail(const jit_req *q, tilec_status st, const tilec_result *r) {
  const char *diag = r ? tilec_result_diagnostics(r) : NULL;
  if (diag && *diag) return tile_set_error(TILE_ERR_COMPILE, "%s", diag);
  return tile_set_error(TILE_ERR_COMPILE, "%s: error: compilation failed (tilec status %d)", q->filename,
                 (int)st);
}

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Run the compiler; on success *entry is a malloc'ed cache payload (the
 * manifest of imported files, then the cubin) and the cubin is
 * entry[*off .. *off + *size). */
static tile_status run_compiler(const jit_req *q, uint8_t **entry, size_t *off, size_t *size, char **report) {
  tilec_result *r = NULL;
  tilec_status st = tilec_compile(q->filename, q->source, q->len, &q->copts, &r);
  if (!r) return tile_set_error(TILE_ERR_NOMEM, "tile_jit: out of memory in the compiler");
  const char *rep = q->opts->stats ? tilec_result_stats(r) : NULL;
  if (rep && report && !(*report = strdup(rep))) {
    tilec_result_free(r);
    return tile_set_error(TILE_ERR_NOMEM, "tile_jit: out of memory (the compile report)");
  }
  if (st == TILEC_OK) st = tilec_result_status(r);
  if (st != TILEC_OK) {
    tile_status s = compile_fail(q, st, r);
    tilec_result_free(r);
    return s;
  }
  size_t n = 0;
  const void *out = tilec_result_output(r, &n);
  const char *meta = q->ptx ? tilec_result_metadata(r) : NULL;
  size_t meta_len = meta ? strlen(meta) : 0;
  if (q->ptx && !meta) out = NULL, n = 0;
  tile_status s = TILE_OK;
  int ndeps = tilec_result_num_imports(r);
  size_t man = 8 + 4;
  for (int i = 0; i < ndeps; i++) man += 4 + strlen(tilec_result_import(r, i, NULL, NULL)) + TC_SHA256_SIZE;
  size_t pre = q->ptx ? 12 + meta_len : 0; /* PTX: PTX_MAGIC | u32 metadata length | metadata | PTX */
  if (!out || n == 0) {
    s = tile_set_error(TILE_ERR_COMPILE, "%s: error: the compiler produced no %s", q->filename,
                       q->ptx ? "PTX" : "cubin");
  } else if (!(*entry = malloc(man + pre + n))) {
    s = tile_set_error(TILE_ERR_NOMEM, "tile_jit: out of memory (%zu-byte cubin)", n);
  } else {
    uint8_t *p = *entry;
    memcpy(p, DEPS_MAGIC, 8);
    put_u32(p + 8, (uint32_t)ndeps);
    p += 12;
    for (int i = 0; i < ndeps; i++) {
      const char *text;
      size_t len;
      const char *path = tilec_result_import(r, i, &text, &len);
      size_t pl = strlen(path);
      put_u32(p, (uint32_t)pl);
      memcpy(p + 4, path, pl);
      tc_sha256(text, len, p + 4 + pl);
      p += 4 + pl + TC_SHA256_SIZE;
    }
    if (q->ptx) {
      memcpy(p, PTX_MAGIC, 8);
      put_u32(p + 8, (uint32_t)meta_len);
      memcpy(p + 12, meta, meta_len);
      p += pre;
    }
    memcpy(p, out, n);
    *off = man;
    *size = pre + n;
  }
  tilec_result_free(r);
  return s;
}

/* Does the file at path still hash to sha? */
static int dep_unchanged(const char *path, const uint8_t *sha) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  tc_sha256_ctx c;
  tc_sha256_init(&c);
  uint8_t buf[16384], got[TC_SHA256_SIZE];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, f)) > 0) tc_sha256_update(&c, buf, k);
  int err = ferror(f);
  fclose(f);
  tc_sha256_final(&c, got);
  return !err && !memcmp(got, sha, TC_SHA256_SIZE);
}

/* Check an entry's manifest against the files on disk. Returns TC_HIT with
 * *off at the cubin, TC_MISS when an imported file changed (or is gone),
 * TC_CORRUPT when the manifest does not parse. */
static int check_deps(const uint8_t *e, size_t size, size_t *off) {
  if (size < 12 || memcmp(e, DEPS_MAGIC, 8)) return TC_CORRUPT;
  uint32_t n = get_u32(e + 8);
  size_t p = 12;
  for (uint32_t i = 0; i < n; i++) {
    if (size - p < 4) return TC_CORRUPT;
    uint32_t pl = get_u32(e + p);
    if (pl == 0 || pl > JIT_PATH_MAX || size - p - 4 < (size_t)pl + TC_SHA256_SIZE) return TC_CORRUPT;
    char path[JIT_PATH_MAX + 1];
    memcpy(path, e + p + 4, pl);
    path[pl] = 0;
    if (memchr(path, 0, pl)) return TC_CORRUPT;
    if (!dep_unchanged(path, e + p + 4 + pl)) {
      tj_verbose("imported file %s changed since the entry was compiled", path);
      return TC_MISS;
    }
    p += 4 + (size_t)pl + TC_SHA256_SIZE;
  }
  if (p >= size) return TC_CORRUPT; /* no cubin */
  *off = p;
  return TC_HIT;
}

/* ---- cache ------------------------------------------------------------------- */

/* Look the key up.  Returns TC_HIT (cubin filled, a malloc'ed copy),
 * TC_MISS (also when an imported file changed) or TC_CORRUPT; lookup errors
 * are reported as misses. */
static int cache_get(const char *dir, const char *key, void **cubin, size_t *size) {
  char err[1024];
  void *entry = NULL;
  size_t esize = 0, off = 0;
  int rc = tc_cache_lookup(dir, key, &entry, &esize, err, sizeof err);
  if (rc == TC_ERROR) {
    tj_verbose("cache lookup failed, compiling: %s", err);
    return TC_MISS;
  }
  if (rc == TC_CORRUPT) tj_verbose("%s; recompiling", err);
  if (rc != TC_HIT) return rc;
  rc = check_deps(entry, esize, &off);
  if (rc == TC_CORRUPT) tj_verbose("cache entry %s: bad import manifest; recompiling", key);
  if (rc == TC_HIT) {
    if (!(*cubin = malloc(esize - off))) rc = TC_MISS;
    else {
      memcpy(*cubin, (uint8_t *)entry + off, esize - off);
      *size = esize - off;
    }
  }
  free(entry);
  return rc;
}

static int cache_put(const jit_req *q, const char *dir, const char *key, const void *cubin,
                     size_t size) {
  char err[1024];
  if (!q->asm_known) {
    tj_verbose("assembler version unknown: not caching %s", key);
    return -1;
  }
  if (tc_cache_store(dir, key, cubin, size, err, sizeof err) != 0) {
    tj_verbose("cache store failed (not fatal): %s", err);
    return -1;
  }
  return 0;
}

/* ---- public API ---------------------------------------------------------------- */

tile_status tile_jit_cache_dir(const tile_jit_options *opts, char *buf, size_t cap) {
  if (!buf || !cap) return tile_set_error(TILE_ERR_INVALID, "tile_jit_cache_dir: no buffer");
  if (tc_cache_resolve_dir(opts ? opts->cache_dir : NULL, buf, cap) != 0)
    return tile_set_error(TILE_ERR_INVALID, "tile_jit_cache_dir: the cache path does not fit in %zu bytes", cap);
  return TILE_OK;
}

/* The body of tile_jit_compile_cubin once the request is prepared.  evict:
 * the cached entry is known to be bad (its cubin did not load): remove it
 * and compile without looking it up. */
static tile_status jit_cubin(const jit_req *q, void **cubin, size_t *size, tile_jit_stats *st,
                             int evict) {
  char dir[JIT_PATH_MAX];
  int use_cache = !q->opts->no_cache;
  if (use_cache) {
    tile_status s = tile_jit_cache_dir(q->opts, dir, sizeof dir);
    if (s != TILE_OK) return s;
    int rc = TC_CORRUPT;
    if (evict) {
      char err[1024];
      if (tc_cache_remove(dir, st->key, err, sizeof err) != 0)
        tj_verbose("cannot evict %s (not fatal): %s", st->key, err);
    } else if (q->opts->stats) {
      rc = TC_MISS; /* the report needs the compiler to run */
    } else {
      rc = cache_get(dir, st->key, cubin, size);
    }
    if (rc == TC_HIT) {
      st->cache_hit = 1;
      tj_verbose("hit %s (%s)", st->key, q->filename);
      return TILE_OK;
    }
    st->cache_rebuilt = rc == TC_CORRUPT; /* cleared below if the store fails */
  }
  uint8_t *entry = NULL;
  size_t off = 0;
  tile_status s = run_compiler(q, &entry, &off, size, &st->report);
  if (s != TILE_OK) {
    st->cache_rebuilt = 0;
    return s;
  }
  if (use_cache && cache_put(q, dir, st->key, entry, off + *size) != 0) st->cache_rebuilt = 0;
  /* hand back the cubin alone */
  memmove(entry, entry + off, *size);
  *cubin = entry;
  tj_verbose("compiled %s (%s), %zu bytes", st->key, q->filename, *size);
  return TILE_OK;
}

static tile_status jit_compile(const char *filename, const char *source, size_t len,
                               const tile_jit_options *opts, void **cubin, size_t *size,
                               tile_jit_stats *stats, int evict, int ptx) {
  double t0 = now_s();
  tile_jit_stats local;
  tile_jit_stats *st = stats ? stats : &local;
  memset(st, 0, sizeof *st);
  if (!cubin || !size)
    return tile_set_error(TILE_ERR_INVALID, "tile_jit_compile_cubin: cubin or size is NULL");
  *cubin = NULL;
  *size = 0;
  jit_req q;
  tile_status s = req_init(&q, filename, source, len, opts, ptx);
  if (s == TILE_OK) {
    compute_key(&q, st->key);
    s = jit_cubin(&q, cubin, size, st, evict);
  }
  req_free(&q);
  st->compile_seconds = now_s() - t0;
  if (!stats) free(local.report); /* nobody to hand it to */
  return s;
}

tile_status tile_jit_compile_cubin(const char *filename, const char *source, size_t len,
                                   const tile_jit_options *opts, void **cubin, size_t *size,
                                   tile_jit_stats *stats) {
  return jit_compile(filename, source, len, opts, cubin, size, stats, 0, 0);
}

/* A PTX entry (PTX_MAGIC, the metadata, the PTX) loaded as a module. */
static tile_status load_ptx_entry(const uint8_t *e, size_t size, tile_module **out) {
  uint32_t ml = size >= 12 ? get_u32(e + 8) : 0;
  if (size < 12 || memcmp(e, PTX_MAGIC, 8) || ml > size - 12 || ml == size - 12)
    return tile_set_error(TILE_ERR_BAD_MODULE, "tile_jit: a corrupt PTX entry");
  return tile_module_load_ptx((const char *)e + 12 + ml, size - 12 - ml, (const char *)e + 12, ml, out);
}

/* Compile (or fetch) and load once; see jit_cubin for evict.  On the
 * emulator (tile_emulated) the compiler stops at PTX: the module is that
 * PTX with its metadata (tile_module_load_ptx), no assembler needed, and
 * the emulator's reports name the Tile lines its .loc directives give. */
static tile_status jit_load(const char *filename, const char *source, size_t len,
                            const tile_jit_options *opts, tile_module **out, tile_jit_stats *st,
                            int evict) {
  void *cubin = NULL;
  size_t size = 0;
  int ptx = tile_emulated();
  tile_status s = jit_compile(filename, source, len, opts, &cubin, &size, st, evict, ptx);
  if (s != TILE_OK) return s;
  s = ptx ? load_ptx_entry(cubin, size, out) : tile_module_load_data(cubin, size, out);
  free(cubin);
  return s;
}

/* Did the load fail because of the cubin itself (its ELF, its metadata, or
 * the driver refusing the image) rather than the machine (no driver, no
 * device, no tile_init, out of memory)? */
static int cubin_rejected(tile_status s) {
  return s == TILE_ERR_BAD_MODULE ||
         (s == TILE_ERR_CUDA && !strncmp(tile_last_error(), "cuModuleLoadData", 16));
}

tile_status tile_jit_load(const char *filename, const char *source, size_t len,
                          const tile_jit_options *opts, tile_module **out, tile_jit_stats *stats) {
  if (!out) return tile_set_error(TILE_ERR_INVALID, "tile_jit_load: out is NULL");
  *out = NULL;
  tile_jit_stats local;
  tile_jit_stats *st = stats ? stats : &local;
  tile_status s = jit_load(filename, source, len, opts, out, st, 0);
  if (s == TILE_OK || !st->cache_hit || !cubin_rejected(s)) {
    if (!stats) free(local.report); /* nobody to hand it to */
    return s;
  }
  /* The entry passed the cache's checks but its cubin does not load: served
   * as a hit, it would fail every later load too.  Evict it and build anew. */
  tj_verbose("cached cubin %s does not load (%s); evicting it and recompiling", st->key,
          tile_last_error());
  double first = st->compile_seconds;
  free(st->report); /* (a report means no lookup, so no hit: not reached, kept safe) */
  st->report = NULL;
  s = jit_load(filename, source, len, opts, out, st, 1);
  st->compile_seconds += first;
  if (!stats) free(local.report);
  return s;
}

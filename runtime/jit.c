/* jit.c - tile_jit_*: compile Tile source in process with libtilec, keeping
 * the cubins in the on-disk cache of cache.c.
 *
 * The cache key is the SHA-256 of a sequence of length-prefixed fields (each
 * field: its length as 8 bytes little endian, then its bytes):
 *
 *   "tile-jit-key-1"                 format tag (bump when this list changes)
 *   tilec_version()
 *   tilec_assembler_version()        "ptxas 13.0.88", ...
 *   arch                             opts->arch or the device's ("sm_90a")
 *   "O<n>"                           optimisation level
 *   "emit=cubin line_info=<0|1> nvjitlink=<0|1>"
 *   "defines=<n>"                    then, sorted by name (ties keep the
 *   name, value                      caller's order), two fields per define
 *   filename                         it lands in the cubin's line table
 *   source bytes
 *
 * Errors go through rt_fail (rt.h, error.c) into tile_last_error().  A broken
 * cache never fails a compile: lookup errors count as misses and failing
 * stores are ignored (TILE_JIT_VERBOSE=1 prints them to stderr).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "rt.h"
#include "tile/runtime.h"
#include "tile/tilec.h"

#define JIT_KEY_TAG "tile-jit-key-1"
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
} jit_req;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void verbose(const char *fmt, ...) {
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
  if (!source && len) return rt_fail(TILE_ERR_INVALID, "tile_jit: source is NULL");
  if (o->ndefines < 0 || (o->ndefines > 0 && !o->defines))
    return rt_fail(TILE_ERR_INVALID, "tile_jit: %d defines but no array", o->ndefines);
  for (int i = 0; i < o->ndefines; i++)
    if (!o->defines[i].name || !o->defines[i].name[0] || !o->defines[i].value)
      return rt_fail(TILE_ERR_INVALID, "tile_jit: define %d has no name or no value", i);
  if (o->opt_level < 0 || o->opt_level > 3)
    return rt_fail(TILE_ERR_INVALID, "tile_jit: opt_level %d is not in 0..3 (0 = default)",
                   o->opt_level);
  return TILE_OK;
}

static tile_status resolve_arch(const tile_jit_options *o, char *buf, size_t cap) {
  if (!o->arch) return tile_device_arch(buf, cap); /* sets the message on failure */
  if (!o->arch[0] || strlen(o->arch) >= cap)
    return rt_fail(TILE_ERR_INVALID, "tile_jit: bad arch '%.80s'", o->arch);
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
  if (!q->cdefs || !q->sorted) return rt_fail(TILE_ERR_NOMEM, "tile_jit: out of memory");
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

/* Validate, resolve the arch, build the compiler options. */
static tile_status req_init(jit_req *q, const char *filename, const char *source, size_t len,
                            const tile_jit_options *opts) {
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
  q->opt_level = q->opts->opt_level ? q->opts->opt_level : 3;
  tilec_options_init(&q->copts);
  q->copts.arch = q->arch;
  q->copts.emit = TILEC_EMIT_CUBIN;
  q->copts.defines = q->cdefs;
  q->copts.ndefines = q->opts->ndefines;
  q->copts.opt_level = q->opt_level;
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
  char tmp[128];
  tc_sha256_ctx c;
  tc_sha256_init(&c);
  key_str(&c, JIT_KEY_TAG);
  key_str(&c, tilec_version());
  key_str(&c, q->asm_version);
  key_str(&c, q->arch);
  snprintf(tmp, sizeof tmp, "O%d", q->opt_level);
  key_str(&c, tmp);
  snprintf(tmp, sizeof tmp, "emit=cubin line_info=%d nvjitlink=%d", q->copts.line_info,
           q->copts.use_nvjitlink);
  key_str(&c, tmp);
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

/* ---- compile ----------------------------------------------------------------- */

static tile_status compile_fail(const jit_req *q, tilec_status st, const tilec_result *r) {
  const char *diag = r ? tilec_result_diagnostics(r) : NULL;
  if (diag && *diag) return rt_fail(TILE_ERR_COMPILE, "%s", diag);
  return rt_fail(TILE_ERR_COMPILE, "%s: error: compilation failed (tilec status %d)", q->filename,
                 (int)st);
}

/* Run the compiler; on success *cubin is a malloc'ed copy of the cubin. */
static tile_status run_compiler(const jit_req *q, void **cubin, size_t *size) {
  tilec_result *r = NULL;
  tilec_status st = tilec_compile(q->filename, q->source, q->len, &q->copts, &r);
  if (!r) return rt_fail(TILE_ERR_NOMEM, "tile_jit: out of memory in the compiler");
  if (st == TILEC_OK) st = tilec_result_status(r);
  if (st != TILEC_OK) {
    tile_status s = compile_fail(q, st, r);
    tilec_result_free(r);
    return s;
  }
  size_t n = 0;
  const void *out = tilec_result_output(r, &n);
  tile_status s = TILE_OK;
  if (!out || n == 0) {
    s = rt_fail(TILE_ERR_COMPILE, "%s: error: the compiler produced no cubin", q->filename);
  } else if (!(*cubin = malloc(n))) {
    s = rt_fail(TILE_ERR_NOMEM, "tile_jit: out of memory (%zu-byte cubin)", n);
  } else {
    memcpy(*cubin, out, n);
    *size = n;
  }
  tilec_result_free(r);
  return s;
}

/* ---- cache ------------------------------------------------------------------- */

/* Look the key up.  Returns TC_HIT (cubin filled), TC_MISS or TC_CORRUPT;
 * lookup errors are reported as misses. */
static int cache_get(const char *dir, const char *key, void **cubin, size_t *size) {
  char err[1024];
  int rc = tc_cache_lookup(dir, key, cubin, size, err, sizeof err);
  if (rc == TC_ERROR) {
    verbose("cache lookup failed, compiling: %s", err);
    return TC_MISS;
  }
  if (rc == TC_CORRUPT) verbose("%s; recompiling", err);
  return rc;
}

static int cache_put(const jit_req *q, const char *dir, const char *key, const void *cubin,
                     size_t size) {
  char err[1024];
  if (!q->asm_known) {
    verbose("assembler version unknown: not caching %s", key);
    return -1;
  }
  if (tc_cache_store(dir, key, cubin, size, err, sizeof err) != 0) {
    verbose("cache store failed (not fatal): %s", err);
    return -1;
  }
  return 0;
}

/* ---- public API ---------------------------------------------------------------- */

tile_status tile_jit_cache_dir(const tile_jit_options *opts, char *buf, size_t cap) {
  if (!buf || !cap) return rt_fail(TILE_ERR_INVALID, "tile_jit_cache_dir: no buffer");
  if (tc_cache_resolve_dir(opts ? opts->cache_dir : NULL, buf, cap) != 0)
    return rt_fail(TILE_ERR_INVALID, "tile_jit_cache_dir: the cache path does not fit in %zu bytes",
                   cap);
  return TILE_OK;
}

/* The body of tile_jit_compile_cubin once the request is prepared. */
static tile_status jit_cubin(const jit_req *q, void **cubin, size_t *size, tile_jit_stats *st) {
  char dir[JIT_PATH_MAX];
  int use_cache = !q->opts->no_cache;
  if (use_cache) {
    tile_status s = tile_jit_cache_dir(q->opts, dir, sizeof dir);
    if (s != TILE_OK) return s;
    int rc = cache_get(dir, st->key, cubin, size);
    if (rc == TC_HIT) {
      st->cache_hit = 1;
      verbose("hit %s (%s)", st->key, q->filename);
      return TILE_OK;
    }
    st->cache_rebuilt = rc == TC_CORRUPT; /* cleared below if the store fails */
  }
  tile_status s = run_compiler(q, cubin, size);
  if (s != TILE_OK) {
    st->cache_rebuilt = 0;
    return s;
  }
  if (use_cache && cache_put(q, dir, st->key, *cubin, *size) != 0) st->cache_rebuilt = 0;
  verbose("compiled %s (%s), %zu bytes", st->key, q->filename, *size);
  return TILE_OK;
}

tile_status tile_jit_compile_cubin(const char *filename, const char *source, size_t len,
                                   const tile_jit_options *opts, void **cubin, size_t *size,
                                   tile_jit_stats *stats) {
  double t0 = now_s();
  tile_jit_stats local;
  tile_jit_stats *st = stats ? stats : &local;
  memset(st, 0, sizeof *st);
  if (!cubin || !size) return rt_fail(TILE_ERR_INVALID, "tile_jit_compile_cubin: cubin or size is NULL");
  *cubin = NULL;
  *size = 0;
  jit_req q;
  tile_status s = req_init(&q, filename, source, len, opts);
  if (s == TILE_OK) {
    compute_key(&q, st->key);
    s = jit_cubin(&q, cubin, size, st);
  }
  req_free(&q);
  st->compile_seconds = now_s() - t0;
  return s;
}

tile_status tile_jit_load(const char *filename, const char *source, size_t len,
                          const tile_jit_options *opts, tile_module **out, tile_jit_stats *stats) {
  if (!out) return rt_fail(TILE_ERR_INVALID, "tile_jit_load: out is NULL");
  *out = NULL;
  void *cubin = NULL;
  size_t size = 0;
  tile_status s = tile_jit_compile_cubin(filename, source, len, opts, &cubin, &size, stats);
  if (s != TILE_OK) return s;
  s = tile_module_load_data(cubin, size, out);
  free(cubin);
  return s;
}

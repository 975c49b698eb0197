/* autotune.c - tile_jit_autotune_*: launch the fastest of several sets of
 * constants ("configs") of one kernel for each problem key, as Triton's
 * autotune does.
 *
 * The first launch for a key (one this tuner has not seen and the disk cache
 * does not hold) compiles every config through tile_jit_load (so through the
 * JIT's own cache), times each one with the caller's launch callback (warm-up
 * launches, then the median of `reps` timed launches: CUDA events on the
 * caller's stream, or the caller's clock), keeps the fastest in the tuner's
 * table and in the JIT's disk cache, and launches it.  A config that fails to
 * compile, load or launch is skipped with a note; all of them failing is an
 * error that lists each.  Later launches for the key find it in the table
 * (one lookup under a lock, then the launch); another process finds it on
 * disk and loads only the chosen config.
 *
 * The disk entry is an entry of cache.c (atomic temp file + rename, checked
 * by its SHA-256) in the JIT's cache folder.  Its key is the SHA-256 of
 * length-prefixed fields, as jit.c's:
 *
 *   "tile-autotune-1"                format tag (bump when this list or the payload changes)
 *   the kernel's name                desc.kernel, "" for the module's only one
 *   "configs=<n>", then each config's JIT cache key (tj_key: compiler and
 *                                    assembler versions, arch, options, the
 *                                    config's defines over the common ones,
 *                                    file name, source; the emulator's PTX key
 *                                    under the emulator)
 *   the device                       "<name> sm_count=<n> cc=<major>.<minor>"
 *   the caller's key
 *
 * and its payload is text:
 *
 *   "TJTUNE01\n" "configs <n>\n" "best <i>\n", then per config "<i> <median ms>\n"
 *   or "<i> skipped\n"
 *
 * A payload that does not parse, or whose best config no longer loads, is
 * tuned again and replaced.  Timings are per device model: an H100 and an
 * H200 (both sm_90a) keep separate choices.
 *
 * State: each tuner has its own table (mu) and serializes its tunings and
 * module loads (tune_mu); there is no global state.  Errors go through
 * tile_set_error; nothing here exits.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "jit_int.h"
#include "tile/runtime.h"

#define AT_KEY_TAG "tile-autotune-1"
#define AT_MAGIC "TJTUNE01"
#define AT_DEFAULT_WARMUP 2
#define AT_DEFAULT_REPS 10
#define AT_MAX_REPS 100000
#define AT_PATH_MAX 4096

/* One tuned key: the config chosen and every config's median (ms; negative:
 * skipped). */
typedef struct at_entry {
  char *key;
  int best;
  double *ms;
  char disk[TC_SHA256_HEX_SIZE]; /* the disk entry's key */
} at_entry;

struct tile_jit_autotuner {
  /* the request, copied at create */
  char *filename, *source, *kernel;
  size_t len;
  tile_jit_options opts;     /* its strings and arrays point into `owned`; defines: per config below */
  int nconfigs;
  tile_jit_define **defs;    /* per config: the common defines it does not override, then its own */
  int *ndefs;
  char **label;              /* per config: its own defines, "BLOCK=256 W=8" */
  int warmup, reps;
  tile_jit_autotune_clock_fn clock;
  void *clock_user;
  char **owned;              /* every string and array copied, freed by destroy */
  int nowned, capowned;
  /* under tune_mu */
  pthread_mutex_t tune_mu;   /* tuning and module loads, one at a time */
  int have_keys, storable;
  char (*jkey)[TC_SHA256_HEX_SIZE]; /* per config: its JIT cache key */
  char device[320];
  tile_module **mod;
  /* under mu */
  pthread_mutex_t mu;        /* the table and kern[] */
  tile_kernel **kern;        /* per config: loaded (NULL: not yet) */
  at_entry *tab;
  int ntab, captab;
};

/* ---- copies ------------------------------------------------------------------ */

static void *own(tile_jit_autotuner *t, void *p) {
  if (!p) return NULL;
  if (t->nowned == t->capowned) {
    int cap = t->capowned ? 2 * t->capowned : 32;
    char **n = realloc(t->owned, sizeof *n * (size_t)cap);
    if (!n) {
      free(p);
      return NULL;
    }
    t->owned = n;
    t->capowned = cap;
  }
  t->owned[t->nowned++] = p;
  return p;
}

static void *own_alloc(tile_jit_autotuner *t, size_t n) { return own(t, calloc(1, n ? n : 1)); }

/* A copy of s (NULL stays NULL); *ok = 0 when out of memory. */
static char *own_str(tile_jit_autotuner *t, const char *s, int *ok) {
  if (!s) return NULL;
  char *c = own(t, strdup(s));
  if (!c) *ok = 0;
  return c;
}

static tile_status check_desc(const tile_jit_autotune_desc *d) {
  if (!d) return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_create: desc is NULL");
  if (!d->source && d->len) return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_create: source is NULL");
  if (d->nconfigs < 1 || !d->configs)
    return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_create: %d configs (at least one is needed)",
                          d->nconfigs);
  for (int i = 0; i < d->nconfigs; i++) {
    const tile_jit_autotune_config *c = &d->configs[i];
    if (c->ndefines < 0 || (c->ndefines > 0 && !c->defines))
      return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_create: config %d has %d defines but no array", i,
                            c->ndefines);
    for (int j = 0; j < c->ndefines; j++)
      if (!c->defines[j].name || !c->defines[j].name[0] || !c->defines[j].value)
        return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_create: config %d: define %d has no name or no value",
                              i, j);
  }
  if (d->reps < 0 || d->reps > AT_MAX_REPS || d->warmup > AT_MAX_REPS)
    return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_create: reps %d / warmup %d out of range (reps 0..%d)",
                          d->reps, d->warmup, AT_MAX_REPS);
  if (d->kernel && !d->kernel[0]) return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_create: empty kernel name");
  return TILE_OK;
}

/* The common options, their strings and arrays copied (defines: per config). */
static int copy_opts(tile_jit_autotuner *t, const tile_jit_options *o) {
  int ok = 1;
  if (!o) return 1;
  t->opts = *o;
  t->opts.defines = NULL;
  t->opts.ndefines = 0;
  t->opts.arch = own_str(t, o->arch, &ok);
  t->opts.cache_dir = own_str(t, o->cache_dir, &ok);
  t->opts.ptxas = own_str(t, o->ptxas, &ok);
  if (o->ninclude_dirs > 0 && o->include_dirs) {
    const char **dirs = own_alloc(t, sizeof *dirs * (size_t)o->ninclude_dirs);
    if (!dirs) return 0;
    for (int i = 0; i < o->ninclude_dirs; i++) dirs[i] = own_str(t, o->include_dirs[i], &ok);
    t->opts.include_dirs = dirs;
  }
  return ok;
}

/* Config i's defines: the common ones it does not set, then its own. */
static int copy_config(tile_jit_autotuner *t, int i, const tile_jit_options *o, const tile_jit_autotune_config *c) {
  int ok = 1, n = 0, nbase = o ? o->ndefines : 0;
  tile_jit_define *d = own_alloc(t, sizeof *d * (size_t)(nbase + c->ndefines));
  if (!d) return 0;
  for (int b = 0; b < nbase; b++) {
    int overridden = 0;
    for (int j = 0; j < c->ndefines && !overridden; j++) overridden = !strcmp(o->defines[b].name, c->defines[j].name);
    if (overridden) continue;
    d[n].name = own_str(t, o->defines[b].name, &ok);
    d[n++].value = own_str(t, o->defines[b].value, &ok);
  }
  size_t lab = 1;
  for (int j = 0; j < c->ndefines; j++) {
    d[n].name = own_str(t, c->defines[j].name, &ok);
    d[n++].value = own_str(t, c->defines[j].value, &ok);
    lab += strlen(c->defines[j].name) + strlen(c->defines[j].value) + 2;
  }
  t->defs[i] = d;
  t->ndefs[i] = n;
  char *l = own_alloc(t, lab);
  if (!l) return 0;
  for (int j = 0; j < c->ndefines; j++)
    sprintf(l + strlen(l), "%s%s=%s", j ? " " : "", c->defines[j].name, c->defines[j].value);
  t->label[i] = l;
  return ok;
}

tile_status tile_jit_autotune_create(const tile_jit_autotune_desc *desc, tile_jit_autotuner **out) {
  if (!out) return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_create: out is NULL");
  *out = NULL;
  tile_status s = check_desc(desc);
  if (s != TILE_OK) return s;
  tile_jit_autotuner *t = calloc(1, sizeof *t);
  if (!t) return tile_set_error(TILE_ERR_NOMEM, "tile_jit_autotune_create: out of memory");
  pthread_mutex_init(&t->mu, NULL);
  pthread_mutex_init(&t->tune_mu, NULL);
  int n = desc->nconfigs, ok = 1;
  t->nconfigs = n;
  t->warmup = desc->warmup == 0 ? AT_DEFAULT_WARMUP : desc->warmup < 0 ? 0 : desc->warmup;
  t->reps = desc->reps ? desc->reps : AT_DEFAULT_REPS;
  t->clock = desc->clock;
  t->clock_user = desc->clock_user;
  t->filename = own_str(t, desc->filename && *desc->filename ? desc->filename : "<jit>", &ok);
  t->len = desc->len;
  t->source = own_alloc(t, desc->len + 1);
  if (t->source && desc->len) memcpy(t->source, desc->source, desc->len);
  t->kernel = own_str(t, desc->kernel, &ok);
  t->defs = own_alloc(t, sizeof *t->defs * (size_t)n);
  t->ndefs = own_alloc(t, sizeof *t->ndefs * (size_t)n);
  t->label = own_alloc(t, sizeof *t->label * (size_t)n);
  t->jkey = own_alloc(t, sizeof *t->jkey * (size_t)n);
  t->mod = own_alloc(t, sizeof *t->mod * (size_t)n);
  t->kern = own_alloc(t, sizeof *t->kern * (size_t)n);
  ok = ok && t->source && t->defs && t->ndefs && t->label && t->jkey && t->mod && t->kern;
  ok = ok && copy_opts(t, desc->opts);
  for (int i = 0; ok && i < n; i++) ok = copy_config(t, i, desc->opts, &desc->configs[i]);
  if (!ok) {
    tile_jit_autotune_destroy(t);
    return tile_set_error(TILE_ERR_NOMEM, "tile_jit_autotune_create: out of memory");
  }
  *out = t;
  return TILE_OK;
}

void tile_jit_autotune_destroy(tile_jit_autotuner *t) {
  if (!t) return;
  for (int i = 0; t->mod && i < t->nconfigs; i++)
    if (t->mod[i]) tile_module_unload(t->mod[i]);
  for (int i = 0; i < t->ntab; i++) {
    free(t->tab[i].key);
    free(t->tab[i].ms);
  }
  free(t->tab);
  for (int i = 0; i < t->nowned; i++) free(t->owned[i]);
  free(t->owned);
  pthread_mutex_destroy(&t->mu);
  pthread_mutex_destroy(&t->tune_mu);
  free(t);
}

/* ---- the table (under mu) ------------------------------------------------------ */

static at_entry *tab_find(tile_jit_autotuner *t, const char *key) {
  for (int i = 0; i < t->ntab; i++)
    if (!strcmp(t->tab[i].key, key)) return &t->tab[i];
  return NULL;
}

/* Record (or replace) key's choice; ms is copied.  Out of memory only
 * forgets the choice (the next launch tunes or reads the disk again). */
static void tab_put(tile_jit_autotuner *t, const char *key, int best, const double *ms, const char *disk) {
  pthread_mutex_lock(&t->mu);
  at_entry *e = tab_find(t, key);
  double *copy = malloc(sizeof *copy * (size_t)t->nconfigs);
  if (copy) memcpy(copy, ms, sizeof *copy * (size_t)t->nconfigs);
  if (!e && copy && t->ntab == t->captab) {
    int cap = t->captab ? 2 * t->captab : 8;
    at_entry *n = realloc(t->tab, sizeof *n * (size_t)cap);
    if (n) t->tab = n, t->captab = cap;
  }
  if (!e && copy && t->ntab < t->captab) {
    char *k = strdup(key);
    if (k) {
      e = &t->tab[t->ntab++];
      memset(e, 0, sizeof *e);
      e->key = k;
    }
  }
  if (e && copy) {
    free(e->ms);
    e->ms = copy;
    e->best = best;
    snprintf(e->disk, sizeof e->disk, "%s", disk);
    copy = NULL;
  }
  free(copy);
  pthread_mutex_unlock(&t->mu);
}

/* The choice for key in the table: 1 (best, its kernel if loaded, and
 * optionally ms and the disk key filled) or 0. */
static int tab_get(tile_jit_autotuner *t, const char *key, int *best, tile_kernel **k, double *ms, char *disk) {
  pthread_mutex_lock(&t->mu);
  at_entry *e = tab_find(t, key);
  if (e) {
    *best = e->best;
    if (k) *k = t->kern[e->best];
    if (ms) memcpy(ms, e->ms, sizeof *ms * (size_t)t->nconfigs);
    if (disk) memcpy(disk, e->disk, sizeof e->disk);
  }
  pthread_mutex_unlock(&t->mu);
  return e != NULL;
}

/* ---- configs (under tune_mu) ------------------------------------------------- */

static tile_jit_options config_opts(const tile_jit_autotuner *t, int i) {
  tile_jit_options o = t->opts;
  o.defines = t->defs[i];
  o.ndefines = t->ndefs[i];
  return o;
}

/* Config i's kernel, compiled (or fetched) and loaded on first use. */
static tile_status load_config(tile_jit_autotuner *t, int i, tile_kernel **out) {
  pthread_mutex_lock(&t->mu);
  *out = t->kern[i];
  pthread_mutex_unlock(&t->mu);
  if (*out) return TILE_OK;
  tile_jit_options o = config_opts(t, i);
  tile_module *m = NULL;
  tile_jit_stats st;
  tile_status s = tile_jit_load(t->filename, t->source, t->len, &o, &m, &st);
  if (s != TILE_OK) return s;
  tile_kernel *k = NULL;
  if (t->kernel) {
    s = tile_module_get_kernel(m, t->kernel, &k);
  } else if (tile_module_num_kernels(m) != 1) {
    s = tile_set_error(TILE_ERR_INVALID, "%s has %d kernels: name the one to tune (tile_jit_autotune_desc.kernel)",
                       t->filename, tile_module_num_kernels(m));
  } else {
    s = tile_module_get_kernel(m, tile_module_kernel_info(m, 0)->name, &k);
  }
  if (s != TILE_OK) {
    tile_module_unload(m);
    return s;
  }
  t->mod[i] = m;
  pthread_mutex_lock(&t->mu);
  t->kern[i] = k;
  pthread_mutex_unlock(&t->mu);
  *out = k;
  tj_verbose("autotune: config %d (%s) of %s loaded (%s %s)", i, t->label[i], t->filename,
             st.cache_hit ? "cache hit" : "compiled", st.key);
  return TILE_OK;
}

/* Every config's JIT key and the device's description, once per tuner. */
static tile_status ensure_keys(tile_jit_autotuner *t) {
  if (t->have_keys) return TILE_OK;
  int ptx = tile_emulated(), storable = 1;
  for (int i = 0; i < t->nconfigs; i++) {
    tile_jit_options o = config_opts(t, i);
    int st = 0;
    tile_status s = tj_key(t->filename, t->source, t->len, &o, ptx, t->jkey[i], &st);
    if (s != TILE_OK) return s;
    storable &= st;
  }
  tile_device_info info;
  tile_status s = tile_device_info_get(&info);
  if (s != TILE_OK) return s;
  snprintf(t->device, sizeof t->device, "%s sm_count=%d cc=%d.%d", info.name, info.sm_count, info.cc_major,
           info.cc_minor);
  t->storable = storable;
  t->have_keys = 1;
  return TILE_OK;
}

static void key_field(tc_sha256_ctx *c, const void *data, size_t n) {
  uint8_t len[8];
  for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)n >> (8 * i));
  tc_sha256_update(c, len, sizeof len);
  tc_sha256_update(c, data, n);
}

static void key_str(tc_sha256_ctx *c, const char *s) { key_field(c, s, strlen(s)); }

/* The disk key of the caller's key (ensure_keys first). */
static void disk_key(const tile_jit_autotuner *t, const char *key, char hex[TC_SHA256_HEX_SIZE]) {
  char tmp[64];
  tc_sha256_ctx c;
  tc_sha256_init(&c);
  key_str(&c, AT_KEY_TAG);
  key_str(&c, t->kernel ? t->kernel : "");
  snprintf(tmp, sizeof tmp, "configs=%d", t->nconfigs);
  key_str(&c, tmp);
  for (int i = 0; i < t->nconfigs; i++) key_str(&c, t->jkey[i]);
  key_str(&c, t->device);
  key_str(&c, key);
  uint8_t digest[TC_SHA256_SIZE];
  tc_sha256_final(&c, digest);
  tc_hex(digest, sizeof digest, hex);
}

/* ---- the disk entry --------------------------------------------------------------- */

static int use_disk(const tile_jit_autotuner *t, char *dir, size_t cap) {
  return !t->opts.no_cache && t->storable && tile_jit_cache_dir(&t->opts, dir, cap) == TILE_OK;
}

/* "<prefix><non-negative int>\n" at *q: the number, *q moved past; -1 if not. */
static long take_line(const char **q, const char *prefix) {
  size_t n = strlen(prefix);
  if (strncmp(*q, prefix, n) || (*q)[n] < '0' || (*q)[n] > '9') return -1;
  char *end;
  long v = strtol(*q + n, &end, 10);
  if (*end != '\n') return -1;
  *q = end + 1;
  return v;
}

/* Parse a payload: 0 (best and ms filled) or -1. */
static int parse_entry(const tile_jit_autotuner *t, const char *p, size_t n, int *best, double *ms) {
  char *text = malloc(n + 1), *end;
  if (!text) return -1;
  memcpy(text, p, n);
  text[n] = 0;
  int rc = -1;
  const char *q = text;
  long configs = strlen(text) == n ? take_line(&q, AT_MAGIC "\nconfigs ") : -1;
  long b = configs == t->nconfigs ? take_line(&q, "best ") : -1;
  if (b < 0 || b >= configs) goto out;
  for (int i = 0; i < configs; i++) {
    if (q[0] < '0' || q[0] > '9' || strtol(q, &end, 10) != i || *end != ' ') goto out;
    q = end + 1;
    if (!strncmp(q, "skipped\n", 8)) {
      ms[i] = -1;
      q += 8;
      continue;
    }
    ms[i] = strtod(q, &end);
    if (q[0] < '0' || q[0] > '9' || *end != '\n' || !isfinite(ms[i])) goto out;
    q = end + 1;
  }
  if (*q == 0 && ms[b] >= 0) {
    *best = (int)b;
    rc = 0;
  }
out:
  free(text);
  return rc;
}

/* TC_HIT (best, ms filled), TC_MISS or TC_CORRUPT; a failed lookup is a miss. */
static int disk_get(const tile_jit_autotuner *t, const char *dk, int *best, double *ms) {
  char dir[AT_PATH_MAX], err[1024];
  if (!use_disk(t, dir, sizeof dir)) return TC_MISS;
  void *data = NULL;
  size_t size = 0;
  int rc = tc_cache_lookup(dir, dk, &data, &size, err, sizeof err);
  if (rc == TC_ERROR) tj_verbose("autotune: cache lookup failed, tuning: %s", err);
  if (rc == TC_CORRUPT) tj_verbose("autotune: %s; tuning again", err);
  if (rc == TC_HIT && parse_entry(t, data, size, best, ms) != 0) {
    tj_verbose("autotune: entry %s does not parse; tuning again", dk);
    rc = TC_CORRUPT;
  }
  free(data);
  return rc == TC_HIT || rc == TC_CORRUPT ? rc : TC_MISS;
}

static void disk_put(const tile_jit_autotuner *t, const char *dk, int best, const double *ms) {
  char dir[AT_PATH_MAX], err[1024];
  if (!use_disk(t, dir, sizeof dir)) return;
  size_t cap = 64 + 40 * (size_t)t->nconfigs, n = 0;
  char *p = malloc(cap);
  if (!p) return;
  n += (size_t)snprintf(p, cap, AT_MAGIC "\nconfigs %d\nbest %d\n", t->nconfigs, best);
  for (int i = 0; i < t->nconfigs; i++)
    n += ms[i] < 0 ? (size_t)snprintf(p + n, cap - n, "%d skipped\n", i)
                   : (size_t)snprintf(p + n, cap - n, "%d %.9g\n", i, ms[i]);
  if (tc_cache_store(dir, dk, p, n, err, sizeof err) != 0) tj_verbose("autotune: cache store failed (not fatal): %s", err);
  else tj_verbose("autotune: stored %s: config %d (%s) of %s", dk, best, t->label[best], t->filename);
  free(p);
}

/* ---- timing ------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Launch config i warmup times, then reps timed launches: *ms their median. */
static tile_status time_config(tile_jit_autotuner *t, tile_kernel *k, int i, tile_jit_autotune_launch_fn launch,
                               void *user, tile_stream stream, double *ms) {
  tile_status s = TILE_OK;
  for (int w = 0; s == TILE_OK && w < t->warmup; w++) s = launch(user, k, i, stream);
  if (s == TILE_OK) s = tile_stream_synchronize(stream); /* a fault surfaces here */
  if (s != TILE_OK) return s;
  double *v = malloc(sizeof *v * (size_t)t->reps);
  if (!v) return tile_set_error(TILE_ERR_NOMEM, "tile_jit_autotune: out of memory");
  tile_event e0 = NULL, e1 = NULL;
  if (!t->clock) {
    s = tile_event_create(&e0);
    if (s == TILE_OK) s = tile_event_create(&e1);
  }
  for (int r = 0; s == TILE_OK && r < t->reps; r++) {
    if (t->clock) {
      double t0 = t->clock(t->clock_user);
      s = launch(user, k, i, stream);
      if (s == TILE_OK) s = tile_stream_synchronize(stream);
      if (s == TILE_OK) v[r] = t->clock(t->clock_user) - t0;
      if (s == TILE_OK && !(v[r] >= 0 && isfinite(v[r]))) /* NaN: the caller's clock failed */
        s = tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune: the clock gave %g ms for a launch", v[r]);
    } else {
      float f = 0;
      s = tile_event_record(e0, stream);
      if (s == TILE_OK) s = launch(user, k, i, stream);
      if (s == TILE_OK) s = tile_event_record(e1, stream);
      if (s == TILE_OK) s = tile_event_elapsed_ms(&f, e0, e1);
      v[r] = f;
    }
  }
  if (e0) tile_event_destroy(e0);
  if (e1) tile_event_destroy(e1);
  if (s == TILE_OK) {
    qsort(v, (size_t)t->reps, sizeof *v, cmp_double);
    int m = t->reps / 2;
    *ms = t->reps % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  }
  free(v);
  return s;
}

/* Append "config i (label): STATUS: first line of the message\n" to both
 * buffers (the stats' notes, the error's list). */
static void note(char *notes, size_t cap, char *all, size_t allcap, const tile_jit_autotuner *t, int i,
                 tile_status s) {
  const char *msg = tile_last_error();
  char line[512];
  int nl = (int)strcspn(msg, "\n");
  snprintf(line, sizeof line, "config %d (%s): %s: %.*s\n", i, t->label[i], tile_status_name(s), nl, msg);
  size_t used = strlen(notes);
  snprintf(notes + used, cap - used, "%s", line);
  used = strlen(all);
  snprintf(all + used, allcap - used, "%s", line);
  tj_verbose("autotune: %s: skipping %.*s", t->filename, (int)strlen(line) - 1, line);
}

/* Time every config for key; *best the fastest (ties: the first). */
static tile_status tune(tile_jit_autotuner *t, const char *key, tile_jit_autotune_launch_fn launch, void *user,
                        tile_stream stream, tile_jit_autotune_stats *st, int *best, double *ms) {
  tile_status first = TILE_OK;
  char all[4096] = "";
  *best = -1;
  for (int i = 0; i < t->nconfigs; i++) {
    tile_kernel *k = NULL;
    tile_status s = load_config(t, i, &k);
    if (s == TILE_OK) s = time_config(t, k, i, launch, user, stream, &ms[i]);
    if (s != TILE_OK) {
      ms[i] = -1;
      st->nskipped++;
      if (first == TILE_OK) first = s;
      note(st->notes, sizeof st->notes, all, sizeof all, t, i, s);
      continue;
    }
    st->ntimed++;
    tj_verbose("autotune: %s key '%s': config %d (%s): %.6g ms", t->filename, key, i, t->label[i], ms[i]);
    if (*best < 0 || ms[i] < ms[*best]) *best = i;
  }
  if (*best < 0)
    return tile_set_error(first, "tile_jit_autotune: every config of %s failed for key '%.200s':\n%s",
                          t->kernel ? t->kernel : t->filename, key, all);
  st->best_ms = ms[*best];
  return TILE_OK;
}

/* The choice for key (tune_mu held): the table, else the disk, else tuned.
 * A remembered choice whose config no longer loads is tuned again. */
static tile_status resolve(tile_jit_autotuner *t, const char *key, tile_jit_autotune_launch_fn launch, void *user,
                           tile_stream stream, tile_jit_autotune_stats *st, int *best, tile_kernel **k) {
  tile_status s = ensure_keys(t);
  if (s != TILE_OK) return s;
  double *ms = calloc((size_t)t->nconfigs, sizeof *ms);
  if (!ms) return tile_set_error(TILE_ERR_NOMEM, "tile_jit_autotune: out of memory");
  disk_key(t, key, st->key);
  int found = tab_get(t, key, best, NULL, NULL, NULL);
  if (!found && disk_get(t, st->key, best, ms) == TC_HIT) {
    found = 1;
    st->from_disk = 1;
  }
  if (found && (s = load_config(t, *best, k)) == TILE_OK) {
    if (st->from_disk) tab_put(t, key, *best, ms, st->key);
    free(ms);
    return TILE_OK;
  }
  if (found) tj_verbose("autotune: the chosen config %d no longer loads (%s); tuning again", *best, tile_last_error());
  st->from_disk = 0;
  s = tune(t, key, launch, user, stream, st, best, ms);
  if (s == TILE_OK) {
    st->tuned = 1;
    tab_put(t, key, *best, ms, st->key);
    disk_put(t, st->key, *best, ms);
    s = load_config(t, *best, k);
  }
  free(ms);
  return s;
}

/* ---- public API ------------------------------------------------------------------- */

tile_status tile_jit_autotune_launch(tile_jit_autotuner *t, const char *key, tile_jit_autotune_launch_fn launch,
                                     void *user, tile_stream stream, tile_jit_autotune_stats *stats) {
  tile_jit_autotune_stats local;
  tile_jit_autotune_stats *st = stats ? stats : &local;
  memset(st, 0, sizeof *st);
  st->config = -1;
  if (!t || !key || !launch)
    return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_launch: tuner, key or launch is NULL");
  int best = -1;
  tile_kernel *k = NULL;
  if (!tab_get(t, key, &best, &k, NULL, st->key) || !k) {
    pthread_mutex_lock(&t->tune_mu);
    tile_status s = resolve(t, key, launch, user, stream, st, &best, &k);
    pthread_mutex_unlock(&t->tune_mu);
    if (s != TILE_OK) return s;
  }
  st->config = best;
  return launch(user, k, best, stream);
}

tile_status tile_jit_autotune_best(tile_jit_autotuner *t, const char *key, int *config, double *ms) {
  if (!t || !key || !config) return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_best: tuner, key or config is NULL");
  *config = -1;
  if (tab_get(t, key, config, NULL, ms, NULL)) return TILE_OK;
  pthread_mutex_lock(&t->tune_mu);
  tile_status s = ensure_keys(t);
  double *v = calloc((size_t)t->nconfigs, sizeof *v);
  if (s == TILE_OK && !v) s = tile_set_error(TILE_ERR_NOMEM, "tile_jit_autotune_best: out of memory");
  if (s == TILE_OK) {
    char dk[TC_SHA256_HEX_SIZE];
    disk_key(t, key, dk);
    if (disk_get(t, dk, config, v) == TC_HIT) {
      tab_put(t, key, *config, v, dk);
      if (ms) memcpy(ms, v, sizeof *v * (size_t)t->nconfigs);
    } else {
      s = tile_set_error(TILE_ERR_NOT_FOUND, "tile_jit_autotune_best: key '%.200s' is not tuned yet", key);
    }
  }
  free(v);
  pthread_mutex_unlock(&t->tune_mu);
  return s;
}

tile_status tile_jit_autotune_kernel(tile_jit_autotuner *t, int config, tile_kernel **k) {
  if (!t || !k) return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_kernel: tuner or k is NULL");
  *k = NULL;
  if (config < 0 || config >= t->nconfigs)
    return tile_set_error(TILE_ERR_INVALID, "tile_jit_autotune_kernel: config %d is not in 0..%d", config,
                          t->nconfigs - 1);
  pthread_mutex_lock(&t->tune_mu);
  tile_status s = load_config(t, config, k);
  pthread_mutex_unlock(&t->tune_mu);
  return s;
}

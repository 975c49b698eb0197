/* jfa_test.h - what the two JFA check and benchmark programs share
 * (jfa_host.c, the forward; jfa_bwd_host.c, the backward): a problem
 * ("case") of jagged lengths, random bf16 inputs, tensor descriptions, the
 * FLOP count, and the reader of ../shared/bench/suites/suites.json. */
#ifndef JFA_TEST_H
#define JFA_TEST_H

#include <math.h>
#include <stdbool.h>

#include "../common/host.h"
#include "jfa.h"

typedef struct Case {
  const char *name;
  int D, H, causal;
  int64_t num_q;      /* broadcast-Q when > 0 */
  int64_t B;
  int64_t *len;       /* B lengths */
  int window, wl, wr; /* a sliding window: keys i - wl .. i + wr (-1: unbounded) */
  float softcap;      /* > 0: soft-capped scores */
  int alibi;          /* ALiBi with the slopes alibi_slope(h, H) */
  int mask_mode;      /* block-sparse: JFA_MASK_PER_BATCH or JFA_MASK_PER_SEQUENCE; 0: none */
  int mask_pct;       /* its random blocks' density in % (100: every block, 0: none) */
} Case;

/* --ignore-mask (jfa_host, jfa_bwd_host): the kernels run without the
 * block mask while the references keep it, which must fail every
 * block-sparse check but the all-ones mask's (how the checks were shown to
 * see the mask) */
static int ignore_mask;

/* A block-sparse case's mask (jfa_params.block_mask): each block visited
 * with probability mask_pct %; per batch, n x n for the longest sequence's
 * n blocks plus one (a mask wider than needed is fine); per sequence, one
 * after the other. first[b]: sequence b's first byte (per sequence). */
typedef struct BlockMask {
  uint8_t *m;
  int64_t bytes, row, *first;
} BlockMask;

static inline int64_t mask_nb(int64_t L) { return (L + JFA_MASK_BLOCK - 1) / JFA_MASK_BLOCK; }

static inline void mask_make(const Case *c, BlockMask *bm) {
  memset(bm, 0, sizeof *bm);
  if (!c->mask_mode) return;
  bm->first = malloc((size_t)(c->B + 1) * sizeof *bm->first);
  for (int64_t b = 0; b < c->B; b++) {
    int64_t nb = mask_nb(c->len[b]);
    bm->first[b] = bm->bytes;
    bm->bytes += nb * nb;
    bm->row = nb > bm->row ? nb : bm->row;
  }
  if (c->mask_mode == JFA_MASK_PER_BATCH) bm->row += 1, bm->bytes = bm->row * bm->row;
  bm->m = malloc((size_t)bm->bytes + 1);
  for (int64_t i = 0; i < bm->bytes; i++) bm->m[i] = rng_int(0, 99) < c->mask_pct;
}

static inline void mask_free(BlockMask *bm) {
  free(bm->m);
  free(bm->first);
}

/* whether the mask lets query i see key j of sequence b (the causal mask and
 * the sequence's end are the caller's) */
static inline int mask_sees(const Case *c, const BlockMask *bm, int64_t b, int64_t i, int64_t j) {
  if (!c->mask_mode) return 1;
  int64_t qm = i / JFA_MASK_BLOCK, kn = j / JFA_MASK_BLOCK;
  if (c->mask_mode == JFA_MASK_PER_BATCH) return bm->m[qm * bm->row + kn];
  return bm->m[bm->first[b] + qm * mask_nb(c->len[b]) + kn];
}

/* the mask's fields of p (none under --ignore-mask) */
static inline void mask_params(const Case *c, const BlockMask *bm, jfa_params *p) {
  if (!c->mask_mode || ignore_mask) return;
  p->block_mask = bm->m;
  p->block_mask_mode = c->mask_mode;
  p->block_mask_bytes = bm->bytes;
}

/* ALiBi's slopes as its paper sets them for H heads: 2^(-8 (h + 1) / H) */
static inline float alibi_slope(int h, int H) { return (float)exp2(-8.0 * (h + 1) / H); }

/* The forward's FLOPs, FlashAttention's convention (the backward: 2.5x). */
static inline double fwd_flops(const Case *c) {
  double f = 0;
  for (int64_t b = 0; b < c->B; b++) {
    double L = (double)c->len[b];
    if (c->window && c->num_q == 0) { /* the (query, key) pairs the window keeps */
      for (int64_t i = 0; i < c->len[b]; i++) {
        int64_t lo = c->wl < 0 || i < c->wl ? 0 : i - c->wl;
        int64_t hi = c->wr < 0 || i + c->wr >= c->len[b] ? c->len[b] - 1 : i + c->wr;
        f += (double)(hi - lo + 1);
      }
      continue;
    }
    f += c->num_q > 0 ? (double)c->num_q * L : c->causal ? L * (L + 1) / 2 : L * L;
  }
  return 4.0 * c->H * c->D * f;
}

/* random values in [-1, 1): a pool of 4096 rounded values indexed by a fast generator */
static inline void fill_bf16(uint16_t *x, size_t n) {
  static uint16_t pool[4096];
  static int init;
  if (!init) {
    for (int i = 0; i < 4096; i++) pool[i] = f2bf(rng_float(-1, 1));
    init = 1;
  }
  uint64_t s = rng_next() | 1;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    x[i] = pool[(s >> 20) & 4095];
  }
}

/* a contiguous [a, b, c] tensor at p */
static inline void tensor3(jfa_tensor *t, tile_devptr p, const char *dt, int64_t a, int64_t b, int64_t c) {
  memset(t, 0, sizeof *t);
  t->data = p;
  t->dtype = dt;
  t->rank = 3;
  t->shape[0] = a, t->shape[1] = b, t->shape[2] = c;
  t->stride[2] = 1, t->stride[1] = c, t->stride[0] = b * c;
}

/* O's layout (and dO's): [B, num_q, H, D] in broadcast-Q, else [total, H, D] */
static inline void tensor_o(jfa_tensor *t, tile_devptr p, const Case *c, int64_t total) {
  if (c->num_q > 0) {
    memset(t, 0, sizeof *t);
    t->data = p, t->dtype = "bf16", t->rank = 4;
    t->shape[0] = c->B, t->shape[1] = c->num_q, t->shape[2] = c->H, t->shape[3] = c->D;
    t->stride[3] = 1, t->stride[2] = c->D, t->stride[1] = (int64_t)c->H * c->D, t->stride[0] = c->num_q * t->stride[1];
  } else {
    tensor3(t, p, "bf16", total, c->H, c->D);
  }
}

/* the LSE: [B, H, num_q] in broadcast-Q, else [H, total] */
static inline void tensor_lse(jfa_tensor *t, tile_devptr p, const Case *c, int64_t total) {
  if (c->num_q > 0) {
    tensor3(t, p, "f32", c->B, c->H, c->num_q);
  } else {
    memset(t, 0, sizeof *t);
    t->data = p, t->dtype = "f32", t->rank = 2;
    t->shape[0] = c->H, t->shape[1] = total;
    t->stride[1] = 1, t->stride[0] = total;
  }
}

static inline int64_t *lens_random(int64_t B, int64_t lo, int64_t hi) {
  int64_t *l = malloc((size_t)(B > 0 ? B : 1) * sizeof *l);
  for (int64_t b = 0; b < B; b++) l[b] = rng_int(lo, hi);
  return l;
}
static inline int64_t *lens_of(int n, const int64_t *v) {
  int64_t *l = malloc((size_t)(n > 0 ? n : 1) * sizeof *l);
  for (int i = 0; i < n; i++) l[i] = v[i];
  return l;
}

/* --update (both programs): each case's plan is first made for another
 * batch, in turn one sequence of one row (the update then grows every
 * buffer) or 2B + 3 sequences up to twice as long (it then shrinks into
 * them), and then jfa_plan_update'd to the case's int32 offsets on a stream
 * of its own: twice (the second finds the same lengths), with a bad update
 * between them that must be refused and leave the plan as it was. The
 * checks then run on the updated plan, on the default stream. A
 * block-sparse plan's update must be refused (and the plan still run). */
static int plan_by_update;

static inline tile_status plan_for(jfa_lib *lib, const jfa_params *p, jfa_plan **out) {
  if (!plan_by_update) return jfa_plan_create(lib, p, out);
  if (p->block_mask) { /* its mask is laid out for its batch: an update must be refused, the plan kept */
    tile_status st = jfa_plan_create(lib, p, out);
    if (st == TILE_OK && jfa_plan_update(*out, p->cu_seqlens, 0, p->batch, NULL) != TILE_ERR_INVALID) {
      jfa_plan_destroy(*out);
      *out = NULL;
      return tile_set_error(TILE_ERR_INVALID, "plan_for: a block-sparse plan's update was not refused");
    }
    return st;
  }
  static tile_stream side;
  static int flip;
  tile_status st;
  if (!side && (st = tile_stream_create(&side)) != TILE_OK) return st;
  const int32_t *off = p->cu_seqlens;
  int64_t maxlen = 1;
  for (int64_t b = 0; b < p->batch; b++)
    if (off[b + 1] - off[b] > maxlen) maxlen = off[b + 1] - off[b];
  jfa_params d = *p;
  d.batch = (flip ^= 1) ? 1 : 2 * p->batch + 3;
  int32_t *doff = malloc((size_t)(d.batch + 1) * sizeof *doff);
  if (!doff) return TILE_ERR_NOMEM;
  doff[0] = 0;
  for (int64_t b = 0; b < d.batch; b++) doff[b + 1] = doff[b] + (int32_t)(d.batch == 1 ? 1 : rng_int(0, 2 * maxlen));
  d.cu_seqlens = doff;
  st = jfa_plan_create(lib, &d, out);
  free(doff);
  if (st != TILE_OK) return st;
  int32_t bad[2] = {1, 5};
  if ((st = jfa_plan_update(*out, p->cu_seqlens, 0, p->batch, side)) != TILE_OK ||
      (st = jfa_plan_update(*out, bad, 0, 1, side)) != TILE_ERR_INVALID ||
      (st = jfa_plan_update(*out, p->cu_seqlens, 0, p->batch, side)) != TILE_OK) {
    if (st == TILE_OK) st = tile_set_error(TILE_ERR_INVALID, "plan_for: a bad update was not refused");
    jfa_plan_destroy(*out);
    *out = NULL;
    return st;
  }
  return TILE_OK;
}

/* Sort m[0..n) and return the median. */
static inline double median_ms(float *m, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && m[j] < m[j - 1]; j--) {
      float x = m[j];
      m[j] = m[j - 1];
      m[j - 1] = x;
    }
  return m[n / 2];
}

/* Each suite of DIR/suites.json (a minimal reader of its flat objects) that
 * `only` names (NULL: all), its lengths read from DIR/NAME.lengths, handed
 * to fn as a Case (name and lengths valid during the call). False when the
 * file or a lengths file cannot be read. */
/* Whether name is one of the comma-separated list's items, whole (--only
 * J1c runs J1c, not J1 too). */
static bool in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return true;
    p = e ? e + 1 : NULL;
  }
  return false;
}

static inline bool each_suite(const char *dir, const char *only, void (*fn)(const Case *, void *), void *ud) {
  char path[1024];
  snprintf(path, sizeof path, "%s/suites.json", dir);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return false;
  }
  static char js[1 << 16];
  size_t n = fread(js, 1, sizeof js - 1, f);
  js[n] = 0;
  fclose(f);
  bool ok = true;
  for (char *o = strchr(js, '{'); o; o = strchr(o + 1, '{')) {
    char *end = strchr(o, '}');
    if (!end) break;
    *end = 0;
    char name[32] = "", mode[32] = "self", lf[128] = "";
    long heads = 0, hd = 0, nq = 0;
    int causal = 0;
    char *s;
    if ((s = strstr(o, "\"name\""))) sscanf(strchr(s + 6, '"') + 1, "%31[^\"]", name);
    if ((s = strstr(o, "\"mode\""))) sscanf(strchr(s + 6, '"') + 1, "%31[^\"]", mode);
    if ((s = strstr(o, "\"lengths_file\""))) sscanf(strchr(s + 14, '"') + 1, "%127[^\"]", lf);
    if ((s = strstr(o, "\"heads\""))) heads = strtol(strchr(s, ':') + 1, NULL, 10);
    if ((s = strstr(o, "\"head_dim\""))) hd = strtol(strchr(s, ':') + 1, NULL, 10);
    if ((s = strstr(o, "\"num_q\""))) nq = strtol(strchr(s, ':') + 1, NULL, 10);
    if ((s = strstr(o, "\"causal\""))) causal = strstr(s, "true") && strstr(s, "true") < strchr(s, ',') ? 1 : 0;
    o = end;
    if (only && !in_list(only, name)) continue;
    snprintf(path, sizeof path, "%s/%s", dir, lf);
    FILE *lfp = fopen(path, "rb");
    if (!lfp) {
      fprintf(stderr, "cannot open %s\n", path);
      ok = false;
      continue;
    }
    int64_t cap = 1024, B = 0, *len = malloc((size_t)cap * sizeof *len);
    long x;
    while (fscanf(lfp, "%ld", &x) == 1) {
      if (B == cap) len = realloc(len, (size_t)(cap *= 2) * sizeof *len);
      len[B++] = x;
    }
    fclose(lfp);
    Case c = {name, (int)hd, (int)heads, causal, !strcmp(mode, "broadcast_q") ? nq : 0, B, len};
    fn(&c, ud);
    free(len);
  }
  return ok;
}

#endif

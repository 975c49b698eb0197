/* meta.c - the kernel metadata parser (format: docs/metadata.md).
 *
 * Strict where a mistake would launch a kernel wrongly: the first line must
 * be "tile-meta 1", every known line has exactly its fields, names, dtypes
 * and numbers are checked, each kernel needs a "threads" line and an "end".
 * Tolerant where the format may grow: unknown keywords inside a kernel
 * block are skipped.  Every error names its line.
 *
 * Parsing fills growable arrays; the result is then packed into one malloc
 * block (tile_meta, its kernels, all their params), which tile_meta_free
 * frees.  The text need not be NUL-terminated; a NUL ends it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

enum {
  RT_META_LINE_MAX = 1024,   /* longest line, bytes */
  RT_META_MAX_TOKS = 16,     /* tokens kept per line (more are counted) */
  RT_META_MAX_PARAMS = 1024, /* per kernel */
  RT_META_MAX_KERNELS = 65536,
  RT_META_MAX_THREADS = 1024,
  RT_META_MAX_SMEM = 16 << 20,
  RT_META_MAX_CLUSTER = 16, /* blocks per cluster (non-portable maximum) */
  RT_META_MAX_ALIGN = 4096,
};

typedef struct rt_dtype {
  const char *name;
  int size;
} rt_dtype;

static const rt_dtype rt_dtypes[] = {
    {"bool", 1}, {"i8", 1},  {"u8", 1},  {"i16", 2},  {"u16", 2},  {"i32", 4}, {"u32", 4},
    {"i64", 8},  {"u64", 8}, {"f16", 2}, {"bf16", 2}, {"f32", 4}, {"f64", 8},
};

typedef struct rt_parser {
  const char *p, *end; /* the text not read yet */
  int line;
  char *err;
  size_t errcap;
  bool failed;
  char buf[RT_META_LINE_MAX];
  char *tok[RT_META_MAX_TOKS];
  int ntok;            /* may exceed RT_META_MAX_TOKS */
  char arch[32];
  tile_kernel_info *kernels;
  int nkernels, capkernels;
  int *first_param;    /* per kernel: index of its first param in params */
  tile_param_info *params;
  int nparams, capparams;
  int *first_const;    /* per kernel: index of its first constant in consts */
  tile_const_info *consts;
  int nconsts, capconsts;
  int *first_derived; /* per kernel: index of its first derived parameter */
  tile_derived_info *derived;
  int nderived, capderived;
  tile_kernel_info *cur; /* the open kernel block, or NULL */
  int cur_index;
  bool seen_threads, seen_smem, seen_cluster, seen_pdl;
} rt_parser;

static bool rt_perr(rt_parser *P, const char *fmt, ...) RT_PRINTF(2, 3);

/* Record an error for the current line; returns false. */
static bool rt_perr(rt_parser *P, const char *fmt, ...) {
  if (P->failed) return false;
  P->failed = true;
  if (!P->err || P->errcap == 0) return false;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(P->err, P->errcap, "line %d: %s", P->line, msg);
  return false;
}

/* ---- lines and tokens ---- */

/* Read the next line into P->buf and split it; false at the end or on error. */
static bool rt_next_line(rt_parser *P) {
  if (P->p >= P->end || *P->p == 0) return false;
  P->line++;
  size_t n = 0;
  while (P->p < P->end && *P->p != '\n' && *P->p != 0) {
    unsigned char c = (unsigned char)*P->p++;
    if (c == '\r' && (P->p == P->end || *P->p == '\n' || *P->p == 0)) continue;
    if ((c < 0x20 && c != '\t') || c >= 0x7f)
      return rt_perr(P, "invalid byte 0x%02x (metadata is printable ASCII)", c);
    if (n + 1 >= sizeof P->buf)
      return rt_perr(P, "line longer than %d bytes", RT_META_LINE_MAX - 1);
    P->buf[n++] = (char)c;
  }
  if (P->p < P->end && *P->p == '\n') P->p++;
  P->buf[n] = 0;
  P->ntok = 0;
  for (char *s = P->buf;;) {
    while (*s == ' ' || *s == '\t') *s++ = 0;
    if (!*s) break;
    if (P->ntok < RT_META_MAX_TOKS) P->tok[P->ntok] = s;
    P->ntok++;
    while (*s && *s != ' ' && *s != '\t') s++;
  }
  return true;
}

static bool rt_is_blank_or_comment(const rt_parser *P) {
  return P->ntok == 0 || P->tok[0][0] == '#';
}

static bool rt_want_fields(rt_parser *P, int n, const char *usage) {
  if (P->ntok == n) return true;
  return rt_perr(P, "expected '%s'", usage);
}

/* ---- fields ---- */

/* A decimal number in [lo, hi]. */
static bool rt_number(rt_parser *P, const char *tok, long lo, long hi, const char *what,
                      int *out) {
  long v = 0;
  const char *s = tok;
  if (!*s) return rt_perr(P, "%s: missing number", what);
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > hi) break;
    v = v * 10 + (*s - '0');
  }
  if (*s || v < lo || v > hi)
    return rt_perr(P, "%s must be a number from %ld to %ld, got '%s'", what, lo, hi, tok);
  *out = (int)v;
  return true;
}

static bool rt_ident_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
         (!first && c >= '0' && c <= '9');
}

/* A C/PTX identifier shorter than cap. */
static bool rt_name(rt_parser *P, const char *tok, size_t cap, const char *what) {
  size_t n = strlen(tok);
  if (n >= cap) return rt_perr(P, "%s '%s' is longer than %zu characters", what, tok, cap - 1);
  for (size_t i = 0; i < n; i++)
    if (!rt_ident_char(tok[i], i == 0)) return rt_perr(P, "%s '%s' is not an identifier", what, tok);
  return true;
}

static const rt_dtype *rt_find_dtype(rt_parser *P, const char *tok) {
  for (size_t i = 0; i < sizeof rt_dtypes / sizeof rt_dtypes[0]; i++)
    if (strcmp(rt_dtypes[i].name, tok) == 0) return &rt_dtypes[i];
  rt_perr(P, "unknown dtype '%s' (expected one of bool i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 "
             "f32 f64)", tok);
  return NULL;
}

/* ---- growable arrays ---- */

static void *rt_grow(rt_parser *P, void *arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return arr;
  int ncap = *cap ? *cap * 2 : 8;
  while (ncap < need) ncap *= 2;
  void *p = realloc(arr, (size_t)ncap * elem);
  if (!p) {
    rt_perr(P, "out of memory");
    return NULL;
  }
  *cap = ncap;
  return p;
}

static bool rt_add_kernel(rt_parser *P) {
  if (P->nkernels >= RT_META_MAX_KERNELS) return rt_perr(P, "too many kernels");
  int cap = P->capkernels;
  tile_kernel_info *k = rt_grow(P, P->kernels, &cap, P->nkernels + 1, sizeof *k);
  if (!k) return false;
  P->kernels = k;
  int *fp = realloc(P->first_param, (size_t)cap * sizeof *fp);
  if (!fp) return rt_perr(P, "out of memory");
  P->first_param = fp;
  int *fc = realloc(P->first_const, (size_t)cap * sizeof *fc);
  if (!fc) return rt_perr(P, "out of memory");
  P->first_const = fc;
  int *fd = realloc(P->first_derived, (size_t)cap * sizeof *fd);
  if (!fd) return rt_perr(P, "out of memory");
  P->first_derived = fd;
  P->capkernels = cap;
  P->cur_index = P->nkernels++;
  P->cur = &P->kernels[P->cur_index];
  memset(P->cur, 0, sizeof *P->cur);
  P->first_param[P->cur_index] = P->nparams;
  P->first_const[P->cur_index] = P->nconsts;
  P->first_derived[P->cur_index] = P->nderived;
  return true;
}

/* ---- lines ---- */

static bool rt_line_version(rt_parser *P) {
  if (!rt_next_line(P)) {
    if (!P->failed) { P->line = 1; rt_perr(P, "empty metadata (expected 'tile-meta 1')"); }
    return false;
  }
  if (P->ntok == 2 && strcmp(P->tok[0], "tile-meta") == 0) {
    if (strcmp(P->tok[1], "1") == 0) return true;
    return rt_perr(P, "metadata version '%s' is not supported: this runtime reads version 1 "
                      "(rebuild the cubin with a matching tilec, or update the runtime)",
                   P->tok[1]);
  }
  return rt_perr(P, "not Tile metadata: the first line must be 'tile-meta 1'");
}

static bool rt_line_kernel(rt_parser *P) {
  if (!rt_want_fields(P, 2, "kernel NAME")) return false;
  if (!rt_name(P, P->tok[1], sizeof P->cur->name, "kernel name")) return false;
  if (strcmp(P->tok[1], "__tile_meta") == 0) /* the symbol this text lives in: no entry can have its name */
    return rt_perr(P, "a kernel named '__tile_meta', the name of the metadata's own symbol");
  for (int i = 0; i < P->nkernels; i++)
    if (strcmp(P->kernels[i].name, P->tok[1]) == 0)
      return rt_perr(P, "kernel '%s' is defined twice", P->tok[1]);
  if (!rt_add_kernel(P)) return false;
  snprintf(P->cur->name, sizeof P->cur->name, "%s", P->tok[1]);
  P->cur->cluster[0] = P->cur->cluster[1] = P->cur->cluster[2] = 1;
  P->seen_threads = P->seen_smem = P->seen_cluster = P->seen_pdl = false;
  return true;
}

static bool rt_once(rt_parser *P, bool *seen) {
  if (*seen) return rt_perr(P, "second '%s' line in kernel '%s'", P->tok[0], P->cur->name);
  *seen = true;
  return true;
}

static bool rt_line_threads(rt_parser *P) {
  return rt_want_fields(P, 2, "threads N") && rt_once(P, &P->seen_threads) &&
         rt_number(P, P->tok[1], 1, RT_META_MAX_THREADS, "threads", &P->cur->threads);
}

static bool rt_line_smem(rt_parser *P) {
  return rt_want_fields(P, 2, "smem BYTES") && rt_once(P, &P->seen_smem) &&
         rt_number(P, P->tok[1], 0, RT_META_MAX_SMEM, "smem", &P->cur->smem_bytes);
}

static bool rt_line_cluster(rt_parser *P) {
  if (!rt_want_fields(P, 4, "cluster X Y Z") || !rt_once(P, &P->seen_cluster)) return false;
  int *c = P->cur->cluster;
  for (int i = 0; i < 3; i++)
    if (!rt_number(P, P->tok[1 + i], 1, RT_META_MAX_CLUSTER, "cluster dimension", &c[i]))
      return false;
  if (c[0] * c[1] * c[2] > RT_META_MAX_CLUSTER)
    return rt_perr(P, "cluster %d x %d x %d has more than %d blocks", c[0], c[1], c[2],
                   RT_META_MAX_CLUSTER);
  return true;
}

static bool rt_line_pdl(rt_parser *P) {
  if (!rt_want_fields(P, 1, "pdl") || !rt_once(P, &P->seen_pdl)) return false;
  P->cur->pdl = 1;
  return true;
}

static bool rt_param_unique(rt_parser *P, const char *name) {
  for (int i = P->first_param[P->cur_index]; i < P->nparams; i++)
    if (strcmp(P->params[i].name, name) == 0)
      return rt_perr(P, "parameter '%s' of kernel '%s' is declared twice", name, P->cur->name);
  return true;
}

/* Fill kind/size/align of q from "KIND DTYPE N". */
static bool rt_param_kind(rt_parser *P, tile_param_info *q, const rt_dtype *dt) {
  const char *kind = P->tok[2], *n = P->tok[4];
  int v;
  if (strcmp(kind, "ptr") == 0) {
    if (!rt_number(P, n, 1, RT_META_MAX_ALIGN, "pointer alignment", &v)) return false;
    if (v & (v - 1)) return rt_perr(P, "pointer alignment %d is not a power of two", v);
    q->kind = TILE_PARAM_PTR, q->size = 8, q->align = v;
  } else if (strcmp(kind, "scalar") == 0) {
    if (!rt_number(P, n, 1, 8, "scalar size", &v)) return false;
    if ((v & (v - 1)) || v < dt->size)
      return rt_perr(P, "scalar size %d does not fit dtype %s (%d bytes)", v, dt->name, dt->size);
    q->kind = TILE_PARAM_SCALAR, q->size = v, q->align = v;
  } else if (strcmp(kind, "tma") == 0) {
    if (strcmp(n, "128") != 0) return rt_perr(P, "a tma parameter is 128 bytes, got '%s'", n);
    q->kind = TILE_PARAM_TMA, q->size = 128, q->align = 64;
  } else {
    return rt_perr(P, "unknown parameter kind '%s' (expected ptr, scalar or tma)", kind);
  }
  return true;
}

static bool rt_line_param(rt_parser *P) {
  if (!rt_want_fields(P, 5, "param NAME KIND DTYPE N")) return false;
  tile_param_info q;
  memset(&q, 0, sizeof q);
  q.multiple = 1;
  if (!rt_name(P, P->tok[1], sizeof q.name, "parameter name") || !rt_param_unique(P, P->tok[1]))
    return false;
  const rt_dtype *dt = rt_find_dtype(P, P->tok[3]);
  if (!dt || !rt_param_kind(P, &q, dt)) return false;
  if (P->cur->nparams >= RT_META_MAX_PARAMS)
    return rt_perr(P, "kernel '%s' has more than %d parameters", P->cur->name, RT_META_MAX_PARAMS);
  snprintf(q.name, sizeof q.name, "%s", P->tok[1]);
  snprintf(q.dtype, sizeof q.dtype, "%s", dt->name);
  tile_param_info *arr = rt_grow(P, P->params, &P->capparams, P->nparams + 1, sizeof *arr);
  if (!arr) return false;
  P->params = arr;
  P->params[P->nparams++] = q;
  P->cur->nparams++;
  return true;
}

static tile_param_info *rt_find_param(rt_parser *P, const char *name) {
  for (int i = P->first_param[P->cur_index]; i < P->nparams; i++)
    if (strcmp(P->params[i].name, name) == 0) return &P->params[i];
  rt_perr(P, "no parameter '%s' declared before this line", name);
  return NULL;
}

/* "tmabox NAME ROWS COLS swizzle S": the box of a tma parameter. */
static bool rt_line_tmabox(rt_parser *P) {
  if (!rt_want_fields(P, 6, "tmabox NAME ROWS COLS swizzle S")) return false;
  tile_param_info *q = rt_find_param(P, P->tok[1]);
  if (!q) return false;
  if (q->kind != TILE_PARAM_TMA) return rt_perr(P, "parameter '%s' is not a tma parameter", q->name);
  int r, c, s;
  if (!rt_number(P, P->tok[2], 1, 256, "box rows", &r) || !rt_number(P, P->tok[3], 1, 256, "box columns", &c))
    return false;
  if (strcmp(P->tok[4], "swizzle") != 0) return rt_perr(P, "expected 'swizzle', got '%s'", P->tok[4]);
  if (!rt_number(P, P->tok[5], 0, 128, "swizzle", &s)) return false;
  if (q->box[0]) return rt_perr(P, "parameter '%s' has two tmabox lines", q->name);
  if (s != 0 && s != 32 && s != 64 && s != 128) return rt_perr(P, "swizzle %d is not 0, 32, 64 or 128", s);
  q->box[0] = r, q->box[1] = c, q->swizzle = s;
  return true;
}

/* "derive NAME tma DTYPE ROWS COLS swizzle S from PTR COLS ROWS STRIDE
 * [planes]": a TMA descriptor the runtime builds at launch; the four after
 * "from" are parameter names declared before (a pointer, then integers) or
 * positive constants; "planes": a 3-D tensor, planes of ROWS rows. */
static bool rt_line_derive(rt_parser *P) {
  const char *usage = "derive NAME tma DTYPE ROWS COLS swizzle S from PTR COLS ROWS STRIDE [planes]";
  if (P->ntok != 14 && !rt_want_fields(P, 13, usage)) return false;
  tile_derived_info q;
  memset(&q, 0, sizeof q);
  if (P->ntok == 14) {
    if (strcmp(P->tok[13], "planes") != 0) return rt_perr(P, "expected '%s'", usage);
    q.planes = 1;
  }
  if (!rt_name(P, P->tok[1], sizeof q.name, "parameter name") || !rt_param_unique(P, P->tok[1])) return false;
  for (int i = P->first_derived[P->cur_index]; i < P->nderived; i++)
    if (strcmp(P->derived[i].name, P->tok[1]) == 0)
      return rt_perr(P, "parameter '%s' of kernel '%s' is declared twice", P->tok[1], P->cur->name);
  if (strcmp(P->tok[2], "tma") != 0) return rt_perr(P, "a derived parameter is a tma descriptor, not '%s'", P->tok[2]);
  const rt_dtype *dt = rt_find_dtype(P, P->tok[3]);
  if (!dt) return false;
  if (!rt_number(P, P->tok[4], 1, 256, "box rows", &q.box[0]) || !rt_number(P, P->tok[5], 1, 256, "box columns", &q.box[1]))
    return false;
  if (strcmp(P->tok[6], "swizzle") != 0) return rt_perr(P, "expected 'swizzle', got '%s'", P->tok[6]);
  if (!rt_number(P, P->tok[7], 0, 128, "swizzle", &q.swizzle)) return false;
  if (q.swizzle != 0 && q.swizzle != 32 && q.swizzle != 64 && q.swizzle != 128)
    return rt_perr(P, "swizzle %d is not 0, 32, 64 or 128", q.swizzle);
  if (strcmp(P->tok[8], "from") != 0) return rt_perr(P, "expected 'from', got '%s'", P->tok[8]);
  for (int j = 0; j < 4; j++) {
    const char *t = P->tok[9 + j];
    q.from[j] = -1;
    if (*t >= '0' && *t <= '9') {
      char *e;
      long long v = strtoll(t, &e, 10);
      if (*e || j == 0 || v < 1 || v > (1ll << 40)) return rt_perr(P, "'%s' is not a parameter or a positive extent", t);
      q.lit[j] = v;
      continue;
    }
    int first = P->first_param[P->cur_index];
    for (int i = first; i < P->nparams; i++)
      if (strcmp(P->params[i].name, t) == 0) q.from[j] = i - first;
    if (q.from[j] < 0) return rt_perr(P, "no parameter '%s' declared before this line", t);
    const tile_param_info *src = &P->params[first + q.from[j]];
    if (j == 0 ? src->kind != TILE_PARAM_PTR
               : src->kind != TILE_PARAM_SCALAR || src->dtype[0] == 'f' || src->dtype[0] == 'b')
      return rt_perr(P, "parameter '%s' is not %s", t, j == 0 ? "a pointer" : "an integer scalar");
  }
  snprintf(q.name, sizeof q.name, "%s", P->tok[1]);
  snprintf(q.dtype, sizeof q.dtype, "%s", dt->name);
  tile_derived_info *arr = rt_grow(P, P->derived, &P->capderived, P->nderived + 1, sizeof *arr);
  if (!arr) return false;
  P->derived = arr;
  P->derived[P->nderived++] = q;
  P->cur->nderived++;
  return true;
}

/* "multiple NAME N": an integer parameter the kernel assumes a multiple of N. */
static bool rt_line_multiple(rt_parser *P) {
  if (!rt_want_fields(P, 3, "multiple NAME N")) return false;
  tile_param_info *q = rt_find_param(P, P->tok[1]);
  int v;
  if (!q || !rt_number(P, P->tok[2], 1, 1 << 20, "multiple", &v)) return false;
  if (q->kind != TILE_PARAM_SCALAR || q->dtype[0] == 'f' || q->dtype[0] == 'b')
    return rt_perr(P, "parameter '%s' is not an integer scalar", q->name);
  q->multiple = v;
  return true;
}

/* "const NAME DTYPE VALUE": kept for tile_kernel_const (it is not a launch
 * argument). */
static bool rt_line_const(rt_parser *P) {
  if (!rt_want_fields(P, 4, "const NAME DTYPE VALUE") || !rt_name(P, P->tok[1], 64, "constant name"))
    return false;
  /* a type-valued constant (`const T: dtype = bf16`) is "const T dtype bf16" */
  if (strcmp(P->tok[2], "dtype") == 0 ? rt_find_dtype(P, P->tok[3]) == NULL : rt_find_dtype(P, P->tok[2]) == NULL)
    return false;
  if (strlen(P->tok[3]) >= sizeof P->consts->value) return rt_perr(P, "constant value '%s' is too long", P->tok[3]);
  for (int i = P->first_const[P->cur_index]; i < P->nconsts; i++)
    if (strcmp(P->consts[i].name, P->tok[1]) == 0) return rt_perr(P, "constant '%s' is given twice", P->tok[1]);
  tile_const_info *arr = rt_grow(P, P->consts, &P->capconsts, P->nconsts + 1, sizeof *arr);
  if (!arr) return false;
  P->consts = arr;
  tile_const_info *q = &P->consts[P->nconsts++];
  memset(q, 0, sizeof *q);
  snprintf(q->name, sizeof q->name, "%s", P->tok[1]);
  snprintf(q->dtype, sizeof q->dtype, "%s", P->tok[2]);
  snprintf(q->value, sizeof q->value, "%s", P->tok[3]);
  P->cur->nconsts++;
  return true;
}

static bool rt_line_end(rt_parser *P) {
  if (!rt_want_fields(P, 1, "end")) return false;
  if (!P->seen_threads) return rt_perr(P, "kernel '%s' has no 'threads' line", P->cur->name);
  P->cur = NULL;
  return true;
}

static bool rt_line_arch(rt_parser *P) {
  if (!rt_want_fields(P, 2, "arch NAME")) return false;
  if (P->arch[0]) return rt_perr(P, "second 'arch' line");
  if (!rt_name(P, P->tok[1], sizeof P->arch, "arch")) return false;
  snprintf(P->arch, sizeof P->arch, "%s", P->tok[1]);
  return true;
}

static bool rt_line_in_kernel(rt_parser *P) {
  const char *kw = P->tok[0];
  if (strcmp(kw, "threads") == 0) return rt_line_threads(P);
  if (strcmp(kw, "smem") == 0) return rt_line_smem(P);
  if (strcmp(kw, "cluster") == 0) return rt_line_cluster(P);
  if (strcmp(kw, "pdl") == 0) return rt_line_pdl(P);
  if (strcmp(kw, "param") == 0) return rt_line_param(P);
  if (strcmp(kw, "const") == 0) return rt_line_const(P);
  if (strcmp(kw, "tmabox") == 0) return rt_line_tmabox(P);
  if (strcmp(kw, "multiple") == 0) return rt_line_multiple(P);
  if (strcmp(kw, "derive") == 0) return rt_line_derive(P);
  if (strcmp(kw, "end") == 0) return rt_line_end(P);
  if (strcmp(kw, "kernel") == 0 || strcmp(kw, "arch") == 0 || strcmp(kw, "tile-meta") == 0)
    return rt_perr(P, "'%s' inside kernel '%s' (missing 'end'?)", kw, P->cur->name);
  return true; /* an unknown keyword from a later version: skipped */
}

static bool rt_line_top(rt_parser *P) {
  const char *kw = P->tok[0];
  if (strcmp(kw, "kernel") == 0) return rt_line_kernel(P);
  if (strcmp(kw, "arch") == 0) return rt_line_arch(P);
  return rt_perr(P, "'%s' outside a kernel block", kw);
}

static bool rt_parse_lines(rt_parser *P) {
  if (!rt_line_version(P)) return false;
  while (rt_next_line(P)) {
    if (rt_is_blank_or_comment(P)) continue;
    if (!(P->cur ? rt_line_in_kernel(P) : rt_line_top(P))) return false;
  }
  if (P->failed) return false;
  if (P->cur) return rt_perr(P, "kernel '%s' has no 'end' line", P->cur->name);
  return true;
}

/* ---- the result ---- */

static size_t rt_align8(size_t n) { return (n + 7) & ~(size_t)7; }

static tile_meta *rt_pack(rt_parser *P) {
  size_t koff = rt_align8(sizeof(tile_meta));
  size_t poff = koff + rt_align8((size_t)P->nkernels * sizeof(tile_kernel_info));
  size_t coff = poff + rt_align8((size_t)P->nparams * sizeof(tile_param_info));
  size_t doff = coff + rt_align8((size_t)P->nconsts * sizeof(tile_const_info));
  size_t total = doff + (size_t)P->nderived * sizeof(tile_derived_info);
  char *block = calloc(1, total);
  if (!block) {
    rt_perr(P, "out of memory");
    return NULL;
  }
  tile_meta *m = (tile_meta *)block;
  tile_kernel_info *ks = (tile_kernel_info *)(block + koff);
  tile_param_info *ps = (tile_param_info *)(block + poff);
  tile_const_info *cs = (tile_const_info *)(block + coff);
  tile_derived_info *ds = (tile_derived_info *)(block + doff);
  snprintf(m->arch, sizeof m->arch, "%s", P->arch);
  m->nkernels = P->nkernels;
  m->kernels = ks;
  if (P->nparams) memcpy(ps, P->params, (size_t)P->nparams * sizeof *ps);
  if (P->nconsts) memcpy(cs, P->consts, (size_t)P->nconsts * sizeof *cs);
  if (P->nderived) memcpy(ds, P->derived, (size_t)P->nderived * sizeof *ds);
  for (int i = 0; i < P->nkernels; i++) {
    ks[i] = P->kernels[i];
    ks[i].params = ks[i].nparams ? ps + P->first_param[i] : NULL;
    ks[i].consts = ks[i].nconsts ? cs + P->first_const[i] : NULL;
    ks[i].derived = ks[i].nderived ? ds + P->first_derived[i] : NULL;
  }
  return m;
}

tile_meta *tile_meta_parse(const char *text, size_t len, char *err, size_t errcap) {
  rt_parser *P = calloc(1, sizeof *P);
  if (!P) {
    if (err && errcap) snprintf(err, errcap, "out of memory");
    return NULL;
  }
  P->p = text ? text : "";
  P->end = text ? text + len : P->p;
  P->err = err;
  P->errcap = errcap;
  if (err && errcap) err[0] = 0;
  tile_meta *m = rt_parse_lines(P) ? rt_pack(P) : NULL;
  free(P->kernels);
  free(P->first_param);
  free(P->params);
  free(P->first_const);
  free(P->consts);
  free(P->first_derived);
  free(P->derived);
  free(P);
  return m;
}

int tile_meta_num_kernels(const tile_meta *m) { return m ? m->nkernels : 0; }

const tile_kernel_info *tile_meta_kernel(const tile_meta *m, int i) {
  if (!m || i < 0 || i >= m->nkernels) return NULL;
  return &m->kernels[i];
}

void tile_meta_free(tile_meta *m) { free(m); }

const char *tile_kernel_const(const tile_kernel_info *k, const char *name) {
  if (!k || !name) return NULL;
  for (int i = 0; i < k->nconsts; i++)
    if (strcmp(k->consts[i].name, name) == 0) return k->consts[i].value;
  return NULL;
}

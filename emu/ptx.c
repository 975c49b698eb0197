/* ptx.c - the emulator's PTX parser: text -> EmModule (emu.h).
 *
 * Reads what tilec ships: LLVM NVPTX output with inline asm pasted in.  One
 * pass over a small tokenizer decodes every instruction into an EmIns with
 * its registers, symbols and labels resolved, so that exec.c never looks at
 * text again (ptx_op.c decodes the opcode words).  Branches may go forward,
 * so their labels are fixups resolved at the end of the function.
 *
 * Inline asm arrives as nested `{ }` blocks with their own `.reg`s and
 * labels (the same `DONE:` in many blocks), so names live in scopes: lookups
 * walk from the innermost scope outwards, and each scope's registers get
 * fresh indices in the function's one register file.
 *
 * Tolerance: an instruction exec does not run (wgmma, mbarrier, ...) is kept
 * as EM_UNSUPPORTED with its opcode text, its operands skipped if we cannot
 * read them, so that exec can name it if a kernel ever reaches it.  A
 * supported opcode whose operands merely exceed what EmIns can hold (a
 * special register exec does not model, a vector of 8) is downgraded the
 * same way, with the whole statement as its text.  Anything else malformed
 * is an error naming its line.
 *
 * The text need not be NUL-terminated (a NUL ends it) and nothing past `len`
 * is read; counts and sizes are capped so that no input allocates without
 * bound.  The module lives in a private arena; the parser's growable work
 * arrays are malloc'd and freed before it returns.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"
#include "tcgen05.h"

/* Module-wide caps on what a few bytes of text can make us allocate. */
enum {
  PX_MAX_REGS = 1 << 20,  /* registers, all functions together */
  PX_MAX_INS = 1 << 18,   /* instructions, all functions together */
  PX_MAX_INIT = 16 << 20, /* bytes of initialized variables */
  PX_MAX_DEPTH = 64,      /* nested { } in a body or an initializer */
  PX_MAX_FILES = 1 << 16, /* .file numbers */
  PX_MAX_VAR = 1 << 30,   /* bytes of a variable, of the parameters, of static .shared */
  PX_MAX_ALIGN = 1 << 16,
  PX_TEXT_MAX = 160,      /* statement text kept for a downgraded instruction */
  PX_BLOCK = 64 << 10,    /* arena block */
};

/* ---- arena ---- */

typedef struct Blk { struct Blk *next; size_t used, cap; max_align_t data[]; } Blk;
typedef struct Arena { Blk *head; } Arena;

/* Zeroed and aligned; a request that does not fit starts a new block (a
 * big one gets a block of its own). */
static void *ar_alloc(Arena *a, size_t n) {
  if (n > SIZE_MAX / 2) return NULL;
  n = (n + 15) & ~(size_t)15;
  Blk *b = a->head;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > PX_BLOCK ? n : PX_BLOCK;
    if (!(b = malloc(sizeof *b + cap))) return NULL;
    *b = (Blk){a->head, 0, cap};
    a->head = b;
  }
  void *p = (char *)b->data + b->used;
  b->used += n;
  return memset(p, 0, n);
}

static void ar_free(Arena *a) {
  for (Blk *b = a ? a->head : NULL, *nx; b; b = nx) {
    nx = b->next;
    free(b);
  }
  free(a);
}

/* ---- tables, indexed by the emu.h enums (the opcode's in ptx_op.c) ---- */

#define COUNT(a) ((int)(sizeof(a) / sizeof *(a)))

static const uint8_t type_size[] = {0, 1, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 2, 4, 4, 8, 8};
static const char *const sreg_names[] = {
    "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z",
    "%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z",
    "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%clock", "%clock64",
    "%lanemask_eq", "%lanemask_lt", "%lanemask_le", "%lanemask_gt", "%lanemask_ge",
    "%dynamic_smem_size", "%total_smem_size",
    "%cluster_ctarank", "%cluster_nctarank", "%clusterid.x", "%clusterid.y", "%clusterid.z",
    "%nclusterid.x", "%nclusterid.y", "%nclusterid.z", "%cluster_ctaid.x", "%cluster_ctaid.y",
    "%cluster_ctaid.z", "%cluster_nctaid.x", "%cluster_nctaid.y", "%cluster_nctaid.z", "%is_explicit_cluster"};
_Static_assert(COUNT(type_size) == ET_F32X2 + 1 && COUNT(sreg_names) == ESR_IS_EXPLICIT_CLUSTER + 1,
               "a table is out of step with emu.h");

/* Special registers exec does not model (prefixes): reading one downgrades
 * the instruction instead of failing the parse. */
static const char *const other_sregs[] = {
    "%globaltimer", "%clock_hi",
    "%pm", "%envreg", "%gridid", "%aggr_smem_size", "%reserved_smem", "%current_graph_exec"};


static bool has_prefix(const char *const *tab, int n, const char *s, int len) {
  for (int i = 0; i < n; i++)
    if ((size_t)len >= strlen(tab[i]) && !memcmp(s, tab[i], strlen(tab[i]))) return true;
  return false;
}

/* ---- parser state ---- */

enum { T_EOF, T_WORD, T_LABEL, T_STR, T_PUNCT, T_BAD };
typedef struct Tok { int kind, len, line; const char *s; /* into the text */ } Tok;

/* Names, in one table keyed by (kind, scope, name).  K_RANGE is a
 * `%r<N>` declaration, found by prefix; K_LPARAM a .param in a body or a
 * .func's return value, which exec cannot use. */
enum { K_REG, K_RANGE, K_LABEL, K_PARAM, K_LPARAM, K_GLOBAL, K_FUNC };
typedef struct Sym { const char *s; /* into the text; NULL: a free slot */ int len, scope, kind, val, count; } Sym;
typedef struct Map { Sym *tab; int cap, n; } Map;
/* A branch, its label resolved at the end of the function. */
typedef struct Fix { const char *s; int len, ins, arg, scope, line; } Fix;

enum { OP_OK, OP_BAD, OP_LIMIT }; /* an operand: read, malformed, beyond what EmIns holds */

typedef struct Px {
  const char *p, *end; /* the text not read yet */
  int line;
  Tok t;               /* the current token */
  char *err, tbuf[64], omsg[200];
  size_t errlen;
  bool failed;
  Arena *ar;
  /* the module (work arrays, copied into the arena at the end) */
  Map gmap;
  EmFunc *funcs;
  EmGlobal *globals;
  const char **files;
  uint64_t *vals, smem; /* initializer scratch; static .shared bytes so far */
  uint64_t local;       /* .local bytes so far (each thread's window, sys.c) */
  int *lparam, nlparam, caplparam; /* the function's call parameters, each a register (local_param) */
  int nfuncs, capfuncs, nglobals, capglobals, nfiles, capfiles, capvals, allregs, allins, allinit;
  /* the function being parsed; parent[scope] is the scope tree (-1 above the body) */
  Map fmap;
  EmIns *ins;
  EmType *rtype;
  const char **rname;
  EmParam *params;
  Fix *fix;
  int *parent, nins, capins, nregs, caprtype, caprname, nparams, capparams;
  int nscopes, capscopes, scope, depth, nfix, capfix, loc_line, loc_file;
} Px;

__attribute__((format(printf, 3, 4))) static bool perr(Px *P, int line, const char *fmt, ...) {
  if (P->failed) return false;
  P->failed = true;
  if (!P->err || !P->errlen) return false;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(P->err, P->errlen, "ptx:%d: %s", line, msg);
  return false;
}

/* An operand problem: whether it fails the parse depends on the opcode. */
__attribute__((format(printf, 3, 4))) static int oerr(Px *P, int res, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(P->omsg, sizeof P->omsg, fmt, ap);
  va_end(ap);
  return res;
}

/* A copy in the arena (n bytes, plus a NUL for strings). */
static void *dup(Px *P, const void *src, size_t n) {
  char *d = ar_alloc(P->ar, n + 1);
  if (!d) return perr(P, P->t.line, "out of memory"), NULL;
  return src && n ? memcpy(d, src, n) : d;
}
static const char *dup_str(Px *P, const char *s, int len) { return dup(P, s, (size_t)len); }

/* Make room for `need` elements in a malloc'd work array. */
static bool grow(Px *P, void *bufp, int *cap, int need, size_t elem) {
  if (need <= *cap) return true;
  if (need > INT_MAX / 4) return perr(P, P->t.line, "too many items");
  int nc = *cap > 8 ? *cap : 8;
  while (nc < need) nc *= 2;
  void **buf = bufp, *nb = realloc(*buf, (size_t)nc * elem);
  if (!nb) return perr(P, P->t.line, "out of memory");
  *buf = nb;
  *cap = nc;
  return true;
}

/* ---- names ---- */

static uint32_t hkey(int kind, int scope, const char *s, int len) {
  uint32_t h = 2166136261u ^ ((uint32_t)kind * 0x9e3779b1u) ^ ((uint32_t)scope * 0x85ebca6bu);
  for (int i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static Sym *map_find(const Map *m, int kind, int scope, const char *s, int len) {
  uint32_t mask = (uint32_t)m->cap - 1;
  for (uint32_t i = hkey(kind, scope, s, len) & mask; m->cap && m->tab[i].s; i = (i + 1) & mask) {
    Sym *e = &m->tab[i];
    if (e->kind == kind && e->scope == scope && e->len == len && !memcmp(e->s, s, (size_t)len)) return e;
  }
  return NULL;
}

static Sym *slot(Map *m, int kind, int scope, const char *s, int len) {
  uint32_t mask = (uint32_t)m->cap - 1, i = hkey(kind, scope, s, len) & mask;
  while (m->tab[i].s) i = (i + 1) & mask;
  return &m->tab[i];
}

/* Insert a name known to be absent; the table stays at most half full. */
static Sym *map_put(Px *P, Map *m, int kind, int scope, const char *s, int len, int val) {
  if (2 * (m->n + 1) > m->cap) {
    Map nm = {NULL, m->cap ? m->cap * 2 : 64, m->n};
    if (m->cap > INT_MAX / 4 || !(nm.tab = calloc((size_t)nm.cap, sizeof *nm.tab)))
      return perr(P, P->t.line, "out of memory"), NULL;
    for (int i = 0; i < m->cap; i++)
      if (m->tab[i].s) *slot(&nm, m->tab[i].kind, m->tab[i].scope, m->tab[i].s, m->tab[i].len) = m->tab[i];
    free(m->tab);
    *m = nm;
  }
  Sym *e = slot(m, kind, scope, s, len);
  *e = (Sym){s, len, scope, kind, val, 0};
  m->n++;
  return e;
}

/* The innermost declaration of a kind of name seen from `scope`. */
static Sym *in_scope(Px *P, int kind, int scope, const char *s, int len) {
  Sym *e = NULL;
  for (int sc = scope; sc >= 0 && !e; sc = P->parent[sc]) e = map_find(&P->fmap, kind, sc, s, len);
  return e;
}

/* A register: declared by that name, or %r12 within a `%r<N>` of a scope. */
static int find_reg(Px *P, const char *s, int len) {
  int k = len, n = 0;
  while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
  bool numbered = k > 0 && k < len && len - k <= 9 && !(s[k] == '0' && len - k > 1);
  for (int i = k; numbered && i < len; i++) n = n * 10 + (s[i] - '0');
  for (int sc = P->scope; sc >= 0; sc = P->parent[sc]) {
    Sym *e = map_find(&P->fmap, K_REG, sc, s, len);
    if (e) return e->val;
    if (numbered && (e = map_find(&P->fmap, K_RANGE, sc, s, k)) && n < e->count) return e->val + n;
  }
  return -1;
}

/* ---- tokens ---- */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_wordc(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '$' ||
         c == '%' || c == '.';
}

static void skip_space(Px *P) {
  while (P->p < P->end) {
    char c = *P->p;
    bool two = P->end - P->p >= 2;
    if (c == '\n') {
      P->line++;
      P->p++;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      P->p++;
    } else if (c == '/' && two && P->p[1] == '/') {
      while (P->p < P->end && *P->p != '\n') P->p++;
    } else if (c == '/' && two && P->p[1] == '*') {
      for (P->p += 2; P->p < P->end && !(*P->p == '*' && P->end - P->p >= 2 && P->p[1] == '/'); P->p++)
        if (*P->p == '\n') P->line++;
      P->p = P->end - P->p >= 2 ? P->p + 2 : P->end;
    } else {
      break;
    }
  }
}

/* A word is an identifier, a directive, a dotted opcode (with `::` inside
 * modifiers such as shared::cta) or a number (1.5e-3 keeps its sign); a
 * word followed directly by ':' is a label. */
static void scan_word(Px *P, Tok *t) {
  const char *s = P->p;
  bool decimal = is_digit(s[0]) && !(P->end - s >= 2 && s[0] == '0' && s[1] && strchr("xXfFdDbB", s[1]));
  while (P->p < P->end) {
    ptrdiff_t left = P->end - P->p;
    if (is_wordc(*P->p)) P->p++;
    else if (*P->p == ':' && left >= 3 && P->p[1] == ':' && is_wordc(P->p[2])) P->p += 2;
    else if ((*P->p == '+' || *P->p == '-') && decimal && (P->p[-1] | 0x20) == 'e' && left >= 2 && is_digit(P->p[1])) P->p++;
    else break;
  }
  t->kind = P->p - s > INT_MAX / 2 ? T_BAD : T_WORD;
  t->len = (int)(P->p - s);
  if (P->p < P->end && *P->p == ':') t->kind = T_LABEL, P->p++;
}

static void next(Px *P) {
  skip_space(P);
  Tok *t = &P->t;
  *t = (Tok){T_EOF, 0, P->line, P->p};
  if (P->p >= P->end) return;
  t->len = 1;
  if (is_wordc(*P->p)) {
    scan_word(P, t);
  } else if (*P->p == '"') {
    const char *q = ++P->p;
    while (P->p < P->end && *P->p != '"' && *P->p != '\n') P->p++;
    t->kind = T_BAD;
    if (P->p >= P->end || *P->p != '"' || P->p - q > INT_MAX / 2) return;
    *t = (Tok){T_STR, (int)(P->p++ - q), t->line, q};
  } else {
    t->kind = (*P->p > ' ' && *P->p < 0x7f) ? T_PUNCT : T_BAD;
    P->p++;
  }
}

static const char *tdesc(Px *P) {
  const Tok *t = &P->t;
  if (t->kind == T_EOF) return "the end of the text";
  if (t->kind == T_STR) return "a string";
  if (t->kind == T_BAD && t->s[0] == '"') return "an unterminated string";
  if (t->kind == T_BAD) snprintf(P->tbuf, sizeof P->tbuf, "byte 0x%02x", (unsigned char)t->s[0]);
  else snprintf(P->tbuf, sizeof P->tbuf, "'%.*s%s'", t->len > 40 ? 40 : t->len, t->s, t->kind == T_LABEL ? ":" : "");
  return P->tbuf;
}

static bool is_p(const Px *P, char c) { return P->t.kind == T_PUNCT && P->t.s[0] == c; }
static bool is_w(const Px *P, const char *w) { return P->t.kind == T_WORD && em_word_eq(P->t.s, P->t.len, w); }
static bool is_dir(const Px *P) { return P->t.kind == T_WORD && P->t.s[0] == '.'; }
static bool is_ident(const Px *P) { return P->t.kind == T_WORD && P->t.s[0] != '.' && !is_digit(P->t.s[0]); }

static bool expect(Px *P, char c, const char *what) {
  if (is_p(P, c)) return next(P), true;
  return perr(P, P->t.line, "expected '%c' %s, found %s", c, what, tdesc(P));
}

/* Directives such as .loc and .target end with their line. */
static void skip_line(Px *P, int line) {
  while (P->t.kind != T_EOF && P->t.line == line) next(P);
}

static void skip_to_semi(Px *P) {
  while (P->t.kind != T_EOF && !is_p(P, ';')) next(P);
}

/* The EmType of a `.b32`-style word, or 0. */
static int type_of(const Px *P) {
  int k = is_dir(P) ? em_word_find(em_ptx_op_type_names, COUNT(em_ptx_op_type_names), P->t.s + 1, P->t.len - 1) : -1;
  return k > 0 ? k : 0;
}

/* ---- numbers ---- */

static unsigned digit_val(char c) {
  if (is_digit(c)) return (unsigned)(c - '0');
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (unsigned)((c | 0x20) - 'a' + 10);
  return 99;
}

/* PTX integers: decimal, 0x hex, 0b binary or 0-led octal, with an optional U. */
static bool parse_uint(const char *s, int len, uint64_t *out) {
  if (len > 1 && (s[len - 1] | 0x20) == 'u') len--;
  if (len <= 0) return false;
  unsigned base = 10;
  int i = 0;
  if (len > 2 && s[0] == '0' && (s[1] | 0x20) == 'x') base = 16, i = 2;
  else if (len > 2 && s[0] == '0' && (s[1] | 0x20) == 'b') base = 2, i = 2;
  else if (len > 1 && s[0] == '0') base = 8, i = 1;
  uint64_t v = 0;
  for (; i < len; i++) {
    unsigned d = digit_val(s[i]);
    if (d >= base || v > (UINT64_MAX - d) / base) return false;
    v = v * base + d;
  }
  *out = v;
  return true;
}

/* An immediate: integer, 0fXXXXXXXX (f32 bits), 0dX{16} (f64 bits) or a
 * decimal float (kept as f64 bits; exec converts to the instruction's type). */
static bool parse_number(const char *s, int len, bool neg, EmArg *a) {
  uint64_t u = 0;
  a->kind = EA_IMM;
  if (len >= 2 && s[0] == '0' && ((s[1] | 0x20) == 'f' || (s[1] | 0x20) == 'd')) {
    int nd = (s[1] | 0x20) == 'f' ? 8 : 16;
    if (len != 2 + nd) return false;
    for (int i = 2; i < len; i++) {
      if (digit_val(s[i]) > 15) return false;
      u = u << 4 | digit_val(s[i]);
    }
    a->imm = (int64_t)(neg ? u ^ 1ull << (nd * 4 - 1) : u);
    a->fimm = true;
    a->f32imm = nd == 8;
    return true;
  }
  if (parse_uint(s, len, &u)) return a->imm = (int64_t)(neg ? 0 - u : u), true;
  char buf[64], *e; /* strtod needs a terminated copy, and only decimal syntax with a '.' or exponent */
  bool frac = false;
  if (len >= (int)sizeof buf) return false;
  for (int i = 0; i < len; i++) {
    if (!is_digit(s[i]) && !strchr(".eE+-", s[i])) return false;
    frac |= !is_digit(s[i]);
  }
  if (!frac) return false; /* an integer too large */
  memcpy(buf, s, (size_t)len);
  buf[len] = 0;
  double d = strtod(buf, &e);
  if (*e || e == buf) return false;
  d = neg ? -d : d;
  memcpy(&u, &d, sizeof u);
  a->imm = (int64_t)u;
  a->fimm = true;
  return true;
}

static bool num_u32(Px *P, uint32_t *out, uint32_t max, const char *what) {
  uint64_t v;
  if (P->t.kind != T_WORD || !parse_uint(P->t.s, P->t.len, &v) || v > max)
    return perr(P, P->t.line, "expected %s (at most %u), found %s", what, max, tdesc(P));
  *out = (uint32_t)v;
  next(P);
  return true;
}

static bool align_of(Px *P, uint32_t *align) {
  next(P); /* .align */
  if (!num_u32(P, align, PX_MAX_ALIGN, "an alignment")) return false;
  if (!*align || (*align & (*align - 1))) return perr(P, P->t.line, "alignment %u is not a power of two", *align);
  return true;
}

/* Array dimensions `[N][M]...`; `[]` (first only) where unsized is given. */
static bool dims(Px *P, uint64_t *count, bool *unsized) {
  *count = 1;
  for (bool first = true; is_p(P, '['); first = false) {
    uint32_t n;
    next(P);
    if (is_p(P, ']') && first && unsized) *unsized = true;
    else if (!num_u32(P, &n, PX_MAX_VAR, "an array size")) return false;
    else if ((*count *= n) > PX_MAX_VAR) return perr(P, P->t.line, "array larger than %d bytes", PX_MAX_VAR);
    if (!expect(P, ']', "after an array size")) return false;
  }
  return true;
}

/* ---- declarations ---- */

/* `{1, 2, {3}}` or `5` into P->vals; returns the count, or -1. */
static int init_list(Px *P, EmType ty, uint64_t max) {
  int n = 0, depth = 0;
  for (;;) {
    if (is_p(P, '{')) {
      if (++depth > PX_MAX_DEPTH) return perr(P, P->t.line, "initializer nested too deeply"), -1;
      next(P);
      continue;
    }
    bool neg = is_p(P, '-');
    EmArg a = {0};
    if (neg) next(P);
    if (P->t.kind != T_WORD || !is_digit(P->t.s[0]) || !parse_number(P->t.s, P->t.len, neg, &a))
      return perr(P, P->t.line, "unsupported initializer %s", tdesc(P)), -1;
    if (a.fimm && (a.f32imm ? type_size[ty] != 4 : ty != ET_F64)) /* bits exec would have to convert */
      return perr(P, P->t.line, "float initializer of a %s variable", em_ptx_op_type_names[ty]), -1;
    if ((uint64_t)n >= max || !grow(P, &P->vals, &P->capvals, n + 1, sizeof *P->vals))
      return perr(P, P->t.line, "too many initializers"), -1;
    P->vals[n++] = (uint64_t)a.imm;
    next(P);
    while (depth > 0 && is_p(P, '}')) depth--, next(P);
    if (!depth || !is_p(P, ',')) break;
    next(P);
  }
  if (depth) return perr(P, P->t.line, "expected ',' or '}' in an initializer, found %s", tdesc(P)), -1;
  return n;
}

/* var = space { ".align" N | ".vN" | type } NAME dims [ "=" init ] ";"
 * with the space word the current token.  Module-wide even when declared in
 * a body; a static .shared one gets its offset in the CTA window here. */
static bool var_decl(Px *P, EmSpace sp, bool ext) {
  uint32_t align = 0, vec = 1;
  int ty = 0;
  for (next(P); is_dir(P);) {
    if (is_w(P, ".align")) {
      if (!align_of(P, &align)) return false;
      continue;
    }
    if (is_w(P, ".v2") || is_w(P, ".v4") || is_w(P, ".v8")) vec = (uint32_t)(P->t.s[2] - '0');
    else if (type_of(P)) ty = type_of(P);
    else return perr(P, P->t.line, "unexpected %s in a variable declaration", tdesc(P));
    next(P);
  }
  if (!ty || !is_ident(P)) return perr(P, P->t.line, "expected a type and a variable name, found %s", tdesc(P));
  Tok name = P->t;
  uint64_t count, esz = (uint64_t)type_size[ty] * vec;
  bool unsized = false;
  next(P);
  if (!dims(P, &count, &unsized)) return false;
  uint64_t size = unsized ? 0 : count * esz;
  uint8_t *init = NULL;
  if (is_p(P, '=')) {
    next(P);
    int n = init_list(P, (EmType)ty, unsized ? PX_MAX_INIT / type_size[ty] : count * vec);
    if (n < 0) return false;
    if (unsized) size = ((uint64_t)n + vec - 1) / vec * esz;
    if (size > (uint64_t)(PX_MAX_INIT - P->allinit)) return perr(P, name.line, "initialized variables over %d bytes", PX_MAX_INIT);
    P->allinit += (int)size;
    if (!(init = dup(P, NULL, size))) return false;
    for (int i = 0; i < n; i++)
      for (unsigned b = 0; b < type_size[ty]; b++) init[(size_t)i * type_size[ty] + b] = (uint8_t)(P->vals[i] >> (8 * b));
  } else if (unsized && !ext) {
    return perr(P, name.line, "array '%.*s' has no size", name.len, name.s);
  }
  if (!expect(P, ';', "after a variable declaration")) return false;
  if (map_find(&P->gmap, K_GLOBAL, -1, name.s, name.len))
    return perr(P, name.line, "'%.*s' declared twice", name.len, name.s);
  if (!grow(P, &P->globals, &P->capglobals, P->nglobals + 1, sizeof *P->globals)) return false;
  EmGlobal *g = &P->globals[P->nglobals];
  *g = (EmGlobal){.name = dup_str(P, name.s, name.len), .space = sp, .size = (uint32_t)size,
                  .align = align ? align : (uint32_t)esz, .is_extern = ext, .init = init};
  if (sp == ES_SHARED && !ext) { /* statics in order; the extern array goes after them all */
    g->offset = (uint32_t)((P->smem + g->align - 1) / g->align * g->align);
    if ((P->smem = g->offset + size) > PX_MAX_VAR) return perr(P, name.line, "static shared memory over %d bytes", PX_MAX_VAR);
  }
  if (sp == ES_LOCAL) { /* each thread's local window: in order, aligned */
    g->offset = (uint32_t)((P->local + g->align - 1) / g->align * g->align);
    if ((P->local = g->offset + size) > PX_MAX_VAR) return perr(P, name.line, "local memory over %d bytes", PX_MAX_VAR);
  }
  return map_put(P, &P->gmap, K_GLOBAL, -1, name.s, name.len, P->nglobals++) != NULL;
}

/* param = ".param" { ".align" N | ".ptr" | space | type } NAME dims
 * An .align before .ptr aligns the parameter; after it, it describes the
 * pointee.  A .func's return values (ret) are only named, so that
 * instructions using them become EM_UNSUPPORTED. */
static bool param_decl(Px *P, bool ret) {
  if (!is_w(P, ".param")) return perr(P, P->t.line, "expected '.param', found %s", tdesc(P));
  int ty = 0;
  uint32_t align = 0, a;
  bool ptr = false;
  for (next(P); is_dir(P);) {
    if (is_w(P, ".align")) {
      if (!align_of(P, &a)) return false;
      align = ptr ? align : a;
      continue;
    }
    if (is_w(P, ".ptr")) ptr = true;
    else if (type_of(P)) ty = type_of(P);
    else if (!ptr) return perr(P, P->t.line, "unexpected %s in a parameter", tdesc(P));
    next(P); /* after .ptr: the pointee's state space */
  }
  if (!ty || !is_ident(P)) return perr(P, P->t.line, "expected a type and a parameter name, found %s", tdesc(P));
  Tok name = P->t;
  uint64_t count;
  next(P);
  if (!dims(P, &count, NULL)) return false;
  if (map_find(&P->fmap, K_PARAM, -1, name.s, name.len) || map_find(&P->fmap, K_LPARAM, 0, name.s, name.len))
    return perr(P, name.line, "parameter '%.*s' declared twice", name.len, name.s);
  if (ret) return map_put(P, &P->fmap, K_LPARAM, 0, name.s, name.len, 0) != NULL;
  align = align ? align : type_size[ty];
  EmParam *last = P->nparams ? &P->params[P->nparams - 1] : NULL;
  uint64_t off = last ? last->offset + (uint64_t)last->size : 0, size = count * type_size[ty];
  off = (off + align - 1) / align * align;
  if (off + size > PX_MAX_VAR) return perr(P, name.line, "parameters larger than %d bytes", PX_MAX_VAR);
  if (!grow(P, &P->params, &P->capparams, P->nparams + 1, sizeof *P->params)) return false;
  P->params[P->nparams] = (EmParam){dup_str(P, name.s, name.len), (EmType)ty, (uint32_t)size, align, (uint32_t)off};
  return map_put(P, &P->fmap, K_PARAM, -1, name.s, name.len, P->nparams++) != NULL;
}

/* "(" [ param { "," param } ] ")" */
static bool param_list(Px *P, bool ret) {
  for (next(P); !is_p(P, ')');) {
    if (!param_decl(P, ret)) return false;
    if (is_p(P, ',')) next(P);
    else if (!is_p(P, ')')) return perr(P, P->t.line, "expected ',' or ')' after a parameter, found %s", tdesc(P));
  }
  next(P);
  return true;
}

/* NAME (count 0) or NAME<count> in the current scope. */
static bool declare_reg(Px *P, Tok name, int count, EmType ty) {
  int kind = count ? K_RANGE : K_REG, n = count ? count : 1;
  if (map_find(&P->fmap, kind, P->scope, name.s, name.len))
    return perr(P, name.line, "register '%.*s' declared twice", name.len, name.s);
  if (n > PX_MAX_REGS - P->allregs) return perr(P, name.line, "more than %d registers", PX_MAX_REGS);
  if (!grow(P, &P->rtype, &P->caprtype, P->nregs + n, sizeof *P->rtype) ||
      !grow(P, &P->rname, &P->caprname, P->nregs + n, sizeof *P->rname))
    return false;
  for (int i = 0; i < n; i++) {
    char buf[48];
    int len = count ? snprintf(buf, sizeof buf, "%.*s%d", name.len > 30 ? 30 : name.len, name.s, i) : 0;
    P->rtype[P->nregs + i] = ty;
    P->rname[P->nregs + i] = count ? dup_str(P, buf, len) : dup_str(P, name.s, name.len);
  }
  Sym *e = P->failed ? NULL : map_put(P, &P->fmap, kind, P->scope, name.s, name.len, P->nregs);
  if (!e) return false;
  e->count = count;
  P->nregs += n;
  P->allregs += n;
  return true;
}

/* ".reg" type NAME [ "<" N ">" ] { "," NAME [ "<" N ">" ] } ";" */
static bool reg_decl(Px *P) {
  next(P);
  int ty = type_of(P);
  if (!ty) return perr(P, P->t.line, "unsupported register type %s", tdesc(P));
  for (next(P);; next(P)) {
    if (!is_ident(P)) return perr(P, P->t.line, "expected a register name, found %s", tdesc(P));
    Tok name = P->t;
    uint32_t count = 0;
    next(P);
    if (is_p(P, '<')) {
      next(P);
      if (!num_u32(P, &count, PX_MAX_REGS, "a register count") || !expect(P, '>', "after a register count")) return false;
      if (!count) return perr(P, name.line, "register range '%.*s<0>' is empty", name.len, name.s);
    }
    if (!declare_reg(P, name, (int)count, (EmType)ty)) return false;
    if (!is_p(P, ',')) return expect(P, ';', "after a register declaration");
  }
}

/* ---- instructions ---- */

/* A name as a value: special register, register, parameter or global. */
static int value_name(Px *P, Tok t, EmArg *a) {
  int k, n = t.len > 40 ? 40 : t.len;
  Sym *e;
  if (t.s[0] == '%' && (k = em_word_find(sreg_names, COUNT(sreg_names), t.s, t.len)) >= 0) *a = (EmArg){.kind = EA_SREG, .reg = k, .sym = -1};
  else if ((k = find_reg(P, t.s, t.len)) >= 0) *a = (EmArg){.kind = EA_REG, .reg = k, .sym = -1};
  else if (in_scope(P, K_LPARAM, P->scope, t.s, t.len)) return oerr(P, OP_LIMIT, "call parameter '%.*s'", n, t.s);
  else if ((e = map_find(&P->fmap, K_PARAM, -1, t.s, t.len))) *a = (EmArg){.kind = EA_SYM, .param = true, .reg = -1, .sym = e->val};
  else if ((e = map_find(&P->gmap, K_GLOBAL, -1, t.s, t.len))) *a = (EmArg){.kind = EA_SYM, .reg = -1, .sym = e->val};
  else if (t.s[0] == '%' && has_prefix(other_sregs, COUNT(other_sregs), t.s, t.len)) return oerr(P, OP_LIMIT, "special register '%.*s'", n, t.s);
  else return oerr(P, OP_BAD, "unknown name '%.*s'", n, t.s);
  return OP_OK;
}

/* "[" [ base ] [ ("+" | "-") ["-"] N ] "]": base a register, a parameter,
 * a global or absent (an absolute address). */
static int vec_operand(Px *P, EmArg *a, bool lng);

static int addr_operand(Px *P, EmArg *a) {
  bool base = false;
  next(P);
  if (P->t.kind == T_WORD && !is_digit(P->t.s[0])) {
    int r = value_name(P, P->t, a);
    if (r != OP_OK) return r;
    if (a->kind == EA_SREG) return oerr(P, OP_BAD, "special register used as an address");
    base = true;
    next(P);
  }
  a->kind = EA_ADDR;
  if (is_p(P, '+') || is_p(P, '-') || !base) {
    bool neg = base && is_p(P, '-');
    EmArg n = {0};
    if (base) next(P);
    if (is_p(P, '-')) neg = !neg, next(P);
    if (P->t.kind != T_WORD || !parse_number(P->t.s, P->t.len, neg, &n) || n.fimm)
      return oerr(P, OP_BAD, "expected an address offset, found %s", tdesc(P));
    a->imm = n.imm;
    next(P);
  }
  if (base && is_p(P, ',')) { /* [map, {c0, c1}]: a tensor and its coordinates */
    next(P);
    EmArg v = {0};
    int r = is_p(P, '{') ? vec_operand(P, &v, false) : oerr(P, OP_BAD, "expected '{' in a tensor address, found %s", tdesc(P));
    if (r != OP_OK) return r;
    a->kind = EA_TADDR;
    a->nvec = v.nvec;
    memcpy(a->vec, v.vec, sizeof a->vec);
  }
  if (!is_p(P, ']')) return oerr(P, OP_BAD, "expected ']' in an address, found %s", tdesc(P));
  next(P);
  return OP_OK;
}

/* "{" elem { "," elem } "}", elem a register, `_` or an immediate: up to 4
 * in vec, or (`lng`: wgmma's accumulators) up to 255 as an EA_LVEC in the
 * arena. Immediates (st.shared.v4.b32 [a], {0, 0, 0, 0}: LLVM's stores of a
 * constant) are EM_VEC_IMM in vec, their value in a->imm: one value a
 * vector, what LLVM writes; two different ones are refused, saying so. */
static int vec_operand(Px *P, EmArg *a, bool lng) {
  int32_t v[255];
  int n = 0;
  bool have_imm = false;
  a->kind = EA_VEC;
  do {
    next(P);
    int r;
    bool neg = is_p(P, '-');
    if (neg) next(P);
    if (P->t.kind == T_WORD && is_digit(P->t.s[0]) && !lng) {
      EmArg k = {0};
      if (!parse_number(P->t.s, P->t.len, neg, &k))
        return oerr(P, OP_BAD, "bad number '%.*s' in a vector", P->t.len > 40 ? 40 : P->t.len, P->t.s);
      if (have_imm && (k.imm != a->imm || k.fimm != a->fimm || k.f32imm != a->f32imm))
        return oerr(P, OP_LIMIT, "a vector with two different immediates");
      have_imm = true;
      a->imm = k.imm, a->fimm = k.fimm, a->f32imm = k.f32imm;
      r = EM_VEC_IMM;
    } else {
      r = is_w(P, "_") ? -1 : P->t.kind == T_WORD ? find_reg(P, P->t.s, P->t.len) : -2;
      if (neg || r < -1 || (r < 0 && !is_w(P, "_")))
        return oerr(P, OP_BAD, "expected a register in a vector, found %s", tdesc(P));
    }
    if (n == (lng ? 255 : 4)) return oerr(P, OP_LIMIT, "a vector of more than %d", lng ? 255 : 4);
    v[n++] = r;
    next(P);
  } while (is_p(P, ','));
  if (!is_p(P, '}')) return oerr(P, OP_BAD, "expected '}' after a vector, found %s", tdesc(P));
  next(P);
  a->nvec = (uint8_t)n;
  if (n <= 4) {
    memcpy(a->vec, v, sizeof *v * (size_t)n);
    return OP_OK;
  }
  int32_t *lv = dup(P, v, sizeof *v * (size_t)n);
  if (!lv) return OP_BAD;
  a->kind = EA_LVEC;
  a->lv = lv;
  return OP_OK;
}

/* One operand (two for `%p1|%p2`), appended to in->a. */
static int operand(Px *P, EmIns *in) {
  if (in->nargs >= EM_MAX_ARGS) return oerr(P, OP_LIMIT, "more than %d operands", EM_MAX_ARGS);
  EmArg *a = &in->a[in->nargs++];
  a->reg = a->sym = -1;
  if (is_p(P, '{')) return vec_operand(P, a, in->opc == EM_WGMMA || in->opc == EM_TC_LD || in->opc == EM_TC_ST);
  if (is_p(P, '[')) return addr_operand(P, a);
  char sign = is_p(P, '!') || is_p(P, '-') ? P->t.s[0] : 0;
  if (sign) next(P);
  Tok t = P->t;
  if (t.kind != T_WORD) return oerr(P, OP_BAD, "expected an operand, found %s", tdesc(P));
  next(P);
  if (is_digit(t.s[0]))
    return sign != '!' && parse_number(t.s, t.len, sign == '-', a) ? OP_OK
           : oerr(P, OP_BAD, "bad number '%.*s'", t.len > 40 ? 40 : t.len, t.s);
  if (sign == '-' || (sign && in->opc == EM_BRA)) return oerr(P, OP_BAD, "'%c' before '%.*s'", sign, t.len > 40 ? 40 : t.len, t.s);
  if (em_word_eq(t.s, t.len, "_")) return a->kind = EA_SINK, OP_OK;
  if (in->opc == EM_BRA && !(in->sub == ESB_IDX && in->nargs == 1)) { /* resolved at the end of the function
                                                                       (brx.idx: the index register first) */
    if (!grow(P, &P->fix, &P->capfix, P->nfix + 1, sizeof *P->fix)) return OP_BAD;
    P->fix[P->nfix++] = (Fix){t.s, t.len, P->nins, in->nargs - 1, P->scope, t.line};
    return a->kind = EA_LABEL, OP_OK;
  }
  int r = value_name(P, t, a);
  if (r != OP_OK) return r;
  if (sign && a->kind != EA_REG) return oerr(P, OP_BAD, "'!' before '%.*s'", t.len > 40 ? 40 : t.len, t.s);
  a->neg = sign == '!';
  if (a->kind != EA_REG || !is_p(P, '|')) return OP_OK;
  next(P); /* setp.lt.s32 %p1|%p2, ...: two destinations */
  return (r = operand(P, in)) != OP_OK || in->a[in->nargs - 1].kind == EA_REG ? r
         : oerr(P, OP_BAD, "expected a register after '|'");
}

/* The statement's text, blanks squeezed: the report for a downgraded one. */
static const char *stmt_text(Px *P, const char *s, const char *e) {
  char buf[PX_TEXT_MAX];
  int n = 0;
  for (; s < e && n < PX_TEXT_MAX - 4; s++) {
    char c = (*s == '\n' || *s == '\t' || *s == '\r') ? ' ' : *s;
    if (c != ' ' || (n && buf[n - 1] != ' ')) buf[n++] = c;
  }
  if (s < e) memcpy(buf + n, "...", 3), n += 3;
  while (n && buf[n - 1] == ' ') n--;
  return dup_str(P, buf, n);
}

static int call_operands(Px *P, EmIns *in); /* (with local_param, below) */
static int sys_fixup(Px *P, EmIns *in);

/* instruction = [ "@" ["!"] reg ] opcode [ operand { "," operand } ] ";" */
static bool instruction(Px *P) {
  if (++P->allins > PX_MAX_INS) return perr(P, P->t.line, "more than %d instructions", PX_MAX_INS);
  if (!grow(P, &P->ins, &P->capins, P->nins + 1, sizeof *P->ins)) return false;
  EmIns *in = &P->ins[P->nins];
  *in = (EmIns){.guard = -1, .vec = 1, .line = P->loc_line, .file = P->loc_file, .ptx_line = P->t.line};
  if (is_p(P, '@')) {
    next(P);
    if (is_p(P, '!')) in->guard_neg = true, next(P);
    if (P->t.kind != T_WORD || (in->guard = find_reg(P, P->t.s, P->t.len)) < 0)
      return perr(P, P->t.line, "expected a predicate register after '@', found %s", tdesc(P));
    next(P);
  }
  if (P->t.kind != T_WORD || P->t.s[0] == '.') return perr(P, P->t.line, "expected an instruction, found %s", tdesc(P));
  Tok op = P->t;
  int r = OP_OK, n = op.len > 60 ? 60 : op.len;
  next(P);
  em_ptx_op_decode_opcode(op.s, op.len, in);
  if (!(in->text = dup_str(P, op.s, op.len))) return false;
  if (in->opc == EM_CALL) r = call_operands(P, in);
  while (r == OP_OK && !is_p(P, ';')) {
    if ((r = operand(P, in)) == OP_OK && !is_p(P, ';') && !is_p(P, ','))
      r = oerr(P, OP_BAD, "expected ',' or ';' after an operand, found %s", tdesc(P));
    if (r == OP_OK && is_p(P, ',')) next(P);
  }
  if (r == OP_OK && in->opc == EM_MMA && !em_ptx_op_mma_operands(in))
    r = oerr(P, OP_BAD, "expected {d0, d1, d2, d3}, {a0, a1, a2, a3}, {b0, b1}, {c0, c1, c2, c3}");
  const char *why = r == OP_OK ? em_ptx_async_operands(in) : NULL;
  if (r == OP_OK && !why) why = em_ptx_tc_operands(in);
  if (why) r = oerr(P, OP_BAD, "%s", why);
  if (r == OP_OK) r = sys_fixup(P, in);
  if (P->failed) return false;
  if (r == OP_BAD && in->opc != EM_UNSUPPORTED) return perr(P, op.line, "%.*s: %s", n, op.s, P->omsg);
  if (r != OP_OK) { /* kept operand-less, for exec to name if it runs */
    while (P->nfix && P->fix[P->nfix - 1].ins == P->nins) P->nfix--;
    in->nargs = 0;
    skip_to_semi(P);
    if (in->opc != EM_UNSUPPORTED && !(in->text = stmt_text(P, op.s, P->t.s))) return false;
    in->opc = EM_UNSUPPORTED;
  }
  if (!expect(P, ';', "after an instruction")) return false;
  P->nins++;
  return true;
}

/* ---- functions ---- */

static bool push_scope(Px *P) {
  if (P->depth >= PX_MAX_DEPTH) return perr(P, P->t.line, "blocks nested deeper than %d", PX_MAX_DEPTH);
  if (!grow(P, &P->parent, &P->capscopes, P->nscopes + 1, sizeof *P->parent)) return false;
  P->parent[P->nscopes] = P->scope;
  P->scope = P->nscopes++;
  P->depth++;
  return true;
}

/* ".loc FILE LINE COL [, options]": the options run to the end of the line. */
static bool loc(Px *P) {
  int line = P->t.line;
  uint32_t f, l;
  next(P);
  if (!num_u32(P, &f, INT_MAX, "a file number") || !num_u32(P, &l, INT_MAX, "a line number")) return false;
  P->loc_file = (int)f;
  P->loc_line = (int)l;
  skip_line(P, line);
  return true;
}

/* A .param in a body (an argument or the return value of a call): a
 * register of its block, which st.param / ld.param on it move to and from
 * (instruction) and the call reads (call_operands). */
static bool local_param(Px *P) {
  Tok name = {0};
  int ty = 0;
  for (; P->t.kind != T_EOF && !is_p(P, ';'); next(P)) {
    if (is_ident(P) && !name.s) name = P->t;
    else if (!ty) ty = type_of(P);
  }
  if (!name.s || !expect(P, ';', "after a parameter")) return perr(P, P->t.line, "expected a parameter name");
  if (find_reg(P, name.s, name.len) >= 0 && map_find(&P->fmap, K_REG, P->scope, name.s, name.len)) return true;
  if (!grow(P, &P->lparam, &P->caplparam, P->nlparam + 1, sizeof *P->lparam)) return false;
  P->lparam[P->nlparam++] = P->nregs;
  return declare_reg(P, name, 0, (EmType)(ty ? ty : ET_B64));
}

static bool is_lparam(const Px *P, int reg) {
  for (int i = 0; i < P->nlparam; i++)
    if (P->lparam[i] == reg) return true;
  return false;
}

/* call[.uni] [(ret),] callee [, (arg, ...)]: the call's .param registers
 * (EM_CALL in emu.h); rank 1 marks vprintf. */
static int call_operands(Px *P, EmIns *in) {
  in->a[0] = (EmArg){.kind = EA_SINK, .reg = -1, .sym = -1};
  in->nargs = 1;
  if (is_p(P, '(')) {
    next(P);
    int r = is_ident(P) ? find_reg(P, P->t.s, P->t.len) : -1;
    if (r < 0) return oerr(P, OP_BAD, "expected the call's return parameter, found %s", tdesc(P));
    in->a[0] = (EmArg){.kind = EA_REG, .reg = r, .sym = -1};
    next(P);
    if (!is_p(P, ')')) return oerr(P, OP_BAD, "expected ')' after the return parameter, found %s", tdesc(P));
    next(P);
    if (!is_p(P, ',')) return oerr(P, OP_BAD, "expected ',' after the return parameter, found %s", tdesc(P));
    next(P);
  }
  if (!is_ident(P)) return oerr(P, OP_BAD, "expected the function a call calls, found %s", tdesc(P));
  Tok callee = P->t;
  char text[80];
  snprintf(text, sizeof text, "call %.*s", callee.len > 60 ? 60 : callee.len, callee.s);
  if (!(in->text = dup_str(P, text, (int)strlen(text)))) return OP_BAD;
  in->rank = em_word_eq(callee.s, callee.len, "vprintf");
  next(P);
  if (!is_p(P, ',')) return OP_OK;
  next(P);
  if (!is_p(P, '(')) return oerr(P, OP_LIMIT, "a call through a prototype");
  for (next(P); !is_p(P, ')'); next(P)) {
    int r = is_ident(P) ? find_reg(P, P->t.s, P->t.len) : -1;
    if (r < 0) return oerr(P, OP_BAD, "expected a call parameter, found %s", tdesc(P));
    if (in->nargs >= EM_MAX_ARGS) return oerr(P, OP_LIMIT, "a call with more than %d arguments", EM_MAX_ARGS - 1);
    in->a[in->nargs++] = (EmArg){.kind = EA_REG, .reg = r, .sym = -1};
    next(P);
    if (!is_p(P, ',')) break;
  }
  if (!is_p(P, ')')) return oerr(P, OP_BAD, "expected ')' after the call's arguments, found %s", tdesc(P));
  next(P);
  return is_p(P, ';') ? OP_OK : oerr(P, OP_LIMIT, "a call through a prototype");
}

/* The parser's part of sys.c: st.param / ld.param on a call's parameter
 * become movs, and what sys.c runs is marked EMM_SYS. */
static int sys_fixup(Px *P, EmIns *in) {
  if ((in->opc == EM_ST || in->opc == EM_LD) && in->space == ES_PARAM) {
    EmArg *ad = &in->a[in->opc == EM_ST ? 0 : 1];
    if (in->nargs == 2 && ad->kind == EA_ADDR && ad->reg >= 0 && is_lparam(P, ad->reg)) {
      if (ad->imm || in->vec > 1) return oerr(P, OP_LIMIT, "a part of a call parameter");
      *ad = (EmArg){.kind = EA_REG, .reg = ad->reg, .sym = -1};
      in->opc = EM_MOV;
      in->space = ES_GENERIC;
    }
  }
  bool sys = in->opc == EM_CALL || in->opc == EM_TRAP || in->space == ES_LOCAL;
  for (int i = 0; i < in->nargs; i++) {
    const EmArg *a = &in->a[i];
    if ((a->kind == EA_SYM || a->kind == EA_ADDR) && !a->param && a->sym >= 0 && a->sym < P->nglobals &&
        P->globals[a->sym].space == ES_LOCAL)
      sys = true;
  }
  if (sys) in->mod |= EMM_SYS;
  return OP_OK;
}

/* "LABEL: .branchtargets L0, L1, ...;" (brx.idx's table): a branch over
 * the table, where LABEL points, then one branch to each target, so that
 * brx.idx %r, LABEL runs LABEL + 1 + %r (exec checks %r against the
 * table's size, which the first branch's target gives). */
static bool add_bra(Px *P, const char *s, int len, int line) {
  if (++P->allins > PX_MAX_INS) return perr(P, line, "more than %d instructions", PX_MAX_INS);
  if (!grow(P, &P->ins, &P->capins, P->nins + 1, sizeof *P->ins)) return false;
  EmIns *in = &P->ins[P->nins];
  *in = (EmIns){.opc = EM_BRA, .guard = -1, .vec = 1, .line = P->loc_line, .file = P->loc_file, .ptx_line = line,
                .nargs = 1, .a[0] = {.kind = EA_LABEL, .sym = -1}};
  if (!(in->text = dup_str(P, "bra", 3))) return false;
  if (s) { /* resolved at the end of the function */
    if (!grow(P, &P->fix, &P->capfix, P->nfix + 1, sizeof *P->fix)) return false;
    P->fix[P->nfix++] = (Fix){s, len, P->nins, 0, P->scope, line};
  }
  P->nins++;
  return true;
}

static bool branch_targets(Px *P) {
  int line = P->t.line, over = P->nins;
  if (!add_bra(P, NULL, 0, line)) return false;
  for (next(P);; next(P)) {
    if (P->t.kind != T_WORD) return perr(P, P->t.line, "expected a label in .branchtargets, found %s", tdesc(P));
    if (!add_bra(P, P->t.s, P->t.len, P->t.line)) return false;
    next(P);
    if (!is_p(P, ',')) break;
  }
  P->ins[over].a[0].imm = P->nins; /* falling into the table skips it */
  return expect(P, ';', "after .branchtargets");
}

static bool body_directive(Px *P) {
  static const struct { const char *w; EmSpace sp; } vars[] = {
      {".shared", ES_SHARED}, {".global", ES_GLOBAL}, {".const", ES_CONST}, {".local", ES_LOCAL}};
  if (is_w(P, ".reg")) return reg_decl(P);
  if (is_w(P, ".loc")) return loc(P);
  if (is_w(P, ".param")) return local_param(P);
  if (is_w(P, ".pragma")) return skip_to_semi(P), expect(P, ';', "after .pragma");
  if (is_w(P, ".branchtargets")) return branch_targets(P);
  for (int i = 0; i < COUNT(vars); i++)
    if (is_w(P, vars[i].w)) return var_decl(P, vars[i].sp, false);
  return perr(P, P->t.line, "unsupported directive %s in a function body", tdesc(P));
}

/* body = "{" { "{" | "}" | LABEL ":" | directive | instruction } "}" */
static bool body(Px *P) {
  if (!push_scope(P)) return false;
  for (next(P); !P->failed;) {
    Tok t = P->t;
    if (t.kind == T_EOF) return perr(P, t.line, "unexpected end of the text in a function body");
    if (is_p(P, '{')) {
      if (!push_scope(P)) return false;
      next(P);
    } else if (is_p(P, '}')) {
      P->scope = P->parent[P->scope];
      next(P);
      if (--P->depth == 0) return true;
    } else if (t.kind == T_LABEL) {
      if (map_find(&P->fmap, K_LABEL, P->scope, t.s, t.len)) return perr(P, t.line, "label '%.*s' defined twice", t.len, t.s);
      if (!map_put(P, &P->fmap, K_LABEL, P->scope, t.s, t.len, P->nins)) return false;
      next(P);
    } else if (is_dir(P) ? !body_directive(P) : !instruction(P)) {
      return false;
    }
  }
  return false;
}

/* Labels are looked up from the branch's scope outwards, like registers. */
static bool resolve_labels(Px *P) {
  for (int i = 0; i < P->nfix; i++) {
    Fix *f = &P->fix[i];
    Sym *e = in_scope(P, K_LABEL, f->scope, f->s, f->len);
    if (!e) return perr(P, f->line, "unknown label '%.*s'", f->len > 60 ? 60 : f->len, f->s);
    P->ins[f->ins].a[f->arg].imm = e->val;
  }
  return true;
}

/* Performance directives after the signature: .maxntid is kept (.reqntid
 * too when alone: it bounds the block as well), and .maxnreg and
 * .minnctapersm (the register cap setmaxnreg needs: exec's register pool),
 * .reqnctapercluster and .explicitcluster (the cluster shape); the rest are
 * skipped. */
static bool perf_directives(Px *P, EmFunc *f) {
  for (bool have_max = false; is_dir(P);) {
    bool mx = is_w(P, ".maxntid"), rq = is_w(P, ".reqntid"), mr = is_w(P, ".maxnreg"), mc = is_w(P, ".minnctapersm");
    bool rc = is_w(P, ".reqnctapercluster");
    uint32_t v[3] = {1, 1, 1};
    if (is_w(P, ".explicitcluster")) f->explicitcluster = true;
    next(P);
    if (rc) {
      for (int i = 0; i < 3 && num_u32(P, &v[i], 16, "a cluster dimension") && is_p(P, ','); i++) next(P);
      if (P->failed) return false;
      for (int i = 0; i < 3; i++) f->reqncluster[i] = (int)v[i];
      f->explicitcluster = true;
      continue;
    }
    if (mr || mc) {
      if (!num_u32(P, &v[0], mr ? 256 : 64, mr ? "a register count" : "a CTA count")) return false;
      *(mr ? &f->maxnreg : &f->minnctapersm) = (int)v[0];
      continue;
    }
    if (!mx && !rq) {
      while (P->t.kind == T_STR || is_p(P, ',') || (P->t.kind == T_WORD && is_digit(P->t.s[0]))) next(P);
      if (is_p(P, ';')) next(P); /* .pragma "nounroll"; */
      continue;
    }
    for (int i = 0; i < 3 && num_u32(P, &v[i], 1u << 20, "a thread count") && is_p(P, ','); i++) next(P);
    if (P->failed) return false;
    for (int i = 0; i < 3 && (mx || !have_max); i++) f->maxntid[i] = (int)v[i];
    have_max |= mx;
  }
  return true;
}

/* function = (".entry" | ".func" ["(" params ")"]) NAME ["(" params ")"]
 *            { directive } (body | ";") */
static bool function(Px *P, bool entry) {
  P->nins = P->nregs = P->nparams = P->nscopes = P->nfix = P->depth = P->loc_line = P->loc_file = 0;
  P->nlparam = 0;
  P->scope = -1;
  if (P->fmap.tab) memset(P->fmap.tab, 0, (size_t)P->fmap.cap * sizeof *P->fmap.tab);
  P->fmap.n = 0;
  next(P);
  if (!entry && is_p(P, '(') && !param_list(P, true)) return false;
  if (!is_ident(P)) return perr(P, P->t.line, "expected a function name, found %s", tdesc(P));
  Tok name = P->t;
  EmFunc f = {.entry = entry};
  next(P);
  if ((is_p(P, '(') && !param_list(P, false)) || !perf_directives(P, &f)) return false;
  if (is_p(P, ';')) return next(P), true; /* a prototype */
  if (!is_p(P, '{')) return perr(P, P->t.line, "expected '{' to start the body of '%.*s', found %s", name.len > 60 ? 60 : name.len, name.s, tdesc(P));
  if (!body(P) || !resolve_labels(P)) return false;
  if (map_find(&P->gmap, K_FUNC, -1, name.s, name.len)) return perr(P, name.line, "function '%.*s' defined twice", name.len, name.s);
  f.name = dup_str(P, name.s, name.len);
  f.params = dup(P, P->params, (size_t)(f.nparams = P->nparams) * sizeof *P->params);
  f.param_bytes = P->nparams ? P->params[P->nparams - 1].offset + P->params[P->nparams - 1].size : 0;
  f.reg_type = dup(P, P->rtype, (size_t)(f.nregs = P->nregs) * sizeof *P->rtype);
  f.reg_name = dup(P, P->rname, (size_t)P->nregs * sizeof *P->rname);
  f.ins = dup(P, P->ins, (size_t)(f.nins = P->nins) * sizeof *P->ins);
  if (P->failed || !grow(P, &P->funcs, &P->capfuncs, P->nfuncs + 1, sizeof *P->funcs)) return false;
  P->funcs[P->nfuncs] = f;
  return map_put(P, &P->gmap, K_FUNC, -1, name.s, name.len, P->nfuncs++) != NULL;
}

/* ---- the module ---- */

/* .file N "name" [, timestamp, size] */
static bool file_dir(Px *P) {
  int line = P->t.line;
  uint32_t n;
  next(P);
  if (!num_u32(P, &n, PX_MAX_FILES, "a file number")) return false;
  if (P->t.kind != T_STR) return perr(P, P->t.line, "expected a file name, found %s", tdesc(P));
  if (!grow(P, &P->files, &P->capfiles, (int)n + 1, sizeof *P->files)) return false;
  for (; P->nfiles <= (int)n; P->nfiles++) P->files[P->nfiles] = NULL;
  P->files[n] = dup_str(P, P->t.s, P->t.len);
  skip_line(P, line);
  return !P->failed;
}

/* .section NAME { ... } (debug info): skipped whole. */
static bool section(Px *P) {
  int line = P->t.line, depth = 0;
  next(P);
  if (P->t.kind == T_WORD) next(P);
  if (!is_p(P, '{')) return skip_line(P, line), true;
  do {
    if (P->t.kind == T_EOF) return perr(P, line, "unterminated .section");
    depth += is_p(P, '{') - is_p(P, '}');
    next(P);
  } while (depth > 0);
  return true;
}

static bool module(Px *P) {
  bool ext = false, linkage;
  for (next(P); !P->failed && P->t.kind != T_EOF; ext = ext && linkage) {
    int line = P->t.line;
    bool ok = true;
    linkage = is_w(P, ".visible") || is_w(P, ".weak") || is_w(P, ".common") || is_w(P, ".extern");
    if (linkage) ext |= is_w(P, ".extern"), next(P);
    else if (is_w(P, ".version") || is_w(P, ".target") || is_w(P, ".address_size")) skip_line(P, line);
    else if (is_w(P, ".entry") || is_w(P, ".func")) ok = function(P, is_w(P, ".entry"));
    else if (is_w(P, ".global")) ok = var_decl(P, ES_GLOBAL, ext);
    else if (is_w(P, ".shared")) ok = var_decl(P, ES_SHARED, ext);
    else if (is_w(P, ".const")) ok = var_decl(P, ES_CONST, ext);
    else if (is_w(P, ".file")) ok = file_dir(P);
    else if (is_w(P, ".section")) ok = section(P);
    else return perr(P, line, "unexpected %s at the top level", tdesc(P));
    if (!ok) return false;
  }
  return !P->failed;
}

bool em_ptx_parse(const char *text, size_t len, EmModule **out, char *err, size_t errlen) {
  if (err && errlen) err[0] = 0;
  if (out) *out = NULL;
  Px P = {.p = text, .end = text, .line = 1, .err = err, .errlen = errlen};
  if (!out || (!text && len)) return perr(&P, 0, "no text");
  const char *nul = len ? memchr(text, 0, len) : NULL;
  P.end = nul ? nul : text + len;
  EmModule *m = NULL;
  if (!(P.ar = calloc(1, sizeof *P.ar))) return perr(&P, 0, "out of memory");
  if (module(&P) && (m = dup(&P, NULL, sizeof *m))) {
    for (int i = 0; i < P.nglobals; i++) { /* the dynamic array starts after the statics */
      EmGlobal *g = &P.globals[i];
      if (g->space == ES_SHARED && g->is_extern) g->offset = (uint32_t)((P.smem + g->align - 1) / g->align * g->align);
    }
    m->funcs = dup(&P, P.funcs, (size_t)(m->nfuncs = P.nfuncs) * sizeof *P.funcs);
    m->globals = dup(&P, P.globals, (size_t)(m->nglobals = P.nglobals) * sizeof *P.globals);
    m->files = dup(&P, P.files, (size_t)(m->nfiles = P.nfiles) * sizeof *P.files);
    m->static_smem = (uint32_t)P.smem;
    m->local_bytes = (uint32_t)P.local;
    m->arena = P.ar;
  }
  void *work[] = {P.gmap.tab, P.funcs, P.globals, P.files, P.vals, P.fmap.tab, P.ins, P.rtype, P.rname, P.params, P.parent, P.fix,
                  P.lparam};
  for (int i = 0; i < COUNT(work); i++) free(work[i]);
  if (P.failed) return ar_free(P.ar), false;
  *out = m;
  return true;
}

void em_module_free(EmModule *m) {
  if (m) ar_free(m->arena); /* m itself lives in the arena */
}

const EmFunc *em_find_func(const EmModule *m, const char *name) {
  for (int i = 0; m && name && i < m->nfuncs; i++)
    if (!strcmp(m->funcs[i].name, name)) return &m->funcs[i];
  return NULL;
}

/* compile.c - the compiler library's entry points and the pipeline.
 *
 * tc_pipeline below is the whole compiler in one readable sequence:
 *   parse (with imports) -> sema/IR generation -> Tile passes ->
 *   lowering to MLIR -> MLIR passes -> LLVM -> PTX -> cubin
 * Each stage can stop the run and print its output (tilec --emit=...). */
#include "tilec_int.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct tilec_result {
  Ctx c;
  tilec_status status;
  Buf out;
  double seconds;
  Buf stats; /* the compile report (stats.c); empty when Tile IR was never built */
};

void tilec_options_init(tilec_options *o) {
  memset(o, 0, sizeof *o);
  o->arch = "sm_90a";
  o->emit = TILEC_EMIT_CUBIN;
  o->opt_level = 3;
  o->line_info = 1;
  o->max_errors = 20;
}

/* the version and the build identity (build/gen/build_id.c: a hash of the
 * compiler's sources), so that a JIT cache entry of another build's code
 * generation is never taken for this one's */
const char *tilec_version(void) { return tc_version; }

static const char *emit_names[] = {"tokens", "ast", "tir", "mlir", "llvm", "ptx", "cubin", "meta"};

const char *tilec_emit_name(tilec_emit e) {
  return (unsigned)e < sizeof emit_names / sizeof emit_names[0] ? emit_names[e] : "?";
}

int tilec_emit_parse(const char *s, tilec_emit *out) {
  for (unsigned i = 0; i < sizeof emit_names / sizeof emit_names[0]; i++)
    if (!strcmp(s, emit_names[i])) {
      *out = (tilec_emit)i;
      return 0;
    }
  return -1;
}

Source *cx_add_source(Ctx *c, const char *name, const char *text, size_t len, bool builtin) {
  Source *s = ar_alloc(&c->arena, sizeof *s);
  s->name = ar_strdup(&c->arena, name);
  s->text = ar_strndup(&c->arena, text, len);
  s->len = len;
  s->id = c->sources.len;
  s->builtin = builtin;
  vec_push(&c->arena, &c->sources, s);
  return s;
}

/* Read a regular file (never a device or a FIFO) of at most TC_MAX_SOURCE
 * bytes, NUL terminated, into one buffer of its size.  NULL with errno set:
 * EFBIG when it is too large (*len: its size; by its size, it is not read). */
static char *slurp(const char *path, size_t *len) {
  struct stat st;
  if (stat(path, &st) != 0) return NULL;
  if (!S_ISREG(st.st_mode)) {
    errno = S_ISDIR(st.st_mode) ? EISDIR : ENOTSUP; /* (said as such by tilec_compile_file) */
    return NULL;
  }
  if (st.st_size > TC_MAX_SOURCE) {
    *len = (size_t)st.st_size;
    errno = EFBIG;
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = (size_t)st.st_size + 1, n = 0; /* one byte more: a file that grew */
  char *buf = NULL;
  bool ok = false;
  int e = 0;
  for (;;) {
    char *nb = realloc(buf, cap + 1);
    if (!nb) {
      e = ENOMEM;
      break;
    }
    buf = nb;
    n += fread(buf + n, 1, cap - n, f);
    if (ferror(f)) {
      e = errno ? errno : EIO;
      break;
    }
    if (n < cap) {
      ok = true;
      break;
    }
    if (n > TC_MAX_SOURCE) {
      *len = n;
      e = EFBIG;
      break;
    }
    cap = n * 2 > TC_MAX_SOURCE + 1 ? TC_MAX_SOURCE + 1 : n * 2;
  }
  fclose(f);
  if (!ok) {
    free(buf);
    errno = e;
    return NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

/* Resolve `import "name";`: the importing file's folder, -I folders, then
 * the embedded standard library (dsl/std). */
/* Was this file (by its canonical path) loaded already? Records it if not. */
static bool already_loaded(Ctx *c, const char *path) {
  char *rp = realpath(path, NULL);
  if (!rp) return false;
  char *key = ar_strdup(&c->arena, rp);
  free(rp);
  for (int i = 0; i < c->loaded.len; i++)
    if (!strcmp(c->loaded.data[i], key)) return true;
  vec_push(&c->arena, &c->loaded, key);
  return false;
}

/* Refuse an import that would take the sources of this compilation (the
 * embedded library aside) over TC_MAX_SOURCE bytes. */
static bool import_too_large(Ctx *c, Node *imp, size_t size) {
  size_t have = 0;
  for (int i = 0; i < c->sources.len; i++) {
    const Source *s = c->sources.data[i];
    if (!s->builtin) have += s->len;
  }
  if (size <= TC_MAX_SOURCE && have <= TC_MAX_SOURCE - size) return false;
  dg_error(c, imp->loc, "cannot import '%s': it is too large (%zu bytes, %zu read already; one compilation "
           "reads at most %d MiB of source)", imp->str, size, have, TC_MAX_SOURCE >> 20);
  return true;
}

/* The targets tilec compiles for (--arch), and the `sm` of each. */
static const struct {
  const char *name;
  int sm;
} targets[] = {{"sm_90a", 90}, {"sm_100a", 100}};
#define NTARGETS (int)(sizeof targets / sizeof targets[0])

/* "sm_90a, sm_100a": the targets' names, for the diagnostics */
static const char *known_targets(Ctx *c) {
  const char *s = targets[0].name;
  for (int i = 1; i < NTARGETS; i++) s = ar_printf(&c->arena, "%s, %s", s, targets[i].name);
  return s;
}

/* A conditional import (`import "f" if arch == "T";`) counts only when T is
 * the target compiled for; one not taken reads nothing, so its file need not
 * exist. A target tilec does not know is an error (a misspelt one would
 * otherwise never import, on any target). */
static bool import_taken(Ctx *c, const Node *imp) {
  const Node *cond = imp->cond;
  if (!cond) return true;
  for (int i = 0; i < NTARGETS; i++) {
    if (strcmp(cond->str, targets[i].name)) continue;
    if (!strcmp(cond->str, c->arch)) return true;
    vec_push(&c->arena, &c->untaken, (void *)imp);
    return false;
  }
  dg_error(c, cond->loc, "unknown target '%s' in the import's condition (known: %s)", cond->str,
           known_targets(c));
  return false;
}

static bool load_import(Ctx *c, const Source *from, Node *imp, Vec *queue) {
  const char *name = imp->str;
  if (!import_taken(c, imp)) return true;
  for (int i = 0; i < c->imported.len; i++)
    if (!strcmp(c->imported.data[i], name)) return true;
  vec_push(&c->arena, &c->imported, (void *)name);
  if (!*name || strlen(name) > 1024) {
    dg_error(c, imp->loc, "bad import name");
    return false;
  }
  char path[4096];
  if (!from->builtin) {
    const char *slash = strrchr(from->name, '/');
    int dn = slash ? (int)(slash - from->name + 1) : 0;
    snprintf(path, sizeof path, "%.*s%s", dn, from->name, name);
    size_t len;
    const char *file = name[0] == '/' ? name : path;
    struct stat st;
    bool found = stat(file, &st) == 0;
    if (found && !S_ISREG(st.st_mode)) {
      dg_error(c, imp->loc, "cannot import '%s': not a regular file", name);
      return false;
    }
    if (already_loaded(c, file)) return true; /* e.g. a file importing itself */
    if (found && import_too_large(c, imp, (size_t)st.st_size)) return false; /* before reading it */
    char *text = slurp(file, &len);
    if (text) {
      vec_push(&c->arena, queue, cx_add_source(c, name[0] == '/' ? name : path, text, len, false));
      free(text);
      return true;
    }
    for (int i = 0; i < c->opts.ninclude_dirs; i++) {
      snprintf(path, sizeof path, "%s/%s", c->opts.include_dirs[i], name);
      if (already_loaded(c, path)) return true;
      if (!(text = slurp(path, &len)) && errno != EFBIG) continue;
      if (import_too_large(c, imp, len)) { /* EFBIG: nothing was read */
        free(text);
        return false;
      }
      vec_push(&c->arena, queue, cx_add_source(c, path, text, len, false));
      free(text);
      return true;
    }
  }
  size_t len;
  const char *text = tc_stdlib_lookup(name, &len);
  if (text) {
    vec_push(&c->arena, queue, cx_add_source(c, ar_printf(&c->arena, "<tile>/%s", name), text, len, true));
    return true;
  }
  dg_error(c, imp->loc, "cannot find '%s' (looked next to %s%s and in the standard library)", name, from->name,
           c->opts.ninclude_dirs ? ", in the -I folders" : "");
  return false;
}

static void parse_all(Ctx *c, Source *main, Program *prog) {
  Vec queue = {0};
  size_t plen;
  const char *prelude = tc_stdlib_lookup("std/prelude.tile", &plen);
  if (prelude) {
    vec_push(&c->arena, &c->imported, (void *)"std/prelude.tile");
    vec_push(&c->arena, &queue, cx_add_source(c, "<tile>/std/prelude.tile", prelude, plen, true));
  }
  vec_push(&c->arena, &queue, main);
  already_loaded(c, main->name); /* a file that imports itself */
  for (int i = 0; i < queue.len && !dg_too_many(c); i++) {
    Source *s = queue.data[i];
    Vec imports = {0};
    ps_parse(c, s, prog, &imports);
    for (int j = 0; j < imports.len; j++) load_import(c, s, imports.data[j], &queue);
  }
}

static bool check_options(Ctx *c) {
  if (!c->opts.arch) c->opts.arch = "sm_90a";
  for (int i = 0; i < NTARGETS && !c->sm; i++)
    if (!strcmp(c->opts.arch, targets[i].name)) c->sm = targets[i].sm;
  if (!c->sm) {
    dg_plain(c, "unknown --arch '%s' (known: %s)", c->opts.arch, known_targets(c));
    return false;
  }
  c->arch = c->opts.arch;
  if (c->opts.opt_level < 0 || c->opts.opt_level > 3) {
    dg_plain(c, "optimization level %d is out of range (0..3)", c->opts.opt_level);
    return false;
  }
  if (c->opts.max_errors <= 0) c->opts.max_errors = 20;
  for (int i = 0; i < c->opts.ndefines; i++) {
    const char *n = c->opts.defines[i].name, *v = c->opts.defines[i].value;
    bool ok = n && *n && v && (n[0] == '_' || (n[0] | 32) >= 'a');
    for (const char *p = n; ok && *p; p++)
      ok = *p == '_' || (*p >= '0' && *p <= '9') || ((*p | 32) >= 'a' && (*p | 32) <= 'z');
    if (!ok) {
      dg_plain(c, "bad -D: '%s=%s' (expected NAME=VALUE with NAME an identifier)", n ? n : "", v ? v : "");
      return false;
    }
  }
  return true;
}

/* The whole compiler, one stage per line. */
static tilec_status tc_pipeline(Ctx *c, Source *src, tilec_emit emit, Buf *out) {
  if (emit == TILEC_EMIT_TOKENS) {
    int n;
    Token *t = lx_tokenize(c, src, &n);
    lx_print_tokens(c, t, n, out);
    return c->nerrors ? TILEC_ERR_SOURCE : TILEC_OK;
  }
  Program *prog = ar_alloc(&c->arena, sizeof *prog);
  c->prog = prog;
  double t = st_now();
  parse_all(c, src, prog);                                   /* lexer.re, parse.c */
  st_time(c, ST_PARSE, t);
  if (c->nerrors) return TILEC_ERR_SOURCE;
  if (emit == TILEC_EMIT_AST) {
    Program mine = {0};
    for (int i = 0; i < prog->funcs.len; i++)
      if (!((Func *)prog->funcs.data[i])->loc.src->builtin) vec_push(&c->arena, &mine.funcs, prog->funcs.data[i]);
    for (int i = 0; i < prog->consts.len; i++)
      if (!((ConstDecl *)prog->consts.data[i])->loc.src->builtin) vec_push(&c->arena, &mine.consts, prog->consts.data[i]);
    ast_print(c, &mine, out);
    return TILEC_OK;
  }
  TModule *mod = ar_alloc(&c->arena, sizeof *mod);
  t = st_now();
  bool built = sm_build(c, prog, mod);                       /* sema.c */
  st_time(c, ST_SEMA, t);
  if (!built) return c->ice ? TILEC_ERR_INTERNAL : TILEC_ERR_SOURCE;
  if (!c->nerrors) c->stats.mod = mod; /* the compile report describes it from here on (not a program with errors) */
  t = st_now();
  bool passed = pass_run(c, mod);                            /* passes.c */
  st_time(c, ST_PASSES, t);
  if (!passed) return c->ice ? TILEC_ERR_INTERNAL : TILEC_ERR_SOURCE;
  if (emit == TILEC_EMIT_TIR) {
    ir_print_module(c, mod, out);
    return TILEC_OK;
  }
  BackendOut bo = {0};
  bool ok = lw_lower_and_compile(c, mod, emit, &bo);            /* lower*.c, backend.c */
  Buf *pick = emit == TILEC_EMIT_MLIR ? &bo.mlir : emit == TILEC_EMIT_LLVM ? &bo.llvm
              : emit == TILEC_EMIT_PTX ? &bo.ptx : emit == TILEC_EMIT_META ? &c->meta : &bo.cubin;
  if (ok) buf_put(out, pick->data ? pick->data : "", pick->len);
  else if (emit == TILEC_EMIT_MLIR && bo.mlir.len) buf_put(out, bo.mlir.data, bo.mlir.len);
  bool assembling = bo.ptx.len > 0; /* only the assembler runs after the PTX exists */
  buf_free(&bo.mlir);
  buf_free(&bo.llvm);
  buf_free(&bo.ptx);
  buf_free(&bo.cubin);
  if (ok) return TILEC_OK;
  if (c->ice || !c->nerrors) return TILEC_ERR_INTERNAL;
  /* errors before the PTX are lowering's findings about the program (its
   * shared memory, its size); after it, ptxas or nvJitLink failed */
  return assembling ? TILEC_ERR_TOOLCHAIN : TILEC_ERR_SOURCE;
}

tilec_status tilec_compile(const char *filename, const char *source, size_t len, const tilec_options *opts,
                           tilec_result **out) {
  tilec_result *r = calloc(1, sizeof *r);
  if (!r) {
    if (out) *out = NULL;
    return TILEC_ERR_INTERNAL;
  }
  double t0 = st_now();
  Ctx *c = &r->c;
  ar_init(&c->arena);
  if (opts) c->opts = *opts;
  else tilec_options_init(&c->opts);
  if (!filename) filename = "<input>";
  if (!source) {
    source = "";
    len = 0;
  }
  if (!check_options(c)) {
    r->status = TILEC_ERR_OPTIONS;
  } else if (len > TC_MAX_SOURCE) { /* refused before it is copied */
    dg_plain(c, "'%s' is too large: %zu bytes (one compilation reads at most %d MiB of source)", filename, len,
             TC_MAX_SOURCE >> 20);
    r->status = TILEC_ERR_SOURCE;
  } else {
    Source *src = cx_add_source(c, filename, source, len, false);
    r->status = tc_pipeline(c, src, c->opts.emit, &r->out);
    if (c->arena.failed) {
      dg_plain(c, "out of memory");
      r->status = TILEC_ERR_INTERNAL;
    }
  }
  r->seconds = st_now() - t0;
  if (c->stats.mod && !c->arena.failed) st_report(c, filename, r->seconds, &r->stats);
  tilec_status st = r->status;
  if (out) *out = r;
  else tilec_result_free(r);
  return st;
}

tilec_status tilec_compile_file(const char *path, const tilec_options *opts, tilec_result **out) {
  size_t len = 0;
  char *text = slurp(path, &len); /* checks the size before reading */
  if (!text) {
    int e = errno;
    tilec_result *r = calloc(1, sizeof *r);
    if (!r) return TILEC_ERR_IO;
    ar_init(&r->c.arena);
    if (opts) r->c.opts = *opts;
    else tilec_options_init(&r->c.opts);
    if (e == EFBIG)
      buf_printf(&r->c.diags, "tilec: error: '%s' is too large: %zu bytes (one compilation reads at most %d MiB "
                 "of source)\n", path, len, TC_MAX_SOURCE >> 20);
    else if (e == EISDIR)
      buf_printf(&r->c.diags, "tilec: error: '%s' is a directory, not a Tile source file\n", path);
    else if (e == ENOTSUP)
      buf_printf(&r->c.diags, "tilec: error: '%s' is not a regular file (a device, pipe or socket)\n", path);
    else
      buf_printf(&r->c.diags, "tilec: error: cannot read '%s': %s\n", path, strerror(e));
    r->c.nerrors = 1;
    r->status = e == EFBIG ? TILEC_ERR_SOURCE : TILEC_ERR_IO;
    tilec_status st = r->status;
    if (out) *out = r;
    else tilec_result_free(r);
    return st;
  }
  tilec_status s = tilec_compile(path, text, len, opts, out);
  free(text);
  return s;
}

tilec_status tilec_result_status(const tilec_result *r) { return r ? r->status : TILEC_ERR_INTERNAL; }
const char *tilec_result_diagnostics(const tilec_result *r) {
  return r && r->c.diags.data ? r->c.diags.data : "";
}
int tilec_result_error_count(const tilec_result *r) { return r ? r->c.nerrors : 0; }
const void *tilec_result_output(const tilec_result *r, size_t *len) {
  if (len) *len = r ? r->out.len : 0;
  return r && r->out.data ? r->out.data : "";
}
const char *tilec_result_metadata(const tilec_result *r) { return r && r->c.meta.data ? r->c.meta.data : NULL; }
double tilec_result_seconds(const tilec_result *r) { return r ? r->seconds : 0; }
const char *tilec_result_stats(const tilec_result *r) { return r && r->stats.len ? r->stats.data : NULL; }

/* sources[0] is the main source; the rest are imports, embedded or read */
int tilec_result_num_imports(const tilec_result *r) {
  int n = 0;
  for (int i = 1; r && i < r->c.sources.len; i++) n += !((Source *)r->c.sources.data[i])->builtin;
  return n;
}

const char *tilec_result_import(const tilec_result *r, int i, const char **text, size_t *len) {
  for (int k = 1; r && i >= 0 && k < r->c.sources.len; k++) {
    const Source *s = r->c.sources.data[k];
    if (s->builtin || i--) continue;
    if (text) *text = s->text;
    if (len) *len = s->len;
    return s->name;
  }
  return NULL;
}

void tilec_result_free(tilec_result *r) {
  if (!r) return;
  buf_free(&r->out);
  buf_free(&r->c.diags);
  buf_free(&r->c.meta);
  buf_free(&r->stats);
  ar_free(&r->c.arena);
  free(r);
}

/* sema_env.c - the environment of semantic analysis: globals (functions,
 * top-level constants) in a hash table, locals in a scope chain with a
 * hash table from each name to its innermost binding, and frames; the
 * program's globals declared and checked (sm_declare_globals); a kernel's
 * attributes (sm_kernel_attrs). */
#include <stdlib.h>
#include <string.h>

#include "sema.h"

/* Globals (functions, constants) live in a hash table: a program may have
 * tens of thousands of them. */
unsigned sm_name_hash(const char *n) {
  unsigned h = 2166136261u;
  for (; *n; n++) h = (h ^ (unsigned char)*n) * 16777619u;
  return h;
}

Sym *sm_global_find(S *s, const char *name) {
  if (!s->gtab) return NULL;
  for (unsigned i = sm_name_hash(name) & (unsigned)(s->gcap - 1);; i = (i + 1) & (unsigned)(s->gcap - 1)) {
    Sym *y = s->gtab[i];
    if (!y) return NULL;
    if (!strcmp(y->name, name)) return y;
  }
}

void sm_global_add(S *s, Sym *y) {
  if (s->gcount * 2 >= s->gcap) {
    int cap = s->gcap ? s->gcap * 2 : 64;
    Sym **t = ar_alloc(&s->c->arena, sizeof(Sym *) * (size_t)cap);
    for (int i = 0; i < s->gcap; i++)
      if (s->gtab[i])
        for (unsigned j = sm_name_hash(s->gtab[i]->name) & (unsigned)(cap - 1);; j = (j + 1) & (unsigned)(cap - 1))
          if (!t[j]) {
            t[j] = s->gtab[i];
            break;
          }
    s->gtab = t;
    s->gcap = cap;
  }
  for (unsigned j = sm_name_hash(y->name) & (unsigned)(s->gcap - 1);; j = (j + 1) & (unsigned)(s->gcap - 1))
    if (!s->gtab[j]) {
      s->gtab[j] = y;
      s->gcount++;
      return;
    }
}

/* Locals: the chain s->scope (innermost first) gives scoping, and a hash
 * table from each name to its innermost binding gives lookup in O(1) (a
 * walk of the chain made 60000 lets take 8 s). A binding remembers the one
 * it hides; leaving a scope pops back to them. A frame (an inlined function
 * body, a constant's initializer, a kernel) starts an empty chain: the
 * bindings of the frames below stay in the table but are not visible, since
 * a binding of the current frame is always newer than theirs. */
LocalEnt *sm_local_entry(S *s, const char *name, bool add) {
  unsigned h = sm_name_hash(name);
  if (s->ltab)
    for (unsigned i = h & (unsigned)(s->lcap - 1);; i = (i + 1) & (unsigned)(s->lcap - 1)) {
      if (!s->ltab[i].name) break;
      if (!strcmp(s->ltab[i].name, name)) return &s->ltab[i];
    }
  if (!add) return NULL;
  if (s->lcount * 2 >= s->lcap) {
    int cap = s->lcap ? s->lcap * 2 : 64;
    LocalEnt *t = ar_alloc(&s->c->arena, sizeof(LocalEnt) * (size_t)cap);
    memset(t, 0, sizeof(LocalEnt) * (size_t)cap);
    for (int i = 0; i < s->lcap; i++)
      if (s->ltab[i].name)
        for (unsigned j = sm_name_hash(s->ltab[i].name) & (unsigned)(cap - 1);; j = (j + 1) & (unsigned)(cap - 1))
          if (!t[j].name) {
            t[j] = s->ltab[i];
            break;
          }
    s->ltab = t;
    s->lcap = cap;
  }
  for (unsigned j = h & (unsigned)(s->lcap - 1);; j = (j + 1) & (unsigned)(s->lcap - 1))
    if (!s->ltab[j].name) {
      s->ltab[j].name = name;
      s->ltab[j].top = NULL;
      s->lcount++;
      return &s->ltab[j];
    }
}

/* The innermost visible local named name, or NULL. */
Sym *sm_local_find(S *s, const char *name) {
  LocalEnt *e = sm_local_entry(s, name, false);
  return e && e->top && e->top->frame == s->frame ? e->top : NULL;
}

Sym *sm_lookup(S *s, const char *name) {
  Sym *y = sm_local_find(s, name);
  return y ? y : sm_global_find(s, name);
}

Sym *sm_bind(S *s, const char *name, SVal v) {
  Sym *y = ar_alloc(&s->c->arena, sizeof *y);
  y->name = name;
  y->kind = SYM_VAR;
  y->val = v;
  y->next = s->scope;
  y->frame = s->frame;
  y->bdepth = s->bdepth;
  LocalEnt *e = sm_local_entry(s, name, true);
  y->shadow = e->top;
  e->top = y;
  s->scope = y;
  if (v.k == V_RT && v.v && !v.v->name) v.v->name = name;
  return y;
}

/* Leave the scopes opened since `saved` (a binding of this frame's chain, or
 * NULL for all of the frame): their bindings stop hiding older ones. */
void sm_scope_restore(S *s, Sym *saved) {
  while (s->scope && s->scope != saved) {
    Sym *y = s->scope;
    LocalEnt *e = sm_local_entry(s, y->name, false);
    if (e && e->top == y) e->top = y->shadow;
    s->scope = y->next;
  }
}

/* A new frame: an empty chain; the caller's locals are not visible. */
Frame sm_frame_enter(S *s) {
  Frame f = {s->scope, s->frame, s->bdepth};
  s->frame = ++s->nframes;
  s->scope = NULL;
  s->bdepth = 0;
  return f;
}

void sm_frame_leave(S *s, Frame f) {
  sm_scope_restore(s, NULL);
  s->scope = f.scope;
  s->frame = f.frame;
  s->bdepth = f.bdepth;
}

/* The program's globals: functions (a user's definition replaces the
 * library's) and top-level constants, duplicates rejected; kernel names
 * that cannot be PTX symbols; -D names that name no constant parameter. */
void sm_declare_globals(S *s, Program *p) {
  Ctx *c = s->c;
  /* Globals: functions and constants, duplicates rejected. */
  for (int i = 0; i < p->funcs.len && !dg_too_many(c); i++) {
    Func *f = p->funcs.data[i];
    Sym *y = sm_global_find(s, f->name);
    if (y) {
      Loc prev = y->kind == SYM_FUNC ? y->fn->loc : y->decl->loc;
      if (prev.src && prev.src->builtin && !f->loc.src->builtin && y->kind == SYM_FUNC && !f->is_override) {
        y->fn = f; /* the user's definition replaces the library's */
        continue;
      }
      /* `override fn` replaces the one plain function of its name, from
       * whichever file (the variant imports the kernel that calls it) */
      if (y->kind == SYM_FUNC && !y->fn->is_kernel && !f->is_kernel && y->fn->is_override != f->is_override) {
        Func *ov = f->is_override ? f : y->fn;
        if (ov->loc.src == (f->is_override ? y->fn : f)->loc.src) {
          dg_error(c, ov->loc, "'override fn %s' replaces a function of its own file; an override replaces one "
                               "that another file (one it imports) defines", f->name);
          ov->replaced = true; /* reported once */
          continue;
        }
        ov->replaced = true;
        y->fn = ov;
        continue;
      }
      if (y->kind == SYM_FUNC && y->fn->is_override && f->is_override) {
        dg_error(c, f->loc, "'%s' is overridden twice", f->name);
        dg_note(c, prev, "the first override is here");
        f->replaced = true; /* reported once */
        continue;
      }
      dg_error(c, f->loc, "'%s' is defined twice", f->name);
      dg_note(c, prev, "the first definition is here");
      if (y->kind == SYM_FUNC && !y->fn->is_kernel && !f->is_kernel && y->fn->loc.src != f->loc.src)
        dg_note(c, prev, "to replace the imported function, declare this one 'override fn %s'", f->name);
      continue;
    }
    y = ar_alloc(&c->arena, sizeof *y);
    y->name = f->name;
    y->kind = SYM_FUNC;
    y->fn = f;
    sm_global_add(s, y);
  }
  for (int i = 0; i < p->funcs.len; i++) {
    Func *f = p->funcs.data[i];
    if (f->is_override && !f->replaced) {
      dg_error(c, f->loc, "'override fn %s' replaces nothing: no imported file defines a function '%s'", f->name,
               f->name);
      sm_note_untaken_imports(c);
    }
  }
  /* A kernel's name is its PTX entry point, the one user name that reaches
   * the PTX (parameters become NAME_param_N, locals registers).  ptxas
   * rejects, among Tile identifiers, exactly: '_' (PTX identifiers are
   * [a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+), the predefined constant
   * WARP_SZ, and names of the generated code: the globals tile_smem and
   * __tile_meta, and DONE, a label of the mbarrier wait loop (LAB_WAIT, its
   * other label, passes ptxas but is refused with it).  Instruction, type
   * and directive names without the dot, and special registers without the
   * %, are accepted. */
  static const char *const ptx_names[] = {"tile_smem", "__tile_meta", "LAB_WAIT", "DONE", NULL};
  for (int i = 0; i < p->funcs.len; i++) {
    Func *f = p->funcs.data[i];
    if (!f->is_kernel) continue;
    if (!strcmp(f->name, "_"))
      dg_error(c, f->loc, "a kernel cannot be named '_': its name becomes a PTX symbol, and PTX does not allow a lone "
                          "'_' (add a letter or digit)");
    else if (!strcmp(f->name, "WARP_SZ"))
      dg_error(c, f->loc, "a kernel cannot be named 'WARP_SZ': its name becomes a PTX symbol, and WARP_SZ is PTX's "
                          "predefined warp-size constant");
    for (int k = 0; ptx_names[k]; k++)
      if (!strcmp(f->name, ptx_names[k]))
        dg_error(c, f->loc, "a kernel cannot be named '%s': the generated PTX uses that name", f->name);
  }
  for (int i = 0; i < p->consts.len && !dg_too_many(c); i++) {
    ConstDecl *d = p->consts.data[i];
    Sym *y = sm_global_find(s, d->name);
    if (y) {
      dg_error(c, d->loc, "'%s' is defined twice", d->name);
      dg_note(c, y->kind == SYM_FUNC ? y->fn->loc : y->decl->loc, "the first definition is here");
      continue;
    }
    y = ar_alloc(&c->arena, sizeof *y);
    y->name = d->name;
    y->kind = SYM_CONST_DECL;
    y->decl = d;
    sm_global_add(s, y);
  }
  /* -D names must belong to some kernel's constant parameter. */
  for (int d = 0; d < c->opts.ndefines; d++) {
    bool found = false;
    for (int i = 0; i < p->funcs.len && !found; i++) {
      Func *f = p->funcs.data[i];
      if (!f->is_kernel) continue;
      for (int j = 0; j < f->nparams; j++)
        if ((f->params[j].is_const || !strncmp(c->opts.defines[d].value, "multiple_of(", 12)) &&
            !strcmp(f->params[j].name, c->opts.defines[d].name))
          found = true;
    }
    if (!found) dg_plain(c, "-D %s: no kernel has a constant parameter named '%s'", c->opts.defines[d].name,
                         c->opts.defines[d].name);
  }
}

/* A kernel's attributes: warps(N), cluster(X, Y, Z), maxnreg(R),
 * stages(S), the depth of the software pipeline pipeline.c builds for a
 * `dot` in a loop (0: none; 3 to 8), or of the rings pipeline_rows.c puts a
 * dot-less loop's loads through (2 to 8), and pdl(B), programmatic
 * dependent launch (lower.c's entry, the metadata's `pdl` line). */
void sm_kernel_attrs(S *s, Func *f, TFunc *kf) {
  Ctx *c = s->c;
  kf->warps = 4;
  kf->stages = -1; /* the default: pipeline.c picks */
  for (int i = 0; i < f->nattrs; i++) {
    KAttr *a = &f->attrs[i];
    if (!strcmp(a->name, "warps")) {
      int64_t w;
      if (a->nargs != 1) {
        dg_error(c, a->loc, "warps(...) takes one value");
        continue;
      }
      if (!sm_const_int(s, sm_eval(s, a->args[0]), a->args[0]->loc, "the warp count", &w)) continue;
      if (w < 1 || w > 32 || (!sm_is_pow2(w) && w % 4)) {
        dg_error(c, a->args[0]->loc, "warps(%lld): the warp count must be 1, 2, 4, 8, 16 or 32 (or a multiple of 4 "
                                     "for a kernel split into tasks)",
                 (long long)w);
        continue;
      }
      kf->warps = (int)w;
    } else if (!strcmp(a->name, "cluster")) {
      int64_t d[3] = {1, 1, 1};
      bool ok = a->nargs >= 1 && a->nargs <= 3;
      for (int j = 0; ok && j < a->nargs; j++)
        ok = sm_const_int(s, sm_eval(s, a->args[j]), a->args[j]->loc, "a cluster dimension", &d[j]);
      if (!ok) continue;
      if (d[0] < 1 || d[1] < 1 || d[2] < 1 || d[0] > 16 || d[1] > 16 || d[2] > 16 || d[0] * d[1] * d[2] > 16) {
        dg_error(c, a->loc, "cluster(%lld, %lld, %lld): each dimension must be 1 to 16 and the cluster at most 16 CTAs",
                 (long long)d[0], (long long)d[1], (long long)d[2]);
        continue;
      }
      kf->cluster[0] = (int)d[0];
      kf->cluster[1] = (int)d[1];
      kf->cluster[2] = (int)d[2];
    } else if (!strcmp(a->name, "maxnreg")) {
      int64_t r;
      if (a->nargs != 1 || !sm_const_int(s, sm_eval(s, a->args[0]), a->loc, "maxnreg", &r)) continue;
      if (r != 0 && (r < 24 || r > 255)) { /* 0: no cap (a constant parameter's way to leave it off) */
        dg_error(c, a->loc, "maxnreg(%lld) must be between 24 and 255, or 0 for no cap", (long long)r);
        continue;
      }
      kf->maxnreg = (int)r;
    } else if (!strcmp(a->name, "stages")) {
      int64_t n;
      if (a->nargs != 1 || !sm_const_int(s, sm_eval(s, a->args[0]), a->loc, "stages", &n)) continue;
      if (n < 0 || n > 8 || n == 1) {
        dg_error(c, a->loc, "stages(%lld): a pipeline has 2 to 8 slots of shared memory per tile (a dot's 3 to 8: "
                            "the slots the wgmmas still read, the rest being filled), or 0 for none",
                 (long long)n);
        continue;
      }
      kf->stages = (int)n;
    } else if (!strcmp(a->name, "pdl")) {
      if (a->nargs != 1) {
        dg_error(c, a->loc, "pdl(...) takes one value: true or false");
        continue;
      }
      SVal v = sm_eval(s, a->args[0]);
      if (v.k != V_BOOL) {
        if (v.k != V_ERR)
          dg_error(c, a->args[0]->loc, "pdl(...) takes a compile-time bool, not %s", sv_desc(s, v));
        continue;
      }
      kf->pdl = v.i != 0;
    } else {
      dg_error(c, a->loc, "unknown kernel attribute '%s' (known: warps, cluster, maxnreg, stages, pdl)", a->name);
    }
  }
}

/* -D NAME=multiple_of(N) for a run-time integer parameter: a promise the
 * source did not write, as if it said `NAME: i32 multiple_of(N)` (what
 * Triton's JIT assumes of an argument divisible by 16; the runtime checks
 * it at each launch). Returns N, 0 when there is none, -1 after an error. */
int sm_define_multiple(S *s, const Param *p, Elem e) {
  Ctx *c = s->c;
  int64_t n = 0;
  for (int d = 0; d < c->opts.ndefines; d++) {
    const char *v = c->opts.defines[d].value;
    if (strcmp(c->opts.defines[d].name, p->name)) continue;
    char *end = NULL;
    long long x = strncmp(v, "multiple_of(", 12) ? -1 : strtoll(v + 12, &end, 10);
    if (x < 1 || x > (1 << 20) || !end || strcmp(end, ")")) {
      dg_error(c, p->loc, "-D %s=%s: '%s' is a run-time parameter; -D can only promise multiple_of(N) of it "
                          "(N from 1 to 2^20)", p->name, v, p->name);
      return -1;
    }
    if (e.dt == DT_PTR || !ty_is_int((DType)e.dt)) {
      dg_error(c, p->loc, "-D %s=%s: multiple_of applies to integer parameters, and '%s' is %s", p->name, v, p->name,
               ty_elem_str(c, e));
      return -1;
    }
    n = x;
  }
  return (int)n;
}

/* After an error about a name defined nowhere, a note for each import not
 * taken on this target (tilec_int.h); here rather than in compile.c, which
 * records them, so that the checks do not call back into the driver. */
void sm_note_untaken_imports(Ctx *c) {
  if (c->untaken_noted) return;
  c->untaken_noted = true;
  for (int i = 0; i < c->untaken.len; i++) {
    const Node *imp = c->untaken.data[i];
    bool taken = false; /* imported anyway, by an import of its own */
    for (int j = 0; j < c->imported.len && !taken; j++) taken = !strcmp(c->imported.data[j], imp->str);
    if (taken) continue;
    dg_note(c, imp->loc, "'%s' was not imported: its import is for %s, and this compilation is for %s", imp->str,
            imp->cond->str, c->arch);
  }
}

/* stats.c - the compile report: what tilec --stats prints and
 * tilec_result_stats() returns (format: docs/stats.md).
 *
 * The stages feed it as they run: compile.c and backend.c the time of each
 * stage (st_time), lowering each operation that takes scratch shared memory
 * and each task's slice of it (st_note_scratch, st_note_task), the
 * assembler its resource report (st_parse_asm_log: ptxas -v, nvJitLink
 * -verbose). The rest comes from the Tile IR once compiling is over: the
 * shared-memory plan of passes.c (each smem()/mbarrier() op carries its
 * offset), the tmem() columns, the tasks' warps and register budgets, the
 * named barriers. Everything lives in the compilation's arena. */
#include "tilec_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct StScratch {
  const TOp *op;
  int bytes;
} StScratch;

typedef struct StTask {
  const TBlock *task;
  int offset, stride; /* its replicas' scratch slices: offset + k * stride */
} StTask;

typedef struct StAlloc {
  const TFunc *f;
  const TOp *op; /* OP_SMEM_ALLOC or OP_BAR_ALLOC; op->block NULL once dce removed it */
} StAlloc;

typedef struct StAsm {
  const char *name;
  int regs, barriers;
  int stack, spill_st, spill_ld;
  bool have_regs, have_frame;
} StAsm;

double st_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void st_time(Ctx *c, StStage s, double since) {
  c->stats.sec[s] += st_now() - since;
  c->stats.ran[s] = true;
}

void st_note_scratch(Ctx *c, const TOp *op, int bytes) {
  StScratch *r = ar_alloc(&c->arena, sizeof *r);
  r->op = op;
  r->bytes = bytes;
  vec_push(&c->arena, &c->stats.scratch, r);
}

void st_note_task(Ctx *c, const TBlock *task, int offset, int stride) {
  StTask *t = ar_alloc(&c->arena, sizeof *t);
  *t = (StTask){task, offset, stride};
  vec_push(&c->arena, &c->stats.tasks, t);
}

static void note_alloc(TOp *op, void *ud) {
  void **a = ud;
  Ctx *c = a[0];
  if (op->opc != OP_SMEM_ALLOC && op->opc != OP_BAR_ALLOC) return;
  StAlloc *s = ar_alloc(&c->arena, sizeof *s);
  *s = (StAlloc){a[1], op};
  vec_push(&c->arena, &c->stats.allocs, s);
}

void st_note_allocs(Ctx *c, const TFunc *f) {
  void *ud[2] = {c, (void *)f};
  ir_walk(f->body, note_alloc, ud);
}

/* ---- the assembler's report ---- */

static StAsm *asm_fn(Ctx *c, const char *name, size_t n) {
  for (int i = 0; i < c->stats.asm_fns.len; i++) {
    StAsm *a = c->stats.asm_fns.data[i];
    if (strlen(a->name) == n && !memcmp(a->name, name, n)) return a;
  }
  StAsm *a = ar_alloc(&c->arena, sizeof *a);
  a->name = ar_strndup(&c->arena, name, n);
  vec_push(&c->arena, &c->stats.asm_fns, a);
  return a;
}

/* ptxas -v (and nvJitLink -verbose, which relays it) says, per function:
 *   ptxas info    : Compiling entry function 'gemm' for 'sm_90a'
 *   ptxas info    : Function properties for gemm
 *       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 168 registers, used 16 barriers
 * Lines that do not parse are skipped: a report without registers says so. */
void st_parse_asm_log(Ctx *c, const char *assembler, const char *log, size_t len) {
  c->stats.assembler = assembler;
  char *text = ar_strndup(&c->arena, log, len);
  StAsm *cur = NULL;
  for (char *p = text; p && *p;) {
    char *e = strchr(p, '\n');
    if (e) *e = 0;
    char *q;
    if ((q = strstr(p, "Compiling entry function '"))) {
      q += 26;
      char *end = strchr(q, '\'');
      if (end) cur = asm_fn(c, q, (size_t)(end - q));
    } else if ((q = strstr(p, "Function properties for "))) {
      q += 24;
      q += *q == '\''; /* nvJitLink's summary quotes the name */
      size_t n = strcspn(q, " \t\r:'");
      if (n) cur = asm_fn(c, q, n);
    } else if (cur && (q = strstr(p, "bytes stack frame"))) {
      int st = 0, ss = 0, sl = 0;
      char *d = p; /* nvJitLink prefixes "ptxas         ." */
      while (*d && (*d < '0' || *d > '9')) d++;
      if (sscanf(d, "%d bytes stack frame, %d bytes spill stores, %d bytes spill loads", &st, &ss, &sl) == 3) {
        cur->stack = st, cur->spill_st = ss, cur->spill_ld = sl;
        cur->have_frame = true;
      }
    } else if (cur && (q = strstr(p, "Used ")) && strstr(q, " registers")) {
      int r = 0;
      if (sscanf(q, "Used %d registers", &r) == 1) {
        cur->regs = r;
        cur->have_regs = true;
      }
      char *b = strstr(q, "used ");
      if (b) sscanf(b, "used %d barriers", &cur->barriers);
    }
    p = e ? e + 1 : NULL;
  }
}

/* ---- the report ---- */

/* "file:line", and for code inlined from a fn: the fn it is in and the
 * kernel's line it is inlined at (through any calls between) */
static const char *loc_str(Ctx *c, Loc l) {
  if (!l.src || !l.line) return "-";
  const char *s = ar_printf(&c->arena, "%s:%d", l.src->name, l.line);
  const InlineSite *out = l.at;
  while (out && out->call.at) out = out->call.at;
  if (out && out->call.src)
    s = ar_printf(&c->arena, "%s (in %s, inlined at %s:%d)", s, l.at->fn, out->call.src->name, out->call.line);
  return s;
}

/* The same place in the source, inlined through the same calls. */
static bool loc_same(Loc a, Loc b) {
  if (a.src != b.src || a.line != b.line || a.col != b.col) return false;
  if (!a.at || !b.at) return a.at == b.at;
  return a.at == b.at || (!strcmp(a.at->fn, b.at->fn) && loc_same(a.at->call, b.at->call));
}

/* The kernel body an op belongs to; *task: the innermost task region around it (NULL: none). */
static const TBlock *owner(const TOp *op, const TBlock **task) {
  const TBlock *b = op->block;
  *task = NULL;
  while (b && b->parent) {
    if (b->parent->opc == OP_TASKS && !*task) *task = b;
    b = b->parent->block;
  }
  return b;
}

static int round_up(int64_t x, int64_t a) { return (int)((x + a - 1) / a * a); }

typedef struct Row {
  int64_t off, bytes;
  const char *name, *what, *where;
} Row;

typedef struct Walk {
  Ctx *c;
  Row *rows;
  int nrows, cap;
  Vec tmem; /* the tmem() ops */
  int mbar_arrays, mbars;
  unsigned named_ids; /* bit i: named_barrier(i) with a constant id */
  bool named_dyn;     /* named_barrier(id) with an id known at run time */
} Walk;

static void add_row(Walk *w, Row r) {
  if (w->nrows == w->cap) {
    int cap = w->cap ? w->cap * 2 : 16;
    Row *n = ar_alloc(&w->c->arena, sizeof(Row) * (size_t)cap);
    if (w->nrows) memcpy(n, w->rows, sizeof(Row) * (size_t)w->nrows);
    w->rows = n;
    w->cap = cap;
  }
  w->rows[w->nrows++] = r;
}

static const char *val_name(const TValue *v) { return v->name ? v->name : "-"; }

/* A buffer or mbarrier array as passes.c placed it. */
static void alloc_row(Walk *w, const TOp *op) {
  Ctx *c = w->c;
  const Type *t = op->res[0]->type;
  const char *unused = op->block ? "" : " (unused, still placed)";
  if (op->opc == OP_BAR_ALLOC) {
    w->mbar_arrays++;
    w->mbars += t->nbuf ? t->nbuf : 1;
    add_row(w, (Row){op->ival, 8 * (int64_t)(t->nbuf ? t->nbuf : 1), val_name(op->res[0]),
                     ar_printf(&c->arena, "%s, arrive %lld%s", ty_str(c, t), (long long)op->ival2, unused),
                     loc_str(c, op->loc)});
    return;
  }
  /* the slot stride of passes.c plan_op and lower_hw.c slot_stride() */
  int64_t slot = t->swizzle ? round_up(op->ival2, 1024) : round_up(op->ival2, 128);
  add_row(w, (Row){op->ival, slot * (t->nbuf ? t->nbuf : 1), val_name(op->res[0]),
                   ar_printf(&c->arena, "%s%s", ty_str(c, t), unused), loc_str(c, op->loc)});
}

static void walk_op(TOp *op, void *ud) {
  Walk *w = ud;
  switch (op->opc) {
  case OP_TMEM_ALLOC:
    vec_push(&w->c->arena, &w->tmem, op);
    break;
  case OP_NAMED_BAR:
    if (op->ival > 0 && op->ival < 32) w->named_ids |= 1u << op->ival;
    else if (op->ival < 0) w->named_dyn = true;
    break;
  default:
    break;
  }
}

static void sort_rows(Row *r, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && r[j].off < r[j - 1].off; j--) {
      Row x = r[j];
      r[j] = r[j - 1];
      r[j - 1] = x;
    }
}

static int width(const char *s, int w) {
  int n = (int)strlen(s);
  return n > w ? n : w;
}

/* "4-7" for warps lo..hi, "4" for one */
static const char *warp_range(Ctx *c, int lo, int n) {
  return n == 1 ? ar_printf(&c->arena, "%d", lo) : ar_printf(&c->arena, "%d-%d", lo, lo + n - 1);
}

static const char *task_label(Ctx *c, const TBlock *t) {
  const char *n = t->task_name ? t->task_name : "?";
  return t->replicas > 1 ? ar_printf(&c->arena, "%s x%d", n, t->replicas) : n;
}

static const StTask *task_scratch(Ctx *c, const TBlock *t) {
  for (int i = 0; i < c->stats.tasks.len; i++) {
    const StTask *s = c->stats.tasks.data[i];
    if (s->task == t) return s;
  }
  return NULL;
}

/* The kernel's register cap: maxnreg, or (not lowered yet) the one
 * lowering gives a kernel whose tasks set register budgets. */
static int reg_cap(const TFunc *f) {
  if (f->maxnreg) return f->maxnreg;
  for (const TOp *op = f->body->first; op; op = op->next)
    if (op->opc == OP_TASKS && op->nregions && op->regions[0]->regs) return ir_even_maxnreg(f->warps);
  return 0;
}

/* The tasks: warps, register budget, scratch slice, named barrier. */
static void report_tasks(Ctx *c, const TFunc *f, const TOp *tasks, Buf *out) {
  int first_rep = 0;
  int cap = reg_cap(f);
  int wn = 4;
  const char **label = ar_alloc(&c->arena, sizeof(char *) * (size_t)tasks->nregions);
  const char **warps = ar_alloc(&c->arena, sizeof(char *) * (size_t)tasks->nregions);
  for (int i = 0; i < tasks->nregions; i++) {
    const TBlock *t = tasks->regions[i];
    label[i] = task_label(c, t);
    wn = width(label[i], wn);
    int per = t->warps < 4 ? 4 : t->warps;
    Buf b = {0};
    for (int k = 0; k < t->replicas; k++)
      buf_printf(&b, "%s%s", k ? ", " : "", warp_range(c, t->warp0 + k * per, t->warps));
    warps[i] = ar_strdup(&c->arena, b.data ? b.data : "");
    buf_free(&b);
  }
  int ww = 5;
  for (int i = 0; i < tasks->nregions; i++) ww = width(warps[i], ww);
  buf_printf(out, "  tasks (%s):\n", loc_str(c, tasks->loc));
  buf_printf(out, "    %-*s  %-*s  %-24s  %-22s  %s\n", wn, "task", ww, "warps", "registers", "scratch",
             "task_barrier");
  for (int i = 0; i < tasks->nregions; i++) {
    const TBlock *t = tasks->regions[i];
    const char *regs = t->regs ? ar_printf(&c->arena, "%d (setmaxnreg.%s)", t->regs,
                                           t->regs > cap ? "inc" : "dec")
                               : "the kernel's";
    const StTask *s = task_scratch(c, t);
    const char *scr = !s ? "?" : !s->stride ? "0"
                      : t->replicas > 1 ? ar_printf(&c->arena, "%d each @%d", s->stride, s->offset)
                                        : ar_printf(&c->arena, "%d @%d", s->stride, s->offset);
    const char *bar = warp_range(c, 8 + first_rep, t->replicas); /* lower.c: 8 + the replica's index among all */
    first_rep += t->replicas;
    buf_printf(out, "    %-*s  %-*s  %-24s  %-22s  %s\n", wn, label[i], ww, warps[i], regs, scr, bar);
  }
}

static void find_tasks(TOp *op, void *ud) {
  Vec *v = ((void **)ud)[0];
  Ctx *c = ((void **)ud)[1];
  if (op->opc == OP_TASKS) vec_push(&c->arena, v, op);
}

/* What an operation that takes scratch is: a conversion with both layouts,
 * a reduction across warps, or its name and type. */
static const char *scratch_what(Ctx *c, const TOp *op) {
  if (op->opc == OP_CONVERT && op->opnds[0]->type->layout && op->res[0]->type->layout)
    return ar_printf(&c->arena, "convert %s %s -> %s", ty_str(c, op->opnds[0]->type),
                     ly_str(c, op->opnds[0]->type->layout), ly_str(c, op->res[0]->type->layout));
  if (op->opc == OP_REDUCE)
    return ar_printf(&c->arena, "reduce %s along %d, across warps", ty_str(c, op->opnds[0]->type), op->axis);
  return ar_printf(&c->arena, "%s %s", ir_opname(op->opc), ty_str(c, op->nres ? op->res[0]->type : op->opnds[0]->type));
}

/* The operations that took scratch, in program order, one line per group
 * of warps, source place and operation (an unrolled loop's copies counted). */
static void report_scratch(Ctx *c, const TFunc *f, Buf *out) {
  int n = c->stats.scratch.len, m = 0;
  const StScratch **mine = ar_alloc(&c->arena, sizeof(StScratch *) * (size_t)(n ? n : 1));
  const char **what = ar_alloc(&c->arena, sizeof(char *) * (size_t)(n ? n : 1));
  const TBlock **tk = ar_alloc(&c->arena, sizeof(TBlock *) * (size_t)(n ? n : 1));
  int *count = ar_alloc(&c->arena, sizeof(int) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) {
    const StScratch *s = c->stats.scratch.data[i];
    const TBlock *task;
    if (owner(s->op, &task) != f->body) continue;
    const char *w = scratch_what(c, s->op);
    int j = 0;
    while (j < m && !(tk[j] == task && loc_same(mine[j]->op->loc, s->op->loc) && !strcmp(what[j], w))) j++;
    if (j < m) {
      count[j]++;
      if (s->bytes > mine[j]->bytes) mine[j] = s;
      continue;
    }
    mine[m] = s, what[m] = w, count[m] = 1, tk[m] = task;
    m++;
  }
  if (!m) return;
  int wn = 6;
  for (int i = 0; i < m; i++) wn = width(tk[i] ? tk[i]->task_name : "kernel", wn);
  buf_puts(out, "  scratch (shared memory of layout conversions and reductions, reused by each group of warps):\n");
  for (int i = 0; i < m; i++) {
    buf_printf(out, "    %-*s  %7d bytes  %s", wn, tk[i] ? tk[i]->task_name : "kernel", mine[i]->bytes,
               loc_str(c, mine[i]->op->loc));
    if (count[i] > 1) buf_printf(out, " (%d times)", count[i]);
    buf_printf(out, "\n    %-*s  %13s  %s\n", wn, "", "", what[i]);
  }
}

static void report_kernel(Ctx *c, const TFunc *f, Buf *out) {
  StStats *st = &c->stats;
  /* lowering sets smem_bytes (allocations + scratch); a kernel it stopped before has none */
  bool lowered = st->ran[ST_LOWER] && f->smem_bytes >= f->smem_static;
  buf_printf(out, "kernel %s (%s): %d warps, %d threads", f->name, loc_str(c, f->loc), f->warps, f->warps * 32);
  if (f->cluster[0] * f->cluster[1] * f->cluster[2] > 1)
    buf_printf(out, ", cluster %d x %d x %d", f->cluster[0], f->cluster[1], f->cluster[2]);
  buf_puts(out, "\n");

  /* registers and spills */
  const StAsm *a = NULL;
  for (int i = 0; i < st->asm_fns.len; i++)
    if (!strcmp(((StAsm *)st->asm_fns.data[i])->name, f->name)) a = st->asm_fns.data[i];
  const char *cap = reg_cap(f) ? ar_printf(&c->arena, "; cap %d (maxnreg)", reg_cap(f)) : "";
  if (!st->ran[ST_ASM]) {
    buf_printf(out, "  registers: not assembled%s\n  spills: not assembled\n", cap);
  } else {
    if (a && a->have_regs) buf_printf(out, "  registers: %d a thread%s\n", a->regs, cap);
    else buf_printf(out, "  registers: ? (not in the %s report)%s\n", st->assembler ? st->assembler : "assembler", cap);
    if (a && a->have_frame)
      buf_printf(out, "  spills: %d bytes stored, %d bytes loaded; stack frame %d bytes\n", a->spill_st, a->spill_ld,
                 a->stack);
    else buf_printf(out, "  spills: ? (not in the %s report)\n", st->assembler ? st->assembler : "assembler");
  }

  /* tasks */
  Vec tasks = {0};
  void *ud[2] = {&tasks, c};
  ir_walk(f->body, find_tasks, ud);
  for (int i = 0; i < tasks.len; i++) report_tasks(c, f, tasks.data[i], out);

  /* shared memory, buffer by buffer */
  Walk w = {.c = c};
  ir_walk(f->body, walk_op, &w);
  for (int i = 0; i < st->allocs.len; i++) {
    const StAlloc *al = st->allocs.data[i];
    if (al->f == f) alloc_row(&w, al->op);
  }
  if (f->tmem_cols)
    add_row(&w, (Row){f->tmem_slot, 8, "-", "the TMEM address tcgen05.alloc writes", "-"});
  int scratch = f->smem_bytes - f->smem_static;
  if (lowered) {
    int outside = 0;
    for (int i = 0; i < st->scratch.len; i++) {
      const StScratch *s = st->scratch.data[i];
      const TBlock *task;
      if (owner(s->op, &task) == f->body && !task && s->bytes > outside) outside = s->bytes;
    }
    if (outside)
      add_row(&w, (Row){f->smem_static, round_up(outside, 128), "scratch", "code outside tasks", "-"});
    for (int i = 0; i < st->tasks.len; i++) {
      const StTask *t = st->tasks.data[i];
      const TBlock *b = t->task;
      const TBlock *body = b->parent ? b->parent->block : NULL;
      while (body && body->parent) body = body->parent->block;
      if (body != f->body || !t->stride) continue;
      add_row(&w, (Row){t->offset, (int64_t)t->stride * b->replicas, "scratch",
                        b->replicas > 1 ? ar_printf(&c->arena, "task %s, %d replicas x %d", b->task_name, b->replicas,
                                                    t->stride)
                                        : ar_printf(&c->arena, "task %s", b->task_name),
                        "-"});
    }
    buf_printf(out, "  shared memory: %d bytes of %d: %d allocated + %d scratch\n", f->smem_bytes, 227 * 1024,
               f->smem_static, scratch);
  } else {
    buf_printf(out, "  shared memory: %d bytes allocated; scratch not known (not lowered)\n", f->smem_static);
  }
  sort_rows(w.rows, w.nrows);
  if (w.nrows) {
    int nw = 6, ww = 4;
    for (int i = 0; i < w.nrows; i++) nw = width(w.rows[i].name, nw), ww = width(w.rows[i].what, ww);
    buf_printf(out, "    %8s  %8s  %-*s  %-*s  %s\n", "offset", "bytes", nw, "buffer", ww, "what", "where");
    for (int i = 0; i < w.nrows; i++)
      buf_printf(out, "    %8lld  %8lld  %-*s  %-*s  %s\n", (long long)w.rows[i].off, (long long)w.rows[i].bytes, nw,
                 w.rows[i].name, ww, w.rows[i].what, w.rows[i].where);
  }
  if (lowered) report_scratch(c, f, out);

  /* tensor memory (sm_100a) */
  if (f->tmem_cols) {
    buf_printf(out, "  tensor memory: %d of 512 columns; tcgen05.alloc takes %d (a power of two, at least 32)\n",
               f->tmem_cols, ir_tmem_alloc_cols(f));
    int nw = 6;
    for (int i = 0; i < w.tmem.len; i++) nw = width(val_name(((TOp *)w.tmem.data[i])->res[0]), nw);
    buf_printf(out, "    %-9s  %-*s  %s\n", "columns", nw, "buffer", "what");
    for (int i = 0; i < w.tmem.len; i++) {
      const TOp *op = w.tmem.data[i];
      const Type *t = op->res[0]->type;
      /* slot k starts at ival + k * ival2 (an alias: its base's stride) and takes the columns of its shape */
      int64_t cols = op->ival2 * ((t->nbuf ? t->nbuf : 1) - 1) + ty_tmem_cols((DType)t->elem.dt, t->shape[1]);
      const char *range = ar_printf(&c->arena, "%lld-%lld", (long long)op->ival, (long long)(op->ival + cols - 1));
      buf_printf(out, "    %-9s  %-*s  %s%s  %s\n", range, nw, val_name(op->res[0]), ty_str(c, t),
                 op->flags & OPF_ALIAS ? " (alias)" : "", loc_str(c, op->loc));
    }
  }

  /* barriers */
  buf_printf(out, "  barriers: %d mbarrier%s", w.mbars, w.mbars == 1 ? "" : "s");
  if (w.mbar_arrays > 1) buf_printf(out, " in %d arrays", w.mbar_arrays);
  buf_puts(out, "; named barriers:");
  bool any = false;
  if (tasks.len) {
    int maxrep = 0; /* each tasks { } numbers its replicas' barriers from 8 */
    for (int i = 0; i < tasks.len; i++) {
      const TOp *op = tasks.data[i];
      int k = 0;
      for (int r = 0; r < op->nregions; r++) k += op->regions[r]->replicas;
      if (k > maxrep) maxrep = k;
    }
    buf_printf(out, " %s (task replicas)", maxrep > 1 ? ar_printf(&c->arena, "8-%d", 7 + maxrep) : "8");
    any = true;
  }
  if (w.named_ids) {
    buf_printf(out, "%s named_barrier", any ? "," : "");
    bool first = true;
    for (int i = 1; i < 8; i++)
      if (w.named_ids >> i & 1) {
        buf_printf(out, "%s %d", first ? "" : ",", i);
        first = false;
      }
    any = true;
  }
  if (w.named_dyn) {
    buf_printf(out, "%s named_barrier ids chosen at run time (1-7)", any ? "," : "");
    any = true;
  }
  if (!any) buf_puts(out, " none beyond the whole CTA's (0)");
  if (a && a->barriers) buf_printf(out, "; %s: %d used", st->assembler, a->barriers);
  buf_puts(out, "\n");
}

static const char *const stage_names[ST_NSTAGES] = {"parse", "sema", "passes", "lowering", "mlir-passes", "llvm", "ptx", "asm"};

void st_report(Ctx *c, const char *filename, double seconds, Buf *out) {
  TModule *m = c->stats.mod;
  buf_printf(out, "%s: %s, %d kernel%s\n", filename, c->arch, m->kernels.len, m->kernels.len == 1 ? "" : "s");
  for (int k = 0; k < m->kernels.len; k++) report_kernel(c, m->kernels.data[k], out);
  buf_puts(out, "time (ms):");
  for (int s = 0; s < ST_NSTAGES; s++)
    if (c->stats.ran[s])
      buf_printf(out, " %s %.1f,", s == ST_ASM && c->stats.assembler ? c->stats.assembler : stage_names[s],
                 c->stats.sec[s] * 1e3);
  buf_printf(out, " total %.1f\n", seconds * 1e3);
}

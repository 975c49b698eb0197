/* tir.c - Tile IR: values, operations with nested regions, blocks; the
 * printer behind `tilec --emit=tir`.
 *
 * TIR is SSA with structured control flow (for / if / while ops own their
 * regions, values cross region boundaries only through block arguments and
 * yields), close to what the MLIR scf dialect expects, so lowering is a
 * walk. Every tile value carries its shape, dtype and, after passes.c, its
 * layout. */
#include "tilec_int.h"
#include <string.h>

static const char *opnames[OP_COUNT] = {
    [OP_CONST] = "const", [OP_SPLAT] = "splat", [OP_ARANGE] = "arange", [OP_PROGRAM_ID] = "program_id",
    [OP_NUM_PROGRAMS] = "num_programs", [OP_PARAM] = "param", [OP_ADD] = "add", [OP_SUB] = "sub",
    [OP_MUL] = "mul", [OP_DIV] = "div", [OP_REM] = "rem", [OP_AND] = "and", [OP_OR] = "or", [OP_XOR] = "xor",
    [OP_SHL] = "shl", [OP_SHR] = "shr", [OP_MIN] = "min", [OP_MAX] = "max", [OP_FDIV] = "fdiv", [OP_CMP] = "cmp",
    [OP_PTR_ADD] = "ptr_add", [OP_NEG] = "neg", [OP_NOT] = "not", [OP_EXP] = "exp", [OP_EXP2] = "exp2",
    [OP_LOG] = "log", [OP_LOG2] = "log2", [OP_SQRT] = "sqrt", [OP_RSQRT] = "rsqrt", [OP_ABS] = "abs",
    [OP_FLOOR] = "floor", [OP_CEIL] = "ceil", [OP_TANH] = "tanh", [OP_SIN] = "sin", [OP_COS] = "cos",
    [OP_ERF] = "erf", [OP_RCP] = "rcp", [OP_FMA] = "fma", [OP_SELECT] = "select", [OP_CAST] = "cast",
    [OP_BITCAST] = "bitcast", [OP_EXPAND_DIMS] = "expand_dims", [OP_BROADCAST] = "broadcast",
    [OP_TRANS] = "trans", [OP_CONVERT] = "convert_layout", [OP_LOAD] = "load", [OP_STORE] = "store",
    [OP_ATOMIC_ADD] = "atomic_add", [OP_REDUCE] = "reduce", [OP_DOT] = "dot", [OP_FOR] = "for",
    [OP_IF] = "if", [OP_WHILE] = "while", [OP_CONDITION] = "condition", [OP_YIELD] = "yield",
    [OP_RETURN] = "return", [OP_SMEM_ALLOC] = "smem_alloc", [OP_BAR_ALLOC] = "mbarrier_alloc", [OP_SLOT] = "slot",
    [OP_SLICE] = "slice", [OP_SMEM_LOAD] = "smem_load", [OP_SMEM_STORE] = "smem_store",
    [OP_SMEM_READ] = "smem_read", [OP_SMEM_WRITE] = "smem_write",
    [OP_BAR_EXPECT] = "barrier_expect", [OP_BAR_ARRIVE] = "barrier_arrive", [OP_BAR_WAIT] = "barrier_wait",
    [OP_NAMED_BAR] = "named_barrier", [OP_FENCE_ASYNC] = "fence_async_shared", [OP_TMA_LOAD] = "tma_load",
    [OP_TMA_STORE] = "tma_store", [OP_TMA_STORE_WAIT] = "tma_store_wait", [OP_DSMEM_COPY] = "dsmem_copy", [OP_BULK_STORE_ADD] = "bulk_store_add", [OP_BULK_LOAD] = "bulk_load", [OP_MMA_ASYNC] = "mma_async",
    [OP_MMA_COMMIT] = "mma_commit", [OP_MMA_WAIT] = "mma_wait", [OP_TASKS] = "tasks",
    [OP_REPLICA_ID] = "replica_id", [OP_CLUSTER_RANK] = "cluster_rank", [OP_CLUSTER_SYNC] = "cluster_sync",
    [OP_SEM_WAIT] = "sem_wait", [OP_SEM_SIGNAL] = "sem_signal",
    [OP_ASYNC_COPY] = "async_copy", [OP_ASYNC_COMMIT] = "async_commit", [OP_ASYNC_WAIT] = "async_wait",
    [OP_TMEM_ALLOC] = "tmem_alloc", [OP_TMEM_LOAD] = "tmem_load", [OP_TMEM_STORE] = "tmem_store",
    [OP_TC_MMA] = "tcgen05_mma", [OP_TC_COMMIT] = "tcgen05_commit",
    [OP_PRINT] = "print", [OP_DEVICE_ASSERT] = "device_assert", [OP_CLOCK] = "clock64",
};

const char *ir_opname(Opcode o) { return o < OP_COUNT && opnames[o] ? opnames[o] : "?"; }

bool ir_is_elementwise(Opcode o) {
  return (o >= OP_ADD && o <= OP_PTR_ADD) || (o >= OP_NEG && o <= OP_BITCAST);
}

int ir_block_warps(const TBlock *b) {
  while (b) {
    if (b->warps) return b->warps;
    b = b->parent ? b->parent->block : NULL;
  }
  return 4;
}

static TValue *new_value(Ctx *c, Type *t) {
  TValue *v = ar_alloc(&c->arena, sizeof *v);
  v->id = c->next_value_id++;
  v->type = t;
  return v;
}

TBlock *ir_block(Ctx *c, int nargs, Type **argtypes) {
  TBlock *b = ar_alloc(&c->arena, sizeof *b);
  b->nargs = nargs;
  b->args = ar_alloc(&c->arena, sizeof(TValue *) * (size_t)(nargs + 1));
  for (int i = 0; i < nargs; i++) {
    b->args[i] = new_value(c, argtypes[i]);
    b->args[i]->block = b;
    b->args[i]->index = i;
  }
  return b;
}

TOp *ir_op(Ctx *c, Opcode opc, Loc loc, int nopnds, TValue **opnds, int nres, Type **restypes) {
  if (++c->nops > TC_MAX_OPS && !c->too_big) {
    c->too_big = true;
    dg_error(c, loc, "the program is too large: more than %d operations after inlining and unrolling "
                     "(use range loops instead of static_range)", TC_MAX_OPS);
  }
  TOp *op = ar_alloc(&c->arena, sizeof *op);
  op->opc = opc;
  op->loc = loc;
  if (!op->loc.at) op->loc.at = c->inl; /* made inside an inlined fn: errors name its calls */
  op->nopnds = nopnds;
  op->opnds = ar_alloc(&c->arena, sizeof(TValue *) * (size_t)(nopnds + 1));
  for (int i = 0; i < nopnds; i++) op->opnds[i] = opnds[i];
  op->nres = nres;
  op->res = ar_alloc(&c->arena, sizeof(TValue *) * (size_t)(nres + 1));
  for (int i = 0; i < nres; i++) {
    op->res[i] = new_value(c, restypes[i]);
    op->res[i]->def = op;
    op->res[i]->index = i;
  }
  return op;
}

void ir_add_region(Ctx *c, TOp *op, TBlock *b) {
  TBlock **r = ar_alloc(&c->arena, sizeof(TBlock *) * (size_t)(op->nregions + 1));
  for (int i = 0; i < op->nregions; i++) r[i] = op->regions[i];
  r[op->nregions++] = b;
  op->regions = r;
  b->parent = op;
}

TValue *ir_add_arg(Ctx *c, TBlock *b, Type *t) {
  TValue **a = ar_alloc(&c->arena, sizeof(TValue *) * (size_t)(b->nargs + 2));
  for (int i = 0; i < b->nargs; i++) a[i] = b->args[i];
  TValue *v = new_value(c, t);
  v->block = b;
  v->index = b->nargs;
  a[b->nargs++] = v;
  b->args = a;
  return v;
}

void ir_append(TBlock *b, TOp *op) {
  op->block = b;
  op->prev = b->last;
  op->next = NULL;
  if (b->last) b->last->next = op;
  else b->first = op;
  b->last = op;
}

void ir_insert_before(TOp *before, TOp *op) {
  TBlock *b = before->block;
  op->block = b;
  op->next = before;
  op->prev = before->prev;
  if (before->prev) before->prev->next = op;
  else b->first = op;
  before->prev = op;
}

void ir_insert_after(TOp *after, TOp *op) {
  if (after->next) {
    ir_insert_before(after->next, op);
  } else {
    ir_append(after->block, op);
  }
}

void ir_remove(TOp *op) {
  TBlock *b = op->block;
  if (!b) return;
  if (op->prev) op->prev->next = op->next;
  else b->first = op->next;
  if (op->next) op->next->prev = op->prev;
  else b->last = op->prev;
  op->prev = op->next = NULL;
  op->block = NULL;
}

void ir_walk(TBlock *b, ir_walk_fn fn, void *ud) {
  for (TOp *op = b->first; op;) {
    TOp *nx = op->next;
    for (int i = 0; i < op->nregions; i++) ir_walk(op->regions[i], fn, ud);
    fn(op, ud);
    op = nx;
  }
}

typedef struct ReplaceCtx {
  TValue *from, *to;
} ReplaceCtx;

static void replace_in(TOp *op, void *ud) {
  ReplaceCtx *r = ud;
  for (int i = 0; i < op->nopnds; i++)
    if (op->opnds[i] == r->from) op->opnds[i] = r->to;
}

void ir_replace_uses(TBlock *scope, TValue *from, TValue *to) {
  ReplaceCtx r = {from, to};
  ir_walk(scope, replace_in, &r);
}

/* ---- printer ---- */

static void pr_type(Ctx *c, Buf *o, const Type *t) {
  buf_puts(o, ty_str(c, t));
  if (t->kind == TY_TILE && t->layout) buf_printf(o, " %s", ly_str(c, t->layout));
}

static void pr_val(Buf *o, const TValue *v) { buf_printf(o, "%%%d", v->id); }

static void pr_block(Ctx *c, Buf *o, TBlock *b, int depth);

static void indent(Buf *o, int d) {
  for (int i = 0; i < d; i++) buf_puts(o, "  ");
}

static const char *cmp_names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
static const char *red_names[] = {"sum", "max", "min", "any", "all"};

static void pr_op(Ctx *c, Buf *o, TOp *op, int d) {
  indent(o, d);
  for (int i = 0; i < op->nres; i++) {
    buf_puts(o, i ? ", " : "");
    pr_val(o, op->res[i]);
  }
  if (op->nres) buf_puts(o, " = ");
  buf_puts(o, ir_opname(op->opc));
  switch (op->opc) {
  case OP_CONST:
    if (ty_is_float((DType)op->res[0]->type->elem.dt)) buf_printf(o, " %.9g", op->fval);
    else buf_printf(o, " %lld", (long long)op->ival);
    break;
  case OP_ARANGE: buf_printf(o, " %lld, %lld", (long long)op->ival, (long long)op->ival2); break;
  case OP_PROGRAM_ID:
  case OP_NUM_PROGRAMS:
  case OP_EXPAND_DIMS: buf_printf(o, " axis=%d", op->axis); break;
  case OP_CMP: buf_printf(o, " %s", cmp_names[op->pred]); break;
  case OP_REDUCE: buf_printf(o, " %s axis=%d", red_names[op->pred], op->axis); break;
  case OP_CAST: buf_printf(o, " to %s", ty_elem_str(c, op->to)); break;
  case OP_SMEM_ALLOC: buf_printf(o, " offset=%lld", (long long)op->ival); break;
  case OP_BAR_ALLOC: buf_printf(o, " offset=%lld arrive=%lld", (long long)op->ival, (long long)op->ival2); break;
  case OP_SLICE:
    if (op->res[0]->type->kind == TY_TILE) buf_printf(o, " dim=%d offset=%lld", op->axis, (long long)op->ival);
    else buf_printf(o, " dim=%d", op->axis);
    break;
  case OP_NAMED_BAR:
    if (op->nopnds) buf_printf(o, " threads=%lld", (long long)op->ival2);
    else buf_printf(o, " id=%lld threads=%lld", (long long)op->ival, (long long)op->ival2);
    if (op->pred) buf_printf(o, " arrive");
    break;
  case OP_TMA_STORE_WAIT:
    buf_printf(o, " %lld%s", (long long)op->ival, op->ival2 ? " writes" : "");
    break;
  case OP_BULK_STORE_ADD:
    if (op->ival2) buf_puts(o, " copy"); /* bulk_store */
    break;
  case OP_BAR_ARRIVE:
    if (op->ival) buf_puts(o, " each");
    break;
  case OP_MMA_WAIT:
  case OP_ASYNC_WAIT: buf_printf(o, " %lld", (long long)op->ival); break;
  case OP_TMEM_ALLOC:
    buf_printf(o, " column=%lld%s", (long long)op->ival, op->flags & OPF_PAIR ? " pair" : "");
    break;
  case OP_TC_MMA:
    if (op->ival < 0) buf_puts(o, " overwrite");
    if (op->flags & OPF_PAIR) buf_puts(o, " pair");
    break;
  case OP_TC_COMMIT:
    if (op->flags & OPF_PAIR) buf_puts(o, " pair");
    break;
  case OP_TMA_STORE:
    if (op->pred) buf_puts(o, " add");
    break;
  case OP_TMA_LOAD:
    if (op->flags & OPF_MCAST) buf_puts(o, " multicast");
    if (op->flags & OPF_PAIR) buf_puts(o, " pair");
    if (op->flags & OPF_PLANE) buf_puts(o, " plane");
    break;
  case OP_EXP2:
    if (op->ival) buf_printf(o, " fma_every=%lld", (long long)op->ival);
    break;
  case OP_MMA_ASYNC:
    if (op->flags & OPF_FRESH_A) buf_puts(o, " fresh_a");
    if (op->flags & OPF_FRESH_B) buf_puts(o, " fresh_b");
    break;
  default: break;
  }
  for (int i = 0; i < op->nopnds; i++) {
    buf_puts(o, i ? ", " : " ");
    if (op->opc == OP_MMA_WAIT && op->ival2 == i + 1) buf_puts(o, "after=");
    if (op->opc == OP_MMA_WAIT && op->pred == i + 1) buf_puts(o, "release=");
    if (op->opc == OP_TC_MMA && op->ival > 0 && i == 3) buf_puts(o, "accumulate=");
    if (op->opc == OP_TC_MMA && op->ival2 == i + 1) buf_puts(o, "commit=");
    pr_val(o, op->opnds[i]);
  }
  if (op->flags & OPF_SKIP_ONES) buf_puts(o, " skip_ones");
  if (op->flags & OPF_TRANS) buf_puts(o, " trans");
  if (op->opc == OP_LOAD || op->opc == OP_STORE || op->opc == OP_ATOMIC_ADD || op->opc == OP_ASYNC_COPY) {
    if (op->flags & OPF_MASK) buf_puts(o, " masked");
    if (op->flags & OPF_OTHER) buf_puts(o, " other");
  }
  if (op->nres == 1) {
    buf_puts(o, " : ");
    pr_type(c, o, op->res[0]->type);
  } else if (op->nres > 1 && op->opc != OP_FOR && op->opc != OP_IF && op->opc != OP_WHILE) {
    buf_puts(o, " : (");
    for (int i = 0; i < op->nres; i++) {
      if (i) buf_puts(o, ", ");
      pr_type(c, o, op->res[i]->type);
    }
    buf_puts(o, ")");
  } else if (op->nres > 1) {
    buf_puts(o, " -> (");
    for (int i = 0; i < op->nres; i++) {
      if (i) buf_puts(o, ", ");
      pr_type(c, o, op->res[i]->type);
    }
    buf_puts(o, ")");
  }
  if (op->loc.line) buf_printf(o, "  @%d:%d", op->loc.line, op->loc.col);
  buf_puts(o, "\n");
  for (int r = 0; r < op->nregions; r++) {
    indent(o, d);
    TBlock *b = op->regions[r];
    if (op->opc == OP_IF) buf_puts(o, r == 0 ? "then" : "else");
    else if (op->opc == OP_WHILE) buf_puts(o, r == 0 ? "before" : "do");
    else if (op->opc == OP_TASKS)
      buf_printf(o, "task %s(warps=%d, regs=%d, replicas=%d, first_warp=%d)", b->task_name, b->warps, b->regs,
                 b->replicas, b->warp0);
    else buf_puts(o, "do");
    if (b->nargs) {
      buf_puts(o, " (");
      for (int i = 0; i < b->nargs; i++) {
        if (i) buf_puts(o, ", ");
        pr_val(o, b->args[i]);
        buf_puts(o, ": ");
        pr_type(c, o, b->args[i]->type);
      }
      buf_puts(o, ")");
    }
    buf_puts(o, " {\n");
    pr_block(c, o, b, d + 1);
    indent(o, d);
    buf_puts(o, "}\n");
  }
}

static void pr_block(Ctx *c, Buf *o, TBlock *b, int depth) {
  for (TOp *op = b->first; op; op = op->next) pr_op(c, o, op, depth);
}

void ir_print_module(Ctx *c, TModule *m, Buf *o) {
  for (int k = 0; k < m->kernels.len; k++) {
    TFunc *f = m->kernels.data[k];
    buf_printf(o, "kernel @%s(", f->name);
    for (int i = 0; i < f->nparams; i++) {
      TParam *p = &f->params[i];
      if (i) buf_puts(o, ", ");
      pr_val(o, p->value);
      if (p->tma) {
        buf_printf(o, " %s: tma<%s, [%d, %d], swizzle %d>", p->name, ty_elem_str(c, p->elem), p->box[0], p->box[1],
                   p->swizzle);
        continue;
      }
      buf_printf(o, " %s: %s", p->name, ty_elem_str(c, p->elem));
      if (p->align > 1) buf_printf(o, p->elem.dt == DT_PTR ? " align(%d)" : " multiple_of(%d)", p->align);
    }
    buf_printf(o, ") warps=%d", f->warps);
    if (f->cluster[0] * f->cluster[1] * f->cluster[2] > 1)
      buf_printf(o, " cluster=[%d,%d,%d]", f->cluster[0], f->cluster[1], f->cluster[2]);
    if (f->smem_bytes) buf_printf(o, " smem=%d", f->smem_bytes);
    if (f->pdl) buf_puts(o, " pdl");
    for (int i = 0; i < f->nconsts; i++)
      buf_printf(o, " %s=%s", f->consts[i].name, f->consts[i].text);
    buf_puts(o, " {\n");
    for (int i = 0; i < f->notes.len; i++) buf_printf(o, "  // %s\n", (const char *)f->notes.data[i]);
    pr_block(c, o, f->body, 1);
    buf_puts(o, "}\n");
  }
}

/* builtins_sm100.c - Blackwell's own builtins (sm_100a): tensor memory
 * (tmem, tmem_load, tmem_store) and mma_async / mma_commit as tcgen05.mma
 * and tcgen05.commit. What Blackwell shares with Hopper (shared memory,
 * mbarriers, TMA, tasks, the slots and slices of views) is builtins_hw.c's;
 * this file uses its argument helpers (sm_hw_*), lower_sm100.c lowers what
 * it emits, and docs/blackwell.md gives the design.
 *
 * Tensor memory is 128 lanes x 512 columns of 32 bits per SM. A tmem()
 * allocation takes whole lanes (128 rows) and some columns; the compiler
 * adds up every allocation of the kernel and refuses more than 512 columns
 * at the allocation that goes over. tcgen05.alloc then takes the total,
 * rounded up to a power of two of at least 32, once, at the kernel's start.
 * `alias = t` places an allocation on t's columns instead (buffers whose
 * lifetimes do not overlap: the program orders them, with barriers). */
#include "sema.h"
#include <string.h>

#define TMEM_COLUMNS 512 /* per SM (and per CTA: one CTA may take them all) */

static TOp *emit(S *s, Opcode opc, Loc loc, int n, TValue **ops, Type *rt) {
  TOp *op = ir_op(s->c, opc, loc, n, ops, rt ? 1 : 0, &rt);
  ir_append(s->blk, op);
  return op;
}

static bool is_tmem(SVal v) { return v.k == V_RT && v.v->type->kind == TY_TMEM; }

/* One tensor-memory view (a slot of a ring, or a slice of one). */
static TValue *tmem_view(S *s, BArgs *a, int i, const char *fname, const char *what) {
  if (!is_tmem(a->v[i])) {
    dg_error(s->c, a->loc[i], "%s of '%s' must be a tensor-memory view such as acc[slot], not %s", what, fname,
             sv_desc(s, a->v[i]));
    return NULL;
  }
  TValue *v = a->v[i].v;
  if (v->type->nbuf) {
    dg_error(s->c, a->loc[i], "%s of '%s' is a ring of %d tensor-memory buffer%s; pick one slot with [i]", what, fname,
             v->type->nbuf, v->type->nbuf == 1 ? "" : "s");
    return NULL;
  }
  return v;
}

static bool tmem_dtype(DType d) { return d == DT_F32 || d == DT_I32 || d == DT_U32 || d == DT_F16 || d == DT_BF16; }

/* tmem(..., pair = true): the kernel's tensor memory and MMAs are the CTA
 * pair's (.cta_group::2): every allocation of the kernel says so (ptxas
 * refuses a kernel mixing .cta_group::1 and ::2), in clusters of an even
 * number of CTAs (the pair: ranks 2p and 2p + 1). */
static bool pair_ok(S *s, Node *call, bool pair, Loc at) {
  for (TOp *op = s->kf->body->first; op; op = op->next)
    if (op->opc == OP_TMEM_ALLOC && !(op->flags & OPF_PAIR) != !pair) {
      dg_error(s->c, call->loc, "tmem(...%s) after a tmem(...%s): a kernel's tcgen05 instructions are all a CTA "
                                "pair's (.cta_group::2) or all one CTA's (ptxas refuses a kernel that mixes them)",
               pair ? ", pair = true" : "", pair ? "" : ", pair = true");
      dg_note(s->c, op->loc, "the earlier allocation");
      return false;
    }
  int n = s->kf->cluster[0] * s->kf->cluster[1] * s->kf->cluster[2];
  if (pair && n % 2) {
    dg_error(s->c, at, "tmem(..., pair = true) in a kernel launched in clusters of %d CTA%s: the CTA pair is ranks 2p "
                       "and 2p + 1 of a cluster, so the kernel needs clusters of an even size (add cluster(2))",
             n, n == 1 ? "" : "s");
    return false;
  }
  return true;
}

/* tmem(dtype, [rows, cols], buffers = 1, alias = t, pair = false) */
static SVal b_tmem(S *s, Node *call, Node *self) {
  static const Spec sp = {{"dtype", "shape", "buffers", "alias", "pair"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "tmem", &sp, &a)) return sv_err();
  if (a.v[0].k != V_DTYPE || a.v[0].elem.dt == DT_PTR || !tmem_dtype((DType)a.v[0].elem.dt)) {
    dg_error(s->c, a.loc[0], "tmem holds 32-bit elements (f32, i32, u32) or 16-bit ones two to a column (bf16, f16), "
                             "not %s",
             sv_desc(s, a.v[0]));
    return sv_err();
  }
  DType dt = (DType)a.v[0].elem.dt;
  int rank, shape[TC_MAX_RANK];
  if (!sm_dims_list(s, a.v[1], a.loc[1], "the shape of tmem", &rank, shape, false)) return sv_err();
  if (rank != 2) {
    dg_error(s->c, a.loc[1], "tensor memory is 2-D, [lanes, columns], not %d-D", rank);
    return sv_err();
  }
  if (shape[0] != 128) {
    dg_error(s->c, a.loc[1], "tmem [%d, %d]: an allocation takes all 128 lanes (rows) of tensor memory; [64, N] "
                             "(the M = 64 MMA's layout) is not supported yet",
             shape[0], shape[1]);
    return sv_err();
  }
  if (ty_dtype_bits(dt) == 16 && shape[1] % 2) {
    dg_error(s->c, a.loc[1], "tmem [%d, %d] of %s: 16-bit elements lie two to a 32-bit column, so the columns are even",
             shape[0], shape[1], ty_dtype_name(dt));
    return sv_err();
  }
  int64_t nbuf = 1;
  if (a.given[2] && !sm_const_int(s, a.v[2], a.loc[2], "the number of buffers", &nbuf)) return sv_err();
  if (nbuf < 1 || nbuf > 64) {
    dg_error(s->c, a.loc[2], "tmem buffers=%lld must be between 1 and 64", (long long)nbuf);
    return sv_err();
  }
  int per = ty_tmem_cols(dt, shape[1]); /* columns a slot takes */
  bool pair = false;
  if (a.given[4]) {
    if (a.v[4].k != V_BOOL) {
      dg_error(s->c, a.loc[4], "pair = takes true or false (a compile-time constant), not %s", sv_desc(s, a.v[4]));
      return sv_err();
    }
    pair = a.v[4].i != 0;
  }
  if (!pair_ok(s, call, pair, a.given[4] ? a.loc[4] : call->loc)) return sv_err();
  if (s->blk != s->kf->body) {
    dg_error(s->c, call->loc, "tmem(...) must be at the top level of the kernel (tensor memory is allocated once, "
                              "before loops and tasks)");
    return sv_err();
  }
  Type *t = ty_tile(s->c, (Elem){(uint8_t)dt, 0}, 2, shape);
  t->kind = TY_TMEM;
  t->nbuf = (int)nbuf;
  int64_t first, stride = per;
  if (a.given[3]) { /* on another allocation's columns */
    TValue *o = is_tmem(a.v[3]) ? a.v[3].v : NULL;
    if (!o || !o->def || o->def->opc != OP_TMEM_ALLOC) {
      dg_error(s->c, a.loc[3], "alias = takes a tmem(...) allocation (the whole ring), not %s", sv_desc(s, a.v[3]));
      return sv_err();
    }
    const TOp *base = o->def;
    if (per > base->ival2 || nbuf > o->type->nbuf) {
      dg_error(s->c, call->loc, "tmem(%s, [%d, %d], buffers = %lld) takes %d columns a slot; its alias %s has %lld "
                                "columns a slot and %d buffers: an alias fits inside, slot by slot",
               ty_dtype_name(dt), shape[0], shape[1], (long long)nbuf, per, ty_str(s->c, o->type),
               (long long)base->ival2, o->type->nbuf);
      return sv_err();
    }
    first = base->ival;
    stride = base->ival2; /* slot i of the alias is slot i of the base */
  } else {
    int64_t used = s->kf->tmem_cols, need = (int64_t)per * nbuf;
    if (used + need > TMEM_COLUMNS) {
      dg_error(s->c, call->loc, "tmem(%s, [%d, %d], buffers = %lld) needs %lld columns of tensor memory; with the "
                                "%lld allocated before it, the kernel would need %lld of the %d an SM has",
               ty_dtype_name(dt), shape[0], shape[1], (long long)nbuf, (long long)need, (long long)used,
               (long long)(used + need), TMEM_COLUMNS);
      for (TOp *op = s->kf->body->first; op; op = op->next)
        if (op->opc == OP_TMEM_ALLOC && !(op->flags & OPF_ALIAS))
          dg_note(s->c, op->loc, "%lld columns allocated here", (long long)(op->ival2 * op->res[0]->type->nbuf));
      dg_note(s->c, call->loc, "buffers whose lifetimes do not overlap can share columns: tmem(..., alias = t)");
      return sv_err();
    }
    first = used;
    s->kf->tmem_cols = (int)(used + need);
  }
  TOp *op = emit(s, OP_TMEM_ALLOC, call->loc, 0, NULL, t);
  op->ival = first;
  op->ival2 = stride;
  if (a.given[3]) op->flags |= OPF_ALIAS;
  if (pair) op->flags |= OPF_PAIR, s->kf->tmem_pair = true;
  return sv_rt(op->res[0]);
}

/* The lane rule of tcgen05.ld/st: warp w of the CTA reaches only TMEM lanes
 * 32 (w % 4) .. 32 (w % 4) + 31. Warp k of the group running the access
 * reads rows 32k .. 32k + 31 of the view (the 32x32b shape: a thread a row),
 * i.e. lanes lane0 + 32k ..; the group's first warp is known at compile
 * time (a task's place, or warp 0), so the rule is checked here. */
static bool lanes_ok(S *s, TValue *v, Loc loc, const char *fname) {
  const Type *t = v->type;
  int W = s->warps;
  if (W > 4) {
    dg_error(s->c, loc, "'%s' runs here on %d warps; a warp reaches 32 TMEM lanes and a view has at most 128, so it "
                        "runs on 1, 2 or 4 warps (a task of that many warps)",
             fname, W);
    return false;
  }
  if (t->shape[0] != 32 * W) {
    dg_error(s->c, loc, "'%s' of %s on %d warp%s: each warp moves 32 lanes (a thread a row), so the view has %d "
                        "rows, not %d (take a lane slice: view.slice(0, offset, %d))",
             fname, ty_str(s->c, t), W, W == 1 ? "" : "s", 32 * W, t->shape[0], 32 * W);
    return false;
  }
  int w0 = s->in_task ? s->task_warp0 : 0;
  for (int k = 0; k < W; k++) {
    int q = (w0 + k) % 4, lane = t->lane0 + 32 * k;
    if (lane != 32 * q) {
      dg_error(s->c, loc, "'%s' of TMEM lanes %d..%d: warp %d of the CTA (warp %d of this %s) reaches only lanes "
                          "%d..%d, the 32 lanes of its place in its warpgroup (warp %% 4 = %d); it would read lanes "
                          "%d..%d",
               fname, t->lane0, t->lane0 + t->shape[0] - 1, w0 + k, k, s->in_task ? "task" : "kernel", 32 * q,
               32 * q + 31, q, lane, lane + 31);
      return false;
    }
  }
  return true;
}

static bool regs_shape_ok(S *s, TValue *v, Loc loc, const char *fname) {
  int c = v->type->shape[1];
  if (c < 1 || (c & (c - 1)) || (ty_dtype_bits((DType)v->type->elem.dt) == 16 && c < 2)) {
    dg_error(s->c, loc, "'%s' of %s: a register tile's columns are a power of two%s (take a column slice)", fname,
             ty_str(s->c, v->type), ty_dtype_bits((DType)v->type->elem.dt) == 16 ? ", at least 2" : "");
    return false;
  }
  return true;
}

/* tmem_load(view) -> a register tile in the 32x32b layout: thread t of
 * warp k holds row 32k + t, every column (lower_sm100.c). */
static SVal b_tmem_load(S *s, Node *call, Node *self) {
  static const Spec sp = {{"view"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, "tmem_load", &sp, &a)) return sv_err();
  TValue *v = tmem_view(s, &a, 0, "tmem_load", "the view");
  if (!v || !regs_shape_ok(s, v, a.loc[0], "tmem_load") || !lanes_ok(s, v, call->loc, "tmem_load")) return sv_err();
  Type *t = ty_tile(s->c, v->type->elem, 2, v->type->shape);
  return sv_rt(emit(s, OP_TMEM_LOAD, call->loc, 1, &v, t)->res[0]);
}

/* tmem_store(view, x): x (a register tile of the view's shape and dtype)
 * into tensor memory, through the same 32x32b layout. */
static SVal b_tmem_store(S *s, Node *call, Node *self) {
  static const Spec sp = {{"view", "value"}, 2};
  BArgs a;
  if (!sm_bind_args(s, call, self, "tmem_store", &sp, &a)) return sv_err();
  TValue *v = tmem_view(s, &a, 0, "tmem_store", "the view");
  if (!v) return sv_err();
  TValue *x = a.v[1].k == V_RT ? a.v[1].v : NULL;
  if (!x || x->type->kind != TY_TILE || !ty_same_shape(x->type, v->type) || !ty_elem_eq(x->type->elem, v->type->elem)) {
    dg_error(s->c, a.loc[1], "tmem_store of %s into %s: the tile must have the view's shape and dtype",
             sv_desc(s, a.v[1]), ty_str(s->c, v->type));
    return sv_err();
  }
  if (!regs_shape_ok(s, v, a.loc[0], "tmem_store") || !lanes_ok(s, v, call->loc, "tmem_store")) return sv_err();
  emit(s, OP_TMEM_STORE, call->loc, 2, (TValue *[]){v, x}, NULL);
  return (SVal){.k = V_VOID};
}

/* mma_async(a, b, acc, accumulate = true, commit = bar): acc (+)= a @ b as
 * a chain of K/16 tcgen05.mma (cta_group::1, kind::f16, M = 128), issued
 * by the group's elected thread; acc is an f32 [128, N] tensor-memory view,
 * a an smem view [128, K] (or a bf16/f16 tensor-memory view), b an smem
 * view [K, N], with the layouts Hopper's mma_async takes. accumulate =
 * false (or a run-time bool that is false) makes the chain's first MMA
 * overwrite acc; commit = bar is mma_commit(bar) right after. */
static SVal b_mma_async(S *s, Node *call, Node *self) {
  static const Spec sp = {{"a", "b", "acc", "accumulate", "commit"}, 3};
  BArgs a;
  if (!sm_bind_args(s, call, self, "mma_async", &sp, &a)) return sv_err();
  bool a_tmem = is_tmem(a.v[0]);
  TValue *x = a_tmem ? tmem_view(s, &a, 0, "mma_async", "operand a") : sm_hw_view_arg(s, &a, 0, "mma_async", "operand a");
  TValue *y = x ? sm_hw_view_arg(s, &a, 1, "mma_async", "operand b") : NULL;
  if (!x || !y) return sv_err();
  if (!is_tmem(a.v[2]) || a.v[2].v->type->elem.dt != DT_F32) {
    dg_error(s->c, a.loc[2], "the accumulator of mma_async on %s is an f32 tensor-memory view such as acc[slot] (a "
                             "tmem(f32, [128, N]) buffer), not %s",
             s->c->arch, sv_desc(s, a.v[2]));
    return sv_err();
  }
  TValue *d = tmem_view(s, &a, 2, "mma_async", "the accumulator");
  if (!d) return sv_err();
  DType dt = (DType)x->type->elem.dt;
  if (dt != y->type->elem.dt || (dt != DT_BF16 && dt != DT_F16)) {
    dg_error(s->c, call->loc, "mma_async needs two bf16 or two f16 operands, not %s and %s", ty_str(s->c, x->type),
             ty_str(s->c, y->type));
    return sv_err();
  }
  /* a CTA pair's MMA (tcgen05.mma.cta_group::2): this CTA's operands are its rows of A and its half of B's
   * columns. M = 256: its 128 rows of A, its accumulator its 128 rows of D, every column. M = 128 (a's 64 rows):
   * its 64 rows of D fold onto the 128 lanes, the first half of D's columns on lanes 0..63, the second on 64..127
   * (the PTX ISA's data-path layout B), so acc is a [128, N/2] view */
  bool pair = s->kf->tmem_pair;
  int M = x->type->shape[0], K = x->type->shape[1], K2 = y->type->shape[0], N = y->type->shape[1];
  bool fold = pair && M == 64;
  int dr = fold ? 128 : M, dc = fold || !pair ? N : 2 * N;
  if (pair && K == K2 && (M == 128 || M == 64) && (d->type->shape[0] != dr || d->type->shape[1] != dc)) {
    if (fold)
      dg_error(s->c, call->loc, "mma_async of %s and %s into %s on a CTA pair with M = 128: each CTA holds its 64 "
                                "rows of A [64, K] and half of B's columns [K, N/2]; its 64 rows of D [64, N] fold "
                                "onto the 128 lanes (columns 0..N/2-1 on lanes 0..63, the rest on lanes 64..127), "
                                "so D is a [128, N/2] view: [128, %d] here",
               ty_str(s->c, x->type), ty_str(s->c, y->type), ty_str(s->c, d->type), N);
    else
      dg_error(s->c, call->loc, "mma_async of %s and %s into %s on a CTA pair: each CTA holds its 128 rows of A [128, "
                                "K] and half of B's columns [K, N/2], and its 128 rows of D [128, N]: D has twice b's "
                                "columns",
               ty_str(s->c, x->type), ty_str(s->c, y->type), ty_str(s->c, d->type));
    return sv_err();
  }
  if (K != K2 || d->type->shape[0] != dr || d->type->shape[1] != dc) {
    dg_error(s->c, call->loc, "mma_async of %s and %s into %s: shapes must be [M, K], [K, N] and [M, N]",
             ty_str(s->c, x->type), ty_str(s->c, y->type), ty_str(s->c, d->type));
    return sv_err();
  }
  if (fold && a_tmem) {
    dg_error(s->c, call->loc, "mma_async on a CTA pair with M = 128 (a's 64 rows) takes A from shared memory; A in "
                              "tensor memory is not supported with M = 128 yet");
    return sv_err();
  }
  if ((M != 128 && !fold) || d->type->lane0 != 0 || (a_tmem && x->type->lane0 != 0)) {
    dg_error(s->c, call->loc, "mma_async of [%d, %d] x [%d, %d] on %s: tcgen05.mma (cta_group::1) computes M = 128 "
                              "rows, TMEM lanes 0..127 (M = 64 is not supported yet; a CTA pair's M = 256 or 128: "
                              "tmem(..., pair = true))",
             M, K, K, N, s->c->arch);
    return sv_err();
  }
  if (pair) N *= 2; /* the pair's N */
  if (pair && (N % 32 || N < 32 || N > 256 || K % 16)) {
    dg_error(s->c, call->loc, "mma_async of [%d, %d] x [%d, %d] on a CTA pair: tcgen05.mma.cta_group::2 (M = %d) "
                              "needs N a multiple of 32 from 32 to 256 (B's %d columns in each CTA), and K a multiple "
                              "of 16",
             M, K, K, N / 2, 2 * M, N / 2);
    return sv_err();
  }
  if (N % 16 || N < 16 || N > 256 || K % 16) {
    dg_error(s->c, call->loc, "mma_async of [%d, %d] x [%d, %d]: tcgen05.mma with M = 128 needs N a multiple of 16 "
                              "from 16 to 256, and K a multiple of 16",
             M, K, K, N);
    return sv_err();
  }
  int eb = ty_dtype_bytes(dt);
  bool a_mn = !a_tmem && x->type->trans, b_mn = !y->type->trans;
  bool a_ok = a_tmem || (x->type->swizzle == 128 && (a_mn ? (M * eb) % 128 == 0 : (K * eb) % 128 == 0));
  bool b_ok = y->type->swizzle == 128 && (b_mn ? (y->type->shape[1] * eb) % 128 == 0 : (K * eb) % 128 == 0);
  if (!a_ok || !b_ok) {
    dg_error(s->c, call->loc, "mma_async reads shared memory with a 128-byte swizzle: K-major operands are whole "
                              "128-byte rows of K (K a multiple of %d), an N-contiguous b (or M-contiguous a, "
                              "view.trans()) is whole 128-byte blocks of N (M); got %s and %s",
             128 / eb, ty_str(s->c, x->type), ty_str(s->c, y->type));
    return sv_err();
  }
  TValue *ops[5] = {x, y, d};
  int nops = 3;
  int64_t acc_mode = 0; /* always accumulate */
  if (a.given[3]) {
    SVal f = a.v[3];
    if (f.k == V_BOOL) acc_mode = f.i ? 0 : -1;
    else if (f.k == V_RT && f.v->type->kind == TY_SCALAR && f.v->type->elem.dt == DT_BOOL) {
      acc_mode = 1;
      ops[nops++] = f.v;
    } else {
      dg_error(s->c, a.loc[3], "accumulate = takes a bool (a constant, or a run-time condition such as kk > 0), not "
                               "%s",
               sv_desc(s, f));
      return sv_err();
    }
  }
  int commit_at = 0;
  if (a.given[4]) {
    TValue *bar = sm_hw_bar_arg(s, &a, 4, "mma_async");
    if (!bar) return sv_err();
    ops[nops++] = bar;
    commit_at = nops;
  }
  TOp *op = emit(s, OP_TC_MMA, call->loc, nops, ops, NULL);
  op->ival = acc_mode;
  op->ival2 = commit_at;
  if (pair) op->flags |= OPF_PAIR;
  return (SVal){.k = V_VOID};
}

/* mma_commit(bar): bar's current phase completes once every MMA the
 * group's elected thread issued so far is done (tcgen05.commit ...
 * mbarrier::arrive::one: one arrival, counted like barrier_arrive's). */
static SVal b_mma_commit(S *s, Node *call, Node *self) {
  static const Spec sp = {{"bar"}, 1};
  BArgs a;
  if (!call->nlist && !self) {
    dg_error(s->c, call->loc, "mma_commit on %s takes the mbarrier the MMAs complete on: mma_commit(bar) "
                              "(tcgen05.commit; wait for it with barrier_wait)",
             s->c->arch);
    return sv_err();
  }
  if (!sm_bind_args(s, call, self, "mma_commit", &sp, &a)) return sv_err();
  TValue *bar = sm_hw_bar_arg(s, &a, 0, "mma_commit");
  if (!bar) return sv_err();
  TOp *op = emit(s, OP_TC_COMMIT, call->loc, 1, &bar, NULL);
  if (s->kf->tmem_pair) op->flags |= OPF_PAIR;
  return (SVal){.k = V_VOID};
}

bool sm_builtin_sm100(S *s, Node *call, const char *name, Node *self, SVal *out) {
  if (s->c->sm < 100) return false; /* builtins_hw.c reports Blackwell's builtins on Hopper */
  if (!strcmp(name, "tmem")) *out = b_tmem(s, call, self);
  else if (!strcmp(name, "tmem_load")) *out = b_tmem_load(s, call, self);
  else if (!strcmp(name, "tmem_store")) *out = b_tmem_store(s, call, self);
  else if (!strcmp(name, "mma_async")) *out = b_mma_async(s, call, self);
  else if (!strcmp(name, "mma_commit")) *out = b_mma_commit(s, call, self);
  else if (!strcmp(name, "mma_wait")) {
    dg_error(s->c, call->loc, "mma_wait waits for Hopper's wgmma groups; on %s an MMA completes on the mbarrier it "
                              "commits to: mma_commit(bar) (or mma_async(..., commit = bar)), then barrier_wait(bar, "
                              "phase)",
             s->c->arch);
    *out = sv_err();
  } else return false;
  return true;
}

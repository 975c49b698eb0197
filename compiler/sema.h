/* sema.h - private to sema*.c and builtins*.c: compile-time values, the
 * environment, and the helpers builtins use to type-check and emit TIR.
 * The files, bottom up (none calls a file above it): sema_val.c (values,
 * emission, argument binding, sm_eval), sema_ops.c (operators, folding),
 * sema_env.c (names, scopes, kernel attributes), sema_type.c (types in
 * the source, top-level constants), builtins_debug.c, builtins_hw.c,
 * builtins_sm100.c, builtins.c (the builtins; builtins.c dispatches),
 * sema_stmt.c (statements), sema.c (expressions, calls, kernels; it sets
 * S.eval, through which everything below evaluates expressions). */
#ifndef TILEC_SEMA_H
#define TILEC_SEMA_H
#include "tilec_int.h"

typedef enum VKind {
  V_ERR,    /* an error was already reported: propagate silently */
  V_VOID,
  V_RT,     /* a run-time value (TIR) */
  V_INT,    /* compile-time integer; dt == DT_VOID for an untyped literal */
  V_FLOAT,  /* compile-time float; dt == DT_VOID for an untyped literal */
  V_BOOL,
  V_DTYPE,  /* a type used as a value: f32, *bf16 */
  V_LIST,   /* compile-time list [a, b] */
  V_TUPLE,
  V_STR,
  V_NONE,
  V_LAYOUT,
  V_RANGE,  /* range(...) / static_range(...): only valid in `for` */
} VKind;

typedef struct SVal SVal;
struct SVal {
  VKind k;
  TValue *v;
  int64_t i;
  double f;
  DType dt;
  Elem elem;   /* V_DTYPE */
  SVal *items; /* V_LIST, V_TUPLE, V_RANGE (start, end, step) */
  int n;
  const char *s;
  const Layout *layout;
  bool is_static; /* V_RANGE: static_range */
};

typedef struct Sym Sym;
struct Sym {
  const char *name;
  enum { SYM_VAR, SYM_CONST_DECL, SYM_FUNC } kind;
  SVal val;
  ConstDecl *decl; /* lazily evaluated top-level constant */
  int state;       /* 0 = unevaluated, 1 = evaluating, 2 = done */
  Func *fn;
  Sym *next;
  Sym *shadow;     /* locals: the binding of the same name this one hides */
  int frame;       /* locals: the frame (inlined body, kernel) it belongs to */
  int bdepth;      /* locals: the block nesting it was bound at (0: a parameter) */
};

/* A name's innermost local binding (sema.c, local_entry). */
typedef struct LocalEnt {
  const char *name;
  Sym *top;
} LocalEnt;

typedef struct S {
  Ctx *c;
  Program *prog;
  TFunc *kf;     /* the kernel being built */
  TBlock *blk;   /* where new ops go */
  Sym *scope;    /* innermost binding first */
  LocalEnt *ltab; /* locals by name (open addressing; names stay, tops change) */
  int lcap, lcount;
  int frame, nframes; /* the current frame and the frames made so far */
  Sym *globals;  /* (unused) */
  Sym **gtab;    /* functions and top-level constants: open-addressing table */
  int gcap, gcount;
  int inline_depth;
  int warps;
  Loc loc;       /* location of the current node */
  Func *kparams; /* while evaluating a kernel header: its parameters */
  int unroll_depth; /* static_range nesting */
  long steps;       /* evaluation steps (compile-time work budget) */
  bool in_task;     /* inside a task of a `tasks` block */
  int task_warp0;   /* inside a task: its first warp (the warps' places in their warpgroups) */
  Sym *task_scope;  /* the scope chain where the current task began */
  int depth;        /* evaluation recursion depth */
  int bdepth;       /* blocks open in the current frame (sm_block_stmts; 0: its parameters) */
  SVal (*eval)(struct S *s, Node *n); /* sema.c's sm_expr: how the files below it evaluate (sm_eval) */
} S;

/* Environment (sema_env.c) */
typedef struct Frame { /* what frame_enter hides and frame_leave brings back */
  Sym *scope;
  int frame;
  int bdepth;
} Frame;
unsigned sm_name_hash(const char *n);
Sym *sm_global_find(S *s, const char *name);
void sm_global_add(S *s, Sym *y);
void sm_declare_globals(S *s, Program *p);
void sm_kernel_attrs(S *s, Func *f, TFunc *kf); /* sema_env.c */
int sm_define_multiple(S *s, const Param *p, Elem e); /* sema_env.c: -D NAME=multiple_of(N) */
LocalEnt *sm_local_entry(S *s, const char *name, bool add);
Sym *sm_local_find(S *s, const char *name);      /* the innermost visible local, or NULL */
Sym *sm_lookup(S *s, const char *name);          /* a local, else a global, or NULL */
Sym *sm_bind(S *s, const char *name, SVal v);    /* a new local in the innermost scope */
void sm_scope_restore(S *s, Sym *saved);         /* leave the scopes opened since saved */
Frame sm_frame_enter(S *s);                      /* an empty chain: outer locals hidden */
void sm_frame_leave(S *s, Frame f);

/* Values */
SVal sv_err(void);
SVal sv_int(int64_t i, DType dt);
SVal sv_float(double f, DType dt);
SVal sv_bool(bool b);
SVal sv_rt(TValue *v);
bool sv_is_const(SVal v);
const char *sv_desc(S *s, SVal v);    /* "f32[128]", "constant 3", ... */
Type *sv_type(S *s, SVal v);          /* type of a value (constants: their default dtype) */

/* Emission */
TValue *sm_emit1(S *s, Opcode opc, Loc loc, int n, TValue **opnds, Type *rt);
TValue *sm_rt(S *s, SVal v, Loc loc);                 /* materialize a scalar constant */
TValue *sm_rt_as(S *s, SVal v, Elem e, Loc loc);      /* materialize with a given dtype (checks range) */
TValue *sm_cast(S *s, TValue *v, Elem to, Loc loc);
TValue *sm_splat(S *s, TValue *v, int rank, const int *shape, Loc loc);
TValue *sm_broadcast_to(S *s, TValue *v, int rank, const int *shape, Loc loc); /* error -> NULL */
SVal sm_binary(S *s, int op, SVal a, SVal b, Loc loc);
SVal sm_unary_math(S *s, Opcode opc, SVal a, Loc loc, const char *name);
bool sm_math_f32_only(Opcode opc); /* refused on f64 (fast f32 approximations) */
bool sm_const_int(S *s, SVal v, Loc loc, const char *what, int64_t *out);
bool sm_shape_list(S *s, SVal v, Loc loc, const char *what, int *rank, int *shape);
bool sm_dims_list(S *s, SVal v, Loc loc, const char *what, int *rank, int *shape, bool pow2);
/* Bring a and b to one type (promote dtype, broadcast shape). */
bool sm_unify(S *s, SVal *a, SVal *b, Loc loc, const char *opname);

/* Builtins */
/* A builtin's parameters: their names, the first nreq required. */
typedef struct Spec {
  const char *names[8];
  int nreq;
} Spec;

typedef struct BArgs {
  SVal v[8];
  bool given[8];
  Loc loc[8];
} BArgs;
/* Bind a call's positional and keyword arguments (self first for method
 * calls) to sp's parameters, evaluating each; reports unknown, repeated,
 * surplus and missing arguments. Unset slots get the call's location. */
bool sm_bind_args(S *s, Node *call, Node *self, const char *fname, const Spec *sp, BArgs *a);
/* Returns true if `name` is a builtin (result in *out, errors reported). */
bool sm_builtin(S *s, Node *call, const char *name, Node *self, SVal *out);
SVal sm_expr(S *s, Node *n);  /* sema.c: an expression */
SVal sm_eval(S *s, Node *n);  /* sema_val.c: the same, through S.eval, for the files below sema.c */
/* builtins_hw.c: the explicit hardware primitives */
bool sm_builtin_hw(S *s, Node *call, const char *name, Node *self, SVal *out);
SVal sm_slot(S *s, TValue *base, SVal idx, Loc loc);
SVal sm_view_trans(S *s, TValue *v, Loc loc);
/* argument helpers, shared with builtins_sm100.c: one shared-memory view
 * (not a ring), one mbarrier, a scalar integer as i32; NULL after an error */
TValue *sm_hw_view_arg(S *s, BArgs *a, int i, const char *fname, const char *what);
TValue *sm_hw_bar_arg(S *s, BArgs *a, int i, const char *fname);
TValue *sm_hw_int_arg(S *s, BArgs *a, int i, const char *fname, const char *what);
/* builtins_sm100.c: Blackwell's own builtins (tmem, tmem_load, tmem_store,
 * and mma_async / mma_commit / mma_wait on sm_100a); false: not one of them */
bool sm_builtin_sm100(S *s, Node *call, const char *name, Node *self, SVal *out);
/* builtins_debug.c: print and device_assert */
bool sm_builtin_debug(S *s, Node *call, const char *name, Node *self, SVal *out);

/* ---- sema.c, used by sema_ops.c and sema_stmt.c ---- */
DType sm_const_dtype(SVal v); /* a constant's dtype (untyped literals: bool, f32, i32 or i64) */
TOp *sm_emit_op(S *s, Opcode opc, Loc loc, int n, TValue **opnds, int nres, Type **rts);
bool sm_int_fits(int64_t v, DType dt);
bool sm_budget(S *s, Loc loc); /* one evaluation step: false (with an error) past the step or depth limit */
/* Types written in the source and top-level constants (sema_type.c) */
SVal sm_check_type(S *s, SVal v, TypeExpr *te, Loc loc, const char *what);
bool sm_type_expr(S *s, TypeExpr *te, Type **out, Elem *elem_only);
SVal sm_typed_const(S *s, SVal v, TypeExpr *type, Loc loc, const char *what);
SVal sm_const_decl_value(S *s, Sym *y); /* a top-level constant's value, evaluated on first use */

/* ---- sema_ops.c: promotion, constant folding, binary operators ---- */
bool sm_promote(S *s, Elem a, Elem b, Elem *out, Loc loc, const char *opname);
SVal sm_fold_typed(S *s, SVal r, DType dt, Loc loc); /* r checked against (and typed as) dt */
bool sm_is_pow2(int64_t x);

/* ---- sema_stmt.c: statements ---- */
typedef struct St {
  bool in_fn;       /* inside an inlined function body */
  SVal *ret;        /* where `return e;` stores its value */
  bool *returned;
} St;
void sm_block_stmts(S *s, Node *b, St *st, bool last_is_tail);

#endif

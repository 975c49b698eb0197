/* tilec_int.h - the compiler's one internal header, a section per file.
 *
 * Pipeline (compile.c, tc_compile):
 *   source --lexer.re--> tokens --parse.c--> AST --sema.c--> Tile IR (TIR)
 *   --pipeline*.c/layout.c/passes.c--> TIR with layouts --lower*.c--> MLIR (C API)
 *   --backend.c--> MLIR passes -> LLVM IR -> O3 -> PTX -> cubin
 * Lowering's rooms (lower.h): lower_core.c (the builder every lowering
 * file uses, at the bottom: it calls none of them), lower.c (the driver:
 * elementwise, control flow, tasks, the kernel; it dispatches to the rest),
 * lower_math.c (the math builtins: exp ... tanh, erf, rcp, fdiv),
 * lower_ops.c (layouts: conversions through shared memory or, inside a
 * warp, by shuffles; dot on mma.sync), lower_reduce.c (reductions: in
 * registers, shuffles, then across warps through scratch that lower_core.c
 * tracks, independent ones sharing one barrier), lower_mem.c (loads, stores),
 * lower_hw.c (explicit Hopper primitives, and what sm_100a shares with
 * them: shared memory, mbarriers (an arrival on another CTA's too), TMA),
 * lower_sm100.c (Blackwell's own: tensor memory, tcgen05.mma/commit/ld/st
 * and the fences tcgen05 needs; a CTA pair's .cta_group::2 forms),
 * lower_debug.c (print, device_assert, clock64: vprintf, trap, %clock64).
 * Sema's rooms (sema.h lists them bottom up; none calls one above it):
 * sema_val.c (values, emission, argument binding; sm_eval, through which
 * the rooms below sema.c evaluate expressions), sema_ops.c, sema_env.c,
 * sema_type.c (types in the source, top-level constants), the builtins,
 * sema_stmt.c (statements), sema.c (expressions, calls, kernels: it sets
 * S.eval). Sema's hardware builtins: builtins_hw.c (shared memory, barriers,
 * TMA, views, wgmma, dsmem_copy), builtins_sm100.c (tmem, tmem_load/store and
 * mma_async/mma_commit on sm_100a), builtins_debug.c (print, device_assert,
 * clock64); desc.c holds the MMA descriptors
 * (wgmma's and tcgen05's shared-memory descriptors, tcgen05's instruction
 * descriptor) as pure functions, shared by the lowerings and unit-tested
 * field by field (docs/blackwell.md).
 *
 * Name prefixes say which file a function lives in: ar_ (arena.c),
 * dg_ (diag.c), lx_ (lexer.re), ps_ (parse.c), ast_ (ast.c), ty_ (type.c),
 * sm_ (sema*.c, builtins*.c), ir_ (tir.c), ly_ (layout.c), ps_/pass_ (passes.c),
 * pl_ (pipeline.c; pipeline.h: what it shares with pipeline_multi.c and pipeline_sm100.c), pm_ (pipeline_multi.c),
 * pb_ (pipeline_sm100.c: the single-dot K loop on Blackwell's tcgen05),
 * pr_ (pipeline_rows.c: a dot-less loop's plain loads through cp.async rings),
 * hm_ (home.c: loop accumulators too big for the registers, homed in shared memory),
 * ax_ (axisinfo.c), lw_ (lower*.c; lw_tc_ in lower_sm100.c), be_ (backend.c),
 * md_ (meta.c), dsc_ (desc.c), st_ (stats.c: the compile report of
 * tilec --stats, fed by the stages as they run).
 *
 * Outside the compiler, each its own library: runtime/ (libtilert: driver
 * through dlopen, modules, TMA descriptors, jagged scheduling; libtilejit:
 * jit.c and its disk cache; emu_cuda.c, the driver table backed by the
 * emulator under TILE_INTERPRET=1), emu/ (the emulator, linked into
 * libtilert: em_ptx_ (ptx.c) PTX text -> decoded module, em_ (exec.c)
 * threads and CTAs; docs/emulator.md). The compiler calls neither.
 */
#ifndef TILEC_INT_H
#define TILEC_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tile/tilec.h"

#define TC_MAX_RANK 4
#define TC_MAX_DEPTH 200      /* parser nesting limit (expressions, blocks) */
#define TC_MAX_EXPR_DEPTH 1000 /* depth of an expression tree */
#define TC_MAX_OPS 400000     /* TIR operations per compilation */
#define TC_MAX_UNROLLED_OPS 30000 /* operations one static_range may unroll to */
#define TC_MAX_STEPS 4000000  /* sema evaluation steps (inlining x unrolling) */
#define TC_MAX_EVAL_DEPTH 400 /* sema recursion (nesting x inlining); ~3 MB of stack under ASan */
#define TC_MAX_PARAMS 255     /* parameters of a kernel or function */
#define TC_MAX_INLINE 64      /* inlining depth limit (catches recursion) */
#define TC_MAX_ELEMS (1 << 20) /* largest register tile, in elements */
#define TC_MAX_SOURCE (8 << 20) /* bytes of source per compilation, imports included (refused unread) */
/* lowering (lower.c, check_size), in 32-bit values per thread (64-bit: 2) */
#define TC_MAX_THREAD_VALUES 512   /* of one tile */
#define TC_MAX_KERNEL_VALUES 36864 /* read + written by the operations, summed (the tutorial's causal
                                     attention backward at head dim 128: 32,869; 902_lower_kernel_too_large's
                                     chain, 48,000, took LLVM over 100 s) */

typedef struct Ctx Ctx;

/* ---- arena.c: per-compilation memory, growable vectors and strings ---- */
typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
  ArenaBlock *head;
  size_t total;
  bool failed; /* an allocation failed: results are unusable */
} Arena;

void ar_init(Arena *a);
void ar_free(Arena *a);
void *ar_alloc(Arena *a, size_t n);  /* zeroed; never NULL (falls back to a static pad and sets failed) */
char *ar_strndup(Arena *a, const char *s, size_t n);
char *ar_strdup(Arena *a, const char *s);
char *ar_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct Vec {
  void **data;
  int len, cap;
} Vec;
void vec_push(Arena *a, Vec *v, void *x);

/* Growable byte buffer (malloc backed: outputs leave the arena). */
typedef struct Buf {
  char *data;
  size_t len, cap;
  bool failed;
} Buf;
void buf_put(Buf *b, const char *s, size_t n);
void buf_puts(Buf *b, const char *s);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(Buf *b, const char *fmt, va_list ap);
void buf_free(Buf *b);

/* ---- diag.c: diagnostics with source lines and carets ---- */
typedef struct Source {
  const char *name;
  const char *text; /* NUL terminated copy */
  size_t len;
  int id;
  bool builtin;     /* from the embedded library (dsl/std): user names win */
} Source;

typedef struct InlineSite InlineSite;
typedef struct Loc {
  const Source *src;
  int line, col; /* 1-based; 0 = unknown */
  const InlineSite *at; /* inside an inlined function: the call it was inlined at (TIR ops) */
} Loc;
/* A call of a `fn`, inlined by sema: errors inside the function get a note
 * for each call, innermost first, up to the kernel. */
struct InlineSite {
  const char *fn;
  Loc call; /* call.at: the call the caller itself was inlined at */
};

/* Errors and warnings end with a note per inlined call around loc: loc.at's
 * calls (a TIR op's), else c->inl's (while sema inlines). */
void dg_error(Ctx *c, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void dg_verror(Ctx *c, Loc loc, const char *fmt, va_list ap);
void dg_note(Ctx *c, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void dg_warning(Ctx *c, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An error without a source location ("tilec: error: ..."). */
void dg_plain(Ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Internal compiler error: reported as a diagnostic, compilation stops. */
void dg_ice(Ctx *c, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool dg_too_many(Ctx *c);

/* ---- stats.c: what the compile report gathers while the stages run ----
 * The stages of tc_compile whose time the report gives, in order. */
typedef enum StStage {
  ST_PARSE, ST_SEMA, ST_PASSES, ST_LOWER, ST_MLIR, ST_LLVM, ST_PTX, ST_ASM, ST_NSTAGES
} StStage;

typedef struct StStats {
  struct TModule *mod; /* the Tile IR reported on: set once sema built it without errors */
  double sec[ST_NSTAGES];
  bool ran[ST_NSTAGES];
  Vec scratch; /* StScratch*: each operation that took scratch shared memory (lowering) */
  Vec tasks;   /* StTask*: each task's scratch slice (lowering) */
  Vec asm_fns; /* StAsm*: each function's resources, from the assembler's report */
  Vec allocs;  /* StAlloc*: each smem()/mbarrier() as passes.c placed it (dce may drop it later) */
  const char *assembler; /* "ptxas" or "nvJitLink", once it ran */
} StStats;

/* ---- the compilation context ---- */
struct Ctx {
  Arena arena;
  tilec_options opts;
  int sm;               /* 90 or 100 */
  const char *arch;     /* "sm_90a" */
  Buf diags;
  int nerrors, nwarnings;
  bool ice;             /* an internal error happened */
  Vec sources;          /* Source* */
  Vec imported;         /* import names already handled */
  Vec loaded;           /* canonical paths of the files read */
  Vec untaken;          /* Node*: the conditional imports for another target (not read) */
  bool untaken_noted;   /* sm_note_untaken_imports has listed them */
  Vec seen;             /* reported errors, to report each once */
  const InlineSite *inl; /* sema: the inlined calls being evaluated (NULL: the kernel's own code) */
  int nops;             /* TIR operations created (size limit) */
  bool too_big;
  struct Program *prog; /* AST of all files */
  struct TModule *mod;  /* Tile IR */
  Buf meta;             /* metadata text */
  int next_value_id;
  StStats stats;        /* for the compile report (stats.c) */
};

/* compile.c: register a source text with c (name and text copied) */
Source *cx_add_source(Ctx *c, const char *name, const char *text, size_t len, bool builtin);
/* sema_env.c: after an error about a name defined nowhere (an unknown
 * function, an override that replaces nothing), a note for each import
 * not taken on this target (`import "f" if arch == "T";`, which compile.c
 * records in c->untaken), once per compilation: the name may be in one of
 * those files. */
void sm_note_untaken_imports(Ctx *c);

/* ---- dtypes (type.c) ---- */
typedef enum DType {
  DT_VOID,
  DT_BOOL,
  DT_I8, DT_U8, DT_I16, DT_U16, DT_I32, DT_U32, DT_I64, DT_U64,
  DT_F16, DT_BF16, DT_F32, DT_F64,
  DT_PTR, /* pointer: see Elem.pointee */
  DT_COUNT
} DType;

typedef struct Elem {
  uint8_t dt;      /* DType */
  uint8_t pointee; /* DType when dt == DT_PTR */
} Elem;

const char *ty_dtype_name(DType d);
bool ty_dtype_parse(const char *s, DType *out);
int ty_dtype_bits(DType d); /* bool: 1; ptr: 64 */
int ty_dtype_bytes(DType d); /* bool: 1 */
bool ty_is_float(DType d);
bool ty_is_int(DType d);     /* includes bool? no: ints only */
bool ty_is_signed(DType d);
bool ty_elem_eq(Elem a, Elem b);
const char *ty_elem_str(Ctx *c, Elem e);

/* ---- layouts (layout.c) ----
 * Named layouts (blocked, mma, dot operand, slice) are shape-agnostic, like
 * Triton's encodings; ly_linear() turns one into a linear layout for a shape:
 * a map over GF(2) from (register, lane, warp) bits to tile coordinates, with
 * power-of-two dimensions.  Equal linear maps mean equal layouts. */
typedef enum LayoutKind { LY_BLOCKED, LY_MMA, LY_DOTOP, LY_SLICE } LayoutKind;

typedef struct Layout Layout;
struct Layout {
  LayoutKind kind;
  int rank;
  /* blocked */
  int spt[TC_MAX_RANK], tpw[TC_MAX_RANK], wpc[TC_MAX_RANK], order[TC_MAX_RANK];
  /* mma: version (2 = mma.sync, 3 = wgmma), warps per cta [m, n], instr n;
   * cols: a thread's run of consecutive columns, 2 (0 reads as 2: the
   * accumulator's pairs) or 4 or 8 (ly_mma_wide: the pairs of a quad's
   * lanes exchanged with the registers of the next column blocks, so that
   * a store writes 8 or 16 bytes a thread) */
  int version, wm, wn, instr_n, cols;
  /* dot operand: which operand (0 = A, 1 = B), bit width of the element */
  int opidx, kbits;
  /* slice */
  int dim;
  const Layout *parent;
};

typedef struct LinLayout {
  int rank;
  int shape[TC_MAX_RANK];
  int nreg, nlane, nwarp; /* number of bits of each input */
  int reg[20][TC_MAX_RANK];
  int lane[5][TC_MAX_RANK];
  int warp[6][TC_MAX_RANK];
} LinLayout;

const Layout *ly_blocked(Ctx *c, int rank, const int *spt, const int *tpw, const int *wpc, const int *order);
const Layout *ly_default(Ctx *c, int rank, const int *shape, int warps, int elem_bytes);
const Layout *ly_blocked_for(Ctx *c, int rank, const int *shape, int warps, int vec, const int *order);
const Layout *ly_transpose(Ctx *c, const Layout *l); /* blocked only; NULL otherwise */
const Layout *ly_mma(Ctx *c, int version, int wm, int wn, int instr_n);
const Layout *ly_mma_wide(Ctx *c, const Layout *mma, int cols); /* mma with cols columns a thread */
const Layout *ly_dotop(Ctx *c, int opidx, const Layout *parent, int kbits);
const Layout *ly_slice(Ctx *c, int dim, const Layout *parent);
/* Linearize for a shape; returns false (with *why) if impossible. */
bool ly_linear(const Layout *l, int rank, const int *shape, int warps, LinLayout *out, const char **why);
bool ly_lin_eq(const LinLayout *a, const LinLayout *b);
bool ly_same(const Layout *a, const Layout *b, int rank, const int *shape, int warps);
char *ly_str(Ctx *c, const Layout *l);
/* Register index holding coordinate part `coord` (XOR of register bases), or -1. */
int ly_solve_reg(const LinLayout *l, const int *coord);
void ly_reg_coord(const LinLayout *l, int r, int *coord);
int ly_nregs(const LinLayout *l);

/* ---- types (type.c) ---- */
typedef enum TypeKind {
  TY_VOID, TY_SCALAR, TY_TILE, TY_TUPLE,
  TY_SMEM, /* shared memory: a buffer ring (nbuf > 0) or one view (nbuf == 0) */
  TY_BAR,  /* mbarriers: an array (nbuf > 0) or one barrier (nbuf == 0) */
  TY_TMA,  /* a TMA descriptor (kernel parameter): elem, box shape, swizzle */
  TY_TMEM, /* tensor memory (sm_100a): a buffer ring (nbuf > 0) or one view (nbuf == 0);
              rows are TMEM lanes, columns 32-bit TMEM columns (16-bit elements two a column) */
} TypeKind;

typedef struct Type Type;
struct Type {
  TypeKind kind;
  Elem elem;
  int rank;
  int shape[TC_MAX_RANK];
  const Layout *layout; /* tiles, once layouts are assigned */
  Type **items;         /* tuples */
  int nitems;
  int nbuf;             /* TY_SMEM / TY_BAR: number of slots (0: a single view) */
  int swizzle;          /* TY_SMEM / TY_TMA: 0, 32, 64 or 128 (bytes) */
  bool trans;           /* TY_SMEM view: logical [K, N] of memory stored [N, K] */
  int brows;            /* TY_SMEM view: rows of the allocation it is part of (its
                           column blocks lie brows x block-row bytes apart; a row
                           slice keeps them); 0: its own rows */
  int lane0;            /* TY_TMEM view: the TMEM lane of its row 0 (a row slice moves it) */
};

Type *ty_scalar(Ctx *c, Elem e);
Type *ty_dt(Ctx *c, DType d);
Type *ty_ptr(Ctx *c, DType pointee);
Type *ty_tile(Ctx *c, Elem e, int rank, const int *shape);
Type *ty_with_layout(Ctx *c, const Type *t, const Layout *l);
Type *ty_with_elem(Ctx *c, const Type *t, Elem e);
Type *ty_void(Ctx *c);
Type *ty_tuple(Ctx *c, Type **items, int n);
bool ty_same_shape(const Type *a, const Type *b);
bool ty_eq(const Type *a, const Type *b); /* kind, elem, shape; not layout */
char *ty_str(Ctx *c, const Type *t);
int64_t ty_numel(const Type *t);
/* Shared-memory element addressing (lower_hw.c), exposed for the tests:
 * the byte offset of element (r, c) of an smem view, swizzled as TMA and
 * wgmma lay it out; whether that offset is linear over GF(2) in the bits
 * of (r, c) (power-of-two sizes), in which case smem_load/smem_store add a
 * register group's constant offset to the thread's (XOR for the bits the
 * thread part can set, smem_thread_bits, an add for the rest). */
int64_t smem_elem_offset(const Type *t, int64_t r, int64_t c);
bool smem_offset_linear(const Type *t);
int64_t smem_thread_bits(const Type *t, const LinLayout *lin);

/* TMEM columns (32 bits each) of `cols` elements of dtype d: 16-bit
 * elements are packed two a column. */
static inline int ty_tmem_cols(DType d, int cols) { return d == DT_F16 || d == DT_BF16 ? cols / 2 : cols; }

/* Rows in memory of an smem view's column blocks (see Type.brows). */
static inline int ty_block_rows(const Type *t) { return t->brows ? t->brows : t->shape[t->trans ? 1 : 0]; }

/* ---- lexer.re ---- */
typedef enum TokKind {
  TK_EOF,
  TK_IDENT, TK_INT, TK_FLOAT, TK_STRING,
  /* keywords */
  TK_KERNEL, TK_FN, TK_LET, TK_CONST, TK_IF, TK_ELSE, TK_FOR, TK_IN, TK_WHILE,
  TK_RETURN, TK_IMPORT, TK_TRUE, TK_FALSE, TK_AS, TK_TASKS, TK_TASK, TK_NONE,
  /* punctuation */
  TK_LPAREN, TK_RPAREN, TK_LBRACK, TK_RBRACK, TK_LBRACE, TK_RBRACE,
  TK_COMMA, TK_SEMI, TK_COLON, TK_DOT, TK_ARROW, TK_ASSIGN,
  TK_PLUS, TK_MINUS, TK_STAR, TK_SLASH, TK_PERCENT,
  TK_AMP, TK_PIPE, TK_CARET, TK_TILDE, TK_BANG, TK_SHL, TK_SHR,
  TK_EQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE, TK_ANDAND, TK_OROR,
  TK_PLUSEQ, TK_MINUSEQ, TK_STAREQ, TK_SLASHEQ, TK_PERCENTEQ,
  TK_AMPEQ, TK_PIPEEQ, TK_CARETEQ, TK_SHLEQ, TK_SHREQ,
  TK_COUNT
} TokKind;

typedef struct Token {
  TokKind kind;
  Loc loc;
  const char *start;
  int len;
  uint64_t ival;
  double fval;
  bool overflow; /* integer literal does not fit in 64 bits */
  char *str;     /* identifier text or decoded string */
} Token;

/* Tokenize a whole source; reports lexical errors, always ends with TK_EOF. */
Token *lx_tokenize(Ctx *c, const Source *src, int *ntok);
const char *lx_kind_name(TokKind k);

/* ---- AST (parse.c, ast.c) ---- */
typedef enum NodeKind {
  /* expressions */
  ND_INT, ND_FLOAT, ND_BOOL, ND_STR, ND_IDENT, ND_NONE, ND_SLICE_ALL,
  ND_UNARY, ND_BINARY, ND_CALL, ND_METHOD, ND_INDEX, ND_CAST, ND_LIST, ND_TUPLE,
  /* statements */
  ND_LET, ND_ASSIGN, ND_EXPR, ND_IF, ND_FOR, ND_WHILE, ND_RETURN, ND_BLOCK,
  ND_TASKS, ND_TASK,
} NodeKind;

typedef struct TypeExpr TypeExpr;
struct TypeExpr {
  enum { TE_NAME, TE_PTR, TE_TILE, TE_TUPLE, TE_GENERIC } kind;
  Loc loc;
  char *name;           /* TE_NAME, TE_GENERIC */
  TypeExpr *elem;       /* TE_PTR, TE_TILE */
  struct Node **dims;   /* TE_TILE: dimension expressions */
  int ndims;
  TypeExpr **items;     /* TE_TUPLE, TE_GENERIC type args */
  int nitems;
  struct Node **args;   /* TE_GENERIC value args */
  int nargs;
};

typedef struct Node Node;
struct Node {
  NodeKind kind;
  Loc loc;
  int op;          /* TokKind of the operator (unary, binary, compound assign) */
  char *name;      /* identifier, callee, method, keyword-argument name, let name */
  char *argname;   /* when this node is a keyword argument: its name */
  uint64_t ival;
  double fval;
  bool overflow;
  int depth;       /* height of the expression tree (parser limit) */
  bool paren;      /* written in parentheses */
  char *str;
  Node *lhs, *rhs; /* binary; index base + args in list; assignment target/value */
  Node *cond, *then, *els;
  Node *init;      /* let value, for range call */
  Node *body;
  Node **list;     /* call args, list items, block statements, tuple items, let names */
  int nlist;
  TypeExpr *type;  /* let annotation, cast target */
  char **names;    /* let (a, b) = ... destructuring */
  int nnames;
};

typedef struct Param {
  char *name;
  Loc loc;
  TypeExpr *type; /* may be NULL for fn params */
  bool is_const;
  Node *deflt;
  Node *align;    /* `align(N)` for pointers, `multiple_of(N)` for ints */
  bool is_multiple_of;
} Param;

typedef struct KAttr {
  char *name; /* warps, cluster, maxnreg, stages, pdl */
  Loc loc;
  Node **args;
  int nargs;
} KAttr;

typedef struct Func {
  char *name;
  Loc loc;
  bool is_kernel;
  bool is_override; /* `override fn`: replaces an imported file's function of the same name */
  bool replaced;    /* (sema) an override that found its function */
  Param *params;
  int nparams;
  TypeExpr *ret;
  KAttr *attrs;
  int nattrs;
  Node *body;
} Func;

typedef struct ConstDecl {
  char *name;
  Loc loc;
  TypeExpr *type;
  Node *value;
} ConstDecl;

typedef struct Program {
  Vec funcs;  /* Func* (kernels and functions, all files) */
  Vec consts; /* ConstDecl* */
} Program;

/* Parse one source into prog; imports are resolved by the caller (tc). */
bool ps_parse(Ctx *c, const Source *src, Program *prog, Vec *imports /* Node* ND_STR */);
void ast_print(Ctx *c, const Program *p, Buf *out);
void lx_print_tokens(Ctx *c, const Token *t, int n, Buf *out);

/* ---- Tile IR (tir.c) ---- */
typedef enum Opcode {
  OP_CONST,       /* scalar constant: ival/fval, result type */
  OP_SPLAT,       /* scalar -> tile */
  OP_ARANGE,      /* ival = start, ival2 = end */
  OP_PROGRAM_ID,  /* axis */
  OP_NUM_PROGRAMS,
  OP_PARAM,       /* never emitted: params are block args of the kernel body */
  /* elementwise binary (same types) */
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_REM, OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHR,
  OP_MIN, OP_MAX, OP_FDIV /* fdiv(a, b): div.full.f32 */, OP_CMP, OP_PTR_ADD,
  /* elementwise unary */
  OP_NEG, OP_NOT, OP_EXP, OP_EXP2, OP_LOG, OP_LOG2, OP_SQRT, OP_RSQRT, OP_ABS,
  OP_FLOOR, OP_CEIL, OP_TANH, OP_SIN, OP_COS, OP_ERF, OP_RCP, /* the math builtins: lower_math.c */
  OP_FMA, OP_SELECT, OP_CAST, OP_BITCAST,
  /* shape */
  OP_EXPAND_DIMS, OP_BROADCAST, OP_TRANS, OP_CONVERT,
  /* memory */
  OP_LOAD, OP_STORE, OP_ATOMIC_ADD,
  /* reductions and matrix */
  OP_REDUCE, OP_DOT,
  /* control */
  OP_FOR, OP_IF, OP_WHILE, OP_CONDITION, OP_YIELD, OP_RETURN,
  /* explicit hardware (Hopper) */
  OP_SMEM_ALLOC,  /* ival = byte offset (assigned by passes), ival2 = bytes per slot */
  OP_BAR_ALLOC,   /* ival = byte offset, ival2 = arrive count */
  OP_SLOT,        /* buf[i] / bars[i] */
  OP_SLICE,       /* view.slice(dim, off, size): axis = dim */
  OP_SMEM_LOAD, OP_SMEM_STORE,
  OP_SMEM_READ,   /* one element of a view, as a scalar every thread reads */
  OP_SMEM_WRITE,  /* one element of a view, written by the group's elected thread */
  OP_BAR_EXPECT, OP_BAR_ARRIVE, OP_BAR_WAIT, OP_NAMED_BAR, OP_FENCE_ASYNC,
  OP_TMA_LOAD, OP_TMA_STORE, OP_TMA_STORE_WAIT,
  OP_DSMEM_COPY,  /* dsmem_copy(src, dst, bar, cta = r): a bulk copy into CTA r's shared memory */
  OP_BULK_STORE_ADD, /* bulk_store_add(ptr, src): a bulk reduce-add of src's bytes (ival) into global memory;
                       ival2 = 1: bulk_store(ptr, src), a bulk copy of them */
  OP_BULK_LOAD,   /* bulk_load(dst, ptr, bar): a bulk copy of ival bytes of global memory at ptr into the view dst,
                     completing on the mbarrier bar (opnds: ptr, dst, bar) */
  OP_MMA_ASYNC, OP_MMA_COMMIT, OP_MMA_WAIT,
  OP_TASKS,       /* one region per task */
  OP_REPLICA_ID,
  OP_CLUSTER_RANK,
  OP_CLUSTER_SYNC, /* cluster_sync(): barrier.cluster, every thread of the cluster's CTAs */
  OP_SEM_WAIT,    /* spin (every thread, acquire) until *ptr == value */
  OP_SEM_SIGNAL,  /* *ptr = value (the elected thread, release, after its async-proxy writes) */
  /* made by pipeline.c (no source spelling): cp.async, Ampere's per-thread async copy */
  OP_ASYNC_COPY,  /* view, ptrs, [count] (OPF_MASK), valid (i1 scalar): each thread copies its 16-byte
                     chunks of the tile at ptrs into the view, reading the first count[chunk start]
                     elements (all without OPF_MASK, none when !valid) and zero-filling the rest;
                     OPF_MASK | OPF_OTHER: a bool mask instead of the count, whole chunks kept or not;
                     OPF_TRANS: element (r, c) goes to (c, r) of the view */
  OP_ASYNC_COMMIT, /* cp.async.commit_group */
  OP_ASYNC_WAIT,  /* cp.async.wait_group ival */
  /* explicit hardware (Blackwell, sm_100a: builtins_sm100.c, lower_sm100.c) */
  OP_TMEM_ALLOC,  /* ival = first TMEM column, ival2 = columns per slot */
  OP_TMEM_LOAD,   /* tcgen05.ld: a TMEM view -> a register tile (32x32b: a thread a row) */
  OP_TMEM_STORE,  /* tcgen05.st: view, tile */
  OP_TC_MMA,      /* tcgen05.mma chain: a (smem view or TMEM view), b (smem view), d (TMEM view),
                     [accumulate (i1)], [commit mbarrier]; ival: 1 = accumulate is an operand,
                     0 = always accumulate, -1 = never (the first MMA of the chain overwrites d);
                     ival2 = 1 + the index of the commit mbarrier (0: none) */
  OP_TC_COMMIT,   /* tcgen05.commit to an mbarrier (the elected thread's MMAs so far) */
  /* debugging (builtins_debug.c, lower_debug.c) */
  OP_PRINT,         /* vprintf of str (the checked format) with the scalar operands, by the elected thread */
  OP_DEVICE_ASSERT, /* operand: a bool scalar or tile; where false: a report (str: the message), then trap */
  OP_CLOCK,         /* clock64(): the SM's cycle counter (%clock64), an i64 scalar, read where it stands */
  OP_COUNT
} Opcode;

typedef enum CmpPred { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } CmpPred;
/* RED_ANY/RED_ALL: any()/all() of a bool tile, always over every element
 * (axis -1) to one uniform scalar */
typedef enum RedKind { RED_SUM, RED_MAX, RED_MIN, RED_ANY, RED_ALL } RedKind;

typedef struct TOp TOp;
typedef struct TBlock TBlock;

typedef struct TValue {
  int id;
  Type *type;
  TOp *def;        /* NULL for block arguments */
  TBlock *block;   /* block of a block argument */
  int index;       /* result number or argument number */
  const char *name;/* source name, for dumps */
  void *aux;       /* scratch for passes and lowering */
  const struct AxisInfo *ax; /* contiguity / divisibility / constancy (axisinfo.c) */
  void *lw;        /* lowering: the per-thread registers (lower.c) */
  int uses;        /* use count (passes.c keeps it fresh) */
} TValue;

struct TBlock {
  TValue **args;
  int nargs;
  TOp *first, *last;
  TOp *parent;
  /* a task region (OP_TASKS) or the kernel body: the warps its register
   * tiles are spread over; 0 inherits from the enclosing block */
  int warps;
  int replicas, regs, warp0; /* tasks: copies, register budget, first warp */
  const char *task_name;
};

struct TOp {
  Opcode opc;
  Loc loc;
  TValue **opnds;
  int nopnds;
  TValue **res;
  int nres;
  TBlock **regions;
  int nregions;
  /* attributes */
  int64_t ival, ival2;
  double fval;
  int axis;       /* program_id axis, reduce axis, expand_dims axis */
  int pred;       /* CmpPred, RedKind */
  Elem to;        /* cast target */
  int flags;      /* load/store: OPF_* */
  int shape[TC_MAX_RANK]; /* broadcast target shape */
  const char *str;  /* print: the format; device_assert: the message */
  TOp *prev, *next;
  TBlock *block;
  void *aux;
};

/* OPF_SKIP_ONES (a float mul, from scale_rows): a warp whose factors are all
 * exactly 1 skips the multiplies */
/* OPF_TRANS (smem_store of trans(x), fused by passes.c): x is stored
 * transposed, element (r, c) of x at (c, r) of the view. */
/* OPF_ALIAS (tmem_alloc, builtins_sm100.c): on another allocation's columns, taking none of its own;
 * (smem_alloc, pipeline.c) on the bytes of opnds[0]'s allocation, which must be dead where it is used. */
/* OPF_PAIR (tmem_alloc, tc_mma, tc_commit, builtins_sm100.c): the CTA pair's (.cta_group::2; docs/blackwell.md);
 * (tma_load, builtins_hw.c) completes on the pair's mbarrier at rank opnds[nopnds - 1] (.cta_group::2). */
/* OPF_MCAST (tma_load, builtins_hw.c): multicast to the cluster's CTAs of the mask opnds[5] (.multicast::cluster). */
/* OPF_DOT_ACC (tmem_load, pipeline_sm100.c): the pipelined dot's accumulator read back after its loop. */
/* OPF_PLANE (tma_load, pipeline.c): a 3-D descriptor's box, in plane opnds[5] (TParam.planes). */
/* OPF_HOME (smem_alloc, home.c): the home of a loop accumulator moved out of the registers. */
/* OPF_FRESH_A/B (mma_async, pipeline_multi.c): a or b is a tile staged before the loop; its descriptor is made
 * where each wgmma is issued, not hoisted out of the loop by LLVM (lower_hw.c, wgmma_desc_lbo). */
enum { OPF_MASK = 1, OPF_OTHER = 2, OPF_ACC = 4, OPF_UNSIGNED = 8, OPF_INSERTED = 16, OPF_SKIP_ONES = 32,
       OPF_TRANS = 64, OPF_ALIAS = 1 << 21, OPF_PAIR = 1 << 22, OPF_DOT_ACC = 1 << 23,
       OPF_MCAST = 1 << 24, OPF_PLANE = 1 << 25, OPF_FRESH_A = 1 << 26, OPF_FRESH_B = 1 << 27, OPF_HOME = 1 << 28 };

typedef struct TParam {
  const char *name;
  Elem elem;          /* scalar dtype or pointer (TMA: the element dtype) */
  int align;          /* pointers: assumed byte alignment; ints: multiple_of */
  bool tma;           /* a TMA descriptor: box shape and swizzle below */
  int rank, box[TC_MAX_RANK], swizzle;
  TValue *value;      /* the block argument */
  /* derived (pipeline.c): a TMA descriptor the runtime builds at launch
   * from other parameters, not an argument the caller passes: the tensor
   * at pointer parameter from[0], from[1] columns, from[2] rows, rows
   * from[3] elements apart; from[i] < 0 means the constant lit[i];
   * planes: a 3-D tensor, planes of from[2] rows one after another */
  bool derived, planes;
  int from[4];
  int64_t lit[4];
} TParam;

typedef struct TConstInfo {
  const char *name;
  DType dt;
  char *text;
} TConstInfo;

typedef struct TFunc {
  const char *name;
  Loc loc;
  TParam *params;
  int nparams;
  TConstInfo *consts;
  int nconsts;
  int warps;
  int cluster[3];
  int maxnreg;
  bool pdl;           /* pdl(true): waits for the stream's previous grid at entry, lets the next launch early */
  TBlock *body;
  int smem_bytes;     /* dynamic shared memory: allocations + scratch */
  int smem_static;    /* bytes of smem()/mbarrier() allocations (passes.c) */
  bool has_tasks;
  int tmem_cols;      /* TMEM columns the tmem() allocations take (sema; at most 512) */
  int tmem_slot;      /* byte offset of the shared-memory word tcgen05.alloc writes (passes.c) */
  bool tmem_pair;     /* its tensor memory and MMAs are the CTA pair's: tcgen05 .cta_group::2 (sema) */
  int stages;         /* stages(S): pipeline depth for a dot in a loop (-1: pipeline.c picks, 0: none) */
  Vec notes;          /* char*: what pipeline.c did or could not do, printed by --emit=tir */
} TFunc;

/* The columns tcgen05.alloc takes for f's tmem() allocations (0: none): a
 * power of two, at least 32 (lower_sm100.c, and the metadata's tmem line). */
static inline int ir_tmem_alloc_cols(const TFunc *f) {
  int n = 32;
  while (n < f->tmem_cols) n *= 2;
  return f->tmem_cols ? n : 0;
}

/* The register cap of a kernel whose tasks set register budgets but that
 * names no maxnreg: setmaxnreg needs one at entry, and lowering gives it the
 * even share of the SM's 64K registers (lower.c; the report's too). */
static inline int ir_even_maxnreg(int warps) {
  int cap = 65536 / (warps * 32);
  cap -= cap % 8;
  return cap > 255 ? 255 : cap;
}

typedef struct TModule {
  Vec kernels; /* TFunc* */
} TModule;

TBlock *ir_block(Ctx *c, int nargs, Type **argtypes);
TOp *ir_op(Ctx *c, Opcode opc, Loc loc, int nopnds, TValue **opnds, int nres, Type **restypes);
void ir_append(TBlock *b, TOp *op);
void ir_insert_before(TOp *before, TOp *op);
void ir_insert_after(TOp *after, TOp *op);
void ir_remove(TOp *op);
void ir_add_region(Ctx *c, TOp *op, TBlock *b);
TValue *ir_add_arg(Ctx *c, TBlock *b, Type *t); /* a new last argument of block b */
void ir_replace_uses(TBlock *scope, TValue *from, TValue *to);
void ir_print_module(Ctx *c, TModule *m, Buf *out);
const char *ir_opname(Opcode o);
bool ir_is_elementwise(Opcode o);
int ir_block_warps(const TBlock *b); /* warps of the task (or kernel) a block belongs to */
typedef void (*ir_walk_fn)(TOp *op, void *ud);
void ir_walk(TBlock *b, ir_walk_fn fn, void *ud); /* each op after the ops of its regions; safe against removal of the visited op */

/* ---- sema.c: AST -> TIR (type checks, constants, inlining) ---- */
bool sm_build(Ctx *c, Program *p, TModule *m);

/* ---- passes.c: layouts, conversions, cleanup, shared memory ---- */
bool pass_run(Ctx *c, TModule *m);

/* ---- pipeline.c: a `dot` in a loop over K, software pipelined ----
 * Its operands' loads become cp.async copies into rings of swizzled
 * shared memory issued stages - 2 iterations ahead, the dot an async
 * wgmma (sm_90a) that stays in flight for one iteration; what it did, or
 * why it could not, goes to f->notes. Runs before layouts (passes.c). */
void pl_run(Ctx *c, TFunc *f);
/* false (and an error at the dot) for stages(2) on a kernel with a dot in a loop (2 is a ring's depth, pr_run) */
bool pl_check_stages(Ctx *c, TFunc *f);

/* ---- pipeline_multi.c: loops with two to four dots (attention) ----
 * The tiles the loop loads through cp.async rings, those from before it
 * staged once in shared memory, a tile the body computes as wgmma's A from
 * registers; each dot a wgmma waited for at once. True when the kernel has
 * such a loop (pipelined or not: f->notes says); then pl_run does not run. */
bool pm_run(Ctx *c, TFunc *f);

/* ---- home.c: loop accumulators homed in shared memory ----
 * hm_run (before shared memory is planned): a loop whose carried tiles and
 * loads need more registers a thread than the kernel has keeps its
 * accumulators (carried tiles it updates from themselves) in shared
 * memory, each thread its own elements; f->notes says which. hm_check
 * (after layouts): barriers where a homed value's load and store in the
 * body got different layouts. */
void hm_run(Ctx *c, TFunc *f);
void hm_check(Ctx *c, TFunc *f);

/* ---- pipeline_sm100.c: the single-dot K loop on sm_100a ----
 * What pl_run does on sm_90a, with tcgen05.mma instead of wgmma: the
 * operands staged by TMA (or cp.async) through the same rings, the MMAs
 * issued by one thread into an accumulator in tensor memory (allocated
 * here, its columns counted in tmem_cols), each slot freed by the commit of
 * the MMA that read it, the accumulator read back with tcgen05.ld after the
 * loop. A dot it cannot take stays on mma.sync; f->notes says why. Runs
 * instead of pl_run on sm_100a. */
void pb_run(Ctx *c, TFunc *f);

/* ---- pipeline_rows.c: a loop's plain loads through cp.async rings ----
 * With stages(S) (S >= 2) on a kernel with no dot and no tasks: the tiles
 * a `for` loop loads at addresses that change with the iteration (16-byte
 * runs) are copied into rings of S slots of shared memory S - 1 iterations
 * ahead and read back where they were loaded (the rows of a row-wise
 * kernel in flight while a row is reduced, without holding them in
 * registers); f->notes says which. Runs after hm_run. */
void pr_run(Ctx *c, TFunc *f);

/* ---- axisinfo.c ---- */
/* Per dimension d of a value (Triton's axis analysis): the tile splits along
 * d into aligned runs of contig[d] elements that step by exactly 1 (pointers:
 * one element), each run starting at a value divisible by div[d] (bytes for
 * pointers); and into runs of constancy[d] equal elements.  Scalars use [0]. */
typedef struct AxisInfo {
  int64_t contig[TC_MAX_RANK];
  int64_t div[TC_MAX_RANK];
  int64_t constancy[TC_MAX_RANK];
} AxisInfo;
void ax_analyze(Ctx *c, TFunc *f);
const AxisInfo *ax_get(Ctx *c, TValue *v);

/* ---- lower.c: TIR -> MLIR, backend.c: MLIR -> PTX -> cubin ---- */
typedef struct BackendOut {
  Buf mlir, llvm, ptx, cubin;
} BackendOut;
bool lw_lower_and_compile(Ctx *c, TModule *m, tilec_emit emit, BackendOut *out);

/* ---- desc.c: MMA descriptors (pure; tests/unit/test_tcgen05_desc.c) ----
 * Shared-memory matrix descriptor, all but the start address: LBO and SBO
 * in bytes, the swizzle in bytes (0, 32, 64, 128); sm100: tcgen05's layout
 * (version bit 46, swizzle code in bits 61-63), else wgmma's (bits 62-63). */
uint64_t dsc_smem_hi(int64_t lbo, int64_t sbo, int swizzle, bool sm100);
/* The start-address field (bits 0-13) of a shared-memory byte address. */
uint64_t dsc_smem_start(uint64_t addr);
/* tcgen05 instruction descriptor, .kind::f16, f32 accumulator, dense:
 * M x N, bf16 (else f16) operands, a_mn / b_mn: A M-major / B N-major. */
uint32_t dsc_idesc_f16(int m, int n, bool bf16, bool a_mn, bool b_mn);
/* Where k-step k (16 elements of K) of a K-major operand with 128-byte
 * swizzled rows starts, in descriptor units (16 bytes) from the operand's
 * start: eb-byte elements, column blocks block_rows x 128 bytes apart. */
int64_t dsc_kmajor_step(int eb, int block_rows, int k);

/* ---- meta.c ---- */
void md_write(Ctx *c, TModule *m, Buf *out);

/* ---- stats.c: the compile report (tilec --stats, tilec_result_stats) ----
 * Per kernel: registers and spills (the assembler's report), shared memory
 * buffer by buffer with the scratch of layout conversions and reductions at
 * the source line that needs it, tensor memory, barriers, tasks with their
 * register budgets; then the time of each stage. Format: docs/stats.md. */
double st_now(void);                                  /* seconds, monotonic */
void st_time(Ctx *c, StStage s, double since);        /* add st_now() - since to stage s */
void st_note_scratch(Ctx *c, const TOp *op, int bytes); /* lowering: op took bytes of scratch */
void st_note_task(Ctx *c, const TBlock *task, int offset, int stride); /* a task's scratch slice */
void st_note_allocs(Ctx *c, const TFunc *f);  /* passes.c: f's shared memory, once placed */
/* The assembler's log (ptxas -v, nvJitLink -verbose): registers, spills,
 * barriers per function. */
void st_parse_asm_log(Ctx *c, const char *assembler, const char *log, size_t len);
/* The report of a compilation that got as far as Tile IR (c->stats.mod);
 * seconds: the whole compile. */
void st_report(Ctx *c, const char *filename, double seconds, Buf *out);

/* ---- stdlib (generated from the .tile files in dsl/std) ---- */
const char *tc_stdlib_lookup(const char *name, size_t *len);
/* "tilec VERSION (LLVM/MLIR 22, build ID)": build/gen/build_id.c (scripts/build_id.sh), ID a hash of the
 * compiler's sources */
extern const char tc_version[];

#endif

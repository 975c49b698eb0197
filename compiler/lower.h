/* lower.h - private to the lowering files (lower_core.c, lower.c, lower_math.c, lower_ops.c,
 * lower_reduce.c, lower_mem.c, lower_hw.c, lower_sm100.c, lower_debug.c):
 * TIR -> MLIR through the MLIR C API.  Every TIR value becomes the list of
 * MLIR values one thread holds (LV); scalars hold one. */
#ifndef TILEC_LOWER_H
#define TILEC_LOWER_H
#include "tilec_int.h"
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Dialect/LLVM.h>
#include <mlir-c/IR.h>

typedef struct LV {
  MlirValue *v;
  int n;
} LV;

typedef struct TCoord TCoord; /* cached thread coordinates of a layout */

enum { LW_RED_DONE = 8 };

typedef struct Lw {
  Ctx *c;
  MlirContext mc;
  MlirModule mod;
  MlirBlock blk;            /* ops are appended here */
  MlirBlock entry;
  MlirOperation prologue_end; /* thread-invariant values go before it */
  bool in_prologue;
  TFunc *kf;
  int warps;
  MlirLocation loc;
  MlirValue tid, lane, warp, smem;
  MlirValue scratch;        /* scratch shared memory of this group of warps (conversions, reductions) */
  MlirValue elect;          /* i1: the one thread that issues TMA / arrives on barriers */
  MlirValue bar_id;         /* named barrier of this group (null: the whole CTA, barrier 0) */
  int bar_threads;
  MlirValue replica;        /* the task replica's index (tasks), else null */
  MlirValue task_warp;      /* warp index inside the task replica */
  int smem_max;             /* bytes of scratch shared memory used (per group) */
  /* The scratch bytes this group accessed since its last barrier (lw_scr_*,
   * lower_core.c), in 16-byte granules of the first LW_SCR_BYTES (a bit
   * each): a
   * reduction writes where no thread may still read and skips the barrier
   * before its writes. scr_unknown: anything (a region's start, an op that
   * does not say what it touched, inside an IfScope). scr_pending: at the
   * top of a for body, where the last iteration's end is not known yet. */
  uint64_t scr_used;
  bool scr_unknown, scr_pending;
  int if_depth;             /* IfScopes open: a barrier in one may not run */
  MlirOperation scr_bar;    /* the barrier a for body's first write took while pending ... */
  uint64_t scr_bar_used;    /* ... and the granules it wrote: lower_for erases it if nothing reads them ... */
  bool scr_bar_parity;      /* ... or if that write alternates halves by iteration, and its reads */
  bool scr_last_parity;     /*     are the last scratch access of the body */
  MlirValue for_iv, for_lb, for_step; /* the innermost for of this group (null: none) */
  bool scr_claimed;         /* the op being lowered said what it touched (lw_scr_claim) */
  TOp *red_done[LW_RED_DONE]; /* reductions lowered early, with an earlier one (lower_reduce.c) */
  int nred_done;
  int task_scratch;         /* bytes of scratch taken by the task replicas lowered so far */
  TValue **smem_vals;       /* kernel-level shared-memory allocations (buffers, mbarriers) ... */
  int *smem_offs;           /* ... and their byte offsets: re-derived inside each task */
  int nsmem_vals, smem_cap;
  TCoord *coords;
  bool tcgen05;             /* this group's code issues tcgen05 ops: fence its thread syncs (lower_sm100.c) */
  bool tmem_ready;          /* the kernel's tensor memory is allocated ... */
  MlirValue tmem_base;      /* ... at this TMEM address (i32) */
  MlirValue pair_rank;      /* lower_sm100.c: %cluster_ctarank, read for a CTA pair's MMA or commit */
  MlirType i1, i8, i16, i32, i64, f16, bf16, f32, f64, ptr1, ptr3, vd;
  /* print and device_assert (lower_debug.c) */
  MlirBlock kentry;          /* the kernel's entry block ... */
  MlirOperation kprologue;   /* ... and its prologue marker (tasks have their own) */
  MlirValue printbuf;        /* the kernel's vprintf argument buffer (local memory), made at first use */
  int nformats;              /* format strings in the module so far */
  bool have_vprintf;         /* vprintf is declared */
} Lw;

/* builder (lower_core.c) */
void lw_insert(Lw *L, MlirOperation op); /* an operation built by hand, at the insertion point */
MlirNamedAttribute lw_attr(Lw *L, const char *name, MlirAttribute a);
MlirAttribute lw_pattr(Lw *L, const char *text);
MlirOperation lw_op(Lw *L, const char *name, int nopnd, const MlirValue *opnds, int nres, const MlirType *res,
                    int nattr, const MlirNamedAttribute *attrs);
MlirValue lw_op1(Lw *L, const char *name, int nopnd, const MlirValue *opnds, MlirType res, int nattr,
                 const MlirNamedAttribute *attrs);
MlirValue lw_int(Lw *L, MlirType t, int64_t v);
MlirValue lw_i32(Lw *L, int64_t v);
MlirValue lw_float(Lw *L, MlirType t, double v);
MlirValue lw_bin(Lw *L, const char *name, MlirValue a, MlirValue b);
MlirValue lw_cmpi(Lw *L, int pred, MlirValue a, MlirValue b); /* arith.cmpi predicate number */
MlirValue lw_select(Lw *L, MlirValue c, MlirValue a, MlirValue b);
MlirValue lw_cast(Lw *L, const char *name, MlirValue v, MlirType to);
MlirValue lw_intrin(Lw *L, const char *intrin, int n, const MlirValue *args, MlirType res);
/* x (i32) through redux.sync.min over the full warp: the same value, in a
 * register ptxas knows is warp-uniform. Every lane must be active. */
MlirValue lw_warp_uniform(Lw *L, MlirValue x);
MlirValue lw_asm(Lw *L, const char *text, const char *constraints, int n, const MlirValue *args, MlirType res,
                 bool side_effects);
MlirValue lw_extract(Lw *L, MlirValue agg, int i, MlirType t);
MlirValue lw_vec_extract(Lw *L, MlirValue vec, int i, MlirType t);
MlirValue lw_vec_build(Lw *L, MlirType vecty, int n, const MlirValue *elems);
MlirValue lw_gep(Lw *L, MlirValue ptr, MlirValue idx, MlirType elem, MlirType ptrty);
MlirValue lw_load(Lw *L, MlirValue ptr, MlirType t, int align);
void lw_store(Lw *L, MlirValue v, MlirValue ptr, int align);
void lw_barrier(Lw *L);
/* Scratch tracking (lower_core.c). lw_scr_claim: where a reduction's
 * `bytes` of scratch go (base, or base + dyn bytes at run time when dyn is
 * not null), with the barrier before its writes only when no free place
 * is known; the caller then writes, barriers, reads, and calls
 * lw_scr_done. */
#define LW_SCR_BYTES 1024
typedef struct ScrPlace {
  int base, extent; /* the bytes it may touch: [base, base + extent) */
  MlirValue dyn;    /* i32 bytes added (the iteration's half), or null */
} ScrPlace;
ScrPlace lw_scr_claim(Lw *L, int bytes);
void lw_scr_done(Lw *L, ScrPlace p); /* its reads are issued: read until the next barrier */
void lw_scr_use(Lw *L, int off, int bytes);
void lw_scr_unknown(Lw *L);
void lw_cluster_sync(Lw *L);
MlirType lw_elem_type(Lw *L, Elem e);
MlirType lw_vec_type(MlirType elem, int n);
LV *lw_get(Lw *L, TValue *v);
LV *lw_new(Lw *L, int n);
void lw_set(TValue *v, LV *lv);
void lw_note_smem(Lw *L, TValue *v, int off);
bool lw_linear(Lw *L, const TValue *v, LinLayout *out);

/* layout machinery (lower_ops.c) */
void lw_thread_coord(Lw *L, const LinLayout *lin, MlirValue *coord);
bool lw_gather(Lw *L, LV *src, const LinLayout *S, const LinLayout *D, int kind, const int *arg, LV *out);
LV *lw_smem_convert(Lw *L, LV *src, const LinLayout *S, const LinLayout *D, Elem e);
MlirValue lw_canonical_pred(Lw *L, const LinLayout *lin); /* NULL value when no replication */
MlirValue lw_shfl_xor(Lw *L, MlirValue v, DType dt, int off); /* butterfly shuffle of any scalar type */

/* reductions (lower_reduce.c) */
bool lw_reduce(Lw *L, TOp *op);
bool lw_dot(Lw *L, TOp *op);
bool lw_shape_op(Lw *L, TOp *op);

typedef struct IfScope {
  MlirBlock saved, body;
} IfScope;
/* Ops between begin and end run only where pred holds (an scf.if). */
void lw_begin_if(Lw *L, IfScope *s);
void lw_end_if(Lw *L, IfScope *s, MlirValue pred);

/* math builtins (lower_math.c): one register of an elementwise op (exp,
 * exp2, log, log2, rsqrt, tanh, sin, cos, erf, rcp: x[0]; fdiv: x[0] / x[1])
 * of float dtype dt, computed in f32; exp2(x, fma_every) on the FMA pipe */
MlirValue lw_math_f32(Lw *L, Opcode opc, const MlirValue *x, DType dt);
MlirValue lw_exp2_fma(Lw *L, MlirValue x);

/* explicit hardware (lower_hw.c) */
bool lw_hw_op(Lw *L, TOp *op);

/* print and device_assert (lower_debug.c) */
bool lw_debug_op(Lw *L, TOp *op);
/* a module-level llvm.mlir.global (external linkage); value may be null */
void lw_add_global(Lw *L, const char *name, MlirType t, int addr_space, MlirAttribute value, bool constant, int align);

/* Blackwell (lower_sm100.c): tensor memory, tcgen05 */
bool lw_tc_owns(const TOp *op);              /* op is Blackwell's to lower */
bool lw_tc_op(Lw *L, TOp *op);
bool lw_tc_uses(const TBlock *b, bool into_tasks); /* b issues tcgen05 ops */
void lw_tc_sync(Lw *L, TOp *op, bool after); /* the tcgen05 fences before / after a thread sync */
void lw_tc_kernel_end(Lw *L);                /* free the kernel's tensor memory */

/* memory (lower_mem.c) */
bool lw_load_op(Lw *L, TOp *op);
bool lw_store_op(Lw *L, TOp *op);
bool lw_atomic_op(Lw *L, TOp *op);

enum { CMPI_EQ = 0, CMPI_NE, CMPI_SLT, CMPI_SLE, CMPI_SGT, CMPI_SGE, CMPI_ULT, CMPI_ULE, CMPI_UGT, CMPI_UGE };
#endif

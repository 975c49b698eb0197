/* emu/emu.h - Tile's emulator: the PTX that tilec ships, run on the CPU
 * (issue 16). One internal header, a section per file.
 *
 *   PTX text --ptx.c (em_ptx_)--> EmModule (decoded once: instructions with
 *   resolved registers, labels and symbols) --exec.c (em_)--> threads of a
 *   grid of CTAs, each with its registers and program counter.
 *
 * Addresses: global and generic addresses are host addresses (the caller's
 * buffers); a .shared address is an offset into the CTA's shared window
 * (static .shared variables first, then the dynamic `extern .shared` array);
 * cvta.shared/to.shared map between the two through EM_SMEM_GENERIC.
 */
#ifndef TILE_EMU_H
#define TILE_EMU_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A 16-bit bf16 (f16 false) or f16 value, exactly, as a double: what the
 * MMA engines (wgmma.c, tcgen05.c) read their operands as. */
static inline double em_half_value(uint16_t h, bool f16) {
  if (!f16) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = e == 31 ? (mant ? NAN : INFINITY) : e == 0 ? ldexp(mant, -24) : ldexp(mant | 0x400, e - 25);
  return (h & 0x8000) ? -v : v;
}

/* The decoders' error: the message (printf-style) into err[errlen], if
 * given; returns false, for `return em_errf(...)` (tma.c, wgmma.c,
 * tcgen05.c, tcgen05_pair.c). */
static inline bool em_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline bool em_errf(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return false;
}

/* ---- ptx.c: parsing ---- */

typedef enum EmType {
  ET_NONE,
  ET_PRED,
  ET_B8, ET_B16, ET_B32, ET_B64,
  ET_U8, ET_U16, ET_U32, ET_U64,
  ET_S8, ET_S16, ET_S32, ET_S64,
  ET_F16, ET_F16X2, ET_BF16, ET_BF16X2, ET_F32, ET_F64,
  ET_F32X2, /* sm_100's packed f32 pair (add/sub/mul/fma.f32x2 on a 64-bit register) */
} EmType;

typedef enum EmOpc {
  EM_NOP, /* directives kept as no-ops (e.g. .loc), fences that order nothing here */
  EM_MOV, EM_ADD, EM_SUB, EM_MUL, EM_MAD, EM_FMA, EM_DIV, EM_REM, EM_MIN, EM_MAX,
  EM_NEG, EM_ABS, EM_AND, EM_OR, EM_XOR, EM_NOT, EM_CNOT, EM_SHL, EM_SHR,
  EM_SELP, EM_SETP, EM_CVT, EM_CVTA, EM_BFE, EM_BFI, EM_PRMT,
  EM_SHF, /* shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: rank bit 0 .r, bit 1 .clamp */
  EM_EX2, EM_LG2, EM_RCP, EM_SQRT, EM_RSQRT, EM_SIN, EM_COS, EM_TANH,
  EM_LD, EM_ST, EM_ATOM, EM_RED,
  EM_BRA, EM_RET, EM_EXIT,
  EM_BAR,      /* bar.sync / barrier.sync / bar.arrive / barrier.arrive (mod: EMM_ARRIVE); bar.red (EMM_BRED) */
  EM_SHFL,     /* shfl.sync.{up,down,bfly,idx}.b32 */
  EM_REDUX,    /* redux.sync.{min,max,add,and,or,xor}.{u32,s32,b32} */
  EM_VOTE,     /* vote.sync.{all,any,uni,ballot} */
  EM_MEMBAR,   /* membar.* / fence.* (ordering only: the emulator is sequentially consistent) */
  EM_MMA,      /* mma.sync.aligned.m16n8k16.row.col.f32.X.X.f32, X bf16 or f16 (type2): the warp's D = A*B + C;
                  a = {d0..d3}, {a0..a3}, {b0, b1}, {c0..c3}; every other mma form is EM_UNSUPPORTED */
  EM_CALL,     /* call[.uni] [(ret),] callee, (args): a[0] the return value's register (EA_SINK: none), a[1..] the
                  arguments' registers (a call's .param, each a register of its block: st.param/ld.param on it are
                  movs); rank: 1 for vprintf, the one callee run (sys.c), 0 for any other */
  EM_TRAP,     /* trap: the kernel stops, reported (sys.c) */
  /* The asynchronous engines (ptx_async.c decodes them, async.c / matrix.c run them). Operands as in PTX. */
  EM_MBAR_INIT,      /* mbarrier.init.shared.b64 [a], count */
  EM_MBAR_ARRIVE,    /* mbarrier.arrive[.expect_tx].shared.b64 state, [a] [, count | , tx] (EMM_EXPECT_TX) */
  EM_MBAR_EXPECT_TX, /* mbarrier.expect_tx.shared.b64 [a], tx */
  EM_MBAR_WAIT,      /* mbarrier.{try,test}_wait[.parity].shared.b64 p, [a], parity-or-state [, hint]
                        (EMM_PARITY; EMM_TEST: test_wait, which never blocks) */
  EM_TMA_LOAD,       /* cp.async.bulk.tensor.Nd.shared::{cta,cluster}.global.tile.mbarrier::complete_tx::bytes
                        [.multicast::cluster] [.cta_group::N] [dst], [map, {c0..}], [mbar] [, cta-mask]
                        (rank: N; EMM_MCAST; type2: the cta_group) */
  EM_TMA_STORE,      /* cp{.reduce}.async.bulk.tensor.Nd.global.shared::cta{.op}.tile.bulk_group [map, {c0..}], [src]
                        (red: ESB_NONE, or the reduction's EmSub) */
  EM_BULK_COMMIT,    /* cp.async.bulk.commit_group */
  EM_BULK_WAIT,      /* cp.async.bulk.wait_group[.read] N */
  EM_WGMMA,          /* wgmma.mma_async.sync.aligned.m64nNk16.f32.X.X (type2 X; rank N / 8): d, a-desc | {a0..a3},
                        b-desc, scale-d, imm-scale-a, imm-scale-b [, imm-trans-a], imm-trans-b */
  EM_WG_COMMIT,      /* wgmma.commit_group.sync.aligned */
  EM_WG_WAIT,        /* wgmma.wait_group.sync.aligned N */
  EM_STMATRIX,       /* stmatrix.sync.aligned.m8n8.xR[.trans].shared.b16 [a], {r0..}   (rank: R; EMM_TRANS) */
  EM_LDMATRIX,       /* ldmatrix.sync.aligned.m8n8.xR[.trans].shared.b16 {r0..}, [a] */
  EM_SETMAXNREG,     /* setmaxnreg.{inc,dec}.sync.aligned.u32 N (sub: ESB_INC / ESB_DEC): a warpgroup collective on the
                        CTA's register pool (regs.c) */
  /* Clusters (cluster.c): */
  EM_CBAR,           /* barrier.cluster.{arrive,wait}[.relaxed|.acquire|.release][.aligned] (EMM_ARRIVE: arrive) */
  EM_MAPA,           /* mapa[.shared::cluster].{u32,u64} d, a, rank (space ES_SHARED: shared::cluster addresses;
                        else generic ones) */
  /* Blackwell's tcgen05 (sm_100a): ptx_tc.c decodes them, tmem.c runs them; emu/tcgen05.h says which EmIns
     fields carry what. cta_group::1 only. */
  EM_TC_ALLOC,       /* tcgen05.alloc.cta_group::1.sync.aligned[.shared::cta].b32 [dst], ncols (space) */
  EM_TC_DEALLOC,     /* tcgen05.dealloc.cta_group::1.sync.aligned.b32 taddr, ncols */
  EM_TC_RELINQUISH,  /* tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned */
  EM_TC_MMA,         /* tcgen05.mma.cta_group::1.kind::f16[.collector::a::OP] [d], a-desc | [a], b-desc, idesc, [mask,]
                        enable-d [, scale] */
  EM_TC_COMMIT,      /* tcgen05.commit.cta_group::1.mbarrier::arrive::one[.shared::cluster].b64 [mbar] */
  EM_TC_LD,          /* tcgen05.ld.sync.aligned.SHAPE.xN.b32 {r..}, [taddr] */
  EM_TC_ST,          /* tcgen05.st.sync.aligned.SHAPE.xN.b32 [taddr], {r..} */
  EM_TC_WAIT,        /* tcgen05.wait::{ld,st}.sync.aligned */
  EM_TC_FENCE,       /* tcgen05.fence::{before,after}_thread_sync */
  /* Ampere's non-bulk asynchronous copy (sm_80+): ptx_async.c decodes them, cpasync.c runs them. */
  EM_CPA,            /* cp.async.{ca,cg}.shared{::cta}.global{.L2::cache_hint}{.L2::NB} [dst], [src], cp-size
                        {, src-size | , ignore-src}{, cache-policy}   (EMM_CG; EMM_HINT) */
  EM_CPA_COMMIT,     /* cp.async.commit_group */
  EM_CPA_WAIT,       /* cp.async.wait_group N; cp.async.wait_all (EMM_ALL, no operand) */
  EM_BULK_S2C,       /* cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size,
                        [mbar]: a bulk copy into a CTA of the cluster */
  EM_BULK_RED,       /* cp.reduce.async.bulk.global.shared::cta.bulk_group.add{.noftz}.{f32,f16,bf16} [dst], [src], size:
                        a bulk reduce-add into global memory, in the thread's bulk group (red; type2: the element type);
                        cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size: the same copy (red 0) */
  EM_BULK_G2S,       /* cp.async.bulk.shared::{cluster,cta}.global.mbarrier::complete_tx::bytes [dst], [src], size,
                        [mbar]: a bulk copy of global memory into this CTA's shared memory */
  EM_GRIDDEP,        /* griddepcontrol.wait; griddepcontrol.launch_dependents (EMM_ARRIVE): programmatic dependent
                        launch. A launch with EmLaunch.pdl fails a thread's global access before its wait */
  EM_UNSUPPORTED, /* parsed but not executable: executing it is an error naming the opcode */
} EmOpc;

/* Modifier bits (EmIns.mod). */
enum {
  EMM_FTZ = 1u << 0, EMM_SAT = 1u << 1, EMM_APPROX = 1u << 2, EMM_WIDE = 1u << 3,
  EMM_HI = 1u << 4, EMM_LO = 1u << 5, EMM_UNI = 1u << 6, EMM_NAN = 1u << 7,
  EMM_ARRIVE = 1u << 8, /* bar.arrive */
  EMM_FULL = 1u << 9,   /* div.full */
  EMM_RN = 1u << 10, EMM_RZ = 1u << 11, EMM_RM = 1u << 12, EMM_RP = 1u << 13,
  EMM_RNI = 1u << 14, EMM_RZI = 1u << 15, EMM_RMI = 1u << 16, EMM_RPI = 1u << 17,
  EMM_TO = 1u << 18,    /* cvta.to.<space> */
  EMM_RELU = 1u << 19,  /* min/max.relu.s32: the result clamped below at 0 (the only .relu run) */
  /* set only by the decoder of the asynchronous instructions (no generic modifier word maps to them) */
  EMM_EXPECT_TX = 1u << 19, EMM_PARITY = 1u << 20, EMM_TEST = 1u << 21, EMM_READ = 1u << 22, EMM_TRANS = 1u << 23,
  EMM_SYNCLD = 1u << 24, /* ld.acquire / ld.relaxed / ld.volatile: may spin on another CTA's store */
  EMM_CG = 1u << 25,     /* cp.async.cg (cp-size 16 only) */
  EMM_HINT = 1u << 26,   /* cp.async ... .L2::cache_hint: the last operand is a cache policy */
  EMM_ALL = 1u << 27,    /* cp.async.wait_all */
  EMM_MCAST = 1u << 28,  /* cp.async.bulk.tensor ... .multicast::cluster: a cta-mask operand last */
  EMM_BRED = 1u << 29,   /* bar.red / barrier.red: d, a [, b], {!}c; sub ESB_ADD (.popc), ESB_AND, ESB_OR */
  EMM_SYS = 1u << 30,    /* set by the parser: sys.c runs it, not exec.c (local memory: ld/st.local, cvta.local, a
                            .local variable's address; call; trap) */
};

/* setp comparisons (EmIns.cmp) and the boolean op combining a setp with
 * its predicate operand (EmIns.bop). */
typedef enum EmCmp {
  EC_NONE, EC_EQ, EC_NE, EC_LT, EC_LE, EC_GT, EC_GE, EC_LO, EC_LS, EC_HI, EC_HS,
  EC_EQU, EC_NEU, EC_LTU, EC_LEU, EC_GTU, EC_GEU, EC_NUM, EC_NAN,
} EmCmp;
typedef enum EmBop { EB_NONE, EB_AND, EB_OR, EB_XOR } EmBop;

/* State spaces (EmIns.space, EmGlobal.space). */
typedef enum EmSpace { ES_GENERIC, ES_PARAM, ES_GLOBAL, ES_SHARED, ES_LOCAL, ES_CONST } EmSpace;

/* Sub-operations: shfl mode, redux/atom/vote op (EmIns.sub). */
typedef enum EmSub {
  ESB_NONE,
  ESB_UP, ESB_DOWN, ESB_BFLY, ESB_IDX,                        /* shfl */
  ESB_ADD, ESB_MIN, ESB_MAX, ESB_AND, ESB_OR, ESB_XOR, ESB_EXCH, ESB_CAS, ESB_INC, ESB_DEC, /* redux, atom, red */
  ESB_ALL, ESB_ANY, ESB_VUNI, ESB_BALLOT,                       /* vote */
} EmSub;

/* Special registers (EmArg.reg when kind == EA_SREG). */
typedef enum EmSreg {
  ESR_TID_X, ESR_TID_Y, ESR_TID_Z, ESR_NTID_X, ESR_NTID_Y, ESR_NTID_Z,
  ESR_CTAID_X, ESR_CTAID_Y, ESR_CTAID_Z, ESR_NCTAID_X, ESR_NCTAID_Y, ESR_NCTAID_Z,
  ESR_LANEID, ESR_WARPID, ESR_NWARPID, ESR_SMID, ESR_NSMID, ESR_CLOCK, ESR_CLOCK64,
  ESR_LANEMASK_EQ, ESR_LANEMASK_LT, ESR_LANEMASK_LE, ESR_LANEMASK_GT, ESR_LANEMASK_GE,
  ESR_DYN_SMEM_SIZE, ESR_TOTAL_SMEM_SIZE,
  ESR_CLUSTER_CTARANK, ESR_CLUSTER_NCTARANK, ESR_CLUSTERID_X, ESR_CLUSTERID_Y, ESR_CLUSTERID_Z,
  ESR_NCLUSTERID_X, ESR_NCLUSTERID_Y, ESR_NCLUSTERID_Z, ESR_CLUSTER_CTAID_X, ESR_CLUSTER_CTAID_Y,
  ESR_CLUSTER_CTAID_Z, ESR_CLUSTER_NCTAID_X, ESR_CLUSTER_NCTAID_Y, ESR_CLUSTER_NCTAID_Z, ESR_IS_EXPLICIT_CLUSTER,
} EmSreg;

typedef enum EmArgKind {
  EA_NONE,
  EA_REG,   /* reg: register index */
  EA_IMM,   /* imm: integer immediate, or the bits of a float immediate (0f... / 0d... / decimal float
               converted to the instruction's type by exec) with fimm set */
  EA_SREG,  /* reg: EmSreg */
  EA_ADDR,  /* [reg + imm] (reg -1: none), or [sym + imm] (sym >= 0: EmModule.globals or the entry's params) */
  EA_VEC,   /* {a, b, c, d}: nvec register indices in vec (-1: the sink `_`; EM_VEC_IMM: the immediate in imm) */
  EA_SYM,   /* sym: a global's address (mov.u64 %rd, tile_smem) */
  EA_LABEL, /* imm: the target instruction index */
  EA_SINK,  /* `_` */
  EA_TADDR, /* [reg + imm, {c0, ..}] (sym as in EA_ADDR): a tensor map and nvec coordinate registers in vec */
  EA_LVEC,  /* {r0, .., rN}: a long vector (wgmma's accumulators, up to 255 registers), lv[0..nvec) in the arena */
} EmArgKind;

#define EM_VEC_IMM (-3) /* an EA_VEC element that is the arg's immediate (imm, fimm, f32imm) */

typedef struct EmArg {
  uint8_t kind;
  bool neg;   /* !%p: a negated predicate operand */
  bool fimm;  /* EA_IMM holds the bits of a float: an f64 (0d..., decimals) or an f32 (0f...) */
  bool f32imm;/* the float immediate was written 0f... (32 bits in imm) */
  uint8_t nvec;
  bool param; /* EA_ADDR/EA_SYM: sym indexes the function's params, not the globals */
  int32_t reg;
  int32_t sym;
  union {
    int32_t vec[4];    /* EA_VEC, EA_TADDR */
    const int32_t *lv; /* EA_LVEC */
  };
  int64_t imm;
} EmArg;

#define EM_MAX_ARGS 8 /* wgmma.mma_async: d, a, b, scale-d and four immediates */

typedef struct EmIns {
  uint16_t opc;   /* EmOpc */
  uint8_t type;   /* the (last) type suffix: add.s32 -> ET_S32; cvt.f32.s32 -> ET_F32 (destination) */
  uint8_t type2;  /* the source type of cvt, mma's A/B element type; setp's compared type is `type`;
                     cp.async.bulk.tensor (a load): 2 for .cta_group::2 (the mbarrier may be the CTA pair's peer's) */
  uint8_t space;  /* EmSpace of ld/st/atom/red/cvta */
  uint8_t vec;    /* ld/st .v2/.v4: 2 or 4; else 1 */
  uint8_t cmp;    /* EmCmp (setp) */
  uint8_t bop;    /* EmBop (setp.lt.and) */
  uint8_t sub;    /* EmSub */
  uint8_t rank;   /* cp.async.bulk.tensor: the tensor's dimensions; stmatrix/ldmatrix: the matrices; wgmma: N / 8;
                     shf: bit 0 .r (else .l), bit 1 .clamp (else .wrap) */
  uint8_t red;    /* cp.reduce.async.bulk.tensor: the reduction (EmSub) */
  uint32_t mod;   /* EMM_* */
  int32_t guard;  /* @%p: register index of the guard predicate, or -1 */
  bool guard_neg; /* @!%p */
  uint8_t nargs;
  EmArg a[EM_MAX_ARGS]; /* destination(s) first, as written in PTX */
  int32_t line;   /* the Tile source line of the last .loc before it (0: none) */
  int32_t file;   /* its .file number */
  int32_t ptx_line; /* the line in the PTX text */
  const char *text; /* the opcode as written (arena string), for reports */
} EmIns;

typedef struct EmParam {
  const char *name;
  EmType type;
  uint32_t size, align, offset; /* offset: in the kernel's parameter buffer (natural alignment) */
} EmParam;

typedef struct EmGlobal {
  const char *name;
  EmSpace space;   /* ES_GLOBAL, ES_SHARED, ES_CONST */
  uint32_t size, align;
  bool is_extern;  /* `.extern .shared .b8 x[]`: the dynamic shared memory */
  uint8_t *init;   /* initial bytes (size of them) or NULL */
  uint32_t offset; /* .shared: offset in the CTA window (set by the parser: statics in order, aligned);
                      .local: in each thread's local window (EmModule.local_bytes) */
} EmGlobal;

typedef struct EmFunc {
  const char *name;
  bool entry;
  EmParam *params;
  int nparams;
  uint32_t param_bytes;
  int nregs;           /* registers of one thread (every .reg, inline-asm scopes included) */
  EmType *reg_type;    /* nregs */
  const char **reg_name;
  EmIns *ins;
  int nins;
  int maxntid[3];      /* 0: not given */
  int maxnreg;         /* .maxnreg (0: not given) */
  int reqncluster[3];  /* .reqnctapercluster (0: not given) */
  bool explicitcluster; /* .explicitcluster */
  int minnctapersm;    /* .minnctapersm (0: not given) */
} EmFunc;

typedef struct EmModule {
  EmFunc *funcs;
  int nfuncs;
  EmGlobal *globals;
  int nglobals;
  uint32_t static_smem;  /* bytes of the static .shared variables */
  uint32_t local_bytes;  /* bytes of the .local variables: each thread's local window (EmGlobal.offset in it) */
  const char **files;    /* .file names by number (index), NULL where absent */
  int nfiles;
  void *arena;           /* everything above lives in it */
} EmModule;

/* Parse PTX text (what tilec emits). On failure returns false and writes
 * "ptx:LINE: what" into err. */
bool em_ptx_parse(const char *text, size_t len, EmModule **out, char *err, size_t errlen);
void em_module_free(EmModule *m);
const EmFunc *em_find_func(const EmModule *m, const char *name);
const char *em_opc_name(EmOpc o); /* (ptx_op.c) */

/* ptx_op.c: the core set's opcodes for ptx.c. em_ptx_op_decode_opcode: the opcode word decoded into in (opc,
 * types, space, modifiers; EM_UNSUPPORTED for a form exec does not run), the asynchronous and tcgen05 roots
 * handed to ptx_async.c and ptx_tc.c; em_ptx_op_mma_operands: whether an mma's operands are the one form exec
 * runs; em_ptx_op_type_names: EmType's PTX words, indexed by EmType. */
extern const char *const em_ptx_op_type_names[ET_F32X2 + 1];
/* The parsers' word lookups (ptx.c, ptx_op.c): the word s[0..len) is w;
 * its index in tab[0..n) (NULL entries skipped), or -1. */
static inline bool em_word_eq(const char *s, int len, const char *w) {
  size_t n = strlen(w);
  return (size_t)len == n && !memcmp(s, w, n);
}
static inline int em_word_find(const char *const *tab, int n, const char *s, int len) {
  for (int i = 0; i < n; i++)
    if (tab[i] && em_word_eq(s, len, tab[i])) return i;
  return -1;
}
void em_ptx_op_decode_opcode(const char *s, int len, EmIns *in);
bool em_ptx_op_mma_operands(const EmIns *in);

/* ptx_async.c: the asynchronous instructions' opcodes (mbarrier, cp.async.bulk, wgmma, stmatrix, ldmatrix,
 * setmaxnreg). em_ptx_async_opcode: true when the opcode's root is one of them; in is then decoded (or
 * EM_UNSUPPORTED, a form exec does not run). em_ptx_async_operands: NULL when the operands fit the
 * decoded instruction, else what is wrong with them. */
bool em_ptx_async_opcode(const char *s, int len, EmIns *in);
const char *em_ptx_async_operands(const EmIns *in);

/* ---- exec.c: running a kernel ---- */

#define EM_SMEM_GENERIC 0x7e0000000000ull /* generic address of a CTA's shared window */
#define EM_LOCAL_GENERIC 0x7d0000000000ull /* generic address of a thread's local window (sys.c) */

typedef struct EmRange {
  const void *base;
  size_t bytes;
} EmRange;

/* Schedules (EmLaunch.sched). Round-robin: warps in order every round,
 * each TMA copy done at the end of the round after it was issued. Random:
 * the warps shuffled every round (EmLaunch.seed), each copy delayed by 0
 * to 2 more rounds. Adversarial: warps shuffled, and every asynchronous
 * completion as late as the hardware may make it: a TMA copy completes
 * only when no thread can move (one at a time, chosen by the seed) or when
 * its bulk group is waited for; a wgmma always runs at the wait_group that
 * needs it. The same seed and schedule replay the same run. */
typedef enum EmSched { EM_SCHED_DEFAULT, EM_SCHED_RR, EM_SCHED_RANDOM, EM_SCHED_ADVERSARIAL } EmSched;

typedef struct EmLaunch {
  const char *kernel;
  unsigned grid[3], block[3];
  size_t dyn_smem;
  const void *params;  /* the kernel's parameter buffer: params[i] at EmFunc.params[i].offset */
  size_t params_size;
  uint64_t seed;       /* the scheduler's seed (EM_SCHED_DEFAULT: 0 round-robin, else random) */
  int sched;           /* EmSched */
  bool no_checks;      /* true: no race, proxy or uninitialized-read checks of shared memory (check.c) */
  uint64_t max_steps;  /* per CTA, 0: a default (sched.c: 2e8 for each CTA of the grid, up to 8); a kernel
                          that runs past it is reported as a hang */
  const EmRange *ranges; /* the global memory a kernel may touch (its allocations); NULL: unchecked */
  int nranges;
  unsigned cluster[3]; /* the cluster shape (0 0 0 or 1 1 1: none given; the kernel's .reqnctapercluster then) */
  unsigned regs;       /* registers a thread at launch: the cubin's count (0: the PTX's .maxnreg, else the cap
                          .maxntid x .minnctapersm gives; none: setmaxnreg moves no registers) -- regs.c */
  unsigned cta_turn;   /* > 0: CTAs (clusters) take turns of this many rounds, all resident at once, instead of
                          each running to its end (sched.c); 0: one after another */
  bool pdl;            /* launched to overlap the stream's previous grid (programmatic stream serialization): a
                          thread may touch global memory only after its griddepcontrol.wait (memory.c) */
} EmLaunch;

/* The schedule a launch runs (EM_SCHED_DEFAULT resolved: sched.c), and its name (report.c). */
EmSched em_sched_of(const EmLaunch *l);
const char *em_sched_name(EmSched s);

/* Run the kernel to completion, CTA after CTA. Returns false with a report
 * in err (the instruction, its PTX line and Tile line, the thread) on an
 * unsupported instruction, a bad access, a deadlock or a hang. */
bool em_launch(const EmModule *m, const EmLaunch *l, char *err, size_t errlen);

/* ---- tma.c: tensor maps (the CUtensorMap that cuTensorMapEncodeTiled fills under TILE_INTERPRET=1) ----
 *
 * The emulator's own 128-byte encoding, decoded by exec when a
 * cp.async.bulk.tensor names the map: a tag, the driver's arguments as
 * given (dims[0] the innermost, strides[i] the byte stride of dimension i,
 * strides[0] the element size) and a checksum, so that a map the emulator
 * did not make (or one overwritten) is refused rather than read. */
#define EM_TMAP_MAGIC 0x50414d54u /* "TMAP" */
typedef struct EmTensorMap {
  uint32_t magic;
  uint8_t dtype, rank, esize, swizzle; /* CUtensorMapDataType; 1..5; bytes; CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B */
  uint8_t interleave, oob, l2, pad0;   /* CUtensorMapInterleave, CUtensorMapFloatOOBfill, CUtensorMapL2promotion */
  uint8_t estr[5];                     /* element (traversal) strides, 1..8 */
  uint8_t pad1;
  uint16_t box[5];                     /* box dimensions, 1..256 */
  uint8_t pad2[4];
  uint64_t base;                       /* the global address */
  uint64_t dims[5];
  uint64_t strides[5];
  uint64_t check;                      /* em_tmap_check of the bytes before it */
} EmTensorMap;
_Static_assert(sizeof(EmTensorMap) == 128, "EmTensorMap is a CUtensorMap");

/* Validate the arguments as the driver does and encode them into *map.
 * False with the reason in err (the map untouched) when the driver would
 * refuse them (*unsupported false), or when they are valid but ask for
 * what the emulator does not do (*unsupported true: interleaved layouts,
 * the packed sub-byte types). */
bool em_tmap_encode(EmTensorMap *map, int dtype, unsigned rank, const void *base, const uint64_t *dims,
                    const uint64_t *strides, const uint32_t *box, const uint32_t *estr, int interleave,
                    int swizzle, int l2, int oob, bool *unsupported, char *err, size_t errlen);
/* A map made by em_tmap_encode (copied out of 128 bytes at p)? */
bool em_tmap_decode(const void *p, EmTensorMap *map);
/* The shared-memory byte address that byte address a of a box lands at
 * under swizzle mode sw (0..3): the 16-byte chunk index XOR the 128-byte
 * row bits above it (CUTLASS's Swizzle<sw,4,3>), on the absolute address. */
static inline uint32_t em_swizzle(uint32_t a, int sw) {
  return sw <= 0 || sw > 3 ? a : a ^ (((a >> 7) & ((1u << sw) - 1)) << 4);
}

/* ---- wgmma.c: Hopper's warpgroup MMA (wgmma.mma_async), its semantics alone ----
 *
 * One wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16} of a
 * warpgroup (128 threads, warps w0..w0+3): D = A*B (+ D when scale_d), A
 * 64x16 from shared memory (adesc) or from registers (a_regs), B 16xN from
 * shared memory (bdesc). Descriptors are the PTX ISA's 64-bit shared-memory
 * matrix descriptors (start address, leading and stride byte offsets, base
 * offset, swizzle mode), addresses being offsets into the CTA's shared
 * window `smem` of `smem_bytes`. trans_a/trans_b are the imm-trans operands
 * (0: K-major). Each element of D is summed in double over the 16 products
 * plus the old D and rounded once to f32.
 *
 * Registers by thread of the warpgroup (0..127, thread = 32*warp + lane):
 * d[t][0..N/2-1] the f32 accumulator fragment (bits), a[t][0..3] the bf16x2 /
 * f16x2 A fragment (a_regs only), in the PTX ISA's wgmma register layouts.
 * Returns false with a reason in err for a descriptor that reaches outside
 * the window, an unsupported shape/type, or a malformed descriptor. */
typedef struct EmWgmma {
  int n;                 /* N: a multiple of 8, 8..256 */
  EmType atype, btype;   /* ET_BF16 or ET_F16 (both the same) */
  bool a_regs;           /* A from registers (the RS form) */
  uint64_t adesc, bdesc; /* shared-memory matrix descriptors (adesc unused when a_regs) */
  int trans_a, trans_b;  /* imm-trans-a / imm-trans-b: 0 or 1 */
  bool scale_d;          /* false: D = A*B, the old D ignored */
  int scale_a, scale_b;  /* imm-scale-a / imm-scale-b: 1 or -1 */
} EmWgmma;

bool em_wgmma_run(const EmWgmma *w, const uint8_t *smem, size_t smem_bytes,
                  const uint32_t (*a)[4], uint32_t (*d)[128], char *err, size_t errlen);
/* The shared-memory bytes a wgmma reads, as the address of each 16-byte
 * piece (eight elements along the contiguous dimension) of A (none in the
 * RS form) then of B into out (room for (64 + 256) * 2); their number, or
 * -1 for a descriptor em_wgmma_run refuses (it reports it). */
int em_wgmma_addrs(const EmWgmma *w, uint32_t *out);

#endif

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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- ptx.c: parsing ---- */

typedef enum EmType {
  ET_NONE,
  ET_PRED,
  ET_B8, ET_B16, ET_B32, ET_B64,
  ET_U8, ET_U16, ET_U32, ET_U64,
  ET_S8, ET_S16, ET_S32, ET_S64,
  ET_F16, ET_F16X2, ET_BF16, ET_BF16X2, ET_F32, ET_F64,
} EmType;

typedef enum EmOpc {
  EM_NOP, /* directives kept as no-ops (e.g. .loc), fences that order nothing here */
  EM_MOV, EM_ADD, EM_SUB, EM_MUL, EM_MAD, EM_FMA, EM_DIV, EM_REM, EM_MIN, EM_MAX,
  EM_NEG, EM_ABS, EM_AND, EM_OR, EM_XOR, EM_NOT, EM_CNOT, EM_SHL, EM_SHR,
  EM_SELP, EM_SETP, EM_CVT, EM_CVTA, EM_BFE, EM_BFI, EM_PRMT,
  EM_EX2, EM_LG2, EM_RCP, EM_SQRT, EM_RSQRT, EM_SIN, EM_COS, EM_TANH,
  EM_LD, EM_ST, EM_ATOM, EM_RED,
  EM_BRA, EM_RET, EM_EXIT,
  EM_BAR,      /* bar.sync / barrier.sync / bar.arrive / barrier.arrive (mod: EMM_ARRIVE) */
  EM_SHFL,     /* shfl.sync.{up,down,bfly,idx}.b32 */
  EM_REDUX,    /* redux.sync.{min,max,add,and,or,xor}.{u32,s32,b32} */
  EM_VOTE,     /* vote.sync.{all,any,uni,ballot} */
  EM_MEMBAR,   /* membar.* / fence.* (ordering only: the emulator is sequentially consistent) */
  EM_MMA,      /* mma.sync.aligned.m16n8k16.row.col.f32.X.X.f32, X bf16 or f16 (type2): the warp's D = A*B + C;
                  a = {d0..d3}, {a0..a3}, {b0, b1}, {c0..c3}; every other mma form is EM_UNSUPPORTED */
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
} EmSreg;

typedef enum EmArgKind {
  EA_NONE,
  EA_REG,   /* reg: register index */
  EA_IMM,   /* imm: integer immediate, or the bits of a float immediate (0f... / 0d... / decimal float
               converted to the instruction's type by exec) with fimm set */
  EA_SREG,  /* reg: EmSreg */
  EA_ADDR,  /* [reg + imm] (reg -1: none), or [sym + imm] (sym >= 0: EmModule.globals or the entry's params) */
  EA_VEC,   /* {a, b, c, d}: nvec register indices in vec (-1: the sink `_`) */
  EA_SYM,   /* sym: a global's address (mov.u64 %rd, tile_smem) */
  EA_LABEL, /* imm: the target instruction index */
  EA_SINK,  /* `_` */
} EmArgKind;

typedef struct EmArg {
  uint8_t kind;
  bool neg;   /* !%p: a negated predicate operand */
  bool fimm;  /* EA_IMM holds the bits of a float: an f64 (0d..., decimals) or an f32 (0f...) */
  bool f32imm;/* the float immediate was written 0f... (32 bits in imm) */
  uint8_t nvec;
  bool param; /* EA_ADDR/EA_SYM: sym indexes the function's params, not the globals */
  int32_t reg;
  int32_t sym;
  int32_t vec[4];
  int64_t imm;
} EmArg;

#define EM_MAX_ARGS 6

typedef struct EmIns {
  uint16_t opc;   /* EmOpc */
  uint8_t type;   /* the (last) type suffix: add.s32 -> ET_S32; cvt.f32.s32 -> ET_F32 (destination) */
  uint8_t type2;  /* the source type of cvt, mma's A/B element type; setp's compared type is `type` */
  uint8_t space;  /* EmSpace of ld/st/atom/red/cvta */
  uint8_t vec;    /* ld/st .v2/.v4: 2 or 4; else 1 */
  uint8_t cmp;    /* EmCmp (setp) */
  uint8_t bop;    /* EmBop (setp.lt.and) */
  uint8_t sub;    /* EmSub */
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
  uint32_t offset; /* .shared: offset in the CTA window (set by the parser: statics in order, aligned) */
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
} EmFunc;

typedef struct EmModule {
  EmFunc *funcs;
  int nfuncs;
  EmGlobal *globals;
  int nglobals;
  uint32_t static_smem;  /* bytes of the static .shared variables */
  const char **files;    /* .file names by number (index), NULL where absent */
  int nfiles;
  void *arena;           /* everything above lives in it */
} EmModule;

/* Parse PTX text (what tilec emits). On failure returns false and writes
 * "ptx:LINE: what" into err. */
bool em_ptx_parse(const char *text, size_t len, EmModule **out, char *err, size_t errlen);
void em_module_free(EmModule *m);
const EmFunc *em_find_func(const EmModule *m, const char *name);
const char *em_opc_name(EmOpc o);

/* ---- exec.c: running a kernel ---- */

#define EM_SMEM_GENERIC 0x7e0000000000ull /* generic address of a CTA's shared window */

typedef struct EmRange {
  const void *base;
  size_t bytes;
} EmRange;

typedef struct EmLaunch {
  const char *kernel;
  unsigned grid[3], block[3];
  size_t dyn_smem;
  const void *params;  /* the kernel's parameter buffer: params[i] at EmFunc.params[i].offset */
  size_t params_size;
  uint64_t seed;       /* warp scheduling order (0: round-robin) */
  uint64_t max_steps;  /* per CTA, 0: a default; a kernel that runs past it is reported as a hang */
  const EmRange *ranges; /* the global memory a kernel may touch (its allocations); NULL: unchecked */
  int nranges;
} EmLaunch;

/* Run the kernel to completion, CTA after CTA. Returns false with a report
 * in err (the instruction, its PTX line and Tile line, the thread) on an
 * unsupported instruction, a bad access, a deadlock or a hang. */
bool em_launch(const EmModule *m, const EmLaunch *l, char *err, size_t errlen);

#endif

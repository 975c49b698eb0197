/* ptx_op.c - the parser's opcode decoder: an opcode word of the core set
 * ("ld.global.v4.b32") -> EmIns's opcode, types, space and modifiers, and
 * mma's operand check; em_opc_name. ptx.c calls em_ptx_op_decode_opcode
 * on every instruction (which hands the asynchronous and tcgen05 roots to
 * ptx_async.c and ptx_tc.c first) and em_ptx_op_mma_operands once an mma's
 * operands are read. The tables here are indexed by the emu.h enums; a
 * modifier EmIns cannot represent leaves the instruction EM_UNSUPPORTED.
 */
#include <string.h>

#include "emu.h"
#include "tcgen05.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof *(a)))

static const char *const opc_names[] = {
    "nop", "mov", "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max",
    "neg", "abs", "and", "or", "xor", "not", "cnot", "shl", "shr",
    "selp", "setp", "cvt", "cvta", "bfe", "bfi", "prmt", "shf",
    "ex2", "lg2", "rcp", "sqrt", "rsqrt", "sin", "cos", "tanh",
    "ld", "st", "atom", "red", "bra", "ret", "exit", "bar", "shfl", "redux", "vote", "membar", "mma", "call", "trap",
    "mbarrier.init", "mbarrier.arrive", "mbarrier.expect_tx", "mbarrier.wait", "cp.async.bulk.tensor (load)",
    "cp.async.bulk.tensor (store)", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", "wgmma.mma_async",
    "wgmma.commit_group", "wgmma.wait_group", "stmatrix", "ldmatrix", "setmaxnreg", "barrier.cluster", "mapa",
    "tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.mma", "tcgen05.commit",
    "tcgen05.ld", "tcgen05.st", "tcgen05.wait", "tcgen05.fence", "cp.async", "cp.async.commit_group",
    "cp.async.wait_group", "cp.async.bulk.shared::cluster", "cp.reduce.async.bulk.global",
    "cp.async.bulk.shared.global", "griddepcontrol", "unsupported"};
const char *const em_ptx_op_type_names[ET_F32X2 + 1] = {
    NULL, "pred", "b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64",
    "s8", "s16", "s32", "s64", "f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "f32x2"};
static const char *const space_names[] = {NULL, "param", "global", "shared", "local", "const"};
static const char *const cmp_names[] = {
    NULL, "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
    "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
static const char *const sub_names[] = {
    NULL, "up", "down", "bfly", "idx", "add", "min", "max", "and", "or", "xor",
    "exch", "cas", "inc", "dec", "all", "any", "uni", "ballot"};
static const char *const mod_names[] = { /* bit i of EmIns.mod */
    "ftz", "sat", "approx", "wide", "hi", "lo", "uni", "NaN", "arrive", "full",
    "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "to", "relu"};
_Static_assert(COUNT(opc_names) == EM_UNSUPPORTED + 1 && COUNT(em_ptx_op_type_names) == ET_F32X2 + 1 &&
                   COUNT(space_names) == ES_CONST + 1 && COUNT(cmp_names) == EC_NAN + 1 &&
                   COUNT(sub_names) == ESB_BALLOT + 1 && 1u << (COUNT(mod_names) - 1) == EMM_RELU,
               "a table is out of step with emu.h");

/* Modifiers that change what an otherwise supported opcode computes in a
 * way EmIns cannot say, and number formats it has no type for: ignoring
 * them would silently compute something else. */
static const char *const unmodeled_mods[] = {
    "cc", "xorsign", "shiftamt", "oob", "satfinite", "rs", "b128", "tf32", "s4", "u4",
    "e4m3", "e5m2", "e4m3x2", "e5m2x2", "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2"};
static const char *const prmt_modes[] = {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};


/* One modifier of an opcode.  types: the first two and the last;
 * modifiers EmIns cannot represent make the instruction unsupported. */
static void modifier(EmIns *in, const char *m, int n, int types[3], int *ntypes, bool *unsup) {
  int k = em_word_find(em_ptx_op_type_names, COUNT(em_ptx_op_type_names), m, n), op = in->opc;
  if (k > 0) {
    if (*ntypes < 2) types[*ntypes] = k;
    types[2] = k;
    ++*ntypes;
  } else if ((k = em_word_find(space_names, COUNT(space_names), m, n)) > 0) {
    in->space = (uint8_t)k;
  } else if (em_word_eq(m, n, "shared::cta") || em_word_eq(m, n, "shared::cluster")) {
    in->space = ES_SHARED;
  } else if (em_word_eq(m, n, "acquire") || em_word_eq(m, n, "relaxed") || em_word_eq(m, n, "volatile")) {
    in->mod |= EMM_SYNCLD;
  } else if (n == 2 && m[0] == 'v' && (m[1] == '2' || m[1] == '4' || m[1] == '8')) {
    in->vec = (uint8_t)(m[1] - '0');
  } else if (op == EM_BAR && (em_word_eq(m, n, "red") || em_word_eq(m, n, "popc") || em_word_eq(m, n, "and") ||
                              em_word_eq(m, n, "or"))) {
    if (m[0] == 'r') in->mod |= EMM_BRED;
    else in->sub = (uint8_t)(m[0] == 'p' ? ESB_ADD : m[0] == 'a' ? ESB_AND : ESB_OR);
  } else if (op == EM_SETP && (k = em_word_find(cmp_names, COUNT(cmp_names), m, n)) > 0) {
    in->cmp = (uint8_t)k; /* ahead of the mod table: setp.lo compares, mul.lo does not */
  } else if (op == EM_SETP && (k = em_word_find(sub_names + ESB_AND, 3, m, n)) >= 0) {
    in->bop = (uint8_t)(EB_AND + k);
  } else if (op == EM_SHFL && (k = em_word_find(sub_names + ESB_UP, 4, m, n)) >= 0) {
    in->sub = (uint8_t)(ESB_UP + k);
  } else if ((op == EM_REDUX || op == EM_ATOM || op == EM_RED) &&
             (k = em_word_find(sub_names + ESB_ADD, ESB_DEC - ESB_ADD + 1, m, n)) >= 0) {
    in->sub = (uint8_t)(ESB_ADD + k);
  } else if (op == EM_VOTE && (k = em_word_find(sub_names + ESB_ALL, 4, m, n)) >= 0) {
    in->sub = (uint8_t)(ESB_ALL + k); /* vote.uni: ESB_VUNI, not EMM_UNI */
  } else if ((k = em_word_find(mod_names, COUNT(mod_names), m, n)) >= 0) {
    in->mod |= 1u << k;
  } else if (em_word_find(unmodeled_mods, COUNT(unmodeled_mods), m, n) >= 0 ||
             (op == EM_PRMT && em_word_find(prmt_modes, COUNT(prmt_modes), m, n) >= 0) ||
             /* bar.warp.sync and barrier.cluster (cluster.c's) are other barriers */
             (op == EM_BAR && (em_word_eq(m, n, "warp") || em_word_eq(m, n, "cluster")))) {
    *unsup = true;
  } /* else it does not change the result here (.sync .aligned .gpu .L1::no_allocate ...) */
}

/* "ld.global.v4.b32": the root picks the opcode, the rest are modifiers. */
void em_ptx_op_decode_opcode(const char *s, int len, EmIns *in) {
  int i = 0, types[3] = {0}, ntypes = 0;
  bool unsup = false, sync = false;
  if (em_ptx_async_opcode(s, len, in) || em_ptx_tc_opcode(s, len, in)) return;
  while (i < len && s[i] != '.') i++;
  int k = em_word_find(opc_names + 1, EM_UNSUPPORTED - 1, s, i);
  in->opc = k >= 0 ? (uint16_t)(k + 1) : em_word_eq(s, i, "barrier") ? EM_BAR : em_word_eq(s, i, "fence") ? EM_MEMBAR : EM_UNSUPPORTED;
  if (in->opc == EM_GRIDDEP) { /* the two forms, word for word */
    bool w = em_word_eq(s, len, "griddepcontrol.wait"), l = em_word_eq(s, len, "griddepcontrol.launch_dependents");
    in->opc = w || l ? EM_GRIDDEP : EM_UNSUPPORTED;
    if (l) in->mod |= EMM_ARRIVE;
    return;
  }
  if (em_word_eq(s, i, "brx")) { /* brx.idx{.uni} %r, TABLE: a bra through the table (ptx.c's .branchtargets) */
    bool ok = em_word_eq(s, len, "brx.idx") || em_word_eq(s, len, "brx.idx.uni");
    in->opc = ok ? EM_BRA : EM_UNSUPPORTED;
    in->sub = ok ? ESB_IDX : 0;
    return;
  }
  for (int j; i < len;) {
    for (j = ++i; i < len && s[i] != '.';) i++;
    modifier(in, s + j, i - j, types, &ntypes, &unsup);
    sync |= em_word_eq(s + j, i - j, "sync");
  }
  in->type = (uint8_t)types[2];
  if (in->opc == EM_CVT) { /* cvt.DST.SRC */
    in->type = (uint8_t)types[0];
    in->type2 = (uint8_t)types[1];
    unsup |= ntypes != 2;
  }
  if ((in->opc == EM_ADD || in->opc == EM_SUB || in->opc == EM_FMA) && ntypes == 2 && types[0] == ET_F32 &&
      (types[1] == ET_F16 || types[1] == ET_BF16)) {
    in->type = ET_F32; /* sm_100's mixed precision add/sub/fma.f32.{f16,bf16}: a (fma: a and b) 16-bit */
    in->type2 = (uint8_t)types[1];
  } else if (ntypes > 1 && in->opc >= EM_ADD && in->opc <= EM_MAX) {
    unsup = true; /* another two-type arithmetic form: not run as the last type's */
  }
  if (in->opc == EM_MMA) { /* only the forms exec runs, word for word (the ISA fixes the modifiers' order) */
    in->type2 = em_word_eq(s, len, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") ? ET_BF16
                : em_word_eq(s, len, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32") ? ET_F16 : ET_NONE;
    unsup |= in->type2 == ET_NONE;
  }
  if (in->opc == EM_SHF) { /* the four forms, word for word: a funnel shift of the pair {b:a} by c */
    static const char *const shf_forms[] = {"shf.l.wrap.b32", "shf.r.wrap.b32", "shf.l.clamp.b32", "shf.r.clamp.b32"};
    int f = em_word_find(shf_forms, COUNT(shf_forms), s, len);
    if (f < 0) unsup = true;
    else in->rank = (uint8_t)f;
  }
  if ((in->mod & EMM_RELU) && !((in->opc == EM_MIN || in->opc == EM_MAX) && in->type == ET_S32))
    unsup = true; /* .relu of cvt, fma, f16x2 min/max ...: not modelled */
  if (in->opc == EM_BAR && (in->mod & EMM_BRED)) /* bar.red.popc.u32, bar.red.{and,or}.pred; never .arrive */
    unsup |= (in->mod & EMM_ARRIVE) || !(in->sub == ESB_ADD ? in->type == ET_U32 : (in->sub == ESB_AND || in->sub == ESB_OR) && in->type == ET_PRED);
  else if (in->opc == EM_BAR && in->sub)
    unsup = true;
  if ((in->opc == EM_BAR && !sync && !(in->mod & (EMM_ARRIVE | EMM_BRED))) || unsup) in->opc = EM_UNSUPPORTED;
}

/* mma's operands: {d0..d3}, {a0..a3}, {b0, b1}, {c0..c3}, every source a
 * register (exec reads the vectors without looking again). */
bool em_ptx_op_mma_operands(const EmIns *in) {
  static const uint8_t n[4] = {4, 4, 2, 4};
  if (in->nargs != 4) return false;
  for (int i = 0; i < 4; i++) {
    if (in->a[i].kind != EA_VEC || in->a[i].nvec != n[i]) return false;
    for (int j = 0; i > 0 && j < n[i]; j++)
      if (in->a[i].vec[j] < 0) return false;
  }
  return true;
}

const char *em_opc_name(EmOpc o) { return (unsigned)o <= EM_UNSUPPORTED ? opc_names[o] : "?"; }

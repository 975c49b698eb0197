/* exec.c - one instruction of a decoded PTX kernel on the CPU (issue 16):
 * the core instruction set; the asynchronous engines are in async.c and
 * matrix.c (which also computes the warp collectives), the scheduler
 * (CTAs, rounds, deadlocks, em_launch) in sched.c.
 *
 * Each thread has its own registers and program counter (PTX's model since
 * Volta: independent thread scheduling). A thread blocks at a barrier
 * (bar.sync) until the barrier's count has arrived, and at a warp
 * collective (shfl.sync, redux.sync, vote.sync; mma.sync, stmatrix and
 * ldmatrix over the whole warp; wgmma.mma_async over the warpgroup) until
 * every thread of its member mask stands at the same instruction; then the
 * collective is computed for all of them at once.
 *
 * Memory: generic and global addresses are the host's (checked against the
 * launch's ranges when it gives them); .shared addresses are offsets in
 * the CTA's window, which generic addresses reach at EM_SMEM_GENERIC;
 * parameters live at EM_PARAM_GENERIC. The emulator is sequentially
 * consistent, so fences and membar order nothing here; shared-memory
 * accesses, barriers and proxy fences also go to check.c, which checks
 * races, proxies and uninitialized reads against them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_int.h"

/* ---- numbers (em_type_bits, em_mask_of, em_f64_of: exec_int.h) ---- */

static bool is_signed(EmType t) { return t == ET_S8 || t == ET_S16 || t == ET_S32 || t == ET_S64; }
static bool is_float(EmType t) { return t == ET_F16 || t == ET_BF16 || t == ET_F32 || t == ET_F64; }

/* The scalar types cvt converts between (not .pred, not the packed pairs). */
static bool scalar_type(EmType t) { return t >= ET_B8 && t <= ET_F64 && t != ET_F16X2 && t != ET_BF16X2; }

/* Element i (a register or the vector's immediate) of an EA_VEC of w-bit
 * elements. */
static uint64_t vec_elem(const Cta *c, const Thr *t, const EmArg *a, int i, int w) {
  if (a->vec[i] >= 0) return t->r[a->vec[i]];
  EmArg k = *a;
  k.kind = EA_IMM;
  return em_src(c, t, &k, w == 64 ? ET_B64 : w == 32 ? (a->fimm ? ET_F32 : ET_B32) : w == 16 ? ET_B16 : ET_B8);
}
static int64_t sext(uint64_t v, int bits) { return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits); }

static float ftz(float x) { return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x; }

static uint64_t load_bits(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  memcpy(&v, p, (size_t)bytes);
  return v;
}

/* ---- arithmetic ---- */

/* The destination type of .wide: twice the width. */
static EmType wide_type(EmType t) {
  if (em_type_bits(t) == 16) return is_signed(t) ? ET_S32 : ET_U32;
  return is_signed(t) ? ET_S64 : ET_U64;
}

static uint64_t fbin(EmOpc op, EmType ty, uint32_t mod, uint64_t a, uint64_t b) {
  if (ty == ET_F64) {
    double x = em_f64_of(a), y = em_f64_of(b), r = 0;
    switch (op) {
    case EM_ADD: r = x + y; break;
    case EM_SUB: r = x - y; break;
    case EM_MUL: r = x * y; break;
    case EM_DIV: r = x / y; break;
    case EM_MIN: r = (mod & EMM_NAN) && (isnan(x) || isnan(y)) ? NAN : fmin(x, y); break;
    case EM_MAX: r = (mod & EMM_NAN) && (isnan(x) || isnan(y)) ? NAN : fmax(x, y); break;
    default: break;
    }
    return em_bits_of_f64(r);
  }
  float x = em_f32_of(a), y = em_f32_of(b), r = 0;
  if (mod & EMM_FTZ) x = ftz(x), y = ftz(y);
  switch (op) {
  case EM_ADD: r = x + y; break;
  case EM_SUB: r = x - y; break;
  case EM_MUL: r = x * y; break;
  case EM_DIV: r = (mod & EMM_APPROX) ? x * (1.0f / y) : x / y; break;
  case EM_MIN: r = (mod & EMM_NAN) && (isnan(x) || isnan(y)) ? NAN : fminf(x, y); break;
  case EM_MAX: r = (mod & EMM_NAN) && (isnan(x) || isnan(y)) ? NAN : fmaxf(x, y); break;
  default: break;
  }
  if (mod & EMM_FTZ) r = ftz(r);
  if (mod & EMM_SAT) r = isnan(r) ? 0.0f : r < 0 ? 0.0f : r > 1 ? 1.0f : r;
  return em_bits_of_f32(r);
}

static uint64_t ibin(Cta *c, Thr *t, const EmIns *in, uint64_t a, uint64_t b) {
  EmType ty = (EmType)in->type;
  int bits = em_type_bits(ty);
  bool s = is_signed(ty);
  a &= em_mask_of(bits); /* a register may hold more bits than the type reads */
  if (in->opc != EM_SHL && in->opc != EM_SHR) b &= em_mask_of(bits);
  int64_t sa = sext(a, bits), sb = sext(b, bits);
  if ((in->mod & EMM_SAT) && ty == ET_S32 && (in->opc == EM_ADD || in->opc == EM_SUB)) { /* add.sat.s32 clamps */
    int64_t r = in->opc == EM_ADD ? sa + sb : sa - sb;
    return (uint64_t)(r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r);
  }
  switch ((EmOpc)in->opc) {
  case EM_ADD: return a + b;
  case EM_SUB: return a - b;
  case EM_MUL:
    if ((in->mod & EMM_WIDE) && bits > 32) {
      em_fail(c, t, in, ".wide on a 64-bit type");
      return 0;
    }
    if (in->mod & EMM_WIDE) return s ? (uint64_t)(sa * sb) : a * b;
    if (in->mod & EMM_HI) {
      if (bits == 64) {
        if (s) return (uint64_t)(((__int128)sa * sb) >> 64);
        return (uint64_t)(((unsigned __int128)a * b) >> 64);
      }
      return s ? (uint64_t)((sa * sb) >> bits) : (a * b) >> bits;
    }
    return a * b;
  case EM_DIV:
  case EM_REM:
    if ((b & em_mask_of(bits)) == 0) {
      em_fail(c, t, in, "integer %s by zero", in->opc == EM_DIV ? "division" : "remainder");
      return 0;
    }
    if (s && sb == -1) return in->opc == EM_DIV ? 0 - a : 0; /* the minimum / -1 wraps, as the GPU does */
    if (in->opc == EM_DIV) return s ? (uint64_t)(sa / sb) : a / b;
    return s ? (uint64_t)(sa % sb) : a % b;
  case EM_MIN: return s ? (uint64_t)(sa < sb ? sa : sb) : (a < b ? a : b);
  case EM_MAX: return s ? (uint64_t)(sa > sb ? sa : sb) : (a > b ? a : b);
  case EM_AND: return a & b;
  case EM_OR: return a | b;
  case EM_XOR: return a ^ b;
  case EM_SHL: return b >= (uint64_t)bits ? 0 : a << b;
  case EM_SHR:
    if (s) return (uint64_t)(b >= (uint64_t)bits ? (sa < 0 ? -1 : 0) : sa >> b);
    return b >= (uint64_t)bits ? 0 : (a & em_mask_of(bits)) >> b;
  default: return 0;
  }
}

static bool compare(EmCmp cmp, EmType ty, uint64_t a, uint64_t b) {
  if (is_float(ty)) {
    double x, y;
    if (ty == ET_F64) x = em_f64_of(a), y = em_f64_of(b);
    else if (ty == ET_F16) x = em_f32_of_f16((uint16_t)a), y = em_f32_of_f16((uint16_t)b);
    else if (ty == ET_BF16) x = em_f32_of_bf16((uint16_t)a), y = em_f32_of_bf16((uint16_t)b);
    else x = em_f32_of(a), y = em_f32_of(b);
    bool un = isnan(x) || isnan(y);
    switch (cmp) {
    case EC_EQ: return !un && x == y;
    case EC_NE: return !un && x != y;
    case EC_LT: return !un && x < y;
    case EC_LE: return !un && x <= y;
    case EC_GT: return !un && x > y;
    case EC_GE: return !un && x >= y;
    case EC_EQU: return un || x == y;
    case EC_NEU: return un || x != y;
    case EC_LTU: return un || x < y;
    case EC_LEU: return un || x <= y;
    case EC_GTU: return un || x > y;
    case EC_GEU: return un || x >= y;
    case EC_NUM: return !un;
    case EC_NAN: return un;
    default: return false;
    }
  }
  int bits = em_type_bits(ty);
  int64_t sa = sext(a, bits), sb = sext(b, bits);
  uint64_t ua = a & em_mask_of(bits), ub = b & em_mask_of(bits);
  bool s = is_signed(ty);
  switch (cmp) {
  case EC_EQ: return ua == ub;
  case EC_NE: return ua != ub;
  case EC_LT: return s ? sa < sb : ua < ub;
  case EC_LE: return s ? sa <= sb : ua <= ub;
  case EC_GT: return s ? sa > sb : ua > ub;
  case EC_GE: return s ? sa >= sb : ua >= ub;
  case EC_LO: return ua < ub;
  case EC_LS: return ua <= ub;
  case EC_HI: return ua > ub;
  case EC_HS: return ua >= ub;
  default: return false;
  }
}

/* A value of type `from` (raw bits) as a double, or as an integer. */
static double as_double(EmType from, uint64_t v) {
  switch (from) {
  case ET_F64: return em_f64_of(v);
  case ET_F32: return em_f32_of(v);
  case ET_F16: return em_f32_of_f16((uint16_t)v);
  case ET_BF16: return em_f32_of_bf16((uint16_t)v);
  default: return is_signed(from) ? (double)sext(v, em_type_bits(from)) : (double)(v & em_mask_of(em_type_bits(from)));
  }
}

static double round_int(double x, uint32_t mod) {
  if (mod & EMM_RZI) return trunc(x);
  if (mod & EMM_RMI) return floor(x);
  if (mod & EMM_RPI) return ceil(x);
  return nearbyint(x); /* .rni and float -> int's default */
}

/* h, x rounded to nearest in a 16-bit float format (back: h's value), moved
 * one unit to x's other side where a directed mode wants that side: f16 and
 * bf16 are sign and magnitude, so the neighbour is one unit of magnitude. */
static uint16_t directed16(uint16_t h, float back, long double x, uint32_t mod) {
  long double b = back;
  bool step = !isnan(x) && b != x &&
              (((mod & EMM_RZ) && fabsl(b) > fabsl(x)) || ((mod & EMM_RM) && b > x) || ((mod & EMM_RP) && b < x));
  if (!step) return h;
  return (uint16_t)((b > x) != ((h & 0x8000u) != 0) ? h - 1 : h + 1);
}

static uint64_t convert(const EmIns *in, uint64_t v) {
  EmType to = (EmType)in->type, from = (EmType)in->type2;
  if (!is_float(to) && !is_float(from)) { /* integer widening/narrowing */
    int fb = em_type_bits(from);
    uint64_t x = is_signed(from) ? (uint64_t)sext(v, fb) : v & em_mask_of(fb);
    if (in->mod & EMM_SAT) {
      int tb = em_type_bits(to);
      int64_t lo = is_signed(to) ? -(int64_t)(1ull << (tb - 1)) : 0;
      uint64_t hi = is_signed(to) ? (1ull << (tb - 1)) - 1 : em_mask_of(tb);
      if (is_signed(from) && (int64_t)x < lo) x = (uint64_t)lo;
      else if (is_signed(from) ? (int64_t)x > 0 && (uint64_t)x > hi : x > hi) x = hi;
    }
    return x;
  }
  if (!is_float(to)) { /* float -> integer: round, saturate (NaN -> 0) as PTX does */
    double d = round_int(as_double(from, v), in->mod);
    int tb = em_type_bits(to);
    if (isnan(d)) return 0;
    if (is_signed(to)) { /* the bounds as powers of two: 2^63 - 1 is not a double */
      if (d >= ldexp(1, tb - 1)) return em_mask_of(tb) >> 1;
      if (d < -ldexp(1, tb - 1)) return 1ull << (tb - 1);
      return (uint64_t)(int64_t)d;
    }
    if (d <= 0) return 0;
    if (d >= ldexp(1, tb)) return em_mask_of(tb);
    return (uint64_t)d;
  }
  /* The source exactly (a long double holds every 64-bit integer and
   * double), then one rounding to the destination: to nearest by the C
   * conversion, the directed modes stepping one unit back where it went
   * the wrong way; 16-bit destinations through a float rounded to odd, so
   * that its second rounding is still a single one. */
  long double x = is_float(from) ? (long double)as_double(from, v)
                  : is_signed(from) ? (long double)sext(v, em_type_bits(from))
                                    : (long double)(v & em_mask_of(em_type_bits(from)));
  if (in->mod & (EMM_RNI | EMM_RZI | EMM_RMI | EMM_RPI)) x = round_int((double)x, in->mod);
  bool nan = isnan(x);
  if (to == ET_F64) {
    double d = (double)x;
    if (!nan && (long double)d != x) {
      if ((in->mod & EMM_RZ) && fabsl((long double)d) > fabsl(x)) d = nextafter(d, 0.0);
      if ((in->mod & EMM_RM) && (long double)d > x) d = nextafter(d, -INFINITY);
      if ((in->mod & EMM_RP) && (long double)d < x) d = nextafter(d, INFINITY);
    }
    if (in->mod & EMM_SAT) d = nan ? 0.0 : d < 0 ? 0.0 : d > 1 ? 1.0 : d;
    return em_bits_of_f64(d);
  }
  float f = (float)x;
  if (!nan && (long double)f != x) {
    if (to != ET_F32) { /* round to odd: truncate, then set the last bit */
      if (fabsl((long double)f) > fabsl(x)) f = nextafterf(f, 0.0f);
      f = em_f32_of(em_bits_of_f32(f) | 1);
    } else {
      if ((in->mod & EMM_RZ) && fabsl((long double)f) > fabsl(x)) f = nextafterf(f, 0.0f);
      if ((in->mod & EMM_RM) && (long double)f > x) f = nextafterf(f, -INFINITY);
      if ((in->mod & EMM_RP) && (long double)f < x) f = nextafterf(f, INFINITY);
    }
  }
  if (in->mod & EMM_FTZ) f = ftz(f);
  if (in->mod & EMM_SAT) f = isnan(f) ? 0.0f : f < 0 ? 0.0f : f > 1 ? 1.0f : f;
  switch (to) {
  case ET_F32: return em_bits_of_f32(f);
  case ET_F16: {
    uint16_t h = em_f16_of(f);
    return directed16(h, em_f32_of_f16(h), x, in->mod);
  }
  case ET_BF16: {
    uint16_t h = em_bf16_of(f);
    return directed16(h, em_f32_of_bf16(h), x, in->mod);
  }
  default: return 0;
  }
}

static uint64_t unary_f(const EmIns *in, uint64_t a) {
  EmType ty = (EmType)in->type;
  if (ty == ET_F64) {
    double x = em_f64_of(a), r = 0;
    switch ((EmOpc)in->opc) {
    case EM_NEG: r = -x; break;
    case EM_ABS: r = fabs(x); break;
    case EM_RCP: r = 1.0 / x; break;
    case EM_SQRT: r = sqrt(x); break;
    case EM_RSQRT: r = 1.0 / sqrt(x); break;
    default: break;
    }
    return em_bits_of_f64(r);
  }
  float x = em_f32_of(a), r = 0;
  if (in->mod & EMM_FTZ) x = ftz(x);
  switch ((EmOpc)in->opc) {
  case EM_NEG: r = -x; break;
  case EM_ABS: r = fabsf(x); break;
  case EM_EX2: r = exp2f(x); break;  /* ex2.approx: within 2 ulp on the GPU; the exact value here */
  case EM_LG2: r = log2f(x); break;
  case EM_RCP: r = 1.0f / x; break;
  case EM_SQRT: r = sqrtf(x); break;
  case EM_RSQRT: r = 1.0f / sqrtf(x); break;
  case EM_SIN: r = sinf(x); break;
  case EM_COS: r = cosf(x); break;
  case EM_TANH: r = tanhf(x); break;
  default: break;
  }
  if (in->mod & EMM_FTZ) r = ftz(r);
  return em_bits_of_f32(r);
}

/* ---- barriers ---- */

/* Barrier id complete (its count arrived, or every live thread for count
 * 0): release its waiters. */
static void release(Cta *c, int id) {
  int need = c->bar_count[id] ? c->bar_count[id] : c->live;
  if (c->bar_arrived[id] == 0 || c->bar_arrived[id] < need) return;
  c->bar_arrived[id] = 0;
  em_chk_bar_release(c, id);
  for (int i = 0; i < c->n; i++) {
    Thr *t = &c->t[i];
    if (t->state != T_BAR || t->bar != id) continue;
    t->state = T_RUN;
    const EmIns *in = &c->f->ins[t->pc - 1]; /* its bar.red (the pc moved past it at the arrival): the result */
    if (c->bar_red[id]) em_dst(t, &in->a[0], (EmType)in->type, c->bar_acc[id]);
  }
  c->bar_red[id] = 0;
}

static void release_all(Cta *c) {
  for (int id = 0; id < 16; id++) release(c, id);
}

/* ---- operand checks ---- */

/* The fewest operands each executable opcode reads (the parser checks only
 * their syntax): an instruction with fewer is refused, never indexed. */
static int min_args(EmOpc o) {
  switch (o) {
  case EM_NOP: case EM_MEMBAR: case EM_RET: case EM_EXIT: case EM_CBAR: case EM_GRIDDEP: return 0;
  case EM_BRA: case EM_BAR: return 1;
  case EM_MOV: case EM_NEG: case EM_ABS: case EM_NOT: case EM_CNOT: case EM_CVT: case EM_CVTA: case EM_EX2:
  case EM_LG2: case EM_RCP: case EM_SQRT: case EM_RSQRT: case EM_SIN: case EM_COS: case EM_TANH: case EM_LD:
  case EM_ST: case EM_RED: return 2;
  case EM_SELP: return 4;
  case EM_SHFL: return 5;
  case EM_MAD: case EM_FMA: case EM_BFE: case EM_PRMT: case EM_SHF: return 4;
  case EM_BFI: return 5;
  case EM_MMA: return 4;
  case EM_BULK_COMMIT: case EM_WG_COMMIT: return 0;
  case EM_BULK_WAIT: case EM_WG_WAIT: case EM_SETMAXNREG: return 1;
  case EM_MAPA: return 3;
  case EM_BULK_S2C: case EM_BULK_G2S: return 4;
  case EM_BULK_RED: return 3;
  case EM_MBAR_INIT: case EM_MBAR_ARRIVE: case EM_MBAR_EXPECT_TX: case EM_TMA_STORE: case EM_STMATRIX:
  case EM_LDMATRIX: return 2;
  case EM_WGMMA: return 7;
  case EM_TC_RELINQUISH: case EM_TC_WAIT: case EM_TC_FENCE: return 0;
  case EM_TC_COMMIT: return 1;
  case EM_CPA: return 3;
  case EM_CPA_COMMIT: case EM_CPA_WAIT: return 0;
  case EM_TC_ALLOC: case EM_TC_DEALLOC: case EM_TC_LD: case EM_TC_ST: return 2;
  case EM_TC_MMA: return 5;
  default: return 3; /* binary ops, setp, atom, redux, vote */
  }
}

/* The 16-bit float types and the packed pairs: arithmetic on them is not
 * emulated yet (conversions are) -- refused rather than run as f32. */
static bool half_type(EmType t) { return t == ET_F16 || t == ET_BF16 || t == ET_F16X2 || t == ET_BF16X2; }

/* x rounded once to f16 or bf16 (through a float rounded to odd, so that
 * its own rounding is not a second one). */
static uint16_t round16(double x, bool bf) {
  float f = (float)x;
  if (!isnan(x) && (double)f != x) {
    if (fabs((double)f) > fabs(x)) f = nextafterf(f, 0.0f);
    f = em_f32_of(em_bits_of_f32(f) | 1);
  }
  return bf ? em_bf16_of(f) : em_f16_of(f);
}

/* add sub mul fma min max neg abs on f16, bf16 and the packed pairs (round
 * to nearest): each half exactly in double (a product of two 16-bit
 * values is exact there), rounded once. False for what it does not run
 * (other opcodes, .sat, .ftz, directed roundings). */
static bool half_arith(Cta *c, Thr *t, const EmIns *in) {
  EmType ty = (EmType)in->type;
  bool bf = ty == ET_BF16 || ty == ET_BF16X2, fma2 = in->opc == EM_FMA, un = in->opc == EM_NEG || in->opc == EM_ABS;
  int halves = ty == ET_F16X2 || ty == ET_BF16X2 ? 2 : 1;
  if (in->mod & (EMM_SAT | EMM_FTZ | EMM_RZ | EMM_RM | EMM_RP)) return false;
  switch ((EmOpc)in->opc) {
  case EM_ADD: case EM_SUB: case EM_MUL: case EM_FMA: case EM_MIN: case EM_MAX: case EM_NEG: case EM_ABS: break;
  default: return false;
  }
  if (in->nargs < (fma2 ? 4 : un ? 2 : 3)) return false;
  uint64_t x = em_src(c, t, &in->a[1], ty), y = un ? 0 : em_src(c, t, &in->a[2], ty),
           z = fma2 ? em_src(c, t, &in->a[3], ty) : 0, r = 0;
  for (int h = 0; h < halves; h++) {
    uint16_t hx = (uint16_t)(x >> 16 * h), hy = (uint16_t)(y >> 16 * h), hz = (uint16_t)(z >> 16 * h), o;
    double dx = bf ? em_f32_of_bf16(hx) : em_f32_of_f16(hx), dy = bf ? em_f32_of_bf16(hy) : em_f32_of_f16(hy),
           dz = bf ? em_f32_of_bf16(hz) : em_f32_of_f16(hz);
    bool nan = (in->mod & EMM_NAN) && (isnan(dx) || isnan(dy));
    switch ((EmOpc)in->opc) {
    case EM_NEG: o = hx ^ 0x8000u; break;
    case EM_ABS: o = hx & 0x7fffu; break;
    case EM_ADD: o = round16(dx + dy, bf); break;
    case EM_SUB: o = round16(dx - dy, bf); break;
    case EM_MUL: o = round16(dx * dy, bf); break;
    case EM_FMA: o = round16(fma(dx, dy, dz), bf); break;
    case EM_MIN: o = nan ? 0x7fff : round16(fmin(dx, dy), bf); break;
    default: o = nan ? 0x7fff : round16(fmax(dx, dy), bf); break;
    }
    r |= (uint64_t)o << 16 * h;
  }
  em_dst(t, &in->a[0], halves == 2 ? ET_B32 : ET_B16, r);
  return true;
}

/* add sub mul fma .f32x2 (sm_100: LLVM pairs f32 arithmetic so): each f32
 * half as the f32 instruction computes it, round to nearest, .ftz flushing
 * subnormal inputs and results. False for what it does not run (other
 * opcodes, .sat, directed roundings). */
static bool f32x2_arith(Cta *c, Thr *t, const EmIns *in) {
  bool fma2 = in->opc == EM_FMA, flush = in->mod & EMM_FTZ;
  if (in->mod & (EMM_SAT | EMM_RZ | EMM_RM | EMM_RP)) return false;
  switch ((EmOpc)in->opc) {
  case EM_ADD: case EM_SUB: case EM_MUL: case EM_FMA: break;
  default: return false;
  }
  if (in->nargs < (fma2 ? 4 : 3)) return false;
  uint64_t x = em_src(c, t, &in->a[1], ET_B64), y = em_src(c, t, &in->a[2], ET_B64),
           z = fma2 ? em_src(c, t, &in->a[3], ET_B64) : 0, r = 0;
  for (int h = 0; h < 2; h++) {
    float fx = em_f32_of((uint32_t)(x >> 32 * h)), fy = em_f32_of((uint32_t)(y >> 32 * h)),
          fz = em_f32_of((uint32_t)(z >> 32 * h)), o;
    if (flush) fx = ftz(fx), fy = ftz(fy), fz = ftz(fz);
    switch ((EmOpc)in->opc) {
    case EM_ADD: o = fx + fy; break;
    case EM_SUB: o = fx - fy; break;
    case EM_MUL: o = fx * fy; break;
    default: o = fmaf(fx, fy, fz); break;
    }
    if (flush) o = ftz(o);
    r |= (em_bits_of_f32(o) & 0xffffffffu) << 32 * h;
  }
  em_dst(t, &in->a[0], ET_B64, r);
  return true;
}

/* add/sub.f32.X d, a, c and fma.f32.X d, a, b, c (X = f16 or bf16, the
 * sources before c; sm_100's mixed precision): the 16-bit sources widened
 * exactly, then the f32 instruction, rounded once to nearest. False for
 * what it does not run (.sat, directed roundings). */
static bool mixed_arith(Cta *c, Thr *t, const EmIns *in) {
  bool fma2 = in->opc == EM_FMA, bf = in->type2 == ET_BF16;
  EmType h = (EmType)in->type2;
  if (in->mod & (EMM_SAT | EMM_FTZ | EMM_RZ | EMM_RM | EMM_RP) || in->nargs < (fma2 ? 4 : 3)) return false;
  uint64_t x = em_src(c, t, &in->a[1], h), y = em_src(c, t, &in->a[2], fma2 ? h : ET_F32),
           z = fma2 ? em_src(c, t, &in->a[3], ET_F32) : 0;
  float fx = bf ? em_f32_of_bf16((uint16_t)x) : em_f32_of_f16((uint16_t)x), o;
  if (fma2) {
    float fy = bf ? em_f32_of_bf16((uint16_t)y) : em_f32_of_f16((uint16_t)y);
    o = fmaf(fx, fy, em_f32_of(z));
  } else {
    o = in->opc == EM_ADD ? fx + em_f32_of(y) : fx - em_f32_of(y);
  }
  em_dst(t, &in->a[0], ET_F32, em_bits_of_f32(o) & 0xffffffffu);
  return true;
}

/* Write a loaded or converted value into register `reg` at the width the
 * register was declared with, sign-extending signed values (PTX allows a
 * destination wider than the instruction's type). */
static void dst_wide(const Cta *c, Thr *t, const EmArg *a, EmType ty, uint64_t v) {
  if (a->kind != EA_REG) return;
  int bits = em_type_bits(ty), rb = em_type_bits((EmType)c->f->reg_type[a->reg]);
  if (rb < bits || c->f->reg_type[a->reg] == ET_NONE) rb = bits;
  if (is_signed(ty)) v = (uint64_t)sext(v, bits);
  t->r[a->reg] = v & em_mask_of(rb);
}

/* ---- one instruction ---- */

void em_step(Cta *c, Thr *t) {
  const EmIns *in = &c->f->ins[t->pc];
  if (in->guard >= 0 && (t->r[in->guard] != 0) == in->guard_neg) { /* predicated off */
    t->pc++;
    return;
  }
  EmType ty = (EmType)in->type;
  const EmArg *a = in->a;
  if (in->opc != EM_UNSUPPORTED && in->nargs < min_args((EmOpc)in->opc)) {
    em_fail(c, t, in, "%s with %d operands", em_opc_name((EmOpc)in->opc), in->nargs);
    return;
  }
  if (half_type(ty) && in->opc != EM_CVT && in->opc != EM_MOV && in->opc != EM_LD && in->opc != EM_ST &&
      in->opc != EM_SELP && in->opc != EM_MMA && !(in->opc == EM_SETP && (ty == ET_F16 || ty == ET_BF16))) {
    if (!half_arith(c, t, in)) {
      em_fail(c, t, in, "the emulator cannot run this 16-bit float arithmetic yet");
      return;
    }
    t->pc++;
    return;
  }
  if (ty == ET_F32 && (in->type2 == ET_F16 || in->type2 == ET_BF16) &&
      (in->opc == EM_ADD || in->opc == EM_SUB || in->opc == EM_FMA)) {
    if (!mixed_arith(c, t, in)) {
      em_fail(c, t, in, "the emulator cannot run this mixed-precision instruction yet");
      return;
    }
    t->pc++;
    return;
  }
  if (ty == ET_F32X2 && in->opc != EM_MOV) {
    if (!f32x2_arith(c, t, in)) {
      em_fail(c, t, in, "the emulator cannot run this f32x2 instruction yet");
      return;
    }
    t->pc++;
    return;
  }
  switch ((EmOpc)in->opc) {
  case EM_NOP: break;
  case EM_GRIDDEP: /* launches run one after another here: the previous grid is done; launch_dependents a no-op */
    if (!(in->mod & EMM_ARRIVE)) t->gdc_waited = true;
    break;
  case EM_MEMBAR:
    em_chk_fence(c, t, in);
    break;
  case EM_MOV:
    if (a[1].kind == EA_VEC) { /* pack: mov.b32 %r, {%h0, %h1} */
      int n = a[1].nvec, w = em_type_bits(ty) / (n ? n : 1);
      uint64_t v = 0;
      for (int i = 0; i < n; i++)
        if (a[1].vec[i] >= 0 || a[1].vec[i] == EM_VEC_IMM)
          v |= (vec_elem(c, t, &a[1], i, w) & em_mask_of(w)) << (w * i);
      em_dst(t, &a[0], ty, v);
    } else if (a[0].kind == EA_VEC) { /* unpack: mov.b32 {%h0, %h1}, %r */
      int n = a[0].nvec, w = em_type_bits(ty) / (n ? n : 1);
      uint64_t v = em_src(c, t, &a[1], ty);
      for (int i = 0; i < n; i++)
        if (a[0].vec[i] >= 0) t->r[a[0].vec[i]] = (v >> (w * i)) & em_mask_of(w);
    } else {
      em_dst(t, &a[0], ty, em_src(c, t, &a[1], ty));
    }
    break;
  case EM_ADD: case EM_SUB: case EM_MUL: case EM_DIV: case EM_REM: case EM_MIN: case EM_MAX:
  case EM_AND: case EM_OR: case EM_XOR: case EM_SHL: case EM_SHR: {
    EmType sty = (in->opc == EM_SHL || in->opc == EM_SHR) ? ET_U32 : ty;
    if (ty == ET_PRED) { /* and.pred, or.pred, xor.pred */
      uint64_t x = em_src(c, t, &a[1], ET_PRED), y = em_src(c, t, &a[2], ET_PRED);
      em_dst(t, &a[0], ET_PRED, in->opc == EM_AND ? (x & y) : in->opc == EM_OR ? (x | y) : (x ^ y));
      break;
    }
    bool three = in->nargs > 3; /* sm_100's min/max.f32 d, a, b, c: of all three */
    if (three && !((in->opc == EM_MIN || in->opc == EM_MAX) && ty == ET_F32 && in->nargs == 4)) {
      em_fail(c, t, in, "%s with %d operands", em_opc_name((EmOpc)in->opc), in->nargs);
      return;
    }
    uint64_t x = em_src(c, t, &a[1], ty), y = em_src(c, t, &a[2], sty);
    uint64_t r = is_float(ty) ? fbin((EmOpc)in->opc, ty, in->mod, x, y) : ibin(c, t, in, x, y);
    if ((in->mod & EMM_RELU) && (int32_t)r < 0) r = 0; /* min/max.relu.s32 */
    if (three) r = fbin((EmOpc)in->opc, ty, in->mod, r, em_src(c, t, &a[3], ty));
    em_dst(t, &a[0], (in->mod & EMM_WIDE) ? wide_type(ty) : ty, r);
    break;
  }
  case EM_MAD:
  case EM_FMA: {
    uint64_t x = em_src(c, t, &a[1], ty), y = em_src(c, t, &a[2], ty);
    if (is_float(ty)) {
      uint64_t z = em_src(c, t, &a[3], ty), r;
      if (ty == ET_F64) r = em_bits_of_f64(fma(em_f64_of(x), em_f64_of(y), em_f64_of(z)));
      else {
        float fx = em_f32_of(x), fy = em_f32_of(y), fz = em_f32_of(z);
        if (in->mod & EMM_FTZ) fx = ftz(fx), fy = ftz(fy), fz = ftz(fz);
        float fr = fmaf(fx, fy, fz);
        if (in->mod & EMM_FTZ) fr = ftz(fr);
        if (in->mod & EMM_SAT) fr = isnan(fr) ? 0.0f : fr < 0 ? 0.0f : fr > 1 ? 1.0f : fr;
        r = em_bits_of_f32(fr);
      }
      em_dst(t, &a[0], ty, r);
    } else {
      EmIns mul = *in;
      mul.opc = EM_MUL;
      uint64_t p = ibin(c, t, &mul, x, y);
      EmType wt = (in->mod & EMM_WIDE) ? wide_type(ty) : ty;
      em_dst(t, &a[0], wt, p + em_src(c, t, &a[3], wt));
    }
    break;
  }
  case EM_NEG: case EM_ABS: case EM_NOT: case EM_CNOT: case EM_EX2: case EM_LG2: case EM_RCP: case EM_SQRT:
  case EM_RSQRT: case EM_SIN: case EM_COS: case EM_TANH: {
    uint64_t x = em_src(c, t, &a[1], ty), r;
    if (ty == ET_PRED && in->opc == EM_NOT) r = !x;
    else if (in->opc == EM_NOT) r = ~x;
    else if (in->opc == EM_CNOT) r = (x & em_mask_of(em_type_bits(ty))) == 0;
    else if (is_float(ty)) r = unary_f(in, x);
    else if (in->opc == EM_NEG) r = 0 - x;
    else if (in->opc == EM_ABS) {
      int64_t s = sext(x, em_type_bits(ty));
      r = s < 0 ? 0 - (uint64_t)s : (uint64_t)s;
    } else {
      em_fail(c, t, in, "%s on an integer type", em_opc_name((EmOpc)in->opc));
      return;
    }
    em_dst(t, &a[0], ty, r);
    break;
  }
  case EM_SELP: {
    uint64_t p = em_src(c, t, &a[3], ET_PRED);
    em_dst(t, &a[0], ty, em_src(c, t, p ? &a[1] : &a[2], ty));
    break;
  }
  case EM_SETP: {
    /* setp.cmp[.bop] p[|q], a, b[, c]: t = a cmp b; p = t bop c; q = !t bop c */
    bool two = in->nargs == (in->bop != EB_NONE ? 5 : 4);
    int s0 = two ? 2 : 1;
    uint64_t x = em_src(c, t, &a[s0], ty), y = em_src(c, t, &a[s0 + 1], ty);
    if (ty == ET_F16 || ty == ET_BF16) { /* setp.lt.bf16: compared as the f32 values they are exactly */
      x = em_bits_of_f32(ty == ET_BF16 ? em_f32_of_bf16((uint16_t)x) : em_f32_of_f16((uint16_t)x));
      y = em_bits_of_f32(ty == ET_BF16 ? em_f32_of_bf16((uint16_t)y) : em_f32_of_f16((uint16_t)y));
      ty = ET_F32;
    }
    if ((in->mod & EMM_FTZ) && ty == ET_F32) x = em_bits_of_f32(ftz(em_f32_of(x))), y = em_bits_of_f32(ftz(em_f32_of(y)));
    bool r = compare((EmCmp)in->cmp, ty, x, y), q = !r;
    if (in->bop != EB_NONE) {
      if (in->nargs < s0 + 3) {
        em_fail(c, t, in, "setp.%s without its predicate operand", in->bop == EB_AND ? "and" : in->bop == EB_OR ? "or" : "xor");
        return;
      }
      bool cc = em_src(c, t, &a[s0 + 2], ET_PRED);
      r = in->bop == EB_AND ? (r && cc) : in->bop == EB_OR ? (r || cc) : (r != cc);
      q = in->bop == EB_AND ? (q && cc) : in->bop == EB_OR ? (q || cc) : (q != cc);
    }
    em_dst(t, &a[0], ET_PRED, r);
    if (two) em_dst(t, &a[1], ET_PRED, q);
    break;
  }
  case EM_CVT:
    if (ty == ET_BF16X2 || ty == ET_F16X2) { /* cvt.rn.bf16x2.f32 d, a, b: a into the upper half, b the lower */
      if (in->type2 != ET_F32) {
        em_fail(c, t, in, "the emulator cannot run this instruction yet");
        return;
      }
      EmIns one = *in; /* each half as a scalar cvt, its rounding mode kept */
      one.type = ty == ET_BF16X2 ? ET_BF16 : ET_F16;
      uint64_t hi = convert(&one, em_src(c, t, &a[1], ET_F32)), lo = convert(&one, em_src(c, t, &a[2], ET_F32));
      em_dst(t, &a[0], ET_B32, (hi & 0xffffu) << 16 | (lo & 0xffffu));
      break;
    }
    if (!scalar_type(ty) || !scalar_type((EmType)in->type2)) { /* never a silent 0 */
      em_fail(c, t, in, "the emulator cannot run this conversion yet");
      return;
    }
    dst_wide(c, t, &a[0], ty, convert(in, em_src(c, t, &a[1], (EmType)in->type2)));
    break;
  case EM_CVTA: {
    uint64_t x = em_src(c, t, &a[1], ET_U64);
    if (in->space == ES_SHARED) x = (in->mod & EMM_TO) ? x - EM_SMEM_GENERIC : x + EM_SMEM_GENERIC;
    em_dst(t, &a[0], ty, x);
    break;
  }
  case EM_BFE: {
    int bits = em_type_bits(ty);
    uint64_t x = em_src(c, t, &a[1], ty);
    unsigned pos = (unsigned)em_src(c, t, &a[2], ET_U32) & 0xff, len = (unsigned)em_src(c, t, &a[3], ET_U32) & 0xff;
    uint64_t r = 0;
    bool sbit = false;
    for (unsigned i = 0; i < (unsigned)bits; i++) {
      if (i < len) {
        unsigned p = pos + i;
        bool b = p < (unsigned)bits ? (x >> p) & 1 : (is_signed(ty) ? (x >> (bits - 1)) & 1 : 0);
        r |= (uint64_t)b << i;
        sbit = b;
      } else if (is_signed(ty) && len > 0) {
        r |= (uint64_t)sbit << i;
      }
    }
    em_dst(t, &a[0], ty, r);
    break;
  }
  case EM_BFI: {
    int bits = em_type_bits(ty);
    uint64_t f = em_src(c, t, &a[1], ty), b = em_src(c, t, &a[2], ty);
    unsigned pos = (unsigned)em_src(c, t, &a[3], ET_U32) & 0xff, len = (unsigned)em_src(c, t, &a[4], ET_U32) & 0xff;
    for (unsigned i = 0; i < len && pos + i < (unsigned)bits; i++)
      b = (b & ~(1ull << (pos + i))) | (((f >> i) & 1) << (pos + i));
    em_dst(t, &a[0], ty, b);
    break;
  }
  case EM_PRMT: { /* default mode: each selector nibble picks a byte of {b, a} (bit 3: replicate its sign) */
    uint64_t x = em_src(c, t, &a[1], ET_B32), y = em_src(c, t, &a[2], ET_B32);
    uint32_t sel = (uint32_t)em_src(c, t, &a[3], ET_B32);
    uint64_t bytes = (x & 0xffffffffu) | (y << 32), r = 0;
    for (int i = 0; i < 4; i++) {
      unsigned s = (sel >> (4 * i)) & 0xf;
      uint8_t v = (uint8_t)(bytes >> (8 * (s & 7)));
      if (s & 8) v = (v & 0x80) ? 0xff : 0;
      r |= (uint64_t)v << (8 * i);
    }
    em_dst(t, &a[0], ET_B32, r);
    break;
  }
  case EM_SHF: { /* the 64-bit pair {b (high) : a (low)} shifted by c (.wrap: c mod 32, .clamp: at most 32) */
    uint64_t pair = (em_src(c, t, &a[1], ET_B32) & 0xffffffffu) | (em_src(c, t, &a[2], ET_B32) << 32);
    uint32_t n = (uint32_t)em_src(c, t, &a[3], ET_U32);
    n = (in->rank & 2) ? (n > 32 ? 32 : n) : n & 31;
    em_dst(t, &a[0], ET_B32, (in->rank & 1) ? (pair >> n) & 0xffffffffu : ((pair << n) >> 32) & 0xffffffffu);
    break;
  }
  case EM_LD:
  case EM_ST: {
    bool ld = in->opc == EM_LD;
    const EmArg *ad = ld ? &a[1] : &a[0], *v = ld ? &a[0] : &a[1];
    int eb = em_type_bits(ty) / 8, n = in->vec ? in->vec : 1;
    if (eb < 1) eb = 1;
    if (n > 4 || (n > 1 && (v->kind != EA_VEC || v->nvec != n)) || (n == 1 && v->kind == EA_VEC)) {
      em_fail(c, t, in, "the vector operand does not match .v%d", n);
      return;
    }
    uint64_t addr;
    if (!em_addr_of(c, t, in, ad, &addr)) return;
    EmSpace sp = (EmSpace)in->space;
    if (!ld && sp == ES_PARAM) {
      em_fail(c, t, in, "a store to the kernel's parameters");
      return;
    }
    uint8_t *p = em_mem(c, t, in, sp == ES_PARAM ? ES_GENERIC : sp, addr, (size_t)(eb * n));
    if (!p) return;
    if (c->chk && p >= c->smem && p < c->smem + c->smem_size &&
        !(ld ? em_chk_read : em_chk_write)(c, t, in, (uint32_t)(p - c->smem), (uint32_t)(eb * n)))
      return;
    for (int i = 0; i < n; i++) {
      EmArg one = *v;
      if (v->kind == EA_VEC) {
        one.kind = v->vec[i] >= 0 ? EA_REG : v->vec[i] == EM_VEC_IMM ? EA_IMM : EA_SINK;
        one.reg = v->vec[i];
        if (ld && one.kind == EA_IMM) {
          em_fail(c, t, in, "loads into an immediate");
          return;
        }
      }
      if (ld) {
        dst_wide(c, t, &one, ty == ET_PRED ? ET_B8 : ty, load_bits(p + i * eb, eb));
      } else {
        uint64_t x = em_src(c, t, &one, ty);
        memcpy(p + i * eb, &x, (size_t)eb);
      }
    }
    if (ld && (in->mod & EMM_SYNCLD) && sp != ES_SHARED) { /* a spin on global memory? */
      uint64_t x = load_bits(p, eb < 8 ? eb : 8);
      if (addr != t->spin_addr || x != t->spin_val) t->spin_addr = addr, t->spin_val = x, t->spin_n = 0;
      if (++t->spin_n >= EM_SPIN_LOADS) { /* the same value again and again: let other CTAs run */
        t->pc++;
        t->state = T_SPIN;
        return;
      }
    }
    break;
  }
  case EM_ATOM:
  case EM_RED: {
    bool at = in->opc == EM_ATOM;
    const EmArg *ad = at ? &a[1] : &a[0];
    int eb = em_type_bits(ty) / 8;
    uint64_t addr;
    if (eb < 1 || !em_addr_of(c, t, in, ad, &addr)) return;
    if (in->vec > 1) { /* red.global.add.v2/v4.f32: element-wise, one word after another */
      const EmArg *v = &a[1];
      if (at || in->sub != ESB_ADD || ty != ET_F32 || in->vec > 4 || v->kind != EA_VEC || v->nvec != in->vec) {
        em_fail(c, t, in, "unsupported vector atomic (red.add.v2/v4.f32 only)");
        return;
      }
      uint8_t *p = em_mem(c, t, in, (EmSpace)in->space, addr, (size_t)(4 * in->vec));
      if (!p) return;
      for (int i = 0; i < in->vec; i++) {
        EmArg one = *v;
        one.kind = v->vec[i] >= 0 ? EA_REG : v->vec[i] == EM_VEC_IMM ? EA_IMM : EA_SINK;
        one.reg = v->vec[i];
        uint64_t r = fbin(EM_ADD, ty, 0, load_bits(p + 4 * i, 4), em_src(c, t, &one, ty));
        memcpy(p + 4 * i, &r, 4);
      }
      break;
    }
    uint8_t *p = em_mem(c, t, in, (EmSpace)in->space, addr, (size_t)eb);
    if (!p) return;
    if (c->chk && p >= c->smem && p < c->smem + c->smem_size) em_chk_atomic(c, (uint32_t)(p - c->smem), (uint32_t)eb);
    uint64_t old = load_bits(p, eb), b = em_src(c, t, &a[at ? 2 : 1], ty), r = old;
    switch (in->sub) {
    case ESB_ADD: r = is_float(ty) ? fbin(EM_ADD, ty, 0, old, b) : old + b; break;
    case ESB_MIN: case ESB_MAX: {
      EmIns m = *in;
      m.opc = in->sub == ESB_MIN ? EM_MIN : EM_MAX;
      r = is_float(ty) ? fbin((EmOpc)m.opc, ty, 0, old, b) : ibin(c, t, &m, old, b);
      break;
    }
    case ESB_AND: r = old & b; break;
    case ESB_OR: r = old | b; break;
    case ESB_XOR: r = old ^ b; break;
    case ESB_EXCH: r = b; break;
    case ESB_CAS: r = (old & em_mask_of(eb * 8)) == (b & em_mask_of(eb * 8)) ? em_src(c, t, &a[3], ty) : old; break;
    case ESB_INC: r = old >= b ? 0 : old + 1; break;
    case ESB_DEC: r = (old == 0 || old > b) ? b : old - 1; break;
    default: em_fail(c, t, in, "unsupported atomic operation"); return;
    }
    memcpy(p, &r, (size_t)eb);
    if (at) em_dst(t, &a[0], ty, old);
    break;
  }
  case EM_BRA:
    if (in->sub == ESB_IDX) { /* brx.idx %r, TABLE: TABLE is a branch over its targets' branches (ptx.c) */
      const EmIns *over = in->nargs == 2 && a[1].kind == EA_LABEL ? &c->f->ins[a[1].imm] : NULL;
      uint64_t idx = em_src(c, t, &a[0], ET_U32);
      int64_t n = over && over->opc == EM_BRA && over->sub == 0 && over->guard < 0 ? over->a[0].imm - a[1].imm - 1 : -1;
      if (n < 0) { em_fail(c, t, in, "brx.idx: its label is not a .branchtargets table"); return; }
      if ((int64_t)idx >= n) { em_fail(c, t, in, "brx.idx: index %llu outside its table of %lld targets",
                                       (unsigned long long)idx, (long long)n); return; }
      t->pc = (int)(a[1].imm + 1 + (int64_t)idx);
      return;
    }
    t->pc = (int)a[0].imm;
    return;
  case EM_RET:
  case EM_EXIT:
    t->state = T_DONE;
    c->live--;
    release_all(c); /* a barrier over the whole CTA no longer waits for it */
    em_clu_exit(c, t); /* nor does barrier.cluster */
    return;
  case EM_BAR: {
    /* count 0 stands for "every thread of the CTA that has not exited"; bar.red: d, a [, b], {!}c */
    bool red = in->mod & EMM_BRED;
    const EmArg *b = red ? a + 1 : a;
    int nb = red ? in->nargs - 2 : in->nargs;
    if (red && nb < 1) {
      em_fail(c, t, in, "bar.red with %d operands: d, a [, b], c", in->nargs);
      return;
    }
    int id = b[0].kind == EA_NONE ? 0 : (int)em_src(c, t, &b[0], ET_U32);
    int count = nb > 1 ? (int)em_src(c, t, &b[1], ET_U32) : 0;
    if (id < 0 || id > 15) {
      em_fail(c, t, in, "barrier id %d outside 0..15", id);
      return;
    }
    if (nb > 1 && (count <= 0 || count > c->n || count % 32)) {
      em_fail(c, t, in, "barrier %d with a thread count of %d (the CTA has %d threads)", id, count, c->n);
      return;
    }
    if (c->bar_arrived[id] > 0 && c->bar_count[id] != count) {
      em_fail(c, t, in, "barrier: barrier %d: thread counts disagree (%d and %d)", id, c->bar_count[id], count);
      return;
    }
    if (c->bar_arrived[id] > 0 && c->bar_red[id] != (red ? in->sub : 0)) {
      em_fail(c, t, in, "barrier: barrier %d: threads meet at it with different reductions (bar.red and bar.sync, or "
              "two bar.red operations)", id);
      return;
    }
    if (red) { /* .popc counts the threads whose predicate is true; .and / .or combine them */
      uint64_t p = em_src(c, t, &a[in->nargs - 1], ET_PRED) != 0;
      if (!c->bar_arrived[id]) c->bar_acc[id] = in->sub == ESB_AND;
      c->bar_acc[id] = in->sub == ESB_ADD ? c->bar_acc[id] + p : in->sub == ESB_AND ? c->bar_acc[id] & p : c->bar_acc[id] | p;
    }
    c->bar_red[id] = red ? in->sub : 0;
    c->bar_count[id] = count;
    c->bar_arrived[id]++;
    em_chk_bar_arrive(c, t, id);
    t->pc++;
    if (!(in->mod & EMM_ARRIVE)) {
      t->state = T_BAR;
      t->bar = id;
    }
    release(c, id);
    return;
  }
  case EM_SHFL:
  case EM_REDUX:
  case EM_VOTE: {
    /* shfl.sync d[, p], a, b, c, mask; redux.sync d, a, mask; vote.sync d, a, mask */
    int last = in->nargs - 1;
    t->cmask = (uint32_t)em_src(c, t, &a[last], ET_B32);
    t->cwg = false;
    if (!(t->cmask >> t->lane & 1)) {
      em_fail(c, t, in, "the member mask 0x%08x leaves out the executing lane %u", t->cmask, t->lane);
      return;
    }
    if (in->opc == EM_SHFL) {
      int ai = in->nargs == 6 ? 2 : 1;
      t->cval = em_src(c, t, &a[ai], ET_B32);
      t->cval2 = (em_src(c, t, &a[ai + 1], ET_B32) & 0xffffffffu) | (em_src(c, t, &a[ai + 2], ET_B32) << 32);
    } else {
      t->cval = em_src(c, t, &a[1], in->opc == EM_VOTE ? ET_PRED : ET_B32);
    }
    t->state = T_COLL;
    if (em_matrix_coll_ready(c, t)) em_matrix_coll_finish(c, t, in);
    return;
  }
  case EM_MMA: /* the whole warp, like a collective over a full mask (.aligned: every lane at this mma) */
  case EM_STMATRIX:
  case EM_LDMATRIX:
  case EM_WGMMA: /* the whole warpgroup */
    t->cmask = 0xffffffffu;
    t->cwg = in->opc == EM_WGMMA;
    t->state = T_COLL;
    if (em_matrix_coll_ready(c, t)) em_matrix_coll_finish(c, t, in);
    return;
  case EM_MBAR_INIT: case EM_MBAR_ARRIVE: case EM_MBAR_EXPECT_TX: case EM_MBAR_WAIT: case EM_TMA_LOAD:
  case EM_TMA_STORE: case EM_BULK_COMMIT: case EM_BULK_WAIT: case EM_BULK_S2C: case EM_BULK_RED: case EM_BULK_G2S:
    em_async_step(c, t, in);
    return;
  case EM_SETMAXNREG: /* a warpgroup collective (.sync.aligned) on the register pool (regs.c) */
    if (a[0].imm < 24 || a[0].imm > 256 || a[0].imm % 8) {
      em_fail(c, t, in, "setmaxnreg to %lld registers: a multiple of 8 from 24 to 256", (long long)a[0].imm);
      return;
    }
    if (!c->reg_launch) break; /* no register cap: ptxas ignores setmaxnreg (C7508), so does the pool */
    if (t->warp / 4 * 128 + 128 > (unsigned)c->n) {
      em_fail(c, t, in, "setmaxnreg in warpgroup %u, which the CTA's %d threads leave incomplete (it is .sync.aligned "
              "over the warpgroup's 128 threads)", t->warp / 4, c->n);
      return;
    }
    t->cmask = 0xffffffffu;
    t->cwg = true;
    t->state = T_COLL;
    if (em_matrix_coll_ready(c, t)) em_matrix_coll_finish(c, t, in);
    return;
  case EM_WG_COMMIT:
  case EM_WG_WAIT:
    em_matrix_step(c, t, in);
    return;
  case EM_TC_ALLOC: case EM_TC_DEALLOC: case EM_TC_RELINQUISH: case EM_TC_LD: case EM_TC_ST:
    t->cmask = 0xffffffffu; /* warp collectives (.sync.aligned): every lane */
    t->cwg = false;
    t->state = T_COLL;
    if (em_matrix_coll_ready(c, t)) em_matrix_coll_finish(c, t, in);
    return;
  case EM_TC_MMA: case EM_TC_COMMIT: case EM_TC_WAIT: case EM_TC_FENCE:
    em_tc_step(c, t, in);
    return;
  case EM_CPA: case EM_CPA_COMMIT: case EM_CPA_WAIT:
    em_cpa_step(c, t, in);
    return;
  case EM_CBAR: case EM_MAPA:
    em_clu_step(c, t, in);
    return;
  case EM_UNSUPPORTED:
  default:
    em_fail(c, t, in, "the emulator cannot run this instruction yet");
    return;
  }
  t->pc++;
}


/* lower_math.c - the math builtins' lowering (lower.c's elementwise calls
 * here): exp exp2 log log2 rsqrt tanh sin cos erf rcp fdiv.
 *
 * Transcendentals run in f32 on the fast approximate PTX instructions (as
 * Triton does); f16/bf16 operands are widened first and the result narrowed
 * back; f64 is refused in sema (sm_math_f32_only). Each function's precision
 * is in docs/language.md (section 8, "Math builtins"), measured by
 * tests/unit/test_emu_math.c.
 *
 *   exp2        ex2.approx.ftz.f32       (exp: x * log2(e) first)
 *   log2        lg2.approx.f32           (log: times ln 2 after)
 *   rsqrt       rsqrt.approx.f32
 *   tanh        tanh.approx.f32          (llvm.tanh with afn: LLVM 22 has no
 *                                         llvm.nvvm.tanh.approx.f32 any more)
 *   sin, cos    sin/cos.approx.ftz.f32
 *   rcp         rcp.approx.ftz.f32
 *   fdiv        div.full.f32             (2 ulp over the whole range; not
 *                                         div.approx.f32, whose 2 ulp hold
 *                                         only for |b| in [2^-126, 2^126]:
 *                                         above, a / b is 0)
 *   erf         no instruction: erf_f32 below (fma, one ex2.approx) */
#include "lower.h"
#include <string.h>

/* An intrinsic call with the afn fast-math flag (approximate functions
 * allowed): the NVPTX backend selects tanh.approx.f32 for llvm.tanh so. */
static MlirValue intrin_afn(Lw *L, const char *intrin, MlirValue x) {
  MlirNamedAttribute at[4] = {
      lw_attr(L, "intrin", mlirStringAttrGet(L->mc, mlirStringRefCreateFromCString(intrin))),
      lw_attr(L, "operandSegmentSizes", lw_pattr(L, "array<i32: 1, 0>")),
      lw_attr(L, "op_bundle_sizes", lw_pattr(L, "array<i32>")),
      lw_attr(L, "fastmathFlags", lw_pattr(L, "#llvm.fastmath<afn>")),
  };
  return lw_op1(L, "llvm.call_intrinsic", 1, &x, L->f32, 4, at);
}

static MlirValue fconst(Lw *L, double v) { return lw_float(L, L->f32, v); }

static MlirValue fma3(Lw *L, MlirValue a, MlirValue b, MlirValue c) {
  return lw_intrin(L, "llvm.fma", 3, (MlirValue[]){a, b, c}, L->f32);
}

/* p(u) = c[0] + c[1] u + ... + c[n] u^n by Horner's rule on fma */
static MlirValue horner(Lw *L, const double *c, int n, MlirValue u) {
  MlirValue p = fconst(L, c[n]);
  for (int k = n - 1; k >= 0; k--) p = fma3(L, p, u, fconst(L, c[k]));
  return p;
}

/* erf(x) in f32, branch-free: both halves are computed, one is selected.
 *   |x| < 1:  erf(x) = x + x * p(x^2), p of degree 6, a relative minimax
 *             fit of erf(x)/x - 1 on x^2 in [0, 1] (1.2e-9 before rounding;
 *             the "x +" form keeps p's rounding error out of the leading
 *             term, and -0 and subnormal x come out exact);
 *   |x| >= 1: erf(x) = sign(x) (1 - 2^q(a)), a = min(|x|, 3.92), q of
 *             degree 6, a minimax fit of log2(erfc(a)) on [1, 3.92] weighted
 *             by erfc(a) ln 2, i.e. by the error it makes in erf (1.0e-9
 *             before rounding); at 3.92 and beyond 1 - erfc rounds to 1
 *             in f32, and a NaN x stays NaN through minimumf.
 * The coefficients were fitted for this compiler (Remez exchange in 40-digit
 * arithmetic). With f32 rounding the whole is within 1.2 ulp of erf where
 * ex2 is exact (the emulator); ex2.approx's 2 ulp on 2^q <= 0.16 add at most
 * 0.5 ulp of the result on the GPU. About 20 instructions, one MUFU. */
static MlirValue erf_f32(Lw *L, MlirValue x) {
  static const double p[7] = {0.1283791657267113,     -0.37612625824235524,   0.11283585148649693,
                              -0.026853811937069243,  0.0051883276895427974,  -0.00080101936618621171,
                              7.8538614828391919e-05};
  static const double q[7] = {-0.00051031017423124655, -1.6259750674865199,   -0.92076502516122527,
                              -0.1486514960232401,     0.031458422262757399,  -0.0042409562883081809,
                              0.00026772664332459518};
  MlirNamedAttribute olt = lw_attr(L, "predicate", mlirIntegerAttrGet(L->i64, 4));
  MlirValue a = lw_intrin(L, "llvm.fabs", 1, &x, L->f32);
  /* small: x + x p(x^2) */
  MlirValue s = lw_bin(L, "arith.mulf", x, x);
  MlirValue small = fma3(L, x, horner(L, p, 6, s), x);
  /* large: 1 - 2^q(min(a, 3.92)), with x's sign */
  MlirValue ac = lw_bin(L, "arith.minimumf", a, fconst(L, 3.92));
  MlirValue e = lw_intrin(L, "llvm.nvvm.ex2.approx.ftz.f32", 1, (MlirValue[]){horner(L, q, 6, ac)}, L->f32);
  MlirValue big = lw_bin(L, "arith.subf", fconst(L, 1.0), e);
  MlirValue neg = lw_op1(L, "arith.cmpf", 2, (MlirValue[]){x, fconst(L, 0.0)}, L->i1, 1, &olt);
  big = lw_select(L, neg, lw_cast(L, "arith.negf", big, L->f32), big);
  MlirValue is_small = lw_op1(L, "arith.cmpf", 2, (MlirValue[]){a, fconst(L, 1.0)}, L->i1, 1, &olt);
  return lw_select(L, is_small, small, big);
}

MlirValue lw_math_f32(Lw *L, Opcode opc, const MlirValue *xs, DType dt) {
  MlirValue x = xs[0], y = {0};
  MlirType t = mlirValueGetType(x);
  bool half = dt == DT_F16 || dt == DT_BF16;
  if (half) x = lw_cast(L, "arith.extf", x, L->f32);
  if (opc == OP_FDIV) y = half ? lw_cast(L, "arith.extf", xs[1], L->f32) : xs[1];
  MlirValue r;
  switch (opc) {
  case OP_EXP: {
    MlirValue k = fconst(L, 1.4426950408889634);
    r = lw_intrin(L, "llvm.nvvm.ex2.approx.ftz.f32", 1, (MlirValue[]){lw_bin(L, "arith.mulf", x, k)}, L->f32);
    break;
  }
  case OP_EXP2: r = lw_intrin(L, "llvm.nvvm.ex2.approx.ftz.f32", 1, &x, L->f32); break;
  case OP_LOG: {
    MlirValue l2 = lw_intrin(L, "llvm.nvvm.lg2.approx.f", 1, &x, L->f32);
    r = lw_bin(L, "arith.mulf", l2, fconst(L, 0.6931471805599453));
    break;
  }
  case OP_LOG2: r = lw_intrin(L, "llvm.nvvm.lg2.approx.f", 1, &x, L->f32); break;
  case OP_RSQRT: r = lw_intrin(L, "llvm.nvvm.rsqrt.approx.f", 1, &x, L->f32); break;
  case OP_TANH: r = intrin_afn(L, "llvm.tanh", x); break;
  case OP_SIN: r = lw_intrin(L, "llvm.nvvm.sin.approx.ftz.f", 1, &x, L->f32); break;
  case OP_COS: r = lw_intrin(L, "llvm.nvvm.cos.approx.ftz.f", 1, &x, L->f32); break;
  case OP_RCP: r = lw_intrin(L, "llvm.nvvm.rcp.approx.ftz.f", 1, &x, L->f32); break;
  case OP_FDIV: r = lw_intrin(L, "llvm.nvvm.div.full", 2, (MlirValue[]){x, y}, L->f32); break;
  case OP_ERF: r = erf_f32(L, x); break;
  default:
    dg_ice(L->c, (Loc){0}, "no f32 math lowering for %s", ir_opname(opc));
    r = x;
  }
  if (half) r = lw_cast(L, "arith.truncf", r, t);
  return r;
}

/* 2^x on the FMA pipe (exp2(x, fma_every = k)): n = rint(x), f = x - n in
 * [-1/2, 1/2], 2^f by a degree-5 polynomial with constant term 1 (a
 * relative-error fit made for this compiler; 1.9e-7 worst relative error in
 * f32 Horner form, about ex2.approx's 2 ulp; exact at integers), then n
 * added to the exponent bits. x is clamped to [-127, 128] first: at -127
 * and below the result is +0 (ex2.approx.ftz flushes everything below
 * 2^-126; between -127 and -126 this gives a value in [0, 2^-126]), at 128
 * and above +inf; NaN stays NaN. About 11 instructions against one MUFU
 * slot of 8 cycles: worth it only while MUFU, not issue, is the limit. */
MlirValue lw_exp2_fma(Lw *L, MlirValue x) {
  static const double c[6] = {1.0, 0.6931469775977629, 0.24022242082710962,
                              0.055507337442448956, 0.009671512810966202, 0.0013264727383399434};
  MlirValue xc = lw_bin(L, "arith.minimumf", lw_bin(L, "arith.maximumf", x, fconst(L, -127.0)), fconst(L, 128.0));
  MlirValue n = lw_intrin(L, "llvm.rint", 1, &xc, L->f32);
  MlirValue f = lw_bin(L, "arith.subf", xc, n);
  MlirValue p = horner(L, c, 5, f);
  /* saturating: NaN converts to 0 (defined, unlike fptosi), and NaN bits + 0 stay NaN */
  MlirValue e = lw_bin(L, "arith.shli", lw_intrin(L, "llvm.fptosi.sat.i32.f32", 1, &n, L->i32), lw_i32(L, 23));
  MlirValue bits = lw_bin(L, "arith.addi", lw_cast(L, "arith.bitcast", p, L->i32), e);
  return lw_cast(L, "arith.bitcast", bits, L->f32);
}

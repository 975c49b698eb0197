/* test_sema.c - unit tests for compiler/sema.c and builtins.c through
 * tilec_compile: constant folding (static_assert), type promotion, shape
 * broadcasting in the TIR, inlining of functions (tuple results), compile-
 * time `if` and `static_range`, -D defines specializing a kernel (checked in
 * the metadata), and the diagnostics of type errors. */
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "tile/tilec.h"

/* For a test of a compiler bug not fixed yet (commented "KNOWN BUG: ..."):
 * cmocka's skip(), unless TILE_TEST_KNOWN_BUGS=1 asks to run it. */
#define KNOWN_BUG(why)                                                   \
  do {                                                                   \
    if (!getenv("TILE_TEST_KNOWN_BUGS")) {                               \
      print_message("[ KNOWN BUG ] %s\n", why);                          \
      skip();                                                            \
    }                                                                    \
  } while (0)

/* ---- helpers ----------------------------------------------------------- */

typedef struct Out {
  tilec_status st;
  char *text, *diags, *meta;
} Out;

static Out compile_d(const char *src, tilec_emit emit, const tilec_define *defs, int ndefs) {
  tilec_options o;
  tilec_options_init(&o);
  o.emit = emit;
  o.defines = defs;
  o.ndefines = ndefs;
  tilec_result *r = NULL;
  Out out;
  out.st = tilec_compile("s.tile", src, strlen(src), &o, &r);
  assert_non_null(r);
  out.text = strdup(tilec_result_output(r, NULL));
  out.diags = strdup(tilec_result_diagnostics(r));
  const char *m = tilec_result_metadata(r);
  out.meta = m ? strdup(m) : NULL;
  tilec_result_free(r);
  return out;
}

static Out tir(const char *src) { return compile_d(src, TILEC_EMIT_TIR, NULL, 0); }

static void out_free(Out *o) {
  free(o->text);
  free(o->diags);
  free(o->meta);
}

/* The line of text that contains needle ("" when none; static buffer). */
static const char *line_with(const char *text, const char *needle) {
  static char line[1024];
  const char *p = strstr(text, needle);
  line[0] = 0;
  if (!p) return line;
  while (p > text && p[-1] != '\n') p--;
  size_t n = strcspn(p, "\n");
  if (n >= sizeof line) n = sizeof line - 1;
  memcpy(line, p, n);
  line[n] = 0;
  return line;
}

static int count(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* The program compiles (to TIR); returns the TIR (free with out_free). */
static Out ok(const char *src) {
  Out o = tir(src);
  if (o.st != TILEC_OK) {
    print_error("compile failed (%d):\n%s\n--- source ---\n%s\n", o.st, o.diags, src);
    fail();
  }
  assert_string_equal(o.diags, "");
  return o;
}

/* The program fails with TILEC_ERR_SOURCE and the diagnostics contain `want`. */
static void err(const char *src, const char *want) {
  Out o = tir(src);
  if (o.st != TILEC_ERR_SOURCE || !strstr(o.diags, want)) {
    print_error("status %d, wanted an error containing '%s'; diagnostics:\n%s\n--- source ---\n%s\n", o.st, want,
                o.diags, src);
    fail();
  }
  out_free(&o);
}

/* A kernel body wrapped in a header with parameters of many types. */
static char *kern(const char *body) {
  static const char *head =
      "kernel k(x: *f32, p: *i32, n: i32, m: u32, l: i64, ul: u64, b8: i8, u8v: u8, s16: i16, u16v: u16,\n"
      "         h: f16, g: bf16, f: f32, d: f64) {\n";
  char *s = malloc(strlen(head) + strlen(body) + 8);
  sprintf(s, "%s%s\n}\n", head, body);
  return s;
}

static void kern_ok(const char *body) {
  char *s = kern(body);
  Out o = ok(s);
  out_free(&o);
  free(s);
}

static void kern_err(const char *body, const char *want) {
  char *s = kern(body);
  err(s, want);
  free(s);
}

/* ---- constant folding -------------------------------------------------- */

static void test_static_assert_folding(void **state) {
  (void)state;
  Out o = ok(
      "const N: i32 = 1 << 4;\n"
      "const M = N * 2 + 1;\n"
      "kernel k(x: *f32) {\n"
      "    static_assert(2 + 3 * 4 == 14);\n"
      "    static_assert((2 + 3) * 4 == 20, \"parens\");\n"
      "    static_assert(N == 16 && M == 33);\n"
      "    static_assert(7 / 2 == 3 && -7 / 2 == -3 && -7 % 2 == -1 && 7 % -2 == 1);\n"
      "    static_assert((0xF0 | 0x0F) == 255 && (6 ^ 3) == 5 && (6 & 3) == 2 && ~0 == -1);\n"
      "    static_assert(1 << 62 > 0 && -16 >> 2 == -4 && 256 >> 8 == 1);\n"
      "    static_assert(1.5 * 2 == 3.0 && 7.0 / 2 == 3.5 && 7.5 % 2 == 1.5);\n"
      "    static_assert(!(1 > 2) && 2 >= 2 && 1 != 2 && 0.5 < 1);\n"
      "    static_assert(true || 1 / 0 == 1);\n"
      "    static_assert(!(false && 1 / 0 == 1));\n"
      "    static_assert((300 as u8) == 44 && (255 as i8) == -1 && (-1 as u32) == 4294967295);\n"
      "    static_assert((3.9 as i32) == 3 && (-3.9 as i32) == -3 && (2 as f32) == 2.0);\n"
      "    static_assert(max(3, 9) == 9 && min(2.5, 1) == 1 && abs(-5) == 5 && sqrt(16.0) == 4.0);\n"
      "    static_assert(floor(2.5) == 2.0 && ceil(2.5) == 3.0 && exp2(10) == 1024.0 && log2(8.0) == 3.0);\n"
      "    static_assert(cdiv(10, 3) == 4 && cdiv(9, 3) == 3);\n"
      "    static_assert(num_warps() == 4);\n"
      "    static_assert(where(true, 1, 2) == 1 && fma(2, 3, 4) == 10.0);\n"
      "    static_assert([10, 20, 30][1] == 20 && (4, 5)[-1] == 5);\n"
      "    static_assert(9223372036854775807 > 0);\n"
      "}\n");
  /* folding leaves no code behind */
  lacks(o.text, "= const", "TIR");
  lacks(o.text, "add", "TIR");
  out_free(&o);
}

/* tanh, sin, cos, erf, rcp, fdiv: constant arguments fold (in double, like
 * the other math builtins), leaving no code behind. */
static void test_math_builtins_fold(void **state) {
  (void)state;
  Out o = ok(
      "kernel k(x: *f32) {\n"
      "    static_assert(tanh(0.0) == 0.0 && sin(0.0) == 0.0 && cos(0.0) == 1.0 && erf(0.0) == 0.0);\n"
      "    static_assert(rcp(4.0) == 0.25 && rcp(2) == 0.5 && fdiv(7, 2) == 3.5 && fdiv(1.0, 8) == 0.125);\n"
      "    static_assert(abs(tanh(0.5) - 0.46211715726000974) < 1e-16 && abs(erf(1.0) - 0.8427007929497149) < 1e-16);\n"
      "    static_assert(abs(sin(1.0) - 0.8414709848078965) < 1e-16 && abs(cos(1.0) - 0.5403023058681398) < 1e-16);\n"
      "    static_assert(erf(-2.0) == -erf(2.0) && erf(inf) == 1.0 && tanh(-inf) == -1.0);\n"
      "    static_assert(rcp(0.0) == inf && fdiv(1, 0) == inf && fdiv(-1.0, inf) == 0.0);\n"
      "    store(x, tanh(0.5) + erf(1.0) + fdiv(1, 4) + rcp(8.0) + sin(0.0) + cos(0.0));\n"
      "}\n");
  has(o.text, "const 2.67981795 : f32", "TIR");
  lacks(o.text, "tanh", "TIR");
  lacks(o.text, "fdiv", "TIR");
  lacks(o.text, "add", "TIR");
  out_free(&o);
}

static void test_static_assert_failures(void **state) {
  (void)state;
  err("kernel k(x: *f32) { static_assert(2 + 3 * 4 == 20); }", "s.tile:1:21: error: static assertion failed");
  err("kernel k(x: *f32) { static_assert(1 + 1 == 3, \"math is broken\"); }",
      "static assertion failed: math is broken");
  err("kernel k(x: *f32, n: i32) { static_assert(n == 1); }",
      "static_assert needs a condition known at compile time, not bool");
  err("kernel k(x: *f32) { static_assert(1); }", "static_assert needs a condition known at compile time");
  err("kernel k(x: *f32) { static_assert(true, 5); }", "the message of static_assert must be a string");
  /* every failing one is reported */
  Out o = tir("kernel k(x: *f32) {\n  static_assert(false, \"one\");\n  static_assert(1 > 2, \"two\");\n}\n");
  assert_int_equal(o.st, TILEC_ERR_SOURCE);
  has(o.diags, "s.tile:2:3: error: static assertion failed: one", "diagnostics");
  has(o.diags, "s.tile:3:3: error: static assertion failed: two", "diagnostics");
  out_free(&o);
}

static void test_constant_errors(void **state) {
  (void)state;
  err("kernel k(x: *f32) { let a = 1 / 0; }", "division by zero in a constant expression");
  err("kernel k(x: *f32) { let a = 5 % 0; }", "division by zero in a constant expression");
  err("kernel k(x: *f32) { let a = 9223372036854775807 + 1; }", "constant expression overflows 64 bits");
  err("kernel k(x: *f32) { let a = 1 << 64; }", "shift amount 64 is out of range");
  err("kernel k(x: *f32) { let a = 1 << 63; }", "overflows 64 bits");
  err("kernel k(x: *f32) { let a = 9223372036854775808; }", "larger than the largest i64");
  err("const A: i32 = 2147483647;\nkernel k(x: *f32) { let a = A + 1; }", "constant expression overflows i32");
  err("const A: u8 = 256;\nkernel k(x: *f32) { let a = A; }", "overflows u8");
  err("const A = B;\nconst B = A;\nkernel k(x: *f32) { let a = A; }", "is defined in terms of itself");
  err("kernel k(x: *f32) { let a = 1.5 & 2; }", "not defined on floating-point values");
  err("kernel k(x: *f32) { let a = 1 && 2; }", "needs booleans, not integers");
  err("kernel k(x: *f32) { let a = true + true; }", "not defined on booleans");
  err("kernel k(x: *f32, n: i32) { let a = n; const_param_only(a); }", "unknown function 'const_param_only'");
}

/* Regression (found by this suite; fixed in a27b98b): folding two typed
 * constants took the type of the left operand (dt = a.dt ?: b.dt) instead of
 * promoting, so u8 200 + i32 100 "overflowed u8" while i32 100 + u8 200
 * folded to 300: '+' was not commutative. */
static void test_typed_constant_folding_commutes(void **state) {
  (void)state;
  const char *src =
      "const C: u8 = 200;\n"
      "const D: i32 = 100;\n"
      "kernel k(x: *f32) {\n"
      "    static_assert(D + C == 300);\n"
      "    static_assert(C + D == 300);\n"
      "}\n";
  Out o = ok(src);
  out_free(&o);
}

/* Regression (found by this suite; fixed in a27b98b): `~` on an unsigned
 * typed constant computed the signed complement and range-checked it:
 * ~(0 as u8) "overflowed u8 (value -1)" instead of being 255. */
static void test_bitnot_unsigned_constant(void **state) {
  (void)state;
  Out o = ok(
      "kernel k(x: *f32) {\n"
      "    static_assert(~(0 as u8) == 255);\n"
      "    static_assert(~(1 as u32) == 4294967294);\n"
      "}\n");
  out_free(&o);
}

/* ---- type promotion ---------------------------------------------------- */

static void test_promotion(void **state) {
  (void)state;
  /* integers: the wider type wins */
  kern_ok("let a: i64 = n + l;");
  kern_ok("let a: i32 = b8 + n;");
  kern_ok("let a: u32 = u8v + m;");
  kern_ok("let a: i64 = l + m;");
  kern_ok("let a: u64 = ul * n;");
  kern_ok("let a: i32 = s16 - n;");
  kern_ok("let a: u16 = u16v + u8v;");
  /* floats: f64 wins, halves of different kinds meet in f32, equal halves stay */
  kern_ok("let a: f32 = h + g;");
  kern_ok("let a: f64 = h + d;");
  kern_ok("let a: f64 = f * d;");
  kern_ok("let a: f16 = h * h;");
  kern_ok("let a: bf16 = g - g;");
  kern_ok("let a: f32 = f + h;");
  /* int with float: the float */
  kern_ok("let a: f16 = n + h;");
  kern_ok("let a: bf16 = l * g;");
  kern_ok("let a: f32 = n + f;");
  /* untyped constants take the run-time value's type */
  kern_ok("let a: bf16 = g * 2;");
  kern_ok("let a: f16 = h + 1.5;");
  kern_ok("let a: u8 = u8v + 255;");
  kern_ok("let a: i64 = l + 1;");
  kern_ok("let a: f32 = n + 1.5;");
  kern_ok("let a: u32 = m * 3000000000;");
  kern_ok("let a: i8 = -b8;");
  /* bool with a number becomes the number; comparisons give bool */
  kern_ok("let a: i32 = (n > 0) | n;");
  kern_ok("let c: bool = n < 3;");
  kern_ok("let c: bool = (n < 3) & (f > 0.5);");
  kern_ok("let c: bool = h < g;");
  /* tiles promote elementwise */
  kern_ok("let t: f32[16] = arange(0, 16) + f;");
  kern_ok("let t: f32[16] = arange(0, 16) + 0.5;");
  kern_ok("let t: f16[16] = zeros([16], f16) * 3;");
  kern_ok("let t: f64[16] = zeros([16], f16) + d;");
  kern_ok("let t: i64[16] = arange(0, 16) + l;");
  /* the wrong declared type is reported with both types */
  kern_err("let a: i32 = n + l;", "'a' is declared i32 but is i64");
  kern_err("let a: f16 = h + g;", "'a' is declared f16 but is f32");
  kern_err("let a: i32 = n + 1.5;", "'a' is declared i32 but is f32");
  kern_err("let t: f32[16] = arange(0, 16) + n;", "is declared f32[16] but is i32[16]");
}

static void test_promotion_casts_in_tir(void **state) {
  (void)state;
  Out o = ok("kernel k(x: *f32, h: f16, g: bf16) { store(x, h + g); }");
  /* both halves are converted to f32 before the add */
  has(o.text, "cast to f32 %1 : f32", "TIR");
  has(o.text, "cast to f32 %2 : f32", "TIR");
  has(o.text, "add", "TIR");
  out_free(&o);
  o = ok("kernel k(x: *i64, n: i32, l: i64) { store(x, n + l); }");
  has(o.text, "cast to i64 %1 : i64", "TIR");
  lacks(o.text, "cast to i32", "TIR");
  out_free(&o);
  o = ok("kernel k(x: *f32, n: i32) { store(x, n + 1.5); }");
  has(o.text, "cast to f32 %1 : f32", "TIR");
  has(o.text, "const 1.5 : f32", "TIR");
  out_free(&o);
  /* a constant adapts: no cast of the run-time value */
  o = ok("kernel k(x: *bf16, g: bf16) { store(x, g * 2); }");
  has(o.text, "const 2 : bf16", "TIR");
  lacks(o.text, "cast", "TIR");
  out_free(&o);
}

static void test_promotion_errors(void **state) {
  (void)state;
  /* same width, different signedness: an error, never a silent choice */
  kern_err("let a = n + m;", "mixes i32 and u32; cast one of them explicitly with 'as'");
  kern_err("let a = l * ul;", "mixes i64 and u64");
  kern_err("let a = b8 - u8v;", "mixes i8 and u8");
  kern_err("let a = s16 < u16v;", "mixes i16 and u16");
  kern_err("let a = m == n;", "mixes u32 and i32");
  kern_err("let a = arange(0, 16) + m;", "mixes i32 and u32");
  kern_ok("let a = n + (m as i32);");
  kern_ok("let a = (n as u32) + m;");
  /* a typed constant (a const parameter) promotes like a run-time value */
  err("kernel k(x: *f32, m: u32, const B: i32 = 64) { let a = m + B; }", "mixes u32 and i32");
  /* where the error is */
  kern_err("let a = n + m;", "s.tile:3:11: error:");
  /* constants that do not fit the run-time type */
  kern_err("let a = u8v + 256;", "constant 256 does not fit in u8");
  kern_err("let a = m + -1;", "constant -1 does not fit in u32");
  kern_err("let a = n + 2147483648;", "does not fit in i32");
  /* pointers */
  kern_err("let a = x * 2;", "not defined on pointers");
  kern_err("let a = x + 1.5;", "pointer arithmetic needs an integer offset");
  kern_err("let a = x + x;", "pointer arithmetic needs an integer offset");
  kern_err("let a = x + f;", "pointer arithmetic needs an integer offset, not f32");
  kern_err("let a = x as i32;", "cannot cast *f32 to i32");
  kern_ok("let a = x as i64; let b = a as *f32;");
  /* operators on the wrong kinds */
  kern_err("let a = !n;", "'!' needs a boolean, not i32");
  kern_err("let a = ~f;", "'~' needs an integer");
  kern_err("let a = n && n;", "operator '&&' needs booleans, not i32");
  kern_err("let a = f & f;", "operator '&' is not defined on f32");
  kern_err("let a = f << 1;", "operator '<<' is not defined on f32");
  kern_err("let a = (n > 0) + (n > 1);", "operator '+' is not defined on booleans");
  kern_err("let a = sqrt(n);", "'sqrt' needs a floating-point argument, not i32");
  kern_err("let a = exp(arange(0, 16));", "'exp' needs a floating-point argument, not i32[16]");
  kern_err("let a = tanh(n);", "'tanh' needs a floating-point argument, not i32");
  kern_err("let a = erf(u8v);", "'erf' needs a floating-point argument, not u8");
  kern_err("let a = sin(d);", "'sin' of f64 is not supported yet (the fast approximations are f32)");
  kern_err("let a = rcp(d);", "'rcp' of f64 is not supported yet");
  kern_err("let a = fdiv(n, n);", "'fdiv' needs floating-point arguments, not i32");
  kern_err("let a = fdiv(d, 2.0);", "'fdiv' of f64 is not supported yet");
  kern_err("let a = fdiv(f);", "'fdiv' needs argument 'b'");
  kern_ok("let a = fdiv(h, 2) + tanh(h) + erf(g) + rcp(g as f16) + fdiv(f, n);");
}

/* Regression (at 5a28fe3; fixed in a8bfc76): operator names were quoted
 * twice in promotion and broadcast errors ("''+'' mixes i32 and u32"). */
static void test_operator_name_quoting(void **state) {
  (void)state;
  kern_err("let a = n + m;", "error: '+' mixes i32 and u32");
  kern_err("let a = arange(0, 16) + arange(0, 32);", "error: '+' cannot broadcast");
}

/* Every operator becomes its TIR operation (run-time operands). */
static void test_operators_to_tir(void **state) {
  (void)state;
  static const struct {
    const char *expr, *op;
  } ops[] = {
      {"n + q", "add %1, %2 : i32"},   {"n - q", "sub %1, %2 : i32"},   {"n * q", "mul %1, %2 : i32"},
      {"n / q", "div %1, %2 : i32"},   {"n % q", "rem %1, %2 : i32"},   {"n & q", "and %1, %2 : i32"},
      {"n | q", "or %1, %2 : i32"},    {"n ^ q", "xor %1, %2 : i32"},   {"n << q", "shl %1, %2 : i32"},
      {"n >> q", "shr %1, %2 : i32"},  {"min(n, q)", "min %1, %2 : i32"}, {"max(n, q)", "max %1, %2 : i32"},
      {"-n", "neg %1 : i32"},          {"~n", "not %1 : i32"},          {"abs(n)", "abs %1 : i32"},
      {"(n < q) as i32", "cmp lt %1, %2 : bool"},  {"(n <= q) as i32", "cmp le %1, %2 : bool"},
      {"(n > q) as i32", "cmp gt %1, %2 : bool"},  {"(n >= q) as i32", "cmp ge %1, %2 : bool"},
      {"(n == q) as i32", "cmp eq %1, %2 : bool"}, {"(n != q) as i32", "cmp ne %1, %2 : bool"},
      {"((n < q) && (q < n)) as i32", "and %"},    {"((n < q) || (q < n)) as i32", "or %"},
      {"(!(n < q)) as i32", "not %"},              {"where(n < q, n, q)", "select %"},
      {"(f as i32)", "cast to i32 %3 : i32"},      {"(exp(f) + sqrt(f) + floor(f)) as i32", "exp %3 : f32"},
      {"tanh(f) as i32", "tanh %3 : f32"},         {"sin(f) as i32", "sin %3 : f32"},
      {"cos(f) as i32", "cos %3 : f32"},           {"erf(f) as i32", "erf %3 : f32"},
      {"rcp(f) as i32", "rcp %3 : f32"},           {"fdiv(f, f) as i32", "fdiv %3, %3 : f32"},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    char src[512];
    snprintf(src, sizeof src, "kernel k(x: *i32, n: i32, q: i32, f: f32) { store(x, %s); }", ops[i].expr);
    Out o = ok(src);
    if (!strstr(o.text, ops[i].op)) {
      print_error("'%s' should give '%s':\n%s\n", ops[i].expr, ops[i].op, o.text);
      fail();
    }
    out_free(&o);
  }
  /* compound assignments are the operator plus the assignment */
  Out o = ok("kernel k(x: *i32, n: i32) { let v = n; v += 1; v <<= 2; v >>= 1; v ^= n; v %= 7; store(x, v); }");
  has(o.text, "add", "TIR");
  has(o.text, "shl", "TIR");
  has(o.text, "shr", "TIR");
  has(o.text, "xor", "TIR");
  has(o.text, "rem", "TIR");
  out_free(&o);
}

/* ---- broadcasting ------------------------------------------------------ */

static void test_broadcast_shapes(void **state) {
  (void)state;
  Out o = ok(
      "kernel k(x: *f32) {\n"
      "    let a = arange(0, 16);\n"
      "    let b = arange(0, 32);\n"
      "    let z = a[:, None] * 32 + b[None, :];\n"
      "    store(x + z, 1.0);\n"
      "}\n");
  has(o.text, "expand_dims axis=1 %", "TIR");
  has(o.text, ": i32[16, 1]", "TIR");
  has(o.text, "expand_dims axis=0 %", "TIR");
  has(o.text, ": i32[1, 32]", "TIR");
  has(o.text, "broadcast %", "TIR");
  has(o.text, ": i32[16, 32]", "TIR");
  has(o.text, "ptr_add", "TIR");
  has(o.text, ": *f32[16, 32]", "TIR");
  /* the scalar 32 is splatted to the [16, 1] column, not to [16, 32] */
  has(o.text, "splat", "TIR");
  out_free(&o);
  /* rank-1 + rank-2: the smaller rank gets a leading size-1 axis */
  o = ok(
      "kernel k(x: *f32) {\n"
      "    let t = zeros([8, 64], f32) + arange(0, 64);\n"
      "    store(x + arange(0, 8)[:, None] * 64 + arange(0, 64)[None, :], t);\n"
      "}\n");
  has(o.text, "expand_dims axis=0", "TIR");
  has(o.text, ": f32[1, 64]", "TIR");
  has(o.text, ": f32[8, 64]", "TIR");
  out_free(&o);
  /* broadcast_to and a 3-D broadcast */
  o = ok(
      "kernel k(x: *f32) {\n"
      "    let c = arange(0, 4)[:, None, None] + arange(0, 8)[None, :, None] + arange(0, 2)[None, None, :];\n"
      "    let d = broadcast_to(arange(0, 4)[:, None], [4, 16]);\n"
      "    store(x + c, 1.0);\n"
      "    store(x + d, 2.0);\n"
      "}\n");
  has(o.text, ": i32[4, 8, 2]", "TIR");
  has(o.text, ": i32[4, 16]", "TIR");
  out_free(&o);
  /* shape errors name both shapes and the dimension */
  err("kernel k(x: *f32) { let z = arange(0, 16) + arange(0, 32); }",
      "cannot broadcast i32[16] and i32[32]: dimension 0 is 16 vs 32");
  err("kernel k(x: *f32) { let z = arange(0, 16)[:, None] + zeros([8, 4], i32); }",
      "cannot broadcast i32[16, 1] and i32[8, 4]: dimension 0 is 16 vs 8");
  err("kernel k(x: *f32) { let z = broadcast_to(arange(0, 16), [16, 8]); }",
      "cannot broadcast i32[16] to [16, 8]: dimension 1 is 16, not 1 or 8");
  err("kernel k(x: *f32) { let z = broadcast_to(zeros([2, 2], f32), [2]); }", "to the smaller shape [2]");
  err("kernel k(x: *f32) { store(x + arange(0, 16), zeros([8], f32)); }", "dimension 0 is 8, not 1 or 16");
  err("kernel k(x: *f32) { let z = arange(0, 16)[0]; }", "tiles are indexed only with ':'");
  err("kernel k(x: *f32) { let z = arange(0, 16)[:, :]; }", "has 2 ':' entries but the tile has 1 dimensions");
  err("kernel k(x: *f32) { let z = zeros([3], f32); }", "dimensions must be powers of two");
  err("kernel k(x: *f32) { let z = zeros([2048, 1024], f32); }", "the limit for a register tile is 1048576");
}

/* ---- functions --------------------------------------------------------- */

static void test_inline_tuple_returns(void **state) {
  (void)state;
  Out o = ok(
      "fn divmod(a, b) {\n"
      "    return (a / b, a % b);\n"
      "}\n"
      "fn pair(v: i32) -> (i32, i32) {\n"
      "    return (v + 1, v * 2);\n"
      "}\n"
      "fn minmax(a, b) { return (min(a, b), max(a, b)); }\n"
      "kernel k(x: *i32, n: i32) {\n"
      "    let (q, r) = divmod(n, 7);\n"
      "    let (p1, p2) = pair(n);\n"
      "    let t = minmax(n, 5);\n"
      "    store(x, q + r + p1 + p2 + t[0] - t[1]);\n"
      "    let (c1, c2) = divmod(17, 5);\n"
      "    static_assert(c1 == 3 && c2 == 2);\n"
      "}\n");
  /* inlined: the operations appear in the kernel, with the function's locations */
  has(o.text, "div %1, %", "TIR");
  has(o.text, "rem %1, %", "TIR");
  has(o.text, "@2:15", "TIR");
  has(o.text, "@2:22", "TIR");
  has(o.text, "@5:15", "TIR");
  has(o.text, "min %1, %", "TIR");
  has(o.text, "max %1, %", "TIR");
  lacks(o.text, "call", "TIR");
  assert_int_equal(count(o.text, "kernel @"), 1);
  out_free(&o);
  /* a user function replaces the prelude's function of the same name */
  o = ok("fn cdiv(a, b) { return 42; }\nkernel k(x: *f32) { static_assert(cdiv(10, 3) == 42); }\n");
  out_free(&o);
  /* errors */
  err("fn f(a) { return f(a); }\nkernel k(x: *f32) { let a = f(1); }", "calls of 'f' nest more than 64 deep");
  err("fn g(a: i32) -> i32 { let b = a; }\nkernel k(x: *f32, n: i32) { let b = g(n); }",
      "function 'g' declares a result type but does not end with 'return'");
  err("fn h(a) { if a > 0 { return 1; } return 2; }\nkernel k(x: *f32, n: i32) { let c = h(n); }",
      "'return' is only allowed as the last statement of a function");
  err("fn sq(v) { return v * v; }\nkernel k(x: *f32) { let d = sq(v = 3, w = 4); }",
      "function 'sq' has no parameter named 'w'");
  err("fn sq(v) { return v * v; }\nkernel k(x: *f32) { let d = sq(); }", "call of 'sq' is missing argument 'v'");
  err("fn sq(v) { return v * v; }\nkernel k(x: *f32) { let d = sq(1, 2); }", "takes 1 argument, but more were given");
  err("fn c(const v) { return v; }\nkernel k(x: *f32, n: i32) { let d = c(n); }",
      "argument 'v' of 'c' must be a compile-time constant, not i32");
  err("fn t(v: f32) { return v; }\nkernel k(x: *f32, n: i32) { let d = t(n); }",
      "argument 'v' of 't' is declared f32 but is i32");
  err("fn pair(v: i32) -> (i32, i32) { return (v, v); }\nkernel k(x: *f32, n: i32) { let (a, b, c) = pair(n); }",
      "'let' binds 3 names but the value is a tuple of 2 items");
  err("fn f() { }\nfn f() { }\nkernel k(x: *f32) { }", "'f' is defined twice");
  err("kernel k(x: *f32) { let a = store(x, 1.0); }", "this call returns no value");
}

/* ---- compile-time control flow ----------------------------------------- */

static void test_compile_time_if(void **state) {
  (void)state;
  const char *src =
      "kernel k(x: *f32, const MODE: i32 = 0) {\n"
      "    if MODE == 1 {\n"
      "        store(x, 111.0);\n"
      "    } else if MODE == 2 {\n"
      "        store(x, 222.0);\n"
      "    } else {\n"
      "        store(x, 333.0);\n"
      "    }\n"
      "}\n";
  static const char *want[] = {"const 333 : f32", "const 111 : f32", "const 222 : f32"};
  for (int mode = 0; mode < 3; mode++) {
    char v[16];
    snprintf(v, sizeof v, "%d", mode);
    tilec_define d = {"MODE", v};
    Out o = compile_d(src, TILEC_EMIT_TIR, &d, 1);
    assert_int_equal(o.st, TILEC_OK);
    /* only the taken branch exists: one store, no if op */
    assert_int_equal(count(o.text, "store"), 1);
    lacks(o.text, "= if", "TIR");
    lacks(o.text, "then", "TIR");
    for (int j = 0; j < 3; j++) {
      if (j == mode) has(o.text, want[j], "TIR");
      else lacks(o.text, want[j], "TIR");
    }
    out_free(&o);
  }
  /* errors in the branch not taken are not reported (it is never built) */
  Out o = ok("kernel k(x: *f32) { if false { let a = 1 + true_is_not_a_name; } }");
  out_free(&o);
  /* a run-time condition builds an if op with merged results */
  o = ok(
      "kernel k(x: *f32, n: i32) {\n"
      "    let v = 0.0;\n"
      "    if n > 3 { v = 1.5; } else { v = 2.5; }\n"
      "    store(x, v);\n"
      "}\n");
  has(o.text, "= if %", "TIR");
  has(line_with(o.text, "= if %"), " : f32", "the if line");
  assert_int_equal(count(o.text, "yield %"), 2);
  out_free(&o);
  /* two variables merged: the if has two results */
  o = ok(
      "kernel k(x: *f32, p: *i32, n: i32) {\n"
      "    let v = 0.0;\n"
      "    let c = 0;\n"
      "    if n > 3 { v = 1.5; c = n; }\n"
      "    store(x, v);\n"
      "    store(p, c);\n"
      "}\n");
  has(line_with(o.text, "= if %"), "-> (", "the if line");
  has(line_with(o.text, "= if %"), "f32", "the if line");
  has(line_with(o.text, "= if %"), "i32", "the if line");
  out_free(&o);
  err("kernel k(x: *f32) { if arange(0, 4) < 2 { } }", "the condition of 'if' must be a scalar bool, not bool[4]");
  err("kernel k(x: *f32, n: i32) { let v = n as f32; if n > 0 { v = zeros([4], f32); } store(x, v); }",
      "a variable keeps its type and shape");
}

static void test_static_range(void **state) {
  (void)state;
  Out o = ok(
      "kernel k(x: *i32) {\n"
      "    let acc = 0;\n"
      "    for i in static_range(0, 4) {\n"
      "        acc = acc + i * 10;\n"
      "    }\n"
      "    static_assert(acc == 60);\n"
      "    for i in static_range(3) {\n"
      "        store(x + i, i * 100);\n"
      "    }\n"
      "    for j in static_range(10, 0, -3) {\n"
      "        store(x + j, -j);\n"
      "    }\n"
      "}\n");
  /* fully unrolled: no loop op, one store per iteration with its constant */
  lacks(o.text, "= for", "TIR");
  lacks(o.text, "for ", "TIR");
  assert_int_equal(count(o.text, "store"), 3 + 4);
  has(o.text, "const 0 : i32", "TIR");
  has(o.text, "const 100 : i32", "TIR");
  has(o.text, "const 200 : i32", "TIR");
  lacks(o.text, "const 300 : i32", "TIR");
  has(o.text, "const -10 : i32", "TIR");
  has(o.text, "const -7 : i32", "TIR");
  has(o.text, "const -4 : i32", "TIR");
  has(o.text, "const -1 : i32", "TIR");
  lacks(o.text, "const -13", "TIR");
  out_free(&o);
  /* an empty static range: nothing */
  o = ok("kernel k(x: *f32) { for i in static_range(5, 5) { store(x, 1.0); } }");
  lacks(o.text, "store", "TIR");
  out_free(&o);
  err("kernel k(x: *f32) { for i in static_range(0, 5000) { } }", "static_range unrolls 5000 iterations");
  err("kernel k(x: *f32) { for i in static_range(0, 4, 0) { } }", "static_range step must not be zero");
  err("kernel k(x: *f32, n: i32) { for i in static_range(0, n) { } }",
      "the end of static_range must be a compile-time integer");
  /* run-time ranges become loops */
  o = ok("kernel k(x: *f32, n: i32) { let s = 0.0; for i in range(0, n, 2) { s += 1.0; } store(x, s); }");
  has(o.text, "= for %", "TIR");
  out_free(&o);
  err("kernel k(x: *f32, n: i32) { for i in range(0, n, 0) { } }", "range step must be positive (got 0)");
  err("kernel k(x: *f32, n: i32) { for i in range(0, n, -1) { } }", "range step must be positive (got -1)");
  err("kernel k(x: *f32) { for i in 5 { } }", "'for' loops over range(...) or static_range(...)");
  err("kernel k(x: *f32) { let r = range(4); }", "a range can only be used directly in a 'for' loop");
  err("kernel k(x: *f32, n: i32) { while true { } }", "the loop condition is always true");
}

/* ---- -D defines -------------------------------------------------------- */

static const char *DEF_SRC =
    "kernel k(x: *f32, const T: dtype = f16, const BLOCK: i32 = 64, const F: f32 = 0.5, const E: bool = false) {\n"
    "    let offs = arange(0, BLOCK);\n"
    "    let z = zeros([BLOCK], T);\n"
    "    if E { store(x + offs, (z as f32) + F); } else { store(x + offs, z as f32); }\n"
    "}\n";

static void test_defines_specialize(void **state) {
  (void)state;
  /* defaults */
  Out o = compile_d(DEF_SRC, TILEC_EMIT_META, NULL, 0);
  assert_int_equal(o.st, TILEC_OK);
  has(o.text, "const T dtype f16\n", "metadata");
  has(o.text, "const BLOCK i32 64\n", "metadata");
  has(o.text, "const F f32 0.5\n", "metadata");
  has(o.text, "const E bool false\n", "metadata");
  /* constant parameters are not launch arguments */
  assert_int_equal(count(o.text, "param "), 1);
  has(o.text, "param x ptr f32 16\n", "metadata");
  assert_non_null(o.meta);
  assert_string_equal(o.meta, o.text);
  out_free(&o);
  /* specialized */
  tilec_define defs[] = {{"T", "bf16"}, {"BLOCK", "256"}, {"F", "2"}, {"E", "true"}};
  o = compile_d(DEF_SRC, TILEC_EMIT_META, defs, 4);
  assert_int_equal(o.st, TILEC_OK);
  has(o.text, "const T dtype bf16\n", "metadata");
  has(o.text, "const BLOCK i32 256\n", "metadata");
  has(o.text, "const F f32 2\n", "metadata");
  has(o.text, "const E bool true\n", "metadata");
  out_free(&o);
  /* and the code follows the values */
  o = compile_d(DEF_SRC, TILEC_EMIT_TIR, defs, 4);
  assert_int_equal(o.st, TILEC_OK);
  has(o.text, "T=bf16 BLOCK=256 F=2 E=true", "TIR");
  has(o.text, "arange 0, 256 : i32[256]", "TIR");
  has(o.text, "const 0 : bf16", "TIR");
  has(o.text, "const 2 : f32", "TIR");
  lacks(o.text, "arange 0, 64", "TIR");
  out_free(&o);
  /* hexadecimal and negative values */
  tilec_define hex = {"BLOCK", "0x80"};
  o = compile_d(DEF_SRC, TILEC_EMIT_META, &hex, 1);
  assert_int_equal(o.st, TILEC_OK);
  has(o.text, "const BLOCK i32 128\n", "metadata");
  out_free(&o);
  /* the last -D of a name wins */
  tilec_define twice[] = {{"BLOCK", "32"}, {"BLOCK", "512"}};
  o = compile_d(DEF_SRC, TILEC_EMIT_META, twice, 2);
  assert_int_equal(o.st, TILEC_OK);
  has(o.text, "const BLOCK i32 512\n", "metadata");
  out_free(&o);
  /* a const parameter without default needs a -D */
  const char *nodef = "kernel k(x: *f32, const N: i32) { static_assert(N == 7); }";
  o = compile_d(nodef, TILEC_EMIT_META, NULL, 0);
  assert_int_equal(o.st, TILEC_ERR_SOURCE);
  has(o.diags, "constant parameter 'N' of kernel 'k' has no value", "diagnostics");
  out_free(&o);
  tilec_define n7 = {"N", "7"};
  o = compile_d(nodef, TILEC_EMIT_META, &n7, 1);
  assert_int_equal(o.st, TILEC_OK);
  has(o.text, "const N i32 7\n", "metadata");
  out_free(&o);
}

static void test_define_errors(void **state) {
  (void)state;
  static const struct {
    tilec_define d;
    const char *want; /* and the diagnostics name the -D value */
  } bad[] = {
      {{"BLOCK", "1.5"}, "constant parameter 'BLOCK' is i32 but its value is constant 1.5"},
      {{"BLOCK", "abc"}, "-D BLOCK=abc: the value is not a number, true/false or a type name"},
      {{"BLOCK", "99999999999"}, "i32"},
      {{"BLOCK", "48"}, "arange(0, 48) has 48 elements"},
      {{"E", "1"}, "constant parameter 'E' is bool but its value is constant 1"},
      {{"T", "3"}, "constant parameter 'T' is a dtype but its value is constant 3"},
      {{"F", "true"}, "constant parameter 'F' is f32 but its value is constant true"},
      {{"NOPE", "1"}, "-D NOPE: no kernel has a constant parameter named 'NOPE'"},
      {{"x", "1"}, "no kernel has a constant parameter named 'x'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    Out o = compile_d(DEF_SRC, TILEC_EMIT_TIR, &bad[i].d, 1);
    if (o.st != TILEC_ERR_SOURCE || !strstr(o.diags, bad[i].want) ||
        (strcmp(bad[i].d.value, "1") && !strstr(o.diags, bad[i].d.value))) {
      print_error("-D %s=%s: status %d, diagnostics:\n%s\nwanted: %s\n", bad[i].d.name, bad[i].d.value, o.st,
                  o.diags, bad[i].want);
      fail();
    }
    out_free(&o);
  }
  /* a malformed name is an options error, found before parsing */
  tilec_define bn = {"1B", "1"};
  Out o = compile_d(DEF_SRC, TILEC_EMIT_TIR, &bn, 1);
  assert_int_equal(o.st, TILEC_ERR_OPTIONS);
  has(o.diags, "bad -D: '1B=1'", "diagnostics");
  out_free(&o);
}

/* ---- other builtins' checks ------------------------------------------- */

static void test_builtin_errors(void **state) {
  (void)state;
  kern_err("let a = load(n);", "load needs a pointer or a tile of pointers, not i32");
  kern_err("store(x, n);", "store of i32 values through pointers to f32; convert with 'as f32'");
  kern_err("store(x, zeros([4], f32));", "the value has more dimensions than the pointers");
  kern_err("let a = load(x + arange(0, 16), arange(0, 16));", "the mask of load must be bool, not i32[16]");
  kern_err("let a = load(x + arange(0, 16), arange(0, 16) < 4, zeros([16], f16));", "'other' of load is f16[16]");
  kern_err("let a = arange(0, 48);", "arange(0, 48) has 48 elements");
  kern_err("let a = arange(0, n);", "the end of arange must be a compile-time integer, not i32");
  kern_err("let a = dot(zeros([16, 16], f16), zeros([32, 16], f16));", "inner dimensions differ (16 vs 32)");
  kern_err("let a = dot(zeros([16, 16], f16), zeros([16, 16], bf16));", "dot needs two f16, two bf16 or two f32");
  kern_err("let a = dot(zeros([8, 16], f16), zeros([16, 16], f16));", "smaller than a tensor-core instruction");
  kern_err("let a = dot(zeros([16, 16], f16), zeros([16, 16], f16), zeros([16, 16], f16));",
           "the accumulator of dot must be f32[16, 16], not f16[16, 16]");
  kern_err("let a = sum(f);", "sum reduces a tile, not the scalar f32");
  kern_err("let a = sum(arange(0, 16), axis = 1);", "axis 1 is out of range for i32[16]");
  kern_err("let a = sum(arange(0, 16) < 3);", "sum of bool[16] is not defined");
  kern_err("let a = program_id(3);", "program_id axis must be 0, 1 or 2, not 3");
  kern_err("let a = where(n, 1, 2);", "the condition of where must be bool, not i32");
  kern_err("let a = trans(arange(0, 16));", "trans needs a 2-D tile, not i32[16]");
  kern_err("let a = zeros([16], 3);", "'zeros' expects a type such as f32 here, not constant 3");
  kern_err("let a = load(x, true, mask = false);", "argument 'mask' of 'load' is given twice");
  kern_err("let a = load(x, bogus = 1);", "'load' has no parameter named 'bogus'");
  kern_err("let a = load();", "'load' needs argument 'ptr'");
  kern_err("let a = smem([16], f32);", "smem needs a number dtype such as bf16, not a list");
  kern_err("let a = smem(f32, [16, 64]); let b = a[0]; let c = b[0];", "is a single view, not a ring");
  kern_err("let c = alias(1);", "'alias' is not supported yet on sm_90a");
  kern_err("let a = nofn(3);", "unknown function 'nofn'");
  kern_err("let a = undefined_name + 1;", "unknown name 'undefined_name'");
  kern_err("cdiv = 3;", "cannot assign to 'cdiv': it is a function, not a variable");
  kern_err("q = 3;", "cannot assign to 'q': no such variable");
  kern_err("return 1;", "a kernel returns nothing; write results with store()");
  kern_err("let c = convert_layout(arange(0, 64), blocked([1], [32], [2], [0]));",
           "warps per CTA multiply to 2, but the kernel has 4 warps");
  /* kernel attributes and parameters */
  err("kernel k(x: *f32) warps(3) { }", "warps(3): the warp count must be 1, 2, 4, 8, 16 or 32");
  err("kernel k(x: *f32) maxnreg(8) { }", "maxnreg(8) must be between 24 and 255, or 0 for no cap");
  err("kernel k(x: *f32, const R: i32 = 23) maxnreg(R) { }", "maxnreg(23) must be between 24 and 255");
  { /* 0: no cap, a constant parameter's default */
    Out o = ok("kernel k(x: *f32, const R: i32 = 0) maxnreg(R) { }");
    out_free(&o);
  }
  err("kernel k(x: *f32) bogus(1) { }", "unknown kernel attribute 'bogus'");
  err("kernel k(x: *f32 align(2)) { }", "align(2) must be a power of two between the element size (4) and 256");
  err("kernel k(n: i32 align(16)) { }", "align(...) applies to pointer parameters");
  err("kernel k(x: *f32 multiple_of(16)) { }", "multiple_of(...) applies to integer parameters");
  err("kernel k(x: f32[16]) { }", "kernel parameter 'x' has type f32[16]");
  err("kernel k(b: bool) { }", "kernel parameter 'b' cannot be bool");
  err("kernel k(x: *bool) { }", "pointers point to numbers");
  err("kernel k(x: *f32) { tasks { } }", "'tasks' needs at least one task");
  err("fn f() { }", "no kernel in the program");
  /* attributes reach the TIR */
  Out o = ok("kernel k(x: *f32 align(64), n: i32 multiple_of(8)) warps(8) maxnreg(128) { store(x, 1.0); }");
  has(o.text, "x: *f32 align(64)", "TIR");
  has(o.text, "n: i32 multiple_of(8)", "TIR");
  has(o.text, "warps=8", "TIR");
  out_free(&o);
}

/* Constant masks: `true` is no mask at all, `false` accesses nothing. */
static void test_constant_masks(void **state) {
  (void)state;
  Out o = ok("kernel k(x: *f32) { let a = load(x + arange(0, 16), true); store(x + arange(0, 16), a + 1.0, true); }");
  lacks(o.text, "masked", "TIR");
  has(o.text, "load", "TIR");
  has(o.text, "store", "TIR");
  out_free(&o);
  /* `false` compiles (a warning at most) and accesses nothing */
  o = tir("kernel k(x: *f32) { let a = load(x, false); store(x, 1.0, false); }");
  assert_int_equal(o.st, TILEC_OK);
  lacks(o.diags, "error", "diagnostics");
  lacks(o.text, "load", "TIR");
  lacks(o.text, "store", "TIR");
  out_free(&o);
}

/* Regression (found by this suite; fixed in a27b98b): a constant `false`
 * mask was dropped instead of honoured: load(p, false) and store(p, v,
 * false) warned "nothing is loaded/stored" and then emitted an UNMASKED load
 * and store (the store wrote memory the program had excluded). */
static void test_false_mask_is_honoured(void **state) {
  (void)state;
  Out o = tir(
      "kernel k(x: *f32, y: *f32) {\n"
      "    let a = load(x + arange(0, 16), false, 2.0);\n"
      "    store(y + arange(0, 16), a);\n"
      "    store(y, 1.0, false);\n"
      "}\n");
  assert_int_equal(o.st, TILEC_OK);
  /* exactly one store (the unmasked one of line 3), and no load: the value
   * of a load under a false mask is `other` */
  assert_int_equal(count(o.text, "store "), 1);
  lacks(o.text, "load", "TIR");
  has(o.text, "const 2 : f32", "TIR");
  out_free(&o);
}

/* Several kernels in one file are all built, each with its own warps. */
static void test_two_kernels(void **state) {
  (void)state;
  Out o = ok(
      "fn twice(v) { return v * 2; }\n"
      "kernel a(x: *f32) warps(2) { store(x, twice(1.5)); }\n"
      "kernel b(x: *f32, const B: i32 = 8) { store(x + arange(0, B), twice(2.5)); }\n");
  has(o.text, "kernel @a(%", "TIR");
  has(o.text, ") warps=2 {", "TIR");
  has(o.text, "kernel @b(%", "TIR");
  has(o.text, ") warps=4 B=8 {", "TIR");
  has(o.text, "const 3 : f32", "TIR");
  has(o.text, "const 5 : f32", "TIR");
  out_free(&o);
}

/* Regression (crashed at 5a28fe3; fixed in a8bfc76): a long expression such
 * as 1 + 1 + ... (20000 terms, an 80 KB line) passed the parser and
 * overflowed the stack in the recursive sema (SIGSEGV); now it is a nesting
 * error.  Compiling or a source error is fine, a crash is not.  Runs in a
 * child process. */
static void test_long_expression_does_not_crash(void **state) {
  (void)state;
  int n = 20000;
  char *src = malloc((size_t)n * 4 + 128), *p = src;
  p += sprintf(p, "kernel k(x: *i32) { let a = 1");
  for (int i = 0; i < n; i++) p += sprintf(p, " + 1");
  sprintf(p, "; store(x, a); }");
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    tilec_options o;
    tilec_options_init(&o);
    o.emit = TILEC_EMIT_TIR;
    tilec_result *r;
    _exit((int)tilec_compile("long.tile", src, strlen(src), &o, &r));
  }
  free(src);
  int ws;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  if (!WIFEXITED(ws)) {
    print_error("the compiler crashed (signal %d)\n", WIFSIGNALED(ws) ? WTERMSIG(ws) : -1);
    fail();
  }
  assert_true(WEXITSTATUS(ws) == TILEC_OK || WEXITSTATUS(ws) == TILEC_ERR_SOURCE);
}

/* ---- names that reach the PTX ------------------------------------------ */

/* A kernel's name is its PTX entry point.  ptxas (CUDA 13.0) rejects, among
 * Tile identifiers, '_' (not a PTX identifier) and WARP_SZ (a predefined
 * constant): both passed the front end and failed in ptxas, with no source
 * location.  Instruction, type and special-register names are fine. */
static void test_kernel_names_for_ptx(void **state) {
  (void)state;
  err("kernel _(x: *f32) {\n    store(x, 1.0);\n}\n",
      "s.tile:1:8: error: a kernel cannot be named '_': its name becomes a PTX symbol, and PTX does not allow a lone "
      "'_'");
  err("fn f() { }\nkernel WARP_SZ(x: *f32) {\n    store(x, 1.0);\n}\n",
      "s.tile:2:8: error: a kernel cannot be named 'WARP_SZ': its name becomes a PTX symbol, and WARP_SZ is PTX's "
      "predefined warp-size constant");
  err("kernel DONE(x: *f32) { store(x, 1.0); }", "a kernel cannot be named 'DONE': the generated PTX uses that name");
  const char *fine[] = {"__", "_a", "a_", "warp_sz", "WARP_SZ2", "tid", "add", "ret", "u32", "global", "entry"};
  for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
    char src[128];
    snprintf(src, sizeof src, "kernel %s(x: *f32) { store(x, 1.0); }", fine[i]);
    Out o = ok(src);
    out_free(&o);
  }
  /* only kernels become symbols: functions, parameters and variables may
   * have these names */
  Out o = ok("fn _(v) { return v; }\nfn WARP_SZ() { return 32; }\n"
             "kernel k(x: *f32) { let DONE = _(1.0); store(x, DONE * WARP_SZ() as f32); }\n"
             "kernel k2(_: *f32, WARP_SZ: i32) { let DONE = WARP_SZ; store(_, DONE as f32); }");
  out_free(&o);
}

/* ---- notes naming the calls an error was inlined through ---------------- */

/* The text after the first occurrence of a, or NULL. */
static const char *after(const char *hay, const char *a) {
  const char *p = strstr(hay, a);
  return p ? p + strlen(a) : NULL;
}

/* An error inside an inlined function pointed only inside the function; now
 * it is followed by a note per call, innermost first, up to the kernel,
 * each with the caller's line and a caret under the call. */
static void test_inline_call_notes(void **state) {
  (void)state;
  Out o = tir("fn inner(v) {\n"                 /* 1 */
              "    return v + zeros([8], f32);\n" /* 2: the error */
              "}\n"                              /* 3 */
              "fn outer(v) { return inner(v); }\n" /* 4 */
              "kernel k(x: *f32) {\n"            /* 5 */
              "    let t = arange(0, 4) as f32;\n"
              "    store(x + arange(0, 4), outer(t));\n" /* 7 */
              "}\n");
  assert_int_equal(o.st, TILEC_ERR_SOURCE);
  const char *e = strstr(o.diags, "s.tile:2:14: error: ");
  const char *n1 = e ? after(e, "s.tile:4:22: note: in the call of 'inner' here\n"
                                "  fn outer(v) { return inner(v); }\n"
                                "                       ^\n") : NULL;
  const char *n2 = n1 ? after(n1, "s.tile:7:29: note: in the call of 'outer' here\n"
                                  "      store(x + arange(0, 4), outer(t));\n"
                                  "                              ^\n") : NULL;
  if (!n2) {
    print_error("wanted the error at 2:14, then notes at 4:22 (inner) and 7:29 (outer):\n%s\n", o.diags);
    fail();
  }
  assert_int_equal(count(o.diags, "note: "), 2);
  out_free(&o);

  /* the prelude's ring(n, 0): the error is in dsl/std, the notes in the user's file */
  o = tir("fn slot(i, const n) { return ring(i, n); }\n"
          "kernel k(x: *i32) {\n"
          "    let r = slot(program_id(0), 0);\n"
          "    store(x, r[0]);\n"
          "}\n");
  e = strstr(o.diags, "<tile>/std/prelude.tile:");
  n1 = e ? after(e, "s.tile:1:30: note: in the call of 'ring' here\n") : NULL;
  n2 = n1 ? after(n1, "s.tile:3:13: note: in the call of 'slot' here\n") : NULL;
  if (!n2 || !strstr(e, "error: integer division by zero")) {
    print_error("wanted the error in the prelude, then notes at 1:30 (ring) and 3:13 (slot):\n%s\n", o.diags);
    fail();
  }
  out_free(&o);

  /* an error in the kernel's own code, or in a constant a function reads,
   * names no call */
  o = tir("const C = 1 / 0;\n"
          "fn f() { return C; }\n"
          "kernel k(x: *i32) { store(x, f()); }\n");
  has(o.diags, "s.tile:1:13: error: division by zero", "diagnostics");
  lacks(o.diags, "note: ", "diagnostics");
  out_free(&o);
  o = tir("fn f(v) { return v; }\nkernel k(x: *i32) { store(x, f(1) + zeros([2], f32) + zeros([3], f32)); }");
  assert_int_equal(o.st, TILEC_ERR_SOURCE);
  lacks(o.diags, "note: ", "diagnostics");
  out_free(&o);

  /* a default argument and a missing return are the function's code too */
  o = tir("fn f(v, w = 1 / 0) { return v + w; }\nkernel k(x: *i32) { store(x, f(1)); }");
  has(o.diags, "s.tile:1:15: error: division by zero", "diagnostics");
  has(o.diags, "s.tile:2:30: note: in the call of 'f' here", "diagnostics");
  out_free(&o);
  o = tir("fn f(v) -> i32 { let a = v; }\nkernel k(x: *i32) { store(x, f(1)); }");
  has(o.diags, "error: function 'f' declares a result type but does not end with 'return'", "diagnostics");
  has(o.diags, "s.tile:2:30: note: in the call of 'f' here", "diagnostics");
  out_free(&o);

  /* recursion: the call nested in itself is one note, then the kernel's call */
  o = tir("fn f(v) { return f(v + 1); }\nkernel k(x: *i32) { store(x, f(1)); }");
  has(o.diags, "s.tile:1:18: error: calls of 'f' nest more than 64 deep", "diagnostics");
  has(o.diags, "s.tile:1:18: note: in the call of 'f' here (63 calls deep)", "diagnostics");
  has(o.diags, "s.tile:2:30: note: in the call of 'f' here", "diagnostics");
  assert_int_equal(count(o.diags, "note: "), 2);
  out_free(&o);
  /* two functions calling each other: the 6 innermost and the 4 outermost calls */
  o = tir("fn f(v) { return g(v); }\nfn g(v) { return f(v); }\nkernel k(x: *i32) { store(x, f(1)); }");
  has(o.diags, "calls of ", "diagnostics");
  has(o.diags, "tilec: note: (54 more inlined calls)", "diagnostics");
  assert_int_equal(count(o.diags, "note: "), 11);
  has(o.diags, "s.tile:3:30: note: in the call of 'f' here", "diagnostics");
  out_free(&o);

  /* an error found after inlining (lowering) keeps the calls of its op */
  o = compile_d("fn part(t) { return t.slice(1, 0, 64); }\n"
                "kernel k(x: *f32, n: i32) warps(4) {\n"
                "    let q_s = smem(bf16, [64, 128], buffers = 2);\n"
                "    let k_s = smem(bf16, [128, 128]);\n"
                "    let qr = smem_load(q_s[1]);\n"
                "    let s = zeros([64, 128], f32);\n"
                "    for i in range(0, n) {\n"
                "        if i > 2 {\n"
                "            s = mma_async(part(qr), k_s[0].slice(1, 0, 64).trans(), s);\n" /* 9 */
                "            mma_commit();\n"
                "            s = mma_wait(0, s);\n"
                "        }\n"
                "    }\n"
                "    store(x + arange(0, 64), sum(s, axis = 1));\n"
                "}\n",
                TILEC_EMIT_MLIR, NULL, 0);
  e = strstr(o.diags, "s.tile:1:23: error: this slice of bf16[64, 128] does not line up");
  if (!e || !strstr(e, "s.tile:9:27: note: in the call of 'part' here")) {
    print_error("wanted the slice error at 1:23 and a note at 9:27:\n%s\n", o.diags);
    fail();
  }
  out_free(&o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_static_assert_folding),
      cmocka_unit_test(test_math_builtins_fold),
      cmocka_unit_test(test_static_assert_failures),
      cmocka_unit_test(test_constant_errors),
      cmocka_unit_test(test_typed_constant_folding_commutes),
      cmocka_unit_test(test_bitnot_unsigned_constant),
      cmocka_unit_test(test_promotion),
      cmocka_unit_test(test_promotion_casts_in_tir),
      cmocka_unit_test(test_promotion_errors),
      cmocka_unit_test(test_operator_name_quoting),
      cmocka_unit_test(test_operators_to_tir),
      cmocka_unit_test(test_broadcast_shapes),
      cmocka_unit_test(test_inline_tuple_returns),
      cmocka_unit_test(test_compile_time_if),
      cmocka_unit_test(test_static_range),
      cmocka_unit_test(test_defines_specialize),
      cmocka_unit_test(test_define_errors),
      cmocka_unit_test(test_builtin_errors),
      cmocka_unit_test(test_constant_masks),
      cmocka_unit_test(test_false_mask_is_honoured),
      cmocka_unit_test(test_two_kernels),
      cmocka_unit_test(test_long_expression_does_not_crash),
      cmocka_unit_test(test_kernel_names_for_ptx),
      cmocka_unit_test(test_inline_call_notes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_lexer.c - unit tests for compiler/lexer.re: the kind, value and
 * location of every token class, line/column tracking across comments and
 * strings, and lexical errors (each reported, the token stream still ending
 * with TK_EOF).  Uses the internal API (lx_tokenize on a hand-built Ctx);
 * one test goes through tilec_compile(TILEC_EMIT_TOKENS). */
#include "testutil.h"
#include "tilec_int.h"

/* For a test of a compiler bug not fixed yet (commented "KNOWN BUG: ..."):
 * cmocka's skip(), unless TILE_TEST_KNOWN_BUGS=1 asks to run it. */
#define KNOWN_BUG(why)                                                   \
  do {                                                                   \
    if (!getenv("TILE_TEST_KNOWN_BUGS")) {                               \
      print_message("[ KNOWN BUG ] %s\n", why);                          \
      skip();                                                            \
    }                                                                    \
  } while (0)

/* ---- a lexer run ------------------------------------------------------- */

typedef struct Lex {
  Ctx c;
  Source src;
  Token *t;
  int n;
} Lex;

static Lex *lex_n(const char *text, size_t len, int max_errors) {
  Lex *L = calloc(1, sizeof *L);
  ar_init(&L->c.arena);
  tilec_options_init(&L->c.opts);
  L->c.opts.max_errors = max_errors;
  L->c.sm = 90;
  L->c.arch = "sm_90a";
  /* the lexer wants a NUL-terminated copy, like compile.c makes */
  char *copy = ar_alloc(&L->c.arena, len + 1);
  memcpy(copy, text, len);
  L->src.name = "t.tile";
  L->src.text = copy;
  L->src.len = len;
  L->t = lx_tokenize(&L->c, &L->src, &L->n);
  /* invariants of every run */
  assert_non_null(L->t);
  assert_true(L->n >= 1);
  assert_int_equal(L->t[L->n - 1].kind, TK_EOF);
  for (int i = 0; i < L->n - 1; i++) assert_int_not_equal(L->t[i].kind, TK_EOF);
  for (int i = 0; i < L->n; i++) {
    assert_true(L->t[i].loc.line >= 1);
    assert_true(L->t[i].loc.col >= 1);
    assert_ptr_equal(L->t[i].loc.src, &L->src);
  }
  return L;
}

static Lex *lex(const char *text) { return lex_n(text, strlen(text), 20); }

static void lex_free(Lex *L) {
  buf_free(&L->c.diags);
  ar_free(&L->c.arena);
  free(L);
}

static const char *diags(Lex *L) { return L->c.diags.data ? L->c.diags.data : ""; }

static void expect_no_errors(Lex *L) {
  if (L->c.nerrors) {
    print_error("unexpected diagnostics:\n%s\n", diags(L));
    fail();
  }
}

static void expect_diag(Lex *L, const char *want) {
  if (!strstr(diags(L), want)) {
    print_error("diagnostics do not contain '%s':\n%s\n", want, diags(L));
    fail();
  }
}

/* Token i has this kind and location. */
static void tok_at(Lex *L, int i, TokKind k, int line, int col) {
  assert_true(i < L->n);
  Token *t = &L->t[i];
  if (t->kind != k || t->loc.line != line || t->loc.col != col) {
    print_error("token %d: %s at %d:%d, want %s at %d:%d\n", i, lx_kind_name(t->kind), t->loc.line, t->loc.col,
                lx_kind_name(k), line, col);
    fail();
  }
}

/* The kinds of all tokens (without the EOF) are exactly `kinds`. */
static void kinds_are(Lex *L, const TokKind *kinds, int n) {
  if (L->n - 1 != n) {
    print_error("%d tokens, want %d\n", L->n - 1, n);
    fail();
  }
  for (int i = 0; i < n; i++)
    if (L->t[i].kind != kinds[i]) {
      print_error("token %d is %s, want %s\n", i, lx_kind_name(L->t[i].kind), lx_kind_name(kinds[i]));
      fail();
    }
}

/* ---- keywords and identifiers ---------------------------------------- */

static void test_keywords(void **state) {
  (void)state;
  static const struct {
    const char *s;
    TokKind k;
  } kw[] = {{"kernel", TK_KERNEL}, {"fn", TK_FN},       {"let", TK_LET},       {"const", TK_CONST},
            {"if", TK_IF},         {"else", TK_ELSE},   {"for", TK_FOR},       {"in", TK_IN},
            {"while", TK_WHILE},   {"return", TK_RETURN}, {"import", TK_IMPORT}, {"true", TK_TRUE},
            {"false", TK_FALSE},   {"as", TK_AS},       {"tasks", TK_TASKS},   {"task", TK_TASK},
            {"None", TK_NONE}};
  char text[512] = "";
  int col[32], c = 1;
  for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++) {
    col[i] = c;
    strcat(text, kw[i].s);
    strcat(text, " ");
    c += (int)strlen(kw[i].s) + 1;
  }
  Lex *L = lex(text);
  expect_no_errors(L);
  assert_int_equal(L->n, (int)(sizeof kw / sizeof kw[0]) + 1);
  for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++) {
    tok_at(L, (int)i, kw[i].k, 1, col[i]);
    assert_int_equal(L->t[i].len, (int)strlen(kw[i].s));
    assert_memory_equal(L->t[i].start, kw[i].s, strlen(kw[i].s));
  }
  lex_free(L);
  /* near-keywords are identifiers; keywords are case sensitive */
  L = lex("kernels fn_ Let none NONE iff _if as2 t_rue");
  expect_no_errors(L);
  const char *ids[] = {"kernels", "fn_", "Let", "none", "NONE", "iff", "_if", "as2", "t_rue"};
  assert_int_equal(L->n, 10);
  for (int i = 0; i < 9; i++) {
    assert_int_equal(L->t[i].kind, TK_IDENT);
    assert_string_equal(L->t[i].str, ids[i]);
  }
  lex_free(L);
}

static void test_identifiers(void **state) {
  (void)state;
  Lex *L = lex("x _ _x9 Abc_DEF a1b2 __init__ x\ty");
  expect_no_errors(L);
  const char *ids[] = {"x", "_", "_x9", "Abc_DEF", "a1b2", "__init__", "x", "y"};
  int cols[] = {1, 3, 5, 9, 17, 22, 31, 33};
  assert_int_equal(L->n, 9);
  for (int i = 0; i < 8; i++) {
    tok_at(L, i, TK_IDENT, 1, cols[i]);
    assert_string_equal(L->t[i].str, ids[i]);
  }
  lex_free(L);
  /* 255 characters is fine, 256 is an error (the token is still there) */
  char big[300];
  memset(big, 'a', 255);
  big[255] = 0;
  L = lex(big);
  expect_no_errors(L);
  assert_int_equal(L->t[0].kind, TK_IDENT);
  assert_int_equal(strlen(L->t[0].str), 255);
  lex_free(L);
  memset(big, 'b', 256);
  big[256] = 0;
  L = lex(big);
  assert_int_equal(L->c.nerrors, 1);
  expect_diag(L, "identifier is too long (256 characters");
  assert_int_equal(L->t[0].kind, TK_IDENT);
  assert_int_equal(L->n, 2);
  lex_free(L);
}

/* ---- numbers ---------------------------------------------------------- */

static void test_integers(void **state) {
  (void)state;
  static const struct {
    const char *s;
    uint64_t v;
  } ints[] = {
      {"0", 0},
      {"7", 7},
      {"1234567890", 1234567890ull},
      {"1_000_000", 1000000},
      {"0x0", 0},
      {"0xff", 255},
      {"0XFF", 255},
      {"0xDead_Beef", 0xdeadbeefull},
      {"0x7fff_ffff_ffff_ffff", 0x7fffffffffffffffull},
      {"0xFFFFFFFFFFFFFFFF", 0xffffffffffffffffull},
      {"0b0", 0},
      {"0b1010", 10},
      {"0B1111_0000", 240},
      {"18446744073709551615", 18446744073709551615ull},
      {"9223372036854775808", 9223372036854775808ull},
      {"007", 7},
  };
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    char text[64];
    snprintf(text, sizeof text, "  %s;", ints[i].s);
    Lex *L = lex(text);
    expect_no_errors(L);
    assert_int_equal(L->n, 3);
    tok_at(L, 0, TK_INT, 1, 3);
    if (L->t[0].ival != ints[i].v) {
      print_error("%s lexed as %llu\n", ints[i].s, (unsigned long long)L->t[0].ival);
      fail();
    }
    assert_false(L->t[0].overflow);
    assert_int_equal(L->t[0].len, (int)strlen(ints[i].s));
    tok_at(L, 1, TK_SEMI, 1, 3 + (int)strlen(ints[i].s));
    lex_free(L);
  }
}

static void test_integer_overflow(void **state) {
  (void)state;
  const char *bad[] = {"18446744073709551616", "99999999999999999999999", "0x1_0000_0000_0000_0000",
                       "0b1" "0000000000000000000000000000000000000000000000000000000000000000"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[128];
    snprintf(text, sizeof text, "x = %s + 1", bad[i]);
    Lex *L = lex(text);
    assert_int_equal(L->c.nerrors, 1);
    expect_diag(L, "does not fit in 64 bits");
    expect_diag(L, "t.tile:1:5: error");
    /* the token is still there, marked, and lexing goes on */
    assert_int_equal(L->n, 6);
    tok_at(L, 2, TK_INT, 1, 5);
    assert_true(L->t[2].overflow);
    tok_at(L, 3, TK_PLUS, 1, 6 + (int)strlen(bad[i]));
    tok_at(L, 4, TK_INT, 1, 8 + (int)strlen(bad[i]));
    assert_int_equal(L->t[4].ival, 1);
    lex_free(L);
  }
}

static void test_floats(void **state) {
  (void)state;
  static const struct {
    const char *s;
    double v;
  } fl[] = {
      {"0.0", 0.0},     {"1.5", 1.5},         {"3.25e2", 325.0},   {"1e3", 1000.0},       {"1E3", 1000.0},
      {"2.5e-3", 2.5e-3}, {"7e+2", 700.0},    {"1_000.5", 1000.5}, {"0.000_001", 1e-6},   {"1.0e308", 1e308},
      {"6.02214076e23", 6.02214076e23},       {"1e-400", 0.0},
  };
  for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) {
    char text[64];
    snprintf(text, sizeof text, "(%s)", fl[i].s);
    Lex *L = lex(text);
    expect_no_errors(L);
    assert_int_equal(L->n, 4);
    tok_at(L, 1, TK_FLOAT, 1, 2);
    if (L->t[1].fval != fl[i].v) {
      print_error("%s lexed as %.17g, want %.17g\n", fl[i].s, L->t[1].fval, fl[i].v);
      fail();
    }
    tok_at(L, 2, TK_RPAREN, 1, 2 + (int)strlen(fl[i].s));
    lex_free(L);
  }
  /* a dot is not part of a number unless digits follow it */
  Lex *L = lex("1.x .5 3..4 t.0");
  expect_no_errors(L);
  TokKind k[] = {TK_INT, TK_DOT, TK_IDENT, TK_DOT, TK_INT, TK_INT, TK_DOT, TK_DOT, TK_INT, TK_IDENT, TK_DOT, TK_INT};
  kinds_are(L, k, 12);
  assert_int_equal(L->t[4].ival, 5);
  lex_free(L);
  /* out of range */
  L = lex("1e999 2.0");
  assert_int_equal(L->c.nerrors, 1);
  expect_diag(L, "floating-point literal '1e999' is out of range");
  tok_at(L, 0, TK_FLOAT, 1, 1);
  assert_true(L->t[0].overflow);
  tok_at(L, 1, TK_FLOAT, 1, 7);
  lex_free(L);
}

/* Regression (found by this suite; fixed in a27b98b): a float literal of
 * 128 characters or more was reported "out of range" although its value is
 * an ordinary double (the lexer copied it into a 128-byte buffer and treated
 * a longer literal as an overflow). */
static void test_long_float_literal(void **state) {
  (void)state;
  char text[300] = "0.";
  for (int i = 0; i < 150; i++) strcat(text, "0");
  strcat(text, "1");
  Lex *L = lex(text);
  expect_no_errors(L);
  tok_at(L, 0, TK_FLOAT, 1, 1);
  assert_true(L->t[0].fval > 0.99e-151 && L->t[0].fval < 1.01e-151);
  lex_free(L);
}

static void test_bad_numbers(void **state) {
  (void)state;
  const char *bad[] = {"12abc", "0x", "0b", "0b102", "1_", "1__0", "0xg"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[64];
    snprintf(text, sizeof text, "%s ;", bad[i]);
    Lex *L = lex(text);
    if (L->c.nerrors < 1) {
      print_error("'%s' lexed without an error\n", bad[i]);
      fail();
    }
    expect_diag(L, "t.tile:1:1: error");
    assert_int_equal(L->t[L->n - 2].kind, TK_SEMI);
    lex_free(L);
  }
  Lex *L = lex("12abc");
  expect_diag(L, "invalid number '12abc'");
  lex_free(L);
}

/* ---- strings ---------------------------------------------------------- */

static void test_strings(void **state) {
  (void)state;
  Lex *L = lex("import \"std/x.tile\"; \"a\\nb\\tc\\\\d\\\"e\" \"\" \"// not a comment /* nor this */\"");
  expect_no_errors(L);
  TokKind k[] = {TK_IMPORT, TK_STRING, TK_SEMI, TK_STRING, TK_STRING, TK_STRING};
  kinds_are(L, k, 6);
  tok_at(L, 1, TK_STRING, 1, 8);
  assert_string_equal(L->t[1].str, "std/x.tile");
  assert_int_equal(L->t[1].len, 12);
  tok_at(L, 3, TK_STRING, 1, 22);
  assert_string_equal(L->t[3].str, "a\nb\tc\\d\"e");
  assert_string_equal(L->t[4].str, "");
  assert_string_equal(L->t[5].str, "// not a comment /* nor this */");
  lex_free(L);
  /* \0 decodes to a NUL byte */
  L = lex("\"ab\\0cd\" x");
  expect_no_errors(L);
  assert_int_equal(L->t[0].str[2], 0);
  assert_int_equal(L->t[0].str[3], 'c');
  tok_at(L, 1, TK_IDENT, 1, 10);
  lex_free(L);
  /* unknown escapes are errors at the backslash; the string survives */
  L = lex("\"ok\\q\" y");
  assert_int_equal(L->c.nerrors, 1);
  expect_diag(L, "t.tile:1:4: error: unknown escape sequence '\\q'");
  tok_at(L, 0, TK_STRING, 1, 1);
  tok_at(L, 1, TK_IDENT, 1, 8);
  lex_free(L);
}

static void test_unterminated_string(void **state) {
  (void)state;
  Lex *L = lex("let s = \"abc\nlet t = 1;");
  assert_int_equal(L->c.nerrors, 1);
  expect_diag(L, "t.tile:1:9: error: unterminated string literal");
  /* the rest of line 1 is skipped, line 2 is lexed normally */
  TokKind k[] = {TK_LET, TK_IDENT, TK_ASSIGN, TK_LET, TK_IDENT, TK_ASSIGN, TK_INT, TK_SEMI};
  kinds_are(L, k, 8);
  tok_at(L, 3, TK_LET, 2, 1);
  tok_at(L, 6, TK_INT, 2, 9);
  lex_free(L);
  /* at the very end of the input, and with an escaped quote at the end */
  L = lex("x \"abc");
  assert_int_equal(L->c.nerrors, 1);
  expect_diag(L, "unterminated string literal");
  tok_at(L, 1, TK_EOF, 1, 7);
  lex_free(L);
  L = lex("\"abc\\\"");
  assert_int_equal(L->c.nerrors, 1);
  expect_diag(L, "unterminated string literal");
  lex_free(L);
}

/* ---- operators and punctuation --------------------------------------- */

static void test_operators(void **state) {
  (void)state;
  static const struct {
    const char *s;
    TokKind k;
  } ops[] = {
      {"(", TK_LPAREN},  {")", TK_RPAREN},     {"[", TK_LBRACK},   {"]", TK_RBRACK},     {"{", TK_LBRACE},
      {"}", TK_RBRACE},  {",", TK_COMMA},      {";", TK_SEMI},     {":", TK_COLON},      {".", TK_DOT},
      {"->", TK_ARROW},  {"=", TK_ASSIGN},     {"+", TK_PLUS},     {"-", TK_MINUS},      {"*", TK_STAR},
      {"/", TK_SLASH},   {"%", TK_PERCENT},    {"&", TK_AMP},      {"|", TK_PIPE},       {"^", TK_CARET},
      {"~", TK_TILDE},   {"!", TK_BANG},       {"<<", TK_SHL},     {">>", TK_SHR},       {"==", TK_EQ},
      {"!=", TK_NE},     {"<", TK_LT},         {"<=", TK_LE},      {">", TK_GT},         {">=", TK_GE},
      {"&&", TK_ANDAND}, {"||", TK_OROR},      {"+=", TK_PLUSEQ},  {"-=", TK_MINUSEQ},   {"*=", TK_STAREQ},
      {"/=", TK_SLASHEQ}, {"%=", TK_PERCENTEQ}, {"&=", TK_AMPEQ},  {"|=", TK_PIPEEQ},    {"^=", TK_CARETEQ},
      {"<<=", TK_SHLEQ}, {">>=", TK_SHREQ},
  };
  int nops = (int)(sizeof ops / sizeof ops[0]);
  /* each alone, between identifiers without spaces: a<<=b */
  for (int i = 0; i < nops; i++) {
    char text[32];
    snprintf(text, sizeof text, "a%sb", ops[i].s);
    Lex *L = lex(text);
    expect_no_errors(L);
    TokKind k[] = {TK_IDENT, ops[i].k, TK_IDENT};
    kinds_are(L, k, 3);
    tok_at(L, 1, ops[i].k, 1, 2);
    assert_int_equal(L->t[1].len, (int)strlen(ops[i].s));
    tok_at(L, 2, TK_IDENT, 1, 2 + (int)strlen(ops[i].s));
    /* lx_kind_name names the operator */
    char q[16];
    snprintf(q, sizeof q, "'%s'", ops[i].s);
    assert_string_equal(lx_kind_name(ops[i].k), q);
    lex_free(L);
  }
  /* all of them separated by spaces, in one line */
  char text[512] = "";
  for (int i = 0; i < nops; i++) {
    strcat(text, ops[i].s);
    strcat(text, " ");
  }
  Lex *L = lex(text);
  expect_no_errors(L);
  assert_int_equal(L->n, nops + 1);
  int col = 1;
  for (int i = 0; i < nops; i++) {
    tok_at(L, i, ops[i].k, 1, col);
    col += (int)strlen(ops[i].s) + 1;
  }
  lex_free(L);
  /* longest match */
  L = lex("<<<=>>>=->-->=!==&&&|||");
  expect_no_errors(L);
  TokKind k[] = {TK_SHL, TK_LE, TK_SHR, TK_GE, TK_ARROW, TK_MINUS, TK_ARROW, TK_ASSIGN, TK_NE, TK_ASSIGN,
                 TK_ANDAND, TK_AMP, TK_OROR, TK_PIPE};
  kinds_are(L, k, 14);
  lex_free(L);
}

/* ---- locations -------------------------------------------------------- */

static void test_lines_and_columns(void **state) {
  (void)state;
  const char *src =
      "kernel k(x: *f32) {\n"        /* line 1 */
      "\tlet a = 1; // comment \"with a quote\n" /* line 2: tab is one column */
      "  /* block\n"                  /* line 3 */
      "     comment */ let b = \"s // t\"; let c\n" /* line 4 */
      "\r\n"                          /* line 5: CRLF is one line break */
      "   /**/ d /* x */ e\n"         /* line 6 */
      "}";                            /* line 7 */
  Lex *L = lex(src);
  expect_no_errors(L);
  tok_at(L, 0, TK_KERNEL, 1, 1);
  tok_at(L, 1, TK_IDENT, 1, 8);
  tok_at(L, 2, TK_LPAREN, 1, 9);
  tok_at(L, 5, TK_STAR, 1, 13);
  tok_at(L, 8, TK_LBRACE, 1, 19);
  tok_at(L, 9, TK_LET, 2, 2);
  tok_at(L, 10, TK_IDENT, 2, 6);
  tok_at(L, 13, TK_SEMI, 2, 11);
  tok_at(L, 14, TK_LET, 4, 17);
  tok_at(L, 15, TK_IDENT, 4, 21);
  tok_at(L, 16, TK_ASSIGN, 4, 23);
  tok_at(L, 17, TK_STRING, 4, 25);
  assert_string_equal(L->t[17].str, "s // t");
  tok_at(L, 18, TK_SEMI, 4, 33);
  tok_at(L, 19, TK_LET, 4, 35);
  tok_at(L, 20, TK_IDENT, 4, 39);
  tok_at(L, 21, TK_IDENT, 6, 9);
  tok_at(L, 22, TK_IDENT, 6, 19);
  tok_at(L, 23, TK_RBRACE, 7, 1);
  tok_at(L, 24, TK_EOF, 7, 2);
  assert_int_equal(L->n, 25);
  lex_free(L);
  /* EOF after a final newline is on the next line */
  L = lex("a\n\n");
  tok_at(L, 1, TK_EOF, 3, 1);
  lex_free(L);
  L = lex("");
  assert_int_equal(L->n, 1);
  tok_at(L, 0, TK_EOF, 1, 1);
  expect_no_errors(L);
  lex_free(L);
  /* a line comment at the very end, without a newline */
  L = lex("x // end");
  expect_no_errors(L);
  assert_int_equal(L->n, 2);
  lex_free(L);
}

/* A lone CR (old Mac files) ends a line like LF; CRLF is one break.  Before,
 * CR was whitespace: a CR-only file was all on line 1. */
static void test_cr_line_endings(void **state) {
  (void)state;
  Lex *L = lex("a\rb\r\nc\n\rd\r\re");
  expect_no_errors(L);
  tok_at(L, 0, TK_IDENT, 1, 1);
  tok_at(L, 1, TK_IDENT, 2, 1);
  tok_at(L, 2, TK_IDENT, 3, 1); /* CRLF: one break */
  tok_at(L, 3, TK_IDENT, 5, 1); /* LF CR: two */
  tok_at(L, 4, TK_IDENT, 7, 1);
  lex_free(L);
  /* a line comment ends at a CR; a block comment and a string count them */
  L = lex("x // c\r  y /* \r\r\n */ z\r \"s\" w");
  expect_no_errors(L);
  tok_at(L, 0, TK_IDENT, 1, 1);
  tok_at(L, 1, TK_IDENT, 2, 3);
  tok_at(L, 2, TK_IDENT, 4, 5);
  tok_at(L, 3, TK_STRING, 5, 2);
  tok_at(L, 4, TK_IDENT, 5, 6);
  tok_at(L, 5, TK_EOF, 5, 7);
  lex_free(L);
  /* a string does not run over a CR: it is unterminated, the next line lexes */
  L = lex("\"ab\rq");
  assert_int_equal(L->c.nerrors, 1);
  expect_diag(L, "t.tile:1:1: error: unterminated string literal");
  tok_at(L, 0, TK_IDENT, 2, 1);
  lex_free(L);
  /* the diagnostic names the line and prints it (without the CR) */
  L = lex("let a = 1;\rlet b = 2;\rlet c = @;\rlet d = 4;\r");
  assert_int_equal(L->c.nerrors, 1);
  expect_diag(L, "t.tile:3:9: error: unexpected character '@'\n"
                 "  let c = @;\n"
                 "          ^\n");
  lex_free(L);
  L = lex("let a = 1;\r\nlet c = @;\r\n");
  expect_diag(L, "t.tile:2:9: error: unexpected character '@'\n"
                 "  let c = @;\n"
                 "          ^\n");
  lex_free(L);
  /* a CR at the very end, and one before LF at the very end */
  L = lex("a\r");
  tok_at(L, 1, TK_EOF, 2, 1);
  lex_free(L);
  L = lex("a\r\n");
  tok_at(L, 1, TK_EOF, 2, 1);
  lex_free(L);
}

static void test_unterminated_comment(void **state) {
  (void)state;
  Lex *L = lex("a /* never\nclosed\n b c");
  assert_int_equal(L->c.nerrors, 1);
  expect_diag(L, "t.tile:1:3: error: unterminated comment");
  assert_int_equal(L->n, 2);
  tok_at(L, 0, TK_IDENT, 1, 1);
  assert_int_equal(L->t[1].kind, TK_EOF);
  assert_int_equal(L->t[1].loc.line, 3);
  lex_free(L);
  /* the shortest cases */
  const char *cases[] = {"/*", "/*/", "/* *", "x/**"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    L = lex(cases[i]);
    assert_int_equal(L->c.nerrors, 1);
    expect_diag(L, "unterminated comment");
    lex_free(L);
  }
  L = lex("/**/x/***/y/* * / */z");
  expect_no_errors(L);
  TokKind k[] = {TK_IDENT, TK_IDENT, TK_IDENT};
  kinds_are(L, k, 3);
  tok_at(L, 2, TK_IDENT, 1, 21);
  lex_free(L);
}

/* ---- bad bytes -------------------------------------------------------- */

static void test_bad_bytes(void **state) {
  (void)state;
  Lex *L = lex("a @ b $ c ` d");
  assert_int_equal(L->c.nerrors, 3);
  expect_diag(L, "t.tile:1:3: error: unexpected character '@'");
  expect_diag(L, "t.tile:1:7: error: unexpected character '$'");
  expect_diag(L, "t.tile:1:11: error: unexpected character '`'");
  TokKind k[] = {TK_IDENT, TK_IDENT, TK_IDENT, TK_IDENT};
  kinds_are(L, k, 4);
  tok_at(L, 3, TK_IDENT, 1, 13);
  lex_free(L);
  /* control and non-ASCII bytes, and a NUL inside the text */
  static const char raw[] = {'x', ' ', 0x01, ' ', (char)0xc3, (char)0xa9, ' ', 0, ' ', 'y', 0x7f};
  L = lex_n(raw, sizeof raw, 20);
  assert_int_equal(L->c.nerrors, 5);
  expect_diag(L, "t.tile:1:3: error: unexpected byte 0x01 in source");
  expect_diag(L, "t.tile:1:5: error: unexpected byte 0xc3 in source");
  expect_diag(L, "t.tile:1:6: error: unexpected byte 0xa9 in source");
  expect_diag(L, "t.tile:1:8: error: unexpected byte 0x00 in source");
  expect_diag(L, "t.tile:1:11: error: unexpected byte 0x7f in source");
  TokKind k2[] = {TK_IDENT, TK_IDENT};
  kinds_are(L, k2, 2);
  tok_at(L, 1, TK_IDENT, 1, 10);
  /* the caret line never echoes raw control bytes */
  for (const char *p = diags(L); *p; p++)
    assert_true((unsigned char)*p >= 32 || *p == '\n' || *p == '\t');
  lex_free(L);
}

/* After max_errors the lexer stops but still ends the stream with EOF. */
static void test_error_limit(void **state) {
  (void)state;
  char text[256] = "";
  for (int i = 0; i < 40; i++) strcat(text, "@ ");
  Lex *L = lex_n(text, strlen(text), 5);
  /* five errors are printed (the attempt past the limit may be counted and
   * reported as "too many errors"), then lexing stops */
  assert_true(L->c.nerrors == 5 || L->c.nerrors == 6);
  int printed = 0;
  for (const char *p = diags(L); (p = strstr(p, "error: unexpected character '@'")); p++) printed++;
  assert_int_equal(printed, 5);
  assert_int_equal(L->n, 1);
  assert_int_equal(L->t[0].kind, TK_EOF);
  lex_free(L);
  /* every kind of error at once, each reported once */
  const char *mix = "@ 99999999999999999999 \"bad\\q\" 1e999 12ab \"open\n/* open";
  L = lex(mix);
  assert_int_equal(L->c.nerrors, 7);
  expect_diag(L, "unexpected character '@'");
  expect_diag(L, "does not fit in 64 bits");
  expect_diag(L, "unknown escape sequence");
  expect_diag(L, "out of range");
  expect_diag(L, "invalid number");
  expect_diag(L, "unterminated string literal");
  expect_diag(L, "unterminated comment");
  lex_free(L);
}

/* Arbitrary bytes never crash the lexer and always end with EOF. */
static void test_random_bytes(void **state) {
  (void)state;
  unsigned seed = 12345;
  for (int iter = 0; iter < 2000; iter++) {
    char buf[200];
    int n = (int)(seed % 199) + 1;
    for (int i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      /* bias towards interesting characters */
      static const char interesting[] = "\"\\/*\n0x1e_.<>=&|!abc \t";
      buf[i] = (seed >> 16) % 3 ? interesting[(seed >> 8) % (sizeof interesting - 1)] : (char)(seed >> 20);
    }
    Lex *L = lex_n(buf, (size_t)n, 1000);
    /* tokens are in order and inside the text */
    for (int i = 0; i + 1 < L->n; i++) {
      assert_true(L->t[i].start >= L->src.text && L->t[i].start + L->t[i].len <= L->src.text + n);
      if (i) assert_true(L->t[i].start >= L->t[i - 1].start + L->t[i - 1].len);
    }
    lex_free(L);
  }
}

/* ---- through the public API ------------------------------------------- */

static void test_emit_tokens(void **state) {
  (void)state;
  const char *src = "kernel k(x: *f32) {\n  let v = 0x10 + 2.5e1; // c\n  x <<= \"s\";\n}\n";
  tilec_options o;
  tilec_options_init(&o);
  o.emit = TILEC_EMIT_TOKENS;
  tilec_result *r = NULL;
  assert_int_equal(tilec_compile("k.tile", src, strlen(src), &o, &r), TILEC_OK);
  size_t len = 0;
  const char *out = tilec_result_output(r, &len);
  assert_int_equal(strlen(out), len);
  const char *want =
      "1:1\t'kernel'\n"
      "1:8\tidentifier\tk\n"
      "1:9\t'('\n"
      "1:10\tidentifier\tx\n"
      "1:11\t':'\n"
      "1:13\t'*'\n"
      "1:14\tidentifier\tf32\n"
      "1:17\t')'\n"
      "1:19\t'{'\n"
      "2:3\t'let'\n"
      "2:7\tidentifier\tv\n"
      "2:9\t'='\n"
      "2:11\tinteger\t16\n"
      "2:16\t'+'\n"
      "2:18\tfloat\t25\n"
      "2:23\t';'\n"
      "3:3\tidentifier\tx\n"
      "3:5\t'<<='\n"
      "3:9\tstring\t\"s\"\n"
      "3:12\t';'\n"
      "4:1\t'}'\n"
      "5:1\tend of file\n";
  assert_string_equal(out, want);
  assert_string_equal(tilec_result_diagnostics(r), "");
  tilec_result_free(r);
  /* a lexical error: status SOURCE, the diagnostic names the file */
  const char *bad = "let a = 1 @ 2;";
  assert_int_equal(tilec_compile("bad.tile", bad, strlen(bad), &o, &r), TILEC_ERR_SOURCE);
  assert_non_null(strstr(tilec_result_diagnostics(r), "bad.tile:1:11: error: unexpected character '@'"));
  assert_int_equal(tilec_result_error_count(r), 1);
  out = tilec_result_output(r, &len);
  assert_non_null(strstr(out, "end of file"));
  tilec_result_free(r);
  /* the source need not be NUL terminated: only len bytes are read */
  const char buf[] = {'a', 'b', ' ', 'c', 'd', '@'};
  assert_int_equal(tilec_compile("nt.tile", buf, 5, &o, &r), TILEC_OK);
  out = tilec_result_output(r, &len);
  assert_string_equal(out, "1:1\tidentifier\tab\n1:4\tidentifier\tcd\n1:6\tend of file\n");
  tilec_result_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_keywords),
      cmocka_unit_test(test_identifiers),
      cmocka_unit_test(test_integers),
      cmocka_unit_test(test_integer_overflow),
      cmocka_unit_test(test_floats),
      cmocka_unit_test(test_long_float_literal),
      cmocka_unit_test(test_bad_numbers),
      cmocka_unit_test(test_strings),
      cmocka_unit_test(test_unterminated_string),
      cmocka_unit_test(test_operators),
      cmocka_unit_test(test_lines_and_columns),
      cmocka_unit_test(test_cr_line_endings),
      cmocka_unit_test(test_unterminated_comment),
      cmocka_unit_test(test_bad_bytes),
      cmocka_unit_test(test_error_limit),
      cmocka_unit_test(test_random_bytes),
      cmocka_unit_test(test_emit_tokens),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

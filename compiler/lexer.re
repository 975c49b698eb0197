/* lexer.re - the Tile lexer (re2c source; the build generates lexer.c).
 *
 * lx_tokenize turns a whole source into an array of tokens ending with
 * TK_EOF.  Lexical errors are reported and skipped, so the parser still sees
 * a token stream; any byte sequence is accepted without crashing. */
#include "tilec_int.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Lexer {
  Ctx *c;
  const Source *src;
  const unsigned char *base, *end, *cur, *tok, *marker, *ctxmarker;
  const unsigned char *line_start;
  int line;
  Token *toks; /* malloc'ed while lexing (see push) */
  size_t ntoks, cap;
} Lexer;

static Loc loc_at(Lexer *L, const unsigned char *p) {
  /* p is on the current line or after it: count newlines from line_start. */
  return (Loc){L->src, L->line, (int)(p - L->line_start) + 1};
}

/* A line ends at LF, CRLF (one break) or a lone CR (old Mac files); p is
 * the byte that ends it. */
static bool line_end(Lexer *L, const unsigned char *p) {
  return *p == '\n' || (*p == '\r' && (p + 1 >= L->end || p[1] != '\n'));
}

/* Advance line bookkeeping over [from, to). */
static void count_lines(Lexer *L, const unsigned char *from, const unsigned char *to) {
  for (const unsigned char *p = from; p < to; p++)
    if (line_end(L, p)) {
      L->line++;
      L->line_start = p + 1;
    }
}

/* Where tokens go once memory ran out (the arena's `failed` says so). */
static _Thread_local Token lx_scratch;

/* Tokens go straight into one growing array, which lx_tokenize copies into
 * the arena once, at its exact size: sizeof(Token) a token, not an arena
 * token plus a pointer to it plus a copy (a third of the memory). */
static Token *push(Lexer *L, TokKind k, const unsigned char *s, const unsigned char *e, Loc loc) {
  if (L->ntoks == L->cap) {
    size_t cap = L->cap ? L->cap * 2 : 1024;
    Token *nt = cap <= INT32_MAX ? realloc(L->toks, cap * sizeof *nt) : NULL;
    if (!nt) {
      L->c->arena.failed = true;
      memset(&lx_scratch, 0, sizeof lx_scratch);
      return &lx_scratch;
    }
    L->toks = nt;
    L->cap = cap;
  }
  Token *t = &L->toks[L->ntoks++];
  memset(t, 0, sizeof *t);
  t->kind = k;
  t->loc = loc;
  t->start = (const char *)s;
  t->len = (int)(e - s);
  return t;
}

/* Copy the n tokens into arr (fresh arena memory, untouched until written)
 * from the end, a quarter of what is left at a time, shrinking the growing
 * array behind the copy: the two never both hold every token (at most 1.25
 * copies at once instead of 2). */
static void move_tokens(Lexer *L, Token *arr, size_t n) {
  size_t left = n;
  while (left) {
    size_t k = left / 4 > 16384 ? left / 4 : left;
    left -= k;
    memcpy(arr + left, L->toks + left, k * sizeof(Token));
    Token *p = left ? realloc(L->toks, left * sizeof(Token)) : NULL;
    if (p) L->toks = p;
  }
}

static const struct {
  const char *s;
  TokKind k;
} keywords[] = {
    {"kernel", TK_KERNEL}, {"fn", TK_FN},       {"let", TK_LET},         {"const", TK_CONST},
    {"if", TK_IF},         {"else", TK_ELSE},   {"for", TK_FOR},         {"in", TK_IN},
    {"while", TK_WHILE},   {"return", TK_RETURN}, {"import", TK_IMPORT}, {"true", TK_TRUE},
    {"false", TK_FALSE},   {"as", TK_AS},       {"tasks", TK_TASKS},     {"task", TK_TASK},
    {"None", TK_NONE},
};

static void ident(Lexer *L, Loc loc) {
  size_t n = (size_t)(L->cur - L->tok);
  for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
    if (strlen(keywords[i].s) == n && !memcmp(keywords[i].s, L->tok, n)) {
      push(L, keywords[i].k, L->tok, L->cur, loc);
      return;
    }
  if (n > 255) {
    dg_error(L->c, loc, "identifier is too long (%zu characters; the limit is 255)", n);
    n = 255;
  }
  Token *t = push(L, TK_IDENT, L->tok, L->cur, loc);
  t->str = ar_strndup(&L->c->arena, (const char *)L->tok, n);
}

static void int_lit(Lexer *L, Loc loc, int base, int skip) {
  Token *t = push(L, TK_INT, L->tok, L->cur, loc);
  uint64_t v = 0;
  bool ovf = false;
  for (const unsigned char *p = L->tok + skip; p < L->cur; p++) {
    if (*p == '_') continue;
    int d = *p >= 'a' ? *p - 'a' + 10 : *p >= 'A' ? *p - 'A' + 10 : *p - '0';
    if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) ovf = true;
    v = v * (uint64_t)base + (uint64_t)d;
  }
  t->ival = v;
  t->overflow = ovf;
  if (ovf) dg_error(L->c, loc, "integer literal '%.*s' does not fit in 64 bits", t->len > 40 ? 40 : t->len, t->start);
}

static void float_lit(Lexer *L, Loc loc) {
  Token *t = push(L, TK_FLOAT, L->tok, L->cur, loc);
  char *tmp = ar_alloc(&L->c->arena, (size_t)(L->cur - L->tok) + 1);
  size_t n = 0;
  for (const unsigned char *p = L->tok; p < L->cur; p++)
    if (*p != '_') tmp[n++] = (char)*p;
  tmp[n] = 0;
  errno = 0;
  t->fval = strtod(tmp, NULL);
  if (isinf(t->fval)) {
    t->overflow = true;
    dg_error(L->c, loc, "floating-point literal '%.*s' is out of range", t->len > 40 ? 40 : t->len, t->start);
  }
}

/* Decode a string literal between the quotes, reporting bad escapes. */
static void string_lit(Lexer *L, Loc loc) {
  Token *t = push(L, TK_STRING, L->tok, L->cur, loc);
  const unsigned char *p = L->tok + 1, *e = L->cur - 1;
  char *out = ar_alloc(&L->c->arena, (size_t)(e - p) + 1);
  size_t n = 0;
  while (p < e) {
    if (*p == '\\' && p + 1 < e) {
      p++;
      switch (*p) {
      case 'n': out[n++] = '\n'; break;
      case 't': out[n++] = '\t'; break;
      case '\\': out[n++] = '\\'; break;
      case '"': out[n++] = '"'; break;
      case '0': out[n++] = '\0'; break;
      default:
        dg_error(L->c, loc_at(L, p - 1), "unknown escape sequence '\\%c' in string", (*p >= 32 && *p < 127) ? *p : '?');
      }
      p++;
    } else {
      out[n++] = (char)*p++;
    }
  }
  out[n] = 0;
  t->str = out;
}

static void bad_char(Lexer *L, Loc loc) {
  unsigned char ch = *L->tok;
  if (ch >= 32 && ch < 127)
    dg_error(L->c, loc, "unexpected character '%c'", ch);
  else
    dg_error(L->c, loc, "unexpected byte 0x%02x in source", ch);
}

/*!re2c
  re2c:define:YYCTYPE = "unsigned char";
  re2c:define:YYCURSOR = L->cur;
  re2c:define:YYMARKER = L->marker;
  re2c:define:YYCTXMARKER = L->ctxmarker;
  re2c:yyfill:enable = 0;
  re2c:indent:string = "  ";

  dec   = [0-9] ("_"? [0-9])*;
  hex   = "0" [xX] [0-9a-fA-F] ("_"? [0-9a-fA-F])*;
  bin   = "0" [bB] [01] ("_"? [01])*;
  exp   = [eE] [+-]? [0-9]+;
  flt   = dec "." dec exp? | dec exp;
  id    = [a-zA-Z_] [a-zA-Z_0-9]*;
*/

Token *lx_tokenize(Ctx *c, const Source *src, int *ntok) {
  Lexer Lx = {0};
  Lexer *L = &Lx;
  L->c = c;
  L->src = src;
  L->base = L->cur = (const unsigned char *)src->text;
  L->end = L->base + src->len;
  L->line_start = L->base;
  L->line = 1;
  for (;;) {
    if (dg_too_many(c)) break;
    L->tok = L->cur;
    Loc loc = loc_at(L, L->tok);
    /*!re2c
      "\x00" {
        if (L->tok >= L->end) break;
        bad_char(L, loc);
        continue;
      }
      [ \t\v\f]+ { continue; }
      "\n" | "\r\n" | "\r" { L->line++; L->line_start = L->cur; continue; }
      "//" [^\n\r\x00]* { continue; }
      "/*" {
        /* Block comment: scan by hand so an unterminated one is one error. */
        const unsigned char *p = L->cur;
        while (p + 1 < L->end && !(p[0] == '*' && p[1] == '/')) p++;
        if (p + 1 >= L->end) {
          dg_error(c, loc, "unterminated comment");
          count_lines(L, L->cur, L->end);
          L->cur = L->end;
          continue;
        }
        count_lines(L, L->cur, p);
        L->cur = p + 2;
        continue;
      }
      "\"" ([^"\\\n\r\x00] | "\\" [^\n\r\x00])* "\"" { string_lit(L, loc); continue; }
      "\"" { dg_error(c, loc, "unterminated string literal"); 
             while (L->cur < L->end && *L->cur != '\n' && *L->cur != '\r') L->cur++;
             continue; }

      hex { int_lit(L, loc, 16, 2); continue; }
      bin { int_lit(L, loc, 2, 2); continue; }
      flt { float_lit(L, loc); continue; }
      dec { int_lit(L, loc, 10, 0); continue; }
      dec [a-zA-Z_] [a-zA-Z_0-9]* {
        dg_error(c, loc, "invalid number '%.*s'", (int)(L->cur - L->tok) > 40 ? 40 : (int)(L->cur - L->tok), (const char *)L->tok);
        push(L, TK_INT, L->tok, L->cur, loc)->overflow = true; /* keeps the parser quiet */
        continue;
      }
      id { ident(L, loc); continue; }

      "("  { push(L, TK_LPAREN, L->tok, L->cur, loc); continue; }
      ")"  { push(L, TK_RPAREN, L->tok, L->cur, loc); continue; }
      "["  { push(L, TK_LBRACK, L->tok, L->cur, loc); continue; }
      "]"  { push(L, TK_RBRACK, L->tok, L->cur, loc); continue; }
      "{"  { push(L, TK_LBRACE, L->tok, L->cur, loc); continue; }
      "}"  { push(L, TK_RBRACE, L->tok, L->cur, loc); continue; }
      ","  { push(L, TK_COMMA, L->tok, L->cur, loc); continue; }
      ";"  { push(L, TK_SEMI, L->tok, L->cur, loc); continue; }
      ":"  { push(L, TK_COLON, L->tok, L->cur, loc); continue; }
      "."  { push(L, TK_DOT, L->tok, L->cur, loc); continue; }
      "->" { push(L, TK_ARROW, L->tok, L->cur, loc); continue; }
      "="  { push(L, TK_ASSIGN, L->tok, L->cur, loc); continue; }
      "+"  { push(L, TK_PLUS, L->tok, L->cur, loc); continue; }
      "-"  { push(L, TK_MINUS, L->tok, L->cur, loc); continue; }
      "*"  { push(L, TK_STAR, L->tok, L->cur, loc); continue; }
      "/"  { push(L, TK_SLASH, L->tok, L->cur, loc); continue; }
      "%"  { push(L, TK_PERCENT, L->tok, L->cur, loc); continue; }
      "&"  { push(L, TK_AMP, L->tok, L->cur, loc); continue; }
      "|"  { push(L, TK_PIPE, L->tok, L->cur, loc); continue; }
      "^"  { push(L, TK_CARET, L->tok, L->cur, loc); continue; }
      "~"  { push(L, TK_TILDE, L->tok, L->cur, loc); continue; }
      "!"  { push(L, TK_BANG, L->tok, L->cur, loc); continue; }
      "<<" { push(L, TK_SHL, L->tok, L->cur, loc); continue; }
      ">>" { push(L, TK_SHR, L->tok, L->cur, loc); continue; }
      "==" { push(L, TK_EQ, L->tok, L->cur, loc); continue; }
      "!=" { push(L, TK_NE, L->tok, L->cur, loc); continue; }
      "<"  { push(L, TK_LT, L->tok, L->cur, loc); continue; }
      "<=" { push(L, TK_LE, L->tok, L->cur, loc); continue; }
      ">"  { push(L, TK_GT, L->tok, L->cur, loc); continue; }
      ">=" { push(L, TK_GE, L->tok, L->cur, loc); continue; }
      "&&" { push(L, TK_ANDAND, L->tok, L->cur, loc); continue; }
      "||" { push(L, TK_OROR, L->tok, L->cur, loc); continue; }
      "+=" { push(L, TK_PLUSEQ, L->tok, L->cur, loc); continue; }
      "-=" { push(L, TK_MINUSEQ, L->tok, L->cur, loc); continue; }
      "*=" { push(L, TK_STAREQ, L->tok, L->cur, loc); continue; }
      "/=" { push(L, TK_SLASHEQ, L->tok, L->cur, loc); continue; }
      "%=" { push(L, TK_PERCENTEQ, L->tok, L->cur, loc); continue; }
      "&=" { push(L, TK_AMPEQ, L->tok, L->cur, loc); continue; }
      "|=" { push(L, TK_PIPEEQ, L->tok, L->cur, loc); continue; }
      "^=" { push(L, TK_CARETEQ, L->tok, L->cur, loc); continue; }
      "<<=" { push(L, TK_SHLEQ, L->tok, L->cur, loc); continue; }
      ">>=" { push(L, TK_SHREQ, L->tok, L->cur, loc); continue; }
      * { bad_char(L, loc); continue; }
    */
  }
  Token eof = *push(L, TK_EOF, L->end, L->end, loc_at(L, L->cur > L->end ? L->end : L->cur));
  size_t n = c->arena.failed ? 0 : L->ntoks;
  Token *arr = n ? ar_alloc(&c->arena, sizeof(Token) * n) : NULL;
  if (arr) move_tokens(L, arr, n);
  else { /* out of memory: an empty stream (the compilation fails anyway) */
    n = 1;
    arr = ar_alloc(&c->arena, sizeof(Token));
    *arr = eof;
  }
  free(L->toks);
  *ntok = (int)n;
  return arr;
}

const char *lx_kind_name(TokKind k) {
  static const char *names[TK_COUNT] = {
      [TK_EOF] = "end of file", [TK_IDENT] = "identifier", [TK_INT] = "integer", [TK_FLOAT] = "float",
      [TK_STRING] = "string", [TK_KERNEL] = "'kernel'", [TK_FN] = "'fn'", [TK_LET] = "'let'",
      [TK_CONST] = "'const'", [TK_IF] = "'if'", [TK_ELSE] = "'else'", [TK_FOR] = "'for'", [TK_IN] = "'in'",
      [TK_WHILE] = "'while'", [TK_RETURN] = "'return'", [TK_IMPORT] = "'import'", [TK_TRUE] = "'true'",
      [TK_FALSE] = "'false'", [TK_AS] = "'as'", [TK_TASKS] = "'tasks'", [TK_TASK] = "'task'",
      [TK_NONE] = "'None'", [TK_LPAREN] = "'('", [TK_RPAREN] = "')'", [TK_LBRACK] = "'['",
      [TK_RBRACK] = "']'", [TK_LBRACE] = "'{'", [TK_RBRACE] = "'}'", [TK_COMMA] = "','", [TK_SEMI] = "';'",
      [TK_COLON] = "':'", [TK_DOT] = "'.'", [TK_ARROW] = "'->'", [TK_ASSIGN] = "'='", [TK_PLUS] = "'+'",
      [TK_MINUS] = "'-'", [TK_STAR] = "'*'", [TK_SLASH] = "'/'", [TK_PERCENT] = "'%'", [TK_AMP] = "'&'",
      [TK_PIPE] = "'|'", [TK_CARET] = "'^'", [TK_TILDE] = "'~'", [TK_BANG] = "'!'", [TK_SHL] = "'<<'",
      [TK_SHR] = "'>>'", [TK_EQ] = "'=='", [TK_NE] = "'!='", [TK_LT] = "'<'", [TK_LE] = "'<='",
      [TK_GT] = "'>'", [TK_GE] = "'>='", [TK_ANDAND] = "'&&'", [TK_OROR] = "'||'", [TK_PLUSEQ] = "'+='",
      [TK_MINUSEQ] = "'-='", [TK_STAREQ] = "'*='", [TK_SLASHEQ] = "'/='", [TK_PERCENTEQ] = "'%='",
      [TK_AMPEQ] = "'&='", [TK_PIPEEQ] = "'|='", [TK_CARETEQ] = "'^='", [TK_SHLEQ] = "'<<='",
      [TK_SHREQ] = "'>>='",
  };
  return (k >= 0 && k < TK_COUNT && names[k]) ? names[k] : "?";
}

void lx_print_tokens(Ctx *c, const Token *t, int n, Buf *out) {
  (void)c;
  for (int i = 0; i < n; i++) {
    const Token *k = &t[i];
    buf_printf(out, "%d:%d\t%s", k->loc.line, k->loc.col, lx_kind_name(k->kind));
    if (k->kind == TK_IDENT) buf_printf(out, "\t%s", k->str);
    else if (k->kind == TK_INT) buf_printf(out, "\t%llu", (unsigned long long)k->ival);
    else if (k->kind == TK_FLOAT) buf_printf(out, "\t%.17g", k->fval);
    else if (k->kind == TK_STRING) buf_printf(out, "\t\"%s\"", k->str);
    buf_puts(out, "\n");
  }
}

/* parse.c - hand-written recursive-descent parser: tokens -> AST.
 *
 * Each function is headed by the grammar rule it parses (docs/language.md
 * has the whole grammar).  Errors are reported at the offending token; the
 * parser then skips to a statement or item boundary and goes on, so one run
 * reports several independent errors.  Nesting is limited (TC_MAX_DEPTH) so
 * that no input can overflow the stack. */
#include "tilec_int.h"
#include <string.h>

typedef struct Parser {
  Ctx *c;
  const Source *src;
  Token *toks;
  int ntok, pos;
  int depth;
  bool panic;     /* an error was reported; suppress more until resync */
  bool too_deep;  /* nesting limit hit: unwind */
  bool no_generic; /* parsing the type after `as`: `<` is a comparison */
  Program *prog;
  Vec *imports;
} Parser;

static Token *peek(Parser *P) { return &P->toks[P->pos]; }
static Token *peek2(Parser *P) { return &P->toks[P->pos + 1 < P->ntok ? P->pos + 1 : P->ntok - 1]; }
static bool at(Parser *P, TokKind k) { return peek(P)->kind == k; }
static Token *next(Parser *P) {
  Token *t = peek(P);
  if (t->kind != TK_EOF) P->pos++;
  return t;
}
static bool accept(Parser *P, TokKind k) {
  if (!at(P, k)) return false;
  next(P);
  return true;
}

static const char *tok_desc(Parser *P, Token *t) {
  if (t->kind == TK_IDENT) return ar_printf(&P->c->arena, "identifier '%s'", t->str);
  if (t->kind == TK_INT || t->kind == TK_FLOAT)
    return ar_printf(&P->c->arena, "number '%.*s'", t->len > 30 ? 30 : t->len, t->start);
  return lx_kind_name(t->kind);
}

static void perr(Parser *P, Token *t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void perr(Parser *P, Token *t, const char *fmt, ...) {
  if (P->panic || P->too_deep) return;
  P->panic = true;
  va_list ap;
  va_start(ap, fmt);
  dg_verror(P->c, t->loc, fmt, ap);
  va_end(ap);
}

static Token *expect(Parser *P, TokKind k, const char *what) {
  if (at(P, k)) return next(P);
  Token *t = peek(P);
  if ((k == TK_SEMI || k == TK_RPAREN || k == TK_RBRACK) && P->pos > 0 && P->toks[P->pos - 1].loc.line < t->loc.line) {
    /* a missing ';' at the end of a line: point just after the last token */
    Token *prev = &P->toks[P->pos - 1];
    Token at_end = *prev;
    at_end.loc.col += prev->len;
    perr(P, &at_end, "expected %s %s", lx_kind_name(k), what);
    return NULL;
  }
  perr(P, t, "expected %s %s, found %s", lx_kind_name(k), what, tok_desc(P, t));
  return NULL;
}

/* Expression trees are limited in depth too (left-deep chains such as
 * a + b + c + ... are built in loops, not by recursion): the later stages
 * walk them recursively. */
static Node *deepen(Parser *P, Node *n, const Node *a, const Node *b) {
  int d = 0;
  if (a && a->depth > d) d = a->depth;
  if (b && b->depth > d) d = b->depth;
  n->depth = d + 1;
  if (n->depth > TC_MAX_EXPR_DEPTH) {
    perr(P, peek(P), "expression is nested too deeply (more than %d levels)", TC_MAX_EXPR_DEPTH);
    P->too_deep = true;
    return NULL;
  }
  return n;
}

static Node *new_node(Parser *P, NodeKind k, Loc loc) {
  Node *n = ar_alloc(&P->c->arena, sizeof *n);
  n->kind = k;
  n->loc = loc;
  return n;
}

static bool enter(Parser *P) {
  if (P->too_deep) return false;
  if (++P->depth > TC_MAX_DEPTH) {
    P->panic = false;
    perr(P, peek(P), "program is nested too deeply (more than %d levels)", TC_MAX_DEPTH);
    P->too_deep = true;
    return false;
  }
  return true;
}
static void leave(Parser *P) { P->depth--; }

static Node **vec_nodes(Parser *P, Vec *v) {
  (void)P;
  return (Node **)v->data;
}

static Node *expr(Parser *P);
static TypeExpr *type(Parser *P);
static TypeExpr *cast_type(Parser *P);
static Node *block(Parser *P);

/* list_args = [ expr { "," expr } [","] ] closer */
static void expr_list(Parser *P, TokKind closer, Vec *out) {
  while (!at(P, closer) && !at(P, TK_EOF) && !P->too_deep) {
    Node *e = expr(P);
    if (!e) return;
    vec_push(&P->c->arena, out, e);
    if (!accept(P, TK_COMMA)) break;
  }
}

/* call_args = [ arg { "," arg } [","] ] ")" ;  arg = [ IDENT "=" ] expr */
static bool call_args(Parser *P, Node *call) {
  Vec args = {0};
  bool seen_kw = false;
  while (!at(P, TK_RPAREN) && !at(P, TK_EOF) && !P->too_deep) {
    char *kw = NULL;
    Token *kwtok = NULL;
    if (at(P, TK_IDENT) && peek2(P)->kind == TK_ASSIGN) {
      kwtok = next(P);
      kw = kwtok->str;
      next(P);
    } else if (seen_kw) {
      perr(P, peek(P), "positional argument after keyword argument");
      return false;
    }
    Node *e = expr(P);
    if (!e) return false;
    if (kw) {
      seen_kw = true;
      for (int i = 0; i < args.len; i++) {
        Node *o = args.data[i];
        if (o->argname && !strcmp(o->argname, kw)) {
          perr(P, kwtok, "keyword argument '%s' given twice", kw);
          return false;
        }
      }
      e->argname = kw;
    }
    vec_push(&P->c->arena, &args, e);
    if (!accept(P, TK_COMMA)) break;
  }
  if (!expect(P, TK_RPAREN, "to close the argument list")) return false;
  call->list = vec_nodes(P, &args);
  call->nlist = args.len;
  return true;
}

/* primary = INT | FLOAT | STRING | "true" | "false" | "None" | IDENT
 *         | "(" expr ")" | "(" expr "," [ expr { "," expr } ] ")"
 *         | "[" [ expr { "," expr } ] "]" */
static Node *primary(Parser *P) {
  Token *t = peek(P);
  Node *n;
  switch (t->kind) {
  case TK_INT:
    next(P);
    n = new_node(P, ND_INT, t->loc);
    n->ival = t->ival;
    n->overflow = t->overflow;
    return n;
  case TK_FLOAT:
    next(P);
    n = new_node(P, ND_FLOAT, t->loc);
    n->fval = t->fval;
    return n;
  case TK_STRING:
    next(P);
    n = new_node(P, ND_STR, t->loc);
    n->str = t->str;
    return n;
  case TK_TRUE:
  case TK_FALSE:
    next(P);
    n = new_node(P, ND_BOOL, t->loc);
    n->ival = t->kind == TK_TRUE;
    return n;
  case TK_NONE:
    next(P);
    return new_node(P, ND_NONE, t->loc);
  case TK_IDENT:
    next(P);
    n = new_node(P, ND_IDENT, t->loc);
    n->name = t->str;
    return n;
  case TK_LPAREN: {
    next(P);
    if (at(P, TK_RPAREN)) {
      perr(P, peek(P), "empty parentheses are not an expression");
      return NULL;
    }
    Node *e = expr(P);
    if (!e) return NULL;
    if (at(P, TK_COMMA)) {
      Vec items = {0};
      vec_push(&P->c->arena, &items, e);
      next(P);
      expr_list(P, TK_RPAREN, &items);
      if (!expect(P, TK_RPAREN, "to close the tuple")) return NULL;
      n = new_node(P, ND_TUPLE, t->loc);
      n->list = vec_nodes(P, &items);
      n->nlist = items.len;
      for (int i = 0; i < n->nlist; i++)
        if (n->list[i]->depth > n->depth) n->depth = n->list[i]->depth;
      return deepen(P, n, n, NULL);
    }
    if (!expect(P, TK_RPAREN, "to close the parenthesis")) return NULL;
    e->paren = true; /* `(a < b) == c` is not a chained comparison */
    return e;
  }
  case TK_LBRACK: {
    next(P);
    Vec items = {0};
    expr_list(P, TK_RBRACK, &items);
    if (!expect(P, TK_RBRACK, "to close the list")) return NULL;
    n = new_node(P, ND_LIST, t->loc);
    n->list = vec_nodes(P, &items);
    n->nlist = items.len;
    for (int i = 0; i < n->nlist; i++)
      if (n->list[i]->depth > n->depth) n->depth = n->list[i]->depth;
    return deepen(P, n, n, NULL);
  }
  default:
    perr(P, t, "expected an expression, found %s", tok_desc(P, t));
    return NULL;
  }
}

/* index_arg = ":" | "None" | expr */
static Node *index_arg(Parser *P) {
  Token *t = peek(P);
  if (accept(P, TK_COLON)) return new_node(P, ND_SLICE_ALL, t->loc);
  return expr(P);
}

/* postfix = primary { "(" call_args | "[" index_arg { "," index_arg } "]"
 *                   | "." IDENT "(" call_args } */
static Node *postfix(Parser *P) {
  Node *n = primary(P);
  while (n && !P->too_deep) {
    Token *t = peek(P);
    if (t->kind == TK_LPAREN) {
      if (n->kind != ND_IDENT) {
        perr(P, t, "only named functions can be called");
        return NULL;
      }
      next(P);
      Node *call = new_node(P, ND_CALL, n->loc);
      call->name = n->name;
      if (!call_args(P, call)) return NULL;
      int d = 0;
      for (int i = 0; i < call->nlist; i++)
        if (call->list[i]->depth > d) d = call->list[i]->depth;
      call->depth = d;
      n = deepen(P, call, call, NULL);
      if (!n) return NULL;
    } else if (t->kind == TK_LBRACK) {
      next(P);
      Node *ix = new_node(P, ND_INDEX, t->loc);
      ix->lhs = n;
      Vec items = {0};
      while (!at(P, TK_RBRACK) && !at(P, TK_EOF)) {
        Node *a = index_arg(P);
        if (!a) return NULL;
        vec_push(&P->c->arena, &items, a);
        if (!accept(P, TK_COMMA)) break;
      }
      if (!expect(P, TK_RBRACK, "to close the index")) return NULL;
      if (items.len == 0) {
        perr(P, t, "empty index");
        return NULL;
      }
      ix->list = vec_nodes(P, &items);
      ix->nlist = items.len;
      n = deepen(P, ix, n, NULL);
      if (!n) return NULL;
    } else if (t->kind == TK_DOT) {
      next(P);
      Token *id = expect(P, TK_IDENT, "after '.'");
      if (!id) return NULL;
      if (!expect(P, TK_LPAREN, "after the method name (only method calls follow '.')")) return NULL;
      Node *m = new_node(P, ND_METHOD, id->loc);
      m->name = id->str;
      m->lhs = n;
      if (!call_args(P, m)) return NULL;
      int d = n->depth;
      for (int i = 0; i < m->nlist; i++)
        if (m->list[i]->depth > d) d = m->list[i]->depth;
      m->depth = d;
      n = deepen(P, m, m, NULL);
      if (!n) return NULL;
    } else {
      break;
    }
  }
  return n;
}

/* unary = ( "-" | "!" | "~" ) unary | postfix */
static Node *unary(Parser *P) {
  Token *t = peek(P);
  if (t->kind == TK_MINUS || t->kind == TK_BANG || t->kind == TK_TILDE) {
    if (!enter(P)) return NULL;
    next(P);
    Node *e = unary(P);
    leave(P);
    if (!e) return NULL;
    Node *n = new_node(P, ND_UNARY, t->loc);
    n->op = t->kind;
    n->lhs = e;
    return deepen(P, n, e, NULL);
  }
  return postfix(P);
}

/* cast = unary { "as" type } */
static Node *cast(Parser *P) {
  Node *n = unary(P);
  while (n && at(P, TK_AS)) {
    Token *t = next(P);
    TypeExpr *ty = cast_type(P);
    if (!ty) return NULL;
    Node *c = new_node(P, ND_CAST, t->loc);
    c->lhs = n;
    c->type = ty;
    n = deepen(P, c, n, NULL);
  }
  return n;
}

/* Binary precedence levels, loosest first (Rust's order: bit operators bind
 * tighter than comparisons). */
static int prec(TokKind k) {
  switch (k) {
  case TK_OROR: return 1;
  case TK_ANDAND: return 2;
  case TK_EQ: case TK_NE: case TK_LT: case TK_LE: case TK_GT: case TK_GE: return 3;
  case TK_PIPE: return 4;
  case TK_CARET: return 5;
  case TK_AMP: return 6;
  case TK_SHL: case TK_SHR: return 7;
  case TK_PLUS: case TK_MINUS: return 8;
  case TK_STAR: case TK_SLASH: case TK_PERCENT: return 9;
  default: return 0;
  }
}

/* binary(p) = cast { op(>= p) binary(p+1) }   (precedence climbing) */
static Node *binary(Parser *P, int minp) {
  if (!enter(P)) return NULL;
  Node *lhs = cast(P);
  while (lhs) {
    Token *t = peek(P);
    int p = prec(t->kind);
    if (p == 0 || p < minp) break;
    next(P);
    Node *rhs = binary(P, p + 1);
    if (!rhs) {
      lhs = NULL;
      break;
    }
    if (p == 3 && lhs->kind == ND_BINARY && prec(lhs->op) == 3 && !lhs->paren) {
      perr(P, t, "comparison operators cannot be chained; use '&&'");
      lhs = NULL;
      break;
    }
    Node *n = new_node(P, ND_BINARY, t->loc);
    n->op = t->kind;
    n->lhs = lhs;
    n->rhs = rhs;
    lhs = deepen(P, n, lhs, rhs);
  }
  leave(P);
  return lhs;
}

static Node *expr(Parser *P) { return binary(P, 1); }

/* type_arg = "[" expr { "," expr } "]" | type
 * type = base_type { "[" expr { "," expr } "]" }
 * base_type = "*" base_type | IDENT [ "<" type_arg { "," type_arg } ">" ]
 *           | "(" type { "," type } ")" */
static TypeExpr *base_type(Parser *P) {
  Token *t = peek(P);
  TypeExpr *ty = ar_alloc(&P->c->arena, sizeof *ty);
  ty->loc = t->loc;
  if (!enter(P)) return NULL;
  if (accept(P, TK_STAR)) {
    ty->kind = TE_PTR;
    ty->elem = base_type(P);
    leave(P);
    return ty->elem ? ty : NULL;
  }
  if (accept(P, TK_LPAREN)) {
    Vec items = {0};
    while (!at(P, TK_RPAREN) && !at(P, TK_EOF)) {
      TypeExpr *it = type(P);
      if (!it) {
        leave(P);
        return NULL;
      }
      vec_push(&P->c->arena, &items, it);
      if (!accept(P, TK_COMMA)) break;
    }
    leave(P);
    if (!expect(P, TK_RPAREN, "to close the tuple type")) return NULL;
    ty->kind = TE_TUPLE;
    ty->items = (TypeExpr **)items.data;
    ty->nitems = items.len;
    return ty;
  }
  if (t->kind != TK_IDENT) {
    leave(P);
    perr(P, t, "expected a type, found %s", tok_desc(P, t));
    return NULL;
  }
  next(P);
  ty->kind = TE_NAME;
  ty->name = t->str;
  if (!P->no_generic && accept(P, TK_LT)) {
    ty->kind = TE_GENERIC;
    Vec types = {0}, args = {0};
    while (!at(P, TK_GT) && !at(P, TK_EOF)) {
      if (at(P, TK_LBRACK) || at(P, TK_INT)) {
        Node *e = primary(P);
        if (!e) {
          leave(P);
          return NULL;
        }
        vec_push(&P->c->arena, &args, e);
      } else {
        TypeExpr *it = type(P);
        if (!it) {
          leave(P);
          return NULL;
        }
        vec_push(&P->c->arena, &types, it);
      }
      if (!accept(P, TK_COMMA)) break;
    }
    if (!expect(P, TK_GT, "to close the type arguments")) {
      leave(P);
      return NULL;
    }
    ty->items = (TypeExpr **)types.data;
    ty->nitems = types.len;
    ty->args = (Node **)args.data;
    ty->nargs = args.len;
  }
  leave(P);
  return ty;
}

/* cast_type = "*" cast_type | IDENT   (after `as`, `x as i32 < n` compares) */
static TypeExpr *cast_type(Parser *P) {
  bool saved = P->no_generic;
  P->no_generic = true;
  TypeExpr *t = base_type(P);
  P->no_generic = saved;
  return t;
}

static TypeExpr *type(Parser *P) {
  TypeExpr *ty = base_type(P);
  while (ty && at(P, TK_LBRACK)) {
    Token *t = next(P);
    Vec dims = {0};
    expr_list(P, TK_RBRACK, &dims);
    if (!expect(P, TK_RBRACK, "to close the tile shape")) return NULL;
    if (dims.len == 0) {
      perr(P, t, "a tile type needs at least one dimension");
      return NULL;
    }
    TypeExpr *tile = ar_alloc(&P->c->arena, sizeof *tile);
    tile->kind = TE_TILE;
    tile->loc = t->loc;
    tile->elem = ty;
    tile->dims = (Node **)dims.data;
    tile->ndims = dims.len;
    ty = tile;
  }
  return ty;
}

/* Skip to the end of the current statement (after ';') or to a '}' that
 * closes the current block, whichever comes first. */
static void sync_stmt(Parser *P) {
  int depth = 0;
  while (!at(P, TK_EOF)) {
    TokKind k = peek(P)->kind;
    if (depth == 0 && k == TK_SEMI) {
      next(P);
      break;
    }
    if (depth == 0 && k == TK_RBRACE) break;
    if (depth == 0 && (k == TK_LET || k == TK_IF || k == TK_FOR || k == TK_WHILE || k == TK_RETURN) &&
        P->pos > 0 && P->toks[P->pos - 1].loc.line != peek(P)->loc.line)
      break;
    if (k == TK_LBRACE || k == TK_LPAREN || k == TK_LBRACK) depth++;
    if (k == TK_RBRACE || k == TK_RPAREN || k == TK_RBRACK) depth--;
    if (depth < 0) depth = 0;
    next(P);
  }
  P->panic = false;
}

static bool is_assign_op(TokKind k) {
  switch (k) {
  case TK_ASSIGN: case TK_PLUSEQ: case TK_MINUSEQ: case TK_STAREQ: case TK_SLASHEQ: case TK_PERCENTEQ:
  case TK_AMPEQ: case TK_PIPEEQ: case TK_CARETEQ: case TK_SHLEQ: case TK_SHREQ:
    return true;
  default:
    return false;
  }
}

static Node *stmt(Parser *P);

/* if_stmt = "if" expr block [ "else" ( if_stmt | block ) ] */
static Node *if_stmt(Parser *P) {
  Token *t = next(P);
  Node *n = new_node(P, ND_IF, t->loc);
  n->cond = expr(P);
  if (!n->cond) return NULL;
  n->then = block(P);
  if (!n->then) return NULL;
  if (accept(P, TK_ELSE)) {
    if (at(P, TK_IF)) {
      if (!enter(P)) return NULL;
      n->els = if_stmt(P);
      leave(P);
    } else {
      n->els = block(P);
    }
    if (!n->els) return NULL;
  }
  return n;
}

/* let_stmt = "let" ( IDENT [ ":" type ] | "(" IDENT { "," IDENT } ")" ) "=" expr ";" */
static Node *let_stmt(Parser *P) {
  Token *t = next(P);
  Node *n = new_node(P, ND_LET, t->loc);
  if (accept(P, TK_LPAREN)) {
    Vec names = {0};
    while (!at(P, TK_RPAREN) && !at(P, TK_EOF)) {
      Token *id = expect(P, TK_IDENT, "in the destructuring 'let'");
      if (!id) return NULL;
      vec_push(&P->c->arena, &names, id->str);
      if (!accept(P, TK_COMMA)) break;
    }
    if (!expect(P, TK_RPAREN, "to close the names")) return NULL;
    if (names.len == 0) {
      perr(P, t, "'let ()' binds no names");
      return NULL;
    }
    n->names = (char **)names.data;
    n->nnames = names.len;
  } else {
    Token *id = expect(P, TK_IDENT, "after 'let'");
    if (!id) return NULL;
    n->name = id->str;
    if (accept(P, TK_COLON)) {
      n->type = type(P);
      if (!n->type) return NULL;
    }
  }
  if (!expect(P, TK_ASSIGN, "in 'let' (a variable needs a value)")) return NULL;
  n->init = expr(P);
  if (!n->init) return NULL;
  if (!expect(P, TK_SEMI, "after the 'let' statement")) return NULL;
  return n;
}

/* task = "task" IDENT "(" call_args block
 * tasks_stmt = "tasks" "{" { task } "}" */
static Node *tasks_stmt(Parser *P) {
  Token *t = next(P);
  Node *n = new_node(P, ND_TASKS, t->loc);
  if (!expect(P, TK_LBRACE, "after 'tasks'")) return NULL;
  Vec tasks = {0};
  while (!at(P, TK_RBRACE) && !at(P, TK_EOF) && !P->too_deep) {
    Token *tk = peek(P);
    if (!expect(P, TK_TASK, "(a 'tasks' block holds only 'task' entries)")) return NULL;
    Token *id = expect(P, TK_IDENT, "naming the task");
    if (!id) return NULL;
    Node *task = new_node(P, ND_TASK, tk->loc);
    task->name = id->str;
    if (!expect(P, TK_LPAREN, "after the task name")) return NULL;
    if (!call_args(P, task)) return NULL;
    task->body = block(P);
    if (!task->body) return NULL;
    vec_push(&P->c->arena, &tasks, task);
  }
  if (!expect(P, TK_RBRACE, "to close 'tasks'")) return NULL;
  n->list = (Node **)tasks.data;
  n->nlist = tasks.len;
  return n;
}

/* stmt = let_stmt | if_stmt | for_stmt | while_stmt | return_stmt | tasks_stmt
 *      | block | expr [ assign_op expr ] ";"
 * for_stmt = "for" IDENT "in" expr block
 * while_stmt = "while" expr block
 * return_stmt = "return" [ expr ] ";" */
static Node *stmt(Parser *P) {
  Token *t = peek(P);
  switch (t->kind) {
  case TK_LET:
    return let_stmt(P);
  case TK_IF:
    return if_stmt(P);
  case TK_FOR: {
    next(P);
    Node *n = new_node(P, ND_FOR, t->loc);
    Token *id = expect(P, TK_IDENT, "after 'for'");
    if (!id) return NULL;
    n->name = id->str;
    if (!expect(P, TK_IN, "after the loop variable")) return NULL;
    n->init = expr(P);
    if (!n->init) return NULL;
    n->body = block(P);
    return n->body ? n : NULL;
  }
  case TK_WHILE: {
    next(P);
    Node *n = new_node(P, ND_WHILE, t->loc);
    n->cond = expr(P);
    if (!n->cond) return NULL;
    n->body = block(P);
    return n->body ? n : NULL;
  }
  case TK_RETURN: {
    next(P);
    Node *n = new_node(P, ND_RETURN, t->loc);
    if (!at(P, TK_SEMI)) {
      n->lhs = expr(P);
      if (!n->lhs) return NULL;
    }
    if (!expect(P, TK_SEMI, "after 'return'")) return NULL;
    return n;
  }
  case TK_TASKS:
    return tasks_stmt(P);
  case TK_LBRACE:
    return block(P);
  case TK_SEMI:
    next(P);
    return new_node(P, ND_BLOCK, t->loc); /* empty statement */
  default:
    break;
  }
  Node *e = expr(P);
  if (!e) return NULL;
  if (is_assign_op(peek(P)->kind)) {
    Token *op = next(P);
    Node *n = new_node(P, ND_ASSIGN, op->loc);
    n->op = op->kind;
    n->lhs = e;
    n->rhs = expr(P);
    if (!n->rhs) return NULL;
    if (e->kind != ND_IDENT && e->kind != ND_TUPLE) {
      perr(P, op, "cannot assign to this expression (only variables can be assigned)");
      return NULL;
    }
    if (!expect(P, TK_SEMI, "after the assignment")) return NULL;
    return n;
  }
  if (peek(P)->kind == TK_EQ && e->kind == ND_IDENT) {
    /* `x == 1;` is legal but almost always a typo: no special case. */
  }
  if (!expect(P, TK_SEMI, "after the expression")) return NULL;
  Node *n = new_node(P, ND_EXPR, e->loc);
  n->lhs = e;
  return n;
}

/* block = "{" { stmt } "}" */
static Node *block(Parser *P) {
  Token *t = peek(P);
  if (!expect(P, TK_LBRACE, "to start a block")) return NULL;
  if (!enter(P)) return NULL;
  Node *n = new_node(P, ND_BLOCK, t->loc);
  Vec stmts = {0};
  while (!at(P, TK_RBRACE) && !at(P, TK_EOF) && !P->too_deep && !dg_too_many(P->c)) {
    int before = P->pos;
    Node *s = stmt(P);
    if (s) {
      vec_push(&P->c->arena, &stmts, s);
    } else {
      if (P->too_deep) break;
      sync_stmt(P);
      if (P->pos == before && !at(P, TK_RBRACE)) next(P);
    }
  }
  leave(P);
  n->list = (Node **)stmts.data;
  n->nlist = stmts.len;
  if (P->too_deep) return NULL;
  if (!expect(P, TK_RBRACE, "to close the block")) {
    dg_note(P->c, t->loc, "the block starts here");
    return NULL;
  }
  return n;
}

/* param  = [ "const" ] IDENT [ ":" type ] [ "=" expr ]
 *          [ ( "align" | "multiple_of" ) "(" expr ")" ] */
static bool params(Parser *P, Func *f) {
  if (!expect(P, TK_LPAREN, "after the name")) return false;
  Vec ps = {0};
  while (!at(P, TK_RPAREN) && !at(P, TK_EOF)) {
    if (ps.len >= TC_MAX_PARAMS) {
      perr(P, peek(P), "more than %d parameters", TC_MAX_PARAMS);
      return false;
    }
    Param *p = ar_alloc(&P->c->arena, sizeof *p);
    p->is_const = accept(P, TK_CONST);
    Token *id = expect(P, TK_IDENT, "naming a parameter");
    if (!id) return false;
    p->name = id->str;
    p->loc = id->loc;
    for (int i = 0; i < ps.len; i++)
      if (!strcmp(((Param *)ps.data[i])->name, p->name)) {
        perr(P, id, "parameter '%s' is declared twice", p->name);
        return false;
      }
    if (accept(P, TK_COLON)) {
      p->type = type(P);
      if (!p->type) return false;
    } else if (f->is_kernel) {
      perr(P, peek(P), "kernel parameter '%s' needs a type (e.g. '%s: *f32' or '%s: i32')", p->name, p->name,
           p->name);
      return false;
    }
    if (at(P, TK_IDENT) && (!strcmp(peek(P)->str, "align") || !strcmp(peek(P)->str, "multiple_of"))) {
      Token *a = next(P);
      p->is_multiple_of = !strcmp(a->str, "multiple_of");
      if (!expect(P, TK_LPAREN, "after 'align'/'multiple_of'")) return false;
      p->align = expr(P);
      if (!p->align || !expect(P, TK_RPAREN, "to close 'align(...)'")) return false;
    }
    if (accept(P, TK_ASSIGN)) {
      p->deflt = expr(P);
      if (!p->deflt) return false;
    }
    vec_push(&P->c->arena, &ps, p);
    if (!accept(P, TK_COMMA)) break;
  }
  if (!expect(P, TK_RPAREN, "to close the parameter list")) return false;
  f->params = ar_alloc(&P->c->arena, sizeof(Param) * (size_t)(ps.len + 1));
  for (int i = 0; i < ps.len; i++) f->params[i] = *(Param *)ps.data[i];
  f->nparams = ps.len;
  return true;
}

/* fn_decl     = "fn" IDENT "(" params ")" [ "->" type ] block
 * kernel_decl = "kernel" IDENT "(" params ")" { IDENT "(" [ expr { "," expr } ] ")" } block */
static Func *func(Parser *P, bool is_kernel) {
  next(P);
  Func *f = ar_alloc(&P->c->arena, sizeof *f);
  f->is_kernel = is_kernel;
  Token *id = expect(P, TK_IDENT, is_kernel ? "after 'kernel'" : "after 'fn'");
  if (!id) return NULL;
  f->name = id->str;
  f->loc = id->loc;
  if (!params(P, f)) return NULL;
  if (accept(P, TK_ARROW)) {
    if (is_kernel) {
      perr(P, &P->toks[P->pos - 1], "a kernel returns nothing; it writes its results through pointers");
      return NULL;
    }
    f->ret = type(P);
    if (!f->ret) return NULL;
  }
  Vec attrs = {0};
  while (at(P, TK_IDENT)) {
    Token *a = next(P);
    if (!is_kernel) {
      perr(P, a, "unexpected %s after the function header (attributes such as warps(...) belong to kernels)",
           tok_desc(P, a));
      return NULL;
    }
    KAttr *ka = ar_alloc(&P->c->arena, sizeof *ka);
    ka->name = a->str;
    ka->loc = a->loc;
    if (!expect(P, TK_LPAREN, "after the kernel attribute name")) return NULL;
    Vec args = {0};
    expr_list(P, TK_RPAREN, &args);
    if (!expect(P, TK_RPAREN, "to close the attribute")) return NULL;
    ka->args = (Node **)args.data;
    ka->nargs = args.len;
    vec_push(&P->c->arena, &attrs, ka);
  }
  f->attrs = ar_alloc(&P->c->arena, sizeof(KAttr) * (size_t)(attrs.len + 1));
  for (int i = 0; i < attrs.len; i++) f->attrs[i] = *(KAttr *)attrs.data[i];
  f->nattrs = attrs.len;
  f->body = block(P);
  return f->body ? f : NULL;
}

/* const_decl = "const" IDENT [ ":" type ] "=" expr ";" */
static ConstDecl *const_decl(Parser *P) {
  next(P);
  ConstDecl *d = ar_alloc(&P->c->arena, sizeof *d);
  Token *id = expect(P, TK_IDENT, "after 'const'");
  if (!id) return NULL;
  d->name = id->str;
  d->loc = id->loc;
  if (accept(P, TK_COLON)) {
    d->type = type(P);
    if (!d->type) return NULL;
  }
  if (!expect(P, TK_ASSIGN, "in the constant declaration")) return NULL;
  d->value = expr(P);
  if (!d->value) return NULL;
  if (!expect(P, TK_SEMI, "after the constant declaration")) return NULL;
  return d;
}

/* Skip the rest of a broken item: up to the next item keyword at the top
 * level, or just past the '}' that closes the item's body. */
static void sync_item(Parser *P) {
  int depth = 0;
  while (!at(P, TK_EOF)) {
    TokKind k = peek(P)->kind;
    if (depth == 0 && (k == TK_KERNEL || k == TK_FN || k == TK_CONST || k == TK_IMPORT)) break;
    if (k == TK_LBRACE) depth++;
    if (k == TK_RBRACE) {
      next(P);
      if (--depth <= 0) break;
      continue;
    }
    next(P);
  }
  P->panic = false;
}

/* import_cond = "if" "arch" "==" STRING
 * The target test of a conditional import (`import "f.tile" if arch ==
 * "sm_100a";`): an ND_STR node holding the target's name, which compile.c
 * checks and compares with --arch. Imports are resolved before sema, so the
 * condition is this one form, not an expression. */
static Node *import_cond(Parser *P) {
  next(P); /* 'if' */
  static const char form[] = "(an import's condition tests the target: import \"f.tile\" if arch == \"sm_100a\";)";
  Token *a = peek(P);
  if (a->kind != TK_IDENT || strcmp(a->str, "arch")) {
    perr(P, a, "expected 'arch' after 'if' in an import, found %s %s", tok_desc(P, a), form);
    return NULL;
  }
  next(P);
  if (!at(P, TK_EQ)) {
    perr(P, peek(P), "expected '==' after 'arch' in an import, found %s %s", tok_desc(P, peek(P)), form);
    return NULL;
  }
  next(P);
  if (!at(P, TK_STRING)) {
    perr(P, peek(P), "expected the target's name as a string after 'arch ==', found %s %s", tok_desc(P, peek(P)),
         form);
    return NULL;
  }
  Token *s = next(P);
  Node *n = new_node(P, ND_STR, s->loc);
  n->str = s->str;
  return n;
}

/* program = { import_decl | const_decl | fn_decl | kernel_decl }
 * import_decl = "import" STRING [ import_cond ] ";" */
bool ps_parse(Ctx *c, const Source *src, Program *prog, Vec *imports) {
  int ntok = 0;
  int errs0 = c->nerrors;
  Token *toks = lx_tokenize(c, src, &ntok);
  Parser P = {.c = c, .src = src, .toks = toks, .ntok = ntok, .prog = prog, .imports = imports};
  while (!at(&P, TK_EOF) && !dg_too_many(c)) {
    Token *t = peek(&P);
    P.depth = 0;
    P.too_deep = false;
    switch (t->kind) {
    case TK_KERNEL:
    case TK_FN: {
      Func *f = func(&P, t->kind == TK_KERNEL);
      if (f) vec_push(&c->arena, &prog->funcs, f);
      else sync_item(&P);
      break;
    }
    case TK_CONST: {
      ConstDecl *d = const_decl(&P);
      if (d) vec_push(&c->arena, &prog->consts, d);
      else sync_item(&P);
      break;
    }
    case TK_IMPORT: {
      next(&P);
      Token *s = expect(&P, TK_STRING, "after 'import' (e.g. import \"std.tile\";)");
      Node *cond = NULL;
      bool ok = s && (!at(&P, TK_IF) || (cond = import_cond(&P)));
      if (ok && expect(&P, TK_SEMI, "after the import")) {
        Node *n = new_node(&P, ND_STR, s->loc);
        n->str = s->str;
        n->cond = cond;
        vec_push(&c->arena, imports, n);
      } else {
        sync_item(&P);
      }
      break;
    }
    case TK_IDENT:
      /* `override fn`: `override` is a keyword only here */
      if (!strcmp(t->str, "override") && P.pos + 1 < P.ntok &&
          (P.toks[P.pos + 1].kind == TK_FN || P.toks[P.pos + 1].kind == TK_KERNEL)) {
        next(&P);
        if (at(&P, TK_KERNEL)) {
          perr(&P, peek(&P), "a kernel cannot be overridden ('override' goes before 'fn': a function that "
                             "replaces an imported one of the same name)");
          sync_item(&P);
          break;
        }
        Func *f = func(&P, false);
        if (f) {
          f->is_override = true;
          vec_push(&c->arena, &prog->funcs, f);
        } else {
          sync_item(&P);
        }
        break;
      }
      /* fall through */
    default:
      perr(&P, t, "expected 'kernel', 'fn', 'const' or 'import' at top level, found %s", tok_desc(&P, t));
      next(&P);
      sync_item(&P);
      break;
    }
  }
  return c->nerrors == errs0;
}

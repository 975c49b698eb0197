/* ast.c - the AST printer behind `tilec --emit=ast` (an S-expression per
 * item, one line per statement; stable for golden tests). */
#include "tilec_int.h"

static const char *opstr(int op) {
  const char *s = lx_kind_name((TokKind)op);
  return s;
}

static void pr_type(Buf *o, const TypeExpr *t);
static void pr_expr(Buf *o, const Node *n);

static void pr_list(Buf *o, Node **l, int n) {
  for (int i = 0; i < n; i++) {
    buf_puts(o, " ");
    pr_expr(o, l[i]);
  }
}

static void pr_type(Buf *o, const TypeExpr *t) {
  if (!t) {
    buf_puts(o, "?");
    return;
  }
  switch (t->kind) {
  case TE_NAME: buf_puts(o, t->name); break;
  case TE_PTR: buf_puts(o, "*"); pr_type(o, t->elem); break;
  case TE_TILE:
    pr_type(o, t->elem);
    buf_puts(o, "[");
    for (int i = 0; i < t->ndims; i++) {
      if (i) buf_puts(o, ",");
      pr_expr(o, t->dims[i]);
    }
    buf_puts(o, "]");
    break;
  case TE_TUPLE:
    buf_puts(o, "(");
    for (int i = 0; i < t->nitems; i++) {
      if (i) buf_puts(o, ",");
      pr_type(o, t->items[i]);
    }
    buf_puts(o, ")");
    break;
  case TE_GENERIC:
    buf_printf(o, "%s<", t->name);
    for (int i = 0; i < t->nitems; i++) {
      if (i) buf_puts(o, ",");
      pr_type(o, t->items[i]);
    }
    for (int i = 0; i < t->nargs; i++) {
      if (i || t->nitems) buf_puts(o, ",");
      pr_expr(o, t->args[i]);
    }
    buf_puts(o, ">");
    break;
  }
}

static void pr_expr(Buf *o, const Node *n) {
  if (!n) {
    buf_puts(o, "?");
    return;
  }
  if (n->argname) buf_printf(o, "%s=", n->argname);
  switch (n->kind) {
  case ND_INT: buf_printf(o, "%llu", (unsigned long long)n->ival); break;
  case ND_FLOAT: buf_printf(o, "%.17g", n->fval); break;
  case ND_BOOL: buf_puts(o, n->ival ? "true" : "false"); break;
  case ND_STR: buf_printf(o, "\"%s\"", n->str); break;
  case ND_IDENT: buf_puts(o, n->name); break;
  case ND_NONE: buf_puts(o, "None"); break;
  case ND_SLICE_ALL: buf_puts(o, ":"); break;
  case ND_UNARY: buf_printf(o, "(%s ", opstr(n->op)); pr_expr(o, n->lhs); buf_puts(o, ")"); break;
  case ND_BINARY:
    buf_printf(o, "(%s ", opstr(n->op));
    pr_expr(o, n->lhs);
    buf_puts(o, " ");
    pr_expr(o, n->rhs);
    buf_puts(o, ")");
    break;
  case ND_CALL: buf_printf(o, "(call %s", n->name); pr_list(o, n->list, n->nlist); buf_puts(o, ")"); break;
  case ND_METHOD:
    buf_printf(o, "(method %s ", n->name);
    pr_expr(o, n->lhs);
    pr_list(o, n->list, n->nlist);
    buf_puts(o, ")");
    break;
  case ND_INDEX: buf_puts(o, "(index "); pr_expr(o, n->lhs); pr_list(o, n->list, n->nlist); buf_puts(o, ")"); break;
  case ND_CAST: buf_puts(o, "(as "); pr_expr(o, n->lhs); buf_puts(o, " "); pr_type(o, n->type); buf_puts(o, ")"); break;
  case ND_LIST: buf_puts(o, "(list"); pr_list(o, n->list, n->nlist); buf_puts(o, ")"); break;
  case ND_TUPLE: buf_puts(o, "(tuple"); pr_list(o, n->list, n->nlist); buf_puts(o, ")"); break;
  default: buf_puts(o, "<stmt>"); break;
  }
}

static void indent(Buf *o, int d) {
  for (int i = 0; i < d; i++) buf_puts(o, "  ");
}

static void pr_stmt(Buf *o, const Node *n, int d) {
  indent(o, d);
  buf_printf(o, "%d:%d ", n->loc.line, n->loc.col);
  switch (n->kind) {
  case ND_LET:
    if (n->nnames) {
      buf_puts(o, "(let (");
      for (int i = 0; i < n->nnames; i++) buf_printf(o, i ? " %s" : "%s", n->names[i]);
      buf_puts(o, ")");
    } else {
      buf_printf(o, "(let %s", n->name);
    }
    if (n->type) {
      buf_puts(o, " : ");
      pr_type(o, n->type);
    }
    buf_puts(o, " ");
    pr_expr(o, n->init);
    buf_puts(o, ")\n");
    break;
  case ND_ASSIGN:
    buf_printf(o, "(%s ", opstr(n->op));
    pr_expr(o, n->lhs);
    buf_puts(o, " ");
    pr_expr(o, n->rhs);
    buf_puts(o, ")\n");
    break;
  case ND_EXPR: pr_expr(o, n->lhs); buf_puts(o, "\n"); break;
  case ND_RETURN: buf_puts(o, "(return "); pr_expr(o, n->lhs); buf_puts(o, ")\n"); break;
  case ND_IF:
    buf_puts(o, "(if ");
    pr_expr(o, n->cond);
    buf_puts(o, "\n");
    pr_stmt(o, n->then, d + 1);
    if (n->els) {
      indent(o, d);
      buf_puts(o, "else\n");
      pr_stmt(o, n->els, d + 1);
    }
    indent(o, d);
    buf_puts(o, ")\n");
    break;
  case ND_FOR:
    buf_printf(o, "(for %s in ", n->name);
    pr_expr(o, n->init);
    buf_puts(o, "\n");
    pr_stmt(o, n->body, d + 1);
    indent(o, d);
    buf_puts(o, ")\n");
    break;
  case ND_WHILE:
    buf_puts(o, "(while ");
    pr_expr(o, n->cond);
    buf_puts(o, "\n");
    pr_stmt(o, n->body, d + 1);
    indent(o, d);
    buf_puts(o, ")\n");
    break;
  case ND_BLOCK:
    buf_puts(o, "(block\n");
    for (int i = 0; i < n->nlist; i++) pr_stmt(o, n->list[i], d + 1);
    indent(o, d);
    buf_puts(o, ")\n");
    break;
  case ND_TASKS:
    buf_puts(o, "(tasks\n");
    for (int i = 0; i < n->nlist; i++) pr_stmt(o, n->list[i], d + 1);
    indent(o, d);
    buf_puts(o, ")\n");
    break;
  case ND_TASK:
    buf_printf(o, "(task %s", n->name);
    pr_list(o, n->list, n->nlist);
    buf_puts(o, "\n");
    pr_stmt(o, n->body, d + 1);
    indent(o, d);
    buf_puts(o, ")\n");
    break;
  default: pr_expr(o, n); buf_puts(o, "\n"); break;
  }
}

void ast_print(Ctx *c, const Program *p, Buf *o) {
  (void)c;
  for (int i = 0; i < p->consts.len; i++) {
    ConstDecl *d = p->consts.data[i];
    buf_printf(o, "(const %s", d->name);
    if (d->type) {
      buf_puts(o, " : ");
      pr_type(o, d->type);
    }
    buf_puts(o, " ");
    pr_expr(o, d->value);
    buf_puts(o, ")\n");
  }
  for (int i = 0; i < p->funcs.len; i++) {
    Func *f = p->funcs.data[i];
    buf_printf(o, "(%s %s (", f->is_kernel ? "kernel" : f->is_override ? "override fn" : "fn", f->name);
    for (int j = 0; j < f->nparams; j++) {
      Param *pa = &f->params[j];
      buf_printf(o, "%s%s%s", j ? " " : "", pa->is_const ? "const " : "", pa->name);
      if (pa->type) {
        buf_puts(o, ":");
        pr_type(o, pa->type);
      }
      if (pa->align) {
        buf_puts(o, pa->is_multiple_of ? " multiple_of " : " align ");
        pr_expr(o, pa->align);
      }
      if (pa->deflt) {
        buf_puts(o, "=");
        pr_expr(o, pa->deflt);
      }
    }
    buf_puts(o, ")");
    if (f->ret) {
      buf_puts(o, " -> ");
      pr_type(o, f->ret);
    }
    for (int j = 0; j < f->nattrs; j++) {
      buf_printf(o, " %s(", f->attrs[j].name);
      for (int k = 0; k < f->attrs[j].nargs; k++) {
        if (k) buf_puts(o, ",");
        pr_expr(o, f->attrs[j].args[k]);
      }
      buf_puts(o, ")");
    }
    buf_puts(o, "\n");
    pr_stmt(o, f->body, 1);
    buf_puts(o, ")\n");
  }
}

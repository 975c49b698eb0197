/* builtins_debug.c - print, device_assert and clock64: what a kernel says while it
 * runs (lowered in lower_debug.c: vprintf, and trap for a failed assert;
 * the emulator runs both, emu/sys.c).
 *
 *   print("fmt", x, ...)           printf's conversions, up to 7 scalars, printed
 *                                  once per program (its elected thread)
 *   device_assert(cond, ["msg"])   cond a bool scalar or tile; where it is false
 *                                  the thread prints file:line, the message, its
 *                                  program and thread, and the kernel stops
 *
 * The format is checked here against the arguments: each conversion
 * (flags, width and precision as printf's, no length: the compiler passes
 * every integer as 64 bits and every float as a double) must match its
 * argument's kind; the checked format, its integer conversions given the
 * `ll` length, travels in the op (TOp.str). */
#include "sema.h"
#include <string.h>

static TOp *emit(S *s, Opcode opc, Loc loc, int n, TValue **ops) {
  TOp *op = ir_op(s->c, opc, loc, n, ops, 0, NULL);
  ir_append(s->blk, op);
  return op;
}

/* The format for vprintf, or NULL after an error: each conversion checked
 * against args[0..n) and integer ones widened to `ll`. */
static char *check_format(S *s, const char *fmt, Loc loc, TValue **args, Loc *locs, int n) {
  Buf out = {0};
  int k = 0;
  for (const char *p = fmt; *p; p++) {
    if (*p != '%') {
      buf_put(&out, p, 1);
      continue;
    }
    if (p[1] == '%') {
      buf_puts(&out, "%%");
      p++;
      continue;
    }
    const char *q = p + 1;
    long width = 0, prec = 0;
    while (*q && strchr("-+ #0", *q)) q++;
    for (; *q >= '0' && *q <= '9'; q++)
      if (width < 100000) width = width * 10 + (*q - '0');
    if (*q == '.')
      for (q++; *q >= '0' && *q <= '9'; q++)
        if (prec < 100000) prec = prec * 10 + (*q - '0');
    if (width > 1000 || prec > 1000) {
      dg_error(s->c, loc, "print: a width or precision over 1000");
      buf_free(&out);
      return NULL;
    }
    if (*q && strchr("hlLqjzt", *q)) {
      const char *e = q;
      while (*e && strchr("hlLqjzt", *e)) e++;
      dg_error(s->c, loc, "print: write '%%%.*s%c', not '%%%.*s': every integer is passed as 64 bits, every float as "
                          "a double",
               (int)(q - p - 1), p + 1, *e ? *e : '?', (int)(e - p) + (*e ? 0 : -1), p + 1);
      buf_free(&out);
      return NULL;
    }
    bool is_int = *q && strchr("diouxX", *q), is_float = *q && strchr("fFeEgGaA", *q);
    if (!is_int && !is_float) {
      if (*q == '*') dg_error(s->c, loc, "print: '*' widths and precisions are not supported; write the number");
      else if (*q) dg_error(s->c, loc, "print: '%%%c' is not a conversion print knows (d i o u x X for integers, "
                                       "f F e E g G a A for floats)", *q);
      else dg_error(s->c, loc, "print: the format ends in the middle of a conversion");
      buf_free(&out);
      return NULL;
    }
    if (k >= n) {
      dg_error(s->c, loc, "print: the format has more conversions than the %d argument%s given", n, n == 1 ? "" : "s");
      buf_free(&out);
      return NULL;
    }
    DType dt = (DType)args[k]->type->elem.dt;
    bool arg_float = ty_is_float(dt);
    if (arg_float != is_float) {
      dg_error(s->c, locs[k], "print: '%%%.*s' needs %s, and argument %d is %s", (int)(q - p), p + 1,
               is_float ? "a float" : "an integer or a bool", k + 1, ty_str(s->c, args[k]->type));
      buf_free(&out);
      return NULL;
    }
    buf_put(&out, p, (size_t)(q - p));
    if (is_int) buf_puts(&out, "ll");
    buf_put(&out, q, 1);
    p = q;
    k++;
  }
  if (k != n) {
    dg_error(s->c, locs[k], "print: argument %d has no conversion in the format (it has %d)", k + 1, k);
    buf_free(&out);
    return NULL;
  }
  char *r = ar_strndup(&s->c->arena, out.data ? out.data : "", out.len);
  buf_free(&out);
  return r;
}

static SVal b_print(S *s, Node *call, Node *self) {
  static const Spec sp = {{"fmt", "a", "b", "c", "d", "e", "f", "g"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, "print", &sp, &a)) return sv_err();
  if (a.v[0].k != V_STR) {
    dg_error(s->c, a.loc[0], "the format of print must be a string, not %s", sv_desc(s, a.v[0]));
    return sv_err();
  }
  TValue *args[7];
  Loc locs[8];
  int n = 0;
  for (int j = 1; j < 8; j++) {
    if (!a.given[j]) continue;
    if (j != n + 1) {
      dg_error(s->c, a.loc[j], "print: give the arguments in order, without names");
      return sv_err();
    }
    SVal v = a.v[j];
    TValue *t = NULL;
    if (v.k == V_INT || v.k == V_FLOAT || v.k == V_BOOL) t = sm_rt(s, v, a.loc[j]);
    else if (v.k == V_RT && v.v->type->kind == TY_SCALAR && v.v->type->elem.dt != DT_PTR) t = v.v;
    if (!t) {
      dg_error(s->c, a.loc[j], "print takes numbers and bools, not %s (a tile: reduce it first, or print(\"%%f\", "
                               "sum(x)))", sv_desc(s, v));
      return sv_err();
    }
    locs[n] = a.loc[j];
    args[n++] = t;
  }
  locs[n] = call->loc;
  char *fmt = check_format(s, a.v[0].s, a.loc[0], args, locs, n);
  if (!fmt) return sv_err();
  TOp *op = emit(s, OP_PRINT, call->loc, n, args);
  op->str = fmt;
  return (SVal){.k = V_VOID};
}

static SVal b_device_assert(S *s, Node *call, Node *self) {
  static const Spec sp = {{"cond", "msg"}, 1};
  BArgs a;
  if (!sm_bind_args(s, call, self, "device_assert", &sp, &a)) return sv_err();
  if (a.given[1] && a.v[1].k != V_STR) {
    dg_error(s->c, a.loc[1], "the message of device_assert must be a string, not %s", sv_desc(s, a.v[1]));
    return sv_err();
  }
  SVal c = a.v[0];
  if (c.k == V_BOOL && c.i) return (SVal){.k = V_VOID}; /* known to hold */
  TValue *t = c.k == V_BOOL ? sm_rt(s, c, a.loc[0]) : c.k == V_RT ? c.v : NULL;
  if (!t || (t->type->kind != TY_SCALAR && t->type->kind != TY_TILE) || t->type->elem.dt != DT_BOOL) {
    dg_error(s->c, a.loc[0], "device_assert needs a bool or a tile of bools, not %s", sv_desc(s, c));
    return sv_err();
  }
  TOp *op = emit(s, OP_DEVICE_ASSERT, call->loc, 1, &t);
  op->str = a.given[1] ? ar_strdup(&s->c->arena, a.v[1].s) : "";
  return (SVal){.k = V_VOID};
}

/* clock64(): the SM's cycle counter, for timing a kernel's phases from
 * inside (differences within one program; SMs' counters are not aligned) */
static SVal b_clock64(S *s, Node *call, Node *self) {
  if (call->nlist || self) {
    dg_error(s->c, call->loc, "clock64() takes no arguments");
    return sv_err();
  }
  TOp *op = ir_op(s->c, OP_CLOCK, call->loc, 0, NULL, 1, (Type *[]){ty_dt(s->c, DT_I64)});
  ir_append(s->blk, op);
  return sv_rt(op->res[0]);
}

bool sm_builtin_debug(S *s, Node *call, const char *name, Node *self, SVal *out) {
  if (!strcmp(name, "print")) *out = b_print(s, call, self);
  else if (!strcmp(name, "clock64")) *out = b_clock64(s, call, self);
  else if (!strcmp(name, "device_assert")) *out = b_device_assert(s, call, self);
  else return false;
  return true;
}

/* diag.c - diagnostics: "file:line:col: error: message", the source line
 * and a caret under the column, like a C compiler. */
#include "tilec_int.h"
#include <stdio.h>
#include <string.h>

/* Print the source line of loc and a caret under its column.  Lines end at
 * LF, CRLF or a lone CR (old Mac files), as the lexer counts them. */
static void show_line(Buf *b, Loc loc) {
  if (!loc.src || loc.line <= 0) return;
  const char *p = loc.src->text, *end = p + loc.src->len;
  for (int l = 1; l < loc.line && p < end; p++)
    if (*p == '\n' || (*p == '\r' && (p + 1 == end || p[1] != '\n'))) l++;
  const char *q = p;
  while (q < end && *q != '\n' && *q != '\r') q++;
  size_t n = (size_t)(q - p);
  if (n > 300) n = 300; /* keep huge lines readable */
  buf_puts(b, "  ");
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)p[i];
    /* Never echo control bytes or invalid text: they could garble terminals. */
    buf_put(b, (ch == '\t' || (ch >= 32 && ch < 127)) ? (const char *)&p[i] : "?", 1);
  }
  buf_puts(b, "\n  ");
  for (int i = 1; i < loc.col && (size_t)(i - 1) < n; i++) buf_put(b, p[i - 1] == '\t' ? "\t" : " ", 1);
  buf_puts(b, "^\n");
}

static void emit(Ctx *c, const char *kind, Loc loc, const char *fmt, va_list ap) {
  if (loc.src && loc.line > 0)
    buf_printf(&c->diags, "%s:%d:%d: %s: ", loc.src->name, loc.line, loc.col, kind);
  else if (loc.src)
    buf_printf(&c->diags, "%s: %s: ", loc.src->name, kind);
  else
    buf_printf(&c->diags, "tilec: %s: ", kind);
  buf_vprintf(&c->diags, fmt, ap);
  buf_puts(&c->diags, "\n");
  show_line(&c->diags, loc);
}

/* The run of calls at x's place (a recursive call: the same call nested),
 * from x outwards: its last site; *k: how many. */
static const InlineSite *run_end(const InlineSite *x, int *k) {
  *k = 1;
  for (const InlineSite *y; (y = x->call.at) && y->call.src == x->call.src && y->call.line == x->call.line &&
                            y->call.col == x->call.col;
       x = y)
    ++*k;
  return x;
}

/* A note for each inlined call around loc, innermost first, up to the
 * kernel: loc.at's calls (a TIR op's location), else the calls sema is
 * inlining now.  One call nested in itself is one note; a deep chain shows
 * its 6 innermost and its 4 outermost calls. */
static void inline_notes(Ctx *c, Loc loc) {
  const InlineSite *top = loc.at ? loc.at : c->inl;
  int n = 0, k;
  for (const InlineSite *x = top; x; x = run_end(x, &k)->call.at) n++;
  int i = 0;
  for (const InlineSite *x = top; x; i++) {
    const InlineSite *last = run_end(x, &k);
    if (n > 10 && i >= 6 && i < n - 4) {
      if (i == 6) dg_note(c, (Loc){0}, "(%d more inlined calls)", n - 10);
    } else if (k > 1) {
      dg_note(c, x->call, "in the call of '%s' here (%d calls deep)", x->fn, k);
    } else {
      dg_note(c, x->call, "in the call of '%s' here", x->fn);
    }
    x = last->call.at;
  }
}

/* True once an error beyond the limit was attempted: loops stop then. */
bool dg_too_many(Ctx *c) { return c->nerrors > c->opts.max_errors; }

/* The same error at the same place (a function inlined twice, a static_range
 * body unrolled many times) is reported once. */
static bool seen_before(Ctx *c, Loc loc, const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, aq);
  va_end(aq);
  char *key = ar_printf(&c->arena, "%p:%d:%d:%s", (const void *)loc.src, loc.line, loc.col, msg);
  for (int i = 0; i < c->seen.len; i++)
    if (!strcmp(c->seen.data[i], key)) return true;
  vec_push(&c->arena, &c->seen, key);
  return false;
}

void dg_verror(Ctx *c, Loc loc, const char *fmt, va_list ap) {
  if (c->nerrors > c->opts.max_errors) return;
  if (seen_before(c, loc, fmt, ap)) {
    if (c->nerrors == 0) c->nerrors = 1; /* never lose an error */
    return;
  }
  c->nerrors++;
  if (c->nerrors > c->opts.max_errors) {
    buf_printf(&c->diags, "tilec: error: too many errors (%d), stopping\n", c->opts.max_errors);
    return;
  }
  emit(c, "error", loc, fmt, ap);
  inline_notes(c, loc);
}

void dg_error(Ctx *c, Loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dg_verror(c, loc, fmt, ap);
  va_end(ap);
}

void dg_note(Ctx *c, Loc loc, const char *fmt, ...) {
  if (c->nerrors > c->opts.max_errors) return;
  va_list ap;
  va_start(ap, fmt);
  emit(c, "note", loc, fmt, ap);
  va_end(ap);
}

void dg_warning(Ctx *c, Loc loc, const char *fmt, ...) {
  c->nwarnings++;
  va_list ap;
  va_start(ap, fmt);
  emit(c, "warning", loc, fmt, ap);
  va_end(ap);
  inline_notes(c, loc);
}

void dg_plain(Ctx *c, const char *fmt, ...) {
  c->nerrors++;
  va_list ap;
  va_start(ap, fmt);
  emit(c, "error", (Loc){0}, fmt, ap);
  va_end(ap);
}

void dg_ice(Ctx *c, Loc loc, const char *fmt, ...) {
  c->nerrors++;
  c->ice = true;
  va_list ap;
  va_start(ap, fmt);
  Buf tmp = {0};
  buf_vprintf(&tmp, fmt, ap);
  va_end(ap);
  if (loc.src && loc.line > 0)
    buf_printf(&c->diags, "%s:%d:%d: error: internal compiler error: %s\n", loc.src->name, loc.line, loc.col,
               tmp.data ? tmp.data : "");
  else
    buf_printf(&c->diags, "tilec: error: internal compiler error: %s\n", tmp.data ? tmp.data : "");
  buf_puts(&c->diags, "  (please report this with the source that caused it)\n");
  buf_free(&tmp);
}

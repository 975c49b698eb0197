/* tirutil.h - helpers for unit tests that drive the compiler's internal
 * API (tilec_int.h) on a hand-built context. */
#ifndef TILE_TIRUTIL_H
#define TILE_TIRUTIL_H
#include "tilec_int.h"

/* A source text registered with context c (as the frontend does). */
static inline Source *tu_source(Ctx *c, const char *name, const char *text, size_t len, bool builtin) {
  Source *s = ar_alloc(&c->arena, sizeof *s);
  s->name = name;
  s->text = ar_strndup(&c->arena, text, len);
  s->len = len;
  s->id = c->sources.len;
  s->builtin = builtin;
  vec_push(&c->arena, &c->sources, s);
  return s;
}
#endif

/* arena.c - per-compilation arena memory, vectors and byte buffers.
 *
 * Everything a compilation allocates lives in one Arena and is released at
 * once by ar_free().  Out of memory never aborts: the arena hands out a
 * zeroed scratch pad and sets `failed`, and the pipeline checks the flag. */
#include "tilec_int.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ArenaBlock {
  ArenaBlock *next;
  size_t cap, used;
  _Alignas(16) unsigned char data[];
};

enum { ARENA_CHUNK = 64 * 1024 };

void ar_init(Arena *a) { memset(a, 0, sizeof *a); }

void ar_free(Arena *a) {
  ArenaBlock *b = a->head;
  while (b) {
    ArenaBlock *n = b->next;
    free(b);
    b = n;
  }
  a->head = NULL;
}

void *ar_alloc(Arena *a, size_t n) {
  static _Thread_local _Alignas(16) unsigned char pad[4096];
  n = (n + 15) & ~(size_t)15;
  if (n == 0) n = 16;
  ArenaBlock *b = a->head;
  if (!b || b->cap - b->used < n) {
    size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
    /* Blocks come zeroed from calloc and no byte is handed out twice, so
     * ar_alloc never memsets: the pages of a big block the allocator maps
     * fresh stay untouched (not resident) until the caller writes them. */
    ArenaBlock *nb = calloc(1, sizeof(ArenaBlock) + cap);
    if (!nb) {
      a->failed = true;
      if (n > sizeof pad) return NULL;
      memset(pad, 0, n);
      return pad;
    }
    nb->cap = cap;
    nb->used = 0;
    /* A big one-off block goes behind the current one so the current
     * block's free space stays usable. */
    if (b && cap == n && b->cap - b->used > 1024) {
      nb->next = b->next;
      b->next = nb;
      b = nb;
    } else {
      nb->next = b;
      a->head = nb;
      b = nb;
    }
    a->total += cap;
  }
  void *p = b->data + b->used;
  b->used += n;
  return p;
}

char *ar_strndup(Arena *a, const char *s, size_t n) {
  char *p = ar_alloc(a, n + 1);
  if (!p) return (char *)"";
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *ar_strdup(Arena *a, const char *s) { return ar_strndup(a, s, strlen(s)); }

char *ar_printf(Arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return (char *)"";
  char *p = ar_alloc(a, (size_t)n + 1);
  if (!p) return (char *)"";
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void vec_push(Arena *a, Vec *v, void *x) {
  if (v->len == v->cap) {
    int cap = v->cap ? v->cap * 2 : 8;
    void **d = ar_alloc(a, sizeof(void *) * (size_t)cap);
    if (!d) return;
    if (v->len) memcpy(d, v->data, sizeof(void *) * (size_t)v->len);
    v->data = d;
    v->cap = cap;
  }
  v->data[v->len++] = x;
}

void buf_put(Buf *b, const char *s, size_t n) {
  if (b->failed) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
      b->failed = true;
      return;
    }
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

void buf_puts(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }

void buf_vprintf(Buf *b, const char *fmt, va_list ap) {
  char small[512];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n < 0) {
    va_end(ap2);
    return;
  }
  if ((size_t)n < sizeof small) {
    buf_put(b, small, (size_t)n);
  } else {
    char *big = malloc((size_t)n + 1);
    if (big) {
      vsnprintf(big, (size_t)n + 1, fmt, ap2);
      buf_put(b, big, (size_t)n);
      free(big);
    } else {
      b->failed = true;
    }
  }
  va_end(ap2);
}

void buf_printf(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void buf_free(Buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

/* type.c - dtypes and the types of Tile values (scalars, tiles, tuples). */
#include "tilec_int.h"
#include <string.h>

static const struct {
  const char *name;
  int bits;
} dtypes[DT_COUNT] = {
    [DT_VOID] = {"void", 0}, [DT_BOOL] = {"bool", 1}, [DT_I8] = {"i8", 8},     [DT_U8] = {"u8", 8},
    [DT_I16] = {"i16", 16},  [DT_U16] = {"u16", 16},  [DT_I32] = {"i32", 32},  [DT_U32] = {"u32", 32},
    [DT_I64] = {"i64", 64},  [DT_U64] = {"u64", 64},  [DT_F16] = {"f16", 16},  [DT_BF16] = {"bf16", 16},
    [DT_F32] = {"f32", 32},  [DT_F64] = {"f64", 64},  [DT_PTR] = {"ptr", 64},
};

const char *ty_dtype_name(DType d) { return d < DT_COUNT ? dtypes[d].name : "?"; }

bool ty_dtype_parse(const char *s, DType *out) {
  for (int i = DT_BOOL; i < DT_PTR; i++)
    if (!strcmp(s, dtypes[i].name)) {
      *out = (DType)i;
      return true;
    }
  return false;
}

int ty_dtype_bits(DType d) { return d < DT_COUNT ? dtypes[d].bits : 0; }
int ty_dtype_bytes(DType d) { return d == DT_BOOL ? 1 : ty_dtype_bits(d) / 8; }
bool ty_is_float(DType d) { return d == DT_F16 || d == DT_BF16 || d == DT_F32 || d == DT_F64; }
bool ty_is_int(DType d) { return d >= DT_I8 && d <= DT_U64; }
bool ty_is_signed(DType d) { return d == DT_I8 || d == DT_I16 || d == DT_I32 || d == DT_I64; }
bool ty_elem_eq(Elem a, Elem b) { return a.dt == b.dt && (a.dt != DT_PTR || a.pointee == b.pointee); }

const char *ty_elem_str(Ctx *c, Elem e) {
  if (e.dt == DT_PTR) return ar_printf(&c->arena, "*%s", ty_dtype_name((DType)e.pointee));
  return ty_dtype_name((DType)e.dt);
}

static Type *new_type(Ctx *c, TypeKind k) {
  Type *t = ar_alloc(&c->arena, sizeof *t);
  t->kind = k;
  return t;
}

Type *ty_void(Ctx *c) { return new_type(c, TY_VOID); }

Type *ty_scalar(Ctx *c, Elem e) {
  Type *t = new_type(c, TY_SCALAR);
  t->elem = e;
  return t;
}

Type *ty_dt(Ctx *c, DType d) { return ty_scalar(c, (Elem){(uint8_t)d, 0}); }
Type *ty_ptr(Ctx *c, DType pointee) { return ty_scalar(c, (Elem){DT_PTR, (uint8_t)pointee}); }

Type *ty_tile(Ctx *c, Elem e, int rank, const int *shape) {
  if (rank == 0) return ty_scalar(c, e);
  Type *t = new_type(c, TY_TILE);
  t->elem = e;
  t->rank = rank;
  for (int i = 0; i < rank; i++) t->shape[i] = shape[i];
  return t;
}

Type *ty_with_layout(Ctx *c, const Type *t, const Layout *l) {
  Type *n = new_type(c, t->kind);
  *n = *t;
  n->layout = l;
  return n;
}

Type *ty_with_elem(Ctx *c, const Type *t, Elem e) {
  Type *n = new_type(c, t->kind);
  *n = *t;
  n->elem = e;
  return n;
}

Type *ty_tuple(Ctx *c, Type **items, int n) {
  Type *t = new_type(c, TY_TUPLE);
  t->items = ar_alloc(&c->arena, sizeof(Type *) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) t->items[i] = items[i];
  t->nitems = n;
  return t;
}

bool ty_same_shape(const Type *a, const Type *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

bool ty_eq(const Type *a, const Type *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == TY_TUPLE) {
    if (a->nitems != b->nitems) return false;
    for (int i = 0; i < a->nitems; i++)
      if (!ty_eq(a->items[i], b->items[i])) return false;
    return true;
  }
  if (a->kind == TY_VOID) return true;
  if (a->kind == TY_SMEM || a->kind == TY_BAR || a->kind == TY_TMA)
    if (a->nbuf != b->nbuf || a->swizzle != b->swizzle) return false;
  if (a->kind == TY_SMEM && (a->trans != b->trans || ty_block_rows(a) != ty_block_rows(b))) return false;
  if (a->kind == TY_TMEM && (a->nbuf != b->nbuf || a->lane0 != b->lane0)) return false;
  return ty_elem_eq(a->elem, b->elem) && ty_same_shape(a, b);
}

int64_t ty_numel(const Type *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->shape[i];
  return n;
}

char *ty_str(Ctx *c, const Type *t) {
  switch (t->kind) {
  case TY_VOID: return "void";
  case TY_SCALAR: return (char *)ty_elem_str(c, t->elem);
  case TY_TILE: {
    Buf b = {0};
    buf_printf(&b, "%s[", ty_elem_str(c, t->elem));
    for (int i = 0; i < t->rank; i++) buf_printf(&b, i ? ", %d" : "%d", t->shape[i]);
    buf_puts(&b, "]");
    char *s = ar_strdup(&c->arena, b.data ? b.data : "");
    buf_free(&b);
    return s;
  }
  case TY_SMEM:
  case TY_TMEM:
  case TY_TMA: {
    Buf b = {0};
    buf_printf(&b, "%s<%s, [", t->kind == TY_SMEM ? "smem" : t->kind == TY_TMEM ? "tmem" : "tma",
               ty_elem_str(c, t->elem));
    for (int i = 0; i < t->rank; i++) buf_printf(&b, i ? ", %d" : "%d", t->shape[i]);
    buf_puts(&b, "]");
    if ((t->kind == TY_SMEM || t->kind == TY_TMEM) && t->nbuf) buf_printf(&b, " x %d", t->nbuf);
    if (t->swizzle) buf_printf(&b, ", swizzle %d", t->swizzle);
    if (t->kind == TY_TMEM && t->lane0) buf_printf(&b, ", lanes %d..%d", t->lane0, t->lane0 + t->shape[0] - 1);
    buf_puts(&b, ">");
    char *s = ar_strdup(&c->arena, b.data);
    buf_free(&b);
    return s;
  }
  case TY_BAR: return t->nbuf ? ar_printf(&c->arena, "mbarrier[%d]", t->nbuf) : "mbarrier";
  case TY_TUPLE: {
    Buf b = {0};
    buf_puts(&b, "(");
    for (int i = 0; i < t->nitems; i++) buf_printf(&b, i ? ", %s" : "%s", ty_str(c, t->items[i]));
    buf_puts(&b, ")");
    char *s = ar_strdup(&c->arena, b.data ? b.data : "");
    buf_free(&b);
    return s;
  }
  }
  return "?";
}

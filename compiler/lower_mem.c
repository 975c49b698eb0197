/* lower_mem.c - loads, stores and atomics through tiles of pointers.
 *
 * Vector width = the run of registers that are consecutive in memory
 * (layout), limited by pointer contiguity and alignment (axis info) and 16
 * bytes.  Unmasked accesses are plain llvm.load/store of vectors; masked
 * ones are predicated PTX (inline asm), with `other` preloaded into the
 * destination.  When a mask may change inside a vector (e.g. `offs < n` with
 * n of unknown divisibility), the whole vector is accessed under the AND of
 * its mask bits and the elements of a partial vector one by one under their
 * own bits.  Stores and atomics of replicated layouts run only on the
 * thread that owns each element, so every element is written once. */
#include "lower.h"
#include <stdio.h>
#include <string.h>

static int pow2_floor(int64_t x) {
  int p = 1;
  while ((int64_t)p * 2 <= x && p < 1024) p *= 2;
  return p;
}

/* Width of the contiguous register runs of a pointer tile (elements). */
static int access_vec(Lw *L, TValue *ptr, const LinLayout *lin, int eb, int *fast_dim) {
  int k = 0, dim = -1;
  while (k < lin->nreg) {
    int d = -1, nz = 0;
    for (int j = 0; j < lin->rank; j++)
      if (lin->reg[k][j]) {
        nz++;
        d = j;
      }
    if (nz != 1 || lin->reg[k][d] != (1 << k) || (dim >= 0 && d != dim)) break;
    dim = d;
    k++;
  }
  *fast_dim = dim < 0 ? lin->rank - 1 : dim;
  if (dim < 0) return 1;
  const AxisInfo *ax = ax_get(L->c, ptr);
  int v = 1 << k;
  int c = pow2_floor(ax->contig[dim]);
  int a = pow2_floor(ax->div[dim] / eb > 0 ? ax->div[dim] / eb : 1);
  if (v > c) v = c;
  if (v > a) v = a;
  while (v * eb > 16) v /= 2;
  return v < 1 ? 1 : v;
}

/* How an access of `vec` elements splits into PTX words. */
typedef struct Words {
  int n;          /* number of words */
  int bits;       /* 16 or 32 */
  MlirType wt;    /* word type */
  const char *cr; /* constraint letter */
} Words;

static Words words_for(Lw *L, int vec, int eb) {
  int bytes = vec * eb;
  if (bytes >= 4) return (Words){bytes / 4, 32, L->i32, "r"};
  return (Words){1, 16, L->i16, "h"};
}

static MlirValue *to_words(Lw *L, MlirValue *elems, int vec, MlirType et, Words w, int eb) {
  MlirValue *out = ar_alloc(&L->c->arena, sizeof(MlirValue) * 4);
  if (vec * eb == 1) {
    out[0] = lw_cast(L, "arith.extui", lw_cast(L, "llvm.bitcast", elems[0], L->i8), L->i16);
    return out;
  }
  MlirValue v = vec == 1 ? elems[0] : lw_vec_build(L, lw_vec_type(et, vec), vec, elems);
  if (w.n == 1) {
    out[0] = lw_cast(L, "llvm.bitcast", v, w.wt);
    return out;
  }
  MlirValue wv = lw_cast(L, "llvm.bitcast", v, lw_vec_type(w.wt, w.n));
  for (int i = 0; i < w.n; i++) out[i] = lw_vec_extract(L, wv, i, w.wt);
  return out;
}

static void from_words(Lw *L, MlirValue *words, Words w, int vec, MlirType et, int eb, MlirValue *elems) {
  if (vec * eb == 1) {
    elems[0] = lw_cast(L, "llvm.bitcast", lw_cast(L, "arith.trunci", words[0], L->i8), et);
    return;
  }
  MlirValue v = w.n == 1 ? words[0] : lw_vec_build(L, lw_vec_type(w.wt, w.n), w.n, words);
  if (vec == 1) {
    elems[0] = lw_cast(L, "llvm.bitcast", v, et);
    return;
  }
  MlirValue ev = lw_cast(L, "llvm.bitcast", v, lw_vec_type(et, vec));
  for (int i = 0; i < vec; i++) elems[i] = lw_vec_extract(L, ev, i, et);
}

/* Predicated load of vec elements at addr, `other` where pred is false. */
static void pred_load(Lw *L, MlirValue addr, MlirValue pred, int vec, MlirType et, int eb, MlirValue *other,
                      MlirValue *out) {
  Words w = words_for(L, vec, eb);
  MlirValue *ow = to_words(L, other, vec, et, w, eb);
  char text[512], cons[128];
  int n = 0, c = 0;
  /* outputs $0..$n-1, then addr, pred, defaults */
  for (int i = 0; i < w.n; i++) n += snprintf(text + n, sizeof text - (size_t)n, "mov.b%d $%d, $%d; ", w.bits, i, w.n + 2 + i);
  const char *ty = vec * eb == 1 ? "b8" : w.bits == 16 ? "b16" : "b32";
  n += snprintf(text + n, sizeof text - (size_t)n, "@$%d ld.global", w.n + 1);
  if (w.n > 1) n += snprintf(text + n, sizeof text - (size_t)n, ".v%d", w.n);
  n += snprintf(text + n, sizeof text - (size_t)n, ".%s ", ty);
  if (w.n > 1) n += snprintf(text + n, sizeof text - (size_t)n, "{");
  for (int i = 0; i < w.n; i++) n += snprintf(text + n, sizeof text - (size_t)n, i ? ", $%d" : "$%d", i);
  if (w.n > 1) n += snprintf(text + n, sizeof text - (size_t)n, "}");
  snprintf(text + n, sizeof text - (size_t)n, ", [$%d];", w.n);
  for (int i = 0; i < w.n; i++) c += snprintf(cons + c, sizeof cons - (size_t)c, "%s=%s", i ? "," : "", w.cr);
  c += snprintf(cons + c, sizeof cons - (size_t)c, ",l,b");
  for (int i = 0; i < w.n; i++) c += snprintf(cons + c, sizeof cons - (size_t)c, ",%s", w.cr);
  MlirValue args[8];
  args[0] = addr;
  args[1] = pred;
  for (int i = 0; i < w.n; i++) args[2 + i] = ow[i];
  MlirType rt = w.wt;
  if (w.n > 1) {
    MlirType f[4] = {w.wt, w.wt, w.wt, w.wt};
    rt = mlirLLVMStructTypeLiteralGet(L->mc, w.n, f, false);
  }
  MlirValue res = lw_asm(L, text, cons, 2 + w.n, args, rt, true);
  MlirValue words[4];
  if (w.n == 1) words[0] = res;
  else
    for (int i = 0; i < w.n; i++) words[i] = lw_extract(L, res, i, w.wt);
  from_words(L, words, w, vec, et, eb, out);
}

static void pred_store(Lw *L, MlirValue addr, MlirValue pred, int vec, MlirType et, int eb, MlirValue *vals) {
  Words w = words_for(L, vec, eb);
  MlirValue *vw = to_words(L, vals, vec, et, w, eb);
  char text[256], cons[128];
  int n = 0, c = 0;
  const char *ty = vec * eb == 1 ? "b8" : w.bits == 16 ? "b16" : "b32";
  n += snprintf(text + n, sizeof text - (size_t)n, "@$%d st.global", w.n + 1);
  if (w.n > 1) n += snprintf(text + n, sizeof text - (size_t)n, ".v%d", w.n);
  n += snprintf(text + n, sizeof text - (size_t)n, ".%s [$%d], ", ty, w.n);
  if (w.n > 1) n += snprintf(text + n, sizeof text - (size_t)n, "{");
  for (int i = 0; i < w.n; i++) n += snprintf(text + n, sizeof text - (size_t)n, i ? ", $%d" : "$%d", i);
  if (w.n > 1) n += snprintf(text + n, sizeof text - (size_t)n, "}");
  snprintf(text + n, sizeof text - (size_t)n, ";");
  for (int i = 0; i < w.n; i++) c += snprintf(cons + c, sizeof cons - (size_t)c, "%s%s", i ? "," : "", w.cr);
  snprintf(cons + c, sizeof cons - (size_t)c, ",l,b");
  MlirValue args[8];
  for (int i = 0; i < w.n; i++) args[i] = vw[i];
  args[w.n] = addr;
  args[w.n + 1] = pred;
  lw_asm(L, text, cons, w.n + 2, args, (MlirType){0}, true);
}

static MlirValue and_all(Lw *L, MlirValue *m, int n) {
  MlirValue a = m[0];
  for (int i = 1; i < n; i++) a = lw_bin(L, "arith.andi", a, m[i]);
  return a;
}

static MlirValue not1(Lw *L, MlirValue p) { return lw_bin(L, "arith.xori", p, lw_int(L, L->i1, 1)); }

static MlirValue and_opt(Lw *L, MlirValue a, MlirValue b) {
  if (mlirValueIsNull(a)) return b;
  if (mlirValueIsNull(b)) return a;
  return lw_bin(L, "arith.andi", a, b);
}

bool lw_load_op(Lw *L, TOp *op) {
  TValue *ptr = op->opnds[0], *r = op->res[0];
  Elem pe = {ptr->type->elem.pointee, 0};
  MlirType et = lw_elem_type(L, pe);
  int eb = ty_dtype_bytes((DType)pe.dt);
  bool masked = op->flags & OPF_MASK;
  LV *P = lw_get(L, ptr), *Mk = masked ? lw_get(L, op->opnds[1]) : NULL, *O = masked ? lw_get(L, op->opnds[2]) : NULL;
  if (ptr->type->kind != TY_TILE) {
    LV *out = lw_new(L, 1);
    if (!masked) out->v[0] = lw_load(L, P->v[0], et, eb);
    else pred_load(L, P->v[0], Mk->v[0], 1, et, eb, &O->v[0], &out->v[0]);
    /* Scalars are warp-uniform in Tile (all control flow on them is), but
     * ptxas cannot know it of a loaded value: through redux.sync (REDUX
     * writes a uniform register) it does, and loops and branches on work
     * items and sequence bounds keep the kernel's address and barrier
     * arithmetic on the uniform datapath (tests/ptx/sass_props.sh).
     * Volatile: LLVM must not sink it into an elected-thread region (a TMA
     * coordinate), where redux.sync over the full warp would hang. */
    if (mlirTypeEqual(mlirValueGetType(out->v[0]), L->i32))
      out->v[0] = lw_warp_uniform(L, out->v[0]);
    lw_set(r, out);
    return true;
  }
  LinLayout lin;
  if (!lw_linear(L, ptr, &lin)) return false;
  int fd;
  int vec = access_vec(L, ptr, &lin, eb, &fd);
  int n = ly_nregs(&lin);
  LV *out = lw_new(L, n);
  const AxisInfo *mx = masked ? ax_get(L->c, op->opnds[1]) : NULL;
  bool uniform = !masked || mx->constancy[fd] >= vec;
  for (int g = 0; g < n; g += vec) {
    if (!masked) {
      if (vec == 1) out->v[g] = lw_load(L, P->v[g], et, eb);
      else {
        MlirValue v = lw_load(L, P->v[g], lw_vec_type(et, vec), vec * eb);
        for (int j = 0; j < vec; j++) out->v[g + j] = lw_vec_extract(L, v, j, et);
      }
      continue;
    }
    if (uniform || vec == 1) {
      pred_load(L, P->v[g], Mk->v[g], vec, et, eb, &O->v[g], &out->v[g]);
      continue;
    }
    MlirValue all = and_all(L, &Mk->v[g], vec), nall = not1(L, all);
    MlirValue full[16];
    pred_load(L, P->v[g], all, vec, et, eb, &O->v[g], full);
    for (int j = 0; j < vec; j++) {
      MlirValue one;
      pred_load(L, P->v[g + j], lw_bin(L, "arith.andi", Mk->v[g + j], nall), 1, et, eb, &O->v[g + j], &one);
      out->v[g + j] = lw_select(L, all, full[j], one);
    }
  }
  lw_set(r, out);
  return true;
}

bool lw_store_op(Lw *L, TOp *op) {
  TValue *ptr = op->opnds[0], *val = op->opnds[1];
  Elem pe = {ptr->type->elem.pointee, 0};
  MlirType et = lw_elem_type(L, pe);
  int eb = ty_dtype_bytes((DType)pe.dt);
  bool masked = op->flags & OPF_MASK;
  LV *P = lw_get(L, ptr), *V = lw_get(L, val), *Mk = masked ? lw_get(L, op->opnds[2]) : NULL;
  if (ptr->type->kind != TY_TILE) {
    if (!masked) lw_store(L, V->v[0], P->v[0], eb);
    else pred_store(L, P->v[0], Mk->v[0], 1, et, eb, &V->v[0]);
    return true;
  }
  LinLayout lin;
  if (!lw_linear(L, ptr, &lin)) return false;
  int fd;
  int vec = access_vec(L, ptr, &lin, eb, &fd);
  int n = ly_nregs(&lin);
  MlirValue cp = lw_canonical_pred(L, &lin);
  const AxisInfo *mx = masked ? ax_get(L->c, op->opnds[2]) : NULL;
  bool uniform = !masked || mx->constancy[fd] >= vec;
  for (int g = 0; g < n; g += vec) {
    if (!masked && mlirValueIsNull(cp)) {
      if (vec == 1) lw_store(L, V->v[g], P->v[g], eb);
      else lw_store(L, lw_vec_build(L, lw_vec_type(et, vec), vec, &V->v[g]), P->v[g], vec * eb);
      continue;
    }
    if (uniform || vec == 1) {
      MlirValue p = and_opt(L, masked ? Mk->v[g] : (MlirValue){0}, cp);
      pred_store(L, P->v[g], p, vec, et, eb, &V->v[g]);
      continue;
    }
    MlirValue all = and_all(L, &Mk->v[g], vec), nall = not1(L, all);
    pred_store(L, P->v[g], and_opt(L, all, cp), vec, et, eb, &V->v[g]);
    for (int j = 0; j < vec; j++) {
      MlirValue p = and_opt(L, lw_bin(L, "arith.andi", Mk->v[g + j], nall), cp);
      pred_store(L, P->v[g + j], p, 1, et, eb, &V->v[g + j]);
    }
  }
  return true;
}

/* One predicated atomic add; returns the old value (0 where pred is false),
 * or, !ret, a red (no value back). sem: "" (relaxed, gpu scope) or
 * ".acq_rel.gpu" (the program-wide scalar form). */
static MlirValue atom_add(Lw *L, MlirValue addr, MlirValue pred, MlirValue v, DType dt, bool ret, const char *sem) {
  const char *ty, *cr;
  MlirType t = mlirValueGetType(v), rt = t;
  MlirValue x = v;
  switch (dt) {
  case DT_F32: ty = "f32"; cr = "f"; break;
  case DT_F64: ty = "f64"; cr = "d"; break;
  case DT_I32: case DT_U32: ty = "u32"; cr = "r"; break;
  case DT_I64: case DT_U64: ty = "u64"; cr = "l"; break;
  case DT_F16: ty = "noftz.f16"; cr = "h"; rt = L->i16; x = lw_cast(L, "llvm.bitcast", v, L->i16); break;
  default: ty = "noftz.bf16"; cr = "h"; rt = L->i16; x = lw_cast(L, "llvm.bitcast", v, L->i16); break;
  }
  char text[160], cons[32];
  const char *mov = dt == DT_F32 ? "mov.b32 $0, 0f00000000;" : dt == DT_F64 ? "mov.b64 $0, 0d0000000000000000;"
                    : (dt == DT_I64 || dt == DT_U64) ? "mov.b64 $0, 0;" : (dt == DT_F16 || dt == DT_BF16) ? "mov.b16 $0, 0;"
                                                                                                            : "mov.b32 $0, 0;";
  if (!ret) {
    snprintf(text, sizeof text, "@$2 red%s.global.add.%s [$0], $1;", sem, ty);
    snprintf(cons, sizeof cons, "l,%s,b", cr);
    lw_asm(L, text, cons, 3, (MlirValue[]){addr, x, pred}, (MlirType){0}, true);
    return (MlirValue){0};
  }
  snprintf(text, sizeof text, "%s @$3 atom%s.global.add.%s $0, [$1], $2;", mov, sem, ty);
  snprintf(cons, sizeof cons, "=%s,l,%s,b", cr, cr);
  MlirValue r = lw_asm(L, text, cons, 3, (MlirValue[]){addr, x, pred}, rt, true);
  if (dt == DT_F16 || dt == DT_BF16) r = lw_cast(L, "llvm.bitcast", r, t);
  return r;
}

static bool has_uses(TValue *v) { return v->uses > 0; }

bool lw_atomic_op(Lw *L, TOp *op) {
  TValue *ptr = op->opnds[0], *val = op->opnds[1], *r = op->res[0];
  DType dt = (DType)ptr->type->elem.pointee;
  bool masked = op->flags & OPF_MASK;
  LV *P = lw_get(L, ptr), *V = lw_get(L, val), *Mk = masked ? lw_get(L, op->opnds[2]) : NULL;
  MlirType et = lw_elem_type(L, (Elem){(uint8_t)dt, 0});
  if (ptr->type->kind != TY_TILE) {
    /* once for the program (or task replica), after every memory access
     * of its threads before it (a barrier, then one thread's acq_rel
     * atomic at gpu scope: a ticket taken after a program's partial sums
     * are in, as a last-program reduction needs); the old value reaches
     * all through shared memory */
    MlirValue first = L->elect;
    MlirValue p = masked ? lw_bin(L, "arith.andi", Mk->v[0], first) : first;
    lw_barrier(L);
    MlirValue old = atom_add(L, P->v[0], p, V->v[0], dt, true, ".acq_rel.gpu");
    LV *out = lw_new(L, 1);
    if (has_uses(r) && L->warps == 1 && ty_dtype_bytes(dt) == 4) {
      /* one warp (a task's producer taking work items): lane 0 took it,
       * a shuffle hands it on, no shared memory */
      MlirValue b = mlirTypeEqual(et, L->i32) ? old : lw_cast(L, "llvm.bitcast", old, L->i32);
      b = lw_asm(L, "shfl.sync.idx.b32 $0, $1, 0, 31, -1;", "=r,r", 1, &b, L->i32, true);
      out->v[0] = mlirTypeEqual(et, L->i32) ? b : lw_cast(L, "llvm.bitcast", b, et);
    } else if (has_uses(r)) {
      int eb = ty_dtype_bytes(dt);
      if (eb > L->smem_max) L->smem_max = eb;
      lw_barrier(L);
      IfScope sc;
      lw_begin_if(L, &sc);
      lw_store(L, old, L->scratch, eb);
      lw_end_if(L, &sc, first);
      lw_barrier(L);
      out->v[0] = lw_load(L, L->scratch, et, eb);
    } else {
      out->v[0] = old;
    }
    lw_set(r, out);
    return true;
  }
  LinLayout lin;
  if (!lw_linear(L, ptr, &lin)) return false;
  int n = ly_nregs(&lin);
  MlirValue cp = lw_canonical_pred(L, &lin);
  LV *out = lw_new(L, n);
  if (dt == DT_F32 && !has_uses(r)) {
    /* no value back: red, up to 16 contiguous bytes at once (sm_90's
     * red.global.add.v2/v4.f32; a quarter of the L2 atomic operations
     * of a row of partial sums) where the mask is whole over them */
    int fd, vec = access_vec(L, ptr, &lin, 4, &fd);
    if (masked && ax_get(L->c, op->opnds[2])->constancy[fd] < vec) vec = 1;
    for (int g = 0; g < n; g += vec) {
      MlirValue p = and_opt(L, masked ? Mk->v[g] : (MlirValue){0}, cp);
      if (mlirValueIsNull(p)) p = lw_int(L, L->i1, 1);
      if (vec == 1) {
        atom_add(L, P->v[g], p, V->v[g], dt, false, "");
        continue;
      }
      char text[96], cons[32];
      snprintf(text, sizeof text, vec == 4 ? "@$5 red.global.add.v4.f32 [$0], {$1, $2, $3, $4};"
                                           : "@$3 red.global.add.v2.f32 [$0], {$1, $2};");
      snprintf(cons, sizeof cons, vec == 4 ? "l,f,f,f,f,b" : "l,f,f,b");
      MlirValue args[6] = {P->v[g]};
      for (int j = 0; j < vec; j++) args[1 + j] = V->v[g + j];
      args[1 + vec] = p;
      lw_asm(L, text, cons, vec + 2, args, (MlirType){0}, true);
    }
    lw_set(r, out);
    return true;
  }
  for (int i = 0; i < n; i++) {
    MlirValue p = and_opt(L, masked ? Mk->v[i] : (MlirValue){0}, cp);
    if (mlirValueIsNull(p)) p = lw_int(L, L->i1, 1);
    out->v[i] = atom_add(L, P->v[i], p, V->v[i], dt, has_uses(r), "");
  }
  if (!mlirValueIsNull(cp) && has_uses(r)) out = lw_smem_convert(L, out, &lin, &lin, (Elem){(uint8_t)dt, 0});
  lw_set(r, out);
  return true;
}

/* lower_debug.c - print and device_assert (builtins_debug.c) as the CUDA
 * toolchain lowers printf and a failed assert:
 *
 *   vprintf(format, args): format a global string of the module, args a
 *   buffer in the thread's local memory (one per kernel, 8 bytes a value:
 *   integers as 64 bits, floats as doubles, as the format's conversions
 *   expect); the call is the driver's printf (its output is flushed to the
 *   host's stdout at the next synchronization).
 *   trap: after a failed assert's report, the kernel stops; the launch
 *   fails (and, as with CUDA's assert, the context with it).
 *
 * The emulator runs the same PTX (emu/sys.c: vprintf formats the buffer,
 * trap is a report with the Tile line). */
#include "lower.h"
#include <stdio.h>
#include <string.h>

static MlirStringRef sref(const char *s) { return mlirStringRefCreateFromCString(s); }
static MlirType ptr0(Lw *L) { return mlirLLVMPointerTypeGet(L->mc, 0); }

enum { PRINT_MAX_ARGS = 8 };

static void declare_vprintf(Lw *L) {
  if (L->have_vprintf) return;
  L->have_vprintf = true;
  MlirType args[2] = {ptr0(L), ptr0(L)};
  MlirType fty = mlirLLVMFunctionTypeGet(L->i32, 2, args, false);
  MlirNamedAttribute at[3] = {
      lw_attr(L, "sym_name", mlirStringAttrGet(L->mc, sref("vprintf"))),
      lw_attr(L, "function_type", mlirTypeAttrGet(fty)),
      lw_attr(L, "linkage", lw_pattr(L, "#llvm.linkage<external>")),
  };
  MlirOperationState st = mlirOperationStateGet(sref("llvm.func"), L->loc);
  mlirOperationStateAddAttributes(&st, 3, at);
  MlirRegion body = mlirRegionCreate(); /* no block: a declaration */
  mlirOperationStateAddOwnedRegions(&st, 1, &body);
  mlirBlockInsertOwnedOperation(mlirModuleGetBody(L->mod), 0, mlirOperationCreate(&st));
}

/* The generic address of a new global string holding text (NUL included). */
static MlirValue format_string(Lw *L, const char *text) {
  char name[48];
  snprintf(name, sizeof name, "__tile_fmt%d", L->nformats++);
  size_t n = strlen(text) + 1;
  MlirAttribute v = mlirStringAttrGet(L->mc, mlirStringRefCreate(text, n));
  lw_add_global(L, name, mlirLLVMArrayTypeGet(L->i8, (unsigned)n), 1, v, true, 1);
  MlirNamedAttribute g = lw_attr(L, "global_name", mlirFlatSymbolRefAttrGet(L->mc, sref(name)));
  MlirValue p = lw_op1(L, "llvm.mlir.addressof", 0, NULL, L->ptr1, 1, &g);
  return lw_cast(L, "llvm.addrspacecast", p, ptr0(L));
}

/* The kernel's argument buffer: an alloca in its entry block (a static
 * frame: local memory), made once. */
static MlirValue print_buffer(Lw *L) {
  if (!mlirValueIsNull(L->printbuf)) return L->printbuf;
  MlirBlock saved_entry = L->entry;
  MlirOperation saved_pe = L->prologue_end;
  bool saved_in = L->in_prologue;
  L->entry = L->kentry, L->prologue_end = L->kprologue, L->in_prologue = true;
  MlirValue one = lw_i32(L, 1);
  MlirNamedAttribute at[2] = {
      lw_attr(L, "elem_type", mlirTypeAttrGet(mlirLLVMArrayTypeGet(L->i8, 8 * PRINT_MAX_ARGS))),
      lw_attr(L, "alignment", mlirIntegerAttrGet(L->i64, 8)),
  };
  L->printbuf = lw_op1(L, "llvm.alloca", 1, &one, ptr0(L), 2, at);
  L->entry = saved_entry, L->prologue_end = saved_pe, L->in_prologue = saved_in;
  return L->printbuf;
}

/* One value as vprintf takes it: integers (bool included) as 64 bits, sign-
 * or zero-extended by their dtype, floats as doubles. */
static MlirValue widen(Lw *L, MlirValue v, DType dt) {
  if (ty_is_float(dt)) return dt == DT_F64 ? v : lw_cast(L, "arith.extf", v, L->f64);
  if (dt == DT_I64 || dt == DT_U64) return v;
  bool sign = dt == DT_I8 || dt == DT_I16 || dt == DT_I32;
  return lw_cast(L, sign ? "arith.extsi" : "arith.extui", v, L->i64);
}

/* vprintf(fmt, {vals}) */
static void call_vprintf(Lw *L, const char *fmt, int n, const MlirValue *vals) {
  declare_vprintf(L);
  MlirValue f = format_string(L, fmt), buf = print_buffer(L);
  for (int i = 0; i < n; i++) lw_store(L, vals[i], lw_gep(L, buf, lw_i32(L, 8 * i), L->i8, ptr0(L)), 8);
  MlirNamedAttribute at[3] = {
      lw_attr(L, "callee", mlirFlatSymbolRefAttrGet(L->mc, sref("vprintf"))),
      lw_attr(L, "operandSegmentSizes", lw_pattr(L, "array<i32: 2, 0>")),
      lw_attr(L, "op_bundle_sizes", lw_pattr(L, "array<i32>")),
  };
  lw_op(L, "llvm.call", 2, (MlirValue[]){f, buf}, 1, &L->i32, 3, at);
}

static MlirValue sreg64(Lw *L, const char *name) {
  return lw_cast(L, "arith.extui", lw_op1(L, name, 0, NULL, L->i32, 0, NULL), L->i64);
}

/* text with every '%' doubled (a file name or message inside a format) */
static void put_literal(Buf *b, const char *text) {
  for (const char *p = text; *p; p++) {
    if (*p == '%') buf_puts(b, "%%");
    else buf_put(b, p, 1);
  }
}

static bool lower_print(Lw *L, TOp *op) {
  MlirValue vals[PRINT_MAX_ARGS];
  if (op->nopnds > PRINT_MAX_ARGS) {
    dg_ice(L->c, op->loc, "print with %d arguments", op->nopnds);
    return false;
  }
  for (int i = 0; i < op->nopnds; i++) vals[i] = widen(L, lw_get(L, op->opnds[i])->v[0], (DType)op->opnds[i]->type->elem.dt);
  IfScope sc;
  lw_begin_if(L, &sc);
  call_vprintf(L, op->str, op->nopnds, vals);
  lw_end_if(L, &sc, L->elect);
  return true;
}

static bool lower_assert(Lw *L, TOp *op) {
  TValue *c = op->opnds[0];
  LV *v = lw_get(L, c);
  MlirValue ok = v->v[0];
  for (int i = 1; i < v->n; i++) ok = lw_bin(L, "arith.andi", ok, v->v[i]);
  MlirValue bad = lw_bin(L, "arith.xori", ok, lw_int(L, L->i1, 1));
  /* a scalar is the same in every thread: one report, from the elected one */
  if (c->type->kind != TY_TILE) bad = lw_bin(L, "arith.andi", bad, L->elect);
  Buf f = {0};
  put_literal(&f, op->loc.src ? op->loc.src->name : "?");
  buf_printf(&f, ":%d: device_assert failed", op->loc.line);
  if (op->str && *op->str) {
    buf_puts(&f, ": ");
    put_literal(&f, op->str);
  }
  buf_puts(&f, " (program (%lld, %lld, %lld), thread %lld)\n");
  IfScope sc;
  lw_begin_if(L, &sc);
  MlirValue vals[4] = {sreg64(L, "nvvm.read.ptx.sreg.ctaid.x"), sreg64(L, "nvvm.read.ptx.sreg.ctaid.y"),
                       sreg64(L, "nvvm.read.ptx.sreg.ctaid.z"), sreg64(L, "nvvm.read.ptx.sreg.tid.x")};
  call_vprintf(L, f.data, 4, vals);
  buf_free(&f);
  lw_asm(L, "trap;", "", 0, NULL, (MlirType){0}, true);
  lw_end_if(L, &sc, bad);
  return true;
}

bool lw_debug_op(Lw *L, TOp *op) {
  switch (op->opc) {
  case OP_PRINT: return lower_print(L, op);
  case OP_DEVICE_ASSERT: return lower_assert(L, op);
  case OP_CLOCK: /* volatile: not merged with another read, nor moved across the waits around it */
  {
    LV *lv = lw_new(L, 1);
    lv->v[0] = lw_asm(L, "mov.u64 $0, %clock64;", "=l", 0, NULL, L->i64, true);
    lw_set(op->res[0], lv);
    return true;
  }
  default: dg_ice(L->c, op->loc, "no lowering for %s", ir_opname(op->opc)); return false;
  }
}

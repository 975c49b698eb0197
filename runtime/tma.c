/* tma.c - TMA descriptors for `tma<...>` kernel parameters, built with
 * cuTensorMapEncodeTiled from the kernel's metadata (dtype, box, swizzle) and
 * the tensor the caller describes, with every precondition TMA has checked
 * here first so a mistake is a message naming the parameter, not a fault. */
#include "rt.h"
#include "cuda_api.h"
#include <string.h>

static int tma_dtype(const char *d, int *bytes) {
  static const struct {
    const char *name;
    int code, bytes;
  } map[] = {{"u8", 0, 1},  {"i8", 0, 1},   {"u16", 1, 2},  {"i16", 1, 2},  {"u32", 2, 4}, {"i32", 3, 4},
             {"u64", 4, 8}, {"i64", 5, 8},  {"f16", 6, 2},  {"f32", 7, 4},  {"f64", 8, 8}, {"bf16", 9, 2}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(map[i].name, d)) {
      *bytes = map[i].bytes;
      return map[i].code;
    }
  return -1;
}

/* Encode the descriptor of a rows x cols tensor of dtype at base, rows
 * row_stride elements apart, copied in boxes of box[0] rows x box[1]
 * columns; what is named in messages: parameter pname of kernel kname. */
static tile_status rt_tma_encode(tile_tma_desc *d, const char *kname, const char *pname, const char *dtype,
                                 const int box[2], int swizzle, tile_devptr base, uint64_t rows, uint64_t cols,
                                 uint64_t row_stride, bool planes) {
  int eb;
  int code = tma_dtype(dtype, &eb);
  if (code < 0) return rt_fail(TILE_ERR_INVALID, "TMA cannot move %s elements", dtype);
  if (base % 16)
    return rt_fail(TILE_ERR_INVALID, "TMA tensor for '%s' of kernel '%s' starts at 0x%llx, not 16-byte aligned",
                   pname, kname, (unsigned long long)base);
  if (!rows || !cols || rows >= (1ull << 32) || cols >= (1ull << 32))
    return rt_fail(TILE_ERR_INVALID, "TMA tensor for '%s' is %llu x %llu: each extent must be 1 to 2^32-1", pname,
                   (unsigned long long)rows, (unsigned long long)cols);
  if (row_stride < cols)
    return rt_fail(TILE_ERR_INVALID, "TMA tensor for '%s': the row stride %llu is smaller than the %llu columns",
                   pname, (unsigned long long)row_stride, (unsigned long long)cols);
  uint64_t pitch = row_stride * (uint64_t)eb;
  if (rows > 1 && (pitch % 16 || pitch >= (1ull << 40)))
    return rt_fail(TILE_ERR_INVALID, "TMA tensor for '%s': rows are %llu bytes apart; TMA needs a multiple of 16 "
                                     "(pad the rows, e.g. a row stride that is a multiple of %d elements)",
                   pname, (unsigned long long)pitch, 16 / eb);
  tile_status st = rt_driver_load();
  if (st != TILE_OK) return st;
  if (!rt_cu.cuTensorMapEncodeTiled)
    return rt_fail(TILE_ERR_CUDA, "this driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12 or later)");
  /* planes: a third dimension, planes of `rows` rows one after another, as
   * many as a 32-bit coordinate reaches (the kernel names the plane) */
  if (planes && pitch * rows >= (1ull << 40))
    return rt_fail(TILE_ERR_INVALID, "TMA tensor for '%s': planes of %llu rows are %llu bytes apart (TMA: under 2^40)",
                   pname, (unsigned long long)rows, (unsigned long long)(pitch * rows));
  uint64_t dims[3] = {cols, rows, INT32_MAX};
  uint64_t strides[2] = {pitch, pitch * rows};
  uint32_t boxd[3] = {(uint32_t)box[1], (uint32_t)box[0], 1};
  uint32_t estr[3] = {1, 1, 1};
  int sw = swizzle == 128 ? 3 : swizzle == 64 ? 2 : swizzle == 32 ? 1 : 0;
  memset(d, 0, sizeof *d);
  CUresult r = rt_cu.cuTensorMapEncodeTiled((CUtensorMap *)d->bytes, code, planes ? 3 : 2, (void *)(uintptr_t)base,
                                            dims, strides, boxd, estr, 0 /* no interleave */, sw,
                                            2 /* L2 promotion 128B */, 0 /* out of bounds: zero */);
  if (r != 0)
    return rt_cuda_fail(r, "cuTensorMapEncodeTiled for '%s' (%llu x %llu %s, box %d x %d, swizzle %d)", pname,
                        (unsigned long long)rows, (unsigned long long)cols, dtype, box[0], box[1], swizzle);
  return TILE_OK;
}

tile_status tile_tma_desc_2d(tile_tma_desc *d, const tile_kernel *k, int param, tile_devptr base, uint64_t rows,
                             uint64_t cols, uint64_t row_stride) {
  if (!d || !k) return rt_fail(TILE_ERR_INVALID, "tile_tma_desc_2d: NULL descriptor or kernel");
  const tile_kernel_info *ki = k->info;
  if (param < 0 || param >= ki->nparams)
    return rt_fail(TILE_ERR_INVALID, "kernel '%s' has no parameter %d", ki->name, param);
  const tile_param_info *p = &ki->params[param];
  if (p->kind != TILE_PARAM_TMA)
    return rt_fail(TILE_ERR_INVALID, "parameter %d ('%s') of kernel '%s' is not a TMA descriptor", param, p->name,
                   ki->name);
  if (!p->box[0] || !p->box[1])
    return rt_fail(TILE_ERR_BAD_MODULE, "parameter '%s' of kernel '%s' has no box in the metadata", p->name,
                   ki->name);
  return rt_tma_encode(d, ki->name, p->name, p->dtype, p->box, p->swizzle, base, rows, cols, row_stride, false);
}

/* An integer argument (or the constant) a derived parameter names. */
static long long rt_derive_value(const tile_kernel_info *ki, void **args, int from, long long lit) {
  return from < 0 ? lit : rt_int_arg(&ki->params[from], args[from]);
}

tile_status rt_build_derived(const tile_kernel_info *ki, void **args, tile_tma_desc *out) {
  for (int i = 0; i < ki->nderived; i++) {
    const tile_derived_info *q = &ki->derived[i];
    tile_devptr base;
    memcpy(&base, args[q->from[0]], sizeof base);
    long long cols = rt_derive_value(ki, args, q->from[1], q->lit[1]);
    long long rows = rt_derive_value(ki, args, q->from[2], q->lit[2]);
    long long stride = rt_derive_value(ki, args, q->from[3], q->lit[3]);
    const char *pn = q->from[0] >= 0 ? ki->params[q->from[0]].name : "?";
    if (rows < 1 || cols < 1 || stride < 1)
      return rt_fail(TILE_ERR_INVALID,
                     "kernel '%s' reads '%s' as a %lld x %lld tensor with rows %lld elements apart (from its "
                     "arguments, for the TMA copies of its pipelined dot): each must be at least 1",
                     ki->name, pn, rows, cols, stride);
    tile_status s = rt_tma_encode(&out[i], ki->name, pn, q->dtype, q->box, q->swizzle, base, (uint64_t)rows,
                                  (uint64_t)cols, (uint64_t)stride, q->planes != 0);
    if (s != TILE_OK) return s;
  }
  return TILE_OK;
}

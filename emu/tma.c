/* tma.c - tensor maps under TILE_INTERPRET=1 (issue 16): what
 * cuTensorMapEncodeTiled checks and records, in the emulator's own 128-byte
 * encoding (EmTensorMap, emu.h), which exec decodes when a
 * cp.async.bulk.tensor names the map.
 *
 * The checks are the CUDA driver's documented requirements (the driver API
 * reference, cuTensorMapEncodeTiled): rank 1 to 5 (3 to 5 interleaved), the
 * global address 16-byte aligned (32 with 32-byte interleave), each global
 * dimension 1 to 2^32, each stride a multiple of 16 (32) below 2^40, box
 * dimensions 1 to 256 with the inner one a multiple of 16 bytes and, when
 * swizzled, at most the swizzle span (32, 64, 128 bytes), element strides 1
 * to 8, the NaN out-of-bounds fill only for floating-point types.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exec_int.h"

/* FNV-1a over the map's bytes before its checksum. */
static uint64_t tm_check(const EmTensorMap *m) {
  const uint8_t *p = (const uint8_t *)m;
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < offsetof(EmTensorMap, check); i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* CUtensorMapDataType: the element size in bytes, 0 for the packed
 * sub-byte types (13..15), -1 for no type at all. */
static int tm_esize(int dtype) {
  static const int8_t size[16] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4, 0, 0, 0};
  return dtype >= 0 && dtype < 16 ? size[dtype] : -1;
}

bool em_tmap_encode(EmTensorMap *map, int dtype, unsigned rank, const void *base, const uint64_t *dims,
                    const uint64_t *strides, const uint32_t *box, const uint32_t *estr, int interleave,
                    int swizzle, int l2, int oob, bool *unsupported, char *err, size_t errlen) {
  bool unsup_scratch;
  if (!unsupported) unsupported = &unsup_scratch;
  *unsupported = false;
  int es = tm_esize(dtype);
  if (!map) return em_errf(err, errlen, "no tensor map to fill");
  if (((uintptr_t)map) % 64) return em_errf(err, errlen, "the tensor map at %p is not 64-byte aligned", (void *)map);
  if (es < 0) return em_errf(err, errlen, "data type %d is not a CUtensorMapDataType", dtype);
  if (interleave < 0 || interleave > 2) return em_errf(err, errlen, "interleave %d is not a CUtensorMapInterleave", interleave);
  if (swizzle < 0 || swizzle > 3) return em_errf(err, errlen, "swizzle %d is not one of none, 32B, 64B, 128B", swizzle);
  if (l2 < 0 || l2 > 3) return em_errf(err, errlen, "L2 promotion %d is not a CUtensorMapL2promotion", l2);
  if (oob < 0 || oob > 1) return em_errf(err, errlen, "out-of-bounds fill %d is not a CUtensorMapFloatOOBfill", oob);
  if (rank < 1 || rank > 5 || (interleave && rank < 3))
    return em_errf(err, errlen, "rank %u (1 to 5, 3 to 5 when interleaved)", rank);
  if (!dims || !box || !estr || (rank > 1 && !strides)) return em_errf(err, errlen, "a NULL array argument");
  unsigned align = interleave == 2 ? 32 : 16;
  if (!base || (uintptr_t)base % align)
    return em_errf(err, errlen, "the global address %p is not %u-byte aligned", base, align);
  if (oob == 1 && !(dtype >= 6 && dtype <= 12))
    return em_errf(err, errlen, "the NaN out-of-bounds fill on data type %d, not a floating-point one", dtype);
  for (unsigned i = 0; i < rank; i++) {
    if (dims[i] == 0 || dims[i] > (1ull << 32))
      return em_errf(err, errlen, "global dimension %u is %llu (1 to 2^32)", i, (unsigned long long)dims[i]);
    if (box[i] == 0 || box[i] > 256) return em_errf(err, errlen, "box dimension %u is %u (1 to 256)", i, box[i]);
    if (estr[i] == 0 || estr[i] > 8) return em_errf(err, errlen, "element stride %u is %u (1 to 8)", i, estr[i]);
    if (i > 0 && (strides[i - 1] % align || strides[i - 1] >= (1ull << 40)))
      return em_errf(err, errlen, "global stride %u is %llu bytes (a multiple of %u below 2^40)", i - 1,
                     (unsigned long long)strides[i - 1], align);
  }
  if (es == 0 || interleave) {
    *unsupported = true;
    return em_errf(err, errlen, "the emulator does not run %s tensor maps yet",
                   es == 0 ? "packed sub-byte" : "interleaved");
  }
  uint64_t inner = (uint64_t)box[0] * (unsigned)es;
  if (inner % 16) return em_errf(err, errlen, "the box's inner dimension is %llu bytes, not a multiple of 16",
                                 (unsigned long long)inner);
  if (swizzle && inner > (16u << swizzle))
    return em_errf(err, errlen, "the box's inner dimension is %llu bytes, more than the %u-byte swizzle span",
                   (unsigned long long)inner, 16u << swizzle);
  if (rank > 1 && strides[0] < dims[0] * (unsigned)es)
    return em_errf(err, errlen, "global stride 0 is %llu bytes, less than a row of %llu elements",
                   (unsigned long long)strides[0], (unsigned long long)dims[0]);
  EmTensorMap m = {.magic = EM_TMAP_MAGIC, .dtype = (uint8_t)dtype, .rank = (uint8_t)rank, .esize = (uint8_t)es,
                   .swizzle = (uint8_t)swizzle, .interleave = (uint8_t)interleave, .oob = (uint8_t)oob,
                   .l2 = (uint8_t)l2, .base = (uint64_t)(uintptr_t)base};
  for (unsigned i = 0; i < rank; i++) {
    m.dims[i] = dims[i];
    m.box[i] = (uint16_t)box[i];
    m.estr[i] = (uint8_t)estr[i];
    m.strides[i] = i == 0 ? (uint64_t)es : strides[i - 1];
  }
  m.check = tm_check(&m);
  memcpy(map, &m, sizeof m);
  return true;
}

bool em_tmap_decode(const void *p, EmTensorMap *map) {
  memcpy(map, p, sizeof *map);
  if (map->magic != EM_TMAP_MAGIC || map->check != tm_check(map)) return false;
  return map->rank >= 1 && map->rank <= 5 && tm_esize(map->dtype) == map->esize && map->esize > 0 &&
         map->swizzle <= 3;
}

/* ---- the box in shared memory (for async.c's copies and check.c's records) ---- */

/* The box's extent in shared memory, dimension d. */
uint32_t em_tmap_box_n(const EmTensorMap *m, int d) { return (m->box[d] + m->estr[d] - 1u) / m->estr[d]; }

uint64_t em_tmap_box_bytes(const EmTensorMap *m) {
  uint64_t b = m->esize;
  for (int d = 0; d < m->rank; d++) b *= em_tmap_box_n(m, d);
  return b;
}

bool em_box_chunks(const EmAsync *op, bool (*fn)(void *, uint32_t, uint32_t), void *arg) {
  uint64_t bytes = em_tmap_box_bytes(&op->map);
  for (uint64_t off = 0; off < bytes; off += 16)
    if (!fn(arg, em_swizzle(op->smem + (uint32_t)off, op->map.swizzle), (uint32_t)(bytes - off < 16 ? bytes - off : 16)))
      return false;
  return true;
}

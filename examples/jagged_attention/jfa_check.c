/* jfa_check.c - what both halves of the JFA host code share and call
 * (jfa.c, the plans and the forward pass; jfa_bwd.c, the backward pass): the
 * argument checks, which run without a GPU, device uploads and the loading
 * of kernels from the cubin folder. It calls neither of them. See jfa.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfa_int.h"

/* Kernel `name` of DIR/NAME.dD.VARIANT.sm_90a.cubin, loaded into *mod, *kern on first use. */
tile_status jfa_load_kernel(const jfa_lib *lib, const char *name, int head_dim, const char *variant,
                               tile_module **mod, tile_kernel **kern) {
  if (!*kern) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.d%d.%s.sm_90a.cubin", lib->dir, name, head_dim, variant);
    tile_module *m;
    tile_status st = tile_module_load_file(path, &m);
    if (st != TILE_OK) return st;
    st = tile_module_get_kernel(m, name, kern);
    if (st != TILE_OK) {
      tile_module_unload(m);
      return st;
    }
    *mod = m;
  }
  return TILE_OK;
}

int64_t jfa_offset_at(const jfa_params *p, int64_t i) {
  return p->cu_seqlens_64bit ? ((const int64_t *)p->cu_seqlens)[i] : ((const int32_t *)p->cu_seqlens)[i];
}

/* name: what the message calls it; shape: the expected shape (rank dims). */
tile_status jfa_check_tensor(const char *name, const jfa_tensor *t, const char *dtype, int rank,
                                const int64_t *shape, int tma) {
  if (!t) return tile_set_error(TILE_ERR_INVALID, "jfa: %s is NULL", name);
  if (!t->dtype || strcmp(t->dtype, dtype))
    return tile_set_error(TILE_ERR_INVALID, "jfa: %s must be %s, not %s", name, dtype, t->dtype ? t->dtype : "(none)");
  if (t->rank != rank)
    return tile_set_error(TILE_ERR_INVALID, "jfa: %s must have %d dimensions, not %d", name, rank, t->rank);
  for (int i = 0; i < rank; i++)
    if (t->shape[i] != shape[i]) {
      char want[96] = "", got[96] = "";
      for (int j = 0; j < rank; j++) {
        size_t n = strlen(want), g = strlen(got);
        snprintf(want + n, sizeof want - n, "%s%lld", j ? ", " : "", (long long)shape[j]);
        snprintf(got + g, sizeof got - g, "%s%lld", j ? ", " : "", (long long)t->shape[j]);
      }
      return tile_set_error(TILE_ERR_INVALID, "jfa: %s has shape [%s]; expected [%s]", name, got, want);
    }
  int eb = !strcmp(dtype, "f32") ? 4 : 2;
  /* the last dims contiguous (heads x head_dim, or the LSE row) */
  int64_t want = 1;
  for (int i = rank - 1; i >= 1; i--) {
    if (t->shape[i] > 1 && t->stride[i] != want)
      return tile_set_error(TILE_ERR_INVALID,
                            "jfa: %s must be contiguous after its first dimension (stride[%d] = %lld, expected %lld)",
                            name, i, (long long)t->stride[i], (long long)want);
    want *= t->shape[i];
  }
  if (t->shape[0] > 1 && t->stride[0] < want)
    return tile_set_error(TILE_ERR_INVALID, "jfa: %s rows overlap (stride[0] = %lld < %lld)", name,
                          (long long)t->stride[0], (long long)want);
  if (t->data % 16)
    return tile_set_error(TILE_ERR_INVALID, "jfa: %s is not 16-byte aligned (address 0x%llx)", name,
                          (unsigned long long)t->data);
  if (tma && (t->stride[0] * eb) % 16)
    return tile_set_error(TILE_ERR_INVALID,
                          "jfa: %s rows must start 16 bytes apart (row stride %lld elements of %d bytes)",
                          name, (long long)t->stride[0], eb);
  if (!t->data && t->shape[0] > 0) return tile_set_error(TILE_ERR_INVALID, "jfa: %s has a NULL data pointer", name);
  return TILE_OK;
}

tile_status jfa_upload(tile_devptr *d, const void *h, size_t bytes) {
  if (bytes == 0) bytes = 4;
  tile_status st = tile_malloc(d, bytes);
  if (st == TILE_OK && h) st = tile_memcpy_htod(*d, h, bytes);
  return st;
}

tile_status jfa_check_params(const jfa_params *p, int64_t *total_rows) {
  if (!p) return tile_set_error(TILE_ERR_INVALID, "jfa: params is NULL");
  if (p->head_dim != 64 && p->head_dim != 128)
    return tile_set_error(TILE_ERR_INVALID, "jfa: head_dim %d is not supported (64 or 128)", p->head_dim);
  if (p->heads < 1) return tile_set_error(TILE_ERR_INVALID, "jfa: heads must be >= 1, not %d", p->heads);
  if (p->batch < 0 || p->batch > TILE_JAGGED_MAX_BATCH)
    return tile_set_error(TILE_ERR_INVALID, "jfa: batch %lld out of range 0..%d", (long long)p->batch,
                          TILE_JAGGED_MAX_BATCH);
  if (p->num_q < 0) return tile_set_error(TILE_ERR_INVALID, "jfa: num_q must be >= 0");
  if (p->num_q > 0 && p->causal)
    return tile_set_error(TILE_ERR_INVALID, "jfa: broadcast-Q attention (num_q > 0) has no causal mask");
  if (!(p->softmax_scale >= 0) || isinf(p->softmax_scale))
    return tile_set_error(TILE_ERR_INVALID, "jfa: softmax_scale must be finite and >= 0 (0: 1/sqrt(head_dim))");
  if (p->num_ctas < 0 || p->num_ctas > TILE_JAGGED_MAX_CTAS)
    return tile_set_error(TILE_ERR_INVALID, "jfa: num_ctas %d out of range 0..%d", p->num_ctas, TILE_JAGGED_MAX_CTAS);
  if (p->passes < 0 || p->passes > (JFA_FWD | JFA_BWD))
    return tile_set_error(TILE_ERR_INVALID, "jfa: passes %d is not JFA_FWD (1), JFA_BWD (2), both (3) or 0 (forward)",
                          p->passes);
  if (p->deterministic != 0 && p->deterministic != 1)
    return tile_set_error(TILE_ERR_INVALID, "jfa: deterministic must be 0 or 1, not %d", p->deterministic);
  if (!p->cu_seqlens) return tile_set_error(TILE_ERR_INVALID, "jfa: cu_seqlens is NULL");
  if (p->batch == 0) { /* an empty batch: nothing to do, nothing launched */
    if (jfa_offset_at(p, 0) != 0)
      return tile_set_error(TILE_ERR_INVALID, "jagged offsets: offsets[0] is %lld, must be 0",
                            (long long)jfa_offset_at(p, 0));
    if (total_rows) *total_rows = 0;
    return TILE_OK;
  }
  tile_status st = tile_jagged_check_offsets(p->cu_seqlens, p->batch, p->cu_seqlens_64bit, -1);
  if (st != TILE_OK) return st;
  int64_t total = jfa_offset_at(p, p->batch);
  /* rows are TMA coordinates and int32 kernel arithmetic */
  if (total > INT32_MAX - 2 * BLOCK_M || p->num_q > INT32_MAX / 2 ||
      (p->num_q > 0 && p->batch * p->num_q > INT32_MAX - 2 * BLOCK_M) || (int64_t)p->heads * p->head_dim > INT32_MAX / 2)
    return tile_set_error(TILE_ERR_INVALID, "jfa: the batch is too large for 32-bit row indices (%lld rows)",
                          (long long)total);
  if (total_rows) *total_rows = total;
  return TILE_OK;
}

tile_status jfa_check_tensors(const jfa_params *p, int64_t total_rows, const jfa_tensor *q, const jfa_tensor *k,
                              const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse) {
  if (!p) return tile_set_error(TILE_ERR_INVALID, "jfa: params is NULL");
  int64_t H = p->heads, D = p->head_dim, T = total_rows, B = p->batch, NQ = p->num_q;
  int bcast = NQ > 0;
  int64_t qs[3] = {bcast ? NQ : T, H, D}, kvs[3] = {T, H, D};
  int64_t os[4] = {B, NQ, H, D}, ls_self[2] = {H, T}, ls_b[3] = {B, H, NQ};
  tile_status st;
  if ((st = jfa_check_tensor("q", q, "bf16", 3, qs, 1)) != TILE_OK) return st;
  if ((st = jfa_check_tensor("k", k, "bf16", 3, kvs, 1)) != TILE_OK) return st;
  if ((st = jfa_check_tensor("v", v, "bf16", 3, kvs, 1)) != TILE_OK) return st;
  if (bcast) {
    if ((st = jfa_check_tensor("o", o, "bf16", 4, os, 1)) != TILE_OK) return st;
    if ((st = jfa_check_tensor("lse", lse, "f32", 3, ls_b, 0)) != TILE_OK) return st;
    if (o->shape[0] > 1 && o->stride[0] != NQ * o->stride[1])
      return tile_set_error(TILE_ERR_INVALID, "jfa: o's batch stride must be num_q x its row stride");
  } else {
    if ((st = jfa_check_tensor("o", o, "bf16", 3, qs, 1)) != TILE_OK) return st;
    if ((st = jfa_check_tensor("lse", lse, "f32", 2, ls_self, 0)) != TILE_OK) return st;
  }
  if ((bcast ? o->stride[1] : o->stride[0]) > INT32_MAX)
    return tile_set_error(TILE_ERR_INVALID, "jfa: o's row stride is too large");
  return TILE_OK;
}


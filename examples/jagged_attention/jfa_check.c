/* jfa_check.c - what both halves of the JFA host code share and call
 * (jfa.c, the plans and the forward pass; jfa_bwd.c, the backward pass): the
 * argument checks, which run without a GPU, device uploads and the loading
 * of kernels from the cubin folder. It calls neither of them. See jfa.h. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfa_int.h"

/* Kernel `name` of DIR/NAME.dD.VARIANT.ARCH.cubin (ARCH: lib->arch), loaded into *mod, *kern on first use. */
tile_status jfa_load_kernel(const jfa_lib *lib, const char *name, int head_dim, const char *variant,
                               tile_module **mod, tile_kernel **kern) {
  if (!*kern) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.d%d.%s.%s.cubin", lib->dir, name, head_dim, variant, lib->arch);
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

static const char *const builtin_variant[NVARIANT] = {[V_WINDOW] = "window", [V_SOFTCAP] = "softcap",
                                                      [V_SOFTCAP_CAUSAL] = "softcap_causal", [V_ALIBI] = "alibi",
                                                      [V_ALIBI_CAUSAL] = "alibi_causal",
                                                      [V_BLOCKSPARSE] = "blocksparse",
                                                      [V_BLOCKSPARSE_CAUSAL] = "blocksparse_causal"};

tile_status jfa_variant_kernel(jfa_plan *plan, const char *kernel, tile_kernel **out) {
  jfa_lib *lib = plan->lib;
  int D = plan->p.head_dim, d = D == 128;
  /* the deterministic backward: the variant's cubin built with DET (NAME.det); the CTA pair's forward: with
   * CTAS = 2 (NAME.pair) */
  int det = plan->p.deterministic && !strcmp(kernel, "jfa_bwd");
  int pair = plan->p.cta_pair && !strcmp(kernel, "jfa_fwd");
  const char *name = plan->vname[0] ? plan->vname : builtin_variant[plan->vidx];
  tile_module **mod = plan->vname[0] ? (det ? &plan->own_det_mod : pair ? &plan->own_pair_mod : &plan->own_mod)
                                     : (det    ? &lib->det_mod[d][plan->vidx]
                                        : pair ? &lib->pair_mod[plan->vidx]
                                               : &lib->mod[d][plan->vidx]);
  if (!name) return tile_set_error(TILE_ERR_INVALID, "jfa: internal error: no variant module for variant %d", plan->vidx);
  if (!*mod) {
    char path[1200];
    snprintf(path, sizeof path, "%s/jfa_fwd.d%d.%s%s.%s.cubin", lib->dir, D, name, det ? ".det" : pair ? ".pair" : "",
             lib->arch);
    tile_status st = tile_module_load_file(path, mod);
    if (st != TILE_OK) return st;
  }
  tile_status st = tile_module_get_kernel(*mod, kernel, out);
  if (st != TILE_OK) return st;
  /* built as the plan assumes: the host's ranges bound the kernel's */
  const tile_kernel_info *vi = tile_kernel_get_info(*out);
  const char *dc = tile_kernel_const(vi, "D"), *cc = tile_kernel_const(vi, "CAUSAL"), *bc = tile_kernel_const(vi, "BCAST");
  char dwant[16];
  snprintf(dwant, sizeof dwant, "%d", D);
  if (!dc || strcmp(dc, dwant) || !cc || strcmp(cc, plan->p.causal ? "true" : "false") || (bc && strcmp(bc, "false")))
    return tile_set_error(TILE_ERR_INVALID, "jfa: variant '%s': its %s was built with D = %s, CAUSAL = %s, BCAST = %s; "
                                            "the plan wants D = %d, CAUSAL = %s, BCAST = false",
                          name, kernel, dc ? dc : "?", cc ? cc : "?", bc ? bc : "?", D,
                          plan->p.causal ? "true" : "false");
  const char *xc = tile_kernel_const(vi, "DET");
  if (!strcmp(kernel, "jfa_bwd") && (!xc || strcmp(xc, det ? "true" : "false")))
    return tile_set_error(TILE_ERR_INVALID, "jfa: variant '%s': its jfa_bwd was built with DET = %s; the plan wants "
                                            "DET = %s (the deterministic backward: jfa_fwd.d%d.%s.det.%s.cubin, built "
                                            "with -D DET=true)",
                          name, xc ? xc : "?", det ? "true" : "false", D, name, lib->arch);
  return TILE_OK;
}

int64_t jfa_offset_at(const jfa_params *p, int64_t i) {
  return p->cu_seqlens_64bit ? ((const int64_t *)p->cu_seqlens)[i] : ((const int32_t *)p->cu_seqlens)[i];
}

/* The bytes t spans from t->data (0 when a dimension is empty): the last
 * element's offset + 1, times its size; 0 and false on overflow. */
static bool tensor_bytes(const jfa_tensor *t, int eb, uint64_t *bytes) {
  uint64_t last = 0, x;
  *bytes = 0;
  for (int d = 0; d < t->rank; d++)
    if (t->shape[d] == 0) return true;
  for (int d = 0; d < t->rank; d++)
    if (__builtin_mul_overflow((uint64_t)(t->shape[d] - 1), (uint64_t)t->stride[d], &x) ||
        __builtin_add_overflow(last, x, &last))
      return false;
  return !__builtin_add_overflow(last, 1, &last) && !__builtin_mul_overflow(last, (uint64_t)eb, bytes);
}

static int elem_bytes(const char *dtype) { return !strcmp(dtype, "f32") ? 4 : 2; }

/* name: what the message calls it; shape: the expected shape (rank dims,
 * each >= 0: the caller's checked sizes). Every stride positive; heads and
 * head dims contiguous; rows (dimension 0, or 1 of a rank-4 [B, num_q, H, D]
 * tensor) at least a row apart, within int32 and 16 bytes apart for TMA; the
 * whole extent (shape x stride x element size) without overflow and below
 * 2^64 from its base. */
tile_status jfa_check_tensor(const char *name, const jfa_tensor *t, const char *dtype, int rank,
                             const int64_t *shape, int flags) {
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
  /* an empty tensor (a batch of empty sequences) has no bytes: its strides
   * are never used, and may be 0 */
  bool empty = false;
  for (int i = 0; i < rank; i++) empty |= t->shape[i] == 0;
  for (int i = 0; i < rank && !empty; i++)
    if (t->stride[i] < 1)
      return tile_set_error(TILE_ERR_INVALID, "jfa: %s has stride[%d] = %lld; strides must be positive", name, i,
                            (long long)t->stride[i]);
  int eb = elem_bytes(dtype);
  int row = rank == 4 ? 1 : 0; /* the dimension of the rows the kernels step through by a row stride */
  /* the last dims contiguous (heads x head_dim, or the LSE row) */
  int64_t want = 1, row_elems = 1; /* elements after dimension i; of a row */
  for (int i = rank - 1; i >= 1; i--) {
    if (t->shape[i] > 1 && t->stride[i] != want)
      return tile_set_error(TILE_ERR_INVALID,
                            "jfa: %s must be contiguous after its first dimension (stride[%d] = %lld, expected %lld)",
                            name, i, (long long)t->stride[i], (long long)want);
    if (__builtin_mul_overflow(want, t->shape[i], &want))
      return tile_set_error(TILE_ERR_INVALID, "jfa: %s has too many elements", name);
    if (i == row + 1) row_elems = want;
  }
  /* rows at least a row apart even when there is one (TMA wants it) */
  if (!empty && t->stride[0] < want)
    return tile_set_error(TILE_ERR_INVALID, "jfa: %s rows overlap (stride[0] = %lld < %lld)", name,
                          (long long)t->stride[0], (long long)want);
  /* a rank-4 tensor with one row per batch: its row stride is still the kernels' */
  if (!empty && row && t->stride[row] < row_elems)
    return tile_set_error(TILE_ERR_INVALID, "jfa: %s rows overlap (stride[%d] = %lld < %lld)", name, row,
                          (long long)t->stride[row], (long long)row_elems);
  if (!empty && (flags & JFA_DENSE) && t->shape[0] > 1 && t->stride[0] != want)
    return tile_set_error(TILE_ERR_INVALID,
                          "jfa: %s must be dense (stride[0] = %lld, expected %lld): the kernels index it without strides",
                          name, (long long)t->stride[0], (long long)want);
  if (!empty && (flags & JFA_TMA) && t->stride[row] > INT32_MAX)
    return tile_set_error(TILE_ERR_INVALID,
                          "jfa: %s's row stride %lld is too large (at most 2^31 - 1 elements: the kernels take it "
                          "as a 32-bit int)", name, (long long)t->stride[row]);
  if (t->data % 16)
    return tile_set_error(TILE_ERR_INVALID, "jfa: %s is not 16-byte aligned (address 0x%llx)", name,
                          (unsigned long long)t->data);
  if ((flags & JFA_TMA) && t->stride[row] % (16 / eb))
    return tile_set_error(TILE_ERR_INVALID,
                          "jfa: %s rows must start 16 bytes apart (row stride %lld elements of %d bytes)",
                          name, (long long)t->stride[row], eb);
  uint64_t bytes;
  if (!tensor_bytes(t, eb, &bytes))
    return tile_set_error(TILE_ERR_INVALID, "jfa: %s spans more than 2^64 bytes (its shape times its strides)", name);
  if (!t->data && bytes > 0) return tile_set_error(TILE_ERR_INVALID, "jfa: %s has a NULL data pointer", name);
  if (bytes > UINT64_MAX - t->data)
    return tile_set_error(TILE_ERR_INVALID, "jfa: %s (%llu bytes at 0x%llx) runs past the end of the address space",
                          name, (unsigned long long)bytes, (unsigned long long)t->data);
  return TILE_OK;
}

/* The bytes a checked tensor spans: [*lo, *hi), empty when a dimension is. */
static void tensor_span(const jfa_tensor *t, uint64_t *lo, uint64_t *hi) {
  uint64_t bytes;
  tensor_bytes(t, elem_bytes(t->dtype), &bytes); /* checked: no overflow, no wrap */
  *lo = t->data;
  *hi = t->data + bytes;
}

tile_status jfa_check_disjoint(const jfa_tensor *const *t, const char *const *names, int n, int nout) {
  for (int i = 0; i < nout; i++)
    for (int j = i + 1; j < n; j++) {
      uint64_t a0, a1, b0, b1;
      tensor_span(t[i], &a0, &a1), tensor_span(t[j], &b0, &b1);
      if (a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1)
        return tile_set_error(TILE_ERR_INVALID, "jfa: %s and %s overlap in memory (an output must not share bytes "
                                                "with another tensor)", names[i], names[j]);
    }
  return TILE_OK;
}

/* ---- uploads (jfa_stage, see jfa_int.h) ---------------------------------- */

void jfa_buf_free(jfa_buf *b) {
  if (b->p) tile_free(b->p);
  b->p = 0, b->cap = 0;
}

static void stage_add(jfa_stage *s, jfa_buf *dst, const void *src, size_t bytes, int fill, uint32_t value) {
  /* a plan queues at most a dozen uploads an update (the bound is the
   * plan's own code, not the caller's input) */
  if (s->n >= JFA_MAX_UPLOADS) {
    s->n = JFA_MAX_UPLOADS + 1; /* reported by the flush */
    return;
  }
  s->up[s->n].dst = dst, s->up[s->n].src = src, s->up[s->n].bytes = bytes;
  s->up[s->n].fill = fill, s->up[s->n].value = value;
  s->n++;
}

void jfa_stage_copy(jfa_stage *s, jfa_buf *dst, const void *src, size_t bytes) { stage_add(s, dst, src, bytes, 0, 0); }
void jfa_stage_fill(jfa_stage *s, jfa_buf *dst, uint32_t value, size_t bytes) { stage_add(s, dst, NULL, bytes, 1, value); }

static tile_status event_lazy(tile_event *e) { return *e ? TILE_OK : tile_event_create(e); }

tile_status jfa_stage_wait(jfa_stage *s) {
  tile_status st = TILE_OK;
  if (s->used && st == TILE_OK) st = tile_event_synchronize(s->last_use);
  if (s->upd && st == TILE_OK) st = tile_event_synchronize(s->updated);
  for (int i = 0; i < JFA_STAGE_SLOTS && st == TILE_OK; i++)
    if (s->slot[i].pending) st = tile_event_synchronize(s->slot[i].done), s->slot[i].pending = st != TILE_OK;
  return st;
}

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

tile_status jfa_stage_flush(jfa_stage *s, tile_stream stream) {
  int n = s->n;
  s->n = 0;
  if (n > JFA_MAX_UPLOADS)
    return tile_set_error(TILE_ERR_INVALID, "jfa: internal error: more than %d uploads in one plan update",
                          JFA_MAX_UPLOADS);
  tile_status st = TILE_OK;
  /* 1. room: a buffer that grows is freed only after everything that may
   * still use it (the last run, the last update's copies) is done */
  int grow = 0, waited = 0;
  for (int i = 0; i < n; i++) grow |= s->up[i].bytes > s->up[i].dst->cap;
  for (int i = 0; i < n && grow; i++) {
    jfa_buf *b = s->up[i].dst;
    size_t need = s->up[i].bytes ? s->up[i].bytes : 4;
    if (need <= b->cap) continue;
    if (!waited && (st = jfa_stage_wait(s)) != TILE_OK) return st;
    waited = 1;
    size_t cap = round_up(need > b->cap + b->cap / 2 ? need : b->cap + b->cap / 2, 256);
    jfa_buf_free(b);
    if ((st = tile_malloc(&b->p, cap)) != TILE_OK) return st;
    b->cap = cap;
  }
  /* 2. the bytes, through the next page-locked slot (its copies from two
   * updates ago have run by now, or the host waits for them here) */
  size_t total = 0;
  for (int i = 0; i < n; i++)
    if (s->up[i].src) total += round_up(s->up[i].bytes, 16);
  int k = s->next;
  s->next = (k + 1) % JFA_STAGE_SLOTS;
  if (s->slot[k].pending) {
    if ((st = tile_event_synchronize(s->slot[k].done)) != TILE_OK) return st;
    s->slot[k].pending = 0;
  }
  if (total > s->slot[k].cap) {
    tile_host_free(s->slot[k].host);
    s->slot[k].host = NULL, s->slot[k].cap = 0;
    size_t cap = round_up(total + total / 2, 4096);
    if ((st = tile_host_alloc(&s->slot[k].host, cap)) != TILE_OK) return st;
    s->slot[k].cap = cap;
  }
  /* 3. on the stream, after the plan's last run and update, wherever they ran */
  if (s->used && (st = tile_stream_wait_event(stream, s->last_use)) != TILE_OK) return st;
  if (s->upd && (st = tile_stream_wait_event(stream, s->updated)) != TILE_OK) return st;
  size_t off = 0;
  for (int i = 0; i < n && st == TILE_OK; i++) {
    if (s->up[i].fill) {
      st = tile_memset_d32_async(s->up[i].dst->p, s->up[i].value, s->up[i].bytes / 4, stream);
    } else if (s->up[i].src && s->up[i].bytes) {
      char *h = (char *)s->slot[k].host + off;
      memcpy(h, s->up[i].src, s->up[i].bytes);
      off += round_up(s->up[i].bytes, 16);
      st = tile_memcpy_htod_async(s->up[i].dst->p, h, s->up[i].bytes, stream);
    }
  }
  if (st == TILE_OK) st = event_lazy(&s->slot[k].done);
  if (st == TILE_OK) st = tile_event_record(s->slot[k].done, stream);
  if (st == TILE_OK) s->slot[k].pending = 1;
  if (st == TILE_OK) st = event_lazy(&s->updated);
  if (st == TILE_OK) st = tile_event_record(s->updated, stream);
  if (st == TILE_OK) s->upd = 1;
  return st;
}

tile_status jfa_stage_before_run(jfa_stage *s, tile_stream stream) {
  return s->upd ? tile_stream_wait_event(stream, s->updated) : TILE_OK;
}

tile_status jfa_stage_after_run(jfa_stage *s, tile_stream stream) {
  tile_status st = event_lazy(&s->last_use);
  if (st == TILE_OK) st = tile_event_record(s->last_use, stream);
  if (st == TILE_OK) s->used = 1;
  return st;
}

void jfa_stage_free(jfa_stage *s) {
  jfa_stage_wait(s);
  for (int i = 0; i < JFA_STAGE_SLOTS; i++) {
    tile_host_free(s->slot[i].host);
    if (s->slot[i].done) tile_event_destroy(s->slot[i].done);
  }
  if (s->last_use) tile_event_destroy(s->last_use);
  if (s->updated) tile_event_destroy(s->updated);
  memset(s, 0, sizeof *s);
}

tile_status jfa_check_ranges(const jfa_params *p) {
  if (!p) return tile_set_error(TILE_ERR_INVALID, "jfa: params is NULL");
  if (p->head_dim != 64 && p->head_dim != 128)
    return tile_set_error(TILE_ERR_INVALID, "jfa: head_dim %d is not supported (64 or 128)", p->head_dim);
  if (p->heads < 1) return tile_set_error(TILE_ERR_INVALID, "jfa: heads must be >= 1, not %d", p->heads);
  if ((int64_t)p->heads * p->head_dim > JFA_MAX_ROW_ELEMS)
    return tile_set_error(TILE_ERR_INVALID, "jfa: heads %d x head_dim %d is more than %d elements a row", p->heads,
                          p->head_dim, JFA_MAX_ROW_ELEMS);
  if (p->batch < 0 || p->batch > TILE_JAGGED_MAX_BATCH)
    return tile_set_error(TILE_ERR_INVALID, "jfa: batch %lld out of range 0..%d", (long long)p->batch,
                          TILE_JAGGED_MAX_BATCH);
  if (p->num_q < 0) return tile_set_error(TILE_ERR_INVALID, "jfa: num_q must be >= 0, not %lld", (long long)p->num_q);
  if (p->num_q > JFA_MAX_ROW_ELEMS)
    return tile_set_error(TILE_ERR_INVALID, "jfa: num_q %lld is too large (at most %d)", (long long)p->num_q,
                          JFA_MAX_ROW_ELEMS);
  if (p->batch * p->num_q > JFA_MAX_ROWS) /* <= 10^7 x 2^30: no overflow */
    return tile_set_error(TILE_ERR_INVALID, "jfa: %lld x %lld output rows (batch x num_q) are too many for 32-bit "
                                            "row indices (at most %d)", (long long)p->batch, (long long)p->num_q,
                          JFA_MAX_ROWS);
  if (p->num_q > 0 && p->causal)
    return tile_set_error(TILE_ERR_INVALID, "jfa: broadcast-Q attention (num_q > 0) has no causal mask");
  if (!(p->softmax_scale >= 0) || isinf(p->softmax_scale))
    return tile_set_error(TILE_ERR_INVALID, "jfa: softmax_scale must be finite and >= 0 (0: 1/sqrt(head_dim))");
  if (p->num_ctas < 0 || p->num_ctas > TILE_JAGGED_MAX_CTAS)
    return tile_set_error(TILE_ERR_INVALID, "jfa: num_ctas %d out of range 0..%d", p->num_ctas, TILE_JAGGED_MAX_CTAS);
  if (p->passes < 0 || p->passes > (JFA_FWD | JFA_BWD))
    return tile_set_error(TILE_ERR_INVALID, "jfa: passes %d is not JFA_FWD (1), JFA_BWD (2), both (3) or 0 (forward)",
                          p->passes);
  if (p->cta_pair != 0 && p->cta_pair != 1)
    return tile_set_error(TILE_ERR_INVALID, "jfa: cta_pair %d is not 0 or 1", p->cta_pair);
  if (p->cta_pair && p->head_dim != 128)
    return tile_set_error(TILE_ERR_INVALID, "jfa: cta_pair with head_dim %d: the CTA pair's forward is built for "
                                            "head dim 128 (each CTA holds half of V's head dims, 64)", p->head_dim);
  if (p->cta_pair && p->block_mask)
    return tile_set_error(TILE_ERR_INVALID, "jfa: cta_pair with a block mask: the CTA pair's two halves of an item "
                                            "walk the same KV blocks, and a block mask skips each half's own");
  if ((p->passes & JFA_BWD) && p->heads > JFA_BWD_MAX_HEADS)
    return tile_set_error(TILE_ERR_INVALID, "jfa: heads %d: the backward pass runs one grid row per head, at most %d",
                          p->heads, JFA_BWD_MAX_HEADS);
  if (p->deterministic != 0 && p->deterministic != 1)
    return tile_set_error(TILE_ERR_INVALID, "jfa: deterministic must be 0 or 1, not %d", p->deterministic);
  if (p->window != 0 && p->window != 1)
    return tile_set_error(TILE_ERR_INVALID, "jfa: window must be 0 or 1, not %d", p->window);
  if (!(p->softcap >= 0) || isinf(p->softcap))
    return tile_set_error(TILE_ERR_INVALID, "jfa: softcap must be finite and >= 0 (0: none)");
  if (p->variant) {
    size_t n = strlen(p->variant);
    bool ok = n >= 1 && n <= 40;
    for (size_t i = 0; ok && i < n; i++)
      ok = (p->variant[i] >= 'a' && p->variant[i] <= 'z') || (p->variant[i] >= '0' && p->variant[i] <= '9') ||
           p->variant[i] == '_';
    if (!ok)
      return tile_set_error(TILE_ERR_INVALID, "jfa: variant '%.60s' must be 1 to 40 characters of [a-z0-9_] (it "
                                              "names the cubin jfa_fwd.d<head_dim>.<variant>.sm_90a.cubin)",
                            p->variant);
    if (p->window || p->softcap > 0 || p->alibi_slopes || p->block_mask)
      return tile_set_error(TILE_ERR_INVALID, "jfa: a variant of your own goes without window, softcap, "
                                              "alibi_slopes and block_mask (build them into it)");
    if (p->num_q > 0) return tile_set_error(TILE_ERR_INVALID, "jfa: a variant is for self-attention (num_q = 0)");
  }
  if (p->nvariant_args < 0 || p->nvariant_args > JFA_MAX_VARIANT_ARGS || (p->nvariant_args && !p->variant_args))
    return tile_set_error(TILE_ERR_INVALID, "jfa: nvariant_args %d: 0 to %d words, with variant_args not NULL",
                          p->nvariant_args, JFA_MAX_VARIANT_ARGS);
  if (p->nvariant_args && !p->variant)
    return tile_set_error(TILE_ERR_INVALID, "jfa: variant_args without a variant");
  if (p->alibi_slopes)
    for (int h = 0; h < p->heads; h++)
      if (!isfinite(p->alibi_slopes[h]))
        return tile_set_error(TILE_ERR_INVALID, "jfa: alibi_slopes[%d] is not finite", h);
  if (!p->block_mask && (p->block_mask_mode || p->block_mask_bytes))
    return tile_set_error(TILE_ERR_INVALID, "jfa: block_mask_mode %d, block_mask_bytes %lld without a block_mask "
                                            "(both 0 when there is none)", p->block_mask_mode,
                          (long long)p->block_mask_bytes);
  if (p->block_mask) {
    if (p->block_mask_mode != JFA_MASK_PER_BATCH && p->block_mask_mode != JFA_MASK_PER_SEQUENCE)
      return tile_set_error(TILE_ERR_INVALID, "jfa: block_mask_mode %d is not JFA_MASK_PER_BATCH (%d) or "
                                              "JFA_MASK_PER_SEQUENCE (%d)", p->block_mask_mode, JFA_MASK_PER_BATCH,
                            JFA_MASK_PER_SEQUENCE);
    if (p->block_mask_bytes < 0 || p->block_mask_bytes > JFA_MAX_MASK_BYTES)
      return tile_set_error(TILE_ERR_INVALID, "jfa: block_mask_bytes %lld out of range 0..%d",
                            (long long)p->block_mask_bytes, JFA_MAX_MASK_BYTES);
  }
  if (p->window || p->softcap > 0 || p->alibi_slopes || p->block_mask) {
    const char *what = p->window ? "a sliding window" : p->softcap > 0 ? "softcap" : p->alibi_slopes ? "ALiBi"
                                                                                                     : "a block mask";
    if ((p->window != 0) + (p->softcap > 0) + (p->alibi_slopes != NULL) + (p->block_mask != NULL) > 1)
      return tile_set_error(TILE_ERR_INVALID, "jfa: a sliding window, softcap, ALiBi and a block mask: one at a "
                                              "time (two together are not built yet)");
    if (p->window && (p->window_left < -1 || p->window_right < -1 || p->window_left >= JFA_WINDOW_MAX ||
                      p->window_right >= JFA_WINDOW_MAX))
      return tile_set_error(TILE_ERR_INVALID, "jfa: window_left %d, window_right %d: each is 0 .. %d, or -1 for "
                                              "no bound", p->window_left, p->window_right, JFA_WINDOW_MAX - 1);
    if (p->causal && p->window)
      return tile_set_error(TILE_ERR_INVALID, "jfa: a sliding window with causal is not built yet (a causal "
                                              "window is window_right = 0)");
    if (p->num_q > 0) return tile_set_error(TILE_ERR_INVALID, "jfa: %s is for self-attention (num_q = 0)", what);
  }
  return TILE_OK;
}

/* ---- the block mask (jfa_params.block_mask) ---- */

static int64_t mask_blocks(const jfa_params *p, int64_t b) {
  return (jfa_offset_at(p, b + 1) - jfa_offset_at(p, b) + JFA_MASK_BLOCK - 1) / JFA_MASK_BLOCK;
}

/* the per-batch mask's row: its size's square root (-1: not a square) */
static int64_t mask_row(const jfa_params *p) {
  int64_t n = (int64_t)sqrt((double)p->block_mask_bytes);
  while (n * n > p->block_mask_bytes) n--;
  while ((n + 1) * (n + 1) <= p->block_mask_bytes) n++;
  return n * n == p->block_mask_bytes ? n : -1;
}

/* The mask against the batch (its scalars checked, the offsets too): its
 * size, then every byte 0 or 1. */
static tile_status check_block_mask(const jfa_params *p) {
  int64_t need = 0, most = 0, bytes = p->block_mask_bytes;
  for (int64_t b = 0; b < p->batch; b++) { /* < 2^31 rows: no overflow */
    int64_t nb = mask_blocks(p, b);
    need += nb * nb;
    most = nb > most ? nb : most;
  }
  if (p->block_mask_mode == JFA_MASK_PER_BATCH) {
    int64_t n = mask_row(p);
    if (n < 0)
      return tile_set_error(TILE_ERR_INVALID, "jfa: a per-batch block mask is n x n bytes; block_mask_bytes %lld is "
                                              "not a square", (long long)bytes);
    if (n < most)
      return tile_set_error(TILE_ERR_INVALID, "jfa: the per-batch block mask is %lld x %lld blocks; the longest "
                                              "sequence has %lld blocks of %d", (long long)n, (long long)n,
                            (long long)most, JFA_MASK_BLOCK);
  } else if (need != bytes) {
    return tile_set_error(TILE_ERR_INVALID, "jfa: the per-sequence block mask is %lld bytes; the batch's sequences "
                                            "need %lld (cdiv(L, %d)^2 each, one after the other)", (long long)bytes,
                          (long long)need, JFA_MASK_BLOCK);
  }
  for (int64_t i = 0; i < bytes; i++)
    if (p->block_mask[i] > 1)
      return tile_set_error(TILE_ERR_INVALID, "jfa: block_mask[%lld] is %d; each byte is 0 (skip the block) or 1 "
                                              "(visit it)", (long long)i, p->block_mask[i]);
  return TILE_OK;
}

/* A mask of n x n blocks as the kernels read it: its bits twice, cdiv(n, 32)
 * words a line, n rows then n columns (jfa_int.h). */
static int64_t mask_words(int64_t n) { return 2 * n * ((n + 31) / 32); }

size_t jfa_block_mask_words(const jfa_params *p) {
  if (!p->block_mask) return 0;
  if (p->block_mask_mode == JFA_MASK_PER_BATCH) return (size_t)mask_words(mask_row(p));
  size_t words = (size_t)p->batch;
  for (int64_t b = 0; b < p->batch; b++) words += (size_t)mask_words(mask_blocks(p, b));
  return words;
}

/* n x n bytes (row-major, query block major) as rows, then columns, of bits */
static void mask_bits(const uint8_t *m, int64_t n, int32_t *out) {
  int64_t w = (n + 31) / 32;
  memset(out, 0, (size_t)mask_words(n) * 4);
  for (int64_t qm = 0; qm < n; qm++)
    for (int64_t kn = 0; kn < n; kn++)
      if (m[qm * n + kn]) {
        out[qm * w + kn / 32] |= (int32_t)(1u << (kn % 32));
        out[(n + kn) * w + qm / 32] |= (int32_t)(1u << (qm % 32));
      }
}

void jfa_block_mask_pack(const jfa_params *p, int32_t *vp) {
  int per_seq = p->block_mask_mode == JFA_MASK_PER_SEQUENCE;
  vp[0] = per_seq ? 0 : (int32_t)mask_row(p);
  vp[1] = (int32_t)(JFA_VPARAMS + (per_seq ? p->batch : 0));
  if (!per_seq) {
    mask_bits(p->block_mask, vp[0], vp + vp[1]);
    return;
  }
  int64_t at = 0, byte = 0;
  for (int64_t b = 0; b < p->batch; b++) {
    int64_t nb = mask_blocks(p, b);
    vp[JFA_VPARAMS + b] = (int32_t)at;
    mask_bits(p->block_mask + byte, nb, vp + vp[1] + at);
    at += mask_words(nb), byte += nb * nb;
  }
}

void jfa_block_mask_sched(const jfa_params *p, tile_jagged_params *jp) {
  if (!p->block_mask) return;
  jp->block_mask = p->block_mask;
  jp->block_mask_mode = p->block_mask_mode == JFA_MASK_PER_SEQUENCE ? TILE_JAGGED_MASK_PER_SEQUENCE
                                                                    : TILE_JAGGED_MASK_PER_BATCH;
  jp->block_mask_bytes = p->block_mask_bytes;
  jp->block_mask_row = p->block_mask_mode == JFA_MASK_PER_BATCH ? mask_row(p) : 0;
  jp->mask_block = JFA_MASK_BLOCK;
}

/* Every scalar first (the batch before an offset is read: the caller's
 * array has batch + 1 entries), then the offsets: offsets[0] = 0,
 * non-decreasing (so no sequence length overflows), offsets[batch] within
 * the kernels' 32-bit rows. */
tile_status jfa_check_params(const jfa_params *p, int64_t *total_rows) {
  tile_status st = jfa_check_ranges(p);
  if (st != TILE_OK) return st;
  if (!p->cu_seqlens) return tile_set_error(TILE_ERR_INVALID, "jfa: cu_seqlens is NULL");
  if (p->batch == 0) { /* an empty batch: nothing to do, nothing launched */
    if (jfa_offset_at(p, 0) != 0)
      return tile_set_error(TILE_ERR_INVALID, "jagged offsets: offsets[0] is %lld, must be 0",
                            (long long)jfa_offset_at(p, 0));
    if (p->block_mask && p->block_mask_bytes != 0)
      return tile_set_error(TILE_ERR_INVALID, "jfa: block_mask_bytes %lld, but an empty batch has no blocks",
                            (long long)p->block_mask_bytes);
    if (total_rows) *total_rows = 0;
    return TILE_OK;
  }
  st = tile_jagged_check_offsets(p->cu_seqlens, p->batch, p->cu_seqlens_64bit, -1);
  if (st != TILE_OK) return st;
  int64_t total = jfa_offset_at(p, p->batch);
  /* rows are TMA coordinates and int32 kernel arithmetic */
  if (total > JFA_MAX_ROWS)
    return tile_set_error(TILE_ERR_INVALID, "jfa: the batch is too large for 32-bit row indices (%lld rows, at most %d)",
                          (long long)total, JFA_MAX_ROWS);
  /* a window's kernel adds its extents to positions in 32 bits: each
   * below 2^30, and so must be every sequence */
  if (p->window)
    for (int64_t b = 0; b < p->batch; b++)
      if (jfa_offset_at(p, b + 1) - jfa_offset_at(p, b) >= JFA_WINDOW_MAX)
        return tile_set_error(TILE_ERR_INVALID, "jfa: sequence %lld has %lld tokens; a sliding window takes "
                                                "sequences under %d", (long long)b,
                              (long long)(jfa_offset_at(p, b + 1) - jfa_offset_at(p, b)), JFA_WINDOW_MAX);
  if (p->block_mask && (st = check_block_mask(p)) != TILE_OK) return st;
  if (total_rows) *total_rows = total;
  return TILE_OK;
}

/* total_rows: in range, none in an empty batch, and offsets[batch] when p
 * carries the offsets (a plan does not: its total was checked when it was
 * made). */
static tile_status check_total(const jfa_params *p, int64_t total_rows) {
  tile_status st = jfa_check_ranges(p);
  if (st != TILE_OK) return st;
  if (total_rows < 0 || total_rows > JFA_MAX_ROWS)
    return tile_set_error(TILE_ERR_INVALID, "jfa: total_rows %lld out of range 0..%d", (long long)total_rows,
                          JFA_MAX_ROWS);
  if (p->batch == 0 && total_rows != 0)
    return tile_set_error(TILE_ERR_INVALID, "jfa: total_rows %lld, but an empty batch has no rows",
                          (long long)total_rows);
  if (p->cu_seqlens) {
    int64_t total;
    if ((st = jfa_check_params(p, &total)) != TILE_OK) return st;
    if (total != total_rows)
      return tile_set_error(TILE_ERR_INVALID, "jfa: total_rows %lld does not match offsets[%lld] = %lld",
                            (long long)total_rows, (long long)p->batch, (long long)total);
  }
  return TILE_OK;
}

tile_status jfa_check_fwd_shapes(const jfa_params *p, int64_t total_rows, const jfa_tensor *q, const jfa_tensor *k,
                                 const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse) {
  tile_status st = check_total(p, total_rows);
  if (st != TILE_OK) return st;
  int64_t H = p->heads, D = p->head_dim, T = total_rows, B = p->batch, NQ = p->num_q;
  int bcast = NQ > 0;
  int64_t qs[3] = {bcast ? NQ : T, H, D}, kvs[3] = {T, H, D};
  int64_t os[4] = {B, NQ, H, D}, ls_self[2] = {H, T}, ls_b[3] = {B, H, NQ};
  if ((st = jfa_check_tensor("q", q, "bf16", 3, qs, JFA_TMA)) != TILE_OK) return st;
  if ((st = jfa_check_tensor("k", k, "bf16", 3, kvs, JFA_TMA)) != TILE_OK) return st;
  if ((st = jfa_check_tensor("v", v, "bf16", 3, kvs, JFA_TMA)) != TILE_OK) return st;
  if (bcast) {
    if ((st = jfa_check_tensor("o", o, "bf16", 4, os, JFA_TMA)) != TILE_OK) return st;
    if ((st = jfa_check_tensor("lse", lse, "f32", 3, ls_b, JFA_DENSE)) != TILE_OK) return st;
    if (o->shape[0] > 1 && o->stride[0] != NQ * o->stride[1]) /* both checked: < 2^30 x 2^31 */
      return tile_set_error(TILE_ERR_INVALID, "jfa: o's batch stride must be num_q x its row stride");
  } else {
    if ((st = jfa_check_tensor("o", o, "bf16", 3, qs, JFA_TMA)) != TILE_OK) return st;
    if ((st = jfa_check_tensor("lse", lse, "f32", 2, ls_self, JFA_DENSE)) != TILE_OK) return st;
  }
  return TILE_OK;
}

tile_status jfa_check_tensors(const jfa_params *p, int64_t total_rows, const jfa_tensor *q, const jfa_tensor *k,
                              const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse) {
  tile_status st = jfa_check_fwd_shapes(p, total_rows, q, k, v, o, lse);
  if (st != TILE_OK) return st;
  /* o and lse are written while q, k, v are read */
  const jfa_tensor *all[] = {o, lse, q, k, v};
  static const char *const names[] = {"o", "lse", "q", "k", "v"};
  return jfa_check_disjoint(all, names, 5, 2);
}

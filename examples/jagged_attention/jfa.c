/* jfa.c - the host side of Jagged Flash Attention (forward): argument
 * checks, the tile schedule and its upload, TMA descriptors, the launch.
 * See jfa.h. */
#include "jfa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile/jagged.h"

enum { BLOCK_M = 128 };      /* query rows per tile (the kernel's BM) */
/* jfa_fwd's parameter k (its TMA box rows are the KV block) and ot (O for
 * the TMA-store epilogue) */
enum { K_PARAM = 1, O_TMA_PARAM = 15 };
enum { V_SELF, V_CAUSAL, V_BCAST, NVARIANT };
static const char *variant_name[NVARIANT] = {"self", "causal", "bcast"};

struct jfa_lib {
  char dir[1024];
  tile_module *mod[2][NVARIANT]; /* [head_dim 64 / 128][variant] */
  tile_kernel *kern[2][NVARIANT];
  tile_module *cmod[2][2];       /* jfa_combine: [head_dim 64 / 128][self / bcast] */
  tile_kernel *ckern[2][2];
  int sm_count;
};

struct jfa_plan {
  jfa_lib *lib;
  jfa_params p;
  tile_kernel *k;
  int64_t total;     /* rows of K/V (offsets[B]) */
  int ctas;
  tile_jagged_schedule sched;
  tile_jagged_split split; /* the work lists the kernel runs: sched, its tail maybe split */
  tile_kernel *combine;    /* when split.ncombine > 0 */
  tile_devptr d_offsets, d_work, d_cta_start, d_combine; /* int32 copies on the device */
  tile_devptr d_part_o, d_part_lse;                      /* the pieces' partial outputs */
};

tile_status jfa_lib_open(const char *cubin_dir, jfa_lib **out) {
  if (!out) return tile_set_error(TILE_ERR_INVALID, "jfa_lib_open: out is NULL");
  *out = NULL;
  if (!cubin_dir || strlen(cubin_dir) >= sizeof((jfa_lib *)0)->dir)
    return tile_set_error(TILE_ERR_INVALID, "jfa_lib_open: missing or too long cubin folder");
  tile_device_info dev;
  tile_status st = tile_device_info_get(&dev);
  if (st != TILE_OK) return st;
  if (dev.cc_major != 9)
    return tile_set_error(TILE_ERR_INVALID,
                          "jfa: the forward kernel is written for Hopper (sm_90a); this GPU is sm_%d%d",
                          dev.cc_major, dev.cc_minor);
  jfa_lib *lib = calloc(1, sizeof *lib);
  if (!lib) return tile_set_error(TILE_ERR_NOMEM, "jfa_lib_open: out of memory");
  strcpy(lib->dir, cubin_dir);
  lib->sm_count = dev.sm_count;
  *out = lib;
  return TILE_OK;
}

void jfa_lib_close(jfa_lib *lib) {
  if (!lib) return;
  for (int d = 0; d < 2; d++) {
    for (int v = 0; v < NVARIANT; v++)
      if (lib->mod[d][v]) tile_module_unload(lib->mod[d][v]);
    for (int v = 0; v < 2; v++)
      if (lib->cmod[d][v]) tile_module_unload(lib->cmod[d][v]);
  }
  free(lib);
}

/* Kernel `name` of DIR/NAME.dD.VARIANT.sm_90a.cubin, loaded into *mod, *kern on first use. */
static tile_status load_kernel(const jfa_lib *lib, const char *name, int head_dim, const char *variant,
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

static tile_status get_kernel(jfa_lib *lib, int head_dim, int variant, tile_kernel **k) {
  int d = head_dim == 128;
  tile_status st = load_kernel(lib, "jfa_fwd", head_dim, variant_name[variant], &lib->mod[d][variant],
                               &lib->kern[d][variant]);
  *k = lib->kern[d][variant];
  return st;
}

static tile_status get_combine(jfa_lib *lib, int head_dim, int bcast, tile_kernel **k) {
  int d = head_dim == 128;
  tile_status st = load_kernel(lib, "jfa_combine", head_dim, bcast ? "bcast" : "self", &lib->cmod[d][bcast],
                               &lib->ckern[d][bcast]);
  *k = lib->ckern[d][bcast];
  return st;
}

/* ---- checks ---------------------------------------------------------------- */

static int64_t offset_at(const jfa_params *p, int64_t i) {
  return p->cu_seqlens_64bit ? ((const int64_t *)p->cu_seqlens)[i] : ((const int32_t *)p->cu_seqlens)[i];
}

/* name: what the message calls it; shape: the expected shape (rank dims). */
static tile_status check_tensor(const char *name, const jfa_tensor *t, const char *dtype, int rank,
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

/* ---- plans ----------------------------------------------------------------- */

static tile_status upload(tile_devptr *d, const void *h, size_t bytes) {
  if (bytes == 0) bytes = 4;
  tile_status st = tile_malloc(d, bytes);
  if (st == TILE_OK && h) st = tile_memcpy_htod(*d, h, bytes);
  return st;
}

void jfa_plan_destroy(jfa_plan *plan) {
  if (!plan) return;
  if (plan->d_offsets) tile_free(plan->d_offsets);
  if (plan->d_work) tile_free(plan->d_work);
  if (plan->d_cta_start) tile_free(plan->d_cta_start);
  if (plan->d_combine) tile_free(plan->d_combine);
  if (plan->d_part_o) tile_free(plan->d_part_o);
  if (plan->d_part_lse) tile_free(plan->d_part_lse);
  tile_jagged_schedule_free(&plan->sched);
  tile_jagged_split_free(&plan->split);
  free(plan);
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
  if (!p->cu_seqlens) return tile_set_error(TILE_ERR_INVALID, "jfa: cu_seqlens is NULL");
  if (p->batch == 0) { /* an empty batch: nothing to do, nothing launched */
    if (offset_at(p, 0) != 0)
      return tile_set_error(TILE_ERR_INVALID, "jagged offsets: offsets[0] is %lld, must be 0",
                            (long long)offset_at(p, 0));
    if (total_rows) *total_rows = 0;
    return TILE_OK;
  }
  tile_status st = tile_jagged_check_offsets(p->cu_seqlens, p->batch, p->cu_seqlens_64bit, -1);
  if (st != TILE_OK) return st;
  int64_t total = offset_at(p, p->batch);
  /* rows are TMA coordinates and int32 kernel arithmetic */
  if (total > INT32_MAX - 2 * BLOCK_M || p->num_q > INT32_MAX / 2 ||
      (p->num_q > 0 && p->batch * p->num_q > INT32_MAX - 2 * BLOCK_M) || (int64_t)p->heads * p->head_dim > INT32_MAX / 2)
    return tile_set_error(TILE_ERR_INVALID, "jfa: the batch is too large for 32-bit row indices (%lld rows)",
                          (long long)total);
  if (total_rows) *total_rows = total;
  return TILE_OK;
}

tile_status jfa_plan_create(jfa_lib *lib, const jfa_params *p, jfa_plan **out) {
  if (!out) return tile_set_error(TILE_ERR_INVALID, "jfa_plan_create: out is NULL");
  *out = NULL;
  int64_t total;
  tile_status st = jfa_check_params(p, &total);
  if (st != TILE_OK) return st;
  if (!lib) return tile_set_error(TILE_ERR_INVALID, "jfa_plan_create: lib is NULL");

  jfa_plan *plan = calloc(1, sizeof *plan);
  if (!plan) return tile_set_error(TILE_ERR_NOMEM, "jfa_plan_create: out of memory");
  plan->lib = lib;
  plan->p = *p;
  plan->p.cu_seqlens = NULL; /* not kept: the caller's memory */
  plan->total = total;

  int variant = p->num_q > 0 ? V_BCAST : p->causal ? V_CAUSAL : V_SELF;
  st = get_kernel(lib, p->head_dim, variant, &plan->k);
  if (st != TILE_OK) goto fail;
  /* the KV block is what the kernel was built with (BN + BX keys) */
  const tile_kernel_info *ki = tile_kernel_get_info(plan->k);
  if (ki->nparams <= K_PARAM || ki->params[K_PARAM].kind != TILE_PARAM_TMA ||
      ki->params[K_PARAM].box[0] % 16 || ki->params[K_PARAM].box[0] < 16 || ki->params[K_PARAM].box[0] > 256) {
    st = tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s has no TMA parameter k with a KV block of 16 to 256 rows",
                        ki->name);
    goto fail;
  }

  tile_jagged_params jp = {0};
  jp.batch = p->batch;
  jp.offsets = p->cu_seqlens;
  jp.offsets_are_64bit = p->cu_seqlens_64bit;
  jp.heads = p->heads;
  jp.block_m = BLOCK_M;
  jp.block_n = ki->params[K_PARAM].box[0];
  jp.causal = p->causal;
  jp.num_q = p->num_q;
  jp.num_ctas = p->num_ctas > 0 ? p->num_ctas : lib->sm_count;
  jp.zigzag = !p->no_zigzag;
  if (p->batch > 0) {
    st = tile_jagged_schedule_build(&jp, &plan->sched);
    if (st != TILE_OK) goto fail;
    /* the last partial pass cut into pieces of at least 4 KV blocks (each
     * costs about one block more: its Q load, pipeline fill and partial
     * store); the R tiles of that pass get at most num_ctas / R pieces each,
     * so at most one partial slot per CTA */
    tile_jagged_split_params sp = {4, 1, jp.num_ctas};
    st = tile_jagged_split_tail(&jp, &plan->sched, p->no_split ? NULL : &sp, &plan->split);
    if (st != TILE_OK) goto fail;
  }
  plan->ctas = jp.num_ctas;
  /* offsets as int32 for the kernel */
  int32_t *off32 = malloc((size_t)(p->batch + 1) * sizeof *off32);
  if (!off32) {
    st = tile_set_error(TILE_ERR_NOMEM, "jfa_plan_create: out of memory");
    goto fail;
  }
  for (int64_t i = 0; i <= p->batch; i++) off32[i] = (int32_t)offset_at(p, i);
  st = upload(&plan->d_offsets, off32, (size_t)(p->batch + 1) * 4);
  free(off32);
  if (st != TILE_OK) goto fail;
  if (plan->split.nitems > 0) {
    st = upload(&plan->d_work, plan->split.work, (size_t)plan->split.nitems * 32);
    if (st == TILE_OK) st = upload(&plan->d_cta_start, plan->split.cta_start, (size_t)(plan->ctas + 1) * 4);
    if (st != TILE_OK) goto fail;
  }
  if (plan->split.ncombine > 0) {
    size_t slots = (size_t)plan->split.nparts * BLOCK_M;
    st = get_combine(lib, p->head_dim, p->num_q > 0, &plan->combine);
    if (st == TILE_OK) st = upload(&plan->d_combine, plan->split.combine, (size_t)plan->split.ncombine * 32);
    if (st == TILE_OK) st = upload(&plan->d_part_o, NULL, slots * (size_t)p->head_dim * 4);
    if (st == TILE_OK) st = upload(&plan->d_part_lse, NULL, slots * 4);
    /* every slot starts as "no key" (O = 0, LSE = -inf): rows a piece does
     * not write (SKIP_IDLE's idle warpgroup) are then defined for jfa_combine */
    if (st == TILE_OK) st = tile_memset_d8(plan->d_part_o, 0, slots * (size_t)p->head_dim * 4);
    if (st == TILE_OK) st = tile_memset_d32(plan->d_part_lse, 0xff800000u, slots);
    if (st != TILE_OK) goto fail;
  }
  *out = plan;
  return TILE_OK;
fail:
  jfa_plan_destroy(plan);
  return st;
}

void jfa_plan_stats(const jfa_plan *plan, int64_t *ntiles, int64_t *max_cta_cost, int64_t *total_cost, int *ctas) {
  if (ntiles) *ntiles = plan->sched.ntiles;
  if (max_cta_cost) *max_cta_cost = plan->split.nparts ? plan->split.max_cta_cost : plan->sched.max_cta_cost;
  if (total_cost) *total_cost = plan->sched.total_cost;
  if (ctas) *ctas = plan->ctas;
}

void jfa_plan_split_stats(const jfa_plan *plan, int64_t *split_tiles, int64_t *pieces) {
  if (split_tiles) *split_tiles = plan->split.ncombine;
  if (pieces) *pieces = plan->split.nparts;
}

tile_status jfa_check_tensors(const jfa_params *p, int64_t total_rows, const jfa_tensor *q, const jfa_tensor *k,
                              const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse) {
  if (!p) return tile_set_error(TILE_ERR_INVALID, "jfa: params is NULL");
  int64_t H = p->heads, D = p->head_dim, T = total_rows, B = p->batch, NQ = p->num_q;
  int bcast = NQ > 0;
  int64_t qs[3] = {bcast ? NQ : T, H, D}, kvs[3] = {T, H, D};
  int64_t os[4] = {B, NQ, H, D}, ls_self[2] = {H, T}, ls_b[3] = {B, H, NQ};
  tile_status st;
  if ((st = check_tensor("q", q, "bf16", 3, qs, 1)) != TILE_OK) return st;
  if ((st = check_tensor("k", k, "bf16", 3, kvs, 1)) != TILE_OK) return st;
  if ((st = check_tensor("v", v, "bf16", 3, kvs, 1)) != TILE_OK) return st;
  if (bcast) {
    if ((st = check_tensor("o", o, "bf16", 4, os, 1)) != TILE_OK) return st;
    if ((st = check_tensor("lse", lse, "f32", 3, ls_b, 0)) != TILE_OK) return st;
    if (o->shape[0] > 1 && o->stride[0] != NQ * o->stride[1])
      return tile_set_error(TILE_ERR_INVALID, "jfa: o's batch stride must be num_q x its row stride");
  } else {
    if ((st = check_tensor("o", o, "bf16", 3, qs, 1)) != TILE_OK) return st;
    if ((st = check_tensor("lse", lse, "f32", 2, ls_self, 0)) != TILE_OK) return st;
  }
  if ((bcast ? o->stride[1] : o->stride[0]) > INT32_MAX)
    return tile_set_error(TILE_ERR_INVALID, "jfa: o's row stride is too large");
  return TILE_OK;
}

tile_status jfa_plan_forward(jfa_plan *plan, const jfa_tensor *q, const jfa_tensor *k, const jfa_tensor *v,
                             const jfa_tensor *o, const jfa_tensor *lse, tile_stream stream) {
  if (!plan) return tile_set_error(TILE_ERR_INVALID, "jfa_plan_forward: plan is NULL");
  const jfa_params *p = &plan->p;
  int64_t H = p->heads, D = p->head_dim, T = plan->total, NQ = p->num_q;
  int bcast = NQ > 0;
  tile_status st = jfa_check_tensors(p, T, q, k, v, o, lse);
  if (st != TILE_OK) return st;
  if (plan->split.nitems == 0) return TILE_OK; /* an empty batch, or only empty sequences */

  int64_t o_stride64 = bcast ? o->stride[1] : o->stride[0];
  tile_tma_desc dq, dk, dv;
  uint64_t cols = (uint64_t)(H * D);
  if ((st = tile_tma_desc_2d(&dq, plan->k, 0, q->data, (uint64_t)q->shape[0], cols, (uint64_t)q->stride[0])) != TILE_OK)
    return st;
  if ((st = tile_tma_desc_2d(&dk, plan->k, 1, k->data, (uint64_t)T, cols, (uint64_t)k->stride[0])) != TILE_OK)
    return st;
  if ((st = tile_tma_desc_2d(&dv, plan->k, 2, v->data, (uint64_t)T, cols, (uint64_t)v->stride[0])) != TILE_OK)
    return st;
  /* O as [rows, H * D] for the kernels' TMA-store epilogue (TMA_STORE) */
  tile_tma_desc dout;
  uint64_t o_rows = (uint64_t)(bcast ? p->batch * NQ : T);
  if ((st = tile_tma_desc_2d(&dout, plan->k, O_TMA_PARAM, o->data, o_rows, cols, (uint64_t)o_stride64)) != TILE_OK)
    return st;
  tile_devptr od = o->data, ld = lse->data;
  int32_t total = (int32_t)T, heads = (int32_t)H, nq = (int32_t)NQ, o_stride = (int32_t)o_stride64;
  float scale = p->softmax_scale > 0 ? p->softmax_scale : (float)(1.0 / sqrt((double)D));
  float scale_log2 = scale * 1.4426950408889634f;
  void *args[] = {&dq,    &dk,    &dv, &od,       &ld,         &plan->d_offsets,  &plan->d_work, &plan->d_cta_start,
                  &plan->d_part_o, &plan->d_part_lse, &total, &heads, &nq, &o_stride, &scale_log2, &dout};
  st = tile_launch(plan->k, (unsigned)plan->ctas, 1, 1, args, 16, stream);
  if (st != TILE_OK || plan->split.ncombine == 0) return st;
  /* the split tiles: merge their pieces (BLOCK_M / 64 programs each) */
  void *cargs[] = {&od, &ld, &plan->d_part_o, &plan->d_part_lse, &plan->d_combine, &plan->d_offsets,
                   &total, &heads, &nq, &o_stride};
  return tile_launch(plan->combine, (unsigned)plan->split.ncombine, BLOCK_M / 64, 1, cargs, 10, stream);
}

tile_status jfa_varlen_fwd(jfa_lib *lib, const jfa_tensor *q, const jfa_tensor *k, const jfa_tensor *v,
                           const jfa_tensor *o, const jfa_tensor *lse, const int32_t *cu_seqlens, int64_t batch,
                           int64_t max_seqlen, int causal, float softmax_scale, tile_stream stream) {
  if (!q) return tile_set_error(TILE_ERR_INVALID, "jfa: q is NULL");
  if (q->rank != 3) return tile_set_error(TILE_ERR_INVALID, "jfa: q must have 3 dimensions, not %d", q->rank);
  jfa_params p = {0};
  p.batch = batch;
  p.cu_seqlens = cu_seqlens;
  p.heads = (int)q->shape[1];
  p.head_dim = (int)q->shape[2];
  p.causal = causal;
  p.softmax_scale = softmax_scale;
  if (cu_seqlens && batch >= 0 && max_seqlen > 0)
    for (int64_t b = 0; b < batch; b++)
      if (cu_seqlens[b + 1] - cu_seqlens[b] > max_seqlen)
        return tile_set_error(TILE_ERR_INVALID, "jfa: sequence %lld has %lld rows, more than max_seqlen = %lld",
                              (long long)b, (long long)(cu_seqlens[b + 1] - cu_seqlens[b]), (long long)max_seqlen);
  jfa_plan *plan;
  tile_status st = jfa_plan_create(lib, &p, &plan);
  if (st != TILE_OK) return st;
  st = jfa_plan_forward(plan, q, k, v, o, lse, stream);
  /* the plan's device buffers are freed only after the kernel has read them */
  tile_status st2 = stream ? tile_stream_synchronize(stream) : tile_synchronize();
  jfa_plan_destroy(plan);
  return st != TILE_OK ? st : st2;
}

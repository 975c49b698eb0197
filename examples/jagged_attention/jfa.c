/* jfa.c - the host side of Jagged Flash Attention, forward (and what both
 * passes share: the library of cubins, plans, argument checks): the tile
 * schedule and its upload, TMA descriptors, the launch. The backward pass
 * is jfa_bwd.c. See jfa.h. */
#include "jfa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfa_int.h"

static const char *variant_name[NVARIANT] = {"self",    "causal",         "bcast", "window",
                                             "softcap", "softcap_causal", "alibi", "alibi_causal",
                                             "blocksparse", "blocksparse_causal"};

tile_status jfa_lib_open(const char *cubin_dir, jfa_lib **out) {
  if (!out) return tile_set_error(TILE_ERR_INVALID, "jfa_lib_open: out is NULL");
  *out = NULL;
  if (!cubin_dir || strlen(cubin_dir) >= sizeof((jfa_lib *)0)->dir)
    return tile_set_error(TILE_ERR_INVALID, "jfa_lib_open: missing or too long cubin folder");
  tile_device_info dev;
  tile_status st = tile_device_info_get(&dev);
  if (st != TILE_OK) return st;
  /* the cubins of the device's target: Hopper's (jfa_fwd.tile and the
   * rest) on 9.x, Blackwell's (jfa_fwd_sm100.tile, the forward only) on 10.x */
  if (dev.cc_major != 9 && dev.cc_major != 10)
    return tile_set_error(TILE_ERR_INVALID,
                          "jfa: the kernels are written for Hopper (sm_90a) and Blackwell (sm_100a); this GPU is sm_%d%d",
                          dev.cc_major, dev.cc_minor);
  jfa_lib *lib = calloc(1, sizeof *lib);
  if (!lib) return tile_set_error(TILE_ERR_NOMEM, "jfa_lib_open: out of memory");
  strcpy(lib->dir, cubin_dir);
  strcpy(lib->arch, dev.cc_major == 10 ? "sm_100a" : "sm_90a");
  lib->sm_count = dev.sm_count;
  *out = lib;
  return TILE_OK;
}

const char *jfa_lib_arch(const jfa_lib *lib) { return lib ? lib->arch : ""; }

void jfa_lib_close(jfa_lib *lib) {
  if (!lib) return;
  for (int d = 0; d < 2; d++) {
    for (int v = 0; v < NVARIANT; v++) {
      if (lib->mod[d][v]) tile_module_unload(lib->mod[d][v]);
      if (lib->det_mod[d][v]) tile_module_unload(lib->det_mod[d][v]);
    }
    for (int v = 0; v < 2; v++)
      if (lib->cmod[d][v]) tile_module_unload(lib->cmod[d][v]);
  }
  for (int v = 0; v < NVARIANT; v++)
    if (lib->pair_mod[v]) tile_module_unload(lib->pair_mod[v]);
  for (int v = 0; v < 2; v++)
    if (lib->pair_cmod[v]) tile_module_unload(lib->pair_cmod[v]);
  jfa_bwd_lib_close(lib);
  free(lib);
}

static tile_status get_kernel(jfa_lib *lib, int head_dim, int variant, tile_kernel **k) {
  int d = head_dim == 128;
  tile_status st = jfa_load_kernel(lib, "jfa_fwd", head_dim, variant_name[variant], &lib->mod[d][variant],
                               &lib->kern[d][variant]);
  *k = lib->kern[d][variant];
  return st;
}

/* The CTA pair's forward (jfa_params.cta_pair): head dim 128, variant self, causal or bcast (checked before; a
 * variant's: jfa_variant_kernel). */
static tile_status get_pair_kernel(jfa_lib *lib, int variant, tile_kernel **k) {
  char name[32];
  snprintf(name, sizeof name, "%s.pair", variant_name[variant]);
  tile_status st = jfa_load_kernel(lib, "jfa_fwd", 128, name, &lib->pair_mod[variant], &lib->pair_kern[variant]);
  *k = lib->pair_kern[variant];
  return st;
}

/* pair: the CTA pair's (slots of 256 rows: jfa_combine.d128.VARIANT.pair) */
static tile_status get_combine(jfa_lib *lib, int head_dim, int bcast, int pair, tile_kernel **k) {
  int d = head_dim == 128;
  if (pair) {
    tile_status st = jfa_load_kernel(lib, "jfa_combine", head_dim, bcast ? "bcast.pair" : "self.pair",
                                     &lib->pair_cmod[bcast], &lib->pair_ckern[bcast]);
    *k = lib->pair_ckern[bcast];
    return st;
  }
  tile_status st = jfa_load_kernel(lib, "jfa_combine", head_dim, bcast ? "bcast" : "self", &lib->cmod[d][bcast],
                               &lib->ckern[d][bcast]);
  *k = lib->ckern[d][bcast];
  return st;
}

/* ---- plans ----------------------------------------------------------------- */

void jfa_plan_destroy(jfa_plan *plan) {
  if (!plan) return;
  jfa_stage_wait(&plan->stage); /* no copy or kernel of the plan still uses its buffers */
  jfa_buf *bufs[] = {&plan->d_offsets, &plan->d_work,   &plan->d_cta_start, &plan->d_combine,
                     &plan->d_part_o,  &plan->d_part_lse, &plan->d_vparams};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) jfa_buf_free(bufs[i]);
  if (plan->own_mod) tile_module_unload(plan->own_mod);
  if (plan->own_det_mod) tile_module_unload(plan->own_det_mod);
  if (plan->own_pair_mod) tile_module_unload(plan->own_pair_mod);
  tile_jagged_schedule_free(&plan->sched);
  tile_jagged_split_free(&plan->split);
  jfa_bwd_plan_destroy(plan);
  jfa_stage_free(&plan->stage);
  free(plan->off32);
  free(plan);
}

/* The forward's work lists for plan->p's offsets (plan->p.cu_seqlens, batch,
 * plan->total), queued on plan->stage; *same = 1 when the lengths were the
 * last fill's (nothing queued). */
static tile_status fwd_fill(jfa_plan *plan, int *same) {
  const jfa_params *p = &plan->p;
  *same = 0;
  if (p->batch == 0) { /* nothing to run: the kernel is not launched */
    tile_jagged_schedule_free(&plan->sched);
    tile_jagged_split_free(&plan->split);
    return TILE_OK;
  }
  tile_jagged_params jp = {0};
  jp.batch = p->batch;
  jp.offsets = p->cu_seqlens;
  jp.offsets_are_64bit = p->cu_seqlens_64bit;
  jp.heads = p->heads;
  jp.block_m = BLOCK_M * plan->fwd_ctas; /* a pair's item: 256 query rows */
  jp.block_n = plan->block_n;
  jp.causal = p->causal;
  jp.window = p->window; /* the window's costs and KV ranges (tile_jagged_params.window) */
  jp.window_left = p->window_left;
  jp.window_right = p->window_right;
  jp.num_q = p->num_q;
  jfa_block_mask_sched(p, &jp); /* tiles cost the blocks the mask visits */
  jp.num_ctas = plan->ctas / plan->fwd_ctas; /* the work lists' owners: CTAs, or pairs of CTAs */
  jp.zigzag = !p->no_zigzag;
  tile_status st = tile_jagged_schedule_rebuild(&jp, &plan->sched);
  if (st != TILE_OK) return st;
  if (plan->sched.reused && plan->split.work) return *same = 1, TILE_OK;
  /* the last partial pass cut into pieces of at least 4 KV blocks (each
   * costs about one block more: its Q load, pipeline fill and partial
   * store); the R tiles of that pass get at most num_ctas / R pieces each,
   * so at most one partial slot per CTA */
  tile_jagged_split_free(&plan->split);
  tile_jagged_split_params sp = {4, 1, jp.num_ctas};
  st = tile_jagged_split_tail(&jp, &plan->sched, p->no_split ? NULL : &sp, &plan->split);
  if (st != TILE_OK) return st;
  jfa_stage *sg = &plan->stage;
  if (plan->split.nitems > 0) {
    jfa_stage_copy(sg, &plan->d_work, plan->split.work, (size_t)plan->split.nitems * 32);
    jfa_stage_copy(sg, &plan->d_cta_start, plan->split.cta_start, (size_t)(jp.num_ctas + 1) * 4);
  }
  if (plan->split.ncombine > 0) {
    size_t slots = (size_t)plan->split.nparts * BLOCK_M * plan->fwd_ctas; /* a pair's pieces: 256 rows */
    if ((st = get_combine(plan->lib, p->head_dim, p->num_q > 0, plan->fwd_ctas > 1, &plan->combine)) != TILE_OK)
      return st;
    jfa_stage_copy(sg, &plan->d_combine, plan->split.combine, (size_t)plan->split.ncombine * 32);
    /* every slot starts as "no key" (O = 0, LSE = -inf): rows a piece does
     * not write (SKIP_IDLE's idle warpgroup) are then defined for jfa_combine */
    jfa_stage_fill(sg, &plan->d_part_o, 0, slots * (size_t)p->head_dim * 4);
    jfa_stage_fill(sg, &plan->d_part_lse, 0xff800000u, slots * 4);
  }
  return TILE_OK;
}

/* Everything that depends on the offsets, for p (checked; total its
 * offsets[batch]), uploaded on stream. On failure the plan refuses to run
 * until an update succeeds. */
static tile_status plan_fill(jfa_plan *plan, const jfa_params *p, int64_t total, tile_stream stream) {
  plan->p.batch = p->batch;
  plan->p.cu_seqlens = p->cu_seqlens; /* the caller's, during the fill only */
  plan->p.cu_seqlens_64bit = p->cu_seqlens_64bit;
  plan->p.block_mask = p->block_mask, plan->p.block_mask_mode = p->block_mask_mode; /* (the same) */
  plan->p.block_mask_bytes = p->block_mask_bytes;
  plan->total = total;
  int fsame = 1, bsame = 1;
  tile_status st = TILE_OK;
  if (plan->k) st = fwd_fill(plan, &fsame);
  if (st == TILE_OK && plan->bwd) st = jfa_bwd_plan_fill(plan, &bsame);
  if (st == TILE_OK && !(fsame && bsame && plan->off32)) {
    /* offsets as int32 for the kernels */
    int32_t *o = realloc(plan->off32, (size_t)(p->batch + 1) * sizeof *o);
    if (!o) st = tile_set_error(TILE_ERR_NOMEM, "jfa: out of memory for %lld offsets", (long long)p->batch);
    else plan->off32 = o;
    for (int64_t i = 0; st == TILE_OK && i <= p->batch; i++) o[i] = (int32_t)jfa_offset_at(&plan->p, i);
    if (st == TILE_OK) jfa_stage_copy(&plan->stage, &plan->d_offsets, o, (size_t)(p->batch + 1) * 4);
  }
  if (st == TILE_OK) st = jfa_stage_flush(&plan->stage, stream);
  else plan->stage.n = 0;
  plan->p.cu_seqlens = NULL; /* not kept: the caller's memory */
  plan->p.block_mask = NULL, plan->p.block_mask_mode = 0, plan->p.block_mask_bytes = 0;
  plan->failed = st;
  return st;
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
  plan->p.cu_seqlens = NULL;   /* not kept: the caller's memory */
  plan->p.alibi_slopes = NULL; /* (copied into the variant's arguments below) */
  plan->p.variant = NULL, plan->p.variant_args = NULL, plan->p.nvariant_args = 0;
  plan->p.block_mask = NULL, plan->p.block_mask_mode = 0, plan->p.block_mask_bytes = 0; /* (uploaded below) */
  plan->total = total;

  plan->ctas = p->num_ctas > 0 ? p->num_ctas : lib->sm_count;
  plan->fwd_ctas = p->cta_pair ? 2 : 1;
  if (p->cta_pair && strcmp(lib->arch, "sm_100a")) {
    st = tile_set_error(TILE_ERR_INVALID, "jfa: cta_pair is Blackwell's (tcgen05.mma.cta_group::2); this device's "
                                          "kernels are %s", lib->arch);
    goto fail;
  }
  if (p->cta_pair && plan->ctas < 2) {
    st = tile_set_error(TILE_ERR_INVALID, "jfa: cta_pair with num_ctas %d: a pair is two CTAs", plan->ctas);
    goto fail;
  }
  plan->vidx = p->num_q > 0           ? V_BCAST
               : p->softcap > 0       ? (p->causal ? V_SOFTCAP_CAUSAL : V_SOFTCAP)
               : p->alibi_slopes      ? (p->causal ? V_ALIBI_CAUSAL : V_ALIBI)
               : p->block_mask        ? (p->causal ? V_BLOCKSPARSE_CAUSAL : V_BLOCKSPARSE)
               : p->causal            ? V_CAUSAL
               : p->window            ? V_WINDOW
                                      : V_SELF;
  if (p->variant) snprintf(plan->vname, sizeof plan->vname, "%s", p->variant);
  if (!p->passes || (p->passes & JFA_FWD)) {
    int variant = plan->vidx;
    if (p->cta_pair && !plan->vname[0] && variant < NVARIANT_BWD)
      st = get_pair_kernel(lib, variant, &plan->k);
    else if (plan->vname[0] || variant >= NVARIANT_BWD) /* its cubin holds both passes: D and CAUSAL checked */
      st = jfa_variant_kernel(plan, "jfa_fwd", &plan->k);
    else
      st = get_kernel(lib, p->head_dim, variant, &plan->k);
    if (st != TILE_OK) goto fail;
    /* the KV block is what the kernel was built with (BN + BX keys) */
    const tile_kernel_info *ki = tile_kernel_get_info(plan->k);
    if (st == TILE_OK && ki->cluster[0] != plan->fwd_ctas) {
      st = tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s runs in clusters of %d CTAs; the plan wants %d (the CTA "
                                               "pair's forward: jfa_params.cta_pair, the .pair cubins built with -D "
                                               "CTAS=2)", ki->name, ki->cluster[0], plan->fwd_ctas);
      goto fail;
    }
    if (ki->nparams <= K_PARAM || ki->params[K_PARAM].kind != TILE_PARAM_TMA ||
        ki->params[K_PARAM].box[0] % 16 || ki->params[K_PARAM].box[0] < 16 || ki->params[K_PARAM].box[0] > 256) {
      st = tile_set_error(TILE_ERR_BAD_MODULE,
                          "jfa: kernel %s has no TMA parameter k with a KV block of 16 to 256 rows", ki->name);
      goto fail;
    }
    plan->block_n = (int)ki->params[K_PARAM].box[0] * plan->fwd_ctas; /* a pair's CTA loads half of K's keys */
    int held = 0; /* the pair kernel: no more pairs than the device holds at once */
    if (plan->fwd_ctas > 1 && tile_kernel_max_clusters(plan->k, &held) == TILE_OK)
      plan->ctas = jfa_pair_ctas(plan->ctas, held);
  }
  /* the variant's arguments (variant_args in variants/NAME.tile) */
  size_t nvp = JFA_VPARAMS + (p->alibi_slopes ? (size_t)p->heads : 0) + (size_t)p->nvariant_args +
               jfa_block_mask_words(p);
  int32_t *vp = calloc(nvp, 4);
  if (!vp) {
    st = tile_set_error(TILE_ERR_NOMEM, "jfa_plan_create: out of memory");
    goto fail;
  }
  if (p->window) {
    vp[0] = p->window_left;
    vp[1] = p->window_right;
  } else if (p->softcap > 0) {
    memcpy(&vp[0], &p->softcap, 4);
  } else if (p->alibi_slopes) {
    memcpy(&vp[JFA_VPARAMS], p->alibi_slopes, (size_t)p->heads * 4);
  } else if (p->nvariant_args) {
    memcpy(vp, p->variant_args, (size_t)p->nvariant_args * 4);
  } else if (p->block_mask) {
    jfa_block_mask_pack(p, vp);
  }
  jfa_stage_copy(&plan->stage, &plan->d_vparams, vp, nvp * 4);
  if (p->passes & JFA_BWD) st = jfa_bwd_plan_create(plan);
  /* the schedules and their uploads, on the default stream; waited for, so
   * that the plan runs at once on any stream */
  if (st == TILE_OK) st = plan_fill(plan, p, total, NULL);
  free(vp);
  if (st == TILE_OK) st = jfa_stage_wait(&plan->stage);
  if (st != TILE_OK) goto fail;
  *out = plan;
  return TILE_OK;
fail:
  jfa_plan_destroy(plan);
  return st;
}

tile_status jfa_plan_update(jfa_plan *plan, const void *cu_seqlens, int cu_seqlens_64bit, int64_t batch,
                            tile_stream stream) {
  if (!plan) return tile_set_error(TILE_ERR_INVALID, "jfa_plan_update: plan is NULL");
  jfa_params np = plan->p;
  np.cu_seqlens = cu_seqlens;
  np.cu_seqlens_64bit = cu_seqlens_64bit;
  np.batch = batch;
  int64_t total;
  if (plan->vidx == V_BLOCKSPARSE || plan->vidx == V_BLOCKSPARSE_CAUSAL)
    return tile_set_error(TILE_ERR_INVALID, "jfa_plan_update: a block-sparse plan's mask is laid out for the "
                                            "batch it was made for; make a new plan for a new batch");
  tile_status st = jfa_check_params(&np, &total); /* bad input: the plan as it was */
  if (st != TILE_OK) return st;
  return plan_fill(plan, &np, total, stream);
}

/* plan NULL: all zero */
void jfa_plan_stats(const jfa_plan *plan, int64_t *ntiles, int64_t *max_cta_cost, int64_t *total_cost, int *ctas) {
  if (ntiles) *ntiles = plan ? plan->sched.ntiles : 0;
  if (max_cta_cost)
    *max_cta_cost = !plan ? 0 : plan->split.nparts ? plan->split.max_cta_cost : plan->sched.max_cta_cost;
  if (total_cost) *total_cost = plan ? plan->sched.total_cost : 0;
  if (ctas) *ctas = plan ? plan->ctas : 0;
}

void jfa_plan_split_stats(const jfa_plan *plan, int64_t *split_tiles, int64_t *pieces) {
  if (split_tiles) *split_tiles = plan ? plan->split.ncombine : 0;
  if (pieces) *pieces = plan ? plan->split.nparts : 0;
}

tile_status jfa_plan_forward(jfa_plan *plan, const jfa_tensor *q, const jfa_tensor *k, const jfa_tensor *v,
                             const jfa_tensor *o, const jfa_tensor *lse, tile_stream stream) {
  if (!plan) return tile_set_error(TILE_ERR_INVALID, "jfa_plan_forward: plan is NULL");
  const jfa_params *p = &plan->p;
  int64_t H = p->heads, D = p->head_dim, T = plan->total, NQ = p->num_q;
  int bcast = NQ > 0;
  if (!plan->k)
    return tile_set_error(TILE_ERR_INVALID, "jfa_plan_forward: the plan was made for the backward pass only "
                                            "(jfa_params.passes: add JFA_FWD)");
  if (plan->failed != TILE_OK)
    return tile_set_error(TILE_ERR_INVALID, "jfa_plan_forward: the plan's last update failed (%s); update it "
                                            "again or destroy it", tile_status_name(plan->failed));
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
  /* O as [rows, H * D] for the kernels' TMA-store epilogue */
  tile_tma_desc dout;
  uint64_t o_rows = (uint64_t)(bcast ? p->batch * NQ : T);
  if ((st = tile_tma_desc_2d(&dout, plan->k, O_TMA_PARAM, o->data, o_rows, cols, (uint64_t)o_stride64)) != TILE_OK)
    return st;
  tile_devptr od = o->data, ld = lse->data;
  int32_t total = (int32_t)T, heads = (int32_t)H, nq = (int32_t)NQ, o_stride = (int32_t)o_stride64;
  float scale = p->softmax_scale > 0 ? p->softmax_scale : (float)(1.0 / sqrt((double)D));
  float scale_log2 = scale * 1.4426950408889634f;
  void *args[] = {&dq,    &dk,    &dv, &od,       &ld,         &plan->d_offsets.p,  &plan->d_work.p,
                  &plan->d_cta_start.p, &plan->d_part_o.p, &plan->d_part_lse.p, &total, &heads, &nq, &o_stride,
                  &scale_log2, &dout, &plan->d_vparams.p};
  if ((st = jfa_stage_before_run(&plan->stage, stream)) != TILE_OK) return st;
  /* a CTA per work list, or a cluster of two (the CTA pair's) */
  st = tile_launch(plan->k, (unsigned)(plan->ctas / plan->fwd_ctas * plan->fwd_ctas), 1, 1, args, 17, stream);
  if (st == TILE_OK && plan->split.ncombine > 0) {
    /* the split tiles: merge their pieces (BLOCK_M / 64 programs each) */
    void *cargs[] = {&od, &ld, &plan->d_part_o.p, &plan->d_part_lse.p, &plan->d_combine.p, &plan->d_offsets.p,
                     &total, &heads, &nq, &o_stride};
    st = tile_launch(plan->combine, (unsigned)plan->split.ncombine, BLOCK_M * plan->fwd_ctas / 64, 1, cargs, 10,
                     stream);
  }
  tile_status st2 = jfa_stage_after_run(&plan->stage, stream);
  return st != TILE_OK ? st : st2;
}

/* The one-call wrappers' parameters from q and the offsets, all checked:
 * q's heads and head dim before they become ints, the batch before an
 * offset is read, the offsets (jfa_check_params) before max_seqlen (0: not
 * checked) compares the sequences' lengths with it. */
static tile_status varlen_params(jfa_params *p, int64_t *total, const jfa_tensor *q, const int32_t *cu_seqlens,
                                 int64_t batch, int64_t max_seqlen, int causal, float softmax_scale, int passes,
                                 int deterministic) {
  if (!q) return tile_set_error(TILE_ERR_INVALID, "jfa: q is NULL");
  if (q->rank != 3) return tile_set_error(TILE_ERR_INVALID, "jfa: q must have 3 dimensions, not %d", q->rank);
  if (q->shape[1] < 1 || q->shape[1] > JFA_MAX_ROW_ELEMS)
    return tile_set_error(TILE_ERR_INVALID, "jfa: q has %lld heads (its shape[1]); 1 to %d are supported",
                          (long long)q->shape[1], JFA_MAX_ROW_ELEMS);
  if (q->shape[2] != 64 && q->shape[2] != 128)
    return tile_set_error(TILE_ERR_INVALID, "jfa: head_dim %lld is not supported (64 or 128)", (long long)q->shape[2]);
  if (max_seqlen < 0)
    return tile_set_error(TILE_ERR_INVALID, "jfa: max_seqlen %lld must be >= 0 (0: not checked)", (long long)max_seqlen);
  memset(p, 0, sizeof *p);
  p->batch = batch;
  p->cu_seqlens = cu_seqlens;
  p->heads = (int)q->shape[1];
  p->head_dim = (int)q->shape[2];
  p->causal = causal;
  p->softmax_scale = softmax_scale;
  p->passes = passes;
  p->deterministic = deterministic;
  tile_status st = jfa_check_params(p, total);
  if (st != TILE_OK || max_seqlen == 0) return st;
  for (int64_t b = 0; b < batch; b++) { /* non-decreasing: a length is >= 0, no overflow */
    int64_t len = jfa_offset_at(p, b + 1) - jfa_offset_at(p, b);
    if (len > max_seqlen)
      return tile_set_error(TILE_ERR_INVALID, "jfa: sequence %lld has %lld rows, more than max_seqlen = %lld",
                            (long long)b, (long long)len, (long long)max_seqlen);
  }
  return TILE_OK;
}

/* Wait for the plan's kernels (its device buffers are freed only after
 * they have used them), free it; the first error of the run and the wait. */
static tile_status finish(jfa_plan *plan, tile_status st, tile_stream stream) {
  tile_status st2 = stream ? tile_stream_synchronize(stream) : tile_synchronize();
  jfa_plan_destroy(plan);
  return st != TILE_OK ? st : st2;
}

tile_status jfa_varlen_fwd(jfa_lib *lib, const jfa_tensor *q, const jfa_tensor *k, const jfa_tensor *v,
                           const jfa_tensor *o, const jfa_tensor *lse, const int32_t *cu_seqlens, int64_t batch,
                           int64_t max_seqlen, int causal, float softmax_scale, tile_stream stream) {
  jfa_params p;
  jfa_plan *plan;
  int64_t total;
  /* every argument before the plan (device memory, uploads, kernels) */
  tile_status st = varlen_params(&p, &total, q, cu_seqlens, batch, max_seqlen, causal, softmax_scale, JFA_FWD, 0);
  if (st == TILE_OK) st = jfa_check_tensors(&p, total, q, k, v, o, lse);
  if (st == TILE_OK && !lib) st = tile_set_error(TILE_ERR_INVALID, "jfa_varlen_fwd: lib is NULL");
  if (st == TILE_OK) st = jfa_plan_create(lib, &p, &plan);
  if (st != TILE_OK) return st;
  return finish(plan, jfa_plan_forward(plan, q, k, v, o, lse, stream), stream);
}

tile_status jfa_varlen_bwd(jfa_lib *lib, const jfa_tensor *dout, const jfa_tensor *q, const jfa_tensor *k,
                           const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse, const jfa_tensor *dq,
                           const jfa_tensor *dk, const jfa_tensor *dv, const int32_t *cu_seqlens, int64_t batch,
                           int64_t max_seqlen, int causal, float softmax_scale, int deterministic, tile_stream stream) {
  jfa_params p;
  jfa_plan *plan;
  int64_t total;
  tile_status st = varlen_params(&p, &total, q, cu_seqlens, batch, max_seqlen, causal, softmax_scale, JFA_BWD,
                                 deterministic);
  if (st == TILE_OK) st = jfa_check_bwd_tensors(&p, total, dout, q, k, v, o, lse, dq, dk, dv);
  if (st == TILE_OK && !lib) st = tile_set_error(TILE_ERR_INVALID, "jfa_varlen_bwd: lib is NULL");
  if (st == TILE_OK) st = jfa_plan_create(lib, &p, &plan);
  if (st != TILE_OK) return st;
  return finish(plan, jfa_plan_backward(plan, dout, q, k, v, o, lse, dq, dk, dv, stream), stream);
}

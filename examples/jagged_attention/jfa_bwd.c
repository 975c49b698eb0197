/* jfa_bwd.c - the host side of Jagged Flash Attention's backward pass:
 * the work list (KV blocks, scheduled like the forward's tiles), the
 * workspace (the f32 dQ accumulator, the LSE in log2 units, Delta), the
 * checks, and the three launches (jfa_bwd_pre, jfa_bwd, jfa_bwd_post).
 * See jfa.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfa_int.h"

/* jfa_bwd's parameters that are TMA descriptors, in order (the kernel's
 * signature) */
enum { P_Q, P_K, P_V, P_DO, P_LSE2, P_DELTA, P_DQ_ACC, P_DK_T = 21, P_DV_T, NPARAMS_BWD, P_DQO = NPARAMS_BWD,
       P_TL = NPARAMS_BWD + 2 };

void jfa_plan_bwd_timeline(jfa_plan *plan, tile_devptr buf) {
  if (plan) plan->bwd_timeline = buf;
}

struct jfa_bwd_state {
  tile_kernel *k, *pre, *post;
  int pair;                     /* the CTA pair's kernel (jfa_params.cta_pair where it is built): clusters of 2 */
  int ctas;                     /* the main kernel's CTAs: the plan's, or (pair) as many pairs as the device holds */
  int dyn;                      /* the kernel takes its items from one list by a counter (jfa_bwd.tile's DYN) */
  int qb;                       /* its query rows per step (jfa_bwd.tile's QB): 64, or 80 with the transposed
                                   dQ accumulator */
  int64_t acc_stride;           /* QB = 80: floats between the transposed accumulator's rows (ws_rows x 80) */
  int bulk;                     /* 64-row blocks with the accumulator by block (jfa_bwd.tile's DQ_BULK) */
  int dqt;                      /* ... each block's dQ^T (jfa_bwd.tile's DQT, head dim 64) */
  int group;                    /* jfa_bwd.tile's GROUP: a short sequence's KV blocks of a head as one item, its
                                   dQ blocks written first (jfa_bwd_items.group); 0: none */
  int fused;                    /* jfa_bwd.tile's FP (with GROUP): their last KV block writes dQ itself (the
                                   parameters dqo, dqo_stride), which jfa_bwd_post then leaves alone */
  int own;                      /* jfa_bwd.tile's OWN: each dQ block written first by its owner, the others
                                   waiting on its flag (sem[1 + workspace row]); jfa_bwd_pre zeroes nothing */
  int unowned;                  /* ... with block skips (jfa_bwd.tile's SKIPS): a dQ block no KV block visits has
                                   no owner, its flag stays 0, and jfa_bwd_post writes its zeros (layout + 4096) */
  int fin;                      /* ... and FIN: each block's first KV block writes dQ itself (dqo), last, so
                                   jfa_bwd_post does not run */
  int det_fin;                  /* deterministic mode by the FIN kernel: its dQ sums are in one order already */
  int64_t max_cta_cost, total_cost; /* the schedule's, for reports */
  int64_t nitems;               /* work items: 8 int32 each */
  jfa_bwd_items it;             /* the host's copy, rebuilt by each fill */
  jfa_buf d_work, d_cta_start;
  int64_t q_rows;               /* rows of Q and dQ: total (self) or num_q (broadcast-Q) */
  int64_t o_rows;               /* rows of O and dO: total or B * num_q */
  int64_t nqb;                  /* query blocks per head: all sequences' (self) or num_q's (broadcast-Q) */
  int64_t ws_rows;              /* rows of jfa_bwd_lw(qb) floats of LSE (log2) and Delta: one per (head, query block),
                                   and per sequence in broadcast-Q */
  int64_t nsem;                 /* deterministic: one counter per (head, query block) */
  jfa_buf d_dq_acc, d_lse2, d_delta, d_sem, d_qbmap;
};

static const char *bwd_variant(int variant, int det) {
  static const char *names[NVARIANT_BWD][2] = {{"self", "self.det"}, {"causal", "causal.det"}, {"bcast", "bcast.det"}};
  return names[variant][det];
}

void jfa_bwd_lib_close(jfa_lib *lib) {
  for (int d = 0; d < 2; d++) {
    for (int v = 0; v < NVARIANT_BWD; v++)
      for (int det = 0; det < 2; det++)
        if (lib->bmod[d][v][det]) tile_module_unload(lib->bmod[d][v][det]);
    if (d)
      for (int v = 0; v < NVARIANT_BWD; v++)
        if (lib->pair_bmod[v]) tile_module_unload(lib->pair_bmod[v]);
    for (int b = 0; b < 3; b++)
      if (lib->pmod[d][b]) tile_module_unload(lib->pmod[d][b]);
  }
}

void jfa_bwd_plan_destroy(jfa_plan *plan) {
  struct jfa_bwd_state *s = plan->bwd;
  if (!s) return;
  jfa_buf *bufs[] = {&s->d_work, &s->d_cta_start, &s->d_dq_acc, &s->d_lse2, &s->d_delta, &s->d_sem, &s->d_qbmap};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) jfa_buf_free(bufs[i]);
  jfa_bwd_items_free(&s->it);
  free(s);
  plan->bwd = NULL;
}

/* Deterministic mode: a CTA's items in ascending rank (see item_rank), so
 * that the item every dQ block waits for next is never behind a later one. */
static int rank_cmp(const void *a, const void *b) {
  const int32_t *x = a, *y = b;
  if (x[5] != y[5]) return x[5] < y[5] ? -1 : 1;
  if (x[6] != y[6]) return x[6] < y[6] ? -1 : 1;
  return (x[2] > y[2]) - (x[2] < y[2]);
}

void jfa_bwd_items_free(jfa_bwd_items *it) {
  if (!it) return;
  tile_jagged_schedule_free(&it->sched);
  free(it->work);
  free(it->qbmap);
  free(it->cta_start);
  memset(it, 0, sizeof *it);
}

tile_status jfa_bwd_items_build(const jfa_params *p, int ctas, int pair, int dyn, jfa_bwd_items *it) {
  memset(it, 0, sizeof *it);
  return jfa_bwd_items_rebuild(p, ctas, pair, dyn, it);
}

/* A DYN kernel's list (jfa_bwd.tile, DYN): its CTAs take the items in
 * list order, each the next one when it is free. The order: first the
 * heavy sequences, those with an item of more than 1/16 of a CTA's share
 * of the work, by their heaviest item descending (ties in batch order), so
 * that no long item is taken last; then the others in batch order
 * (no_zigzag: every sequence in batch order). Batch order keeps the
 * sequences that run together next to each other in memory: a sequence's
 * last blocks' TMA boxes reach into the next one's rows, which its own
 * items then find in L2. Sorting every sequence by weight lost to batch
 * order on J2 (0.98x) and J3 (0.94x; dealt from both ends by work, 0.96x),
 * and gained nothing elsewhere (docs/perf.md, twenty-fourth session).
 * Each sequence's items go head by head, KV blocks ascending (OWN: a
 * sequence's that are not grouped descending, so that each dQ block's
 * owner, its last KV block, is taken before the items that wait for it;
 * jfa_bwd.tile, dq_owner): items that
 * share query blocks (a head's neighbouring KV blocks) are then taken one
 * after another and run at about the same time, whichever CTAs take them
 * and however far the CTAs' speeds drift apart, so their Q, dO and dQ
 * accumulator lines are reused in L2. Each item lands straight in its
 * place: sequence b's items start at at[b], item (b, h, n) at
 * at[b] + h * nb + n. */
typedef struct seq_key {
  int32_t cost, b;
} seq_key;

static int seq_key_cmp(const void *x, const void *y) {
  const seq_key *a = x, *b = y;
  if (a->cost != b->cost) return a->cost > b->cost ? -1 : 1;
  return (a->b > b->b) - (a->b < b->b);
}

static tile_status dyn_order(const jfa_params *p, int64_t KB, int owners, jfa_bwd_items *it) {
  int64_t B = p->batch, H = p->heads, n = it->sched.ntiles;
  seq_key *key = malloc((size_t)B * sizeof *key);
  int64_t *at = malloc((size_t)B * sizeof *at);
  int32_t *out = malloc((size_t)(n ? n : 1) * 8 * sizeof *out);
  tile_status st = TILE_OK;
  if (!key || !at || !out) {
    st = tile_set_error(TILE_ERR_NOMEM, "jfa_plan_create: out of memory for %lld backward items", (long long)n);
    goto done;
  }
  int64_t total = 0; /* the steps of all items */
  for (int64_t b = 0; b < B; b++) key[b].cost = -1, key[b].b = (int32_t)b;
  for (int64_t i = 0; i < n && !p->no_zigzag; i++) { /* no_zigzag: the sequences in batch order */
    const int32_t *w = it->work + 8 * i;
    if (w[4] - w[3] > key[w[0]].cost) key[w[0]].cost = w[4] - w[3];
    total += w[4] - w[3];
  }
  int64_t heavy = total / (16 * (int64_t)(owners > 0 ? owners : 1));
  for (int64_t b = 0; b < B; b++)
    if (key[b].cost <= heavy) key[b].cost = -1; /* light: batch order, after the heavy ones */
  qsort(key, (size_t)B, sizeof *key, seq_key_cmp);
  int64_t pos = 0;
  for (int64_t r = 0; r < B; r++) {
    int64_t b = key[r].b, L = jfa_offset_at(p, b + 1) - jfa_offset_at(p, b);
    at[b] = pos;
    pos += H * ((L + KB - 1) / KB);
  }
  if (pos != n) {
    st = tile_set_error(TILE_ERR_INVALID, "jfa: internal error: %lld backward items, %lld KV blocks", (long long)n,
                        (long long)pos);
    goto done;
  }
  for (int64_t i = 0; i < n; i++) {
    const int32_t *w = it->work + 8 * i;
    int64_t b = w[0], L = jfa_offset_at(p, b + 1) - jfa_offset_at(p, b);
    int64_t nb = (L + KB - 1) / KB, kb = it->own && nb > it->group ? nb - 1 - w[2] : w[2];
    memcpy(out + 8 * (at[b] + w[1] * nb + kb), w, 8 * sizeof *w);
  }
  free(it->work);
  it->work = out, out = NULL;
done:
  free(key), free(at), free(out);
  return st;
}

/* GROUP (jfa_bwd.tile): after dyn_order, each run of a head's KV blocks of
 * a sequence with at most it->group of them becomes one item (the first's,
 * its field 5 the run's length, its query range the variant's), which one
 * CTA runs block after block; field 5 is 0 in the other items. The list
 * shrinks in place; it->cta_start is the schedule's with the new length
 * last (the DYN kernel reads only that). */
static tile_status group_items(const jfa_params *p, int64_t KB, int owners, jfa_bwd_items *it) {
  int64_t n = it->nitems, m = 0;
  it->ungrouped = 0;
  it->cta_start = malloc((size_t)(owners + 1) * sizeof *it->cta_start);
  if (!it->cta_start) return tile_set_error(TILE_ERR_NOMEM, "jfa_plan_create: out of memory");
  for (int64_t i = 0; i < n;) {
    const int32_t *w = it->work + 8 * i;
    int64_t L = jfa_offset_at(p, w[0] + 1) - jfa_offset_at(p, w[0]), nkv = (L + KB - 1) / KB;
    int32_t *o = it->work + 8 * m++;
    memmove(o, w, 8 * sizeof *w);
    if (nkv > it->group) { /* a longer sequence: its items as they are, its blocks zeroed by jfa_bwd_pre */
      o[5] = 0;
      it->ungrouped++;
      i++;
      continue;
    }
    /* jfa_bwd_pre zeroes no block of a short sequence (the same rule), so its head's items must be all here,
     * KV blocks 0 .. nkv - 1 in order (dyn_order's): otherwise its dQ would be summed onto stale memory */
    int run = w[2] == 0 && i + nkv <= n;
    for (int64_t k = 1; run && k < nkv; k++) {
      const int32_t *x = it->work + 8 * (i + k);
      run = x[0] == w[0] && x[1] == w[1] && x[2] == k;
    }
    if (!run)
      return tile_set_error(TILE_ERR_INVALID, "jfa: internal error: the backward items of sequence %d, head %d are "
                                              "not its %lld KV blocks in order", w[0], w[1], (long long)nkv);
    o[3] = 0, o[4] = INT32_MAX, o[5] = (int32_t)nkv;
    i += nkv;
  }
  memcpy(it->cta_start, it->sched.cta_start, (size_t)(owners + 1) * sizeof *it->cta_start);
  it->cta_start[owners] = (int32_t)m;
  it->nitems = m;
  return TILE_OK;
}

tile_status jfa_bwd_items_rebuild(const jfa_params *p, int ctas, int pair, int dyn, jfa_bwd_items *it) {
  int64_t B = p->batch, H = p->heads, NQ = p->num_q;
  int bcast = NQ > 0, det = p->deterministic != 0;
  /* an item's keys and a step's query rows: the pair's twice one CTA's */
  int64_t WQ = it->qb ? it->qb : BWD_QB, LW = jfa_bwd_lw((int)WQ); /* one CTA's step: the workspace's blocks */
  int64_t KB = BWD_KB << !!pair, QB = WQ << !!pair;
  int owners = pair ? ctas / 2 : ctas;
  if (B == 0) {
    jfa_bwd_items_free(it);
    return TILE_OK;
  }
  /* the schedule: KV blocks of BWD_KB keys, each costing the BWD_QB-row
   * query blocks it meets, sorted and dealt like the forward's tiles */
  tile_jagged_params jp = {0};
  jp.batch = B;
  jp.offsets = p->cu_seqlens;
  jp.offsets_are_64bit = p->cu_seqlens_64bit;
  jp.heads = p->heads;
  jp.block_m = (int)QB;
  jp.block_n = (int)KB;
  jp.causal = p->causal;
  jp.window = p->window; /* a window's items cost the query blocks they meet (tile_jagged_params.window) */
  jp.window_left = p->window_left;
  jp.window_right = p->window_right;
  jp.num_q = NQ;
  jfa_block_mask_sched(p, &jp); /* items cost the query blocks the mask visits */
  jp.num_ctas = owners;
  jp.zigzag = !p->no_zigzag;
  jp.backward = 1;
  tile_status st = tile_jagged_schedule_rebuild(&jp, &it->sched);
  if (st != TILE_OK) {
    jfa_bwd_items_free(it);
    return st;
  }
  if (it->sched.reused && it->work) return TILE_OK; /* the same lengths: the same items */
  free(it->work), free(it->qbmap), free(it->cta_start);
  it->work = NULL, it->qbmap = NULL, it->cta_start = NULL, it->nitems = it->nqb = it->ws_rows = 0;
  int64_t n = it->sched.ntiles;
  if (n > TILE_JAGGED_MAX_ITEMS) {
    jfa_bwd_items_free(it);
    return tile_set_error(TILE_ERR_INVALID, "jfa: %lld backward work items, more than %d", (long long)n,
                          TILE_JAGGED_MAX_ITEMS);
  }
  /* per sequence: its first query block among all sequences' (the dQ
   * counters of deterministic mode, the workspace rows) and its first KV
   * block (the ranks of broadcast-Q's items) */
  int64_t *qb0 = malloc((size_t)(B + 1) * sizeof *qb0), *kb0 = malloc((size_t)(B + 1) * sizeof *kb0);
  it->work = malloc((size_t)(n ? n : 1) * 8 * sizeof *it->work);
  if (!qb0 || !kb0 || !it->work) {
    free(qb0), free(kb0);
    jfa_bwd_items_free(it);
    return tile_set_error(TILE_ERR_NOMEM, "jfa_plan_create: out of memory for %lld backward items", (long long)n);
  }
  qb0[0] = kb0[0] = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t L = jfa_offset_at(p, b + 1) - jfa_offset_at(p, b);
    qb0[b + 1] = qb0[b] + (L + WQ - 1) / WQ; /* the workspace's rows */
    kb0[b + 1] = kb0[b] + (L + KB - 1) / KB;
  }
  int64_t nqb = bcast ? (NQ + WQ - 1) / WQ : qb0[B]; /* query blocks per head */
  it->nqb = nqb;
  it->ws_rows = (bcast ? B * H : H) * nqb;
  if (it->ws_rows > INT32_MAX / LW || kb0[B] > INT32_MAX || H * nqb > INT32_MAX)
    st = tile_set_error(TILE_ERR_INVALID, "jfa: the batch is too large for the backward's 32-bit workspace rows "
                                          "(%lld rows of %lld)", (long long)it->ws_rows, (long long)LW);
  /* self-attention: (sequence, block) of each query block, for jfa_bwd_pre */
  if (st == TILE_OK && !bcast) {
    it->qbmap = malloc((size_t)(nqb ? nqb : 1) * 2 * sizeof *it->qbmap);
    if (!it->qbmap) st = tile_set_error(TILE_ERR_NOMEM, "jfa_plan_create: out of memory");
    for (int64_t b = 0; b < B && it->qbmap; b++)
      for (int64_t g = qb0[b]; g < qb0[b + 1]; g++)
        it->qbmap[2 * g] = (int32_t)b, it->qbmap[2 * g + 1] = (int32_t)(g - qb0[b]);
  }
  for (int64_t i = 0; i < n && st == TILE_OK; i++) {
    const int32_t *t = it->sched.work + 4 * i;
    int32_t b = t[0], h = t[1], kb = t[2];
    int64_t L = jfa_offset_at(p, b + 1) - jfa_offset_at(p, b), qlen = bcast ? NQ : L;
    int64_t i0 = p->causal ? (int64_t)kb * KB / QB : 0, i1 = (qlen + QB - 1) / QB;
    if (p->window) { /* variants/window.tile's q_blocks: rows k_lo - right .. k_hi - 1 + left */
      int64_t left = p->window_left < 0 ? JFA_WINDOW_MAX : p->window_left;
      int64_t right = p->window_right < 0 ? JFA_WINDOW_MAX : p->window_right;
      int64_t k_lo = (int64_t)kb * KB, k_hi = k_lo + KB, last = k_hi - 1 + left;
      i0 = (k_lo - right > 0 ? k_lo - right : 0) / QB;
      if (last > qlen - 1) last = qlen - 1;
      if ((last + 1 + QB - 1) / QB < i1) i1 = (last + 1 + QB - 1) / QB;
    }
    /* the scheduler's cost model is the kernel's loop (a block mask's: the
     * steps of it the mask visits) */
    if (p->block_mask ? t[3] > i1 - i0 : i1 - i0 != t[3]) {
      st = tile_set_error(TILE_ERR_INVALID, "jfa: internal error: backward item (%d, %d, %d) costs %d, its loop %lld",
                          b, h, kb, t[3], (long long)(i1 - i0));
      break;
    }
    int32_t *w = it->work + 8 * i;
    w[0] = b, w[1] = h, w[2] = kb, w[3] = (int32_t)i0, w[4] = (int32_t)i1;
    /* rank: the order in which items add into one dQ block (deterministic
     * mode); counter: the first of the item's query blocks' counters */
    w[5] = (int32_t)(bcast ? kb0[b] + kb : kb);
    w[6] = (int32_t)(h * nqb + (bcast ? 0 : qb0[b]));
    w[7] = (int32_t)(bcast ? ((int64_t)b * H + h) * nqb : h * nqb + qb0[b]); /* workspace row of its Q block 0 */
  }
  free(qb0), free(kb0);
  if (st == TILE_OK && dyn && !det && !pair) st = dyn_order(p, KB, owners, it);
  it->nitems = n;
  it->ungrouped = n;
  if (st == TILE_OK && dyn && !det && !pair && !bcast && it->group > 0) st = group_items(p, KB, owners, it);
  n = it->nitems;
  if (st == TILE_OK && det)
    for (int c = 0; c < owners; c++)
      qsort(it->work + 8 * (int64_t)it->sched.cta_start[c],
            (size_t)(it->sched.cta_start[c + 1] - it->sched.cta_start[c]), 8 * sizeof *it->work, rank_cmp);
  it->nitems = n;
  if (st != TILE_OK) jfa_bwd_items_free(it);
  return st;
}

tile_status jfa_bwd_plan_create(jfa_plan *plan) {
  const jfa_params *p = &plan->p;
  jfa_lib *lib = plan->lib;
  struct jfa_bwd_state *s = calloc(1, sizeof *s);
  if (!s) return tile_set_error(TILE_ERR_NOMEM, "jfa_plan_create: out of memory");
  plan->bwd = s;
  int64_t D = p->head_dim, NQ = p->num_q;
  int bcast = NQ > 0, d = D == 128, det = p->deterministic != 0;
  int variant = bcast ? V_BCAST : p->causal ? V_CAUSAL : V_SELF;
  tile_status st;
  /* the CTA pair's backward where it is built: self, causal and broadcast-Q at head dim 128, deterministic or
   * not (jfa_params.cta_pair checked the head dim, the target and the block mask); a variant's plan keeps one
   * CTA's backward beside the pair's forward */
  s->pair = p->cta_pair && !plan->vname[0] && plan->vidx < NVARIANT_BWD && D == 128;
  if (plan->vname[0] || plan->vidx >= NVARIANT_BWD) { /* a variant: its cubin holds the backward too */
    if ((st = jfa_variant_kernel(plan, "jfa_bwd", &s->k)) != TILE_OK) return st;
  } else if (s->pair) {
    char name[32];
    snprintf(name, sizeof name, "%s.pair", bwd_variant(variant, det));
    st = jfa_load_kernel(lib, "jfa_bwd", 128, name, &lib->pair_bmod[variant], &lib->pair_bkern[variant]);
    if (st != TILE_OK) return st;
    s->k = lib->pair_bkern[variant];
  } else {
    st = jfa_load_kernel(lib, "jfa_bwd", (int)D, bwd_variant(variant, det), &lib->bmod[d][variant][det],
                         &lib->bkern[d][variant][det]);
    if (st != TILE_OK) return st;
    s->k = lib->bkern[d][variant][det];
  }
  const tile_kernel_info *ki = tile_kernel_get_info(s->k);
  /* a deterministic build that is FIN (jfa_bwd.tile's DET_FIN: head dim 128 with the causal mask, a window,
   * ...) adds each dQ block's contributions in one order (its KV blocks, last first; the first writes dQ)
   * whatever the schedule: it runs as the default kernels do, without DET's turns and their counters */
  const char *fin = tile_kernel_const(ki, "FIN");
  if (det && fin && !strcmp(fin, "true")) det = 0, s->det_fin = 1; /* (then it must run as FIN: checked below) */
  const char *qb = tile_kernel_const(ki, "QB");
  s->qb = qb ? atoi(qb) : BWD_QB;
  const char *bulk = tile_kernel_const(ki, "DQ_BULK");
  s->bulk = s->qb == BWD_QB && bulk && !strcmp(bulk, "true");
  const char *dqt = tile_kernel_const(ki, "DQT");
  s->dqt = s->bulk && dqt && !strcmp(dqt, "true");
  const char *group = tile_kernel_const(ki, "GROUP");
  s->group = group && !det && !bcast ? atoi(group) : 0;
  if (s->group < 0 || s->group > 64) s->group = 0;
  const char *fp = tile_kernel_const(ki, "FP");
  s->fused = s->group && fp && !strcmp(fp, "true");
  const char *own = tile_kernel_const(ki, "OWN");
  s->own = own && !strcmp(own, "true") && !det && !bcast;
  s->fin = s->own && !s->group && fin && !strcmp(fin, "true");
  const char *skips = tile_kernel_const(ki, "SKIPS");
  s->unowned = s->own && skips && !strcmp(skips, "true");
  if (s->fin && (ki->nparams < NPARAMS_BWD + 2 || ki->params[P_DQO].kind != TILE_PARAM_PTR))
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s writes dQ itself (FIN) but has no parameters dqo, "
                                               "dqo_stride (%d and %d)", ki->name, P_DQO, P_DQO + 1);
  if (s->det_fin && !s->fin)
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: internal error: kernel %s was taken for deterministic mode as FIN "
                                             "but does not run as FIN", ki->name);
  if (s->fused && (ki->nparams < NPARAMS_BWD + 2 || ki->params[P_DQO].kind != TILE_PARAM_PTR))
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s writes dQ itself (FP) but has no parameters dqo, "
                                               "dqo_stride (%d and %d)", ki->name, P_DQO, P_DQO + 1);
  if (s->qb != BWD_QB && !(s->qb == 80 && D == 128 && !bcast && !s->pair))
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s steps over %d query rows; the backward runs 64, or 80 "
                                               "in one CTA's self-attention at head dim 128", ki->name, s->qb);
  /* the small kernels: per head dim and layout (80-row blocks: the transposed accumulator) */
  int pv = bcast ? 1 : s->qb == 80 ? 2 : 0;
  st = jfa_load_kernel(lib, "jfa_bwd_pre", (int)D, pv == 1 ? "bcast" : pv == 2 ? "self80" : "self", &lib->pmod[d][pv],
                       &lib->pre[d][pv]);
  if (st != TILE_OK) return st;
  if (!lib->post[d][pv] &&
      (st = tile_module_get_kernel(lib->pmod[d][pv], "jfa_bwd_post", &lib->post[d][pv])) != TILE_OK)
    return st;
  s->pre = lib->pre[d][pv];
  s->post = lib->post[d][pv];
  /* the small kernels lay the workspace out for the same query blocks */
  const tile_kernel_info *pi = tile_kernel_get_info(s->pre);
  const char *pqb = tile_kernel_const(pi, "QB");
  if ((pqb ? atoi(pqb) : BWD_QB) != s->qb)
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s lays the workspace out for %s-row query blocks, "
                                               "kernel %s steps over %d rows; rebuild them together",
                          pi->name, pqb ? pqb : "64", ki->name, s->qb);
  const char *nlay = tile_kernel_const(pi, "LAYOUTS"); /* the accumulator layouts its kernels know: 0 .. n - 1 */
  int want = s->bulk ? 1 + bcast + 2 * s->dqt : 0;
  if (s->fused && !tile_kernel_const(tile_kernel_get_info(s->post), "FUSED"))
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel jfa_bwd_post would overwrite the dQ rows kernel %s "
                                               "writes itself (FP); rebuild them together", ki->name);
  if (s->group && !tile_kernel_const(pi, "GROUPS")) /* an older pre would zero them, harmless, but post too */
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s does not know the grouped items of kernel %s "
                                               "(GROUP); rebuild them together", pi->name, ki->name);
  if (s->unowned && !tile_kernel_const(tile_kernel_get_info(s->post), "ZEROS"))
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel jfa_bwd_post does not write the zeros of the dQ blocks "
                                               "that kernel %s's block mask leaves unvisited (OWN with block skips); "
                                               "rebuild them together", ki->name);
  if (s->own && !tile_kernel_const(pi, "OWNS")) /* an older pre would zero the blocks: harmless, but slower */
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s does not know that kernel %s writes every dQ "
                                               "block first (OWN); rebuild them together", pi->name, ki->name);
  if ((nlay ? atoi(nlay) : 2) <= want)
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s does not know the dQ accumulator layout %d "
                                               "(by block%s%s) that kernel %s adds into; rebuild them together",
                          pi->name, want, bcast ? ", broadcast-Q" : "", s->dqt ? ", dQ^T" : "", ki->name);
  if (ki->nparams <= P_DQ_ACC || ki->params[P_K].kind != TILE_PARAM_TMA || ki->params[P_K].box[0] != BWD_KB)
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s has no TMA parameter k with a KV block of %d rows",
                          ki->name, BWD_KB);
  if (ki->cluster[0] != (s->pair ? 2 : 1))
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s runs in clusters of %d CTAs; the plan's backward wants "
                                               "%s", ki->name, ki->cluster[0],
                          s->pair ? "the CTA pair's (clusters of 2: jfa_bwd.d128.VARIANT.pair)" : "one CTA's");
  const char *dyn = tile_kernel_const(ki, "DYN");
  s->dyn = dyn && !strcmp(dyn, "true");
  if (s->dyn && (det || s->pair))
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s takes its items by a counter (DYN = true), which the "
                                               "%s backward does not", ki->name, det ? "deterministic" : "CTA pair's");
  if (s->own && !s->dyn)
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s writes its dQ blocks by owner (OWN) but does not "
                                               "take its items by a counter (DYN)", ki->name);
  if (ki->nparams < NPARAMS_BWD || ki->params[P_DK_T].kind != TILE_PARAM_TMA ||
      ki->params[P_DV_T].kind != TILE_PARAM_TMA)
    return tile_set_error(TILE_ERR_BAD_MODULE, "jfa: kernel %s is older than this library: it has no TMA "
                                               "parameters dk_t, dv_t (parameters %d and %d); rebuild it",
                          ki->name, P_DK_T, P_DV_T);

  s->ctas = plan->ctas;
  int held = 0; /* the pair kernel: no more pairs than the device holds at once */
  if (s->pair && tile_kernel_max_clusters(s->k, &held) == TILE_OK) s->ctas = jfa_pair_ctas(s->ctas, held);
  if (det && plan->ctas > lib->sm_count)
    return tile_set_error(TILE_ERR_INVALID, "jfa: the deterministic backward needs every CTA resident at once "
                                            "(its items wait for each other across CTAs): num_ctas %d is more than "
                                            "the %d SMs", plan->ctas, lib->sm_count);
  return TILE_OK;
}

tile_status jfa_bwd_plan_fill(jfa_plan *plan, int *same) {
  const jfa_params *p = &plan->p;
  struct jfa_bwd_state *s = plan->bwd;
  int64_t B = p->batch, H = p->heads, D = p->head_dim, T = plan->total, NQ = p->num_q;
  int bcast = NQ > 0, det = p->deterministic != 0 && !s->det_fin;
  jfa_params pf = *p; /* deterministic by FIN: the items and workspace of the kernel that runs */
  pf.deterministic = det;
  *same = 0;
  s->q_rows = bcast ? NQ : T;
  s->o_rows = bcast ? B * NQ : T;
  s->it.qb = s->qb;
  s->it.group = s->group;
  s->it.own = s->own;
  tile_status st = jfa_bwd_items_rebuild(&pf, s->ctas, s->pair, s->dyn, &s->it);
  if (st != TILE_OK) return st;
  const jfa_bwd_items *it = &s->it;
  if (B > 0 && it->sched.reused) return *same = 1, TILE_OK;
  s->nitems = it->nitems;
  s->nqb = it->nqb;
  s->ws_rows = it->ws_rows;
  s->acc_stride = s->qb == 80 ? it->ws_rows * 80 : 0;
  /* deterministic: the dQ blocks' counters; DYN: the item counter (OWN: then a flag per dQ block) */
  s->nsem = det ? H * it->nqb : s->dyn ? 1 + (s->own ? s->ws_rows : 0) : 0;
  s->max_cta_cost = it->sched.max_cta_cost;
  s->total_cost = it->sched.total_cost;
  jfa_stage *sg = &plan->stage;
  if (it->nitems > 0) {
    jfa_stage_copy(sg, &s->d_work, it->work, (size_t)it->nitems * 32);
    jfa_stage_copy(sg, &s->d_cta_start, it->cta_start ? it->cta_start : it->sched.cta_start,
                   (size_t)((s->pair ? s->ctas / 2 : s->ctas) + 1) * 4);
  }
  if (it->qbmap) jfa_stage_copy(sg, &s->d_qbmap, it->qbmap, (size_t)it->nqb * 8);
  /* the workspace (broadcast-Q over no sequences: dq is still num_q rows,
   * all zero, the accumulator converted) */
  int64_t blocks = bcast ? H * it->nqb : s->ws_rows; /* by block: broadcast-Q's sequences share theirs */
  jfa_stage_copy(sg, &s->d_dq_acc, NULL,
                 (size_t)jfa_bwd_acc_floats(s->q_rows, blocks, H, D, s->qb, s->bulk && B > 0) * 4);
  if (B > 0) {
    jfa_stage_copy(sg, &s->d_lse2, NULL, (size_t)(s->ws_rows * jfa_bwd_lw(s->qb)) * 4);
    jfa_stage_copy(sg, &s->d_delta, NULL, (size_t)(s->ws_rows * jfa_bwd_lw(s->qb)) * 4);
    if (s->nsem) jfa_stage_copy(sg, &s->d_sem, NULL, (size_t)s->nsem * 4);
  }
  return TILE_OK;
}

tile_status jfa_bwd_workspace_bytes(const jfa_params *p, size_t *bytes) {
  if (!bytes) return tile_set_error(TILE_ERR_INVALID, "jfa_bwd_workspace_bytes: bytes is NULL");
  *bytes = 0;
  int64_t T;
  tile_status st = jfa_check_params(p, &T);
  if (st != TILE_OK) return st;
  if (p->heads > JFA_BWD_MAX_HEADS) /* whether or not p->passes asks for the backward */
    return tile_set_error(TILE_ERR_INVALID, "jfa: heads %d: the backward pass runs one grid row per head, at most %d",
                          p->heads, JFA_BWD_MAX_HEADS);
  /* checked: rows < 2^31, heads x head_dim < 2^30, B <= 10^7, so every
   * product below is < 2^63 */
  int64_t B = p->batch, H = p->heads, D = p->head_dim, NQ = p->num_q;
  int bcast = NQ > 0;
  int64_t q_rows = bcast ? NQ : T;
  /* query blocks of 64 rows, or (self-attention at head dim 128, the
   * kernel's QB) 80 with a transposed accumulator: the larger of the two */
  size_t most = 0;
  static const int qbs[2] = {BWD_QB, 80};
  for (int k = 0; k < 2; k++) {
    int qb = qbs[k];
    if (qb == 80 && (bcast || D != 128)) break;
    int64_t nqb = 0;
    if (bcast) nqb = (NQ + qb - 1) / qb;
    else
      for (int64_t b = 0; b < B; b++) nqb += (jfa_offset_at(p, b + 1) - jfa_offset_at(p, b) + qb - 1) / qb;
    int64_t ws_rows = (bcast ? B * H : H) * nqb; /* B = 0: none (broadcast-Q then keeps only the accumulator) */
    int64_t blocks = bcast ? H * nqb : ws_rows;
    size_t acc = (size_t)jfa_bwd_acc_floats(q_rows, blocks, H, D, qb, 0) * 4,
           blk = (size_t)jfa_bwd_acc_floats(q_rows, blocks, H, D, qb, 1) * 4;
    if (blk > acc) acc = blk; /* 64-row blocks by block (DQ_BULK) */
    size_t total = acc + 2 * (size_t)(ws_rows * jfa_bwd_lw(qb)) * 4 +
                   (bcast ? 0 : (size_t)nqb * 8);
    /* the dQ blocks' counters, or the items' counter (and OWN's flags, one a dQ block) */
    size_t flags = 4 + (bcast ? 0 : (size_t)ws_rows * 4), counters = (size_t)(H * nqb) * 4;
    total += p->deterministic && counters > flags ? counters : flags; /* (deterministic mode may run FIN's kernel) */
    if (total > most) most = total;
  }
  *bytes = most;
  return TILE_OK;
}

void jfa_plan_bwd_stats(const jfa_plan *plan, int64_t *nitems, int64_t *max_cta_cost, int64_t *total_cost, int *ctas) {
  const struct jfa_bwd_state *s = plan ? plan->bwd : NULL;
  if (nitems) *nitems = s ? s->nitems : 0;
  if (max_cta_cost) *max_cta_cost = s ? s->max_cta_cost : 0;
  if (total_cost) *total_cost = s ? s->total_cost : 0;
  if (ctas) *ctas = s ? s->ctas : plan ? plan->ctas : 0;
}

tile_status jfa_check_bwd_tensors(const jfa_params *p, int64_t total_rows, const jfa_tensor *dout,
                                  const jfa_tensor *q, const jfa_tensor *k, const jfa_tensor *v, const jfa_tensor *o,
                                  const jfa_tensor *lse, const jfa_tensor *dq, const jfa_tensor *dk,
                                  const jfa_tensor *dv) {
  tile_status st = jfa_check_fwd_shapes(p, total_rows, q, k, v, o, lse);
  if (st != TILE_OK) return st;
  int64_t H = p->heads, D = p->head_dim, T = total_rows, B = p->batch, NQ = p->num_q;
  int bcast = NQ > 0;
  int64_t qs[3] = {bcast ? NQ : T, H, D}, kvs[3] = {T, H, D}, os[4] = {B, NQ, H, D};
  if (bcast) {
    if ((st = jfa_check_tensor("dout", dout, "bf16", 4, os, JFA_TMA)) != TILE_OK) return st;
    if (dout->shape[0] > 1 && dout->stride[0] != NQ * dout->stride[1]) /* both checked: < 2^30 x 2^31 */
      return tile_set_error(TILE_ERR_INVALID, "jfa: dout's batch stride must be num_q x its row stride");
  } else if ((st = jfa_check_tensor("dout", dout, "bf16", 3, qs, JFA_TMA)) != TILE_OK) {
    return st;
  }
  if ((st = jfa_check_tensor("dq", dq, "bf16", 3, qs, JFA_TMA)) != TILE_OK) return st;
  if ((st = jfa_check_tensor("dk", dk, "bf16", 3, kvs, JFA_TMA)) != TILE_OK) return st;
  if ((st = jfa_check_tensor("dv", dv, "bf16", 3, kvs, JFA_TMA)) != TILE_OK) return st;
  /* the outputs are written while the inputs are read: no byte in common */
  const jfa_tensor *all[] = {dq, dk, dv, dout, q, k, v, o, lse};
  static const char *const names[] = {"dq", "dk", "dv", "dout", "q", "k", "v", "o", "lse"};
  return jfa_check_disjoint(all, names, 9, 3);
}

static tile_status desc(tile_tma_desc *dsc, const tile_kernel *k, int param, tile_devptr base, int64_t rows,
                        int64_t cols, int64_t stride) {
  return tile_tma_desc_2d(dsc, k, param, base, (uint64_t)rows, (uint64_t)cols, (uint64_t)stride);
}

static tile_status bwd_run(jfa_plan *plan, const jfa_tensor *dout, const jfa_tensor *q, const jfa_tensor *k,
                           const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse, const jfa_tensor *dq,
                           const jfa_tensor *dk, const jfa_tensor *dv, tile_stream stream);

tile_status jfa_plan_backward(jfa_plan *plan, const jfa_tensor *dout, const jfa_tensor *q, const jfa_tensor *k,
                              const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse, const jfa_tensor *dq,
                              const jfa_tensor *dk, const jfa_tensor *dv, tile_stream stream) {
  if (!plan) return tile_set_error(TILE_ERR_INVALID, "jfa_plan_backward: plan is NULL");
  struct jfa_bwd_state *s = plan->bwd;
  if (!s)
    return tile_set_error(TILE_ERR_INVALID, "jfa_plan_backward: the plan was made without the backward pass "
                                            "(jfa_params.passes: add JFA_BWD)");
  const jfa_params *p = &plan->p;
  int64_t T = plan->total;
  if (plan->failed != TILE_OK)
    return tile_set_error(TILE_ERR_INVALID, "jfa_plan_backward: the plan's last update failed (%s); update it "
                                            "again or destroy it", tile_status_name(plan->failed));
  tile_status st = jfa_check_bwd_tensors(p, T, dout, q, k, v, o, lse, dq, dk, dv);
  if (st != TILE_OK) return st;
  if (s->q_rows == 0) return TILE_OK; /* nothing to compute */
  if ((st = jfa_stage_before_run(&plan->stage, stream)) != TILE_OK) return st;
  st = bwd_run(plan, dout, q, k, v, o, lse, dq, dk, dv, stream);
  tile_status st2 = jfa_stage_after_run(&plan->stage, stream);
  return st != TILE_OK ? st : st2;
}

/* The three launches of jfa_plan_backward (checked). */
static tile_status bwd_run(jfa_plan *plan, const jfa_tensor *dout, const jfa_tensor *q, const jfa_tensor *k,
                           const jfa_tensor *v, const jfa_tensor *o, const jfa_tensor *lse, const jfa_tensor *dq,
                           const jfa_tensor *dk, const jfa_tensor *dv, tile_stream stream) {
  struct jfa_bwd_state *s = plan->bwd;
  const jfa_params *p = &plan->p;
  int64_t H = p->heads, D = p->head_dim, T = plan->total, NQ = p->num_q;
  int bcast = NQ > 0;
  tile_status st;

  float scale = p->softmax_scale > 0 ? p->softmax_scale : (float)(1.0 / sqrt((double)D));
  float scale_log2 = scale * 1.4426950408889634f;
  int32_t heads = (int32_t)H, nq = (int32_t)NQ, total = (int32_t)T, nqb = (int32_t)s->nqb;
  int32_t q_rows = (int32_t)s->q_rows, acc_stride = (int32_t)s->acc_stride;
  int64_t LW = jfa_bwd_lw(s->qb);
  int32_t o_stride = (int32_t)(bcast ? o->stride[1] : o->stride[0]);
  int32_t do_stride = (int32_t)(bcast ? dout->stride[1] : dout->stride[0]);
  tile_devptr od = o->data, dod = dout->data, ld = lse->data;

  /* 1. Delta = rowsum(dO * O), LSE in log2 units, dQ accumulator = 0: one
   * program per query block (broadcast-Q: per sequence and query block) */
  int64_t groups = bcast ? p->batch * s->nqb : s->nqb;
  /* the accumulator's layout (jfa_bwd_pre.tile): by block (broadcast-Q: blocks shared), but with no query
   * blocks (broadcast-Q over no sequences) row-major, zeroed below and converted */
  /* + 8 x GROUP: the blocks of a sequence of at most GROUP KV blocks are written first, not zeroed */
  /* + 2048: OWN, every block is written first */
  int32_t layout = (s->bulk && groups > 0 ? 1 + bcast + 2 * s->dqt : 0) + 8 * (s->dyn ? s->group : 0) +
                   (s->own && groups > 0 ? 2048 : 0);
  void *pre_args[] = {&od, &dod, &ld, &s->d_lse2.p, &s->d_delta.p, &s->d_dq_acc.p, &plan->d_offsets.p, &s->d_qbmap.p,
                      &nqb, &heads, &nq, &total, &o_stride, &do_stride, &acc_stride, &layout};
  if (groups > 0 && (st = tile_launch(s->pre, (unsigned)groups, (unsigned)H, 1, pre_args, 16, stream)) != TILE_OK)
    return st;
  if (groups == 0 && (st = tile_memset_d32_async(s->d_dq_acc.p, 0, (size_t)(s->q_rows * H * D), stream)) != TILE_OK)
    return st; /* broadcast-Q over no sequences: dq = 0 */
  if (s->nsem && (st = tile_memset_d32_async(s->d_sem.p, 0, (size_t)s->nsem, stream)) != TILE_OK) return st;

  /* 2. the backward kernel, over the KV blocks */
  if (s->nitems > 0) {
    tile_tma_desc dq_, dk_, dv_, ddo, dl2, ddl, dacc, dkt, dvt;
    uint64_t cols = (uint64_t)(H * D);
    if ((st = desc(&dq_, s->k, P_Q, q->data, s->q_rows, (int64_t)cols, q->stride[0])) != TILE_OK ||
        (st = desc(&dk_, s->k, P_K, k->data, T, (int64_t)cols, k->stride[0])) != TILE_OK ||
        (st = desc(&dv_, s->k, P_V, v->data, T, (int64_t)cols, v->stride[0])) != TILE_OK ||
        (st = desc(&ddo, s->k, P_DO, dout->data, s->o_rows, (int64_t)cols, do_stride)) != TILE_OK ||
        (st = desc(&dl2, s->k, P_LSE2, s->d_lse2.p, s->ws_rows, LW, LW)) != TILE_OK ||
        (st = desc(&ddl, s->k, P_DELTA, s->d_delta.p, s->ws_rows, LW, LW)) != TILE_OK ||
        (st = s->qb == 80 ? desc(&dacc, s->k, P_DQ_ACC, s->d_dq_acc.p, D, s->acc_stride, s->acc_stride)
                          : desc(&dacc, s->k, P_DQ_ACC, s->d_dq_acc.p, s->q_rows, (int64_t)cols, (int64_t)cols)) !=
            TILE_OK ||
        (st = desc(&dkt, s->k, P_DK_T, dk->data, T, (int64_t)cols, dk->stride[0])) != TILE_OK ||
        (st = desc(&dvt, s->k, P_DV_T, dv->data, T, (int64_t)cols, dv->stride[0])) != TILE_OK)
      return st;
    tile_devptr dkd = dk->data, dvd = dv->data;
    int32_t dk_stride = (int32_t)dk->stride[0], dv_stride = (int32_t)dv->stride[0];
    tile_devptr dqo = dq->data;
    int32_t dqo_stride = (int32_t)dq->stride[0];
    void *args[] = {&dq_, &dk_, &dv_, &ddo, &dl2, &ddl, &dacc, &dkd, &dvd, &plan->d_offsets.p, &s->d_work.p,
                    &s->d_cta_start.p, &s->d_sem.p, &s->d_dq_acc.p, &heads, &nq, &dk_stride, &dv_stride, &scale_log2,
                    &scale, &plan->d_vparams, &dkt, &dvt, &dqo, &dqo_stride, &plan->bwd_timeline};
    unsigned grid = (unsigned)(s->pair ? s->ctas / 2 * 2 : s->ctas); /* a CTA per work list, or a pair */
    int np = tile_kernel_get_info(s->k)->nparams; /* (+ dqo, dqo_stride; + tl: Hopper's, since the timeline) */
    int nargs = np == P_TL + 1 && tile_kernel_get_info(s->k)->params[P_TL].kind == TILE_PARAM_PTR ? P_TL + 1
                : np == NPARAMS_BWD + 2 ? NPARAMS_BWD + 2 : NPARAMS_BWD;
    if ((st = tile_launch(s->k, grid, 1, 1, args, nargs, stream)) != TILE_OK) return st;
  }

  /* 3. dQ = scale * the accumulator, in bf16 */
  tile_devptr dqd = dq->data;
  int32_t dq_stride = (int32_t)dq->stride[0];
  int32_t post_layout = layout + (s->fused && s->dyn ? 1024 : 0); /* + 1024: GROUP's blocks are dQ already (FP) */
  if (s->unowned && groups > 0) post_layout += 4096; /* + 4096: a block whose flag is 0 is zeros (OWN, block skips) */
  void *post_args[] = {&s->d_dq_acc.p, &dqd, &q_rows, &heads, &dq_stride, &scale, &acc_stride, &plan->d_offsets.p,
                       &s->d_qbmap.p, &post_layout, &s->d_sem.p};
  int post_nargs = tile_kernel_get_info(s->post)->nparams >= 11 ? 11 : 10; /* (sem: a build with ZEROS) */
  unsigned post_grid = (unsigned)(s->qb == 80 || layout % 8 ? s->nqb : (s->q_rows + 63) / 64); /* by block: one a block */
  if (s->fused && s->dyn && s->it.ungrouped == 0) post_grid = 0; /* every sequence grouped: dQ is all written (FP) */
  if (s->fin) post_grid = 0; /* every block's first KV block wrote its dQ (FIN; OWN is on every sequence) */
  return post_grid ? tile_launch(s->post, post_grid, (unsigned)H, 1, post_args, post_nargs, stream) : TILE_OK;
}

/* ptx_async.c - the parser's part for Hopper's asynchronous instructions
 * (issue 16): mbarrier, cp.async.bulk(.tensor), cp.reduce.async.bulk.tensor,
 * wgmma, stmatrix/ldmatrix, setmaxnreg. Every modifier word of such an
 * opcode must be one this file knows; anything else (multicast, im2col,
 * cache hints, other shapes and types) leaves the instruction
 * EM_UNSUPPORTED, for exec to name if a kernel reaches it. ptx_op.c calls
 * em_ptx_async_opcode before its generic decoding, and ptx.c
 * em_ptx_async_operands once the operands are read.
 */
#include <string.h>

#include "emu.h"

static bool weq(const char *s, int n, const char *w) { return (size_t)n == strlen(w) && !memcmp(s, w, (size_t)n); }

enum { MAXW = 16 };

/* The opcode's dot-separated words (shared::cta stays one word). */
static int words(const char *s, int len, const char *w[MAXW], int wl[MAXW]) {
  int n = 0;
  for (int i = 0; i <= len && n < MAXW;) {
    int j = i;
    while (j < len && s[j] != '.') j++;
    w[n] = s + i, wl[n++] = j - i;
    i = j + 1;
  }
  return n;
}

static bool is_shared(const char *s, int n) {
  return weq(s, n, "shared") || weq(s, n, "shared::cta") || weq(s, n, "shared::cluster");
}

/* mbarrier.OP{.sem}{.scope}{.space}.b64 */
static bool mbarrier(const char **w, const int *wl, int n, EmIns *in) {
  int i = 1;
  if (n < 3) return false;
  if (weq(w[i], wl[i], "init")) in->opc = EM_MBAR_INIT;
  else if (weq(w[i], wl[i], "arrive")) in->opc = EM_MBAR_ARRIVE;
  else if (weq(w[i], wl[i], "expect_tx")) in->opc = EM_MBAR_EXPECT_TX;
  else if (weq(w[i], wl[i], "try_wait")) in->opc = EM_MBAR_WAIT;
  else if (weq(w[i], wl[i], "test_wait")) in->opc = EM_MBAR_WAIT, in->mod |= EMM_TEST;
  else return false; /* arrive_drop, complete_tx, inval, pending_count */
  bool b64 = false;
  for (i = 2; i < n; i++) {
    const char *s = w[i];
    int k = wl[i];
    if (in->opc == EM_MBAR_ARRIVE && weq(s, k, "expect_tx") && i == 2) in->mod |= EMM_EXPECT_TX;
    else if (in->opc == EM_MBAR_WAIT && weq(s, k, "parity") && i == 2) in->mod |= EMM_PARITY;
    else if (weq(s, k, "release") || weq(s, k, "acquire") || weq(s, k, "relaxed") || weq(s, k, "cta") ||
             weq(s, k, "cluster")) continue; /* ordering: sequentially consistent here */
    else if (is_shared(s, k)) in->space = ES_SHARED;
    else if (weq(s, k, "b64") && i == n - 1) b64 = true;
    else return false;
  }
  return b64;
}

/* cp.async.{ca,cg}.shared{::cta}.global{.L2::cache_hint}{.L2::64B|128B|256B}, cp.async.commit_group,
 * cp.async.wait_group, cp.async.wait_all (Ampere's non-bulk copy; the cache words are hints) */
static bool cp_nonbulk(const char **w, const int *wl, int n, EmIns *in) {
  if (n == 3 && weq(w[2], wl[2], "commit_group")) return in->opc = EM_CPA_COMMIT, true;
  if (n == 3 && weq(w[2], wl[2], "wait_group")) return in->opc = EM_CPA_WAIT, true;
  if (n == 3 && weq(w[2], wl[2], "wait_all")) return in->opc = EM_CPA_WAIT, in->mod |= EMM_ALL, true;
  if (n < 5 || !(weq(w[2], wl[2], "ca") || weq(w[2], wl[2], "cg"))) return false; /* cp.async.mbarrier.arrive */
  if (weq(w[2], wl[2], "cg")) in->mod |= EMM_CG;
  if (!weq(w[3], wl[3], "shared") && !weq(w[3], wl[3], "shared::cta")) return false;
  if (!weq(w[4], wl[4], "global")) return false;
  bool prefetch = false;
  for (int i = 5; i < n; i++) {
    if (weq(w[i], wl[i], "L2::cache_hint") && !(in->mod & EMM_HINT)) in->mod |= EMM_HINT;
    else if ((weq(w[i], wl[i], "L2::64B") || weq(w[i], wl[i], "L2::128B") || weq(w[i], wl[i], "L2::256B")) && !prefetch)
      prefetch = true;
    else return false;
  }
  in->opc = EM_CPA;
  in->space = ES_SHARED;
  return true;
}

/* cp.async.bulk.tensor.Nd.DST.SRC[.tile].COMPLETION, cp.reduce.async.bulk.tensor.Nd.DST.SRC.OP[.tile].bulk_group,
 * cp.async.bulk.commit_group, cp.async.bulk.wait_group[.read],
 * cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes */
static bool cp(const char **w, const int *wl, int n, EmIns *in) {
  static const struct { const char *w; uint8_t sub; } reds[] = {
      {"add", ESB_ADD}, {"min", ESB_MIN}, {"max", ESB_MAX}, {"inc", ESB_INC}, {"dec", ESB_DEC},
      {"and", ESB_AND}, {"or", ESB_OR}, {"xor", ESB_XOR}};
  bool red = n > 1 && weq(w[1], wl[1], "reduce");
  int i = red ? 2 : 1;
  if (!red && n > 2 && weq(w[1], wl[1], "async") && !weq(w[2], wl[2], "bulk")) return cp_nonbulk(w, wl, n, in);
  if (n < i + 2 || !weq(w[i], wl[i], "async") || !weq(w[i + 1], wl[i + 1], "bulk")) return false;
  i += 2;
  if (!red && n == i + 1 && weq(w[i], wl[i], "commit_group")) return in->opc = EM_BULK_COMMIT, true;
  if (!red && i < n && weq(w[i], wl[i], "wait_group")) {
    in->opc = EM_BULK_WAIT;
    if (n == i + 2 && weq(w[i + 1], wl[i + 1], "read")) in->mod |= EMM_READ;
    return n == i + 1 || (in->mod & EMM_READ);
  }
  if (red && n >= i + 5 && weq(w[i], wl[i], "global") && weq(w[i + 1], wl[i + 1], "shared::cta") &&
      weq(w[i + 2], wl[i + 2], "bulk_group")) { /* the non-tensor reduce into global memory: add of floats */
    i += 3;
    if (!weq(w[i], wl[i], "add")) return false;
    i++;
    if (i < n && weq(w[i], wl[i], "noftz")) i++;
    if (n != i + 1) return false;
    /* the element type in type2 (type would make the executor treat it as 16-bit arithmetic) */
    in->type2 = weq(w[i], wl[i], "f32") ? ET_F32 : weq(w[i], wl[i], "f16") ? ET_F16 : weq(w[i], wl[i], "bf16") ? ET_BF16 : 0;
    if (!in->type2 || (in->type2 == ET_F32) == weq(w[i - 1], wl[i - 1], "noftz")) return false; /* .noftz: f16, bf16 */
    in->red = ESB_ADD;
    return in->opc = EM_BULK_RED, in->space = ES_SHARED, true;
  }
  if (!red && n == i + 3 && weq(w[i], wl[i], "global") && weq(w[i + 1], wl[i + 1], "shared::cta") &&
      weq(w[i + 2], wl[i + 2], "bulk_group")) { /* the non-tensor bulk copy into global memory: bytes, as f32 words */
    in->type2 = ET_F32;
    in->red = 0;
    return in->opc = EM_BULK_RED, in->space = ES_SHARED, true;
  }
  if (!red && n == i + 3 && weq(w[i], wl[i], "shared::cluster") && weq(w[i + 1], wl[i + 1], "shared::cta") &&
      weq(w[i + 2], wl[i + 2], "mbarrier::complete_tx::bytes"))
    return in->opc = EM_BULK_S2C, in->space = ES_SHARED, true;
  if (!red && n == i + 3 && is_shared(w[i], wl[i]) && weq(w[i + 1], wl[i + 1], "global") &&
      weq(w[i + 2], wl[i + 2], "mbarrier::complete_tx::bytes")) /* the non-tensor bulk copy from global memory */
    return in->opc = EM_BULK_G2S, in->space = ES_SHARED, true;
  if (n < i + 4 || !weq(w[i], wl[i], "tensor") || wl[i + 1] != 2 || w[i + 1][1] != 'd' || w[i + 1][0] < '1' ||
      w[i + 1][0] > '5')
    return false; /* the non-tensor bulk copies, prefetch */
  in->rank = (uint8_t)(w[i + 1][0] - '0');
  const char *dst = w[i + 2], *srcw = w[i + 3];
  int dl = wl[i + 2], sl = wl[i + 3];
  bool load = is_shared(dst, dl) && weq(srcw, sl, "global"), store = weq(dst, dl, "global") && weq(srcw, sl, "shared::cta");
  if (!(red ? store : load || store)) return false;
  in->opc = load ? EM_TMA_LOAD : EM_TMA_STORE;
  i += 4;
  if (red) {
    int k = -1;
    for (int j = 0; i < n && j < (int)(sizeof reds / sizeof *reds); j++)
      if (weq(w[i], wl[i], reds[j].w)) k = j;
    if (k < 0) return false;
    in->red = reds[k].sub;
    i++;
  }
  if (i < n && weq(w[i], wl[i], "tile")) i++;
  const char *done = load ? "mbarrier::complete_tx::bytes" : "bulk_group";
  if (!(i < n && weq(w[i], wl[i], done))) return false;
  i++;
  if (load && i < n && weq(w[i], wl[i], "multicast::cluster")) in->mod |= EMM_MCAST, i++;
  if (load && i < n && (weq(w[i], wl[i], "cta_group::1") || weq(w[i], wl[i], "cta_group::2")))
    in->type2 = (uint8_t)(w[i][wl[i] - 1] - '0'), i++;
  return n == i; /* cache hints: not here */
}

/* barrier.cluster.{arrive,wait}{.relaxed (arrive) | .release | .acquire}{.aligned};
 * mapa{.shared::cluster}.{u32,u64} */
static bool cluster_op(const char **w, const int *wl, int n, EmIns *in) {
  if (weq(w[0], wl[0], "mapa")) {
    in->opc = EM_MAPA;
    int i = 1;
    if (i < n && weq(w[i], wl[i], "shared::cluster")) in->space = ES_SHARED, i++;
    if (n != i + 1 || !(weq(w[i], wl[i], "u32") || weq(w[i], wl[i], "u64"))) return false;
    in->type = weq(w[i], wl[i], "u32") ? ET_U32 : ET_U64;
    return true;
  }
  in->opc = EM_CBAR;
  if (n < 3) return false;
  if (weq(w[2], wl[2], "arrive")) in->mod |= EMM_ARRIVE;
  else if (!weq(w[2], wl[2], "wait")) return false;
  for (int i = 3; i < n; i++)
    if (!(weq(w[i], wl[i], "aligned") || weq(w[i], wl[i], "acquire") || weq(w[i], wl[i], "release") ||
          ((in->mod & EMM_ARRIVE) && weq(w[i], wl[i], "relaxed"))))
      return false;
  return true;
}

/* wgmma.fence / commit_group / wait_group / mma_async.sync.aligned.m64nNk16.f32.X.X */
static bool wgmma(const char **w, const int *wl, int n, EmIns *in) {
  if (n != 4 && n != 8) return false;
  if (!weq(w[2], wl[2], "sync") || !weq(w[3], wl[3], "aligned")) return false;
  if (n == 4) {
    if (weq(w[1], wl[1], "fence")) return in->opc = EM_MEMBAR, true; /* orders registers and shared memory */
    if (weq(w[1], wl[1], "commit_group")) return in->opc = EM_WG_COMMIT, true;
    if (weq(w[1], wl[1], "wait_group")) return in->opc = EM_WG_WAIT, true;
    return false;
  }
  if (!weq(w[1], wl[1], "mma_async") || !weq(w[5], wl[5], "f32")) return false;
  const char *sh = w[4];
  int k = wl[4], nn = 0, j = 4;
  if (k < 8 || memcmp(sh, "m64n", 4) || memcmp(sh + k - 3, "k16", 3)) return false;
  for (; j < k - 3; j++) {
    if (sh[j] < '0' || sh[j] > '9' || nn > 256) return false;
    nn = nn * 10 + (sh[j] - '0');
  }
  if (nn < 8 || nn > 256 || nn % 8) return false;
  int ab = weq(w[6], wl[6], "bf16") ? ET_BF16 : weq(w[6], wl[6], "f16") ? ET_F16 : 0;
  if (!ab || wl[6] != wl[7] || memcmp(w[6], w[7], (size_t)wl[6])) return false;
  in->opc = EM_WGMMA;
  in->type = ET_F32;
  in->type2 = (uint8_t)ab;
  in->rank = (uint8_t)(nn / 8);
  return true;
}

/* stmatrix / ldmatrix .sync.aligned.m8n8.xR[.trans][.shared{::cta}].b16 */
static bool matrix(const char **w, const int *wl, int n, EmIns *in, bool st) {
  if (n < 6 || !weq(w[1], wl[1], "sync") || !weq(w[2], wl[2], "aligned") || !weq(w[3], wl[3], "m8n8")) return false;
  if (wl[4] != 2 || w[4][0] != 'x' || (w[4][1] != '1' && w[4][1] != '2' && w[4][1] != '4')) return false;
  in->rank = (uint8_t)(w[4][1] - '0');
  int i = 5;
  if (i < n && weq(w[i], wl[i], "trans")) in->mod |= EMM_TRANS, i++;
  if (i < n && (weq(w[i], wl[i], "shared") || weq(w[i], wl[i], "shared::cta"))) in->space = ES_SHARED, i++;
  if (i != n - 1 || !weq(w[i], wl[i], "b16")) return false;
  in->opc = st ? EM_STMATRIX : EM_LDMATRIX;
  in->type = ET_B16;
  return true;
}

bool em_ptx_async_opcode(const char *s, int len, EmIns *in) {
  const char *w[MAXW];
  int wl[MAXW], n = words(s, len, w, wl);
  bool ok;
  if (weq(w[0], wl[0], "mbarrier")) ok = mbarrier(w, wl, n, in);
  else if (weq(w[0], wl[0], "cp")) ok = cp(w, wl, n, in);
  else if (weq(w[0], wl[0], "wgmma")) ok = wgmma(w, wl, n, in);
  else if (weq(w[0], wl[0], "stmatrix")) ok = matrix(w, wl, n, in, true);
  else if (weq(w[0], wl[0], "ldmatrix")) ok = matrix(w, wl, n, in, false);
  else if (weq(w[0], wl[0], "mapa") || (weq(w[0], wl[0], "barrier") && n > 1 && weq(w[1], wl[1], "cluster")))
    ok = cluster_op(w, wl, n, in);
  else if (weq(w[0], wl[0], "setmaxnreg")) {
    ok = n == 5 && (weq(w[1], wl[1], "inc") || weq(w[1], wl[1], "dec")) && weq(w[2], wl[2], "sync") &&
         weq(w[3], wl[3], "aligned") && weq(w[4], wl[4], "u32");
    in->opc = EM_SETMAXNREG;
    in->sub = n > 1 && weq(w[1], wl[1], "inc") ? ESB_INC : ESB_DEC;
  } else return false;
  if (!ok) in->opc = EM_UNSUPPORTED;
  return true;
}

/* ---- operands ---- */

static bool kind(const EmArg *a, int k) { return a->kind == k; }
static bool value(const EmArg *a) { return a->kind == EA_REG || a->kind == EA_IMM; }
static bool addr(const EmArg *a) { return a->kind == EA_ADDR || a->kind == EA_SYM; }
static bool regs(const EmArg *a, int n) {
  if ((a->kind != EA_VEC && a->kind != EA_LVEC) || a->nvec != n) return false;
  for (int i = 0; i < n; i++)
    if ((a->kind == EA_VEC ? a->vec[i] : a->lv[i]) < 0) return false;
  return true;
}

const char *em_ptx_async_operands(const EmIns *in) {
  const EmArg *a = in->a;
  int n = in->nargs;
  switch ((EmOpc)in->opc) {
  case EM_CBAR:
    return n == 0 ? NULL : "expected no operands";
  case EM_MAPA:
    return n == 3 && kind(&a[0], EA_REG) && (value(&a[1]) || kind(&a[1], EA_SYM)) && value(&a[2]) ? NULL
           : "expected d, a, rank";
  case EM_MBAR_INIT:
    return n == 2 && addr(&a[0]) && value(&a[1]) ? NULL : "expected [mbarrier], count";
  case EM_MBAR_ARRIVE:
    if (in->mod & EMM_EXPECT_TX)
      return n == 3 && (kind(&a[0], EA_REG) || kind(&a[0], EA_SINK)) && addr(&a[1]) && value(&a[2]) ? NULL
             : "expected state, [mbarrier], tx-count";
    return (n == 2 || (n == 3 && value(&a[2]))) && (kind(&a[0], EA_REG) || kind(&a[0], EA_SINK)) && addr(&a[1])
           ? NULL : "expected state, [mbarrier] [, count]";
  case EM_MBAR_EXPECT_TX:
    return n == 2 && addr(&a[0]) && value(&a[1]) ? NULL : "expected [mbarrier], tx-count";
  case EM_MBAR_WAIT:
    return (n == 3 || (n == 4 && value(&a[3]))) && kind(&a[0], EA_REG) && addr(&a[1]) && value(&a[2]) ? NULL
           : "expected p, [mbarrier], parity-or-state [, time hint]";
  case EM_TMA_LOAD:
    if (in->mod & EMM_MCAST)
      return n == 4 && addr(&a[0]) && kind(&a[1], EA_TADDR) && a[1].nvec == in->rank && addr(&a[2]) && value(&a[3])
             ? NULL : "expected [dst], [tensor-map, {coordinates of the tensor's rank}], [mbarrier], cta-mask";
    return n == 3 && addr(&a[0]) && kind(&a[1], EA_TADDR) && a[1].nvec == in->rank && addr(&a[2]) ? NULL
           : "expected [dst], [tensor-map, {coordinates of the tensor's rank}], [mbarrier]";
  case EM_TMA_STORE:
    return n == 2 && kind(&a[0], EA_TADDR) && a[0].nvec == in->rank && addr(&a[1]) ? NULL
           : "expected [tensor-map, {coordinates of the tensor's rank}], [src]";
  case EM_BULK_COMMIT:
  case EM_WG_COMMIT:
    return n == 0 ? NULL : "expected no operands";
  case EM_BULK_RED:
    return n == 3 && addr(&a[0]) && addr(&a[1]) && value(&a[2]) ? NULL : "expected [dst], [src], size";
  case EM_BULK_S2C:
  case EM_BULK_G2S:
    return n == 4 && addr(&a[0]) && addr(&a[1]) && value(&a[2]) && addr(&a[3]) ? NULL
           : "expected [dst], [src], size, [mbarrier]";
  case EM_BULK_WAIT:
  case EM_WG_WAIT:
  case EM_SETMAXNREG:
    return n == 1 && kind(&a[0], EA_IMM) && !a[0].fimm ? NULL : "expected an integer constant";
  case EM_CPA_COMMIT:
    return n == 0 ? NULL : "expected no operands";
  case EM_CPA_WAIT:
    if (in->mod & EMM_ALL) return n == 0 ? NULL : "expected no operands";
    return n == 1 && kind(&a[0], EA_IMM) && !a[0].fimm ? NULL : "expected an integer constant";
  case EM_CPA: {
    /* [dst], [src], cp-size {, src-size | , ignore-src} {, cache-policy (with .L2::cache_hint)} */
    int extra = n - 3 - ((in->mod & EMM_HINT) ? 1 : 0);
    if (n < 3 || !addr(&a[0]) || !addr(&a[1]) || !kind(&a[2], EA_IMM) || a[2].fimm || extra < 0 || extra > 1 ||
        (extra && !value(&a[3])) || ((in->mod & EMM_HINT) && !kind(&a[n - 1], EA_REG)))
      return "expected [dst], [src], cp-size {, src-size | , ignore-src} {, cache-policy with .L2::cache_hint}";
    if (a[2].imm != 4 && a[2].imm != 8 && a[2].imm != 16) return "cp-size must be 4, 8 or 16";
    if ((in->mod & EMM_CG) && a[2].imm != 16) return "cp.async.cg copies 16 bytes (cp-size 16)";
    return NULL;
  }
  case EM_STMATRIX:
    return n == 2 && addr(&a[0]) && regs(&a[1], in->rank) ? NULL : "expected [address], {one register a matrix}";
  case EM_LDMATRIX:
    return n == 2 && regs(&a[0], in->rank) && addr(&a[1]) ? NULL : "expected {one register a matrix}, [address]";
  case EM_WGMMA: {
    bool rs = a[1].kind == EA_VEC;
    if (n != (rs ? 7 : 8) || !regs(&a[0], in->rank * 4) || (rs ? !regs(&a[1], 4) : !kind(&a[1], EA_REG)) ||
        !kind(&a[2], EA_REG) || !value(&a[3]))
      return "expected {N/2 accumulators}, a-desc or {a0, a1, a2, a3}, b-desc, scale-d, and the immediates";
    for (int i = 4; i < n; i++)
      if (!kind(&a[i], EA_IMM) || a[i].fimm) return "expected imm-scale-a, imm-scale-b[, imm-trans-a], imm-trans-b";
    return NULL;
  }
  default:
    return NULL;
  }
}

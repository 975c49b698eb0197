/* ptx_tc.c - the parser's part for Blackwell's tcgen05 instructions
 * (issues 16 and 18). ptx_op.c hands it every opcode whose root is
 * `tcgen05`; each modifier word must be one this file knows, anything else
 * (.ws, .sp, other kinds, block scaling, the 16x32bx2 shape, pack/unpack,
 * tcgen05.cp and .shift) leaves the instruction EM_UNSUPPORTED, for exec to
 * name if a kernel reaches it. .cta_group::2 (a CTA pair, tmem.c and
 * tcgen05_pair.c) sets EMM_TC_PAIR; a commit's .multicast::cluster sets
 * EMM_MCAST and takes a CTA mask after the mbarrier.
 *
 * Forms (PTX ISA 9.7.16; each assembled by ptxas for sm_100a in
 * tests/unit/test_emu_tcgen05.c):
 *   tcgen05.alloc.cta_group::{1,2}.sync.aligned[.shared::cta].b32 [dst], ncols;
 *   tcgen05.dealloc.cta_group::{1,2}.sync.aligned.b32 taddr, ncols;
 *   tcgen05.relinquish_alloc_permit.cta_group::{1,2}.sync.aligned;
 *   tcgen05.mma.cta_group::{1,2}.kind::f16[.collector::a::{discard,fill,use,lastuse}]
 *       [d], a-desc | [a-tmem], b-desc, idesc,
 *       [{disable-output-lane x4},] enable-input-d [, scale-input-d];
 *   tcgen05.commit.cta_group::{1,2}.mbarrier::arrive::one[.shared::cluster][.multicast::cluster].b64
 *       [mbar] [, ctaMask];
 *   tcgen05.ld.sync.aligned.SHAPE.xN.b32 {r..}, [taddr];
 *   tcgen05.st.sync.aligned.SHAPE.xN.b32 [taddr], {r..};   SHAPE 32x32b 16x64b 16x128b 16x256b
 *   tcgen05.wait::ld.sync.aligned;  tcgen05.wait::st.sync.aligned;
 *   tcgen05.fence::before_thread_sync;  tcgen05.fence::after_thread_sync;
 */
#include <string.h>

#include "tcgen05.h"

static bool weq(const char *s, int n, const char *w) { return (size_t)n == strlen(w) && !memcmp(s, w, (size_t)n); }

enum { MAXW = 12 };

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

/* w[i..] are exactly the given words */
static bool rest(const char **w, const int *wl, int n, int i, const char *const *want) {
  for (; *want; want++, i++)
    if (i >= n || !weq(w[i], wl[i], *want)) return false;
  return i == n;
}

/* SHAPE.xN[.b32]: the shape, and log2(.num) in type2 */
static bool ldst_shape(const char **w, const int *wl, int n, EmIns *in) {
  static const char *const shapes[] = {NULL, "32x32b", "16x64b", "16x128b", "16x256b"};
  if (n != 7) return false; /* tcgen05.OP.sync.aligned.SHAPE.xN.b32 (pack/unpack: not here) */
  int s = 0;
  for (int k = 1; k <= 4; k++)
    if (weq(w[4], wl[4], shapes[k])) s = k;
  if (!s || wl[5] < 2 || wl[5] > 4 || w[5][0] != 'x' || !weq(w[6], wl[6], "b32")) return false;
  int num = 0;
  for (int i = 1; i < wl[5]; i++) {
    if (w[5][i] < '0' || w[5][i] > '9') return false;
    num = num * 10 + (w[5][i] - '0');
  }
  if (!em_tc_ldst_regs(s, num)) return false;
  int lg = 0;
  while ((1 << lg) < num) lg++;
  in->rank = (uint8_t)s;
  in->type2 = (uint8_t)lg;
  in->type = ET_B32;
  return true;
}

/* .cta_group::2 is read as ::1 with EMM_TC_PAIR set, so the forms below name ::1 only */
static void pair_word(const char **w, int *wl, int n, EmIns *in) {
  if (n > 2 && weq(w[2], wl[2], "cta_group::2")) w[2] = "cta_group::1", in->mod |= EMM_TC_PAIR;
}

bool em_ptx_tc_opcode(const char *s, int len, EmIns *in) {
  const char *w[MAXW];
  int wl[MAXW], n = words(s, len, w, wl);
  static const char *const alloc_w[] = {"cta_group::1", "sync", "aligned", "shared::cta", "b32", NULL};
  static const char *const dealloc_w[] = {"cta_group::1", "sync", "aligned", "b32", NULL};
  static const char *const relinq_w[] = {"cta_group::1", "sync", "aligned", NULL};
  static const char *const sync_w[] = {"sync", "aligned", NULL};
  static const char *const none_w[] = {NULL};
  bool ok = false;
  if (n < 2 || !weq(w[0], wl[0], "tcgen05")) return false;
  const char *op = w[1];
  int ol = wl[1];
  in->opc = EM_UNSUPPORTED;
  if (!weq(op, ol, "ld") && !weq(op, ol, "st")) pair_word(w, wl, n, in);
  if (weq(op, ol, "alloc")) { /* [dst] in shared memory (.shared::cta), else a generic address */
    ok = rest(w, wl, n, 2, alloc_w) || rest(w, wl, n, 2, dealloc_w);
    in->opc = EM_TC_ALLOC;
    in->space = n == 7 ? ES_SHARED : ES_GENERIC;
  }
  else if (weq(op, ol, "dealloc")) ok = rest(w, wl, n, 2, dealloc_w), in->opc = EM_TC_DEALLOC;
  else if (weq(op, ol, "relinquish_alloc_permit")) ok = rest(w, wl, n, 2, relinq_w), in->opc = EM_TC_RELINQUISH;
  else if (weq(op, ol, "mma")) {
    /* tcgen05.mma.cta_group::1.kind::f16[.collector::a::OP] (.ws, .sp, block scaling: not here) */
    static const char *const coll[] = {"collector::a::discard", "collector::a::fill", "collector::a::use",
                                       "collector::a::lastuse"};
    ok = (n == 4 || n == 5) && weq(w[2], wl[2], "cta_group::1") && weq(w[3], wl[3], "kind::f16");
    if (ok && n == 5) {
      ok = false;
      for (int k = 0; k < 4; k++)
        if (weq(w[4], wl[4], coll[k])) ok = true, in->type2 = (uint8_t)k;
    }
    in->opc = EM_TC_MMA;
  } else if (weq(op, ol, "commit")) {
    int i = 4;
    ok = n >= 5 && weq(w[2], wl[2], "cta_group::1") && weq(w[3], wl[3], "mbarrier::arrive::one");
    if (ok && i < n && (weq(w[i], wl[i], "shared::cluster") || weq(w[i], wl[i], "shared::cta"))) in->space = ES_SHARED, i++;
    if (ok && i < n && weq(w[i], wl[i], "multicast::cluster")) in->mod |= EMM_MCAST, i++;
    ok = ok && i == n - 1 && weq(w[i], wl[i], "b64");
    in->opc = EM_TC_COMMIT;
  } else if (weq(op, ol, "ld") || weq(op, ol, "st")) {
    ok = n > 3 && rest(w, wl, 4, 2, sync_w) && ldst_shape(w, wl, n, in);
    in->opc = op[0] == 'l' ? EM_TC_LD : EM_TC_ST;
  } else if (weq(op, ol, "wait::ld") || weq(op, ol, "wait::st")) {
    ok = rest(w, wl, n, 2, sync_w);
    in->opc = EM_TC_WAIT;
    in->rank = op[6] == 's';
  } else if (weq(op, ol, "fence::before_thread_sync") || weq(op, ol, "fence::after_thread_sync")) {
    ok = rest(w, wl, n, 2, none_w);
    in->opc = EM_TC_FENCE;
    in->rank = op[7] == 'a';
  } /* cp, shift: not here */
  if (!ok) in->opc = EM_UNSUPPORTED;
  return true;
}

/* ---- operands ---- */

static bool value(const EmArg *a) { return a->kind == EA_REG || a->kind == EA_IMM; }
static bool addr(const EmArg *a) { return a->kind == EA_ADDR || a->kind == EA_SYM; }
static bool regs(const EmArg *a, int n) {
  if ((a->kind != EA_VEC && a->kind != EA_LVEC) || a->nvec != n) return false;
  for (int i = 0; i < n; i++)
    if ((a->kind == EA_VEC ? a->vec[i] : a->lv[i]) < 0) return false;
  return true;
}

const char *em_ptx_tc_operands(EmIns *in) {
  const EmArg *a = in->a;
  int n = in->nargs;
  switch ((EmOpc)in->opc) {
  case EM_TC_ALLOC:
    return n == 2 && addr(&a[0]) && value(&a[1]) ? NULL : "expected [destination in shared memory], ncols";
  case EM_TC_DEALLOC:
    return n == 2 && a[0].kind == EA_REG && value(&a[1]) ? NULL : "expected taddr, ncols";
  case EM_TC_RELINQUISH:
  case EM_TC_WAIT:
  case EM_TC_FENCE:
    return n == 0 ? NULL : "expected no operands";
  case EM_TC_COMMIT:
    if (in->mod & EMM_MCAST) return n == 2 && addr(&a[0]) && value(&a[1]) ? NULL : "expected [mbarrier], ctaMask";
    return n == 1 && addr(&a[0]) ? NULL : "expected [mbarrier]";
  case EM_TC_LD:
  case EM_TC_ST: {
    int k = em_tc_ldst_regs(in->rank, 1 << in->type2);
    const EmArg *v = &a[in->opc == EM_TC_LD ? 0 : 1], *t = &a[in->opc == EM_TC_LD ? 1 : 0];
    if (n == 2 && regs(v, k) && t->kind == EA_ADDR && t->reg >= 0) return NULL;
    return in->opc == EM_TC_LD ? "expected {registers, as many as the shape and .num give}, [taddr]"
                               : "expected [taddr], {registers, as many as the shape and .num give}";
  }
  case EM_TC_MMA: {
    static const char *const want =
        "expected [d-tmem], a-desc or [a-tmem], b-desc, idesc, [{disable-output-lane},] enable-input-d [, scale-input-d]";
    if (n < 5 || n > 7 || !(a[0].kind == EA_ADDR && a[0].reg >= 0) ||
        !(a[1].kind == EA_REG || (a[1].kind == EA_ADDR && a[1].reg >= 0)) || a[2].kind != EA_REG || !value(&a[3]))
      return want;
    int i = 4;
    if (a[i].kind == EA_VEC) {
      if (!regs(&a[i], in->mod & EMM_TC_PAIR ? 8 : 4))
        return in->mod & EMM_TC_PAIR ? "expected a disable-output-lane vector of 8 registers (cta_group::2)"
                                     : "expected a disable-output-lane vector of 4 registers (cta_group::1)";
      in->mod |= EMM_TC_MASK, i++;
    }
    if (i >= n || a[i].kind != EA_REG) return want;
    i++;
    if (i < n) {
      if (a[i].kind != EA_IMM || a[i].fimm) return "expected scale-input-d, an integer constant";
      in->mod |= EMM_TC_SCALE, i++;
    }
    if (i != n) return want;
    in->rank = a[1].kind == EA_ADDR;
    return NULL;
  }
  default:
    return NULL;
  }
}

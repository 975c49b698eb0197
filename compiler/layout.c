/* layout.c - distributed layouts of register tiles.
 *
 * A named layout says how a tile's elements are spread over the registers,
 * lanes and warps of a CTA, independent of the tile's shape:
 *   blocked(spt, tpw, wpc, order)  each thread owns spt contiguous elements,
 *                                   tpw threads per warp, wpc warps per CTA
 *   mma(version, wm, wn)           the accumulator of mma.sync (v2) / wgmma (v3)
 *   dot(opidx, mma, kbits)         an A (0) or B (1) operand fragment
 *   slice(dim, parent)             parent with dimension `dim` removed
 *                                  (what a reduction along `dim` leaves)
 * ly_linear() turns a named layout and a power-of-two shape into a linear
 * layout: for every register bit, lane bit and warp bit, the coordinate it
 * adds (XOR) to an element's position.  A zero basis means replication.
 * All lowering (arange, reductions, broadcasts, conversions, dot) works on
 * linear layouts, so every layout combination is handled by one code path. */
#include "tilec_int.h"
#include <string.h>

static int ilog2(int x) {
  int r = 0;
  while ((1 << r) < x) r++;
  return r;
}

static Layout *new_layout(Ctx *c, LayoutKind k, int rank) {
  Layout *l = ar_alloc(&c->arena, sizeof *l);
  l->kind = k;
  l->rank = rank;
  return l;
}

const Layout *ly_blocked(Ctx *c, int rank, const int *spt, const int *tpw, const int *wpc, const int *order) {
  Layout *l = new_layout(c, LY_BLOCKED, rank);
  for (int i = 0; i < rank; i++) {
    l->spt[i] = spt[i];
    l->tpw[i] = tpw[i];
    l->wpc[i] = wpc[i];
    l->order[i] = order[i];
  }
  return l;
}

/* The default layout for a tile: each thread owns up to 16 contiguous bytes
 * along the last dimension, lanes fill the fast dimensions first, warps the
 * slow ones first (so row reductions stay inside a warp when they can). */
/* A blocked layout for a tile: each thread owns `vec` contiguous elements
 * along order[0], lanes fill the fast dimensions first, warps the slow ones
 * first (so row reductions stay inside a warp when they can). */
const Layout *ly_blocked_for(Ctx *c, int rank, const int *shape, int warps, int vec, const int *order) {
  int spt[TC_MAX_RANK] = {1, 1, 1, 1}, tpw[TC_MAX_RANK] = {1, 1, 1, 1}, wpc[TC_MAX_RANK] = {1, 1, 1, 1};
  int fast = order[0];
  if (vec > shape[fast]) vec = shape[fast];
  if (vec < 1) vec = 1;
  spt[fast] = vec;
  int lanes = 32;
  for (int i = 0; i < rank && lanes > 1; i++) {
    int d = order[i];
    int room = shape[d] / (spt[d] * tpw[d]);
    if (room < 1) room = 1;
    int t = room < lanes ? room : lanes;
    tpw[d] *= t;
    lanes /= t;
  }
  tpw[order[rank - 1]] *= lanes; /* leftover lanes replicate on the slowest dim */
  int w = warps;
  for (int i = rank - 1; i >= 0 && w > 1; i--) {
    int d = order[i];
    int room = shape[d] / (spt[d] * tpw[d]);
    if (room < 1) room = 1;
    int t = room < w ? room : w;
    wpc[d] *= t;
    w /= t;
  }
  wpc[order[rank - 1]] *= w;
  return ly_blocked(c, rank, spt, tpw, wpc, order);
}

/* The default layout: up to 16 bytes per thread along the last dimension,
 * fewer when the tile is too small to give every thread that much. */
const Layout *ly_default(Ctx *c, int rank, const int *shape, int warps, int elem_bytes) {
  int order[TC_MAX_RANK];
  int64_t numel = 1;
  for (int i = 0; i < rank; i++) {
    numel *= shape[i];
    order[i] = rank - 1 - i;
  }
  int vec = elem_bytes >= 16 ? 1 : 16 / (elem_bytes ? elem_bytes : 4);
  int64_t per_thread = numel / (32 * warps);
  if (per_thread < 1) per_thread = 1;
  if (vec > per_thread) vec = (int)per_thread;
  return ly_blocked_for(c, rank, shape, warps, vec, order);
}

const Layout *ly_mma(Ctx *c, int version, int wm, int wn, int instr_n) {
  Layout *l = new_layout(c, LY_MMA, 2);
  l->version = version;
  l->wm = wm;
  l->wn = wn;
  l->instr_n = instr_n;
  return l;
}

const Layout *ly_mma_wide(Ctx *c, const Layout *mma, int cols) {
  Layout *l = new_layout(c, LY_MMA, 2);
  *l = *mma;
  l->cols = cols;
  return l;
}

const Layout *ly_dotop(Ctx *c, int opidx, const Layout *parent, int kbits) {
  Layout *l = new_layout(c, LY_DOTOP, 2);
  l->opidx = opidx;
  l->parent = parent;
  l->kbits = kbits;
  return l;
}

const Layout *ly_slice(Ctx *c, int dim, const Layout *parent) {
  Layout *l = new_layout(c, LY_SLICE, parent->rank - 1);
  l->dim = dim;
  l->parent = parent;
  return l;
}

/* ---- linearization ---- */

typedef struct LB {
  LinLayout *l;
  int bits[TC_MAX_RANK]; /* log2 of each dimension */
  bool ok;
  const char *why;
} LB;

static void put(LB *b, int kind, int dim, int val) {
  int coord[TC_MAX_RANK] = {0};
  if (dim >= 0 && val < b->l->shape[dim]) coord[dim] = val;
  LinLayout *l = b->l;
  int(*dst)[TC_MAX_RANK];
  int *n, cap;
  if (kind == 0) {
    dst = l->reg;
    n = &l->nreg;
    cap = 20;
    if (dim < 0 || val >= l->shape[dim]) return; /* no duplicate registers */
  } else if (kind == 1) {
    dst = l->lane;
    n = &l->nlane;
    cap = 5;
  } else {
    dst = l->warp;
    n = &l->nwarp;
    cap = 6;
  }
  if (*n >= cap) {
    b->ok = false;
    b->why = "too many bits";
    return;
  }
  memcpy(dst[*n], coord, sizeof coord);
  (*n)++;
}

static void lin_blocked(LB *b, const Layout *L, int warps) {
  int r = L->rank;
  int s[TC_MAX_RANK], t[TC_MAX_RANK], w[TC_MAX_RANK];
  for (int i = 0; i < r; i++) {
    s[i] = ilog2(L->spt[i]);
    t[i] = ilog2(L->tpw[i]);
    w[i] = ilog2(L->wpc[i]);
  }
  int tl = 0, tw = 0;
  for (int i = 0; i < r; i++) {
    tl += t[i];
    tw += w[i];
  }
  if (tl != 5) {
    b->ok = false;
    b->why = "threads per warp must multiply to 32";
    return;
  }
  if ((1 << tw) != warps) {
    b->ok = false;
    b->why = "warps per CTA must multiply to the kernel's warp count";
    return;
  }
  for (int i = 0; i < r; i++) {
    int d = L->order[i];
    for (int j = 0; j < s[d]; j++) put(b, 0, d, 1 << j);
  }
  for (int i = 0; i < r; i++) {
    int d = L->order[i];
    for (int j = 0; j < t[d]; j++) put(b, 1, d, 1 << (s[d] + j));
  }
  for (int i = 0; i < r; i++) {
    int d = L->order[i];
    for (int j = 0; j < w[d]; j++) put(b, 2, d, 1 << (s[d] + t[d] + j));
  }
  for (int i = 0; i < r; i++) {
    int d = L->order[i];
    for (int j = s[d] + t[d] + w[d]; j < b->bits[d]; j++) put(b, 0, d, 1 << j);
  }
}

/* Warp bits of an mma layout and its operands: the low log2(wm) bits walk M
 * (16 rows each), the next log2(wn) bits walk N (instr_n columns each); the
 * operand that does not depend on a direction replicates over it. */
static void mma_warps(LB *b, const Layout *M, int mdim, int ndim, int warps, int instr_n) {
  int wmb = ilog2(M->wm), wnb = ilog2(M->wn);
  for (int j = 0; j < wmb; j++) put(b, 2, mdim, mdim >= 0 ? 16 << j : 0);
  for (int j = 0; j < wnb; j++) put(b, 2, ndim, ndim >= 0 ? instr_n << j : 0);
  for (int j = wmb + wnb; (1 << j) < warps; j++) put(b, 2, -1, 0);
}

/* A wide mma layout (cols = 4 or 8): lane bits 0 (column 2) and, for 8,
 * 1 (column 4) trade places with the first register bits along the
 * columns (column 8 * wn, 16 * wn), and the registers are reordered so
 * that a thread's first log2(cols) bits are columns 1, 2, 4: cols
 * consecutive elements, one 8- or 16-byte access for 16-bit elements.
 * The rows (register bit 1, lanes 2-4) and the warps stay; so does a
 * slice along the columns (the parent of a row vector, one column). */
static void mma_widen(LB *b, int cols) {
  LinLayout *l = b->l;
  if (l->shape[1] == 1) return; /* a slice along the columns: their lanes replicate either way */
  int nswap = cols == 8 ? 2 : 1;
  int ncol = 0, colreg[2] = {-1, -1};
  for (int k = 1; k < l->nreg && ncol < nswap; k++)
    if (l->reg[k][1] && !l->reg[k][0]) colreg[ncol++] = k;
  bool fits = ncol == nswap && l->nreg > 0 && l->reg[0][1] == 1 && !l->reg[0][0];
  for (int j = 0; j < nswap; j++) fits = fits && l->lane[j][1] == 2 << j && !l->lane[j][0];
  if (!fits) {
    b->ok = false;
    b->why = "too few columns for a wide mma layout";
    return;
  }
  int reg[20][TC_MAX_RANK], n = 0;
  memcpy(reg[n++], l->reg[0], sizeof reg[0]); /* column 1 */
  for (int j = 0; j < nswap; j++) memcpy(reg[n++], l->lane[j], sizeof reg[0]); /* columns 2, 4 */
  for (int k = 1; k < l->nreg; k++)
    if (k != colreg[0] && k != colreg[1]) memcpy(reg[n++], l->reg[k], sizeof reg[0]);
  for (int j = 0; j < nswap; j++) memcpy(l->lane[j], l->reg[colreg[j]], sizeof reg[0]);
  memcpy(l->reg, reg, sizeof reg[0] * (size_t)n);
}

static void lin_mma(LB *b, const Layout *L, int warps) {
  if (L->version != 2) {
    b->ok = false;
    b->why = "wgmma layouts are lowered in issue 2";
    return;
  }
  /* m16n8 f32 accumulator: c0,c1 at (lane/4, 2*(lane%4)+{0,1}), c2,c3 eight rows down. */
  put(b, 0, 1, 1);
  put(b, 0, 0, 8);
  put(b, 1, 1, 2);
  put(b, 1, 1, 4);
  put(b, 1, 0, 1);
  put(b, 1, 0, 2);
  put(b, 1, 0, 4);
  mma_warps(b, L, 0, 1, warps, 8);
  for (int v = 8 * L->wn; v < b->l->shape[1]; v *= 2) put(b, 0, 1, v);
  for (int v = 16 * L->wm; v < b->l->shape[0]; v *= 2) put(b, 0, 0, v);
  if (b->ok && L->cols > 2) mma_widen(b, L->cols);
}

static void lin_dotop(LB *b, const Layout *L, int warps) {
  const Layout *M = L->parent;
  if (M->kind != LY_MMA || M->version != 2) {
    b->ok = false;
    b->why = "dot operand layouts need an mma.sync parent";
    return;
  }
  int kdim = L->opidx == 0 ? 1 : 0, odim = L->opidx == 0 ? 0 : 1;
  int instr_k;
  if (L->kbits == 16) {
    instr_k = 16;
    put(b, 0, kdim, 1);
    if (L->opidx == 0) put(b, 0, odim, 8);
    put(b, 0, kdim, 8);
    put(b, 1, kdim, 2);
    put(b, 1, kdim, 4);
  } else if (L->kbits == 32) {
    instr_k = 8;
    if (L->opidx == 0) put(b, 0, odim, 8);
    put(b, 0, kdim, 4);
    put(b, 1, kdim, 1);
    put(b, 1, kdim, 2);
  } else {
    b->ok = false;
    b->why = "dot operands must be 16- or 32-bit floats";
    return;
  }
  put(b, 1, odim, 1);
  put(b, 1, odim, 2);
  put(b, 1, odim, 4);
  if (L->opidx == 0) mma_warps(b, M, 0, -1, warps, 8);
  else mma_warps(b, M, -1, 1, warps, 8);
  for (int v = instr_k; v < b->l->shape[kdim]; v *= 2) put(b, 0, kdim, v);
  int ostep = L->opidx == 0 ? 16 * M->wm : 8 * M->wn;
  for (int v = ostep; v < b->l->shape[odim]; v *= 2) put(b, 0, odim, v);
}

bool ly_linear(const Layout *L, int rank, const int *shape, int warps, LinLayout *out, const char **why) {
  memset(out, 0, sizeof *out);
  out->rank = rank;
  for (int i = 0; i < rank; i++) {
    out->shape[i] = shape[i];
    if (shape[i] <= 0 || (shape[i] & (shape[i] - 1))) {
      if (why) *why = "tile dimensions must be powers of two";
      return false;
    }
  }
  if (L->kind == LY_SLICE) {
    int pshape[TC_MAX_RANK + 1];
    if (rank + 1 > TC_MAX_RANK) {
      if (why) *why = "rank too large";
      return false;
    }
    for (int i = 0, j = 0; i < rank + 1; i++) pshape[i] = i == L->dim ? 1 : shape[j++];
    LinLayout p;
    if (!ly_linear(L->parent, rank + 1, pshape, warps, &p, why)) return false;
    int drop = L->dim;
#define DROP(arr, n, isreg)                                                       \
  for (int i = 0; i < p.n; i++) {                                                 \
    int cc[TC_MAX_RANK] = {0}, nz = 0;                                            \
    for (int d = 0, e = 0; d < rank + 1; d++)                                     \
      if (d != drop) {                                                            \
        cc[e] = p.arr[i][d];                                                      \
        nz |= cc[e++];                                                            \
      }                                                                           \
    if (isreg && !nz) continue;                                                   \
    memcpy(out->arr[out->n], cc, sizeof cc);                                      \
    out->n++;                                                                     \
  }
    DROP(reg, nreg, 1)
    DROP(lane, nlane, 0)
    DROP(warp, nwarp, 0)
#undef DROP
    return true;
  }
  if (L->rank != rank) {
    if (why) *why = "layout rank differs from the tile's";
    return false;
  }
  LB b = {.l = out, .ok = true};
  for (int i = 0; i < rank; i++) b.bits[i] = ilog2(shape[i]);
  switch (L->kind) {
  case LY_BLOCKED: lin_blocked(&b, L, warps); break;
  case LY_MMA: lin_mma(&b, L, warps); break;
  case LY_DOTOP: lin_dotop(&b, L, warps); break;
  default: b.ok = false; b.why = "bad layout";
  }
  if (b.ok && (1 << out->nwarp) != warps) {
    b.ok = false;
    b.why = "layout does not match the kernel's warp count";
  }
  if (!b.ok && why) *why = b.why;
  return b.ok;
}

bool ly_lin_eq(const LinLayout *a, const LinLayout *b) {
  if (a->rank != b->rank || a->nreg != b->nreg || a->nlane != b->nlane || a->nwarp != b->nwarp) return false;
  size_t row = sizeof(int) * TC_MAX_RANK;
  for (int i = 0; i < a->nreg; i++)
    if (memcmp(a->reg[i], b->reg[i], row)) return false;
  for (int i = 0; i < a->nlane; i++)
    if (memcmp(a->lane[i], b->lane[i], row)) return false;
  for (int i = 0; i < a->nwarp; i++)
    if (memcmp(a->warp[i], b->warp[i], row)) return false;
  return true;
}

bool ly_same(const Layout *a, const Layout *b, int rank, const int *shape, int warps) {
  if (a == b) return true;
  LinLayout la, lb;
  if (!ly_linear(a, rank, shape, warps, &la, NULL) || !ly_linear(b, rank, shape, warps, &lb, NULL)) return false;
  return ly_lin_eq(&la, &lb);
}

int ly_nregs(const LinLayout *l) { return 1 << l->nreg; }

void ly_reg_coord(const LinLayout *l, int r, int *coord) {
  for (int d = 0; d < TC_MAX_RANK; d++) coord[d] = 0;
  for (int i = 0; i < l->nreg; i++)
    if (r >> i & 1)
      for (int d = 0; d < l->rank; d++) coord[d] ^= l->reg[i][d];
}

/* Flatten a coordinate into one bit vector (dimension 0 in the low bits). */
static uint32_t flat(const LinLayout *l, const int *c) {
  uint32_t v = 0;
  int off = 0;
  for (int d = 0; d < l->rank; d++) {
    v |= (uint32_t)c[d] << off;
    off += ilog2(l->shape[d]);
  }
  return v;
}

int ly_solve_reg(const LinLayout *l, const int *coord) {
  /* Gaussian elimination over GF(2): rows are (basis vector, which regs). */
  uint32_t vec[20], comb[20];
  int n = l->nreg;
  for (int i = 0; i < n; i++) {
    vec[i] = flat(l, l->reg[i]);
    comb[i] = 1u << i;
  }
  uint32_t target = flat(l, coord), acc = 0;
  for (int bit = 31; bit >= 0; bit--) {
    int piv = -1;
    for (int i = 0; i < n; i++)
      if (vec[i] >> bit & 1) {
        piv = i;
        break;
      }
    if (piv < 0) continue;
    uint32_t pv = vec[piv], pc = comb[piv];
    vec[piv] = vec[n - 1];
    comb[piv] = comb[n - 1];
    n--;
    for (int i = 0; i < n; i++)
      if (vec[i] >> bit & 1) {
        vec[i] ^= pv;
        comb[i] ^= pc;
      }
    if (target >> bit & 1) {
      target ^= pv;
      acc ^= pc;
    }
  }
  return target ? -1 : (int)acc;
}

static void arr_str(Buf *b, const int *v, int n) {
  buf_puts(b, "[");
  for (int i = 0; i < n; i++) buf_printf(b, i ? ",%d" : "%d", v[i]);
  buf_puts(b, "]");
}

static void lstr(Buf *b, const Layout *l) {
  switch (l->kind) {
  case LY_BLOCKED:
    buf_puts(b, "#blocked<spt=");
    arr_str(b, l->spt, l->rank);
    buf_puts(b, ", tpw=");
    arr_str(b, l->tpw, l->rank);
    buf_puts(b, ", wpc=");
    arr_str(b, l->wpc, l->rank);
    buf_puts(b, ", order=");
    arr_str(b, l->order, l->rank);
    buf_puts(b, ">");
    break;
  case LY_MMA:
    buf_printf(b, "#mma<v%d, warps=[%d,%d]", l->version, l->wm, l->wn);
    if (l->cols > 2) buf_printf(b, ", cols=%d", l->cols);
    buf_puts(b, ">");
    break;
  case LY_DOTOP:
    buf_printf(b, "#dot<%s, ", l->opidx == 0 ? "a" : "b");
    lstr(b, l->parent);
    buf_puts(b, ">");
    break;
  case LY_SLICE:
    buf_printf(b, "#slice<dim=%d, ", l->dim);
    lstr(b, l->parent);
    buf_puts(b, ">");
    break;
  }
}

char *ly_str(Ctx *c, const Layout *l) {
  Buf b = {0};
  lstr(&b, l);
  char *s = ar_strdup(&c->arena, b.data ? b.data : "");
  buf_free(&b);
  return s;
}

const Layout *ly_transpose(Ctx *c, const Layout *l) {
  if (l->kind != LY_BLOCKED || l->rank != 2) return NULL;
  int spt[2] = {l->spt[1], l->spt[0]}, tpw[2] = {l->tpw[1], l->tpw[0]}, wpc[2] = {l->wpc[1], l->wpc[0]};
  int order[2] = {1 - l->order[0], 1 - l->order[1]};
  return ly_blocked(c, 2, spt, tpw, wpc, order);
}

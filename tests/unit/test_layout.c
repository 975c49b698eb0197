/* test_layout.c - unit tests for compiler/layout.c: the linear layouts that
 * ly_default / ly_blocked_for / ly_mma / ly_dotop / ly_slice / ly_transpose
 * produce, checked against properties that every layout must have and
 * against the PTX ISA fragment tables of mma.sync.
 *
 * Coordinates are computed here from the LinLayout bases (XOR of the bases
 * of the set input bits), independently of the lowering code. */
#include "testutil.h"
#include "tilec_int.h"

/* For a test of a compiler bug not fixed yet (commented "KNOWN BUG: ..."):
 * cmocka's skip(), unless TILE_TEST_KNOWN_BUGS=1 asks to run it. */
#define KNOWN_BUG(why)                                                   \
  do {                                                                   \
    if (!getenv("TILE_TEST_KNOWN_BUGS")) {                               \
      print_message("[ KNOWN BUG ] %s\n", why);                          \
      skip();                                                            \
    }                                                                    \
  } while (0)

/* ---- context ----------------------------------------------------------- */

static Ctx *new_ctx(void) {
  Ctx *c = calloc(1, sizeof *c);
  ar_init(&c->arena);
  tilec_options_init(&c->opts);
  c->opts.max_errors = 20;
  c->sm = 90;
  c->arch = "sm_90a";
  return c;
}

static void free_ctx(Ctx *c) {
  buf_free(&c->diags);
  ar_free(&c->arena);
  free(c);
}

static int setup(void **state) {
  *state = new_ctx();
  return 0;
}

static int teardown(void **state) {
  free_ctx(*state);
  return 0;
}

/* ---- coordinate helpers ----------------------------------------------- */

static int lg(int x) {
  int r = 0;
  while ((1 << r) < x) r++;
  return r;
}

static int total_bits(const LinLayout *l) {
  int b = 0;
  for (int d = 0; d < l->rank; d++) b += lg(l->shape[d]);
  return b;
}

/* Flatten a coordinate: dimension 0 in the low bits. */
static uint32_t flat(const LinLayout *l, const int *c) {
  uint32_t v = 0;
  int off = 0;
  for (int d = 0; d < l->rank; d++) {
    v |= (uint32_t)c[d] << off;
    off += lg(l->shape[d]);
  }
  return v;
}

/* Coordinate of the element held in register r of lane `lane` of warp w. */
static void coord_of(const LinLayout *l, int r, int lane, int w, int *c) {
  for (int d = 0; d < TC_MAX_RANK; d++) c[d] = 0;
  for (int i = 0; i < l->nreg; i++)
    if (r >> i & 1)
      for (int d = 0; d < l->rank; d++) c[d] ^= l->reg[i][d];
  for (int i = 0; i < l->nlane; i++)
    if (lane >> i & 1)
      for (int d = 0; d < l->rank; d++) c[d] ^= l->lane[i][d];
  for (int i = 0; i < l->nwarp; i++)
    if (w >> i & 1)
      for (int d = 0; d < l->rank; d++) c[d] ^= l->warp[i][d];
}

/* Rank over GF(2) of a set of bit vectors. */
static int gf2_rank(uint32_t *v, int n) {
  int rank = 0;
  for (int bit = 31; bit >= 0; bit--) {
    int piv = -1;
    for (int i = rank; i < n; i++)
      if (v[i] >> bit & 1) {
        piv = i;
        break;
      }
    if (piv < 0) continue;
    uint32_t t = v[piv];
    v[piv] = v[rank];
    v[rank] = t;
    for (int i = 0; i < n; i++)
      if (i != rank && (v[i] >> bit & 1)) v[i] ^= t;
    rank++;
  }
  return rank;
}

static char cfg[256]; /* the configuration being checked, for messages */

#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond)) {                                                        \
      print_error("%s: ", cfg);                                           \
      print_error(__VA_ARGS__);                                           \
      print_error("\n");                                                  \
      fail();                                                             \
    }                                                                     \
  } while (0)

/* Every basis stays inside the tile, and the register count is sane. */
static void check_bounds(const LinLayout *l) {
  CHECK(l->nreg <= 20 && l->nlane <= 5 && l->nwarp <= 6, "too many bits");
  for (int d = 0; d < l->rank; d++) {
    for (int i = 0; i < l->nreg; i++) CHECK(l->reg[i][d] >= 0 && l->reg[i][d] < l->shape[d], "reg basis out of tile");
    for (int i = 0; i < l->nlane; i++)
      CHECK(l->lane[i][d] >= 0 && l->lane[i][d] < l->shape[d], "lane basis out of tile");
    for (int i = 0; i < l->nwarp; i++)
      CHECK(l->warp[i][d] >= 0 && l->warp[i][d] < l->shape[d], "warp basis out of tile");
  }
}

/* Surjectivity by linear algebra: all bases together span the tile. */
static void check_span(const LinLayout *l) {
  uint32_t v[40];
  int n = 0;
  for (int i = 0; i < l->nreg; i++) v[n++] = flat(l, l->reg[i]);
  for (int i = 0; i < l->nlane; i++) v[n++] = flat(l, l->lane[i]);
  for (int i = 0; i < l->nwarp; i++) v[n++] = flat(l, l->warp[i]);
  CHECK(gf2_rank(v, n) == total_bits(l), "bases do not span the tile (rank < %d bits)", total_bits(l));
}

/* Surjectivity by enumeration (small tiles): every element is held by some
 * (reg, lane, warp); returns how many elements are held more than once. */
static long check_cover(const LinLayout *l, int warps) {
  int nb = total_bits(l);
  size_t numel = (size_t)1 << nb;
  unsigned char *seen = calloc(numel, 1);
  long dup = 0;
  int nregs = 1 << l->nreg;
  for (int w = 0; w < warps; w++)
    for (int lane = 0; lane < 32; lane++)
      for (int r = 0; r < nregs; r++) {
        int c[TC_MAX_RANK];
        coord_of(l, r, lane, w, c);
        for (int d = 0; d < l->rank; d++) CHECK(c[d] >= 0 && c[d] < l->shape[d], "coordinate out of tile");
        uint32_t f = flat(l, c);
        if (seen[f]) dup++;
        seen[f] = 1;
      }
  for (size_t i = 0; i < numel; i++)
    if (!seen[i]) {
      free(seen);
      CHECK(0, "element %zu is held by no thread", i);
    }
  free(seen);
  return dup;
}

/* Register bases: nonzero, independent, and ly_solve_reg inverts them. */
static void check_regs(const LinLayout *l) {
  uint32_t v[20];
  for (int i = 0; i < l->nreg; i++) {
    v[i] = flat(l, l->reg[i]);
    CHECK(v[i] != 0, "register basis %d is zero", i);
  }
  CHECK(gf2_rank(v, l->nreg) == l->nreg, "register bases are linearly dependent");
  int nregs = ly_nregs(l);
  CHECK(nregs == 1 << l->nreg, "ly_nregs");
  /* every single basis, then every register of small layouts */
  for (int i = 0; i < l->nreg; i++) {
    int c[TC_MAX_RANK];
    ly_reg_coord(l, 1 << i, c);
    for (int d = 0; d < l->rank; d++) CHECK(c[d] == l->reg[i][d], "ly_reg_coord of basis %d", i);
    CHECK(ly_solve_reg(l, c) == 1 << i, "ly_solve_reg of basis %d", i);
  }
  int lim = nregs < 1024 ? nregs : 1024;
  for (int r = 0; r < lim; r++) {
    int c[TC_MAX_RANK], c2[TC_MAX_RANK];
    ly_reg_coord(l, r, c);
    coord_of(l, r, 0, 0, c2);
    for (int d = 0; d < l->rank; d++) CHECK(c[d] == c2[d], "ly_reg_coord(%d) disagrees with the bases", r);
    CHECK(ly_solve_reg(l, c) == r, "ly_solve_reg does not find register %d back", r);
  }
}

/* A coordinate no register holds (reached only through lanes/warps) must not
 * be "solved" to a register. */
static void check_solve_rejects(const LinLayout *l) {
  for (int i = 0; i < l->nlane; i++) {
    uint32_t f = flat(l, l->lane[i]);
    if (!f) continue;
    /* is this lane basis in the span of the registers? */
    uint32_t v[21];
    for (int k = 0; k < l->nreg; k++) v[k] = flat(l, l->reg[k]);
    int r0 = gf2_rank(v, l->nreg);
    for (int k = 0; k < l->nreg; k++) v[k] = flat(l, l->reg[k]);
    v[l->nreg] = f;
    int r1 = gf2_rank(v, l->nreg + 1);
    if (r1 > r0) CHECK(ly_solve_reg(l, l->lane[i]) == -1, "ly_solve_reg found a lane-only coordinate");
  }
}

static void full_check(const LinLayout *l, int warps, bool expect_bijective) {
  check_bounds(l);
  check_span(l);
  check_regs(l);
  check_solve_rejects(l);
  int bits = l->nreg + l->nlane + l->nwarp;
  CHECK(bits >= total_bits(l), "fewer input bits than tile bits");
  if (total_bits(l) <= 14) {
    long dup = check_cover(l, warps);
    if (expect_bijective) CHECK(dup == 0, "%ld elements held twice in a layout without replication", dup);
  } else if (expect_bijective) {
    /* rank == bits and span => bijection; count the zero lane/warp bases */
    int zero = 0;
    for (int i = 0; i < l->nlane; i++) zero += flat(l, l->lane[i]) == 0;
    for (int i = 0; i < l->nwarp; i++) zero += flat(l, l->warp[i]) == 0;
    CHECK(zero == 0 && bits == total_bits(l), "replication in a layout that needs none");
  }
}

/* ---- blocked layouts --------------------------------------------------- */

static void test_default_rank1(void **state) {
  Ctx *c = *state;
  int nconf = 0;
  /* 1..8 warps, and the 16 and 32 that kernels may also ask for */
  for (int warps = 1; warps <= 32; warps *= 2)
    for (int eb = 1; eb <= 8; eb *= 2)
      for (int n = 1; n <= 4096; n *= 2) {
        snprintf(cfg, sizeof cfg, "ly_default rank1 shape=[%d] warps=%d elem_bytes=%d", n, warps, eb);
        const Layout *L = ly_default(c, 1, (int[]){n}, warps, eb);
        assert_non_null(L);
        CHECK(L->kind == LY_BLOCKED && L->rank == 1, "kind");
        LinLayout lin;
        const char *why = NULL;
        CHECK(ly_linear(L, 1, (int[]){n}, warps, &lin, &why), "ly_linear failed: %s", why ? why : "");
        CHECK(lin.nwarp == lg(warps) && lin.nlane == 5, "lane/warp bit counts %d/%d", lin.nlane, lin.nwarp);
        full_check(&lin, warps, n >= 32 * warps);
        /* 16 bytes per thread when the tile is big enough */
        int want = 16 / eb;
        if (want > n / (32 * warps)) want = n / (32 * warps);
        if (want < 1) want = 1;
        CHECK(L->spt[0] == want, "spt=%d, want %d", L->spt[0], want);
        nconf++;
      }
  assert_int_equal(nconf, 6 * 4 * 13);
}

static void test_default_rank2(void **state) {
  Ctx *c = *state;
  int nconf = 0;
  for (int warps = 1; warps <= 32; warps *= 2)
    for (int eb = 1; eb <= 8; eb *= 2)
      for (int m = 1; m <= 4096; m *= 2)
        for (int n = 1; n <= 4096; n *= 2) {
          int shape[2] = {m, n};
          snprintf(cfg, sizeof cfg, "ly_default shape=[%d,%d] warps=%d elem_bytes=%d", m, n, warps, eb);
          const Layout *L = ly_default(c, 2, shape, warps, eb);
          CHECK(L->kind == LY_BLOCKED && L->rank == 2, "kind");
          CHECK(L->order[0] == 1 && L->order[1] == 0, "default order must be [1,0]");
          CHECK(L->tpw[0] * L->tpw[1] == 32, "tpw product");
          CHECK(L->wpc[0] * L->wpc[1] == warps, "wpc product");
          LinLayout lin;
          const char *why = NULL;
          CHECK(ly_linear(L, 2, shape, warps, &lin, &why), "ly_linear failed: %s", why ? why : "");
          full_check(&lin, warps, (int64_t)m * n >= 32 * warps * L->spt[1]);
          /* lanes fill the fast dimension first, warps the slow one first
           * (a row reduction stays inside a warp when the rows allow it) */
          int room1 = n / L->spt[1] > 0 ? n / L->spt[1] : 1;
          CHECK(L->tpw[1] == (room1 < 32 ? room1 : 32), "tpw[1]=%d, want min(32, %d)", L->tpw[1], room1);
          if (m >= warps * L->tpw[0]) CHECK(L->wpc[1] == 1, "warps split the rows (wpc=[%d,%d])", L->wpc[0], L->wpc[1]);
          /* register 1 is the next element along the contiguous dim */
          if (L->spt[1] > 1) CHECK(lin.reg[0][1] == 1 && lin.reg[0][0] == 0, "reg 1 must step along dim 1");
          nconf++;
        }
  assert_int_equal(nconf, 6 * 4 * 13 * 13);
}

/* ly_blocked_for with every order and several vector widths. */
static void test_blocked_for_orders(void **state) {
  Ctx *c = *state;
  static const int orders[2][2] = {{1, 0}, {0, 1}};
  for (int o = 0; o < 2; o++)
    for (int warps = 1; warps <= 8; warps *= 2)
      for (int vec = 1; vec <= 16; vec *= 2)
        for (int m = 1; m <= 1024; m *= 4)
          for (int n = 1; n <= 1024; n *= 2) {
            int shape[2] = {m, n};
            const int *ord = orders[o];
            snprintf(cfg, sizeof cfg, "ly_blocked_for shape=[%d,%d] warps=%d vec=%d order=[%d,%d]", m, n, warps, vec,
                     ord[0], ord[1]);
            const Layout *L = ly_blocked_for(c, 2, shape, warps, vec, ord);
            CHECK(L->order[0] == ord[0] && L->order[1] == ord[1], "order not kept");
            int fast = ord[0];
            int want = vec < shape[fast] ? vec : shape[fast];
            CHECK(L->spt[fast] == want, "spt along the fast dim is %d, want %d", L->spt[fast], want);
            CHECK(L->spt[1 - fast] == 1, "spt along the slow dim must be 1");
            LinLayout lin;
            const char *why = NULL;
            CHECK(ly_linear(L, 2, shape, warps, &lin, &why), "ly_linear failed: %s", why ? why : "");
            full_check(&lin, warps, (int64_t)m * n >= (int64_t)32 * warps * want);
            /* the first registers walk the fast dimension contiguously */
            for (int i = 0; i < lg(want); i++)
              CHECK(lin.reg[i][fast] == 1 << i && lin.reg[i][1 - fast] == 0, "register %d is not contiguous", i);
          }
}

/* A hand-written blocked layout: exact bases. */
static void test_blocked_exact(void **state) {
  Ctx *c = *state;
  /* spt=[1,4], tpw=[4,8], wpc=[2,1], order=[1,0] on [16,64], 2 warps:
   * regs: (0,1),(0,2) then the repeat (0,32) and rows (8,0) */
  const Layout *L = ly_blocked(c, 2, (int[]){1, 4}, (int[]){4, 8}, (int[]){2, 1}, (int[]){1, 0});
  LinLayout lin;
  assert_true(ly_linear(L, 2, (int[]){16, 64}, 2, &lin, NULL));
  snprintf(cfg, sizeof cfg, "blocked exact");
  assert_int_equal(lin.nreg, 4);
  assert_int_equal(lin.nlane, 5);
  assert_int_equal(lin.nwarp, 1);
  int want_reg[4][2] = {{0, 1}, {0, 2}, {0, 32}, {8, 0}};
  int want_lane[5][2] = {{0, 4}, {0, 8}, {0, 16}, {1, 0}, {2, 0}};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(lin.reg[i][0], want_reg[i][0]);
    assert_int_equal(lin.reg[i][1], want_reg[i][1]);
  }
  for (int i = 0; i < 5; i++) {
    assert_int_equal(lin.lane[i][0], want_lane[i][0]);
    assert_int_equal(lin.lane[i][1], want_lane[i][1]);
  }
  assert_int_equal(lin.warp[0][0], 4);
  assert_int_equal(lin.warp[0][1], 0);
  full_check(&lin, 2, true);
  /* register 5 of lane 13 of warp 1: lane 13 = 0b01101 gives
   * (0,4)^(0,16)^(1,0) = (1,20); warp 1 adds (4,0); register 5 = bits 0 and 2
   * adds (0,1)^(0,32): (5, 53) */
  int co[TC_MAX_RANK];
  coord_of(&lin, 5, 13, 1, co);
  assert_int_equal(co[0], 5);
  assert_int_equal(co[1], 53);
  /* errors */
  const char *why = NULL;
  assert_false(ly_linear(L, 2, (int[]){16, 64}, 4, &lin, &why));
  assert_non_null(why);
  why = NULL;
  assert_false(ly_linear(L, 2, (int[]){16, 48}, 2, &lin, &why));
  assert_non_null(why);
  const Layout *bad = ly_blocked(c, 2, (int[]){1, 1}, (int[]){4, 4}, (int[]){2, 1}, (int[]){1, 0});
  why = NULL;
  assert_false(ly_linear(bad, 2, (int[]){16, 64}, 2, &lin, &why));
  assert_non_null(why);
  assert_non_null(strstr(why, "32"));
}

/* Equal maps are equal layouts; different ones are not. */
static void test_same_and_str(void **state) {
  Ctx *c = *state;
  int shape[2] = {64, 64};
  const Layout *a = ly_default(c, 2, shape, 4, 4);
  const Layout *b = ly_blocked(c, 2, a->spt, a->tpw, a->wpc, a->order);
  assert_true(ly_same(a, b, 2, shape, 4));
  const Layout *t = ly_blocked_for(c, 2, shape, 4, 4, (int[]){0, 1});
  assert_false(ly_same(a, t, 2, shape, 4));
  /* different names, same map: spt larger than the tile is clamped */
  const Layout *x = ly_blocked(c, 1, (int[]){1}, (int[]){32}, (int[]){1}, (int[]){0});
  const Layout *y = ly_blocked(c, 1, (int[]){1}, (int[]){32}, (int[]){1}, (int[]){0});
  assert_true(ly_same(x, y, 1, (int[]){128}, 1));
  char *s = ly_str(c, a);
  assert_non_null(strstr(s, "#blocked<spt=["));
  assert_non_null(strstr(s, "order=[1,0]"));
  const Layout *m = ly_mma(c, 2, 4, 1, 8);
  assert_string_equal(ly_str(c, m), "#mma<v2, warps=[4,1]>");
  assert_string_equal(ly_str(c, ly_dotop(c, 0, m, 16)), "#dot<a, #mma<v2, warps=[4,1]>>");
  assert_string_equal(ly_str(c, ly_dotop(c, 1, m, 16)), "#dot<b, #mma<v2, warps=[4,1]>>");
  assert_string_equal(ly_str(c, ly_slice(c, 1, m)), "#slice<dim=1, #mma<v2, warps=[4,1]>>");
}

/* ---- shared-memory addressing (lower_hw.c) ----------------------------- */

/* smem_load/smem_store compute a thread's offset once and combine each
 * register group's constant with it: XOR for the bits the thread part can
 * set, an add (an immediate offset) for the rest. That is exact only if
 * the offset is linear over GF(2) and the two parts' bits are kept apart;
 * check it element by element against the offset computed from (r, c),
 * and that the view's elements land on distinct bytes inside the view. */
static void check_smem_split(Ctx *c, int dt, int rows, int cols, int swizzle, int brows, const Layout *ly, int warps) {
  snprintf(cfg, sizeof cfg, "smem %s [%d, %d] swizzle %d brows %d", dt == DT_F32 ? "f32" : "bf16", rows, cols, swizzle,
           brows);
  Type t = {0};
  t.kind = TY_SMEM;
  t.elem.dt = (uint8_t)dt;
  t.rank = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.swizzle = swizzle;
  t.brows = brows;
  LinLayout lin;
  const char *why = NULL;
  CHECK(ly_linear(ly, 2, (int[]){rows, cols}, warps, &lin, &why), "ly_linear failed: %s", why ? why : "");
  CHECK(smem_offset_linear(&t), "%s [%d, %d] swizzle %d brows %d: expected a linear offset", dt == DT_F32 ? "f32" : "bf16",
        rows, cols, swizzle, brows);
  int eb = dt == DT_F32 ? 4 : 2;
  int64_t span = (int64_t)(brows ? brows : rows) * cols * eb, m = smem_thread_bits(&t, &lin);
  uint8_t *seen = calloc((size_t)span, 1);
  int nreg = ly_nregs(&lin);
  for (int w = 0; w < 1 << lin.nwarp; w++)
    for (int lane = 0; lane < 1 << lin.nlane; lane++)
      for (int r = 0; r < nreg; r++) {
        int el[TC_MAX_RANK], th[TC_MAX_RANK], rg[TC_MAX_RANK];
        coord_of(&lin, r, lane, w, el);
        coord_of(&lin, 0, lane, w, th);
        coord_of(&lin, r, 0, 0, rg);
        int64_t want = smem_elem_offset(&t, el[0], el[1]);
        int64_t k = smem_elem_offset(&t, rg[0], rg[1]);
        int64_t got = (smem_elem_offset(&t, th[0], th[1]) ^ (k & m)) + (k & ~m);
        CHECK(got == want, "[%d, %d] swizzle %d: element (%d, %d) of warp %d lane %d reg %d at %lld, split gives %lld",
              rows, cols, swizzle, el[0], el[1], w, lane, r, (long long)want, (long long)got);
        CHECK(want >= 0 && want + eb <= span, "[%d, %d] swizzle %d: offset %lld outside the view", rows, cols,
              swizzle, (long long)want);
        if (brows == 0) { /* own rows: every byte once (a row slice leaves gaps) */
          CHECK(!seen[want], "[%d, %d] swizzle %d: two elements at byte %lld", rows, cols, swizzle,
                (long long)want);
          seen[want] = 1;
        }
      }
  free(seen);
}

static void test_smem_offset_split(void **state) {
  Ctx *c = *state;
  const Layout *mma = ly_mma(c, 2, 4, 1, 8);      /* 4 warps along the rows: the accumulator's per-warp shape */
  for (int sw = 0; sw <= 128; sw = sw ? sw * 2 : 32) {
    int cols = sw ? sw / 2 : 64;                  /* bf16: one swizzle block wide */
    check_smem_split(c, DT_BF16, 64, cols, sw, 0, mma, 4);
    check_smem_split(c, DT_BF16, 64, cols, sw, 0, ly_default(c, 2, (int[]){64, cols}, 4, 2), 4);
  }
  /* several column blocks (JFA's 64 x 128 O staging), and a row slice of a
   * 128-row allocation (column blocks 128 rows apart) */
  check_smem_split(c, DT_BF16, 64, 128, 128, 0, mma, 4);
  check_smem_split(c, DT_BF16, 64, 256, 128, 0, mma, 4);
  check_smem_split(c, DT_BF16, 64, 128, 128, 128, mma, 4);
  check_smem_split(c, DT_BF16, 128, 128, 64, 0, ly_default(c, 2, (int[]){128, 128}, 8, 2), 8);
  check_smem_split(c, DT_F32, 64, 64, 128, 0, mma, 4);
  check_smem_split(c, DT_F32, 32, 32, 128, 0, ly_default(c, 2, (int[]){32, 32}, 4, 4), 4);
  /* not linear: 160-row column blocks (a 160-key K/V slot); the lowering
   * then computes every address from (r, c) */
  Type t = {0};
  t.kind = TY_SMEM;
  t.elem.dt = DT_BF16;
  t.rank = 2;
  t.shape[0] = 160;
  t.shape[1] = 128;
  t.swizzle = 128;
  assert_false(smem_offset_linear(&t));
  t.shape[1] = 64;                                /* one column block: linear at any row count */
  assert_true(smem_offset_linear(&t));
}

/* ---- transpose --------------------------------------------------------- */

static void test_transpose(void **state) {
  Ctx *c = *state;
  static const int orders[2][2] = {{1, 0}, {0, 1}};
  for (int o = 0; o < 2; o++)
    for (int warps = 1; warps <= 8; warps *= 2)
      for (int m = 1; m <= 512; m *= 2)
        for (int n = 1; n <= 512; n *= 2) {
          int shape[2] = {m, n}, tshape[2] = {n, m};
          snprintf(cfg, sizeof cfg, "ly_transpose shape=[%d,%d] warps=%d order=[%d,%d]", m, n, warps, orders[o][0],
                   orders[o][1]);
          const Layout *L = ly_blocked_for(c, 2, shape, warps, 4, orders[o]);
          const Layout *T = ly_transpose(c, L);
          CHECK(T != NULL, "no transpose");
          LinLayout a, b;
          CHECK(ly_linear(L, 2, shape, warps, &a, NULL), "linear");
          CHECK(ly_linear(T, 2, tshape, warps, &b, NULL), "linear of the transpose");
          CHECK(a.nreg == b.nreg && a.nlane == b.nlane && a.nwarp == b.nwarp, "bit counts differ");
          /* every (reg, lane, warp) holds the transposed coordinate */
          int nregs = 1 << a.nreg;
          for (int w = 0; w < warps; w++)
            for (int lane = 0; lane < 32; lane += 3)
              for (int r = 0; r < nregs && r < 64; r++) {
                int ca[TC_MAX_RANK], cb[TC_MAX_RANK];
                coord_of(&a, r, lane, w, ca);
                coord_of(&b, r, lane, w, cb);
                CHECK(ca[0] == cb[1] && ca[1] == cb[0], "(r%d,l%d,w%d): (%d,%d) vs transposed (%d,%d)", r, lane, w,
                      ca[0], ca[1], cb[0], cb[1]);
              }
          /* transposing twice gives the same layout back */
          CHECK(ly_same(ly_transpose(c, T), L, 2, shape, warps), "transpose twice");
        }
  /* only blocked rank-2 layouts transpose */
  assert_null(ly_transpose(c, ly_mma(c, 2, 1, 1, 8)));
  assert_null(ly_transpose(c, ly_default(c, 1, (int[]){128}, 4, 4)));
}

/* ---- slices ------------------------------------------------------------ */

/* slice(dim, P) on shape S equals P on S with a size-1 `dim` inserted, with
 * that coordinate dropped (and registers that become zero removed). */
static void check_slice_drop(Ctx *c, const Layout *P, int dim, const int *pshape_full, int warps) {
  int rank = 1, sshape[1], pshape1[2];
  for (int i = 0, j = 0; i < 2; i++)
    if (i != dim) sshape[j++] = pshape_full[i];
  for (int i = 0; i < 2; i++) pshape1[i] = i == dim ? 1 : pshape_full[i];
  const Layout *S = ly_slice(c, dim, P);
  CHECK(S->rank == 1 && S->kind == LY_SLICE && S->dim == dim && S->parent == P, "slice fields");
  LinLayout ls, lp1, lpf;
  const char *why = NULL;
  CHECK(ly_linear(S, rank, sshape, warps, &ls, &why), "ly_linear(slice) failed: %s", why ? why : "");
  CHECK(ly_linear(P, 2, pshape1, warps, &lp1, &why), "ly_linear(parent, size-1 dim) failed: %s", why ? why : "");
  CHECK(ly_linear(P, 2, pshape_full, warps, &lpf, &why), "ly_linear(parent, full) failed: %s", why ? why : "");
  int keep = 1 - dim;
  /* exact bases */
  CHECK(ls.nlane == lp1.nlane && ls.nwarp == lp1.nwarp, "lane/warp bit counts differ from the parent's");
  for (int i = 0; i < ls.nlane; i++) CHECK(ls.lane[i][0] == lp1.lane[i][keep], "lane basis %d", i);
  for (int i = 0; i < ls.nwarp; i++) CHECK(ls.warp[i][0] == lp1.warp[i][keep], "warp basis %d", i);
  int k = 0;
  for (int i = 0; i < lp1.nreg; i++) {
    if (lp1.reg[i][keep] == 0) continue;
    CHECK(k < ls.nreg && ls.reg[k][0] == lp1.reg[i][keep], "register basis %d", k);
    k++;
  }
  CHECK(k == ls.nreg, "register count %d vs %d", ls.nreg, k);
  full_check(&ls, warps, false);
  /* The property reductions rely on: what each thread holds of the slice is
   * exactly the projection of what it holds of the full parent tile. */
  int n = sshape[0];
  unsigned char *a = malloc((size_t)n), *b = malloc((size_t)n);
  for (int w = 0; w < warps; w++)
    for (int lane = 0; lane < 32; lane++) {
      memset(a, 0, (size_t)n);
      memset(b, 0, (size_t)n);
      for (int r = 0; r < (1 << lpf.nreg); r++) {
        int co[TC_MAX_RANK];
        coord_of(&lpf, r, lane, w, co);
        a[co[keep]] = 1;
      }
      for (int r = 0; r < (1 << ls.nreg); r++) {
        int co[TC_MAX_RANK];
        coord_of(&ls, r, lane, w, co);
        b[co[0]] = 1;
      }
      if (memcmp(a, b, (size_t)n)) {
        free(a);
        free(b);
        CHECK(0, "lane %d warp %d: slice elements differ from the parent's projection", lane, w);
      }
    }
  free(a);
  free(b);
}

static void test_slice_blocked(void **state) {
  Ctx *c = *state;
  for (int warps = 1; warps <= 8; warps *= 2)
    for (int m = 1; m <= 1024; m *= 2)
      for (int n = 1; n <= 1024; n *= 2) {
        if (m * n > 65536) continue;
        int shape[2] = {m, n};
        for (int dim = 0; dim < 2; dim++) {
          snprintf(cfg, sizeof cfg, "slice(dim=%d) of default [%d,%d] warps=%d", dim, m, n, warps);
          check_slice_drop(c, ly_default(c, 2, shape, warps, 4), dim, shape, warps);
          snprintf(cfg, sizeof cfg, "slice(dim=%d) of order=[0,1] [%d,%d] warps=%d", dim, m, n, warps);
          check_slice_drop(c, ly_blocked_for(c, 2, shape, warps, 4, (int[]){0, 1}), dim, shape, warps);
        }
      }
}

static void test_slice_mma(void **state) {
  Ctx *c = *state;
  for (int warps = 1; warps <= 8; warps *= 2)
    for (int wm = 1; wm <= warps; wm *= 2) {
      int wn = warps / wm;
      for (int m = 16 * wm; m <= 256; m *= 2)
        for (int n = 8 * wn; n <= 256; n *= 2)
          for (int dim = 0; dim < 2; dim++) {
            snprintf(cfg, sizeof cfg, "slice(dim=%d) of mma[%d,%d] on [%d,%d]", dim, wm, wn, m, n);
            check_slice_drop(c, ly_mma(c, 2, wm, wn, 8), dim, (int[]){m, n}, warps);
          }
    }
}

/* ---- mma.sync ---------------------------------------------------------- */

/* PTX ISA, "Matrix Fragments for mma.m16n8k16" (f32 accumulator):
 *   groupID = lane >> 2, threadID_in_group = lane % 4
 *   row = groupID (c0, c1), groupID + 8 (c2, c3)
 *   col = threadID_in_group * 2 + (i & 1) */
static void test_mma_accumulator_ptx_table(void **state) {
  Ctx *c = *state;
  snprintf(cfg, sizeof cfg, "mma m16n8 accumulator");
  const Layout *M = ly_mma(c, 2, 1, 1, 8);
  LinLayout l;
  const char *why = NULL;
  assert_true(ly_linear(M, 2, (int[]){16, 8}, 1, &l, &why));
  assert_int_equal(l.nreg, 2);
  assert_int_equal(l.nlane, 5);
  assert_int_equal(l.nwarp, 0);
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < 4; i++) {
      int co[TC_MAX_RANK];
      coord_of(&l, i, lane, 0, co);
      int g = lane >> 2, t = lane % 4;
      int row = g + (i >= 2 ? 8 : 0), col = t * 2 + (i & 1);
      CHECK(co[0] == row && co[1] == col, "lane %d c%d at (%d,%d), PTX says (%d,%d)", lane, i, co[0], co[1], row, col);
    }
  full_check(&l, 1, true);
}

/* A fragment of mma.m16n8k16 with .f16/.bf16 inputs (a0..a7):
 *   row = groupID for a0,a1,a4,a5; groupID + 8 for a2,a3,a6,a7
 *   col = threadID_in_group * 2 + (i & 1), + 8 for a4..a7
 * B fragment (b0..b3): row = threadID_in_group * 2 + (i & 1), + 8 for b2,b3;
 *   col = groupID */
static void test_dot_operands_ptx_table_bf16(void **state) {
  Ctx *c = *state;
  const Layout *M = ly_mma(c, 2, 1, 1, 8);
  LinLayout a, b;
  snprintf(cfg, sizeof cfg, "dot A m16n8k16 bf16");
  assert_true(ly_linear(ly_dotop(c, 0, M, 16), 2, (int[]){16, 16}, 1, &a, NULL));
  assert_int_equal(a.nreg, 3);
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < 8; i++) {
      int co[TC_MAX_RANK];
      coord_of(&a, i, lane, 0, co);
      int g = lane >> 2, t = lane % 4;
      int row = g + ((i >> 1) & 1) * 8, col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      CHECK(co[0] == row && co[1] == col, "lane %d a%d at (%d,%d), PTX says (%d,%d)", lane, i, co[0], co[1], row, col);
    }
  full_check(&a, 1, true);
  snprintf(cfg, sizeof cfg, "dot B m16n8k16 bf16");
  assert_true(ly_linear(ly_dotop(c, 1, M, 16), 2, (int[]){16, 8}, 1, &b, NULL));
  assert_int_equal(b.nreg, 2);
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < 4; i++) {
      int co[TC_MAX_RANK];
      coord_of(&b, i, lane, 0, co);
      int g = lane >> 2, t = lane % 4;
      int row = t * 2 + (i & 1) + (i >= 2 ? 8 : 0), col = g;
      CHECK(co[0] == row && co[1] == col, "lane %d b%d at (%d,%d), PTX says (%d,%d)", lane, i, co[0], co[1], row, col);
    }
  full_check(&b, 1, true);
}

/* mma.m16n8k8 with .tf32 (f32 dot): A a0..a3: row = groupID (a0,a2), +8
 * (a1,a3); col = threadID_in_group (a0,a1), +4 (a2,a3).  B b0,b1: row =
 * threadID_in_group, +4 for b1; col = groupID. */
static void test_dot_operands_ptx_table_tf32(void **state) {
  Ctx *c = *state;
  const Layout *M = ly_mma(c, 2, 1, 1, 8);
  LinLayout a, b;
  snprintf(cfg, sizeof cfg, "dot A m16n8k8 tf32");
  assert_true(ly_linear(ly_dotop(c, 0, M, 32), 2, (int[]){16, 8}, 1, &a, NULL));
  assert_int_equal(a.nreg, 2);
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < 4; i++) {
      int co[TC_MAX_RANK];
      coord_of(&a, i, lane, 0, co);
      int g = lane >> 2, t = lane % 4;
      int row = g + (i & 1) * 8, col = t + (i >= 2 ? 4 : 0);
      CHECK(co[0] == row && co[1] == col, "lane %d a%d at (%d,%d), PTX says (%d,%d)", lane, i, co[0], co[1], row, col);
    }
  full_check(&a, 1, true);
  snprintf(cfg, sizeof cfg, "dot B m16n8k8 tf32");
  assert_true(ly_linear(ly_dotop(c, 1, M, 32), 2, (int[]){8, 8}, 1, &b, NULL));
  assert_int_equal(b.nreg, 1);
  for (int lane = 0; lane < 32; lane++)
    for (int i = 0; i < 2; i++) {
      int co[TC_MAX_RANK];
      coord_of(&b, i, lane, 0, co);
      int g = lane >> 2, t = lane % 4;
      int row = t + i * 4, col = g;
      CHECK(co[0] == row && co[1] == col, "lane %d b%d at (%d,%d), PTX says (%d,%d)", lane, i, co[0], co[1], row, col);
    }
  full_check(&b, 1, true);
}

/* Larger tiles and several warps: the accumulator covers the tile exactly
 * once; warp (wi, wj) owns rows 16*wi.. and columns 8*wj.. of each repeat. */
static void test_mma_many_shapes(void **state) {
  Ctx *c = *state;
  for (int warps = 1; warps <= 8; warps *= 2)
    for (int wm = 1; wm <= warps; wm *= 2) {
      int wn = warps / wm;
      const Layout *M = ly_mma(c, 2, wm, wn, 8);
      for (int m = 16; m <= 512; m *= 2)
        for (int n = 8; n <= 512; n *= 2) {
          snprintf(cfg, sizeof cfg, "mma warps=[%d,%d] on [%d,%d]", wm, wn, m, n);
          LinLayout l;
          const char *why = NULL;
          CHECK(ly_linear(M, 2, (int[]){m, n}, warps, &l, &why), "ly_linear failed: %s", why ? why : "");
          bool fits = m >= 16 * wm && n >= 8 * wn;
          full_check(&l, warps, fits);
          /* c0..c3 of every lane follow the PTX table inside each warp tile */
          for (int w = 0; w < warps; w++)
            for (int lane = 0; lane < 32; lane++)
              for (int i = 0; i < 4; i++) {
                int co[TC_MAX_RANK];
                coord_of(&l, i, lane, w, co);
                /* warp tiles beyond the tile wrap (replicate) */
                int row = (lane >> 2) + (i >= 2 ? 8 : 0) + 16 * (w % wm);
                int col = (lane % 4) * 2 + (i & 1) + 8 * (w / wm);
                CHECK(co[0] == row % m && co[1] == col % n, "warp %d lane %d c%d at (%d,%d), want (%d,%d)", w, lane, i,
                      co[0], co[1], row % m, col % n);
              }
        }
    }
  /* wgmma layouts are not linearized yet: a clear refusal, not a crash */
  LinLayout l;
  const char *why = NULL;
  assert_false(ly_linear(ly_mma(c, 3, 4, 1, 64), 2, (int[]){64, 64}, 4, &l, &why));
  assert_non_null(why);
  /* more warps in the layout than the kernel has */
  why = NULL;
  assert_false(ly_linear(ly_mma(c, 2, 4, 2, 8), 2, (int[]){64, 64}, 4, &l, &why));
  assert_non_null(why);
}

/* Dot operands for many shapes: surjective, registers independent, and the
 * rows of A (columns of B) that each warp holds are the rows (columns) of the
 * accumulator that warp computes. */
static void test_dotop_many_shapes(void **state) {
  Ctx *c = *state;
  for (int kb = 16; kb <= 32; kb += 16)
    for (int warps = 1; warps <= 8; warps *= 2)
      for (int wm = 1; wm <= warps; wm *= 2) {
        int wn = warps / wm;
        const Layout *M = ly_mma(c, 2, wm, wn, 8);
        const Layout *A = ly_dotop(c, 0, M, kb), *B = ly_dotop(c, 1, M, kb);
        int kmin = kb == 16 ? 16 : 8;
        for (int m = 16 * wm; m <= 128; m *= 2)
          for (int n = 8 * wn; n <= 128; n *= 2)
            for (int k = kmin; k <= 64; k *= 2) {
              LinLayout la, lb, lc;
              const char *why = NULL;
              snprintf(cfg, sizeof cfg, "dot<a> kbits=%d mma[%d,%d] on [%d,%d]", kb, wm, wn, m, k);
              CHECK(ly_linear(A, 2, (int[]){m, k}, warps, &la, &why), "ly_linear failed: %s", why ? why : "");
              full_check(&la, warps, wn == 1);
              snprintf(cfg, sizeof cfg, "dot<b> kbits=%d mma[%d,%d] on [%d,%d]", kb, wm, wn, k, n);
              CHECK(ly_linear(B, 2, (int[]){k, n}, warps, &lb, &why), "ly_linear failed: %s", why ? why : "");
              full_check(&lb, warps, wm == 1);
              snprintf(cfg, sizeof cfg, "dot operands vs acc kbits=%d mma[%d,%d] M=%d N=%d K=%d", kb, wm, wn, m, n, k);
              CHECK(ly_linear(M, 2, (int[]){m, n}, warps, &lc, &why), "acc");
              /* per warp: rows of A == rows of C, cols of B == cols of C */
              for (int w = 0; w < warps; w++) {
                unsigned char ra[256] = {0}, rc[256] = {0}, cb[256] = {0}, cc[256] = {0};
                for (int lane = 0; lane < 32; lane++) {
                  for (int r = 0; r < (1 << la.nreg); r++) {
                    int co[TC_MAX_RANK];
                    coord_of(&la, r, lane, w, co);
                    ra[co[0]] = 1;
                  }
                  for (int r = 0; r < (1 << lb.nreg); r++) {
                    int co[TC_MAX_RANK];
                    coord_of(&lb, r, lane, w, co);
                    cb[co[1]] = 1;
                  }
                  for (int r = 0; r < (1 << lc.nreg); r++) {
                    int co[TC_MAX_RANK];
                    coord_of(&lc, r, lane, w, co);
                    rc[co[0]] = 1;
                    cc[co[1]] = 1;
                  }
                }
                CHECK(!memcmp(ra, rc, (size_t)m), "warp %d: rows of A differ from rows of the accumulator", w);
                CHECK(!memcmp(cb, cc, (size_t)n), "warp %d: columns of B differ from columns of the accumulator", w);
              }
            }
      }
  /* 8-bit operands and non-mma parents are refused with a reason */
  LinLayout l;
  const char *why = NULL;
  const Layout *M = ly_mma(c, 2, 1, 1, 8);
  assert_false(ly_linear(ly_dotop(c, 0, M, 8), 2, (int[]){16, 32}, 1, &l, &why));
  assert_non_null(why);
  why = NULL;
  assert_false(ly_linear(ly_dotop(c, 0, ly_default(c, 2, (int[]){16, 16}, 1, 2), 16), 2, (int[]){16, 16}, 1, &l, &why));
  assert_non_null(why);
}

/* Non-power-of-two shapes are refused, never linearized. */
static void test_bad_shapes(void **state) {
  Ctx *c = *state;
  LinLayout l;
  const char *why = NULL;
  const Layout *L = ly_default(c, 1, (int[]){128}, 4, 4);
  assert_false(ly_linear(L, 1, (int[]){96}, 4, &l, &why));
  assert_non_null(why);
  why = NULL;
  assert_false(ly_linear(L, 1, (int[]){0}, 4, &l, &why));
  assert_non_null(why);
  why = NULL;
  assert_false(ly_linear(L, 2, (int[]){16, 16}, 4, &l, &why));
  assert_non_null(why);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_default_rank1, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_rank2, setup, teardown),
      cmocka_unit_test_setup_teardown(test_blocked_for_orders, setup, teardown),
      cmocka_unit_test_setup_teardown(test_blocked_exact, setup, teardown),
      cmocka_unit_test_setup_teardown(test_same_and_str, setup, teardown),
      cmocka_unit_test_setup_teardown(test_transpose, setup, teardown),
      cmocka_unit_test_setup_teardown(test_slice_blocked, setup, teardown),
      cmocka_unit_test_setup_teardown(test_slice_mma, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mma_accumulator_ptx_table, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dot_operands_ptx_table_bf16, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dot_operands_ptx_table_tf32, setup, teardown),
      cmocka_unit_test_setup_teardown(test_mma_many_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dotop_many_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_smem_offset_split, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

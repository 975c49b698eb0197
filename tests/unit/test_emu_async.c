/* test_emu_async.c - the emulator's asynchronous engines (emu/async.c,
 * emu/matrix.c, emu/tma.c, emu/sched.c) on hand-written PTX: mbarrier
 * phases and transaction counts, TMA boxes with their out-of-bounds fill
 * and swizzle against placements worked out here, TMA stores and
 * reductions, stmatrix/ldmatrix layouts, wgmma's groups, the tensor maps'
 * checks, and the reports: a missing arrive, bytes that never come, CTAs
 * that wait for each other. */
#include "testutil.h"
#include "../../emu/emu.h"

/* The shared-memory checks (emu/check.c) off for the next launches: tests
 * that read back the whole window (bytes no one wrote, which the
 * emulator's zeroed window makes 0) or that break the rules on purpose to
 * see the timing the checks would report; test_emu_check.c tests them. */
static bool checks_off;

/* Parse ptx and launch kernel k on grid x block threads; true when it ran. */
static bool run(const char *ptx, unsigned grid, unsigned block, const void *params, size_t psize, char *err,
                size_t errlen) {
  EmModule *m = NULL;
  if (!em_ptx_parse(ptx, strlen(ptx), &m, err, errlen)) {
    print_error("parse: %s\n", err);
    fail();
  }
  EmLaunch l = {.kernel = "k", .grid = {grid, 1, 1}, .block = {block, 1, 1}, .params = params, .params_size = psize,
                .max_steps = 20000000, .no_checks = checks_off};
  bool ok = em_launch(m, &l, err, errlen);
  em_module_free(m);
  return ok;
}

static void must_run(const char *ptx, unsigned grid, unsigned block, const void *params, size_t psize) {
  char err[2048];
  if (!run(ptx, grid, block, params, psize, err, sizeof err)) {
    print_error("%s\n", err);
    fail();
  }
}

static void must_fail(const char *ptx, unsigned grid, unsigned block, const void *params, size_t psize,
                      const char *const *want) {
  char err[2048];
  assert_false(run(ptx, grid, block, params, psize, err, sizeof err));
  for (; *want; want++) has(err, *want, "the report");
}

#define HEAD ".version 8.0\n.target sm_90a\n.address_size 64\n"

/* ---- mbarrier ---- */

/* One thread walks a barrier of count 2 through its phases, recording
 * test_wait.parity 0 and 1 after each step into out[0..]: a phase completes
 * when both arrivals and every expected byte are in. */
static void test_mbarrier_phases(void **state) {
  (void)state;
  checks_off = true; /* one thread arrives twice in a phase: PTX allows it, the checks do not */
  static const char ptx[] = HEAD
      ".shared .align 8 .b64 bar;\n"
      ".visible .entry k(.param .u64 out)\n{\n"
      ".reg .b64 %rd<8>;\n.reg .b32 %r<8>;\n.reg .pred %p<4>;\n"
      "ld.param.u64 %rd1, [out];\n"
      "mbarrier.init.shared.b64 [bar], 2;\n"
      "mbarrier.test_wait.parity.shared.b64 %p1, [bar], 0;\n selp.u32 %r1, 1, 0, %p1;\n st.global.u32 [%rd1], %r1;\n"
      "mbarrier.test_wait.parity.shared.b64 %p1, [bar], 1;\n selp.u32 %r1, 1, 0, %p1;\n st.global.u32 [%rd1+4], %r1;\n"
      "mbarrier.arrive.shared.b64 %rd2, [bar];\n" /* 1 of 2: phase 0 still */
      "mbarrier.test_wait.parity.shared.b64 %p1, [bar], 0;\n selp.u32 %r1, 1, 0, %p1;\n st.global.u32 [%rd1+8], %r1;\n"
      "mbarrier.arrive.shared.b64 %rd3, [bar];\n" /* 2 of 2: phase 0 completes */
      "mbarrier.test_wait.parity.shared.b64 %p1, [bar], 0;\n selp.u32 %r1, 1, 0, %p1;\n st.global.u32 [%rd1+12], %r1;\n"
      "mbarrier.test_wait.parity.shared.b64 %p1, [bar], 1;\n selp.u32 %r1, 1, 0, %p1;\n st.global.u32 [%rd1+16], %r1;\n"
      "mbarrier.expect_tx.shared.b64 [bar], 48;\n"
      "mbarrier.arrive.expect_tx.shared.b64 %rd4, [bar], 16;\n" /* 64 bytes expected, 1 arrival */
      "mbarrier.arrive.shared.b64 %rd5, [bar];\n" /* both arrived, bytes outstanding: phase 1 open */
      "mbarrier.test_wait.parity.shared.b64 %p1, [bar], 1;\n selp.u32 %r1, 1, 0, %p1;\n st.global.u32 [%rd1+20], %r1;\n"
      "st.global.u64 [%rd1+24], %rd2;\n st.global.u64 [%rd1+32], %rd3;\n st.global.u64 [%rd1+40], %rd5;\n"
      /* the state token waits for that phase: done for phase 0, not for phase 1 */
      "mbarrier.test_wait.shared.b64 %p1, [bar], %rd2;\n selp.u32 %r1, 1, 0, %p1;\n st.global.u32 [%rd1+48], %r1;\n"
      "mbarrier.test_wait.shared.b64 %p1, [bar], %rd5;\n selp.u32 %r1, 1, 0, %p1;\n st.global.u32 [%rd1+52], %r1;\n"
      "ret;\n}\n";
  uint32_t out[14];
  memset(out, 0xee, sizeof out);
  uint64_t p = (uint64_t)(uintptr_t)out;
  char err[2048];
  bool ok = run(ptx, 1, 1, &p, sizeof p, err, sizeof err);
  /* the CTA ends with 64 bytes expected: that is reported, after the stores */
  assert_false(ok);
  has(err, "expecting 64 more transaction bytes", "the report");
  assert_int_equal(out[0], 0); /* phase 0 open */
  assert_int_equal(out[1], 1); /* "phase -1" (parity 1) counts as done */
  assert_int_equal(out[2], 0);
  assert_int_equal(out[3], 1);
  assert_int_equal(out[4], 0);
  assert_int_equal(out[5], 0);
  uint64_t s[3];
  memcpy(s, &out[6], sizeof s);
  assert_int_equal(s[0], 0); /* arrived in phase 0, 0, 1 */
  assert_int_equal(s[1], 0);
  assert_int_equal(s[2], 1);
  assert_int_equal(out[12], 1);
  assert_int_equal(out[13], 0);
}

/* A wait that no arrive will end is a deadlock report with the barrier's
 * state; so is one whose bytes never come. Other misuse: reports. */
static void test_mbarrier_reports(void **state) {
  (void)state;
  checks_off = false;
  char ptx[2048];
  uint64_t p = 0;
  /* 64 threads, count 64: warp 1 never arrives (it exits) */
  snprintf(ptx, sizeof ptx, HEAD ".shared .align 8 .b64 bar[2];\n.visible .entry k(.param .u64 out)\n{\n"
           ".reg .b64 %%rd<8>;\n.reg .b32 %%r<8>;\n.reg .pred %%p<4>;\n"
           "mov.u32 %%r1, %%tid.x;\nsetp.ne.u32 %%p2, %%r1, 0;\n@%%p2 bra INIT;\n"
           "mbarrier.init.shared.b64 [bar+8], 64;\nINIT:\nbar.sync 0;\n"
           "setp.ge.u32 %%p3, %%r1, 32;\n@%%p3 exit;\n"
           "mbarrier.arrive.shared.b64 %%rd2, [bar+8];\n"
           "WAIT:\nmbarrier.try_wait.parity.shared.b64 %%p1, [bar+8], 0;\n@!%%p1 bra WAIT;\nret;\n}\n");
  const char *missing[] = {"deadlock", "every thread is blocked", "mbarrier at smem+0x8", "phase 0",
                           "pending arrivals 32 of 64", "tx bytes 0", "mbarrier.try_wait", NULL};
  must_fail(ptx, 1, 64, &p, sizeof p, missing);
  /* bytes expected that no copy brings */
  snprintf(ptx, sizeof ptx, HEAD ".shared .align 8 .b64 bar;\n.visible .entry k(.param .u64 out)\n{\n"
           ".reg .b64 %%rd<8>;\n.reg .pred %%p<4>;\n"
           "mbarrier.init.shared.b64 [bar], 1;\nmbarrier.arrive.expect_tx.shared.b64 %%rd2, [bar], 4096;\n"
           "WAIT:\nmbarrier.try_wait.parity.shared.b64 %%p1, [bar], 0;\n@!%%p1 bra WAIT;\nret;\n}\n");
  const char *bytes[] = {"deadlock", "pending arrivals 0 of 1, tx bytes 4096", NULL};
  must_fail(ptx, 1, 1, &p, sizeof p, bytes);
  /* an mbarrier op on memory no init set up; too many arrivals; a bad count */
  const char *bad[][2] = {
      {"mbarrier.arrive.shared.b64 %rd2, [bar];", "no mbarrier.init"},
      {"mbarrier.init.shared.b64 [bar], 1;\nmbarrier.arrive.shared.b64 %rd2, [bar], 2;", "2 arrivals in phase 0, which has 1 of 1 pending"},
      {"mbarrier.init.shared.b64 [bar], 0;", "count of 0"},
      {"mbarrier.init.shared.b64 [bar+4], 1;", "not 8-byte aligned"},
      {"setmaxnreg.inc.sync.aligned.u32 20;", "setmaxnreg to 20"},
      {"setmaxnreg.dec.sync.aligned.u32 44;", "multiple of 8"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 8 .b64 bar[2];\n.visible .entry k(.param .u64 out)\n{\n"
             ".reg .b64 %%rd<8>;\n%s\nret;\n}\n", bad[i][0]);
    const char *want[] = {bad[i][1], NULL};
    must_fail(ptx, 1, 1, &p, sizeof p, want);
  }
  snprintf(ptx, sizeof ptx, HEAD ".visible .entry k(.param .u64 out)\n{\nsetmaxnreg.inc.sync.aligned.u32 240;\n"
           "setmaxnreg.dec.sync.aligned.u32 24;\nret;\n}\n");
  must_run(ptx, 1, 128, &p, sizeof p);
}

/* ---- TMA ---- */

/* k(out, map, c0, c1, bytes): thread 0 loads the box at (c0, c1) into a
 * 1024-aligned window through an mbarrier, waits, copies the window's
 * bytes to out. */
static const char tma_load_ptx[] = HEAD
    ".shared .align 1024 .b8 box[4096];\n.shared .align 8 .b64 bar;\n"
    ".visible .entry k(.param .u64 out, .param .align 64 .b8 map[128], .param .u32 c0, .param .u32 c1, .param .u32 n)\n{\n"
    ".reg .b64 %rd<10>;\n.reg .b32 %r<10>;\n.reg .pred %p<4>;\n"
    "ld.param.u64 %rd1, [out];\nmov.b64 %rd2, map;\ncvta.param.u64 %rd2, %rd2;\n"
    "ld.param.u32 %r1, [c0];\nld.param.u32 %r2, [c1];\nld.param.u32 %r3, [n];\n"
    "mbarrier.init.shared.b64 [bar], 1;\nfence.mbarrier_init.release.cluster;\n"
    "mbarrier.arrive.expect_tx.shared.b64 %rd3, [bar], %r3;\n"
    "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [box], [%rd2, {%r1, %r2}], [bar];\n"
    "WAIT:\nmbarrier.try_wait.parity.shared.b64 %p1, [bar], 0;\n@!%p1 bra WAIT;\n"
    "mov.u32 %r4, 0;\nmov.u64 %rd5, box;\n"
    "LOOP:\nsetp.ge.u32 %p2, %r4, 4096;\n@%p2 bra END;\ncvt.u64.u32 %rd4, %r4;\nadd.s64 %rd6, %rd5, %rd4;\n"
    "ld.shared.u32 %r5, [%rd6];\nadd.s64 %rd7, %rd1, %rd4;\nst.global.u32 [%rd7], %r5;\nadd.u32 %r4, %r4, 4;\nbra LOOP;\n"
    "END:\nret;\n}\n";

typedef struct TmaParams {
  uint64_t out;
  uint8_t pad[56];
  _Alignas(64) EmTensorMap map;
  int32_t c0, c1;
  uint32_t n;
} TmaParams;

/* The PTX's parameter offsets: out 0, map 64 (.align 64), c0 192, c1 196, n 200. */
_Static_assert(offsetof(TmaParams, map) == 64 && offsetof(TmaParams, c0) == 192, "k's parameters");

/* A 20 x 40 tensor of u16 (rows 48 elements apart) whose element (r, c) is
 * 1000 r + c + 1, loaded from column -8, row 2 in boxes of 128-byte rows
 * (8 of them; swizzle none and 128B), 64-byte rows (20; 64B) and 32-byte
 * rows (20; 32B): columns -8..-1 and 40.. and rows 20.. lie outside and
 * come back 0 (or, with the NaN fill on f16, 0x7fff). Each byte lands
 * where its address bits say: the 16-byte chunk bits 4.. XOR the bits 7..
 * just above (3, 2, 1 of them for 128B, 64B, 32B), on the 1024-aligned
 * window; pinned by hand for a few. */
static void test_tma_load_box(void **state) {
  (void)state;
  checks_off = true; /* it reads back bytes past the box */
  enum { R = 20, C = 40, LD = 48 };
  static _Alignas(64) uint16_t g[R * LD];
  for (int r = 0; r < R; r++)
    for (int c = 0; c < LD; c++) g[r * LD + c] = c < C ? (uint16_t)(1000 * r + c + 1) : 0xdead;
  uint64_t dims[2] = {C, R}, strides[1] = {LD * 2};
  uint32_t es[2] = {1, 1};
  static uint16_t out[2048];
  for (int sw = 0; sw <= 3; sw++) {
    for (int oob = 0; oob <= 1; oob++) {
      TmaParams p = {.out = (uint64_t)(uintptr_t)out, .c0 = -8, .c1 = 2, .n = 8 * 128};
      char why[256];
      uint32_t bx[2] = {sw == 0 || sw == 3 ? 64u : sw == 2 ? 32u : 16u, sw == 0 || sw == 3 ? 8u : 20u};
      bool ok = em_tmap_encode(&p.map, oob ? 6 /* f16 */ : 1 /* u16 */, 2, g, dims, strides, bx, es, 0, sw, 0, oob, NULL,
                               why, sizeof why);
      if (!ok) print_error("sw %d: %s\n", sw, why);
      assert_true(ok);
      int inner = (int)bx[0] * 2; /* bytes of a box row */
      p.n = bx[1] * (uint32_t)inner;
      memset(out, 0xab, sizeof out);
      must_run(tma_load_ptx, 1, 1, &p, sizeof p);
      for (int r = 0; r < (int)bx[1]; r++)
        for (int c = 0; c < (int)bx[0]; c++) {
          uint32_t a = (uint32_t)(r * inner + 2 * c); /* dense, then swizzled on the (1024-aligned) address */
          uint32_t chunk = a >> 4 & 7, row = a >> 7 & 7, want_a = a;
          if (sw == 3) want_a = (a & ~0x70u) | ((chunk ^ row) << 4);
          if (sw == 2) want_a = (a & ~0x30u) | (((chunk & 3) ^ (row & 3)) << 4);
          if (sw == 1) want_a = (a & ~0x10u) | (((chunk & 1) ^ (row & 1)) << 4);
          int gr = 2 + r, gc = -8 + c;
          uint16_t want = gr < R && gc >= 0 && gc < C ? g[gr * LD + gc] : oob ? 0x7fff : 0;
          if (out[want_a / 2] != want) {
            print_error("swizzle %d oob %d: box (%d, %d) at byte %u: 0x%04x, want 0x%04x\n", sw, oob, r, c, want_a,
                        out[want_a / 2], want);
            fail();
          }
        }
      assert_int_equal(out[p.n / 2], 0); /* nothing past the box (shared memory starts zeroed) */
      if (sw == 3) { /* by hand: box (1, 8) = tensor (3, 0) = 3001, chunk 1 of row 1 -> chunk 0: byte 128 */
        assert_int_equal(out[128 / 2], 3001);
        /* box (2, 20) = tensor (4, 12) = 4013: byte 256 + 40 = chunk 2 ^ 2 = 0: byte 256 + 8 */
        assert_int_equal(out[(256 + 8) / 2], 4013);
        /* box (0, 0): column -8, outside: 0 at byte 0 */
        assert_int_equal(out[0], oob ? 0x7fff : 0);
      }
    }
  }
  /* the rank of the map and of the copy differ; a map the emulator did not make; bytes that overflow tx */
  TmaParams p = {.out = (uint64_t)(uintptr_t)out, .n = 1024};
  uint64_t d3[3] = {C, R, 1}, s3[2] = {LD * 2, LD * 2 * R};
  p.c1 = 2;
  uint32_t b3[3] = {64, 8, 1}, e3[3] = {1, 1, 1};
  assert_true(em_tmap_encode(&p.map, 1, 3, g, d3, s3, b3, e3, 0, 3, 0, 0, NULL, NULL, 0));
  const char *rank[] = {"a 2d copy with a tensor map of rank 3", NULL};
  must_fail(tma_load_ptx, 1, 1, &p, sizeof p, rank);
  memset(&p.map, 0, sizeof p.map);
  const char *notmap[] = {"holds no tensor map made by cuTensorMapEncodeTiled", NULL};
  must_fail(tma_load_ptx, 1, 1, &p, sizeof p, notmap);
  /* a load from column -7 of u16 (14 bytes before the row): not 16 bytes into a row either */
  assert_true(em_tmap_encode(&p.map, 1, 2, g, dims, strides, (uint32_t[2]){64, 8}, es, 0, 3, 0, 0, NULL, NULL, 0));
  p.c0 = -7;
  const char *unaligned[] = {"TMA load's innermost coordinate -7 is -14 bytes into a row", NULL};
  must_fail(tma_load_ptx, 1, 1, &p, sizeof p, unaligned);
}

/* The driver's argument checks, as em_tmap_encode makes them. */
static void test_tmap_checks(void **state) {
  (void)state;
  checks_off = false;
  static _Alignas(64) uint16_t g[64 * 64];
  _Alignas(64) EmTensorMap m;
  uint64_t dims[2] = {64, 64}, strides[1] = {128};
  uint32_t box[2] = {64, 8}, es[2] = {1, 1};
  char why[256];
  bool unsup;
  assert_true(em_tmap_encode(&m, 9, 2, g, dims, strides, box, es, 0, 3, 2, 0, &unsup, why, sizeof why));
  EmTensorMap d;
  assert_true(em_tmap_decode(&m, &d));
  assert_int_equal(d.esize, 2);
  assert_int_equal(d.strides[1], 128);
  m.dims[0]++; /* tampered with: refused */
  assert_false(em_tmap_decode(&m, &d));
  struct {
    const char *what;
    int dtype, rank, il, sw, oob;
    size_t off;
    uint64_t dim0, stride0;
    uint32_t box0, es0;
    const char *want;
    bool unsup;
  } bad[] = {
      {"misaligned", 9, 2, 0, 3, 0, 8, 64, 128, 64, 1, "not 16-byte aligned", false},
      {"stride", 9, 2, 0, 3, 0, 0, 64, 136, 64, 1, "multiple of 16", false},
      {"short stride", 9, 2, 0, 0, 0, 0, 64, 64, 32, 1, "less than a row", false},
      {"box 300", 9, 2, 0, 0, 0, 0, 512, 1024, 300, 1, "1 to 256", false},
      {"inner 8 bytes", 9, 2, 0, 0, 0, 0, 64, 128, 4, 1, "not a multiple of 16", false},
      {"swizzle span", 9, 2, 0, 2, 0, 0, 64, 128, 64, 1, "64-byte swizzle span", false},
      {"estr 0", 9, 2, 0, 0, 0, 0, 64, 128, 64, 0, "element stride", false},
      {"estr 9", 9, 2, 0, 0, 0, 0, 64, 128, 64, 9, "element stride", false},
      {"rank 6", 9, 6, 0, 0, 0, 0, 64, 128, 64, 1, "rank 6", false},
      {"NaN fill on u16", 1, 2, 0, 0, 1, 0, 64, 128, 64, 1, "not a floating-point", false},
      {"dtype 20", 20, 2, 0, 0, 0, 0, 64, 128, 64, 1, "not a CUtensorMapDataType", false},
      {"dim 0", 9, 2, 0, 0, 0, 0, 0, 128, 64, 1, "global dimension 0 is 0", false},
      {"interleave", 9, 3, 1, 0, 0, 0, 64, 128, 64, 1, "interleaved", true},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    uint64_t dd[5] = {bad[i].dim0, 64, 1, 1, 1}, ss[4] = {bad[i].stride0, 128 * 64, 128 * 64, 128 * 64};
    uint32_t bb[5] = {bad[i].box0, 8, 1, 1, 1}, ee[5] = {bad[i].es0, 1, 1, 1, 1};
    memset(&m, 0x5a, sizeof m);
    bool ok = em_tmap_encode(&m, bad[i].dtype, (unsigned)bad[i].rank, (uint8_t *)g + bad[i].off, dd, ss, bb, ee,
                             bad[i].il, bad[i].sw, 0, bad[i].oob, &unsup, why, sizeof why);
    if (ok || !strstr(why, bad[i].want)) print_error("%s: %s\n", bad[i].what, ok ? "accepted" : why);
    assert_false(ok);
    has(why, bad[i].want, bad[i].what);
    assert_int_equal(unsup, bad[i].unsup);
    assert_int_equal(((uint8_t *)&m)[0], 0x5a); /* untouched */
  }
}

/* k(out, map, c0, c1, src): 128 threads fill a 1024-aligned box from src
 * (u32 words), then thread 0 stores it (or reduces it into the tensor)
 * through the map and waits for the group's reads. */
static const char *tma_store_ptx(char *buf, size_t n, bool red) {
  snprintf(buf, n, HEAD ".shared .align 1024 .b8 box[4096];\n"
           ".visible .entry k(.param .u64 out, .param .align 64 .b8 map[128], .param .u32 c0, .param .u32 c1, "
           ".param .u64 src)\n{\n.reg .b64 %%rd<10>;\n.reg .b32 %%r<10>;\n.reg .pred %%p<4>;\n"
           "mov.b64 %%rd2, map;\ncvta.param.u64 %%rd2, %%rd2;\nld.param.u32 %%r1, [c0];\nld.param.u32 %%r2, [c1];\n"
           "ld.param.u64 %%rd1, [src];\nmov.u32 %%r3, %%tid.x;\n"
           "LOOP:\nsetp.ge.u32 %%p2, %%r3, 1024;\n@%%p2 bra FILLED;\nmul.wide.u32 %%rd4, %%r3, 4;\n"
           "add.s64 %%rd5, %%rd1, %%rd4;\nld.global.u32 %%r5, [%%rd5];\nmov.u64 %%rd6, box;\nadd.s64 %%rd6, %%rd6, %%rd4;\n"
           "st.shared.u32 [%%rd6], %%r5;\nadd.u32 %%r3, %%r3, 128;\nbra LOOP;\n"
           "FILLED:\nfence.proxy.async.shared::cta;\nbar.sync 0;\nmov.u32 %%r3, %%tid.x;\nsetp.ne.u32 %%p3, %%r3, 0;\n@%%p3 exit;\n"
           "%s.async.bulk.tensor.2d.global.shared::cta%s.tile.bulk_group [%%rd2, {%%r1, %%r2}], [box];\n"
           "cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\nret;\n}\n",
           red ? "cp.reduce" : "cp", red ? ".add" : "");
  return buf;
}

typedef struct StoreParams {
  uint64_t out;
  uint8_t pad[56];
  _Alignas(64) EmTensorMap map;
  int32_t c0, c1;
  uint64_t src;
} StoreParams;
_Static_assert(offsetof(StoreParams, src) == 200, "k's parameters");

/* A box of 4 rows x 32 f32 (128-byte rows, swizzle 128B) stored at column
 * 20, row 3 of a 5 x 40 tensor: only columns 20..39 of rows 3..4 are
 * written (the rest of the box falls outside and is dropped; the sentinels
 * around stay); then reduced (added) at the same place: each element
 * doubles. bf16: the sum rounded to bf16. */
static void test_tma_store_reduce(void **state) {
  (void)state;
  checks_off = false;
  enum { R = 5, C = 40, LD = 44 };
  static _Alignas(64) float g[R * LD];
  static float src[1024];
  static _Alignas(64) uint16_t h[R * 48];
  char ptx[4096];
  for (int i = 0; i < 1024; i++) src[i] = (float)(i + 1) * 0.5f;
  uint64_t dims[2] = {C, R}, strides[1] = {LD * 4};
  uint32_t box[2] = {32, 4}, es[2] = {1, 1};
  for (int red = 0; red <= 1; red++) {
    for (int i = 0; i < R * LD; i++) g[i] = -1.0f;
    StoreParams p = {.c0 = 20, .c1 = 3, .src = (uint64_t)(uintptr_t)src};
    assert_true(em_tmap_encode(&p.map, 7, 2, g, dims, strides, box, es, 0, 3, 0, 0, NULL, NULL, 0));
    must_run(tma_store_ptx(ptx, sizeof ptx, red), 1, 128, &p, sizeof p);
    for (int r = 0; r < R; r++)
      for (int c = 0; c < LD; c++) {
        float want = -1.0f;
        if (r >= 3 && c >= 20 && c < C) {
          int br = r - 3, bc = c - 20;
          uint32_t a = (uint32_t)(br * 128 + 4 * bc), sa = (a & ~0x70u) | (((a >> 4 & 7) ^ (a >> 7 & 7)) << 4);
          want = red ? src[sa / 4] - 1.0f : src[sa / 4];
        }
        if (g[r * LD + c] != want) {
          print_error("red %d: (%d, %d) = %g, want %g\n", red, r, c, g[r * LD + c], want);
          fail();
        }
      }
  }
  /* bf16 reduction: 1.5 + 0.00390625 (2^-8) rounds to 1.5 (ties to even), to 1.5078125 with 2^-7 */
  static uint16_t hsrc[2048];
  for (int i = 0; i < 2048; i++) hsrc[i] = i % 2 ? 0x3c00 /* 2^-7 */ : 0x3b80 /* 2^-8 */;
  for (int i = 0; i < R * 48; i++) h[i] = 0x3fc0; /* 1.5 */
  uint64_t hs[1] = {48 * 2};
  uint32_t hb[2] = {64, 4};
  StoreParams p = {.c0 = 0, .c1 = 0, .src = (uint64_t)(uintptr_t)hsrc};
  assert_true(em_tmap_encode(&p.map, 9, 2, h, dims, hs, hb, es, 0, 0, 0, 0, NULL, NULL, 0));
  must_run(tma_store_ptx(ptx, sizeof ptx, true), 1, 128, &p, sizeof p);
  assert_int_equal(h[0], 0x3fc0);
  assert_int_equal(h[1], 0x3fc1);
  assert_int_equal(h[C - 1], 0x3fc1);
  assert_int_equal(h[C], 0x3fc0); /* the padding column: outside the tensor, untouched */
  /* a box whose first column is 84 bytes into a row (f32 column 21): the H200 stops such a kernel with
     CUDA_ERROR_ILLEGAL_INSTRUCTION, so the emulator refuses it (column 20, 80 bytes, ran above) */
  StoreParams q = {.c0 = 21, .c1 = 3, .src = (uint64_t)(uintptr_t)src};
  assert_true(em_tmap_encode(&q.map, 7, 2, g, dims, strides, box, es, 0, 3, 0, 0, NULL, NULL, 0));
  const char *unaligned[] = {"innermost coordinate 21 is 84 bytes into a row, not a multiple of 16", NULL};
  must_fail(tma_store_ptx(ptx, sizeof ptx, true), 1, 128, &q, sizeof q, unaligned);
}

/* cp.reduce.async.bulk.global.shared::cta.bulk_group.add (bulk_store_add): 128 threads fill 4096 bytes of
 * shared memory from src, fence, and thread 0 adds `size` of them into dst (no tensor map), then waits. */
static const char *bulk_red_ptx(char *buf, size_t n, const char *type) {
  snprintf(buf, n, HEAD ".shared .align 128 .b8 box[4096];\n"
           ".visible .entry k(.param .u64 dst, .param .u64 src, .param .u32 size)\n{\n"
           ".reg .b64 %%rd<10>;\n.reg .b32 %%r<10>;\n.reg .pred %%p<4>;\n"
           "ld.param.u64 %%rd2, [dst];\nld.param.u64 %%rd1, [src];\nld.param.u32 %%r7, [size];\nmov.u32 %%r3, %%tid.x;\n"
           "LOOP:\nsetp.ge.u32 %%p2, %%r3, 1024;\n@%%p2 bra FILLED;\nmul.wide.u32 %%rd4, %%r3, 4;\n"
           "add.s64 %%rd5, %%rd1, %%rd4;\nld.global.u32 %%r5, [%%rd5];\nmov.u64 %%rd6, box;\nadd.s64 %%rd6, %%rd6, %%rd4;\n"
           "st.shared.u32 [%%rd6], %%r5;\nadd.u32 %%r3, %%r3, 128;\nbra LOOP;\n"
           "FILLED:\nfence.proxy.async.shared::cta;\nbar.sync 0;\nmov.u32 %%r3, %%tid.x;\nsetp.ne.u32 %%p3, %%r3, 0;\n@%%p3 exit;\n"
           "mov.u64 %%rd7, box;\ncvt.u32.u64 %%r8, %%rd7;\n"
           "%s%s [%%rd2], [%%r8], %%r7;\n"
           "cp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;\nret;\n}\n",
           type ? "cp.reduce.async.bulk.global.shared::cta.bulk_group.add." : "cp.async.bulk.global.shared::cta.bulk_group",
           type ? type : "");
  return buf;
}

typedef struct BulkParams {
  uint64_t dst, src;
  uint32_t size;
} BulkParams;

/* 1000 floats added into a run of 1008 (the rest untouched); bf16 with .noftz rounds as the tensor form;
 * a misaligned destination and a size not a multiple of 16 are refused. */
static void test_bulk_reduce(void **state) {
  (void)state;
  checks_off = false;
  static _Alignas(16) float g[1012], src[1024];
  char ptx[4096];
  for (int i = 0; i < 1024; i++) src[i] = (float)i * 0.25f;
  for (int i = 0; i < 1012; i++) g[i] = 1.0f;
  BulkParams p = {.dst = (uint64_t)(uintptr_t)g, .src = (uint64_t)(uintptr_t)src, .size = 4000};
  must_run(bulk_red_ptx(ptx, sizeof ptx, "f32"), 1, 128, &p, sizeof p);
  for (int i = 0; i < 1012; i++) {
    float want = i < 1000 ? 1.0f + src[i] : 1.0f;
    if (g[i] != want) {
      print_error("f32 [%d] = %g, want %g\n", i, g[i], want);
      fail();
    }
  }
  static _Alignas(16) uint16_t h[64];
  static uint16_t hs[2048];
  for (int i = 0; i < 2048; i++) hs[i] = i % 2 ? 0x3c00 /* 2^-7 */ : 0x3b80 /* 2^-8 */;
  for (int i = 0; i < 64; i++) h[i] = 0x3fc0; /* 1.5 */
  BulkParams q = {.dst = (uint64_t)(uintptr_t)h, .src = (uint64_t)(uintptr_t)hs, .size = 32};
  must_run(bulk_red_ptx(ptx, sizeof ptx, "noftz.bf16"), 1, 128, &q, sizeof q);
  assert_int_equal(h[0], 0x3fc0); /* 1.5 + 2^-8: ties to even */
  assert_int_equal(h[1], 0x3fc1);
  assert_int_equal(h[15], 0x3fc1);
  assert_int_equal(h[16], 0x3fc0); /* past the 32 bytes: untouched */
  BulkParams m = p;
  m.dst += 4;
  const char *mis[] = {"the global address must be 16-byte aligned", NULL};
  must_fail(bulk_red_ptx(ptx, sizeof ptx, "f32"), 1, 128, &m, sizeof m, mis);
  m = p, m.size = 40;
  const char *odd[] = {"cp.reduce.async.bulk of 40 bytes: the size is a positive multiple of 16", NULL};
  must_fail(bulk_red_ptx(ptx, sizeof ptx, "f32"), 1, 128, &m, sizeof m, odd);
}

/* cp.async.bulk.global.shared::cta.bulk_group (bulk_store): the same run written, not added (the rest
 * untouched); a misaligned destination is refused by the copy's own name. */
static void test_bulk_store(void **state) {
  (void)state;
  checks_off = false;
  static _Alignas(16) float g[1012], src[1024];
  char ptx[4096];
  for (int i = 0; i < 1024; i++) src[i] = (float)i * 0.25f - 3.0f;
  for (int i = 0; i < 1012; i++) g[i] = 1.0f;
  BulkParams p = {.dst = (uint64_t)(uintptr_t)g, .src = (uint64_t)(uintptr_t)src, .size = 4000};
  must_run(bulk_red_ptx(ptx, sizeof ptx, NULL), 1, 128, &p, sizeof p);
  for (int i = 0; i < 1012; i++) {
    float want = i < 1000 ? src[i] : 1.0f;
    if (g[i] != want) {
      print_error("[%d] = %g, want %g\n", i, g[i], want);
      fail();
    }
  }
  BulkParams m = p;
  m.dst += 8;
  const char *mis[] = {"cp.async.bulk into", "the global address must be 16-byte aligned", NULL};
  must_fail(bulk_red_ptx(ptx, sizeof ptx, NULL), 1, 128, &m, sizeof m, mis);
}

/* cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes (bulk_load): thread 0 expects `size`
 * transaction bytes and copies that run of global memory into shared memory; every thread waits on the
 * mbarrier and writes the words back out. The run arrives whole (the words past it untouched); a misaligned
 * source, a size not a multiple of 16 and an mbarrier expecting fewer bytes than the copy brings are refused. */
static const char *bulk_load_ptx(char *buf, size_t n, int expect_less) {
  snprintf(buf, n, HEAD ".shared .align 128 .b8 box[4096];\n.shared .align 8 .b64 bar;\n"
           ".visible .entry k(.param .u64 dst, .param .u64 src, .param .u32 size)\n{\n"
           ".reg .b64 %%rd<12>;\n.reg .b32 %%r<12>;\n.reg .pred %%p<4>;\n"
           "ld.param.u64 %%rd2, [dst];\nld.param.u64 %%rd1, [src];\nld.param.u32 %%r7, [size];\nmov.u32 %%r3, %%tid.x;\n"
           "mov.u64 %%rd7, box;\ncvt.u32.u64 %%r8, %%rd7;\nmov.u64 %%rd8, bar;\ncvt.u32.u64 %%r9, %%rd8;\n"
           "setp.ne.u32 %%p3, %%r3, 0;\n@%%p3 bra INIT;\nmov.u32 %%r4, 1;\nmbarrier.init.shared.b64 [bar], %%r4;\n"
           "fence.mbarrier_init.release.cluster;\nINIT:\nbar.sync 0;\n@%%p3 bra WAIT;\n"
           "sub.u32 %%r10, %%r7, %d;\n"
           "mbarrier.arrive.expect_tx.shared.b64 %%rd9, [bar], %%r10;\n"
           "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%r8], [%%rd1], %%r7, [%%r9];\n"
           "WAIT:\nmbarrier.try_wait.parity.shared.b64 %%p1, [%%r9], 0, 10000000;\n@!%%p1 bra WAIT;\n"
           "shr.u32 %%r11, %%r7, 2;\n"
           "LOOP:\nsetp.ge.u32 %%p2, %%r3, %%r11;\n@%%p2 bra DONE;\nmul.wide.u32 %%rd4, %%r3, 4;\n"
           "add.s64 %%rd6, %%rd7, %%rd4;\nld.shared.u32 %%r5, [%%rd6];\nadd.s64 %%rd5, %%rd2, %%rd4;\n"
           "st.global.u32 [%%rd5], %%r5;\nadd.u32 %%r3, %%r3, 128;\nbra LOOP;\nDONE:\nret;\n}\n",
           expect_less ? 16 : 0);
  return buf;
}

static void test_bulk_load(void **state) {
  (void)state;
  checks_off = false;
  static _Alignas(16) float g[1024], out[1024];
  char ptx[4096];
  for (int i = 0; i < 1024; i++) g[i] = (float)i * 0.5f - 7.0f, out[i] = -1.0f;
  BulkParams p = {.dst = (uint64_t)(uintptr_t)out, .src = (uint64_t)(uintptr_t)g, .size = 4000};
  must_run(bulk_load_ptx(ptx, sizeof ptx, 0), 1, 128, &p, sizeof p);
  for (int i = 0; i < 1024; i++) {
    float want = i < 1000 ? g[i] : -1.0f;
    if (out[i] != want) {
      print_error("[%d] = %g, want %g\n", i, out[i], want);
      fail();
    }
  }
  BulkParams m = p;
  m.src += 8;
  const char *mis[] = {"cp.async.bulk from", "the global address must be 16-byte aligned", NULL};
  must_fail(bulk_load_ptx(ptx, sizeof ptx, 0), 1, 128, &m, sizeof m, mis);
  m = p, m.size = 40;
  const char *odd[] = {"cp.async.bulk of 40 bytes: the size is a positive multiple of 16", NULL};
  must_fail(bulk_load_ptx(ptx, sizeof ptx, 0), 1, 128, &m, sizeof m, odd);
  const char *less[] = {"mbarrier", NULL};
  must_fail(bulk_load_ptx(ptx, sizeof ptx, 1), 1, 128, &p, sizeof p, less);
}

/* ---- stmatrix / ldmatrix ---- */

/* A warp stores four 8x8 matrices (lane l's register i = 0xLLii: lane and
 * matrix), rows 48 bytes apart (any 16-byte aligned row addresses do),
 * then loads them back (with .trans too): the layout of the PTX ISA, and
 * the round trip gives every register back. */
static void test_stmatrix_layout(void **state) {
  (void)state;
  checks_off = true; /* it reads back the gaps between the rows */
  char ptx[4096];
  static uint16_t out[2048 + 64];
  static uint32_t regs[32 * 4];
  for (int tr = 0; tr <= 1; tr++) {
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 16 .b8 m[2048];\n"
             ".visible .entry k(.param .u64 out, .param .u64 back)\n{\n.reg .b64 %%rd<10>;\n.reg .b32 %%r<32>;\n"
             ".reg .pred %%p<4>;\nld.param.u64 %%rd1, [out];\nld.param.u64 %%rd8, [back];\nmov.u32 %%r1, %%laneid;\n"
             /* register i: lo = lane << 8 | i, hi = lo ^ 0x80, (hi << 16) | lo */
             "shl.b32 %%r2, %%r1, 8;\n"
             "or.b32 %%r20, %%r2, 0;\nxor.b32 %%r24, %%r20, 0x80;\nshl.b32 %%r24, %%r24, 16;\nor.b32 %%r10, %%r24, %%r20;\n"
             "or.b32 %%r21, %%r2, 1;\nxor.b32 %%r25, %%r21, 0x80;\nshl.b32 %%r25, %%r25, 16;\nor.b32 %%r11, %%r25, %%r21;\n"
             "or.b32 %%r22, %%r2, 2;\nxor.b32 %%r26, %%r22, 0x80;\nshl.b32 %%r26, %%r26, 16;\nor.b32 %%r12, %%r26, %%r22;\n"
             "or.b32 %%r23, %%r2, 3;\nxor.b32 %%r27, %%r23, 0x80;\nshl.b32 %%r27, %%r27, 16;\nor.b32 %%r13, %%r27, %%r23;\n"
             /* lane l gives the address of row l % 8 of matrix l / 8: rows 48 bytes apart */
             "mul.lo.u32 %%r6, %%r1, 48;\ncvt.u64.u32 %%rd2, %%r6;\nmov.u64 %%rd3, m;\nadd.s64 %%rd3, %%rd3, %%rd2;\n"
             "stmatrix.sync.aligned.m8n8.x4%s.shared.b16 [%%rd3], {%%r10, %%r11, %%r12, %%r13};\n"
             "ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%%r14, %%r15, %%r16, %%r17}, [%%rd3];\n"
             "mul.wide.u32 %%rd4, %%r1, 16;\nadd.s64 %%rd4, %%rd8, %%rd4;\n"
             "st.global.v4.b32 [%%rd4], {%%r14, %%r15, %%r16, %%r17};\n"
             "setp.ne.u32 %%p1, %%r1, 0;\n@%%p1 bra DONE;\nmov.u32 %%r7, 0;\nmov.u64 %%rd5, m;\n"
             "COPY:\nsetp.ge.u32 %%p2, %%r7, 2048;\n@%%p2 bra DONE;\ncvt.u64.u32 %%rd6, %%r7;\nadd.s64 %%rd7, %%rd5, %%rd6;\n"
             "ld.shared.u32 %%r8, [%%rd7];\nadd.s64 %%rd7, %%rd1, %%rd6;\nst.global.u32 [%%rd7], %%r8;\n"
             "add.u32 %%r7, %%r7, 4;\nbra COPY;\nDONE:\nret;\n}\n",
             tr ? ".trans" : "", tr ? ".trans" : "");
    memset(out, 0, sizeof out);
    uint64_t p[2] = {(uint64_t)(uintptr_t)out, (uint64_t)(uintptr_t)regs};
    must_run(ptx, 1, 32, p, sizeof p);
    /* lane l register i: low half 0x(l)(0i) with bit 15 clear, high half with 0x80 in its high byte */
    for (int i = 0; i < 4; i++)
      for (int l = 0; l < 32; l++)
        for (int half = 0; half < 2; half++) {
          int row = l / 4, col = 2 * (l % 4) + half; /* the fragment's element */
          uint16_t v = (uint16_t)((l << 8 | i) ^ (half ? 0x80 : 0));
          int mr = tr ? col : row, mc = tr ? row : col; /* where memory holds it */
          int lane_of_row = 8 * i + mr;                 /* that row's address came from this lane */
          uint16_t got = out[(lane_of_row * 48) / 2 + mc];
          if (got != v) {
            print_error("trans %d: matrix %d element (%d, %d): 0x%04x, want 0x%04x\n", tr, i, row, col, got, v);
            fail();
          }
        }
    for (int l = 0; l < 32; l++) /* ldmatrix gives each lane its registers back */
      for (int i = 0; i < 4; i++) {
        uint32_t lo = (uint32_t)(l << 8 | i), want = ((lo ^ 0x80) << 16) | lo;
        assert_int_equal(regs[4 * l + i], want);
      }
  }
}

/* ---- wgmma's groups ---- */

/* One warpgroup: A (64x16) and B (16x8) all ones in shared memory
 * (no-swizzle K-major, core matrices of 8 rows x 16 bytes, LBO 128, SBO
 * 256), D starting at 1.0: after the wait D is 17 (16 + 1), or 16 without
 * scale-d; three groups chained on D, each waited for with wait_group 1
 * (gemm's pipeline), 49. The operation reads shared memory when the wait
 * runs it: B overwritten with zeros between the mma and the wait leaves
 * D = 1. Reading an accumulator before the wait, or never waiting, is
 * reported. */
static void test_wgmma_groups(void **state) {
  (void)state;
  char ptx[6144];
  static float out[128 * 4];
  static const char mma[] =
      "{\n.reg .pred p;\nsetp.ne.b32 p, %d, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%%f0, %%f1, %%f2, %%f3}, %%rd5, %%rd6, p, 1, 1, 0, 0;\n}\n"
      "wgmma.commit_group.sync.aligned;\n";
  const char *zero_b = "mov.b32 %r3, 0;\nsetp.lt.u32 %p2, %r1, 16;\n@%p2 st.shared.v4.b32 [%rd4+2048], {%r3, %r3, %r3, %r3};\n"
                       "bar.sync 0;\n";
  const char *wait0 = "wgmma.wait_group.sync.aligned 0;\n", *wait1 = "wgmma.wait_group.sync.aligned 1;\n";
  const char *store = "mul.wide.u32 %rd7, %r1, 16;\nadd.s64 %rd7, %rd1, %rd7;\nst.global.v4.f32 [%rd7], {%f0, %f1, %f2, %f3};\n";
  /* 0: D + 16; 1: no scale-d; 2: B zeroed before the wait; 3: three groups; 4: a read before the wait; 5: no wait */
  for (int mode = 0; mode < 6; mode++) {
    char m1[512], body[2048];
    checks_off = mode == 2; /* B overwritten before the wait: the checks report it ("slot:"), test_emu_check.c */
    snprintf(m1, sizeof m1, mma, mode == 1 ? 0 : 1);
    if (mode == 3) snprintf(body, sizeof body, "%s%s%s%s%s%s%s%s", m1, wait1, m1, wait1, m1, wait1, wait0, store);
    else snprintf(body, sizeof body, "%s%s%s%s", m1, mode == 2 ? zero_b : "", mode >= 4 ? "" : wait0,
                  mode == 5 ? "" : store);
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 1024 .b8 s[4096];\n"
             ".visible .entry k(.param .u64 out)\n{\n.reg .b64 %%rd<12>;\n.reg .b32 %%r<20>;\n.reg .f32 %%f<8>;\n"
             ".reg .pred %%p<4>;\nld.param.u64 %%rd1, [out];\nmov.u32 %%r1, %%tid.x;\n"
             "mov.u64 %%rd2, s;\nmul.wide.u32 %%rd3, %%r1, 16;\nadd.s64 %%rd4, %%rd2, %%rd3;\n"
             "mov.b32 %%r2, 0x3f803f80;\n" /* bf16 ones, 2304 bytes of A and B: 144 16-byte pieces */
             "st.shared.v4.b32 [%%rd4], {%%r2, %%r2, %%r2, %%r2};\n"
             "setp.lt.u32 %%p1, %%r1, 16;\n@!%%p1 bra FILLED;\nst.shared.v4.b32 [%%rd4+2048], {%%r2, %%r2, %%r2, %%r2};\n"
             "FILLED:\nfence.proxy.async.shared::cta;\nbar.sync 0;\nmov.f32 %%f0, 0f3F800000;\nmov.f32 %%f1, %%f0;\nmov.f32 %%f2, %%f0;\nmov.f32 %%f3, %%f0;\n"
             "mov.b64 %%rd5, 0x0000001000080000;\n" /* SBO 256 >> 4, LBO 128 >> 4, start 0 */
             "mov.b64 %%rd6, 0x0000001000080080;\n" /* start 2048 >> 4 */
             "wgmma.fence.sync.aligned;\n%sret;\n}\n", body);
    for (int i = 0; i < 128 * 4; i++) out[i] = -7.0f;
    uint64_t p = (uint64_t)(uintptr_t)out;
    if (mode >= 4) {
      const char *read[] = {"reads %f0, an accumulator of a wgmma.mma_async not yet waited for", "(CTA 0,0,0 thread ",
                            "st.global.v4.f32", NULL};
      const char *never[] = {"never waited for", "wgmma.mma_async", NULL};
      must_fail(ptx, 1, 128, &p, sizeof p, mode == 4 ? read : never);
      continue;
    }
    must_run(ptx, 1, 128, &p, sizeof p);
    float want = mode == 0 ? 17.0f : mode == 1 ? 16.0f : mode == 2 ? 1.0f : 49.0f;
    for (int i = 0; i < 128 * 4; i++)
      if (out[i] != want) {
        print_error("mode %d: thread %d register %d: %g, want %g\n", mode, i / 4, i % 4, out[i], want);
        fail();
      }
  }
  /* a warpgroup with a thread gone: the collective never completes */
  snprintf(ptx, sizeof ptx, HEAD ".shared .align 1024 .b8 s[4096];\n"
           ".visible .entry k(.param .u64 out)\n{\n.reg .b64 %%rd<8>;\n.reg .b32 %%r<4>;\n.reg .f32 %%f<4>;\n"
           ".reg .pred %%p<2>;\nmov.u32 %%r1, %%tid.x;\nsetp.eq.u32 %%p1, %%r1, 77;\n@%%p1 exit;\n"
           "mov.b64 %%rd5, 0x0000001000080000;\n"
           "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%%f0, %%f1, %%f2, %%f3}, %%rd5, %%rd5, 0, 1, 1, 0, 0;\n"
           "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\nret;\n}\n");
  uint64_t p = 0;
  const char *want[] = {"deadlock", "the other threads of its warpgroup (warps 0-3) at wgmma.mma_async", NULL};
  must_fail(ptx, 1, 128, &p, sizeof p, want);
}

/* ---- CTAs that wait for each other ---- */

/* CTA i waits (ld.acquire spin) until flag == i, then sets it to i + 1:
 * CTA 0 goes first, whatever the order they start in; launched in reverse
 * (CTA i waits for nctaid - 1 - i) they need every CTA resident. A flag
 * nobody sets is a deadlock across CTAs naming the address. */
static void test_cta_semaphore(void **state) {
  (void)state;
  checks_off = false;
  char ptx[4096];
  for (int rev = 0; rev <= 1; rev++) {
    snprintf(ptx, sizeof ptx, HEAD ".visible .entry k(.param .u64 flag)\n{\n.reg .b64 %%rd<4>;\n.reg .b32 %%r<8>;\n"
             ".reg .pred %%p<4>;\nld.param.u64 %%rd1, [flag];\nmov.u32 %%r1, %%ctaid.x;\nmov.u32 %%r2, %%nctaid.x;\n"
             "%s"
             "SPIN:\nld.acquire.gpu.global.b32 %%r3, [%%rd1];\nsetp.ne.u32 %%p1, %%r3, %%r1;\n@%%p1 bra SPIN;\n"
             "bar.sync 0;\nmov.u32 %%r4, %%tid.x;\nsetp.ne.u32 %%p2, %%r4, 0;\n@%%p2 bra DONE;\n"
             "ld.global.u32 %%r5, [%%rd1+4];\nmad.lo.u32 %%r5, %%r5, 10, %%r1;\nst.global.u32 [%%rd1+4], %%r5;\n"
             "add.u32 %%r6, %%r3, 1;\nst.release.gpu.global.b32 [%%rd1], %%r6;\nDONE:\nret;\n}\n",
             rev ? "sub.u32 %r1, %r2, %r1;\nsub.u32 %r1, %r1, 1;\n" : "");
    uint32_t flag[2] = {0, 0};
    uint64_t p = (uint64_t)(uintptr_t)flag;
    must_run(ptx, 5, 64, &p, sizeof p);
    assert_int_equal(flag[0], 5);
    assert_int_equal(flag[1], 1234); /* 0, 1, 2, 3, 4 in this order: digits 0 1 2 3 4 */
  }
  /* a relay: CTA 2 sets A; CTA 1, set aside spinning on A, gets past it, sets B and spins on C; CTA 0, spinning
   * on B, sets C. CTA 1 spinning again, on another word, after it moved is progress: no deadlock (the
   * twenty-fourth session's false deadlock in the deterministic broadcast-Q backward) */
  snprintf(ptx, sizeof ptx, HEAD ".visible .entry k(.param .u64 flag)\n{\n.reg .b64 %%rd<4>;\n.reg .b32 %%r<8>;\n"
           ".reg .pred %%p<4>;\nld.param.u64 %%rd1, [flag];\nmov.u32 %%r1, %%ctaid.x;\nmov.u32 %%r4, 1;\n"
           "setp.eq.u32 %%p1, %%r1, 2;\n@%%p1 bra C2;\nsetp.eq.u32 %%p1, %%r1, 1;\n@%%p1 bra C1;\n"
           "S0:\nld.acquire.gpu.global.b32 %%r3, [%%rd1+4];\nsetp.lo.u32 %%p2, %%r3, 1;\n@%%p2 bra S0;\n"
           "st.release.gpu.global.b32 [%%rd1+8], %%r4;\nret;\n"
           "C1:\nld.acquire.gpu.global.b32 %%r3, [%%rd1];\nsetp.lo.u32 %%p2, %%r3, 1;\n@%%p2 bra C1;\n"
           "st.release.gpu.global.b32 [%%rd1+4], %%r4;\n"
           "S1:\nld.acquire.gpu.global.b32 %%r3, [%%rd1+8];\nsetp.lo.u32 %%p2, %%r3, 1;\n@%%p2 bra S1;\n"
           "mov.u32 %%r5, 7;\nst.global.u32 [%%rd1+12], %%r5;\nret;\n"
           "C2:\nst.release.gpu.global.b32 [%%rd1], %%r4;\nret;\n}\n");
  uint32_t relay[4] = {0, 0, 0, 0};
  uint64_t rp = (uint64_t)(uintptr_t)relay;
  must_run(ptx, 3, 32, &rp, sizeof rp);
  assert_int_equal(relay[0] + relay[1] + relay[2], 3);
  assert_int_equal(relay[3], 7);
  snprintf(ptx, sizeof ptx, HEAD ".visible .entry k(.param .u64 flag)\n{\n.reg .b64 %%rd<4>;\n.reg .b32 %%r<8>;\n"
           ".reg .pred %%p<4>;\nld.param.u64 %%rd1, [flag];\nmov.u32 %%r1, %%ctaid.x;\n"
           "SPIN:\nld.acquire.gpu.global.b32 %%r3, [%%rd1];\nsetp.ne.u32 %%p1, %%r3, 7;\n@%%p1 bra SPIN;\nret;\n}\n");
  uint32_t flag[2] = {3, 0};
  uint64_t p = (uint64_t)(uintptr_t)flag;
  char addr[64];
  snprintf(addr, sizeof addr, "global memory at 0x%llx to change from 3", (unsigned long long)(uintptr_t)flag);
  /* the report names what each of the other resident CTAs waits for too */
  const char *want[] = {"deadlock", "every resident CTA (3) waits for another", addr, "; CTA 1,0,0 thread 0 waits for",
                        "; CTA 2,0,0 thread 0 waits for", NULL};
  must_fail(ptx, 3, 32, &p, sizeof p, want);
}

/* ---- the parser ---- */

static void test_async_parse(void **state) {
  (void)state;
  checks_off = false;
  char ptx[2048], err[512];
  EmModule *m = NULL;
  static const char *const unsup[] = {
      "cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%rd1], [%rd1, {%r1, %r2}], [%rd1];",
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%rd1], [%rd1], 16, "
      "[%rd1], %r1;",
      "mbarrier.arrive_drop.shared.b64 %rd1, [%rd1];",
      "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%r1, %r2}, %rd1, %rd1, 1, 1, 1, 0, 0;",
      "stmatrix.sync.aligned.m16n8.x1.trans.shared.b8 [%rd1], {%r1};",
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64.foo %p1, [%rd1], 0;",
  };
  for (size_t i = 0; i < sizeof unsup / sizeof *unsup; i++) {
    snprintf(ptx, sizeof ptx, HEAD ".visible .entry k()\n{\n.reg .b64 %%rd<4>;\n.reg .b32 %%r<4>;\n.reg .pred %%p<2>;\n"
             "%s\nret;\n}\n", unsup[i]);
    bool ok = em_ptx_parse(ptx, strlen(ptx), &m, err, sizeof err);
    if (!ok) print_error("%s: %s\n", unsup[i], err);
    assert_true(ok);
    assert_int_equal(em_find_func(m, "k")->ins[0].opc, EM_UNSUPPORTED);
    em_module_free(m);
  }
  static const char *const bad[] = {
      "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%rd1], [%rd1, {%r1}], [%rd1];",
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r1, %r2}];",
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%r1, %r2, %r3}, %rd1, %rd1, 1, 1, 1, 0, 0;",
      "wgmma.wait_group.sync.aligned %r1;",
      "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%rd1], {%r1, %r2};",
      "mbarrier.init.shared.b64 %rd1, 1;",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(ptx, sizeof ptx, HEAD ".visible .entry k()\n{\n.reg .b64 %%rd<4>;\n.reg .b32 %%r<4>;\n.reg .pred %%p<2>;\n"
             "%s\nret;\n}\n", bad[i]);
    m = NULL;
    bool ok = em_ptx_parse(ptx, strlen(ptx), &m, err, sizeof err);
    if (ok) print_error("accepted: %s\n", bad[i]);
    assert_false(ok);
    has(err, "ptx:9:", bad[i]);
  }
  /* 128 accumulators: a long vector */
  char d[2048] = "";
  size_t n = 0;
  for (int i = 0; i < 128; i++) n += (size_t)snprintf(d + n, sizeof d - n, "%s%%f%d", i ? ", " : "", i);
  char big[4096];
  snprintf(big, sizeof big, HEAD ".visible .entry k()\n{\n.reg .b64 %%rd<4>;\n.reg .f32 %%f<128>;\n"
           "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%s}, %%rd1, %%rd2, 1, 1, -1, 0, 1;\nret;\n}\n", d);
  assert_true(em_ptx_parse(big, strlen(big), &m, err, sizeof err));
  const EmIns *in = &em_find_func(m, "k")->ins[0];
  assert_int_equal(in->opc, EM_WGMMA);
  assert_int_equal(in->a[0].kind, EA_LVEC);
  assert_int_equal(in->a[0].nvec, 128);
  assert_int_equal(in->rank, 32);
  assert_int_equal(in->a[5].imm, -1);
  em_module_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mbarrier_phases), cmocka_unit_test(test_mbarrier_reports),
      cmocka_unit_test(test_tma_load_box),    cmocka_unit_test(test_tmap_checks),
      cmocka_unit_test(test_tma_store_reduce),
      cmocka_unit_test(test_bulk_reduce),
      cmocka_unit_test(test_bulk_store), cmocka_unit_test(test_bulk_load), cmocka_unit_test(test_stmatrix_layout),
      cmocka_unit_test(test_wgmma_groups),    cmocka_unit_test(test_cta_semaphore),
      cmocka_unit_test(test_async_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

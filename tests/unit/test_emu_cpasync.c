/* test_emu_cpasync.c - Ampere's non-bulk cp.async on the emulator
 * (emu/cpasync.c, its checks in emu/check.c), on hand-written PTX (tilec
 * does not emit it yet): the decoder's forms, a two-stage pipelined copy as
 * a Triton-style `dot` loop makes it (partial src-size zero-filled, src-size
 * 0 on addresses outside every allocation) under every schedule, and each
 * check firing on a kernel that breaks its rule while the same kernel with
 * the rule kept runs clean. */
#include "testutil.h"
#include "../../emu/emu.h"

#include <stddef.h>

#define HEAD ".version 8.0\n.target sm_90a\n.address_size 64\n"

static const struct { int sched; uint64_t seed; } scheds[] = {
    {EM_SCHED_RR, 0},          {EM_SCHED_RANDOM, 1},      {EM_SCHED_RANDOM, 2}, {EM_SCHED_RANDOM, 3},
    {EM_SCHED_ADVERSARIAL, 1}, {EM_SCHED_ADVERSARIAL, 2}, {EM_SCHED_ADVERSARIAL, 3}};
enum { NSCHED = sizeof scheds / sizeof *scheds };

static bool run(const char *ptx, unsigned block, const void *params, size_t psize, const EmRange *ranges, int nranges,
                int sched, uint64_t seed, char *err, size_t errlen) {
  EmModule *m = NULL;
  if (!em_ptx_parse(ptx, strlen(ptx), &m, err, errlen)) {
    print_error("parse: %s\n", err);
    fail();
  }
  EmLaunch l = {.kernel = "k", .grid = {1, 1, 1}, .block = {block, 1, 1}, .params = params, .params_size = psize,
                .max_steps = 20000000, .sched = sched, .seed = seed, .ranges = ranges, .nranges = nranges};
  bool ok = em_launch(m, &l, err, errlen);
  em_module_free(m);
  return ok;
}

/* ---- decoding ---- */

static const EmIns *first_ins(const EmModule *m) {
  const EmFunc *f = em_find_func(m, "k");
  assert_non_null(f);
  for (int i = 0; i < f->nins; i++)
    if (f->ins[i].opc != EM_NOP) return &f->ins[i];
  fail();
  return NULL;
}

/* One instruction in a kernel with a few registers: its decoding (NULL: the parse must fail). */
static void decodes(const char *ins, int opc, uint32_t mod, int nargs) {
  char ptx[1024], err[512];
  snprintf(ptx, sizeof ptx, HEAD ".visible .entry k()\n{\n.reg .b64 %%rd<4>;\n.reg .b32 %%r<4>;\n.reg .pred %%p<2>;\n"
           "%s\nret;\n}\n", ins);
  EmModule *m = NULL;
  bool ok = em_ptx_parse(ptx, strlen(ptx), &m, err, sizeof err);
  if (opc < 0) {
    if (ok) print_error("should not parse: %s\n", ins);
    assert_false(ok);
    return;
  }
  if (!ok) print_error("%s: %s\n", ins, err);
  assert_true(ok);
  const EmIns *in = first_ins(m);
  if (in->opc != opc) print_error("%s: opcode %s\n", ins, em_opc_name((EmOpc)in->opc));
  assert_int_equal(in->opc, opc);
  assert_int_equal(in->mod & (EMM_CG | EMM_HINT | EMM_ALL), mod);
  if (opc != EM_UNSUPPORTED) assert_int_equal(in->nargs, nargs);
  em_module_free(m);
}

static void test_decode(void **state) {
  (void)state;
  /* what tilec will emit (LLVM inline asm) */
  decodes("cp.async.cg.shared.global [%rd1], [%rd2], 16, %r1;", EM_CPA, EMM_CG, 4);
  decodes("cp.async.ca.shared.global [%rd1], [%rd2], 4;", EM_CPA, 0, 3);
  decodes("cp.async.ca.shared::cta.global [%rd1+8], [%rd2], 8;", EM_CPA, 0, 3);
  decodes("cp.async.cg.shared.global.L2::128B [%rd1+16], [%rd2], 16;", EM_CPA, EMM_CG, 3);
  decodes("cp.async.ca.shared.global.L2::cache_hint [%rd1], [%rd2], 4, %rd3;", EM_CPA, EMM_HINT, 4);
  decodes("cp.async.cg.shared.global.L2::cache_hint.L2::256B [%rd1], [%rd2], 16, %p1, %rd3;", EM_CPA,
          EMM_CG | EMM_HINT, 5);
  decodes("cp.async.ca.shared.global [%rd1], [%rd2], 8, 3;", EM_CPA, 0, 4);
  decodes("@!%p1 cp.async.ca.shared.global [%rd1], [%rd2], 16, %p1;", EM_CPA, 0, 4);
  decodes("cp.async.commit_group;", EM_CPA_COMMIT, 0, 0);
  decodes("cp.async.wait_group 3;", EM_CPA_WAIT, 0, 1);
  decodes("cp.async.wait_all;", EM_CPA_WAIT, EMM_ALL, 0);
  /* the bulk forms stay theirs */
  decodes("cp.async.bulk.commit_group;", EM_BULK_COMMIT, 0, 0);
  decodes("cp.async.bulk.wait_group.read 0;", EM_BULK_WAIT, 0, 1);
  /* refused: mbarrier completion, other spaces, repeated or unknown words */
  decodes("cp.async.mbarrier.arrive.shared.b64 [%rd1];", EM_UNSUPPORTED, 0, 0);
  decodes("cp.async.ca.shared::cluster.global [%rd1], [%rd2], 4;", EM_UNSUPPORTED, 0, 0);
  decodes("cp.async.ca.shared.global.L2::64B.L2::128B [%rd1], [%rd2], 4;", EM_UNSUPPORTED, 0, 0);
  decodes("cp.async.ca.shared.global.L1::evict_last [%rd1], [%rd2], 4;", EM_UNSUPPORTED, 0, 0);
  /* malformed operands: the parse fails, as ptxas would */
  decodes("cp.async.cg.shared.global [%rd1], [%rd2], 8;", -1, 0, 0);
  decodes("cp.async.ca.shared.global [%rd1], [%rd2], 2;", -1, 0, 0);
  decodes("cp.async.ca.shared.global [%rd1], [%rd2], %r1;", -1, 0, 0);
  decodes("cp.async.ca.shared.global [%rd1], %rd2, 4;", -1, 0, 0);
  decodes("cp.async.ca.shared.global [%rd1], [%rd2], 4, %r1, %r2;", -1, 0, 0);
  decodes("cp.async.wait_group %r1;", -1, 0, 0);
  decodes("cp.async.wait_all 0;", -1, 0, 0);
}

/* ---- one thread, every form ---- */

/* One thread: shared memory first filled with 0xff bytes, then copies of
 * each form, wait_all, and the 64 bytes stored back to out. */
static void test_forms(void **state) {
  (void)state;
  static _Alignas(16) uint8_t g[64], out[64];
  for (int i = 0; i < 64; i++) g[i] = (uint8_t)(i + 1);
  static const char ptx[] = HEAD ".shared .align 16 .b8 s[64];\n"
      ".visible .entry k(.param .u64 pg, .param .u64 pout)\n{\n"
      ".reg .b64 %rd<12>;\n.reg .b32 %r<12>;\n.reg .pred %p<4>;\n"
      "ld.param.u64 %rd1, [pg];\nld.param.u64 %rd2, [pout];\nmov.u64 %rd3, s;\nmov.b32 %r1, -1;\n"
      "st.shared.v4.b32 [s], {%r1, %r1, %r1, %r1};\nst.shared.v4.b32 [s+16], {%r1, %r1, %r1, %r1};\n"
      "st.shared.v4.b32 [s+32], {%r1, %r1, %r1, %r1};\nst.shared.v4.b32 [s+48], {%r1, %r1, %r1, %r1};\n"
      "mov.u32 %r2, 5;\nsetp.eq.u32 %p1, %r2, 5;\nsetp.ne.u32 %p2, %r2, 5;\nmov.u64 %rd5, 0;\n"
      /* bytes 0-15: all 16, .cg as tilec will emit it */
      "cp.async.cg.shared.global [%rd3], [%rd1], 16, 16;\n"
      /* 16-31: src-size 5 in a register: 5 bytes, 11 zeros */
      "cp.async.cg.shared.global.L2::128B [%rd3+16], [%rd1+16], 16, %r2;\n"
      /* 32-35: .ca, 4 bytes; 36-39: ignore-src true: zeros; 40-47: ignore-src false (!p2): 8 bytes */
      "cp.async.ca.shared.global [%rd3+32], [%rd1+32], 4;\n"
      "cp.async.ca.shared.global [%rd3+36], [%rd1+36], 4, %p1;\n"
      "cp.async.ca.shared::cta.global.L2::cache_hint [%rd3+40], [%rd1+40], 8, %p2, %rd5;\n"
      /* 48-55: src-size 0 from a null pointer: zeros; 56-63: predicated off, keeps 0xff */
      "mov.u64 %rd6, 0;\ncp.async.ca.shared.global [%rd3+48], [%rd6], 8, 0;\n"
      "@%p2 cp.async.ca.shared.global [%rd3+56], [%rd1+56], 8;\n"
      "cp.async.wait_all;\n"
      "ld.shared.v4.b32 {%r4, %r5, %r6, %r7}, [s];\nst.global.v4.b32 [%rd2], {%r4, %r5, %r6, %r7};\n"
      "ld.shared.v4.b32 {%r4, %r5, %r6, %r7}, [s+16];\nst.global.v4.b32 [%rd2+16], {%r4, %r5, %r6, %r7};\n"
      "ld.shared.v4.b32 {%r4, %r5, %r6, %r7}, [s+32];\nst.global.v4.b32 [%rd2+32], {%r4, %r5, %r6, %r7};\n"
      "ld.shared.v4.b32 {%r4, %r5, %r6, %r7}, [s+48];\nst.global.v4.b32 [%rd2+48], {%r4, %r5, %r6, %r7};\n"
      "ret;\n}\n";
  uint64_t p[2] = {(uint64_t)(uintptr_t)g, (uint64_t)(uintptr_t)out};
  EmRange r[2] = {{g, sizeof g}, {out, sizeof out}};
  for (int s = 0; s < NSCHED; s++) {
    char err[2048];
    memset(out, 0xee, sizeof out);
    bool ok = run(ptx, 1, p, sizeof p, r, 2, scheds[s].sched, scheds[s].seed, err, sizeof err);
    if (!ok) print_error("%s\n", err);
    assert_true(ok);
    for (int i = 0; i < 64; i++) {
      int want = i < 16 ? i + 1 : i < 21 ? i + 1 : i < 32 ? 0 : i < 36 ? i + 1 : i < 40 ? 0 : i < 48 ? i + 1
                 : i < 56 ? 0 : 0xff;
      if (out[i] != want) print_error("byte %d: %d, want %d (schedule %d)\n", i, out[i], want, s);
      assert_int_equal(out[i], want);
    }
  }
}

/* ---- a pipelined copy ---- */

/* 64 threads (two warps) stream K chunks of 1024 bytes through two stages
 * of shared memory, as a pipelined `dot` loop does: chunk 0 issued before
 * the loop; each iteration issues chunk i+1 (src-size from the bytes left,
 * 0..16: 0 past the end, where the address is outside every allocation),
 * commits, waits for all but the newest group, meets at a barrier, and
 * copies the 16 bytes of the thread 32 lanes away (the other warp's copy)
 * to out; a barrier before the stage is refilled. The last chunk is
 * partial: its bytes past the end must be zeros (the stage held chunk K-3
 * before). mode breaks one rule (0: none). */
enum { K = 4, NBYTES = 3 * 1024 + 20 * 16 + 6 };
enum {
  PIPE_OK, PIPE_WAIT_TOO_FEW, PIPE_OWN_READ, PIPE_BARRIER_BEFORE_WAIT, PIPE_NO_FINAL_WAIT, PIPE_UNCOMMITTED, PIPE_OWN_WRITE,
  PIPE_OTHER_WRITE, PIPE_NMODES
};

static const char *pipe_ptx(char *buf, size_t n, int mode) {
  snprintf(buf, n, HEAD ".shared .align 16 .b8 st[2048];\n"
           ".visible .entry k(.param .u64 pg, .param .u64 pout, .param .u32 pn)\n{\n"
           ".reg .b64 %%rd<20>;\n.reg .b32 %%r<24>;\n.reg .pred %%p<8>;\n"
           "ld.param.u64 %%rd1, [pg];\nld.param.u64 %%rd2, [pout];\nld.param.u32 %%r1, [pn];\n"
           "mov.u32 %%r2, %%tid.x;\nshl.b32 %%r3, %%r2, 4;\nmov.u64 %%rd3, st;\n"
           "add.u32 %%r11, %%r2, 32;\nand.b32 %%r11, %%r11, 63;\nshl.b32 %%r11, %%r11, 4;\n" /* the other warp's slot */
           "mov.u32 %%r4, 0;\nmov.u32 %%r5, 0;\n"
           "ISSUE:\n"
           "shl.b32 %%r6, %%r5, 10;\nadd.u32 %%r7, %%r6, %%r3;\nsub.s32 %%r8, %%r1, %%r7;\n"
           "max.s32 %%r8, %%r8, 0;\nmin.s32 %%r8, %%r8, 16;\n"
           "cvt.u64.u32 %%rd4, %%r7;\nadd.s64 %%rd5, %%rd1, %%rd4;\n"
           "and.b32 %%r9, %%r5, 1;\nshl.b32 %%r9, %%r9, 10;\nadd.u32 %%r10, %%r9, %%r3;\n"
           "cvt.u64.u32 %%rd6, %%r10;\nadd.s64 %%rd7, %%rd3, %%rd6;\n"
           "cp.async.cg.shared.global [%%rd7], [%%rd5], 16, %%r8;\n%s"
           "cp.async.commit_group;\nadd.u32 %%r5, %%r5, 1;\nsetp.eq.u32 %%p1, %%r5, 1;\n@%%p1 bra ISSUE;\n"
           "%scp.async.wait_group %d;\n%s"
           "and.b32 %%r12, %%r4, 1;\nshl.b32 %%r12, %%r12, 10;\nadd.u32 %%r12, %%r12, %%r11;\n"
           "cvt.u64.u32 %%rd8, %%r12;\nadd.s64 %%rd9, %%rd3, %%rd8;\n"
           "ld.shared.v4.b32 {%%r13, %%r14, %%r15, %%r16}, [%%rd9];\n"
           "shl.b32 %%r17, %%r4, 10;\nadd.u32 %%r17, %%r17, %%r11;\ncvt.u64.u32 %%rd10, %%r17;\n"
           "add.s64 %%rd11, %%rd2, %%rd10;\nst.global.v4.b32 [%%rd11], {%%r13, %%r14, %%r15, %%r16};\n"
           "bar.sync 0;\nadd.u32 %%r4, %%r4, 1;\nsetp.lt.u32 %%p2, %%r4, %d;\n@%%p2 bra ISSUE;\n"
           "%s%sret;\n}\n",
           mode == PIPE_OWN_READ ? "ld.shared.u32 %r20, [%rd7];\n"
           : mode == PIPE_OWN_WRITE ? "st.shared.u32 [%rd7], %r2;\n"
           : mode == PIPE_OTHER_WRITE ? "bar.sync 1;\nadd.u32 %r21, %r9, %r11;\ncvt.u64.u32 %rd13, %r21;\n"
                                        "add.s64 %rd13, %rd3, %rd13;\nst.shared.u32 [%rd13], %r2;\n"
                                      : "",
           mode == PIPE_BARRIER_BEFORE_WAIT ? "bar.sync 0;\n" : "", mode == PIPE_WAIT_TOO_FEW ? 2 : 1,
           mode == PIPE_BARRIER_BEFORE_WAIT ? "" : "bar.sync 0;\n", K,
           mode == PIPE_NO_FINAL_WAIT || mode == PIPE_UNCOMMITTED ? "" : "cp.async.wait_group 0;\n",
           mode == PIPE_UNCOMMITTED ? "cp.async.wait_all;\ncp.async.cg.shared.global [%rd7], [%rd5], 16, 0;\n" : "");
  return buf;
}

static _Alignas(16) uint8_t pg[K * 1024], pout[K * 1024];

typedef struct PipeParams {
  uint64_t g, out;
  uint32_t n, pad;
} PipeParams;

static bool pipe_run(int mode, int s, char *err, size_t errlen) {
  char ptx[8192];
  PipeParams p = {(uint64_t)(uintptr_t)pg, (uint64_t)(uintptr_t)pout, NBYTES, 0};
  EmRange r[2] = {{pg, NBYTES}, {pout, sizeof pout}};
  for (int i = 0; i < (int)sizeof pg; i++) pg[i] = (uint8_t)(i * 7 + 3) | 1; /* no zero byte */
  memset(pout, 0xee, sizeof pout);
  return run(pipe_ptx(ptx, sizeof ptx, mode), 64, &p, sizeof p, r, 2, scheds[s].sched, scheds[s].seed, err, errlen);
}

static void test_pipeline(void **state) {
  (void)state;
  for (int s = 0; s < NSCHED; s++) {
    char err[2048];
    bool ok = pipe_run(PIPE_OK, s, err, sizeof err);
    if (!ok) print_error("schedule %d: %s\n", s, err);
    assert_true(ok);
    for (int i = 0; i < K * 1024; i++) {
      int want = i < NBYTES ? pg[i] : 0;
      if (pout[i] != want) print_error("byte %d: 0x%02x, want 0x%02x (schedule %d)\n", i, pout[i], want, s);
      assert_int_equal(pout[i], want);
    }
  }
}

/* The kernel fails under every schedule with a report holding each of want. */
static void pipe_fails(int mode, const char *const *want) {
  for (int s = 0; s < NSCHED; s++) {
    char err[2048];
    bool ok = pipe_run(mode, s, err, sizeof err);
    if (ok) print_error("mode %d, schedule %d: should fail with '%s'\n", mode, s, want[0]);
    assert_false(ok);
    for (const char *const *w = want; *w; w++) has(err, *w, "the report");
  }
}

/* A thread that ends with copies no wait_group covered; a copy that reads
 * outside every allocation, src-size past cp-size, a misaligned destination. */
static void test_reports(void **state) {
  (void)state;
  const char *unwaited[] = {"cp.async: the thread ended with copies never waited for",
                            "(CTA 0,0,0 thread 0,0,0): cp.async.cg.shared.global", NULL};
  pipe_fails(PIPE_NO_FINAL_WAIT, unwaited);
  const char *uncommitted[] = {"cp.async: the thread ended with copies never committed", NULL};
  pipe_fails(PIPE_UNCOMMITTED, uncommitted);
  char ptx[2048], err[2048];
  static _Alignas(16) uint8_t g[32];
  uint64_t p = (uint64_t)(uintptr_t)g;
  EmRange r = {g, 20};
  static const struct { const char *ins, *want; } bad[] = {
      {"cp.async.cg.shared.global [s], [%rd1+16], 16, 5;", "global access at 0x"},
      {"cp.async.cg.shared.global [s], [%rd1], 16, 17;", "src-size 17, more than its cp-size 16"},
      {"cp.async.ca.shared.global [s+4], [%rd1], 8;", "the cp.async destination at smem+0x4 is not 8-byte aligned"},
      {"cp.async.ca.shared.global [s], [%rd1+4], 8;", "is not 8-byte aligned"},
      {"cp.async.ca.shared.global [s+64], [%rd1], 4;", "outside the CTA's 64 bytes"},
      {"cp.async.cg.shared.global [s], [%rd1+16], 16, 4;", NULL}, /* the 4 bytes inside: clean */
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 16 .b8 s[64];\n.visible .entry k(.param .u64 pg)\n{\n"
             ".reg .b64 %%rd<4>;\nld.param.u64 %%rd1, [pg];\n%s\ncp.async.wait_all;\nret;\n}\n", bad[i].ins);
    bool ok = run(ptx, 1, &p, sizeof p, &r, 1, EM_SCHED_RR, 0, err, sizeof err);
    if (ok != !bad[i].want) print_error("%s: %s\n", bad[i].ins, ok ? "ran clean" : err);
    assert_int_equal(ok, !bad[i].want);
    if (bad[i].want) has(err, bad[i].want, "the report");
  }
}

/* Each check on the pipeline with one rule broken, under every schedule (the
 * checks follow happens-before: the report does not depend on the timing). */
static void test_checks(void **state) {
  (void)state;
  /* waiting for one group too few: the stage read may still be in flight */
  const char *too_few[] = {"race: reads smem+0x", "written by the cp.async at ptx line 34 (thread ",
                           "with no cp.async.wait_group of it in its thread, and then a barrier, before this access",
                           "ld.shared.v4.b32 [ptx line 46]", NULL};
  pipe_fails(PIPE_WAIT_TOO_FEW, too_few);
  /* a thread reading its own copy before its wait_group */
  const char *own_read[] = {"race: reads smem+0x", "written by the cp.async at ptx line 34",
                            "before a cp.async.wait_group of this thread covers it (the copy may still be in flight)",
                            "ld.shared.u32 [ptx line 35]", NULL};
  pipe_fails(PIPE_OWN_READ, own_read);
  /* the barrier before the wait_group, not after: the other warp's copies are not known to be complete */
  const char *barrier[] = {"race: reads smem+0x", "written by the cp.async at ptx line 34", "barrier", NULL};
  pipe_fails(PIPE_BARRIER_BEFORE_WAIT, barrier);
  /* stores into a destination while its copy may be in flight: the issuing thread's, another warp's */
  const char *own_write[] = {"race: writes smem+0x", "which the cp.async at ptx line 34 (thread ",
                             "before a cp.async.wait_group of this thread covers it", "st.shared.u32 [ptx line 35]",
                             NULL};
  pipe_fails(PIPE_OWN_WRITE, own_write);
  const char *other_write[] = {"race: writes smem+0x", "which the cp.async at ptx line 34 (thread ",
                               "with no cp.async.wait_group of it in its thread", "st.shared.u32 [ptx line 39]", NULL};
  pipe_fails(PIPE_OTHER_WRITE, other_write);
}

/* ---- the proxy rule ---- */

/* A warpgroup copies A (64x16) and B (16x8) of bf16 ones with cp.async and
 * runs one wgmma on them. cp.async writes through the generic proxy (PTX
 * ISA, cp.async: "treated as a weak memory operation performed in the
 * generic proxy"), the wgmma reads through the async proxy: a
 * fence.proxy.async after the wait_group (before the barrier) is clean;
 * none, or one before the wait_group (the copies not yet complete), is a
 * proxy report; no barrier after the waits, a race with the other warps'
 * copies. */
enum { PX_FENCE, PX_NONE, PX_EARLY, PX_NO_BARRIER, PX_NMODES };

static void test_proxy(void **state) {
  (void)state;
  static _Alignas(16) uint16_t g[2048 / 2 + 256 / 2];
  static float out[128 * 4];
  for (size_t i = 0; i < sizeof g / 2; i++) g[i] = 0x3f80; /* bf16 1.0 */
  for (int mode = 0; mode < PX_NMODES; mode++) {
    char ptx[4096];
    snprintf(ptx, sizeof ptx, HEAD ".shared .align 1024 .b8 s[4096];\n"
             ".visible .entry k(.param .u64 pg, .param .u64 out)\n{\n.reg .b64 %%rd<12>;\n.reg .b32 %%r<20>;\n"
             ".reg .f32 %%f<8>;\n.reg .pred %%p<4>;\nld.param.u64 %%rd8, [pg];\nld.param.u64 %%rd1, [out];\n"
             "mov.u32 %%r1, %%tid.x;\nmov.u64 %%rd2, s;\nmul.wide.u32 %%rd3, %%r1, 16;\nadd.s64 %%rd4, %%rd2, %%rd3;\n"
             "add.s64 %%rd9, %%rd8, %%rd3;\ncp.async.cg.shared.global [%%rd4], [%%rd9], 16;\n"
             "setp.lt.u32 %%p1, %%r1, 16;\n@%%p1 cp.async.cg.shared.global [%%rd4+2048], [%%rd9+2048], 16;\n"
             "cp.async.commit_group;\n%scp.async.wait_group 0;\n%s%s"
             "mov.b64 %%rd5, 0x0000001000080000;\nmov.b64 %%rd6, 0x0000001000080080;\nwgmma.fence.sync.aligned;\n"
             "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%%f0, %%f1, %%f2, %%f3}, %%rd5, %%rd6, 0, 1, 1, 0, 0;\n"
             "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n"
             "mul.wide.u32 %%rd7, %%r1, 16;\nadd.s64 %%rd7, %%rd1, %%rd7;\n"
             "st.global.v4.f32 [%%rd7], {%%f0, %%f1, %%f2, %%f3};\nret;\n}\n",
             mode == PX_EARLY ? "fence.proxy.async.shared::cta;\n" : "",
             mode == PX_FENCE || mode == PX_NO_BARRIER ? "fence.proxy.async.shared::cta;\n" : "",
             mode == PX_NO_BARRIER ? "" : "bar.sync 0;\n");
    uint64_t p[2] = {(uint64_t)(uintptr_t)g, (uint64_t)(uintptr_t)out};
    EmRange r[2] = {{g, sizeof g}, {out, sizeof out}};
    for (int sc = 0; sc < NSCHED; sc++) {
      char err[2048];
      memset(out, 0, sizeof out);
      bool ok = run(ptx, 128, p, sizeof p, r, 2, scheds[sc].sched, scheds[sc].seed, err, sizeof err);
      if (ok != (mode == PX_FENCE)) print_error("mode %d, schedule %d: %s\n", mode, sc, ok ? "ran clean" : err);
      assert_int_equal(ok, mode == PX_FENCE);
      if (mode == PX_FENCE) {
        for (int i = 0; i < 128 * 4; i++) assert_true(out[i] == 16.0f);
      } else if (mode == PX_NO_BARRIER) {
        has(err, "race: the wgmma.mma_async reads smem+0x", "the report");
        has(err, "written by the cp.async at ptx line", "the report");
      } else {
        has(err, "proxy: the wgmma.mma_async reads smem+0x", "the report");
        has(err, "written by the cp.async at ptx line 18 (thread ", "the report");
        has(err, "through the generic proxy, with no fence.proxy.async between the write and this asynchronous read",
            "the report");
      }
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_decode),
      cmocka_unit_test(test_forms),
      cmocka_unit_test(test_pipeline),
      cmocka_unit_test(test_reports),
      cmocka_unit_test(test_checks),
      cmocka_unit_test(test_proxy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

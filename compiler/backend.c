/* backend.c - MLIR module -> MLIR pass pipeline -> LLVM IR -> O3 -> PTX ->
 * cubin (ptxas as a subprocess, or nvJitLink loaded with dlopen).
 *
 * One MLIR context per compilation (multithreading off, so many compiles
 * can run at once); the only process-wide state is the one-time
 * registration of passes and the NVPTX target (pthread_once) and a cache of
 * assembler version strings behind a mutex. */
#include "lower.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <llvm-c/Core.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <mlir-c/Conversion.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Dialect/Arith.h>
#include <mlir-c/Dialect/ControlFlow.h>
#include <mlir-c/Dialect/NVVM.h>
#include <mlir-c/Dialect/SCF.h>
#include <mlir-c/Pass.h>
#include <mlir-c/RegisterEverything.h>
#include <mlir-c/Transforms.h>
#include <mlir/Dialect/LLVMIR/Transforms/Passes.capi.h.inc>
#include <mlir-c/Target/LLVMIR.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
bool lw_build_module(Ctx *c, TModule *m, MlirContext mc, MlirModule *out);

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_globals(void) {
  /* the one pass we name in a pipeline string (for its option) */
  mlirRegisterLLVMDIScopeForLLVMFuncOpPass();
  /* NVPTX code generation runs straight-line strength reduction, which in
   * LLVM 22 takes time superlinear in the length of a block and steeply
   * so in the depth of integer chains (SCEV): 80% of compiling a 2^17-element
   * tile, 23 s for 500 unrolled `a = a * a + b` on i32, minutes for 1000.
   * Our unrolled tiles are exactly its worst case and ptxas strength-reduces
   * the addresses again (JFA's SASS stays the same size, +-1%), so it is
   * off: process-wide, as LLVM options are, set once here. */
  const char *argv[] = {"tilec", "-opt-disable=slsr"};
  LLVMParseCommandLineOptions(2, argv, NULL);
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
}

static void to_buf(MlirStringRef s, void *ud) { buf_put(ud, s.data, s.length); }

typedef struct DiagCapture {
  Buf text;
} DiagCapture;

static MlirLogicalResult on_diag(MlirDiagnostic d, void *ud) {
  DiagCapture *dc = ud;
  buf_puts(&dc->text, "  ");
  mlirDiagnosticPrint(d, to_buf, &dc->text);
  buf_puts(&dc->text, "\n");
  return mlirLogicalResultSuccess();
}

/* --embed-ptx: the PTX text followed by `.global .b8 __tile_ptx[N] = {...}`
 * holding that text and a NUL, so that the cubin carries the PTX the way it
 * carries __tile_meta (the emulator runs it: docs/emulator.md). */
static void embed_ptx(const Buf *ptx, Buf *out) {
  size_t n = ptx->len;
  buf_put(out, ptx->data, n);
  buf_printf(out, "\n.visible .global .align 1 .b8 __tile_ptx[%zu] = {", n + 1);
  for (size_t i = 0; i < n; i++) buf_printf(out, i % 32 ? "%u," : "\n%u,", (unsigned char)ptx->data[i]);
  buf_puts(out, "0};\n");
}

/* ---- ptxas ---- */

static bool is_exe(const char *p) { return p && *p && access(p, X_OK) == 0; }

static const char *find_ptxas(Ctx *c, char *buf, size_t cap) {
  if (c->opts.ptxas) return c->opts.ptxas;
  const char *e = getenv("TILE_PTXAS");
  if (is_exe(e)) return e;
  const char *homes[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
  for (int i = 0; i < 3; i++) {
    if (!homes[i]) continue;
    snprintf(buf, cap, "%s/bin/ptxas", homes[i]);
    if (is_exe(buf)) return buf;
  }
  const char *path = getenv("PATH");
  while (path && *path) {
    const char *end = strchr(path, ':');
    size_t n = end ? (size_t)(end - path) : strlen(path);
    snprintf(buf, cap, "%.*s/ptxas", (int)n, path);
    if (n && is_exe(buf)) return buf;
    path = end ? end + 1 : NULL;
  }
  return NULL;
}

/* Run argv, capture stdout+stderr into out. Returns the exit status or -1. */
static int run_capture(char *const argv[], Buf *out) {
  int pfd[2];
  if (pipe(pfd)) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
  posix_spawn_file_actions_addclose(&fa, pfd[0]);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(pfd[1]);
  if (rc) {
    close(pfd[0]);
    errno = rc;
    return -1;
  }
  char tmp[4096];
  ssize_t k;
  while ((k = read(pfd[0], tmp, sizeof tmp)) > 0 || (k < 0 && errno == EINTR))
    if (k > 0) buf_put(out, tmp, (size_t)k);
  close(pfd[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static bool write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

static bool read_file(const char *path, Buf *out) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  char tmp[65536];
  size_t k;
  while ((k = fread(tmp, 1, sizeof tmp, f)) > 0) buf_put(out, tmp, k);
  fclose(f);
  return !out->failed;
}

/* A failed ptxas's log without the resource report -v adds (the
 * "ptxas info" lines and the stack-frame lines under them): the errors. */
static void without_info(const Buf *log, Buf *out) {
  const char *p = log->data;
  while (p && *p) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p + 1) : strlen(p);
    if (strncmp(p, "ptxas info", 10) && !memmem(p, n, "bytes stack frame", 17)) buf_put(out, p, n);
    p = e ? e + 1 : NULL;
  }
}

/* ptxas succeeds but says the kernel lost performance (e.g. C7520: every
 * wgmma serialized): a silent 30% slowdown unless the user hears of it. */
static void perf_warnings(Ctx *c, const Buf *log) {
  const char *p = log->data;
  while (p && *p) {
    const char *e = strchr(p, '\n');
    int n = e ? (int)(e - p) : (int)strlen(p);
    if (memmem(p, (size_t)n, "Performance Loss", 16)) {
      const char *q = memmem(p, (size_t)n, "(C", 2);
      if (q) n -= (int)(q - p), p = q;
      dg_warning(c, (Loc){0}, "ptxas: %.*s", n, p);
    }
    p = e ? e + 1 : NULL;
  }
}

static bool assemble_ptxas(Ctx *c, const Buf *ptx, Buf *cubin) {
  char pbuf[4096];
  const char *ptxas = find_ptxas(c, pbuf, sizeof pbuf);
  if (!ptxas) {
    dg_plain(c, "ptxas not found: install the CUDA toolkit, set TILE_PTXAS or CUDA_HOME, or use --nvjitlink");
    return false;
  }
  const char *tmpd = getenv("TMPDIR");
  if (!tmpd || !*tmpd) tmpd = "/tmp";
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tilec-XXXXXX", tmpd);
  if (!mkdtemp(dir)) {
    dg_plain(c, "cannot create a temporary folder in %s: %s", tmpd, strerror(errno));
    return false;
  }
  char in[4200], out[4200];
  snprintf(in, sizeof in, "%s/kernel.ptx", dir);
  snprintf(out, sizeof out, "%s/kernel.cubin", dir);
  bool ok = false;
  if (!write_file(in, ptx->data, ptx->len)) {
    dg_plain(c, "cannot write %s: %s", in, strerror(errno));
  } else {
    char arch[64];
    snprintf(arch, sizeof arch, "-arch=%s", c->arch);
    char *argv[8];
    int n = 0;
    argv[n++] = (char *)ptxas;
    argv[n++] = arch;
    argv[n++] = "-v"; /* registers and spills for the compile report; the cubin's code is the same */
    if (c->opts.line_info) argv[n++] = "-lineinfo";
    argv[n++] = in;
    argv[n++] = "-o";
    argv[n++] = out;
    argv[n] = NULL;
    Buf log = {0};
    int rc = run_capture(argv, &log);
    if (rc == 0 && read_file(out, cubin)) {
      ok = true;
      perf_warnings(c, &log);
      st_parse_asm_log(c, "ptxas", log.data ? log.data : "", log.len);
    } else {
      /* keep the PTX so the failure can be reproduced */
      char keep[4200];
      snprintf(keep, sizeof keep, "%s/tilec-failed-%d.ptx", tmpd, (int)getpid());
      write_file(keep, ptx->data, ptx->len);
      Buf errs = {0};
      without_info(&log, &errs);
      if (rc < 0) dg_plain(c, "could not run %s: %s", ptxas, strerror(errno));
      else
        dg_plain(c, "ptxas failed (exit %d):\n%s  reproduce with: %s %s %s -o /dev/null", rc, errs.data ? errs.data : "",
                 ptxas, arch, keep);
      buf_free(&errs);
    }
    buf_free(&log);
  }
  unlink(in);
  unlink(out);
  rmdir(dir);
  return ok;
}

/* ---- nvJitLink (dlopen; never linked) ---- */

typedef int (*jl_create_t)(void **, uint32_t, const char **);
typedef int (*jl_add_t)(void *, int, const void *, size_t, const char *);
typedef int (*jl_complete_t)(void *);
typedef int (*jl_size_t)(void *, size_t *);
typedef int (*jl_get_t)(void *, void *);
typedef int (*jl_destroy_t)(void **);

static void *open_jitlink(void) {
  const char *names[] = {"libnvJitLink.so.13", "libnvJitLink.so", "/usr/local/cuda/lib64/libnvJitLink.so.13"};
  for (int i = 0; i < 3; i++) {
    void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
  }
  return NULL;
}

static bool assemble_nvjitlink(Ctx *c, const Buf *ptx, Buf *cubin) {
  void *lib = open_jitlink();
  if (!lib) {
    dg_plain(c, "libnvJitLink.so.13 could not be loaded (%s); use ptxas instead", dlerror());
    return false;
  }
  jl_create_t create = (jl_create_t)dlsym(lib, "__nvJitLinkCreate_13_0");
  jl_add_t add = (jl_add_t)dlsym(lib, "__nvJitLinkAddData_13_0");
  jl_complete_t complete = (jl_complete_t)dlsym(lib, "__nvJitLinkComplete_13_0");
  jl_size_t csize = (jl_size_t)dlsym(lib, "__nvJitLinkGetLinkedCubinSize_13_0");
  jl_get_t cget = (jl_get_t)dlsym(lib, "__nvJitLinkGetLinkedCubin_13_0");
  jl_size_t lsize = (jl_size_t)dlsym(lib, "__nvJitLinkGetErrorLogSize_13_0");
  jl_get_t lget = (jl_get_t)dlsym(lib, "__nvJitLinkGetErrorLog_13_0");
  jl_size_t isize = (jl_size_t)dlsym(lib, "__nvJitLinkGetInfoLogSize_13_0");
  jl_get_t iget = (jl_get_t)dlsym(lib, "__nvJitLinkGetInfoLog_13_0");
  jl_destroy_t destroy = (jl_destroy_t)dlsym(lib, "__nvJitLinkDestroy_13_0");
  bool ok = false;
  if (!create || !add || !complete || !csize || !cget || !destroy) {
    dg_plain(c, "libnvJitLink lacks the 13.0 entry points");
    dlclose(lib);
    return false;
  }
  char arch[64];
  snprintf(arch, sizeof arch, "-arch=%s", c->arch);
  /* -verbose: ptxas's resource report in the info log, for the compile report */
  const char *opts[3] = {arch, "-verbose", "-lineinfo"};
  void *h = NULL;
  if (create(&h, c->opts.line_info ? 3 : 2, opts) == 0 && add(h, 2 /* PTX */, ptx->data, ptx->len, "tile") == 0 &&
      complete(h) == 0) {
    size_t n = 0;
    if (csize(h, &n) == 0) {
      char *mem = malloc(n ? n : 1);
      if (mem && cget(h, mem) == 0) {
        buf_put(cubin, mem, n);
        ok = !cubin->failed;
      }
      free(mem);
    }
    size_t ln = 0;
    char *info = NULL;
    if (ok && isize && iget && isize(h, &ln) == 0 && (info = malloc(ln + 1)) && iget(h, info) == 0) {
      info[ln] = 0;
      Buf log = {0};
      buf_puts(&log, info);
      /* e.g. C7504: nvJitLink ignores setmaxnreg, so warp-specialized
       * kernels lose their tasks' register budgets */
      perf_warnings(c, &log);
      buf_free(&log);
      st_parse_asm_log(c, "nvJitLink", info, strlen(info));
    }
    free(info);
  }
  if (!ok) {
    size_t n = 0;
    char *log = NULL;
    if (h && lsize && lget && lsize(h, &n) == 0 && (log = malloc(n + 1)) && lget(h, log) == 0) log[n] = 0;
    dg_plain(c, "nvJitLink failed: %s", log && *log ? log : "(no log)");
    free(log);
  }
  if (h) destroy(&h);
  dlclose(lib);
  return ok;
}

/* ---- the pipeline behind lowering ---- */

/* The MLIR passes, created directly (no global pass registry):
 * structured control flow and arith/nvvm ops down to the llvm dialect, then
 * cleanup, then a debug-info scope per function so that the op locations
 * become PTX .loc directives. */
static bool run_pipeline(Ctx *c, MlirContext mc, MlirModule mod, DiagCapture *dc) {
  MlirPassManager pm = mlirPassManagerCreate(mc);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  mlirPassManagerAddOwnedPass(pm, mlirCreateConversionSCFToControlFlowPass());
  mlirPassManagerAddOwnedPass(pm, mlirCreateConversionArithToLLVMConversionPass());
  mlirPassManagerAddOwnedPass(pm, mlirCreateConversionConvertControlFlowToLLVMPass());
  mlirPassManagerAddOwnedPass(pm, mlirCreateConversionConvertNVVMToLLVMPass());
  mlirPassManagerAddOwnedPass(pm, mlirCreateConversionReconcileUnrealizedCastsPass());
  mlirPassManagerAddOwnedPass(pm, mlirCreateTransformsCanonicalizer());
  mlirPassManagerAddOwnedPass(pm, mlirCreateTransformsCSE());
  bool ok = true;
  if (c->opts.line_info) {
    Buf err = {0};
    const char *p = "ensure-debug-info-scope-on-llvm-func{emission-kind=DebugDirectivesOnly}";
    ok = !mlirLogicalResultIsFailure(mlirOpPassManagerAddPipeline(opm, mlirStringRefCreateFromCString(p), to_buf, &err));
    if (!ok) dg_ice(c, (Loc){0}, "bad MLIR pass pipeline: %s", err.data ? err.data : "");
    buf_free(&err);
  } else {
    mlirPassManagerAddOwnedPass(pm, mlirCreateTransformsStripDebugInfo());
  }
  if (ok && mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(mod)))) {
    dg_ice(c, (Loc){0}, "the MLIR pass pipeline failed:\n%s", dc->text.data ? dc->text.data : "");
    ok = false;
  }
  mlirPassManagerDestroy(pm);
  return ok;
}

/* The inline asm that is a warp- or CTA-wide collective is convergent:
 * bar.sync/bar.arrive/bar.red, the wgmma fence/commit/wait (and the empty
 * asm that pins wgmma operands), redux.sync, elect, shuffles, votes, the
 * mbarrier waits, setmaxnreg. MLIR's llvm.inline_asm has no way to say so,
 * and without it LLVM's optimizer may sink one into both arms of a branch
 * that only one elected thread takes (a bar.sync after an mbarrier arrive:
 * the warp then reaches two different bar.sync instructions and the kernel
 * hangs). The call-site attribute forbids that; the NVVM intrinsics carry
 * it already. Per-thread asm (a predicated load, a mov) stays free, so
 * loops around it can still be unrolled. */
static bool asm_is_collective(const char *t, size_t n) {
  static const char *const keys[] = {"bar.", "barrier", ".sync", "wgmma", "mbarrier.try_wait", "mbarrier.test_wait",
                                     "setmaxnreg", "elect", ".aligned"};
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    size_t kl = strlen(keys[k]);
    for (size_t i = 0; i + kl <= n; i++)
      if (!memcmp(t + i, keys[k], kl)) return true;
  }
  return false;
}

static void mark_asm_convergent(LLVMModuleRef lm, LLVMContextRef lc) {
  unsigned kind = LLVMGetEnumAttributeKindForName("convergent", 10);
  LLVMAttributeRef conv = LLVMCreateEnumAttribute(lc, kind, 0);
  for (LLVMValueRef f = LLVMGetFirstFunction(lm); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
        if (LLVMGetInstructionOpcode(i) != LLVMCall) continue;
        LLVMValueRef callee = LLVMGetCalledValue(i);
        if (!LLVMIsAInlineAsm(callee)) continue;
        size_t n = 0;
        const char *t = LLVMGetInlineAsmAsmString(callee, &n);
        if (t && asm_is_collective(t, n)) LLVMAddCallSiteAttribute(i, LLVMAttributeFunctionIndex, conv);
      }
}

/* The tasks of a kernel name the shared-memory base in inline asm
 * (`mov.u64 %r, tile_smem`, lower.c), which LLVM does not see as a use: in
 * a kernel with no other shared memory it would delete the global and
 * ptxas would meet an unknown symbol. llvm.used keeps it. */
static void keep_smem_global(LLVMModuleRef lm, LLVMContextRef lc) {
  LLVMValueRef g = LLVMGetNamedGlobal(lm, "tile_smem");
  if (!g) return;
  LLVMTypeRef pt = LLVMPointerTypeInContext(lc, 0);
  LLVMValueRef e = LLVMConstAddrSpaceCast(g, pt);
  LLVMValueRef used = LLVMAddGlobal(lm, LLVMArrayType2(pt, 1), "llvm.used");
  LLVMSetLinkage(used, LLVMAppendingLinkage);
  LLVMSetSection(used, "llvm.metadata");
  LLVMSetInitializer(used, LLVMConstArray2(pt, &e, 1));
}

static bool to_llvm(Ctx *c, MlirModule mod, tilec_emit emit, BackendOut *out, DiagCapture *dc) {
  double t = st_now();
  LLVMContextRef lc = LLVMContextCreate();
  LLVMModuleRef lm = mlirTranslateModuleToLLVMIR(mlirModuleGetOperation(mod), lc);
  bool ok = lm != NULL;
  if (!ok) dg_ice(c, (Loc){0}, "translation to LLVM IR failed:\n%s", dc->text.data ? dc->text.data : "");
  if (ok) {
    mark_asm_convergent(lm, lc);
    keep_smem_global(lm, lc);
  }
  LLVMTargetMachineRef tm = NULL;
  if (ok) {
    const char *triple = "nvptx64-nvidia-cuda";
    LLVMSetTarget(lm, triple);
    LLVMTargetRef tg;
    char *err = NULL;
    if (LLVMGetTargetFromTriple(triple, &tg, &err)) {
      dg_ice(c, (Loc){0}, "NVPTX target unavailable: %s", err ? err : "");
      LLVMDisposeMessage(err);
      ok = false;
    } else {
      const char *features = c->sm >= 100 ? "+ptx88" : "+ptx86";
      LLVMCodeGenOptLevel lvl = c->opts.opt_level >= 3 ? LLVMCodeGenLevelAggressive
                                : c->opts.opt_level == 2 ? LLVMCodeGenLevelDefault
                                : c->opts.opt_level == 1 ? LLVMCodeGenLevelLess
                                                         : LLVMCodeGenLevelNone;
      tm = LLVMCreateTargetMachine(tg, triple, c->arch, features, lvl, LLVMRelocDefault, LLVMCodeModelDefault);
      LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
      LLVMSetModuleDataLayout(lm, dl);
      LLVMDisposeTargetData(dl);
      char passes[32];
      snprintf(passes, sizeof passes, "default<O%d>", c->opts.opt_level);
      LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
      LLVMErrorRef e = LLVMRunPasses(lm, passes, tm, po);
      LLVMDisposePassBuilderOptions(po);
      if (e) {
        char *m = LLVMGetErrorMessage(e);
        dg_ice(c, (Loc){0}, "LLVM optimization failed: %s", m);
        LLVMDisposeErrorMessage(m);
        ok = false;
      }
    }
  }
  st_time(c, ST_LLVM, t);
  t = st_now();
  if (ok && emit == TILEC_EMIT_LLVM) {
    char *s = LLVMPrintModuleToString(lm);
    buf_puts(&out->llvm, s);
    LLVMDisposeMessage(s);
  }
  if (ok && emit >= TILEC_EMIT_PTX) {
    LLVMMemoryBufferRef mb;
    char *err = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, lm, LLVMAssemblyFile, &err, &mb)) {
      dg_ice(c, (Loc){0}, "PTX emission failed: %s", err ? err : "");
      LLVMDisposeMessage(err);
      ok = false;
    } else {
      buf_put(&out->ptx, LLVMGetBufferStart(mb), LLVMGetBufferSize(mb));
      LLVMDisposeMemoryBuffer(mb);
    }
    st_time(c, ST_PTX, t);
  }
  if (tm) LLVMDisposeTargetMachine(tm);
  if (lm) LLVMDisposeModule(lm);
  LLVMContextDispose(lc);
  return ok;
}

bool lw_lower_and_compile(Ctx *c, TModule *m, tilec_emit emit, BackendOut *out) {
  pthread_once(&init_once, init_globals);
  MlirDialectRegistry reg = mlirDialectRegistryCreate();
  MlirDialectHandle dialects[] = {mlirGetDialectHandle__arith__(), mlirGetDialectHandle__scf__(),
                                  mlirGetDialectHandle__cf__(), mlirGetDialectHandle__llvm__(),
                                  mlirGetDialectHandle__nvvm__()};
  for (size_t i = 0; i < sizeof dialects / sizeof dialects[0]; i++) mlirDialectHandleInsertDialect(dialects[i], reg);
  MlirContext mc = mlirContextCreateWithRegistry(reg, false);
  mlirDialectRegistryDestroy(reg);
  mlirContextLoadAllAvailableDialects(mc);
  mlirRegisterAllLLVMTranslations(mc);
  DiagCapture dc = {0};
  MlirDiagnosticHandlerID hid = mlirContextAttachDiagnosticHandler(mc, on_diag, &dc, NULL);
  MlirModule mod;
  double t = st_now();
  bool ok = lw_build_module(c, m, mc, &mod);
  if (ok && !mlirOperationVerify(mlirModuleGetOperation(mod))) {
    dg_ice(c, (Loc){0}, "the generated MLIR does not verify:\n%s", dc.text.data ? dc.text.data : "");
    ok = false;
  }
  st_time(c, ST_LOWER, t);
  if (emit == TILEC_EMIT_MLIR || (!ok && getenv("TILEC_DUMP_MLIR"))) {
    MlirOpPrintingFlags fl = mlirOpPrintingFlagsCreate();
    mlirOpPrintingFlagsEnableDebugInfo(fl, c->opts.line_info && emit == TILEC_EMIT_MLIR && getenv("TILEC_MLIR_LOC"),
                                       false);
    mlirOperationPrintWithFlags(mlirModuleGetOperation(mod), fl, to_buf, &out->mlir);
    mlirOpPrintingFlagsDestroy(fl);
    if (!ok && getenv("TILEC_DUMP_MLIR")) fprintf(stderr, "%s\n", out->mlir.data ? out->mlir.data : "");
  }
  if (ok && emit > TILEC_EMIT_MLIR) {
    t = st_now();
    ok = run_pipeline(c, mc, mod, &dc);
    st_time(c, ST_MLIR, t);
  }
  if (ok && emit > TILEC_EMIT_MLIR) ok = to_llvm(c, mod, emit, out, &dc);
  if (ok && emit == TILEC_EMIT_CUBIN) {
    Buf carried = {0}; /* --embed-ptx: the PTX plus a global holding the PTX's own text */
    const Buf *ptx = &out->ptx;
    if (c->opts.embed_ptx) {
      embed_ptx(&out->ptx, &carried);
      ptx = &carried;
    }
    t = st_now();
    ok = c->opts.use_nvjitlink ? assemble_nvjitlink(c, ptx, &out->cubin) : assemble_ptxas(c, ptx, &out->cubin);
    st_time(c, ST_ASM, t);
    buf_free(&carried);
  }
  if (!mlirModuleIsNull(mod)) mlirModuleDestroy(mod);
  mlirContextDetachDiagnosticHandler(mc, hid);
  mlirContextDestroy(mc);
  buf_free(&dc.text);
  return ok;
}

/* ---- versions for cache keys ---- */

static pthread_mutex_t ver_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char path[1024];
  char ver[128];
} ver_cache[8];
static int ver_count;

int tilec_assembler_version(const tilec_options *opts, char *buf, size_t cap) {
  tilec_options o;
  if (opts) o = *opts;
  else memset(&o, 0, sizeof o); /* what matters here defaults to zero: ptxas, found as usual */
  if (o.use_nvjitlink) {
    void *lib = open_jitlink();
    if (!lib) return -1;
    int (*ver)(unsigned *, unsigned *) = (int (*)(unsigned *, unsigned *))dlsym(lib, "nvJitLinkVersion");
    unsigned ma = 0, mi = 0;
    if (ver) ver(&ma, &mi);
    snprintf(buf, cap, "nvJitLink %u.%u", ma, mi);
    dlclose(lib);
    return 0;
  }
  Ctx c = {0};
  c.opts = o;
  char pbuf[4096];
  const char *p = find_ptxas(&c, pbuf, sizeof pbuf);
  if (!p) return -1;
  pthread_mutex_lock(&ver_lock);
  for (int i = 0; i < ver_count; i++)
    if (!strcmp(ver_cache[i].path, p)) {
      snprintf(buf, cap, "%s", ver_cache[i].ver);
      pthread_mutex_unlock(&ver_lock);
      return 0;
    }
  pthread_mutex_unlock(&ver_lock);
  char *argv[] = {(char *)p, "--version", NULL};
  Buf out = {0};
  int rc = run_capture(argv, &out);
  if (rc != 0 || !out.data) {
    buf_free(&out);
    return -1;
  }
  /* the last non-empty line: "Build cuda_13.0.r13.0/compiler.36424714_0" */
  char *last = NULL, *save = NULL;
  for (char *l = strtok_r(out.data, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    if (*l) last = l;
  snprintf(buf, cap, "ptxas %s", last ? last : "?");
  pthread_mutex_lock(&ver_lock);
  if (ver_count < 8) {
    snprintf(ver_cache[ver_count].path, sizeof ver_cache[0].path, "%s", p);
    snprintf(ver_cache[ver_count].ver, sizeof ver_cache[0].ver, "%s", buf);
    ver_count++;
  }
  pthread_mutex_unlock(&ver_lock);
  buf_free(&out);
  return 0;
}

/* emu_cuda.c - the driver table (rt_cu) backed by the emulator (emu/), for
 * TILE_INTERPRET=1: the runtime's checks and paths stay the same, only the
 * driver under them is the CPU.
 *
 * Device memory is host memory (malloc), its ranges kept in a locked list
 * that every launch hands the emulator, so that a kernel touching memory
 * it was not given is stopped with a report. Streams and events are
 * synchronous (elapsed time 0). A module is a cubin that carries its PTX
 * (tilec --embed-ptx: the global __tile_ptx), or PTX text itself (the
 * JIT's, through tile_module_load_ptx), parsed once. A launch packs
 * the parameters by the PTX's own parameter list and runs the grid; its
 * report comes back through cuGetErrorString. Tensor maps are the
 * emulator's own encoding (emu/tma.c). A cluster launch (cuLaunchKernelEx's
 * cluster dimension) runs each cluster's CTAs co-scheduled (emu/cluster.c).
 *
 * Every launch reads TILE_EMU_SEED (the schedule: round-robin, random or
 * adversarial, and its seed; the reports print it, so a failure replays)
 * TILE_EMU_CHECKS (0: the shared-memory checks off) and TILE_EMU_CTA_TURN
 * (N: the CTAs take turns of N rounds instead of running one after
 * another): docs/emulator.md.
 */
#include <pthread.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../emu/emu.h"
#include "rt.h"

enum { EMU_ERR_LAUNCH = 719 /* CUDA_ERROR_LAUNCH_FAILED */, EMU_ERR_UNSUPPORTED = 801 /* NOT_SUPPORTED */,
       EMU_ERR_NO_BINARY = 209 /* NO_BINARY_FOR_GPU */, EMU_ERR_OOM = 2 /* OUT_OF_MEMORY */ };

static _Thread_local char emu_msg[2048]; /* the last failure's report, for cuGetErrorString */

static CUresult emu_err(CUresult r, const char *fmt, const char *arg) {
  snprintf(emu_msg, sizeof emu_msg, fmt, arg ? arg : "");
  return r;
}

/* ---- memory: host blocks and their ranges ---- */

static pthread_mutex_t emu_lock = PTHREAD_MUTEX_INITIALIZER;
static EmRange *emu_ranges;
static int emu_nranges, emu_cap;

static CUresult emu_alloc(CUdeviceptr *p, size_t bytes) {
  void *m = calloc(1, bytes ? bytes : 1);
  if (!m) return emu_err(EMU_ERR_OOM, "out of host memory for the emulated device%s", NULL);
  pthread_mutex_lock(&emu_lock);
  if (emu_nranges == emu_cap) {
    int cap = emu_cap ? 2 * emu_cap : 64;
    EmRange *r = realloc(emu_ranges, sizeof *r * (size_t)cap);
    if (!r) {
      pthread_mutex_unlock(&emu_lock);
      free(m);
      return emu_err(EMU_ERR_OOM, "out of host memory for the emulated device%s", NULL);
    }
    emu_ranges = r, emu_cap = cap;
  }
  emu_ranges[emu_nranges++] = (EmRange){m, bytes};
  pthread_mutex_unlock(&emu_lock);
  *p = (CUdeviceptr)(uintptr_t)m;
  return CUDA_SUCCESS;
}

static CUresult emu_free(CUdeviceptr p) {
  pthread_mutex_lock(&emu_lock);
  for (int i = 0; i < emu_nranges; i++)
    if ((CUdeviceptr)(uintptr_t)emu_ranges[i].base == p) {
      free((void *)emu_ranges[i].base);
      emu_ranges[i] = emu_ranges[--emu_nranges];
      pthread_mutex_unlock(&emu_lock);
      return CUDA_SUCCESS;
    }
  pthread_mutex_unlock(&emu_lock);
  return emu_err(CUDA_ERROR_INVALID_VALUE, "cuMemFree of an address the emulator did not allocate%s", NULL);
}

/* Is [p, p + n) inside one allocation? */
static bool emu_owned(CUdeviceptr p, size_t n) {
  bool ok = false;
  pthread_mutex_lock(&emu_lock);
  for (int i = 0; i < emu_nranges && !ok; i++) {
    uint64_t b = (uint64_t)(uintptr_t)emu_ranges[i].base;
    ok = p >= b && n <= emu_ranges[i].bytes && p - b <= emu_ranges[i].bytes - n;
  }
  pthread_mutex_unlock(&emu_lock);
  return ok;
}

#define EMU_OWNED(p, n, what)                                                                     \
  do {                                                                                            \
    if (!emu_owned((p), (n))) return emu_err(CUDA_ERROR_INVALID_VALUE, "%s outside every allocation", what); \
  } while (0)

static CUresult emu_htod(CUdeviceptr d, const void *s, size_t n) {
  EMU_OWNED(d, n, "cuMemcpyHtoD");
  memcpy((void *)(uintptr_t)d, s, n);
  return CUDA_SUCCESS;
}
static CUresult emu_dtoh(void *d, CUdeviceptr s, size_t n) {
  EMU_OWNED(s, n, "cuMemcpyDtoH");
  memcpy(d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult emu_dtod(CUdeviceptr d, CUdeviceptr s, size_t n) {
  EMU_OWNED(d, n, "cuMemcpyDtoD");
  EMU_OWNED(s, n, "cuMemcpyDtoD");
  memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult emu_set8(CUdeviceptr d, unsigned char v, size_t n) {
  EMU_OWNED(d, n, "cuMemsetD8");
  memset((void *)(uintptr_t)d, v, n);
  return CUDA_SUCCESS;
}
static CUresult emu_set32(CUdeviceptr d, unsigned v, size_t n) {
  if (n > SIZE_MAX / 4) return emu_err(CUDA_ERROR_INVALID_VALUE, "cuMemsetD32: too many words%s", NULL);
  EMU_OWNED(d, n * 4, "cuMemsetD32");
  uint32_t *w = (uint32_t *)(uintptr_t)d;
  for (size_t i = 0; i < n; i++) w[i] = v;
  return CUDA_SUCCESS;
}
static CUresult emu_set32_async(CUdeviceptr d, unsigned v, size_t n, CUstream s) {
  (void)s;
  return emu_set32(d, v, n);
}
static CUresult emu_htod_async(CUdeviceptr d, const void *s, size_t n, CUstream st) {
  (void)st;
  return emu_htod(d, s, n);
}
/* page-locked host memory is plain host memory here (copies are synchronous) */
static CUresult emu_host_alloc(void **p, size_t bytes) {
  *p = malloc(bytes ? bytes : 1);
  return *p ? CUDA_SUCCESS : emu_err(EMU_ERR_OOM, "out of host memory%s", NULL);
}
static CUresult emu_host_free(void *p) {
  free(p);
  return CUDA_SUCCESS;
}

/* ---- device, context, streams, events: one synchronous CPU device ---- */

static CUresult emu_ok0(void) { return CUDA_SUCCESS; }
static CUresult emu_init(unsigned f) { (void)f; return CUDA_SUCCESS; }
static CUresult emu_version(int *v) { *v = 13000; return CUDA_SUCCESS; }
static CUresult emu_count(int *n) { *n = 1; return CUDA_SUCCESS; }
static CUresult emu_dev_get(CUdevice *d, int i) { *d = i; return i == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
/* TILE_EMU_ARCH=sm_100a: the emulated device says it is a Blackwell
 * (compute capability 10.0, 148 SMs as the B200), so that a library that
 * picks its cubins by the device's target (examples/jagged_attention/jfa.c)
 * picks the sm_100a ones; unset, empty or sm_90a: a Hopper (9.0, 132 SMs,
 * as the H200). The emulator runs either target's PTX whatever it says. */
static bool emu_blackwell(void) {
  const char *a = getenv("TILE_EMU_ARCH");
  return a && !strcmp(a, "sm_100a");
}
static CUresult emu_name(char *n, int len, CUdevice d) {
  (void)d;
  snprintf(n, (size_t)len, "Tile emulator (CPU, %s)", emu_blackwell() ? "sm_100a" : "sm_90a");
  return CUDA_SUCCESS;
}
static CUresult emu_attr(int *v, int a, CUdevice d) {
  (void)d;
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 0x7fffffff; break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = emu_blackwell() ? 148 : 132; break; /* as the H200, so schedules match */
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 50 << 20; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = emu_blackwell() ? 10 : 9; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 227 * 1024; break;
  default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}
static CUresult emu_total(size_t *b, CUdevice d) { (void)d; *b = (size_t)1 << 36; return CUDA_SUCCESS; }
static struct CUctx_st *emu_ctx_tag(void) { static char tag; return (struct CUctx_st *)(void *)&tag; }
static CUresult emu_retain(CUcontext *c, CUdevice d) { (void)d; *c = emu_ctx_tag(); return CUDA_SUCCESS; }
static CUresult emu_release(CUdevice d) { (void)d; return CUDA_SUCCESS; }
static CUresult emu_ctx_set(CUcontext c) { (void)c; return CUDA_SUCCESS; }
static CUresult emu_ctx_get(CUcontext *c) { *c = emu_ctx_tag(); return CUDA_SUCCESS; }
static CUresult emu_ctx_pop(CUcontext *c) { if (c) *c = emu_ctx_tag(); return CUDA_SUCCESS; }
static CUresult emu_stream_create(CUstream *s, unsigned f) {
  (void)f;
  *s = (CUstream)calloc(1, 1);
  return *s ? CUDA_SUCCESS : EMU_ERR_OOM;
}
static CUresult emu_stream_destroy(CUstream s) { free(s); return CUDA_SUCCESS; }
static CUresult emu_stream_sync(CUstream s) { (void)s; return CUDA_SUCCESS; }
static CUresult emu_event_create(CUevent *e, unsigned f) {
  (void)f;
  *e = (CUevent)calloc(1, 1);
  return *e ? CUDA_SUCCESS : EMU_ERR_OOM;
}
static CUresult emu_event_destroy(CUevent e) { free(e); return CUDA_SUCCESS; }
static CUresult emu_event_record(CUevent e, CUstream s) { (void)e, (void)s; return CUDA_SUCCESS; }
static CUresult emu_event_sync(CUevent e) { (void)e; return CUDA_SUCCESS; }
static CUresult emu_stream_wait(CUstream s, CUevent e, unsigned f) { (void)s, (void)e, (void)f; return CUDA_SUCCESS; }
static CUresult emu_elapsed(float *ms, CUevent a, CUevent b) { (void)a, (void)b; *ms = 0; return CUDA_SUCCESS; }

static CUresult emu_err_name(CUresult r, const char **s) {
  *s = r == EMU_ERR_LAUNCH ? "CUDA_ERROR_LAUNCH_FAILED (emulator)"
       : r == EMU_ERR_UNSUPPORTED ? "CUDA_ERROR_NOT_SUPPORTED (emulator)"
       : r == EMU_ERR_NO_BINARY ? "CUDA_ERROR_NO_BINARY_FOR_GPU (emulator)"
       : "emulator error";
  return CUDA_SUCCESS;
}
static CUresult emu_err_string(CUresult r, const char **s) {
  (void)r;
  *s = emu_msg[0] ? emu_msg : "no report";
  return CUDA_SUCCESS;
}

/* ---- modules and launches ---- */

struct CUfunc_st {
  const EmModule *m;
  const EmFunc *f;
  unsigned regs; /* the cubin's register count for it (0: PTX text, or not said): the setmaxnreg pool */
};
struct CUmod_st {
  EmModule *m;
  struct CUfunc_st *fns; /* one handle per function, freed with the module */
};

/* The extent of an ELF64 image the runtime has already validated (the
 * driver's entry point gets no size): the furthest end of its headers,
 * sections and segments. */
static size_t elf_extent(const unsigned char *d) {
  uint64_t shoff, end;
  uint16_t shentsize, shnum;
  memcpy(&shoff, d + 0x28, 8);
  memcpy(&shentsize, d + 0x3a, 2);
  memcpy(&shnum, d + 0x3c, 2);
  end = shoff + (uint64_t)shentsize * shnum;
  for (unsigned i = 0; i < shnum; i++) {
    const unsigned char *sh = d + shoff + (uint64_t)i * shentsize;
    uint32_t type;
    uint64_t off, size;
    memcpy(&type, sh + 4, 4);
    memcpy(&off, sh + 0x18, 8);
    memcpy(&size, sh + 0x20, 8);
    if (type != 8 /* SHT_NOBITS */ && off + size > end) end = off + size;
  }
  uint64_t phoff; /* and of its program headers and segments */
  uint16_t phentsize, phnum;
  memcpy(&phoff, d + 0x20, 8);
  memcpy(&phentsize, d + 0x36, 2);
  memcpy(&phnum, d + 0x38, 2);
  if (phoff + (uint64_t)phentsize * phnum > end) end = phoff + (uint64_t)phentsize * phnum;
  for (unsigned i = 0; i < phnum; i++) {
    uint64_t off, filesz;
    memcpy(&off, d + phoff + (uint64_t)i * phentsize + 0x08, 8);
    memcpy(&filesz, d + phoff + (uint64_t)i * phentsize + 0x20, 8);
    if (off + filesz > end) end = off + filesz;
  }
  return (size_t)end;
}

/* The bytes of the section called `name` (NULL when there is none). */
static const unsigned char *elf_section(const unsigned char *d, const char *name, size_t *len) {
  uint64_t shoff;
  uint16_t shentsize, shnum, shstrndx;
  memcpy(&shoff, d + 0x28, 8);
  memcpy(&shentsize, d + 0x3a, 2);
  memcpy(&shnum, d + 0x3c, 2);
  memcpy(&shstrndx, d + 0x3e, 2);
  if (shstrndx >= shnum) return NULL;
  uint64_t stroff;
  memcpy(&stroff, d + shoff + (uint64_t)shstrndx * shentsize + 0x18, 8);
  for (unsigned i = 0; i < shnum; i++) {
    const unsigned char *sh = d + shoff + (uint64_t)i * shentsize;
    uint32_t nm;
    uint64_t off, size;
    memcpy(&nm, sh, 4);
    memcpy(&off, sh + 0x18, 8);
    memcpy(&size, sh + 0x20, 8);
    if (!strcmp((const char *)d + stroff + nm, name)) {
      *len = (size_t)size;
      return d + off;
    }
  }
  return NULL;
}

/* The module's PTX: tilec --embed-ptx's __tile_ptx (with the .loc lines
 * that name Tile lines in reports), else the copy ptxas keeps in every cubin
 * built with line information (.nv_debug_ptx_txt: lines separated by NULs,
 * .loc and .file dropped, so reports name PTX lines only). A malloc'd
 * NUL-terminated string, or NULL. */
static char *module_ptx(const void *image, size_t *n) {
  rt_elf elf;
  rt_elf_sym sym;
  const unsigned char *bytes = NULL;
  size_t extent = elf_extent(image), len = 0;
  if (rt_elf_open(&elf, image, extent) != TILE_OK) return NULL;
  if (rt_elf_find_symbol(&elf, "__tile_ptx", &sym) &&
      rt_elf_symbol_bytes(&elf, "__tile_ptx", &sym, &bytes) == TILE_OK) {
    const unsigned char *nul = memchr(bytes, 0, sym.size);
    len = nul ? (size_t)(nul - bytes) : (size_t)sym.size;
  } else if ((bytes = elf_section(image, ".nv_debug_ptx_txt", &len)) == NULL) {
    return NULL;
  }
  char *text = malloc(len + 1);
  if (!text) return NULL;
  for (size_t i = 0; i < len; i++) text[i] = bytes[i] ? (char)bytes[i] : '\n';
  text[len] = 0;
  *n = len;
  return text;
}

static CUresult emu_load(CUmodule *out, const void *image) {
  size_t n = 0;
  /* a cubin (ELF) carries its PTX; anything else is PTX text, NUL-terminated
   * (tile_module_load_ptx: the JIT's, produced in process) */
  bool elf = !strncmp(image, "\x7f" "ELF", 4);
  char *text = !elf ? strdup(image) : module_ptx(image, &n);
  if (text && !n) n = strlen(text);
  if (!text)
    return emu_err(EMU_ERR_NO_BINARY,
                   "the cubin carries no PTX for the emulator: build it with line information (the default) "
                   "or tilec --embed-ptx (TILE_INTERPRET=1, docs/emulator.md)%s", NULL);
  struct CUmod_st *m = calloc(1, sizeof *m);
  if (!m) {
    free(text);
    return EMU_ERR_OOM;
  }
  bool ok = em_ptx_parse(text, n, &m->m, emu_msg, sizeof emu_msg);
  free(text);
  if (ok && !(m->fns = calloc((size_t)m->m->nfuncs + 1, sizeof *m->fns))) {
    em_module_free(m->m);
    ok = false;
  }
  if (!ok) {
    free(m);
    return EMU_ERR_NO_BINARY;
  }
  rt_elf e;
  bool have = elf && rt_elf_open(&e, image, elf_extent(image)) == TILE_OK;
  for (int i = 0; i < m->m->nfuncs; i++)
    m->fns[i] = (struct CUfunc_st){m->m, &m->m->funcs[i], have ? rt_elf_regcount(&e, m->m->funcs[i].name) : 0};
  *out = m;
  return CUDA_SUCCESS;
}

static CUresult emu_unload(CUmodule m) {
  if (m) {
    em_module_free(m->m);
    free(m->fns);
  }
  free(m);
  return CUDA_SUCCESS;
}

static CUresult emu_get_function(CUfunction *out, CUmodule m, const char *name) {
  const EmFunc *f = em_find_func(m->m, name);
  if (!f || !f->entry) return emu_err(CUDA_ERROR_NOT_FOUND, "no kernel named %s in the module", name);
  *out = &m->fns[f - m->m->funcs];
  return CUDA_SUCCESS;
}

static CUresult emu_func_set(CUfunction f, int a, int v) { (void)f, (void)a, (void)v; return CUDA_SUCCESS; }
static CUresult emu_func_get(int *v, int a, CUfunction f) { (void)a, (void)f; *v = 0; return CUDA_SUCCESS; }

/* TILE_EMU_SEED: unset, empty, "rr" or "0": round-robin; "N": random with
 * seed N; "random:N", "adversarial:N" (or "adv:N"). False for anything else. */
static bool emu_schedule(EmLaunch *l) {
  const char *v = getenv("TILE_EMU_SEED"), *num = v;
  l->sched = EM_SCHED_RR, l->seed = 0;
  if (!v || !*v || !strcmp(v, "rr")) return true;
  if (!strncmp(v, "random:", 7)) l->sched = EM_SCHED_RANDOM, num = v + 7;
  else if (!strncmp(v, "adversarial:", 12)) l->sched = EM_SCHED_ADVERSARIAL, num = v + 12;
  else if (!strncmp(v, "adv:", 4)) l->sched = EM_SCHED_ADVERSARIAL, num = v + 4;
  char *end;
  if (*num < '0' || *num > '9') return false;
  l->seed = strtoull(num, &end, 10);
  if (*end) return false;
  if (l->sched == EM_SCHED_RR && l->seed) l->sched = EM_SCHED_RANDOM;
  return true;
}

static CUresult emu_run(CUfunction fn, const unsigned g[3], const unsigned b[3], const unsigned cl[3], unsigned smem,
                        void **params, bool pdl) {
  const EmFunc *f = fn->f;
  EmLaunch l = {.kernel = f->name, .grid = {g[0], g[1], g[2]}, .block = {b[0], b[1], b[2]}, .dyn_smem = smem,
                .cluster = {cl[0], cl[1], cl[2]}, .regs = fn->regs, .pdl = pdl};
  if (!emu_schedule(&l))
    return emu_err(CUDA_ERROR_INVALID_VALUE,
                   "TILE_EMU_SEED=%s: expected rr, a number (a random schedule's seed), random:N or adversarial:N",
                   getenv("TILE_EMU_SEED"));
  const char *chk = getenv("TILE_EMU_CHECKS");
  l.no_checks = chk && !strcmp(chk, "0");
  const char *turn = getenv("TILE_EMU_CTA_TURN"); /* N: the CTAs take turns of N rounds (sched.c) */
  if (turn && *turn) {
    char *end;
    unsigned long r = strtoul(turn, &end, 10);
    if (*end || *turn < '0' || *turn > '9' || r > 1000000)
      return emu_err(CUDA_ERROR_INVALID_VALUE, "TILE_EMU_CTA_TURN=%s: expected a number of rounds (0: off)", turn);
    l.cta_turn = (unsigned)r;
  }
  unsigned char *buf = calloc(1, f->param_bytes + 8);
  if (!buf) return EMU_ERR_OOM;
  for (int i = 0; i < f->nparams; i++) memcpy(buf + f->params[i].offset, params[i], f->params[i].size);
  pthread_mutex_lock(&emu_lock);
  int n = emu_nranges;
  EmRange *rg = malloc(sizeof *rg * (size_t)(n ? n : 1));
  if (rg) memcpy(rg, emu_ranges, sizeof *rg * (size_t)n);
  pthread_mutex_unlock(&emu_lock);
  if (!rg) {
    free(buf);
    return EMU_ERR_OOM;
  }
  l.params = buf, l.params_size = f->param_bytes + 8, l.ranges = rg, l.nranges = n;
  bool ok = em_launch(fn->m, &l, emu_msg, sizeof emu_msg);
  free(rg);
  free(buf);
  return ok ? CUDA_SUCCESS : EMU_ERR_LAUNCH;
}

static CUresult emu_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned smem, CUstream s, void **params, void **extra) {
  (void)s;
  if (extra) return emu_err(EMU_ERR_UNSUPPORTED, "launch parameters through `extra`%s", NULL);
  return emu_run(f, (unsigned[]){gx, gy, gz}, (unsigned[]){bx, by, bz}, (unsigned[]){1, 1, 1}, smem, params, false);
}

/* The cluster shape of CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, as tile_launch passes it (emu/cluster.c runs
 * the CTAs of a cluster co-scheduled), and programmatic stream serialization (the grid may overlap the previous
 * one: each thread's global accesses must follow its griddepcontrol.wait, memory.c checks). */
static CUresult emu_launch_ex(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra) {
  unsigned cl[3] = {1, 1, 1};
  bool pdl = false;
  for (unsigned i = 0; i < cfg->numAttrs; i++) {
    if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
      cl[0] = cfg->attrs[i].value.clusterDim.x, cl[1] = cfg->attrs[i].value.clusterDim.y,
      cl[2] = cfg->attrs[i].value.clusterDim.z;
    if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
      pdl = cfg->attrs[i].value.programmaticStreamSerializationAllowed != 0;
  }
  if (extra) return emu_err(EMU_ERR_UNSUPPORTED, "launch parameters through `extra`%s", NULL);
  return emu_run(f, (unsigned[]){cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ},
                 (unsigned[]){cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ}, cl, cfg->sharedMemBytes, params,
                 pdl);
}

static CUresult emu_occupancy(int *blocks, CUfunction f, int bs, size_t smem) {
  (void)f, (void)bs, (void)smem;
  *blocks = 1;
  return CUDA_SUCCESS;
}
/* The emulator runs every CTA of a launch at once: any number of clusters
 * is resident (tile_kernel_max_clusters). */
static CUresult emu_clusters(int *n, CUfunction f, const CUlaunchConfig *cfg) {
  (void)f, (void)cfg;
  *n = INT_MAX;
  return CUDA_SUCCESS;
}
/* The emulator's own tensor-map encoding (emu/tma.c), checked as the
 * driver checks its arguments; exec decodes it at each cp.async.bulk.tensor. */
static CUresult emu_tensor_map(CUtensorMap *map, CUtensorMapDataType dt, cuuint32_t rank, void *g,
                               const cuuint64_t *dim, const cuuint64_t *strides, const cuuint32_t *box,
                               const cuuint32_t *es, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                               CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  char why[256];
  bool unsup = false;
  if (em_tmap_encode((EmTensorMap *)(void *)map, dt, rank, g, dim, strides, box, es, il, sw, l2, oob, &unsup, why,
                     sizeof why))
    return CUDA_SUCCESS;
  return emu_err(unsup ? EMU_ERR_UNSUPPORTED : CUDA_ERROR_INVALID_VALUE, "cuTensorMapEncodeTiled: %s", why);
}

/* Fill the runtime's driver table with the emulator's. */
void rt_emu_fill(rt_cuda_api *t) {
  *t = (rt_cuda_api){
      .cuInit = emu_init, .cuDriverGetVersion = emu_version, .cuGetErrorName = emu_err_name,
      .cuGetErrorString = emu_err_string, .cuDeviceGetCount = emu_count, .cuDeviceGet = emu_dev_get,
      .cuDeviceGetName = emu_name, .cuDeviceGetAttribute = emu_attr, .cuDeviceTotalMem = emu_total,
      .cuDevicePrimaryCtxRetain = emu_retain, .cuDevicePrimaryCtxRelease = emu_release,
      .cuCtxSetCurrent = emu_ctx_set, .cuCtxGetCurrent = emu_ctx_get, .cuCtxPushCurrent = emu_ctx_set,
      .cuCtxPopCurrent = emu_ctx_pop, .cuCtxSynchronize = emu_ok0, .cuMemAlloc = emu_alloc, .cuMemFree = emu_free,
      .cuMemcpyHtoD = emu_htod, .cuMemcpyDtoH = emu_dtoh, .cuMemcpyDtoD = emu_dtod, .cuMemsetD8 = emu_set8,
      .cuMemsetD32 = emu_set32, .cuMemsetD32Async = emu_set32_async,
      .cuMemcpyHtoDAsync = emu_htod_async, .cuMemAllocHost = emu_host_alloc, .cuMemFreeHost = emu_host_free,
      .cuStreamWaitEvent = emu_stream_wait, .cuStreamCreate = emu_stream_create,
      .cuStreamDestroy = emu_stream_destroy, .cuStreamSynchronize = emu_stream_sync,
      .cuEventCreate = emu_event_create, .cuEventDestroy = emu_event_destroy, .cuEventRecord = emu_event_record,
      .cuEventSynchronize = emu_event_sync, .cuEventElapsedTime = emu_elapsed, .cuModuleLoadData = emu_load,
      .cuModuleUnload = emu_unload, .cuModuleGetFunction = emu_get_function, .cuFuncSetAttribute = emu_func_set,
      .cuFuncGetAttribute = emu_func_get, .cuLaunchKernel = emu_launch, .cuLaunchKernelEx = emu_launch_ex,
      .cuOccupancyMaxActiveBlocksPerMultiprocessor = emu_occupancy, .cuOccupancyMaxActiveClusters = emu_clusters,
      .cuTensorMapEncodeTiled = emu_tensor_map,
  };
}

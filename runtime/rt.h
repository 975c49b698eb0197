/* rt.h - internal interface shared by the runtime's source files (and by
 * runtime/jit.c, which reports its errors through rt_fail).
 *
 *   error.c   status names, the per-thread error message
 *   driver.c  loading libcuda, devices, contexts, tile_init
 *   memory.c  memory, streams, events
 *   elf.c     a bounds-checked reader for cubin ELF files
 *   meta.c    the metadata parser (docs/metadata.md)
 *   module.c  modules, kernels, tile_launch
 *   emu_cuda.c  the driver table backed by the emulator (emu/), TILE_INTERPRET=1
 */
#ifndef TILE_RT_H
#define TILE_RT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cuda_api.h"
#include "tile/runtime.h"

#if defined(__GNUC__)
#define RT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define RT_PRINTF(f, a)
#endif

/* ---- error.c ---- */

/* Capacity of the per-thread message buffer (JIT diagnostics go there too). */
#define RT_ERRMSG_CAP 16384

/* Set this thread's message (printf-style) and return s. */
tile_status rt_fail(tile_status s, const char *fmt, ...) RT_PRINTF(2, 3);
/* TILE_ERR_CUDA with "<what> failed: CUDA_ERROR_X (CUDA's description)";
 * `what` names the call, printf-style: rt_cuda_fail(r, "cuMemAlloc(%zu bytes)", n). */
tile_status rt_cuda_fail(CUresult r, const char *what, ...) RT_PRINTF(2, 3);

/* ---- driver.c ---- */

typedef struct rt_device {
  int ordinal;
  CUdevice dev;
  CUcontext ctx; /* the retained primary context */
  int cc_major, cc_minor;
} rt_device;

/* Open libcuda and cuInit, once per process.  TILE_OK, or TILE_ERR_NO_DRIVER /
 * TILE_ERR_NO_DEVICE with the message set (every time it is called). */
tile_status rt_driver_load(void);

/* A kernel of a loaded module (module.c makes them; tma.c reads info). */
struct tile_kernel {
  tile_module *module;
  CUfunction fn;
  const tile_kernel_info *info;
};
/* The derived parameters of ki (TMA descriptors, tma.c), built from the
 * caller's args into out[0 .. ki->nderived-1]. */
tile_status rt_build_derived(const tile_kernel_info *ki, void **args, tile_tma_desc *out);
/* rt_driver_load, then find this thread's device (the one it passed to
 * tile_init, else the first one any thread initialised) and make its
 * context current.  TILE_ERR_INVALID "call tile_init first" before any. */
tile_status rt_enter(rt_device **dev);
/* Make ctx current on the calling thread if it is not already. */
tile_status rt_make_current(CUcontext ctx);
/* "sm_90a", "sm_100a", "sm_XY". */
void rt_arch_name(int major, int minor, char *buf, size_t cap);

/* ---- emu_cuda.c ---- */

/* Fill the driver table with the emulator's (TILE_INTERPRET=1). */
void rt_emu_fill(rt_cuda_api *t);

/* ---- elf.c ---- */

/* A cubin whose ELF header and section table have been validated. */
typedef struct rt_elf {
  const unsigned char *data;
  size_t size;
  unsigned type;  /* e_type: ET_EXEC, ET_REL, ... */
  uint64_t shoff; /* section header table: offset, entry size, count */
  uint64_t shentsize;
  unsigned shnum;
  unsigned symtab; /* index of the SHT_SYMTAB section */
  uint64_t nsyms;
} rt_elf;

typedef struct rt_elf_sym {
  unsigned char type; /* STT_* */
  unsigned shndx;
  uint64_t value, size;
} rt_elf_sym;

/* Validate the ELF64 header, section table and symbol table.  On failure
 * TILE_ERR_BAD_MODULE with the message set. */
tile_status rt_elf_open(rt_elf *elf, const void *data, size_t size);
/* Look a symbol up by name: true and *sym when found. */
bool rt_elf_find_symbol(const rt_elf *elf, const char *name, rt_elf_sym *sym);
/* The bytes of a defined data symbol (in the file); TILE_ERR_BAD_MODULE if
 * they are not all inside the file. */
tile_status rt_elf_symbol_bytes(const rt_elf *elf, const char *name, const rt_elf_sym *sym,
                                const unsigned char **bytes);
/* The register count ptxas gave kernel `name` (its .nv.info EIATTR_REGCOUNT); 0: not said. */
unsigned rt_elf_regcount(const rt_elf *elf, const char *name);
/* The metadata text of a validated cubin (stops at the first NUL). */
tile_status rt_cubin_meta(const rt_elf *elf, const char **text, size_t *len);

enum { RT_STT_OBJECT = 1, RT_STT_FUNC = 2 };

/* ---- meta.c ---- */

struct tile_meta {
  char arch[32];                /* "" when the text has no arch line */
  int nkernels;
  tile_kernel_info *kernels;    /* all in the one block tile_meta_free frees */
};

/* The value of integer scalar argument `arg` of parameter p, read by its
 * size and signedness (dtype "u..." unsigned): what the multiple_of check
 * (module.c) and the derived descriptors' extents (tma.c) read. */
static inline long long rt_int_arg(const tile_param_info *p, const void *arg) {
  bool u = p->dtype[0] == 'u';
  if (p->size == 8) {
    int64_t v;
    memcpy(&v, arg, 8);
    return v;
  }
  if (p->size == 4) {
    int32_t v;
    memcpy(&v, arg, 4);
    return u ? (long long)(uint32_t)v : v;
  }
  if (p->size == 2) {
    int16_t v;
    memcpy(&v, arg, 2);
    return u ? (long long)(uint16_t)v : v;
  }
  int8_t v;
  memcpy(&v, arg, 1);
  return u ? (long long)(uint8_t)v : v;
}

#endif

/* runtime.h - the Tile runtime: load cubins made by tilec, launch kernels,
 * move memory; JIT-compile Tile source with an on-disk cache (tile_jit_*,
 * in libtilejit, which links the compiler).
 *
 * libcuda is opened with dlopen on first use, so programs link and start on
 * machines without a GPU; every call then returns TILE_ERR_NO_DRIVER or
 * TILE_ERR_NO_DEVICE with a message.  Every CUDA error becomes a status code
 * plus a message: tile_last_error() gives the message of the last failing
 * call made by this thread.
 */
#ifndef TILE_RUNTIME_H
#define TILE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tile_status {
  TILE_OK = 0,
  TILE_ERR_NO_DRIVER,   /* libcuda.so.1 could not be opened */
  TILE_ERR_NO_DEVICE,   /* driver present, no usable GPU */
  TILE_ERR_CUDA,        /* a CUDA driver call failed (message names it) */
  TILE_ERR_INVALID,     /* bad argument from the caller */
  TILE_ERR_NOT_FOUND,   /* kernel or file not found */
  TILE_ERR_BAD_MODULE,  /* cubin without Tile metadata, or corrupt */
  TILE_ERR_COMPILE,     /* JIT: the source did not compile (message holds the diagnostics) */
  TILE_ERR_IO,
  TILE_ERR_NOMEM,
} tile_status;

const char *tile_status_name(tile_status s);
/* Detailed message of the last failing call in this thread ("" if none). */
const char *tile_last_error(void);
/* Set this thread's message (printf-style) and return s: how libraries built
 * on the runtime (the JFA host API, say) report their own argument errors. */
tile_status tile_set_error(tile_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

typedef uint64_t tile_devptr;         /* a device address (CUdeviceptr) */
typedef struct tile_stream_s *tile_stream; /* a CUstream; NULL = default stream */

typedef struct tile_device_info {
  char name[256];
  int cc_major, cc_minor;
  int sm_count;
  size_t total_mem;
  int max_smem_per_block_optin; /* bytes */
  int l2_bytes;
} tile_device_info;

/* Initialise the driver and make device `ordinal`'s primary context current
 * for the calling thread.  Safe to call many times and from many threads.
 * Every other call works on the device this thread last passed to tile_init,
 * else on the first device any thread initialised (making its context
 * current as needed); before any tile_init they return TILE_ERR_INVALID
 * ("call tile_init first") -- there is no automatic initialisation. */
tile_status tile_init(int ordinal);

/* Where kernels run (tile_init_options.backend). */
typedef enum tile_backend {
  TILE_BACKEND_DEFAULT = 0, /* the NVIDIA driver, or the emulator when TILE_INTERPRET is set (not "0") */
  TILE_BACKEND_GPU,         /* the NVIDIA driver, whatever TILE_INTERPRET says */
  TILE_BACKEND_EMULATOR,    /* the emulator (docs/emulator.md): the CPU runs the kernels' PTX, no driver is loaded */
} tile_backend;

/* tile_init's options (zero-initialise: every field's zero is the default). */
typedef struct tile_init_options {
  int ordinal;          /* the device, as tile_init's argument */
  tile_backend backend; /* chosen once per process (below) */
} tile_init_options;

/* tile_init with options.  The backend is fixed by the first call that
 * needs the driver (this one, tile_init, tile_device_arch, ...), once per
 * process: a tile_init_ex that asks for another backend after that fails
 * with TILE_ERR_INVALID saying which one is in use. */
tile_status tile_init_ex(const tile_init_options *opts);
/* 1 when this process's kernels run on the emulator, 0 when on a GPU (or
 * no driver could be loaded).  Fixes the backend as any driver call does. */
int tile_emulated(void);
tile_status tile_device_info_get(tile_device_info *info);
/* "sm_90a" for a 9.0 device, "sm_100a" for 10.0, ... */
tile_status tile_device_arch(char *buf, size_t cap);

/* Memory. */
tile_status tile_malloc(tile_devptr *p, size_t bytes);
tile_status tile_free(tile_devptr p);
tile_status tile_memcpy_htod(tile_devptr dst, const void *src, size_t bytes);
tile_status tile_memcpy_dtoh(void *dst, tile_devptr src, size_t bytes);
tile_status tile_memcpy_dtod(tile_devptr dst, tile_devptr src, size_t bytes);
tile_status tile_memset_d8(tile_devptr dst, uint8_t value, size_t bytes);
tile_status tile_memset_d32(tile_devptr dst, uint32_t value, size_t count);
/* The same, ordered on a stream (NULL: the default stream). */
tile_status tile_memset_d32_async(tile_devptr dst, uint32_t value, size_t count, tile_stream stream);
/* A host-to-device copy ordered on a stream. From page-locked memory
 * (tile_host_alloc) it returns at once and the copy runs when the stream
 * reaches it: src must stay unchanged until then (record an event after
 * it). From pageable memory the driver stages the bytes and may wait for
 * the stream first. */
tile_status tile_memcpy_htod_async(tile_devptr dst, const void *src, size_t bytes, tile_stream stream);
/* Page-locked (pinned) host memory, for copies that do not wait; *p NULL
 * for 0 bytes. tile_host_free(NULL) is fine. */
tile_status tile_host_alloc(void **p, size_t bytes);
tile_status tile_host_free(void *p);
tile_status tile_synchronize(void);

/* Streams and events (timing). */
tile_status tile_stream_create(tile_stream *s);
tile_status tile_stream_destroy(tile_stream s);
tile_status tile_stream_synchronize(tile_stream s);
typedef struct tile_event_s *tile_event;
tile_status tile_event_create(tile_event *e);
tile_status tile_event_destroy(tile_event e);
tile_status tile_event_record(tile_event e, tile_stream s);
tile_status tile_event_elapsed_ms(float *ms, tile_event start, tile_event end);
/* Wait on the host until the work before the event's last record is done
 * (at once when it was never recorded). */
tile_status tile_event_synchronize(tile_event e);
/* Work queued on s after this call waits for e's last record (on any
 * stream); the host does not wait. */
tile_status tile_stream_wait_event(tile_stream s, tile_event e);

/* Kernel metadata (what tilec embeds in every cubin, docs/metadata.md). */
typedef enum tile_param_kind {
  TILE_PARAM_PTR,    /* device pointer: pass a tile_devptr */
  TILE_PARAM_SCALAR, /* by value: pass the C scalar of its dtype */
  TILE_PARAM_TMA,    /* a TMA descriptor: pass a tile_tma_desc (issue 2) */
} tile_param_kind;

typedef struct tile_param_info {
  char name[64];
  tile_param_kind kind;
  char dtype[8];   /* "f32", "bf16", "i32", ... (element type for pointers) */
  int size;        /* bytes the argument occupies (8 for pointers) */
  int align;       /* pointers: the alignment in bytes the kernel assumes */
  int multiple;    /* integer scalars: the kernel assumes a multiple of this (1: none) */
  int box[2];      /* TMA: the box (rows, columns) one copy moves */
  int swizzle;     /* TMA: 0, 32, 64 or 128 */
} tile_param_info;

/* A compile-time constant the kernel was built with (its `const` parameters,
 * -D or default): the value as tilec printed it ("128", "true", "0.5"). */
typedef struct tile_const_info {
  char name[64];
  char dtype[8];
  char value[40];
} tile_const_info;

/* A parameter the runtime builds at launch from the caller's arguments
 * ("derive" in the metadata): the TMA descriptor of the 2-D tensor at
 * pointer parameter from[0], with from[1] columns and from[2] rows, rows
 * from[3] elements apart (from[i] is a parameter index, or -1 for the
 * constant lit[i]). tilec adds them when it pipelines a `dot` onto TMA; the
 * caller never passes them: tile_launch appends them after args. */
typedef struct tile_derived_info {
  char name[64];
  char dtype[8];
  int box[2];      /* rows, columns */
  int swizzle;
  int from[4];
  long long lit[4];
  int planes; /* a 3-D tensor: planes of from[2] rows, one after another (as many as the coordinates reach) */
} tile_derived_info;

typedef struct tile_kernel_info {
  char name[128];
  int threads;          /* threads per block */
  int smem_bytes;       /* dynamic shared memory per block */
  int cluster[3];       /* cluster shape, 1 1 1 when none */
  int nparams;
  const tile_param_info *params;
  int nconsts;
  const tile_const_info *consts;
  int nderived;         /* built by tile_launch, after the nparams arguments */
  const tile_derived_info *derived;
  int pdl;              /* 1: launched to overlap the stream's previous grid (it waits at entry); see tile_launch */
} tile_kernel_info;

/* The value of constant `name` of kernel k as built, or NULL. */
const char *tile_kernel_const(const tile_kernel_info *k, const char *name);

typedef struct tile_module tile_module;
typedef struct tile_kernel tile_kernel;

/* Load a cubin written by tilec (metadata read from the cubin itself).  The
 * ELF structure and the metadata are validated before the driver is used, so
 * a corrupt cubin gives TILE_ERR_BAD_MODULE even on a machine without a GPU.
 * Kernel infos stay valid until tile_module_unload. */
tile_status tile_module_load_file(const char *path, tile_module **out);
tile_status tile_module_load_data(const void *cubin, size_t size, tile_module **out);
/* Load a module from PTX text (len bytes, no NUL inside) and its metadata
 * text (what tilec writes into __tile_meta: tilec --emit=meta, or
 * tilec_result_metadata).  The emulator runs the PTX as it is (its .loc
 * lines name Tile source lines in reports); a GPU driver compiles it
 * (cuModuleLoadData).  What the JIT loads on the emulator. */
tile_status tile_module_load_ptx(const char *ptx, size_t len, const char *meta, size_t meta_len,
                                 tile_module **out);
tile_status tile_module_unload(tile_module *m);
int tile_module_num_kernels(const tile_module *m);
const tile_kernel_info *tile_module_kernel_info(const tile_module *m, int i);
tile_status tile_module_get_kernel(tile_module *m, const char *name, tile_kernel **out);
const tile_kernel_info *tile_kernel_get_info(const tile_kernel *k);

/* How many clusters of kernel k (its cluster shape, threads and shared
 * memory) the device can hold at once: cuOccupancyMaxActiveClusters.  A
 * persistent kernel that launches more waits for the first to finish
 * (and one whose clusters wait for each other hangs).  The emulator holds
 * every cluster of a launch: it answers INT_MAX.  TILE_ERR_INVALID for a
 * kernel without clusters; TILE_ERR_CUDA where the driver lacks the query. */
tile_status tile_kernel_max_clusters(tile_kernel *k, int *n);

/* Launch on grid (gx, gy, gz) with threads/smem/cluster from the metadata.
 * args[i] points at the value of parameter i (as cuLaunchKernel).  Checks the
 * argument count, and that pointer arguments are aligned as the kernel
 * assumes; returns TILE_ERR_INVALID with a message naming the parameter.
 * The kernel's derived parameters (tile_kernel_info.derived: TMA
 * descriptors of a pipelined dot) are built from args here and passed after
 * them; nargs counts only the caller's.  A kernel built with pdl(true)
 * (tile_kernel_info.pdl) is launched with programmatic stream serialization,
 * overlapping the stream's previous kernel (it waits for that kernel's
 * writes at its entry); TILE_PDL=0 in the environment launches it plainly. */
tile_status tile_launch(tile_kernel *k, unsigned gx, unsigned gy, unsigned gz,
                        void **args, int nargs, tile_stream stream);

/* A TMA descriptor, passed by value to a `tma<...>` parameter. */
typedef struct tile_tma_desc {
  _Alignas(64) unsigned char bytes[128];
} tile_tma_desc;

/* Build the descriptor for TMA parameter `param` (its index among the
 * kernel's parameters) over a row-major 2-D tensor at `base`: `rows` x
 * `cols` elements, consecutive rows `row_stride` elements apart. The dtype,
 * box and swizzle come from the kernel. Checks (with messages naming the
 * parameter): the dtype matches, base 16-byte aligned, row pitch a multiple
 * of 16 bytes, extents within TMA limits. Rows and columns outside the tensor
 * read as zero and are not written. */
tile_status tile_tma_desc_2d(tile_tma_desc *d, const tile_kernel *k, int param, tile_devptr base, uint64_t rows,
                             uint64_t cols, uint64_t row_stride);

/* Parse metadata text (exposed for tools and tests). Returns NULL on error
 * and writes a message into err. Free with tile_meta_free. */
typedef struct tile_meta tile_meta;
tile_meta *tile_meta_parse(const char *text, size_t len, char *err, size_t errcap);
int tile_meta_num_kernels(const tile_meta *m);
const tile_kernel_info *tile_meta_kernel(const tile_meta *m, int i);
void tile_meta_free(tile_meta *m);
/* Find the metadata text embedded in a cubin (ELF symbol __tile_meta).
 * Returns a pointer into `cubin` and its length, or NULL. */
const char *tile_cubin_find_meta(const void *cubin, size_t size, size_t *len);

/* ---- JIT (libtilejit) ---- */
typedef struct tile_jit_define {
  const char *name;
  const char *value;
} tile_jit_define;

#define TILE_JIT_O0 (-1) /* tile_jit_options.opt_level for tilec -O0 (0 is the default, -O3) */

typedef struct tile_jit_options {
  const char *arch;               /* NULL: the current device's */
  const tile_jit_define *defines; /* constant parameters, as tilec -D */
  int ndefines;
  const char *cache_dir;          /* NULL: $TILE_CACHE_DIR, else $XDG_CACHE_HOME/tile, else ~/.cache/tile */
  int no_cache;                   /* 1: always compile, never read or write the cache */
  int opt_level;                  /* 1..3 as -O1..-O3, TILE_JIT_O0 as -O0; 0 means default (3) */
  /* tilec's other code generation options, each as its command-line flag
   * (zero: tilec's default), so the JIT builds whatever tilec builds */
  const char *const *include_dirs; /* searched by `import "x.tile"` after the importing file's folder (-I) */
  int ninclude_dirs;
  int no_line_info;               /* 1: --no-line-info */
  int tree_reductions;            /* 1: --tree-reductions */
  int no_stmatrix;                /* 1: --no-stmatrix */
  int embed_ptx;                  /* 1: --embed-ptx */
  int use_nvjitlink;              /* 1: --nvjitlink */
  const char *ptxas;              /* --ptxas=PATH; NULL: $TILE_PTXAS, $CUDA_HOME/bin, /usr/local/cuda/bin, PATH */
  int max_errors;                 /* --max-errors=N; 0: 20 */
  int stats;                      /* 1: fill tile_jit_stats.report (tilec --stats); compiles even when the
                                     cache holds the cubin, since the report describes a compile */
  int no_tma_rings;               /* 1: --no-tma-rings (added after the others) */
  int tma_rings_all;              /* 1: --tma-rings=all (added after the others) */
  int no_smem_home;               /* 1: --no-smem-home (added after the others) */
  int no_wide_stores;             /* 1: --no-wide-stores (last: added after the others) */
} tile_jit_options;

typedef struct tile_jit_stats {
  int cache_hit;        /* 1 when the cubin came from the cache */
  int cache_rebuilt;    /* 1 when a corrupt entry was found and replaced */
  double compile_seconds;
  char key[65];         /* the cache key, hex SHA-256 */
  char *report;         /* with tile_jit_options.stats: the compile report (tilec --stats, docs/stats.md),
                           malloc'ed, NUL terminated: free() it; else NULL */
} tile_jit_stats;

/* Compile Tile source in process (or fetch it from the cache) to a cubin. On
 * TILE_ERR_COMPILE, tile_last_error() holds the diagnostics.  *cubin is
 * malloc'ed; free() it. */
tile_status tile_jit_compile_cubin(const char *filename, const char *source, size_t len,
                                   const tile_jit_options *opts, void **cubin, size_t *size,
                                   tile_jit_stats *stats);
/* Compile (or fetch) and load. */
tile_status tile_jit_load(const char *filename, const char *source, size_t len,
                          const tile_jit_options *opts, tile_module **out,
                          tile_jit_stats *stats);
/* The cache folder these options use (no I/O). */
tile_status tile_jit_cache_dir(const tile_jit_options *opts, char *buf, size_t cap);

/* ---- Autotuning (libtilejit, runtime/autotune.c) ----
 *
 * The fastest of several sets of constants ("configs": block sizes, warps
 * through a `warps(W)` constant, pipeline stages, ...) for each problem key,
 * as Triton's autotune: the first launch for a key compiles every config
 * (through the JIT and its cache), times each (warm-up, then the median of
 * several launches, CUDA events), keeps the fastest, in memory and in the
 * JIT's disk cache, and launches it; later launches for the key, in this
 * process or another, launch the chosen config directly.  docs/runtime.md,
 * "Autotuning". */

/* One candidate: constant values on top of tile_jit_options.defines (a name
 * in both takes the config's value). */
typedef struct tile_jit_autotune_config {
  const tile_jit_define *defines;
  int ndefines;
} tile_jit_autotune_config;

/* Launch kernel k (config `config`) once on `stream` with the caller's
 * arguments, its grid from its constants (tile_kernel_const(
 * tile_kernel_get_info(k), "BLOCK")).  While a key is tuned it is called
 * warmup + reps times per config, on the caller's buffers: a kernel that
 * updates its inputs in place must restore them here.  It must not call its
 * own tuner (which holds a lock while tuning). */
typedef tile_status (*tile_jit_autotune_launch_fn)(void *user, tile_kernel *k, int config, tile_stream stream);

/* A clock in milliseconds, read around each timed launch (the stream
 * synchronized before and after) instead of CUDA events: a host-side
 * protocol, or a test's fake clock. */
typedef double (*tile_jit_autotune_clock_fn)(void *user);

typedef struct tile_jit_autotune_desc {
  const char *filename;           /* as tile_jit_load's */
  const char *source;
  size_t len;
  const char *kernel;             /* the kernel to launch; NULL: the module's only one */
  const tile_jit_options *opts;   /* the JIT's options, common to every config (NULL: defaults) */
  const tile_jit_autotune_config *configs;
  int nconfigs;                   /* 1 or more */
  int warmup;                     /* untimed launches per config before timing; 0: 2; negative: none */
  int reps;                       /* timed launches per config (the median counts); 0: 10 */
  tile_jit_autotune_clock_fn clock; /* NULL: CUDA events on the launch's stream */
  void *clock_user;
} tile_jit_autotune_desc;

typedef struct tile_jit_autotuner tile_jit_autotuner;

/* A tuner for desc (copied: the caller's strings and arrays may go after
 * this returns).  Nothing is compiled yet. */
tile_status tile_jit_autotune_create(const tile_jit_autotune_desc *desc, tile_jit_autotuner **out);
/* Unload its modules and free it (NULL: nothing). */
void tile_jit_autotune_destroy(tile_jit_autotuner *t);

typedef struct tile_jit_autotune_stats {
  int config;          /* the config launched */
  int tuned;           /* 1: this call timed the configs (the key was new to this process and to the disk cache) */
  int from_disk;       /* 1: the choice came from the disk cache (tuned by an earlier process) */
  int ntimed;          /* configs this call timed */
  int nskipped;        /* configs this call skipped: they failed to compile, load or launch */
  double best_ms;      /* tuned: the chosen config's median time */
  char key[65];        /* the choice's disk cache key, hex SHA-256 */
  char notes[1024];    /* tuned: one line per skipped config and why (cut to fit) */
} tile_jit_autotune_stats;

/* Launch the best config for `key` (any text the caller derives from the
 * problem: "M=4096,N=4096"), tuning it first when neither this tuner nor
 * the disk cache knows it.  A config that fails to compile, load or launch
 * is skipped (stats->notes says why); when every config fails, the first
 * failure's status comes back and tile_last_error() lists each.  stats may
 * be NULL.  Thread-safe; tuning is serialized per tuner. */
tile_status tile_jit_autotune_launch(tile_jit_autotuner *t, const char *key, tile_jit_autotune_launch_fn launch,
                                     void *user, tile_stream stream, tile_jit_autotune_stats *stats);
/* The config chosen for key (this tuner's memory, else the disk cache),
 * without tuning or launching: TILE_ERR_NOT_FOUND when it is not tuned yet.
 * ms (may be NULL): nconfigs entries, each config's median time in ms, or
 * a negative number for a config skipped. */
tile_status tile_jit_autotune_best(tile_jit_autotuner *t, const char *key, int *config, double *ms);
/* Config i's kernel, compiled (or fetched) and loaded on first use: to
 * launch a chosen config outside tile_jit_autotune_launch.  It stays valid
 * until tile_jit_autotune_destroy. */
tile_status tile_jit_autotune_kernel(tile_jit_autotuner *t, int config, tile_kernel **k);

#ifdef __cplusplus
}
#endif
#endif

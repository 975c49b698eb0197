/* tilec.h - the Tile compiler as a library.
 *
 * One call compiles one .tile source to one output stage.  The library never
 * exits, never aborts on user input and keeps no global mutable state: all
 * memory of a compilation lives in one arena that tilec_result_free() releases.
 * Errors come back as diagnostics text ("file:line:col: error: ...") plus a
 * status code.  Thread-safe: many threads may compile at once.
 */
#ifndef TILE_TILEC_H
#define TILE_TILEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TILEC_VERSION_STRING "0.1.0"

typedef enum tilec_emit {
  TILEC_EMIT_TOKENS,
  TILEC_EMIT_AST,
  TILEC_EMIT_TIR,   /* Tile IR after layout assignment and Tile passes */
  TILEC_EMIT_MLIR,  /* MLIR as built, before the MLIR pass pipeline */
  TILEC_EMIT_LLVM,  /* LLVM IR after O3 */
  TILEC_EMIT_PTX,
  TILEC_EMIT_CUBIN,
  TILEC_EMIT_META,  /* the kernel metadata text that travels in the cubin */
} tilec_emit;

typedef enum tilec_status {
  TILEC_OK = 0,
  TILEC_ERR_SOURCE = 1,    /* the program has errors: see diagnostics */
  TILEC_ERR_OPTIONS = 2,   /* bad options (unknown arch, bad -D) */
  TILEC_ERR_TOOLCHAIN = 3, /* ptxas / nvJitLink missing or failed */
  TILEC_ERR_INTERNAL = 4,  /* a compiler bug: reported, never aborted */
  TILEC_ERR_IO = 5,
} tilec_status;

typedef struct tilec_define {
  const char *name;
  const char *value; /* integer, float, true/false, or a dtype name */
} tilec_define;

typedef struct tilec_options {
  const char *arch;          /* "sm_90a" (default) or "sm_100a" */
  tilec_emit emit;           /* default TILEC_EMIT_CUBIN */
  const tilec_define *defines;
  int ndefines;
  const char *const *include_dirs; /* searched by `import "x.tile"` */
  int ninclude_dirs;
  int opt_level;             /* LLVM: 0..3, default 3 */
  int line_info;             /* keep .loc line info in PTX/cubin, default 1 */
  int use_nvjitlink;         /* PTX->cubin in process through libnvJitLink */
  const char *ptxas;         /* path of ptxas; NULL: $TILE_PTXAS, CUDA_HOME, PATH */
  int max_errors;            /* stop after this many errors (default 20) */
  int tree_reductions;       /* 1: a thread combines its elements of a reduction in a balanced tree
                                (log depth); 0 (default): in one chain, which measured faster in the
                                D = 128 attention loop (docs/perf.md), slower at D = 64 */
  int no_stmatrix;           /* 1: store 16-bit tiles to shared memory thread by thread, never with
                                stmatrix (an A/B switch; default 0: stmatrix where the layout fits) */
  int no_tma_rings;          /* 1: a loop with two to four dots fills its rings by cp.async even where
                                TMA could (an A/B switch; default 0: TMA where every tile is a box
                                of a tensor the host can describe) */
  int embed_ptx;             /* 1: the cubin also carries its PTX (a global __tile_ptx), which the
                                runtime's emulator runs under TILE_INTERPRET=1 (docs/emulator.md) */
  int tma_rings_all;         /* 1: loops of three and four dots (attention's backward) fill their rings
                                by TMA too (an A/B switch; default 0: they keep cp.async, where TMA
                                measured no gain yet and needs more registers) */
  int no_smem_home;          /* 1: loop accumulators stay in registers even where they do not fit (the
                                compiler otherwise homes them in shared memory: docs/language.md 9b;
                                an A/B switch) */
  int no_wide_stores;        /* 1: a 16- or 8-bit MMA result is stored from the accumulator's pairs of
                                columns (4 bytes a thread at 16 bits), never rearranged in the warp for
                                16-byte stores (an A/B switch; default 0: rearranged where the pointers
                                allow it) */
} tilec_options;

/* Fill options with the defaults above. */
void tilec_options_init(tilec_options *opts);

typedef struct tilec_result tilec_result;

/* Compile `source` (len bytes, need not be NUL terminated; `filename` is used
 * in diagnostics and line tables).  Always sets *out (free it with
 * tilec_result_free) unless out is NULL or memory is exhausted. */
tilec_status tilec_compile(const char *filename, const char *source, size_t len,
                           const tilec_options *opts, tilec_result **out);

/* Read and compile a file. */
tilec_status tilec_compile_file(const char *path, const tilec_options *opts,
                                tilec_result **out);

tilec_status tilec_result_status(const tilec_result *r);
/* All diagnostics, formatted, NUL terminated ("" when none). */
const char *tilec_result_diagnostics(const tilec_result *r);
int tilec_result_error_count(const tilec_result *r);
/* The requested output (text stages are NUL terminated; len excludes it). */
const void *tilec_result_output(const tilec_result *r, size_t *len);
/* Kernel metadata text (see docs/metadata.md); available once lowering ran
 * (emit >= MLIR: the shared-memory size is known only then), else NULL. */
const char *tilec_result_metadata(const tilec_result *r);
/* The files `import` read from disk (neither the main source nor the
 * embedded standard library), in the order read: the path and the exact
 * text that was compiled. What a cache of compiled kernels checks to notice
 * that an imported file changed. NULL when i is out of range. */
int tilec_result_num_imports(const tilec_result *r);
const char *tilec_result_import(const tilec_result *r, int i, const char **text, size_t *len);
/* Seconds spent in each stage, for -v / benchmarking. */
double tilec_result_seconds(const tilec_result *r);
/* The compile report (tilec --stats; format: docs/stats.md), NUL
 * terminated: per kernel and per task, registers and spills (from the
 * assembler), shared memory buffer by buffer with the scratch of layout
 * conversions at the source line that needs it, tensor memory, barriers,
 * register budgets; then the time of each stage. Parts of stages that did
 * not run (--emit=ptx: no assembler) are marked so. NULL when the compile
 * stopped before Tile IR (errors in parsing or checking; emit tokens/ast).
 * Owned by r. */
const char *tilec_result_stats(const tilec_result *r);
void tilec_result_free(tilec_result *r);

/* Versions that go into cache keys: the compiler's own, and the assembler
 * that a compile with these options would use ("ptxas 13.0.88", or
 * "nvJitLink 13.0"). Writes at most cap bytes. Returns 0 on success. */
const char *tilec_version(void);
int tilec_assembler_version(const tilec_options *opts, char *buf, size_t cap);

const char *tilec_emit_name(tilec_emit e);
int tilec_emit_parse(const char *s, tilec_emit *out);

#ifdef __cplusplus
}
#endif
#endif

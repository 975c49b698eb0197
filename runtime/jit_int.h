/* jit_int.h - what the rest of libtilejit (autotune.c) takes from jit.c;
 * not exported from libtilejit.so (its version script keeps tile_jit_*). */
#ifndef TILE_RT_JIT_INT_H
#define TILE_RT_JIT_INT_H

#include "cache.h"
#include "tile/runtime.h"

/* The cache key tile_jit_load would use for this request (ptx: the
 * emulator's PTX entry, as tile_jit_load makes under tile_emulated()),
 * without compiling: the arguments are checked and the arch resolved as
 * tile_jit_load does, with the same errors.  *storable: 0 when the JIT
 * would not store the entry (no assembler found: the key cannot name it). */
tile_status tj_key(const char *filename, const char *source, size_t len, const tile_jit_options *opts, int ptx,
                   char hex[TC_SHA256_HEX_SIZE], int *storable);

/* A line on stderr ("tile-jit: ...") when TILE_JIT_VERBOSE is set (not 0). */
void tj_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

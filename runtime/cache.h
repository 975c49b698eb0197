/* cache.h - a content-addressed on-disk cache of byte blobs (the JIT's cubin
 * cache), plus the SHA-256 it is keyed and checked with.
 *
 * Self-contained: depends on nothing but libc, so it can be tested alone.
 *
 * Layout: an entry with key K (lowercase hex, normally the 64 digits of a
 * SHA-256) lives in  <dir>/<K[0..1]>/<K>.cubin , i.e. sharded by the first two
 * hex digits.  An entry file is a fixed 64-byte header followed by the payload
 * (see TC_HEADER_SIZE below and docs/runtime.md "## JIT").
 *
 * Concurrency: stores write a unique temp file in the entry's directory
 * (O_EXCL), fsync it, and rename() it over the final name, so readers in any
 * process or thread see either no file or a complete entry; lookups verify the
 * header and the payload checksum anyway.  There is no lock and no global
 * mutable state apart from an atomic counter used in temp-file names.
 */
#ifndef TILE_RT_CACHE_H
#define TILE_RT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- SHA-256 (FIPS 180-4) ---- */
typedef struct tc_sha256 {
  uint32_t h[8];
  uint64_t nbytes;      /* total bytes hashed so far */
  uint8_t buf[64];      /* pending partial block */
  size_t nbuf;
} tc_sha256_ctx;

#define TC_SHA256_SIZE 32
#define TC_SHA256_HEX_SIZE 65 /* 64 digits + NUL */

void tc_sha256_init(tc_sha256_ctx *c);
void tc_sha256_update(tc_sha256_ctx *c, const void *data, size_t len);
void tc_sha256_final(tc_sha256_ctx *c, uint8_t out[TC_SHA256_SIZE]);
/* One-shot digest. */
void tc_sha256(const void *data, size_t len, uint8_t out[TC_SHA256_SIZE]);
/* Lowercase hex of n bytes into out (2n+1 bytes). */
void tc_hex(const uint8_t *bytes, size_t n, char *out);

/* ---- entry format ---- */
#define TC_MAGIC "TILECACHE\x01"  /* 10 bytes, no NUL */
#define TC_MAGIC_LEN 10
#define TC_FORMAT_VERSION 1
/* Header: magic[10] | version u16 LE | reserved[4]=0 | payload length u64 LE |
 *         SHA-256(payload)[32] | reserved[8]=0   = 64 bytes. */
#define TC_HEADER_SIZE 64

/* ---- cache ---- */
enum {
  TC_HIT = 0,     /* *data and *size hold the payload (malloc'ed) */
  TC_MISS = 1,    /* no entry */
  TC_CORRUPT = 2, /* an entry exists but is damaged: recompile and store */
  TC_ERROR = 3,   /* I/O or argument error (message in err) */
};

/* Pick the cache directory, no I/O: opt_dir if non-empty, else
 * $TILE_CACHE_DIR, else $XDG_CACHE_HOME/tile (absolute paths only), else
 * $HOME/.cache/tile, else /tmp/tile-cache-<uid>.  Returns 0, or -1 when the
 * result does not fit in cap bytes. */
int tc_cache_resolve_dir(const char *opt_dir, char *buf, size_t cap);

/* mkdir -p: intermediate directories 0755, the last one 0700 (subject to
 * umask).  Existing directories are fine.  Returns 0 or -1 with err. */
int tc_mkdir_p(const char *path, char *err, size_t errcap);

/* The path of key's entry file.  Returns 0, or -1 when keyhex is not 2..128
 * lowercase hex digits or the path does not fit. */
int tc_cache_entry_path(const char *dir, const char *keyhex, char *buf, size_t cap);

/* Look up key in dir.  On TC_HIT *data is malloc'ed (free it) and *size its
 * length; otherwise *data is NULL and *size 0.  err (may be NULL) gets a
 * message for TC_CORRUPT and TC_ERROR.  A missing directory is a miss. */
int tc_cache_lookup(const char *dir, const char *keyhex, void **data, size_t *size,
                    char *err, size_t errcap);

/* Store data under key in dir (creating directories as needed), atomically
 * replacing any existing entry, corrupt or not, including a directory that
 * sits where the file should be.  Returns 0, or -1 with a message in err. */
int tc_cache_store(const char *dir, const char *keyhex, const void *data, size_t size,
                   char *err, size_t errcap);

/* Remove key's entry (not an error if absent).  Returns 0 or -1 with err. */
int tc_cache_remove(const char *dir, const char *keyhex, char *err, size_t errcap);

/* Temp files older than this are left over from killed writers; a store
 * removes such files from the directory it writes into. */
#define TC_STALE_TMP_SECONDS 600

#ifdef __cplusplus
}
#endif
#endif

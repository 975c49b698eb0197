/* cache.c - the JIT's content-addressed on-disk cache and its SHA-256.
 *
 * Entry file <dir>/<kk>/<key>.cubin (kk = first two hex digits of the key):
 *
 *   offset size
 *        0   10  magic "TILECACHE\x01"
 *       10    2  format version, little endian (TC_FORMAT_VERSION)
 *       12    4  reserved, zero
 *       16    8  payload length, little endian
 *       24   32  SHA-256 of the payload
 *       56    8  reserved, zero
 *       64    n  payload
 *
 * A lookup accepts a file only when every header field checks out, the file
 * size is exactly 64 + length and the payload hashes to the stored digest;
 * anything else is reported as TC_CORRUPT and left for the next store to
 * replace.  A store writes a uniquely named temp file in the same directory
 * (O_EXCL), fsyncs it and rename()s it over the entry, so concurrent readers
 * and writers, in threads or processes, never observe a partial entry.
 */
#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#define TC_PATH_MAX 4096

/* ======================================================================
 * SHA-256
 * ==================================================================== */

static const uint32_t K256[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotr32(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static uint32_t load_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void store_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* Process one 64-byte block. */
static void sha256_block(uint32_t h[8], const uint8_t *blk) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++) w[i] = load_be32(blk + 4 * i);
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = rotr32(w[i - 15], 7) ^ rotr32(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr32(w[i - 2], 17) ^ rotr32(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t S1 = rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = k + S1 + ch + K256[i] + w[i];
    uint32_t S0 = rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = S0 + maj;
    k = g; g = f; f = e; e = d + t1;
    d = c; c = b; b = a; a = t1 + t2;
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d;
  h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

void tc_sha256_init(tc_sha256_ctx *c) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, iv, sizeof iv);
  c->nbytes = 0;
  c->nbuf = 0;
}

void tc_sha256_update(tc_sha256_ctx *c, const void *data, size_t len) {
  const uint8_t *p = data;
  c->nbytes += len;
  if (c->nbuf) {
    size_t take = 64 - c->nbuf < len ? 64 - c->nbuf : len;
    memcpy(c->buf + c->nbuf, p, take);
    c->nbuf += take; p += take; len -= take;
    if (c->nbuf < 64) return;
    sha256_block(c->h, c->buf);
    c->nbuf = 0;
  }
  for (; len >= 64; p += 64, len -= 64) sha256_block(c->h, p);
  if (len) { memcpy(c->buf, p, len); c->nbuf = len; }
}

void tc_sha256_final(tc_sha256_ctx *c, uint8_t out[TC_SHA256_SIZE]) {
  uint64_t bits = c->nbytes * 8;
  c->buf[c->nbuf++] = 0x80;
  if (c->nbuf > 56) {
    memset(c->buf + c->nbuf, 0, 64 - c->nbuf);
    sha256_block(c->h, c->buf);
    c->nbuf = 0;
  }
  memset(c->buf + c->nbuf, 0, 56 - c->nbuf);
  for (int i = 0; i < 8; i++) c->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
  sha256_block(c->h, c->buf);
  for (int i = 0; i < 8; i++) store_be32(out + 4 * i, c->h[i]);
  memset(c, 0, sizeof *c);
}

void tc_sha256(const void *data, size_t len, uint8_t out[TC_SHA256_SIZE]) {
  tc_sha256_ctx c;
  tc_sha256_init(&c);
  tc_sha256_update(&c, data, len);
  tc_sha256_final(&c, out);
}

void tc_hex(const uint8_t *bytes, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * n] = 0;
}

/* ======================================================================
 * helpers
 * ==================================================================== */

static void set_err(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t cap, const char *fmt, ...) {
  if (!err || !cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
}

/* snprintf that reports truncation: 0 on success, -1 if it did not fit. */
static int fmt_path(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fmt_path(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
  return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static void put_le(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static int all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return 0;
  return 1;
}

/* Read up to n bytes at off; returns bytes read (< n only at EOF) or -1. */
static ssize_t pread_full(int fd, void *buf, size_t n, off_t off) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

static int write_full(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int key_ok(const char *keyhex) {
  size_t n = keyhex ? strlen(keyhex) : 0;
  if (n < 2 || n > 128) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = keyhex[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return 0;
  }
  return 1;
}

/* ======================================================================
 * directories
 * ==================================================================== */

int tc_cache_resolve_dir(const char *opt_dir, char *buf, size_t cap) {
  if (!buf || !cap) return -1;
  if (opt_dir && *opt_dir) return fmt_path(buf, cap, "%s", opt_dir);
  const char *env = getenv("TILE_CACHE_DIR");
  if (env && *env) return fmt_path(buf, cap, "%s", env);
  env = getenv("XDG_CACHE_HOME");
  if (env && env[0] == '/') return fmt_path(buf, cap, "%s/tile", env);
  env = getenv("HOME");
  if (env && *env) return fmt_path(buf, cap, "%s/.cache/tile", env);
  return fmt_path(buf, cap, "/tmp/tile-cache-%lu", (unsigned long)getuid());
}

/* mkdir one directory; an existing directory is fine. */
static int mkdir_one(const char *path, mode_t mode, char *err, size_t errcap) {
  if (mkdir(path, mode) == 0) return 0;
  int e = errno;
  struct stat st;
  if (e == EEXIST && stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) return 0;
    set_err(err, errcap, "cannot create cache directory '%s': a non-directory is in the way", path);
    return -1;
  }
  set_err(err, errcap, "cannot create cache directory '%s': %s", path, strerror(e));
  return -1;
}

int tc_mkdir_p(const char *path, char *err, size_t errcap) {
  char tmp[TC_PATH_MAX];
  if (!path || !*path) {
    set_err(err, errcap, "cache directory path is empty");
    return -1;
  }
  if (fmt_path(tmp, sizeof tmp, "%s", path) != 0) {
    set_err(err, errcap, "cache directory path too long: '%.200s...'", path);
    return -1;
  }
  size_t n = strlen(tmp);
  while (n > 1 && tmp[n - 1] == '/') tmp[--n] = 0;
  for (char *p = tmp + 1; *p; p++) {
    if (*p != '/' || p[-1] == '/') continue;
    *p = 0;
    int rc = mkdir_one(tmp, 0755, err, errcap);
    *p = '/';
    if (rc) return -1;
  }
  return mkdir_one(tmp, 0700, err, errcap);
}

int tc_cache_entry_path(const char *dir, const char *keyhex, char *buf, size_t cap) {
  if (!dir || !*dir || !key_ok(keyhex) || !buf) return -1;
  return fmt_path(buf, cap, "%s/%c%c/%s.cubin", dir, keyhex[0], keyhex[1], keyhex);
}

/* The shard directory <dir>/<kk>, created (0700).  A non-directory in its
 * place (damage inside the cache) is removed first. */
static int make_shard(const char *dir, const char *keyhex, char *shard, size_t cap,
                      char *err, size_t errcap) {
  if (fmt_path(shard, cap, "%s/%c%c", dir, keyhex[0], keyhex[1]) != 0) {
    set_err(err, errcap, "cache path too long under '%.200s'", dir);
    return -1;
  }
  if (tc_mkdir_p(dir, err, errcap) != 0) return -1;
  if (mkdir(shard, 0700) == 0) return 0;
  struct stat st;
  if (errno == EEXIST && lstat(shard, &st) == 0 && !S_ISDIR(st.st_mode)) {
    if (unlink(shard) != 0 && errno != ENOENT) {
      set_err(err, errcap, "cannot remove '%s' from the cache: %s", shard, strerror(errno));
      return -1;
    }
  }
  return mkdir_one(shard, 0700, err, errcap);
}

/* ======================================================================
 * unique temp names, tree removal, stale temp sweep
 * ==================================================================== */

static atomic_ulong tmp_counter;

static uint64_t random_bits(void) {
  uint64_t r = 0;
  if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r) return r;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  r = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&r;
  return r;
}

/* "<parent>/.<tag>.<base>.<pid>.<tid>.<counter>.<random>" */
static int unique_name(char *buf, size_t cap, const char *parent, const char *tag, const char *base) {
  unsigned long n = atomic_fetch_add(&tmp_counter, 1);
  return fmt_path(buf, cap, "%s/.%s.%s.%ld.%ld.%lu.%016llx", parent, tag, base, (long)getpid(),
                  (long)syscall(SYS_gettid), n, (unsigned long long)random_bits());
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st; (void)flag; (void)ftw;
  return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Remove a directory that sits where an entry file belongs: rename it aside
 * (atomic, so the entry name is free at once) and delete the renamed tree. */
static int remove_dir_entry(const char *path, const char *shard, char *err, size_t errcap) {
  char aside[TC_PATH_MAX];
  if (unique_name(aside, sizeof aside, shard, "trash", "d") != 0 || rename(path, aside) != 0) {
    if (errno == ENOENT) return 0;
    set_err(err, errcap, "cannot remove directory '%s' from the cache: %s", path, strerror(errno));
    return -1;
  }
  if (nftw(aside, rm_cb, 16, FTW_DEPTH | FTW_PHYS) != 0) {
    set_err(err, errcap, "cannot remove '%s': %s", aside, strerror(errno));
    return -1;
  }
  return 0;
}

/* Delete temp files that killed writers left in shard (best effort). */
static void sweep_stale_tmp(const char *shard) {
  DIR *d = opendir(shard);
  if (!d) return;
  time_t now = time(NULL);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, ".tmp.", 5) != 0) continue;
    struct stat st;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode) && now - st.st_mtime > TC_STALE_TMP_SECONDS)
      unlinkat(dirfd(d), de->d_name, 0);
  }
  closedir(d);
}

/* ======================================================================
 * lookup
 * ==================================================================== */

/* Check the header against the file size; 0 if good, else -1 with err. */
static int check_header(const uint8_t *h, uint64_t file_size, uint64_t *len, char *err,
                        size_t errcap) {
  if (memcmp(h, TC_MAGIC, TC_MAGIC_LEN) != 0) {
    set_err(err, errcap, "bad magic");
    return -1;
  }
  uint64_t version = get_le(h + 10, 2);
  if (version != TC_FORMAT_VERSION) {
    set_err(err, errcap, "unknown format version %llu", (unsigned long long)version);
    return -1;
  }
  if (!all_zero(h + 12, 4) || !all_zero(h + 56, 8)) {
    set_err(err, errcap, "reserved header bytes are not zero");
    return -1;
  }
  *len = get_le(h + 16, 8);
  if (*len != file_size - TC_HEADER_SIZE) {
    set_err(err, errcap, "payload length %llu does not match the file size %llu",
            (unsigned long long)*len, (unsigned long long)file_size);
    return -1;
  }
  if (*len > (uint64_t)SIZE_MAX - 1) {
    set_err(err, errcap, "payload too large");
    return -1;
  }
  return 0;
}

/* Read and verify an open entry.  Returns TC_HIT / TC_CORRUPT / TC_ERROR. */
static int read_entry(int fd, const char *path, void **data, size_t *size, char *err,
                      size_t errcap) {
  char why[160];
  struct stat st;
  if (fstat(fd, &st) != 0) {
    set_err(err, errcap, "cannot stat cache entry '%s': %s", path, strerror(errno));
    return TC_ERROR;
  }
  if (!S_ISREG(st.st_mode)) {
    set_err(err, errcap, "corrupt cache entry '%s': not a regular file", path);
    return TC_CORRUPT;
  }
  uint8_t h[TC_HEADER_SIZE];
  ssize_t got = st.st_size >= TC_HEADER_SIZE ? pread_full(fd, h, sizeof h, 0) : 0;
  if (got < 0) {
    set_err(err, errcap, "cannot read cache entry '%s': %s", path, strerror(errno));
    return TC_ERROR;
  }
  if (got < TC_HEADER_SIZE) {
    set_err(err, errcap, "corrupt cache entry '%s': truncated (%lld bytes)", path,
            (long long)st.st_size);
    return TC_CORRUPT;
  }
  uint64_t len;
  if (check_header(h, (uint64_t)st.st_size, &len, why, sizeof why) != 0) {
    set_err(err, errcap, "corrupt cache entry '%s': %s", path, why);
    return TC_CORRUPT;
  }
  uint8_t *buf = malloc(len ? (size_t)len : 1);
  if (!buf) {
    set_err(err, errcap, "out of memory reading cache entry '%s'", path);
    return TC_ERROR;
  }
  got = pread_full(fd, buf, (size_t)len, TC_HEADER_SIZE);
  if (got < 0 || (uint64_t)got != len) {
    int e = errno;
    free(buf);
    if (got < 0) {
      set_err(err, errcap, "cannot read cache entry '%s': %s", path, strerror(e));
      return TC_ERROR;
    }
    set_err(err, errcap, "corrupt cache entry '%s': truncated payload", path);
    return TC_CORRUPT;
  }
  uint8_t digest[TC_SHA256_SIZE];
  tc_sha256(buf, (size_t)len, digest);
  if (memcmp(digest, h + 24, TC_SHA256_SIZE) != 0) {
    free(buf);
    set_err(err, errcap, "corrupt cache entry '%s': checksum mismatch", path);
    return TC_CORRUPT;
  }
  *data = buf;
  *size = (size_t)len;
  return TC_HIT;
}

int tc_cache_lookup(const char *dir, const char *keyhex, void **data, size_t *size, char *err,
                    size_t errcap) {
  char path[TC_PATH_MAX];
  if (data) *data = NULL;
  if (size) *size = 0;
  if (!data || !size || !dir || !*dir) {
    set_err(err, errcap, "tc_cache_lookup: bad argument");
    return TC_ERROR;
  }
  if (tc_cache_entry_path(dir, keyhex, path, sizeof path) != 0) {
    set_err(err, errcap, "bad cache key or path too long (dir '%.200s')", dir);
    return TC_ERROR;
  }
  int fd;
  do fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block */
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (errno == ENOENT) return TC_MISS;
    if (errno == ENOTDIR) {
      set_err(err, errcap, "corrupt cache: a component of '%s' is not a directory", path);
      return TC_CORRUPT;
    }
    set_err(err, errcap, "cannot open cache entry '%s': %s", path, strerror(errno));
    return TC_ERROR;
  }
  int rc = read_entry(fd, path, data, size, err, errcap);
  close(fd);
  return rc;
}

/* ======================================================================
 * store
 * ==================================================================== */

static void make_header(uint8_t h[TC_HEADER_SIZE], const void *data, size_t size) {
  memset(h, 0, TC_HEADER_SIZE);
  memcpy(h, TC_MAGIC, TC_MAGIC_LEN);
  put_le(h + 10, TC_FORMAT_VERSION, 2);
  put_le(h + 16, (uint64_t)size, 8);
  tc_sha256(data, size, h + 24);
}

/* Create a fresh temp file next to the entry; returns its fd or -1. */
static int open_temp(const char *shard, const char *keyhex, char *tmp, size_t cap, char *err,
                     size_t errcap) {
  for (int attempt = 0; attempt < 16; attempt++) {
    if (unique_name(tmp, cap, shard, "tmp", keyhex) != 0) {
      set_err(err, errcap, "cache path too long under '%.200s'", shard);
      return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno != EEXIST && errno != EINTR) {
      set_err(err, errcap, "cannot create temp file '%s': %s", tmp, strerror(errno));
      return -1;
    }
  }
  set_err(err, errcap, "cannot create a unique temp file in '%s'", shard);
  return -1;
}

/* Write header + payload to fd and make them durable; closes fd. */
static int write_temp(int fd, const char *tmp, const void *data, size_t size, char *err,
                      size_t errcap) {
  uint8_t h[TC_HEADER_SIZE];
  make_header(h, data, size);
  int ok = write_full(fd, h, sizeof h) == 0 && write_full(fd, data, size) == 0;
  while (ok && fsync(fd) != 0)
    if (errno != EINTR) ok = 0;
  int e = errno;
  if (close(fd) != 0 && ok) { ok = 0; e = errno; }
  if (!ok) set_err(err, errcap, "cannot write temp file '%s': %s", tmp, strerror(e));
  return ok ? 0 : -1;
}

/* rename tmp over path; a directory in the way is removed once. */
static int publish(const char *tmp, const char *path, const char *shard, char *err, size_t errcap) {
  for (int attempt = 0; attempt < 3; attempt++) {
    if (rename(tmp, path) == 0) return 0;
    int e = errno;
    struct stat st;
    if ((e == EISDIR || e == ENOTEMPTY || e == EEXIST) && lstat(path, &st) == 0 &&
        S_ISDIR(st.st_mode)) {
      if (remove_dir_entry(path, shard, err, errcap) != 0) return -1;
      continue;
    }
    set_err(err, errcap, "cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
    return -1;
  }
  set_err(err, errcap, "cannot replace '%s': something keeps recreating it", path);
  return -1;
}

int tc_cache_store(const char *dir, const char *keyhex, const void *data, size_t size, char *err,
                   size_t errcap) {
  char path[TC_PATH_MAX], shard[TC_PATH_MAX], tmp[TC_PATH_MAX];
  if (!dir || !*dir || (!data && size)) {
    set_err(err, errcap, "tc_cache_store: bad argument");
    return -1;
  }
  if (tc_cache_entry_path(dir, keyhex, path, sizeof path) != 0) {
    set_err(err, errcap, "bad cache key or path too long (dir '%.200s')", dir);
    return -1;
  }
  if (make_shard(dir, keyhex, shard, sizeof shard, err, errcap) != 0) return -1;
  int fd = open_temp(shard, keyhex, tmp, sizeof tmp, err, errcap);
  if (fd < 0) return -1;
  if (write_temp(fd, tmp, data ? data : "", size, err, errcap) != 0 ||
      publish(tmp, path, shard, err, errcap) != 0) {
    unlink(tmp);
    return -1;
  }
  sweep_stale_tmp(shard);
  return 0;
}

int tc_cache_remove(const char *dir, const char *keyhex, char *err, size_t errcap) {
  char path[TC_PATH_MAX], shard[TC_PATH_MAX];
  if (tc_cache_entry_path(dir, keyhex, path, sizeof path) != 0 ||
      fmt_path(shard, sizeof shard, "%s/%c%c", dir, keyhex[0], keyhex[1]) != 0) {
    set_err(err, errcap, "bad cache key or path too long");
    return -1;
  }
  if (unlink(path) == 0 || errno == ENOENT || errno == ENOTDIR) return 0;
  if (errno == EISDIR) return remove_dir_entry(path, shard, err, errcap);
  set_err(err, errcap, "cannot remove cache entry '%s': %s", path, strerror(errno));
  return -1;
}

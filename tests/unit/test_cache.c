/* test_cache.c - unit tests for runtime/cache.c: SHA-256 test vectors, the
 * cache directory choice, store/lookup, detection and repair of every kind of
 * damaged entry, and many processes and threads storing and looking up the
 * same keys at once.  Needs only cache.c (no compiler, no GPU). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "../../runtime/cache.h"

#define KEY_A "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
#define KEY_B "ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00"

/* ---- helpers ---------------------------------------------------------- */

static void hex_of(const void *data, size_t len, char out[65]) {
  uint8_t d[32];
  tc_sha256(data, len, d);
  tc_hex(d, 32, out);
}

static char *entry_path(const char *dir, const char *key) {
  static _Thread_local char path[4096];
  assert_int_equal(tc_cache_entry_path(dir, key, path, sizeof path), 0);
  return path;
}

/* A payload with some structure: n bytes derived from seed. */
static uint8_t *make_payload(size_t n, unsigned seed) {
  uint8_t *p = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(seed * 131u + i * i * 7u + (i >> 8));
  return p;
}

static void write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

static void flip_byte(const char *path, long off) {
  size_t n = 0;
  char *buf = tu_read_file(path, &n);
  assert_non_null(buf);
  assert_true((size_t)off < n);
  buf[off] ^= 0x5a;
  write_bytes(path, buf, n);
  free(buf);
}

static void expect_hit(const char *dir, const char *key, const void *data, size_t n) {
  void *got = NULL;
  size_t gotn = 0;
  char err[512] = "";
  int rc = tc_cache_lookup(dir, key, &got, &gotn, err, sizeof err);
  if (rc != TC_HIT) fprintf(stderr, "lookup: rc=%d %s\n", rc, err);
  assert_int_equal(rc, TC_HIT);
  assert_int_equal(gotn, n);
  if (n) assert_memory_equal(got, data, n);
  free(got);
}

static void expect_status(const char *dir, const char *key, int want) {
  void *got = (void *)1;
  size_t gotn = 7;
  char err[512] = "";
  int rc = tc_cache_lookup(dir, key, &got, &gotn, err, sizeof err);
  if (rc != want) fprintf(stderr, "lookup: rc=%d want %d: %s\n", rc, want, err);
  assert_int_equal(rc, want);
  assert_null(got);
  assert_int_equal(gotn, 0);
  if (want == TC_CORRUPT || want == TC_ERROR) assert_true(strlen(err) > 0);
}

static void store_ok(const char *dir, const char *key, const void *data, size_t n) {
  char err[512] = "";
  int rc = tc_cache_store(dir, key, data, n, err, sizeof err);
  if (rc) fprintf(stderr, "store: %s\n", err);
  assert_int_equal(rc, 0);
}

/* Count names in the tree under dir that start with prefix. */
static int count_prefixed(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    if (!strncmp(de->d_name, prefix, strlen(prefix))) n++;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", dir, de->d_name);
    struct stat st;
    if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode)) n += count_prefixed(sub, prefix);
  }
  closedir(d);
  return n;
}

static int setup_tmp(void **state) {
  char *dir = malloc(4096);
  if (tu_tmpdir(dir, 4096) != 0) { free(dir); return -1; }
  *state = dir;
  return 0;
}

static int teardown_tmp(void **state) {
  tu_rmtree(*state);
  free(*state);
  return 0;
}

/* ---- SHA-256 ------------------------------------------------------------ */

static void test_sha256_vectors(void **state) {
  (void)state;
  char hex[65];
  hex_of("abc", 3, hex);
  assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  hex_of(m448, strlen(m448), hex);
  assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  hex_of("", 0, hex);
  assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

  /* One million 'a', fed in uneven chunks to exercise the block buffer. */
  char *a = malloc(1000000);
  memset(a, 'a', 1000000);
  tc_sha256_ctx c;
  tc_sha256_init(&c);
  size_t off = 0, step = 1;
  while (off < 1000000) {
    size_t n = step < 1000000 - off ? step : 1000000 - off;
    tc_sha256_update(&c, a + off, n);
    off += n;
    step = step * 3 % 997 + 1;
  }
  uint8_t d[32];
  tc_sha256_final(&c, d);
  tc_hex(d, 32, hex);
  assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  hex_of(a, 1000000, hex);
  assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(a);
}

/* Messages of length 55, 56, 63, 64, 65 straddle the padding boundary: the
 * one-shot and the byte-at-a-time digests must agree. */
static void test_sha256_boundaries(void **state) {
  (void)state;
  uint8_t msg[200];
  for (int i = 0; i < 200; i++) msg[i] = (uint8_t)(i * 37);
  for (size_t n = 0; n < 200; n++) {
    uint8_t d1[32], d2[32];
    tc_sha256(msg, n, d1);
    tc_sha256_ctx c;
    tc_sha256_init(&c);
    for (size_t i = 0; i < n; i++) tc_sha256_update(&c, msg + i, 1);
    tc_sha256_final(&c, d2);
    assert_memory_equal(d1, d2, 32);
  }
}

/* ---- directory choice ---------------------------------------------------- */

static void test_resolve_dir(void **state) {
  (void)state;
  char buf[4096], want[4096];
  char *saved[3];
  const char *names[3] = {"TILE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  for (int i = 0; i < 3; i++) saved[i] = getenv(names[i]) ? strdup(getenv(names[i])) : NULL;

  setenv("TILE_CACHE_DIR", "/t/env", 1);
  setenv("XDG_CACHE_HOME", "/t/xdg", 1);
  setenv("HOME", "/t/home", 1);
  assert_int_equal(tc_cache_resolve_dir("/t/opt", buf, sizeof buf), 0);
  assert_string_equal(buf, "/t/opt");
  assert_int_equal(tc_cache_resolve_dir(NULL, buf, sizeof buf), 0);
  assert_string_equal(buf, "/t/env");
  assert_int_equal(tc_cache_resolve_dir("", buf, sizeof buf), 0);
  assert_string_equal(buf, "/t/env");
  unsetenv("TILE_CACHE_DIR");
  assert_int_equal(tc_cache_resolve_dir(NULL, buf, sizeof buf), 0);
  assert_string_equal(buf, "/t/xdg/tile");
  setenv("XDG_CACHE_HOME", "relative", 1); /* ignored, as the XDG spec says */
  assert_int_equal(tc_cache_resolve_dir(NULL, buf, sizeof buf), 0);
  assert_string_equal(buf, "/t/home/.cache/tile");
  unsetenv("XDG_CACHE_HOME");
  assert_int_equal(tc_cache_resolve_dir(NULL, buf, sizeof buf), 0);
  assert_string_equal(buf, "/t/home/.cache/tile");
  unsetenv("HOME");
  assert_int_equal(tc_cache_resolve_dir(NULL, buf, sizeof buf), 0);
  snprintf(want, sizeof want, "/tmp/tile-cache-%lu", (unsigned long)getuid());
  assert_string_equal(buf, want);
  assert_int_equal(tc_cache_resolve_dir("/a/rather/long/path", buf, 8), -1);

  for (int i = 0; i < 3; i++) {
    if (saved[i]) setenv(names[i], saved[i], 1);
    else unsetenv(names[i]);
    free(saved[i]);
  }
}

static void test_mkdir_p(void **state) {
  const char *tmp = *state;
  char path[4096], err[512] = "";
  snprintf(path, sizeof path, "%s/x/y//z/", tmp);
  assert_int_equal(tc_mkdir_p(path, err, sizeof err), 0);
  assert_int_equal(tc_mkdir_p(path, err, sizeof err), 0); /* again: fine */
  snprintf(path, sizeof path, "%s/x/y/z", tmp);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_true(S_ISDIR(st.st_mode));
  assert_int_equal(st.st_mode & 0077, 0); /* leaf is 0700 */

  /* A regular file in the way: a clear error naming the path. */
  snprintf(path, sizeof path, "%s/file", tmp);
  write_bytes(path, "x", 1);
  snprintf(path, sizeof path, "%s/file/sub", tmp);
  assert_int_equal(tc_mkdir_p(path, err, sizeof err), -1);
  assert_non_null(strstr(err, "file"));
  char derr[512] = "";
  assert_int_equal(tc_cache_store(path, KEY_A, "x", 1, derr, sizeof derr), -1);
  assert_true(strlen(derr) > 0);
  assert_int_equal(tc_mkdir_p("", err, sizeof err), -1);
}

/* ---- store / lookup --------------------------------------------------------- */

static void test_store_lookup(void **state) {
  const char *dir = *state;
  uint8_t *p = make_payload(100000, 1);
  expect_status(dir, KEY_A, TC_MISS);
  store_ok(dir, KEY_A, p, 100000);
  expect_hit(dir, KEY_A, p, 100000);
  expect_status(dir, KEY_B, TC_MISS);

  /* The file is where the docs say, and has the documented header. */
  char path[4096];
  snprintf(path, sizeof path, "%s/a1/%s.cubin", dir, KEY_A);
  size_t n;
  char *raw = tu_read_file(path, &n);
  assert_non_null(raw);
  assert_int_equal(n, TC_HEADER_SIZE + 100000);
  assert_memory_equal(raw, "TILECACHE\x01", 10);
  assert_memory_equal(raw + TC_HEADER_SIZE, p, 100000);
  free(raw);

  /* Overwrite with other data; empty payloads work. */
  uint8_t *q = make_payload(5, 2);
  store_ok(dir, KEY_A, q, 5);
  expect_hit(dir, KEY_A, q, 5);
  store_ok(dir, KEY_B, NULL, 0);
  expect_hit(dir, KEY_B, NULL, 0);
  assert_int_equal(count_prefixed(dir, ".tmp."), 0);

  char err[256];
  assert_int_equal(tc_cache_remove(dir, KEY_A, err, sizeof err), 0);
  expect_status(dir, KEY_A, TC_MISS);
  assert_int_equal(tc_cache_remove(dir, KEY_A, err, sizeof err), 0);
  free(p);
  free(q);
}

static void test_missing_dir_and_bad_keys(void **state) {
  const char *dir = *state;
  char missing[4096], err[256];
  snprintf(missing, sizeof missing, "%s/does/not/exist", dir);
  expect_status(missing, KEY_A, TC_MISS);
  expect_status(dir, "", TC_ERROR);
  expect_status(dir, "../../etc/passwd", TC_ERROR);
  expect_status(dir, "ABCD", TC_ERROR); /* uppercase is not a key */
  assert_int_equal(tc_cache_store(dir, "a/b", "x", 1, err, sizeof err), -1);
  assert_int_equal(tc_cache_store(dir, KEY_A, NULL, 1, err, sizeof err), -1);
  /* store into a directory that does not exist yet: created, leaf 0700 */
  store_ok(missing, KEY_A, "hello", 5);
  expect_hit(missing, KEY_A, "hello", 5);
  struct stat st;
  assert_int_equal(stat(missing, &st), 0);
  assert_int_equal(st.st_mode & 0077, 0);
}

/* ---- corruption ------------------------------------------------------------- */

enum damage {
  D_TRUNC_PAYLOAD, D_TRUNC_HEADER, D_FLIP_PAYLOAD, D_BAD_MAGIC, D_EMPTY, D_EXTRA_BYTE,
  D_DIRECTORY, D_FIFO, D_SHARD_FILE, D_COUNT
};

static void damage(const char *dir, const char *key, enum damage d, size_t n) {
  const char *path = entry_path(dir, key);
  char shard[4096];
  switch (d) {
  case D_TRUNC_PAYLOAD: assert_int_equal(truncate(path, TC_HEADER_SIZE + (off_t)n / 2), 0); break;
  case D_TRUNC_HEADER: assert_int_equal(truncate(path, 10), 0); break;
  case D_FLIP_PAYLOAD: flip_byte(path, TC_HEADER_SIZE + (long)n / 3); break;
  case D_BAD_MAGIC: flip_byte(path, 0); break;
  case D_EMPTY: assert_int_equal(truncate(path, 0), 0); break;
  case D_EXTRA_BYTE: {
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    fputc(0, f);
    fclose(f);
    break;
  }
  case D_DIRECTORY: { /* a non-empty directory where the file should be */
    char inner[4200];
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(inner, sizeof inner, "%s/junk", path);
    write_bytes(inner, "junk", 4);
    break;
  }
  case D_FIFO: /* must not block the reader */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    break;
  case D_SHARD_FILE: /* the shard directory replaced by a file */
    snprintf(shard, sizeof shard, "%s/%c%c", dir, key[0], key[1]);
    tu_rmtree(shard);
    write_bytes(shard, "x", 1);
    break;
  case D_COUNT: break;
  }
}

static void test_corruption_detected_and_repaired(void **state) {
  const char *dir = *state;
  size_t n = 4096 + 17;
  uint8_t *p = make_payload(n, 3);
  for (int d = 0; d < D_COUNT; d++) {
    store_ok(dir, KEY_A, p, n);
    expect_hit(dir, KEY_A, p, n);
    damage(dir, KEY_A, (enum damage)d, n);
    expect_status(dir, KEY_A, TC_CORRUPT);
    store_ok(dir, KEY_A, p, n); /* repair */
    expect_hit(dir, KEY_A, p, n);
  }
  assert_int_equal(count_prefixed(dir, ".tmp."), 0);
  assert_int_equal(count_prefixed(dir, ".trash."), 0);
  free(p);
}

/* Every single byte of the header matters. */
static void test_every_header_byte_checked(void **state) {
  const char *dir = *state;
  uint8_t *p = make_payload(300, 4);
  for (long off = 0; off < TC_HEADER_SIZE; off++) {
    store_ok(dir, KEY_B, p, 300);
    flip_byte(entry_path(dir, KEY_B), off);
    expect_status(dir, KEY_B, TC_CORRUPT);
  }
  store_ok(dir, KEY_B, p, 300);
  expect_hit(dir, KEY_B, p, 300);
  free(p);
}

static void test_remove_directory_entry(void **state) {
  const char *dir = *state;
  char err[256];
  store_ok(dir, KEY_A, "abc", 3);
  damage(dir, KEY_A, D_DIRECTORY, 3);
  assert_int_equal(tc_cache_remove(dir, KEY_A, err, sizeof err), 0);
  expect_status(dir, KEY_A, TC_MISS);
}

/* A temp file left by a killed writer is swept once it is old. */
static void test_stale_tmp_swept(void **state) {
  const char *dir = *state;
  char stale[4096], fresh[4096];
  store_ok(dir, KEY_A, "abc", 3);
  snprintf(stale, sizeof stale, "%s/a1/.tmp.%s.1.1.1.00", dir, KEY_A);
  snprintf(fresh, sizeof fresh, "%s/a1/.tmp.%s.1.1.2.00", dir, KEY_A);
  write_bytes(stale, "partial", 7);
  write_bytes(fresh, "partial", 7);
  struct timeval tv[2] = {{time(NULL) - 2 * TC_STALE_TMP_SECONDS, 0},
                          {time(NULL) - 2 * TC_STALE_TMP_SECONDS, 0}};
  assert_int_equal(utimes(stale, tv), 0);
  store_ok(dir, KEY_A, "abc", 3);
  assert_int_equal(access(stale, F_OK), -1);
  assert_int_equal(access(fresh, F_OK), 0); /* may belong to a live writer */
  unlink(fresh);
}

/* ---- concurrency --------------------------------------------------------- */

#define NKEYS 3
#define NVARIANTS 4
static const char *const conc_keys[NKEYS] = {
  "00aa00aa00aa00aa00aa00aa00aa00aa00aa00aa00aa00aa00aa00aa00aa00aa",
  "00bb00bb00bb00bb00bb00bb00bb00bb00bb00bb00bb00bb00bb00bb00bb00bb",
  "cc11cc11cc11cc11cc11cc11cc11cc11cc11cc11cc11cc11cc11cc11cc11cc11",
};

typedef struct conc_arg {
  const char *dir;
  double seconds;
  unsigned seed;
  long lookups, hits, failures;
  uint8_t *payload[NKEYS][NVARIANTS];
  size_t len[NKEYS][NVARIANTS];
} conc_arg;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Writers of one key store different variants, so a torn or mixed file
 * would be caught even if its checksum were not checked. */
static void conc_fill(conc_arg *a) {
  for (int k = 0; k < NKEYS; k++)
    for (int v = 0; v < NVARIANTS; v++) {
      a->len[k][v] = 20000 + (size_t)k * 30011 + (size_t)v * 7919;
      a->payload[k][v] = make_payload(a->len[k][v], (unsigned)(k * 16 + v));
    }
}

static void conc_free(conc_arg *a) {
  for (int k = 0; k < NKEYS; k++)
    for (int v = 0; v < NVARIANTS; v++) free(a->payload[k][v]);
}

static int conc_matches(const conc_arg *a, int k, const void *data, size_t n) {
  for (int v = 0; v < NVARIANTS; v++)
    if (n == a->len[k][v] && memcmp(data, a->payload[k][v], n) == 0) return 1;
  return 0;
}

static void *conc_worker(void *p) {
  conc_arg *a = p;
  unsigned seed = a->seed;
  double end = now_s() + a->seconds;
  char err[512];
  while (now_s() < end) {
    int k = (int)(rand_r(&seed) % NKEYS), v = (int)(rand_r(&seed) % NVARIANTS);
    int op = (int)(rand_r(&seed) % 16);
    if (op == 0) {
      if (tc_cache_remove(a->dir, conc_keys[k], err, sizeof err) != 0) a->failures++;
    } else if (op < 6) {
      if (tc_cache_store(a->dir, conc_keys[k], a->payload[k][v], a->len[k][v], err, sizeof err)) {
        fprintf(stderr, "store failed: %s\n", err);
        a->failures++;
      }
    } else {
      void *data;
      size_t n;
      int rc = tc_cache_lookup(a->dir, conc_keys[k], &data, &n, err, sizeof err);
      a->lookups++;
      if (rc == TC_HIT) {
        a->hits++;
        if (!conc_matches(a, k, data, n)) {
          fprintf(stderr, "lookup returned wrong data\n");
          a->failures++;
        }
        free(data);
      } else if (rc != TC_MISS) {
        fprintf(stderr, "lookup rc=%d: %s\n", rc, err);
        a->failures++;
      }
    }
  }
  return NULL;
}

/* Run nthreads workers in this process; returns the number of failures. */
static long conc_run_threads(const char *dir, int nthreads, double seconds, unsigned seed,
                             long *hits) {
  conc_arg args[16];
  pthread_t th[16];
  long failures = 0;
  *hits = 0;
  for (int i = 0; i < nthreads; i++) {
    memset(&args[i], 0, sizeof args[i]);
    args[i].dir = dir;
    args[i].seconds = seconds;
    args[i].seed = seed * 977 + (unsigned)i;
    conc_fill(&args[i]);
    if (pthread_create(&th[i], NULL, conc_worker, &args[i]) != 0) return 1000;
  }
  for (int i = 0; i < nthreads; i++) {
    pthread_join(th[i], NULL);
    failures += args[i].failures;
    *hits += args[i].hits;
    conc_free(&args[i]);
  }
  return failures;
}

static void test_concurrent_threads(void **state) {
  const char *dir = *state;
  long hits;
  assert_int_equal(conc_run_threads(dir, 8, 1.0, 1, &hits), 0);
  print_message("8 threads: %ld lookups hit\n", hits);
  assert_true(hits > 0);
  assert_int_equal(count_prefixed(dir, ".tmp."), 0);
}

static void test_concurrent_processes(void **state) {
  const char *dir = *state;
  pid_t pids[8];
  for (int i = 0; i < 8; i++) {
    pids[i] = fork();
    assert_true(pids[i] >= 0);
    if (pids[i] == 0) {
      long hits;
      long f = conc_run_threads(dir, 4, 1.0, (unsigned)(i + 100), &hits);
      _exit(f == 0 && hits > 0 ? 0 : 1);
    }
  }
  for (int i = 0; i < 8; i++) {
    int status = 0;
    assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  assert_int_equal(count_prefixed(dir, ".tmp."), 0);
  assert_int_equal(count_prefixed(dir, ".trash."), 0);
  /* whatever is left is valid */
  conc_arg a;
  memset(&a, 0, sizeof a);
  conc_fill(&a);
  for (int k = 0; k < NKEYS; k++) {
    void *data;
    size_t n;
    int rc = tc_cache_lookup(dir, conc_keys[k], &data, &n, NULL, 0);
    assert_true(rc == TC_HIT || rc == TC_MISS);
    if (rc == TC_HIT) {
      assert_true(conc_matches(&a, k, data, n));
      free(data);
    }
  }
  conc_free(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sha256_vectors),
    cmocka_unit_test(test_sha256_boundaries),
    cmocka_unit_test(test_resolve_dir),
    cmocka_unit_test_setup_teardown(test_mkdir_p, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown(test_store_lookup, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown(test_missing_dir_and_bad_keys, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown(test_corruption_detected_and_repaired, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown(test_every_header_byte_checked, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown(test_remove_directory_entry, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown(test_stale_tmp_swept, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown(test_concurrent_threads, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown(test_concurrent_processes, setup_tmp, teardown_tmp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

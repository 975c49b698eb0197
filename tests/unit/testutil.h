/* testutil.h - shared helpers for the cmocka unit tests. */
#ifndef TILE_TESTUTIL_H
#define TILE_TESTUTIL_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#ifndef TILE_SRC_DIR
#define TILE_SRC_DIR "."
#endif
#ifndef TILE_BUILD_DIR
#define TILE_BUILD_DIR "build"
#endif

/* xorshift64: the tests' reproducible random numbers (*state != 0) */
static inline uint64_t tu_xorshift(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

/* Read a whole file; NULL if it cannot be read. Caller frees. */
static inline char *tu_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (!buf) { fclose(f); return NULL; }
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  buf[got] = 0;
  if (len) *len = got;
  return buf;
}

/* A fresh temporary directory (mkdtemp), path written into buf. */
static inline int tu_tmpdir(char *buf, size_t cap) {
  const char *base = getenv("TMPDIR");
  snprintf(buf, cap, "%s/tiletest.XXXXXX", base && *base ? base : "/tmp");
  return mkdtemp(buf) ? 0 : -1;
}

/* Remove a directory tree (for tmpdirs made by tests). */
static inline void tu_rmtree(const char *path) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", path);
}
/* cmocka checks of a text: it contains needle / it does not (what names the
 * text in the failure message, which prints the whole text). */
static inline void has(const char *hay, const char *needle, const char *what) {
  if (!hay || !strstr(hay, needle)) {
    print_error("%s does not contain:\n  %s\n--- %s ---\n%s\n", what, needle, what, hay ? hay : "(null)");
    fail();
  }
}
static inline void lacks(const char *hay, const char *needle, const char *what) {
  if (hay && strstr(hay, needle)) {
    print_error("%s should not contain:\n  %s\n--- %s ---\n%s\n", what, needle, what, hay);
    fail();
  }
}

/* The emulator's tests (after emu/emu.h): parse ptx and run the launch l;
 * true when it ran, else the report (or the parser's error) in err. */
#ifdef TILE_EMU_H
static inline bool tu_emu_run(const char *ptx, const EmLaunch *l, char *err, size_t errlen) {
  EmModule *m = NULL;
  if (!em_ptx_parse(ptx, strlen(ptx), &m, err, errlen)) return false;
  bool ok = em_launch(m, l, err, errlen);
  em_module_free(m);
  return ok;
}
#endif

#endif

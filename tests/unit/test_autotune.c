/* test_autotune.c - tile_jit_autotune_* on the emulator: every config
 * compiled and timed once per key, the fastest chosen, kept in memory and
 * on disk, reused by a second tuner and by a second process without timing
 * anything; bad configs skipped with notes, all of them bad an error.
 *
 * Timing under the emulator means nothing (its events read 0 ms), so the
 * tests give the tuner a fake clock that each launch advances by what the
 * test says that config costs: the choice is then known in advance, and
 * the clock's reads count the timed launches. */
#include "testutil.h"
#include "tile/runtime.h"
#include "../../runtime/cache.h"

#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const VADD =
    "kernel vadd(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 256, const W: i32 = 4) warps(W) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let mask = offs < n;\n"
    "    store(out + offs, load(x + offs, mask) + load(y + offs, mask), mask);\n"
    "}\n";

#define MAXC 8

/* What the launch callback and the fake clock share. */
typedef struct ctx {
  tile_devptr x, y, out;
  int n;
  double now;            /* the fake clock, ms */
  double cost[MAXC];     /* what one launch of each config adds to it */
  int launches[MAXC];
  int clock_reads;
  int fail_config;       /* this config's launches fail (-1: none) */
  int block[MAXC];       /* the BLOCK each config's kernel was built with */
  int threads[MAXC];
} ctx;

static double fake_clock(void *u) {
  ctx *c = u;
  c->clock_reads++;
  return c->now;
}

static tile_status launch_vadd(void *u, tile_kernel *k, int config, tile_stream s) {
  ctx *c = u;
  assert_true(config >= 0 && config < MAXC);
  c->launches[config]++;
  if (config == c->fail_config)
    return tile_set_error(TILE_ERR_CUDA, "simulated: too much shared memory for config %d", config);
  const tile_kernel_info *info = tile_kernel_get_info(k);
  int block = atoi(tile_kernel_const(info, "BLOCK"));
  c->block[config] = block;
  c->threads[config] = info->threads;
  void *args[] = {&c->x, &c->y, &c->out, &c->n};
  tile_status st = tile_launch(k, (unsigned)((c->n + block - 1) / block), 1, 1, args, 4, s);
  c->now += c->cost[config];
  return st;
}

static void ctx_init(ctx *c, int n) {
  memset(c, 0, sizeof *c);
  c->n = n;
  c->fail_config = -1;
  size_t bytes = sizeof(float) * (size_t)n;
  float *h = malloc(bytes);
  assert_int_equal(tile_malloc(&c->x, bytes), TILE_OK);
  assert_int_equal(tile_malloc(&c->y, bytes), TILE_OK);
  assert_int_equal(tile_malloc(&c->out, bytes), TILE_OK);
  for (int i = 0; i < n; i++) h[i] = (float)i;
  assert_int_equal(tile_memcpy_htod(c->x, h, bytes), TILE_OK);
  for (int i = 0; i < n; i++) h[i] = 0.5f * (float)i;
  assert_int_equal(tile_memcpy_htod(c->y, h, bytes), TILE_OK);
  assert_int_equal(tile_memset_d8(c->out, 0, bytes), TILE_OK);
  free(h);
}

static void ctx_check_out(ctx *c) {
  float *h = malloc(sizeof(float) * (size_t)c->n);
  assert_int_equal(tile_memcpy_dtoh(h, c->out, sizeof(float) * (size_t)c->n), TILE_OK);
  for (int i = 0; i < c->n; i++) assert_true(h[i] == 1.5f * (float)i);
  free(h);
}

static void ctx_free(ctx *c) {
  tile_free(c->x);
  tile_free(c->y);
  tile_free(c->out);
}

static int launches(const ctx *c) {
  int s = 0;
  for (int i = 0; i < MAXC; i++) s += c->launches[i];
  return s;
}

/* The four good configs of the tests; config 3 sets W only, its BLOCK comes
 * from the common defines (64). */
static const tile_jit_define C0[] = {{"BLOCK", "128"}, {"W", "1"}};
static const tile_jit_define C1[] = {{"BLOCK", "256"}, {"W", "2"}};
static const tile_jit_define C2[] = {{"BLOCK", "512"}, {"W", "4"}};
static const tile_jit_define C3[] = {{"W", "8"}};
static const tile_jit_define BAD_W[] = {{"W", "3"}};       /* warps(3): a compile error */
static const tile_jit_define BAD_B[] = {{"BLOCK", "x+"}};  /* a syntax error in -D */
static const tile_jit_define COMMON[] = {{"BLOCK", "64"}};
static const tile_jit_autotune_config GOOD[] = {{C0, 2}, {C1, 2}, {C2, 2}, {C3, 1}};

#define WARMUP 1
#define REPS 3

static tile_jit_autotune_desc desc_of(const tile_jit_options *o, const tile_jit_autotune_config *cfg, int n, ctx *c) {
  tile_jit_autotune_desc d = {.filename = "vadd.tile", .source = VADD, .len = strlen(VADD), .opts = o,
                              .configs = cfg, .nconfigs = n, .warmup = WARMUP, .reps = REPS,
                              .clock = fake_clock, .clock_user = c};
  return d;
}

static tile_jit_autotuner *make(const tile_jit_autotune_desc *d) {
  tile_jit_autotuner *t = NULL;
  tile_status s = tile_jit_autotune_create(d, &t);
  if (s != TILE_OK) print_error("%s\n", tile_last_error());
  assert_int_equal(s, TILE_OK);
  return t;
}

static tile_status go(tile_jit_autotuner *t, const char *key, ctx *c, tile_jit_autotune_stats *st) {
  tile_status s = tile_jit_autotune_launch(t, key, launch_vadd, c, NULL, st);
  if (s != TILE_OK) print_error("%s\n", tile_last_error());
  return s;
}

static int entry_exists(const char *dir, const char *key) {
  char path[4200];
  struct stat sb;
  assert_int_equal(tc_cache_entry_path(dir, key, path, sizeof path), 0);
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static void setup_emulator(void) {
  tile_init_options o = {.backend = TILE_BACKEND_EMULATOR};
  assert_int_equal(tile_init_ex(&o), TILE_OK);
}

/* The first launch for a key times every config once (warmup + reps
 * launches each, 2 clock reads per timed launch), chooses the cheapest,
 * stores it, launches it; the next launch for the key times nothing. */
static void test_tune_once(void **state) {
  (void)state;
  setup_emulator();
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.cache_dir = dir, .defines = COMMON, .ndefines = 1};
  ctx c;
  ctx_init(&c, 1000);
  c.cost[0] = 3, c.cost[1] = 1, c.cost[2] = 2, c.cost[3] = 5;
  tile_jit_autotune_desc d = desc_of(&o, GOOD, 4, &c);
  tile_jit_autotuner *t = make(&d);
  tile_jit_autotune_stats st;
  assert_int_equal(go(t, "n=1000", &c, &st), TILE_OK);
  assert_int_equal(st.tuned, 1);
  assert_int_equal(st.from_disk, 0);
  assert_int_equal(st.ntimed, 4);
  assert_int_equal(st.nskipped, 0);
  assert_int_equal(st.config, 1);
  assert_true(st.best_ms == 1.0);
  assert_string_equal(st.notes, "");
  for (int i = 0; i < 4; i++) assert_int_equal(c.launches[i], WARMUP + REPS + (i == 1));
  assert_int_equal(c.clock_reads, 4 * REPS * 2);
  /* each config built with its own constants, the common BLOCK under config 3 */
  int want_block[] = {128, 256, 512, 64}, want_threads[] = {32, 64, 128, 256};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(c.block[i], want_block[i]);
    assert_int_equal(c.threads[i], want_threads[i]);
  }
  ctx_check_out(&c);
  assert_int_equal(strlen(st.key), 64);
  assert_true(entry_exists(dir, st.key));
  char key1[65];
  memcpy(key1, st.key, sizeof key1);

  /* the same key again: from memory, nothing timed, the best launched once */
  int before = launches(&c), reads = c.clock_reads;
  assert_int_equal(go(t, "n=1000", &c, &st), TILE_OK);
  assert_int_equal(st.tuned, 0);
  assert_int_equal(st.from_disk, 0);
  assert_int_equal(st.ntimed, 0);
  assert_int_equal(st.config, 1);
  assert_string_equal(st.key, key1);
  assert_int_equal(launches(&c), before + 1);
  assert_int_equal(c.launches[1], WARMUP + REPS + 2);
  assert_int_equal(c.clock_reads, reads);

  /* what was measured */
  int best = -1;
  double ms[4];
  assert_int_equal(tile_jit_autotune_best(t, "n=1000", &best, ms), TILE_OK);
  assert_int_equal(best, 1);
  for (int i = 0; i < 4; i++) assert_true(ms[i] == c.cost[i]);

  /* another key is tuned anew, into another entry; now config 3 is cheapest */
  c.cost[3] = 0.5;
  assert_int_equal(go(t, "n=2000", &c, &st), TILE_OK);
  assert_int_equal(st.tuned, 1);
  assert_int_equal(st.ntimed, 4);
  assert_int_equal(st.config, 3);
  assert_string_not_equal(st.key, key1);
  assert_true(entry_exists(dir, st.key));
  assert_int_equal(tile_jit_autotune_best(t, "n=1000", &best, NULL), TILE_OK);
  assert_int_equal(best, 1); /* the first key keeps its choice */
  assert_int_equal(tile_jit_autotune_best(t, "n=3000", &best, NULL), TILE_ERR_NOT_FOUND);
  assert_int_equal(best, -1);

  tile_jit_autotune_destroy(t);
  ctx_free(&c);
  tu_rmtree(dir);
}

/* What a second process runs (test_disk_reuse, through /proc/self/exe):
 * the tuning of the parent read from disk, nothing timed, only the chosen
 * config launched.  Returns 0 when so. */
static int child_main(const char *dir) {
  tile_init_options io = {.backend = TILE_BACKEND_EMULATOR};
  if (tile_init_ex(&io) != TILE_OK) return 10;
  tile_jit_options o = {.cache_dir = dir, .defines = COMMON, .ndefines = 1};
  ctx c;
  memset(&c, 0, sizeof c);
  c.n = 1000;
  c.fail_config = -1;
  size_t bytes = sizeof(float) * 1000;
  if (tile_malloc(&c.x, bytes) || tile_malloc(&c.y, bytes) || tile_malloc(&c.out, bytes)) return 11;
  tile_jit_autotune_desc d = desc_of(&o, GOOD, 4, &c);
  tile_jit_autotuner *t = NULL;
  if (tile_jit_autotune_create(&d, &t) != TILE_OK) return 12;
  tile_jit_autotune_stats st;
  tile_status s = tile_jit_autotune_launch(t, "n=1000", launch_vadd, &c, NULL, &st);
  int rc = s != TILE_OK ? 13 : !st.from_disk ? 14 : st.tuned || st.ntimed ? 15 : c.clock_reads ? 16
           : st.config != 1 ? 17 : launches(&c) != 1 || c.launches[1] != 1 ? 18 : 0;
  if (rc) fprintf(stderr, "child: status %s, from_disk %d, tuned %d, ntimed %d, clock reads %d, config %d: %s\n",
                  tile_status_name(s), st.from_disk, st.tuned, st.ntimed, c.clock_reads, st.config, tile_last_error());
  tile_jit_autotune_destroy(t);
  return rc;
}

/* A second tuner (as a new process would) and a second process find the
 * choice on disk: nothing timed, only the chosen config loaded and
 * launched; other configs or another device setting are other entries. */
static void test_disk_reuse(void **state) {
  (void)state;
  setup_emulator();
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.cache_dir = dir, .defines = COMMON, .ndefines = 1};
  ctx c;
  ctx_init(&c, 1000);
  c.cost[0] = 3, c.cost[1] = 1, c.cost[2] = 2, c.cost[3] = 5;
  tile_jit_autotune_desc d = desc_of(&o, GOOD, 4, &c);
  tile_jit_autotuner *t = make(&d);
  tile_jit_autotune_stats st;
  assert_int_equal(go(t, "n=1000", &c, &st), TILE_OK);
  assert_int_equal(st.tuned, 1);
  tile_jit_autotune_destroy(t);

  /* a fresh tuner: the costs changed, but nothing is timed again */
  ctx c2;
  ctx_init(&c2, 1000);
  c2.cost[0] = 0.1, c2.cost[1] = 1, c2.cost[2] = 1, c2.cost[3] = 1;
  d.clock_user = &c2;
  t = make(&d);
  int best = -1;
  assert_int_equal(tile_jit_autotune_best(t, "n=1000", &best, NULL), TILE_OK); /* from disk, no launch */
  assert_int_equal(best, 1);
  assert_int_equal(launches(&c2), 0);
  tile_jit_autotune_destroy(t);
  t = make(&d);
  assert_int_equal(go(t, "n=1000", &c2, &st), TILE_OK);
  assert_int_equal(st.from_disk, 1);
  assert_int_equal(st.tuned, 0);
  assert_int_equal(st.ntimed, 0);
  assert_int_equal(st.config, 1);
  assert_int_equal(c2.clock_reads, 0);
  assert_int_equal(launches(&c2), 1);
  assert_int_equal(c2.launches[1], 1);
  ctx_check_out(&c2);
  /* then from memory */
  assert_int_equal(go(t, "n=1000", &c2, &st), TILE_OK);
  assert_int_equal(st.from_disk, 0);
  assert_int_equal(st.tuned, 0);
  assert_int_equal(launches(&c2), 2);
  tile_jit_autotune_destroy(t);

  /* another process */
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    execl("/proc/self/exe", "test_autotune", "--child", dir, (char *)NULL);
    _exit(99);
  }
  int ws = 0;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  assert_true(WIFEXITED(ws));
  assert_int_equal(WEXITSTATUS(ws), 0);

  /* three of the four configs: another entry, tuned */
  d.nconfigs = 3;
  t = make(&d);
  assert_int_equal(go(t, "n=1000", &c2, &st), TILE_OK);
  assert_int_equal(st.tuned, 1);
  assert_int_equal(st.ntimed, 3);
  assert_int_equal(st.config, 0); /* the cheapest now */
  tile_jit_autotune_destroy(t);
  /* no_cache: neither read nor written */
  o.no_cache = 1;
  d.nconfigs = 4;
  t = make(&d);
  assert_int_equal(go(t, "n=1000", &c2, &st), TILE_OK);
  assert_int_equal(st.tuned, 1);
  assert_int_equal(st.from_disk, 0);
  tile_jit_autotune_destroy(t);

  ctx_free(&c);
  ctx_free(&c2);
  tu_rmtree(dir);
}

/* A config that does not compile and one whose launches fail are skipped
 * with a note, however cheap they would be; the rest are tuned and the
 * choice stored with the skipped ones marked. */
static void test_bad_configs_skipped(void **state) {
  (void)state;
  setup_emulator();
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.cache_dir = dir};
  ctx c;
  ctx_init(&c, 700);
  const tile_jit_autotune_config cfg[] = {{BAD_W, 1}, {C1, 2}, {C2, 2}, {C0, 2}};
  c.cost[0] = 0.1, c.cost[1] = 4, c.cost[2] = 0.2, c.cost[3] = 2;
  c.fail_config = 2;
  tile_jit_autotune_desc d = desc_of(&o, cfg, 4, &c);
  tile_jit_autotuner *t = make(&d);
  tile_jit_autotune_stats st;
  assert_int_equal(go(t, "k", &c, &st), TILE_OK);
  assert_int_equal(st.tuned, 1);
  assert_int_equal(st.ntimed, 2);
  assert_int_equal(st.nskipped, 2);
  assert_int_equal(st.config, 3);
  has(st.notes, "config 0 (W=3): TILE_ERR_COMPILE: vadd.tile:1:", "the notes");
  has(st.notes, "warps(3)", "the notes");
  has(st.notes, "config 2 (BLOCK=512 W=4): TILE_ERR_CUDA: simulated: too much shared memory", "the notes");
  lacks(st.notes, "config 1", "the notes");
  assert_int_equal(c.launches[0], 0);     /* never compiled, never launched */
  assert_int_equal(c.launches[2], 1);     /* its first (warm-up) launch failed */
  assert_int_equal(c.launches[3], WARMUP + REPS + 1);
  ctx_check_out(&c);
  tile_jit_autotune_destroy(t);
  /* on disk: the skipped ones marked */
  t = make(&d);
  int best = -1;
  double ms[4];
  assert_int_equal(tile_jit_autotune_best(t, "k", &best, ms), TILE_OK);
  assert_int_equal(best, 3);
  assert_true(ms[0] < 0 && ms[2] < 0);
  assert_true(ms[1] == 4 && ms[3] == 2);
  tile_jit_autotune_destroy(t);
  ctx_free(&c);
  tu_rmtree(dir);
}

/* Every config bad: the first failure's status, a message naming each, and
 * nothing stored. */
static void test_all_bad(void **state) {
  (void)state;
  setup_emulator();
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.cache_dir = dir};
  ctx c;
  ctx_init(&c, 100);
  const tile_jit_autotune_config cfg[] = {{BAD_W, 1}, {BAD_B, 1}, {C0, 2}};
  c.fail_config = 2;
  tile_jit_autotune_desc d = desc_of(&o, cfg, 3, &c);
  d.kernel = "vadd";
  tile_jit_autotuner *t = make(&d);
  tile_jit_autotune_stats st;
  assert_int_equal(tile_jit_autotune_launch(t, "k", launch_vadd, &c, NULL, &st), TILE_ERR_COMPILE);
  const char *e = tile_last_error();
  has(e, "every config of vadd failed for key 'k'", "the error");
  has(e, "config 0 (W=3): TILE_ERR_COMPILE", "the error");
  has(e, "config 1 (BLOCK=x+): TILE_ERR_COMPILE", "the error");
  has(e, "config 2 (BLOCK=128 W=1): TILE_ERR_CUDA: simulated", "the error");
  assert_int_equal(st.tuned, 0);
  assert_int_equal(st.nskipped, 3);
  assert_int_equal(st.config, -1);
  assert_false(entry_exists(dir, st.key));
  int best;
  assert_int_equal(tile_jit_autotune_best(t, "k", &best, NULL), TILE_ERR_NOT_FOUND);
  /* a kernel name the module lacks fails every config too */
  tile_jit_autotune_destroy(t);
  d.configs = GOOD;
  d.nconfigs = 2;
  d.kernel = "nosuch";
  t = make(&d);
  assert_int_equal(tile_jit_autotune_launch(t, "k", launch_vadd, &c, NULL, &st), TILE_ERR_NOT_FOUND);
  has(tile_last_error(), "config 1 (BLOCK=256 W=2): TILE_ERR_NOT_FOUND", "the error");
  tile_jit_autotune_destroy(t);
  ctx_free(&c);
  tu_rmtree(dir);
}

/* A damaged or foreign entry under the key is tuned again and replaced. */
static void test_corrupt_entry(void **state) {
  (void)state;
  setup_emulator();
  char dir[256], err[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.cache_dir = dir};
  ctx c;
  ctx_init(&c, 300);
  c.cost[0] = 2, c.cost[1] = 1;
  tile_jit_autotune_desc d = desc_of(&o, GOOD, 2, &c);
  tile_jit_autotuner *t = make(&d);
  tile_jit_autotune_stats st;
  assert_int_equal(go(t, "k", &c, &st), TILE_OK);
  assert_int_equal(st.config, 1);
  tile_jit_autotune_destroy(t);
  const char *bad[] = {"TJTUNE01\nconfigs 2\nbest 5\n0 1\n1 2\n", "TJTUNE01\nconfigs 3\nbest 0\n0 1\n1 2\n2 3\n",
                       "TJTUNE01\nconfigs 2\nbest 0\n0 skipped\n1 2\n", "TJTUNE01\nconfigs 2\nbest 1\n0 1\n1 nan\n",
                       "TJTUNE01\nconfigs 2\nbest 1\n0 1\n1 2\nmore", "garbage"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    assert_int_equal(tc_cache_store(dir, st.key, bad[i], strlen(bad[i]), err, sizeof err), 0);
    t = make(&d);
    tile_jit_autotune_stats st2;
    assert_int_equal(go(t, "k", &c, &st2), TILE_OK);
    if (!st2.tuned) print_error("payload %zu was accepted\n", i);
    assert_int_equal(st2.tuned, 1);
    assert_int_equal(st2.config, 1);
    tile_jit_autotune_destroy(t);
  }
  /* a good payload written by hand is taken as it is */
  const char *good = "TJTUNE01\nconfigs 2\nbest 0\n0 0.5\n1 skipped\n";
  assert_int_equal(tc_cache_store(dir, st.key, good, strlen(good), err, sizeof err), 0);
  t = make(&d);
  assert_int_equal(go(t, "k", &c, &st), TILE_OK);
  assert_int_equal(st.from_disk, 1);
  assert_int_equal(st.config, 0);
  tile_jit_autotune_destroy(t);
  ctx_free(&c);
  tu_rmtree(dir);
}

/* Without a clock, CUDA events time the launches (the emulator's read 0 ms:
 * a tie, the first config wins). */
static void test_events(void **state) {
  (void)state;
  setup_emulator();
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.cache_dir = dir};
  ctx c;
  ctx_init(&c, 500);
  tile_jit_autotune_desc d = desc_of(&o, GOOD, 3, &c);
  d.clock = NULL;
  d.warmup = -1; /* none */
  d.reps = 2;
  tile_jit_autotuner *t = make(&d);
  tile_jit_autotune_stats st;
  assert_int_equal(go(t, "k", &c, &st), TILE_OK);
  assert_int_equal(st.tuned, 1);
  assert_int_equal(st.ntimed, 3);
  assert_int_equal(st.config, 0);
  assert_int_equal(c.clock_reads, 0);
  for (int i = 0; i < 3; i++) assert_int_equal(c.launches[i], 2 + (i == 0));
  ctx_check_out(&c);
  /* the kernel of any config, for launching it by hand */
  tile_kernel *k = NULL;
  assert_int_equal(tile_jit_autotune_kernel(t, 2, &k), TILE_OK);
  assert_string_equal(tile_kernel_const(tile_kernel_get_info(k), "BLOCK"), "512");
  assert_int_equal(tile_jit_autotune_kernel(t, 3, &k), TILE_ERR_INVALID);
  assert_null(k);
  tile_jit_autotune_destroy(t);
  ctx_free(&c);
  tu_rmtree(dir);
}

/* A clock that fails (NaN) fails the config it times. */
static double nan_clock(void *u) {
  ctx *c = u;
  return c->clock_reads++ >= 2 * REPS ? NAN : c->now; /* good for config 0's reps only */
}

static void test_clock_nan(void **state) {
  (void)state;
  setup_emulator();
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.cache_dir = dir};
  ctx c;
  ctx_init(&c, 100);
  tile_jit_autotune_desc d = desc_of(&o, GOOD, 2, &c);
  d.clock = nan_clock;
  tile_jit_autotuner *t = make(&d);
  tile_jit_autotune_stats st;
  assert_int_equal(go(t, "k", &c, &st), TILE_OK);
  assert_int_equal(st.ntimed, 1);
  assert_int_equal(st.config, 0);
  has(st.notes, "config 1 (BLOCK=256 W=2): TILE_ERR_INVALID: tile_jit_autotune: the clock gave nan ms", "the notes");
  tile_jit_autotune_destroy(t);
  ctx_free(&c);
  tu_rmtree(dir);
}

/* Threads launching one new key at once: one of them tunes, the others
 * wait for it and launch its choice.  The callback launches nothing (the
 * emulator runs one launch at a time); it counts, under a lock. */
typedef struct tctx {
  pthread_mutex_t mu;
  double now;
  int launches[MAXC];
} tctx;

static double t_clock(void *u) {
  tctx *c = u;
  pthread_mutex_lock(&c->mu);
  double v = c->now;
  pthread_mutex_unlock(&c->mu);
  return v;
}

static tile_status t_launch(void *u, tile_kernel *k, int config, tile_stream s) {
  (void)k, (void)s;
  tctx *c = u;
  pthread_mutex_lock(&c->mu);
  c->launches[config]++;
  c->now += config == 2 ? 1 : 5;
  pthread_mutex_unlock(&c->mu);
  return TILE_OK;
}

typedef struct targ {
  tile_jit_autotuner *t;
  tctx *c;
  tile_jit_autotune_stats st;
  tile_status s;
} targ;

static void *t_main(void *p) {
  targ *a = p;
  a->s = tile_jit_autotune_launch(a->t, "shared key", t_launch, a->c, NULL, &a->st);
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  setup_emulator();
  char dir[256];
  assert_int_equal(tu_tmpdir(dir, sizeof dir), 0);
  tile_jit_options o = {.cache_dir = dir};
  tctx c = {.mu = PTHREAD_MUTEX_INITIALIZER};
  tile_jit_autotune_desc d = desc_of(&o, GOOD, 4, NULL);
  d.clock = t_clock;
  d.clock_user = &c;
  tile_jit_autotuner *t = make(&d);
  enum { N = 6 };
  targ a[N];
  pthread_t th[N];
  for (int i = 0; i < N; i++) {
    a[i] = (targ){.t = t, .c = &c};
    assert_int_equal(pthread_create(&th[i], NULL, t_main, &a[i]), 0);
  }
  int tuned = 0;
  for (int i = 0; i < N; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(a[i].s, TILE_OK);
    assert_int_equal(a[i].st.config, 2);
    tuned += a[i].st.tuned;
  }
  assert_int_equal(tuned, 1);
  for (int i = 0; i < 4; i++) assert_int_equal(c.launches[i], WARMUP + REPS + (i == 2 ? N : 0));
  tile_jit_autotune_destroy(t);
  tu_rmtree(dir);
}

static void test_bad_arguments(void **state) {
  (void)state;
  tile_jit_autotuner *t = (tile_jit_autotuner *)1;
  assert_int_equal(tile_jit_autotune_create(NULL, &t), TILE_ERR_INVALID);
  assert_null(t);
  tile_jit_autotune_desc d = {.source = VADD, .len = strlen(VADD)};
  assert_int_equal(tile_jit_autotune_create(&d, &t), TILE_ERR_INVALID);
  has(tile_last_error(), "0 configs", "the message");
  const tile_jit_define noname[] = {{"", "1"}};
  const tile_jit_autotune_config cfg[] = {{noname, 1}};
  d.configs = cfg;
  d.nconfigs = 1;
  assert_int_equal(tile_jit_autotune_create(&d, &t), TILE_ERR_INVALID);
  has(tile_last_error(), "config 0: define 0 has no name", "the message");
  const tile_jit_autotune_config none[] = {{NULL, 2}};
  d.configs = none;
  assert_int_equal(tile_jit_autotune_create(&d, &t), TILE_ERR_INVALID);
  d.configs = GOOD;
  d.reps = -1;
  assert_int_equal(tile_jit_autotune_create(&d, &t), TILE_ERR_INVALID);
  d.reps = 0;
  d.kernel = "";
  assert_int_equal(tile_jit_autotune_create(&d, &t), TILE_ERR_INVALID);
  d.kernel = NULL;
  assert_int_equal(tile_jit_autotune_create(&d, NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_jit_autotune_create(&d, &t), TILE_OK);
  assert_int_equal(tile_jit_autotune_launch(t, NULL, launch_vadd, NULL, NULL, NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_jit_autotune_launch(t, "k", NULL, NULL, NULL, NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_jit_autotune_launch(NULL, "k", launch_vadd, NULL, NULL, NULL), TILE_ERR_INVALID);
  int best;
  assert_int_equal(tile_jit_autotune_best(t, "k", NULL, NULL), TILE_ERR_INVALID);
  assert_int_equal(tile_jit_autotune_best(NULL, "k", &best, NULL), TILE_ERR_INVALID);
  tile_jit_autotune_destroy(t);
  tile_jit_autotune_destroy(NULL);
}

int main(int argc, char **argv) {
  unsetenv("TILE_INTERPRET"); /* the option alone picks the emulator */
  if (argc == 3 && !strcmp(argv[1], "--child")) return child_main(argv[2]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_arguments),   cmocka_unit_test(test_tune_once),
      cmocka_unit_test(test_disk_reuse),      cmocka_unit_test(test_bad_configs_skipped),
      cmocka_unit_test(test_all_bad),         cmocka_unit_test(test_corrupt_entry),
      cmocka_unit_test(test_events),          cmocka_unit_test(test_clock_nan),
      cmocka_unit_test(test_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

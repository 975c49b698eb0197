/* jfa_plan.c - a program of tests/install/run.sh, built against an installed
 * Tile with pkg-config alone (jfa.pc or jfa-static.pc): opens Jagged Flash
 * Attention's kernels from the folder given (`pkg-config --variable=cubindir
 * jfa`), runs the argument checks and plans a forward pass of a small batch,
 * which loads its kernel, on the emulator (TILE_INTERPRET=1) or a GPU.
 *
 *   jfa_plan CUBIN_DIR      exit status 0 when all went as expected */
#include <stdio.h>

#include <tile/jfa.h>

static int fail(const char *what, tile_status s) {
  fprintf(stderr, "jfa_plan: %s: %s: %s\n", what, tile_status_name(s), tile_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: jfa_plan CUBIN_DIR\n");
    return 2;
  }
  int32_t cu[] = {0, 100, 356, 357};
  jfa_params p = {.batch = 3, .cu_seqlens = cu, .heads = 2, .head_dim = 64};
  jfa_params bad = p;
  bad.head_dim = 96;
  int64_t total = 0;
  jfa_lib *lib = NULL;
  jfa_plan *plan = NULL;
  tile_status s;
  if ((s = tile_init(0)) != TILE_OK) return fail("tile_init", s);
  if ((s = jfa_lib_open(argv[1], &lib)) != TILE_OK) return fail("jfa_lib_open", s);
  if (jfa_check_params(&bad, &total) != TILE_ERR_INVALID) {
    fprintf(stderr, "jfa_plan: head_dim 96 was accepted\n");
    return 1;
  }
  printf("refused as expected: %s\n", tile_last_error());
  if ((s = jfa_check_params(&p, &total)) != TILE_OK) return fail("jfa_check_params", s);
  if (total != 357) {
    fprintf(stderr, "jfa_plan: %lld rows, expected 357\n", (long long)total);
    return 1;
  }
  if ((s = jfa_plan_create(lib, &p, &plan)) != TILE_OK) return fail("jfa_plan_create", s);
  int64_t ntiles = 0;
  int ctas = 0;
  jfa_plan_stats(plan, &ntiles, NULL, NULL, &ctas);
  printf("jfa: a plan of %lld tiles on %d CTAs, its kernel loaded from %s\n", (long long)ntiles, ctas, argv[1]);
  jfa_plan_destroy(plan);
  jfa_lib_close(lib);
  return ntiles > 0 ? 0 : 1;
}

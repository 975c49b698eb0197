/* jit_multi.c - one program holding every example host in its JIT build,
 * for machines without LLVM/MLIR: linked statically with the compiler, it
 * JIT-compiles each example from source and checks it.
 *
 *   examples_jit NAME --jit examples/NAME/NAME.tile [--trials N] ...      */
#include <stdio.h>
#include <string.h>

int vector_add_main(int argc, char **argv);
int softmax_main(int argc, char **argv);
int layernorm_main(int argc, char **argv);
int matmul_main(int argc, char **argv);
int gemm_main(int argc, char **argv);

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    int (*fn)(int, char **);
  } progs[] = {{"vector_add", vector_add_main},
               {"softmax", softmax_main},
               {"layernorm", layernorm_main},
               {"matmul", matmul_main},
               {"gemm", gemm_main}};
  if (argc >= 2)
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
      if (!strcmp(argv[1], progs[i].name)) return progs[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "usage: %s vector_add|softmax|layernorm|matmul|gemm --jit FILE.tile [options]\n", argv[0]);
  return 2;
}

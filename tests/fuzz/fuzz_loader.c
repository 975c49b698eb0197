/* fuzz_loader.c - libFuzzer target: the runtime's cubin and metadata loader
 * (runtime/elf.c, runtime/meta.c, the validation in runtime/module.c) on
 * arbitrary bytes. It must never crash, read out of bounds, leak or accept
 * metadata that breaks its own limits.
 *
 * The first byte picks how the rest is used:
 *   bit 0 = 0  raw: the bytes are the cubin (tile_module_load_data,
 *              tile_cubin_find_meta) and, separately, metadata text
 *              (tile_meta_parse);
 *   bit 0 = 1  built: the bytes up to the first NUL are the __tile_meta
 *              text; the harness wraps them in a well-formed cubin (ELF64,
 *              EM_CUDA, .symtab with __tile_meta and one STT_FUNC entry per
 *              kernel the text names), so the fuzzer spends its time in the
 *              metadata and the entry check rather than in the ELF header;
 *              the bytes after the NUL are patches (2-byte offset, 1-byte
 *              value) applied to that ELF. Bits 1-4: leave __tile_meta
 *              without a terminating NUL; drop the last kernel's symbol;
 *              truncate the file at the first patch's offset; make the
 *              file an ET_REL.
 *
 * tile_init is never called, so a cubin that passes every check stops at
 * the driver (TILE_ERR_NO_DRIVER without a GPU, TILE_ERR_INVALID "call
 * tile_init first" with one) and nothing is loaded. An unpatched built cubin
 * whose text parses must get that far: the loader may not refuse a good one.
 *
 *   make fuzz-host FUZZ_SECONDS=120      (mk/fuzz_host.mk; README.md here)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tile/runtime.h"

#define FAIL(...)                                                                                                     \
  do {                                                                                                                \
    fprintf(stderr, "fuzz_loader: " __VA_ARGS__);                                                                     \
    fprintf(stderr, "\n  (last message: %s)\n", tile_last_error());                                                   \
    abort();                                                                                                          \
  } while (0)

/* ---- the parsed metadata keeps its promises (docs/metadata.md) ---- */

static bool ident(const char *s, size_t cap) {
  size_t n = strnlen(s, cap);
  if (n == 0 || n == cap) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || (i && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

static void check_meta(const tile_meta *m) {
  int n = tile_meta_num_kernels(m);
  if (n < 0 || n > 65536) FAIL("%d kernels", n);
  if (tile_meta_kernel(m, -1) || tile_meta_kernel(m, n)) FAIL("kernel index out of range answered");
  for (int i = 0; i < n; i++) {
    const tile_kernel_info *k = tile_meta_kernel(m, i);
    if (!k || !ident(k->name, sizeof k->name)) FAIL("kernel %d: bad name", i);
    for (int j = 0; j < i; j++)
      if (!strcmp(tile_meta_kernel(m, j)->name, k->name)) FAIL("kernel '%s' twice", k->name);
    if (k->threads < 1 || k->threads > 1024) FAIL("%s: threads %d", k->name, k->threads);
    if (k->smem_bytes < 0 || k->smem_bytes > (16 << 20)) FAIL("%s: smem %d", k->name, k->smem_bytes);
    int c = 1;
    for (int d = 0; d < 3; d++) {
      if (k->cluster[d] < 1 || k->cluster[d] > 16) FAIL("%s: cluster[%d] = %d", k->name, d, k->cluster[d]);
      c *= k->cluster[d];
    }
    if (c > 16) FAIL("%s: cluster of %d blocks", k->name, c);
    if (k->nparams < 0 || k->nparams > 1024 || (k->nparams && !k->params)) FAIL("%s: %d params", k->name, k->nparams);
    for (int p = 0; p < k->nparams; p++) {
      const tile_param_info *q = &k->params[p];
      if (!ident(q->name, sizeof q->name) || strnlen(q->dtype, sizeof q->dtype) == sizeof q->dtype)
        FAIL("%s: param %d: bad name or dtype", k->name, p);
      for (int r = 0; r < p; r++)
        if (!strcmp(k->params[r].name, q->name)) FAIL("%s: param '%s' twice", k->name, q->name);
      if (q->multiple < 1) FAIL("%s.%s: multiple %d", k->name, q->name, q->multiple);
      switch (q->kind) {
      case TILE_PARAM_PTR:
        if (q->size != 8 || q->align < 1 || q->align > 4096 || (q->align & (q->align - 1)))
          FAIL("%s.%s: pointer size %d align %d", k->name, q->name, q->size, q->align);
        break;
      case TILE_PARAM_SCALAR:
        if (q->size < 1 || q->size > 8 || (q->size & (q->size - 1)) || q->align != q->size)
          FAIL("%s.%s: scalar size %d", k->name, q->name, q->size);
        break;
      case TILE_PARAM_TMA:
        if (q->size != 128 || q->box[0] < 0 || q->box[0] > 256 || q->box[1] < 0 || q->box[1] > 256 ||
            (q->swizzle != 0 && q->swizzle != 32 && q->swizzle != 64 && q->swizzle != 128))
          FAIL("%s.%s: tma box %d x %d swizzle %d", k->name, q->name, q->box[0], q->box[1], q->swizzle);
        break;
      default: FAIL("%s.%s: kind %d", k->name, q->name, (int)q->kind);
      }
      if (q->kind != TILE_PARAM_TMA && (q->box[0] || q->box[1] || q->swizzle)) FAIL("%s.%s: a box", k->name, q->name);
      if (q->multiple > 1 && q->kind != TILE_PARAM_SCALAR) FAIL("%s.%s: multiple on a non-scalar", k->name, q->name);
    }
  }
}

static tile_meta *parse_text(const char *text, size_t len) {
  char err[256];
  err[0] = 'x';
  tile_meta *m = tile_meta_parse(text, len, err, sizeof err);
  if (m) check_meta(m);
  else if (!err[0] || !memchr(err, 0, sizeof err)) FAIL("tile_meta_parse failed without a message");
  return m;
}

/* ---- the loader's entry points on one file ---- */

/* the status of tile_module_load_data; a module is never made (no tile_init) */
static tile_status load(const unsigned char *cubin, size_t size) {
  tile_module *m = (tile_module *)&m;
  tile_status st = tile_module_load_data(cubin, size, &m);
  if (m) FAIL("tile_module_load_data returned a module without tile_init (status %d)", (int)st);
  if (st == TILE_OK) FAIL("tile_module_load_data: TILE_OK and no module");
  if (!tile_last_error()[0]) FAIL("status %d without a message", (int)st);
  size_t len = 1;
  const char *text = tile_cubin_find_meta(cubin, size, &len);
  if (text) {
    if (text < (const char *)cubin || len == 0 || len > size || text + len > (const char *)cubin + size)
      FAIL("tile_cubin_find_meta: text outside the cubin");
    if (memchr(text, 0, len)) FAIL("tile_cubin_find_meta: a NUL inside the text");
    tile_meta *mm = parse_text(text, len);
    tile_meta_free(mm);
  } else if (len != 0) {
    FAIL("tile_cubin_find_meta: NULL with length %zu", len);
  }
  return st;
}

/* "Passed every check": stopped at the driver. */
static bool reached_driver(tile_status st) {
  return st == TILE_ERR_NO_DRIVER || st == TILE_ERR_NO_DEVICE ||
         (st == TILE_ERR_INVALID && strstr(tile_last_error(), "tile_init"));
}

/* ---- a cubin around a metadata text ---- */

typedef struct buf {
  unsigned char *p;
  size_t n, cap;
} buf;

static size_t put(buf *b, const void *d, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = (b->n + n) * 2 + 256;
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  if (d) memcpy(b->p + b->n, d, n);
  else memset(b->p + b->n, 0, n);
  size_t at = b->n;
  b->n += n;
  return at;
}

static void wr(unsigned char *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void align8(buf *b) {
  while (b->n % 8) put(b, NULL, 1);
}

enum { SHDR = 64, SYM = 24, NSEC = 6 };

/* ELF64 EM_CUDA: [1] .shstrtab [2] .strtab [3] .symtab [4] .nv.tile_meta
 * (the text) [5] .text (the kernels); symbols __tile_meta and one
 * STT_FUNC per name. */
static void build_cubin(buf *out, const char *text, size_t len, bool nul, const tile_meta *m, bool drop_last,
                        bool rel) {
  static const char shstr[] = "\0.shstrtab\0.strtab\0.symtab\0.nv.tile_meta\0.text";
  enum { N_SHSTR = 1, N_STR = 11, N_SYM = 19, N_META = 27, N_TEXT = 41 };
  int nk = m ? tile_meta_num_kernels(m) : 0;
  if (drop_last && nk > 0) nk--;
  buf strtab = {0};
  put(&strtab, "", 1);
  size_t name_meta = put(&strtab, "__tile_meta", 12);
  size_t *names = malloc(sizeof *names * (size_t)(nk + 1));
  for (int i = 0; i < nk; i++) {
    const char *s = tile_meta_kernel(m, i)->name;
    names[i] = put(&strtab, s, strlen(s) + 1);
  }
  buf symtab = {0};
  put(&symtab, NULL, SYM); /* the null symbol */
  unsigned char sym[SYM];
  memset(sym, 0, sizeof sym);
  wr(sym, name_meta, 4), sym[4] = 0x11, wr(sym + 6, 4, 2), wr(sym + 16, len + (nul ? 1 : 0), 8);
  put(&symtab, sym, SYM);
  for (int i = 0; i < nk; i++) {
    memset(sym, 0, sizeof sym);
    wr(sym, names[i], 4), sym[4] = 0x12, wr(sym + 6, 5, 2), wr(sym + 8, 16 * (uint64_t)i, 8), wr(sym + 16, 16, 8);
    put(&symtab, sym, SYM);
  }
  out->n = 0;
  put(out, NULL, 64); /* the ELF header, below */
  size_t off[NSEC] = {0}, sz[NSEC] = {0};
  off[1] = put(out, shstr, sizeof shstr), sz[1] = sizeof shstr;
  off[2] = put(out, strtab.p, strtab.n), sz[2] = strtab.n;
  align8(out);
  off[3] = put(out, symtab.p, symtab.n), sz[3] = symtab.n;
  off[4] = put(out, text, len), sz[4] = len;
  if (nul) put(out, "", 1), sz[4]++;
  align8(out);
  sz[5] = 16 * (size_t)(nk ? nk : 1);
  off[5] = put(out, NULL, sz[5]);
  align8(out);
  size_t shoff = put(out, NULL, SHDR * NSEC);
  static const unsigned type[NSEC] = {0, 3, 3, 2, 1, 1}, name[NSEC] = {0, N_SHSTR, N_STR, N_SYM, N_META, N_TEXT};
  for (int i = 1; i < NSEC; i++) {
    unsigned char *h = out->p + shoff + SHDR * i;
    wr(h, name[i], 4), wr(h + 4, type[i], 4), wr(h + 24, off[i], 8), wr(h + 32, sz[i], 8);
    if (i == 3) wr(h + 40, 2, 4), wr(h + 48, 8, 8), wr(h + 56, SYM, 8); /* link .strtab, align, entsize */
  }
  unsigned char *e = out->p;
  memcpy(e, "\177ELF", 4), e[4] = 2, e[5] = 1, e[6] = 1;
  wr(e + 16, rel ? 1 : 2, 2), wr(e + 18, 190, 2), wr(e + 20, 1, 4);
  wr(e + 40, shoff, 8), wr(e + 52, 64, 2), wr(e + 54, 56, 2), wr(e + 58, SHDR, 2), wr(e + 60, NSEC, 2),
      wr(e + 62, 1, 2);
  free(names);
  free(strtab.p);
  free(symtab.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  unsigned mode = data[0];
  data++, size--;
  if (!(mode & 1)) {
    /* raw: an exact-size heap copy, so any read past the end is caught */
    unsigned char *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    load(copy, size);
    tile_meta_free(parse_text((const char *)copy, size));
    free(copy);
    return 0;
  }
  const uint8_t *nul = memchr(data, 0, size);
  size_t len = nul ? (size_t)(nul - data) : size;
  const uint8_t *patch = nul ? nul + 1 : data + size;
  size_t npatch = nul ? (size - len - 1) / 3 : 0;
  char *text = malloc(len ? len : 1);
  memcpy(text, data, len);
  tile_meta *m = parse_text(text, len);
  bool no_nul = mode & 2, drop = mode & 4, trunc = mode & 8, rel = mode & 16;
  buf elf = {0};
  build_cubin(&elf, text, len, !no_nul, m, drop, rel);
  size_t n = elf.n;
  for (size_t i = 0; i < npatch; i++) {
    size_t at = ((size_t)patch[3 * i] | (size_t)patch[3 * i + 1] << 8) % elf.n;
    if (i == 0 && trunc) n = at;
    else elf.p[at] = patch[3 * i + 2];
  }
  unsigned char *cubin = malloc(n ? n : 1); /* exact size */
  memcpy(cubin, elf.p, n);
  tile_status st = load(cubin, n);
  /* the loader may not refuse a good cubin: parsed text, every kernel's
   * symbol, nothing patched */
  if (m && tile_meta_num_kernels(m) > 0 && npatch == 0 && !drop && !reached_driver(st))
    FAIL("a well-formed cubin was refused: status %d", (int)st);
  if (drop && m && tile_meta_num_kernels(m) > 0 && npatch == 0 && st != TILE_ERR_BAD_MODULE)
    FAIL("a cubin without the entry of kernel '%s' was accepted (status %d)",
         tile_meta_kernel(m, tile_meta_num_kernels(m) - 1)->name, (int)st);
  free(cubin);
  free(elf.p);
  tile_meta_free(m);
  free(text);
  return 0;
}

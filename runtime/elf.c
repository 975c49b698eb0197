/* elf.c - a bounds-checked reader for cubins (ELF64, little-endian,
 * EM_CUDA), just enough to find symbols and their bytes.
 *
 * Nothing here trusts the file: every offset and size read from the ELF
 * header, the section table and the symbol table is checked against the
 * buffer before it is used, so truncated, corrupt or random input gives
 * TILE_ERR_BAD_MODULE with a message and never reads out of bounds.  The
 * data may be unaligned; fields are assembled byte by byte.
 */
#include <string.h>

#include "rt.h"

enum {
  RT_EHDR_SIZE = 64,
  RT_SHDR_SIZE = 64,
  RT_PHDR_SIZE = 56,
  RT_SYM_SIZE = 24,
  RT_EM_CUDA = 190,
  RT_ET_EXEC = 2,
  RT_ET_DYN = 3,
  RT_SHT_SYMTAB = 2,
  RT_SHT_STRTAB = 3,
  RT_SHT_NOBITS = 8,
  RT_SHN_LORESERVE = 0xff00,
};

typedef struct rt_shdr {
  uint32_t type;
  uint64_t addr, offset, size;
  uint32_t link;
  uint64_t entsize;
} rt_shdr;

static uint64_t rt_rd(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* Is [off, off + len) inside a buffer of `size` bytes? (no overflow) */
static bool rt_in_bounds(uint64_t size, uint64_t off, uint64_t len) {
  return off <= size && len <= size - off;
}

static tile_status rt_bad(const char *what) {
  return rt_fail(TILE_ERR_BAD_MODULE, "corrupt cubin: %s", what);
}

/* Section i's header; i < elf->shnum, the table is in bounds. */
static rt_shdr rt_section(const rt_elf *elf, unsigned i) {
  const unsigned char *p = elf->data + elf->shoff + (uint64_t)i * elf->shentsize;
  rt_shdr sh;
  sh.type = (uint32_t)rt_rd(p + 4, 4);
  sh.addr = rt_rd(p + 16, 8);
  sh.offset = rt_rd(p + 24, 8);
  sh.size = rt_rd(p + 32, 8);
  sh.link = (uint32_t)rt_rd(p + 40, 4);
  sh.entsize = rt_rd(p + 56, 8);
  return sh;
}

static tile_status rt_elf_header(rt_elf *elf) {
  const unsigned char *h = elf->data;
  if (elf->size < RT_EHDR_SIZE)
    return rt_fail(TILE_ERR_BAD_MODULE, "not a cubin: %zu bytes is too short for an ELF header",
                   elf->size);
  if (memcmp(h, "\177ELF", 4) != 0)
    return rt_fail(TILE_ERR_BAD_MODULE,
                   "not a cubin: no ELF magic number (a cubin is an ELF file; PTX and fatbins "
                   "are not accepted)");
  if (h[4] != 2 || h[5] != 1)
    return rt_fail(TILE_ERR_BAD_MODULE, "not a cubin: not a 64-bit little-endian ELF file");
  unsigned machine = (unsigned)rt_rd(h + 18, 2);
  if (machine != RT_EM_CUDA)
    return rt_fail(TILE_ERR_BAD_MODULE,
                   "not a cubin: ELF file for machine %u, not for a CUDA GPU (%d)", machine,
                   RT_EM_CUDA);
  elf->type = (unsigned)rt_rd(h + 16, 2);
  uint64_t phoff = rt_rd(h + 32, 8), phentsize = rt_rd(h + 54, 2), phnum = rt_rd(h + 56, 2);
  if (phnum && (phentsize < RT_PHDR_SIZE || !rt_in_bounds(elf->size, phoff, phnum * phentsize)))
    return rt_bad("the program header table is outside the file");
  elf->shoff = rt_rd(h + 40, 8);
  elf->shentsize = rt_rd(h + 58, 2);
  elf->shnum = (unsigned)rt_rd(h + 60, 2);
  if (elf->shnum == 0) return rt_bad("no section header table");
  if (elf->shentsize < RT_SHDR_SIZE) return rt_bad("section headers are too small");
  if (!rt_in_bounds(elf->size, elf->shoff, (uint64_t)elf->shnum * elf->shentsize))
    return rt_bad("the section header table is outside the file");
  return TILE_OK;
}

/* Every section with bytes in the file must lie inside it. */
static tile_status rt_elf_sections(const rt_elf *elf) {
  for (unsigned i = 1; i < elf->shnum; i++) {
    rt_shdr sh = rt_section(elf, i);
    if (sh.type != RT_SHT_NOBITS && sh.type != 0 &&
        !rt_in_bounds(elf->size, sh.offset, sh.size))
      return rt_fail(TILE_ERR_BAD_MODULE, "corrupt cubin: section %u is outside the file", i);
  }
  return TILE_OK;
}

static tile_status rt_elf_symtab(rt_elf *elf) {
  for (unsigned i = 1; i < elf->shnum; i++) {
    rt_shdr sh = rt_section(elf, i);
    if (sh.type != RT_SHT_SYMTAB) continue;
    if (sh.entsize < RT_SYM_SIZE) return rt_bad("symbol table entries are too small");
    if (sh.link == 0 || sh.link >= elf->shnum ||
        rt_section(elf, sh.link).type != RT_SHT_STRTAB)
      return rt_bad("the symbol table has no string table");
    elf->symtab = i;
    elf->nsyms = sh.size / sh.entsize;
    return TILE_OK;
  }
  return rt_fail(TILE_ERR_BAD_MODULE, "not a Tile cubin: it has no symbol table");
}

tile_status rt_elf_open(rt_elf *elf, const void *data, size_t size) {
  memset(elf, 0, sizeof *elf);
  if (!data) return rt_fail(TILE_ERR_INVALID, "cubin is NULL");
  elf->data = data;
  elf->size = size;
  tile_status s = rt_elf_header(elf);
  if (s == TILE_OK) s = rt_elf_sections(elf);
  if (s == TILE_OK) s = rt_elf_symtab(elf);
  return s;
}

/* Does the string at strtab[off] equal name (NUL-terminated inside strtab)? */
static bool rt_strtab_eq(const rt_elf *elf, const rt_shdr *strtab, uint64_t off,
                         const char *name) {
  size_t n = strlen(name);
  if (off >= strtab->size || n >= strtab->size - off) return false;
  const unsigned char *s = elf->data + strtab->offset + off;
  return memcmp(s, name, n) == 0 && s[n] == 0;
}

bool rt_elf_find_symbol(const rt_elf *elf, const char *name, rt_elf_sym *sym) {
  rt_shdr symtab = rt_section(elf, elf->symtab);
  rt_shdr strtab = rt_section(elf, symtab.link);
  for (uint64_t i = 1; i < elf->nsyms; i++) {
    const unsigned char *p = elf->data + symtab.offset + i * symtab.entsize;
    if (!rt_strtab_eq(elf, &strtab, rt_rd(p, 4), name)) continue;
    sym->type = p[4] & 0xf;
    sym->shndx = (unsigned)rt_rd(p + 6, 2);
    sym->value = rt_rd(p + 8, 8);
    sym->size = rt_rd(p + 16, 8);
    return true;
  }
  return false;
}

tile_status rt_elf_symbol_bytes(const rt_elf *elf, const char *name, const rt_elf_sym *sym,
                                const unsigned char **bytes) {
  if (sym->shndx == 0 || sym->shndx >= RT_SHN_LORESERVE || sym->shndx >= elf->shnum)
    return rt_fail(TILE_ERR_BAD_MODULE, "corrupt cubin: symbol %s is not in a section", name);
  rt_shdr sh = rt_section(elf, sym->shndx);
  if (sh.type == RT_SHT_NOBITS || sh.type == 0)
    return rt_fail(TILE_ERR_BAD_MODULE, "corrupt cubin: symbol %s has no bytes in the file",
                   name);
  uint64_t off = sym->value;
  /* In executables st_value is an address; cubins keep sh_addr 0. */
  if ((elf->type == RT_ET_EXEC || elf->type == RT_ET_DYN) && sh.addr) {
    if (off < sh.addr)
      return rt_fail(TILE_ERR_BAD_MODULE, "corrupt cubin: symbol %s is outside its section",
                     name);
    off -= sh.addr;
  }
  if (!rt_in_bounds(sh.size, off, sym->size))
    return rt_fail(TILE_ERR_BAD_MODULE, "corrupt cubin: symbol %s is outside its section", name);
  *bytes = elf->data + sh.offset + off;
  return TILE_OK;
}

tile_status rt_cubin_meta(const rt_elf *elf, const char **text, size_t *len) {
  rt_elf_sym sym;
  if (!rt_elf_find_symbol(elf, "__tile_meta", &sym))
    return rt_fail(TILE_ERR_BAD_MODULE,
                   "not a Tile cubin: no __tile_meta symbol (was it built by tilec?)");
  const unsigned char *bytes;
  tile_status s = rt_elf_symbol_bytes(elf, "__tile_meta", &sym, &bytes);
  if (s != TILE_OK) return s;
  const unsigned char *nul = memchr(bytes, 0, sym.size);
  size_t n = nul ? (size_t)(nul - bytes) : (size_t)sym.size;
  if (n == 0) return rt_fail(TILE_ERR_BAD_MODULE, "corrupt cubin: __tile_meta is empty");
  *text = (const char *)bytes;
  *len = n;
  return TILE_OK;
}

const char *tile_cubin_find_meta(const void *cubin, size_t size, size_t *len) {
  rt_elf elf;
  const char *text = NULL;
  size_t n = 0;
  if (rt_elf_open(&elf, cubin, size) != TILE_OK || rt_cubin_meta(&elf, &text, &n) != TILE_OK)
    text = NULL, n = 0;
  if (len) *len = n;
  return text;
}

/* The register count ptxas gave kernel `name`: EIATTR_REGCOUNT (0x2f) in
 * the cubin's .nv.info sections (type SHT_CUDA_INFO, 0x70000000), a list of
 * attributes [format u8, attribute u8, then by format: nothing, a u8, a u16,
 * or a u16 size and that many bytes]; REGCOUNT's value is [symbol index
 * u32, registers u32]. 0 when the cubin does not say. */
unsigned rt_elf_regcount(const rt_elf *elf, const char *name) {
  rt_shdr symtab = rt_section(elf, elf->symtab);
  rt_shdr strtab = rt_section(elf, symtab.link);
  uint64_t idx = 0;
  for (uint64_t i = 1; i < elf->nsyms && !idx; i++)
    if (rt_strtab_eq(elf, &strtab, rt_rd(elf->data + symtab.offset + i * symtab.entsize, 4), name)) idx = i;
  if (!idx) return 0;
  for (unsigned i = 1; i < elf->shnum; i++) {
    rt_shdr sh = rt_section(elf, i);
    if (sh.type != 0x70000000u) continue;
    const unsigned char *p = elf->data + sh.offset, *end = p + sh.size;
    while (end - p >= 2) {
      unsigned fmt = p[0], attr = p[1];
      uint64_t len = fmt == 1 ? 0 : fmt == 2 ? 1 : fmt == 3 ? 2 : 0;
      if (fmt == 4) {
        if (end - p < 4) break;
        len = rt_rd(p + 2, 2) + 2;
      } else if (fmt < 1 || fmt > 3) {
        break;
      }
      if ((uint64_t)(end - p - 2) < len) break;
      if (fmt == 4 && attr == 0x2f && len == 10 && rt_rd(p + 4, 4) == idx) return (unsigned)rt_rd(p + 8, 4);
      p += 2 + len;
    }
  }
  return 0;
}

/* module.c - loading cubins written by tilec, finding kernels, launching.
 *
 * tile_module_load_data validates everything it can before it touches the
 * driver: the ELF structure (elf.c), the __tile_meta text (meta.c) and that
 * every kernel the metadata names is an entry in the cubin.  So a corrupt
 * cubin gives TILE_ERR_BAD_MODULE even on a machine without a GPU, and only
 * a well-formed one reaches cuModuleLoadData.
 *
 * tile_launch checks the arguments against the metadata (count, pointer
 * alignment, grid limits, cluster divisibility) and launches with the
 * metadata's threads, shared memory and cluster shape.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

enum {
  RT_DEFAULT_SMEM_LIMIT = 48 * 1024, /* more needs an opt-in per kernel */
  RT_PORTABLE_CLUSTER = 8,           /* larger clusters need an opt-in */
};

#define RT_GRID_X_MAX 0x7fffffffu
#define RT_GRID_YZ_MAX 65535u

struct tile_module {
  CUmodule mod;
  CUcontext ctx;
  tile_meta *meta;
  tile_kernel *kernels; /* meta->nkernels of them */
};

/* ---- validation (no driver) ---- */

static tile_status rt_check_entries(const rt_elf *elf, const tile_meta *meta) {
  for (int i = 0; i < meta->nkernels; i++) {
    const char *name = meta->kernels[i].name;
    rt_elf_sym sym;
    if (!rt_elf_find_symbol(elf, name, &sym) || sym.type != RT_STT_FUNC || sym.shndx == 0)
      return rt_fail(TILE_ERR_BAD_MODULE,
                     "corrupt cubin: its metadata names kernel '%s', but the cubin has no "
                     "such entry",
                     name);
  }
  return TILE_OK;
}

/* Validate a cubin and parse its metadata: TILE_OK and *meta, or
 * TILE_ERR_BAD_MODULE with the message set. */
static tile_status rt_module_parse(const void *cubin, size_t size, tile_meta **meta) {
  *meta = NULL;
  rt_elf elf;
  const char *text;
  size_t len;
  tile_status s = rt_elf_open(&elf, cubin, size);
  if (s == TILE_OK) s = rt_cubin_meta(&elf, &text, &len);
  if (s != TILE_OK) return s;
  char err[512];
  tile_meta *m = tile_meta_parse(text, len, err, sizeof err);
  if (!m) return rt_fail(TILE_ERR_BAD_MODULE, "bad __tile_meta in cubin: %s", err);
  if (m->nkernels == 0) {
    tile_meta_free(m);
    return rt_fail(TILE_ERR_BAD_MODULE, "bad __tile_meta in cubin: it declares no kernel");
  }
  s = rt_check_entries(&elf, m);
  if (s != TILE_OK) {
    tile_meta_free(m);
    return s;
  }
  *meta = m;
  return TILE_OK;
}

/* ---- loading ---- */

/* A failed cuModuleLoadData: add the likely reason when the archs differ. */
static tile_status rt_load_error(CUresult r, const rt_device *d, const tile_meta *meta) {
  rt_cuda_fail(r, "cuModuleLoadData");
  char arch[32];
  rt_arch_name(d->cc_major, d->cc_minor, arch, sizeof arch);
  if (meta->arch[0] && strcmp(meta->arch, arch) != 0)
    return rt_fail(TILE_ERR_CUDA, "%s: the cubin was built for %s, this device is %s",
                   tile_last_error(), meta->arch, arch);
  return TILE_ERR_CUDA;
}

static tile_status rt_func_attr(tile_kernel *k, int attr, int value, const char *what) {
  CUresult r = rt_cu.cuFuncSetAttribute(k->fn, attr, value);
  if (r != CUDA_SUCCESS)
    return rt_cuda_fail(r, "cuFuncSetAttribute(%s = %d) for kernel '%s'", what, value,
                        k->info->name);
  return TILE_OK;
}

static tile_status rt_kernel_setup(tile_module *m, int i) {
  tile_kernel *k = &m->kernels[i];
  k->module = m;
  k->info = &m->meta->kernels[i];
  CUresult r = rt_cu.cuModuleGetFunction(&k->fn, m->mod, k->info->name);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuModuleGetFunction(\"%s\")", k->info->name);
  tile_status s = TILE_OK;
  if (k->info->smem_bytes > RT_DEFAULT_SMEM_LIMIT)
    s = rt_func_attr(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k->info->smem_bytes,
                     "MAX_DYNAMIC_SHARED_SIZE_BYTES");
  const int *c = k->info->cluster;
  if (s == TILE_OK && c[0] * c[1] * c[2] > RT_PORTABLE_CLUSTER)
    s = rt_func_attr(k, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1,
                     "NON_PORTABLE_CLUSTER_SIZE_ALLOWED");
  return s;
}

static void rt_module_free(tile_module *m) {
  if (!m) return;
  free(m->kernels);
  tile_meta_free(m->meta);
  free(m);
}

/* Load `image` (a cubin, or NUL-terminated PTX) with its parsed metadata
 * (taken over: freed on failure). */
static tile_status rt_module_load(const void *image, tile_meta *meta, tile_module **out) {
  rt_device *d;
  tile_status s = rt_enter(&d);
  tile_module *m = NULL;
  if (s == TILE_OK) {
    m = calloc(1, sizeof *m);
    if (m) m->kernels = calloc((size_t)meta->nkernels, sizeof *m->kernels);
    if (!m || !m->kernels) s = rt_fail(TILE_ERR_NOMEM, "tile_module_load_data: out of memory");
  }
  if (s != TILE_OK) {
    if (m) free(m);
    tile_meta_free(meta);
    return s;
  }
  m->meta = meta;
  m->ctx = d->ctx;
  CUresult r = rt_cu.cuModuleLoadData(&m->mod, image);
  if (r != CUDA_SUCCESS) {
    s = rt_load_error(r, d, meta);
    rt_module_free(m);
    return s;
  }
  for (int i = 0; i < meta->nkernels && s == TILE_OK; i++) s = rt_kernel_setup(m, i);
  if (s != TILE_OK) {
    rt_cu.cuModuleUnload(m->mod);
    rt_module_free(m);
    return s;
  }
  *out = m;
  return TILE_OK;
}

tile_status tile_module_load_data(const void *cubin, size_t size, tile_module **out) {
  if (!out) return rt_fail(TILE_ERR_INVALID, "tile_module_load_data: out is NULL");
  *out = NULL;
  tile_meta *meta;
  tile_status s = rt_module_parse(cubin, size, &meta);
  if (s != TILE_OK) return s;
  return rt_module_load(cubin, meta, out);
}

tile_status tile_module_load_ptx(const char *ptx, size_t len, const char *meta_text, size_t meta_len,
                                 tile_module **out) {
  if (!out) return rt_fail(TILE_ERR_INVALID, "tile_module_load_ptx: out is NULL");
  *out = NULL;
  if (!ptx || !meta_text || !len)
    return rt_fail(TILE_ERR_INVALID, "tile_module_load_ptx: no PTX or no metadata");
  if (memchr(ptx, 0, len)) return rt_fail(TILE_ERR_BAD_MODULE, "tile_module_load_ptx: the PTX holds a NUL byte");
  char err[512];
  tile_meta *meta = tile_meta_parse(meta_text, meta_len, err, sizeof err);
  if (!meta) return rt_fail(TILE_ERR_BAD_MODULE, "bad Tile metadata beside the PTX: %s", err);
  if (meta->nkernels == 0) {
    tile_meta_free(meta);
    return rt_fail(TILE_ERR_BAD_MODULE, "bad Tile metadata beside the PTX: it declares no kernel");
  }
  char *text = malloc(len + 1); /* the driver takes PTX as a NUL-terminated string */
  if (!text) {
    tile_meta_free(meta);
    return rt_fail(TILE_ERR_NOMEM, "tile_module_load_ptx: out of memory");
  }
  memcpy(text, ptx, len);
  text[len] = 0;
  tile_status s = rt_module_load(text, meta, out);
  free(text);
  return s;
}

/* Read a whole file: TILE_OK and a malloc'ed *data. */
static tile_status rt_read_file(const char *path, void **data, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return rt_fail(errno == ENOENT ? TILE_ERR_NOT_FOUND : TILE_ERR_IO, "cannot open '%s': %s",
                   path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    char *nb = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
    if (!nb) free(buf);
    buf = nb;
    cap *= 2;
  }
  int bad = ferror(f);
  int err = errno;
  fclose(f);
  if (!buf) return rt_fail(TILE_ERR_NOMEM, "cannot read '%s': out of memory", path);
  if (bad) {
    free(buf);
    return rt_fail(TILE_ERR_IO, "cannot read '%s': %s", path, strerror(err));
  }
  *data = buf;
  *size = n;
  return TILE_OK;
}

tile_status tile_module_load_file(const char *path, tile_module **out) {
  if (!out) return rt_fail(TILE_ERR_INVALID, "tile_module_load_file: out is NULL");
  *out = NULL;
  if (!path) return rt_fail(TILE_ERR_INVALID, "tile_module_load_file: path is NULL");
  void *data = NULL;
  size_t size = 0;
  tile_status s = rt_read_file(path, &data, &size);
  if (s != TILE_OK) return s;
  s = tile_module_load_data(data, size, out);
  free(data);
  if (s != TILE_OK && s != TILE_ERR_NO_DRIVER && s != TILE_ERR_NO_DEVICE)
    rt_fail(s, "%s: %s", path, tile_last_error());
  return s;
}

tile_status tile_module_unload(tile_module *m) {
  if (!m) return TILE_OK;
  tile_status s = rt_make_current(m->ctx);
  if (s == TILE_OK) {
    CUresult r = rt_cu.cuModuleUnload(m->mod);
    if (r != CUDA_SUCCESS) s = rt_cuda_fail(r, "cuModuleUnload");
  }
  rt_module_free(m);
  return s;
}

/* ---- kernels ---- */

int tile_module_num_kernels(const tile_module *m) { return m ? m->meta->nkernels : 0; }

const tile_kernel_info *tile_module_kernel_info(const tile_module *m, int i) {
  if (!m || i < 0 || i >= m->meta->nkernels) return NULL;
  return &m->meta->kernels[i];
}

static tile_status rt_kernel_not_found(const tile_module *m, const char *name) {
  char list[1024] = "";
  size_t n = 0;
  for (int i = 0; i < m->meta->nkernels && n < sizeof list; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                          m->meta->kernels[i].name);
  return rt_fail(TILE_ERR_NOT_FOUND, "module has no kernel '%s' (it has: %s)", name, list);
}

tile_status tile_module_get_kernel(tile_module *m, const char *name, tile_kernel **out) {
  if (!out) return rt_fail(TILE_ERR_INVALID, "tile_module_get_kernel: out is NULL");
  *out = NULL;
  if (!m || !name) return rt_fail(TILE_ERR_INVALID, "tile_module_get_kernel: NULL argument");
  for (int i = 0; i < m->meta->nkernels; i++)
    if (strcmp(m->meta->kernels[i].name, name) == 0) {
      *out = &m->kernels[i];
      return TILE_OK;
    }
  return rt_kernel_not_found(m, name);
}

const tile_kernel_info *tile_kernel_get_info(const tile_kernel *k) { return k ? k->info : NULL; }

/* ---- launch ---- */

static tile_status rt_check_args(const tile_kernel_info *ki, void **args, int nargs) {
  if (nargs != ki->nparams)
    return rt_fail(TILE_ERR_INVALID, "kernel '%s' takes %d argument%s, got %d", ki->name,
                   ki->nparams, ki->nparams == 1 ? "" : "s", nargs);
  if (nargs > 0 && !args)
    return rt_fail(TILE_ERR_INVALID, "kernel '%s' takes %d arguments, but args is NULL",
                   ki->name, nargs);
  for (int i = 0; i < nargs; i++) {
    const tile_param_info *p = &ki->params[i];
    if (!args[i])
      return rt_fail(TILE_ERR_INVALID,
                     "argument %d ('%s') of kernel '%s' is NULL: args[%d] must point at the value",
                     i, p->name, ki->name, i);
    if (p->kind == TILE_PARAM_SCALAR && p->multiple > 1) {
      long long v = rt_int_arg(p, args[i]);
      if (v % p->multiple)
        return rt_fail(TILE_ERR_INVALID, "argument %d ('%s') of kernel '%s' is %lld, not a multiple of %d as the "
                                         "kernel assumes (multiple_of)",
                       i, p->name, ki->name, (long long)v, p->multiple);
    }
    if (p->kind != TILE_PARAM_PTR) continue;
    tile_devptr v;
    memcpy(&v, args[i], sizeof v);
    if (v % (tile_devptr)p->align)
      return rt_fail(TILE_ERR_INVALID,
                     "argument %d ('%s') of kernel '%s' is 0x%llx, not %d-byte aligned as the "
                     "kernel assumes",
                     i, p->name, ki->name, (unsigned long long)v, p->align);
  }
  return TILE_OK;
}

static tile_status rt_check_grid(const tile_kernel_info *ki, unsigned gx, unsigned gy,
                                 unsigned gz) {
  if (!gx || !gy || !gz)
    return rt_fail(TILE_ERR_INVALID, "grid (%u, %u, %u) for kernel '%s' has a zero dimension",
                   gx, gy, gz, ki->name);
  if (gx > RT_GRID_X_MAX || gy > RT_GRID_YZ_MAX || gz > RT_GRID_YZ_MAX)
    return rt_fail(TILE_ERR_INVALID,
                   "grid (%u, %u, %u) for kernel '%s' is too large (x < 2^31, y and z <= 65535)",
                   gx, gy, gz, ki->name);
  const int *c = ki->cluster;
  if (gx % (unsigned)c[0] || gy % (unsigned)c[1] || gz % (unsigned)c[2])
    return rt_fail(TILE_ERR_INVALID,
                   "grid (%u, %u, %u) for kernel '%s' is not a multiple of its cluster shape "
                   "(%d, %d, %d)",
                   gx, gy, gz, ki->name, c[0], c[1], c[2]);
  return TILE_OK;
}

static bool rt_has_cluster(const tile_kernel_info *ki) {
  return ki->cluster[0] != 1 || ki->cluster[1] != 1 || ki->cluster[2] != 1;
}

/* The launch configuration of one cluster of k (its threads, shared memory
 * and cluster shape): a launch's, and the occupancy query's. */
static void rt_cluster_config(const tile_kernel *k, CUlaunchConfig *cfg, CUlaunchAttribute *attr) {
  memset(attr, 0, sizeof *attr);
  attr->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr->value.clusterDim.x = (unsigned)k->info->cluster[0];
  attr->value.clusterDim.y = (unsigned)k->info->cluster[1];
  attr->value.clusterDim.z = (unsigned)k->info->cluster[2];
  memset(cfg, 0, sizeof *cfg);
  cfg->gridDimX = attr->value.clusterDim.x, cfg->gridDimY = attr->value.clusterDim.y;
  cfg->gridDimZ = attr->value.clusterDim.z;
  cfg->blockDimX = (unsigned)k->info->threads, cfg->blockDimY = 1, cfg->blockDimZ = 1;
  cfg->sharedMemBytes = (unsigned)k->info->smem_bytes;
  cfg->attrs = attr;
  cfg->numAttrs = 1;
}

/* Whether a launch of ki overlaps the stream's previous grid: a kernel
 * built with pdl(true) waits for that grid's writes at entry (its metadata's
 * `pdl` line), unless TILE_PDL=0 (an A/B switch: the same cubin launched the
 * plain way, where its wait returns at once). */
static bool rt_want_pdl(const tile_kernel_info *ki) {
  if (!ki->pdl) return false;
  const char *e = getenv("TILE_PDL");
  return !(e && !strcmp(e, "0"));
}

/* A launch through cuLaunchKernelEx: the cluster shape and/or programmatic
 * stream serialization as attributes. */
static CUresult rt_launch_ex(const tile_kernel *k, unsigned gx, unsigned gy, unsigned gz, void **args,
                             CUstream stream, bool cluster, bool pdl) {
  CUlaunchAttribute attr[2];
  CUlaunchConfig cfg;
  rt_cluster_config(k, &cfg, &attr[0]);
  cfg.numAttrs = cluster ? 1 : 0;
  if (pdl) {
    CUlaunchAttribute *a = &attr[cfg.numAttrs++];
    memset(a, 0, sizeof *a);
    a->id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a->value.programmaticStreamSerializationAllowed = 1;
  }
  cfg.gridDimX = gx, cfg.gridDimY = gy, cfg.gridDimZ = gz;
  cfg.hStream = stream;
  return rt_cu.cuLaunchKernelEx(&cfg, k->fn, args, NULL);
}

tile_status tile_kernel_max_clusters(tile_kernel *k, int *n) {
  if (!k || !n) return rt_fail(TILE_ERR_INVALID, "tile_kernel_max_clusters: kernel or result is NULL");
  *n = 0;
  if (!rt_has_cluster(k->info))
    return rt_fail(TILE_ERR_INVALID, "tile_kernel_max_clusters: kernel '%s' runs without clusters", k->info->name);
  if (!rt_cu.cuOccupancyMaxActiveClusters)
    return rt_fail(TILE_ERR_CUDA, "tile_kernel_max_clusters: the driver has no cuOccupancyMaxActiveClusters "
                                  "(CUDA 12 or newer)");
  tile_status s = rt_make_current(k->module->ctx);
  if (s != TILE_OK) return s;
  CUlaunchConfig cfg;
  CUlaunchAttribute attr;
  rt_cluster_config(k, &cfg, &attr);
  CUresult r = rt_cu.cuOccupancyMaxActiveClusters(n, k->fn, &cfg);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuOccupancyMaxActiveClusters (kernel '%s')", k->info->name);
  return TILE_OK;
}

tile_status tile_launch(tile_kernel *k, unsigned gx, unsigned gy, unsigned gz, void **args,
                        int nargs, tile_stream stream) {
  if (!k) return rt_fail(TILE_ERR_INVALID, "tile_launch: kernel is NULL");
  const tile_kernel_info *ki = k->info;
  tile_status s = rt_check_args(ki, args, nargs);
  if (s == TILE_OK) s = rt_check_grid(ki, gx, gy, gz);
  if (s == TILE_OK) s = rt_make_current(k->module->ctx);
  if (s != TILE_OK) return s;
  /* derived parameters (TMA descriptors of a pipelined dot): built from
   * the arguments, passed after them */
  enum { RT_MAX_DERIVED = 8, RT_MAX_ARGS = 256 };
  tile_tma_desc derived[RT_MAX_DERIVED];
  void *all[RT_MAX_ARGS + RT_MAX_DERIVED];
  if (ki->nderived) {
    if (ki->nderived > RT_MAX_DERIVED || nargs > RT_MAX_ARGS)
      return rt_fail(TILE_ERR_INVALID, "kernel '%s' has %d arguments and %d derived parameters (at most %d and %d)",
                     ki->name, nargs, ki->nderived, RT_MAX_ARGS, RT_MAX_DERIVED);
    s = rt_build_derived(ki, args, derived);
    if (s != TILE_OK) return s;
    for (int i = 0; i < nargs; i++) all[i] = args[i];
    for (int i = 0; i < ki->nderived; i++) all[nargs + i] = &derived[i];
    args = all;
  }
  bool cluster = rt_has_cluster(ki), pdl = rt_want_pdl(ki);
  if (cluster && !rt_cu.cuLaunchKernelEx)
    return rt_fail(TILE_ERR_CUDA,
                   "kernel '%s' uses clusters, which need cuLaunchKernelEx (a CUDA 12 driver "
                   "or newer)",
                   ki->name);
  pdl = pdl && rt_cu.cuLaunchKernelEx; /* (without it, the plain launch: the wait returns at once) */
  CUresult r = cluster || pdl ? rt_launch_ex(k, gx, gy, gz, args, (CUstream)stream, cluster, pdl)
                              : rt_cu.cuLaunchKernel(k->fn, gx, gy, gz, (unsigned)ki->threads, 1, 1,
                                                     (unsigned)ki->smem_bytes, (CUstream)stream, args,
                                                     NULL);
  if (r != CUDA_SUCCESS)
    return rt_cuda_fail(r, "%s (kernel '%s', grid (%u, %u, %u), %d threads, %d bytes smem%s)",
                        cluster || pdl ? "cuLaunchKernelEx" : "cuLaunchKernel", ki->name, gx, gy, gz,
                        ki->threads, ki->smem_bytes, pdl ? ", programmatic dependent launch" : "");
  return TILE_OK;
}

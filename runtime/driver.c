/* driver.c - opening libcuda, devices and contexts, tile_init.
 *
 * libcuda is never linked: the first call that needs it dlopens
 * "libcuda.so.1" (else "libcuda.so"), looks its entry points up into rt_cu
 * and runs cuInit, once per process (pthread_once).  If that fails, it fails
 * for good, and every later call returns the same status and message.
 *
 * Each device a program initialises gets its primary context retained (for
 * the life of the process).  A thread works on the device it last passed to
 * tile_init; a thread that never called tile_init works on the first device
 * any thread initialised.  Every call makes that context current in the
 * calling thread (cuCtxSetCurrent) when it is not already.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

#define RT_MAX_DEVICES 64

rt_cuda_api rt_cu;

static pthread_once_t rt_load_once = PTHREAD_ONCE_INIT;
static tile_status rt_load_status;
static _Atomic int rt_backend_req;   /* tile_init_ex's request before the load (a tile_backend) */
static _Atomic int rt_backend_done;  /* after the load: TILE_BACKEND_GPU or TILE_BACKEND_EMULATOR */
static char rt_load_msg[1024];
static int rt_ndevices;

static pthread_mutex_t rt_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_device rt_devs[RT_MAX_DEVICES];
static _Atomic(rt_device *) rt_dev_ready[RT_MAX_DEVICES]; /* set once initialised */
static _Atomic(rt_device *) rt_default_dev;               /* first initialised */
static _Thread_local rt_device *rt_thread_dev;

/* ---- loading ---- */

typedef struct rt_sym {
  const char *name;     /* preferred (versioned) name */
  const char *fallback; /* older name, or NULL */
  size_t offset;        /* where in rt_cu */
  bool required;
} rt_sym;

#define RT_SYM(field, name, fallback, req) \
  { name, fallback, offsetof(rt_cuda_api, field), req }

static const rt_sym rt_syms[] = {
    RT_SYM(cuInit, "cuInit", NULL, true),
    RT_SYM(cuDriverGetVersion, "cuDriverGetVersion", NULL, true),
    RT_SYM(cuGetErrorName, "cuGetErrorName", NULL, true),
    RT_SYM(cuGetErrorString, "cuGetErrorString", NULL, true),
    RT_SYM(cuDeviceGetCount, "cuDeviceGetCount", NULL, true),
    RT_SYM(cuDeviceGet, "cuDeviceGet", NULL, true),
    RT_SYM(cuDeviceGetName, "cuDeviceGetName", NULL, true),
    RT_SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL, true),
    RT_SYM(cuDeviceTotalMem, "cuDeviceTotalMem_v2", NULL, true),
    RT_SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL, true),
    RT_SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
           "cuDevicePrimaryCtxRelease", true),
    RT_SYM(cuCtxSetCurrent, "cuCtxSetCurrent", NULL, true),
    RT_SYM(cuCtxGetCurrent, "cuCtxGetCurrent", NULL, true),
    RT_SYM(cuCtxPushCurrent, "cuCtxPushCurrent_v2", NULL, true),
    RT_SYM(cuCtxPopCurrent, "cuCtxPopCurrent_v2", NULL, true),
    RT_SYM(cuCtxSynchronize, "cuCtxSynchronize", NULL, true),
    RT_SYM(cuMemAlloc, "cuMemAlloc_v2", NULL, true),
    RT_SYM(cuMemFree, "cuMemFree_v2", NULL, true),
    RT_SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL, true),
    RT_SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL, true),
    RT_SYM(cuMemcpyDtoD, "cuMemcpyDtoD_v2", NULL, true),
    RT_SYM(cuMemsetD8, "cuMemsetD8_v2", NULL, true),
    RT_SYM(cuMemsetD32, "cuMemsetD32_v2", NULL, true),
    RT_SYM(cuMemsetD32Async, "cuMemsetD32Async", NULL, true),
    RT_SYM(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", NULL, true),
    RT_SYM(cuMemAllocHost, "cuMemAllocHost_v2", NULL, true),
    RT_SYM(cuMemFreeHost, "cuMemFreeHost", NULL, true),
    RT_SYM(cuStreamCreate, "cuStreamCreate", NULL, true),
    RT_SYM(cuStreamDestroy, "cuStreamDestroy_v2", NULL, true),
    RT_SYM(cuStreamSynchronize, "cuStreamSynchronize", NULL, true),
    RT_SYM(cuEventCreate, "cuEventCreate", NULL, true),
    RT_SYM(cuEventDestroy, "cuEventDestroy_v2", NULL, true),
    RT_SYM(cuEventRecord, "cuEventRecord", NULL, true),
    RT_SYM(cuEventSynchronize, "cuEventSynchronize", NULL, true),
    RT_SYM(cuStreamWaitEvent, "cuStreamWaitEvent", NULL, true),
    RT_SYM(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime", true),
    RT_SYM(cuModuleLoadData, "cuModuleLoadData", NULL, true),
    RT_SYM(cuModuleUnload, "cuModuleUnload", NULL, true),
    RT_SYM(cuModuleGetFunction, "cuModuleGetFunction", NULL, true),
    RT_SYM(cuFuncSetAttribute, "cuFuncSetAttribute", NULL, true),
    RT_SYM(cuFuncGetAttribute, "cuFuncGetAttribute", NULL, true),
    RT_SYM(cuLaunchKernel, "cuLaunchKernel", NULL, true),
    RT_SYM(cuLaunchKernelEx, "cuLaunchKernelEx", NULL, false),
    RT_SYM(cuOccupancyMaxActiveBlocksPerMultiprocessor,
           "cuOccupancyMaxActiveBlocksPerMultiprocessor", NULL, true),
    RT_SYM(cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters", NULL, false),
    RT_SYM(cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", NULL, false),
};

static tile_status rt_load_fail(tile_status s, const char *msg) {
  snprintf(rt_load_msg, sizeof rt_load_msg, "%s", msg);
  rt_load_status = s;
  return s;
}

static void *rt_dlopen_cuda(char *err, size_t cap) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h) return h;
  const char *e = dlerror();
  snprintf(err, cap, "%s", e ? e : "unknown error");
  return dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
}

static tile_status rt_resolve(void *lib) {
  for (size_t i = 0; i < sizeof rt_syms / sizeof rt_syms[0]; i++) {
    const rt_sym *s = &rt_syms[i];
    void *p = dlsym(lib, s->name);
    if (!p && s->fallback) p = dlsym(lib, s->fallback);
    if (!p && s->required) {
      char msg[256];
      snprintf(msg, sizeof msg,
               "the NVIDIA driver (libcuda) is too old: it has no %s; update the driver",
               s->name);
      return rt_load_fail(TILE_ERR_NO_DRIVER, msg);
    }
    memcpy((char *)&rt_cu + s->offset, &p, sizeof p);
  }
  return TILE_OK;
}

static tile_status rt_load_cuda_error(const char *call, CUresult r) {
  const char *name = NULL, *desc = NULL;
  if (rt_cu.cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
  if (rt_cu.cuGetErrorString(r, &desc) != CUDA_SUCCESS) desc = NULL;
  char msg[512];
  snprintf(msg, sizeof msg, "%s failed: %s (%s): no usable NVIDIA GPU", call,
           name ? name : "unknown CUDA error", desc ? desc : "no description");
  return rt_load_fail(TILE_ERR_NO_DEVICE, msg);
}

static void rt_load(void) {
  const char *interp = getenv("TILE_INTERPRET");
  int req = atomic_load(&rt_backend_req);
  bool emu = req == TILE_BACKEND_EMULATOR || (req == TILE_BACKEND_DEFAULT && interp && *interp && strcmp(interp, "0"));
  atomic_store(&rt_backend_done, emu ? TILE_BACKEND_EMULATOR : TILE_BACKEND_GPU);
  if (emu) { /* the emulator is the driver (docs/emulator.md) */
    rt_emu_fill(&rt_cu);
    rt_ndevices = 1;
    rt_load_status = TILE_OK;
    return;
  }
  char err[512];
  void *lib = rt_dlopen_cuda(err, sizeof err);
  if (!lib) {
    char msg[700];
    snprintf(msg, sizeof msg, "libcuda.so.1 not found: no NVIDIA driver on this machine (dlopen: %s)",
             err);
    rt_load_fail(TILE_ERR_NO_DRIVER, msg);
    return;
  }
  if (rt_resolve(lib) != TILE_OK) return;
  CUresult r = rt_cu.cuInit(0);
  if (r != CUDA_SUCCESS) {
    rt_load_cuda_error("cuInit", r);
    return;
  }
  r = rt_cu.cuDeviceGetCount(&rt_ndevices);
  if (r != CUDA_SUCCESS) {
    rt_load_cuda_error("cuDeviceGetCount", r);
    return;
  }
  if (rt_ndevices <= 0) {
    rt_load_fail(TILE_ERR_NO_DEVICE, "the NVIDIA driver found no CUDA device on this machine");
    return;
  }
  rt_load_status = TILE_OK;
}

tile_status rt_driver_load(void) {
  pthread_once(&rt_load_once, rt_load);
  if (rt_load_status != TILE_OK) return rt_fail(rt_load_status, "%s", rt_load_msg);
  return TILE_OK;
}

/* ---- contexts ---- */

tile_status rt_make_current(CUcontext ctx) {
  CUcontext cur = NULL;
  if (rt_cu.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == ctx) return TILE_OK;
  CUresult r = rt_cu.cuCtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuCtxSetCurrent");
  return TILE_OK;
}

tile_status rt_enter(rt_device **dev) {
  tile_status s = rt_driver_load();
  if (s != TILE_OK) return s;
  rt_device *d = rt_thread_dev;
  if (!d) d = atomic_load(&rt_default_dev);
  if (!d) return rt_fail(TILE_ERR_INVALID, "call tile_init first: no device has been initialised");
  s = rt_make_current(d->ctx);
  if (s == TILE_OK && dev) *dev = d;
  return s;
}

void rt_arch_name(int major, int minor, char *buf, size_t cap) {
  bool arch_specific = (major == 9 && minor == 0) || (major == 10 && minor == 0);
  snprintf(buf, cap, "sm_%d%d%s", major, minor, arch_specific ? "a" : "");
}

/* ---- tile_init ---- */

static tile_status rt_device_attr(int *v, int attr, CUdevice dev, const char *what) {
  CUresult r = rt_cu.cuDeviceGetAttribute(v, attr, dev);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuDeviceGetAttribute(%s)", what);
  return TILE_OK;
}

/* Retain device `ordinal`'s primary context (first time only); called with
 * rt_dev_lock held. */
static tile_status rt_device_open(int ordinal, rt_device **out) {
  rt_device *d = atomic_load(&rt_dev_ready[ordinal]);
  if (d) {
    *out = d;
    return TILE_OK;
  }
  d = &rt_devs[ordinal];
  d->ordinal = ordinal;
  CUresult r = rt_cu.cuDeviceGet(&d->dev, ordinal);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuDeviceGet(%d)", ordinal);
  tile_status s = rt_device_attr(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                 d->dev, "COMPUTE_CAPABILITY_MAJOR");
  if (s == TILE_OK)
    s = rt_device_attr(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev,
                       "COMPUTE_CAPABILITY_MINOR");
  if (s != TILE_OK) return s;
  r = rt_cu.cuDevicePrimaryCtxRetain(&d->ctx, d->dev);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuDevicePrimaryCtxRetain(device %d)", ordinal);
  atomic_store(&rt_dev_ready[ordinal], d);
  rt_device *none = NULL;
  atomic_compare_exchange_strong(&rt_default_dev, &none, d);
  *out = d;
  return TILE_OK;
}

tile_status tile_init(int ordinal) {
  tile_status s = rt_driver_load();
  if (s != TILE_OK) return s;
  if (ordinal < 0 || ordinal >= rt_ndevices || ordinal >= RT_MAX_DEVICES)
    return rt_fail(TILE_ERR_INVALID, "tile_init: device %d does not exist (this machine has %d)",
                   ordinal, rt_ndevices);
  rt_device *d = NULL;
  pthread_mutex_lock(&rt_dev_lock);
  s = rt_device_open(ordinal, &d);
  pthread_mutex_unlock(&rt_dev_lock);
  if (s != TILE_OK) return s;
  rt_thread_dev = d;
  return rt_make_current(d->ctx);
}

tile_status tile_init_ex(const tile_init_options *o) {
  if (!o) return rt_fail(TILE_ERR_INVALID, "tile_init_ex: opts is NULL");
  if (o->backend != TILE_BACKEND_DEFAULT && o->backend != TILE_BACKEND_GPU && o->backend != TILE_BACKEND_EMULATOR)
    return rt_fail(TILE_ERR_INVALID, "tile_init_ex: backend %d is not TILE_BACKEND_DEFAULT, _GPU or _EMULATOR",
                   (int)o->backend);
  if (o->backend != TILE_BACKEND_DEFAULT) {
    int none = TILE_BACKEND_DEFAULT;
    atomic_compare_exchange_strong(&rt_backend_req, &none, (int)o->backend);
  }
  pthread_once(&rt_load_once, rt_load);
  int done = atomic_load(&rt_backend_done);
  if (o->backend != TILE_BACKEND_DEFAULT && done != (int)o->backend)
    return rt_fail(TILE_ERR_INVALID,
                   "tile_init_ex: this process already runs its kernels on %s (chosen by the first call that needed the "
                   "driver%s): ask for the %s before any other runtime call",
                   done == TILE_BACKEND_EMULATOR ? "the emulator" : "the GPU driver",
                   done == TILE_BACKEND_EMULATOR && atomic_load(&rt_backend_req) != TILE_BACKEND_EMULATOR
                       ? ", TILE_INTERPRET set" : "",
                   o->backend == TILE_BACKEND_EMULATOR ? "emulator" : "GPU");
  return tile_init(o->ordinal);
}

int tile_emulated(void) {
  pthread_once(&rt_load_once, rt_load);
  return atomic_load(&rt_backend_done) == TILE_BACKEND_EMULATOR;
}

/* ---- device queries ---- */

tile_status tile_device_info_get(tile_device_info *info) {
  if (!info) return rt_fail(TILE_ERR_INVALID, "tile_device_info_get: info is NULL");
  rt_device *d;
  tile_status s = rt_enter(&d);
  if (s != TILE_OK) return s;
  memset(info, 0, sizeof *info);
  CUresult r = rt_cu.cuDeviceGetName(info->name, (int)sizeof info->name, d->dev);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuDeviceGetName");
  info->name[sizeof info->name - 1] = 0;
  r = rt_cu.cuDeviceTotalMem(&info->total_mem, d->dev);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuDeviceTotalMem");
  info->cc_major = d->cc_major;
  info->cc_minor = d->cc_minor;
  s = rt_device_attr(&info->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev,
                     "MULTIPROCESSOR_COUNT");
  if (s == TILE_OK)
    s = rt_device_attr(&info->max_smem_per_block_optin,
                       CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d->dev,
                       "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN");
  if (s == TILE_OK)
    s = rt_device_attr(&info->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, d->dev,
                       "L2_CACHE_SIZE");
  return s;
}

tile_status tile_device_arch(char *buf, size_t cap) {
  if (!buf || cap == 0) return rt_fail(TILE_ERR_INVALID, "tile_device_arch: no buffer");
  rt_device *d;
  tile_status s = rt_enter(&d);
  if (s != TILE_OK) return s;
  char arch[32];
  rt_arch_name(d->cc_major, d->cc_minor, arch, sizeof arch);
  if (strlen(arch) >= cap)
    return rt_fail(TILE_ERR_INVALID, "tile_device_arch: buffer of %zu bytes is too small for '%s'",
                   cap, arch);
  memcpy(buf, arch, strlen(arch) + 1);
  return TILE_OK;
}

/* cuda_api.h - the part of the CUDA driver API the runtime uses, declared
 * here so the runtime builds without <cuda.h> and never links libcuda.
 *
 * Types, enum values and prototypes follow cuda.h (CUDA 13).  The driver is
 * opened with dlopen and its entry points are looked up by their versioned
 * names (cuMemAlloc_v2, ...) into the table rt_cu (driver.c); call them as
 * rt_cu.cuMemAlloc(...).  Entries marked "optional" may be NULL with an old
 * driver; everything else is present once rt_driver_load() succeeded.
 */
#ifndef TILE_CUDA_API_H
#define TILE_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_NOT_FOUND = 500,
};

/* CUdevice_attribute */
enum {
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

/* CUfunction_attribute */
enum {
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
};

/* Stream and event flags. */
enum { CU_STREAM_DEFAULT = 0, CU_STREAM_NON_BLOCKING = 1 };
enum { CU_EVENT_DEFAULT = 0 };

/* CUlaunchAttributeID */
enum { CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };

typedef union CUlaunchAttributeValue {
  char pad[64];
  uint64_t align_; /* cuda.h's union holds pointers: 8-byte aligned */
  struct {
    unsigned int x, y, z;
  } clusterDim;
  int programmaticStreamSerializationAllowed;
} CUlaunchAttributeValue;

typedef struct CUlaunchAttribute {
  int id; /* CUlaunchAttributeID, an enum: 4 bytes */
  char pad[4];
  CUlaunchAttributeValue value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned int numAttrs;
} CUlaunchConfig;

/* TMA descriptors (issue 2). */
typedef struct CUtensorMap {
  _Alignas(128) cuuint64_t opaque[16]; /* as cuda.h 13; the driver needs 64 */
} CUtensorMap;
typedef int CUtensorMapDataType;    /* CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0, ... */
typedef int CUtensorMapInterleave;  /* CU_TENSOR_MAP_INTERLEAVE_NONE = 0 */
typedef int CUtensorMapSwizzle;     /* NONE 0, 32B 1, 64B 2, 128B 3 */
typedef int CUtensorMapL2promotion; /* NONE 0, 64B 1, 128B 2, 256B 3 */
typedef int CUtensorMapFloatOOBfill;/* NONE 0, NAN_REQUEST_ZERO_FMA 1 */

_Static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute layout");
_Static_assert(sizeof(CUlaunchConfig) == 56, "CUlaunchConfig layout");
_Static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap layout");

/* The loaded entry points. */
typedef struct rt_cuda_api {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuDriverGetVersion)(int *version);
  CUresult (*cuGetErrorName)(CUresult err, const char **str);
  CUresult (*cuGetErrorString)(CUresult err, const char **str);
  CUresult (*cuDeviceGetCount)(int *count);
  CUresult (*cuDeviceGet)(CUdevice *dev, int ordinal);
  CUresult (*cuDeviceGetName)(char *name, int len, CUdevice dev);
  CUresult (*cuDeviceGetAttribute)(int *value, int attrib, CUdevice dev);
  CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice dev);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice dev);
  CUresult (*cuCtxSetCurrent)(CUcontext ctx);
  CUresult (*cuCtxGetCurrent)(CUcontext *ctx);
  CUresult (*cuCtxPushCurrent)(CUcontext ctx);
  CUresult (*cuCtxPopCurrent)(CUcontext *ctx);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuMemAlloc)(CUdeviceptr *p, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr p);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t n);
  CUresult (*cuMemsetD32)(CUdeviceptr dst, unsigned value, size_t n);
  CUresult (*cuMemsetD32Async)(CUdeviceptr dst, unsigned value, size_t n, CUstream s);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream s);
  CUresult (*cuMemAllocHost)(void **p, size_t bytes);
  CUresult (*cuMemFreeHost)(void *p);
  CUresult (*cuStreamCreate)(CUstream *s, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream s);
  CUresult (*cuStreamSynchronize)(CUstream s);
  CUresult (*cuEventCreate)(CUevent *e, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent e);
  CUresult (*cuEventRecord)(CUevent e, CUstream s);
  CUresult (*cuEventSynchronize)(CUevent e);
  CUresult (*cuStreamWaitEvent)(CUstream s, CUevent e, unsigned flags);
  /* cuEventElapsedTime_v2 (CUDA >= 12.8), else cuEventElapsedTime. */
  CUresult (*cuEventElapsedTime)(float *ms, CUevent start, CUevent end);
  CUresult (*cuModuleLoadData)(CUmodule *m, const void *image);
  CUresult (*cuModuleUnload)(CUmodule m);
  CUresult (*cuModuleGetFunction)(CUfunction *f, CUmodule m, const char *name);
  CUresult (*cuFuncSetAttribute)(CUfunction f, int attrib, int value);
  CUresult (*cuFuncGetAttribute)(int *value, int attrib, CUfunction f);
  CUresult (*cuLaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                             unsigned bx, unsigned by, unsigned bz, unsigned smem,
                             CUstream s, void **params, void **extra);
  /* Optional (CUDA >= 12.0). */
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *cfg, CUfunction f, void **params,
                               void **extra);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *blocks, CUfunction f,
                                                          int block_size, size_t smem);
  /* Optional (CUDA >= 12.0). */
  CUresult (*cuOccupancyMaxActiveClusters)(int *clusters, CUfunction f,
                                           const CUlaunchConfig *cfg);
  /* Optional (CUDA >= 12.0). */
  CUresult (*cuTensorMapEncodeTiled)(CUtensorMap *map, CUtensorMapDataType dtype,
                                     cuuint32_t rank, void *global_address,
                                     const cuuint64_t *global_dim,
                                     const cuuint64_t *global_strides,
                                     const cuuint32_t *box_dim,
                                     const cuuint32_t *element_strides,
                                     CUtensorMapInterleave interleave,
                                     CUtensorMapSwizzle swizzle,
                                     CUtensorMapL2promotion l2_promotion,
                                     CUtensorMapFloatOOBfill oob_fill);
} rt_cuda_api;

/* Filled once by rt_driver_load(); read-only afterwards. */
extern rt_cuda_api rt_cu;

#endif

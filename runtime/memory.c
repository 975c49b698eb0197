/* memory.c - device memory, streams and events: thin wrappers over the
 * driver that check their arguments, make the context current (rt_enter)
 * and turn CUDA errors into messages.
 */
#include "rt.h"

#define RT_ENTER()                       \
  do {                                   \
    tile_status rt_s_ = rt_enter(NULL);  \
    if (rt_s_ != TILE_OK) return rt_s_;  \
  } while (0)

/* ---- memory ---- */

tile_status tile_malloc(tile_devptr *p, size_t bytes) {
  if (!p) return rt_fail(TILE_ERR_INVALID, "tile_malloc: p is NULL");
  *p = 0;
  RT_ENTER();
  if (bytes == 0) return TILE_OK; /* as cudaMalloc: a zero address */
  CUdeviceptr d = 0;
  CUresult r = rt_cu.cuMemAlloc(&d, bytes);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuMemAlloc(%zu bytes)", bytes);
  *p = d;
  return TILE_OK;
}

tile_status tile_free(tile_devptr p) {
  RT_ENTER();
  if (p == 0) return TILE_OK;
  CUresult r = rt_cu.cuMemFree(p);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuMemFree(0x%llx)", (unsigned long long)p);
  return TILE_OK;
}

tile_status tile_memcpy_htod(tile_devptr dst, const void *src, size_t bytes) {
  if (!src && bytes) return rt_fail(TILE_ERR_INVALID, "tile_memcpy_htod: src is NULL");
  RT_ENTER();
  if (bytes == 0) return TILE_OK;
  CUresult r = rt_cu.cuMemcpyHtoD(dst, src, bytes);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuMemcpyHtoD(%zu bytes)", bytes);
  return TILE_OK;
}

tile_status tile_memcpy_dtoh(void *dst, tile_devptr src, size_t bytes) {
  if (!dst && bytes) return rt_fail(TILE_ERR_INVALID, "tile_memcpy_dtoh: dst is NULL");
  RT_ENTER();
  if (bytes == 0) return TILE_OK;
  CUresult r = rt_cu.cuMemcpyDtoH(dst, src, bytes);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuMemcpyDtoH(%zu bytes)", bytes);
  return TILE_OK;
}

tile_status tile_memcpy_dtod(tile_devptr dst, tile_devptr src, size_t bytes) {
  RT_ENTER();
  if (bytes == 0) return TILE_OK;
  CUresult r = rt_cu.cuMemcpyDtoD(dst, src, bytes);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuMemcpyDtoD(%zu bytes)", bytes);
  return TILE_OK;
}

tile_status tile_memset_d8(tile_devptr dst, uint8_t value, size_t bytes) {
  RT_ENTER();
  if (bytes == 0) return TILE_OK;
  CUresult r = rt_cu.cuMemsetD8(dst, value, bytes);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuMemsetD8(%zu bytes)", bytes);
  return TILE_OK;
}

tile_status tile_memset_d32(tile_devptr dst, uint32_t value, size_t count) {
  if (dst % 4) return rt_fail(TILE_ERR_INVALID, "tile_memset_d32: 0x%llx is not 4-byte aligned",
                              (unsigned long long)dst);
  RT_ENTER();
  if (count == 0) return TILE_OK;
  CUresult r = rt_cu.cuMemsetD32(dst, value, count);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuMemsetD32(%zu words)", count);
  return TILE_OK;
}

tile_status tile_memset_d32_async(tile_devptr dst, uint32_t value, size_t count, tile_stream stream) {
  if (dst % 4) return rt_fail(TILE_ERR_INVALID, "tile_memset_d32_async: 0x%llx is not 4-byte aligned",
                              (unsigned long long)dst);
  RT_ENTER();
  if (count == 0) return TILE_OK;
  CUresult r = rt_cu.cuMemsetD32Async(dst, value, count, (CUstream)stream);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuMemsetD32Async(%zu words)", count);
  return TILE_OK;
}

tile_status tile_memcpy_htod_async(tile_devptr dst, const void *src, size_t bytes, tile_stream stream) {
  if (!src && bytes) return rt_fail(TILE_ERR_INVALID, "tile_memcpy_htod_async: src is NULL");
  RT_ENTER();
  if (bytes == 0) return TILE_OK;
  CUresult r = rt_cu.cuMemcpyHtoDAsync(dst, src, bytes, (CUstream)stream);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuMemcpyHtoDAsync(%zu bytes)", bytes);
  return TILE_OK;
}

tile_status tile_host_alloc(void **p, size_t bytes) {
  if (!p) return rt_fail(TILE_ERR_INVALID, "tile_host_alloc: p is NULL");
  *p = NULL;
  RT_ENTER();
  if (bytes == 0) return TILE_OK;
  CUresult r = rt_cu.cuMemAllocHost(p, bytes);
  if (r != CUDA_SUCCESS) {
    *p = NULL;
    return rt_cuda_fail(r, "cuMemAllocHost(%zu bytes)", bytes);
  }
  return TILE_OK;
}

tile_status tile_host_free(void *p) {
  if (!p) return TILE_OK;
  RT_ENTER();
  CUresult r = rt_cu.cuMemFreeHost(p);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuMemFreeHost(%p)", p);
  return TILE_OK;
}

tile_status tile_synchronize(void) {
  RT_ENTER();
  CUresult r = rt_cu.cuCtxSynchronize();
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuCtxSynchronize");
  return TILE_OK;
}

/* ---- streams ---- */

/* A blocking stream: it synchronizes with the default stream, so the
 * synchronous tile_memcpy_* calls see work launched on it. */
tile_status tile_stream_create(tile_stream *s) {
  if (!s) return rt_fail(TILE_ERR_INVALID, "tile_stream_create: s is NULL");
  *s = NULL;
  RT_ENTER();
  CUstream cs = NULL;
  CUresult r = rt_cu.cuStreamCreate(&cs, CU_STREAM_DEFAULT);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuStreamCreate");
  *s = (tile_stream)cs;
  return TILE_OK;
}

tile_status tile_stream_destroy(tile_stream s) {
  RT_ENTER();
  if (!s) return TILE_OK; /* the default stream is not destroyed */
  CUresult r = rt_cu.cuStreamDestroy((CUstream)s);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuStreamDestroy");
  return TILE_OK;
}

tile_status tile_stream_synchronize(tile_stream s) {
  RT_ENTER();
  CUresult r = rt_cu.cuStreamSynchronize((CUstream)s);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuStreamSynchronize");
  return TILE_OK;
}

/* ---- events ---- */

tile_status tile_event_create(tile_event *e) {
  if (!e) return rt_fail(TILE_ERR_INVALID, "tile_event_create: e is NULL");
  *e = NULL;
  RT_ENTER();
  CUevent ce = NULL;
  CUresult r = rt_cu.cuEventCreate(&ce, CU_EVENT_DEFAULT);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuEventCreate");
  *e = (tile_event)ce;
  return TILE_OK;
}

tile_status tile_event_destroy(tile_event e) {
  RT_ENTER();
  if (!e) return TILE_OK;
  CUresult r = rt_cu.cuEventDestroy((CUevent)e);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuEventDestroy");
  return TILE_OK;
}

tile_status tile_event_record(tile_event e, tile_stream s) {
  if (!e) return rt_fail(TILE_ERR_INVALID, "tile_event_record: e is NULL");
  RT_ENTER();
  CUresult r = rt_cu.cuEventRecord((CUevent)e, (CUstream)s);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuEventRecord");
  return TILE_OK;
}

tile_status tile_event_synchronize(tile_event e) {
  if (!e) return rt_fail(TILE_ERR_INVALID, "tile_event_synchronize: e is NULL");
  RT_ENTER();
  CUresult r = rt_cu.cuEventSynchronize((CUevent)e);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuEventSynchronize");
  return TILE_OK;
}

tile_status tile_stream_wait_event(tile_stream s, tile_event e) {
  if (!e) return rt_fail(TILE_ERR_INVALID, "tile_stream_wait_event: e is NULL");
  RT_ENTER();
  CUresult r = rt_cu.cuStreamWaitEvent((CUstream)s, (CUevent)e, 0);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuStreamWaitEvent");
  return TILE_OK;
}

/* Waits for `end` to complete, then gives the time between the events. */
tile_status tile_event_elapsed_ms(float *ms, tile_event start, tile_event end) {
  if (!ms || !start || !end)
    return rt_fail(TILE_ERR_INVALID, "tile_event_elapsed_ms: NULL argument");
  *ms = 0;
  RT_ENTER();
  CUresult r = rt_cu.cuEventSynchronize((CUevent)end);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuEventSynchronize");
  r = rt_cu.cuEventElapsedTime(ms, (CUevent)start, (CUevent)end);
  if (r != CUDA_SUCCESS) return rt_cuda_fail(r, "cuEventElapsedTime");
  return TILE_OK;
}

/* error.c - status names and the per-thread error message.
 *
 * Every failing runtime call writes a message into a buffer private to the
 * calling thread; successful calls leave it alone, so tile_last_error() is
 * the message of the last *failing* call in this thread ("" before the
 * first failure).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rt.h"

static _Thread_local char rt_msg[RT_ERRMSG_CAP];

const char *tile_status_name(tile_status s) {
  switch (s) {
  case TILE_OK: return "TILE_OK";
  case TILE_ERR_NO_DRIVER: return "TILE_ERR_NO_DRIVER";
  case TILE_ERR_NO_DEVICE: return "TILE_ERR_NO_DEVICE";
  case TILE_ERR_CUDA: return "TILE_ERR_CUDA";
  case TILE_ERR_INVALID: return "TILE_ERR_INVALID";
  case TILE_ERR_NOT_FOUND: return "TILE_ERR_NOT_FOUND";
  case TILE_ERR_BAD_MODULE: return "TILE_ERR_BAD_MODULE";
  case TILE_ERR_COMPILE: return "TILE_ERR_COMPILE";
  case TILE_ERR_IO: return "TILE_ERR_IO";
  case TILE_ERR_NOMEM: return "TILE_ERR_NOMEM";
  }
  return "TILE_ERR_UNKNOWN";
}

const char *tile_last_error(void) { return rt_msg; }

static void rt_vformat(const char *fmt, va_list ap) {
  char tmp[RT_ERRMSG_CAP]; /* the arguments may point into rt_msg */
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  memcpy(rt_msg, tmp, sizeof tmp);
}

tile_status rt_fail(tile_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  rt_vformat(fmt, ap);
  va_end(ap);
  return s;
}

/* CUDA's own name and description of an error code (the driver is loaded:
 * CUresults only come from it). */
static void rt_cuda_describe(CUresult r, const char **name, const char **desc) {
  *name = NULL;
  *desc = NULL;
  if (rt_cu.cuGetErrorName && rt_cu.cuGetErrorName(r, name) != CUDA_SUCCESS) *name = NULL;
  if (rt_cu.cuGetErrorString && rt_cu.cuGetErrorString(r, desc) != CUDA_SUCCESS) *desc = NULL;
}

tile_status tile_set_error(tile_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  rt_vformat(fmt, ap);
  va_end(ap);
  return s;
}

tile_status rt_cuda_fail(CUresult r, const char *what, ...) {
  char call[512];
  va_list ap;
  va_start(ap, what);
  vsnprintf(call, sizeof call, what, ap);
  va_end(ap);
  const char *name, *desc;
  rt_cuda_describe(r, &name, &desc);
  if (name)
    return rt_fail(TILE_ERR_CUDA, "%s failed: %s (%s)", call, name, desc ? desc : "no description");
  return rt_fail(TILE_ERR_CUDA, "%s failed: CUDA error %d", call, (int)r);
}

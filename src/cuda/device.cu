/* Device discovery. The only door from C into this file is src/cuda/fusedcuda.h. */
#include <cuda_runtime.h>
#include <stdio.h>
#include "cuda/fusedcuda.h"

/* Absence of a device or driver is an answer here, not an error: the caller
   falls back to the reference backend and says so. */
extern "C" int FusedCUDADeviceCount(int *count, char *reason, size_t reasonlen)
{
  cudaError_t err = cudaGetDeviceCount(count);
  if (err != cudaSuccess) {
    *count = 0;
    if (reason && reasonlen) snprintf(reason, reasonlen, "%s (%s)", cudaGetErrorName(err), cudaGetErrorString(err));
    (void)cudaGetLastError(); /* clear the sticky error so later queries start clean */
    return 0;
  }
  if (reason && reasonlen) snprintf(reason, reasonlen, "%d CUDA device(s)", *count);
  return 0;
}

extern "C" int FusedCUDADeviceName(int device, char *name, size_t namelen, char *errmsg, size_t errlen)
{
  cudaDeviceProp prop;
  cudaError_t    err = cudaGetDeviceProperties(&prop, device);
  if (err != cudaSuccess) {
    snprintf(errmsg, errlen, "cudaGetDeviceProperties(%d): %s", device, cudaGetErrorString(err));
    return 1;
  }
  snprintf(name, namelen, "%s", prop.name);
  return 0;
}

/* Free and total memory of a device, after the work queued on it is done;
   the calling thread's current device stays what it was */
extern "C" int FusedCUDAMemoryInfo(int device, size_t *free_bytes, size_t *total_bytes, char *errmsg, size_t errlen)
{
  int         current = device;
  cudaError_t err     = cudaGetDevice(&current);
  if (err == cudaSuccess) err = cudaSetDevice(device);
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err == cudaSuccess) err = cudaMemGetInfo(free_bytes, total_bytes);
  if (err == cudaSuccess) err = cudaSetDevice(current);
  if (err != cudaSuccess) {
    snprintf(errmsg, errlen, "CUDA device %d memory query: %s", device, cudaGetErrorString(err));
    return 1;
  }
  return 0;
}

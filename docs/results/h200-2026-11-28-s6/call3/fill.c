/* LD_PRELOAD shim (session 6, call 3): every cudaMalloc'd block is filled
   with the byte FUSED_FILL_BYTE (0-255) before it is handed out, so that a
   reader of memory it never wrote sees that byte and not what the process
   freed there earlier. Build: gcc -shared -fPIC -O2 fill.c -o fill.so
   -I/usr/local/cuda/include -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>

cudaError_t cudaMalloc(void **ptr, size_t size)
{
  static cudaError_t (*real)(void **, size_t);
  const char        *fill = getenv("FUSED_FILL_BYTE");
  cudaError_t        err;

  if (!real) real = (cudaError_t(*)(void **, size_t))dlsym(RTLD_NEXT, "cudaMalloc");
  err = real(ptr, size);
  if (err == cudaSuccess && size && fill) {
    err = cudaMemset(*ptr, atoi(fill), size);
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
  }
  return err;
}

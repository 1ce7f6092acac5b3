/* LD_PRELOAD shim: every CUDA runtime call of a process with its duration and the host gap before it, and KSPSetUp/KSPSolve as markers (scratch, from ../h100-2026-11-28-persolve/call1-shim/shim.c) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
#include <stddef.h>
typedef int cudaError_t;
static double t0 = -1;
static double now_us(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3; }
static long ncalls = 0;
static double tlast = 0;
static void report(const char *name, double a, double b)
{
  ncalls++;
  if (t0 < 0) t0 = a, tlast = a;
  fprintf(stderr, "SHIM %10.1f gap %7.1f dur %7.1f %-40s\n", a - t0, a - tlast, b - a, name);
  tlast = b;
}
#define WRAP(ret, name, params, args) \
  ret name params { static ret (*real) params = NULL; if (!real) real = (ret (*) params)dlsym(RTLD_NEXT, #name); double t_a_ = now_us(); ret r_ = real args; report(#name, t_a_, now_us()); return r_; }
WRAP(cudaError_t, cudaMallocHost, (void **p, size_t s), (p, s))
WRAP(cudaError_t, cudaHostAlloc, (void **p, size_t s, unsigned f), (p, s, f))
WRAP(cudaError_t, cudaMalloc, (void **p, size_t s), (p, s))
WRAP(cudaError_t, cudaMallocAsync, (void **p, size_t s, void *st), (p, s, st))
WRAP(cudaError_t, cudaFree, (void *p), (p))
WRAP(cudaError_t, cudaFreeHost, (void *p), (p))
WRAP(cudaError_t, cudaLaunchKernel, (const void *f, unsigned long long g, unsigned gz, unsigned long long b, unsigned bz, void **args, size_t sm, void *st), (f, g, gz, b, bz, args, sm, st))
WRAP(cudaError_t, cudaLaunchCooperativeKernel, (const void *f, unsigned long long g, unsigned gz, unsigned long long b, unsigned bz, void **args, size_t sm, void *st), (f, g, gz, b, bz, args, sm, st))
WRAP(cudaError_t, cudaStreamSynchronize, (void *s), (s))
WRAP(cudaError_t, cudaDeviceSynchronize, (void), ())
WRAP(cudaError_t, cudaMemcpyAsync, (void *d, const void *s, size_t n, int k, void *st), (d, s, n, k, st))
WRAP(cudaError_t, cudaMemcpy, (void *d, const void *s, size_t n, int k), (d, s, n, k))
WRAP(cudaError_t, cudaMemsetAsync, (void *d, int v, size_t n, void *st), (d, v, n, st))
WRAP(cudaError_t, cudaEventCreateWithFlags, (void **e, unsigned f), (e, f))
WRAP(cudaError_t, cudaEventCreate, (void **e), (e))
WRAP(cudaError_t, cudaEventRecord, (void *e, void *s), (e, s))
WRAP(cudaError_t, cudaEventSynchronize, (void *e), (e))
WRAP(cudaError_t, cudaStreamWaitEvent, (void *s, void *e, unsigned f), (s, e, f))
WRAP(cudaError_t, cudaStreamCreateWithFlags, (void **s, unsigned f), (s, f))
WRAP(cudaError_t, cudaFuncGetAttributes, (void *a, const void *f), (a, f))
WRAP(cudaError_t, cudaOccupancyMaxActiveBlocksPerMultiprocessor, (int *n, const void *f, int b, size_t s), (n, f, b, s))
WRAP(cudaError_t, cudaGraphLaunch, (void *g, void *s), (g, s))
WRAP(cudaError_t, cudaGraphInstantiate, (void **e, void *g, unsigned long long f), (e, g, f))
WRAP(cudaError_t, cudaGetDeviceProperties_v2, (void *p, int d), (p, d))
WRAP(cudaError_t, cudaDeviceGetAttribute, (int *v, int a, int d), (v, a, d))
WRAP(cudaError_t, cudaSetDevice, (int d), (d))
WRAP(cudaError_t, cudaGetDevice, (int *d), (d))
WRAP(int, cublasCreate_v2, (void **h), (h))
WRAP(int, cusparseCreate, (void **h), (h))
WRAP(cudaError_t, cudaHostRegister, (void *p, size_t s, unsigned f), (p, s, f))
WRAP(cudaError_t, cudaFuncSetAttribute, (const void *f, int a, int v), (f, a, v))
WRAP(cudaError_t, cudaEventQuery, (void *e), (e))
WRAP(cudaError_t, cudaStreamQuery, (void *s), (s))
WRAP(cudaError_t, cudaMemcpy2DAsync, (void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, int k, void *st), (d, dp, s, sp, w, h, k, st))
/* markers: where each KSPSetUp and KSPSolve begins and ends */
typedef int PetscErrorCode;
#define MARK(name, params, args) \
  PetscErrorCode name params { static PetscErrorCode (*real) params = NULL; if (!real) real = (PetscErrorCode (*) params)dlsym(RTLD_NEXT, #name); double t_a_ = now_us(); if (t0 < 0) t0 = t_a_, tlast = t_a_; fprintf(stderr, "SHIM %10.1f gap %7.1f ---- begin %s\n", t_a_ - t0, t_a_ - tlast, #name); tlast = t_a_; PetscErrorCode r_ = real args; double t_b_ = now_us(); fprintf(stderr, "SHIM %10.1f gap %7.1f ---- end %s (%.1f us)\n", t_b_ - t0, t_b_ - tlast, #name, t_b_ - t_a_); tlast = t_b_; return r_; }
MARK(KSPSolve, (void *k, void *b, void *x), (k, b, x))
MARK(KSPSetUp, (void *k), (k))

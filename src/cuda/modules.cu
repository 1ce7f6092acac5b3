/* Kernels loaded before their first launch. Since CUDA 12.2 a kernel's code
   goes to the device at its first launch (lazy loading): the first
   KSPSolve() of each method paid about 2 ms for it (H100, 2026-11-25,
   1,024 rows). At KSPSetUp() the fused methods load every kernel of the
   modules (the .cu files) they launch from, once a process. The driver's
   functions come through the runtime's entry points, so nothing links
   libcuda; where they are missing (a driver before CUDA 12.4) the kernels
   load at their first launch, as before. */
#include <stdlib.h>
#include <cuda.h>
#include <cooperative_groups.h>
#include "cuda/fusedcuda_impl.cuh"

typedef CUresult (*FuncGetModuleFn)(CUmodule *, CUfunction);
typedef CUresult (*ModuleGetFunctionCountFn)(unsigned int *, CUmodule);
typedef CUresult (*ModuleEnumerateFunctionsFn)(CUfunction *, unsigned int, CUmodule);
typedef CUresult (*FuncLoadFn)(CUfunction);

struct DriverCalls {
  int                        looked; /* 1 found, -1 not there */
  FuncGetModuleFn            get_module;
  ModuleGetFunctionCountFn   count;
  ModuleEnumerateFunctionsFn enumerate;
  FuncLoadFn                 load;
};

static int DriverEntry(const char *name, void **fn)
{
#if CUDART_VERSION >= 12050
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t               e     = cudaGetDriverEntryPointByVersion(name, fn, 12040, cudaEnableDefault, &found);
  return e == cudaSuccess && found == cudaDriverEntryPointSuccess && *fn;
#else
  /* a toolkit before 12.5 has no versioned entry points: lazy loading as before */
  (void)name;
  *fn = NULL;
  return 0;
#endif
}

static int DriverCallsFound(DriverCalls *d)
{
  if (!d->looked) {
    const int all = DriverEntry("cuFuncGetModule", (void **)&d->get_module) && DriverEntry("cuModuleGetFunctionCount", (void **)&d->count) && DriverEntry("cuModuleEnumerateFunctions", (void **)&d->enumerate) && DriverEntry("cuFuncLoad", (void **)&d->load);
    d->looked = all ? 1 : -1;
  }
  return d->looked > 0;
}

#define LOADED_MAX 64
static struct {
  int         device;
  const void *kernel;
} loaded[LOADED_MAX];
static int nloaded;

int FusedCUDALoadModuleOf(int device, const void *kernel)
{
  static DriverCalls d;
  cudaFunction_t     f;
  CUmodule           mod;
  unsigned int       count = 0;
  CUfunction        *funcs;
  CUresult           r;

  for (int k = 0; k < nloaded; k++)
    if (loaded[k].device == device && loaded[k].kernel == kernel) return FUSED_CUDA_OK;
  if (!DriverCallsFound(&d)) return FUSED_CUDA_OK;
  FUSED_CUDA_CHECK(cudaSetDevice(device));
  FUSED_CUDA_CHECK(cudaGetFuncBySymbol(&f, kernel));
  if ((r = d.get_module(&mod, (CUfunction)f)) != CUDA_SUCCESS || (r = d.count(&count, mod)) != CUDA_SUCCESS) return FusedCUDASetError(FUSED_CUDA_ERR_LIB, "finding the kernels of a module to load them: CUDA driver error %d", (int)r);
  if (!(funcs = (CUfunction *)malloc(sizeof(CUfunction) * (count ? count : 1)))) return FusedCUDASetError(FUSED_CUDA_ERR_MEM, "no host memory for the list of %u kernels to load", count);
  r = d.enumerate(funcs, count, mod);
  for (unsigned int k = 0; r == CUDA_SUCCESS && k < count; k++) r = d.load(funcs[k]);
  free(funcs);
  if (r != CUDA_SUCCESS) return FusedCUDASetError(r == CUDA_ERROR_OUT_OF_MEMORY ? FUSED_CUDA_ERR_MEM : FUSED_CUDA_ERR_LIB, "loading a module's kernels on device %d: CUDA driver error %d", device, (int)r);
  if (nloaded < LOADED_MAX) {
    loaded[nloaded].device = device;
    loaded[nloaded].kernel = kernel;
    nloaded++;
  }
  return FUSED_CUDA_OK;
}

/* The process's first cooperative launch costs the host about 0.1 ms more
   than later ones, of any kernel (H100: 61-88 against 13 us; the first
   single-kernel loop of a process 290-313 against 176-188 us, 2026-11-26):
   made here, at KSPSetUp(), once a device, not in the first solve */
__global__ static void FusedWarmCooperativeKernel(void)
{
  cooperative_groups::this_grid().sync();
}

#define WARMED_MAX 64
int FusedCUDAWarmCooperativeLaunch(int device)
{
  static unsigned char warmed[WARMED_MAX];
  cudaStream_t         stream;
  int                  coop = 0;
  cudaError_t          e, e_destroy;

  if (device < 0 || device >= WARMED_MAX || warmed[device]) return FUSED_CUDA_OK;
  FUSED_CUDA_CHECK(cudaSetDevice(device));
  FUSED_CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
  if (coop) {
    FUSED_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    e = cudaLaunchCooperativeKernel((const void *)FusedWarmCooperativeKernel, 1, 32, NULL, 0, stream); /* no arguments */
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    e_destroy = cudaStreamDestroy(stream);
    if (e == cudaSuccess) e = e_destroy;
    if (e != cudaSuccess) return FusedCUDAFail(e, "cudaLaunchCooperativeKernel (the first, at set-up)", __FILE__, __LINE__);
  }
  warmed[device] = 1;
  return FUSED_CUDA_OK;
}

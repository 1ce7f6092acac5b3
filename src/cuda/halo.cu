/* The compressed halo on the device: the entries the neighbours read are
   gathered into one packed send buffer; they travel through pinned host
   buffers and MPI, through a CUDA-aware MPI, or, between ranks of one host,
   as device-to-device copies from the neighbour's send buffer, shared through
   CUDA IPC (ksp/fusedhalo.h says which and when). */
#include <string.h>
#include "cuda/fusedcuda_impl.cuh"

static_assert(sizeof(cudaIpcMemHandle_t) == FUSED_IPC_HANDLE_BYTES, "FUSED_IPC_HANDLE_BYTES must match cudaIpcMemHandle_t");

__global__ static void FusedGatherKernel(int n, const int *idx, const double *x, double *out)
{
  FUSED_GRID_LOOP(k, n) out[k] = x[idx[k]];
}

extern "C" int FusedCUDAHaloPack(FusedCUDA ctx, FusedDevMat A, const double *x, int to_host)
{
  if (A->nsend > 0) {
    const int blocks = (A->nsend + FUSED_BLOCK - 1) / FUSED_BLOCK;
    FusedGatherKernel<<<blocks < ctx->nblocks ? blocks : ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->nsend, A->send_idx, x, A->send_dev);
    FUSED_CUDA_CHECK_LAUNCH("FusedGatherKernel");
    if (to_host) FUSED_CUDA_CHECK(cudaMemcpyAsync(A->send_host, A->send_dev, sizeof(double) * A->nsend, cudaMemcpyDeviceToHost, ctx->stream));
  }
  FUSED_CUDA_CHECK(cudaEventRecord(A->packed, ctx->stream));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAHaloWaitPacked(FusedDevMat A)
{
  FUSED_CUDA_CHECK(cudaEventSynchronize(A->packed));
  return FUSED_CUDA_OK;
}

/* What the solver's stream queues from now on waits for the ghost values */
static int HaloArrivedBeforeNext(FusedCUDA ctx, FusedDevMat A)
{
  FUSED_CUDA_CHECK(cudaEventRecord(A->arrived, A->halo_stream));
  FUSED_CUDA_CHECK(cudaStreamWaitEvent(ctx->stream, A->arrived, 0));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAHaloUnpack(FusedCUDA ctx, FusedDevMat A)
{
  /* after the pack, so after every earlier product that read the ghost buffer */
  FUSED_CUDA_CHECK(cudaStreamWaitEvent(A->halo_stream, A->packed, 0));
  if (A->nghost > 0) FUSED_CUDA_CHECK(cudaMemcpyAsync(A->ghost, A->ghost_host, sizeof(double) * A->nghost, cudaMemcpyHostToDevice, A->halo_stream));
  return HaloArrivedBeforeNext(ctx, A);
}

extern "C" double *FusedDevMatSendBuffer(FusedDevMat A)
{
  return A->send_dev;
}

extern "C" double *FusedDevMatGhostBuffer(FusedDevMat A)
{
  return A->ghost;
}

extern "C" int FusedCUDAIpcExport(FusedDevMat A, unsigned char handle[FUSED_IPC_HANDLE_BYTES])
{
  cudaIpcMemHandle_t h;
  memset(handle, 0, FUSED_IPC_HANDLE_BYTES);
  if (!A->send_dev) return FUSED_CUDA_OK; /* nothing to share: no neighbour reads from us */
  FUSED_CUDA_CHECK(cudaIpcGetMemHandle(&h, A->send_dev));
  memcpy(handle, &h, sizeof(h));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAIpcOpen(int device, const unsigned char handle[FUSED_IPC_HANDLE_BYTES], void **base)
{
  cudaIpcMemHandle_t h;
  *base = NULL;
  memcpy(&h, handle, sizeof(h));
  FUSED_CUDA_CHECK(cudaSetDevice(device));
  FUSED_CUDA_CHECK(cudaIpcOpenMemHandle(base, h, cudaIpcMemLazyEnablePeerAccess));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAIpcClose(void *base)
{
  if (base) FUSED_CUDA_CHECK(cudaIpcCloseMemHandle(base));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAHaloPull(FusedCUDA ctx, FusedDevMat A, int nsrc, const double *const *src, const int *off, const int *count)
{
  FUSED_CUDA_CHECK(cudaStreamWaitEvent(A->halo_stream, A->packed, 0));
  for (int i = 0; i < nsrc; i++)
    if (count[i] > 0) FUSED_CUDA_CHECK(cudaMemcpyAsync(A->ghost + off[i], src[i], sizeof(double) * count[i], cudaMemcpyDefault, A->halo_stream));
  if (int err = HaloArrivedBeforeNext(ctx, A)) return err;
  /* the neighbours may refill their buffers once we say we are done with them */
  FUSED_CUDA_CHECK(cudaEventSynchronize(A->arrived));
  return FUSED_CUDA_OK;
}

int FusedHaloLoadKernels(int device)
{
  return FusedCUDALoadModuleOf(device, (const void *)FusedGatherKernel);
}

/* Host-to-device copies of large pageable arrays (the operator's CSR arrays,
   which PETSc allocates as ordinary memory). The driver stages pageable
   memory through pinned buffers at the speed of one host thread's memcpy; a
   few threads, each with its own stream, move it faster, and they leave the
   calling thread free for other work (the pattern's scan) meanwhile. */
#include <thread>
#include "cuda/fusedcuda_impl.cuh"

/* below this, one plain copy: starting threads costs more than it saves */
#define UPLOAD_THREADED_BYTES ((size_t)16 << 20)

static void UploadSlice(FusedUploadSlice *s)
{
  cudaStream_t stream = NULL;
  cudaError_t  e;

  s->err = cudaSetDevice(s->device); /* the current device is per host thread */
  if (s->err == cudaSuccess) s->err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (s->err != cudaSuccess) return;
  s->err = cudaMemcpyAsync(s->dst, s->src, s->bytes, cudaMemcpyHostToDevice, stream);
  e      = cudaStreamSynchronize(stream);
  if (s->err == cudaSuccess) s->err = e;
  e = cudaStreamDestroy(stream);
  if (s->err == cudaSuccess) s->err = e;
}

int FusedUploadBegin(FusedUpload *u, void *dst, const void *src, size_t bytes)
{
  int    device, nslices;
  size_t per;

  u->nslices = 0;
  if (!bytes) return FUSED_CUDA_OK;
  FUSED_CUDA_CHECK(cudaGetDevice(&device));
  nslices = bytes < UPLOAD_THREADED_BYTES ? 0 : FUSED_UPLOAD_SLICES;
  if (!nslices) {
    FUSED_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return FUSED_CUDA_OK;
  }
  per = (bytes + nslices - 1) / nslices;
  for (int k = 0; k < nslices; k++) {
    FusedUploadSlice *s   = &u->slice[k];
    const size_t      at  = (size_t)k * per;
    s->device             = device;
    s->dst                = (char *)dst + at;
    s->src                = (const char *)src + at;
    s->bytes              = at < bytes ? (bytes - at < per ? bytes - at : per) : 0;
    s->err                = cudaSuccess;
    s->thread             = NULL;
    try {
      s->thread = new std::thread(UploadSlice, s);
    } catch (...) { /* no thread to be had: this slice in this thread */
      UploadSlice(s);
    }
    u->nslices = k + 1;
  }
  return FUSED_CUDA_OK;
}

int FusedUploadEnd(FusedUpload *u)
{
  cudaError_t first = cudaSuccess;

  for (int k = 0; k < u->nslices; k++) {
    FusedUploadSlice *s = &u->slice[k];
    if (s->thread) {
      std::thread *t = (std::thread *)s->thread;
      t->join();
      delete t;
      s->thread = NULL;
    }
    if (first == cudaSuccess) first = s->err;
  }
  u->nslices = 0;
  if (first != cudaSuccess) return FusedCUDAFail(first, "cudaMemcpyAsync (a slice of a threaded upload)", __FILE__, __LINE__);
  return FUSED_CUDA_OK;
}

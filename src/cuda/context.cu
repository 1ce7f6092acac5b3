/* The per-solver device workspace: vectors, reduction buffers, the loop
   state, and the device loops (a CUDA graph, or one cooperative kernel) that
   run a method's iterations without the host; the halo's device packing. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cuda/fusedcuda_impl.cuh"

static char fused_last_error[512];

extern "C" const char *FusedCUDALastError(void)
{
  return fused_last_error;
}

int FusedCUDASetError(int code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(fused_last_error, sizeof(fused_last_error), fmt, ap);
  va_end(ap);
  return code;
}

int FusedCUDAFail(cudaError_t err, const char *call, const char *file, int line)
{
  const int code = err == cudaErrorMemoryAllocation ? FUSED_CUDA_ERR_MEM : FUSED_CUDA_ERR_LIB;
  (void)cudaGetLastError(); /* clear a non-sticky error */
  return FusedCUDASetError(code, "%s failed: %s (%s) at %s:%d", call, cudaGetErrorName(err), cudaGetErrorString(err), file, line);
}

/* cudaMalloc with the size in the message, for PETSC_ERR_MEM; no bytes, no buffer */
int FusedMalloc(void **ptr, size_t bytes, const char *what)
{
  cudaError_t err;
  *ptr = NULL;
  if (!bytes) return FUSED_CUDA_OK;
  err = cudaMalloc(ptr, bytes);
  if (err == cudaErrorMemoryAllocation) {
    size_t freeb = 0, total = 0;
    (void)cudaGetLastError();
    (void)cudaMemGetInfo(&freeb, &total);
    *ptr = NULL;
    return FusedCUDASetError(FUSED_CUDA_ERR_MEM, "CUDA device out of memory: %s needs %zu bytes, %zu of %zu are free", what, bytes, freeb, total);
  }
  FUSED_CUDA_CHECK(err);
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDACreate(int device, int n, int nvecs, int maxsums, const char *what, FusedCUDA *out)
{
  FusedCUDA      ctx;
  cudaDeviceProp prop;
  int            err;
  char           label[256];

  *out = NULL;
  ctx  = (FusedCUDA)calloc(1, sizeof(*ctx));
  if (!ctx) return FusedCUDASetError(FUSED_CUDA_ERR_MEM, "host out of memory for the CUDA workspace");
  ctx->device  = device;
  ctx->n       = n;
  ctx->nvecs   = nvecs;
  ctx->maxsums = maxsums;
#define TRY(call) \
  do { \
    if ((err = (call))) goto fail; \
  } while (0)
#define TRY_CUDA(call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) { \
      err = FusedCUDAFail(e_, #call, __FILE__, __LINE__); \
      goto fail; \
    } \
  } while (0)
  TRY_CUDA(cudaSetDevice(device));
  TRY_CUDA(cudaGetDeviceProperties(&prop, device));
  {
    /* enough blocks to fill the device, never more than there are rows to share */
    const int need = (n + FUSED_BLOCK - 1) / FUSED_BLOCK;
    const int most = prop.multiProcessorCount * 8;
    ctx->sms       = prop.multiProcessorCount;
    ctx->l2_bytes  = (size_t)prop.l2CacheSize;
    ctx->nblocks   = need < 1 ? 1 : (need < most ? need : most);
  }
  /* programmatic dependent launch is a Hopper feature */
  ctx->loop_pdl = prop.major >= 9;
  TRY_CUDA(cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking));
  snprintf(label, sizeof(label), "%s (%d vectors of %d rows)", what, nvecs, n);
  TRY(FusedMalloc((void **)&ctx->vecs, sizeof(double) * (size_t)nvecs * (size_t)(n > 0 ? n : 1), label));
  /* room for compensated partial sums (FusedDD) too */
  TRY(FusedMalloc((void **)&ctx->partials, sizeof(FusedDD) * (size_t)maxsums * ctx->nblocks, "the reduction buffers"));
  TRY(FusedMalloc((void **)&ctx->sums, sizeof(double) * maxsums, "the reduction buffers"));
  TRY(FusedMalloc((void **)&ctx->ticket, sizeof(unsigned int), "the reduction buffers"));
  TRY(FusedMalloc((void **)&ctx->state, sizeof(FusedLoopState), "the loop state"));
  TRY_CUDA(cudaMemsetAsync(ctx->ticket, 0, sizeof(unsigned int), ctx->stream));
  TRY_CUDA(cudaMemsetAsync(ctx->state, 0, sizeof(FusedLoopState), ctx->stream));
  TRY_CUDA(cudaMemsetAsync(ctx->sums, 0, sizeof(double) * maxsums, ctx->stream));
  TRY_CUDA(cudaMallocHost((void **)&ctx->sums_host, sizeof(double) * maxsums));
  TRY_CUDA(cudaMallocHost((void **)&ctx->coef_host, sizeof(double) * maxsums));
  TRY_CUDA(cudaMallocHost((void **)&ctx->post, sizeof(FusedPost)));
  memset((void *)ctx->post, 0, sizeof(FusedPost));
  TRY_CUDA(cudaMallocHost((void **)&ctx->state_host, sizeof(FusedLoopState)));
  TRY_CUDA(cudaMallocHost((void **)&ctx->loop_sums_host, sizeof(double) * maxsums));
  TRY_CUDA(cudaStreamSynchronize(ctx->stream));
  *out = ctx;
  return FUSED_CUDA_OK;
fail:
  (void)FusedCUDADestroy(&ctx);
  return err;
#undef TRY
#undef TRY_CUDA
}

/* Frees everything, also after a failed create; the first error is kept. */
extern "C" int FusedCUDADestroy(FusedCUDA *pctx)
{
  FusedCUDA ctx = *pctx;
  char      saved[sizeof(fused_last_error)];
  int       err = FUSED_CUDA_OK;

  if (!ctx) return FUSED_CUDA_OK;
  memcpy(saved, fused_last_error, sizeof(saved));
#define FREE(call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess && !err) err = FusedCUDAFail(e_, #call, __FILE__, __LINE__); \
  } while (0)
  if (ctx->loop_exec) FREE(cudaGraphExecDestroy(ctx->loop_exec));
  FREE(cudaFree(ctx->vecs));
  FREE(cudaFree(ctx->partials));
  FREE(cudaFree(ctx->sums));
  FREE(cudaFree(ctx->ticket));
  FREE(cudaFree(ctx->state));
  FREE(cudaFree(ctx->hist));
  if (ctx->hist_host) FREE(cudaFreeHost(ctx->hist_host));
  if (ctx->state_host) FREE(cudaFreeHost(ctx->state_host));
  if (ctx->loop_sums_host) FREE(cudaFreeHost(ctx->loop_sums_host));
  FREE(cudaFree(ctx->loop_partials));
  FREE(cudaFree(ctx->loop_vecs));
  FREE(cudaFree(ctx->method_state));
  if (ctx->method_state_host) FREE(cudaFreeHost(ctx->method_state_host));
  if (ctx->sums_host) FREE(cudaFreeHost(ctx->sums_host));
  if (ctx->coef_host) FREE(cudaFreeHost(ctx->coef_host));
  if (ctx->stage_host) FREE(cudaFreeHost(ctx->stage_host));
  for (int h = 0; h < 2; h++)
    if (ctx->stage_done[h]) FREE(cudaEventDestroy(ctx->stage_done[h]));
  if (ctx->post) FREE(cudaFreeHost(ctx->post));
  if (ctx->joined) FREE(cudaEventDestroy(ctx->joined));
  if (ctx->stream) FREE(cudaStreamDestroy(ctx->stream));
#undef FREE
  free(ctx);
  *pctx = NULL;
  if (!err) memcpy(fused_last_error, saved, sizeof(saved));
  return err;
}

extern "C" double *FusedCUDAVec(FusedCUDA ctx, int i)
{
  return ctx->vecs + (size_t)i * (size_t)ctx->n;
}

/* Host vectors (PETSc's pageable arrays) go through two pinned halves in
   chunks: the host copies chunk k into one half while the device copies
   chunk k-1 out of the other. An upload returns without waiting for the
   device, so that b and the initial guess go in behind each other and the
   start kernel with them (a stream sync each cost about 10 us a solve). */
#define FUSED_STAGE_CHUNK (1 << 18) /* doubles: 2 MB per half */
#define FUSED_STAGE_MIN   (1 << 15) /* doubles: a shorter download goes straight to the caller's array */

/* halves of the workspace's length up to FUSED_STAGE_CHUNK: a small solver
   pins little */
static int EnsureStage(FusedCUDA ctx)
{
  if (ctx->stage_host) return FUSED_CUDA_OK;
  ctx->stage_len = ctx->n < FUSED_STAGE_CHUNK ? (ctx->n > 0 ? ctx->n : 1) : FUSED_STAGE_CHUNK;
  FUSED_CUDA_CHECK(cudaMallocHost((void **)&ctx->stage_host, sizeof(double) * 2 * (size_t)ctx->stage_len));
  for (int h = 0; h < 2; h++) FUSED_CUDA_CHECK(cudaEventCreateWithFlags(&ctx->stage_done[h], cudaEventDisableTiming));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAUpload(FusedCUDA ctx, double *dst, const double *host, int n)
{
  if (n <= 0) return FUSED_CUDA_OK;
  if (int err = EnsureStage(ctx)) return err;
  for (int off = 0; off < n; off += ctx->stage_len) {
    const int    len  = n - off < ctx->stage_len ? n - off : ctx->stage_len;
    const int    h    = (int)(ctx->stage_next++ & 1);
    double      *half = ctx->stage_host + (size_t)h * ctx->stage_len;
    FUSED_CUDA_CHECK(cudaEventSynchronize(ctx->stage_done[h])); /* the last copy out of this half (this call's or an earlier one's) is done */
    memcpy(half, host + off, sizeof(double) * len);
    FUSED_CUDA_CHECK(cudaMemcpyAsync(dst + off, half, sizeof(double) * len, cudaMemcpyHostToDevice, ctx->stream));
    FUSED_CUDA_CHECK(cudaEventRecord(ctx->stage_done[h], ctx->stream));
  }
  /* the caller's array is free to change now; the halves are waited for at their next use */
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDADownload(FusedCUDA ctx, double *host, const double *src, int n)
{
  int nchunks;
  if (n <= 0) return FusedCUDASynchronize(ctx);
  if (n < FUSED_STAGE_MIN) {
    FUSED_CUDA_CHECK(cudaMemcpyAsync(host, src, sizeof(double) * n, cudaMemcpyDeviceToHost, ctx->stream));
    FUSED_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
    return FUSED_CUDA_OK;
  }
  if (int err = EnsureStage(ctx)) return err;
  nchunks = (n + ctx->stage_len - 1) / ctx->stage_len;
  /* the device fills chunk k+1 into one half while the host copies chunk k out of the other */
  for (int k = 0; k <= nchunks; k++) {
    if (k < nchunks) {
      const int off = k * ctx->stage_len, len = n - off < ctx->stage_len ? n - off : ctx->stage_len;
      /* the host copied chunk k-2 out of this half in the last pass; earlier calls' copies are ordered on the stream */
      FUSED_CUDA_CHECK(cudaMemcpyAsync(ctx->stage_host + (size_t)(k & 1) * ctx->stage_len, src + off, sizeof(double) * len, cudaMemcpyDeviceToHost, ctx->stream));
      FUSED_CUDA_CHECK(cudaEventRecord(ctx->stage_done[k & 1], ctx->stream));
    }
    if (k >= 1) {
      const int j = k - 1, off = j * ctx->stage_len, len = n - off < ctx->stage_len ? n - off : ctx->stage_len;
      FUSED_CUDA_CHECK(cudaEventSynchronize(ctx->stage_done[j & 1]));
      memcpy(host + off, ctx->stage_host + (size_t)(j & 1) * ctx->stage_len, sizeof(double) * len);
    }
  }
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAHostRegister(void *host, size_t bytes, int *ok, char *why, size_t whylen)
{
  const cudaError_t err = cudaHostRegister(host, bytes, cudaHostRegisterPortable);

  *ok = err == cudaSuccess;
  if (!*ok) {
    (void)cudaGetLastError(); /* a refusal is no error: the caller stages instead */
    snprintf(why, whylen, "%s", cudaGetErrorString(err));
  }
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAHostUnregister(void *host, int *ok, char *why, size_t whylen)
{
  const cudaError_t err = cudaHostUnregister(host);

  *ok = err == cudaSuccess;
  if (!*ok) {
    (void)cudaGetLastError(); /* the caller says it: the range's memory may be gone already */
    snprintf(why, whylen, "%s", cudaGetErrorString(err));
  }
  return FUSED_CUDA_OK;
}

/* An array whose entries [lo, hi) are registered (FusedCUDAHostRegister()):
   those cross straight from and to it, the rest (under a page at each end)
   through one half of the staging, so that a download waits once */
extern "C" int FusedCUDAUploadSplit(FusedCUDA ctx, double *dst, const double *host, int n, int lo, int hi)
{
  if (int err = EnsureStage(ctx)) return err;
  if (hi <= lo || lo + n - hi > ctx->stage_len) return FusedCUDAUpload(ctx, dst, host, n);
  const int h    = (int)(ctx->stage_next++ & 1);
  double   *half = ctx->stage_host + (size_t)h * ctx->stage_len;
  FUSED_CUDA_CHECK(cudaEventSynchronize(ctx->stage_done[h]));
  memcpy(half, host, sizeof(double) * lo);
  memcpy(half + lo, host + hi, sizeof(double) * (n - hi));
  if (lo > 0) FUSED_CUDA_CHECK(cudaMemcpyAsync(dst, half, sizeof(double) * lo, cudaMemcpyHostToDevice, ctx->stream));
  FUSED_CUDA_CHECK(cudaMemcpyAsync(dst + lo, host + lo, sizeof(double) * (hi - lo), cudaMemcpyHostToDevice, ctx->stream));
  if (n > hi) FUSED_CUDA_CHECK(cudaMemcpyAsync(dst + hi, half + lo, sizeof(double) * (n - hi), cudaMemcpyHostToDevice, ctx->stream));
  FUSED_CUDA_CHECK(cudaEventRecord(ctx->stage_done[h], ctx->stream));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDADownloadSplit(FusedCUDA ctx, double *host, const double *src, int n, int lo, int hi)
{
  if (int err = EnsureStage(ctx)) return err;
  if (hi <= lo || lo + n - hi > ctx->stage_len) return FusedCUDADownload(ctx, host, src, n);
  /* the half's earlier copies to the device come first on the stream */
  double *half = ctx->stage_host + (size_t)(ctx->stage_next++ & 1) * ctx->stage_len;
  FUSED_CUDA_CHECK(cudaMemcpyAsync(host + lo, src + lo, sizeof(double) * (hi - lo), cudaMemcpyDeviceToHost, ctx->stream));
  if (lo > 0) FUSED_CUDA_CHECK(cudaMemcpyAsync(half, src, sizeof(double) * lo, cudaMemcpyDeviceToHost, ctx->stream));
  if (n > hi) FUSED_CUDA_CHECK(cudaMemcpyAsync(half + lo, src + hi, sizeof(double) * (n - hi), cudaMemcpyDeviceToHost, ctx->stream));
  FUSED_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  memcpy(host, half, sizeof(double) * lo);
  memcpy(host + hi, half + lo, sizeof(double) * (n - hi));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAZero(FusedCUDA ctx, double *dst, int n)
{
  if (n > 0) FUSED_CUDA_CHECK(cudaMemsetAsync(dst, 0, sizeof(double) * n, ctx->stream));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDACopy(FusedCUDA ctx, double *dst, const double *src, int n)
{
  if (n > 0 && dst != src) FUSED_CUDA_CHECK(cudaMemcpyAsync(dst, src, sizeof(double) * n, cudaMemcpyDefault, ctx->stream));
  return FUSED_CUDA_OK;
}

__global__ static void StrideUnitKernel(double *dst, int n, int stride, int k)
{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) dst[i] = i % stride == k ? 1.0 : 0.0;
}

__global__ static void StrideScatterKernel(double *dst, const double *src, int n, int stride, int k)
{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) dst[(size_t)i * stride + k] = src[i];
}

extern "C" int FusedCUDAStrideUnit(FusedCUDA ctx, double *dst, int n, int stride, int k)
{
  if (n <= 0) return FUSED_CUDA_OK;
  if (stride < 1 || k < 0 || k >= stride) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "place %d of a stride of %d", k, stride);
  StrideUnitKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(dst, n, stride, k);
  FUSED_CUDA_CHECK_LAUNCH("StrideUnitKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAStrideScatter(FusedCUDA ctx, double *dst, const double *src, int n, int stride, int k)
{
  if (n <= 0) return FUSED_CUDA_OK;
  if (stride < 1 || k < 0 || k >= stride) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "place %d of a stride of %d", k, stride);
  StrideScatterKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(dst, src, n, stride, k);
  FUSED_CUDA_CHECK_LAUNCH("StrideScatterKernel");
  return FUSED_CUDA_OK;
}

/* The workspace's own reductions, for both kinds of sums (T: double or
   FusedDD, the compensated ones) */
template <int NS, class T>
__global__ static void NullSpaceSumsKernel(int n, const double *x, FusedNullSpace ns, double *partials, double *sums, unsigned int *ticket)
{
  T acc[NS] = {};
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double xi = x[i];
#pragma unroll
    for (int k = 0; k < NS; k++)
      if (k < ns.m) FusedAddProduct(acc[k], xi, FusedNullSpaceBasis(ns, k, i));
  }
  FusedReduce<NS>(acc, partials, sums, ticket, 0);
}

template <class T>
__global__ static void NullSpaceRemoveKernel(int n, double *x, FusedNullSpace ns, double *partials, double *sums, unsigned int *ticket)
{
  T acc[1] = {};
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const double xi = FusedLessNullSpace<FUSED_NULLSPACE_MAX>(ns, ns.coef, x[i], i);
    x[i]            = xi;
    FusedAddProduct(acc[0], xi, xi);
  }
  FusedReduce<1>(acc, partials, sums, ticket, 0);
}

extern "C" int FusedCUDANullSpaceSums(FusedCUDA ctx, const double *x, const FusedNullSpace *ns)
{
  if (int err = FusedCheckNullSpace(ctx, ns, FUSED_NULLSPACE_MAX)) return err;
  auto kernel = ctx->compensated ? NullSpaceSumsKernel<FUSED_NULLSPACE_MAX, FusedDD> : NullSpaceSumsKernel<FUSED_NULLSPACE_MAX, double>;
  kernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, x, *ns, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("NullSpaceSumsKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDANullSpaceRemove(FusedCUDA ctx, double *x, const FusedNullSpace *ns)
{
  if (int err = FusedCheckNullSpace(ctx, ns, FUSED_NULLSPACE_MAX)) return err;
  auto kernel = ctx->compensated ? NullSpaceRemoveKernel<FusedDD> : NullSpaceRemoveKernel<double>;
  kernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, x, *ns, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("NullSpaceRemoveKernel");
  return FUSED_CUDA_OK;
}

static int EnsureJoinEvent(FusedCUDA ctx)
{
  if (!ctx->joined) FUSED_CUDA_CHECK(cudaEventCreateWithFlags(&ctx->joined, cudaEventDisableTiming));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAStreamWaitFor(FusedCUDA ctx, void *other)
{
  if (int err = EnsureJoinEvent(ctx)) return err;
  FUSED_CUDA_CHECK(cudaEventRecord(ctx->joined, (cudaStream_t)other));
  FUSED_CUDA_CHECK(cudaStreamWaitEvent(ctx->stream, ctx->joined, 0));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAStreamHandTo(FusedCUDA ctx, void *other)
{
  if (int err = EnsureJoinEvent(ctx)) return err;
  FUSED_CUDA_CHECK(cudaEventRecord(ctx->joined, ctx->stream));
  FUSED_CUDA_CHECK(cudaStreamWaitEvent((cudaStream_t)other, ctx->joined, 0));
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAGetSums(FusedCUDA ctx, int first, int count, double *host)
{
  if (first < 0 || first + count > ctx->maxsums) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "sums %d..%d out of range (%d)", first, first + count, ctx->maxsums);
  FUSED_CUDA_CHECK(cudaMemcpyAsync(ctx->sums_host, ctx->sums + first, sizeof(double) * count, cudaMemcpyDeviceToHost, ctx->stream));
  FUSED_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  memcpy(host, ctx->sums_host, sizeof(double) * count);
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAGetPostedSums(FusedCUDA ctx, int count, double *host)
{
  volatile FusedPost *post = ctx->post;

  if (count < 0 || count > FUSED_POST_SUMS) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "%d posted sums asked for, at most %d are posted", count, FUSED_POST_SUMS);
  for (unsigned long spins = 1; post->seq != ctx->post_seq; spins++) {
    if (spins % 4096) continue;
    /* now and then: has the stream failed, or ended without posting? */
    cudaError_t e = cudaStreamQuery(ctx->stream);
    if (e == cudaErrorNotReady) continue;
    if (e != cudaSuccess) return FusedCUDAFail(e, "cudaStreamQuery (waiting for posted sums)", __FILE__, __LINE__);
    if (post->seq != ctx->post_seq) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the device finished without posting sums %u", ctx->post_seq);
  }
  __sync_synchronize(); /* the sums are read after the number */
  for (int k = 0; k < count; k++) host[k] = post->sums[k];
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDASetCompensated(FusedCUDA ctx, int on)
{
  ctx->compensated = on ? 1 : 0;
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDASynchronize(FusedCUDA ctx)
{
  FUSED_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  return FUSED_CUDA_OK;
}

int FusedCUDAEnsureHistory(FusedCUDA ctx, int len)
{
  if (len <= ctx->hist_len) return FUSED_CUDA_OK;
  FUSED_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  FUSED_CUDA_CHECK(cudaFree(ctx->hist));
  if (ctx->hist_host) FUSED_CUDA_CHECK(cudaFreeHost(ctx->hist_host));
  ctx->hist            = NULL;
  ctx->hist_host       = NULL;
  ctx->hist_len        = 0;
  ctx->hist_back_first = 0;
  ctx->hist_back_last  = -1;
  if (int err = FusedMalloc((void **)&ctx->hist, sizeof(double) * (size_t)len, "the residual history of the device loop")) return err;
  FUSED_CUDA_CHECK(cudaMallocHost((void **)&ctx->hist_host, sizeof(double) * (size_t)len));
  ctx->hist_len = len;
  /* the graph holds the old pointer */
  if (ctx->loop_exec) FUSED_CUDA_CHECK(cudaGraphExecDestroy(ctx->loop_exec));
  ctx->loop_exec     = NULL;
  ctx->loop_args_len = 0;
  return FUSED_CUDA_OK;
}

int FusedCUDAEnsureMethodState(FusedCUDA ctx, size_t bytes)
{
  if (bytes <= ctx->method_state_len) return FUSED_CUDA_OK;
  FUSED_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  FUSED_CUDA_CHECK(cudaFree(ctx->method_state));
  if (ctx->method_state_host) FUSED_CUDA_CHECK(cudaFreeHost(ctx->method_state_host));
  ctx->method_state      = NULL;
  ctx->method_state_host = NULL;
  ctx->method_state_len  = 0;
  if (int err = FusedMalloc(&ctx->method_state, bytes, "the device loop's state")) return err;
  FUSED_CUDA_CHECK(cudaMallocHost(&ctx->method_state_host, bytes));
  memset(ctx->method_state_host, 0, bytes);
  FUSED_CUDA_CHECK(cudaMemsetAsync(ctx->method_state, 0, bytes, ctx->stream));
  ctx->method_state_len = bytes;
  /* the graph holds the old pointer */
  if (ctx->loop_exec) FUSED_CUDA_CHECK(cudaGraphExecDestroy(ctx->loop_exec));
  ctx->loop_exec     = NULL;
  ctx->loop_args_len = 0;
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAGetHistory(FusedCUDA ctx, int first, int count, double *host)
{
  if (count <= 0) return FUSED_CUDA_OK;
  if (first < 0 || first + count > ctx->hist_len) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "history %d..%d out of range (%d)", first, first + count, ctx->hist_len);
  if (first >= ctx->hist_back_first && first + count - 1 <= ctx->hist_back_last) {
    memcpy(host, ctx->hist_host + first, sizeof(double) * count); /* it came back with the loop */
    return FUSED_CUDA_OK;
  }
  FUSED_CUDA_CHECK(cudaMemcpyAsync(host, ctx->hist + first, sizeof(double) * count, cudaMemcpyDeviceToHost, ctx->stream));
  FUSED_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  return FUSED_CUDA_OK;
}

template <class T>
__global__ static void FusedRhsNormKernel(int n, const double *b, const double *d, int normtype, double *partials, double *sums, unsigned int *ticket, int slot)
{
  T acc[1] = {};
  FUSED_GRID_LOOP(i, n)
  {
    const double bi = b[i];
    FusedAddRhsNormTerm(acc[0], normtype, bi, d ? d[i] * bi : bi);
  }
  FusedReduce<1>(acc, partials, sums, ticket, slot);
}

extern "C" int FusedCUDARhsNorm(FusedCUDA ctx, const double *b, const double *d, int normtype, int slot)
{
  if (slot < 0 || slot >= ctx->maxsums) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the right-hand side's norm to sum %d, the workspace holds %d", slot, ctx->maxsums);
  if (normtype != FUSED_NORM_PRECONDITIONED && normtype != FUSED_NORM_UNPRECONDITIONED && normtype != FUSED_NORM_NATURAL) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the right-hand side's norm in norm type %d", normtype);
  auto kernel = ctx->compensated ? FusedRhsNormKernel<FusedDD> : FusedRhsNormKernel<double>;
  kernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, b, d, normtype, ctx->partials, ctx->sums, ctx->ticket, slot);
  FUSED_CUDA_CHECK_LAUNCH("FusedRhsNormKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedCUDAGetLoopSums(FusedCUDA ctx, int first, int count, double *host)
{
  if (first < 0 || first + count > ctx->maxsums) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "sums %d..%d out of range (%d)", first, first + count, ctx->maxsums);
  memcpy(host, ctx->loop_sums_host + first, sizeof(double) * count);
  return FUSED_CUDA_OK;
}

/* What both device loops do around their launch: the state in (first
   iteration, tolerances), and after the loop the iteration it stopped at. */
static int FusedLoopStateIn(FusedCUDA ctx, const FusedConvergence *conv, int it0)
{
  FusedLoopMirror *m = &ctx->state_host->mirror;

  /* the mirror is free: the last loop's hand-back was waited for */
  ctx->state_host->it   = it0;
  ctx->state_host->stop = 0;
  ctx->state_host->conv = *conv;
  m->state              = ctx->state_host;
  m->sums               = ctx->loop_sums_host;
  m->hist               = ctx->hist_host;
  m->method             = (unsigned char *)ctx->method_state_host;
  m->sums_dev           = ctx->sums;
  m->hist_dev           = ctx->hist;
  m->method_dev         = (const unsigned char *)ctx->method_state;
  m->nsums              = ctx->maxsums;
  m->first              = conv->judge_first ? 0 : it0 + 1; /* the first new entry of the history */
  m->hist_len           = ctx->hist_len;
  m->method_len         = ctx->method_state_len;
  FUSED_CUDA_CHECK(cudaMemcpyAsync(ctx->state, ctx->state_host, sizeof(FusedLoopState), cudaMemcpyHostToDevice, ctx->stream));
  return FUSED_CUDA_OK;
}

/* After a loop, what the host reads next goes to the pinned mirrors in one
   small kernel, so that one stream sync brings it all: the state, every
   sum, the history from first on (the loop knows where it stopped, the host
   not yet), and a method's own state. Separate copies cost a sync each. */
__global__ static void FusedLoopHandBackKernel(const FusedLoopState *state)
{
  FusedLoopMirrorCopy(state, threadIdx.x, blockDim.x);
}

/* handed_back: the loop's kernel handed its results back itself
   (FusedLoopHandBackInKernel()) */
static int FusedLoopStateOut(FusedCUDA ctx, int handed_back, int *its)
{
  ctx->hist_back_first = 0;
  ctx->hist_back_last  = -1;
  if (!handed_back) {
    FusedLoopHandBackKernel<<<1, FUSED_BLOCK, 0, ctx->stream>>>(ctx->state);
    FUSED_CUDA_CHECK_LAUNCH("FusedLoopHandBackKernel");
  }
  FUSED_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  *its                 = ctx->state_host->it;
  ctx->hist_back_first = ctx->state_host->mirror.first;
  ctx->hist_back_last  = *its < ctx->hist_len - 1 ? *its : ctx->hist_len - 1;
  return FUSED_CUDA_OK;
}

int FusedCUDAResidentGrid(FusedCUDA ctx, const void *kernel, size_t smem, int *grid)
{
  int per_sm = 0;

  FUSED_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, FUSED_BLOCK, smem));
  *grid = per_sm * ctx->sms;
  if (*grid > ctx->nblocks) *grid = ctx->nblocks;
  if (*grid < 1) *grid = 1;
  return FUSED_CUDA_OK;
}

/* A while-loop graph: its body is captured from build(), whose last kernel
   clears the condition when the host must look. The graph is kept and
   relaunched while the kernel arguments are the same; what changes between
   solves (tolerances, the first iteration) lives in device memory. */
int FusedCUDARunLoop(FusedCUDA ctx, const void *args, size_t args_len, int (*build)(FusedCUDA, const void *, cudaGraphConditionalHandle), const FusedConvergence *conv, int it0, const FusedLoopPrologue *prologue, int *its)
{
  if (args_len > sizeof(ctx->loop_args)) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "loop arguments of %zu bytes exceed %zu", args_len, sizeof(ctx->loop_args));
  if (int err = FusedCUDAEnsureHistory(ctx, conv->max_it + 1)) return err;
  if (!ctx->loop_exec || ctx->loop_build != build || ctx->loop_args_len != args_len || memcmp(ctx->loop_args, args, args_len)) {
    cudaGraph_t                graph = NULL, body;
    cudaGraphConditionalHandle handle;
    /* a union with no default constructor: zeroed storage instead */
    alignas(cudaGraphNodeParams) unsigned char params_storage[sizeof(cudaGraphNodeParams)] = {0};
    cudaGraphNodeParams       &params = *reinterpret_cast<cudaGraphNodeParams *>(params_storage);
    cudaGraphNode_t            node;
    int                        err = FUSED_CUDA_OK;

    if (ctx->loop_exec) FUSED_CUDA_CHECK(cudaGraphExecDestroy(ctx->loop_exec));
    ctx->loop_exec     = NULL;
    ctx->loop_args_len = 0;
    FUSED_CUDA_CHECK(cudaGraphCreate(&graph, 0));
    do {
      cudaError_t e;
      if ((e = cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault)) != cudaSuccess) {
        err = FusedCUDAFail(e, "cudaGraphConditionalHandleCreate", __FILE__, __LINE__);
        break;
      }
      params.type               = cudaGraphNodeTypeConditional;
      params.conditional.handle = handle;
      params.conditional.type   = cudaGraphCondTypeWhile;
      params.conditional.size   = 1;
      if ((e = cudaGraphAddNode(&node, graph, NULL, NULL, 0, &params)) != cudaSuccess) {
        err = FusedCUDAFail(e, "cudaGraphAddNode (conditional while)", __FILE__, __LINE__);
        break;
      }
      body = params.conditional.phGraph_out[0];
      if ((e = cudaStreamBeginCaptureToGraph(ctx->stream, body, NULL, NULL, 0, cudaStreamCaptureModeThreadLocal)) != cudaSuccess) {
        err = FusedCUDAFail(e, "cudaStreamBeginCaptureToGraph", __FILE__, __LINE__);
        break;
      }
      for (int u = 0; u < FUSED_LOOP_UNROLL && !err; u++) err = build(ctx, args, handle);
      {
        cudaGraph_t captured = NULL;
        e = cudaStreamEndCapture(ctx->stream, &captured);
        if (!err && e != cudaSuccess) err = FusedCUDAFail(e, "cudaStreamEndCapture", __FILE__, __LINE__);
      }
      if (err) break;
      if ((e = cudaGraphInstantiate(&ctx->loop_exec, graph, 0)) != cudaSuccess) {
        err            = FusedCUDAFail(e, "cudaGraphInstantiate", __FILE__, __LINE__);
        ctx->loop_exec = NULL;
        break;
      }
    } while (0);
    (void)cudaGraphDestroy(graph);
    if (err) return err;
    memcpy(ctx->loop_args, args, args_len);
    ctx->loop_args_len = args_len;
    ctx->loop_build    = build;
  }
  if (int err = FusedLoopStateIn(ctx, conv, it0)) return err;
  if (prologue)
    if (int err = prologue->queue(ctx, prologue->arg)) return err;
  FUSED_CUDA_CHECK(cudaGraphLaunch(ctx->loop_exec, ctx->stream));
  return FusedLoopStateOut(ctx, 0, its);
}

/* Device-to-device copy bandwidth (bytes read plus bytes written per second)
   of a buffer of 'bytes', the best of 'reps' copies: the floor's yardstick. */
extern "C" int FusedCUDACopyBandwidth(int device, size_t bytes, int reps, double *bytes_per_s)
{
  void       *a = NULL, *b = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  float       best = 1e30f;
  int         err  = FUSED_CUDA_OK;

  *bytes_per_s = 0.0;
  FUSED_CUDA_CHECK(cudaSetDevice(device));
  if ((err = FusedMalloc(&a, bytes, "the bandwidth probe")) || (err = FusedMalloc(&b, bytes, "the bandwidth probe"))) {
    (void)cudaFree(a);
    return err;
  }
  do {
    cudaError_t e;
    if ((e = cudaEventCreate(&e0)) != cudaSuccess || (e = cudaEventCreate(&e1)) != cudaSuccess || (e = cudaMemset(a, 0, bytes)) != cudaSuccess) {
      err = FusedCUDAFail(e, "bandwidth probe setup", __FILE__, __LINE__);
      break;
    }
    for (int r = 0; r < reps + 1 && !err; r++) { /* the first copy warms up */
      float ms = 0.0f;
      if ((e = cudaEventRecord(e0)) != cudaSuccess || (e = cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice)) != cudaSuccess || (e = cudaEventRecord(e1)) != cudaSuccess || (e = cudaEventSynchronize(e1)) != cudaSuccess || (e = cudaEventElapsedTime(&ms, e0, e1)) != cudaSuccess) err = FusedCUDAFail(e, "bandwidth probe copy", __FILE__, __LINE__);
      else if (r > 0 && ms < best) best = ms;
    }
  } while (0);
  if (e0) (void)cudaEventDestroy(e0);
  if (e1) (void)cudaEventDestroy(e1);
  (void)cudaFree(a);
  (void)cudaFree(b);
  if (!err) *bytes_per_s = 2.0 * (double)bytes / (best * 1e-3);
  return err;
}

/* *buf of at least len doubles (kept between solves; the old one freed once
   the stream is done with it) */
static int FusedGrowBuffer(FusedCUDA ctx, double **buf, size_t *buf_len, size_t len, const char *what)
{
  if (len <= *buf_len) return FUSED_CUDA_OK;
  FUSED_CUDA_CHECK(cudaStreamSynchronize(ctx->stream));
  FUSED_CUDA_CHECK(cudaFree(*buf));
  *buf     = NULL;
  *buf_len = 0;
  if (int err = FusedMalloc((void **)buf, sizeof(double) * len, what)) return err;
  *buf_len = len;
  return FUSED_CUDA_OK;
}

int FusedCUDAPrepareLoop(FusedCUDA ctx, int max_it, int nspare)
{
  if (max_it < 0 || max_it > FUSED_LOOP_MAX_IT) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "a device loop of %d iterations: at most %d", max_it, FUSED_LOOP_MAX_IT);
  if (int err = FusedCUDAEnsureHistory(ctx, max_it + 1)) return err;
  if (nspare > 0) {
    double   *spare;
    /* the most blocks FusedCUDARunSingleKernel() can launch, whatever the
       lanes a row: those resident at once, of FUSED_BLOCK threads or more,
       at most 2048 threads per multiprocessor */
    const int grid = ctx->sms * (2048 / FUSED_BLOCK);
    if (int err = FusedCUDAEnsureLoopVectors(ctx, nspare, &spare)) return err;
    if (int err = FusedGrowBuffer(ctx, &ctx->loop_partials, &ctx->loop_partials_len, (size_t)2 * ctx->maxsums * grid * (ctx->compensated ? 2 : 1), "the partial sums of the single-kernel loop")) return err;
  }
  return FUSED_CUDA_OK;
}

int FusedCUDAEnsureLoopVectors(FusedCUDA ctx, int count, double **vecs)
{
  if (int err = FusedGrowBuffer(ctx, &ctx->loop_vecs, &ctx->loop_vecs_len, (size_t)count * ctx->n, "the second copies of the vectors of the single-kernel loop")) return err;
  *vecs = ctx->loop_vecs;
  return FUSED_CUDA_OK;
}

/* One kernel's launch facts on one device (FusedCUDAKernelFacts()): the
   occupancy of the last block size and shared memory asked, which the
   solves of one workspace repeat */
typedef struct {
  int         device;
  const void *kernel;
  size_t      static_smem, allowed_smem;
  int         block, per_sm; /* per_sm < 0: not asked yet */
  size_t      smem;
} FusedKernelFactsEntry;

#define FUSED_KERNEL_FACTS_MAX 64
static FusedKernelFactsEntry fused_kernel_facts[FUSED_KERNEL_FACTS_MAX];
static int                   fused_kernel_facts_n;

/* the entry of (ctx's device, kernel), made where there is none; where
   the table is full, *spare, made afresh, so that the callers ask CUDA
   every time */
static int FusedKernelFactsOf(FusedCUDA ctx, const void *kernel, FusedKernelFactsEntry *spare, FusedKernelFactsEntry **entry)
{
  cudaFuncAttributes attr;

  for (int k = 0; k < fused_kernel_facts_n; k++)
    if (fused_kernel_facts[k].device == ctx->device && fused_kernel_facts[k].kernel == kernel) {
      *entry = &fused_kernel_facts[k];
      return FUSED_CUDA_OK;
    }
  FUSED_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  *entry  = fused_kernel_facts_n < FUSED_KERNEL_FACTS_MAX ? &fused_kernel_facts[fused_kernel_facts_n++] : spare;
  **entry = {ctx->device, kernel, attr.sharedSizeBytes, 0, 0, -1, 0};
  return FUSED_CUDA_OK;
}

int FusedCUDAKernelFacts(FusedCUDA ctx, const void *kernel, size_t *static_smem, size_t *optin, int block, size_t smem, int *per_sm)
{
  static int             optin_device = -1, optin_bytes = 0;
  FusedKernelFactsEntry  spare, *e;

  if (int err = FusedKernelFactsOf(ctx, kernel, &spare, &e)) return err;
  if (static_smem) *static_smem = e->static_smem;
  if (optin) {
    if (optin_device != ctx->device) {
      FUSED_CUDA_CHECK(cudaDeviceGetAttribute(&optin_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx->device));
      optin_device = ctx->device;
    }
    *optin = (size_t)optin_bytes;
  }
  if (per_sm) {
    if (e->per_sm < 0 || e->block != block || e->smem != smem) {
      FUSED_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&e->per_sm, kernel, block, smem));
      e->block = block;
      e->smem  = smem;
    }
    *per_sm = e->per_sm;
  }
  return FUSED_CUDA_OK;
}

int FusedCUDAAllowSharedMemory(FusedCUDA ctx, const void *kernel, size_t smem)
{
  FusedKernelFactsEntry spare, *e;

  if (int err = FusedKernelFactsOf(ctx, kernel, &spare, &e)) return err;
  if (smem <= e->allowed_smem) return FUSED_CUDA_OK;
  /* only ever raised: a smaller limit would fail another workspace's launch of the same kernel */
  FUSED_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  e->allowed_smem = smem;
  return FUSED_CUDA_OK;
}

int FusedCUDARunSingleKernel(FusedCUDA ctx, const void *kernel, int block, int threads, int nsums, size_t smem, const FusedConvergence *conv, int it0, const FusedLoopPrologue *prologue, void **kargs, double **partials, int *its)
{
  int    per_sm = 0, need = (int)(((long long)threads + block - 1) / block), most, grid;
  size_t len;

  if (int err = FusedCUDAEnsureHistory(ctx, conv->max_it + 1)) return err;
  if (int err = FusedCUDAKernelFacts(ctx, kernel, NULL, NULL, block, smem, &per_sm)) return err;
  /* every block sums all partials each iteration: keep the grid no larger than needed */
  most = per_sm * ctx->sms;
  grid = need < 1 ? 1 : (need < most ? need : most);
  if (grid < 1) return FusedCUDASetError(FUSED_CUDA_ERR_LIB, "the single-kernel loop does not fit on the device");
  len = (size_t)2 * nsums * grid * (ctx->compensated ? 2 : 1); /* a compensated sum's partial is two doubles */
  if (int err = FusedGrowBuffer(ctx, &ctx->loop_partials, &ctx->loop_partials_len, len, "the partial sums of the single-kernel loop")) return err;
  *partials = ctx->loop_partials;
  if (int err = FusedLoopStateIn(ctx, conv, it0)) return err;
  if (prologue)
    if (int err = prologue->queue(ctx, prologue->arg)) return err;
  FUSED_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, grid, block, kargs, smem, ctx->stream));
  return FusedLoopStateOut(ctx, 1, its);
}

extern "C" int FusedCUDALoadCommonKernels(int device)
{
  if (int err = FusedCUDAWarmCooperativeLaunch(device)) return err;
  if (int err = FusedCUDALoadModuleOf(device, (const void *)FusedRhsNormKernel<double>)) return err;
  if (int err = FusedDevMatLoadKernels(device)) return err;
  return FusedHaloLoadKernels(device);
}

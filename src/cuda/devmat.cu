/* The operator on the device, in the storage src/cuda/devformat.cu builds
   there from the CSR arrays (DIA, ELL, HYB or CSR), with the off-process
   block and the halo's buffers on several ranks. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/fusedcuda_impl.cuh"

/* A device copy of bytes of host or device memory, counted in *total */
static int DevUpload(void **dst, const void *src, size_t bytes, size_t *total)
{
  if (int err = FusedMalloc(dst, bytes, "the operator")) return err;
  *total += bytes;
  if (bytes) FUSED_CUDA_CHECK(cudaMemcpy(*dst, src, bytes, cudaMemcpyDefault));
  return FUSED_CUDA_OK;
}

/* The rows that read ghost values, and the start of each one's entries */
static int UploadBoundaryRows(FusedDevMat A, int n, const int *growptr)
{
  int *brow, *bptr, nb = 0, err;

  for (int i = 0; i < n; i++) nb += growptr[i + 1] > growptr[i];
  brow = (int *)malloc(sizeof(int) * (size_t)(nb + 1));
  bptr = (int *)malloc(sizeof(int) * (size_t)(nb + 1));
  if (!brow || !bptr) {
    free(brow);
    free(bptr);
    return FusedCUDASetError(FUSED_CUDA_ERR_MEM, "host out of memory for the list of %d boundary rows", nb);
  }
  nb = 0;
  for (int i = 0; i < n; i++)
    if (growptr[i + 1] > growptr[i]) {
      brow[nb]   = i;
      bptr[nb++] = growptr[i];
    }
  bptr[nb]  = growptr[n];
  A->nbound = nb;
  err       = DevUpload((void **)&A->brow, brow, sizeof(int) * (size_t)nb, &A->bytes);
  if (!err) err = DevUpload((void **)&A->bptr, bptr, sizeof(int) * (size_t)(nb + 1), &A->bytes);
  free(brow);
  free(bptr);
  return err;
}

/* The off-process block's long rows (its row starts are on the host too) */
static int BuildGhostLongRows(FusedDevMat A, int n, const int *growptr)
{
  const int limit = FusedLongRowLimit((size_t)n, (size_t)growptr[n]);
  int       nlong = 0;
  for (int i = 0; i < n; i++) nlong += growptr[i + 1] - growptr[i] > limit;
  if (int err = FusedLongRowsBuild(n, A->growptr, limit, nlong, &A->glong, &A->bytes)) return err;
  A->view.glimit = A->glong.limit;
  A->view.gslot  = A->glong.slot;
  A->view.gsum   = A->glong.sum;
  return FUSED_CUDA_OK;
}

/* The local block's storage into A and its view */
static void AdoptStorage(FusedDevMat A, FusedDevStorage *S)
{
  A->view.format  = S->layout.format;
  A->csr_bytes    = S->layout.csr_bytes;
  A->tail         = S->layout.format == FUSED_FORMAT_CSR || S->layout.format == FUSED_FORMAT_HYB ? S->layout.tail : 0;
  A->offsets      = S->d_offsets;
  A->dval         = S->dval;
  A->ecol         = S->ecol;
  A->eval         = S->eval;
  A->rowptr       = S->rowptr;
  A->col          = S->col;
  A->val          = S->val;
  A->view.ndiag   = S->layout.format == FUSED_FORMAT_DIA ? S->ndiag : 0;
  A->view.offsets = S->d_offsets;
  A->view.dval    = S->dval;
  for (int k = 0; k < FUSED_DIA_INLINE; k++) A->view.off[k] = k < A->view.ndiag ? S->offsets[k] : 0;
  A->view.K      = S->layout.format == FUSED_FORMAT_ELL || S->layout.format == FUSED_FORMAT_HYB ? S->layout.K : 0;
  A->view.ecol   = S->ecol;
  A->view.eval   = S->eval;
  A->view.rowptr = S->rowptr;
  A->view.col    = S->col;
  A->view.val    = S->val;
  A->bytes += S->layout.bytes + (S->layout.format == FUSED_FORMAT_DIA ? sizeof(int) * S->ndiag : 0);
  A->symmetric = S->symmetric && A->nghost == 0;
}

static int DevMatCreate(int device, int n, const int *rowptr, const int *col, const double *val, int nghost, const int *growptr, const int *gcol, const double *gval, int format, int on_device, int check_symmetry, FusedDevMat *out)
{
  FusedDevMat     A;
  FusedDevStorage S;
  int             err = FUSED_CUDA_OK, *host_growptr = NULL;

  *out = NULL;
  FUSED_CUDA_CHECK(cudaSetDevice(device)); /* the rank's device, also before its workspace exists */
  if (format < FUSED_FORMAT_AUTO || format > FUSED_FORMAT_HYB) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "unknown storage format %d", format);
  A = (FusedDevMat)calloc(1, sizeof(*A));
  if (!A) return FusedCUDASetError(FUSED_CUDA_ERR_MEM, "host out of memory for the device operator");
  A->device            = device;
  A->ncols             = n;
  A->view.n            = n;
  A->nghost            = nghost;
  A->check_symmetry    = check_symmetry && nghost == 0;
  A->lrows.limit       = INT_MAX;
  A->glong.limit       = INT_MAX;
  A->view.lrows        = A->lrows;
  A->view.glimit       = INT_MAX;
  do {
    if ((err = FusedDevStorageBuild(n, rowptr, col, val, format, on_device, A->check_symmetry, &S))) break;
    AdoptStorage(A, &S);
    if (S.layout.nlong > 0) {
      if ((err = FusedLongRowsBuild(n, A->view.rowptr, S.layout.long_limit, S.layout.nlong, &A->lrows, &A->bytes))) break;
      A->view.lrows = A->lrows;
    }
    if (growptr && nghost > 0) {
      size_t gnnz;
      if (on_device) { /* the boundary rows are listed on the host */
        host_growptr = (int *)malloc(sizeof(int) * ((size_t)n + 1));
        if (!host_growptr) {
          err = FusedCUDASetError(FUSED_CUDA_ERR_MEM, "host out of memory for %d row starts", n + 1);
          break;
        }
        const cudaError_t e = cudaMemcpy(host_growptr, growptr, sizeof(int) * ((size_t)n + 1), cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
          err = FusedCUDAFail(e, "cudaMemcpy (the ghost block's row starts)", __FILE__, __LINE__);
          break;
        }
      }
      gnnz    = (size_t)(on_device ? host_growptr : growptr)[n];
      A->gnnz = gnnz;
      if ((err = DevUpload((void **)&A->growptr, growptr, sizeof(int) * (n + 1), &A->bytes))) break;
      if ((err = DevUpload((void **)&A->gcol, gcol, sizeof(int) * gnnz, &A->bytes))) break;
      if ((err = DevUpload((void **)&A->gval, gval, sizeof(double) * gnnz, &A->bytes))) break;
      if ((err = FusedMalloc((void **)&A->ghost, sizeof(double) * nghost, "the operator's ghost values"))) break;
      A->bytes += sizeof(double) * nghost;
      A->view.growptr = A->growptr;
      A->view.gcol    = A->gcol;
      A->view.gval    = A->gval;
      A->view.ghost   = A->ghost;
      if ((err = UploadBoundaryRows(A, n, on_device ? host_growptr : growptr))) break;
      if ((err = BuildGhostLongRows(A, n, on_device ? host_growptr : growptr))) break;
    }
  } while (0);
  free(host_growptr);
  if (err) {
    (void)FusedDevMatDestroy(&A);
    return err;
  }
  *out = A;
  return FUSED_CUDA_OK;
}

extern "C" int FusedDevMatCreate(int device, int n, const int *rowptr, const int *col, const double *val, int nghost, const int *growptr, const int *gcol, const double *gval, int format, int check_symmetry, FusedDevMat *out)
{
  return DevMatCreate(device, n, rowptr, col, val, nghost, growptr, gcol, gval, format, 0, check_symmetry, out);
}

extern "C" int FusedDevMatCreateFromDevice(int device, int n, const int *rowptr, const int *col, const double *val, int nghost, const int *growptr, const int *gcol, const double *gval, int format, int check_symmetry, FusedDevMat *out)
{
  return DevMatCreate(device, n, rowptr, col, val, nghost, growptr, gcol, gval, format, 1, check_symmetry, out);
}

extern "C" int FusedDevMatRefreshFromDevice(FusedDevMat A, const int *rowptr, const int *col, const double *val, const double *gval)
{
  FUSED_CUDA_CHECK(cudaSetDevice(A->device));
  int symmetric;
  if (int err = FusedDevStorageRefill(&A->view, A->tail, rowptr, col, val, A->check_symmetry, &symmetric)) return err;
  A->symmetric = symmetric && A->nghost == 0;
  if (A->gval && A->gnnz) FUSED_CUDA_CHECK(cudaMemcpy(A->gval, gval, sizeof(double) * A->gnnz, cudaMemcpyDeviceToDevice));
  return FUSED_CUDA_OK;
}

/* teardown goes on after a failure and reports the first one */
#define KEEP_FIRST_ERROR(call, what) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess && !err) err = FusedCUDAFail(e_, what, __FILE__, __LINE__); \
  } while (0)

extern "C" int FusedDevMatDestroy(FusedDevMat *pA)
{
  FusedDevMat A = *pA;
  int         err = FUSED_CUDA_OK;
  void       *bufs[17];

  if (!A) return FUSED_CUDA_OK;
  bufs[0] = A->rowptr;
  bufs[1] = A->col;
  bufs[2] = A->val;
  bufs[3] = A->offsets;
  bufs[4] = A->dval;
  bufs[5] = A->growptr;
  bufs[6] = A->gcol;
  bufs[7] = A->gval;
  bufs[8]  = A->ghost;
  bufs[9]  = A->send_idx;
  bufs[10] = A->send_dev;
  bufs[11] = A->ecol;
  bufs[12] = A->eval;
  bufs[13] = A->x_dev;
  bufs[14] = A->y_dev;
  bufs[15] = A->brow;
  bufs[16] = A->bptr;
  (void)cudaSetDevice(A->device);
  for (int i = 0; i < 17; i++) KEEP_FIRST_ERROR(cudaFree(bufs[i]), "cudaFree (operator)");
  FusedLongRowsFree(&A->lrows);
  FusedLongRowsFree(&A->glong);
  if (A->send_host) KEEP_FIRST_ERROR(cudaFreeHost(A->send_host), "cudaFreeHost (halo)");
  if (A->ghost_host) KEEP_FIRST_ERROR(cudaFreeHost(A->ghost_host), "cudaFreeHost (halo)");
  if (A->stream) KEEP_FIRST_ERROR(cudaStreamDestroy(A->stream), "cudaStreamDestroy (operator)");
  if (A->halo_stream) KEEP_FIRST_ERROR(cudaStreamDestroy(A->halo_stream), "cudaStreamDestroy (halo)");
  if (A->packed) KEEP_FIRST_ERROR(cudaEventDestroy(A->packed), "cudaEventDestroy (halo)");
  if (A->arrived) KEEP_FIRST_ERROR(cudaEventDestroy(A->arrived), "cudaEventDestroy (halo)");
  free(A);
  *pA = NULL;
  return err;
}

extern "C" int FusedDevMatSetHalo(FusedDevMat A, int nsend, const int *send_idx, double **send_host, double **ghost_host)
{
  int err;
  A->nsend = nsend;
  if ((err = DevUpload((void **)&A->send_idx, send_idx, sizeof(int) * (size_t)nsend, &A->bytes))) return err;
  if ((err = FusedMalloc((void **)&A->send_dev, sizeof(double) * (size_t)nsend, "the halo's send buffer"))) return err;
  A->bytes += sizeof(double) * (size_t)nsend;
  FUSED_CUDA_CHECK(cudaMallocHost((void **)&A->send_host, sizeof(double) * (size_t)(nsend > 0 ? nsend : 1)));
  FUSED_CUDA_CHECK(cudaMallocHost((void **)&A->ghost_host, sizeof(double) * (size_t)(A->nghost > 0 ? A->nghost : 1)));
  FUSED_CUDA_CHECK(cudaSetDevice(A->device));
  FUSED_CUDA_CHECK(cudaStreamCreateWithFlags(&A->halo_stream, cudaStreamNonBlocking));
  FUSED_CUDA_CHECK(cudaEventCreateWithFlags(&A->packed, cudaEventDisableTiming));
  FUSED_CUDA_CHECK(cudaEventCreateWithFlags(&A->arrived, cudaEventDisableTiming));
  *send_host  = A->send_host;
  *ghost_host = A->ghost_host;
  return FUSED_CUDA_OK;
}

extern "C" void FusedDevMatDescribeLongRows(FusedDevMat A, char *text, size_t len)
{
  int at;
  if (!len) return;
  if (A->view.format == FUSED_FORMAT_DIA || A->view.format == FUSED_FORMAT_ELL) at = snprintf(text, len, "long rows: none (every row in the %s part)", A->view.format == FUSED_FORMAT_DIA ? "DIA" : "ELL");
  else if (!A->lrows.nlong) at = snprintf(text, len, "long rows: none (no CSR part of a row over %d entries, which one thread sums)", FusedLongRowLimit((size_t)A->view.n, A->tail));
  else at = snprintf(text, len, "long rows: %d with CSR parts over %d entries, which warps sum in %d chunks (of %d entries, more where a row would have over %d)", A->lrows.nlong, A->lrows.limit, A->lrows.nchunks, FUSED_LONG_CHUNK, FUSED_LONG_MAX_CHUNKS);
  if (A->glong.nlong && at > 0 && (size_t)at < len) snprintf(text + at, len - (size_t)at, "; off-process block: %d over %d entries, in %d chunks", A->glong.nlong, A->glong.limit, A->glong.nchunks);
}

extern "C" int FusedDevMatLongRows(FusedDevMat A)
{
  return A->lrows.nlong;
}

extern "C" int FusedDevMatSymmetric(FusedDevMat A)
{
  return A->symmetric;
}

extern "C" size_t FusedDevMatTailEntries(FusedDevMat A)
{
  return A->tail;
}

extern "C" size_t FusedDevMatCSRBytes(FusedDevMat A)
{
  return A->csr_bytes;
}

extern "C" void FusedDevMatGetInfo(FusedDevMat A, int *format, int *ndiag, size_t *bytes, int *nghost)
{
  if (format) *format = A->view.format;
  if (ndiag) *ndiag = A->view.format == FUSED_FORMAT_DIA ? A->view.ndiag : A->view.K;
  if (bytes) *bytes = A->bytes;
  if (nghost) *nghost = A->nghost;
}


extern "C" int FusedDevMatSetColumns(FusedDevMat A, int ncols)
{
  if (ncols != A->view.n && A->view.format != FUSED_FORMAT_CSR) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "a %d x %d operator must be stored as CSR (DIA and ELL padding assume a square block)", A->view.n, ncols);
  A->ncols = ncols;
  return FUSED_CUDA_OK;
}

__global__ static void FusedSpMVKernel(FusedMatView A, const double *__restrict__ x, const double *__restrict__ z, double *__restrict__ y)
{
  FUSED_GRID_LOOP(i, A.n)
  {
    const double s = FusedRowProduct(A, x, i);
    y[i]           = z ? z[i] + s : s;
  }
}

/* CSR with lanes threads per row (a power of two up to 32): rows are read
   by several threads side by side, coalesced, and summed by shuffles; long
   rows were summed before */
__global__ static void FusedCSRVectorKernel(int n, int lanes, const int *__restrict__ rowptr, const int *__restrict__ col, const double *__restrict__ val, FusedLongRows L, const double *__restrict__ x, const double *__restrict__ z, double *__restrict__ y)
{
  const int      lane = threadIdx.x & (lanes - 1);
  const unsigned group = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1u) << ((threadIdx.x & 31) & ~(lanes - 1)); /* a row's threads, who leave the loop together */
  for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t / lanes < n; t += (long long)gridDim.x * blockDim.x) {
    const int  i = (int)(t / lanes), b = rowptr[i], e = rowptr[i + 1];
    const bool is_long = e - b > L.limit; /* summed before */
    double     s       = 0.0;
    for (int k = b + lane; k < (is_long ? b : e); k += lanes) s += val[k] * __ldg(&x[col[k]]);
    for (int o = lanes / 2; o > 0; o >>= 1) s += __shfl_down_sync(group, s, o, lanes);
    if (is_long) s = L.sum[L.slot[i]];
    if (lane == 0) y[i] = z ? z[i] + s : s;
  }
}

/* y = A x (+ z) on device vectors: a thread per row, or for CSR rows longer
   than 2 on average several threads per row */
static int LaunchProduct(FusedDevMat A, const double *x, const double *z, double *y, cudaStream_t stream)
{
  const int    n    = A->view.n;
  const double mean = n ? (double)A->tail / n : 0.0;
  if (int err = FusedLongRowsBefore(A, x, stream)) return err;
  if (A->view.format == FUSED_FORMAT_CSR && !A->view.growptr && mean > 2.0) {
    int lanes = 2;
    while (lanes < 32 && lanes < mean) lanes *= 2;
    const long long threads = (long long)n * lanes;
    const long long blocks  = (threads + FUSED_BLOCK - 1) / FUSED_BLOCK;
    FusedCSRVectorKernel<<<(int)(blocks < 65535 ? blocks : 65535), FUSED_BLOCK, 0, stream>>>(n, lanes, A->view.rowptr, A->view.col, A->view.val, A->view.lrows, x, z, y);
    FUSED_CUDA_CHECK_LAUNCH("FusedCSRVectorKernel");
  } else {
    const int blocks = (n + FUSED_BLOCK - 1) / FUSED_BLOCK;
    FusedSpMVKernel<<<blocks < 65535 ? blocks : 65535, FUSED_BLOCK, 0, stream>>>(A->view, x, z, y);
    FUSED_CUDA_CHECK_LAUNCH("FusedSpMVKernel");
  }
  return FUSED_CUDA_OK;
}

/* y = A x with device vectors, queued on stream (a cudaStream_t; NULL: the default stream) */
extern "C" int FusedDevMatMultDevice(FusedDevMat A, const double *x, double *y, void *stream)
{
  const int n = A->view.n;
  if (A->nghost > 0) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "a product with device vectors alone cannot read the %d ghost values of an off-process block", A->nghost);
  if (n == 0) return FUSED_CUDA_OK;
  return LaunchProduct(A, x, NULL, y, (cudaStream_t)stream);
}

/* y = A x (+ z) with host vectors: x (and the ghost values) in, y out. The
   transfers are the price of host vectors; the fused solvers never pay it. */
extern "C" int FusedDevMatMult(FusedDevMat A, const double *x, const double *ghost, const double *z, double *y)
{
  const int n = A->view.n;
  FUSED_CUDA_CHECK(cudaSetDevice(A->device));
  if (!A->stream) FUSED_CUDA_CHECK(cudaStreamCreateWithFlags(&A->stream, cudaStreamNonBlocking));
  if (!A->x_dev) {
    if (int err = FusedMalloc((void **)&A->x_dev, sizeof(double) * (size_t)(A->ncols > 0 ? A->ncols : 1), "the product's input vector")) return err;
    if (int err = FusedMalloc((void **)&A->y_dev, sizeof(double) * (size_t)(n > 0 ? 2 * n : 1), "the product's output vectors")) return err;
  }
  if (n == 0) return FUSED_CUDA_OK;
  FUSED_CUDA_CHECK(cudaMemcpyAsync(A->x_dev, x, sizeof(double) * A->ncols, cudaMemcpyHostToDevice, A->stream));
  if (A->nghost > 0) FUSED_CUDA_CHECK(cudaMemcpyAsync(A->ghost, ghost, sizeof(double) * A->nghost, cudaMemcpyHostToDevice, A->stream));
  if (z) FUSED_CUDA_CHECK(cudaMemcpyAsync(A->y_dev + n, z, sizeof(double) * n, cudaMemcpyHostToDevice, A->stream));
  if (int err = LaunchProduct(A, A->x_dev, z ? A->y_dev + n : NULL, A->y_dev, A->stream)) return err;
  FUSED_CUDA_CHECK(cudaMemcpyAsync(y, A->y_dev, sizeof(double) * n, cudaMemcpyDeviceToHost, A->stream));
  FUSED_CUDA_CHECK(cudaStreamSynchronize(A->stream));
  return FUSED_CUDA_OK;
}

/* New values on the same nonzero pattern (a Jacobian re-assembled): the
   storage is built again in the format already chosen and takes the old
   one's place. Returns FUSED_CUDA_ERR_ARG, the old storage untouched, when the
   layout came out different, and the caller rebuilds the whole copy. */
extern "C" int FusedDevMatUpdateValues(FusedDevMat A, const int *rowptr, const int *col, const double *val, const int *growptr, const double *gval)
{
  FusedDevStorage S, old;
  int             same, err;

  FUSED_CUDA_CHECK(cudaSetDevice(A->device));
  if ((err = FusedDevStorageBuild(A->view.n, rowptr, col, val, A->view.format, 0, A->check_symmetry, &S))) return err;
  /* the same pattern gives the same layout; checked all the same, as a wrong one would corrupt the product */
  same = S.layout.format == A->view.format && S.layout.K == A->view.K && (S.layout.format != FUSED_FORMAT_DIA || S.ndiag == A->view.ndiag) && (S.layout.format == FUSED_FORMAT_DIA || S.layout.format == FUSED_FORMAT_ELL || S.layout.tail == A->tail) && S.layout.nlong == A->lrows.nlong;
  for (int d = 0; same && d < S.ndiag && d < FUSED_DIA_INLINE; d++) same = S.offsets[d] == A->view.off[d];
  if (!same || (A->gval && !growptr)) {
    FusedDevStorageFree(&S);
    return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the storage's layout changed with the values");
  }
  memset(&old, 0, sizeof(old));
  old.d_offsets = A->offsets, old.dval = A->dval, old.ecol = A->ecol, old.eval = A->eval, old.rowptr = A->rowptr, old.col = A->col, old.val = A->val;
  A->bytes -= S.layout.bytes + (S.layout.format == FUSED_FORMAT_DIA ? sizeof(int) * S.ndiag : 0);
  AdoptStorage(A, &S);
  FusedDevStorageFree(&old);
  if (A->gval && growptr) FUSED_CUDA_CHECK(cudaMemcpy(A->gval, gval, sizeof(double) * (size_t)growptr[A->view.n], cudaMemcpyHostToDevice));
  return FUSED_CUDA_OK;
}

int FusedDevMatLoadKernels(int device)
{
  return FusedCUDALoadModuleOf(device, (const void *)FusedSpMVKernel);
}

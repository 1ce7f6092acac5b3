/* The operator on the device, in the storage src/mat/fusedformat.c builds
   from the host CSR arrays (DIA, ELL, HYB or CSR), with the off-process
   block and the halo's buffers on several ranks. */
#include <stdlib.h>
#include <string.h>
#include "cuda/fusedcuda_impl.cuh"

/* A device copy of bytes of host memory, counted in *total */
static int DevUpload(void **dst, const void *src, size_t bytes, size_t *total)
{
  if (int err = FusedMalloc(dst, bytes, "the operator")) return err;
  *total += bytes;
  if (bytes) FUSED_CUDA_CHECK(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
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

extern "C" int FusedDevMatCreate(int device, int n, const int *rowptr, const int *col, const double *val, int nghost, const int *growptr, const int *gcol, const double *gval, int format, FusedDevMat *out)
{
  FusedDevMat A;
  FusedFormat F;
  char        msg[256];
  int         err = FUSED_CUDA_OK;

  *out = NULL;
  FUSED_CUDA_CHECK(cudaSetDevice(device)); /* the rank's device, also before its workspace exists */
  if (format < FUSED_FORMAT_AUTO || format > FUSED_FORMAT_HYB) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "unknown storage format %d", format);
  if (FusedFormatBuild(n, rowptr, col, val, format, &F, msg, sizeof(msg))) return FusedCUDASetError(strstr(msg, "memory") ? FUSED_CUDA_ERR_MEM : FUSED_CUDA_ERR_ARG, "%s", msg);
  A = (FusedDevMat)calloc(1, sizeof(*A));
  if (!A) {
    FusedFormatFree(&F);
    return FusedCUDASetError(FUSED_CUDA_ERR_MEM, "host out of memory for the device operator");
  }
  A->device      = device;
  A->ncols       = n;
  A->view.n      = n;
  A->view.format = F.format;
  A->nghost      = nghost;
  A->csr_bytes   = F.csr_bytes;
  do {
    if (F.format == FUSED_FORMAT_DIA) {
      if ((err = DevUpload((void **)&A->offsets, F.offsets, sizeof(int) * F.ndiag, &A->bytes))) break;
      if ((err = DevUpload((void **)&A->dval, F.dval, sizeof(double) * (size_t)F.ndiag * n, &A->bytes))) break;
      A->view.ndiag   = F.ndiag;
      A->view.offsets = A->offsets;
      A->view.dval    = A->dval;
      for (int k = 0; k < F.ndiag && k < FUSED_DIA_INLINE; k++) A->view.off[k] = F.offsets[k];
    }
    if (F.K > 0) {
      if ((err = DevUpload((void **)&A->ecol, F.ecol, sizeof(int) * (size_t)F.K * n, &A->bytes))) break;
      if ((err = DevUpload((void **)&A->eval, F.eval, sizeof(double) * (size_t)F.K * n, &A->bytes))) break;
      A->view.K    = F.K;
      A->view.ecol = A->ecol;
      A->view.eval = A->eval;
    }
    if (F.rowptr) {
      const size_t tail = (size_t)F.rowptr[n];
      A->tail           = tail;
      if ((err = DevUpload((void **)&A->rowptr, F.rowptr, sizeof(int) * (n + 1), &A->bytes))) break;
      if ((err = DevUpload((void **)&A->col, F.col, sizeof(int) * tail, &A->bytes))) break;
      if ((err = DevUpload((void **)&A->val, F.val, sizeof(double) * tail, &A->bytes))) break;
      A->view.rowptr = A->rowptr;
      A->view.col    = A->col;
      A->view.val    = A->val;
    }
    if (growptr && nghost > 0) {
      const size_t gnnz = (size_t)growptr[n];
      if ((err = DevUpload((void **)&A->growptr, growptr, sizeof(int) * (n + 1), &A->bytes))) break;
      if ((err = DevUpload((void **)&A->gcol, gcol, sizeof(int) * gnnz, &A->bytes))) break;
      if ((err = DevUpload((void **)&A->gval, gval, sizeof(double) * gnnz, &A->bytes))) break;
      if ((err = FusedMalloc((void **)&A->ghost, sizeof(double) * nghost, "the operator's ghost values"))) break;
      A->bytes += sizeof(double) * nghost;
      A->view.growptr = A->growptr;
      A->view.gcol    = A->gcol;
      A->view.gval    = A->gval;
      A->view.ghost   = A->ghost;
      if ((err = UploadBoundaryRows(A, n, growptr))) break;
    }
  } while (0);
  FusedFormatFree(&F);
  if (err) {
    (void)FusedDevMatDestroy(&A);
    return err;
  }
  *out = A;
  return FUSED_CUDA_OK;
}

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
  for (int i = 0; i < 17; i++) {
    cudaError_t e = cudaFree(bufs[i]);
    if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaFree (operator)", __FILE__, __LINE__);
  }
  if (A->send_host) {
    cudaError_t e = cudaFreeHost(A->send_host);
    if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaFreeHost (halo)", __FILE__, __LINE__);
  }
  if (A->ghost_host) {
    cudaError_t e = cudaFreeHost(A->ghost_host);
    if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaFreeHost (halo)", __FILE__, __LINE__);
  }
  if (A->stream) {
    cudaError_t e = cudaStreamDestroy(A->stream);
    if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaStreamDestroy (operator)", __FILE__, __LINE__);
  }
  if (A->halo_stream) {
    cudaError_t e = cudaStreamDestroy(A->halo_stream);
    if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaStreamDestroy (halo)", __FILE__, __LINE__);
  }
  if (A->packed) {
    cudaError_t e = cudaEventDestroy(A->packed);
    if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaEventDestroy (halo)", __FILE__, __LINE__);
  }
  if (A->arrived) {
    cudaError_t e = cudaEventDestroy(A->arrived);
    if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaEventDestroy (halo)", __FILE__, __LINE__);
  }
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
  {
    const int blocks = (n + FUSED_BLOCK - 1) / FUSED_BLOCK;
    FusedSpMVKernel<<<blocks < 65535 ? blocks : 65535, FUSED_BLOCK, 0, A->stream>>>(A->view, A->x_dev, z ? A->y_dev + n : NULL, A->y_dev);
    FUSED_CUDA_CHECK_LAUNCH("FusedSpMVKernel");
  }
  FUSED_CUDA_CHECK(cudaMemcpyAsync(y, A->y_dev, sizeof(double) * n, cudaMemcpyDeviceToHost, A->stream));
  FUSED_CUDA_CHECK(cudaStreamSynchronize(A->stream));
  return FUSED_CUDA_OK;
}

/* New values on the same nonzero pattern (a Jacobian re-assembled): the
   storage is rebuilt on the host in the format already chosen and only the
   value arrays go to the device. Returns FUSED_CUDA_ERR_ARG when the layout
   came out different, and the caller rebuilds the whole copy. */
extern "C" int FusedDevMatUpdateValues(FusedDevMat A, const int *rowptr, const int *col, const double *val, const int *growptr, const double *gval)
{
  FusedFormat F;
  char        msg[256];
  const int   n   = A->view.n;
  int         err = FUSED_CUDA_OK;

  FUSED_CUDA_CHECK(cudaSetDevice(A->device));
  if (FusedFormatBuild(n, rowptr, col, val, A->view.format, &F, msg, sizeof(msg))) return FusedCUDASetError(strstr(msg, "memory") ? FUSED_CUDA_ERR_MEM : FUSED_CUDA_ERR_ARG, "%s", msg);
  /* the same pattern gives the same layout; checked all the same, as a wrong one would corrupt the product */
  if (F.format != A->view.format || F.ndiag != A->view.ndiag || F.K != A->view.K || (size_t)(F.rowptr ? F.rowptr[n] : 0) != A->tail) err = FUSED_CUDA_ERR_ARG;
  for (int d = 0; !err && d < F.ndiag && d < FUSED_DIA_INLINE; d++)
    if (F.offsets[d] != A->view.off[d]) err = FUSED_CUDA_ERR_ARG;
  if (!err && F.dval) FUSED_CUDA_CHECK(cudaMemcpy(A->dval, F.dval, sizeof(double) * (size_t)F.ndiag * n, cudaMemcpyHostToDevice));
  if (!err && F.eval) FUSED_CUDA_CHECK(cudaMemcpy(A->eval, F.eval, sizeof(double) * (size_t)F.K * n, cudaMemcpyHostToDevice));
  if (!err && F.val) FUSED_CUDA_CHECK(cudaMemcpy(A->val, F.val, sizeof(double) * (size_t)F.rowptr[n], cudaMemcpyHostToDevice));
  if (!err && A->gval && growptr) FUSED_CUDA_CHECK(cudaMemcpy(A->gval, gval, sizeof(double) * (size_t)growptr[n], cudaMemcpyHostToDevice));
  FusedFormatFree(&F);
  return err;
}

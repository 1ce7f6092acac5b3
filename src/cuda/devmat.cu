/* The operator on the device, built from the host CSR arrays: DIA where the
   nonzeros lie on few diagonals and that storage is no larger than CSR (no
   column indices at all: Jost et al.), CSR otherwise. */
#include <stdlib.h>
#include <string.h>
#include "cuda/fusedcuda_impl.cuh"

extern "C" const char *const FusedFormatNames[] = {"auto", "csr", "dia", "FusedFormat", "FUSED_FORMAT_", NULL};

#define FUSED_DIA_MAX 64

static int DevAlloc(void **ptr, size_t bytes, size_t *total)
{
  cudaError_t err;
  *ptr = NULL;
  if (!bytes) return FUSED_CUDA_OK;
  err = cudaMalloc(ptr, bytes);
  if (err == cudaErrorMemoryAllocation) {
    size_t freeb = 0, all = 0;
    (void)cudaGetLastError();
    (void)cudaMemGetInfo(&freeb, &all);
    return FusedCUDASetError(FUSED_CUDA_ERR_MEM, "CUDA device out of memory: the operator needs %zu more bytes, %zu of %zu are free", bytes, freeb, all);
  }
  FUSED_CUDA_CHECK(err);
  *total += bytes;
  return FUSED_CUDA_OK;
}

static int DevCopy(void *dst, const void *src, size_t bytes)
{
  if (bytes) FUSED_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  return FUSED_CUDA_OK;
}

/* The distinct diagonals of the block, or -1 when there are more than FUSED_DIA_MAX */
static int FindDiagonals(int n, const int *rowptr, const int *col, int offsets[])
{
  int ndiag = 0, last = 0;
  for (int i = 0; i < n; i++) {
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
      const int off = col[k] - i;
      if (ndiag && offsets[last] == off) continue;
      int d;
      for (d = 0; d < ndiag && offsets[d] != off; d++) {}
      if (d == ndiag) {
        if (ndiag == FUSED_DIA_MAX) return -1;
        offsets[ndiag++] = off;
      }
      last = d;
    }
  }
  return ndiag;
}

extern "C" int FusedDevMatCreate(int n, const int *rowptr, const int *col, const double *val, int nghost, const int *growptr, const int *gcol, const double *gval, int format, FusedDevMat *out)
{
  FusedDevMat  A;
  int          offsets[FUSED_DIA_MAX], ndiag = -1, err = FUSED_CUDA_OK;
  const size_t nnz       = (size_t)rowptr[n];
  const size_t csr_bytes = nnz * (sizeof(double) + sizeof(int)) + (size_t)(n + 1) * sizeof(int);

  *out = NULL;
  if (format < FUSED_FORMAT_AUTO || format > FUSED_FORMAT_DIA) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "unknown storage format %d", format);
  if (format != FUSED_FORMAT_CSR) {
    ndiag = FindDiagonals(n, rowptr, col, offsets);
    if (format == FUSED_FORMAT_AUTO) format = (ndiag >= 0 && (size_t)ndiag * n * sizeof(double) <= csr_bytes) ? FUSED_FORMAT_DIA : FUSED_FORMAT_CSR;
    else if (ndiag < 0) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "DIA storage asked for, but the matrix has more than %d diagonals", FUSED_DIA_MAX);
  }
  A = (FusedDevMat)calloc(1, sizeof(*A));
  if (!A) return FusedCUDASetError(FUSED_CUDA_ERR_MEM, "host out of memory for the device operator");
  A->view.n      = n;
  A->view.format = format;
  A->nghost      = nghost;
  do {
    if (format == FUSED_FORMAT_DIA) {
      double *dval = (double *)calloc((size_t)ndiag * n + 1, sizeof(double));
      if (!dval) {
        err = FusedCUDASetError(FUSED_CUDA_ERR_MEM, "host out of memory building DIA storage (%zu bytes)", (size_t)ndiag * n * sizeof(double));
        break;
      }
      for (int i = 0; i < n; i++)
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
          int d;
          for (d = 0; offsets[d] != col[k] - i; d++) {}
          dval[(size_t)d * n + i] += val[k]; /* duplicates add up, as in CSR */
        }
      if (!(err = DevAlloc((void **)&A->offsets, sizeof(int) * ndiag, &A->bytes)) && !(err = DevAlloc((void **)&A->dval, sizeof(double) * (size_t)ndiag * n, &A->bytes)) && !(err = DevCopy(A->offsets, offsets, sizeof(int) * ndiag))) err = DevCopy(A->dval, dval, sizeof(double) * (size_t)ndiag * n);
      free(dval);
      if (err) break;
      A->view.ndiag        = ndiag;
      for (int k = 0; k < ndiag && k < FUSED_DIA_INLINE; k++) A->view.off[k] = offsets[k];
      A->view.offsets      = A->offsets;
      A->view.dval         = A->dval;
      A->bytes_per_product = (double)ndiag * n * sizeof(double);
    } else {
      if ((err = DevAlloc((void **)&A->rowptr, sizeof(int) * (n + 1), &A->bytes))) break;
      if ((err = DevAlloc((void **)&A->col, sizeof(int) * nnz, &A->bytes))) break;
      if ((err = DevAlloc((void **)&A->val, sizeof(double) * nnz, &A->bytes))) break;
      if ((err = DevCopy(A->rowptr, rowptr, sizeof(int) * (n + 1)))) break;
      if ((err = DevCopy(A->col, col, sizeof(int) * nnz))) break;
      if ((err = DevCopy(A->val, val, sizeof(double) * nnz))) break;
      A->view.rowptr       = A->rowptr;
      A->view.col          = A->col;
      A->view.val          = A->val;
      A->bytes_per_product = (double)csr_bytes;
    }
    if (growptr && nghost > 0) {
      const size_t gnnz = (size_t)growptr[n];
      if ((err = DevAlloc((void **)&A->growptr, sizeof(int) * (n + 1), &A->bytes))) break;
      if ((err = DevAlloc((void **)&A->gcol, sizeof(int) * gnnz, &A->bytes))) break;
      if ((err = DevAlloc((void **)&A->gval, sizeof(double) * gnnz, &A->bytes))) break;
      if ((err = DevAlloc((void **)&A->ghost, sizeof(double) * nghost, &A->bytes))) break;
      if ((err = DevCopy(A->growptr, growptr, sizeof(int) * (n + 1)))) break;
      if ((err = DevCopy(A->gcol, gcol, sizeof(int) * gnnz))) break;
      if ((err = DevCopy(A->gval, gval, sizeof(double) * gnnz))) break;
      A->view.growptr = A->growptr;
      A->view.gcol    = A->gcol;
      A->view.gval    = A->gval;
      A->view.ghost   = A->ghost;
      A->bytes_per_product += gnnz * (sizeof(double) + sizeof(int)) + (n + 1) * sizeof(int) + nghost * sizeof(double);
    }
  } while (0);
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
  void       *bufs[11];

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
  for (int i = 0; i < 11; i++) {
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
  free(A);
  *pA = NULL;
  return err;
}

extern "C" int FusedDevMatSetHalo(FusedDevMat A, int nsend, const int *send_idx, double **send_host, double **ghost_host)
{
  int err;
  A->nsend = nsend;
  if ((err = DevAlloc((void **)&A->send_idx, sizeof(int) * (size_t)nsend, &A->bytes))) return err;
  if ((err = DevAlloc((void **)&A->send_dev, sizeof(double) * (size_t)nsend, &A->bytes))) return err;
  if ((err = DevCopy(A->send_idx, send_idx, sizeof(int) * (size_t)nsend))) return err;
  FUSED_CUDA_CHECK(cudaMallocHost((void **)&A->send_host, sizeof(double) * (size_t)(nsend > 0 ? nsend : 1)));
  FUSED_CUDA_CHECK(cudaMallocHost((void **)&A->ghost_host, sizeof(double) * (size_t)(A->nghost > 0 ? A->nghost : 1)));
  *send_host  = A->send_host;
  *ghost_host = A->ghost_host;
  return FUSED_CUDA_OK;
}

extern "C" void FusedDevMatGetInfo(FusedDevMat A, int *format, int *ndiag, size_t *bytes, int *nghost)
{
  if (format) *format = A->view.format;
  if (ndiag) *ndiag = A->view.ndiag;
  if (bytes) *bytes = A->bytes;
  if (nghost) *nghost = A->nghost;
}

extern "C" double FusedDevMatBytesPerProduct(FusedDevMat A)
{
  return A->bytes_per_product;
}

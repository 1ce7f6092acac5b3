/* MatScale() and MatShift() of the hybcuda type on the device copy itself,
   so that they cost a pass over the stored values, not a new upload. */
#include "cuda/fusedcuda_impl.cuh"

__global__ static void ScaleKernel(size_t len, double *v, double a)
{
  for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < len; k += (size_t)gridDim.x * blockDim.x) v[k] *= a;
}

static int ScaleArray(double *v, size_t len, double a)
{
  if (!v || !len) return FUSED_CUDA_OK;
  const size_t blocks = (len + FUSED_BLOCK - 1) / FUSED_BLOCK;
  ScaleKernel<<<(unsigned)(blocks < 65535 ? blocks : 65535), FUSED_BLOCK>>>(len, v, a);
  FUSED_CUDA_CHECK_LAUNCH("ScaleKernel");
  return FUSED_CUDA_OK;
}

/* Padding (DIA's cells outside the matrix, ELL's zeros) stays zero when scaled. */
extern "C" int FusedDevMatScale(FusedDevMat A, double a)
{
  const size_t n = (size_t)A->view.n;
  FUSED_CUDA_CHECK(cudaSetDevice(A->device));
  if (int err = ScaleArray(A->dval, (size_t)A->view.ndiag * n, a)) return err;
  if (int err = ScaleArray(A->eval, (size_t)A->view.K * n, a)) return err;
  if (int err = ScaleArray(A->val, A->tail, a)) return err;
  if (int err = ScaleArray(A->gval, A->gnnz, a)) return err;
  FUSED_CUDA_CHECK(cudaDeviceSynchronize());
  return FUSED_CUDA_OK;
}

/* Each row's diagonal entry: the first one stored with column i, in the
   order the product reads them (ELL's real entries come before its padding);
   a row without one raises *missing. */
__global__ static void FindDiagonalKernel(FusedMatView A, long long *where, int *missing)
{
  FUSED_GRID_LOOP(i, A.n)
  {
    long long at = -1;
    if (A.format == FUSED_FORMAT_DIA) {
      for (int d = 0; d < A.ndiag && at < 0; d++)
        if (A.offsets[d] == 0) at = (long long)d * A.n + i;
    } else {
      for (int k = 0; k < A.K && at < 0; k++)
        if (A.ecol[(size_t)k * A.n + i] == i) at = (long long)k * A.n + i;
      if (at < 0 && A.rowptr)
        for (int k = A.rowptr[i]; k < A.rowptr[i + 1] && at < 0; k++)
          if (A.col[k] == i) at = -2 - (long long)k; /* in the CSR part */
    }
    where[i] = at;
    if (at == -1) *missing = 1;
  }
}

__global__ static void AddDiagonalKernel(FusedMatView A, const long long *where, double a, double *dense, double *csr)
{
  FUSED_GRID_LOOP(i, A.n)
  {
    const long long at = where[i];
    if (at >= 0) dense[at] += a;
    else csr[-2 - at] += a;
  }
}

/* Nothing changes unless every row has its diagonal entry: the two passes
   keep a failed shift from leaving half the rows shifted. */
extern "C" int FusedDevMatShift(FusedDevMat A, double a, int *done)
{
  const int  n       = A->view.n;
  long long *where   = NULL;
  int       *missing = NULL, found_all = 0, err;

  *done = 0;
  FUSED_CUDA_CHECK(cudaSetDevice(A->device));
  if (n == 0) {
    *done = 1;
    return FUSED_CUDA_OK;
  }
  if ((err = FusedMalloc((void **)&where, sizeof(long long) * (size_t)n, "the diagonal's positions"))) return err;
  if ((err = FusedMalloc((void **)&missing, sizeof(int), "the diagonal's positions"))) {
    (void)cudaFree(where);
    return err;
  }
  {
    const int   blocks = (n + FUSED_BLOCK - 1) / FUSED_BLOCK < 65535 ? (n + FUSED_BLOCK - 1) / FUSED_BLOCK : 65535;
    int         none   = 0;
    cudaError_t e      = cudaMemset(missing, 0, sizeof(int));
    if (e == cudaSuccess) {
      FindDiagonalKernel<<<blocks, FUSED_BLOCK>>>(A->view, where, missing);
      e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(&none, missing, sizeof(int), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && !none) {
      found_all = 1;
      AddDiagonalKernel<<<blocks, FUSED_BLOCK>>>(A->view, where, a, A->view.format == FUSED_FORMAT_DIA ? A->dval : A->eval, A->val);
      e = cudaGetLastError();
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
    }
    if (e != cudaSuccess) err = FusedCUDAFail(e, "the diagonal shift's kernels", __FILE__, __LINE__);
  }
  (void)cudaFree(where);
  (void)cudaFree(missing);
  if (!err) *done = found_all;
  return err;
}

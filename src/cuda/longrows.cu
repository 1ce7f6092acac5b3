/* The long rows of a CSR block on the device (FusedLongRows in
   fusedcuda_impl.cuh): which rows are longer than the limit, each one's
   slot, and the chunks of its entries, found by two scans over the row
   starts. Only the pattern: new values on it need nothing here. */
#include <limits.h>
#include <string.h>
#include "cuda/fusedcuda_impl.cuh"

/* flags[i]: row i is long; chunks[i]: its chunks (both 0 at i = n, for the scans' totals) */
__global__ static void LongRowsCountKernel(int n, const int *rowptr, int limit, int *flags, int *chunks)
{
  FUSED_GRID_LOOP(i, n + 1)
  {
    const int len = i < n ? rowptr[i + 1] - rowptr[i] : 0;
    flags[i]      = len > limit;
    chunks[i]     = len > limit ? (int)FusedLongChunks((size_t)len) : 0;
  }
}

/* From the exclusive scans: slot[i] (the flags' scan, in place) already
   holds a long row's slot; the slots' rows, first chunks and the chunks' slots */
__global__ static void LongRowsFillKernel(int n, const int *rowptr, int limit, const int *slot, const int *chunk_start, int *row, int *first_chunk, int *chunk_slot)
{
  FUSED_GRID_LOOP(i, n + 1)
  {
    if (i == n) first_chunk[slot[n]] = chunk_start[n];
    else if (rowptr[i + 1] - rowptr[i] > limit) {
      const int s = slot[i], c0 = chunk_start[i];
      row[s]         = i;
      first_chunk[s] = c0;
      for (int c = c0; c < chunk_start[i + 1]; c++) chunk_slot[c] = s;
    }
  }
}

static int LaunchError(const char *kernel)
{
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? FUSED_CUDA_OK : FusedCUDAFail(e, kernel, __FILE__, __LINE__);
}

int FusedLongRowsBuild(int n, const int *rowptr, int limit, int nlong, FusedLongRows *L, size_t *bytes)
{
  int   *slot = NULL, *chunk_start = NULL, *row = NULL, *first_chunk = NULL, *chunk_slot = NULL, totals[2];
  double *sums = NULL;
  unsigned int *arrived = NULL;
  int    err;

  memset(L, 0, sizeof(*L));
  L->limit = INT_MAX;
  if (nlong <= 0 || n <= 0) return FUSED_CUDA_OK;
  do {
    if ((err = FusedMalloc((void **)&slot, sizeof(int) * ((size_t)n + 1), "the long rows' slots"))) break;
    if ((err = FusedMalloc((void **)&chunk_start, sizeof(int) * ((size_t)n + 1), "the long rows' chunk count"))) break;
    LongRowsCountKernel<<<FusedBuildGrid(n + 1), FUSED_BLOCK>>>(n, rowptr, limit, slot, chunk_start);
    if ((err = LaunchError("LongRowsCountKernel"))) break;
    if ((err = FusedExclusiveScan(slot, n + 1))) break;
    if ((err = FusedExclusiveScan(chunk_start, n + 1))) break;
    {
      const cudaError_t e1 = cudaMemcpy(&totals[0], slot + n, sizeof(int), cudaMemcpyDeviceToHost);
      const cudaError_t e2 = e1 == cudaSuccess ? cudaMemcpy(&totals[1], chunk_start + n, sizeof(int), cudaMemcpyDeviceToHost) : e1;
      if (e2 != cudaSuccess) {
        err = FusedCUDAFail(e2, "cudaMemcpy (the long rows' counts)", __FILE__, __LINE__);
        break;
      }
    }
    if (totals[0] != nlong) {
      err = FusedCUDASetError(FUSED_CUDA_ERR_LIB, "%d rows longer than %d found on the device, %d expected", totals[0], limit, nlong);
      break;
    }
    if ((err = FusedMalloc((void **)&row, sizeof(int) * (size_t)nlong, "the long rows"))) break;
    if ((err = FusedMalloc((void **)&first_chunk, sizeof(int) * ((size_t)nlong + 1), "the long rows' chunks"))) break;
    if ((err = FusedMalloc((void **)&chunk_slot, sizeof(int) * (size_t)totals[1], "the long rows' chunks"))) break;
    if ((err = FusedMalloc((void **)&sums, sizeof(double) * ((size_t)nlong + (size_t)totals[1]), "the long rows' sums"))) break;
    if ((err = FusedMalloc((void **)&arrived, sizeof(unsigned int) * (size_t)nlong, "the long rows' chunk counters"))) break;
    LongRowsFillKernel<<<FusedBuildGrid(n + 1), FUSED_BLOCK>>>(n, rowptr, limit, slot, chunk_start, row, first_chunk, chunk_slot);
    if ((err = LaunchError("LongRowsFillKernel"))) break;
    {
      const cudaError_t e = cudaMemset(arrived, 0, sizeof(unsigned int) * (size_t)nlong);
      const cudaError_t s = e == cudaSuccess ? cudaDeviceSynchronize() : e;
      if (s != cudaSuccess) {
        err = FusedCUDAFail(s, "the long rows' build", __FILE__, __LINE__);
        break;
      }
    }
  } while (0);
  (void)cudaFree(chunk_start);
  if (err) {
    (void)cudaFree(slot);
    (void)cudaFree(row);
    (void)cudaFree(first_chunk);
    (void)cudaFree(chunk_slot);
    (void)cudaFree(sums);
    (void)cudaFree(arrived);
    return err;
  }
  L->limit       = limit;
  L->nlong       = nlong;
  L->nchunks     = totals[1];
  L->slot        = slot;
  L->row         = row;
  L->first_chunk = first_chunk;
  L->chunk_slot  = chunk_slot;
  L->sum         = sums;
  L->chunk_sum   = sums + nlong;
  L->arrived     = arrived;
  *bytes += sizeof(int) * ((size_t)n + 1 + 2 * (size_t)nlong + 1 + (size_t)totals[1]) + sizeof(double) * ((size_t)nlong + (size_t)totals[1]);
  return FUSED_CUDA_OK;
}

void FusedLongRowsFree(FusedLongRows *L)
{
  (void)cudaFree((void *)L->slot);
  (void)cudaFree((void *)L->row);
  (void)cudaFree((void *)L->first_chunk);
  (void)cudaFree((void *)L->chunk_slot);
  (void)cudaFree(L->sum); /* chunk_sum lies in the same allocation */
  (void)cudaFree(L->arrived);
  memset(L, 0, sizeof(*L));
  L->limit = INT_MAX;
}

int FusedLongRowsBefore(FusedDevMat A, const double *x, cudaStream_t stream)
{
  if (int err = FusedLongRowsLaunch(A->view, x, stream)) return err;
  return FusedLongGhostRowsLaunch(A, stream);
}

/* The off-process block's long rows times the ghost values */
int FusedLongGhostRowsLaunch(FusedDevMat A, cudaStream_t stream)
{
  if (!A->glong.nchunks) return FUSED_CUDA_OK;
  FusedLongRowsKernel<FusedStored><<<FusedLongRowsGrid(A->glong), FUSED_BLOCK, 0, stream>>>(A->glong, A->growptr, A->gcol, A->gval, FusedStored{A->ghost}, NULL);
  FUSED_CUDA_CHECK_LAUNCH("FusedLongRowsKernel");
  return FUSED_CUDA_OK;
}

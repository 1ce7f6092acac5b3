/* The device storage formats built on the device (fusedformat.h gives the
   formats and the choice): the CSR arrays go up once, kernels read the
   pattern's statistics (longest row, row-length counts, diagonals), the host
   decides with FusedFormatChoose() as the host builder does, and kernels fill
   the chosen storage. The host builder (src/mat/fusedformat.c) stays the
   reference the CPU tests check; this one only has to be fast. */
#include <stdlib.h>
#include <string.h>
#include <cub/device/device_scan.cuh>
#include "cuda/fusedcuda_impl.cuh"

/* a failed CUDA call: its message, and on to the function's cleanup */
#define TRY_CUDA(call) \
  do { \
    cudaError_t e_ = (call); \
    if (e_ != cudaSuccess) { \
      err = FusedCUDAFail(e_, #call, __FILE__, __LINE__); \
      goto done; \
    } \
  } while (0)

/* rows of length up to this are counted in shared memory */
#define HIST_SHARED 4096

/* A row of more entries than this is not walked by one thread: the whole
   thread block takes its entries (the tail's fill of one row of 10^6
   entries took 0.15 s in one thread, H100) */
#define BUILD_LONG_ROW 1024

/* The rows of a fill kernel, one a thread, where a long row's entries are
   shared by its thread block instead: short_row(i) runs in row i's thread;
   long_entry(i, k) for each entry k of a long row i from its skip-th on, in
   some thread of the block. Launched with FUSED_BLOCK threads a block;
   every thread of a block goes round the loop the same number of times
   (the barriers). */
template <class ShortRow, class LongEntry>
__device__ __forceinline__ void BuildRows(int n, const int *rowptr, int skip, const ShortRow &short_row, const LongEntry &long_entry)
{
  __shared__ int nlong, long_rows[FUSED_BLOCK];
  for (int base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
    const int i = base + threadIdx.x;
    if (threadIdx.x == 0) nlong = 0;
    __syncthreads();
    if (i < n) {
      if (rowptr[i + 1] - rowptr[i] > BUILD_LONG_ROW) long_rows[atomicAdd(&nlong, 1)] = i;
      else short_row(i);
    }
    __syncthreads();
    for (int l = 0; l < nlong; l++) {
      const int r = long_rows[l], e = rowptr[r + 1];
#pragma unroll 4
      for (int k = rowptr[r] + skip + threadIdx.x; k < e; k += blockDim.x) long_entry(r, k);
    }
    __syncthreads(); /* nlong and long_rows are read before the next round sets them */
  }
}

/* Longest row, and (want_diag) for each diagonal offset the first row that
   has an entry on it (n where none does: flags start at n or above); *outside
   is set by an entry outside the square (a rectangular block). */
__global__ static void ScanPatternKernel(int n, const int *rowptr, const int *col, int want_diag, int *first_row, int *maxrow, int *outside)
{
  __shared__ int block_max;
  int            mine = 0;
  if (threadIdx.x == 0) block_max = 0;
  __syncthreads();
  FUSED_GRID_LOOP(i, n)
  {
    const int b = rowptr[i], e = rowptr[i + 1];
    mine        = max(mine, e - b);
    /* a row of more entries than FUSED_DIA_MAX has as many diagonals (its
       columns are distinct): no DIA, which End reads from the longest row,
       so its entries need no look (one thread took 0.28 s over a row of
       10^6, H100) */
    if (want_diag && e - b <= FUSED_DIA_MAX)
      for (int k = b; k < e; k++) {
        const long long at = (long long)col[k] - i + n - 1;
        if (at < 0 || at >= 2LL * n - 1) *outside = 1;
        else if (first_row[at] > i) atomicMin(&first_row[at], i); /* read first: a few hot offsets, few atomics */
      }
  }
  atomicMax(&block_max, mine);
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(maxrow, block_max);
}

__global__ static void RowLengthCountKernel(int n, const int *rowptr, int maxrow, unsigned int *count)
{
  /* the short lengths in shared memory, the rare long ones straight to
     count: with every row there, 10^6 rows of one length on one counter took
     0.7 ms (H100) */
  __shared__ unsigned int local[HIST_SHARED];
  const int               top = min(maxrow, HIST_SHARED - 1);
  for (int l = threadIdx.x; l <= top; l += blockDim.x) local[l] = 0;
  __syncthreads();
  FUSED_GRID_LOOP(i, n)
  {
    const int len = rowptr[i + 1] - rowptr[i];
    if (len < HIST_SHARED) atomicAdd(&local[len], 1u);
    else atomicAdd(&count[len], 1u);
  }
  __syncthreads();
  for (int l = threadIdx.x; l <= top; l += blockDim.x)
    if (local[l]) atomicAdd(&count[l], local[l]);
}

__global__ static void CollectDiagonalsKernel(int n, const int *first_row, int *ndiag, int *offsets, int *rows)
{
  FUSED_GRID_LOOP(at, 2 * n - 1)
  if (first_row[at] < n) {
    const int slot = atomicAdd(ndiag, 1);
    if (slot < FUSED_DIA_MAX) {
      offsets[slot] = at - (n - 1);
      rows[slot]    = first_row[at];
    }
  }
}

/* Each entry's diagonal: searched from the last one's, and from the start where the columns go back */
__global__ static void FillDIAKernel(int n, const int *rowptr, const int *col, const double *val, int ndiag, const int *offsets, double *dval)
{
  FUSED_GRID_LOOP(i, n)
  {
    int d = 0;
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
      const int off = col[k] - i;
      for (int tries = 0; __ldg(&offsets[d]) != off && tries < ndiag; tries++) d = d + 1 < ndiag ? d + 1 : 0;
      dval[(size_t)d * n + i] += val[k]; /* duplicates add up, as in CSR */
    }
  }
}

__global__ static void FillELLKernel(int n, const int *rowptr, const int *col, const double *val, int K, int *ecol, double *eval)
{
  FUSED_GRID_LOOP(i, n)
  {
    const int b = rowptr[i], len = rowptr[i + 1] - b;
    for (int k = 0; k < K; k++) {
      const size_t at = (size_t)k * n + i;
      if (k < len) {
        ecol[at] = col[b + k];
        eval[at] = val[b + k];
      } else {
        ecol[at] = len ? col[b + len - 1] : i; /* zero padding at a column the row reads anyway */
        eval[at] = 0.0;
      }
    }
  }
}

__global__ static void TailLengthKernel(int n, const int *rowptr, int K, int *tlen)
{
  FUSED_GRID_LOOP(i, n + 1) tlen[i] = i < n ? max(rowptr[i + 1] - rowptr[i] - K, 0) : 0;
}

__global__ static void FillTailKernel(int n, const int *rowptr, const int *col, const double *val, int K, const int *trowptr, int *tcol, double *tval)
{
  /* entry k of row i, past its K in the ELL part */
  const auto entry = [&](int i, int k) {
    const int t = trowptr[i] + (k - rowptr[i] - K);
    tcol[t]     = col[k];
    tval[t]     = val[k];
  };
  BuildRows(
    n, rowptr, K,
    [&](int i) {
      for (int k = rowptr[i] + K; k < rowptr[i + 1]; k++) entry(i, k);
    },
    entry);
}

void FusedDevStorageFree(FusedDevStorage *S)
{
  void *bufs[] = {S->d_offsets, S->dval, S->ecol, S->eval, S->rowptr, S->col, S->val};
  for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) (void)cudaFree(bufs[i]);
  memset(S, 0, sizeof(*S));
}

int FusedBuildGrid(int n)
{
  const int blocks = (n + FUSED_BLOCK - 1) / FUSED_BLOCK;
  return blocks < 1 ? 1 : (blocks < 65535 ? blocks : 65535);
}

int FusedExclusiveScan(int *a, int len)
{
  void  *scratch = NULL;
  size_t scratch_bytes = 0;
  FUSED_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, scratch_bytes, a, a, len));
  if (int err = FusedMalloc(&scratch, scratch_bytes, "the scan's scratch space")) return err;
  const cudaError_t e = cub::DeviceScan::ExclusiveSum(scratch, scratch_bytes, a, a, len);
  (void)cudaFree(scratch);
  if (e != cudaSuccess) return FusedCUDAFail(e, "cub::DeviceScan::ExclusiveSum", __FILE__, __LINE__);
  return FUSED_CUDA_OK;
}

/* The pattern's scan, in two halves so that the values can go up between
   them: Begin queues the kernels that read the columns (longest row, the
   diagonals) and returns; End reads their results, counts the row lengths
   and fills *pat (rowlen_count allocated here), with the diagonals in the
   order the host builder finds them: by the first row that has each, then
   ascending (a row's columns are sorted), so that both store the matrix
   alike and sum each row in the same order. */
struct PatternScan {
  int  n, want_diag;
  int *first_row, *d_small; /* d_small: maxrow, outside, ndiag, offsets, their first rows */
};
#define SCAN_SMALL (3 + 2 * FUSED_DIA_MAX)

static int ScanPatternBegin(int n, const int *d_rowptr, const int *d_col, int want_diag, PatternScan *scan)
{
  int err;

  scan->n         = n;
  scan->want_diag = want_diag;
  if ((err = FusedMalloc((void **)&scan->d_small, sizeof(int) * SCAN_SMALL, "the pattern's statistics"))) return err;
  FUSED_CUDA_CHECK(cudaMemsetAsync(scan->d_small, 0, sizeof(int) * SCAN_SMALL, 0));
  if (want_diag) {
    if ((err = FusedMalloc((void **)&scan->first_row, sizeof(int) * (2 * (size_t)n - 1), "the diagonals' first rows"))) return err;
    FUSED_CUDA_CHECK(cudaMemsetAsync(scan->first_row, 0x7f, sizeof(int) * (2 * (size_t)n - 1), 0)); /* 0x7f7f7f7f: no row yet */
  }
  ScanPatternKernel<<<FusedBuildGrid(n), FUSED_BLOCK>>>(n, d_rowptr, d_col, want_diag, scan->first_row, scan->d_small, scan->d_small + 1);
  FUSED_CUDA_CHECK_LAUNCH("ScanPatternKernel");
  if (want_diag) {
    CollectDiagonalsKernel<<<FusedBuildGrid(2 * n - 1), FUSED_BLOCK>>>(n, scan->first_row, scan->d_small + 2, scan->d_small + 3, scan->d_small + 3 + FUSED_DIA_MAX);
    FUSED_CUDA_CHECK_LAUNCH("CollectDiagonalsKernel");
  }
  return FUSED_CUDA_OK;
}

static int ScanPatternEnd(const int *d_rowptr, PatternScan *scan, FusedPattern *pat, int *offsets)
{
  const int     n = scan->n;
  int           small[SCAN_SMALL], *rows = small + 3 + FUSED_DIA_MAX;
  unsigned int *d_count = NULL, *count;
  int           err = FUSED_CUDA_OK;

  TRY_CUDA(cudaMemcpy(small, scan->d_small, sizeof(small), cudaMemcpyDeviceToHost));
  pat->maxrow = small[0];
  pat->ndiag  = scan->want_diag && !small[1] && small[2] <= FUSED_DIA_MAX && pat->maxrow <= FUSED_DIA_MAX ? small[2] : -1;
  if (pat->ndiag > 0) {
    memcpy(offsets, small + 3, sizeof(int) * pat->ndiag);
    for (int a = 1; a < pat->ndiag; a++) /* at most 64: insertion sort by (first row, offset) */
      for (int b = a; b > 0 && (rows[b - 1] > rows[b] || (rows[b - 1] == rows[b] && offsets[b - 1] > offsets[b])); b--) {
        int t      = offsets[b];
        offsets[b] = offsets[b - 1], offsets[b - 1] = t;
        t       = rows[b];
        rows[b] = rows[b - 1], rows[b - 1] = t;
      }
  }
  if ((err = FusedMalloc((void **)&d_count, sizeof(unsigned int) * ((size_t)pat->maxrow + 1), "the row-length counts"))) goto done;
  TRY_CUDA(cudaMemset(d_count, 0, sizeof(unsigned int) * ((size_t)pat->maxrow + 1)));
  RowLengthCountKernel<<<FusedBuildGrid(n), FUSED_BLOCK>>>(n, d_rowptr, pat->maxrow, d_count);
  TRY_CUDA(cudaGetLastError()); /* RowLengthCountKernel */
  count = (unsigned int *)malloc(sizeof(unsigned int) * ((size_t)pat->maxrow + 1));
  if (!count) {
    err = FusedCUDASetError(FUSED_CUDA_ERR_MEM, "host out of memory for %d row-length counts", pat->maxrow + 1);
    goto done;
  }
  pat->rowlen_count = count;
  TRY_CUDA(cudaMemcpy(count, d_count, sizeof(unsigned int) * ((size_t)pat->maxrow + 1), cudaMemcpyDeviceToHost));
done:
  (void)cudaFree(d_count);
  return err;
}

static void ScanPatternFree(PatternScan *scan)
{
  (void)cudaFree(scan->first_row);
  (void)cudaFree(scan->d_small);
  scan->first_row = scan->d_small = NULL;
}

/* The tail of each row beyond K, in CSR */
static int BuildTail(int n, const int *rowptr, const int *col, const double *val, int K, size_t tail, FusedDevStorage *S)
{
  int err;

  if ((err = FusedMalloc((void **)&S->rowptr, sizeof(int) * ((size_t)n + 1), "the operator's CSR tail"))) return err;
  if ((err = FusedMalloc((void **)&S->col, sizeof(int) * (tail + 1), "the operator's CSR tail"))) return err;
  if ((err = FusedMalloc((void **)&S->val, sizeof(double) * (tail + 1), "the operator's CSR tail"))) return err;
  TailLengthKernel<<<FusedBuildGrid(n + 1), FUSED_BLOCK>>>(n, rowptr, K, S->rowptr);
  FUSED_CUDA_CHECK_LAUNCH("TailLengthKernel");
  if ((err = FusedExclusiveScan(S->rowptr, n + 1))) return err;
  FillTailKernel<<<FusedBuildGrid(n), FUSED_BLOCK>>>(n, rowptr, col, val, K, S->rowptr, S->col, S->val);
  FUSED_CUDA_CHECK_LAUNCH("FillTailKernel");
  return FUSED_CUDA_OK;
}

/* Storage for the chosen layout, before the values are there */
static int AllocateStorage(int n, FusedDevStorage *S)
{
  int err;

  switch (S->layout.format) {
  case FUSED_FORMAT_DIA:
    if ((err = FusedMalloc((void **)&S->d_offsets, sizeof(int) * (S->ndiag + 1), "the operator's diagonal offsets"))) return err;
    if ((err = FusedMalloc((void **)&S->dval, sizeof(double) * ((size_t)S->ndiag * n + 1), "the operator's diagonals"))) return err;
    FUSED_CUDA_CHECK(cudaMemcpy(S->d_offsets, S->offsets, sizeof(int) * S->ndiag, cudaMemcpyHostToDevice));
    FUSED_CUDA_CHECK(cudaMemsetAsync(S->dval, 0, sizeof(double) * (size_t)S->ndiag * n, 0));
    break;
  case FUSED_FORMAT_ELL:
  case FUSED_FORMAT_HYB:
    if (S->layout.K > 0) {
      const size_t cells = (size_t)S->layout.K * n;
      if ((err = FusedMalloc((void **)&S->ecol, sizeof(int) * (cells + 1), "the operator's ELL part"))) return err;
      if ((err = FusedMalloc((void **)&S->eval, sizeof(double) * (cells + 1), "the operator's ELL part"))) return err;
    }
    break;
  default: /* CSR keeps the uploaded arrays */
    break;
  }
  return FUSED_CUDA_OK;
}

/* Entry e of the CSR block finds its row by a search of the row starts
   (a thread an entry: a dense row is not one thread's walk), then its mirror
   by a search of its column's row. Any entry without a mirror of the same
   bits (a_ij == a_ji), out of the block, or out of order in its row (the
   search needs sorted columns, as PETSc keeps them) sets *asym. */
__global__ void SymmetryCheckKernel(int n, size_t nnz, const int *rowptr, const int *col, const double *val, int *asym)
{
  for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < nnz; e += (size_t)gridDim.x * blockDim.x) {
    if (*(volatile int *)asym) return; /* found already */
    int lo = 0, hi = n - 1;
    while (lo < hi) { /* the last row that starts at or before e */
      const int mid = (lo + hi + 1) >> 1;
      if ((size_t)rowptr[mid] <= e) lo = mid;
      else hi = mid - 1;
    }
    const int i = lo, j = col[e];
    bool      ok = j >= 0 && j < n && (e + 1 >= (size_t)rowptr[i + 1] || col[e + 1] > j);
    if (ok && j != i) {
      int a = rowptr[j], b = rowptr[j + 1] - 1;
      ok = false;
      while (a <= b) {
        const int m = a + ((b - a) >> 1), c = col[m];
        if (c == i) {
          ok = val[m] == val[e];
          break;
        }
        if (c < i) a = m + 1;
        else b = m - 1;
      }
    }
    if (!ok) atomicOr(asym, 1);
  }
}

/* Whether the n x n block of device CSR arrays equals its transpose,
   entry by entry and bit by bit (for a solver that may use a_ij == a_ji) */
static int CSRSymmetric(int n, size_t nnz, const int *rowptr, const int *col, const double *val, int *symmetric)
{
  int   *d_asym = NULL, asym = 1, err;
  size_t blocks = (nnz + FUSED_BLOCK - 1) / FUSED_BLOCK;

  *symmetric = 0;
  if (n == 0) return FUSED_CUDA_OK;
  if ((err = FusedMalloc((void **)&d_asym, sizeof(int), "the symmetry check's flag"))) return err;
  TRY_CUDA(cudaMemset(d_asym, 0, sizeof(int)));
  if (nnz) {
    SymmetryCheckKernel<<<(unsigned int)(blocks < 1 ? 1 : blocks < 65535 ? blocks : 65535), FUSED_BLOCK>>>(n, nnz, rowptr, col, val, d_asym);
    TRY_CUDA(cudaGetLastError()); /* SymmetryCheckKernel */
  }
  TRY_CUDA(cudaMemcpy(&asym, d_asym, sizeof(int), cudaMemcpyDeviceToHost));
  *symmetric = !asym;
done:
  (void)cudaFree(d_asym);
  return err;
}

/* The CSR arrays go up once (on_device: they are device arrays already, a
   CUDA PETSc's, and are only read); kernels scan the pattern, the host
   chooses the format, and kernels fill the storage from the device arrays.
   Uploaded values, the largest part, go up on a stream of their own while
   the scan runs. */
int FusedDevStorageBuild(int n, const int *rowptr, const int *col, const double *val, int requested, int on_device, int check_symmetry, FusedDevStorage *S)
{
  size_t       nnz;
  int         *d_rowptr = NULL, *d_col = NULL;
  double      *d_val = NULL;
  FusedPattern pat;
  PatternScan  scan;
  cudaStream_t values = NULL;
  char         msg[256];
  int          err, keep_csr = 0;

  memset(S, 0, sizeof(*S));
  memset(&pat, 0, sizeof(pat));
  memset(&scan, 0, sizeof(scan));
  if (on_device) {
    int last = 0;
    /* the other library's work on these arrays is done before ours reads them */
    TRY_CUDA(cudaDeviceSynchronize());
    TRY_CUDA(cudaMemcpy(&last, rowptr + n, sizeof(int), cudaMemcpyDeviceToHost));
    nnz      = (size_t)last;
    d_rowptr = (int *)rowptr, d_col = (int *)col, d_val = (double *)val;
  } else {
    nnz = (size_t)rowptr[n];
    if ((err = FusedMalloc((void **)&d_rowptr, sizeof(int) * ((size_t)n + 1), "the operator's CSR arrays"))) goto done;
    if ((err = FusedMalloc((void **)&d_col, sizeof(int) * (nnz + 1), "the operator's CSR arrays"))) goto done;
    if ((err = FusedMalloc((void **)&d_val, sizeof(double) * (nnz + 1), "the operator's CSR arrays"))) goto done;
    TRY_CUDA(cudaStreamCreateWithFlags(&values, cudaStreamNonBlocking));
    TRY_CUDA(cudaMemcpy(d_rowptr, rowptr, sizeof(int) * ((size_t)n + 1), cudaMemcpyHostToDevice));
    if (nnz) TRY_CUDA(cudaMemcpy(d_col, col, sizeof(int) * nnz, cudaMemcpyHostToDevice));
  }
  pat.n   = n;
  pat.nnz = nnz;
  if (n > 0 && (err = ScanPatternBegin(n, d_rowptr, d_col, requested == FUSED_FORMAT_AUTO || requested == FUSED_FORMAT_DIA, &scan))) goto done;
  /* from pageable memory this returns once the values are staged; the scan's kernels run meanwhile */
  if (nnz && !on_device) TRY_CUDA(cudaMemcpyAsync(d_val, val, sizeof(double) * nnz, cudaMemcpyHostToDevice, values));
  if (n > 0 && (err = ScanPatternEnd(d_rowptr, &scan, &pat, S->offsets))) goto done;
  if (n == 0) {
    static const unsigned int none[1] = {0};
    pat.ndiag = 0, pat.rowlen_count = none;
  }
  if (FusedFormatChoose(&pat, requested, &S->layout, msg, sizeof(msg))) {
    err = FusedCUDASetError(FUSED_CUDA_ERR_ARG, "%s", msg);
    goto done;
  }
  if (S->layout.format == FUSED_FORMAT_DIA) S->ndiag = pat.ndiag;
  if ((err = AllocateStorage(n, S))) goto done;
  if (values) TRY_CUDA(cudaStreamSynchronize(values)); /* the fill reads them */
  switch (S->layout.format) {
  case FUSED_FORMAT_DIA:
    if (n > 0 && S->ndiag > 0) {
      FillDIAKernel<<<FusedBuildGrid(n), FUSED_BLOCK>>>(n, d_rowptr, d_col, d_val, S->ndiag, S->d_offsets, S->dval);
      TRY_CUDA(cudaGetLastError()); /* FillDIAKernel */
    }
    break;
  case FUSED_FORMAT_CSR:
    if (on_device) { /* the other library's arrays stay its own: a copy */
      if ((err = FusedMalloc((void **)&S->rowptr, sizeof(int) * ((size_t)n + 1), "the operator's CSR arrays"))) goto done;
      if ((err = FusedMalloc((void **)&S->col, sizeof(int) * (nnz + 1), "the operator's CSR arrays"))) goto done;
      if ((err = FusedMalloc((void **)&S->val, sizeof(double) * (nnz + 1), "the operator's CSR arrays"))) goto done;
      TRY_CUDA(cudaMemcpy(S->rowptr, d_rowptr, sizeof(int) * ((size_t)n + 1), cudaMemcpyDeviceToDevice));
      if (nnz) TRY_CUDA(cudaMemcpy(S->col, d_col, sizeof(int) * nnz, cudaMemcpyDeviceToDevice));
      if (nnz) TRY_CUDA(cudaMemcpy(S->val, d_val, sizeof(double) * nnz, cudaMemcpyDeviceToDevice));
    } else {
      S->rowptr = d_rowptr, S->col = d_col, S->val = d_val;
      keep_csr  = 1;
    }
    break;
  default: /* ELL, HYB */
    if (S->layout.K > 0) {
      FillELLKernel<<<FusedBuildGrid(n), FUSED_BLOCK>>>(n, d_rowptr, d_col, d_val, S->layout.K, S->ecol, S->eval);
      TRY_CUDA(cudaGetLastError()); /* FillELLKernel */
    }
    if (S->layout.format == FUSED_FORMAT_HYB && (err = BuildTail(n, d_rowptr, d_col, d_val, S->layout.K, S->layout.tail, S))) goto done;
  }
  TRY_CUDA(cudaDeviceSynchronize()); /* the fill's errors here, before the CSR arrays go */
  if (check_symmetry && (err = CSRSymmetric(n, nnz, d_rowptr, d_col, d_val, &S->symmetric))) goto done;
done:
  if (values) { /* before the arrays it writes can go */
    const cudaError_t e = cudaStreamSynchronize(values);
    (void)cudaStreamDestroy(values);
    if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaStreamSynchronize (the values' upload)", __FILE__, __LINE__);
  }
  ScanPatternFree(&scan);
  if (n > 0) free((void *)pat.rowlen_count);
  if (!keep_csr && !on_device) {
    (void)cudaFree(d_rowptr);
    (void)cudaFree(d_col);
    (void)cudaFree(d_val);
  }
  if (err) FusedDevStorageFree(S);
  return err;
}

/* New values on the pattern the storage was built from, all on the device:
   the device CSR arrays (the same pattern) refill the storage in place. The
   layout is the pattern's alone, so it does not change. */
int FusedDevStorageRefill(FusedMatView *view, size_t tail, const int *rowptr, const int *col, const double *val, int check_symmetry, int *symmetric)
{
  const int n = view->n;
  size_t    nnz;
  int       last = 0;

  *symmetric = 0;
  if (n == 0) return FUSED_CUDA_OK;
  FUSED_CUDA_CHECK(cudaDeviceSynchronize()); /* the other library's writes to the arrays are done */
  FUSED_CUDA_CHECK(cudaMemcpy(&last, rowptr + n, sizeof(int), cudaMemcpyDeviceToHost));
  nnz = (size_t)last;
  switch (view->format) {
  case FUSED_FORMAT_DIA:
    FUSED_CUDA_CHECK(cudaMemsetAsync((double *)view->dval, 0, sizeof(double) * (size_t)view->ndiag * n, 0));
    if (view->ndiag > 0) {
      FillDIAKernel<<<FusedBuildGrid(n), FUSED_BLOCK>>>(n, rowptr, col, val, view->ndiag, view->offsets, (double *)view->dval);
      FUSED_CUDA_CHECK_LAUNCH("FillDIAKernel");
    }
    break;
  case FUSED_FORMAT_CSR:
    if (tail != nnz) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the pattern has %zu entries, the storage %zu", nnz, tail);
    if (nnz) FUSED_CUDA_CHECK(cudaMemcpy((double *)view->val, val, sizeof(double) * nnz, cudaMemcpyDeviceToDevice));
    break;
  default: /* ELL, HYB */
    if (view->K > 0) {
      FillELLKernel<<<FusedBuildGrid(n), FUSED_BLOCK>>>(n, rowptr, col, val, view->K, (int *)view->ecol, (double *)view->eval);
      FUSED_CUDA_CHECK_LAUNCH("FillELLKernel");
    }
    if (view->format == FUSED_FORMAT_HYB && tail > 0) {
      FillTailKernel<<<FusedBuildGrid(n), FUSED_BLOCK>>>(n, rowptr, col, val, view->K, view->rowptr, (int *)view->col, (double *)view->val);
      FUSED_CUDA_CHECK_LAUNCH("FillTailKernel");
    }
  }
  FUSED_CUDA_CHECK(cudaDeviceSynchronize());
  return check_symmetry ? CSRSymmetric(n, nnz, rowptr, col, val, symmetric) : FUSED_CUDA_OK;
}

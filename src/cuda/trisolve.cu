/* Two sparse triangular solves on the device, one after the other: a unit
   lower one, then an upper one with a stored inverse diagonal. The rows are
   grouped in levels (a row depends only on rows of earlier levels); the C
   side finds the factors and the levels (src/ksp/fusedilu.c), here nothing
   is known of where they come from.

   Each solve is one launch. Where its levels are narrow (a 2D problem in
   its natural order: thousands of levels of at most a thousand rows) one
   block of threads walks all of them, a __syncthreads() between levels;
   where they are wide, a cooperative grid, with grid barriers. Values
   solved in this launch are read past the L1 cache (__ldcg): another
   multiprocessor may have written them. */
#include <stdlib.h>
#include <string.h>
#include <cooperative_groups.h>
#include "cuda/fusedcuda_impl.cuh"

#define FUSED_TRI_THREADS    1024 /* one block's threads, for narrow levels */
#define FUSED_TRI_AHEAD   2    /* levels whose rows a thread has loaded ahead of the one it solves */
#define FUSED_TRI_RING    4096 /* positions the one block keeps in shared memory (32 KB; a power of 2) */

struct FusedTriView {
  int           n, nlevels, width; /* width: entries a position, ELL (0: CSR) */
  const int    *level_start, *row, *ptr, *col; /* col: the positions the entries read */
  const double *val, *dinv;
  double       *xp; /* the solution by position (scratch of n) */
};

struct FusedTriDev {
  FusedTriView view;
  int          grid; /* blocks of a cooperative launch (0: one block) */
  void        *mem[6];
};

struct FusedDevTri_s {
  int         device;
  FusedTriDev part[2]; /* lower, upper */
  double     *xp;      /* their scratch */
  size_t      bytes;
};

/* Where a thread reads the values of earlier positions: the one block keeps
   the last FUSED_TRI_RING positions it solved in shared memory as well
   (ring, NULL for a grid), which holds position q while q >= lo (the
   current level's end less the ring: the level's own writes overwrite
   nothing it reads); older ones, and a grid's, come from T.xp past L1. */
struct FusedTriSolved {
  const double *ring;
  int           lo;
  __device__ __forceinline__ double operator()(const FusedTriView &T, int q) const { return ring && q >= lo ? ring[q & (FUSED_TRI_RING - 1)] : __ldcg(&T.xp[q]); }
};

/* position p's sum over its entries: ELL of K (a runtime width where K = 0) or CSR */
template <int K>
__device__ __forceinline__ double FusedTriRowSum(const FusedTriView &T, int p, const FusedTriSolved &xs)
{
  double s = 0.0;
  if (T.width) {
    const int w = K ? K : T.width;
#pragma unroll
    for (int j = 0; j < w; j++) {
      const int q = T.col[(size_t)j * T.n + p];
      if (q >= 0) s += T.val[(size_t)j * T.n + p] * xs(T, q);
    }
  } else
    for (int k = T.ptr[p]; k < T.ptr[p + 1]; k++) s += T.val[k] * xs(T, T.col[k]);
  return s;
}

/* position p solved: into x by row, T.xp and the ring by position */
__device__ __forceinline__ void FusedTriStore(const FusedTriView &T, int p, int r, double value, double *ring, double *x)
{
  x[r]     = value;
  T.xp[p] = value;
  if (ring) ring[p & (FUSED_TRI_RING - 1)] = value;
}

/* x[row[p]] = (b[row[p]] - sum) * (dinv ? dinv[p] : 1) for p in [from, to) by stride */
template <int K>
__device__ __forceinline__ void FusedTriRows(const FusedTriView &T, int from, int to, int stride, const double *b, double *x, const FusedTriSolved &xs, double *ring)
{
  for (int p = from; p < to; p += stride) {
    const int r = T.row[p];
    double    s = __ldcg(&b[r]) - FusedTriRowSum<K>(T, p, xs);
    if (T.dinv) s *= T.dinv[p];
    FusedTriStore(T, p, r, s, ring, x);
  }
}

/* All levels of one triangle in one launch: by one block (GRID false,
   __syncthreads() between levels) or by a cooperative grid (grid
   barriers). Thread t solves position start[l] + t of each level l (and
   those nt further on, where a level is wider than the threads). Only the
   values of x its row reads are loaded after the barrier before a level:
   the loads that do not depend on the solution (its rows of the next
   levels: the row, the entries, the inverse diagonal, for CSR, K = 0, the
   row's range; the level starts after them) are issued FUSED_TRI_AHEAD
   levels ahead, and its right-hand side one level ahead, once its row is
   known. The entries name the positions they read (T.col), and each solved
   value goes to T.xp by position as well as to x by row: so the one block
   finds the recent ones in its shared-memory ring (FusedTriSolved), and a
   level costs a barrier and shared-memory loads, not a store and a load
   through L2 (H200, the 10^6-row convection-diffusion problem, 4,000
   levels an application: 1.6 us a level through L2). The factor's arrays do not stay in L2 from one application to the
   next (10^6 rows: 76 MB): those loads wait for memory. b may be x (the
   upper solve works in place): a row's right-hand side is read by its own
   thread before it writes the row. */
template <int K, bool GRID>
__global__ static void __launch_bounds__(GRID ? FUSED_BLOCK : (K > 4 ? FUSED_TRI_THREADS / 2 : FUSED_TRI_THREADS), 1) FusedTriKernel(FusedTriView T, const double *b, double *x)
{
  constexpr int E  = K ? K : 1; /* registers of the entries (K = 0: the row's range in c[0], v unused) */
  constexpr int P  = FUSED_TRI_AHEAD;
  const int     t  = GRID ? (int)(blockIdx.x * blockDim.x + threadIdx.x) : (int)threadIdx.x;
  const int     nt = GRID ? (int)(gridDim.x * blockDim.x) : (int)blockDim.x;
  const int     nl = T.nlevels;
  __shared__ double ring_mem[GRID ? 1 : FUSED_TRI_RING];
  double           *ring = GRID ? nullptr : ring_mem;
  int           s[P + 2] = {};             /* s[i]: the start of level l + i (past the last level: its end) */
  int           r[P + 1], c[P + 1][E], e[P + 1]; /* slot i: the thread's row of level l + i (-1: none) */
  double        v[P + 1][E], d[P + 1], rhs[P + 1]; /* rhs: loaded one level ahead, once its row is known */

  auto load = [&](int i) { /* slot i from the rows of level l + i, s[i] to s[i + 1] */
    const int p = s[i] + t;

    r[i] = -1;
    if (p >= s[i + 1]) return;
    r[i] = T.row[p];
    d[i] = T.dinv ? T.dinv[p] : 1.0;
    if constexpr (K > 0) {
#pragma unroll
      for (int j = 0; j < K; j++) {
        c[i][j] = T.col[(size_t)j * T.n + p];
        v[i][j] = T.val[(size_t)j * T.n + p];
      }
    } else {
      c[i][0] = T.ptr[p];
      e[i]    = T.ptr[p + 1];
    }
  };
#pragma unroll
  for (int i = 0; i < P + 2; i++) s[i] = T.level_start[i <= nl ? i : nl];
#pragma unroll
  for (int i = 0; i < P; i++) load(i);
  rhs[0] = r[0] >= 0 ? __ldcg(&b[r[0]]) : 0.0;
  for (int l = 0; l < nl; l++) {
    const int next = l + P + 2 <= nl ? T.level_start[l + P + 2] : s[P + 1];

    load(P); /* level l + P (none past the last) */
    if (r[1] >= 0) rhs[1] = __ldcg(&b[r[1]]); /* not written before level l + 1 */
    const FusedTriSolved xs = {ring, s[1] - FUSED_TRI_RING};
    if (r[0] >= 0) {
      double acc = rhs[0];
      if constexpr (K > 0) {
#pragma unroll
        for (int j = 0; j < K; j++)
          if (c[0][j] >= 0) acc -= v[0][j] * xs(T, c[0][j]);
      } else
        for (int k = c[0][0]; k < e[0]; k++) acc -= T.val[k] * xs(T, T.col[k]);
      FusedTriStore(T, s[0] + t, r[0], acc * d[0], ring, x);
    }
    FusedTriRows<K>(T, s[0] + t + nt, s[1], nt, b, x, xs, ring); /* a level wider than the threads */
    if constexpr (GRID) cooperative_groups::this_grid().sync();
    else __syncthreads();
#pragma unroll
    for (int i = 0; i < P; i++) {
      r[i]   = r[i + 1];
      d[i]   = d[i + 1];
      rhs[i] = rhs[i + 1];
      e[i] = e[i + 1];
#pragma unroll
      for (int j = 0; j < E; j++) {
        c[i][j] = c[i + 1][j];
        v[i][j] = v[i + 1][j];
      }
    }
#pragma unroll
    for (int i = 0; i < P + 1; i++) s[i] = s[i + 1];
    s[P + 1] = next;
  }
}

/* The kernel for a triangle's ELL width (0: CSR) and its threads a block */
static const void *FusedTriKernelFor(int width, bool grid, int *threads)
{
  *threads = grid ? FUSED_BLOCK : width > 4 ? FUSED_TRI_THREADS / 2 : FUSED_TRI_THREADS;
  switch (width) {
  case 2: return grid ? (const void *)FusedTriKernel<2, true> : (const void *)FusedTriKernel<2, false>;
  case 4: return grid ? (const void *)FusedTriKernel<4, true> : (const void *)FusedTriKernel<4, false>;
  case 8: return grid ? (const void *)FusedTriKernel<8, true> : (const void *)FusedTriKernel<8, false>;
  default: return grid ? (const void *)FusedTriKernel<0, true> : (const void *)FusedTriKernel<0, false>;
  }
}

static int FusedTriUpload(void **dst, const void *src, size_t bytes, const char *what, size_t *total)
{
  *dst = NULL;
  if (!bytes) return FUSED_CUDA_OK;
  if (int err = FusedMalloc(dst, bytes, what)) return err;
  FUSED_CUDA_CHECK(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
  *total += bytes;
  return FUSED_CUDA_OK;
}

static int FusedTriPartCreate(int device, const FusedTriHost *h, int wide_level, FusedTriDev *d, size_t *bytes)
{
  const size_t n = (size_t)h->n, nnz = h->width ? n * (size_t)h->width : (size_t)h->ptr[h->n];

  memset(d, 0, sizeof(*d));
  if (h->width < 0 || h->nlevels < 0 || (h->n > 0 && h->nlevels < 1)) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "a triangular factor of %d rows in %d levels with %d entries a row", h->n, h->nlevels, h->width);
  if (int err = FusedTriUpload(&d->mem[0], h->level_start, sizeof(int) * ((size_t)h->nlevels + 1), "a triangular factor's levels", bytes)) return err;
  if (int err = FusedTriUpload(&d->mem[1], h->row, sizeof(int) * n, "a triangular factor's row order", bytes)) return err;
  if (!h->width)
    if (int err = FusedTriUpload(&d->mem[2], h->ptr, sizeof(int) * (n + 1), "a triangular factor's row starts", bytes)) return err;
  if (int err = FusedTriUpload(&d->mem[3], h->col, sizeof(int) * nnz, "a triangular factor's columns", bytes)) return err;
  if (int err = FusedTriUpload(&d->mem[4], h->val, sizeof(double) * nnz, "a triangular factor's values", bytes)) return err;
  if (h->dinv)
    if (int err = FusedTriUpload(&d->mem[5], h->dinv, sizeof(double) * n, "a triangular factor's inverse diagonal", bytes)) return err;
  d->view = {h->n, h->nlevels, h->width, (const int *)d->mem[0], (const int *)d->mem[1], (const int *)d->mem[2], (const int *)d->mem[3], (const double *)d->mem[4], (const double *)d->mem[5], NULL};
  if (h->nlevels > 0 && h->n / h->nlevels > wide_level) {
    int         per_sm = 0, sms = 0, most, need = 0, threads;
    const void *kernel = FusedTriKernelFor(h->width, true, &threads);

    /* one attribute, not cudaGetDeviceProperties(): that reads them all (milliseconds on some drivers) at every rebuild */
    FUSED_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    FUSED_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
    for (int l = 0; l < h->nlevels; l++) need = need > h->level_start[l + 1] - h->level_start[l] ? need : h->level_start[l + 1] - h->level_start[l];
    need    = (need + threads - 1) / threads;
    most    = per_sm * sms;
    d->grid = need < most ? need : most;
    if (d->grid < 1) d->grid = 1;
    if (int err = FusedCUDAWarmCooperativeLaunch(device)) return err;
  }
  return FUSED_CUDA_OK;
}

extern "C" int FusedDevTriCreate(int device, const FusedTriHost *lower, const FusedTriHost *upper, int wide_level, FusedDevTri *tri)
{
  FusedDevTri t;

  *tri = NULL;
  if (lower->n != upper->n || lower->dinv || !upper->dinv) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "triangular factors of %d and %d rows (the lower one with a unit diagonal, the upper one with an inverse diagonal)", lower->n, upper->n);
  FUSED_CUDA_CHECK(cudaSetDevice(device));
  t = (FusedDevTri)calloc(1, sizeof(*t));
  if (!t) return FusedCUDASetError(FUSED_CUDA_ERR_MEM, "out of host memory for the triangular solves");
  t->device = device;
  *tri      = t;
  for (int k = 0; k < 2; k++)
    if (int err = FusedTriPartCreate(device, k ? upper : lower, wide_level, &t->part[k], &t->bytes)) return err; /* the caller destroys *tri */
  if (int err = FusedMalloc((void **)&t->xp, sizeof(double) * ((size_t)lower->n + 1), "the triangular solves' scratch vector")) return err;
  t->bytes += sizeof(double) * ((size_t)lower->n + 1);
  t->part[0].view.xp = t->part[1].view.xp = t->xp;
  return FUSED_CUDA_OK;
}

static int FusedTriLaunch(const FusedTriDev *d, const double *b, double *x, cudaStream_t stream)
{
  FusedTriView view = d->view;
  void        *args[] = {&view, &b, &x};
  int          threads;
  const void  *kernel = FusedTriKernelFor(view.width, d->grid > 0, &threads);

  if (!view.n) return FUSED_CUDA_OK;
  if (d->grid) FUSED_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, d->grid, threads, args, 0, stream));
  else FUSED_CUDA_CHECK(cudaLaunchKernel(kernel, 1, threads, args, 0, stream));
  return FUSED_CUDA_OK;
}

/* out = U^-1 L^-1 in; in may be out */
extern "C" int FusedDevTriApply(FusedDevTri tri, FusedCUDA ctx, const double *in, double *out)
{
  FUSED_CUDA_CHECK(cudaSetDevice(tri->device));
  if (int err = FusedTriLaunch(&tri->part[0], in, out, ctx->stream)) return err;
  return FusedTriLaunch(&tri->part[1], out, out, ctx->stream);
}

extern "C" int FusedDevTriGrids(FusedDevTri tri)
{
  return (tri->part[0].grid ? 1 : 0) + (tri->part[1].grid ? 2 : 0);
}

extern "C" size_t FusedDevTriBytes(FusedDevTri tri)
{
  return tri ? tri->bytes : 0;
}

extern "C" int FusedDevTriDestroy(FusedDevTri *tri)
{
  int err = FUSED_CUDA_OK;

  if (!*tri) return FUSED_CUDA_OK;
  if (cudaSetDevice((*tri)->device) != cudaSuccess) err = FusedCUDASetError(FUSED_CUDA_ERR_LIB, "cudaSetDevice(%d) while freeing the triangular solves", (*tri)->device);
  for (int k = 0; k < 2; k++)
    for (void *p : (*tri)->part[k].mem) {
      const cudaError_t e = p ? cudaFree(p) : cudaSuccess;
      if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaFree (a triangular factor's arrays)", __FILE__, __LINE__);
    }
  if ((*tri)->xp) {
    const cudaError_t e = cudaFree((*tri)->xp);
    if (e != cudaSuccess && !err) err = FusedCUDAFail(e, "cudaFree (the triangular solves' scratch vector)", __FILE__, __LINE__);
  }
  free(*tri);
  *tri = NULL;
  return err;
}

/* pcgfused on the GPU: the kernels of the fused steps of pcgfusedimpl.h, and
   the device loop. Sums, in the order of the C side: RZ, NORM, PY, YW, YZ;
   then the off-process rows' share of the last three, where a halo splits
   the product. */
#include <string.h>
#include <cooperative_groups.h>
#include "cuda/fusedcuda_impl.cuh"

/* the entry points of the compensated build of this file (FUSED_COMPENSATED) */
#if !FUSED_COMPENSATED
FUSED_TWIN_DECL(FusedPCGLoadKernels);
FUSED_TWIN_DECL(FusedPCGStart);
FUSED_TWIN_DECL(FusedPCGStartProject);
FUSED_TWIN_DECL(FusedPCGStartPreconditioned);
FUSED_TWIN_DECL(FusedPCGProductPreconditioned);
FUSED_TWIN_DECL(FusedPCGUpdate);
FUSED_TWIN_DECL(FusedPCGProduct);
FUSED_TWIN_DECL(FusedPCGProductLocal);
FUSED_TWIN_DECL(FusedPCGProductGhosts);
FUSED_TWIN_DECL(FusedPCGLoop);
#endif
FUSED_METHOD_NAMESPACE_BEGIN

enum { RZ, NORM, PY, YW, YZ, NSUMS, GHOST_PY = FUSED_PCG_GHOST, GHOST_YW, GHOST_YZ };
#define NSMAX FUSED_NULLSPACE_MAX

/* PCGFusedBeta() of pcgfusedimpl.h */
__device__ __forceinline__ double PCGBeta(double rz, double alpha, double yw, double yz)
{
  return 1.0 + alpha * (alpha * yw - 2.0 * yz) / rz;
}

__device__ __forceinline__ double PCGNormTerm(int normtype, double r, double z)
{
  return normtype == FUSED_NORM_PRECONDITIONED ? z * z : (normtype == FUSED_NORM_UNPRECONDITIONED ? r * r : 0.0);
}

/* The next r and p at row j from the last r, y, p: the rule the update
   applies to its rows and the single-kernel loop's product applies to the
   rows it reads, with explicit roundings so that both get the same bits.
   JACOBI (d is the inverse diagonal, else NULL) is a template argument: a
   branch inside the product's loop keeps the compiler from issuing the
   loads of all its entries at once. */
template <bool JACOBI, bool NULLSPACE = false>
struct PCGNext {
  static constexpr bool gather = true;
  static constexpr int  batch  = 4;
  const double         *r, *y, *p, *d; /* not restrict: the update may write r and p in place */
  double                alpha, beta;
  /* NULLSPACE: one basis vector n (the constant cnst, or vec), and z = B r - coef n */
  double                cnst, coef;
  const double         *vec;
  struct Entry {
    double r, y, p, d, n;
  };
  __device__ __forceinline__ double Residual(double r_last, double y_last) const { return __fma_rn(-alpha, y_last, r_last); }
  __device__ __forceinline__ double Preconditioned(double d_j, double r_next) const { return JACOBI ? __dmul_rn(d_j, r_next) : r_next; }
  __device__ __forceinline__ double Projected(double br, double n_j) const { return NULLSPACE ? __fma_rn(-coef, n_j, br) : br; }
  __device__ __forceinline__ double Direction(double p_last, double z_next) const { return __fma_rn(beta, p_last, z_next); }
  __device__ __forceinline__ Entry  Load(int j) const { return Entry{r[j], y[j], p[j], JACOBI ? d[j] : 1.0, NULLSPACE ? (vec ? vec[j] : cnst) : 0.0}; }
  __device__ __forceinline__ double Value(const Entry &e) const { return Direction(e.p, Projected(Preconditioned(e.d, Residual(e.r, e.y)), e.n)); }
  __device__ __forceinline__ double operator()(int j) const { return Value(Load(j)); }
};

/* One row of the update: x += alpha p, r -= alpha y, p = B r + beta p, with
   the new r and p written to r_out and p_out; adds to acc[RZ] and acc[NORM],
   returns the new p and sets *z_out to the new z */
template <bool JACOBI, bool NULLSPACE = false>
__device__ __forceinline__ double PCGUpdateRowTo(const FusedPCGVecs &v, const PCGNext<JACOBI, NULLSPACE> &next, int i, double *r_out, double *p_out, FusedSum *acc, double *z_out, double *br_out = NULL, double *n_out = NULL, double *y_out = NULL)
{
  const auto   last = next.Load(i);
  const double r    = next.Residual(last.r, last.y);
  const double br   = next.Preconditioned(last.d, r);
  const double z    = next.Projected(br, last.n);
  const double p    = next.Direction(last.p, z);
  if constexpr (NULLSPACE) {
    *br_out = br;
    *n_out  = last.n;
  }
  v.x[i]            = __fma_rn(next.alpha, last.p, v.x[i]);
  p_out[i]          = p;
  r_out[i]          = r;
  FusedAddProduct(acc[RZ], r, z);
  acc[NORM] += PCGNormTerm(v.normtype, r, z);
  *z_out = z;
  if (y_out) *y_out = last.y;
  return p;
}

/* With the PC applied between the kernels z and w are stored, and z
   follows r: z -= alpha w, as B r' = B r - alpha B y */
__device__ __forceinline__ void PCGUpdateRowStored(const FusedPCGVecs &v, int i, double alpha, double beta, FusedSum (&acc)[2])
{
  const double p = v.p[i];
  const double r = __fma_rn(-alpha, v.y[i], v.r[i]);
  const double z = __fma_rn(-alpha, v.w[i], v.z[i]);
  v.x[i]         = __fma_rn(alpha, p, v.x[i]);
  v.r[i]         = r;
  v.z[i]         = z;
  v.p[i]         = __fma_rn(beta, p, z);
  FusedAddProduct(acc[RZ], r, z);
  acc[NORM] += PCGNormTerm(v.normtype, r, z);
}

/* SYMMETRIC: acc[PY] (the third sum, in the slot of the product's PY)
   gets <p', y> of the new p and the last y, for <y', z'> = <p', y'> -
   beta <p', y> (PCGProductKernel) */
template <bool SYMMETRIC = false>
__device__ __forceinline__ void PCGUpdateRow(const FusedPCGVecs &v, int i, double alpha, double beta, FusedSum (&acc)[SYMMETRIC ? 3 : 2])
{
  double z, p, y_last;
  if (v.d) p = PCGUpdateRowTo(v, PCGNext<true>{v.r, v.y, v.p, v.d, alpha, beta, 0.0, 0.0, NULL}, i, v.r, v.p, acc, &z, NULL, NULL, SYMMETRIC ? &y_last : NULL);
  else p = PCGUpdateRowTo(v, PCGNext<false>{v.r, v.y, v.p, NULL, alpha, beta, 0.0, 0.0, NULL}, i, v.r, v.p, acc, &z, NULL, NULL, SYMMETRIC ? &y_last : NULL);
  if constexpr (SYMMETRIC) FusedAddProduct(acc[PY], p, y_last);
}

/* z = B r at row i: stored where the PC runs between kernels */
__device__ __forceinline__ double PCGPreconditioned(const FusedPCGVecs &v, int i)
{
  return v.z ? v.z[i] : (v.d ? v.d[i] * v.r[i] : v.r[i]);
}

/* One row of the product: y = A p; adds to PY, YW and YZ (w = B y is not
   stored; with the PC between kernels YW follows in a kernel of its own).
   SYMMETRIC: not YZ, which then comes from PY (PCGProductReduce()), and r
   is not read. */
template <bool SYMMETRIC = false>
__device__ __forceinline__ void PCGProductRow(const FusedMatView &A, const FusedPCGVecs &v, int i, FusedSum (&acc)[SYMMETRIC ? 2 : 3])
{
  const double p = v.p[i];
  const double y = FusedRowProduct(A, v.p, i);
  v.y[i]         = y;
  FusedAddProduct(acc[0], p, y);
  FusedAddProduct(acc[1], y, (v.d ? v.d[i] * y : y));
  if constexpr (!SYMMETRIC) FusedAddProduct(acc[2], y, PCGPreconditioned(v, i));
}

/* PCGFusedNorm() of pcgfused.c */
__device__ __forceinline__ double PCGNorm(int normtype, const double s[NSUMS])
{
  return normtype == FUSED_NORM_NATURAL ? sqrt(fabs(s[RZ])) : (normtype == FUSED_NORM_NONE ? 0.0 : sqrt(fabs(s[NORM])));
}

/* The host loop's look at iteration it, made on the device: the norm it
   records, and whether the host must look (the test, or a check before alpha) */
__device__ __forceinline__ bool PCGMustStop(int normtype, const FusedConvergence &conv, int it, const double s[NSUMS], double *rnorm)
{
  const double rz = s[RZ], py = s[PY], yw = s[YW], yz = s[YZ];
  *rnorm = PCGNorm(normtype, s);
  return FusedMustStop(conv, it, *rnorm) || !isfinite(rz) || !isfinite(py) || !isfinite(yw) || !isfinite(yz) || rz * conv.sign_rz <= 0.0 || py * conv.sign_py <= 0.0;
}

/* The graph loop's test of the iteration a product completes (one thread of
   its last block): the next iteration's number, its norm in hist, and a
   stop where the host must look */
__device__ __forceinline__ void PCGLoopTest(int normtype, FusedLoopState *state, const double s[NSUMS], double *hist, cudaGraphConditionalHandle handle)
{
  const int it = ++state->it;
  double    rnorm;
  if (PCGMustStop(normtype, state->conv, it, s, &rnorm)) {
    state->stop = 1;
    cudaGraphSetConditional(handle, 0);
  }
  hist[it] = rnorm;
}

/* r = b - A x (or b), z = B r, p = z; RZ and NORM */
__global__ void PCGStartKernel(FusedMatView A, FusedPCGVecs v, int guess_zero, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[2] = {0.0, 0.0};
  FUSED_GRID_LOOP(i, A.n)
  {
    const double r = guess_zero ? v.b[i] : v.b[i] - FusedRowProduct(A, v.x, i);
    const double z = v.d ? v.d[i] * r : r;
    v.r[i]         = r;
    v.p[i]         = z;
    FusedAddProduct(acc[0], r, z);
    acc[1] += PCGNormTerm(v.normtype, r, z);
  }
  FusedReduce<2>(acc, partials, sums, ticket, RZ);
}

/* p = z = B r after the start made r and the PC z; RZ and NORM */
__global__ void PCGStartPreconditionedKernel(int n, FusedPCGVecs v, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[2] = {0.0, 0.0};
  FUSED_GRID_LOOP(i, n)
  {
    const double r = v.r[i], z = v.z[i];
    v.p[i]         = z;
    FusedAddProduct(acc[0], r, z);
    acc[1] += PCGNormTerm(v.normtype, r, z);
  }
  FusedReduce<2>(acc, partials, sums, ticket, RZ);
}

/* PCGUpdateKernel's step with z and w stored (the PC between kernels): a
   kernel of its own, so that the fused one keeps its registers */
__global__ void PCGUpdateStoredKernel(int n, FusedPCGVecs v, double alpha, double beta, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[2] = {0.0, 0.0};
  FUSED_GRID_LOOP(i, n) PCGUpdateRowStored(v, i, alpha, beta, acc);
  FusedReduce<2>(acc, partials, sums, ticket, RZ);
}

/* YW = <y, w> once the PC made w = B y */
__global__ void PCGProductPreconditionedKernel(int n, FusedPCGVecs v, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[1] = {0.0};
  FUSED_GRID_LOOP(i, n) FusedAddProduct(acc[0], v.y[i], v.w[i]);
  FusedReduce<1>(acc, partials, sums, ticket, YW);
}

/* The untested first iteration of a graph loop, in its first kernel: every
   block tests the same sums and comes to the same verdict; block 0 records
   the tolerances, the norm and a stop (the kernels after it clear the loop's
   condition). No block reads ttol or dtol in this kernel. Not inlined: it
   runs once a solve, and inlined it made the update spill. */
__device__ __noinline__ bool PCGJudgeFirst(int normtype, FusedLoopState *state, const double *sums, double *hist)
{
  const double     s[NSUMS] = {sums[RZ], sums[NORM], sums[PY], sums[YW], sums[YZ]};
  FusedConvergence conv     = state->conv;
  double           rnorm;
  FusedSetTolerances(conv, PCGNorm(normtype, s), sums);
  const bool stop = PCGMustStop(normtype, conv, 0, s, &rnorm);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    state->conv.ttol = conv.ttol;
    state->conv.dtol = conv.dtol;
    hist[0]          = rnorm;
    if (stop) state->stop = 1;
  }
  return stop;
}

/* Where an update kernel of the device loop begins: nothing to do where a
   kernel before it stopped (true); else alpha and beta from the last sums,
   as the host computes them, after the test of an untested first iteration */
__device__ __forceinline__ bool PCGLoopUpdateBegins(const FusedPCGVecs &v, FusedLoopState *state, const double *sums, double *hist, double *alpha, double *beta)
{
  if (FusedLoopKernelStopped(state)) return true;
  if (state) {
    const double rz = sums[RZ], py = sums[PY];
    if (state->conv.judge_first && state->it == 0 && PCGJudgeFirst(v.normtype, state, sums, hist)) return true;
    *alpha = rz / py;
    *beta  = PCGBeta(rz, *alpha, sums[YW], sums[YZ]);
  }
  return false;
}

/* Where a product kernel of the device loop finds the update before it
   stopped at the first iteration: the loop ends here */
__device__ __forceinline__ bool PCGLoopProductStopped(FusedLoopState *state, cudaGraphConditionalHandle handle)
{
  if (!FusedLoopKernelStopped(state)) return false;
  if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(handle, 0);
  return true;
}

/* The product's PY, YW and YZ; in the device loop the last block also tests
   the iteration they complete. SYMMETRIC (A known to be): YZ = <y,z> =
   <p,y> - beta <p, y_last>, the last term from the update before
   (sums[FUSED_PCG_SYM_PY_LAST], times beta), as z = p - beta p_last and
   <y, p_last> = <p, A p_last> */
template <bool SYMMETRIC = false>
__device__ __forceinline__ void PCGProductReduce(FusedSum (&acc)[SYMMETRIC ? 2 : 3], int normtype, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist, cudaGraphConditionalHandle handle)
{
  if (FusedReduce<SYMMETRIC ? 2 : 3>(acc, partials, sums, ticket, PY) && threadIdx.x == 0) {
    double yz;
    if constexpr (SYMMETRIC) {
      yz       = FusedSumValue(acc[0]) - sums[FUSED_PCG_SYM_PY_LAST];
      sums[YZ] = yz;
    } else yz = FusedSumValue(acc[2]);
    if (state) {
      const double s[NSUMS] = {sums[RZ], sums[NORM], FusedSumValue(acc[0]), FusedSumValue(acc[1]), yz};
      PCGLoopTest(normtype, state, s, hist, handle);
    }
  }
}

/* x += alpha p, r -= alpha y, p = B r + beta p; RZ and NORM. In the device
   loop alpha and beta come from the last sums, as the host computes them;
   the first kernel of a loop whose first iteration is untested tests it
   (every block the same sums, the same verdict; block 0 records it).
   Under 40 registers the row's five loads are issued together (left to
   itself the compiler loads x after the others: SASS); H100, the graph on
   160^3: 205.8-214.4 us per iteration against 212.7-216.2 in three
   alternating pairs. */
template <bool SYMMETRIC = false>
__global__ void __launch_bounds__(FUSED_BLOCK, 6) PCGUpdateKernel(int n, FusedPCGVecs v, double alpha, double beta, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist)
{
  FusedSum acc[SYMMETRIC ? 3 : 2] = {};
  if (PCGLoopUpdateBegins(v, state, sums, hist, &alpha, &beta)) return;
  FUSED_GRID_LOOP(i, n) PCGUpdateRow<SYMMETRIC>(v, i, alpha, beta, acc);
  if constexpr (SYMMETRIC) {
    /* the third sum through PY's partials (free until the product) to its own slot, times beta */
    if (FusedReduce<3>(acc, partials, sums, ticket, RZ, 2, FUSED_PCG_SYM_PY_LAST) && threadIdx.x == 0) sums[FUSED_PCG_SYM_PY_LAST] *= beta;
  } else FusedReduce<2>(acc, partials, sums, ticket, RZ);
}

/* y = A p, w = B y (not stored); PY, YW and YZ. In the device loop the
   last block also tests the iteration it completes. SYMMETRIC: after
   PCGUpdateKernel<true>, which left beta <p, y_last>. */
template <bool SYMMETRIC = false>
__global__ void PCGProductKernel(FusedMatView A, FusedPCGVecs v, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist, cudaGraphConditionalHandle handle)
{
  FusedSum acc[SYMMETRIC ? 2 : 3] = {};
  if (PCGLoopProductStopped(state, handle)) return;
  FUSED_GRID_LOOP(i, A.n) PCGProductRow<SYMMETRIC>(A, v, i, acc);
  PCGProductReduce<SYMMETRIC>(acc, v.normtype, partials, sums, ticket, state, hist, handle);
}

/* The rows that read ghost values, after PCGProductKernel ran on the local
   block alone: y += A_ghost p, and PY, YW, YZ corrected by what that adds,
   <p, y_g>, <y_l + y_g, B (y_l + y_g)> - <y_l, B y_l> = <y_g, B (2 y_l + y_g)>
   and <y_g, z>. */
__global__ void PCGGhostKernel(int nbound, const int *brow, const int *bptr, FusedMatView A, FusedPCGVecs v, double *partials, double *sums, unsigned int *ticket, FusedPost *post, unsigned int seq)
{
  FusedSum acc[3] = {0.0, 0.0, 0.0};
  FUSED_GRID_LOOP(k, nbound)
  {
    const int    i  = brow[k];
    const double yg = FusedGhostRowProduct(A, i, bptr[k], bptr[k + 1]);
    const double yl = v.y[i];
    v.y[i]          = yl + yg;
    FusedAddProduct(acc[0], v.p[i], yg);
    FusedAddProduct(acc[1], (v.d ? v.d[i] : 1.0) * yg, (2.0 * yl + yg));
    FusedAddProduct(acc[2], yg, PCGPreconditioned(v, i));
  }
  if (FusedReduce<3>(acc, partials, sums, ticket, GHOST_PY) && threadIdx.x == 0) {
    sums[PY] += FusedSumValue(acc[0]);
    sums[YW] += FusedSumValue(acc[1]);
    sums[YZ] += FusedSumValue(acc[2]);
    FusedPostSums(post, seq, sums, NSUMS);
  }
}

/* ---- point-block Jacobi (v.dblock, v.bs; FUSED_TILE_LOOP) --------------
   Kernels of their own, so that the others keep their registers. */

/* PCGStartKernel with point-block Jacobi */
__global__ void __launch_bounds__(FUSED_BLOCK) PCGStartBlockKernel(FusedMatView A, FusedPCGVecs v, int guess_zero, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[2] = {0.0, 0.0};
  FusedBlockTiles(
    A.n, v.bs,
    [=](int i) {
      const double r = guess_zero ? v.b[i] : v.b[i] - FusedRowProduct(A, v.x, i);
      v.r[i]         = r;
      return r;
    },
    [=, &acc](int i, const double *rs, int t0) {
      const double r = rs[threadIdx.x], z = FusedBlockRow(v.dblock, v.bs, i, rs, t0);
      v.p[i] = z;
      FusedAddProduct(acc[0], r, z);
      acc[1] += PCGNormTerm(v.normtype, r, z);
    });
  FusedReduce<2>(acc, partials, sums, ticket, RZ);
}

/* PCGUpdateKernel with point-block Jacobi */
__global__ void __launch_bounds__(FUSED_BLOCK) PCGUpdateBlockKernel(int n, FusedPCGVecs v, double alpha, double beta, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist)
{
  FusedSum acc[2] = {0.0, 0.0};
  double   p = 0.0;
  if (PCGLoopUpdateBegins(v, state, sums, hist, &alpha, &beta)) return; /* the same verdict in every thread */
  FusedBlockTiles(
    n, v.bs,
    [=, &p](int i) {
      const double r = __fma_rn(-alpha, v.y[i], v.r[i]);
      p              = v.p[i];
      v.x[i]         = __fma_rn(alpha, p, v.x[i]);
      v.r[i]         = r;
      return r;
    },
    [=, &acc, &p](int i, const double *rs, int t0) {
      const double r = rs[threadIdx.x], z = FusedBlockRow(v.dblock, v.bs, i, rs, t0);
      v.p[i] = __fma_rn(beta, p, z);
      FusedAddProduct(acc[RZ], r, z);
      acc[NORM] += PCGNormTerm(v.normtype, r, z);
    });
  FusedReduce<2>(acc, partials, sums, ticket, RZ);
}

/* PCGProductKernel with point-block Jacobi: <y, B y> from the tile of y,
   and <y, B r> as <B^T y, r> */
__global__ void __launch_bounds__(FUSED_BLOCK) PCGProductBlockKernel(FusedMatView A, FusedPCGVecs v, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist, cudaGraphConditionalHandle handle)
{
  FusedSum acc[3] = {0.0, 0.0, 0.0};
  double   p = 0.0;
  if (PCGLoopProductStopped(state, handle)) return;
  FusedBlockTiles(
    A.n, v.bs,
    [=, &p](int i) {
      p              = v.p[i]; /* before the row's product, as PCGProductRow */
      const double y = FusedRowProduct(A, v.p, i);
      v.y[i]         = y;
      return y;
    },
    [=, &acc, &p](int i, const double *ys, int t0) {
      const double y = ys[threadIdx.x];
      FusedAddProduct(acc[0], p, y);
      FusedAddProduct(acc[1], y, FusedBlockRow(v.dblock, v.bs, i, ys, t0));
      FusedAddProduct(acc[2], v.r[i], FusedBlockColumn(v.dblock, v.bs, i, ys, t0, (int)threadIdx.x - t0));
    });
  PCGProductReduce(acc, v.normtype, partials, sums, ticket, state, hist, handle);
}

/* ---- with a null space (FusedNullSpace) --------------------------------
   z = B r - sum_k e_k n_k and w = B y - sum_k c_k n_k are formed on the fly,
   never stored. The update takes e_k for its r' = r - alpha y from the last
   sums (<B r, n_k> - alpha <B y, n_k>) and sums <B r', n_k> afresh for the
   next; the product sums <B y, n_k> and <y, n_k> beside its own, and its raw
   <y,w> and <y,z> are folded by whoever reads them (FusedPCGNullSpaceFold).
   So the synchronization points stay one per iteration. Kernels of their
   own, so that the others keep their registers. */

/* M (1, or at most NSMAX) is how many basis vectors the kernels make room
   for: one, the constants alone, is the common case, and its kernels keep
   fewer sums in registers (H100, 10^6 rows: NSMAX's took 90 registers) */

/* z = B r - sum_k coef_k n_k at row i from br = B r, adding br n_k to acc[k] */
template <int M>
__device__ __forceinline__ double PCGProjected(const FusedNullSpace &ns, const double *coef, double br, int i, FusedSum *acc)
{
  double z = br;
#pragma unroll
  for (int k = 0; k < M; k++) {
    if (k < ns.m) {
      const double nk = FusedNullSpaceBasis(ns, k, i);
      z               = __fma_rn(-coef[k], nk, z);
      FusedAddProduct(acc[k], br, nk);
    }
  }
  return z;
}

/* r = b - A x (or b); <B r, n_k> */
template <int M>
__global__ void PCGStartNullKernel(FusedMatView A, FusedPCGVecs v, int guess_zero, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[M] = {};
  FUSED_GRID_LOOP(i, A.n)
  {
    const double r  = guess_zero ? v.b[i] : v.b[i] - FusedRowProduct(A, v.x, i);
    const double br = v.d ? v.d[i] * r : r;
    v.r[i]          = r;
#pragma unroll
    for (int k = 0; k < M; k++)
      if (k < v.ns.m) FusedAddProduct(acc[k], br, FusedNullSpaceBasis(v.ns, k, i));
  }
  FusedReduce<M>(acc, partials, sums, ticket, FUSED_PCG_BR_N);
}

/* p = z once the start's <B r, n_k> are known (v.ns.coef); RZ, NORM and <B r, n_k> */
template <int M>
__global__ void PCGStartProjectKernel(int n, FusedPCGVecs v, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[2 + M] = {};
  FUSED_GRID_LOOP(i, n)
  {
    const double r = v.r[i], br = v.d ? v.d[i] * r : r;
    const double z = PCGProjected<M>(v.ns, v.ns.coef, br, i, acc + 2);
    v.p[i]         = z;
    FusedAddProduct(acc[RZ], r, z);
    acc[NORM] += PCGNormTerm(v.normtype, r, z);
  }
  FusedReduce<2 + M>(acc, partials, sums, ticket, RZ, 2, FUSED_PCG_BR_N);
}

/* PCGUpdateKernel with the null space removed from z' */
template <int M>
__global__ void PCGUpdateNullKernel(int n, FusedPCGVecs v, double alpha, double beta, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state)
{
  FusedSum acc[2 + M] = {};
  double   coef[M];
  if (FusedLoopKernelStopped(state)) return;
#pragma unroll
  for (int k = 0; k < M; k++) coef[k] = v.ns.coef[k];
  if (state) {
    const double rz = sums[RZ], py = sums[PY];
    double       yw, yz;
    FusedPCGNullSpaceFold(sums, NSMAX, v.ns.m, &yw, &yz);
    alpha = rz / py;
    beta  = PCGBeta(rz, alpha, yw, yz);
#pragma unroll
    for (int k = 0; k < M; k++) coef[k] = k < v.ns.m ? FusedPCGNullSpaceCoef(sums, NSMAX, k, alpha) : 0.0;
  }
  FUSED_GRID_LOOP(i, n)
  {
    /* the row's five loads issued together, as PCGUpdateKernel's */
    const double p = v.p[i], y = v.y[i], r_last = v.r[i], d = v.d ? v.d[i] : 1.0, x = v.x[i];
    const double r  = __fma_rn(-alpha, y, r_last);
    const double br = v.d ? __dmul_rn(d, r) : r;
    const double z  = PCGProjected<M>(v.ns, coef, br, i, acc + 2);
    v.x[i]          = __fma_rn(alpha, p, x);
    v.r[i]          = r;
    v.p[i]          = __fma_rn(beta, p, z);
    FusedAddProduct(acc[RZ], r, z);
    acc[NORM] += PCGNormTerm(v.normtype, r, z);
  }
  FusedReduce<2 + M>(acc, partials, sums, ticket, RZ, 2, FUSED_PCG_BR_N);
}

/* The product's row sums with a null space: PY, raw YW and YZ, then
   <B y, n_k> and <y, n_k>, for a row whose y grew by dy (the whole row, or
   the off-process share) */
template <int M>
__device__ __forceinline__ void PCGProductNullSums(const FusedPCGVecs &v, int i, double p, double y_old, double dy, FusedSum (&acc)[3 + 2 * M])
{
  const double d = v.d ? v.d[i] : 1.0;
  FusedAddProduct(acc[0], p, dy);
  FusedAddProduct(acc[1], d * dy, (2.0 * y_old + dy));
  FusedAddProduct(acc[2], dy, PCGPreconditioned(v, i));
#pragma unroll
  for (int k = 0; k < M; k++) {
    if (k < v.ns.m) {
      const double nk = FusedNullSpaceBasis(v.ns, k, i);
      FusedAddProduct(acc[3 + k], d * dy, nk);
      FusedAddProduct(acc[3 + M + k], dy, nk);
    }
  }
}

/* PCGProductKernel with the null space's sums: PY, YW, YZ and <B y, n_k>
   in one run of slots, <y, n_k> in another */
template <int M>
__global__ void PCGProductNullKernel(FusedMatView A, FusedPCGVecs v, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist, cudaGraphConditionalHandle handle)
{
  FusedSum acc[3 + 2 * M] = {};
  if (FusedLoopKernelStopped(state)) {
    if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(handle, 0);
    return;
  }
  FUSED_GRID_LOOP(i, A.n)
  {
    const double p = v.p[i]; /* before the row's product, as PCGProductRow */
    const double y = FusedRowProduct(A, v.p, i);
    v.y[i]         = y;
    PCGProductNullSums<M>(v, i, p, 0.0, y, acc);
  }
  if (FusedReduce<3 + 2 * M>(acc, partials, sums, ticket, PY, 3 + M, FUSED_PCG_Y_N) && state && threadIdx.x == 0) {
    double s[NSUMS] = {sums[RZ], sums[NORM], sums[PY], 0.0, 0.0};
    FusedPCGNullSpaceFold(sums, NSMAX, v.ns.m, &s[YW], &s[YZ]);
    PCGLoopTest(v.normtype, state, s, hist, handle);
  }
}

/* PCGGhostKernel with the null space's sums */
template <int M>
__global__ void PCGGhostNullKernel(int nbound, const int *brow, const int *bptr, FusedMatView A, FusedPCGVecs v, double *partials, double *sums, unsigned int *ticket, FusedPost *post, unsigned int seq)
{
  FusedSum acc[3 + 2 * M] = {};
  FUSED_GRID_LOOP(k, nbound)
  {
    const int    i  = brow[k];
    const double yg = FusedGhostRowProduct(A, i, bptr[k], bptr[k + 1]);
    const double yl = v.y[i];
    v.y[i]          = yl + yg;
    PCGProductNullSums<M>(v, i, v.p[i], yl, yg, acc);
  }
  if (FusedReduce<3 + 2 * M>(acc, partials, sums, ticket, FUSED_PCG_GHOST) && threadIdx.x == 0) {
    sums[PY] += FusedSumValue(acc[0]);
    sums[YW] += FusedSumValue(acc[1]);
    sums[YZ] += FusedSumValue(acc[2]);
    for (int k = 0; k < M; k++) {
      sums[FUSED_PCG_BY_N + k] += FusedSumValue(acc[3 + k]);
      sums[FUSED_PCG_Y_N + k] += FusedSumValue(acc[3 + M + k]);
    }
    FusedPostSums(post, seq, sums, FUSED_PCG_SUMS);
  }
}

/* a null-space kernel for v's basis: M = 1 where it is one vector */
#define PCG_NULL_KERNEL(kernel, v) ((v).ns.m == 1 ? kernel<1> : kernel<NSMAX>)

/* The tests of a single-kernel loop: ttol and dtol from the first sums
   where the first iteration is untested. Not inlined: it runs once, and
   inlined it made the kernel spill (512 threads with long rows and Jacobi:
   64 bytes against none, ptxas) */
__device__ __noinline__ FusedConvergence PCGLoopConvergence(FusedConvergence conv, double rnorm, double rhs_square)
{
  if (conv.judge_first) FusedSetTolerancesFrom(conv, rnorm, rhs_square);
  return conv;
}

/* The same where the loop goes on from the host's start: iteration 0's sums
   and b's norm from sums[], read in here (read in the kernel, they made the
   null-space kernels spill more: ptxas) */
__device__ __noinline__ FusedConvergence PCGLoopConvergenceGoesOn(int normtype, FusedConvergence conv, const double *sums)
{
  if (conv.judge_first) {
    const double s[NSUMS] = {sums[RZ], sums[NORM], sums[PY], sums[YW], sums[YZ]};
    FusedSetTolerances(conv, PCGNorm(normtype, s), sums);
  }
  return conv;
}

/* The solve's start vector p's entry j, computed where the product reads it
   (a zero guess: r = b, p = B b), so that the start needs no grid barrier
   before its product */
template <bool JACOBI>
struct PCGStartDirection {
  static constexpr bool gather = false;
  const double *b, *d;
  __device__ __forceinline__ double operator()(int j) const { return JACOBI ? d[j] * b[j] : b[j]; }
};

/* The solve's start inside the single kernel, as FusedPCGStart() and
   FusedPCGProduct() make it in kernels of their own: r = b - A x (or b,
   and x = 0), p = z = B r, y = A p, and iteration 0's sums as partials at
   part (the first iteration's slot), with the square of b's norm in the
   method's norm at part_rhs where the test needs it (rhs). Every block
   goes through the same grid barriers. Inlined: a call would copy the
   kernel's arguments to the stack (480 bytes, and spills in the loop of
   the 512-thread kernels, ptxas). */
template <bool JACOBI, int BLOCK, bool LONG_ROWS, bool GROUPS>
__device__ __forceinline__ void PCGSingleStart(const FusedMatView &A, const FusedPCGVecs &v, int start, bool rhs, double *part, double *part_rhs, int lanes)
{
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  FusedSum                       acc[NSUMS] = {}, rhs_acc[1] = {};
  /* row i's r, z and p from its A x (none: a zero guess); RZ, NORM and b's norm */
  auto residual = [&](int i, double axi) {
    const double bi = v.b[i];
    const double r  = start == FUSED_LOOP_START_ZERO ? bi : bi - axi;
    const double z  = JACOBI ? v.d[i] * r : r;
    if (start == FUSED_LOOP_START_ZERO) v.x[i] = 0.0;
    v.r[i] = r;
    v.p[i] = z;
    FusedAddProduct(acc[RZ], r, z);
    acc[NORM] += PCGNormTerm(v.normtype, r, z);
    if (rhs) FusedAddRhsNormTerm(rhs_acc[0], v.normtype, bi, JACOBI ? v.d[i] * bi : bi);
    return z;
  };
  /* row i's y = A p and PY, YW, YZ */
  auto product = [&](int i, double yi, double pi, double zi) {
    v.y[i] = yi;
    FusedAddProduct(acc[PY], pi, yi);
    FusedAddProduct(acc[YW], yi, JACOBI ? v.d[i] * yi : yi);
    FusedAddProduct(acc[YZ], yi, zi);
  };
  if (start == FUSED_LOOP_START_ZERO) {
    /* p = B b is known everywhere: the product reads it from b */
    const PCGStartDirection<JACOBI> p0 = {v.b, v.d};
    if constexpr (LONG_ROWS) {
      FusedLongRowsOf<FUSED_LONG_BATCH>(A, p0);
      grid.sync();
    }
    auto row = [&](int i, double yi) {
      const double zi = residual(i, 0.0);
      product(i, yi, zi, zi);
    };
    if constexpr (GROUPS) FusedRowsInGroups<BLOCK>(A, p0, lanes, row);
    else {
      FUSED_GRID_LOOP(i, A.n) row(i, FusedRowProductOf<PCGStartDirection<JACOBI>, LONG_ROWS>(A, p0, i));
    }
  } else {
    const FusedStored x = {v.x}, p = {v.p};
    if constexpr (LONG_ROWS) {
      FusedLongRowsOf<FUSED_LONG_BATCH>(A, x);
      grid.sync();
    }
    if constexpr (GROUPS) FusedRowsInGroups<BLOCK>(A, x, lanes, [&](int i, double axi) { (void)residual(i, axi); });
    else {
      FUSED_GRID_LOOP(i, A.n)(void) residual(i, FusedRowProductOf<FusedStored, LONG_ROWS>(A, x, i));
    }
    grid.sync(); /* p complete before the product reads it */
    if constexpr (LONG_ROWS) {
      FusedLongRowsOf<FUSED_LONG_BATCH>(A, p);
      grid.sync();
    }
    auto row = [&](int i, double yi) { product(i, yi, v.p[i], PCGPreconditioned(v, i)); };
    if constexpr (GROUPS) FusedRowsInGroups<BLOCK>(A, p, lanes, row);
    else {
      FUSED_GRID_LOOP(i, A.n) row(i, FusedRowProductOf<FusedStored, LONG_ROWS>(A, p, i));
    }
  }
  FusedStorePartials<NSUMS, BLOCK>(acc, part);
  if (rhs) FusedStorePartials<1, BLOCK>(rhs_acc, part_rhs);
  grid.sync(); /* the partials complete before the first iteration sums them */
}

/* The whole loop in one cooperative kernel for systems small enough that
   kernel launches, not bandwidth, set the pace: one grid barrier per
   iteration. The product reads the new p of the rows it needs through
   PCGNext, computed from the last r, y and p, so it need not wait for their
   owners' update; r, p and y therefore alternate between v's vectors and
   the spare ones (three of length n), and so do the partial sums, so that
   nothing a slower block still reads is overwritten. */
/* With one null-space basis vector the single kernel carries its three sums
   after its five, 1 apart (the runs of FusedPCGNullSpaceFold()); sums[]
   keeps them NSMAX apart */
enum { NS1_BY_N = NSUMS, NS1_Y_N, NS1_BR_N, NS1_SUMS };
static_assert((int)NS1_BY_N == (int)FUSED_PCG_BY_N && FUSED_PCG_Y_N == FUSED_PCG_BY_N + NSMAX && FUSED_PCG_BR_N == FUSED_PCG_BY_N + 2 * NSMAX, "the runs FusedPCGNullSpaceFold() reads");
__device__ __forceinline__ int PCGSingleSlot(int k)
{
  return k < NSUMS ? k : NSUMS + (k - NSUMS) * NSMAX;
}

template <bool JACOBI, int BLOCK, bool LONG_ROWS, bool NULLSPACE = false, bool GROUPS = false>
__global__ void __launch_bounds__(BLOCK, 1) PCGSingleKernel(FusedMatView A, FusedPCGVecs v, double *spare, double *part, double *sums, FusedLoopState *state, double *hist, int lanes, int start_arg)
{
  constexpr int K = NULLSPACE ? (int)NS1_SUMS : (int)NSUMS;
  /* a null space's start is the host's (FusedPCGLoop() refuses it): known at
     compile time, so that those kernels carry no start code and spill no more
     than before the start moved in (ptxas: 512 threads with long rows, 92 and
     136 bytes of spill stores with it, 52 and 76 without) */
  const int                      start = NULLSPACE ? (int)FUSED_LOOP_GOES_ON : start_arg;
  cooperative_groups::grid_group grid  = cooperative_groups::this_grid();
  const int                      G     = gridDim.x;
  const int                      first = state->it;
  const int                      hbase = state->conv.judge_first ? first - 1 : first; /* the history's entries after it are new */
  /* b's norm from the start's sums, where the first test needs it (after both partials' slots) */
  const bool rhs        = start != FUSED_LOOP_GOES_ON && state->conv.judge_first && state->conv.reference != FUSED_REFERENCE_RESIDUAL;
  double    *part_rhs   = part + (size_t)2 * K * G * FUSED_SUM_WIDTH;
  double     rhs_square = 0.0;
  /* iteration it reads the *_last vectors and writes the *_next ones, then they swap */
  double *r_last = v.r, *p_last = v.p, *y_last = v.y;
  double *r_next = spare, *p_next = spare + A.n, *y_next = spare + 2 * (size_t)A.n;
  FusedConvergence conv;

  if (start != FUSED_LOOP_GOES_ON) {
    double s0[K];
    if constexpr (!NULLSPACE) PCGSingleStart<JACOBI, BLOCK, LONG_ROWS, GROUPS>(A, v, start, rhs, part + (size_t)(first & 1) * K * G * FUSED_SUM_WIDTH, part_rhs, lanes);
    FusedSumPartialsByWarp<K, FusedSum>(part + (size_t)(first & 1) * K * G * FUSED_SUM_WIDTH, G, s0);
    if (rhs) {
      double t[1];
      FusedSumPartialsByWarp<1, FusedSum>(part_rhs, G, t);
      rhs_square = t[0];
      if (blockIdx.x == 0 && threadIdx.x == 0) sums[state->conv.rhs_slot] = rhs_square; /* for the host's replay of iteration 0 */
    }
    conv = PCGLoopConvergence(state->conv, PCGNorm(v.normtype, s0), rhs_square);
    __syncthreads(); /* the first iteration sums the same partials again (FusedSumPartialsByWarp's result[]) */
  } else conv = PCGLoopConvergenceGoesOn(v.normtype, state->conv, sums);

  for (int it = first;; it++) {
    double s[K];
    if (it == first && start == FUSED_LOOP_GOES_ON) { /* the host-driven steps left iteration it0's sums in sums[] */
      for (int k = 0; k < K; k++) s[k] = sums[PCGSingleSlot(k)];
    } else FusedSumPartialsByWarp<K, FusedSum>(part + (size_t)(it & 1) * K * G * FUSED_SUM_WIDTH, G, s);
    const double rz = s[RZ], py = s[PY];
    double       yw = s[YW], yz = s[YZ];
    if constexpr (NULLSPACE) FusedPCGNullSpaceFold(s, 1, 1, &yw, &yz);
    if (it > first || conv.judge_first) {
      double       rnorm;
      const double t[NSUMS] = {rz, s[NORM], py, yw, yz};
      const bool   stop     = PCGMustStop(v.normtype, conv, it, t, &rnorm);
      FusedHistoryPut(hist, hbase, it, rnorm);
      if (stop) { /* the same sums in every block: the same decision */
        FusedHistoryFlush(hist, hbase, it);
        if (blockIdx.x == 0 && threadIdx.x == 0) {
          for (int k = 0; k < K; k++) sums[PCGSingleSlot(k)] = s[k];
          state->it   = it;
          state->stop = 1;
        }
        FusedLoopHandBackInKernel(state);
        if (r_last != v.r) {
          /* the host goes on from v's vectors; each thread copies the rows it wrote */
          FUSED_GRID_LOOP(i, A.n)
          {
            v.r[i] = r_last[i];
            v.p[i] = p_last[i];
            v.y[i] = y_last[i];
          }
        }
        return;
      }
    }
    const double                     alpha = rz / py, beta = PCGBeta(rz, alpha, yw, yz);
    const double                     coef  = NULLSPACE ? FusedPCGNullSpaceCoef(s, 1, 0, alpha) : 0.0;
    const PCGNext<JACOBI, NULLSPACE> next  = {r_last, y_last, p_last, v.d, alpha, beta, v.ns.cnst, coef, v.ns.vecs};
    FusedSum                         acc[K] = {};
    if constexpr (LONG_ROWS) { /* the long rows' rest first: the product below reads it */
      /* batched: arrow of 10^5 rows 13.5-14.4 -> 12.7 us per iteration, memplus 11.3-11.7 -> 10.5-10.9 (H100) */
      FusedLongRowsOf<FUSED_LONG_BATCH>(A, next);
      grid.sync();
    }
    /* row i's update and sums, its product yi made */
    auto row = [&](int i, double yi) {
      double       zi, bri, ni;
      const double pi  = PCGUpdateRowTo(v, next, i, r_next, p_next, acc, &zi, &bri, &ni);
      const double byi = JACOBI ? v.d[i] * yi : yi;
      y_next[i]        = yi;
      FusedAddProduct(acc[PY], pi, yi);
      FusedAddProduct(acc[YW], yi, byi);
      if constexpr (NULLSPACE) { /* the raw <y, B r> and the basis vector's sums, folded as the graph's */
        FusedAddProduct(acc[YZ], yi, bri);
        FusedAddProduct(acc[NS1_BY_N], byi, ni);
        FusedAddProduct(acc[NS1_Y_N], yi, ni);
        FusedAddProduct(acc[NS1_BR_N], bri, ni);
      } else FusedAddProduct(acc[YZ], yi, zi);
    };
    if constexpr (GROUPS) FusedRowsInGroups<BLOCK>(A, next, lanes, row);
    else {
      FUSED_GRID_LOOP(i, A.n) row(i, FusedRowProductOf<PCGNext<JACOBI, NULLSPACE>, LONG_ROWS>(A, next, i));
    }
    FusedStorePartials<K, BLOCK>(acc, part + (size_t)((it + 1) & 1) * K * G * FUSED_SUM_WIDTH);
    grid.sync(); /* the partials complete before the next iteration sums them */
    FusedSwap(r_last, r_next);
    FusedSwap(p_last, p_next);
    FusedSwap(y_last, y_next);
  }
}

/* the single kernel for the block size, the PC, whether there are long rows and a null space */
template <bool LONG_ROWS, bool NULLSPACE = false, bool GROUPS = false>
static const void *PCGSingleKernelFor(int block, bool jacobi)
{
  if (block == FUSED_BLOCK) return jacobi ? (const void *)PCGSingleKernel<true, FUSED_BLOCK, LONG_ROWS, NULLSPACE, GROUPS> : (const void *)PCGSingleKernel<false, FUSED_BLOCK, LONG_ROWS, NULLSPACE, GROUPS>;
  return jacobi ? (const void *)PCGSingleKernel<true, FUSED_WIDE_BLOCK, LONG_ROWS, NULLSPACE, GROUPS> : (const void *)PCGSingleKernel<false, FUSED_WIDE_BLOCK, LONG_ROWS, NULLSPACE, GROUPS>;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPCGStart)(FusedCUDA ctx, FusedDevMat A, const FusedPCGVecs *v, int guess_zero)
{
  FUSED_COMPENSATED_TWIN(FusedPCGStart, ctx, A, v, guess_zero);
  if (!guess_zero)
    if (int err = FusedLongRowsBefore(A, v->x, ctx->stream)) return err;
  if (v->ns.m) {
    PCG_NULL_KERNEL(PCGStartNullKernel, *v)<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, guess_zero, ctx->partials, ctx->sums, ctx->ticket);
    FUSED_CUDA_CHECK_LAUNCH("PCGStartNullKernel");
    return FUSED_CUDA_OK;
  }
  if (v->dblock) {
    if (int err = FusedCheckBlocks(ctx, v->bs)) return err;
    PCGStartBlockKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, guess_zero, ctx->partials, ctx->sums, ctx->ticket);
    FUSED_CUDA_CHECK_LAUNCH("PCGStartBlockKernel");
    return FUSED_CUDA_OK;
  }
  PCGStartKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, guess_zero, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PCGStartKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPCGStartProject)(FusedCUDA ctx, const FusedPCGVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPCGStartProject, ctx, v);
  PCG_NULL_KERNEL(PCGStartProjectKernel, *v)<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PCGStartProjectKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPCGStartPreconditioned)(FusedCUDA ctx, const FusedPCGVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPCGStartPreconditioned, ctx, v);
  PCGStartPreconditionedKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PCGStartPreconditionedKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPCGProductPreconditioned)(FusedCUDA ctx, const FusedPCGVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPCGProductPreconditioned, ctx, v);
  PCGProductPreconditionedKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PCGProductPreconditionedKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPCGUpdate)(FusedCUDA ctx, const FusedPCGVecs *v, double alpha, double beta)
{
  FUSED_COMPENSATED_TWIN(FusedPCGUpdate, ctx, v, alpha, beta);
  if (v->z) {
    PCGUpdateStoredKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, alpha, beta, ctx->partials, ctx->sums, ctx->ticket);
    FUSED_CUDA_CHECK_LAUNCH("PCGUpdateStoredKernel");
    return FUSED_CUDA_OK;
  }
  if (v->ns.m) {
    PCG_NULL_KERNEL(PCGUpdateNullKernel, *v)<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, alpha, beta, ctx->partials, ctx->sums, ctx->ticket, NULL);
    FUSED_CUDA_CHECK_LAUNCH("PCGUpdateNullKernel");
    return FUSED_CUDA_OK;
  }
  if (v->dblock) {
    PCGUpdateBlockKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, alpha, beta, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL);
    FUSED_CUDA_CHECK_LAUNCH("PCGUpdateBlockKernel");
    return FUSED_CUDA_OK;
  }
  PCGUpdateKernel<false><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, alpha, beta, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL);
  FUSED_CUDA_CHECK_LAUNCH("PCGUpdateKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPCGProduct)(FusedCUDA ctx, FusedDevMat A, const FusedPCGVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPCGProduct, ctx, A, v);
  if (int err = FusedLongRowsBefore(A, v->p, ctx->stream)) return err;
  if (v->ns.m) PCG_NULL_KERNEL(PCGProductNullKernel, *v)<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL, 0);
  else if (v->dblock) PCGProductBlockKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL, 0);
  else PCGProductKernel<false><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL, 0);
  FUSED_CUDA_CHECK_LAUNCH("PCGProductKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPCGProductLocal)(FusedCUDA ctx, FusedDevMat A, const FusedPCGVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPCGProductLocal, ctx, A, v);
  FusedMatView local = A->view;
  local.growptr      = NULL; /* the ghost entries wait for the halo: FusedPCGProductGhosts() */
  /* the ghost rows' share of <y, B y> would couple a block's rows: point-block Jacobi takes the whole product after the halo */
  if (v->dblock) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the split product has no point-block Jacobi: use FusedPCGProduct() once the ghosts are in");
  if (int err = FusedLongRowsLaunch(local, v->p, ctx->stream)) return err;
  if (v->ns.m) PCG_NULL_KERNEL(PCGProductNullKernel, *v)<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(local, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL, 0);
  else PCGProductKernel<false><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(local, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL, 0);
  FUSED_CUDA_CHECK_LAUNCH("PCGProductKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPCGProductGhosts)(FusedCUDA ctx, FusedDevMat A, const FusedPCGVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPCGProductGhosts, ctx, A, v);
  int blocks = (A->nbound + FUSED_BLOCK - 1) / FUSED_BLOCK;
  if (ctx->maxsums < FUSED_PCG_RHS) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the workspace holds %d sums, the split product needs %d", ctx->maxsums, (int)FUSED_PCG_RHS);
  blocks = blocks < 1 ? 1 : (blocks < ctx->nblocks ? blocks : ctx->nblocks); /* it posts the sums even with no ghost rows */
  if (int err = FusedLongGhostRowsLaunch(A, ctx->stream)) return err;
  if (v->ns.m) PCG_NULL_KERNEL(PCGGhostNullKernel, *v)<<<blocks, FUSED_BLOCK, 0, ctx->stream>>>(A->nbound, A->brow, A->bptr, A->view, *v, ctx->partials, ctx->sums, ctx->ticket, ctx->post, ++ctx->post_seq);
  else PCGGhostKernel<<<blocks, FUSED_BLOCK, 0, ctx->stream>>>(A->nbound, A->brow, A->bptr, A->view, *v, ctx->partials, ctx->sums, ctx->ticket, ctx->post, ++ctx->post_seq);
  FUSED_CUDA_CHECK_LAUNCH("PCGGhostKernel");
  return FUSED_CUDA_OK;
}

struct PCGLoopArgs {
  FusedMatView A;
  FusedPCGVecs v;
};

/* the loop body with a null space */
template <int M>
static int PCGBuildNullLoop(FusedCUDA ctx, const PCGLoopArgs *args, cudaGraphConditionalHandle handle)
{
  int gu, gp;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)PCGUpdateNullKernel<M>, 0, &gu)) return err;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)PCGProductNullKernel<M>, 0, &gp)) return err;
  if (int err = FusedLaunchLoopKernel(ctx, PCGUpdateNullKernel<M>, gu, 0, ctx->n, args->v, 0.0, 0.0, ctx->partials, ctx->sums, ctx->ticket, ctx->state)) return err;
  if (args->A.lrows.nchunks)
    if (int err = FusedLaunchLoopKernel(ctx, FusedLongRowsKernel<FusedStored>, FusedLongRowsGrid(args->A.lrows), 0, args->A.lrows, args->A.rowptr, args->A.col, args->A.val, FusedStored{args->v.p}, (const FusedLoopState *)ctx->state)) return err;
  return FusedLaunchLoopKernel(ctx, PCGProductNullKernel<M>, gp, 0, args->A, args->v, ctx->partials, ctx->sums, ctx->ticket, ctx->state, ctx->hist, handle);
}

/* the loop body: two kernels per iteration */
static int PCGBuildLoop(FusedCUDA ctx, const void *args_, cudaGraphConditionalHandle handle)
{
  const PCGLoopArgs *args = (const PCGLoopArgs *)args_;
  int                gu, gp;
  const bool         block = args->v.dblock != NULL;
  /* a known symmetric A: <y,z> without reading r in the product (FusedPCGVecs.symmetric) */
  const bool         symmetric = args->v.symmetric && !block && !args->v.z && !args->v.ns.m;
  auto               update = block ? PCGUpdateBlockKernel : symmetric ? PCGUpdateKernel<true> : PCGUpdateKernel<false>;
  auto               product = block ? PCGProductBlockKernel : symmetric ? PCGProductKernel<true> : PCGProductKernel<false>;
  if (args->v.ns.m) return args->v.ns.m == 1 ? PCGBuildNullLoop<1>(ctx, args, handle) : PCGBuildNullLoop<NSMAX>(ctx, args, handle);
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)update, 0, &gu)) return err;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)product, 0, &gp)) return err;
  if (int err = FusedLaunchLoopKernel(ctx, update, gu, 0, ctx->n, args->v, 0.0, 0.0, ctx->partials, ctx->sums, ctx->ticket, ctx->state, ctx->hist)) return err;
  if (args->A.lrows.nchunks)
    if (int err = FusedLaunchLoopKernel(ctx, FusedLongRowsKernel<FusedStored>, FusedLongRowsGrid(args->A.lrows), 0, args->A.lrows, args->A.rowptr, args->A.col, args->A.val, FusedStored{args->v.p}, (const FusedLoopState *)ctx->state)) return err;
  return FusedLaunchLoopKernel(ctx, product, gp, 0, args->A, args->v, ctx->partials, ctx->sums, ctx->ticket, ctx->state, ctx->hist, handle);
}

extern "C" int FUSED_METHOD_ENTRY(FusedPCGLoop)(FusedCUDA ctx, FusedDevMat A, const FusedPCGVecs *v, const FusedConvergence *conv, int it0, int single_kernel, int start, int *its)
{
  FUSED_COMPENSATED_TWIN(FusedPCGLoop, ctx, A, v, conv, it0, single_kernel, start, its);
  PCGLoopArgs args;
  if (start != FUSED_LOOP_GOES_ON && (!single_kernel || v->ns.m || v->z || it0 != 0 || !conv->judge_first)) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the loop makes the solve's start itself in the single kernel at iteration 0, with its first test, the fused PC and no null space");
  if (single_kernel) {
    if (v->ns.m > 1) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the single-kernel loop removes a null space of one vector, not %d", v->ns.m);
    if (v->dblock) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the single-kernel loop has no point-block Jacobi (its product forms the next p of the rows it reads, which would need their blocks)");
    FusedMatView view = A->view;
    FusedPCGVecs vecs = *v;
    double      *part = NULL, *spare = NULL;
    int          lanes = v->ns.m ? 1 : FusedRowLanes(ctx, A);
    void        *kargs[] = {&view, &vecs, &spare, &part, &ctx->sums, &ctx->state, &ctx->hist, &lanes, &start};
    if (int err = FusedCUDAEnsureLoopVectors(ctx, 3, &spare)) return err;
    const long long threads = (long long)ctx->n * lanes;
    const int       block   = FusedSingleKernelBlock(ctx, threads);
    const bool      jacobi  = v->d != NULL;
    const void     *kernel;
    if (v->ns.m) kernel = view.lrows.nchunks ? PCGSingleKernelFor<true, true>(block, jacobi) : PCGSingleKernelFor<false, true>(block, jacobi);
    else if (lanes > 1) kernel = view.lrows.nchunks ? PCGSingleKernelFor<true, false, true>(block, jacobi) : PCGSingleKernelFor<false, false, true>(block, jacobi);
    else kernel = view.lrows.nchunks ? PCGSingleKernelFor<true>(block, jacobi) : PCGSingleKernelFor<false>(block, jacobi);
    /* the start's b norm after both slots of partials: room for one sum more */
    return FusedCUDARunSingleKernel(ctx, kernel, block, (int)threads, v->ns.m ? (int)NS1_SUMS : (int)NSUMS + 1, 0, conv, it0, NULL, kargs, &part, its);
  }
  memset(&args, 0, sizeof(args)); /* padding too: the arguments are compared bytewise */
  args.A = A->view;
  args.v = *v;
  return FusedCUDARunLoop(ctx, &args, sizeof(args), PCGBuildLoop, conv, it0, NULL, its);
}

extern "C" int FUSED_METHOD_ENTRY(FusedPCGLoadKernels)(int device, int compensated)
{
#if !FUSED_COMPENSATED
  if (compensated) return FusedPCGLoadKernels_Compensated(device, compensated);
#endif
  (void)compensated;
  return FusedCUDALoadModuleOf(device, (const void *)PCGUpdateKernel<false>);
}
FUSED_METHOD_NAMESPACE_END

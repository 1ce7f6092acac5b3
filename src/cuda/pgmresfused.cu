/* pgmresfused on the GPU: the kernels of the fused steps of
   pgmresfusedimpl.h, where the host drives each step and keeps R, xi and the
   back solve (a few dozen numbers per step); and the device loop, which runs
   the Arnoldi steps of a cycle without the host (below). The basis V lies in
   the workspace as restart vectors one after another. Device sums of the
   host-driven steps: [0, restart] for the products of a step, then the
   coefficients (h or t) handed to the device. */
#include <string.h>
#include <cooperative_groups.h>
#include "cuda/fusedcuda_impl.cuh"

/* the entry points of the compensated build of this file (FUSED_COMPENSATED) */
#if !FUSED_COMPENSATED
FUSED_TWIN_DECL(FusedPGMRESLoadKernels);
FUSED_TWIN_DECL(FusedPGMRESStart);
FUSED_TWIN_DECL(FusedPGMRESProduct);
FUSED_TWIN_DECL(FusedPGMRESProductLocal);
FUSED_TWIN_DECL(FusedPGMRESProductGhosts);
FUSED_TWIN_DECL(FusedPGMRESProductInput);
FUSED_TWIN_DECL(FusedPGMRESNorm);
FUSED_TWIN_DECL(FusedPGMRESAddTo);
FUSED_TWIN_DECL(FusedPGMRESMDot);
FUSED_TWIN_DECL(FusedPGMRESOrthog);
FUSED_TWIN_DECL(FusedPGMRESNormalize);
FUSED_TWIN_DECL(FusedPGMRESUpdate);
FUSED_TWIN_DECL(FusedPGMRESPrepareLoop);
FUSED_TWIN_DECL(FusedPGMRESSingleKernelSuits);
FUSED_TWIN_DECL(FusedPGMRESLoop);
#endif
FUSED_METHOD_NAMESPACE_BEGIN

/* Row i of r = B (b - A x) (left) or b - A x (right), written to v.r and
   returned: the host's cycle start and the single kernel's make the same r */
__device__ __forceinline__ double PGMRESStartRow(const FusedMatView &A, const FusedPGMRESVecs &v, int guess_zero, int i)
{
  double r = guess_zero ? v.b[i] : v.b[i] - FusedRowProduct(A, v.x, i);
  if (v.d && !v.right) r *= v.d[i];
  v.r[i] = r;
  return r;
}

/* r = B (b - A x) (left) or b - A x (right); <r,r> */
__global__ void PGMRESStartKernel(FusedMatView A, FusedPGMRESVecs v, int guess_zero, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[1] = {0.0};
  FUSED_GRID_LOOP(i, A.n)
  {
    const double r = PGMRESStartRow(A, v, guess_zero, i);
    FusedAddProduct(acc[0], r, r);
  }
  FusedReduce<1>(acc, partials, sums, ticket, 0);
}

/* ---- left point-block Jacobi (v.dblock, v.bs; FUSED_TILE_LOOP): B applies
   to a tile of A's products after one block barrier. Kernels of their own,
   so that the others keep their registers. */

/* PGMRESStartKernel with left point-block Jacobi */
__global__ void __launch_bounds__(FUSED_BLOCK) PGMRESStartBlockKernel(FusedMatView A, FusedPGMRESVecs v, int guess_zero, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[1] = {0.0};
  FusedBlockTiles(
    A.n, v.bs, [=](int i) { return guess_zero ? v.b[i] : v.b[i] - FusedRowProduct(A, v.x, i); },
    [=, &acc](int i, const double *ws, int t0) {
      const double r = FusedBlockRow(v.dblock, v.bs, i, ws, t0);
      v.r[i]         = r;
      FusedAddProduct(acc[0], r, r);
    });
  FusedReduce<1>(acc, partials, sums, ticket, 0);
}

/* w = B (A in) with point-block Jacobi */
__global__ void __launch_bounds__(FUSED_BLOCK) PGMRESSpMVBlockKernel(FusedMatView A, double *w, const double *in, FusedPGMRESVecs v)
{
  FusedBlockTiles(
    A.n, v.bs, [=](int i) { return FusedRowProduct(A, in, i); }, [=](int i, const double *ys, int t0) { w[i] = FusedBlockRow(v.dblock, v.bs, i, ys, t0); });
}

/* out = scale * d .* in (d may be NULL) */
__global__ void PGMRESScaleKernel(int n, double *out, const double *in, double scale, const double *d)
{
  FUSED_GRID_LOOP(i, n) out[i] = scale * (d ? d[i] : 1.0) * in[i];
}

/* w = dleft .* (A in) */
__global__ void PGMRESSpMVKernel(FusedMatView A, double *w, const double *in, const double *dleft)
{
  FUSED_GRID_LOOP(i, A.n)
  {
    const double y = FusedRowProduct(A, in, i);
    w[i]           = dleft ? dleft[i] * y : y;
  }
}

/* partials of <V_l, w> for l < j (blockIdx.y = l) and of <w, w> (l = j) */
__global__ void PGMRESMDotKernel(int n, const double *V, const double *w, int j, double *partials)
{
  const int     l = blockIdx.y;
  const double *u = l < j ? V + (size_t)l * n : w;
  FusedSum      acc[1] = {};
  FUSED_GRID_LOOP(i, n) FusedAddProduct(acc[0], u[i], w[i]);
  FusedBlockSum<1>(acc);
  if (threadIdx.x == 0) FusedPartialPut(partials, (size_t)l * gridDim.x + blockIdx.x, acc[0]);
}

/* sums[l] = sum of the nblocks partials of sum l, one block per sum */
__global__ void PGMRESFinishKernel(const double *partials, int nblocks, double *sums)
{
  FusedSum acc[1] = {0.0};
  for (int b = threadIdx.x; b < nblocks; b += blockDim.x) acc[0] += FusedPartialGet<FusedSum>(partials, (size_t)blockIdx.x * nblocks + b);
  FusedBlockSum<1>(acc);
  if (threadIdx.x == 0) sums[blockIdx.x] = FusedSumValue(acc[0]);
}

/* w -= sum_{l<j} h_l V_l; <w,w>, <w,r>, <r,r>, and with a null space <w, n_k> */
template <int NS>
__global__ void PGMRESOrthogKernel(int n, FusedPGMRESVecs v, FusedNullSpace ns, int j, const double *h, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[3 + NS] = {0.0};
  FUSED_GRID_LOOP(i, n)
  {
    double w = v.w[i];
    for (int l = 0; l < j; l++) w -= h[l] * v.V[(size_t)l * n + i];
    const double r = v.r[i];
    v.w[i]         = w;
    FusedAddProduct(acc[0], w, w);
    FusedAddProduct(acc[1], w, r);
    FusedAddProduct(acc[2], r, r);
#pragma unroll
    for (int k = 0; k < NS; k++)
      if (k < ns.m) FusedAddProduct(acc[3 + k], w, FusedNullSpaceBasis(ns, k, i));
  }
  FusedReduce<3 + NS>(acc, partials, sums, ticket, 0);
}

/* v_j = scale (w - sum_k coef_k n_k), r -= xi v_j */
__global__ void PGMRESNormalizeKernel(int n, FusedPGMRESVecs v, FusedNullSpace ns, int j, double scale, double xi)
{
  double *vj = v.V + (size_t)j * n;
  FUSED_GRID_LOOP(i, n)
  {
    const double u = scale * FusedLessNullSpace<FUSED_NULLSPACE_MAX>(ns, ns.coef, v.w[i], i);
    vj[i]          = u;
    v.r[i] -= xi * u;
  }
}

/* Basis entries whose loads a row of the update or of the graph's
   orthogonalization issues before it uses any: a loop that loads and uses
   one at a time kept the compiler to about two loads in flight per thread
   (SASS). H100, GMRES(30) on 160^3: 558 and 562 us per step against 576
   and 567; the single kernels, held to 128 registers, keep the loop (262,144
   rows: 57.4 against 48.9 us with the batches) */
#define PGMRES_BASIS_BATCH 8

/* Row i of the update's correction, dright .* (t_0 z_0 + sum_{0<l<k} t_l
   v_{l-1}), where basis(l) reads row i of v_l, BATCH of them loaded before
   their terms are added (the sum is the same for any BATCH). The roundings
   are explicit: the update kernel and the device loop's cycle end agree bit
   for bit. */
template <int BATCH, class Basis>
__device__ __forceinline__ double PGMRESCorrection(const FusedPGMRESVecs &v, int k, const double *t, int i, Basis basis)
{
  double s = __dmul_rn(t[0], v.z0[i]);
  for (int l0 = 1; l0 < k; l0 += BATCH) {
    double b[BATCH];
#pragma unroll
    for (int q = 0; q < BATCH; q++) b[q] = l0 + q < k ? basis(l0 + q - 1) : 0.0;
#pragma unroll
    for (int q = 0; q < BATCH; q++)
      if (l0 + q < k) s = __fma_rn(t[l0 + q], b[q], s);
  }
  return (v.right && v.d) ? __dmul_rn(v.d[i], s) : s;
}

/* y += dright .* (t_0 z_0 + sum_{0<l<k} t_l v_{l-1}) */
__global__ void PGMRESUpdateKernel(int n, FusedPGMRESVecs v, int k, const double *t, double *y)
{
  FUSED_GRID_LOOP(i, n) y[i] = __dadd_rn(y[i], PGMRESCorrection<PGMRES_BASIS_BATCH>(v, k, t, i, [&](int l) { return v.V[(size_t)l * n + i]; }));
}

/* the coefficients handed to the device sit after the products of a step */
static double *PGMRESCoefficients(FusedCUDA ctx)
{
  return ctx->sums + ctx->maxsums / 2;
}

/* point-block Jacobi: left, and blocks that tile the rows */
static int PGMRESCheckBlocks(FusedCUDA ctx, const FusedPGMRESVecs *v)
{
  if (v->right || v->d || v->pc_between) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "pgmresfused fuses point-block Jacobi as a left preconditioner alone");
  return FusedCheckBlocks(ctx, v->bs);
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESStart)(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v, int guess_zero)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESStart, ctx, A, v, guess_zero);
  if (!guess_zero)
    if (int err = FusedLongRowsBefore(A, v->x, ctx->stream)) return err;
  if (v->dblock) {
    if (int err = PGMRESCheckBlocks(ctx, v)) return err;
    PGMRESStartBlockKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, guess_zero, ctx->partials, ctx->sums, ctx->ticket);
    FUSED_CUDA_CHECK_LAUNCH("PGMRESStartBlockKernel");
    return FUSED_CUDA_OK;
  }
  PGMRESStartKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, guess_zero, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESStartKernel");
  return FUSED_CUDA_OK;
}

/* the product's input and output of step j, and the left scaling */
static void PGMRESProductVectors(FusedCUDA ctx, const FusedPGMRESVecs *v, int j, const double **in, double **out, const double **dleft)
{
  *in = v->zin ? v->zin : j == 0 ? v->z0 : v->V + (size_t)(j - 1) * ctx->n;
  if (v->right && (v->d || v->pc_between)) *in = v->tmp;
  *out   = (v->pc_between && !v->right) ? v->tmp : v->w;
  *dleft = v->right ? NULL : v->d;
}

/* Before the product the caller exchanges the ghosts of the vector the
   product reads: FusedPGMRESProductInput() says which. */
extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESProduct)(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v, int j)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESProduct, ctx, A, v, j);
  const double *in, *dleft;
  double       *out;
  PGMRESProductVectors(ctx, v, j, &in, &out, &dleft);
  if (int err = FusedLongRowsBefore(A, in, ctx->stream)) return err;
  if (v->dblock) {
    if (int err = PGMRESCheckBlocks(ctx, v)) return err;
    PGMRESSpMVBlockKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, v->w, in, *v);
    FUSED_CUDA_CHECK_LAUNCH("PGMRESSpMVBlockKernel");
    return FUSED_CUDA_OK;
  }
  PGMRESSpMVKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, out, in, dleft);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESSpMVKernel");
  return FUSED_CUDA_OK;
}

/* out += dleft .* (the ghost block's share of A in) on the boundary rows */
__global__ void PGMRESGhostKernel(int nbound, const int *brow, const int *bptr, FusedMatView A, double *out, const double *dleft)
{
  FUSED_GRID_LOOP(k, nbound)
  {
    const int    i  = brow[k];
    const double yg = FusedGhostRowProduct(A, i, bptr[k], bptr[k + 1]);
    out[i] += dleft ? dleft[i] * yg : yg;
  }
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESProductLocal)(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v, int j)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESProductLocal, ctx, A, v, j);
  FusedMatView  local = A->view;
  const double *in, *dleft;
  double       *out;
  local.growptr = NULL; /* the ghost entries wait for the halo: FusedPGMRESProductGhosts() */
  if (v->dblock) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the split product has no point-block Jacobi: use FusedPGMRESProduct() once the ghosts are in");
  PGMRESProductVectors(ctx, v, j, &in, &out, &dleft);
  if (int err = FusedLongRowsLaunch(local, in, ctx->stream)) return err;
  PGMRESSpMVKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(local, out, in, dleft);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESSpMVKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESProductGhosts)(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESProductGhosts, ctx, A, v);
  const double *in, *dleft;
  double       *out;
  int           blocks = (A->nbound + FUSED_BLOCK - 1) / FUSED_BLOCK;
  if (blocks < 1) return FUSED_CUDA_OK;
  PGMRESProductVectors(ctx, v, 0, &in, &out, &dleft);
  if (int err = FusedLongGhostRowsLaunch(A, ctx->stream)) return err;
  PGMRESGhostKernel<<<blocks < ctx->nblocks ? blocks : ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->nbound, A->brow, A->bptr, A->view, out, dleft);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESGhostKernel");
  return FUSED_CUDA_OK;
}

/* z_0 = scale r (j = 0), an adaptive step's zin = scale r, and, with right
   Jacobi, tmp = d .* z_j: the vector the product reads */
extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESProductInput)(FusedCUDA ctx, const FusedPGMRESVecs *v, int j, double scale, const double **in)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESProductInput, ctx, v, j, scale, in);
  double *from_r = v->zin ? v->zin : j == 0 ? v->z0 : NULL;
  const double *z = from_r ? from_r : v->V + (size_t)(j - 1) * ctx->n;
  if (from_r) {
    PGMRESScaleKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, from_r, v->r, scale, NULL);
    FUSED_CUDA_CHECK_LAUNCH("PGMRESScaleKernel");
  }
  if (v->right && v->d) {
    PGMRESScaleKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, v->tmp, z, 1.0, v->d);
    FUSED_CUDA_CHECK_LAUNCH("PGMRESScaleKernel");
    z = v->tmp;
  }
  *in = z;
  return FUSED_CUDA_OK;
}

__global__ void PGMRESNormKernel(int n, const double *r, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[1] = {0.0};
  FUSED_GRID_LOOP(i, n) FusedAddProduct(acc[0], r[i], r[i]);
  FusedReduce<1>(acc, partials, sums, ticket, 0);
}

__global__ void PGMRESAddToKernel(int n, double *y, const double *x)
{
  FUSED_GRID_LOOP(i, n) y[i] += x[i];
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESNorm)(FusedCUDA ctx, const FusedPGMRESVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESNorm, ctx, v);
  PGMRESNormKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, v->r, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESNormKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESAddTo)(FusedCUDA ctx, double *y, const double *x)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESAddTo, ctx, y, x);
  PGMRESAddToKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, y, x);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESAddToKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESMDot)(FusedCUDA ctx, const FusedPGMRESVecs *v, int j)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESMDot, ctx, v, j);
  dim3 grid(ctx->nblocks, j + 1);
  if (j + 1 > ctx->maxsums / 2) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "%d products exceed the workspace's %d", j + 1, ctx->maxsums / 2);
  PGMRESMDotKernel<<<grid, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, v->V, v->w, j, ctx->partials);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESMDotKernel");
  PGMRESFinishKernel<<<j + 1, FUSED_BLOCK, 0, ctx->stream>>>(ctx->partials, ctx->nblocks, ctx->sums);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESFinishKernel");
  return FUSED_CUDA_OK;
}

/* the null space of ns, none where ns is NULL */
static FusedNullSpace PGMRESNullSpace(const FusedNullSpace *ns)
{
  FusedNullSpace none;
  memset(&none, 0, sizeof(none));
  return ns ? *ns : none;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESOrthog)(FusedCUDA ctx, const FusedPGMRESVecs *v, int j, const double *h, const FusedNullSpace *ns_)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESOrthog, ctx, v, j, h, ns_);
  const FusedNullSpace ns = PGMRESNullSpace(ns_);
  double *hd = PGMRESCoefficients(ctx);
  /* through pinned staging, so the copy needs no wait: the caller's next
     step waits for the sums anyway before the staging is used again */
  if (j > 0) {
    memcpy(ctx->coef_host, h, sizeof(double) * j);
    FUSED_CUDA_CHECK(cudaMemcpyAsync(hd, ctx->coef_host, sizeof(double) * j, cudaMemcpyHostToDevice, ctx->stream));
  }
  if (ns.m)
    if (int err = FusedCheckNullSpace(ctx, &ns, 3 + FUSED_NULLSPACE_MAX)) return err;
  if (ns.m == 0) PGMRESOrthogKernel<0><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, ns, j, hd, ctx->partials, ctx->sums, ctx->ticket);
  else if (ns.m == 1) PGMRESOrthogKernel<1><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, ns, j, hd, ctx->partials, ctx->sums, ctx->ticket);
  else PGMRESOrthogKernel<FUSED_NULLSPACE_MAX><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, ns, j, hd, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESOrthogKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESNormalize)(FusedCUDA ctx, const FusedPGMRESVecs *v, int j, double scale, double xi, const FusedNullSpace *ns)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESNormalize, ctx, v, j, scale, xi, ns);
  PGMRESNormalizeKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, PGMRESNullSpace(ns), j, scale, xi);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESNormalizeKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESUpdate)(FusedCUDA ctx, const FusedPGMRESVecs *v, int k, const double *t, double *y)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESUpdate, ctx, v, k, t, y);
  double *td = PGMRESCoefficients(ctx);
  if (k <= 0) return FUSED_CUDA_OK;
  if (k > ctx->maxsums) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "%d coefficients exceed the staging's %d", k, ctx->maxsums);
  /* through pinned staging: no wait here. Its next user (FusedPGMRESOrthog)
     comes after the next cycle start has waited for its sums. */
  memcpy(ctx->coef_host, t, sizeof(double) * k);
  FUSED_CUDA_CHECK(cudaMemcpyAsync(td, ctx->coef_host, sizeof(double) * k, cudaMemcpyHostToDevice, ctx->stream));
  PGMRESUpdateKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, k, td, y);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESUpdateKernel");
  return FUSED_CUDA_OK;
}

/* ---- the device loop --------------------------------------------------------
   Each Arnoldi step j has two parts. The first normalizes step j-1 (v_{j-1} =
   w / r_{j-1,j-1}, r -= xi v_{j-1}: the scale is applied to the product, so
   that it need not wait for v_{j-1}), forms w' = Op v_{j-1} into the other w
   buffer and, row by row, the products <v_l, w'> and <w', w'>. The second
   subtracts the projections and reduces <w,w>, <w,r>, <r,r>; then the host
   loop's decisions of the step are made on the device: the test of the
   residual norm, the breakdown check, the column of R and xi. From a CUDA
   graph the first part is two kernels (the operator, then the products) and
   the second one; for small systems one cooperative kernel runs the whole
   cycle with a grid barrier after each part. */


/* The loop's state in device memory; R (restart x restart), xi and each
   step's rho (restart each) follow it */
struct PGMRESLoopState {
  int    its0;    /* ksp->its at the cycle start */
  int    j;       /* the step the next kernel runs; at the end, the steps done */
  int    pending; /* 1: stopped after the orthogonalization of step j */
  int    start_on_host; /* 1: the single kernel ended a cycle (x is updated) and leaves the next start to the host */
  int    cycle_ended;   /* 1: pending, stopped by the test, and the single kernel ended the cycle with the steps before it (x is updated) */
  int    restart;
  double breakdowntol;
  double start_norm; /* |r| of the last cycle start the single kernel made (r in place): the host tests it */
  double inv_r, xi; /* of step j-1, which the product of step j normalizes */
  double nu;           /* adaptive simpler GMRES's nu (-ksp_pgmresfused_adaptive); 0: never */
  double cycle_rnorm0; /* |r_0| of the cycle: the first adaptive choice compares xi_0 with it */
  double rho;          /* step j's: 0 where z_j = v_{j-1}, else z_j = r_j / rho (adaptive) */
  int    adaptive_steps; /* the steps recorded with rho > 0 */
  FusedNullSpace ns; /* the operator's null space (m = 0: none); coef: <w, n_k> of step j-1's w */
};

static size_t PGMRESLoopStateBytes(int restart)
{
  return sizeof(PGMRESLoopState) + sizeof(double) * ((size_t)restart * restart + 2 * (size_t)restart);
}

__device__ __forceinline__ double *PGMRESLoopR(PGMRESLoopState *gs)
{
  return (double *)(gs + 1);
}

/* rho of the step after one whose xi is xi, from |r| before that step
   (rp), as the host's cycle chooses it (pgmresfused.c): where the step cut
   the residual to nu or less, |r_{j+1}|^2 = rp^2 - xi^2 <= nu^2 rp^2, the
   next direction is r_{j+1} / rp; else 0 (v_j). Roundings explicit: every
   block of the single kernel and the record agree. */
__device__ __forceinline__ double PGMRESAdaptiveRho(double nu, double xi, double rp)
{
  if (!(nu > 0.0) || !(rp > 0.0)) return 0.0;
  return __dmul_rn(xi, xi) >= __dmul_rn(__dmul_rn(__dsub_rn(1.0, __dmul_rn(nu, nu)), rp), rp) ? rp : 0.0;
}

/* the mean row length from which the single kernel sums rows by groups of lanes */
#define PGMRES_GROUP_MEAN 32

/* products per pass over the rows: accumulators in registers */
#define PGMRES_PRODUCTS_PER_PASS 8

/* The warp's sums of its lanes' eight accumulators in 9 shuffles, not 8
   trees of 5: at each of the first three levels a lane keeps half of what
   it holds and trades the other half with its partner, so that after them
   each lane holds one sum over 8 lanes (which one: its lane bits 4, 3, 2),
   and two more levels finish it. Returns the sum of accumulator
   PGMRESWarpSumIndex(lane), the same in the four lanes that hold it (IEEE
   addition commutes). On the H100 a pass of eight products cost a step
   1.15 us with the trees. */
__device__ __forceinline__ int PGMRESWarpSumIndex(int lane)
{
  return ((lane >> 4) & 1) * 4 + ((lane >> 3) & 1) * 2 + ((lane >> 2) & 1);
}

__device__ __forceinline__ FusedSum PGMRESWarpSumsOf8(FusedSum (&acc)[8], int lane)
{
  FusedSum a[4], b[2], c;
  bool     upper = lane & 16;
#pragma unroll
  for (int q = 0; q < 4; q++) {
    const FusedSum keep = upper ? acc[q + 4] : acc[q], send = upper ? acc[q] : acc[q + 4];
    a[q]                = keep + FusedShuffleXor(send, 16);
  }
  upper = lane & 8;
#pragma unroll
  for (int q = 0; q < 2; q++) {
    const FusedSum keep = upper ? a[q + 2] : a[q], send = upper ? a[q] : a[q + 2];
    b[q]                = keep + FusedShuffleXor(send, 8);
  }
  upper = lane & 4;
  {
    const FusedSum keep = upper ? b[1] : b[0], send = upper ? b[0] : b[1];
    c                   = keep + FusedShuffleXor(send, 4);
  }
  c += FusedShuffleXor(c, 2);
  c += FusedShuffleXor(c, 1);
  return c;
}

/* The single kernel of a small system keeps the block's rows of the basis in
   shared memory as well: its k-th row (of at most R) of v_l at this slot */
__device__ __forceinline__ int PGMRESSlot(int l, int k, int R)
{
  return (l * R + k) * FUSED_BLOCK + threadIdx.x;
}

/* products reduced per block barrier: each warp leaves its sums in shared memory */
#define PGMRES_SUMS_PER_BARRIER 32

/* The vectors of step j's first part: w_prev (w of step j-1, the last
   orthogonalization's output) and w_new alternate between v.w and v.w2;
   v_prev is the basis vector step j-1 becomes; in is what the operator
   reads (d .* w_prev with right Jacobi, z_0 at j = 0) */
struct PGMRESStepVecs {
  const double *w_prev, *in;
  double       *w_new, *v_prev;
};

__device__ __forceinline__ PGMRESStepVecs PGMRESStepVectors(const FusedPGMRESVecs &v, int j, int n)
{
  PGMRESStepVecs s;
  s.w_prev = (j & 1) ? v.w : v.w2;
  s.w_new  = (j & 1) ? v.w2 : v.w;
  s.v_prev = j ? v.V + (size_t)(j - 1) * n : NULL;
  s.in     = (v.right && v.d) ? v.tmp : (j ? s.w_prev : v.z0);
  return s;
}

/* Row i of the first pass of step j: v_{j-1} = scale w_prev and r -= xi
   v_{j-1} (j > 0, normalize), w_new = scale B Op in; returns w_new's entry.
   PRODUCT false: w_new is there already (PGMRESApplyInGroups()), and is
   read. normalize false: an adaptive step's pass (PGMRESAdaptRow()) has
   made v_{j-1} and r, and in holds z_j. NORMALIZE false: normalize is
   false, known where the code is made (the single kernel's rows: a flag
   read at run time there cost the H100 1.5 us per step at 10^4 rows). */
template <class In, bool ROW_LOADS_FIRST, bool PRODUCT = true, bool NORMALIZE = true>
__device__ __forceinline__ double PGMRESStepRow(const FusedMatView &A, const FusedPGMRESVecs &v, int j, double scale, double xi, const PGMRESStepVecs &sv, double *sV, int R, int i, int k, bool normalize = true)
{
  normalize = NORMALIZE && normalize;
  const double ri = (ROW_LOADS_FIRST && j) ? v.r[i] : 0.0, di = (ROW_LOADS_FIRST && v.d && !v.right) ? v.d[i] : 1.0;
  if (j && normalize) {
    const double u = scale * sv.w_prev[i];
    sv.v_prev[i]   = u;
    if (sV) sV[PGMRESSlot(j - 1, k, R)] = u;
    v.r[i] = (ROW_LOADS_FIRST ? ri : v.r[i]) - xi * u;
  }
  if constexpr (!PRODUCT) return sv.w_new[i];
  double y = scale * FusedRowProductOf(A, In{sv.in}, i);
  if (v.d && !v.right) y *= ROW_LOADS_FIRST ? di : v.d[i];
  sv.w_new[i] = y;
  return y;
}

/* Row i of an adaptive step's first pass, a pass of its own before the
   operator's (the operator reads other rows of z_j): v_{j-1} = scale w,
   r -= xi v_{j-1}, then z_j = r / rho over w_prev, which no one reads
   after this, and tmp = d .* z_j with right Jacobi. w: row i of w_prev
   (less its part in a null space, where there is one). The product then
   reads z_j where it would read w_prev, with scale 1 and without
   normalizing. */
__device__ __forceinline__ void PGMRESAdaptRow(const FusedPGMRESVecs &v, int j, double scale, double w, double xi, double inv_rho, const PGMRESStepVecs &sv, double *sV, int R, int i, int k)
{
  const double u = scale * w;
  sv.v_prev[i]   = u;
  if (sV) sV[PGMRESSlot(j - 1, k, R)] = u;
  const double r = v.r[i] - xi * u;
  v.r[i]         = r;
  const double z = inv_rho * r;
  ((double *)sv.w_prev)[i] = z;
  if (v.right && v.d) v.tmp[i] = v.d[i] * z;
}

/* The first part of step j on this thread's rows, the block's partial sums
   of <v_l, w'> (l < j) and <w', w'> to partials[l * gridDim.x + blockIdx.x].
   Each pass over the rows adds 8 products; the warps sum theirs with
   shuffles, and one barrier per 32 products lets the block add the warps'.
   In: how the product reads its input (FusedStored, FusedStoredGathered);
   ROW_LOADS_FIRST: the row's own entries of r and of the Jacobi diagonal
   are loaded before the loads they would otherwise wait behind (the
   compiler keeps them after the stores and branches in between). On the
   H100 that is faster in the cycling single kernel (100,000 rows: 17.2
   against 17.7 us for the diagonal) and slower where registers are held to
   64 or 128 (262,144 rows: 51.5 against 49.4). APPLIED: w' is there
   already (PGMRESLoopApplyKernel), the first pass reads it as the others.
   OPERATOR_APPLIED: only w' = scale B Op in is (PGMRESApplyInGroups()); the
   first pass still makes v_{j-1} and r on this thread's rows. */
template <class In, bool ROW_LOADS_FIRST, bool APPLIED = false, bool OPERATOR_APPLIED = false, bool NORMALIZE = true>
__device__ __forceinline__ void PGMRESProductPart(const FusedMatView &A, const FusedPGMRESVecs &v, int j, double scale, double xi, double *partials, double *sV, int R)
{
  __shared__ FusedSum warp_sums[PGMRES_SUMS_PER_BARRIER][FUSED_WARPS];
  const int           n = A.n, nsum = j + 1, G = gridDim.x, lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const PGMRESStepVecs sv = PGMRESStepVectors(v, j, n);

  for (int group = 0; group < nsum; group += PGMRES_SUMS_PER_BARRIER) {
    const int group_end = nsum < group + PGMRES_SUMS_PER_BARRIER ? nsum : group + PGMRES_SUMS_PER_BARRIER;
    for (int first = group; first < group_end; first += PGMRES_PRODUCTS_PER_PASS) {
      FusedSum acc[PGMRES_PRODUCTS_PER_PASS];
#pragma unroll
      for (int q = 0; q < PGMRES_PRODUCTS_PER_PASS; q++) acc[q] = FusedSum{};
      for (int i = blockIdx.x * blockDim.x + threadIdx.x, k = 0; i < n; i += G * blockDim.x, k++) {
        double y;
        if (first == 0 && !APPLIED) y = PGMRESStepRow<In, ROW_LOADS_FIRST, !OPERATOR_APPLIED, NORMALIZE>(A, v, j, scale, xi, sv, sV, R, i, k);
        else y = sv.w_new[i]; /* this thread wrote it in the first pass, or PGMRESLoopApplyKernel did */
#pragma unroll
        for (int q = 0; q < PGMRES_PRODUCTS_PER_PASS; q++) {
          const int l = first + q;
          if (l < j) FusedAddProduct(acc[q], (sV ? sV[PGMRESSlot(l, k, R)] : v.V[(size_t)l * n + i]), y);
          else if (l == j) FusedAddProduct(acc[q], y, y);
        }
      }
      {
        static_assert(PGMRES_PRODUCTS_PER_PASS == 8, "PGMRESWarpSumsOf8()");
        const FusedSum s = PGMRESWarpSumsOf8(acc, lane);
        const int      q = PGMRESWarpSumIndex(lane);
        if ((lane & 3) == 0 && first + q < group_end) warp_sums[first + q - group][warp] = s;
      }
    }
    __syncthreads();
    if ((int)threadIdx.x < group_end - group) FusedPartialPut(partials, (size_t)(group + threadIdx.x) * G + blockIdx.x, FusedSumOfWarps(warp_sums[threadIdx.x]));
    if (group_end < nsum) __syncthreads(); /* warp_sums is refilled */
  }
}

/* out[l] = sum over the G partials of sum l, l < nsum: eight threads per
   sum, whose loads are independent, then shuffles within the eight; the
   whole block calls it and finds out[] complete on return, and learns from
   the same barrier whether any out[l], l < ncheck, is not finite. UNROLL:
   the loads in flight per thread before their additions (in order: the
   sums are the same); where a thread has fewer partials than that, the
   loop's remainder loads and adds them one at a time. */
#define PGMRES_THREADS_PER_SUM 8
template <int UNROLL>
__device__ __forceinline__ int PGMRESSumPartials(const double *partials, int G, int nsum, int ncheck, double *out)
{
  const int sub = threadIdx.x % PGMRES_THREADS_PER_SUM;
  int       bad = 0;
  for (int first = 0; first < nsum; first += FUSED_BLOCK / PGMRES_THREADS_PER_SUM) {
    const int l = first + threadIdx.x / PGMRES_THREADS_PER_SUM;
    FusedSum  s = {};
    if (l < nsum) {
#pragma unroll(UNROLL)
      for (int b = sub; b < G; b += PGMRES_THREADS_PER_SUM) s += FusedPartialGet<FusedSum>(partials, (size_t)l * G + b);
    }
    for (int o = PGMRES_THREADS_PER_SUM / 2; o > 0; o >>= 1) s += FusedShuffleXor(s, o);
    if (sub == 0 && l < nsum) {
      const double value = FusedSumValue(s);
      out[l]             = value;
      bad |= l < ncheck && !isfinite(value);
    }
  }
  return __syncthreads_or(bad);
}

/* The second part on this thread's rows: w -= sum_{l<j} h_l v_l; <w,w>,
   <w,r>, <r,r>; with right Jacobi tmp = d .* w, which the next product
   reads. ROW_LOADS_FIRST: as in PGMRESProductPart(), for r. BATCH: basis
   entries loaded before their subtractions (PGMRES_BASIS_BATCH), or 1: the
   compiler's own interleaving, in the single kernels. */
template <bool ROW_LOADS_FIRST, int BATCH = 1, int NS = 0>
__device__ __forceinline__ void PGMRESOrthogPart(int n, const FusedPGMRESVecs &v, int j, const double *h, FusedSum (&acc)[3 + NS], const double *sV, int R, const FusedNullSpace *ns = nullptr)
{
  double *w = PGMRESStepVectors(v, j, n).w_new; /* the products' w' */
  for (int i = blockIdx.x * blockDim.x + threadIdx.x, k = 0; i < n; i += gridDim.x * blockDim.x, k++) {
    double       wi      = w[i];
    const double r_early = ROW_LOADS_FIRST ? v.r[i] : 0.0;
    if (sV) {
#pragma unroll 8
      for (int l = 0; l < j; l++) wi -= h[l] * sV[PGMRESSlot(l, k, R)];
    } else {
      /* the basis is read once more in the next step at the earliest:
         streaming loads leave L2 to w and r */
      if constexpr (BATCH == 1) {
#pragma unroll 16
        for (int l = 0; l < j; l++) wi -= h[l] * __ldcs(&v.V[(size_t)l * n + i]);
      } else
        for (int l0 = 0; l0 < j; l0 += BATCH) {
          double b[BATCH];
#pragma unroll
          for (int q = 0; q < BATCH; q++) b[q] = l0 + q < j ? __ldcs(&v.V[(size_t)(l0 + q) * n + i]) : 0.0;
#pragma unroll
          for (int q = 0; q < BATCH; q++)
            if (l0 + q < j) wi -= h[l0 + q] * b[q];
        }
    }
    const double r = ROW_LOADS_FIRST ? r_early : v.r[i];
    w[i]           = wi;
    if (v.right && v.d) v.tmp[i] = v.d[i] * wi;
    FusedAddProduct(acc[0], wi, wi);
    FusedAddProduct(acc[1], wi, r);
    FusedAddProduct(acc[2], r, r);
#pragma unroll
    for (int q = 0; q < NS; q++)
      if (q < ns->m) FusedAddProduct(acc[3 + q], wi, FusedNullSpaceBasis(*ns, q, i));
  }
}

/* r_jj = |w| after the orthogonalization and xi_j = <w,r> / r_jj, from its
   sums: one formula for what the vectors get and what R and xi record (a
   one-ulp difference between them once stopped a solve converging) */
__device__ __forceinline__ void PGMRESNormalization(const double o[3], double *rjj, double *xi)
{
  *rjj = sqrt(fabs(o[0]));
  *xi  = o[1] / *rjj;
}

enum { PGMRES_GO_ON, PGMRES_CYCLE_DONE, PGMRES_HOST_DECIDES };

/* The host loop's verdict on step j (pgmresfused.c, PGMRESFusedCycle), from
   the products h[0..j] (h_not_finite: one of h[0..j-1] is not) and the sums
   after the orthogonalization: go on;
   commit the step and end the cycle (restart or max_it reached); or leave
   the step to the host (the test stops, a sum is not finite, breakdown) */
__device__ __forceinline__ int PGMRESVerdict(const FusedConvergence &conv, int its0, int j, int m, double tol, const double *h, int h_not_finite, const double o[3], double *rnorm)
{
  double rjj, xi;
  PGMRESNormalization(o, &rjj, &xi);
  const double wnorm_before = j ? sqrt(fabs(h[j])) : rjj;
  bool         look         = false;

  *rnorm = 0.0;
  if (j) { /* the residual after step j-1 */
    *rnorm = sqrt(fabs(o[2]));
    look   = FusedMustStop(conv, its0 + j, *rnorm);
  }
  look = look || h_not_finite || !isfinite(o[0]) || !isfinite(o[1]) || rjj <= tol * wnorm_before;
  if (look) return PGMRES_HOST_DECIDES;
  return j + 1 >= m || its0 + j + 1 >= conv.max_it ? PGMRES_CYCLE_DONE : PGMRES_GO_ON;
}

/* One thread records the verdict: the residual history, and R's column and
   xi (committed) or the step's sums for the host (pending); with a null
   space its m coefficients for the next normalization (the reduction left
   them after the three sums, where the host finds them too) */
__device__ __forceinline__ void PGMRESRecord(PGMRESLoopState *gs, FusedLoopState *state, double *hist, double *sums, int base, int j, int verdict, const double *h, const double o[3], double rnorm, double rho, double nu, double cycle_rnorm0, const double *ns_coef = nullptr, int ns_m = 0)
{
  for (int k = 0; k < ns_m; k++) gs->ns.coef[k] = ns_coef[k];
  const int m = gs->restart, it = gs->its0 + j;
  double   *R = PGMRESLoopR(gs), *xis = R + (size_t)m * m, *rhos = xis + m;

  if (j) hist[it] = rnorm;
  if (verdict == PGMRES_HOST_DECIDES) {
    for (int l = 0; l <= j; l++) sums[l] = h[l];
    for (int k = 0; k < 3; k++) sums[base + k] = o[k];
    gs->pending = 1;
    gs->j       = j;
    state->it   = it;
    state->stop = 1;
    return;
  }
  {
    double rjj, xi;
    PGMRESNormalization(o, &rjj, &xi);
    for (int l = 0; l < j; l++) R[l + (size_t)j * m] = h[l];
    R[j + (size_t)j * m] = rjj;
    xis[j]               = xi;
    gs->inv_r            = 1.0 / rjj;
    gs->xi               = xi;
    rhos[j]              = rho;
    gs->rho              = PGMRESAdaptiveRho(nu, xi, j ? rnorm : cycle_rnorm0); /* step j + 1's */
    if (rho > 0.0) gs->adaptive_steps++;
  }
  gs->j     = j + 1;
  state->it = it + 1;
  if (verdict == PGMRES_CYCLE_DONE) state->stop = 1;
}

/* The graph's first kernel of a step: the first pass of PGMRESProductPart()
   alone (normalization and w' = Op v_{j-1}), with the DIA loads gathered
   and as many warps as fit, to wait for memory less. Run by the product
   kernel's first pass, the operator cost the H100 about twice its bytes'
   time: as its own kernel, GMRES(30) took 141 against 156 us per iteration
   at 1M rows, 569 against 620 on 160^3. */
__global__ void PGMRESLoopApplyKernel(FusedMatView A, FusedPGMRESVecs v, PGMRESLoopState *gs, const FusedLoopState *state)
{
  if (FusedLoopKernelStopped(state)) return;
  const int     j = gs->j, n = A.n;
  const bool    normalize = !(gs->rho > 0.0); /* else PGMRESLoopAdaptKernel has */
  const double  scale = j && normalize ? gs->inv_r : 1.0, xi = gs->xi;
  const PGMRESStepVecs sv = PGMRESStepVectors(v, j, n);
  FUSED_GRID_LOOP(i, n)(void) PGMRESStepRow<FusedStoredGathered<8>, false>(A, v, j, scale, xi, sv, NULL, 0, i, 0, normalize);
}

/* The graph's kernel before the operator's where -ksp_pgmresfused_adaptive
   is on: an adaptive step's own pass (PGMRESAdaptRow(); with a null space
   v_{j-1} is made of w_prev less its part there, and so z_j has none);
   nothing on the others */
__global__ void PGMRESLoopAdaptKernel(int n, FusedPGMRESVecs v, const PGMRESLoopState *gs, const FusedLoopState *state)
{
  if (FusedLoopKernelStopped(state)) return;
  const int j = gs->j;
  if (!j || !(gs->rho > 0.0)) return;
  const double         scale = gs->inv_r, xi = gs->xi, inv_rho = 1.0 / gs->rho;
  const PGMRESStepVecs sv = PGMRESStepVectors(v, j, n);
  if (gs->ns.m) {
    const FusedNullSpace ns = gs->ns;
    FUSED_GRID_LOOP(i, n) PGMRESAdaptRow(v, j, scale, FusedLessNullSpace<FUSED_NULLSPACE_MAX>(ns, ns.coef, sv.w_prev[i], i), xi, inv_rho, sv, NULL, 0, i, 0);
  } else FUSED_GRID_LOOP(i, n) PGMRESAdaptRow(v, j, scale, sv.w_prev[i], xi, inv_rho, sv, NULL, 0, i, 0);
}

/* The operator's input of step j with a null space: w_prev less its part
   there (the last orthogonalization's <w, n_k>; none at j = 0, where the
   input is z_0), entry by entry. v_{j-1} is made by the same kernel, so the
   product forms the entries it reads on the fly; A v_{j-1} is then exact
   whether or not A n_k = 0 (PETSc projects whatever basis it is given). */
template <int NS>
struct PGMRESLessNullSpaceOf {
  static constexpr bool gather = true;
  static constexpr int  batch  = 8;
  using Entry                  = double;
  const double *__restrict__ p;
  FusedNullSpace ns; /* its coef unused: c */
  double         c[NS];
  __device__ __forceinline__ double Load(int j) const { return FusedLessNullSpace<NS>(ns, c, p[j], j); }
  __device__ __forceinline__ double Value(double e) const { return e; }
  __device__ __forceinline__ double operator()(int j) const { return Load(j); }
};

template <int NS>
__device__ __forceinline__ PGMRESLessNullSpaceOf<NS> PGMRESInputOf(const FusedPGMRESVecs &v, const PGMRESLoopState *gs, int j, int n)
{
  PGMRESLessNullSpaceOf<NS> in;
  in.p  = PGMRESStepVectors(v, j, n).in;
  in.ns = gs->ns;
#pragma unroll
  for (int k = 0; k < NS; k++) in.c[k] = j && k < in.ns.m && !(gs->rho > 0.0) ? in.ns.coef[k] : 0.0; /* an adaptive step's z_j has no part there */
  return in;
}

/* PGMRESLoopApplyKernel with a null space of NS vectors at most (left
   Jacobi or none): v_{j-1} = scale (w_prev - sum_k c_k n_k), r -= xi
   v_{j-1}, w' = scale B A (w_prev - sum_k c_k n_k) */
template <int NS>
__global__ void PGMRESLoopApplyNullKernel(FusedMatView A, FusedPGMRESVecs v, PGMRESLoopState *gs, const FusedLoopState *state)
{
  if (FusedLoopKernelStopped(state)) return;
  const int                       j = gs->j, n = A.n;
  const bool                      normalize = !(gs->rho > 0.0); /* else PGMRESLoopAdaptKernel has */
  const double                    scale = j && normalize ? gs->inv_r : 1.0, xi = gs->xi;
  const PGMRESStepVecs            sv = PGMRESStepVectors(v, j, n);
  const PGMRESLessNullSpaceOf<NS> in = PGMRESInputOf<NS>(v, gs, j, n);
  FUSED_GRID_LOOP(i, n)
  {
    if (j && normalize) {
      const double u = scale * in(i);
      sv.v_prev[i]   = u;
      v.r[i]         = v.r[i] - xi * u;
    }
    double y = scale * FusedRowProductOf(A, in, i);
    if (v.d) y *= v.d[i];
    sv.w_new[i] = y;
  }
}

/* PGMRESLoopApplyKernel with left point-block Jacobi: w' = B (scale A in)
   from the tile; the row's own work (the normalization, r) as PGMRESStepRow's.
   The DIA loads not gathered: gathered, the kernel spilled 12 bytes (ptxas). */
__global__ void __launch_bounds__(FUSED_BLOCK) PGMRESLoopApplyBlockKernel(FusedMatView A, FusedPGMRESVecs v, PGMRESLoopState *gs, const FusedLoopState *state)
{
  if (FusedLoopKernelStopped(state)) return;
  const int            j = gs->j, n = A.n;
  const bool           normalize = !(gs->rho > 0.0); /* else PGMRESLoopAdaptKernel has */
  const double         scale = j && normalize ? gs->inv_r : 1.0, xi = gs->xi;
  const PGMRESStepVecs sv = PGMRESStepVectors(v, j, n);
  FusedBlockTiles(
    n, v.bs,
    [=](int i) {
      if (j && normalize) {
        const double u = scale * sv.w_prev[i];
        sv.v_prev[i]   = u;
        v.r[i]         = v.r[i] - xi * u;
      }
      return scale * FusedRowProductOf(A, FusedStored{sv.in}, i);
    },
    [=](int i, const double *ys, int t0) { sv.w_new[i] = FusedBlockRow(v.dblock, v.bs, i, ys, t0); });
}

/* The long rows' rest of the operator's input of step j, before PGMRESLoopApplyKernel */
__global__ void PGMRESLongRowsKernel(FusedMatView A, FusedPGMRESVecs v, const PGMRESLoopState *gs, const FusedLoopState *state)
{
  if (FusedLoopKernelStopped(state)) return;
  if (gs->ns.m) FusedLongRowsOf<FUSED_LONG_BATCH>(A, PGMRESInputOf<FUSED_NULLSPACE_MAX>(v, gs, gs->j, A.n));
  else FusedLongRowsOf<FUSED_LONG_BATCH>(A, FusedStored{PGMRESStepVectors(v, gs->j, A.n).in});
}

/* the graph's second kernel: the products <v_l, w'> and <w', w'>; four
   resident blocks per multiprocessor (64 registers) */
__global__ void __launch_bounds__(FUSED_BLOCK, 4) PGMRESLoopProductKernel(FusedMatView A, FusedPGMRESVecs v, PGMRESLoopState *gs, double *partials, double *sums, unsigned int *ticket, const FusedLoopState *state)
{
  if (FusedLoopKernelStopped(state)) return;
  const int j = gs->j;

  PGMRESProductPart<FusedStored, false, true>(A, v, j, 1.0, 0.0, partials, NULL, 0);
  if (!FusedIsLastBlock(ticket)) return;
  (void)PGMRESSumPartials<16>(partials, gridDim.x, j + 1, 0, sums); /* the last block alone, 66 partials per thread at 1M rows: the grid waits for it */
  if (threadIdx.x == 0) *ticket = 0;
}

/* the graph's third kernel: h (the second kernel's sums) in shared memory;
   with a null space (NS basis vectors at most) |w|^2 is folded to that of
   w less its part there before the verdict (its accumulators take
   registers: fewer resident blocks, not spills) */
template <int NS>
__global__ void __launch_bounds__(FUSED_BLOCK, NS == 0 ? 5 : NS == 1 ? 4 : 2) PGMRESLoopOrthogKernel(FusedMatView A, FusedPGMRESVecs v, PGMRESLoopState *gs, int base, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist, cudaGraphConditionalHandle handle)
{
  extern __shared__ double h[];
  if (FusedLoopKernelStopped(state)) {
    /* the first test stopped the loop before its first step: it ends here */
    if (blockIdx.x == 0 && threadIdx.x == 0) cudaGraphSetConditional(handle, 0);
    return;
  }
  const int j           = gs->j;
  FusedSum  acc[3 + NS] = {};
  int       bad         = 0;

  for (int l = threadIdx.x; l <= j; l += blockDim.x) {
    h[l] = sums[l];
    bad |= l < j && !isfinite(h[l]);
  }
  const int h_not_finite = __syncthreads_or(bad);
  const FusedNullSpace *ns = &gs->ns;
  PGMRESOrthogPart<false, PGMRES_BASIS_BATCH, NS>(A.n, v, j, h, acc, NULL, 0, ns);
  if (FusedReduce<3 + NS>(acc, partials, sums, ticket, base) && threadIdx.x == 0) {
    double rnorm, o[3 + NS];
#pragma unroll
    for (int k = 0; k < 3 + NS; k++) o[k] = FusedSumValue(acc[k]);
    if (NS) o[0] = FusedNullSpaceFoldSquare(o[0], o + 3, ns->m);
    const int verdict = PGMRESVerdict(state->conv, gs->its0, j, gs->restart, gs->breakdowntol, h, h_not_finite, o, &rnorm);
    PGMRESRecord(gs, state, hist, sums, base, j, verdict, h, o, rnorm, gs->rho, gs->nu, gs->cycle_rnorm0, o + 3, NS ? ns->m : 0);
    if (verdict != PGMRES_GO_ON) cudaGraphSetConditional(handle, 0);
  }
}

/* t = R^{-1} t for the k x k upper triangle of R (leading dimension m), by
   one warp, column by column from the last: each t_i gets its subtractions
   in the order and with the roundings of the host's back solve
   (pgmresfused.c), so both give the same t. Lane l holds t_l and t_{l+32}
   in registers, and every lane divides t_i by R_ii itself: a column's
   critical path is one shuffle, the division and one update, without the
   round trips through shared memory (H100: 0.13 us a column, 0.2 with
   them; the division by two FMA corrections of 1 / R_ii was slower). */
static_assert(FUSED_PGMRES_CYCLES_MAX_RESTART <= 64, "the back solve holds two entries of t a lane");
__device__ __forceinline__ void PGMRESBackSolveWarp(const double *R, int m, int k, double *t)
{
  const int lane = threadIdx.x & 31;
  double    t_lo = lane < k ? t[lane] : 0.0, t_hi = lane + 32 < k ? t[lane + 32] : 0.0;

  __syncwarp(); /* t is rewritten below */
  for (int i = k - 1; i >= 0; i--) {
    const double *R_i  = R + (size_t)i * m;
    const double  r_lo = lane < i ? R_i[lane] : 0.0, r_hi = lane + 32 < i ? R_i[lane + 32] : 0.0; /* loaded before t_i is known */
    const double  t_i  = __shfl_sync(0xffffffffu, i < 32 ? t_lo : t_hi, i & 31) / R_i[i];
    if (lane < i) t_lo = __dsub_rn(t_lo, __dmul_rn(r_lo, t_i));
    else if (lane == i) t_lo = t_i;
    if (lane + 32 < i) t_hi = __dsub_rn(t_hi, __dmul_rn(r_hi, t_i));
    else if (lane + 32 == i) t_hi = t_i;
  }
  if (lane < k) t[lane] = t_lo;
  if (lane + 32 < k) t[lane + 32] = t_hi;
}

/* the doubles of a block's shared memory that hold its own copy of the
   cycle's R (m x m), xi and rho (m each) for the cycle's end; after the back
   solve R's part is the adaptive coefficients' scratch */
__host__ __device__ __forceinline__ size_t PGMRESCycleScratch(int m)
{
  return (size_t)m * m + 2 * (size_t)m;
}

/* Where that scratch holds them: R by columns (column j at R + j m), then
   xi, then rho; the one place that says so */
struct PGMRESCycleKept {
  double *R, *xi, *rho;
};

__device__ __forceinline__ PGMRESCycleKept PGMRESCycleKeptIn(double *scratch, int m)
{
  double *xi = scratch + (size_t)m * m;
  return PGMRESCycleKept{scratch, xi, xi + m};
}

/* Every block of the single kernel that ends cycles keeps step j's column
   of R, its xi and rho in its shared memory (Rs), from the sums it has (h,
   and rjj, xi from PGMRESNormalization(), as PGMRESRecord() makes them): at
   the cycle's end no block waits for block 0's record in global memory, nor
   reads it back. rjj and xi come in made: made again under thread 0 alone,
   they cost every step about 0.2 us on the H100. */
__device__ __forceinline__ void PGMRESKeepColumn(double *Rs, int m, int j, const double *h, double rjj, double xi, double rho)
{
  const PGMRESCycleKept kept = PGMRESCycleKeptIn(Rs, m);
  double               *R_j  = kept.R + (size_t)j * m;

  for (int l = threadIdx.x; l < j; l += blockDim.x) R_j[l] = h[l];
  if (threadIdx.x == 0) {
    R_j[j]      = rjj;
    kept.xi[j]  = xi;
    kept.rho[j] = rho;
  }
}

/* The quotients the spread of the coefficients multiplies t_j by, a
   thread each, into q (k x k, row m for coefficient m): q[m k + j] =
   |r_0| / rho_j (m = 0) or xi_{m-1} / rho_j, for the adaptive steps j >=
   max(m, 1). Made one after another by the coefficient's thread (up to k
   of them), they cost the end of a cycle whose steps adapt 1.1 us more on
   the H100 (10^4 rows, 30 steps). */
__device__ __forceinline__ void PGMRESSpreadQuotients(const double *xi, const double *rho, int k, double rnorm0, double *q)
{
  for (int e = threadIdx.x; e < k * k; e += blockDim.x) {
    const int m = e / k, j = e - m * k;
    if (j >= (m ? m : 1) && rho[j] > 0.0) q[e] = __ddiv_rn(m ? xi[m - 1] : rnorm0, rho[j]);
  }
}

/* Coefficient m of the correction over z_0, v_0, ..., v_{k-2} from t over
   z_0, ..., z_{k-1}, as PGMRESFusedBasisCoefficients() (pgmresfused.c)
   makes it, with its terms in the same order: an adaptive step's z_j =
   (|r_0| z_0 - sum_{l<j} xi_l v_l) / rho_j spreads t_j over them. q_m:
   row m of PGMRESSpreadQuotients(). A thread a coefficient: one thread for
   all cost the H100 about 3 us per step at 10^4 rows. */
__device__ __forceinline__ double PGMRESSpreadCoefficient(const double *t, const double *q_m, const double *rho, int k, int m)
{
  double a = m == 0 || rho[m] == 0.0 ? t[m] : 0.0;
  for (int j = m == 0 ? 1 : m; j < k; j++) {
    if (!(rho[j] > 0.0)) continue;
    if (m == 0) a = __dadd_rn(a, __dmul_rn(t[j], q_m[j]));
    else a = __dsub_rn(a, __dmul_rn(t[j], q_m[j]));
  }
  return a;
}

/* The end of a cycle of k steps by each block of the single kernel, as the
   host's back solve and update would make it: t = R^{-1} xi in every block
   (t: its shared memory, free once the block is here; Rs: the block's copy
   of R, xi and rho, PGMRESKeepColumn()), spread over the basis where steps
   were adaptive (cycle_rnorm0 > 0: the cycle's |r_0|), then x += the
   correction on this thread's rows, which only this thread wrote. */
__device__ __forceinline__ void PGMRESEndCycle(const FusedPGMRESVecs &v, int n, int m, int k_steps, double *Rs, double *t, const double *sV, int R, double cycle_rnorm0)
{
  const PGMRESCycleKept kept = PGMRESCycleKeptIn(Rs, m);

  __syncthreads(); /* t may be the block's h, which thread 0 has just recorded; Rs's last column */
  for (int l = threadIdx.x; l < k_steps; l += blockDim.x) t[l] = kept.xi[l];
  __syncthreads();
  if (threadIdx.x < 32) PGMRESBackSolveWarp(kept.R, m, k_steps, t);
  __syncthreads();
  if (cycle_rnorm0 > 0.0) { /* R is free after the back solve: the quotients, then the new t in their rows' unused first entries */
    int adapted = 0;
    for (int l = threadIdx.x; l < k_steps; l += blockDim.x) adapted |= kept.rho[l] > 0.0;
    if (__syncthreads_or(adapted)) {
      PGMRESSpreadQuotients(kept.xi, kept.rho, k_steps, cycle_rnorm0, kept.R);
      __syncthreads();
      for (int l = threadIdx.x; l < k_steps; l += blockDim.x) kept.R[l * k_steps] = PGMRESSpreadCoefficient(t, kept.R + l * k_steps, kept.rho, k_steps, l);
      __syncthreads();
      for (int l = threadIdx.x; l < k_steps; l += blockDim.x) t[l] = kept.R[l * k_steps];
      __syncthreads();
    }
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x, k = 0; i < n; i += gridDim.x * blockDim.x, k++)
    v.x[i] = __dadd_rn(v.x[i], PGMRESCorrection<1>(v, k_steps, t, i, [&](int l) { return sV ? sV[PGMRESSlot(l, k, R)] : v.V[(size_t)l * n + i]; }));
}

/* The end of a cycle of k steps and the start of the next by the whole grid
   of the single kernel, as the host would make them: PGMRESEndCycle(), then
   r = B (b - A x) (left) or b - A x (right). Returns |r|, the same in every
   block; the partial sums go through part's first row, which no block
   stores before every block is past the barrier after the cycle's end, so
   past its last read of the step's sums there. */
__device__ __forceinline__ double PGMRESNextCycleStart(cooperative_groups::grid_group &grid, const FusedMatView &A, const FusedPGMRESVecs &v, int m, int k_steps, double *Rs, double *t, const double *sV, int R, double *part, double *sum, double cycle_rnorm0)
{
  FusedSum acc[1] = {};

  PGMRESEndCycle(v, A.n, m, k_steps, Rs, t, sV, R, cycle_rnorm0);
  grid.sync(); /* the product reads the other blocks' rows of x */
  if (A.lrows.nchunks) {
    FusedLongRowsOf(A, FusedStored{v.x});
    grid.sync();
  }
  FUSED_GRID_LOOP(i, A.n)
  {
    const double r = PGMRESStartRow(A, v, 0, i);
    FusedAddProduct(acc[0], r, r);
  }
  FusedStorePartials<1>(acc, part);
  grid.sync();
  (void)PGMRESSumPartials<4>(part, gridDim.x, 1, 0, sum);
  return sqrt(fabs(sum[0]));
}


/* One thread records a cycle start made on the device: its residual norm
   in the history where the device goes on, or the hand-over to the host,
   whose own start then tests it (stop, zero or not finite) */
__device__ __forceinline__ void PGMRESRecordStart(PGMRESLoopState *gs, FusedLoopState *state, double *hist, int its0, double rnorm0, bool host_looks)
{
  gs->its0          = its0;
  gs->j             = 0;
  gs->start_on_host = host_looks;
  gs->start_norm    = rnorm0;
  gs->cycle_rnorm0  = rnorm0;
  gs->rho           = 0.0;
  state->it         = its0;
  state->stop       = host_looks;
  if (!host_looks) hist[its0] = rnorm0;
}

/* The whole cycle in one cooperative kernel: every block sums the partials
   after each barrier and reaches the same verdict from the same sums. part:
   restart + 1 rows of product partials, then 3 of the orthogonalization's.
   Shared memory: h (restart + 1), R's copy (restart^2, CYCLES), the basis
   rows (R per thread, where R > 0).

   CYCLES: a full cycle is also ended and the next one started here (the
   host's work between two cycles, which cost it a few waits for the
   device), as long as the test of each start lets the solve go on; so is
   the last cycle at max_it, whose start the host only tests. Only
   with the basis in shared memory, where a block per multiprocessor is all
   that fits anyway, so the steps may take all the registers they want: the
   added code under the limit of two blocks cost the steps 2-8 us each on
   the H100 (10,000 to 262,144 rows), more than the host's work it saves
   where the basis is read from global memory. */
/* w_new = scale B Op in for step j with a group of `lanes` lanes a row
   (FusedRowsInGroups()), where the rows would leave most threads idle:
   the single kernel's thread-owned first pass then reads it (after a grid
   barrier) and makes the rest of the row */
__device__ __forceinline__ void PGMRESApplyInGroups(const FusedMatView &A, const FusedPGMRESVecs &v, int j, double scale, int lanes)
{
  const PGMRESStepVecs sv = PGMRESStepVectors(v, j, A.n);
  FusedRowsInGroups<FUSED_BLOCK>(A, FusedStored{sv.in}, lanes, [&](int i, double y) {
    y = scale * y;
    if (v.d && !v.right) y *= v.d[i];
    sv.w_new[i] = y;
  });
}

/* The solve's first cycle start inside the single kernel (start:
   FUSED_LOOP_START_*), as PGMRESStartKernel, FusedCUDARhsNorm() and
   PGMRESFirstStartKernel make it in kernels of their own: r = B (b - A x)
   (or B b, and x = 0), |r0|^2 and, where the test needs it, ||B b||^2 (left
   preconditioning: the preconditioned norm) summed over the grid, the test
   of iteration 0 with the tolerances set from them into conv, and z_0 =
   r / |r0|. False where the host must look: the loop then ends before its
   first step. The first two rows of part are free until the first step's
   orthogonalization; sum is the block's shared room for two sums. */
__device__ __forceinline__ bool PGMRESSingleStart(cooperative_groups::grid_group &grid, const FusedMatView &A, const FusedPGMRESVecs &v, PGMRESLoopState *gs, FusedLoopState *state, double *sums, double *hist, int start, FusedConvergence &conv, double *part, double *sum, double *start_rnorm0)
{
  const bool rhs  = conv.reference != FUSED_REFERENCE_RESIDUAL;
  const int  zero = start == FUSED_LOOP_START_ZERO;
  FusedSum   acc[2] = {};

  if (!zero && A.lrows.nchunks) {
    FusedLongRowsOf(A, FusedStored{v.x});
    grid.sync();
  }
  FUSED_GRID_LOOP(i, A.n)
  {
    const double r = PGMRESStartRow(A, v, zero, i);
    if (zero) v.x[i] = 0.0;
    FusedAddProduct(acc[0], r, r);
    if (rhs) FusedAddRhsNormTerm(acc[1], FUSED_NORM_PRECONDITIONED, v.b[i], v.d ? v.d[i] * v.b[i] : v.b[i]);
  }
  FusedStorePartials<2>(acc, part);
  grid.sync();
  (void)PGMRESSumPartials<4>(part, gridDim.x, 2, 0, sum);
  const double rnorm0 = sqrt(fabs(sum[0])), rhs_square = sum[1];
  *start_rnorm0 = rnorm0;
  FusedSetTolerancesFrom(conv, rnorm0, rhs_square);
  const bool host_looks = !(rnorm0 > 0.0) || FusedMustStop(conv, gs->its0, rnorm0);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    state->conv.ttol = conv.ttol;
    state->conv.dtol = conv.dtol;
    if (rhs) sums[conv.rhs_slot] = rhs_square; /* for the host's replay of iteration 0 */
    PGMRESRecordStart(gs, state, hist, gs->its0, rnorm0, host_looks);
  }
  if (host_looks) return false;
  const double scale = 1.0 / rnorm0; /* times r: the bits of PGMRESScaleKernel's scale * 1.0 * r */
  FUSED_GRID_LOOP(i, A.n) v.z0[i] = scale * v.r[i];
  grid.sync(); /* z_0 complete before the first product reads it */
  return true;
}

/* ADAPTIVE (-ksp_pgmresfused_adaptive): each block chooses rho from the
   same sums, an adaptive step takes its own pass and a grid barrier before
   the operator's, and the cycle's end spreads its coefficient over the
   basis. */
template <bool CYCLES, bool GROUPS = false, bool ADAPTIVE = false>
__global__ void __launch_bounds__(FUSED_BLOCK, CYCLES ? 1 : 2) PGMRESSingleKernel(FusedMatView A, FusedPGMRESVecs v, PGMRESLoopState *gs, double *part, double *sums, int base, FusedLoopState *state, double *hist, int R, int lanes, int start)
{
  extern __shared__ double h[];
  __shared__ double              orth[3];
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const int                      G = gridDim.x, m = gs->restart;
  int                            its0 = gs->its0;
  const double                   tol  = gs->breakdowntol;
  FusedConvergence               conv = state->conv;
  double                        *orth_part = part + (size_t)(m + 1) * G * FUSED_SUM_WIDTH;
  double                         scale = 1.0, xi = 0.0;
  double                        *sV = R ? h + m + 1 + (CYCLES ? PGMRESCycleScratch(m) : 0) : NULL; /* the block's rows of the basis, R per thread */
  const double                   nu = ADAPTIVE ? gs->nu : 0.0;
  double                         cycle_rnorm0 = ADAPTIVE ? gs->cycle_rnorm0 : 0.0; /* where the kernel makes the start, that one's */
  double                         rho = 0.0; /* step j's (ADAPTIVE) */

  /* every way out hands the loop's results back from block 0 */
  if constexpr (CYCLES) {
    if (start != FUSED_LOOP_GOES_ON && !PGMRESSingleStart(grid, A, v, gs, state, sums, hist, start, conv, orth_part, orth, &cycle_rnorm0)) {
      FusedLoopHandBackInKernel(state);
      return;
    }
  }
  if (state->stop) { /* the first test (PGMRESFirstStartKernel) handed the start to the host */
    FusedLoopHandBackInKernel(state);
    return;
  }
  for (int j = 0;; j++) {
    bool normalize = true;
    if (ADAPTIVE && j && rho > 0.0) {
      const PGMRESStepVecs sv = PGMRESStepVectors(v, j, A.n);
      const double         inv_rho = 1.0 / rho;
      for (int i = blockIdx.x * blockDim.x + threadIdx.x, k = 0; i < A.n; i += G * blockDim.x, k++) PGMRESAdaptRow(v, j, scale, sv.w_prev[i], xi, inv_rho, sv, sV, R, i, k);
      grid.sync(); /* the operator reads the other blocks' rows of z_j */
      normalize = false;
      scale     = 1.0;
    }
    if (A.lrows.nchunks) { /* the long rows' rest first: the product reads it */
      FusedLongRowsOf(A, FusedStored{PGMRESStepVectors(v, j, A.n).in});
      grid.sync();
    }
    if constexpr (GROUPS) {
      PGMRESApplyInGroups(A, v, j, scale, lanes);
      grid.sync();
      if (ADAPTIVE && !normalize) PGMRESProductPart<FusedStored, CYCLES, false, true, false>(A, v, j, scale, xi, part, sV, R);
      else PGMRESProductPart<FusedStored, CYCLES, false, true>(A, v, j, scale, xi, part, sV, R);
    } else {
      /* eight diagonals' loads at once where the registers are there */
      if (ADAPTIVE && !normalize) PGMRESProductPart<FusedStoredGathered<CYCLES ? 8 : 4>, CYCLES, false, false, false>(A, v, j, scale, xi, part, sV, R);
      else PGMRESProductPart<FusedStoredGathered<CYCLES ? 8 : 4>, CYCLES>(A, v, j, scale, xi, part, sV, R);
    }
    grid.sync();
    /* four loads at a time: sixteen made the steps slower on the H100
       (10,000 rows 10.1 against 9.3 us, 262,144 rows 57.7 against 49.1),
       and so did either by the number of partials (10.7) */
    const int h_not_finite = PGMRESSumPartials<4>(part, G, j + 1, j, h);
    FusedSum acc[3] = {};
    double   o[3], rnorm;
    PGMRESOrthogPart<CYCLES>(A.n, v, j, h, acc, sV, R);
    FusedStorePartials<3>(acc, orth_part);
    grid.sync();
    (void)PGMRESSumPartials<4>(orth_part, G, 3, 0, orth);
    for (int k = 0; k < 3; k++) o[k] = orth[k];
    const int verdict = PGMRESVerdict(conv, its0, j, m, tol, h, h_not_finite, o, &rnorm);
    double    rjj = 0.0, xi_j = 0.0; /* R's diagonal entry and xi of step j, where the step is committed */
    if constexpr (CYCLES) PGMRESNormalization(o, &rjj, &xi_j); /* the blocks' copies of R take them */
    /* the record takes what the block knows: loads from the state would hold the grid up */
    if (blockIdx.x == 0 && threadIdx.x == 0) PGMRESRecord(gs, state, hist, sums, base, j, verdict, h, o, rnorm, rho, nu, cycle_rnorm0);
    if (CYCLES && verdict != PGMRES_HOST_DECIDES) PGMRESKeepColumn(h + m + 1, m, j, h, rjj, xi_j, rho);
    if (CYCLES && verdict == PGMRES_CYCLE_DONE) {
      /* a full cycle, or the last one at max_it: the start after it tests
         (and, at max_it, stops) the residual, as the host's start would */
      const double rnorm0     = PGMRESNextCycleStart(grid, A, v, m, j + 1, h + m + 1, h, sV, R, orth_part, orth, ADAPTIVE ? cycle_rnorm0 : 0.0);
      const bool   host_looks = !(rnorm0 > 0.0) || FusedMustStop(conv, its0 + j + 1, rnorm0);
      its0 += j + 1;
      if (blockIdx.x == 0 && threadIdx.x == 0) PGMRESRecordStart(gs, state, hist, its0, rnorm0, host_looks);
      if (host_looks) {
        FusedLoopHandBackInKernel(state);
        return;
      }
      /* z_0 = r / |r| (and d .* z_0, right): the first product's input */
      FUSED_GRID_LOOP(i, A.n)
      {
        const double z = (1.0 / rnorm0) * v.r[i];
        v.z0[i]        = z;
        if (v.right && v.d) v.tmp[i] = v.d[i] * z;
      }
      grid.sync();
      scale        = 1.0;
      xi           = 0.0;
      rho          = 0.0;
      cycle_rnorm0 = rnorm0;
      j            = -1;
      continue;
    }
    if (CYCLES && verdict == PGMRES_HOST_DECIDES && j && !h_not_finite && isfinite(rnorm) && FusedMustStop(conv, its0 + j, rnorm)) {
      /* the test stops the solve after step j - 1: the host replays that
         test and would end the cycle with those j steps after its wait
         for the loop, a launch more; the kernel ends it here */
      PGMRESEndCycle(v, A.n, m, j, h + m + 1, h, sV, R, ADAPTIVE ? cycle_rnorm0 : 0.0);
      if (blockIdx.x == 0 && threadIdx.x == 0) gs->cycle_ended = 1;
      FusedLoopHandBackInKernel(state);
      return;
    }
    if (verdict != PGMRES_GO_ON) {
      FusedLoopHandBackInKernel(state);
      return;
    }
    /* made here without cycles: made before the record, they cost that
       kernel 1-2% a step on the H100 (10^6 rows, 64^3) */
    if constexpr (!CYCLES) PGMRESNormalization(o, &rjj, &xi_j);
    xi    = xi_j;
    scale = 1.0 / rjj;
    if (ADAPTIVE) rho = PGMRESAdaptiveRho(nu, xi, j ? rnorm : cycle_rnorm0); /* step j + 1's, as the record's */
    __syncthreads(); /* h is rewritten in the next step */
  }
}


/* The first cycle's start tested on the device (FusedConvergence.judge_first),
   between the loop's state going in and the loop: every block reads |r0|^2
   from the start's sums[0], sets the tolerances as KSPConvergedDefault
   does at iteration 0 and comes to the same verdict; block 0 records it as
   PGMRESRecordStart() records a cycle start made on the device. Where the
   loop goes on, z_0 = r / |r0| (the host-driven start's
   FusedPGMRESProductInput(), with the same roundings); where the host must
   look, the loop stops before its first step and the host starts again. */
__global__ void PGMRESFirstStartKernel(int n, FusedPGMRESVecs v, PGMRESLoopState *gs, FusedLoopState *state, const double *sums, double *hist)
{
  FusedConvergence conv   = state->conv;
  const int        its0   = state->it;
  const double     rnorm0 = sqrt(fabs(sums[0]));
  FusedSetTolerances(conv, rnorm0, sums);
  const bool host_looks = !(rnorm0 > 0.0) || FusedMustStop(conv, its0, rnorm0);
  if (blockIdx.x == 0 && threadIdx.x == 0) { /* no block reads ttol, dtol or it here */
    state->conv.ttol = conv.ttol;
    state->conv.dtol = conv.dtol;
    PGMRESRecordStart(gs, state, hist, its0, rnorm0, host_looks);
  }
  if (host_looks) return;
  const double scale = 1.0 / rnorm0; /* times r: the bits of PGMRESScaleKernel's scale * 1.0 * r */
  FUSED_GRID_LOOP(i, n) v.z0[i] = scale * v.r[i];
}

/* where the right-hand side's norm goes: after the orthogonalization's
   three sums and a null space's room */
#if !FUSED_COMPENSATED /* the same in both builds */
extern "C" int FusedPGMRESRhsSlot(FusedCUDA ctx)
{
  return ctx->maxsums / 2 + 3 + FUSED_NULLSPACE_MAX;
}
#endif

struct PGMRESFirstStartArgs {
  FusedPGMRESVecs  v;
  PGMRESLoopState *gs;
};

static int PGMRESQueueFirstStart(FusedCUDA ctx, const void *arg)
{
  const PGMRESFirstStartArgs *a = (const PGMRESFirstStartArgs *)arg;
  PGMRESFirstStartKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, a->v, a->gs, ctx->state, ctx->sums, ctx->hist);
  FUSED_CUDA_CHECK_LAUNCH("PGMRESFirstStartKernel");
  return FUSED_CUDA_OK;
}

struct PGMRESLoopArgs {
  FusedMatView     A;
  FusedPGMRESVecs  v;
  int              ns_m;     /* the null space's vectors (its basis is in the loop's state) */
  int              adaptive; /* the graph has PGMRESLoopAdaptKernel */
  PGMRESLoopState *gs;
  int              base;
  size_t           smem;
};

static int PGMRESBuildLoop(FusedCUDA ctx, const void *args_, cudaGraphConditionalHandle handle)
{
  const PGMRESLoopArgs *args  = (const PGMRESLoopArgs *)args_;
  const FusedLoopState *state = ctx->state;
  const int             m     = args->ns_m;
  /* the null space's kernels for one basis vector and for the most */
  auto apply  = args->v.dblock ? PGMRESLoopApplyBlockKernel : m == 0 ? PGMRESLoopApplyKernel : m == 1 ? PGMRESLoopApplyNullKernel<1> : PGMRESLoopApplyNullKernel<FUSED_NULLSPACE_MAX>;
  auto orthog = m == 0 ? PGMRESLoopOrthogKernel<0> : m == 1 ? PGMRESLoopOrthogKernel<1> : PGMRESLoopOrthogKernel<FUSED_NULLSPACE_MAX>;
  int  ga, gp, go;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)apply, 0, &ga)) return err;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)PGMRESLoopProductKernel, 0, &gp)) return err;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)orthog, args->smem, &go)) return err;
  if (args->adaptive) {
    int gd;
    if (int err = FusedCUDAResidentGrid(ctx, (const void *)PGMRESLoopAdaptKernel, 0, &gd)) return err;
    if (int err = FusedLaunchLoopKernel(ctx, PGMRESLoopAdaptKernel, gd, 0, ctx->n, args->v, (const PGMRESLoopState *)args->gs, state)) return err;
  }
  if (args->A.lrows.nchunks)
    if (int err = FusedLaunchLoopKernel(ctx, PGMRESLongRowsKernel, FusedLongRowsGrid(args->A.lrows), 0, args->A, args->v, (const PGMRESLoopState *)args->gs, state)) return err;
  if (int err = FusedLaunchLoopKernel(ctx, apply, ga, 0, args->A, args->v, args->gs, state)) return err;
  if (int err = FusedLaunchLoopKernel(ctx, PGMRESLoopProductKernel, gp, 0, args->A, args->v, args->gs, ctx->partials, ctx->sums, ctx->ticket, state)) return err;
  return FusedLaunchLoopKernel(ctx, orthog, go, args->smem, args->A, args->v, args->gs, args->base, ctx->partials, ctx->sums, ctx->ticket, ctx->state, ctx->hist, handle);
}

/* The single kernel a solve on A launches, and its launch: which variant,
   the basis rows R each thread keeps in shared memory, the lanes a row and
   the dynamic shared memory a block */
struct PGMRESSinglePlan {
  const void *kernel;
  int         R, lanes;
  bool        cycles; /* the variant that ends cycles itself */
  size_t      smem;
};

static int PGMRESPlanSingleKernel(FusedCUDA ctx, FusedDevMat A, int restart, double adaptive, PGMRESSinglePlan *plan)
{
  const size_t smem = sizeof(double) * ((size_t)restart + 1); /* h */
  /* A group of lanes a row, as pcgfused's, within one block of FUSED_BLOCK
     a multiprocessor (every step sums its products over the grid's
     partials), where rows average PGMRES_GROUP_MEAN entries or more: it
     costs a grid barrier a step more. H100, us per step, against a thread
     a row: bcsstk13 (42 a row) 46.6 -> 18.2; evsl_stiff1, hypre_ams_A,
     bcsstk08, bcsstk21, 494_bus and circuit_1 (3 to 14 a row) 6-45% slower. */
  const int  lanes = FusedRowLanesWithin(A, (long long)ctx->sms * FUSED_BLOCK, PGMRES_GROUP_MEAN);
  const bool adapt = adaptive > 0.0;
  const void *kernel = lanes > 1 ? (adapt ? (const void *)PGMRESSingleKernel<true, true, true> : (const void *)PGMRESSingleKernel<true, true>) : (adapt ? (const void *)PGMRESSingleKernel<true, false, true> : (const void *)PGMRESSingleKernel<true>);
  /* the blocks' copies of R, xi and rho for the cycles' ends (PGMRESKeepColumn()) */
  size_t smem_basis, smem_cycles = sizeof(double) * PGMRESCycleScratch(restart), smem_static, optin;
  int    R;
  /* the basis rows in shared memory where a block of each multiprocessor
     can hold its share (the grid is at least one block per multiprocessor),
     and then, if R's copy fits too, the cycles in the same kernel */
  {
    const long need = (ctx->n + FUSED_BLOCK - 1) / FUSED_BLOCK, blocks = need < 1 ? 1 : (need < ctx->sms ? need : ctx->sms);
    R               = (int)((ctx->n + blocks * FUSED_BLOCK - 1) / (blocks * FUSED_BLOCK));
  }
  smem_basis = sizeof(double) * (size_t)restart * R * FUSED_BLOCK;
  if (int err = FusedCUDAKernelFacts(ctx, kernel, &smem_static, &optin, 0, 0, NULL)) return err;
  if (R < 1 || restart > FUSED_PGMRES_CYCLES_MAX_RESTART || smem + smem_cycles + smem_basis + smem_static > optin) {
    kernel = lanes > 1 ? (adapt ? (const void *)PGMRESSingleKernel<false, true, true> : (const void *)PGMRESSingleKernel<false, true>) : (adapt ? (const void *)PGMRESSingleKernel<false, false, true> : (const void *)PGMRESSingleKernel<false>);
    if (int err = FusedCUDAKernelFacts(ctx, kernel, &smem_static, NULL, 0, 0, NULL)) return err;
    smem_cycles = 0;
    if (R < 1 || smem + smem_basis + smem_static > optin) R = 0, smem_basis = 0;
  }
  plan->kernel = kernel;
  plan->R      = R;
  plan->lanes  = lanes;
  plan->cycles = smem_cycles > 0;
  plan->smem   = smem + smem_cycles + smem_basis;
  return FUSED_CUDA_OK;
}

/* The plan, with its kernel allowed the shared memory it takes */
static int PGMRESPlanAndAllowSingleKernel(FusedCUDA ctx, FusedDevMat A, int restart, double adaptive, PGMRESSinglePlan *plan)
{
  if (int err = PGMRESPlanSingleKernel(ctx, A, restart, adaptive, plan)) return err;
  return FusedCUDAAllowSharedMemory(ctx, plan->kernel, plan->smem);
}

/* The single kernel suits where it keeps the basis in shared memory, or
   where a cycle's working set (the basis, the step's other vectors: w, r,
   x and the Jacobi diagonal, and the operator) takes at most three
   quarters of L2. Past both it streams the basis from device memory on one
   block a multiprocessor, and the graph, on all the warps that fit, is
   faster. H200 (50 MB of L2), 2026-11-28, us a step, single kernel /
   graph: 3D Laplacian 110,592 rows (37 MB) 23.9 / 25.5; 2D 131,044 rows
   (42 MB) 24.5 / 24.9; 160,000 (51 MB) 29.8 / 28.0; 262,144 44.5 / 38.0;
   524,176 96.4 / 64.1 (docs/history.md) */
extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESSingleKernelSuits)(FusedCUDA ctx, FusedDevMat A, int restart, double adaptive, int *suits)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESSingleKernelSuits, ctx, A, restart, adaptive, suits);
  PGMRESSinglePlan plan;
  size_t           op_bytes, working;

  *suits = 0;
  if (restart < 1 || restart > FUSED_PGMRES_LOOP_MAX_RESTART) return FUSED_CUDA_OK;
  if (int err = PGMRESPlanSingleKernel(ctx, A, restart, adaptive, &plan)) return err;
  FusedDevMatGetInfo(A, NULL, NULL, &op_bytes, NULL);
  working = sizeof(double) * (size_t)ctx->n * ((size_t)restart + 1 + 4) + op_bytes;
  *suits  = plan.R > 0 || 4 * working <= 3 * ctx->l2_bytes;
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESPrepareLoop)(FusedCUDA ctx, FusedDevMat A, int restart, double adaptive, int single_kernel)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESPrepareLoop, ctx, A, restart, adaptive, single_kernel);
  if (restart < 1 || restart > FUSED_PGMRES_LOOP_MAX_RESTART) return FUSED_CUDA_OK; /* no device loop */
  if (int err = FusedCUDAEnsureMethodState(ctx, PGMRESLoopStateBytes(restart))) return err;
  if (single_kernel && A) {
    /* the launch facts of the kernel the first solve will launch (its
       attributes, shared memory allowance and occupancy): asked there, they
       cost it about 30 us (H200). Its partial sums' buffer stays the first
       solve's: made here, among the set-up's buffers, the steps at 10^4
       rows took 0.1-0.3 us more in every process (H200, 2026-11-28,
       docs/history.md) */
    PGMRESSinglePlan plan;
    int              per_sm;
    if (int err = PGMRESPlanAndAllowSingleKernel(ctx, A, restart, adaptive, &plan)) return err;
    return FusedCUDAKernelFacts(ctx, plan.kernel, NULL, NULL, FUSED_BLOCK, plan.smem, &per_sm);
  }
  return FUSED_CUDA_OK;
}

/* The solve's first start in kernels of their own, queued on the stream,
   where the single kernel does not make it: x = 0 (a zero guess), r and
   |r|^2, ||B b||^2 where the first test needs it */
static int PGMRESQueueStart(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v, const FusedConvergence *conv, int start)
{
  if (start == FUSED_LOOP_START_ZERO)
    if (int err = FusedCUDAZero(ctx, v->x, ctx->n)) return err;
  if (int err = FUSED_METHOD_ENTRY(FusedPGMRESStart)(ctx, A, v, start == FUSED_LOOP_START_ZERO)) return err;
  if (conv->reference != FUSED_REFERENCE_RESIDUAL) return FusedCUDARhsNorm(ctx, v->b, v->d, FUSED_NORM_PRECONDITIONED, conv->rhs_slot);
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESLoop)(FusedCUDA ctx, FusedDevMat A, const FusedPGMRESVecs *v, const FusedNullSpace *ns, int restart, double breakdowntol, double adaptive, double cycle_rnorm0, const FusedConvergence *conv, int *its0_io, int single_kernel, int start, double *R, double *xi, double *rho, int *adaptive_steps, double *products, double orth[], int *steps, int *pending, int *start_on_host, double *start_norm, int *cycle_ended)
{
  FUSED_COMPENSATED_TWIN(FusedPGMRESLoop, ctx, A, v, ns, restart, breakdowntol, adaptive, cycle_rnorm0, conv, its0_io, single_kernel, start, R, xi, rho, adaptive_steps, products, orth, steps, pending, start_on_host, start_norm, cycle_ended);
  const int       its0 = *its0_io;
  const int       base = ctx->maxsums / 2;
  const size_t    smem = sizeof(double) * ((size_t)restart + 1);
  PGMRESLoopState gs;
  int             its;

  *steps         = 0;
  *pending       = 0;
  *start_on_host = 0;
  *start_norm    = 0.0;
  *cycle_ended   = 0;
  *adaptive_steps = 0;
  if (restart < 1 || restart > FUSED_PGMRES_LOOP_MAX_RESTART || base < restart + 1 || base + 4 + FUSED_NULLSPACE_MAX > ctx->maxsums) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the device loop of restart %d (at most %d) with %d sums in the workspace", restart, FUSED_PGMRES_LOOP_MAX_RESTART, ctx->maxsums);
  if (int err = FusedCUDAEnsureMethodState(ctx, PGMRESLoopStateBytes(restart))) return err;
  memset(&gs, 0, sizeof(gs));
  gs.its0         = its0;
  gs.restart      = restart;
  gs.breakdowntol = breakdowntol;
  gs.nu           = adaptive;
  gs.cycle_rnorm0 = cycle_rnorm0; /* where the host made the start (the first start's kernel records its own) */
  gs.ns           = PGMRESNullSpace(ns);
  memset(gs.ns.coef, 0, sizeof(gs.ns.coef)); /* each step's own, made before they are read */
  /* through the pinned mirror: queued without a wait (the last copy out of
     it was waited for, so it is free) */
  memcpy(ctx->method_state_host, &gs, sizeof(gs));
  FUSED_CUDA_CHECK(cudaMemcpyAsync(ctx->method_state, ctx->method_state_host, sizeof(gs), cudaMemcpyHostToDevice, ctx->stream));
  /* the first cycle's start tested on the device, after the state went in */
  PGMRESFirstStartArgs     first_args = {*v, (PGMRESLoopState *)ctx->method_state};
  const FusedLoopPrologue  first      = {PGMRESQueueFirstStart, &first_args};
  const FusedLoopPrologue *prologue   = conv->judge_first ? &first : NULL; /* none where the kernel makes the start */
  if (conv->judge_first && (its0 != 0 || v->right)) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the device tests only the first cycle's start, with left preconditioning (from iteration %d)", its0);
  if (start != FUSED_LOOP_GOES_ON && (!single_kernel || !conv->judge_first || v->pc_between || v->dblock || ns->m)) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the loop makes the solve's start itself in the single kernel, with its first test, the fused PC and no null space");
  if (v->dblock && single_kernel) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the single-kernel loop has no point-block Jacobi");
  if (adaptive < 0.0 || adaptive >= 1.0) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "adaptive simpler GMRES's nu %g is not in [0, 1)", adaptive);
  if (gs.ns.m && (single_kernel || conv->judge_first || v->right || v->dblock || gs.ns.m < 0 || gs.ns.m > FUSED_NULLSPACE_MAX)) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the device loop removes a null space (of %d vectors, at most %d) from a CUDA graph, after a start made by the host, with left Jacobi or none", gs.ns.m, FUSED_NULLSPACE_MAX);
  if (v->dblock)
    if (int err = PGMRESCheckBlocks(ctx, v)) return err;
  if (single_kernel) {
    FusedMatView     view = A->view;
    FusedPGMRESVecs  vecs = *v;
    PGMRESLoopState *gsd  = (PGMRESLoopState *)ctx->method_state;
    double          *part = NULL;
    int              b    = base;
    PGMRESSinglePlan plan;
    if (int err = PGMRESPlanAndAllowSingleKernel(ctx, A, restart, adaptive, &plan)) return err;
    if (start != FUSED_LOOP_GOES_ON && !plan.cycles) {
      /* only the kernel that ends cycles makes the start: under the other's
         limit of 128 registers it would cost the steps theirs */
      if (int err = PGMRESQueueStart(ctx, A, v, conv, start)) return err;
      start = FUSED_LOOP_GOES_ON;
    }
    if (start != FUSED_LOOP_GOES_ON) prologue = NULL; /* the kernel tests the start itself */
    void *kargs[] = {&view, &vecs, &gsd, &part, &ctx->sums, &b, &ctx->state, &ctx->hist, &plan.R, &plan.lanes, &start};
    if (int err = FusedCUDARunSingleKernel(ctx, plan.kernel, FUSED_BLOCK, ctx->n * plan.lanes, restart + 4, plan.smem, conv, its0, prologue, kargs, &part, &its)) return err;
  } else {
    PGMRESLoopArgs args;
    memset(&args, 0, sizeof(args)); /* padding too: the arguments are compared bytewise */
    args.A    = A->view;
    args.v    = *v;
    args.gs   = (PGMRESLoopState *)ctx->method_state;
    args.base = base;
    args.smem = smem;
    args.ns_m = gs.ns.m;
    args.adaptive = adaptive > 0.0;
    if (int err = FusedCUDARunLoop(ctx, &args, sizeof(args), PGMRESBuildLoop, conv, its0, prologue, &its)) return err;
  }
  /* the state, R and xi came back to the pinned mirror with the loop */
  {
    const double *Rh = (const double *)((const char *)ctx->method_state_host + sizeof(PGMRESLoopState));
    memcpy(&gs, ctx->method_state_host, sizeof(gs));
    memcpy(R, Rh, sizeof(double) * (size_t)restart * restart);
    memcpy(xi, Rh + (size_t)restart * restart, sizeof(double) * restart);
    memcpy(rho, Rh + (size_t)restart * restart + restart, sizeof(double) * restart);
  }
  *steps         = gs.j;
  *pending       = gs.pending;
  *start_on_host = gs.start_on_host;
  *start_norm    = gs.start_norm;
  *cycle_ended   = gs.cycle_ended;
  *adaptive_steps = gs.adaptive_steps;
  *its0_io       = gs.its0;
  /* whole cycles, but for the last one the single kernel ended at max_it */
  if (gs.its0 < its0 || ((gs.its0 - its0) % restart && !(gs.start_on_host && gs.its0 >= conv->max_it)) || its != gs.its0 + gs.j) return FusedCUDASetError(FUSED_CUDA_ERR_LIB, "the device loop stopped at iteration %d after %d steps of the cycle from %d (the first from %d)", its, gs.j, gs.its0, its0);
  if (gs.cycle_ended && (!gs.pending || gs.j < 1)) return FusedCUDASetError(FUSED_CUDA_ERR_LIB, "the device loop ended a cycle at step %d without a step for the host to test", gs.j);
  if (gs.pending) {
    double s[3 + FUSED_NULLSPACE_MAX];
    if (int err = FusedCUDAGetLoopSums(ctx, 0, gs.j + 1, products)) return err;
    if (int err = FusedCUDAGetLoopSums(ctx, base, 3 + gs.ns.m, s)) return err;
    for (int k = 0; k < 3 + gs.ns.m; k++) orth[k] = s[k];
  }
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPGMRESLoadKernels)(int device, int compensated)
{
#if !FUSED_COMPENSATED
  if (compensated) return FusedPGMRESLoadKernels_Compensated(device, compensated);
#endif
  (void)compensated;
  return FusedCUDALoadModuleOf(device, (const void *)PGMRESLongRowsKernel);
}
FUSED_METHOD_NAMESPACE_END

/* pbcgsfused on the GPU: the kernels of the fused steps of pbcgsfusedimpl.h
   and the device loop. Sums: RR, RR0, VR0 (first reduction), TT, TS, TR0,
   SR0, SS (second), then omega and beta as the device loop computes them. */
#include <string.h>
#include <cooperative_groups.h>
#include "cuda/fusedcuda_impl.cuh"

enum { RR, RR0, VR0, TT, TS, TR0, SR0, SS, OMEGA, BETA, NSUMS };

/* a kernel after the one that stopped the device loop does nothing */
#define PBCGS_SKIP_IF_STOPPED(state) \
  if ((state) && (state)->stop) return

/* One row of v = B A p; adds to <v,r0*> */
__device__ __forceinline__ void PBCGSProductPRow(const FusedMatView &A, const FusedPBCGSVecs &v, int i, double &vr0)
{
  double y = FusedRowProduct(A, v.p, i);
  if (v.d) y *= v.d[i];
  v.v[i] = y;
  vr0 += y * v.rstar[i];
}

/* One row of t = B A s; adds to TT, TS, TR0, SR0, SS */
__device__ __forceinline__ void PBCGSProductSRow(const FusedMatView &A, const FusedPBCGSVecs &v, int i, double (&acc)[5])
{
  const double s = v.s[i], r0 = v.rstar[i];
  double       t = FusedRowProduct(A, v.s, i);
  if (v.d) t *= v.d[i];
  v.t[i] = t;
  acc[0] += t * t;
  acc[1] += t * s;
  acc[2] += t * r0;
  acc[3] += s * r0;
  acc[4] += s * s;
}

/* One row of x += alpha p + omega s, r = s - omega t, p = r + beta (p - omega v); adds to RR and RR0 */
__device__ __forceinline__ void PBCGSUpdateXRPRow(const FusedPBCGSVecs &v, int i, double alpha, double omega, double beta, double (&acc)[2])
{
  const double p = v.p[i], s = v.s[i];
  const double r = s - omega * v.t[i];
  v.x[i] += alpha * p + omega * s;
  v.r[i] = r;
  v.p[i] = r + beta * (p - omega * v.v[i]);
  acc[0] += r * r;
  acc[1] += r * v.rstar[i];
}

/* The host's checks after the second reduction (s2 = TT, TS, TR0, SR0, SS):
   true where it must look; else omega and beta as the host computes them */
__device__ __forceinline__ bool PBCGSOmegaBeta(const double s2[5], double rho, double alpha, double *omega, double *beta)
{
  const double tt = s2[0], ts = s2[1], tr0 = s2[2], sr0 = s2[3], ss = s2[4];
  *omega = 0.0;
  *beta  = 0.0;
  if (!isfinite(tt) || !isfinite(ts) || !isfinite(tr0) || !isfinite(sr0)) return true;
  if (tt == 0.0) return ss != 0.0; /* s = 0 goes on with omega = beta = 0, as on the host */
  *omega = ts / tt;
  if (*omega == 0.0) return true;
  *beta = (sr0 - *omega * tr0) / rho * (alpha / *omega);
  return false;
}

/* r = B (b - A x), r0* = r, p = r; RR and RR0 */
__global__ void PBCGSStartKernel(FusedMatView A, FusedPBCGSVecs v, int guess_zero, double *partials, double *sums, unsigned int *ticket)
{
  double acc[2] = {0.0, 0.0};
  FUSED_GRID_LOOP(i, A.n)
  {
    double r = guess_zero ? v.b[i] : v.b[i] - FusedRowProduct(A, v.x, i);
    if (v.d) r *= v.d[i];
    v.r[i] = v.rstar[i] = v.p[i] = r;
    acc[0] += r * r;
  }
  acc[1] = acc[0];
  FusedReduce<2>(acc, partials, sums, ticket, RR);
}

/* v = B A p; VR0. In the device loop the last block tests the iteration. */
__global__ void PBCGSProductPKernel(FusedMatView A, FusedPBCGSVecs v, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist, cudaGraphConditionalHandle handle)
{
  double acc[1] = {0.0};
  PBCGS_SKIP_IF_STOPPED(state);
  FUSED_GRID_LOOP(i, A.n) PBCGSProductPRow(A, v, i, acc[0]);
  if (FusedReduce<1>(acc, partials, sums, ticket, VR0) && state && threadIdx.x == 0) {
    const double rr = sums[RR], rho = sums[RR0], vr0 = acc[0];
    const double rnorm = sqrt(fabs(rr));
    const int    it    = ++state->it;
    hist[it]           = rnorm;
    if (FusedMustStop(state->conv, it, rnorm) || !isfinite(rho) || !isfinite(vr0) || rho == 0.0 || vr0 == 0.0) {
      state->stop = 1;
      cudaGraphSetConditional(handle, 0);
    }
  }
}

/* s = r - alpha v */
__global__ void PBCGSUpdateSKernel(int n, FusedPBCGSVecs v, double alpha, const double *sums, const FusedLoopState *state)
{
  PBCGS_SKIP_IF_STOPPED(state);
  if (state) alpha = sums[RR0] / sums[VR0];
  FUSED_GRID_LOOP(i, n) v.s[i] = v.r[i] - alpha * v.v[i];
}

/* t = B A s; TT, TS, TR0, SR0, SS. In the device loop the last block makes
   the host's checks and computes omega and beta. */
__global__ void PBCGSProductSKernel(FusedMatView A, FusedPBCGSVecs v, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, cudaGraphConditionalHandle handle)
{
  double acc[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  PBCGS_SKIP_IF_STOPPED(state);
  FUSED_GRID_LOOP(i, A.n) PBCGSProductSRow(A, v, i, acc);
  if (FusedReduce<5>(acc, partials, sums, ticket, TT) && state && threadIdx.x == 0) {
    const double rho = sums[RR0], alpha = rho / sums[VR0];
    double       omega, beta;
    const bool   stop = PBCGSOmegaBeta(acc, rho, alpha, &omega, &beta);
    sums[OMEGA] = omega;
    sums[BETA]  = beta;
    if (stop) {
      state->stop = 1;
      cudaGraphSetConditional(handle, 0);
    }
  }
}

/* x += alpha p + omega s, r = s - omega t, p = r + beta (p - omega v); RR and RR0 */
__global__ void PBCGSUpdateXRPKernel(int n, FusedPBCGSVecs v, double alpha, double omega, double beta, double *partials, double *sums, unsigned int *ticket, const FusedLoopState *state)
{
  double acc[2] = {0.0, 0.0};
  PBCGS_SKIP_IF_STOPPED(state);
  if (state) {
    alpha = sums[RR0] / sums[VR0];
    omega = sums[OMEGA];
    beta  = sums[BETA];
  }
  FUSED_GRID_LOOP(i, n) PBCGSUpdateXRPRow(v, i, alpha, omega, beta, acc);
  FusedReduce<2>(acc, partials, sums, ticket, RR);
}

/* The whole loop in one cooperative kernel for small systems: four grid
   barriers per iteration. Partial sums of iteration it live in buffer it & 1
   (RR and RR0 of it are written by update_xrp of it - 1); a stop leaves RR
   and RR0 of the iteration in sums[], from where the host goes on with
   product_p. */
__global__ void PBCGSSingleKernel(FusedMatView A, FusedPBCGSVecs v, double *part, double *sums, FusedLoopState *state, double *hist)
{
  cooperative_groups::grid_group grid  = cooperative_groups::this_grid();
  const int                      G     = gridDim.x;
  const int                      first = state->it;
  const FusedConvergence         conv  = state->conv;

  for (int it = first + 1;; it++) {
    double *cur = part + (size_t)(it & 1) * NSUMS * G, *next = part + (size_t)((it + 1) & 1) * NSUMS * G;
    double  rr_rr0[2], vr0[1], acc[5] = {0.0, 0.0, 0.0, 0.0, 0.0};

    /* v = B A p; <v,r0*> */
    FUSED_GRID_LOOP(i, A.n) PBCGSProductPRow(A, v, i, acc[0]);
    {
      double a1[1] = {acc[0]};
      FusedStorePartials<1>(a1, cur + VR0 * G);
    }
    grid.sync();
    if (it == first + 1) {
      rr_rr0[0] = sums[RR];
      rr_rr0[1] = sums[RR0];
    } else FusedSumPartials<2>(cur + RR * G, G, rr_rr0);
    FusedSumPartials<1>(cur + VR0 * G, G, vr0);
    const double rho = rr_rr0[1], rnorm = sqrt(fabs(rr_rr0[0]));
    const bool   stop = FusedMustStop(conv, it, rnorm) || !isfinite(rho) || !isfinite(vr0[0]) || rho == 0.0 || vr0[0] == 0.0;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      hist[it] = rnorm;
      if (stop) {
        sums[RR]    = rr_rr0[0];
        sums[RR0]   = rho;
        state->it   = it;
        state->stop = 1;
      }
    }
    if (stop) return;
    const double alpha = rho / vr0[0];

    /* s = r - alpha v */
    FUSED_GRID_LOOP(i, A.n) v.s[i] = v.r[i] - alpha * v.v[i];
    grid.sync();

    /* t = B A s; TT, TS, TR0, SR0, SS */
    for (int k = 0; k < 5; k++) acc[k] = 0.0;
    FUSED_GRID_LOOP(i, A.n) PBCGSProductSRow(A, v, i, acc);
    FusedStorePartials<5>(acc, cur + TT * G);
    grid.sync();
    double s2[5], omega, beta;
    FusedSumPartials<5>(cur + TT * G, G, s2);
    if (PBCGSOmegaBeta(s2, rho, alpha, &omega, &beta)) { /* the host redoes this iteration from product_p and sees the breakdown itself */
      if (blockIdx.x == 0 && threadIdx.x == 0) {
        sums[RR]    = rr_rr0[0];
        sums[RR0]   = rho;
        state->it   = it;
        state->stop = 1;
      }
      return;
    }

    /* x += alpha p + omega s, r = s - omega t, p = r + beta (p - omega v); RR and RR0 of it + 1 */
    double a2[2] = {0.0, 0.0};
    FUSED_GRID_LOOP(i, A.n) PBCGSUpdateXRPRow(v, i, alpha, omega, beta, a2);
    FusedStorePartials<2>(a2, next + RR * G);
    grid.sync();
  }
}

extern "C" int FusedPBCGSStart(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, int guess_zero)
{
  PBCGSStartKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, guess_zero, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSStartKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedPBCGSProductP(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v)
{
  PBCGSProductPKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL, 0);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSProductPKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedPBCGSUpdateS(FusedCUDA ctx, const FusedPBCGSVecs *v, double alpha)
{
  PBCGSUpdateSKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, alpha, ctx->sums, NULL);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSUpdateSKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedPBCGSProductS(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v)
{
  PBCGSProductSKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, 0);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSProductSKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedPBCGSUpdateXRP(FusedCUDA ctx, const FusedPBCGSVecs *v, double alpha, double omega, double beta)
{
  PBCGSUpdateXRPKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, alpha, omega, beta, ctx->partials, ctx->sums, ctx->ticket, NULL);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSUpdateXRPKernel");
  return FUSED_CUDA_OK;
}

struct PBCGSLoopArgs {
  FusedMatView   A;
  FusedPBCGSVecs v;
};

/* the loop body: four kernels per iteration, entered after update_xrp */
static int PBCGSBuildLoop(FusedCUDA ctx, const void *args_, cudaGraphConditionalHandle handle)
{
  const PBCGSLoopArgs *a = (const PBCGSLoopArgs *)args_;
  int                  gp, gs, gq, gx;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)PBCGSProductPKernel, 0, &gp)) return err;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)PBCGSUpdateSKernel, 0, &gs)) return err;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)PBCGSProductSKernel, 0, &gq)) return err;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)PBCGSUpdateXRPKernel, 0, &gx)) return err;
  PBCGSProductPKernel<<<gp, FUSED_BLOCK, 0, ctx->stream>>>(a->A, a->v, ctx->partials, ctx->sums, ctx->ticket, ctx->state, ctx->hist, handle);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSProductPKernel");
  PBCGSUpdateSKernel<<<gs, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, a->v, 0.0, ctx->sums, ctx->state);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSUpdateSKernel");
  PBCGSProductSKernel<<<gq, FUSED_BLOCK, 0, ctx->stream>>>(a->A, a->v, ctx->partials, ctx->sums, ctx->ticket, ctx->state, handle);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSProductSKernel");
  PBCGSUpdateXRPKernel<<<gx, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, a->v, 0.0, 0.0, 0.0, ctx->partials, ctx->sums, ctx->ticket, ctx->state);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSUpdateXRPKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FusedPBCGSLoop(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, const FusedConvergence *conv, int it0, int single_kernel, int *its)
{
  PBCGSLoopArgs args;
  if (ctx->maxsums < NSUMS) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "pbcgsfused needs %d sums in the workspace, it has %d", NSUMS, ctx->maxsums);
  if (single_kernel) {
    FusedMatView view = A->view;
    FusedPBCGSVecs vecs = *v;
    double      *part = NULL;
    void        *kargs[] = {&view, &vecs, &part, &ctx->sums, &ctx->state, &ctx->hist};
    return FusedCUDARunSingleKernel(ctx, (const void *)PBCGSSingleKernel, NSUMS, 0, conv, it0, kargs, &part, its);
  }
  memset(&args, 0, sizeof(args));
  args.A = A->view;
  args.v = *v;
  return FusedCUDARunLoop(ctx, &args, sizeof(args), PBCGSBuildLoop, conv, it0, its);
}

/* pbcgsfused on the GPU: the kernels of the fused steps of pbcgsfusedimpl.h
   and the device loop. Sums: RR, RR0, VR0 (first reduction), TT, TS, TR0,
   SR0, SS (second), then omega and beta as the device loop computes them. */
#include <string.h>
#include <cooperative_groups.h>
#include "cuda/fusedcuda_impl.cuh"

/* the entry points of the compensated build of this file (FUSED_COMPENSATED) */
#if !FUSED_COMPENSATED
FUSED_TWIN_DECL(FusedPBCGSLoadKernels);
FUSED_TWIN_DECL(FusedPBCGSStart);
FUSED_TWIN_DECL(FusedPBCGSSumsP);
FUSED_TWIN_DECL(FusedPBCGSSumsS);
FUSED_TWIN_DECL(FusedPBCGSRestart);
FUSED_TWIN_DECL(FusedPBCGSProductP);
FUSED_TWIN_DECL(FusedPBCGSUpdateS);
FUSED_TWIN_DECL(FusedPBCGSProductS);
FUSED_TWIN_DECL(FusedPBCGSUpdateXRP);
FUSED_TWIN_DECL(FusedPBCGSProductPLocal);
FUSED_TWIN_DECL(FusedPBCGSProductPGhosts);
FUSED_TWIN_DECL(FusedPBCGSProductSLocal);
FUSED_TWIN_DECL(FusedPBCGSProductSGhosts);
FUSED_TWIN_DECL(FusedPBCGSProductPNull);
FUSED_TWIN_DECL(FusedPBCGSUpdateSNull);
FUSED_TWIN_DECL(FusedPBCGSProductSNull);
FUSED_TWIN_DECL(FusedPBCGSUpdateXRPNull);
FUSED_TWIN_DECL(FusedPBCGSLoopNull);
FUSED_TWIN_DECL(FusedPBCGSLoop);
#endif
FUSED_METHOD_NAMESPACE_BEGIN

enum { RR, RR0, VR0, TT, TS, TR0, SR0, SS, OMEGA, BETA, NSUMS };
static_assert((int)NSUMS == (int)FUSED_PBCGS_RHS, "the right-hand side's slot follows the loop's sums");

/* One row of v = B A p; adds to <v,r0*>. GATHER: the product's DIA loads
   in flight together (FusedStoredGathered). Else FusedRowProduct(), whose
   restrict-qualified argument keeps the single kernel's spills at 12 bytes
   under 128 registers (60 through FusedStored's restrict member). */
template <bool GATHER = false>
__device__ __forceinline__ void PBCGSProductPRow(const FusedMatView &A, const FusedPBCGSVecs &v, int i, FusedSum &vr0)
{
  /* the row's own loads first: issued after the product's, they would wait for memory once more */
  const double di = v.d ? v.d[i] : 1.0, r0 = v.rstar[i];
  double       y;
  if constexpr (GATHER) y = FusedRowProductOf(A, FusedStoredGathered<8>{v.p}, i);
  else y = FusedRowProduct(A, v.p, i);
  if (v.d) y *= di;
  v.v[i] = y;
  FusedAddProduct(vr0, y, r0);
}

/* s at row j from the last r and v, and the next p at row j from s, t and
   the last p and v: the rules the updates apply to their rows and the
   single-kernel loop's products apply to the rows they read, with explicit
   roundings so that both get the same bits */
struct PBCGSNextS {
  static constexpr bool gather = true;
  static constexpr int  batch  = 4;
  const double         *r, *v;
  double                alpha;
  struct Entry {
    double r, v;
  };
  __device__ __forceinline__ Entry  Load(int j) const { return Entry{r[j], v[j]}; }
  __device__ __forceinline__ double Value(const Entry &e) const { return __fma_rn(-alpha, e.v, e.r); }
  __device__ __forceinline__ double operator()(int j) const { return Value(Load(j)); }
};

struct PBCGSNextP {
  static constexpr bool gather = true;
  static constexpr int  batch  = 4;
  const double         *s, *t, *p, *v; /* not restrict: the update may write p in place */
  double                omega, beta;
  struct Entry {
    double s, t, p, v;
  };
  __device__ __forceinline__ Entry  Load(int j) const { return Entry{s[j], t[j], p[j], v[j]}; }
  __device__ __forceinline__ double Residual(const Entry &e) const { return __fma_rn(-omega, e.t, e.s); }
  __device__ __forceinline__ double Direction(const Entry &e, double r_next) const { return __fma_rn(beta, __fma_rn(-omega, e.v, e.p), r_next); }
  __device__ __forceinline__ double Value(const Entry &e) const { return Direction(e, Residual(e)); }
  __device__ __forceinline__ double operator()(int j) const { return Value(Load(j)); }
};

/* A row's share of TT, TS, TR0, SR0, SS */
__device__ __forceinline__ void PBCGSAddSums(FusedSum (&acc)[5], double s, double t, double r0)
{
  FusedAddProduct(acc[0], t, t);
  FusedAddProduct(acc[1], t, s);
  FusedAddProduct(acc[2], t, r0);
  FusedAddProduct(acc[3], s, r0);
  FusedAddProduct(acc[4], s, s);
}

/* Row i of s and of t = B A s (t the product A s there) stored, s to s_out
   unless NULL; adds to TT, TS, TR0, SR0, SS */
__device__ __forceinline__ void PBCGSStoreSRow(const FusedPBCGSVecs &v, double *s_out, int i, double s, double t, double di, double r0, FusedSum (&acc)[5])
{
  if (v.d) t *= di;
  if (s_out) s_out[i] = s;
  v.t[i] = t;
  PBCGSAddSums(acc, s, t, r0);
}

/* One row of t = B A s, with s read through next_s */
template <class S>
__device__ __forceinline__ void PBCGSProductSRow(const FusedMatView &A, const FusedPBCGSVecs &v, const S &next_s, double *s_out, int i, FusedSum (&acc)[5])
{
  const double s = next_s(i), r0 = v.rstar[i], di = v.d ? v.d[i] : 1.0; /* before the product's loads */
  PBCGSStoreSRow(v, s_out, i, s, FusedRowProductOf(A, next_s, i), di, r0, acc);
}

/* One row of x += alpha p + omega s, r = s - omega t, p = r + beta (p - omega v),
   the new p written to p_out; adds to acc[0] (RR) and acc[1] (RR0) */
__device__ __forceinline__ void PBCGSUpdateXRPRowFrom(const FusedPBCGSVecs &v, const PBCGSNextP &next, const PBCGSNextP::Entry &last, double x, double r0, int i, double alpha, double *p_out, FusedSum *acc)
{
  const double r      = next.Residual(last);
  const double p_next = next.Direction(last, r);
  v.x[i]              = x + (alpha * last.p + next.omega * last.s);
  v.r[i]              = r;
  p_out[i]            = p_next;
  FusedAddProduct(acc[0], r, r);
  FusedAddProduct(acc[1], r, r0);
}

__device__ __forceinline__ void PBCGSUpdateXRPRow(const FusedPBCGSVecs &v, const PBCGSNextP &next, int i, double alpha, double *p_out, FusedSum *acc)
{
  PBCGSUpdateXRPRowFrom(v, next, next.Load(i), v.x[i], v.rstar[i], i, alpha, p_out, acc);
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
  FusedSum acc[2] = {0.0, 0.0};
  FUSED_GRID_LOOP(i, A.n)
  {
    double r = guess_zero ? v.b[i] : v.b[i] - FusedRowProduct(A, v.x, i);
    if (v.d) r *= v.d[i];
    v.r[i] = v.rstar[i] = v.p[i] = r;
    FusedAddProduct(acc[0], r, r);
  }
  acc[1] = acc[0];
  FusedReduce<2>(acc, partials, sums, ticket, RR);
}

/* r0* = r, p = r after <r,r0*> vanished; RR and RR0 */
__global__ void PBCGSRestartKernel(int n, FusedPBCGSVecs v, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[2] = {0.0, 0.0};
  FUSED_GRID_LOOP(i, n)
  {
    const double r = v.r[i];
    v.rstar[i] = v.p[i] = r;
    FusedAddProduct(acc[0], r, r);
  }
  acc[1] = acc[0];
  FusedReduce<2>(acc, partials, sums, ticket, RR);
}

/* VR0 (and with K > 1 a null space's <v, n_k>); in the device loop the last block tests the iteration */
template <int K = 1>
__device__ __forceinline__ void PBCGSProductPReduce(FusedSum (&acc)[K], double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist, cudaGraphConditionalHandle handle)
{
  if (FusedReduce<K>(acc, partials, sums, ticket, VR0, 1, FUSED_PBCGS_V_N) && state && threadIdx.x == 0) {
    const double rr = sums[RR], rho = sums[RR0], vr0 = FusedSumValue(acc[0]);
    const double rnorm = sqrt(fabs(rr));
    const int    it    = ++state->it;
    hist[it]           = rnorm;
    if (it == 0 && state->conv.judge_first) FusedSetTolerances(state->conv, rnorm, sums); /* the loop began with the start */
    if (FusedMustStop(state->conv, it, rnorm) || !isfinite(rho) || !isfinite(vr0) || rho == 0.0 || vr0 == 0.0) {
      state->stop = 1;
      cudaGraphSetConditional(handle, 0);
    }
  }
}

/* v = B A p; VR0. In the device loop the last block tests the iteration.
   The DIA loads gathered: fewer waits for memory (H100, 1M rows, in the
   graph: 97.3 and 99.6 us per iteration against 101.0 and 101.5) */
__global__ void PBCGSProductPKernel(FusedMatView A, FusedPBCGSVecs v, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist, cudaGraphConditionalHandle handle)
{
  FusedSum acc[1] = {0.0};
  if (FusedLoopKernelStopped(state)) return;
  FUSED_GRID_LOOP(i, A.n) PBCGSProductPRow<true>(A, v, i, acc[0]);
  PBCGSProductPReduce(acc, partials, sums, ticket, state, hist, handle);
}

/* With the PC applied between kernels: VR0 = <v,r0*> once the PC made
   v = B (A p) from the product (PBCGSProductPKernel without d, into w) */
__global__ void PBCGSSumsPKernel(int n, FusedPBCGSVecs v, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[1] = {0.0};
  FUSED_GRID_LOOP(i, n) FusedAddProduct(acc[0], v.v[i], v.rstar[i]);
  FusedReduce<1>(acc, partials, sums, ticket, VR0);
}

/* The same for t = B (A s): TT, TS, TR0, SR0, SS */
__global__ void PBCGSSumsSKernel(int n, FusedPBCGSVecs v, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  FUSED_GRID_LOOP(i, n)
  {
    PBCGSAddSums(acc, v.s[i], v.t[i], v.rstar[i]);
  }
  FusedReduce<5>(acc, partials, sums, ticket, TT);
}

/* s = r - alpha v (the host-driven steps; the device loop makes s in PBCGSProductSKernel) */
__global__ void PBCGSUpdateSKernel(int n, FusedPBCGSVecs v, double alpha)
{
  const PBCGSNextS next = {v.r, v.v, alpha};
  FUSED_GRID_LOOP(i, n) v.s[i] = next(i);
}

/* TT, TS, TR0, SR0, SS (and with K > 5 a null space's <t, n_k>, whose
   parts the device loop takes from TT: ns_m of them); in the device loop
   the last block makes the host's checks and computes omega and beta */
template <int K = 5>
__device__ __forceinline__ void PBCGSProductSReduce(FusedSum (&acc)[K], double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, cudaGraphConditionalHandle handle, int ns_m = 0)
{
  if (FusedReduce<K>(acc, partials, sums, ticket, TT, 5, FUSED_PBCGS_T_N) && state && threadIdx.x == 0) {
    double o[K];
#pragma unroll
    for (int k = 0; k < K; k++) o[k] = FusedSumValue(acc[k]);
    if (K > 5) o[0] = FusedNullSpaceFoldSquare(o[0], o + 5, ns_m);
    const double rho = sums[RR0], alpha = rho / sums[VR0];
    double       omega, beta;
    const bool   stop = PBCGSOmegaBeta(o, rho, alpha, &omega, &beta);
    sums[OMEGA] = omega;
    sums[BETA]  = beta;
    if (stop) {
      state->stop = 1;
      cudaGraphSetConditional(handle, 0);
    }
  }
}

/* t = B A s; TT, TS, TR0, SR0, SS. In the device loop the last block makes
   the host's checks and computes omega and beta. */
__global__ void PBCGSProductSKernel(FusedMatView A, FusedPBCGSVecs v, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, cudaGraphConditionalHandle handle)
{
  FusedSum acc[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  if (FusedLoopKernelStopped(state)) return;
  if (state) { /* the device loop: s = r - alpha v here, without a kernel of its own */
    const PBCGSNextS next_s = {v.r, v.v, sums[RR0] / sums[VR0]};
    FUSED_GRID_LOOP(i, A.n) PBCGSProductSRow(A, v, next_s, v.s, i, acc);
  } else FUSED_GRID_LOOP(i, A.n) PBCGSProductSRow(A, v, FusedStored{v.s}, NULL, i, acc);
  PBCGSProductSReduce(acc, partials, sums, ticket, state, handle);
}

/* x += alpha p + omega s, r = s - omega t, p = r + beta (p - omega v); RR
   and RR0. Under 40 registers the compiler issues a row's six loads
   together (left to itself, 32 registers, x and r0* after the others:
   SASS); H100, 1M rows: 98.4-99.0 us per iteration against 98.2-100.9 in
   three alternating pairs. */
__global__ void __launch_bounds__(FUSED_BLOCK, 6) PBCGSUpdateXRPKernel(int n, FusedPBCGSVecs v, double alpha, double omega, double beta, double *partials, double *sums, unsigned int *ticket, const FusedLoopState *state)
{
  FusedSum acc[2] = {0.0, 0.0};
  if (FusedLoopKernelStopped(state)) return;
  if (state) {
    alpha = sums[RR0] / sums[VR0];
    omega = sums[OMEGA];
    beta  = sums[BETA];
  }
  const PBCGSNextP next = {v.s, v.t, v.p, v.v, omega, beta};
  FUSED_GRID_LOOP(i, n) PBCGSUpdateXRPRow(v, next, i, alpha, v.p, acc);
  FusedReduce<2>(acc, partials, sums, ticket, RR);
}

/* ---- a null space removed on the device (FusedPBCGSProductPNull() and
   the others in fusedcuda.h): kernels of their own, instantiated for one
   basis vector and for the most, so that the others keep their code */

/* v = B A p; VR0 and <v, n_k> */
template <int NS>
__global__ void PBCGSProductPNullKernel(FusedMatView A, FusedPBCGSVecs v, FusedNullSpace ns, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist, cudaGraphConditionalHandle handle)
{
  FusedSum acc[1 + NS] = {0.0};
  if (FusedLoopKernelStopped(state)) return;
  FUSED_GRID_LOOP(i, A.n)
  {
    const double di = v.d ? v.d[i] : 1.0, r0 = v.rstar[i];
    double       y  = FusedRowProductOf(A, FusedStoredGathered<8>{v.p}, i);
    if (v.d) y *= di;
    v.v[i] = y;
    FusedAddProduct(acc[0], y, r0);
#pragma unroll
    for (int k = 0; k < NS; k++)
      if (k < ns.m) FusedAddProduct(acc[1 + k], y, FusedNullSpaceBasis(ns, k, i));
  }
  PBCGSProductPReduce<1 + NS>(acc, partials, sums, ticket, state, hist, handle);
}

/* s at row j from r and v less its null space part (c: <v, n_k>): the
   host-driven update's rule, and the device loop's product's input */
template <int NS>
struct PBCGSNextSNull {
  static constexpr bool gather = true;
  static constexpr int  batch  = 4;
  const double         *r, *v;
  double                alpha;
  FusedNullSpace        ns;
  double                c[NS];
  using Entry = double;
  __device__ __forceinline__ double Load(int j) const { return __fma_rn(-alpha, FusedLessNullSpace<NS>(ns, c, v[j], j), r[j]); }
  __device__ __forceinline__ double Value(double e) const { return e; }
  __device__ __forceinline__ double operator()(int j) const { return Load(j); }
};

template <int NS>
__device__ __forceinline__ PBCGSNextSNull<NS> PBCGSNextSOf(const FusedPBCGSVecs &v, const FusedNullSpace &ns, double alpha, const double *c)
{
  PBCGSNextSNull<NS> next;
  next.r     = v.r;
  next.v     = v.v;
  next.alpha = alpha;
  next.ns    = ns;
#pragma unroll
  for (int k = 0; k < NS; k++) next.c[k] = k < ns.m ? c[k] : 0.0;
  return next;
}

__global__ void PBCGSUpdateSNullKernel(int n, FusedPBCGSVecs v, double alpha, FusedNullSpace ns)
{
  const PBCGSNextSNull<FUSED_NULLSPACE_MAX> next = PBCGSNextSOf<FUSED_NULLSPACE_MAX>(v, ns, alpha, ns.coef);
  FUSED_GRID_LOOP(i, n) v.s[i] = next(i);
}

/* t = B A s; TT, TS, TR0, SR0, SS and <t, n_k>. The device loop makes s
   here from r and v less its null space part (sums' <v, n_k>). */
template <int NS, class S>
__device__ __forceinline__ void PBCGSProductSNullRows(const FusedMatView &A, const FusedPBCGSVecs &v, const FusedNullSpace &ns, const S &next_s, double *s_out, FusedSum (&acc)[5 + NS])
{
  FusedSum sums5[5] = {}, tn[NS > 0 ? NS : 1] = {};
  FUSED_GRID_LOOP(i, A.n)
  {
    const double s = next_s(i), r0 = v.rstar[i], di = v.d ? v.d[i] : 1.0;
    double       t = FusedRowProductOf(A, next_s, i);
    if (v.d) t *= di;
    if (s_out) s_out[i] = s;
    v.t[i] = t;
    PBCGSAddSums(sums5, s, t, r0);
#pragma unroll
    for (int k = 0; k < NS; k++)
      if (k < ns.m) FusedAddProduct(tn[k], t, FusedNullSpaceBasis(ns, k, i));
  }
#pragma unroll
  for (int k = 0; k < 5; k++) acc[k] = sums5[k];
#pragma unroll
  for (int k = 0; k < NS; k++) acc[5 + k] = tn[k];
}

template <int NS>
__global__ void PBCGSProductSNullKernel(FusedMatView A, FusedPBCGSVecs v, FusedNullSpace ns, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, cudaGraphConditionalHandle handle)
{
  FusedSum acc[5 + NS];
  if (FusedLoopKernelStopped(state)) return;
  if (state) PBCGSProductSNullRows<NS>(A, v, ns, PBCGSNextSOf<NS>(v, ns, sums[RR0] / sums[VR0], sums + FUSED_PBCGS_V_N), v.s, acc);
  else PBCGSProductSNullRows<NS>(A, v, ns, FusedStored{v.s}, NULL, acc);
  PBCGSProductSReduce<5 + NS>(acc, partials, sums, ticket, state, handle, ns.m);
}

/* the coefficients of v's and t's null space parts, for the host-driven update */
struct PBCGSNullCoefs {
  double v[FUSED_NULLSPACE_MAX], t[FUSED_NULLSPACE_MAX];
};

/* PBCGSUpdateXRPKernel with v and t less their null space parts (the
   device loop: the coefficients from its sums, else co's) */
template <int NS>
__global__ void PBCGSUpdateXRPNullKernel(int n, FusedPBCGSVecs v, FusedNullSpace ns, PBCGSNullCoefs co, double alpha, double omega, double beta, double *partials, double *sums, unsigned int *ticket, const FusedLoopState *state)
{
  FusedSum acc[2] = {0.0, 0.0};
  double   cv[NS], ct[NS];
  if (FusedLoopKernelStopped(state)) return;
  if (state) {
    alpha = sums[RR0] / sums[VR0];
    omega = sums[OMEGA];
    beta  = sums[BETA];
  }
#pragma unroll
  for (int k = 0; k < NS; k++) {
    cv[k] = k < ns.m ? (state ? sums[FUSED_PBCGS_V_N + k] : co.v[k]) : 0.0;
    ct[k] = k < ns.m ? (state ? sums[FUSED_PBCGS_T_N + k] : co.t[k]) : 0.0;
  }
  const PBCGSNextP next = {v.s, v.t, v.p, v.v, omega, beta};
  FUSED_GRID_LOOP(i, n)
  {
    PBCGSNextP::Entry e = next.Load(i);
    e.v                 = FusedLessNullSpace<NS>(ns, cv, e.v, i);
    e.t                 = FusedLessNullSpace<NS>(ns, ct, e.t, i);
    PBCGSUpdateXRPRowFrom(v, next, e, v.x[i], v.rstar[i], i, alpha, v.p, acc);
  }
  FusedReduce<2>(acc, partials, sums, ticket, RR);
}

/* The long rows' rest of the device loop's product with s, with a null space */
__global__ void PBCGSLongRowsSNullKernel(FusedMatView A, FusedPBCGSVecs v, FusedNullSpace ns, const double *sums, const FusedLoopState *state)
{
  if (FusedLoopKernelStopped(state)) return;
  FusedLongRowsOf<FUSED_LONG_BATCH>(A, PBCGSNextSOf<FUSED_NULLSPACE_MAX>(v, ns, sums[RR0] / sums[VR0], sums + FUSED_PBCGS_V_N));
}

/* ---- point-block Jacobi (v.dblock, v.bs; FUSED_TILE_LOOP) ---------------
   B applies to a tile of A's products after one block barrier. Kernels of
   their own, so that the others keep their registers. */

/* PBCGSStartKernel with point-block Jacobi */
__global__ void __launch_bounds__(FUSED_BLOCK) PBCGSStartBlockKernel(FusedMatView A, FusedPBCGSVecs v, int guess_zero, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[2] = {0.0, 0.0};
  FusedBlockTiles(
    A.n, v.bs, [=](int i) { return guess_zero ? v.b[i] : v.b[i] - FusedRowProduct(A, v.x, i); },
    [=, &acc](int i, const double *ws, int t0) {
      const double r = FusedBlockRow(v.dblock, v.bs, i, ws, t0);
      v.r[i] = v.rstar[i] = v.p[i] = r;
      FusedAddProduct(acc[0], r, r);
    });
  acc[1] = acc[0];
  FusedReduce<2>(acc, partials, sums, ticket, RR);
}

/* PBCGSProductPKernel with point-block Jacobi */
__global__ void __launch_bounds__(FUSED_BLOCK) PBCGSProductPBlockKernel(FusedMatView A, FusedPBCGSVecs v, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, double *hist, cudaGraphConditionalHandle handle)
{
  FusedSum acc[1] = {0.0};
  if (FusedLoopKernelStopped(state)) return;
  FusedBlockTiles(
    A.n, v.bs, [=](int i) { return FusedRowProduct(A, v.p, i); },
    [=, &acc](int i, const double *ys, int t0) {
      const double y = FusedBlockRow(v.dblock, v.bs, i, ys, t0);
      v.v[i]         = y;
      FusedAddProduct(acc[0], y, v.rstar[i]);
    });
  PBCGSProductPReduce(acc, partials, sums, ticket, state, hist, handle);
}

/* PBCGSProductSKernel with point-block Jacobi: the tile of A s, s read through next_s */
template <class S>
__device__ __forceinline__ void PBCGSProductSBlockTiles(const FusedMatView &A, const FusedPBCGSVecs &v, const S &next_s, double *s_out, FusedSum (&acc)[5])
{
  double s = 0.0;
  FusedBlockTiles(
    A.n, v.bs,
    [&](int i) {
      s = next_s(i);
      return FusedRowProductOf(A, next_s, i);
    },
    [&](int i, const double *ys, int t0) {
      const double r0 = v.rstar[i], t = FusedBlockRow(v.dblock, v.bs, i, ys, t0); /* r0* before the stores: they may alias it */
      if (s_out) s_out[i] = s;
      v.t[i] = t;
      PBCGSAddSums(acc, s, t, r0);
    });
}

__global__ void __launch_bounds__(FUSED_BLOCK) PBCGSProductSBlockKernel(FusedMatView A, FusedPBCGSVecs v, double *partials, double *sums, unsigned int *ticket, FusedLoopState *state, cudaGraphConditionalHandle handle)
{
  FusedSum acc[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
  if (FusedLoopKernelStopped(state)) return;
  if (state) PBCGSProductSBlockTiles(A, v, PBCGSNextS{v.r, v.v, sums[RR0] / sums[VR0]}, v.s, acc);
  else PBCGSProductSBlockTiles(A, v, FusedStored{v.s}, NULL, acc);
  PBCGSProductSReduce(acc, partials, sums, ticket, state, handle);
}

/* The tests of a single-kernel loop: where it begins with the start
   (judge_first), ttol and dtol from the start's RR. Not inlined: it runs
   once, and inlined it made the kernel spill more (512 threads: 80 bytes
   against 48, ptxas) */
__device__ __noinline__ FusedConvergence PBCGSLoopConvergence(FusedConvergence conv, double rr, double rhs_square)
{
  if (conv.judge_first) FusedSetTolerancesFrom(conv, sqrt(fabs(rr)), rhs_square);
  return conv;
}

/* The solve's start inside the single kernel, as FusedPBCGSStart() makes
   it in a kernel of its own: r = B (b - A x) (or B b, and x = 0), r0* = p
   = r, and RR = RR0 = <r,r> as partials at part (the first iteration's
   slot), with ||B b||^2 (pbcgsfused's only norm) at part_rhs where the test
   needs it (rhs). Inlined: a call would copy the kernel's arguments to the
   stack (pcgfused's PCGSingleStart()). */
template <int BLOCK, bool GROUPS>
__device__ __forceinline__ void PBCGSSingleStart(const FusedMatView &A, const FusedPBCGSVecs &v, int start, bool rhs, double *part, double *part_rhs, int lanes)
{
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  FusedSum                       acc[2] = {}, rhs_acc[1] = {};
  auto                           row    = [&](int i, double axi) {
    const double bi = v.b[i], di = v.d ? v.d[i] : 1.0;
    double       r  = start == FUSED_LOOP_START_ZERO ? bi : bi - axi;
    if (v.d) r *= di;
    if (start == FUSED_LOOP_START_ZERO) v.x[i] = 0.0;
    v.r[i] = v.rstar[i] = v.p[i] = r;
    FusedAddProduct(acc[0], r, r);
    if (rhs) FusedAddRhsNormTerm(rhs_acc[0], FUSED_NORM_PRECONDITIONED, bi, v.d ? di * bi : bi);
  };
  if (start == FUSED_LOOP_START_ZERO) {
    FUSED_GRID_LOOP(i, A.n) row(i, 0.0);
  } else {
    const FusedStored x = {v.x};
    if (A.lrows.nchunks) {
      FusedLongRowsOf(A, x);
      grid.sync();
    }
    if constexpr (GROUPS) FusedRowsInGroups<BLOCK>(A, x, lanes, row);
    else {
      FUSED_GRID_LOOP(i, A.n) row(i, FusedRowProduct(A, v.x, i));
    }
  }
  acc[1] = acc[0];
  FusedStorePartials<2, BLOCK>(acc, part);
  if (rhs) FusedStorePartials<1, BLOCK>(rhs_acc, part_rhs);
  grid.sync(); /* r0* and p complete before the first product reads them */
}

/* The whole loop in one cooperative kernel for small systems: two grid
   barriers per iteration. The products read s and the next p through
   PBCGSNextS and PBCGSNextP, computed from the vectors of the step before,
   so that they need not wait for their owners' updates: s = r - alpha v with
   t = B A s, then x, r, p with the next v = B A p. p and v therefore
   alternate between v's vectors and the spare ones (two of length n).
   Partial sums of iteration it live in buffer it & 1 (RR, RR0 and VR0 of it
   are written by iteration it - 1); a stop leaves RR, RR0 and VR0 of the
   iteration in sums[], and its p and v = B A p in v.p and v.v, from where
   the host goes on as after product_p. One block per multiprocessor (FusedSingleKernelBlock()); of
   FUSED_BLOCK threads the steps keep every value in registers (H100,
   10,000 rows: 7.9 against 8.0 us with two blocks' 128 registers). */
template <int BLOCK, bool GROUPS = false>
__global__ void __launch_bounds__(BLOCK, 1) PBCGSSingleKernel(FusedMatView A, FusedPBCGSVecs v, double *spare, double *part, double *sums, FusedLoopState *state, double *hist, int lanes, int start)
{
  /* ROOMY: more than 128 registers per thread, for loads early */
  constexpr bool                 ROOMY = 65536 / BLOCK > 128;
  cooperative_groups::grid_group grid  = cooperative_groups::this_grid();
  const int                      G     = gridDim.x;
  const int                      first = state->it;
  const bool                     rhs_test = state->conv.judge_first && state->conv.reference != FUSED_REFERENCE_RESIDUAL;
  FusedConvergence               conv;
  /* iteration it reads p_last and v_last and writes p_next and v_next, then they swap */
  double *p_last = v.p, *v_last = v.v, *p_next = spare, *v_next = spare + A.n;

  /* the first iteration's RR and RR0 as partials in its slot, as every later
     iteration finds them: from the start made here (b's norm after both
     slots), or from sums[], where the host's steps left them (one thread
     holds each: the sums over the blocks are exact) */
  double *part_first = part + (size_t)((first + 1) & 1) * NSUMS * G * FUSED_SUM_WIDTH;
  if (BLOCK == FUSED_BLOCK && start != FUSED_LOOP_GOES_ON) {
    double *part_rhs = part + (size_t)2 * NSUMS * G * FUSED_SUM_WIDTH;
    double  rr[1], rhs_square[1] = {0.0};
    if constexpr (BLOCK == FUSED_BLOCK) PBCGSSingleStart<BLOCK, GROUPS>(A, v, start, rhs_test, part_first + RR * G * FUSED_SUM_WIDTH, part_rhs, lanes);
    FusedSumPartialsByWarp<1, FusedSum>(part_first + RR * G * FUSED_SUM_WIDTH, G, rr);
    if (rhs_test) {
      __syncthreads(); /* FusedSumPartialsByWarp's result[] again */
      FusedSumPartialsByWarp<1, FusedSum>(part_rhs, G, rhs_square);
      if (blockIdx.x == 0 && threadIdx.x == 0) sums[state->conv.rhs_slot] = rhs_square[0]; /* for the host's replay of iteration 0 */
    }
    conv = PBCGSLoopConvergence(state->conv, rr[0], rhs_square[0]);
  } else {
    FusedSum acc[2] = {};
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      acc[0] += sums[RR]; /* to zeros: exact, in the compensated build too */
      acc[1] += sums[RR0];
    }
    FusedStorePartials<2, BLOCK>(acc, part_first + RR * G * FUSED_SUM_WIDTH);
    conv = PBCGSLoopConvergence(state->conv, sums[RR], rhs_test ? sums[state->conv.rhs_slot] : 0.0);
  }

  { /* v = B A p of iteration first + 1 from the start's p or the one the host left */
    FusedSum vr0[1] = {};
    if (A.lrows.nchunks) { /* the long rows' rest first: the products read it */
      FusedLongRowsOf(A, FusedStored{v.p});
      grid.sync();
    }
    FUSED_GRID_LOOP(i, A.n) PBCGSProductPRow(A, v, i, vr0[0]);
    FusedStorePartials<1, BLOCK>(vr0, part_first + VR0 * G * FUSED_SUM_WIDTH);
    grid.sync();
  }
  for (int it = first + 1;; it++) {
    double   *part_it = part + (size_t)(it & 1) * NSUMS * G * FUSED_SUM_WIDTH, *part_next = part + (size_t)((it + 1) & 1) * NSUMS * G * FUSED_SUM_WIDTH;
    double    s1[3]; /* RR, RR0, VR0 */
    FusedSumPartialsByWarp<3, FusedSum>(part_it + RR * G * FUSED_SUM_WIDTH, G, s1);
    const double rho = s1[1], vr0 = s1[2], rnorm = sqrt(fabs(s1[0]));
    bool         stop  = FusedMustStop(conv, it, rnorm) || !isfinite(rho) || !isfinite(vr0) || rho == 0.0 || vr0 == 0.0;
    const double alpha = stop ? 0.0 : rho / vr0;
    double       omega = 0.0, beta = 0.0;
    FusedHistoryPut(hist, first, it, rnorm);
    if (!stop) {
      /* s = r - alpha v, t = B A s; TT, TS, TR0, SR0, SS */
      const PBCGSNextS next_s = {v.r, v_last, alpha};
      FusedSum         acc[5] = {};
      if (A.lrows.nchunks) {
        FusedLongRowsOf(A, next_s);
        grid.sync();
      }
      if constexpr (GROUPS) {
        FusedRowsInGroups<BLOCK>(A, next_s, lanes, [&](int i, double t) { PBCGSStoreSRow(v, v.s, i, next_s(i), t, v.d ? v.d[i] : 1.0, v.rstar[i], acc); });
      } else FUSED_GRID_LOOP(i, A.n) PBCGSProductSRow(A, v, next_s, v.s, i, acc);
      FusedStorePartials<5, BLOCK>(acc, part_it + TT * G * FUSED_SUM_WIDTH);
      grid.sync();
      double s2[5];
      FusedSumPartialsByWarp<5, FusedSum>(part_it + TT * G * FUSED_SUM_WIDTH, G, s2);
      /* at a breakdown the host redoes this iteration from product_p and sees it itself */
      stop = PBCGSOmegaBeta(s2, rho, alpha, &omega, &beta);
    }
    if (stop) { /* the same sums in every block: the same decision */
      FusedHistoryFlush(hist, first, it);
      if (blockIdx.x == 0 && threadIdx.x == 0) {
        sums[RR]    = s1[0];
        sums[RR0]   = rho;
        sums[VR0]   = vr0;
        state->it   = it;
        state->stop = 1;
      }
      FusedLoopHandBackInKernel(state);
      if (p_last != v.p) {
        /* the host goes on from v.p and v.v (v = B A p made); each thread copies the rows it wrote */
        FUSED_GRID_LOOP(i, A.n)
        {
          v.p[i] = p_last[i];
          v.v[i] = v_last[i];
        }
      }
      return;
    }

    /* x += alpha p + omega s, r = s - omega t, p = r + beta (p - omega v), v = B A p; RR, RR0, VR0 of it + 1 */
    const PBCGSNextP next_p = {v.s, v.t, p_last, v_last, omega, beta};
    FusedSum         acc[3] = {};
    if (A.lrows.nchunks) {
      FusedLongRowsOf(A, next_p);
      grid.sync();
    }
    if constexpr (GROUPS) {
      FusedRowsInGroups<BLOCK>(A, next_p, lanes, [&](int i, double y) {
        const double r0 = v.rstar[i];
        PBCGSUpdateXRPRow(v, next_p, i, alpha, p_next, acc);
        if (v.d) y *= v.d[i];
        v_next[i] = y;
        FusedAddProduct(acc[2], y, r0);
      });
    } else FUSED_GRID_LOOP(i, A.n)
    {
      /* the row's own loads before the product's: after them, they would
         wait for memory once more. Those of the update too where the
         registers are there (H100: 10,000 rows 7.9 against 8.1 us; under
         128 registers, 262,144 rows 28.3 against 27.0) */
      const double di = v.d ? v.d[i] : 1.0, r0 = v.rstar[i];
      double       y;
      if constexpr (ROOMY) {
        const PBCGSNextP::Entry last = next_p.Load(i);
        const double            xi   = v.x[i];
        y                            = FusedRowProductOf(A, next_p, i);
        PBCGSUpdateXRPRowFrom(v, next_p, last, xi, r0, i, alpha, p_next, acc);
      } else {
        y = FusedRowProductOf(A, next_p, i);
        PBCGSUpdateXRPRow(v, next_p, i, alpha, p_next, acc);
      }
      if (v.d) y *= di;
      v_next[i] = y;
      FusedAddProduct(acc[2], y, r0);
    }
    FusedStorePartials<3, BLOCK>(acc, part_next + RR * G * FUSED_SUM_WIDTH);
    grid.sync();
    FusedSwap(p_last, p_next);
    FusedSwap(v_last, v_next);
  }
}


extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSStart)(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, int guess_zero)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSStart, ctx, A, v, guess_zero);
  if (!guess_zero)
    if (int err = FusedLongRowsBefore(A, v->x, ctx->stream)) return err;
  if (v->dblock) {
    if (int err = FusedCheckBlocks(ctx, v->bs)) return err;
    PBCGSStartBlockKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, guess_zero, ctx->partials, ctx->sums, ctx->ticket);
    FUSED_CUDA_CHECK_LAUNCH("PBCGSStartBlockKernel");
    return FUSED_CUDA_OK;
  }
  PBCGSStartKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, guess_zero, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSStartKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSSumsP)(FusedCUDA ctx, const FusedPBCGSVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSSumsP, ctx, v);
  PBCGSSumsPKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSSumsPKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSSumsS)(FusedCUDA ctx, const FusedPBCGSVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSSumsS, ctx, v);
  PBCGSSumsSKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSSumsSKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSRestart)(FusedCUDA ctx, const FusedPBCGSVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSRestart, ctx, v);
  PBCGSRestartKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSRestartKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSProductP)(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSProductP, ctx, A, v);
  if (int err = FusedLongRowsBefore(A, v->p, ctx->stream)) return err;
  if (v->dblock) PBCGSProductPBlockKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL, 0);
  else PBCGSProductPKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL, 0);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSProductPKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSUpdateS)(FusedCUDA ctx, const FusedPBCGSVecs *v, double alpha)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSUpdateS, ctx, v, alpha);
  PBCGSUpdateSKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, alpha);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSUpdateSKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSProductS)(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSProductS, ctx, A, v);
  if (int err = FusedLongRowsBefore(A, v->s, ctx->stream)) return err;
  if (v->dblock) PBCGSProductSBlockKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, 0);
  else PBCGSProductSKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, 0);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSProductSKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSUpdateXRP)(FusedCUDA ctx, const FusedPBCGSVecs *v, double alpha, double omega, double beta)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSUpdateXRP, ctx, v, alpha, omega, beta);
  PBCGSUpdateXRPKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, alpha, omega, beta, ctx->partials, ctx->sums, ctx->ticket, NULL);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSUpdateXRPKernel");
  return FUSED_CUDA_OK;
}

/* ---- the products split around the halo exchange ------------------------ */

/* v += d .* (the ghost block's share of A p) on the boundary rows; VR0 += its share */
__global__ void PBCGSGhostPKernel(int nbound, const int *brow, const int *bptr, FusedMatView A, FusedPBCGSVecs v, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[1] = {0.0};
  FUSED_GRID_LOOP(k, nbound)
  {
    const int    i  = brow[k];
    const double dv = (v.d ? v.d[i] : 1.0) * FusedGhostRowProduct(A, i, bptr[k], bptr[k + 1]);
    v.v[i] += dv;
    FusedAddProduct(acc[0], dv, v.rstar[i]);
  }
  if (FusedReduce<1>(acc, partials, sums, ticket, FUSED_PBCGS_GHOST) && threadIdx.x == 0) sums[VR0] += FusedSumValue(acc[0]);
}

/* t += d .* (the ghost share of A s); TT, TS and TR0 change (SR0 and SS do not) */
__global__ void PBCGSGhostSKernel(int nbound, const int *brow, const int *bptr, FusedMatView A, FusedPBCGSVecs v, double *partials, double *sums, unsigned int *ticket)
{
  FusedSum acc[3] = {0.0, 0.0, 0.0};
  FUSED_GRID_LOOP(k, nbound)
  {
    const int    i  = brow[k];
    const double dt = (v.d ? v.d[i] : 1.0) * FusedGhostRowProduct(A, i, bptr[k], bptr[k + 1]);
    const double tl = v.t[i];
    v.t[i]          = tl + dt;
    FusedAddProduct(acc[0], dt, (2.0 * tl + dt));
    FusedAddProduct(acc[1], dt, v.s[i]);
    FusedAddProduct(acc[2], dt, v.rstar[i]);
  }
  if (FusedReduce<3>(acc, partials, sums, ticket, FUSED_PBCGS_GHOST) && threadIdx.x == 0) {
    sums[TT] += FusedSumValue(acc[0]);
    sums[TS] += FusedSumValue(acc[1]);
    sums[TR0] += FusedSumValue(acc[2]);
  }
}

/* the operator without its off-process block, for the products that run while the ghosts travel */
static int PBCGSSplitCheck(FusedCUDA ctx, const FusedPBCGSVecs *v)
{
  if (v->dblock) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the split products have no point-block Jacobi: use the whole product once the ghosts are in");
  if (ctx->maxsums < FUSED_PBCGS_DEVICE_SUMS) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the workspace holds %d sums, the split products need %d", ctx->maxsums, (int)FUSED_PBCGS_DEVICE_SUMS);
  return FUSED_CUDA_OK;
}

static int PBCGSGhostBlocks(FusedCUDA ctx, FusedDevMat A)
{
  const int blocks = (A->nbound + FUSED_BLOCK - 1) / FUSED_BLOCK;
  return blocks < ctx->nblocks ? blocks : ctx->nblocks;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSProductPLocal)(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSProductPLocal, ctx, A, v);
  FusedMatView local = A->view;
  local.growptr      = NULL;
  if (int err = PBCGSSplitCheck(ctx, v)) return err;
  if (int err = FusedLongRowsLaunch(local, v->p, ctx->stream)) return err;
  PBCGSProductPKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(local, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL, 0);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSProductPKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSProductPGhosts)(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSProductPGhosts, ctx, A, v);
  if (A->nbound < 1) return FUSED_CUDA_OK;
  if (int err = FusedLongGhostRowsLaunch(A, ctx->stream)) return err;
  PBCGSGhostPKernel<<<PBCGSGhostBlocks(ctx, A), FUSED_BLOCK, 0, ctx->stream>>>(A->nbound, A->brow, A->bptr, A->view, *v, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSGhostPKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSProductSLocal)(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSProductSLocal, ctx, A, v);
  FusedMatView local = A->view;
  local.growptr      = NULL;
  if (int err = PBCGSSplitCheck(ctx, v)) return err;
  if (int err = FusedLongRowsLaunch(local, v->s, ctx->stream)) return err;
  PBCGSProductSKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(local, *v, ctx->partials, ctx->sums, ctx->ticket, NULL, 0);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSProductSKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSProductSGhosts)(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSProductSGhosts, ctx, A, v);
  if (A->nbound < 1) return FUSED_CUDA_OK;
  if (int err = FusedLongGhostRowsLaunch(A, ctx->stream)) return err;
  PBCGSGhostSKernel<<<PBCGSGhostBlocks(ctx, A), FUSED_BLOCK, 0, ctx->stream>>>(A->nbound, A->brow, A->bptr, A->view, *v, ctx->partials, ctx->sums, ctx->ticket);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSGhostSKernel");
  return FUSED_CUDA_OK;
}

/* ---- with a null space -------------------------------------------------- */

static int PBCGSNullCheck(FusedCUDA ctx, const FusedPBCGSVecs *v, const FusedNullSpace *ns)
{
  if (v->dblock) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "pbcgsfused removes a null space with Jacobi or none, not point-block Jacobi");
  return FusedCheckNullSpace(ctx, ns, FUSED_PBCGS_DEVICE_SUMS);
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSProductPNull)(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, const FusedNullSpace *ns)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSProductPNull, ctx, A, v, ns);
  if (int err = PBCGSNullCheck(ctx, v, ns)) return err;
  if (int err = FusedLongRowsBefore(A, v->p, ctx->stream)) return err;
  if (ns->m == 1) PBCGSProductPNullKernel<1><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, *ns, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL, 0);
  else PBCGSProductPNullKernel<FUSED_NULLSPACE_MAX><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, *ns, ctx->partials, ctx->sums, ctx->ticket, NULL, NULL, 0);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSProductPNullKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSUpdateSNull)(FusedCUDA ctx, const FusedPBCGSVecs *v, double alpha, const FusedNullSpace *ns)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSUpdateSNull, ctx, v, alpha, ns);
  if (int err = PBCGSNullCheck(ctx, v, ns)) return err;
  PBCGSUpdateSNullKernel<<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, alpha, *ns);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSUpdateSNullKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSProductSNull)(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, const FusedNullSpace *ns)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSProductSNull, ctx, A, v, ns);
  if (int err = PBCGSNullCheck(ctx, v, ns)) return err;
  if (int err = FusedLongRowsBefore(A, v->s, ctx->stream)) return err;
  if (ns->m == 1) PBCGSProductSNullKernel<1><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, *ns, ctx->partials, ctx->sums, ctx->ticket, NULL, 0);
  else PBCGSProductSNullKernel<FUSED_NULLSPACE_MAX><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(A->view, *v, *ns, ctx->partials, ctx->sums, ctx->ticket, NULL, 0);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSProductSNullKernel");
  return FUSED_CUDA_OK;
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSUpdateXRPNull)(FusedCUDA ctx, const FusedPBCGSVecs *v, double alpha, double omega, double beta, const FusedNullSpace *ns, const double *t_coef)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSUpdateXRPNull, ctx, v, alpha, omega, beta, ns, t_coef);
  PBCGSNullCoefs co;
  if (int err = PBCGSNullCheck(ctx, v, ns)) return err;
  memset(&co, 0, sizeof(co));
  for (int k = 0; k < ns->m; k++) {
    co.v[k] = ns->coef[k];
    co.t[k] = t_coef[k];
  }
  if (ns->m == 1) PBCGSUpdateXRPNullKernel<1><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, *ns, co, alpha, omega, beta, ctx->partials, ctx->sums, ctx->ticket, NULL);
  else PBCGSUpdateXRPNullKernel<FUSED_NULLSPACE_MAX><<<ctx->nblocks, FUSED_BLOCK, 0, ctx->stream>>>(ctx->n, *v, *ns, co, alpha, omega, beta, ctx->partials, ctx->sums, ctx->ticket, NULL);
  FUSED_CUDA_CHECK_LAUNCH("PBCGSUpdateXRPNullKernel");
  return FUSED_CUDA_OK;
}

struct PBCGSNullLoopArgs {
  FusedMatView   A;
  FusedPBCGSVecs v;
  FusedNullSpace ns; /* coef zero: the loop's coefficients are its sums */
};

template <int NS>
static int PBCGSBuildNullLoop(FusedCUDA ctx, const void *args_, cudaGraphConditionalHandle handle)
{
  const PBCGSNullLoopArgs *a = (const PBCGSNullLoopArgs *)args_;
  PBCGSNullCoefs           co;
  int                      gp, gq, gx;
  memset(&co, 0, sizeof(co));
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)PBCGSProductPNullKernel<NS>, 0, &gp)) return err;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)PBCGSProductSNullKernel<NS>, 0, &gq)) return err;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)PBCGSUpdateXRPNullKernel<NS>, 0, &gx)) return err;
  const int lg = FusedLongRowsGrid(a->A.lrows);
  if (a->A.lrows.nchunks)
    if (int err = FusedLaunchLoopKernel(ctx, FusedLongRowsKernel<FusedStored>, lg, 0, a->A.lrows, a->A.rowptr, a->A.col, a->A.val, FusedStored{a->v.p}, (const FusedLoopState *)ctx->state)) return err;
  if (int err = FusedLaunchLoopKernel(ctx, PBCGSProductPNullKernel<NS>, gp, 0, a->A, a->v, a->ns, ctx->partials, ctx->sums, ctx->ticket, ctx->state, ctx->hist, handle)) return err;
  if (a->A.lrows.nchunks)
    if (int err = FusedLaunchLoopKernel(ctx, PBCGSLongRowsSNullKernel, lg, 0, a->A, a->v, a->ns, (const double *)ctx->sums, (const FusedLoopState *)ctx->state)) return err;
  if (int err = FusedLaunchLoopKernel(ctx, PBCGSProductSNullKernel<NS>, gq, 0, a->A, a->v, a->ns, ctx->partials, ctx->sums, ctx->ticket, ctx->state, handle)) return err;
  return FusedLaunchLoopKernel(ctx, PBCGSUpdateXRPNullKernel<NS>, gx, 0, ctx->n, a->v, a->ns, co, 0.0, 0.0, 0.0, ctx->partials, ctx->sums, ctx->ticket, (const FusedLoopState *)ctx->state);
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSLoopNull)(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, const FusedNullSpace *ns, const FusedConvergence *conv, int it0, int *its)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSLoopNull, ctx, A, v, ns, conv, it0, its);
  PBCGSNullLoopArgs args;
  if (int err = PBCGSNullCheck(ctx, v, ns)) return err;
  if (conv->judge_first) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the device loop with a null space begins after a start made by the host");
  memset(&args, 0, sizeof(args)); /* padding too: the arguments are compared bytewise */
  args.A  = A->view;
  args.v  = *v;
  args.ns = *ns;
  memset(args.ns.coef, 0, sizeof(args.ns.coef));
  return FusedCUDARunLoop(ctx, &args, sizeof(args), ns->m == 1 ? PBCGSBuildNullLoop<1> : PBCGSBuildNullLoop<FUSED_NULLSPACE_MAX>, conv, it0, NULL, its);
}

struct PBCGSLoopArgs {
  FusedMatView   A;
  FusedPBCGSVecs v;
};

/* The long rows' rest of the device loop's product with s, which it makes
   from r and v as PBCGSProductSKernel does */
__global__ void PBCGSLongRowsSKernel(FusedMatView A, FusedPBCGSVecs v, const double *sums, const FusedLoopState *state)
{
  if (FusedLoopKernelStopped(state)) return;
  FusedLongRowsOf<FUSED_LONG_BATCH>(A, PBCGSNextS{v.r, v.v, sums[RR0] / sums[VR0]});
}

/* the loop body: three kernels per iteration (the product with s makes s
   itself), entered after update_xrp; before each product, where the
   operator has long rows, a kernel that sums their rest */
static int PBCGSBuildLoop(FusedCUDA ctx, const void *args_, cudaGraphConditionalHandle handle)
{
  const PBCGSLoopArgs *a       = (const PBCGSLoopArgs *)args_;
  const bool           block   = a->v.dblock != NULL;
  auto                 productp = block ? PBCGSProductPBlockKernel : PBCGSProductPKernel;
  auto                 products = block ? PBCGSProductSBlockKernel : PBCGSProductSKernel;
  int                  gp, gq, gx;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)productp, 0, &gp)) return err;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)products, 0, &gq)) return err;
  if (int err = FusedCUDAResidentGrid(ctx, (const void *)PBCGSUpdateXRPKernel, 0, &gx)) return err;
  const int            lg = FusedLongRowsGrid(a->A.lrows);
  if (a->A.lrows.nchunks)
    if (int err = FusedLaunchLoopKernel(ctx, FusedLongRowsKernel<FusedStored>, lg, 0, a->A.lrows, a->A.rowptr, a->A.col, a->A.val, FusedStored{a->v.p}, (const FusedLoopState *)ctx->state)) return err;
  if (int err = FusedLaunchLoopKernel(ctx, productp, gp, 0, a->A, a->v, ctx->partials, ctx->sums, ctx->ticket, ctx->state, ctx->hist, handle)) return err;
  if (a->A.lrows.nchunks)
    if (int err = FusedLaunchLoopKernel(ctx, PBCGSLongRowsSKernel, lg, 0, a->A, a->v, (const double *)ctx->sums, (const FusedLoopState *)ctx->state)) return err;
  if (int err = FusedLaunchLoopKernel(ctx, products, gq, 0, a->A, a->v, ctx->partials, ctx->sums, ctx->ticket, ctx->state, handle)) return err;
  return FusedLaunchLoopKernel(ctx, PBCGSUpdateXRPKernel, gx, 0, ctx->n, a->v, 0.0, 0.0, 0.0, ctx->partials, ctx->sums, ctx->ticket, (const FusedLoopState *)ctx->state);
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSLoop)(FusedCUDA ctx, FusedDevMat A, const FusedPBCGSVecs *v, const FusedConvergence *conv, int it0, int single_kernel, int start, int *its)
{
  FUSED_COMPENSATED_TWIN(FusedPBCGSLoop, ctx, A, v, conv, it0, single_kernel, start, its);
  PBCGSLoopArgs args;
  if (ctx->maxsums < NSUMS) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "pbcgsfused needs %d sums in the workspace, it has %d", NSUMS, ctx->maxsums);
  if (start != FUSED_LOOP_GOES_ON && (!single_kernel || v->dblock || it0 != -1 || !conv->judge_first)) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the loop makes the solve's start itself in the single kernel, from iteration -1 with its first test and the fused PC");
  if (single_kernel) {
    if (v->dblock) return FusedCUDASetError(FUSED_CUDA_ERR_ARG, "the single-kernel loop has no point-block Jacobi (its products form the s and p of the rows they read, which would need their blocks)");
    FusedMatView view = A->view;
    FusedPBCGSVecs vecs = *v;
    double      *part = NULL, *spare = NULL;
    int          lanes   = FusedRowLanes(ctx, A);
    void        *kargs[] = {&view, &vecs, &spare, &part, &ctx->sums, &ctx->state, &ctx->hist, &lanes, &start};
    if (int err = FusedCUDAEnsureLoopVectors(ctx, 2, &spare)) return err;
    const long long threads = (long long)ctx->n * lanes;
    const int       block   = FusedSingleKernelBlock(ctx, threads);
    const void     *kernel;
    if (lanes > 1) kernel = block == FUSED_BLOCK ? (const void *)PBCGSSingleKernel<FUSED_BLOCK, true> : (const void *)PBCGSSingleKernel<FUSED_WIDE_BLOCK, true>;
    else kernel = block == FUSED_BLOCK ? (const void *)PBCGSSingleKernel<FUSED_BLOCK> : (const void *)PBCGSSingleKernel<FUSED_WIDE_BLOCK>;
    if (start != FUSED_LOOP_GOES_ON && block != FUSED_BLOCK) {
      /* the wide kernel has no start: with it inlined, its loop spilled more
         (96 bytes against 48, ptxas) and took 22.6-22.9 us an iteration on
         64^3 against 21.5-21.8 (H100). The start and b's norm go in kernels
         of their own, the loop on from their sums. */
      if (start == FUSED_LOOP_START_ZERO)
        if (int err = FusedCUDAZero(ctx, v->x, ctx->n)) return err;
      if (int err = FUSED_METHOD_ENTRY(FusedPBCGSStart)(ctx, A, v, start == FUSED_LOOP_START_ZERO)) return err;
      if (conv->reference != FUSED_REFERENCE_RESIDUAL)
        if (int err = FusedCUDARhsNorm(ctx, v->b, v->d, FUSED_NORM_PRECONDITIONED, conv->rhs_slot)) return err;
      start = FUSED_LOOP_GOES_ON;
    }
    /* the start's b norm after both slots of partials: room for one sum more */
    return FusedCUDARunSingleKernel(ctx, kernel, block, (int)threads, NSUMS + 1, 0, conv, it0, NULL, kargs, &part, its);
  }
  memset(&args, 0, sizeof(args));
  args.A = A->view;
  args.v = *v;
  return FusedCUDARunLoop(ctx, &args, sizeof(args), PBCGSBuildLoop, conv, it0, NULL, its);
}

extern "C" int FUSED_METHOD_ENTRY(FusedPBCGSLoadKernels)(int device, int compensated)
{
#if !FUSED_COMPENSATED
  if (compensated) return FusedPBCGSLoadKernels_Compensated(device, compensated);
#endif
  (void)compensated;
  return FusedCUDALoadModuleOf(device, (const void *)PBCGSUpdateSKernel);
}
FUSED_METHOD_NAMESPACE_END
